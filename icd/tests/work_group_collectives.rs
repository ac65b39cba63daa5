//! Work-group collectives through the system loader, against host references:
//! - from OpenCL C at both recipes (`kernels/work_group_collectives.cl`): `work_group_all/any`,
//!   `work_group_broadcast` in its 1-, 2- and 3-D forms, and reduce / inclusive scan / exclusive
//!   scan with add, min and max for int, uint, long, ulong, float, double and half;
//! - cl_khr_work_group_uniform_arithmetic (SPV_KHR_uniform_group_instructions): every
//!   instruction on every type env 5.2.27 allows, from hand-written SPIR-V at work-group and
//!   sub-group scope, and every OpenCL C built-in from source the driver compiles;
//! - a local-memory reduction and scan written by hand with barriers, and
//!   `async_work_group_copy` / `async_work_group_strided_copy` in both directions
//!   (`kernels/local_reductions.cl`, OpenCL C 1.2, also run against the other ICD).
//!
//! Launch shapes: local sizes 1, 13 (prime), 64 and the device maximum, with uniform and
//! non-uniform global sizes, and non-uniform and uniform 2-D and 3-D ranges.
//!
//! Floats: the order of a reduction is unspecified, so inputs keep every partial result exact
//! whatever the order — sums of multiples of 1/4 up to 250 (float, double) or of integers from
//! -2 to 2 (half), products of powers of two — and results are compared bit for bit. Products
//! leave the half range (and, in big work-groups, the float range): the reference follows
//! each path's documented rounding — work-groups fold exactly and round each half result once,
//! sub-groups round every half step in lane order, float and double round every step — and an
//! overflowed product stays infinite in every order (its exponent only grows on average).

mod common;

use std::ffi::CString;
use std::ptr::null_mut;

use common::*;

/// Work-items per sub-group on Ferrocl (codegen's `SUB_GROUP_SIZE`).
const SUB_GROUP_SIZE: usize = 4;

/// The element types of the collectives, values held as their bits in a u64.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    I32,
    U32,
    I64,
    U64,
    F16,
    F32,
    F64,
    /// A SPIR-V bool / OpenCL C predicate, stored as a 32-bit 0 or 1.
    Bool,
}

impl Kind {
    fn cl_name(self) -> &'static str {
        match self {
            Kind::I32 => "int",
            Kind::U32 => "uint",
            Kind::I64 => "long",
            Kind::U64 => "ulong",
            Kind::F16 => "half",
            Kind::F32 => "float",
            Kind::F64 => "double",
            Kind::Bool => "bool",
        }
    }

    fn bits(self) -> u32 {
        match self {
            Kind::F16 => 16,
            Kind::I32 | Kind::U32 | Kind::F32 | Kind::Bool => 32,
            Kind::I64 | Kind::U64 | Kind::F64 => 64,
        }
    }

    fn mask(self) -> u64 {
        u64::MAX >> (64 - self.bits())
    }

    fn is_float(self) -> bool {
        matches!(self, Kind::F16 | Kind::F32 | Kind::F64)
    }

    /// The float value of `raw` (float kinds only).
    fn value(self, raw: u64) -> f64 {
        match self {
            Kind::F16 => half_f64(raw as u16),
            Kind::F32 => f64::from(f32::from_bits(raw as u32)),
            _ => f64::from_bits(raw),
        }
    }

    /// `raw` as a signed integer.
    fn signed(self, raw: u64) -> i64 {
        let shift = 64 - self.bits();
        ((raw << shift) as i64) >> shift
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Op {
    Add,
    Min,
    Max,
    Mul,
    And,
    Or,
    Xor,
    LogicalAnd,
    LogicalOr,
    LogicalXor,
}

impl Op {
    /// The SPIR-V instruction of SPV_KHR_uniform_group_instructions.
    fn khr_instruction(self, kind: Kind) -> &'static str {
        match (self, kind.is_float()) {
            (Op::Mul, true) => "OpGroupFMulKHR",
            (Op::Mul, false) => "OpGroupIMulKHR",
            (Op::And, _) => "OpGroupBitwiseAndKHR",
            (Op::Or, _) => "OpGroupBitwiseOrKHR",
            (Op::Xor, _) => "OpGroupBitwiseXorKHR",
            (Op::LogicalAnd, _) => "OpGroupLogicalAndKHR",
            (Op::LogicalOr, _) => "OpGroupLogicalOrKHR",
            (Op::LogicalXor, _) => "OpGroupLogicalXorKHR",
            _ => unreachable!("{self:?} is not a uniform arithmetic operation"),
        }
    }

    /// The OpenCL C built-in name part: `work_group_reduce_<name>`.
    fn cl_name(self) -> &'static str {
        match self {
            Op::Add => "add",
            Op::Min => "min",
            Op::Max => "max",
            Op::Mul => "mul",
            Op::And => "and",
            Op::Or => "or",
            Op::Xor => "xor",
            Op::LogicalAnd => "logical_and",
            Op::LogicalOr => "logical_or",
            Op::LogicalXor => "logical_xor",
        }
    }
}

