//! Small extensions applications query, through the loader, against host references:
//! - `cl_khr_icd_unloadable`: a platform extension whose query says the loader must not
//!   unload the library (its worker threads live as long as the process).
//! - `cl_khr_spirv_extended_debug_info`: reported, with `OpenCL.DebugInfo.100` among the
//!   extended instruction sets; a module clang-15 -g and llvm-spirv-15 made (it imports the
//!   set) builds from IL and computes as the one without.
//! - `cl_khr_extended_async_copies`: its entries in the extension queries; 2D and 3D copies
//!   (`async_work_group_copy_2D2D`/`_3D3D`) global → local → global over element sizes 1 to 16
//!   bytes, offsets, line lengths and plane areas, both directions, every line, plane and gap
//!   of the local tile and the destination checked byte for byte; shared events; typed
//!   pointers; a barrier-free (vectorised) kernel; OpenCL C 1.2 and 3.0 built by the driver
//!   and SPIR-V at both recipes; checked mode stopping a copy past its local tile; a module
//!   whose import has the built-in's name but not its parameters refused with a log.
//!   Against another ICD the tests run where it reports the extension.

mod common;
#[path = "common/images.rs"]
mod image_helpers;

use std::ffi::CString;
use std::ptr;

use std::ffi::c_void;

use common::*;
use image_helpers::*;
use opencl3::types::cl_version;
use opencl_sys::*;

#[link(name = "OpenCL")]
extern "C" {
    fn clGetKernelWorkGroupInfo(
        k: cl_kernel,
        d: cl_device_id,
        name: cl_kernel_work_group_info,
        size: usize,
        v: *mut c_void,
        ret: *mut usize,
    ) -> cl_int;
    fn clGetKernelSubGroupInfo(
        k: cl_kernel,
        d: cl_device_id,
        name: cl_kernel_sub_group_info,
        input_size: usize,
        input: *const c_void,
        size: usize,
        v: *mut c_void,
        ret: *mut usize,
    ) -> cl_int;
}

/// The version CL_DEVICE_EXTENSIONS_WITH_VERSION gives `name`, if listed.
fn extension_version(env: &Env, name: &str) -> Option<cl_version> {
    let with_version = check(
        cl(env.device.extensions_with_version()),
        "CL_DEVICE_EXTENSIONS_WITH_VERSION",
    );
    with_version.iter().find_map(|e| {
        let n: Vec<u8> = e.name.iter().take_while(|&&c| c != 0).copied().collect();
        (n == name.as_bytes()).then_some(e.version)
    })
}

const VERSION_1_0_0: cl_version = 1 << 22;

// ---- cl_khr_extended_async_copies ----

const ASYNC: &str = "cl_khr_extended_async_copies";

/// One copy's shape, in elements: `planes` planes of `lines` lines of `per_line` elements of
/// `elem` bytes; each side's start offset, line length and plane area.
#[derive(Clone, Copy, Debug)]
struct Shape {
    elem: usize,
    per_line: usize,
    lines: usize,
    planes: usize,
    src: Side,
    tile: Side,
    dst: Side,
}

#[derive(Clone, Copy, Debug)]
struct Side {
    off: usize,
    line: usize,
    plane: usize,
}

const fn side(off: usize, line: usize, plane: usize) -> Side {
    Side { off, line, plane }
}

impl Side {
    /// Elements from the side's base to the end of the last line.
    fn footprint(self, s: &Shape) -> usize {
        if s.lines == 0 || s.planes == 0 {
            return self.off;
        }
        self.off + (s.planes - 1) * self.plane + (s.lines - 1) * self.line + s.per_line
    }
}

/// The copy as the extension defines it, on bytes.
fn copy_lines(dst: &mut [u8], d: Side, src: &[u8], s: Side, shape: &Shape) {
    let e = shape.elem;
    let n = shape.per_line * e;
    for p in 0..shape.planes {
        for l in 0..shape.lines {
            let from = (s.off + p * s.plane + l * s.line) * e;
            let to = (d.off + p * d.plane + l * d.line) * e;
            dst[to..to + n].copy_from_slice(&src[from..from + n]);
        }
    }
}

fn random_bytes(n: usize, seed: u64) -> Vec<u8> {
    let mut rng = Rng::new(seed);
    (0..n).map(|_| rng.next_u32() as u8).collect()
}

const GROUPS: usize = 3;

/// Runs `copy_2d` (planes == 1) or `copy_3d` of `program` for `shape` with local size `local`,
/// and compares the tiles and the destination with the host's copies.
fn check_copy(env: &Env, program: &Program, shape: &Shape, local: usize, what: &str) {
    let three_d = shape.planes != 1;
    // The tile ends two elements after the copy's footprint: the gap after it is checked too.
    let tile_bytes = (shape.tile.footprint(shape) + 2) * shape.elem;
    let group_elems = shape.src.footprint(shape).max(shape.dst.footprint(shape)) + 1;
    let global_bytes = GROUPS * group_elems * shape.elem;
    let src = random_bytes(global_bytes, (shape.elem * 1000 + shape.lines) as u64);
    let src_buf = env.buffer(&src);
    let dst_buf = env.buffer_filled(global_bytes, 0xDDu8);
    let tile_out = env.buffer_filled(GROUPS * tile_bytes, 0u8);
    let name = if three_d { "copy_3d" } else { "copy_2d" };
    let kernel = check(cl(Kernel::create(program, name)), "clCreateKernel");
    arg_buf(&kernel, 0, &src_buf);
    arg_buf(&kernel, 1, &dst_buf);
    arg_local(&kernel, 2, tile_bytes);
    arg_buf(&kernel, 3, &tile_out);
    let s = shape;
    let mut args: Vec<u64> = vec![s.elem as u64, s.per_line as u64, s.lines as u64];
    if three_d {
        // The source planes come in two calls: split after the first plane.
        args.extend([s.planes as u64, 1]);
        for side in [s.src, s.tile, s.dst] {
            args.extend([side.off as u64, side.line as u64, side.plane as u64]);
        }
    } else {
        for side in [s.src, s.tile, s.dst] {
            args.extend([side.off as u64, side.line as u64]);
        }
    }
    args.extend([tile_bytes as u64, group_elems as u64]);
    for (i, a) in args.iter().enumerate() {
        arg(&kernel, 4 + i as cl_uint, a);
    }
    env.run(&kernel, &[GROUPS * local], Some(&[local]), None);

    let mut want_dst = vec![0xDDu8; global_bytes];
    let mut want_tiles = Vec::new();
    for g in 0..GROUPS {
        let mut tile = vec![0xEEu8; tile_bytes];
        let at = |side: Side| Side {
            off: side.off + g * group_elems,
            ..side
        };
        copy_lines(&mut tile, s.tile, &src, at(s.src), s);
        copy_lines(&mut want_dst, at(s.dst), &tile, s.tile, s);
        want_tiles.extend(tile);
    }
    let got_tiles = env.read(&tile_out, GROUPS * tile_bytes);
    let got_dst = env.read(&dst_buf, global_bytes);
    let first_difference = |a: &[u8], b: &[u8]| a.iter().zip(b).position(|(x, y)| x != y);
    assert!(
        got_tiles == want_tiles,
        "{what} {shape:?} local {local}: the local tile differs first at byte {:?}",
        first_difference(&got_tiles, &want_tiles)
    );
    assert!(
        got_dst == want_dst,
        "{what} {shape:?} local {local}: the destination differs first at byte {:?}",
        first_difference(&got_dst, &want_dst)
    );
}

