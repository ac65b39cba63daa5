//! The device-side enqueue instructions (SPIR-V 3.52.24, env 3.1.1 §5.3): queues, events,
//! ndranges and blocks of the types each operand must have, and blocks whose function has the
//! shape a kernel can run (void, a `Generic` literal pointer, then `Workgroup` pointers, one
//! per Local Size operand).

use super::*;
use crate::instruction_enqueue::BlockRef;
use crate::metadata::is_device_enqueue_instruction;
use crate::view::Inst;

impl Checker<'_> {
    /// Whether the opcode is a device-side enqueue instruction (then checked).
    pub(super) fn enqueue_instruction(&mut self, inst: &Instruction, rt: Word) -> bool {
        let op = inst.class.opcode;
        if op != Op::BuildNDRange && !is_device_enqueue_instruction(op) {
            return false;
        }
        let view = Inst::new(inst);
        match op {
            Op::BuildNDRange => {
                self.ndrange_type(inst, rt, "the result of OpBuildNDRange");
                let Ok(b) = view.build_ndrange() else {
                    return self.too_few(inst);
                };
                let types: Vec<Option<Word>> = (0..3).map(|i| self.operand_type(inst, i)).collect();
                for (i, t) in types.iter().enumerate() {
                    let Some(t) = *t else { continue };
                    if !self.size_operand(t) {
                        let rule = format!(
                            "SPIR-V Device-Side Enqueue: operand {} of OpBuildNDRange must be a 32- or 64-bit integer or an array of 2 or 3 of them, found {}",
                            [b.global_size, b.local_size, b.global_offset][i],
                            self.type_name(t)
                        );
                        self.report(inst, rule);
                    }
                }
            }
            Op::EnqueueKernel => {
                self.result_int32(inst, rt);
                let Ok(e) = view.enqueue_kernel() else {
                    return self.too_few(inst);
                };
                self.expect_queue(inst, 0);
                self.expect_int32(inst, 1, "Flags");
                self.expect_ndrange(inst, 2);
                self.expect_int32(inst, 3, "Num Events");
                self.expect_event_pointer(inst, 4, "Wait Events");
                self.expect_event_pointer(inst, 5, "Ret Event");
                self.block(inst, 6, e.block, Some(e.local_sizes.len()));
                for i in 10..inst.operands.len() {
                    let Some(t) = self.operand_type(inst, i) else {
                        continue;
                    };
                    let ok = match self.ty(t) {
                        Some(Type::Int { width: 32 | 64 }) => true,
                        Some(Type::Pointer { pointee, .. }) => {
                            matches!(self.ty(*pointee), Some(Type::Int { width: 32 | 64 }))
                        }
                        _ => false,
                    };
                    if !ok {
                        let rule = format!(
                            "SPIR-V Device-Side Enqueue: a Local Size of OpEnqueueKernel must be an integer (or llvm-spirv's pointer to one), found {}",
                            self.type_name(t)
                        );
                        self.report(inst, rule);
                    }
                }
            }
            Op::EnqueueMarker => {
                self.result_int32(inst, rt);
                if view.enqueue_marker().is_err() {
                    return self.too_few(inst);
                }
                self.expect_queue(inst, 0);
                self.expect_int32(inst, 1, "Num Events");
                self.expect_event_pointer(inst, 2, "Wait Events");
                self.expect_event_pointer(inst, 3, "Ret Event");
            }
            Op::GetKernelWorkGroupSize
            | Op::GetKernelPreferredWorkGroupSizeMultiple
            | Op::GetKernelNDrangeSubGroupCount
            | Op::GetKernelNDrangeMaxSubGroupSize => {
                self.result_int32(inst, rt);
                let Ok(q) = view.block_query() else {
                    return self.too_few(inst);
                };
                let first = usize::from(q.ndrange.is_some());
                if q.ndrange.is_some() {
                    self.expect_ndrange(inst, 0);
                }
                self.block(inst, first, q.block, None);
            }
            Op::RetainEvent | Op::ReleaseEvent => self.expect_event(inst, 0),
            Op::IsValidEvent => {
                if self.ty(rt) != Some(&Type::Bool) {
                    let rule = format!(
                        "SPIR-V Device-Side Enqueue: the result of OpIsValidEvent must be a boolean, found {}",
                        self.type_name(rt)
                    );
                    self.report(inst, rule);
                }
                self.expect_event(inst, 0);
            }
            Op::SetUserEventStatus => {
                self.expect_event(inst, 0);
                self.expect_int32(inst, 1, "Status");
            }
            Op::CaptureEventProfilingInfo => {
                self.expect_event(inst, 0);
                self.expect_int32(inst, 1, "Profiling Info");
                if let Some(t) = self.operand_type(inst, 2) {
                    if !matches!(self.ty(t), Some(Type::Pointer { .. })) {
                        let rule = format!(
                            "SPIR-V Device-Side Enqueue: the Value of OpCaptureEventProfilingInfo must be a pointer, found {}",
                            self.type_name(t)
                        );
                        self.report(inst, rule);
                    }
                }
            }
            Op::CreateUserEvent if self.ty(rt) != Some(&Type::DeviceEvent) => {
                let rule = format!(
                    "SPIR-V Device-Side Enqueue: the result of OpCreateUserEvent must be an OpTypeDeviceEvent, found {}",
                    self.type_name(rt)
                );
                self.report(inst, rule);
            }
            Op::GetDefaultQueue if self.ty(rt) != Some(&Type::Queue) => {
                let rule = format!(
                    "SPIR-V Device-Side Enqueue: the result of OpGetDefaultQueue must be an OpTypeQueue, found {}",
                    self.type_name(rt)
                );
                self.report(inst, rule);
            }
            _ => {}
        }
        true
    }

    fn too_few(&mut self, inst: &Instruction) -> bool {
        let rule = format!(
            "SPIR-V Device-Side Enqueue: Op{:?} has too few operands, or one that is not an id",
            inst.class.opcode
        );
        self.report(inst, rule);
        true
    }

    fn result_int32(&mut self, inst: &Instruction, rt: Word) {
        if self.ty(rt) != Some(&Type::Int { width: 32 }) {
            let rule = format!(
                "SPIR-V Device-Side Enqueue: the result of Op{:?} must be a 32-bit integer, found {}",
                inst.class.opcode,
                self.type_name(rt)
            );
            self.report(inst, rule);
        }
    }

    fn expect_queue(&mut self, inst: &Instruction, i: usize) {
        if let Some(t) = self.operand_type(inst, i) {
            if self.ty(t) != Some(&Type::Queue) {
                let rule = format!(
                    "SPIR-V Device-Side Enqueue: the Queue of Op{:?} must be an OpTypeQueue, found {}",
                    inst.class.opcode,
                    self.type_name(t)
                );
                self.report(inst, rule);
            }
        }
    }

    fn expect_event(&mut self, inst: &Instruction, i: usize) {
        if let Some(t) = self.operand_type(inst, i) {
            if self.ty(t) != Some(&Type::DeviceEvent) {
                let rule = format!(
                    "SPIR-V Device-Side Enqueue: the Event of Op{:?} must be an OpTypeDeviceEvent, found {}",
                    inst.class.opcode,
                    self.type_name(t)
                );
                self.report(inst, rule);
            }
        }
    }

    /// A pointer to `OpTypeDeviceEvent` (Generic storage in the spec; any storage here, as
    /// every address is flat), or a null constant of such a type.
    fn expect_event_pointer(&mut self, inst: &Instruction, i: usize, what: &str) {
        if let Some(t) = self.operand_type(inst, i) {
            let ok = match self.ty(t) {
                Some(Type::Pointer { pointee, .. }) => {
                    self.ty(*pointee) == Some(&Type::DeviceEvent)
                }
                _ => false,
            };
            if !ok {
                let rule = format!(
                    "SPIR-V Device-Side Enqueue: {what} of Op{:?} must be a pointer to OpTypeDeviceEvent, found {}",
                    inst.class.opcode,
                    self.type_name(t)
                );
                self.report(inst, rule);
            }
        }
    }

    /// An ND Range operand: an `ndrange_t` value, or (llvm-spirv-15) a pointer to one.
    fn expect_ndrange(&mut self, inst: &Instruction, i: usize) {
        if let Some(t) = self.operand_type(inst, i) {
            let t = match self.ty(t) {
                Some(Type::Pointer { pointee, .. }) => *pointee,
                _ => t,
            };
            self.ndrange_type(inst, t, "the ND Range");
        }
    }

    /// `ndrange_t`: `{ i32, [3 x size_t], [3 x size_t], [3 x size_t] }`.
    fn ndrange_type(&mut self, inst: &Instruction, t: Word, what: &str) {
        let array3 = |c: &Self, m: Word| match c.ty(m) {
            Some(Type::Array { elem, len }) => {
                *len == 3 && matches!(c.ty(*elem), Some(Type::Int { width: 64 }))
            }
            _ => false,
        };
        let ok = match self.ty(t) {
            Some(Type::Struct { members, .. }) => {
                members.len() == 4
                    && self.ty(members[0]) == Some(&Type::Int { width: 32 })
                    && members[1..].iter().all(|m| array3(self, *m))
            }
            _ => false,
        };
        if !ok {
            let rule = format!(
                "SPIR-V Device-Side Enqueue: {what} of Op{:?} must be an ndrange_t struct {{ 32-bit work dimension, three arrays of 3 64-bit sizes }}, found {}",
                inst.class.opcode,
                self.type_name(t)
            );
            self.report(inst, rule);
        }
    }

    fn size_operand(&self, t: Word) -> bool {
        match self.ty(t) {
            Some(Type::Int { width: 32 | 64 }) => true,
            Some(Type::Array { elem, len }) => {
                matches!(len, 2 | 3) && matches!(self.ty(*elem), Some(Type::Int { width: 32 | 64 }))
            }
            _ => false,
        }
    }

    /// The block operands from `first`: Invoke a function returning void whose first
    /// parameter is a pointer and whose others are `Workgroup` pointers (`locals` of them
    /// when the instruction passes Local Sizes), Param a pointer, Param Size and Align 32-bit.
    fn block(&mut self, inst: &Instruction, first: usize, b: BlockRef, locals: Option<usize>) {
        let op = inst.class.opcode;
        match self.m.function_raw(b.invoke) {
            None => {
                let rule = format!(
                    "SPIR-V Device-Side Enqueue: the Invoke of Op{op:?} must be an OpFunction, found %{}",
                    b.invoke
                );
                self.report(inst, rule);
            }
            Some(f) => {
                let params: Vec<Word> = f.parameters.iter().filter_map(|p| p.result_type).collect();
                let ret = f.def.as_ref().and_then(|d| d.result_type).unwrap_or(0);
                let literal_ok = matches!(
                    params.first().and_then(|p| self.ty(*p)),
                    Some(Type::Pointer { .. })
                );
                let locals_ok = params.iter().skip(1).all(|p| {
                    matches!(
                        self.ty(*p),
                        Some(Type::Pointer {
                            storage: StorageClass::Workgroup,
                            ..
                        })
                    )
                });
                let count_ok = locals.is_none_or(|n| n + 1 == params.len());
                if self.ty(ret) != Some(&Type::Void) || !literal_ok || !locals_ok || !count_ok {
                    let rule = format!(
                        "SPIR-V Device-Side Enqueue: the Invoke %{} of Op{op:?} must return void and take a pointer to the block literal, then {} Workgroup pointers (one per Local Size)",
                        b.invoke,
                        locals.map_or("only".to_owned(), |n| n.to_string())
                    );
                    self.report(inst, rule);
                }
            }
        }
        if let Some(t) = self.operand_type(inst, first + 1) {
            if !matches!(self.ty(t), Some(Type::Pointer { .. })) {
                let rule = format!(
                    "SPIR-V Device-Side Enqueue: the Param of Op{op:?} must be a pointer, found {}",
                    self.type_name(t)
                );
                self.report(inst, rule);
            }
        }
        self.expect_int32(inst, first + 2, "Param Size");
        self.expect_int32(inst, first + 3, "Param Align");
    }
}
