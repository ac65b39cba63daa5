//! C99 `inline` functions in OpenCL C (neither `static` nor `extern`), through the real loader:
//! a counter-based random generator in the style of Random123's Philox (`mulhilo32`, key
//! bumps, rounds, all plain `inline`) and complex arithmetic helpers, built with
//! clBuildProgram at every optimisation level and with `-fgnu89-inline`, and with
//! clCompileProgram + clLinkProgram where the helpers come from an embedded header included
//! by two compiled objects. Results are checked against a host implementation of Philox4x32-10
//! and of complex multiplication written from their definitions.

mod common;

use std::ffi::CString;
use std::ptr::null_mut;

use common::{arg, arg_buf, check, cl, Env};
use opencl3::kernel::Kernel;
use opencl3::program::Program;

/// Random123-style helpers, every one a C99 inline definition.
const PHILOX_HEADER: &str = r#"
#define PHILOX_M0 0xD2511F53u
#define PHILOX_M1 0xCD9E8D57u
#define PHILOX_W0 0x9E3779B9u
#define PHILOX_W1 0xBB67AE85u

inline uint mulhilo32(uint a, uint b, uint *hi) {
    ulong product = (ulong)a * (ulong)b;
    *hi = (uint)(product >> 32);
    return (uint)product;
}

inline uint2 philox_bumpkey(uint2 key) {
    return (uint2)(key.x + PHILOX_W0, key.y + PHILOX_W1);
}

inline uint4 philox_round(uint4 ctr, uint2 key) {
    uint hi0, hi1;
    uint lo0 = mulhilo32(PHILOX_M0, ctr.x, &hi0);
    uint lo1 = mulhilo32(PHILOX_M1, ctr.z, &hi1);
    return (uint4)(hi1 ^ ctr.y ^ key.x, lo1, hi0 ^ ctr.w ^ key.y, lo0);
}

inline uint4 philox4x32_10(uint4 ctr, uint2 key) {
    for (int r = 0; r < 10; r++) {
        if (r > 0)
            key = philox_bumpkey(key);
        ctr = philox_round(ctr, key);
    }
    return ctr;
}

typedef float2 cfloat_t;
inline cfloat_t cfloat_mul(cfloat_t a, cfloat_t b) {
    return (cfloat_t)(a.x * b.x - a.y * b.y, a.x * b.y + a.y * b.x);
}
inline cfloat_t cfloat_add(cfloat_t a, cfloat_t b) { return a + b; }
"#;

const KERNELS: &str = r#"
kernel void philox(global uint4 *out, uint2 key) {
    uint i = get_global_id(0);
    out[i] = philox4x32_10((uint4)(i, 0, 0, 0), key);
}

kernel void cmad(global const float2 *a, global const float2 *b, global float2 *out) {
    uint i = get_global_id(0);
    out[i] = cfloat_add(cfloat_mul(a[i], b[i]), a[i]);
}
"#;

/// The two-line case of the report.
const TWO_LINES: &str = "inline float twice(float x) { return 2.0f * x; }\n\
                         kernel void k(global float *p) { p[0] = twice(p[1]); }";

/// Philox4x32-10 on the host (Salmon et al., "Parallel random numbers: as easy as 1, 2, 3").
fn philox_reference(mut ctr: [u32; 4], mut key: [u32; 2]) -> [u32; 4] {
    for r in 0..10 {
        if r > 0 {
            key = [
                key[0].wrapping_add(0x9E37_79B9),
                key[1].wrapping_add(0xBB67_AE85),
            ];
        }
        let p0 = u64::from(0xD251_1F53u32) * u64::from(ctr[0]);
        let p1 = u64::from(0xCD9E_8D57u32) * u64::from(ctr[2]);
        ctr = [
            (p1 >> 32) as u32 ^ ctr[1] ^ key[0],
            p1 as u32,
            (p0 >> 32) as u32 ^ ctr[3] ^ key[1],
            p0 as u32,
        ];
    }
    ctr
}

