//! Small extensions applications query, through the loader, against host references:
//! - `cl_khr_extended_async_copies`: its entries in the extension queries; 2D and 3D copies
//!   (`async_work_group_copy_2D2D`/`_3D3D`) global → local → global over element sizes 1 to 16
//!   bytes, offsets, line lengths and plane areas, both directions, every line, plane and gap
//!   of the local tile and the destination checked byte for byte; shared events; typed
//!   pointers; a barrier-free (vectorised) kernel; OpenCL C 1.2 and 3.0 built by the driver
//!   and SPIR-V at both recipes; checked mode stopping a copy past its local tile; a module
//!   whose import has the built-in's name but not its parameters refused with a log.
//!   Against another ICD the tests run where it reports the extension.

mod common;

use std::ffi::CString;
use std::ptr;

use common::*;
use opencl3::types::cl_version;
use opencl_sys::*;

fn has_extension(env: &Env, name: &str) -> bool {
    let extensions = check(cl(env.device.extensions()), "CL_DEVICE_EXTENSIONS");
    extensions.split_whitespace().any(|e| e == name)
}

/// The version CL_DEVICE_EXTENSIONS_WITH_VERSION gives `name`, if listed.
fn extension_version(env: &Env, name: &str) -> Option<cl_version> {
    let with_version = check(
        cl(env.device.extensions_with_version()),
        "CL_DEVICE_EXTENSIONS_WITH_VERSION",
    );
    with_version.iter().find_map(|e| {
        let n: Vec<u8> = e
            .name
            .iter()
            .take_while(|&&c| c != 0)
            .map(|&c| c as u8)
            .collect();
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
    assert!(has_extension(&env, ASYNC));
    assert_eq!(extension_version(&env, ASYNC), Some(VERSION_1_0_0));
}

#[test]
fn extended_async_copies_from_the_driver() {
    let env = Env::new();
    if !has_extension(&env, ASYNC) {
        eprintln!("skipping: the device lacks {ASYNC}");
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
    if !has_extension(&env, ASYNC) {
        eprintln!("skipping: the device lacks {ASYNC}");
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
    if !has_extension(&env, ASYNC) {
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
    let dir = profile_dir().join("ferrocl-test-spirv");
    std::fs::create_dir_all(&dir).unwrap();
    let asm = dir.join(format!("wrong_async_import.{}.spvasm", std::process::id()));
    let spv = asm.with_extension("spv");
    std::fs::write(&asm, WRONG_IMPORT).unwrap();
    let st = std::process::Command::new("spirv-as")
        .args(["--target-env", "spv1.0", "-o"])
        .arg(&spv)
        .arg(&asm)
        .status()
        .expect("spirv-as (spirv-tools) is installed");
    assert!(st.success(), "spirv-as");
    let il = std::fs::read(&spv).unwrap();
    let _ = std::fs::remove_file(&asm);
    let _ = std::fs::remove_file(&spv);
    let program = check(
        cl(Program::create_from_il(&env.context, &il)),
        "clCreateProgramWithIL",
    );
    let options = CString::new("").unwrap();
    let built = opencl3::program::build_program(
        program.get(),
        env.context.devices(),
        &options,
        None,
        ptr::null_mut(),
    );
    assert_eq!(built, Err(CL_BUILD_PROGRAM_FAILURE));
    let log = program.get_build_log(env.device.id()).unwrap_or_default();
    assert!(
        log.contains("async_work_group_copy_2D2D") && log.contains("takes 10 arguments"),
        "{log}"
    );
}
