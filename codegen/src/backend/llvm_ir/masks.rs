//! Lane masks: the vector values of a CLIF function whose every lane is all ones or all
//! zeros. Cranelift has no vector of booleans, so comparisons give such masks and the
//! vectoriser blends with `bitselect` on them; written as LLVM `and`/`xor`/`or`, a blend of
//! 64-bit lanes by a mask widened from 32-bit lanes reached the x86 code generator as a mask
//! rebuilt one bit at a time (`vpextrb` and `kshift` per lane). Known masks let `bitselect`
//! be a lane `select` and a mask's halves be split as booleans, which LLVM keeps in mask
//! registers.
//!
//! Masks are found with the scalars they are built from: booleans (0 or 1: comparison
//! results) and scalar masks (0 or -1: a negated boolean), as the vectoriser assembles a mask
//! lane by lane where work-items carried their own condition.

use std::collections::{HashMap, HashSet};

use cranelift_codegen::ir::{self, BlockArg, InstructionData, Opcode, Value};

/// What a value is known to hold.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// 0 or 1 (a scalar).
    Bool,
    /// Every lane (or the scalar) all zeros or all ones.
    Mask,
}

/// The function's lane masks (vector values only). Block parameters are assumed to be what
/// they are fed until an incoming argument is not (a loop-carried mask is a mask), so the
/// answer is the greatest consistent assignment.
pub(super) fn lane_masks(func: &ir::Function) -> HashSet<Value> {
    let dfg = &func.dfg;
    // Scalar code (most functions Cranelift keeps) has no masks to find.
    if !dfg.values().any(|v| dfg.value_type(v).is_vector()) {
        return HashSet::new();
    }
    // What flows into each integer block parameter.
    let mut incoming: HashMap<Value, Vec<Value>> = HashMap::new();
    let entry = func.layout.entry_block();
    for block in func.layout.blocks() {
        if Some(block) != entry {
            for &p in dfg.block_params(block) {
                if dfg.value_type(p).lane_type().is_int() {
                    incoming.entry(p).or_default();
                }
            }
        }
    }
    // Parameters fed by something other than a value of this function.
    let mut opaque = HashSet::new();
    for block in func.layout.blocks() {
        for inst in func.layout.block_insts(block) {
            for dest in dfg.insts[inst].branch_destination(&dfg.jump_tables, &dfg.exception_tables)
            {
                let target = dest.block(&dfg.value_lists);
                for (&p, arg) in dfg
                    .block_params(target)
                    .iter()
                    .zip(dest.args(&dfg.value_lists))
                {
                    if let Some(list) = incoming.get_mut(&p) {
                        match arg {
                            BlockArg::Value(v) => list.push(dfg.resolve_aliases(v)),
                            _ => {
                                opaque.insert(p);
                            }
                        }
                    }
                }
            }
        }
    }
    let mut params: HashMap<Value, Vec<Kind>> = incoming
        .keys()
        .filter(|p| !opaque.contains(p))
        .map(|&p| {
            let kinds = if dfg.value_type(p).is_vector() {
                vec![Kind::Mask]
            } else {
                vec![Kind::Bool, Kind::Mask]
            };
            (p, kinds)
        })
        .collect();
    loop {
        let mut known: HashMap<Value, Vec<Kind>> = params.clone();
        for block in func.layout.blocks() {
            for inst in func.layout.block_insts(block) {
                let [result] = dfg.inst_results(inst) else {
                    continue;
                };
                let args: Vec<Value> = dfg
                    .inst_args(inst)
                    .iter()
                    .map(|&a| dfg.resolve_aliases(a))
                    .collect();
                let kinds: Vec<Kind> = [Kind::Bool, Kind::Mask]
                    .into_iter()
                    .filter(|&k| makes(func, inst, &args, k, &known))
                    .collect();
                if !kinds.is_empty() {
                    known.insert(*result, kinds);
                }
            }
        }
        let mut changed = false;
        for (p, kinds) in &mut params {
            let before = kinds.len();
            kinds.retain(|k| incoming[p].iter().all(|v| is(&known, *v, *k)));
            changed |= kinds.len() != before;
        }
        if !changed {
            return known
                .into_iter()
                .filter(|(v, kinds)| dfg.value_type(*v).is_vector() && kinds.contains(&Kind::Mask))
                .map(|(v, _)| v)
                .collect();
        }
    }
}

