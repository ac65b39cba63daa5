//! Analyses of a function body that its translation needs: which ids must live in the
//! work-item frame across barriers and yield points, which of those can be recomputed after a
//! barrier instead, which variables can live in SSA, and the order blocks run in.

use std::collections::{HashMap, HashSet};

use ferrocl_frontend::spirv::{Op, Word};
use ferrocl_frontend::{Cfg, Function, Inst, Module, Type};

use super::function::{is_group_barrier, Translator};

/// Ids of `f` whose values must live in the work-item frame when the kernel has barriers: those
/// live right after a barrier point (`OpControlBarrier`, or a call of a function containing
/// one) or a yield point (the back edges in `yield_edges`, at the end of their latch block).
/// Exactly these need it: a value not live at any resume point is still dominated by its
/// definition once resume points become extra entries into the CFG.
pub(super) fn frame_resident_ids(
    f: Function<'_>,
    barrier_functions: &HashSet<Word>,
    yield_edges: &HashSet<(Word, Word)>,
) -> HashSet<Word> {
    let is_barrier_point = |inst: Inst<'_>| match inst.opcode() {
        Op::FunctionCall => inst
            .callee()
            .is_some_and(|c| barrier_functions.contains(&c)),
        op => is_group_barrier(op),
    };
    if yield_edges.is_empty() && !f.instructions().any(is_barrier_point) {
        return HashSet::new();
    }
    // Only values defined in this function matter (parameters come from the prologue or are
    // stored by the caller; variables are frame addresses recomputed at each use).
    let defined: HashSet<Word> = f
        .instructions()
        .filter(|i| i.opcode() != Op::Variable && i.result_type().is_some())
        .filter_map(|i| i.result_id())
        .collect();
    let cfg = Cfg::new(f);
    let index = &cfg.index;
    let n = f.block_count();
    let mut succs = vec![Vec::new(); n];
    // phi_uses[p]: values the phis of p's successors take from p (used at the end of p).
    let mut phi_uses: Vec<HashSet<Word>> = vec![HashSet::new(); n];
    // Upward-exposed uses and definitions of each block, phis excluded.
    let mut gen: Vec<HashSet<Word>> = vec![HashSet::new(); n];
    let mut kill: Vec<HashSet<Word>> = vec![HashSet::new(); n];
    for (bi, block) in f.blocks().enumerate() {
        for inst in block.instructions() {
            if inst.opcode() == Op::Phi {
                for (v, parent) in inst.phi_pairs().flatten() {
                    if let Some(&p) = index.get(&parent) {
                        if defined.contains(&v) {
                            phi_uses[p].insert(v);
                        }
                    }
                }
            } else {
                for id in inst.id_refs() {
                    if defined.contains(&id) && !kill[bi].contains(&id) {
                        gen[bi].insert(id);
                    }
                }
            }
            if let Some(id) = inst.result_id().filter(|id| defined.contains(id)) {
                kill[bi].insert(id);
            }
        }
        succs[bi] = cfg.succ[bi].clone();
    }
    // Backward liveness to a fixed point.
    let mut live_in: Vec<HashSet<Word>> = vec![HashSet::new(); n];
    let mut live_out: Vec<HashSet<Word>> = vec![HashSet::new(); n];
    let mut changed = true;
    while changed {
        changed = false;
        for bi in (0..n).rev() {
            let mut out: HashSet<Word> = phi_uses[bi].clone();
            for &s in &succs[bi] {
                out.extend(live_in[s].iter().copied());
            }
            let mut inn = gen[bi].clone();
            inn.extend(out.iter().filter(|v| !kill[bi].contains(v)).copied());
            if inn.len() != live_in[bi].len() || out.len() != live_out[bi].len() {
                live_in[bi] = inn;
                live_out[bi] = out;
                changed = true;
            }
        }
    }
    // Values live right after each barrier point.
    let mut resident = HashSet::new();
    let yield_latches: HashSet<Word> = yield_edges.iter().map(|&(latch, _)| latch).collect();
    for (bi, block) in f.blocks().enumerate() {
        // A yield sits on the back edge, after the terminator: what the header's phis take
        // from the latch and what the loop reads later (all of the latch's live-out values,
        // those of its other successors too).
        if yield_latches.contains(&block.label()) {
            resident.extend(live_out[bi].iter().copied());
        }
        let mut live = live_out[bi].clone();
        for inst in block.instructions().rev() {
            if is_barrier_point(inst) {
                // Its own result is made after the work-item resumes (a collective's combined
                // value, a call's return), in the region that uses it first.
                let own = inst.result_id();
                resident.extend(live.iter().copied().filter(|&id| Some(id) != own));
                // Collectives read their other operands (a broadcast's lane, a shuffle's
                // index) after resuming. Those that only combine values store the value as
                // their contribution before stopping (group.rs, subgroup.rs) and read nothing
                // after: their value stays out of the frame unless it is live anyway (an
                // accumulator of the loop before a reduction would otherwise be stored at
                // every iteration).
                if inst.opcode() != Op::FunctionCall
                    && super::group::collective_combine(inst.opcode()).is_none()
                {
                    resident.extend(inst.id_refs().filter(|id| defined.contains(id)));
                }
            }
            if let Some(id) = inst.result_id() {
                live.remove(&id);
            }
            if inst.opcode() != Op::Phi {
                live.extend(inst.id_refs().filter(|id| defined.contains(id)));
            }
        }
    }
    resident
}

