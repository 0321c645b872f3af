"""RSA keys: loaded from PEM or DER through ``cryptography``, held as plain integers.

Formats (RFC 8017 App. A.1, RFC 5208/5958, RFC 5280):

* private: PKCS#1 ``RSAPrivateKey`` (PEM ``BEGIN RSA PRIVATE KEY``) and
  PKCS#8 ``PrivateKeyInfo`` (``BEGIN PRIVATE KEY``, or ``BEGIN ENCRYPTED
  PRIVATE KEY`` with a password), PEM or DER;
* public: PKCS#1 ``RSAPublicKey`` (``BEGIN RSA PUBLIC KEY``) and X.509
  ``SubjectPublicKeyInfo`` (``BEGIN PUBLIC KEY``), PEM or DER; a private key
  is accepted where a public key is wanted (its public half is used);
* multi-prime private keys (RFC 8017 Sec. 3.2, ``otherPrimeInfos``), read by
  :mod:`.keyder` since ``cryptography`` refuses them; the private operation
  runs CRT over every prime;
* RSA-PSS-restricted keys (id-RSASSA-PSS, RFC 4055): loaded with their
  :class:`~modforge.rsa.keyder.PssRestriction` (``pss``), which the schemes
  enforce (PSS only, the key's hash and MGF1 hash, at least its salt length).

``cryptography`` parses the file; we take the numbers ``n, e, d, p, q, dp, dq,
qinv`` out of it and check them (:class:`RSAPrivateKey`, and the primes by
:func:`_check_primes`) in place of its own check, about 16 times slower at
8192 bits, docs/rsa.md (:meth:`RSAPrivateKey.from_numbers` is also how tests and callers
build keys from integers).  Every problem is a :class:`ParameterError` whose message
starts with ``key:``.  Moduli of 1024 to 8192 bits are accepted, no others (8192-bit keys run the private
operation on the Python kernel: the native one takes primes up to 2048 bits, docs/rsa.md).
"""

from __future__ import annotations

import contextlib
import contextvars
import math
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..arith.base import ParameterError
from ..fileio import InputTooLarge, read_bounded
from .keyder import KeyFormatError, PssRestriction, multi_prime_numbers, pss_restriction

MIN_BITS = 1024
# Seed 004's RSA-512, on the simulated PAM unit only (`rsa sign --backend sim:pam`): a check of the
# hardware against the seed's published figure, never a key to trust.  Set for one load by
# `short_keys_for_simulation`; everything else keeps MIN_BITS.
SIM_MIN_BITS = 512
_min_bits: contextvars.ContextVar[int] = contextvars.ContextVar("modforge_rsa_min_bits", default=MIN_BITS)
MAX_BITS = 8192
MAX_KEY_FILE_BYTES = 1 << 20    # an 8192-bit private key is about 6.5 KB of PEM


@contextlib.contextmanager
def short_keys_for_simulation() -> Iterator[None]:
    """Keys from SIM_MIN_BITS bits are read inside this block (the sim:pam backend's RSA-512)."""
    token = _min_bits.set(SIM_MIN_BITS)
    try:
        yield
    finally:
        _min_bits.reset(token)


def _require(ok: bool, problem: str) -> None:
    if not ok:
        raise ParameterError("key", problem)


def _check_modulus(n: int) -> None:
    _require(isinstance(n, int) and not isinstance(n, bool) and n > 0, "modulus must be a positive integer")
    bits = n.bit_length()
    low = _min_bits.get()
    _require(low <= bits <= MAX_BITS,
             f"modulus is {bits} bits; supported sizes are {low} to {MAX_BITS} bits"
             + (f" ({SIM_MIN_BITS}-bit keys and up only with --backend sim:pam, to check the simulated hardware)"
                if SIM_MIN_BITS <= bits < low else ""))
    _require(n % 2 == 1, "modulus is even")


