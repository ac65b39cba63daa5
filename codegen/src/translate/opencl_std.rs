//! `OpExtInst` of the OpenCL.std set: integer, common and relational builtins and simple math
//! emitted inline; transcendental math called in `ferrocl-mathlib`; printf in printf.rs.
//! Debug-info and other non-semantic sets are ignored.

use cranelift_codegen::ir::condcodes::{FloatCC, IntCC};
use cranelift_codegen::ir::{
    types, InstBuilder, MemFlagsData, StackSlotData, StackSlotKind, Value,
};
use ferrocl_frontend::spirv::OpenclStd100Op as Cl;
use ferrocl_frontend::{ExtInst, Inst, Type, VectorStore};

use super::function::{err, Translator};
use super::values::Val;
use crate::checked::CheckKind;
use crate::entry_points::{precise_form, precision_of, EntryPoint};
use crate::error::BuildError;
use ferrocl_mathlib::{Binary, Precision, Shaped, Unary};

impl Translator<'_, '_, '_> {
    pub(crate) fn ext_inst(&mut self, inst: Inst<'_>) -> Result<(), BuildError> {
        let set = inst.ext_set()?;
        let set_name = self.m.ext_import(set).unwrap_or("");
        if set_name != "OpenCL.std" {
            // OpenCL.DebugInfo.100 and NonSemantic.*: no semantics for execution.
            return Ok(());
        }
        let Ok(ExtInst {
            instruction: number,
            ..
        }) = inst.ext_inst()
        else {
            return err("error: OpExtInst without an instruction number\n");
        };
        let Some(op) = Cl::from_u32(number) else {
            return err(format!(
                "error: OpenCL.std instruction {number} does not exist\n"
            ));
        };
        if op == Cl::printf {
            return self.printf(inst);
        }
        if matches!(
            op,
            Cl::vload_half
                | Cl::vload_halfn
                | Cl::vloada_halfn
                | Cl::vstore_half
                | Cl::vstore_half_r
                | Cl::vstore_halfn
                | Cl::vstore_halfn_r
                | Cl::vstorea_halfn
                | Cl::vstorea_halfn_r
        ) {
            return self.half_vector_memory(inst, op);
        }
        if matches!(
            op,
            Cl::frexp | Cl::modf | Cl::fract | Cl::sincos | Cl::lgamma_r | Cl::remquo
        ) {
            self.check_out_parameter(inst)?;
        }
        let half_result = inst.result_type().is_some_and(|t| self.is_half(t));
        // vloadn's last argument is the literal n, which rspirv reads as an id: leave it out.
        let ext_args = inst.ext_args();
        let last = if op == Cl::vloadn {
            ext_args.len().min(2)
        } else {
            ext_args.len()
        };
        let mut args: Vec<Val> = ext_args
            .ids()
            .take(last)
            .flatten()
            .map(|id| self.value(id))
            .collect::<Result<_, _>>()?;
        // Flush-to-zero applies to the floating-point operations, not to data movement.
        let arithmetic = !matches!(
            op,
            Cl::vloadn
                | Cl::vstoren
                | Cl::prefetch
                | Cl::select
                | Cl::bitselect
                | Cl::shuffle
                | Cl::shuffle2
        );
        if arithmetic && self.options.denorms_are_zero {
            args = args
                .iter()
                .map(|a| self.ftz_val(a))
                .collect::<Result<_, _>>()?;
        }
        let arg = |i: usize| -> Result<&Val, BuildError> {
            args.get(i).ok_or_else(|| {
                BuildError::new(format!("error: OpenCL.std {op:?} is missing operand {i}\n"))
            })
        };
        let v = match op {
            Cl::fabs => arg(0)?.map(&mut |x| Ok(self.b.ins().fabs(x)))?,
            Cl::floor => arg(0)?.map(&mut |x| Ok(self.b.ins().floor(x)))?,
            Cl::ceil => arg(0)?.map(&mut |x| Ok(self.b.ins().ceil(x)))?,
            Cl::trunc => arg(0)?.map(&mut |x| Ok(self.b.ins().trunc(x)))?,
            Cl::rint => arg(0)?.map(&mut |x| Ok(self.b.ins().nearest(x)))?,
            Cl::round => arg(0)?.map(&mut |x| Ok(self.round_half_away(x)))?,
            Cl::sqrt | Cl::native_sqrt | Cl::half_sqrt => {
                arg(0)?.map(&mut |x| Ok(self.b.ins().sqrt(x)))?
            }
            // rsqrt itself is mathlib's correctly rounded one; the native_/half_ forms, whose
            // bounds are loose, stay an inline 1/sqrt (≤ 1.5 ulp).
            Cl::native_rsqrt | Cl::half_rsqrt => arg(0)?.map(&mut |x| {
                let s = self.b.ins().sqrt(x);
                let one = self.float_const(x, 1.0);
                Ok(self.b.ins().fdiv(one, s))
            })?,
            Cl::native_recip | Cl::half_recip => arg(0)?.map(&mut |x| {
                let one = self.float_const(x, 1.0);
                Ok(self.b.ins().fdiv(one, x))
            })?,
            Cl::native_divide | Cl::half_divide => {
                arg(0)?.zip(arg(1)?, &mut |x, y| Ok(self.b.ins().fdiv(x, y)))?
            }
            Cl::fma if half_result => {
                let v = arg(0)?.zip3(arg(1)?, arg(2)?, &mut |a, b, c| self.half_fma(a, b, c))?;
                // Already rounded once to half: skip the generic rounding below.
                self.define(inst, v)?;
                return Ok(());
            }
            Cl::fma => arg(0)?.zip3(arg(1)?, arg(2)?, &mut |a, b, c| {
                Ok(self.b.ins().fma(a, b, c))
            })?,
            // mad may be computed with any accuracy. By default it is the unfused a*b+c the source
            // wrote (clang -O0 turns every a*b+c into mad); -cl-mad-enable and the fast-math
            // options allow the single fused instruction.
            Cl::mad => {
                let fuse = self.options.mad_enable
                    || self.options.unsafe_math_optimizations
                    || self.options.fast_relaxed_math;
                arg(0)?.zip3(arg(1)?, arg(2)?, &mut |a, b, c| {
                    if fuse && half_result {
                        // Once rounded, as fma: an f32 fma then half would round twice.
                        return self.half_fma(a, b, c);
                    }
                    if fuse {
                        return Ok(self.b.ins().fma(a, b, c));
                    }
                    let p = self.b.ins().fmul(a, b);
                    // The half product is rounded as the source's a*b would be.
                    let p = if half_result {
                        let mode = self.default_half_rounding();
                        self.round_to_half(p, mode)?
                    } else {
                        p
                    };
                    Ok(self.b.ins().fadd(p, c))
                })?
            }
            Cl::fmin | Cl::fmin_common => {
                arg(0)?.zip(arg(1)?, &mut |x, y| Ok(self.fmin_cl(x, y)))?
            }
            Cl::fmax | Cl::fmax_common => {
                arg(0)?.zip(arg(1)?, &mut |x, y| Ok(self.fmax_cl(x, y)))?
            }
            Cl::fclamp => arg(0)?.zip3(arg(1)?, arg(2)?, &mut |x, lo, hi| {
                let m = self.fmax_cl(x, lo);
                Ok(self.fmin_cl(m, hi))
            })?,
            Cl::copysign => arg(0)?.zip(arg(1)?, &mut |x, y| Ok(self.b.ins().fcopysign(x, y)))?,
            Cl::fdim => arg(0)?.zip(arg(1)?, &mut |x, y| {
                let d = self.b.ins().fsub(x, y);
                let zero = self.float_const(x, 0.0);
                let gt = self.b.ins().fcmp(FloatCC::GreaterThan, x, y);
                let unord = self.b.ins().fcmp(FloatCC::Unordered, x, y);
                let pos = self.b.ins().select(gt, d, zero);
                Ok(self.b.ins().select(unord, d, pos))
            })?,
            Cl::fmod => arg(0)?.zip(arg(1)?, &mut |x, y| self.fmod_call(x, y))?,
            Cl::degrees => arg(0)?.map(&mut |x| Ok(self.angle_scale(x, true)))?,
            Cl::radians => arg(0)?.map(&mut |x| Ok(self.angle_scale(x, false)))?,
            Cl::mix => arg(0)?.zip3(arg(1)?, arg(2)?, &mut |x, y, a| {
                let d = self.b.ins().fsub(y, x);
                let p = self.b.ins().fmul(d, a);
                Ok(self.b.ins().fadd(x, p))
            })?,
            Cl::step => arg(0)?.zip(arg(1)?, &mut |edge, x| {
                let lt = self.b.ins().fcmp(FloatCC::LessThan, x, edge);
                let zero = self.float_const(x, 0.0);
                let one = self.float_const(x, 1.0);
                Ok(self.b.ins().select(lt, zero, one))
            })?,
            Cl::sign => arg(0)?.map(&mut |x| {
                let zero = self.float_const(x, 0.0);
                let one = self.float_const(x, 1.0);
                let gt = self.b.ins().fcmp(FloatCC::GreaterThan, x, zero);
                let lt = self.b.ins().fcmp(FloatCC::LessThan, x, zero);
                let signed_one = self.b.ins().fcopysign(one, x);
                let nonzero = self.b.ins().bor(gt, lt);
                // ±0 and NaN: 0 for NaN, the zero itself for ±0.
                let is_nan = self.b.ins().fcmp(FloatCC::Unordered, x, x);
                let z = self.b.ins().select(is_nan, zero, x);
                Ok(self.b.ins().select(nonzero, signed_one, z))
            })?,
            Cl::s_abs | Cl::u_abs => arg(0)?.map(&mut |x| {
                Ok(if op == Cl::s_abs {
                    self.b.ins().iabs(x)
                } else {
                    x
                })
            })?,
            Cl::s_max => arg(0)?.zip(arg(1)?, &mut |x, y| Ok(self.b.ins().smax(x, y)))?,
            Cl::u_max => arg(0)?.zip(arg(1)?, &mut |x, y| Ok(self.b.ins().umax(x, y)))?,
            Cl::s_min => arg(0)?.zip(arg(1)?, &mut |x, y| Ok(self.b.ins().smin(x, y)))?,
            Cl::u_min => arg(0)?.zip(arg(1)?, &mut |x, y| Ok(self.b.ins().umin(x, y)))?,
            Cl::s_clamp => arg(0)?.zip3(arg(1)?, arg(2)?, &mut |x, lo, hi| {
                let m = self.b.ins().smax(x, lo);
                Ok(self.b.ins().smin(m, hi))
            })?,
            Cl::u_clamp => arg(0)?.zip3(arg(1)?, arg(2)?, &mut |x, lo, hi| {
                let m = self.b.ins().umax(x, lo);
                Ok(self.b.ins().umin(m, hi))
            })?,
            Cl::clz => arg(0)?.map(&mut |x| Ok(self.b.ins().clz(x)))?,
            Cl::ctz => arg(0)?.map(&mut |x| Ok(self.b.ins().ctz(x)))?,
            Cl::popcount => arg(0)?.map(&mut |x| Ok(self.b.ins().popcnt(x)))?,
            Cl::rotate => arg(0)?.zip(arg(1)?, &mut |x, y| Ok(self.b.ins().rotl(x, y)))?,
            Cl::s_mul_hi => arg(0)?.zip(arg(1)?, &mut |x, y| Ok(self.b.ins().smulhi(x, y)))?,
            Cl::u_mul_hi => arg(0)?.zip(arg(1)?, &mut |x, y| Ok(self.b.ins().umulhi(x, y)))?,
            Cl::s_mad_hi => arg(0)?.zip3(arg(1)?, arg(2)?, &mut |x, y, z| {
                let h = self.b.ins().smulhi(x, y);
                Ok(self.b.ins().iadd(h, z))
            })?,
            Cl::u_mad_hi => arg(0)?.zip3(arg(1)?, arg(2)?, &mut |x, y, z| {
                let h = self.b.ins().umulhi(x, y);
                Ok(self.b.ins().iadd(h, z))
            })?,
            Cl::s_mul24 | Cl::u_mul24 => {
                arg(0)?.zip(arg(1)?, &mut |x, y| Ok(self.b.ins().imul(x, y)))?
            }
            Cl::s_mad24 | Cl::u_mad24 => arg(0)?.zip3(arg(1)?, arg(2)?, &mut |x, y, z| {
                let p = self.b.ins().imul(x, y);
                Ok(self.b.ins().iadd(p, z))
            })?,
            Cl::s_add_sat
            | Cl::u_add_sat
            | Cl::s_sub_sat
            | Cl::u_sub_sat
            | Cl::s_hadd
            | Cl::u_hadd
            | Cl::s_rhadd
            | Cl::u_rhadd
            | Cl::s_abs_diff
            | Cl::u_abs_diff => arg(0)?.zip(arg(1)?, &mut |x, y| self.wide_int_op(op, x, y))?,
            // On halves the bits are the 16-bit encodings, not the f32 that holds the value.
            Cl::bitselect if half_result => arg(0)?.zip3(arg(1)?, arg(2)?, &mut |a, b, c| {
                let (ia, ib, ic) = (
                    self.half_encoding(a)?,
                    self.half_encoding(b)?,
                    self.half_encoding(c)?,
                );
                let r = self.b.ins().bitselect(ic, ib, ia);
                self.half_from_bits(r)
            })?,
            Cl::bitselect => arg(0)?.zip3(arg(1)?, arg(2)?, &mut |a, b, c| {
                let (ia, ib, ic) = (self.int_bits(a), self.int_bits(b), self.int_bits(c));
                let r = self.b.ins().bitselect(ic, ib, ia);
                Ok(self.int_as(r, self.ty_of(a)))
            })?,
            Cl::select => arg(0)?.zip3(arg(1)?, arg(2)?, &mut |a, b, c| {
                // Scalars test c != 0; vectors test the most significant bit of each c component.
                let cond = if matches!(arg(2).ok(), Some(Val::C(_))) {
                    self.b.ins().icmp_imm_s(IntCC::SignedLessThan, c, 0)
                } else {
                    self.b.ins().icmp_imm_s(IntCC::NotEqual, c, 0)
                };
                Ok(self.b.ins().select(cond, b, a))
            })?,
            Cl::vloadn => {
                let rt = self.result_type(inst)?;
                let (elem, count) = match self.m.ty(rt) {
                    Some(Type::Vector { elem, count }) => (*elem, *count),
                    _ => return err("error: vloadn result is not a vector\n"),
                };
                let esize = self.m.size_of(elem).unwrap_or(1) as i64;
                let offset = arg(0)?.scalar()?;
                let base = arg(1)?.scalar()?;
                let off = self.sext_i64(offset);
                let scaled = self.b.ins().imul_imm_s(off, esize * i64::from(count));
                let addr = self.b.ins().iadd(base, scaled);
                let ptr = ext_args.vector_load()?.pointer;
                let bytes = (esize * i64::from(count)) as u64;
                self.check_access(ptr, addr, bytes, CheckKind::Read)?;
                Val::C(
                    (0..count)
                        .map(|i| {
                            let a = self.b.ins().iadd_imm_s(addr, esize * i64::from(i));
                            self.load_val(elem, a)
                        })
                        .collect::<Result<_, _>>()?,
                )
            }
            Cl::vstoren => {
                let Ok(VectorStore { data: data_id, .. }) = ext_args.vector_store() else {
                    return err("error: vstoren without data\n");
                };
                let vt = self.m.type_of(data_id).unwrap_or(0);
                let elem = match self.m.ty(vt) {
                    Some(Type::Vector { elem, .. }) => *elem,
                    _ => return err("error: vstoren data is not a vector\n"),
                };
                let esize = self.m.size_of(elem).unwrap_or(1) as i64;
                let data = arg(0)?.clone();
                let count = data.children()?.len() as i64;
                let offset = arg(1)?.scalar()?;
                let base = arg(2)?.scalar()?;
                let off = self.sext_i64(offset);
                let scaled = self.b.ins().imul_imm_s(off, esize * count);
                let addr = self.b.ins().iadd(base, scaled);
                let ptr = ext_args.vector_store()?.pointer;
                self.check_access(ptr, addr, (esize * count) as u64, CheckKind::Write)?;
                for (i, c) in data.children()?.iter().enumerate() {
                    let a = self.b.ins().iadd_imm_s(addr, esize * i as i64);
                    self.store_val(elem, a, c)?;
                }
                return Ok(());
            }
            Cl::prefetch => return Ok(()),
            Cl::cross
            | Cl::length
            | Cl::distance
            | Cl::normalize
            | Cl::fast_length
            | Cl::fast_distance
            | Cl::fast_normalize
            | Cl::smoothstep => self.geometric(op, &args)?,
            Cl::shuffle | Cl::shuffle2 => self.dynamic_shuffle(op, &args)?,
            Cl::s_mad_sat | Cl::u_mad_sat => arg(0)?.zip3(arg(1)?, arg(2)?, &mut |a, b, c| {
                Ok(self.mad_sat(op == Cl::s_mad_sat, a, b, c))
            })?,
            Cl::s_upsample | Cl::u_upsample => arg(0)?.zip(arg(1)?, &mut |hi, lo| {
                self.upsample(op == Cl::s_upsample, hi, lo)
            })?,
            Cl::ldexp => arg(0)?.zip(arg(1)?, &mut |x, n| {
                let t = self.ty_of(x);
                let n = self.resize_int(n, types::I32, true);
                if t == types::F32 {
                    return Ok(self.ldexp_f32(x, n));
                }
                let precision = precision_of(t)
                    .ok_or_else(|| BuildError::new(format!("error: ldexp on {t}\n")))?;
                Ok(self.call_entry(EntryPoint::Ldexp(precision), &[x, n])?[0])
            })?,
            // Cheap functions inline (inline_math.rs); the double rsqrt stays CORE-MATH's.
            Cl::rsqrt if self.ty_of(arg(0)?.flat()[0]) == types::F32 => {
                arg(0)?.map(&mut |x| Ok(self.rsqrt_f32(x)))?
            }
            Cl::logb => arg(0)?.map(&mut |x| Ok(self.logb_inline(x)))?,
            Cl::maxmag => {
                arg(0)?.zip(arg(1)?, &mut |x, y| Ok(self.magnitude_select(x, y, true)))?
            }
            Cl::minmag => {
                arg(0)?.zip(arg(1)?, &mut |x, y| Ok(self.magnitude_select(x, y, false)))?
            }
            // Half nextafter steps in the half format (mathlib).
            Cl::nextafter if !half_result => {
                arg(0)?.zip(arg(1)?, &mut |x, y| Ok(self.nextafter_inline(x, y)))?
            }
            Cl::frexp | Cl::modf | Cl::fract | Cl::ilogb | Cl::nan => {
                self.shaped_inline(inst, op, &args)?
            }
            Cl::sincos | Cl::lgamma_r | Cl::remquo | Cl::pown | Cl::rootn => {
                self.shaped_math_call(inst, op, &args)?
            }
            _ => self.mathlib_call(op, &args, half_result)?,
        };
        let v = if arithmetic { self.ftz_val(&v)? } else { v };
        let v = match inst.result_type() {
            Some(t) if arithmetic => self.round_half_result(t, v)?,
            _ => v,
        };
        self.define(inst, v)?;
        Ok(())
    }

    /// Checked mode: the out-parameter of frexp & co. (the last operand) must reach its whole
    /// pointee.
    fn check_out_parameter(&mut self, inst: Inst<'_>) -> Result<(), BuildError> {
        if !self.options.checked {
            return Ok(());
        }
        let ptr = inst.ext_args().last_id()?;
        let size = match self.m.type_of(ptr).and_then(|t| self.m.ty(t)) {
            Some(Type::Pointer { pointee, .. }) => self.m.size_of(*pointee).unwrap_or(0),
            _ => return err("error: OpenCL.std out-parameter is not a pointer\n"),
        };
        let addr = self.value(ptr)?.scalar()?;
        self.check_access(ptr, addr, size, CheckKind::Write)
    }

    /// Size of the components behind the out-parameter of frexp & co. (the last argument).
    fn out_component_size(&self, inst: Inst<'_>) -> Result<i64, BuildError> {
        let Ok(ptr) = inst.ext_args().last_id() else {
            return err("error: OpenCL.std out-parameter is not an id\n");
        };
        let pointee = match self.m.type_of(ptr).and_then(|t| self.m.ty(t)) {
            Some(Type::Pointer { pointee, .. }) => *pointee,
            _ => return err("error: OpenCL.std out-parameter is not a pointer\n"),
        };
        let elem = match self.m.ty(pointee) {
            Some(Type::Vector { elem, .. }) => *elem,
            _ => pointee,
        };
        self.m
            .size_of(elem)
            .map(|s| s as i64)
            .ok_or_else(|| BuildError::new("error: out-parameter of unsized type\n"))
    }

    /// frexp, modf, fract (a second result through a pointer), ilogb and nan, inline
    /// (inline_math.rs), per component. Half out-parameters are stored as halves: modf's and
    /// fract's integral parts of a half are halves already.
    fn shaped_inline(&mut self, inst: Inst<'_>, op: Cl, args: &[Val]) -> Result<Val, BuildError> {
        let rt = self.result_type(inst)?;
        let half = self.is_half(rt);
        let arg = |i: usize| -> Result<&Val, BuildError> {
            args.get(i).ok_or_else(|| {
                BuildError::new(format!("error: OpenCL.std {op:?} is missing operand {i}\n"))
            })
        };
        if op == Cl::nan {
            let mut result_types = Vec::new();
            self.shape_of_type(rt)?.leaf_types(&mut result_types);
            let float = result_types[0];
            let code_type = if float == types::F64 {
                types::I64
            } else {
                types::I32
            };
            return arg(0)?.map(&mut |code| {
                let code = self.resize_int(code, code_type, false);
                // A half NaN's payload is the f32 payload's top 10 bits.
                let code = if half {
                    self.b.ins().ishl_imm_s(code, 13)
                } else {
                    code
                };
                Ok(self.nan_inline(code, float))
            });
        }
        if op == Cl::ilogb {
            return arg(0)?.map(&mut |x| Ok(self.ilogb_inline(x)));
        }
        let base = arg(1)?.scalar()?;
        let size = self.out_component_size(inst)?;
        let inputs = arg(0)?.flat();
        let mut results = Vec::with_capacity(inputs.len());
        for (i, x) in inputs.into_iter().enumerate() {
            let (r, second) = match op {
                Cl::frexp => self.frexp_inline(x),
                Cl::modf => self.modf_inline(x),
                _ => self.fract_inline(x),
            };
            let offset = (size * i as i64) as i32;
            let r = if half && op == Cl::fract {
                // fract < 1: the largest half below 1, not f32's (which rounds to 1).
                let mode = self.default_half_rounding();
                let r = self.round_to_half(r, mode)?;
                let below_one = self.b.ins().f32const(1.0 - 1.0 / 2048.0);
                let over = self.b.ins().fcmp(FloatCC::GreaterThan, r, below_one);
                self.b.ins().select(over, below_one, r)
            } else {
                r
            };
            if half && op != Cl::frexp {
                self.store_half(second, base, offset)?;
            } else {
                self.b
                    .ins()
                    .store(MemFlagsData::new(), second, base, offset);
            }
            results.push(Val::S(r));
        }
        Ok(if results.len() == 1 {
            results.pop().expect("one result")
        } else {
            Val::C(results)
        })
    }

    /// sincos, lgamma_r (a second result through a pointer), remquo (the quotient through a
    /// pointer), pown and rootn (an int argument): mathlib entry points (see mathlib's
    /// shapes.rs), called per component; out-parameters are written through each component's
    /// address.
    fn shaped_math_call(
        &mut self,
        inst: Inst<'_>,
        op: Cl,
        args: &[Val],
    ) -> Result<Val, BuildError> {
        let rt = self.result_type(inst)?;
        let float_ty = self.ty_of(args[0].flat()[0]);
        let precision = precision_of(float_ty).ok_or_else(|| {
            BuildError::new(format!(
                "error: OpenCL.std {op:?} on {float_ty} is not supported\n"
            ))
        })?;
        let shaped = Shaped::from_opencl_std(op).ok_or_else(|| {
            BuildError::new(format!(
                "internal: OpenCL.std {op:?} is not a mathlib call\n"
            ))
        })?;
        let entry = EntryPoint::Shaped(shaped, precision);
        // The argument index of the out-pointer for the pointer shapes.
        let out: Option<usize> = match op {
            Cl::sincos | Cl::lgamma_r => Some(1),
            Cl::remquo => Some(2),
            Cl::pown | Cl::rootn => None,
            _ => {
                return err(format!(
                    "internal: OpenCL.std {op:?} is not a mathlib call\n"
                ))
            }
        };
        // Half sincos: the f32 function writes cos to a stack slot, rounded to half afterwards.
        let half_out = self.is_half(rt) && op == Cl::sincos;
        let half_out_target = if half_out {
            Some(
                args.get(1)
                    .ok_or_else(|| BuildError::new("error: missing out-parameter\n"))?
                    .scalar()?,
            )
        } else {
            None
        };
        let out = match out {
            Some(_) if half_out => {
                let slot = self.b.create_sized_stack_slot(StackSlotData::new(
                    StackSlotKind::ExplicitSlot,
                    64,
                    2,
                ));
                Some((self.b.ins().stack_addr(types::I64, slot, 0), 4))
            }
            Some(arg) => Some((
                args.get(arg)
                    .ok_or_else(|| BuildError::new("error: missing out-parameter\n"))?
                    .scalar()?,
                self.out_component_size(inst)?,
            )),
            None => None,
        };
        let inputs: Vec<Vec<Value>> = match op {
            Cl::remquo | Cl::pown | Cl::rootn => vec![args[0].flat(), args[1].flat()],
            _ => vec![args[0].flat()],
        };
        let f = self.func_ref(entry)?;
        self.record_vector_math(f, entry)?;
        let split_sincos = if op == Cl::sincos && !half_out && self.options.vectorize {
            let vector_form = |t: &mut Self, f: Unary| -> Result<_, BuildError> {
                let entry = EntryPoint::Unary(f, precision);
                if crate::vectorize::VectorMath::of(entry, t.options).is_none() {
                    return Ok(None);
                }
                let r = t.func_ref(entry)?;
                t.record_vector_math(r, entry)?;
                Ok(Some(r))
            };
            match (
                vector_form(self, Unary::sin)?,
                vector_form(self, Unary::cos)?,
            ) {
                (Some(sin), Some(cos)) => Some((sin, cos)),
                _ => None,
            }
        } else {
            None
        };
        let n = inputs[0].len();
        let mut results = Vec::with_capacity(n);
        for i in 0..n {
            let mut call_args: Vec<Value> = Vec::with_capacity(3);
            match op {
                Cl::pown | Cl::rootn => {
                    call_args.push(inputs[0][i]);
                    let k = self.resize_int(inputs[1][i], types::I32, true);
                    call_args.push(k);
                }
                _ => call_args.extend(inputs.iter().map(|v| v[i])),
            }
            if let Some((base, size)) = out {
                let addr = self.b.ins().iadd_imm_s(base, size * i as i64);
                call_args.push(addr);
            }
            if let Some((sin, cos)) = split_sincos {
                // sin and cos as two calls the work-item vectoriser emits as vector code
                // (vectorize/math.rs); the same correctly rounded results.
                let x = call_args[0];
                let call = self.b.ins().call(sin, &[x]);
                let r = self.b.inst_results(call)[0];
                let call = self.b.ins().call(cos, &[x]);
                let c = self.b.inst_results(call)[0];
                self.b.ins().store(MemFlagsData::new(), c, call_args[1], 0);
                results.push(Val::S(r));
                continue;
            }
            let call = self.b.ins().call(f, &call_args);
            let r = self.b.inst_results(call)[0];
            if let (Some(target), Some((slot, _))) = (half_out_target, out) {
                let mode = self.default_half_rounding();
                let v = self
                    .b
                    .ins()
                    .load(types::F32, MemFlagsData::new(), slot, 4 * i as i32);
                let v = self.round_to_half(v, mode)?;
                self.store_half(v, target, 2 * i as i32)?;
            }
            results.push(Val::S(r));
        }
        Ok(if results.len() == 1 {
            results.pop().expect("one result")
        } else {
            Val::C(results)
        })
    }

    /// Notes call target `f` (of `entry`) for the work-item vectoriser if it has a vector
    /// form, with the address of the driver table that form reads.
    fn record_vector_math(
        &mut self,
        f: cranelift_codegen::ir::FuncRef,
        entry: EntryPoint,
    ) -> Result<(), BuildError> {
        let Some(function) = crate::vectorize::VectorMath::of(entry, self.options) else {
            return Ok(());
        };
        let mut tables = [None; 2];
        for (slot, &table) in tables.iter_mut().zip(function.tables()) {
            *slot = Some(self.env.table_global(self.b.func, table)?);
        }
        self.vector_math
            .insert(f, crate::vectorize::MathCall { function, tables });
        Ok(())
    }

    /// Functions implemented in ferrocl-mathlib, called per component.
    fn mathlib_call(&mut self, op: Cl, args: &[Val], half_result: bool) -> Result<Val, BuildError> {
        let precise = precise_form(op);
        let (unary, binary) = (
            Unary::from_opencl_std(precise),
            Binary::from_opencl_std(precise),
        );
        let arity = match (unary, binary) {
            (Some(_), _) => 1,
            (None, Some(_)) => 2,
            (None, None) => {
                return err(format!(
                    "error: OpenCL.std {op:?} is not supported by Ferrocl yet\n"
                ))
            }
        };
        if args.len() != arity {
            return err(format!(
                "error: OpenCL.std {op:?} expects {arity} operands, found {}\n",
                args.len()
            ));
        }
        if binary == Some(Binary::nextafter) && half_result {
            // Steps in the half format, not through f32.
            return args[0].zip(&args[1], &mut |x, y| {
                Ok(self.call_entry(EntryPoint::NextafterHalf, &[x, y])?[0])
            });
        }
        let call = |t: &mut Self, xs: &[Value]| -> Result<Value, BuildError> {
            let ty = t.ty_of(xs[0]);
            let precision = precision_of(ty).ok_or_else(|| {
                BuildError::new(format!(
                    "error: OpenCL.std {op:?} on {ty} is not supported\n"
                ))
            })?;
            // native_*, half_* and -cl-fast-relaxed-math allow the relaxed accuracy (OpenCL C
            // 3.0 §7.4): where the vectoriser has a cheaper form, the call says so. A half
            // result is rounded from the float one, so it keeps the correctly rounded call.
            let relaxed = precision == Precision::F32
                && !half_result
                && (op != precise || t.options.fast_relaxed_math)
                && unary
                    .and_then(crate::vectorize::VectorMath::relaxed)
                    .is_some();
            let entry = match (unary, binary) {
                (Some(f), _) if relaxed => EntryPoint::Relaxed(f),
                (Some(f), _) => EntryPoint::Unary(f, precision),
                (None, Some(f)) => EntryPoint::Binary(f, precision),
                (None, None) => unreachable!("checked above"),
            };
            let f = t.func_ref(entry)?;
            t.record_vector_math(f, entry)?;
            let call = t.b.ins().call(f, xs);
            Ok(t.b.inst_results(call)[0])
        };
        if arity == 1 {
            args[0].map(&mut |x| call(self, &[x]))
        } else {
            args[0].zip(&args[1], &mut |x, y| call(self, &[x, y]))
        }
    }

    pub(crate) fn float_const(&mut self, like: Value, v: f64) -> Value {
        if self.ty_of(like) == types::F32 {
            self.b.ins().f32const(v as f32)
        } else {
            self.b.ins().f64const(v)
        }
    }

    /// OpenCL fmin: if one operand is NaN, the other is returned.
    pub(crate) fn fmin_cl(&mut self, x: Value, y: Value) -> Value {
        let m = self.b.ins().fmin(x, y);
        let x_nan = self.b.ins().fcmp(FloatCC::Unordered, x, x);
        let y_nan = self.b.ins().fcmp(FloatCC::Unordered, y, y);
        let r = self.b.ins().select(y_nan, x, m);
        self.b.ins().select(x_nan, y, r)
    }

    pub(crate) fn fmax_cl(&mut self, x: Value, y: Value) -> Value {
        let m = self.b.ins().fmax(x, y);
        let x_nan = self.b.ins().fcmp(FloatCC::Unordered, x, x);
        let y_nan = self.b.ins().fcmp(FloatCC::Unordered, y, y);
        let r = self.b.ins().select(y_nan, x, m);
        self.b.ins().select(x_nan, y, r)
    }

    /// round(): halfway cases away from zero (x - trunc(x) is exact).
    fn round_half_away(&mut self, x: Value) -> Value {
        let t = self.b.ins().trunc(x);
        let frac = self.b.ins().fsub(x, t);
        let afrac = self.b.ins().fabs(frac);
        let half = self.float_const(x, 0.5);
        let ge = self.b.ins().fcmp(FloatCC::GreaterThanOrEqual, afrac, half);
        let one = self.float_const(x, 1.0);
        let step = self.b.ins().fcopysign(one, x);
        let up = self.b.ins().fadd(t, step);
        self.b.ins().select(ge, up, t)
    }

    fn int_bits(&mut self, v: Value) -> Value {
        let t = self.ty_of(v);
        if t == types::F32 {
            self.b
                .ins()
                .bitcast(types::I32, cranelift_codegen::ir::MemFlagsData::new(), v)
        } else if t == types::F64 {
            self.b
                .ins()
                .bitcast(types::I64, cranelift_codegen::ir::MemFlagsData::new(), v)
        } else {
            v
        }
    }

    fn int_as(&mut self, v: Value, t: types::Type) -> Value {
        if t.is_float() {
            self.b
                .ins()
                .bitcast(t, cranelift_codegen::ir::MemFlagsData::new(), v)
        } else {
            v
        }
    }

    /// Integer builtins computed in a type twice as wide (64-bit operands use i128).
    fn wide_int_op(&mut self, op: Cl, x: Value, y: Value) -> Result<Value, BuildError> {
        let t = self.ty_of(x);
        let signed = matches!(
            op,
            Cl::s_add_sat | Cl::s_sub_sat | Cl::s_hadd | Cl::s_rhadd | Cl::s_abs_diff
        );
        let wide = match t.bits() {
            8 => types::I16,
            16 => types::I32,
            32 => types::I64,
            _ => types::I128,
        };
        let wx = self.resize_int(x, wide, signed);
        let wy = self.resize_int(y, wide, signed);
        let r = match op {
            Cl::s_add_sat | Cl::u_add_sat => self.b.ins().iadd(wx, wy),
            Cl::s_sub_sat | Cl::u_sub_sat => self.b.ins().isub(wx, wy),
            Cl::s_hadd | Cl::u_hadd => {
                let s = self.b.ins().iadd(wx, wy);
                if signed {
                    self.b.ins().sshr_imm_s(s, 1)
                } else {
                    self.b.ins().ushr_imm_s(s, 1)
                }
            }
            Cl::s_rhadd | Cl::u_rhadd => {
                let s = self.b.ins().iadd(wx, wy);
                let s = self.b.ins().iadd_imm_s(s, 1);
                if signed {
                    self.b.ins().sshr_imm_s(s, 1)
                } else {
                    self.b.ins().ushr_imm_s(s, 1)
                }
            }
            _ => {
                // abs_diff: |x - y| as unsigned.
                let d = self.b.ins().isub(wx, wy);
                let n = self.b.ins().ineg(d);
                let neg = self.b.ins().icmp_imm_s(IntCC::SignedLessThan, d, 0);
                let a = self.b.ins().select(neg, n, d);
                return Ok(self.resize_int(a, t, false));
            }
        };
        if matches!(
            op,
            Cl::s_add_sat | Cl::u_add_sat | Cl::s_sub_sat | Cl::u_sub_sat
        ) {
            // Unsigned sums and differences are in [-(2^n - 1), 2^(n+1) - 2]: compare signed.
            let r = self.saturate(r, t.bits(), signed, true);
            return Ok(self.resize_int(r, t, signed));
        }
        Ok(self.resize_int(r, t, signed))
    }

    /// Clamps the wide integer `r` to the range of an n-bit integer of the given signedness;
    /// `signed_compare` says whether `r` is to be compared as signed. i128 values are selected
    /// half by half: Cranelift's optimiser turns a compare-and-select of the compared values into
    /// smin/smax, which it cannot lower for i128.
    pub(crate) fn saturate(
        &mut self,
        r: Value,
        bits: u32,
        signed: bool,
        signed_compare: bool,
    ) -> Value {
        let wide = self.ty_of(r);
        let (lo, hi): (i128, i128) = if signed {
            (-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1)
        } else {
            (0, (1i128 << bits) - 1)
        };
        let (gt, lt) = if signed_compare {
            (IntCC::SignedGreaterThan, IntCC::SignedLessThan)
        } else {
            (IntCC::UnsignedGreaterThan, IntCC::UnsignedLessThan)
        };
        let hi_v = self.wide_const(wide, hi);
        let over = self.b.ins().icmp(gt, r, hi_v);
        let r = self.select_wide(over, hi_v, r);
        if lo == 0 && !signed_compare {
            return r;
        }
        let lo_v = self.wide_const(wide, lo);
        let under = self.b.ins().icmp(lt, r, lo_v);
        self.select_wide(under, lo_v, r)
    }

    fn select_wide(&mut self, cond: Value, a: Value, b: Value) -> Value {
        if self.ty_of(a) != types::I128 {
            return self.b.ins().select(cond, a, b);
        }
        let (alo, ahi) = self.b.ins().isplit(a);
        let (blo, bhi) = self.b.ins().isplit(b);
        let lo = self.b.ins().select(cond, alo, blo);
        let hi = self.b.ins().select(cond, ahi, bhi);
        self.b.ins().iconcat(lo, hi)
    }

    pub(crate) fn wide_const(&mut self, t: types::Type, v: i128) -> Value {
        if t == types::I128 {
            let lo = self.b.ins().iconst(types::I64, v as i64);
            let hi = self.b.ins().iconst(types::I64, (v >> 64) as i64);
            self.b.ins().iconcat(lo, hi)
        } else {
            self.b.ins().iconst(t, v as i64)
        }
    }
}
