//! Physical limits measured on the host: STREAM-triad bandwidth and FMA throughput, both using
//! every hardware thread, best of several runs (this VM is noisy, the best run is the limit);
//! the command measures them before and after the kernels and keeps the best.

use std::time::Instant;

pub struct Roofline {
    /// STREAM triad bandwidth in bytes/s (3 × 4 bytes per element, no write-allocate counted).
    pub stream_bytes_per_s: f64,
    /// Single-precision FLOP/s with fused multiply-add (2 FLOP each).
    pub fma_flops_per_s: f64,
    pub threads: usize,
    pub fma_kind: &'static str,
}

fn threads() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// Best STREAM-triad rate over `runs` runs on arrays of `n` floats.
pub fn stream_triad(n: usize, runs: usize) -> f64 {
    let t = threads();
    let mut a = vec![0.0f32; n];
    let b = vec![1.0f32; n];
    let c = vec![2.0f32; n];
    let chunk = n.div_ceil(t);
    let mut best = f64::INFINITY;
    for _ in 0..runs {
        let t0 = Instant::now();
        std::thread::scope(|s| {
            for ((a, b), c) in a
                .chunks_mut(chunk)
                .zip(b.chunks(chunk))
                .zip(c.chunks(chunk))
            {
                s.spawn(move || {
                    for ((a, b), c) in a.iter_mut().zip(b).zip(c) {
                        *a = b + 3.0 * c;
                    }
                });
            }
        });
        best = best.min(t0.elapsed().as_secs_f64());
        std::hint::black_box(&mut a);
    }
    (3 * 4 * n) as f64 / best
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn fma_loop_avx2(iters: u64) -> f32 {
    use std::arch::x86_64::*;
    let m = _mm256_set1_ps(0.999_999);
    let add = _mm256_set1_ps(1e-7);
    let mut acc = [_mm256_set1_ps(1.0); 10];
    for _ in 0..iters {
        for a in acc.iter_mut() {
            *a = _mm256_fmadd_ps(*a, m, add);
        }
    }
    let mut s = _mm256_setzero_ps();
    for a in acc {
        s = _mm256_add_ps(s, a);
    }
    let mut out = [0.0f32; 8];
    _mm256_storeu_ps(out.as_mut_ptr(), s);
    out.iter().sum()
}

/// Portable fallback: 10 independent 8-wide multiply-add chains the compiler vectorises.
fn fma_loop_portable(iters: u64) -> f32 {
    let mut acc = [[1.0f32; 8]; 10];
    for _ in 0..iters {
        for a in acc.iter_mut() {
            for v in a.iter_mut() {
                *v = *v * 0.999_999 + 1e-7;
            }
        }
        std::hint::black_box(&mut acc);
    }
    acc.iter().flatten().sum()
}

/// Best FMA throughput over `runs` runs of `iters` iterations per thread.
pub fn fma_peak(iters: u64, runs: usize) -> (f64, &'static str) {
    #[cfg(target_arch = "x86_64")]
    let avx2 = is_x86_feature_detected!("avx2") && is_x86_feature_detected!("fma");
    #[cfg(not(target_arch = "x86_64"))]
    let avx2 = false;
    let t = threads();
    let mut best = f64::INFINITY;
    for _ in 0..runs {
        let t0 = Instant::now();
        std::thread::scope(|s| {
            for _ in 0..t {
                s.spawn(move || {
                    #[cfg(target_arch = "x86_64")]
                    if avx2 {
                        // SAFETY: the CPU supports AVX2 and FMA (checked above).
                        return std::hint::black_box(unsafe { fma_loop_avx2(iters) });
                    }
                    std::hint::black_box(fma_loop_portable(iters))
                });
            }
        });
        best = best.min(t0.elapsed().as_secs_f64());
    }
    let flops = t as f64 * iters as f64 * 10.0 * 8.0 * 2.0;
    (
        flops / best,
        if avx2 { "avx2+fma" } else { "portable mul+add" },
    )
}

pub fn measure(quick: bool) -> Roofline {
    let (n, runs, iters) = if quick {
        (4 << 20, 3, 2_000_000)
    } else {
        (32 << 20, 7, 20_000_000)
    };
    let stream = stream_triad(n, runs);
    let (fma, kind) = fma_peak(iters, runs.min(5));
    Roofline {
        stream_bytes_per_s: stream,
        fma_flops_per_s: fma,
        threads: threads(),
        fma_kind: kind,
    }
}

/// The higher of two measurements of each limit.
pub fn best(a: Roofline, b: Roofline) -> Roofline {
    let fma = if a.fma_flops_per_s >= b.fma_flops_per_s {
        &a
    } else {
        &b
    };
    Roofline {
        stream_bytes_per_s: a.stream_bytes_per_s.max(b.stream_bytes_per_s),
        fma_flops_per_s: fma.fma_flops_per_s,
        threads: a.threads,
        fma_kind: fma.fma_kind,
    }
}
