//! The scratch layout of the FP64-FMA kernel (`crate::fma`), shared with its
//! code generator (`build/build_fma.rs` includes this file), in 64-bit lanes
//! from the scratch's first lane.  Every region starts on a 32-byte
//! boundary (a multiple of 4 lanes) so that whole vectors load aligned.
//!
//! The kernel runs the radix-2^50 table fold of [`crate::fold`] with the
//! digits of its loop forms (`L = K + 1` of them, 7 to 84) in 4-lane AVX2
//! vectors: `NR = ceil(L / 4)` vectors per value, `NB = ceil(2L / 4)` column
//! blocks per product.

/// Fewest and most digits per loop value (256- and 4096-bit moduli), as in
/// the IFMA kernel.
pub const MIN_L: usize = 7;
pub const MAX_L: usize = 84;
/// Most vectors per value and column blocks per product.
pub const MAX_NR: usize = MAX_L.div_ceil(4);
pub const MAX_NB: usize = (2 * MAX_L).div_ceil(4);

/// Constants, one vector each: `2^104` (the high half's anchor), `2^104 +
/// 2^52` (the low half's), `2^52` (as a double; its bit pattern is also the
/// integer added to a digit to make it that double plus `2^52`), and the
/// digit mask `2^50 - 1`.
pub const C104: usize = 0;
pub const C104_52: usize = 4;
pub const TWO52: usize = 8;
pub const MASK50: usize = 12;
/// One-lane slots: the high half and the carry the next vector of the fold
/// takes in its lane 0; the caller's MXCSR and the kernel's.
pub const LAST_HI: usize = 16;
pub const LAST_CARRY: usize = 17;
pub const MXCSR_SAVED: usize = 18;
pub const MXCSR_KERNEL: usize = 19;
/// The loop form's digits as integers (input and output; `8 ceil(L/8)`
/// lanes are copied in and out, so the region has room for 88).
pub const X: usize = 24;
/// The digits as doubles (the square's broadcasts).
pub const XD: usize = X + 4 * MAX_NR + 4;
/// The doubled digits as doubles, zero past digit `L` (the square's windows
/// reach three lanes past the last digit).
pub const DD: usize = XD + 4 * MAX_NR + 4;
/// A product's second operand as doubles, digit 0 at `YB + 4` (windows
/// reach three lanes below digit 0 and three past the last).
pub const YB: usize = DD + 4 * MAX_NR + 4;
/// The square's windows of `DD` that start between vectors: the four
/// doubled digits from digit `s` at `DDW + 4s` (`s` not a multiple of 4).
/// Stored whole, so that the products load them as stored: a load that
/// spans two earlier stores cannot take their data before it reaches the
/// cache, and would hold every product back until then.
pub const DDW: usize = YB + 4 + 4 * MAX_NR + 8;
/// The windows of the rows of quad `q` (digits `4q .. 4q+3`), at `YQW + 32q +
/// 4o` for `o` = 1-3 and 5-7: lanes `o .. o+3` of the 12 digits `0, 0, 0, 0,
/// x_4q .. x_(4q+3), 2x_(4q+4) .. 2x_(4q+7)` (the quad's pairs undoubled,
/// both orders; lower digits zero; higher digits doubled).  `o = 4` is the
/// quad itself, read from `XD`.
pub const YQW: usize = DDW + 16 * MAX_NR;
/// The columns of the square or product, as integers.
pub const COLS: usize = YQW + 32 * MAX_NR;
/// The fold's row digits `d_r`, as `2^52 + d_r` doubles.
pub const DR: usize = COLS + 4 * MAX_NB + 8;
/// Total lanes.
pub const SCRATCH_LANES: usize = DR + MAX_L + 4;

/// The bit pattern of the double `2^52`.
pub const BITS_TWO52: u64 = 0x4330_0000_0000_0000;
/// The bit pattern of the double `2^104`.
pub const BITS_TWO104: u64 = 0x4670_0000_0000_0000;

const _: () = assert!(
    X % 4 == 0 && XD % 4 == 0 && DD % 4 == 0 && YB % 4 == 0 && DDW % 4 == 0 && YQW % 4 == 0 && COLS % 4 == 0 && DR % 4 == 0
);
