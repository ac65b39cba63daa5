//! What the vectoriser finds out before it rewrites anything: the forms values take, which
//! values vary between work-items, the loops and uniform regions of the body, post-dominators.

use std::collections::{HashMap, HashSet};

use cranelift_codegen::ir::condcodes::FloatCC;
use cranelift_codegen::ir::{
    self, types, Block, BlockArg, Function, InstructionData, Opcode, Type, Value,
};

use super::*;

/// How a varying value (or a uniform one) lives in the vector loop.
#[derive(Clone, Debug)]
pub(super) enum Form {
    Uniform(Value),
    Affine {
        base: Value,
        stride: i64,
    },
    /// base + lane × stride when `exact_if` (an i8) holds: a 32-bit index widened to 64 bits
    /// is linear only if the lanes do not wrap around in 32 bits, which is checked where
    /// it matters (contiguous accesses); otherwise the lanes are recomputed one by one.
    Guarded {
        base: Value,
        stride: i64,
        exact_if: Value,
    },
    Vector(Value),
    Mask(Value),
    /// Doubles as two vectors of half the lanes each (f64x2 at four lanes): the low lanes,
    /// then the high ones.
    Pair([Value; 2]),
    /// One scalar per lane.
    Lanes(Vec<Value>),
}

/// How a block parameter is passed in the vector loop.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum ParamForm {
    Uniform,
    Vector,
    /// A double as two f64x2 (the form its lane-wise arithmetic takes), not a scalar per lane
    /// rebuilt into pairs on every iteration.
    Pair,
    Lanes,
}

pub(super) fn vectorisable_type(t: Type) -> bool {
    t == types::F32 || t == types::I32
}

/// Whether values of scalar type `t` take the `Pair` form at `lanes` lanes: doubles always,
/// 64-bit integers in wide code (8 or 16 lanes), whose i64 vector arithmetic, compares and
/// narrowing LLVM lowers (Cranelift's x86-64 backend lacks some of them for i64x2, so at 4
/// lanes they stay a scalar per lane). SYCL's indices are `size_t`: without this, every
/// index computed from data (a binary search's bounds) was one scalar per lane.
pub(super) fn pair_type(t: Type, lanes: usize) -> bool {
    t == types::F64 || (t == types::I64 && lanes >= 8)
}

/// Pure lane-wise operations whose f32x4 / i32x4 forms Cranelift lowers on x86-64 (with the
/// SSE4.1 the host has; a host without it makes the JIT refuse and the kernel is rebuilt
/// scalar, see kernel.rs). `fma` is one VFMADD on f32x4 with native FMA and a call of
/// `ferrocl_fmaf` per lane without, as the scalar form is, so its lanes match it bit for bit.
pub(crate) fn lane_wise(op: Opcode) -> bool {
    use Opcode::*;
    matches!(
        op,
        Fadd | Fsub
            | Fmul
            | Fma
            | Fdiv
            | Sqrt
            | Fabs
            | Fneg
            | Fmin
            | Fmax
            | Floor
            | Ceil
            | Trunc
            | Nearest
            | Iadd
            | Isub
            | Imul
            | Band
            | Bor
            | Bxor
            | Bnot
            | Smin
            | Smax
            | Umin
            | Umax
            | Iabs
    )
}

/// Vector compares the x86-64 backend lowers directly.
pub(crate) fn vector_float_condition(cc: FloatCC) -> bool {
    matches!(
        cc,
        FloatCC::Equal
            | FloatCC::NotEqual
            | FloatCC::LessThan
            | FloatCC::LessThanOrEqual
            | FloatCC::GreaterThan
            | FloatCC::GreaterThanOrEqual
            | FloatCC::Ordered
            | FloatCC::Unordered
    )
}

