//! The engine as a program (for the benchmark and for the Python tests before the binding exists).
//!
//!   modforge-msm-run gen N SEED POINTS SCALARS     write the reproducible instance, raw encoding
//!   modforge-msm-run run POINTS SCALARS THREADS REPEATS [WINDOW]
//!       prints `ms T` per repeat, then `x 0x..`, `y 0x..` (or `infinity`) and the run's statistics
//!   modforge-msm-run precompute POINTS TABLE [WINDOW]   write the fixed-base table of POINTS
//!   modforge-msm-run table TABLE SCALARS THREADS REPEATS
//!       the MSM from a table (loading it is not timed), printed as `run` prints it

use std::process::exit;
use std::time::Instant;

use modforge_msm::instance::{decode_points, decode_scalars, encode_points, encode_scalars, random_instance};
use modforge_msm::{msm_with_stats, reduce_scalar, FixedBaseTable, MsmConfig};
use modforge_bls12_377::G1Jacobian;

fn die(msg: &str) -> ! {
    eprintln!("modforge-msm-run: {msg}");
    exit(2)
}

fn arg<T: std::str::FromStr>(args: &[String], k: usize, what: &str) -> T {
    args.get(k).and_then(|s| s.parse().ok()).unwrap_or_else(|| die(&format!("bad or missing {what}")))
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    match args.get(1).map(String::as_str) {
        Some("gen") => {
            let n: usize = arg(&args, 2, "N");
            let seed: u64 = arg(&args, 3, "SEED");
            let (points, scalars) = random_instance(n, seed);
            // encoded a block at a time, so the files' bytes never sit in memory beside the points
            let write = |path: &String, blocks: &mut dyn Iterator<Item = Vec<u8>>| {
                use std::io::Write;
                let mut f = std::io::BufWriter::new(std::fs::File::create(path).unwrap_or_else(|e| die(&e.to_string())));
                for block in blocks {
                    f.write_all(&block).unwrap_or_else(|e| die(&e.to_string()));
                }
                f.flush().unwrap_or_else(|e| die(&e.to_string()));
            };
            write(&args[4], &mut points.chunks(1 << 16).map(encode_points));
            write(&args[5], &mut scalars.chunks(1 << 16).map(encode_scalars));
        }
        Some("run") => {
            let pts = std::fs::read(&args[2]).unwrap_or_else(|e| die(&e.to_string()));
            let scs = std::fs::read(&args[3]).unwrap_or_else(|e| die(&e.to_string()));
            let points = decode_points(&pts, true).unwrap_or_else(|e| die(&e));
            let scalars: Vec<[u64; 4]> = decode_scalars(&scs).unwrap_or_else(|e| die(&e)).iter().map(reduce_scalar).collect();
            if points.len() != scalars.len() {
                die("as many points as scalars");
            }
            let threads: usize = arg(&args, 4, "THREADS");
            let repeats: usize = arg(&args, 5, "REPEATS");
            let window = args.get(6).map(|s| s.parse().unwrap_or_else(|_| die("bad WINDOW")));
            // MODFORGE_MSM_BATCH: override the batch size (for tuning runs)
            let batch_size = std::env::var("MODFORGE_MSM_BATCH").ok().and_then(|v| v.parse().ok());
            let cfg = MsmConfig { threads, window, batch_size, ..Default::default() };
            let mut last = None;
            for _ in 0..repeats.max(1) {
                let t = Instant::now();
                let cpu = thread_cpu_ns();
                let (r, stats) = msm_with_stats(&points, &scalars, &cfg);
                println!("ms {:.3}", t.elapsed().as_secs_f64() * 1e3);
                print_cpu(cpu);
                last = Some((r, stats));
            }
            let (r, stats) = last.unwrap();
            print_point(&r);
            println!(
                "stats window={} windows={} threads={} batched={} batches={} queued={} fallback={} direct={} adx={}",
                stats.window,
                stats.windows,
                stats.threads,
                stats.batch.batched,
                stats.batch.batches,
                stats.batch.queued,
                stats.batch.fallback,
                stats.batch.direct,
                modforge_bls12_377::arith::uses_adx()
            );
        }
        Some("precompute") => {
            let pts = std::fs::read(args.get(2).unwrap_or_else(|| die("missing POINTS"))).unwrap_or_else(|e| die(&e.to_string()));
            let points = decode_points(&pts, true).unwrap_or_else(|e| die(&e));
            let window = args.get(4).map(|s| s.parse().unwrap_or_else(|_| die("bad WINDOW")));
            let t = Instant::now();
            let table = FixedBaseTable::precompute(&points, window, 0).unwrap_or_else(|e| die(&e));
            println!("precompute_ms {:.3}", t.elapsed().as_secs_f64() * 1e3);
            println!("table window={} windows={} bytes={}", table.window(), table.windows(), table.memory_bytes());
            std::fs::write(args.get(3).unwrap_or_else(|| die("missing TABLE")), table.to_bytes()).unwrap_or_else(|e| die(&e.to_string()));
        }
        Some("table") => {
            let bytes = std::fs::read(&args[2]).unwrap_or_else(|e| die(&e.to_string()));
            let table = FixedBaseTable::from_bytes(&bytes, 0).unwrap_or_else(|e| die(&format!("{}: {e}", args[2])));
            drop(bytes);
            let scs = std::fs::read(&args[3]).unwrap_or_else(|e| die(&e.to_string()));
            let scalars: Vec<[u64; 4]> = decode_scalars(&scs).unwrap_or_else(|e| die(&e)).iter().map(reduce_scalar).collect();
            if table.n() != scalars.len() {
                die("as many scalars as points in the table");
            }
            let threads: usize = arg(&args, 4, "THREADS");
            let repeats: usize = arg(&args, 5, "REPEATS");
            let mut last = G1Jacobian::IDENTITY;
            for _ in 0..repeats.max(1) {
                let t = Instant::now();
                let cpu = thread_cpu_ns();
                last = table.msm(&scalars, threads);
                println!("ms {:.3}", t.elapsed().as_secs_f64() * 1e3);
                print_cpu(cpu);
            }
            print_point(&last);
            println!("stats window={} windows={} table_bytes={}", table.window(), table.windows(), table.memory_bytes());
        }
        _ => die("usage: modforge-msm-run gen N SEED POINTS SCALARS | run POINTS SCALARS THREADS REPEATS [WINDOW] \
                  | precompute POINTS TABLE [WINDOW] | table TABLE SCALARS THREADS REPEATS"),
    }
}

fn print_point(r: &G1Jacobian) {
    let a = r.to_affine();
    if a.infinity {
        println!("infinity");
    } else {
        println!("x {:?}", a.x);
        println!("y {:?}", a.y);
    }
}

/// On-CPU time of the calling thread (Linux schedstat), None elsewhere: with THREADS = 1 the whole
/// MSM runs on this thread, and its CPU time is what a loaded machine disturbs least.
fn thread_cpu_ns() -> Option<u64> {
    std::fs::read_to_string("/proc/thread-self/schedstat").ok()?.split_whitespace().next()?.parse().ok()
}

fn print_cpu(start: Option<u64>) {
    if let (Some(a), Some(b)) = (start, thread_cpu_ns()) {
        println!("thread_cpu_ms {:.3}", (b - a) as f64 / 1e6);
    }
}
