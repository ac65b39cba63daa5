//! Codegen end to end without the runtime: OpenCL C → SPIR-V (clang-15 + llvm-spirv-15, at -O0
//! and with the optimising recipe) → frontend → JIT, then the work-group functions are called
//! directly for every group of an NDRange and results are checked against host references.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use ferrocl_codegen::{
    compile, BarrierSchedule, BuildOptions, GroupInfo, Program, PRINTF_BUFFER_HEADER,
};
use ferrocl_frontend::{PrintfArg, PrintfConversion, PrintfPiece};

mod common;

use common::{clang_to_spirv, Recipe};

fn out_dir() -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("codegen-spirv");
    std::fs::create_dir_all(&dir).expect("create temp dir");
    dir
}

fn run(cmd: &mut Command) {
    let out = cmd.output().unwrap_or_else(|e| {
        panic!("cannot run {cmd:?}: {e} (install clang-15, llvm-15, llvm-spirv-15)")
    });
    assert!(
        out.status.success(),
        "{cmd:?} failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn spirv(source: &str, recipe: Recipe) -> Vec<u8> {
    spirv_with(source, recipe, &["-cl-std=CL1.2"])
}

/// OpenCL C 3.0 with the optional features these tests exercise.
const CL3_COLLECTIVES: &[&str] = &[
    "-cl-std=CL3.0",
    "-Xclang",
    "-cl-ext=-all,+__opencl_c_work_group_collective_functions,+__opencl_c_int64,+cl_khr_fp64,+__opencl_c_fp64",
];

fn spirv_with(source: &str, recipe: Recipe, language: &[&str]) -> Vec<u8> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/kernels")
        .join(source);
    // The cache name carries (a hash of) the flags: the same source is built with different
    // ones, and long extension lists would exceed the file-name limit.
    let flags = {
        use std::hash::{Hash, Hasher};
        let mut h = std::collections::hash_map::DefaultHasher::new();
        language.hash(&mut h);
        format!("{:016x}", h.finish())
    };
    let stem = format!("{}-{recipe:?}-{flags}", source.trim_end_matches(".cl"));
    // llvm-spirv-15 asserts on -g output limited to SPIR-V 1.0; 1.4 works. The non-uniform
    // sub-group instructions need SPIR-V 1.3.
    let max_version = if language.contains(&"-g") {
        "--spirv-max-version=1.4"
    } else if language.concat().contains("cl_khr_subgroup_") {
        "--spirv-max-version=1.3"
    } else {
        "--spirv-max-version=1.0"
    };
    clang_to_spirv(
        &src,
        recipe,
        language,
        &stem,
        &[max_version, "--spirv-ext=+SPV_KHR_subgroup_rotate"],
    )
}

/// Programs built once per test binary, by source and recipe (CL 1.2 sources).
fn cached(source: &'static str, recipe: Recipe) -> &'static Program {
    type Cache =
        std::sync::Mutex<std::collections::HashMap<(&'static str, bool), &'static Program>>;
    static CACHE: OnceLock<Cache> = OnceLock::new();
    let key = (source, matches!(recipe, Recipe::Optimized));
    let mut cache = CACHE
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|p| p.into_inner());
    if let Some(p) = cache.get(&key) {
        return p;
    }
    // Leaked on purpose: the programs live as long as the test binary.
    let p: &'static Program = Box::leak(Box::new(build(source, recipe)));
    cache.insert(key, p);
    p
}

fn program(recipe: Recipe) -> &'static Program {
    cached("basic.cl", recipe)
}

fn barrier_program(recipe: Recipe) -> &'static Program {
    cached("barriers.cl", recipe)
}

fn conversion_program(recipe: Recipe) -> &'static Program {
    cached("conversions.cl", recipe)
}

fn atomic_program(recipe: Recipe) -> &'static Program {
    cached("atomics.cl", recipe)
}

fn build(source: &str, recipe: Recipe) -> Program {
    build_with(source, recipe, &["-cl-std=CL1.2"])
}

fn build_with(source: &str, recipe: Recipe, language: &[&str]) -> Program {
    let module = ferrocl_frontend::parse(&spirv_with(source, recipe, language))
        .unwrap_or_else(|e| panic!("frontend: {e}"));
    compile(&module, &BuildOptions::default()).unwrap_or_else(|e| panic!("codegen: {e}"))
}

/// Argument block builder following the kernel's `ArgSlot` layout.
struct Args {
    block: Vec<u64>,
}

impl Args {
    fn new(program: &Program, kernel: &str) -> (Args, &'static str) {
        let k = program
            .kernel(kernel)
            .unwrap_or_else(|| panic!("no kernel {kernel}"));
        (
            Args {
                block: vec![0; k.args_size.div_ceil(8).max(1)],
            },
            "",
        )
    }
    fn set(&mut self, program: &Program, kernel: &str, index: usize, bytes: &[u8]) {
        let slot = program.kernel(kernel).expect("kernel").args[index];
        assert_eq!(slot.size, bytes.len(), "argument {index} size");
        // SAFETY: the block holds `args_size` bytes and the slot lies inside it.
        let base = self.block.as_mut_ptr().cast::<u8>();
        unsafe {
            std::ptr::copy_nonoverlapping(bytes.as_ptr(), base.add(slot.offset), bytes.len())
        };
    }
    fn ptr<T>(&mut self, program: &Program, kernel: &str, index: usize, data: &mut [T]) {
        let p = data.as_mut_ptr() as u64;
        self.set(program, kernel, index, &p.to_ne_bytes());
    }
}

fn launch(
    program: &Program,
    kernel: &str,
    args: &Args,
    work_dim: u32,
    offset: [u64; 3],
    global: [u64; 3],
    local: [u64; 3],
) {
    launch_printing(program, kernel, args, work_dim, offset, global, local, 0);
}

/// [`launch`] with `GroupInfo::printf_buffer` set.
#[allow(clippy::too_many_arguments)]
fn launch_printing(
    program: &Program,
    kernel: &str,
    args: &Args,
    work_dim: u32,
    offset: [u64; 3],
    global: [u64; 3],
    local: [u64; 3],
    printf_buffer: u64,
) {
    let k = program.kernel(kernel).expect("kernel");
    let num_groups = [0, 1, 2].map(|d| global[d].div_ceil(local[d]));
    let mut arena = vec![0u128; 4096];
    let items = (local[0] * local[1] * local[2]) as usize;
    let mut frames = vec![0u128; (k.work_item_frame_size * items).div_ceil(16).max(1)];
    for gz in 0..num_groups[2] {
        for gy in 0..num_groups[1] {
            for gx in 0..num_groups[0] {
                let group_id = [gx, gy, gz];
                let local_size =
                    [0, 1, 2].map(|d| (global[d] - group_id[d] * local[d]).min(local[d]));
                let info = GroupInfo {
                    global_offset: offset,
                    global_size: global,
                    local_size,
                    enqueued_local_size: local,
                    group_id,
                    num_groups,
                    work_dim,
                    frames: frames.as_mut_ptr() as u64,
                    printf_buffer,
                    local_mem_size: (arena.len() * 16) as u64,
                    frames_size: (frames.len() * 16) as u64,
                };
                // SAFETY: the argument block matches the kernel's layout, every buffer outlives
                // the call and is large enough for the NDRange, the arena is private.
                unsafe {
                    k.run_group(args.block.as_ptr().cast(), &info, arena.as_mut_ptr().cast())
                };
            }
        }
    }
}

fn both(mut f: impl FnMut(Recipe)) {
    f(Recipe::O0);
    f(Recipe::Optimized);
}

#[test]
fn vector_add() {
    both(|r| {
        let p = program(r);
        let n = 1000;
        let mut a: Vec<f32> = (0..n).map(|i| i as f32 * 0.5).collect();
        let mut b: Vec<f32> = (0..n).map(|i| 3.0 - i as f32).collect();
        let mut c = vec![0f32; n];
        let (mut args, _) = Args::new(p, "vadd");
        args.ptr(p, "vadd", 0, &mut a);
        args.ptr(p, "vadd", 1, &mut b);
        args.ptr(p, "vadd", 2, &mut c);
        launch(p, "vadd", &args, 1, [0; 3], [n as u64, 1, 1], [64, 1, 1]);
        for i in 0..n {
            assert_eq!(c[i], a[i] + b[i], "{r:?} element {i}");
        }
    });
}

#[test]
fn saxpy() {
    both(|r| {
        let p = program(r);
        let n = 257;
        let mut x: Vec<f32> = (0..n).map(|i| i as f32).collect();
        let mut y: Vec<f32> = (0..n).map(|i| 1.0 / (i as f32 + 1.0)).collect();
        let expect: Vec<f32> = x.iter().zip(&y).map(|(x, y)| 2.5 * x + y).collect();
        let (mut args, _) = Args::new(p, "saxpy");
        args.set(p, "saxpy", 0, &2.5f32.to_ne_bytes());
        args.ptr(p, "saxpy", 1, &mut x);
        args.ptr(p, "saxpy", 2, &mut y);
        launch(p, "saxpy", &args, 1, [0; 3], [n as u64, 1, 1], [16, 1, 1]);
        assert_eq!(y, expect, "{r:?}");
    });
}

#[test]
fn matmul_naive() {
    both(|r| {
        let p = program(r);
        let (m, k, n) = (7usize, 5usize, 9usize);
        let mut a: Vec<f32> = (0..m * k).map(|i| (i % 7) as f32 - 3.0).collect();
        let mut b: Vec<f32> = (0..k * n).map(|i| (i % 5) as f32 * 0.25).collect();
        let mut c = vec![0f32; m * n];
        let (mut args, _) = Args::new(p, "matmul");
        args.ptr(p, "matmul", 0, &mut a);
        args.ptr(p, "matmul", 1, &mut b);
        args.ptr(p, "matmul", 2, &mut c);
        args.set(p, "matmul", 3, &(n as i32).to_ne_bytes());
        args.set(p, "matmul", 4, &(k as i32).to_ne_bytes());
        launch(
            p,
            "matmul",
            &args,
            2,
            [0; 3],
            [n as u64, m as u64, 1],
            [3, 7, 1],
        );
        for row in 0..m {
            for col in 0..n {
                let mut acc = 0f32;
                for i in 0..k {
                    acc += a[row * k + i] * b[i * n + col];
                }
                assert_eq!(c[row * n + col], acc, "{r:?} ({row},{col})");
            }
        }
    });
}

#[test]
fn mandelbrot() {
    both(|r| {
        let p = program(r);
        let (w, h, max_iter) = (64usize, 48usize, 200i32);
        let (x0, y0, step) = (-2.0f32, -1.2f32, 0.05f32);
        let mut out = vec![-1i32; w * h];
        let (mut args, _) = Args::new(p, "mandel");
        args.ptr(p, "mandel", 0, &mut out);
        args.set(p, "mandel", 1, &(w as i32).to_ne_bytes());
        args.set(p, "mandel", 2, &x0.to_ne_bytes());
        args.set(p, "mandel", 3, &y0.to_ne_bytes());
        args.set(p, "mandel", 4, &step.to_ne_bytes());
        args.set(p, "mandel", 5, &max_iter.to_ne_bytes());
        launch(
            p,
            "mandel",
            &args,
            2,
            [0; 3],
            [w as u64, h as u64, 1],
            [8, 8, 1],
        );
        for py in 0..h {
            for px in 0..w {
                let (cr, ci) = (x0 + px as f32 * step, y0 + py as f32 * step);
                let (mut zr, mut zi, mut it) = (0f32, 0f32, 0);
                while it < max_iter {
                    let (zr2, zi2) = (zr * zr, zi * zi);
                    if zr2 + zi2 > 4.0 {
                        break;
                    }
                    let t = zr2 - zi2 + cr;
                    zi = 2.0 * zr * zi + ci;
                    zr = t;
                    it += 1;
                }
                assert_eq!(out[py * w + px], it, "{r:?} pixel ({px},{py})");
            }
        }
    });
}

#[test]
fn integer_hash() {
    both(|r| {
        let p = program(r);
        let n = 300;
        let mut input: Vec<u32> = (0..n as u32)
            .map(|i| i.wrapping_mul(2654435761) ^ (i << 3))
            .collect();
        let mut out = vec![0u32; n];
        let mut out64 = vec![0u64; n];
        let (mut args, _) = Args::new(p, "hash");
        args.ptr(p, "hash", 0, &mut input);
        args.ptr(p, "hash", 1, &mut out);
        args.ptr(p, "hash", 2, &mut out64);
        launch(p, "hash", &args, 1, [0; 3], [n as u64, 1, 1], [7, 1, 1]);
        for i in 0..n {
            let mut x = input[i];
            x = x.rotate_left(7) ^ x.wrapping_mul(0x9E37_79B9);
            x = x.wrapping_add(x.leading_zeros() + x.count_ones() * 3);
            assert_eq!(out[i], x, "{r:?} uint {i}");
            let y = (u64::from(input[i]) << 32) | u64::from(input[i]);
            let e = y
                .rotate_left(13)
                .wrapping_add(u64::from(y.leading_zeros()))
                .wrapping_add(u64::from(y.count_ones()));
            assert_eq!(out64[i], e, "{r:?} ulong {i}");
        }
    });
}

#[test]
fn float4_constant_and_struct_arguments() {
    both(|r| {
        let p = program(r);
        let n = 33;
        let mut a: Vec<[f32; 4]> = (0..n)
            .map(|i| {
                [
                    i as f32 * 0.5,
                    -(i as f32),
                    1.25 * i as f32,
                    0.1 * i as f32 - 1.5,
                ]
            })
            .collect();
        let mut w: Vec<[f32; 4]> = vec![[1.0, 2.0, 0.5, -1.0], [0.25, -0.5, 1.0, 2.0]];
        let mut out = vec![0f32; n];
        let params: [u8; 8] = {
            let mut b = [0u8; 8];
            b[..4].copy_from_slice(&1.5f32.to_ne_bytes());
            b[4..].copy_from_slice(&3i32.to_ne_bytes());
            b
        };
        let (mut args, _) = Args::new(p, "vec4");
        args.ptr(p, "vec4", 0, &mut a);
        args.ptr(p, "vec4", 1, &mut w);
        args.set(p, "vec4", 2, &params);
        args.ptr(p, "vec4", 3, &mut out);
        launch(p, "vec4", &args, 1, [0; 3], [n as u64, 1, 1], [11, 1, 1]);
        for i in 0..n {
            let v: Vec<f32> = (0..4).map(|j| a[i][j] * w[0][j] + 3.0).collect();
            let dot = v[0] * w[1][0] + v[1] * w[1][1] + v[2] * w[1][2] + v[3] * w[1][3];
            let e = dot * 1.5 + v[0].abs().max(v[1]) + v[2].floor() + v[3].clamp(-1.0, 1.0);
            assert!(
                (out[i] - e).abs() <= e.abs() * 1e-6,
                "{r:?} {i}: {} vs {e}",
                out[i]
            );
        }
    });
}

#[test]
fn work_item_functions_in_three_dimensions_with_offsets() {
    both(|r| {
        let p = program(r);
        let global = [6u64, 4, 3];
        let local = [3u64, 2, 3];
        let offset = [5u64, 7, 11];
        let total = (global[0] * global[1] * global[2]) as usize;
        let mut out = vec![0u64; total * 4];
        let (mut args, _) = Args::new(p, "ids");
        args.ptr(p, "ids", 0, &mut out);
        launch(p, "ids", &args, 3, offset, global, local);
        for z in 0..global[2] {
            for y in 0..global[1] {
                for x in 0..global[0] {
                    let lin = ((z * global[1] + y) * global[0] + x) as usize;
                    let g = [x + offset[0], y + offset[1], z + offset[2]];
                    assert_eq!(
                        out[lin * 4],
                        g[0] + 1000 * g[1] + 1_000_000 * g[2],
                        "{r:?} gid"
                    );
                    let l = [x % local[0], y % local[1], z % local[2]];
                    assert_eq!(
                        out[lin * 4 + 1],
                        l[0] + 1000 * l[1] + 1_000_000 * l[2],
                        "{r:?} lid"
                    );
                    let gr = [x / local[0], y / local[1], z / local[2]];
                    assert_eq!(
                        out[lin * 4 + 2],
                        gr[0] + 1000 * gr[1] + 1_000_000 * gr[2],
                        "{r:?} group"
                    );
                    assert_eq!(
                        out[lin * 4 + 3],
                        3 + 10 * local[0] + 1000 * (global[0] / local[0]),
                        "{r:?} dims"
                    );
                }
            }
        }
    });
}

