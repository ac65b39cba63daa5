//! Pointers, composites and access chains: storage classes, pointees, indices, shuffles.

use super::*;
use crate::instruction as layout;

impl<'m> Checker<'m> {
    /// Loads, stores, variables, access chains and memory copies. Whether the opcode is one of them.
    pub(super) fn memory_instruction(&mut self, inst: &Instruction, rt: Word) -> bool {
        use Op::*;
        let op = inst.class.opcode;
        match op {
            Load => {
                if let Some(pointee) =
                    self.expect_pointer(inst, layout::Load::POINTER, "Memory", "Pointer")
                {
                    if !self.same(pointee, rt) {
                        let rule = format!(
                            "SPIR-V Memory: OpLoad result type {} differs from the pointee type {}",
                            self.type_name(rt),
                            self.type_name(pointee)
                        );
                        self.report(inst, rule);
                    }
                }
            }
            Store => {
                self.expect_writable(inst, layout::Store::POINTER, "OpStore Pointer");
                if let Some(pointee) =
                    self.expect_pointer(inst, layout::Store::POINTER, "Memory", "Pointer")
                {
                    self.expect_type(
                        inst,
                        layout::Store::OBJECT,
                        pointee,
                        "Memory",
                        "OpStore Object (the pointee type)",
                    );
                }
            }
            Variable => {
                if let Some(Type::Pointer { storage, pointee }) = self.ty(rt) {
                    if self.m.size_of(*pointee).is_none() {
                        let rule = format!(
                            "SPIR-V Memory: a variable must have a sized type, found {}",
                            self.type_name(*pointee)
                        );
                        self.report(inst, rule);
                    }
                    if *storage != StorageClass::Function {
                        self.report(inst, format!("SPIR-V Memory: a variable inside a function must have Function storage, found {storage:?}"));
                    }
                    self.variable_storage_matches_type(inst, *storage);
                    if inst.operands.len() > layout::Variable::INITIALIZER {
                        let i = layout::Variable::INITIALIZER;
                        self.expect_type(inst, i, *pointee, "Memory", "Initializer");
                    }
                } else {
                    self.expect_pointer_type(inst, rt, "Memory");
                }
            }
            AccessChain | InBoundsAccessChain | PtrAccessChain | InBoundsPtrAccessChain => {
                self.access_chain(inst, rt)
            }
            CopyMemory | CopyMemorySized => {
                self.expect_writable(
                    inst,
                    layout::CopyMemory::TARGET,
                    &format!("Op{op:?} Target"),
                );
                let a = self.expect_pointer(inst, layout::CopyMemory::TARGET, "Memory", "Target");
                let b = self.expect_pointer(inst, layout::CopyMemory::SOURCE, "Memory", "Source");
                if let (Some(a), Some(b), CopyMemory) = (a, b, op) {
                    if !self.same(a, b) {
                        let rule = format!(
                            "SPIR-V Memory: OpCopyMemory Target and Source point to different types ({} and {})",
                            self.type_name(a),
                            self.type_name(b)
                        );
                        self.report(inst, rule);
                    }
                }
                if op == CopyMemorySized {
                    if let Some(t) = self.operand_type(inst, layout::CopyMemory::SIZE) {
                        if !matches!(self.shape(t), Some((Kind::Int(_), 1))) {
                            self.report(
                                inst,
                                "SPIR-V Memory: Size must be an integer scalar".into(),
                            );
                        }
                    }
                }
            }
            _ => return false,
        }
        true
    }

