//! Work-group functions. `OpGroupAsyncCopy` / `OpGroupWaitEvents` (and the 2D and 3D copies of
//! cl_khr_extended_async_copies, imported calls) need no barrier in this execution model:
//! work-items of a group run in order on one thread, so the first work-item performs the whole
//! copy synchronously; everything after it in program order, in every work-item, sees the
//! data, and waiting has nothing left to wait for. The collectives
//! (reduce, scans, broadcast, all, any, and the mul/bitwise/logical ones of
//! SPV_KHR_uniform_group_instructions) synchronise like a barrier (see `group_collective`);
//! how each opcode combines (`Combine`) and its identity are shared with the sub-group path.

use cranelift_codegen::ir::condcodes::{FloatCC, IntCC};
use cranelift_codegen::ir::{types, BlockArg, InstBuilder, Value};
use ferrocl_frontend::spirv::{GroupOperation, Op, StorageClass, Word};
use ferrocl_frontend::Type;
use ferrocl_frontend::{FunctionCall, GroupOp, Inst};

use super::function::{err, frame_flags, required, PointKind, Translator};
use super::subgroup::{is_non_uniform_exchange, SCOPE_SUBGROUP};
use super::values::Val;
use crate::checked::CheckKind;
use crate::entry_points::EntryPoint;
use crate::error::BuildError;

