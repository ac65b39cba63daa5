//! OpenCL C → SPIR-V through the system's clang-15, opt-15 and llvm-spirv-15 (the recipe in
//! DESIGN.md that yields valid, optimised SPIR-V 1.0), run by their libraries in the LLVM
//! server where they load (library_recipe.rs, llvm_tools.rs), as processes otherwise. The
//! tools' diagnostics become the build log.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::options::BuildRequest;
use crate::process_recipe::{run, run_pipeline, run_with_passes_in_process};

pub(crate) const CLANG: &str = "clang-15";
const OPT: &str = "opt-15";
const LLVM_SPIRV: &str = "llvm-spirv-15";
/// The recipe's programs, looked up on PATH (the program cache keys on their builds).
pub const OPENCL_C_TOOLS: [&str; 3] = [CLANG, OPT, LLVM_SPIRV];
/// clang's options for the unoptimised SPIR module every build starts from (after
/// `-cl-std=`, before `-S`/`-c` and the build's own options).
pub(crate) const CLANG_O0_OPTIONS: [&str; 9] = [
    "-target",
    "spir64",
    "-O0",
    "-Xclang",
    "-disable-O0-optnone",
    "-emit-llvm",
    "-Xclang",
    "-finclude-default-header",
    "-fno-color-diagnostics",
];
pub(crate) const OPT_PASSES: &str = "sroa,early-cse,instcombine,simplifycfg,loop-mssa(licm),gvn,\
loop(indvars,loop-unroll-full),instcombine,simplifycfg,gvn,instcombine";
/// clang-15's spir64 data layout plus the native integer widths (`n8:16:32:64`) it leaves out:
/// without them instcombine takes every width as legal and narrows values to odd ones (a
/// `switch` on `x & 0xf` becomes a switch on an i4), which llvm-spirv rejects
/// ("InvalidBitWidth"; the Khronos CTS sub-group `ifp` kernel does this).
pub(crate) const OPT_DATA_LAYOUT: &str =
    "e-i64:64-v16:16-v24:32-v32:32-v48:64-v96:128-v192:256-v256:256-v512:512-v1024:1024-n8:16:32:64";

/// What the recipe adds to clang-15 for a device feature it predates or half knows. The
/// runtime's feature table names them per feature (its `clang_preludes` column) and the recipe
/// writes the ones it is given: none is looked up by an extension's name.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Prelude {
    /// `-D<name>=1`: an OpenCL C extension whose macro clang-15 does not define (it does not
    /// know the name) although it has what the extension brings (`cl_khr_expect_assume` is
    /// `__builtin_expect` and `__builtin_assume`, which llvm-spirv-15 translates with
    /// SPV_KHR_expect_assume), or that has nothing in OpenCL C but whose macro the Khronos CTS
    /// expects where the device reports it (`cl_khr_subgroup_named_barrier`).
    Macro(&'static str),
    /// cl_khr_kernel_clock, device and work-group scope: [`kernel_clock_prelude`].
    KernelClock,
    /// cl_khr_work_group_uniform_arithmetic: [`uniform_arithmetic_prelude`].
    WorkGroupUniformArithmetic,
    /// cl_khr_extended_async_copies: [`extended_async_copies_prelude`].
    ExtendedAsyncCopies,
    /// cl_khr_async_work_group_copy_fence: [`ASYNC_COPY_FENCE_PRELUDE`].
    AsyncCopyFence,
    /// cl_intel_subgroups, its char, short and long extensions, cl_intel_subgroup_local_block_io
    /// and cl_intel_required_subgroup_size: [`intel_subgroups_prelude`].
    IntelSubGroups,
    /// cl_intel_bfloat16_conversions: [`bfloat16_conversions_prelude`].
    Bfloat16Conversions,
    /// Image constants clang-15's header lacks: [`images_prelude`].
    ImageConstants,
    /// Not a feature's but the device's: its OpenCL version as `__OPENCL_VERSION__` writes it
    /// (310 for OpenCL 3.1); 300 without this.
    OpenClVersion(u32),
}

/// OpenCL C 3.1 for clang-15, which knows OpenCL C up to 3.0 and compiles it as 3.0: the
/// version macro is 310 once the default header is read (OpenCL C 3.1 §6.12,
/// `__OPENCL_C_VERSION__`). The header keeps the 3.0 definitions it makes only for a version
/// of exactly 300 (its header-only feature macros), and nothing clang checks differs: 3.1 adds
/// to 3.0 the `z` and `t` printf length modifiers, which clang-15 already accepts, and makes
/// core the built-ins of extensions a 3.1 device reports anyway (OpenCL C 3.1 appendix,
/// "Summary of Changes from OpenCL 3.0 to OpenCL 3.1").
const OPENCL_C_3_1_PRELUDE: &str =
    "#undef __OPENCL_C_VERSION__\n#define __OPENCL_C_VERSION__ 310\n";

/// `-cl-ext=-all,+a,+b`: everything off, then exactly `extensions` on.
fn cl_ext_option(extensions: &[&str]) -> String {
    let mut opt = "-cl-ext=-all".to_owned();
    for e in extensions {
        opt.push_str(",+");
        opt.push_str(e);
    }
    opt
}

fn tool_exists(name: &str) -> bool {
    std::env::var_os("PATH")
        .is_some_and(|paths| std::env::split_paths(&paths).any(|dir| dir.join(name).is_file()))
}

/// Whether all three tools are on `PATH` (drives `CL_DEVICE_COMPILER_AVAILABLE`).
pub fn opencl_c_compiler_available() -> bool {
    tool_exists(CLANG) && tool_exists(OPT) && tool_exists(LLVM_SPIRV)
}

/// The KHR/EXT SPIR-V extensions llvm-spirv-15 can emit (it refuses names it does not know).
const LLVM_SPIRV_15_EXTENSIONS: &[&str] = &[
    "SPV_EXT_shader_atomic_float_add",
    "SPV_EXT_shader_atomic_float_min_max",
    "SPV_KHR_bit_instructions",
    "SPV_KHR_expect_assume",
    "SPV_KHR_float_controls",
    "SPV_KHR_integer_dot_product",
    "SPV_KHR_linkonce_odr",
    "SPV_KHR_no_integer_wrap_decoration",
    "SPV_KHR_subgroup_rotate",
    "SPV_KHR_uniform_group_instructions",
    "SPV_INTEL_subgroups",
    "SPV_INTEL_bfloat16_conversion",
];

/// llvm-spirv's `--spirv-ext` list: the device's SPIR-V extensions that the translator knows; it
/// uses none unless told.
fn spirv_ext_list(device_spirv_extensions: &[&str]) -> String {
    let list: Vec<String> = device_spirv_extensions
        .iter()
        .filter(|e| LLVM_SPIRV_15_EXTENSIONS.contains(e))
        .map(|e| format!("+{e}"))
        .collect();
    format!("-all,{}", list.join(","))
}

/// The files of a make rule as clang's `-MD` writes it (`out: a.cl /inc/b.h \` with lines
/// continued by a backslash, spaces in names escaped with one).
fn make_rule_prerequisites(rule: &str) -> Vec<PathBuf> {
    let joined = rule.replace("\\\n", " ");
    let Some((_, files)) = joined.split_once(": ") else {
        return Vec::new();
    };
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut chars = files.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' if chars.peek().is_some_and(|n| *n == ' ' || *n == '#') => {
                cur.push(chars.next().unwrap_or(' '))
            }
            '$' if chars.peek() == Some(&'$') => {
                chars.next();
                cur.push('$');
            }
            c if c.is_whitespace() => {
                if !cur.is_empty() {
                    out.push(PathBuf::from(std::mem::take(&mut cur)));
                }
            }
            c => cur.push(c),
        }
    }
    if !cur.is_empty() {
        out.push(PathBuf::from(cur));
    }
    out
}

