//! Checked mode's guards in vectorised kernels. Each check (translate/checks.rs) branches to a
//! cold block that reports the fault and returns from the work-group function. To the
//! vectoriser such a branch would be a varying branch out of the work-item loop, which it
//! refuses; yet a guard needs no masking: no lane continues past a failed check.
//!
//! So before the analysis each guard `brif failed, fail, cont` becomes `trapnz failed,
//! GUARD_TRAP; jump cont`, straight-line code for every pass; the vector copy turns the marker
//! into "does any active lane fail?" and, if one does, a cold dispatch to the lowest failing
//! lane's copy of the fail block (its report, with that lane's address, bounds and work-item
//! id), which returns. Vector stores after the guard thus happen only when every lane passed,
//! as in scalar code, and no lane's work is done twice. The scalar loop (the leftover
//! work-items, and the kernel when vectorisation is refused) gets its branches back.

use std::collections::HashMap;

use cranelift_codegen::cursor::{Cursor, FuncCursor};
use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::{
    self, Block, BlockArg, Function, InstBuilder, InstructionData, TrapCode, Type, Value,
};

use super::analysis::Form;
use super::rewrite::Vectoriser;
use super::ItemLoop;

/// The trap code of the marker: never executed (every marker is replaced again).
const GUARD_TRAP: TrapCode = TrapCode::unwrap_user(0x47);

/// One check taken out of the body: the marker stands where the branch was.
pub(super) struct Guard {
    /// The block the check ends.
    block: Block,
    /// The original `brif`, out of the layout while the marker stands in for it.
    brif: ir::Inst,
    /// The marker's `trapnz` and `jump`.
    marker: [ir::Inst; 2],
    /// The cold block that reports the fault and returns.
    pub(super) fail: Block,
}

/// The guards of `body`, by marker `trapnz`.
pub(super) type Guards = HashMap<ir::Inst, Guard>;

/// Whether `block` is a check's fail block: cold, ending in a return, entered without
/// arguments.
fn is_fail_block(func: &Function, block: Block) -> bool {
    func.layout.is_cold(block)
        && func
            .layout
            .last_inst(block)
            .is_some_and(|i| func.dfg.insts[i].opcode() == ir::Opcode::Return)
        && func.dfg.num_block_params(block) == 0
}

/// Replaces every guard of the work-item loop's body by its marker.
pub(super) fn take_out(func: &mut Function, lp: &ItemLoop) -> Guards {
    let mut guards = Guards::new();
    for block in super::analysis::body_blocks(func, lp) {
        let Some(brif) = func.layout.last_inst(block) else {
            continue;
        };
        let InstructionData::Brif { arg, blocks, .. } = func.dfg.insts[brif] else {
            continue;
        };
        let pool = &func.dfg.value_lists;
        let fail = blocks[0].block(pool);
        if !is_fail_block(func, fail) || blocks[0].args(pool).next().is_some() {
            continue;
        }
        let cont = blocks[1];
        let cont_block = cont.block(&func.dfg.value_lists);
        let cont_args: Vec<ir::BlockArg> = cont.args(&func.dfg.value_lists).collect();
        func.layout.remove_inst(brif);
        let mut pos = FuncCursor::new(func).at_bottom(block);
        let trap = pos.ins().trapnz(arg, GUARD_TRAP);
        let jump = pos.ins().jump(cont_block, &cont_args);
        guards.insert(
            trap,
            Guard {
                block,
                brif,
                marker: [trap, jump],
                fail,
            },
        );
    }
    guards
}

/// Gives the scalar body its branches back.
pub(super) fn put_back(func: &mut Function, guards: &Guards) {
    for guard in guards.values() {
        for inst in guard.marker {
            func.layout.remove_inst(inst);
        }
        func.layout.append_inst(guard.brif, guard.block);
    }
}