/// Instructions cheap enough to recompute after a barrier instead of keeping their results in
/// the work-item frame, and free of side effects and memory reads (built-in loads aside, which
/// read the work-item's ids).
pub(super) fn rematerialisable_opcode(op: Op) -> bool {
    use Op::*;
    matches!(
        op,
        IAdd | ISub
            | IMul
            | SNegate
            | Not
            | ShiftRightLogical
            | ShiftRightArithmetic
            | ShiftLeftLogical
            | BitwiseOr
            | BitwiseXor
            | BitwiseAnd
            | UConvert
            | SConvert
            | ConvertPtrToU
            | ConvertUToPtr
            | Bitcast
            | IEqual
            | INotEqual
            | UGreaterThan
            | SGreaterThan
            | UGreaterThanEqual
            | SGreaterThanEqual
            | ULessThan
            | SLessThan
            | ULessThanEqual
            | SLessThanEqual
            | LogicalEqual
            | LogicalNotEqual
            | LogicalOr
            | LogicalAnd
            | LogicalNot
            | Select
            | CompositeExtract
            | CopyObject
            | AccessChain
            | InBoundsAccessChain
            | PtrAccessChain
            | InBoundsPtrAccessChain
            | Load
    )
}

/// Most instructions one use of a rematerialised value may re-emit (its definition tree).
pub(super) const MAX_REMAT_INSTRUCTIONS: usize = 12;