/// What the recipe made from a source.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CompiledOpenClC {
    pub spirv: Vec<u8>,
    /// The files clang read besides the source and the recipe's preludes: included headers,
    /// clang's own `opencl-c-base.h`. As clang names them (relative to the working directory
    /// when an `-I` was).
    pub dependencies: Vec<PathBuf>,
    /// What the tools reported on the way (clang's warnings), for the build log.
    pub log: String,
}

struct TempDir(PathBuf);

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Where builds write their files: `TMPDIR` when set, else `/dev/shm` where it can be written
/// (memory), else `/tmp`. Each build creates and removes a dozen small files; on ext4 creating
/// inodes next to many just deleted ones was a third of all the time of a suite of thousands
/// of builds (CTS `test_c11_atomics`).
fn scratch_root() -> PathBuf {
    static ROOT: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    ROOT.get_or_init(|| {
        if std::env::var_os("TMPDIR").is_some() {
            return std::env::temp_dir();
        }
        let shm = Path::new("/dev/shm");
        let probe = shm.join(format!("ferrocl-probe-{}", std::process::id()));
        match std::fs::create_dir(&probe) {
            Ok(()) => {
                let _ = std::fs::remove_dir(&probe);
                shm.to_path_buf()
            }
            Err(_) => std::env::temp_dir(),
        }
    })
    .clone()
}

fn temp_dir() -> Result<TempDir, String> {
    use std::sync::atomic::{AtomicU64, Ordering};
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or(0);
    let name = format!("ferrocl-clc-{}-{n}-{nanos}", std::process::id());
    let dir = scratch_root().join(&name);
    if std::fs::create_dir_all(&dir).is_ok() {
        return Ok(TempDir(dir));
    }
    // A full /dev/shm (small in some containers): the usual temporary directory instead.
    let dir = std::env::temp_dir().join(&name);
    std::fs::create_dir_all(&dir).map_err(|e| format!("error: cannot create {dir:?}: {e}\n"))?;
    Ok(TempDir(dir))
}

/// The work-item functions with an index outside 0..2 return what OpenCL C says (1 for the
/// sizes and group counts, 0 for ids and offsets): llvm-spirv-15 indexes the built-in vectors
/// with the argument as it is (an out-of-range `OpVectorExtractDynamic`, or for a constant an
/// `OpCompositeExtract` that is not valid SPIR-V). Each built-in is wrapped by a function
/// defined before the macro of its name, so its body calls the real built-in; the optimiser
/// folds the guard away for constant indices.
/// OpenCL C 1.0 and 1.1 have no `static` functions: there the wrappers are C99 inline
/// definitions, which emit no symbol of their own and are always inlined.
const WORK_ITEM_PRELUDE: &str = "\
#if __OPENCL_C_VERSION__ >= 120
#define __FERROCL_WORK_ITEM_INLINE static inline __attribute__((always_inline))
#else
#define __FERROCL_WORK_ITEM_INLINE inline __attribute__((always_inline))
#endif
#define __FERROCL_WORK_ITEM(name, outside) \\
    __FERROCL_WORK_ITEM_INLINE size_t __ferrocl_##name(uint d) { \\
        return d < 3u ? name(d < 3u ? d : 0u) : (size_t)(outside); \\
    }
__FERROCL_WORK_ITEM(get_global_size, 1)
__FERROCL_WORK_ITEM(get_global_id, 0)
__FERROCL_WORK_ITEM(get_local_size, 1)
__FERROCL_WORK_ITEM(get_local_id, 0)
__FERROCL_WORK_ITEM(get_num_groups, 1)
__FERROCL_WORK_ITEM(get_group_id, 0)
__FERROCL_WORK_ITEM(get_global_offset, 0)
#define get_global_size(d) __ferrocl_get_global_size(d)
#define get_global_id(d) __ferrocl_get_global_id(d)
#define get_local_size(d) __ferrocl_get_local_size(d)
#define get_local_id(d) __ferrocl_get_local_id(d)
#define get_num_groups(d) __ferrocl_get_num_groups(d)
#define get_group_id(d) __ferrocl_get_group_id(d)
#define get_global_offset(d) __ferrocl_get_global_offset(d)
#if __OPENCL_C_VERSION__ >= 200
__FERROCL_WORK_ITEM(get_enqueued_local_size, 1)
#define get_enqueued_local_size(d) __ferrocl_get_enqueued_local_size(d)
#endif
#undef __FERROCL_WORK_ITEM
#undef __FERROCL_WORK_ITEM_INLINE
";

/// C99 inline definitions — `inline` functions neither `static` nor `extern` — give no symbol
/// of their own: a call compiles to a call of an external function that the program must
/// define elsewhere, and clang-15 emits no body at `-O0` (the recipe's first step), so the
/// module imports a function nobody exports. OpenCL C follows C99 here, but every other
/// implementation inlines such calls, and widely used headers (Random123's `philox.cl`,
/// complex-arithmetic headers) rely on it. Marking every `inline` function `always_inline`
/// makes clang emit the body and inline each call at any optimisation level, before
/// llvm-spirv sees the module; a function that is also declared `extern` (or without `inline`)
/// still gets its external definition, and static ones are unchanged. Ferrocl inlines every
/// call into its kernel anyway, so nothing is lost. A system header, so that `-Werror` with
/// `-Wkeyword-macro` does not object to the keyword macro.
const INLINE_PRELUDE: &str = "\
#pragma clang system_header
#define inline inline __attribute__((always_inline))
#define __inline inline
#define __inline__ inline
";

/// Extension and feature macros that clang-15's `opencl-c-base.h` defines for every SPIR
/// target in OpenCL C 3.0 (and 2.0), whatever `-cl-ext` says ("for SPIR all extensions are
/// supported").
const CLANG_HEADER_MACROS: &[&str] = &[
    "cl_khr_subgroup_extended_types",
    "cl_khr_subgroup_non_uniform_vote",
    "cl_khr_subgroup_ballot",
    "cl_khr_subgroup_non_uniform_arithmetic",
    "cl_khr_subgroup_shuffle",
    "cl_khr_subgroup_shuffle_relative",
    "cl_khr_subgroup_clustered_reduce",
    "cl_khr_subgroup_rotate",
    "cl_khr_extended_bit_ops",
    "cl_khr_integer_dot_product",
    "__opencl_c_integer_dot_product_input_4x8bit",
    "__opencl_c_integer_dot_product_input_4x8bit_packed",
    "cl_ext_float_atomics",
    "__opencl_c_ext_fp16_global_atomic_load_store",
    "__opencl_c_ext_fp16_local_atomic_load_store",
    "__opencl_c_ext_fp16_global_atomic_add",
    "__opencl_c_ext_fp16_local_atomic_add",
    "__opencl_c_ext_fp16_global_atomic_min_max",
    "__opencl_c_ext_fp16_local_atomic_min_max",
    "__opencl_c_ext_fp64_global_atomic_add",
    "__opencl_c_ext_fp64_local_atomic_add",
    "__opencl_c_ext_fp64_global_atomic_min_max",
    "__opencl_c_ext_fp64_local_atomic_min_max",
    "__opencl_c_ext_fp32_global_atomic_add",
    "__opencl_c_ext_fp32_local_atomic_add",
    "__opencl_c_ext_fp32_global_atomic_min_max",
    "__opencl_c_ext_fp32_local_atomic_min_max",
    "__opencl_c_pipes",
    "__opencl_c_generic_address_space",
    "__opencl_c_work_group_collective_functions",
    "__opencl_c_atomic_order_acq_rel",
    "__opencl_c_atomic_order_seq_cst",
    "__opencl_c_atomic_scope_device",
    "__opencl_c_atomic_scope_all_devices",
    "__opencl_c_device_enqueue",
    "__opencl_c_read_write_images",
    "__opencl_c_program_scope_global_variables",
    "__opencl_c_images",
];

