//! Comparisons and selects, float arithmetic (with Cranelift's NaN rules for `fmin`/`fmax`)
//! and conversions (saturating and trapping).

use super::*;

impl Translator<'_> {
    /// Comparisons, selects, masks and lane reductions to booleans.
    pub(super) fn compare_select(&mut self, inst: Inst, op: Opcode) -> G {
        let func = self.func;
        let args = self.args(inst);
        let r = self.res(inst, 0);
        let rt = self.res_ty(inst, 0);
        use Opcode::*;
        match (op, &func.dfg.insts[inst]) {
            (Icmp, InstructionData::IntCompare { cond, .. }) => {
                let t = self.ty_of(args[0]);
                let (a, b) = (self.tv(args[0])?, self.v(args[1]));
                let c = self.let_(format!("icmp {} {a}, {b}", int_pred(*cond)));
                self.define_bool(&r, &c, t)?;
            }
            (Fcmp, InstructionData::FloatCompare { cond, .. }) => {
                let t = self.ty_of(args[0]);
                let (a, b) = (self.tv(args[0])?, self.v(args[1]));
                let c = self.let_(format!("fcmp {} {a}, {b}", float_pred(*cond)));
                self.define_bool(&r, &c, t)?;
            }
            (Select | SelectSpectreGuard, _) => {
                let c = self.truthy(args[0])?;
                let (x, y) = (self.tv(args[1])?, self.tv(args[2])?);
                self.emit(format!("{r} = select i1 {c}, {x}, {y}"));
            }
            (Bitselect, _) => {
                let ts: Vec<Type> = args.iter().map(|&a| self.ty_of(a)).collect();
                if ts[0].bits() != rt.bits() {
                    return Err(why("a mask of another size"));
                }
                let it = int_shape(rt);
                let ity = llty(it)?;
                let mut ops = Vec::new();
                for (&a, &t) in args.iter().zip(&ts) {
                    let v = self.v(a);
                    let v = self.as_int(&v, t)?;
                    // A mask of another shape of the same size: its bits.
                    let v = if int_shape(t) != it {
                        self.let_(format!("bitcast {} {v} to {ity}", llty(int_shape(t))?))
                    } else {
                        v
                    };
                    ops.push(v);
                }
                if ts[0].lane_count() == rt.lane_count()
                    && self.masks.contains(&self.func.dfg.resolve_aliases(args[0]))
                {
                    // Lanes all ones or all zeros: a lane select (kept in mask registers).
                    let m = self.let_(format!("icmp slt {ity} {}, zeroinitializer", ops[0]));
                    let (x, y) = (self.tv(args[1])?, self.tv(args[2])?);
                    let i1 = Self::i1_of(rt);
                    self.emit(format!("{r} = select {i1} {m}, {x}, {y}"));
                    return Ok(());
                }
                let ones = splat_const(it, "-1")?;
                let cx = self.let_(format!("and {ity} {}, {}", ops[0], ops[1]));
                let nc = self.let_(format!("xor {ity} {}, {ones}", ops[0]));
                let ncy = self.let_(format!("and {ity} {nc}, {}", ops[2]));
                let v = self.let_(format!("or {ity} {cx}, {ncy}"));
                self.define_as(&r, &v, it, rt)?;
            }
            (Blendv, _) => {
                // The top bit of each lane of `c` chooses.
                let ct = self.ty_of(args[0]);
                if ct.lane_count() != rt.lane_count() {
                    return Err(why("a mask of another lane count"));
                }
                let c = self.v(args[0]);
                let c = self.as_int(&c, ct)?;
                let cit = llty(int_shape(ct))?;
                let m = self.let_(format!("icmp slt {cit} {c}, {}", Self::zero(ct)));
                let (x, y) = (self.tv(args[1])?, self.tv(args[2])?);
                let i1 = Self::i1_of(rt);
                self.emit(format!("{r} = select {i1} {m}, {x}, {y}"));
            }
            (Bmask, _) => {
                let t = self.ty_of(args[0]);
                if t.lane_count() != rt.lane_count() || t.is_float() {
                    return Err(why(format!("bmask from {t} to {rt}")));
                }
                let a = self.tv(args[0])?;
                let c = self.let_(format!("icmp ne {a}, {}", Self::zero(t)));
                let (i1, rty) = (Self::i1_of(t), llty(rt)?);
                self.emit(format!("{r} = sext {i1} {c} to {rty}"));
            }
            (VanyTrue | VallTrue | VhighBits, _) => {
                let t = self.ty_of(args[0]);
                if !t.is_vector() {
                    return Err(why("a scalar operand"));
                }
                let n = t.lane_count();
                let a = self.v(args[0]);
                let a = self.as_int(&a, t)?;
                let ity = llty(int_shape(t))?;
                if op == VhighBits {
                    let neg = self.let_(format!("icmp slt {ity} {a}, zeroinitializer"));
                    let bits = self.let_(format!("bitcast <{n} x i1> {neg} to i{n}"));
                    let rty = llty(rt)?;
                    let cast = match n.cmp(&rt.bits()) {
                        std::cmp::Ordering::Less => "zext",
                        std::cmp::Ordering::Greater => "trunc",
                        std::cmp::Ordering::Equal => "bitcast",
                    };
                    self.emit(format!("{r} = {cast} i{n} {bits} to {rty}"));
                } else {
                    let nz = self.let_(format!("icmp ne {ity} {a}, zeroinitializer"));
                    let name = if op == VanyTrue { "or" } else { "and" };
                    let b = self.call_intrinsic(
                        &format!("llvm.vector.reduce.{name}.v{n}i1"),
                        "i1",
                        &[format!("<{n} x i1> {nz}")],
                    );
                    self.emit(format!("{r} = zext i1 {b} to i8"));
                }
            }
            _ => return Err(None),
        }
        Ok(())
    }

    /// Float arithmetic (lane-generic).
    pub(super) fn float_arith(&mut self, inst: Inst, op: Opcode) -> G {
        let args = self.args(inst);
        let t = self.res_ty(inst, 0);
        let ty = llty(t)?;
        let m = mangle(t);
        let r = self.res(inst, 0);
        let ops: Vec<String> = args
            .iter()
            .map(|&a| format!("{ty} {}", self.v(a)))
            .collect();
        use Opcode::*;
        let intrinsic = match op {
            Fadd | Fsub | Fmul | Fdiv => {
                let name = format!("{op}");
                let (a, b) = (self.v(args[0]), self.v(args[1]));
                self.emit(format!("{r} = {name} {ty} {a}, {b}"));
                return Ok(());
            }
            Fneg => {
                self.emit(format!("{r} = fneg {}", ops[0]));
                return Ok(());
            }
            Fmin | Fmax => return self.min_max(inst, op == Fmin).map_err(Some),
            Sqrt => "sqrt",
            Fma => "fma",
            Fabs => "fabs",
            Fcopysign => "copysign",
            Floor => "floor",
            Ceil => "ceil",
            Trunc => "trunc",
            Nearest => "roundeven",
            _ => return Err(None),
        };
        let v = self.call_intrinsic(&format!("llvm.{intrinsic}.{m}"), &ty, &ops);
        self.define_as(&r, &v, t, t)?;
        Ok(())
    }

    /// fmin/fmax exactly as Cranelift's x86-64 lowering computes them, NaN bits included:
    /// scalars by its compare-and-branch sequence, vectors by its branchless one.
    pub(super) fn min_max(&mut self, inst: Inst, is_min: bool) -> R {
        let args = self.args(inst);
        let t = self.res_ty(inst, 0);
        let it = int_shape(t);
        let (ty, ity) = (llty(t)?, llty(it)?);
        let i1 = Self::i1_of(t);
        let r = self.res(inst, 0);
        let (x, y) = (self.v(args[0]), self.v(args[1]));
        let xb = self.as_int(&x, t)?;
        let yb = self.as_int(&y, t)?;
        let frac_shift = if t.lane_bits() == 32 { 10 } else { 13 };
        if !t.is_vector() {
            // ucomis y, x; unordered: y + x (y's NaN quieted if y is one, else x's); equal:
            // or (min) / and (max) of the bits; else min/max of y and x.
            let quiet = if t.bits() == 32 {
                "4194304".to_owned()
            } else {
                "2251799813685248".to_owned()
            };
            let y_nan = self.let_(format!("fcmp uno {ty} {y}, {y}"));
            let qy = self.let_(format!("or {ity} {yb}, {quiet}"));
            let qx = self.let_(format!("or {ity} {xb}, {quiet}"));
            let nan = self.let_(format!("select i1 {y_nan}, {ity} {qy}, {ity} {qx}"));
            let merge = if is_min { "or" } else { "and" };
            let eq_bits = self.let_(format!("{merge} {ity} {xb}, {yb}"));
            let pred = if is_min { "olt" } else { "ogt" };
            let y_wins = self.let_(format!("fcmp {pred} {ty} {y}, {x}"));
            let mm = self.let_(format!("select i1 {y_wins}, {ity} {yb}, {ity} {xb}"));
            let uno = self.let_(format!("fcmp uno {ty} {x}, {y}"));
            let oeq = self.let_(format!("fcmp oeq {ty} {x}, {y}"));
            let v = self.let_(format!("select i1 {oeq}, {ity} {eq_bits}, {ity} {mm}"));
            let v = self.let_(format!("select i1 {uno}, {ity} {nan}, {ity} {v}"));
            return self.define_as(&r, &v, it, t);
        }
        // minps/maxps a, b = a <op> b ? a : b (b when unordered or both zero).
        let pred = if is_min { "olt" } else { "ogt" };
        let c1 = self.let_(format!("fcmp {pred} {ty} {x}, {y}"));
        let m1 = self.let_(format!("select {i1} {c1}, {ity} {xb}, {ity} {yb}"));
        let c2 = self.let_(format!("fcmp {pred} {ty} {y}, {x}"));
        let m2 = self.let_(format!("select {i1} {c2}, {ity} {yb}, {ity} {xb}"));
        let f = |s: &mut Self, v: &str| s.let_(format!("bitcast {ity} {v} to {ty}"));
        let (value, nan) = if is_min {
            // or of both (NaN if either is, -0 if either is); unordered lanes get all ones.
            let or = self.let_(format!("or {ity} {m1}, {m2}"));
            let (m1f, m2f) = (f(self, &m1), f(self, &m2));
            let nan = self.let_(format!("fcmp uno {ty} {m1f}, {m2f}"));
            let mask = self.let_(format!("sext {i1} {nan} to {ity}"));
            let v = self.let_(format!("or {ity} {or}, {mask}"));
            (v, mask)
        } else {
            // max1 | (max1 ^ max2) is NaN if either is; minus the xor makes +0 of ±0.
            let x12 = self.let_(format!("xor {ity} {m1}, {m2}"));
            let blended = self.let_(format!("or {ity} {m1}, {x12}"));
            let (bf, xf) = (f(self, &blended), f(self, &x12));
            let pos = self.let_(format!("fsub {ty} {bf}, {xf}"));
            let nan = self.let_(format!("fcmp uno {ty} {bf}, {bf}"));
            let mask = self.let_(format!("sext {i1} {nan} to {ity}"));
            let v = self.as_int(&pos, t)?;
            (v, mask)
        };
        // NaN lanes keep sign, exponent and the quiet bit only.
        let sh = splat_const(it, &frac_shift.to_string())?;
        let frac = self.let_(format!("lshr {ity} {nan}, {sh}"));
        let ones = splat_const(it, "-1")?;
        let keep = self.let_(format!("xor {ity} {frac}, {ones}"));
        let v = self.let_(format!("and {ity} {keep}, {value}"));
        self.define_as(&r, &v, it, t)
    }

    /// Conversions between integer widths, floats, and types of one size.
    pub(super) fn conversions(&mut self, inst: Inst, op: Opcode) -> G {
        let func = self.func;
        let args = self.args(inst);
        let rt = self.res_ty(inst, 0);
        let rty = llty(rt)?;
        let r = self.res(inst, 0);
        let t = self.ty_of(args[0]);
        let a = self.tv(args[0])?;
        use Opcode::*;
        let cast = |name: &str| format!("{r} = {name} {a} to {rty}");
        match op {
            Uextend => self.emit(cast("zext")),
            Sextend => self.emit(cast("sext")),
            Ireduce => self.emit(cast("trunc")),
            Fpromote => self.emit(cast("fpext")),
            Fdemote => self.emit(cast("fptrunc")),
            FcvtFromSint => self.emit(cast("sitofp")),
            FcvtFromUint => self.emit(cast("uitofp")),
            FcvtToSintSat | FcvtToUintSat => {
                let s = if op == FcvtToSintSat { "s" } else { "u" };
                let v = self.call_intrinsic(
                    &format!("llvm.fpto{s}i.sat.{}.{}", mangle(rt), mangle(t)),
                    &rty,
                    &[a],
                );
                self.define_as(&r, &v, rt, rt)?;
            }
            FcvtToSint | FcvtToUint => {
                if t.is_vector() {
                    return Err(why("a vector conversion"));
                }
                let signed = op == FcvtToSint;
                let ok = self.in_int_range(&a, t, rt.bits(), signed)?;
                let bad = self.let_(format!("xor i1 {ok}, true"));
                self.trap_if(&bad);
                self.emit(cast(if signed { "fptosi" } else { "fptoui" }));
            }
            X86Cvtt2dq => {
                // cvtt{ps,pd}2dq: INT_MIN for NaN and out-of-range lanes; a 2-lane source
                // fills the low lanes and zeroes the rest.
                let n = t.lane_count();
                if rt.lane_type() != types::I32 || !t.lane_type().is_float() || rt.lane_count() < n
                {
                    return Err(why(format!("from {t} to {rt}")));
                }
                let ok = self.in_int_range(&a, t, 32, true)?;
                let narrow = llty(with_lanes(types::I32X4, n)?)?;
                let c = self.let_(format!("fptosi {a} to {narrow}"));
                let min = splat_const(with_lanes(types::I32X4, n)?, "-2147483648")?;
                let i1 = Self::i1_of(t);
                let v = self.let_(format!("select {i1} {ok}, {narrow} {c}, {narrow} {min}"));
                let rl = rt.lane_count();
                if rl == n {
                    self.define_as(&r, &v, rt, rt)?;
                } else {
                    let idx = mask((0..n).chain((0..rl - n).map(|i| n + (i % n))));
                    self.emit(format!(
                        "{r} = shufflevector {narrow} {v}, {narrow} zeroinitializer, {idx}"
                    ));
                }
            }
            Bitcast => {
                let flags = func.dfg.insts[inst]
                    .memflags_data(&func.dfg)
                    .unwrap_or_else(ir::MemFlagsData::new);
                if flags.explicit_endianness() == Some(Endianness::Big) && t.is_vector() {
                    return Err(why("a big-endian lane order"));
                }
                self.emit(cast("bitcast"));
            }
            Isplit => {
                if t.is_vector() {
                    return Err(why("vector operand"));
                }
                let h = t.bits() / 2;
                let hty = format!("i{h}");
                let lo = self.res(inst, 0);
                let hi = self.res(inst, 1);
                self.emit(format!("{lo} = trunc {a} to {hty}"));
                let s = self.let_(format!("lshr {a}, {h}"));
                let ty = llty(t)?;
                self.emit(format!("{hi} = trunc {ty} {s} to {hty}"));
            }
            Iconcat => {
                if t.is_vector() {
                    return Err(why("vector operands"));
                }
                let b = self.tv(args[1])?;
                let lo = self.let_(format!("zext {a} to {rty}"));
                let hi = self.let_(format!("zext {b} to {rty}"));
                let hi = self.let_(format!("shl {rty} {hi}, {}", t.bits()));
                self.emit(format!("{r} = or {rty} {lo}, {hi}"));
            }
            _ => return Err(None),
        }
        Ok(())
    }

    /// An `i1` (per lane) that holds when the float `a` (typed operand of type `t`) truncates
    /// to a value of a `bits`-bit integer (false for NaN): the bounds are exact floats.
    pub(super) fn in_int_range(&mut self, a: &str, t: Type, bits: u32, signed: bool) -> R<String> {
        let lane = t.lane_type();
        let precision = if lane == types::F64 { 53 } else { 24 };
        let lit = |v: f64| -> R<String> {
            let s = if lane == types::F64 {
                float_literal(types::F64, v.to_bits())
            } else {
                float_literal(types::F32, u64::from((v as f32).to_bits()))
            };
            splat_const(t, &s)
        };
        let two = |e: u32| 2f64.powi(e as i32);
        let (hi, lo, lo_pred) = if signed {
            if precision >= bits {
                (two(bits - 1), -two(bits - 1) - 1.0, "ogt")
            } else {
                (two(bits - 1), -two(bits - 1), "oge")
            }
        } else {
            (two(bits), -1.0, "ogt")
        };
        let (hi, lo) = (lit(hi)?, lit(lo)?);
        let i1 = Self::i1_of(t);
        let below = self.let_(format!("fcmp olt {a}, {hi}"));
        let above = self.let_(format!("fcmp {lo_pred} {a}, {lo}"));
        Ok(self.let_(format!("and {i1} {below}, {above}")))
    }
}
