//! The compile pipeline's last step behind one seam: a translated (and vectorised, checked …)
//! CLIF function becomes machine code, or a backend refuses it with a reason. Cranelift is the
//! first backend and the fallback of every refusal; the wide backend lowers the same CLIF,
//! wide vector types included, through LLVM's code generator in the LLVM server
//! (`llvm_ir` writes the LLVM IR, the server compiles it to an object, `object` links it).
//!
//! Owns [`CompiledFunction`] (what every backend gives the JIT module) and
//! [`compile_functions`], which compiles a program's kernels on several threads, each with the
//! backend the build options choose.

mod cranelift;
pub(crate) mod llvm_ir;
pub(crate) mod object;
mod wide;

use cranelift_codegen::ir;
use cranelift_module::{FuncId, ModuleReloc};

use crate::options::{Backend, BuildOptions};

/// A kernel's machine code, ready to be defined in the JIT module.
pub(crate) struct CompiledFunction {
    pub(crate) bytes: Vec<u8>,
    pub(crate) alignment: u64,
    pub(crate) relocs: Vec<ModuleReloc>,
    /// Functions the code calls that the JIT module must declare first (the wide backend's
    /// [`object::LoadedFunction::imports`]); empty for Cranelift.
    pub(crate) imports: Vec<&'static str>,
    /// The scalar fallback was compiled: the vectorised function was not lowerable.
    pub(crate) scalar_fallback: bool,
    /// `Kernel::spill_mem_size`.
    pub(crate) spill_bytes: usize,
    /// Which backend made the code.
    pub(crate) backend: Backend,
    /// The wide backend was asked for and refused this function: why.
    pub(crate) wide_refusal: Option<String>,
    /// With a dump directory: (file suffix, text) of each dump (the optimised IR, the
    /// disassembly, the LLVM IR).
    pub(crate) dumps: Vec<(&'static str, String)>,
}

/// Compiles each (function id, function, scalar fallback) with `isa`, on up to
/// `options.threads` threads when there are several; results in the order of `jobs`.
pub(crate) fn compile_functions(
    isa: &dyn cranelift_codegen::isa::TargetIsa,
    jobs: Vec<(FuncId, ir::Function, Option<ir::Function>)>,
    options: &BuildOptions,
) -> Vec<Result<CompiledFunction, String>> {
    let threads = options.threads.clamp(1, jobs.len().max(1));
    if threads == 1 {
        return jobs
            .into_iter()
            .map(|(id, f, fallback)| compile_function(isa, id, f, fallback, options))
            .collect();
    }
    let n = jobs.len();
    let jobs: Vec<std::sync::Mutex<Option<_>>> = jobs
        .into_iter()
        .map(|j| std::sync::Mutex::new(Some(j)))
        .collect();
    let results: Vec<std::sync::Mutex<Option<Result<CompiledFunction, String>>>> =
        (0..n).map(|_| std::sync::Mutex::new(None)).collect();
    let next = std::sync::atomic::AtomicUsize::new(0);
    std::thread::scope(|scope| {
        for _ in 0..threads {
            scope.spawn(|| loop {
                let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                let Some(slot) = jobs.get(i) else { break };
                let job = slot.lock().unwrap_or_else(|p| p.into_inner()).take();
                let Some((id, f, fallback)) = job else {
                    continue;
                };
                // A panic in a code generator stays a build error of this kernel (the
                // caller's catch_unwind only sees this thread's).
                let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    compile_function(isa, id, f, fallback, options)
                }))
                .unwrap_or_else(|panic| {
                    Err(format!(
                        "internal: the code generator failed: {}",
                        panic_message(&panic)
                    ))
                });
                *results[i].lock().unwrap_or_else(|p| p.into_inner()) = Some(result);
            });
        }
    });
    results
        .into_iter()
        .map(|r| {
            r.into_inner()
                .unwrap_or_else(|p| p.into_inner())
                .unwrap_or_else(|| Err("internal: a kernel was not compiled".into()))
        })
        .collect()
}

fn panic_message(panic: &Box<dyn std::any::Any + Send>) -> &str {
    panic
        .downcast_ref::<String>()
        .map(String::as_str)
        .or_else(|| panic.downcast_ref::<&str>().copied())
        .unwrap_or("unknown panic")
}

/// One kernel function with the backend `options` choose: the wide backend when asked and
/// it does not refuse; else Cranelift, with the scalar fallback when the vectorised function
/// cannot be lowered.
fn compile_function(
    isa: &dyn cranelift_codegen::isa::TargetIsa,
    id: FuncId,
    func: ir::Function,
    fallback: Option<ir::Function>,
    options: &BuildOptions,
) -> Result<CompiledFunction, String> {
    let wide_refusal = match options.backend {
        Backend::Cranelift => None,
        Backend::Wide => {
            // The wide path is new: a panic in it (the translator meeting a CLIF form it did
            // not expect) is one more refusal, and Cranelift still builds the kernel.
            let wide = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                wide::compile(id, &func, options)
            }))
            .unwrap_or_else(|panic| {
                Err(format!(
                    "internal: the wide backend failed: {}",
                    panic_message(&panic)
                ))
            });
            match wide {
                Ok(code) => return Ok(code),
                Err(why) => Some(why),
            }
        }
    };
    let mut code = cranelift::compile(isa, id, func, fallback, options)?;
    code.wide_refusal = wide_refusal;
    Ok(code)
}

/// Bytes of a function's own stack slots (its private variables), which are not spills.
fn stack_slot_bytes(func: &ir::Function) -> u32 {
    func.sized_stack_slots.values().map(|s| s.size).sum()
}
