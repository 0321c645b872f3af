//! Limb arithmetic generic over the number of 64-bit words, and the one dispatch point for the
//! Montgomery product.
//!
//! The product is word-serial CIOS without the extra carry word: valid because both BLS12-377
//! moduli leave the top bit of their top word clear (q < 2^377, r < 2^253), so the running sum fits
//! in N words (checked by a `const` assertion where the fields are declared).  The routines are
//! `const fn` (while loops) so that R, R^2 and -m^-1 are derived at compile time from the modulus.

#[inline(always)]
pub const fn mac(acc: u64, a: u64, b: u64, carry: u64) -> (u64, u64) {
    let t = acc as u128 + (a as u128) * (b as u128) + carry as u128;
    (t as u64, (t >> 64) as u64)
}

#[inline(always)]
pub const fn adc(a: u64, b: u64, carry: u64) -> (u64, u64) {
    let t = a as u128 + b as u128 + carry as u128;
    (t as u64, (t >> 64) as u64)
}

#[inline(always)]
pub const fn sbb(a: u64, b: u64, borrow: u64) -> (u64, u64) {
    let t = (a as u128).wrapping_sub(b as u128 + borrow as u128);
    (t as u64, (t >> 127) as u64)
}

/// a >= b as N-word little-endian integers.
#[inline(always)]
pub const fn geq<const N: usize>(a: &[u64; N], b: &[u64; N]) -> bool {
    let mut i = N;
    while i > 0 {
        i -= 1;
        if a[i] != b[i] {
            return a[i] > b[i];
        }
    }
    true
}

/// a - b, and the borrow out.
#[inline(always)]
pub const fn sub_words<const N: usize>(a: &[u64; N], b: &[u64; N]) -> ([u64; N], u64) {
    let mut out = [0u64; N];
    let mut borrow = 0;
    let mut i = 0;
    while i < N {
        let (d, bo) = sbb(a[i], b[i], borrow);
        out[i] = d;
        borrow = bo;
        i += 1;
    }
    (out, borrow)
}

#[inline(always)]
pub const fn add_words<const N: usize>(a: &[u64; N], b: &[u64; N]) -> ([u64; N], u64) {
    let mut out = [0u64; N];
    let mut carry = 0;
    let mut i = 0;
    while i < N {
        let (s, c) = adc(a[i], b[i], carry);
        out[i] = s;
        carry = c;
        i += 1;
    }
    (out, carry)
}

/// (a + b) mod m for a, b < m < 2^(64N - 1).  Branch-free: the choice between a + b and a + b - m
/// is a mask, since it is a coin flip that a branch predictor would miss half the time.
#[inline(always)]
pub const fn add_mod<const N: usize>(a: &[u64; N], b: &[u64; N], m: &[u64; N]) -> [u64; N] {
    let (s, _) = add_words(a, b);
    let (d, borrow) = sub_words(&s, m);
    let keep_sum = 0u64.wrapping_sub(borrow); // all ones when a + b < m
    let mut out = [0u64; N];
    let mut i = 0;
    while i < N {
        out[i] = (s[i] & keep_sum) | (d[i] & !keep_sum);
        i += 1;
    }
    out
}

/// (a - b) mod m for a, b < m; branch-free (adds m masked by the borrow).
#[inline(always)]
pub const fn sub_mod<const N: usize>(a: &[u64; N], b: &[u64; N], m: &[u64; N]) -> [u64; N] {
    let (d, borrow) = sub_words(a, b);
    let mask = 0u64.wrapping_sub(borrow);
    let mut masked = [0u64; N];
    let mut i = 0;
    while i < N {
        masked[i] = m[i] & mask;
        i += 1;
    }
    add_words(&d, &masked).0
}

/// -m^-1 mod 2^64 by Newton's iteration (each step doubles the correct low bits).
pub const fn neg_inv64(m0: u64) -> u64 {
    let mut inv: u64 = 1;
    let mut i = 0;
    while i < 6 {
        inv = inv.wrapping_mul(2u64.wrapping_sub(m0.wrapping_mul(inv)));
        i += 1;
    }
    inv.wrapping_neg()
}

