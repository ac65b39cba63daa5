//! Build options that change code generation. The runtime parses the `clBuildProgram` option
//! string into this; codegen never sees the string.

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BuildOptions {
    /// `-cl-opt-disable` turns this off: no Cranelift optimisation passes.
    pub optimize: bool,
    /// `-cl-mad-enable` (or implied by `-cl-unsafe-math-optimizations`/`-cl-fast-relaxed-math`):
    /// `a*b+c` may be contracted.
    pub mad_enable: bool,
    pub fast_relaxed_math: bool,
    pub unsafe_math_optimizations: bool,
    pub finite_math_only: bool,
    pub no_signed_zeros: bool,
    pub denorms_are_zero: bool,
    pub fp32_correctly_rounded_divide_sqrt: bool,
    /// `-cl-uniform-work-group-size`.
    pub uniform_work_group_size: bool,
    /// The device's default single-precision rounding is toward zero (the runtime sets the
    /// worker threads' rounding mode). Cranelift's optimiser is off then: its constant folding
    /// rounds to nearest.
    pub round_to_zero: bool,
    /// When set, each kernel's Cranelift IR is written there before (`<kernel>.clif`) and
    /// after optimisation (`<kernel>.opt.clif`), and its machine code as `<kernel>.s`.
    pub dump_dir: Option<std::path::PathBuf>,
    /// Sub-group built-ins, sub-group scope and the non-uniform group instructions are allowed
    /// (`FERROCL_SUBGROUPS=on`); off, a module using them fails to build.
    pub sub_groups: bool,
    /// Barrier-free kernels run four work-items at a time in vector lanes where they can
    /// (vectorize.rs); off with `FERROCL_VECTORIZE=off` or `-cl-opt-disable`.
    pub vectorize: bool,
    /// With `vectorize`: a work-item's explicit OpenCL vectors may run as SIMD vectors
    /// (vector_pack.rs) where that beats four work-items per vector. Off, only the
    /// work-item vectoriser runs (to compare the two).
    pub pack_vectors: bool,
    /// Every loop head reads the launch's stop word ([`crate::GroupInfo::stop`]) and the
    /// work-group function returns when it is set: the kernel watchdog
    /// (`FERROCL_KERNEL_TIMEOUT`). Off, nothing is emitted.
    pub stop_checks: bool,
    /// `cl_khr_initialize_memory`'s private bit (the context asks for it): every private
    /// variable without an initializer starts zeroed, so no value from outside the context
    /// can be read (OpenCL C 3.0 §6.11, restriction on initializing memory). Variables held in
    /// SSA values and `OpUndef` are zero anyway; this covers those in memory (stack slots
    /// here, work-item frames by the runtime). Off, nothing is emitted.
    pub zero_private: bool,
    /// Checked mode (checked.rs): every memory access is bounds-checked against its object,
    /// integer divisors against zero, barriers against divergence; a failed check stops the
    /// launch with a report. Off, nothing is emitted.
    pub checked: bool,
    /// Per-launch specialisation: only this kernel is built, with the formats of its image
    /// arguments and the patterns of its sampler arguments as constants (image.rs then emits
    /// only the conversion of each bound format and folds the sampler's modes).
    pub specialize: Option<Specialization>,
    /// The kernels of a module are compiled by Cranelift on up to this many threads at once
    /// (the runtime gives the device's worker count, `FERROCL_THREADS`).
    pub threads: usize,
    /// Keep the program in serialized form for the program cache
    /// ([`crate::Program::take_serialized`]).
    pub serializable: bool,
    /// Which code generator makes the machine code (see [`Backend`]).
    pub backend: Backend,
    /// The CPU the code is for: how wide the wide backend's vectors are.
    pub target: Target,
    /// The runtime may ask for a kernel's wide build later ([`crate::Program::specialized`]
    /// with [`Specialization::backend`] wide): the program keeps what that build needs.
    /// Changes no code.
    pub tiered: bool,
    /// Tests only (the runtime never sets it): the vector math's scalar fallback
    /// (vectorize/math.rs) returns a NaN marker ([`MATH_FALLBACK_MARKER`]) instead of
    /// calling mathlib, so a test can count the lanes that take it.
    pub math_fallback_marker: bool,
}

/// The bits of the f32 NaN (and, widened, of the f64 NaN: [`MATH_FALLBACK_MARKER_F64`]) the
/// vector math's fallback returns with [`BuildOptions::math_fallback_marker`]: a payload no
/// arithmetic makes.
pub const MATH_FALLBACK_MARKER: u32 = 0x7fc0_fa11;
pub const MATH_FALLBACK_MARKER_F64: u64 = 0x7ff8_0000_0000_fa11;

/// The code generator behind the compile pipeline's last step.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Backend {
    /// Cranelift: builds in milliseconds; vectors of 128 bits (4 work-items per vector).
    #[default]
    Cranelift,
    /// LLVM's code generator in the LLVM server (backend/): vectors as wide as
    /// [`Target::vector_bits`]. A kernel it refuses is made by Cranelift, with the reason in
    /// the build's debug log.
    Wide,
}

