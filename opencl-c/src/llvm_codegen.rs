//! LLVM's code generator for the wide backend (codegen's backend/): textual LLVM IR of one
//! kernel function becomes an x86-64 ELF relocatable object for this CPU, made in the LLVM
//! server (llvm_tools.rs) so that an LLVM fatal error (an abort on IR it cannot select, an
//! assertion) ends the server and fails this kernel's wide build, never the application.
//!
//! Owns the target machine's choices: the host's CPU and features, less the vector features
//! wider than the code may use; `default<O2>` then the code generator at `Aggressive`; the
//! position-independent small code model: the function's constant pools and tables travel
//! with it (codegen's object loader places them after the code), so they are reached
//! PC-relative, and what lies outside — the JIT's data and functions, which it maps far from
//! the code — through a GOT slot or a PLT stub that loader adds. The large code model reached
//! every constant through a 64-bit `movabs` of its address first: 27 more instructions in the
//! hot loop of a password-hashing tool's MD5 kernel.

use crate::llvm_passes::{collect_diagnostic, Diagnostics};
use std::ffi::{c_char, c_int, c_void, CStr, CString};
use std::sync::OnceLock;

type Ref = *mut c_void;

/// The only target: the code runs in this process.
const TRIPLE: &CStr = c"x86_64-unknown-linux-gnu";

/// The optimisation pipeline run before code generation (what `clang -O2` runs).
const PASSES: &CStr = c"default<O2>";

/// `LLVMCodeGenLevelAggressive`, `LLVMRelocPIC`, `LLVMCodeModelSmall`, `LLVMObjectFile`
/// (llvm-c/TargetMachine.h).
const CODEGEN_AGGRESSIVE: c_int = 3;
const RELOC_PIC: c_int = 2;
const CODE_MODEL_SMALL: c_int = 3;
const OBJECT_FILE: c_int = 1;
/// `LLVMReturnStatusAction`: the verifier reports instead of aborting.
const RETURN_STATUS: c_int = 2;

/// Reply frames of a request: the object, or the reason there is none.
const FRAME_OBJECT: u8 = b'O';
const FRAME_FAILED: u8 = b'E';

/// The LLVM-C functions code generation needs beyond the passes' (llvm_passes.rs), from the
/// same library.
struct Api {
    initialize: [unsafe extern "C" fn(); 4],
    context_create: unsafe extern "C" fn() -> Ref,
    context_dispose: unsafe extern "C" fn(Ref),
    set_diagnostic_handler: unsafe extern "C" fn(Ref, DiagnosticHandler, *mut c_void),
    diagnostic_description: unsafe extern "C" fn(Ref) -> *mut c_char,
    buffer_from_copy: unsafe extern "C" fn(*const c_char, usize, *const c_char) -> Ref,
    buffer_dispose: unsafe extern "C" fn(Ref),
    buffer_start: unsafe extern "C" fn(Ref) -> *const c_char,
    buffer_size: unsafe extern "C" fn(Ref) -> usize,
    parse_ir: unsafe extern "C" fn(Ref, Ref, *mut Ref, *mut *mut c_char) -> c_int,
    verify_module: unsafe extern "C" fn(Ref, c_int, *mut *mut c_char) -> c_int,
    module_dispose: unsafe extern "C" fn(Ref),
    message_dispose: unsafe extern "C" fn(*mut c_char),
    host_cpu_name: unsafe extern "C" fn() -> *mut c_char,
    host_cpu_features: unsafe extern "C" fn() -> *mut c_char,
    target_from_triple: unsafe extern "C" fn(*const c_char, *mut Ref, *mut *mut c_char) -> c_int,
    create_target_machine: unsafe extern "C" fn(
        Ref,
        *const c_char,
        *const c_char,
        *const c_char,
        c_int,
        c_int,
        c_int,
    ) -> Ref,
    dispose_target_machine: unsafe extern "C" fn(Ref),
    create_data_layout: unsafe extern "C" fn(Ref) -> Ref,
    dispose_data_layout: unsafe extern "C" fn(Ref),
    set_module_data_layout: unsafe extern "C" fn(Ref, Ref),
    set_target: unsafe extern "C" fn(Ref, *const c_char),
    options_create: unsafe extern "C" fn() -> Ref,
    options_dispose: unsafe extern "C" fn(Ref),
    run_passes: unsafe extern "C" fn(Ref, *const c_char, Ref, Ref) -> Ref,
    error_message: unsafe extern "C" fn(Ref) -> *mut c_char,
    error_message_dispose: unsafe extern "C" fn(*mut c_char),
    emit_to_buffer: unsafe extern "C" fn(Ref, Ref, c_int, *mut *mut c_char, *mut Ref) -> c_int,
    /// Keeps the functions above mapped.
    _library: libloading::Library,
}