/// 2D shapes: contiguous, gaps on either side, odd element sizes, a single column (the
/// strided copy), lines of one element, no lines at all.
const SHAPES_2D: [Shape; 7] = [
    Shape {
        elem: 1,
        per_line: 5,
        lines: 3,
        planes: 1,
        src: side(2, 7, 0),
        tile: side(1, 6, 0),
        dst: side(3, 9, 0),
    },
    Shape {
        elem: 4,
        per_line: 4,
        lines: 4,
        planes: 1,
        src: side(0, 4, 0),
        tile: side(0, 4, 0),
        dst: side(0, 4, 0),
    },
    Shape {
        elem: 16,
        per_line: 3,
        lines: 2,
        planes: 1,
        src: side(1, 5, 0),
        tile: side(2, 3, 0),
        dst: side(0, 4, 0),
    },
    Shape {
        elem: 3,
        per_line: 2,
        lines: 5,
        planes: 1,
        src: side(1, 2, 0),
        tile: side(0, 3, 0),
        dst: side(2, 2, 0),
    },
    Shape {
        elem: 8,
        per_line: 1,
        lines: 6,
        planes: 1,
        src: side(0, 3, 0),
        tile: side(0, 1, 0),
        dst: side(1, 2, 0),
    },
    Shape {
        elem: 2,
        per_line: 7,
        lines: 1,
        planes: 1,
        src: side(5, 7, 0),
        tile: side(0, 7, 0),
        dst: side(4, 9, 0),
    },
    Shape {
        elem: 4,
        per_line: 3,
        lines: 0,
        planes: 1,
        src: side(0, 3, 0),
        tile: side(0, 3, 0),
        dst: side(0, 3, 0),
    },
];

const SHAPES_3D: [Shape; 4] = [
    Shape {
        elem: 1,
        per_line: 3,
        lines: 2,
        planes: 3,
        src: side(1, 4, 11),
        tile: side(0, 3, 7),
        dst: side(2, 5, 12),
    },
    Shape {
        elem: 4,
        per_line: 2,
        lines: 3,
        planes: 2,
        src: side(0, 2, 6),
        tile: side(1, 2, 6),
        dst: side(0, 3, 10),
    },
    Shape {
        elem: 12,
        per_line: 1,
        lines: 2,
        planes: 4,
        src: side(3, 2, 5),
        tile: side(0, 1, 2),
        dst: side(1, 3, 7),
    },
    Shape {
        elem: 16,
        per_line: 4,
        lines: 1,
        planes: 2,
        src: side(0, 4, 4),
        tile: side(0, 4, 4),
        dst: side(2, 6, 9),
    },
];

fn check_all_copies(env: &Env, program: &Program, what: &str) {
    for shape in SHAPES_2D.iter().chain(&SHAPES_3D) {
        for local in [1, 8, 13] {
            check_copy(env, program, shape, local, what);
        }
    }
    // Typed pointers: float4 lines of 2 out of lines of 3, doubled in the tile.
    let kernel = check(cl(Kernel::create(program, "typed_2d")), "clCreateKernel");
    let src: Vec<f32> = (0..4 * 8 * GROUPS + 4).map(|i| i as f32).collect();
    let src_buf = env.buffer(&src);
    let dst_buf = env.buffer_filled(4 * 8 * GROUPS, -1.0f32);
    arg_buf(&kernel, 0, &src_buf);
    arg_buf(&kernel, 1, &dst_buf);
    env.run(&kernel, &[8 * GROUPS], Some(&[8]), None);
    let mut want = vec![-1.0f32; 4 * 8 * GROUPS];
    for g in 0..GROUPS {
        for line in 0..3 {
            for e in 0..2 {
                let from = 1 + 8 * g + 3 * line + e;
                let to = 8 * g + 3 * line + e;
                for c in 0..4 {
                    want[4 * to + c] = 2.0 * src[4 * from + c];
                }
            }
        }
    }
    assert_eq!(env.read(&dst_buf, want.len()), want, "{what}: typed_2d");
}

#[test]
fn extended_async_copies_are_reported() {
    let env = Env::new();
    if env.other_icd {
        return;
    }
    assert!(env.has_extension(ASYNC));
    assert_eq!(extension_version(&env, ASYNC), Some(VERSION_1_0_0));
}

#[test]
fn extended_async_copies_from_the_driver() {
    let env = Env::new();
    if !env.extension_or_skip(ASYNC) {
        return;
    }
    let source = std::fs::read_to_string(kernel_source("extended_async_copies")).unwrap();
    for std in ["-cl-std=CL1.2", "-cl-std=CL3.0"] {
        let program = env.program_from_source(&source, std);
        check_all_copies(&env, &program, std);
    }
}

#[test]
fn extended_async_copies_from_spirv() {
    let env = Env::new();
    if !env.extension_or_skip(ASYNC) {
        return;
    }
    for opt in OPTS {
        let program = env.program("extended_async_copies", opt);
        check_all_copies(&env, &program, &format!("{opt:?}"));
    }
    if env.other_icd {
        return;
    }
    // The module imports the built-ins by the names every compiler gives them.
    let il = spirv("extended_async_copies", Opt::Optimised);
    let text = String::from_utf8_lossy(&il);
    for name in [
        "_Z26async_work_group_copy_2D2DPU3AS3vmPU3AS1Kvmmmmmm9ocl_event",
        "_Z26async_work_group_copy_2D2DPU3AS1vmPU3AS3Kvmmmmmm9ocl_event",
        "_Z26async_work_group_copy_3D3DPU3AS3vmPU3AS1Kvmmmmmmmmm9ocl_event",
        "_Z26async_work_group_copy_3D3DPU3AS1vmPU3AS3Kvmmmmmmmmm9ocl_event",
    ] {
        assert!(text.contains(name), "{name} is not imported");
    }
    assert!(!text.contains("__ferrocl"), "a stand-in name is left");
}

/// Work-item 0 copies while the others only read the tile: no barrier, so the kernel runs
/// four work-items at a time in vector lanes.
const GATHER: &str = "
kernel void gather_2d(global const int *src, global int *out) {
    local int tile[12];
    event_t e = async_work_group_copy_2D2D(tile, 0, src, 2 + 18 * get_group_id(0),
                                           sizeof(int), 4, 3, 6, 4, 0);
    wait_group_events(1, &e);
    out[get_global_id(0)] = 3 * tile[get_local_id(0)];
}
";

