//! Harness of the coverage tests: OpenCL C (the driver's recipe, the one `clBuildProgram`
//! runs, with and without `-cl-opt-disable`) or hand-written SPIR-V assembly (spirv-as, checked
//! with spirv-val) → frontend → codegen, then the work-group functions are called directly for
//! every group of a one-dimensional NDRange on byte buffers.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;

use ferrocl_codegen::{Backend, BuildError, BuildOptions, GroupInfo, Program};

#[derive(Clone, Copy, Debug)]
pub enum Recipe {
    O0,
    Optimized,
}

pub const RECIPES: [Recipe; 2] = [Recipe::O0, Recipe::Optimized];

fn out_dir() -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("coverage-spirv");
    std::fs::create_dir_all(&dir).expect("create temp dir");
    dir
}

/// A suffix no other build of this process or of a concurrent test binary uses: tests run in
/// parallel and must not share intermediate files.
fn unique() -> String {
    static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    format!("{}-{n}", std::process::id())
}

fn run(cmd: &mut Command) -> String {
    let out = cmd.output().unwrap_or_else(|e| {
        panic!("cannot run {cmd:?}: {e} (install clang-15, llvm-15, llvm-spirv-15, spirv-tools)")
    });
    assert!(
        out.status.success(),
        "{cmd:?} failed:\n{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// How a test kernel is compiled: its build options and exactly the OpenCL C extensions and
/// optional features clang may assume.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Language {
    pub options: &'static str,
    pub extensions: &'static [&'static str],
    /// clang's `-g` (OpenCL.DebugInfo.100 in the module).
    pub debug_info: bool,
}

/// What the OpenCL C 1.2 and 2.0 kernels use: doubles, halves and 64-bit atomics (clang
/// assumed every extension for them before they were built with the driver's recipe).
pub const KERNEL_EXTENSIONS: &[&str] = &[
    "cl_khr_fp64",
    "__opencl_c_fp64",
    "cl_khr_fp16",
    "cl_khr_int64_base_atomics",
    "cl_khr_int64_extended_atomics",
    "__opencl_c_int64",
];

/// OpenCL C 1.2 with [`KERNEL_EXTENSIONS`].
pub const CL1_2: Language = Language {
    options: "-cl-std=CL1.2",
    extensions: KERNEL_EXTENSIONS,
    debug_info: false,
};

/// OpenCL C 2.0 with [`KERNEL_EXTENSIONS`] and the generic address space, which the 2.0
/// built-ins' pointer overloads need.
pub const CL2_0: Language = Language {
    options: "-cl-std=CL2.0",
    extensions: &[
        "cl_khr_fp64",
        "__opencl_c_fp64",
        "cl_khr_fp16",
        "cl_khr_int64_base_atomics",
        "cl_khr_int64_extended_atomics",
        "__opencl_c_int64",
        "__opencl_c_generic_address_space",
    ],
    debug_info: false,
};

/// SPIR-V of `tests/kernels/<source>` in `language`, built by the OpenCL C driver
/// (ferrocl-opencl-c); `Recipe::O0` adds `-cl-opt-disable`.
pub fn spirv_from_c(source: &str, recipe: Recipe, language: Language) -> Vec<u8> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/kernels")
        .join(source);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let options = match recipe {
        Recipe::O0 => format!("{} -cl-opt-disable", language.options),
        Recipe::Optimized => language.options.to_owned(),
    };
    ferrocl_opencl_c::OpenClC {
        source: &text,
        options: &options,
        extensions: language.extensions,
        undefine: &[],
        preludes: &[],
        spirv_extensions: ferrocl_frontend::SUPPORTED_EXTENSIONS,
        debug_info: language.debug_info,
        llvm_server: true,
    }
    .compile()
    .unwrap_or_else(|log| panic!("{source} ({recipe:?}, {language:?}):\n{log}"))
}

/// The backend the kernel tests build with: `FERROCL_TEST_BACKEND=wide` runs them with the
/// wide backend (LLVM), anything else or nothing with Cranelift. The same tests, the same
/// expected results: the backends must agree bit for bit.
pub fn test_backend() -> Backend {
    match std::env::var("FERROCL_TEST_BACKEND").as_deref() {
        Ok("wide") => Backend::Wide,
        _ => Backend::Cranelift,
    }
}