def _check_public_exponent(e: int, n: int) -> None:
    _require(isinstance(e, int) and not isinstance(e, bool), "public exponent must be an integer")
    _require(3 <= e < n and e % 2 == 1, f"public exponent must be odd with 3 <= e < n, got {e}")


@dataclass(frozen=True)
class RSAPublicKey:
    """``(n, e)``; ``size`` is the modulus length ``k`` in bytes."""

    n: int
    e: int
    pss: PssRestriction | None = None     # an id-RSASSA-PSS key's limits (keyder.PssRestriction)

    def __post_init__(self) -> None:
        _check_modulus(self.n)
        _check_public_exponent(self.e, self.n)

    @property
    def bits(self) -> int:
        return self.n.bit_length()

    @property
    def size(self) -> int:
        return (self.bits + 7) // 8

    def to_cryptography(self) -> Any:
        from cryptography.hazmat.primitives.asymmetric import rsa

        return rsa.RSAPublicNumbers(self.e, self.n).public_key()


@dataclass(frozen=True, repr=False)
class RSAPrivateKey:
    """All CRT numbers; ``qinv = q^-1 mod p`` (PKCS#1 ``coefficient``), so Garner reads
    ``x = xq + q * ((xp - xq) * qinv mod p)``.  A multi-prime key (RFC 8017 Sec. 3.2) has
    ``other_primes``, triples ``(r_i, d_i, t_i)`` with ``d_i = d mod (r_i - 1)`` and
    ``t_i = (p * q * r_3 ... r_(i-1))^-1 mod r_i``.  The repr shows no secret."""

    n: int
    e: int
    d: int
    p: int
    q: int
    dp: int
    dq: int
    qinv: int
    other_primes: tuple[tuple[int, int, int], ...] = ()
    pss: PssRestriction | None = None

    def __post_init__(self) -> None:
        _check_modulus(self.n)
        _check_public_exponent(self.e, self.n)
        for name in ("d", "p", "q", "dp", "dq", "qinv"):
            v = getattr(self, name)
            _require(isinstance(v, int) and not isinstance(v, bool) and v > 0, f"{name} must be a positive integer")
        _require(isinstance(self.other_primes, tuple) and all(
            isinstance(t, tuple) and len(t) == 3 and all(isinstance(v, int) and not isinstance(v, bool) and v > 0
                                                         for v in t) for t in self.other_primes),
                 "other_primes must be (r, d, t) triples of positive integers")
        p, q = self.p, self.q
        primes = self.primes
        product = math.prod(primes)
        _require(all(r > 2 for r in primes) and len(set(primes)) == len(primes) and product == self.n,
                 "p * q != n (or p == q)" if not self.other_primes else
                 "the primes' product is not n (or two primes are equal)")
        lam = 1
        for r in primes:
            lam = lam // math.gcd(lam, r - 1) * (r - 1)
        what = "lcm(p-1, q-1)" if not self.other_primes else "lcm of (r-1) over the primes"
        _require(self.d < self.n and (self.d * self.e - 1) % lam == 0, f"d is not an inverse of e modulo {what}")
        _require(self.dp == self.d % (p - 1), "dp != d mod (p - 1)")
        _require(self.dq == self.d % (q - 1), "dq != d mod (q - 1)")
        _require(0 < self.qinv < p and self.qinv * q % p == 1, "qinv is not q^-1 mod p")
        before = p * q
        for i, (r, d_i, t_i) in enumerate(self.other_primes, start=3):
            _require(d_i == self.d % (r - 1), f"d of prime {i} != d mod (r_{i} - 1)")
            _require(0 < t_i < r and t_i * before % r == 1, f"t of prime {i} is not (r_1 ... r_{i - 1})^-1 mod r_{i}")
            before *= r

    @property
    def primes(self) -> tuple[int, ...]:
        """Every prime factor of n: p, q, then the other primes in file order."""
        return (self.p, self.q, *(r for r, _, _ in self.other_primes))

    def __repr__(self) -> str:
        primes = f", primes={len(self.primes)}" if self.other_primes else ""
        return f"RSAPrivateKey(bits={self.bits}, e={self.e}{primes})"

    def __getstate__(self) -> dict:
        # Kernels prepared for this key (modforge.rsa.exp.prepared) stay in this process.
        return {k: v for k, v in self.__dict__.items() if k != "_prepared"}

    @classmethod
    def from_numbers(cls, *, p: int, q: int, e: int, d: int | None = None) -> "RSAPrivateKey":
        """Build a key from its primes and public exponent (``d`` derived when not given)."""
        for name, v in (("p", p), ("q", q), ("e", e)):
            _require(isinstance(v, int) and not isinstance(v, bool) and v > 2, f"{name} must be an integer > 2")
        lam = (p - 1) // math.gcd(p - 1, q - 1) * (q - 1)
        if d is None:
            _require(math.gcd(e, lam) == 1, "e is not invertible modulo lcm(p-1, q-1)")
            d = pow(e, -1, lam)
        _require(math.gcd(q, p) == 1, "p and q are not coprime")
        return cls(n=p * q, e=e, d=d, p=p, q=q, dp=d % (p - 1), dq=d % (q - 1), qinv=pow(q, -1, p))

    @property
    def bits(self) -> int:
        return self.n.bit_length()

    @property
    def size(self) -> int:
        return (self.bits + 7) // 8

    @property
    def public(self) -> RSAPublicKey:
        return RSAPublicKey(self.n, self.e, self.pss)

    def to_cryptography(self) -> Any:
        from cryptography.hazmat.primitives.asymmetric import rsa

        _require(not self.other_primes, "cryptography holds two-prime keys only; this one has "
                                        f"{len(self.primes)} primes")
        return rsa.RSAPrivateNumbers(self.p, self.q, self.d, self.dp, self.dq, self.qinv,
                                     rsa.RSAPublicNumbers(self.e, self.n)).private_key()


