//! Programs: their source (SPIR-V or OpenCL C), build options parsed into codegen's
//! `BuildOptions`, the build (frontend parse + validate, codegen compile) with status and log,
//! compile/link for single inputs, and the compiled kernels kernels are created from.

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use ferrocl_codegen::BuildOptions;
use opencl_sys::*;

use crate::config::DeviceConfig;
use crate::context::Context;
use crate::features::ModuleUse;
use crate::object::{Base, CLResult, Tag};
use crate::program_cache::CodeEntry;
use crate::settings::{log, LogLevel, Rounding, Settings};

/// What the program was created from.
#[derive(Clone, Debug)]
pub enum Source {
    Il(Vec<u8>),
    OpenClC(String),
    /// A binary from clGetProgramInfo(CL_PROGRAM_BINARIES): SPIR-V again (binary.rs).
    Binary(Vec<u8>),
    /// Output of clLinkProgram (may be empty after a failed link).
    Linked,
}

impl Source {
    /// Whether the program came from IL: API spec 3.1 §5.9.4 gives the kernels of such a
    /// program neither argument info nor attributes, which are for "kernels created from
    /// OpenCL C source".
    pub fn is_il(&self) -> bool {
        matches!(self, Source::Il(_))
    }
}

/// Build options after parsing.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ParsedOptions {
    pub codegen: BuildOptions,
    pub kernel_arg_info: bool,
    /// `-cl-std=CLx.y` as (x, y); OpenCL C source without it is compiled as CL1.2.
    pub cl_std: Option<(u8, u8)>,
}

impl ParsedOptions {
    /// What the program's context asks of its kernels: private variables zeroed
    /// (cl_khr_initialize_memory), loops a termination can stop (cl_khr_terminate_context,
    /// through the watchdog's checks).
    fn apply_context(&mut self, context: &Context) {
        self.codegen.zero_private = context.initialize.private;
        self.codegen.stop_checks = context.termination.is_some();
    }

    /// Whether kernels built from `source` with these options need uniform work-groups
    /// (clEnqueueNDRangeKernel in the API spec): OpenCL C source for a version before 2.0, or
    /// `-cl-uniform-work-group-size`; IL and binaries only with the option.
    fn requires_uniform_work_groups(&self, source: &Source) -> bool {
        let before_2_0 = self.cl_std.unwrap_or((1, 2)) < (2, 0);
        self.codegen.uniform_work_group_size || (matches!(source, Source::OpenClC(_)) && before_2_0)
    }
}

/// Parses a `clBuildProgram`/`clCompileProgram` option string. Preprocessor options (-D, -I)
/// are accepted (they matter only for OpenCL C); unknown options are CL_INVALID_BUILD_OPTIONS.
pub fn parse_options(options: &str) -> CLResult<ParsedOptions> {
    parse_options_or_explain(options).map_err(|_| CL_INVALID_BUILD_OPTIONS)
}

/// [`parse_options`], with the build-log line that says which option is refused.
///
/// The option string is parsed by the OpenCL C driver's one parser
/// ([`ferrocl_opencl_c::BuildRequest`]), which also takes the clang options that are harmless
/// (they reach clang for OpenCL C and mean nothing for IL) and accepts and ignores `-g`, OpenCL
/// 1.0's `-cl-strict-aliasing` and `-cl-no-subgroup-ifp`; here it becomes codegen's options.
fn parse_options_or_explain(options: &str) -> Result<ParsedOptions, String> {
    let r = ferrocl_opencl_c::BuildRequest::parse(options);
    if let Some(refused) = r.refused.first() {
        return Err(refused.log());
    }
    let mut p = ParsedOptions {
        kernel_arg_info: r.kernel_arg_info,
        ..ParsedOptions::default()
    };
    if let Some(std) = &r.cl_std {
        p.cl_std = Some(match std.as_str() {
            "CL1.0" => (1, 0),
            "CL1.1" => (1, 1),
            "CL1.2" => (1, 2),
            // OpenCL C 2.0, on a device with every 2.0 feature (config.rs).
            "CL2.0" => (2, 0),
            "CL3.0" => (3, 0),
            // OpenCL C 3.1 (API spec 3.1 §5.8.6.5), on a device that lists it: see
            // [`check_language_version`].
            "CL3.1" => (3, 1),
            _ => {
                return Err(format!(
                    "error: invalid build option \"-cl-std={std}\": not an OpenCL C version \
                     (CL1.0, CL1.1, CL1.2, CL2.0, CL3.0, CL3.1)\n"
                ))
            }
        });
    }
    let (m, c) = (&r.math, &mut p.codegen);
    c.optimize = !r.opt_disable;
    c.fast_relaxed_math = m.fast_relaxed_math;
    c.unsafe_math_optimizations = m.unsafe_math_optimizations || m.fast_relaxed_math;
    c.finite_math_only = m.finite_math_only || m.fast_relaxed_math;
    c.no_signed_zeros = m.no_signed_zeros || m.unsafe_math_optimizations || m.fast_relaxed_math;
    c.mad_enable = m.mad_enable || m.unsafe_math_optimizations || m.fast_relaxed_math;
    c.denorms_are_zero = m.denorms_are_zero;
    c.fp32_correctly_rounded_divide_sqrt = m.fp32_correctly_rounded_divide_sqrt;
    c.uniform_work_group_size = r.uniform_work_group_size;
    // Ferrocl's own: checked mode for this program (as FERROCL_CHECKED=on does for all).
    c.checked = r.checked;
    Ok(p)
}

/// `-cl-std=CLx.y` names a version of `CL_DEVICE_OPENCL_C_ALL_VERSIONS` or fails the build
/// (API spec 3.1 §5.8.6.5: "Calls to clBuildProgram or clCompileProgram with the -cl-std=CL3.1
/// option will fail ... when CL_DEVICE_OPENCL_C_ALL_VERSIONS does not include OpenCL C 3.1";
/// an OpenCL 3.0 device, with `FERROCL_SUBGROUPS=off`, lacks it). The build-log line, or
/// nothing. The offline compiler (`ferrocl-clc`) asks the same.
pub fn check_language_version(
    parsed: &ParsedOptions,
    device: &crate::config::DeviceConfig,
) -> Result<(), String> {
    match parsed.cl_std {
        Some((major, minor)) if !device.supports_opencl_c(major.into(), minor.into()) => {
            Err(format!(
                "error: invalid build option \"-cl-std=CL{major}.{minor}\": \
                 CL_DEVICE_OPENCL_C_ALL_VERSIONS does not list OpenCL C {major}.{minor} \
                 (an OpenCL {}.{} device)\n",
                device.version().0,
                device.version().1
            ))
        }
        _ => Ok(()),
    }
}

