//! Kernel execution through the system loader: each kernel of `icd/tests/kernels/` runs at
//! `-O0` and optimised and is checked element by element against a host reference.

mod common;

use common::*;

/// Every kernel of icd/tests/kernels compiles with both recipes to SPIR-V that
/// `spirv-val --target-env opencl2.1` accepts (checked inside `spirv`). Needs no driver.
#[test]
fn kernels_compile_to_valid_spirv() {
    let dir = kernel_source("vecadd")
        .parent()
        .expect("kernels dir")
        .to_path_buf();
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .expect("read kernels dir")
        .filter_map(|e| {
            e.ok()?
                .file_name()
                .to_str()?
                .strip_suffix(".cl")
                .map(str::to_owned)
        })
        .collect();
    names.sort();
    assert!(names.len() >= 10, "kernels found: {names:?}");
    for name in &names {
        for opt in OPTS {
            let spv = spirv(name, opt);
            assert!(
                spv.len() > 20 && spv[..4] == 0x0723_0203u32.to_le_bytes(),
                "{name} {opt:?}: not SPIR-V"
            );
            // llvm-spirv writes the lowest version a module's contents allow: 1.0 (version word
            // 0x00010000), or 1.1 for a required sub-group size (execution mode SubgroupSize,
            // capability SubgroupDispatch, 58).
            let words: Vec<u32> = spv
                .chunks_exact(4)
                .map(|c| u32::from_le_bytes(c.try_into().unwrap()))
                .collect();
            let dispatch = words.windows(2).any(|w| w == [(2 << 16) | 17, 58]);
            let want: u32 = if dispatch { 0x0001_0100 } else { 0x0001_0000 };
            assert_eq!(
                spv[4..8],
                want.to_le_bytes(),
                "{name} {opt:?}: SPIR-V version"
            );
        }
    }
}

/// Runs `vecadd` over `n` elements with the given local size and checks every element.
fn vecadd_case(env: &Env, opt: Opt, n: usize, local: Option<&[usize]>) {
    let mut rng = Rng::new(1);
    let a: Vec<f32> = (0..n).map(|_| rng.f32_in(-1000.0, 1000.0)).collect();
    let b: Vec<f32> = (0..n).map(|_| rng.f32_in(-1000.0, 1000.0)).collect();
    let k = env.kernel("vecadd", opt, "vecadd");
    let (ba, bb, bc) = (
        env.buffer(&a),
        env.buffer(&b),
        env.buffer_filled(n, f32::NAN),
    );
    arg_buf(&k, 0, &ba);
    arg_buf(&k, 1, &bb);
    arg_buf(&k, 2, &bc);
    env.run(&k, &[n], local, None);
    let c = env.read(&bc, n);
    for i in 0..n {
        assert_eq!(
            c[i].to_bits(),
            (a[i] + b[i]).to_bits(),
            "{opt:?} vecadd[{i}]: {} + {}",
            a[i],
            b[i]
        );
    }
}

#[test]
fn vecadd() {
    let env = Env::new();
    for opt in OPTS {
        vecadd_case(&env, opt, 4096, Some(&[64]));
        vecadd_case(&env, opt, 1 << 20, None);
        // A prime size with NULL local size: the implementation must pick a size that fits.
        vecadd_case(&env, opt, 1009, None);
    }
}

#[test]
fn saxpy() {
    let env = Env::new();
    let n = 10_000;
    let a = 1.7f32;
    let mut rng = Rng::new(2);
    let x: Vec<f32> = (0..n).map(|_| rng.f32_in(-10.0, 10.0)).collect();
    let y: Vec<f32> = (0..n).map(|_| rng.f32_in(-10.0, 10.0)).collect();
    for opt in OPTS {
        let k = env.kernel("saxpy", opt, "saxpy");
        let (bx, by) = (env.buffer(&x), env.buffer(&y));
        arg(&k, 0, &a);
        arg_buf(&k, 1, &bx);
        arg_buf(&k, 2, &by);
        env.run(&k, &[n], Some(&[100]), None);
        let got = env.read(&by, n);
        for i in 0..n {
            // FP_CONTRACT is on: a*x+y may be one fused op or two rounded ones.
            let separate = a * x[i] + y[i];
            let fused = a.mul_add(x[i], y[i]);
            assert!(
                got[i] == separate || got[i] == fused,
                "{opt:?} saxpy[{i}] = {} (want {separate} or {fused})",
                got[i]
            );
        }
    }
}

