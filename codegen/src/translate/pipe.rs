//! The pipe instructions (SPIR-V 3.52.23, OpenCL C 3.0 §6.15.16): calls of the pipe functions
//! (pipe.rs), given the pipe argument's address, the packet's address and the packet size the
//! instruction names. Reservations by a whole work-group or sub-group are collectives: every
//! work-item meets them, one work-item reserves or commits for the group once all have
//! arrived (so a commit follows every work-item's reserved reads or writes), and the others
//! take its reserve id.

use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::{types, InstBuilder, Value};
use ferrocl_frontend::spirv::{Op, Word};
use ferrocl_frontend::{Inst, PipePacket};

use super::function::{err, frame_flags, PointKind, Translator};
use super::subgroup::SCOPE_SUBGROUP;
use super::values::Val;
use crate::checked::CheckKind;
use crate::entry_points::EntryPoint;
use crate::error::BuildError;
use crate::pipe::INVALID_RESERVE_ID;

/// SPIR-V Scope Workgroup.
const SCOPE_WORKGROUP: u64 = 2;

impl Translator<'_, '_, '_> {
    pub(crate) fn pipe_instruction(&mut self, inst: Inst<'_>) -> Result<(), BuildError> {
        match inst.opcode() {
            Op::ReadPipe | Op::WritePipe | Op::ReservedReadPipe | Op::ReservedWritePipe => {
                self.pipe_access(inst)
            }
            Op::ReserveReadPipePackets | Op::ReserveWritePipePackets => {
                let r = inst.pipe_reserve()?;
                let (pipe, end) = self.pipe_end(&r.packet)?;
                let count = self.scalar(r.num_packets)?;
                let count = self.resize_int(count, types::I32, false);
                let id = self.call_entry(EntryPoint::PipeReserve, &[pipe, end, count])?[0];
                self.define(inst, Val::S(id))
            }
            Op::CommitReadPipe | Op::CommitWritePipe => {
                let c = inst.pipe_commit()?;
                let (pipe, end) = self.pipe_end(&c.packet)?;
                let id = self.scalar(c.reserve_id)?;
                self.call_entry(EntryPoint::PipeCommit, &[pipe, end, id])?;
                Ok(())
            }
            Op::IsValidReserveId => {
                let id = self.scalar(inst.unary()?.value)?;
                let valid = self
                    .b
                    .ins()
                    .icmp_imm_s(IntCC::NotEqual, id, INVALID_RESERVE_ID as i64);
                self.define(inst, Val::S(valid))
            }
            Op::GetNumPipePackets | Op::GetMaxPipePackets => {
                let packet = inst.pipe_query()?;
                let pipe = self.scalar(packet.pipe)?;
                let max = i64::from(inst.opcode() == Op::GetMaxPipePackets);
                let max = self.b.ins().iconst(types::I32, max);
                let n = self.call_entry(EntryPoint::PipePackets, &[pipe, max])?[0];
                self.define(inst, Val::S(n))
            }
            Op::GroupReserveReadPipePackets | Op::GroupReserveWritePipePackets => {
                self.group_pipe_reserve(inst)
            }
            Op::GroupCommitReadPipe | Op::GroupCommitWritePipe => self.group_pipe_commit(inst),
            op => err(format!("internal: Op{op:?} is not a pipe instruction\n")),
        }
    }

    /// The pipe's address and the end (0 read, 1 write) as the pipe functions take them.
    fn pipe_end(&mut self, packet: &PipePacket) -> Result<(Value, Value), BuildError> {
        let pipe = self.scalar(packet.pipe)?;
        let end = self.b.ins().iconst(types::I32, i64::from(packet.write));
        Ok((pipe, end))
    }

    /// The packet size operand as the pipe functions take it (an i32 of bytes).
    fn packet_size(&mut self, packet: &PipePacket) -> Result<Value, BuildError> {
        let size = self.scalar(packet.size)?;
        Ok(self.resize_int(size, types::I32, false))
    }

    fn pipe_access(&mut self, inst: Inst<'_>) -> Result<(), BuildError> {
        let a = inst.pipe_access()?;
        let (pipe, end) = self.pipe_end(&a.packet)?;
        let size = self.packet_size(&a.packet)?;
        let pointer = self.scalar(a.pointer)?;
        // Checked mode: a read from the pipe writes the packet, a write to it reads it.
        let kind = if a.packet.write {
            CheckKind::Read
        } else {
            CheckKind::Write
        };
        let bytes = self.b.ins().uextend(types::I64, size);
        self.check_access_dynamic(a.pointer, pointer, bytes, kind)?;
        let status = match a.reserved {
            Some((id, index)) => {
                let id = self.scalar(id)?;
                let index = self.scalar(index)?;
                let index = self.resize_int(index, types::I32, false);
                self.call_entry(
                    EntryPoint::PipeReservedAccess,
                    &[pipe, end, id, index, pointer, size],
                )?[0]
            }
            None => self.call_entry(EntryPoint::PipeAccess, &[pipe, end, pointer, size])?[0],
        };
        self.define(inst, Val::S(status))
    }

    /// The execution scope of a group reservation or commit: Workgroup or Subgroup.
    fn pipe_group_scope(&mut self, inst: Inst<'_>, scope: Option<Word>) -> Result<u64, BuildError> {
        let Some(scope) = scope else {
            return err(format!(
                "error: {} has no execution scope\n",
                inst.describe()
            ));
        };
        let scope = self.constant_index(inst, scope)?;
        if scope == SCOPE_SUBGROUP {
            self.require_sub_groups(&format!("{} with Subgroup scope", inst.describe()))?;
        } else if scope != SCOPE_WORKGROUP {
            return err(format!(
                "error: {} with execution scope {scope} is not supported (only Workgroup and Subgroup)\n",
                inst.describe()
            ));
        }
        Ok(scope)
    }

    /// `work_group_reserve_*_pipe` / `sub_group_reserve_*_pipe`: the group's first work-item
    /// reserves the packets it asks for (every work-item asks for the same number) once all
    /// have arrived; every work-item gets that reserve id.
    fn group_pipe_reserve(&mut self, inst: Inst<'_>) -> Result<(), BuildError> {
        let r = inst.pipe_reserve()?;
        let scope = self.pipe_group_scope(inst, r.scope)?;
        let pipe = self.scalar(r.packet.pipe)?;
        let write = i64::from(r.packet.write);
        let count = self.scalar(r.num_packets)?;
        let count = self.resize_int(count, types::I64, false);
        let id = self.once_per_group(scope, [pipe, count], |t, [pipe, count]| {
            // Made after the point: values from before it do not reach its resume block.
            let end = t.b.ins().iconst(types::I32, write);
            let count = t.b.ins().ireduce(types::I32, count);
            Ok(t.call_entry(EntryPoint::PipeReserve, &[pipe, end, count])?[0])
        })?;
        self.define(inst, Val::S(id))
    }

    /// `work_group_commit_*_pipe` / `sub_group_commit_*_pipe`: once every work-item of the
    /// group has arrived (its reserved reads or writes done), the first commits.
    fn group_pipe_commit(&mut self, inst: Inst<'_>) -> Result<(), BuildError> {
        let c = inst.pipe_commit()?;
        let scope = self.pipe_group_scope(inst, c.scope)?;
        let pipe = self.scalar(c.packet.pipe)?;
        let write = i64::from(c.packet.write);
        let id = self.scalar(c.reserve_id)?;
        self.once_per_group(scope, [pipe, id], |t, [pipe, id]| {
            let end = t.b.ins().iconst(types::I32, write);
            t.call_entry(EntryPoint::PipeCommit, &[pipe, end, id])?;
            Ok(id)
        })?;
        Ok(())
    }

    /// Runs `action` once for the work-group (Workgroup `scope`) or each sub-group, in its
    /// first work-item, after every work-item of it has arrived; `operands` are that work-item's
    /// (they pass through the frame, across the barrier point). Every work-item gets the
    /// action's result.
    fn once_per_group(
        &mut self,
        scope: u64,
        operands: [Value; 2],
        action: impl FnOnce(&mut Self, [Value; 2]) -> Result<Value, BuildError>,
    ) -> Result<Value, BuildError> {
        let cells = self.frame_alloc(16, 8)?;
        let result = self.frame_alloc(8, 8)?;
        let own = self
            .barrier
            .as_ref()
            .ok_or_else(|| {
                BuildError::new("internal: a group pipe operation outside a barrier kernel\n")
            })?
            .frame_base;
        for (i, v) in operands.iter().enumerate() {
            self.b
                .ins()
                .store(frame_flags(), *v, own, (cells + 8 * i as u64) as i32);
        }
        // The first work-item's frame: the group's, or the sub-group's first lane's.
        let (first_frame, own) = if scope == SCOPE_SUBGROUP {
            self.sub_group_point(PointKind::SubGroupCollective)?
        } else {
            self.barrier_point(PointKind::WorkGroupCollective)?;
            let state = self.barrier.as_ref().expect("still in a barrier kernel");
            (state.frames, state.frame_base)
        };
        let is_first = self.b.ins().icmp(IntCC::Equal, own, first_frame);
        let act = self.b.create_block();
        let read = self.b.create_block();
        self.b.ins().brif(is_first, act, &[], read, &[]);
        self.b.switch_to_block(act);
        let load = |t: &mut Self, i: u64| {
            t.b.ins()
                .load(types::I64, frame_flags(), own, (cells + 8 * i) as i32)
        };
        let mine = [load(self, 0), load(self, 1)];
        let v = action(self, mine)?;
        let v = self.resize_int(v, types::I64, false);
        self.b.ins().store(frame_flags(), v, own, result as i32);
        self.b.ins().jump(read, &[]);
        self.b.switch_to_block(read);
        Ok(self
            .b
            .ins()
            .load(types::I64, frame_flags(), first_frame, result as i32))
    }
}