type DiagnosticHandler = unsafe extern "C" fn(Ref, *mut c_void);

const LIBRARY: &str = "libLLVM-15.so.1";

fn api() -> Option<&'static Api> {
    static API: OnceLock<Option<Api>> = OnceLock::new();
    API.get_or_init(load).as_ref()
}

/// Loads the functions now: the LLVM server calls this before it forks, so that a server
/// finds them loaded (no dynamic loading in a forked child of a threaded process).
pub(crate) fn preload() {
    api();
}

fn load() -> Option<Api> {
    // SAFETY: libLLVM's initialisers only register passes, options and targets; the library
    // is the one llvm_passes.rs loads, so this maps nothing new.
    let library = unsafe { libloading::Library::new(LIBRARY) }.ok()?;
    macro_rules! get {
        ($name:literal) => {
            // SAFETY: the symbol is the LLVM-C function of that name, whose C signature is the
            // field's type.
            *unsafe { library.get(concat!($name, "\0").as_bytes()) }.ok()?
        };
    }
    Some(Api {
        initialize: [
            get!("LLVMInitializeX86TargetInfo"),
            get!("LLVMInitializeX86Target"),
            get!("LLVMInitializeX86TargetMC"),
            get!("LLVMInitializeX86AsmPrinter"),
        ],
        context_create: get!("LLVMContextCreate"),
        context_dispose: get!("LLVMContextDispose"),
        set_diagnostic_handler: get!("LLVMContextSetDiagnosticHandler"),
        diagnostic_description: get!("LLVMGetDiagInfoDescription"),
        buffer_from_copy: get!("LLVMCreateMemoryBufferWithMemoryRangeCopy"),
        buffer_dispose: get!("LLVMDisposeMemoryBuffer"),
        buffer_start: get!("LLVMGetBufferStart"),
        buffer_size: get!("LLVMGetBufferSize"),
        parse_ir: get!("LLVMParseIRInContext"),
        verify_module: get!("LLVMVerifyModule"),
        module_dispose: get!("LLVMDisposeModule"),
        message_dispose: get!("LLVMDisposeMessage"),
        host_cpu_name: get!("LLVMGetHostCPUName"),
        host_cpu_features: get!("LLVMGetHostCPUFeatures"),
        target_from_triple: get!("LLVMGetTargetFromTriple"),
        create_target_machine: get!("LLVMCreateTargetMachine"),
        dispose_target_machine: get!("LLVMDisposeTargetMachine"),
        create_data_layout: get!("LLVMCreateTargetDataLayout"),
        dispose_data_layout: get!("LLVMDisposeTargetData"),
        set_module_data_layout: get!("LLVMSetModuleDataLayout"),
        set_target: get!("LLVMSetTarget"),
        options_create: get!("LLVMCreatePassBuilderOptions"),
        options_dispose: get!("LLVMDisposePassBuilderOptions"),
        run_passes: get!("LLVMRunPasses"),
        error_message: get!("LLVMGetErrorMessage"),
        error_message_dispose: get!("LLVMDisposeErrorMessage"),
        emit_to_buffer: get!("LLVMTargetMachineEmitToMemoryBuffer"),
        _library: library,
    })
}