/// Temporary include directory holding clCompileProgram's embedded headers.
struct HeaderDir(std::path::PathBuf);

impl HeaderDir {
    fn new(headers: &[(String, Vec<u8>)]) -> std::io::Result<Option<HeaderDir>> {
        if headers.is_empty() {
            return Ok(None);
        }
        static N: AtomicUsize = AtomicUsize::new(0);
        let dir = std::env::temp_dir().join(format!(
            "ferrocl-hdr-{}-{}",
            std::process::id(),
            N.fetch_add(1, Ordering::Relaxed)
        ));
        let d = HeaderDir(dir);
        for (name, text) in headers {
            let path = d.0.join(name);
            if let Some(parent) = path.parent() {
                std::fs::create_dir_all(parent)?;
            }
            std::fs::write(path, text)?;
        }
        Ok(Some(d))
    }
}

impl Drop for HeaderDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A build step's result: the SPIR-V, the code when built, and the log (warnings only), or
/// the SPIR-V known so far and why it failed.
type StepResult = Result<(Vec<u8>, Option<Built>, String), (Option<Vec<u8>>, StepFailure)>;

/// Why a build step failed: the build log saying so, and whether host memory ran out midway
/// (the JIT could not map memory), which the API reports as `CL_OUT_OF_HOST_MEMORY` rather
/// than as a failed build.
struct StepFailure {
    log: String,
    out_of_memory: bool,
}

impl From<String> for StepFailure {
    fn from(log: String) -> StepFailure {
        StepFailure {
            log,
            out_of_memory: false,
        }
    }
}

impl From<ferrocl_codegen::BuildError> for StepFailure {
    fn from(e: ferrocl_codegen::BuildError) -> StepFailure {
        StepFailure {
            log: e.log,
            out_of_memory: e.out_of_memory,
        }
    }
}

impl StepFailure {
    /// The same failure with `log` before its own.
    fn after(self, log: &str) -> StepFailure {
        StepFailure {
            log: format!("{log}{}", self.log),
            ..self
        }
    }

    fn outcome(&self) -> BuildOutcome {
        if self.out_of_memory {
            BuildOutcome::OutOfHostMemory
        } else {
            BuildOutcome::Failed
        }
    }
}

/// A successful build: the machine code and the options it was built with.
pub struct Built {
    pub code: ferrocl_codegen::Program,
    pub options: ParsedOptions,
    /// Launches need uniform work-groups (see `ParsedOptions::requires_uniform_work_groups`;
    /// a linked program needs them when any input does).
    pub uniform_work_groups: bool,
    /// Each kernel's second tier (tiering.rs).
    pub tiers: crate::tiering::Tiers,
}

impl Built {
    pub fn new(
        code: ferrocl_codegen::Program,
        options: ParsedOptions,
        uniform_work_groups: bool,
        tier_cache: Option<crate::tiering::TierCache>,
    ) -> Built {
        let tiers = crate::tiering::Tiers::new(code.kernels().len(), tier_cache);
        Built {
            code,
            options,
            uniform_work_groups,
            tiers,
        }
    }
}

struct BuildState {
    status: cl_build_status,
    log: String,
    options: String,
    binary_type: cl_program_binary_type,
    /// The SPIR-V of the program once known (IL, compiled source, binary).
    spirv: Option<Vec<u8>>,
    built: Option<Arc<Built>>,
    /// Values set with `clSetProgramSpecializationConstant`, by `SpecId` (little-endian bytes).
    spec_values: HashMap<u32, Vec<u8>>,
    /// The last successful build, compile or link requires uniform work-groups; what
    /// clLinkProgram combines across its inputs.
    uniform_work_groups: bool,
}

#[repr(C)]
pub struct Program {
    base: Base,
    pub context: Arc<Context>,
    pub source: Source,
    state: Mutex<BuildState>,
    /// Number of live kernel objects: a program with kernels cannot be rebuilt.
    pub kernel_count: AtomicUsize,
}
crate::cl_object!(Program, Program, CL_INVALID_PROGRAM);

/// Result of a build/compile/link attempt, as the API reports it.
#[derive(Debug, PartialEq, Eq)]
pub enum BuildOutcome {
    Ok,
    Failed,
    /// Failed because host memory ran out midway; the build log says where.
    OutOfHostMemory,
}