#[test]
fn division_by_zero_and_nan_conversion_do_not_trap() {
    both(|r| {
        let p = program(r);
        let mut a = vec![7i32, i32::MIN, 5, -9];
        let mut b = vec![0i32, -1, 2, 4];
        let mut q = vec![0i32; 4];
        let mut f = vec![f32::NAN, 1e20, -1e20, 3.7];
        let mut conv = vec![0i32; 4];
        let (mut args, _) = Args::new(p, "div_edge");
        args.ptr(p, "div_edge", 0, &mut a);
        args.ptr(p, "div_edge", 1, &mut b);
        args.ptr(p, "div_edge", 2, &mut q);
        args.ptr(p, "div_edge", 3, &mut f);
        args.ptr(p, "div_edge", 4, &mut conv);
        launch(p, "div_edge", &args, 1, [0; 3], [4, 1, 1], [4, 1, 1]);
        // Defined inputs give the C results; x/0 and INT_MIN/-1 only must not trap.
        assert_eq!(q[2], 5 / 2 + 5 % 2, "{r:?}");
        assert_eq!(q[3], -9 / 4 + -9 % 4, "{r:?}");
        assert_eq!(conv[3], 3, "{r:?}");
    });
}

#[test]
fn local_pointer_argument() {
    both(|r| {
        let p = program(r);
        let n = 40;
        let mut input: Vec<i32> = (0..n).collect();
        let mut out = vec![0i32; n as usize];
        let (mut args, _) = Args::new(p, "local_scratch");
        args.ptr(p, "local_scratch", 0, &mut input);
        args.ptr(p, "local_scratch", 1, &mut out);
        args.set(p, "local_scratch", 2, &0u64.to_ne_bytes());
        launch(
            p,
            "local_scratch",
            &args,
            1,
            [0; 3],
            [n as u64, 1, 1],
            [8, 1, 1],
        );
        for i in 0..n as usize {
            assert_eq!(out[i], input[i] * 2 + 1, "{r:?}");
        }
    });
}

#[test]
fn mutated_modules_build_or_fail_cleanly() {
    // Codegen sits behind the frontend's validation, but the rules that validation does not
    // cover yet must still end in a BuildError, not a panic.
    for recipe in [Recipe::O0, Recipe::Optimized] {
        let bytes = spirv("basic.cl", recipe);
        let words = bytes.len() / 4;
        let mut built = 0;
        let mut refused = 0;
        for at in (5..words).step_by(7) {
            for value in [0u32, 1, 0x0000_0003, 0xffff_ffff] {
                let mut m = bytes.clone();
                m[at * 4..at * 4 + 4].copy_from_slice(&value.to_le_bytes());
                let Ok(module) = ferrocl_frontend::parse(&m) else {
                    continue;
                };
                let result = std::panic::catch_unwind(|| {
                    compile(&module, &BuildOptions::default()).map(|_| ())
                });
                match result {
                    Ok(Ok(())) => built += 1,
                    Ok(Err(e)) => {
                        assert!(e.log.starts_with("error:") || e.log.starts_with("internal:"), "unhelpful log: {}", e.log);
                        refused += 1;
                    }
                    Err(_) => panic!("codegen panicked on a module mutated at word {at} with {value:#x} ({recipe:?})"),
                }
            }
        }
        assert!(built + refused > 0);
    }
}

fn set_i32(args: &mut Args, p: &Program, k: &str, i: usize, v: i32) {
    args.set(p, k, i, &v.to_ne_bytes());
}

#[test]
fn work_items_returning_before_a_barrier_leave_the_others_synchronised() {
    both(|r| {
        let p = barrier_program(r);
        for (n, local) in [(13usize, 8u64), (16, 8), (5, 16), (1, 1), (7, 4)] {
            let global = n.div_ceil(local as usize) as u64 * local;
            let mut input: Vec<i32> = (0..global as i32).map(|i| i * 3 + 1).collect();
            let mut out = vec![0i32; global as usize];
            let (mut args, _) = Args::new(p, "early_return");
            args.ptr(p, "early_return", 0, &mut input);
            args.ptr(p, "early_return", 1, &mut out);
            set_i32(&mut args, p, "early_return", 2, n as i32);
            launch(
                p,
                "early_return",
                &args,
                1,
                [0; 3],
                [global, 1, 1],
                [local, 1, 1],
            );
            for (gid, &got) in out.iter().enumerate() {
                let (g, l) = (gid / local as usize, gid % local as usize);
                let start = g * local as usize;
                let active = (local as usize).min(n.saturating_sub(start));
                let want = if gid < n {
                    input[start + active - 1 - l] * 2
                } else {
                    0
                };
                assert_eq!(got, want, "{r:?} n {n} local {local} item {gid}");
            }
        }
        for local in [4u64, 8, 16] {
            let mut out = vec![0i32; 2 * local as usize];
            let (mut args, _) = Args::new(p, "return_between_barriers");
            args.ptr(p, "return_between_barriers", 0, &mut out);
            launch(
                p,
                "return_between_barriers",
                &args,
                1,
                [0; 3],
                [2 * local, 1, 1],
                [local, 1, 1],
            );
            for (gid, &got) in out.iter().enumerate() {
                let l = gid % local as usize;
                // s[l] = l + 1 and t[l] = s[l] + s[l + 1] for the first three.
                let t = [1 + 2, 2 + 3, 3 + 4];
                let want = if l < 3 { t[2 - l] } else { -(l as i32 + 1) };
                assert_eq!(got, want, "{r:?} local {local} item {gid}");
            }
        }
        // Disagreeing barriers: undefined results, but the group finishes and every work-item
        // runs to its end.
        let mut out = vec![0i32; 16];
        let (mut args, _) = Args::new(p, "divergent_barriers");
        args.ptr(p, "divergent_barriers", 0, &mut out);
        launch(
            p,
            "divergent_barriers",
            &args,
            1,
            [0; 3],
            [16, 1, 1],
            [8, 1, 1],
        );
        for (i, &v) in out.iter().enumerate() {
            assert_eq!(v, if i % 2 == 1 { 1 } else { 2 }, "{r:?} item {i}");
        }
    });
}

#[test]
fn values_derived_from_the_local_id_are_recomputed_after_barriers() {
    both(|r| {
        let p = barrier_program(r);
        if let Recipe::Optimized = r {
            let k = p.kernel("reduce_fixed").expect("kernel");
            // The resume state only: the local id, the pointers derived from it and the
            // arguments all stay out of the work-item frame.
            assert_eq!(k.work_item_frame_size, 16);
            // The unrolled tree has one barrier after another: a fixed order of regions.
            assert_eq!(k.barrier_schedule, BarrierSchedule::Static);
            // So does the unrolled loop of many_barriers.
            assert_eq!(
                p.kernel("many_barriers").expect("kernel").barrier_schedule,
                BarrierSchedule::Static
            );
        }
        // Barriers in a loop that may end after any of its rounds: resume states decide.
        assert_eq!(
            p.kernel("loop_break").expect("kernel").barrier_schedule,
            BarrierSchedule::Dynamic
        );
        // Some work-items may return before the barrier: resume states again.
        assert_eq!(
            p.kernel("early_return").expect("kernel").barrier_schedule,
            BarrierSchedule::Dynamic
        );
        assert_eq!(
            program(r).kernel("vadd").map(|k| k.barrier_schedule),
            Some(BarrierSchedule::None)
        );
        let groups = 3usize;
        let mut input: Vec<f32> = (0..64 * groups).map(|i| (i % 29) as f32).collect();
        let mut out = vec![0f32; groups];
        let (mut args, _) = Args::new(p, "reduce_fixed");
        args.ptr(p, "reduce_fixed", 0, &mut input);
        args.ptr(p, "reduce_fixed", 1, &mut out);
        launch(
            p,
            "reduce_fixed",
            &args,
            1,
            [0; 3],
            [64 * groups as u64, 1, 1],
            [64, 1, 1],
        );
        for (g, &got) in out.iter().enumerate() {
            let e: f32 = input[g * 64..(g + 1) * 64].iter().sum();
            assert_eq!(got, e, "{r:?} group {g}");
        }
    });
}

#[test]
fn barrier_reduction_in_local_memory() {
    both(|r| {
        let p = barrier_program(r);
        assert!(p.kernel("reduce_sum").expect("kernel").work_item_frame_size > 0);
        for local in [1u64, 8, 64] {
            let groups = 5u64;
            let n = (local * groups) as usize;
            let mut input: Vec<f32> = (0..n).map(|i| (i % 13) as f32).collect();
            let mut out = vec![0f32; groups as usize];
            let (mut args, _) = Args::new(p, "reduce_sum");
            args.ptr(p, "reduce_sum", 0, &mut input);
            args.ptr(p, "reduce_sum", 1, &mut out);
            args.set(p, "reduce_sum", 2, &0u64.to_ne_bytes());
            launch(
                p,
                "reduce_sum",
                &args,
                1,
                [0; 3],
                [n as u64, 1, 1],
                [local, 1, 1],
            );
            for g in 0..groups as usize {
                let e: f32 = input[g * local as usize..(g + 1) * local as usize]
                    .iter()
                    .sum();
                assert_eq!(out[g], e, "{r:?} local {local} group {g}");
            }
        }
    });
}

#[test]
fn barrier_tiled_matmul() {
    both(|r| {
        let p = barrier_program(r);
        let n = 12usize;
        let mut a: Vec<f32> = (0..n * n).map(|i| (i % 7) as f32 - 2.0).collect();
        let mut b: Vec<f32> = (0..n * n).map(|i| (i % 5) as f32 * 0.5).collect();
        let mut c = vec![0f32; n * n];
        let (mut args, _) = Args::new(p, "matmul_tiled");
        args.ptr(p, "matmul_tiled", 0, &mut a);
        args.ptr(p, "matmul_tiled", 1, &mut b);
        args.ptr(p, "matmul_tiled", 2, &mut c);
        set_i32(&mut args, p, "matmul_tiled", 3, n as i32);
        launch(
            p,
            "matmul_tiled",
            &args,
            2,
            [0; 3],
            [n as u64, n as u64, 1],
            [4, 4, 1],
        );
        for row in 0..n {
            for col in 0..n {
                let mut acc = 0f32;
                for t in 0..n / 4 {
                    for k in 0..4 {
                        acc += a[row * n + t * 4 + k] * b[(t * 4 + k) * n + col];
                    }
                }
                assert_eq!(c[row * n + col], acc, "{r:?} ({row},{col})");
            }
        }
    });
}

#[test]
fn barrier_in_loop_with_uniform_break_and_private_array() {
    both(|r| {
        let p = barrier_program(r);
        for (local, stop) in [(7u64, 5i32), (1, 0), (13, 9)] {
            let n = local as usize * 2;
            let mut out = vec![0i32; n];
            let (mut args, _) = Args::new(p, "loop_break");
            args.ptr(p, "loop_break", 0, &mut out);
            args.set(p, "loop_break", 1, &0u64.to_ne_bytes());
            set_i32(&mut args, p, "loop_break", 2, stop);
            launch(
                p,
                "loop_break",
                &args,
                1,
                [0; 3],
                [n as u64, 1, 1],
                [local, 1, 1],
            );
            for (gid, &got) in out.iter().enumerate() {
                let l = (gid as u64 % local) as i32;
                let nl = local as i32;
                let mut h = [0i32; 4];
                for i in 0..=stop {
                    h[(i & 3) as usize] += ((l + 1) % nl) * i;
                }
                assert_eq!(
                    got,
                    h[0] + 10 * h[1] + 100 * h[2] + 1000 * h[3],
                    "{r:?} local {local} item {gid}"
                );
            }
        }
    });
}

#[test]
fn barrier_under_uniform_branch_and_in_called_function() {
    both(|r| {
        let p = barrier_program(r);
        for mode in [0, 1] {
            let local = 5u64;
            let n = 10usize;
            let mut out = vec![0i32; n];
            let (mut args, _) = Args::new(p, "branch_and_call");
            args.ptr(p, "branch_and_call", 0, &mut out);
            args.set(p, "branch_and_call", 1, &0u64.to_ne_bytes());
            set_i32(&mut args, p, "branch_and_call", 2, mode);
            launch(
                p,
                "branch_and_call",
                &args,
                1,
                [0; 3],
                [n as u64, 1, 1],
                [local, 1, 1],
            );
            let nl = local as i32;
            let s0: Vec<i32> = (0..nl).map(|l| l + 1).collect();
            let v: Vec<i32> = (0..nl)
                .map(|l| {
                    if mode > 0 {
                        s0[((l + nl - 1) % nl) as usize] + s0[((l + 1) % nl) as usize]
                    } else {
                        0
                    }
                })
                .collect();
            let s1: Vec<i32> = if mode > 0 { v.clone() } else { s0.clone() };
            for (gid, &got) in out.iter().enumerate() {
                let l = (gid as u64 % local) as i32;
                assert_eq!(
                    got,
                    s1[((l + 2) % nl) as usize] * 1000 + v[l as usize],
                    "{r:?} mode {mode} item {gid}"
                );
            }
        }
    });
}

#[derive(Clone, Copy, Debug)]
enum Mode {
    Rte,
    Rtz,
    Rtp,
    Rtn,
}
const MODES: [Mode; 4] = [Mode::Rte, Mode::Rtz, Mode::Rtp, Mode::Rtn];

/// Picks between the floats `lo` ≤ x ≤ `hi` around an exact value; `cmp_lo`/`cmp_hi` say how
/// far each is (exactly, as i128 or f64 differences), `x_negative` the sign of x.
fn pick(
    mode: Mode,
    lo: f32,
    hi: f32,
    exact: bool,
    lo_closer: std::cmp::Ordering,
    x_negative: bool,
) -> f32 {
    if exact {
        return lo;
    }
    match mode {
        Mode::Rtp => hi,
        Mode::Rtn => lo,
        Mode::Rtz => {
            if x_negative {
                hi
            } else {
                lo
            }
        }
        Mode::Rte => match lo_closer {
            std::cmp::Ordering::Less => lo,
            std::cmp::Ordering::Greater => hi,
            std::cmp::Ordering::Equal => {
                if lo.to_bits() & 1 == 0 {
                    lo
                } else {
                    hi
                }
            }
        },
    }
}

/// Reference integer → f32 conversion in `mode`, computed exactly with i128.
fn int_to_f32(x: i128, mode: Mode) -> f32 {
    let r = x as f32; // nearest-even
    let ri = r as i128;
    let (lo, hi) = if ri == x {
        (r, r)
    } else if ri < x {
        (r, r.next_up())
    } else {
        (r.next_down(), r)
    };
    let d_lo = x - lo as i128;
    let d_hi = hi as i128 - x;
    pick(mode, lo, hi, ri == x, d_lo.cmp(&d_hi), x < 0)
}

fn f64_to_f32(x: f64, mode: Mode) -> f32 {
    // Rust's `as` rounds to nearest even, overflow to infinity included.
    if !x.is_finite() || matches!(mode, Mode::Rte) {
        return x as f32;
    }
    let r = x as f32;
    let back = f64::from(r);
    let (lo, hi) = if back == x {
        (r, r)
    } else if back < x {
        (r, r.next_up())
    } else {
        (r.next_down(), r)
    };
    let (d_lo, d_hi) = (x - f64::from(lo), f64::from(hi) - x);
    let nearest = d_lo.partial_cmp(&d_hi).unwrap_or(std::cmp::Ordering::Equal);
    pick(mode, lo, hi, back == x, nearest, x < 0.0)
}

fn same(a: f32, b: f32) -> bool {
    a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan())
}