    /// Composite and vector construction, extraction and insertion. Whether the opcode is one of them.
    pub(super) fn composite_instruction(&mut self, inst: &Instruction, rt: Word) -> bool {
        use Op::*;
        let op = inst.class.opcode;
        match op {
            CompositeConstruct => self.composite_construct(inst, rt),
            CompositeExtract | CompositeInsert
                if inst.operands.len()
                    <= if op == CompositeExtract {
                        layout::CompositeExtract::FIRST_INDEX
                    } else {
                        layout::CompositeInsert::FIRST_INDEX
                    } =>
            {
                let rule = format!("SPIR-V Composite: Op{op:?} needs at least one index");
                self.report(inst, rule);
            }
            CompositeExtract => {
                if let Some(ct) = self.operand_type(inst, layout::CompositeExtract::COMPOSITE) {
                    let first = layout::CompositeExtract::FIRST_INDEX;
                    if let Some(t) = self.walk_literals(inst, ct, first) {
                        if !self.same(t, rt) {
                            let rule = format!(
                                "SPIR-V Composite: result type {} differs from the extracted member type {}",
                                self.type_name(rt),
                                self.type_name(t)
                            );
                            self.report(inst, rule);
                        }
                    }
                }
            }
            CompositeInsert => {
                use layout::CompositeInsert as I;
                self.expect_type(inst, I::COMPOSITE, rt, "Composite", "Composite");
                if let Some(t) = self.walk_literals(inst, rt, I::FIRST_INDEX) {
                    self.expect_type(inst, I::OBJECT, t, "Composite", "Object");
                }
            }
            VectorShuffle => self.vector_shuffle(inst, rt),
            VectorExtractDynamic => {
                use layout::VectorExtractDynamic as E;
                if let Some(v) = self.operand_type(inst, E::VECTOR) {
                    match self.ty(v) {
                        Some(Type::Vector { elem, .. }) if self.same(*elem, rt) => {}
                        _ => {
                            let rule = format!(
                                "SPIR-V Composite: Vector must be a vector of the result type {}, found {}",
                                self.type_name(rt),
                                self.type_name(v)
                            );
                            self.report(inst, rule);
                        }
                    }
                }
                self.expect_int_scalar(inst, E::INDEX, "Composite", "Index");
            }
            VectorInsertDynamic => {
                use layout::VectorInsertDynamic as I;
                self.expect_type(inst, I::VECTOR, rt, "Composite", "Vector");
                if let Some(Type::Vector { elem, .. }) = self.ty(rt) {
                    self.expect_type(inst, I::COMPONENT, *elem, "Composite", "Component");
                } else {
                    self.report(
                        inst,
                        "SPIR-V Composite: result type must be a vector".into(),
                    );
                }
                self.expect_int_scalar(inst, I::INDEX, "Composite", "Index");
            }
            CopyObject => {
                let value = layout::Unary::VALUE;
                self.expect_type(inst, value, rt, "Composite", "Operand")
            }
            _ => return false,
        }
        true
    }

    pub(super) fn expect_pointer_type(&mut self, inst: &Instruction, ty: Word, section: &str) {
        if !matches!(self.ty(ty), Some(Type::Pointer { .. })) {
            let rule = format!(
                "SPIR-V {section}: result type of Op{:?} must be a pointer, found {}",
                inst.class.opcode,
                self.type_name(ty)
            );
            self.report(inst, rule);
        }
    }

    /// An `OpVariable`'s Storage Class operand must be its result type's storage class
    /// (SPIR-V 3.32.8 OpVariable): codegen places the variable by the operand, and every
    /// access follows the type, so a mismatch would let a store land in read-only data.
    pub(super) fn variable_storage_matches_type(
        &mut self,
        inst: &Instruction,
        typed: StorageClass,
    ) {
        if let Some(Operand::StorageClass(declared)) = inst.operands.first() {
            if *declared != typed {
                let rule = format!(
                    "SPIR-V Memory: OpVariable's Storage Class operand ({declared:?}) must be the \
                     same as the Storage Class of its result type ({typed:?})"
                );
                self.report(inst, rule);
            }
        }
    }

    /// Operand `i`, a pointer the instruction writes through, must not point to read-only
    /// memory: `UniformConstant` (OpenCL's `__constant`, laid out in read-only pages) or
    /// `Input` (the built-in variables).
    pub(super) fn expect_writable(&mut self, inst: &Instruction, i: usize, what: &str) {
        let Some(t) = self.operand_type(inst, i) else {
            return;
        };
        if let Some(Type::Pointer { storage, .. }) = self.ty(t) {
            if matches!(storage, StorageClass::UniformConstant | StorageClass::Input) {
                let rule = format!(
                    "SPIR-V Memory: {what} points to {storage:?} storage, which is read-only"
                );
                self.report(inst, rule);
            }
        }
    }

    /// Operand `i` must be a pointer; returns its pointee type.
    pub(super) fn expect_pointer(
        &mut self,
        inst: &Instruction,
        i: usize,
        section: &str,
        what: &str,
    ) -> Option<Word> {
        let t = self.operand_type(inst, i)?;
        match self.ty(t) {
            Some(Type::Pointer { pointee, .. }) => Some(*pointee),
            _ => {
                let rule = format!(
                    "SPIR-V {section}: {what} must be a pointer, found {}",
                    self.type_name(t)
                );
                self.report(inst, rule);
                None
            }
        }
    }