impl<'m> Translator<'m, '_, '_> {
    /// Moves the frame-resident ids of `f` that can be recomputed at their uses out of
    /// `resident`: the local id and values derived from it, constants and arguments (the bulk
    /// of what LLVM hoists above barriers) then cost a few instructions per region instead of
    /// a store and loads per work-item.
    pub(super) fn rematerialisable(
        &self,
        f: Function<'m>,
        resident: &mut HashSet<Word>,
    ) -> HashMap<Word, Inst<'m>> {
        if resident.is_empty() {
            return HashMap::new();
        }
        let defs: HashMap<Word, Inst<'m>> = f
            .instructions()
            .filter(|i| i.opcode() != Op::Variable)
            .filter_map(|i| Some((i.result_id()?, i)))
            .collect();
        // Tree size of each rematerialisable id (None: not rematerialisable).
        let mut cost: HashMap<Word, Option<usize>> = HashMap::new();
        let mut remat = HashMap::new();
        for &id in resident.iter() {
            if self.remat_cost(id, &defs, &mut cost).is_some() {
                remat.insert(id, defs[&id]);
            }
        }
        // Rematerialised ids bring the others of their trees along; none of those needs the
        // frame either.
        let all: Vec<Word> = cost
            .iter()
            .filter(|(_, c)| c.is_some())
            .map(|(id, _)| *id)
            .collect();
        for id in all {
            if let Some(inst) = defs.get(&id) {
                remat.insert(id, *inst);
            }
        }
        resident.retain(|id| !remat.contains_key(id));
        remat
    }

    /// Instructions one use of `id` re-emits, if it can be rematerialised within the budget.
    pub(super) fn remat_cost(
        &self,
        id: Word,
        defs: &HashMap<Word, Inst<'m>>,
        cost: &mut HashMap<Word, Option<usize>>,
    ) -> Option<usize> {
        let Some(inst) = defs.get(&id) else {
            // Not defined in this function: a constant, a module variable or a parameter,
            // available everywhere.
            return Some(0);
        };
        if let Some(&c) = cost.get(&id) {
            return c;
        }
        cost.insert(id, None); // SSA has no cycles outside phis, which are never candidates
        let op = inst.opcode();
        let mut total = Some(1usize);
        if matches!(op, Op::UDiv | Op::SDiv | Op::UMod | Op::SRem | Op::SMod) {
            // A division the whole work-group shares (of group ids, sizes and arguments) is
            // worth recomputing: kept in the frame it would be a value per work-item, which
            // the vectoriser cannot see is the same in every lane. It divided by the same
            // operands before the barrier, so it cannot fault now.
            if self.varies_in_group(id, defs, &mut HashMap::new()) {
                total = None;
            }
        } else if !rematerialisable_opcode(op) {
            total = None;
        } else if op == Op::Load {
            // Only loads of a built-in variable (the work-item's ids) are pure.
            if !inst
                .base_pointer()
                .is_ok_and(|p| self.is_builtin_variable(p))
            {
                total = None;
            }
        } else if matches!(
            op,
            Op::AccessChain
                | Op::InBoundsAccessChain
                | Op::PtrAccessChain
                | Op::InBoundsPtrAccessChain
        ) && inst
            .base_pointer()
            .is_ok_and(|p| self.is_builtin_variable(p))
        {
            // Pointers into built-ins are bookkeeping (builtin_ptrs), not values.
            total = None;
        }
        if total.is_some() {
            for operand in inst.id_refs() {
                total = match (total, self.remat_cost(operand, defs, cost)) {
                    (Some(t), Some(c)) if t + c <= MAX_REMAT_INSTRUCTIONS => Some(t + c),
                    _ => None,
                };
                if total.is_none() {
                    break;
                }
            }
        }
        cost.insert(id, total);
        total
    }
}

impl<'m> Translator<'m, '_, '_> {
    /// Whether `id` may differ between the work-items of a group: it reads a work-item's own
    /// built-in (its local, global or sub-group ids), memory other than the group-wide
    /// built-ins, or a phi; arguments and constants do not.
    fn varies_in_group(
        &self,
        id: Word,
        defs: &HashMap<Word, Inst<'m>>,
        seen: &mut HashMap<Word, bool>,
    ) -> bool {
        use ferrocl_frontend::spirv::BuiltIn::*;
        let Some(inst) = defs.get(&id) else {
            return false;
        };
        if let Some(&v) = seen.get(&id) {
            return v;
        }
        seen.insert(id, true);
        let op = inst.opcode();
        let varies = match op {
            Op::Load => !inst.base_pointer().is_ok_and(|p| {
                matches!(
                    self.builtin_of(p),
                    Some(
                        WorkgroupId
                            | NumWorkgroups
                            | WorkgroupSize
                            | EnqueuedWorkgroupSize
                            | GlobalSize
                            | GlobalOffset
                            | WorkDim
                    )
                )
            }),
            Op::Phi | Op::Variable | Op::FunctionCall => true,
            _ if rematerialisable_opcode(op)
                || matches!(op, Op::UDiv | Op::SDiv | Op::UMod | Op::SRem | Op::SMod) =>
            {
                inst.id_refs().any(|r| self.varies_in_group(r, defs, seen))
            }
            _ => true,
        };
        seen.insert(id, varies);
        varies
    }
}

