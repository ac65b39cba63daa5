//! Device configuration through FERROCL_* variables, through the real loader. The settings are
//! read once per process, so each test re-runs this test binary as a child process with the
//! variables set and checks results and queries there; the parent checks the child's exit and
//! its stderr (warnings, logs).

mod common;

use std::process::Command;

use common::{arg_buf, check, cl, device_id, Env, Opt};
use opencl3::device::Device;
use opencl3::device::{
    CL_FP_CORRECTLY_ROUNDED_DIVIDE_SQRT, CL_FP_DENORM, CL_FP_ROUND_TO_NEAREST, CL_FP_ROUND_TO_ZERO,
};
use opencl3::kernel::Kernel;
use opencl3::program::Program;
use opencl3::types::cl_device_fp_config;

const CHILD: &str = "FERROCL_CONFIG_TEST_CHILD";

/// Runs test `name`'s body in a child process with `vars` set; returns the child's stderr.
/// In the child (`CHILD` = name) returns `None` and the caller runs the body.
fn in_child(name: &str, vars: &[(&str, &str)]) -> Option<String> {
    if std::env::var(CHILD).as_deref() == Ok(name) {
        return None;
    }
    let exe = std::env::current_exe().expect("test binary path");
    let mut cmd = Command::new(exe);
    cmd.args([name, "--exact", "--nocapture", "--test-threads=1"])
        .env(CHILD, name);
    for var in [
        "FERROCL_FTZ",
        "FERROCL_ROUNDING",
        "FERROCL_PROFILE",
        "FERROCL_FP64",
        "FERROCL_SUBGROUPS",
        "FERROCL_FP16",
        "FERROCL_THREADS",
        "FERROCL_PIN_THREADS",
        "FERROCL_LOG",
        "FERROCL_VECTORIZE",
        "FERROCL_DUMP_DIR",
        "FERROCL_SVM",
        "FERROCL_IMAGES",
        "FERROCL_PIPES",
        "FERROCL_KERNEL_TIMEOUT",
        "FERROCL_LLVM",
    ] {
        cmd.env_remove(var);
    }
    cmd.envs(vars.iter().copied());
    let out = cmd.output().expect("run the test binary as a child");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(
        out.status.success(),
        "child {name} failed\n--- stdout ---\n{stdout}\n--- stderr ---\n{stderr}"
    );
    assert!(
        stdout.contains("1 passed"),
        "child {name} ran no test:\n{stdout}"
    );
    Some(stderr)
}

fn device() -> Device {
    Device::new(device_id())
}

fn fp_config(param: u32) -> cl_device_fp_config {
    let d = device();
    let r = if param == opencl3::device::CL_DEVICE_DOUBLE_FP_CONFIG {
        d.double_fp_config()
    } else {
        d.single_fp_config()
    };
    check(cl(r), "clGetDeviceInfo(FP_CONFIG)")
}

/// Float `/` and `sqrt` are correctly rounded in every mode (in the mode's direction; subnormals
/// flushed when CL_FP_DENORM is off); the flag exists for single precision only.
fn assert_correctly_rounded_divide_sqrt() {
    assert_ne!(
        fp_config(opencl3::device::CL_DEVICE_SINGLE_FP_CONFIG)
            & CL_FP_CORRECTLY_ROUNDED_DIVIDE_SQRT,
        0
    );
    assert_eq!(
        fp_config(opencl3::device::CL_DEVICE_DOUBLE_FP_CONFIG)
            & CL_FP_CORRECTLY_ROUNDED_DIVIDE_SQRT,
        0
    );
}

/// Builds an IL program with explicit options; returns the kernel or the build log.
fn build(env: &Env, file: &str, options: &str, kernel: &str) -> Result<Kernel, String> {
    let il = common::spirv(file, Opt::Optimised);
    let program = check(
        cl(Program::create_from_il(&env.context, &il)),
        "clCreateProgramWithIL",
    );
    let c_options = std::ffi::CString::new(options).expect("options");
    let built = opencl3::program::build_program(
        program.get(),
        env.context.devices(),
        &c_options,
        None,
        std::ptr::null_mut(),
    );
    match built {
        Ok(()) => Ok(check(
            cl(Kernel::create(&program, kernel)),
            "clCreateKernel",
        )),
        Err(_) => Err(program.get_build_log(env.device.id()).unwrap_or_default()),
    }
}

const DENORM: f32 = 1.0e-39; // below f32::MIN_POSITIVE (1.18e-38)

struct Arith {
    add: Vec<f32>,
    mul: Vec<f32>,
    fma: Vec<f32>,
    sqrt: Vec<f32>,
    div: Vec<f32>,
}

fn run_arith(env: &Env, kernel: &Kernel, a: &[f32], b: &[f32]) -> Arith {
    let n = a.len();
    let (ba, bb) = (env.buffer(a), env.buffer(b));
    let outs: Vec<_> = (0..5).map(|_| env.buffer_filled(n, f32::NAN)).collect();
    arg_buf(kernel, 0, &ba);
    arg_buf(kernel, 1, &bb);
    for (i, o) in outs.iter().enumerate() {
        arg_buf(kernel, 2 + i as u32, o);
    }
    env.run(kernel, &[n], None, None);
    let r: Vec<Vec<f32>> = outs.iter().map(|o| env.read(o, n)).collect();
    Arith {
        add: r[0].clone(),
        mul: r[1].clone(),
        fma: r[2].clone(),
        sqrt: r[3].clone(),
        div: r[4].clone(),
    }
}

/// Runs `dmul` on [1e-160, 1e-20]²: returns the double products (1e-320 is a double denormal)
/// and the products converted to float (1e-40 is a float denormal).
fn run_dmul(env: &Env) -> (Vec<f64>, Vec<f32>) {
    let d = build(env, "fpmode_double", "", "dmul").expect("build");
    let x = [1.0e-160f64, 1.0e-20];
    let (a, b) = (env.buffer(&x), env.buffer(&x));
    let (out, demoted) = (
        env.buffer_filled(2, f64::NAN),
        env.buffer_filled(2, f32::NAN),
    );
    arg_buf(&d, 0, &a);
    arg_buf(&d, 1, &b);
    arg_buf(&d, 2, &out);
    arg_buf(&d, 3, &demoted);
    env.run(&d, &[2], None, None);
    (env.read(&out, 2), env.read(&demoted, 2))
}

// Inputs: [denormal + 0, normal*normal = denormal, -denormal]
const A: [f32; 3] = [DENORM, 1.0e-20, -DENORM];
const B: [f32; 3] = [0.0, 1.0e-20, 1.0];

#[test]
fn denormals_are_kept_by_default() {
    if in_child("denormals_are_kept_by_default", &[]).is_some() {
        return;
    }
    let env = Env::new();
    assert_ne!(
        fp_config(opencl3::device::CL_DEVICE_SINGLE_FP_CONFIG) & CL_FP_DENORM,
        0
    );
    assert_correctly_rounded_divide_sqrt();
    let k = build(&env, "fpmode", "", "arith").expect("build");
    let r = run_arith(&env, &k, &A, &B);
    assert_eq!(r.add[0], DENORM);
    assert_eq!(r.mul[1], 1.0e-20f32 * 1.0e-20f32);
    assert!(r.mul[1] > 0.0 && r.mul[1] < f32::MIN_POSITIVE);
    assert_eq!(r.fma[1], 1.0e-20f32.mul_add(1.0e-20, 0.0));
    assert_eq!(r.sqrt[0], DENORM.sqrt());
    assert_eq!(r.div[2], -DENORM);
    let (doubles, floats) = run_dmul(&env);
    assert_eq!(doubles[0], 1.0e-160f64 * 1.0e-160);
    assert_eq!(floats[1], (1.0e-20f64 * 1.0e-20) as f32);
    assert!(floats[1] > 0.0 && floats[1] < f32::MIN_POSITIVE);
}

#[test]
fn ftz_flushes_single_precision_and_keeps_doubles() {
    if in_child(
        "ftz_flushes_single_precision_and_keeps_doubles",
        &[("FERROCL_FTZ", "on")],
    )
    .is_some()
    {
        return;
    }
    let env = Env::new();
    assert_eq!(
        fp_config(opencl3::device::CL_DEVICE_SINGLE_FP_CONFIG) & CL_FP_DENORM,
        0
    );
    assert_ne!(
        fp_config(opencl3::device::CL_DEVICE_DOUBLE_FP_CONFIG) & CL_FP_DENORM,
        0
    );
    assert_correctly_rounded_divide_sqrt();
    let k = build(&env, "fpmode", "", "arith").expect("build");
    let r = run_arith(&env, &k, &A, &B);
    for (what, v) in [
        ("add", r.add[0]),
        ("mul", r.mul[1]),
        ("fma", r.fma[1]),
        ("sqrt", r.sqrt[0]),
        ("div", r.div[2]),
    ] {
        assert_eq!(v, 0.0, "{what} should flush to zero, got {v:e}");
    }
    assert!(
        r.div[2].is_sign_negative(),
        "the sign of a flushed -denormal is kept"
    );
    // Doubles keep denormals; a double → float conversion with a denormal result flushes.
    let (doubles, floats) = run_dmul(&env);
    assert_eq!(doubles[0], 1.0e-160f64 * 1.0e-160);
    assert!(doubles[0] > 0.0 && doubles[0] < f64::MIN_POSITIVE);
    assert_eq!(floats[1], 0.0);
}