impl Translator<'_, '_, '_> {
    /// `OpGroupAsyncCopy`: Scope, Destination, Source, NumElements, Stride, Event. The stride
    /// applies to whichever side is not in Workgroup memory.
    pub(crate) fn group_async_copy(&mut self, inst: Inst<'_>) -> Result<(), BuildError> {
        let copy = inst.group_async_copy()?;
        let dst_id = copy.destination;
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
        let dst = self.scalar(copy.destination)?;
        let src = self.scalar(copy.source)?;
        let count = self.scalar(copy.num_elements)?;
        let stride = self.scalar(copy.stride)?;
        let event = self.value(copy.event)?;
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
        let src_id = copy.source;
        self.check_access(src_id, s, elem_size, CheckKind::Read)?;
        self.check_access(dst_id, d, elem_size, CheckKind::Write)?;
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

impl Translator<'_, '_, '_> {
    /// A call of cl_khr_extended_async_copies' `async_work_group_copy_2D2D` or
    /// `async_work_group_copy_3D3D` (imported functions, by mangled name; OpenCL C spec
    /// "Extended Async Copy Functions"): true when `callee` is one and the copy is emitted.
    /// Like `OpGroupAsyncCopy`, the work-item with local id (0, 0, 0) copies everything at
    /// once: `num_lines` lines (in each of `num_planes` planes) of `num_elements_per_line`
    /// elements of `num_bytes_per_element` bytes, from `src + src_offset` elements to `dst +
    /// dst_offset` elements, the start of each line `*_total_line_length` elements after the
    /// previous one's and of each plane `*_total_plane_area` elements after the previous one's.
    /// Each line is one `memmove` of contiguous bytes.
    pub(crate) fn extended_async_copy(
        &mut self,
        inst: Inst<'_>,
        call: &FunctionCall,
    ) -> Result<bool, BuildError> {
        let m = self.m;
        let callee = call.function;
        if m.function(callee).is_none_or(|f| f.block_count() != 0) {
            return Ok(false);
        }
        let name = m.linkage_name(callee).unwrap_or("");
        let Some(base) = ferrocl_frontend::itanium_name(name) else {
            return Ok(false);
        };
        if base == "async_work_group_copy_fencej" {
            // cl_khr_async_work_group_copy_fence: copies before the fence are ordered before
            // copies after it, in both directions. Each copy is complete when the work-item
            // that makes it moves on (above), in program order, so a memory fence is all
            // that is left to do.
            if call.arguments.len() != 1 {
                return err(format!(
                    "error: {name} takes 1 argument, the call passes {}\n",
                    call.arguments.len()
                ));
            }
            self.b.ins().fence();
            return Ok(true);
        }
        let three_d = if base.starts_with("async_work_group_copy_2D2D") {
            false
        } else if base.starts_with("async_work_group_copy_3D3D") {
            true
        } else {
            return Ok(false);
        };
        let params = if three_d { 13 } else { 10 };
        if call.arguments.len() != params {
            return err(format!(
                "error: {name} takes {params} arguments, the call passes {}\n",
                call.arguments.len()
            ));
        }
        // Argument `i` (counted from 1) of the builtin's signature.
        let arg = |i: usize| call.arguments[i - 1];
        let (dst_i, src_i) = (1, 3);
        for i in [dst_i, src_i] {
            let id = arg(i);
            if !matches!(
                m.type_of(id).and_then(|t| m.ty(t)),
                Some(Type::Pointer { .. })
            ) {
                return err(format!("error: {name}: argument {i} is not a pointer\n"));
            }
        }
        let size = |t: &mut Self, i: usize| -> Result<Value, BuildError> {
            let v = t.scalar(arg(i))?;
            if !t.ty_of(v).is_int() {
                return err(format!("error: {name}: argument {i} is not an integer\n"));
            }
            Ok(t.resize_int(v, types::I64, false))
        };
        let dst_offset = size(self, 2)?;
        let src_offset = size(self, 4)?;
        let elem = size(self, 5)?;
        let per_line = size(self, 6)?;
        let lines = size(self, 7)?;
        let (planes, src_line, src_plane, dst_line, dst_plane) = if three_d {
            (
                size(self, 8)?,
                size(self, 9)?,
                size(self, 10)?,
                size(self, 11)?,
                size(self, 12)?,
            )
        } else {
            let one = self.b.ins().iconst(types::I64, 1);
            let zero = self.b.ins().iconst(types::I64, 0);
            (one, size(self, 8)?, zero, size(self, 9)?, zero)
        };
        let event = self.value(arg(params))?;
        let (dst_id, src_id) = (arg(dst_i), arg(src_i));
        let dst = self.scalar(dst_id)?;
        let src = self.scalar(src_id)?;

        // Only the work-item with local id (0, 0, 0) copies.
        let lid = self.wi.local_id;
        let any = self.b.ins().bor(lid[0], lid[1]);
        let any = self.b.ins().bor(any, lid[2]);
        let first = self.b.ins().icmp_imm_s(IntCC::Equal, any, 0);
        let setup = self.b.create_block();
        let plane_head = self.b.create_block();
        self.b.append_block_param(plane_head, types::I64);
        let line_head = self.b.create_block();
        self.b.append_block_param(line_head, types::I64);
        self.b.append_block_param(line_head, types::I64);
        let line_body = self.b.create_block();
        let plane_next = self.b.create_block();
        let done = self.b.create_block();
        self.b.ins().brif(first, setup, &[], done, &[]);

        self.b.switch_to_block(setup);
        let dst_start = self.b.ins().imul(dst_offset, elem);
        let dst_start = self.b.ins().iadd(dst, dst_start);
        let src_start = self.b.ins().imul(src_offset, elem);
        let src_start = self.b.ins().iadd(src, src_start);
        let line_bytes = self.b.ins().imul(per_line, elem);
        // Element strides to byte strides.
        let [src_line, src_plane, dst_line, dst_plane] =
            [src_line, src_plane, dst_line, dst_plane].map(|s| self.b.ins().imul(s, elem));
        let zero = self.b.ins().iconst(types::I64, 0);
        self.b.ins().jump(plane_head, &[BlockArg::Value(zero)]);

        self.b.switch_to_block(plane_head);
        let p = self.b.block_params(plane_head)[0];
        let more = self.b.ins().icmp(IntCC::UnsignedLessThan, p, planes);
        self.b.ins().brif(
            more,
            line_head,
            &[BlockArg::Value(p), BlockArg::Value(zero)],
            done,
            &[],
        );

        self.b.switch_to_block(line_head);
        let (p, l) = (
            self.b.block_params(line_head)[0],
            self.b.block_params(line_head)[1],
        );
        let more = self.b.ins().icmp(IntCC::UnsignedLessThan, l, lines);
        self.b.ins().brif(more, line_body, &[], plane_next, &[]);

        self.b.switch_to_block(line_body);
        let at = |t: &mut Self, start: Value, plane: Value, line: Value| {
            let by_plane = t.b.ins().imul(p, plane);
            let by_line = t.b.ins().imul(l, line);
            let offset = t.b.ins().iadd(by_plane, by_line);
            t.b.ins().iadd(start, offset)
        };
        let s = at(self, src_start, src_plane, src_line);
        let d = at(self, dst_start, dst_plane, dst_line);
        self.check_access_dynamic(src_id, s, line_bytes, CheckKind::Read)?;
        self.check_access_dynamic(dst_id, d, line_bytes, CheckKind::Write)?;
        self.call_entry(EntryPoint::Memmove, &[d, s, line_bytes])?;
        let next = self.b.ins().iadd_imm_s(l, 1);
        self.b
            .ins()
            .jump(line_head, &[BlockArg::Value(p), BlockArg::Value(next)]);

        self.b.switch_to_block(plane_next);
        let next = self.b.ins().iadd_imm_s(p, 1);
        self.b.ins().jump(plane_head, &[BlockArg::Value(next)]);

        self.b.switch_to_block(done);
        // The copy is complete: the event only has to be a value wait_group_events accepts.
        self.define(inst, event)?;
        Ok(true)
    }
}

