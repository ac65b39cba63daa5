//! Operand type rules for every instruction codegen translates (SPIR-V 1.6 "Instructions"
//! chapter, per instruction class; OpenCL.std operand rules): a module that passes never makes
//! codegen meet a value of a shape it does not expect, so Cranelift's verifier stays a backstop.
//! Also OpPhi parents against the block's real predecessors.

use std::collections::{HashMap, HashSet};

use rspirv::dr::{Function, Instruction, Operand};
use spirv::{GroupOperation, Op, OpenclStd100Op as Cl, Scope, StorageClass, Word};

use crate::diagnostics::Diagnostic;
use crate::module::{Module, Type};

/// Nesting limit when comparing types structurally (guards against cyclic type graphs in
/// corrupt modules).
const TYPE_DEPTH: u32 = 32;

struct Checker<'m> {
    m: &'m Module,
    problems: Vec<Diagnostic>,
    /// Results of debug-info and non-semantic OpExtInsts: codegen gives them no value.
    non_semantic: HashSet<Word>,
    /// The function being checked (printf resolves its format through it).
    function: Option<&'m Function>,
}

/// The element kind of a scalar or vector type.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Kind {
    Int(u32),
    Float(u32),
    Bool,
}

pub(crate) fn check_types(m: &Module) -> Vec<Diagnostic> {
    let mut non_semantic: HashSet<Word> = m.debug_ids.clone();
    for inst in m
        .raw
        .functions
        .iter()
        .flat_map(|f| f.blocks.iter().flat_map(|b| &b.instructions))
    {
        if let (Op::ExtInst, Some(id), Some(Operand::IdRef(set))) =
            (inst.class.opcode, inst.result_id, inst.operands.first())
        {
            if m.ext_import(*set) != Some("OpenCL.std") {
                non_semantic.insert(id);
            }
        }
    }
    let mut c = Checker {
        m,
        problems: Vec::new(),
        non_semantic,
        function: None,
    };
    for inst in &m.raw.types_global_values {
        c.global(inst);
    }
    for f in &m.raw.functions {
        c.function(f);
    }
    c.problems
}

impl<'m> Checker<'m> {
    /// Whether the module declares capability `cap`.
    fn declares(&self, cap: spirv::Capability) -> bool {
        self.m
            .raw
            .capabilities
            .iter()
            .any(|i| i.operands.first() == Some(&rspirv::dr::Operand::Capability(cap)))
    }

