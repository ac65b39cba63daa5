//! Store-to-load forwarding in private stack slots: owns the one rewrite of a kernel's CLIF that
//! replaces a load from a private slot by the value the slot's only store wrote there, and
//! deletes the slots left without loads. It runs once per kernel function, right after
//! translation (translate/kernel.rs `build`, after `finalize`), before the explicit-vector
//! packer, the work-item vectoriser, stop checks, checked mode's later steps and the backends.
//!
//! Why: SYCL kernels (DPC++) copy accessors and lambda captures into private structs in every
//! work-item, store uniform values (a buffer pointer, ranges) into their fields, and load those
//! fields back, often in loops of an inlined callee. The vectoriser gives each lane its own copy
//! of such a slot (vectorize/private.rs), so the loaded pointer becomes a scalar per lane and
//! every address made from it is lane-by-lane code. Forwarded, the load is the kernel argument
//! itself: uniform, and the slot disappears. Translation writes slot addresses as `stack_addr`
//! plus chains of `iadd`/`imul` of constants, unfolded, so offsets are evaluated here.
//!
//! Rules, all conservative:
//! - An *address* of slot `ss` is `stack_addr ss, k`, or an address plus or minus a
//!   compile-time constant (`iconst`, or `iadd`/`isub`/`imul`/`ishl`/`sextend`/`uextend` of
//!   constants). A slot one of whose addresses is used any other way — a call argument, a block
//!   argument, a select, a compare, a stored value, an atomic, the address of anything but a
//!   plain or extending load or a plain or narrowing store — *escapes* and is left alone, as is
//!   a slot with an access reaching outside it or one with unusual flags (explicit endianness,
//!   a trap code other than the default: markers other passes read).
//! - A plain `load` of `n` bytes at offset `o` of a slot that does not escape takes the stored
//!   value when exactly one store of the whole function writes any byte of `[o, o + n)`, that
//!   store is a plain `store` of the same type at offset `o`, and it dominates the load.
//!   Narrowing stores block the loads they overlap; extending loads are never forwarded (they
//!   write nothing, so they block nothing, but they keep their slot).
//! - A slot left without loads loses its stores, and the address arithmetic and constants that
//!   only they used go too, so the vectoriser no longer sees the slot (its declaration stays:
//!   unreferenced, it costs a few bytes of the work-group function's frame).
//!
//! Checked mode (checked.rs) is untouched: its bounds checks compare and subtract a private
//! variable's address, and its lookup tables pass slot addresses to calls, so every slot it
//! guards escapes here. The pass is deterministic (slots, loads and stores in a fixed order),
//! so the machine-code cache and serialized programs see the same function for the same input.

use std::collections::{BTreeMap, HashMap, HashSet};

use cranelift_codegen::dominator_tree::DominatorTree;
use cranelift_codegen::flowgraph::ControlFlowGraph;
use cranelift_codegen::ir::{
    self, types, Function, Inst, InstructionData, Opcode, StackSlot, TrapCode, Value, ValueDef,
};

#[cfg(test)]
mod tests;

/// What [`forward_private_stores`] changed.
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct Forwarded {
    /// Loads replaced by the value the one store of their bytes wrote.
    pub(crate) loads: usize,
    /// Slots no instruction refers to any more (their loads forwarded, their stores deleted).
    pub(crate) emptied: Vec<StackSlot>,
}

/// What an access of a slot does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    /// `load`: may be forwarded.
    Load,
    /// `uload8`, `sload16`, …: reads fewer bytes than its result has; never forwarded.
    ExtendingLoad,
    /// `store`: may be forwarded.
    Store,
    /// `istore8`, …: writes fewer bytes than its value has; never forwarded.
    NarrowingStore,
}

/// One load or store of a slot: bytes `[offset, offset + size)` of it.
#[derive(Clone, Copy, Debug)]
struct Access {
    inst: Inst,
    kind: Kind,
    offset: i64,
    size: i64,
}

/// A slot that does not escape: every value that is one of its addresses, and its accesses,
/// both in layout order.
#[derive(Default)]
struct Slot {
    addresses: Vec<Value>,
    accesses: Vec<Access>,
}

