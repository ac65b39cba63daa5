//! The OpenCL C math build options through the real loader, and what each one observably does:
//! `__FAST_RELAXED_MATH__`, `-cl-single-precision-constant`, `mad` fused under `-cl-mad-enable`
//! and the options implying it, correctly rounded `/` and `sqrt` under
//! `-cl-fp32-correctly-rounded-divide-sqrt` (also with `-cl-fast-relaxed-math`), the options that
//! only permit optimisations building and staying within the spec; and `nan()` payloads.

mod common;

use common::{arg_buf, check, cl, Env, Opt, Rng};
use opencl3::device::CL_FP_CORRECTLY_ROUNDED_DIVIDE_SQRT;
use opencl3::kernel::Kernel;
use opencl3::program::Program;

fn kernel(program: &Program, name: &str) -> Kernel {
    check(cl(Kernel::create(program, name)), "clCreateKernel")
}

/// The device's fp64 and fp16 extensions are on (the defaults): the kernel file uses both.
/// Ferrocl must report them; another ICD without them skips the test.
fn has_fp64_and_fp16(env: &Env) -> bool {
    env.extension_or_skip("cl_khr_fp64") && env.extension_or_skip("cl_khr_fp16")
}

/// `icd/tests/kernels/math_options.cl` built by the driver's OpenCL C compiler with `options`.
fn from_source(env: &Env, options: &str) -> Program {
    let src = std::fs::read_to_string(common::kernel_source("math_options")).expect("kernel");
    env.program_from_source(&src, options)
}

/// The optimised SPIR-V of `math_options.cl` built with `options` given to clBuildProgram (what
/// codegen itself does with them); panics with the log on failure.
fn from_il(env: &Env, options: &str) -> Program {
    let il = common::spirv("math_options", Opt::Optimised);
    let program = check(
        cl(Program::create_from_il(&env.context, &il)),
        "clCreateProgramWithIL",
    );
    let c_options = std::ffi::CString::new(options).expect("options");
    if let Err(code) = opencl3::program::build_program(
        program.get(),
        env.context.devices(),
        &c_options,
        None,
        std::ptr::null_mut(),
    ) {
        let log = program.get_build_log(env.device.id()).unwrap_or_default();
        panic!("clBuildProgram(IL, {options}) failed ({code}):\n{log}");
    }
    program
}

const MACROS: &str = "kernel void macros(global int *out) {
#ifdef __FAST_RELAXED_MATH__
    out[0] = 1;
#else
    out[0] = 0;
#endif
    out[1] = sizeof(1.0);      /* 4 under -cl-single-precision-constant */
    out[2] = sizeof(0.1 * 3);  /* the constant's type decides the expression's */
}";

/// Runs `macros` built with `options`: [__FAST_RELAXED_MATH__ defined, sizeof(1.0), …].
fn macros(env: &Env, options: &str) -> Vec<i32> {
    let p = env.program_from_source(MACROS, options);
    let k = kernel(&p, "macros");
    let out = env.buffer_filled(3, -1i32);
    arg_buf(&k, 0, &out);
    env.run(&k, &[1], None, None);
    env.read(&out, 3)
}

#[test]
fn fast_relaxed_math_defines_its_macro() {
    let env = Env::new();
    if env.other_icd {
        return;
    }
    assert_eq!(macros(&env, "")[0], 0);
    assert_eq!(macros(&env, "-cl-fast-relaxed-math")[0], 1);
    assert_eq!(
        macros(
            &env,
            "-cl-fast-relaxed-math -cl-fp32-correctly-rounded-divide-sqrt"
        )[0],
        1,
        "also when division is kept exact"
    );
    // The options it implies do not define it.
    assert_eq!(macros(&env, "-cl-unsafe-math-optimizations")[0], 0);
    assert_eq!(
        macros(&env, "-cl-finite-math-only -cl-no-signed-zeros")[0],
        0
    );
}

