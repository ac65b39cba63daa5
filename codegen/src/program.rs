//! A compiled program: the JIT module that owns the machine code, and one [`Kernel`] per entry
//! point with its argument-block layout and resource needs.

use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use cranelift_jit::JITModule;
use cranelift_module::Module as _;
use ferrocl_frontend::{KernelInfo, Module, PrintfFormat};

use crate::abi::{ArgSlot, GroupInfo, WorkGroupFn};
use crate::options::BuildOptions;

pub use crate::error::BuildError;

/// One compiled kernel. Its code lives as long as the [`Program`] that holds it.
pub struct Kernel {
    pub info: KernelInfo,
    /// Argument block layout, one slot per `info.args` entry.
    pub args: Vec<ArgSlot>,
    /// Size of the argument block in bytes.
    pub args_size: usize,
    /// Bytes of the `Workgroup` variables this kernel reaches (not the whole module's); they
    /// occupy the start of the local-memory arena, `__local` arguments follow (aligned to
    /// `LOCAL_ARG_ALIGN`).
    pub static_local_mem_size: usize,
    /// Bytes of private memory one work-item needs, for `CL_KERNEL_PRIVATE_MEM_SIZE`: its
    /// function-storage variables, or with barriers its whole frame (`work_item_frame_size`),
    /// which holds them and the values live across barriers.
    pub private_mem_size: usize,
    /// Number of SPIR-V instructions translated (statistics for build-time reporting).
    pub instruction_count: usize,
    /// Bytes of frame each work-item needs when the kernel has barriers (0 otherwise): its
    /// resume point and the values live across barriers. See [`GroupInfo::frames`].
    pub work_item_frame_size: usize,
    /// How the kernel's work-groups pass their barriers.
    pub barrier_schedule: BarrierSchedule,
    /// Whether work-items run side by side in vector lanes, or why not.
    pub vectorization: Vectorization,
    /// Formats of the kernel's printf calls, indexed by a record's format index; empty when the
    /// kernel never prints, else each launch needs a printf buffer (see [`GroupInfo`]).
    pub printf_formats: Vec<PrintfFormat>,
    /// Built in checked mode (checked.rs): each launch needs a [`crate::CheckedLaunch`] and
    /// the argument block's bounds pairs.
    pub checked: bool,
    /// The checks of a checked kernel, indexed by a [`crate::Fault`]'s site.
    pub check_sites: Vec<crate::CheckSite>,
    /// Bytes of the work-group function's machine stack frame that hold registers — spill
    /// slots, saved callee-saved registers, outgoing call arguments — rather than the
    /// kernel's own stack slots (`CL_KERNEL_SPILL_MEM_SIZE_INTEL`); 0 when every value lived
    /// in registers.
    pub spill_mem_size: usize,
    /// The code generator that made the machine code.
    pub(crate) backend: crate::Backend,
    /// The wide backend was asked for and refused this kernel: why (Cranelift made it).
    pub(crate) wide_refusal: Option<String>,
    pub(crate) entry: WorkGroupFn,
}

/// How a kernel's work-group function runs the regions between its barriers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BarrierSchedule {
    /// No barriers: one loop over the work-items.
    None,
    /// Every region has one way out: the regions follow each other in a fixed order and
    /// work-items keep no resume state.
    Static,
    /// Rounds pick the next region from the work-items' resume states.
    Dynamic,
}

/// Whether a kernel's work-items run side by side in the lanes of vectors (vectorize.rs), or
/// one at a time, with or without their own vectors in SIMD registers (vector_pack.rs).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Vectorization {
    /// `lanes` consecutive work-items per iteration of the x loop; the rest one by one.
    Vectorized { lanes: u32 },
    /// One work-item at a time, for this reason (owned when it comes from the program cache).
    Scalar(Cow<'static, str>),
    /// One work-item at a time, its OpenCL vectors computed as SIMD vectors (vector_pack.rs).
    ExplicitVectors,
}

impl Kernel {
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn new(
        info: KernelInfo,
        args: Vec<ArgSlot>,
        args_size: usize,
        static_local_mem_size: usize,
        private_mem_size: usize,
        instruction_count: usize,
        work_item_frame_size: usize,
        barrier_schedule: BarrierSchedule,
        vectorization: Vectorization,
        printf_formats: Vec<PrintfFormat>,
        checked: bool,
        check_sites: Vec<crate::CheckSite>,
        entry: WorkGroupFn,
    ) -> Self {
        Kernel {
            info,
            args,
            args_size,
            static_local_mem_size,
            private_mem_size,
            instruction_count,
            work_item_frame_size,
            barrier_schedule,
            vectorization,
            printf_formats,
            checked,
            check_sites,
            spill_mem_size: 0,
            backend: crate::Backend::Cranelift,
            wide_refusal: None,
            entry,
        }
    }

    pub(crate) fn with_spill_mem_size(mut self, bytes: usize) -> Self {
        self.spill_mem_size = bytes;
        self
    }