impl Program {
    pub fn new(context: Arc<Context>, source: Source) -> Arc<Program> {
        let (spirv, binary_type) = match &source {
            Source::Il(b) => (Some(b.clone()), CL_PROGRAM_BINARY_TYPE_NONE),
            Source::Binary(b) => {
                let (spirv, ty) = crate::binary::split_type(b);
                (
                    Some(spirv),
                    ty.map_or(CL_PROGRAM_BINARY_TYPE_COMPILED_OBJECT, |t| t),
                )
            }
            _ => (None, CL_PROGRAM_BINARY_TYPE_NONE),
        };
        Arc::new(Program {
            base: Base::new(Tag::Program),
            context,
            source,
            state: Mutex::new(BuildState {
                status: CL_BUILD_NONE,
                log: String::new(),
                options: String::new(),
                binary_type: binary_type as cl_program_binary_type,
                spirv,
                built: None,
                spec_values: HashMap::new(),
                uniform_work_groups: false,
            }),
            kernel_count: AtomicUsize::new(0),
        })
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, BuildState> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    pub fn il(&self) -> Option<&[u8]> {
        match &self.source {
            Source::Il(b) => Some(b),
            _ => None,
        }
    }

    pub fn source_text(&self) -> Option<&str> {
        match &self.source {
            Source::OpenClC(s) => Some(s),
            _ => None,
        }
    }

    pub fn build_status(&self) -> cl_build_status {
        self.lock().status
    }
    pub fn build_log(&self) -> String {
        self.lock().log.clone()
    }
    pub fn build_options(&self) -> String {
        self.lock().options.clone()
    }
    pub fn binary_type(&self) -> cl_program_binary_type {
        self.lock().binary_type
    }
    /// CL_PROGRAM_BINARIES: the SPIR-V with its binary type recorded (binary.rs); empty before
    /// it exists.
    pub fn binary(&self) -> Vec<u8> {
        let st = self.lock();
        st.spirv
            .as_deref()
            .map(|spirv| crate::binary::with_type(spirv, st.binary_type))
            .unwrap_or_default()
    }
    pub fn built(&self) -> Option<Arc<Built>> {
        self.lock().built.clone()
    }

    /// clSetProgramSpecializationConstant: records `value` for the constant with `spec_id`; it
    /// applies to the next build or compile. Only IL programs have specialization constants.
    pub fn set_spec_constant(&self, spec_id: u32, value: &[u8]) -> CLResult<()> {
        let Some(il) = self.il() else {
            return Err(CL_INVALID_PROGRAM);
        };
        let constants = ferrocl_frontend::spec_constants(il).map_err(|_| CL_INVALID_PROGRAM)?;
        let constant = constants
            .iter()
            .find(|c| c.spec_id == spec_id)
            .ok_or(CL_INVALID_SPEC_ID)?;
        if constant.size != value.len() {
            return Err(CL_INVALID_VALUE);
        }
        self.lock().spec_values.insert(spec_id, value.to_vec());
        Ok(())
    }

    fn spec_values(&self) -> HashMap<u32, Vec<u8>> {
        self.lock().spec_values.clone()
    }

    /// Turns the program's source into SPIR-V (OpenCL C through the program cache and clang),
    /// or reports why not. `headers` are clCompileProgram's embedded headers, written to
    /// `header_dir`.
    fn to_spirv(
        &self,
        options: &str,
        spirv: Option<Vec<u8>>,
        headers: &[(String, Vec<u8>)],
        header_dir: Option<&std::path::Path>,
    ) -> Result<crate::program_cache::SourceBuild, String> {
        // Source is compiled again for every build (options such as -D and -I may differ);
        // the program cache makes that cheap when nothing that matters changed.
        match (&self.source, spirv) {
            (Source::OpenClC(src), _) => {
                let config = &self.context.devices[0].config;
                let extensions = config.opencl_c_extensions();
                let undefine = config.clang_undefines();
                let preludes = config.clang_preludes();
                let spirv_extensions = config.llvm_spirv_extensions();
                // FERROCL_CHECKED=on: value names for the reports, as the option asks (and a
                // cache entry of its own).
                let options = if config.settings.checked {
                    format!("{options} -cl-ferrocl-checked")
                } else {
                    options.to_owned()
                };
                let options = options.as_str();
                let request = crate::program_cache::Request {
                    source: src,
                    options,
                    extensions: &extensions,
                    undefine: &undefine,
                    preludes: &preludes,
                    spirv_extensions: &spirv_extensions,
                    headers,
                };
                let clang_options = match header_dir {
                    Some(dir) => format!("{options} -I {}", dir.display()),
                    None => options.to_owned(),
                };
                crate::program_cache::build_opencl_c(
                    &config.settings,
                    &request,
                    &clang_options,
                    header_dir,
                )
            }
            (_, Some(spirv)) => Ok(crate::program_cache::SourceBuild {
                spirv,
                log: String::new(),
                cache: String::new(),
                elapsed: std::time::Duration::ZERO,
            }),
            _ => Err("error: the program has no source, IL or binary to build\n".into()),
        }
    }

    /// Starts a build or compile: checks it is allowed, marks it in progress (so other threads
    /// querying the program are not blocked while clang and the JIT run) and returns the
    /// SPIR-V known so far.
    fn begin(&self, options: &str) -> CLResult<Option<Vec<u8>>> {
        let mut st = self.lock();
        if self.kernel_count.load(Ordering::Acquire) > 0 || st.status == CL_BUILD_IN_PROGRESS {
            return Err(CL_INVALID_OPERATION);
        }
        if matches!(self.source, Source::OpenClC(_))
            && !self.context.devices[0].config.compiler_available()
        {
            st.status = CL_BUILD_ERROR;
            st.log = "error: no OpenCL C compiler (clang-15) is available\n".into();
            return Err(CL_COMPILER_NOT_AVAILABLE);
        }
        st.status = CL_BUILD_IN_PROGRESS;
        st.options = options.to_owned();
        st.built = None;
        Ok(st.spirv.clone())
    }

    /// Parses build or compile options; a refused option is named in the build log.
    fn parse_options(&self, options: &str) -> CLResult<ParsedOptions> {
        let device = &self.context.devices[0].config;
        let from_il = self.source.is_il();
        parse_options_or_explain(options)
            .and_then(|p| check_language_version(&p, device).map(|()| p))
            // Argument info is for programs created from OpenCL C source (API spec 3.1
            // §5.9.4, clGetKernelArgInfo: "only available if the program object ... is
            // created with clCreateProgramWithSource"): IL takes the option and gives none.
            .map(|mut p| {
                p.kernel_arg_info &= !from_il;
                p.apply_context(&self.context);
                p
            })
            .map_err(|log| {
                let mut st = self.lock();
                if st.status != CL_BUILD_IN_PROGRESS {
                    st.log = log;
                }
                CL_INVALID_BUILD_OPTIONS
            })
    }

    /// Records the result of a build or compile.
    fn finish(&self, result: StepResult, binary_type: u32, uniform: bool) -> BuildOutcome {
        let mut st = self.lock();
        match result {
            Ok((spirv, built, log)) => {
                st.uniform_work_groups = uniform;
                st.spirv = Some(spirv);
                st.status = CL_BUILD_SUCCESS;
                st.log = log;
                st.binary_type = binary_type as cl_program_binary_type;
                st.built = built.map(Arc::new);
                BuildOutcome::Ok
            }
            Err((spirv, failure)) => {
                if spirv.is_some() {
                    st.spirv = spirv;
                }
                st.status = CL_BUILD_ERROR;
                let outcome = failure.outcome();
                st.log = failure.log;
                outcome
            }
        }
    }

    /// clBuildProgram: source → SPIR-V → parse/validate → codegen.
    pub fn build(&self, options: &str) -> CLResult<BuildOutcome> {
        ensure_build_headroom(self.source_len())?;
        crate::live_thread::on_live_thread(|| self.build_here(options))
    }

    /// Bytes of the program's own input (source, IL or binary).
    fn source_len(&self) -> usize {
        match &self.source {
            Source::Il(b) | Source::Binary(b) => b.len(),
            Source::OpenClC(s) => s.len(),
            Source::Linked => self.lock().spirv.as_ref().map_or(0, Vec::len),
        }
    }

    fn build_here(&self, options: &str) -> CLResult<BuildOutcome> {
        let parsed = self.parse_options(options)?;
        let uniform = parsed.requires_uniform_work_groups(&self.source)
            // Rebuilding a linked program keeps what its inputs required.
            || (matches!(self.source, Source::Linked) && self.lock().uniform_work_groups);
        let known = self.begin(options)?;
        let source_is_c = matches!(self.source, Source::OpenClC(_));
        let result = self
            .to_spirv(options, known, &[], None)
            .map_err(|log| (None, log.into()))
            .and_then(|from_source| {
                let code = build_for_device(
                    &self.context.devices[0].config,
                    &from_source.spirv,
                    &self.spec_values(),
                    &parsed,
                    source_is_c.then_some(&from_source),
                );
                let spirv = from_source.spirv;
                match code {
                    Ok(DeviceBuild {
                        code,
                        log,
                        tier_cache,
                    }) => Ok((
                        spirv,
                        Some(Built::new(code, parsed, uniform, tier_cache)),
                        from_source.log + &log,
                    )),
                    Err(failure) => Err((Some(spirv), failure.after(&from_source.log))),
                }
            });
        Ok(self.finish(result, CL_PROGRAM_BINARY_TYPE_EXECUTABLE, uniform))
    }

    /// clCompileProgram: source → SPIR-V (validated), kept as a compiled object. Embedded
    /// headers (`#include "name"`) are written to a temporary directory put on the include path.
    pub fn compile(&self, options: &str, headers: &[(String, Vec<u8>)]) -> CLResult<BuildOutcome> {
        let header_bytes: usize = headers.iter().map(|(_, h)| h.len()).sum();
        ensure_build_headroom(self.source_len() + header_bytes)?;
        crate::live_thread::on_live_thread(|| self.compile_here(options, headers))
    }

    fn compile_here(&self, options: &str, headers: &[(String, Vec<u8>)]) -> CLResult<BuildOutcome> {
        let uniform = self
            .parse_options(options)?
            .requires_uniform_work_groups(&self.source);
        let header_dir = HeaderDir::new(headers).map_err(|_| CL_OUT_OF_HOST_MEMORY)?;
        let known = self.begin(options)?;
        let result = self
            .to_spirv(
                options,
                known,
                headers,
                header_dir.as_ref().map(|d| d.0.as_path()),
            )
            .map_err(|log| (None, log.into()))
            .and_then(|from_source| {
                let spirv = from_source.spirv;
                match ferrocl_frontend::parse_specialized(&spirv, &self.spec_values()) {
                    Ok(module) => Ok((spirv, None, from_source.log + &warnings_log(&module))),
                    Err(e) => Err((Some(spirv), (from_source.log + &e.log()).into())),
                }
            });
        Ok(self.finish(result, CL_PROGRAM_BINARY_TYPE_COMPILED_OBJECT, uniform))
    }

    /// clLinkProgram: compiled objects and libraries become one SPIR-V module (imports resolved
    /// to exports by name, see `ferrocl_frontend::link`), then an executable — or, with
    /// `-create-library`, a library that later links may take as input.
    pub fn link(
        context: Arc<Context>,
        inputs: &[Arc<Program>],
        options: &str,
    ) -> CLResult<(Arc<Program>, BuildOutcome)> {
        let input_bytes = inputs.iter().map(|p| p.source_len()).sum();
        ensure_build_headroom(input_bytes)?;
        crate::live_thread::on_live_thread(|| Program::link_here(context, inputs, options))
    }

    fn link_here(
        context: Arc<Context>,
        inputs: &[Arc<Program>],
        options: &str,
    ) -> CLResult<(Arc<Program>, BuildOutcome)> {
        let link_options = parse_link_options(options)?;
        let mut spirv_inputs = Vec::new();
        let mut parsed = ParsedOptions::default();
        // Non-uniform work-groups only when every input allows them (API spec,
        // clEnqueueNDRangeKernel). An input never compiled here (a binary) only knows the
        // options it carries.
        let mut uniform = false;
        for (index, p) in inputs.iter().enumerate() {
            let st = p.lock();
            let linkable = st.binary_type
                == CL_PROGRAM_BINARY_TYPE_COMPILED_OBJECT as cl_program_binary_type
                || st.binary_type == CL_PROGRAM_BINARY_TYPE_LIBRARY as cl_program_binary_type;
            let compiled = st.status == CL_BUILD_SUCCESS || matches!(p.source, Source::Binary(_));
            let Some(spirv) = st.spirv.clone().filter(|_| linkable && compiled) else {
                return Err(CL_INVALID_OPERATION);
            };
            // The executable keeps what the inputs were compiled with (optimisation, argument
            // info); the link's own math options are added on top.
            let mut compiled_with = parse_options(&st.options).unwrap_or_default();
            // As for a build: an input made from IL has no argument info to keep.
            compiled_with.kernel_arg_info &= !p.source.is_il();
            uniform |= st.uniform_work_groups || compiled_with.codegen.uniform_work_group_size;
            if index == 0 {
                parsed = compiled_with;
            } else {
                parsed.kernel_arg_info |= compiled_with.kernel_arg_info;
                parsed.codegen.optimize &= compiled_with.codegen.optimize;
            }
            spirv_inputs.push((spirv, st.spec_values.clone()));
        }
        link_options.apply(&mut parsed);
        parsed.apply_context(&context);
        let out = Program::new(context, Source::Linked);
        let mut st = out.lock();
        st.options = options.to_owned();
        st.uniform_work_groups = uniform;
        let refs: Vec<(&[u8], &ferrocl_frontend::SpecValues)> = spirv_inputs
            .iter()
            .map(|(s, v)| (s.as_slice(), v))
            .collect();
        let linked = ferrocl_frontend::link(&refs, link_options.create_library);
        let result = match linked {
            Err(e) => Err(StepFailure::from(e.log())),
            Ok(linked) => {
                st.spirv = Some(linked.spirv.clone());
                if link_options.create_library {
                    Ok((None, String::new()))
                } else {
                    build_for_device(
                        &out.context.devices[0].config,
                        &linked.spirv,
                        &HashMap::new(),
                        &parsed,
                        None,
                    )
                    .map(|b| (Some((b.code, b.tier_cache)), b.log))
                }
            }
        };
        let outcome = match result {
            Ok((code, warnings)) => {
                st.status = CL_BUILD_SUCCESS;
                st.log = warnings;
                st.binary_type = if link_options.create_library {
                    CL_PROGRAM_BINARY_TYPE_LIBRARY
                } else {
                    CL_PROGRAM_BINARY_TYPE_EXECUTABLE
                } as cl_program_binary_type;
                st.built = code.map(|(code, tier_cache)| {
                    Arc::new(Built::new(code, parsed, uniform, tier_cache))
                });
                BuildOutcome::Ok
            }
            Err(failure) => {
                st.status = CL_BUILD_ERROR;
                let outcome = failure.outcome();
                st.log = failure.log;
                outcome
            }
        };
        drop(st);
        Ok((out, outcome))
    }
}

/// `clLinkProgram` options (OpenCL 3.0 section 5.8.6.3).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LinkOptions {
    pub create_library: bool,
    pub enable_link_options: bool,
    pub denorms_are_zero: bool,
    pub no_signed_zeros: bool,
    pub unsafe_math_optimizations: bool,
    pub finite_math_only: bool,
    pub fast_relaxed_math: bool,
}

