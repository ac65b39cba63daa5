//! Sub-groups: the sub-group built-in variables, `OpControlBarrier` with Subgroup execution
//! scope, the `OpGroup*` collectives with Subgroup scope, the `OpGroupNonUniform*`
//! instructions and the shuffles of SPV_INTEL_subgroups.
//!
//! **Size.** A sub-group is the kernel's required size (execution mode `SubgroupSize`, one of
//! abi.rs `SUB_GROUP_SIZES`) or else the environment's (4 for the driver, `SUB_GROUP_SIZE`) of
//! work-items with consecutive linear local ids (`Translator::sub_group_size`); the last
//! sub-group of a work-group holds the remainder. Four is the number of 32-bit lanes in a
//! 128-bit Cranelift vector, 8 and 16 those of AVX2 and AVX-512 vectors for the wide backend:
//! where the vectoriser's lanes are a whole number of sub-groups, kernels whose only barriers
//! are sub-group barriers run them in lockstep (kernel.rs `lockstep_lanes`); everywhere else
//! the exchange below works at any size. Ballots fit in the first `uint4` component (32 bits).
//!
//! **Execution.** Work-items of a group run one after another on one thread, so an instruction
//! that exchanges values between work-items is a barrier point (kernel.rs): each work-item
//! stores its contribution in its frame and stops. When the first work-item of a sub-group
//! resumes there, it becomes the *leader*: it collects the sub-group members waiting at the same
//! resume point (same frame state) — exactly the work-items that executed this
//! instance of the instruction, which is what non-uniform instructions combine and what lets
//! sub-groups diverge from each other — copies their contributions and the active mask into a
//! snapshot in its own frame, and marks each member "served by the leader". Every member, the
//! leader included, then computes its own result from the leader's snapshot. The snapshot stays
//! valid until the leader resumes at this point again, which is after every member it served has
//! read it (members resume in the same round as the leader, after it).
//!
//! **Reconvergence.** Which members wait together depends on the order they resume in: frame
//! states are program-order ranks (`PointOrder` in function.rs) and each round resumes only the
//! work-items waiting at the lowest rank any work-item waits at when it starts (kernel.rs), so
//! members that skipped an operation inside a branch wait after the branch for those that took
//! it, as SIMD lanes would, and nobody passes a sub-group barrier in a loop before its members
//! reach it. (Kernels with spin loops resume everyone at once; their gates decide instead.)
//! The lowest-ranked waiting work-items can always resume, so nothing waits forever and a
//! divergent (undefined) use cannot hang.
//!
//! Instructions that only look at their own operands (the ballot bit queries) need no exchange
//! and are computed inline.
//!
//! **Half.** Sums and products of halves are rounded to half at every step of the lane-order
//! fold (`fold_lanes`), as half arithmetic in that order would give.

use cranelift_codegen::ir::condcodes::{FloatCC, IntCC};
use cranelift_codegen::ir::{types, BlockArg, InstBuilder, Value};
use ferrocl_frontend::spirv::{BuiltIn, GroupOperation, Op, Word};
use ferrocl_frontend::Inst;
use ferrocl_frontend::Type;

use super::function::{
    err, frame_flags, inst_desc, required, BarrierState, PointKind, Translator, SERVED_MARK_OFFSET,
};
use super::group::Combine;
use super::values::{shape, Val};
use crate::error::BuildError;

/// SPIR-V Scope Subgroup.
pub(crate) const SCOPE_SUBGROUP: u64 = 3;

/// Non-uniform instructions that exchange values between the work-items of a sub-group (the
/// frontend counts them as barrier points).
pub(crate) fn is_non_uniform_exchange(op: Op) -> bool {
    ferrocl_frontend::synchronises_work_group(op) && !ferrocl_frontend::is_barrier_or_collective(op)
}

/// Non-uniform instructions computed from the work-item's own operands.
pub(crate) fn is_sub_group_local(op: Op) -> bool {
    matches!(
        op,
        Op::GroupNonUniformInverseBallot
            | Op::GroupNonUniformBallotBitExtract
            | Op::GroupNonUniformBallotBitCount
            | Op::GroupNonUniformBallotFindLSB
            | Op::GroupNonUniformBallotFindMSB
    )
}

/// Where the current work-item sits: its linear local id, its lane (sub-group local id), the
/// linear id of lane 0 and the number of work-items in its sub-group.
pub(crate) struct Lane {
    pub(crate) linear: Value,
    pub(crate) lane: Value,
    pub(crate) first: Value,
    pub(crate) count: Value,
}

/// The leader's snapshot as every member sees it after an exchange.
struct Exchange {
    /// Address of the snapshot: the active mask (u64) at 0, lane j's leaves at
    /// `8 + j * slot + 8 * leaf`.
    snapshot: Value,
    /// The frame of the leader, the work-item that took the snapshot (in its frame) and ran
    /// first after the point.
    leader_frame: Value,
    slot: i64,
    mask: Value,
    lane: Lane,
}

impl Exchange {
    fn lane_offset(&self, j: u64, leaf: usize) -> i32 {
        (8 + j as i64 * self.slot + 8 * leaf as i64) as i32
    }
}