    pub(crate) fn with_backend(mut self, backend: crate::Backend, refusal: Option<String>) -> Self {
        self.backend = backend;
        self.wide_refusal = refusal;
        self
    }

    /// The code generator that made this kernel's machine code.
    pub fn backend(&self) -> crate::Backend {
        self.backend
    }

    /// Why the wide backend, asked for, did not make this kernel (Cranelift did); None when
    /// it was not asked for or made it.
    pub fn wide_refusal(&self) -> Option<&str> {
        self.wide_refusal.as_deref()
    }

    /// Runs every work-item of one work-group.
    ///
    /// # Safety
    /// `group.frames` must point at `work_item_frame_size` × (work-items of the group) writable
    /// bytes, 16-byte aligned, when `work_item_frame_size` is not 0. When `printf_formats` is
    /// not empty, `group.printf_buffer` must point at a printf buffer laid out as abi.rs says,
    /// its capacity plus the header writable, shared only with groups of the same launch.
    /// `args` must point at an argument block of `args_size` bytes filled as [`ArgSlot`]
    /// describes, with every buffer pointer valid for the accesses the kernel makes; `local_mem`
    /// must point at an arena of at least `static_local_mem_size` plus the `__local` argument
    /// sizes, aligned to `LOCAL_ARG_ALIGN`, used by no other thread during the call.
    pub unsafe fn run_group(&self, args: *const u8, group: &GroupInfo, local_mem: *mut u8) {
        // SAFETY: the caller upholds the argument contract above; `entry` was produced by
        // `compile` for exactly this ABI and its code is alive while `self` is.
        unsafe { (self.entry)(args, group, local_mem) }
    }
}

/// Machine code for every kernel of one module.
pub struct Program {
    kernels: Vec<Kernel>,
    /// Bytes of program-scope `__global` variables (CL_PROGRAM_BUILD_GLOBAL_VARIABLE_TOTAL_SIZE).
    pub global_variable_bytes: u64,
    /// `[start, end)` of every program-scope `__global` variable's memory: where checked
    /// kernels may reach through pointers of unknown object ([`crate::CheckedLaunch`]).
    pub data_regions: Vec<(u64, u64)>,
    /// `[start, end)` of every program-scope `__constant` variable's memory: read-only pages,
    /// which checked kernels may read but never write.
    pub constant_regions: Vec<(u64, u64)>,
    /// Kernels with image or sampler arguments are built again for each set of formats and
    /// samplers a launch binds ([`Program::specialized`]); the module and options they come
    /// from, and the builds made so far.
    specializer: Option<Specializer>,
    /// Owns the executable pages the kernels point into. `JITModule` is `Send` but not `Sync`;
    /// it is only touched again on drop.
    jit: Mutex<Option<JITModule>>,
    /// With [`BuildOptions::serializable`]: the program in the form the program cache keeps
    /// (serialize.rs), or why it has none.
    pub(crate) serialized: Option<Result<Vec<u8>, String>>,
}

impl Program {
    pub(crate) fn new(
        kernels: Vec<Kernel>,
        jit: JITModule,
        global_variable_bytes: u64,
        data: impl IntoIterator<Item = cranelift_module::DataId>,
    ) -> Self {
        let (mut data_regions, mut constant_regions) = (Vec::new(), Vec::new());
        for id in data {
            let (ptr, size) = jit.get_finalized_data(id);
            let region = (ptr as u64, ptr as u64 + size as u64);
            if jit.declarations().get_data_decl(id).writable {
                data_regions.push(region);
            } else {
                constant_regions.push(region);
            }
        }
        Program {
            kernels,
            global_variable_bytes,
            data_regions,
            constant_regions,
            specializer: None,
            jit: Mutex::new(Some(jit)),
            serialized: None,
        }
    }

    /// The program serialized for the program cache ([`Program::load`] turns it back into a
    /// program), taken out of the program; None unless it was built with
    /// [`BuildOptions::serializable`], an error when something in it cannot be serialized.
    pub fn take_serialized(&mut self) -> Option<Result<Vec<u8>, String>> {
        self.serialized.take()
    }

    pub fn kernels(&self) -> &[Kernel] {
        &self.kernels
    }

    /// The build of one kernel specialised to the formats of its image arguments and the
    /// patterns of its sampler arguments (image.rs then emits one conversion per access and
    /// folds the addressing and filter arithmetic), cached per specialisation. None when the
    /// program has no such kernel; an error when the specialised build fails (the generic
    /// kernel still works). The flag says whether this call built it.
    pub fn specialized(
        &self,
        spec: &crate::Specialization,
    ) -> Option<Result<(Arc<Program>, bool), BuildError>> {
        let sp = self.specializer.as_ref()?;
        let mut built = sp.built.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(p) = built.get(spec) {
            return Some(Ok((p.clone(), false)));
        }
        let program = match self.build_specialization(spec, false)? {
            Ok(p) => Arc::new(p),
            Err(e) => return Some(Err(e)),
        };
        // Bounded: formats and samplers come in few combinations; a program cycling through
        // many starts over rather than growing without end.
        if built.len() >= MAX_SPECIALIZATIONS {
            built.clear();
        }
        built.insert(spec.clone(), program.clone());
        Some(Ok((program, true)))
    }

