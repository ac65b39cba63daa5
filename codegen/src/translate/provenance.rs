//! Which objects each pointer of a function may point into, for checked mode (checks.rs): a
//! forward analysis over the SPIR-V function that follows pointers from their roots — the
//! function's parameters, its `OpVariable`s and the module's variables — through access
//! chains, pointer casts, copies, selects and phis (to a fixed point, for loop-carried
//! pointers). A select or phi of pointers into different objects points into one of them: it
//! keeps them all as candidates (up to [`MAX_CANDIDATES`]), and its accesses are checked
//! against each, so `sel ? private_array : global_buffer` stays bounded by the two objects
//! instead of falling back to the run-time lookup. A pointer that comes from anywhere else (a
//! load, an integer, a call's result), or has too many candidates, has no entry.

use std::collections::HashMap;

use ferrocl_frontend::spirv::{Op, Word};
use ferrocl_frontend::{Function, Module, Select, Type};

/// The object a pointer points into.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Origin {
    /// The function's `index`th parameter's object (whatever the caller passed).
    Param(usize),
    /// A function-scope or module-scope `OpVariable`.
    Variable(Word),
}

/// At most this many objects per pointer: each is one inline compare at every access.
pub(crate) const MAX_CANDIDATES: usize = 4;

/// The objects a pointer may point into: sorted, without repeats, never empty.
pub(crate) type Origins = Vec<Origin>;

/// Lattice value of one id while the analysis runs.
#[derive(Clone, PartialEq, Eq)]
enum Fact {
    Known(Origins),
    /// The pointer comes from somewhere untracked, or may point into too many objects.
    Unknown,
}

/// The union of two facts (None: not known yet).
fn meet(a: Option<Fact>, b: Option<Fact>) -> Option<Fact> {
    match (a, b) {
        (None, x) | (x, None) => x,
        (Some(Fact::Known(mut x)), Some(Fact::Known(y))) => {
            x.extend(y);
            x.sort_unstable();
            x.dedup();
            Some(if x.len() <= MAX_CANDIDATES {
                Fact::Known(x)
            } else {
                Fact::Unknown
            })
        }
        _ => Some(Fact::Unknown),
    }
}

/// The candidate objects of every pointer-typed id of `f` whose objects are known.
pub(crate) fn pointer_origins(m: &Module, f: Function<'_>) -> HashMap<Word, Origins> {
    let mut facts: HashMap<Word, Fact> = HashMap::new();
    for (i, p) in f.params().enumerate() {
        if let Some(id) = p.result_id() {
            facts.insert(id, Fact::Known(vec![Origin::Param(i)]));
        }
    }
    let is_pointer =
        |ty: Option<Word>| matches!(ty.and_then(|t| m.ty(t)), Some(Type::Pointer { .. }));
    // The fact of an operand: module variables are their own roots.
    let fact_of = |facts: &HashMap<Word, Fact>, id: Word| -> Option<Fact> {
        facts.get(&id).cloned().or_else(|| {
            m.global(id)
                .filter(|g| g.opcode() == Op::Variable)
                .map(|_| Fact::Known(vec![Origin::Variable(id)]))
        })
    };
    loop {
        let mut changed = false;
        for inst in f.instructions() {
            let Some(id) = inst.result_id() else {
                continue;
            };
            if !is_pointer(inst.result_type()) {
                continue;
            }
            let fact = match inst.opcode() {
                Op::FunctionParameter => continue,
                Op::Variable => Some(Fact::Known(vec![Origin::Variable(id)])),
                Op::AccessChain
                | Op::InBoundsAccessChain
                | Op::PtrAccessChain
                | Op::InBoundsPtrAccessChain
                | Op::CopyObject
                | Op::PtrCastToGeneric
                | Op::GenericCastToPtr
                | Op::GenericCastToPtrExplicit
                | Op::Bitcast => match inst.base_pointer() {
                    Ok(base) if is_pointer(m.type_of(base)) => fact_of(&facts, base),
                    _ => Some(Fact::Unknown),
                },
                Op::Select => match inst.select() {
                    Ok(Select {
                        accept: a,
                        reject: b,
                        ..
                    }) => {
                        let (a, b) = (fact_of(&facts, a), fact_of(&facts, b));
                        // Both sides must be known before the select is.
                        if a.is_none() || b.is_none() {
                            None
                        } else {
                            meet(a, b)
                        }
                    }
                    _ => Some(Fact::Unknown),
                },
                Op::Phi => {
                    let mut acc = None;
                    for pair in inst.phi_pairs() {
                        match pair {
                            Ok((v, _)) if v == id => {}
                            Ok((v, _)) => acc = meet(acc, fact_of(&facts, v)),
                            Err(_) => acc = Some(Fact::Unknown),
                        }
                    }
                    acc
                }
                _ => Some(Fact::Unknown),
            };
            let Some(fact) = fact else {
                continue;
            };
            // Facts only grow (union), so the loop ends: each id changes at most
            // MAX_CANDIDATES + 1 times.
            let merged = meet(facts.get(&id).cloned(), Some(fact)).unwrap_or(Fact::Unknown);
            if facts.get(&id) != Some(&merged) {
                facts.insert(id, merged);
                changed = true;
            }
        }
        if !changed {
            break;
        }
    }
    facts
        .into_iter()
        .filter_map(|(id, fact)| match fact {
            Fact::Known(origins) => Some((id, origins)),
            Fact::Unknown => None,
        })
        .collect()
}