/// Undefines the [`CLANG_HEADER_MACROS`] the device does not have, so that a source testing
/// them sees the device's extensions and features (CL_DEVICE_OPENCL_C_FEATURES; CTS compiler
/// features_macro). Included after the default header, which defines them.
fn header_macros_prelude(extensions: &[&str]) -> Option<String> {
    let text: String = CLANG_HEADER_MACROS
        .iter()
        .filter(|m| !extensions.contains(m))
        .map(|m| format!("#undef {m}\n"))
        .collect();
    (!text.is_empty()).then_some(text)
}

/// Image constants clang-15's header lacks: `CLK_UNORM_INT_101010_2` (OpenCL C 2.1, what
/// `get_image_channel_data_type` returns for that format).
fn images_prelude() -> String {
    "#ifndef CLK_UNORM_INT_101010_2\n#define CLK_UNORM_INT_101010_2 0x10E0\n#endif\n".to_owned()
}

/// cl_khr_kernel_clock for clang-15, which predates it: the extension macro, the scope macros
/// of device and work-group scope, and the built-in declarations (llvm-spirv-15 leaves the
/// calls as imported functions, which codegen turns into clock reads).
fn kernel_clock_prelude() -> String {
    let mut text = String::from("#define cl_khr_kernel_clock 1\n");
    for scope in ["device", "work_group"] {
        text.push_str(&format!(
            "#define __opencl_c_kernel_clock_scope_{scope} 1\n\
             ulong __attribute__((overloadable)) clock_read_{scope}(void);\n\
             uint2 __attribute__((overloadable)) clock_read_hilo_{scope}(void);\n"
        ));
    }
    text
}

/// cl_khr_work_group_uniform_arithmetic for clang-15, which predates it (and whose
/// llvm-spirv-15 translates only the `mul` built-ins by name): the extension macro and the
/// built-ins as inline wrappers around llvm-spirv's `__spirv_Group*KHR` names, which become the
/// SPV_KHR_uniform_group_instructions instructions at work-group scope (Execution 2; Operation
/// 0 Reduce, 1 InclusiveScan, 2 ExclusiveScan). Like the other work-group collectives they need
/// OpenCL C 2.0, or 3.0 with `__opencl_c_work_group_collective_functions`; `half` only with
/// cl_khr_fp16, `double` only with fp64.
fn uniform_arithmetic_prelude(declarations: bool) -> String {
    if !declarations {
        return "#if defined(__opencl_c_work_group_collective_functions)\n\
                #define cl_khr_work_group_uniform_arithmetic 1\n#endif\n"
            .to_owned();
    }
    let wrappers = |ty: &str, spirv: &str, op: &str| -> String {
        let mut text =
            format!("{ty} __attribute__((overloadable)) __spirv_{spirv}(int, int, {ty});\n");
        for (name, operation) in [("reduce", 0), ("scan_inclusive", 1), ("scan_exclusive", 2)] {
            text.push_str(&format!(
                "static inline {ty} __attribute__((overloadable)) \
                 work_group_{name}_{op}({ty} x) {{ return __spirv_{spirv}(2, {operation}, x); }}\n"
            ));
        }
        text
    };
    let mut text = String::from(
        "#if defined(__opencl_c_work_group_collective_functions)\n\
         #define cl_khr_work_group_uniform_arithmetic 1\n",
    );
    for ty in ["int", "uint", "long", "ulong"] {
        text.push_str(&wrappers(ty, "GroupIMulKHR", "mul"));
        for op in ["and", "or", "xor"] {
            let spirv = format!("GroupBitwise{}KHR", capitalised(op));
            text.push_str(&wrappers(ty, &spirv, op));
        }
    }
    text.push_str(&wrappers("float", "GroupFMulKHR", "mul"));
    text.push_str("#if defined(cl_khr_fp64) || defined(__opencl_c_fp64)\n");
    text.push_str(&wrappers("double", "GroupFMulKHR", "mul"));
    text.push_str(
        "#endif\n#if defined(cl_khr_fp16)\n#pragma OPENCL EXTENSION cl_khr_fp16 : enable\n",
    );
    text.push_str(&wrappers("half", "GroupFMulKHR", "mul"));
    // Back to clang's default, so the source still needs its own pragma for half.
    text.push_str("#pragma OPENCL EXTENSION cl_khr_fp16 : disable\n#endif\n");
    // The logical ones take and return an int predicate: non-zero is true; they return 0 or 1.
    for op in ["and", "or", "xor"] {
        let spirv = format!("GroupLogical{}KHR", capitalised(op));
        text.push_str(&format!(
            "bool __attribute__((overloadable)) __spirv_{spirv}(int, int, bool);\n"
        ));
        for (name, operation) in [("reduce", 0), ("scan_inclusive", 1), ("scan_exclusive", 2)] {
            text.push_str(&format!(
                "static inline int __attribute__((overloadable)) \
                 work_group_{name}_logical_{op}(int predicate) \
                 {{ return __spirv_{spirv}(2, {operation}, predicate != 0); }}\n"
            ));
        }
    }
    text.push_str("#endif\n");
    text
}

/// The 2D and 3D copies of cl_khr_extended_async_copies, local ← global and global ← local:
/// (function, destination space, source space, the Itanium name clang gives it).
pub const EXTENDED_ASYNC_COPIES: [(&str, &str, &str, &str); 4] = [
    (
        "async_work_group_copy_2D2D",
        "__local",
        "__global",
        "_Z26async_work_group_copy_2D2DPU3AS3vmPU3AS1Kvmmmmmm9ocl_event",
    ),
    (
        "async_work_group_copy_2D2D",
        "__global",
        "__local",
        "_Z26async_work_group_copy_2D2DPU3AS1vmPU3AS3Kvmmmmmm9ocl_event",
    ),
    (
        "async_work_group_copy_3D3D",
        "__local",
        "__global",
        "_Z26async_work_group_copy_3D3DPU3AS3vmPU3AS1Kvmmmmmmmmm9ocl_event",
    ),
    (
        "async_work_group_copy_3D3D",
        "__global",
        "__local",
        "_Z26async_work_group_copy_3D3DPU3AS1vmPU3AS3Kvmmmmmmmmm9ocl_event",
    ),
];

/// cl_khr_async_work_group_copy_fence for clang-15, which predates it: the macro and
/// `async_work_group_copy_fence`, an imported call codegen turns into a fence
/// (translate/group.rs), declared under a stand-in name as the extended copies are (its name
/// starts with `async_work_group_copy` too) and renamed back to [`ASYNC_COPY_FENCE`].
const ASYNC_COPY_FENCE_PRELUDE: &str = "#define cl_khr_async_work_group_copy_fence 1\n\
void __attribute__((overloadable, convergent)) \
async_work_group_copy_fence(cl_mem_fence_flags flags) __asm__(\"__ferrocl_async_copy_fence\");\n";

/// The stand-in name of `async_work_group_copy_fence` and the Itanium name clang gives it.
const ASYNC_COPY_FENCE: (&str, &str) = (
    "__ferrocl_async_copy_fence",
    "_Z27async_work_group_copy_fencej",
);

/// The name the prelude gives copy `i` of [`EXTENDED_ASYNC_COPIES`] on its way through
/// llvm-spirv-15, which takes every function whose name starts with `async_work_group_copy`
/// for the 1D built-in and aborts on these (an `OpGroupAsyncCopy` with the wrong operands).
/// translator_fixes.rs gives the imports their real names back.
pub(crate) fn extended_async_copy_alias(i: usize) -> String {
    format!("__ferrocl_extended_async_copy_{i}")
}

