//! Shared harness of the loader-level integration tests: points ocl-icd at the freshly built
//! libferrocl.so, compiles `icd/tests/kernels/*.cl` to SPIR-V, and wraps CL object creation.
//!
//! Environment:
//! - `FERROCL_TEST_PLATFORM_ICD=/path/to/x.icd` runs the suite against another ICD (e.g.
//!   `/etc/OpenCL/vendors/pocl.icd`) to validate the tests and host references themselves:
//!   the first platform of that ICD is used and programs are built from OpenCL C source
//!   (`-cl-opt-disable` for the `-O0` variant), since Debian's PoCL rejects SPIR-V.
//! - Otherwise the harness writes `target/<profile>/ferrocl-test.icd` naming
//!   `target/<profile>/deps/libferrocl.so` (else `target/<profile>/libferrocl.so`), sets
//!   `OCL_ICD_VENDORS` to it before the first CL call, and picks the platform whose name
//!   contains "ferrocl" (case-insensitive).
#![allow(dead_code)]

use std::collections::HashMap;
use std::ffi::c_void;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::ptr;
use std::sync::{Mutex, OnceLock};

pub use opencl3::command_queue::CommandQueue;
pub use opencl3::context::Context;
pub use opencl3::device::{Device, CL_DEVICE_TYPE_ALL};
pub use opencl3::error_codes::error_text;
pub use opencl3::kernel::Kernel;
pub use opencl3::memory::{Buffer, ClMem, CL_MEM_COPY_HOST_PTR, CL_MEM_READ_WRITE};
pub use opencl3::platform::Platform;
pub use opencl3::program::Program;
pub use opencl3::types::{cl_device_id, cl_int, cl_uint, CL_BLOCKING};

use ferrocl_runtime::opencl_c::OpenClC;

/// Name of the environment variable that swaps the driver under test for another ICD.
pub const OTHER_ICD_VAR: &str = "FERROCL_TEST_PLATFORM_ICD";

/// How the kernels of a test are turned into a program.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Opt {
    /// The driver's OpenCL C recipe with `-cl-opt-disable`: clang's `-O0` module, every
    /// variable in memory, `a*b+c` as `mad`.
    O0,
    /// The driver's OpenCL C recipe as `clBuildProgram` runs it (opt-15's passes, DESIGN.md).
    Optimised,
}

/// Both recipes; every kernel test runs once per entry.
pub const OPTS: [Opt; 2] = [Opt::O0, Opt::Optimised];

/// Which driver the loader was pointed at.
#[derive(Debug)]
pub struct Target {
    /// Path of the .icd file given to `OCL_ICD_VENDORS`.
    pub icd: PathBuf,
    /// True when running against `FERROCL_TEST_PLATFORM_ICD` (build from source).
    pub other_icd: bool,
}

/// `target/<profile>` of the running test binary (`target/<profile>/deps/<test>-<hash>`).
pub fn profile_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("current_exe");
    exe.parent()
        .and_then(Path::parent)
        .unwrap_or_else(|| {
            panic!(
                "test binary {} is not in target/<profile>/deps",
                exe.display()
            )
        })
        .to_path_buf()
}