#[test]
fn matmul_non_square() {
    let env = Env::new();
    let (m, n, kk) = (37usize, 23usize, 51usize);
    let mut rng = Rng::new(3);
    // Small integers: every product and partial sum is exact in f32, so the result is
    // independent of summation contraction.
    let a: Vec<f32> = (0..m * kk)
        .map(|_| (rng.next_u32() % 9) as f32 - 4.0)
        .collect();
    let b: Vec<f32> = (0..kk * n)
        .map(|_| (rng.next_u32() % 9) as f32 - 4.0)
        .collect();
    let mut want = vec![0f32; m * n];
    for r in 0..m {
        for c in 0..n {
            want[r * n + c] = (0..kk).map(|i| a[r * kk + i] * b[i * n + c]).sum();
        }
    }
    for opt in OPTS {
        // Exact range with NULL local size, then a range padded to 8x8 groups that
        // exercises the kernel's bounds check.
        let cases: [(&[usize], Option<&[usize]>); 2] =
            [(&[n, m], None), (&[24, 40], Some(&[8, 8]))];
        for (global, local) in cases {
            let k = env.kernel("matmul", opt, "matmul");
            let (ba, bb, bc) = (
                env.buffer(&a),
                env.buffer(&b),
                env.buffer_filled(m * n, f32::NAN),
            );
            arg_buf(&k, 0, &ba);
            arg_buf(&k, 1, &bb);
            arg_buf(&k, 2, &bc);
            arg(&k, 3, &(m as u32));
            arg(&k, 4, &(n as u32));
            arg(&k, 5, &(kk as u32));
            env.run(&k, global, local, None);
            let got = env.read(&bc, m * n);
            for i in 0..m * n {
                assert_eq!(
                    got[i],
                    want[i],
                    "{opt:?} global {global:?}: C[{}][{}]",
                    i / n,
                    i % n
                );
            }
        }
    }
}

fn mandel_host(cx: f32, cy: f32, max_iter: u32) -> u32 {
    let (mut zx, mut zy) = (0f32, 0f32);
    let mut i = 0;
    while i < max_iter {
        let zx2 = zx * zx;
        let zy2 = zy * zy;
        if zx2 + zy2 > 4.0 {
            break;
        }
        let nzx = (zx2 - zy2) + cx;
        zy = (2.0 * zx) * zy + cy;
        zx = nzx;
        i += 1;
    }
    i
}

/// The kernel disables FP contraction and uses only +, -, * on f32, each correctly
/// rounded in OpenCL and in Rust, so the iteration counts must agree exactly (no ±1
/// tolerance at the escape boundary is needed). The grid never produces denormals,
/// so a flush-to-zero device computes the same values.
#[test]
fn mandelbrot_exact_iterations() {
    let env = Env::new();
    let (w, h, max_iter) = (96usize, 64usize, 256u32);
    let (x0, y0) = (-2.2f32, -1.2f32);
    let (dx, dy) = (3.2f32 / w as f32, 2.4f32 / h as f32);
    let want: Vec<u32> = (0..w * h)
        .map(|i| mandel_host(x0 + dx * (i % w) as f32, y0 + dy * (i / w) as f32, max_iter))
        .collect();
    assert!(
        want.contains(&max_iter) && want.iter().any(|&v| v < 5),
        "grid covers inside and outside"
    );
    for opt in OPTS {
        let k = env.kernel("mandelbrot", opt, "mandelbrot");
        let out = env.buffer_filled(w * h, u32::MAX);
        arg_buf(&k, 0, &out);
        arg(&k, 1, &x0);
        arg(&k, 2, &y0);
        arg(&k, 3, &dx);
        arg(&k, 4, &dy);
        arg(&k, 5, &(w as u32));
        arg(&k, 6, &max_iter);
        env.run(&k, &[w, h], Some(&[16, 4]), None);
        let got = env.read(&out, w * h);
        let bad: Vec<_> = (0..w * h).filter(|&i| got[i] != want[i]).collect();
        assert!(
            bad.is_empty(),
            "{opt:?}: {} pixels differ, first: {:?}",
            bad.len(),
            bad.iter()
                .take(5)
                .map(|&i| (i % w, i / w, got[i], want[i]))
                .collect::<Vec<_>>()
        );
    }
}