/// `BuildOptions::default()` with the [`test_backend`].
pub fn default_options() -> BuildOptions {
    BuildOptions {
        backend: test_backend(),
        ..BuildOptions::default()
    }
}

/// Work-items per vector iteration of a vectorised kernel with the [`test_backend`]: four in
/// Cranelift's 128-bit vectors, the target's 32-bit lanes with the wide backend.
pub fn vector_lanes() -> u32 {
    match test_backend() {
        Backend::Cranelift => 4,
        Backend::Wide => ferrocl_codegen::Target::host().lanes32(),
    }
}

/// `ferrocl_codegen::compile`, and with `FERROCL_TEST_BACKEND_LOG=<file>` one line per kernel
/// appended there: the build's milliseconds, the backend asked for and the one that made the
/// kernel, the kernel's name, and the wide backend's refusal if any (to count how many
/// kernels the wide backend takes, and why it refuses the others).
pub fn compile(
    module: &ferrocl_frontend::Module,
    options: &BuildOptions,
) -> Result<Program, BuildError> {
    let start = std::time::Instant::now();
    let program = ferrocl_codegen::compile(module, options)?;
    let ms = start.elapsed().as_secs_f64() * 1e3;
    if let Ok(path) = std::env::var("FERROCL_TEST_BACKEND_LOG") {
        use std::io::Write;
        let mut lines = String::new();
        let kernels = program.kernels().len().max(1) as f64;
        for k in program.kernels() {
            let refusal = k.wide_refusal().unwrap_or("").replace('\n', " ");
            lines.push_str(&format!(
                "{:.2}\t{:?}\t{:?}\t{}\t{refusal}\n",
                ms / kernels,
                options.backend,
                k.backend(),
                k.info.name
            ));
        }
        if let Ok(mut file) = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
        {
            let _ = file.write_all(lines.as_bytes());
        }
    }
    Ok(program)
}

/// Assembles `tests/spvasm/<name>` with spirv-as for SPIR-V `version` ("1.0".."1.6") and checks
/// it with `spirv-val --target-env <val_env>` (e.g. "opencl2.1"; None where spirv-val does not
/// accept the feature for any OpenCL environment, said at the call).
pub fn spirv_from_asm(name: &str, version: &str, val_env: Option<&str>) -> Vec<u8> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/spvasm")
        .join(name);
    let spv = out_dir().join(format!(
        "{}-{}.spv",
        name.trim_end_matches(".spvasm"),
        unique()
    ));
    run(Command::new("spirv-as")
        .arg("--target-env")
        .arg(format!("spv{version}"))
        .arg(&src)
        .arg("-o")
        .arg(&spv));
    if let Some(env) = val_env {
        run(Command::new("spirv-val")
            .arg("--target-env")
            .arg(env)
            .arg(&spv));
    }
    std::fs::read(&spv).expect("read spv")
}

/// Assembles SPIR-V assembly text (SPIR-V 1.0) without validating it: for variants of the
/// files in tests/spvasm that must be rejected.
pub fn spirv_from_asm_text(text: &str) -> Vec<u8> {
    let stem = format!("text-{}", unique());
    let src = out_dir().join(format!("{stem}.spvasm"));
    let spv = out_dir().join(format!("{stem}.spv"));
    std::fs::write(&src, text).expect("write assembly");
    run(Command::new("spirv-as")
        .args(["--target-env", "spv1.0"])
        .arg(&src)
        .arg("-o")
        .arg(&spv));
    std::fs::read(&spv).expect("read spv")
}

/// The codegen error of a module that must not build (the frontend accepts it).
pub fn codegen_error(spirv: &[u8]) -> String {
    let module = ferrocl_frontend::parse(spirv).unwrap_or_else(|e| panic!("frontend: {e}"));
    match compile(&module, &default_options()) {
        Ok(_) => panic!("the module built"),
        Err(e) => e.to_string(),
    }
}

