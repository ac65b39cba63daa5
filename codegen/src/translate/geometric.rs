//! OpenCL.std geometric functions (`cross`, `distance`, `length`, `normalize` and their `fast_`
//! forms), `smoothstep`, the dynamic `shuffle`/`shuffle2`, `mad_sat` and `upsample`, emitted
//! inline. length, distance and normalize must not overflow or lose precision to underflow
//! (numerical compliance, OpExtInst length/distance/normalize): single precision is computed in
//! double, where squares of any float neither overflow nor underflow; double precision is
//! rescaled by a power of two chosen from the largest component.

use cranelift_codegen::ir::condcodes::{FloatCC, IntCC};
use cranelift_codegen::ir::{types, InstBuilder, Value};
use ferrocl_frontend::spirv::OpenclStd100Op as Cl;

use super::function::{err, Translator};
use super::values::Val;
use crate::error::BuildError;

/// Components of a geometric operand (a scalar is a one-component vector).
fn components(v: &Val) -> Vec<Value> {
    v.flat()
}

fn pack(mut xs: Vec<Value>, like: &Val) -> Val {
    match like {
        Val::S(_) if xs.len() == 1 => Val::S(xs.pop().expect("one component")),
        _ => Val::C(xs.into_iter().map(Val::S).collect()),
    }
}

