//! The work-item vectoriser (vectorize.rs): which kernels run four work-items per vector
//! iteration, and that every kernel gives bit for bit the same results with and without it,
//! at local sizes that are and are not multiples of four, in one and two dimensions, at -O0
//! and optimised.

mod common;

use common::*;
use ferrocl_codegen::{BuildOptions, Program, Vectorization};

fn build(recipe: Recipe, vectorize: bool) -> Program {
    let spirv = spirv_from_c("vectorize.cl", recipe, common::CL1_2);
    let module = ferrocl_frontend::parse(&spirv).unwrap_or_else(|e| panic!("frontend: {e}"));
    let options = BuildOptions {
        vectorize,
        dump_dir: std::env::var_os("FERROCL_TEST_DUMP")
            .map(|d| std::path::Path::new(&d).join(format!("{recipe:?}-{vectorize}"))),
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

fn words(n: usize, seed: u64) -> Vec<u8> {
    let mut r = Rng(seed);
    let v: Vec<u32> = (0..n).map(|_| r.next() as u32).collect();
    bytes_of(&v)
}

fn val<T: Copy>(v: T) -> Arg<'static> {
    Arg::Val(bytes_of(&[v]))
}

/// Runs one kernel on fresh inputs (the same for both builds) and returns its outputs.
fn outputs(p: &Program, kernel: &str, local: [u64; 2]) -> Vec<Vec<u8>> {
    const N: usize = 256;
    let global1 = [N as u64, 1];
    match kernel {
        "vadd" => {
            let (mut a, mut b, mut c) = (floats(N, 1), floats(N, 2), vec![0u8; 4 * N]);
            run_2d(
                p,
                kernel,
                &mut [Arg::Buf(&mut a), Arg::Buf(&mut b), Arg::Buf(&mut c)],
                global1,
                local,
            );
            vec![c]
        }
        "triad_uint" => {
            let (mut a, mut b, mut c) = (vec![0u8; 4 * N], floats(N, 3), floats(N, 4));
            run_2d(
                p,
                kernel,
                &mut [
                    Arg::Buf(&mut a),
                    Arg::Buf(&mut b),
                    Arg::Buf(&mut c),
                    val(1.5f32),
                ],
                global1,
                local,
            );
            vec![a]
        }
        "int_index" | "hash" | "private_array" | "md5_block" | "private_mixed" | "too_large" => {
            let (mut a, mut o) = (words(N + 64, 5), vec![0u8; 4 * N]);
            run_2d(
                p,
                kernel,
                &mut [Arg::Buf(&mut a), Arg::Buf(&mut o)],
                global1,
                local,
            );
            vec![o]
        }
        "nbody" => {
            let (mut pos, mut acc) = (floats(4 * N, 6), vec![0u8; 16 * N]);
            run_2d(
                p,
                kernel,
                &mut [
                    Arg::Buf(&mut pos),
                    Arg::Buf(&mut acc),
                    val(N as u32),
                    val(0.01f32),
                ],
                global1,
                local,
            );
            vec![acc]
        }
        "sgemm" => {
            let n = 24usize;
            let (mut a, mut b, mut c) = (floats(n * n, 7), floats(n * n, 8), vec![0u8; 4 * n * n]);
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
                local,
            );
            vec![c]
        }
        "conv" => {
            let (w, h) = (37usize, 9usize);
            let (mut i, mut o, mut k) = (floats(w * h, 9), vec![0u8; 4 * w * h], floats(25, 10));
            run_2d(
                p,
                kernel,
                &mut [
                    Arg::Buf(&mut i),
                    Arg::Buf(&mut o),
                    Arg::Buf(&mut k),
                    val(w as u32),
                    val(h as u32),
                ],
                [w as u64, h as u64],
                local,
            );
            vec![o]
        }
        "mixed" => {
            let (mut a, mut b) = (floats(N, 11), words(N, 12));
            // Some NaNs, infinities and zeros among the floats.
            a[0..4].copy_from_slice(&f32::NAN.to_ne_bytes());
            a[4..8].copy_from_slice(&f32::INFINITY.to_ne_bytes());
            a[8..12].copy_from_slice(&(-0.0f32).to_ne_bytes());
            let (mut f, mut o) = (vec![0u8; 4 * N], vec![0u8; 4 * N]);
            run_2d(
                p,
                kernel,
                &mut [
                    Arg::Buf(&mut a),
                    Arg::Buf(&mut b),
                    Arg::Buf(&mut f),
                    Arg::Buf(&mut o),
                ],
                global1,
                local,
            );
            vec![f, o]
        }
        "wide_narrow" => {
            let (mut l, mut d, mut c, mut s, mut h) = (
                words(2 * N, 13),
                words(2 * N, 14),
                words(N / 4, 15),
                words(N / 2, 16),
                words(N / 2, 17),
            );
            let (mut lo, mut dout, mut co, mut ho) = (
                vec![0u8; 8 * N],
                vec![0u8; 8 * N],
                vec![0u8; N],
                vec![0u8; 2 * N],
            );
            run_2d(
                p,
                kernel,
                &mut [
                    Arg::Buf(&mut l),
                    Arg::Buf(&mut d),
                    Arg::Buf(&mut c),
                    Arg::Buf(&mut s),
                    Arg::Buf(&mut h),
                    Arg::Buf(&mut lo),
                    Arg::Buf(&mut dout),
                    Arg::Buf(&mut co),
                    Arg::Buf(&mut ho),
                ],
                global1,
                local,
            );
            vec![lo, dout, co, ho]
        }
        "double_loop" => {
            let (mut a, mut dout) = (floats(N, 19), vec![0u8; 8 * N]);
            run_2d(
                p,
                kernel,
                &mut [Arg::Buf(&mut a), Arg::Buf(&mut dout), val(37u32)],
                global1,
                local,
            );
            vec![dout]
        }
        "uniform_branch" => {
            let mut all = Vec::new();
            for mode in 0..5i32 {
                let (mut a, mut o) = (floats(N, 18), vec![0u8; 4 * N]);
                run_2d(
                    p,
                    kernel,
                    &mut [Arg::Buf(&mut a), Arg::Buf(&mut o), val(mode)],
                    global1,
                    local,
                );
                all.push(o);
            }
            all
        }
        "calls_and_atomics" => {
            let (mut a, mut o, mut counter, mut flag) =
                (floats(N, 19), vec![0u8; 4 * N], vec![0u8; 4], vec![0u8; 4]);
            run_2d(
                p,
                kernel,
                &mut [
                    Arg::Buf(&mut a),
                    Arg::Buf(&mut o),
                    Arg::Buf(&mut counter),
                    Arg::Buf(&mut flag),
                ],
                global1,
                local,
            );
            vec![o, counter, flag]
        }
        "divergent" => {
            let (mut a, mut o) = (floats(N, 20), vec![0u8; 4 * N]);
            run_2d(
                p,
                kernel,
                &mut [Arg::Buf(&mut a), Arg::Buf(&mut o)],
                global1,
                local,
            );
            vec![o]
        }
        "guarded" => {
            let mut all = Vec::new();
            // n: none, a part that is not a multiple of four, all.
            for n in [0u32, 103, N as u32] {
                let (mut a, mut o) = (floats(N, 21), vec![0xabu8; 4 * N]);
                run_2d(
                    p,
                    kernel,
                    &mut [Arg::Buf(&mut a), Arg::Buf(&mut o), val(n)],
                    global1,
                    local,
                );
                all.push(o);
            }
            all
        }
        "nested_ifs" => {
            let mut r = Rng(22);
            let v: Vec<i32> = (0..N)
                .map(|_| match r.next() % 4 {
                    0 => -((r.next() % 1000) as i32),
                    1 => 2_000_000 + (r.next() % 1000) as i32,
                    _ => (r.next() % 1000) as i32,
                })
                .collect();
            let (mut a, mut o, mut other, mut table) = (
                bytes_of(&v),
                vec![0u8; 8 * N],
                vec![0u8; 4 * N],
                bytes_of(&[7i32, 11]),
            );
            run_2d(
                p,
                kernel,
                &mut [
                    Arg::Buf(&mut a),
                    Arg::Buf(&mut o),
                    Arg::Buf(&mut other),
                    Arg::Buf(&mut table),
                ],
                global1,
                local,
            );
            vec![o, other]
        }
        "masked_calls" => {
            let (mut a, mut o, mut count) = (floats(N, 23), vec![0u8; 4 * N], vec![0u8; 4]);
            run_2d(
                p,
                kernel,
                &mut [Arg::Buf(&mut a), Arg::Buf(&mut o), Arg::Buf(&mut count)],
                global1,
                local,
            );
            vec![o, count]
        }
        "loop_in_branch" => {
            let (mut a, mut o) = (floats(N + 8, 24), vec![0u8; 4 * N]);
            run_2d(
                p,
                kernel,
                &mut [Arg::Buf(&mut a), Arg::Buf(&mut o), val(200u32), val(8u32)],
                global1,
                local,
            );
            vec![o]
        }
        "mandel" => {
            let mut r = Rng(25);
            let c: Vec<f32> = (0..2 * N)
                .map(|k| {
                    let u = (r.next() % 10_000) as f32 / 10_000.0;
                    if k % 2 == 0 {
                        -2.0 + 2.5 * u
                    } else {
                        -1.25 + 2.5 * u
                    }
                })
                .collect();
            let (mut cb, mut o) = (bytes_of(&c), vec![0u8; 4 * N]);
            run_2d(
                p,
                kernel,
                &mut [Arg::Buf(&mut cb), Arg::Buf(&mut o), val(200u32)],
                global1,
                local,
            );
            vec![o]
        }
        "collatz" => {
            let (mut a, mut o, mut t) = (words(N, 26), vec![0u8; 8 * N], vec![0u8; 16 * N]);
            run_2d(
                p,
                kernel,
                &mut [Arg::Buf(&mut a), Arg::Buf(&mut o), Arg::Buf(&mut t)],
                global1,
                local,
            );
            vec![o, t]
        }
        "nested_divergent" => {
            let mut r = Rng(28);
            let v: Vec<u32> = (0..N).map(|_| (r.next() % 5000) as u32).collect();
            let (mut a, mut o) = (bytes_of(&v), vec![0u8; 4 * N]);
            run_2d(
                p,
                kernel,
                &mut [Arg::Buf(&mut a), Arg::Buf(&mut o)],
                global1,
                local,
            );
            vec![o]
        }
        "nested_loops" => {
            let mut r = Rng(27);
            let v: Vec<u32> = (0..N).map(|_| (r.next() % 5000) as u32).collect();
            let (mut a, mut o) = (bytes_of(&v), vec![0u8; 4 * N]);
            run_2d(
                p,
                kernel,
                &mut [Arg::Buf(&mut a), Arg::Buf(&mut o), val(3u32)],
                global1,
                local,
            );
            vec![o]
        }
        "clamped_loads" => {
            let mut all = Vec::new();
            for (mode, n, off) in modes_sizes_offsets(&[0, 1, 2, 3, 4]) {
                // `min(i + off, n - 1)` (mode 1) with a negative offset reads in[-3]: the
                // kernel gets a pointer 8 floats into the buffer, so that read sees data both
                // builds share (it read whatever lay before the allocation, which made the
                // comparison fail now and then).
                let (mut a, mut o) = (floats(2 * N + 8, 28), vec![0u8; 4 * N]);
                run_2d(
                    p,
                    kernel,
                    &mut [
                        Arg::Buf(&mut a[32..]),
                        Arg::Buf(&mut o),
                        val(n),
                        val(off),
                        val(mode),
                    ],
                    global1,
                    local,
                );
                all.push(o);
            }
            all
        }
        "minmax_uint" => {
            let mut all = Vec::new();
            for (lo, hi) in [(0u32, N as u32 - 1), (10, 100), (0, 0), (40, 30)] {
                let (mut a, mut o) = (words(N + 8, 29), vec![0u8; 4 * N]);
                run_2d(
                    p,
                    kernel,
                    &mut [Arg::Buf(&mut a), Arg::Buf(&mut o), val(lo), val(hi)],
                    global1,
                    local,
                );
                all.push(o);
            }
            all
        }
        "clamped_stores" | "masked_clamped" => {
            let mut all = Vec::new();
            for (_, n, off) in modes_sizes_offsets(&[0]) {
                let (mut a, mut o) = (floats(N, 30), floats(N, 31));
                run_2d(
                    p,
                    kernel,
                    &mut [Arg::Buf(&mut a), Arg::Buf(&mut o), val(n), val(off)],
                    global1,
                    local,
                );
                all.push(o);
            }
            all
        }
        "modulo_index" => {
            let mut all = Vec::new();
            for (n, off) in [(256u32, 0u32), (100, 3), (6, 250), (1, 0)] {
                let (mut a, mut o) = (floats(N, 32), floats(N, 33));
                run_2d(
                    p,
                    kernel,
                    &mut [Arg::Buf(&mut a), Arg::Buf(&mut o), val(n), val(off)],
                    global1,
                    local,
                );
                all.push(o);
            }
            all
        }
        "clamped_size_t" => {
            let mut all = Vec::new();
            for (_, n, off) in modes_sizes_offsets(&[0]) {
                let (mut a, mut o) = (floats(N, 34), floats(N, 35));
                run_2d(
                    p,
                    kernel,
                    &mut [
                        Arg::Buf(&mut a),
                        Arg::Buf(&mut o),
                        val(n as u64),
                        val(i64::from(off)),
                    ],
                    global1,
                    local,
                );
                all.push(o);
            }
            all
        }
        other => panic!("no inputs for {other}"),
    }
}