# ------------------------------------------------------------------------------------------- loading


def _is_pem(data: bytes) -> bool:
    return b"-----BEGIN " in data


def _pem_bodies(data: bytes) -> list[bytes]:
    """The DER of every PEM block in ``data`` (only the lines between its BEGIN and END lines; header lines
    such as ``Proc-Type:`` skipped), whatever text surrounds the blocks."""
    import base64

    out, body, inside = [], [], False
    for line in data.decode("ascii", "replace").splitlines():
        line = line.strip()
        if line.startswith("-----BEGIN "):
            inside, body = True, []
        elif line.startswith("-----END "):
            if inside:
                try:
                    out.append(base64.b64decode("".join(body), validate=False))
                except ValueError:
                    pass
            inside = False
        elif inside and line and ":" not in line:
            body.append(line)
    return out


def _ders(data: bytes, pem: bool) -> list[bytes]:
    return _pem_bodies(data) if pem else [data]


def _pss_of(ders: list[bytes]) -> PssRestriction | None:
    """The id-RSASSA-PSS restriction of the key, read from the file: ``cryptography`` loads such keys as
    plain RSA keys and drops it.  An *encrypted* PKCS#8 file hides it in the ciphertext:
    :func:`_encrypted_pss_of` reads it there once the key has loaded."""
    for der in ders:
        try:
            found = pss_restriction(der)
        except KeyFormatError as exc:
            raise ParameterError("key", f"an RSA-PSS-restricted key (id-RSASSA-PSS) with {exc}") from None
        if found is not None:
            return found
    return None


def _encrypted_pss_of(data: bytes, pem: bool, password: bytes) -> PssRestriction | None:
    """:func:`_pss_of` for an encrypted PKCS#8 key, whose marker is inside the ciphertext: the first cipher
    blocks are decrypted again here (``cryptography`` has already checked the password)."""
    from .pkcs8 import decrypted_prefix

    prefixes = [decrypted_prefix(der, password, length=160) for der in _ders(data, pem)]
    return _pss_of([p for p in prefixes if p is not None])


