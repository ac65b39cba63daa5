//! Run-time contiguity: 32-bit loads and stores whose 32-bit index the analysis cannot prove
//! linear in the local id (clamps, `min`/`max`, selects, `%` — a stencil's
//! `in[clamp(x + dx, 0, w - 1)]`). Each such access checks whether the four lanes' indices are
//! consecutive and then makes one vector access; otherwise (the groups at a clamped border,
//! reversed or scattered indices) one access per lane, as before. A branch, not a select: the
//! vector access must not run when the lanes are scattered (it could read beyond the object).
//!
//! The address must be `base + ext(index) × size` with `base` uniform, `index` a 32-bit value
//! held as a vector (or as four scalars: per-lane operations such as `%`) and `size` the
//! element's bytes: consecutive indices that do not wrap in 32 bits then give
//! consecutive elements, so the vector access touches exactly the four elements the lanes
//! would, and nothing else. A 64-bit index (`size_t` clamps, four scalars) is taken as it is:
//! consecutive modulo 2^64 is consecutive addresses. Under a mask the vector access is taken
//! only when every lane is active.

use cranelift_codegen::ir::{
    self, condcodes::IntCC, types, ConstantData, InstBuilder, InstructionData, Opcode, Value,
};

use super::analysis::*;
use super::rewrite::Vectoriser;

#[derive(Clone, Copy, PartialEq, Eq)]
enum Widen {
    Sign,
    Zero,
    /// The index is 64-bit already.
    None,
}

/// An address `base + ext(index) × scale`.
#[derive(Clone, Copy)]
pub(super) struct Indexed {
    /// The access's original address (the value the per-lane path reads the lanes of).
    addr: Value,
    /// Uniform i64.
    base: Value,
    /// The index (an original value: 32-bit in `Vector` or `Lanes` form, 64-bit in `Lanes`).
    index: Value,
    /// How a 32-bit index is widened to 64 bits.
    widen: Widen,
    scale: i64,
}

