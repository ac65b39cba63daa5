//! Spin loops: loops whose exit depends on the result of an atomic instruction executed inside
//! the loop — the only race-free way for a work-item to wait for another one. The work-items of
//! a group share one thread (DESIGN.md "Barriers are compiled"), so codegen gives the back edges
//! of these loops a *yield point*: a work-item that goes round again stops there and lets the
//! others run. That is what makes sub-groups make independent forward progress, which
//! `cl_khr_subgroups` requires.
//!
//! Loops that merely execute atomics (`for (i = 0; i < n; i++) atomic_inc(&hist[x[i]])`) are
//! not spin loops: their trip count waits for nobody, and they keep the fast barrier-free path.
//!
//! "Depends" follows data flow through SSA values and phis, through private (Function-storage)
//! variables (clang `-O0` keeps every local in memory), through calls (a callee that executes an
//! atomic may return its result or store it through a pointer argument), and control
//! dependence (`if (atomic_load(f)) done = true;` — a value chosen by a branch on an atomic).

use std::collections::{HashMap, HashSet};

use rspirv::dr::{Function, Instruction, Operand};
use spirv::{Op, StorageClass, Word};

use crate::cfg::{immediate_dominators, reverse_post_order, Cfg};
use crate::instruction::AtomicOp;
use crate::module::{Module, Type};

/// Atomic instructions with a result: what a work-item reads of other work-items' atomics.
fn is_atomic_with_result(op: Op) -> bool {
    AtomicOp::of(op).is_some_and(AtomicOp::has_result)
}

fn callee(inst: &Instruction) -> Option<Word> {
    match (inst.class.opcode, inst.operands.first()) {
        (Op::FunctionCall, Some(Operand::IdRef(c))) => Some(*c),
        _ => None,
    }
}

fn ids(inst: &Instruction) -> impl Iterator<Item = Word> + '_ {
    inst.operands.iter().filter_map(|o| match o {
        Operand::IdRef(id) => Some(*id),
        _ => None,
    })
}

/// For every function of `m` that has spin loops: the back edges of those loops as
/// (latch block label, header block label), in block order.
pub(crate) fn find_spin_loops(m: &Module) -> HashMap<Word, Vec<(Word, Word)>> {
    let atomic_functions = functions_with_atomics(m);
    let mut found = HashMap::new();
    for f in &m.raw.functions {
        let Some(id) = f.def.as_ref().and_then(|d| d.result_id) else {
            continue;
        };
        if !atomic_functions.contains(&id) || f.blocks.is_empty() {
            continue;
        }
        let edges = spin_back_edges(m, f, &atomic_functions);
        if !edges.is_empty() {
            found.insert(id, edges);
        }
    }
    found
}

/// Functions that execute an atomic instruction with a result, directly or through calls.
fn functions_with_atomics(m: &Module) -> HashSet<Word> {
    let mut with = HashSet::new();
    loop {
        let before = with.len();
        for f in &m.raw.functions {
            let Some(id) = f.def.as_ref().and_then(|d| d.result_id) else {
                continue;
            };
            if with.contains(&id) {
                continue;
            }
            let has = f.blocks.iter().flat_map(|b| &b.instructions).any(|i| {
                is_atomic_with_result(i.class.opcode)
                    || callee(i).is_some_and(|c| with.contains(&c))
            });
            if has {
                with.insert(id);
            }
        }
        if with.len() == before {
            return with;
        }
    }
}

fn dominates(idom: &[usize], a: usize, mut b: usize) -> bool {
    loop {
        if a == b {
            return true;
        }
        let up = idom[b];
        if up == b || up == usize::MAX {
            return false;
        }
        b = up;
    }
}