#[test]
fn conversions_with_explicit_rounding_modes() {
    let mut rng = 0x9E37_79B9_7F4A_7C15u64;
    let mut next = || {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        rng
    };
    // Edge cases first: ties, powers of two ± 1, extremes; then random bit patterns with
    // random leading-zero counts.
    let mut longs: Vec<i64> = vec![
        0,
        1,
        -1,
        (1 << 24) + 1,
        (1 << 24) + 3,
        -(1 << 24) - 1,
        (1 << 25) + 2,
        i64::MAX,
        i64::MIN,
        i64::MIN + 1,
        (1 << 53) + 1,
        -(1 << 40) - 12345,
        i32::MAX as i64,
        i32::MIN as i64,
        u32::MAX as i64,
    ];
    while longs.len() < 4000 {
        let v = next();
        longs.push((v >> (next() % 64)) as i64 * if next() & 1 == 0 { 1 } else { -1 });
    }
    let n = longs.len();
    let mut ints: Vec<i32> = longs.iter().map(|&l| l as i32).collect();
    let mut uints: Vec<u32> = longs.iter().map(|&l| l as u32).collect();
    let mut ls = longs.clone();
    let mut uls: Vec<u64> = longs.iter().map(|&l| (l as u64).wrapping_mul(3)).collect();
    uls[0] = u64::MAX;
    let mut doubles: Vec<f64> = longs
        .iter()
        .map(|&l| {
            f64::from_bits(((l as u64) & 0x8000_0000_ffff_ffff) | ((0x380 + next() % 0x100) << 52))
        })
        .collect();
    doubles[..8].copy_from_slice(&[
        f64::NAN,
        f64::INFINITY,
        -f64::INFINITY,
        3.4028235677973366e38,
        3.4028236e38 * 1.0000001,
        1e-46,
        -1e-46,
        1.0 + 2f64.powi(-24),
    ]);
    let mut floats: Vec<f32> = doubles
        .iter()
        .map(|&d| (d * 1e-30 * (next() % 1000) as f64) as f32)
        .collect();
    floats[..10].copy_from_slice(&[
        0.5,
        1.5,
        2.5,
        -0.5,
        -1.5,
        -2.5,
        f32::NAN,
        3e9,
        -3e9,
        2147483520.0,
    ]);
    both(|r| {
        let p = conversion_program(r);
        let mut out = vec![0f32; n * 16];
        let (mut args, _) = Args::new(p, "int_to_float");
        args.ptr(p, "int_to_float", 0, &mut ints);
        args.ptr(p, "int_to_float", 1, &mut uints);
        args.ptr(p, "int_to_float", 2, &mut ls);
        args.ptr(p, "int_to_float", 3, &mut uls);
        args.ptr(p, "int_to_float", 4, &mut out);
        launch(
            p,
            "int_to_float",
            &args,
            1,
            [0; 3],
            [n as u64, 1, 1],
            [16, 1, 1],
        );
        for g in 0..n {
            let sources = [
                i128::from(ints[g]),
                i128::from(uints[g]),
                i128::from(ls[g]),
                i128::from(uls[g]),
            ];
            for (s, &x) in sources.iter().enumerate() {
                for (m, &mode) in MODES.iter().enumerate() {
                    let got = out[g * 16 + s * 4 + m];
                    let want = int_to_f32(x, mode);
                    assert!(
                        same(got, want),
                        "{r:?} source {s} value {x} {mode:?}: got {got:e}, want {want:e}"
                    );
                }
            }
        }
        let mut out = vec![0f32; n * 4];
        let (mut args, _) = Args::new(p, "double_to_float");
        args.ptr(p, "double_to_float", 0, &mut doubles);
        args.ptr(p, "double_to_float", 1, &mut out);
        launch(
            p,
            "double_to_float",
            &args,
            1,
            [0; 3],
            [n as u64, 1, 1],
            [16, 1, 1],
        );
        for g in 0..n {
            for (m, &mode) in MODES.iter().enumerate() {
                let (got, want) = (out[g * 4 + m], f64_to_f32(doubles[g], mode));
                assert!(
                    same(got, want),
                    "{r:?} double {:e} {mode:?}: got {got:e}, want {want:e}",
                    doubles[g]
                );
            }
        }
        let mut out = vec![0i32; n * 4];
        let mut sat = vec![0i32; n];
        let mut narrow = vec![0i8; n];
        let (mut args, _) = Args::new(p, "float_to_int");
        args.ptr(p, "float_to_int", 0, &mut floats);
        args.ptr(p, "float_to_int", 1, &mut out);
        args.ptr(p, "float_to_int", 2, &mut sat);
        args.ptr(p, "float_to_int", 3, &mut narrow);
        args.ptr(p, "float_to_int", 4, &mut ints);
        launch(
            p,
            "float_to_int",
            &args,
            1,
            [0; 3],
            [n as u64, 1, 1],
            [16, 1, 1],
        );
        for g in 0..n {
            let f = floats[g];
            // Rust `as` saturates and maps NaN to 0, like convert_int_sat; the plain forms are
            // only defined in range, so compare them only there.
            assert_eq!(sat[g], f as i32, "{r:?} sat {f:e}");
            assert_eq!(
                i32::from(narrow[g]),
                ints[g].clamp(-128, 127),
                "{r:?} char_sat {}",
                ints[g]
            );
            if f.is_finite() && f.abs() < 2.0e9 {
                let want = [
                    f.round_ties_even() as i32,
                    f.trunc() as i32,
                    f.ceil() as i32,
                    f.floor() as i32,
                ];
                assert_eq!(&out[g * 4..g * 4 + 4], &want, "{r:?} {f:e}");
            }
        }
    });
}

#[test]
fn barrier_kernels_beyond_the_specialisation_budget() {
    both(|r| {
        let p = barrier_program(r);
        let local = 6u64;
        let n = 12usize;
        let mut out = vec![0i32; n];
        let (mut args, _) = Args::new(p, "many_barriers");
        args.ptr(p, "many_barriers", 0, &mut out);
        args.set(p, "many_barriers", 1, &0u64.to_ne_bytes());
        launch(
            p,
            "many_barriers",
            &args,
            1,
            [0; 3],
            [n as u64, 1, 1],
            [local, 1, 1],
        );
        for group in 0..n / local as usize {
            let nl = local as i32;
            let mut acc: Vec<i32> = (0..nl).collect();
            for i in 0..40 {
                let s: Vec<i32> = acc.iter().map(|a| a.wrapping_mul(3) + i).collect();
                for l in 0..nl as usize {
                    acc[l] = acc[l].wrapping_add(s[(l + i as usize) % nl as usize] ^ (acc[l] >> 3));
                }
            }
            for l in 0..local as usize {
                assert_eq!(
                    out[group * local as usize + l],
                    acc[l],
                    "{r:?} group {group} item {l}"
                );
            }
        }
    });
}

#[test]
fn atomics_on_global_memory() {
    both(|r| {
        let p = atomic_program(r);
        let n = 40i32;
        let mut g = vec![0i32, 0, 0, 0, i32::MAX, i32::MIN, 0];
        let mut u = vec![u32::MAX, 0, 0, u32::MAX, 0];
        let mut l = vec![0i64, i64::MIN];
        let mut f = vec![-1.0f32];
        let mut old = vec![-1i32; n as usize];
        let (mut args, _) = Args::new(p, "global_ops");
        args.ptr(p, "global_ops", 0, &mut g);
        args.ptr(p, "global_ops", 1, &mut u);
        args.ptr(p, "global_ops", 2, &mut l);
        args.ptr(p, "global_ops", 3, &mut f);
        args.ptr(p, "global_ops", 4, &mut old);
        launch(
            p,
            "global_ops",
            &args,
            1,
            [0; 3],
            [n as u64, 1, 1],
            [8, 1, 1],
        );
        let ids = 0..n;
        assert_eq!(g[0], n, "{r:?} inc");
        assert_eq!(g[1], -n, "{r:?} dec");
        assert_eq!(g[2], ids.clone().sum::<i32>(), "{r:?} add");
        assert_eq!(g[3], -ids.clone().sum::<i32>(), "{r:?} sub");
        assert_eq!(
            g[4],
            ids.clone().map(|i| 100 - i * 3).min().unwrap_or(0),
            "{r:?} min"
        );
        assert_eq!(
            g[5],
            ids.clone().map(|i| i * 7 - 50).max().unwrap_or(0),
            "{r:?} max"
        );
        assert_eq!(u[0], 0, "{r:?} and clears every bit");
        assert_eq!(u[1], u32::MAX, "{r:?} or");
        let xor = ids.clone().fold(0u32, |acc, i| acc ^ (1 << (i % 5)));
        assert_eq!(u[2], xor, "{r:?} xor");
        assert_eq!(u[3], 3, "{r:?} umin");
        assert_eq!(u[4], (n - 1) as u32, "{r:?} umax");
        assert_eq!(
            l[0],
            ids.clone().map(|i| i64::from(i) << 33).sum::<i64>(),
            "{r:?} atom_add"
        );
        assert_eq!(l[1], i64::from(n - 1) - 1_000_000_000_000, "{r:?} atom_max");
        assert!(
            f[0] >= 0.0 && f[0] < n as f32 && f[0].fract() == 0.0,
            "{r:?} xchg left {}",
            f[0]
        );
        // One winner saw 0; everyone else saw the winner's value.
        let winners: Vec<i32> = (0..n).filter(|&i| old[i as usize] == 0).collect();
        assert_eq!(winners.len(), 1, "{r:?} cmpxchg winners {winners:?}");
        assert_eq!(g[6], winners[0] + 1, "{r:?}");
        assert!(old.iter().all(|&o| o == 0 || o == winners[0] + 1), "{r:?}");
    });
}

#[test]
fn atomics_on_local_memory() {
    both(|r| {
        let p = atomic_program(r);
        let n = 200usize;
        let mut data: Vec<u8> = (0..n).map(|i| (i * 7 + i / 3) as u8).collect();
        let mut hist = vec![0u32; 16];
        let (mut args, _) = Args::new(p, "local_histogram");
        args.ptr(p, "local_histogram", 0, &mut data);
        args.ptr(p, "local_histogram", 1, &mut hist);
        args.set(p, "local_histogram", 2, &0u64.to_ne_bytes());
        launch(
            p,
            "local_histogram",
            &args,
            1,
            [0; 3],
            [n as u64, 1, 1],
            [8, 1, 1],
        );
        let mut want = vec![0u32; 16];
        for d in &data {
            want[(d & 15) as usize] += 1;
        }
        assert_eq!(hist, want, "{r:?}");
    });
}

#[test]
fn async_work_group_copies() {
    both(|r| {
        let p = barrier_program(r);
        let (local, groups) = (5usize, 3usize);
        let n = local * groups;
        let mut input: Vec<[f32; 4]> = (0..n)
            .map(|i| {
                [
                    i as f32,
                    100.0 + i as f32,
                    200.0 + i as f32,
                    300.0 + i as f32,
                ]
            })
            .collect();
        let mut out = vec![0f32; n];
        let mut strided = vec![-1f32; n * 4];
        let (mut args, _) = Args::new(p, "async_copies");
        args.ptr(p, "async_copies", 0, &mut input);
        args.ptr(p, "async_copies", 1, &mut out);
        args.ptr(p, "async_copies", 2, &mut strided);
        args.set(p, "async_copies", 3, &0u64.to_ne_bytes());
        launch(
            p,
            "async_copies",
            &args,
            1,
            [0; 3],
            [n as u64, 1, 1],
            [local as u64, 1, 1],
        );
        for (i, &o) in out.iter().enumerate() {
            assert_eq!(o, input[i][0] + input[i][3], "{r:?} item {i}");
        }
        // Group g copies 2*local floats of its tile (x, y, z, w, x, …) to every other float of
        // its 4*local-float window.
        for g in 0..groups {
            let tile: Vec<f32> = input[g * local..(g + 1) * local]
                .iter()
                .flatten()
                .copied()
                .collect();
            for j in 0..local * 2 {
                assert_eq!(
                    strided[g * local * 4 + j * 2],
                    tile[j],
                    "{r:?} group {g} float {j}"
                );
            }
        }
    });
}

#[test]
fn work_group_collectives() {
    both(|r| {
        let p = build_with("collectives.cl", r, CL3_COLLECTIVES);
        // 1-D with a smaller last group, and 2-D groups of 3x2.
        for (dims, global, local) in [
            (1u32, [13u64, 1, 1], [5u64, 1, 1]),
            (2, [6, 4, 1], [3, 2, 1]),
        ] {
            let n = (global[0] * global[1]) as usize;
            let mut a: Vec<i32> = (0..n as i32).map(|i| (i * 37 % 23) - 11).collect();
            let mut u: Vec<u32> = (0..n as u32)
                .map(|i| i.wrapping_mul(2_654_435_761) >> 20)
                .collect();
            let mut f: Vec<f32> = (0..n).map(|i| (i as f32 * 0.37).sin() * 10.0).collect();
            let (mut oi, mut ou, mut of) =
                (vec![0i32; n * 8], vec![0u32; n * 3], vec![0f32; n * 3]);
            let (mut args, _) = Args::new(&p, "collectives");
            args.ptr(&p, "collectives", 0, &mut a);
            args.ptr(&p, "collectives", 1, &mut u);
            args.ptr(&p, "collectives", 2, &mut f);
            args.ptr(&p, "collectives", 3, &mut oi);
            args.ptr(&p, "collectives", 4, &mut ou);
            args.ptr(&p, "collectives", 5, &mut of);
            launch(&p, "collectives", &args, dims, [0; 3], global, local);
            // Work-items of each group, in local linear order.
            let mut groups: std::collections::BTreeMap<(u64, u64), Vec<usize>> = Default::default();
            for y in 0..global[1] {
                for x in 0..global[0] {
                    groups
                        .entry((x / local[0], y / local[1]))
                        .or_default()
                        .push((y * global[0] + x) as usize);
                }
            }
            for members in groups.values_mut() {
                members.sort_by_key(|&g| {
                    let (x, y) = (g as u64 % global[0], g as u64 / global[0]);
                    (y % local[1]) * local[0] + x % local[0]
                });
                let xs: Vec<i32> = members.iter().map(|&g| a[g]).collect();
                let ys: Vec<u32> = members.iter().map(|&g| u[g]).collect();
                let zs: Vec<f32> = members.iter().map(|&g| f[g]).collect();
                let zsum = zs.iter().fold(0f32, |s, v| s + v);
                for (k, &g) in members.iter().enumerate() {
                    let want_i = [
                        xs.iter().sum::<i32>(),
                        *xs.iter().min().expect("non-empty"),
                        *xs.iter().max().expect("non-empty"),
                        xs[..=k].iter().sum(),
                        xs[..k].iter().copied().max().unwrap_or(i32::MIN),
                        i32::from(xs.iter().all(|&v| v > -1000)),
                        i32::from(xs.contains(&7)),
                        xs[1], // broadcast from local id 1 (1-D) or (1, 0) (2-D)
                    ];
                    assert_eq!(&oi[g * 8..g * 8 + 8], &want_i, "{r:?} dims {dims} item {g}");
                    let want_u = [
                        *ys.iter().max().expect("non-empty"),
                        *ys[..=k].iter().min().expect("non-empty"),
                        ys[..k].iter().sum::<u32>(),
                    ];
                    assert_eq!(&ou[g * 3..g * 3 + 3], &want_u, "{r:?} dims {dims} item {g}");
                    let want_f = [
                        zsum,
                        zs[..=k].iter().copied().fold(f32::NEG_INFINITY, f32::max),
                        zs.iter().copied().fold(f32::INFINITY, f32::min),
                    ];
                    assert_eq!(&of[g * 3..g * 3 + 3], &want_f, "{r:?} dims {dims} item {g}");
                }
            }
        }
    });
}

/// |a - b| in ulps of `b` (f32).
fn ulps(a: f32, b: f32) -> f32 {
    if a == b || (a.is_nan() && b.is_nan()) {
        return 0.0;
    }
    let ulp = (b.abs().next_up() - b.abs()).max(f32::from_bits(1));
    ((f64::from(a) - f64::from(b)).abs() / f64::from(ulp)) as f32
}

