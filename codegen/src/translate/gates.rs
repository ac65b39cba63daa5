//! Resume gates of kernels with yield points (spin loops) or named barriers (`PointKind` in
//! function.rs says what each kind of point waits for). A gate runs where a waiting work-item would resume: it
//! either lets the work-item through (and records that the round made progress) or sends it
//! back to wait for a later round.

use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::{types, BlockArg, InstBuilder, Value};

use super::function::{
    err, frame_flags, PointKind, Translator, KIND_BITS, RESUME_DONE, SERVED_MARK_OFFSET,
};
use crate::error::BuildError;

/// Marks a released work-item: any non-zero served mark lets it through its gate.
const RELEASED: i64 = 1;

/// The frame offset of named-barrier handles (kernel.rs reserves it in kernels with named
/// barriers).
fn state_slot(t: &Translator) -> Result<i32, BuildError> {
    t.barrier
        .as_ref()
        .and_then(|s| s.named_barrier_slot)
        .ok_or_else(|| BuildError::new("internal: a named-barrier gate without its frame slot\n"))
}

impl Translator<'_, '_, '_> {
    /// The gate of resume point `k` of kind `kind`, emitted at the start of its resume block;
    /// translation continues behind it.
    pub(crate) fn resume_gate(&mut self, kind: PointKind, k: i64) -> Result<(), BuildError> {
        let Some(state) = self.barrier.as_ref() else {
            return err("internal: resume gate outside a barrier kernel\n");
        };
        let Some(rounds) = state.yields else {
            return err("internal: resume gate in a kernel without yield points\n");
        };
        let (own, frames, stride, pending, item_done) = (
            state.frame_base,
            state.frames,
            state.frame_stride,
            state.pending,
            state.item_done,
        );
        let go = self.b.create_block();
        let wait = self.b.create_block();
        let check = self.b.create_block();
        self.b.ins().brif(rounds.forced, go, &[], check, &[]);
        self.b.switch_to_block(check);
        let me = self.point_value(k);
        let mark = self
            .b
            .ins()
            .load(types::I64, frame_flags(), own, SERVED_MARK_OFFSET);
        let served = self.b.ins().icmp_imm_s(IntCC::NotEqual, mark, 0);
        match kind {
            PointKind::Yield => {
                self.b.ins().jump(go, &[]);
            }
            PointKind::NonUniform => {
                let lagging = self.lagging_in_flight(frames, stride, me);
                let unserved = self.b.ins().bxor_imm_s(served, 1);
                let lagging = self.b.ins().band(lagging, unserved);
                self.b.ins().brif(lagging, wait, &[], go, &[]);
            }
            PointKind::SubGroupBarrier | PointKind::SubGroupCollective => {
                let unserved = self.b.create_block();
                self.b.ins().brif(served, go, &[], unserved, &[]);
                self.b.switch_to_block(unserved);
                let members = self.sub_group_members(frames, stride);
                let mut complete = self.b.ins().iconst(types::I8, 1);
                for &(frame, exists) in &members {
                    let theirs = self.b.ins().load(types::I32, frame_flags(), frame, 0);
                    let arrived = self.arrived(theirs, me);
                    let absent = self.b.ins().bxor_imm_s(exists, 1);
                    let ok = self.b.ins().bor(arrived, absent);
                    complete = self.b.ins().band(complete, ok);
                }
                if kind == PointKind::SubGroupBarrier {
                    // Every member is here (or returned): all of them pass, though this one
                    // moves on before they resume. (A collective's leader serves them instead.)
                    let release = self.b.create_block();
                    self.b.ins().brif(complete, release, &[], wait, &[]);
                    self.b.switch_to_block(release);
                    let released = self.b.ins().iconst(types::I64, RELEASED);
                    for &(frame, _) in &members {
                        self.b
                            .ins()
                            .store(frame_flags(), released, frame, SERVED_MARK_OFFSET);
                    }
                    self.b.ins().jump(go, &[]);
                } else {
                    self.b.ins().brif(complete, go, &[], wait, &[]);
                }
            }
            PointKind::NamedBarrier => {
                let unserved = self.b.create_block();
                self.b.ins().brif(served, go, &[], unserved, &[]);
                self.b.switch_to_block(unserved);
                let slot = state_slot(self)?;
                self.release_named_barrier(frames, stride, own, slot, go, wait);
            }
            PointKind::WorkGroupBarrier | PointKind::WorkGroupCollective => {
                let unserved = self.b.create_block();
                self.b.ins().brif(served, go, &[], unserved, &[]);
                self.b.switch_to_block(unserved);
                if kind == PointKind::WorkGroupCollective {
                    // Work-item 0 combines the contributions before the others read them.
                    let lid = self.wi.local_id;
                    let any = self.b.ins().bor(lid[0], lid[1]);
                    let any = self.b.ins().bor(any, lid[2]);
                    let first = self.b.ins().icmp_imm_s(IntCC::Equal, any, 0);
                    let scan = self.b.create_block();
                    self.b.ins().brif(first, scan, &[], wait, &[]);
                    self.b.switch_to_block(scan);
                }
                self.release_group_if_complete(frames, stride, me, go, wait);
            }
        }
        self.b.switch_to_block(wait);
        let yes = self.b.ins().iconst(types::I8, 1);
        self.b.def_var(pending, yes);
        self.b.ins().jump(item_done, &[]);
        self.b.switch_to_block(go);
        let moved = self.b.ins().iconst(types::I8, 1);
        self.b.def_var(rounds.progress, moved);
        Ok(())
    }

    /// Ends the current block for a work-item (frame `own`) waiting on a named barrier: counts
    /// the sub-groups whose every work-item waits, unserved, on the same barrier (the handle
    /// in `slot`, whose low 32 bits are the barrier's sub-group count); once there are that
    /// many, it releases the first that many of them in sub-group order (the barrier's phase:
    /// later arrivals wait for the next one) and goes to `go` if it was among them, else to
    /// `wait`.
    fn release_named_barrier(
        &mut self,
        frames: Value,
        stride: Value,
        own: Value,
        slot: i32,
        go: cranelift_codegen::ir::Block,
        wait: cranelift_codegen::ir::Block,
    ) {
        let handle = self.b.ins().load(types::I64, frame_flags(), own, slot);
        let needed = self.b.ins().band_imm_s(handle, 0xffff_ffff);
        let ls = self.wi.local_size;
        let sub_group_size = self.sub_group_size;
        let items = self.b.ins().imul(ls[0], ls[1]);
        let items = self.b.ins().imul(items, ls[2]);
        let groups = self.b.ins().iadd_imm_s(items, sub_group_size as i64 - 1);
        let groups = self
            .b
            .ins()
            .ushr_imm_s(groups, sub_group_size.trailing_zeros() as i64);

        // Whether sub-group `sg` waits whole on this barrier; its members' frames and whether
        // each exists.
        let complete = |t: &mut Self, sg: Value| -> (Value, Vec<(Value, Value)>) {
            let first = t.b.ins().imul_imm_s(sg, sub_group_size as i64);
            let mut all = t.b.ins().iconst(types::I8, 1);
            let mut members = Vec::new();
            for j in 0..sub_group_size {
                let idx = t.b.ins().iadd_imm_s(first, j as i64);
                let exists = t.b.ins().icmp(IntCC::UnsignedLessThan, idx, items);
                // A lane past the group's end reads the first member's frame instead.
                let idx = t.b.ins().select(exists, idx, first);
                let frame = t.b.ins().imul(idx, stride);
                let frame = t.b.ins().iadd(frames, frame);
                let state = t.b.ins().load(types::I32, frame_flags(), frame, 0);
                let kind = t.b.ins().band_imm_s(state, (1 << KIND_BITS) - 1);
                let named =
                    t.b.ins()
                        .icmp_imm_s(IntCC::Equal, kind, PointKind::NamedBarrier as i64);
                let theirs = t.b.ins().load(types::I64, frame_flags(), frame, slot);
                let same = t.b.ins().icmp(IntCC::Equal, theirs, handle);
                let mark =
                    t.b.ins()
                        .load(types::I64, frame_flags(), frame, SERVED_MARK_OFFSET);
                let unserved = t.b.ins().icmp_imm_s(IntCC::Equal, mark, 0);
                let here = t.b.ins().band(named, same);
                let here = t.b.ins().band(here, unserved);
                let absent = t.b.ins().bxor_imm_s(exists, 1);
                let ok = t.b.ins().bor(here, absent);
                all = t.b.ins().band(all, ok);
                members.push((frame, exists));
            }
            (all, members)
        };

        // First pass: how many sub-groups wait whole on the barrier.
        let count_head = self.b.create_block();
        self.b.append_block_param(count_head, types::I64);
        self.b.append_block_param(count_head, types::I64);
        let count_body = self.b.create_block();
        let counted = self.b.create_block();
        let zero = self.b.ins().iconst(types::I64, 0);
        self.b
            .ins()
            .jump(count_head, &[BlockArg::Value(zero), BlockArg::Value(zero)]);
        self.b.switch_to_block(count_head);
        let (sg, tally) = (
            self.b.block_params(count_head)[0],
            self.b.block_params(count_head)[1],
        );
        let more = self.b.ins().icmp(IntCC::UnsignedLessThan, sg, groups);
        self.b.ins().brif(more, count_body, &[], counted, &[]);
        self.b.switch_to_block(count_body);
        let (whole, _) = complete(self, sg);
        let add = self.b.ins().uextend(types::I64, whole);
        let tally = self.b.ins().iadd(tally, add);
        let next = self.b.ins().iadd_imm_s(sg, 1);
        self.b
            .ins()
            .jump(count_head, &[BlockArg::Value(next), BlockArg::Value(tally)]);

        // Not yet enough: wait. (A count of 0 is undefined; it releases nobody.)
        self.b.switch_to_block(counted);
        let tally = self.b.block_params(count_head)[1];
        let enough = self
            .b
            .ins()
            .icmp(IntCC::UnsignedGreaterThanOrEqual, tally, needed);
        let nonzero = self.b.ins().icmp_imm_s(IntCC::NotEqual, needed, 0);
        let enough = self.b.ins().band(enough, nonzero);
        let release_head = self.b.create_block();
        self.b.append_block_param(release_head, types::I64);
        self.b.append_block_param(release_head, types::I64);
        let release_body = self.b.create_block();
        let released = self.b.create_block();
        let zero = self.b.ins().iconst(types::I64, 0);
        self.b.ins().brif(
            enough,
            release_head,
            &[BlockArg::Value(zero), BlockArg::Value(zero)],
            wait,
            &[],
        );

        // Second pass: release the first `needed` whole sub-groups.
        self.b.switch_to_block(release_head);
        let (sg, done) = (
            self.b.block_params(release_head)[0],
            self.b.block_params(release_head)[1],
        );
        let more = self.b.ins().icmp(IntCC::UnsignedLessThan, sg, groups);
        let room = self.b.ins().icmp(IntCC::UnsignedLessThan, done, needed);
        let more = self.b.ins().band(more, room);
        self.b.ins().brif(more, release_body, &[], released, &[]);
        self.b.switch_to_block(release_body);
        let (whole, members) = complete(self, sg);
        let flag = self.b.ins().iconst(types::I64, RELEASED);
        for (frame, exists) in members {
            let take = self.b.ins().band(whole, exists);
            let old = self
                .b
                .ins()
                .load(types::I64, frame_flags(), frame, SERVED_MARK_OFFSET);
            let new = self.b.ins().select(take, flag, old);
            self.b
                .ins()
                .store(frame_flags(), new, frame, SERVED_MARK_OFFSET);
        }
        let add = self.b.ins().uextend(types::I64, whole);
        let done = self.b.ins().iadd(done, add);
        let next = self.b.ins().iadd_imm_s(sg, 1);
        self.b.ins().jump(
            release_head,
            &[BlockArg::Value(next), BlockArg::Value(done)],
        );

        // Through if this work-item's sub-group was among them.
        self.b.switch_to_block(released);
        let mark = self
            .b
            .ins()
            .load(types::I64, frame_flags(), own, SERVED_MARK_OFFSET);
        let mine = self.b.ins().icmp_imm_s(IntCC::NotEqual, mark, 0);
        self.b.ins().brif(mine, go, &[], wait, &[]);
    }

    /// Whether a member waiting with state `theirs` has arrived where state `me` waits:
    /// at the same point, or returned (a barrier it skipped is undefined behaviour; it must not
    /// hold the others forever).
    fn arrived(&mut self, theirs: Value, me: Value) -> Value {
        let same = self.b.ins().icmp(IntCC::Equal, theirs, me);
        let done = self.b.ins().icmp_imm_s(IntCC::Equal, theirs, RESUME_DONE);
        self.b.ins().bor(same, done)
    }

    /// The frame of each lane of this work-item's sub-group and whether that lane exists (the
    /// last sub-group may be short; a missing lane names this work-item's own frame).
    fn sub_group_members(&mut self, frames: Value, stride: Value) -> Vec<(Value, Value)> {
        let lane = self.lane();
        (0..self.sub_group_size)
            .map(|j| {
                let exists =
                    self.b
                        .ins()
                        .icmp_imm_s(IntCC::UnsignedGreaterThan, lane.count, j as i64);
                let member = self.b.ins().iadd_imm_s(lane.first, j as i64);
                let member = self.b.ins().select(exists, member, lane.linear);
                let frame = self.b.ins().imul(member, stride);
                (self.b.ins().iadd(frames, frame), exists)
            })
            .collect()
    }

    /// Whether a member of this work-item's sub-group is still on its way to a point before
    /// `me`: it waits at a lower-ranked non-uniform or yield point. Members waiting at barriers
    /// or uniform collectives wait for the others; they do not lag (in a loop, their lower rank
    /// can be the next iteration's).
    fn lagging_in_flight(&mut self, frames: Value, stride: Value, me: Value) -> Value {
        let members = self.sub_group_members(frames, stride);
        let mut lagging = self.b.ins().iconst(types::I8, 0);
        for (frame, exists) in members {
            let theirs = self.b.ins().load(types::I32, frame_flags(), frame, 0);
            let behind = self.b.ins().icmp(IntCC::UnsignedLessThan, theirs, me);
            let kind = self.b.ins().band_imm_s(theirs, (1 << KIND_BITS) - 1);
            let non_uniform =
                self.b
                    .ins()
                    .icmp_imm_s(IntCC::Equal, kind, PointKind::NonUniform as i64);
            let yielding = self
                .b
                .ins()
                .icmp_imm_s(IntCC::Equal, kind, PointKind::Yield as i64);
            let in_flight = self.b.ins().bor(non_uniform, yielding);
            let behind = self.b.ins().band(behind, in_flight);
            let behind = self.b.ins().band(behind, exists);
            lagging = self.b.ins().bor(lagging, behind);
        }
        lagging
    }

    /// Ends the current block: to `go` after marking every work-item of the group released
    /// when all of them wait with state `me` (or returned), else to `wait`. The scan stops at
    /// the first work-item still on its way.
    fn release_group_if_complete(
        &mut self,
        frames: Value,
        stride: Value,
        me: Value,
        go: cranelift_codegen::ir::Block,
        wait: cranelift_codegen::ir::Block,
    ) {
        let ls = self.wi.local_size;
        let items = self.b.ins().imul(ls[0], ls[1]);
        let items = self.b.ins().imul(items, ls[2]);
        let scan = self.b.create_block();
        self.b.append_block_param(scan, types::I64);
        let probe = self.b.create_block();
        let release = self.b.create_block();
        self.b.append_block_param(release, types::I64);
        let mark = self.b.create_block();
        let zero = self.b.ins().iconst(types::I64, 0);
        self.b.ins().jump(scan, &[BlockArg::Value(zero)]);

        self.b.switch_to_block(scan);
        let i = self.b.block_params(scan)[0];
        let scanned = self
            .b
            .ins()
            .icmp(IntCC::UnsignedGreaterThanOrEqual, i, items);
        let zero = self.b.ins().iconst(types::I64, 0);
        self.b
            .ins()
            .brif(scanned, release, &[BlockArg::Value(zero)], probe, &[]);

        self.b.switch_to_block(probe);
        let offset = self.b.ins().imul(i, stride);
        let frame = self.b.ins().iadd(frames, offset);
        let theirs = self.b.ins().load(types::I32, frame_flags(), frame, 0);
        let arrived = self.arrived(theirs, me);
        let next = self.b.ins().iadd_imm_s(i, 1);
        self.b
            .ins()
            .brif(arrived, scan, &[BlockArg::Value(next)], wait, &[]);

        // Everybody is here: each one passes when it resumes, in this round or the next.
        self.b.switch_to_block(release);
        let i = self.b.block_params(release)[0];
        let released = self
            .b
            .ins()
            .icmp(IntCC::UnsignedGreaterThanOrEqual, i, items);
        self.b.ins().brif(released, go, &[], mark, &[]);
        self.b.switch_to_block(mark);
        let offset = self.b.ins().imul(i, stride);
        let frame = self.b.ins().iadd(frames, offset);
        let flag = self.b.ins().iconst(types::I64, RELEASED);
        self.b
            .ins()
            .store(frame_flags(), flag, frame, SERVED_MARK_OFFSET);
        let next = self.b.ins().iadd_imm_s(i, 1);
        self.b.ins().jump(release, &[BlockArg::Value(next)]);
    }
}