impl LinkOptions {
    fn apply(&self, p: &mut ParsedOptions) {
        let c = &mut p.codegen;
        c.denorms_are_zero |= self.denorms_are_zero;
        c.no_signed_zeros |= self.no_signed_zeros | self.unsafe_math_optimizations;
        c.unsafe_math_optimizations |= self.unsafe_math_optimizations | self.fast_relaxed_math;
        c.mad_enable |= self.unsafe_math_optimizations | self.fast_relaxed_math;
        c.finite_math_only |= self.finite_math_only | self.fast_relaxed_math;
        c.fast_relaxed_math |= self.fast_relaxed_math;
        c.no_signed_zeros |= self.fast_relaxed_math;
    }
}

/// Parses a `clLinkProgram` option string; anything else is CL_INVALID_LINKER_OPTIONS, as is
/// `-enable-link-options` without `-create-library`.
pub fn parse_link_options(options: &str) -> CLResult<LinkOptions> {
    let mut o = LinkOptions::default();
    for w in ferrocl_opencl_c::split_build_options(options) {
        match w.as_str() {
            "-create-library" => o.create_library = true,
            "-enable-link-options" => o.enable_link_options = true,
            "-cl-denorms-are-zero" => o.denorms_are_zero = true,
            "-cl-no-signed-zeros" => o.no_signed_zeros = true,
            "-cl-unsafe-math-optimizations" => o.unsafe_math_optimizations = true,
            "-cl-finite-math-only" => o.finite_math_only = true,
            "-cl-fast-relaxed-math" => o.fast_relaxed_math = true,
            // As for clBuildProgram: forward progress is kept whatever the program promises.
            "-cl-no-subgroup-ifp" => {}
            _ => return Err(CL_INVALID_LINKER_OPTIONS),
        }
    }
    if o.enable_link_options && !o.create_library {
        return Err(CL_INVALID_LINKER_OPTIONS);
    }
    Ok(o)
}