/// 2^k mod m by k modular doublings (compile-time derivation of R and R^2).
pub const fn pow2_mod<const N: usize>(k: usize, m: &[u64; N]) -> [u64; N] {
    let mut r = [0u64; N];
    r[0] = 1;
    let mut i = 0;
    while i < k {
        r = add_mod(&r, &r, m);
        i += 1;
    }
    r
}

/// Parse a big-endian hex string (optional 0x, no separators) into N little-endian words.
pub const fn words_from_hex<const N: usize>(s: &str) -> [u64; N] {
    let bytes = s.as_bytes();
    let mut start = 0;
    if bytes.len() >= 2 && bytes[0] == b'0' && (bytes[1] == b'x' || bytes[1] == b'X') {
        start = 2;
    }
    let mut out = [0u64; N];
    let mut i = bytes.len();
    let mut nibble = 0;
    while i > start {
        i -= 1;
        let c = bytes[i];
        let v = match c {
            b'0'..=b'9' => c - b'0',
            b'a'..=b'f' => c - b'a' + 10,
            b'A'..=b'F' => c - b'A' + 10,
            _ => panic!("not a hex digit"),
        } as u64;
        assert!(nibble < 16 * N, "hex constant too long");
        out[nibble / 16] |= v << (4 * (nibble % 16));
        nibble += 1;
    }
    out
}

/// Montgomery product a b 2^(-64N) mod m, the portable twin (u128 multiply-accumulate).
#[inline(always)]
pub const fn mont_mul_portable<const N: usize>(a: &[u64; N], b: &[u64; N], m: &[u64; N], inv: u64) -> [u64; N] {
    let mut t = [0u64; N];
    let mut i = 0;
    while i < N {
        let (lo, mut carry_a) = mac(t[0], a[0], b[i], 0);
        let k = lo.wrapping_mul(inv);
        let (_, mut carry_m) = mac(lo, k, m[0], 0);
        let mut j = 1;
        while j < N {
            let (s, ca) = mac(t[j], a[j], b[i], carry_a);
            carry_a = ca;
            let (s2, cm) = mac(s, k, m[j], carry_m);
            carry_m = cm;
            t[j - 1] = s2;
            j += 1;
        }
        t[N - 1] = carry_a.wrapping_add(carry_m);
        i += 1;
    }
    let (d, borrow) = sub_words(&t, m);
    let keep_t = 0u64.wrapping_sub(borrow);
    let mut out = [0u64; N];
    let mut k = 0;
    while k < N {
        out[k] = (t[k] & keep_t) | (d[k] & !keep_t);
        k += 1;
    }
    out
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    use std::sync::atomic::{AtomicU8, Ordering};

    static ADX: AtomicU8 = AtomicU8::new(0); // 0 unknown, 1 no, 2 yes

    #[inline(always)]
    pub fn has_adx() -> bool {
        match ADX.load(Ordering::Relaxed) {
            2 => true,
            1 => false,
            _ => {
                let yes = std::is_x86_feature_detected!("adx") && std::is_x86_feature_detected!("bmi2");
                let forced_off = std::env::var_os("MODFORGE_MSM_PORTABLE").is_some();
                let on = yes && !forced_off;
                ADX.store(if on { 2 } else { 1 }, Ordering::Relaxed);
                on
            }
        }
    }
}

/// Whether the MULX/ADX kernels run on this CPU (the dispatch decision, made once).
pub fn uses_adx() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        x86::has_adx()
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

/// The dispatch point: the MULX/ADX kernel for 6-word moduli when the CPU has it, else the twin.
#[inline(always)]
pub fn mont_mul<const N: usize>(a: &[u64; N], b: &[u64; N], m: &[u64; N], inv: u64) -> [u64; N] {
    #[cfg(target_arch = "x86_64")]
    if N == 6 && x86::has_adx() {
        // SAFETY: N == 6, so the casts reinterpret arrays of the same length; the CPU has ADX and BMI2.
        unsafe {
            let a6 = &*(a as *const [u64; N] as *const [u64; 6]);
            let b6 = &*(b as *const [u64; N] as *const [u64; 6]);
            let m6 = &*(m as *const [u64; N] as *const [u64; 6]);
            let r = crate::adx::mont_mul6(a6, b6, m6, inv);
            return *(&r as *const [u64; 6] as *const [u64; N]);
        }
    }
    mont_mul_portable(a, b, m, inv)
}
