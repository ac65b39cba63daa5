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
mod devicelib;
mod enqueue;
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
                    self.variable_storage_matches_type(inst, *storage);
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
        if f.blocks.is_empty() {
            self.device_function_declaration(f, def);
        }
        let preds = predecessors(f);
        for b in &f.blocks {
            let label = b.label.as_ref().and_then(|l| l.result_id).unwrap_or(0);
            for inst in &b.instructions {
                self.instruction(inst, ret, label, &preds);
                self.input_pointer_uses(inst);
            }
        }
    }

    /// Checks one instruction: each instruction class has its checker in its own file, as
    /// `translate/` has (arith.rs, memory.rs, calls.rs, sync.rs), and says whether the opcode
    /// was its own; opcodes none claims have no operand-type rules beyond the structural ones.
    fn instruction(
        &mut self,
        inst: &Instruction,
        fn_ret: Word,
        label: Word,
        preds: &HashMap<Word, HashSet<Word>>,
    ) {
        let rt = inst.result_type.unwrap_or(0);
        let _claimed = self.arithmetic_instruction(inst, rt)
            || self.relational_instruction(inst, rt)
            || self.conversion_instruction(inst, rt)
            || self.memory_instruction(inst, rt)
            || self.composite_instruction(inst, rt)
            || self.control_instruction(inst, fn_ret)
            || self.sync_instruction(inst, rt)
            || self.enqueue_instruction(inst, rt)
            || self.call_instruction(inst, rt, label, preds);
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
/// (work-item, work-group, device and all-devices scope). The runtime's capability query
/// reports the same; all-devices scope only with SVM, which the runtime checks after parsing
/// (`Module::first_all_devices_scope`).
pub const FENCE_SCOPES: &[Scope] = &[
    Scope::Invocation,
    Scope::Workgroup,
    Scope::Device,
    Scope::CrossDevice,
];
/// Scopes an atomic instruction may name: the device's CL_DEVICE_ATOMIC_MEMORY_CAPABILITIES
/// (work-group, device and — with SVM — all-devices scope, every order from relaxed to
/// sequentially consistent).
pub const ATOMIC_SCOPES: &[Scope] = &[Scope::Workgroup, Scope::Device, Scope::CrossDevice];

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
