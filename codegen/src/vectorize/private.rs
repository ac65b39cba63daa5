//! Private memory in vectorised kernels: a work-item's private arrays (and whatever else the
//! translator keeps in stack slots: by-value struct arguments, out-parameters, checked mode's
//! tables) belong to that work-item alone, so the four lanes of a vector iteration each get a
//! copy. A slot the body uses gets a twin with room for four copies, `stride` bytes apart
//! (its size rounded up to 16, so each copy keeps the slot's 16-byte alignment, and the
//! translator's rounding up of stricter alignments stays inside each copy); the slot's address
//! becomes the affine value `twin + lane * stride`, and everything derived from it follows the
//! vectoriser's usual forms — an element at a uniform index is one access per lane (or a
//! transpose of whole rows, transpose.rs), a varying index one access per lane. The scalar loop
//! for the leftover work-items keeps the original slot.
//!
//! A slot accessed only as aligned 32-bit words (the usual `uint w[16]` of a hash, and the
//! components of its `uint4` words) is *interleaved* instead: word `w` of lane `k` lives at
//! `slot + 16 * w + 4 * k`, so the lanes' copies of one word are one vector and an access at a
//! uniform index is one vector load or store. [`interleave_word_slots`] rewrites the body for
//! it before the vectoriser runs: the slot becomes a lane count times as large and every byte
//! offset added to its address is scaled by that count, which is also a valid layout for the
//! scalar loop (lane 0's words); the vector copy then gives the slot's address the stride 4.
//! (At four lanes, word `w` of lane `k` is at `16 * w + 4 * k`; at `n` lanes, `4n * w + 4k`.)
//!
//! Without this, a kernel with a private array stayed scalar: the hashing kernels of a
//! password-recovery tool ("private memory on the stack (each work-item needs its own)"). With
//! one lane-major copy per lane its MD5 kernel ran at 8.7 MH/s against 14.1 scalar, each
//! private word access being four scalar accesses.

use std::collections::{HashMap, HashSet};

use cranelift_codegen::cursor::{Cursor, FuncCursor};
use cranelift_codegen::ir::{
    self, Block, Function, InstBuilder, InstructionData, Opcode, Value, ValueDef,
};

use super::analysis::Form;
use super::rewrite::Vectoriser;
use super::Refusal;

/// At most this many bytes of private stack slots per work-item are copied per lane: four
/// copies of more would take a good part of a worker's stack (codegen's
/// `KERNEL_THREAD_STACK_BYTES`) and their first touch costs more than the vector loop saves.
const MAX_PRIVATE_BYTES: u64 = 256 << 10;

/// Distance between two lanes' copies of a slot of `size` bytes.
fn lane_stride(size: u32) -> i64 {
    i64::from(size.next_multiple_of(16).max(16))
}

/// Refuses a body whose private slots are too large for a copy per lane.
pub(super) fn check_budget(func: &Function, body: &[Block]) -> Result<(), Refusal> {
    let mut slots = HashSet::new();
    for &b in body {
        for inst in func.layout.block_insts(b) {
            if let InstructionData::StackAddr { stack_slot, .. } = func.dfg.insts[inst] {
                slots.insert(stack_slot);
            }
        }
    }
    let bytes: u64 = slots
        .iter()
        .map(|&s| lane_stride(func.sized_stack_slots[s].size) as u64)
        .sum();
    if bytes > MAX_PRIVATE_BYTES {
        return Err("private memory too large for a copy per work-item of a vector iteration");
    }
    Ok(())
}

impl Vectoriser<'_> {
    /// The twin of `slot` with a copy per lane, and the distance between copies.
    fn lane_slot(&mut self, slot: ir::StackSlot) -> (ir::StackSlot, i64) {
        if let Some(&twin) = self.lane_slots.get(&slot) {
            return twin;
        }
        if self.interleaved.contains(&slot) {
            // Already a word per lane, one word apart.
            self.lane_slots.insert(slot, (slot, 4));
            return (slot, 4);
        }
        let data = &self.func.sized_stack_slots[slot];
        let stride = lane_stride(data.size);
        let twin = ir::StackSlotData::new(
            ir::StackSlotKind::ExplicitSlot,
            (stride * self.n as i64) as u32,
            data.align_shift.max(4),
        );
        let twin = (self.func.create_sized_stack_slot(twin), stride);
        self.lane_slots.insert(slot, twin);
        twin
    }

    /// `stack_addr slot, offset`: lane k's copy, `twin + offset + k * stride`. Loads and
    /// stores through it are ordinary accesses of the lanes' addresses (masked inside a
    /// branch the lanes take differently, like any other).
    pub(super) fn private_address(&mut self, inst: ir::Inst) {
        let InstructionData::StackAddr {
            stack_slot, offset, ..
        } = self.func.dfg.insts[inst]
        else {
            unreachable!("stack_addr");
        };
        let (twin, stride) = self.lane_slot(stack_slot);
        let result = self.func.dfg.inst_results(inst)[0];
        let t = self.ty(result);
        let base = self.cursor().ins().stack_addr(t, twin, offset);
        self.define(result, Form::Affine { base, stride });
    }
}

