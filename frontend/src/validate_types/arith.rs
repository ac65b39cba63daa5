//! Arithmetic, comparison and conversion operands: kinds, widths and vector sizes that match.

use super::*;

impl<'m> Checker<'m> {
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