def _multi_prime(ders: list[bytes], pss: PssRestriction | None) -> RSAPrivateKey | None:
    """The multi-prime key in the file, or None when it holds none."""
    for der in ders:
        numbers = multi_prime_numbers(der)
        if numbers is not None:
            return _check_primes(RSAPrivateKey(**numbers, pss=pss))   # type: ignore[arg-type]
    return None


def _encrypted_multi_prime(data: bytes, pem: bool, password: bytes) -> RSAPrivateKey | None:
    """:func:`_multi_prime` inside an encrypted PKCS#8 key: the whole ciphertext decrypted (the cipher's
    padding is left at the end, past the DER, where the reader does not look)."""
    from .pkcs8 import decrypted_prefix

    plain = [decrypted_prefix(der, password, length=len(der)) for der in _ders(data, pem)]
    plain = [p for p in plain if p is not None]
    return _multi_prime(plain, _pss_of(plain))


def _public_key_given(data: bytes, pem: bool) -> bool:
    """Whether ``data`` holds a public key (PEM label, or DER that loads as one)."""
    if pem:
        return b"PUBLIC KEY-----" in data and b"PRIVATE KEY-----" not in data
    from cryptography.hazmat.primitives import serialization

    try:
        serialization.load_der_public_key(data)
    except Exception:   # noqa: BLE001 - any failure means: not a public key
        return False
    return True


# Miller-Rabin rounds of the primality check on loading (GMP's, after its trial division): a false "prime"
# has probability below 4^-25 per factor, and this only guards against a corrupt or forged key file.
PRIME_CHECK_ROUNDS = 25


def _check_primes(key: RSAPrivateKey) -> RSAPrivateKey:
    """``key`` once each of its factors is a probable prime (the numbers' consistency is checked by
    :class:`RSAPrivateKey` itself): the part of cryptography's key check that the class does not do."""
    import gmpy2

    for i, r in enumerate(key.primes, start=1):
        if not gmpy2.is_prime(r, PRIME_CHECK_ROUNDS):
            name = {1: "p", 2: "q"}.get(i, f"prime {i}")
            raise ParameterError("key", f"{name} is not a prime (a corrupt or forged key)")
    return key


def _describe(obj: Any) -> str:
    return type(obj).__name__.lstrip("_")


def _from_cryptography_private(obj: Any, pss: PssRestriction | None = None) -> RSAPrivateKey:
    from cryptography.hazmat.primitives.asymmetric import rsa

    _require(isinstance(obj, rsa.RSAPrivateKey), f"not an RSA private key ({_describe(obj)})")
    nums = obj.private_numbers()
    pub = nums.public_numbers
    return RSAPrivateKey(n=pub.n, e=pub.e, d=nums.d, p=nums.p, q=nums.q, dp=nums.dmp1, dq=nums.dmq1,
                         qinv=nums.iqmp, pss=pss)


def _from_cryptography_public(obj: Any, pss: PssRestriction | None = None) -> RSAPublicKey:
    from cryptography.hazmat.primitives.asymmetric import rsa

    _require(isinstance(obj, rsa.RSAPublicKey), f"not an RSA public key ({_describe(obj)})")
    nums = obj.public_numbers()
    return RSAPublicKey(n=nums.n, e=nums.e, pss=pss)


def _problem(exc: BaseException) -> str:
    """The useful part of a ``cryptography`` error: its ``Details:`` when there are some, on one line."""
    text = " ".join(str(exc).split()) or type(exc).__name__
    if "Details:" in text:
        text = text.split("Details:", 1)[1].strip()
    return text.rstrip(".")


def _kind(pem: bool) -> str:
    return "a valid PEM" if pem else "PEM (no '-----BEGIN' line) nor a valid DER"


def _encrypted_pem(data: bytes, pem: bool) -> bool:
    """Whether ``data`` is an encrypted PEM private key (PKCS#8, or PKCS#1 with OpenSSL's ``Proc-Type`` header)."""
    return pem and (b"-----BEGIN ENCRYPTED PRIVATE KEY-----" in data or b"Proc-Type: 4,ENCRYPTED" in data)


