//! Number theoretic transforms over Goldilocks (p = 2^64 - 2^32 + 1), after seed 003's 4-step design.
//!
//! **Convention.** The forward transform of n = 2^k points evaluates at the powers of w_n in natural
//! order, `out[k] = sum_j in[j] * w_n^(j*k)`, w_n = [`modforge_goldilocks::root_of_unity`]`(k)` (Plonky3's
//! `TWO_ADIC_GENERATORS[k]`, the ZPrize table).  The inverse is its exact inverse, 1/n included.  The
//! ZPrize reference transform (bit reversal + DIT with that table, unscaled) *is* the forward transform.
//! A batch is a row-major matrix of `columns` columns: row i holds element i of every column, and each
//! column is transformed.
//!
//! **Structure.** Every size from 2^6 up runs the 4-step decomposition n = n1 * n2 (j = n2 j1 + j2,
//! k = k1 + n1 k2) in two passes over memory:
//!
//! 1. column transforms of size n1, done on strips of adjacent columns copied into a cache-sized block
//!    (the butterflies of a strip work on whole rows of the block, so every lane of a vector does useful
//!    work without a shuffle), written back in place;
//! 2. for a group of rows k1, a cache-sized block of n2 x (rows x columns) is gathered, multiplied by the
//!    twiddles w_n^(j2 k1) (and 1/n for the inverse), transformed along j2, and written to the output at
//!    k1 + n1 k2: the transpose of the 4-step is done by this write, as the seed's design does it by the
//!    order of its memory accesses.
//!
//! The sub-transforms are radix-2 decimation in frequency, natural order in and bit-reversed out; the
//! bit reversal costs nothing since each block row is written to its place.  Strips and row groups are
//! spread over a rayon pool of the requested size; twiddle tables are made once per size and cached.
//!
//! ```
//! use modforge_ntt::{transform, Options};
//! let mut a = vec![1u64, 2, 3, 4, 0, 0, 0, 0];
//! transform(&mut a, &Options::default()).unwrap();                       // forward
//! assert_eq!(a[0], 10);                                                    // sum of the coefficients
//! transform(&mut a, &Options { inverse: true, ..Options::default() }).unwrap();
//! assert_eq!(a, vec![1, 2, 3, 4, 0, 0, 0, 0]);
//! ```

#![deny(unsafe_op_in_unsafe_fn)]

mod kernels;
mod plan;

use modforge_goldilocks::{scalar, Backend, P, TWO_ADICITY};

pub use plan::{cached_plan, cached_plan_split, split_log_n2, Plan};

/// The order of a sequence of points: natural (index i) or bit-reversed (index bitrev(i)).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Order {
    #[default]
    Natural,
    BitReversed,
}

/// What to compute.  `Default` is the forward transform of one column, natural orders, no coset, every
/// thread of rayon's global pool, the fastest backend.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Options {
    /// The inverse transform (w_n^-1, times 1/n) instead of the forward one.
    pub inverse: bool,
    /// Columns of the row-major batch (at least 1).
    pub columns: usize,
    /// Order of the input rows.
    pub input_order: Order,
    /// Order of the output rows.
    pub output_order: Order,
    /// Evaluate on the coset shift * <w_n> (forward: input scaled by shift^j first; inverse: output scaled
    /// by shift^-j after, so that the two stay inverses).
    pub coset_shift: Option<u64>,
    /// Threads (0: rayon's global pool).
    pub threads: usize,
    /// Instruction set (None: [`Backend::detect`]).
    pub backend: Option<Backend>,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            inverse: false,
            columns: 1,
            input_order: Order::Natural,
            output_order: Order::Natural,
            coset_shift: None,
            threads: 0,
            backend: None,
        }
    }
}

/// Why a transform was refused.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum NttError {
    /// The number of rows is not a power of two in 1..=2^32.
    BadLength(usize),
    /// `columns` is 0 or does not divide the data.
    BadColumns { len: usize, columns: usize },
    /// An element is not canonical (>= p); its index.
    NotCanonical(usize),
    /// The coset shift is 0 or not canonical.
    BadShift(u64),
    /// The backend is not supported by this CPU.
    Unsupported(&'static str),
    /// The LDE blow-up is not a power of two >= 1.
    BadBlowup(usize),
    /// Input and output lengths differ.
    LengthMismatch { input: usize, output: usize },
}