/// Every (operation, type) of cl_khr_work_group_uniform_arithmetic (env 5.2.27 and the OpenCL C
/// built-ins): mul on 32/64-bit integers and every float, bitwise on 32/64-bit integers,
/// logical on booleans (int predicates in OpenCL C).
fn uniform_arithmetic_cases(half: bool) -> Vec<(Op, Kind)> {
    let mut cases = Vec::new();
    for op in [Op::Mul, Op::And, Op::Or, Op::Xor] {
        for kind in [Kind::I32, Kind::U32, Kind::I64, Kind::U64] {
            cases.push((op, kind));
        }
    }
    for kind in [Kind::F32, Kind::F64] {
        cases.push((Op::Mul, kind));
    }
    if half {
        cases.push((Op::Mul, Kind::F16));
    }
    for op in [Op::LogicalAnd, Op::LogicalOr, Op::LogicalXor] {
        cases.push((op, Kind::Bool));
    }
    cases
}

// ---- half precision on the host: the host C compiler's conversions (`ferrocl-testref`) ----

fn half_f64(h: u16) -> f64 {
    ferrocl_testref::f16_to_f64(h)
}

/// `x` rounded to the nearest half, ties to even.
fn f64_half(x: f64) -> u16 {
    ferrocl_testref::f64_to_f16(x, ferrocl_testref::Rounding::NearestEven)
}

// ---- host references ----

/// The identity of `op` on `kind`: an exclusive scan's first result.
fn identity(kind: Kind, op: Op) -> u64 {
    let float = |v: f64| match kind {
        Kind::F16 => u64::from(f64_half(v)),
        Kind::F32 => u64::from((v as f32).to_bits()),
        _ => v.to_bits(),
    };
    match op {
        Op::Add | Op::Or | Op::Xor | Op::LogicalOr | Op::LogicalXor => {
            if kind.is_float() {
                float(0.0)
            } else {
                0
            }
        }
        Op::Mul if kind.is_float() => float(1.0),
        Op::Mul | Op::LogicalAnd => 1,
        Op::And => kind.mask(),
        Op::Min => match kind {
            Kind::I32 | Kind::I64 => kind.mask() >> 1,
            k if k.is_float() => float(f64::INFINITY),
            k => k.mask(),
        },
        Op::Max => match kind {
            Kind::I32 | Kind::I64 => (kind.mask() >> 1) + 1,
            k if k.is_float() => float(f64::NEG_INFINITY),
            _ => 0,
        },
    }
}

/// `a op b`; a half sum or product is rounded to half (one step of half arithmetic).
fn combine(kind: Kind, op: Op, a: u64, b: u64) -> u64 {
    if kind.is_float() {
        let (x, y) = (kind.value(a), kind.value(b));
        let pick = |take_b: bool| if take_b { b } else { a };
        return match op {
            // OpenCL's fmin/fmax: a NaN operand gives the other one.
            Op::Min => pick(x.is_nan() || y < x),
            Op::Max => pick(x.is_nan() || y > x),
            Op::Add | Op::Mul => {
                let r = if op == Op::Add { x + y } else { x * y };
                match kind {
                    // Exact in f64 (two halves), then rounded once.
                    Kind::F16 => u64::from(f64_half(r)),
                    // The sum or product of two floats in f64 rounds to the float result.
                    Kind::F32 => u64::from((r as f32).to_bits()),
                    _ => {
                        let (x, y) = (f64::from_bits(a), f64::from_bits(b));
                        (if op == Op::Add { x + y } else { x * y }).to_bits()
                    }
                }
            }
            _ => unreachable!("{op:?} on {kind:?}"),
        };
    }
    let signed = matches!(kind, Kind::I32 | Kind::I64);
    let r = match op {
        Op::Add => a.wrapping_add(b),
        Op::Mul => a.wrapping_mul(b),
        Op::And | Op::LogicalAnd => a & b,
        Op::Or | Op::LogicalOr => a | b,
        Op::Xor | Op::LogicalXor => a ^ b,
        Op::Min if signed => {
            if kind.signed(b) < kind.signed(a) {
                b
            } else {
                a
            }
        }
        Op::Max if signed => {
            if kind.signed(b) > kind.signed(a) {
                b
            } else {
                a
            }
        }
        Op::Min => a.min(b),
        Op::Max => a.max(b),
    };
    r & kind.mask()
}

/// Reduce, inclusive and exclusive scan of `xs` (in linear local order), folding from the first
/// value. With `half_steps` false, half sums and products are folded exactly and each result
/// rounded once (the work-group path; the inputs keep its f32 fold exact too); with it, every
/// step is rounded to half (the sub-group path).
fn scans(kind: Kind, op: Op, xs: &[u64], half_steps: bool) -> (u64, Vec<u64>, Vec<u64>) {
    let mut inclusive = Vec::with_capacity(xs.len());
    if kind == Kind::F16 && !half_steps && matches!(op, Op::Add | Op::Mul) {
        let mut acc = half_f64(xs[0] as u16);
        inclusive.push(xs[0]);
        for &x in &xs[1..] {
            let v = half_f64(x as u16);
            acc = if op == Op::Add { acc + v } else { acc * v };
            inclusive.push(u64::from(f64_half(acc)));
        }
    } else {
        let mut acc = xs[0];
        inclusive.push(acc);
        for &x in &xs[1..] {
            acc = combine(kind, op, acc, x);
            inclusive.push(acc);
        }
    }
    let mut exclusive = vec![identity(kind, op)];
    exclusive.extend_from_slice(&inclusive[..xs.len() - 1]);
    (*inclusive.last().expect("non-empty"), inclusive, exclusive)
}

