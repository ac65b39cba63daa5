//! Phis, function calls and OpenCL.std extended instructions (the argument rules of each).

use super::*;

impl<'m> Checker<'m> {
    /// Branches and returns. Whether the opcode is one of them.
    pub(super) fn control_instruction(&mut self, inst: &Instruction, fn_ret: Word) -> bool {
        use Op::*;
        let op = inst.class.opcode;
        match op {
            BranchConditional => {
                if let Some(c) = self.operand_type(inst, 0) {
                    if self.shape(c) != Some((Kind::Bool, 1)) {
                        let rule = format!(
                            "SPIR-V Control-Flow: Condition must be a bool scalar, found {}",
                            self.type_name(c)
                        );
                        self.report(inst, rule);
                    }
                }
            }
            Switch => {
                // llvm-spirv-15 translates LLVM's `switch i1` (instcombine narrows `switch (i & 1)`
                // to it) to an OpSwitch on a bool, which SPIR-V does not allow; the Khronos
                // CTS math kernels hit it. Accepted with cases 0 and 1 (false and true), the only
                // reading it has; any other selector type is refused.
                let bool_selector = self
                    .operand_type(inst, 0)
                    .is_some_and(|t| matches!(self.shape(t), Some((Kind::Bool, 1))));
                if bool_selector {
                    let beyond = inst.operands.iter().skip(2).step_by(2).any(|l| {
                        !matches!(
                            l,
                            Operand::LiteralBit32(0 | 1) | Operand::LiteralBit64(0 | 1)
                        )
                    });
                    if beyond {
                        self.report(
                            inst,
                            "SPIR-V Control-Flow: an OpSwitch on a bool can only have cases 0 and 1".into(),
                        );
                    }
                } else {
                    self.expect_int_scalar(inst, 0, "Control-Flow", "Selector");
                }
                // Operands: Selector, Default, then (literal, label) pairs.
                let mut seen = std::collections::HashSet::new();
                for literal in inst.operands.iter().skip(2).step_by(2) {
                    let value = match literal {
                        Operand::LiteralBit32(v) => u64::from(*v),
                        Operand::LiteralBit64(v) => *v,
                        _ => continue,
                    };
                    if !seen.insert(value) {
                        self.report(
                            inst,
                            format!("SPIR-V Control-Flow: OpSwitch case literal {value} appears more than once (two Target literals must not be equal)"),
                        );
                        break;
                    }
                }
            }
            ReturnValue => {
                if matches!(self.ty(fn_ret), Some(Type::Void)) {
                    self.report(
                        inst,
                        "SPIR-V Control-Flow: OpReturnValue in a function returning void".into(),
                    );
                } else {
                    self.expect_type(
                        inst,
                        0,
                        fn_ret,
                        "Control-Flow",
                        "OpReturnValue Value (the function's return type)",
                    );
                }
            }
            Return if !matches!(self.ty(fn_ret), Some(Type::Void)) => {
                let rule = format!(
                    "SPIR-V Control-Flow: OpReturn in a function returning {}; use OpReturnValue",
                    self.type_name(fn_ret)
                );
                self.report(inst, rule);
            }
            _ => return false,
        }
        true
    }

    /// Phis, function calls and extended instructions. Whether the opcode is one of them.
    pub(super) fn call_instruction(
        &mut self,
        inst: &Instruction,
        rt: Word,
        label: Word,
        preds: &HashMap<Word, HashSet<Word>>,
    ) -> bool {
        use Op::*;
        let op = inst.class.opcode;
        match op {
            Phi => self.phi(inst, rt, label, preds),
            FunctionCall => self.function_call(inst, rt),
            ExtInst => self.ext_inst(inst, rt),
            _ => return false,
        }
        true
    }