/// (mode, n, off) for the clamped-index kernels: whole and partial ranges, shifts either way.
fn modes_sizes_offsets(modes: &[i32]) -> Vec<(i32, i32, i32)> {
    let mut v = Vec::new();
    for &mode in modes {
        for n in [256, 101] {
            for off in [-3, 0, 1, 6] {
                v.push((mode, n, off));
            }
        }
    }
    v
}

const KERNELS: [&str; 31] = [
    "vadd",
    "triad_uint",
    "int_index",
    "nbody",
    "sgemm",
    "conv",
    "hash",
    "mixed",
    "wide_narrow",
    "double_loop",
    "uniform_branch",
    "calls_and_atomics",
    "divergent",
    "private_array",
    "md5_block",
    "private_mixed",
    "guarded",
    "nested_ifs",
    "masked_calls",
    "loop_in_branch",
    "too_large",
    "mandel",
    "collatz",
    "nested_loops",
    "nested_divergent",
    "clamped_loads",
    "minmax_uint",
    "clamped_stores",
    "masked_clamped",
    "modulo_index",
    "clamped_size_t",
];

#[test]
fn vectorised_and_scalar_kernels_agree_bit_for_bit() {
    for recipe in RECIPES {
        let (vector, scalar) = (build(recipe, true), build(recipe, false));
        for kernel in KERNELS {
            assert_eq!(
                scalar.kernel(kernel).expect("kernel").vectorization,
                Vectorization::Scalar("vectorisation is off".into())
            );
            for local in [
                [1, 1],
                [3, 1],
                [4, 1],
                [7, 2],
                [8, 1],
                [64, 1],
                [65, 1],
                [16, 4],
            ] {
                let (v, s) = (
                    outputs(&vector, kernel, local),
                    outputs(&scalar, kernel, local),
                );
                for (o, (vo, so)) in v.iter().zip(&s).enumerate() {
                    if let Some(at) = vo.iter().zip(so).position(|(a, b)| a != b) {
                        panic!(
                            "{recipe:?} {kernel} local {local:?}: output {o} differs from byte {at}: vector {:?}, scalar {:?}",
                            &vo[at..(at + 16).min(vo.len())],
                            &so[at..(at + 16).min(so.len())]
                        );
                    }
                }
            }
        }
    }
}

