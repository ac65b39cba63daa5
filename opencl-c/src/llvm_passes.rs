//! The recipe's opt-15 step run through LLVM's C API in the system's `libLLVM-15.so.1` (the
//! library opt-15 itself runs on), instead of as a third process: in the LLVM server with
//! clang and llvm-spirv (llvm_tools.rs), or in this process where only this library loads.
//!
//! Most of what opt-15 costs per build is starting up (loading and initialising libLLVM,
//! registering every pass): the clang | opt | llvm-spirv pipeline took 76 ms for a small
//! kernel and clang | llvm-spirv 30 ms, on 2 cores. Loaded once, the library runs the same
//! pass pipeline on the same data layout in 1–2 ms. Where the library cannot be loaded the
//! recipe runs opt-15 as a process, as before.
//!
//! Run in this process, a fatal error inside LLVM would end the host process, as it does in
//! every driver that runs LLVM in-process (PoCL, Mesa); the input is clang's own output for a
//! source clang accepted. In the server it ends the server.

use std::ffi::{c_char, c_int, c_void, CStr, CString};
use std::sync::{Mutex, MutexGuard, OnceLock};

type Ref = *mut c_void;

/// The C API functions the step needs (LLVM-C, stable across LLVM versions).
pub(crate) struct Api {
    context_create: unsafe extern "C" fn() -> Ref,
    context_dispose: unsafe extern "C" fn(Ref),
    set_diagnostic_handler: unsafe extern "C" fn(Ref, DiagnosticHandler, *mut c_void),
    diagnostic_description: unsafe extern "C" fn(Ref) -> *mut c_char,
    buffer_from_copy: unsafe extern "C" fn(*const c_char, usize, *const c_char) -> Ref,
    buffer_dispose: unsafe extern "C" fn(Ref),
    buffer_start: unsafe extern "C" fn(Ref) -> *const c_char,
    buffer_size: unsafe extern "C" fn(Ref) -> usize,
    parse_bitcode: unsafe extern "C" fn(Ref, Ref, *mut Ref) -> c_int,
    set_data_layout: unsafe extern "C" fn(Ref, *const c_char),
    options_create: unsafe extern "C" fn() -> Ref,
    options_dispose: unsafe extern "C" fn(Ref),
    run_passes: unsafe extern "C" fn(Ref, *const c_char, Ref, Ref) -> Ref,
    error_message: unsafe extern "C" fn(Ref) -> *mut c_char,
    error_message_dispose: unsafe extern "C" fn(*mut c_char),
    verify_module: unsafe extern "C" fn(Ref, c_int, *mut *mut c_char) -> c_int,
    message_dispose: unsafe extern "C" fn(*mut c_char),
    write_bitcode: unsafe extern "C" fn(Ref) -> Ref,
    module_dispose: unsafe extern "C" fn(Ref),
    /// Keeps the functions above mapped.
    _library: libloading::Library,
}

type DiagnosticHandler = unsafe extern "C" fn(Ref, *mut c_void);

/// `LLVMReturnStatusAction`: the verifier reports instead of aborting.
const RETURN_STATUS: c_int = 2;

const LIBRARY: &str = "libLLVM-15.so.1";

fn api() -> Option<&'static Mutex<Api>> {
    static API: OnceLock<Option<Mutex<Api>>> = OnceLock::new();
    API.get_or_init(|| load().map(Mutex::new)).as_ref()
}