    pub(super) fn phi(
        &mut self,
        inst: &Instruction,
        rt: Word,
        label: Word,
        preds: &HashMap<Word, HashSet<Word>>,
    ) {
        if !inst.operands.len().is_multiple_of(2) {
            self.report(
                inst,
                "SPIR-V Control-Flow: OpPhi operands must be (value, parent) pairs".into(),
            );
            return;
        }
        let mut parents = HashSet::new();
        for pair in (0..inst.operands.len()).step_by(2) {
            self.expect_type(
                inst,
                pair,
                rt,
                "Control-Flow",
                "OpPhi Variable (the result type)",
            );
            if let Some(Operand::IdRef(p)) = inst.operands.get(pair + 1) {
                if !parents.insert(*p) {
                    self.report(
                        inst,
                        format!("SPIR-V Control-Flow: OpPhi names parent %{p} twice"),
                    );
                }
            }
        }
        let empty = HashSet::new();
        let actual = preds.get(&label).unwrap_or(&empty);
        let mut missing: Vec<Word> = actual.difference(&parents).copied().collect();
        let mut extra: Vec<Word> = parents.difference(actual).copied().collect();
        missing.sort_unstable();
        extra.sort_unstable();
        if !missing.is_empty() {
            self.report(
                inst,
                format!(
                    "SPIR-V Control-Flow: OpPhi has no value for predecessor block(s) {}",
                    id_list(&missing)
                ),
            );
        }
        if !extra.is_empty() {
            self.report(inst, format!("SPIR-V Control-Flow: OpPhi names block(s) {} that do not branch to block %{label}", id_list(&extra)));
        }
    }

    pub(super) fn function_call(&mut self, inst: &Instruction, rt: Word) {
        let Some(Operand::IdRef(callee)) = inst.operands.first() else {
            return;
        };
        let Some(def) = self.m.function_raw(*callee).and_then(|f| f.def.as_ref()) else {
            return; // reported by the structural checks
        };
        let fn_ty = match def.operands.get(1) {
            Some(Operand::IdRef(t)) => *t,
            _ => return,
        };
        let Some(Type::Function { ret, params }) = self.ty(fn_ty) else {
            self.report(inst, format!("SPIR-V Function: the callee %{callee}'s Function Type is not an OpTypeFunction"));
            return;
        };
        let (ret, params) = (*ret, params.clone());
        if !self.same(ret, rt) {
            let rule = format!(
                "SPIR-V Function: OpFunctionCall result type {} differs from the callee's return type {}",
                self.type_name(rt),
                self.type_name(ret)
            );
            self.report(inst, rule);
        }
        let args = inst.operands.len() - 1;
        if args != params.len() {
            let rule = format!(
                "SPIR-V Function: OpFunctionCall passes {args} arguments to %{callee}, which takes {}",
                params.len()
            );
            self.report(inst, rule);
            return;
        }
        for (i, p) in params.into_iter().enumerate() {
            self.expect_type(inst, i + 1, p, "Function", &format!("argument {i}"));
        }
    }

