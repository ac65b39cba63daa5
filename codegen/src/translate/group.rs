//! Work-group functions that need no barrier in this execution model: `OpGroupAsyncCopy` and
//! `OpGroupWaitEvents`. Work-items of a group run in order on one thread, so the first
//! work-item performs the whole copy synchronously; everything after it in program order,
//! in every work-item, sees the data, and waiting has nothing left to wait for.

use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::{types, BlockArg, InstBuilder};
use ferrocl_frontend::rspirv::dr::Instruction;
use ferrocl_frontend::spirv::StorageClass;
use ferrocl_frontend::Type;

use super::function::{err, Translator};
use super::values::Val;
use crate::program::BuildError;

impl Translator<'_, '_, '_> {
    /// `OpGroupAsyncCopy`: Scope, Destination, Source, NumElements, Stride, Event. The stride
    /// applies to whichever side is not in Workgroup memory.
    pub(crate) fn group_async_copy(&mut self, inst: &Instruction) -> Result<(), BuildError> {
        let dst_id = self.id_operand(inst, 1)?;
        let dst_ty = self.m.type_of(dst_id).and_then(|t| self.m.ty(t).cloned());
        let Some(Type::Pointer {
            storage: dst_storage,
            pointee: elem,
        }) = dst_ty
        else {
            return err("error: OpGroupAsyncCopy destination is not a pointer\n");
        };
        let elem_size = self
            .m
            .size_of(elem)
            .ok_or_else(|| BuildError::new("error: async copy of an unsized type\n"))?;
        let dst = self.scalar_operand(inst, 1)?;
        let src = self.scalar_operand(inst, 2)?;
        let count = self.scalar_operand(inst, 3)?;
        let stride = self.scalar_operand(inst, 4)?;
        let event = self.operand(inst, 5)?;
        let count = self.resize_int(count, types::I64, false);
        let stride = self.resize_int(stride, types::I64, false);
        let strided_source = dst_storage == StorageClass::Workgroup;

        // Only the work-item with local id (0, 0, 0) copies.
        let lid = self.wi.local_id;
        let any = self.b.ins().bor(lid[0], lid[1]);
        let any = self.b.ins().bor(any, lid[2]);
        let first = self.b.ins().icmp_imm_s(IntCC::Equal, any, 0);
        let head = self.b.create_block();
        self.b.append_block_param(head, types::I64);
        let body = self.b.create_block();
        let done = self.b.create_block();
        let zero = self.b.ins().iconst(types::I64, 0);
        self.b
            .ins()
            .brif(first, head, &[BlockArg::Value(zero)], done, &[]);

        self.b.switch_to_block(head);
        let i = self.b.block_params(head)[0];
        let more = self.b.ins().icmp(IntCC::UnsignedLessThan, i, count);
        self.b.ins().brif(more, body, &[], done, &[]);

        self.b.switch_to_block(body);
        let strided = self.b.ins().imul(i, stride);
        let (si, di) = if strided_source {
            (strided, i)
        } else {
            (i, strided)
        };
        let soff = self.b.ins().imul_imm_s(si, elem_size as i64);
        let doff = self.b.ins().imul_imm_s(di, elem_size as i64);
        let s = self.b.ins().iadd(src, soff);
        let d = self.b.ins().iadd(dst, doff);
        let v = self.load_val(elem, s)?;
        self.store_val(elem, d, &v)?;
        let next = self.b.ins().iadd_imm_s(i, 1);
        self.b.ins().jump(head, &[BlockArg::Value(next)]);

        self.b.switch_to_block(done);
        // The copy is complete: the event only has to be a value wait_group_events accepts.
        let event: Val = event;
        self.define(inst, event)
    }
}
