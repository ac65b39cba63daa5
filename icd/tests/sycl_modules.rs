//! SPIR-V shaped as Intel's DPC++ (SYCL) ships it, written by hand (issue #36): the hints of
//! `SPV_INTEL_memory_access_aliasing` (module-scope declarations, decorations, memory operands)
//! and `SPV_INTEL_fp_fast_math_mode`, LLVM intrinsics the translator leaves behind as imported
//! functions (run and checked against host arithmetic on edge values; one Ferrocl does not
//! provide refused with a log naming it), and a link of two modules whose declarations of one
//! function differ in pointee types only, as opaque pointers make them.
//!
//! The modules are `tests/data/sycl_*.spvasm`, and for the integer intrinsics one template
//! instantiated per type here. Only meaningful for Ferrocl: against another ICD (Debian's PoCL
//! takes no SPIR-V) the tests report that and pass without checking.

mod common;

use std::ffi::CString;
use std::path::PathBuf;
use std::ptr;

use common::*;
use opencl3::program::build_program;
use opencl3::types::{cl_context, cl_program};
use opencl_sys::CL_SUCCESS;

/// Assembles `icd/tests/data/<name>.spvasm`.
fn assemble(name: &str, version: &str) -> Vec<u8> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(format!("tests/data/{name}.spvasm"));
    let text = std::fs::read_to_string(path).expect("read .spvasm");
    common::assemble_text(name, &text, version)
}

fn ferrocl_only(env: &Env) -> bool {
    if env.other_icd {
        eprintln!("not checked: the ICD under test does not take SPIR-V");
        return false;
    }
    true
}

fn il_program(env: &Env, il: &[u8]) -> Program {
    check(
        cl(Program::create_from_il(&env.context, il)),
        "clCreateProgramWithIL",
    )
}

/// clBuildProgram: the error code and build log on failure.
fn build(env: &Env, p: &Program) -> Result<(), String> {
    let none = CString::new("").unwrap();
    build_program(p.get(), env.context.devices(), &none, None, ptr::null_mut()).map_err(|code| {
        let log = p.get_build_log(env.device.id()).unwrap_or_default();
        format!("clBuildProgram: {} ({code})\n{log}", error_text(code))
    })
}

/// Builds IL and creates its kernel `name`; panics with the build log.
fn il_kernel(env: &Env, il: &[u8], name: &str) -> Kernel {
    let p = il_program(env, il);
    build(env, &p).unwrap_or_else(|log| panic!("{name}: {log}"));
    check(cl(Kernel::create(&p, name)), "clCreateKernel")
}

#[test]
fn aliasing_hints_are_accepted_and_ignored() {
    let env = Env::new();
    if !ferrocl_only(&env) {
        return;
    }
    let k = il_kernel(&env, &assemble("sycl_aliasing", "1.4"), "add_copy");
    let n = 64;
    let a: Vec<f32> = (0..n).map(|i| i as f32 * 1.5 - 7.0).collect();
    let b: Vec<f32> = (0..n).map(|i| 100.0 / (i as f32 + 1.0)).collect();
    let (ba, bb) = (env.buffer(&a), env.buffer(&b));
    let sum = env.buffer_filled(2 * n, f32::NAN);
    let copy = env.buffer_filled(n, f32::NAN);
    arg_buf(&k, 0, &ba);
    arg_buf(&k, 1, &bb);
    arg_buf(&k, 2, &sum);
    arg_buf(&k, 3, &copy);
    env.run(&k, &[n], None, None);
    let sums = env.read(&sum, 2 * n);
    for i in 0..n {
        assert_eq!(sums[i].to_bits(), (a[i] + b[i]).to_bits(), "sum[{i}]");
        assert_eq!(sums[n + i].to_bits(), b[i].to_bits(), "OpCopyMemory [{i}]");
    }
    let copies = env.read(&copy, n);
    for i in 0..n {
        assert_eq!(
            copies[i].to_bits(),
            a[i].to_bits(),
            "OpCopyMemorySized [{i}]"
        );
    }
}

