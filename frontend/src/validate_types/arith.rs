//! Arithmetic, comparison and conversion operands: kinds, widths and vector sizes that match.

use super::*;
use crate::instruction as layout;

impl<'m> Checker<'m> {
    /// Arithmetic and bit instructions. Whether the opcode is one of them.
    pub(super) fn arithmetic_instruction(&mut self, inst: &Instruction, rt: Word) -> bool {
        use Op::*;
        let op = inst.class.opcode;
        match op {
            IAdd | ISub | IMul | UDiv | SDiv | UMod | SRem | SMod | BitwiseOr | BitwiseXor
            | BitwiseAnd => self.same_as_result(inst, rt, 2, Kind::is_int, "Arithmetic"),
            SNegate | Not | BitReverse => {
                self.same_as_result(inst, rt, 1, Kind::is_int, "Arithmetic")
            }
            FAdd | FSub | FMul | FDiv | FRem | FMod => {
                self.same_as_result(inst, rt, 2, Kind::is_float, "Arithmetic")
            }
            FNegate => self.same_as_result(inst, rt, 1, Kind::is_float, "Arithmetic"),
            ShiftRightLogical | ShiftRightArithmetic | ShiftLeftLogical => {
                self.same_as_result(inst, rt, 1, Kind::is_int, "Bit");
                self.operand_like(inst, 1, rt, Kind::is_int, "Bit", "Shift");
            }
            BitCount => self.operand_like(inst, 0, rt, Kind::is_int, "Bit", "Base"),
            VectorTimesScalar => {
                self.same_as_result(inst, rt, 1, Kind::is_float, "Arithmetic");
                if let Some(Type::Vector { elem, .. }) = self.ty(rt) {
                    self.expect_type(inst, layout::Binary::B, *elem, "Arithmetic", "Scalar");
                }
            }
            Dot => {
                let a = self.operand_type(inst, layout::Binary::A);
                self.expect_kind(inst, rt, Kind::is_float, 1, "Arithmetic");
                if let Some(a) = a {
                    match self.ty(a) {
                        Some(Type::Vector { elem, .. }) if self.same(*elem, rt) => {
                            self.expect_type(inst, layout::Binary::B, a, "Arithmetic", "Vector 2")
                        }
                        _ => self.report(
                            inst,
                            format!(
                                "SPIR-V Arithmetic: OpDot operands must be vectors of the result type {}, found {}",
                                self.type_name(rt),
                                self.type_name(a)
                            ),
                        ),
                    }
                }
            }
            IAddCarry | ISubBorrow | UMulExtended | SMulExtended => match self.ty(rt) {
                Some(Type::Struct { members, .. })
                    if members.len() == 2 && self.same(members[0], members[1]) =>
                {
                    let member = members[0];
                    if self.shape(member).is_some_and(|(k, _)| k.is_int()) {
                        let (a, b) = (layout::Binary::A, layout::Binary::B);
                        self.expect_type(inst, a, member, "Arithmetic", "Operand 1");
                        self.expect_type(inst, b, member, "Arithmetic", "Operand 2");
                    } else {
                        self.report(inst, "SPIR-V Arithmetic: result members must be integer scalars or vectors".into());
                    }
                }
                _ => self.report(
                    inst,
                    "SPIR-V Arithmetic: result type must be a struct of two members of the same integer type".into(),
                ),
            },
            _ => return false,
        }
        true
    }