impl std::fmt::Display for NttError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            NttError::BadLength(n) => write!(f, "the number of points must be a power of two from 1 to 2^{TWO_ADICITY}, got {n}"),
            NttError::BadColumns { len, columns } => write!(f, "{len} elements do not make rows of {columns} columns"),
            NttError::NotCanonical(i) => write!(f, "element {i} is not a canonical field element (>= p)"),
            NttError::BadShift(s) => write!(f, "the coset shift must be a nonzero canonical element, got {s:#x}"),
            NttError::Unsupported(b) => write!(f, "backend {b} is not supported by this CPU"),
            NttError::BadBlowup(b) => write!(f, "the blow-up must be a power of two, got {b}"),
            NttError::LengthMismatch { input, output } => write!(f, "input has {input} elements, output {output}"),
        }
    }
}

impl std::error::Error for NttError {}

/// Rows of a batch of `len` elements in `columns` columns, checked; returns log2(rows).
pub fn check_shape(len: usize, columns: usize) -> Result<u32, NttError> {
    if columns == 0 || len % columns != 0 {
        return Err(NttError::BadColumns { len, columns });
    }
    let rows = len / columns;
    if rows == 0 || !rows.is_power_of_two() || rows.trailing_zeros() > TWO_ADICITY {
        return Err(NttError::BadLength(rows));
    }
    Ok(rows.trailing_zeros())
}

/// The index of the first element >= p, if any.  (Chunks, so that the compare of a chunk vectorises.)
pub fn first_not_canonical(data: &[u64]) -> Option<usize> {
    const CHUNK: usize = 1024;
    data.chunks(CHUNK)
        .position(|chunk| chunk.iter().fold(false, |any, &x| any | (x >= P)))
        .and_then(|c| data[c * CHUNK..].iter().position(|&x| x >= P).map(|i| c * CHUNK + i))
}

/// Transform `data` in place.  The middle of the transform goes through a scratch buffer of the same
/// size, kept per calling thread between calls (like the twiddle tables) so that repeated transforms
/// neither allocate nor fault pages in.  On an error `data` is left as it was.
pub fn transform(data: &mut [u64], options: &Options) -> Result<(), NttError> {
    thread_local! {
        static SCRATCH: std::cell::RefCell<Vec<u64>> = const { std::cell::RefCell::new(Vec::new()) };
    }
    let backend = check_options(data, options)?;
    // With the input in natural order, pass 1 checks the elements as it reads them, before anything is
    // written to `data` (a separate scan would be a serial pass over memory); a bit-reversed input is
    // permuted in place first, so it is checked here.
    let check_in_pass_1 = options.input_order == Order::Natural;
    if !check_in_pass_1 {
        check_canonical(data)?;
    }
    let len = data.len();
    let complete = SCRATCH.with(|cell| {
        let mut scratch = cell.borrow_mut();
        // The scratch starts on a page boundary (the allocator's large blocks start 16 bytes past one),
        // so that pass 1's rows of 16 lanes are two whole cache lines, not parts of three.
        const SLACK: usize = PAGE_BYTES / 8;
        if scratch.len() < len + SLACK {
            *scratch = zeroed_on_huge_pages(len + SLACK);
        }
        let skip = scratch.as_ptr().align_offset(PAGE_BYTES);
        let (d, s) = (SendPtr(data.as_mut_ptr()), SendPtr(scratch[skip..skip + len].as_mut_ptr()));
        execute(options, len, d, d, move |log_n, shift| {
            // SAFETY: `data` and the scratch are distinct live buffers of `len` elements, used only here.
            let buffers = unsafe {
                kernels::Buffers::InPlace {
                    data: std::slice::from_raw_parts_mut(d.get(), len),
                    scratch: std::slice::from_raw_parts_mut(s.get(), len),
                }
            };
            kernels::run(log_n, options.inverse, backend, buffers, options.columns, shift, check_in_pass_1)
        })
    });
    if !complete {
        check_canonical(data)?;
        unreachable!("pass 1 saw an element >= p that the scan does not find");
    }
    Ok(())
}