/// Whether a device result matches the reference: bit for bit (so -0.0 is not 0.0), except
/// that min and max may return either zero, any NaN matches any NaN, and booleans are 0 / not 0.
fn same(kind: Kind, op: Op, got: u64, want: u64) -> bool {
    match kind {
        Kind::Bool => (got != 0) == (want != 0),
        k if k.is_float() => {
            let (g, w) = (k.value(got), k.value(want));
            got == want || (g.is_nan() && w.is_nan()) || (matches!(op, Op::Min | Op::Max) && g == w)
        }
        _ => got == want,
    }
}

/// Deterministic inputs for `op` on `kind` (see the module header for the float ones).
fn sample(kind: Kind, op: Op, i: usize, rng: &mut Rng) -> u64 {
    let r = rng.next_u64();
    let width = u64::from(kind.bits());
    match (kind, op) {
        (Kind::Bool, Op::LogicalAnd) => u64::from(i % 37 != 5),
        (Kind::Bool, Op::LogicalOr) => u64::from(i % 37 == 5),
        (Kind::Bool, _) => r & 1,
        (k, Op::Mul) if k.is_float() => {
            // Each run of 64 starts x, 256, 256, 1/2: a half sub-group's product overflows at
            // its third step (per-step half arithmetic) where the exact product is x · 32768.
            let v = match (i % 64, r % 32) {
                (1 | 2, _) => 256.0,
                (3, _) => 0.5,
                (_, 0) => 2.0,
                (_, 1) => 0.5,
                (_, 2) => -2.0,
                (_, 3) => -0.5,
                (_, n) if n < 16 => -1.0,
                _ => 1.0,
            };
            match k {
                Kind::F16 => u64::from(f64_half(v)),
                Kind::F32 => u64::from((v as f32).to_bits()),
                _ => f64::to_bits(v),
            }
        }
        (Kind::F16, _) if i % 23 == 7 => 0x8000,
        (Kind::F16, _) => u64::from(f64_half((r % 5) as f64 - 2.0)),
        (Kind::F32, _) if i % 23 == 7 => u64::from((-0f32).to_bits()),
        (Kind::F32, _) => u64::from(((r % 2001) as f32 / 4.0 - 250.0).to_bits()),
        (Kind::F64, _) if i % 23 == 7 => (-0f64).to_bits(),
        (Kind::F64, _) => ((r % 2001) as f64 / 4.0 - 250.0).to_bits(),
        // Mostly odd factors, so products keep their low bits.
        (_, Op::Mul) if i % 29 == 3 => r & kind.mask() & !1,
        (_, Op::Mul) => (r | 1) & kind.mask(),
        // And clears one bit per work-item (some keep all), or sets one.
        (_, Op::And) if i.is_multiple_of(11) => kind.mask(),
        (_, Op::And) => !(1u64 << (r % width)) & kind.mask(),
        (_, Op::Or) => 1u64 << (r % width),
        // The extremes come up in min and max.
        _ if i % 17 == 3 => identity(kind, Op::Min),
        _ if i % 19 == 4 => identity(kind, Op::Max),
        _ => r & kind.mask(),
    }
}

// ---- launch shapes ----

#[derive(Clone, Copy, Debug)]
struct Shape {
    dims: usize,
    global: [usize; 3],
    local: [usize; 3],
}

impl Shape {
    fn items(&self) -> usize {
        self.global.iter().product()
    }
}

/// One work-group (or sub-group) as the host sees it.
struct HostGroup {
    /// Global linear ids in linear local order.
    members: Vec<usize>,
    /// The work-group's local size (the smaller last groups included).
    size: [usize; 3],
}

/// The work-groups of `shape`, each cut into runs of `cut` work-items in linear local order
/// (`usize::MAX`: whole work-groups; `SUB_GROUP_SIZE`: sub-groups).
fn host_groups(shape: &Shape, cut: usize) -> Vec<HostGroup> {
    let (global, local) = (shape.global, shape.local);
    let counts = [0, 1, 2].map(|d| global[d].div_ceil(local[d]));
    let mut out = Vec::new();
    for gz in 0..counts[2] {
        for gy in 0..counts[1] {
            for gx in 0..counts[0] {
                let g = [gx, gy, gz];
                let size = [0, 1, 2].map(|d| (global[d] - g[d] * local[d]).min(local[d]));
                let mut items = Vec::new();
                for z in 0..size[2] {
                    for y in 0..size[1] {
                        for x in 0..size[0] {
                            let id = [x, y, z];
                            let gid = [0, 1, 2].map(|d| g[d] * local[d] + id[d]);
                            items.push((gid[2] * global[1] + gid[1]) * global[0] + gid[0]);
                        }
                    }
                }
                for chunk in items.chunks(cut.min(items.len())) {
                    out.push(HostGroup {
                        members: chunk.to_vec(),
                        size,
                    });
                }
            }
        }
    }
    out
}

/// Local sizes 1, 13, 64 and `max` with uniform and non-uniform global sizes, then
/// non-uniform and uniform 2-D and 3-D ranges.
fn shapes(max: usize) -> Vec<Shape> {
    let one = |global: usize, local: usize| Shape {
        dims: 1,
        global: [global, 1, 1],
        local: [local, 1, 1],
    };
    vec![
        one(30, 1),
        one(39, 13),
        one(44, 13),
        one(128, 64),
        one(145, 64),
        one(max, max),
        one(max + 100, max),
        Shape {
            dims: 2,
            global: [17, 8, 1],
            local: [7, 3, 1],
        },
        Shape {
            dims: 2,
            global: [16, 16, 1],
            local: [8, 8, 1],
        },
        Shape {
            dims: 3,
            global: [7, 4, 9],
            local: [3, 2, 5],
        },
        Shape {
            dims: 3,
            global: [8, 4, 4],
            local: [4, 2, 2],
        },
    ]
}