fn load() -> Option<Api> {
    // SAFETY: libLLVM's initialisers only register passes and options; loading it has no
    // other effect on this process.
    let library = unsafe { libloading::Library::new(LIBRARY) }.ok()?;
    macro_rules! get {
        ($name:literal) => {
            // SAFETY: the symbol is the LLVM-C function of that name, whose C signature is the
            // field's type.
            *unsafe { library.get(concat!($name, "\0").as_bytes()) }.ok()?
        };
    }
    Some(Api {
        context_create: get!("LLVMContextCreate"),
        context_dispose: get!("LLVMContextDispose"),
        set_diagnostic_handler: get!("LLVMContextSetDiagnosticHandler"),
        diagnostic_description: get!("LLVMGetDiagInfoDescription"),
        buffer_from_copy: get!("LLVMCreateMemoryBufferWithMemoryRangeCopy"),
        buffer_dispose: get!("LLVMDisposeMemoryBuffer"),
        buffer_start: get!("LLVMGetBufferStart"),
        buffer_size: get!("LLVMGetBufferSize"),
        parse_bitcode: get!("LLVMParseBitcodeInContext2"),
        set_data_layout: get!("LLVMSetDataLayout"),
        options_create: get!("LLVMCreatePassBuilderOptions"),
        options_dispose: get!("LLVMDisposePassBuilderOptions"),
        run_passes: get!("LLVMRunPasses"),
        error_message: get!("LLVMGetErrorMessage"),
        error_message_dispose: get!("LLVMDisposeErrorMessage"),
        verify_module: get!("LLVMVerifyModule"),
        message_dispose: get!("LLVMDisposeMessage"),
        write_bitcode: get!("LLVMWriteBitcodeToMemoryBuffer"),
        module_dispose: get!("LLVMDisposeModule"),
        _library: library,
    })
}

/// Whether the in-process step is available (the library loads and has every function).
pub(crate) fn available() -> bool {
    api().is_some()
}

/// The library, held: no other thread of this process runs the passes meanwhile. None when
/// it is not available.
pub(crate) fn lock() -> Option<MutexGuard<'static, Api>> {
    Some(api()?.lock().unwrap_or_else(|e| e.into_inner()))
}

/// What `opt-15 -passes=<passes> --data-layout=<data_layout>` makes of `bitcode`: the
/// optimised module's bitcode, or opt's kind of error message. None when the library is not
/// available.
pub(crate) fn optimise(
    bitcode: &[u8],
    passes: &str,
    data_layout: &str,
) -> Option<Result<Vec<u8>, String>> {
    let api = lock()?;
    Some(optimise_with(&api, bitcode, passes, data_layout))
}

/// [`optimise`] with the library already held.
pub(crate) fn optimise_with(
    api: &Api,
    bitcode: &[u8],
    passes: &str,
    data_layout: &str,
) -> Result<Vec<u8>, String> {
    let (Ok(passes), Ok(layout)) = (CString::new(passes), CString::new(data_layout)) else {
        return Err("error: a pass list or data layout with a NUL byte\n".into());
    };
    // SAFETY: each object is created, used and disposed of here, in LLVM-C's ownership rules:
    // the parsed module belongs to the context (disposed of before it), the input buffer is
    // only borrowed by the parser, the output buffer and every message are ours to dispose of.
    unsafe {
        let context = (api.context_create)();
        // Without a handler of its own, an LLVM context reports an error (unreadable bitcode)
        // by printing it and calling exit(): the messages are collected instead.
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
        let input = (api.buffer_from_copy)(
            bitcode.as_ptr().cast(),
            bitcode.len(),
            c"clang-output".as_ptr(),
        );
        let mut module: Ref = std::ptr::null_mut();
        let parse_failed = (api.parse_bitcode)(context, input, &mut module) != 0;
        (api.buffer_dispose)(input);
        let result = if parse_failed || module.is_null() {
            Err(format!(
                "error: opt: cannot read clang's bitcode: {}\n",
                diagnostics.text.trim_end()
            ))
        } else {
            let r = run_on(api, module, &passes, &layout);
            (api.module_dispose)(module);
            r
        };
        (api.context_dispose)(context);
        result
    }
}

/// Where a context's diagnostic handler writes (here and in llvm_codegen.rs).
pub(crate) struct Diagnostics {
    pub(crate) describe: unsafe extern "C" fn(Ref) -> *mut c_char,
    pub(crate) dispose: unsafe extern "C" fn(*mut c_char),
    pub(crate) text: String,
}

/// The context's diagnostic handler: keeps each message (warnings too) for the build log,
/// instead of LLVM printing it and, for errors, calling exit().
pub(crate) unsafe extern "C" fn collect_diagnostic(info: Ref, sink: *mut c_void) {
    // SAFETY: `sink` is the `Diagnostics` registered with the context, alive while the
    // context is; the description is a message ours to dispose of.
    unsafe {
        let d = &mut *sink.cast::<Diagnostics>();
        let message = (d.describe)(info);
        if !message.is_null() {
            d.text.push_str(&CStr::from_ptr(message).to_string_lossy());
            d.text.push('\n');
            (d.dispose)(message);
        }
    }
}