pub fn build_spirv(spirv: &[u8]) -> Program {
    let module = ferrocl_frontend::parse(spirv).unwrap_or_else(|e| panic!("frontend: {e}"));
    compile(&module, &default_options()).unwrap_or_else(|e| panic!("codegen: {e}"))
}

/// A kernel argument: a buffer (passed as its address), bytes passed by value, or `__local`
/// memory.
pub enum Arg<'a> {
    Buf(&'a mut [u8]),
    Val(Vec<u8>),
    /// A `__local` argument of this many bytes, placed after the kernel's static `__local`
    /// variables in the group's local memory.
    Local(usize),
}

/// Bytes of `__local` memory the harness gives each group.
pub const LOCAL_BYTES: usize = 64 * 1024;

/// The argument block of kernel `k` for `args`, laid out as its `ArgSlot`s say.
fn argument_block(k: &ferrocl_codegen::Kernel, args: &mut [Arg]) -> Vec<u64> {
    let kernel = &k.info.name;
    assert_eq!(k.args.len(), args.len(), "{kernel}: argument count");
    let mut block = vec![0u64; k.args_size.div_ceil(8).max(1)];
    let mut local_offset = k.static_local_mem_size.next_multiple_of(16);
    for (i, a) in args.iter_mut().enumerate() {
        let slot = k.args[i];
        let bytes: Vec<u8> = match a {
            Arg::Buf(b) => (b.as_mut_ptr() as u64).to_ne_bytes().to_vec(),
            Arg::Val(v) => v.clone(),
            Arg::Local(n) => {
                let at = local_offset;
                local_offset = (at + *n).next_multiple_of(16);
                (at as u64).to_ne_bytes().to_vec()
            }
        };
        assert_eq!(slot.size, bytes.len(), "{kernel}: argument {i} size");
        assert!(local_offset <= LOCAL_BYTES, "{kernel}: local memory");
        assert!(slot.offset + bytes.len() <= block.len() * 8);
        let base = block.as_mut_ptr().cast::<u8>();
        // SAFETY: the slot lies inside the block (checked above).
        unsafe {
            std::ptr::copy_nonoverlapping(bytes.as_ptr(), base.add(slot.offset), bytes.len())
        };
    }
    block
}

/// Runs `kernel` over a 1-D NDRange of `global` work-items in groups of `local`.
pub fn launch(program: &Program, kernel: &str, args: &mut [Arg], global: u64, local: u64) {
    let k = program
        .kernel(kernel)
        .unwrap_or_else(|| panic!("no kernel {kernel}"));
    launch_kernel(k, args, global, local, 0);
}

/// [`launch`] of kernel `k` with `device_enqueue` as every group's
/// `GroupInfo::device_enqueue`.
pub fn launch_kernel(
    k: &ferrocl_codegen::Kernel,
    args: &mut [Arg],
    global: u64,
    local: u64,
    device_enqueue: u64,
) {
    let block = argument_block(k, args);
    let num_groups = global.div_ceil(local);
    let mut arena = vec![0u128; LOCAL_BYTES / 16];
    let mut frames = vec![
        0u128;
        (k.work_item_frame_size * local as usize)
            .div_ceil(16)
            .max(1)
    ];
    for g in 0..num_groups {
        let info = GroupInfo {
            global_offset: [0; 3],
            global_size: [global, 1, 1],
            local_size: [(global - g * local).min(local), 1, 1],
            enqueued_local_size: [local, 1, 1],
            group_id: [g, 0, 0],
            num_groups: [num_groups, 1, 1],
            work_dim: 1,
            frames: frames.as_mut_ptr() as u64,
            printf_buffer: 0,
            local_mem_size: LOCAL_BYTES as u64,
            frames_size: (frames.len() * 16) as u64,
            stop: 0,
            checked: 0,
            device_enqueue,
        };
        // SAFETY: the argument block follows the kernel's layout; the callers size every
        // buffer for the NDRange and keep it alive across the call; the arena is private.
        unsafe { k.run_group(block.as_ptr().cast(), &info, arena.as_mut_ptr().cast()) };
    }
}