// ---- running kernels on raw values ----

/// Buffers of `kind`'s host type: the input and an output of `outputs` values per work-item.
fn run_raw(
    env: &Env,
    kernel: &Kernel,
    kind: Kind,
    input: &[u64],
    outputs: usize,
    shape: &Shape,
) -> Vec<u64> {
    fn typed<T: Copy + Default>(
        env: &Env,
        kernel: &Kernel,
        input: &[u64],
        outputs: usize,
        shape: &Shape,
        from: impl Fn(u64) -> T,
        to: impl Fn(T) -> u64,
    ) -> Vec<u64> {
        let n = input.len();
        let host: Vec<T> = input.iter().map(|&r| from(r)).collect();
        let bin = env.buffer(&host);
        // A sentinel the device must overwrite (0xAA… in every type).
        let bout = env.buffer(&vec![from(0xAAAA_AAAA_AAAA_AAAA); n * outputs]);
        arg_buf(kernel, 0, &bin);
        arg_buf(kernel, 1, &bout);
        let dims = shape.dims;
        env.run(
            kernel,
            &shape.global[..dims],
            Some(&shape.local[..dims]),
            None,
        );
        env.read(&bout, n * outputs).into_iter().map(to).collect()
    }
    let (k, i, o, s) = (kernel, input, outputs, shape);
    match kind {
        Kind::F16 => typed(env, k, i, o, s, |r| r as u16, u64::from),
        Kind::I32 | Kind::U32 | Kind::F32 | Kind::Bool => {
            typed(env, k, i, o, s, |r| r as u32, u64::from)
        }
        Kind::I64 | Kind::U64 | Kind::F64 => typed(env, k, i, o, s, |r| r, |v| v),
    }
}

/// The largest work-group `kernel` may have on this device (CL_KERNEL_WORK_GROUP_SIZE, which
/// on Ferrocl is the device maximum, 4096).
fn max_local(env: &Env, kernel: &Kernel) -> usize {
    let device = check(
        cl(env.device.max_work_group_size()),
        "CL_DEVICE_MAX_WORK_GROUP_SIZE",
    );
    let of_kernel = check(
        cl(kernel.get_work_group_size(env.device.id())),
        "CL_KERNEL_WORK_GROUP_SIZE",
    );
    assert!(of_kernel <= device);
    if !env.other_icd {
        // Ferrocl runs every kernel at the device maximum: the largest shapes reach it.
        assert_eq!(of_kernel, device);
    }
    of_kernel
}

/// Runs `kernel` (outputs: reduce, inclusive scan, exclusive scan of `op`) on every shape and
/// checks each work-item against the reference over its group (`cut` work-items).
fn check_three(env: &Env, kernel: &Kernel, what: &str, kind: Kind, op: Op, cut: usize) {
    let max = max_local(env, kernel);
    for shape in shapes(max) {
        let mut rng = Rng::new(0x5eed ^ (op as u64) << 8 ^ kind as u64);
        let input: Vec<u64> = (0..shape.items())
            .map(|i| sample(kind, op, i, &mut rng))
            .collect();
        let out = run_raw(env, kernel, kind, &input, 3, &shape);
        for group in host_groups(&shape, cut) {
            let xs: Vec<u64> = group.members.iter().map(|&g| input[g]).collect();
            let (reduce, inclusive, exclusive) = scans(kind, op, &xs, cut == SUB_GROUP_SIZE);
            for (k, &g) in group.members.iter().enumerate() {
                let got = &out[g * 3..g * 3 + 3];
                for (j, (name, want)) in [
                    ("reduce", reduce),
                    ("inclusive scan", inclusive[k]),
                    ("exclusive scan", exclusive[k]),
                ]
                .into_iter()
                .enumerate()
                {
                    assert!(
                        same(kind, op, got[j], want),
                        "{what}: {name} at work-item {g} (local {k}) of {shape:?}: got {:#x}, want {want:#x}",
                        got[j]
                    );
                }
            }
        }
    }
}

fn build_il(env: &Env, il: &[u8]) -> Program {
    let program = check(
        cl(Program::create_from_il(&env.context, il)),
        "clCreateProgramWithIL",
    );
    let options = CString::new("").expect("options");
    if let Err(code) = opencl3::program::build_program(
        program.get(),
        env.context.devices(),
        &options,
        None,
        null_mut(),
    ) {
        let log = program.get_build_log(env.device.id()).unwrap_or_default();
        panic!(
            "clBuildProgram failed: {} ({code})\n{log}",
            error_text(code)
        );
    }
    program
}

// ---- cl_khr_work_group_uniform_arithmetic ----