/// The group operation of an `OpGroup*` collective and its decoded operands: Reduce for
/// all/any/broadcast, else the instruction's (Reduce or a scan).
pub(crate) fn group_operation(inst: Inst<'_>) -> Result<(GroupOperation, GroupOp), BuildError> {
    let op = inst.opcode();
    let g = inst.group_op()?;
    let group_op = match op {
        Op::GroupAll | Op::GroupAny | Op::GroupBroadcast => GroupOperation::Reduce,
        _ => match g.operation {
            Some(o) => o,
            None => return err(format!("error: Op{op:?} without a group operation\n")),
        },
    };
    if !matches!(
        group_op,
        GroupOperation::Reduce | GroupOperation::InclusiveScan | GroupOperation::ExclusiveScan
    ) {
        return err(format!(
            "error: Op{op:?}: group operation {group_op:?} is not supported\n"
        ));
    }
    Ok((group_op, g))
}

/// How a collective combines values.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Combine {
    IAdd,
    FAdd,
    IMul,
    FMul,
    Xor,
    FMin,
    FMax,
    UMin,
    UMax,
    SMin,
    SMax,
    And,
    Or,
}

/// How an `OpGroup*` collective (core or SPV_KHR_uniform_group_instructions) combines values;
/// `None` for `OpGroupBroadcast`, which never combines. Booleans are 0 or 1, so the logical
/// operations are the bitwise ones on them.
pub(crate) fn collective_combine(op: Op) -> Option<Combine> {
    Some(match op {
        Op::GroupAll | Op::GroupLogicalAndKHR | Op::GroupBitwiseAndKHR => Combine::And,
        Op::GroupAny | Op::GroupLogicalOrKHR | Op::GroupBitwiseOrKHR => Combine::Or,
        Op::GroupLogicalXorKHR | Op::GroupBitwiseXorKHR => Combine::Xor,
        Op::GroupIAdd => Combine::IAdd,
        Op::GroupFAdd => Combine::FAdd,
        Op::GroupIMulKHR => Combine::IMul,
        Op::GroupFMulKHR => Combine::FMul,
        Op::GroupFMin => Combine::FMin,
        Op::GroupFMax => Combine::FMax,
        Op::GroupUMin => Combine::UMin,
        Op::GroupUMax => Combine::UMax,
        Op::GroupSMin => Combine::SMin,
        Op::GroupSMax => Combine::SMax,
        _ => return None,
    })
}