/// Transform `input` into `output` (same length); `input` is used as scratch and left unspecified.
pub fn transform_into(input: &mut [u64], output: &mut [u64], options: &Options) -> Result<(), NttError> {
    if input.len() != output.len() {
        return Err(NttError::LengthMismatch { input: input.len(), output: output.len() });
    }
    let backend = check_options(input, options)?;
    check_canonical(input)?;
    let len = input.len();
    let (i, o) = (SendPtr(input.as_mut_ptr()), SendPtr(output.as_mut_ptr()));
    execute(options, len, i, o, move |log_n, shift| {
        // SAFETY: `input` and `output` are distinct live buffers of `len` elements, used only here.
        let buffers = unsafe {
            kernels::Buffers::Into {
                input: std::slice::from_raw_parts_mut(i.get(), len),
                output: std::slice::from_raw_parts_mut(o.get(), len),
            }
        };
        kernels::run(log_n, options.inverse, backend, buffers, options.columns, shift, false)
    });
    Ok(())
}

const PAGE_BYTES: usize = 4096;

fn check_canonical(data: &[u64]) -> Result<(), NttError> {
    first_not_canonical(data).map_or(Ok(()), |i| Err(NttError::NotCanonical(i)))
}

/// The checks of the options every entry point makes (the elements are checked apart); the backend to use.
fn check_options(data: &[u64], options: &Options) -> Result<Backend, NttError> {
    check_shape(data.len(), options.columns)?;
    if let Some(s) = options.coset_shift {
        if s == 0 || s >= P {
            return Err(NttError::BadShift(s));
        }
    }
    let backend = options.backend.unwrap_or_else(Backend::detect);
    if !backend.supported() {
        return Err(NttError::Unsupported(backend.name()));
    }
    Ok(backend)
}

/// Orders, coset scaling and the thread pool around the core transform `core(log_n, input_shift)`,
/// which reads `first` and leaves its result in `result` (both views of the caller's buffers, passed
/// again here only for the order permutations, done before and after `core` runs).  False, with nothing
/// done after it, when `core` returns false (it found an element that is not canonical).
fn execute(options: &Options, len: usize, first: SendPtr, result: SendPtr,
           core: impl FnOnce(u32, Option<u64>) -> bool + Send) -> bool {
    let columns = options.columns;
    let log_n = (len / columns).trailing_zeros();
    with_pool(options.threads, move || {
        let (first, result) = (first, result);
        if options.input_order == Order::BitReversed {
            // SAFETY: the caller's input buffer of `len` elements; `core` has not started.
            bit_reverse_rows_in_place(unsafe { std::slice::from_raw_parts_mut(first.get(), len) }, columns);
        }
        // The forward coset scales the input by shift^j; pass 1 folds it into its gather.
        if !core(log_n, if options.inverse { None } else { options.coset_shift }) {
            return false;
        }
        // SAFETY: the caller's output buffer of `len` elements; `core` has returned.
        let out = unsafe { std::slice::from_raw_parts_mut(result.get(), len) };
        if options.inverse {
            if let Some(s) = options.coset_shift {
                scale_rows_by_powers(out, columns, scalar::inverse(s));
            }
        }
        if options.output_order == Order::BitReversed {
            bit_reverse_rows_in_place(out, columns);
        }
        true
    })
}

/// A zeroed vector whose pages are asked to be 2 MiB ones (Linux transparent huge pages, where the
/// system allows them on request): both passes touch rows far apart, one TLB miss per row with 4 KiB
/// pages; measured 5-10% less CPU time at 2^24 on Zen 3 with the scratch and the data on huge pages.
/// (NumPy asks the same for its large arrays.)
fn zeroed_on_huge_pages(len: usize) -> Vec<u64> {
    let mut v = Vec::with_capacity(len);
    hugepage_hint(v.as_mut_ptr(), len);
    v.resize(len, 0);
    v
}