/// Blocks of the loop body (reachable from `head` without passing the latch), in reverse
/// post-order, with `head` first.
pub(super) fn body_blocks(func: &Function, lp: &ItemLoop) -> Vec<Block> {
    let mut seen = HashSet::new();
    let mut post = Vec::new();
    // Iterative DFS with an explicit successor cursor per frame.
    let mut stack: Vec<(Block, Vec<Block>)> = Vec::new();
    seen.insert(lp.head);
    stack.push((lp.head, successors(func, lp.head)));
    while let Some((block, succ)) = stack.last_mut() {
        if let Some(next) = succ.pop() {
            if next != lp.latch && seen.insert(next) {
                let s = successors(func, next);
                stack.push((next, s));
            }
        } else {
            post.push(*block);
            stack.pop();
        }
    }
    post.reverse();
    post
}

pub(super) fn successors(func: &Function, block: Block) -> Vec<Block> {
    let mut out = crate::cfg::successors(func, block);
    // Keep the first successor on top of the DFS stack (popped first): source order.
    out.reverse();
    out
}

/// The constant behind `v`, if it is an `iconst`.
pub(super) fn iconst_value(func: &Function, v: Value) -> Option<i64> {
    let inst = func.dfg.value_def(v).inst()?;
    match func.dfg.insts[inst] {
        InstructionData::UnaryImm {
            opcode: Opcode::Iconst,
            imm,
        } => Some(imm.bits()),
        _ => None,
    }
}

/// Which values of the body differ between work-items.
pub(super) fn varying_values(
    func: &Function,
    lp: &ItemLoop,
    body: &[Block],
    forced: &HashSet<Value>,
) -> HashSet<Value> {
    let mut varying = forced.clone();
    varying.insert(func.dfg.block_params(lp.head)[0]);
    loop {
        let before = varying.len();
        for &block in body {
            for inst in func.layout.block_insts(block) {
                let data = &func.dfg.insts[inst];
                let op = data.opcode();
                let results = func.dfg.inst_results(inst);
                // Each work-item gets its own result from calls (clock reads) and atomics, and
                // its own private memory (private.rs).
                let own_result = op.is_call()
                    || matches!(
                        op,
                        Opcode::AtomicRmw | Opcode::AtomicCas | Opcode::StackAddr
                    );
                let from_varying = func
                    .dfg
                    .inst_values(inst)
                    .any(|v| varying.contains(&func.dfg.resolve_aliases(v)));
                if (own_result || from_varying) && !data.opcode().is_branch() {
                    varying.extend(results.iter().copied());
                }
                // Branch arguments make the target's parameters varying.
                for call in
                    data.branch_destination(&func.dfg.jump_tables, &func.dfg.exception_tables)
                {
                    let target = call.block(&func.dfg.value_lists);
                    if !body.contains(&target) {
                        continue;
                    }
                    for (arg, &param) in call
                        .args(&func.dfg.value_lists)
                        .zip(func.dfg.block_params(target))
                    {
                        if let BlockArg::Value(v) = arg {
                            if varying.contains(&func.dfg.resolve_aliases(v)) {
                                varying.insert(param);
                            }
                        }
                    }
                }
            }
        }
        if varying.len() == before {
            return varying;
        }
    }
}

/// A branch the work-items may take differently, and the blocks it makes conditional.
pub(super) struct Region {
    /// The blocks strictly between the branch and `join`, in a topological order.
    pub(super) blocks: Vec<Block>,
    /// Where every path from the branch meets again (its immediate post-dominator).
    pub(super) join: Block,
}