#[test]
fn fast_math_intel_bits_do_not_change_results() {
    let env = Env::new();
    if !ferrocl_only(&env) {
        return;
    }
    let k = il_kernel(&env, &assemble("sycl_fast_math", "1.0"), "fast");
    let mut rng = Rng::new(36);
    let mut a = vec![1e8f32, 1.0 + f32::EPSILON, 3.0, 1.0 / 3.0];
    let mut b = vec![-1e8f32, 1.0 - f32::EPSILON, 7.0, 3.0];
    let mut c = vec![1.0f32, -1.0, 1e-7, -1.0];
    while a.len() < 4096 {
        a.push(rng.f32_in(-4.0, 4.0));
        b.push(rng.f32_in(-4.0, 4.0));
        c.push(rng.f32_in(-4.0, 4.0));
    }
    let n = a.len();
    let (ba, bb, bc) = (env.buffer(&a), env.buffer(&b), env.buffer(&c));
    let out = env.buffer_filled(3 * n, f32::NAN);
    arg_buf(&k, 0, &ba);
    arg_buf(&k, 1, &bb);
    arg_buf(&k, 2, &bc);
    arg_buf(&k, 3, &out);
    env.run(&k, &[n], None, None);
    let got = env.read(&out, 3 * n);
    let mut fused_would_differ = 0;
    for i in 0..n {
        let (x, y, z) = (a[i], b[i], c[i]);
        let ctx = format!("a {x:e} b {y:e} c {z:e}");
        // a*b + c with two roundings (a fused multiply-add rounds once).
        assert_eq!(got[3 * i].to_bits(), (x * y + z).to_bits(), "a*b+c, {ctx}");
        fused_would_differ += usize::from(x.mul_add(y, z) != x * y + z);
        // (a + b) + c in that order (1e8 + -1e8 + 1 is 1; reassociated it would be 0).
        assert_eq!(
            got[3 * i + 1].to_bits(),
            ((x + y) + z).to_bits(),
            "(a+b)+c, {ctx}"
        );
        // a / b correctly rounded, not a * (1/b).
        assert_eq!(got[3 * i + 2].to_bits(), (x / y).to_bits(), "a/b, {ctx}");
    }
    assert!(
        fused_would_differ > 100,
        "the inputs must tell fused from unfused"
    );
}

/// Element type of the integer template: width in bits and vector component count.
#[derive(Clone, Copy, Debug)]
struct IntType {
    width: u32,
    count: u32,
}

impl IntType {
    fn suffix(self) -> String {
        if self.count == 1 {
            format!("i{}", self.width)
        } else {
            format!("v{}i{}", self.count, self.width)
        }
    }

    fn mask(self) -> u64 {
        u64::MAX >> (64 - self.width)
    }

    /// `v` as a signed value of this width.
    fn signed(self, v: u64) -> i128 {
        let shift = 128 - self.width;
        ((v as i128) << shift) >> shift
    }
}

/// The intrinsics the integer template calls, in output order: (name without `llvm.` and the
/// type suffix, arguments from a, b, c).
const INT_OPS: [(&str, &str); 9] = [
    ("uadd.sat", "a b"),
    ("sadd.sat", "a b"),
    ("usub.sat", "a b"),
    ("ssub.sat", "a b"),
    ("fshl", "a b c"),
    ("fshr", "a b c"),
    // One value shifted with itself: a rotation.
    ("fshl", "a a c"),
    ("fshr", "a a c"),
    ("bswap", "a"),
];

/// The intrinsics of `INT_OPS` a type has (bswap needs two bytes at least).
fn int_ops(t: IntType) -> &'static [(&'static str, &'static str)] {
    if t.width == 8 {
        &INT_OPS[..8]
    } else {
        &INT_OPS
    }
}