def load_private_key(data: bytes, password: bytes | None = None) -> RSAPrivateKey:
    """A private key from PEM or DER bytes (PKCS#1 or PKCS#8, encrypted PKCS#8 with ``password``)."""
    from cryptography.exceptions import UnsupportedAlgorithm
    from cryptography.hazmat.primitives import serialization

    _require(isinstance(data, (bytes, bytearray)) and len(data) > 0, "empty key data")
    data = bytes(data)
    pem = _is_pem(data)
    ders = _ders(data, pem)
    pss = _pss_of(ders)
    if _public_key_given(data, pem):
        raise ParameterError("key", "this is a public key; this command needs the private key")
    loader = serialization.load_pem_private_key if pem else serialization.load_der_private_key
    try:
        # cryptography's own key check (OpenSSL's RSA_check_key) took 14 s for an 8192-bit key on this
        # machine's Zen 3; the same checks run in RSAPrivateKey and _check_primes instead: 0.85 s (docs/rsa.md).
        obj = loader(data, password=password, unsafe_skip_rsa_key_validation=True)
    except TypeError as exc:
        if "encrypted" in str(exc).lower() and password is None:
            raise ParameterError("key", "the private key is encrypted: a password is needed") from None
        if password is not None:
            raise ParameterError("key", "a password was given but the private key is not encrypted") from None
        raise ParameterError("key", _problem(exc)) from None
    except UnsupportedAlgorithm as exc:
        raise ParameterError("key", f"unsupported key type: {_problem(exc)}") from None
    except ValueError as exc:
        # A wrong password usually breaks the cipher's padding ("incorrect password"), but about one time in
        # 500 the padding survives and the garbage fails to parse instead: in an encrypted PEM that too is
        # a failed decryption, not a malformed file.
        if "key encryption algorithm" in str(exc).lower() or "unsupported encryption" in str(exc).lower():
            raise ParameterError("key", f"the private key's encryption is not supported ({_problem(exc)}); "
                                        "re-encrypt it with `openssl pkcs8 -topk8 -v2 aes-256-cbc`") from None
        # cryptography refuses multi-prime keys ("Invalid key"): they are read here instead.
        multi = _multi_prime(ders, pss) if password is None else None
        if multi is None and password is not None and "incorrect password" not in str(exc).lower():
            multi = _encrypted_multi_prime(data, pem, password)
        if multi is not None:
            return multi
        if password is not None and ("incorrect password" in str(exc).lower() or _encrypted_pem(data, pem)):
            raise ParameterError("key", "could not decrypt the private key (wrong password?)") from None
        raise ParameterError("key", f"not {_kind(pem)} RSA private key (PKCS#1 or PKCS#8): {_problem(exc)}") from None
    if password is not None:
        pss = _encrypted_pss_of(data, pem, password)
    return _check_primes(_from_cryptography_private(obj, pss))


def load_public_key(data: bytes) -> RSAPublicKey:
    """A public key from PEM or DER bytes (PKCS#1 or SubjectPublicKeyInfo); a private key gives its public half."""
    from cryptography.exceptions import UnsupportedAlgorithm
    from cryptography.hazmat.primitives import serialization

    _require(isinstance(data, (bytes, bytearray)) and len(data) > 0, "empty key data")
    data = bytes(data)
    pem = _is_pem(data)
    if pem and b"-----BEGIN ENCRYPTED PRIVATE KEY-----" in data:
        # Its public half is encrypted too; a public operation should not need the password.
        raise ParameterError("key", "an encrypted private key: give the public key instead (modforge rsa keygen "
                                    "--public-out, or `openssl pkey -in KEY -pubout`)")
    if pem and b"PRIVATE KEY-----" in data:
        return load_private_key(data).public
    pss = _pss_of(_ders(data, pem))
    loader = serialization.load_pem_public_key if pem else serialization.load_der_public_key
    try:
        obj = loader(data)
    except UnsupportedAlgorithm as exc:
        raise ParameterError("key", f"unsupported key type: {_problem(exc)}") from None
    except ValueError as exc:
        if not pem:   # DER carries no label: it may be a private key
            try:
                return load_private_key(data).public
            except ParameterError as private_exc:
                # It did parse as a private key that we refuse (its size, say): that is the real problem.
                if "not PEM (no '-----BEGIN' line) nor a valid DER" not in private_exc.problem:
                    raise ParameterError("key", f"{private_exc.problem} (a DER private key, read for its "
                                                f"public half)") from None
        raise ParameterError("key", f"not {_kind(pem)} RSA public key (PKCS#1 or SubjectPublicKeyInfo, "
                                    f"or a private key): {_problem(exc)}") from None
    return _from_cryptography_public(obj, pss)


