//! Fq (377 bits, 6 words) and Fr (253 bits, 4 words) in Montgomery form.
//!
//! Each field is declared by its modulus alone; R = 2^(64N) mod m, R^2 mod m and -m^-1 mod 2^64 are
//! derived at compile time (`arith::pow2_mod`, `arith::neg_inv64`).  The moduli are the polynomials
//! of the BLS12 seed x = 0x8508c00000000001 (q = (x-1)^2 (x^4-x^2+1)/3 + x, r = x^4-x^2+1): the tests
//! recompute them from x.

use crate::arith;

macro_rules! mont_field {
    ($name:ident, $n:literal, $hex:literal, $doc:literal) => {
        #[doc = $doc]
        #[derive(Clone, Copy, PartialEq, Eq, Hash, Default)]
        pub struct $name(pub [u64; $n]);

        impl $name {
            pub const WORDS: usize = $n;
            pub const MODULUS: [u64; $n] = arith::words_from_hex::<$n>($hex);
            pub const INV: u64 = arith::neg_inv64(Self::MODULUS[0]);
            pub const R: [u64; $n] = arith::pow2_mod::<$n>(64 * $n, &Self::MODULUS);
            pub const R2: [u64; $n] = arith::pow2_mod::<$n>(128 * $n, &Self::MODULUS);
            pub const ZERO: Self = Self([0; $n]);
            pub const ONE: Self = Self(Self::R);
            // the carry-free CIOS product needs the top bit of the modulus clear
            const _TOP_BIT_CLEAR: () = assert!(Self::MODULUS[$n - 1] < (1u64 << 63) - 1);

            /// The element whose integer value is `words` (little-endian), or None if not below m.
            pub const fn from_canonical(words: [u64; $n]) -> Option<Self> {
                let () = Self::_TOP_BIT_CLEAR;
                if arith::geq(&words, &Self::MODULUS) {
                    None
                } else {
                    Some(Self(arith::mont_mul_portable(&words, &Self::R2, &Self::MODULUS, Self::INV)))
                }
            }

            /// Parse a big-endian hex constant (compile time); panics if it is not below m.
            pub const fn from_hex(s: &str) -> Self {
                match Self::from_canonical(arith::words_from_hex::<$n>(s)) {
                    Some(v) => v,
                    None => panic!("constant not below the modulus"),
                }
            }

            pub const fn from_u64(v: u64) -> Self {
                let mut w = [0u64; $n];
                w[0] = v;
                match Self::from_canonical(w) {
                    Some(x) => x,
                    None => panic!("unreachable"),
                }
            }

            /// The integer value, little-endian words.
            pub fn to_canonical(&self) -> [u64; $n] {
                let mut one = [0u64; $n];
                one[0] = 1;
                arith::mont_mul(&self.0, &one, &Self::MODULUS, Self::INV)
            }

            #[inline(always)]
            pub fn mul(&self, other: &Self) -> Self {
                Self(arith::mont_mul(&self.0, &other.0, &Self::MODULUS, Self::INV))
            }

            #[inline(always)]
            pub fn square(&self) -> Self {
                self.mul(self)
            }

            #[inline(always)]
            pub fn add(&self, other: &Self) -> Self {
                Self(arith::add_mod(&self.0, &other.0, &Self::MODULUS))
            }

            #[inline(always)]
            pub fn sub(&self, other: &Self) -> Self {
                Self(arith::sub_mod(&self.0, &other.0, &Self::MODULUS))
            }

            #[inline(always)]
            pub fn double(&self) -> Self {
                self.add(self)
            }

            #[inline(always)]
            pub fn neg(&self) -> Self {
                Self::ZERO.sub(self)
            }

            #[inline(always)]
            pub fn is_zero(&self) -> bool {
                self.0 == [0u64; $n]
            }

            /// self^e for an exponent given as little-endian words (variable time in e).
            pub fn pow(&self, e: &[u64]) -> Self {
                let mut acc = Self::ONE;
                for w in e.iter().rev() {
                    for bit in (0..64).rev() {
                        acc = acc.square();
                        if (w >> bit) & 1 == 1 {
                            acc = acc.mul(self);
                        }
                    }
                }
                acc
            }

            /// self^-1 by Fermat (self^(m-2)); zero maps to zero.
            pub fn inverse(&self) -> Self {
                let mut e = Self::MODULUS;
                e[0] -= 2; // m is odd and > 2: no borrow
                self.pow(&e)
            }
        }

        impl core::fmt::Debug for $name {
            fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
                write!(f, "0x")?;
                for w in self.to_canonical().iter().rev() {
                    write!(f, "{:016x}", w)?;
                }
                Ok(())
            }
        }
    };
}

mont_field!(
    Fq,
    6,
    "0x01ae3a4617c510eac63b05c06ca1493b1a22d9f300f5138f1ef3622fba094800170b5d44300000008508c00000000001",
    "The BLS12-377 base field: coordinates of G1 points."
);
mont_field!(
    Fr,
    4,
    "0x12ab655e9a2ca55660b44d1e5c37b00159aa76fed00000010a11800000000001",
    "The BLS12-377 scalar field: the order r of G1."
);

/// The BLS12 seed x (positive for BLS12-377).
pub const BLS_X: u64 = 0x8508c00000000001;