extern "C" {
    fn mmap(addr: *mut u8, len: usize, prot: i32, flags: i32, fd: i32, off: i64) -> *mut u8;
    fn mprotect(addr: *mut u8, len: usize, prot: i32) -> i32;
    fn munmap(addr: *mut u8, len: usize) -> i32;
}

/// `(uint)i + base` indices around 2^32: the lanes of a vector iteration straddling the wrap
/// are 16 GiB apart, so they must not be loaded as one vector (the run-time guard of
/// `Guarded` takes the per-lane path); iterations that do not wrap are contiguous. Both ends
/// of the jump are mapped (16 GiB reserved, the first and last pages readable).
#[test]
fn wrapping_32_bit_indices_take_the_per_lane_path() {
    const PAGE: usize = 4096;
    const SPAN: usize = 1 << 34; // 2^32 floats
    let len = SPAN + PAGE;
    // SAFETY: an anonymous, private, unreserved PROT_NONE mapping owned by this test.
    let region = unsafe { mmap(std::ptr::null_mut(), len, 0, 0x02 | 0x20 | 0x4000, -1, 0) };
    assert!(
        !region.is_null() && region as isize != -1,
        "cannot reserve 16 GiB"
    );
    // SAFETY: both pages lie inside the mapping just made.
    unsafe {
        assert_eq!(mprotect(region, PAGE, 3), 0);
        assert_eq!(mprotect(region.add(SPAN - PAGE), 2 * PAGE, 3), 0);
    }
    // in[k] for k near 2^32 sits at the end of the span, for small k at its start.
    let at = |k: u32| -> *mut f32 {
        // SAFETY: the callers pass indices whose address is in a readable page.
        unsafe { region.add(4 * k as usize).cast::<f32>() }
    };
    for k in (0..16u32).chain(u32::MAX - 15..=u32::MAX) {
        // SAFETY: see `at`.
        unsafe { *at(k) = k as f32 * 0.5 + (k >> 31) as f32 * 1000.0 };
    }
    let base: u32 = u32::MAX - 5; // items 0..5 before the wrap, 6.. after
    for (recipe, kernel) in RECIPES
        .into_iter()
        .flat_map(|r| [(r, "wrapping_index"), (r, "wrapping_min")])
    {
        let p = build(recipe, true);
        assert_eq!(
            p.kernel(kernel).expect("kernel").vectorization,
            Vectorization::Vectorized {
                lanes: vector_lanes()
            }
        );
        let mut out = vec![0u8; 4 * 16];
        let mut in_ptr = Arg::Val((region as u64).to_ne_bytes().to_vec());
        let args = &mut [
            std::mem::replace(&mut in_ptr, Arg::Val(Vec::new())),
            Arg::Buf(&mut out),
            val(base),
        ];
        run_2d(&p, kernel, args, [16, 1], [16, 1]);
        for i in 0..16u32 {
            let j = i.wrapping_add(base);
            // SAFETY: see `at`.
            let want = unsafe { *at(j) } * 2.0;
            let got =
                f32::from_ne_bytes(out[4 * i as usize..4 * i as usize + 4].try_into().unwrap());
            assert_eq!(got, want, "{recipe:?} {kernel} item {i} index {j:#x}");
        }
    }
    // SAFETY: the mapping made above, no longer used.
    unsafe { munmap(region, len) };
}