def _read(path: str | Path) -> bytes:
    try:
        return read_bounded(path, MAX_KEY_FILE_BYTES, repr(str(path)))
    except InputTooLarge as exc:
        raise ParameterError("key", f"{exc}: not a key file") from None
    except OSError as exc:
        raise ParameterError("key", f"cannot read {str(path)!r}: {exc.strerror or exc}") from None


def read_private_key(path: str | Path, password: bytes | None = None) -> RSAPrivateKey:
    return load_private_key(_read(path), password)


def read_public_key(path: str | Path) -> RSAPublicKey:
    return load_public_key(_read(path))


# ------------------------------------------------------------------------------------------------ generation
KEYGEN_MIN_BITS = 2048          # below this a new key is too weak to make (reading older 1024-bit keys is fine)
KEYGEN_MAX_BITS = MAX_BITS      # 8192 bits: OpenSSL takes about a minute (docs/rsa.md)
KEYGEN_EXPONENT = 65537
MAX_PASSWORD_BYTES = 1023       # what cryptography's PKCS#8 encryption takes


def generate_private_key_pem(bits: int, password: bytes | None = None) -> tuple[bytes, bytes]:
    """A new RSA key of ``bits`` bits, e = 65537: (private key PKCS#8 PEM, public key SubjectPublicKeyInfo PEM).

    The primes come from OpenSSL through ``cryptography`` (a maintained generator with its own prime tests);
    the key is then read back through :func:`load_private_key`, so it passes every check a key given to
    ``sign`` does.  ``password`` encrypts the private key (the library's best available scheme)."""
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import rsa as crypto_rsa

    if not isinstance(bits, int) or isinstance(bits, bool) or not KEYGEN_MIN_BITS <= bits <= KEYGEN_MAX_BITS \
            or bits % 8:
        raise ParameterError("bits", f"must be a multiple of 8 from {KEYGEN_MIN_BITS} to {KEYGEN_MAX_BITS}, "
                                     f"got {bits!r}")
    if password is not None and not 0 < len(password) <= MAX_PASSWORD_BYTES:
        raise ParameterError("key_password_file", f"the password (its first line) must have 1 to "
                                                  f"{MAX_PASSWORD_BYTES} bytes, got {len(password)}")
    # OpenSSL releases the GIL while it searches (about a minute at 8192 bits): waiting for it in steps lets
    # Ctrl-C and SIGTERM end the command at once, not when the search is done.
    from ..interrupts import in_interruptible_thread

    key = in_interruptible_thread(lambda: crypto_rsa.generate_private_key(public_exponent=KEYGEN_EXPONENT,
                                                                          key_size=bits))
    encryption = (serialization.BestAvailableEncryption(password) if password is not None
                  else serialization.NoEncryption())
    private_pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, encryption)
    public_pem = key.public_key().public_bytes(serialization.Encoding.PEM,
                                               serialization.PublicFormat.SubjectPublicKeyInfo)
    loaded = load_private_key(private_pem, password)
    if loaded.n.bit_length() != bits or load_public_key(public_pem).n != loaded.n:
        raise RuntimeError("the generated key does not read back as made")
    return private_pem, public_pem