/// Forwards stores of private stack slots to their loads and deletes the slots left without
/// loads (see the module comment). Leaves `func` unchanged when nothing qualifies.
pub(crate) fn forward_private_stores(func: &mut Function) -> Forwarded {
    let slots = private_slots(func);
    let mut done = Forwarded::default();
    if slots.is_empty() {
        return done;
    }
    let domtree = slots
        .values()
        .any(|s| s.accesses.iter().any(|a| a.kind == Kind::Load))
        .then(|| DominatorTree::with_function(func, &ControlFlowGraph::with_function(func)));

    // Decide everything on the function as translated, then rewrite.
    let mut forward: Vec<(Inst, Value)> = Vec::new();
    let mut dead_stores: Vec<Inst> = Vec::new();
    let mut emptied: Vec<(StackSlot, &Slot)> = Vec::new();
    for (&slot, info) in &slots {
        // Stores by offset, to find those overlapping a load without scanning them all.
        let mut stores: BTreeMap<i64, Vec<&Access>> = BTreeMap::new();
        let mut widest = 0;
        for a in &info.accesses {
            if matches!(a.kind, Kind::Store | Kind::NarrowingStore) {
                stores.entry(a.offset).or_default().push(a);
                widest = widest.max(a.size);
            }
        }
        let mut loads_left = 0;
        for load in &info.accesses {
            match load.kind {
                Kind::Load => {}
                Kind::ExtendingLoad => {
                    loads_left += 1;
                    continue;
                }
                Kind::Store | Kind::NarrowingStore => continue,
            }
            let end = load.offset + load.size;
            let mut overlapping = stores
                .range(load.offset - widest + 1..end)
                .flat_map(|(_, at)| at.iter())
                .filter(|s| s.offset + s.size > load.offset);
            let only = match (overlapping.next(), overlapping.next()) {
                (Some(s), None) => Some(*s),
                _ => None,
            };
            let value = only.and_then(|store| {
                let ir::InstructionData::Store {
                    args: [value, _], ..
                } = func.dfg.insts[store.inst]
                else {
                    return None;
                };
                let loaded = func.dfg.first_result(load.inst);
                (store.kind == Kind::Store
                    && store.offset == load.offset
                    && func.dfg.value_type(value) == func.dfg.value_type(loaded)
                    && domtree
                        .as_ref()
                        .is_some_and(|d| d.dominates(store.inst, load.inst, &func.layout)))
                .then_some(value)
            });
            // Why the stored value is what the load reads: the store S is the only
            // instruction writing these bytes (the slot does not escape, so nothing else
            // reaches them), and it dominates the load L, so every execution reaching L has
            // run S, and the bytes hold what the last execution of S stored. The stored value
            // v is defined at D, which dominates S. Were D run again after that last S and
            // before L, the path from that D to L would avoid S; preceded by a path from the
            // entry to D that avoids S (any path to D cut at its first D: S cannot come
            // before it, as D dominates S), it would reach L without S, against S dominating
            // L. So v still holds the value S stored, and it dominates L (D dominates S
            // dominates L): the load's result can be v.
            match value {
                Some(value) => forward.push((load.inst, value)),
                None => loads_left += 1,
            }
        }
        if loads_left == 0 {
            dead_stores.extend(stores.values().flatten().map(|s| s.inst));
            emptied.push((slot, info));
        }
    }
    if forward.is_empty() && emptied.is_empty() {
        return done;
    }

    let mut seeds: Vec<Value> = Vec::new();
    for &(load, value) in &forward {
        let ir::InstructionData::Load { arg, .. } = func.dfg.insts[load] else {
            unreachable!("a forwarded load");
        };
        seeds.push(arg);
        let result = func.dfg.first_result(load);
        func.layout.remove_inst(load);
        func.dfg.detach_inst_results(load);
        func.dfg.change_to_alias(result, value);
    }
    done.loads = forward.len();
    for &store in &dead_stores {
        seeds.push(func.dfg.inst_args(store)[1]);
        func.layout.remove_inst(store);
    }
    // Every address of an emptied slot goes, the unused ones translation left too.
    for (_, info) in &emptied {
        seeds.extend(&info.addresses);
    }
    sweep(func, seeds);
    let referenced: HashSet<StackSlot> = func
        .layout
        .blocks()
        .flat_map(|b| func.layout.block_insts(b))
        .filter_map(|i| match func.dfg.insts[i] {
            InstructionData::StackAddr { stack_slot, .. } => Some(stack_slot),
            _ => None,
        })
        .collect();
    done.emptied = emptied
        .into_iter()
        .map(|(slot, _)| slot)
        .filter(|s| !referenced.contains(s))
        .collect();
    done
}

