//! The work-item frames of barrier regions, as the vectoriser sees them: which accesses
//! address the frame, whether a region does enough besides frame traffic to be widened, and
//! the frame loads a region's loops can take out of the loop.

use std::collections::HashMap;

use cranelift_codegen::ir::{self, Block, Function, InstructionData, Value};

use super::analysis::NaturalLoop;
use crate::cfg::successors;

/// Whether a loop-free barrier region (`body`) does enough besides moving values through the
/// work-item frames to be worth widening: at least [`REGION_WORK`] memory accesses outside
/// the frames and [`FRAME_SHARE`] times as many as frame accesses. (A tree reduction's step,
/// one local load and store beside its frame traffic, is not; a tile product unrolled by the
/// compiler between two barriers, 32 local loads and one accumulator, is; so is a reduction's
/// per-item part unrolled to eight loads: 0.95–1.0 ms widened against 1.35–2.1 ms scalar for
/// 10 M floats on AVX-512, where 16 had left it scalar.)
pub(super) fn outweighs_frame_traffic(func: &Function, body: &[Block], frame: Value) -> bool {
    let (mut frame_accesses, mut other_accesses) = (0usize, 0usize);
    for &block in body {
        for inst in func.layout.block_insts(block) {
            let op = func.dfg.insts[inst].opcode();
            if !(op.can_load() || op.can_store()) {
                continue;
            }
            if addresses_frame(func, inst, frame) {
                frame_accesses += 1;
            } else {
                other_accesses += 1;
            }
        }
    }
    other_accesses >= REGION_WORK && other_accesses >= FRAME_SHARE * frame_accesses
}

/// See [`outweighs_frame_traffic`].
const REGION_WORK: usize = 8;
const FRAME_SHARE: usize = 4;

/// Whether `inst` loads from or stores to an address computed from `frame` (by adding to it).
pub(super) fn addresses_frame(func: &Function, inst: ir::Inst, frame: Value) -> bool {
    let address = match func.dfg.insts[inst] {
        InstructionData::Load { arg, .. } => arg,
        InstructionData::Store { args, .. } => args[1],
        _ => return false,
    };
    let mut todo = vec![(address, 0)];
    while let Some((v, depth)) = todo.pop() {
        let v = func.dfg.resolve_aliases(v);
        if v == frame {
            return true;
        }
        let Some(def) = func.dfg.value_def(v).inst() else {
            continue;
        };
        if let InstructionData::Binary {
            opcode: ir::Opcode::Iadd,
            args,
        } = func.dfg.insts[def]
        {
            if depth < 6 {
                todo.extend(args.iter().map(|&a| (a, depth + 1)));
            }
        }
    }
    false
}

/// Moves the frame loads of `loops` whose address is computed outside the loop to the end of
/// the loop's one entering block, when nothing in the loop stores to the frame. A region
/// reads each value that lives across barriers from the frame at every use (the region may be
/// entered at any resume point, where only the frame holds it); inside a loop that is a load
/// per iteration, and loops that touch the frame are not widened. The frame is the work-item's
/// own memory, always valid, so a load executed when the loop then runs no iteration is harmless.
pub(super) fn hoist_frame_loads(
    func: &mut Function,
    loops: &HashMap<Block, NaturalLoop>,
    frame: Value,
) {
    // Outer loops first: a load of an inner loop goes straight out of the whole nest.
    let mut headers: Vec<Block> = loops.keys().copied().collect();
    headers.sort_by_key(|h| (std::cmp::Reverse(loops[h].blocks.len()), h.as_u32()));
    for header in headers {
        let l = &loops[&header];
        let entering: Vec<Block> = func
            .layout
            .blocks()
            .filter(|b| !l.blocks.contains(b) && successors(func, *b).contains(&header))
            .collect();
        let [preheader] = entering[..] else {
            continue;
        };
        let Some(terminator) = func.layout.last_inst(preheader) else {
            continue;
        };
        let mut loads = Vec::new();
        let mut stores_frame = false;
        for &b in &l.blocks {
            for inst in func.layout.block_insts(b) {
                if !addresses_frame(func, inst, frame) {
                    continue;
                }
                match func.dfg.insts[inst] {
                    InstructionData::Load {
                        opcode: ir::Opcode::Load,
                        arg,
                        ..
                    } => {
                        let arg = func.dfg.resolve_aliases(arg);
                        let outside = match func.dfg.value_def(arg) {
                            ir::ValueDef::Result(d, _) => func
                                .layout
                                .inst_block(d)
                                .is_some_and(|db| !l.blocks.contains(&db)),
                            ir::ValueDef::Param(pb, _) => !l.blocks.contains(&pb),
                            _ => false,
                        };
                        if outside {
                            loads.push(inst);
                        }
                    }
                    _ => stores_frame = true,
                }
            }
        }
        if stores_frame {
            continue;
        }
        for inst in loads {
            func.layout.remove_inst(inst);
            func.layout.insert_inst(inst, terminator);
        }
    }
}