#[test]
fn uniform_kernels_are_vectorised_divergent_ones_are_not() {
    let p = build(Recipe::Optimized, true);
    for kernel in KERNELS {
        let v = p.kernel(kernel).expect("kernel").vectorization.clone();
        match kernel {
            "too_large" => assert_eq!(
                v,
                Vectorization::Scalar(
                    "too large: a vector copy would double its build time".into()
                )
            ),
            _ => assert_eq!(
                v,
                Vectorization::Vectorized {
                    lanes: vector_lanes()
                },
                "{kernel}"
            ),
        }
    }
}

/// Kernels whose work-items load and store whole vector elements (vectorize/transpose.rs),
/// with the size of one element and the shuffles of their transposes left in the optimised
/// build once Cranelift has optimised it (dead ones removed).
const ELEMENT_KERNELS: [(&str, usize, usize); 9] = [
    // One 4×4 transpose (8 shuffles) for the load, one for the store.
    ("elements_float4", 16, 16),
    ("elements_uint4", 16, 16),
    ("elements_float8", 32, 32),
    ("elements_float16", 64, 64),
    // k = 2: two shuffles each way.
    ("elements_int2", 8, 4),
    ("elements_masked", 16, 16),
    // Two loads and two stores of the element, none merged across the store to `c`.
    ("elements_alias", 16, 32),
    ("md5x4_large", 16, 16),
    // Stored as loaded: no transpose.
    ("elements_copy", 64, 0),
];

