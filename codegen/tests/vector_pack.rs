//! The packing of explicit vectors (vector_pack.rs): which kernels run their `float4`,
//! `uint4`, `double2` values as SIMD vectors one work-item at a time, and that each gives bit
//! for bit the results of its scalar build, at several local sizes, at -O0 and optimised.

mod common;

use common::*;
use ferrocl_codegen::{BuildOptions, Program, Vectorization};

const N: usize = 256;

fn build(recipe: Recipe, vectorize: bool, dump: Option<&std::path::Path>) -> Program {
    let spirv = spirv_from_c("vector_pack.cl", recipe, common::CL1_2);
    let module = ferrocl_frontend::parse(&spirv).unwrap_or_else(|e| panic!("frontend: {e}"));
    let options = BuildOptions {
        vectorize,
        dump_dir: dump.map(std::path::Path::to_path_buf).or_else(|| {
            std::env::var_os("FERROCL_TEST_DUMP")
                .map(|d| std::path::Path::new(&d).join(format!("{recipe:?}-{vectorize}")))
        }),
        ..default_options()
    };
    compile(&module, &options).unwrap_or_else(|e| panic!("codegen: {e}"))
}

/// `n` words, or floats in [-2, 2) when `float` (f32 or, with `double`, f64).
fn data(n: usize, seed: u64, kind: &str) -> Vec<u8> {
    let mut r = Rng(seed);
    match kind {
        "float" => bytes_of(
            &(0..n)
                .map(|_| (r.next() % 4000) as f32 / 1000.0 - 2.0)
                .collect::<Vec<f32>>(),
        ),
        "double" => bytes_of(
            &(0..n)
                .map(|_| (r.next() % 4_000_000) as f64 / 1e6 - 2.0)
                .collect::<Vec<f64>>(),
        ),
        _ => bytes_of(&(0..n).map(|_| r.next() as u32).collect::<Vec<u32>>()),
    }
}

/// The output buffer of `kernel` over N work-items in groups of `local`.
fn output(p: &Program, kernel: &str, local: u64) -> Vec<u8> {
    let (kind, out_bytes) = match kernel {
        "rounds_uint4" | "shifts_int4" => ("word", 16 * N),
        "doubles" | "doubles_loop" => ("double", 16 * N),
        "partial_float4" => ("float", 4 * N),
        "compared_uint4" => ("word", 4 * N),
        _ => ("float", 16 * N),
    };
    // Four lanes per element, plus room for the neighbours the kernels read.
    let mut input = data(4 * (N + 16), 7, kind);
    let mut out = vec![0u8; out_bytes];
    let mut args = vec![Arg::Buf(&mut out), Arg::Buf(&mut input)];
    match kernel {
        "chains_float4" | "doubles_loop" => args.push(Arg::Val(37u32.to_ne_bytes().to_vec())),
        "shifts_int4" => args.push(Arg::Val(13i32.to_ne_bytes().to_vec())),
        _ => {}
    }
    launch(p, kernel, &mut args, N as u64, local);
    out
}

/// (kernel, what its optimised IR has when it is packed). `shifts_int4` (per-lane shift
/// amounts) and `compares_float4` keep part of their arithmetic scalar, so how they run is
/// not asserted; `partial_float4` must stay with the work-items.
const KERNELS: [(&str, Option<&str>); 11] = [
    ("chains_float4", Some("fma.f32x4")),
    ("rounds_uint4", Some("i32x4")),
    ("compared_uint4", Some("i32x4")),
    ("doubles", Some("bitselect")),
    ("doubles_loop", Some("f64x2")),
    ("shifts_int4", None),
    ("barrier_float4", Some("f32x4")),
    ("compares_float4", None),
    ("swizzles_float4", Some("shuffle")),
    ("components", None),
    ("partial_float4", None),
];

#[test]
fn packed_and_scalar_kernels_agree_bit_for_bit() {
    for recipe in RECIPES {
        let (packed, scalar) = (build(recipe, true, None), build(recipe, false, None));
        for (kernel, _) in KERNELS {
            let locals: &[u64] = if kernel == "barrier_float4" {
                &[1, 3, 4, 7, 8, 64]
            } else {
                &[1, 3, 4, 7, 8, 64, 65]
            };
            for &local in locals {
                let (p, s) = (
                    output(&packed, kernel, local),
                    output(&scalar, kernel, local),
                );
                if let Some(at) = p.iter().zip(&s).position(|(a, b)| a != b) {
                    panic!(
                        "{recipe:?} {kernel} local {local}: differs from byte {at}: packed {:?}, scalar {:?}",
                        &p[at..(at + 16).min(p.len())],
                        &s[at..(at + 16).min(s.len())]
                    );
                }
            }
        }
    }
}

#[test]
fn explicit_vectors_run_as_simd_where_they_are_the_arithmetic() {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("vector-pack-{}", std::process::id()));
    let p = build(Recipe::Optimized, true, Some(&dir));
    for (kernel, vector_type) in KERNELS {
        let how = p.kernel(kernel).expect("kernel").vectorization.clone();
        let clif = std::fs::read_to_string(dir.join(format!("{kernel}.opt.clif")))
            .unwrap_or_else(|e| panic!("{kernel}: the IR dump: {e}"));
        match (kernel, vector_type) {
            // With the wide backend a work-item's 128-bit vectors fill a quarter (AVX-512) or
            // half (AVX2) of a register, and 16 or 8 work-items per iteration fill it all:
            // either way is allowed there, and the bits are compared above.
            (_, Some(_)) if vector_lanes() > 4 => assert!(
                how == Vectorization::ExplicitVectors
                    || how
                        == Vectorization::Vectorized {
                            lanes: vector_lanes()
                        },
                "{kernel}: {how:?}"
            ),
            (_, Some(t)) => {
                assert_eq!(how, Vectorization::ExplicitVectors, "{kernel}");
                assert!(clif.contains(t), "{kernel}: no {t} in\n{clif}");
            }
            ("partial_float4", None) => {
                assert_eq!(
                    how,
                    Vectorization::Vectorized {
                        lanes: vector_lanes()
                    },
                    "{kernel}"
                )
            }
            _ => {}
        }
    }
    // Off, the same kernels go back to the work-item vectoriser.
    let spirv = spirv_from_c("vector_pack.cl", Recipe::Optimized, common::CL1_2);
    let module = ferrocl_frontend::parse(&spirv).unwrap_or_else(|e| panic!("frontend: {e}"));
    let unpacked = compile(
        &module,
        &BuildOptions {
            pack_vectors: false,
            ..default_options()
        },
    )
    .unwrap_or_else(|e| panic!("codegen: {e}"));
    assert_eq!(
        unpacked
            .kernel("chains_float4")
            .expect("kernel")
            .vectorization,
        Vectorization::Vectorized {
            lanes: vector_lanes()
        }
    );
    let _ = std::fs::remove_dir_all(&dir);
}