/// Sets `OCL_ICD_VENDORS` once, before any CL call (ocl-icd reads it at its first call).
pub fn target() -> &'static Target {
    static TARGET: OnceLock<Target> = OnceLock::new();
    TARGET.get_or_init(|| {
        if let Some(icd) = std::env::var_os(OTHER_ICD_VAR).filter(|v| !v.is_empty()) {
            let icd = PathBuf::from(icd);
            assert!(
                icd.exists(),
                "{OTHER_ICD_VAR}={} does not exist",
                icd.display()
            );
            std::env::set_var("OCL_ICD_VENDORS", &icd);
            return Target {
                icd,
                other_icd: true,
            };
        }
        let dir = profile_dir();
        // `cargo test` builds the cdylib next to the test binary (deps/) in the same
        // compilation as the rlib the tests link, but only `cargo build` copies it up to
        // target/<profile>/: prefer the deps/ copy, it is never stale.
        let candidates = [
            dir.join("deps").join("libferrocl.so"),
            dir.join("libferrocl.so"),
        ];
        let lib = candidates
            .iter()
            .find(|p| p.exists())
            .unwrap_or_else(|| {
                panic!("libferrocl.so not found in {candidates:?}: build ferrocl-icd")
            })
            .clone();
        let lib = lib.canonicalize().expect("canonicalize libferrocl.so");
        // Written under a per-process name and renamed, so parallel test binaries never
        // see a half-written file.
        let icd = dir.join("ferrocl-test.icd");
        let tmp = dir.join(format!("ferrocl-test.icd.{}", std::process::id()));
        std::fs::write(&tmp, format!("{}\n", lib.display())).expect("write .icd");
        std::fs::rename(&tmp, &icd).expect("rename .icd");
        std::env::set_var("OCL_ICD_VENDORS", &icd);
        Target {
            icd,
            other_icd: false,
        }
    })
}

/// Panics with the CL error name, the call and the context of the failure.
#[track_caller]
pub fn check<T>(r: Result<T, cl_int>, what: &str) -> T {
    match r {
        Ok(v) => v,
        Err(code) => panic!("{what} failed: {} ({code})", error_text(code)),
    }
}

/// Converts an `opencl3::Result` into a plain `Result<T, cl_int>`.
pub fn cl<T>(r: opencl3::Result<T>) -> Result<T, cl_int> {
    r.map_err(|e| e.0)
}

/// The platform under test: the one named "*ferrocl*", or the first one of the other ICD.
pub fn platform() -> Platform {
    let t = target();
    let platforms = match opencl3::platform::get_platforms() {
        Ok(p) => p,
        Err(e) => panic!(
            "clGetPlatformIDs through OCL_ICD_VENDORS={} failed: {} ({}): the driver did not register with the loader",
            t.icd.display(),
            error_text(e.0),
            e.0
        ),
    };
    let names: Vec<String> = platforms
        .iter()
        .map(|p| p.name().unwrap_or_default())
        .collect();
    if t.other_icd {
        return *platforms
            .first()
            .unwrap_or_else(|| panic!("no platform through OCL_ICD_VENDORS={}", t.icd.display()));
    }
    platforms
        .iter()
        .zip(&names)
        .find(|(_, n)| n.to_ascii_lowercase().contains("ferrocl"))
        .map(|(p, _)| *p)
        .unwrap_or_else(|| {
            panic!(
                "no Ferrocl platform through OCL_ICD_VENDORS={} (platforms: {names:?})",
                t.icd.display()
            )
        })
}

#[link(name = "OpenCL")]
extern "C" {
    fn clGetExtensionFunctionAddressForPlatform(
        platform: opencl_sys::cl_platform_id,
        name: *const std::ffi::c_char,
    ) -> *mut c_void;
}

/// Extension entry point `name` of the platform under test as the function type `F` its
/// extension gives it, looked up as applications do; panics if the platform lacks it.
///
/// # Safety
/// `F` must be the function pointer type of `name`.
pub unsafe fn extension_entry<F: Copy>(name: &str) -> F {
    let c = std::ffi::CString::new(name).unwrap();
    // SAFETY: a valid platform and a NUL-terminated name.
    let p = unsafe { clGetExtensionFunctionAddressForPlatform(platform().id(), c.as_ptr()) };
    assert!(!p.is_null(), "{name} is not reachable");
    assert_eq!(std::mem::size_of::<F>(), std::mem::size_of::<*mut c_void>());
    // SAFETY: a function pointer of the type the caller vouches for.
    unsafe { std::mem::transmute_copy::<*mut c_void, F>(&p) }
}

