//! Module translation: lays out program-scope variables (`CrossWorkgroup`/`UniformConstant`
//! ones as data of the module, [`program_variables`] and [`variable_contents`]; `Workgroup` ones
//! in the local arena once per kernel: only those the kernel can reach, from offset 0) and
//! translates each kernel into its work-group function — the work-item loop around the inlined
//! kernel body ([`kernel::build`]). Everything target- and runtime-specific (layouts, entry
//! points, data and table references, image specialisation) is asked of the kernel's
//! environment (environment.rs); the JIT module, its construction and the compilation of the
//! translated functions are jit.rs's.

mod analysis;
mod arith;
pub(crate) mod atomics;
mod block_io;
mod builtins;
mod checks;
mod composite;
mod convert;
mod enqueue;
mod function;
mod gates;
mod generic;
mod geometric;
mod group;
mod half;
mod image;
mod inline_math;
pub(crate) mod kernel;
mod memory;
mod opencl_std;
mod pipe;
mod printf;
mod provenance;
mod rounding;
mod static_schedule;
mod subgroup;
mod values;

use std::collections::{HashMap, HashSet};

use ferrocl_frontend::spirv::{Op, StorageClass, Word};
use ferrocl_frontend::{KernelInfo, Module, SpecConstantOp, Type};

use crate::error::BuildError;

/// An address inside an initializer: `offset` in the data gets the address of `target` plus
/// `addend` when the JIT places the data.
pub(crate) struct Relocation {
    pub(crate) offset: usize,
    pub(crate) target: Word,
    pub(crate) addend: i64,
}

/// The (program-scope variable, byte offset) a pointer or address constant stands for: a
/// variable itself, or the frontend's re-emitted form of a pointer expression,
/// `ConvertUToPtr(IAdd(ConvertPtrToU(variable), offset))`.
fn address_constant(m: &Module, id: Word, depth: u32) -> Option<(Word, i64)> {
    let c = m.global(id)?;
    if depth > 8 {
        return None;
    }
    match c.opcode() {
        Op::Variable => Some((id, 0)),
        Op::SpecConstantOp => match c.spec_constant_op().ok()? {
            SpecConstantOp {
                opcode: Op::ConvertPtrToU | Op::ConvertUToPtr,
                a,
                ..
            } => address_constant(m, a?, depth + 1),
            SpecConstantOp {
                opcode: Op::IAdd,
                a,
                b,
            } => {
                let (var, off) = address_constant(m, a?, depth + 1)?;
                let k = m.global(b?)?.constant_bits().ok()? as i64;
                Some((var, off.wrapping_add(k)))
            }
            _ => None,
        },
        _ => None,
    }
}

/// Bytes of a constant (`OpConstant*`) laid out as OpenCL memory; addresses of program-scope
/// variables are left zero and recorded in `relocs`.
fn constant_bytes(
    m: &Module,
    id: Word,
    out: &mut Vec<u8>,
    relocs: &mut Vec<Relocation>,
) -> Result<(), BuildError> {
    let c = m
        .global(id)
        .ok_or_else(|| BuildError::new(format!("error: initializer %{id} is not a constant\n")))?;
    let ty = c.result_type().unwrap_or(0);
    let size = m
        .size_of(ty)
        .ok_or_else(|| BuildError::new("error: initializer of unsized type\n"))?
        as usize;
    let start = out.len();
    match c.opcode() {
        Op::Constant | Op::SpecConstant => {
            let bits = c.constant_bits().unwrap_or(0);
            out.extend_from_slice(&bits.to_le_bytes()[..size]);
        }
        Op::ConstantTrue | Op::SpecConstantTrue => out.push(1),
        Op::ConstantFalse | Op::SpecConstantFalse => out.push(0),
        Op::ConstantNull | Op::Undef => out.resize(start + size, 0),
        Op::ConstantComposite | Op::SpecConstantComposite => {
            let parts: Vec<Word> = c.id_refs().collect();
            let offsets: Vec<u64> = match m.ty(ty) {
                Some(Type::Struct { .. }) => m.member_offsets(ty).unwrap_or_default(),
                Some(Type::Vector { elem, .. }) | Some(Type::Array { elem, .. }) => {
                    let e = m.size_of(*elem).unwrap_or(0);
                    (0..parts.len() as u64).map(|i| i * e).collect()
                }
                _ => {
                    return Err(BuildError::new(
                        "error: composite constant of a non-composite type\n",
                    ))
                }
            };
            for (p, off) in parts.iter().zip(offsets) {
                out.resize(start + off as usize, 0);
                constant_bytes(m, *p, out, relocs)?;
            }
            out.resize(start + size, 0);
        }
        Op::Variable | Op::SpecConstantOp => {
            let Some((target, addend)) = address_constant(m, id, 0) else {
                return Err(BuildError::new(format!(
                    "error: OpSpecConstantOp %{id} is not supported as a variable initializer (only addresses of program-scope variables)\n"
                )));
            };
            relocs.push(Relocation {
                offset: start,
                target,
                addend,
            });
            out.resize(start + size, 0);
        }
        other => {
            return Err(BuildError::new(format!(
                "error: Op{other:?} %{id} is not supported as a variable initializer\n"
            )))
        }
    }
    Ok(())
}