#[test]
fn device_reports_uniform_arithmetic() {
    let env = Env::new();
    if env.other_icd {
        return;
    }
    assert!(env.has_extension("cl_khr_work_group_uniform_arithmetic"));
    let with_version = check(
        cl(env.device.extensions_with_version()),
        "CL_DEVICE_EXTENSIONS_WITH_VERSION",
    );
    assert!(with_version.iter().any(|e| {
        let name: Vec<u8> = e.name.iter().take_while(|&&c| c != 0).copied().collect();
        name == b"cl_khr_work_group_uniform_arithmetic" && e.version == 1 << 22
    }));
    // cl_khr_spirv_queries: the SPIR-V extension and its capability (6400).
    let id = env.device.id();
    let spirv_extensions: Vec<String> =
        opencl3::device::get_device_data(id, opencl_sys::CL_DEVICE_SPIRV_EXTENSIONS_KHR)
            .expect("CL_DEVICE_SPIRV_EXTENSIONS_KHR")
            .chunks_exact(std::mem::size_of::<usize>())
            .map(|c| {
                let p = usize::from_ne_bytes(c.try_into().expect("pointer")) as *const i8;
                // SAFETY: the driver returns pointers to NUL-terminated strings it keeps alive.
                unsafe { std::ffi::CStr::from_ptr(p) }
                    .to_string_lossy()
                    .into_owned()
            })
            .collect();
    assert!(
        spirv_extensions
            .iter()
            .any(|e| e == "SPV_KHR_uniform_group_instructions"),
        "{spirv_extensions:?}"
    );
    let caps: Vec<u32> =
        opencl3::device::get_device_data(id, opencl_sys::CL_DEVICE_SPIRV_CAPABILITIES_KHR)
            .expect("CL_DEVICE_SPIRV_CAPABILITIES_KHR")
            .chunks_exact(4)
            .map(|c| u32::from_ne_bytes(c.try_into().expect("u32")))
            .collect();
    assert!(
        caps.contains(&6400),
        "GroupUniformArithmeticKHR in {caps:?}"
    );
}

/// A SPIR-V module with one kernel `<op>_<type>(global T *in, global T *out)` per case, each
/// writing the reduce, inclusive scan and exclusive scan of its input at execution `scope`
/// (2 Workgroup, 3 Subgroup) to out[3g..3g+3], g the global linear id. Booleans are 0 or 1
/// in 32-bit memory.
fn uniform_arithmetic_module(cases: &[(Op, Kind)], scope: u32) -> String {
    let half = cases.iter().any(|(_, k)| *k == Kind::F16);
    let mut text = String::from(
        "               OpCapability Addresses
               OpCapability Kernel
               OpCapability Int64
               OpCapability Float64
               OpCapability Groups
               OpCapability GroupUniformArithmeticKHR
",
    );
    if half {
        text.push_str("               OpCapability Float16\n");
    }
    text.push_str(
        "               OpExtension \"SPV_KHR_uniform_group_instructions\"
               OpMemoryModel Physical64 OpenCL
",
    );
    let name = |op: Op, kind: Kind| format!("{}_{}", op.cl_name(), kind.cl_name());
    for &(op, kind) in cases {
        let n = name(op, kind);
        text.push_str(&format!(
            "               OpEntryPoint Kernel %{n} \"{n}\" %glid\n"
        ));
    }
    text.push_str(&format!(
        "               OpDecorate %glid BuiltIn GlobalLinearId
               OpDecorate %glid Constant
       %void = OpTypeVoid
       %bool = OpTypeBool
       %uint = OpTypeInt 32 0
      %ulong = OpTypeInt 64 0
      %float = OpTypeFloat 32
     %double = OpTypeFloat 64
     %uint_0 = OpConstant %uint 0
     %uint_1 = OpConstant %uint 1
      %scope = OpConstant %uint {scope}
    %ulong_1 = OpConstant %ulong 1
    %ulong_3 = OpConstant %ulong 3
%ptr_in_ulong = OpTypePointer Input %ulong
       %glid = OpVariable %ptr_in_ulong Input
"
    ));
    if half {
        text.push_str("       %half = OpTypeFloat 16\n");
    }
    let mut memory_types: Vec<&str> = Vec::new();
    for &(_, kind) in cases {
        let t = memory_type(kind);
        if !memory_types.contains(&t) {
            memory_types.push(t);
            text.push_str(&format!(
                "  %ptr_{t} = OpTypePointer CrossWorkgroup %{t}\n   %fn_{t} = OpTypeFunction %void %ptr_{t} %ptr_{t}\n"
            ));
        }
    }
    for &(op, kind) in cases {
        let n = name(op, kind);
        let t = memory_type(kind);
        let inst = op.khr_instruction(kind);
        let (value_type, convert, results) = if kind == Kind::Bool {
            (
                "bool",
                format!("%{n}_x = OpINotEqual %bool %{n}_raw %uint_0\n"),
                (0..3)
                    .map(|j| format!("%{n}_s{j} = OpSelect %uint %{n}_r{j} %uint_1 %uint_0\n"))
                    .collect::<String>(),
            )
        } else {
            (
                t,
                format!("%{n}_x = OpCopyObject %{t} %{n}_raw\n"),
                (0..3)
                    .map(|j| format!("%{n}_s{j} = OpCopyObject %{t} %{n}_r{j}\n"))
                    .collect::<String>(),
            )
        };
        text.push_str(&format!(
            "%{n} = OpFunction %void None %fn_{t}
%{n}_in = OpFunctionParameter %ptr_{t}
%{n}_out = OpFunctionParameter %ptr_{t}
%{n}_entry = OpLabel
%{n}_g = OpLoad %ulong %glid
%{n}_pin = OpInBoundsPtrAccessChain %ptr_{t} %{n}_in %{n}_g
%{n}_raw = OpLoad %{t} %{n}_pin
{convert}%{n}_r0 = {inst} %{value_type} %scope Reduce %{n}_x
%{n}_r1 = {inst} %{value_type} %scope InclusiveScan %{n}_x
%{n}_r2 = {inst} %{value_type} %scope ExclusiveScan %{n}_x
{results}%{n}_o0 = OpIMul %ulong %{n}_g %ulong_3
%{n}_o1 = OpIAdd %ulong %{n}_o0 %ulong_1
%{n}_o2 = OpIAdd %ulong %{n}_o1 %ulong_1
%{n}_p0 = OpInBoundsPtrAccessChain %ptr_{t} %{n}_out %{n}_o0
%{n}_p1 = OpInBoundsPtrAccessChain %ptr_{t} %{n}_out %{n}_o1
%{n}_p2 = OpInBoundsPtrAccessChain %ptr_{t} %{n}_out %{n}_o2
OpStore %{n}_p0 %{n}_s0
OpStore %{n}_p1 %{n}_s1
OpStore %{n}_p2 %{n}_s2
OpReturn
OpFunctionEnd
"
        ));
    }
    text
}