/// The first device of the platform under test, looked up once per process (the lookup is
/// serialised: PoCL 3.1 initialises its devices lazily and races when several threads do it).
pub fn device_id() -> cl_device_id {
    static DEVICE: OnceLock<usize> = OnceLock::new();
    let id = *DEVICE.get_or_init(|| {
        let ids = check(
            cl(platform().get_devices(CL_DEVICE_TYPE_ALL)),
            "clGetDeviceIDs",
        );
        let id = *ids.first().expect("platform has no device");
        // Touch the device once more so lazy initialisation completes here.
        check(
            cl(Device::new(id).name()),
            "clGetDeviceInfo(CL_DEVICE_NAME)",
        );
        id as usize
    });
    id as cl_device_id
}

/// A device, its context and an in-order queue.
pub struct Env {
    pub device: Device,
    pub context: Context,
    pub queue: CommandQueue,
    pub other_icd: bool,
}

impl Env {
    pub fn new() -> Env {
        Env::with_context_properties(&[])
    }

    /// As `new`, with a context made with `properties` (the pairs, without the final 0).
    pub fn with_context_properties(properties: &[opencl_sys::cl_context_properties]) -> Env {
        let device = Device::new(device_id());
        let mut list = properties.to_vec();
        if !list.is_empty() {
            list.push(0);
        }
        let context = check(
            cl(Context::from_devices(
                &[device.id()],
                &list,
                None,
                ptr::null_mut(),
            )),
            "clCreateContext",
        );
        let queue = check(
            cl(CommandQueue::create_default_with_properties(&context, 0, 0)),
            "clCreateCommandQueueWithProperties",
        );
        Env {
            device,
            context,
            queue,
            other_icd: target().other_icd,
        }
    }

    /// Whether the device reports extension `name`.
    pub fn has_extension(&self, name: &str) -> bool {
        let extensions = check(cl(self.device.extensions()), "CL_DEVICE_EXTENSIONS");
        extensions.split_whitespace().any(|e| e == name)
    }

    /// For a test of extension `name`: true when the device reports it. Ferrocl reports every
    /// extension the suite tests, so there a missing one fails the test (it must never pass
    /// unchecked); another ICD (`FERROCL_TEST_PLATFORM_ICD`) may lack it, and the test is
    /// skipped with a line saying so (false).
    pub fn extension_or_skip(&self, name: &str) -> bool {
        self.feature_or_skip(name, self.has_extension(name))
    }

    /// As `extension_or_skip`, for an optional feature the caller has queried (`what` names
    /// it): false (skip) only on another ICD, a failure on Ferrocl.
    pub fn feature_or_skip(&self, what: &str, present: bool) -> bool {
        if present {
            return true;
        }
        assert!(self.other_icd, "Ferrocl does not report {what}");
        eprintln!("skipped: the device of {OTHER_ICD_VAR} lacks {what}");
        false
    }

    /// Builds `icd/tests/kernels/<file>.cl` in its language (`language_of`) with the given
    /// recipe; panics with the build log.
    pub fn program(&self, file: &str, opt: Opt) -> Program {
        let language = language_of(file);
        let language: Vec<&str> = language.iter().map(String::as_str).collect();
        self.program_in(file, opt, &language)
    }

    /// Builds `icd/tests/kernels/<file>.cl` with the given recipe and language options (the
    /// `-cl-std=` and `-Xclang -cl-ext=…` clang options; the other ICD sees the `-cl-std=`);
    /// panics with the build log.
    pub fn program_in(&self, file: &str, opt: Opt, language: &[&str]) -> Program {
        let (program, options) = if self.other_icd {
            let src = std::fs::read_to_string(kernel_source(file)).expect("read kernel source");
            let p = check(
                cl(Program::create_from_source(&self.context, &src)),
                "clCreateProgramWithSource",
            );
            let std = language
                .iter()
                .find(|o| o.starts_with("-cl-std="))
                .copied()
                .unwrap_or("-cl-std=CL1.2");
            let options = match opt {
                Opt::O0 => format!("{std} -cl-opt-disable"),
                Opt::Optimised => std.to_owned(),
            };
            (p, options)
        } else {
            let il = spirv_in(file, opt, language);
            let p = check(
                cl(Program::create_from_il(&self.context, &il)),
                "clCreateProgramWithIL",
            );
            (p, String::new())
        };
        // Plain clBuildProgram (opencl3's Program::build also queries the kernel names).
        let c_options = std::ffi::CString::new(options.as_str()).expect("options");
        let built = opencl3::program::build_program(
            program.get(),
            self.context.devices(),
            &c_options,
            None,
            ptr::null_mut(),
        );
        if let Err(code) = built {
            let log = program.get_build_log(self.device.id()).unwrap_or_default();
            panic!(
                "clBuildProgram({file}, {opt:?}) failed: {} ({code})\n--- build log ---\n{log}",
                error_text(code)
            );
        }
        program
    }