#[test]
fn extended_async_copy_without_barriers() {
    let env = Env::new();
    if !env.extension_or_skip(ASYNC) {
        return;
    }
    let program = env.program_from_source(GATHER, "-cl-std=CL1.2");
    let kernel = check(cl(Kernel::create(&program, "gather_2d")), "clCreateKernel");
    let groups = 5;
    let src: Vec<i32> = (0..18 * groups as i32 + 8).map(|i| i * 7 - 40).collect();
    let src_buf = env.buffer(&src);
    let out = env.buffer_filled(12 * groups, 0i32);
    arg_buf(&kernel, 0, &src_buf);
    arg_buf(&kernel, 1, &out);
    env.run(&kernel, &[12 * groups], Some(&[12]), None);
    let want: Vec<i32> = (0..12 * groups)
        .map(|i| {
            let (g, l) = (i / 12, i % 12);
            3 * src[2 + 18 * g + 6 * (l / 4) + l % 4]
        })
        .collect();
    assert_eq!(env.read(&out, 12 * groups), want);
}

#[test]
fn checked_mode_stops_a_copy_past_its_tile() {
    let env = Env::new();
    if env.other_icd {
        return; // checked mode is Ferrocl's
    }
    let source = std::fs::read_to_string(kernel_source("extended_async_copies")).unwrap();
    let program = env.program_from_source(&source, "-cl-ferrocl-checked");
    let shape = SHAPES_2D[0];
    // In bounds, checked mode computes what it computes unchecked.
    check_copy(&env, &program, &shape, 8, "checked");
    // A tile line length that takes the last line past the 32-byte tile.
    let kernel = check(cl(Kernel::create(&program, "copy_2d")), "clCreateKernel");
    let src = env.buffer(&random_bytes(256, 1));
    let dst = env.buffer_filled(256, 0u8);
    let tile_out = env.buffer_filled(64, 0u8);
    arg_buf(&kernel, 0, &src);
    arg_buf(&kernel, 1, &dst);
    arg_local(&kernel, 2, 32);
    arg_buf(&kernel, 3, &tile_out);
    // elem, per_line, lines, src (off, line), tile (off, line), dst (off, line), tile_bytes,
    // group_elems
    for (i, a) in [1u64, 8, 3, 0, 8, 0, 14, 0, 8, 32, 64].iter().enumerate() {
        arg(&kernel, 4 + i as cl_uint, a);
    }
    let global = 16usize;
    let local = 8usize;
    // SAFETY: the sizes outlive the call; the arguments are set above.
    let r = unsafe {
        env.queue
            .enqueue_nd_range_kernel(kernel.get(), 1, ptr::null(), &global, &local, &[])
    };
    let event = check(cl(r), "clEnqueueNDRangeKernel");
    check(cl(env.queue.finish()), "clFinish");
    let status = check(
        cl(event.command_execution_status()),
        "CL_EVENT_COMMAND_EXECUTION_STATUS",
    );
    assert_eq!(status.0, CL_OUT_OF_RESOURCES);
}

/// `text` assembled with spirv-as for `target`.
fn assemble(name: &str, text: &str, target: &str) -> Vec<u8> {
    let dir = profile_dir().join("ferrocl-test-spirv");
    std::fs::create_dir_all(&dir).unwrap();
    // Tests run in parallel and two assemble the same text: each call has files of its own.
    static CALLS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let call = CALLS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let asm = dir.join(format!("{name}.{}.{call}.spvasm", std::process::id()));
    let spv = asm.with_extension("spv");
    std::fs::write(&asm, text).unwrap();
    let st = std::process::Command::new("spirv-as")
        .args(["--target-env", target, "-o"])
        .arg(&spv)
        .arg(&asm)
        .status()
        .expect("spirv-as (spirv-tools) is installed");
    assert!(st.success(), "spirv-as {name}");
    let il = std::fs::read(&spv).unwrap();
    let _ = std::fs::remove_file(&asm);
    let _ = std::fs::remove_file(&spv);
    il
}

/// Builds IL: the program, or the error code and the build log.
fn build_il(env: &Env, il: &[u8]) -> Result<Program, (cl_int, String)> {
    let program = check(
        cl(Program::create_from_il(&env.context, il)),
        "clCreateProgramWithIL",
    );
    let options = CString::new("").unwrap();
    match opencl3::program::build_program(
        program.get(),
        env.context.devices(),
        &options,
        None,
        ptr::null_mut(),
    ) {
        Ok(()) => Ok(program),
        Err(code) => Err((
            code,
            program.get_build_log(env.device.id()).unwrap_or_default(),
        )),
    }
}

/// An import with the 2D copy's name whose type is not the built-in's: the build fails and
/// the log says why.
const WRONG_IMPORT: &str = r#"
OpCapability Addresses
OpCapability Linkage
OpCapability Kernel
OpCapability Int64
OpCapability Int8
OpMemoryModel Physical64 OpenCL
OpEntryPoint Kernel %k "k"
OpDecorate %copy LinkageAttributes "_Z26async_work_group_copy_2D2DPU3AS3vmPU3AS1Kvmmmmmm9ocl_event" Import
%void = OpTypeVoid
%ulong = OpTypeInt 64 0
%uchar = OpTypeInt 8 0
%event = OpTypeEvent
%lptr = OpTypePointer Workgroup %uchar
%gptr = OpTypePointer CrossWorkgroup %uchar
%copy_t = OpTypeFunction %event %lptr %gptr %event
%k_t = OpTypeFunction %void %gptr %lptr
%null = OpConstantNull %event
%copy = OpFunction %event None %copy_t
%a = OpFunctionParameter %lptr
%b = OpFunctionParameter %gptr
%c = OpFunctionParameter %event
OpFunctionEnd
%k = OpFunction %void None %k_t
%src = OpFunctionParameter %gptr
%tile = OpFunctionParameter %lptr
%entry = OpLabel
%e = OpFunctionCall %event %copy %tile %src %null
OpReturn
OpFunctionEnd
"#;

#[test]
fn a_wrong_extended_async_copy_import_is_refused() {
    let env = Env::new();
    if env.other_icd {
        return;
    }
    let il = assemble("wrong_async_import", WRONG_IMPORT, "spv1.0");
    let (code, log) = build_il(&env, &il).expect_err("the module builds");
    assert_eq!(code, CL_BUILD_PROGRAM_FAILURE);
    assert!(
        log.contains("async_work_group_copy_2D2D") && log.contains("takes 10 arguments"),
        "{log}"
    );
}

// ---- cl_intel_subgroups, cl_intel_required_subgroup_size, cl_intel_spirv_subgroups ----

const INTEL: &str = "cl_intel_subgroups";

/// The device's one sub-group size.
const SUB_GROUP: usize = 4;