/// Results of `ftz_math.cl`: float values and integers, double values and integers, halves.
struct MathResults {
    f: Vec<f32>,
    n: Vec<i32>,
    d: Vec<f64>,
    dn: Vec<i32>,
    h: Vec<u16>,
}

const MATH_DENORM_F64: f64 = 1.0e-310; // below f64::MIN_POSITIVE (2.2e-308)

fn run_math(env: &Env) -> MathResults {
    let k = build(env, "ftz_math", "", "ftz_float").expect("build");
    let x = [
        DENORM,
        -DENORM,
        -100.0,
        0.0,
        1.0,
        f32::MIN_POSITIVE,
        2.0,
        -140.0,
    ];
    let input = env.buffer(&x);
    let (f, n) = (env.buffer_filled(16, f32::NAN), env.buffer_filled(2, 7i32));
    arg_buf(&k, 0, &input);
    arg_buf(&k, 1, &f);
    arg_buf(&k, 2, &n);
    env.run(&k, &[1], None, None);
    let k = build(env, "ftz_math", "", "ftz_double").expect("build");
    let input = env.buffer(&[MATH_DENORM_F64, -720.0, 0.0, 1.0]);
    let (d, dn) = (env.buffer_filled(6, f64::NAN), env.buffer_filled(2, 7i32));
    arg_buf(&k, 0, &input);
    arg_buf(&k, 1, &d);
    arg_buf(&k, 2, &dn);
    env.run(&k, &[1], None, None);
    let k = build(env, "ftz_math", "", "ftz_half").expect("build");
    let input = env.buffer(&[0x0000u16, 0x3c00, 0x0100]);
    let h = env.buffer_filled(3, 0xffffu16);
    arg_buf(&k, 0, &input);
    arg_buf(&k, 1, &h);
    env.run(&k, &[1], None, None);
    MathResults {
        f: env.read(&f, 16),
        n: env.read(&n, 2),
        d: env.read(&d, 6),
        dn: env.read(&dn, 2),
        h: env.read(&h, 3),
    }
}

/// Within `ulps` of the f64 reference rounded to f32.
fn near(got: f32, exact: f64, ulps: u32) -> bool {
    common::ulp_diff(got, exact as f32) <= ulps
}

/// Doubles and halves keep their subnormals in either mode.
fn check_double_and_half(r: &MathResults) {
    let den = MATH_DENORM_F64;
    let e = (-720f64).exp();
    assert!(e > 0.0 && e < f64::MIN_POSITIVE);
    assert!(
        (r.d[0] - e).abs() <= f64::from_bits(1),
        "exp(-720) = {:e}",
        r.d[0]
    );
    assert!(
        (r.d[1] - den.ln()).abs() < 1e-12,
        "log(1e-310) = {}",
        r.d[1]
    );
    assert_eq!(r.d[2], f64::from_bits(1), "nextafter(0.0, 1.0)");
    // 1e-310 = m · 2^e with m in [0.5, 1): e = -1029.
    assert_eq!(
        (r.d[3], r.dn[0]),
        (den * 2f64.powi(1000) * 2f64.powi(29), -1029),
        "frexp(1e-310)"
    );
    assert_eq!(r.dn[1], -1030, "ilogb(1e-310)");
    assert_eq!(r.d[4], den, "fmin(1e-310, 1)");
    assert_eq!(r.d[5], den, "sin(1e-310)");
    assert_eq!(r.h[0], 0x0001, "nextafter((half)0, (half)1)");
    assert_eq!(r.h[1], 0x1c00, "sqrt(2^-16) = 2^-8");
    assert_eq!(r.h[2], 0x0100, "a half subnormal times one");
}

#[test]
fn mathlib_keeps_denormals_by_default() {
    if in_child("mathlib_keeps_denormals_by_default", &[]).is_some() {
        return;
    }
    let env = Env::new();
    let r = run_math(&env);
    let f = &r.f;
    let den = f64::from(DENORM);
    assert!(f[0] > 0.0 && f[0] < f32::MIN_POSITIVE && near(f[0], (-100f64).exp(), 0));
    assert!(near(f[1], den.ln(), 1), "log(1e-39) = {}", f[1]);
    assert_eq!((f[2], f[3]), (DENORM, -DENORM), "sin(±1e-39)");
    assert_eq!(f[4], f32::from_bits(1), "nextafter(0, 1)");
    assert_eq!(f[5], f32::from_bits(0x007f_ffff), "nextafter(FLT_MIN, 0)");
    // 1e-39 = m · 2^e with m in [0.5, 1): e = -129, m exact in float.
    assert_eq!(
        (f64::from(f[6]), r.n[0]),
        (den * 2f64.powi(129), -129),
        "frexp"
    );
    assert_eq!((r.n[1], f[7]), (-130, -130.0), "ilogb, logb");
    assert_eq!((f[8], f[9]), (DENORM, -DENORM), "fmin, copysign");
    assert_eq!(f[10], f32::from_bits(1 << 19), "ldexp(1, -130) = 2^-130");
    assert_eq!(f[11], f32::from_bits(1 << 9), "pow(2, -140) = 2^-140");
    assert_eq!(f[12], DENORM, "fabs");
    assert!(near(f[13], den.cbrt(), 1), "cbrt(1e-39) = {}", f[13]);
    assert_eq!((f[14], f[15]), (f[0], 1.0), "exp on float4");
    check_double_and_half(&r);
}

/// Env spec 6.7.3: with subnormals flushed a function may return a non-flushed result, the result
/// for its subnormal operands flushed to zero, or either with a subnormal result flushed; the
/// sign of a flushed zero is unspecified. Ferrocl flushes every single-precision operand and
/// result of the math built-ins (keeping the sign); doubles and halves are untouched.
#[test]
fn ftz_flushes_mathlib_operands_and_results() {
    if in_child(
        "ftz_flushes_mathlib_operands_and_results",
        &[("FERROCL_FTZ", "on")],
    )
    .is_some()
    {
        return;
    }
    let env = Env::new();
    let r = run_math(&env);
    let f = &r.f;
    let flushed = |i: usize, what: &str| assert_eq!(f[i], 0.0, "{what}: {:e}", f[i]);
    // Subnormal results flushed (rule 2): exp(-100), nextafter(0, 1) — the edge cases of 6.7.3
    // allow +0 for nextafter(FLT_MIN, 0) too — ldexp(1, -130), pow(2, -140).
    flushed(0, "exp(-100)");
    flushed(4, "nextafter(0, 1)");
    flushed(5, "nextafter(FLT_MIN, 0)");
    flushed(10, "ldexp(1, -130)");
    flushed(11, "pow(2, -140)");
    flushed(14, "exp(-100) on float4");
    assert_eq!(f[15], 1.0);
    // Subnormal operands flushed (rule 3): the function of ±0.
    assert_eq!(f[1], f32::NEG_INFINITY, "log(1e-39) is log(0)");
    flushed(2, "sin(1e-39)");
    flushed(3, "sin(-1e-39)");
    assert_eq!((f[6], r.n[0]), (0.0, 0), "frexp(1e-39) is frexp(0)");
    assert_eq!(r.n[1], i32::MIN, "ilogb(1e-39) is FP_ILOGB0");
    assert_eq!(f[7], f32::NEG_INFINITY, "logb(1e-39) is logb(0)");
    flushed(8, "fmin(1e-39, 1)");
    flushed(9, "copysign(1e-39, -1)");
    flushed(12, "fabs(-1e-39)");
    flushed(13, "cbrt(1e-39) is cbrt(0)");
    // Ferrocl keeps the sign of what it flushes (any sign is allowed).
    assert!(f[3].is_sign_negative() && f[9].is_sign_negative());
    check_double_and_half(&r);
}

#[test]
fn denorms_are_zero_build_option_flushes_one_program() {
    if in_child("denorms_are_zero_build_option_flushes_one_program", &[]).is_some() {
        return;
    }
    let env = Env::new();
    let flushed = build(&env, "fpmode", "-cl-denorms-are-zero", "arith").expect("build");
    let r = run_arith(&env, &flushed, &A, &B);
    assert_eq!(r.mul[1], 0.0);
    let exact = build(&env, "fpmode", "", "arith").expect("build");
    let r = run_arith(&env, &exact, &A, &B);
    assert!(r.mul[1] > 0.0);
}