/// What the code generator may assume of the CPU. Chosen by the runtime from the host
/// ([`Target::host`]); part of the machine-code cache key, so code never reaches a CPU it was
/// not made for.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Target {
    /// The widest vector register the code may use, in bits: 512 with AVX-512 (F, BW, DQ, VL),
    /// 256 with AVX2 and FMA, else 128.
    pub vector_bits: u32,
}

impl Target {
    /// The machine this process runs on.
    pub fn host() -> Target {
        #[cfg(target_arch = "x86_64")]
        {
            let avx512 = std::arch::is_x86_feature_detected!("avx512f")
                && std::arch::is_x86_feature_detected!("avx512bw")
                && std::arch::is_x86_feature_detected!("avx512dq")
                && std::arch::is_x86_feature_detected!("avx512vl");
            let avx2 = std::arch::is_x86_feature_detected!("avx2")
                && std::arch::is_x86_feature_detected!("fma");
            let vector_bits = if avx512 {
                512
            } else if avx2 {
                256
            } else {
                128
            };
            Target { vector_bits }
        }
        #[cfg(not(target_arch = "x86_64"))]
        Target { vector_bits: 128 }
    }

    /// How many 32-bit lanes one vector register holds.
    pub fn lanes32(&self) -> u32 {
        self.vector_bits / 32
    }
}

impl Default for Target {
    fn default() -> Self {
        Target::host()
    }
}

impl BuildOptions {
    /// Every option that changes the machine code or the kernels' metadata, as text: part of
    /// the program cache's key. The thread count (the code is the same on any number,
    /// tests/parallel_compile.rs), the dump directory and `serializable` are left out.
    pub fn code_fingerprint(&self) -> String {
        // Destructured, so that a new option cannot be forgotten here.
        let BuildOptions {
            optimize,
            mad_enable,
            fast_relaxed_math,
            unsafe_math_optimizations,
            finite_math_only,
            no_signed_zeros,
            denorms_are_zero,
            fp32_correctly_rounded_divide_sqrt,
            uniform_work_group_size,
            round_to_zero,
            dump_dir: _,
            sub_groups,
            vectorize,
            pack_vectors,
            stop_checks,
            zero_private,
            checked,
            specialize,
            threads: _,
            serializable: _,
            backend,
            target,
            tiered: _,
            math_fallback_marker,
        } = self;
        // Cranelift's code is the same on every x86-64 CPU this driver runs on; the wide
        // backend's is made for this CPU (its width and, in the LLVM server, its features).
        let target = match backend {
            Backend::Cranelift => String::new(),
            Backend::Wide => format!(" target={target:?}"),
        };
        format!(
            "optimize={optimize} mad_enable={mad_enable} fast_relaxed_math={fast_relaxed_math} \
             unsafe_math_optimizations={unsafe_math_optimizations} \
             finite_math_only={finite_math_only} no_signed_zeros={no_signed_zeros} \
             denorms_are_zero={denorms_are_zero} \
             fp32_correctly_rounded_divide_sqrt={fp32_correctly_rounded_divide_sqrt} \
             uniform_work_group_size={uniform_work_group_size} round_to_zero={round_to_zero} \
             sub_groups={sub_groups} vectorize={vectorize} pack_vectors={pack_vectors} \
             stop_checks={stop_checks} zero_private={zero_private} \
             checked={checked} specialize={specialize:?} backend={backend:?}{target}\
             {}",
            if *math_fallback_marker {
                " math_fallback_marker"
            } else {
                ""
            }
        )
    }
}

impl Default for BuildOptions {
    fn default() -> Self {
        BuildOptions {
            optimize: true,
            mad_enable: false,
            fast_relaxed_math: false,
            unsafe_math_optimizations: false,
            finite_math_only: false,
            no_signed_zeros: false,
            denorms_are_zero: false,
            fp32_correctly_rounded_divide_sqrt: false,
            uniform_work_group_size: false,
            round_to_zero: false,
            dump_dir: None,
            sub_groups: true,
            vectorize: true,
            pack_vectors: true,
            stop_checks: false,
            zero_private: false,
            checked: false,
            specialize: None,
            threads: std::thread::available_parallelism().map_or(1, |n| n.get()),
            serializable: false,
            backend: Backend::Cranelift,
            target: Target::host(),
            tiered: false,
            math_fallback_marker: false,
        }
    }
}

/// What a launch binds to a kernel's image and sampler arguments (see
/// [`BuildOptions::specialize`]).
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Specialization {
    /// The kernel's name.
    pub kernel: String,
    /// (argument index, what the build may assume) of image arguments.
    pub images: Vec<(usize, ImageKey)>,
    /// (argument index, sampler record) of sampler arguments: its pattern and lod clamps
    /// become constants.
    pub samplers: Vec<(usize, crate::SamplerDescriptor)>,
    /// The backend of this build: [`Backend::Wide`] is the tiered runtime's second build of a
    /// kernel that has run long enough (see [`BuildOptions::tiered`]).
    pub backend: Backend,
}

/// What a specialised build knows of an image argument.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct ImageKey {
    /// SPIR-V channel order.
    pub order: u32,
    /// SPIR-V channel data type.
    pub data_type: u32,
    /// Whether the image has more than one mip level: without, every access is to level 0
    /// and no level is computed.
    pub mipmapped: bool,
}