    /// Comparisons, logical operations, selects and pointer comparisons. Whether the opcode is one of them.
    pub(super) fn relational_instruction(&mut self, inst: &Instruction, rt: Word) -> bool {
        use Op::*;
        let op = inst.class.opcode;
        match op {
            IEqual | INotEqual | UGreaterThan | SGreaterThan | UGreaterThanEqual
            | SGreaterThanEqual | ULessThan | SLessThan | ULessThanEqual | SLessThanEqual => {
                self.compare(inst, rt, 2, Kind::is_int)
            }
            FOrdEqual
            | FUnordEqual
            | FOrdNotEqual
            | FUnordNotEqual
            | FOrdLessThan
            | FUnordLessThan
            | FOrdGreaterThan
            | FUnordGreaterThan
            | FOrdLessThanEqual
            | FUnordLessThanEqual
            | FOrdGreaterThanEqual
            | FUnordGreaterThanEqual
            | LessOrGreater
            | Ordered
            | Unordered => self.compare(inst, rt, 2, Kind::is_float),
            IsNan | IsInf | IsFinite | IsNormal | SignBitSet => {
                self.compare(inst, rt, 1, Kind::is_float)
            }
            LogicalEqual | LogicalNotEqual | LogicalOr | LogicalAnd => {
                self.same_as_result(inst, rt, 2, Kind::is_bool, "Relational and Logical")
            }
            LogicalNot => self.same_as_result(inst, rt, 1, Kind::is_bool, "Relational and Logical"),
            Any | All => {
                self.expect_kind(inst, rt, Kind::is_bool, 1, "Relational and Logical");
                if let Some(v) = self.operand_type(inst, layout::Unary::VALUE) {
                    if !matches!(self.shape(v), Some((Kind::Bool, n)) if n > 1) {
                        let rule = format!(
                            "SPIR-V Relational and Logical: Vector must be a vector of bool, found {}",
                            self.type_name(v)
                        );
                        self.report(inst, rule);
                    }
                }
            }
            Select => {
                let (condition, accept, reject) = (
                    layout::Select::CONDITION,
                    layout::Select::ACCEPT,
                    layout::Select::REJECT,
                );
                self.expect_type(inst, accept, rt, "Relational and Logical", "Object 1");
                self.expect_type(inst, reject, rt, "Relational and Logical", "Object 2");
                if let Some(c) = self.operand_type(inst, condition) {
                    let ok = match (self.shape(c), self.shape(rt)) {
                        (Some((Kind::Bool, 1)), _) => true,
                        (Some((Kind::Bool, n)), Some((_, r))) => n == r,
                        _ => false,
                    };
                    if !ok {
                        let rule = format!(
                            "SPIR-V Relational and Logical: Condition must be bool or a vector of bool with the result's component count, found {}",
                            self.type_name(c)
                        );
                        self.report(inst, rule);
                    }
                }
            }
            PtrEqual | PtrNotEqual | PtrDiff => {
                if op == PtrDiff {
                    self.expect_kind(inst, rt, Kind::is_int, 1, "Memory");
                } else {
                    self.expect_kind(inst, rt, Kind::is_bool, 1, "Memory");
                }
                if let Some(a) = self.operand_type(inst, layout::Binary::A) {
                    if !matches!(self.ty(a), Some(Type::Pointer { .. })) {
                        let rule = format!(
                            "SPIR-V Memory: Operand 1 must be a pointer, found {}",
                            self.type_name(a)
                        );
                        self.report(inst, rule);
                    }
                    self.expect_type(inst, layout::Binary::B, a, "Memory", "Operand 2");
                }
            }
            _ => return false,
        }
        true
    }

    /// Conversions and bitcasts. Whether the opcode is one of them.
    pub(super) fn conversion_instruction(&mut self, inst: &Instruction, rt: Word) -> bool {
        use Op::*;
        let op = inst.class.opcode;
        match op {
            ConvertFToU | ConvertFToS => self.convert(inst, rt, Kind::is_float, Kind::is_int),
            ConvertSToF | ConvertUToF => self.convert(inst, rt, Kind::is_int, Kind::is_float),
            UConvert | SConvert | SatConvertSToU | SatConvertUToS => {
                self.convert(inst, rt, Kind::is_int, Kind::is_int)
            }
            FConvert => self.convert(inst, rt, Kind::is_float, Kind::is_float),
            QuantizeToF16 => self.same_as_result(inst, rt, 1, Kind::is_float, "Conversion"),
            ConvertPtrToU => {
                self.expect_kind(inst, rt, Kind::is_int, 1, "Conversion");
                self.expect_pointer(inst, layout::Unary::VALUE, "Conversion", "Pointer");
            }
            ConvertUToPtr => {
                self.expect_pointer_type(inst, rt, "Conversion");
                if let Some(t) = self.operand_type(inst, layout::Unary::VALUE) {
                    if !matches!(self.shape(t), Some((Kind::Int(_), 1))) {
                        let rule = format!(
                            "SPIR-V Conversion: Integer Value must be an integer scalar, found {}",
                            self.type_name(t)
                        );
                        self.report(inst, rule);
                    }
                }
            }
            PtrCastToGeneric | GenericCastToPtr | GenericCastToPtrExplicit => {
                self.expect_pointer_type(inst, rt, "Conversion");
                self.expect_pointer(inst, layout::Unary::VALUE, "Conversion", "Pointer");
            }
            GenericPtrMemSemantics => {
                self.expect_pointer(inst, layout::Unary::VALUE, "Memory", "Pointer");
                if !matches!(self.ty(rt), Some(Type::Int { width: 32 })) {
                    let rule = format!(
                        "SPIR-V Memory: OpGenericPtrMemSemantics must return a 32-bit integer, found {}",
                        self.type_name(rt)
                    );
                    self.report(inst, rule);
                }
            }
            Bitcast => self.bitcast(inst, rt),
            ConvertFToBF16INTEL | ConvertBF16ToFINTEL => self.bfloat16_conversion(inst, rt),
            _ => return false,
        }
        true
    }

    /// SPV_INTEL_bfloat16_conversion: the frontend rewrites every conversion of the allowed
    /// forms in a module declaring the capability into core instructions before parsing
    /// (bfloat16.rs), so one that reaches the validator has another form (a module without the
    /// capability is refused by the structural rules): it is reported.
    fn bfloat16_conversion(&mut self, inst: &Instruction, rt: Word) {
        let op = inst.class.opcode;
        let (from, to) = if op == Op::ConvertFToBF16INTEL {
            ("f32", "i16")
        } else {
            ("i16", "f32")
        };
        let operand = match self.operand_type(inst, layout::Unary::VALUE) {
            Some(t) => self.type_name(t),
            None => return,
        };
        let rule = format!(
            "cl_intel_bfloat16_conversions: Op{op:?} converts {from} or a vector of 2, 3, 4, 8 or 16 {from} to {to} of as many components, found {operand} to {}",
            self.type_name(rt)
        );
        self.report(inst, rule);
    }