    /// Operand `i` of half load/store `op` must point to half.
    pub(super) fn expect_half_pointer(&mut self, inst: &Instruction, i: usize, op: Cl) {
        let Some(pointee) = self.expect_pointer(inst, i, "OpenCL.std", &format!("{op:?} p")) else {
            return;
        };
        if !matches!(self.ty(pointee), Some(Type::Float { width: 16 })) {
            let rule = format!(
                "OpenCL.std: {op:?} p must point to half, found a pointer to {}",
                self.type_name(pointee)
            );
            self.report(inst, rule);
        }
    }

    pub(super) fn expect_int_scalar(
        &mut self,
        inst: &Instruction,
        i: usize,
        section: &str,
        what: &str,
    ) {
        if let Some(t) = self.operand_type(inst, i) {
            if !matches!(self.shape(t), Some((Kind::Int(_), 1))) {
                let rule = format!(
                    "SPIR-V {section}: {what} must be an integer scalar, found {}",
                    self.type_name(t)
                );
                self.report(inst, rule);
            }
        }
    }

    /// Value of an integer `OpConstant`, if `id` is one.
    pub(super) fn constant_value(&self, id: Word) -> Option<u64> {
        let c = self.m.global_raw(id)?;
        if c.class.opcode != Op::Constant {
            return None;
        }
        match c.operands.first()? {
            Operand::LiteralBit32(v) => Some(u64::from(*v)),
            Operand::LiteralBit64(v) => Some(*v),
            _ => None,
        }
    }

    /// One step into a composite type: member `index` (None when it is a dynamic index).
    pub(super) fn step(
        &mut self,
        inst: &Instruction,
        ty: Word,
        index: Option<u64>,
    ) -> Option<Word> {
        let (elem, len) = match self.ty(ty) {
            Some(Type::Struct { members, .. }) => {
                let Some(i) = index else {
                    self.report(
                        inst,
                        "SPIR-V Memory: an index into a struct must be an OpConstant".into(),
                    );
                    return None;
                };
                let member = usize::try_from(i)
                    .ok()
                    .and_then(|i| members.get(i).copied());
                if member.is_none() {
                    let rule = format!(
                        "SPIR-V Composite: index {i} is out of range for a struct of {} members",
                        members.len()
                    );
                    self.report(inst, rule);
                }
                return member;
            }
            Some(Type::Vector { elem, count }) => (*elem, Some(u64::from(*count))),
            Some(Type::Array { elem, len }) => (*elem, Some(*len)),
            Some(Type::RuntimeArray { elem }) => (*elem, None),
            _ => {
                let rule = format!("SPIR-V Composite: cannot index into {}", self.type_name(ty));
                self.report(inst, rule);
                return None;
            }
        };
        // A constant out-of-range index into an array is undefined behaviour at run time, not
        // a validation error; for a literal (OpCompositeExtract/Insert) it is invalid.
        if let (Some(i), Some(len), true) = (
            index,
            len,
            matches!(
                inst.class.opcode,
                Op::CompositeExtract | Op::CompositeInsert
            ),
        ) {
            if i >= len {
                let rule =
                    format!("SPIR-V Composite: index {i} is out of range for {len} elements");
                self.report(inst, rule);
                return None;
            }
        }
        Some(elem)
    }

    /// Walks literal indices (operands `from..`) through `ty`.
    pub(super) fn walk_literals(
        &mut self,
        inst: &Instruction,
        mut ty: Word,
        from: usize,
    ) -> Option<Word> {
        let literals: Vec<u32> = inst.operands[from.min(inst.operands.len())..]
            .iter()
            .filter_map(|o| match o {
                Operand::LiteralBit32(v) => Some(*v),
                _ => None,
            })
            .collect();
        for i in literals {
            ty = self.step(inst, ty, Some(u64::from(i)))?;
        }
        Some(ty)
    }

    pub(super) fn access_chain(&mut self, inst: &Instruction, rt: Word) {
        let Some(base) = self.operand_type(inst, 0) else {
            return;
        };
        let Some(Type::Pointer { storage, pointee }) = self.ty(base) else {
            let rule = format!(
                "SPIR-V Memory: Base must be a pointer, found {}",
                self.type_name(base)
            );
            self.report(inst, rule);
            return;
        };
        let (storage, mut ty) = (*storage, *pointee);
        let ptr_form = matches!(
            inst.class.opcode,
            Op::PtrAccessChain | Op::InBoundsPtrAccessChain
        );
        for i in 1..inst.operands.len() {
            self.expect_int_scalar(inst, i, "Memory", "an index");
            if ptr_form && i == 1 {
                continue; // Element: steps over whole pointees.
            }
            let index = match inst.operands[i] {
                Operand::IdRef(id) => self.constant_value(id),
                _ => None,
            };
            let Some(next) = self.step(inst, ty, index) else {
                return;
            };
            ty = next;
        }
        match self.ty(rt) {
            Some(Type::Pointer {
                storage: s,
                pointee,
            }) if *s == storage && self.same(*pointee, ty) => {}
            _ => {
                let rule = format!(
                    "SPIR-V Memory: result type {} must be a {storage:?} pointer to the indexed type {}",
                    self.type_name(rt),
                    self.type_name(ty)
                );
                self.report(inst, rule);
            }
        }
    }