/// Ask the kernel for 2 MiB pages over the 2 MiB-aligned interior of a buffer of `len` u64 at `ptr`
/// (effective for pages not yet touched; a hint, nothing changes where it is refused).
pub fn hugepage_hint(ptr: *mut u64, len: usize) {
    #[cfg(target_os = "linux")]
    {
        extern "C" {
            fn madvise(addr: *mut std::ffi::c_void, len: usize, advice: i32) -> i32;
        }
        const MADV_HUGEPAGE: i32 = 14;
        const HUGE: usize = 2 << 20;
        let start = (ptr as usize).next_multiple_of(HUGE);
        let end = (ptr as usize + len * 8) / HUGE * HUGE;
        if end > start {
            // SAFETY: a hint over pages inside the caller's allocation; failure changes nothing.
            unsafe { madvise(start as *mut std::ffi::c_void, end - start, MADV_HUGEPAGE) };
        }
    }
}

#[derive(Clone, Copy)]
struct SendPtr(*mut u64);
// SAFETY: used only to carry the caller's exclusive buffers into the pool's thread for one call.
unsafe impl Send for SendPtr {}

impl SendPtr {
    /// The pointer (a method, so that closures capture the `Send` wrapper, not its field).
    fn get(self) -> *mut u64 {
        self.0
    }
}

/// Low-degree extension of a batch: from evaluations on <w_n> (natural order, row-major, `columns`
/// columns) to evaluations on shift * <w_(n * blowup)>, natural order, of the interpolating polynomials.
pub fn lde(evaluations: &[u64], columns: usize, blowup: usize, shift: u64, threads: usize, backend: Option<Backend>)
    -> Result<Vec<u64>, NttError> {
    check_shape(evaluations.len(), columns)?;
    if blowup == 0 || !blowup.is_power_of_two() {
        return Err(NttError::BadBlowup(blowup));
    }
    let n = evaluations.len() / columns;
    check_shape(n * blowup * columns, columns)?;
    let mut scratch = zeroed_on_huge_pages(evaluations.len());
    scratch.copy_from_slice(evaluations);
    let mut coefficients = zeroed_on_huge_pages(n * blowup * columns);
    let options = Options { inverse: true, columns, threads, backend, ..Options::default() };
    transform_into(&mut scratch, &mut coefficients[..n * columns], &options)?;
    let mut output = zeroed_on_huge_pages(coefficients.len());
    let options = Options { coset_shift: Some(shift), ..options };
    transform_into(&mut coefficients, &mut output, &Options { inverse: false, ..options })?;
    Ok(output)
}

/// Run `f` on a rayon pool of `threads` threads (0: the global pool); pools are made once per size.
fn with_pool<R: Send>(threads: usize, f: impl FnOnce() -> R + Send) -> R {
    use std::collections::HashMap;
    use std::sync::{Arc, Mutex, OnceLock};
    static POOLS: OnceLock<Mutex<HashMap<usize, Arc<rayon::ThreadPool>>>> = OnceLock::new();
    if threads == 0 {
        return f();
    }
    let pool = {
        let mut pools = POOLS.get_or_init(Default::default).lock().unwrap_or_else(|e| e.into_inner());
        pools
            .entry(threads)
            .or_insert_with(|| Arc::new(rayon::ThreadPoolBuilder::new().num_threads(threads).build().expect("thread pool")))
            .clone()
    };
    pool.install(f)
}

/// Row i and row bitrev(i) swapped for every i (an involution).
fn bit_reverse_rows_in_place(data: &mut [u64], columns: usize) {
    let rows = data.len() / columns;
    let bits = rows.trailing_zeros();
    if bits == 0 {
        return;
    }
    for i in 0..rows {
        let r = i.reverse_bits() >> (usize::BITS - bits);
        if i < r {
            for c in 0..columns {
                data.swap(i * columns + c, r * columns + c);
            }
        }
    }
}

/// Row i of `data` times x^i.
fn scale_rows_by_powers(data: &mut [u64], columns: usize, x: u64) {
    use rayon::prelude::*;
    const CHUNK_ROWS: usize = 1 << 12;
    data.par_chunks_mut(CHUNK_ROWS * columns).enumerate().for_each(|(c, chunk)| {
        let mut factor = scalar::pow(x, (c * CHUNK_ROWS) as u64);
        for row in chunk.chunks_mut(columns) {
            for v in row.iter_mut() {
                *v = scalar::mul(*v, factor);
            }
            factor = scalar::mul(factor, x);
        }
    });
}

#[cfg(test)]
mod tests;