#[test]
fn rtz_rounds_toward_zero_in_the_embedded_profile() {
    if in_child(
        "rtz_rounds_toward_zero_in_the_embedded_profile",
        &[("FERROCL_ROUNDING", "rtz")],
    )
    .is_some()
    {
        return;
    }
    let env = Env::new();
    let d = device();
    assert_eq!(
        check(cl(d.profile()), "CL_DEVICE_PROFILE"),
        "EMBEDDED_PROFILE"
    );
    let single = fp_config(opencl3::device::CL_DEVICE_SINGLE_FP_CONFIG);
    assert_eq!(single & CL_FP_ROUND_TO_NEAREST, 0);
    assert_ne!(single & CL_FP_ROUND_TO_ZERO, 0);
    assert_correctly_rounded_divide_sqrt();
    let ext = check(cl(d.extensions()), "CL_DEVICE_EXTENSIONS");
    assert!(
        !ext.contains("cl_khr_fp64") && ext.contains("cles_khr_int64"),
        "{ext}"
    );
    // 1 + 1.5 * 2^-24 is 1.0000001 rounded to nearest, 1.0 toward zero.
    let k = build(&env, "fpmode", "", "arith").expect("build");
    let eps = 1.5 * 2f32.powi(-24);
    let r = run_arith(&env, &k, &[1.0, 1.0], &[eps, 3.0]);
    assert_eq!(r.add[0], 1.0);
    assert_eq!(r.div[1].to_bits(), 0x3eaa_aaaa, "1/3 rounded toward zero");
    // convert_float(uint) without a rounding suffix follows the default mode.
    let conv = build(&env, "fpmode", "", "to_float").expect("build");
    let (input, out) = (env.buffer(&[16_777_219u32]), env.buffer_filled(1, 0f32));
    arg_buf(&conv, 0, &input);
    arg_buf(&conv, 1, &out);
    env.run(&conv, &[1], None, None);
    assert_eq!(env.read(&out, 1)[0], 16_777_218.0);
    // Half follows the device's default rounding: toward zero, also for vstore_half without a
    // suffix (65520 and 1 + 3·2^-12 would round up to nearest).
    let half = check(cl(d.half_fp_config()), "CL_DEVICE_HALF_FP_CONFIG");
    assert_eq!(half & CL_FP_ROUND_TO_NEAREST, 0);
    assert_ne!(half & CL_FP_ROUND_TO_ZERO, 0);
    let k = build(&env, "half_memory", "", "store_float").expect("vstore_half builds");
    let x = [65520.0f32, 1.0 + 3.0 / 4096.0];
    let (input, q) = (env.buffer(&x), env.buffer_filled(10, 0u16));
    arg_buf(&k, 0, &input);
    arg_buf(&k, 1, &q);
    env.run(&k, &[2], None, None);
    assert_eq!(env.read(&q, 2), [0x7bff, 0x3c00]);
    // Half arithmetic rounds toward zero too: 1 + 3·2^-12 is 1 + 2^-10 to nearest, 1 toward
    // zero, for + and for fma (computed in f32 / f64 under the thread's rounding, then narrowed
    // toward zero).
    let k = build(&env, "half", "", "half_arith").expect("half arithmetic builds");
    let (a, b, c) = (
        env.buffer(&[0x3c00u16]),
        env.buffer(&[0x1200u16]),
        env.buffer(&[0x1200u16]),
    );
    let out = env.buffer_filled(6, 0u16);
    arg_buf(&k, 0, &a);
    arg_buf(&k, 1, &a);
    arg_buf(&k, 2, &c);
    arg_buf(&k, 3, &out);
    env.run(&k, &[1], None, None);
    assert_eq!(env.read(&out, 6)[4], 0x3c00, "fma(1, 1, 3·2^-12)");
    arg_buf(&k, 1, &b);
    env.run(&k, &[1], None, None);
    assert_eq!(env.read(&out, 6)[0], 0x3c00, "1 + 3·2^-12");
    // Double kernels are refused: fp64 is off with rtz.
    let Err(log) = build(&env, "fpmode_double", "", "dmul") else {
        panic!("fp64 is off: the double kernel must not build");
    };
    assert!(log.contains("Float64"), "{log}");
}

#[test]
fn fp64_can_be_turned_off() {
    if in_child("fp64_can_be_turned_off", &[("FERROCL_FP64", "off")]).is_some() {
        return;
    }
    let env = Env::new();
    let d = device();
    assert_eq!(check(cl(d.profile()), "CL_DEVICE_PROFILE"), "FULL_PROFILE");
    assert!(!check(cl(d.extensions()), "CL_DEVICE_EXTENSIONS").contains("cl_khr_fp64"));
    assert_eq!(fp_config(opencl3::device::CL_DEVICE_DOUBLE_FP_CONFIG), 0);
    let Err(log) = build(&env, "fpmode_double", "", "dmul") else {
        panic!("fp64 is off: the double kernel must not build");
    };
    assert!(log.contains("capability Float64 is turned off"), "{log}");
    assert!(build(&env, "fpmode", "", "arith").is_ok());
}

#[link(name = "OpenCL")]
extern "C" {
    fn clGetKernelSubGroupInfo(
        k: opencl3::types::cl_kernel,
        d: opencl3::types::cl_device_id,
        name: opencl3::types::cl_kernel_sub_group_info,
        input_size: usize,
        input: *const std::ffi::c_void,
        size: usize,
        value: *mut std::ffi::c_void,
        ret: *mut usize,
    ) -> opencl3::types::cl_int;
}

#[test]
fn sub_groups_can_be_turned_off() {
    if in_child(
        "sub_groups_can_be_turned_off",
        &[("FERROCL_SUBGROUPS", "off")],
    )
    .is_some()
    {
        return;
    }
    let env = Env::new();
    let d = device();
    assert!(!check(cl(d.extensions()), "CL_DEVICE_EXTENSIONS").contains("subgroup"));
    assert_eq!(
        check(cl(d.max_num_sub_groups()), "CL_DEVICE_MAX_NUM_SUB_GROUPS"),
        0
    );
    // No sub-groups, no promise about them.
    assert!(!check(
        cl(d.sub_group_independent_forward_progress()),
        "CL_DEVICE_SUB_GROUP_INDEPENDENT_FORWARD_PROGRESS"
    ));
    let Err(log) = build(&env, "subgroup_basic", "", "subgroup_basic") else {
        panic!("sub-groups are off: the sub-group kernel must not build");
    };
    assert!(log.contains("FERROCL_SUBGROUPS=off"), "{log}");
    let kernel = build(&env, "fpmode", "", "arith").expect("a kernel without sub-groups builds");
    let mut out = 0usize;
    // SAFETY: valid handles, a NULL input for a query without input, a writable size_t.
    let code = unsafe {
        clGetKernelSubGroupInfo(
            kernel.get(),
            d.id(),
            opencl3::kernel::CL_KERNEL_MAX_NUM_SUB_GROUPS,
            0,
            std::ptr::null(),
            8,
            (&mut out as *mut usize).cast(),
            std::ptr::null_mut(),
        )
    };
    assert_eq!(code, opencl3::error_codes::CL_INVALID_OPERATION);
}

/// FERROCL_FP16=off: no cl_khr_fp16, no half config or vector widths, a module declaring
/// Float16 is refused with a log naming the capability and the setting; vload_half and
/// vstore_half (Float16Buffer) still work.
#[test]
fn fp16_can_be_turned_off() {
    if in_child("fp16_can_be_turned_off", &[("FERROCL_FP16", "off")]).is_some() {
        return;
    }
    let env = Env::new();
    let d = device();
    assert!(!check(cl(d.extensions()), "CL_DEVICE_EXTENSIONS").contains("cl_khr_fp16"));
    assert_eq!(check(cl(d.half_fp_config()), "CL_DEVICE_HALF_FP_CONFIG"), 0);
    assert_eq!(
        check(
            cl(d.preferred_vector_width_half()),
            "PREFERRED_VECTOR_WIDTH_HALF"
        ),
        0
    );
    assert_eq!(
        check(cl(d.native_vector_width_half()), "NATIVE_VECTOR_WIDTH_HALF"),
        0
    );
    let dir = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data");
    let spv = std::env::temp_dir().join(format!("ferrocl-fp16-off-{}.spv", std::process::id()));
    let st = Command::new("spirv-as")
        .args(["--target-env", "spv1.0"])
        .arg(dir.join("half_convert.spvasm"))
        .arg("-o")
        .arg(&spv)
        .status()
        .expect("spirv-as (spirv-tools) is installed");
    assert!(st.success());
    let il = std::fs::read(&spv).expect("read assembled module");
    let _ = std::fs::remove_file(&spv);
    let program = check(
        cl(Program::create_from_il(&env.context, &il)),
        "clCreateProgramWithIL",
    );
    let none = std::ffi::CString::new("").unwrap();
    let built = opencl3::program::build_program(
        program.get(),
        env.context.devices(),
        &none,
        None,
        std::ptr::null_mut(),
    );
    assert!(
        built.is_err(),
        "a Float16 module must not build with fp16 off"
    );
    let log = program.get_build_log(env.device.id()).unwrap_or_default();
    assert!(
        log.contains("capability Float16 is turned off") && log.contains("FERROCL_FP16=off"),
        "{log}"
    );
    // llvm-spirv declares only Float16Buffer for half arithmetic: its half values are refused
    // all the same, naming the first one.
    let Err(log) = build(&env, "half", "", "half_arith") else {
        panic!("half arithmetic must not build with fp16 off");
    };
    assert!(
        log.contains("half values need the Float16 capability") && log.contains("FERROCL_FP16=off"),
        "{log}"
    );
    // OpenCL C: clang is not told of cl_khr_fp16, so half arithmetic does not compile.
    let src = std::fs::read_to_string(common::kernel_source("half")).expect("half.cl");
    let program = check(
        cl(Program::create_from_source(&env.context, &src)),
        "clCreateProgramWithSource",
    );
    let none = std::ffi::CString::new("").unwrap();
    let built = opencl3::program::build_program(
        program.get(),
        env.context.devices(),
        &none,
        None,
        std::ptr::null_mut(),
    );
    assert!(
        built.is_err(),
        "half arithmetic must not compile with fp16 off"
    );
    let log = program.get_build_log(env.device.id()).unwrap_or_default();
    assert!(log.contains("half"), "{log}");
    // Halves in memory need no cl_khr_fp16.
    let k = build(&env, "half_memory", "", "store_float").expect("vstore_half builds");
    let x = [1.0f32 + 1.0 / 2048.0, 65520.0];
    let (input, q) = (env.buffer(&x), env.buffer_filled(10, 0u16));
    arg_buf(&k, 0, &input);
    arg_buf(&k, 1, &q);
    env.run(&k, &[2], None, None);
    // Default, rte, rtz, rtp, rtn of the tie 1 + 2^-11 and of 65520.
    assert_eq!(
        env.read(&q, 10),
        [0x3c00, 0x7c00, 0x3c00, 0x7c00, 0x3c00, 0x7bff, 0x3c01, 0x7c00, 0x3c00, 0x7bff]
    );
}