/// cl_khr_extended_async_copies for clang-15, which predates it: the extension macro and the
/// built-ins, each declared under an assembler name llvm-spirv-15 leaves alone
/// ([`extended_async_copy_alias`]).
fn extended_async_copies_prelude() -> String {
    let mut text = String::from("#define cl_khr_extended_async_copies 1\n");
    for (i, (name, dst, src, _)) in EXTENDED_ASYNC_COPIES.iter().enumerate() {
        let shape = if name.ends_with("2D2D") {
            "size_t num_lines, size_t src_total_line_length, size_t dst_total_line_length"
        } else {
            "size_t num_lines, size_t num_planes, size_t src_total_line_length, \
             size_t src_total_plane_area, size_t dst_total_line_length, \
             size_t dst_total_plane_area"
        };
        text.push_str(&format!(
            "event_t __attribute__((overloadable)) {name}({dst} void *dst, size_t dst_offset, \
             const {src} void *src, size_t src_offset, size_t num_bytes_per_element, \
             size_t num_elements_per_line, {shape}, event_t event) __asm__(\"{}\");\n",
            extended_async_copy_alias(i)
        ));
    }
    text
}

/// cl_intel_subgroups, cl_intel_subgroups_char, _short and _long,
/// cl_intel_subgroup_local_block_io and cl_intel_required_subgroup_size for clang-15, whose
/// built-in table lacks the Intel functions (its `opencl-c.h` has some, but the driver declares
/// built-ins from the table): the extension macros; the shuffles, block reads and block writes
/// with the types the extensions list, which llvm-spirv-15 turns into SPV_INTEL_subgroups
/// instructions (`--spirv-ext=+SPV_INTEL_subgroups`), block reads and writes of global and of
/// local memory, and of images where image types exist; and the char and short broadcasts,
/// reductions and scans, inline wrappers around llvm-spirv's `__spirv_Group*` names (its
/// spelling of `OpGroupBroadcast`, `OpGroupIAdd`, … at sub-group scope; it would leave the Intel
/// names as imports). Not the 16-component ushort blocks of cl_intel_subgroups_short 1.1 (the
/// device reports 1.0.0, as Intel's CPU runtime does): llvm-spirv-15 aborts on them.
/// (`intel_reqd_sub_group_size` is clang's own attribute.)
fn intel_subgroups_prelude(declarations: bool) -> String {
    const OVLD: &str = "__attribute__((overloadable, convergent))";
    let shuffles = |ty: &str| -> String {
        format!(
            "{ty} {OVLD} intel_sub_group_shuffle({ty}, uint);\n\
             {ty} {OVLD} intel_sub_group_shuffle_down({ty}, {ty}, uint);\n\
             {ty} {OVLD} intel_sub_group_shuffle_up({ty}, {ty}, uint);\n\
             {ty} {OVLD} intel_sub_group_shuffle_xor({ty}, uint);\n"
        )
    };
    let mut text = String::from(
        "#define cl_intel_subgroups 1\n#define cl_intel_subgroups_char 1\n\
         #define cl_intel_subgroups_short 1\n#define cl_intel_subgroups_long 1\n\
         #define cl_intel_subgroup_local_block_io 1\n\
         #define cl_intel_required_subgroup_size 1\n",
    );
    if !declarations {
        return text;
    }
    for base in ["float", "int", "uint", "char", "uchar", "short", "ushort"] {
        for n in ["", "2", "3", "4", "8", "16"] {
            text.push_str(&shuffles(&format!("{base}{n}")));
        }
    }
    text.push_str(&shuffles("long"));
    text.push_str(&shuffles("ulong"));
    text.push_str("#if defined(cl_khr_fp64) || defined(__opencl_c_fp64)\n");
    text.push_str(&shuffles("double"));
    text.push_str(
        "#endif\n#if defined(cl_khr_fp16)\n#pragma OPENCL EXTENSION cl_khr_fp16 : enable\n",
    );
    text.push_str(&shuffles("half"));
    // Back to clang's default, so the source still needs its own pragma for half.
    text.push_str("#pragma OPENCL EXTENSION cl_khr_fp16 : disable\n#endif\n");
    let images = [
        (
            "read_only",
            "#if defined(__opencl_c_images) || (__OPENCL_C_VERSION__ < 300 && defined(__IMAGE_SUPPORT__))\n",
        ),
        ("read_write", "#if defined(__opencl_c_read_write_images)\n"),
    ];
    // (element type, name suffixes, vector widths): the unsuffixed uint functions of
    // cl_intel_subgroups and the suffixed ones of the char, short and long extensions.
    let blocks: [(&str, &[&str], &[&str]); 4] = [
        ("uint", &["", "_ui"], &["", "2", "4", "8"]),
        ("uchar", &["_uc"], &["", "2", "4", "8", "16"]),
        ("ushort", &["_us"], &["", "2", "4", "8"]),
        ("ulong", &["_ul"], &["", "2", "4", "8"]),
    ];
    for (elem, suffixes, widths) in blocks {
        for suffix in suffixes {
            for n in widths {
                let v = format!("{elem}{n}");
                for space in ["__global", "__local"] {
                    text.push_str(&format!(
                        "{v} {OVLD} intel_sub_group_block_read{suffix}{n}(const {space} {elem} *);\n\
                         void {OVLD} intel_sub_group_block_write{suffix}{n}({space} {elem} *, {v});\n"
                    ));
                }
                for (access, condition) in images {
                    let write_access = if access == "read_only" {
                        "write_only"
                    } else {
                        access
                    };
                    text.push_str(&format!(
                        "{condition}{v} {OVLD} intel_sub_group_block_read{suffix}{n}({access} image2d_t, int2);\n\
                         void {OVLD} intel_sub_group_block_write{suffix}{n}({write_access} image2d_t, int2, {v});\n\
                         #endif\n"
                    ));
                }
            }
        }
    }
    // The char and short collectives at sub-group scope (Execution 3; Operation 0 Reduce,
    // 1 InclusiveScan, 2 ExclusiveScan), signed or unsigned min and max by the type.
    for (ty, sign) in [
        ("char", 'S'),
        ("uchar", 'U'),
        ("short", 'S'),
        ("ushort", 'U'),
    ] {
        text.push_str(&format!(
            "{ty} {OVLD} __spirv_GroupBroadcast(int, {ty}, uint);\n\
             static inline {ty} {OVLD} intel_sub_group_broadcast({ty} x, uint id) \
             {{ return __spirv_GroupBroadcast(3, x, id); }}\n"
        ));
        for (op, spirv) in [
            ("add", "IAdd".to_owned()),
            ("min", format!("{sign}Min")),
            ("max", format!("{sign}Max")),
        ] {
            text.push_str(&format!(
                "{ty} {OVLD} __spirv_Group{spirv}(int, int, {ty});\n"
            ));
            for (collective, operation) in
                [("reduce", 0), ("scan_inclusive", 1), ("scan_exclusive", 2)]
            {
                text.push_str(&format!(
                    "static inline {ty} {OVLD} intel_sub_group_{collective}_{op}({ty} x) \
                     {{ return __spirv_Group{spirv}(3, {operation}, x); }}\n"
                ));
            }
        }
    }
    text
}

/// cl_intel_bfloat16_conversions for clang-15, which lacks it: the macro and the conversions,
/// which llvm-spirv-15 turns into `OpConvertFToBF16INTEL` and `OpConvertBF16ToFINTEL`
/// (`--spirv-ext=+SPV_INTEL_bfloat16_conversion`).
fn bfloat16_conversions_prelude(declarations: bool) -> String {
    let mut text = String::from("#define cl_intel_bfloat16_conversions 1\n");
    if !declarations {
        return text;
    }
    for n in ["", "2", "3", "4", "8", "16"] {
        text.push_str(&format!(
            "ushort{n} __attribute__((overloadable, const)) \
             intel_convert_bfloat16{n}_as_ushort{n}(float{n});\n\
             float{n} __attribute__((overloadable, const)) \
             intel_convert_as_bfloat16{n}_float{n}(ushort{n});\n"
        ));
    }
    text
}