/// Why there is no wide code on this installation, if there is none.
fn unavailable() -> Option<&'static str> {
    if !cfg!(target_arch = "x86_64") {
        return Some("the wide backend targets x86-64 only");
    }
    if api().is_none() {
        return Some("libLLVM-15.so.1 does not load (or lacks the X86 code generator)");
    }
    if !crate::llvm_tools::available() {
        return Some("the LLVM server is not available (the LLVM tools library was not built or does not load)");
    }
    None
}

/// Whether [`compile_object`] can run here.
pub fn wide_backend_available() -> bool {
    unavailable().is_none()
}

/// What, besides the IR and `vector_bits`, decides the object [`compile_object`] makes: the
/// LLVM library and the host CPU as LLVM sees it. Part of the machine-code cache's key.
pub fn wide_code_identity(vector_bits: u32) -> Option<String> {
    let api = api()?;
    // SAFETY: both strings are LLVM messages ours to dispose of; reading the host CPU has no
    // other effect.
    let (cpu, features) = unsafe {
        (
            take_message(api, (api.host_cpu_name)()),
            take_message(api, (api.host_cpu_features)()),
        )
    };
    Some(format!(
        "llvm 15 {} cpu={cpu} features={}\n",
        TRIPLE.to_string_lossy(),
        features_for(&features, vector_bits)
    ))
}

/// The host's feature string with the vector features wider than `vector_bits` turned off
/// (LLVM turns off every feature implying one turned off: `-avx512f` takes AVX-512 VL, BW …,
/// `-avx` takes AVX2, FMA and the rest), so code made for a 256-bit target never uses zmm.
fn features_for(host: &str, vector_bits: u32) -> String {
    let mut features = host.to_owned();
    if vector_bits < 512 {
        features.push_str(",-avx512f");
    }
    if vector_bits < 256 {
        features.push_str(",-avx");
    }
    features.trim_start_matches(',').to_owned()
}

/// Compiles a module of textual LLVM IR (LLVM 15, opaque pointers) for this CPU with vectors of
/// at most `vector_bits`, in the LLVM server: the ELF relocatable object, or why not (LLVM's
/// own message for IR it refuses; how the server ended when LLVM ended it).
pub fn compile_object(ir: &str, vector_bits: u32) -> Result<Vec<u8>, String> {
    if let Some(why) = unavailable() {
        return Err(why.to_owned());
    }
    let stderr = std::env::temp_dir().join(format!(
        "ferrocl-llvm-codegen-{}-{:?}.err",
        std::process::id(),
        std::thread::current().id()
    ));
    let bits = vector_bits.to_string();
    let request = crate::llvm_tools::pack(&[ir.as_bytes(), bits.as_bytes()]);
    let reply = crate::llvm_tools::in_server(&stderr, &request, serve_codegen);
    let _ = std::fs::remove_file(&stderr);
    let reply = reply.ok_or("the LLVM server could not be started")?;
    if let Some(object) = reply.frame(FRAME_OBJECT) {
        return Ok(object.to_vec());
    }
    if let Some(failed) = reply.frame(FRAME_FAILED) {
        return Err(String::from_utf8_lossy(failed).into_owned());
    }
    match reply.ended {
        Err(ended) => Err(ended.trim_end().to_owned()),
        Ok(()) => Err("the LLVM server ended the request without an object".into()),
    }
}

/// The server's side of [`compile_object`]: (IR, vector bits) → [`FRAME_OBJECT`] or
/// [`FRAME_FAILED`].
fn serve_codegen(
    _tools: &crate::llvm_tools::Tools,
    request: &[u8],
    out: &mut crate::llvm_tools::Sender,
) {
    let parsed = crate::llvm_tools::unpack(request).and_then(|items| {
        let [ir, bits] = <[&[u8]; 2]>::try_from(items).ok()?;
        let bits = std::str::from_utf8(bits).ok()?.parse::<u32>().ok()?;
        Some((ir, bits))
    });
    let Some((ir, vector_bits)) = parsed else {
        out.send(FRAME_FAILED, b"a malformed code generation request");
        return;
    };
    let Some(api) = api() else {
        out.send(FRAME_FAILED, b"libLLVM-15.so.1 does not load in the server");
        return;
    };
    match compile_in_server(api, ir, vector_bits) {
        Ok(object) => out.send(FRAME_OBJECT, &object),
        Err(e) => out.send(FRAME_FAILED, e.as_bytes()),
    }
}