/// A work-group reduction's fold: the contributions (`cells`) combined into work-item 0's
/// frame at `result` (`Translator::group_step`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct GroupStep {
    pub(crate) combine: Combine,
    pub(crate) ty: types::Type,
    pub(crate) cells: Contributions,
    pub(crate) result: u64,
}

/// Where a work-group reduction's work-items leave their contributions.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Contributions {
    /// At this offset in every work-item's frame.
    Frame(u64),
    /// In a column after the group's frames: element `i` (linear local id) at
    /// `column_base(column) + i × size`. Region schedules use columns: their work-item loops
    /// store the contributions of a vector of work-items as one vector store, and the fold
    /// reads consecutive values, where frame cells cost a store and a load per work-item
    /// (14 % of dpnp's sum kernel went to storing them lane by lane).
    Column(u64),
}

/// Bytes per work-item of one reduction's column (`Contributions::Column`): every value type
/// fits, and every column starts 8-byte aligned.
pub(crate) const COLUMN_BYTES: u64 = 8;

/// Independent accumulators of a work-group reduction's fold: enough to hide the latency of a
/// float add, so the fold costs its loads rather than a chain of one add per work-item.
const FOLD_ACCUMULATORS: i64 = 8;

impl Translator<'_, '_, '_> {
    pub(crate) fn combine(&mut self, c: Combine, a: Value, b: Value) -> Value {
        let ins = self.b.ins();
        match c {
            Combine::IAdd => ins.iadd(a, b),
            Combine::FAdd => ins.fadd(a, b),
            Combine::IMul => ins.imul(a, b),
            Combine::FMul => ins.fmul(a, b),
            Combine::Xor => ins.bxor(a, b),
            // OpenCL's fmin/fmax: a NaN operand yields the other one.
            Combine::FMin | Combine::FMax => {
                let m = if matches!(c, Combine::FMin) {
                    self.b.ins().fmin(a, b)
                } else {
                    self.b.ins().fmax(a, b)
                };
                let a_nan = self.b.ins().fcmp(FloatCC::Unordered, a, a);
                let b_nan = self.b.ins().fcmp(FloatCC::Unordered, b, b);
                let r = self.b.ins().select(b_nan, a, m);
                self.b.ins().select(a_nan, b, r)
            }
            Combine::UMin => ins.umin(a, b),
            Combine::UMax => ins.umax(a, b),
            Combine::SMin => ins.smin(a, b),
            Combine::SMax => ins.smax(a, b),
            Combine::And => ins.band(a, b),
            Combine::Or => ins.bor(a, b),
        }
    }

    /// The start of reduction column `column` (`Contributions::Column`): after the group's
    /// frames (`items × stride` bytes from `frames`), `column × items` bytes into the columns.
    /// The runtime sizes the frames block for them: the kernel's frame size counts each
    /// column's `COLUMN_BYTES` per work-item (kernel.rs `build_regions`).
    pub(crate) fn column_base(&mut self, frames: Value, stride: Value, column: u64) -> Value {
        let items = super::static_schedule::group_items(self);
        let frames_end = self.b.ins().imul(items, stride);
        let frames_end = self.b.ins().iadd(frames, frames_end);
        let before = self.b.ins().imul_imm_s(items, column as i64);
        self.b.ins().iadd(frames_end, before)
    }

    /// Folds a work-group reduction (`step`) once for the group. The order is fixed, so every
    /// backend and schedule gives the same bits: accumulator `j` folds the contributions of
    /// linear local ids `j`, `j + 8`, `j + 16`, … in turn, each starting from its first
    /// contribution (never from the identity: `0.0 + -0.0` would lose a lone `-0.0`), and the
    /// eight combine as a tree, `((a0 ⊕ a1) ⊕ (a2 ⊕ a3)) ⊕ ((a4 ⊕ a5) ⊕ (a6 ⊕ a7))`, skipping
    /// accumulators of ids past the group. The spec leaves the order of a float reduction
    /// unspecified; a single chain of one combine per work-item made the fold, not the loads,
    /// the cost of dpnp's sums.
    pub(crate) fn group_step(&mut self, step: GroupStep, frames: Value, stride: Value) {
        let GroupStep {
            combine,
            ty,
            cells,
            result,
        } = step;
        let items = super::static_schedule::group_items(self);
        let last = self.b.ins().iadd_imm_s(items, -1);
        let (base, stride, offset) = match cells {
            Contributions::Frame(offset) => (frames, stride, offset as i32),
            Contributions::Column(column) => {
                let base = self.column_base(frames, stride, column);
                let size = self.b.ins().iconst(types::I64, i64::from(ty.bytes()));
                (base, size, 0)
            }
        };
        let load = |t: &mut Self, index: Value| {
            let at = t.b.ins().imul(index, stride);
            let at = t.b.ins().iadd(base, at);
            t.b.ins().load(ty, frame_flags(), at, offset)
        };
        // Accumulator j starts from contribution j (a clamped read where the group is smaller;
        // the tree skips it).
        let mut acc = Vec::new();
        for j in 0..FOLD_ACCUMULATORS {
            let index = self.b.ins().iconst(types::I64, j);
            let index = self.b.ins().umin(index, last);
            acc.push(load(self, index));
        }
        let head = self.b.create_block();
        let body = self.b.create_block();
        let tail = self.b.create_block();
        self.b.append_block_param(head, types::I64);
        self.b.append_block_param(tail, types::I64);
        for block in [head, tail] {
            for _ in 0..FOLD_ACCUMULATORS {
                self.b.append_block_param(block, ty);
            }
        }
        let start = self.b.ins().iconst(types::I64, FOLD_ACCUMULATORS);
        let args = |i: Value, acc: &[Value]| -> Vec<BlockArg> {
            std::iter::once(i)
                .chain(acc.iter().copied())
                .map(BlockArg::Value)
                .collect()
        };
        self.b.ins().jump(head, &args(start, &acc));

        // Whole rounds of eight.
        self.b.switch_to_block(head);
        let params = self.b.block_params(head).to_vec();
        let (i, acc) = (params[0], &params[1..]);
        let end = self.b.ins().iadd_imm_s(i, FOLD_ACCUMULATORS);
        let whole = self
            .b
            .ins()
            .icmp(IntCC::UnsignedLessThanOrEqual, end, items);
        self.b.ins().brif(whole, body, &[], tail, &args(i, acc));
        self.b.switch_to_block(body);
        let mut next = Vec::new();
        for (j, &a) in acc.iter().enumerate() {
            let index = self.b.ins().iadd_imm_s(i, j as i64);
            let c = load(self, index);
            next.push(self.combine(combine, a, c));
        }
        self.b.ins().jump(head, &args(end, &next));

        // The last partial round, then the tree.
        self.b.switch_to_block(tail);
        let params = self.b.block_params(tail).to_vec();
        let (i, mut acc) = (params[0], params[1..].to_vec());
        for (j, a) in acc.iter_mut().enumerate() {
            let index = self.b.ins().iadd_imm_s(i, j as i64);
            let inside = self.b.ins().icmp(IntCC::UnsignedLessThan, index, items);
            let clamped = self.b.ins().umin(index, last);
            let c = load(self, clamped);
            let folded = self.combine(combine, *a, c);
            *a = self.b.ins().select(inside, folded, *a);
        }
        let mut width = 1;
        while width < FOLD_ACCUMULATORS as usize {
            for j in (0..acc.len()).step_by(2 * width) {
                let other = (j + width) as i64;
                let present = self
                    .b
                    .ins()
                    .icmp_imm_s(IntCC::UnsignedGreaterThan, items, other);
                let folded = self.combine(combine, acc[j], acc[j + width]);
                acc[j] = self.b.ins().select(present, folded, acc[j]);
            }
            width *= 2;
        }
        self.b
            .ins()
            .store(frame_flags(), acc[0], frames, result as i32);
    }

    /// The identity of `c` on values of SPIR-V type `ty` (IR type `t`): as `identity`, except
    /// that a boolean `and` starts from true (1), not from all ones.
    pub(crate) fn collective_identity(&mut self, c: Combine, ty: Word, t: types::Type) -> Value {
        if c == Combine::And && matches!(self.m.ty(ty), Some(Type::Bool)) {
            self.b.ins().iconst(t, 1)
        } else {
            self.identity(c, t)
        }
    }

    /// The identity of `c` on IR type `t` (mul 1, and all ones, or/xor/add 0, min the largest
    /// value, max the smallest).
    pub(crate) fn identity(&mut self, c: Combine, t: types::Type) -> Value {
        let bits = t.bits();
        let int = |v: i64| v;
        match (c, t) {
            (Combine::FAdd | Combine::FMul | Combine::FMin | Combine::FMax, _) => {
                let v = match c {
                    Combine::FAdd => 0.0,
                    Combine::FMul => 1.0,
                    Combine::FMin => f64::INFINITY,
                    _ => f64::NEG_INFINITY,
                };
                if t == types::F32 {
                    self.b.ins().f32const(v as f32)
                } else {
                    self.b.ins().f64const(v)
                }
            }
            _ => {
                let v = match c {
                    Combine::UMin | Combine::And => int(-1),
                    Combine::IMul => int(1),
                    Combine::SMin => int(i64::MAX >> (64 - bits)),
                    Combine::SMax => int(i64::MIN >> (64 - bits)),
                    _ => int(0),
                };
                self.b.ins().iconst(t, v)
            }
        }
    }

    /// Work-group collectives (scope Workgroup): every work-item stores its contribution in its
    /// frame, the collective acts as a barrier, and then the contributions are combined once
    /// for the group before every work-item reads its result. Reductions fold in the fixed
    /// order of `group_step`: at the start of the region that resumes from the collective
    /// under region schedules (outside its work-item loop, which then vectorises), else by
    /// work-item 0, which always runs first in a round. Scans run in local-id order by work-item
    /// 0 and write each work-item's result into its frame; a broadcast copies the chosen
    /// contribution. Folds start from the first contribution, not from the identity
    /// (`0.0 + -0.0` would lose the sign of a lone `-0.0`, `fmin(inf, NaN)` a lone NaN); the
    /// identity is only the first exclusive-scan result.
    ///
    /// Half sums and products are folded in f32 and each work-item's result is rounded once to
    /// half. The spec leaves the order of a floating-point reduction unspecified and asks for
    /// half results; one rounding of the f32 fold (exact while the contributions span no more
    /// than 24 bits) is the correctly rounded result in all but rare double-rounding cases,
    /// where a chain of half operations loses a rounding per step (a sequential half sum of
    /// 4096 ones stops at 2048). An overflow of the half range gives infinity. Sub-groups, of
    /// at most 32 work-items, fold in half steps instead (subgroup.rs).
    pub(crate) fn group_collective(&mut self, inst: Inst<'_>) -> Result<(), BuildError> {
        let op = inst.opcode();
        if is_non_uniform_exchange(op) {
            return self.sub_group_non_uniform(inst);
        }
        let scope = self.constant_index(inst, inst.group_op()?.scope)?;
        if scope == SCOPE_SUBGROUP {
            return self.sub_group_collective(inst);
        }
        if scope != 2 {
            return err(format!(
                "error: Op{op:?} with execution scope {scope} is not supported (only Workgroup and Subgroup)\n"
            ));
        }
        let (group_op, g) = group_operation(inst)?;
        let x = self.scalar(required(inst, g.value, "value")?)?;
        let t = self.ty_of(x);
        let result_ty = self.result_type(inst)?;
        // Broadcast reads one contribution; it never combines.
        let combine = collective_combine(op).unwrap_or(Combine::Or);
        // Two 8-byte cells in every work-item's frame: the contribution and the result.
        let contribution = self.frame_alloc(8, 8)?;
        let result = self.frame_alloc(8, 8)?;
        let (own, frames, stride) = {
            let state = self.barrier.as_ref().ok_or_else(|| {
                BuildError::new("internal: collective outside a barrier kernel\n")
            })?;
            (state.frame_base, state.frames, state.frame_stride)
        };
        // Region schedules fold reductions at a region's entry, from a column of the group's
        // contributions; the same column in every region copy (they find the step of the
        // point from the first copy).
        let next_point = self
            .barrier
            .as_ref()
            .map_or(0, |s| s.resume_blocks.len() as i64 + 1);
        let cells = match &self.group_steps {
            Some(steps) if group_op == GroupOperation::Reduce && op != Op::GroupBroadcast => {
                match steps.get(&next_point) {
                    Some(step) => step.cells,
                    None => {
                        let column = self.column_bytes;
                        self.column_bytes += COLUMN_BYTES;
                        Contributions::Column(column)
                    }
                }
            }
            _ => Contributions::Frame(contribution),
        };
        match cells {
            Contributions::Frame(offset) => {
                self.b.ins().store(frame_flags(), x, own, offset as i32);
            }
            Contributions::Column(column) => {
                let base = self.column_base(frames, stride, column);
                let lid = self.wi.local_id;
                let ls = self.wi.local_size;
                let row = self.b.ins().imul(lid[2], ls[1]);
                let row = self.b.ins().iadd(row, lid[1]);
                let linear = self.b.ins().imul(row, ls[0]);
                let linear = self.b.ins().iadd(linear, lid[0]);
                let at = self.b.ins().imul_imm_s(linear, i64::from(t.bytes()));
                let at = self.b.ins().iadd(base, at);
                self.b.ins().store(frame_flags(), x, at, 0);
            }
        }
        let point = self.barrier_point(PointKind::WorkGroupCollective)?;
        let own = self
            .barrier
            .as_ref()
            .map(|s| s.frame_base)
            .expect("still in a barrier kernel");

        let ls = self.wi.local_size;
        let lid = self.wi.local_id;
        let frame_of = |t: &mut Self, index: Value| -> Value {
            let off = t.b.ins().imul(index, stride);
            t.b.ins().iadd(frames, off)
        };
        let v = if op == Op::GroupBroadcast {
            // The local id is a scalar (1-D) or a vector of 2 or 3 components.
            let id = self.value(required(inst, g.argument, "local id")?)?.flat();
            let mut comps = [0, 1, 2].map(|_| None);
            for (d, c) in id.iter().enumerate().take(3) {
                comps[d] = Some(self.resize_int(*c, types::I64, false));
            }
            let zero = self.b.ins().iconst(types::I64, 0);
            let [x0, x1, x2] = comps.map(|c| c.unwrap_or(zero));
            let row = self.b.ins().imul(x2, ls[1]);
            let row = self.b.ins().iadd(row, x1);
            let lin = self.b.ins().imul(row, ls[0]);
            let lin = self.b.ins().iadd(lin, x0);
            // A local id outside the group is undefined (OpenCL C 6.15.15); it must not read
            // outside the group's work-item frames: checked mode reports it, and otherwise
            // work-item 0's value is taken.
            let outside = [x0, x1, x2]
                .iter()
                .zip(ls)
                .map(|(&x, l)| self.b.ins().icmp(IntCC::UnsignedGreaterThanOrEqual, x, l))
                .collect::<Vec<_>>();
            let outside = outside[1..]
                .iter()
                .fold(outside[0], |acc, &o| self.b.ins().bor(acc, o));
            self.check_operand(
                outside,
                "work_group_broadcast from a local id outside the work-group",
            )?;
            let lin = self.b.ins().select(outside, zero, lin);
            // Work-item 0 copies the value out: in a loop it stores its next contribution
            // before the others resume and read.
            let any = self.b.ins().bor(lid[0], lid[1]);
            let any = self.b.ins().bor(any, lid[2]);
            let is_first = self.b.ins().icmp_imm_s(IntCC::Equal, any, 0);
            let copy = self.b.create_block();
            let read = self.b.create_block();
            self.b.ins().brif(is_first, copy, &[], read, &[]);
            self.b.switch_to_block(copy);
            let frame = frame_of(self, lin);
            let c = self
                .b
                .ins()
                .load(t, frame_flags(), frame, contribution as i32);
            self.b.ins().store(frame_flags(), c, own, result as i32);
            self.b.ins().jump(read, &[]);
            self.b.switch_to_block(read);
            self.b.ins().load(t, frame_flags(), frames, result as i32)
        } else if group_op == GroupOperation::Reduce {
            let step = GroupStep {
                combine,
                ty: t,
                cells,
                result,
            };
            if let Some(steps) = self.group_steps.as_mut() {
                // Region schedules fold once per group at the entry of the region that
                // resumes here, outside its work-item loop (kernel.rs `build_regions`).
                if point != next_point || steps.insert(point, step).is_some_and(|s| s != step) {
                    return err("internal: region copies disagree on a collective's frame cells\n");
                }
            } else {
                let any = self.b.ins().bor(lid[0], lid[1]);
                let any = self.b.ins().bor(any, lid[2]);
                let is_first = self.b.ins().icmp_imm_s(IntCC::Equal, any, 0);
                let fold = self.b.create_block();
                let read = self.b.create_block();
                self.b.ins().brif(is_first, fold, &[], read, &[]);
                self.b.switch_to_block(fold);
                self.group_step(step, frames, stride);
                self.b.ins().jump(read, &[]);
                self.b.switch_to_block(read);
            }
            self.b.ins().load(t, frame_flags(), frames, result as i32)
        } else {
            // Work-item 0 scans; `acc` runs over local ids in order.
            let any = self.b.ins().bor(lid[0], lid[1]);
            let any = self.b.ins().bor(any, lid[2]);
            let is_first = self.b.ins().icmp_imm_s(IntCC::Equal, any, 0);
            let items = self.b.ins().imul(ls[0], ls[1]);
            let items = self.b.ins().imul(items, ls[2]);
            let head = self.b.create_block();
            self.b.append_block_param(head, types::I64);
            self.b.append_block_param(head, t);
            let body = self.b.create_block();
            let scanned = self.b.create_block();
            let read = self.b.create_block();
            let init = self.collective_identity(combine, result_ty, t);
            let zero = self.b.ins().iconst(types::I64, 0);
            self.b.ins().brif(
                is_first,
                head,
                &[BlockArg::Value(zero), BlockArg::Value(init)],
                read,
                &[],
            );

            self.b.switch_to_block(head);
            let (i, acc) = (self.b.block_params(head)[0], self.b.block_params(head)[1]);
            let more = self.b.ins().icmp(IntCC::UnsignedLessThan, i, items);
            self.b.ins().brif(more, body, &[], scanned, &[]);

            self.b.switch_to_block(body);
            let frame = frame_of(self, i);
            let c = self
                .b
                .ins()
                .load(t, frame_flags(), frame, contribution as i32);
            let folded = self.combine(combine, acc, c);
            let first = self.b.ins().icmp_imm_s(IntCC::Equal, i, 0);
            let next_acc = self.b.ins().select(first, c, folded);
            let written = if group_op == GroupOperation::ExclusiveScan {
                acc
            } else {
                next_acc
            };
            self.b
                .ins()
                .store(frame_flags(), written, frame, result as i32);
            let next = self.b.ins().iadd_imm_s(i, 1);
            self.b
                .ins()
                .jump(head, &[BlockArg::Value(next), BlockArg::Value(next_acc)]);

            self.b.switch_to_block(scanned);
            self.b.ins().jump(read, &[]);
            self.b.switch_to_block(read);
            self.b.ins().load(t, frame_flags(), own, result as i32)
        };
        // Half sums and products are folded in f32 and rounded once (see above).
        let v = if matches!(combine, Combine::FAdd | Combine::FMul) {
            self.round_half_result(result_ty, Val::S(v))?
        } else {
            Val::S(v)
        };
        self.define(inst, v)
    }
}
