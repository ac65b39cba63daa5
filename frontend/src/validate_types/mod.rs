//! Operand type rules for every instruction codegen translates (SPIR-V 1.6 "Instructions"
//! chapter, per instruction class; OpenCL.std operand rules): a module that passes never makes
//! codegen meet a value of a shape it does not expect, so Cranelift's verifier stays a backstop.
//! Also OpPhi parents against the block's real predecessors. The rules of each instruction
//! class are in a module of their own (arith, memory, sync, calls), as in codegen's
//! `translate/`; this one holds the checker, the dispatch by opcode and the shared helpers.

use std::collections::{HashMap, HashSet};

use rspirv::dr::{Function, Instruction, Operand};
use spirv::{GroupOperation, Op, OpenclStd100Op as Cl, Scope, StorageClass, Word};

use crate::diagnostics::Diagnostic;
use crate::module::{Module, Type};

mod arith;
mod calls;
mod memory;
mod sync;

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
            .filter(|_| self.m.function_raw(*id).is_none());
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
                        let constant = self.m.global_raw(*init).is_some_and(|g| {
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
            if let Err(rule) = crate::printf::resolve_printf_call(self.m, f, inst) {
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