#[test]
fn thread_count_sets_compute_units() {
    if in_child(
        "thread_count_sets_compute_units",
        &[("FERROCL_THREADS", "3")],
    )
    .is_some()
    {
        return;
    }
    assert_eq!(
        check(
            cl(device().max_compute_units()),
            "CL_DEVICE_MAX_COMPUTE_UNITS"
        ),
        3
    );
}

#[test]
fn invalid_values_warn_and_fall_back() {
    let stderr = in_child(
        "invalid_values_warn_and_fall_back",
        &[("FERROCL_FTZ", "maybe"), ("FERROCL_THREADS", "-2")],
    );
    let Some(stderr) = stderr else {
        // In the child: the configured device.
        assert_ne!(
            fp_config(opencl3::device::CL_DEVICE_SINGLE_FP_CONFIG) & CL_FP_DENORM,
            0
        );
        assert!(check(cl(device().max_compute_units()), "units") >= 1);
        return;
    };
    // In the parent: what the child printed.
    assert_eq!(
        stderr
            .matches("FERROCL_FTZ=\"maybe\" is not one of on/off, 1/0, true/false, yes/no")
            .count(),
        1,
        "{stderr}"
    );
    assert_eq!(
        stderr.matches("FERROCL_THREADS=\"-2\"").count(),
        1,
        "{stderr}"
    );
}

#[test]
fn dumps_and_logs() {
    let dir = std::env::temp_dir().join(format!("ferrocl-dump-test-{}", std::process::id()));
    let dir_s = dir.to_string_lossy().into_owned();
    let stderr = in_child(
        "dumps_and_logs",
        &[("FERROCL_DUMP_DIR", &dir_s), ("FERROCL_LOG", "debug")],
    );
    let Some(stderr) = stderr else {
        // In the child: the configured device.
        let env = Env::new();
        let k = build(&env, "fpmode", "", "arith").expect("build");
        run_arith(&env, &k, &A, &B);
        return;
    };
    // In the parent: what the child printed.
    assert!(
        stderr.contains("ferrocl: info: built 2 kernel(s)"),
        "{stderr}"
    );
    assert!(stderr.contains("ferrocl: info: launch arith"), "{stderr}");
    assert!(stderr.contains("ferrocl: debug: kernel arith:"), "{stderr}");
    assert!(
        stderr.contains("vectorised (4 work-items per iteration)"),
        "{stderr}"
    );
    let program = dir.join("program-0");
    let spv = std::fs::read(program.join("input.spv")).expect("input.spv dumped");
    assert_eq!(&spv[..4], &0x0723_0203u32.to_le_bytes());
    for file in ["arith.clif", "arith.opt.clif", "arith.s", "to_float.s"] {
        let text =
            std::fs::read_to_string(program.join(file)).unwrap_or_else(|e| panic!("{file}: {e}"));
        assert!(!text.trim().is_empty(), "{file} is empty");
    }
    assert!(std::fs::read_to_string(program.join("arith.s"))
        .expect("asm")
        .contains("ret"));
    std::fs::remove_dir_all(&dir).ok();
}

/// `FERROCL_LLVM=process` runs clang, opt and llvm-spirv as processes: a program built from
/// OpenCL C computes the same values, its build log keeps clang's warnings, and a source error
/// is named with its line; an invalid value warns and keeps the server.
#[test]
fn llvm_tools_can_run_as_processes() {
    for setting in ["process", "server", "sideways"] {
        let name = "llvm_tools_can_run_as_processes";
        let stderr = in_child(name, &[("FERROCL_LLVM", setting), ("FERROCL_CACHE", "off")]);
        let Some(stderr) = stderr else {
            let env = Env::new();
            let source = "#warning a warning to keep\nkernel void twice(global int* p) { size_t i = get_global_id(0); p[i] = 2 * p[i] + (int)i; }";
            let program = env.program_from_source(source, "");
            let log = program.get_build_log(env.device.id()).unwrap_or_default();
            assert!(log.contains(":1:2: warning: a warning to keep"), "{log}");
            let kernel = check(cl(Kernel::create(&program, "twice")), "clCreateKernel");
            let input: Vec<i32> = (0..100).collect();
            let buffer = env.buffer(&input);
            arg_buf(&kernel, 0, &buffer);
            env.run(&kernel, &[input.len()], None, None);
            let expected: Vec<i32> = input.iter().map(|v| 3 * v).collect();
            assert_eq!(env.read(&buffer, input.len()), expected);
            let broken =
                env.try_program_from_source("kernel void k(global int* p) {\n p[0] = q;\n}", "");
            let Err(log) = broken else {
                panic!("an undeclared name must fail the build");
            };
            assert!(
                log.contains(":2:9: error: use of undeclared identifier 'q'"),
                "{log}"
            );
            return;
        };
        let warned = stderr.contains("FERROCL_LLVM=\"sideways\" is not one of server, process");
        assert_eq!(warned, setting == "sideways", "{setting}: {stderr}");
    }
}

#[test]
fn vectorisation_can_be_turned_off() {
    let stderr = in_child(
        "vectorisation_can_be_turned_off",
        &[("FERROCL_VECTORIZE", "off"), ("FERROCL_LOG", "debug")],
    );
    let Some(stderr) = stderr else {
        // In the child: the same results, one work-item at a time.
        let env = Env::new();
        let k = build(&env, "fpmode", "", "arith").expect("build");
        let r = run_arith(&env, &k, &A, &B);
        for i in 0..A.len() {
            assert_eq!(r.add[i].to_bits(), (A[i] + B[i]).to_bits(), "add {i}");
            assert_eq!(r.mul[i].to_bits(), (A[i] * B[i]).to_bits(), "mul {i}");
            assert_eq!(r.div[i].to_bits(), (A[i] / B[i]).to_bits(), "div {i}");
        }
        return;
    };
    assert!(stderr.contains("scalar (vectorisation is off)"), "{stderr}");
    assert!(!stderr.contains("vectorised ("), "{stderr}");
}

#[test]
fn workers_can_be_pinned() {
    if in_child(
        "workers_can_be_pinned",
        &[("FERROCL_PIN_THREADS", "on"), ("FERROCL_THREADS", "2")],
    )
    .is_some()
    {
        return;
    }
    // Start the pool and run something on it.
    let env = Env::new();
    let k = build(&env, "fpmode", "", "arith").expect("build");
    run_arith(&env, &k, &A, &B);
    let workers = worker_cpus();
    assert_eq!(workers.len(), 2);
    for (name, cpus) in workers {
        assert!(
            cpus.parse::<usize>().is_ok(),
            "{name} runs on {cpus}, not on one CPU"
        );
    }
}