/// Outputs of one element kernel on fresh inputs (the same for both builds).
fn element_outputs(p: &Program, kernel: &str, size: usize, local: [u64; 2]) -> Vec<Vec<u8>> {
    const N: usize = 256;
    let global = [N as u64, 1];
    let input = |seed| {
        if kernel.contains("float") || kernel.ends_with("masked") || kernel.ends_with("alias") {
            floats(size / 4 * N, seed)
        } else {
            words(size / 4 * N, seed)
        }
    };
    match kernel {
        "elements_masked" => {
            let mut all = Vec::new();
            for n in [0u32, 103, N as u32] {
                let (mut a, mut o) = (input(30), vec![0xabu8; size * N]);
                run_2d(
                    p,
                    kernel,
                    &mut [Arg::Buf(&mut a), Arg::Buf(&mut o), val(n)],
                    global,
                    local,
                );
                all.push(o);
            }
            all
        }
        "elements_alias" => {
            // The same buffer as both arguments.
            let mut a = input(31);
            let ptr = (a.as_mut_ptr() as u64).to_ne_bytes().to_vec();
            run_2d(
                p,
                kernel,
                &mut [Arg::Val(ptr.clone()), Arg::Val(ptr)],
                global,
                local,
            );
            vec![a]
        }
        _ => {
            let (mut a, mut o) = (input(32), vec![0u8; size * N]);
            run_2d(
                p,
                kernel,
                &mut [Arg::Buf(&mut a), Arg::Buf(&mut o)],
                global,
                local,
            );
            vec![o]
        }
    }
}

