//! The rewrite: the vector copy of the work-item loop, instruction by instruction, in the forms
//! the analysis chose.

use std::collections::{HashMap, HashSet};

use cranelift_codegen::cursor::{Cursor, FuncCursor};
use cranelift_codegen::ir::{
    self, types, Block, BlockArg, ConstantData, Endianness, Function, InstBuilder, InstructionData,
    MemFlagsData, Opcode, Type, Value,
};

use super::analysis::*;
use super::*;

pub(super) struct Vectoriser<'a> {
    pub(super) func: &'a mut Function,
    pub(super) varying: HashSet<Value>,
    pub(super) forms: HashMap<Value, Form>,
    /// Vector-loop copy of each body block, and how its parameters are passed.
    pub(super) blocks: HashMap<Block, Block>,
    pub(super) param_forms: HashMap<Block, Vec<ParamForm>>,
    pub(super) latch: Block,
    pub(super) vector_latch: Block,
    pub(super) current: Block,
    /// Loops run under a mask (`LoopPlan`), by header.
    pub(super) loops: HashMap<Block, LoopPlan>,
    /// Inside a varying branch: the lanes that take the block being emitted (an i32x4 mask);
    /// memory accesses, calls and atomics then happen for those lanes only.
    pub(super) active: Option<Value>,
    /// Loads and stores of whole vector elements (transpose.rs).
    pub(super) transposes: super::transpose::Groups,
    /// Checked mode's guard markers, with the fail block each stands for (guards.rs).
    pub(super) guards: HashMap<ir::Inst, Block>,
    /// Each private stack slot the body uses, and its copy with room for every lane
    /// (private.rs), with the distance between the lanes' copies.
    pub(super) lane_slots: HashMap<ir::StackSlot, (ir::StackSlot, i64)>,
    /// Private slots already laid out with the lanes' words interleaved (private.rs).
    pub(super) interleaved: HashSet<ir::StackSlot>,
    /// Calls of float math with a vector form (math.rs).
    pub(super) math: &'a super::MathCalls,
    /// [`crate::BuildOptions::math_fallback_marker`].
    pub(super) math_fallback_marker: bool,
    /// Whether accesses at per-lane addresses may be gathers and scatters (gather.rs).
    pub(super) lane_intrinsics: bool,
    /// [`ItemLoop::checked`].
    pub(super) checked: bool,
    /// The lane intrinsics imported so far, by (index, parameter types, result type).
    pub(super) lane_intrinsic_refs: HashMap<(u32, Vec<Type>, Option<Type>), ir::FuncRef>,
    /// Work-items per vector iteration (4 for Cranelift's 128-bit vectors; 8 or 16 for the
    /// wide backend).
    pub(super) n: usize,
}

