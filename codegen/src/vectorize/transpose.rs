//! Vectors of vectors: the components of consecutive OpenCL vector elements (float2/4/8/16,
//! int2/4/8/16, structs of k 32-bit words) that each work-item loads or stores whole.
//!
//! The translator scalarises `float4 p = pos[i]` into four 32-bit loads at `addr+0, +4, +8,
//! +12` of one address that is affine in the local id with stride 16. Each alone is a strided
//! access (four scalar loads and inserts), but together the four lanes' elements are one
//! block of 4 × k consecutive words: k 16-byte loads and 4×4 transposes (k = 2: two `shufps`)
//! give one vector per component. Stores are the reverse: transpose, then k vector stores.
//!
//! The wide backend's iterations (8 or 16 lanes) load the same block as k rows of n words
//! (`i32x8`/`i32x16`) and turn rows into components by log2(k) stages of *unzips*: each takes
//! two rows and keeps the even words of their concatenation in one result and the odd words
//! in the other. A stage rotates the bits of each word's index in the block right by one, so
//! after log2(k) of them word kL + c sits in vector c at lane L. Stores *zip* (the inverse) in
//! the reverse order. Each unzip or zip is one two-source shuffle (`vpermt2d` on AVX-512),
//! written as lane extracts and inserts that LLVM's optimiser folds into one shuffle — a
//! float16 copy at 16 lanes was 16 gathers and 256 one-lane stores before.
//!
//! A group is k loads (or stores) of 4-byte values at offsets w, w+4, …, w+4(k-1) of one
//! address value whose stride is 4k bytes, in one block, none of the same word twice. Loads
//! are all done at the first member: nothing between the members may write memory or have
//! another side effect (a call, an atomic, a fence, a trap). Stores are all done at the last
//! member: nothing between may read or write memory or have a side effect, so no access sees
//! the delay. The union of the lanes' words is exactly the block accessed, so no byte is
//! touched that the scalar code does not touch. (The translator does not mark volatile
//! accesses; atomic ones are other opcodes and never join a group.)

use std::collections::HashMap;

use cranelift_codegen::ir::{
    self, types, ConstantData, Endianness, InstBuilder, InstructionData, MemFlagsData, Opcode,
    Type, Value,
};

use super::analysis::*;
use super::rewrite::*;

/// How far past a group's first member its other members are looked for (bounds the scan in
/// long unrolled blocks).
const SCAN_LIMIT: usize = 256;

/// Member accesses of one group, found when the first member is reached.
pub(super) struct Group {
    /// Loads or stores, one per word: `members[j]` accesses word `window + 4j` of each lane.
    members: Vec<ir::Inst>,
    store: bool,
    base: Value,
    guard: Option<Value>,
    window: i32,
    flags: MemFlagsData,
    /// Where the group is emitted: the first member for loads, the last for stores.
    at: ir::Inst,
    /// A load group's rows as loaded, when they dominate what follows (no run-time check).
    rows: Vec<Value>,
}

/// The groups found so far, by member.
#[derive(Default)]
pub(super) struct Groups {
    by_member: HashMap<ir::Inst, usize>,
    groups: Vec<Group>,
    /// Component vectors of load groups with `rows`: (group, component).
    components: HashMap<Value, (usize, usize)>,
}

/// `i32::from` for an `Offset32` immediate.
fn offset_of(data: &InstructionData) -> Option<i32> {
    match *data {
        InstructionData::Load { offset, .. } | InstructionData::Store { offset, .. } => {
            Some(offset.into())
        }
        _ => None,
    }
}

