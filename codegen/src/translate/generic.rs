//! The generic address space (`__opencl_c_generic_address_space`): a generic pointer is the
//! flat address of the object, so casts to and from it move no bits. What needs work is asking
//! a generic pointer where it points (`to_global`, `to_local`, `to_private` — the explicit
//! cast, which answers NULL for the wrong space — and `get_fence`). The answer comes from where
//! the address lies:
//! - local: the worker's local-memory arena, `[local_mem, local_mem + GroupInfo::local_mem_size)`;
//! - private: this group's work-item frames (`GroupInfo::frames`/`frames_size`, kernels with
//!   barriers) or this work-group function's own stack frame `[SP, FP)`, which holds every
//!   private variable whose address is taken (everything is inlined into that one function);
//! - global: any other non-NULL address (buffers are host allocations, never on a worker's
//!   stack or in its arena). The constant space cannot be cast to generic.

use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::{types, InstBuilder, Value};
use ferrocl_frontend::spirv::StorageClass;
use ferrocl_frontend::Inst;

use super::function::{err, Translator};
use super::values::Val;
use crate::error::BuildError;

/// Memory Semantics bits `OpGenericPtrMemSemantics` answers with (SPIR-V 3.25).
const WORKGROUP_MEMORY: i64 = 0x100;
const CROSS_WORKGROUP_MEMORY: i64 = 0x200;

impl Translator<'_, '_, '_> {
    /// `lo <= p < lo + len`, unsigned.
    fn in_range(&mut self, p: Value, lo: Value, len: Value) -> Value {
        let off = self.b.ins().isub(p, lo);
        let below = self.b.ins().icmp(IntCC::UnsignedLessThan, off, len);
        let above = self.b.ins().icmp(IntCC::UnsignedGreaterThanOrEqual, p, lo);
        self.b.ins().band(below, above)
    }

    /// (is local, is private) for flat address `p`.
    fn address_space_of(&mut self, p: Value) -> (Value, Value) {
        let (local_mem, local_size) = (self.wi.local_mem, self.wi.local_mem_size);
        let local = self.in_range(p, local_mem, local_size);
        let (frames, frames_size) = (self.wi.frames, self.wi.frames_size);
        let in_frames = self.in_range(p, frames, frames_size);
        let sp = self.b.ins().get_stack_pointer(types::I64);
        let fp = self.b.ins().get_frame_pointer(types::I64);
        let above_sp = self.b.ins().icmp(IntCC::UnsignedGreaterThanOrEqual, p, sp);
        let below_fp = self.b.ins().icmp(IntCC::UnsignedLessThan, p, fp);
        let on_stack = self.b.ins().band(above_sp, below_fp);
        let private = self.b.ins().bor(in_frames, on_stack);
        (local, private)
    }

    /// `OpGenericCastToPtrExplicit`: Pointer, Storage; NULL when Pointer is not in Storage.
    pub(crate) fn generic_cast_explicit(&mut self, inst: Inst<'_>) -> Result<(), BuildError> {
        let cast = inst.generic_cast_explicit()?;
        let p = self.scalar(cast.pointer)?;
        let Some(storage) = cast.storage else {
            return err("error: OpGenericCastToPtrExplicit without a storage class\n");
        };
        let (local, private) = self.address_space_of(p);
        let keep = match storage {
            StorageClass::Workgroup => local,
            StorageClass::Function => private,
            StorageClass::CrossWorkgroup => {
                let elsewhere = self.b.ins().bor(local, private);
                let not_elsewhere = self.b.ins().bxor_imm_u(elsewhere, 1);
                let non_null = self.b.ins().icmp_imm_u(IntCC::NotEqual, p, 0);
                self.b.ins().band(not_elsewhere, non_null)
            }
            other => {
                return err(format!(
                    "error: OpGenericCastToPtrExplicit to {other:?} (env 2.4 allows CrossWorkgroup, Workgroup and Function)\n"
                ))
            }
        };
        let null = self.b.ins().iconst(types::I64, 0);
        let r = self.b.ins().select(keep, p, null);
        self.define(inst, Val::S(r))
    }

    /// `OpGenericPtrMemSemantics`: the storage-class bit of the memory Pointer is in
    /// (WorkgroupMemory, CrossWorkgroupMemory; none for private memory).
    pub(crate) fn generic_ptr_mem_semantics(&mut self, inst: Inst<'_>) -> Result<(), BuildError> {
        let p = self.scalar(inst.unary()?.value)?;
        let (local, private) = self.address_space_of(p);
        let workgroup = self.b.ins().iconst(types::I32, WORKGROUP_MEMORY);
        let cross = self.b.ins().iconst(types::I32, CROSS_WORKGROUP_MEMORY);
        let none = self.b.ins().iconst(types::I32, 0);
        let r = self.b.ins().select(private, none, cross);
        let r = self.b.ins().select(local, workgroup, r);
        self.define(inst, Val::S(r))
    }
}
