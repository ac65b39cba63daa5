//! The device-side enqueue instructions (SPIR-V 3.52.24, OpenCL C 3.0 §6.15.15): calls of the
//! functions in device_enqueue.rs with the launch's context from `GroupInfo`, an `ndrange_t`
//! in memory and the block named by its kernel's index. `OpBuildNDRange` is pure and inline.

use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::{self, types, InstBuilder, MemFlagsData, Value};
use ferrocl_frontend::spirv::{Op, Word};
use ferrocl_frontend::{BlockRef, Inst, Type};

use super::function::{err, Translator};
use super::values::Val;
use crate::abi::GroupInfo;
use crate::device_enqueue::{
    NdRange, EVENT_IS_VALID, EVENT_RELEASE, EVENT_RETAIN, EVENT_SET_STATUS,
};
use crate::entry_points::EntryPoint;
use crate::error::BuildError;

impl Translator<'_, '_, '_> {
    pub(crate) fn enqueue_instruction(&mut self, inst: Inst<'_>) -> Result<(), BuildError> {
        match inst.opcode() {
            Op::BuildNDRange => {
                let b = inst.build_ndrange()?;
                let (dims, global) = self.sizes(b.global_size)?;
                let (_, local) = self.sizes(b.local_size)?;
                let (_, offset) = self.sizes(b.global_offset)?;
                let dims = self.b.ins().iconst(types::I32, dims as i64);
                let v = Val::C(vec![Val::S(dims), offset, global, local]);
                self.define(inst, v)
            }
            Op::EnqueueKernel => {
                let e = inst.enqueue_kernel()?;
                let ctx = self.device_enqueue_context();
                let queue = self.scalar(e.queue)?;
                let flags = self.scalar(e.flags)?;
                let ndrange = self.ndrange_address(e.ndrange)?;
                let num_events = self.scalar(e.num_events)?;
                let events = self.scalar(e.wait_events)?;
                let ret = self.scalar(e.ret_event)?;
                let [block, literal, size, align] = self.block_operands(&e.block)?;
                // The local sizes as u64s in a private array.
                let n = e.local_sizes.len();
                let locals = if n == 0 {
                    self.b.ins().iconst(types::I64, 0)
                } else {
                    let slot = self.b.create_sized_stack_slot(ir::StackSlotData::new(
                        ir::StackSlotKind::ExplicitSlot,
                        8 * n as u32,
                        3,
                    ));
                    for (i, &id) in e.local_sizes.iter().enumerate() {
                        let size = self.local_size(id)?;
                        self.b
                            .ins()
                            .stack_store(types::I64, size, slot, 8 * i as i32);
                    }
                    self.b.ins().stack_addr(types::I64, slot, 0)
                };
                let n = self.b.ins().iconst(types::I32, n as i64);
                let r = self.call_entry(
                    EntryPoint::EnqueueKernel,
                    &[
                        ctx, queue, flags, ndrange, num_events, events, ret, block, literal, size,
                        align, n, locals,
                    ],
                )?[0];
                self.define(inst, Val::S(r))
            }
            Op::EnqueueMarker => {
                let e = inst.enqueue_marker()?;
                let ctx = self.device_enqueue_context();
                let args = [e.queue, e.num_events, e.wait_events, e.ret_event]
                    .map(|id| self.scalar(id))
                    .into_iter()
                    .collect::<Result<Vec<_>, _>>()?;
                let mut call = vec![ctx];
                call.extend(args);
                let r = self.call_entry(EntryPoint::EnqueueMarker, &call)?[0];
                self.define(inst, Val::S(r))
            }
            Op::GetKernelWorkGroupSize
            | Op::GetKernelPreferredWorkGroupSizeMultiple
            | Op::GetKernelNDrangeSubGroupCount
            | Op::GetKernelNDrangeMaxSubGroupSize => {
                let q = inst.block_query()?;
                let ctx = self.device_enqueue_context();
                let [block, ..] = self.block_operands(&q.block)?;
                // BlockQuery's order.
                let which = match inst.opcode() {
                    Op::GetKernelWorkGroupSize => 0,
                    Op::GetKernelPreferredWorkGroupSizeMultiple => 1,
                    Op::GetKernelNDrangeSubGroupCount => 2,
                    _ => 3,
                };
                let which = self.b.ins().iconst(types::I32, which);
                let ndrange = match q.ndrange {
                    Some(id) => self.ndrange_address(id)?,
                    None => self.b.ins().iconst(types::I64, 0),
                };
                let r = self.call_entry(EntryPoint::BlockQuery, &[ctx, block, which, ndrange])?[0];
                self.define(inst, Val::S(r))
            }
            Op::GetDefaultQueue => {
                let ctx = self.device_enqueue_context();
                let q = self.call_entry(EntryPoint::DefaultQueue, &[ctx])?[0];
                self.define(inst, Val::S(q))
            }
            Op::CreateUserEvent => {
                let ctx = self.device_enqueue_context();
                let e = self.call_entry(EntryPoint::CreateUserEvent, &[ctx])?[0];
                self.define(inst, Val::S(e))
            }
            Op::RetainEvent | Op::ReleaseEvent | Op::IsValidEvent | Op::SetUserEventStatus => {
                let op = match inst.opcode() {
                    Op::RetainEvent => EVENT_RETAIN,
                    Op::ReleaseEvent => EVENT_RELEASE,
                    Op::IsValidEvent => EVENT_IS_VALID,
                    _ => EVENT_SET_STATUS,
                };
                let ctx = self.device_enqueue_context();
                let event = self.scalar(inst.id(0)?)?;
                let status = if op == EVENT_SET_STATUS {
                    self.scalar(inst.id(1)?)?
                } else {
                    self.b.ins().iconst(types::I32, 0)
                };
                let op = self.b.ins().iconst(types::I32, i64::from(op));
                let r = self.call_entry(EntryPoint::EventOp, &[ctx, event, op, status])?[0];
                if inst.opcode() == Op::IsValidEvent {
                    let valid = self.b.ins().icmp_imm_s(IntCC::NotEqual, r, 0);
                    self.define(inst, Val::S(valid))?;
                }
                Ok(())
            }
            Op::CaptureEventProfilingInfo => {
                let ctx = self.device_enqueue_context();
                let event = self.scalar(inst.id(0)?)?;
                let name = self.scalar(inst.id(1)?)?;
                let dst = self.scalar(inst.id(2)?)?;
                self.call_entry(EntryPoint::CaptureProfiling, &[ctx, event, name, dst])?;
                Ok(())
            }
            op => err(format!(
                "error: Op{op:?} is not a device-side enqueue instruction\n"
            )),
        }
    }

    /// `GroupInfo::device_enqueue` of this group.
    fn device_enqueue_context(&mut self) -> Value {
        let group = self.wi.group;
        let flags = MemFlagsData::trusted().with_readonly().with_can_move();
        self.b
            .ins()
            .load(types::I64, flags, group, GroupInfo::DEVICE_ENQUEUE)
    }

    /// The block kernel's index, the literal's address, its size and alignment.
    fn block_operands(&mut self, b: &BlockRef) -> Result<[Value; 4], BuildError> {
        let Some(&index) = self.m.block_kernels.get(&b.invoke) else {
            return err(format!(
                "error: no kernel runs the block %{} (internal: the frontend gives every Invoke one)\n",
                b.invoke
            ));
        };
        let index = self.b.ins().iconst(types::I32, index as i64);
        let literal = self.scalar(b.param)?;
        let size = self.scalar(b.param_size)?;
        let align = self.scalar(b.param_align)?;
        Ok([index, literal, size, align])
    }

    /// The address of the `ndrange_t` operand `id`: a pointer as it is, a value stored in a
    /// private slot.
    fn ndrange_address(&mut self, id: Word) -> Result<Value, BuildError> {
        let m = self.m;
        let ty = m.type_of(id).unwrap_or(0);
        if matches!(m.ty(ty), Some(Type::Pointer { .. })) {
            return self.scalar(id);
        }
        let v = self.value(id)?;
        let slot = self.b.create_sized_stack_slot(ir::StackSlotData::new(
            ir::StackSlotKind::ExplicitSlot,
            NdRange::SIZE,
            3,
        ));
        let addr = self.b.ins().stack_addr(types::I64, slot, 0);
        self.store_val(ty, addr, &v)?;
        Ok(addr)
    }

    /// An `OpBuildNDRange` operand as `ndrange_t` holds it: three u64s (unused dimensions 0),
    /// and how many dimensions it names (a scalar one, an array its length).
    fn sizes(&mut self, id: Word) -> Result<(u32, Val), BuildError> {
        let v = self.value(id)?;
        let leaves = v.flat();
        let mut out = Vec::with_capacity(3);
        for &x in leaves.iter().take(3) {
            out.push(Val::S(self.resize_int(x, types::I64, false)));
        }
        let dims = out.len() as u32;
        while out.len() < 3 {
            out.push(Val::S(self.b.ins().iconst(types::I64, 0)));
        }
        Ok((dims, Val::C(out)))
    }

    /// A Local Size operand as a u64: an integer, or (llvm-spirv-15) a pointer to one.
    fn local_size(&mut self, id: Word) -> Result<Value, BuildError> {
        let m = self.m;
        let ty = m.type_of(id).unwrap_or(0);
        let v = match m.ty(ty) {
            Some(Type::Pointer { pointee, .. }) => {
                let addr = self.scalar(id)?;
                self.load_val(*pointee, addr)?.scalar()?
            }
            _ => self.scalar(id)?,
        };
        Ok(self.resize_int(v, types::I64, false))
    }
}