/// Post-dominator sets of the body's blocks (the latch is the one exit), as bitsets over
/// `index`.
pub(super) fn post_dominators(
    func: &Function,
    body: &[Block],
    latch: Block,
) -> (HashMap<Block, usize>, Vec<Vec<u64>>) {
    let mut index: HashMap<Block, usize> = body.iter().enumerate().map(|(i, &b)| (b, i)).collect();
    index.insert(latch, body.len());
    let n = body.len() + 1;
    let words = n.div_ceil(64);
    let full = vec![u64::MAX; words];
    let mut pd = vec![full; n];
    pd[n - 1] = vec![0; words];
    pd[n - 1][(n - 1) / 64] |= 1 << ((n - 1) % 64);
    let succ: Vec<Vec<usize>> = body
        .iter()
        .map(|&b| {
            successors(func, b)
                .into_iter()
                .filter_map(|s| index.get(&s).copied())
                .collect()
        })
        .collect();
    loop {
        let mut changed = false;
        for i in (0..body.len()).rev() {
            let mut set = vec![u64::MAX; words];
            if succ[i].is_empty() {
                set = vec![0; words];
            }
            for &s in &succ[i] {
                for (w, x) in set.iter_mut().zip(&pd[s]) {
                    *w &= x;
                }
            }
            set[i / 64] |= 1 << (i % 64);
            if set != pd[i] {
                pd[i] = set;
                changed = true;
            }
        }
        if !changed {
            return (index, pd);
        }
    }
}

pub(super) fn contains(set: &[u64], i: usize) -> bool {
    set[i / 64] >> (i % 64) & 1 == 1
}

/// The regions of the body's varying branches (outermost ones; inner branches are part of
/// their region), or why one cannot be made straight-line code.
/// A loop the lanes run under a mask: they may leave it at different times (a varying exit
/// or a varying branch inside), or it sits inside a branch they take differently. It runs
/// while any lane is active; each iteration's body is straight-line code under the mask of
/// the lanes still in the loop, and what leaves the loop (the exit's parameters, values of
/// the header used after it) is kept per lane as each lane leaves.
pub(super) struct LoopPlan {
    /// The loop's blocks in a topological order of its body (the header first).
    pub(super) blocks: Vec<Block>,
    /// The one block the loop exits to.
    pub(super) exit: Block,
    /// Values of the header used after the loop.
    pub(super) live_outs: Vec<Value>,
}

/// A natural loop of the work-item loop's body.
pub(super) struct NaturalLoop {
    /// The header and every block that reaches a latch without passing the header.
    pub(super) blocks: HashSet<Block>,
    /// The blocks that branch back to the header.
    pub(super) latches: Vec<Block>,
}

/// The natural loops of `body` (in layout order, so a back edge goes to an earlier block), by
/// header.
pub(super) fn natural_loops(func: &Function, body: &[Block]) -> HashMap<Block, NaturalLoop> {
    let order: HashMap<Block, usize> = body.iter().enumerate().map(|(i, &b)| (b, i)).collect();
    let mut preds: HashMap<Block, Vec<Block>> = HashMap::new();
    let mut latches: HashMap<Block, Vec<Block>> = HashMap::new();
    for &b in body {
        for s in successors(func, b) {
            preds.entry(s).or_default().push(b);
            if order.get(&s).is_some_and(|&o| o <= order[&b]) {
                latches.entry(s).or_default().push(b);
            }
        }
    }
    latches
        .into_iter()
        .map(|(header, sources)| {
            let mut set: HashSet<Block> = HashSet::from([header]);
            let mut stack = sources.clone();
            while let Some(b) = stack.pop() {
                if set.insert(b) {
                    stack.extend(preds.get(&b).into_iter().flatten().copied());
                }
            }
            (
                header,
                NaturalLoop {
                    blocks: set,
                    latches: sources,
                },
            )
        })
        .collect()
}

