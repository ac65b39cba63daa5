//! Control-flow graphs of SPIR-V functions: block successors and predecessors, reverse
//! postorder and immediate dominators, shared by the validation (dominance), the spin-loop
//! analysis and codegen's block order and liveness.

use std::collections::HashMap;

use rspirv::dr::{Function, Operand};
use spirv::{Op, Word};

/// The control-flow graph of one function, over block indices.
pub struct Cfg {
    /// Block label → index.
    pub index: HashMap<Word, usize>,
    /// Successors of every block (each once).
    pub succ: Vec<Vec<usize>>,
    /// Predecessors of every block among the reachable ones.
    pub preds: Vec<Vec<usize>>,
    /// Reverse postorder of the blocks reachable from the entry.
    pub rpo: Vec<usize>,
}

impl Cfg {
    pub fn new(f: crate::view::Function<'_>) -> Cfg {
        Cfg::of_raw(f.raw())
    }

    pub(crate) fn of_raw(f: &Function) -> Cfg {
        let index: HashMap<Word, usize> = f
            .blocks
            .iter()
            .enumerate()
            .filter_map(|(i, b)| Some((b.label.as_ref()?.result_id?, i)))
            .collect();
        let succ: Vec<Vec<usize>> = f
            .blocks
            .iter()
            .map(|b| {
                let Some(last) = b.instructions.last() else {
                    return Vec::new();
                };
                let targets = match last.class.opcode {
                    Op::Branch => &last.operands[..last.operands.len().min(1)],
                    Op::BranchConditional => {
                        &last.operands[1.min(last.operands.len())..last.operands.len().min(3)]
                    }
                    Op::Switch => &last.operands[1.min(last.operands.len())..],
                    _ => &[][..],
                };
                let mut out: Vec<usize> = targets
                    .iter()
                    .filter_map(|o| match o {
                        Operand::IdRef(id) => index.get(id).copied(),
                        _ => None,
                    })
                    .collect();
                out.dedup();
                out
            })
            .collect();
        let rpo = reverse_post_order(0, &succ);
        let mut preds = vec![Vec::new(); f.blocks.len()];
        for &b in &rpo {
            for &s in &succ[b] {
                if !preds[s].contains(&b) {
                    preds[s].push(b);
                }
            }
        }
        Cfg {
            index,
            succ,
            preds,
            rpo,
        }
    }
}

/// Reverse postorder of the nodes reachable from `entry` in the graph `succ` (iterative DFS:
/// deep graphs must not overflow the stack).
pub fn reverse_post_order(entry: usize, succ: &[Vec<usize>]) -> Vec<usize> {
    let mut post = Vec::new();
    let mut seen = vec![false; succ.len()];
    let mut stack = vec![(entry, 0usize)];
    seen[entry] = true;
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
    post.reverse();
    post
}

/// Immediate dominators (Cooper, Harvey and Kennedy) of the nodes in `rpo` (reverse postorder
/// from `rpo[0]`, the root, which is its own); `usize::MAX` for nodes not in `rpo`.
pub fn immediate_dominators(rpo: &[usize], preds: &[Vec<usize>]) -> Vec<usize> {
    const UNDEF: usize = usize::MAX;
    let mut order = vec![UNDEF; preds.len()];
    for (i, &b) in rpo.iter().enumerate() {
        order[b] = i;
    }
    let mut idom = vec![UNDEF; preds.len()];
    let Some(&root) = rpo.first() else {
        return idom;
    };
    idom[root] = root;
    let mut changed = true;
    while changed {
        changed = false;
        for &b in &rpo[1..] {
            let mut new = UNDEF;
            for &p in &preds[b] {
                if idom[p] == UNDEF {
                    continue;
                }
                new = if new == UNDEF {
                    p
                } else {
                    let (mut x, mut y) = (p, new);
                    while x != y {
                        while order[x] > order[y] {
                            x = idom[x];
                        }
                        while order[y] > order[x] {
                            y = idom[y];
                        }
                    }
                    x
                };
            }
            if new != UNDEF && idom[b] != new {
                idom[b] = new;
                changed = true;
            }
        }
    }
    idom
}