/// The SPIR-V type name a kind is stored as.
fn memory_type(kind: Kind) -> &'static str {
    match kind {
        Kind::I32 | Kind::U32 | Kind::Bool => "uint",
        Kind::I64 | Kind::U64 => "ulong",
        Kind::F16 => "half",
        Kind::F32 => "float",
        Kind::F64 => "double",
    }
}

/// Assembles `text` with spirv-as and checks it with spirv-val (plain SPIR-V 1.0 rules: the
/// OpenCL environments of spirv-val refuse Float16).
fn assemble(text: &str, tag: &str) -> Vec<u8> {
    let dir = profile_dir().join("work-group-collectives");
    std::fs::create_dir_all(&dir).expect("create assembly dir");
    let src = dir.join(format!("{tag}-{}.spvasm", std::process::id()));
    let out = src.with_extension("spv");
    std::fs::write(&src, text).expect("write spvasm");
    for (tool, args) in [
        ("spirv-as", vec!["--target-env", "spv1.0"]),
        ("spirv-val", vec!["--target-env", "spv1.0"]),
    ] {
        let mut cmd = std::process::Command::new(tool);
        cmd.args(&args);
        if tool == "spirv-as" {
            cmd.arg(&src).arg("-o").arg(&out);
        } else {
            cmd.arg(&out);
        }
        let result = cmd
            .output()
            .unwrap_or_else(|e| panic!("{tool} (spirv-tools): {e}"));
        assert!(
            result.status.success(),
            "{tool} {}:\n{}",
            src.display(),
            String::from_utf8_lossy(&result.stderr)
        );
    }
    let words = std::fs::read(&out).expect("assembled module");
    let _ = std::fs::remove_file(&src);
    let _ = std::fs::remove_file(&out);
    words
}

#[test]
fn uniform_arithmetic_from_spirv_assembly() {
    let env = Env::new();
    if env.other_icd {
        eprintln!("not checked: the ICD under test does not take SPIR-V");
        return;
    }
    let half = env.extension_or_skip("cl_khr_fp16");
    // Signedness does not exist in SPIR-V: one 32- and one 64-bit integer case per operation.
    let cases: Vec<(Op, Kind)> = uniform_arithmetic_cases(half)
        .into_iter()
        .filter(|(_, k)| !matches!(k, Kind::I32 | Kind::I64))
        .collect();
    let mut scopes = vec![(2, usize::MAX)];
    // cl_khr_subgroups lets every group instruction take Subgroup scope (env 5.2.11).
    if env.extension_or_skip("cl_khr_subgroups") {
        scopes.push((3, SUB_GROUP_SIZE));
    }
    for (scope, cut) in scopes {
        let program = build_il(
            &env,
            &assemble(&uniform_arithmetic_module(&cases, scope), "uniform"),
        );
        for &(op, kind) in &cases {
            let name = format!("{}_{}", op.cl_name(), kind.cl_name());
            let kernel = check(cl(Kernel::create(&program, &name)), "clCreateKernel");
            check_three(
                &env,
                &kernel,
                &format!("{name} at scope {scope}"),
                kind,
                op,
                cut,
            );
        }
    }
}

/// OpenCL C 3.0 source with one kernel per case calling the extension's built-ins.
fn uniform_arithmetic_source(cases: &[(Op, Kind)]) -> String {
    let mut text = String::from("#pragma OPENCL EXTENSION cl_khr_fp16 : enable\n");
    text.push_str(
        "#ifndef cl_khr_work_group_uniform_arithmetic\n#error the extension macro is missing\n#endif\n",
    );
    for &(op, kind) in cases {
        // Predicates are ints; each result is 0 or 1.
        let t = if kind == Kind::Bool {
            "int"
        } else {
            kind.cl_name()
        };
        let o = op.cl_name();
        text.push_str(&format!(
            "kernel void {o}_{name}(global const {t} *in, global {t} *out) {{
    size_t g = get_global_linear_id();
    {t} x = in[g];
    out[3 * g] = work_group_reduce_{o}(x);
    out[3 * g + 1] = work_group_scan_inclusive_{o}(x);
    out[3 * g + 2] = work_group_scan_exclusive_{o}(x);
}}
",
            name = kind.cl_name()
        ));
    }
    text
}