    pub(super) fn composite_construct(&mut self, inst: &Instruction, rt: Word) {
        let n = inst.operands.len();
        match self.ty(rt) {
            Some(Type::Vector { elem, count }) => {
                let (elem, count) = (*elem, *count);
                let mut total = 0u64;
                for i in 0..n {
                    let Some(t) = self.operand_type(inst, i) else {
                        return;
                    };
                    if self.same(t, elem) {
                        total += 1;
                    } else if let Some(Type::Vector { elem: e, count: c }) = self.ty(t) {
                        if self.same(*e, elem) {
                            total += u64::from(*c);
                        } else {
                            total = u64::MAX;
                        }
                    } else {
                        total = u64::MAX;
                    }
                    if total == u64::MAX {
                        let rule = format!(
                            "SPIR-V Composite: constituent {} of type {} does not fit a vector of {}",
                            i,
                            self.type_name(t),
                            self.type_name(elem)
                        );
                        self.report(inst, rule);
                        return;
                    }
                }
                if total != u64::from(count) {
                    let rule = format!(
                        "SPIR-V Composite: constituents give {total} components for a vector of {count}"
                    );
                    self.report(inst, rule);
                }
            }
            Some(Type::Struct { members, .. }) => {
                let members = members.clone();
                if members.len() != n {
                    let rule = format!(
                        "SPIR-V Composite: {n} constituents for a struct of {} members",
                        members.len()
                    );
                    self.report(inst, rule);
                    return;
                }
                for (i, m) in members.into_iter().enumerate() {
                    self.expect_type(inst, i, m, "Composite", &format!("constituent {i}"));
                }
            }
            Some(Type::Array { elem, len }) => {
                let (elem, len) = (*elem, *len);
                if len != n as u64 {
                    let rule = format!("SPIR-V Composite: {n} constituents for an array of {len}");
                    self.report(inst, rule);
                    return;
                }
                for i in 0..n {
                    self.expect_type(inst, i, elem, "Composite", &format!("constituent {i}"));
                }
            }
            _ => {
                let rule = format!(
                    "SPIR-V Composite: result type {} is not a composite",
                    self.type_name(rt)
                );
                self.report(inst, rule);
            }
        }
    }

    pub(super) fn vector_shuffle(&mut self, inst: &Instruction, rt: Word) {
        let (Some(a), Some(b)) = (self.operand_type(inst, 0), self.operand_type(inst, 1)) else {
            return;
        };
        let (
            Some(Type::Vector {
                elem: ea,
                count: na,
            }),
            Some(Type::Vector {
                elem: eb,
                count: nb,
            }),
            Some(Type::Vector {
                elem: er,
                count: nr,
            }),
        ) = (self.ty(a), self.ty(b), self.ty(rt))
        else {
            self.report(
                inst,
                "SPIR-V Composite: OpVectorShuffle operands and result must be vectors".into(),
            );
            return;
        };
        if !self.same(*ea, *er) || !self.same(*eb, *er) {
            self.report(
                inst,
                "SPIR-V Composite: OpVectorShuffle vectors must have the result's component type"
                    .into(),
            );
            return;
        }
        let limit = u64::from(*na) + u64::from(*nb);
        let components: Vec<u32> = inst.operands[2..]
            .iter()
            .filter_map(|o| match o {
                Operand::LiteralBit32(v) => Some(*v),
                _ => None,
            })
            .collect();
        if components.len() != *nr as usize {
            let rule = format!(
                "SPIR-V Composite: {} components selected for a result of {nr}",
                components.len()
            );
            self.report(inst, rule);
        }
        if let Some(bad) = components
            .iter()
            .find(|&&c| c != 0xffff_ffff && u64::from(c) >= limit)
        {
            let rule = format!(
                "SPIR-V Composite: component {bad} is out of range (the vectors have {limit})"
            );
            self.report(inst, rule);
        }
    }
}