#[test]
fn intel_subgroups_are_reported() {
    let env = Env::new();
    if env.other_icd {
        return;
    }
    for name in [
        INTEL,
        "cl_intel_required_subgroup_size",
        "cl_intel_spirv_subgroups",
    ] {
        assert!(env.has_extension(name), "{name}");
        assert_eq!(extension_version(&env, name), Some(VERSION_1_0_0), "{name}");
    }
    let id = env.device.id();
    let sizes: Vec<usize> = opencl3::device::get_device_data(id, CL_DEVICE_SUB_GROUP_SIZES_INTEL)
        .expect("CL_DEVICE_SUB_GROUP_SIZES_INTEL")
        .chunks_exact(std::mem::size_of::<usize>())
        .map(|c| usize::from_ne_bytes(c.try_into().unwrap()))
        .collect();
    assert_eq!(sizes, [4, 8, 16, 32]);
    let caps: Vec<u32> = opencl3::device::get_device_data(id, CL_DEVICE_SPIRV_CAPABILITIES_KHR)
        .expect("CL_DEVICE_SPIRV_CAPABILITIES_KHR")
        .chunks_exact(4)
        .map(|c| u32::from_ne_bytes(c.try_into().unwrap()))
        .collect();
    // SubgroupShuffleINTEL, SubgroupBufferBlockIOINTEL, SubgroupImageBlockIOINTEL.
    for cap in [5568, 5569, 5570] {
        assert!(caps.contains(&cap), "capability {cap} in {caps:?}");
    }
}

/// Runs `shuffles_<name>` on `n` work-items in groups of `local`, elements of `width` values
/// (a scalar is 1, float3 is 3) of `bytes` bytes each, and checks every result whose source
/// lane exists against the host: the bytes of the source work-item's element.
fn check_shuffles(
    env: &Env,
    program: &Program,
    name: &str,
    (width, bytes): (usize, usize),
    local: usize,
    what: &str,
) {
    let groups = 3;
    let n = groups * local;
    let stride = if width == 3 { 3 } else { width } * bytes;
    let x = random_bytes(n * stride, 11 + local as u64);
    let y = random_bytes(n * stride, 23 + local as u64);
    let max = SUB_GROUP.min(local);
    let mut rng = Rng::new(local as u64);
    // Operands mostly in range (0..max), some past it (undefined results, not checked).
    let c: Vec<u32> = (0..n).map(|_| rng.next_u32() % (max as u32 + 1)).collect();
    let kernel = check(
        cl(Kernel::create(program, &format!("shuffles_{name}"))),
        "clCreateKernel",
    );
    let xb = env.buffer(&x);
    let yb = env.buffer(&y);
    let cb = env.buffer(&c);
    let out = env.buffer_filled(4 * n * stride, 0u8);
    arg_buf(&kernel, 0, &xb);
    arg_buf(&kernel, 1, &yb);
    arg_buf(&kernel, 2, &cb);
    arg_buf(&kernel, 3, &out);
    env.run(&kernel, &[n], Some(&[local]), None);
    let got = env.read(&out, 4 * n * stride);
    let mut checked = 0;
    for (i, &k) in c.iter().enumerate() {
        let in_group = i % local;
        let first = i - in_group % SUB_GROUP;
        let lane = in_group % SUB_GROUP;
        let count = SUB_GROUP.min(local - (in_group - lane));
        for op in 0..4 {
            let Some((src, which)) = shuffle_source(op, lane, k as usize, max) else {
                continue;
            };
            if src >= count {
                continue;
            }
            let data = if which == 0 { &x } else { &y };
            let from = (first + src) * stride;
            let at = (4 * i + op) * stride;
            let len = width * bytes;
            assert_eq!(
                &got[at..at + len],
                &data[from..from + len],
                "{what}: shuffles_{name}, local {local}, work-item {i}, op {op}, operand {}",
                k
            );
            checked += 1;
        }
    }
    assert!(checked > n, "{what}: too few results in range ({checked})");
}

const SHUFFLE_TYPES: [(&str, (usize, usize)); 16] = [
    ("int", (1, 4)),
    ("uint", (1, 4)),
    ("long", (1, 8)),
    ("ulong", (1, 8)),
    ("float", (1, 4)),
    ("float2", (2, 4)),
    ("float3", (3, 4)),
    ("float4", (4, 4)),
    ("float8", (8, 4)),
    ("float16", (16, 4)),
    ("int2", (2, 4)),
    ("int4", (4, 4)),
    ("uint8", (8, 4)),
    ("int16", (16, 4)),
    ("double", (1, 8)),
    ("half", (1, 2)),
];

fn check_all_shuffles(env: &Env, program: &Program, what: &str) {
    for (name, shape) in SHUFFLE_TYPES {
        // Whole sub-groups, a short last one, and groups smaller than a sub-group (the
        // largest sub-group size, which up and down count in, is then the group's size).
        for local in [1, 3, 4, 6, 16] {
            check_shuffles(env, program, name, shape, local, what);
        }
    }
}

/// Runs `block_io` over `subs` sub-groups and checks every uint of `out` against the host.
fn check_block_io(env: &Env, program: &Program, local: usize, what: &str) {
    let groups = 2;
    let n = groups * local;
    let subs = n / SUB_GROUP;
    let mut rng = Rng::new(77);
    let input: Vec<u32> = (0..60 * subs).map(|_| rng.next_u32()).collect();
    let kernel = check(cl(Kernel::create(program, "block_io")), "clCreateKernel");
    let ib = env.buffer(&input);
    let ob = env.buffer_filled(60 * subs, 0u32);
    arg_buf(&kernel, 0, &ib);
    arg_buf(&kernel, 1, &ob);
    env.run(&kernel, &[n], Some(&[local]), None);
    let got = env.read(&ob, 60 * subs);
    // Component k of lane l of a block of `w` components at `start` is element
    // start + l + 4 k, read and written in the same place: the output is the input plus
    // the width of the block each element belongs to.
    let mut want = vec![0u32; 60 * subs];
    for s in 0..subs {
        for (start, w) in [(0, 1u32), (4, 2), (12, 4), (28, 8)] {
            for e in 0..4 * w as usize {
                let at = 60 * s + start + e;
                want[at] = input[at].wrapping_add(w);
            }
        }
    }
    assert_eq!(got, want, "{what}: block_io, local {local}");
}

fn intel_program_checks(env: &Env, program: &Program, what: &str) {
    check_all_shuffles(env, program, what);
    for local in [4, 8, 16] {
        check_block_io(env, program, local, what);
    }
    let kernel = check(
        cl(Kernel::create(program, "required_size")),
        "clCreateKernel",
    );
    let out = env.buffer_filled(12, 0u32);
    arg_buf(&kernel, 0, &out);
    env.run(&kernel, &[12], Some(&[6]), None);
    let want: Vec<u32> = (0..12u32).map(|i| 400 + (i % 6) % 4).collect();
    assert_eq!(env.read(&out, 12), want, "{what}: required_size");
}

