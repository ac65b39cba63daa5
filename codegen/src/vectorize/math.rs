//! Correctly rounded float math at vector speed: the vector loop's calls of `exp`, `exp2`,
//! `exp10`, `log`, `log2`, `log10`, `sin` and `cos` on float become vector code instead of one
//! call of mathlib (CORE-MATH) per lane.
//!
//! Each function is evaluated in double, on the `Pair` halves the vectoriser keeps doubles in:
//! a range reduction with exact or once-rounded steps and a polynomial, within 2^-45 of the
//! exact value or closer (the bounds are in each function's comment: the polynomials are no
//! more accurate than the test below needs, each instruction counting at 16 lanes). Ziv's rounding test then
//! decides each lane: the result times 1 − 2^-42 and times 1 + 2^-42, each rounded to float —
//! if the two floats agree, every value between them, the exact result included, rounds to that
//! float (rounding is monotone), which is therefore the correctly rounded result, CORE-MATH's
//! bit for bit. The test needs no knowledge of where the rounding boundary lies, so it holds
//! for results that overflow or fall among the subnormals too. Lanes that fail it (about one in
//! 2^17 for an error bound of 2^-42 against the 2^-24 of a float), and lanes outside the
//! function's fast domain (NaNs, infinities, arguments whose reduction is not exact), take the
//! scalar call; a vector with no such lane skips the calls with one branch. `codegen/tests/
//! vector_math.rs` compares every function with the scalar call, bit for bit, and the checker in
//! `cts/` runs each on all 2^32 floats.
//!
//! The double functions (double-double evaluation with tables) are in math_f64.rs.
//!
//! Not under `FERROCL_ROUNDING=rtz` (the shifter constants below round to nearest), where the
//! calls stay.

use std::collections::HashMap;

use cranelift_codegen::cursor::FuncCursor;
use cranelift_codegen::ir::condcodes::{FloatCC, IntCC};
use cranelift_codegen::ir::{self, types, Endianness, InstBuilder, MemFlagsData, Type, Value};
use ferrocl_mathlib::{Binary, Precision, Shaped, Unary};

use super::analysis::Form;
use super::rewrite::Vectoriser;
use crate::entry_points::EntryPoint;

/// A float function with a vector form.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum VectorMath {
    Exp,
    Exp2,
    Exp10,
    Log,
    Log2,
    Log10,
    Sin,
    Cos,
    Tan,
    Expm1,
    Log1p,
    Tanh,
    Atan,
    Atan2,
    Pown,
    /// `pow` and `powr` (which agree where the vector form applies: x > 0).
    Pow,
    /// Double `exp`.
    ExpF64,
    /// Double `log`.
    LogF64,
    /// Double `exp2`.
    Exp2F64,
    /// Double `log2`.
    Log2F64,
    /// Double `sin`.
    SinF64,
    /// Double `cos`.
    CosF64,
    /// Double `pow` and `powr`.
    PowF64,
    /// The reduced-accuracy forms of `native_*`, `half_*` and `-cl-fast-relaxed-math`
    /// (math_relaxed.rs).
    RelaxedExp,
    RelaxedExp2,
    RelaxedExp10,
    RelaxedLog,
    RelaxedLog2,
    RelaxedLog10,
    RelaxedSin,
    RelaxedCos,
}

/// A call the vectoriser may emit as vector code: the function, and the driver table its
/// vector form reads (double `exp` and `log`), as a global value of the kernel.
#[derive(Clone, Copy, Debug)]
pub(crate) struct MathCall {
    pub(crate) function: VectorMath,
    /// The tables of [`VectorMath::tables`], in that order.
    pub(crate) tables: [Option<ir::GlobalValue>; 2],
}

/// The calls of a kernel body the vectoriser may emit as vector code, by function reference.
pub(crate) type MathCalls = HashMap<ir::FuncRef, MathCall>;

impl VectorMath {
    /// The vector form of a call of `entry` in a build with `options`, if there is one.
    pub(crate) fn of(entry: EntryPoint, options: &crate::BuildOptions) -> Option<Self> {
        if options.round_to_zero {
            return None;
        }
        let f = match entry {
            EntryPoint::Relaxed(f) => return VectorMath::relaxed(f),
            EntryPoint::Unary(Unary::exp, Precision::F64) => return Some(VectorMath::ExpF64),
            EntryPoint::Unary(Unary::log, Precision::F64) => return Some(VectorMath::LogF64),
            EntryPoint::Unary(Unary::exp2, Precision::F64) => return Some(VectorMath::Exp2F64),
            EntryPoint::Unary(Unary::log2, Precision::F64) => return Some(VectorMath::Log2F64),
            EntryPoint::Unary(Unary::sin, Precision::F64) => return Some(VectorMath::SinF64),
            EntryPoint::Unary(Unary::cos, Precision::F64) => return Some(VectorMath::CosF64),
            EntryPoint::Unary(f, Precision::F32) => f,
            EntryPoint::Binary(Binary::pow | Binary::powr, Precision::F32) => {
                return Some(VectorMath::Pow)
            }
            EntryPoint::Binary(Binary::atan2, Precision::F32) => return Some(VectorMath::Atan2),
            EntryPoint::Binary(Binary::pow | Binary::powr, Precision::F64) => {
                return Some(VectorMath::PowF64)
            }
            EntryPoint::Shaped(Shaped::pown, Precision::F32) => return Some(VectorMath::Pown),
            _ => return None,
        };
        Some(match f {
            Unary::exp => VectorMath::Exp,
            Unary::exp2 => VectorMath::Exp2,
            Unary::exp10 => VectorMath::Exp10,
            Unary::log => VectorMath::Log,
            Unary::log2 => VectorMath::Log2,
            Unary::log10 => VectorMath::Log10,
            Unary::sin => VectorMath::Sin,
            Unary::cos => VectorMath::Cos,
            Unary::tan => VectorMath::Tan,
            Unary::expm1 => VectorMath::Expm1,
            Unary::log1p => VectorMath::Log1p,
            Unary::tanh => VectorMath::Tanh,
            Unary::atan => VectorMath::Atan,
            _ => return None,
        })
    }
}

impl VectorMath {
    /// The reduced-accuracy form of float function `f`, if it has one.
    pub(crate) fn relaxed(f: Unary) -> Option<Self> {
        Some(match f {
            Unary::exp => VectorMath::RelaxedExp,
            Unary::exp2 => VectorMath::RelaxedExp2,
            Unary::exp10 => VectorMath::RelaxedExp10,
            Unary::log => VectorMath::RelaxedLog,
            Unary::log2 => VectorMath::RelaxedLog2,
            Unary::log10 => VectorMath::RelaxedLog10,
            Unary::sin => VectorMath::RelaxedSin,
            Unary::cos => VectorMath::RelaxedCos,
            _ => return None,
        })
    }

    fn is_relaxed(self) -> bool {
        matches!(
            self,
            VectorMath::RelaxedExp
                | VectorMath::RelaxedExp2
                | VectorMath::RelaxedExp10
                | VectorMath::RelaxedLog
                | VectorMath::RelaxedLog2
                | VectorMath::RelaxedLog10
                | VectorMath::RelaxedSin
                | VectorMath::RelaxedCos
        )
    }

    /// The driver tables the vector form reads (none for the float functions).
    pub(crate) fn tables(self) -> &'static [crate::environment::Table] {
        use crate::environment::Table;
        match self {
            VectorMath::ExpF64 | VectorMath::Exp2F64 => &[Table::Exp2],
            VectorMath::LogF64 | VectorMath::Log2F64 => &[Table::Log],
            VectorMath::SinF64 | VectorMath::CosF64 => &[Table::SinCos],
            VectorMath::PowF64 => &[Table::Log, Table::Exp2],
            _ => &[],
        }
    }
}

