//! The work-item vectoriser on kernels with barriers: in wide code, the regions of a static
//! barrier schedule whose work is a loop of their own are widened like a barrier-free kernel
//! (kernel.rs `vectorize_regions`), with bit-for-bit the results of the scalar build; other
//! regions, and every region in Cranelift's 4 lanes, stay scalar; local atomics, plain
//! read-modify-write sequences that hold only one work-item at a time, keep their loops
//! scalar. Run it with `FERROCL_TEST_BACKEND=wide` to widen.

mod common;

use common::*;
use ferrocl_codegen::{Backend, BarrierSchedule, BuildOptions, GroupInfo, Program, Vectorization};

fn build(recipe: Recipe, vectorize: bool) -> Program {
    let spirv = spirv_from_c("vectorize_barriers.cl", recipe, common::CL1_2);
    let module = ferrocl_frontend::parse(&spirv).unwrap_or_else(|e| panic!("frontend: {e}"));
    let options = BuildOptions {
        vectorize,
        ..default_options()
    };
    compile(&module, &options).unwrap_or_else(|e| panic!("codegen: {e}"))
}

/// Bytes of `__local` memory the harness gives each group; a `__local` argument gets what
/// follows the kernel's static variables.
const LOCAL_BYTES: usize = 64 * 1024;

/// An argument: a buffer, a value, or a `__local` argument of this many bytes.
enum A<'a> {
    Buf(&'a mut [u8]),
    Val(Vec<u8>),
    Local(usize),
}

/// Runs `kernel` over `global` in groups of `local` (x, y), groups in order, with the frames
/// and local memory a worker would give it (local memory is not cleared between groups).
fn run(p: &Program, kernel: &str, args: &mut [A], global: [u64; 2], local: [u64; 2]) {
    let k = p
        .kernel(kernel)
        .unwrap_or_else(|| panic!("no kernel {kernel}"));
    let mut block = vec![0u64; k.args_size.div_ceil(8).max(1)];
    let mut local_offset = k.static_local_mem_size.next_multiple_of(16);
    for (i, a) in args.iter_mut().enumerate() {
        let slot = k.args[i];
        let bytes: Vec<u8> = match a {
            A::Buf(b) => (b.as_mut_ptr() as u64).to_ne_bytes().to_vec(),
            A::Val(v) => v.clone(),
            A::Local(n) => {
                let at = local_offset;
                local_offset = (at + *n).next_multiple_of(16);
                (at as u64).to_ne_bytes().to_vec()
            }
        };
        assert_eq!(slot.size, bytes.len(), "{kernel}: argument {i} size");
        assert!(local_offset <= LOCAL_BYTES, "{kernel}: local memory");
        let base = block.as_mut_ptr().cast::<u8>();
        // SAFETY: the slot lies inside the block (the layout sized it).
        unsafe {
            std::ptr::copy_nonoverlapping(bytes.as_ptr(), base.add(slot.offset), bytes.len())
        };
    }
    let groups = [global[0].div_ceil(local[0]), global[1].div_ceil(local[1])];
    let mut arena = vec![0u128; LOCAL_BYTES / 16];
    let items = (local[0] * local[1]) as usize;
    let mut frames = vec![0u128; (k.work_item_frame_size * items).div_ceil(16).max(1)];
    for gy in 0..groups[1] {
        for gx in 0..groups[0] {
            let info = GroupInfo {
                global_offset: [0; 3],
                global_size: [global[0], global[1], 1],
                local_size: [
                    (global[0] - gx * local[0]).min(local[0]),
                    (global[1] - gy * local[1]).min(local[1]),
                    1,
                ],
                enqueued_local_size: [local[0], local[1], 1],
                group_id: [gx, gy, 0],
                num_groups: [groups[0], groups[1], 1],
                work_dim: 2,
                frames: frames.as_mut_ptr() as u64,
                printf_buffer: 0,
                local_mem_size: LOCAL_BYTES as u64,
                frames_size: (frames.len() * 16) as u64,
                stop: 0,
                checked: 0,
                device_enqueue: 0,
            };
            // SAFETY: the argument block follows the kernel's layout; every buffer is sized
            // for the range; the arena and the frames (sized for the group) are private to
            // this call.
            unsafe { k.run_group(block.as_ptr().cast(), &info, arena.as_mut_ptr().cast()) };
        }
    }
}