    pub(super) fn expect_kind(
        &mut self,
        inst: &Instruction,
        ty: Word,
        kind: fn(&Kind) -> bool,
        count: u32,
        section: &str,
    ) {
        if !matches!(self.shape(ty), Some((k, 1)) if kind(&k)) || count != 1 {
            let rule = format!(
                "SPIR-V {section}: result type {} is not allowed for Op{:?}",
                self.type_name(ty),
                inst.class.opcode
            );
            self.report(inst, rule);
        }
    }

    /// Result and the first `n` operands: all the same scalar/vector type of the given kind.
    pub(super) fn same_as_result(
        &mut self,
        inst: &Instruction,
        rt: Word,
        n: usize,
        kind: fn(&Kind) -> bool,
        section: &str,
    ) {
        if !self.shape(rt).is_some_and(|(k, _)| kind(&k)) {
            let rule = format!(
                "SPIR-V {section}: result type {} is not allowed for Op{:?}",
                self.type_name(rt),
                inst.class.opcode
            );
            self.report(inst, rule);
            return;
        }
        for i in 0..n {
            self.expect_type(inst, i, rt, section, &format!("Operand {}", i + 1));
        }
    }

    /// Operand `i`: the given kind, with the result's component count (width may differ).
    pub(super) fn operand_like(
        &mut self,
        inst: &Instruction,
        i: usize,
        rt: Word,
        kind: fn(&Kind) -> bool,
        section: &str,
        what: &str,
    ) {
        let Some(t) = self.operand_type(inst, i) else {
            return;
        };
        let ok = match (self.shape(t), self.shape(rt)) {
            (Some((k, n)), Some((_, r))) => kind(&k) && n == r,
            _ => false,
        };
        if !ok {
            let rule = format!(
                "SPIR-V {section}: {what} of Op{:?} has type {}, which does not match the result type {}",
                inst.class.opcode,
                self.type_name(t),
                self.type_name(rt)
            );
            self.report(inst, rule);
        }
    }

    /// Comparisons: result bool (or vector of bool); `n` operands of the same type, of the given
    /// kind, with the result's component count.
    pub(super) fn compare(
        &mut self,
        inst: &Instruction,
        rt: Word,
        n: usize,
        kind: fn(&Kind) -> bool,
    ) {
        let Some((Kind::Bool, count)) = self.shape(rt) else {
            let rule = format!(
                "SPIR-V Relational and Logical: result type of Op{:?} must be bool or a vector of bool, found {}",
                inst.class.opcode,
                self.type_name(rt)
            );
            self.report(inst, rule);
            return;
        };
        let Some(a) = self.operand_type(inst, 0) else {
            return;
        };
        match self.shape(a) {
            Some((k, c)) if kind(&k) && c == count => {}
            _ => {
                let rule = format!(
                    "SPIR-V Relational and Logical: operand type {} is not allowed for Op{:?} with result {}",
                    self.type_name(a),
                    inst.class.opcode,
                    self.type_name(rt)
                );
                self.report(inst, rule);
                return;
            }
        }
        for i in 1..n {
            self.expect_type(
                inst,
                i,
                a,
                "Relational and Logical",
                &format!("Operand {}", i + 1),
            );
        }
    }

    pub(super) fn convert(
        &mut self,
        inst: &Instruction,
        rt: Word,
        from: fn(&Kind) -> bool,
        to: fn(&Kind) -> bool,
    ) {
        let Some(t) = self.operand_type(inst, 0) else {
            return;
        };
        let ok = match (self.shape(t), self.shape(rt)) {
            (Some((a, n)), Some((b, m))) => from(&a) && to(&b) && n == m,
            _ => false,
        };
        if !ok {
            let rule = format!(
                "SPIR-V Conversion: Op{:?} cannot convert {} to {}",
                inst.class.opcode,
                self.type_name(t),
                self.type_name(rt)
            );
            self.report(inst, rule);
        }
    }

    /// Bit width of a scalar/vector (no padding) or 64 for a pointer.
    pub(super) fn bits(&self, ty: Word) -> Option<u64> {
        if let Some(Type::Pointer { .. }) = self.ty(ty) {
            return Some(64);
        }
        let (k, n) = self.shape(ty)?;
        let w = match k {
            Kind::Int(w) | Kind::Float(w) => w,
            Kind::Bool => return None,
        };
        Some(u64::from(w) * u64::from(n))
    }

    pub(super) fn bitcast(&mut self, inst: &Instruction, rt: Word) {
        let Some(t) = self.operand_type(inst, 0) else {
            return;
        };
        match (self.bits(t), self.bits(rt)) {
            (Some(a), Some(b)) if a == b => {}
            _ => {
                let rule = format!(
                    "SPIR-V Conversion: OpBitcast from {} to {} (both must be numeric scalars, vectors or pointers of the same bit width)",
                    self.type_name(t),
                    self.type_name(rt)
                );
                self.report(inst, rule);
            }
        }
    }
}