/// Each worker thread of this process with the CPUs it may run on (`Cpus_allowed_list`).
fn worker_cpus() -> Vec<(String, String)> {
    let mut out = Vec::new();
    for task in std::fs::read_dir("/proc/self/task").expect("/proc/self/task") {
        let task = task.expect("task").path();
        let comm = std::fs::read_to_string(task.join("comm")).unwrap_or_default();
        if !comm.starts_with("ferrocl-worker") {
            continue;
        }
        let status = std::fs::read_to_string(task.join("status")).expect("status");
        let cpus = status
            .lines()
            .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))
            .expect("Cpus_allowed_list")
            .trim()
            .to_owned();
        out.push((comm.trim().to_owned(), cpus));
    }
    out
}

/// Every on/off switch takes on/off, 1/0, true/false and yes/no in any case: one child per
/// spelling with all six switches set to it, checked through the queries and behaviour each
/// switch controls, and no warning printed.
#[test]
fn on_off_settings_take_every_spelling() {
    const SWITCHES: [&str; 7] = [
        "FERROCL_FTZ",
        "FERROCL_FP64",
        "FERROCL_FP16",
        "FERROCL_SUBGROUPS",
        "FERROCL_VECTORIZE",
        "FERROCL_PIN_THREADS",
        "FERROCL_PIPES",
    ];
    const EXPECT: &str = "FERROCL_CONFIG_TEST_EXPECT";
    let name = "on_off_settings_take_every_spelling";
    if std::env::var(CHILD).as_deref() == Ok(name) {
        let on = std::env::var(EXPECT).expect("expected value") == "on";
        let d = device();
        let extensions = check(cl(d.extensions()), "CL_DEVICE_EXTENSIONS");
        let denorm = fp_config(opencl3::device::CL_DEVICE_SINGLE_FP_CONFIG) & CL_FP_DENORM;
        assert_eq!(denorm == 0, on, "FERROCL_FTZ");
        assert_eq!(
            fp_config(opencl3::device::CL_DEVICE_DOUBLE_FP_CONFIG) != 0,
            on,
            "FERROCL_FP64"
        );
        assert_eq!(extensions.contains("cl_khr_fp64"), on, "FERROCL_FP64");
        assert_eq!(extensions.contains("cl_khr_fp16"), on, "FERROCL_FP16");
        assert_eq!(
            extensions.contains("cl_khr_subgroups"),
            on,
            "FERROCL_SUBGROUPS"
        );
        let pipes = opencl3::device::get_device_data(d.id(), opencl_sys::CL_DEVICE_PIPE_SUPPORT)
            .expect("CL_DEVICE_PIPE_SUPPORT");
        assert_eq!(pipes.iter().any(|&b| b != 0), on, "FERROCL_PIPES");
        let env = Env::new();
        let k = build(&env, "fpmode", "", "arith").expect("build");
        run_arith(&env, &k, &A, &B);
        // Pinned workers run on one CPU each.
        let pinned = worker_cpus()
            .iter()
            .filter(|(_, cpus)| cpus.parse::<usize>().is_ok())
            .count();
        // Unpinned workers may still see one CPU on a one-CPU machine.
        let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
        if on {
            assert_eq!(pinned, 2, "FERROCL_PIN_THREADS");
        } else if cpus > 1 {
            assert_eq!(pinned, 0, "FERROCL_PIN_THREADS");
        }
        return;
    }
    let spellings = [
        ("on", "on"),
        ("ON", "on"),
        ("1", "on"),
        ("true", "on"),
        ("True", "on"),
        ("yes", "on"),
        ("YES", "on"),
        ("off", "off"),
        ("Off", "off"),
        ("0", "off"),
        ("false", "off"),
        ("FALSE", "off"),
        ("no", "off"),
        ("No", "off"),
    ];
    for (spelling, expect) in spellings {
        let mut vars: Vec<(&str, &str)> = SWITCHES.iter().map(|s| (*s, spelling)).collect();
        vars.extend([
            (EXPECT, expect),
            ("FERROCL_THREADS", "2"),
            ("FERROCL_LOG", "debug"),
        ]);
        let stderr = in_child(name, &vars).expect("the parent runs children");
        assert!(
            !stderr.contains("is not one of"),
            "{spelling}: warned\n{stderr}"
        );
        let vectorised = stderr.contains("vectorised (");
        let scalar = stderr.contains("scalar (vectorisation is off)");
        assert_eq!(
            (vectorised, scalar),
            (expect == "on", expect == "off"),
            "FERROCL_VECTORIZE={spelling}\n{stderr}"
        );
    }
}

/// The device's answers in every configuration of the switches, against the fixed expectations
/// below (not against `ferrocl_runtime::features`, the registry the answers are derived from):
/// the extension lists with their versions, the OpenCL C features, the SPIR-V capabilities, the
/// queries a feature zeroes while it is off, and clang's view of OpenCL C (every extension and
/// feature macro defined exactly when on, `__IMAGE_SUPPORT__` exactly with images).
#[test]
fn the_feature_registry_agrees_with_the_answers() {
    const CONFIGS: &[&[(&str, &str)]] = &[
        &[],
        &[("FERROCL_FP64", "off")],
        &[("FERROCL_FP16", "off"), ("FERROCL_SUBGROUPS", "off")],
        &[("FERROCL_PROFILE", "embedded")],
        &[("FERROCL_SVM", "off")],
        &[("FERROCL_SVM", "coarse")],
        &[("FERROCL_IMAGES", "off")],
        &[("FERROCL_PIPES", "off")],
        &[("FERROCL_DEVICE_ENQUEUE", "off")],
    ];
    const INDEX: &str = "FERROCL_CONFIG_TEST_INDEX";
    let name = "the_feature_registry_agrees_with_the_answers";
    if std::env::var(CHILD).as_deref() != Ok(name) {
        for (i, vars) in CONFIGS.iter().enumerate() {
            let index = i.to_string();
            let mut vars = vars.to_vec();
            vars.push((INDEX, &index));
            in_child(name, &vars).expect("the parent runs children");
        }
        return;
    }
    let index: usize = std::env::var(INDEX).unwrap().parse().unwrap();
    let vars = CONFIGS[index];
    let set = |var: &str, value: &str| vars.iter().any(|&(n, v)| n == var && v == value);
    let on = |needs: Needs| match needs {
        Needs::Nothing => true,
        Needs::Fp64 => !set("FERROCL_FP64", "off"),
        Needs::Fp16 => !set("FERROCL_FP16", "off"),
        Needs::SubGroups => !set("FERROCL_SUBGROUPS", "off"),
        Needs::Embedded => set("FERROCL_PROFILE", "embedded"),
        Needs::Svm => !set("FERROCL_SVM", "off"),
        Needs::Images => !set("FERROCL_IMAGES", "off"),
        Needs::Pipes => !set("FERROCL_PIPES", "off"),
        Needs::DeviceEnqueue => !set("FERROCL_DEVICE_ENQUEUE", "off"),
    };
    let version = |[major, minor, patch]: [u32; 3]| (major << 22) | (minor << 12) | patch;
    let d = device();
    let id = d.id();
    let raw = |param: u32| opencl3::device::get_device_data(id, param).unwrap();
    let name_versions = |param: u32| -> Vec<(String, u32)> {
        raw(param)
            .chunks_exact(4 + 64)
            .map(|c| {
                let version = u32::from_ne_bytes(c[..4].try_into().unwrap());
                let name: Vec<u8> = c[4..].iter().take_while(|&&b| b != 0).copied().collect();
                (String::from_utf8(name).unwrap(), version)
            })
            .collect()
    };
    let sorted = |mut v: Vec<(String, u32)>| {
        v.sort();
        v
    };
    let reported = name_versions(opencl3::device::CL_DEVICE_EXTENSIONS_WITH_VERSION);
    let want_extensions: Vec<(String, u32)> = EXPECTED_EXTENSIONS
        .iter()
        .filter(|e| on(e.3))
        .map(|e| (e.0.to_owned(), version(e.1)))
        .collect();
    assert_eq!(
        sorted(reported.clone()),
        sorted(want_extensions),
        "CL_DEVICE_EXTENSIONS_WITH_VERSION with {vars:?}"
    );
    // The plain list names the same extensions in the same order.
    let listed = check(cl(d.extensions()), "CL_DEVICE_EXTENSIONS");
    let names: Vec<&str> = reported.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(listed.split_whitespace().collect::<Vec<_>>(), names);
    let want_features: Vec<(String, u32)> = EXPECTED_OPENCL_C_FEATURES
        .iter()
        .filter(|f| on(f.2))
        .map(|f| (f.0.to_owned(), version([f.1, 0, 0])))
        .collect();
    assert_eq!(
        sorted(name_versions(opencl3::device::CL_DEVICE_OPENCL_C_FEATURES)),
        sorted(want_features),
        "CL_DEVICE_OPENCL_C_FEATURES with {vars:?}"
    );
    let capabilities: Vec<u32> = raw(opencl_sys::CL_DEVICE_SPIRV_CAPABILITIES_KHR)
        .chunks_exact(4)
        .map(|c| u32::from_ne_bytes(c.try_into().unwrap()))
        .collect();
    for &(name, number, needs) in EXPECTED_CAPABILITIES {
        assert_eq!(
            capabilities.contains(&number),
            on(needs),
            "capability {name} ({number}) with {vars:?}"
        );
    }
    // An array of C string pointers into the driver.
    let spirv_extensions: Vec<String> = raw(opencl_sys::CL_DEVICE_SPIRV_EXTENSIONS_KHR)
        .chunks_exact(std::mem::size_of::<usize>())
        .map(|c| {
            let p = usize::from_ne_bytes(c.try_into().unwrap()) as *const std::ffi::c_char;
            // SAFETY: the driver answers with pointers to strings it keeps for the process.
            unsafe { std::ffi::CStr::from_ptr(p) }
                .to_string_lossy()
                .into_owned()
        })
        .collect();
    let mut want_spirv: Vec<String> = EXPECTED_SPIRV_EXTENSIONS
        .iter()
        .filter(|e| on(e.1))
        .map(|e| e.0.to_owned())
        .collect();
    want_spirv.sort();
    let mut got_spirv = spirv_extensions.clone();
    got_spirv.sort();
    assert_eq!(
        got_spirv, want_spirv,
        "CL_DEVICE_SPIRV_EXTENSIONS_KHR with {vars:?}"
    );
    for &(query, needs) in EXPECTED_NONZERO_QUERIES {
        assert_eq!(
            raw(query).iter().any(|&b| b != 0),
            on(needs),
            "query {query:#x} with {vars:?}"
        );
    }
    // Clang's view, through the driver's OpenCL C compiler.
    let macros = EXPECTED_EXTENSIONS
        .iter()
        .filter(|e| e.2)
        .map(|e| (e.0, e.3))
        .chain(EXPECTED_OPENCL_C_FEATURES.iter().map(|f| (f.0, f.2)))
        .chain([("__IMAGE_SUPPORT__", Needs::Images)]);
    let mut probe = String::new();
    for (m, needs) in macros {
        let test = if on(needs) { "ifndef" } else { "ifdef" };
        probe.push_str(&format!("#{test} {m}\n#error {m} {test}\n#endif\n"));
    }
    probe.push_str("kernel void k(global int *p) { p[0] = 1; }\n");
    let env = Env::new();
    if let Err(log) = env.try_program_from_source(&probe, "-cl-std=CL3.0") {
        panic!("clang's view differs from the expectations:\n{log}");
    }
}