impl Translator<'_, '_, '_> {
    pub(crate) fn geometric(&mut self, op: Cl, args: &[Val]) -> Result<Val, BuildError> {
        let arg = |i: usize| -> Result<&Val, BuildError> {
            args.get(i).ok_or_else(|| {
                BuildError::new(format!("error: OpenCL.std {op:?} is missing operand {i}\n"))
            })
        };
        let first = components(arg(0)?);
        let Some(&x0) = first.first() else {
            return err(format!("error: OpenCL.std {op:?} on an empty vector\n"));
        };
        let ty = self.ty_of(x0);
        if ty != types::F32 && ty != types::F64 {
            return err(format!(
                "error: OpenCL.std {op:?} on {ty} is not supported\n"
            ));
        }
        Ok(match op {
            Cl::cross => {
                let b = components(arg(1)?);
                if !(first.len() == 3 || first.len() == 4) || b.len() != first.len() {
                    return err("error: OpenCL.std cross needs two 3- or 4-component vectors\n");
                }
                let (a, n) = (&first, first.len());
                let mut r = Vec::with_capacity(n);
                for (i, j) in [(1, 2), (2, 0), (0, 1)] {
                    let p = self.b.ins().fmul(a[i], b[j]);
                    let q = self.b.ins().fmul(a[j], b[i]);
                    r.push(self.b.ins().fsub(p, q));
                }
                if n == 4 {
                    r.push(self.float_const(x0, 0.0));
                }
                pack(r, arg(0)?)
            }
            Cl::length => Val::S(self.precise_length(&first)),
            Cl::distance => {
                let b = components(arg(1)?);
                if b.len() != first.len() {
                    return err("error: OpenCL.std distance on vectors of different sizes\n");
                }
                // The difference is taken in double for single precision: exact or within
                // half an ulp of double, well under the length's own rounding.
                let diff: Vec<Value> = first
                    .iter()
                    .zip(&b)
                    .map(|(&p, &q)| {
                        let (p, q) = (self.widen(p), self.widen(q));
                        self.b.ins().fsub(p, q)
                    })
                    .collect();
                let l = self.wide_length(&diff);
                Val::S(self.narrow(l, ty))
            }
            Cl::normalize => pack(self.precise_normalize(&first), arg(0)?),
            Cl::fast_length => {
                let s = self.sum_of_squares(&first);
                Val::S(self.b.ins().sqrt(s))
            }
            Cl::fast_distance => {
                let b = components(arg(1)?);
                if b.len() != first.len() {
                    return err("error: OpenCL.std fast_distance on vectors of different sizes\n");
                }
                let diff: Vec<Value> = first
                    .iter()
                    .zip(&b)
                    .map(|(&p, &q)| self.b.ins().fsub(p, q))
                    .collect();
                let s = self.sum_of_squares(&diff);
                Val::S(self.b.ins().sqrt(s))
            }
            Cl::fast_normalize => {
                // p * rsqrt(dot(p, p)); a zero vector is returned as it is instead of 0 * inf.
                let s = self.sum_of_squares(&first);
                let root = self.b.ins().sqrt(s);
                let one = self.float_const(x0, 1.0);
                let inv = self.b.ins().fdiv(one, root);
                let zero = self.float_const(x0, 0.0);
                let is_zero = self.b.ins().fcmp(FloatCC::Equal, s, zero);
                let r = first
                    .iter()
                    .map(|&x| {
                        let scaled = self.b.ins().fmul(x, inv);
                        self.b.ins().select(is_zero, x, scaled)
                    })
                    .collect();
                pack(r, arg(0)?)
            }
            Cl::smoothstep => {
                // t = clamp((x - edge0) / (edge1 - edge0), 0, 1); t * t * (3 - 2 * t).
                arg(0)?.zip3(arg(1)?, arg(2)?, &mut |e0, e1, x| {
                    let num = self.b.ins().fsub(x, e0);
                    let den = self.b.ins().fsub(e1, e0);
                    let q = self.b.ins().fdiv(num, den);
                    let zero = self.float_const(q, 0.0);
                    let one = self.float_const(q, 1.0);
                    let lo = self.b.ins().fcmp(FloatCC::LessThan, q, zero);
                    let t = self.b.ins().select(lo, zero, q);
                    let hi = self.b.ins().fcmp(FloatCC::GreaterThan, t, one);
                    let t = self.b.ins().select(hi, one, t);
                    let two = self.float_const(q, 2.0);
                    let three = self.float_const(q, 3.0);
                    let two_t = self.b.ins().fmul(two, t);
                    let poly = self.b.ins().fsub(three, two_t);
                    let tt = self.b.ins().fmul(t, t);
                    Ok(self.b.ins().fmul(tt, poly))
                })?
            }
            _ => return err(format!("internal: {op:?} is not a geometric function\n")),
        })
    }

    fn widen(&mut self, x: Value) -> Value {
        if self.ty_of(x) == types::F32 {
            self.b.ins().fpromote(types::F64, x)
        } else {
            x
        }
    }

    fn narrow(&mut self, x: Value, to: types::Type) -> Value {
        if to == types::F32 {
            self.b.ins().fdemote(types::F32, x)
        } else {
            x
        }
    }

    fn sum_of_squares(&mut self, xs: &[Value]) -> Value {
        let mut acc = self.b.ins().fmul(xs[0], xs[0]);
        for &x in &xs[1..] {
            let sq = self.b.ins().fmul(x, x);
            acc = self.b.ins().fadd(acc, sq);
        }
        acc
    }

    /// Largest magnitude of the components; NaN if any component is NaN.
    fn max_magnitude(&mut self, xs: &[Value]) -> Value {
        let mut m = self.b.ins().fabs(xs[0]);
        for &x in &xs[1..] {
            let a = self.b.ins().fabs(x);
            m = self.b.ins().fmax(m, a);
        }
        m
    }

    /// Power-of-two scale (and its inverse) that brings the largest magnitude `m` of a double
    /// vector into [2^-500, 2^500], where its square neither overflows nor becomes denormal.
    /// Components much smaller than `m` may still underflow when squared, but their squares are
    /// below half an ulp of m².
    fn double_scale(&mut self, m: Value) -> (Value, Value) {
        let big = self.b.ins().f64const(2f64.powi(500));
        let small = self.b.ins().f64const(2f64.powi(-500));
        let down = self.b.ins().f64const(2f64.powi(-600));
        let up = self.b.ins().f64const(2f64.powi(600));
        let one = self.b.ins().f64const(1.0);
        let is_big = self.b.ins().fcmp(FloatCC::GreaterThan, m, big);
        let is_small = self.b.ins().fcmp(FloatCC::LessThan, m, small);
        let s = self.b.ins().select(is_small, up, one);
        let scale = self.b.ins().select(is_big, down, s);
        let s = self.b.ins().select(is_small, down, one);
        let inverse = self.b.ins().select(is_big, up, s);
        (scale, inverse)
    }

    /// sqrt(Σ x²) of doubles with the squares and their sum kept as double-double (exact
    /// products by fma, two-sum) and one Newton correction of the root: within about half an
    /// ulp, where a plain sum of n squares would lose up to n/2 ulps. The inputs are already
    /// scaled so that no square overflows or is denormal.
    fn compensated_root(&mut self, xs: &[Value]) -> Value {
        let square = |t: &mut Self, x: Value| {
            let p = t.b.ins().fmul(x, x);
            let neg = t.b.ins().fneg(p);
            let e = t.b.ins().fma(x, x, neg);
            (p, e)
        };
        let (mut hi, mut lo) = square(self, xs[0]);
        for &x in &xs[1..] {
            let (p, e) = square(self, x);
            let sum = self.b.ins().fadd(hi, p);
            let bb = self.b.ins().fsub(sum, hi);
            let ab = self.b.ins().fsub(sum, bb);
            let da = self.b.ins().fsub(hi, ab);
            let db = self.b.ins().fsub(p, bb);
            let err = self.b.ins().fadd(da, db);
            let err = self.b.ins().fadd(err, e);
            lo = self.b.ins().fadd(lo, err);
            hi = sum;
        }
        let r = self.b.ins().sqrt(hi);
        // r + (hi + lo - r²) / 2r, with hi - r² exact by fma.
        let neg_r = self.b.ins().fneg(r);
        let d = self.b.ins().fma(neg_r, r, hi);
        let d = self.b.ins().fadd(d, lo);
        let two_r = self.b.ins().fadd(r, r);
        let corr = self.b.ins().fdiv(d, two_r);
        let corrected = self.b.ins().fadd(r, corr);
        // Zero, infinite and NaN roots keep the plain result.
        let zero = self.b.ins().f64const(0.0);
        let inf = self.b.ins().f64const(f64::INFINITY);
        let positive = self.b.ins().fcmp(FloatCC::GreaterThan, r, zero);
        let finite = self.b.ins().fcmp(FloatCC::LessThan, r, inf);
        let usable = self.b.ins().band(positive, finite);
        self.b.ins().select(usable, corrected, r)
    }

    /// sqrt(Σ x²) of doubles (single-precision inputs already widened) without spurious
    /// overflow or underflow.
    fn wide_length(&mut self, xs: &[Value]) -> Value {
        let m = self.max_magnitude(xs);
        let (scale, inverse) = self.double_scale(m);
        let scaled: Vec<Value> = xs.iter().map(|&x| self.b.ins().fmul(x, scale)).collect();
        let r = self.compensated_root(&scaled);
        let r = self.b.ins().fmul(r, inverse);
        // An infinite component makes the length infinite even beside a NaN (as hypot does).
        let inf = self.b.ins().f64const(f64::INFINITY);
        let mut has_inf = self.b.ins().iconst(types::I8, 0);
        for &x in xs {
            let a = self.b.ins().fabs(x);
            let is_inf = self.b.ins().fcmp(FloatCC::Equal, a, inf);
            has_inf = self.b.ins().bor(has_inf, is_inf);
        }
        self.b.ins().select(has_inf, inf, r)
    }

    fn precise_length(&mut self, xs: &[Value]) -> Value {
        let ty = self.ty_of(xs[0]);
        let wide: Vec<Value> = xs.iter().map(|&x| self.widen(x)).collect();
        let l = self.wide_length(&wide);
        self.narrow(l, ty)
    }

    /// normalize with the numerical-compliance edge cases: a zero vector is returned as it is,
    /// a NaN component makes every component NaN, and infinities count as ±1 with every finite
    /// component replaced by a zero of its sign.
    fn precise_normalize(&mut self, xs: &[Value]) -> Vec<Value> {
        let ty = self.ty_of(xs[0]);
        let zero = self.float_const(xs[0], 0.0);
        let one = self.float_const(xs[0], 1.0);
        let inf = self.float_const(xs[0], f64::INFINITY);
        // any_inf: some |x| == inf.
        let mut any_inf = None;
        let mut any_nan = None;
        for &x in xs {
            let a = self.b.ins().fabs(x);
            let i = self.b.ins().fcmp(FloatCC::Equal, a, inf);
            let n = self.b.ins().fcmp(FloatCC::Unordered, x, x);
            any_inf = Some(match any_inf {
                None => i,
                Some(p) => self.b.ins().bor(p, i),
            });
            any_nan = Some(match any_nan {
                None => n,
                Some(p) => self.b.ins().bor(p, n),
            });
        }
        let (any_inf, any_nan) = (any_inf.expect("a component"), any_nan.expect("a component"));
        let replaced: Vec<Value> = xs
            .iter()
            .map(|&x| {
                let a = self.b.ins().fabs(x);
                let is_inf = self.b.ins().fcmp(FloatCC::Equal, a, inf);
                let unit = self.b.ins().fcopysign(one, x);
                let signed_zero = self.b.ins().fcopysign(zero, x);
                let r = self.b.ins().select(is_inf, unit, signed_zero);
                self.b.ins().select(any_inf, r, x)
            })
            .collect();
        let wide: Vec<Value> = replaced.iter().map(|&x| self.widen(x)).collect();
        let m = self.max_magnitude(&wide);
        let (scale, _) = self.double_scale(m);
        let scaled: Vec<Value> = wide.iter().map(|&x| self.b.ins().fmul(x, scale)).collect();
        let len = self.compensated_root(&scaled);
        let wzero = self.b.ins().f64const(0.0);
        let all_zero = self.b.ins().fcmp(FloatCC::Equal, m, wzero);
        let nan = self.float_const(xs[0], f64::NAN);
        // The quotients are x·scale / len: a scale up is applied to x before dividing, a scale
        // down to the quotient after, so that no component is rounded to a denormal on the way
        // (a component far below the largest one would lose bits, or vanish, if scaled down
        // before the division; the quotient is at most 1 and is only scaled down as far as the
        // result itself lies).
        let wone = self.b.ins().f64const(1.0);
        let scale_before = self.b.ins().fmax(scale, wone);
        let scale_after = self.b.ins().fmin(scale, wone);
        wide.iter()
            .zip(xs)
            .map(|(&x, &orig)| {
                let x = self.b.ins().fmul(x, scale_before);
                let q = self.b.ins().fdiv(x, len);
                let q = self.b.ins().fmul(q, scale_after);
                let q = self.narrow(q, ty);
                let q = self.b.ins().select(all_zero, orig, q);
                self.b.ins().select(any_nan, nan, q)
            })
            .collect()
    }

    /// shuffle(x, mask) and shuffle2(x, y, mask): each result component is the component of x
    /// (or of x and y concatenated) that the mask component selects, taken modulo the number of
    /// candidates — only the low bits the spec says are significant.
    pub(crate) fn dynamic_shuffle(&mut self, op: Cl, args: &[Val]) -> Result<Val, BuildError> {
        let (sources, mask) = match (op, args) {
            (Cl::shuffle, [x, mask]) => (x.flat(), mask),
            (Cl::shuffle2, [x, y, mask]) => {
                let mut s = x.flat();
                s.extend(y.flat());
                (s, mask)
            }
            _ => return err(format!("error: OpenCL.std {op:?} has the wrong operands\n")),
        };
        let count = sources.len() as i64;
        let mut out = Vec::new();
        for m in mask.flat() {
            let idx = if count.count_ones() == 1 {
                self.b.ins().band_imm_s(m, count - 1)
            } else {
                let t = self.ty_of(m);
                let c = self.b.ins().iconst(t, count);
                self.b.ins().urem(m, c)
            };
            let mut r = sources[0];
            for (i, &s) in sources.iter().enumerate().skip(1) {
                let is = self.b.ins().icmp_imm_s(IntCC::Equal, idx, i as i64);
                r = self.b.ins().select(is, s, r);
            }
            out.push(Val::S(r));
        }
        Ok(if out.len() == 1 {
            out.pop().expect("one component")
        } else {
            Val::C(out)
        })
    }

    /// mad_sat(a, b, c): a * b + c saturated, computed exactly in twice the width
    /// ((2^n - 1)² + 2^n - 1 < 2^2n unsigned; |products| + |c| < 2^(2n-1) signed).
    pub(crate) fn mad_sat(&mut self, signed: bool, a: Value, b: Value, c: Value) -> Value {
        let t = self.ty_of(a);
        let bits = t.bits();
        let wide = match bits {
            8 => types::I16,
            16 => types::I32,
            32 => types::I64,
            _ => types::I128,
        };
        let (wa, wb, wc) = (
            self.resize_int(a, wide, signed),
            self.resize_int(b, wide, signed),
            self.resize_int(c, wide, signed),
        );
        let p = self.b.ins().imul(wa, wb);
        let r = self.b.ins().iadd(p, wc);
        let r = self.saturate(r, bits, signed, signed);
        self.resize_int(r, t, signed)
    }

    /// upsample(hi, lo) = hi << n | lo in the type twice as wide (hi's signedness decides the
    /// extension).
    pub(crate) fn upsample(
        &mut self,
        signed: bool,
        hi: Value,
        lo: Value,
    ) -> Result<Value, BuildError> {
        let t = self.ty_of(hi);
        let wide = match t.bits() {
            8 => types::I16,
            16 => types::I32,
            32 => types::I64,
            _ => {
                return err(format!(
                    "error: OpenCL.std upsample on {t} is not defined\n"
                ))
            }
        };
        let h = self.resize_int(hi, wide, signed);
        let l = self.resize_int(lo, wide, false);
        let shifted = self.b.ins().ishl_imm_s(h, i64::from(t.bits()));
        Ok(self.b.ins().bor(shifted, l))
    }
}
