//! Atomics on local memory are plain read-modify-write sequences (a work-group runs on one
//! thread): four work-items in the lanes of a vector would each load before any of them
//! stores, and lose updates. Kernels with them stay scalar, and give what one work-item at a
//! time gives.

mod common;

use common::*;
use ferrocl_codegen::{compile, BuildOptions, Program, Vectorization};

fn build(recipe: Recipe, vectorize: bool) -> Program {
    let spirv = spirv_from_c("vectorize_local_atomics.cl", recipe, common::CL1_2);
    let module = ferrocl_frontend::parse(&spirv).unwrap_or_else(|e| panic!("frontend: {e}"));
    let options = BuildOptions {
        vectorize,
        ..BuildOptions::default()
    };
    compile(&module, &options).unwrap_or_else(|e| panic!("codegen: {e}"))
}

fn words_of(b: &[u8]) -> Vec<u32> {
    b.chunks_exact(4)
        .map(|c| u32::from_ne_bytes(c.try_into().expect("4 bytes")))
        .collect()
}

const REFUSAL: &str =
    "atomics on local memory (read-modify-write sequences one work-item at a time)";

#[test]
fn local_atomics_keep_kernels_scalar_and_sequential() {
    const N: usize = 200;
    for recipe in RECIPES {
        let p = build(recipe, true);
        for kernel in ["local_counter", "local_max_and_xchg", "counter_and_stream"] {
            assert_eq!(
                p.kernel(kernel).expect("kernel").vectorization,
                Vectorization::Scalar(REFUSAL.into()),
                "{recipe:?} {kernel}"
            );
        }
        for local_x in [1u64, 4, 16, 17, 64] {
            // Groups run in order on one arena that starts at zero: the counter runs on
            // across them, work-item after work-item.
            let mut t = vec![0u8; 4 * N];
            run_2d(
                &p,
                "local_counter",
                &mut [Arg::Buf(&mut t)],
                [N as u64, 1],
                [local_x, 1],
            );
            let want: Vec<u32> = (0..N as u32).collect();
            assert_eq!(
                words_of(&t),
                want,
                "{recipe:?} local_counter, local {local_x}"
            );

            let mut r = Rng(7);
            let input: Vec<u32> = (0..N).map(|_| (r.next() % 1000) as u32).collect();
            let (mut inp, mut olds, mut swapped) =
                (bytes_of(&input), vec![0u8; 4 * N], vec![0u8; 4 * N]);
            run_2d(
                &p,
                "local_max_and_xchg",
                &mut [
                    Arg::Buf(&mut inp),
                    Arg::Buf(&mut olds),
                    Arg::Buf(&mut swapped),
                ],
                [N as u64, 1],
                [local_x, 1],
            );
            let (olds, swapped) = (words_of(&olds), words_of(&swapped));
            let mut best = 0u32;
            let mut last = 0.0f32;
            for (i, &x) in input.iter().enumerate() {
                assert_eq!(olds[i], best, "{recipe:?} max, item {i}");
                assert_eq!(swapped[i], last.to_bits(), "{recipe:?} xchg, item {i}");
                best = best.max(x);
                last = x as f32;
            }

            let a: Vec<f32> = (0..N).map(|k| k as f32 * 0.25 - 7.0).collect();
            let (mut ab, mut b, mut tickets) = (bytes_of(&a), vec![0u8; 4 * N], vec![0u8; 4 * N]);
            run_2d(
                &p,
                "counter_and_stream",
                &mut [Arg::Buf(&mut ab), Arg::Buf(&mut b), Arg::Buf(&mut tickets)],
                [N as u64, 1],
                [local_x, 1],
            );
            let want_b: Vec<u32> = a.iter().map(|x| (x * 2.0 + 1.0).to_bits()).collect();
            assert_eq!(words_of(&b), want_b, "{recipe:?} stream, local {local_x}");
            let want_t: Vec<u32> = (0..N as u32).map(|k| 3 * k).collect();
            assert_eq!(
                words_of(&tickets),
                want_t,
                "{recipe:?} tickets, local {local_x}"
            );
        }
    }
}