#[test]
fn single_precision_constant_makes_literals_float() {
    let env = Env::new();
    if env.other_icd {
        return;
    }
    if !env.extension_or_skip("cl_khr_fp64") {
        return; // without fp64, double literals are float anyway
    }
    assert_eq!(macros(&env, "")[1..], [8, 8]);
    assert_eq!(macros(&env, "-cl-single-precision-constant")[1..], [4, 4]);
}

/// (a, b, c) where fma(a, b, c) and a*b + c differ: a*b = 1 + 2^-11 + 2^-24 rounds to
/// 1 + 2^-11 (a tie, to even), so the unfused result is 0 and the fused one 2^-24.
fn mad_inputs() -> [Vec<f32>; 3] {
    let a = 1.0 + 2f32.powi(-12);
    let mut rng = Rng::new(7);
    let mut cols = [vec![a], vec![a], vec![-(1.0 + 2f32.powi(-11))]];
    for _ in 0..63 {
        let (x, y) = (rng.f32_in(-4.0, 4.0), rng.f32_in(-4.0, 4.0));
        // c cancels most of the product, so the product's rounding shows.
        let c = -(x * y);
        cols[0].push(x);
        cols[1].push(y);
        cols[2].push(c);
    }
    cols
}

/// mad's results from `program` (scalar and float4 kernels, and double when present).
fn run_mad(env: &Env, program: &Program) -> (Vec<f32>, Vec<f32>, Vec<f64>) {
    let [a, b, c] = mad_inputs();
    let n = a.len();
    let bufs = [env.buffer(&a), env.buffer(&b), env.buffer(&c)];
    let run = |name: &str, global: usize| {
        let k = kernel(program, name);
        let out = env.buffer_filled(n, f32::NAN);
        for (i, buf) in bufs.iter().enumerate() {
            arg_buf(&k, i as u32, buf);
        }
        arg_buf(&k, 3, &out);
        env.run(&k, &[global], None, None);
        env.read(&out, n)
    };
    let scalar = run("mad_f", n);
    let vector = run("mad_f4", n / 4);
    let double = {
        let k = kernel(program, "mad_d");
        let d: Vec<Vec<f64>> = [&a, &b, &c]
            .iter()
            .map(|v| {
                v.iter()
                    .map(|&x| f64::from(x) * (1.0 + 2f64.powi(-30)))
                    .collect()
            })
            .collect();
        let dbufs: Vec<_> = d.iter().map(|v| env.buffer(v)).collect();
        let out = env.buffer_filled(n, f64::NAN);
        for (i, buf) in dbufs.iter().enumerate() {
            arg_buf(&k, i as u32, buf);
        }
        arg_buf(&k, 3, &out);
        env.run(&k, &[n], None, None);
        env.read(&out, n)
    };
    (scalar, vector, double)
}

/// The value of half encoding `h` (`ferrocl-testref`: the host C compiler's conversion).
fn half_value(h: u16) -> f64 {
    ferrocl_testref::f16_to_f64(h)
}

/// `x` rounded to the nearest half (ties to even).
fn round_to_half(x: f64) -> f64 {
    ferrocl_testref::round_to_half(x)
}