#[test]
fn intel_subgroups_from_the_driver() {
    let env = Env::new();
    if !env.extension_or_skip(INTEL) {
        return;
    }
    let source = std::fs::read_to_string(kernel_source("intel_subgroups")).unwrap();
    for std in ["-cl-std=CL1.2", "-cl-std=CL3.0"] {
        let program = env.program_from_source(&source, std);
        intel_program_checks(&env, &program, std);
    }
}

#[test]
fn intel_subgroups_from_spirv() {
    let env = Env::new();
    if !env.extension_or_skip(INTEL) {
        return;
    }
    let language = ["-cl-std=CL1.2"];
    for opt in OPTS {
        let program = env.program_in("intel_subgroups", opt, &language);
        intel_program_checks(&env, &program, &format!("{opt:?}"));
    }
    if env.other_icd {
        return;
    }
    // The module uses the SPV_INTEL_subgroups instructions, as SYCL and HIP compilers emit.
    let il = spirv("intel_subgroups", Opt::Optimised);
    let ops = opcodes(&il);
    // OpSubgroupShuffle{,Down,Up,Xor}INTEL, OpSubgroupBlock{Read,Write}INTEL.
    for op in 5571..=5576 {
        assert!(ops.contains(&op), "no opcode {op} in the module");
    }
}

/// The opcodes of a SPIR-V module's instructions.
fn opcodes(il: &[u8]) -> std::collections::HashSet<u32> {
    let words: Vec<u32> = il
        .chunks_exact(4)
        .map(|c| u32::from_le_bytes(c.try_into().unwrap()))
        .collect();
    let mut ops = std::collections::HashSet::new();
    let mut at = 5;
    while at < words.len() {
        let count = (words[at] >> 16) as usize;
        ops.insert(words[at] & 0xffff);
        at += count.max(1);
    }
    ops
}

fn kernel_work_group_ulong(kernel: &Kernel, env: &Env, param: u32) -> Result<u64, cl_int> {
    let mut value = 0u64;
    // SAFETY: room for one cl_ulong.
    let r = unsafe {
        clGetKernelWorkGroupInfo(
            kernel.get(),
            env.device.id(),
            param,
            8,
            (&mut value as *mut u64).cast(),
            ptr::null_mut(),
        )
    };
    if r == CL_SUCCESS {
        Ok(value)
    } else {
        Err(r)
    }
}

fn compile_sub_group_size(kernel: &Kernel, env: &Env) -> usize {
    let mut value = usize::MAX;
    // SAFETY: room for one size_t; the query takes no input.
    let r = unsafe {
        clGetKernelSubGroupInfo(
            kernel.get(),
            env.device.id(),
            CL_KERNEL_COMPILE_SUB_GROUP_SIZE_INTEL,
            0,
            ptr::null(),
            std::mem::size_of::<usize>(),
            (&mut value as *mut usize).cast(),
            ptr::null_mut(),
        )
    };
    assert_eq!(r, CL_SUCCESS, "CL_KERNEL_COMPILE_SUB_GROUP_SIZE_INTEL");
    value
}

/// 48 accumulators live across a loop: more than x86-64's 16 vector registers hold.
const PRESSURE: &str = "
kernel void pressure(global float *p, int n) {
    float a[48];
    for (int j = 0; j < 48; j++) a[j] = p[j];
    for (int i = 0; i < n; i++)
        for (int j = 0; j < 48; j++) a[j] = a[j] * a[(j + 7) % 48] + p[i + j];
    float s = 0.0f;
    for (int j = 0; j < 48; j++) s += a[j] * (j + 1);
    p[get_global_id(0)] = s;
}
kernel void small(global int *p) { p[get_global_id(0)] = 1; }
";

#[test]
fn intel_kernel_queries() {
    let env = Env::new();
    if env.other_icd || !env.extension_or_skip(INTEL) {
        return;
    }
    let source = std::fs::read_to_string(kernel_source("intel_subgroups")).unwrap();
    let program = env.program_from_source(&source, "-cl-std=CL3.0");
    let required = check(
        cl(Kernel::create(&program, "required_size")),
        "clCreateKernel",
    );
    let plain = check(cl(Kernel::create(&program, "block_io")), "clCreateKernel");
    assert_eq!(compile_sub_group_size(&required, &env), SUB_GROUP);
    assert_eq!(compile_sub_group_size(&plain, &env), 0);
    let program = env.program_from_source(PRESSURE, "-cl-std=CL1.2");
    let pressure = check(cl(Kernel::create(&program, "pressure")), "clCreateKernel");
    let spilled = kernel_work_group_ulong(&pressure, &env, CL_KERNEL_SPILL_MEM_SIZE_INTEL)
        .expect("CL_KERNEL_SPILL_MEM_SIZE_INTEL");
    assert!(spilled > 0, "48 live floats fit in registers?");
    let small = check(cl(Kernel::create(&program, "small")), "clCreateKernel");
    let little = kernel_work_group_ulong(&small, &env, CL_KERNEL_SPILL_MEM_SIZE_INTEL)
        .expect("CL_KERNEL_SPILL_MEM_SIZE_INTEL");
    assert!(little < spilled, "{little} >= {spilled}");
}

/// A kernel requiring sub-groups of `size`: each work-item stores its sub-group size, the
/// largest sub-group size, its lane, its sub-group's sum of lanes (a reduction), its right
/// neighbour's lane (a shuffle) and its sub-group id.
fn sized_kernel(size: usize) -> String {
    format!(
        "__attribute__((intel_reqd_sub_group_size({size})))\n\
         kernel void k(global uint *p) {{\n\
             uint i = get_global_id(0), l = get_sub_group_local_id();\n\
             p[6 * i] = get_sub_group_size();\n\
             p[6 * i + 1] = get_max_sub_group_size();\n\
             p[6 * i + 2] = l;\n\
             p[6 * i + 3] = sub_group_reduce_add(l);\n\
             p[6 * i + 4] = intel_sub_group_shuffle(l, (l + 1) % get_sub_group_size());\n\
             p[6 * i + 5] = get_sub_group_id();\n\
         }}"
    )
}

#[test]
fn required_sub_group_sizes_run_at_that_size() {
    let env = Env::new();
    if env.other_icd || !env.extension_or_skip(INTEL) {
        return;
    }
    // 40 work-items in one group: full sub-groups and a short last one at every size.
    let n = 40;
    for size in [4, 8, 16, 32] {
        let program = env.program_from_source(&sized_kernel(size), "-cl-std=CL3.0");
        let kernel = check(cl(Kernel::create(&program, "k")), "clCreateKernel");
        assert_eq!(compile_sub_group_size(&kernel, &env), size);
        let out = env.buffer_filled(6 * n, u32::MAX);
        arg_buf(&kernel, 0, &out);
        env.run(&kernel, &[n], Some(&[n]), None);
        let got = env.read(&out, 6 * n);
        for i in 0..n {
            let (first, lane) = (i / size * size, i % size);
            let count = size.min(n - first);
            let want = [
                count,
                size,
                lane,
                count * (count - 1) / 2,
                (lane + 1) % count,
                i / size,
            ]
            .map(|x| x as u32);
            assert_eq!(got[6 * i..6 * i + 6], want, "size {size}, work-item {i}");
        }
    }
}