/// Address space a build may need beyond its input's size: the frontend's tables, Cranelift's
/// IR and the JIT's code for a large module stay well below it.
const BUILD_HEADROOM_BYTES: usize = 64 << 20;
/// Address space per byte of input (module words, tables and IR grow with the input).
const BUILD_HEADROOM_PER_INPUT_BYTE: usize = 64;

/// CL_OUT_OF_HOST_MEMORY unless the address space a build of `input_bytes` needs is there.
/// A build allocates as it goes, and an allocation that fails midway aborts the process (Rust's
/// allocation-failure handler); reserving the headroom first — virtual memory only, released at
/// once — turns a nearly exhausted address space (`ulimit -v`, buffers filling it) into an
/// error code instead.
fn ensure_build_headroom(input_bytes: usize) -> CLResult<()> {
    let need = input_bytes
        .saturating_mul(BUILD_HEADROOM_PER_INPUT_BYTE)
        .saturating_add(BUILD_HEADROOM_BYTES);
    let mut probe: Vec<u8> = Vec::new();
    probe
        .try_reserve_exact(need)
        .map_err(|_| CL_OUT_OF_HOST_MEMORY)
}

/// SPIR-V → validated module → machine code for this device: the module may only use the
/// capabilities the device's settings leave on, and the device's float settings (FTZ, default
/// rounding) and dump directory reach the code generator. With the program cache on, machine
/// code cached for the same module, options and target is loaded instead (no frontend, no
/// codegen), and what is compiled is stored. `from_source` is the OpenCL C step that made
/// `spirv`, for the timing line.
fn build_for_device(
    config: &DeviceConfig,
    spirv: &[u8],
    spec_values: &HashMap<u32, Vec<u8>>,
    parsed: &ParsedOptions,
    from_source: Option<&crate::program_cache::SourceBuild>,
) -> Result<DeviceBuild, StepFailure> {
    let start = std::time::Instant::now();
    let settings = &config.settings;
    let info = settings.log >= LogLevel::Info;
    let mut options = codegen_options(config, parsed);
    let cache = CodeCache::new(settings, &options, spirv, spec_values);
    log(
        settings,
        LogLevel::Debug,
        format_args!(
            "program cache: machine-code key in {:.2} ms",
            ms(start.elapsed())
        ),
    );
    let mut miss = None;
    if let Some(cache) = &cache {
        match cache.load(config, &options, spirv, spec_values) {
            Ok((code, warnings, requirements)) => {
                let steps = format!(
                    "machine code {:.2} ms (program cache: hit)",
                    ms(start.elapsed())
                );
                log_built(settings, &code, from_source, &steps, start);
                let note = if info {
                    format!(
                        "info: machine code from the program cache ({})\n",
                        cache.key.path(cache.dir).display()
                    )
                } else {
                    String::new()
                };
                return Ok(DeviceBuild {
                    tier_cache: cache.tier_cache(options.tiered, requirements),
                    code,
                    log: note + &warnings,
                });
            }
            Err(why) => miss = Some(why),
        }
    }
    let module = config
        .features
        .parse(spirv, spec_values)
        .map_err(|e| e.log())?;
    let warnings = warnings_log(&module);
    let frontend = start.elapsed();
    options.serializable = cache.is_some();
    let tiered = options.tiered;
    let (mut code, codegen) = build_module(config, spirv, &module, options)
        .map_err(|failure| failure.after(&warnings))?;
    let mut steps = format!(
        "frontend {:.2} ms, codegen {:.2} ms",
        ms(frontend),
        ms(codegen)
    );
    let mut note = String::new();
    let mut tier_cache = None;
    if let (Some(cache), Some(miss)) = (&cache, &miss) {
        steps += &format!(" (program cache: miss, {miss})");
        let requirements = CodeCache::requirements(&module);
        let outcome = cache.store(settings, &mut code, &requirements, &warnings);
        if info {
            note = format!("info: machine code compiled ({miss}); {outcome}\n");
        }
        tier_cache = cache.tier_cache(tiered, requirements);
    }
    log_built(settings, &code, from_source, &steps, start);
    Ok(DeviceBuild {
        code,
        log: note + &warnings,
        tier_cache,
    })
}