#[test]
fn out_parameter_and_integer_math_functions() {
    both(|r| {
        let p = build("shaped_math.cl", r);
        let xs: Vec<[f32; 4]> = vec![
            [1.5, -7.25, 0.3, 1e-40],
            [1000.0, -0.0, 12.75, -3.5],
            [5.5, 2.5, -2.5, 1e30],
        ];
        let ys: Vec<[f32; 4]> = vec![
            [2.0, 3.0, 0.7, 1.0],
            [7.0, 2.0, 5.0, -2.0],
            [1.25, 3.0, 2.0, 4.0],
        ];
        let n = xs.len();
        let (mut x, mut y) = (xs.clone(), ys.clone());
        let mut out = vec![[0f32; 4]; n * 9];
        let mut iout = vec![[0i32; 4]; n * 5];
        let mut d: Vec<f64> = (0..n)
            .flat_map(|i| [3.0 * (i + 1) as f64, -27.0 * (i + 1) as f64, 0.0])
            .collect();
        let d_in = d.clone();
        let (mut args, _) = Args::new(&p, "shaped");
        args.ptr(&p, "shaped", 0, &mut x);
        args.ptr(&p, "shaped", 1, &mut y);
        args.ptr(&p, "shaped", 2, &mut out);
        args.ptr(&p, "shaped", 3, &mut iout);
        args.ptr(&p, "shaped", 4, &mut d);
        launch(&p, "shaped", &args, 1, [0; 3], [n as u64, 1, 1], [1, 1, 1]);
        for g in 0..n {
            for l in 0..4 {
                let (v, w) = (xs[g][l], ys[g][l]);
                let o = |k: usize| out[g * 9 + k][l];
                let io = |k: usize| iout[g * 5 + k][l];
                // frexp: v = m * 2^e, 0.5 <= |m| < 1.
                let (m, e) = (o(0), io(0));
                assert!(
                    m.abs() >= 0.5 && m.abs() < 1.0 || v == 0.0,
                    "{r:?} frexp({v}) = {m}"
                );
                assert_eq!(
                    f64::from(m) * 2f64.powi(e),
                    f64::from(v),
                    "{r:?} frexp({v})"
                );
                assert_eq!((o(1), o(2)), (v - v.trunc(), v.trunc()), "{r:?} modf({v})");
                let fl = v.floor();
                assert_eq!(
                    (o(3), o(4)),
                    ((v - fl).min(f32::from_bits(0x3f7f_ffff)), fl),
                    "{r:?} fract({v})"
                );
                assert!(
                    ulps(o(5), v.sin()) <= 1.0 && ulps(o(6), v.cos()) <= 1.0,
                    "{r:?} sincos({v})"
                );
                let (rem, quo) = (o(7), io(1));
                let k = (v / w).round_ties_even();
                assert_eq!(
                    rem,
                    (f64::from(v) - k as f64 * f64::from(w)) as f32,
                    "{r:?} remquo({v}, {w})"
                );
                assert_eq!(
                    quo.abs() & 0x7f,
                    (f64::from(k.abs()) % 128.0) as i32,
                    "{r:?} remquo |quo| low bits"
                );
                assert_eq!(quo < 0, k < 0.0 && quo != 0, "{r:?} remquo sign");
                let pw = [3, -2, 0, 5][l];
                assert!(
                    ulps(o(8), w.powi(pw)) <= 1.0,
                    "{r:?} pown({w}, {pw}) = {}",
                    o(8)
                );
                let want_ilogb = if v == 0.0 {
                    i32::MIN
                } else {
                    f64::from(v).abs().log2().floor() as i32
                };
                assert_eq!(io(2), want_ilogb, "{r:?} ilogb({v})");
                let nan = f32::from_bits(io(4) as u32);
                assert!(nan.is_nan(), "{r:?} nan()");
            }
            // lgamma_r of x[g].x (1.5, 1000, 5.5): Γ > 0, so the sign is 1.
            let want_lgamma = [
                -0.120_782_237_635_245_2,
                5_905.220_423_209_181,
                3.957_813_967_618_716,
            ][g];
            assert_eq!(iout[g * 5 + 3][0], 1, "{r:?} lgamma_r sign");
            assert!(
                (d[g * 3 + 2] - want_lgamma).abs() <= 1e-6 * want_lgamma.abs().max(1.0),
                "{r:?} lgamma_r = {}",
                d[g * 3 + 2]
            );
            let (m, e) = libm_frexp(d_in[g * 3]);
            assert_eq!(d[g * 3], m + f64::from(e), "{r:?} frexp double");
            assert!(
                (d[g * 3 + 1] - d_in[g * 3 + 1].abs().cbrt()).abs()
                    <= 2.0 * f64::EPSILON * d[g * 3 + 1],
                "{r:?} rootn double"
            );
        }
    });
}

fn libm_frexp(x: f64) -> (f64, i32) {
    if x == 0.0 {
        return (x, 0);
    }
    let e = x.abs().log2().floor() as i32 + 1;
    (x / 2f64.powi(e), e)
}

#[test]
fn debug_info_modules_build_and_run() {
    // llvm-spirv puts OpenCL.DebugInfo.100 instructions (DebugScope) before phis in optimised
    // -g output; codegen must take the phis wherever they sit at the block's start.
    both(|r| {
        let p = build_with("basic.cl", r, &["-cl-std=CL1.2", "-g"]);
        let n = 100;
        let mut a: Vec<f32> = (0..n).map(|i| i as f32).collect();
        let mut b: Vec<f32> = (0..n).map(|i| 2.0 * i as f32).collect();
        let mut c = vec![0f32; n];
        let (mut args, _) = Args::new(&p, "vadd");
        args.ptr(&p, "vadd", 0, &mut a);
        args.ptr(&p, "vadd", 1, &mut b);
        args.ptr(&p, "vadd", 2, &mut c);
        launch(&p, "vadd", &args, 1, [0; 3], [n as u64, 1, 1], [10, 1, 1]);
        assert!(
            c.iter().enumerate().all(|(i, &v)| v == 3.0 * i as f32),
            "{r:?}"
        );
        assert!(
            p.kernel("mandel").is_some(),
            "{r:?}: the loop kernels build too"
        );
    });
}

#[test]
fn vloadn_and_vstoren() {
    both(|r| {
        let p = program(r);
        let n = 6;
        let mut input: Vec<f32> = (0..n * 4 + 1).map(|i| i as f32).collect();
        let mut out = vec![0f32; n * 4];
        let (mut args, _) = Args::new(p, "vload_store");
        args.ptr(p, "vload_store", 0, &mut input);
        args.ptr(p, "vload_store", 1, &mut out);
        launch(
            p,
            "vload_store",
            &args,
            1,
            [0; 3],
            [n as u64, 1, 1],
            [2, 1, 1],
        );
        for (i, &o) in out.iter().enumerate() {
            assert_eq!(o, 2.0 * input[i + 1], "{r:?} element {i}");
        }
    });
}

#[test]
fn work_group_collectives_on_64_bit_types() {
    both(|r| {
        let p = build_with("collectives.cl", r, CL3_COLLECTIVES);
        let (n, local) = (11usize, 4usize); // groups of 4, 4 and 3
        let mut a: Vec<i64> = (0..n as i64)
            .map(|i| (i * 0x1_0000_0001 * 7) % 1_000_000_007 - 400_000_000)
            .collect();
        let mut u: Vec<u64> = (0..n as u64)
            .map(|i| u64::MAX - i.wrapping_mul(0x9E37_79B9_7F4A_7C15) % 1_000_000)
            .collect();
        let mut f: Vec<f64> = (0..n).map(|i| (i as f64 * 0.7).cos() * 1e3).collect();
        let (mut ol, mut ou, mut od) = (vec![0i64; n * 4], vec![0u64; n * 2], vec![0f64; n * 2]);
        let (mut args, _) = Args::new(&p, "collectives64");
        args.ptr(&p, "collectives64", 0, &mut a);
        args.ptr(&p, "collectives64", 1, &mut u);
        args.ptr(&p, "collectives64", 2, &mut f);
        args.ptr(&p, "collectives64", 3, &mut ol);
        args.ptr(&p, "collectives64", 4, &mut ou);
        args.ptr(&p, "collectives64", 5, &mut od);
        launch(
            &p,
            "collectives64",
            &args,
            1,
            [0; 3],
            [n as u64, 1, 1],
            [local as u64, 1, 1],
        );
        for start in (0..n).step_by(local) {
            let end = (start + local).min(n);
            let (xs, ys, zs) = (&a[start..end], &u[start..end], &f[start..end]);
            for k in 0..end - start {
                let g = start + k;
                let want_l = [
                    xs.iter().sum::<i64>(),
                    *xs[..=k].iter().min().expect("non-empty"),
                    xs[..k].iter().copied().max().unwrap_or(i64::MIN),
                    xs[2],
                ];
                assert_eq!(&ol[g * 4..g * 4 + 4], &want_l, "{r:?} long item {g}");
                let want_u = [
                    *ys.iter().min().expect("non-empty"),
                    ys[..k].iter().fold(0u64, |s, v| s.wrapping_add(*v)),
                ];
                assert_eq!(&ou[g * 2..g * 2 + 2], &want_u, "{r:?} ulong item {g}");
                let want_d = [
                    zs.iter().copied().fold(f64::NEG_INFINITY, f64::max),
                    zs[..=k].iter().fold(0f64, |s, v| s + v),
                ];
                assert_eq!(&od[g * 2..g * 2 + 2], &want_d, "{r:?} double item {g}");
            }
        }
    });
}

/// A printf buffer as abi.rs lays it out: counter, capacity, then `capacity` record bytes.
fn printf_buffer(capacity: usize) -> Vec<u64> {
    let mut words = vec![0u64; (PRINTF_BUFFER_HEADER + capacity) / 8];
    words[1] = capacity as u64;
    words
}

fn record_bytes(words: &[u64]) -> Vec<u8> {
    words[PRINTF_BUFFER_HEADER / 8..]
        .iter()
        .flat_map(|w| w.to_le_bytes())
        .collect()
}

#[test]
fn printf_records_fill_the_buffer_then_fail() {
    both(|r| {
        let p = build("printf.cl", r);
        let k = p.kernel("records").expect("kernel");
        assert_eq!(k.printf_formats.len(), 1);
        let pieces = &k.printf_formats[0].pieces;
        let text = |t: &str| PrintfPiece::Text(t.as_bytes().to_vec());
        let conv = |directive: &str, arg: PrintfArg, count| {
            PrintfPiece::Conversion(PrintfConversion {
                directive: directive.into(),
                arg,
                count,
            })
        };
        let int = PrintfArg::Int {
            bytes: 4,
            signed: true,
            long: false,
        };
        assert_eq!(
            pieces,
            &[
                conv("%d", int.clone(), 1),
                text(" "),
                conv("%f", PrintfArg::Float { bytes: 4 }, 4),
                text(" "),
                conv("%s", PrintfArg::Str(b"str".to_vec()), 1),
                conv("%c", int, 1),
                text("\n"),
            ],
            "{r:?}"
        );
        // 8 header + int + 4 floats + char = 32 bytes a record: room for 5 of 8.
        let mut buffer = printf_buffer(5 * 32);
        let mut ret = vec![7i32; 8];
        let (mut args, _) = Args::new(&p, "records");
        args.ptr(&p, "records", 0, &mut ret);
        let address = buffer.as_mut_ptr() as u64;
        launch_printing(
            &p,
            "records",
            &args,
            1,
            [0; 3],
            [8, 1, 1],
            [4, 1, 1],
            address,
        );
        assert_eq!(ret, [0, 0, 0, 0, 0, -1, -1, -1], "{r:?}");
        assert_eq!(buffer[0], 8 * 32, "{r:?}: every call bumps the counter");
        let bytes = record_bytes(&buffer);
        for (i, rec) in bytes.chunks(32).enumerate() {
            let word = |k: usize| u32::from_le_bytes(rec[4 * k..4 * k + 4].try_into().unwrap());
            let float = |k: usize| f32::from_bits(word(k));
            assert_eq!(
                (word(0), word(1), word(2)),
                (32, 0, i as u32),
                "{r:?} record {i}"
            );
            assert_eq!(
                [float(3), float(4), float(5), float(6)],
                [i as f32, 0.5, -1.0, 2.0],
                "{r:?} record {i}"
            );
            assert_eq!(word(7), u32::from(b'z'), "{r:?} record {i}");
        }
    });
}

#[test]
fn printf_around_a_barrier() {
    both(|r| {
        let p = build("printf.cl", r);
        let k = p.kernel("around_barrier").expect("kernel");
        assert_eq!(k.printf_formats.len(), 2, "{r:?}");
        let mut buffer = printf_buffer(4096);
        let mut ret = vec![7i32; 6];
        let (mut args, _) = Args::new(&p, "around_barrier");
        args.ptr(&p, "around_barrier", 0, &mut ret);
        let address = buffer.as_mut_ptr() as u64;
        launch_printing(
            &p,
            "around_barrier",
            &args,
            1,
            [0; 3],
            [6, 1, 1],
            [3, 1, 1],
            address,
        );
        assert_eq!(ret, [0; 6], "{r:?}");
        // One group after the other: its "before" records, then its "after" records.
        let bytes = record_bytes(&buffer);
        let mut seen = Vec::new();
        let mut pos = 0;
        while pos < buffer[0] as usize {
            let word = |k: usize| u32::from_le_bytes(bytes[pos + 4 * k..][..4].try_into().unwrap());
            let (len, format) = (word(0) as usize, word(1));
            let value = if format == 0 {
                i64::from(word(2) as i32)
            } else {
                i64::from_le_bytes(bytes[pos + 8..][..8].try_into().unwrap())
            };
            seen.push((format, value));
            pos += len;
        }
        let want: Vec<(u32, i64)> = [0, 1]
            .iter()
            .flat_map(|g| {
                let items = 3 * g..3 * g + 3;
                items.clone().map(|i| (0, i)).chain(items.map(|i| (1, i)))
            })
            .collect();
        assert_eq!(seen, want, "{r:?}");
    });
}

/// OpenCL C 3.0 with sub-groups and every sub-group extension.
const CL3_SUB_GROUPS: &[&str] = &[
    "-cl-std=CL3.0",
    "-Xclang",
    "-cl-ext=-all,+__opencl_c_subgroups,+cl_khr_subgroups,+cl_khr_subgroup_extended_types,+cl_khr_subgroup_non_uniform_vote,+cl_khr_subgroup_ballot,+cl_khr_subgroup_non_uniform_arithmetic,+cl_khr_subgroup_shuffle,+cl_khr_subgroup_shuffle_relative,+cl_khr_subgroup_clustered_reduce,+cl_khr_subgroup_rotate,+__opencl_c_int64,+cl_khr_fp64,+__opencl_c_fp64,+cl_khr_fp16",
];

fn sub_group_program(recipe: Recipe) -> &'static Program {
    type Cache = std::sync::Mutex<std::collections::HashMap<bool, &'static Program>>;
    static CACHE: OnceLock<Cache> = OnceLock::new();
    let key = matches!(recipe, Recipe::Optimized);
    let mut cache = CACHE
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|p| p.into_inner());
    // Leaked on purpose: the programs live as long as the test binary.
    cache
        .entry(key)
        .or_insert_with(|| Box::leak(Box::new(build_with("subgroups.cl", recipe, CL3_SUB_GROUPS))))
}

/// Launch shapes: local sizes that are and are not multiples of the sub-group size, a smaller
/// last work-group, a work-group smaller than a sub-group, 2-D and 3-D groups.
const SUB_GROUP_SHAPES: &[(u32, [u64; 3], [u64; 3])] = &[
    (1, [22, 1, 1], [10, 1, 1]),
    (1, [16, 1, 1], [8, 1, 1]),
    (1, [3, 1, 1], [3, 1, 1]),
    (2, [6, 4, 1], [3, 2, 1]),
    (3, [6, 2, 3], [3, 1, 3]),
];

/// One sub-group as the host sees it.
struct HostSubGroup {
    /// Global linear ids in lane order.
    members: Vec<usize>,
    /// Index of the sub-group in its work-group.
    index: usize,
    /// Work-items in the work-group, and in an enqueued (full) work-group.
    group_items: usize,
    enqueued_items: usize,
}

/// The sub-groups of an NDRange: each work-group's work-items in linear local order, cut into
/// runs of `SUB_GROUP_SIZE`.
fn host_sub_groups(global: [u64; 3], local: [u64; 3]) -> Vec<HostSubGroup> {
    let size = ferrocl_codegen::SUB_GROUP_SIZE as usize;
    let groups = [0, 1, 2].map(|d| global[d].div_ceil(local[d]));
    let mut out = Vec::new();
    for gz in 0..groups[2] {
        for gy in 0..groups[1] {
            for gx in 0..groups[0] {
                let g = [gx, gy, gz];
                let ls = [0, 1, 2].map(|d| (global[d] - g[d] * local[d]).min(local[d]));
                let mut items = Vec::new();
                for z in 0..ls[2] {
                    for y in 0..ls[1] {
                        for x in 0..ls[0] {
                            let id = [x, y, z];
                            let gid = [0, 1, 2].map(|d| g[d] * local[d] + id[d]);
                            items.push(
                                ((gid[2] * global[1] + gid[1]) * global[0] + gid[0]) as usize,
                            );
                        }
                    }
                }
                let group_items = items.len();
                for (index, chunk) in items.chunks(size).enumerate() {
                    out.push(HostSubGroup {
                        members: chunk.to_vec(),
                        index,
                        group_items,
                        enqueued_items: (local[0] * local[1] * local[2]) as usize,
                    });
                }
            }
        }
    }
    out
}

#[test]
fn sub_group_built_ins() {
    let size = ferrocl_codegen::SUB_GROUP_SIZE as usize;
    both(|r| {
        let p = sub_group_program(r);
        for &(dims, global, local) in SUB_GROUP_SHAPES {
            let n = (global[0] * global[1] * global[2]) as usize;
            let mut out = vec![u32::MAX; n * 7];
            let (mut args, _) = Args::new(p, "sg_ids");
            args.ptr(p, "sg_ids", 0, &mut out);
            launch(p, "sg_ids", &args, dims, [0; 3], global, local);
            for sg in host_sub_groups(global, local) {
                for (lane, &g) in sg.members.iter().enumerate() {
                    let want = [
                        sg.members.len(),
                        size.min(sg.enqueued_items),
                        sg.group_items.div_ceil(size),
                        sg.enqueued_items.div_ceil(size),
                        sg.index,
                        lane,
                        sg.index * size + lane,
                    ]
                    .map(|v| v as u32);
                    assert_eq!(
                        &out[g * 7..g * 7 + 7],
                        &want,
                        "{r:?} {global:?}/{local:?} item {g}"
                    );
                }
            }
        }
    });
}

