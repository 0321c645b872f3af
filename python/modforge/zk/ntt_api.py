"""``modforge.zk.ntt``: the NTT over Goldilocks on NumPy ``uint64`` arrays (docs/zk-ntt.md).

The transform runs in place in the caller's array when it is a writable C-contiguous ``uint64`` array
(the native engine reads and writes it through the buffer protocol: no copy crosses the boundary); any
other input (a list, another dtype, a strided view) is converted into a new array first, and that
array is returned.

Conventions (the same as ``modforge ntt`` and the model :mod:`.ntt_model`):

* forward: ``out[k] = sum_j a[j] * w_n^(j*k)``, w_n = Plonky3's ``TWO_ADIC_GENERATORS[log2 n]``;
* ``inverse=True``: the exact inverse, the 1/n factor included;
* ``zprize=True``: the ZPrize competition's transform (bit reversal, then DIT with the harness's root
  table, unscaled), which is the forward transform: accepted for clarity, refused with ``inverse``;
* a 2-D array ``(n, C)`` is a batch of C columns (row i holds element i of each column), as is a 1-D
  array with ``columns=C``;
* ``coset_shift=g``: evaluations on g * <w_n> (forward) and its inverse.

Without the native engine the bit-exact Python model computes the same numbers, slowly.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..arith.base import ParameterError
from .goldilocks import GOLDILOCKS

P = GOLDILOCKS.p
ORDERS = ("natural", "bit-reversed")


def _native() -> Any | None:
    """The compiled engine if it offers the NTT, else None."""
    try:
        from .. import _native as ext
    except ImportError:
        return None
    return ext if hasattr(ext, "ntt_transform") else None


def native_available() -> bool:
    return _native() is not None


def as_elements(a: Any, *, reduce: bool = False, name: str = "a", check: bool = True) -> np.ndarray:
    """``a`` as a C-contiguous ``uint64`` array of canonical elements: the same array when it already is
    one, else a converted copy.  Values >= p are refused (ParameterError naming the first index) unless
    ``reduce``, which reduces them mod p in place.  ``check=False`` leaves the values to the caller (the
    native transform checks them on its way through the data)."""
    if isinstance(a, np.ndarray) and a.dtype == np.uint64 and a.flags.c_contiguous and a.flags.writeable:
        array = a
    else:
        try:
            array = np.ascontiguousarray(np.asarray(a, dtype=object if not isinstance(a, np.ndarray) else None))
            if array.dtype == object:
                values = array.ravel().tolist()
                bad = next((i for i, v in enumerate(values) if not isinstance(v, (int, np.integer))
                            or isinstance(v, bool) or not 0 <= int(v) < 2**64), None)
                if bad is not None:
                    raise ParameterError(name, f"element {bad} is not an unsigned 64-bit integer: {values[bad]!r}")
                array = np.array([int(v) for v in values], dtype=np.uint64).reshape(array.shape)
            elif array.dtype.kind == "i" and array.size and int(array.min()) < 0:
                raise ParameterError(name, f"element {int(np.argmax(array < 0))} is negative")
            elif array.dtype.kind not in "ui":
                raise ParameterError(name, f"must hold integers, got dtype {array.dtype}")
            array = np.array(array, dtype=np.uint64, order="C")
        except ParameterError:
            raise
        except (TypeError, ValueError, OverflowError) as exc:
            raise ParameterError(name, f"not an array of unsigned 64-bit integers ({exc})") from None
    if not check and not reduce:
        return array
    too_big = array >= np.uint64(P)
    if too_big.any():
        if not reduce:
            index = int(np.argmax(too_big.ravel()))
            raise ParameterError(name, f"element {index} is {int(array.ravel()[index])}, not below p = {P:#x} "
                                       f"(ask for reduction mod p to accept it)")
        np.subtract(array, np.uint64(P), out=array, where=too_big)
    return array


def check_rows(rows: int) -> int:
    """log2(rows), or ParameterError for a count that is not a power of two in 1..2^32."""
    if rows < 1 or rows & (rows - 1):
        raise ParameterError("n", f"the number of points must be a power of two, got {rows}")
    log_n = rows.bit_length() - 1
    if log_n > GOLDILOCKS.two_adicity:
        raise ParameterError("n", f"the number of points must be at most 2^{GOLDILOCKS.two_adicity}, got 2^{log_n}")
    return log_n


def _shape(array: np.ndarray, columns: int | None) -> tuple[int, int]:
    if array.ndim == 2:
        rows, cols = array.shape
        if columns is not None and columns != cols:
            raise ParameterError("columns", f"{columns} given for an array of {cols} columns")
        return rows, cols
    if array.ndim != 1:
        raise ParameterError("a", f"must be 1-D or 2-D (rows, columns), got {array.ndim} dimensions")
    cols = 1 if columns is None else columns
    if cols < 1 or array.size % cols:
        raise ParameterError("columns", f"{array.size} elements do not make rows of {cols} columns")
    return array.size // cols, cols


def _model_columns(flat: np.ndarray, rows: int, cols: int, fn: Any) -> None:
    """Apply the Python model ``fn`` (list -> list) to each column of ``flat`` in place."""
    matrix = flat.reshape(rows, cols)
    for c in range(cols):
        matrix[:, c] = np.array(fn([int(x) for x in matrix[:, c]]), dtype=np.uint64)


def _bit_reverse_rows(flat: np.ndarray, rows: int, cols: int) -> None:
    from .ntt_model import bit_reverse_index

    bits = rows.bit_length() - 1
    perm = np.array([bit_reverse_index(i, bits) for i in range(rows)], dtype=np.int64)
    matrix = flat.reshape(rows, cols)
    matrix[:] = matrix[perm]


def ntt(a: Any, inverse: bool = False, *, columns: int | None = None, coset_shift: int | None = None,
        input_order: str = "natural", output_order: str = "natural", threads: int = 0,
        backend: str | None = None, reduce: bool = False, zprize: bool = False) -> np.ndarray:
    """The NTT of ``a`` (see the module docs), in place when ``a`` is a writable C-contiguous ``uint64``
    array; returns the transformed array.  ``backend``: ``"model"`` (the Python model), or a native one
    (``"portable"``, ``"avx2"``, ``"avx512"``); None picks the fastest native, the model without it."""
    if zprize and inverse:
        raise ParameterError("zprize", "the ZPrize transform is the forward one; it has no inverse flag")
    for name, value in (("input_order", input_order), ("output_order", output_order)):
        if value not in ORDERS:
            raise ParameterError(name, f"must be one of {', '.join(ORDERS)}, got {value!r}")
    if coset_shift is not None and not 0 < coset_shift < P:
        raise ParameterError("coset_shift", f"must be a nonzero canonical element, got {coset_shift}")
    if threads < 0:
        raise ParameterError("threads", f"must be >= 0 (0: all cores), got {threads}")
    ext = _native() if backend != "model" else None
    # The native engine checks the elements itself, inside its first pass over the data: a NumPy compare
    # here would be a serial pass over memory and a temporary of n bytes, a tenth of a large transform.
    array = as_elements(a, reduce=reduce, check=ext is None)
    rows, cols = _shape(array, columns)
    check_rows(rows)
    flat = array.reshape(-1)
    if ext is not None:
        try:
            ext.ntt_transform(flat, columns=cols, inverse=inverse, input_bit_reversed=input_order != "natural",
                              output_bit_reversed=output_order != "natural", coset_shift=coset_shift,
                              threads=threads, backend=backend)
        except ValueError as exc:
            param, _, problem = str(exc).partition(": ")
            if param == "a" and problem.startswith("element"):
                as_elements(array)  # the refused array is as it was: the same message as without the engine
            raise ParameterError(param or "a", problem or str(exc)) from None
        return array
    if backend not in (None, "model"):
        raise ParameterError("backend", f"{backend!r} needs the native engine, which is not built (run `make`)")
    from . import ntt_model as m

    if input_order != "natural":
        _bit_reverse_rows(flat, rows, cols)
    if inverse:
        fn = m.inverse_transform if coset_shift is None else (lambda col: m.coset_inverse(col, coset_shift))
    else:
        fn = m.forward if coset_shift is None else (lambda col: m.coset_forward(col, coset_shift))
    _model_columns(flat, rows, cols, fn)
    if output_order != "natural":
        _bit_reverse_rows(flat, rows, cols)
    return array


def lde(evaluations: Any, blowup: int, *, shift: int = GOLDILOCKS.multiplicative_generator,
        columns: int | None = None, threads: int = 0, backend: str | None = None) -> np.ndarray:
    """Low-degree extension: the evaluations on shift * <w_(n*blowup)> (natural order, a new array of
    n * blowup rows) of the polynomials of degree < n whose evaluations on <w_n> are given."""
    array = as_elements(evaluations)
    rows, cols = _shape(array, columns)
    check_rows(rows)
    if blowup < 1 or blowup & (blowup - 1):
        raise ParameterError("blowup", f"must be a power of two, got {blowup}")
    check_rows(rows * blowup)
    if not 0 < shift < P:
        raise ParameterError("shift", f"must be a nonzero canonical element, got {shift}")
    shape = (rows * blowup, cols) if array.ndim == 2 else (rows * blowup * cols,)
    out = np.empty(shape, dtype=np.uint64)
    ext = _native() if backend != "model" else None
    if ext is not None:
        ext.ntt_lde(array.reshape(-1), out.reshape(-1), columns=cols, blowup=blowup, shift=shift, threads=threads,
                    backend=backend)
        return out
    from . import ntt_model as m

    source, target = array.reshape(rows, cols), out.reshape(rows * blowup, cols)
    for c in range(cols):
        target[:, c] = np.array(m.lde([int(x) for x in source[:, c]], blowup, shift), dtype=np.uint64)
    return out