/// mad on halves: with `fuse` the fma rounded once, else the rounded product plus c, rounded.
fn check_half_mad(env: &Env, program: &Program, fuse: bool, what: &str) {
    let mut rng = Rng::new(3);
    // First the case an f32 fma then a rounding to half gets wrong: a*b + c = 9700 + 2^-11
    // (nearest half 9704), which f32 rounds to 9700, a tie that goes to 9696.
    let mut cols: [Vec<u16>; 3] = [vec![0x7656], vec![0x35fb], vec![0xb51e]];
    for _ in 0..63 {
        let a = rng.next_u32() as u16 & 0x3fff; // |a| < 2, positive, normal or subnormal
        let b = (rng.next_u32() as u16 & 0x3fff) | 0x8000;
        let p = round_to_half(half_value(a) * half_value(b));
        // c = -(a*b rounded): the fused result is the product's rounding error.
        cols[0].push(a);
        cols[1].push(b);
        cols[2].push(half_bits(-p));
    }
    assert_eq!(
        [half_value(0x7656), half_value(0x35fb), half_value(0xb51e)],
        [25952.0, 0.373779296875, -0.31982421875]
    );
    let n = cols[0].len();
    let bufs: Vec<_> = cols.iter().map(|c| env.buffer(c)).collect();
    let k = kernel(program, "mad_h");
    let out = env.buffer_filled(n, 0xffffu16);
    for (i, buf) in bufs.iter().enumerate() {
        arg_buf(&k, i as u32, buf);
    }
    arg_buf(&k, 3, &out);
    env.run(&k, &[n], None, None);
    let got = env.read(&out, n);
    let mut differing = 0;
    for i in 0..n {
        let [a, b, c] = [0, 1, 2].map(|k| half_value(cols[k][i]));
        let fused = round_to_half(a * b + c);
        let unfused = round_to_half(round_to_half(a * b) + c);
        differing += usize::from(fused != unfused);
        let want = if fuse { fused } else { unfused };
        assert_eq!(half_value(got[i]), want, "{what}: mad({a}, {b}, {c})");
    }
    assert_eq!(half_value(got[0]), 9704.0, "{what}");
    assert!(
        differing > 10,
        "only {differing} inputs tell fma from a*b+c"
    );
}

/// The encoding of half value `x` (exactly a half).
fn half_bits(x: f64) -> u16 {
    ferrocl_testref::f16_bits(x)
}

#[test]
fn mad_is_fused_exactly_when_an_option_allows_it() {
    let env = Env::new();
    if env.other_icd {
        return; // the unfused default is Ferrocl's choice, not every implementation's
    }
    if !has_fp64_and_fp16(&env) {
        return;
    }
    let [a, b, c] = mad_inputs();
    let fused: Vec<f32> = (0..a.len()).map(|i| a[i].mul_add(b[i], c[i])).collect();
    let unfused: Vec<f32> = (0..a.len()).map(|i| a[i] * b[i] + c[i]).collect();
    assert_eq!((fused[0], unfused[0]), (2f32.powi(-24), 0.0));
    let differing = (0..a.len()).filter(|&i| fused[i] != unfused[i]).count();
    assert!(
        differing > 10,
        "only {differing} inputs tell fma from a*b+c"
    );
    let dcols: Vec<Vec<f64>> = [&a, &b, &c]
        .iter()
        .map(|v| {
            v.iter()
                .map(|&x| f64::from(x) * (1.0 + 2f64.powi(-30)))
                .collect()
        })
        .collect();
    let dfused: Vec<f64> = (0..a.len())
        .map(|i| dcols[0][i].mul_add(dcols[1][i], dcols[2][i]))
        .collect();
    let dunfused: Vec<f64> = (0..a.len())
        .map(|i| dcols[0][i] * dcols[1][i] + dcols[2][i])
        .collect();
    assert_ne!(dfused, dunfused);
    // OpenCL C through the driver's compiler, and the same module as IL with the options given
    // to clBuildProgram (codegen's own mad_enable).
    for (options, fuse) in [
        ("", false),
        ("-cl-mad-enable", true),
        ("-cl-unsafe-math-optimizations", true),
        ("-cl-fast-relaxed-math", true),
        ("-cl-finite-math-only -cl-no-signed-zeros", false),
    ] {
        for (how, program) in [
            ("source", from_source(&env, options)),
            ("IL", from_il(&env, options)),
        ] {
            let (scalar, vector, double) = run_mad(&env, &program);
            let (want, dwant) = if fuse {
                (&fused, &dfused)
            } else {
                (&unfused, &dunfused)
            };
            let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
            assert_eq!(bits(&scalar), bits(want), "mad, {how}, options {options:?}");
            assert_eq!(
                bits(&vector),
                bits(want),
                "mad float4, {how}, options {options:?}"
            );
            assert_eq!(&double, dwant, "mad double, {how}, options {options:?}");
            check_half_mad(
                &env,
                &program,
                fuse,
                &format!("mad half, {how}, {options:?}"),
            );
        }
    }
}