/// For each block, the blocks whose branch decides whether it runs (control dependence, from
/// post-dominators: Ferrante, Ottenstein and Warren). Blocks that never reach a return (endless
/// loops) are post-dominated by the virtual exit only.
fn control_dependences(cfg: &Cfg) -> Vec<Vec<usize>> {
    let n = cfg.succ.len();
    let exit = n;
    // The reverse graph, with a virtual exit before every block that leaves the function.
    let mut rsucc: Vec<Vec<usize>> = vec![Vec::new(); n + 1];
    let reachable: HashSet<usize> = cfg.rpo.iter().copied().collect();
    for &b in &cfg.rpo {
        if cfg.succ[b].is_empty() {
            rsucc[exit].push(b);
        }
        rsucc[b] = cfg.preds[b].clone();
    }
    let mut rrpo = reverse_post_order(exit, &rsucc);
    if rrpo.len() < reachable.len() + 1 {
        let reached: HashSet<usize> = rrpo.iter().copied().collect();
        for &b in &cfg.rpo {
            if !reached.contains(&b) {
                rsucc[exit].push(b);
            }
        }
        rrpo = reverse_post_order(exit, &rsucc);
    }
    let mut rpreds: Vec<Vec<usize>> = vec![Vec::new(); n + 1];
    for &b in &rrpo {
        for &s in &rsucc[b] {
            rpreds[s].push(b);
        }
    }
    let ipdom = immediate_dominators(&rrpo, &rpreds);
    let mut deps = vec![Vec::new(); n];
    for &a in &cfg.rpo {
        if cfg.succ[a].len() < 2 {
            continue;
        }
        for &s in &cfg.succ[a] {
            let mut runner = s;
            while runner != ipdom[a] && runner != exit && runner != usize::MAX {
                if !deps[runner].contains(&a) {
                    deps[runner].push(a);
                }
                let up = ipdom[runner];
                if up == runner {
                    break;
                }
                runner = up;
            }
        }
    }
    deps
}

/// The back edges (latch label, header label) of the spin loops of `f`.
fn spin_back_edges(
    m: &Module,
    f: &Function,
    atomic_functions: &HashSet<Word>,
) -> Vec<(Word, Word)> {
    let cfg = Cfg::of_raw(f);
    let idom = immediate_dominators(&cfg.rpo, &cfg.preds);
    // Natural loops: each back edge latch → header (the header dominates the latch) adds the
    // blocks that reach the latch without passing the header.
    let mut loops: Vec<(usize, Vec<usize>, HashSet<usize>)> = Vec::new();
    for &latch in &cfg.rpo {
        for &header in &cfg.succ[latch] {
            if !dominates(&idom, header, latch) {
                continue;
            }
            let at = match loops.iter().position(|l| l.0 == header) {
                Some(i) => i,
                None => {
                    loops.push((header, Vec::new(), HashSet::from([header])));
                    loops.len() - 1
                }
            };
            let (_, latches, body) = &mut loops[at];
            latches.push(latch);
            let mut work = vec![latch];
            while let Some(b) = work.pop() {
                if body.insert(b) {
                    work.extend(cfg.preds[b].iter().copied());
                }
            }
        }
    }
    let executes_atomic = |i: &Instruction| {
        is_atomic_with_result(i.class.opcode)
            || callee(i).is_some_and(|c| atomic_functions.contains(&c))
    };
    let mut deps = None;
    let label = |b: usize| {
        f.blocks[b]
            .label
            .as_ref()
            .and_then(|l| l.result_id)
            .unwrap_or(0)
    };
    let mut edges = Vec::new();
    for (header, latches, body) in &loops {
        if !body
            .iter()
            .any(|&b| f.blocks[b].instructions.iter().any(executes_atomic))
        {
            continue;
        }
        let deps = deps.get_or_insert_with(|| control_dependences(&cfg));
        if exit_waits_on_atomic(m, f, &cfg, body, deps, atomic_functions) {
            edges.extend(latches.iter().map(|&l| (label(l), label(*header))));
        }
    }
    edges.sort_unstable();
    edges.dedup();
    edges
}