    fn ty(&self, id: Word) -> Option<&'m Type> {
        self.m.ty(id)
    }

    fn value_type(&self, id: Word) -> Option<Word> {
        self.m.type_of(id)
    }

    /// Structural type equality: identical ids, or the same scalar/vector/pointer shape
    /// (SPIR-V allows duplicate pointer declarations; llvm-spirv never relies on struct
    /// duplicates, which stay distinct types).
    fn same(&self, a: Word, b: Word) -> bool {
        self.same_depth(a, b, TYPE_DEPTH)
    }

    fn same_depth(&self, a: Word, b: Word, depth: u32) -> bool {
        if a == b {
            return true;
        }
        if depth == 0 {
            return false;
        }
        match (self.ty(a), self.ty(b)) {
            (Some(Type::Int { width: x }), Some(Type::Int { width: y }))
            | (Some(Type::Float { width: x }), Some(Type::Float { width: y })) => x == y,
            (Some(Type::Bool), Some(Type::Bool)) | (Some(Type::Void), Some(Type::Void)) => true,
            (
                Some(Type::Vector {
                    elem: e1,
                    count: c1,
                }),
                Some(Type::Vector {
                    elem: e2,
                    count: c2,
                }),
            ) => c1 == c2 && self.same_depth(*e1, *e2, depth - 1),
            (
                Some(Type::Pointer {
                    storage: s1,
                    pointee: p1,
                }),
                Some(Type::Pointer {
                    storage: s2,
                    pointee: p2,
                }),
            ) => s1 == s2 && self.same_depth(*p1, *p2, depth - 1),
            (Some(Type::Array { elem: e1, len: l1 }), Some(Type::Array { elem: e2, len: l2 })) => {
                l1 == l2 && self.same_depth(*e1, *e2, depth - 1)
            }
            _ => false,
        }
    }

    /// (element kind, component count) of a scalar or vector type.
    fn shape(&self, ty: Word) -> Option<(Kind, u32)> {
        let kind = |t: &Type| match t {
            Type::Int { width } => Some(Kind::Int(*width)),
            Type::Float { width } => Some(Kind::Float(*width)),
            Type::Bool => Some(Kind::Bool),
            _ => None,
        };
        match self.ty(ty)? {
            Type::Vector { elem, count } => Some((kind(self.ty(*elem)?)?, *count)),
            t => Some((kind(t)?, 1)),
        }
    }

    /// The type of the value operand `i` of `inst`, reporting when it is not a value.
    fn operand_type(&mut self, inst: &Instruction, i: usize) -> Option<Word> {
        let Some(Operand::IdRef(id)) = inst.operands.get(i) else {
            self.report(
                inst,
                format!("SPIR-V 2.2: operand {i} must be an <id> of a value"),
            );
            return None;
        };
        // An OpFunction has a result type (its return type) but is not a value.
        let ty = self
            .value_type(*id)
            .filter(|_| self.m.function(*id).is_none());
        if ty.is_none() {
            self.report(
                inst,
                format!("SPIR-V 2.2: operand %{id} is not a value (a type, label, function or instruction without result)"),
            );
        }
        ty
    }

    fn report(&mut self, inst: &Instruction, rule: String) {
        self.problems.push(self.m.diag(rule, inst, None));
    }

    fn type_name(&self, ty: Word) -> String {
        self.type_name_depth(ty, 4)
    }

    fn type_name_depth(&self, ty: Word, depth: u32) -> String {
        if depth == 0 {
            return format!("%{ty}");
        }
        match self.ty(ty) {
            Some(Type::Int { width }) => format!("i{width}"),
            Some(Type::Float { width }) => format!("f{width}"),
            Some(Type::Bool) => "bool".into(),
            Some(Type::Void) => "void".into(),
            Some(Type::Vector { elem, count }) => {
                format!("{}x{count}", self.type_name_depth(*elem, depth - 1))
            }
            Some(Type::Pointer { storage, pointee }) => {
                format!("{storage:?} {}*", self.type_name_depth(*pointee, depth - 1))
            }
            Some(Type::Struct { .. }) => format!("struct %{ty}"),
            Some(Type::Array { elem, len }) => {
                format!("[{} x {len}]", self.type_name_depth(*elem, depth - 1))
            }
            Some(other) => format!("{other:?}")
                .split([' ', '{'])
                .next()
                .unwrap_or("?")
                .into(),
            None => format!("%{ty} (not a type)"),
        }
    }

    /// Operand `i` must have exactly type `want`.
    fn expect_type(&mut self, inst: &Instruction, i: usize, want: Word, section: &str, what: &str) {
        if let Some(got) = self.operand_type(inst, i) {
            if !self.same(got, want) {
                let rule = format!(
                    "SPIR-V {section}: {what} must have type {}, found {}",
                    self.type_name(want),
                    self.type_name(got)
                );
                self.report(inst, rule);
            }
        }
    }

    /// env 2.9: built-in (Input) variables are read-only values of the work-item; codegen
    /// materialises them on load, so a pointer to Input storage may only be loaded from or
    /// indexed (then loaded).
    fn input_pointer_uses(&mut self, inst: &Instruction) {
        let op = inst.class.opcode;
        let set = match (op, inst.operands.first()) {
            (Op::ExtInst, Some(Operand::IdRef(set))) => self.m.ext_import(*set),
            _ => None,
        };
        if op == Op::ExtInst && set != Some("OpenCL.std") {
            return; // debug info may name variables and other debug results
        }
        for operand in &inst.operands {
            if let Operand::IdRef(id) = operand {
                if self.non_semantic.contains(id) {
                    let rule = format!("SPIR-V 2.2: %{id} is the result of a debug-info or non-semantic instruction and cannot be used as a value");
                    self.report(inst, rule);
                }
            }
        }
        if op == Op::ExtInst {
            return; // llvm-spirv reads vector built-ins with OpenCL.std vloadn
        }
        for (k, operand) in inst.operands.iter().enumerate() {
            let Operand::IdRef(id) = operand else {
                continue;
            };
            let input = matches!(
                self.value_type(*id).and_then(|t| self.ty(t)),
                Some(Type::Pointer {
                    storage: StorageClass::Input,
                    ..
                })
            );
            let allowed = k == 0
                && matches!(
                    op,
                    Op::Load
                        | Op::AccessChain
                        | Op::InBoundsAccessChain
                        | Op::PtrAccessChain
                        | Op::InBoundsPtrAccessChain
                );
            if input && !allowed {
                let rule = format!(
                    "env 2.9: %{id} points to a built-in (Input) variable, which may only be loaded or indexed, not used by Op{op:?}"
                );
                self.report(inst, rule);
            }
        }
    }

    /// SPIR-V Function instructions: OpFunction's Function Type returns its result type, and
    /// its parameters are the OpFunctionParameters, in number and type.
    fn function_signature(&mut self, f: &Function, def: &Instruction, ret: Word) {
        let fn_ty = match def.operands.get(1) {
            Some(Operand::IdRef(t)) => *t,
            _ => 0,
        };
        let Some(Type::Function { ret: want, params }) = self.ty(fn_ty) else {
            self.report(
                def,
                format!("SPIR-V Function: Function Type %{fn_ty} is not an OpTypeFunction"),
            );
            return;
        };
        if !self.same(*want, ret) {
            let rule = format!(
                "SPIR-V Function: result type {} differs from the Function Type's return type {}",
                self.type_name(ret),
                self.type_name(*want)
            );
            self.report(def, rule);
        }
        if params.len() != f.parameters.len() {
            let rule = format!(
                "SPIR-V Function: the Function Type has {} parameters, the function declares {}",
                params.len(),
                f.parameters.len()
            );
            self.report(def, rule);
            return;
        }
        for (p, want) in f.parameters.iter().zip(params) {
            let got = p.result_type.unwrap_or(0);
            if !self.same(got, *want) {
                let rule = format!(
                    "SPIR-V Function: parameter type {} differs from the Function Type's {}",
                    self.type_name(got),
                    self.type_name(*want)
                );
                self.report(p, rule);
            }
        }
    }

    /// Module-scope constants and variables: constituents and initializers of the right types.
    fn global(&mut self, inst: &Instruction) {
        let rt = inst.result_type.unwrap_or(0);
        match inst.class.opcode {
            Op::ConstantComposite | Op::SpecConstantComposite => self.composite_construct(inst, rt),
            Op::ConstantTrue | Op::ConstantFalse | Op::SpecConstantTrue | Op::SpecConstantFalse
                if !matches!(self.ty(rt), Some(Type::Bool)) =>
            {
                let rule = format!(
                    "SPIR-V Constant-Creation: a boolean constant must have the bool type, found {}",
                    self.type_name(rt)
                );
                self.report(inst, rule);
            }
            Op::Constant | Op::SpecConstant
                if !matches!(self.ty(rt), Some(Type::Int { .. } | Type::Float { .. })) =>
            {
                let rule = format!(
                    "SPIR-V Constant-Creation: OpConstant must have an integer or float scalar type, found {}",
                    self.type_name(rt)
                );
                self.report(inst, rule);
            }
            Op::Variable => match self.ty(rt) {
                Some(Type::Pointer { storage, pointee }) => {
                    let limit = match storage {
                        StorageClass::Workgroup => Some(MAX_LOCAL_VARIABLE_BYTES),
                        StorageClass::CrossWorkgroup | StorageClass::UniformConstant => {
                            Some(MAX_PROGRAM_SCOPE_VARIABLE_BYTES)
                        }
                        _ => None,
                    };
                    if let (Some(limit), Some(size)) = (limit, self.m.size_of(*pointee)) {
                        if size > limit {
                            let rule = format!("device limit: a {storage:?} variable of {size} bytes is larger than this device allows ({limit} bytes)");
                            self.report(inst, rule);
                        }
                    }
                    if *storage != StorageClass::Input && self.m.size_of(*pointee).is_none() {
                        let rule = format!(
                            "SPIR-V Memory: a {storage:?} variable must have a sized type, found {}",
                            self.type_name(*pointee)
                        );
                        self.report(inst, rule);
                    }
                    if *storage == StorageClass::Function || *storage == StorageClass::Generic {
                        let rule = format!(
                            "SPIR-V Memory: a module-scope variable cannot have {storage:?} storage"
                        );
                        self.report(inst, rule);
                    }
                    if let Some(Operand::IdRef(init)) = inst.operands.get(1) {
                        let constant = self.m.global(*init).is_some_and(|g| {
                            g.class.opcode.is_constant() || g.class.opcode == Op::Variable
                        });
                        if !constant {
                            let rule = format!("SPIR-V Memory: the initializer %{init} of a module-scope variable must be a constant or a module-scope variable");
                            self.report(inst, rule);
                        }
                        self.expect_type(inst, 1, *pointee, "Memory", "Initializer");
                    }
                }
                _ => self.expect_pointer_type(inst, rt, "Memory"),
            },
            _ => {}
        }
    }

    fn function(&mut self, f: &'m Function) {
        let Some(def) = &f.def else { return };
        self.function = Some(f);
        let ret = def.result_type.unwrap_or(0);
        self.function_signature(f, def, ret);
        let preds = predecessors(f);
        for b in &f.blocks {
            let label = b.label.as_ref().and_then(|l| l.result_id).unwrap_or(0);
            for inst in &b.instructions {
                self.instruction(inst, ret, label, &preds);
                self.input_pointer_uses(inst);
            }
        }
    }

    fn instruction(
        &mut self,
        inst: &Instruction,
        fn_ret: Word,
        label: Word,
        preds: &HashMap<Word, HashSet<Word>>,
    ) {
        use Op::*;
        let op = inst.class.opcode;
        let rt = inst.result_type.unwrap_or(0);
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
                    self.expect_type(inst, 1, *elem, "Arithmetic", "Scalar");
                }
            }
            Dot => {
                let a = self.operand_type(inst, 0);
                self.expect_kind(inst, rt, Kind::is_float, 1, "Arithmetic");
                if let Some(a) = a {
                    match self.ty(a) {
                        Some(Type::Vector { elem, .. }) if self.same(*elem, rt) => {
                            self.expect_type(inst, 1, a, "Arithmetic", "Vector 2")
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
                        self.expect_type(inst, 0, member, "Arithmetic", "Operand 1");
                        self.expect_type(inst, 1, member, "Arithmetic", "Operand 2");
                    } else {
                        self.report(inst, "SPIR-V Arithmetic: result members must be integer scalars or vectors".into());
                    }
                }
                _ => self.report(
                    inst,
                    "SPIR-V Arithmetic: result type must be a struct of two members of the same integer type".into(),
                ),
            },
            IEqual | INotEqual | UGreaterThan | SGreaterThan | UGreaterThanEqual
            | SGreaterThanEqual | ULessThan | SLessThan | ULessThanEqual | SLessThanEqual => {
                self.compare(inst, rt, 2, Kind::is_int)
            }
            FOrdEqual | FUnordEqual | FOrdNotEqual | FUnordNotEqual | FOrdLessThan
            | FUnordLessThan | FOrdGreaterThan | FUnordGreaterThan | FOrdLessThanEqual
            | FUnordLessThanEqual | FOrdGreaterThanEqual | FUnordGreaterThanEqual
            | LessOrGreater | Ordered | Unordered => self.compare(inst, rt, 2, Kind::is_float),
            IsNan | IsInf | IsFinite | IsNormal | SignBitSet => {
                self.compare(inst, rt, 1, Kind::is_float)
            }
            LogicalEqual | LogicalNotEqual | LogicalOr | LogicalAnd => {
                self.same_as_result(inst, rt, 2, Kind::is_bool, "Relational and Logical")
            }
            LogicalNot => self.same_as_result(inst, rt, 1, Kind::is_bool, "Relational and Logical"),
            Any | All => {
                self.expect_kind(inst, rt, Kind::is_bool, 1, "Relational and Logical");
                if let Some(v) = self.operand_type(inst, 0) {
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
                self.expect_type(inst, 1, rt, "Relational and Logical", "Object 1");
                self.expect_type(inst, 2, rt, "Relational and Logical", "Object 2");
                if let Some(c) = self.operand_type(inst, 0) {
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
                if let Some(a) = self.operand_type(inst, 0) {
                    if !matches!(self.ty(a), Some(Type::Pointer { .. })) {
                        let rule = format!(
                            "SPIR-V Memory: Operand 1 must be a pointer, found {}",
                            self.type_name(a)
                        );
                        self.report(inst, rule);
                    }
                    self.expect_type(inst, 1, a, "Memory", "Operand 2");
                }
            }
            ConvertFToU | ConvertFToS => self.convert(inst, rt, Kind::is_float, Kind::is_int),
            ConvertSToF | ConvertUToF => self.convert(inst, rt, Kind::is_int, Kind::is_float),
            UConvert | SConvert | SatConvertSToU | SatConvertUToS => {
                self.convert(inst, rt, Kind::is_int, Kind::is_int)
            }
            FConvert => self.convert(inst, rt, Kind::is_float, Kind::is_float),
            QuantizeToF16 => self.same_as_result(inst, rt, 1, Kind::is_float, "Conversion"),
            ConvertPtrToU => {
                self.expect_kind(inst, rt, Kind::is_int, 1, "Conversion");
                self.expect_pointer(inst, 0, "Conversion", "Pointer");
            }
            ConvertUToPtr => {
                self.expect_pointer_type(inst, rt, "Conversion");
                if let Some(t) = self.operand_type(inst, 0) {
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
                self.expect_pointer(inst, 0, "Conversion", "Pointer");
            }
            GenericPtrMemSemantics => {
                self.expect_pointer(inst, 0, "Memory", "Pointer");
                if !matches!(self.ty(rt), Some(Type::Int { width: 32 })) {
                    let rule = format!(
                        "SPIR-V Memory: OpGenericPtrMemSemantics must return a 32-bit integer, found {}",
                        self.type_name(rt)
                    );
                    self.report(inst, rule);
                }
            }
            Bitcast => self.bitcast(inst, rt),
            Load => {
                if let Some(pointee) = self.expect_pointer(inst, 0, "Memory", "Pointer") {
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
                if let Some(pointee) = self.expect_pointer(inst, 0, "Memory", "Pointer") {
                    self.expect_type(inst, 1, pointee, "Memory", "OpStore Object (the pointee type)");
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
                    if inst.operands.len() > 1 {
                        self.expect_type(inst, 1, *pointee, "Memory", "Initializer");
                    }
                } else {
                    self.expect_pointer_type(inst, rt, "Memory");
                }
            }
            AccessChain | InBoundsAccessChain | PtrAccessChain | InBoundsPtrAccessChain => {
                self.access_chain(inst, rt)
            }
            CopyMemory | CopyMemorySized => {
                let a = self.expect_pointer(inst, 0, "Memory", "Target");
                let b = self.expect_pointer(inst, 1, "Memory", "Source");
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
                    if let Some(t) = self.operand_type(inst, 2) {
                        if !matches!(self.shape(t), Some((Kind::Int(_), 1))) {
                            self.report(inst, "SPIR-V Memory: Size must be an integer scalar".into());
                        }
                    }
                }
            }
            CompositeConstruct => self.composite_construct(inst, rt),
            CompositeExtract | CompositeInsert
                if inst.operands.len() < if op == CompositeExtract { 2 } else { 3 } =>
            {
                let rule = format!("SPIR-V Composite: Op{op:?} needs at least one index");
                self.report(inst, rule);
            }
            CompositeExtract => {
                if let Some(ct) = self.operand_type(inst, 0) {
                    if let Some(t) = self.walk_literals(inst, ct, 1) {
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
                self.expect_type(inst, 1, rt, "Composite", "Composite");
                if let Some(t) = self.walk_literals(inst, rt, 2) {
                    self.expect_type(inst, 0, t, "Composite", "Object");
                }
            }
            VectorShuffle => self.vector_shuffle(inst, rt),
            VectorExtractDynamic => {
                if let Some(v) = self.operand_type(inst, 0) {
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
                self.expect_int_scalar(inst, 1, "Composite", "Index");
            }
            VectorInsertDynamic => {
                self.expect_type(inst, 0, rt, "Composite", "Vector");
                if let Some(Type::Vector { elem, .. }) = self.ty(rt) {
                    self.expect_type(inst, 1, *elem, "Composite", "Component");
                } else {
                    self.report(inst, "SPIR-V Composite: result type must be a vector".into());
                }
                self.expect_int_scalar(inst, 2, "Composite", "Index");
            }
            CopyObject => self.expect_type(inst, 0, rt, "Composite", "Operand"),
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
                        !matches!(l, Operand::LiteralBit32(0 | 1) | Operand::LiteralBit64(0 | 1))
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
                    self.report(inst, "SPIR-V Control-Flow: OpReturnValue in a function returning void".into());
                } else {
                    self.expect_type(inst, 0, fn_ret, "Control-Flow", "OpReturnValue Value (the function's return type)");
                }
            }
            Return if !matches!(self.ty(fn_ret), Some(Type::Void)) => {
                let rule = format!(
                    "SPIR-V Control-Flow: OpReturn in a function returning {}; use OpReturnValue",
                    self.type_name(fn_ret)
                );
                self.report(inst, rule);
            }
            ControlBarrier | MemoryBarrier => self.barrier(inst),
            GroupAll | GroupAny | GroupBroadcast | GroupIAdd | GroupFAdd | GroupFMin
            | GroupUMin | GroupSMin | GroupFMax | GroupUMax | GroupSMax | GroupIMulKHR
            | GroupFMulKHR | GroupBitwiseAndKHR | GroupBitwiseOrKHR | GroupBitwiseXorKHR
            | GroupLogicalAndKHR | GroupLogicalOrKHR | GroupLogicalXorKHR => {
                self.group_collective(inst, rt)
            }
            op if format!("{op:?}").starts_with("GroupNonUniform") => {
                // Every <id> after the execution scope must be a value (operand_type reports
                // it otherwise); codegen checks the types each operation takes.
                for i in 1..inst.operands.len() {
                    if matches!(inst.operands[i], Operand::IdRef(_)) {
                        self.operand_type(inst, i);
                    }
                }
            }
            AtomicLoad | AtomicStore | AtomicExchange | AtomicCompareExchange
            | AtomicCompareExchangeWeak | AtomicIIncrement | AtomicIDecrement | AtomicIAdd
            | AtomicISub | AtomicSMin | AtomicUMin | AtomicSMax | AtomicUMax | AtomicAnd
            | AtomicOr | AtomicXor | AtomicFAddEXT | AtomicFMinEXT | AtomicFMaxEXT => {
                self.atomic(inst, rt)
            }
            Phi => self.phi(inst, rt, label, preds),
            FunctionCall => self.function_call(inst, rt),
            ExtInst => self.ext_inst(inst, rt),
            _ => {}
        }
    }

    fn expect_kind(
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
    fn same_as_result(
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
    fn operand_like(
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
    fn compare(&mut self, inst: &Instruction, rt: Word, n: usize, kind: fn(&Kind) -> bool) {
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

    fn convert(
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
    fn bits(&self, ty: Word) -> Option<u64> {
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

    fn bitcast(&mut self, inst: &Instruction, rt: Word) {
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

    fn expect_pointer_type(&mut self, inst: &Instruction, ty: Word, section: &str) {
        if !matches!(self.ty(ty), Some(Type::Pointer { .. })) {
            let rule = format!(
                "SPIR-V {section}: result type of Op{:?} must be a pointer, found {}",
                inst.class.opcode,
                self.type_name(ty)
            );
            self.report(inst, rule);
        }
    }

    /// Operand `i` must be a pointer; returns its pointee type.
    fn expect_pointer(
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
    fn expect_half_pointer(&mut self, inst: &Instruction, i: usize, op: Cl) {
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

    fn expect_int_scalar(&mut self, inst: &Instruction, i: usize, section: &str, what: &str) {
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
    fn constant_value(&self, id: Word) -> Option<u64> {
        let c = self.m.global(id)?;
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
    fn step(&mut self, inst: &Instruction, ty: Word, index: Option<u64>) -> Option<Word> {
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
    fn walk_literals(&mut self, inst: &Instruction, mut ty: Word, from: usize) -> Option<Word> {
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

    fn access_chain(&mut self, inst: &Instruction, rt: Word) {
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

    fn composite_construct(&mut self, inst: &Instruction, rt: Word) {
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

    fn vector_shuffle(&mut self, inst: &Instruction, rt: Word) {
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

    /// The value of a Scope or Memory Semantics operand, which must be an integer OpConstant.
    fn constant_operand(&mut self, inst: &Instruction, i: usize, what: &str) -> Option<u32> {
        let value = match inst.operands.get(i) {
            Some(Operand::IdRef(id) | Operand::IdScope(id) | Operand::IdMemorySemantics(id)) => {
                self.constant_value(*id)
            }
            _ => None,
        };
        if value.is_none() {
            let rule = format!(
                "SPIR-V 2.2: {what} of Op{:?} must be an integer OpConstant",
                inst.class.opcode
            );
            self.report(inst, rule);
        }
        value.map(|v| v as u32)
    }

    /// env 4: barrier scopes and orders allowed by the device's fence capabilities.
    fn barrier(&mut self, inst: &Instruction) {
        let control = inst.class.opcode == Op::ControlBarrier;
        let base = usize::from(control);
        if control {
            if let Some(exec) = self.constant_operand(inst, 0, "Scope for Execution") {
                // env 5.2.11: Subgroup with cl_khr_subgroups (codegen refuses it when the
                // device's sub-groups are turned off).
                if exec != Scope::Workgroup as u32 && exec != Scope::Subgroup as u32 {
                    let rule = format!("env 4: Scope for Execution of OpControlBarrier must be Workgroup or Subgroup, found {}", scope_name(exec));
                    self.report(inst, rule);
                }
            }
        }
        if let Some(mem) = self.constant_operand(inst, base, "Scope for Memory") {
            // env 5.2.11: barriers and fences may also name Subgroup memory scope.
            if !FENCE_SCOPES.iter().any(|s| *s as u32 == mem) && mem != Scope::Subgroup as u32 {
                let rule = format!("env 4: Scope for Memory {} is not in this device's CL_DEVICE_ATOMIC_FENCE_CAPABILITIES (work-item, work-group and device scope)", scope_name(mem));
                self.report(inst, rule);
            }
        }
        if let Some(sem) = self.constant_operand(inst, base + 1, "Memory Semantics") {
            // OpenCL C 1.2 barriers are sequentially consistent (env 4, OpenCL 1.2 rule); the
            // device's fence orders are relaxed and acquire/release.
            if sem & ORDER_MASK & !(ACQUIRE | RELEASE | ACQ_REL | SEQ_CST) != 0
                || (sem & ORDER_MASK).count_ones() > 1
            {
                let rule =
                    format!("env 4: Memory Semantics {sem:#x} does not name one memory order");
                self.report(inst, rule);
            }
        }
    }

    /// env 4 atomic rules: 32-bit integers (64-bit with Int64Atomics), Function/Workgroup/
    /// CrossWorkgroup pointers (and Generic with GenericPointer), scopes and orders from the
    /// device's atomic memory capabilities (work-group and device scope, every order).
    /// Beyond the letter of env 4, 32- and 64-bit floats are accepted for exchange, load and
    /// store (llvm-spirv's atomic_xchg on float, cl_ext_float_atomics), and for
    /// OpAtomicFAddEXT/FMinEXT/FMaxEXT with the matching AtomicFloat*EXT capability.
    fn atomic(&mut self, inst: &Instruction, rt: Word) {
        let op = inst.class.opcode;
        let Some(pointee) = self.expect_pointer(inst, 0, "Atomic", "Pointer") else {
            return;
        };
        if let Some(Type::Pointer { storage, .. }) =
            self.operand_type(inst, 0).and_then(|t| self.ty(t))
        {
            let generic = *storage == StorageClass::Generic
                && self.declares(spirv::Capability::GenericPointer);
            if !generic
                && !matches!(
                    storage,
                    StorageClass::Function | StorageClass::Workgroup | StorageClass::CrossWorkgroup
                )
            {
                let rule = format!("env 4: the Pointer of an atomic instruction must point to Function, Workgroup, CrossWorkgroup (or, with GenericPointer, Generic) storage, found {storage:?}");
                self.report(inst, rule);
            }
        }
        let int64 = self.declares(spirv::Capability::Int64Atomics);
        let float_op = matches!(
            op,
            Op::AtomicFAddEXT | Op::AtomicFMinEXT | Op::AtomicFMaxEXT
        );
        if float_op {
            // SPV_EXT_shader_atomic_float_add / _min_max: the float width needs its capability.
            use spirv::Capability::*;
            let needed = match (self.ty(pointee), op) {
                (Some(Type::Float { width: 32 }), Op::AtomicFAddEXT) => Some(AtomicFloat32AddEXT),
                (Some(Type::Float { width: 64 }), Op::AtomicFAddEXT) => Some(AtomicFloat64AddEXT),
                (Some(Type::Float { width: 32 }), _) => Some(AtomicFloat32MinMaxEXT),
                (Some(Type::Float { width: 64 }), _) => Some(AtomicFloat64MinMaxEXT),
                _ => None,
            };
            match needed {
                Some(cap) if self.declares(cap) => {}
                Some(cap) => {
                    let rule = format!(
                        "SPIR-V Atomic: Op{op:?} on {} needs the {cap:?} capability",
                        self.type_name(pointee)
                    );
                    self.report(inst, rule);
                    return;
                }
                None => {
                    let rule = format!(
                        "SPIR-V Atomic: Op{op:?} needs a 32- or 64-bit float pointee, found {}",
                        self.type_name(pointee)
                    );
                    self.report(inst, rule);
                    return;
                }
            }
        }
        let allowed = float_op
            || match self.ty(pointee) {
                Some(Type::Int { width: 32 }) => true,
                Some(Type::Int { width: 64 }) => int64,
                // llvm-spirv's atomic_xchg(float) and cl_ext_float_atomics' load/store/exchange.
                Some(Type::Float { width: 32 | 64 }) => {
                    matches!(op, Op::AtomicExchange | Op::AtomicLoad | Op::AtomicStore)
                }
                _ => false,
            };
        if !allowed {
            let rule = format!(
                "env 4: atomic instructions support 32-bit integers (64-bit with the Int64Atomics capability) on this device, found {}",
                self.type_name(pointee)
            );
            self.report(inst, rule);
            return;
        }
        if op != Op::AtomicStore && !self.same(rt, pointee) {
            let rule = format!(
                "SPIR-V Atomic: result type {} differs from the pointee type {}",
                self.type_name(rt),
                self.type_name(pointee)
            );
            self.report(inst, rule);
        }
        if let Some(scope) = self.constant_operand(inst, 1, "Memory scope") {
            if !ATOMIC_SCOPES.iter().any(|s| *s as u32 == scope) {
                let rule = format!("env 4: atomic Scope {} is not in this device's CL_DEVICE_ATOMIC_MEMORY_CAPABILITIES (work-group and device scope)", scope_name(scope));
                self.report(inst, rule);
            }
        }
        let semantics = if matches!(
            op,
            Op::AtomicCompareExchange | Op::AtomicCompareExchangeWeak
        ) {
            2
        } else {
            1
        };
        for i in 0..semantics {
            if let Some(sem) = self.constant_operand(inst, 2 + i, "Memory Semantics") {
                // Every order is supported; at most one may be named.
                if (sem & ORDER_MASK).count_ones() > 1 {
                    let rule = format!(
                        "env 4: atomic Memory Semantics {sem:#x} names more than one memory order"
                    );
                    self.report(inst, rule);
                }
            }
        }
        // Value operands follow the scope and semantics.
        let values = match op {
            Op::AtomicLoad | Op::AtomicIIncrement | Op::AtomicIDecrement => 0..0,
            Op::AtomicCompareExchange | Op::AtomicCompareExchangeWeak => 4..6,
            _ => 3..4,
        };
        for i in values {
            self.expect_type(inst, i, pointee, "Atomic", "Value");
        }
    }

    /// OpGroupAll/Any (bool predicate), OpGroupBroadcast (a value of the result type, an integer
    /// local id) and the reductions and scans (a scalar of the result type): integer or float
    /// for the core ones; for SPV_KHR_uniform_group_instructions (env 5.2.27) 32- or 64-bit
    /// integers (mul, bitwise), floats (mul) or bools (logical). Every one has a constant
    /// Workgroup or Subgroup execution scope (env 4, 5.2.11); the combining ones take
    /// Reduce, InclusiveScan or ExclusiveScan (clustered and partitioned operations belong to
    /// the non-uniform instructions).
    fn group_collective(&mut self, inst: &Instruction, rt: Word) {
        use Op::*;
        let op = inst.class.opcode;
        if let Some(exec) = self.constant_operand(inst, 0, "Scope for Execution") {
            if exec != Scope::Workgroup as u32 && exec != Scope::Subgroup as u32 {
                let rule = format!(
                    "env 4: Scope for Execution of Op{op:?} must be Workgroup or Subgroup, found {}",
                    scope_name(exec)
                );
                self.report(inst, rule);
            }
        }
        let value_index = match op {
            GroupAll | GroupAny | GroupBroadcast => 1,
            _ => {
                match inst.operands.get(1) {
                    Some(Operand::GroupOperation(
                        GroupOperation::Reduce
                        | GroupOperation::InclusiveScan
                        | GroupOperation::ExclusiveScan,
                    )) => {}
                    other => {
                        let found = match other {
                            Some(Operand::GroupOperation(g)) => format!("{g:?}"),
                            _ => "no group operation".into(),
                        };
                        let rule = format!(
                            "SPIR-V Group: the Operation of Op{op:?} must be Reduce, InclusiveScan or ExclusiveScan, found {found}"
                        );
                        self.report(inst, rule);
                    }
                }
                2
            }
        };
        let result_ok = match op {
            GroupAll | GroupAny | GroupLogicalAndKHR | GroupLogicalOrKHR | GroupLogicalXorKHR => {
                matches!(self.ty(rt), Some(Type::Bool))
            }
            GroupBroadcast => self.shape(rt).is_some(),
            GroupFAdd | GroupFMin | GroupFMax | GroupFMulKHR => {
                matches!(self.ty(rt), Some(Type::Float { .. }))
            }
            GroupIMulKHR | GroupBitwiseAndKHR | GroupBitwiseOrKHR | GroupBitwiseXorKHR => {
                matches!(self.ty(rt), Some(Type::Int { width: 32 | 64 }))
            }
            _ => matches!(self.ty(rt), Some(Type::Int { .. })),
        };
        if !result_ok {
            let section = if format!("{op:?}").ends_with("KHR") {
                "env 5.2.27"
            } else {
                "SPIR-V Group"
            };
            let rule = format!(
                "{section}: Op{op:?} cannot have result type {}",
                self.type_name(rt)
            );
            self.report(inst, rule);
            return;
        }
        self.expect_type(inst, value_index, rt, "Group", "the value operand");
        if op == GroupBroadcast {
            if let Some(t) = self.operand_type(inst, 2) {
                if !matches!(self.shape(t), Some((Kind::Int(_), 1..=3))) {
                    let rule = format!(
                        "SPIR-V Group: OpGroupBroadcast LocalId must be an integer scalar or 2- or 3-component vector, found {}",
                        self.type_name(t)
                    );
                    self.report(inst, rule);
                }
            }
        }
    }

    fn phi(
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

    fn function_call(&mut self, inst: &Instruction, rt: Word) {
        let Some(Operand::IdRef(callee)) = inst.operands.first() else {
            return;
        };
        let Some(def) = self.m.function(*callee).and_then(|f| f.def.as_ref()) else {
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

    fn ext_inst(&mut self, inst: &Instruction, rt: Word) {
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
            }
        }
    }
}

impl Checker<'_> {
    /// env 2.11: an `int` result, a constant format string and arguments its conversions accept.
    fn printf(&mut self, inst: &Instruction, rt: Word) {
        if self.ty(rt) != Some(&Type::Int { width: 32 }) {
            let rule = format!(
                "OpenCL.std: printf returns a 32-bit integer, found {}",
                self.type_name(rt)
            );
            self.report(inst, rule);
        }
        if let Some(f) = self.function {
            if let Err(rule) = crate::printf::printf_call(self.m, f, inst) {
                self.report(inst, rule);
            }
        }
    }
}

/// Largest program-scope (`global`/`constant`) variable: CL_DEVICE_MAX_CONSTANT_BUFFER_SIZE
/// (64 MiB); codegen allocates program-scope data when it builds the program.
pub const MAX_PROGRAM_SCOPE_VARIABLE_BYTES: u64 = 64 << 20;
/// Largest `__local` variable: CL_DEVICE_LOCAL_MEM_SIZE (256 KiB).
pub const MAX_LOCAL_VARIABLE_BYTES: u64 = 256 << 10;

/// Memory scopes a barrier or fence may name: the device's CL_DEVICE_ATOMIC_FENCE_CAPABILITIES
/// (work-item, work-group and device scope). The runtime's capability query reports the same.
pub const FENCE_SCOPES: &[Scope] = &[Scope::Invocation, Scope::Workgroup, Scope::Device];
/// Scopes an atomic instruction may name: the device's CL_DEVICE_ATOMIC_MEMORY_CAPABILITIES
/// (work-group and device scope, every order from relaxed to sequentially consistent).
pub const ATOMIC_SCOPES: &[Scope] = &[Scope::Workgroup, Scope::Device];

const ACQUIRE: u32 = 0x2;
const RELEASE: u32 = 0x4;
const ACQ_REL: u32 = 0x8;
const SEQ_CST: u32 = 0x10;
const ORDER_MASK: u32 = 0x1f;

fn scope_name(v: u32) -> String {
    match Scope::from_u32(v) {
        Some(s) => format!("{s:?}"),
        None => format!("{v} (not a scope)"),
    }
}

fn id_list(ids: &[Word]) -> String {
    ids.iter()
        .map(|i| format!("%{i}"))
        .collect::<Vec<_>>()
        .join(", ")
}

impl Kind {
    fn is_int(&self) -> bool {
        matches!(self, Kind::Int(_))
    }
    fn is_float(&self) -> bool {
        matches!(self, Kind::Float(_))
    }
    fn is_bool(&self) -> bool {
        matches!(self, Kind::Bool)
    }
    fn is_number(&self) -> bool {
        !self.is_bool()
    }
}

enum ArgRule {
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
fn opencl_std_signature(op: Cl) -> Option<(usize, ArgRule)> {
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

/// Block label → labels of the blocks that branch to it.
fn predecessors(f: &Function) -> HashMap<Word, HashSet<Word>> {
    let mut preds: HashMap<Word, HashSet<Word>> = HashMap::new();
    for b in &f.blocks {
        let Some(from) = b.label.as_ref().and_then(|l| l.result_id) else {
            continue;
        };
        let Some(last) = b.instructions.last() else {
            continue;
        };
        let targets: Vec<Word> = match last.class.opcode {
            Op::Branch => ids(&last.operands[..last.operands.len().min(1)]),
            Op::BranchConditional => {
                ids(&last.operands[1.min(last.operands.len())..last.operands.len().min(3)])
            }
            Op::Switch => ids(&last.operands[1.min(last.operands.len())..]),
            _ => Vec::new(),
        };
        for t in targets {
            preds.entry(t).or_default().insert(from);
        }
    }
    preds
}

fn ids(operands: &[Operand]) -> Vec<Word> {
    operands
        .iter()
        .filter_map(|o| match o {
            Operand::IdRef(id) => Some(*id),
            _ => None,
        })
        .collect()
}