fn hash32_host(x: u32) -> u32 {
    let mut h = x ^ x.rotate_left(13);
    h = h.wrapping_mul(0x9E37_79B1);
    h = h.wrapping_add(x.leading_zeros() + x.count_ones() * 7);
    h = h.rotate_left(x % 32);
    h ^= h.rotate_left(37 % 32);
    h.wrapping_add(
        h.leading_zeros()
            .wrapping_mul(0x0100_0193)
            .wrapping_add((h ^ x).count_ones()),
    )
}

fn hash64_host(x: u64) -> u64 {
    let mut h = x ^ x.rotate_left(29);
    h = h.wrapping_mul(0x9E37_79B9_7F4A_7C15);
    h = h.wrapping_add(x.leading_zeros() as u64 + x.count_ones() as u64 * 11);
    h = h.rotate_left((x % 64) as u32);
    h ^= h.rotate_left(71 % 64);
    h.wrapping_add(
        (h.leading_zeros() as u64)
            .wrapping_mul(0x100_0000_01B3)
            .wrapping_add((h ^ x).count_ones() as u64),
    )
}

#[test]
fn integer_hash_rotate_clz_popcount() {
    let env = Env::new();
    let n = 4096;
    let mut rng = Rng::new(4);
    let mut in32: Vec<u32> = (0..n).map(|_| rng.next_u32()).collect();
    let mut in64: Vec<u64> = (0..n).map(|_| rng.next_u64()).collect();
    let edge32 = [0, 1, 31, 32, 33, 0x8000_0000, u32::MAX, 0x7FFF_FFFF];
    let edge64 = [
        0,
        1,
        63,
        64,
        65,
        1 << 63,
        u64::MAX,
        u64::MAX >> 1,
        0xFFFF_FFFF,
    ];
    in32[..edge32.len()].copy_from_slice(&edge32);
    in64[..edge64.len()].copy_from_slice(&edge64);
    for opt in OPTS {
        let k = env.kernel("inthash", opt, "hash32");
        let (bi, bo) = (env.buffer(&in32), env.buffer_filled(n, 0u32));
        arg_buf(&k, 0, &bi);
        arg_buf(&k, 1, &bo);
        env.run(&k, &[n], Some(&[32]), None);
        let got = env.read(&bo, n);
        for i in 0..n {
            assert_eq!(
                got[i],
                hash32_host(in32[i]),
                "{opt:?} hash32({:#x})",
                in32[i]
            );
        }

        let k = env.kernel("inthash", opt, "hash64");
        let (bi, bo) = (env.buffer(&in64), env.buffer_filled(n, 0u64));
        arg_buf(&k, 0, &bi);
        arg_buf(&k, 1, &bo);
        env.run(&k, &[n], None, None);
        let got = env.read(&bo, n);
        for i in 0..n {
            assert_eq!(
                got[i],
                hash64_host(in64[i]),
                "{opt:?} hash64({:#x})",
                in64[i]
            );
        }
    }
}

/// Inputs spread over many binades plus special values in fixed lanes.
fn float4_inputs(n: usize, seed: u64, specials: bool) -> Vec<[f32; 4]> {
    let mut rng = Rng::new(seed);
    (0..n)
        .map(|i| {
            let mut v = [0f32; 4];
            for x in &mut v {
                let e = (rng.next_u32() % 41) as i32 - 20;
                *x = rng.f32_in(-1.0, 1.0) * 2f32.powi(e);
            }
            if specials {
                if i % 97 == 0 {
                    v[0] = f32::NAN;
                }
                if i % 89 == 1 {
                    v[1] = f32::INFINITY;
                }
                if i % 83 == 2 {
                    v[2] = f32::NEG_INFINITY;
                }
                if i % 7 == 3 {
                    v[3] = (i % 13) as f32 - 6.5; // exact halves for floor
                }
                if i % 11 == 4 {
                    v[2] = -((i % 5) as f32); // exact integers, including -0.0
                }
            }
            v
        })
        .collect()
}