/// What [`build_for_device`] made.
struct DeviceBuild {
    code: ferrocl_codegen::Program,
    /// The build log's part: the legacy forms accepted, and the cache's line at
    /// `FERROCL_LOG=info`.
    log: String,
    /// Where the tiered runtime keeps the kernels' wide builds, when it does.
    tier_cache: Option<crate::tiering::TierCache>,
}

fn ms(d: std::time::Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

/// The `FERROCL_LOG=info` line of a finished build: `steps` are the times of the SPIR-V part
/// (frontend and codegen, or the cached machine code's load) since `start`.
fn log_built(
    settings: &Settings,
    code: &ferrocl_codegen::Program,
    from_source: Option<&crate::program_cache::SourceBuild>,
    steps: &str,
    start: std::time::Instant,
) {
    log_kernels(settings, code);
    let source_step = from_source.map_or(std::time::Duration::ZERO, |s| s.elapsed);
    log(
        settings,
        LogLevel::Info,
        format_args!(
            "built {} kernel(s), {} SPIR-V instructions: {}{steps}, total {:.2} ms",
            code.kernels().len(),
            code.kernels()
                .iter()
                .map(|k| k.instruction_count)
                .sum::<usize>(),
            from_source.map_or(String::new(), |s| format!(
                "OpenCL C {:.2} ms (program cache: {}), ",
                ms(s.elapsed),
                s.cache
            )),
            // The checks between the steps count in the total only.
            ms(source_step + start.elapsed())
        ),
    );
}

/// The build-log lines of the legacy forms the frontend accepted in `module`.
fn warnings_log(module: &ferrocl_frontend::Module) -> String {
    module.warnings.iter().map(|w| format!("{w}\n")).collect()
}

/// What codegen gets for a build with `parsed` on this device: the device's float settings
/// (FTZ, default rounding), sub-groups, vectorisation, the watchdog and checked mode. The dump
/// directory is added by [`build_module`].
fn codegen_options(config: &DeviceConfig, parsed: &ParsedOptions) -> BuildOptions {
    let settings = &config.settings;
    let mut options = parsed.codegen.clone();
    options.denorms_are_zero |= settings.flush_denormals;
    options.round_to_zero = settings.rounding == Rounding::TowardZero;
    options.sub_groups = config.has(crate::features::FeatureId::SubGroups);
    // One Cranelift compilation per kernel at once, as many as the device has workers.
    options.threads = settings.threads;
    // -cl-opt-disable asks for the plain translation.
    options.vectorize = settings.vectorize && options.optimize;
    // Tiered: Cranelift now, and the program keeps its module for the wide build of the
    // kernels that turn out to be hot (tiering.rs).
    (options.backend, options.tiered) = match settings.backend {
        crate::settings::BackendSetting::Tiered => (ferrocl_codegen::Backend::Cranelift, true),
        crate::settings::BackendSetting::Cranelift => (ferrocl_codegen::Backend::Cranelift, false),
        crate::settings::BackendSetting::Wide => (ferrocl_codegen::Backend::Wide, false),
    };
    // The runtime hands every launch a stop word, so kernels read it only when a deadline or
    // a termination (set by Program::parse_options) can set it.
    options.stop_checks |= settings.kernel_timeout.is_some();
    options.checked |= settings.checked;
    options
}

/// Why the device refuses `module` under its settings (a build-log line), if it does: what the
/// feature table says a module may not hold while a feature is off (half values without fp16,
/// the all-devices scope without SVM). Capabilities turned off were refused by the frontend's
/// gate, which the table also sets.
fn refusals(config: &DeviceConfig, module: &ferrocl_frontend::Module) -> Option<String> {
    config
        .features
        .refused_uses()
        .find_map(|u| match u {
            ModuleUse::HalfValues => module.first_half_value(),
            ModuleUse::AllDevicesScope => module.first_all_devices_scope(),
        })
        .map(|d| format!("{d}\n"))
}

/// The machine-code half of the program cache for one build: where its entry is.
struct CodeCache<'a> {
    dir: &'a std::path::Path,
    key: crate::program_cache::CodeKey,
}