#[test]
fn other_required_sub_group_sizes_fail_the_build() {
    let env = Env::new();
    if env.other_icd || !env.extension_or_skip(INTEL) {
        return;
    }
    for size in [1, 2, 64] {
        let log = env
            .try_program_from_source(&sized_kernel(size), "-cl-std=CL3.0")
            .expect_err("a sub-group size the device lacks builds");
        assert!(
            log.contains(&format!("requires sub-groups of {size} work-items")),
            "{log}"
        );
    }
}

const IMAGE_BLOCKS: &str = "
kernel void image_block(read_only image2d_t src, write_only image2d_t dst, int x, int y,
                        global uint *out) {
    uint l = get_sub_group_local_id();
    uint2 v = intel_sub_group_block_read2(src, (int2)(x, y));
    uint w = intel_sub_group_block_read(src, (int2)(x, y));
    out[3 * l] = v.x;
    out[3 * l + 1] = v.y;
    out[3 * l + 2] = w;
    intel_sub_group_block_write2(dst, (int2)(x, y), ~v);
}
";

/// A 2D image of `width` × `height` texels of `esz` bytes (CL_UNSIGNED_INT8 channels: CL_R
/// for 1 byte, CL_RGBA for 4) holding `bytes`, tightly packed.
fn image_2d(
    env: &Env,
    flags: cl_mem_flags,
    esz: usize,
    width: usize,
    height: usize,
    bytes: &mut [u8],
) -> cl_mem {
    let format = cl_image_format {
        image_channel_order: if esz == 1 { CL_R } else { CL_RGBA },
        image_channel_data_type: CL_UNSIGNED_INT8,
    };
    let desc = cl_image_desc {
        image_type: CL_MEM_OBJECT_IMAGE2D,
        image_width: width,
        image_height: height,
        image_depth: 0,
        image_array_size: 0,
        image_row_pitch: 0,
        image_slice_pitch: 0,
        num_mip_levels: 0,
        num_samples: 0,
        buffer: ptr::null_mut(),
    };
    // `bytes` covers the image and is copied during the call.
    create(
        env,
        flags | CL_MEM_COPY_HOST_PTR,
        &format,
        &desc,
        bytes.as_mut_ptr().cast(),
    )
    .expect("clCreateImage")
}

/// Image block reads and writes against the host: a read is the raw uint at byte
/// `x + 4 lane` of row `y + k`, the row clamped into the image and the uint into the row (a
/// row narrower than a uint: each byte clamped); a write outside the image is dropped.
#[test]
fn intel_image_block_reads_and_writes() {
    if rerun_in_child(
        "intel_image_block_reads_and_writes",
        &[("FERROCL_IMAGES", "on")],
    )
    .is_some()
    {
        return;
    }
    let env = Env::new();
    if env.other_icd || !env.extension_or_skip(INTEL) {
        return;
    }
    let program = env.program_from_source(IMAGE_BLOCKS, "-cl-std=CL1.2");
    // (texel bytes, width, height, coordinates)
    type Case<'a> = (usize, usize, usize, &'a [(i32, i32)]);
    let cases: [Case; 2] = [
        // RGBA8, 8 × 5 texels: rows of 32 bytes.
        (
            4,
            8,
            5,
            &[(0, 0), (4, 3), (20, 4), (-4, 0), (8, -1), (30, 2)],
        ),
        // R8, 3 × 2 texels: rows of 3 bytes, narrower than a uint.
        (1, 3, 2, &[(0, 0), (1, 1), (-2, 0)]),
    ];
    for (esz, width, height, coords) in cases {
        let row = esz * width;
        let mut src = random_bytes(row * height, esz as u64);
        let src_img = image_2d(&env, CL_MEM_READ_ONLY, esz, width, height, &mut src);
        for &(x, y) in coords {
            let mut zeros = vec![0u8; row * height];
            let dst_img = image_2d(&env, CL_MEM_WRITE_ONLY, esz, width, height, &mut zeros);
            let kernel = check(
                cl(Kernel::create(&program, "image_block")),
                "clCreateKernel",
            );
            arg(&kernel, 0, &src_img);
            arg(&kernel, 1, &dst_img);
            arg(&kernel, 2, &x);
            arg(&kernel, 3, &y);
            let out = env.buffer_filled(12, 0u32);
            arg_buf(&kernel, 4, &out);
            env.run(&kernel, &[SUB_GROUP], Some(&[SUB_GROUP]), None);
            let got = env.read(&out, 12);
            let mut got_dst = vec![0u8; row * height];
            let region = [width, height, 1];
            check(
                read_into(&env, dst_img, [0; 3], region, 0, 0, &mut got_dst),
                "clEnqueueReadImage",
            );
            let mut want_dst = vec![0u8; row * height];
            let read = |bx: i64, r: i64| -> u32 {
                let r = r.clamp(0, height as i64 - 1) as usize;
                let line = &src[r * row..(r + 1) * row];
                if row >= 4 {
                    let at = bx.clamp(0, row as i64 - 4) as usize;
                    u32::from_le_bytes(line[at..at + 4].try_into().unwrap())
                } else {
                    (0..4).fold(0u32, |v, j| {
                        let at = (bx + j).clamp(0, row as i64 - 1) as usize;
                        v | u32::from(line[at]) << (8 * j)
                    })
                }
            };
            for lane in 0..SUB_GROUP {
                let bx = i64::from(x) + 4 * lane as i64;
                let v = [read(bx, i64::from(y)), read(bx, i64::from(y) + 1)];
                let what = format!("esz {esz}, ({x}, {y}), lane {lane}");
                assert_eq!(got[3 * lane], v[0], "{what}: row 0");
                assert_eq!(got[3 * lane + 1], v[1], "{what}: row 1");
                assert_eq!(got[3 * lane + 2], v[0], "{what}: block_read");
                for (k, value) in v.iter().enumerate() {
                    let r = i64::from(y) + k as i64;
                    if bx >= 0 && bx + 4 <= row as i64 && (0..height as i64).contains(&r) {
                        let at = r as usize * row + bx as usize;
                        want_dst[at..at + 4].copy_from_slice(&(!value).to_le_bytes());
                    }
                }
            }
            assert_eq!(
                got_dst, want_dst,
                "esz {esz}, ({x}, {y}): the written image"
            );
            release(dst_img);
        }
        release(src_img);
    }
}