/// Takes an LLVM message (null is empty).
///
/// # Safety
/// `message` is null or a message LLVM allocated for the caller, not yet disposed of.
unsafe fn take_message(api: &Api, message: *mut c_char) -> String {
    if message.is_null() {
        return String::new();
    }
    // SAFETY: the caller's contract; disposed of once, here.
    unsafe {
        let text = CStr::from_ptr(message).to_string_lossy().into_owned();
        (api.message_dispose)(message);
        text
    }
}

fn compile_in_server(api: &Api, ir: &[u8], vector_bits: u32) -> Result<Vec<u8>, String> {
    // Initialising a target twice is a no-op in LLVM (a registered target is kept).
    for initialize in api.initialize {
        // SAFETY: LLVM's target initialisers take nothing and only register the X86 target.
        unsafe { initialize() };
    }
    // SAFETY: every object is created, used and disposed of here, in LLVM-C's ownership rules:
    // the parser takes the input buffer; the module belongs to the context and is disposed of
    // before it; the target machine, data layout, pass options, output buffer and messages are
    // ours to dispose of.
    unsafe {
        let context = (api.context_create)();
        let mut diagnostics = Diagnostics {
            describe: api.diagnostic_description,
            dispose: api.message_dispose,
            text: String::new(),
        };
        (api.set_diagnostic_handler)(
            context,
            collect_diagnostic,
            (&mut diagnostics as *mut Diagnostics).cast(),
        );
        let input = (api.buffer_from_copy)(ir.as_ptr().cast(), ir.len(), c"kernel.ll".as_ptr());
        let mut module: Ref = std::ptr::null_mut();
        let mut message: *mut c_char = std::ptr::null_mut();
        let failed = (api.parse_ir)(context, input, &mut module, &mut message) != 0;
        let parse_message = take_message(api, message);
        let result = if failed || module.is_null() {
            Err(format!(
                "LLVM cannot parse the IR: {}{}",
                parse_message.trim_end(),
                diagnostics.text.trim_end()
            ))
        } else {
            let r = generate(api, module, vector_bits);
            (api.module_dispose)(module);
            r
        };
        (api.context_dispose)(context);
        result.map_err(|e| {
            if diagnostics.text.is_empty() || e.contains(diagnostics.text.trim_end()) {
                e
            } else {
                format!("{e}\n{}", diagnostics.text.trim_end())
            }
        })
    }
}

/// Verifies, optimises and compiles a parsed module.
///
/// # Safety
/// `module` is a live module of a live context.
unsafe fn generate(api: &Api, module: Ref, vector_bits: u32) -> Result<Vec<u8>, String> {
    // SAFETY: the caller's contract; ownership as in `compile_in_server`.
    unsafe {
        let mut message: *mut c_char = std::ptr::null_mut();
        let broken = (api.verify_module)(module, RETURN_STATUS, &mut message) != 0;
        let text = take_message(api, message);
        if broken {
            return Err(format!("the IR is broken: {}", text.trim_end()));
        }
        let mut target: Ref = std::ptr::null_mut();
        let mut message: *mut c_char = std::ptr::null_mut();
        if (api.target_from_triple)(TRIPLE.as_ptr(), &mut target, &mut message) != 0 {
            return Err(format!(
                "no X86 target in LLVM: {}",
                take_message(api, message)
            ));
        }
        let cpu = take_message(api, (api.host_cpu_name)());
        let features = features_for(&take_message(api, (api.host_cpu_features)()), vector_bits);
        let (Ok(cpu), Ok(features)) = (CString::new(cpu), CString::new(features)) else {
            return Err("the host CPU's name or features hold a NUL byte".into());
        };
        let machine = (api.create_target_machine)(
            target,
            TRIPLE.as_ptr(),
            cpu.as_ptr(),
            features.as_ptr(),
            CODEGEN_AGGRESSIVE,
            RELOC_PIC,
            CODE_MODEL_SMALL,
        );
        if machine.is_null() {
            return Err("LLVM cannot make a target machine for this CPU".into());
        }
        let result = optimise_and_emit(api, module, machine);
        (api.dispose_target_machine)(machine);
        result
    }
}