/// Every slot that does not escape, with its addresses and accesses, in slot order.
fn private_slots(func: &Function) -> BTreeMap<StackSlot, Slot> {
    let mut roots: BTreeMap<StackSlot, Vec<(Value, i64)>> = BTreeMap::new();
    for block in func.layout.blocks() {
        for inst in func.layout.block_insts(block) {
            if let InstructionData::StackAddr {
                stack_slot, offset, ..
            } = func.dfg.insts[inst]
            {
                roots
                    .entry(stack_slot)
                    .or_default()
                    .push((func.dfg.first_result(inst), i64::from(offset)));
            }
        }
    }
    let mut slots = BTreeMap::new();
    if roots.is_empty() {
        return slots;
    }
    let uses = uses_of(func);
    let mut constants = Constants::new(func);
    'slots: for (slot, roots) in roots {
        let slot_size = i64::from(func.sized_stack_slots[slot].size);
        let mut info = Slot::default();
        let mut seen: HashSet<Value> = HashSet::new();
        let mut work = roots;
        work.reverse();
        while let Some((address, offset)) = work.pop() {
            if !seen.insert(address) {
                continue;
            }
            if func.dfg.value_type(address) != types::I64 {
                continue 'slots;
            }
            info.addresses.push(address);
            for &(inst, index) in uses.get(&address).map(Vec::as_slice).unwrap_or(&[]) {
                match use_of(func, &mut constants, inst, index, address) {
                    Use::Offset(result, delta) => work.push((result, offset.wrapping_add(delta))),
                    Use::Access {
                        kind,
                        offset: immediate,
                        size,
                    } => {
                        let start = offset.wrapping_add(immediate);
                        if start < 0 || size > slot_size || start > slot_size - size {
                            continue 'slots;
                        }
                        info.accesses.push(Access {
                            inst,
                            kind,
                            offset: start,
                            size,
                        });
                    }
                    Use::Escape => continue 'slots,
                }
            }
        }
        slots.insert(slot, info);
    }
    slots
}

/// How one instruction uses a slot's address.
enum Use {
    /// Its result is the address plus this many bytes.
    Offset(Value, i64),
    /// A load or store through the address; `offset` is the instruction's immediate.
    Access { kind: Kind, offset: i64, size: i64 },
    /// Anything else: the slot escapes.
    Escape,
}

/// How `inst` uses `address`, its operand `index` (in `inst_values` order).
fn use_of(
    func: &Function,
    constants: &mut Constants,
    inst: Inst,
    index: usize,
    address: Value,
) -> Use {
    let plain_flags = |flags: ir::MemFlags| {
        let f = func.dfg.mem_flags[flags];
        f.explicit_endianness().is_none()
            && f.trap_code()
                .is_none_or(|c| c == TrapCode::HEAP_OUT_OF_BOUNDS)
    };
    match func.dfg.insts[inst] {
        InstructionData::Binary {
            opcode: opcode @ (Opcode::Iadd | Opcode::Isub),
            args,
        } => {
            if opcode == Opcode::Isub && index != 0 {
                return Use::Escape;
            }
            let other = func.dfg.resolve_aliases(args[1 - index]);
            if other == address {
                return Use::Escape;
            }
            match constants.eval(other) {
                Some(c) if opcode == Opcode::Iadd => Use::Offset(func.dfg.first_result(inst), c),
                Some(c) => Use::Offset(func.dfg.first_result(inst), c.wrapping_neg()),
                None => Use::Escape,
            }
        }
        InstructionData::Load {
            opcode,
            flags,
            offset,
            ..
        } if plain_flags(flags) => {
            let (kind, size) = match opcode {
                Opcode::Load => (
                    Kind::Load,
                    func.dfg.value_type(func.dfg.first_result(inst)).bytes(),
                ),
                Opcode::Uload8 | Opcode::Sload8 => (Kind::ExtendingLoad, 1),
                Opcode::Uload16 | Opcode::Sload16 => (Kind::ExtendingLoad, 2),
                Opcode::Uload32 | Opcode::Sload32 => (Kind::ExtendingLoad, 4),
                Opcode::Uload8x8
                | Opcode::Sload8x8
                | Opcode::Uload16x4
                | Opcode::Sload16x4
                | Opcode::Uload32x2
                | Opcode::Sload32x2 => (Kind::ExtendingLoad, 8),
                _ => return Use::Escape,
            };
            Use::Access {
                kind,
                offset: i64::from(offset),
                size: i64::from(size),
            }
        }
        InstructionData::Store {
            opcode,
            args: [value, _],
            flags,
            offset,
        } if index == 1 && func.dfg.resolve_aliases(value) != address && plain_flags(flags) => {
            let (kind, size) = match opcode {
                Opcode::Store => (Kind::Store, func.dfg.value_type(value).bytes()),
                Opcode::Istore8 => (Kind::NarrowingStore, 1),
                Opcode::Istore16 => (Kind::NarrowingStore, 2),
                Opcode::Istore32 => (Kind::NarrowingStore, 4),
                _ => return Use::Escape,
            };
            Use::Access {
                kind,
                offset: i64::from(offset),
                size: i64::from(size),
            }
        }
        _ => Use::Escape,
    }
}

/// Every use of every value (aliases resolved): (instruction, operand index in `inst_values`).
fn uses_of(func: &Function) -> HashMap<Value, Vec<(Inst, usize)>> {
    let mut uses: HashMap<Value, Vec<(Inst, usize)>> = HashMap::new();
    for block in func.layout.blocks() {
        for inst in func.layout.block_insts(block) {
            for (i, v) in func.dfg.inst_values(inst).enumerate() {
                uses.entry(func.dfg.resolve_aliases(v))
                    .or_default()
                    .push((inst, i));
            }
        }
    }
    uses
}