fn same_or_both_nan(got: f32, want: f32) -> bool {
    (got.is_nan() && want.is_nan()) || got == want
}

/// Tolerances from the OpenCL 3.0 full-profile tables: fabs, floor, fmin, fmax, clamp and
/// fma are exact; mad is an fma or a separately rounded multiply and add; sqrt <= 3 ulp;
/// rsqrt <= 2 ulp; dot (geometric table) within max*max*(2n-1)*FLT_EPSILON.
#[test]
fn float4_builtins() {
    let env = Env::new();
    let n = 2048;
    let a = float4_inputs(n, 5, true);
    let b = float4_inputs(n, 6, false);
    let c = float4_inputs(n, 7, false);
    for opt in OPTS {
        let k = env.kernel("float4ops", opt, "float4ops");
        let (ba, bb, bc) = (env.buffer(&a), env.buffer(&b), env.buffer(&c));
        let out = env.buffer_filled(n * 10, [f32::NAN; 4]);
        arg_buf(&k, 0, &ba);
        arg_buf(&k, 1, &bb);
        arg_buf(&k, 2, &bc);
        arg_buf(&k, 3, &out);
        env.run(&k, &[n], Some(&[64]), None);
        let got = env.read(&out, n * 10);
        for i in 0..n {
            let o = &got[10 * i..10 * i + 10];
            for l in 0..4 {
                let (x, y, z) = (a[i][l], b[i][l], c[i][l]);
                let at = |what: &str, g: f32| {
                    format!("{opt:?} element {i} lane {l}: {what}({x}, {y}, {z}) = {g}")
                };
                assert!(
                    same_or_both_nan(o[0][l], x.abs()),
                    "{}",
                    at("fabs", o[0][l])
                );
                assert!(
                    same_or_both_nan(o[1][l], x.floor()),
                    "{}",
                    at("floor", o[1][l])
                );
                // f32::min/max ignore a NaN operand, as OpenCL's fmin/fmax must.
                assert!(
                    same_or_both_nan(o[2][l], x.min(y)),
                    "{}",
                    at("fmin", o[2][l])
                );
                assert!(
                    same_or_both_nan(o[3][l], x.max(y)),
                    "{}",
                    at("fmax", o[3][l])
                );
                if !x.is_nan() {
                    assert_eq!(o[4][l], x.clamp(-0.5, 0.75), "{}", at("clamp", o[4][l]));
                }
                let (sep, fused) = (x * y + z, x.mul_add(y, z));
                assert!(
                    same_or_both_nan(o[5][l], sep) || same_or_both_nan(o[5][l], fused),
                    "{}",
                    at("mad", o[5][l])
                );
                assert!(same_or_both_nan(o[6][l], fused), "{}", at("fma", o[6][l]));
                let s = (x.abs() as f64).sqrt();
                if x.is_nan() {
                    assert!(o[7][l].is_nan(), "{}", at("sqrt", o[7][l]));
                } else {
                    assert!(
                        ulp_error(o[7][l], s) <= 3.0,
                        "{} ({} ulp)",
                        at("sqrt", o[7][l]),
                        ulp_error(o[7][l], s)
                    );
                }
                let r = 1.0 / ((x.abs() + 1.0) as f64).sqrt();
                if x.is_nan() {
                    assert!(o[8][l].is_nan(), "{}", at("rsqrt", o[8][l]));
                } else {
                    assert!(
                        ulp_error(o[8][l], r) <= 2.0,
                        "{} ({} ulp)",
                        at("rsqrt", o[8][l]),
                        ulp_error(o[8][l], r)
                    );
                }
            }
            let d = o[9][0];
            if a[i].iter().any(|v| v.is_nan()) {
                assert!(d.is_nan(), "{opt:?} dot of element {i} with a NaN = {d}");
            } else if a[i].iter().all(|v| v.is_finite()) {
                let exact: f64 = (0..4).map(|l| a[i][l] as f64 * b[i][l] as f64).sum();
                let max = a[i]
                    .iter()
                    .chain(&b[i])
                    .fold(0f64, |m, v| m.max(v.abs() as f64));
                let tol = max * max * 7.0 * f32::EPSILON as f64;
                assert!(
                    (d as f64 - exact).abs() <= tol,
                    "{opt:?} dot element {i} = {d}, exact {exact}, tol {tol}"
                );
            }
        }
    }
}

