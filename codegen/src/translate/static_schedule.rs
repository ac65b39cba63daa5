//! Static barrier schedules (kernel.rs `build_regions`): how each region copy's work-items
//! end it (`region_exits`), whether the whole kernel's regions can chain at compile time
//! (`StaticSchedule`), and the tail of a region with several ways out, which goes on
//! statically only when every work-item stopped at the same point (`dispatch_if_uniform`).

use std::collections::{HashMap, HashSet};

use cranelift_codegen::ir::{self, condcodes::IntCC, types, BlockArg, InstBuilder};

use super::function::{frame_flags, Translator, RESUME_DONE};

/// Work-items in the group: the product of the local sizes.
pub(super) fn group_items(t: &mut Translator) -> ir::Value {
    let ls = t.wi.local_size;
    let items = t.b.ins().imul(ls[0], ls[1]);
    t.b.ins().imul(items, ls[2])
}

/// The resume state in the frame of the work-item of linear local id `item`.
pub(super) fn item_state(
    t: &mut Translator,
    frames: ir::Value,
    frame_stride: ir::Value,
    item: ir::Value,
) -> ir::Value {
    let offset = t.b.ins().imul(item, frame_stride);
    let frame = t.b.ins().iadd(frames, offset);
    t.b.ins().load(types::I32, frame_flags(), frame, 0)
}

/// The tail of an unchecked region copy with several ways out (`targets`, each exit with the
/// block that continues it): when every work-item's resume state (in the frames) equals
/// work-item 0's, the exit it names; otherwise (some returned early, or a divergent barrier)
/// `rounds`, the dynamic rounds of the checked copies, which resume each work-item from its
/// own state.
pub(super) fn dispatch_if_uniform(
    t: &mut Translator,
    frames: ir::Value,
    frame_stride: ir::Value,
    targets: &[(RegionExit, ir::Block)],
    rounds: ir::Block,
) {
    let first = t.b.ins().load(types::I32, frame_flags(), frames, 0);
    let items = group_items(t);
    let head = t.b.create_block();
    t.b.append_block_param(head, types::I64);
    let one = t.b.ins().iconst(types::I64, 1);
    t.b.ins().jump(head, &[BlockArg::Value(one)]);
    t.b.switch_to_block(head);
    let i = t.b.block_params(head)[0];
    let scanned = t.b.ins().icmp(IntCC::UnsignedGreaterThanOrEqual, i, items);
    let probe = t.b.create_block();
    let agreed = t.b.create_block();
    t.b.ins().brif(scanned, agreed, &[], probe, &[]);
    t.b.switch_to_block(probe);
    let state = item_state(t, frames, frame_stride, i);
    let same = t.b.ins().icmp(IntCC::Equal, state, first);
    let next = t.b.ins().iadd_imm_s(i, 1);
    t.b.ins()
        .brif(same, head, &[BlockArg::Value(next)], rounds, &[]);
    t.b.switch_to_block(agreed);
    for &(exit, block) in targets {
        let want = match exit {
            RegionExit::Point(p) => t.point_value(p),
            RegionExit::Returned => t.b.ins().iconst(types::I32, RESUME_DONE),
        };
        let here = t.b.ins().icmp(IntCC::Equal, first, want);
        let other = t.b.create_block();
        t.b.ins().brif(here, block, &[], other, &[]);
        t.b.switch_to_block(other);
    }
    t.b.ins().jump(rounds, &[]);
}

/// How a region's work-items end their part of a round.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum RegionExit {
    /// At the barrier of this resume point.
    Point(i64),
    Returned,
}

/// The ways out of the region that starts at `start`: the stops (barrier blocks and the
/// return block) control can reach from it without leaving through `latch` otherwise, in the
/// order found; None when there are none or a path reaches the latch another way.
pub(super) fn region_exits(
    func: &ir::Function,
    start: ir::Block,
    stops: &HashMap<ir::Block, i64>,
    returned: ir::Block,
    latch: ir::Block,
) -> Option<Vec<RegionExit>> {
    // Successors from each visited block's terminator: linear in the region, not the function.
    let successors = |block| crate::cfg::successors(func, block);
    let mut seen = HashSet::new();
    let mut stack = vec![start];
    let mut exits = Vec::new();
    while let Some(block) = stack.pop() {
        if !seen.insert(block) {
            continue;
        }
        let here = if let Some(&k) = stops.get(&block) {
            RegionExit::Point(k)
        } else if block == returned {
            RegionExit::Returned
        } else if block == latch {
            return None;
        } else {
            stack.extend(successors(block));
            continue;
        };
        if !exits.contains(&here) {
            exits.push(here);
        }
    }
    (!exits.is_empty()).then_some(exits)
}