/// Function-storage variables whose every use is the pointer operand of a load or store: they
/// never escape, so they can live in SSA (clang's -O0 output keeps every local in memory).
pub(super) fn promotable_variables(m: &Module, f: Function<'_>) -> HashSet<Word> {
    let mut candidates = HashSet::new();
    for inst in f.instructions() {
        if inst.opcode() == Op::Variable {
            if let (Some(id), Some(ty)) = (inst.result_id(), inst.result_type()) {
                if let Some(Type::Pointer { pointee, .. }) = m.ty(ty) {
                    if matches!(
                        m.ty(*pointee),
                        Some(
                            Type::Int { .. }
                                | Type::Float { .. }
                                | Type::Bool
                                | Type::Pointer { .. }
                                | Type::Vector { .. }
                        )
                    ) {
                        candidates.insert(id);
                    }
                }
            }
        }
    }
    for inst in f.instructions() {
        let op = inst.opcode();
        for (i, id) in inst.id_refs_with_index() {
            if !candidates.contains(&id) {
                continue;
            }
            let ok = matches!(
                (op, i),
                (Op::Load, 0) | (Op::Store, 0) | (Op::LifetimeStart, 0) | (Op::LifetimeStop, 0)
            );
            if !ok {
                candidates.remove(&id);
            }
        }
    }
    candidates
}

/// Execution-order rank of every reachable block of `f` (`rpo`: its reverse post-order): a
/// topological order of the control flow without back edges (edges to a block not later in
/// `rpo`), taking among the ready blocks the one inside the most loops, so a loop's blocks all
/// come before the blocks after the loop. The structured code OpenCL compilers produce gets
/// the order SIMD lanes reconverge in.
pub(super) fn schedule_ranks(f: Function<'_>, rpo: &[usize]) -> HashMap<usize, u32> {
    let cfg = Cfg::new(f);
    let position: HashMap<usize, usize> = rpo.iter().enumerate().map(|(i, &b)| (b, i)).collect();
    let succs: HashMap<usize, Vec<usize>> = rpo.iter().map(|&b| (b, cfg.succ[b].clone())).collect();
    let mut preds: HashMap<usize, Vec<usize>> = HashMap::new();
    let mut forward_in: HashMap<usize, usize> = rpo.iter().map(|&b| (b, 0)).collect();
    let mut depth: HashMap<usize, u32> = rpo.iter().map(|&b| (b, 0)).collect();
    for &b in rpo {
        for &s in &succs[&b] {
            preds.entry(s).or_default().push(b);
            if position[&s] > position[&b] {
                *forward_in.get_mut(&s).expect("reachable") += 1;
            }
        }
    }
    // Loop bodies: for each back edge latch → header, the blocks reaching the latch without
    // passing the header.
    let mut loops: HashMap<usize, HashSet<usize>> = HashMap::new();
    for &b in rpo {
        for &h in &succs[&b] {
            if position[&h] <= position[&b] {
                let body = loops.entry(h).or_insert_with(|| HashSet::from([h]));
                let mut work = vec![b];
                while let Some(x) = work.pop() {
                    if body.insert(x) {
                        work.extend(preds.get(&x).into_iter().flatten().copied());
                    }
                }
            }
        }
    }
    for body in loops.values() {
        for b in body {
            *depth.get_mut(b).expect("reachable") += 1;
        }
    }
    let mut ready: Vec<usize> = rpo.first().copied().into_iter().collect();
    let mut ranks = HashMap::new();
    while !ready.is_empty() {
        let pick = (0..ready.len())
            .max_by_key(|&i| (depth[&ready[i]], std::cmp::Reverse(position[&ready[i]])))
            .expect("non-empty");
        let b = ready.swap_remove(pick);
        ranks.insert(b, ranks.len() as u32);
        for &s in &succs[&b] {
            if position[&s] > position[&b] {
                let n = forward_in.get_mut(&s).expect("reachable");
                *n -= 1;
                if *n == 0 {
                    ready.push(s);
                }
            }
        }
    }
    ranks
}