impl<'a> CodeCache<'a> {
    /// None when the cache is off, or when dumps are asked for (they come from compiling).
    fn new(
        settings: &'a Settings,
        options: &BuildOptions,
        spirv: &[u8],
        spec_values: &HashMap<u32, Vec<u8>>,
    ) -> Option<CodeCache<'a>> {
        let dir = settings.cache_dir.as_deref()?;
        if settings.dump_dir.is_some() {
            return None;
        }
        // A host the JIT does not support fails the build itself, later.
        let target = ferrocl_codegen::code_identity(options).ok()?;
        let key = crate::program_cache::CodeKey::new(&crate::program_cache::CodeRequest {
            spirv,
            spec_values,
            options: &options.code_fingerprint(),
            target,
        });
        Some(CodeCache { dir, key })
    }

    /// The cached program and its warnings, or why there is none to use: the entry is missing
    /// or damaged, this device's settings refuse the module (the build then reports why), or
    /// a kernel's work-group attributes do not fit the device.
    fn load(
        &self,
        config: &DeviceConfig,
        options: &BuildOptions,
        spirv: &[u8],
        spec_values: &HashMap<u32, Vec<u8>>,
    ) -> Result<(ferrocl_codegen::Program, String, CodeEntry), String> {
        let read_start = std::time::Instant::now();
        let settings = &config.settings;
        let entry =
            crate::program_cache::lookup_code(self.dir, &self.key, settings.cache_max_bytes)
                .map_err(|m| m.to_string())?;
        let read = read_start.elapsed();
        let refused = config.features.refuses(&entry.capabilities, |u| match u {
            ModuleUse::HalfValues => entry.uses_half,
            ModuleUse::AllDevicesScope => entry.all_devices_scope,
        });
        if refused {
            return Err("cached for other device settings".into());
        }
        // Specialised builds of image kernels start from the module again.
        let (spirv, spec_values) = (spirv.to_vec(), spec_values.clone());
        let parse: ferrocl_codegen::ModuleSource = Box::new(move || {
            ferrocl_frontend::parse_specialized(&spirv, &spec_values)
                .map_err(|e| ferrocl_codegen::BuildError::new(e.log()))
        });
        let code = ferrocl_codegen::Program::load(&entry.program, options, parse).map_err(|e| {
            // Memory running out says nothing of the entry: it stays, and the compile that
            // follows reports the shortage if it lasts.
            if e.out_of_memory {
                return format!(
                    "the cached machine code could not be loaded: {}",
                    e.log.trim_end()
                );
            }
            crate::program_cache::remove_code(self.dir, &self.key);
            format!(
                "the cached machine code could not be loaded; removed: {}",
                e.log.trim_end()
            )
        })?;
        if code
            .kernels()
            .iter()
            .any(|k| crate::kernel::check_work_group_attributes(&k.info, config).is_err())
        {
            return Err("cached for other device settings".into());
        }
        log(
            settings,
            LogLevel::Debug,
            format_args!(
                "program cache: {} bytes of machine code read in {:.2} ms, loaded in {:.2} ms",
                entry.program.len(),
                ms(read),
                ms(read_start.elapsed() - read)
            ),
        );
        Ok((
            code,
            entry.warnings,
            CodeEntry {
                program: Vec::new(),
                warnings: String::new(),
                ..entry
            },
        ))
    }

    /// What the device must allow for `module` to build (see [`CodeEntry`]), without a program.
    fn requirements(module: &ferrocl_frontend::Module) -> CodeEntry {
        CodeEntry {
            program: Vec::new(),
            warnings: String::new(),
            capabilities: module.capabilities().map(|c| c as u32).collect(),
            uses_half: module.first_half_value().is_some(),
            all_devices_scope: module.first_all_devices_scope().is_some(),
        }
    }

    /// Where a tiered build keeps its kernels' wide builds: beside this entry.
    fn tier_cache(
        &self,
        tiered: bool,
        requirements: CodeEntry,
    ) -> Option<crate::tiering::TierCache> {
        tiered.then(|| crate::tiering::TierCache {
            dir: self.dir.to_owned(),
            key: self.key.clone(),
            requirements,
        })
    }

    /// Stores what `code` serialized to (built from `module`, with the build log's `warnings`);
    /// says what became of it.
    fn store(
        &self,
        settings: &Settings,
        code: &mut ferrocl_codegen::Program,
        requirements: &CodeEntry,
        warnings: &str,
    ) -> String {
        let program = match code.take_serialized() {
            Some(Ok(program)) => program,
            Some(Err(why)) => return format!("not cacheable: {why}"),
            None => return "not cacheable".into(),
        };
        let entry = CodeEntry {
            program,
            warnings: warnings.to_owned(),
            ..requirements.clone()
        };
        match crate::program_cache::store_code(
            self.dir,
            &self.key,
            &entry,
            settings.cache_max_bytes,
        ) {
            Ok(()) => format!(
                "stored in the program cache ({})",
                self.key.path(self.dir).display()
            ),
            Err(e) => {
                log(
                    settings,
                    LogLevel::Info,
                    format_args!("program cache: not stored in {}: {e}", self.dir.display()),
                );
                format!("not stored in the program cache: {e}")
            }
        }
    }
}

/// The checks of a parsed module against the device's settings, then codegen; the program and
/// the time codegen took.
fn build_module(
    config: &DeviceConfig,
    spirv: &[u8],
    module: &ferrocl_frontend::Module,
    mut options: BuildOptions,
) -> Result<(ferrocl_codegen::Program, std::time::Duration), StepFailure> {
    static PROGRAMS: AtomicUsize = AtomicUsize::new(0);
    let settings = &config.settings;
    let unresolved = ferrocl_frontend::unresolved_imports(module);
    if !unresolved.is_empty() {
        return Err(unresolved.concat().into());
    }
    if let Some(refused) = refusals(config, module) {
        return Err(refused.into());
    }
    if let Some(dir) = &settings.dump_dir {
        let dir = dir.join(format!(
            "program-{}",
            PROGRAMS.fetch_add(1, Ordering::Relaxed)
        ));
        if let Err(e) = std::fs::create_dir_all(&dir)
            .and_then(|()| std::fs::write(dir.join("input.spv"), spirv))
        {
            log(
                settings,
                LogLevel::Warn,
                format_args!("cannot write {}: {e}", dir.display()),
            );
        }
        options.dump_dir = Some(dir);
    }
    let unlaunchable: String = module
        .kernels
        .iter()
        .filter_map(|k| crate::kernel::check_work_group_attributes(k, config).err())
        .collect();
    if !unlaunchable.is_empty() {
        return Err(unlaunchable.into());
    }
    let codegen_start = std::time::Instant::now();
    let code = ferrocl_codegen::compile(module, &options)?;
    Ok((code, codegen_start.elapsed()))
}

/// The `FERROCL_LOG=debug` line of each kernel of a build (compiled or from the cache).
fn log_kernels(settings: &Settings, code: &ferrocl_codegen::Program) {
    for k in code.kernels() {
        log_kernel_shape(settings, k, "");
    }
}