#[test]
fn correctly_rounded_divide_and_sqrt() {
    let env = Env::new();
    let config = check(
        cl(env.device.single_fp_config()),
        "CL_DEVICE_SINGLE_FP_CONFIG",
    );
    if (env.other_icd && config & CL_FP_CORRECTLY_ROUNDED_DIVIDE_SQRT == 0)
        || !has_fp64_and_fp16(&env)
    {
        return;
    }
    assert_ne!(
        config & CL_FP_CORRECTLY_ROUNDED_DIVIDE_SQRT,
        0,
        "Ferrocl reports correctly rounded divide and sqrt"
    );
    // Random bit patterns (subnormals, huge and tiny values), and 1..4096 for x / 3.
    let mut rng = Rng::new(11);
    let n = 1 << 14;
    let mut a: Vec<f32> = (0..n)
        .map(|_| f32::from_bits(rng.next_u32() & 0x7fff_ffff))
        .filter(|x| x.is_finite())
        .collect();
    a.truncate(n / 2);
    a.extend((1..=n / 2).map(|k| k as f32 * 1.25));
    let b: Vec<f32> = (0..a.len())
        .map(|_| f32::from_bits(rng.next_u32()))
        .map(|x| if x.is_nan() { 3.0 } else { x })
        .collect();
    let m = a.len();
    let third_differs = a.iter().filter(|&&x| x / 3.0 != x * (1.0f32 / 3.0)).count();
    assert!(
        third_differs > 100,
        "x / 3 and x * (1/3) differ on {third_differs} inputs"
    );
    for options in [
        "-cl-fp32-correctly-rounded-divide-sqrt",
        "-cl-fast-relaxed-math -cl-fp32-correctly-rounded-divide-sqrt",
        "-cl-unsafe-math-optimizations -cl-fp32-correctly-rounded-divide-sqrt",
    ] {
        let p = from_source(&env, options);
        for (name, global) in [("div_sqrt", m), ("div_sqrt4", m / 4)] {
            let k = kernel(&p, name);
            let (ba, bb) = (env.buffer(&a), env.buffer(&b));
            let outs: Vec<_> = (0..3).map(|_| env.buffer_filled(m, f32::NAN)).collect();
            arg_buf(&k, 0, &ba);
            arg_buf(&k, 1, &bb);
            for (i, o) in outs.iter().enumerate() {
                arg_buf(&k, 2 + i as u32, o);
            }
            env.run(&k, &[global], None, None);
            let [q, third, r] = [0, 1, 2].map(|i| env.read(&outs[i], m));
            let fast = options.contains("fast") || options.contains("unsafe");
            for i in 0..m {
                let same = |got: f32, want: f32| {
                    got.to_bits() == want.to_bits() || (got.is_nan() && want.is_nan())
                        // -cl-fast-relaxed-math: no infinities or NaNs, nor the sign of zero.
                        || (fast && (!want.is_finite() || (got == 0.0 && want == 0.0)))
                };
                let ctx = format!("{name}, {options}, a = {:e}, b = {:e}", a[i], b[i]);
                assert!(same(q[i], a[i] / b[i]), "{ctx}: a / b = {:e}", q[i]);
                assert!(same(third[i], a[i] / 3.0), "{ctx}: a / 3 = {:e}", third[i]);
                assert!(same(r[i], a[i].sqrt()), "{ctx}: sqrt(a) = {:e}", r[i]);
            }
        }
    }
}