/// Builds `source` with clBuildProgram and `options`; the log on failure.
fn build(env: &Env, source: &str, options: &str) -> Result<Program, String> {
    env.try_program_from_source(source, options)
}

fn run_philox(env: &Env, kernel: &Kernel) {
    const N: usize = 64;
    let key = [0x1234_5678u32, 0x9abc_def0u32];
    let out = env.buffer_filled::<[u32; 4]>(N, [0; 4]);
    arg_buf(kernel, 0, &out);
    arg(kernel, 1, &key);
    env.run(kernel, &[N], None, None);
    let got = env.read(&out, N);
    for (i, g) in got.iter().enumerate() {
        assert_eq!(
            *g,
            philox_reference([i as u32, 0, 0, 0], key),
            "counter {i}"
        );
    }
}

fn run_cmad(env: &Env, kernel: &Kernel) {
    let a: Vec<[f32; 2]> = (0..16).map(|i| [i as f32 * 0.5, 1.0 - i as f32]).collect();
    let b: Vec<[f32; 2]> = (0..16).map(|i| [2.0 + i as f32, i as f32 * 0.25]).collect();
    let (da, db) = (env.buffer(&a), env.buffer(&b));
    let out = env.buffer_filled::<[f32; 2]>(16, [0.0; 2]);
    arg_buf(kernel, 0, &da);
    arg_buf(kernel, 1, &db);
    arg_buf(kernel, 2, &out);
    env.run(kernel, &[16], None, None);
    for (i, g) in env.read(&out, 16).iter().enumerate() {
        let (x, y) = (a[i], b[i]);
        // Each product is exact in f32 for these small values, so the result is exact.
        let want = [
            x[0] * y[0] - x[1] * y[1] + x[0],
            x[0] * y[1] + x[1] * y[0] + x[1],
        ];
        assert_eq!(*g, want, "element {i}");
    }
}

fn kernel(program: &Program, name: &str) -> Kernel {
    check(cl(Kernel::create(program, name)), "clCreateKernel")
}

#[test]
fn inline_functions_build_at_every_optimisation_level() {
    let env = Env::new();
    let source = format!("{PHILOX_HEADER}{KERNELS}");
    for options in [
        "",
        "-cl-opt-disable",
        "-cl-std=CL3.0",
        "-cl-std=CL3.0 -cl-opt-disable",
        "-cl-std=CL1.1",
        "-cl-std=CL1.0 -cl-opt-disable",
        "-fgnu89-inline",
        "-cl-fast-relaxed-math",
        "-Werror -Wall",
    ] {
        let program = build(&env, &source, options).unwrap_or_else(|log| panic!("{log}"));
        run_philox(&env, &kernel(&program, "philox"));
        run_cmad(&env, &kernel(&program, "cmad"));
        build(&env, TWO_LINES, options).unwrap_or_else(|log| panic!("{log}"));
    }
}

/// `static inline`, `extern inline` and an inline definition with an external declaration
/// keep their meaning: all of them build and compute.
#[test]
fn every_inline_form_builds() {
    let env = Env::new();
    let source = "\
        static inline int a(int x) { return x + 1; }\n\
        extern inline int b(int x) { return x * 3; }\n\
        inline int c(int x) { return x - 5; }\n\
        int c(int x);\n\
        int inline d(int x) { return x << 2; }\n\
        __inline int e(int x) { return x ^ 1; }\n\
        __inline__ int f(int x) { return -x; }\n\
        kernel void k(global int *p) { int x = p[0]; p[0] = a(x) + b(x) + c(x) + d(x) + e(x) + f(x); }";
    for options in ["", "-cl-opt-disable", "-cl-std=CL3.0"] {
        let program = build(&env, source, options).unwrap_or_else(|log| panic!("{log}"));
        let k = kernel(&program, "k");
        let buf = env.buffer(&[10i32]);
        arg_buf(&k, 0, &buf);
        env.run(&k, &[1], None, None);
        assert_eq!(
            env.read(&buf, 1)[0],
            11 + 30 + 5 + 40 + 11 - 10,
            "{options}"
        );
    }
}