/// The debug line describing how one kernel was built (`what` says which build, for
/// specialisations).
pub(crate) fn log_kernel_shape(settings: &Settings, k: &ferrocl_codegen::Kernel, what: &str) {
    log(
        settings,
        LogLevel::Debug,
        format_args!(
            "kernel {}{what}: {} SPIR-V instructions, {} argument bytes, {} bytes of __local variables, {} private bytes, {} frame bytes per work-item, barrier schedule {:?}, {}{}",
            k.info.name, k.instruction_count, k.args_size, k.static_local_mem_size, k.private_mem_size, k.work_item_frame_size, k.barrier_schedule,
            match &k.vectorization {
                ferrocl_codegen::Vectorization::Vectorized { lanes } => format!("vectorised ({lanes} work-items per iteration)"),
                ferrocl_codegen::Vectorization::Scalar(why) => format!("scalar ({why})"),
                ferrocl_codegen::Vectorization::ExplicitVectors => "one work-item at a time, its vectors in SIMD registers".to_owned(),
            },
            match (k.backend(), k.wide_refusal()) {
                (ferrocl_codegen::Backend::Wide, _) => ", code by the wide backend (LLVM)".to_owned(),
                (ferrocl_codegen::Backend::Cranelift, Some(why)) => format!(", code by Cranelift (the wide backend refused it: {why})"),
                (ferrocl_codegen::Backend::Cranelift, None) => ", code by Cranelift".to_owned(),
            }
        ),
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn options() {
        let p = parse_options("-cl-fast-relaxed-math -D X=\"a b\" -DY -I /tmp -cl-std=CL3.0 -w")
            .unwrap();
        assert!(p.codegen.fast_relaxed_math && p.codegen.mad_enable);
        assert!(!parse_options("-cl-opt-disable").unwrap().codegen.optimize);
        assert!(
            parse_options("-cl-kernel-arg-info")
                .unwrap()
                .kernel_arg_info
        );
        assert_eq!(parse_options("-bogus"), Err(CL_INVALID_BUILD_OPTIONS));
        // OpenCL 3.0 5.8.6.4: accepted when the device supports sub-groups (CTS compiler
        // options_build_optimizations).
        assert!(parse_options("-cl-std=CL3.0 -cl-no-subgroup-ifp").is_ok());
        assert_eq!(
            parse_options("-cl-std=CL9.9"),
            Err(CL_INVALID_BUILD_OPTIONS)
        );
        assert_eq!(parse_options("-D"), Err(CL_INVALID_BUILD_OPTIONS));
        // Harmless clang options and the ignored ones are taken; the forwarding ones are not.
        for ok in [
            "-fgnu89-inline",
            "-fno-gnu89-inline",
            "-Wall -Wno-unused-variable -Werror=implicit-function-declaration",
            "-U NAME -UOTHER",
            "-g -cl-strict-aliasing",
        ] {
            assert!(parse_options(ok).is_ok(), "{ok}");
        }
        for bad in ["-Wl,-rpath", "-Wp,-include,x", "-W", "-U", "-fbogus", "-O2"] {
            assert_eq!(parse_options(bad), Err(CL_INVALID_BUILD_OPTIONS), "{bad}");
        }
        assert_eq!(
            parse_options_or_explain("-cl-std=CL3.0 -bogus").unwrap_err(),
            "error: invalid build option \"-bogus\"\n"
        );
        // Quotes group words as a shell's would and are removed.
        assert!(
            parse_options("-I\"/a dir\" -DX=\"a b\" -cl-mad-enable")
                .unwrap()
                .codegen
                .mad_enable
        );
    }

    #[test]
    fn which_programs_need_uniform_work_groups() {
        let source = Source::OpenClC(String::new());
        let il = Source::Il(Vec::new());
        let uniform = |options: &str, src: &Source| {
            parse_options(options)
                .unwrap()
                .requires_uniform_work_groups(src)
        };
        assert!(uniform("", &source), "OpenCL C defaults to CL1.2");
        assert!(uniform("-cl-std=CL1.2", &source));
        assert!(!uniform("-cl-std=CL3.0", &source));
        assert!(uniform(
            "-cl-std=CL3.0 -cl-uniform-work-group-size",
            &source
        ));
        assert!(!uniform("", &il));
        assert!(
            !uniform("-cl-std=CL1.2", &il),
            "-cl-std does not apply to IL"
        );
        assert!(uniform("-cl-uniform-work-group-size", &il));
        assert_eq!(parse_options("-cl-std=CL3.0").unwrap().cl_std, Some((3, 0)));
    }

    /// `-cl-std=CL3.1` needs OpenCL C 3.1 in the device's list: an OpenCL 3.1 device has it,
    /// the OpenCL 3.0 device of `FERROCL_SUBGROUPS=off` does not (CL_INVALID_BUILD_OPTIONS).
    #[test]
    fn opencl_c_3_1_needs_a_device_listing_it() {
        use crate::config::DeviceConfig;
        use crate::settings::Settings;
        let v31 = DeviceConfig::detect(&Settings::parse(|_| None, |_| {}), 1);
        let v30 = DeviceConfig::detect(
            &Settings::parse(
                |k| (k == "FERROCL_SUBGROUPS").then(|| "off".to_owned()),
                |_| {},
            ),
            1,
        );
        assert_eq!((v31.version(), v30.version()), ((3, 1), (3, 0)));
        let p = parse_options("-cl-std=CL3.1").unwrap();
        assert_eq!(p.cl_std, Some((3, 1)));
        assert_eq!(check_language_version(&p, &v31), Ok(()));
        let log = check_language_version(&p, &v30).unwrap_err();
        assert!(log.contains("OpenCL C 3.1"), "{log}");
        for std in [
            "",
            "-cl-std=CL1.0",
            "-cl-std=CL1.1",
            "-cl-std=CL1.2",
            "-cl-std=CL3.0",
        ] {
            let p = parse_options(std).unwrap();
            assert_eq!(check_language_version(&p, &v30), Ok(()), "{std}");
            assert_eq!(check_language_version(&p, &v31), Ok(()), "{std}");
        }
        assert_eq!(
            parse_options("-cl-std=CL3.2"),
            Err(CL_INVALID_BUILD_OPTIONS)
        );
    }
}