fn floats(n: usize, seed: u64) -> Vec<u8> {
    let mut r = Rng(seed);
    let v: Vec<f32> = (0..n)
        .map(|_| (r.next() % 20_000) as f32 / 1000.0 - 10.0)
        .collect();
    bytes_of(&v)
}

fn val<T: Copy>(v: T) -> A<'static> {
    A::Val(bytes_of(&[v]))
}

/// The kernel's outputs on fixed inputs, for work-groups of `local` in x (where the kernel
/// allows a choice).
fn outputs(p: &Program, kernel: &str, local_x: u64) -> Vec<Vec<u8>> {
    match kernel {
        "reduce" => {
            let (mut a, mut o) = (floats(64 * 6, 1), vec![0u8; 4 * 6]);
            run(
                p,
                kernel,
                &mut [A::Buf(&mut a), A::Buf(&mut o)],
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
            run(
                p,
                kernel,
                &mut [A::Buf(&mut a), A::Buf(&mut o), val(per_item), val(n as u64)],
                [(groups as u64) * local_x, 1],
                [local_x, 1],
            );
            vec![o]
        }
        "private_across" => {
            let n = 3 * local_x as usize + 5;
            let (mut a, mut o) = (floats(n, 7), vec![0u8; 4 * n]);
            run(
                p,
                kernel,
                &mut [
                    A::Buf(&mut a),
                    A::Buf(&mut o),
                    A::Local(4 * local_x as usize),
                ],
                [n as u64, 1],
                [local_x, 1],
            );
            vec![o]
        }
        "stencil" => {
            let n = 5 * local_x as usize + 3;
            let (mut a, mut o) = (floats(n, 2), vec![0u8; 4 * n]);
            run(
                p,
                kernel,
                &mut [
                    A::Buf(&mut a),
                    A::Buf(&mut o),
                    A::Local(4 * local_x as usize),
                ],
                [n as u64, 1],
                [local_x, 1],
            );
            vec![o]
        }
        "sgemm_tiled" => {
            let n = 24usize;
            let (mut a, mut b, mut c) = (floats(n * n, 3), floats(n * n, 4), vec![0u8; 4 * n * n]);
            run(
                p,
                kernel,
                &mut [
                    A::Buf(&mut a),
                    A::Buf(&mut b),
                    A::Buf(&mut c),
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
            run(
                p,
                kernel,
                &mut [A::Buf(&mut d), A::Buf(&mut bins)],
                [n as u64, 1],
                [local_x, 1],
            );
            vec![bins]
        }
        "local_counter" => {
            let n = 6 * local_x as usize;
            let mut t = vec![0u8; 4 * n];
            run(
                p,
                kernel,
                &mut [A::Buf(&mut t)],
                [n as u64, 1],
                [local_x, 1],
            );
            vec![t]
        }
        other => panic!("no inputs for {other}"),
    }
}

const KERNELS: [&str; 7] = [
    "reduce",
    "reduce_strided",
    "private_across",
    "stencil",
    "sgemm_tiled",
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
    for kernel in ["reduce", "stencil", "reduce_strided", "private_across"] {
        assert_eq!(
            p.kernel(kernel).expect("kernel").barrier_schedule,
            BarrierSchedule::Static,
            "{kernel}"
        );
    }
    assert_eq!(
        p.kernel("reduce_strided").expect("kernel").vectorization,
        if wide {
            Vectorization::Vectorized {
                lanes: vector_lanes(),
            }
        } else {
            Vectorization::Scalar("the kernel has barriers".into())
        }
    );
    // Barriers in a loop: each region can end in two ways, a dynamic schedule.
    assert_eq!(
        p.kernel("sgemm_tiled").expect("kernel").barrier_schedule,
        BarrierSchedule::Dynamic
    );
    for kernel in [
        "reduce",
        "stencil",
        "private_across",
        "histogram_local",
        "sgemm_tiled",
    ] {
        assert_eq!(
            p.kernel(kernel).expect("kernel").vectorization,
            Vectorization::Scalar("the kernel has barriers".into()),
            "{kernel}"
        );
    }
    assert_eq!(
        p.kernel("local_counter").expect("kernel").vectorization,
        Vectorization::Scalar(
            "atomics on local memory (read-modify-write sequences one work-item at a time)".into()
        )
    );
}