/// `Params` of constant_struct.cl, with its padding spelled out.
#[repr(C)]
#[derive(Clone, Copy)]
struct Params {
    negate: u8,
    _pad0: [u8; 3],
    scale: f32,
    mask: u64,
    offset: i32,
    bias: [f32; 2],
    _pad1: [u8; 4],
}
const _: () = assert!(std::mem::size_of::<Params>() == 32 && std::mem::align_of::<Params>() == 8);

#[test]
fn constant_args_and_struct_by_value() {
    let env = Env::new();
    let n = 1000;
    let mut rng = Rng::new(8);
    let table: Vec<f32> = (0..16).map(|_| rng.f32_in(-50.0, 50.0)).collect();
    let index: Vec<u32> = (0..37).map(|_| rng.next_u32() % 16).collect();
    let input: Vec<f32> = (0..n).map(|_| rng.f32_in(-5.0, 5.0)).collect();
    let params = [
        Params {
            negate: 1,
            _pad0: [0; 3],
            scale: 2.75,
            mask: 0x00FF_F0F0_0F0F_FF00,
            offset: -7,
            bias: [0.125, -3.5],
            _pad1: [0; 4],
        },
        Params {
            negate: 0,
            _pad0: [0; 3],
            scale: -0.3,
            mask: u64::MAX,
            offset: 100_000,
            bias: [1e-3, 42.0],
            _pad1: [0; 4],
        },
    ];
    for opt in OPTS {
        for p in &params {
            let k = env.kernel("constant_struct", opt, "apply");
            let (bt, bi, bin) = (env.buffer(&table), env.buffer(&index), env.buffer(&input));
            let (bout, bmask) = (env.buffer_filled(n, f32::NAN), env.buffer_filled(n, 0u64));
            arg_buf(&k, 0, &bt);
            arg_buf(&k, 1, &bi);
            arg(&k, 2, &(index.len() as u32));
            arg(&k, 3, p);
            arg_buf(&k, 4, &bin);
            arg_buf(&k, 5, &bout);
            arg_buf(&k, 6, &bmask);
            env.run(&k, &[n], None, None);
            let got = env.read(&bout, n);
            let masked = env.read(&bmask, n);
            for i in 0..n {
                let mut v = input[i] * p.scale + table[index[i % index.len()] as usize];
                v = v + p.bias[i & 1] + p.offset as f32;
                let want = if p.negate != 0 { -v } else { v };
                assert_eq!(
                    got[i].to_bits(),
                    want.to_bits(),
                    "{opt:?} negate={} out[{i}] = {} want {want}",
                    p.negate,
                    got[i]
                );
                let m = (i as u64).wrapping_mul(0x0101_0101_0101_0101) & p.mask;
                assert_eq!(masked[i], m, "{opt:?} masked[{i}]");
            }
        }
    }
}

#[test]
fn local_pointer_argument_without_barrier() {
    let env = Env::new();
    let n = 4096;
    let input: Vec<i32> = (0..n as i32).map(|i| i * 7 - 5000).collect();
    for opt in OPTS {
        for local in [64usize, 16, 1] {
            let k = env.kernel("local_scratch", opt, "local_scratch");
            let (bi, bo) = (env.buffer(&input), env.buffer_filled(n, i32::MIN));
            arg_buf(&k, 0, &bi);
            arg_buf(&k, 1, &bo);
            arg_local(&k, 2, local * 4);
            env.run(&k, &[n], Some(&[local]), None);
            let got = env.read(&bo, n);
            for g in 0..n {
                let want = input[g] * 3 + (g % local) as i32 + 1;
                assert_eq!(got[g], want, "{opt:?} local {local}: out[{g}]");
            }
        }
    }
}