/// Whether the lanes may leave loop `header` at different times: a varying branch in its own
/// blocks that leaves the loop or goes back to its header. A varying branch between two of its
/// blocks (an `if` in the body) only makes a region, linearised under a mask like one outside
/// loops, and every lane still goes round as often. Branches inside loops nested in it do not
/// count — a nested loop the lanes leave at different times runs masked and ends with every
/// lane at its exit.
pub(super) fn loop_diverges(
    func: &Function,
    header: Block,
    loops: &HashMap<Block, NaturalLoop>,
    varying: &HashSet<Value>,
) -> bool {
    let own = &loops[&header].blocks;
    let nested: HashSet<Block> = loops
        .iter()
        .filter(|(&h, _)| h != header && own.contains(&h))
        .flat_map(|(_, l)| l.blocks.iter().copied())
        .collect();
    own.iter().filter(|b| !nested.contains(b)).any(|&b| {
        func.layout
            .last_inst(b)
            .is_some_and(|t| match func.dfg.insts[t] {
                InstructionData::Brif { arg, .. } | InstructionData::BranchTable { arg, .. } => {
                    varying.contains(&func.dfg.resolve_aliases(arg))
                        && successors(func, b)
                            .iter()
                            .any(|s| *s == header || !own.contains(s))
                }
                _ => false,
            })
    })
}

/// The natural loops of the body (by header), each with what keeps it from being run under a
/// mask, if anything: one back edge, one exit block entered only from the loop, and only the
/// header's values (or the exit's parameters) used after it. Loops inside it must be run under
/// a mask too (the caller checks their plans).
pub(super) fn find_loops(
    func: &Function,
    lp: &ItemLoop,
    body: &[Block],
) -> HashMap<Block, Result<LoopPlan, Refusal>> {
    let order: HashMap<Block, usize> = body.iter().enumerate().map(|(i, &b)| (b, i)).collect();
    let mut preds: HashMap<Block, Vec<Block>> = HashMap::new();
    for &b in body {
        for s in successors(func, b) {
            preds.entry(s).or_default().push(b);
        }
    }
    let mut loops = HashMap::new();
    let natural = natural_loops(func, body);
    for (
        &header,
        NaturalLoop {
            blocks: set,
            latches: sources,
        },
    ) in &natural
    {
        let plan = (|| {
            if sources.len() != 1 {
                return Err("a loop with several back edges");
            }
            if preds[&header].iter().filter(|p| !set.contains(p)).count() != 1 {
                return Err("a loop entered from several places");
            }
            let mut exits = HashSet::new();
            for &b in set {
                for s in successors(func, b) {
                    if !set.contains(&s) {
                        exits.insert(s);
                    }
                }
            }
            let exit = match exits.len() {
                1 => *exits.iter().next().expect("one exit"),
                _ => return Err("a loop with several exits the work-items take differently"),
            };
            if exit != lp.latch
                && preds
                    .get(&exit)
                    .into_iter()
                    .flatten()
                    .any(|p| !set.contains(p))
            {
                return Err("a loop exit entered from elsewhere");
            }
            // Values of the loop used after it: only the header's are carried out.
            let mut live_outs = Vec::new();
            for &b in body.iter().filter(|b| !set.contains(b)) {
                for inst in func.layout.block_insts(b) {
                    for v in func.dfg.inst_values(inst) {
                        let v = func.dfg.resolve_aliases(v);
                        let Some(def) = func.dfg.value_def(v).inst() else {
                            if let ir::ValueDef::Param(pb, _) = func.dfg.value_def(v) {
                                if pb != header && set.contains(&pb) {
                                    return Err("a value computed in a loop is used after it");
                                }
                                if pb == header && !live_outs.contains(&v) {
                                    live_outs.push(v);
                                }
                            }
                            continue;
                        };
                        let Some(db) = func.layout.inst_block(def) else {
                            continue;
                        };
                        if !set.contains(&db) {
                            continue;
                        }
                        if db != header {
                            return Err("a value computed in a loop is used after it");
                        }
                        if !live_outs.contains(&v) {
                            live_outs.push(v);
                        }
                    }
                }
            }
            let mut blocks: Vec<Block> = set.iter().copied().collect();
            blocks.sort_by_key(|b| order[b]);
            Ok(LoopPlan {
                blocks,
                exit,
                live_outs,
            })
        })();
        loops.insert(header, plan);
    }
    loops
}