/// # Safety
/// `module` is a live module of a live context.
unsafe fn run_on(api: &Api, module: Ref, passes: &CStr, layout: &CStr) -> Result<Vec<u8>, String> {
    // SAFETY: the caller's contract; see `optimise` for ownership.
    unsafe {
        // opt verifies its input and output.
        verify(api, module, "input")?;
        (api.set_data_layout)(module, layout.as_ptr());
        let options = (api.options_create)();
        let error = (api.run_passes)(module, passes.as_ptr(), std::ptr::null_mut(), options);
        (api.options_dispose)(options);
        if !error.is_null() {
            let message = (api.error_message)(error);
            let text = CStr::from_ptr(message).to_string_lossy().into_owned();
            (api.error_message_dispose)(message);
            return Err(format!("error: opt: {text}\n"));
        }
        verify(api, module, "output")?;
        let buffer = (api.write_bitcode)(module);
        if buffer.is_null() {
            return Err("error: opt: cannot write the optimised bitcode\n".into());
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

/// # Safety
/// `module` is a live module.
unsafe fn verify(api: &Api, module: Ref, which: &str) -> Result<(), String> {
    let mut message: *mut c_char = std::ptr::null_mut();
    // SAFETY: the caller's contract; the message is ours to dispose of.
    unsafe {
        let broken = (api.verify_module)(module, RETURN_STATUS, &mut message) != 0;
        let text = if message.is_null() {
            String::new()
        } else {
            let t = CStr::from_ptr(message).to_string_lossy().into_owned();
            (api.message_dispose)(message);
            t
        };
        if broken {
            return Err(format!(
                "error: opt: the {which} module is broken: {text}\n"
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {

    /// The in-process passes give the SPIR-V the opt-15 process gives, for kernels that
    /// exercise what the passes change (loops to unroll, allocas, branches, vectors, calls).
    #[test]
    fn in_process_passes_match_the_opt_process() {
        if !super::available() {
            panic!("{} is not loadable: the recipe needs it", super::LIBRARY);
        }
        let kernels = [
            "__kernel void a(__global float* x, int n) { float s = 0; for (int i = 0; i < 8; i++) s += x[i] * i; x[get_global_id(0)] = n > 3 ? s : -s; }",
            "__kernel void b(__global float4* v) { size_t i = get_global_id(0); float4 p = v[i]; v[i] = (float4)(dot(p, p), rsqrt(p.x), p.zw) + p.yxwz; }",
            "int f(int x) { return x * x + 1; } __kernel void c(__global int* a, __local int* l) { size_t i = get_local_id(0); l[i] = f(a[i]); barrier(CLK_LOCAL_MEM_FENCE); switch (a[i] & 15) { case 1: a[i] = l[0]; break; case 7: a[i] = atomic_add(&a[0], 3); break; default: a[i] = l[i ^ 1]; } }",
        ];
        let data_layout = format!("--data-layout={}", super::super::opencl_c::OPT_DATA_LAYOUT);
        let passes = format!("-passes={}", super::super::opencl_c::OPT_PASSES);
        for source in kernels {
            let mut args = crate::tests::clang_o0_args();
            args.extend(["-x", "cl", "-", "-o", "-"]);
            let bitcode = crate::tests::tool("clang-15", &args, source.as_bytes());
            let by_process =
                crate::tests::tool("opt-15", &[&passes, &data_layout, "-", "-o", "-"], &bitcode);
            let in_process = super::optimise(
                &bitcode,
                super::super::opencl_c::OPT_PASSES,
                super::super::opencl_c::OPT_DATA_LAYOUT,
            )
            .expect("available")
            .expect("optimised");
            let spirv = |bc: &[u8]| crate::tests::tool("llvm-spirv-15", &["-", "-o", "-"], bc);
            assert_eq!(spirv(&in_process), spirv(&by_process), "{source}");
        }
    }

    #[test]
    fn bad_bitcode_is_an_error_not_a_crash() {
        let r = super::optimise(b"BC\xc0\xde garbage", "instcombine", "e").expect("available");
        assert!(r.unwrap_err().contains("cannot read"));
        let clang_free = super::optimise(b"", "no-such-pass", "e").expect("available");
        assert!(clang_free.is_err());
    }
}
