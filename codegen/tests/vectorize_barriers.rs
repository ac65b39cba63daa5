//! The work-item vectoriser on kernels with barriers: in wide code, the regions of a static
//! barrier schedule whose work is a loop of their own, or many memory accesses beside few of
//! the work-item frames, are widened like a barrier-free kernel (kernel.rs
//! `vectorize_regions`), with bit-for-bit the results of the scalar build; other regions, and
//! every region in Cranelift's 4 lanes, stay scalar; local atomics, plain
//! read-modify-write sequences that hold only one work-item at a time, keep their loops
//! scalar. Run it with `FERROCL_TEST_BACKEND=wide` to widen.

mod common;

use common::*;
use ferrocl_codegen::{Backend, BarrierSchedule, BuildOptions, Program, Vectorization};

fn build(recipe: Recipe, vectorize: bool) -> Program {
    let spirv = spirv_from_c("vectorize_barriers.cl", recipe, common::CL1_2);
    let module = ferrocl_frontend::parse(&spirv).unwrap_or_else(|e| panic!("frontend: {e}"));
    let options = BuildOptions {
        vectorize,
        ..default_options()
    };
    compile(&module, &options).unwrap_or_else(|e| panic!("codegen: {e}"))
}

fn floats(n: usize, seed: u64) -> Vec<u8> {
    let mut r = Rng(seed);
    let v: Vec<f32> = (0..n)
        .map(|_| (r.next() % 20_000) as f32 / 1000.0 - 10.0)
        .collect();
    bytes_of(&v)
}

fn val<T: Copy>(v: T) -> Arg<'static> {
    Arg::Val(bytes_of(&[v]))
}

/// The kernel's outputs on fixed inputs, for work-groups of `local` in x (where the kernel
/// allows a choice).
fn outputs(p: &Program, kernel: &str, local_x: u64) -> Vec<Vec<u8>> {
    match kernel {
        "reduce" => {
            let (mut a, mut o) = (floats(64 * 6, 1), vec![0u8; 4 * 6]);
            run_2d(
                p,
                kernel,
                &mut [Arg::Buf(&mut a), Arg::Buf(&mut o)],
                [64 * 6, 1],
                [64, 1],
            );
            vec![o]
        }
        "reduce_strided" => {
            let per_item = 5u32;
            let n = 7 * local_x as usize * per_item as usize - 3;
            let groups = n.div_ceil(local_x as usize * per_item as usize);
            let (mut a, mut o) = (floats(n, 6), vec![0u8; 4 * groups]);
            run_2d(
                p,
                kernel,
                &mut [
                    Arg::Buf(&mut a),
                    Arg::Buf(&mut o),
                    val(per_item),
                    val(n as u64),
                ],
                [(groups as u64) * local_x, 1],
                [local_x, 1],
            );
            vec![o]
        }
        "reduce_unrolled" => {
            let n = 5 * local_x as usize * 8 - 11;
            let groups = n.div_ceil(local_x as usize * 8);
            let (mut a, mut o) = (floats(n, 8), vec![0u8; 4 * groups]);
            run_2d(
                p,
                kernel,
                &mut [Arg::Buf(&mut a), Arg::Buf(&mut o), val(n as u64)],
                [(groups as u64) * local_x, 1],
                [local_x, 1],
            );
            vec![o]
        }
        "private_across" => {
            let n = 3 * local_x as usize + 5;
            let (mut a, mut o) = (floats(n, 7), vec![0u8; 4 * n]);
            run_2d(
                p,
                kernel,
                &mut [
                    Arg::Buf(&mut a),
                    Arg::Buf(&mut o),
                    Arg::Local(4 * local_x as usize),
                ],
                [n as u64, 1],
                [local_x, 1],
            );
            vec![o]
        }
        "stencil" => {
            let n = 5 * local_x as usize + 3;
            let (mut a, mut o) = (floats(n, 2), vec![0u8; 4 * n]);
            run_2d(
                p,
                kernel,
                &mut [
                    Arg::Buf(&mut a),
                    Arg::Buf(&mut o),
                    Arg::Local(4 * local_x as usize),
                ],
                [n as u64, 1],
                [local_x, 1],
            );
            vec![o]
        }
        "tiles_early_return" => {
            let n = 3 * local_x as usize - 5;
            let global = n.next_multiple_of(local_x as usize);
            let (mut a, mut o) = (floats(global, 8), vec![0u8; 4 * global]);
            run_2d(
                p,
                kernel,
                &mut [Arg::Buf(&mut a), Arg::Buf(&mut o), val(n as u32), val(3u32)],
                [global as u64, 1],
                [local_x, 1],
            );
            // Against the host: a group that disagrees must still finish its active items.
            for g in 0..n {
                let mut acc = 0.0f32;
                for t in 0..3 {
                    for k in 0..16 {
                        acc += (read_f32(&a, g) + ((k + t) & 15) as f32) * 0.5;
                    }
                }
                assert_eq!(
                    read_f32(&o, g),
                    acc,
                    "tiles_early_return local {local_x} item {g}"
                );
            }
            vec![o]
        }
        "sgemm_tiled" => {
            let n = 24usize;
            let (mut a, mut b, mut c) = (floats(n * n, 3), floats(n * n, 4), vec![0u8; 4 * n * n]);
            run_2d(
                p,
                kernel,
                &mut [
                    Arg::Buf(&mut a),
                    Arg::Buf(&mut b),
                    Arg::Buf(&mut c),
                    val(n as u32),
                ],
                [n as u64, n as u64],
                [8, 8],
            );
            vec![c]
        }
        "histogram_local" => {
            let n = 7 * local_x as usize;
            let mut r = Rng(5);
            // Few distinct values: lanes of one vector iteration often hit the same bin.
            let d: Vec<u32> = (0..n).map(|_| (r.next() % 3) as u32).collect();
            let (mut d, mut bins) = (bytes_of(&d), vec![0u8; 4 * 16]);
            run_2d(
                p,
                kernel,
                &mut [Arg::Buf(&mut d), Arg::Buf(&mut bins)],
                [n as u64, 1],
                [local_x, 1],
            );
            vec![bins]
        }
        "local_counter" => {
            let n = 6 * local_x as usize;
            let mut t = vec![0u8; 4 * n];
            run_2d(
                p,
                kernel,
                &mut [Arg::Buf(&mut t)],
                [n as u64, 1],
                [local_x, 1],
            );
            vec![t]
        }
        other => panic!("no inputs for {other}"),
    }
}