/// Division by zero, INT_MIN / -1 and out-of-range float->int conversions have undefined
/// or unspecified results: the kernel must complete without killing the process, and the
/// well-defined lanes and the saturating conversions (spec 6.4.3.3) must be right.
#[test]
fn undefined_arithmetic_does_not_crash() {
    let env = Env::new();
    let pairs: [(i32, i32); 12] = [
        (7, 0),
        (-7, 0),
        (0, 0),
        (i32::MIN, -1),
        (i32::MIN, 0),
        (i32::MAX, 0),
        (100, 7),
        (-100, 7),
        (100, -7),
        (-100, -7),
        (i32::MIN, 3),
        (-1, 2),
    ];
    let floats: [f32; 16] = [
        f32::NAN,
        f32::INFINITY,
        f32::NEG_INFINITY,
        1e30,
        -1e30,
        3e9,
        -3e9,
        4_294_967_296.0,
        -2_147_483_904.0,
        2_147_483_520.0,
        -1.5,
        2.5,
        123.75,
        -0.0,
        0.999,
        16_777_217.0,
    ];
    let n = 64;
    let a: Vec<i32> = (0..n).map(|i| pairs[i % pairs.len()].0).collect();
    let b: Vec<i32> = (0..n).map(|i| pairs[i % pairs.len()].1).collect();
    let f: Vec<f32> = (0..n).map(|i| floats[i % floats.len()]).collect();
    for opt in OPTS {
        let k = env.kernel("hazards", opt, "hazards");
        let (ba, bb, bf) = (env.buffer(&a), env.buffer(&b), env.buffer(&f));
        let (q, r, uq) = (
            env.buffer_filled(n, 0i32),
            env.buffer_filled(n, 0i32),
            env.buffer_filled(n, 0u32),
        );
        let (ci, cu, cl) = (
            env.buffer_filled(n, 0i32),
            env.buffer_filled(n, 0u32),
            env.buffer_filled(n, 0i64),
        );
        let (si, su) = (env.buffer_filled(n, 1i32), env.buffer_filled(n, 1u32));
        arg_buf(&k, 0, &ba);
        arg_buf(&k, 1, &bb);
        arg_buf(&k, 2, &bf);
        for (i, buf) in [&q, &r, &ci, &si].into_iter().enumerate() {
            arg_buf(&k, [3, 4, 6, 9][i], buf);
        }
        arg_buf(&k, 5, &uq);
        arg_buf(&k, 7, &cu);
        arg_buf(&k, 8, &cl);
        arg_buf(&k, 10, &su);
        env.run(&k, &[n], Some(&[16]), None);
        let (q, r, uq) = (env.read(&q, n), env.read(&r, n), env.read(&uq, n));
        let (ci, cu, cl) = (env.read(&ci, n), env.read(&cu, n), env.read(&cl, n));
        let (si, su) = (env.read(&si, n), env.read(&su, n));
        for i in 0..n {
            let (x, y, v) = (a[i], b[i], f[i]);
            if let (Some(wq), Some(wr)) = (x.checked_div(y), x.checked_rem(y)) {
                assert_eq!((q[i], r[i]), (wq, wr), "{opt:?} {x} / {y}, {x} % {y}");
            }
            if y != 0 {
                assert_eq!(
                    uq[i],
                    (x as u32) / (y as u32),
                    "{opt:?} (uint){x} / (uint){y}"
                );
            }
            let t = v.trunc();
            if (-2_147_483_648.0..2_147_483_648.0).contains(&t) {
                assert_eq!(ci[i], t as i32, "{opt:?} (int){v}");
            }
            if (0.0..4_294_967_296.0).contains(&t) {
                assert_eq!(cu[i], t as u32, "{opt:?} (uint){v}");
            }
            if (-(2f32.powi(63))..2f32.powi(63)).contains(&t) {
                assert_eq!(cl[i], t as i64, "{opt:?} (long){v}");
            }
            // Rust's `as` saturates and maps NaN to 0, exactly like convert_*_sat (rtz).
            assert_eq!(si[i], v as i32, "{opt:?} convert_int_sat({v})");
            assert_eq!(su[i], v as u32, "{opt:?} convert_uint_sat({v})");
        }
    }
}