#[test]
fn uniform_arithmetic_from_opencl_c() {
    let env = Env::new();
    if env.other_icd || !env.extension_or_skip("cl_khr_work_group_uniform_arithmetic") {
        return;
    }
    let cases = uniform_arithmetic_cases(env.extension_or_skip("cl_khr_fp16"));
    let program = env.program_from_source(&uniform_arithmetic_source(&cases), "-cl-std=CL3.0");
    for &(op, kind) in &cases {
        let name = format!("{}_{}", op.cl_name(), kind.cl_name());
        let kernel = check(cl(Kernel::create(&program, &name)), "clCreateKernel");
        check_three(&env, &kernel, &name, kind, op, usize::MAX);
    }
}

// ---- the core collectives from OpenCL C ----

/// The language of `work_group_collectives.cl` (OpenCL C 3.0 with collectives, fp64 and fp16),
/// without cl_khr_fp16 on a device that lacks it (the file's half kernel is under `#ifdef`).
fn collectives_language(half: bool) -> Vec<String> {
    language_of("work_group_collectives")
        .into_iter()
        .map(|o| {
            if half {
                o
            } else {
                o.replace(",+cl_khr_fp16", "")
            }
        })
        .collect()
}

#[test]
fn collectives_from_opencl_c_at_both_recipes() {
    let env = Env::new();
    if env.other_icd {
        eprintln!("not checked: the ICD under test has no work-group collective functions");
        return;
    }
    let half = env.extension_or_skip("cl_khr_fp16");
    let mut kinds = vec![
        Kind::I32,
        Kind::U32,
        Kind::I64,
        Kind::U64,
        Kind::F32,
        Kind::F64,
    ];
    if half {
        kinds.push(Kind::F16);
    }
    for opt in OPTS {
        let language = collectives_language(half);
        let language: Vec<&str> = language.iter().map(String::as_str).collect();
        let program = env.program_in("work_group_collectives", opt, &language);
        for &kind in &kinds {
            let name = format!("collectives_{}", kind.cl_name());
            let kernel = check(cl(Kernel::create(&program, &name)), "clCreateKernel");
            let max = max_local(&env, &kernel);
            for shape in shapes(max) {
                // One input for add, min and max: the extremes and -0.0 come up.
                let mut rng = Rng::new(0xc011 ^ kind as u64);
                let input: Vec<u64> = (0..shape.items())
                    .map(|i| sample(kind, Op::Add, i, &mut rng))
                    .collect();
                let out = run_raw(&env, &kernel, kind, &input, 10, &shape);
                for group in host_groups(&shape, usize::MAX) {
                    let xs: Vec<u64> = group.members.iter().map(|&g| input[g]).collect();
                    let folds =
                        [Op::Add, Op::Min, Op::Max].map(|op| (op, scans(kind, op, &xs, false)));
                    let s = group.size;
                    let source = ((s[2] - 1) * s[1] + s[1] / 2) * s[0] + s[0] - 1;
                    for (k, &g) in group.members.iter().enumerate() {
                        let got = &out[g * 10..g * 10 + 10];
                        let at = |what: &str| {
                            format!("{opt:?} {name} {shape:?} work-item {g} (local {k}): {what}")
                        };
                        for (j, (op, (reduce, inclusive, exclusive))) in folds.iter().enumerate() {
                            for (offset, form, want) in [
                                (0, "reduce", *reduce),
                                (3, "scan_inclusive", inclusive[k]),
                                (6, "scan_exclusive", exclusive[k]),
                            ] {
                                let got = got[offset + j];
                                assert!(
                                    same(kind, *op, got, want),
                                    "{}",
                                    at(&format!(
                                        "{form}_{}: got {got:#x}, want {want:#x}",
                                        op.cl_name()
                                    ))
                                );
                            }
                        }
                        assert_eq!(got[9], xs[source], "{}", at("broadcast"));
                    }
                }
            }
        }
        let votes = check(cl(Kernel::create(&program, "votes")), "clCreateKernel");
        let max = max_local(&env, &votes);
        for shape in shapes(max) {
            let n = shape.items();
            // Groups where every, some or no work-item has x > 0; a few x == 7.
            let input: Vec<u64> = (0..n)
                .map(|i| match (i / 50) % 3 {
                    0 => 1 + (i % 9) as u64,
                    1 => (i % 4) as u64,
                    _ => 0,
                })
                .collect();
            let out = run_raw(&env, &votes, Kind::I32, &input, 4, &shape);
            for group in host_groups(&shape, usize::MAX) {
                let xs: Vec<u64> = group.members.iter().map(|&g| input[g]).collect();
                let want = [
                    xs.iter().all(|&x| x > 0),
                    xs.iter().any(|&x| x > 0),
                    xs.iter().all(|&x| x != 7),
                    xs.contains(&7),
                ];
                for &g in &group.members {
                    let got: Vec<bool> = out[g * 4..g * 4 + 4].iter().map(|&v| v != 0).collect();
                    assert_eq!(got, want, "{opt:?} votes {shape:?} work-item {g}");
                }
            }
        }
    }
}

// ---- hand-written local-memory reductions and asynchronous copies ----

/// 1-D launches for the OpenCL C 1.2 kernels: the local sizes of `shapes`, with the
/// non-uniform global sizes only on Ferrocl (OpenCL C 1.2 programs on other ICDs require
/// uniform work-groups).
fn one_d_shapes(env: &Env, max: usize) -> Vec<Shape> {
    shapes(max)
        .into_iter()
        .filter(|s| s.dims == 1 && (!env.other_icd || s.global[0] % s.local[0] == 0))
        .collect()
}