impl Vectoriser<'_> {
    /// The address of 32-bit load or store `inst`, if it is an indexed one whose scale is the
    /// element size (so that consecutive indices are consecutive elements).
    pub(super) fn indexed_access(&self, inst: ir::Inst) -> Option<Indexed> {
        let (addr, t) = self.access(inst)?;
        if !vectorisable_type(t) {
            return None;
        }
        let ix = self.indexed(addr)?;
        (ix.scale == i64::from(t.bytes())).then_some(ix)
    }

    fn indexed(&self, addr: Value) -> Option<Indexed> {
        let dfg = &self.func.dfg;
        if dfg.value_type(addr) != types::I64 {
            return None;
        }
        let InstructionData::Binary {
            opcode: Opcode::Iadd,
            args,
        } = dfg.insts[dfg.value_def(addr).inst()?]
        else {
            return None;
        };
        let args = args.map(|a| dfg.resolve_aliases(a));
        for (b, s) in [(args[0], args[1]), (args[1], args[0])] {
            let Form::Uniform(base) = self.form(b) else {
                continue;
            };
            if let Some((index, widen, scale)) = self.scaled_index(s) {
                return Some(Indexed {
                    addr,
                    base,
                    index,
                    widen,
                    scale,
                });
            }
        }
        None
    }

    /// `v` as `ext(index) × scale` (an `imul` by a constant or an `ishl` by one).
    fn scaled_index(&self, v: Value) -> Option<(Value, Widen, i64)> {
        let dfg = &self.func.dfg;
        let data = dfg.insts[dfg.value_def(v).inst()?];
        let (x, scale) = match data {
            InstructionData::Binary {
                opcode: Opcode::Imul,
                args,
            } => {
                let args = args.map(|a| dfg.resolve_aliases(a));
                match (
                    iconst_value(self.func, args[0]),
                    iconst_value(self.func, args[1]),
                ) {
                    (_, Some(c)) => (args[0], c),
                    (Some(c), None) => (args[1], c),
                    _ => return None,
                }
            }
            InstructionData::Binary {
                opcode: Opcode::Ishl,
                args,
            } => {
                let c = iconst_value(self.func, dfg.resolve_aliases(args[1]))?;
                if !(0..8).contains(&c) {
                    return None;
                }
                (dfg.resolve_aliases(args[0]), 1i64 << c)
            }
            _ => return None,
        };
        if dfg.value_type(x) != types::I64 {
            return None;
        }
        let def = dfg.value_def(x).inst().map(|i| dfg.insts[i]);
        let Some(InstructionData::Unary {
            opcode: op @ (Opcode::Uextend | Opcode::Sextend),
            arg,
        }) = def
        else {
            return matches!(self.form(x), Form::Lanes(_) | Form::Pair(_)).then_some((
                x,
                Widen::None,
                scale,
            ));
        };
        let arg = dfg.resolve_aliases(arg);
        if dfg.value_type(arg) != types::I32 {
            return None;
        }
        let widen = if op == Opcode::Sextend {
            Widen::Sign
        } else {
            Widen::Zero
        };
        match self.form(arg) {
            Form::Vector(_) | Form::Lanes(_) => Some((arg, widen, scale)),
            _ => None,
        }
    }

    /// Lane `i`'s address from its index, as the scalar code computes it.
    fn lane_address(&mut self, ix: &Indexed, i: Value) -> Value {
        let wide = match ix.widen {
            Widen::Sign => self.cursor().ins().sextend(types::I64, i),
            Widen::Zero => self.cursor().ins().uextend(types::I64, i),
            Widen::None => i,
        };
        let scaled = self.cursor().ins().imul_imm_s(wide, ix.scale);
        self.cursor().ins().iadd(ix.base, scaled)
    }

    /// The part of 32-bit `index` that makes it vary: `index` less the uniform terms added to
    /// or subtracted from it, and those terms, innermost first (`true`: subtracted). Its lanes
    /// are consecutive exactly when the index's are (modulo 2^32), and it is often invariant
    /// in the kernel's loops (a stencil's clamped column, with the row added), so that its
    /// check is hoisted out of them.
    fn varying_part(&self, index: Value) -> (Value, Vec<(Value, bool)>) {
        let dfg = &self.func.dfg;
        let mut v = index;
        let mut terms = Vec::new();
        while let Some(inst) = dfg.value_def(v).inst() {
            let InstructionData::Binary {
                opcode: op @ (Opcode::Iadd | Opcode::Isub),
                args,
            } = dfg.insts[inst]
            else {
                break;
            };
            let [a, b] = args.map(|a| dfg.resolve_aliases(a));
            let (next, term) = match (self.form(a), self.form(b)) {
                (f, Form::Uniform(u)) if !matches!(f, Form::Uniform(_)) => (a, u),
                (Form::Uniform(u), f) if op == Opcode::Iadd && !matches!(f, Form::Uniform(_)) => {
                    (b, u)
                }
                _ => break,
            };
            if !matches!(
                self.form(next),
                Form::Vector(_) | Form::Lanes(_) | Form::Pair(_)
            ) {
                break;
            }
            terms.push((term, op == Opcode::Isub));
            v = next;
        }
        terms.reverse();
        (v, terms)
    }

    /// Lane 0 of 32-bit `v` (in `Vector` or `Lanes` form), and `v` as a vector.
    fn first_lane(&mut self, v: Value) -> (Value, Value) {
        let x = self.vector(v);
        let first = match self.form(v) {
            Form::Lanes(ref l) => l[0],
            _ => self.cursor().ins().extractlane(x, 0),
        };
        (first, x)
    }

    /// Whether the lanes' indices are i0, i0 + 1, i0 + 2, i0 + 3 without wrapping in 32 bits
    /// (an i8), and i0.
    fn consecutive(&mut self, ix: &Indexed) -> (Value, Value) {
        let (part, terms) = self.varying_part(ix.index);
        if ix.widen == Widen::None {
            return self.consecutive_64(part, &terms);
        }
        let (p0, p) = self.first_lane(part);
        let vt = self.mask_ty();
        let first = self.cursor().ins().splat(vt, p0);
        let mut bytes = Vec::with_capacity(4 * self.n);
        for k in 0..self.n as i32 {
            bytes.extend_from_slice(&k.to_le_bytes());
        }
        let c = self.func.dfg.constants.insert(ConstantData::from(bytes));
        let steps = self.cursor().ins().vconst(vt, c);
        let want = self.cursor().ins().iadd(first, steps);
        let same = self.cursor().ins().icmp(IntCC::Equal, p, want);
        let all = self.cursor().ins().vall_true(same);
        let i0 = self.add_terms(p0, &terms);
        let span = self.n as i64 - 1;
        let no_wrap = if ix.widen == Widen::Sign {
            let last = i64::from(i32::MAX) - span;
            self.cursor()
                .ins()
                .icmp_imm_s(IntCC::SignedLessThanOrEqual, i0, last)
        } else {
            let last = i64::from(u32::MAX) - span;
            self.cursor()
                .ins()
                .icmp_imm_s(IntCC::UnsignedLessThanOrEqual, i0, last)
        };
        (self.cursor().ins().band(all, no_wrap), i0)
    }

    /// Lane 0 of an index from lane 0 of its varying part, in scalar arithmetic.
    fn add_terms(&mut self, p0: Value, terms: &[(Value, bool)]) -> Value {
        let mut i0 = p0;
        for &(term, subtracted) in terms {
            i0 = if subtracted {
                self.cursor().ins().isub(i0, term)
            } else {
                self.cursor().ins().iadd(i0, term)
            };
        }
        i0
    }

    /// `consecutive` for a 64-bit index whose varying part is `part`: each lane's distance
    /// from lane 0, compared in vectors (a `Pair`) or in scalars (one per lane).
    fn consecutive_64(&mut self, part: Value, terms: &[(Value, bool)]) -> (Value, Value) {
        if let Form::Pair(p) = self.form(part) {
            let pt = self.func.dfg.value_type(p[0]);
            let half = self.n / 2;
            let l0 = self.cursor().ins().extractlane(p[0], 0);
            let first = self.cursor().ins().splat(pt, l0);
            let mut all = None;
            for (h, &x) in p.iter().enumerate() {
                let bytes: Vec<u8> = (0..half)
                    .flat_map(|k| ((h * half + k) as i64).to_le_bytes())
                    .collect();
                let c = self.func.dfg.constants.insert(ConstantData::from(bytes));
                let steps = self.cursor().ins().vconst(pt, c);
                let want = self.cursor().ins().iadd(first, steps);
                let same = self.cursor().ins().icmp(IntCC::Equal, x, want);
                let same = self.cursor().ins().vall_true(same);
                all = Some(match all {
                    None => same,
                    Some(a) => self.cursor().ins().band(a, same),
                });
            }
            let all = all.expect("two halves");
            return (all, self.add_terms(l0, terms));
        }
        let l = self.lanes(part);
        let mut all = None;
        for (k, &lane) in l.iter().enumerate().skip(1) {
            let d = self.cursor().ins().isub(lane, l[0]);
            let same = self.cursor().ins().icmp_imm_s(IntCC::Equal, d, k as i64);
            all = Some(match all {
                None => same,
                Some(a) => self.cursor().ins().band(a, same),
            });
        }
        let all = all.expect("more than one lane");
        (all, self.add_terms(l[0], terms))
    }

    /// Indexed load or store `inst`: one vector access when the indices are consecutive (and,
    /// under mask `active`, every lane is active), else one access per (active) lane.
    pub(super) fn run_time_contiguous(
        &mut self,
        inst: ir::Inst,
        ix: Indexed,
        active: Option<Value>,
    ) {
        let (mut fast, i0) = self.consecutive(&ix);
        if let Some(a) = active {
            let all = self.cursor().ins().vall_true(a);
            fast = self.cursor().ins().band(fast, all);
        }
        let result = self.func.dfg.inst_results(inst).first().copied();
        let vt = result.map(|r| self.wide(self.ty(r)));
        let saved_active = self.active.take();
        let saved_form = self.forms.get(&ix.addr).cloned();
        let v = self.diamond(
            fast,
            vt,
            &mut |s: &mut Self| {
                let a0 = s.lane_address(&ix, i0);
                s.vector_access(inst, a0)
            },
            &mut |s: &mut Self| {
                // The lanes' addresses computed here, where they are needed, so the vector
                // path does not pay for them.
                let mut lanes = s.lanes(ix.index);
                for lane in &mut lanes {
                    *lane = s.lane_address(&ix, *lane);
                }
                s.forms.insert(ix.addr, Form::Lanes(lanes));
                if s.lane_intrinsic_access(inst, active.is_some()) {
                    s.gather_or_scatter(inst, active);
                } else {
                    match active {
                        Some(a) => s.per_active_lane(inst, a),
                        None => s.per_lane(inst),
                    }
                }
                result.map(|r| s.vector(r))
            },
        );
        // The slow path's lanes do not dominate what follows.
        match saved_form {
            Some(f) => self.define(ix.addr, f),
            None => {
                self.forms.remove(&ix.addr);
            }
        }
        self.active = saved_active;
        if let (Some(r), Some(v)) = (result, v) {
            self.define(r, Form::Vector(v));
        }
    }
}
