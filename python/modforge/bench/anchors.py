"""The outside anchors: found or built for this machine at bench time.

Nothing here is vendored.  The C harnesses in ``modforge/bench/harness/`` (ours)
are compiled with the system C compiler into a cache directory outside the
source tree, and GMP itself is configured and built there from the source
that ships inside the ``gmp-mpfr-sys`` crate on crates.io (fetched with
cargo).  Every build is keyed by what it depends on - sources, compiler, CPU -
so a second run reuses it and a change rebuilds it.

Each anchor either yields an :class:`AnchorProgram` (a command speaking the
line protocol of ``modforge/bench/harness/*.c``) or raises
:class:`AnchorUnavailable` with a one-line reason that the benchmark prints as
a notice and records under ``skipped``.

Environment (all optional):

``MODFORGE_BENCH_CACHE``  the benchmarks' cache root (default ``$XDG_CACHE_HOME/modforge``, i.e.
                          ``~/.cache/modforge``); the anchors are built in its ``anchors/``
``CC``                    C compiler (default ``cc``)
``M4``                    m4 for GMP's configure (default: ``m4`` on PATH, else pym4,
                          the pure-Python GNU m4, fetched from PyPI into the cache)
``MODFORGE_GMP_SRC``      an unpacked GMP source tree to build instead of the crate's
``MODFORGE_LIBCRYPTO``    path of the libcrypto shared library to link
``MODFORGE_ANCHOR_SOURCES`` directory of the harness sources (default: the ones shipped in the package)
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import importlib.util
import json
import os
import platform
import shlex
import shutil
import subprocess
import sys
import sysconfig
import tarfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterator, Mapping

# The crate whose bundled GMP we build (gmp-mpfr-sys 1.7.1 ships GMP 6.3.0 with
# the upstream "longlong" configure patch for current GCCs already applied).
GMP_CRATE = "gmp-mpfr-sys"
GMP_CRATE_VERSION = "1.7.1"
# GMP is built static, for this CPU only: no --enable-fat (whose generic
# dispatch is what makes packaged GMPs slower on a CPU they do not recognise).
GMP_CONFIGURE_ARGS = ("--disable-shared",)
# Pure-Python GNU m4 from PyPI, the fallback when no m4 is installed.
PYM4_REQUIREMENT = "pym4==1.0.0"

GMP_POWM = "gmp-native-powm"
GMP_MULMOD = "gmp-native-mulmod"
OPENSSL = "openssl-mont"
NATIVE_ANCHORS = (GMP_POWM, GMP_MULMOD, OPENSSL)

M4_HINT = "install m4 to build the GMP anchor (apt-get install m4, or pip install pym4)"

Notice = Callable[[str], None]


class AnchorUnavailable(Exception):
    """An anchor that cannot be built or found here; ``why`` is one line for the user."""

    def __init__(self, impls: tuple[str, ...] | str, why: str):
        self.impls = (impls,) if isinstance(impls, str) else tuple(impls)
        self.why = why
        super().__init__(f"{', '.join(self.impls)}: {why}")


@dataclass(frozen=True)
class AnchorProgram:
    """One anchor as a command: ``argv`` speaks the harness line protocol."""

    name: str
    argv: tuple[str, ...]
    detail: str
    build: dict = field(default_factory=dict)


def bench_cache_dir(area: str, environ: Mapping[str, str] | None = None) -> Path:
    """``<root>/<area>`` for the benchmarks' caches (``anchors``, ``rsa-keys``).  ``MODFORGE_BENCH_CACHE`` is
    the root of both, by default ``$XDG_CACHE_HOME/modforge`` (``~/.cache/modforge``), where `cache list`
    finds them: set to that default it changes nothing.  (It used to be the anchors' directory itself for
    `bench vdf` and the parent of ``rsa-keys`` for `bench rsa`.)"""
    env = os.environ if environ is None else environ
    if env.get("MODFORGE_BENCH_CACHE"):
        return Path(env["MODFORGE_BENCH_CACHE"]).expanduser() / area
    base = env.get("XDG_CACHE_HOME") or ""
    if not os.path.isabs(base):     # the XDG spec: a relative value is to be ignored (as fileio.user_cache_dir)
        base = os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "modforge" / area


@dataclass(frozen=True)
class AnchorEnv:
    """Where and with what the anchors are built; :meth:`from_environ` reads the variables above."""

    cache_dir: Path
    cc: str = "cc"
    m4: str | None = None            # an explicit M4: no fallback if it is missing
    gmp_source: Path | None = None
    libcrypto: Path | None = None
    sources_dir: Path = field(default_factory=lambda: default_sources_dir())
    build: bool = True               # False: use what is cached, build and fetch nothing
    cargo: str = "cargo"
    jobs: int = field(default_factory=lambda: max(1, os.cpu_count() or 1))

    @classmethod
    def from_environ(cls, environ: Mapping[str, str] | None = None, *, build: bool = True) -> "AnchorEnv":
        env = os.environ if environ is None else environ
        return cls(
            cache_dir=bench_cache_dir("anchors", env),
            cc=env.get("CC") or "cc",
            m4=env.get("M4") or None,
            gmp_source=Path(env["MODFORGE_GMP_SRC"]) if env.get("MODFORGE_GMP_SRC") else None,
            libcrypto=Path(env["MODFORGE_LIBCRYPTO"]) if env.get("MODFORGE_LIBCRYPTO") else None,
            sources_dir=Path(env["MODFORGE_ANCHOR_SOURCES"]) if env.get("MODFORGE_ANCHOR_SOURCES")
            else default_sources_dir(),
            build=build,
            cargo=env.get("CARGO") or "cargo",
        )


def default_sources_dir() -> Path:
    # Package data (pyproject's maturin include), so a wheel's bench has its anchors too.
    return Path(__file__).resolve().parent / "harness"


# ---------------------------------------------------------------- helpers


def _digest(*parts: object) -> str:
    return hashlib.sha256(json.dumps(parts, sort_keys=True, default=str).encode()).hexdigest()[:16]


def _first_line(argv: list[str]) -> str | None:
    try:
        out = subprocess.run(argv, capture_output=True, text=True, timeout=30, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None
    text = (out.stdout or out.stderr).strip()
    return text.splitlines()[0] if text else None


def cpu_identity() -> dict:
    """What a native build depends on: vendor, family/model/stepping and the flag set."""
    info: dict = {"machine": platform.machine()}
    try:
        text = Path("/proc/cpuinfo").read_text(encoding="utf-8", errors="replace")
    except OSError:
        info["processor"] = platform.processor()
        return info
    for line in text.splitlines():
        if not line.strip():
            break  # the first processor is enough
        key, _, value = line.partition(":")
        key = key.strip()
        if key in ("vendor_id", "cpu family", "model", "stepping", "model name"):
            info[key.replace(" ", "_")] = value.strip()
        elif key == "flags":
            info["flags_sha"] = hashlib.sha256(" ".join(sorted(value.split())).encode()).hexdigest()[:16]
    return info


def resolve_cc(env: AnchorEnv, impls: tuple[str, ...]) -> tuple[list[str], str]:
    """The compiler command and its identity (``cc --version``), or AnchorUnavailable."""
    argv = shlex.split(env.cc)
    if not argv or shutil.which(argv[0]) is None:
        raise AnchorUnavailable(impls, f"no C compiler: {env.cc!r} not found (install one or set CC)")
    argv[0] = shutil.which(argv[0]) or argv[0]
    version = _first_line([*argv, "--version"]) or "unknown"
    return argv, version


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
    """One builder at a time per cache (two benchmarks started together must not race)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def _run_logged(argv: list[str], cwd: Path, log: Path, env: dict | None = None) -> bool:
    with open(log, "a", encoding="utf-8") as fh:
        fh.write(f"$ {shlex.join(argv)}\n")
        fh.flush()
        try:
            proc = subprocess.run(argv, cwd=cwd, stdout=fh, stderr=subprocess.STDOUT, env=env, check=False)
        except OSError as exc:
            fh.write(f"{exc}\n")
            return False
    return proc.returncode == 0