fn local_kernel_max(env: &Env, kernel: &Kernel, bytes_per_item: usize) -> usize {
    let local_mem = check(cl(env.device.local_mem_size()), "CL_DEVICE_LOCAL_MEM_SIZE") as usize;
    max_local(env, kernel).min(local_mem / bytes_per_item)
}

#[test]
fn hand_written_local_reduction_and_scan() {
    let env = Env::new();
    for opt in OPTS {
        let program = env.program("local_reductions", opt);
        let sum = check(cl(Kernel::create(&program, "local_sum")), "clCreateKernel");
        let scan = check(cl(Kernel::create(&program, "local_scan")), "clCreateKernel");
        let max = local_kernel_max(&env, &scan, 8);
        for shape in one_d_shapes(&env, max) {
            let (n, local) = (shape.global[0], shape.local[0]);
            let mut rng = Rng::new(n as u64);
            let input: Vec<i32> = (0..n).map(|_| rng.next_u32() as i32 >> 8).collect();
            let groups = n.div_ceil(local);
            let bin = env.buffer(&input);
            let sums = env.buffer_filled(groups, i32::MIN);
            arg_buf(&sum, 0, &bin);
            arg_buf(&sum, 1, &sums);
            arg_local(&sum, 2, local * 4);
            env.run(&sum, &[n], Some(&[local]), None);
            let want: Vec<i32> = input
                .chunks(local)
                .map(|c| c.iter().fold(0i32, |s, &v| s.wrapping_add(v)))
                .collect();
            assert_eq!(env.read(&sums, groups), want, "{opt:?} local_sum {shape:?}");

            let bout = env.buffer_filled(n, i32::MIN);
            arg_buf(&scan, 0, &bin);
            arg_buf(&scan, 1, &bout);
            arg_local(&scan, 2, local * 4);
            arg_local(&scan, 3, local * 4);
            env.run(&scan, &[n], Some(&[local]), None);
            let want: Vec<i32> = input
                .chunks(local)
                .flat_map(|c| {
                    c.iter().scan(0i32, |s, &v| {
                        *s = s.wrapping_add(v);
                        Some(*s)
                    })
                })
                .collect();
            assert_eq!(env.read(&bout, n), want, "{opt:?} local_scan {shape:?}");
        }
    }
}

/// Runs `async_copies_<T>` and checks the four copies: `dst` holds the transformed slices,
/// `strided_dst` the negated gathered elements at every `stride`-th place and its sentinel
/// elsewhere.
fn check_async_copies<T>(
    env: &Env,
    program: &Program,
    name: &str,
    lanes: usize,
    transform: impl Fn(&[f64], usize) -> Vec<f64>,
) where
    T: Copy + Default + PartialEq + std::fmt::Debug + From<i16> + Into<f64>,
{
    let kernel = check(cl(Kernel::create(program, name)), "clCreateKernel");
    let elem = std::mem::size_of::<T>() * lanes;
    let max = local_kernel_max(env, &kernel, elem);
    let stride = 3usize;
    for shape in one_d_shapes(env, max) {
        let (n, local) = (shape.global[0], shape.local[0]);
        let value = |i: usize| T::from((i % 2000) as i16 - 1000);
        let src: Vec<T> = (0..n * lanes).map(value).collect();
        let strided_src: Vec<T> = (0..n * stride * lanes).map(|i| value(i * 7 + 1)).collect();
        let sentinel = T::from(12345);
        let (bsrc, bss) = (env.buffer(&src), env.buffer(&strided_src));
        let bdst = env.buffer_filled(n * lanes, sentinel);
        let bsd = env.buffer_filled(n * stride * lanes, sentinel);
        arg_buf(&kernel, 0, &bsrc);
        arg_buf(&kernel, 1, &bdst);
        arg_buf(&kernel, 2, &bss);
        arg_buf(&kernel, 3, &bsd);
        arg_local(&kernel, 4, local * elem);
        arg(&kernel, 5, &(stride as cl_uint));
        env.run(&kernel, &[n], Some(&[local]), None);
        let dst = env.read(&bdst, n * lanes);
        for (i, chunk) in src.chunks(lanes).enumerate() {
            let l = i % local;
            let values: Vec<f64> = chunk.iter().map(|&v| v.into()).collect();
            let got: Vec<f64> = dst[i * lanes..(i + 1) * lanes]
                .iter()
                .map(|&v| v.into())
                .collect();
            assert_eq!(
                got,
                transform(&values, l),
                "{name} {shape:?} dst element {i}"
            );
        }
        let strided = env.read(&bsd, n * stride * lanes);
        for i in 0..n * stride {
            let got: Vec<f64> = strided[i * lanes..(i + 1) * lanes]
                .iter()
                .map(|&v| v.into())
                .collect();
            let want: Vec<f64> = if i % stride == 0 {
                strided_src[i * lanes..(i + 1) * lanes]
                    .iter()
                    .map(|&v| -v.into())
                    .collect()
            } else {
                vec![sentinel.into(); lanes]
            };
            assert_eq!(got, want, "{name} {shape:?} strided_dst element {i}");
        }
    }
}

#[test]
fn async_copies_in_both_directions() {
    let env = Env::new();
    for opt in OPTS {
        let program = env.program("local_reductions", opt);
        check_async_copies::<i32>(&env, &program, "async_copies_int", 1, |v, l| {
            vec![v[0] * 3.0 + l as f64]
        });
        check_async_copies::<f32>(&env, &program, "async_copies_float4", 4, |v, l| {
            v.iter().map(|x| x * 3.0 + l as f64).collect()
        });
    }
}