/// Relative error bound of the double results, as the rounding test assumes it.
const TEST_EPSILON: f64 = 1.0 / (1u64 << 42) as f64;
/// The low part of log2(e) (the high part is `LOG2_E`).
pub(super) const LOG2_E_LO: f64 = 2.035_527_374_093_103_3e-17;
/// √3 as a sum of two doubles.
const SQRT3_HI: f64 = 1.732_050_807_568_877_2;
const SQRT3_LO: f64 = 1.0035084221806903e-16;
/// tan(π/12) = 2 − √3.
const TAN_PI_12: f64 = 0.267_949_192_431_122_7;
/// (2^r − 1)/r on [-0.5, 0.5]: Chebyshev fit of degree 9 (mpmath `chebyfit`), relative error
/// 2^-49.3 with these double coefficients (sampled at 3001 points); lowest degree first.
#[allow(clippy::approx_constant)]
const EXPM1_POLY: [f64; 10] = [
    0.6931471805599462,
    0.24022650695910075,
    0.05550410866465167,
    0.009618129107618665,
    0.0013333558200794592,
    0.00015403530424776529,
    1.5252672924850737e-05,
    1.3215451633221434e-06,
    1.0205905413765595e-07,
    7.070977866508138e-09,
];
/// atan(√z)/√z on [0, tan²(π/12)]: Chebyshev fit of degree 7 (mpmath `chebyfit`), relative
/// error 2^-49.8 with these double coefficients (sampled at 3001 points); lowest degree first.
const ATAN_POLY: [f64; 8] = [
    0.999999999999999,
    -0.3333333333315736,
    0.19999999948398653,
    -0.1428570850745474,
    0.1111079229996746,
    -0.09081304793340507,
    0.0753032609290116,
    -0.05207148189023696,
];
/// π/2 and π as sums of three doubles (the first a multiple of 2^-52 and 2^-51).
const PI_OVER_2_PARTS: [f64; 3] = [
    std::f64::consts::FRAC_PI_2,
    6.123_233_995_736_766e-17,
    -1.497_384_904_859_169_8e-33,
];
const PI_PARTS: [f64; 3] = [
    std::f64::consts::PI,
    1.224_646_799_147_353_2e-16,
    -2.994_769_809_718_339_7e-33,
];
/// (sin(r)/r − 1)/r² as a polynomial in z = r² on [0, (π/2 + 2^-30)²]: Chebyshev fit of
/// degree 6 (mpmath `chebyfit`), relative error of r·(1 + z·Q(z)) against sin(r) 2^-50.2 with
/// these double coefficients; lowest degree first.
const SINE_POLY: [f64; 7] = [
    -0.166_666_666_666_666_5,
    0.008_333_333_333_325_933,
    -0.000_198_412_698_364_690_24,
    2.755_731_805_568_578e-6,
    -2.505_197_292_154_507_2e-8,
    1.605_097_224_411_668_6e-10,
    -7.408_054_889_263_404e-13,
];
/// 2·(atanh(s)/s − 1)/s² as a polynomial in z = s² on [0, 0.17158²] (log(1 + f) = 2s +
/// s·z·T(z)): Chebyshev fit of degree 5 (mpmath `chebyfit`), relative error of the sum
/// against 2·atanh(s) 2^-50.4 with these double coefficients (sampled at 3001 points);
/// lowest degree first.
const ATANH_TAIL_POLY: [f64; 6] = [
    0.6666666666666208,
    0.40000000011211234,
    0.28571424136822743,
    0.22222862443506644,
    0.18140186659991617,
    0.16621925070716442,
];
/// The same for `pow`, whose reduction multiplies log2(x)'s error by up to 160.
const POW_TEST_EPSILON: f64 = 1.0 / (1u64 << 40) as f64;
/// 1.5 × 2^52: added to a double below 2^51 in magnitude, leaves its nearest integer in the
/// low bits of the sum (and the sum minus it is that integer).
pub(super) const SHIFTER: f64 = 6_755_399_441_055_744.0;

/// 2^r on [-0.5, 0.5]: Chebyshev fit of degree 9 (mpmath `chebyfit`), relative error 2^-45.6
/// with these double coefficients (sampled at 3001 points); lowest degree first. (The
/// constant and degree-1 coefficients are the fit's, near but not equal to 1 and ln 2.)
#[allow(clippy::approx_constant)]
const EXP2_POLY: [f64; 10] = [
    1.0000000000000135,
    0.6931471805599462,
    0.2402265069564034,
    0.05550410866465167,
    0.009618129193934313,
    0.0013333558200794592,
    0.0001540343375125101,
    1.5252672924850737e-05,
    1.325964524488711e-06,
    1.0205905413765595e-07,
];

