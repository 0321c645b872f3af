//! BLS12-377 for modforge's MSM: the base field Fq, the scalar field Fr and G1.
//!
//! * [`Fq`] (6 words) and [`Fr`] (4 words) are Montgomery-form elements; each is declared by its
//!   modulus and every other constant is derived at compile time.
//! * The Montgomery product has one dispatch point, [`arith::mont_mul`]: on x86-64 CPUs with BMI2
//!   and ADX the 6-word product runs the MULX/ADCX/ADOX kernel ([`adx`]), elsewhere (or with
//!   `MODFORGE_MSM_PORTABLE` set) the portable twin [`arith::mont_mul_portable`].
//! * [`G1Affine`], [`G1Jacobian`] and [`G1Xyzz`] with the Explicit-Formulas Database formulas for
//!   a = 0; the fast subgroup check [`G1Affine::is_in_subgroup`].
//!
//! The Python model (python/modforge/zk/bls12_377.py) is the reference these are tested against.
//!
//! ```
//! use modforge_bls12_377::{Fq, GENERATOR, G1Jacobian};
//! let g = GENERATOR;
//! assert!(g.is_on_curve() && g.is_in_subgroup());
//! // [2] G computed two ways
//! let twice = G1Jacobian::from(g).double().to_affine();
//! assert_eq!(G1Jacobian::from(g).add_affine(&g).to_affine(), twice);
//! assert_eq!(Fq::from_u64(3).mul(&Fq::from_u64(5)), Fq::from_u64(15));
//! ```

pub mod arith;
#[cfg(target_arch = "x86_64")]
pub mod adx;
pub mod fields;
pub mod g1;

pub use fields::{Fq, Fr, BLS_X};
pub use g1::{G1Affine, G1Jacobian, G1Xyzz, BETA, GENERATOR};

#[cfg(test)]
mod tests;