impl Vectoriser<'_> {
    /// The vector form of guard `marker`: continue when no active lane fails, else report the
    /// lowest failing lane and return.
    pub(super) fn guard(&mut self, marker: ir::Inst, fail: Block) {
        let cond = self
            .func
            .dfg
            .resolve_aliases(self.func.dfg.inst_args(marker)[0]);
        // Whether any active lane fails: from the first and last lane where the check allows,
        // so the lanes' own flags are computed only on the cold path; else from those flags.
        let fast = self
            .active
            .is_none()
            .then(|| self.any_outside(cond))
            .flatten();
        let dispatch = self.new_cold_block();
        let cont = self.new_block();
        let fails = match fast {
            Some(any) => {
                self.cursor().ins().brif(any, dispatch, &[], cont, &[]);
                self.current = dispatch;
                self.failing_lanes(cond)
            }
            None => {
                let fails = self.failing_lanes(cond);
                let mut any = fails[0];
                for &f in &fails[1..] {
                    any = self.cursor().ins().bor(any, f);
                }
                self.cursor().ins().brif(any, dispatch, &[], cont, &[]);
                self.current = dispatch;
                fails
            }
        };
        for (lane, &fails_here) in fails.iter().enumerate() {
            if lane + 1 < self.n {
                let report = self.new_cold_block();
                let next = self.new_cold_block();
                self.cursor().ins().brif(fails_here, report, &[], next, &[]);
                self.current = report;
                self.fail_block_for_lane(fail, lane);
                self.current = next;
            } else {
                // Some lane failed, and not the ones before.
                self.fail_block_for_lane(fail, lane);
            }
        }
        self.current = cont;
    }

    /// Whether any lane of a bounds check fails, from its first and last lane only: a check
    /// is `offset >u limit` (or several joined by `bor`), and when the offsets of the lanes
    /// are affine (consecutive elements, `base + lane * stride`) the lanes in between lie
    /// between those two. Two compares instead of one per lane; the lanes' own compares are
    /// then used only by the cold report, where Cranelift places them. None for other shapes,
    /// and for strides large enough for `base + (lanes - 1) * stride` to wrap around.
    fn any_outside(&mut self, cond: Value) -> Option<Value> {
        if let Form::Uniform(u) = self.form(cond) {
            return Some(u);
        }
        let inst = self.func.dfg.value_def(cond).inst()?;
        match self.func.dfg.insts[inst] {
            InstructionData::Binary {
                opcode: ir::Opcode::Bor,
                args,
            } => {
                let a = self.any_outside(self.func.dfg.resolve_aliases(args[0]))?;
                let b = self.any_outside(self.func.dfg.resolve_aliases(args[1]))?;
                Some(self.cursor().ins().bor(a, b))
            }
            InstructionData::IntCompare {
                cond: IntCC::UnsignedGreaterThan,
                args,
                ..
            } => {
                let (offset, limit) = (
                    self.func.dfg.resolve_aliases(args[0]),
                    self.func.dfg.resolve_aliases(args[1]),
                );
                let (Form::Affine { base, stride }, Form::Uniform(limit)) =
                    (self.form(offset), self.form(limit))
                else {
                    return None;
                };
                if stride.unsigned_abs() > 1 << 32 {
                    return None;
                }
                let span = stride * (self.n as i64 - 1);
                let last = self.cursor().ins().iadd_imm_s(base, span);
                let first_out = self
                    .cursor()
                    .ins()
                    .icmp(IntCC::UnsignedGreaterThan, base, limit);
                let last_out = self
                    .cursor()
                    .ins()
                    .icmp(IntCC::UnsignedGreaterThan, last, limit);
                Some(self.cursor().ins().bor(first_out, last_out))
            }
            _ => None,
        }
    }

    /// Which active lanes fail check `cond` (an i8 per lane).
    fn failing_lanes(&mut self, cond: Value) -> Vec<Value> {
        match (self.form(cond), self.active) {
            (Form::Mask(m), active) => {
                let m = match active {
                    Some(a) => self.cursor().ins().band(m, a),
                    None => m,
                };
                (0..self.n as u8).map(|k| self.lane_on(m, k)).collect()
            }
            (_, active) => {
                let mut l = self.lanes(cond);
                if let Some(a) = active {
                    for (k, lane) in l.iter_mut().enumerate() {
                        let on = self.lane_on(a, k as u8);
                        *lane = self.cursor().ins().band(*lane, on);
                    }
                }
                l
            }
        }
    }

    fn new_cold_block(&mut self) -> Block {
        let b = self.new_block();
        self.func.layout.set_cold(b);
        b
    }

    /// `fail`'s instructions (its report and return) on lane `lane`'s values.
    fn fail_block_for_lane(&mut self, fail: Block, lane: usize) {
        let insts: Vec<ir::Inst> = self.func.layout.block_insts(fail).collect();
        let mut local: HashMap<Value, Value> = HashMap::new();
        for inst in insts {
            let ctrl = self.func.dfg.ctrl_typevar(inst);
            let raw: Vec<Value> = self
                .func
                .dfg
                .inst_values(inst)
                .map(|v| self.func.dfg.resolve_aliases(v))
                .collect();
            let args: Vec<Value> = raw
                .into_iter()
                .map(|v| match local.get(&v) {
                    Some(&mine) => mine,
                    None => self.lanes(v)[lane],
                })
                .collect();
            let old = self.func.dfg.inst_results(inst).to_vec();
            let new = self.clone_with(inst, ctrl, &args);
            local.extend(old.into_iter().zip(new));
        }
    }

    /// Runs `fast` where `guard` holds and `slow` otherwise, joining their results (one value
    /// of type `ty` each, or none).
    pub(super) fn diamond(
        &mut self,
        guard: Value,
        ty: Option<Type>,
        fast: &mut dyn FnMut(&mut Self) -> Option<Value>,
        slow: &mut dyn FnMut(&mut Self) -> Option<Value>,
    ) -> Option<Value> {
        let types: Vec<Type> = ty.into_iter().collect();
        self.diamond_values(
            guard,
            &types,
            &mut |s: &mut Self| fast(s).into_iter().collect(),
            &mut |s: &mut Self| slow(s).into_iter().collect(),
        )
        .pop()
    }

    /// Runs `fast` where `guard` holds and `slow` otherwise, joining their results (values of
    /// `types`, in order).
    pub(super) fn diamond_values(
        &mut self,
        guard: Value,
        types: &[Type],
        fast: &mut dyn FnMut(&mut Self) -> Vec<Value>,
        slow: &mut dyn FnMut(&mut Self) -> Vec<Value>,
    ) -> Vec<Value> {
        let (f, sl, join) = (self.new_block(), self.new_block(), self.new_block());
        let params: Vec<Value> = types
            .iter()
            .map(|&t| self.func.dfg.append_block_param(join, t))
            .collect();
        self.cursor().ins().brif(guard, f, &[], sl, &[]);
        self.current = f;
        let args: Vec<BlockArg> = fast(self).into_iter().map(BlockArg::Value).collect();
        self.cursor().ins().jump(join, &args);
        self.current = sl;
        let args: Vec<BlockArg> = slow(self).into_iter().map(BlockArg::Value).collect();
        self.cursor().ins().jump(join, &args);
        self.current = join;
        params
    }
}