def harness_source(env: AnchorEnv, impls: tuple[str, ...], source_name: str) -> Path:
    source = env.sources_dir / source_name
    if not source.is_file():
        raise AnchorUnavailable(impls, f"harness source {source} not found (set MODFORGE_ANCHOR_SOURCES to the "
                                       f"directory holding {source_name})")
    return source


def compile_harness(env: AnchorEnv, impls: tuple[str, ...], source_name: str, link: list[str],
                    key_extra: object, include: list[Path] = ()) -> Path:
    """``cc -O2`` one harness into ``<cache>/bin``; reuse it while its inputs are unchanged."""
    source = harness_source(env, impls, source_name)
    cc, cc_version = resolve_cc(env, impls)
    flags = ["-O2", "-std=gnu11", *[f"-I{d}" for d in include]]
    key = _digest(source.read_bytes().decode("utf-8", "replace"), cc, cc_version, flags, link, key_extra)
    out = env.cache_dir / "bin" / f"{source.stem}-{key}"
    if out.is_file() and os.access(out, os.X_OK):
        return out
    if not env.build:
        raise AnchorUnavailable(impls, "not built yet and building is off (run without --no-build)")
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(f"{out.name}.tmp-{os.getpid()}")
    proc = subprocess.run([*cc, *flags, "-o", str(tmp), str(source), *link],
                          capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        tmp.unlink(missing_ok=True)
        first = (proc.stderr.strip().splitlines() or ["(no output)"])[0]
        raise AnchorUnavailable(impls, f"compiling {source.name} failed: {first}")
    os.replace(tmp, out)
    for stale in out.parent.glob(f"{source.stem}-*"):
        if stale != out and ".tmp-" not in stale.name:
            stale.unlink(missing_ok=True)  # an older build of the same harness
    return out


# ---------------------------------------------------------------- OpenSSL


def find_libcrypto(env: AnchorEnv) -> Path:
    if env.libcrypto is not None:
        if not env.libcrypto.is_file():
            raise AnchorUnavailable(OPENSSL, f"MODFORGE_LIBCRYPTO={env.libcrypto} does not exist")
        return env.libcrypto
    dirs = []
    multiarch = sysconfig.get_config_var("MULTIARCH")
    for base in ("/usr/lib", "/lib", "/usr/local/lib"):
        if multiarch:
            dirs.append(Path(base) / multiarch)
        dirs.append(Path(base))
    dirs += [Path("/usr/lib64"), Path("/lib64")]
    for name in ("libcrypto.so.3", "libcrypto.so.1.1"):
        for d in dirs:
            if (d / name).is_file():
                return d / name
    raise AnchorUnavailable(OPENSSL, "the system libcrypto (libcrypto.so.3 or .so.1.1) was not found; "
                                     "install OpenSSL or set MODFORGE_LIBCRYPTO")


def openssl_anchor(env: AnchorEnv) -> AnchorProgram:
    lib = find_libcrypto(env)
    stat = lib.resolve().stat()
    exe = compile_harness(env, (OPENSSL,), "openssl_sqr.c",
                          [str(lib), f"-Wl,-rpath,{lib.parent}"],
                          key_extra=(str(lib.resolve()), stat.st_size, stat.st_mtime_ns))
    return AnchorProgram(OPENSSL, (str(exe),), f"BN_mod_mul_montgomery loop, {lib}",
                         {"libcrypto": str(lib.resolve()), "harness": str(exe)})


# ---------------------------------------------------------------- GMP


def cargo_home() -> Path:
    return Path(os.environ.get("CARGO_HOME") or Path.home() / ".cargo")


def _gmp_dir_in(crate_dir: Path) -> Path | None:
    found = sorted(p for p in crate_dir.glob("gmp-*-c") if (p / "configure").is_file())
    return found[-1] if found else None


def _find_gmp_source_local(env: AnchorEnv) -> Path | None:
    crate = f"{GMP_CRATE}-{GMP_CRATE_VERSION}"
    for crate_dir in sorted(cargo_home().glob(f"registry/src/*/{crate}")):
        found = _gmp_dir_in(crate_dir)
        if found:
            return found
    extracted = env.cache_dir / "src" / crate
    found = _gmp_dir_in(extracted) if extracted.is_dir() else None
    if found:
        return found
    # A downloaded but not unpacked crate: unpack its GMP part into the cache.
    for archive in sorted(cargo_home().glob(f"registry/cache/*/{crate}.crate")):
        tmp = env.cache_dir / "src" / f"{crate}.tmp-{os.getpid()}"
        shutil.rmtree(tmp, ignore_errors=True)
        tmp.mkdir(parents=True)
        with tarfile.open(archive, "r:gz") as tar:
            members = [m for m in tar.getmembers() if m.name.startswith(f"{crate}/gmp-")]
            tar.extractall(tmp, members=members, filter="data")
        shutil.rmtree(extracted, ignore_errors=True)
        os.replace(tmp / crate, extracted)
        shutil.rmtree(tmp, ignore_errors=True)
        return _gmp_dir_in(extracted)
    return None


def find_gmp_source(env: AnchorEnv, notice: Notice) -> Path:
    """GMP's source tree: MODFORGE_GMP_SRC, or the one inside the gmp-mpfr-sys crate (fetched by cargo)."""
    impls = (GMP_POWM, GMP_MULMOD)
    if env.gmp_source is not None:
        if not (env.gmp_source / "configure").is_file():
            raise AnchorUnavailable(impls, f"MODFORGE_GMP_SRC={env.gmp_source} has no configure script")
        return env.gmp_source
    found = _find_gmp_source_local(env)
    if found:
        return found
    if not env.build:
        raise AnchorUnavailable(impls, f"GMP source ({GMP_CRATE} {GMP_CRATE_VERSION}) not fetched and "
                                       "building is off (run without --no-build)")
    if shutil.which(env.cargo) is None:
        raise AnchorUnavailable(impls, f"cargo not found: it fetches GMP's source ({GMP_CRATE} on crates.io)")
    # A throw-away manifest in the cache whose only dependency is the crate.
    fetch_dir = env.cache_dir / "fetch"
    (fetch_dir / "src").mkdir(parents=True, exist_ok=True)
    (fetch_dir / "Cargo.toml").write_text(
        "# Written by modforge bench: only here so that `cargo fetch` downloads GMP's source.\n"
        "[package]\nname = \"modforge-bench-gmp-fetch\"\nversion = \"0.0.0\"\nedition = \"2021\"\n"
        "publish = false\n\n[lib]\npath = \"src/lib.rs\"\n\n[dependencies]\n"
        f"{GMP_CRATE} = {{ version = \"={GMP_CRATE_VERSION}\", default-features = false }}\n\n"
        "[workspace]\n", encoding="utf-8")
    (fetch_dir / "src" / "lib.rs").write_text("", encoding="utf-8")
    notice(f"fetching GMP's source: cargo fetch ({GMP_CRATE} {GMP_CRATE_VERSION} from crates.io)")
    target = _host_triple()
    argv = [env.cargo, "fetch", "--manifest-path", str(fetch_dir / "Cargo.toml")]
    if target:
        argv += ["--target", target]
    log = fetch_dir / "fetch.log"
    if not _run_logged(argv, fetch_dir, log):
        raise AnchorUnavailable(impls, f"cargo fetch of {GMP_CRATE} failed (log: {log})")
    found = _find_gmp_source_local(env)
    if not found:
        raise AnchorUnavailable(impls, f"{GMP_CRATE} {GMP_CRATE_VERSION} fetched but its GMP source was not found "
                                       f"under {cargo_home()}/registry")
    return found


def _host_triple() -> str | None:
    try:
        out = subprocess.run(["rustc", "-vV"], capture_output=True, text=True, timeout=30, check=False).stdout
    except (OSError, subprocess.TimeoutExpired):
        return None
    for line in out.splitlines():
        if line.startswith("host:"):
            return line.split(":", 1)[1].strip()
    return None


def resolve_m4(env: AnchorEnv, notice: Notice) -> tuple[str, str]:
    """An m4 for GMP's configure and build: (command, description), or AnchorUnavailable.

    GNU m4 when installed; else pym4 (pure-Python GNU m4) if importable or
    fetchable from PyPI into the cache.  An explicit ``M4`` that does not exist
    is reported, never silently replaced.
    """
    impls = (GMP_POWM, GMP_MULMOD)
    if env.m4 is not None:
        path = shutil.which(env.m4)
        if path is None:
            raise AnchorUnavailable(impls, f"{M4_HINT}; M4={env.m4!r} was not found")
        return path, f"M4={path}"
    path = shutil.which("m4")
    if path is not None:
        return path, _first_line([path, "--version"]) or path
    tools = env.cache_dir / "tools"
    target = tools / "pym4"
    if importlib.util.find_spec("pym4") is not None:
        runner = [sys.executable, "-m", "pym4"]
    elif (target / "pym4.py").is_file():
        runner = [sys.executable, str(target / "pym4.py")]
    elif env.build:
        notice(f"no m4 here: fetching {PYM4_REQUIREMENT} (pure-Python GNU m4) from PyPI into {target}")
        tools.mkdir(parents=True, exist_ok=True)
        proc = subprocess.run([sys.executable, "-m", "pip", "install", "--disable-pip-version-check", "-q",
                               "--no-deps", "--target", str(target), PYM4_REQUIREMENT],
                              capture_output=True, text=True, check=False)
        if proc.returncode != 0 or not (target / "pym4.py").is_file():
            raise AnchorUnavailable(impls, M4_HINT)
        runner = [sys.executable, str(target / "pym4.py")]
    else:
        raise AnchorUnavailable(impls, M4_HINT)
    # GNU m4 searches the working directory for include(); pym4 searches the
    # input file's directory, so GMP's include(`../config.m4') needs -I "$PWD".
    wrapper = tools / "m4"
    tools.mkdir(parents=True, exist_ok=True)
    wrapper.write_text("#!/bin/sh\n# m4 for building GMP, written by modforge bench: pym4 with GNU m4's include path.\n"
                       f'exec {shlex.join(runner)} -I "$PWD" "$@"\n', encoding="utf-8")
    wrapper.chmod(0o755)
    return str(wrapper), f"pym4 ({PYM4_REQUIREMENT}, pure-Python GNU m4)"


def _gmp_key(env: AnchorEnv, cc: list[str], cc_version: str) -> dict:
    return {"crate": f"{GMP_CRATE}-{GMP_CRATE_VERSION}", "source": str(env.gmp_source or ""),
            "configure": GMP_CONFIGURE_ARGS, "cc": cc if env.cc != "cc" else "default",
            "cc_version": cc_version, "cpu": cpu_identity()}


def build_gmp(env: AnchorEnv, notice: Notice) -> tuple[Path, dict]:
    """GMP configured for this CPU (static): (its directory with include/ and lib/, build record)."""
    impls = (GMP_POWM, GMP_MULMOD)
    cc, cc_version = resolve_cc(env, impls)
    key_doc = _gmp_key(env, cc, cc_version)
    key = _digest(key_doc)
    root = env.cache_dir / "gmp"
    dest = root / f"gmp-{key}"
    record = dest / "build.json"

    def cached() -> dict | None:
        if record.is_file() and (dest / "lib" / "libgmp.a").is_file() and (dest / "include" / "gmp.h").is_file():
            return json.loads(record.read_text(encoding="utf-8"))
        return None

    hit = cached()
    if hit is not None:
        return dest, hit
    if not env.build:
        raise AnchorUnavailable(impls, "GMP not built for this machine yet and building is off "
                                       "(run without --no-build)")
    with _locked(root / ".lock"):
        hit = cached()
        if hit is not None:
            return dest, hit
        m4, m4_desc = resolve_m4(env, notice)
        src = find_gmp_source(env, notice)
        work = root / f"build-{key}"
        shutil.rmtree(work, ignore_errors=True)
        (work / "build").mkdir(parents=True)
        log = work / "build.log"
        notice(f"building GMP from {src.name} for this CPU (once, a few minutes; log: {log})")
        build_env = dict(os.environ, M4=m4)
        if env.cc != "cc":
            build_env["CC"] = shlex.join(cc)
        started = time.monotonic()
        steps = [("configure", [str(src / "configure"), *GMP_CONFIGURE_ARGS, f"--prefix={work / 'install'}"]),
                 ("make", ["make", f"-j{env.jobs}"])]
        for step, argv in steps:
            if not _run_logged(argv, work / "build", log, build_env):
                raise AnchorUnavailable(impls, f"GMP {step} failed (log: {log})")
        seconds = time.monotonic() - started
        b = work / "build"
        staged = root / f"gmp-{key}.tmp-{os.getpid()}"
        shutil.rmtree(staged, ignore_errors=True)
        (staged / "include").mkdir(parents=True)
        (staged / "lib").mkdir()
        shutil.copy2(b / "gmp.h", staged / "include" / "gmp.h")
        shutil.copy2(b / ".libs" / "libgmp.a", staged / "lib" / "libgmp.a")
        doc = {"gmp_source": str(src), "crate": key_doc["crate"], "configure": list(GMP_CONFIGURE_ARGS),
               "host": _config_value(b / "config.log", "host"), "cflags": _makefile_value(b / "Makefile", "CFLAGS"),
               "cc": cc_version, "m4": m4_desc, "build_seconds": round(seconds, 1),
               "built": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "key": key_doc}
        (staged / "build.json").write_text(json.dumps(doc, indent=1) + "\n", encoding="utf-8")
        shutil.copy2(log, staged / "build.log")
        shutil.rmtree(dest, ignore_errors=True)
        os.replace(staged, dest)
        shutil.rmtree(work, ignore_errors=True)
        notice(f"built GMP in {seconds:.0f} s for host {doc['host']} ({doc['cflags']})")
        return dest, doc


def _config_value(config_log: Path, name: str) -> str | None:
    try:
        for line in config_log.read_text(encoding="utf-8", errors="replace").splitlines():
            if line.startswith(f"{name}='"):
                return line.split("=", 1)[1].strip("'")
    except OSError:
        pass
    return None


def _makefile_value(makefile: Path, name: str) -> str | None:
    try:
        for line in makefile.read_text(encoding="utf-8", errors="replace").splitlines():
            if line.startswith(f"{name} = "):
                return line.split("=", 1)[1].strip()
    except OSError:
        pass
    return None


def gmp_anchors(env: AnchorEnv, notice: Notice) -> list[AnchorProgram]:
    impls = (GMP_POWM, GMP_MULMOD)
    resolve_cc(env, impls)  # a missing compiler or harness is the first thing to report, not after GMP's build
    harness_source(env, impls, "gmp_sqr.c")
    gmp_dir, doc = build_gmp(env, notice)
    exe = compile_harness(env, impls, "gmp_sqr.c", [str(gmp_dir / "lib" / "libgmp.a")],
                          key_extra=doc.get("key"), include=[gmp_dir / "include"])
    build = {k: doc.get(k) for k in ("crate", "host", "cflags", "m4", "build_seconds", "built")}
    build["harness"] = str(exe)
    where = f"GMP built for {doc.get('host')}"
    return [AnchorProgram(GMP_POWM, (str(exe), "powm"), f"mpz_powm(x, 2^k, N), {where}", build),
            AnchorProgram(GMP_MULMOD, (str(exe), "mulmod"), f"mpz_mul + mpz_mod loop, {where}", build)]


def collect(env: AnchorEnv, notice: Notice) -> tuple[list[AnchorProgram], list[AnchorUnavailable]]:
    """Every native anchor that can be had here, and why the others cannot."""
    programs: list[AnchorProgram] = []
    skipped: list[AnchorUnavailable] = []
    for make in (lambda: gmp_anchors(env, notice), lambda: [openssl_anchor(env)]):
        try:
            programs += make()
        except AnchorUnavailable as exc:
            skipped.append(exc)
    return programs, skipped
