//! The wide backend's pipeline for one kernel function: CLIF → LLVM IR (`llvm_ir`) → an
//! object from LLVM's code generator in the LLVM server (`ferrocl_opencl_c::compile_object`)
//! → the JIT's blob and relocations (`object`). Every step may refuse, with the reason the
//! build's debug log shows; the caller then compiles the function with Cranelift.

use cranelift_codegen::ir;
use cranelift_module::FuncId;

use super::CompiledFunction;
use crate::options::{Backend, BuildOptions};

/// The name the kernel function has in the LLVM module and its object.
const SYMBOL: &str = "ferrocl_work_group";

pub(super) fn compile(
    id: FuncId,
    func: &ir::Function,
    options: &BuildOptions,
) -> Result<CompiledFunction, String> {
    if options.round_to_zero {
        // LLVM folds constants rounding to nearest, as Cranelift's optimiser does, which is
        // off in this mode for the same reason.
        return Err("the device rounds toward zero, and LLVM folds constants to nearest".into());
    }
    let ir = super::llvm_ir::translate(func, SYMBOL)?;
    let object = ferrocl_opencl_c::compile_object(&ir, options.target.vector_bits)?;
    let loaded = super::object::load(&object, SYMBOL, id)?;
    // Cranelift's measure: the frame below the frame pointer less the function's own slots.
    let spill_bytes = loaded
        .frame_bytes
        .saturating_sub(u64::from(super::stack_slot_bytes(func))) as usize;
    let mut dumps = Vec::new();
    if options.dump_dir.is_some() {
        dumps.push(("opt.clif", func.display().to_string()));
        dumps.push(("ll", ir));
    }
    Ok(CompiledFunction {
        bytes: loaded.bytes,
        alignment: loaded.alignment,
        relocs: loaded.relocs,
        imports: loaded.imports,
        scalar_fallback: false,
        spill_bytes,
        backend: Backend::Wide,
        wide_refusal: None,
        dumps,
    })
}
