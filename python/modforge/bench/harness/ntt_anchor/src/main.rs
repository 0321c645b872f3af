//! The NTT benchmark's outside anchors, run one at a time:
//!
//!     modforge-ntt-anchor IMPL LOG_N COLUMNS REPS SEED
//!
//! IMPL is `p3-smallbatch` (p3-dft `Radix2DFTSmallBatch`), `p3-ditparallel` (`Radix2DitParallel`),
//! `plonky2` (plonky2_field's `fft`, one column) or `winterfell` (winter-math's `evaluate_poly`, one column).
//! Threads come from rayon's global pool (RAYON_NUM_THREADS).  The input is row-major, element
//! `row * COLUMNS + col` being the splitmix64 stream from SEED reduced mod p, so that modforge regenerates
//! it exactly.  Prints one JSON line: the times of each repetition in nanoseconds (the transform only:
//! input copies and twiddle tables are made outside the timed region, as each library's own users would
//! reuse them), the process CPU time of each (all threads; steadier than wall-clock time on a shared
//! machine), the root of unity of order 2^LOG_N the library evaluates at, and 64 sampled output values
//! in natural order, for modforge to cross-check.

use std::time::Instant;

const P: u64 = 0xffff_ffff_0000_0001;
const SAMPLES: usize = 64;