/// Two compiled objects that both include the header of inline helpers link into one program
/// (no duplicate symbols, no unresolved ones), at both optimisation levels.
#[test]
fn inline_functions_in_an_embedded_header_compile_and_link() {
    let env = Env::new();
    let header = check(
        cl(Program::create_from_source(&env.context, PHILOX_HEADER)),
        "clCreateProgramWithSource(header)",
    );
    let header_name = CString::new("philox_like.h").unwrap();
    let philox_source = "#include \"philox_like.h\"\n\
        kernel void philox(global uint4 *out, uint2 key) {\n\
            uint i = get_global_id(0);\n\
            out[i] = philox4x32_10((uint4)(i, 0, 0, 0), key);\n\
        }";
    let cmad_source = "#include \"philox_like.h\"\n\
        float2 cmad_one(float2 a, float2 b) { return cfloat_add(cfloat_mul(a, b), a); }";
    let main_source = "float2 cmad_one(float2 a, float2 b);\n\
        kernel void cmad(global const float2 *a, global const float2 *b, global float2 *out) {\n\
            uint i = get_global_id(0);\n\
            out[i] = cmad_one(a[i], b[i]);\n\
        }";
    for options in ["", "-cl-opt-disable"] {
        let compile = |source: &str| {
            let mut p = check(
                cl(Program::create_from_source(&env.context, source)),
                "clCreateProgramWithSource",
            );
            if let Err(e) = cl(p.compile(
                env.context.devices(),
                options,
                &[header.get()],
                &[header_name.as_c_str()],
            )) {
                let log = p.get_build_log(env.device.id()).unwrap_or_default();
                panic!("clCompileProgram({options}) failed ({e}):\n{log}");
            }
            p
        };
        let objects = [
            compile(philox_source),
            compile(cmad_source),
            compile(main_source),
        ];
        let handles: Vec<_> = objects.iter().map(|p| p.get()).collect();
        let link_options = CString::new("").unwrap();
        // SAFETY: the context's own devices; valid compiled programs.
        let linked = unsafe {
            opencl3::program::link_program(
                env.context.get(),
                env.context.devices(),
                &link_options,
                &handles,
                None,
                null_mut(),
            )
        };
        let linked = check(linked, "clLinkProgram");
        let kernel = |name: &str| {
            let name = CString::new(name).unwrap();
            Kernel::new(check(
                opencl3::kernel::create_kernel(linked, &name),
                "clCreateKernel",
            ))
        };
        let (philox, cmad) = (kernel("philox"), kernel("cmad"));
        // SAFETY: the kernels keep the program alive; this drops the link's reference.
        check(
            unsafe { opencl3::program::release_program(linked) },
            "clReleaseProgram",
        );
        run_philox(&env, &philox);
        run_cmad(&env, &cmad);
    }
}

/// Options that are not OpenCL's but harmless for clang are taken; a wrong one is refused
/// with CL_INVALID_BUILD_OPTIONS and named in the build log.
#[test]
fn harmless_clang_options_pass_and_unknown_ones_are_named() {
    let env = Env::new();
    build(
        &env,
        TWO_LINES,
        "-Wall -Wno-unused-variable -U FOO -UBAR -g -cl-strict-aliasing -fno-gnu89-inline",
    )
    .unwrap_or_else(|log| panic!("{log}"));
    let program = check(
        cl(Program::create_from_source(&env.context, TWO_LINES)),
        "clCreateProgramWithSource",
    );
    let options = CString::new("-cl-mad-enable -fbogus-option").unwrap();
    let code = opencl3::program::build_program(
        program.get(),
        env.context.devices(),
        &options,
        None,
        null_mut(),
    );
    assert_eq!(code, Err(opencl3::error_codes::CL_INVALID_BUILD_OPTIONS));
    let log = program.get_build_log(env.device.id()).unwrap_or_default();
    assert!(log.contains("\"-fbogus-option\""), "{log}");
}