/// Element types of the sub-group arithmetic tests, with the host reference operations.
trait SubGroupElem: Copy + PartialEq + std::fmt::Debug + Default {
    const NAME: &'static str;
    fn sample(i: usize) -> Self;
    fn from_small(v: u8) -> Self;
    fn add(self, o: Self) -> Self;
    fn mul(self, o: Self) -> Self;
    fn lesser(self, o: Self) -> Self;
    fn greater(self, o: Self) -> Self;
    const MIN_IDENTITY: Self;
    const MAX_IDENTITY: Self;
    /// Bitwise and, or, xor (integers only).
    fn bits(self, o: Self, op: usize) -> Self;
    const ALL_ONES: Self;
    /// The value's bits (tells -0.0 from 0.0).
    fn raw(self) -> u64;
}

macro_rules! int_elem {
    ($($t:ty),*) => {$(
        impl SubGroupElem for $t {
            const NAME: &'static str = stringify!($t);
            fn sample(i: usize) -> Self {
                (i as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15).rotate_left(17) as $t
            }
            fn from_small(v: u8) -> Self { v as $t }
            fn add(self, o: Self) -> Self { self.wrapping_add(o) }
            fn mul(self, o: Self) -> Self { self.wrapping_mul(o) }
            fn lesser(self, o: Self) -> Self { Ord::min(self, o) }
            fn greater(self, o: Self) -> Self { Ord::max(self, o) }
            const MIN_IDENTITY: Self = <$t>::MAX;
            const MAX_IDENTITY: Self = <$t>::MIN;
            fn bits(self, o: Self, op: usize) -> Self {
                match op { 0 => self & o, 1 => self | o, _ => self ^ o }
            }
            const ALL_ONES: Self = !0;
            fn raw(self) -> u64 { self as u64 }
        }
    )*};
}
int_elem!(i8, u8, i16, u16, i32, u32, i64, u64);

macro_rules! float_elem {
    ($($t:ty),*) => {$(
        impl SubGroupElem for $t {
            const NAME: &'static str = stringify!($t);
            fn sample(i: usize) -> Self {
                // Some -0.0: a scan's first lane must keep its sign.
                if i % 5 == 0 { -0.0 } else { ((i * 37 % 23) as $t - 11.0) * 0.75 }
            }
            fn from_small(v: u8) -> Self { v as $t }
            fn add(self, o: Self) -> Self { self + o }
            fn mul(self, o: Self) -> Self { self * o }
            fn lesser(self, o: Self) -> Self { <$t>::min(self, o) }
            fn greater(self, o: Self) -> Self { <$t>::max(self, o) }
            const MIN_IDENTITY: Self = <$t>::INFINITY;
            const MAX_IDENTITY: Self = <$t>::NEG_INFINITY;
            fn bits(self, _: Self, _: usize) -> Self { unreachable!("no bitwise float ops") }
            const ALL_ONES: Self = 0.0;
            fn raw(self) -> u64 { self.to_bits() as u64 }
        }
    )*};
}
float_elem!(f32, f64);

/// A half as its encoding. Like the device's lane-order fold, the reference rounds every sum
/// and product to half as it is formed (the f64 sum or product of two halves is exact, so one
/// rounding gives the correctly rounded half operation). Every run of 4 samples is 312.5, x,
/// 312.5, 2^-7: the product overflows to infinity at its second step where an f32 fold rounded
/// once would give about 763·x, and sums round (625 + x has a 0.5 ulp).
#[derive(Clone, Copy, Debug, Default)]
struct Half(u16);

impl PartialEq for Half {
    /// Equal values (either zero for min/max), or both NaN (inf · 0 may come up).
    fn eq(&self, o: &Self) -> bool {
        half_f64(self.0) == half_f64(o.0) || (is_half_nan(self.0) && is_half_nan(o.0))
    }
}

impl Half {
    fn of(v: f64) -> Half {
        Half(narrow_ref(v, HalfMode::Rte))
    }
    fn value(self) -> f64 {
        half_f64(self.0)
    }
}

impl SubGroupElem for Half {
    const NAME: &'static str = "half";
    fn sample(i: usize) -> Self {
        Half::of(match i % 4 {
            _ if i % 13 == 5 => -0.0,
            0 | 2 => 312.5,
            3 => 0.0078125,
            _ => ((i * 37 % 23) as f64 - 11.0) * 0.75,
        })
    }
    fn from_small(v: u8) -> Self {
        Half::of(f64::from(v))
    }
    fn add(self, o: Self) -> Self {
        Half::of(self.value() + o.value())
    }
    fn mul(self, o: Self) -> Self {
        Half::of(self.value() * o.value())
    }
    fn lesser(self, o: Self) -> Self {
        if self.value().is_nan() || o.value() < self.value() {
            o
        } else {
            self
        }
    }
    fn greater(self, o: Self) -> Self {
        if self.value().is_nan() || o.value() > self.value() {
            o
        } else {
            self
        }
    }
    const MIN_IDENTITY: Self = Half(0x7c00);
    const MAX_IDENTITY: Self = Half(0xfc00);
    fn bits(self, _: Self, _: usize) -> Self {
        unreachable!("no bitwise half ops")
    }
    const ALL_ONES: Self = Half(0);
    fn raw(self) -> u64 {
        u64::from(self.0)
    }
}

/// Folds `f` over the values of the lanes `take` accepts, in lane order, starting from the
/// first of them; `identity` when there is none.
fn fold_lanes<T: Copy>(
    xs: &[T],
    take: impl Fn(usize) -> bool,
    identity: T,
    f: impl Fn(T, T) -> T,
) -> T {
    let mut taken = xs
        .iter()
        .enumerate()
        .filter(|(j, _)| take(*j))
        .map(|(_, &v)| v);
    match taken.next() {
        Some(first) => taken.fold(first, f),
        None => identity,
    }
}

/// Runs `sg_<cl_type>` and checks every output against the host reference.
fn check_sub_group_type<T: SubGroupElem>(r: Recipe, cl_type: &str, integer: bool) {
    let p = sub_group_program(r);
    let kernel = format!("sg_{cl_type}");
    let size = ferrocl_codegen::SUB_GROUP_SIZE as usize;
    for &(dims, global, local) in SUB_GROUP_SHAPES {
        let n = (global[0] * global[1] * global[2]) as usize;
        let mut input: Vec<T> = (0..n).map(T::sample).collect();
        let mut out = vec![T::default(); n * 32];
        let mut bits = vec![T::default(); n * 9];
        let (mut args, _) = Args::new(p, &kernel);
        args.ptr(p, &kernel, 0, &mut input);
        args.ptr(p, &kernel, 1, &mut out);
        if integer {
            args.ptr(p, &kernel, 2, &mut bits);
        }
        launch(p, &kernel, &args, dims, [0; 3], global, local);
        for sg in host_sub_groups(global, local) {
            let xs: Vec<T> = sg.members.iter().map(|&g| input[g]).collect();
            let cnt = xs.len();
            for (l, &g) in sg.members.iter().enumerate() {
                let o = &out[g * 32..g * 32 + 32];
                let at = |what: &str| {
                    format!(
                        "{r:?} {} {global:?}/{local:?} item {g} lane {l}: {what}",
                        T::NAME
                    )
                };
                let all = |_: usize| true;
                let upto = |j: usize| j <= l;
                let below = |j: usize| j < l;
                let zero = T::from_small(0);
                let one = T::from_small(1);
                let uniform = [
                    fold_lanes(&xs, all, zero, T::add),
                    fold_lanes(&xs, all, T::MIN_IDENTITY, T::lesser),
                    fold_lanes(&xs, all, T::MAX_IDENTITY, T::greater),
                    fold_lanes(&xs, upto, zero, T::add),
                    fold_lanes(&xs, upto, T::MIN_IDENTITY, T::lesser),
                    fold_lanes(&xs, upto, T::MAX_IDENTITY, T::greater),
                    fold_lanes(&xs, below, zero, T::add),
                    fold_lanes(&xs, below, T::MIN_IDENTITY, T::lesser),
                    fold_lanes(&xs, below, T::MAX_IDENTITY, T::greater),
                    xs[cnt - 1],
                ];
                assert_eq!(&o[..10], &uniform, "{}", at("uniform collectives"));
                // Folds start from the first value: a lone -0.0 stays -0.0.
                assert_eq!(
                    o[3].raw(),
                    uniform[3].raw(),
                    "{}",
                    at("inclusive scan bits")
                );
                let active = |j: usize| j != 1;
                if l != 1 {
                    let want = [
                        fold_lanes(&xs, active, zero, T::add),
                        fold_lanes(&xs, active, one, T::mul),
                        fold_lanes(&xs, active, T::MIN_IDENTITY, T::lesser),
                        fold_lanes(&xs, active, T::MAX_IDENTITY, T::greater),
                        fold_lanes(&xs, |j| active(j) && j <= l, zero, T::add),
                        fold_lanes(&xs, |j| active(j) && j <= l, one, T::mul),
                        fold_lanes(&xs, |j| active(j) && j < l, T::MIN_IDENTITY, T::lesser),
                        fold_lanes(&xs, |j| active(j) && j < l, T::MAX_IDENTITY, T::greater),
                        xs[0],
                    ];
                    assert_eq!(
                        &o[10..19],
                        &want,
                        "{}",
                        at("non-uniform arithmetic without lane 1")
                    );
                } else {
                    assert_eq!(&o[10..19], &[T::default(); 9], "{}", at("inactive lane"));
                }
                let first_of_rest = if l != 0 { xs[1] } else { T::default() };
                assert_eq!(o[19], first_of_rest, "{}", at("broadcast_first"));
                assert_eq!(
                    o[20],
                    xs[(l + 1) % cnt],
                    "{} {:?} {:?}",
                    at("shuffle"),
                    o,
                    xs
                );
                // Lanes the sub-group does not have give undefined values: not checked.
                let lane = |t: usize| (t < cnt).then(|| xs[t]);
                let check = |got: T, want: Option<T>, what: &str| {
                    if let Some(w) = want {
                        assert_eq!(got, w, "{}", at(what));
                    }
                };
                check(o[21], lane(l ^ 1), "shuffle_xor 1");
                check(o[22], l.checked_sub(1).and_then(lane), "shuffle_up 1");
                check(o[23], lane(l + 1), "shuffle_down 1");
                check(o[24], lane((l + 1) % size), "rotate 1");
                check(
                    o[25],
                    lane((l & !1) | ((l + 3) & 1)),
                    "clustered rotate 3 in 2",
                );
                let cluster = |c: usize| move |j: usize| j / c == l / c;
                assert_eq!(
                    o[26],
                    fold_lanes(&xs, cluster(2), zero, T::add),
                    "{}",
                    at("clustered add 2")
                );
                assert_eq!(o[27], xs[l], "{}", at("clustered mul 1"));
                assert_eq!(
                    o[28],
                    fold_lanes(&xs, cluster(4), T::MIN_IDENTITY, T::lesser),
                    "{}",
                    at("clustered min 4")
                );
                assert_eq!(
                    o[29],
                    fold_lanes(&xs, cluster(2), T::MAX_IDENTITY, T::greater),
                    "{}",
                    at("clustered max 2")
                );
                let equal = xs.iter().all(|&v| v == xs[0]);
                assert_eq!(o[30], T::from_small(u8::from(equal)), "{}", at("all_equal"));
                let want = if l != 2 { one } else { T::default() };
                assert_eq!(o[31], want, "{}", at("all_equal of a constant"));
                if integer {
                    let b = &bits[g * 9..g * 9 + 9];
                    let f = |op: usize| move |a: T, v: T| a.bits(v, op);
                    let mut want = [
                        fold_lanes(&xs, all, T::ALL_ONES, f(0)),
                        fold_lanes(&xs, all, zero, f(1)),
                        fold_lanes(&xs, all, zero, f(2)),
                        fold_lanes(&xs, |j| active(j) && j <= l, T::ALL_ONES, f(0)),
                        fold_lanes(&xs, |j| active(j) && j < l, zero, f(1)),
                        fold_lanes(&xs, |j| active(j) && j <= l, zero, f(2)),
                        fold_lanes(&xs, cluster(2), T::ALL_ONES, f(0)),
                        fold_lanes(&xs, cluster(4), zero, f(1)),
                        fold_lanes(&xs, cluster(2), zero, f(2)),
                    ];
                    if l == 1 {
                        want[3..6].fill(T::default());
                    }
                    assert_eq!(b, &want, "{}", at("bitwise"));
                }
            }
        }
    }
}

#[test]
fn sub_group_collectives_and_non_uniform_arithmetic() {
    both(|r| {
        check_sub_group_type::<i8>(r, "char", true);
        check_sub_group_type::<u8>(r, "uchar", true);
        check_sub_group_type::<i16>(r, "short", true);
        check_sub_group_type::<u16>(r, "ushort", true);
        check_sub_group_type::<i32>(r, "int", true);
        check_sub_group_type::<u32>(r, "uint", true);
        check_sub_group_type::<i64>(r, "long", true);
        check_sub_group_type::<u64>(r, "ulong", true);
        check_sub_group_type::<f32>(r, "float", false);
        check_sub_group_type::<f64>(r, "double", false);
        check_sub_group_type::<Half>(r, "half", false);
    });
}

#[test]
fn sub_group_votes_and_ballots() {
    both(|r| {
        let p = sub_group_program(r);
        for &(dims, global, local) in SUB_GROUP_SHAPES {
            let n = (global[0] * global[1] * global[2]) as usize;
            let mut input: Vec<i32> = (0..n as i32).map(|i| (i * 29 % 67) - 8).collect();
            let mut out = vec![0i32; n * 26];
            let (mut args, _) = Args::new(p, "sg_votes");
            args.ptr(p, "sg_votes", 0, &mut input);
            args.ptr(p, "sg_votes", 1, &mut out);
            launch(p, "sg_votes", &args, dims, [0; 3], global, local);
            for sg in host_sub_groups(global, local) {
                let xs: Vec<i32> = sg.members.iter().map(|&g| input[g]).collect();
                let cnt = xs.len();
                let ballot_of =
                    |pred: &dyn Fn(i32) -> bool, active: &dyn Fn(usize) -> bool| -> i32 {
                        (0..cnt)
                            .filter(|&j| active(j) && pred(xs[j]))
                            .map(|j| 1 << j)
                            .sum()
                    };
                let ballot = ballot_of(&|x| x > 10, &|_| true);
                let active = |j: usize| xs[j] >= 0;
                let first_active = (0..cnt).find(|&j| active(j));
                for (l, &g) in sg.members.iter().enumerate() {
                    let o = &out[g * 26..g * 26 + 26];
                    let b = |v: bool| i32::from(v);
                    let lt = (1 << l) - 1;
                    let le = (2 << l) - 1;
                    // Ge/Gt masks reach up to the largest sub-group size.
                    let full =
                        (1 << ferrocl_codegen::SUB_GROUP_SIZE.min(sg.enqueued_items as u64)) - 1;
                    let mut want = vec![
                        b(xs.iter().all(|&x| x > 0)),
                        b(xs.iter().any(|&x| x > 40)),
                        b(l == 0),
                        ballot,
                        0,
                        b(ballot >> l & 1 != 0),
                        b(ballot >> 2 & 1 != 0),
                        ballot.count_ones() as i32,
                        (ballot & le).count_ones() as i32,
                        (ballot & lt).count_ones() as i32,
                        if ballot != 0 {
                            ballot.trailing_zeros() as i32
                        } else {
                            -1
                        },
                        if ballot != 0 {
                            31 - ballot.leading_zeros() as i32
                        } else {
                            -1
                        },
                        1 << l,
                        full & !lt,
                        full & !le,
                        le,
                        lt,
                    ];
                    if active(l) {
                        let act: Vec<usize> = (0..cnt).filter(|&j| active(j)).collect();
                        want.extend([
                            b(act.iter().all(|&j| xs[j] > 5)),
                            b(act.iter().any(|&j| xs[j] > 40)),
                            b(Some(l) == first_active),
                            b(act.iter().all(|&j| xs[j] > 5)),
                            b(act.iter().any(|&j| j <= l && xs[j] > 40)),
                            b(act
                                .iter()
                                .filter(|&&j| j < l)
                                .fold(false, |a, &j| a ^ (xs[j] & 1 != 0))),
                            ballot_of(&|x| x > 10, &active),
                        ]);
                    } else {
                        want.extend([0; 7]);
                    }
                    let max_size = ferrocl_codegen::SUB_GROUP_SIZE.min(sg.enqueued_items as u64);
                    want.extend([max_size as i32, max_size as i32 - 1]);
                    // Predicates come back as "non-zero is true".
                    let got: Vec<i32> = o
                        .iter()
                        .enumerate()
                        .map(|(i, &v)| {
                            if [0, 1, 2, 5, 6, 17, 18, 19, 20, 21, 22].contains(&i) {
                                b(v != 0)
                            } else {
                                v
                            }
                        })
                        .collect();
                    assert_eq!(
                        got, want,
                        "{r:?} {global:?}/{local:?} item {g} lane {l} (x = {})",
                        xs[l]
                    );
                }
            }
        }
    });
}

