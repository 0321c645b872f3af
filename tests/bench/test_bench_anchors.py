"""Anchor discovery: every way an anchor cannot be had gives a clear skip, and nothing is built here."""

from __future__ import annotations

from pathlib import Path

import pytest

from modforge.bench import anchors
from modforge.bench.anchors import AnchorEnv, AnchorUnavailable
from modforge.bench.vdf import gather_impls


def no_notice(message: str) -> None:
    raise AssertionError(f"nothing should be fetched or built here: {message}")


def test_missing_compiler_skips_every_native_anchor(tmp_path: Path) -> None:
    env = AnchorEnv(cache_dir=tmp_path, cc="/nonexistent/cc")
    programs, skipped = anchors.collect(env, no_notice)
    assert programs == []
    names = [n for exc in skipped for n in exc.impls]
    assert names == ["gmp-native-powm", "gmp-native-mulmod", "openssl-mont"]
    assert all("no C compiler" in exc.why and "/nonexistent/cc" in exc.why for exc in skipped)
    assert list(tmp_path.iterdir()) == []


def test_missing_m4_says_install_m4(tmp_path: Path) -> None:
    env = AnchorEnv(cache_dir=tmp_path, m4="/nonexistent/m4")
    if anchors.shutil.which("cc") is None:
        pytest.skip("no cc here: the compiler check comes first")
    with pytest.raises(AnchorUnavailable) as exc:
        anchors.gmp_anchors(env, no_notice)
    assert exc.value.impls == ("gmp-native-powm", "gmp-native-mulmod")
    assert exc.value.why.startswith("install m4 to build the GMP anchor")
    assert "/nonexistent/m4" in exc.value.why


def test_no_build_uses_only_the_cache(tmp_path: Path) -> None:
    if anchors.shutil.which("cc") is None:
        pytest.skip("no cc here: the compiler check comes first")
    env = AnchorEnv(cache_dir=tmp_path, build=False)
    programs, skipped = anchors.collect(env, no_notice)
    assert programs == []
    assert all("--no-build" in exc.why for exc in skipped)


def test_missing_libcrypto_and_harness_source(tmp_path: Path) -> None:
    with pytest.raises(AnchorUnavailable, match="does not exist"):
        anchors.find_libcrypto(AnchorEnv(cache_dir=tmp_path, libcrypto=tmp_path / "libcrypto.so.3"))
    env = AnchorEnv(cache_dir=tmp_path, sources_dir=tmp_path / "nowhere")
    with pytest.raises(AnchorUnavailable, match="harness source .* not found"):
        anchors.compile_harness(env, ("openssl-mont",), "openssl_sqr.c", [], None)


def test_harness_sources_ship_in_the_package() -> None:
    src = anchors.default_sources_dir()
    assert (src / "gmp_sqr.c").is_file() and (src / "openssl_sqr.c").is_file()


def test_a_missing_harness_is_reported_before_gmp_is_built(tmp_path: Path, monkeypatch) -> None:
    """Not after a minute of building GMP for a harness that cannot be compiled."""
    monkeypatch.setattr(anchors, "build_gmp", lambda *a: pytest.fail("GMP built without its harness"))
    env = AnchorEnv(cache_dir=tmp_path, sources_dir=tmp_path / "nowhere")
    with pytest.raises(AnchorUnavailable, match="harness source .*gmp_sqr.c not found"):
        anchors.gmp_anchors(env, lambda text: None)


def test_environment_variables(tmp_path: Path) -> None:
    env = AnchorEnv.from_environ({"MODFORGE_BENCH_CACHE": str(tmp_path), "CC": "gcc -m64", "M4": "gm4",
                                  "MODFORGE_LIBCRYPTO": "/x/libcrypto.so.3"}, build=False)
    assert (env.cache_dir, env.cc, env.m4, env.libcrypto, env.build) == \
        (tmp_path / "anchors", "gcc -m64", "gm4", Path("/x/libcrypto.so.3"), False)
    default = AnchorEnv.from_environ({"XDG_CACHE_HOME": str(tmp_path)})
    assert default.cache_dir == tmp_path / "modforge" / "anchors" and default.m4 is None and default.cc == "cc"


def test_one_bench_cache_variable_for_anchors_and_rsa_keys(tmp_path: Path) -> None:
    """MODFORGE_BENCH_CACHE was the anchors' directory for `bench vdf` but the parent of rsa-keys/ for `bench rsa`
    and `bench ct`: set to its documented default, it moved the RSA keys (and regenerated them)."""
    from modforge.bench.rsa import cache_dir as rsa_key_dir

    unset = {"HOME": str(tmp_path), "XDG_CACHE_HOME": str(tmp_path / "xdg")}
    default = (tmp_path / "xdg" / "modforge" / "anchors", tmp_path / "xdg" / "modforge" / "rsa-keys")
    assert (AnchorEnv.from_environ(unset).cache_dir, rsa_key_dir(unset)) == default
    at_default = dict(unset, MODFORGE_BENCH_CACHE=str(tmp_path / "xdg" / "modforge"))
    assert (AnchorEnv.from_environ(at_default).cache_dir, rsa_key_dir(at_default)) == default
    elsewhere = dict(unset, MODFORGE_BENCH_CACHE=str(tmp_path / "b"))
    assert (AnchorEnv.from_environ(elsewhere).cache_dir, rsa_key_dir(elsewhere)) == \
        (tmp_path / "b" / "anchors", tmp_path / "b" / "rsa-keys")


def test_gather_lists_ours_and_reports_missing_backends(tmp_path: Path) -> None:
    impls, skipped = gather_impls(AnchorEnv(cache_dir=tmp_path, cc="/nonexistent/cc"), no_notice)
    names = [i.name for i in impls]
    assert "engine-gmp" in names and "gmpy2-powm" in names
    skipped_names = {s["impl"] for s in skipped}
    assert {"gmp-native-powm", "gmp-native-mulmod", "openssl-mont"} <= skipped_names
    for backend in ("portable", "adx", "ifma"):
        assert (f"engine-{backend}" in names) != (f"engine-{backend}" in skipped_names)