/// The program-scope variables that are data of the module (`CrossWorkgroup` ones, writable,
/// and `UniformConstant` ones), in module order: (id, writable).
pub(crate) fn program_variables(m: &Module) -> Vec<(Word, bool)> {
    let mut out = Vec::new();
    for inst in m.global_values() {
        if inst.opcode() != Op::Variable {
            continue;
        }
        let id = inst.result_id().unwrap_or(0);
        let Ok(storage) = inst.variable_storage() else {
            continue;
        };
        if matches!(
            storage,
            StorageClass::CrossWorkgroup | StorageClass::UniformConstant
        ) {
            out.push((id, storage == StorageClass::CrossWorkgroup));
        }
    }
    out
}

/// The initial contents of a program-scope variable: its bytes (its initializer, zeros
/// without one), their alignment, and where addresses of other program-scope variables go.
pub(crate) struct VariableContents {
    pub(crate) bytes: Vec<u8>,
    pub(crate) align: u64,
    pub(crate) relocs: Vec<Relocation>,
}

/// The contents of program-scope variable `id` (one of [`program_variables`]); `None` when it
/// is not a pointer-typed `OpVariable`.
pub(crate) fn variable_contents(
    m: &Module,
    id: Word,
) -> Result<Option<VariableContents>, BuildError> {
    let Some(inst) = m.global(id).filter(|i| i.opcode() == Op::Variable) else {
        return Ok(None);
    };
    let pointee = match inst.result_type().and_then(|t| m.ty(t)) {
        Some(Type::Pointer { pointee, .. }) => *pointee,
        _ => return Ok(None),
    };
    let size = m.size_of(pointee).ok_or_else(|| {
        BuildError::new(format!("error: program-scope variable %{id} has no size\n"))
    })?;
    let align = m.align_of(pointee).unwrap_or(16).max(1);
    // Sized by the module's declarations, not by its length (a few words declare 64 MiB),
    // so the runtime's headroom check before the build does not cover it.
    let mut bytes = Vec::new();
    bytes.try_reserve_exact(size as usize).map_err(|_| {
        BuildError::out_of_memory(&format!("program-scope variable %{id} of {size} bytes"))
    })?;
    let mut relocs = Vec::new();
    if let Some(init) = inst.variable().ok().and_then(|v| v.initializer) {
        constant_bytes(m, init, &mut bytes, &mut relocs)?;
    }
    bytes.resize(size as usize, 0);
    Ok(Some(VariableContents {
        bytes,
        align,
        relocs,
    }))
}

/// The `Workgroup` variables `kernel` can touch: those its function and every function it
/// calls name, directly or inside module-scope constant expressions (address arithmetic on a
/// variable). Kernels of one program run in separate launches, so each kernel's arena holds
/// only these — `CL_KERNEL_LOCAL_MEM_SIZE` and the launch check then count what the kernel
/// really uses, not the whole module's `__local` variables.
fn kernel_local_variables(m: &Module, kernel: &KernelInfo) -> HashSet<Word> {
    let mut found = HashSet::new();
    let mut seen_functions = HashSet::from([kernel.function]);
    let mut functions = vec![kernel.function];
    let mut seen_globals = HashSet::new();
    while let Some(fid) = functions.pop() {
        let Some(f) = m.function(fid) else { continue };
        let mut globals: Vec<Word> = f.instructions().flat_map(|i| i.id_refs()).collect();
        while let Some(id) = globals.pop() {
            if m.function(id).is_some() {
                if seen_functions.insert(id) {
                    functions.push(id);
                }
                continue;
            }
            if !seen_globals.insert(id) {
                continue;
            }
            let Some(g) = m.global(id) else { continue };
            match (g.opcode(), g.variable_storage()) {
                (Op::Variable, Ok(StorageClass::Workgroup)) => {
                    found.insert(id);
                }
                (Op::Variable, _) => {}
                _ => globals.extend(g.id_refs()),
            }
        }
    }
    found
}

/// Arena offsets of `kernel`'s `Workgroup` variables, in module order from offset 0 at their
/// natural alignment, and the bytes they span.
pub(crate) fn layout_kernel_local_variables(
    m: &Module,
    kernel: &KernelInfo,
) -> Result<(HashMap<Word, u64>, u64), BuildError> {
    let used = kernel_local_variables(m, kernel);
    let mut offsets = HashMap::new();
    let mut size = 0u64;
    for inst in m.global_values() {
        let Some(id) = inst.result_id().filter(|id| used.contains(id)) else {
            continue;
        };
        let pointee = match inst.result_type().and_then(|t| m.ty(t)) {
            Some(Type::Pointer { pointee, .. }) => *pointee,
            _ => continue,
        };
        let bytes = m.size_of(pointee).ok_or_else(|| {
            BuildError::new(format!("error: __local variable %{id} has no size\n"))
        })?;
        let align = m.align_of(pointee).unwrap_or(16).max(1);
        let offset = size.next_multiple_of(align);
        offsets.insert(id, offset);
        size = offset + bytes;
    }
    Ok((offsets, size))
}
