//! Timing of double-precision `rootn` against CORE-MATH `pow` (what `pow(x, 1/n)`, not
//! correctly rounded, costs) and against the previous rootn (pow with a first-order
//! correction, up to 1.04 ulp; kept here as `previous_rootn`): ns per call for random finite positive x and several n, and how
//! often each phase of rootn decides (`ferrocl_mathlib::rootn::deciding_phase`), in release
//! mode: `cargo run --release -p ferrocl-mathlib --example rootn_bench`.

use ferrocl_mathlib::core_math_dispatch::{log2, pow};
use ferrocl_mathlib::rootn::{deciding_phase, Phase};
use ferrocl_mathlib::shapes::f64::rootn;
use std::hint::black_box;
use std::time::Instant;

/// xorshift64*: reproducible pseudo-random bits.
fn next(state: &mut u64) -> u64 {
    *state ^= *state >> 12;
    *state ^= *state << 25;
    *state ^= *state >> 27;
    state.wrapping_mul(0x2545_f491_4f6c_dd1d)
}

/// The rootn this crate had before the correctly rounded one (positive x, |n| >= 4 here).
fn previous_rootn(a: f64, n: i32) -> f64 {
    let nf = f64::from(n);
    let inv = 1.0 / nf;
    let residual = (-nf).mul_add(inv, 1.0);
    let y = pow(a, inv);
    let t = log2(a) * residual / nf;
    y.mul_add(t * std::f64::consts::LN_2, y)
}

fn main() {
    let mut state = 0x1234_5678_9abc_def1u64;
    // Positive finite doubles, uniform in the bit pattern (so over all exponents).
    let xs: Vec<f64> = (0..1 << 16)
        .map(|_| loop {
            let x = f64::from_bits(next(&mut state) >> 1);
            if x.is_finite() && x != 0.0 {
                break x;
            }
        })
        .collect();
    // The machine may be busy: each figure is the best of several timed rounds.
    let rounds = 8;
    let calls = xs.len() as f64;
    let time = |f: &dyn Fn(f64) -> f64| {
        (0..rounds)
            .map(|_| {
                let start = Instant::now();
                let mut sum = 0.0;
                for &x in &xs {
                    sum += f(black_box(x));
                }
                black_box(sum);
                start.elapsed().as_nanos() as f64 / calls
            })
            .fold(f64::INFINITY, f64::min)
    };
    for n in [-3, 4, 5, 7, -7, 10, 100, 12345, i32::MAX] {
        let inv = 1.0 / f64::from(n);
        let root_ns = time(&|x| rootn(x, black_box(n)));
        let previous_ns = time(&|x| previous_rootn(x, black_box(n)));
        let pow_ns = time(&|x| pow(x, black_box(inv)));
        println!(
            "n = {n:>11}: rootn {root_ns:5.1} ns/call, previous rootn {previous_ns:5.1}, \
             pow(x, 1/n) {pow_ns:5.1}"
        );
    }
    // Phase counts over random x (all exponents) and random n, |n| >= 3; the inputs that
    // reach the midpoint phase are kept to time it.
    let (mut total, mut counts) = (0u64, [0u64; 4]);
    let mut middle_inputs = Vec::new();
    for i in 0..4_000_000u64 {
        let x = f64::from_bits(next(&mut state) >> 1);
        let r = next(&mut state);
        let n = match i % 3 {
            0 => (r % 30) as i32 - 15,
            1 => r as i32,
            _ => (r % 2001) as i32 - 1000,
        };
        if !x.is_finite() || x == 0.0 || n.unsigned_abs() < 3 {
            continue;
        }
        total += 1;
        let slot = match deciding_phase(x, n) {
            Phase::Shortcut => 0,
            Phase::Fast => 1,
            Phase::Middle => {
                middle_inputs.push((x, n));
                2
            }
            Phase::Exact => 3,
        };
        counts[slot] += 1;
    }
    let pct = |c: u64| 100.0 * c as f64 / total as f64;
    println!(
        "{total} random inputs: shortcut {} ({:.3} %), fast phase {} ({:.3} %), midpoint phase {} \
         ({:.3} %), exact phase {} ({:.4} %)",
        counts[0],
        pct(counts[0]),
        counts[1],
        pct(counts[1]),
        counts[2],
        pct(counts[2]),
        counts[3],
        pct(counts[3])
    );
    let per_call = |inputs: &[(f64, i32)], reps: usize| {
        let start = Instant::now();
        let mut sum = 0.0;
        for _ in 0..reps {
            for &(x, n) in inputs {
                sum += rootn(black_box(x), black_box(n));
            }
        }
        black_box(sum);
        start.elapsed().as_nanos() as f64 / (inputs.len() * reps) as f64
    };
    println!(
        "inputs decided by the midpoint phase: {:.0} ns/call",
        per_call(&middle_inputs, 10)
    );
    // Midpoints m = 1 + 2^-53 with x = RN(m^n) = 1 + n·2^-53: the root is within
    // (n - 1)/2·2^-106 of m, too close for the midpoint phase.
    for n in [4, 100] {
        let x = 1.0 + f64::from(n) * f64::EPSILON / 2.0;
        println!(
            "rootn(1 + {n}·2^-53, {n}), decided by {:?}: {:.0} ns/call",
            deciding_phase(x, n),
            per_call(&[(x, n)], 200)
        );
    }
}
