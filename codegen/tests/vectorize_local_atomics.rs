//! Atomics on local memory are plain read-modify-write sequences (a work-group runs on one
//! thread): four work-items in the lanes of a vector would each load before any of them
//! stores, and lose updates. Kernels with them stay scalar, and give what one work-item at a
//! time gives.

mod common;

use common::*;
use ferrocl_codegen::{compile, BuildOptions, GroupInfo, Program, Vectorization};

fn build(recipe: Recipe, vectorize: bool) -> Program {
    let spirv = spirv_from_c("vectorize_local_atomics.cl", recipe, common::CL1_2);
    let module = ferrocl_frontend::parse(&spirv).unwrap_or_else(|e| panic!("frontend: {e}"));
    let options = BuildOptions {
        vectorize,
        ..BuildOptions::default()
    };
    compile(&module, &options).unwrap_or_else(|e| panic!("codegen: {e}"))
}

/// Bytes of `__local` memory the harness gives each group.
const LOCAL_BYTES: usize = 64 * 1024;

/// An argument: a buffer.
enum A<'a> {
    Buf(&'a mut [u8]),
}

/// Runs `kernel` over `global` in groups of `local` (x, y), groups in order, with the frames
/// and local memory a worker would give it (local memory is not cleared between groups).
fn run(p: &Program, kernel: &str, args: &mut [A], global: [u64; 2], local: [u64; 2]) {
    let k = p
        .kernel(kernel)
        .unwrap_or_else(|| panic!("no kernel {kernel}"));
    let mut block = vec![0u64; k.args_size.div_ceil(8).max(1)];
    for (i, a) in args.iter_mut().enumerate() {
        let slot = k.args[i];
        let A::Buf(b) = a;
        let bytes = (b.as_mut_ptr() as u64).to_ne_bytes();
        assert_eq!(slot.size, bytes.len(), "{kernel}: argument {i} size");
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
            run(
                &p,
                "local_counter",
                &mut [A::Buf(&mut t)],
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
            run(
                &p,
                "local_max_and_xchg",
                &mut [A::Buf(&mut inp), A::Buf(&mut olds), A::Buf(&mut swapped)],
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
            run(
                &p,
                "counter_and_stream",
                &mut [A::Buf(&mut ab), A::Buf(&mut b), A::Buf(&mut tickets)],
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