fn capitalised(word: &str) -> String {
    let mut chars = word.chars();
    chars
        .next()
        .map(|c| c.to_ascii_uppercase().to_string() + chars.as_str())
        .unwrap_or_default()
}

/// Compiles OpenCL C `source` with the clang-relevant parts of `options` to SPIR-V 1.0.
/// `extensions` are the OpenCL C extensions and optional features clang may assume: exactly
/// the device's, so sources cannot use what the device does not provide; `undefine` are the
/// macros clang predefines for every SPIR target that the device lacks (`__IMAGE_SUPPORT__`
/// without images). A device's also come with its preludes, which [`OpenClC`] takes: here
/// there are none, and llvm-spirv may use every SPIR-V extension the frontend reads.
/// On success returns the module bytes (warnings are dropped); on failure the build log.
pub fn compile_opencl_c(
    source: &str,
    options: &str,
    extensions: &[&str],
    undefine: &[&str],
) -> Result<Vec<u8>, String> {
    OpenClC {
        source,
        options,
        extensions,
        undefine,
        preludes: &[],
        spirv_extensions: ferrocl_frontend::SUPPORTED_EXTENSIONS,
        debug_info: false,
        llvm_server: true,
    }
    .compile()
}

/// One run of the OpenCL C recipe: what [`compile_opencl_c`] takes, plus the switches of the
/// recipe that no build option reaches. Tests and the benchmark build their SPIR-V with it, so
/// that they run what applications get from `clBuildProgram`.
#[derive(Clone, Copy, Debug, Default)]
pub struct OpenClC<'a> {
    pub source: &'a str,
    /// Build options as `clBuildProgram` takes them (`-cl-std=`, `-D`, `-cl-opt-disable`, …).
    pub options: &'a str,
    /// The OpenCL C extensions and optional features clang may assume.
    pub extensions: &'a [&'a str],
    /// Macros clang predefines for every SPIR target that the device lacks.
    pub undefine: &'a [&'a str],
    /// What clang-15 lacks for the device's features, written before the source.
    pub preludes: &'a [Prelude],
    /// The device's SPIR-V extensions: llvm-spirv may use those it knows.
    pub spirv_extensions: &'a [&'a str],
    /// clang's `-g`: OpenCL.DebugInfo.100 instructions in the module. The driver accepts and
    /// ignores `-g` (it keeps no debug information), so only tests of modules that carry debug
    /// instructions set this.
    pub debug_info: bool,
    /// Whether clang, opt's passes and llvm-spirv run by their libraries in the LLVM server
    /// (`FERROCL_LLVM`), where they load; as processes otherwise. The SPIR-V is the same.
    pub llvm_server: bool,
}

impl OpenClC<'_> {
    /// The module bytes (warnings are dropped), or the build log.
    pub fn compile(&self) -> Result<Vec<u8>, String> {
        run_recipe(self).map(|c| c.spirv)
    }

    /// [`OpenClC::compile`], also returning the tools' log and the files the source included
    /// (the program cache's dependencies).
    pub fn compile_with_dependencies(&self) -> Result<CompiledOpenClC, String> {
        run_recipe(self)
    }
}