fn splitmix64(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

fn input(n: usize, columns: usize, seed: u64) -> Vec<u64> {
    let mut state = seed;
    (0..n * columns).map(|_| splitmix64(&mut state) % P).collect()
}

/// (row, column) of sample k: a fixed odd-multiplier walk over the rows.
fn sample_positions(n: usize, columns: usize) -> Vec<(usize, usize)> {
    (0..SAMPLES).map(|k| (((k as u64).wrapping_mul(2_654_435_761) as usize) & (n - 1), k % columns)).collect()
}

struct Run {
    times_ns: Vec<u128>,
    cpu_ns: Vec<u64>,
    root: u64,
    output: Vec<u64>, // row-major, natural order
}

/// CPU time of every thread of this process (`CLOCK_PROCESS_CPUTIME_ID`, ns): on a shared machine it
/// does not count the time other processes had the cores, which wall-clock time does.
fn process_cpu_ns() -> u64 {
    #[repr(C)]
    struct Timespec {
        tv_sec: i64,
        tv_nsec: i64,
    }
    extern "C" {
        fn clock_gettime(clock: i32, tp: *mut Timespec) -> i32;
    }
    const CLOCK_PROCESS_CPUTIME_ID: i32 = 2; // Linux
    let mut ts = Timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: a valid out-pointer for the C library's clock_gettime.
    if unsafe { clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &mut ts) } != 0 {
        return 0;
    }
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

fn time_reps<T, S: FnMut() -> T, R: FnMut(T) -> T>(reps: usize, mut setup: S, mut run: R) -> (Vec<u128>, Vec<u64>, T) {
    let mut times = Vec::with_capacity(reps);
    let mut cpu = Vec::with_capacity(reps);
    let mut last = None;
    for _ in 0..reps {
        let data = setup();
        let (start, cpu_start) = (Instant::now(), process_cpu_ns());
        let out = run(data);
        times.push(start.elapsed().as_nanos());
        cpu.push(process_cpu_ns().saturating_sub(cpu_start));
        last = Some(out);
    }
    (times, cpu, last.expect("at least one repetition"))
}

fn plonky3(which: &str, log_n: usize, columns: usize, reps: usize, data: &[u64]) -> Run {
    use p3_dft::{Radix2DFTSmallBatch, Radix2DitParallel, TwoAdicSubgroupDft};
    use p3_field::{PrimeField64, TwoAdicField};
    use p3_goldilocks::Goldilocks;
    use p3_matrix::dense::RowMajorMatrix;
    use p3_matrix::Matrix;

    let values: Vec<Goldilocks> = data.iter().map(|&v| Goldilocks::new(v)).collect();
    let root = Goldilocks::two_adic_generator(log_n).as_canonical_u64();
    fn go<D: TwoAdicSubgroupDft<Goldilocks>>(dft: D, values: &[Goldilocks], columns: usize, reps: usize)
        -> (Vec<u128>, Vec<u64>, RowMajorMatrix<Goldilocks>) {
        // One untimed call builds and caches the twiddles.
        let _ = dft.dft_batch(RowMajorMatrix::new(values.to_vec(), columns));
        let (times, cpu, evals) = time_reps(
            reps,
            || Some(RowMajorMatrix::new(values.to_vec(), columns)),
            |m| m.map(|m| dft.dft_batch(m).to_row_major_matrix()),
        );
        (times, cpu, evals.expect("output"))
    }
    let (times_ns, cpu_ns, out) = match which {
        "p3-smallbatch" => go(Radix2DFTSmallBatch::<Goldilocks>::new(1 << log_n), &values, columns, reps),
        _ => go(Radix2DitParallel::<Goldilocks>::default(), &values, columns, reps),
    };
    let _ = out.height();
    Run { times_ns, cpu_ns, root, output: out.values.iter().map(|v| v.as_canonical_u64()).collect() }
}

#[cfg(feature = "plonky2")]
fn plonky2(log_n: usize, reps: usize, data: &[u64]) -> Run {
    use plonky2_field::fft::{fft_root_table, fft_with_options};
    use plonky2_field::goldilocks_field::GoldilocksField;
    use plonky2_field::polynomial::PolynomialCoeffs;
    use plonky2_field::types::{Field, PrimeField64};

    let coeffs: Vec<GoldilocksField> = data.iter().map(|&v| GoldilocksField::from_canonical_u64(v)).collect();
    let table = fft_root_table::<GoldilocksField>(1 << log_n);
    let root = GoldilocksField::primitive_root_of_unity(log_n).to_canonical_u64();
    let (times_ns, cpu_ns, out) = time_reps(
        reps,
        || Some(PolynomialCoeffs::new(coeffs.clone())),
        |c| c.map(|c| PolynomialCoeffs::new(fft_with_options(c, None, Some(&table)).values)),
    );
    Run { times_ns, cpu_ns, root, output: out.expect("output").coeffs.iter().map(|v| v.to_canonical_u64()).collect() }
}

#[cfg(feature = "winterfell")]
fn winterfell(log_n: usize, reps: usize, data: &[u64]) -> Run {
    use winter_math::fields::f64::BaseElement;
    use winter_math::{fft, StarkField};

    let coeffs: Vec<BaseElement> = data.iter().map(|&v| BaseElement::new(v)).collect();
    let twiddles = fft::get_twiddles::<BaseElement>(1 << log_n);
    let root = BaseElement::get_root_of_unity(log_n as u32).as_int();
    let (times_ns, cpu_ns, out) = time_reps(reps, || coeffs.clone(), |mut c| {
        fft::evaluate_poly(&mut c, &twiddles);
        c
    });
    Run { times_ns, cpu_ns, root, output: out.iter().map(|v| v.as_int()).collect() }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() != 6 {
        eprintln!("usage: {} IMPL LOG_N COLUMNS REPS SEED", args[0]);
        std::process::exit(2);
    }
    let which = args[1].as_str();
    let log_n: usize = args[2].parse().expect("LOG_N");
    let columns: usize = args[3].parse().expect("COLUMNS");
    let reps: usize = args[4].parse().expect("REPS");
    let seed: u64 = args[5].parse().expect("SEED");
    let n = 1usize << log_n;
    if (which == "plonky2" || which == "winterfell") && columns != 1 {
        eprintln!("{which} transforms one column");
        std::process::exit(3);
    }
    let data = input(n, columns, seed);
    let run = match which {
        "p3-smallbatch" | "p3-ditparallel" => plonky3(which, log_n, columns, reps, &data),
        #[cfg(feature = "plonky2")]
        "plonky2" => plonky2(log_n, reps, &data),
        #[cfg(feature = "winterfell")]
        "winterfell" => winterfell(log_n, reps, &data),
        _ => {
            eprintln!("unknown or not built: {which}");
            std::process::exit(3);
        }
    };
    let samples: Vec<String> = sample_positions(n, columns)
        .into_iter()
        .map(|(r, c)| format!("[{r},{c},\"{:#x}\"]", run.output[r * columns + c]))
        .collect();
    let times: Vec<String> = run.times_ns.iter().map(|t| t.to_string()).collect();
    let cpu: Vec<String> = run.cpu_ns.iter().map(|t| t.to_string()).collect();
    println!(
        "{{\"impl\":\"{which}\",\"log_n\":{log_n},\"columns\":{columns},\"threads\":{},\"root\":\"{:#x}\",\"times_ns\":[{}],\"cpu_ns\":[{}],\"samples\":[{}]}}",
        rayon::current_num_threads(),
        run.root,
        times.join(","),
        cpu.join(","),
        samples.join(",")
    );
}
