//! SSA dominance (SPIR-V 2.16): every use of an id defined in a function is dominated by its
//! definition (for an OpPhi operand: the definition dominates the end of the parent block), so
//! codegen never reads a value on a path where it was not computed. Dominators come from the
//! iterative algorithm of Cooper, Harvey and Kennedy over reverse postorder; queries use DFS
//! intervals of the dominator tree, so the whole check is linear in practice.

use std::collections::HashMap;

use rspirv::dr::{Function, Operand};
use spirv::{Op, Word};

use crate::cfg::{immediate_dominators, Cfg};
use crate::diagnostics::Diagnostic;
use crate::module::Module;

const UNDEF: usize = usize::MAX;

pub(crate) fn check_dominance(m: &Module, problems: &mut Vec<Diagnostic>) {
    for f in &m.raw.functions {
        check_function(m, f, problems);
    }
}

fn check_function(m: &Module, f: &Function, problems: &mut Vec<Diagnostic>) {
    let n = f.blocks.len();
    if n == 0 {
        return;
    }
    let cfg = Cfg::of_raw(f);
    let mut seen = vec![false; n];
    for &b in &cfg.rpo {
        seen[b] = true;
    }
    let idom = immediate_dominators(&cfg.rpo, &cfg.preds);
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
                        Some(Operand::IdRef(parent)) => match cfg.index.get(parent) {
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
