//! SSA dominance (SPIR-V 2.16): every use of an id defined in a function is dominated by its
//! definition (for an OpPhi operand: the definition dominates the end of the parent block), so
//! codegen never reads a value on a path where it was not computed. Dominators come from the
//! iterative algorithm of Cooper, Harvey and Kennedy over reverse postorder; queries use DFS
//! intervals of the dominator tree, so the whole check is linear in practice.

use std::collections::HashMap;

use rspirv::dr::{Function, Operand};
use spirv::{Op, Word};

use crate::diagnostics::Diagnostic;
use crate::module::Module;

const UNDEF: usize = usize::MAX;

pub(crate) fn check_dominance(m: &Module, problems: &mut Vec<Diagnostic>) {
    for f in &m.raw.functions {
        check_function(m, f, problems);
    }
}

fn successors(f: &Function, index: &HashMap<Word, usize>) -> Vec<Vec<usize>> {
    f.blocks
        .iter()
        .map(|b| {
            let Some(last) = b.instructions.last() else {
                return Vec::new();
            };
            let skip = match last.class.opcode {
                Op::Branch => 0,
                Op::BranchConditional | Op::Switch => 1,
                _ => return Vec::new(),
            };
            last.operands
                .iter()
                .skip(skip)
                .filter_map(|o| match o {
                    Operand::IdRef(id) => index.get(id).copied(),
                    _ => None,
                })
                .collect()
        })
        .collect()
}

fn check_function(m: &Module, f: &Function, problems: &mut Vec<Diagnostic>) {
    let n = f.blocks.len();
    if n == 0 {
        return;
    }
    let index: HashMap<Word, usize> = f
        .blocks
        .iter()
        .enumerate()
        .filter_map(|(i, b)| Some((b.label.as_ref()?.result_id?, i)))
        .collect();
    let succ = successors(f, &index);

    // Reverse postorder from the entry block (iterative DFS: deep CFGs must not overflow).
    let mut post = Vec::with_capacity(n);
    let mut seen = vec![false; n];
    let mut stack = vec![(0usize, 0usize)];
    seen[0] = true;
    while let Some((b, next)) = stack.pop() {
        if let Some(&s) = succ[b].get(next) {
            stack.push((b, next + 1));
            if !seen[s] {
                seen[s] = true;
                stack.push((s, 0));
            }
        } else {
            post.push(b);
        }
    }
    let mut order = vec![UNDEF; n]; // postorder number
    for (i, &b) in post.iter().enumerate() {
        order[b] = i;
    }
    let mut preds = vec![Vec::new(); n];
    for (b, ss) in succ.iter().enumerate() {
        if seen[b] {
            for &s in ss {
                preds[s].push(b);
            }
        }
    }
    let mut idom = vec![UNDEF; n];
    idom[0] = 0;
    let mut changed = true;
    while changed {
        changed = false;
        for &b in post.iter().rev().skip(1) {
            let mut new = UNDEF;
            for &p in &preds[b] {
                if idom[p] == UNDEF {
                    continue;
                }
                new = if new == UNDEF {
                    p
                } else {
                    intersect(&idom, &order, p, new)
                };
            }
            if new != UNDEF && idom[b] != new {
                idom[b] = new;
                changed = true;
            }
        }
    }
    // DFS intervals on the dominator tree: a dominates b iff pre[a] <= pre[b] && post[b] <= post[a].
    let mut children = vec![Vec::new(); n];
    for b in 0..n {
        if b != 0 && seen[b] && idom[b] != UNDEF {
            children[idom[b]].push(b);
        }
    }
    let (mut pre_n, mut post_n) = (vec![0usize; n], vec![0usize; n]);
    let mut clock = 0;
    let mut stack = vec![(0usize, 0usize)];
    pre_n[0] = clock;
    while let Some((b, next)) = stack.pop() {
        if let Some(&c) = children[b].get(next) {
            stack.push((b, next + 1));
            clock += 1;
            pre_n[c] = clock;
            stack.push((c, 0));
        } else {
            clock += 1;
            post_n[b] = clock;
        }
    }
    let dominates = |a: usize, b: usize| pre_n[a] <= pre_n[b] && post_n[b] <= post_n[a];

    // Where each local id is defined: (block, position); parameters dominate everything.
    let mut def: HashMap<Word, (usize, usize)> = HashMap::new();
    for (bi, b) in f.blocks.iter().enumerate() {
        for (pos, inst) in b.instructions.iter().enumerate() {
            if let Some(id) = inst.result_id {
                def.insert(id, (bi, pos));
            }
        }
    }
    for (bi, b) in f.blocks.iter().enumerate() {
        if !seen[bi] {
            continue; // unreachable code is never executed
        }
        for (pos, inst) in b.instructions.iter().enumerate() {
            let phi = inst.class.opcode == Op::Phi;
            for (k, operand) in inst.operands.iter().enumerate() {
                let (Operand::IdRef(id) | Operand::IdScope(id) | Operand::IdMemorySemantics(id)) =
                    operand
                else {
                    continue;
                };
                let Some(&(db, dpos)) = def.get(id) else {
                    continue; // module-scope id, parameter or label
                };
                let ok = if phi {
                    if k % 2 == 1 {
                        continue; // a parent label
                    }
                    // The value must be available at the end of the parent block.
                    match inst.operands.get(k + 1) {
                        Some(Operand::IdRef(parent)) => match index.get(parent) {
                            Some(&pb) if seen[pb] => seen[db] && dominates(db, pb),
                            _ => true, // unreachable parent: never taken
                        },
                        _ => true,
                    }
                } else if db == bi {
                    dpos < pos
                } else {
                    seen[db] && dominates(db, bi)
                };
                if !ok {
                    problems.push(m.diag(
                        format!(
                            "SPIR-V 2.16: %{id} is used where its definition does not dominate the use"
                        ),
                        inst,
                        Some(*id),
                    ));
                }
            }
        }
    }
}

fn intersect(idom: &[usize], order: &[usize], mut a: usize, mut b: usize) -> usize {
    while a != b {
        while order[a] < order[b] {
            a = idom[a];
        }
        while order[b] < order[a] {
            b = idom[b];
        }
    }
    a
}