#[test]
fn permissive_options_build_and_stay_within_the_spec() {
    let env = Env::new();
    if env.other_icd || !has_fp64_and_fp16(&env) {
        return;
    }
    let a: Vec<f32> = (0..256).map(|k| (k as f32 - 128.0) * 0.37).collect();
    let n = a.len();
    let run = |program: &Program| {
        let k = kernel(program, "permissive");
        let (input, out) = (env.buffer(&a), env.buffer_filled(4 * n, f32::NAN));
        arg_buf(&k, 0, &input);
        arg_buf(&k, 1, &out);
        env.run(&k, &[n], None, None);
        env.read(&out, 4 * n)
    };
    let exact = run(&from_source(&env, ""));
    for options in [
        "-cl-finite-math-only",
        "-cl-no-signed-zeros",
        "-cl-finite-math-only -cl-no-signed-zeros",
        "-cl-opt-disable",
    ] {
        for (how, program) in [
            ("source", from_source(&env, options)),
            ("IL", from_il(&env, options)),
        ] {
            let got = run(&program);
            for i in 0..4 * n {
                // The same values (finite inputs, so the options change nothing Ferrocl
                // computes); only the sign of a zero is free under -cl-no-signed-zeros.
                let ok = got[i].to_bits() == exact[i].to_bits()
                    || (options.contains("signed") && got[i] == 0.0 && exact[i] == 0.0);
                assert!(
                    ok,
                    "{how} {options}: element {i}: {} vs {}",
                    got[i], exact[i]
                );
            }
        }
    }
    // -x * 0 is -0 for x > 0 when signed zeros count.
    assert_eq!(exact[4 * 200 + 2].to_bits(), (-0.0f32).to_bits());
}

#[test]
fn nan_returns_a_quiet_nan_with_the_low_payload_bits() {
    let env = Env::new();
    if env.other_icd {
        return;
    }
    if !has_fp64_and_fp16(&env) {
        return;
    }
    let p = from_source(&env, "");
    // float: nan(uint) keeps the low 22 bits as payload under the quiet bit.
    let codes: Vec<u32> = vec![0, 1, 5, 0x3f_ffff, 0x40_0000, 0xffff_ffff, 0x1234_5678];
    let k = kernel(&p, "nan_f");
    let (input, out) = (env.buffer(&codes), env.buffer_filled(codes.len(), 0f32));
    arg_buf(&k, 0, &input);
    arg_buf(&k, 1, &out);
    env.run(&k, &[codes.len()], None, None);
    for (code, got) in codes.iter().zip(env.read(&out, codes.len())) {
        assert!(got.is_nan(), "nan({code:#x})");
        assert_eq!(
            got.to_bits(),
            0x7fc0_0000 | (code & 0x3f_ffff),
            "nan({code:#x})"
        );
    }
    // double: nan(ulong), the low 51 bits.
    let codes: Vec<u64> = vec![
        0,
        1,
        5,
        (1 << 51) - 1,
        1 << 51,
        u64::MAX,
        0x1234_5678_9abc_def0,
    ];
    let k = kernel(&p, "nan_d");
    let (input, out) = (env.buffer(&codes), env.buffer_filled(codes.len(), 0f64));
    arg_buf(&k, 0, &input);
    arg_buf(&k, 1, &out);
    env.run(&k, &[codes.len()], None, None);
    for (code, got) in codes.iter().zip(env.read(&out, codes.len())) {
        assert!(got.is_nan(), "nan({code:#x})");
        assert_eq!(
            got.to_bits(),
            0x7ff8_0000_0000_0000 | (code & ((1 << 51) - 1)),
            "nan({code:#x})"
        );
    }
    // half: nan(ushort), the low 9 bits.
    let codes: Vec<u16> = vec![0, 1, 5, 0x1ff, 0x200, 0xffff, 0x1234];
    let k = kernel(&p, "nan_h");
    let (input, out) = (env.buffer(&codes), env.buffer_filled(codes.len(), 0u16));
    arg_buf(&k, 0, &input);
    arg_buf(&k, 1, &out);
    env.run(&k, &[codes.len()], None, None);
    for (code, got) in codes.iter().zip(env.read(&out, codes.len())) {
        assert_eq!(got, 0x7e00 | (code & 0x1ff), "nan({code:#x}) = {got:#06x}");
    }
}