/// Private vectors are aligned to their size, up to 128 bytes, with and without barriers
/// (kernels/private_alignment.cl).
#[test]
fn private_vectors_are_aligned_to_their_size() {
    let env = Env::new();
    for opt in OPTS {
        for kernel in ["private_alignment", "private_alignment_barrier"] {
            let k = env.kernel("private_alignment", opt, kernel);
            let n = 16;
            let out = env.buffer_filled(9 * n, u64::MAX);
            arg_buf(&k, 0, &out);
            env.run(&k, &[n], Some(&[8]), None);
            let got = env.read(&out, 9 * n);
            assert!(got.iter().all(|&r| r == 0), "{opt:?} {kernel}: {got:?}");
        }
    }
}

/// A `?:` and an `if` choosing between vectors on a scalar condition (llvm-spirv-15 writes an
/// OpSelect with a scalar condition, which the recipe splats into a bool vector) compute the
/// right lanes, built from OpenCL C by the driver.
#[test]
fn vector_choice_on_a_scalar_condition() {
    let env = Env::new();
    let src = "kernel void pick(global int4 *a, global const int4 *b, global const int *c) {
                   size_t i = get_global_id(0); int4 x = a[i], y = b[i];
                   a[i] = c[i] > 3 ? x + 1 : y * 2; }";
    for options in ["", "-cl-opt-disable"] {
        let program = env.program_from_source(src, options);
        let k = Kernel::create(&program, "pick").expect("clCreateKernel");
        let a: Vec<[i32; 4]> = (0..8).map(|i| [i, i + 10, i + 20, i + 30]).collect();
        let b: Vec<[i32; 4]> = (0..8).map(|i| [-i, 5, 6, 7]).collect();
        let c: Vec<i32> = (0..8).collect();
        let (da, db, dc) = (env.buffer(&a), env.buffer(&b), env.buffer(&c));
        arg_buf(&k, 0, &da);
        arg_buf(&k, 1, &db);
        arg_buf(&k, 2, &dc);
        env.run(&k, &[8], None, None);
        let want: Vec<[i32; 4]> = (0..8)
            .map(|i| {
                if c[i] > 3 {
                    a[i].map(|v| v + 1)
                } else {
                    b[i].map(|v| v * 2)
                }
            })
            .collect();
        assert_eq!(env.read(&da, 8), want, "{options}");
    }
}

/// A `switch` on one bit, with fall-through (as the CTS math kernels write for 3-wide vectors;
/// llvm-spirv-15 writes it as an OpSwitch on a bool, which the recipe turns into a conditional
/// branch) takes the right cases.
#[test]
fn switch_on_one_bit_with_fall_through() {
    let env = Env::new();
    let src = "kernel void k(global int *out, global const int *in) {
                   size_t i = get_global_id(0); int x = -1, y = -1;
                   switch (i & 1) { case 0: y = in[2 * i + 1]; case 1: x = in[2 * i]; break; }
                   out[2 * i] = x; out[2 * i + 1] = y; }";
    for options in ["", "-cl-opt-disable", "-cl-std=CL3.0"] {
        let program = env.program_from_source(src, options);
        let k = Kernel::create(&program, "k").expect("clCreateKernel");
        let input: Vec<i32> = (0..16).map(|v| v * 7 + 3).collect();
        let (din, dout) = (env.buffer(&input), env.buffer_filled(16, 0i32));
        arg_buf(&k, 0, &dout);
        arg_buf(&k, 1, &din);
        env.run(&k, &[8], None, None);
        let want: Vec<i32> = (0..8)
            .flat_map(|i| {
                let y = if i % 2 == 0 { input[2 * i + 1] } else { -1 };
                [input[2 * i], y]
            })
            .collect();
        assert_eq!(env.read(&dout, 16), want, "{options}");
    }
}