/// Interleaves every private slot of `body` that is accessed only as aligned 32-bit words
/// (see the module comment); returns those slots.
pub(super) fn interleave_word_slots(
    func: &mut Function,
    body: &[Block],
    lanes: usize,
) -> HashSet<ir::StackSlot> {
    let mut addresses: HashMap<ir::StackSlot, Vec<ir::Inst>> = HashMap::new();
    for &b in body {
        for inst in func.layout.block_insts(b) {
            if let InstructionData::StackAddr { stack_slot, .. } = func.dfg.insts[inst] {
                addresses.entry(stack_slot).or_default().push(inst);
            }
        }
    }
    if addresses.is_empty() {
        return HashSet::new();
    }
    let uses = uses_of(func);
    let mut done = HashSet::new();
    for (slot, roots) in addresses {
        let Some(plan) = word_plan(func, &uses, &roots, lanes) else {
            continue;
        };
        apply(func, slot, &plan, lanes);
        done.insert(slot);
    }
    done
}

/// Every use of every value: (instruction, operand index in `inst_values`).
fn uses_of(func: &Function) -> HashMap<Value, Vec<(ir::Inst, usize)>> {
    let mut uses: HashMap<Value, Vec<(ir::Inst, usize)>> = HashMap::new();
    for b in func.layout.blocks() {
        for inst in func.layout.block_insts(b) {
            for (i, v) in func.dfg.inst_values(inst).enumerate() {
                uses.entry(func.dfg.resolve_aliases(v))
                    .or_default()
                    .push((inst, i));
            }
        }
    }
    uses
}

/// What scaling a word slot's addressing takes.
#[derive(Default)]
struct WordPlan {
    roots: Vec<ir::Inst>,
    /// `iadd`/`isub` of an address and a byte offset: the offset operand's index.
    scaled_operands: Vec<(ir::Inst, usize)>,
    /// Loads and stores through an address: their immediate offsets.
    scaled_immediates: Vec<ir::Inst>,
}

/// The plan for the slot whose addresses are `roots`, if every use of every address derived
/// from them is an offset by a multiple of four or a 32-bit load or store at a multiple of four.
fn word_plan(
    func: &Function,
    uses: &HashMap<Value, Vec<(ir::Inst, usize)>>,
    roots: &[ir::Inst],
    lanes: usize,
) -> Option<WordPlan> {
    let mut plan = WordPlan {
        roots: roots.to_vec(),
        ..WordPlan::default()
    };
    let mut tree: HashSet<Value> = HashSet::new();
    let mut work: Vec<Value> = Vec::new();
    for &r in roots {
        let InstructionData::StackAddr { offset, .. } = func.dfg.insts[r] else {
            return None;
        };
        if i64::from(offset) % 4 != 0 {
            return None;
        }
        let v = func.dfg.first_result(r);
        tree.insert(v);
        work.push(v);
    }
    while let Some(v) = work.pop() {
        for &(inst, index) in uses.get(&v).map(Vec::as_slice).unwrap_or(&[]) {
            let data = func.dfg.insts[inst];
            match data {
                InstructionData::Binary {
                    opcode: opcode @ (Opcode::Iadd | Opcode::Isub),
                    args,
                } => {
                    let other = 1 - index;
                    // An address minus an address, or an offset minus an address: not an
                    // address of the slot.
                    if opcode == Opcode::Isub && index == 1 {
                        return None;
                    }
                    let y = func.dfg.resolve_aliases(args[other]);
                    if tree.contains(&y) || !multiple_of_four(func, y, 6) {
                        return None;
                    }
                    plan.scaled_operands.push((inst, other));
                    let r = func.dfg.first_result(inst);
                    if tree.insert(r) {
                        work.push(r);
                    }
                }
                InstructionData::Load {
                    opcode: Opcode::Load,
                    offset,
                    ..
                } => {
                    let t = func.dfg.value_type(func.dfg.first_result(inst));
                    if t.bytes() != 4 || t.is_vector() || i64::from(offset) % 4 != 0 {
                        return None;
                    }
                    plan.scaled_immediates.push(inst);
                }
                InstructionData::Store {
                    opcode: Opcode::Store,
                    args: [value, _],
                    offset,
                    ..
                } if index == 1 => {
                    let t = func.dfg.value_type(value);
                    if t.bytes() != 4 || t.is_vector() || i64::from(offset) % 4 != 0 {
                        return None;
                    }
                    plan.scaled_immediates.push(inst);
                }
                // Stored as a value, compared, passed on, rounded up to an alignment…
                _ => return None,
            }
        }
    }
    // Four times the offsets must still fit the immediates.
    let fits = |imm: i64| i32::try_from(imm * lanes as i64).is_ok();
    for &inst in plan.scaled_immediates.iter().chain(&plan.roots) {
        let imm = match func.dfg.insts[inst] {
            InstructionData::Load { offset, .. } | InstructionData::Store { offset, .. } => {
                i64::from(offset)
            }
            InstructionData::StackAddr { offset, .. } => i64::from(offset),
            _ => 0,
        };
        if !fits(imm) {
            return None;
        }
    }
    Some(plan)
}