#[test]
fn whole_elements_are_transposed_and_agree_bit_for_bit() {
    let dumps = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("vectorize-elements-{}", std::process::id()));
    for recipe in RECIPES {
        let spirv = spirv_from_c("vectorize.cl", recipe, common::CL1_2);
        let module = ferrocl_frontend::parse(&spirv).unwrap_or_else(|e| panic!("frontend: {e}"));
        let dir = dumps.join(format!("{recipe:?}"));
        let vector = compile(
            &module,
            &BuildOptions {
                dump_dir: Some(dir.clone()),
                // The transposes are what is tested here: the packing of explicit vectors
                // would take these kernels (tests/vector_pack.rs).
                pack_vectors: false,
                ..default_options()
            },
        )
        .unwrap_or_else(|e| panic!("codegen: {e}"));
        let scalar = build(recipe, false);
        for (kernel, size, shuffles) in ELEMENT_KERNELS {
            if let Recipe::Optimized = recipe {
                assert_eq!(
                    vector.kernel(kernel).expect("kernel").vectorization,
                    Vectorization::Vectorized {
                        lanes: vector_lanes()
                    },
                    "{kernel}"
                );
                let clif = std::fs::read_to_string(dir.join(format!("{kernel}.opt.clif")))
                    .unwrap_or_else(|e| panic!("{kernel}: the IR dump: {e}"));
                if vector_lanes() == 4 {
                    assert_eq!(
                        clif.matches(" = shuffle ").count(),
                        shuffles,
                        "{kernel}: shuffles of the transposed accesses"
                    );
                } else {
                    // Wide rows (one word per lane) and their unzips, which LLVM folds into
                    // shuffles: one row load per word of an element loaded, and no gather.
                    let rows = size / 4 * if kernel == "elements_alias" { 2 } else { 1 };
                    let row = format!(" = load.i32x{} ", vector_lanes());
                    assert_eq!(clif.matches(&row).count(), rows, "{kernel}: row loads");
                    assert!(!clif.contains("call "), "{kernel}: a call (a gather?)");
                }
            }
            for local in [[1, 1], [3, 1], [4, 1], [7, 1], [8, 1], [64, 1], [65, 1]] {
                let (v, s) = (
                    element_outputs(&vector, kernel, size, local),
                    element_outputs(&scalar, kernel, size, local),
                );
                for (o, (vo, so)) in v.iter().zip(&s).enumerate() {
                    if let Some(at) = vo.iter().zip(so).position(|(a, b)| a != b) {
                        panic!(
                            "{recipe:?} {kernel} local {local:?}: output {o} differs from byte {at}: vector {:?}, scalar {:?}",
                            &vo[at..(at + 16).min(vo.len())],
                            &so[at..(at + 16).min(so.len())]
                        );
                    }
                }
            }
        }
    }
    let _ = std::fs::remove_dir_all(&dumps);
}