/// With `FERROCL_SUBGROUPS=off` the Intel extensions and named barriers are gone: not
/// reported, the sub-group sizes empty, the spill query refused, the named barrier count 0,
/// modules with the Intel or named-barrier capabilities refused with a log naming them, and
/// the Intel built-ins undeclared in OpenCL C.
#[test]
fn intel_subgroups_follow_the_sub_group_switch() {
    if rerun_in_child(
        "intel_subgroups_follow_the_sub_group_switch",
        &[("FERROCL_SUBGROUPS", "off")],
    )
    .is_some()
    {
        return;
    }
    let env = Env::new();
    if env.other_icd {
        return;
    }
    for name in [
        INTEL,
        "cl_intel_required_subgroup_size",
        "cl_intel_spirv_subgroups",
    ] {
        assert!(!env.has_extension(name), "{name}");
        assert_eq!(extension_version(&env, name), None, "{name}");
    }
    let sizes = opencl3::device::get_device_data(env.device.id(), CL_DEVICE_SUB_GROUP_SIZES_INTEL)
        .expect("CL_DEVICE_SUB_GROUP_SIZES_INTEL");
    assert!(sizes.is_empty(), "{sizes:?}");
    let program = env.program_from_source(PRESSURE, "-cl-std=CL1.2");
    let small = check(cl(Kernel::create(&program, "small")), "clCreateKernel");
    assert_eq!(
        kernel_work_group_ulong(&small, &env, CL_KERNEL_SPILL_MEM_SIZE_INTEL),
        Err(CL_INVALID_VALUE)
    );
    let il = spirv("intel_subgroups", Opt::Optimised);
    let (code, log) = build_il(&env, &il).expect_err("the module builds");
    assert_eq!(code, CL_BUILD_PROGRAM_FAILURE);
    assert!(log.contains("INTEL"), "{log}");
    // Named barriers go with them.
    assert!(!env.has_extension(NAMED));
    let count =
        opencl3::device::get_device_data(env.device.id(), CL_DEVICE_MAX_NAMED_BARRIER_COUNT_KHR)
            .expect("CL_DEVICE_MAX_NAMED_BARRIER_COUNT_KHR");
    assert_eq!(count, 0u32.to_ne_bytes());
    let il = assemble("named_barriers", &named_barriers_spvasm(), "spv1.1");
    let (_, log) = build_il(&env, &il).expect_err("named barriers build");
    assert!(log.contains("NamedBarrier"), "{log}");
    let source = std::fs::read_to_string(kernel_source("intel_subgroups")).unwrap();
    let log = env
        .try_program_from_source(&source, "-cl-std=CL1.2")
        .expect_err("OpenCL C with the Intel built-ins builds without sub-groups");
    assert!(log.contains("cl_intel_subgroups is not defined"), "{log}");
}

// ---- cl_khr_subgroup_named_barrier ----

const NAMED: &str = "cl_khr_subgroup_named_barrier";

fn named_barriers_spvasm() -> String {
    let path =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/named_barriers.spvasm");
    std::fs::read_to_string(path).unwrap()
}

#[test]
fn named_barriers_are_reported() {
    let env = Env::new();
    if env.other_icd {
        return;
    }
    assert!(env.has_extension(NAMED));
    assert_eq!(extension_version(&env, NAMED), Some(VERSION_1_0_0));
    let id = env.device.id();
    let count = opencl3::device::get_device_data(id, CL_DEVICE_MAX_NAMED_BARRIER_COUNT_KHR)
        .expect("CL_DEVICE_MAX_NAMED_BARRIER_COUNT_KHR");
    // At least the 8 the extension requires; 64 named barrier initialisations per module.
    assert_eq!(count, 64u32.to_ne_bytes());
    let caps: Vec<u32> = opencl3::device::get_device_data(id, CL_DEVICE_SPIRV_CAPABILITIES_KHR)
        .expect("CL_DEVICE_SPIRV_CAPABILITIES_KHR")
        .chunks_exact(4)
        .map(|c| u32::from_ne_bytes(c.try_into().unwrap()))
        .collect();
    assert!(caps.contains(&59), "NamedBarrier in {caps:?}");
}

/// Two pairs of sub-groups, each synchronised by its own named barrier for its own number of
/// iterations, exchanging values through local memory: every value read is the partner's of
/// the same iteration.
#[test]
fn named_barriers_synchronise_their_sub_groups() {
    let env = Env::new();
    if env.other_icd || !env.extension_or_skip(NAMED) {
        return;
    }
    let il = assemble("named_barriers", &named_barriers_spvasm(), "spv1.1");
    let program = build_il(&env, &il).unwrap_or_else(|(code, log)| panic!("{code}: {log}"));
    let kernel = check(cl(Kernel::create(&program, "pairs")), "clCreateKernel");
    for (n0, n1) in [(3u32, 5u32), (0, 4), (6, 1), (2, 2)] {
        let groups = 3;
        let out = env.buffer_filled(16 * groups, u32::MAX);
        arg_buf(&kernel, 0, &out);
        arg(&kernel, 1, &n0);
        arg(&kernel, 2, &n1);
        env.run(&kernel, &[16 * groups], Some(&[16]), None);
        let want: Vec<u32> = (0..16 * groups as u32)
            .map(|gid| {
                let lid = gid % 16;
                let iters = if lid / 4 < 2 { n0 } else { n1 };
                (0..iters).map(|i| 100 * i + (lid ^ 4)).sum()
            })
            .collect();
        assert_eq!(env.read(&out, 16 * groups), want, "n0 {n0}, n1 {n1}");
    }
}

#[test]
fn named_barrier_modules_are_checked() {
    let env = Env::new();
    if env.other_icd || !env.extension_or_skip(NAMED) {
        return;
    }
    let text = named_barriers_spvasm();
    // NamedBarrier is a SPIR-V 1.1 capability.
    let mut il = assemble("named_barriers", &text, "spv1.1");
    il[4..8].copy_from_slice(&0x0001_0000u32.to_le_bytes());
    let (_, log) = build_il(&env, &il).expect_err("a SPIR-V 1.0 module builds");
    assert!(log.contains("NamedBarrier requires SPIR-V 1.1"), "{log}");
    // 65 named barriers: one more than CL_DEVICE_MAX_NAMED_BARRIER_COUNT_KHR.
    let extra: String = (0..63)
        .map(|i| format!("%extra{i} = OpNamedBarrierInitialize %nb %uint_2\n"))
        .collect();
    let many = text.replacen(
        "          %b = OpNamedBarrierInitialize %nb %uint_2\n",
        &format!("          %b = OpNamedBarrierInitialize %nb %uint_2\n{extra}"),
        1,
    );
    let il = assemble("named_barriers_65", &many, "spv1.1");
    let (code, log) = build_il(&env, &il).expect_err("65 named barriers build");
    assert_eq!(code, CL_BUILD_PROGRAM_FAILURE);
    assert!(log.contains("initialises 65 named barriers"), "{log}");
}