const KERNELS: [&str; 9] = [
    "reduce",
    "reduce_strided",
    "reduce_unrolled",
    "private_across",
    "stencil",
    "sgemm_tiled",
    "tiles_early_return",
    "histogram_local",
    "local_counter",
];

#[test]
fn barrier_regions_vectorised_and_scalar_agree_bit_for_bit() {
    for recipe in RECIPES {
        let (vector, scalar) = (build(recipe, true), build(recipe, false));
        for kernel in KERNELS {
            for local_x in [16, 17, 64, 96] {
                let (v, s) = (
                    outputs(&vector, kernel, local_x),
                    outputs(&scalar, kernel, local_x),
                );
                assert!(
                    s.iter().any(|o| o.iter().any(|&b| b != 0)),
                    "{kernel}: no output"
                );
                assert_eq!(v, s, "{recipe:?} {kernel} local {local_x}");
            }
        }
    }
}

#[test]
fn regions_with_plain_loops_are_widened_in_wide_code_only() {
    let p = build(Recipe::Optimized, true);
    let wide = test_backend() == Backend::Wide;
    // Widened regions in wide code; Cranelift's 4 lanes do not try them.
    let widened = if wide {
        Vectorization::Vectorized {
            lanes: vector_lanes(),
        }
    } else {
        Vectorization::Scalar("the kernel has barriers".into())
    };
    for kernel in ["reduce", "stencil", "reduce_strided", "private_across"] {
        assert_eq!(
            p.kernel(kernel).expect("kernel").barrier_schedule,
            BarrierSchedule::Static,
            "{kernel}"
        );
    }
    // Eight unrolled loads beside one frame value: widened.
    for kernel in ["reduce_unrolled", "reduce_strided"] {
        assert_eq!(
            p.kernel(kernel).expect("kernel").vectorization,
            widened,
            "{kernel}"
        );
    }
    // Barriers in a loop: a region can end in two ways, chained by where the work-items
    // stopped (static_schedule.rs); the tile product between them, unrolled by clang,
    // has 32 local loads beside one frame value, and is widened.
    let sgemm = p.kernel("sgemm_tiled").expect("kernel");
    assert_eq!(sgemm.barrier_schedule, BarrierSchedule::Static);
    assert_eq!(sgemm.vectorization, widened);
    // Its regions stay scalar (the early return masks the first one's loop; the product's
    // loop keeps the accumulator in the frames); the fallback is what it tests.
    assert_eq!(
        p.kernel("tiles_early_return")
            .expect("kernel")
            .barrier_schedule,
        BarrierSchedule::Static
    );
    // Cranelift's 4 lanes do not try the regions; the wide backend's refusals are told,
    // counted by reason, in the debug log.
    let refused = |kernel: &str| match p.kernel(kernel).expect("kernel").vectorization.clone() {
        Vectorization::Scalar(why) => why.into_owned(),
        other => panic!("{kernel}: {other:?}"),
    };
    for kernel in ["reduce", "stencil", "private_across", "histogram_local"] {
        let why = refused(kernel);
        if wide {
            assert!(
                why.starts_with("the kernel has barriers, and its regions stay scalar: "),
                "{kernel}: {why}"
            );
        } else {
            assert_eq!(why, "the kernel has barriers", "{kernel}");
        }
    }
    if wide {
        // The tree reduction's steps: a local load and store beside the frame traffic.
        assert!(
            refused("reduce").contains(
                " × a barrier region without a loop (its frame traffic outweighs the lanes)"
            ),
            "{}",
            refused("reduce")
        );
        // The early return masks the first region's loop; the product's loop keeps the
        // accumulator in the frames.
        let early = refused("tiles_early_return");
        assert!(
            early.contains(" × a barrier region with a loop the work-items run differently")
                && early.contains(" × a barrier region whose loops use the work-item frames"),
            "{early}"
        );
    }
    assert_eq!(
        p.kernel("local_counter").expect("kernel").vectorization,
        Vectorization::Scalar(
            "atomics on local memory (read-modify-write sequences one work-item at a time)".into()
        )
    );
}