    /// Builds IL the test made itself (clCreateProgramWithIL + clBuildProgram with
    /// `options`); panics with the build log.
    pub fn program_from_il(&self, il: &[u8], options: &str) -> Program {
        self.try_program_from_il(il, options)
            .unwrap_or_else(|log| panic!("{log}"))
    }

    /// Builds IL with `options`: the program, or the error code and build log.
    pub fn try_program_from_il(&self, il: &[u8], options: &str) -> Result<Program, String> {
        let program = check(
            cl(Program::create_from_il(&self.context, il)),
            "clCreateProgramWithIL",
        );
        let c_options = std::ffi::CString::new(options).expect("options");
        match opencl3::program::build_program(
            program.get(),
            self.context.devices(),
            &c_options,
            None,
            ptr::null_mut(),
        ) {
            Ok(()) => Ok(program),
            Err(code) => {
                let log = program.get_build_log(self.device.id()).unwrap_or_default();
                Err(format!(
                    "clBuildProgram(IL, {options:?}) failed: {} ({code})\n--- build log ---\n{log}",
                    error_text(code)
                ))
            }
        }
    }

    /// Builds OpenCL C `source` with the device's own compiler (clCreateProgramWithSource +
    /// clBuildProgram with `options`); panics with the build log.
    pub fn program_from_source(&self, source: &str, options: &str) -> Program {
        self.try_program_from_source(source, options)
            .unwrap_or_else(|log| panic!("{log}"))
    }

    /// Builds OpenCL C `source` with `options`: the program, or the error code and build log.
    pub fn try_program_from_source(&self, source: &str, options: &str) -> Result<Program, String> {
        let program = check(
            cl(Program::create_from_source(&self.context, source)),
            "clCreateProgramWithSource",
        );
        let c_options = std::ffi::CString::new(options).expect("options");
        match opencl3::program::build_program(
            program.get(),
            self.context.devices(),
            &c_options,
            None,
            ptr::null_mut(),
        ) {
            Ok(()) => Ok(program),
            Err(code) => {
                let log = program.get_build_log(self.device.id()).unwrap_or_default();
                Err(format!(
                    "clBuildProgram({options}) failed: {} ({code})\n--- build log ---\n{log}",
                    error_text(code)
                ))
            }
        }
    }

    /// Builds `file` and creates kernel `name` from it (the kernel keeps the program alive).
    pub fn kernel(&self, file: &str, opt: Opt, name: &str) -> Kernel {
        let program = self.program(file, opt);
        check(cl(Kernel::create(&program, name)), "clCreateKernel")
    }

    /// A read-write buffer initialised from `data`.
    pub fn buffer<T>(&self, data: &[T]) -> Buffer<T> {
        // SAFETY: COPY_HOST_PTR copies `data` during the call; the pointer is not kept.
        let r = unsafe {
            Buffer::<T>::create(
                &self.context,
                CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR,
                data.len().max(1),
                data.as_ptr() as *mut c_void,
            )
        };
        check(cl(r), "clCreateBuffer")
    }