/// A named barrier counting more sub-groups than ever wait on it is undefined behaviour; the
/// launch still ends (a round that lets nobody through opens every gate), and the queue goes
/// on.
#[test]
fn an_unreachable_named_barrier_count_does_not_hang() {
    let env = Env::new();
    if env.other_icd || !env.extension_or_skip(NAMED) {
        return;
    }
    let text = named_barriers_spvasm().replacen(
        "%a = OpNamedBarrierInitialize %nb %uint_2",
        "%a = OpNamedBarrierInitialize %nb %uint_3",
        1,
    );
    let il = assemble("named_barriers_3", &text, "spv1.1");
    let program = build_il(&env, &il).unwrap_or_else(|(code, log)| panic!("{code}: {log}"));
    let kernel = check(cl(Kernel::create(&program, "pairs")), "clCreateKernel");
    let out = env.buffer_filled(16, u32::MAX);
    arg_buf(&kernel, 0, &out);
    arg(&kernel, 1, &2u32);
    arg(&kernel, 2, &3u32);
    env.run(&kernel, &[16], Some(&[16]), None);
    // Sub-groups 2 and 3 have a barrier of their own and compute what they always do.
    let got = env.read(&out, 16);
    for lid in 8..16u32 {
        let want: u32 = (0..3).map(|i| 100 * i + (lid ^ 4)).sum();
        assert_eq!(got[lid as usize], want, "work-item {lid}");
    }
}

// ---- cl_khr_async_work_group_copy_fence ----

const FENCE: &str = "cl_khr_async_work_group_copy_fence";

/// An export of a local tile and an import over the same tile, ordered by the fence (the
/// CTS's aliased-local case): the export must see the tile before the import overwrites it.
const FENCE_SOURCE: &str = r#"
#pragma OPENCL EXTENSION cl_khr_async_work_group_copy_fence : enable
#ifndef cl_khr_async_work_group_copy_fence
#error cl_khr_async_work_group_copy_fence is not defined
#endif
kernel void export_then_import(global const int *src, global int *exported,
                               global int *imported, local int *tile) {
    size_t n = get_local_size(0);
    size_t base = get_group_id(0) * n;
    tile[get_local_id(0)] = src[base + get_local_id(0)] * 2;
    barrier(CLK_LOCAL_MEM_FENCE);
    event_t e = async_work_group_copy(exported + base, tile, n, 0);
    async_work_group_copy_fence(CLK_LOCAL_MEM_FENCE);
    e = async_work_group_copy(tile, src + base, n, e);
    wait_group_events(1, &e);
    imported[base + get_local_id(0)] = tile[get_local_id(0)];
}
"#;

#[test]
fn async_copy_fence_is_reported() {
    let env = Env::new();
    if env.other_icd {
        return;
    }
    assert!(env.has_extension(FENCE));
    assert_eq!(extension_version(&env, FENCE), Some(VERSION_1_0_0));
}

#[test]
fn async_copies_on_either_side_of_a_fence_keep_their_order() {
    let env = Env::new();
    if !env.extension_or_skip(FENCE) {
        return;
    }
    for std in [
        "-cl-std=CL1.2",
        "-cl-std=CL3.0",
        "-cl-std=CL3.0 -cl-opt-disable",
    ] {
        let program = env.program_from_source(FENCE_SOURCE, std);
        let kernel = check(
            cl(Kernel::create(&program, "export_then_import")),
            "clCreateKernel",
        );
        let src: Vec<i32> = (0..256).map(|i| i * 3 + 1).collect();
        let src_buf = env.buffer(&src);
        let exported = env.buffer_filled(256, 0i32);
        let imported = env.buffer_filled(256, 0i32);
        arg_buf(&kernel, 0, &src_buf);
        arg_buf(&kernel, 1, &exported);
        arg_buf(&kernel, 2, &imported);
        arg_local(&kernel, 3, 64 * 4);
        env.run(&kernel, &[256], Some(&[64]), None);
        let doubled: Vec<i32> = src.iter().map(|v| v * 2).collect();
        assert_eq!(env.read(&exported, 256), doubled, "{std}");
        assert_eq!(env.read(&imported, 256), src, "{std}");
    }
}

const DEBUG_INFO: &str = "cl_khr_spirv_extended_debug_info";

#[test]
fn modules_with_opencl_debug_info_build_and_run() {
    let env = Env::new();
    if !env.extension_or_skip(DEBUG_INFO) {
        return;
    }
    assert_eq!(extension_version(&env, DEBUG_INFO), Some(VERSION_1_0_0));
    let sets = cl3::device::get_device_data(
        env.device.id(),
        CL_DEVICE_SPIRV_EXTENDED_INSTRUCTION_SETS_KHR,
    )
    .expect("CL_DEVICE_SPIRV_EXTENDED_INSTRUCTION_SETS_KHR");
    // An array of char pointers into the driver's own strings.
    let names: Vec<String> = sets
        .chunks_exact(8)
        .map(|c| {
            let p = usize::from_ne_bytes(c.try_into().unwrap()) as *const std::ffi::c_char;
            // SAFETY: the query returns pointers to NUL-terminated strings the driver keeps.
            unsafe { std::ffi::CStr::from_ptr(p) }
                .to_string_lossy()
                .into_owned()
        })
        .collect();
    assert!(
        names.iter().any(|n| n == "OpenCL.DebugInfo.100"),
        "{names:?}"
    );

    // llvm-spirv's default debug-info format: DebugSource, DebugCompilationUnit,
    // DebugFunction, DebugLocalVariable, DebugScope... throughout.
    let source = std::fs::read_to_string(kernel_source("saxpy")).expect("saxpy.cl");
    let il = plain_spirv(&source, &["-cl-std=CL1.2", "-g"]);
    let needle = b"OpenCL.DebugInfo.100";
    assert!(
        il.windows(needle.len()).any(|w| w == needle),
        "llvm-spirv-15 no longer imports OpenCL.DebugInfo.100 for -g"
    );
    let program = env.program_from_il(&il, "");
    let kernel = check(
        cl(opencl3::kernel::Kernel::create(&program, "saxpy")),
        "clCreateKernel",
    );
    let x: Vec<f32> = (0..64).map(|i| i as f32).collect();
    let y: Vec<f32> = (0..64).map(|i| 1.0 - i as f32 * 0.5).collect();
    let (bx, by) = (env.buffer(&x), env.buffer(&y));
    arg(&kernel, 0, &2.0f32);
    arg_buf(&kernel, 1, &bx);
    arg_buf(&kernel, 2, &by);
    env.run(&kernel, &[64], None, None);
    let got = env.read(&by, 64);
    for i in 0..64 {
        // Small integers and halves: exact with or without a fused multiply-add.
        assert_eq!(got[i], 2.0 * x[i] + y[i], "element {i}");
    }
}

#[test]
fn the_platform_says_it_cannot_be_unloaded() {
    let env = Env::new();
    if env.other_icd {
        return;
    }
    let platform_ext = check(cl(platform().extensions()), "CL_PLATFORM_EXTENSIONS");
    assert!(
        platform_ext
            .split_whitespace()
            .any(|e| e == "cl_khr_icd_unloadable"),
        "{platform_ext}"
    );
    let raw = cl3::platform::get_platform_data(platform().id(), CL_PLATFORM_UNLOADABLE_KHR)
        .expect("CL_PLATFORM_UNLOADABLE_KHR");
    assert_eq!(raw, CL_FALSE.to_ne_bytes());
}