/// `kernel ints(global T *a, global T *b, global T *c, global T *out)`: out[k*i + j] = the
/// j-th intrinsic of `int_ops` on a[i], b[i], c[i], each an imported function the way
/// llvm-spirv writes it (an OpFunction with parameters and no body, Import linkage).
fn int_module(t: IntType) -> String {
    let ops = int_ops(t);
    let sfx = t.suffix();
    let mut s = String::from(
        "OpCapability Addresses\nOpCapability Linkage\nOpCapability Kernel\nOpCapability Int64\n",
    );
    match t.width {
        8 => s += "OpCapability Int8\n",
        16 => s += "OpCapability Int16\n",
        _ => {}
    }
    s += "OpMemoryModel Physical64 OpenCL\nOpEntryPoint Kernel %kernel \"ints\" %gid\n";
    for (j, (name, _)) in ops.iter().enumerate() {
        s += &format!("OpName %f{j} \"llvm.{name}.{sfx}\"\n");
    }
    s += "OpDecorate %gid BuiltIn GlobalInvocationId\nOpDecorate %gid Constant\n";
    s += "OpDecorate %gid LinkageAttributes \"__spirv_BuiltInGlobalInvocationId\" Import\n";
    for (j, (name, _)) in ops.iter().enumerate() {
        s += &format!("OpDecorate %f{j} LinkageAttributes \"llvm.{name}.{sfx}\" Import\n");
    }
    s += "%void = OpTypeVoid\n%ulong = OpTypeInt 64 0\n";
    let elem = if t.width == 64 {
        "%ulong".to_owned()
    } else {
        s += &format!("%elem = OpTypeInt {} 0\n", t.width);
        "%elem".to_owned()
    };
    let ty = if t.count == 1 {
        elem
    } else {
        s += &format!("%vec = OpTypeVector {elem} {}\n", t.count);
        "%vec".to_owned()
    };
    s += &format!(
        "%v3ulong = OpTypeVector %ulong 3\n%pv3ulong = OpTypePointer Input %v3ulong\n\
         %pT = OpTypePointer CrossWorkgroup {ty}\n\
         %kernel_t = OpTypeFunction %void %pT %pT %pT %pT\n\
         %un_t = OpTypeFunction {ty} {ty}\n%bin_t = OpTypeFunction {ty} {ty} {ty}\n\
         %tri_t = OpTypeFunction {ty} {ty} {ty} {ty}\n%ulong_k = OpConstant %ulong {}\n",
        ops.len()
    );
    for j in 0..ops.len() {
        s += &format!("%ulong_{j} = OpConstant %ulong {j}\n");
    }
    s += "%gid = OpVariable %pv3ulong Input\n";
    for (j, (_, args)) in ops.iter().enumerate() {
        let n = args.split(' ').count();
        let fn_t = ["%un_t", "%bin_t", "%tri_t"][n - 1];
        s += &format!("%f{j} = OpFunction {ty} None {fn_t}\n");
        for p in 0..n {
            s += &format!("%f{j}_{p} = OpFunctionParameter {ty}\n");
        }
        s += "OpFunctionEnd\n";
    }
    s += "%kernel = OpFunction %void None %kernel_t\n%pa = OpFunctionParameter %pT\n\
          %pb = OpFunctionParameter %pT\n%pc = OpFunctionParameter %pT\n\
          %pout = OpFunctionParameter %pT\n%entry = OpLabel\n\
          %g3 = OpLoad %v3ulong %gid Aligned 32\n%i = OpCompositeExtract %ulong %g3 0\n";
    for v in ["a", "b", "c"] {
        s += &format!("%q{v} = OpInBoundsPtrAccessChain %pT %p{v} %i\n%{v} = OpLoad {ty} %q{v}\n");
    }
    s += "%base = OpIMul %ulong %i %ulong_k\n";
    for (j, (_, args)) in ops.iter().enumerate() {
        let args: Vec<String> = args.split(' ').map(|a| format!("%{a}")).collect();
        s += &format!(
            "%r{j} = OpFunctionCall {ty} %f{j} {}\n%o{j} = OpIAdd %ulong %base %ulong_{j}\n\
             %po{j} = OpInBoundsPtrAccessChain %pT %pout %o{j}\nOpStore %po{j} %r{j}\n",
            args.join(" ")
        );
    }
    s += "OpReturn\nOpFunctionEnd\n";
    s
}

/// The host's value of intrinsic `name` on components a, b, c of type `t` (bits in the low
/// `t.width` bits).
fn int_reference(t: IntType, name: &str, a: u64, b: u64, c: u64) -> u64 {
    let w = t.width;
    let m = t.mask();
    let smin = -(1i128 << (w - 1));
    let smax = (1i128 << (w - 1)) - 1;
    let clamp_signed = |v: i128| v.clamp(smin, smax) as u64 & m;
    let s = (u64::from(w) - 1) & c;
    match name {
        "uadd.sat" => (u128::from(a) + u128::from(b)).min(u128::from(m)) as u64,
        "usub.sat" => a.saturating_sub(b),
        "sadd.sat" => clamp_signed(t.signed(a) + t.signed(b)),
        "ssub.sat" => clamp_signed(t.signed(a) - t.signed(b)),
        "fshl" if s == 0 => a,
        "fshl" => (a << s | b >> (u64::from(w) - s)) & m,
        "fshr" if s == 0 => b,
        "fshr" => (a << (u64::from(w) - s) | b >> s) & m,
        "bswap" => a.swap_bytes() >> (64 - w),
        other => unreachable!("{other}"),
    }
}

