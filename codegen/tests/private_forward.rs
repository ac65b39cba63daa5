//! Store forwarding in private slots (codegen/src/private_forward/) on a whole kernel: a
//! struct holding a global pointer and a length, copied into a private variable and read
//! inside a loop of a callee (DPC++'s accessor copies, tests/kernels/private_forward.cl),
//! leaves no private memory and runs vectorised, with the results of the scalar build.
//! `FERROCL_TEST_BACKEND=wide` runs it on the wide backend.

mod common;

use common::*;
use std::path::{Path, PathBuf};

use ferrocl_codegen::{BuildOptions, Program, Vectorization};

/// Where a build writes its kernels' CLIF.
fn dump_dir(recipe: Recipe, vectorize: bool) -> PathBuf {
    Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("private-forward")
        .join(format!("{recipe:?}-{vectorize}-{}", std::process::id()))
}

fn build(recipe: Recipe, vectorize: bool) -> Program {
    let spirv = spirv_from_c("private_forward.cl", recipe, common::CL1_2);
    let module = ferrocl_frontend::parse(&spirv).unwrap_or_else(|e| panic!("frontend: {e}"));
    let options = BuildOptions {
        vectorize,
        dump_dir: Some(dump_dir(recipe, vectorize)),
        ..default_options()
    };
    compile(&module, &options).unwrap_or_else(|e| panic!("codegen: {e}"))
}

const N: usize = 203;
const LEN: i32 = 7;
const SCALE: i32 = 3;

/// `out` of `kernel` over N work-items in groups of `local`.
fn run(p: &Program, kernel: &str, local: u64) -> Vec<f32> {
    let data: Vec<f32> = (0..N + LEN as usize)
        .map(|k| ((k * 37) % 101) as f32 * 0.25 - 12.0)
        .collect();
    let mut data = bytes_of(&data);
    let mut out = vec![0u8; 4 * N];
    launch(
        p,
        kernel,
        &mut [
            Arg::Buf(&mut data),
            Arg::Buf(&mut out),
            Arg::Val(bytes_of(&[LEN])),
            Arg::Val(bytes_of(&[SCALE])),
        ],
        N as u64,
        local,
    );
    out.chunks(4)
        .map(|c| f32::from_ne_bytes(c.try_into().unwrap()))
        .collect()
}

/// What both kernels compute, in their order of operations.
fn expected() -> Vec<f32> {
    (0..N)
        .map(|i| {
            let mut acc = 0.0f32;
            for k in 0..LEN as usize {
                acc += ((i + k) * 37 % 101) as f32 * 0.25 - 12.0;
            }
            acc * SCALE as f32
        })
        .collect()
}

#[test]
fn private_struct_copies_vanish_and_the_kernel_is_vectorised() {
    for recipe in RECIPES {
        let scalar = build(recipe, false);
        let vector = build(recipe, true);
        for kernel in ["private_struct", "private_struct_rewritten"] {
            let want = expected();
            for local in [1, 8, 13, 64] {
                assert_eq!(
                    run(&scalar, kernel, local),
                    want,
                    "{recipe:?} {kernel} scalar"
                );
                assert_eq!(
                    run(&vector, kernel, local),
                    want,
                    "{recipe:?} {kernel} local {local}"
                );
            }
            let k = vector.kernel(kernel).expect("kernel");
            assert_eq!(
                k.vectorization,
                Vectorization::Vectorized {
                    lanes: vector_lanes()
                },
                "{recipe:?} {kernel}"
            );
            // Optimised, the struct is the only private variable: forwarded away when each
            // field is stored once, kept when one is stored twice.
            if let Recipe::Optimized = recipe {
                let bytes = k.private_mem_size;
                // The vectorised function (vector loop and scalar loop) refers to a stack slot
                // only where the struct stays: the vectoriser made no copy per lane.
                let clif =
                    std::fs::read_to_string(dump_dir(recipe, true).join(format!("{kernel}.clif")))
                        .expect("CLIF dump");
                match kernel {
                    "private_struct" => {
                        assert_eq!(bytes, 0, "{kernel}");
                        assert!(!clif.contains("stack_addr"), "{kernel}:\n{clif}");
                    }
                    _ => {
                        assert_eq!(bytes, 32, "{kernel}");
                        assert!(clif.contains("stack_addr"), "{kernel}");
                    }
                }
            }
        }
    }
}