/// Which setting an expected answer depends on (the defaults and the settings as the README
/// documents them: everything on, the full profile).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Needs {
    Nothing,
    /// Off with `FERROCL_FP64=off`.
    Fp64,
    /// Off with `FERROCL_FP16=off`.
    Fp16,
    /// Off with `FERROCL_SUBGROUPS=off`.
    SubGroups,
    /// Only with `FERROCL_PROFILE=embedded`.
    Embedded,
    /// Off with `FERROCL_SVM=off`.
    Svm,
    /// Off with `FERROCL_IMAGES=off`.
    Images,
    /// Off with `FERROCL_PIPES=off`.
    Pipes,
    /// Off with `FERROCL_DEVICE_ENQUEUE=off`.
    DeviceEnqueue,
}

/// The extensions the device reports: name, version (the extension specification's), whether
/// it is an OpenCL C language extension (its macro defined by clang), and what it needs.
/// Fixed values written down here, not read from the feature registry the answers come from.
#[rustfmt::skip]
const EXPECTED_EXTENSIONS: &[(&str, [u32; 3], bool, Needs)] = &[
    ("cl_khr_icd", [1, 0, 0], false, Needs::Nothing),
    ("cl_khr_icd_unloadable", [1, 0, 0], false, Needs::Nothing),
    ("cl_khr_il_program", [1, 0, 0], false, Needs::Nothing),
    ("cl_khr_byte_addressable_store", [1, 0, 0], true, Needs::Nothing),
    ("cl_khr_global_int32_base_atomics", [1, 0, 0], true, Needs::Nothing),
    ("cl_khr_global_int32_extended_atomics", [1, 0, 0], true, Needs::Nothing),
    ("cl_khr_local_int32_base_atomics", [1, 0, 0], true, Needs::Nothing),
    ("cl_khr_local_int32_extended_atomics", [1, 0, 0], true, Needs::Nothing),
    ("cl_khr_int64_base_atomics", [1, 0, 0], true, Needs::Nothing),
    ("cl_khr_int64_extended_atomics", [1, 0, 0], true, Needs::Nothing),
    ("cl_khr_suggested_local_work_size", [1, 0, 0], false, Needs::Nothing),
    ("cl_khr_spirv_no_integer_wrap_decoration", [1, 0, 0], false, Needs::Nothing),
    ("cl_khr_spirv_linkonce_odr", [1, 0, 0], false, Needs::Nothing),
    ("cl_khr_spirv_extended_debug_info", [1, 0, 0], false, Needs::Nothing),
    ("cl_khr_spirv_queries", [1, 0, 0], false, Needs::Nothing),
    ("cl_khr_extended_versioning", [1, 0, 0], false, Needs::Nothing),
    ("cl_khr_device_uuid", [1, 0, 0], false, Needs::Nothing),
    ("cl_khr_create_command_queue", [1, 0, 0], false, Needs::Nothing),
    ("cl_khr_semaphore", [1, 0, 0], false, Needs::Nothing),
    ("cl_khr_initialize_memory", [1, 0, 0], false, Needs::Nothing),
    ("cl_khr_terminate_context", [1, 0, 0], false, Needs::Nothing),
    ("cl_khr_priority_hints", [1, 0, 0], false, Needs::Nothing),
    ("cl_khr_throttle_hints", [1, 0, 0], false, Needs::Nothing),
    ("cl_khr_command_buffer", [0, 9, 8], false, Needs::Nothing),
    ("cl_khr_command_buffer_mutable_dispatch", [0, 9, 5], false, Needs::Nothing),
    ("cl_khr_command_buffer_multi_device", [0, 9, 2], false, Needs::Nothing),
    ("cl_ext_float_atomics", [1, 0, 0], true, Needs::Nothing),
    ("cl_khr_integer_dot_product", [2, 0, 0], true, Needs::Nothing),
    ("cl_khr_kernel_clock", [1, 0, 0], true, Needs::Nothing),
    ("cl_khr_extended_bit_ops", [1, 0, 0], true, Needs::Nothing),
    ("cl_khr_expect_assume", [1, 0, 0], true, Needs::Nothing),
    ("cl_khr_work_group_uniform_arithmetic", [1, 0, 0], true, Needs::Nothing),
    ("cl_khr_extended_async_copies", [1, 0, 0], true, Needs::Nothing),
    ("cl_khr_async_work_group_copy_fence", [1, 0, 0], true, Needs::Nothing),
    ("cl_intel_bfloat16_conversions", [1, 0, 0], true, Needs::Nothing),
    ("cl_intel_devicelib_assert", [1, 0, 0], false, Needs::Nothing),
    ("cl_khr_fp64", [1, 0, 0], true, Needs::Fp64),
    ("cl_khr_fp16", [1, 0, 0], true, Needs::Fp16),
    ("cles_khr_int64", [1, 0, 0], true, Needs::Embedded),
    ("cl_khr_subgroups", [1, 0, 0], true, Needs::SubGroups),
    ("cl_khr_subgroup_extended_types", [1, 0, 0], true, Needs::SubGroups),
    ("cl_khr_subgroup_non_uniform_vote", [1, 0, 0], true, Needs::SubGroups),
    ("cl_khr_subgroup_ballot", [1, 0, 0], true, Needs::SubGroups),
    ("cl_khr_subgroup_non_uniform_arithmetic", [1, 0, 0], true, Needs::SubGroups),
    ("cl_khr_subgroup_shuffle", [1, 0, 0], true, Needs::SubGroups),
    ("cl_khr_subgroup_shuffle_relative", [1, 0, 0], true, Needs::SubGroups),
    ("cl_khr_subgroup_clustered_reduce", [1, 0, 0], true, Needs::SubGroups),
    ("cl_khr_subgroup_rotate", [1, 0, 0], true, Needs::SubGroups),
    ("cl_khr_subgroup_named_barrier", [1, 0, 0], true, Needs::SubGroups),
    ("cl_intel_subgroups", [1, 0, 0], true, Needs::SubGroups),
    ("cl_intel_subgroups_char", [1, 0, 0], true, Needs::SubGroups),
    ("cl_intel_subgroups_short", [1, 0, 0], true, Needs::SubGroups),
    ("cl_intel_subgroups_long", [1, 0, 0], true, Needs::SubGroups),
    ("cl_intel_required_subgroup_size", [1, 0, 0], true, Needs::SubGroups),
    ("cl_intel_spirv_subgroups", [1, 0, 0], false, Needs::SubGroups),
    ("cl_intel_subgroup_local_block_io", [1, 0, 0], true, Needs::SubGroups),
    ("cl_khr_image2d_from_buffer", [1, 0, 0], false, Needs::Images),
    ("cl_khr_depth_images", [1, 0, 0], true, Needs::Images),
    ("cl_khr_3d_image_writes", [1, 0, 0], true, Needs::Images),
    ("cl_khr_srgb_image_writes", [1, 0, 0], true, Needs::Images),
    ("cl_khr_mipmap_image", [1, 0, 0], true, Needs::Images),
    ("cl_khr_mipmap_image_writes", [1, 0, 0], true, Needs::Images),
    ("cl_intel_unified_shared_memory", [1, 1, 0], false, Needs::Svm),
    ("cl_khr_unified_svm", [0, 9, 0], false, Needs::Svm),
];