fn is(known: &HashMap<Value, Vec<Kind>>, v: Value, kind: Kind) -> bool {
    known.get(&v).is_some_and(|k| k.contains(&kind))
}

/// Whether `inst`'s result is of `kind` when the values in `known` are what they say
/// (`args`: its arguments, aliases resolved).
fn makes(
    func: &ir::Function,
    inst: ir::Inst,
    args: &[Value],
    kind: Kind,
    known: &HashMap<Value, Vec<Kind>>,
) -> bool {
    let dfg = &func.dfg;
    let all = |vs: &[Value], k: Kind| vs.iter().all(|&v| is(known, v, k));
    let result_ty = dfg.value_type(dfg.inst_results(inst)[0]);
    // Float-typed vectors can hold masks (a comparison's bits reinterpreted), never booleans.
    if !(result_ty.lane_type().is_int() || result_ty.is_vector() && kind == Kind::Mask) {
        return false;
    }
    let vector = result_ty.is_vector();
    use Opcode::*;
    match (dfg.insts[inst].opcode(), kind) {
        // Scalar comparisons give 0 or 1, vector ones lanes of 0 or -1.
        (Icmp | Fcmp, Kind::Bool) => !vector,
        (Icmp | Fcmp, Kind::Mask) => vector,
        // Anything and a boolean is a boolean (`x & 1` takes a lane's bit).
        (Band, Kind::Bool) => args.iter().any(|&v| is(known, v, kind)),
        (Band | Bor | Bxor, _) => all(args, kind),
        (Bnot, Kind::Mask) => all(args, kind),
        (Bitselect, Kind::Mask) => all(args, kind),
        (Select | SelectSpectreGuard, _) => all(&args[1..], kind),
        (Iconst, _) => match dfg.insts[inst] {
            InstructionData::UnaryImm { imm, .. } => {
                let bits = result_ty.bits().clamp(1, 64);
                let ones = u64::MAX >> (64 - bits);
                let v = imm.bits() as u64 & ones;
                v == 0 || v == if kind == Kind::Bool { 1 } else { ones }
            }
            _ => false,
        },
        // A negated boolean is a scalar mask.
        (Ineg, Kind::Mask) => !vector && all(args, Kind::Bool),
        (Uextend | Ireduce, Kind::Bool) => all(args, kind),
        (Sextend | Ireduce, Kind::Mask) => !vector && all(args, kind),
        // The other lanes of `scalar_to_vector` are zero.
        (Splat | Insertlane | ScalarToVector, Kind::Mask) => vector && all(args, kind),
        // Sign extension and saturating narrowing keep 0 and -1.
        (SwidenLow | SwidenHigh | Snarrow | Shuffle, Kind::Mask) => all(args, kind),
        // The bits reinterpreted: lanes as wide or narrower than the mask's lanes are masks.
        (Bitcast, Kind::Mask) => {
            let from = dfg.value_type(args[0]);
            from.is_vector() && result_ty.lane_bits() <= from.lane_bits() && all(args, kind)
        }
        (Vconst, Kind::Mask) => match &dfg.insts[inst] {
            InstructionData::UnaryConst {
                constant_handle, ..
            } => {
                let bytes = dfg.constants.get(*constant_handle).as_slice();
                let lane = (result_ty.lane_bits() / 8) as usize;
                lane > 0
                    && bytes
                        .chunks(lane)
                        .all(|l| l.iter().all(|&b| b == 0) || l.iter().all(|&b| b == 0xff))
            }
            _ => false,
        },
        _ => false,
    }
}