impl Vectoriser<'_> {
    /// Emits `inst` as vector code if it is a call of float math with a vector form and a
    /// varying argument; false (nothing emitted) otherwise.
    pub(super) fn vector_math(&mut self, inst: ir::Inst) -> bool {
        let ir::InstructionData::Call { func_ref, .. } = self.func.dfg.insts[inst] else {
            return false;
        };
        let Some(&MathCall {
            function: f,
            tables,
        }) = self.math.get(&func_ref)
        else {
            return false;
        };
        if tables[0].is_some() {
            return self.vector_math_f64(inst, f, tables);
        }
        let args = self.func.dfg.inst_args(inst).to_vec();
        if args.iter().all(|&a| self.is_uniform(a)) {
            return false;
        }
        let operands: Vec<Value> = args.iter().map(|&a| self.vector(a)).collect();
        if f.is_relaxed() {
            self.relaxed_math(inst, f, &operands);
            return true;
        }
        let x = operands[0];
        let mut epsilon = TEST_EPSILON;
        let (y, domain) = match f {
            VectorMath::Exp => self.exp_family(x, std::f64::consts::LOG2_E, LOG2_E_LO, 104.0),
            VectorMath::Exp2 => self.exp_family(x, 1.0, 0.0, 152.0),
            VectorMath::Exp10 => self.exp_family(
                x,
                std::f64::consts::LOG2_10,
                1.661_617_516_973_592e-16,
                46.0,
            ),
            VectorMath::Log | VectorMath::Log2 | VectorMath::Log10 => self.log_family(x, f),
            VectorMath::Sin | VectorMath::Cos => self.sine_or_cosine(x, f),
            VectorMath::Tan => self.tangent(x),
            VectorMath::Expm1 => {
                let clamped = self.clamp_abs(x, 104.0);
                let xd = self.promote_vector(clamped);
                let y = self.expm1(xd);
                (y, self.abs_at_most(x, f32::INFINITY))
            }
            VectorMath::Tanh => self.tanh(x),
            VectorMath::Log1p => self.log1p(x),
            VectorMath::Atan => self.atan(x),
            VectorMath::Atan2 => self.atan2(x, operands[1]),
            VectorMath::Pown => {
                epsilon = POW_TEST_EPSILON;
                self.pown(x, operands[1])
            }
            VectorMath::Pow => {
                epsilon = POW_TEST_EPSILON;
                self.pow(x, operands[1])
            }
            // With their table: vector_math_f64.
            VectorMath::ExpF64
            | VectorMath::LogF64
            | VectorMath::Exp2F64
            | VectorMath::Log2F64
            | VectorMath::SinF64
            | VectorMath::CosF64
            | VectorMath::PowF64 => return false,
            // Above.
            VectorMath::RelaxedExp
            | VectorMath::RelaxedExp2
            | VectorMath::RelaxedExp10
            | VectorMath::RelaxedLog
            | VectorMath::RelaxedLog2
            | VectorMath::RelaxedLog10
            | VectorMath::RelaxedSin
            | VectorMath::RelaxedCos => return false,
        };
        let result = self.func.dfg.inst_results(inst)[0];
        let v = self.rounded_or_called(inst, &operands, y, domain, epsilon);
        self.define(result, Form::Vector(v));
        true
    }

    /// Ziv's test on double result `y` of the lanes where `domain` holds; the lanes that fail
    /// it, or are outside the domain, call `inst` (if active).
    fn rounded_or_called(
        &mut self,
        inst: ir::Inst,
        operands: &[Value],
        y: [Value; 2],
        domain: Value,
        epsilon: f64,
    ) -> Value {
        let below = self.scale(y, 1.0 - epsilon);
        let above = self.scale(y, 1.0 + epsilon);
        let low = self.demote_pair(below);
        let high = self.demote_pair(above);
        let it = self.mask_ty();
        let little = MemFlagsData::new().with_endianness(Endianness::Little);
        let (lb, hb) = {
            let mut c = self.cursor();
            (
                c.ins().bitcast(it, little, low),
                c.ins().bitcast(it, little, high),
            )
        };
        let agree = self.cursor().ins().icmp(IntCC::Equal, lb, hb);
        let ok = self.cursor().ins().band(agree, domain);
        self.called_outside(inst, operands, low, ok)
    }

    /// `y`, with the active lanes outside mask `keep` from scalar call `inst` instead (one
    /// branch skips the calls when no lane needs one).
    pub(super) fn called_outside(
        &mut self,
        inst: ir::Inst,
        operands: &[Value],
        y: Value,
        keep: Value,
    ) -> Value {
        let mut retry = self.cursor().ins().bnot(keep);
        if let Some(active) = self.active {
            retry = self.cursor().ins().band(retry, active);
        }
        let any = self.cursor().ins().vany_true(retry);
        let vt = self.wide(types::F32);
        self.diamond(
            any,
            Some(vt),
            &mut |s: &mut Self| Some(s.called_lanes(inst, operands, y, retry)),
            &mut |_| Some(y),
        )
        .expect("one result")
    }

    /// `fast` with the lanes where mask `retry` is on replaced by scalar call `inst` on the
    /// lanes of `operands`: a loop over the lanes through stack copies of the vectors, so a
    /// function costs one call site whatever the lane count.
    fn called_lanes(
        &mut self,
        inst: ir::Inst,
        operands: &[Value],
        fast: Value,
        retry: Value,
    ) -> Value {
        let operands: Vec<&[Value]> = operands.iter().map(std::slice::from_ref).collect();
        self.fallback_lanes(inst, &operands, &[fast], &[retry])[0]
    }

    /// The scalar fallback of a vector math call, for float vectors and double pairs alike:
    /// `fast` with the lanes where `retry` is on (a mask of the lanes' width) replaced by
    /// scalar call `inst` on those lanes of `operands`. Every value comes as its parts (one
    /// vector, or the two halves of a pair), which are spilled in order to one stack slot —
    /// [fast, retry, operands…] — so lane i of a value lies i lanes into it; the lane loop
    /// tests each lane's retry word, calls and writes the result over fast's lane, and fast's
    /// parts are read back.
    pub(super) fn fallback_lanes(
        &mut self,
        inst: ir::Inst,
        operands: &[&[Value]],
        fast: &[Value],
        retry: &[Value],
    ) -> Vec<Value> {
        let values: Vec<&[Value]> = [fast, retry]
            .into_iter()
            .chain(operands.iter().copied())
            .collect();
        let part_ty = self.ty(fast[0]);
        let lane_ty = part_ty.lane_type();
        // Each value's parts hold n lanes of the same width as fast's (f32 or f64).
        let value_bytes = (self.n * lane_ty.bytes() as usize) as i32;
        let slot = self.func.create_sized_stack_slot(ir::StackSlotData::new(
            ir::StackSlotKind::ExplicitSlot,
            values.len() as u32 * value_bytes as u32,
            part_ty.bytes().trailing_zeros() as u8,
        ));
        let flags = MemFlagsData::trusted();
        let (lane_loop, call, next, done) = (
            self.func.dfg.make_block(),
            self.func.dfg.make_block(),
            self.func.dfg.make_block(),
            self.func.dfg.make_block(),
        );
        for b in [lane_loop, call, next, done] {
            self.func.layout.append_block(b);
        }
        let i = self.func.dfg.append_block_param(lane_loop, types::I64);
        let base = {
            let mut c = self.cursor();
            let base = c.ins().stack_addr(types::I64, slot, 0);
            for (k, parts) in values.iter().enumerate() {
                let mut at = k as i32 * value_bytes;
                for &part in *parts {
                    c.ins().store(flags, part, base, at);
                    at += c.func.dfg.value_type(part).bytes() as i32;
                }
            }
            let zero = c.ins().iconst(types::I64, 0);
            c.ins().jump(lane_loop, &[ir::BlockArg::Value(zero)]);
            base
        };
        self.current = lane_loop;
        let at = {
            let mut c = self.cursor();
            let offset = c.ins().imul_imm_s(i, i64::from(lane_ty.bytes()));
            let at = c.ins().iadd(base, offset);
            let mask_ty = lane_ty.as_int();
            let on = c.ins().load(mask_ty, flags, at, value_bytes);
            c.ins().brif(on, call, &[], next, &[]);
            at
        };
        self.current = call;
        let r = if self.math_fallback_marker {
            let mut c = self.cursor();
            if lane_ty == types::F64 {
                c.ins()
                    .f64const(f64::from_bits(crate::MATH_FALLBACK_MARKER_F64))
            } else {
                c.ins()
                    .f32const(f32::from_bits(crate::MATH_FALLBACK_MARKER))
            }
        } else {
            let lanes: Vec<Value> = operands
                .iter()
                .enumerate()
                .map(|(k, parts)| {
                    let t = self.ty(parts[0]).lane_type();
                    self.cursor()
                        .ins()
                        .load(t, flags, at, (2 + k as i32) * value_bytes)
                })
                .collect();
            let ctrl = self.func.dfg.ctrl_typevar(inst);
            self.clone_with(inst, ctrl, &lanes)[0]
        };
        {
            let mut c = self.cursor();
            c.ins().store(flags, r, at, 0);
            c.ins().jump(next, &[]);
        }
        self.current = next;
        let lanes = self.n as i64;
        {
            let mut c = self.cursor();
            let i1 = c.ins().iadd_imm_s(i, 1);
            let more = c.ins().icmp_imm_s(IntCC::UnsignedLessThan, i1, lanes);
            c.ins()
                .brif(more, lane_loop, &[ir::BlockArg::Value(i1)], done, &[]);
        }
        self.current = done;
        let mut at = 0;
        fast.iter()
            .map(|&part| {
                let t = self.ty(part);
                let v = self.cursor().ins().load(t, flags, base, at);
                at += t.bytes() as i32;
                v
            })
            .collect()
    }

    /// `exp`, `exp2`, `exp10` (of 2^(x·c), c = `c_hi` + `c_lo`) of x clamped to |x| ≤ `bound`
    /// (results from zero to beyond the float range, which the rounding test handles).
    ///
    /// k = nearest(x·c), r = x·c − k by two fmas (|r| ≤ 0.5; x has 24 bits, so the one
    /// rounding leaves an error of 2^-53 on r), 2^r by [`EXP2_POLY`] (2^-45.6), and 2^k added
    /// to its exponent: below 2^-45.4 in all.
    fn exp_family(&mut self, x: Value, c_hi: f64, c_lo: f64, bound: f32) -> ([Value; 2], Value) {
        let clamped = self.clamp_abs(x, bound);
        let xd = self.promote_vector(clamped);
        let y = self.exp2_times(xd, c_hi, c_lo);
        let domain = self.abs_at_most(x, f32::INFINITY);
        (y, domain)
    }

    /// `x` clamped to [−bound, bound]: beyond, an exponential's float result is already
    /// infinite or zero (or −1 for expm1), which the clamped argument's result rounds to as
    /// well — so every argument but NaN stays in the fast domain.
    fn clamp_abs(&mut self, x: Value, bound: f32) -> Value {
        let vt = self.wide(types::F32);
        let mut c = self.cursor();
        let high = c.ins().f32const(bound);
        let high = c.ins().splat(vt, high);
        let low = c.ins().f32const(-bound);
        let low = c.ins().splat(vt, low);
        clamp(&mut c, vt, x, low, high)
    }

    /// 2^(x·(c_hi + c_lo)) for doubles x with |x·c| ≤ 1000 (see [`Self::exp_family`]).
    fn exp2_times(&mut self, xd: [Value; 2], c_hi: f64, c_lo: f64) -> [Value; 2] {
        let shifter = self.splat_f64(SHIFTER);
        let hi = self.splat_f64(c_hi);
        let s = self.map(&[xd, [hi; 2], [shifter; 2]], |c, a| {
            c.ins().fma(a[0], a[1], a[2])
        });
        let k = self.map(&[s, [shifter; 2]], |c, a| c.ins().fsub(a[0], a[1]));
        let minus_k = self.map(&[k], |c, a| c.ins().fneg(a[0]));
        let mut r = self.map(&[xd, [hi; 2], minus_k], |c, a| {
            c.ins().fma(a[0], a[1], a[2])
        });
        if c_lo != 0.0 {
            let lo = self.splat_f64(c_lo);
            r = self.map(&[xd, [lo; 2], r], |c, a| c.ins().fma(a[0], a[1], a[2]));
        }
        let p = self.polynomial(r, &EXP2_POLY);
        // 2^k into the exponent: the low bits of `s` hold k (plus 2^51, shifted out).
        let (sb, pb) = (self.bits(s), self.bits(p));
        let scaled = self.map(&[sb, pb], |c, a| {
            let k = c.ins().ishl_imm_u(a[0], 52);
            c.ins().iadd(a[1], k)
        });
        self.floats(scaled)
    }

    /// `pow(x, y)` (and `powr`) for positive normal x and finite y: 2^(y·log2(x)) with
    /// log2(x) from [`Self::log_family`] (relative error about 2^-50) and y·log2(x) clamped
    /// to ±160 (beyond, the result overflows or rounds to zero either way). The product's
    /// error is relative, so up to |y·log2(x)| = 160 it moves the result by at most
    /// 160·2^-50 ≈ 2^-42.7, and 2^t's own 2^-45.4 on top — hence the wider
    /// [`POW_TEST_EPSILON`] (pow has two arguments: no exhaustive run proves this one).
    fn pow(&mut self, x: Value, y: Value) -> ([Value; 2], Value) {
        let (log2_x, x_domain) = self.log_family(x, VectorMath::Log2);
        let yd = self.promote_vector(y);
        let limit = self.splat_f64(160.0);
        let minus_limit = self.splat_f64(-160.0);
        let pt = self.pair_ty();
        let t = self.map(&[log2_x, yd, [limit; 2], [minus_limit; 2]], |c, a| {
            let t = c.ins().fmul(a[0], a[1]);
            clamp(c, pt, t, a[3], a[2])
        });
        let result = self.exp2_times(t, 1.0, 0.0);
        let y_finite = self.abs_at_most(y, f32::MAX);
        let domain = self.cursor().ins().band(x_domain, y_finite);
        (result, domain)
    }

    /// `log`, `log2`, `log10` of a positive normal float x = 2^e·m, m in [√½, √2): with
    /// f = m − 1 and s = f/(2 + f) (f and 2 + f exact), log(m) = 2·atanh(s)
    /// ([`Self::log_1_plus`], 2^-50.4), then e·log(2) added in one fma. About 2^-50 in all
    /// (the division and the fmas round once each).
    fn log_family(&mut self, x: Value, f: VectorMath) -> ([Value; 2], Value) {
        let it = self.mask_ty();
        let vt = self.wide(types::F32);
        let little = MemFlagsData::new().with_endianness(Endianness::Little);
        let (domain, m, e) = {
            let mut c = self.cursor();
            let splat = |c: &mut FuncCursor, v: i64| {
                let s = c.ins().iconst(types::I32, v);
                c.ins().splat(it, s)
            };
            let bits = c.ins().bitcast(it, little, x);
            let min_normal = splat(&mut c, 0x0080_0000);
            let offset = c.ins().isub(bits, min_normal);
            let span = splat(&mut c, 0x7f00_0000);
            let domain = c.ins().icmp(IntCC::UnsignedLessThan, offset, span);
            let sqrt_half = splat(&mut c, 0x3f35_04f3);
            let from_sqrt_half = c.ins().isub(bits, sqrt_half);
            let e = c.ins().sshr_imm_u(from_sqrt_half, 23);
            let e_field = c.ins().ishl_imm_u(e, 23);
            let m_bits = c.ins().isub(bits, e_field);
            let m = c.ins().bitcast(vt, little, m_bits);
            let e = c.ins().fcvt_from_sint(vt, e);
            (domain, m, e)
        };
        let md = self.promote_vector(m);
        let ed = self.promote_vector(e);
        let one = self.splat_f64(1.0);
        let fm = self.map(&[md, [one; 2]], |c, a| c.ins().fsub(a[0], a[1]));
        let l = self.log_1_plus(fm);
        let y = match f {
            VectorMath::Log => {
                let ln2 = self.splat_f64(std::f64::consts::LN_2);
                self.map(&[ed, [ln2; 2], l], |c, a| c.ins().fma(a[0], a[1], a[2]))
            }
            VectorMath::Log2 => {
                let inv = self.splat_f64(std::f64::consts::LOG2_E);
                self.map(&[l, [inv; 2], ed], |c, a| c.ins().fma(a[0], a[1], a[2]))
            }
            _ => {
                let inv = self.splat_f64(std::f64::consts::LOG10_E);
                let lg2 = self.splat_f64(std::f64::consts::LOG10_2);
                self.map(&[l, [inv; 2], ed, [lg2; 2]], |c, a| {
                    let t = c.ins().fmul(a[0], a[1]);
                    c.ins().fma(a[2], a[3], t)
                })
            }
        };
        (y, domain)
    }

    /// log(1 + f) for f in [√½ − 1, √2 − 1] given exactly: with s = f/(2 + f) (2 + f exact),
    /// 2·atanh(s) = 2s + s·s²·T(s²) ([`ATANH_TAIL_POLY`], |s| ≤ 0.1716: 2^-50.4).
    ///
    /// The two double divisions per 16 lanes are not what bounds the loop on AVX-512: its
    /// time follows its count of vector instructions (two 512-bit ports; exp 96 per 16 lanes,
    /// log 112, sin 85 take 2.7, 3.1 and 2.4 ms for 4 Mi floats), and both replacements tried
    /// added instructions and measured slower — 1/float(d) by a float division and two Newton
    /// steps (3.5–4.0 ms against 2.5–3.0), and `vrcp14pd` with two Newton steps (3.47 against
    /// 3.19, interleaved). Without the scalar fallback's call (so no constants spilled across
    /// it) exp and log ran 6–7 % faster: the rest is arithmetic.
    fn log_1_plus(&mut self, fm: [Value; 2]) -> [Value; 2] {
        let two = self.splat_f64(2.0);
        let s = self.map(&[fm, [two; 2]], |c, a| {
            let d = c.ins().fadd(a[0], a[1]);
            c.ins().fdiv(a[0], d)
        });
        let z = self.map(&[s], |c, a| c.ins().fmul(a[0], a[0]));
        let q = self.polynomial(z, &ATANH_TAIL_POLY);
        self.map(&[s, z, q], |c, a| {
            let r = c.ins().fmul(a[1], a[2]);
            let two_s = c.ins().fadd(a[0], a[0]);
            c.ins().fma(a[0], r, two_s)
        })
    }

    /// e^x − 1 for doubles |x| ≤ 104 (from floats): k = nearest(x·log2 e), r = x·log2 e − k
    /// as in [`Self::exp2_times`], 2^r − 1 = r·Q(r) ([`EXPM1_POLY`], 2^-49.3), then
    /// 2^k·(2^r − 1) + (2^k − 1) in one fma (2^k − 1 exact for |k| ≤ 53, and beyond within
    /// 2^-53 of a result at least as large). Where k ≠ 0 the result is at least 0.29 in
    /// magnitude and the product at most 1.4 times it, so its relative error stays about
    /// 2^-48.5; at k = 0 the result is r·Q(r) itself (which keeps the sign of zero).
    fn expm1(&mut self, xd: [Value; 2]) -> [Value; 2] {
        let shifter = self.splat_f64(SHIFTER);
        let hi = self.splat_f64(std::f64::consts::LOG2_E);
        let lo = self.splat_f64(LOG2_E_LO);
        let s = self.map(&[xd, [hi; 2], [shifter; 2]], |c, a| {
            c.ins().fma(a[0], a[1], a[2])
        });
        let k = self.map(&[s, [shifter; 2]], |c, a| c.ins().fsub(a[0], a[1]));
        let r = self.map(&[xd, [hi; 2], k, [lo; 2]], |c, a| {
            let minus_k = c.ins().fneg(a[2]);
            let r = c.ins().fma(a[0], a[1], minus_k);
            c.ins().fma(a[0], a[3], r)
        });
        let q = self.polynomial(r, &EXPM1_POLY);
        let q = self.map(&[r, q], |c, a| c.ins().fmul(a[0], a[1]));
        let (one, zero) = (self.splat_f64(1.0), self.splat_f64(0.0));
        let (sb, ob) = (self.bits(s), self.bits([one; 2]));
        let two_k = self.map(&[sb, ob], |c, a| {
            let k = c.ins().ishl_imm_u(a[0], 52);
            c.ins().iadd(a[1], k)
        });
        let two_k = self.floats(two_k);
        let pt = self.pair_ty();
        let little = MemFlagsData::new().with_endianness(Endianness::Little);
        self.map(&[two_k, q, [one; 2], k, [zero; 2]], |c, a| {
            let minus_one = c.ins().fsub(a[0], a[2]);
            let general = c.ins().fma(a[0], a[1], minus_one);
            let k_zero = c.ins().fcmp(FloatCC::Equal, a[3], a[4]);
            let k_zero = c.ins().bitcast(pt, little, k_zero);
            c.ins().bitselect(k_zero, a[1], general)
        })
    }

    /// tanh(x) = q/(q + 2) with q = e^(2x) − 1 ([`Self::expm1`], 2x clamped to ±104 where
    /// tanh is ±1 in float long before): q's relative error carries over, doubled at most.
    fn tanh(&mut self, x: Value) -> ([Value; 2], Value) {
        let xd = self.promote_vector(x);
        let (limit, minus_limit, two) = (
            self.splat_f64(104.0),
            self.splat_f64(-104.0),
            self.splat_f64(2.0),
        );
        let pt = self.pair_ty();
        let t = self.map(&[xd, [limit; 2], [minus_limit; 2]], |c, a| {
            let t = c.ins().fadd(a[0], a[0]);
            clamp(c, pt, t, a[2], a[1])
        });
        let q = self.expm1(t);
        let y = self.map(&[q, [two; 2]], |c, a| {
            let d = c.ins().fadd(a[0], a[1]);
            c.ins().fdiv(a[0], d)
        });
        (y, self.abs_at_most(x, f32::INFINITY))
    }

    /// log(1 + x) for floats x > −1: u = 1 + x is exact in double for |x| ≥ 2^-29; u = 2^e·m
    /// with m in [√½, √2) by integer steps on its bits, then e·log 2 + log(1 + (m − 1)) as in
    /// [`Self::log_family`]. For |x| ≤ 2^-25 the series x − x²/2 + x³/3 − x⁴/4 instead (the
    /// rest is below 2^-100 relative).
    fn log1p(&mut self, x: Value) -> ([Value; 2], Value) {
        let xd = self.promote_vector(x);
        let one = self.splat_f64(1.0);
        let u = self.map(&[xd, [one; 2]], |c, a| c.ins().fadd(a[0], a[1]));
        let it = self.pair_int_ty();
        let ub = self.bits(u);
        // t = bits(u) + (bits(1) − bits(√½)): its exponent field is e + 1023, carrying into
        // it exactly when the significand is at least √2.
        let (m_bits, e_bits) = {
            let mut c = self.cursor();
            let mut splat = |v: i64| {
                let s = c.ins().iconst(types::I64, v);
                c.ins().splat(it, s)
            };
            let offset = splat(0x3ff0_0000_0000_0000 - 0x3fe6_a09e_667f_3bcd);
            let bias = splat(0x3ff0_0000_0000_0000);
            let shifter_bits = splat(SHIFTER.to_bits() as i64 - 1023);
            let mut m_bits = [ub[0]; 2];
            let mut e_bits = [ub[0]; 2];
            for h in 0..2 {
                let t = c.ins().iadd(ub[h], offset);
                let biased = c.ins().ushr_imm_u(t, 52);
                let field = c.ins().ishl_imm_u(biased, 52);
                let m = c.ins().isub(ub[h], field);
                m_bits[h] = c.ins().iadd(m, bias);
                e_bits[h] = c.ins().iadd(biased, shifter_bits);
            }
            (m_bits, e_bits)
        };
        let m = self.floats(m_bits);
        let shifter = self.splat_f64(SHIFTER);
        let e = self.floats(e_bits);
        let e = self.map(&[e, [shifter; 2]], |c, a| c.ins().fsub(a[0], a[1]));
        let fm = self.map(&[m, [one; 2]], |c, a| c.ins().fsub(a[0], a[1]));
        let l = self.log_1_plus(fm);
        let ln2 = self.splat_f64(std::f64::consts::LN_2);
        let general = self.map(&[e, [ln2; 2], l], |c, a| c.ins().fma(a[0], a[1], a[2]));
        // x·(…) rather than a constant term of 0 keeps the sign of x = ±0.
        let series = self.polynomial(xd, &[1.0, -0.5, 1.0 / 3.0, -0.25]);
        let series = self.map(&[xd, series], |c, a| c.ins().fmul(a[0], a[1]));
        let tiny = self.splat_f64(1.0 / (1u64 << 25) as f64);
        let pt = self.pair_ty();
        let little = MemFlagsData::new().with_endianness(Endianness::Little);
        let y = self.map(&[xd, [tiny; 2], series, general], |c, a| {
            let ax = c.ins().fabs(a[0]);
            let small = c.ins().fcmp(FloatCC::LessThanOrEqual, ax, a[1]);
            let small = c.ins().bitcast(pt, little, small);
            c.ins().bitselect(small, a[2], a[3])
        });
        let domain = {
            let vt = self.wide(types::F32);
            let mut c = self.cursor();
            let minus_one = c.ins().f32const(-1.0);
            let minus_one = c.ins().splat(vt, minus_one);
            let max = c.ins().f32const(f32::MAX);
            let max = c.ins().splat(vt, max);
            let above = c.ins().fcmp(FloatCC::GreaterThan, x, minus_one);
            let finite = c.ins().fcmp(FloatCC::LessThanOrEqual, x, max);
            c.ins().band(above, finite)
        };
        (y, domain)
    }

    /// atan(x) for every float but NaN, on a = |x| and with the sign of x put back:
    /// a ≤ tan(π/12): a·P(a²); to 1: π/6 + atan((a√3 − 1)/(a + √3)); to 1/tan(π/12):
    /// π/3 − atan((√3 − a)/(1 + a√3)); beyond: π/2 − atan(1/a) — each argument in
    /// [−tan(π/12), tan(π/12)], its numerator exact or rounded once relative to itself (√3 in
    /// two doubles; a is a float), one division. P: [`ATAN_POLY`], 2^-49.8.
    fn atan(&mut self, x: Value) -> ([Value; 2], Value) {
        let xd = self.promote_vector(x);
        let abs = self.map(&[xd], |c, a| c.ins().fabs(a[0]));
        let t = self.atan_of_magnitude(abs);
        let pt = self.pair_ty();
        let it = self.pair_int_ty();
        let little = MemFlagsData::new().with_endianness(Endianness::Little);
        let y = self.map(&[t, xd], |c, a| {
            // atan(|x|) ≥ 0: the sign of x goes into its sign bit.
            let yb = c.ins().bitcast(it, little, a[0]);
            let xb = c.ins().bitcast(it, little, a[1]);
            let sign = c.ins().ushr_imm_u(xb, 63);
            let sign = c.ins().ishl_imm_u(sign, 63);
            let signed = c.ins().bor(yb, sign);
            c.ins().bitcast(pt, little, signed)
        });
        (y, self.abs_at_most(x, f32::INFINITY))
    }

    /// atan(a) for doubles a ≥ 0 (the ranges of [`Self::atan`]; the steps stay exact or
    /// once rounded relative to their result for any double a, not only floats).
    fn atan_of_magnitude(&mut self, abs: [Value; 2]) -> [Value; 2] {
        let c = |s: &mut Self, v: f64| [s.splat_f64(v); 2];
        let (one, minus_one) = (c(self, 1.0), c(self, -1.0));
        let (sqrt3_hi, sqrt3_lo) = (c(self, SQRT3_HI), c(self, SQRT3_LO));
        let (low_edge, high_edge) = (c(self, TAN_PI_12), c(self, 1.0 / TAN_PI_12));
        let (pi6, pi3, pi2) = (
            c(self, std::f64::consts::FRAC_PI_6),
            c(self, std::f64::consts::FRAC_PI_3),
            c(self, std::f64::consts::FRAC_PI_2),
        );
        let zero = c(self, 0.0);
        let pt = self.pair_ty();
        let little = MemFlagsData::new().with_endianness(Endianness::Little);
        // Per case: u = ±num/den, and the base u's atan is added to.
        let mut num = zero;
        let mut den = zero;
        let mut base = zero;
        let mut negate = zero;
        {
            let mut cur = self.cursor();
            for h in 0..2 {
                let a = abs[h];
                // Case B (tan(π/12) < a ≤ 1) and C (1 < a ≤ 1/tan(π/12)) and D (beyond).
                let num_b = cur.ins().fma(a, sqrt3_hi[h], minus_one[h]);
                let num_b = cur.ins().fma(a, sqrt3_lo[h], num_b);
                let den_b = cur.ins().fadd(a, sqrt3_hi[h]);
                let num_c = cur.ins().fsub(sqrt3_hi[h], a);
                let num_c = cur.ins().fadd(num_c, sqrt3_lo[h]);
                let den_c = cur.ins().fma(a, sqrt3_hi[h], one[h]);
                let is_b = cur.ins().fcmp(FloatCC::GreaterThan, a, low_edge[h]);
                let is_c = cur.ins().fcmp(FloatCC::GreaterThan, a, one[h]);
                let is_d = cur.ins().fcmp(FloatCC::GreaterThan, a, high_edge[h]);
                let (is_b, is_c, is_d) = (
                    cur.ins().bitcast(pt, little, is_b),
                    cur.ins().bitcast(pt, little, is_c),
                    cur.ins().bitcast(pt, little, is_d),
                );
                let n = cur.ins().bitselect(is_b, num_b, a);
                let n = cur.ins().bitselect(is_c, num_c, n);
                num[h] = cur.ins().bitselect(is_d, one[h], n);
                let d = cur.ins().bitselect(is_b, den_b, one[h]);
                let d = cur.ins().bitselect(is_c, den_c, d);
                den[h] = cur.ins().bitselect(is_d, a, d);
                let b = cur.ins().bitselect(is_b, pi6[h], zero[h]);
                let b = cur.ins().bitselect(is_c, pi3[h], b);
                base[h] = cur.ins().bitselect(is_d, pi2[h], b);
                negate[h] = is_c;
            }
        }
        let u = self.map(&[num, den, negate], |c, a| {
            let u = c.ins().fdiv(a[0], a[1]);
            let minus_u = c.ins().fneg(u);
            c.ins().bitselect(a[2], minus_u, u)
        });
        let z = self.map(&[u], |c, a| c.ins().fmul(a[0], a[0]));
        let p = self.polynomial(z, &ATAN_POLY);
        self.map(&[u, p, base], |c, a| c.ins().fma(a[0], a[1], a[2]))
    }

    /// atan2(y, x) for finite nonzero x and y: t = atan(|y|/|x|) (the quotient rounded once,
    /// which moves atan by at most as much relative), π − t where x < 0, the sign of y put
    /// back.
    fn atan2(&mut self, y: Value, x: Value) -> ([Value; 2], Value) {
        let (yd, xd) = (self.promote_vector(y), self.promote_vector(x));
        let ratio = self.map(&[yd, xd], |c, a| {
            let (ay, ax) = (c.ins().fabs(a[0]), c.ins().fabs(a[1]));
            c.ins().fdiv(ay, ax)
        });
        let t = self.atan_of_magnitude(ratio);
        let pi = self.splat_f64(std::f64::consts::PI);
        let pt = self.pair_ty();
        let it = self.pair_int_ty();
        let little = MemFlagsData::new().with_endianness(Endianness::Little);
        let result = self.map(&[t, xd, yd, [pi; 2]], |c, a| {
            let xb = c.ins().bitcast(it, little, a[1]);
            let zero = c.ins().iconst(types::I64, 0);
            let zero = c.ins().splat(it, zero);
            let x_negative = c.ins().icmp(IntCC::SignedLessThan, xb, zero);
            let x_negative = c.ins().bitcast(pt, little, x_negative);
            let from_pi = c.ins().fsub(a[3], a[0]);
            let t = c.ins().bitselect(x_negative, from_pi, a[0]);
            let tb = c.ins().bitcast(it, little, t);
            let yb = c.ins().bitcast(it, little, a[2]);
            let sign = c.ins().ushr_imm_u(yb, 63);
            let sign = c.ins().ishl_imm_u(sign, 63);
            let signed = c.ins().bor(tb, sign);
            c.ins().bitcast(pt, little, signed)
        });
        let domain = {
            let (fy, fx) = (self.abs_at_most(y, f32::MAX), self.abs_at_most(x, f32::MAX));
            let vt = self.wide(types::F32);
            let mut c = self.cursor();
            let zero = c.ins().f32const(0.0);
            let zero = c.ins().splat(vt, zero);
            let ny = c.ins().fcmp(FloatCC::NotEqual, y, zero);
            let nx = c.ins().fcmp(FloatCC::NotEqual, x, zero);
            let finite = c.ins().band(fy, fx);
            let nonzero = c.ins().band(ny, nx);
            c.ins().band(finite, nonzero)
        };
        (result, domain)
    }

    /// pown(x, n) for normal x (either sign) and any n: |x|^n as [`Self::pow`] computes it
    /// (n is exact in double), negative where x is and n is odd.
    fn pown(&mut self, x: Value, n: Value) -> ([Value; 2], Value) {
        let vt = self.wide(types::F32);
        let it = self.mask_ty();
        let little = MemFlagsData::new().with_endianness(Endianness::Little);
        let ax = self.cursor().ins().fabs(x);
        let (log2_x, x_domain) = self.log_family(ax, VectorMath::Log2);
        let nd = self.int_pair(n);
        let limit = self.splat_f64(160.0);
        let minus_limit = self.splat_f64(-160.0);
        let pt = self.pair_ty();
        let t = self.map(&[log2_x, nd, [limit; 2], [minus_limit; 2]], |c, a| {
            let t = c.ins().fmul(a[0], a[1]);
            clamp(c, pt, t, a[3], a[2])
        });
        let magnitude = self.exp2_times(t, 1.0, 0.0);
        // The sign as a float vector's sign bits (x's where n is odd), promoted with the rest.
        let sign = {
            let mut c = self.cursor();
            let xb = c.ins().bitcast(it, little, x);
            let odd = c.ins().ishl_imm_u(n, 31);
            let sign = c.ins().band(xb, odd);
            let one = c.ins().f32const(1.0);
            let one = c.ins().splat(vt, one);
            let ob = c.ins().bitcast(it, little, one);
            let signed_one = c.ins().bor(ob, sign);
            c.ins().bitcast(vt, little, signed_one)
        };
        let sign = self.promote_vector(sign);
        let result = self.map(&[magnitude, sign], |c, a| c.ins().fmul(a[0], a[1]));
        (result, x_domain)
    }

    /// An i32 vector as a pair of double vectors, exactly: each lane widened to 64 bits and
    /// added to the bits of [`SHIFTER`] (which leave it as SHIFTER + n), minus SHIFTER.
    fn int_pair(&mut self, v: Value) -> [Value; 2] {
        let it = self.pair_int_ty();
        let shifter = self.splat_f64(SHIFTER);
        let wide = {
            let mut c = self.cursor();
            let lo = c.ins().swiden_low(v);
            let hi = c.ins().swiden_high(v);
            [lo, hi]
        };
        let bits = {
            let mut c = self.cursor();
            let s = c.ins().iconst(types::I64, SHIFTER.to_bits() as i64);
            c.ins().splat(it, s)
        };
        let sum = self.map(&[wide, [bits; 2]], |c, a| c.ins().iadd(a[0], a[1]));
        let sum = self.floats(sum);
        self.map(&[sum, [shifter; 2]], |c, a| c.ins().fsub(a[0], a[1]))
    }

    /// `sin` or `cos` for |x| ≤ 2^18 from one polynomial: sin x = (−1)^k·sin(x − kπ) with
    /// k = nearest(x/π), and cos x = (−1)^(k+1)·sin(x − (k + ½)π) with k = nearest(x/π − ½).
    /// The reduction ([`Self::reduce`]) takes π (for sin) or π/2 times the odd
    /// 2k + 1 (for cos) in three doubles: its first step exact (x and the product are
    /// multiples of 2^-52, their difference below 2 in magnitude), the next two rounding once
    /// each relative to r; |r| ≤ π/2 + 2^-30 (x/π rounds once on the way to k). Then
    /// sin(r) = r·(1 + r²·Q(r²)), [`SINE_POLY`] (2^-50.2), multiplying r to keep the sign of
    /// zero: about 2^-49.5 in all. Half the arithmetic of computing both sin(r) and cos(r) on
    /// [−π/4, π/4] and choosing per lane, as tan still does.
    fn sine_or_cosine(&mut self, x: Value, f: VectorMath) -> ([Value; 2], Value) {
        let xd = self.promote_vector(x);
        let shifter = self.splat_f64(SHIFTER);
        let inverse_pi = self.splat_f64(std::f64::consts::FRAC_1_PI);
        let s = if f == VectorMath::Cos {
            let half = self.splat_f64(-0.5);
            self.map(&[xd, [inverse_pi; 2], [half; 2], [shifter; 2]], |c, a| {
                let t = c.ins().fma(a[0], a[1], a[2]);
                c.ins().fadd(t, a[3])
            })
        } else {
            self.map(&[xd, [inverse_pi; 2], [shifter; 2]], |c, a| {
                c.ins().fma(a[0], a[1], a[2])
            })
        };
        let k = self.map(&[s, [shifter; 2]], |c, a| c.ins().fsub(a[0], a[1]));
        // The multiple of the first part: k for sin (parts of π), 2k + 1 for cos (of π/2).
        let (multiple, parts) = if f == VectorMath::Cos {
            let (two, one) = (self.splat_f64(2.0), self.splat_f64(1.0));
            let odd = self.map(&[k, [two; 2], [one; 2]], |c, a| {
                c.ins().fma(a[0], a[1], a[2])
            });
            let minus_odd = self.map(&[odd], |c, a| c.ins().fneg(a[0]));
            ([odd, minus_odd], PI_OVER_2_PARTS)
        } else {
            let minus_k = self.map(&[s, [shifter; 2]], |c, a| c.ins().fsub(a[1], a[0]));
            ([k, minus_k], PI_PARTS)
        };
        let r = self.reduce(xd, multiple, parts);
        let z = self.map(&[r], |c, a| c.ins().fmul(a[0], a[0]));
        let q = self.polynomial(z, &SINE_POLY);
        let one = self.splat_f64(1.0);
        let sin_r = self.map(&[r, z, q, [one; 2]], |c, a| {
            let t = c.ins().fma(a[1], a[2], a[3]);
            c.ins().fmul(a[0], t)
        });
        // The sign from k's parity, in the low bit of `s` (plus one for cos).
        let sb = self.bits(s);
        let it = self.pair_int_ty();
        let pt = self.pair_ty();
        let little = MemFlagsData::new().with_endianness(Endianness::Little);
        let y = self.map(&[sb, sin_r], |c, a| {
            let one = c.ins().iconst(types::I64, 1);
            let one = c.ins().splat(it, one);
            let q = if f == VectorMath::Cos {
                c.ins().iadd(a[0], one)
            } else {
                a[0]
            };
            let odd = c.ins().band(q, one);
            let sign = c.ins().ishl_imm_u(odd, 63);
            let vb = c.ins().bitcast(it, little, a[1]);
            let signed = c.ins().bxor(vb, sign);
            c.ins().bitcast(pt, little, signed)
        });
        let domain = self.abs_at_most(x, 262_144.0);
        (y, domain)
    }

    /// `tan` for |x| ≤ 2^18: k = nearest(x·2/π), r = x − k·π/2 as in
    /// [`Self::sine_or_cosine`] (|r| ≤ π/4), then sin(r) = r·(1 + r²·S(r²)) and cos(r) =
    /// 1 + r²·C(r²) by their Taylor series to r¹⁵ and r¹⁴ (remainders 2^-54 and 2^-50), and
    /// their quotient by k's parity: sin/cos on even quadrants, −cos/sin on odd ones (one more
    /// rounding; near a pole the divisor is sin(r), as accurate relative to itself as r).
    fn tangent(&mut self, x: Value) -> ([Value; 2], Value) {
        let xd = self.promote_vector(x);
        let shifter = self.splat_f64(SHIFTER);
        let two_over_pi = self.splat_f64(std::f64::consts::FRAC_2_PI);
        let s = self.map(&[xd, [two_over_pi; 2], [shifter; 2]], |c, a| {
            c.ins().fma(a[0], a[1], a[2])
        });
        let k = self.map(&[s, [shifter; 2]], |c, a| c.ins().fsub(a[0], a[1]));
        let minus_k = self.map(&[s, [shifter; 2]], |c, a| c.ins().fsub(a[1], a[0]));
        let r = self.reduce(xd, [k, minus_k], PI_OVER_2_PARTS);
        let z = self.map(&[r], |c, a| c.ins().fmul(a[0], a[0]));
        let mut factorial = 1.0f64;
        let mut sin_terms = Vec::with_capacity(7);
        let mut cos_terms = Vec::with_capacity(7);
        for j in 1..=7 {
            let sign = if j % 2 == 1 { -1.0 } else { 1.0 };
            factorial *= f64::from(2 * j - 1) * f64::from(2 * j);
            cos_terms.push(sign / factorial);
            sin_terms.push(sign / (factorial * f64::from(2 * j + 1)));
        }
        let one = self.splat_f64(1.0);
        let sp = self.polynomial(z, &sin_terms);
        let sin_r = self.map(&[r, z, sp, [one; 2]], |c, a| {
            let t = c.ins().fma(a[1], a[2], a[3]);
            c.ins().fmul(a[0], t)
        });
        let cp = self.polynomial(z, &cos_terms);
        let cos_r = self.map(&[z, cp, [one; 2]], |c, a| c.ins().fma(a[0], a[1], a[2]));
        let sb = self.bits(s);
        let it = self.pair_int_ty();
        let pt = self.pair_ty();
        let little = MemFlagsData::new().with_endianness(Endianness::Little);
        let y = self.map(&[sb, sin_r, cos_r], |c, a| {
            let one = c.ins().iconst(types::I64, 1);
            let one = c.ins().splat(it, one);
            let odd_bit = c.ins().band(a[0], one);
            let odd = c.ins().icmp(IntCC::Equal, odd_bit, one);
            let odd_f = c.ins().bitcast(pt, little, odd);
            let num = c.ins().bitselect(odd_f, a[2], a[1]);
            let den = c.ins().bitselect(odd_f, a[1], a[2]);
            let v = c.ins().fdiv(num, den);
            let sign = c.ins().ishl_imm_u(odd_bit, 63);
            let vb = c.ins().bitcast(it, little, v);
            let signed = c.ins().bxor(vb, sign);
            c.ins().bitcast(pt, little, signed)
        });
        let domain = self.abs_at_most(x, 262_144.0);
        (y, domain)
    }

    /// x − m·(p1 + p2 + p3) by three fmas, as r + m·(−p) or r + (−m)·p, whichever multiplies
    /// by a negative constant: where m and −m are both +0 (each the shifter's difference with
    /// the other sign, not a negation) the product is then −0, so r keeps the sign of x = ±0.
    fn reduce(
        &mut self,
        xd: [Value; 2],
        [multiple, minus_multiple]: [[Value; 2]; 2],
        parts: [f64; 3],
    ) -> [Value; 2] {
        let mut r = xd;
        for part in parts {
            let (factor, p) = if part > 0.0 {
                (multiple, self.splat_f64(-part))
            } else {
                (minus_multiple, self.splat_f64(part))
            };
            r = self.map(&[factor, [p; 2], r], |c, a| c.ins().fma(a[0], a[1], a[2]));
        }
        r
    }

    /// `f` on the halves of the pairs `args`, half by half.
    pub(super) fn map(
        &mut self,
        args: &[[Value; 2]],
        f: impl Fn(&mut FuncCursor, &[Value]) -> Value,
    ) -> [Value; 2] {
        let mut c = self.cursor();
        let low: Vec<Value> = args.iter().map(|a| a[0]).collect();
        let high: Vec<Value> = args.iter().map(|a| a[1]).collect();
        [f(&mut c, &low), f(&mut c, &high)]
    }

    /// Σ coeffs[i]·zⁱ by Estrin's scheme with fmas: neighbouring terms paired as
    /// c[2i] + c[2i+1]·z, the pairs paired with z², and so on. Its chain is about log2 of the
    /// degree long where Horner's rule's is the degree, for a multiplication or two more
    /// (measured against Horner on AVX-512, 16 lanes: 0–7 % faster, within the noise for
    /// `log` and `sin`). The sums are as well conditioned as Horner's on these polynomials
    /// (each partial sum far from cancelling): a few roundings of 2^-53.
    pub(super) fn polynomial(&mut self, z: [Value; 2], coeffs: &[f64]) -> [Value; 2] {
        let mut terms: Vec<[Value; 2]> = coeffs.iter().map(|&c| [self.splat_f64(c); 2]).collect();
        let mut power = z;
        while terms.len() > 1 {
            let next: Vec<[Value; 2]> = terms
                .chunks(2)
                .map(|pair| match *pair {
                    [low, high] => {
                        self.map(&[high, power, low], |c, a| c.ins().fma(a[0], a[1], a[2]))
                    }
                    [alone] => alone,
                    _ => unreachable!("chunks of two"),
                })
                .collect();
            if next.len() > 1 {
                power = self.map(&[power], |c, a| c.ins().fmul(a[0], a[0]));
            }
            terms = next;
        }
        terms[0]
    }

    pub(super) fn scale(&mut self, y: [Value; 2], by: f64) -> [Value; 2] {
        let b = self.splat_f64(by);
        self.map(&[y, [b; 2]], |c, a| c.ins().fmul(a[0], a[1]))
    }

    pub(super) fn splat_f64(&mut self, v: f64) -> Value {
        let pt = self.pair_ty();
        let mut c = self.cursor();
        let s = c.ins().f64const(v);
        c.ins().splat(pt, s)
    }

    /// The integer type of a pair's halves (i64x2 at four lanes).
    pub(super) fn pair_int_ty(&self) -> Type {
        types::I64.by(self.n as u32 / 2).expect("double lanes")
    }

    pub(super) fn bits(&mut self, p: [Value; 2]) -> [Value; 2] {
        let it = self.pair_int_ty();
        let little = MemFlagsData::new().with_endianness(Endianness::Little);
        self.map(&[p], |c, a| c.ins().bitcast(it, little, a[0]))
    }

    pub(super) fn floats(&mut self, p: [Value; 2]) -> [Value; 2] {
        let pt = self.pair_ty();
        let little = MemFlagsData::new().with_endianness(Endianness::Little);
        self.map(&[p], |c, a| c.ins().bitcast(pt, little, a[0]))
    }

    /// The lanes of float vector `x` with |x| ≤ `bound` (not NaN), as a mask.
    fn abs_at_most(&mut self, x: Value, bound: f32) -> Value {
        let vt = self.wide(types::F32);
        let mut c = self.cursor();
        let a = c.ins().fabs(x);
        let b = c.ins().f32const(bound);
        let b = c.ins().splat(vt, b);
        c.ins().fcmp(FloatCC::LessThanOrEqual, a, b)
    }

    /// Float vector `v` as a pair of double vectors (low lanes, high lanes). At four lanes:
    /// the low pair converted, then the high pair moved down by a byte shuffle (one PSHUFD)
    /// and converted — a lane extracted to a general register and put back sat on the
    /// critical path of float rsqrt, twice. CLIF has no wider `fvpromote_low`: wider, lane by
    /// lane, which the wide backend's optimiser turns back into whole-register conversions.
    pub(super) fn promote_vector(&mut self, v: Value) -> [Value; 2] {
        if self.n > 4 {
            let wide: Vec<Value> = (0..self.n as u8)
                .map(|k| {
                    let mut c = self.cursor();
                    let l = c.ins().extractlane(v, k);
                    c.ins().fpromote(types::F64, l)
                })
                .collect();
            return self.pair_from_lanes(&wide);
        }
        let lo = self.cursor().ins().fvpromote_low(v);
        let high_down: Vec<u8> = (8..16).chain(8..16).collect();
        let moved = self.byte_shuffle(v, v, high_down, types::F32X4);
        let hi = self.cursor().ins().fvpromote_low(moved);
        [lo, hi]
    }

    /// Double pair `p` rounded to one float vector: both halves narrowed and their low lanes
    /// joined (lane by lane beyond four lanes, as [`Self::promote_vector`]).
    pub(super) fn demote_pair(&mut self, p: [Value; 2]) -> Value {
        let vt = self.wide(types::F32);
        if self.n > 4 {
            let half = self.n / 2;
            let narrow: Vec<Value> = (0..self.n)
                .map(|k| {
                    let mut c = self.cursor();
                    let l = c.ins().extractlane(p[k / half], (k % half) as u8);
                    c.ins().fdemote(types::F32, l)
                })
                .collect();
            return self.vector_of_lanes(vt, &narrow);
        }
        let lo = self.cursor().ins().fvdemote(p[0]);
        let hi = self.cursor().ins().fvdemote(p[1]);
        let low_halves: Vec<u8> = (0..8).chain(16..24).collect();
        self.byte_shuffle(lo, hi, low_halves, types::F32X4)
    }
}

/// `x` (of float vector type `ty`) clamped to [`low`, `high`] by compares and selects: the
/// same values as fmax and fmin for every number, and a NaN stays NaN (it compares false) —
/// whose lanes are outside every fast domain anyway. fmax/fmin carry NaN and signed-zero rules
/// that cost a longer instruction sequence.
pub(super) fn clamp(c: &mut FuncCursor, ty: Type, x: Value, low: Value, high: Value) -> Value {
    let little = MemFlagsData::new().with_endianness(Endianness::Little);
    let below = c.ins().fcmp(FloatCC::LessThan, x, low);
    let below = c.ins().bitcast(ty, little, below);
    let x = c.ins().bitselect(below, low, x);
    let above = c.ins().fcmp(FloatCC::GreaterThan, x, high);
    let above = c.ins().bitcast(ty, little, above);
    c.ins().bitselect(above, high, x)
}
