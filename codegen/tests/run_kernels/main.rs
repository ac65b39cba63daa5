//! Codegen end to end without the runtime: OpenCL C → SPIR-V (the driver's recipe, with and
//! without `-cl-opt-disable`) → frontend → JIT, then the work-group functions are called
//! directly for every group of an NDRange and results are checked against host references.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use ferrocl_codegen::{BarrierSchedule, BuildOptions, GroupInfo, Program, PRINTF_BUFFER_HEADER};
use ferrocl_frontend::{PrintfArg, PrintfConversion, PrintfPiece};

#[path = "../common/mod.rs"]
mod common;

mod barriers;
mod collectives;
mod compute;
mod conversions;
mod half;
mod math;
mod printf;
mod sub_groups;

use common::{compile, default_options, Language, Recipe, CL1_2};

fn out_dir() -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("codegen-spirv");
    std::fs::create_dir_all(&dir).expect("create temp dir");
    dir
}

fn run(cmd: &mut Command) {
    let out = cmd
        .output()
        .unwrap_or_else(|e| panic!("cannot run {cmd:?}: {e} (install spirv-tools)"));
    assert!(
        out.status.success(),
        "{cmd:?} failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn spirv(source: &str, recipe: Recipe) -> Vec<u8> {
    common::spirv_from_c(source, recipe, CL1_2)
}

/// OpenCL C 3.0 with the optional features these tests exercise.
const CL3_COLLECTIVES: Language = Language {
    options: "-cl-std=CL3.0",
    extensions: &[
        "__opencl_c_work_group_collective_functions",
        "__opencl_c_int64",
        "cl_khr_fp64",
        "__opencl_c_fp64",
    ],
    debug_info: false,
};

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
    build_with(source, recipe, CL1_2)
}

fn build_with(source: &str, recipe: Recipe, language: Language) -> Program {
    let module = ferrocl_frontend::parse(&common::spirv_from_c(source, recipe, language))
        .unwrap_or_else(|e| panic!("frontend: {e}"));
    compile(&module, &default_options()).unwrap_or_else(|e| panic!("codegen: {e}"))
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
                    stop: 0,
                    checked: 0,
                    device_enqueue: 0,
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
