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
//! Without this, a kernel with a private array stayed scalar: the hashing kernels of a
//! password-recovery tool ("private memory on the stack (each work-item needs its own)").

use cranelift_codegen::ir::{self, Block, Function, InstBuilder, InstructionData};

use super::analysis::Form;
use super::rewrite::Vectoriser;
use super::{Refusal, LANES};

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
    let mut slots = std::collections::HashSet::new();
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
        let data = &self.func.sized_stack_slots[slot];
        let stride = lane_stride(data.size);
        let twin = ir::StackSlotData::new(
            ir::StackSlotKind::ExplicitSlot,
            (stride * LANES) as u32,
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