/// Whether a branch that leaves the loop `body` depends on the result of an atomic instruction
/// executed in it (see the module header for what "depends" follows).
fn exit_waits_on_atomic(
    m: &Module,
    f: &Function,
    cfg: &Cfg,
    body: &HashSet<usize>,
    deps: &[Vec<usize>],
    atomic_functions: &HashSet<Word>,
) -> bool {
    // Private variables of the function, and what each pointer id points into.
    let mut root: HashMap<Word, Word> = HashMap::new();
    for inst in f.blocks.iter().flat_map(|b| &b.instructions) {
        if inst.class.opcode == Op::Variable {
            let private = inst.result_type.and_then(|t| m.ty(t)).is_some_and(|t| {
                matches!(
                    t,
                    Type::Pointer {
                        storage: StorageClass::Function,
                        ..
                    }
                )
            });
            if let (true, Some(id)) = (private, inst.result_id) {
                root.insert(id, id);
            }
        }
    }
    // Derived pointers follow their base (blocks in reverse postorder: bases come first).
    for &b in &cfg.rpo {
        for inst in &f.blocks[b].instructions {
            let derives = matches!(
                inst.class.opcode,
                Op::AccessChain
                    | Op::InBoundsAccessChain
                    | Op::PtrAccessChain
                    | Op::InBoundsPtrAccessChain
                    | Op::Bitcast
                    | Op::PtrCastToGeneric
                    | Op::GenericCastToPtr
                    | Op::GenericCastToPtrExplicit
                    | Op::CopyObject
            );
            if let (true, Some(id), Some(Operand::IdRef(base))) =
                (derives, inst.result_id, inst.operands.first())
            {
                if let Some(&r) = root.get(base) {
                    root.insert(id, r);
                }
            }
        }
    }
    let root_of = |id: &Word| root.get(id).copied();

    let mut values: HashSet<Word> = HashSet::new();
    let mut variables: HashSet<Word> = HashSet::new();
    // Blocks whose terminator branches on a tainted condition.
    let mut branches: HashSet<usize> = HashSet::new();
    for &b in body {
        for inst in &f.blocks[b].instructions {
            if is_atomic_with_result(inst.class.opcode) {
                values.extend(inst.result_id);
            } else if callee(inst).is_some_and(|c| atomic_functions.contains(&c)) {
                values.extend(inst.result_id);
                variables.extend(ids(inst).skip(1).filter_map(|a| root_of(&a)));
            }
        }
    }
    if values.is_empty() {
        return false;
    }
    let mut changed = true;
    while changed {
        changed = false;
        for &b in &cfg.rpo {
            let controlled = deps[b].iter().any(|a| branches.contains(a));
            for inst in &f.blocks[b].instructions {
                let op = inst.class.opcode;
                let tainted = |i: usize| matches!(inst.operands.get(i), Some(Operand::IdRef(id)) if values.contains(id));
                match op {
                    Op::Variable => {}
                    Op::Store => {
                        if controlled || tainted(1) {
                            if let Some(var) = inst.operands.first().and_then(|o| match o {
                                Operand::IdRef(p) => root_of(p),
                                _ => None,
                            }) {
                                changed |= variables.insert(var);
                            }
                        }
                    }
                    Op::CopyMemory | Op::CopyMemorySized => {
                        let pointer = |i: usize| match inst.operands.get(i) {
                            Some(Operand::IdRef(p)) => root_of(p),
                            _ => None,
                        };
                        let from_tainted = pointer(1).is_some_and(|v| variables.contains(&v));
                        if controlled || from_tainted {
                            if let Some(var) = pointer(0) {
                                changed |= variables.insert(var);
                            }
                        }
                    }
                    Op::BranchConditional | Op::Switch => {
                        if tainted(0) {
                            changed |= branches.insert(b);
                        }
                    }
                    Op::Phi => {
                        let from_tainted = inst.operands.chunks(2).any(|pair| match pair {
                            [Operand::IdRef(v), Operand::IdRef(parent)] => {
                                values.contains(v)
                                    || cfg.index.get(parent).is_some_and(|&p| {
                                        branches.contains(&p)
                                            || deps[p].iter().any(|a| branches.contains(a))
                                    })
                            }
                            _ => false,
                        });
                        if from_tainted {
                            if let Some(id) = inst.result_id {
                                changed |= values.insert(id);
                            }
                        }
                    }
                    _ => {
                        let Some(id) = inst.result_id.filter(|_| inst.result_type.is_some()) else {
                            continue;
                        };
                        if values.contains(&id) {
                            continue;
                        }
                        // A load from a tainted private variable, any computation on a tainted
                        // value (calls included: the callee may return it), or a value computed
                        // only when a tainted branch goes its way.
                        let reads_tainted = ids(inst).any(|i| {
                            values.contains(&i)
                                || root_of(&i).is_some_and(|v| variables.contains(&v))
                        });
                        if controlled || reads_tainted {
                            values.insert(id);
                            changed = true;
                        }
                    }
                }
            }
        }
    }
    body.iter()
        .any(|b| branches.contains(b) && cfg.succ[*b].iter().any(|s| !body.contains(s)))
}
