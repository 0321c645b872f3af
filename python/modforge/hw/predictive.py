# amaranth: UnusedElaboratable=no
"""The predictive redundant Montgomery squarer of the VDF competition (seed 000).

One multi-mode multiplier array and one register per pass; a squaring takes three cycles::

    SQ  (cycle 1)  t = A*A        W(W+1)/2 products, cross terms doubled     -> T register
    LO  (cycle 2)  q = T0*P'      products with i+j <= W-1, digits 0..W-1    -> Q register
    UP  (cycle 3)  Z = upper(Q*P) products with i+j >= W-x, + T1 + [T0 != 0] -> A register (the loop)

The array has ``max`` of the three product counts (2272 DSPs at 1024 bits).  Each DSP's
operands are multiplexed by the mode; each column's compressor tree has as many inputs as
the tallest mode needs there, and every input slot is an AND-OR of the pieces the modes put
into it, so the tree is shared.  The boundary digits (``t[W-1]``, ``q[W-1]`` and the top guard
digit of the upper pass) are compared with the thresholds of
:meth:`modforge.arith.predictive.PredictiveParams.thresholds`; one at or above its threshold
sends the squaring down the fallback instead of writing A.

Fallback (the rare path, off the loop's critical path): word-serial Montgomery reduction of
the exact T through the same array, one row of DSPs ``m_i * P`` per step::

    FBL  acc <- T (2W+1 column registers)
    FBM  m_i = (acc[0] * P'[0]) mod 2^d                 one DSP
    FBR  acc <- (acc + m_i * P) >> d (by columns)         W DSPs, short column adders
         ... W times (FBM, FBR) ...
    FBC  carry propagation, one column per cycle, W+1 cycles -> canonical digits of Z -> A

``m = sum m_i 2^(d i)`` is exactly ``(T * P') mod R``, so Z = (T + m P)/R is the model's
``_exact`` bit for bit.  Latency: 3 cycles, or ``p + 3W + 2`` when the check of pass ``p``
(1, 2, 3) fires.  ``out_flags`` gives the reason (0 none, 1 square_split, 2 lower_split,
3 upper_guard) with each result.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Any

from amaranth.hdl import Cat, Const, Elaboratable, Module, Mux, Signal

from ..arith.base import ParameterError
from ..arith.predictive import PredictiveMontgomery, PredictiveParams
from .common import (DELAY_PS, Layer, Namer, Op, Stager, compress_columns, const_op, cpa_delay, fit, or_reduce,
                     pack, pieces, require_range, split_digit, tree_levels, unpack)

ARCH = "predictive-montgomery"

# Array modes (also FSM states where they coincide).
SQ, LO, UP, FBM, FBR = 1, 2, 3, 4, 5
IDLE, FBL, FBC = 0, 6, 7
REASONS = ("square_split", "lower_split", "upper_guard")


@dataclass(frozen=True)
class PredictiveDesign:
    modulus: int
    bits: int | None = None
    word_bits: int = 16
    redundant_bits: int = 1
    extra_words: int = 1
    guard_words: int = 3
    dsp_bits: int = 17

    arch = ARCH

    def __post_init__(self) -> None:
        require_range("dsp_bits", self.dsp_bits, 2, 64)
        self.model_params
        if self.digit_bits > self.dsp_bits:
            # Name the parameter that pushed the digit past the tile: the redundant bits when they are not 1.
            name = "redundant_bits" if self.redundant_bits > 1 else "word_bits"
            raise ParameterError(name, f"digits of {self.word_bits} + {self.redundant_bits} = {self.digit_bits} bits "
                                       f"do not fit the {self.dsp_bits}-bit DSP tile; the multi-mode array uses one "
                                       f"DSP per digit product (a wider --dsp-bits, or fewer bits)")

    @cached_property
    def model_params(self) -> PredictiveParams:
        return PredictiveParams(modulus=self.modulus, bits=self.bits, word_bits=self.word_bits,
                                redundant_bits=self.redundant_bits, extra_words=self.extra_words,
                                guard_words=self.guard_words)

    def model(self) -> PredictiveMontgomery:
        return PredictiveMontgomery(self.model_params)

    @property
    def design_bits(self) -> int:
        return self.model_params.design_bits

    @property
    def words(self) -> int:
        return self.model_params.words

    @property
    def out_words(self) -> int:
        return self.words

    @property
    def digit_bits(self) -> int:
        return self.word_bits + self.redundant_bits

    # -- the array ------------------------------------------------------------------------------
    def mode_pairs(self) -> dict[int, list[tuple[int, int]]]:
        w, x = self.words, self.guard_words
        return {SQ: [(i, j) for i in range(w) for j in range(i, w)],
                LO: [(i, j) for i in range(w) for j in range(w) if i + j <= w - 1],
                UP: [(i, j) for i in range(w) for j in range(w) if i + j >= w - x]}

    def array_size(self) -> int:
        return max(max(len(v) for v in self.mode_pairs().values()), self.words)

    def slot_heights(self) -> list[int]:
        """Compressor inputs per column: the tallest mode there (UP adds T1 and the carry)."""
        w = self.words
        ncols = 2 * w + 1
        best = [0] * ncols
        for mode, pairs in self.mode_pairs().items():
            h = [0] * ncols
            for i, j in pairs:
                for s in range(3):
                    c = i + j + s
                    if c < ncols and (mode != LO or c < w):
                        h[c] += 1
            if mode == UP:
                for mm in range(w + 1):
                    h[w + mm] += 1
                h[w] += 1
            best = [max(a, b) for a, b in zip(best, h)]
        return best

    def acc_bits(self) -> int:
        """Width of a fallback accumulator column: worst case over the W reduction steps."""
        d, w = self.word_bits, self.words
        word = (1 << d) - 1
        cols = [(1 << self.digit_bits) - 1] * (2 * w + 1)
        worst = max(cols)
        for _ in range(w):
            carry = (cols[0] + word) >> d
            new = [cols[c + 1] + 2 * word if c + 1 < len(cols) else 0 for c in range(len(cols))]
            new[0] += carry
            cols = new
            worst = max(worst, max(cols), cols[0] + word)
        return worst.bit_length()

    # -- timing -----------------------------------------------------------------------------------
    def latency(self, flags: int = 0) -> int:
        """Rising edges from the operand to its square: 3, or ``p + 3W + 2`` after a fallback at pass p."""
        if flags == 0:
            return 3
        return flags + 3 * self.words + 2

    def fallback_latencies(self) -> dict[str, int]:
        return {r: self.latency(i + 1) for i, r in enumerate(REASONS)}

    def cycles_per_op(self) -> int:
        return 3

    def layers(self) -> list[Layer]:
        d = self.word_bits
        lv = tree_levels(max(self.slot_heights()))
        return ([Layer("operand_mux", DELAY_PS["mux"] * 2), Layer("dsp", DELAY_PS["dsp"]),
                 Layer("mode_slots", DELAY_PS["mux"])]
                + [Layer(f"tree{i + 1}", DELAY_PS["csa"]) for i in range(lv)]
                + [Layer("cpa", cpa_delay(d + lv + 3)), Layer("split", DELAY_PS["split"]),
                   Layer("check", DELAY_PS["compare"])])

    def depth_estimate_ps(self) -> int:
        return sum(layer.delay_ps for layer in self.layers())

    def resources(self) -> dict[str, Any]:
        pairs = self.mode_pairs()
        return {
            "dsp": self.array_size(),
            "dsp_tile": f"{self.dsp_bits}x{self.dsp_bits}",
            "mode_products": {"square": len(pairs[SQ]), "lower": len(pairs[LO]), "upper": len(pairs[UP]),
                              "fallback_row": self.words},
            "tree_height": max(self.slot_heights()),
            "tree_levels": tree_levels(max(self.slot_heights())),
            "thresholds": self.model_params.thresholds(),
            "fallback_latency": self.fallback_latencies(),
            "fallback_acc_bits": self.acc_bits(),
            "state_bits": self.words * self.digit_bits,
            "pass_register_bits": (3 * self.words + 1) * self.digit_bits,
            "depth_estimate_ps": self.depth_estimate_ps(),
        }

    def describe(self) -> str:
        return (f"{self.design_bits}-bit predictive Montgomery squarer: W = {self.words} digits of "
                f"{self.word_bits}+{self.redundant_bits} bits, {self.array_size()}-DSP multi-mode array, "
                f"3 cycles per squaring ({self.latency(1)}..{self.latency(3)} on a fallback)")

    def build(self) -> "PredictiveSquarer":
        return PredictiveSquarer(self)


class PredictiveSquarer(Elaboratable):
    def __init__(self, p: PredictiveDesign):
        self.p = p
        W, D = p.words, p.digit_bits
        self.in_valid = Signal(name="in_valid")
        self.in_ready = Signal(name="in_ready")
        self.in_count = Signal(32, name="in_count")
        self.in_x = Signal(W * D, name="in_x")
        self.out_valid = Signal(name="out_valid")
        self.out_z = Signal(W * D, name="out_z")
        self.out_flags = Signal(2, name="out_flags")

    def ports(self) -> list[Signal]:
        return [self.in_valid, self.in_ready, self.in_count, self.in_x, self.out_valid, self.out_z, self.out_flags]

    def elaborate(self, platform) -> Module:
        p = self.p
        mp = p.model_params
        m = Module()
        nm = Namer(m)
        self.namer = nm                       # read by modforge.hw.tiles after elaboration
        W, D, d = p.words, p.digit_bits, p.word_bits
        r = p.redundant_bits
        dmax = (1 << D) - 1
        wmask = (1 << d) - 1
        thr = mp.thresholds()
        WA = p.acc_bits()

        # ---- control ------------------------------------------------------------------------
        state = Signal(3, name="fsm")
        busy = Signal(name="busy")
        left = Signal(32, name="left")
        start = Signal(name="start")
        m.d.comb += [start.eq(self.in_valid & (state == IDLE)), self.in_ready.eq(state == IDLE)]
        mode = Signal(3, name="mode")
        m.d.comb += mode.eq(Mux(start, SQ, state))
        flag_sq = Signal(name="flag_sq")
        flag_lo = Signal(name="flag_lo")
        reason = Signal(2, name="reason")

        # ---- registers ------------------------------------------------------------------------
        areg = Signal(W * D, name="areg", reset_less=True)
        treg = [Signal(D, name=f"treg{i}", reset_less=True) for i in range(2 * W + 1)]
        qreg = [Signal(D, name=f"qreg{i}", reset_less=True) for i in range(W)]
        acc = [Signal(WA, name=f"acc{i}", reset_less=True) for i in range(2 * W + 1)]
        mreg = Signal(d, name="m_i", reset_less=True)
        fbz = [Signal(d, name=f"fbz{i}", reset_less=True) for i in range(W)]
        fb_i = Signal(range(W + 1), name="fb_step")
        fb_carry = Signal(WA, name="fb_carry", reset_less=True)
        m.d.comb += self.out_z.eq(areg)

        a_bus = Signal(W * D, name="a_bus")
        m.d.comb += a_bus.eq(Mux(state == IDLE, self.in_x, areg))
        a_dig = [Op(v, dmax) for v in unpack(a_bus, D, W)]
        t_ops = [Op(v, dmax) for v in treg]
        q_ops = [Op(v, dmax) for v in qreg]
        p_dig = [const_op(v) for v in mp.rbr.to_digits(self.p.modulus)]
        pp_dig = [const_op(v) for v in mp.rbr.to_digits(mp.p_prime)]
        p0_inv = const_op(mp.p_prime & wmask)
        acc0_lo = Op(acc[0][:d], wmask)
        m_op = Op(mreg, wmask)

        # ---- the multi-mode array ----------------------------------------------------------------
        # Per mode: DSP k computes a * b; diag/doubled say where its pieces go (None: not a column product).
        pairs = p.mode_pairs()
        jobs: dict[int, list[tuple[Op, Op, int | None, bool]]] = {
            SQ: [(a_dig[i], a_dig[j], i + j, i != j) for i, j in pairs[SQ]],
            LO: [(t_ops[i], pp_dig[j], i + j, False) for i, j in pairs[LO]],
            UP: [(q_ops[i], p_dig[j], i + j, False) for i, j in pairs[UP]],
            FBR: [(m_op, p_dig[j], None, False) for j in range(W)],
            FBM: [(acc0_lo, p0_inv, None, False)],
        }
        is_mode = {md: Signal(name=f"mode_is_{md}") for md in jobs}
        for md, s in is_mode.items():
            m.d.comb += s.eq(mode == md)
        n_dsp = p.array_size()
        products: list[Op] = []
        for k in range(n_dsp):
            users = [(md, lst[k]) for md, lst in jobs.items() if k < len(lst)]
            amax = max(u[1][0].max for u in users)
            bmax = max(u[1][1].max for u in users)
            aw, bw = max(amax.bit_length(), 1), max(bmax.bit_length(), 1)
            if aw > p.dsp_bits or bw > p.dsp_bits:
                raise AssertionError("operand wider than the DSP tile")
            a_val = Const(0, aw)
            b_val = Const(0, bw)
            for md, (a, b, _, _) in users:
                a_val = a_val | Mux(is_mode[md], fit(a.value, aw), 0)
                b_val = b_val | Mux(is_mode[md], fit(b.value, bw), 0)
            sa = nm.sig(f"dsp{k}_a", a_val, aw)
            sb = nm.sig(f"dsp{k}_b", b_val, bw)
            pmax = max(u[1][0].max * u[1][1].max for u in users)
            products.append(Op(nm.sig(f"dsp{k}_p", sa * sb, max(pmax.bit_length(), 1)), pmax))

        # Column slots: per column, per mode, the pieces that land there; slot s ORs the modes' s-th piece.
        ncols = 2 * W + 1
        per_mode: dict[int, list[list[Op]]] = {md: [[] for _ in range(ncols)] for md in (SQ, LO, UP)}
        for md in (SQ, LO, UP):
            for k, (a, b, diag, dbl) in enumerate(jobs[md]):
                pr = products[k]
                prmax = a.max * b.max
                if dbl:
                    pr = Op(Cat(Const(0, 1), pr.value), prmax << 1)
                else:
                    pr = Op(pr.value, prmax)
                for s, piece in enumerate(pieces(pr, d)):
                    c = diag + s
                    if piece.max and c < ncols and (md != LO or c < W):
                        per_mode[md][c].append(piece)
        carry_in = Signal(name="t0_nonzero")
        m.d.comb += carry_in.eq(or_reduce([t != 0 for t in treg[:W]]))
        for mm in range(W + 1):
            per_mode[UP][W + mm].append(t_ops[W + mm])
        per_mode[UP][W].append(Op(carry_in, 1))
        columns: list[list[Op]] = []
        for c in range(ncols):
            height = max(len(per_mode[md][c]) for md in per_mode)
            slots = []
            for s in range(height):
                users = [(md, per_mode[md][c][s]) for md in per_mode if s < len(per_mode[md][c])]
                smax = max(u[1].max for u in users)
                sw = max(smax.bit_length(), 1)
                val = Const(0, sw)
                for md, piece in users:
                    val = val | Mux(is_mode[md], fit(piece.value, sw), 0)
                slots.append(Op(nm.sig(f"slot{c}_{s}", val, sw), smax))
            columns.append(slots)
        st = Stager(m, ())
        sums, _ = compress_columns(nm, st, columns, "tree", tree_levels(max(p.slot_heights())))
        dig = [split_digit(nm, sums[c], sums[c - 1] if c else None, d, f"dig{c}", mask_low=(c < ncols - 1))
               for c in range(ncols)]

        # ---- pass results and checks ----------------------------------------------------------
        check_sq = Signal(name="check_sq")
        check_lo = Signal(name="check_lo")
        check_up = Signal(name="check_up")
        m.d.comb += [check_sq.eq(dig[W - 1].value >= thr["square_split"]),
                     check_lo.eq(dig[W - 1].value >= thr["lower_split"]),
                     check_up.eq(dig[W - 1].value >= thr["upper_guard"])]
        z_bus = pack([fit(dig[W + i].value, D) for i in range(W)], D)

        # Fallback datapath: a reduction step (FBR) and a carry step (FBC).
        lo_p = [fit(products[j].value, 2 * d)[:d] for j in range(W)]
        hi_p = [fit(products[j].value, 2 * d)[d:2 * d] for j in range(W)]
        low0 = Signal(WA + 1, name="fb_low0")
        m.d.comb += low0.eq(acc[0] + lo_p[0])
        step = []
        for c in range(2 * W + 1):
            terms = []
            if c + 1 <= 2 * W:
                terms.append(acc[c + 1])
            if c + 1 < W:
                terms.append(lo_p[c + 1])
            if c < W:
                terms.append(hi_p[c])
            if c == 0:
                terms.append(low0[d:])
            total = terms[0] if terms else Const(0, 1)
            for tm in terms[1:]:
                total = total + tm
            step.append(nm.sig(f"fb_next{c}", total, WA))
        fb_v = Signal(WA + 1, name="fb_v")
        m.d.comb += fb_v.eq(acc[0] + fb_carry)

        remaining = Signal(32, name="remaining")
        m.d.comb += remaining.eq(Mux(start, Mux(self.in_count == 0, 1, self.in_count), left))

        def finish(result_bus, why: int):
            m.d.sync += [areg.eq(result_bus), self.out_valid.eq(1), self.out_flags.eq(why),
                         left.eq(remaining - 1)]
            with m.If(remaining == 1):
                m.d.sync += [state.eq(IDLE), busy.eq(0)]
            with m.Else():
                m.d.sync += state.eq(SQ)

        def enter_fallback(why: int):
            m.d.sync += [reason.eq(why), state.eq(FBM), fb_i.eq(0)]
            m.d.sync += [acc[i].eq(treg[i]) for i in range(2 * W + 1)]

        m.d.sync += self.out_valid.eq(0)
        in_state = {code: Signal(name=f"in_state_{code}") for code in range(8)}
        for code, sig in in_state.items():
            m.d.comb += sig.eq(state == code)
        with m.If(in_state[IDLE]):
            with m.If(start):
                m.d.sync += [treg[i].eq(fit(dig[i].value, D)) for i in range(2 * W + 1)]
                m.d.sync += [flag_sq.eq(check_sq), state.eq(LO), left.eq(remaining), busy.eq(1)]
        with m.Elif(in_state[SQ]):
            m.d.sync += [treg[i].eq(fit(dig[i].value, D)) for i in range(2 * W + 1)]
            m.d.sync += [flag_sq.eq(check_sq), state.eq(LO)]
        with m.Elif(in_state[LO]):
            with m.If(flag_sq):
                enter_fallback(1)
            with m.Else():
                m.d.sync += [qreg[i].eq(fit(dig[i].value, D)) for i in range(W)]
                m.d.sync += [flag_lo.eq(check_lo), state.eq(UP)]
        with m.Elif(in_state[UP]):
            with m.If(flag_lo):
                enter_fallback(2)
            with m.Elif(check_up):
                m.d.sync += [reason.eq(3), state.eq(FBL)]
            with m.Else():
                finish(z_bus, 0)
        with m.Elif(in_state[FBL]):
            enter_fallback(3)
        with m.Elif(in_state[FBM]):
            m.d.sync += [mreg.eq(products[0].value[:d]), state.eq(FBR)]
        with m.Elif(in_state[FBR]):
            m.d.sync += [acc[c].eq(step[c]) for c in range(2 * W + 1)]
            with m.If(fb_i == W - 1):
                m.d.sync += [state.eq(FBC), fb_i.eq(0), fb_carry.eq(0)]
            with m.Else():
                m.d.sync += [state.eq(FBM), fb_i.eq(fb_i + 1)]
        with m.Elif(in_state[FBC]):
            m.d.sync += [acc[c].eq(acc[c + 1] if c < 2 * W else 0) for c in range(2 * W + 1)]
            m.d.sync += fb_carry.eq(fb_v[d:])
            with m.If(fb_i == W):
                top = Cat(fbz[W - 1], fb_v[:r])
                finish(pack([fbz[i] for i in range(W - 1)] + [top], D), reason)
            with m.Else():
                m.d.sync += [fbz[i].eq(fbz[i + 1]) for i in range(W - 1)]
                m.d.sync += [fbz[W - 1].eq(fb_v[:d]), fb_i.eq(fb_i + 1)]
        with m.Else():                             # no other code is reachable; recover to idle
            m.d.sync += [state.eq(IDLE), busy.eq(0)]
        return m


def design_from_options(modulus: int, bits: int | None, options: dict[str, Any]) -> PredictiveDesign:
    known = {"word_bits", "redundant_bits", "extra_words", "guard_words", "dsp_bits"}
    if "cycles" in options:
        raise ParameterError("cycles", f"{ARCH} takes 3 cycles per squaring by construction (one per pass "
                                       "through the multi-mode array); it has no cycles parameter")
    for key in options:
        if key not in known:
            raise ParameterError(key, f"is not a parameter of {ARCH}; known: {', '.join(sorted(known))}")
    return PredictiveDesign(modulus=modulus, bits=bits, **options)