pub(super) fn plan_regions(
    func: &Function,
    lp: &ItemLoop,
    body: &[Block],
    varying: &HashSet<Value>,
    loops: &HashMap<Block, Result<LoopPlan, Refusal>>,
    masked: &mut HashSet<Block>,
) -> Result<HashMap<Block, Region>, Refusal> {
    let is_varying = |v: Value| varying.contains(&func.dfg.resolve_aliases(v));
    let mut regions = HashMap::new();
    // Masked loops linearise the branches inside them.
    let mut inside: HashSet<Block> = masked
        .iter()
        .filter_map(|h| loops.get(h)?.as_ref().ok())
        .flat_map(|l| l.blocks.iter().copied())
        .collect();
    let mut post = None;
    let order: HashMap<Block, usize> = body.iter().enumerate().map(|(i, &b)| (b, i)).collect();
    let mut preds: HashMap<Block, Vec<Block>> = HashMap::new();
    for &b in body {
        for s in successors(func, b) {
            preds.entry(s).or_default().push(b);
        }
    }
    for &block in body {
        if inside.contains(&block) {
            continue;
        }
        let Some(term) = func.layout.last_inst(block) else {
            continue;
        };
        match func.dfg.insts[term] {
            InstructionData::Brif { arg, .. } if is_varying(arg) => {}
            InstructionData::BranchTable { arg, .. } if is_varying(arg) => {
                return Err("work-items take a switch differently");
            }
            _ => continue,
        }
        let (index, pd) = post.get_or_insert_with(|| post_dominators(func, body, lp.latch));
        let mine = &pd[index[&block]];
        // The immediate post-dominator: the strict post-dominator that all others post-dominate.
        let candidates: Vec<Block> = body
            .iter()
            .copied()
            .chain([lp.latch])
            .filter(|&b| b != block && contains(mine, index[&b]))
            .collect();
        let join = candidates
            .iter()
            .copied()
            .find(|&c| {
                candidates
                    .iter()
                    .all(|&o| o == c || contains(&pd[index[&c]], index[&o]))
            })
            .ok_or("internal: a branch without a post-dominator")?;
        // The blocks between: reachable from the branch without passing the join.
        let mut blocks = Vec::new();
        let mut seen = HashSet::new();
        let mut stack: Vec<Block> = successors(func, block);
        while let Some(b) = stack.pop() {
            if b == join || !seen.insert(b) {
                continue;
            }
            if b == lp.latch || !order.contains_key(&b) {
                return Err("a varying branch leaves the work-item loop");
            }
            blocks.push(b);
            stack.extend(successors(func, b));
        }
        blocks.sort_by_key(|b| order[b]);
        // No loop inside (a back edge: the lanes would leave it at different times), and
        // entered only from the branch or the region.
        for &b in &blocks {
            for s in successors(func, b) {
                if s != join && order[&s] <= order[&b] {
                    // A loop wholly inside the branch runs under the branch's mask.
                    match loops.get(&s) {
                        Some(Ok(l)) if l.blocks.iter().all(|x| seen.contains(x)) => {
                            masked.insert(s);
                        }
                        Some(Err(why)) if seen.contains(&s) => return Err(why),
                        _ => {
                            return Err(if seen.contains(&s) {
                                "a loop inside a branch the work-items take differently"
                            } else {
                                "work-items leave a loop at different times"
                            })
                        }
                    }
                }
            }
        }
        for &b in &blocks {
            for p in preds.get(&b).map(Vec::as_slice).unwrap_or(&[]) {
                if *p != block && !seen.contains(p) {
                    return Err("a varying branch's blocks are entered from elsewhere");
                }
            }
        }
        if join != lp.latch {
            for p in preds.get(&join).map(Vec::as_slice).unwrap_or(&[]) {
                if *p != block && !seen.contains(p) {
                    return Err("a varying branch's join is entered from elsewhere");
                }
            }
        }
        inside.extend(blocks.iter().copied());
        regions.insert(block, Region { blocks, join });
    }
    Ok(regions)
}
