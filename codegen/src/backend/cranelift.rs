//! Cranelift as a backend: the first tier and every refusal's fallback. Compiles a CLIF
//! function with the JIT's ISA, or its scalar fallback when the vectorised one cannot be
//! lowered, and measures the frame's spill bytes from Cranelift's frame layout.

use cranelift_codegen::ir;
use cranelift_module::{FuncId, ModuleReloc};

use super::CompiledFunction;
use crate::options::{Backend, BuildOptions};

/// Cranelift's compilation of one kernel function, falling back to its scalar version when
/// the vectorised one cannot be lowered.
pub(super) fn compile(
    isa: &dyn cranelift_codegen::isa::TargetIsa,
    id: FuncId,
    mut func: ir::Function,
    fallback: Option<ir::Function>,
    options: &BuildOptions,
) -> Result<CompiledFunction, String> {
    let dumping = options.dump_dir.is_some();
    let mut scalar_fallback = false;
    // A wide build's rounding pairs (half_rounding.rs) become integer code; the
    // vectoriser's, on vectors, cannot, and the scalar fallback is compiled instead.
    let lowered = if crate::vectorize::calls_lane_intrinsics(&func) {
        // Gathers and scatters are the wide backend's (vectorize/gather.rs).
        Err("lane intrinsics".to_owned())
    } else {
        crate::half_rounding::lower_pairs(&mut func)
    };
    let mut ctx = cranelift_codegen::Context::for_function(func);
    ctx.set_disasm(dumping);
    let mut plane = cranelift_codegen::control::ControlPlane::default();
    let compiled = match lowered {
        Ok(()) => ctx
            .compile(isa, &mut plane)
            .map(|_| ())
            .map_err(|e| format!("{:?}", e.inner)),
        Err(e) => Err(e),
    };
    if let Err(e) = compiled {
        let Some(mut scalar) = fallback else {
            return Err(e);
        };
        crate::half_rounding::lower_pairs(&mut scalar)?;
        ctx = cranelift_codegen::Context::for_function(scalar);
        ctx.set_disasm(dumping);
        ctx.compile(isa, &mut plane)
            .map_err(|e| format!("{:?}", e.inner))?;
        scalar_fallback = true;
    }
    let code = ctx
        .compiled_code()
        .ok_or_else(|| "internal: no compiled code".to_owned())?;
    let relocs = code
        .buffer
        .relocs()
        .iter()
        .map(|r| ModuleReloc::from_mach_reloc(r, &ctx.func, id))
        .collect();
    // The frame below the frame pointer less the function's own stack slots: what the
    // register allocator and the ABI put there.
    let frame = code
        .buffer
        .frame_layout()
        .map_or(0, |l| l.frame_to_fp_offset);
    let spill_bytes = frame.saturating_sub(super::stack_slot_bytes(&ctx.func)) as usize;
    let mut dumps = Vec::new();
    if dumping {
        dumps.push(("opt.clif", ctx.func.display().to_string()));
        if let Some(asm) = &code.vcode {
            dumps.push(("s", asm.clone()));
        }
    }
    Ok(CompiledFunction {
        spill_bytes,
        bytes: code.code_buffer().to_vec(),
        alignment: code.buffer.alignment as u64,
        relocs,
        imports: Vec::new(),
        scalar_fallback,
        backend: Backend::Cranelift,
        wide_refusal: None,
        dumps,
    })
}