impl Vectoriser<'_> {
    pub(super) fn cursor(&mut self) -> FuncCursor<'_> {
        FuncCursor::new(self.func).at_bottom(self.current)
    }

    pub(super) fn ty(&self, v: Value) -> Type {
        self.func.dfg.value_type(v)
    }

    pub(super) fn form(&self, v: Value) -> Form {
        let v = self.func.dfg.resolve_aliases(v);
        self.forms.get(&v).cloned().unwrap_or(Form::Uniform(v))
    }

    /// Scalar type `t` with one lane per work-item.
    pub(super) fn wide(&self, t: Type) -> Type {
        t.by(self.n as u32).expect("32-bit lanes")
    }

    /// The type of each half of a `Pair` of doubles (f64x2 at four lanes).
    pub(super) fn pair_ty(&self) -> Type {
        self.pair_ty_of(types::F64)
    }

    /// The type of each half of a `Pair` of scalar type `t` (i64x8 at sixteen lanes).
    pub(super) fn pair_ty_of(&self, t: Type) -> Type {
        t.by(self.n as u32 / 2).expect("pair lanes")
    }

    /// Whether values of scalar type `t` take the `Pair` form here (analysis.rs `pair_type`).
    pub(super) fn pairs(&self, t: Type) -> bool {
        pair_type(t, self.n)
    }

    /// Mask `m` (32-bit lanes) as the two halves of a `Pair` of type `pt` lanes: each lane
    /// widened to 64 bits, -1 or 0.
    pub(super) fn mask_halves(&mut self, m: Value, pt: Type) -> [Value; 2] {
        let little = MemFlagsData::new().with_endianness(Endianness::Little);
        let mut c = self.cursor();
        let halves = [c.ins().swiden_low(m), c.ins().swiden_high(m)];
        halves.map(|h| {
            if c.func.dfg.value_type(h) == pt {
                h
            } else {
                c.ins().bitcast(pt, little, h)
            }
        })
    }

    /// The type of a lane mask (i32x4 at four lanes).
    pub(super) fn mask_ty(&self) -> Type {
        types::I32.by(self.n as u32).expect("32-bit lanes")
    }

    pub(super) fn is_uniform(&self, v: Value) -> bool {
        matches!(self.form(v), Form::Uniform(_))
    }

    /// `v` (of scalar type `t`) as one vector of `t` × lanes.
    pub(super) fn vector(&mut self, v: Value) -> Value {
        let t = self.ty(v);
        let vt = self.wide(t);
        match self.form(v) {
            Form::Uniform(u) => match self.constant_bits(u) {
                // One `vconst` rather than a constant and its splat: the vector copy of a
                // large unrolled body is smaller for the JIT to optimise.
                Some(bits) => {
                    let bytes: Vec<u8> = (0..self.n).flat_map(|_| bits.to_le_bytes()).collect();
                    let c = self.func.dfg.constants.insert(ConstantData::from(bytes));
                    self.cursor().ins().vconst(vt, c)
                }
                None => self.cursor().ins().splat(vt, u),
            },
            Form::Vector(x) | Form::Mask(x) => x,
            Form::Affine { base, stride } => {
                let splat = self.cursor().ins().splat(vt, base);
                let mut bytes = Vec::with_capacity(4 * self.n);
                for k in 0..self.n as i64 {
                    bytes.extend_from_slice(&((stride.wrapping_mul(k)) as i32).to_le_bytes());
                }
                let c = self.func.dfg.constants.insert(ConstantData::from(bytes));
                let steps = self.cursor().ins().vconst(vt, c);
                self.cursor().ins().iadd(splat, steps)
            }
            Form::Lanes(_) | Form::Guarded { .. } | Form::Pair(_) => {
                let l = self.lanes(v);
                self.vector_of_lanes(vt, &l)
            }
        }
    }

    /// A vector of type `vt` whose lanes are the scalars `l`.
    pub(super) fn vector_of_lanes(&mut self, vt: Type, l: &[Value]) -> Value {
        let mut x = self.cursor().ins().scalar_to_vector(vt, l[0]);
        for (k, &lane) in l.iter().enumerate().skip(1) {
            x = self.cursor().ins().insertlane(x, lane, k as u8);
        }
        x
    }

    /// The lanes of a `Guarded` value whatever its guard says: its defining instruction once
    /// per lane, on its operands' (exact) lanes.
    pub(super) fn exact_lanes(&mut self, v: Value) -> Vec<Value> {
        let inst = self
            .func
            .dfg
            .value_def(v)
            .inst()
            .expect("guarded values are instruction results");
        let ctrl = self.func.dfg.ctrl_typevar(inst);
        let arg_lanes = self.args_as(inst, Self::lanes);
        self.clone_per_lane(inst, ctrl, &arg_lanes).swap_remove(0)
    }

    /// `v` as one scalar per lane.
    pub(super) fn lanes(&mut self, v: Value) -> Vec<Value> {
        let n = self.n;
        match self.form(v) {
            Form::Uniform(u) => vec![u; n],
            Form::Lanes(l) => l,
            Form::Guarded { .. } => self.exact_lanes(v),
            Form::Pair(p) => {
                let mut l = vec![p[0]; n];
                let half = n / 2;
                for (k, lane) in l.iter_mut().enumerate() {
                    *lane = self
                        .cursor()
                        .ins()
                        .extractlane(p[k / half], (k % half) as u8);
                }
                l
            }
            Form::Affine { base, stride } => {
                let mut l = vec![base; n];
                for (k, lane) in l.iter_mut().enumerate().skip(1) {
                    *lane = self
                        .cursor()
                        .ins()
                        .iadd_imm_s(base, stride.wrapping_mul(k as i64));
                }
                l
            }
            Form::Vector(x) => {
                let mut l = vec![x; n];
                for (k, lane) in l.iter_mut().enumerate() {
                    *lane = self.cursor().ins().extractlane(x, k as u8);
                }
                l
            }
            Form::Mask(m) => {
                // Booleans are i8 0/1.
                let mut l = vec![m; n];
                for (k, lane) in l.iter_mut().enumerate() {
                    let bits = self.cursor().ins().extractlane(m, k as u8);
                    let bit = self.cursor().ins().band_imm_s(bits, 1);
                    *lane = self.cursor().ins().ireduce(types::I8, bit);
                }
                l
            }
        }
    }

    /// The bits of 32-bit constant `v` (an `iconst` or `f32const`), if it is one.
    pub(super) fn constant_bits(&self, v: Value) -> Option<u32> {
        let inst = self.func.dfg.value_def(v).inst()?;
        match self.func.dfg.insts[inst] {
            InstructionData::UnaryImm {
                opcode: Opcode::Iconst,
                imm,
            } if self.ty(v) == types::I32 => Some(imm.bits() as u32),
            InstructionData::UnaryIeee32 {
                opcode: Opcode::F32const,
                imm,
            } => Some(imm.bits()),
            _ => None,
        }
    }

    /// `v` (a double, or a 64-bit integer in wide code) as two vectors of half the lanes (low
    /// lanes, high lanes).
    pub(super) fn pair(&mut self, v: Value) -> [Value; 2] {
        let pt = self.pair_ty_of(self.ty(v));
        match self.form(v) {
            Form::Pair(p) => p,
            Form::Uniform(u) => {
                let x = self.cursor().ins().splat(pt, u);
                [x, x]
            }
            Form::Affine { base, stride } => {
                let half = self.n / 2;
                let splat = self.cursor().ins().splat(pt, base);
                [0, 1].map(|h| {
                    let bytes: Vec<u8> = (0..half as i64)
                        .flat_map(|k| stride.wrapping_mul(h * half as i64 + k).to_le_bytes())
                        .collect();
                    let c = self.func.dfg.constants.insert(ConstantData::from(bytes));
                    let steps = self.cursor().ins().vconst(pt, c);
                    self.cursor().ins().iadd(splat, steps)
                })
            }
            _ => {
                let l = self.lanes(v);
                self.pair_from_lanes(&l)
            }
        }
    }

    /// Doubles `l` (one per lane) as the two halves of a `Pair`.
    pub(super) fn pair_from_lanes(&mut self, l: &[Value]) -> [Value; 2] {
        let pt = self.pair_ty_of(self.func.dfg.value_type(l[0]));
        let half = self.n / 2;
        [
            self.vector_of_lanes(pt, &l[..half]),
            self.vector_of_lanes(pt, &l[half..2 * half]),
        ]
    }

    /// Lane-wise arithmetic on the two halves of `Pair`s.
    pub(super) fn lane_wise_pair(&mut self, inst: ir::Inst) {
        let result = self.func.dfg.inst_results(inst)[0];
        let pairs = self.args_as(inst, Self::pair);
        let mut out = [result; 2];
        for (h, half) in out.iter_mut().enumerate() {
            let pt = self.pair_ty_of(self.ty(result));
            let new = self.clone_with(inst, pt, &pairs.iter().map(|a| a[h]).collect::<Vec<_>>());
            *half = new[0];
        }
        self.define(result, Form::Pair(out));
    }

    /// Boolean `v` (i8 0/1) as a mask of 32-bit lanes.
    pub(super) fn mask_of(&mut self, v: Value) -> Value {
        let mt = self.mask_ty();
        match self.form(v) {
            Form::Mask(m) => m,
            Form::Uniform(u) => {
                let wide = self.cursor().ins().uextend(types::I32, u);
                let all = self.cursor().ins().ineg(wide);
                self.cursor().ins().splat(mt, all)
            }
            _ => {
                let l = self.lanes(v);
                let mut lanes = l.clone();
                for (k, &b) in l.iter().enumerate() {
                    let wide = self.cursor().ins().uextend(types::I32, b);
                    lanes[k] = self.cursor().ins().ineg(wide);
                }
                self.vector_of_lanes(mt, &lanes)
            }
        }
    }

    /// A vector of `mask`'s lanes reinterpreted as `vt` (for `bitselect` on floats).
    pub(super) fn mask_as(&mut self, mask: Value, vt: Type) -> Value {
        if vt == self.mask_ty() {
            return mask;
        }
        let little = MemFlagsData::new().with_endianness(Endianness::Little);
        self.cursor().ins().bitcast(vt, little, mask)
    }

    /// Clones `inst` with its arguments mapped by `arg`, into the current block, controlled by
    /// `ctrl`; returns its results.
    pub(super) fn clone_inst(
        &mut self,
        inst: ir::Inst,
        ctrl: Type,
        mut arg: impl FnMut(Value) -> Value,
    ) -> Vec<Value> {
        let dfg = &mut self.func.dfg;
        let mut data = dfg.insts[inst].deep_clone(&mut dfg.value_lists);
        data.map_values(
            &mut dfg.value_lists,
            &mut dfg.jump_tables,
            &mut dfg.exception_tables,
            &mut arg,
        );
        let new = self.func.dfg.make_inst(data);
        self.func.dfg.make_inst_results(new, ctrl);
        self.func.layout.append_inst(new, self.current);
        self.func.dfg.inst_results(new).to_vec()
    }

    /// `inst`'s fixed arguments, aliases resolved.
    pub(super) fn resolved_args(&self, inst: ir::Inst) -> Vec<Value> {
        let dfg = &self.func.dfg;
        dfg.inst_args(inst)
            .iter()
            .map(|&v| dfg.resolve_aliases(v))
            .collect()
    }

    /// `inst`'s arguments (in `inst_values` order, aliases resolved), each in the form `to`
    /// gives it.
    pub(super) fn args_as<T>(
        &mut self,
        inst: ir::Inst,
        mut to: impl FnMut(&mut Self, Value) -> T,
    ) -> Vec<T> {
        let args: Vec<Value> = self
            .func
            .dfg
            .inst_values(inst)
            .map(|v| self.func.dfg.resolve_aliases(v))
            .collect();
        args.into_iter().map(|a| to(self, a)).collect()
    }

    /// `inst` once per lane on its arguments' lanes: the lanes of each result.
    pub(super) fn clone_per_lane(
        &mut self,
        inst: ir::Inst,
        ctrl: Type,
        arg_lanes: &[Vec<Value>],
    ) -> Vec<Vec<Value>> {
        let n = self.n;
        let mut out: Vec<Vec<Value>> = self
            .func
            .dfg
            .inst_results(inst)
            .iter()
            .map(|&r| vec![r; n])
            .collect();
        for lane in 0..n {
            let args: Vec<Value> = arg_lanes.iter().map(|a| a[lane]).collect();
            for (r, new) in out.iter_mut().zip(self.clone_with(inst, ctrl, &args)) {
                r[lane] = new;
            }
        }
        out
    }

    /// Clones `inst` with `args` in place of its arguments (in `inst_values` order).
    pub(super) fn clone_with(&mut self, inst: ir::Inst, ctrl: Type, args: &[Value]) -> Vec<Value> {
        let mut next = args.iter();
        self.clone_inst(inst, ctrl, |_| {
            *next.next().expect("one value per argument")
        })
    }

    pub(super) fn define(&mut self, v: Value, form: Form) {
        self.forms.insert(v, form);
    }

    /// The instruction once, with uniform arguments.
    pub(super) fn uniform(&mut self, inst: ir::Inst) {
        let ctrl = self.func.dfg.ctrl_typevar(inst);
        let old = self.func.dfg.inst_results(inst).to_vec();
        let raw: Vec<Value> = self.func.dfg.inst_values(inst).collect();
        let mapped: Vec<Value> = raw
            .iter()
            .map(|&v| match self.form(v) {
                Form::Uniform(u) => u,
                // Callers pass instructions whose arguments are all uniform.
                _ => v,
            })
            .collect();
        let new = self.clone_with(inst, ctrl, &mapped);
        for (o, n) in old.into_iter().zip(new) {
            self.define(o, Form::Uniform(n));
        }
    }

    /// The instruction once per lane (the form of last resort).
    pub(super) fn per_lane(&mut self, inst: ir::Inst) {
        let ctrl = self.func.dfg.ctrl_typevar(inst);
        let arg_lanes = self.args_as(inst, Self::lanes);
        let old = self.func.dfg.inst_results(inst).to_vec();
        let lanes = self.clone_per_lane(inst, ctrl, &arg_lanes);
        for (o, l) in old.into_iter().zip(lanes) {
            self.define(o, Form::Lanes(l));
        }
    }

    /// A lane-wise pure operation on vectors of 32-bit lanes.
    pub(super) fn lane_wise_vector(&mut self, inst: ir::Inst) {
        let result = self.func.dfg.inst_results(inst)[0];
        let vt = self.wide(self.ty(result));
        let vectors = self.args_as(inst, Self::vector);
        let new = self.clone_with(inst, vt, &vectors);
        self.define(result, Form::Vector(new[0]));
    }

    /// Integer arithmetic that keeps a value linear in the local id, if it does.
    pub(super) fn affine(&mut self, inst: ir::Inst) -> Option<Form> {
        let data = self.func.dfg.insts[inst];
        let result = *self.func.dfg.inst_results(inst).first()?;
        let t = self.ty(result);
        if !(t == types::I32 || t == types::I64) {
            return None;
        }
        let args = self.resolved_args(inst);
        // (base, stride, guard) of an affine or uniform operand.
        let parts = |s: &Self, v: Value| -> Option<(Value, i64, Option<Value>)> {
            match s.form(v) {
                Form::Affine { base, stride } => Some((base, stride, None)),
                Form::Guarded {
                    base,
                    stride,
                    exact_if,
                } => Some((base, stride, Some(exact_if))),
                Form::Uniform(u) => Some((u, 0, None)),
                _ => None,
            }
        };
        let wrap = |x: i64| if t == types::I32 { x as i32 as i64 } else { x };
        let (base, stride, guard) = match data.opcode() {
            Opcode::Iadd | Opcode::Isub => {
                let (a, sa, ga) = parts(self, args[0])?;
                let (b, sb, gb) = parts(self, args[1])?;
                let sub = data.opcode() == Opcode::Isub;
                let base = if sub {
                    self.cursor().ins().isub(a, b)
                } else {
                    self.cursor().ins().iadd(a, b)
                };
                let stride = if sub {
                    sa.wrapping_sub(sb)
                } else {
                    sa.wrapping_add(sb)
                };
                let guard = match (ga, gb) {
                    (Some(x), Some(y)) => Some(self.cursor().ins().band(x, y)),
                    (x, y) => x.or(y),
                };
                (base, stride, guard)
            }
            Opcode::Imul => {
                let ((a, sa, g), c) =
                    match (parts(self, args[0])?, iconst_value(self.func, args[1])) {
                        (p, Some(c)) => (p, c),
                        _ => (parts(self, args[1])?, iconst_value(self.func, args[0])?),
                    };
                let k = self.cursor().ins().iconst(t, c);
                let base = self.cursor().ins().imul(a, k);
                (base, sa.wrapping_mul(c), g)
            }
            Opcode::Ishl => {
                let (a, sa, g) = parts(self, args[0])?;
                let c = iconst_value(self.func, args[1])? & (i64::from(t.bits()) - 1);
                let (amount, _, _) = parts(self, args[1])?;
                let base = self.cursor().ins().ishl(a, amount);
                (base, sa.wrapping_shl(c as u32), g)
            }
            // Truncation is exact modulo 2^32 whatever the wide lanes did: no guard.
            Opcode::Ireduce if t == types::I32 => {
                let (a, sa, _) = parts(self, args[0])?;
                let base = self.cursor().ins().ireduce(types::I32, a);
                (base, sa, None)
            }
            op @ (Opcode::Uextend | Opcode::Sextend)
                if t == types::I64 && self.ty(args[0]) == types::I32 =>
            {
                let (a, sa, _) = parts(self, args[0])?;
                let signed = op == Opcode::Sextend;
                let base = if signed {
                    self.cursor().ins().sextend(types::I64, a)
                } else {
                    self.cursor().ins().uextend(types::I64, a)
                };
                if sa == 0 {
                    return Some(Form::Affine { base, stride: 0 });
                }
                // The lanes a, a + s, …, a + (n - 1)s stay in range (no 32-bit wrap) when a is
                // far enough from the end the stride moves toward.
                let span = (self.n as i64 - 1).saturating_mul(sa);
                let (lo, hi) = if signed {
                    (i64::from(i32::MIN), i64::from(i32::MAX))
                } else {
                    (0, i64::from(u32::MAX))
                };
                if span.abs() > hi - lo {
                    return None;
                }
                use ir::condcodes::IntCC;
                let guard = if span > 0 {
                    let cc = if signed {
                        IntCC::SignedLessThanOrEqual
                    } else {
                        IntCC::UnsignedLessThanOrEqual
                    };
                    self.cursor().ins().icmp_imm_s(cc, a, hi - span)
                } else {
                    let cc = if signed {
                        IntCC::SignedGreaterThanOrEqual
                    } else {
                        IntCC::UnsignedGreaterThanOrEqual
                    };
                    self.cursor().ins().icmp_imm_s(cc, a, lo - span)
                };
                (base, sa, Some(guard))
            }
            _ => return None,
        };
        let stride = wrap(stride);
        Some(match guard {
            None => Form::Affine { base, stride },
            Some(exact_if) => Form::Guarded {
                base,
                stride,
                exact_if,
            },
        })
    }

    /// A contiguous 32-bit access at `addr`: (base, guard) when the lanes' addresses are
    /// base + lane × size (if `guard`, when it holds).
    pub(super) fn contiguous(&self, t: Type, addr: Value) -> Option<(Value, Option<Value>)> {
        if !vectorisable_type(t) {
            return None;
        }
        match self.form(addr) {
            Form::Affine { base, stride } if stride == i64::from(t.bytes()) => Some((base, None)),
            Form::Guarded {
                base,
                stride,
                exact_if,
            } if stride == i64::from(t.bytes()) => Some((base, Some(exact_if))),
            _ => None,
        }
    }

    /// The vector form of contiguous load or store `inst` at `base` (its offset and flags
    /// kept, `aligned` dropped); the loaded vector for a load.
    pub(super) fn vector_access(&mut self, inst: ir::Inst, base: Value) -> Option<Value> {
        match self.func.dfg.insts[inst] {
            InstructionData::Load { flags, offset, .. } => {
                let t = self.ty(self.func.dfg.inst_results(inst)[0]);
                let vt = self.wide(t);
                let flags = vector_access_flags(self.func.dfg.mem_flags[flags]);
                Some(self.cursor().ins().load(vt, flags, base, offset))
            }
            InstructionData::Store {
                flags,
                offset,
                args: [value, _],
                ..
            } => {
                let value = self.func.dfg.resolve_aliases(value);
                let v = self.vector(value);
                let flags = vector_access_flags(self.func.dfg.mem_flags[flags]);
                self.cursor().ins().store(flags, v, base, offset);
                None
            }
            _ => None,
        }
    }

    /// The address and accessed type of load or store `inst`: plain `load` and `store` only,
    /// as the narrow ones (`uload16`, `istore16`, … of image texels) share their formats but
    /// access fewer bytes than their value's type.
    pub(super) fn access(&self, inst: ir::Inst) -> Option<(Value, Type)> {
        match self.func.dfg.insts[inst] {
            InstructionData::Load {
                opcode: Opcode::Load,
                arg,
                ..
            } => Some((
                self.func.dfg.resolve_aliases(arg),
                self.ty(self.func.dfg.inst_results(inst)[0]),
            )),
            InstructionData::Store {
                opcode: Opcode::Store,
                args: [value, addr],
                ..
            } => Some((self.func.dfg.resolve_aliases(addr), self.ty(value))),
            _ => None,
        }
    }

    /// A load or store of the lanes: one vector access when the addresses are contiguous
    /// (checked at run time for `Guarded` addresses, and for vector indices: contiguity.rs),
    /// else one per lane.
    pub(super) fn memory(&mut self, inst: ir::Inst) {
        if self.transposed(inst, None) {
            return;
        }
        let result = self.func.dfg.inst_results(inst).first().copied();
        let contiguous = self
            .access(inst)
            .and_then(|(addr, t)| self.contiguous(t, addr));
        let Some((base, guard)) = contiguous else {
            return match self.indexed_access(inst) {
                Some(ix) => self.run_time_contiguous(inst, ix, None),
                None if self.lane_intrinsic_access(inst, false) => {
                    self.gather_or_scatter(inst, None)
                }
                None => self.per_lane(inst),
            };
        };
        let v = match guard {
            None => self.vector_access(inst, base),
            Some(g) => {
                let vt = result.map(|r| self.wide(self.ty(r)));
                self.diamond(
                    g,
                    vt,
                    &mut |s: &mut Self| s.vector_access(inst, base),
                    &mut |s: &mut Self| {
                        s.per_lane(inst);
                        result.map(|r| s.vector(r))
                    },
                )
            }
        };
        if let (Some(r), Some(v)) = (result, v) {
            self.define(r, Form::Vector(v));
        }
    }

    pub(super) fn load(&mut self, inst: ir::Inst) {
        self.memory(inst);
    }

    pub(super) fn store(&mut self, inst: ir::Inst) {
        let Some((addr, _)) = self.access(inst) else {
            return self.per_lane(inst);
        };
        let InstructionData::Store {
            args: [value, _], ..
        } = self.func.dfg.insts[inst]
        else {
            return self.per_lane(inst);
        };
        let value = self.func.dfg.resolve_aliases(value);
        // Every work-item stores the same value at the same place: once is the same.
        if self.is_uniform(value) && self.is_uniform(addr) {
            return self.uniform(inst);
        }
        self.memory(inst);
    }

    /// Branch arguments in the form of `target`'s parameters.
    pub(super) fn block_args(
        &mut self,
        target: Block,
        args: &[Value],
    ) -> Result<Vec<BlockArg>, Refusal> {
        let forms = self.param_forms[&target].clone();
        let mut out = Vec::new();
        for (&a, form) in args.iter().zip(forms) {
            match form {
                ParamForm::Uniform => match self.form(a) {
                    Form::Uniform(u) => out.push(BlockArg::Value(u)),
                    _ => return Err("internal: a varying argument for a uniform parameter"),
                },
                ParamForm::Vector => {
                    let v = self.vector(a);
                    out.push(BlockArg::Value(v));
                }
                ParamForm::Pair => {
                    let p = self.pair(a);
                    out.extend(p.map(BlockArg::Value));
                }
                ParamForm::Lanes => {
                    let l = self.lanes(a);
                    out.extend(l.iter().map(|&v| BlockArg::Value(v)));
                }
            }
        }
        Ok(out)
    }

    pub(super) fn branch_target(
        &mut self,
        call: ir::BlockCall,
    ) -> Result<(Block, Vec<BlockArg>), Refusal> {
        let target = call.block(&self.func.dfg.value_lists);
        let args: Vec<Value> = call
            .args(&self.func.dfg.value_lists)
            .filter_map(|a| match a {
                BlockArg::Value(v) => Some(self.func.dfg.resolve_aliases(v)),
                _ => None,
            })
            .collect();
        if target == self.latch {
            return Ok((self.vector_latch, Vec::new()));
        }
        let new_target = *self
            .blocks
            .get(&target)
            .ok_or("a branch out of the work-item loop")?;
        let args = self.block_args(target, &args)?;
        Ok((new_target, args))
    }

    pub(super) fn branch(&mut self, inst: ir::Inst) -> Result<(), Refusal> {
        let data = self.func.dfg.insts[inst];
        match data {
            InstructionData::Jump { destination, .. } => {
                let (b, args) = self.branch_target(destination)?;
                self.cursor().ins().jump(b, &args);
            }
            InstructionData::Brif { arg, blocks, .. } => {
                let Form::Uniform(c) = self.form(arg) else {
                    return Err("work-items branch differently");
                };
                let (t, targs) = self.branch_target(blocks[0])?;
                let (e, eargs) = self.branch_target(blocks[1])?;
                self.cursor().ins().brif(c, t, &targs, e, &eargs);
            }
            InstructionData::BranchTable { arg, table, .. } => {
                let Form::Uniform(index) = self.form(arg) else {
                    return Err("work-items branch differently");
                };
                // The default first, then the table's entries.
                let calls = self.func.dfg.jump_tables[table].all_branches().to_vec();
                let mut mapped = Vec::with_capacity(calls.len());
                for call in calls {
                    let (b, args) = self.branch_target(call)?;
                    mapped.push(self.func.dfg.block_call(b, &args));
                }
                let data = ir::JumpTableData::new(mapped[0], &mapped[1..]);
                let jt = self.func.dfg.jump_tables.push(data);
                self.cursor().ins().br_table(index, jt);
            }
            _ => return Err("an unexpected terminator in the work-item loop"),
        }
        Ok(())
    }

    pub(super) fn instruction(&mut self, inst: ir::Inst) -> Result<(), Refusal> {
        if let Some(&fail) = self.guards.get(&inst) {
            self.guard(inst, fail);
            return Ok(());
        }
        let data = self.func.dfg.insts[inst];
        let op = data.opcode();
        if op.is_branch() {
            return self.branch(inst);
        }
        if op.is_terminator() {
            // trap / return: no arguments that vary (a return here would be malformed).
            self.uniform(inst);
            return Ok(());
        }
        match op {
            Opcode::StackAddr => {
                self.private_address(inst);
                return Ok(());
            }
            Opcode::DynamicStackAddr => {
                return Err("dynamically sized private memory on the stack");
            }
            _ => {}
        }
        if op == Opcode::Call && self.vector_math(inst) {
            return Ok(());
        }
        let side_effects =
            op.is_call() || op.can_store() || matches!(op, Opcode::AtomicRmw | Opcode::AtomicCas);
        if let Some(active) = self.active {
            if side_effects || op.can_load() {
                return self.masked(inst, active);
            }
        }
        let results = self.func.dfg.inst_results(inst).to_vec();
        let any_varying = results.iter().any(|r| self.varying.contains(r))
            || self.func.dfg.inst_values(inst).any(|v| !self.is_uniform(v));
        // Pure (or a store, which store() decides) with shared operands: once for all lanes.
        if !(any_varying || side_effects && op != Opcode::Store) {
            self.uniform(inst);
            return Ok(());
        }
        match op {
            Opcode::Load => self.load(inst),
            Opcode::Store => self.store(inst),
            _ if side_effects || results.len() != 1 => self.per_lane(inst),
            _ if self.divide_by_shared(inst) => {}
            _ => {
                let result = results[0];
                let t = self.ty(result);
                if let Some(form) = self.affine(inst) {
                    self.define(result, form);
                } else if lane_wise(op)
                    && vectorisable_type(t)
                    && self
                        .func
                        .dfg
                        .inst_args(inst)
                        .iter()
                        .all(|&a| vectorisable_type(self.ty(a)))
                {
                    self.lane_wise_vector(inst);
                } else if self.pairs(t)
                    && lane_wise(op)
                    && self
                        .func
                        .dfg
                        .inst_args(inst)
                        .iter()
                        .all(|&a| self.ty(a) == t)
                {
                    self.lane_wise_pair(inst);
                } else {
                    self.special(inst)?;
                }
            }
        }
        Ok(())
    }

    /// A zero of scalar or vector type `t` (the value inactive lanes get).
    pub(super) fn zero(&mut self, t: Type) -> Value {
        if t.is_vector() {
            let c = self
                .func
                .dfg
                .constants
                .insert(ConstantData::from(vec![0u8; t.bytes() as usize]));
            return self.cursor().ins().vconst(t, c);
        }
        match t {
            types::F32 => self.cursor().ins().f32const(0.0),
            types::F64 => self.cursor().ins().f64const(0.0),
            types::I128 => {
                let z = self.cursor().ins().iconst(types::I64, 0);
                self.cursor().ins().uextend(types::I128, z)
            }
            _ => self.cursor().ins().iconst(t, 0),
        }
    }

    /// Bytes `mask` of `a` (0–15) and `b` (16–31) as a vector of type `t`.
    pub(super) fn byte_shuffle(&mut self, a: Value, b: Value, mask: Vec<u8>, t: Type) -> Value {
        let little = MemFlagsData::new().with_endianness(Endianness::Little);
        let a = self.cursor().ins().bitcast(types::I8X16, little, a);
        let b = self.cursor().ins().bitcast(types::I8X16, little, b);
        let mask = self.func.dfg.immediates.push(ConstantData::from(mask));
        let v = self.cursor().ins().shuffle(a, b, mask);
        self.cursor().ins().bitcast(t, little, v)
    }

    /// Starts a block that continues the current one and makes it current.
    pub(super) fn new_block(&mut self) -> Block {
        let b = self.func.dfg.make_block();
        self.func.layout.append_block(b);
        b
    }

    /// Emits `then` only when `cond` (i8) holds: its values, or zeros of `types` otherwise,
    /// become the results. Leaves the builder after the join.
    pub(super) fn guarded(
        &mut self,
        cond: Value,
        types: &[Type],
        then: &mut dyn FnMut(&mut Self) -> Vec<Value>,
    ) -> Vec<Value> {
        let body = self.new_block();
        let join = self.new_block();
        let results: Vec<Value> = types
            .iter()
            .map(|&t| self.func.dfg.append_block_param(join, t))
            .collect();
        let zeros: Vec<BlockArg> = types
            .iter()
            .map(|&t| BlockArg::Value(self.zero(t)))
            .collect();
        self.cursor().ins().brif(cond, body, &[], join, &zeros);
        self.current = body;
        let values: Vec<BlockArg> = then(self).into_iter().map(BlockArg::Value).collect();
        self.cursor().ins().jump(join, &values);
        self.current = join;
        results
    }

    /// Whether lane `lane` of mask `m` is on (i8).
    pub(super) fn lane_on(&mut self, m: Value, lane: u8) -> Value {
        let bits = self.cursor().ins().extractlane(m, lane);
        self.cursor()
            .ins()
            .icmp_imm_s(ir::condcodes::IntCC::NotEqual, bits, 0)
    }

    /// `inst` once per active lane, in lane order.
    pub(super) fn per_active_lane(&mut self, inst: ir::Inst, active: Value) {
        let ctrl = self.func.dfg.ctrl_typevar(inst);
        let arg_lanes = self.args_as(inst, Self::lanes);
        let old = self.func.dfg.inst_results(inst).to_vec();
        let types: Vec<Type> = old.iter().map(|&r| self.ty(r)).collect();
        let mut results: Vec<Vec<Value>> = vec![Vec::with_capacity(self.n); old.len()];
        for lane in 0..self.n as u8 {
            let lane_args: Vec<Value> = arg_lanes.iter().map(|l| l[lane as usize]).collect();
            let on = self.lane_on(active, lane);
            let got = self.guarded(on, &types, &mut |v: &mut Self| {
                v.clone_with(inst, ctrl, &lane_args)
            });
            for (r, n) in results.iter_mut().zip(got) {
                r.push(n);
            }
        }
        for (o, l) in old.into_iter().zip(results) {
            self.define(o, Form::Lanes(l));
        }
    }

    /// A load at addresses of its own per lane inside a varying branch, without a branch per
    /// lane: once any lane is active, every lane loads, an inactive one from the address of an
    /// active lane (which that lane loads too, so it is as valid). Straight-line loads cost
    /// less than a branch per lane each, and LLVM may make them one gather.
    fn masked_gather(&mut self, inst: ir::Inst, active: Value) {
        let ctrl = self.func.dfg.ctrl_typevar(inst);
        let result = self.func.dfg.inst_results(inst)[0];
        let t = self.ty(result);
        let address = self.func.dfg.inst_args(inst)[0];
        let any = self.cursor().ins().vany_true(active);
        let n = self.n;
        let got = self.guarded(any, &vec![t; n], &mut |v: &mut Self| {
            let addresses = v.lanes(address);
            let on: Vec<Value> = (0..n as u8).map(|k| v.lane_on(active, k)).collect();
            let mut some_active = addresses[n - 1];
            for k in (0..n - 1).rev() {
                some_active = v.cursor().ins().select(on[k], addresses[k], some_active);
            }
            (0..n)
                .map(|k| {
                    let a = v.cursor().ins().select(on[k], addresses[k], some_active);
                    v.clone_with(inst, ctrl, &[a])[0]
                })
                .collect()
        });
        self.define(result, Form::Lanes(got));
    }

    /// A memory access, call or atomic inside a varying branch: only the active lanes may
    /// touch memory (an inactive lane's address may be out of bounds — the branch is often
    /// the bounds check). Contiguous accesses take the vector path when every lane is active.
    pub(super) fn masked(&mut self, inst: ir::Inst, active: Value) -> Result<(), Refusal> {
        let data = self.func.dfg.insts[inst];
        let uniform_operands = self.func.dfg.inst_values(inst).all(|v| self.is_uniform(v));
        let pure_load = data.opcode() == Opcode::Load;
        if uniform_operands && (pure_load || data.opcode() == Opcode::Store) {
            // One access for the group of lanes, if any of them is active.
            let any = self.cursor().ins().vany_true(active);
            let result_types: Vec<Type> = self
                .func
                .dfg
                .inst_results(inst)
                .iter()
                .map(|&r| self.ty(r))
                .collect();
            let old = self.func.dfg.inst_results(inst).to_vec();
            let got = self.guarded(any, &result_types, &mut |v: &mut Self| {
                v.uniform(inst);
                old.iter()
                    .map(|&r| match v.form(r) {
                        Form::Uniform(u) => u,
                        _ => unreachable!("uniform() defines uniform results"),
                    })
                    .collect()
            });
            for (o, n) in old.into_iter().zip(got) {
                self.define(o, Form::Uniform(n));
            }
            return Ok(());
        }
        if self.transposed(inst, Some(active)) {
            return Ok(());
        }
        let contiguous = self
            .access(inst)
            .and_then(|(addr, t)| self.contiguous(t, addr));
        let lane_intrinsic = self.lane_intrinsic_access(inst, true);
        let Some((base, guard)) = contiguous else {
            match self.indexed_access(inst) {
                Some(ix) => self.run_time_contiguous(inst, ix, Some(active)),
                None if lane_intrinsic => self.gather_or_scatter(inst, Some(active)),
                None if pure_load && !self.checked => self.masked_gather(inst, active),
                None => self.per_active_lane(inst, active),
            }
            return Ok(());
        };
        // Masked stores only with AVX-512's mask registers: AVX2's `vmaskmovps` store is
        // microcoded and slow on some cores, where the branch to a vector store is not.
        if lane_intrinsic && guard.is_none() && (pure_load || self.n >= 16) {
            self.masked_contiguous(inst, base, active);
            return Ok(());
        }
        // Every lane active (and the addresses contiguous): the vector access; else one
        // access per active lane.
        let mut all = self.cursor().ins().vall_true(active);
        if let Some(g) = guard {
            all = self.cursor().ins().band(all, g);
        }
        let result = self.func.dfg.inst_results(inst).first().copied();
        let vt = result.map(|r| self.wide(self.ty(r)));
        let saved = self.active.take();
        let v = self.diamond(
            all,
            vt,
            &mut |s: &mut Self| s.vector_access(inst, base),
            &mut |s: &mut Self| {
                if lane_intrinsic {
                    s.gather_or_scatter(inst, Some(active));
                } else {
                    s.per_active_lane(inst, active);
                }
                result.map(|r| s.vector(r))
            },
        );
        if let (Some(r), Some(v)) = (result, v) {
            self.define(r, Form::Vector(v));
        }
        self.active = saved;
        Ok(())
    }

    /// Block parameters of `target` from its incoming edges inside a linearised branch: the
    /// first edge's arguments, replaced lane by lane by each later edge's where that edge's
    /// mask is on (the edges' masks are disjoint).
    pub(super) fn merge_params(&mut self, target: Block, incoming: &[(Value, Vec<Value>)]) {
        let params = self.func.dfg.block_params(target).to_vec();
        for (i, &p) in params.iter().enumerate() {
            let args: Vec<Value> = incoming.iter().map(|(_, a)| a[i]).collect();
            if args.iter().all(|&a| a == args[0]) {
                let f = self.form(args[0]);
                self.define(p, f);
                continue;
            }
            let t = self.ty(p);
            if vectorisable_type(t) {
                let vt = self.wide(t);
                let mut v = self.vector(args[0]);
                for (m, a) in incoming.iter().skip(1).map(|(m, a)| (*m, a[i])) {
                    let x = self.vector(a);
                    let m = self.mask_as(m, vt);
                    v = self.cursor().ins().bitselect(m, x, v);
                }
                self.define(p, Form::Vector(v));
            } else if self.pairs(t) {
                let pt = self.pair_ty_of(t);
                let mut v = self.pair(args[0]);
                for (m, a) in incoming.iter().skip(1).map(|(m, a)| (*m, a[i])) {
                    let x = self.pair(a);
                    let m = self.mask_halves(m, pt);
                    for h in 0..2 {
                        v[h] = self.cursor().ins().bitselect(m[h], x[h], v[h]);
                    }
                }
                self.define(p, Form::Pair(v));
            } else {
                let mut l = self.lanes(args[0]);
                for (m, a) in incoming.iter().skip(1).map(|(m, a)| (*m, a[i])) {
                    let x = self.lanes(a);
                    for (k, lane) in l.iter_mut().enumerate() {
                        let on = self.lane_on(m, k as u8);
                        *lane = self.cursor().ins().select(on, x[k], *lane);
                    }
                }
                self.define(p, Form::Lanes(l));
            }
        }
    }

    /// The edges of terminator `inst` (of a block whose active lanes are `m`): each target
    /// with the mask of the lanes that take it and the arguments they pass.
    pub(super) fn edges(
        &mut self,
        inst: ir::Inst,
        m: Value,
    ) -> Result<Vec<(Block, Value, Vec<Value>)>, Refusal> {
        let data = self.func.dfg.insts[inst];
        let args_of = |s: &Self, call: ir::BlockCall| -> (Block, Vec<Value>) {
            let target = call.block(&s.func.dfg.value_lists);
            let args = call
                .args(&s.func.dfg.value_lists)
                .filter_map(|a| match a {
                    BlockArg::Value(v) => Some(s.func.dfg.resolve_aliases(v)),
                    _ => None,
                })
                .collect();
            (target, args)
        };
        match data {
            InstructionData::Jump { destination, .. } => {
                let (t, a) = args_of(self, destination);
                Ok(vec![(t, m, a)])
            }
            InstructionData::Brif { arg, blocks, .. } => {
                let c = self.mask_of(self.func.dfg.resolve_aliases(arg));
                let taken = self.cursor().ins().band(m, c);
                let not_c = self.cursor().ins().bnot(c);
                let other = self.cursor().ins().band(m, not_c);
                let (t, ta) = args_of(self, blocks[0]);
                let (e, ea) = args_of(self, blocks[1]);
                Ok(vec![(t, taken, ta), (e, other, ea)])
            }
            _ => Err("a switch inside a branch the work-items take differently"),
        }
    }

    /// `acc` with the lanes of `mask` replaced by those of value `new` (of scalar type `t`).
    pub(super) fn blend(&mut self, mask: Value, new: Value, acc: Form, t: Type) -> Form {
        if vectorisable_type(t) {
            let vt = self.wide(t);
            let x = self.vector(new);
            let Form::Vector(old) = acc else {
                unreachable!("32-bit accumulators are vectors")
            };
            let m = self.mask_as(mask, vt);
            Form::Vector(self.cursor().ins().bitselect(m, x, old))
        } else if self.pairs(t) {
            let x = self.pair(new);
            let Form::Pair(old) = acc else {
                unreachable!("accumulators of pair types are pairs")
            };
            let m = self.mask_halves(mask, self.pair_ty_of(t));
            let mut c = self.cursor();
            Form::Pair([0, 1].map(|h| c.ins().bitselect(m[h], x[h], old[h])))
        } else {
            let x = self.lanes(new);
            let Form::Lanes(mut l) = acc else {
                unreachable!("other accumulators are lanes")
            };
            for (k, lane) in l.iter_mut().enumerate() {
                let on = self.lane_on(mask, k as u8);
                *lane = self.cursor().ins().select(on, x[k], *lane);
            }
            Form::Lanes(l)
        }
    }

    /// A zero accumulator of scalar type `t` (Vector for 32-bit lanes, Pair for pair types,
    /// else Lanes).
    pub(super) fn zero_form(&mut self, t: Type) -> Form {
        if vectorisable_type(t) {
            Form::Vector(self.zero(self.wide(t)))
        } else if self.pairs(t) {
            let z = self.zero(self.pair_ty_of(t));
            Form::Pair([z, z])
        } else {
            let z = self.zero(t);
            Form::Lanes(vec![z; self.n])
        }
    }

    /// The block arguments that pass `forms` (Vector: one value, Pair: two, Lanes: one per
    /// lane).
    pub(super) fn form_args(forms: &[Form]) -> Vec<BlockArg> {
        let mut out = Vec::new();
        for f in forms {
            match f {
                Form::Vector(v) | Form::Mask(v) | Form::Uniform(v) => out.push(BlockArg::Value(*v)),
                Form::Pair(p) => out.extend(p.map(BlockArg::Value)),
                Form::Lanes(l) => out.extend(l.iter().map(|&v| BlockArg::Value(v))),
                Form::Affine { .. } | Form::Guarded { .. } => {
                    unreachable!("carried values are vectors, pairs or lanes")
                }
            }
        }
        out
    }

    /// `v` as a Vector (32-bit lanes), Pair (pair types) or Lanes form, for carrying it
    /// around a loop.
    pub(super) fn carried(&mut self, v: Value) -> Form {
        let t = self.ty(v);
        if vectorisable_type(t) {
            Form::Vector(self.vector(v))
        } else if self.pairs(t) {
            Form::Pair(self.pair(v))
        } else {
            Form::Lanes(self.lanes(v))
        }
    }

    /// Block parameters for `forms` of scalar types `types`, appended to `block`.
    pub(super) fn form_params(&mut self, block: Block, types: &[Type]) -> Vec<Form> {
        types
            .iter()
            .map(|&t| {
                if vectorisable_type(t) {
                    let vt = self.wide(t);
                    Form::Vector(self.func.dfg.append_block_param(block, vt))
                } else if self.pairs(t) {
                    let pt = self.pair_ty_of(t);
                    Form::Pair([0, 1].map(|_| self.func.dfg.append_block_param(block, pt)))
                } else {
                    let l: Vec<Value> = (0..self.n)
                        .map(|_| self.func.dfg.append_block_param(block, t))
                        .collect();
                    Form::Lanes(l)
                }
            })
            .collect()
    }

    /// Runs masked loop `header` (its parameters' forms already hold the entry values) for
    /// the lanes of `entry`: while any lane is still in it, one iteration of its body as
    /// straight-line code under the mask of the remaining lanes; a lane that takes the exit
    /// leaves with its exit arguments and header values. Ends after the loop with the exit's
    /// parameters and the header's live-outs defined; returns the mask of the lanes that left
    /// (all of `entry`).
    pub(super) fn emit_loop(&mut self, header: Block, entry: Value) -> Result<Value, Refusal> {
        let (blocks, exit, live_outs) = {
            let l = &self.loops[&header];
            (l.blocks.clone(), l.exit, l.live_outs.clone())
        };
        let params = self.func.dfg.block_params(header).to_vec();
        let exit_params: Vec<Value> = if exit == self.latch {
            Vec::new()
        } else {
            self.func.dfg.block_params(exit).to_vec()
        };
        let param_types: Vec<Type> = params.iter().map(|&p| self.ty(p)).collect();
        let carried_types: Vec<Type> = exit_params
            .iter()
            .chain(&live_outs)
            .map(|&v| self.ty(v))
            .collect();
        // The loop block: header parameters, the active lanes, the accumulators, the lanes
        // that left.
        let head = self.new_block();
        let mut entry_forms: Vec<Form> = params.iter().map(|&p| self.carried(p)).collect();
        entry_forms.push(Form::Mask(entry));
        for &t in &carried_types {
            let z = self.zero_form(t);
            entry_forms.push(z);
        }
        let mt = self.mask_ty();
        let none = self.zero(mt);
        entry_forms.push(Form::Mask(none));
        let args = Self::form_args(&entry_forms);
        self.cursor().ins().jump(head, &args);

        self.current = head;
        let param_forms = self.form_params(head, &param_types);
        let active = self.func.dfg.append_block_param(head, mt);
        let mut accs = self.form_params(head, &carried_types);
        let mut left = self.func.dfg.append_block_param(head, mt);
        for (&p, f) in params.iter().zip(&param_forms) {
            self.define(p, f.clone());
        }

        let mut incoming: HashMap<Block, Vec<(Value, Vec<Value>)>> = HashMap::new();
        let mut back: Option<(Value, Vec<Value>)> = None;
        let saved = self.active;
        // Blocks of loops nested in this one, emitted by their own (recursive) `emit_loop`.
        let mut in_nested: HashSet<Block> = HashSet::new();
        for &block in &blocks {
            if in_nested.contains(&block) {
                continue;
            }
            if block != header && self.loops.contains_key(&block) {
                let edges = incoming.remove(&block).unwrap_or_default();
                let Some(first) = edges.first() else {
                    continue; // no lane can reach it
                };
                let mut m = first.0;
                for (e, _) in edges.iter().skip(1) {
                    m = self.cursor().ins().bor(m, *e);
                }
                self.merge_params(block, &edges);
                let inner_exit = {
                    let l = &self.loops[&block];
                    in_nested.extend(l.blocks.iter().copied());
                    l.exit
                };
                if inner_exit == self.latch || !blocks.contains(&inner_exit) {
                    return Err("a loop inside a loop leaves both");
                }
                self.active = None;
                let left = self.emit_loop(block, m)?;
                let params = self.func.dfg.block_params(inner_exit).to_vec();
                incoming.entry(inner_exit).or_default().push((left, params));
                continue;
            }
            let m = if block == header {
                active
            } else {
                let edges = incoming.remove(&block).unwrap_or_default();
                let Some(first) = edges.first() else {
                    continue; // no lane can reach it
                };
                let mut m = first.0;
                for (e, _) in edges.iter().skip(1) {
                    m = self.cursor().ins().bor(m, *e);
                }
                self.merge_params(block, &edges);
                m
            };
            self.active = Some(m);
            let insts: Vec<ir::Inst> = self.func.layout.block_insts(block).collect();
            let (last, body) = insts.split_last().ok_or("an empty block")?;
            for &inst in body {
                self.instruction(inst)?;
            }
            self.active = None;
            for (t, em, a) in self.edges(*last, m)? {
                if t == header {
                    back = Some((em, a));
                } else if t == exit {
                    left = self.cursor().ins().bor(left, em);
                    let values: Vec<Value> =
                        a.iter().copied().chain(live_outs.iter().copied()).collect();
                    for (i, v) in values.into_iter().enumerate() {
                        let acc = std::mem::replace(&mut accs[i], Form::Uniform(v));
                        accs[i] = self.blend(em, v, acc, carried_types[i]);
                    }
                } else if blocks.contains(&t) {
                    incoming.entry(t).or_default().push((em, a));
                } else {
                    return Err("a loop the work-items leave differently has two exits");
                }
            }
        }
        self.active = saved;
        let after = self.new_block();
        let (cont, next) = match back {
            Some((m, a)) => (m, a),
            None => (self.zero(mt), params.clone()),
        };
        let mut next_forms: Vec<Form> = next.iter().map(|&v| self.carried(v)).collect();
        next_forms.push(Form::Mask(cont));
        next_forms.extend(accs.iter().cloned());
        next_forms.push(Form::Mask(left));
        let next_args = Self::form_args(&next_forms);
        let again = self.cursor().ins().vany_true(cont);
        self.cursor()
            .ins()
            .brif(again, head, &next_args, after, &[]);
        self.current = after;
        for (v, f) in exit_params.iter().chain(&live_outs).zip(accs) {
            self.define(*v, f);
        }
        Ok(left)
    }

    /// Emits varying branch `entry` and `region` as straight-line code under lane masks, then
    /// jumps to the join with its parameters merged.
    pub(super) fn linearise(&mut self, entry: Block, region: &Region) -> Result<(), Refusal> {
        let term = self.func.layout.last_inst(entry).ok_or("an empty block")?;
        let all = {
            let ones = self.cursor().ins().iconst(types::I32, -1);
            let mt = self.mask_ty();
            self.cursor().ins().splat(mt, ones)
        };
        let mut incoming: HashMap<Block, Vec<(Value, Vec<Value>)>> = HashMap::new();
        for (t, m, a) in self.edges(term, all)? {
            incoming.entry(t).or_default().push((m, a));
        }
        let mut in_loops: HashSet<Block> = HashSet::new();
        for &block in &region.blocks {
            if in_loops.contains(&block) {
                continue; // emitted with its loop
            }
            let edges = incoming.remove(&block).unwrap_or_default();
            let Some(first) = edges.first() else {
                continue; // no lane can reach it
            };
            let mut m = first.0;
            for (e, _) in edges.iter().skip(1) {
                m = self.cursor().ins().bor(m, *e);
            }
            self.merge_params(block, &edges);
            if self.loops.contains_key(&block) {
                let exit = {
                    let l = &self.loops[&block];
                    in_loops.extend(l.blocks.iter().copied());
                    l.exit
                };
                let left = self.emit_loop(block, m)?;
                let params = self.func.dfg.block_params(exit).to_vec();
                if exit != region.join && !region.blocks.contains(&exit) {
                    return Err("a loop leaves a branch the work-items take differently");
                }
                incoming.entry(exit).or_default().push((left, params));
                continue;
            }
            self.active = Some(m);
            let insts: Vec<ir::Inst> = self.func.layout.block_insts(block).collect();
            let (last, body) = insts.split_last().ok_or("an empty block")?;
            for &inst in body {
                self.instruction(inst)?;
            }
            self.active = None;
            for (t, em, a) in self.edges(*last, m)? {
                if t != region.join && !region.blocks.contains(&t) {
                    return Err("a branch out of a branch the work-items take differently");
                }
                incoming.entry(t).or_default().push((em, a));
            }
        }
        let edges = incoming.remove(&region.join).unwrap_or_default();
        if region.join == self.latch {
            let latch = self.vector_latch;
            self.cursor().ins().jump(latch, &[]);
        } else {
            self.merge_params(region.join, &edges);
            let copy = self.blocks[&region.join];
            self.cursor().ins().jump(copy, &[]);
        }
        Ok(())
    }
}

/// Flags of a vector access made from a scalar one: the same, except that a vector of
/// consecutive elements is only as aligned as one element (`aligned` would let Cranelift fold
/// the load into an SSE operand that faults on unaligned addresses).
pub(super) fn vector_access_flags(scalar: MemFlagsData) -> MemFlagsData {
    let mut flags = MemFlagsData::new().with_alias_region(scalar.alias_region());
    if scalar.notrap() {
        flags.set_notrap();
    }
    if scalar.readonly() {
        flags.set_readonly();
    }
    if scalar.can_move() {
        flags.set_can_move();
    }
    if let Some(e) = scalar.explicit_endianness() {
        flags.set_endianness(e);
    }
    flags
}