/// Whether integer `v` is known to be a multiple of four (looking `depth` definitions deep).
fn multiple_of_four(func: &Function, v: Value, depth: u32) -> bool {
    if depth == 0 {
        return false;
    }
    let ValueDef::Result(inst, _) = func.dfg.value_def(v) else {
        return false;
    };
    let arg = |i: usize| func.dfg.resolve_aliases(func.dfg.inst_args(inst)[i]);
    let constant = |x: Value| match func.dfg.value_def(x) {
        ValueDef::Result(d, _) => match func.dfg.insts[d] {
            InstructionData::UnaryImm {
                opcode: Opcode::Iconst,
                imm,
            } => Some(imm.bits()),
            _ => None,
        },
        _ => None,
    };
    match func.dfg.insts[inst] {
        InstructionData::UnaryImm {
            opcode: Opcode::Iconst,
            imm,
        } => imm.bits() % 4 == 0,
        InstructionData::Binary { opcode, .. } => match opcode {
            Opcode::Ishl => {
                constant(arg(1)).is_some_and(|k| (k & 63) >= 2)
                    || multiple_of_four(func, arg(0), depth - 1)
            }
            Opcode::Imul => (0..2).any(|i| {
                constant(arg(i)).is_some_and(|k| k % 4 == 0)
                    || multiple_of_four(func, arg(i), depth - 1)
            }),
            Opcode::Iadd | Opcode::Isub => {
                (0..2).all(|i| multiple_of_four(func, arg(i), depth - 1))
            }
            _ => false,
        },
        InstructionData::Unary {
            opcode: Opcode::Sextend | Opcode::Uextend,
            arg: x,
        } => multiple_of_four(func, func.dfg.resolve_aliases(x), depth - 1),
        _ => false,
    }
}

/// `lanes` times `offset` (word_plan checked that it fits).
fn scaled_offset(offset: ir::immediates::Offset32, lanes: usize) -> ir::immediates::Offset32 {
    let scaled = i32::try_from(i64::from(offset) * lanes as i64).unwrap_or(i32::MAX);
    ir::immediates::Offset32::new(scaled)
}

/// Makes `slot` `lanes` times as large and scales its addressing by `lanes` (a power of two).
fn apply(func: &mut Function, slot: ir::StackSlot, plan: &WordPlan, lanes: usize) {
    let data = &mut func.sized_stack_slots[slot];
    data.size = data.size.next_multiple_of(4) * lanes as u32;
    data.align_shift = data.align_shift.max(4);
    for &inst in &plan.roots {
        if let InstructionData::StackAddr { offset, .. } = &mut func.dfg.insts[inst] {
            *offset = scaled_offset(*offset, lanes);
        }
    }
    for &inst in &plan.scaled_immediates {
        match &mut func.dfg.insts[inst] {
            InstructionData::Load { offset, .. } | InstructionData::Store { offset, .. } => {
                *offset = scaled_offset(*offset, lanes);
            }
            _ => {}
        }
    }
    for &(inst, index) in &plan.scaled_operands {
        let y = func.dfg.resolve_aliases(func.dfg.inst_args(inst)[index]);
        let mut pos = FuncCursor::new(func).at_inst(inst);
        let scaled = pos.ins().ishl_imm_u(y, i64::from(lanes.trailing_zeros()));
        func.dfg.inst_args_mut(inst)[index] = scaled;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn copies_keep_sixteen_byte_alignment() {
        assert_eq!(lane_stride(4), 16);
        assert_eq!(lane_stride(16), 16);
        assert_eq!(lane_stride(17), 32);
        assert_eq!(lane_stride(64 + 112), 176);
    }
}