    /// A read-write buffer of `n` elements, filled with `fill` by the host.
    pub fn buffer_filled<T: Copy>(&self, n: usize, fill: T) -> Buffer<T> {
        self.buffer(&vec![fill; n])
    }

    /// Blocking read of the first `n` elements.
    pub fn read<T: Copy + Default>(&self, buf: &Buffer<T>, n: usize) -> Vec<T> {
        let mut out = vec![T::default(); n];
        // SAFETY: blocking read into a host slice of exactly `n` elements.
        let r = unsafe {
            self.queue
                .enqueue_read_buffer(buf, CL_BLOCKING, 0, &mut out, &[])
        };
        check(cl(r), "clEnqueueReadBuffer");
        out
    }

    /// Enqueues `kernel` over the range and waits for it.
    pub fn run(
        &self,
        kernel: &Kernel,
        global: &[usize],
        local: Option<&[usize]>,
        offset: Option<&[usize]>,
    ) {
        if let Some(l) = local {
            assert_eq!(l.len(), global.len());
        }
        if let Some(o) = offset {
            assert_eq!(o.len(), global.len());
        }
        // SAFETY: the sizes arrays outlive the call; argument setup is the caller's.
        let r = unsafe {
            self.queue.enqueue_nd_range_kernel(
                kernel.get(),
                global.len() as cl_uint,
                offset.map_or(ptr::null(), |o| o.as_ptr()),
                global.as_ptr(),
                local.map_or(ptr::null(), |l| l.as_ptr()),
                &[],
            )
        };
        let event = check(cl(r), "clEnqueueNDRangeKernel");
        check(cl(event.wait()), "clWaitForEvents");
        check(cl(self.queue.finish()), "clFinish");
    }
}

impl Default for Env {
    fn default() -> Self {
        Env::new()
    }
}

/// Sets kernel argument `index` to the bytes of `value` (a scalar, struct or `cl_mem`).
#[track_caller]
pub fn arg<T>(kernel: &Kernel, index: cl_uint, value: &T) {
    // SAFETY: `value` points to `size_of::<T>()` readable bytes.
    check(
        cl(unsafe { kernel.set_arg(index, value) }),
        &format!("clSetKernelArg({index})"),
    );
}

/// Sets kernel argument `index` to buffer `buf`.
#[track_caller]
pub fn arg_buf<T>(kernel: &Kernel, index: cl_uint, buf: &Buffer<T>) {
    arg(kernel, index, &buf.get());
}

/// Sets `__local` kernel argument `index` to `bytes` bytes.
#[track_caller]
pub fn arg_local(kernel: &Kernel, index: cl_uint, bytes: usize) {
    // SAFETY: a local argument takes a size and a null value.
    check(
        cl(unsafe { kernel.set_arg_local_buffer(index, bytes) }),
        &format!("clSetKernelArg({index}, local)"),
    );
}

/// `icd/tests/kernels/<file>.cl`.
pub fn kernel_source(file: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests")
        .join("kernels")
        .join(format!("{file}.cl"))
}

/// The clang language options of `icd/tests/kernels/<file>.cl`: those its first line gives
/// as `// language: <options>` (e.g. OpenCL C 3.0 with optional features), else OpenCL C 1.2.
pub fn language_of(file: &str) -> Vec<String> {
    let path = kernel_source(file);
    let src = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    match src
        .lines()
        .next()
        .and_then(|l| l.strip_prefix("// language:"))
    {
        Some(options) => options.split_whitespace().map(str::to_owned).collect(),
        None => vec!["-cl-std=CL1.2".to_owned()],
    }
}