/// `CL_DEVICE_OPENCL_C_FEATURES`: name, major version, what it needs.
#[rustfmt::skip]
const EXPECTED_OPENCL_C_FEATURES: &[(&str, u32, Needs)] = &[
    ("__opencl_c_int64", 3, Needs::Nothing),
    ("__opencl_c_atomic_order_acq_rel", 3, Needs::Nothing),
    ("__opencl_c_atomic_order_seq_cst", 3, Needs::Nothing),
    ("__opencl_c_atomic_scope_device", 3, Needs::Nothing),
    ("__opencl_c_generic_address_space", 3, Needs::Nothing),
    ("__opencl_c_program_scope_global_variables", 3, Needs::Nothing),
    ("__opencl_c_work_group_collective_functions", 3, Needs::Nothing),
    ("__opencl_c_integer_dot_product_input_4x8bit", 2, Needs::Nothing),
    ("__opencl_c_integer_dot_product_input_4x8bit_packed", 2, Needs::Nothing),
    ("__opencl_c_kernel_clock_scope_device", 1, Needs::Nothing),
    ("__opencl_c_kernel_clock_scope_work_group", 1, Needs::Nothing),
    ("__opencl_c_fp64", 3, Needs::Fp64),
    ("__opencl_c_subgroups", 3, Needs::SubGroups),
    ("__opencl_c_images", 3, Needs::Images),
    ("__opencl_c_3d_image_writes", 3, Needs::Images),
    ("__opencl_c_read_write_images", 3, Needs::Images),
    ("__opencl_c_atomic_scope_all_devices", 3, Needs::Svm),
    ("__opencl_c_pipes", 3, Needs::Pipes),
    ("__opencl_c_device_enqueue", 3, Needs::DeviceEnqueue),
];

/// SPIR-V extensions in `CL_DEVICE_SPIRV_EXTENSIONS_KHR` exactly when the OpenCL extension or
/// feature the environment spec ties them to is on.
#[rustfmt::skip]
const EXPECTED_SPIRV_EXTENSIONS: &[(&str, Needs)] = &[
    ("SPV_KHR_linkonce_odr", Needs::Nothing),
    ("SPV_KHR_no_integer_wrap_decoration", Needs::Nothing),
    ("SPV_KHR_non_semantic_info", Needs::Nothing),
    ("SPV_INTEL_memory_access_aliasing", Needs::Nothing),
    ("SPV_INTEL_fp_fast_math_mode", Needs::Nothing),
    ("SPV_EXT_shader_atomic_float_add", Needs::Nothing),
    ("SPV_EXT_shader_atomic_float_min_max", Needs::Nothing),
    ("SPV_KHR_integer_dot_product", Needs::Nothing),
    ("SPV_KHR_shader_clock", Needs::Nothing),
    ("SPV_KHR_bit_instructions", Needs::Nothing),
    ("SPV_KHR_expect_assume", Needs::Nothing),
    ("SPV_KHR_uniform_group_instructions", Needs::Nothing),
    ("SPV_INTEL_bfloat16_conversion", Needs::Nothing),
    // cl_khr_subgroup_rotate, cl_intel_subgroups.
    ("SPV_KHR_subgroup_rotate", Needs::SubGroups),
    ("SPV_INTEL_subgroups", Needs::SubGroups),
];

/// SPIR-V capabilities (numbers of the SPIR-V specification) in
/// `CL_DEVICE_SPIRV_CAPABILITIES_KHR` exactly when what they need is on.
#[rustfmt::skip]
const EXPECTED_CAPABILITIES: &[(&str, u32, Needs)] = &[
    ("AtomicFloat32AddEXT", 6033, Needs::Nothing),
    ("AtomicFloat32MinMaxEXT", 5612, Needs::Nothing),
    ("DotProduct", 6019, Needs::Nothing),
    ("DotProductInput4x8Bit", 6017, Needs::Nothing),
    ("DotProductInput4x8BitPacked", 6018, Needs::Nothing),
    ("ShaderClockKHR", 5055, Needs::Nothing),
    ("BitInstructions", 6025, Needs::Nothing),
    ("ExpectAssumeKHR", 5629, Needs::Nothing),
    ("GroupUniformArithmeticKHR", 6400, Needs::Nothing),
    ("BFloat16ConversionINTEL", 6115, Needs::Nothing),
    ("Float64", 10, Needs::Fp64),
    ("AtomicFloat64AddEXT", 6034, Needs::Fp64),
    ("AtomicFloat64MinMaxEXT", 5613, Needs::Fp64),
    ("Float16", 9, Needs::Fp16),
    ("SubgroupDispatch", 58, Needs::SubGroups),
    ("GroupNonUniform", 61, Needs::SubGroups),
    ("GroupNonUniformVote", 62, Needs::SubGroups),
    ("GroupNonUniformBallot", 64, Needs::SubGroups),
    ("GroupNonUniformArithmetic", 63, Needs::SubGroups),
    ("GroupNonUniformShuffle", 65, Needs::SubGroups),
    ("GroupNonUniformShuffleRelative", 66, Needs::SubGroups),
    ("GroupNonUniformClustered", 67, Needs::SubGroups),
    ("GroupNonUniformRotateKHR", 6026, Needs::SubGroups),
    ("NamedBarrier", 59, Needs::SubGroups),
    ("SubgroupShuffleINTEL", 5568, Needs::SubGroups),
    ("SubgroupBufferBlockIOINTEL", 5569, Needs::SubGroups),
    ("SubgroupImageBlockIOINTEL", 5570, Needs::SubGroups),
    ("ImageBasic", 13, Needs::Images),
    ("ImageReadWrite", 14, Needs::Images),
    ("LiteralSampler", 20, Needs::Images),
    ("Sampled1D", 43, Needs::Images),
    ("Image1D", 44, Needs::Images),
    ("SampledBuffer", 46, Needs::Images),
    ("ImageBuffer", 47, Needs::Images),
    ("ImageMipmap", 15, Needs::Images),
    ("Pipes", 17, Needs::Pipes),
    ("DeviceEnqueue", 19, Needs::DeviceEnqueue),
];