    /// The options of the specialised build `spec` of this program: what its machine code
    /// depends on ([`BuildOptions::code_fingerprint`], [`crate::code_identity`]) and what
    /// [`Program::load`] takes to load it from its serialized form. None when the program
    /// keeps nothing to specialise.
    pub fn specialization_options(&self, spec: &crate::Specialization) -> Option<BuildOptions> {
        let sp = self.specializer.as_ref()?;
        Some(BuildOptions {
            specialize: Some(spec.clone()),
            serializable: false,
            backend: spec.backend,
            ..sp.options.clone()
        })
    }

    /// Builds the specialisation `spec` without keeping it among the program's builds: the
    /// tiered runtime's wide build of a hot kernel, which it keeps itself and, with
    /// `serializable`, stores in the program cache. None as for [`Program::specialized`].
    pub fn build_specialization(
        &self,
        spec: &crate::Specialization,
        serializable: bool,
    ) -> Option<Result<Program, BuildError>> {
        let sp = self.specializer.as_ref()?;
        let options = BuildOptions {
            serializable,
            ..self.specialization_options(spec)?
        };
        let module = sp.module.get_or_init(|| match &sp.parse {
            Some(parse) => parse(),
            None => Err(BuildError::new("internal: no module to specialise\n")),
        });
        Some(match module {
            Ok(m) => compile(m, &options),
            Err(e) => Err(e.clone()),
        })
    }

    /// Keeps what [`Program::specialized`] needs when a kernel of `module` takes images or
    /// samplers (and this build is not a specialisation itself).
    pub(crate) fn keep_for_specialization(&mut self, module: &Module, options: &BuildOptions) {
        if self.needs_specializer(options) {
            self.specializer = Some(Specializer {
                module: OnceLock::from(Ok(module.clone())),
                parse: None,
                options: options.clone(),
                built: Mutex::new(HashMap::new()),
            });
        }
    }

    /// [`Program::keep_for_specialization`] for a program loaded from its serialized form:
    /// the module is made by `parse` when the first specialisation needs it.
    pub(crate) fn keep_parser_for_specialization(
        &mut self,
        parse: ModuleSource,
        options: &BuildOptions,
    ) {
        if self.needs_specializer(options) {
            self.specializer = Some(Specializer {
                module: OnceLock::new(),
                parse: Some(parse),
                options: options.clone(),
                built: Mutex::new(HashMap::new()),
            });
        }
    }

    /// A kernel takes images or samplers, or the runtime may tier kernels up, and this build
    /// is not a specialisation itself.
    fn needs_specializer(&self, options: &BuildOptions) -> bool {
        if options.tiered && options.specialize.is_none() {
            return true;
        }
        let has_images = self.kernels.iter().any(|k| {
            k.info.args.iter().any(|a| {
                matches!(
                    a.kind,
                    ferrocl_frontend::ArgKind::Image { .. } | ferrocl_frontend::ArgKind::Sampler
                )
            })
        });
        has_images && options.specialize.is_none()
    }

    pub fn kernel(&self, name: &str) -> Option<&Kernel> {
        self.kernels.iter().find(|k| k.info.name == name)
    }
}

/// Specialised builds a program keeps at most.
const MAX_SPECIALIZATIONS: usize = 64;

/// Makes the module a program was built from (for a program loaded from the program cache,
/// which skipped the frontend).
pub type ModuleSource = Box<dyn Fn() -> Result<Module, BuildError> + Send + Sync>;

struct Specializer {
    /// The module, once known: at once for a compiled program, on the first specialisation
    /// (from `parse`) for a loaded one.
    module: OnceLock<Result<Module, BuildError>>,
    parse: Option<ModuleSource>,
    options: BuildOptions,
    built: Mutex<HashMap<crate::Specialization, Arc<Program>>>,
}

impl Drop for Program {
    fn drop(&mut self) {
        let jit = self.jit.get_mut().unwrap_or_else(|p| p.into_inner()).take();
        if let Some(jit) = jit {
            // SAFETY: the kernels' function pointers die with `self`; nothing else refers to
            // this module's code (the runtime keeps the Program alive while kernels run).
            unsafe { jit.free_memory() };
        }
    }
}

/// Compiles every kernel of `module`.
///
/// A panic inside Cranelift on a module the frontend let through is turned into a build error
/// (the backstop; the frontend's validation is the real gate).
pub fn compile(module: &Module, options: &BuildOptions) -> Result<Program, BuildError> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        crate::jit::compile_module(module, options).map(|mut p| {
            p.keep_for_specialization(module, options);
            p
        })
    }))
    .unwrap_or_else(|panic| {
        let what = panic
            .downcast_ref::<String>()
            .map(String::as_str)
            .or_else(|| panic.downcast_ref::<&str>().copied())
            .unwrap_or("unknown panic");
        Err(BuildError::new(format!(
            "internal: the code generator failed on this module: {what}\n"
        )))
    })
}
