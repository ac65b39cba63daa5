//! Gathers and scatters in wide code (src/vectorize/gather.rs) and 64-bit integers as pairs
//! of vectors: kernels whose work-items load and store at addresses of their own, under masks
//! and in loops whose trip counts differ, give the scalar loop's bits with Cranelift's
//! vectors and with the wide backend's, where the wide backend's code really gathers and
//! scatters; a masked gather leaves the inactive work-items' (faulting) addresses alone; and
//! masked accesses at consecutive addresses are masked loads and stores.

mod common;

use common::*;
use ferrocl_codegen::{Backend, BuildOptions, Program, Vectorization};

const N: usize = 256;

fn build(recipe: Recipe, options: &BuildOptions) -> Program {
    let spirv = spirv_from_c("gathers.cl", recipe, CL1_2);
    let module = ferrocl_frontend::parse(&spirv).unwrap_or_else(|e| panic!("frontend: {e}"));
    compile(&module, options).unwrap_or_else(|e| panic!("codegen: {e}"))
}

fn words(n: usize, seed: u64) -> Vec<u32> {
    let mut r = Rng(seed);
    (0..n).map(|_| r.next() as u32).collect()
}

/// Every kernel's outputs at local size `local` (fresh inputs, the same for every build).
fn outputs(p: &Program, local: u64) -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    let global = N as u64;

    let mut sorted: Vec<f32> = words(1000, 1)
        .iter()
        .map(|&w| (w % 4000) as f32 / 8.0)
        .collect();
    sorted.sort_by(f32::total_cmp);
    let keys: Vec<f32> = words(N, 2)
        .iter()
        .map(|&w| (w % 4400) as f32 / 8.0 - 20.0)
        .collect();
    let (mut s, mut k, mut o) = (bytes_of(&sorted), bytes_of(&keys), vec![0u8; 16 * N]);
    let n = bytes_of(&[sorted.len() as u64]);
    launch(
        p,
        "lower_bound_size_t",
        &mut [
            Arg::Buf(&mut s),
            Arg::Buf(&mut k),
            Arg::Buf(&mut o),
            Arg::Val(n),
        ],
        global,
        local,
    );
    out.push(o);

    // About half the indices in bounds, the others anywhere up to 2^32 floats away.
    let n = 300u32;
    let idx: Vec<u32> = words(N, 3)
        .iter()
        .enumerate()
        .map(|(i, &w)| {
            if w % 2 == 0 {
                w % n
            } else {
                w | (1 << 31) | i as u32
            }
        })
        .collect();
    let a: Vec<f32> = (0..n).map(|i| i as f32 * 1.25 - 7.0).collect();
    let (mut ab, mut ib) = (bytes_of(&a), bytes_of(&idx));
    let (mut o, mut w) = (vec![0u8; 4 * N], vec![0u8; 4 * N]);
    launch(
        p,
        "masked_far_loads",
        &mut [
            Arg::Buf(&mut ab),
            Arg::Buf(&mut ib),
            Arg::Buf(&mut o),
            Arg::Buf(&mut w),
            Arg::Val(bytes_of(&[n])),
        ],
        global,
        local,
    );
    out.push(o);
    out.push(w);

    // Few distinct addresses, so that many work-items of one vector collide.
    let n = 13u32;
    let mut ib = bytes_of(&words(N, 4));
    let (mut o, mut f) = (vec![0u8; 4 * (n as usize + 7)], vec![0u8; 4 * 5]);
    launch(
        p,
        "colliding_stores",
        &mut [
            Arg::Buf(&mut ib),
            Arg::Buf(&mut o),
            Arg::Buf(&mut f),
            Arg::Val(bytes_of(&[n])),
        ],
        global,
        local,
    );
    out.push(o);
    out.push(f);

    let n = 97u32;
    let (mut ab, mut ib) = (bytes_of(&words(n as usize, 5)), bytes_of(&words(N, 6)));
    let mut o = vec![0u8; 8 * N];
    launch(
        p,
        "gather_loop",
        &mut [
            Arg::Buf(&mut ab),
            Arg::Buf(&mut ib),
            Arg::Buf(&mut o),
            Arg::Val(bytes_of(&[n])),
        ],
        global,
        local,
    );
    out.push(o);

    // A last vector only partly inside n; the rest of `o` keeps its pattern.
    let n = N - 27;
    let a: Vec<f32> = words(n, 7)
        .iter()
        .map(|&w| (w % 1000) as f32 / 1000.0)
        .collect();
    let mut ab = bytes_of(&a);
    let mut o = bytes_of(&(0..N).map(|i| -(i as f32)).collect::<Vec<_>>());
    launch(
        p,
        "masked_contiguous",
        &mut [
            Arg::Buf(&mut ab),
            Arg::Buf(&mut o),
            Arg::Val(bytes_of(&[n as u64])),
        ],
        global,
        local,
    );
    out.push(o);
    out
}