/// `sgv_<cl_type>` on vectors of `lanes` components of `E` (3-component vectors occupy 4).
fn check_sub_group_vectors<E: Copy + PartialEq + std::fmt::Debug + Default + From<u8>>(
    r: Recipe,
    cl_type: &str,
    lanes: usize,
    sample: impl Fn(usize) -> E,
) {
    let p = sub_group_program(r);
    let kernel = format!("sgv_{cl_type}");
    let stride = if lanes == 3 { 4 } else { lanes };
    for &(dims, global, local) in SUB_GROUP_SHAPES {
        let n = (global[0] * global[1] * global[2]) as usize;
        let mut input: Vec<E> = (0..n * stride).map(&sample).collect();
        let mut out = vec![E::default(); n * 3 * stride];
        let (mut args, _) = Args::new(p, &kernel);
        args.ptr(p, &kernel, 0, &mut input);
        args.ptr(p, &kernel, 1, &mut out);
        launch(p, &kernel, &args, dims, [0; 3], global, local);
        for sg in host_sub_groups(global, local) {
            let vec_of = |g: usize| &input[g * stride..g * stride + lanes];
            let cnt = sg.members.len();
            for (l, &g) in sg.members.iter().enumerate() {
                let got = |k: usize| &out[(g * 3 + k) * stride..(g * 3 + k) * stride + lanes];
                let at = format!("{r:?} {cl_type} {global:?}/{local:?} item {g} lane {l}");
                if cnt > 1 {
                    assert_eq!(got(0), vec_of(sg.members[1]), "{at}: broadcast 1");
                }
                if l != 0 {
                    assert_eq!(
                        got(1),
                        vec_of(sg.members[cnt - 1]),
                        "{at}: non-uniform broadcast"
                    );
                } else {
                    assert_eq!(got(1), vec![E::default(); lanes], "{at}: inactive lane");
                }
                assert_eq!(got(2), vec_of(sg.members[0]), "{at}: broadcast 0");
            }
        }
    }
}

#[test]
fn sub_group_broadcast_of_vectors() {
    let bits = |i: usize| (i as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 7;
    both(|r| {
        check_sub_group_vectors(r, "char2", 2, |i| bits(i) as u8);
        check_sub_group_vectors(r, "uchar3", 3, |i| bits(i) as u8);
        check_sub_group_vectors(r, "short4", 4, |i| bits(i) as u16);
        check_sub_group_vectors(r, "ushort8", 8, |i| bits(i) as u16);
        check_sub_group_vectors(r, "int16", 16, |i| bits(i) as u32);
        check_sub_group_vectors(r, "uint2", 2, |i| bits(i) as u32);
        check_sub_group_vectors(r, "long3", 3, bits);
        check_sub_group_vectors(r, "ulong4", 4, bits);
        check_sub_group_vectors(r, "float8", 8, |i| (i as f32 * 0.5 - 3.0).to_bits());
        check_sub_group_vectors(r, "double16", 16, |i| (i as f64 * 0.25 - 7.0).to_bits());
    });
}

#[test]
fn sub_groups_diverge_and_synchronise() {
    both(|r| {
        let p = sub_group_program(r);
        for &(dims, global, local) in SUB_GROUP_SHAPES {
            let n = (global[0] * global[1] * global[2]) as usize;
            let mut input: Vec<i32> = (0..n as i32).map(|i| (i * 41 % 53) - 20).collect();
            let mut out = vec![0i32; n * 5];
            let (mut args, _) = Args::new(p, "sg_diverge");
            args.ptr(p, "sg_diverge", 0, &mut input);
            args.ptr(p, "sg_diverge", 1, &mut out);
            args.set(p, "sg_diverge", 2, &0u64.to_ne_bytes());
            launch(p, "sg_diverge", &args, dims, [0; 3], global, local);
            for sg in host_sub_groups(global, local) {
                let xs: Vec<i32> = sg.members.iter().map(|&g| input[g]).collect();
                let cnt = xs.len();
                for (l, &g) in sg.members.iter().enumerate() {
                    let first = if sg.index % 2 == 0 {
                        xs.iter().sum()
                    } else {
                        *xs[..=l].iter().max().expect("non-empty")
                    };
                    let looped: i32 = (0..=(sg.index % 3) as i32)
                        .map(|i| xs[0] + i + xs.iter().map(|x| x * i).max().expect("non-empty"))
                        .sum();
                    let next = xs[(l + 1) % cnt];
                    let only_one = if sg.index == 1 { next * 3 } else { -7 };
                    let per_lane: i32 = (0..=l)
                        .map(|i| (i..cnt).map(|j| xs[j] + i as i32).sum::<i32>())
                        .sum();
                    assert_eq!(
                        &out[g * 5..g * 5 + 5],
                        &[first, looped, next, only_one, per_lane],
                        "{r:?} {global:?}/{local:?} item {g} (sub-group {} lane {l}) xs {xs:?}",
                        sg.index
                    );
                }
            }
        }
    });
}

#[test]
fn sub_groups_in_the_dispatching_loop() {
    both(|r| {
        let p = sub_group_program(r);
        for &(dims, global, local) in SUB_GROUP_SHAPES {
            let n = (global[0] * global[1] * global[2]) as usize;
            let mut input: Vec<i32> = (0..n as i32).map(|i| (i * 13 % 31) - 9).collect();
            let mut out = vec![0i32; n * 4];
            let (mut args, _) = Args::new(p, "sg_rounds");
            args.ptr(p, "sg_rounds", 0, &mut input);
            args.ptr(p, "sg_rounds", 1, &mut out);
            launch(p, "sg_rounds", &args, dims, [0; 3], global, local);
            for sg in host_sub_groups(global, local) {
                let xs: Vec<i32> = sg.members.iter().map(|&g| input[g]).collect();
                let cnt = xs.len();
                let total: i32 = xs.iter().sum();
                let mut acc = vec![0i32; cnt];
                for _ in 0..256 {
                    let old = acc.clone();
                    for l in 0..cnt {
                        let scan = old[..=l].iter().fold(0i32, |s, a| s.wrapping_add(a & 7));
                        acc[l] = old[l].wrapping_add(total.wrapping_add(scan));
                    }
                }
                for (l, &g) in sg.members.iter().enumerate() {
                    let without_1: i32 = (0..cnt).filter(|&j| j != 1).map(|j| xs[j]).sum();
                    let per_lane: i32 = (0..=l)
                        .map(|i| (i..cnt).map(|j| xs[j] + i as i32).sum::<i32>())
                        .sum();
                    let last = if sg.index % 2 == 1 {
                        *xs.iter().max().expect("non-empty")
                    } else {
                        xs[0]
                    };
                    let want = [acc[l], if l != 1 { without_1 } else { 0 }, per_lane, last];
                    assert_eq!(
                        &out[g * 4..g * 4 + 4],
                        &want,
                        "{r:?} {global:?}/{local:?} item {g} (sub-group {} lane {l})",
                        sg.index
                    );
                }
            }
        }
    });
}

/// A kernel around one sub-group instruction `%r = <inst>` on `%x` (a uint), assembled as
/// SPIR-V 1.3.
fn sub_group_module(inst: &str) -> Vec<u8> {
    let text = format!(
        r#"
               OpCapability Addresses
               OpCapability Kernel
               OpCapability Int64
               OpCapability Groups
               OpCapability GroupNonUniform
               OpCapability GroupNonUniformArithmetic
               OpCapability GroupNonUniformClustered
               OpCapability GroupUniformArithmeticKHR
               OpExtension "SPV_KHR_uniform_group_instructions"
               OpMemoryModel Physical64 OpenCL
               OpEntryPoint Kernel %k "k"
       %void = OpTypeVoid
       %uint = OpTypeInt 32 0
     %uint_2 = OpConstant %uint 2
     %uint_3 = OpConstant %uint 3
     %uint_8 = OpConstant %uint 8
      %ptr_g = OpTypePointer CrossWorkgroup %uint
         %fn = OpTypeFunction %void %ptr_g
          %k = OpFunction %void None %fn
        %out = OpFunctionParameter %ptr_g
      %entry = OpLabel
          %x = OpLoad %uint %out
          %r = {inst}
               OpStore %out %r
               OpReturn
               OpFunctionEnd
"#
    );
    let dir = out_dir();
    static COUNT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = COUNT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let src = dir.join(format!(
        "sub-group-misuse-{}-{n}.spvasm",
        std::process::id()
    ));
    let spv = src.with_extension("spv");
    std::fs::write(&src, text).expect("write spvasm");
    run(Command::new("spirv-as")
        .args(["--target-env", "spv1.3"])
        .arg(&src)
        .arg("-o")
        .arg(&spv));
    std::fs::read(&spv).expect("read spv")
}

#[test]
fn sub_group_misuse_fails_with_a_log() {
    let off = BuildOptions {
        sub_groups: false,
        ..BuildOptions::default()
    };
    for (inst, options, expect) in [
        (
            "OpGroupNonUniformIAdd %uint %uint_2 Reduce %x",
            BuildOptions::default(),
            "execution scope 2 is not supported (only Subgroup)",
        ),
        (
            "OpGroupNonUniformIAdd %uint %uint_3 ClusteredReduce %x %uint_3",
            BuildOptions::default(),
            "ClusterSize 3 must be a power of two",
        ),
        (
            "OpGroupNonUniformIAdd %uint %uint_3 Reduce %x",
            off.clone(),
            "OpGroupNonUniformIAdd needs sub-groups, which are turned off on this device (FERROCL_SUBGROUPS=off)",
        ),
        (
            "OpGroupNonUniformFAdd %uint %uint_3 Reduce %x",
            BuildOptions::default(),
            "is not the scalar type this instruction combines",
        ),
        (
            "OpGroupNonUniformLogicalAnd %uint %uint_3 Reduce %x",
            BuildOptions::default(),
            "is not the scalar type this instruction combines",
        ),
        (
            "OpGroupIAdd %uint %uint_3 Reduce %x",
            off.clone(),
            "OpGroupIAdd with Subgroup execution scope needs sub-groups, which are turned off",
        ),
        (
            "OpGroupBitwiseXorKHR %uint %uint_3 InclusiveScan %x",
            off.clone(),
            "OpGroupBitwiseXorKHR with Subgroup execution scope needs sub-groups, which are turned off",
        ),
    ] {
        let module = ferrocl_frontend::parse(&sub_group_module(inst))
            .unwrap_or_else(|e| panic!("frontend: {e}"));
        match compile(&module, &options) {
            Ok(_) => panic!("{inst} must not build"),
            Err(e) => assert!(e.log.contains(expect), "{inst}: {}", e.log),
        }
    }
}

/// A ClusterSize above the sub-group size is undefined behaviour only when executed (the CTS
/// compiles every size up to 128 and runs the valid ones): it builds and reduces the whole
/// sub-group.
#[test]
fn clusters_larger_than_the_sub_group_build_and_cover_it() {
    for cluster in ["%uint_8", "%uint_2"] {
        let module = ferrocl_frontend::parse(&sub_group_module(&format!(
            "OpGroupNonUniformIAdd %uint %uint_3 ClusteredReduce %x {cluster}"
        )))
        .unwrap_or_else(|e| panic!("frontend: {e}"));
        let p = compile(&module, &BuildOptions::default()).unwrap_or_else(|e| panic!("{}", e.log));
        // Every work-item reads out[0] (5) before any stores the sum (they meet at the
        // reduction): one sub-group of 4 sums 20, clusters of 2 sum 10.
        let mut out = [5u32];
        let (mut args, _) = Args::new(&p, "k");
        args.ptr(&p, "k", 0, &mut out);
        launch(&p, "k", &args, 1, [0; 3], [4, 1, 1], [4, 1, 1]);
        let want = if cluster == "%uint_8" { 20 } else { 10 };
        assert_eq!(out[0], want, "cluster {cluster}");
    }
}

#[test]
fn work_group_broadcast_in_a_loop() {
    both(|r| {
        let p = build_with("collectives.cl", r, CL3_COLLECTIVES);
        let (n, local) = (12usize, 4usize);
        let mut a: Vec<i32> = (0..n as i32).map(|i| i * 7 - 20).collect();
        let mut out = vec![0i32; n];
        let (mut args, _) = Args::new(&p, "broadcast_in_loop");
        args.ptr(&p, "broadcast_in_loop", 0, &mut a);
        args.ptr(&p, "broadcast_in_loop", 1, &mut out);
        launch(
            &p,
            "broadcast_in_loop",
            &args,
            1,
            [0; 3],
            [n as u64, 1, 1],
            [local as u64, 1, 1],
        );
        for (g, got) in out.iter().enumerate() {
            let first = g / local * local;
            let want: i32 = (0..3).map(|i| a[first] + i).sum();
            assert_eq!(*got, want, "{r:?} item {g}");
        }
    });
}

// ---------------------------------------------------------------------------------------------
// Half precision: vload_half/vstore_half (half_memory.cl) and half arithmetic (half_arith.cl),
// against the host C compiler's half conversions (ferrocl-testref), independent of mathlib.

#[derive(Clone, Copy, Debug, PartialEq)]
enum HalfMode {
    Rte,
    Rtz,
    Rtp,
    Rtn,
}

/// Exact value of a finite half encoding (the host C compiler's conversion, `ferrocl-testref`).
fn half_value(h: u16) -> f64 {
    ferrocl_testref::f16_to_f64(h)
}

impl From<HalfMode> for ferrocl_testref::Rounding {
    fn from(mode: HalfMode) -> ferrocl_testref::Rounding {
        use ferrocl_testref::Rounding::*;
        match mode {
            HalfMode::Rte => NearestEven,
            HalfMode::Rtz => TowardZero,
            HalfMode::Rtp => TowardPositive,
            HalfMode::Rtn => TowardNegative,
        }
    }
}

/// The f32 bits vload_half must produce: the exact value; infinities; NaNs quiet (as IEEE
/// conversions return them) with the payload bits kept.
fn widened_bits(h: u16) -> u32 {
    let sign = u32::from(h & 0x8000) << 16;
    if h & 0x7c00 == 0x7c00 {
        let quiet = if h & 0x3ff != 0 { 0x0040_0000 } else { 0 };
        return sign | 0x7f80_0000 | quiet | (u32::from(h & 0x3ff) << 13);
    }
    (half_value(h) as f32).to_bits()
}

/// `x` rounded once to half in `mode`, by the host's libgcc (`ferrocl-testref`), which shares
/// no code with Ferrocl. NaNs map to a quiet NaN with the sign and top payload bits.
fn narrow_ref(x: f64, mode: HalfMode) -> u16 {
    ferrocl_testref::f64_to_f16(x, mode.into())
}

fn narrow_f32_ref(x: f32, mode: HalfMode) -> u16 {
    ferrocl_testref::f32_to_f16(x, mode.into())
}

fn narrow_f64_ref(x: f64, mode: HalfMode) -> u16 {
    ferrocl_testref::f64_to_f16(x, mode.into())
}

/// Every rounding boundary of half: each half, each midpoint between neighbours (ties, the
/// denormal boundary, the overflow threshold 65520) and the doubles and floats one step either
/// side, both signs; then zeros, infinities, NaNs (quiet and signalling, with payloads), values
/// far outside the half range, and a pseudo-random sample of doubles.
fn half_boundary_inputs() -> Vec<f64> {
    let mut xs = Vec::new();
    for h in 0..0x7c00u16 {
        let v = half_value(h);
        let next = if h == 0x7bff {
            65536.0
        } else {
            half_value(h + 1)
        };
        for c in [v, (v + next) / 2.0] {
            xs.push(c);
            xs.push(f64::from_bits(c.to_bits() + 1));
            if c > 0.0 {
                xs.push(f64::from_bits(c.to_bits() - 1));
            }
            let f = c as f32;
            if f64::from(f) == c {
                xs.push(f64::from(f32::from_bits(f.to_bits() + 1)));
                if f > 0.0 {
                    xs.push(f64::from(f32::from_bits(f.to_bits() - 1)));
                }
            }
        }
    }
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    for _ in 0..50_000 {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        let e = ((state >> 3) % 64) as i32 - 44;
        xs.push(f64::from_bits(0x3ff0_0000_0000_0000 | (state >> 12)) * 2f64.powi(e));
    }
    xs.extend([
        0.0,
        f64::INFINITY,
        1e300,
        f64::MAX,
        f64::from(f32::MAX),
        5e-324,
        f64::from(f32::from_bits(1)),
        65504.0,
        65519.999,
        65520.0,
        65536.0,
        1e5,
    ]);
    let positive = xs.len();
    for i in 0..positive {
        xs.push(-xs[i]);
    }
    xs.extend([
        f64::NAN,
        -f64::NAN,
        f64::from_bits(0x7ff0_0400_0000_0001), // signalling, payload in the top bits
        f64::from_bits(0xfff8_0c00_0000_0000),
        f64::from(f32::from_bits(0x7fa0_2000)), // from a signalling f32 NaN
    ]);
    xs
}

/// Floats for the f32 kernels: the inputs exactly representable in f32, plus f32 NaNs whose
/// payloads matter to the narrowing.
fn half_boundary_floats(xs: &[f64]) -> Vec<f32> {
    let mut fs: Vec<f32> = xs
        .iter()
        .filter(|&&x| !x.is_nan() && f64::from(x as f32) == x)
        .map(|&x| x as f32)
        .collect();
    fs.extend([
        f32::from_bits(0x7fc0_0000),
        f32::from_bits(0xffc0_2000),
        f32::from_bits(0x7f80_6000), // signalling
        f32::from_bits(0x7fbf_e000),
    ]);
    fs
}

fn same_half_bits(got: u16, want: u16) -> bool {
    got == want
}

fn launch_1d(p: &Program, kernel: &str, a: &mut [u8], b: &mut [u8], items: usize) {
    let (mut args, _) = Args::new(p, kernel);
    args.ptr(p, kernel, 0, a);
    args.ptr(p, kernel, 1, b);
    launch(
        p,
        kernel,
        &args,
        1,
        [0; 3],
        [items as u64, 1, 1],
        [64, 1, 1],
    );
}

fn bytes_of<T: Copy>(v: &mut [T]) -> &mut [u8] {
    // SAFETY: plain-old-data numbers viewed as their bytes, same lifetime and length in bytes.
    unsafe { std::slice::from_raw_parts_mut(v.as_mut_ptr().cast(), std::mem::size_of_val(v)) }
}

fn half_memory_program(recipe: Recipe, round_to_zero: bool) -> Program {
    let module = ferrocl_frontend::parse(&spirv("half_memory.cl", recipe))
        .unwrap_or_else(|e| panic!("frontend: {e}"));
    let options = BuildOptions {
        round_to_zero,
        ..BuildOptions::default()
    };
    compile(&module, &options).unwrap_or_else(|e| panic!("codegen: {e}"))
}

/// vload_half, vload_halfn and vloada_halfn of every one of the 2^16 encodings, in every width.
#[test]
fn vload_half_every_encoding_every_width() {
    both(|r| {
        let p = half_memory_program(r, false);
        let mut halves: Vec<u16> = (0..=u16::MAX).collect();
        let mut out = vec![0u32; 1 << 16];
        launch_1d(
            &p,
            "load_half",
            bytes_of(&mut halves),
            bytes_of(&mut out),
            1 << 16,
        );
        for h in 0..=u16::MAX {
            assert_eq!(
                out[h as usize],
                widened_bits(h),
                "{r:?} vload_half {h:#06x}"
            );
        }
        for n in [2usize, 3, 4, 8, 16] {
            let items = (1 << 16) / n;
            out.fill(0);
            let k = format!("load_half{n}");
            launch_1d(&p, &k, bytes_of(&mut halves), bytes_of(&mut out), items);
            for j in 0..items * n {
                assert_eq!(out[j], widened_bits(halves[j]), "{r:?} {k} element {j}");
            }
            // vloada_half3 reads 4-half-aligned groups (the fourth is skipped).
            let stride = if n == 3 { 4 } else { n };
            let items = (1 << 16) / stride;
            out.fill(0);
            let k = format!("loada_half{n}");
            launch_1d(&p, &k, bytes_of(&mut halves), bytes_of(&mut out), items);
            for i in 0..items {
                for c in 0..n {
                    let h = halves[i * stride + c];
                    assert_eq!(
                        out[i * n + c],
                        widened_bits(h),
                        "{r:?} {k} item {i} lane {c}"
                    );
                }
            }
        }
    });
}

/// vstore_half in every rounding mode from floats and doubles at every half boundary (and a
/// sample); the vector forms on a slice of the same inputs, with vstorea_half3's 4-half
/// stride leaving the fourth half untouched.
#[test]
fn vstore_half_every_mode_from_float_and_double() {
    let doubles = half_boundary_inputs();
    let floats = half_boundary_floats(&doubles);
    for round_to_zero in [false, true] {
        both(|r| {
            let p = half_memory_program(r, round_to_zero);
            let default = if round_to_zero {
                HalfMode::Rtz
            } else {
                HalfMode::Rte
            };
            let modes = [
                ("def", default),
                ("rte", HalfMode::Rte),
                ("rtz", HalfMode::Rtz),
                ("rtp", HalfMode::Rtp),
                ("rtn", HalfMode::Rtn),
            ];
            for (name, mode) in modes {
                // The scalar forms on every input; the default mode under both device settings,
                // the explicit ones once.
                if round_to_zero && name != "def" {
                    continue;
                }
                let mut xs = floats.clone();
                let mut q = vec![0u16; xs.len()];
                let k = format!("store_float_{name}");
                let items = xs.len();
                launch_1d(&p, &k, bytes_of(&mut xs), bytes_of(&mut q), items);
                for (x, &got) in xs.iter().zip(&q) {
                    let want = narrow_f32_ref(*x, mode);
                    assert!(
                        same_half_bits(got, want),
                        "{r:?} {k}({x:e} = {:#010x}): {got:#06x}, expected {want:#06x}",
                        x.to_bits()
                    );
                }
                let mut ds = doubles.clone();
                let mut q = vec![0u16; ds.len()];
                let k = format!("store_double_{name}");
                let items = ds.len();
                launch_1d(&p, &k, bytes_of(&mut ds), bytes_of(&mut q), items);
                for (x, &got) in ds.iter().zip(&q) {
                    let want = narrow_f64_ref(*x, mode);
                    assert!(
                        same_half_bits(got, want),
                        "{r:?} {k}({x:e} = {:#018x}): {got:#06x}, expected {want:#06x}",
                        x.to_bits()
                    );
                }
                // Vector forms: every 37th input, so each lane position sees every kind.
                let fs: Vec<f32> = floats.iter().step_by(37).copied().collect();
                let ds: Vec<f64> = doubles.iter().step_by(37).copied().collect();
                for n in [2usize, 3, 4, 8, 16] {
                    for aligned in [false, true] {
                        let stride = if aligned && n == 3 { 4 } else { n };
                        let prefix = if aligned { "storea" } else { "store" };
                        let items = fs.len() / n;
                        let mut xs = fs.clone();
                        let mut q = vec![0xdeadu16; items * stride];
                        let k = format!("{prefix}_float{n}_{name}");
                        launch_1d(&p, &k, bytes_of(&mut xs), bytes_of(&mut q), items);
                        for i in 0..items {
                            for c in 0..stride {
                                let want = if c < n {
                                    narrow_f32_ref(xs[i * n + c], mode)
                                } else {
                                    0xdead
                                };
                                assert_eq!(q[i * stride + c], want, "{r:?} {k} item {i} lane {c}");
                            }
                        }
                        let items = ds.len() / n;
                        let mut xs = ds.clone();
                        let mut q = vec![0xdeadu16; items * stride];
                        let k = format!("{prefix}_double{n}_{name}");
                        launch_1d(&p, &k, bytes_of(&mut xs), bytes_of(&mut q), items);
                        for i in 0..items {
                            for c in 0..stride {
                                let want = if c < n {
                                    narrow_f64_ref(xs[i * n + c], mode)
                                } else {
                                    0xdead
                                };
                                assert_eq!(q[i * stride + c], want, "{r:?} {k} item {i} lane {c}");
                            }
                        }
                    }
                }
            }
        });
    }
}

fn half_arith_program(recipe: Recipe) -> &'static Program {
    cached("half_arith.cl", recipe)
}