    pub(super) fn ext_inst(&mut self, inst: &Instruction, rt: Word) {
        let Some(Operand::IdRef(set)) = inst.operands.first() else {
            return;
        };
        match self.m.ext_import(*set) {
            Some("OpenCL.std") => {}
            Some(_) => return, // debug info and non-semantic sets: ignored by codegen
            None => {
                let rule =
                    format!("SPIR-V 2.2: the Set %{set} of OpExtInst is not an OpExtInstImport");
                self.report(inst, rule);
                return;
            }
        }
        let Some(Operand::LiteralExtInstInteger(number)) = inst.operands.get(1) else {
            return;
        };
        let Some(op) = Cl::from_u32(*number) else {
            self.report(
                inst,
                format!("OpenCL.std: instruction number {number} does not exist"),
            );
            return;
        };
        if op == Cl::printf {
            self.printf(inst, rt);
            return;
        }
        let args = inst.operands.len().saturating_sub(2);
        let Some((count, rule)) = opencl_std_signature(op) else {
            return;
        };
        if args != count {
            self.report(
                inst,
                format!("OpenCL.std: {op:?} takes {count} operands, found {args}"),
            );
            return;
        }
        match rule {
            ArgRule::Same(kind) => {
                if !self.shape(rt).is_some_and(|(k, _)| kind(&k)) {
                    let rule = format!(
                        "OpenCL.std: result type {} is not allowed for {op:?}",
                        self.type_name(rt)
                    );
                    self.report(inst, rule);
                    return;
                }
                let elem = match self.ty(rt) {
                    Some(Type::Vector { elem, .. }) => Some(*elem),
                    _ => None,
                };
                for i in 0..count {
                    let Some(t) = self.operand_type(inst, 2 + i) else {
                        continue;
                    };
                    // A scalar of the component type is broadcast (codegen splats it).
                    let ok = self.same(t, rt) || (i > 0 && elem.is_some_and(|e| self.same(t, e)));
                    if !ok {
                        let rule = format!(
                            "OpenCL.std: operand {i} of {op:?} has type {}, expected {}",
                            self.type_name(t),
                            self.type_name(rt)
                        );
                        self.report(inst, rule);
                    }
                }
            }
            ArgRule::LastInt => {
                // ldexp(x, n) and select(a, b, c): x (a, b) of the result type, the last an
                // integer with the result's component count.
                for i in 0..count - 1 {
                    self.expect_type(inst, 2 + i, rt, "OpenCL.std", &format!("operand {i}"));
                }
                let Some(t) = self.operand_type(inst, 2 + count - 1) else {
                    return;
                };
                let ok = match (self.shape(t), self.shape(rt)) {
                    (Some((Kind::Int(_), n)), Some((_, r))) => n == r || n == 1,
                    _ => false,
                };
                if !ok {
                    let rule = format!(
                        "OpenCL.std: last operand of {op:?} must be an integer with the result's component count, found {}",
                        self.type_name(t)
                    );
                    self.report(inst, rule);
                }
            }
            ArgRule::VLoad => {
                if !matches!(self.ty(rt), Some(Type::Vector { .. })) {
                    self.report(inst, "OpenCL.std: vloadn result must be a vector".into());
                }
                self.expect_int_scalar(inst, 2, "OpenCL.std", "vloadn offset");
                self.expect_pointer(inst, 3, "OpenCL.std", "vloadn p");
            }
            ArgRule::OutPointer { same } => {
                if !self.shape(rt).is_some_and(|(k, _)| k.is_float()) {
                    let rule = format!(
                        "OpenCL.std: {op:?} returns a float scalar or vector, found {}",
                        self.type_name(rt)
                    );
                    self.report(inst, rule);
                    return;
                }
                for i in 0..count - 1 {
                    self.expect_type(inst, 2 + i, rt, "OpenCL.std", &format!("operand {i}"));
                }
                self.expect_writable(inst, 2 + count - 1, &format!("the out-parameter of {op:?}"));
                let Some(pointee) =
                    self.expect_pointer(inst, 2 + count - 1, "OpenCL.std", "out-parameter")
                else {
                    return;
                };
                let ok = if same {
                    self.same(pointee, rt)
                } else {
                    matches!((self.shape(pointee), self.shape(rt)), (Some((Kind::Int(32), n)), Some((_, r))) if n == r)
                };
                if !ok {
                    let want = if same {
                        self.type_name(rt)
                    } else {
                        "32-bit integers of the result's component count".to_owned()
                    };
                    let rule = format!(
                        "OpenCL.std: the out-parameter of {op:?} must point to {want}, found {}",
                        self.type_name(pointee)
                    );
                    self.report(inst, rule);
                }
            }
            ArgRule::IntOfFloat | ArgRule::FloatOfInt => {
                let Some(t) = self.operand_type(inst, 2) else {
                    return;
                };
                let (operand_float, result_float) = (op != Cl::nan, op == Cl::nan);
                let ok = match (self.shape(t), self.shape(rt)) {
                    (Some((a, n)), Some((r, m))) => {
                        n == m
                            && a.is_float() == operand_float
                            && r.is_float() == result_float
                            && (r.is_float() || matches!(r, Kind::Int(32)))
                    }
                    _ => false,
                };
                if !ok {
                    let rule = format!(
                        "OpenCL.std: {op:?} of {} cannot give {}",
                        self.type_name(t),
                        self.type_name(rt)
                    );
                    self.report(inst, rule);
                }
            }
            ArgRule::VStore => {
                if let Some(t) = self.operand_type(inst, 2) {
                    if !matches!(self.ty(t), Some(Type::Vector { .. })) {
                        self.report(inst, "OpenCL.std: vstoren data must be a vector".into());
                    }
                }
                self.expect_int_scalar(inst, 3, "OpenCL.std", "vstoren offset");
                self.expect_pointer(inst, 4, "OpenCL.std", "vstoren p");
                self.expect_writable(inst, 4, "vstoren p");
            }
            ArgRule::HalfLoad => {
                let vector = op != Cl::vload_half;
                let ok = match self.shape(rt) {
                    Some((Kind::Float(32), n)) => (n > 1) == vector,
                    _ => false,
                };
                if !ok {
                    let want = if vector { "a float vector" } else { "float" };
                    let rule = format!(
                        "OpenCL.std: {op:?} result must be {want}, found {}",
                        self.type_name(rt)
                    );
                    self.report(inst, rule);
                }
                self.expect_int_scalar(inst, 2, "OpenCL.std", &format!("{op:?} offset"));
                self.expect_half_pointer(inst, 3, op);
            }
            ArgRule::HalfStore => {
                let vector = !matches!(op, Cl::vstore_half | Cl::vstore_half_r);
                if let Some(t) = self.operand_type(inst, 2) {
                    let ok = match self.shape(t) {
                        Some((Kind::Float(32 | 64), n)) => (n > 1) == vector,
                        _ => false,
                    };
                    if !ok {
                        let want = if vector {
                            "a float or double vector"
                        } else {
                            "float or double"
                        };
                        let rule = format!(
                            "OpenCL.std: {op:?} data must be {want}, found {}",
                            self.type_name(t)
                        );
                        self.report(inst, rule);
                    }
                }
                self.expect_int_scalar(inst, 3, "OpenCL.std", &format!("{op:?} offset"));
                self.expect_half_pointer(inst, 4, op);
                self.expect_writable(inst, 4, &format!("{op:?} p"));
            }
        }
    }
}

