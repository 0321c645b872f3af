"""RSA on modforge: keys from PEM/DER, RFC 8017 schemes, a checked CRT private-key operation.

* :mod:`.keys`: load PKCS#1 / PKCS#8 / SubjectPublicKeyInfo keys (PEM or DER)
  through ``cryptography``, multi-prime and RSA-PSS-restricted keys through
  :mod:`.keyder`; 1024 to 8192-bit moduli.
* :mod:`.encodings`: our own RFC 8017 encodings (EMSA-PKCS1-v1_5, EMSA-PSS,
  EME-OAEP with a constant-time-style decoder, MGF1).
* :mod:`.exp`: :func:`crt_halves`, the one function through which the two
  half-size exponentiations run; the Python fixed-window kernel now, the
  native constant-time kernel later (docs/rsa.md gives its contract).
* :mod:`.primitives`: RSAEP/RSAVP1 and the CRT private operation with Garner
  recombination and the Bellcore check (seed 004, Sec. 3.1).
* :mod:`.schemes`: sign / verify / encrypt / decrypt on bytes.
* :mod:`.batch`: sign many files on every core.
"""

from .encodings import HASHES
from .errors import DecryptionError, FaultError, RSAError
from .exp import backend_names, crt_halves, register_backend
from .keys import (RSAPrivateKey, RSAPublicKey, generate_private_key_pem, load_private_key, load_public_key,
                   read_private_key, read_public_key)
from .primitives import garner, private_op, rsadp, rsaep, rsasp1, rsavp1
from .schemes import (ENCRYPTION_SCHEMES, SIGNATURE_SCHEMES, Prehashed, check_signature, decrypt, digest_file,
                      encrypt, sign, verify)

__all__ = [
    "HASHES", "DecryptionError", "FaultError", "RSAError", "backend_names", "crt_halves", "register_backend",
    "RSAPrivateKey", "RSAPublicKey", "generate_private_key_pem", "load_private_key", "load_public_key", "read_private_key", "read_public_key",
    "garner", "private_op", "rsadp", "rsaep", "rsasp1", "rsavp1", "ENCRYPTION_SCHEMES", "SIGNATURE_SCHEMES",
    "Prehashed", "check_signature", "decrypt", "digest_file", "encrypt", "sign", "verify",
]