/// A photo editor's blend modes (`kernels/blend_modes.cl`, after darktable's blendop.cl, which
/// the optimised recipe could not build): cases of a switch that share one value make
/// llvm-spirv-15 name the switch's block several times in one OpPhi, and the recipe keeps one
/// entry per parent. Built by the driver from source with each option set and from the IL of
/// both recipes, every mode (known, obsolete, unknown) checked bit for bit against the host.
#[test]
fn blend_modes_whose_cases_share_a_value() {
    let env = Env::new();
    let source = std::fs::read_to_string(kernel_source("blend_modes")).expect("blend_modes.cl");
    let modes: Vec<i32> = vec![0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 0x14, 0x15, 0x16, -1, 100];
    let n = 256;
    let mut rng = Rng::new(37);
    let mut eighths = || (rng.next_u32() % 9) as f32 / 8.0;
    let lower: Vec<f32> = (0..4 * n).map(|_| eighths()).collect();
    let upper: Vec<f32> = (0..4 * n).map(|_| eighths()).collect();
    let mode: Vec<i32> = (0..n).map(|i| modes[i % modes.len()]).collect();
    let blend = |a: f32, b: f32, m: i32| match m {
        2 => a.max(b),
        3 => a.min(b),
        4 => a * b,
        5 => (a + b) * 0.5,
        6 => a + b,
        7 => (b - a).max(0.0),
        8 => (a - b).abs(),
        9 => 1.0 - (1.0 - a) * (1.0 - b),
        0 | 1 | 0x14 | 0x15 => a,
        _ => b,
    };
    let want_pixels: Vec<f32> = (0..4 * n)
        .map(|i| blend(lower[i], upper[i], mode[i / 4]))
        .collect();
    // blend_channel has no average, subtract, difference or screen: those are unknown to it.
    let channel = |a: f32, b: f32, m: i32| match m {
        5 | 7 | 8 | 9 => b,
        _ => blend(a, b, m),
    };
    let want_mask: Vec<f32> = (0..n)
        .map(|i| channel(lower[i], upper[i], mode[i]))
        .collect();
    let mut programs: Vec<(String, Program)> = [
        "",
        "-cl-std=CL3.0",
        "-cl-fast-relaxed-math",
        "-cl-opt-disable",
    ]
    .iter()
    .map(|o| (format!("source {o:?}"), env.program_from_source(&source, o)))
    .collect();
    if !env.other_icd {
        for opt in OPTS {
            programs.push((format!("IL {opt:?}"), env.program("blend_modes", opt)));
        }
    }
    for (how, program) in &programs {
        let (dl, du, dm) = (env.buffer(&lower), env.buffer(&upper), env.buffer(&mode));
        let pixels = Kernel::create(program, "blend_pixels").expect("blend_pixels");
        let out = env.buffer_filled(4 * n, -1.0f32);
        arg_buf(&pixels, 0, &out);
        arg_buf(&pixels, 1, &dl);
        arg_buf(&pixels, 2, &du);
        arg_buf(&pixels, 3, &dm);
        env.run(&pixels, &[n], None, None);
        let got = env.read(&out, 4 * n);
        for (i, (g, w)) in got.iter().zip(&want_pixels).enumerate() {
            assert_eq!(
                g.to_bits(),
                w.to_bits(),
                "{how}: blend_pixels mode {} at {i}: {g} instead of {w}",
                mode[i / 4]
            );
        }
        let mask = Kernel::create(program, "blend_mask").expect("blend_mask");
        let out = env.buffer_filled(n, -1.0f32);
        arg_buf(&mask, 0, &out);
        arg_buf(&mask, 1, &dl);
        arg_buf(&mask, 2, &du);
        arg_buf(&mask, 3, &dm);
        env.run(&mask, &[n], None, None);
        let got = env.read(&out, n);
        for (i, (g, w)) in got.iter().zip(&want_mask).enumerate() {
            assert_eq!(
                g.to_bits(),
                w.to_bits(),
                "{how}: blend_mask mode {} at {i}: {g} instead of {w}",
                mode[i]
            );
        }
    }
}