pub(super) enum ArgRule {
    /// Every operand of the result type (later ones may be a scalar of its component type).
    Same(fn(&Kind) -> bool),
    /// Operands of the result type, then an integer.
    LastInt,
    VLoad,
    VStore,
    /// A float result, float operands of the result type, then a pointer whose pointee is the
    /// result type (`same`) or an integer with its component count (frexp, lgamma_r, remquo).
    OutPointer {
        same: bool,
    },
    /// ilogb: an integer result with the component count of its float operand.
    IntOfFloat,
    /// nan: a float result from an integer operand with its component count.
    FloatOfInt,
    /// vload_half, vload_halfn, vloada_halfn: float or floatn from a pointer to half.
    HalfLoad,
    /// vstore_half*, vstorea_half*: float or double data (scalar for vstore_half[_r], vectors
    /// for the n forms) to a pointer to half.
    HalfStore,
}

/// Operand count and rule of the OpenCL.std instructions codegen translates (inline or through
/// ferrocl-mathlib); None for those checked only by codegen.
pub(super) fn opencl_std_signature(op: Cl) -> Option<(usize, ArgRule)> {
    use ArgRule::*;
    let float = Kind::is_float as fn(&Kind) -> bool;
    let int = Kind::is_int as fn(&Kind) -> bool;
    Some(match op {
        Cl::fabs
        | Cl::floor
        | Cl::ceil
        | Cl::trunc
        | Cl::rint
        | Cl::round
        | Cl::sqrt
        | Cl::native_sqrt
        | Cl::half_sqrt
        | Cl::rsqrt
        | Cl::native_rsqrt
        | Cl::half_rsqrt
        | Cl::native_recip
        | Cl::half_recip
        | Cl::degrees
        | Cl::radians
        | Cl::sign
        | Cl::acos
        | Cl::acosh
        | Cl::acospi
        | Cl::asin
        | Cl::asinh
        | Cl::asinpi
        | Cl::atan
        | Cl::atanh
        | Cl::atanpi
        | Cl::cbrt
        | Cl::cos
        | Cl::cosh
        | Cl::cospi
        | Cl::erf
        | Cl::erfc
        | Cl::exp
        | Cl::exp2
        | Cl::exp10
        | Cl::expm1
        | Cl::lgamma
        | Cl::log
        | Cl::log2
        | Cl::log10
        | Cl::log1p
        | Cl::logb
        | Cl::sin
        | Cl::sinh
        | Cl::sinpi
        | Cl::tan
        | Cl::tanh
        | Cl::tanpi
        | Cl::tgamma
        | Cl::native_cos
        | Cl::native_sin
        | Cl::native_tan
        | Cl::native_exp
        | Cl::native_exp2
        | Cl::native_exp10
        | Cl::native_log
        | Cl::native_log2
        | Cl::native_log10
        | Cl::half_cos
        | Cl::half_sin
        | Cl::half_tan
        | Cl::half_exp
        | Cl::half_exp2
        | Cl::half_exp10
        | Cl::half_log
        | Cl::half_log2
        | Cl::half_log10 => (1, Same(float)),
        Cl::native_divide
        | Cl::half_divide
        | Cl::fmin
        | Cl::fmax
        | Cl::fmin_common
        | Cl::fmax_common
        | Cl::copysign
        | Cl::fdim
        | Cl::fmod
        | Cl::step
        | Cl::atan2
        | Cl::atan2pi
        | Cl::pow
        | Cl::powr
        | Cl::hypot
        | Cl::nextafter
        | Cl::maxmag
        | Cl::minmag
        | Cl::remainder
        | Cl::native_powr
        | Cl::half_powr => (2, Same(float)),
        Cl::fma | Cl::mad | Cl::fclamp | Cl::mix | Cl::smoothstep => (3, Same(float)),
        Cl::s_abs | Cl::u_abs | Cl::clz | Cl::ctz | Cl::popcount => (1, Same(int)),
        Cl::s_max
        | Cl::u_max
        | Cl::s_min
        | Cl::u_min
        | Cl::rotate
        | Cl::s_mul_hi
        | Cl::u_mul_hi
        | Cl::s_mul24
        | Cl::u_mul24
        | Cl::s_add_sat
        | Cl::u_add_sat
        | Cl::s_sub_sat
        | Cl::u_sub_sat
        | Cl::s_hadd
        | Cl::u_hadd
        | Cl::s_rhadd
        | Cl::u_rhadd
        | Cl::s_abs_diff
        | Cl::u_abs_diff => (2, Same(int)),
        Cl::s_clamp | Cl::u_clamp | Cl::s_mad_hi | Cl::u_mad_hi | Cl::s_mad24 | Cl::u_mad24 => {
            (3, Same(int))
        }
        Cl::bitselect => (3, Same(Kind::is_number)),
        Cl::select => (3, LastInt),
        Cl::ldexp => (2, LastInt),
        Cl::vloadn => (3, VLoad),
        Cl::vstoren => (3, VStore),
        Cl::pown | Cl::rootn => (2, LastInt),
        Cl::modf | Cl::fract | Cl::sincos => (2, OutPointer { same: true }),
        Cl::frexp | Cl::lgamma_r => (2, OutPointer { same: false }),
        Cl::remquo => (3, OutPointer { same: false }),
        Cl::ilogb => (1, IntOfFloat),
        Cl::nan => (1, FloatOfInt),
        Cl::vload_half => (2, HalfLoad),
        Cl::vload_halfn | Cl::vloada_halfn => (3, HalfLoad),
        Cl::vstore_half | Cl::vstore_halfn | Cl::vstorea_halfn => (3, HalfStore),
        Cl::vstore_half_r | Cl::vstore_halfn_r | Cl::vstorea_halfn_r => (4, HalfStore),
        _ => return None,
    })
}