/// Static schedules. When every region met from the entry has known ways out
/// (`region_exits`), the rounds chain region to region at compile time, with no resume state
/// checked or scanned per work-item.
///
/// When each region has one way out (barriers in straight-line code, unrolled loops) every
/// work-item of the group runs every round of it and stops where the others stop; the copies
/// are patched in place and store no resume state either. This costs nothing per work-item
/// and divergence cannot arise.
///
/// A region with several ways out (a barrier in a loop: the next iteration's barrier, or the
/// one after the loop, or the return) needs each work-item's state to know where the group
/// goes on, and work-items that returned early (undefined behaviour by the letter of the
/// spec, common in practice) must not run later regions. So a second pass builds a copy of
/// every region without the resume-state checks at its start, entered from the first round:
/// regions with one way out chain directly; one with several keeps its state stores, and its
/// tail goes on statically when every work-item stopped at the same point — as the spec's
/// uniform barriers make them — and to the checked copies' dynamic rounds otherwise
/// ([`dispatch_if_uniform`]). Kernels with sub-group points keep dynamic rounds (their members
/// resume by their own states), and so does checked mode, whose scan reports divergence.
#[derive(Default)]
pub(super) struct StaticSchedule {
    /// Per region copy: its ways out.
    pub(super) exits: Vec<Option<Vec<RegionExit>>>,
    /// The `iconst.i8 0` each copy's tail branches on to go straight to its exit's region.
    pub(super) flags: Vec<ir::Inst>,
    /// Per region copy, every store of a work-item's resume state (barrier stops, returns).
    pub(super) state_stores: Vec<Vec<ir::Inst>>,
    /// Each region's per-work-item check of its resume state.
    pub(super) checks: Vec<StateCheck>,
}

/// The ways out of a kernel's regions, when all are known.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum ExitShape {
    /// One per region.
    Single,
    /// Several for some region.
    Several,
}

/// A region's `brif state == point, go, skip` at each work-item.
pub(super) struct StateCheck {
    pub(super) branch: ir::Inst,
    pub(super) go: ir::Block,
    /// The compare and the state load, in removal order (loads are not dead-code eliminated).
    pub(super) dead: [ir::Inst; 2],
}

impl StaticSchedule {
    /// The ways out of the region copies reachable from the entry; None when some are not
    /// known.
    pub(super) fn shape(&self) -> Option<ExitShape> {
        let mut visited = HashSet::new();
        let mut stack = vec![0usize];
        let mut shape = ExitShape::Single;
        while let Some(copy) = stack.pop() {
            if !visited.insert(copy) {
                continue;
            }
            let Some(Some(exits)) = self.exits.get(copy) else {
                return None;
            };
            if exits.len() > 1 {
                shape = ExitShape::Several;
            }
            stack.extend(exits.iter().filter_map(|e| match e {
                RegionExit::Point(p) => Some(*p as usize),
                RegionExit::Returned => None,
            }));
        }
        Some(shape)
    }

    /// Turns the kernel's rounds static if it qualifies; returns whether it did.
    pub(super) fn apply_if_static(self, t: &mut Translator) -> bool {
        if self.shape() != Some(ExitShape::Single) {
            return false;
        }
        for flag in self.flags {
            t.b.func.replace(flag).iconst(types::I8, 1);
        }
        for store in self.state_stores.into_iter().flatten() {
            t.b.func.layout.remove_inst(store);
        }
        for check in self.checks {
            t.b.func.replace(check.branch).jump(check.go, &[]);
            for inst in check.dead {
                t.b.func.layout.remove_inst(inst);
            }
        }
        true
    }
}