/// Queries answered with zeros exactly when what they need is off.
#[rustfmt::skip]
const EXPECTED_NONZERO_QUERIES: &[(u32, Needs)] = &[
    (opencl_sys::CL_DEVICE_COMMAND_BUFFER_CAPABILITIES_KHR, Needs::Nothing),
    (opencl_sys::CL_DEVICE_COMMAND_BUFFER_SUPPORTED_QUEUE_PROPERTIES_KHR, Needs::Nothing),
    (opencl_sys::CL_DEVICE_MUTABLE_DISPATCH_CAPABILITIES_KHR, Needs::Nothing),
    (opencl_sys::CL_DEVICE_DOUBLE_FP_CONFIG, Needs::Fp64),
    (opencl_sys::CL_DEVICE_PREFERRED_VECTOR_WIDTH_DOUBLE, Needs::Fp64),
    (opencl_sys::CL_DEVICE_NATIVE_VECTOR_WIDTH_DOUBLE, Needs::Fp64),
    (opencl_sys::CL_DEVICE_HALF_FP_CONFIG, Needs::Fp16),
    (opencl_sys::CL_DEVICE_PREFERRED_VECTOR_WIDTH_HALF, Needs::Fp16),
    (opencl_sys::CL_DEVICE_NATIVE_VECTOR_WIDTH_HALF, Needs::Fp16),
    (opencl_sys::CL_DEVICE_MAX_NUM_SUB_GROUPS, Needs::SubGroups),
    (opencl_sys::CL_DEVICE_SUB_GROUP_INDEPENDENT_FORWARD_PROGRESS, Needs::SubGroups),
    (opencl_sys::CL_DEVICE_MAX_NAMED_BARRIER_COUNT_KHR, Needs::SubGroups),
    (opencl_sys::CL_DEVICE_SUB_GROUP_SIZES_INTEL, Needs::SubGroups),
    (opencl_sys::CL_DEVICE_IMAGE_SUPPORT, Needs::Images),
    (opencl_sys::CL_DEVICE_MAX_READ_IMAGE_ARGS, Needs::Images),
    (opencl_sys::CL_DEVICE_MAX_WRITE_IMAGE_ARGS, Needs::Images),
    (opencl_sys::CL_DEVICE_MAX_READ_WRITE_IMAGE_ARGS, Needs::Images),
    (opencl_sys::CL_DEVICE_MAX_SAMPLERS, Needs::Images),
    (opencl_sys::CL_DEVICE_IMAGE2D_MAX_WIDTH, Needs::Images),
    (opencl_sys::CL_DEVICE_IMAGE2D_MAX_HEIGHT, Needs::Images),
    (opencl_sys::CL_DEVICE_IMAGE3D_MAX_WIDTH, Needs::Images),
    (opencl_sys::CL_DEVICE_IMAGE3D_MAX_HEIGHT, Needs::Images),
    (opencl_sys::CL_DEVICE_IMAGE3D_MAX_DEPTH, Needs::Images),
    (opencl_sys::CL_DEVICE_IMAGE_MAX_BUFFER_SIZE, Needs::Images),
    (opencl_sys::CL_DEVICE_IMAGE_MAX_ARRAY_SIZE, Needs::Images),
    (opencl_sys::CL_DEVICE_IMAGE_PITCH_ALIGNMENT, Needs::Images),
    (opencl_sys::CL_DEVICE_IMAGE_BASE_ADDRESS_ALIGNMENT, Needs::Images),
    (opencl_sys::CL_DEVICE_SVM_CAPABILITIES, Needs::Svm),
    (opencl_sys::CL_DEVICE_HOST_MEM_CAPABILITIES_INTEL, Needs::Svm),
    (opencl_sys::CL_DEVICE_DEVICE_MEM_CAPABILITIES_INTEL, Needs::Svm),
    (opencl_sys::CL_DEVICE_SINGLE_DEVICE_SHARED_MEM_CAPABILITIES_INTEL, Needs::Svm),
    (opencl_sys::CL_DEVICE_CROSS_DEVICE_SHARED_MEM_CAPABILITIES_INTEL, Needs::Svm),
    (opencl_sys::CL_DEVICE_SVM_TYPE_CAPABILITIES_KHR, Needs::Svm),
    (opencl_sys::CL_DEVICE_PIPE_SUPPORT, Needs::Pipes),
    (opencl_sys::CL_DEVICE_MAX_PIPE_ARGS, Needs::Pipes),
    (opencl_sys::CL_DEVICE_PIPE_MAX_ACTIVE_RESERVATIONS, Needs::Pipes),
    (opencl_sys::CL_DEVICE_PIPE_MAX_PACKET_SIZE, Needs::Pipes),
    (opencl_sys::CL_DEVICE_DEVICE_ENQUEUE_CAPABILITIES, Needs::DeviceEnqueue),
    (opencl_sys::CL_DEVICE_QUEUE_ON_DEVICE_PROPERTIES, Needs::DeviceEnqueue),
    (opencl_sys::CL_DEVICE_QUEUE_ON_DEVICE_PREFERRED_SIZE, Needs::DeviceEnqueue),
    (opencl_sys::CL_DEVICE_QUEUE_ON_DEVICE_MAX_SIZE, Needs::DeviceEnqueue),
    (opencl_sys::CL_DEVICE_MAX_ON_DEVICE_QUEUES, Needs::DeviceEnqueue),
    (opencl_sys::CL_DEVICE_MAX_ON_DEVICE_EVENTS, Needs::DeviceEnqueue),
];

#[test]
fn svm_coarse_offers_coarse_grain_buffers_only() {
    use opencl_sys::*;
    if in_child(
        "svm_coarse_offers_coarse_grain_buffers_only",
        &[("FERROCL_SVM", "coarse")],
    )
    .is_some()
    {
        return;
    }
    let env = Env::new();
    let caps = opencl3::device::get_device_data(env.device.id(), CL_DEVICE_SVM_CAPABILITIES)
        .expect("CL_DEVICE_SVM_CAPABILITIES");
    assert_eq!(
        u64::from_ne_bytes(caps[..8].try_into().unwrap()),
        CL_DEVICE_SVM_COARSE_GRAIN_BUFFER
    );
    // cl_khr_unified_svm's types lose the fine-grain buffer and system types alike (coarse
    // grain, device, host and shared remain).
    let types: Vec<u64> =
        opencl3::device::get_device_data(env.device.id(), CL_DEVICE_SVM_TYPE_CAPABILITIES_KHR)
            .expect("CL_DEVICE_SVM_TYPE_CAPABILITIES_KHR")
            .chunks_exact(8)
            .map(|c| u64::from_ne_bytes(c.try_into().unwrap()))
            .collect();
    assert_eq!(types.len(), 4, "{types:#x?}");
    assert!(types
        .iter()
        .all(|t| t & CL_SVM_CAPABILITY_SYSTEM_ALLOCATED_KHR == 0));
    assert_eq!(
        types[0] & CL_SVM_TYPE_MACRO_COARSE_GRAIN_BUFFER_KHR,
        CL_SVM_TYPE_MACRO_COARSE_GRAIN_BUFFER_KHR
    );
    assert_eq!(
        types[1] & CL_SVM_TYPE_MACRO_DEVICE_KHR,
        CL_SVM_TYPE_MACRO_DEVICE_KHR
    );
    let ctx = env.context.get();
    let fine = CL_MEM_SVM_FINE_GRAIN_BUFFER as cl_svm_mem_flags;
    // SAFETY: a valid context; results checked.
    let p = unsafe {
        assert!(cl3::memory::svm_alloc(ctx, fine, 64, 0).is_err());
        cl3::memory::svm_alloc(ctx, CL_MEM_READ_WRITE as cl_svm_mem_flags, 64, 0)
            .expect("coarse-grain clSVMAlloc")
    };
    let program = env.program_from_source("kernel void k(global int *a) { a[0] = 1; }", "");
    let k = Kernel::create(&program, "k").expect("clCreateKernel");
    let host = [0i32; 4];
    let on: cl_bool = CL_TRUE;
    // SAFETY: a valid kernel; the pointers are what the driver must check.
    unsafe {
        // cl_khr_unified_svm makes every pointer value a valid argument, whether the kernel
        // may dereference it or not.
        cl3::kernel::set_kernel_arg_svm_pointer(k.get(), 0, host.as_ptr().cast())
            .expect("any pointer value");
        cl3::kernel::set_kernel_arg_svm_pointer(k.get(), 0, p.cast::<u8>().add(8).cast())
            .expect("an interior SVM pointer");
        assert_eq!(
            cl3::kernel::set_kernel_exec_info(
                k.get(),
                CL_KERNEL_EXEC_INFO_SVM_FINE_GRAIN_SYSTEM,
                std::mem::size_of::<cl_bool>(),
                (&on as *const cl_bool).cast(),
            ),
            Err(CL_INVALID_OPERATION)
        );
        cl3::memory::svm_free(ctx, p).unwrap();
    }
}

/// `FERROCL_SVM=off`: no SVM entry point works, the all-devices atomic scope is not reported,
/// and a kernel using it fails to build with a log naming the setting.
#[test]
fn svm_off_refuses_svm_and_the_all_devices_scope() {
    use opencl_sys::*;
    if in_child(
        "svm_off_refuses_svm_and_the_all_devices_scope",
        &[("FERROCL_SVM", "off")],
    )
    .is_some()
    {
        return;
    }
    let env = Env::new();
    let id = env.device.id();
    let u64_of = |param| {
        let raw = opencl3::device::get_device_data(id, param).expect("clGetDeviceInfo");
        u64::from_ne_bytes(raw[..8].try_into().unwrap())
    };
    assert_eq!(u64_of(CL_DEVICE_SVM_CAPABILITIES), 0);
    assert_eq!(
        u64_of(CL_DEVICE_ATOMIC_MEMORY_CAPABILITIES) & CL_DEVICE_ATOMIC_SCOPE_ALL_DEVICES,
        0
    );
    let ctx = env.context.get();
    let program = env.program_from_source("kernel void k(global int *a) { a[0] = 1; }", "");
    let k = Kernel::create(&program, "k").expect("clCreateKernel");
    let mut host = [0i32; 4];
    // SAFETY: valid handles; every call must be refused.
    unsafe {
        assert!(cl3::memory::svm_alloc(ctx, CL_MEM_READ_WRITE as cl_svm_mem_flags, 64, 0).is_err());
        assert_eq!(
            cl3::kernel::set_kernel_arg_svm_pointer(k.get(), 0, host.as_ptr().cast()),
            Err(CL_INVALID_OPERATION)
        );
        assert_eq!(
            cl3::command_queue::enqueue_svm_mem_cpy(
                env.queue.get(),
                CL_TRUE,
                host.as_mut_ptr().cast(),
                host[2..].as_ptr().cast(),
                8,
                0,
                std::ptr::null(),
            )
            .err(),
            Some(CL_INVALID_OPERATION)
        );
    }
    let log = env
        .try_program_from_source(
            "kernel void k(global atomic_int *c) {
                 atomic_fetch_add_explicit(c, 1, memory_order_relaxed, memory_scope_all_devices);
             }",
            "-cl-std=CL3.0",
        )
        .expect_err("the all-devices scope needs SVM");
    assert!(log.contains("FERROCL_SVM=off"), "{log}");
}