/// # Safety
/// `module` is a live, verified module; `machine` a live target machine.
unsafe fn optimise_and_emit(api: &Api, module: Ref, machine: Ref) -> Result<Vec<u8>, String> {
    // SAFETY: the caller's contract; ownership as in `compile_in_server`.
    unsafe {
        (api.set_target)(module, TRIPLE.as_ptr());
        let layout = (api.create_data_layout)(machine);
        (api.set_module_data_layout)(module, layout);
        (api.dispose_data_layout)(layout);
        let options = (api.options_create)();
        let error = (api.run_passes)(module, PASSES.as_ptr(), machine, options);
        (api.options_dispose)(options);
        if !error.is_null() {
            let message = (api.error_message)(error);
            let text = CStr::from_ptr(message).to_string_lossy().into_owned();
            (api.error_message_dispose)(message);
            return Err(format!("LLVM's passes failed: {text}"));
        }
        let mut message: *mut c_char = std::ptr::null_mut();
        let mut buffer: Ref = std::ptr::null_mut();
        let failed =
            (api.emit_to_buffer)(machine, module, OBJECT_FILE, &mut message, &mut buffer) != 0;
        let text = take_message(api, message);
        if failed || buffer.is_null() {
            return Err(format!("LLVM's code generator failed: {}", text.trim_end()));
        }
        let bytes = std::slice::from_raw_parts(
            (api.buffer_start)(buffer).cast::<u8>(),
            (api.buffer_size)(buffer),
        )
        .to_vec();
        (api.buffer_dispose)(buffer);
        Ok(bytes)
    }
}

#[cfg(test)]
mod tests {
    use super::{compile_object, features_for, wide_backend_available};

    /// A function that calls external symbols, multiplies by a vector constant (from the
    /// constant pool) and switches over five cases (a jump table).
    pub(crate) const SAMPLE_IR: &str = r#"
declare void @__ferrocl_u0_1(ptr)
declare void @__ferrocl_u0_2(ptr)
declare void @__ferrocl_u0_3(ptr)
declare void @__ferrocl_u0_4(ptr)
declare void @__ferrocl_u0_5(ptr)

define void @sample(ptr %out, i32 %sel) nounwind {
entry:
  %v = load <16 x float>, ptr %out, align 4
  %m = fmul <16 x float> %v, <float 1.5, float 2.5, float 3.5, float 4.5, float 5.5, float 6.5, float 7.5, float 8.5, float 9.5, float 10.5, float 11.5, float 12.5, float 13.5, float 14.5, float 15.5, float 16.5>
  store <16 x float> %m, ptr %out, align 4
  switch i32 %sel, label %done [
    i32 0, label %a
    i32 1, label %b
    i32 2, label %c
    i32 3, label %d
    i32 4, label %e
  ]
a:
  call void @__ferrocl_u0_1(ptr %out)
  br label %done
b:
  call void @__ferrocl_u0_2(ptr %out)
  br label %done
c:
  call void @__ferrocl_u0_3(ptr %out)
  br label %done
d:
  call void @__ferrocl_u0_4(ptr %out)
  br label %done
e:
  call void @__ferrocl_u0_5(ptr %out)
  br label %done
done:
  ret void
}
"#;

