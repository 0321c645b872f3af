//! Quick timing of the engine for development: `ntt_time LOG_N COLUMNS THREADS REPS [BACKEND]` prints
//! the median and minimum milliseconds of the in-place `transform` (input copies outside the timed region).
//! The benchmark of record is `modforge bench ntt`.

use std::time::Instant;

use modforge_goldilocks::{Backend, P};
use modforge_ntt::{transform, Options};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let log_n: u32 = args[1].parse().unwrap();
    let columns: usize = args[2].parse().unwrap();
    let threads: usize = args[3].parse().unwrap();
    let reps: usize = args[4].parse().unwrap();
    let backend = args.get(5).map(|b| Backend::from_name(b).expect("backend"));
    let len = columns << log_n;
    let mut state = 1u64;
    let data: Vec<u64> = (0..len)
        .map(|_| {
            state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            state % P
        })
        .collect();
    let options = Options { columns, threads, backend, ..Options::default() };
    // On huge pages where the system allows them, as NumPy puts large arrays.
    let mut input: Vec<u64> = Vec::with_capacity(len);
    modforge_ntt::hugepage_hint(input.as_mut_ptr(), len);
    input.extend_from_slice(&data);
    transform(&mut input, &options).unwrap();
    let mut times = Vec::new();
    let mut cpu = Vec::new();
    for _ in 0..reps {
        input.copy_from_slice(&data);
        let (start, cpu_start) = (Instant::now(), process_cpu_ns());
        transform(&mut input, &options).unwrap();
        times.push(start.elapsed().as_secs_f64() * 1e3);
        cpu.push((process_cpu_ns() - cpu_start) as f64 / 1e6);
    }
    times.sort_by(|a, b| a.partial_cmp(b).unwrap());
    cpu.sort_by(|a, b| a.partial_cmp(b).unwrap());
    println!("2^{log_n} x{columns} t={threads}: median {:.2} ms, min {:.2} ms; CPU median {:.2} ms, min {:.2} ms",
             times[times.len() / 2], times[0], cpu[cpu.len() / 2], cpu[0]);
}

/// CPU time of every thread of this process (`CLOCK_PROCESS_CPUTIME_ID`, ns): unaffected by time the
/// machine gave to other processes, which makes comparisons on a shared machine steadier.
fn process_cpu_ns() -> u64 {
    #[repr(C)]
    struct Timespec {
        tv_sec: i64,
        tv_nsec: i64,
    }
    extern "C" {
        fn clock_gettime(clock: i32, tp: *mut Timespec) -> i32;
    }
    let mut ts = Timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: a valid out-pointer for the C library's clock_gettime; 2 is CLOCK_PROCESS_CPUTIME_ID on Linux.
    if unsafe { clock_gettime(2, &mut ts) } != 0 {
        return 0;
    }
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}