fn run_recipe(input: &OpenClC) -> Result<CompiledOpenClC, String> {
    let OpenClC {
        source,
        options,
        extensions,
        undefine,
        preludes: device_preludes,
        spirv_extensions,
        debug_info,
        llvm_server,
    } = *input;
    if !opencl_c_compiler_available() {
        return Err(format!(
            "error: the OpenCL C compiler is not available ({CLANG}, {OPT} and {LLVM_SPIRV} \
             must be on PATH)\n"
        ));
    }
    let dir = temp_dir()?;
    let src = dir.0.join("input.cl");
    let deps = dir.0.join("input.d");
    std::fs::write(&src, source).map_err(|e| format!("error: cannot write source: {e}\n"))?;
    let request = BuildRequest::parse(options);
    let mut args = request.clang_args();
    let (std, opt_disable) = (request.clang_std(), request.opt_disable);
    if debug_info {
        args.push("-g".into());
    }
    // The device's OpenCL version (OpenCL C 3.1 §6.12: "the version of OpenCL supported by
    // the device", or above 200 for a device above 2.0), which clang-15 leaves undefined for
    // spir64; CL_VERSION_3_1, which clang-15 predates, defined in every OpenCL C version as
    // clang defines CL_VERSION_3_0 in each.
    let opencl_version = device_preludes.iter().find_map(|p| match p {
        Prelude::OpenClVersion(v) => Some(*v),
        _ => None,
    });
    args.push(format!(
        "-D__OPENCL_VERSION__={}",
        opencl_version.unwrap_or(300)
    ));
    args.push("-DCL_VERSION_3_1=310".into());
    args.extend(undefine.iter().map(|m| format!("-U{m}")));
    // Extensions clang-15 predates and whose built-ins it has anyway: only the macro is missing.
    for prelude in device_preludes {
        if let Prelude::Macro(name) = prelude {
            args.push(format!("-D{name}=1"));
        }
    }
    // The preludes of overloaded built-ins cost clang about 2 ms of a 5 ms build, so their
    // declarations (not their macros) are left out where neither the source nor the options
    // can name them: a word of every name is absent, and nothing is included.
    let mentions = |words: &[&str]| {
        ["include"]
            .iter()
            .chain(words)
            .any(|w| source.contains(w) || options.contains(w))
    };
    let has = |p: Prelude| device_preludes.contains(&p);
    let preludes = [
        (
            "opencl_c_3_1.h",
            (request.language() == "CL3.1").then(|| OPENCL_C_3_1_PRELUDE.to_owned()),
        ),
        ("header_macros.h", header_macros_prelude(extensions)),
        ("work_item.h", Some(WORK_ITEM_PRELUDE.to_owned())),
        (
            "kernel_clock.h",
            has(Prelude::KernelClock).then(kernel_clock_prelude),
        ),
        (
            "work_group_uniform_arithmetic.h",
            has(Prelude::WorkGroupUniformArithmetic)
                .then(|| uniform_arithmetic_prelude(mentions(&["reduce", "scan"]))),
        ),
        (
            "extended_async_copies.h",
            has(Prelude::ExtendedAsyncCopies).then(extended_async_copies_prelude),
        ),
        (
            "async_copy_fence.h",
            has(Prelude::AsyncCopyFence).then(|| ASYNC_COPY_FENCE_PRELUDE.to_owned()),
        ),
        (
            "intel_subgroups.h",
            has(Prelude::IntelSubGroups).then(|| intel_subgroups_prelude(mentions(&["intel"]))),
        ),
        (
            "bfloat16_conversions.h",
            has(Prelude::Bfloat16Conversions)
                .then(|| bfloat16_conversions_prelude(mentions(&["bfloat16"]))),
        ),
        ("inline.h", Some(INLINE_PRELUDE.to_owned())),
        (
            "images.h",
            has(Prelude::ImageConstants).then(images_prelude),
        ),
    ];
    for (name, prelude) in preludes {
        let Some(prelude) = prelude else { continue };
        let path = dir.0.join(name);
        std::fs::write(&path, prelude)
            .map_err(|e| format!("error: cannot write prelude: {e}\n"))?;
        args.push("-include".into());
        args.push(path.to_string_lossy().into_owned());
    }
    let mut log = String::new();
    // Textual IR where the source names vec_type_hint: its signedness is read from there.
    let read_hints = source.contains("vec_type_hint");
    // clang's arguments after its name; textual IR or bitcode.
    let clang_args = |output: &Path, textual: bool| -> Vec<OsString> {
        let mut words: Vec<OsString> = vec![format!("-cl-std={std}").into()];
        words.extend(CLANG_O0_OPTIONS.map(OsString::from));
        words.extend([if textual { "-S" } else { "-c" }, "-Xclang"].map(OsString::from));
        words.push(cl_ext_option(extensions).into());
        words.extend(args.iter().map(OsString::from));
        words.extend(["-MD".into(), "-MF".into(), deps.clone().into_os_string()]);
        words.extend([src.clone().into_os_string(), "-o".into(), output.into()]);
        words
    };
    let clang = |output: &Path| {
        let mut cmd = Command::new(CLANG);
        cmd.args(clang_args(output, read_hints));
        cmd
    };
    let optimise = |input: &Path, output: &Path| {
        let mut cmd = Command::new(OPT);
        cmd.arg(format!("-passes={OPT_PASSES}"))
            .arg(format!("--data-layout={OPT_DATA_LAYOUT}"))
            .arg(input)
            .arg("-o")
            .arg(output);
        cmd
    };
    // SPIR-V 1.3 brings the non-uniform group instructions; llvm-spirv still writes 1.0 when a
    // module needs nothing newer.
    let translate = |input: &Path, output: &Path| {
        let mut cmd = Command::new(LLVM_SPIRV);
        cmd.arg("--spirv-max-version=1.3")
            // Source type names and qualifiers for clGetKernelArgInfo, as OpStrings.
            .arg("--preserve-ocl-kernel-arg-type-metadata-through-string")
            // The device's SPIR-V extensions (llvm-spirv uses none by default).
            .arg(format!("--spirv-ext={}", spirv_ext_list(spirv_extensions)))
            .arg(input)
            .arg("-o")
            .arg(output);
        cmd
    };
    let stdio = Path::new("-");
    let server_clang = crate::library_recipe::clang_path().filter(|_| llvm_server);
    let (spirv, unsigned_hints) = if let Some(clang_path) = server_clang {
        crate::library_recipe::build(
            clang_path,
            &clang_args,
            &dir.0,
            opt_disable,
            read_hints,
            &spirv_ext_list(spirv_extensions),
            &mut log,
        )?
    } else if !read_hints {
        // The usual case: the tools run as one pipeline, no intermediate files, all three
        // started at once; most of each one's time is loading LLVM, which then overlaps.
        let built = if opt_disable {
            run_pipeline(
                &mut [clang(stdio), translate(stdio, stdio)],
                &dir.0,
                &mut log,
            )
        } else {
            let optimised = if llvm_server && crate::llvm_passes::available() {
                run_with_passes_in_process(
                    &mut clang(stdio),
                    &mut translate(stdio, stdio),
                    &dir.0,
                    &mut log,
                )
            } else {
                let mut commands = [
                    clang(stdio),
                    optimise(stdio, stdio),
                    translate(stdio, stdio),
                ];
                run_pipeline(&mut commands, &dir.0, &mut log)
            };
            match optimised {
                Err((2, refused)) => {
                    // llvm-spirv-15 refuses some modules LLVM's own constant folding makes (a
                    // null pointer cast between two named address spaces, from comparing a
                    // generic null with a local one: CTS generic_address_space
                    // compare_pointers). The unoptimised module, which it accepts, is
                    // translated instead; Cranelift still optimises it.
                    let mut retry_log = String::new();
                    run_pipeline(
                        &mut [clang(stdio), translate(stdio, stdio)],
                        &dir.0,
                        &mut retry_log,
                    )
                    .map_err(|_| (2, refused))
                }
                other => other,
            }
        };
        (built.map_err(|(_, log)| log)?, Vec::new())
    } else {
        // clang's textual IR is read for the hints, so it goes through files; llvm-spirv takes
        // bitcode, which opt makes (assembling without passes for the -O0 module).
        let ll = dir.0.join("input.ll");
        let bc = dir.0.join("input.bc");
        let opt_bc = dir.0.join("opt.bc");
        let spv = dir.0.join("out.spv");
        run(&mut clang(&ll), &mut log)?;
        let ir = std::fs::read_to_string(&ll)
            .map_err(|e| format!("{log}error: cannot read clang's output: {e}\n"))?;
        let hints = unsigned_vec_type_hints(&ir);
        let assemble = |log: &mut String| run(Command::new(OPT).arg(&ll).arg("-o").arg(&bc), log);
        if opt_disable {
            assemble(&mut log)?;
            run(&mut translate(&bc, &spv), &mut log)?;
        } else {
            run(&mut optimise(&ll, &opt_bc), &mut log)?;
            if let Err(refused) = run(&mut translate(&opt_bc, &spv), &mut log) {
                // As above.
                let mut retry_log = String::new();
                assemble(&mut retry_log).map_err(|_| refused.clone())?;
                run(&mut translate(&bc, &spv), &mut retry_log).map_err(|_| refused)?;
            }
        }
        let spirv = std::fs::read(&spv)
            .map_err(|e| format!("{log}error: cannot read SPIR-V output: {e}\n"))?;
        (spirv, hints)
    };
    let dependencies = std::fs::read_to_string(&deps)
        .map(|rule| make_rule_prerequisites(&rule))
        .map_err(|e| format!("{log}error: cannot read clang's dependency output: {e}\n"))?
        .into_iter()
        .filter(|p| !p.starts_with(&dir.0))
        .collect();
    let words = ferrocl_frontend::is_spirv(&spirv)
        .map_err(|e| format!("{log}error: llvm-spirv's output is not SPIR-V: {e}\n"))?;
    let mut words = crate::translator_fixes::repair_llvm_spirv_15(&words);
    let renames: Vec<(String, String)> = EXTENDED_ASYNC_COPIES
        .iter()
        .enumerate()
        .map(|(i, copy)| (extended_async_copy_alias(i), copy.3.to_owned()))
        .chain([(ASYNC_COPY_FENCE.0.to_owned(), ASYNC_COPY_FENCE.1.to_owned())])
        .collect();
    words = crate::translator_fixes::rename_imports(&words, &renames);
    for (kernel, ty) in &unsigned_hints {
        words = ferrocl_frontend::with_module_processed(
            &words,
            &format!("{}{kernel} {ty}", ferrocl_frontend::VEC_TYPE_HINT_RECORD),
        );
    }
    Ok(CompiledOpenClC {
        spirv: words.iter().flat_map(|w| w.to_le_bytes()).collect(),
        dependencies,
        log,
    })
}