    /// `llvm-objdump-15 -dr` of an object (the test's way to look at the code).
    fn disassemble(object: &[u8], name: &str) -> String {
        let path = std::env::temp_dir().join(format!(
            "ferrocl-llvm-codegen-test-{}-{name}.o",
            std::process::id()
        ));
        std::fs::write(&path, object).expect("write the object");
        let out = std::process::Command::new("llvm-objdump-15")
            .args(["-dr", "--no-show-raw-insn"])
            .arg(&path)
            .output()
            .expect("llvm-objdump-15 runs (llvm-15 is installed)");
        let _ = std::fs::remove_file(&path);
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    fn host_has_avx512() -> bool {
        std::arch::is_x86_feature_detected!("avx512f")
    }

    #[test]
    fn ir_becomes_a_position_independent_object() {
        assert!(
            wide_backend_available(),
            "the LLVM server and libLLVM-15 must be available here"
        );
        let object = compile_object(SAMPLE_IR, 256).expect("compiles");
        assert!(object.starts_with(b"\x7fELF\x02\x01"), "a 64-bit ELF");
        let listing = disassemble(&object, "sample");
        assert!(listing.contains("<sample>:"), "{listing}");
        // Calls through the PLT (codegen's loader adds the stubs), the constant pool and the
        // jump table PC-relative: no absolute address, no `movabs`.
        for callee in 1..=5 {
            let name = format!("R_X86_64_PLT32\t__ferrocl_u0_{callee}");
            assert!(listing.contains(&name), "{name} in\n{listing}");
        }
        for absolute in ["R_X86_64_64", "R_X86_64_32", "movabs"] {
            assert!(!listing.contains(absolute), "{absolute} in\n{listing}");
        }
        assert!(listing.contains("R_X86_64_PC32"), "{listing}");
        assert!(listing.contains(".rodata"), "{listing}");
        assert!(!listing.contains("zmm"), "256 bits use no zmm:\n{listing}");
        assert!(listing.contains("ymm"), "{listing}");
        if host_has_avx512() {
            let wide = disassemble(&compile_object(SAMPLE_IR, 512).expect("compiles"), "512");
            assert!(wide.contains("zmm"), "{wide}");
        }
    }

    #[test]
    fn bad_ir_is_an_error_with_llvm_s_message() {
        let error = compile_object("define void @f( {", 256).unwrap_err();
        assert!(error.contains("cannot parse"), "{error}");
        assert!(error.contains("kernel.ll:1"), "{error}");
        // Parsed but invalid: the verifier's message.
        let broken = "define i32 @f() {\n  ret i64 0\n}\n";
        let error = compile_object(broken, 256).unwrap_err();
        assert!(error.contains("ret"), "{error}");
        // And the server still compiles.
        assert!(compile_object(SAMPLE_IR, 256).is_ok());
    }

    /// LLVM's legaliser failing on IR (an AVX-512 intrinsic for a 256-bit target: a fatal
    /// error, which aborts) ends the server, not this process, with
    /// LLVM's message; the next request is served.
    #[test]
    fn an_llvm_fatal_error_ends_the_server_only() {
        let fatal = "declare <16 x float> @llvm.x86.avx512.rsqrt14.ps.512(<16 x float>, <16 x float>, i16)\n\
                     define <16 x float> @f(<16 x float> %x) {\n  \
                     %r = call <16 x float> @llvm.x86.avx512.rsqrt14.ps.512(<16 x float> %x, <16 x float> %x, i16 -1)\n  \
                     ret <16 x float> %r\n}\n";
        let error = compile_object(fatal, 256).unwrap_err();
        assert!(error.contains("LLVM ERROR: "), "{error}");
        assert!(error.contains("the LLVM tools failed"), "{error}");
        assert!(compile_object(SAMPLE_IR, 256).is_ok());
    }

    #[test]
    fn narrower_targets_turn_wider_vector_features_off() {
        let host = "+sse2,+avx,+avx2,+avx512f,+avx512vl";
        assert_eq!(features_for(host, 512), host);
        assert!(features_for(host, 256).ends_with(",-avx512f"));
        assert!(features_for(host, 128).ends_with(",-avx512f,-avx"));
        assert_eq!(features_for("", 256), "-avx512f");
    }
}