/// Edge values of a width: 0, 1, 2, the signed and unsigned extremes and their neighbours.
fn int_edges(width: u32) -> Vec<u64> {
    let m = u64::MAX >> (64 - width);
    let top = 1u64 << (width - 1);
    vec![
        0,
        1,
        2,
        3,
        top - 2,
        top - 1,
        top,
        top + 1,
        m - 2,
        m - 1,
        m,
        0x5a & m,
        m / 3,
    ]
}

#[test]
fn llvm_integer_intrinsics_run_as_the_builtins_they_are() {
    let env = Env::new();
    if !ferrocl_only(&env) {
        return;
    }
    let types = [(8, 1), (16, 1), (32, 1), (64, 1), (32, 2), (8, 4), (64, 2)];
    for (width, count) in types {
        let t = IntType { width, count };
        let il = assemble_text(&format!("ints-{}", t.suffix()), &int_module(t), "1.0");
        let k = il_kernel(&env, &il, "ints");
        let ops = int_ops(t);
        // Every pair of edge values, with shift counts from 0 past twice the width.
        let edges = int_edges(width);
        let counts = [
            0,
            1,
            3,
            u64::from(width) - 1,
            u64::from(width),
            u64::from(width) + 5,
        ];
        let mut rng = Rng::new(u64::from(width * 16 + count));
        let (mut a, mut b, mut c) = (Vec::new(), Vec::new(), Vec::new());
        for (n, (&x, &y)) in edges
            .iter()
            .flat_map(|x| edges.iter().map(move |y| (x, y)))
            .enumerate()
        {
            a.push(x);
            b.push(y);
            // High bits on every other count: only c mod width may count.
            let high = if n % 2 == 1 {
                rng.next_u64() & t.mask() & !0xff
            } else {
                0
            };
            c.push(counts[n % counts.len()] | high);
        }
        while a.len() < 512 {
            a.push(rng.next_u64() & t.mask());
            b.push(rng.next_u64() & t.mask());
            c.push(rng.next_u64() & t.mask());
        }
        // Components of work-item i's vectors are consecutive values of the lists.
        let items = a.len() / count as usize;
        let bytes = |v: &[u64]| -> Vec<u8> {
            v.iter()
                .flat_map(|x| x.to_le_bytes()[..width as usize / 8].to_vec())
                .collect()
        };
        let (ba, bb, bc) = (
            env.buffer(&bytes(&a)),
            env.buffer(&bytes(&b)),
            env.buffer(&bytes(&c)),
        );
        let out_bytes = items * ops.len() * count as usize * width as usize / 8;
        let out = env.buffer_filled(out_bytes, 0xeeu8);
        arg_buf(&k, 0, &ba);
        arg_buf(&k, 1, &bb);
        arg_buf(&k, 2, &bc);
        arg_buf(&k, 3, &out);
        env.run(&k, &[items], None, None);
        let got = env.read(&out, out_bytes);
        let lane = width as usize / 8;
        for i in 0..items {
            for (j, (name, args)) in ops.iter().enumerate() {
                for l in 0..count as usize {
                    let v = i * count as usize + l;
                    let (x, y, z) = (a[v], b[v], c[v]);
                    // Calls name their arguments from a, b, c.
                    let pick = |s: &str| match s {
                        "a" => x,
                        "b" => y,
                        _ => z,
                    };
                    let args: Vec<u64> = args.split(' ').map(pick).collect();
                    let want = match args.as_slice() {
                        [p] => int_reference(t, name, *p, 0, 0),
                        [p, q] => int_reference(t, name, *p, *q, 0),
                        [p, q, r] => int_reference(t, name, *p, *q, *r),
                        _ => unreachable!(),
                    };
                    let at = ((i * ops.len() + j) * count as usize + l) * lane;
                    let mut word = [0u8; 8];
                    word[..lane].copy_from_slice(&got[at..at + lane]);
                    let have = u64::from_le_bytes(word);
                    assert_eq!(
                        have,
                        want,
                        "llvm.{name}.{} ({args:?}) lane {l}: got {have:#x}, want {want:#x}",
                        t.suffix()
                    );
                }
            }
        }
    }
}