const KERNELS: [&str; 5] = [
    "lower_bound_size_t",
    "masked_far_loads",
    "colliding_stores",
    "gather_loop",
    "masked_contiguous",
];
#[test]
fn gathers_scatters_and_64_bit_pairs_agree_bit_for_bit() {
    assert!(
        ferrocl_opencl_c::wide_backend_available(),
        "libLLVM-15 and the LLVM server must be available here"
    );
    for recipe in RECIPES {
        let scalar = build(
            recipe,
            &BuildOptions {
                vectorize: false,
                backend: Backend::Cranelift,
                ..BuildOptions::default()
            },
        );
        let cranelift = build(
            recipe,
            &BuildOptions {
                backend: Backend::Cranelift,
                ..BuildOptions::default()
            },
        );
        let dumps = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
            .join(format!("gathers-{}-{recipe:?}", std::process::id()));
        let w = build(
            recipe,
            &BuildOptions {
                backend: Backend::Wide,
                dump_dir: Some(dumps.clone()),
                ..BuildOptions::default()
            },
        );
        for local in [1, 7, 16, 64, 65, 128] {
            let reference = outputs(&scalar, local);
            let got = outputs(&cranelift, local);
            assert_eq!(got, reference, "{recipe:?} Cranelift, local {local}");
            assert_eq!(
                outputs(&w, local),
                reference,
                "{recipe:?} wide, local {local}"
            );
        }
        if let Recipe::Optimized = recipe {
            for kernel in KERNELS {
                let k = w.kernel(kernel).expect("kernel");
                assert_eq!(
                    k.backend(),
                    Backend::Wide,
                    "{kernel}: {:?}",
                    k.wide_refusal()
                );
                assert_eq!(
                    k.vectorization,
                    Vectorization::Vectorized {
                        lanes: ferrocl_codegen::Target::host().lanes32()
                    },
                    "{kernel}"
                );
            }
            let ir = |k: &str| dumped_ir(&dumps, k);
            for kernel in ["lower_bound_size_t", "masked_far_loads", "gather_loop"] {
                assert!(
                    ir(kernel).contains("@llvm.masked.gather"),
                    "{kernel} gathers"
                );
            }
            assert!(ir("colliding_stores").contains("@llvm.masked.scatter"));
            // Consecutive addresses under a mask: a masked load, and with AVX-512 (16 lanes)
            // a masked store; never a gather or a scatter.
            let contiguous = ir("masked_contiguous");
            assert!(contiguous.contains("@llvm.masked.load"), "{contiguous}");
            assert_eq!(
                contiguous.contains("@llvm.masked.store"),
                ferrocl_codegen::Target::host().lanes32() >= 16,
                "{contiguous}"
            );
            assert!(
                !contiguous.contains("@llvm.masked.gather")
                    && !contiguous.contains("@llvm.masked.scatter"),
                "{contiguous}"
            );
        }
        let _ = std::fs::remove_dir_all(&dumps);
    }
}

#[test]
fn checked_mode_keeps_scalar_accesses() {
    let dumps = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("gathers-checked-{}", std::process::id()));
    let p = build(
        Recipe::Optimized,
        &BuildOptions {
            backend: Backend::Wide,
            checked: true,
            dump_dir: Some(dumps.clone()),
            ..BuildOptions::default()
        },
    );
    // Checked mode bounds-checks each scalar access after the vectoriser: no lane intrinsics.
    for kernel in KERNELS {
        let k = p.kernel(kernel).expect("kernel");
        let ir = dumped_ir(&dumps, kernel);
        if k.backend() == Backend::Wide {
            assert!(ir.contains("define"), "{kernel}: no IR dumped");
        }
        assert!(
            !ir.contains("@llvm.masked.gather") && !ir.contains("@llvm.masked.scatter"),
            "{kernel}"
        );
    }
    let _ = std::fs::remove_dir_all(&dumps);
}