impl Vectoriser<'_> {
    /// Handles `inst` if it belongs to a group of whole-element accesses (and returns true):
    /// the group's accesses are emitted at its first load or last store, the other members
    /// emit nothing. `active`: the lanes that take the block (inside a varying branch).
    pub(super) fn transposed(&mut self, inst: ir::Inst, active: Option<Value>) -> bool {
        let g = match self.transposes.by_member.get(&inst) {
            Some(&g) => g,
            None => match self.find_group(inst) {
                Some(group) => {
                    let g = self.transposes.groups.len();
                    for &m in &group.members {
                        self.transposes.by_member.insert(m, g);
                    }
                    self.transposes.groups.push(group);
                    g
                }
                None => return false,
            },
        };
        if self.transposes.groups[g].at == inst {
            self.emit_group(g, active);
        }
        true
    }

    /// The group `first` (not yet in one) starts, if any.
    fn find_group(&self, first: ir::Inst) -> Option<Group> {
        let dfg = &self.func.dfg;
        let data = dfg.insts[first];
        let store = match data.opcode() {
            Opcode::Load => false,
            Opcode::Store => true,
            _ => return None,
        };
        let (addr, t) = self.access(first)?;
        if !vectorisable_type(t) {
            return None;
        }
        let (base, stride, guard) = match self.form(addr) {
            Form::Affine { base, stride } => (base, stride, None),
            Form::Guarded {
                base,
                stride,
                exact_if,
            } => (base, stride, Some(exact_if)),
            _ => return None,
        };
        if ![8, 16, 32, 64].contains(&stride) {
            return None;
        }
        let k = (stride / 4) as i32;
        let flags_of = |i: ir::Inst| match dfg.insts[i] {
            InstructionData::Load { flags, .. } | InstructionData::Store { flags, .. } => {
                Some(dfg.mem_flags[flags])
            }
            _ => None,
        };
        let flags = flags_of(first)?;
        let o_first = offset_of(&data)?;
        let (lo, hi) = (
            i64::from(o_first) - 4 * i64::from(k - 1),
            i64::from(o_first) + 4 * i64::from(k - 1),
        );
        // Candidates: same kind, address, width and flags, at offsets a window could hold.
        let mut candidates = vec![(o_first, first)];
        let mut next = self.func.layout.next_inst(first);
        for _ in 0..SCAN_LIMIT {
            let Some(i) = next else { break };
            next = self.func.layout.next_inst(i);
            let d = dfg.insts[i];
            let op = d.opcode();
            let same_kind = op == data.opcode();
            if same_kind {
                let matching = self
                    .access(i)
                    .is_some_and(|(a, ty)| a == addr && ty.bytes() == 4 && vectorisable_type(ty))
                    && flags_of(i) == Some(flags)
                    && offset_of(&d).is_some_and(|o| (lo..=hi).contains(&i64::from(o)));
                if matching {
                    candidates.push((offset_of(&d)?, i));
                    continue;
                }
                if !store {
                    continue; // another load: reads commute with reads
                }
            }
            let effects = op.can_store()
                || op.is_call()
                || op.other_side_effects()
                || op.is_branch()
                || op.is_terminator()
                || (op.can_trap() && !op.can_load())
                || (store && op.can_load());
            if effects {
                break;
            }
        }
        // The window holding `first` whose every word has exactly one candidate.
        let window = (0..k).map(|j| o_first - 4 * j).find(|&w| {
            (0..k).all(|j| candidates.iter().filter(|(o, _)| *o == w + 4 * j).count() == 1)
        })?;
        // The block read or written must be addressable with 32-bit offsets.
        i32::try_from(i64::from(window) + 4 * self.n as i64 * i64::from(k)).ok()?;
        let members: Vec<ir::Inst> = (0..k)
            .map(|j| {
                candidates
                    .iter()
                    .find(|(o, _)| *o == window + 4 * j)
                    .map(|&(_, i)| i)
                    .expect("the window has every word")
            })
            .collect();
        // A store outside the window would be reordered with the members.
        if store && candidates.len() != members.len() {
            return None;
        }
        let at = if store {
            // The scan went in layout order: the last candidate is the last member.
            candidates.last().map(|&(_, i)| i)?
        } else {
            first
        };
        Some(Group {
            members,
            store,
            base,
            guard,
            window,
            flags,
            at,
            rows: Vec::new(),
        })
    }

    /// Emits group `g`: the vector accesses, under a run-time check when the address is
    /// `Guarded` or only some lanes are active, the members one lane at a time otherwise.
    fn emit_group(&mut self, g: usize, active: Option<Value>) {
        let members = self.transposes.groups[g].members.clone();
        let (store, guard) = (
            self.transposes.groups[g].store,
            self.transposes.groups[g].guard,
        );
        let cond = match (active, guard) {
            (None, None) => None,
            (Some(m), guard) => {
                let all = self.cursor().ins().vall_true(m);
                Some(match guard {
                    Some(g) => self.cursor().ins().band(all, g),
                    None => all,
                })
            }
            (None, Some(g)) => Some(g),
        };
        let results: Vec<Value> = if store {
            Vec::new()
        } else {
            members
                .iter()
                .map(|&m| self.func.dfg.inst_results(m)[0])
                .collect()
        };
        let vector_types: Vec<Type> = results.iter().map(|&r| self.wide(self.ty(r))).collect();
        let values = match cond {
            None => {
                let values = self.group_access(g);
                for (j, &v) in values.iter().enumerate() {
                    self.transposes.components.insert(v, (g, j));
                }
                values
            }
            Some(c) => {
                let saved = self.active.take();
                let got = self.diamond_values(
                    c,
                    &vector_types,
                    &mut |s: &mut Self| s.group_access(g),
                    &mut |s: &mut Self| {
                        for &m in &members {
                            match active {
                                Some(a) => s.per_active_lane(m, a),
                                None => s.per_lane(m),
                            }
                        }
                        results.iter().map(|&r| s.vector(r)).collect()
                    },
                );
                self.active = saved;
                got
            }
        };
        for (r, v) in results.into_iter().zip(values) {
            self.define(r, Form::Vector(v));
        }
    }

    /// The vector accesses of group `g` with its transposes; the members' components (one
    /// vector each, in the results' types) for loads.
    fn group_access(&mut self, g: usize) -> Vec<Value> {
        let group = &self.transposes.groups[g];
        let (base, window, store) = (group.base, group.window, group.store);
        let members = group.members.clone();
        let flags = vector_access_flags(group.flags);
        let k = members.len();
        let row_ty = self.row_ty();
        let row_bytes = row_ty.bytes() as i32;
        let offset = |m: usize| window + row_bytes * m as i32;
        if store {
            let values: Vec<Value> = members
                .iter()
                .map(|&m| {
                    let InstructionData::Store {
                        args: [value, _], ..
                    } = self.func.dfg.insts[m]
                    else {
                        unreachable!("store groups hold stores")
                    };
                    self.func.dfg.resolve_aliases(value)
                })
                .collect();
            let rows = match self.copied_rows(&values) {
                // Whole elements stored as they were loaded: the rows themselves.
                Some(rows) => rows,
                None => {
                    let mut components = Vec::with_capacity(k);
                    for &value in &values {
                        let v = self.vector(value);
                        components.push(self.retyped(row_ty, v));
                    }
                    self.components_to_rows(&components)
                }
            };
            for (m, row) in rows.into_iter().enumerate() {
                self.cursor().ins().store(flags, row, base, offset(m));
            }
            Vec::new()
        } else {
            let rows: Vec<Value> = (0..k)
                .map(|m| self.cursor().ins().load(row_ty, flags, base, offset(m)))
                .collect();
            let components = self.rows_to_components(&rows);
            self.transposes.groups[g].rows = rows;
            members
                .iter()
                .zip(components)
                .map(|(&m, c)| {
                    let r = self.func.dfg.inst_results(m)[0];
                    let vt = self.wide(self.ty(r));
                    self.retyped(vt, c)
                })
                .collect()
        }
    }

    /// The type of one row of a group's block: 16 bytes at four lanes (the x86-64 backend's
    /// shuffles are byte shuffles), one word per lane wider.
    fn row_ty(&self) -> Type {
        if self.n == 4 {
            types::I8X16
        } else {
            self.wide(types::I32)
        }
    }

    /// Vector `v` as type `t` of the same size.
    fn retyped(&mut self, t: Type, v: Value) -> Value {
        if self.ty(v) == t {
            return v;
        }
        let little = MemFlagsData::new().with_endianness(Endianness::Little);
        self.cursor().ins().bitcast(t, little, v)
    }

    /// The rows of a load group whose components `values` are, in order, if they are.
    fn copied_rows(&self, values: &[Value]) -> Option<Vec<Value>> {
        let mut source = None;
        for (j, &v) in values.iter().enumerate() {
            let Form::Vector(x) = self.form(v) else {
                return None;
            };
            let &(g, c) = self.transposes.components.get(&x)?;
            if c != j || source.is_some_and(|s| s != g) {
                return None;
            }
            source = Some(g);
        }
        let rows = &self.transposes.groups[source?].rows;
        (rows.len() == values.len()).then(|| rows.clone())
    }

    /// A shuffle of the 32-bit lanes of `a` (0–3) and `b` (4–7).
    fn shuffle32(&mut self, a: Value, b: Value, lanes: [u8; 4]) -> Value {
        let bytes: Vec<u8> = lanes
            .iter()
            .flat_map(|&l| (0..4).map(move |byte| l * 4 + byte))
            .collect();
        let mask = self.func.dfg.immediates.push(ConstantData::from(bytes));
        self.cursor().ins().shuffle(a, b, mask)
    }

    /// The 4×4 transpose of rows `r` (of 32-bit lanes): `unpck{l,h}ps` then
    /// `punpck{l,h}qdq`, the shapes the x86-64 backend lowers to one instruction each.
    fn transpose4(&mut self, r: [Value; 4]) -> [Value; 4] {
        let t0 = self.shuffle32(r[0], r[1], [0, 4, 1, 5]);
        let t1 = self.shuffle32(r[2], r[3], [0, 4, 1, 5]);
        let t2 = self.shuffle32(r[0], r[1], [2, 6, 3, 7]);
        let t3 = self.shuffle32(r[2], r[3], [2, 6, 3, 7]);
        [
            self.shuffle32(t0, t1, [0, 1, 4, 5]),
            self.shuffle32(t0, t1, [2, 3, 6, 7]),
            self.shuffle32(t2, t3, [0, 1, 4, 5]),
            self.shuffle32(t2, t3, [2, 3, 6, 7]),
        ]
    }

    /// The k 16-byte rows of the four lanes' elements (lane L's element is words
    /// kL..kL+k-1) as k vectors of one component each.
    fn rows_to_components(&mut self, rows: &[Value]) -> Vec<Value> {
        let k = rows.len();
        if self.n != 4 {
            let mut v = rows.to_vec();
            for _ in 0..k.trailing_zeros() {
                let mut next = v.clone();
                for i in 0..k / 2 {
                    let (even, odd) = self.unzip(v[2 * i], v[2 * i + 1]);
                    next[i] = even;
                    next[i + k / 2] = odd;
                }
                v = next;
            }
            return v;
        }
        if k == 2 {
            return vec![
                self.shuffle32(rows[0], rows[1], [0, 2, 4, 6]),
                self.shuffle32(rows[0], rows[1], [1, 3, 5, 7]),
            ];
        }
        // Lane L's components 4q..4q+3 are row L·r + q.
        let r = k / 4;
        let mut out = Vec::with_capacity(k);
        for q in 0..r {
            out.extend(self.transpose4([rows[q], rows[r + q], rows[2 * r + q], rows[3 * r + q]]));
        }
        out
    }

    /// The inverse of [`Self::rows_to_components`].
    fn components_to_rows(&mut self, components: &[Value]) -> Vec<Value> {
        let k = components.len();
        if self.n != 4 {
            let mut v = components.to_vec();
            for _ in 0..k.trailing_zeros() {
                let mut next = v.clone();
                for i in 0..k / 2 {
                    let (low, high) = self.zip(v[i], v[i + k / 2]);
                    next[2 * i] = low;
                    next[2 * i + 1] = high;
                }
                v = next;
            }
            return v;
        }
        if k == 2 {
            let (x, y) = (components[0], components[1]);
            return vec![
                self.shuffle32(x, y, [0, 4, 1, 5]),
                self.shuffle32(x, y, [2, 6, 3, 7]),
            ];
        }
        let r = k / 4;
        let mut rows = components.to_vec();
        for q in 0..r {
            let c = [
                components[4 * q],
                components[4 * q + 1],
                components[4 * q + 2],
                components[4 * q + 3],
            ];
            for (lane, row) in self.transpose4(c).into_iter().enumerate() {
                rows[lane * r + q] = row;
            }
        }
        rows
    }

    /// The even and the odd words of the concatenation of rows `a` and `b` (wide rows).
    fn unzip(&mut self, a: Value, b: Value) -> (Value, Value) {
        let n = self.n;
        let even: Vec<usize> = (0..n).map(|j| 2 * j).collect();
        let odd: Vec<usize> = (0..n).map(|j| 2 * j + 1).collect();
        (self.two_source(a, b, &even), self.two_source(a, b, &odd))
    }

    /// The inverse of [`Self::unzip`]: the words of `a` and `b` interleaved, as two rows.
    fn zip(&mut self, a: Value, b: Value) -> (Value, Value) {
        let n = self.n;
        let interleaved: Vec<usize> = (0..2 * n).map(|w| (w % 2) * n + w / 2).collect();
        (
            self.two_source(a, b, &interleaved[..n]),
            self.two_source(a, b, &interleaved[n..]),
        )
    }

    /// The vector whose lane j is word `words[j]` of the concatenation of `a` and `b`: lane
    /// extracts and inserts, which LLVM folds into one two-source shuffle.
    fn two_source(&mut self, a: Value, b: Value, words: &[usize]) -> Value {
        let n = self.n;
        let t = self.ty(a);
        let lanes: Vec<Value> = words
            .iter()
            .map(|&w| {
                let src = if w < n { a } else { b };
                self.cursor().ins().extractlane(src, (w % n) as u8)
            })
            .collect();
        self.vector_of_lanes(t, &lanes)
    }
}