/// Integer values known at compile time, memoised.
struct Constants<'f> {
    func: &'f Function,
    memo: HashMap<Value, Option<i64>>,
}

/// How deep [`Constants::eval`] follows operands: the translator's offsets are a few
/// instructions deep.
const MAX_CONSTANT_DEPTH: u32 = 32;

impl<'f> Constants<'f> {
    fn new(func: &'f Function) -> Self {
        Constants {
            func,
            memo: HashMap::new(),
        }
    }

    /// The value of integer `v` (sign-extended from its type to 64 bits), if it is a constant
    /// expression of `iconst`, `iadd`, `isub`, `imul`, `ishl`, `sextend` and `uextend`.
    fn eval(&mut self, v: Value) -> Option<i64> {
        self.eval_at(v, 0)
    }

    fn eval_at(&mut self, v: Value, depth: u32) -> Option<i64> {
        let dfg = &self.func.dfg;
        let v = dfg.resolve_aliases(v);
        if let Some(&known) = self.memo.get(&v) {
            return known;
        }
        if depth > MAX_CONSTANT_DEPTH {
            return None;
        }
        let ty = dfg.value_type(v);
        let ValueDef::Result(inst, 0) = dfg.value_def(v) else {
            return None;
        };
        if !ty.is_int() || ty.bits() > 64 {
            return None;
        }
        let value = match dfg.insts[inst] {
            InstructionData::UnaryImm {
                opcode: Opcode::Iconst,
                imm,
            } => Some(imm.bits()),
            InstructionData::Binary {
                opcode: opcode @ (Opcode::Iadd | Opcode::Isub | Opcode::Imul | Opcode::Ishl),
                args,
            } => self.eval_at(args[0], depth + 1).and_then(|a| {
                let b = self.eval_at(args[1], depth + 1)?;
                Some(match opcode {
                    Opcode::Iadd => a.wrapping_add(b),
                    Opcode::Isub => a.wrapping_sub(b),
                    Opcode::Imul => a.wrapping_mul(b),
                    // The shift amount is taken modulo the shifted type's width.
                    _ => a.wrapping_shl((b as u32) & (ty.bits() - 1)),
                })
            }),
            InstructionData::Unary {
                opcode: Opcode::Sextend,
                arg,
            } => self.eval_at(arg, depth + 1),
            InstructionData::Unary {
                opcode: Opcode::Uextend,
                arg,
            } => {
                let from = self.func.dfg.value_type(arg).bits();
                self.eval_at(arg, depth + 1).map(|a| {
                    if from >= 64 {
                        a
                    } else {
                        a & ((1i64 << from) - 1)
                    }
                })
            }
            _ => None,
        }
        .map(|x| sign_extend(x, ty.bits()));
        self.memo.insert(v, value);
        value
    }
}

/// `x` truncated to `bits` bits and sign-extended back to 64.
fn sign_extend(x: i64, bits: u32) -> i64 {
    if bits >= 64 {
        x
    } else {
        let shift = 64 - bits;
        (x << shift) >> shift
    }
}

/// Deletes the pure address and constant arithmetic that `seeds` start, where nothing uses it
/// any more, and what only that used in turn.
fn sweep(func: &mut Function, seeds: Vec<Value>) {
    let mut uses: HashMap<Value, usize> = HashMap::new();
    for block in func.layout.blocks() {
        for inst in func.layout.block_insts(block) {
            for v in func.dfg.inst_values(inst) {
                *uses.entry(func.dfg.resolve_aliases(v)).or_default() += 1;
            }
        }
    }
    let mut work = seeds;
    while let Some(v) = work.pop() {
        let v = func.dfg.resolve_aliases(v);
        if uses.get(&v).copied().unwrap_or(0) != 0 {
            continue;
        }
        let ValueDef::Result(inst, _) = func.dfg.value_def(v) else {
            continue;
        };
        if func.layout.inst_block(inst).is_none()
            || !matches!(
                func.dfg.insts[inst].opcode(),
                Opcode::StackAddr
                    | Opcode::Iconst
                    | Opcode::Iadd
                    | Opcode::Isub
                    | Opcode::Imul
                    | Opcode::Ishl
                    | Opcode::Sextend
                    | Opcode::Uextend
            )
        {
            continue;
        }
        for arg in func.dfg.inst_values(inst) {
            let arg = func.dfg.resolve_aliases(arg);
            if let Some(n) = uses.get_mut(&arg) {
                *n -= 1;
            }
            work.push(arg);
        }
        func.layout.remove_inst(inst);
    }
}