fn is_half_nan(h: u16) -> bool {
    h & 0x7c00 == 0x7c00 && h & 0x3ff != 0
}

/// Equal encodings, or both NaN (arithmetic may return any NaN).
fn same_half(got: u16, want: u16) -> bool {
    got == want || (is_half_nan(got) && is_half_nan(want))
}

/// Half value as f64, NaN and infinities included.
fn half_f64(h: u16) -> f64 {
    if h & 0x7c00 == 0x7c00 {
        if h & 0x3ff != 0 {
            return f64::NAN;
        }
        return if h & 0x8000 != 0 {
            f64::NEG_INFINITY
        } else {
            f64::INFINITY
        };
    }
    half_value(h)
}

/// Pseudo-random halves (every encoding equally likely).
fn random_halves(n: usize, seed: u64) -> Vec<u16> {
    let mut state = seed;
    (0..n)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state >> 24) as u16
        })
        .collect()
}

/// a·b + c for finite halves, exactly: every half is an integer number of 2^-24, so the sum is
/// an integer number of 2^-48 (at most 2^81 in magnitude); rounded to half by search and an
/// integer midpoint comparison. Non-finite cases follow f64's fused multiply-add.
fn fma_ref(a: u16, b: u16, c: u16) -> u16 {
    let (x, y, z) = (half_f64(a), half_f64(b), half_f64(c));
    if !(x.is_finite() && y.is_finite() && z.is_finite()) {
        let r = x.mul_add(y, z);
        return narrow_ref(r, HalfMode::Rte);
    }
    let units = |v: f64| (v * 2f64.powi(24)) as i128; // exact
    let n = units(x) * units(y) + (units(z) << 24);
    if n == 0 {
        // The sign of an exact zero sum is IEEE's: f64 gets it right.
        return if x.mul_add(y, z).is_sign_negative() {
            0x8000
        } else {
            0
        };
    }
    let sign: u16 = if n < 0 { 0x8000 } else { 0 };
    let a = n.abs();
    let scaled = |h: u16| -> i128 {
        if h == 0x7c00 {
            65536i128 << 48
        } else {
            units(half_value(h)) << 24
        }
    };
    let (mut lo, mut hi) = (0u16, 0x7c00u16);
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        if scaled(mid) <= a {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    if scaled(0x7bff) <= a {
        lo = 0x7bff;
    }
    if scaled(lo) == a {
        return sign | lo;
    }
    let hi = lo + 1;
    let twice = 2 * a;
    let mid2 = scaled(lo) + scaled(hi);
    let up = twice > mid2 || (twice == mid2 && lo & 1 == 1);
    sign | if up { hi } else { lo }
}

/// Half + − × ÷ and comparisons, every half against pseudo-random partners and special
/// values, against f64 (exact for + − ×, one rounding for ÷, then one rounding to half).
#[test]
fn half_arithmetic_is_correctly_rounded() {
    both(|r| {
        let p = half_arith_program(r);
        let mut a: Vec<u16> = (0..=u16::MAX).cycle().take(4 << 16).collect();
        let mut b = random_halves(a.len(), 0x1234_5678_9abc_def1);
        // Special partners for the first encodings: zeros, infinities, NaN, 1, max.
        for (i, s) in [
            0x0000u16, 0x8000, 0x7c00, 0xfc00, 0x7e00, 0x3c00, 0x7bff, 0x0001,
        ]
        .iter()
        .enumerate()
        {
            for j in 0..2048 {
                b[i * 2048 + j] = *s;
            }
        }
        let n = a.len();
        let mut outs = vec![vec![0u16; n]; 4];
        let mut cmp = vec![0i32; n];
        let k = "half_binary";
        let (mut args, _) = Args::new(p, k);
        args.ptr(p, k, 0, &mut a);
        args.ptr(p, k, 1, &mut b);
        for (i, o) in outs.iter_mut().enumerate() {
            args.ptr(p, k, 2 + i, o);
        }
        args.ptr(p, k, 6, &mut cmp);
        launch(p, k, &args, 1, [0; 3], [n as u64, 1, 1], [64, 1, 1]);
        for i in 0..n {
            let (x, y) = (half_f64(a[i]), half_f64(b[i]));
            let want = [x + y, x - y, x * y, x / y].map(|v| narrow_ref(v, HalfMode::Rte));
            for (op, (o, w)) in ["+", "-", "*", "/"].iter().zip(outs.iter().zip(want)) {
                assert!(
                    same_half(o[i], w),
                    "{r:?} {:#06x} {op} {:#06x} = {:#06x}, expected {w:#06x}",
                    a[i],
                    b[i],
                    o[i]
                );
            }
            let c = i32::from(x < y)
                | i32::from(x == y) << 1
                | i32::from(x > y) << 2
                | i32::from(x.is_nan() || y.is_nan()) << 3;
            assert_eq!(cmp[i], c, "{r:?} compare {:#06x} {:#06x}", a[i], b[i]);
        }
    });
}

#[test]
fn half_fma_is_correctly_rounded() {
    both(|r| {
        let p = half_arith_program(r);
        let n = 1 << 18;
        let mut a = random_halves(n, 0x0dd_ba11);
        let mut b = random_halves(n, 0xca75_0001);
        let mut c = random_halves(n, 0xfeed_f00d);
        // Products near halfway cases of c: a·b with small exponents next to c ≈ 1.
        for i in 0..n / 4 {
            a[i] = 0x3c00 | (a[i] & 0x83ff);
            b[i] = 0x1000 | (b[i] & 0x83ff);
            c[i] = 0x3c00 | (c[i] & 0x03ff);
        }
        let mut out = vec![0u16; n];
        let k = "half_fma";
        let (mut args, _) = Args::new(p, k);
        args.ptr(p, k, 0, &mut a);
        args.ptr(p, k, 1, &mut b);
        args.ptr(p, k, 2, &mut c);
        args.ptr(p, k, 3, &mut out);
        launch(p, k, &args, 1, [0; 3], [n as u64, 1, 1], [64, 1, 1]);
        for i in 0..n {
            let want = fma_ref(a[i], b[i], c[i]);
            assert!(
                same_half(out[i], want),
                "{r:?} fma({:#06x}, {:#06x}, {:#06x}) = {:#06x}, expected {want:#06x}",
                a[i],
                b[i],
                c[i],
                out[i]
            );
        }
    });
}

/// sqrt (correctly rounded), negation, widening to float and double, every encoding.
#[test]
fn half_unary_every_encoding() {
    both(|r| {
        let p = half_arith_program(r);
        let mut a: Vec<u16> = (0..=u16::MAX).collect();
        let n = a.len();
        let mut root = vec![0u16; n];
        let mut neg = vec![0u16; n];
        let mut wide = vec![0u32; n];
        let mut wider = vec![0f64; n];
        let k = "half_unary";
        let (mut args, _) = Args::new(p, k);
        args.ptr(p, k, 0, &mut a);
        args.ptr(p, k, 1, &mut root);
        args.ptr(p, k, 2, &mut neg);
        args.ptr(p, k, 3, &mut wide);
        args.ptr(p, k, 4, &mut wider);
        launch(p, k, &args, 1, [0; 3], [n as u64, 1, 1], [64, 1, 1]);
        for h in 0..=u16::MAX {
            let i = h as usize;
            let x = half_f64(h);
            let want = narrow_ref(x.sqrt(), HalfMode::Rte);
            assert!(
                same_half(root[i], want),
                "{r:?} sqrt({h:#06x}) = {:#06x}, expected {want:#06x}",
                root[i]
            );
            if is_half_nan(h) {
                assert!(
                    is_half_nan(neg[i]) && f32::from_bits(wide[i]).is_nan() && wider[i].is_nan()
                );
                continue;
            }
            assert_eq!(neg[i], h ^ 0x8000, "{r:?} -{h:#06x}");
            assert_eq!(wide[i], widened_bits(h), "{r:?} (float){h:#06x}");
            assert_eq!(wider[i].to_bits(), x.to_bits(), "{r:?} (double){h:#06x}");
        }
    });
}

/// Half → int in each rounding mode and the saturating forms, every encoding.
#[test]
fn half_to_integer_every_encoding() {
    both(|r| {
        let p = half_arith_program(r);
        let mut a: Vec<u16> = (0..=u16::MAX).collect();
        let n = a.len();
        let mut ints = vec![vec![0i32; n]; 4];
        let mut sat = vec![0i16; n];
        let mut usat = vec![0u8; n];
        let k = "half_to_int";
        let (mut args, _) = Args::new(p, k);
        args.ptr(p, k, 0, &mut a);
        for (i, o) in ints.iter_mut().enumerate() {
            args.ptr(p, k, 1 + i, o);
        }
        args.ptr(p, k, 5, &mut sat);
        args.ptr(p, k, 6, &mut usat);
        launch(p, k, &args, 1, [0; 3], [n as u64, 1, 1], [64, 1, 1]);
        for h in 0..=u16::MAX {
            let i = h as usize;
            let x = half_f64(h);
            if x.is_nan() {
                // Only the saturating forms define NaN: 0.
                assert_eq!((sat[i], usat[i]), (0, 0), "{r:?} NaN {h:#06x}");
                continue;
            }
            assert_eq!(
                sat[i],
                x.trunc().clamp(-32768.0, 32767.0) as i16,
                "{r:?} short_sat {h:#06x}"
            );
            assert_eq!(
                usat[i],
                x.trunc().clamp(0.0, 255.0) as u8,
                "{r:?} uchar_sat {h:#06x}"
            );
            if x.is_infinite() {
                continue;
            }
            let want = [x.round_ties_even(), x.trunc(), x.ceil(), x.floor()];
            for (m, (o, w)) in ["rte", "rtz", "rtp", "rtn"]
                .iter()
                .zip(ints.iter().zip(want))
            {
                assert_eq!(o[i], w as i32, "{r:?} convert_int_{m}({h:#06x})");
            }
        }
    });
}

/// float, double, int, long and ulong → half: the default conversion and each `_rtX` form,
/// at every half boundary (integers: every value around the half range and beyond).
#[test]
fn conversions_to_half_every_mode() {
    let doubles = half_boundary_inputs();
    let floats = half_boundary_floats(&doubles);
    let modes = [
        HalfMode::Rte,
        HalfMode::Rte,
        HalfMode::Rtz,
        HalfMode::Rtp,
        HalfMode::Rtn,
    ];
    fn run<T: Copy>(p: &Program, k: &str, xs: &mut [T]) -> Vec<Vec<u16>> {
        let n = xs.len();
        let mut outs = vec![vec![0u16; n]; 5];
        let (mut args, _) = Args::new(p, k);
        args.ptr(p, k, 0, xs);
        for (i, o) in outs.iter_mut().enumerate() {
            args.ptr(p, k, 1 + i, o);
        }
        launch(p, k, &args, 1, [0; 3], [n as u64, 1, 1], [64, 1, 1]);
        outs
    }
    both(|r| {
        let p = half_arith_program(r);
        let mut xs = floats.clone();
        let outs = run(p, "half_from_float", &mut xs);
        for (o, mode) in outs.iter().zip(modes) {
            for (x, got) in xs.iter().zip(o) {
                let want = narrow_f32_ref(*x, mode);
                assert!(
                    same_half(*got, want),
                    "{r:?} float {x:e} {mode:?}: {got:#06x} vs {want:#06x}"
                );
            }
        }
        let mut ds = doubles.clone();
        let outs = run(p, "half_from_double", &mut ds);
        for (o, mode) in outs.iter().zip(modes) {
            for (x, got) in ds.iter().zip(o) {
                let want = narrow_f64_ref(*x, mode);
                assert!(
                    same_half(*got, want),
                    "{r:?} double {x:e} {mode:?}: {got:#06x} vs {want:#06x}"
                );
            }
        }
        let mut ints: Vec<i32> = (-70_000..70_000).chain([i32::MIN, i32::MAX]).collect();
        let outs = run(p, "half_from_int", &mut ints);
        for (o, mode) in outs.iter().zip(modes) {
            for (x, got) in ints.iter().zip(o) {
                assert_eq!(
                    *got,
                    narrow_ref(f64::from(*x), mode),
                    "{r:?} int {x} {mode:?}"
                );
            }
        }
        let mut longs: Vec<i64> = (-70_000i64..70_000)
            .chain([i64::MIN, i64::MAX, 1 << 53, -(1 << 60)])
            .collect();
        let outs = run(p, "half_from_long", &mut longs);
        for (o, mode) in outs.iter().zip(modes) {
            for (x, got) in longs.iter().zip(o) {
                // Beyond 2^53 the f64 rounding keeps the value past the overflow threshold.
                assert_eq!(*got, narrow_ref(*x as f64, mode), "{r:?} long {x} {mode:?}");
            }
        }
        let mut ulongs: Vec<u64> = (0u64..140_000).chain([u64::MAX, 1 << 63]).collect();
        let outs = run(p, "half_from_ulong", &mut ulongs);
        for (o, mode) in outs.iter().zip(modes) {
            for (x, got) in ulongs.iter().zip(o) {
                assert_eq!(
                    *got,
                    narrow_ref(*x as f64, mode),
                    "{r:?} ulong {x} {mode:?}"
                );
            }
        }
    });
}

/// half4/half8 arithmetic with a half kernel argument: a*s + b (rounded after each operation,
/// as written) and a widening shuffle divided by s.
#[test]
fn half_vectors_and_a_half_argument() {
    both(|r| {
        let p = half_arith_program(r);
        let items = 4096;
        let mut a = random_halves(4 * items, 77);
        let mut b = random_halves(4 * items, 78);
        let s: u16 = 0x3e00; // 1.5
        let mut out = vec![0u16; 4 * items];
        let mut wide = vec![0u16; 8 * items];
        let k = "half_vectors";
        let (mut args, _) = Args::new(p, k);
        args.ptr(p, k, 0, &mut a);
        args.ptr(p, k, 1, &mut b);
        args.set(p, k, 2, &s.to_ne_bytes());
        args.ptr(p, k, 3, &mut out);
        args.ptr(p, k, 4, &mut wide);
        launch(p, k, &args, 1, [0; 3], [items as u64, 1, 1], [64, 1, 1]);
        let sv = half_f64(s);
        let rte = |v: f64| narrow_ref(v, HalfMode::Rte);
        for i in 0..items {
            for c in 0..4 {
                let j = 4 * i + c;
                let prod = rte(half_f64(a[j]) * sv);
                let want = rte(half_f64(prod) + half_f64(b[j]));
                assert!(
                    same_half(out[j], want),
                    "{r:?} item {i} lane {c}: {:#06x} vs {want:#06x}",
                    out[j]
                );
            }
            for c in 0..8 {
                let src = if c < 4 {
                    a[4 * i + c]
                } else {
                    b[4 * i + 7 - c]
                };
                let want = rte(half_f64(src) / sv);
                let got = wide[8 * i + c];
                assert!(
                    same_half(got, want),
                    "{r:?} wide item {i} lane {c}: {got:#06x} vs {want:#06x}"
                );
            }
        }
    });
}

/// exp, log, sin and pow on every half, within the spec's half ULP bounds (2, 2, 2, 4 ulp)
/// of the f64 functions.
#[test]
fn half_math_within_the_half_ulp_bounds() {
    both(|r| {
        let p = half_arith_program(r);
        let mut a: Vec<u16> = (0..=u16::MAX).collect();
        let n = a.len();
        let mut outs = vec![vec![0u16; n]; 4];
        let k = "half_math";
        let (mut args, _) = Args::new(p, k);
        args.ptr(p, k, 0, &mut a);
        for (i, o) in outs.iter_mut().enumerate() {
            args.ptr(p, k, 1 + i, o);
        }
        launch(p, k, &args, 1, [0; 3], [n as u64, 1, 1], [64, 1, 1]);
        type Case = (&'static str, fn(f64) -> f64, f64);
        let funcs: [Case; 4] = [
            ("exp", f64::exp, 2.0),
            ("log", f64::ln, 2.0),
            ("sin", f64::sin, 2.0),
            ("pow", |x| x.powf(1.5), 4.0),
        ];
        for ((name, f, bound), o) in funcs.iter().zip(&outs) {
            let mut worst = 0f64;
            for h in 0..=u16::MAX {
                let want = f(half_f64(h));
                let got = o[h as usize];
                if want.is_nan() {
                    assert!(
                        is_half_nan(got),
                        "{r:?} {name}({h:#06x}) = {got:#06x}, expected NaN"
                    );
                    continue;
                }
                if want.is_infinite() || want.abs() >= 65520.0 {
                    assert_eq!(
                        half_f64(got),
                        want.signum() * f64::INFINITY,
                        "{r:?} {name}({h:#06x})"
                    );
                    continue;
                }
                let e = (want.abs().log2().floor() as i32).max(-14);
                let ulp = 2f64.powi(e - 10);
                let err = (half_f64(got) - want).abs() / ulp;
                assert!(
                    err <= *bound,
                    "{r:?} {name}({h:#06x}) = {got:#06x}: {err} ulp"
                );
                worst = worst.max(err);
            }
            assert!(
                worst <= 0.5 + 1.0 / 1024.0,
                "{r:?} {name}: worst {worst} ulp"
            );
        }
    });
}

/// fract, sincos and modf write their second result through a half pointer; nextafter steps
/// in the half format. Every encoding.
#[test]
fn half_out_parameters_and_nextafter() {
    both(|r| {
        let p = half_arith_program(r);
        let mut a: Vec<u16> = (0..=u16::MAX).collect();
        let n = a.len();
        let mut outs = vec![vec![0u16; n]; 8];
        let k = "half_shaped";
        let (mut args, _) = Args::new(p, k);
        args.ptr(p, k, 0, &mut a);
        for (i, o) in outs.iter_mut().enumerate() {
            args.ptr(p, k, 1 + i, o);
        }
        launch(p, k, &args, 1, [0; 3], [n as u64, 1, 1], [64, 1, 1]);
        let rte = |v: f64| narrow_ref(v, HalfMode::Rte);
        for h in 0..=u16::MAX {
            let i = h as usize;
            let x = half_f64(h);
            let [fr, fl, s, c, up, down, ip, frac2] = [0, 1, 2, 3, 4, 5, 6, 7].map(|j| outs[j][i]);
            if x.is_nan() {
                assert!(
                    [fr, fl, s, c, up, down, ip, frac2]
                        .iter()
                        .all(|&v| is_half_nan(v)),
                    "{r:?} {h:#06x}"
                );
                continue;
            }
            // fract: min(x - floor(x), largest half below 1), floor(x) through the pointer.
            if x == 0.0 {
                assert_eq!(fr, h, "{r:?} fract of a zero keeps its sign");
            } else if x.is_finite() {
                let want = rte((x - x.floor()).min(1.0 - 1.0 / 2048.0));
                assert_eq!(
                    fr,
                    if want == 0x3c00 { 0x3bff } else { want },
                    "{r:?} fract({h:#06x})"
                );
            }
            assert_eq!(half_f64(fl), x.floor(), "{r:?} fract floor({h:#06x})");
            for (name, got, want) in [("sin", s, x.sin()), ("cos", c, x.cos())] {
                if want.is_nan() {
                    assert!(is_half_nan(got), "{r:?} {name}({h:#06x})");
                    continue;
                }
                let e = (want.abs().log2().floor() as i32).max(-14);
                let err = (half_f64(got) - want).abs() / 2f64.powi(e - 10);
                assert!(err <= 2.0, "{r:?} {name}({h:#06x}) = {got:#06x}: {err} ulp");
            }
            // nextafter toward ±inf: the neighbouring encoding (zeros step to ±2^-24).
            let (want_up, want_down) = match h {
                0x0000 | 0x8000 => (0x0001, 0x8001),
                0x7c00 => (0x7c00, 0x7bff),
                0xfc00 => (0xfbff, 0xfc00),
                _ if h & 0x8000 == 0 => (h + 1, h - 1),
                _ => (h - 1, h + 1),
            };
            let want_down = if want_down == 0x8000 && h == 0x0001 {
                0x0000
            } else {
                want_down
            };
            let want_up = if h == 0x8001 { 0x8000 } else { want_up };
            assert_eq!(
                (up, down),
                (want_up, want_down),
                "{r:?} nextafter({h:#06x})"
            );
            // modf(-x): integral part and fraction with -x's sign.
            let y = -x;
            assert_eq!(
                half_f64(ip).to_bits(),
                y.trunc().to_bits(),
                "{r:?} modf int(-{h:#06x})"
            );
            let want_frac = if y.is_infinite() {
                0.0f64.copysign(y)
            } else {
                (y - y.trunc()).copysign(y)
            };
            assert_eq!(
                half_f64(frac2).to_bits(),
                want_frac.to_bits(),
                "{r:?} modf frac(-{h:#06x})"
            );
        }
    });
}

/// bitselect works on the 16-bit encodings; isnormal/isfinite/isinf/isnan/signbit classify
/// halves (a half subnormal is not normal, though its f32 is).
#[test]
fn half_bit_operations_and_classification() {
    both(|r| {
        let p = half_arith_program(r);
        let mut a: Vec<u16> = (0..=u16::MAX).collect();
        let n = a.len();
        let mut b = random_halves(n, 5);
        let mut c = random_halves(n, 6);
        let mut sel = vec![0u16; n];
        let mut class = vec![0i32; n];
        let mut sign = vec![0i32; n];
        let k = "half_bits";
        let (mut args, _) = Args::new(p, k);
        args.ptr(p, k, 0, &mut a);
        args.ptr(p, k, 1, &mut b);
        args.ptr(p, k, 2, &mut c);
        args.ptr(p, k, 3, &mut sel);
        args.ptr(p, k, 4, &mut class);
        args.ptr(p, k, 5, &mut sign);
        launch(p, k, &args, 1, [0; 3], [n as u64, 1, 1], [64, 1, 1]);
        for i in 0..n {
            let want = (a[i] & !c[i]) | (b[i] & c[i]);
            // Bit for bit, signalling NaNs included: halves move through f32 unchanged.
            assert_eq!(
                sel[i], want,
                "{r:?} bitselect({:#06x}, {:#06x}, {:#06x})",
                a[i], b[i], c[i]
            );
            let h = a[i];
            let e = (h >> 10) & 0x1f;
            let want = i32::from(e != 0 && e != 0x1f)
                | i32::from(e != 0x1f) << 1
                | i32::from(e == 0x1f && h & 0x3ff == 0) << 2
                | i32::from(e == 0x1f && h & 0x3ff != 0) << 3;
            assert_eq!(class[i], want, "{r:?} classify {h:#06x}");
            assert_eq!(sign[i], i32::from(h >> 15), "{r:?} signbit {h:#06x}");
        }
    });
}

/// work_group_reduce_add over halves: within the sum's rounding (the f32 sum of at most 64
/// halves is exact or nearly so, then rounded once); the inclusive max scan exactly.
#[test]
fn half_work_group_sum() {
    let language = &[
        "-cl-std=CL3.0",
        "-Xclang",
        "-cl-ext=-all,+__opencl_c_work_group_collective_functions,+__opencl_c_int64,+cl_khr_fp16",
    ];
    both(|r| {
        let p = build_with("half_collectives.cl", r, language);
        let (items, local) = (1024usize, 64usize);
        // Small halves (|x| < 2^4 with few bits) keep the f32 sum exact.
        let mut a: Vec<u16> = random_halves(items, 9)
            .iter()
            .map(|h| (h & 0x83c0) | 0x3000)
            .collect();
        let mut sum = vec![0u16; items];
        let mut prefix = vec![0u16; items];
        let k = "half_group_sum";
        let (mut args, _) = Args::new(&p, k);
        args.ptr(&p, k, 0, &mut a);
        args.ptr(&p, k, 1, &mut sum);
        args.ptr(&p, k, 2, &mut prefix);
        launch(
            &p,
            k,
            &args,
            1,
            [0; 3],
            [items as u64, 1, 1],
            [local as u64, 1, 1],
        );
        for g in 0..items / local {
            let group = &a[g * local..(g + 1) * local];
            let exact: f64 = group.iter().map(|&h| half_f64(h)).sum();
            let want = narrow_ref(exact, HalfMode::Rte);
            let mut max = f64::NEG_INFINITY;
            for (j, &h) in group.iter().enumerate() {
                assert_eq!(sum[g * local + j], want, "{r:?} group {g} item {j}");
                max = max.max(half_f64(h));
                assert_eq!(
                    half_f64(prefix[g * local + j]),
                    max,
                    "{r:?} scan group {g} item {j}"
                );
            }
        }
    });
}

/// Halves moved without arithmetic keep their exact encoding (signalling NaNs included):
/// as_ushort/as_half, private arrays, local memory across a barrier, vload4/vstore4.
#[test]
fn half_moves_keep_every_encoding() {
    both(|r| {
        let p = half_arith_program(r);
        let mut a: Vec<u16> = (0..=u16::MAX).collect();
        let n = a.len();
        let mut bits = vec![0u16; n];
        let mut from_bits = vec![0u16; n];
        let mut copy4 = vec![0u16; 4 * n];
        let k = "half_moves";
        let (mut args, _) = Args::new(p, k);
        args.ptr(p, k, 0, &mut a);
        args.ptr(p, k, 1, &mut bits);
        args.ptr(p, k, 2, &mut from_bits);
        args.ptr(p, k, 3, &mut copy4);
        // The local buffer (64 halves per group) at offset 0 of the arena.
        args.set(p, k, 4, &0u64.to_ne_bytes());
        launch(p, k, &args, 1, [0; 3], [n as u64, 1, 1], [64, 1, 1]);
        for i in 0..n {
            assert_eq!(bits[i], a[i], "{r:?} as_ushort({:#06x})", a[i]);
            assert_eq!(
                from_bits[i],
                a[i] ^ 0x8000,
                "{r:?} as_half({:#06x})",
                a[i] ^ 0x8000
            );
            let tmp: Vec<u16> = (0..4).map(|k| a[(4 * i + k) % n]).collect();
            let want = [tmp[0], tmp[1], tmp[2], tmp[i % 4]];
            assert_eq!(&copy4[4 * i..4 * i + 4], &want, "{r:?} item {i}");
        }
    });
}