/// `source` as plain clang-15 (`-O0`, spir64, the default header, `options` added) and
/// llvm-spirv-15 make it, without the driver's recipe: IL an application would bring.
pub fn plain_spirv(source: &str, options: &[&str]) -> Vec<u8> {
    static SERIAL: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let serial = SERIAL.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let dir = std::env::temp_dir().join(format!("ferrocl-plain-{}-{serial}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let (cl, bc, spv) = (dir.join("k.cl"), dir.join("k.bc"), dir.join("k.spv"));
    std::fs::write(&cl, source).expect("write the source");
    let run = |cmd: &mut Command| {
        let out = cmd
            .output()
            .expect("clang-15 / llvm-spirv-15 (scripts/setup.sh)");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    };
    run(Command::new("clang-15")
        .args(["-target", "spir64", "-O0", "-emit-llvm", "-c"])
        .args(["-Xclang", "-finclude-default-header"])
        .args(options)
        .arg(&cl)
        .arg("-o")
        .arg(&bc));
    run(Command::new("llvm-spirv-15").arg(&bc).arg("-o").arg(&spv));
    let module = std::fs::read(&spv).expect("the module");
    std::fs::remove_dir_all(&dir).ok();
    module
}

/// SPIR-V for `icd/tests/kernels/<file>.cl` in its language with the given recipe.
pub fn spirv(file: &str, opt: Opt) -> Vec<u8> {
    let language = language_of(file);
    let language: Vec<&str> = language.iter().map(String::as_str).collect();
    spirv_in(file, opt, &language)
}

/// SPIR-V for `icd/tests/kernels/<file>.cl` with the given recipe and language options,
/// built by the OpenCL C driver's recipe (the one `clBuildProgram` runs), once per process,
/// and checked with `spirv-val --target-env opencl2.1` (plain SPIR-V of the module's version
/// with halves; not at all with a capability spirv-val postdates).
/// `-Xclang -cl-ext=-all,+a,+b` among the options names exactly the extensions and features
/// clang may assume; without it they are those of a device with every optional feature on, so
/// that the IL is the same whatever `FERROCL_*` this process runs with (the config tests build
/// IL that a device with a feature turned off must refuse).
pub fn spirv_in(file: &str, opt: Opt, language: &[&str]) -> Vec<u8> {
    type Built = HashMap<(String, Opt, Vec<String>), Vec<u8>>;
    // One compile at a time per process: tests share kernels and run in parallel.
    static BUILT: OnceLock<Mutex<Built>> = OnceLock::new();
    let mut built = BUILT
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|e| e.into_inner());
    let key = (
        file.to_owned(),
        opt,
        language.iter().map(|s| s.to_string()).collect(),
    );
    if let Some(bytes) = built.get(&key) {
        return bytes.clone();
    }
    let src_path = kernel_source(file);
    let source = std::fs::read_to_string(&src_path)
        .unwrap_or_else(|e| panic!("{}: {e}", src_path.display()));
    let (mut options, extensions) = options_and_extensions(language);
    if opt == Opt::O0 {
        options.push_str(" -cl-opt-disable");
    }
    let every_feature = ferrocl_runtime::settings::Settings {
        fp64: true,
        fp16: true,
        sub_groups: true,
        ..ferrocl_runtime::settings::Settings::parse(|_| None, |_| {})
    };
    let device = ferrocl_runtime::config::DeviceConfig::detect(&every_feature, 1);
    let device_extensions = device.opencl_c_extensions();
    // A list of the test's own gets none of the preludes of the device's features.
    let (extensions, preludes): (Vec<&str>, _) = match &extensions {
        Some(list) => (list.iter().map(String::as_str).collect(), Vec::new()),
        None => (device_extensions, device.clang_preludes()),
    };
    let bytes = OpenClC {
        source: &source,
        options: &options,
        extensions: &extensions,
        undefine: &device.clang_undefines(),
        preludes: &preludes,
        spirv_extensions: &device.llvm_spirv_extensions(),
        debug_info: false,
        llvm_server: device.settings.llvm_server,
    }
    .compile()
    .unwrap_or_else(|log| panic!("{file} ({opt:?}, {language:?}):\n{log}"));

    // spirv-val (SPIRV-Tools 2023.1) refuses capabilities it postdates: modules declaring one
    // (BFloat16ConversionINTEL) are checked by the driver's own validator only.
    if declares_capability(&bytes, &SPIRV_VAL_UNKNOWN_CAPABILITIES) {
        built.insert(key, bytes.clone());
        return bytes;
    }
    // spirv-val's OpenCL environments refuse the Float16 capability (cl_khr_fp16): modules
    // with halves are checked against the plain SPIR-V 1.0 rules.
    let half = extensions.contains(&"cl_khr_fp16");
    let dir = profile_dir().join("ferrocl-test-spirv");
    std::fs::create_dir_all(&dir).expect("create spirv dir");
    let tag = match opt {
        Opt::O0 => "O0",
        Opt::Optimised => "opt",
    };
    let spv = dir.join(format!("{file}-{tag}.{}.spv", std::process::id()));
    std::fs::write(&spv, &bytes).expect("write .spv");
    // Plain SPIR-V of the module's own version (a kernel with a required sub-group size
    // is 1.1, the version of the SubgroupSize execution mode).
    let version = format!("spv1.{}", bytes.get(5).copied().unwrap_or(0));
    let mut val = Command::new("spirv-val");
    val.args(["--target-env", if half { &version } else { "opencl2.1" }])
        .arg(&spv);
    run_tool(val);
    let _ = std::fs::remove_file(&spv);
    built.insert(key, bytes.clone());
    bytes
}

/// SPIR-V capabilities the installed spirv-val does not know: BFloat16ConversionINTEL.
const SPIRV_VAL_UNKNOWN_CAPABILITIES: [u32; 1] = [6115];

/// Whether SPIR-V module `bytes` declares one of `capabilities` (OpCapability, opcode 17).
fn declares_capability(bytes: &[u8], capabilities: &[u32]) -> bool {
    let words: Vec<u32> = bytes
        .chunks_exact(4)
        .map(|c| u32::from_le_bytes(c.try_into().unwrap()))
        .collect();
    let mut at = 5;
    while at + 1 < words.len() {
        let count = (words[at] >> 16) as usize;
        if words[at] & 0xffff == 17 && capabilities.contains(&words[at + 1]) {
            return true;
        }
        at += count.max(1);
    }
    false
}

/// The build options of `language` and, when it has `-Xclang -cl-ext=-all,+a,+b` (clang's
/// spelling of an extension set, which the other ICD does not see), the names it turns on.
fn options_and_extensions(language: &[&str]) -> (String, Option<Vec<String>>) {
    let mut options = Vec::new();
    let mut extensions = None;
    let mut words = language.iter();
    while let Some(&w) = words.next() {
        if w == "-Xclang" {
            let ext = words.next().expect("-Xclang needs an argument");
            let list = ext
                .strip_prefix("-cl-ext=-all")
                .unwrap_or_else(|| panic!("{ext}: only -cl-ext=-all,+… is understood"));
            extensions = Some(
                list.split(',')
                    .filter_map(|e| e.strip_prefix('+'))
                    .map(str::to_owned)
                    .collect(),
            );
        } else {
            options.push(w);
        }
    }
    (options.join(" "), extensions)
}

fn run_tool(mut cmd: Command) {
    let shown = format!("{cmd:?}");
    let out = cmd.output().unwrap_or_else(|e| {
        panic!("cannot run {shown}: {e} (install clang-15 llvm-15 llvm-spirv-15 spirv-tools; see scripts/setup.sh)")
    });
    assert!(
        out.status.success(),
        "{shown} failed ({}):\n{}{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Deterministic pseudo-random numbers for test inputs (xorshift64*).
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }
    pub fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    pub fn next_u32(&mut self) -> u32 {
        (self.next_u64() >> 32) as u32
    }
    /// Uniform in [lo, hi).
    pub fn f32_in(&mut self, lo: f32, hi: f32) -> f32 {
        let unit = (self.next_u64() >> 40) as f32 / (1u64 << 24) as f32;
        lo + (hi - lo) * unit
    }
}

/// Distance in units in the last place between two finite f32 of the same sign
/// (or both zero); `u32::MAX` otherwise.
pub fn ulp_diff(a: f32, b: f32) -> u32 {
    if a == b {
        return 0;
    }
    if !a.is_finite() || !b.is_finite() || a.is_sign_negative() != b.is_sign_negative() {
        return u32::MAX;
    }
    a.to_bits().abs_diff(b.to_bits())
}

/// Error of `got` against the exact value `exact`, in ulps of the f32 nearest to `exact`
/// (the measure of the OpenCL ULP table).
pub fn ulp_error(got: f32, exact: f64) -> f64 {
    let r = exact as f32;
    if got as f64 == exact {
        return 0.0;
    }
    let ulp = if r == 0.0 {
        f32::from_bits(1) as f64
    } else {
        let next = f32::from_bits(r.abs().to_bits() + 1) as f64;
        next - r.abs() as f64
    };
    ((got as f64) - exact).abs() / ulp
}

/// SPIR-V assembly `text` assembled by `spirv-as` for SPIR-V `version` ("1.0"…); `name` only
/// tells the files of concurrent tests apart.
pub fn assemble_text(name: &str, text: &str, version: &str) -> Vec<u8> {
    static COUNT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = COUNT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let out =
        std::env::temp_dir().join(format!("ferrocl-asm-{}-{n}-{name}.spv", std::process::id()));
    let source = out.with_extension("spvasm");
    std::fs::write(&source, text).expect("write .spvasm");
    let st = std::process::Command::new("spirv-as")
        .args(["--target-env", &format!("spv{version}")])
        .arg(&source)
        .arg("-o")
        .arg(&out)
        .status()
        .expect("spirv-as (spirv-tools) is installed");
    assert!(st.success(), "spirv-as {name}");
    let words = std::fs::read(&out).expect("assembled module");
    let _ = std::fs::remove_file(out);
    let _ = std::fs::remove_file(source);
    words
}

/// Runs test `name` again in a child process of the test binary with `vars` in its
/// environment (the driver reads its settings once per process); None in the child itself,
/// which then runs the test's body. Panics when the child fails.
pub fn rerun_in_child(name: &str, vars: &[(&str, &str)]) -> Option<()> {
    let out = run_in_child(name, vars)?;
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && stdout.contains("1 passed"),
        "child {name} failed\n--- stdout ---\n{stdout}\n--- stderr ---\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    Some(())
}

/// As [`rerun_in_child`], but whatever becomes of the child: its output and exit status (a
/// test whose child is meant to die), or None in the child itself.
pub fn run_in_child(name: &str, vars: &[(&str, &str)]) -> Option<std::process::Output> {
    const CHILD: &str = "FERROCL_TEST_CHILD";
    if std::env::var(CHILD).as_deref() == Ok(name) {
        return None;
    }
    let exe = std::env::current_exe().expect("test binary path");
    let out = std::process::Command::new(exe)
        .args([name, "--exact", "--nocapture", "--test-threads=1"])
        .env(CHILD, name)
        .envs(vars.iter().copied())
        .output()
        .expect("run the test binary as a child");
    Some(out)
}

/// The lane an `intel_sub_group_shuffle` (op 0), `_down` (1), `_up` (2) or `_xor` (3) of
/// work-item `lane` reads with operand `k`, and from which data operand (0 or 1), for
/// sub-groups whose largest size is `max`; None out of range (the result is then undefined).
pub fn shuffle_source(op: usize, lane: usize, k: usize, max: usize) -> Option<(usize, usize)> {
    match op {
        0 => Some((k, 0)),
        1 => {
            let at = lane + k;
            (at < 2 * max).then(|| if at < max { (at, 0) } else { (at - max, 1) })
        }
        2 => {
            let at = lane as isize - k as isize;
            let max = max as isize;
            (at >= -max).then(|| {
                if at >= 0 {
                    (at as usize, 1)
                } else {
                    ((at + max) as usize, 0)
                }
            })
        }
        _ => Some((lane ^ k, 0)),
    }
}