/// The kernels of clang's textual IR whose `!vec_type_hint` is an unsigned integer type, with
/// that type's OpenCL C name: the metadata is `!{<4 x i32> undef, i32 0}`, the last operand
/// 1 for signed integers and 0 otherwise.
pub(crate) fn unsigned_vec_type_hints(ir: &str) -> Vec<(String, String)> {
    let mut metadata = std::collections::HashMap::new();
    for line in ir.lines() {
        if let Some((id, value)) = line.split_once(" = !{") {
            if id.starts_with('!') {
                metadata.insert(id.to_owned(), value.trim_end_matches('}').to_owned());
            }
        }
    }
    let mut out = Vec::new();
    for line in ir
        .lines()
        .filter(|l| l.starts_with("define ") && l.contains("spir_kernel"))
    {
        let Some(hint) = line.split(" !vec_type_hint ").nth(1) else {
            continue;
        };
        let id: String = hint
            .chars()
            .take_while(|&c| c == '!' || c.is_ascii_digit())
            .collect();
        let Some(name) = line
            .split_once(" @")
            .map(|(_, rest)| match rest.strip_prefix('"') {
                Some(quoted) => quoted.split('"').next().unwrap_or(""),
                None => rest.split('(').next().unwrap_or(""),
            })
        else {
            continue;
        };
        let Some(value) = metadata.get(&id) else {
            continue;
        };
        // "<4 x i32> undef, i32 0" or "i16 undef, i32 0".
        let (ty, signed) = match value.rsplit_once(", i32 ") {
            Some((ty, flag)) => (ty.trim(), flag.trim() == "1"),
            None => continue,
        };
        let (count, elem) = match ty.strip_prefix('<') {
            Some(v) => {
                let (n, rest) = v.split_once(" x ").unwrap_or(("1", v));
                (
                    n.trim().parse::<u32>().unwrap_or(1),
                    rest.split('>').next().unwrap_or(""),
                )
            }
            None => (1, ty.split(' ').next().unwrap_or("")),
        };
        let base = match elem {
            "i8" => "uchar",
            "i16" => "ushort",
            "i32" => "uint",
            "i64" => "ulong",
            _ => continue,
        };
        if signed || name.is_empty() {
            continue;
        }
        let ty = if count > 1 {
            format!("{base}{count}")
        } else {
            base.to_owned()
        };
        out.push((name.to_owned(), ty));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unsigned_vec_type_hints_from_clang_ir() {
        let ir = "define dso_local spir_kernel void @a(ptr addrspace(1) %x) #0 !kernel_arg_type !6 !vec_type_hint !8 {\n\
                  define dso_local spir_kernel void @b() #0 !vec_type_hint !9 {\n\
                  define dso_local spir_kernel void @\"c d\"() #0 !vec_type_hint !10 {\n\
                  define dso_local spir_kernel void @e() #0 !vec_type_hint !11 {\n\
                  define dso_local spir_kernel void @f() #0 {\n\
                  !8 = !{<4 x i32> undef, i32 0}\n\
                  !9 = !{<2 x i8> undef, i32 1}\n\
                  !10 = !{i16 undef, i32 0}\n\
                  !11 = !{<8 x float> undef, i32 0}\n";
        assert_eq!(
            unsigned_vec_type_hints(ir),
            [
                ("a".to_owned(), "uint4".to_owned()),
                ("c d".to_owned(), "ushort".to_owned())
            ]
        );
    }

    #[test]
    fn dependencies_from_a_make_rule() {
        let rule = "/tmp/x/input.bc: /tmp/x/input.cl /usr/lib/clang/opencl-c-base.h \\\n  \
                    inc/a\\ b.h /abs/c$$.h\n";
        assert_eq!(
            make_rule_prerequisites(rule),
            [
                "/tmp/x/input.cl",
                "/usr/lib/clang/opencl-c-base.h",
                "inc/a b.h",
                "/abs/c$.h"
            ]
            .map(PathBuf::from)
        );
        assert!(make_rule_prerequisites("").is_empty());
    }

    #[test]
    fn dependencies_are_the_included_files() {
        if !opencl_c_compiler_available() {
            return;
        }
        let dir = temp_dir().unwrap();
        std::fs::write(dir.0.join("n.h"), "#define N 3\n").unwrap();
        let c = OpenClC {
            llvm_server: true,
            source: "#include \"n.h\"\nkernel void k(global int *p) { p[0] = N; }",
            options: &format!("-I {}", dir.0.display()),
            ..OpenClC::default()
        }
        .compile_with_dependencies()
        .unwrap_or_else(|e| panic!("{e}"));
        assert!(
            c.dependencies.contains(&dir.0.join("n.h")),
            "{:?}",
            c.dependencies
        );
        assert!(
            c.dependencies.iter().all(|d| !d.ends_with("input.cl")),
            "{:?}",
            c.dependencies
        );
    }

    /// The SPIR-V of `source` built with `options`, disassembled (None without the tools).
    fn disassembled(source: &str, options: &str) -> Option<String> {
        if !opencl_c_compiler_available() || !tool_exists("spirv-dis") {
            return None;
        }
        let spv = compile_opencl_c(source, options, &["cl_khr_fp64", "__opencl_c_fp64"], &[])
            .unwrap_or_else(|e| panic!("{options}: {e}"));
        let dir = temp_dir().unwrap();
        let path = dir.0.join("m.spv");
        std::fs::write(&path, &spv).unwrap();
        if tool_exists("spirv-val") {
            let val = Command::new("spirv-val").arg(&path).output().unwrap();
            assert!(
                val.status.success(),
                "{options}: {}",
                String::from_utf8_lossy(&val.stderr)
            );
        }
        let dis = Command::new("spirv-dis").arg(&path).output().unwrap();
        Some(String::from_utf8_lossy(&dis.stdout).into_owned())
    }

    #[test]
    fn fast_math_flags_become_valid_decorations() {
        let src = "kernel void k(global float *p) { p[0] = p[1] / p[2] + p[3] / 3.0f; }";
        let Some(plain) = disassembled(src, "") else {
            return;
        };
        assert!(!plain.contains("FPFastMathMode"), "{plain}");
        assert_eq!(plain.matches("OpFDiv").count(), 2, "{plain}");
        let fast = disassembled(src, "-cl-fast-relaxed-math").unwrap();
        assert!(fast.contains("FPFastMathMode"), "{fast}");
        assert!(fast.contains("AllowRecip"), "{fast}");
        // x / 3 became a multiplication by the rounded reciprocal: allowed here...
        assert_eq!(fast.matches("OpFDiv").count(), 1, "{fast}");
        // ...but not when division must stay correctly rounded.
        let exact = disassembled(
            src,
            "-cl-fast-relaxed-math -cl-fp32-correctly-rounded-divide-sqrt",
        )
        .unwrap();
        assert_eq!(exact.matches("OpFDiv").count(), 2, "{exact}");
        assert!(!exact.contains("AllowRecip"), "{exact}");
        assert!(exact.contains("FPFastMathMode"), "{exact}");
        // -cl-opt-disable skips opt-15: the -O0 module keeps its private variables in memory.
        let o0 = disassembled(src, "-cl-opt-disable").unwrap();
        assert!(o0.contains("OpVariable %_ptr_Function"), "{o0}");
        assert!(!plain.contains("OpVariable %_ptr_Function"), "{plain}");
    }

    #[test]
    fn vector_selects_on_a_scalar_condition_are_valid_spirv_1_0() {
        // opt-15 makes `select i1 %c, <4 x float>` of both; llvm-spirv-15 writes it as an
        // OpSelect with a scalar condition, valid only from SPIR-V 1.4.
        let src = "kernel void k(global int4 *a, global int4 *b, global int *c) {\
                       size_t i = get_global_id(0); int4 x = a[i], y = b[i];\
                       a[i] = c[i] > 3 ? x + 1 : y * 2; }\
                   kernel void f(global float4 *a, int n) {\
                       float4 v = a[get_global_id(0)], r;\
                       if (n > 2) r = v * 2.0f; else r = v + 1.0f;\
                       a[get_global_id(0)] = r; }";
        // disassembled() runs spirv-val on the module.
        let Some(text) = disassembled(src, "") else {
            return;
        };
        assert!(text.contains("OpTypeVector %bool 4"), "{text}");
        assert!(text.contains("OpCompositeConstruct %v4bool"), "{text}");
        assert!(text.contains("; Version: 1.0"), "{text}");
    }

    #[test]
    fn switches_on_one_bit_become_conditional_branches() {
        // instcombine makes `switch i1` of a switch on `i & 1`; llvm-spirv-15 writes it as an
        // OpSwitch on a bool, which SPIR-V does not allow (the CTS math kernels for float3).
        let src = "kernel void k(global float *out, global const float *in) {\
                       size_t i = get_global_id(0); float3 a = (float3)(NAN);\
                       switch (i & 1) { case 0: a.y = in[3 * i + 1]; case 1: a.x = in[3 * i]; break; }\
                       switch (i & 1) { case 0: out[3 * i + 1] = a.y; case 1: out[3 * i] = a.x; break; } }";
        // disassembled() runs spirv-val on the module.
        let Some(text) = disassembled(src, "-cl-std=CL3.0") else {
            return;
        };
        assert!(!text.contains("OpSwitch"), "{text}");
    }

    #[test]
    fn optional_features_are_off() {
        if !opencl_c_compiler_available() {
            return;
        }
        let src = "kernel void k(read_only image2d_t i, global float4 *p) \
                   { p[0] = read_imagef(i, (int2)(0, 0)); }";
        let device = ["cl_khr_fp64", "__opencl_c_fp64", "__opencl_c_int64"];
        let err = compile_opencl_c(src, "-cl-std=CL3.0", &device, &[]).unwrap_err();
        assert!(err.contains("__opencl_c_images"), "{err}");
        let fp64 = "kernel void k(global double *p) { p[0] = sqrt(p[1]); }";
        assert!(compile_opencl_c(fp64, "-cl-std=CL3.0", &device, &[]).is_ok());
        // A device with fp64 turned off: clang refuses double.
        assert!(compile_opencl_c(fp64, "-cl-std=CL3.0", &["__opencl_c_int64"], &[]).is_err());
        // Half arithmetic needs cl_khr_fp16; vload_half/vstore_half never do.
        let fp16 = "#pragma OPENCL EXTENSION cl_khr_fp16 : enable\n\
                    kernel void k(global half *p) { p[0] = p[1] * p[2]; }";
        assert!(compile_opencl_c(fp16, "-cl-std=CL1.2", &["cl_khr_fp16"], &[]).is_ok());
        assert!(compile_opencl_c(fp16, "-cl-std=CL1.2", &[], &[]).is_err());
        let buffer = "kernel void k(global half *p) { vstore_half(vload_half(1, p), 0, p); }";
        assert!(compile_opencl_c(buffer, "-cl-std=CL1.2", &[], &[]).is_ok());
    }

    #[test]
    fn work_group_uniform_arithmetic_built_ins() {
        if !opencl_c_compiler_available() {
            return;
        }
        let device = [
            "cl_khr_work_group_uniform_arithmetic",
            "__opencl_c_work_group_collective_functions",
            "__opencl_c_int64",
            "cl_khr_fp64",
            "__opencl_c_fp64",
            "cl_khr_fp16",
        ];
        let src = "#pragma OPENCL EXTENSION cl_khr_fp16 : enable\n\
            kernel void k(global int *i, global ulong *u, global float *f, global double *d,\
                          global half *h) {\
                size_t g = get_global_id(0);\
                i[g] = work_group_reduce_mul(i[g]) + work_group_scan_inclusive_and(i[g])\
                     + work_group_scan_exclusive_logical_xor(i[g]);\
                u[g] = work_group_reduce_or(u[g]) ^ work_group_scan_exclusive_xor(u[g]);\
                f[g] = work_group_scan_inclusive_mul(f[g]);\
                d[g] = work_group_scan_exclusive_mul(d[g]);\
                h[g] = work_group_reduce_mul(h[g]) + (half)work_group_reduce_logical_or(g > 3);\
            }";
        // A device with the extension: its macro in -cl-ext and its prelude.
        let build = |source: &str, options: &str, extensions: &[&str]| {
            OpenClC {
                source,
                options,
                extensions,
                preludes: &[Prelude::WorkGroupUniformArithmetic],
                spirv_extensions: ferrocl_frontend::SUPPORTED_EXTENSIONS,
                llvm_server: true,
                ..OpenClC::default()
            }
            .compile()
        };
        for std in ["-cl-std=CL2.0", "-cl-std=CL3.0"] {
            let bytes = build(src, std, &device).unwrap_or_else(|log| panic!("{log}"));
            let module = rspirv::dr::load_bytes(&bytes).expect("SPIR-V");
            let ops: Vec<spirv::Op> = module
                .functions
                .iter()
                .flat_map(|f| &f.blocks)
                .flat_map(|b| &b.instructions)
                .map(|i| i.class.opcode)
                .collect();
            use spirv::Op::*;
            for op in [
                GroupIMulKHR,
                GroupFMulKHR,
                GroupBitwiseAndKHR,
                GroupBitwiseOrKHR,
                GroupBitwiseXorKHR,
                GroupLogicalOrKHR,
                GroupLogicalXorKHR,
            ] {
                assert!(ops.contains(&op), "{std}: no Op{op:?}");
            }
            ferrocl_frontend::parse(&bytes).unwrap_or_else(|e| panic!("{std}: {}", e.log()));
        }
        // The extension macro exists exactly where the built-ins do.
        let probe = "#ifdef cl_khr_work_group_uniform_arithmetic\n#error defined\n#endif\n\
                     kernel void k(global int *p) { p[0] = 1; }";
        assert!(build(probe, "-cl-std=CL3.0", &device).is_err());
        assert!(build(probe, "-cl-std=CL1.2", &device).is_ok());
        assert!(compile_opencl_c(probe, "-cl-std=CL3.0", &device[1..], &[]).is_ok());
        // Where neither the source nor the options name a built-in, the declarations are left
        // out; a name in the options, or in a header, still finds them.
        let dir = temp_dir().expect("temp dir");
        let header = "#define TOTAL(x) work_group_reduce_mul(x)\n";
        std::fs::write(dir.0.join("total.h"), header).expect("header");
        let by_header =
            "#include \"total.h\"\nkernel void k(global int *p) { p[0] = TOTAL(p[0]); }";
        let options = format!("-cl-std=CL3.0 -I {}", dir.0.display());
        build(by_header, &options, &device).unwrap_or_else(|log| panic!("{log}"));
        let by_option = "kernel void k(global int *p) { p[0] = TOTAL(p[0]); }";
        let options = "-cl-std=CL3.0 -DTOTAL=work_group_reduce_mul";
        build(by_option, options, &device).unwrap_or_else(|log| panic!("{log}"));
        let unnamed = "kernel void k(global int *p) { p[0] = TOTAL(p[0]); }";
        assert!(build(unnamed, "-cl-std=CL3.0", &device).is_err());
    }

    #[test]
    fn compiles_or_reports() {
        let r = compile_opencl_c("kernel void k(global int *p) { p[0] = 1; }", "", &[], &[]);
        if opencl_c_compiler_available() {
            let bytes = r.unwrap();
            assert!(ferrocl_frontend::is_spirv(&bytes).is_ok());
            let err = compile_opencl_c("kernel void k( { }", "", &[], &[]).unwrap_err();
            assert!(err.contains("error"), "{err}");
        } else {
            assert!(r.is_err());
        }
    }

    #[test]
    fn switches_on_a_few_bits_stay_in_legal_integer_widths() {
        if !opencl_c_compiler_available() {
            return;
        }
        // instcombine would make this a switch on an i4 without the native widths in the data
        // layout (OPT_DATA_LAYOUT), and llvm-spirv would refuse the module.
        let src = "kernel void k(global const int *in, global int *out) {
            int s = in[get_global_id(0)];
            switch (s & 0xf) {
            case 1: out[0] = 5; break;
            case 2: out[1] = 7; break;
            case 3: out[2] = 9; break;
            default: out[3] = s;
            }
        }";
        let bytes = compile_opencl_c(src, "", &[], &[]).unwrap_or_else(|e| panic!("{e}"));
        ferrocl_frontend::parse(&bytes).unwrap_or_else(|e| panic!("{}", e.log()));
    }
}