/// Accesses through clamped, min/max and selected indices get a vector access (behind the
/// run-time contiguity check) in both recipes, where before they were one access per lane.
/// Vector loads are counted in the IR (`load.f32x4`), vector stores in the machine code (an
/// XMM register stored to memory: the IR does not print a store's type). That the results
/// match the scalar build is `vectorised_and_scalar_kernels_agree_bit_for_bit`.
#[test]
fn clamped_indices_get_a_vector_access_when_contiguous() {
    // (kernel, vector loads, vector stores), at least.
    let expected = [
        ("conv", 1, 0),
        ("clamped_loads", 2, 0),
        ("minmax_uint", 2, 0),
        ("clamped_stores", 0, 1),
        ("masked_clamped", 1, 1),
        ("modulo_index", 1, 1),
        ("clamped_size_t", 1, 1),
    ];
    for recipe in RECIPES {
        let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
            .join(format!("vectorize-contiguity-{recipe:?}"));
        let spirv = spirv_from_c("vectorize.cl", recipe, common::CL1_2);
        let module = ferrocl_frontend::parse(&spirv).unwrap_or_else(|e| panic!("frontend: {e}"));
        let options = BuildOptions {
            dump_dir: Some(dir.clone()),
            ..default_options()
        };
        let p = compile(&module, &options).unwrap_or_else(|e| panic!("codegen: {e}"));
        for (kernel, want_loads, want_stores) in expected {
            assert_eq!(
                p.kernel(kernel).expect("kernel").vectorization,
                Vectorization::Vectorized {
                    lanes: vector_lanes()
                },
                "{recipe:?} {kernel}"
            );
            let read = |suffix: &str| {
                std::fs::read_to_string(dir.join(format!("{kernel}.{suffix}")))
                    .unwrap_or_else(|e| panic!("{recipe:?} {kernel}: {suffix} dump: {e}"))
            };
            let n = vector_lanes();
            let ir = read("clif");
            let loads = ir
                .lines()
                .filter(|l| {
                    l.contains(&format!("= load.f32x{n}")) || l.contains(&format!("= load.i32x{n}"))
                })
                .count();
            // Cranelift's machine code, or the wide backend's LLVM IR (its stores as the
            // translation left them).
            let stores = if n == 4 {
                read("s")
                    .lines()
                    .filter(|l| {
                        let l = l.trim_start().trim_start_matches('v');
                        ["movups %xmm", "movdqu %xmm"]
                            .iter()
                            .any(|m| l.starts_with(m))
                            && l.contains('(')
                    })
                    .count()
            } else {
                read("ll")
                    .lines()
                    .filter(|l| {
                        let l = l.trim_start();
                        l.starts_with(&format!("store <{n} x float>"))
                            || l.starts_with(&format!("store <{n} x i32>"))
                    })
                    .count()
            };
            assert!(
                loads >= want_loads && stores >= want_stores,
                "{recipe:?} {kernel}: {loads} vector loads, {stores} vector stores, \
                 want {want_loads} and {want_stores}"
            );
        }
    }
}

#[test]
fn affine_64_bit_compares_agree_at_every_wrap() {
    for recipe in RECIPES {
        let p = build(recipe, true);
        assert_eq!(
            p.kernel("bounds_u64").expect("kernel").vectorization,
            Vectorization::Vectorized {
                lanes: vector_lanes()
            }
        );
        let n = 40usize;
        let edges = [
            0u64,
            1,
            2,
            5,
            41,
            u64::MAX,
            u64::MAX - 1,
            u64::MAX - 2,
            u64::MAX - 7,
            u64::MAX - 40,
            1 << 63,
            (1 << 63) + 3,
            (1 << 32) - 2,
        ];
        for &off in &edges {
            for &bound in edges
                .iter()
                .chain(&[off.wrapping_add(7), off.wrapping_add(60)])
            {
                let mut out = vec![0u8; 4 * n];
                run_2d(
                    &p,
                    "bounds_u64",
                    &mut [Arg::Buf(&mut out), val(off), val(bound)],
                    [n as u64, 1],
                    [16, 1],
                );
                for i in 0..n {
                    let a = (i as u64 * 3).wrapping_add(off);
                    let want = u32::from(a < bound)
                        | u32::from(a <= bound) << 1
                        | u32::from(a > bound) << 2
                        | u32::from(a >= bound) << 3
                        | u32::from(bound > a) << 4
                        | u32::from(bound <= a) << 5
                        | u32::from(a < bound) << 6;
                    let got = u32::from_ne_bytes(out[4 * i..4 * i + 4].try_into().unwrap());
                    assert_eq!(
                        got, want,
                        "{recipe:?} off {off:#x} bound {bound:#x} item {i}"
                    );
                }
            }
        }
    }
}