#[test]
fn llvm_float_intrinsics_run_as_conversions() {
    let env = Env::new();
    if !ferrocl_only(&env) {
        return;
    }
    let k = il_kernel(&env, &assemble("sycl_float_intrinsics", "1.0"), "convert");
    let snan = f32::from_bits(0x7f80_0001);
    let x: Vec<f32> = vec![
        f32::NAN,
        -f32::NAN,
        snan,
        f32::INFINITY,
        f32::NEG_INFINITY,
        0.0,
        -0.0,
        0.5,
        -0.5,
        1.5,
        2.5,
        -2.5,
        3.499_999_8,
        127.5,
        128.0,
        -128.5,
        -129.0,
        255.9,
        2_147_483_520.0,
        2_147_483_648.0,
        -2_147_483_648.0,
        -2_147_483_904.0,
        4_294_967_040.0,
        4_294_967_296.0,
        1e10,
        -1e10,
        9.2e18,
        -9.3e18,
        f32::MIN_POSITIVE / 2.0,
        -f32::MIN_POSITIVE,
        f32::MAX,
        f32::MIN,
    ];
    let y: Vec<f64> = vec![
        f64::NAN,
        f64::INFINITY,
        f64::NEG_INFINITY,
        9_223_372_036_854_775_808.0,
        -9_223_372_036_854_775_808.0,
        9_223_372_036_854_774_784.0,
        -9_223_372_036_854_777_856.0,
        2.5,
        -2.5,
        0.499_999_999_999_999_94,
        4_503_599_627_370_497.0,
        -4_503_599_627_370_496.5,
        1e300,
        -0.0,
        123_456_789.5,
        -1.5,
    ];
    let n = x.len().max(y.len());
    let x: Vec<f32> = (0..n).map(|i| x[i % x.len()]).collect();
    let y: Vec<f64> = (0..n).map(|i| y[i % y.len()]).collect();
    let (bx, by) = (env.buffer(&x), env.buffer(&y));
    let si = env.buffer_filled(n, 0xdead_beefu32);
    let ui = env.buffer_filled(n, 0xdead_beefu32);
    let sc = env.buffer_filled(n, 0xeeu8);
    let outs: Vec<Buffer<u64>> = (0..4)
        .map(|_| env.buffer_filled(n, 0xdead_beefu64))
        .collect();
    let canon = env.buffer_filled(n, 0xdead_beefu32);
    arg_buf(&k, 0, &bx);
    arg_buf(&k, 1, &by);
    arg_buf(&k, 2, &si);
    arg_buf(&k, 3, &ui);
    arg_buf(&k, 4, &sc);
    for (i, b) in outs.iter().enumerate() {
        arg_buf(&k, 5 + i as cl_uint, b);
    }
    arg_buf(&k, 9, &canon);
    env.run(&k, &[n], None, None);
    let (si, ui, sc) = (env.read(&si, n), env.read(&ui, n), env.read(&sc, n));
    let longs: Vec<Vec<u64>> = outs.iter().map(|b| env.read(b, n)).collect();
    let canon = env.read(&canon, n);
    // Rust's float-to-integer casts saturate and map NaN to 0, as fpto*i.sat does.
    let in_range = |v: f64| v.abs() < 9.2e18;
    for i in 0..n {
        let (xv, yv) = (x[i], y[i]);
        assert_eq!(si[i] as i32, xv as i32, "fptosi.sat.i32.f32({xv:e})");
        assert_eq!(ui[i], xv as u32, "fptoui.sat.i32.f32({xv:e})");
        assert_eq!(sc[i] as i8, xv as i8, "fptosi.sat.i8.f32({xv:e})");
        assert_eq!(longs[0][i] as i64, yv as i64, "fptosi.sat.i64.f64({yv:e})");
        // lround/lrint are undefined outside the result's range.
        if in_range(f64::from(xv)) {
            assert_eq!(
                longs[1][i] as i64,
                xv.round() as i64,
                "lround.i64.f32({xv:e})"
            );
            assert_eq!(
                longs[3][i] as i64,
                xv.round_ties_even() as i64,
                "lrint.i64.f32({xv:e})"
            );
        }
        if in_range(yv) {
            assert_eq!(
                longs[2][i] as i64,
                yv.round() as i64,
                "llround.i64.f64({yv:e})"
            );
        }
        let c = f32::from_bits(canon[i]);
        if xv.is_nan() {
            assert!(c.is_nan(), "canonicalize({:#x}) gave {c:e}", xv.to_bits());
        } else {
            // A denormal may be flushed when the device flushes.
            let flushed =
                xv.is_subnormal() && c == 0.0 && c.is_sign_negative() == xv.is_sign_negative();
            assert!(
                canon[i] == xv.to_bits() || flushed,
                "canonicalize({xv:e}) gave {c:e}"
            );
        }
    }
}