/// Runs `kernel` over a 2-D `global` range in groups of `local` (x, y), groups in order, with
/// the frames and local memory a worker would give it (local memory is not cleared between
/// groups).
pub fn run_2d(p: &Program, kernel: &str, args: &mut [Arg], global: [u64; 2], local: [u64; 2]) {
    let k = p
        .kernel(kernel)
        .unwrap_or_else(|| panic!("no kernel {kernel}"));
    let block = argument_block(k, args);
    let groups = [global[0].div_ceil(local[0]), global[1].div_ceil(local[1])];
    let mut arena = vec![0u128; LOCAL_BYTES / 16];
    let items = (local[0] * local[1]) as usize;
    let mut frames = vec![0u128; (k.work_item_frame_size * items).div_ceil(16).max(1)];
    for gy in 0..groups[1] {
        for gx in 0..groups[0] {
            let info = GroupInfo {
                global_offset: [0; 3],
                global_size: [global[0], global[1], 1],
                local_size: [
                    (global[0] - gx * local[0]).min(local[0]),
                    (global[1] - gy * local[1]).min(local[1]),
                    1,
                ],
                enqueued_local_size: [local[0], local[1], 1],
                group_id: [gx, gy, 0],
                num_groups: [groups[0], groups[1], 1],
                work_dim: 2,
                frames: frames.as_mut_ptr() as u64,
                printf_buffer: 0,
                local_mem_size: LOCAL_BYTES as u64,
                frames_size: (frames.len() * 16) as u64,
                stop: 0,
                checked: 0,
                device_enqueue: 0,
            };
            // SAFETY: the argument block follows the kernel's layout; every buffer is sized
            // for the range; the arena and the frames (sized for the group) are private to
            // this call.
            unsafe { k.run_group(block.as_ptr().cast(), &info, arena.as_mut_ptr().cast()) };
        }
    }
}

/// Little helpers to move typed data in and out of byte buffers.
pub fn bytes_of<T: Copy>(v: &[T]) -> Vec<u8> {
    let n = std::mem::size_of_val(v);
    let mut out = vec![0u8; n];
    // SAFETY: `v` is `n` initialised bytes of plain data; `out` has room for them.
    unsafe { std::ptr::copy_nonoverlapping(v.as_ptr().cast::<u8>(), out.as_mut_ptr(), n) };
    out
}

pub fn read_f32(b: &[u8], i: usize) -> f32 {
    f32::from_le_bytes(b[i * 4..i * 4 + 4].try_into().expect("4 bytes"))
}

pub fn read_f64(b: &[u8], i: usize) -> f64 {
    f64::from_le_bytes(b[i * 8..i * 8 + 8].try_into().expect("8 bytes"))
}

/// Integer of `bits` bits at index `i` of `b`, sign- or zero-extended.
pub fn read_int(b: &[u8], i: usize, bits: u32, signed: bool) -> i128 {
    let n = (bits / 8) as usize;
    let mut raw = [0u8; 16];
    raw[..n].copy_from_slice(&b[i * n..i * n + n]);
    let u = u128::from_le_bytes(raw);
    if signed && bits < 128 && (u >> (bits - 1)) & 1 == 1 {
        (u | (u128::MAX << bits)) as i128
    } else {
        u as i128
    }
}

pub fn write_int(b: &mut [u8], i: usize, bits: u32, v: i128) {
    let n = (bits / 8) as usize;
    b[i * n..i * n + n].copy_from_slice(&v.to_le_bytes()[..n]);
}

/// A small deterministic generator (xorshift64*), so failures reproduce.
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
}

/// Every `.ll` file under `dir` (the wide backend's dumps) whose name starts with `kernel`.
pub fn dumped_ir(dir: &Path, kernel: &str) -> String {
    let mut text = String::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let p = e.path();
            let name = e.file_name().to_string_lossy().into_owned();
            if p.is_dir() {
                todo.push(p);
            } else if name.starts_with(kernel) && name.ends_with(".ll") {
                text += &std::fs::read_to_string(&p).unwrap_or_default();
            }
        }
    }
    text
}