impl Translator<'_, '_, '_> {
    pub(crate) fn require_sub_groups(&self, what: &str) -> Result<(), BuildError> {
        if self.options.sub_groups {
            Ok(())
        } else {
            err(format!(
                "error: {what} needs sub-groups, which are turned off on this device (FERROCL_SUBGROUPS=off)\n"
            ))
        }
    }

    pub(crate) fn lane(&mut self) -> Lane {
        let wi = self.wi;
        let row = self.b.ins().imul(wi.local_id[2], wi.local_size[1]);
        let row = self.b.ins().iadd(row, wi.local_id[1]);
        let linear = self.b.ins().imul(row, wi.local_size[0]);
        let linear = self.b.ins().iadd(linear, wi.local_id[0]);
        let lane = self
            .b
            .ins()
            .band_imm_s(linear, self.sub_group_size as i64 - 1);
        let first = self.b.ins().isub(linear, lane);
        let items = self.items(wi.local_size);
        let rest = self.b.ins().isub(items, first);
        let size = self.b.ins().iconst(types::I64, self.sub_group_size as i64);
        let count = self.b.ins().umin(rest, size);
        Lane {
            linear,
            lane,
            first,
            count,
        }
    }

    fn items(&mut self, size: [Value; 3]) -> Value {
        let n = self.b.ins().imul(size[0], size[1]);
        self.b.ins().imul(n, size[2])
    }

    /// ceil(n / the sub-group size).
    fn sub_groups_in(&mut self, n: Value) -> Value {
        let n = self.b.ins().iadd_imm_s(n, self.sub_group_size as i64 - 1);
        self.b
            .ins()
            .ushr_imm_s(n, self.sub_group_size.trailing_zeros() as i64)
    }

    /// The value (i64) of a sub-group built-in variable, or `None` for other built-ins.
    pub(crate) fn sub_group_builtin(
        &mut self,
        builtin: BuiltIn,
    ) -> Result<Option<Value>, BuildError> {
        let wi = self.wi;
        let v = match builtin {
            BuiltIn::SubgroupId
            | BuiltIn::SubgroupLocalInvocationId
            | BuiltIn::SubgroupSize
            | BuiltIn::NumSubgroups
            | BuiltIn::NumEnqueuedSubgroups
            | BuiltIn::SubgroupMaxSize => {
                self.require_sub_groups(&format!("built-in variable {builtin:?}"))?;
                match builtin {
                    BuiltIn::SubgroupId => {
                        let l = self.lane();
                        self.b
                            .ins()
                            .ushr_imm_s(l.linear, self.sub_group_size.trailing_zeros() as i64)
                    }
                    BuiltIn::SubgroupLocalInvocationId => self.lane().lane,
                    BuiltIn::SubgroupSize => self.lane().count,
                    BuiltIn::NumSubgroups => {
                        let n = self.items(wi.local_size);
                        self.sub_groups_in(n)
                    }
                    BuiltIn::NumEnqueuedSubgroups => {
                        let n = self.items(wi.enqueued_local_size);
                        self.sub_groups_in(n)
                    }
                    _ => {
                        // The largest sub-group of the launch: a full one unless the enqueued
                        // work-group is smaller than that.
                        let n = self.items(wi.enqueued_local_size);
                        let size = self.b.ins().iconst(types::I64, self.sub_group_size as i64);
                        self.b.ins().umin(n, size)
                    }
                }
            }
            _ => return Ok(None),
        };
        Ok(Some(v))
    }

    /// The four u32 components of a sub-group mask built-in (`SubgroupEqMask` & co.), or `None`.
    pub(crate) fn sub_group_mask_builtin(
        &mut self,
        builtin: BuiltIn,
    ) -> Result<Option<[Value; 4]>, BuildError> {
        if !matches!(
            builtin,
            BuiltIn::SubgroupEqMask
                | BuiltIn::SubgroupGeMask
                | BuiltIn::SubgroupGtMask
                | BuiltIn::SubgroupLeMask
                | BuiltIn::SubgroupLtMask
        ) {
            return Ok(None);
        }
        self.require_sub_groups(&format!("built-in variable {builtin:?}"))?;
        let l = self.lane();
        let one = self.b.ins().iconst(types::I64, 1);
        let eq = self.b.ins().ishl(one, l.lane);
        let lt = self.b.ins().iadd_imm_s(eq, -1);
        let le = self.b.ins().bor(lt, eq);
        // Ge and Gt reach up to the largest sub-group size of the dispatch (the Khronos CTS
        // expects those bits in a smaller last sub-group too), nothing beyond.
        let enqueued = self.items(self.wi.enqueued_local_size);
        let size = self.b.ins().iconst(types::I64, self.sub_group_size as i64);
        let max_size = self.b.ins().umin(enqueued, size);
        let all = self.b.ins().ishl(one, max_size);
        let all = self.b.ins().iadd_imm_s(all, -1);
        let mask = match builtin {
            BuiltIn::SubgroupEqMask => eq,
            BuiltIn::SubgroupLtMask => lt,
            BuiltIn::SubgroupLeMask => le,
            BuiltIn::SubgroupGeMask => self.b.ins().band_not(all, lt),
            _ => self.b.ins().band_not(all, le),
        };
        let low = self.b.ins().ireduce(types::I32, mask);
        let zero = self.b.ins().iconst(types::I32, 0);
        Ok(Some([low, zero, zero, zero]))
    }

    /// `OpControlBarrier`: a barrier point for work-group and sub-group execution scope alike
    /// (stopping the whole group is a valid sub-group barrier: members of a sub-group resume
    /// only after all of them arrived).
    pub(crate) fn control_barrier(&mut self, inst: Inst<'_>) -> Result<(), BuildError> {
        let execution = inst.control_barrier()?.execution;
        let kind = if self.constant_index(inst, execution)? == SCOPE_SUBGROUP {
            self.require_sub_groups("OpControlBarrier with Subgroup execution scope")?;
            self.points.sub_group_points = true;
            PointKind::SubGroupBarrier
        } else {
            PointKind::WorkGroupBarrier
        };
        self.barrier_point(kind)?;
        Ok(())
    }

    /// `OpNamedBarrierInitialize` (cl_khr_subgroup_named_barrier): the barrier's handle, made
    /// of the instruction (which names the object: the OpenCL C++ spec allows constructing
    /// named barriers in kernels only, and constructing one again is the same barrier) and
    /// its sub-group count. Nothing is shared: the gates of `OpMemoryNamedBarrier` compare
    /// the handles waiting work-items keep in their frames, so initialising needs no
    /// synchronisation.
    pub(crate) fn named_barrier_initialize(&mut self, inst: Inst<'_>) -> Result<(), BuildError> {
        self.require_sub_groups("OpNamedBarrierInitialize")?;
        let id = inst
            .result_id()
            .ok_or_else(|| BuildError::new("error: OpNamedBarrierInitialize without a result\n"))?;
        let count = self.scalar(inst.unary()?.value)?;
        let count = self.resize_int(count, types::I64, false);
        let handle = self.b.ins().bor_imm_s(count, i64::from(id) << 32);
        self.define(inst, Val::S(handle))
    }

    /// `OpMemoryNamedBarrier`: the work-item keeps the barrier's handle in its frame and stops;
    /// its gate lets it through once the barrier's count of whole sub-groups wait on it
    /// (gates.rs). Work-items of a group run on one thread, so the memory order needs nothing
    /// more.
    pub(crate) fn memory_named_barrier(&mut self, inst: Inst<'_>) -> Result<(), BuildError> {
        self.require_sub_groups("OpMemoryNamedBarrier")?;
        let handle = self.scalar(inst.memory_named_barrier()?.barrier)?;
        let (own, slot) = match &self.barrier {
            Some(BarrierState {
                frame_base,
                named_barrier_slot: Some(slot),
                ..
            }) => (*frame_base, *slot),
            _ => {
                return err(
                    "internal: OpMemoryNamedBarrier in a kernel without named-barrier frames\n",
                )
            }
        };
        self.b.ins().store(frame_flags(), handle, own, slot);
        self.barrier_point(PointKind::NamedBarrier)?;
        Ok(())
    }

    /// Stops at a barrier point of kind `kind` (a uniform collective or a non-uniform
    /// instruction) with `leaves` as this work-item's contribution; on resume, the leader's
    /// snapshot (see the module header).
    fn exchange(&mut self, leaves: &[Value], kind: PointKind) -> Result<Exchange, BuildError> {
        let slot = 8 * leaves.len() as u64;
        let contribution = self.frame_alloc(slot.max(8), 8)?;
        let served = SERVED_MARK_OFFSET;
        let snapshot = self.frame_alloc(8 + self.sub_group_size * slot, 8)?;
        let (own, frames, stride) = {
            let state = self.barrier.as_ref().ok_or_else(|| {
                BuildError::new("internal: sub-group exchange outside a barrier kernel\n")
            })?;
            (state.frame_base, state.frames, state.frame_stride)
        };
        for (i, leaf) in leaves.iter().enumerate() {
            self.b.ins().store(
                frame_flags(),
                *leaf,
                own,
                (contribution + 8 * i as u64) as i32,
            );
        }
        // The barrier point clears the served mark: nobody can serve this work-item before it
        // stops (leaders look for the state it sets).
        let point = self.barrier_point(kind)?;
        self.points.sub_group_points = true;
        let point = self.point_value(point);

        let lane = self.lane();
        let mark = self.b.ins().load(types::I64, frame_flags(), own, served);
        let was_served = self.b.ins().icmp_imm_s(IntCC::NotEqual, mark, 0);
        let follow = self.b.create_block();
        let lead = self.b.create_block();
        let ready = self.b.create_block();
        self.b.append_block_param(ready, types::I64);
        self.b.ins().brif(was_served, follow, &[], lead, &[]);

        self.b.switch_to_block(follow);
        let zero = self.b.ins().iconst(types::I64, 0);
        self.b.ins().store(frame_flags(), zero, own, served);
        let leader = self.b.ins().iadd_imm_s(mark, -1);
        let leader_frame = self.b.ins().imul(leader, stride);
        let leader_frame = self.b.ins().iadd(frames, leader_frame);
        let theirs = self.b.ins().iadd_imm_s(leader_frame, snapshot as i64);
        self.b.ins().jump(ready, &[BlockArg::Value(theirs)]);

        self.b.switch_to_block(lead);
        let mine = self.b.ins().iadd_imm_s(own, snapshot as i64);
        let my_mark = self.b.ins().iadd_imm_s(lane.linear, 1);
        let mut mask = self.b.ins().iconst(types::I64, 0);
        for j in 0..self.sub_group_size {
            let exists = self
                .b
                .ins()
                .icmp_imm_s(IntCC::UnsignedGreaterThan, lane.count, j as i64);
            let member = self.b.ins().iadd_imm_s(lane.first, j as i64);
            // Lanes past the end of the group read the leader's own frame instead.
            let member = self.b.ins().select(exists, member, lane.linear);
            let frame = self.b.ins().imul(member, stride);
            let frame = self.b.ins().iadd(frames, frame);
            let state = self.b.ins().load(types::I32, frame_flags(), frame, 0);
            let waiting = self.b.ins().icmp(IntCC::Equal, state, point);
            let active = self.b.ins().band(exists, waiting);
            let bit = self.b.ins().uextend(types::I64, active);
            let bit = self.b.ins().ishl_imm_s(bit, j as i64);
            mask = self.b.ins().bor(mask, bit);
            for i in 0..leaves.len() {
                let v = self.b.ins().load(
                    types::I64,
                    frame_flags(),
                    frame,
                    (contribution + 8 * i as u64) as i32,
                );
                self.b
                    .ins()
                    .store(frame_flags(), v, mine, (8 + j * slot + 8 * i as u64) as i32);
            }
            let other = self
                .b
                .ins()
                .icmp_imm_s(IntCC::NotEqual, lane.lane, j as i64);
            let mark_it = self.b.ins().band(active, other);
            let old = self.b.ins().load(types::I64, frame_flags(), frame, served);
            let new = self.b.ins().select(mark_it, my_mark, old);
            self.b.ins().store(frame_flags(), new, frame, served);
        }
        self.b.ins().store(frame_flags(), mask, mine, 0);
        self.b.ins().jump(ready, &[BlockArg::Value(mine)]);

        self.b.switch_to_block(ready);
        let snapshot_base = self.b.block_params(ready)[0];
        let mask = self
            .b
            .ins()
            .load(types::I64, frame_flags(), snapshot_base, 0);
        let leader_frame = self.b.ins().iadd_imm_s(snapshot_base, -(snapshot as i64));
        Ok(Exchange {
            snapshot: snapshot_base,
            leader_frame,
            slot: slot as i64,
            mask,
            lane,
        })
    }

    /// A sub-group point of `kind` where nothing is exchanged but the leader: the frame of the
    /// sub-group's leader (which resumes first, before the others it serves) and this
    /// work-item's own frame after the point.
    pub(crate) fn sub_group_point(
        &mut self,
        kind: PointKind,
    ) -> Result<(Value, Value), BuildError> {
        let ex = self.exchange(&[], kind)?;
        let own = self.barrier.as_ref().map(|s| s.frame_base).ok_or_else(|| {
            BuildError::new("internal: sub-group point outside a barrier kernel\n")
        })?;
        Ok((ex.leader_frame, own))
    }

    /// Leaf `leaf` (of type `t`) of lane `j`'s contribution.
    fn lane_value(&mut self, ex: &Exchange, j: u64, leaf: usize, t: types::Type) -> Value {
        self.b
            .ins()
            .load(t, frame_flags(), ex.snapshot, ex.lane_offset(j, leaf))
    }

    /// Leaf `leaf` of the contribution of the dynamic lane `index` (clamped into the snapshot:
    /// out-of-range lanes give an undefined value, never a stray read).
    fn lane_value_at(&mut self, ex: &Exchange, index: Value, leaf: usize, t: types::Type) -> Value {
        let index = self.resize_int(index, types::I64, false);
        let last = self
            .b
            .ins()
            .iconst(types::I64, self.sub_group_size as i64 - 1);
        let index = self.b.ins().umin(index, last);
        let offset = self.b.ins().imul_imm_s(index, ex.slot);
        let addr = self.b.ins().iadd(ex.snapshot, offset);
        self.b
            .ins()
            .load(t, frame_flags(), addr, (8 + 8 * leaf as i64) as i32)
    }

    /// Whether lane `j` takes part (bit j of the mask), as an i8 condition.
    fn lane_active(&mut self, ex: &Exchange, j: u64) -> Value {
        let bit = self.b.ins().band_imm_s(ex.mask, 1i64 << j);
        self.b.ins().icmp_imm_s(IntCC::NotEqual, bit, 0)
    }

    /// Reduce, inclusive or exclusive scan, or clustered reduce of leaf 0 over the active
    /// lanes, in lane order. The fold starts from the first value taken, not from the identity
    /// (`0.0 + -0.0` would lose the sign of a lone `-0.0`); the identity is the result only when
    /// no lane is taken (an exclusive scan's first lane).
    ///
    /// On halves (`half`), every sum and product is rounded to half as it is formed, so a
    /// result is exactly what half arithmetic gives for the lane order
    /// `((x0 ∘ x1) ∘ x2) ∘ x3` — the order the spec leaves unspecified, fixed here so that a scan
    /// lane is the reduction of the lanes up to it. The f32 sum or product of two halves
    /// rounded to half is the correctly rounded half operation (f32 has at least 2·11+2
    /// significand bits, half.rs), so each step overflows to infinity, underflows and rounds
    /// where half arithmetic does. Minimum and maximum return one of their operands, already a
    /// half.
    fn fold_lanes(
        &mut self,
        ex: &Exchange,
        combine: Combine,
        group_op: GroupOperation,
        cluster: u64,
        (t, half): (types::Type, bool),
        identity: Value,
    ) -> Result<Value, BuildError> {
        let round = half && matches!(combine, Combine::FAdd | Combine::FMul);
        let mode = self.default_half_rounding();
        let mut acc = identity;
        let mut have = self.b.ins().iconst(types::I8, 0);
        let cluster_of_mine = self
            .b
            .ins()
            .ushr_imm_s(ex.lane.lane, cluster.trailing_zeros() as i64);
        for j in 0..self.sub_group_size {
            let mut take = self.lane_active(ex, j);
            let cond = match group_op {
                GroupOperation::InclusiveScan => Some(self.b.ins().icmp_imm_s(
                    IntCC::UnsignedGreaterThanOrEqual,
                    ex.lane.lane,
                    j as i64,
                )),
                GroupOperation::ExclusiveScan => Some(self.b.ins().icmp_imm_s(
                    IntCC::UnsignedGreaterThan,
                    ex.lane.lane,
                    j as i64,
                )),
                GroupOperation::ClusteredReduce => Some(self.b.ins().icmp_imm_s(
                    IntCC::Equal,
                    cluster_of_mine,
                    (j / cluster) as i64,
                )),
                _ => None,
            };
            if let Some(c) = cond {
                take = self.b.ins().band(take, c);
            }
            let v = self.lane_value(ex, j, 0, t);
            let combined = self.combine(combine, acc, v);
            let combined = if round {
                self.round_to_half(combined, mode)?
            } else {
                combined
            };
            let next = self.b.ins().select(have, combined, v);
            acc = self.b.ins().select(take, next, acc);
            have = self.b.ins().bor(have, take);
        }
        Ok(acc)
    }

    /// `OpGroup*` with Subgroup execution scope (the core collectives and those of
    /// SPV_KHR_uniform_group_instructions, which cl_khr_subgroups lets take Subgroup scope).
    pub(crate) fn sub_group_collective(&mut self, inst: Inst<'_>) -> Result<(), BuildError> {
        let op = inst.opcode();
        self.require_sub_groups(&format!("Op{op:?} with Subgroup execution scope"))?;
        let (group_op, g) = super::group::group_operation(inst)?;
        let value = self.value(required(inst, g.value, "value")?)?;
        let leaves = value.flat();
        if op == Op::GroupBroadcast {
            let ex = self.exchange(&leaves, PointKind::SubGroupCollective)?;
            let index = self.scalar(required(inst, g.argument, "local id")?)?;
            return self.define_from_lane(inst, &ex, &leaves, index);
        }
        let [x] = leaves[..] else {
            return err(format!(
                "error: {}: only scalar values can be combined\n",
                inst_desc(inst)
            ));
        };
        self.check_combined_type(inst)?;
        let t = self.ty_of(x);
        let Some(combine) = super::group::collective_combine(op) else {
            return err(format!(
                "internal: Op{op:?} is not a sub-group collective\n"
            ));
        };
        let ex = self.exchange(&leaves, PointKind::SubGroupCollective)?;
        let ty = self.result_type(inst)?;
        let identity = self.collective_identity(combine, ty, t);
        let half = self.is_half(ty);
        let r = self.fold_lanes(
            &ex,
            combine,
            group_op,
            self.sub_group_size,
            (t, half),
            identity,
        )?;
        self.define(inst, Val::S(r))
    }

    /// The result type of a combining instruction must be a scalar of the kind its opcode
    /// works on (the operand has the result type; the frontend checks that).
    fn check_combined_type(&self, inst: Inst<'_>) -> Result<(), BuildError> {
        use Op::*;
        let ty = self.result_type(inst)?;
        let found = self.m.ty(ty);
        let ok = match inst.opcode() {
            GroupAll
            | GroupAny
            | GroupLogicalAndKHR
            | GroupLogicalOrKHR
            | GroupLogicalXorKHR
            | GroupNonUniformAll
            | GroupNonUniformAny
            | GroupNonUniformLogicalAnd
            | GroupNonUniformLogicalOr
            | GroupNonUniformLogicalXor => matches!(found, Some(Type::Bool)),
            GroupFAdd | GroupFMin | GroupFMax | GroupFMulKHR | GroupNonUniformFAdd
            | GroupNonUniformFMul | GroupNonUniformFMin | GroupNonUniformFMax => {
                matches!(found, Some(Type::Float { .. }))
            }
            _ => matches!(found, Some(Type::Int { .. })),
        };
        if ok {
            Ok(())
        } else {
            err(format!(
                "error: {}: result type %{ty} ({found:?}) is not the scalar type this instruction combines\n",
                inst_desc(inst)
            ))
        }
    }

    /// Defines `inst` as the contribution of lane `index` (a broadcast or shuffle).
    fn define_from_lane(
        &mut self,
        inst: Inst<'_>,
        ex: &Exchange,
        leaves: &[Value],
        index: Value,
    ) -> Result<(), BuildError> {
        let mut out = Vec::with_capacity(leaves.len());
        for (i, leaf) in leaves.iter().enumerate() {
            let t = self.ty_of(*leaf);
            out.push(self.lane_value_at(ex, index, i, t));
        }
        let ty = self.result_type(inst)?;
        let v = shape(self.m, ty)?.assemble(&mut out.into_iter())?;
        self.define(inst, v)
    }

    /// The lowest active lane (there is always one: the work-item itself).
    fn first_active(&mut self, ex: &Exchange) -> Value {
        self.b.ins().ctz(ex.mask)
    }

    /// `OpGroupNonUniform*` instructions that exchange values.
    pub(crate) fn sub_group_non_uniform(&mut self, inst: Inst<'_>) -> Result<(), BuildError> {
        let op = inst.opcode();
        self.require_sub_groups(&format!("Op{op:?}"))?;
        let g = inst.group_op()?;
        let scope = self.constant_index(inst, g.scope)?;
        if scope != SCOPE_SUBGROUP {
            return err(format!(
                "error: {}: execution scope {scope} is not supported (only Subgroup)\n",
                inst_desc(inst)
            ));
        }
        let value = || required(inst, g.value, "value");
        let argument = || required(inst, g.argument, "second operand");
        match op {
            Op::GroupNonUniformElect => {
                let ex = self.exchange(&[], PointKind::NonUniform)?;
                let first = self.first_active(&ex);
                let is = self.b.ins().icmp(IntCC::Equal, first, ex.lane.lane);
                self.define(inst, Val::S(is))
            }
            Op::GroupNonUniformAll | Op::GroupNonUniformAny => {
                self.check_combined_type(inst)?;
                let p = self.scalar(value()?)?;
                let ex = self.exchange(&[p], PointKind::NonUniform)?;
                let (combine, identity) = if op == Op::GroupNonUniformAll {
                    (Combine::And, 1)
                } else {
                    (Combine::Or, 0)
                };
                let identity = self.b.ins().iconst(types::I8, identity);
                let r = self.fold_lanes(
                    &ex,
                    combine,
                    GroupOperation::Reduce,
                    self.sub_group_size,
                    (types::I8, false),
                    identity,
                )?;
                self.define(inst, Val::S(r))
            }
            Op::GroupNonUniformAllEqual => {
                let x = self.scalar(value()?)?;
                let t = self.ty_of(x);
                let ex = self.exchange(&[x], PointKind::NonUniform)?;
                let first = self.first_active(&ex);
                let reference = self.lane_value_at(&ex, first, 0, t);
                let mut all = self.b.ins().iconst(types::I8, 1);
                for j in 0..self.sub_group_size {
                    let v = self.lane_value(&ex, j, 0, t);
                    let same = if t.is_float() {
                        self.b.ins().fcmp(FloatCC::Equal, v, reference)
                    } else {
                        self.b.ins().icmp(IntCC::Equal, v, reference)
                    };
                    let inactive = self.lane_active(&ex, j);
                    let inactive = self.b.ins().bxor_imm_s(inactive, 1);
                    let ok = self.b.ins().bor(same, inactive);
                    all = self.b.ins().band(all, ok);
                }
                self.define(inst, Val::S(all))
            }
            Op::GroupNonUniformBroadcast | Op::GroupNonUniformShuffle => {
                let leaves = self.value(value()?)?.flat();
                let ex = self.exchange(&leaves, PointKind::NonUniform)?;
                let index = self.scalar(argument()?)?;
                self.define_from_lane(inst, &ex, &leaves, index)
            }
            Op::GroupNonUniformBroadcastFirst => {
                let leaves = self.value(value()?)?.flat();
                let ex = self.exchange(&leaves, PointKind::NonUniform)?;
                let first = self.first_active(&ex);
                self.define_from_lane(inst, &ex, &leaves, first)
            }
            Op::GroupNonUniformShuffleXor
            | Op::GroupNonUniformShuffleUp
            | Op::GroupNonUniformShuffleDown => {
                let leaves = self.value(value()?)?.flat();
                let ex = self.exchange(&leaves, PointKind::NonUniform)?;
                let operand = self.scalar(argument()?)?;
                let operand = self.resize_int(operand, types::I64, false);
                let index = match op {
                    Op::GroupNonUniformShuffleXor => self.b.ins().bxor(ex.lane.lane, operand),
                    Op::GroupNonUniformShuffleUp => self.b.ins().isub(ex.lane.lane, operand),
                    _ => self.b.ins().iadd(ex.lane.lane, operand),
                };
                self.define_from_lane(inst, &ex, &leaves, index)
            }
            Op::GroupNonUniformRotateKHR => {
                let leaves = self.value(value()?)?.flat();
                let cluster = match g.cluster_size {
                    Some(c) => self.cluster_size(inst, c)?,
                    None => self.sub_group_size,
                };
                let ex = self.exchange(&leaves, PointKind::NonUniform)?;
                let delta = self.scalar(argument()?)?;
                // ((lane + delta) mod cluster) within the lane's cluster.
                let delta = self.resize_int(delta, types::I64, false);
                let moved = self.b.ins().iadd(ex.lane.lane, delta);
                let within = self.b.ins().band_imm_s(moved, cluster as i64 - 1);
                let start = self.b.ins().band_imm_s(ex.lane.lane, !(cluster as i64 - 1));
                let index = self.b.ins().bor(start, within);
                self.define_from_lane(inst, &ex, &leaves, index)
            }
            Op::GroupNonUniformBallot => {
                let p = self.scalar(value()?)?;
                let ex = self.exchange(&[p], PointKind::NonUniform)?;
                let mut bits = self.b.ins().iconst(types::I32, 0);
                for j in 0..self.sub_group_size {
                    let active = self.lane_active(&ex, j);
                    let v = self.lane_value(&ex, j, 0, types::I8);
                    let set = self.b.ins().icmp_imm_s(IntCC::NotEqual, v, 0);
                    let set = self.b.ins().band(set, active);
                    let bit = self.b.ins().uextend(types::I32, set);
                    let bit = self.b.ins().ishl_imm_s(bit, j as i64);
                    bits = self.b.ins().bor(bits, bit);
                }
                let zero = self.b.ins().iconst(types::I32, 0);
                self.define(
                    inst,
                    Val::C(vec![Val::S(bits), Val::S(zero), Val::S(zero), Val::S(zero)]),
                )
            }
            _ => self.sub_group_arithmetic(inst),
        }
    }

    /// SPV_INTEL_subgroups shuffles (cl_intel_subgroups' `intel_sub_group_shuffle*`): like the
    /// non-uniform shuffles, the work-items that execute one together exchange their data.
    /// Up and down take two data operands and index the pair as one sequence of twice the
    /// largest sub-group size of the dispatch (`SubgroupMaxSize`, which is what these
    /// instructions count in): down reads `Current` of lane `id + delta` below that size and
    /// `Next` of lane `id + delta - max` above it; up reads `Current` of lane `id - delta` from
    /// zero on and `Previous` of lane `id - delta + max` below zero. Out-of-range indices give
    /// an undefined value, never a stray read (`lane_value_at` clamps).
    pub(crate) fn intel_shuffle(&mut self, inst: Inst<'_>) -> Result<(), BuildError> {
        let op = inst.opcode();
        self.require_sub_groups(&format!("Op{op:?}"))?;
        let shuffle = inst.intel_shuffle()?;
        let two = shuffle.second.is_some();
        let first = self.value(shuffle.data)?.flat();
        let mut leaves = first.clone();
        if let Some(second) = shuffle.second {
            leaves.extend(self.value(second)?.flat());
        }
        let ex = self.exchange(&leaves, PointKind::NonUniform)?;
        let operand = self.scalar(shuffle.operand)?;
        let operand = self.resize_int(operand, types::I64, false);
        if !two {
            let index = if op == Op::SubgroupShuffleXorINTEL {
                self.b.ins().bxor(ex.lane.lane, operand)
            } else {
                operand
            };
            return self.define_from_lane(inst, &ex, &first, index);
        }
        let enqueued = self.items(self.wi.enqueued_local_size);
        let size = self.b.ins().iconst(types::I64, self.sub_group_size as i64);
        let max = self.b.ins().umin(enqueued, size);
        // The lane in the pair's sequence, and whether it falls in the second operand.
        let (index, second) = if op == Op::SubgroupShuffleDownINTEL {
            let at = self.b.ins().iadd(ex.lane.lane, operand);
            let second = self
                .b
                .ins()
                .icmp(IntCC::UnsignedGreaterThanOrEqual, at, max);
            let wrapped = self.b.ins().isub(at, max);
            (self.b.ins().select(second, wrapped, at), second)
        } else {
            let at = self.b.ins().isub(ex.lane.lane, operand);
            let below = self.b.ins().icmp_imm_s(IntCC::SignedLessThan, at, 0);
            let wrapped = self.b.ins().iadd(at, max);
            // Below zero: the first operand (`Previous`).
            let second = self.b.ins().bxor_imm_s(below, 1);
            (self.b.ins().select(below, wrapped, at), second)
        };
        let n = first.len();
        let mut out = Vec::with_capacity(n);
        for (i, leaf) in first.iter().enumerate() {
            let t = self.ty_of(*leaf);
            let a = self.lane_value_at(&ex, index, i, t);
            let b = self.lane_value_at(&ex, index, n + i, t);
            out.push(self.b.ins().select(second, b, a));
        }
        let ty = self.result_type(inst)?;
        let v = shape(self.m, ty)?.assemble(&mut out.into_iter())?;
        self.define(inst, v)
    }

    /// A constant ClusterSize operand: a power of two. One larger than the sub-group is
    /// undefined behaviour only when executed (SPIR-V: "If ClusterSize is greater than the size
    /// of the group, executing this instruction results in undefined behavior"), so it builds —
    /// programs pick the cluster size at run time among constants (the CTS does) — and acts as
    /// the whole sub-group.
    fn cluster_size(&self, inst: Inst<'_>, cluster_size: Word) -> Result<u64, BuildError> {
        let c = self.constant_index(inst, cluster_size)?;
        if !c.is_power_of_two() {
            return err(format!(
                "error: {}: ClusterSize {c} must be a power of two\n",
                inst_desc(inst)
            ));
        }
        Ok(c.min(self.sub_group_size))
    }

    /// `OpGroupNonUniform{IAdd,FAdd,IMul,FMul,SMin,UMin,FMin,SMax,UMax,FMax,Bitwise*,Logical*}`.
    fn sub_group_arithmetic(&mut self, inst: Inst<'_>) -> Result<(), BuildError> {
        let op = inst.opcode();
        let combine = match op {
            Op::GroupNonUniformIAdd => Combine::IAdd,
            Op::GroupNonUniformFAdd => Combine::FAdd,
            Op::GroupNonUniformIMul => Combine::IMul,
            Op::GroupNonUniformFMul => Combine::FMul,
            Op::GroupNonUniformSMin => Combine::SMin,
            Op::GroupNonUniformUMin => Combine::UMin,
            Op::GroupNonUniformFMin => Combine::FMin,
            Op::GroupNonUniformSMax => Combine::SMax,
            Op::GroupNonUniformUMax => Combine::UMax,
            Op::GroupNonUniformFMax => Combine::FMax,
            Op::GroupNonUniformBitwiseAnd | Op::GroupNonUniformLogicalAnd => Combine::And,
            Op::GroupNonUniformBitwiseOr | Op::GroupNonUniformLogicalOr => Combine::Or,
            Op::GroupNonUniformBitwiseXor | Op::GroupNonUniformLogicalXor => Combine::Xor,
            _ => {
                return err(format!(
                    "error: instruction Op{op:?} is not supported by Ferrocl's codegen yet\n"
                ))
            }
        };
        let g = inst.group_op()?;
        let Some(group_op) = g.operation else {
            return err(format!(
                "error: {} without a group operation\n",
                inst_desc(inst)
            ));
        };
        let cluster = match group_op {
            GroupOperation::Reduce
            | GroupOperation::InclusiveScan
            | GroupOperation::ExclusiveScan => {
                if g.cluster_size.is_some() {
                    return err(format!(
                        "error: {}: ClusterSize is only allowed with ClusteredReduce\n",
                        inst_desc(inst)
                    ));
                }
                self.sub_group_size
            }
            GroupOperation::ClusteredReduce => {
                self.cluster_size(inst, required(inst, g.cluster_size, "ClusterSize")?)?
            }
            other => {
                return err(format!(
                    "error: {}: group operation {other:?} is not supported\n",
                    inst_desc(inst)
                ))
            }
        };
        self.check_combined_type(inst)?;
        let x = self.scalar(required(inst, g.value, "value")?)?;
        let t = self.ty_of(x);
        let ex = self.exchange(&[x], PointKind::NonUniform)?;
        let logical = matches!(
            op,
            Op::GroupNonUniformLogicalAnd
                | Op::GroupNonUniformLogicalOr
                | Op::GroupNonUniformLogicalXor
        );
        // Booleans are 0 or 1: the identity of logical and is 1, not all ones.
        let identity = if logical && combine == Combine::And {
            self.b.ins().iconst(t, 1)
        } else {
            self.identity(combine, t)
        };
        let half = self.is_half(self.result_type(inst)?);
        let r = self.fold_lanes(&ex, combine, group_op, cluster, (t, half), identity)?;
        self.define(inst, Val::S(r))
    }

    /// The ballot queries: `OpGroupNonUniformInverseBallot`, `BallotBitExtract`,
    /// `BallotBitCount`, `BallotFindLSB`, `BallotFindMSB`. Only bits below the largest sub-group
    /// size of the dispatch count (as the Khronos CTS expects, also in a smaller last
    /// sub-group); with sub-groups of at most 32 work-items those are in the first component.
    pub(crate) fn sub_group_local(&mut self, inst: Inst<'_>) -> Result<(), BuildError> {
        let op = inst.opcode();
        self.require_sub_groups(&format!("Op{op:?}"))?;
        let g = inst.group_op()?;
        let scope = self.constant_index(inst, g.scope)?;
        if scope != SCOPE_SUBGROUP {
            return err(format!(
                "error: {}: execution scope {scope} is not supported (only Subgroup)\n",
                inst_desc(inst)
            ));
        }
        let ballot = self.value(required(inst, g.value, "ballot")?)?.flat();
        let Some(&low) = ballot.first() else {
            return err(format!(
                "error: {}: the ballot must be a uint4\n",
                inst_desc(inst)
            ));
        };
        let low = self.resize_int(low, types::I64, false);
        let lane = self.lane();
        let one = self.b.ins().iconst(types::I64, 1);
        let enqueued = self.items(self.wi.enqueued_local_size);
        let size = self.b.ins().iconst(types::I64, self.sub_group_size as i64);
        let max_size = self.b.ins().umin(enqueued, size);
        let members = self.b.ins().ishl(one, max_size);
        let members = self.b.ins().iadd_imm_s(members, -1);
        let bits = self.b.ins().band(low, members);
        let r = match op {
            Op::GroupNonUniformInverseBallot => {
                let b = self.b.ins().ushr(bits, lane.lane);
                let b = self.b.ins().band_imm_s(b, 1);
                self.b.ins().icmp_imm_s(IntCC::NotEqual, b, 0)
            }
            Op::GroupNonUniformBallotBitExtract => {
                let index = self.scalar(required(inst, g.argument, "index")?)?;
                let index = self.resize_int(index, types::I64, false);
                // Bits past the first component are never set in a sub-group of this size.
                let in_range = self.b.ins().icmp_imm_s(IntCC::UnsignedLessThan, index, 32);
                let low32 = self.b.ins().band_imm_s(low, 0xffff_ffff);
                let shift = self.b.ins().band_imm_s(index, 31);
                let b = self.b.ins().ushr(low32, shift);
                let b = self.b.ins().band_imm_s(b, 1);
                let set = self.b.ins().icmp_imm_s(IntCC::NotEqual, b, 0);
                self.b.ins().band(set, in_range)
            }
            Op::GroupNonUniformBallotBitCount => {
                let Some(group_op) = g.operation else {
                    return err(format!(
                        "error: {} without a group operation\n",
                        inst_desc(inst)
                    ));
                };
                let counted = match group_op {
                    GroupOperation::Reduce => bits,
                    GroupOperation::InclusiveScan | GroupOperation::ExclusiveScan => {
                        let upto = if group_op == GroupOperation::InclusiveScan {
                            self.b.ins().iadd_imm_s(lane.lane, 1)
                        } else {
                            lane.lane
                        };
                        let below = self.b.ins().ishl(one, upto);
                        let below = self.b.ins().iadd_imm_s(below, -1);
                        self.b.ins().band(bits, below)
                    }
                    other => {
                        return err(format!(
                            "error: {}: group operation {other:?} is not supported\n",
                            inst_desc(inst)
                        ))
                    }
                };
                let n = self.b.ins().popcnt(counted);
                self.b.ins().ireduce(types::I32, n)
            }
            Op::GroupNonUniformBallotFindLSB => {
                let n = self.b.ins().ctz(bits);
                self.b.ins().ireduce(types::I32, n)
            }
            _ => {
                let n = self.b.ins().clz(bits);
                let n = self.b.ins().ireduce(types::I32, n);
                let top = self.b.ins().iconst(types::I32, 63);
                self.b.ins().isub(top, n)
            }
        };
        let ty = self.result_type(inst)?;
        let want = super::values::scalar_ir_type(self.m, ty)?;
        let r = if self.ty_of(r) == want {
            r
        } else {
            self.resize_int(r, want, false)
        };
        self.define(inst, Val::S(r))
    }
}