#[test]
fn an_llvm_intrinsic_ferrocl_does_not_provide_is_named_in_the_log() {
    let env = Env::new();
    if !ferrocl_only(&env) {
        return;
    }
    let p = il_program(&env, &assemble("sycl_unknown_intrinsic", "1.0"));
    let log = build(&env, &p).expect_err("llvm.ushl.sat.i32 has no definition");
    assert!(
        log.contains(
            "unresolved import llvm.ushl.sat.i32: an LLVM intrinsic Ferrocl does not provide"
        ),
        "{log}"
    );
}

#[link(name = "OpenCL")]
extern "C" {
    fn clLinkProgram(
        context: cl_context,
        num_devices: cl_uint,
        devices: *const cl_device_id,
        options: *const std::ffi::c_char,
        num_inputs: cl_uint,
        inputs: *const cl_program,
        notify: *const std::ffi::c_void,
        user_data: *mut std::ffi::c_void,
        errcode_ret: *mut cl_int,
    ) -> cl_program;
}

/// A program returned by clLinkProgram, released on drop.
struct Linked(cl_program);

impl Drop for Linked {
    fn drop(&mut self) {
        // SAFETY: the handle came from clLinkProgram and is released once.
        unsafe { opencl3::program::release_program(self.0).unwrap() };
    }
}

/// clCompileProgram of an IL program without options; panics with the log.
fn compiled(env: &Env, name: &str) -> Program {
    let p = il_program(env, &assemble(name, "1.0"));
    let none = CString::new("").unwrap();
    opencl3::program::compile_program(
        p.get(),
        env.context.devices(),
        &none,
        &[],
        &[],
        None,
        ptr::null_mut(),
    )
    .unwrap_or_else(|e| {
        panic!(
            "clCompileProgram({name}): {e}\n{}",
            p.get_build_log(env.device.id()).unwrap_or_default()
        )
    });
    p
}

#[test]
fn functions_link_by_storage_class_not_pointee_type() {
    let env = Env::new();
    if !ferrocl_only(&env) {
        return;
    }
    let kernel = compiled(&env, "sycl_link_kernel");
    let lib = compiled(&env, "sycl_link_lib");
    let handles = [kernel.get(), lib.get()];
    let none = CString::new("").unwrap();
    let mut err = CL_SUCCESS;
    // SAFETY: valid context and program handles; the array outlives the call.
    let linked = unsafe {
        clLinkProgram(
            env.context.get(),
            0,
            ptr::null(),
            none.as_ptr(),
            handles.len() as cl_uint,
            handles.as_ptr(),
            ptr::null(),
            ptr::null_mut(),
            &mut err,
        )
    };
    assert!(
        !linked.is_null(),
        "clLinkProgram returned no program ({err})"
    );
    let linked = Linked(linked);
    let log = opencl3::program::get_program_build_info(
        linked.0,
        env.device.id(),
        opencl_sys::CL_PROGRAM_BUILD_LOG,
    )
    .map(String::from)
    .unwrap_or_default();
    assert_eq!(err, CL_SUCCESS, "clLinkProgram: {log}");
    let name = CString::new("split_all").unwrap();
    let k = Kernel::new(check(
        opencl3::kernel::create_kernel(linked.0, &name),
        "clCreateKernel",
    ));
    let x: Vec<f32> = vec![2.75, -2.75, 0.0, -0.0, 1e20, -7.5, 0.125, f32::INFINITY];
    let n = x.len();
    let input = env.buffer(&x);
    let ipart = env.buffer_filled(n, f32::NAN);
    let fpart = env.buffer_filled(n, f32::NAN);
    arg_buf(&k, 0, &input);
    arg_buf(&k, 1, &ipart);
    arg_buf(&k, 2, &fpart);
    env.run(&k, &[n], None, None);
    let (ip, fp) = (env.read(&ipart, n), env.read(&fpart, n));
    for i in 0..n {
        let v = x[i];
        let (want_i, want_f) = if v.is_infinite() {
            (v, 0.0f32.copysign(v))
        } else {
            (v.trunc(), (v - v.trunc()).copysign(v))
        };
        assert_eq!(
            ip[i].to_bits(),
            want_i.to_bits(),
            "modf({v:e}) integral part"
        );
        assert_eq!(fp[i].to_bits(), want_f.to_bits(), "modf({v:e}) fraction");
    }
}
