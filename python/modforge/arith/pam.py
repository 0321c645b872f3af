"""The DEC PAM modular product unit as a command-driven machine, bit for bit and cycle for cycle.

Seed ``004_1834f7117338b08e.txt`` (Shand, Bertin, Vuillemin):

* Sec. 4.3, recurrence (1): ``P_{i+1} = (P_i + b_i A + q_i M) / 2`` with
  ``q_i = (P_i + b_i A) mod 2``, one bit ``b_i`` of ``B`` per cycle, so that after
  ``I`` steps ``P = (A B + Q M) / 2^I`` (Montgomery with ``beta = 2^I``).
* Sec. 3.1: no comparison with the modulus and no final subtraction; results stay
  redundant (below ``2M`` when ``beta >= 4M``) and are fed back as they are.
* Sec. 3.4: the state is carry-save (``P = S + C``); "a three-way addition on each
  cycle" (``P + b A + q M``) is here two rows of 3:2 full adders (``P`` itself being two
  vectors), and at the end of each product the pair is reduced to binary by a carry
  completion: rows of half adders until the carry vector is zero, detected by the
  carry-completion detector ("in the average case just a few cycles suffice").
* Fig. 4, the host interface: the host writes ``B`` 32 bits at a time into the top of a
  shift register (``WriteB``), ``Square`` and ``MultB`` leave the product in ``A`` and in
  the output register ``S``, and ``ReadP`` returns the word prepared by the previous
  access (``MemData <- P``, ``P <- S mod 2^32``, ``S <- S / 2^32``) so that a read never
  waits.

Where this unit departs from the seed (and why):

* The modulus is a register written by the host (``WriteM``, like ``WriteB``), not
  compiled into the datapath's logic equations (Sec. 3.4: one PAM design per RSA factor,
  30 minutes each in 1990): a Verilator build per key would take minutes; one build per
  width serves every modulus.
* ``A <- B`` is its own command (``CopyBA``); the seed folds it into ``WriteB`` with an
  ``align`` flag that fixes a misalignment of its pipelined output buffer, which this
  unit does not have (its recurrence is not pipelined, so ``beta = 2^(n + extra_bits)``
  with ``extra_bits = 2`` rather than the seed's 6 redundant bits, ``beta = 2^260`` for
  254-bit factors).
* No ``B^3`` register and ``MultB^3`` (the seed's 20 % speed-up of exponentiation).

Timing (every figure below from :class:`PamParams`): a command is accepted on the rising
edge where ``cmd_valid`` and ``cmd_ready`` are 1, and takes that one edge, except ``MultB``
and ``Square``: the edge that accepts one loads the multiplier bits and clears ``S, C``; the
unit is then busy for ``busy = 1 + I + carry_rows`` edges after it (``I`` recurrence steps,
the data-dependent half-adder rows, and the edge on which the detector sees ``C = 0`` and
writes the result to ``A``, ``S`` and the prepared read word).  The stream is pipelined as
the seed's host/PAM interface (Sec. 4.1, 5): ``WriteB`` is taken while a product runs (the
multiplier bits were copied at its start, so B is free), which lets the host load the next
operand during the product; every other command waits for it.  Results are the same
whether a ``WriteB`` overlaps a product or not, so :meth:`PamUnit.run` executes commands in
order and a ``WriteB``'s busy is 0 either way.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import IntEnum

from .base import ParameterError, require_int

SEED = "004_1834f7117338b08e"
WORD_BITS = 32          # the PAM's host bus word (Sec. 1.3: one 32-bit VME transfer per access)


class Cmd(IntEnum):
    """Command codes of the command stream (``cmd_op``)."""

    WRITE_M = 1
    WRITE_B = 2
    COPY_BA = 3
    MULT_B = 4
    SQUARE = 5
    READ_P = 6


@dataclass(frozen=True)
class PamParams:
    """``bits``: the widest modulus the unit takes; ``extra_bits``: ``beta = 2^(bits + extra_bits)``."""

    bits: int
    extra_bits: int = 2

    def __post_init__(self) -> None:
        require_int("bits", self.bits)
        require_int("extra_bits", self.extra_bits)
        if not 8 <= self.bits <= 4096:
            raise ParameterError("bits", f"must be between 8 and 4096, got {self.bits}")
        if not 2 <= self.extra_bits <= 16:
            # beta >= 4M keeps every result below 2M for operands below 2M (Sec. 3.1's redundancy bound).
            raise ParameterError("extra_bits", f"must be between 2 and 16 (beta >= 4M), got {self.extra_bits}")

    @property
    def iterations(self) -> int:
        """Recurrence steps per product, ``I``; ``beta = 2^I``."""
        return self.bits + self.extra_bits

    @property
    def beta(self) -> int:
        return 1 << self.iterations

    @property
    def state_bits(self) -> int:
        """``S``, ``C`` and ``A``: every ``P_i`` is below ``3M < 2^(bits + 2)``."""
        return self.bits + 2

    @property
    def sum_bits(self) -> int:
        """The full-adder rows before the shift: ``P_i + b A + q M < 6M < 2^(bits + 3)``."""
        return self.bits + 3

    @property
    def words(self) -> int:
        """32-bit words of ``M``, ``B`` and the result (9 at 256 bits, as the seed's host reads back 9)."""
        return -(-self.state_bits // WORD_BITS)

    @property
    def reg_bits(self) -> int:
        return self.words * WORD_BITS

    def product_busy(self, carry_rows: int) -> int:
        return 1 + self.iterations + carry_rows

    @property
    def worst_busy(self) -> int:
        return self.product_busy(self.state_bits)


def csa(x: int, y: int, z: int, width: int) -> tuple[int, int]:
    """One row of full adders: the sum vector and the carry vector (shifted), both ``width`` bits."""
    mask = (1 << width) - 1
    return (x ^ y ^ z) & mask, (((x & y) | (x & z) | (y & z)) << 1) & mask


@dataclass(frozen=True)
class Product:
    value: int          # P, settled
    quotient: int       # Q, the bits q_i
    carry_rows: int     # half-adder rows the carry completion took
    busy: int           # edges with cmd_ready = 0 after the accept edge


def product(p: PamParams, a: int, b: int, m: int) -> Product:
    """One ``MultB`` (``b`` = register B) or ``Square`` (``b`` = A): registers exactly as the RTL holds them."""
    sw, w = p.state_bits, p.sum_bits
    smask = (1 << sw) - 1
    a &= smask
    m &= (1 << p.reg_bits) - 1
    s = c = q_all = 0
    for i in range(p.iterations):
        bi = (b >> i) & 1
        s1, c1 = csa(s, c, a if bi else 0, w)
        qi = s1 & 1                           # c1 is even: the parity of P_i + b_i A is s1's low bit
        s2, c2 = csa(s1, c1, m if qi else 0, w)
        s, c = (s2 >> 1) & smask, (c2 >> 1) & smask
        q_all |= qi << i
    rows = 0
    while c:                                  # the carry-completion detector: stop when C = 0
        s, c = s ^ c, ((s & c) << 1) & smask
        rows += 1
    return Product(s, q_all, rows, p.product_busy(rows))


@dataclass
class PamUnit:
    """The unit's registers; :meth:`run` executes one command and returns (busy edges, word read or None)."""

    params: PamParams
    m: int = 0
    b: int = 0
    a: int = 0
    s: int = 0          # the output shift register (upper words of the last result)
    p_word: int = 0     # the word the next ReadP returns
    products: list[Product] = field(default_factory=list)

    def run(self, op: int, data: int = 0) -> tuple[int, int | None]:
        p = self.params
        top = p.reg_bits - WORD_BITS
        wmask = (1 << WORD_BITS) - 1
        if op == Cmd.WRITE_M:
            self.m = (self.m >> WORD_BITS) | ((data & wmask) << top)
        elif op == Cmd.WRITE_B:
            self.b = (self.b >> WORD_BITS) | ((data & wmask) << top)
        elif op == Cmd.COPY_BA:
            self.a = self.b & ((1 << p.state_bits) - 1)
        elif op in (Cmd.MULT_B, Cmd.SQUARE):
            res = product(p, self.a, self.b if op == Cmd.MULT_B else self.a, self.m)
            self.products.append(res)
            self.a = res.value
            self.p_word, self.s = res.value & wmask, res.value >> WORD_BITS
            return res.busy, None
        elif op == Cmd.READ_P:
            word = self.p_word
            self.p_word, self.s = self.s & wmask, self.s >> WORD_BITS
            return 0, word
        else:
            raise ParameterError("op", f"unknown command code {op}")
        return 0, None


def words_of(value: int, count: int) -> list[int]:
    """``value`` as ``count`` 32-bit words, least significant first (the order WriteM/WriteB shift them in)."""
    return [(value >> (WORD_BITS * i)) & ((1 << WORD_BITS) - 1) for i in range(count)]


__all__ = ["SEED", "WORD_BITS", "Cmd", "PamParams", "PamUnit", "Product", "product", "csa", "words_of"]
