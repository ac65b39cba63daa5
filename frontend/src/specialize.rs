//! Specialization constants (SPIR-V 2.12, `clSetProgramSpecializationConstant`): before a module
//! is parsed for a build, every `OpSpecConstant*` is frozen into the plain constant it stands
//! for — the application's value where it set one through the constant's `SpecId`, else the
//! module's default — and every `OpSpecConstantOp` is evaluated. After this pass the rest of the
//! frontend and codegen only ever see ordinary constants.
//!
//! The pass works on words, before rspirv: rspirv decodes only one literal of an
//! `OpSpecConstantOp VectorShuffle`/`CompositeExtract`/`CompositeInsert`, so those modules
//! would not even load. A folded vector or aggregate needs constants for its components; they are
//! inserted just before it with fresh ids, so word offsets in later diagnostics refer to the
//! specialised module (which equals the input when nothing needed inserting). `SpecId`
//! decorations are dropped, since they apply only to specialization constants.
//!
//! Pointer expressions (`Bitcast`, `PtrAccessChain`, `AccessChain` and the generic casts over a
//! program-scope variable: what llvm-spirv emits for `global int *p = &table[2];`) are
//! evaluated to a variable plus a byte offset with the OpenCL memory layout, and re-emitted in
//! the one form later stages read: `ConvertUToPtr(IAdd(ConvertPtrToU(variable), offset))`.

use std::collections::HashMap;

use spirv::Op;

use crate::diagnostics::FrontendError;
use crate::locations::{header_problem, HEADER_WORDS};
use crate::module::{self, Type};
use crate::words::{instructions, Inst};

const SPEC_ID: u32 = spirv::Decoration::SpecId as u32;
/// Composite constants with more scalar leaves than this are not tracked for folding (a chain
/// of composites can otherwise grow exponentially); a spec expression over one is refused.
const MAX_FOLDED_LEAVES: usize = 1 << 16;

/// One specialization constant the application can set.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SpecConstantInfo {
    pub spec_id: u32,
    /// The `spec_size` `clSetProgramSpecializationConstant` must be called with (1 for bool).
    pub size: usize,
}

/// Scalar and composite types as the evaluator needs them.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Ty {
    Bool,
    Int { width: u32, signed: bool },
    Float { width: u32 },
    Vector { elem: u32, count: u32 },
    Array { elem: u32, len: u32 },
    Struct { members: Vec<u32> },
    Other,
}

/// A constant's value: scalars by their bits (masked to the width), composites by component.
#[derive(Clone, Debug, PartialEq)]
enum Value {
    Bool(bool),
    Bits(u64),
    Composite(Vec<Value>),
}

impl Value {
    fn leaves(&self) -> usize {
        match self {
            Value::Composite(parts) => parts.iter().map(Value::leaves).sum(),
            _ => 1,
        }
    }
}

fn op_name(op: u32) -> String {
    Op::from_u32(op).map_or_else(|| format!("opcode {op}"), |o| format!("Op{o:?}"))
}

fn is_spec(op: u32) -> bool {
    (Op::SpecConstantTrue as u32..=Op::SpecConstantOp as u32).contains(&op)
}

/// The specialization constants of a module, by `SpecId`, with the size each value must have.
pub fn spec_constants(words: &[u32]) -> Vec<SpecConstantInfo> {
    let insts = instructions(words);
    let mut spec_ids: HashMap<u32, u32> = HashMap::new();
    let mut types: HashMap<u32, Ty> = HashMap::new();
    let mut out = Vec::new();
    for i in &insts {
        let w = i.words;
        if i.op == Op::Decorate as u32 && w.len() >= 4 && w[2] == SPEC_ID {
            spec_ids.insert(w[1], w[3]);
        }
        record_type(&mut types, i);
        let scalar = i.op == Op::SpecConstantTrue as u32
            || i.op == Op::SpecConstantFalse as u32
            || i.op == Op::SpecConstant as u32;
        if scalar && w.len() >= 3 {
            if let Some(&spec_id) = spec_ids.get(&w[2]) {
                let size = match types.get(&w[1]) {
                    Some(Ty::Bool) => 1,
                    Some(Ty::Int { width, .. } | Ty::Float { width }) => (*width / 8) as usize,
                    _ => continue,
                };
                if !out.iter().any(|s: &SpecConstantInfo| s.spec_id == spec_id) {
                    out.push(SpecConstantInfo { spec_id, size });
                }
            }
        }
    }
    out
}

fn record_type(types: &mut HashMap<u32, Ty>, i: &Inst) {
    let w = i.words;
    let ty = match Op::from_u32(i.op) {
        Some(Op::TypeBool) if w.len() >= 2 => Ty::Bool,
        // Only the widths SPIR-V kernels have: anything else (the validator refuses it later)
        // is not folded, which keeps shifts and masks below in range.
        Some(Op::TypeInt) if w.len() >= 4 && matches!(w[2], 8 | 16 | 32 | 64) => Ty::Int {
            width: w[2],
            signed: w[3] != 0,
        },
        Some(Op::TypeFloat) if w.len() >= 3 && matches!(w[2], 16 | 32 | 64) => {
            Ty::Float { width: w[2] }
        }
        Some(Op::TypeVector) if w.len() >= 4 => Ty::Vector {
            elem: w[2],
            count: w[3],
        },
        Some(Op::TypeArray) if w.len() >= 4 => Ty::Array {
            elem: w[2],
            // The length is an id; resolved when a value of this type is needed.
            len: w[3],
        },
        Some(Op::TypeStruct) if w.len() >= 2 => Ty::Struct {
            members: w[2..].to_vec(),
        },
        Some(op) if op.is_type() && w.len() >= 2 => Ty::Other,
        _ => return,
    };
    types.insert(w[1], ty);
}

/// Freezes every specialization constant. `values` maps `SpecId` to the bytes the application
/// set (little-endian, already checked against [`spec_constants`] sizes). Returns the words
/// unchanged when the module has no specialization constants.
pub fn freeze(words: Vec<u32>, values: &HashMap<u32, Vec<u8>>) -> Result<Vec<u32>, FrontendError> {
    let insts = instructions(&words);
    if !insts.iter().any(|i| is_spec(i.op)) {
        return Ok(words);
    }
    let mut f = Freezer {
        types: HashMap::new(),
        layout: HashMap::new(),
        packed: Default::default(),
        variables: HashMap::new(),
        pointers: HashMap::new(),
        null_pointers: Default::default(),
        addresses: HashMap::new(),
        int64: None,
        in_functions: false,
        consts: HashMap::new(),
        const_types: HashMap::new(),
        spec_ids: HashMap::new(),
        values,
        next_id: words[3],
        out: words[..HEADER_WORDS].to_vec(),
    };
    for i in &insts {
        let w = i.words;
        if i.op == Op::Decorate as u32 && w.len() >= 4 && w[2] == SPEC_ID {
            f.spec_ids.insert(w[1], w[3]);
        }
        if i.op == Op::Decorate as u32 && w.len() >= 3 && w[2] == spirv::Decoration::CPacked as u32
        {
            f.packed.insert(w[1]);
        }
    }
    for i in &insts {
        f.instruction(i)?;
    }
    f.out[3] = f.next_id;
    Ok(f.out)
}

struct Freezer<'v> {
    types: HashMap<u32, Ty>,
    /// Types with their memory layout, for pointer expressions. A type enters only once the
    /// types it contains have (pointers always), so the table has no cycles.
    layout: HashMap<u32, Type>,
    /// Struct types decorated `CPacked`.
    packed: std::collections::HashSet<u32>,
    /// Module-scope variables and their pointer types.
    variables: HashMap<u32, u32>,
    /// Pointer constants evaluated so far: (variable, byte offset).
    pointers: HashMap<u32, (u32, i64)>,
    /// Null pointer constants (`OpConstantNull` of a pointer type, and casts of them).
    null_pointers: std::collections::HashSet<u32>,
    /// Integer constants that are addresses (`ConvertPtrToU` of a pointer constant, plus
    /// offsets): (variable, byte offset).
    addresses: HashMap<u32, (u32, i64)>,
    /// A 64-bit integer type of the module, for re-emitted pointer expressions.
    int64: Option<u32>,
    in_functions: bool,
    consts: HashMap<u32, Value>,
    /// The declared type of every constant, by id.
    const_types: HashMap<u32, u32>,
    spec_ids: HashMap<u32, u32>,
    values: &'v HashMap<u32, Vec<u8>>,
    next_id: u32,
    out: Vec<u32>,
}

fn problem(rule: impl Into<String>, i: &Inst) -> FrontendError {
    let id = i.words.get(2).map_or(String::new(), |id| format!(" %{id}"));
    header_problem(format!("{} [{}{id}]", rule.into(), op_name(i.op)), i.at)
}

fn mask(bits: u64, width: u32) -> u64 {
    if width >= 64 {
        bits
    } else {
        bits & ((1u64 << width) - 1)
    }
}

fn sign_extend(bits: u64, width: u32) -> i64 {
    if width >= 64 {
        bits as i64
    } else {
        let shift = 64 - width;
        ((bits << shift) as i64) >> shift
    }
}

impl Freezer<'_> {
    fn emit(&mut self, words: &[u32]) {
        self.out.extend_from_slice(words);
    }

    fn emit_inst(&mut self, op: Op, operands: &[u32]) {
        self.out
            .push(((operands.len() as u32 + 1) << 16) | op as u32);
        self.out.extend_from_slice(operands);
    }

    /// Adds a type to the layout table once everything it contains is there.
    fn record_layout(&mut self, i: &Inst) {
        let w = i.words;
        let known = |t: &u32| self.layout.contains_key(t);
        let ty = match Op::from_u32(i.op) {
            Some(Op::TypeBool) if w.len() >= 2 => Type::Bool,
            Some(Op::TypeInt) if w.len() >= 4 => {
                if w[2] == 64 {
                    self.int64.get_or_insert(w[1]);
                }
                Type::Int { width: w[2] }
            }
            Some(Op::TypeFloat) if w.len() >= 3 => Type::Float { width: w[2] },
            Some(Op::TypeVector) if w.len() >= 4 && known(&w[2]) => Type::Vector {
                elem: w[2],
                count: w[3],
            },
            Some(Op::TypeArray) if w.len() >= 4 && known(&w[2]) => match self.consts.get(&w[3]) {
                Some(Value::Bits(len)) => Type::Array {
                    elem: w[2],
                    len: *len,
                },
                _ => return,
            },
            Some(Op::TypeStruct) if w.len() >= 2 && w[2..].iter().all(known) => Type::Struct {
                members: w[2..].to_vec(),
                packed: self.packed.contains(&w[1]),
            },
            Some(Op::TypePointer) if w.len() >= 4 => match spirv::StorageClass::from_u32(w[2]) {
                Some(storage) => Type::Pointer {
                    storage,
                    pointee: w[3],
                },
                None => return,
            },
            _ => return,
        };
        self.layout.insert(w[1], ty);
    }

    fn instruction(&mut self, i: &Inst) -> Result<(), FrontendError> {
        let w = i.words;
        record_type(&mut self.types, i);
        self.record_layout(i);
        match Op::from_u32(i.op) {
            Some(Op::Function) => self.in_functions = true,
            Some(Op::Variable) if !self.in_functions && w.len() >= 3 => {
                self.variables.insert(w[2], w[1]);
            }
            _ => {}
        }
        let Some(op) = Op::from_u32(i.op) else {
            self.emit(w);
            return Ok(());
        };
        if (op.is_constant() || is_spec(i.op)) && w.len() >= 3 {
            self.const_types.insert(w[2], w[1]);
        }
        match op {
            Op::Decorate if w.len() >= 4 && w[2] == SPEC_ID => Ok(()),
            Op::ConstantTrue | Op::ConstantFalse if w.len() >= 3 => {
                self.consts
                    .insert(w[2], Value::Bool(op == Op::ConstantTrue));
                self.emit(w);
                Ok(())
            }
            Op::Constant if w.len() >= 4 => {
                let bits = w[3] as u64 | w.get(4).map_or(0, |&h| (h as u64) << 32);
                let width = self.scalar_width(w[1]).unwrap_or(64);
                self.consts.insert(w[2], Value::Bits(mask(bits, width)));
                self.emit(w);
                Ok(())
            }
            Op::ConstantNull if w.len() >= 3 => {
                if matches!(self.layout.get(&w[1]), Some(Type::Pointer { .. })) {
                    self.null_pointers.insert(w[2]);
                }
                if let Some(v) = self.null_of(w[1], &mut MAX_FOLDED_LEAVES.clone()) {
                    self.consts.insert(w[2], v);
                }
                self.emit(w);
                Ok(())
            }
            Op::ConstantComposite if w.len() >= 3 => {
                let leaves: usize = w[3..]
                    .iter()
                    .map(|c| {
                        self.consts
                            .get(c)
                            .map_or(MAX_FOLDED_LEAVES + 1, Value::leaves)
                    })
                    .sum();
                if leaves <= MAX_FOLDED_LEAVES {
                    let parts = w[3..].iter().map(|c| self.consts[c].clone()).collect();
                    self.consts.insert(w[2], Value::Composite(parts));
                }
                self.emit(w);
                Ok(())
            }
            Op::SpecConstantTrue | Op::SpecConstantFalse if w.len() >= 3 => {
                let mut value = op == Op::SpecConstantTrue;
                if let Some(bytes) = self.set_value(w[2]) {
                    value = bytes.iter().any(|&b| b != 0);
                }
                self.consts.insert(w[2], Value::Bool(value));
                let frozen = if value {
                    Op::ConstantTrue
                } else {
                    Op::ConstantFalse
                };
                self.emit_inst(frozen, &w[1..3]);
                Ok(())
            }
            Op::SpecConstant if w.len() >= 4 => {
                let Some(width) = self.scalar_width(w[1]) else {
                    return Err(problem(
                        "SPIR-V 2.12: OpSpecConstant must have an integer or float scalar type",
                        i,
                    ));
                };
                let mut bits = w[3] as u64 | w.get(4).map_or(0, |&h| (h as u64) << 32);
                if let Some(bytes) = self.set_value(w[2]) {
                    bits = bytes
                        .iter()
                        .rev()
                        .fold(0u64, |acc, &b| (acc << 8) | u64::from(b));
                }
                let v = Value::Bits(mask(bits, width));
                self.consts.insert(w[2], v.clone());
                self.emit_scalar(w[1], w[2], &v);
                Ok(())
            }
            Op::SpecConstantComposite if w.len() >= 3 => {
                // Tracked for later folding when every constituent is; the validator checks it.
                let leaves: usize = w[3..]
                    .iter()
                    .map(|c| {
                        self.consts
                            .get(c)
                            .map_or(MAX_FOLDED_LEAVES + 1, Value::leaves)
                    })
                    .sum();
                if leaves <= MAX_FOLDED_LEAVES {
                    let parts = w[3..].iter().map(|c| self.consts[c].clone()).collect();
                    self.consts.insert(w[2], Value::Composite(parts));
                }
                self.emit_inst(Op::ConstantComposite, &w[1..]);
                Ok(())
            }
            Op::SpecConstantOp if w.len() >= 5 && self.address_arithmetic(i) => {
                // Already in the re-emitted form (a module frozen before, e.g. by a link).
                self.emit(w);
                Ok(())
            }
            // A cast of a null pointer is the null pointer of the new type (llvm-spirv-15
            // writes `(generic void *)0` so in the literal of a block at program scope).
            Op::SpecConstantOp
                if w.len() >= 5
                    && self.is_pointer_expression(i)
                    && self.null_pointers.contains(&w[4])
                    && matches!(
                        Op::from_u32(w[3]),
                        Some(Op::Bitcast | Op::PtrCastToGeneric | Op::GenericCastToPtr)
                    ) =>
            {
                self.null_pointers.insert(w[2]);
                if let Some(v) = self.null_of(w[1], &mut MAX_FOLDED_LEAVES.clone()) {
                    self.consts.insert(w[2], v);
                }
                self.emit_inst(Op::ConstantNull, &w[1..3]);
                Ok(())
            }
            Op::SpecConstantOp if w.len() >= 4 && self.is_pointer_expression(i) => {
                let (var, offset) = self.pointer_expression(i)?;
                self.pointers.insert(w[2], (var, offset));
                self.emit_pointer(w[1], w[2], var, offset, i)
            }
            Op::SpecConstantOp if w.len() >= 4 => {
                let v = self.evaluate(i)?;
                self.consts.insert(w[2], v.clone());
                self.emit_value(w[1], w[2], &v, i)
            }
            op if is_spec(op as u32) => Err(problem(
                "SPIR-V 2.3: specialization constant instruction has too few operands",
                i,
            )),
            _ => {
                self.emit(w);
                Ok(())
            }
        }
    }

    /// Records `ConvertPtrToU`, `IAdd`-with-a-constant and `ConvertUToPtr` over addresses of
    /// program-scope variables; false for anything else.
    fn address_arithmetic(&mut self, i: &Inst) -> bool {
        let w = i.words;
        let (id, a) = (w[2], w[4]);
        let of_pointer = |f: &Self, p: u32| -> Option<(u32, i64)> {
            f.variables
                .get(&p)
                .map(|_| (p, 0))
                .or_else(|| f.pointers.get(&p).copied())
        };
        match Op::from_u32(w[3]) {
            Some(Op::ConvertPtrToU) => match of_pointer(self, a) {
                Some(at) => {
                    self.addresses.insert(id, at);
                    true
                }
                None => false,
            },
            Some(Op::IAdd) if w.len() >= 6 => {
                match (self.addresses.get(&a), self.consts.get(&w[5])) {
                    (Some(&(var, off)), Some(Value::Bits(k))) => {
                        self.addresses
                            .insert(id, (var, off.wrapping_add(*k as i64)));
                        true
                    }
                    _ => false,
                }
            }
            Some(Op::ConvertUToPtr) => match self.addresses.get(&a) {
                Some(&at) => {
                    self.pointers.insert(id, at);
                    true
                }
                None => false,
            },
            _ => false,
        }
    }

    fn is_pointer_expression(&self, i: &Inst) -> bool {
        use Op::*;
        let result_is_pointer = matches!(self.layout.get(&i.words[1]), Some(Type::Pointer { .. }));
        result_is_pointer
            && matches!(
                Op::from_u32(i.words[3]),
                Some(
                    Bitcast
                        | PtrAccessChain
                        | InBoundsPtrAccessChain
                        | AccessChain
                        | InBoundsAccessChain
                        | GenericCastToPtr
                        | PtrCastToGeneric
                )
            )
    }

    /// A signed integer constant (an index), sign-extended from its width.
    fn index(&self, id: u32, i: &Inst) -> Result<i64, FrontendError> {
        let width = self
            .const_types
            .get(&id)
            .and_then(|t| self.scalar_width(*t));
        match (self.consts.get(&id), width) {
            (Some(Value::Bits(bits)), Some(w)) => Ok(sign_extend(*bits, w)),
            _ => Err(problem(
                format!("SPIR-V 2.12: index %{id} of a pointer constant expression is not an integer constant"),
                i,
            )),
        }
    }

    /// The (variable, byte offset) a pointer constant expression stands for.
    fn pointer_expression(&self, i: &Inst) -> Result<(u32, i64), FrontendError> {
        let w = i.words;
        let opcode = Op::from_u32(w[3]).unwrap_or(Op::Nop);
        let Some(&base) = w.get(4) else {
            return Err(problem(
                "SPIR-V 2.12: pointer constant expression without a base",
                i,
            ));
        };
        let (var, mut offset, base_ty) = match (self.variables.get(&base), self.pointers.get(&base)) {
            (Some(&ty), _) => (base, 0i64, ty),
            (None, Some(&(var, off))) => (var, off, self.const_types.get(&base).copied().unwrap_or(0)),
            _ => {
                return Err(problem(
                    format!("SPIR-V 2.12: base %{base} of a pointer constant expression is not a program-scope variable or pointer constant"),
                    i,
                ))
            }
        };
        let unknown = || {
            problem(
                "SPIR-V 2.12: pointer constant expression over a type without a memory layout",
                i,
            )
        };
        let Some(Type::Pointer { pointee, .. }) = self.layout.get(&base_ty) else {
            return Err(unknown());
        };
        let mut current = *pointee;
        let indexes: &[u32] = match opcode {
            Op::PtrAccessChain | Op::InBoundsPtrAccessChain => {
                let Some(&element) = w.get(5) else {
                    return Err(problem(
                        "SPIR-V 2.12: OpPtrAccessChain without an Element",
                        i,
                    ));
                };
                let size = module::size_of(&self.layout, current).ok_or_else(unknown)?;
                offset = offset.wrapping_add(self.index(element, i)?.wrapping_mul(size as i64));
                &w[6..]
            }
            Op::AccessChain | Op::InBoundsAccessChain => &w[5..],
            _ => &[],
        };
        for &index in indexes {
            let k = self.index(index, i)?;
            let (step, next) = match self.layout.get(&current) {
                Some(Type::Array { elem, .. } | Type::Vector { elem, .. }) => {
                    let size = module::size_of(&self.layout, *elem).ok_or_else(unknown)?;
                    (k.wrapping_mul(size as i64), *elem)
                }
                Some(Type::Struct { members, .. }) => {
                    let offsets =
                        module::member_offsets(&self.layout, current).ok_or_else(unknown)?;
                    match (usize::try_from(k).ok().and_then(|k| offsets.get(k)), usize::try_from(k).ok().and_then(|k| members.get(k))) {
                        (Some(off), Some(member)) => (*off as i64, *member),
                        _ => {
                            return Err(problem(
                                format!("SPIR-V 2.12: struct member index {k} is out of range in a pointer constant expression"),
                                i,
                            ))
                        }
                    }
                }
                _ => return Err(unknown()),
            };
            offset = offset.wrapping_add(step);
            current = next;
        }
        Ok((var, offset))
    }

    /// Emits pointer constant `id` of type `ty` as ConvertUToPtr(IAdd(ConvertPtrToU(var), off)).
    fn emit_pointer(
        &mut self,
        ty: u32,
        id: u32,
        var: u32,
        offset: i64,
        i: &Inst,
    ) -> Result<(), FrontendError> {
        let Some(int64) = self.int64 else {
            return Err(problem(
                "SPIR-V 2.12: a pointer constant expression needs a 64-bit integer type in the module (Physical64 modules declare one for size_t)",
                i,
            ));
        };
        let mut fresh = || -> Result<u32, FrontendError> {
            let n = self.next_id;
            self.next_id = n
                .checked_add(1)
                .filter(|&b| b <= 0x0400_0000)
                .ok_or_else(|| {
                    problem(
                        "SPIR-V 2.3: folding specialization constants exceeds the id bound",
                        i,
                    )
                })?;
            Ok(n)
        };
        let (address, off, sum) = (fresh()?, fresh()?, fresh()?);
        self.emit_inst(
            Op::SpecConstantOp,
            &[int64, address, Op::ConvertPtrToU as u32, var],
        );
        self.emit_inst(
            Op::Constant,
            &[
                int64,
                off,
                offset as u64 as u32,
                ((offset as u64) >> 32) as u32,
            ],
        );
        self.emit_inst(
            Op::SpecConstantOp,
            &[int64, sum, Op::IAdd as u32, address, off],
        );
        self.emit_inst(Op::SpecConstantOp, &[ty, id, Op::ConvertUToPtr as u32, sum]);
        Ok(())
    }

    fn set_value(&self, id: u32) -> Option<&Vec<u8>> {
        self.values.get(self.spec_ids.get(&id)?)
    }

    fn scalar_width(&self, ty: u32) -> Option<u32> {
        match self.types.get(&ty)? {
            Ty::Int { width, .. } | Ty::Float { width } => Some(*width),
            _ => None,
        }
    }

    /// The zero value of `ty`, or None when it is not foldable or exceeds `budget` leaves.
    fn null_of(&self, ty: u32, budget: &mut usize) -> Option<Value> {
        *budget = budget.checked_sub(1)?;
        let repeated = |elem: u32, n: u64, budget: &mut usize| -> Option<Value> {
            if n > *budget as u64 {
                return None;
            }
            (0..n)
                .map(|_| self.null_of(elem, budget))
                .collect::<Option<_>>()
                .map(Value::Composite)
        };
        Some(match self.types.get(&ty)? {
            Ty::Bool => Value::Bool(false),
            Ty::Int { .. } | Ty::Float { .. } => Value::Bits(0),
            Ty::Vector { elem, count } => repeated(*elem, u64::from(*count), budget)?,
            Ty::Array { elem, len } => match self.consts.get(len)? {
                Value::Bits(n) => repeated(*elem, *n, budget)?,
                _ => return None,
            },
            Ty::Struct { members } => Value::Composite(
                members
                    .iter()
                    .map(|m| self.null_of(*m, budget))
                    .collect::<Option<_>>()?,
            ),
            Ty::Other => return None,
        })
    }

    fn emit_scalar(&mut self, ty: u32, id: u32, v: &Value) {
        match v {
            Value::Bool(b) => {
                let op = if *b {
                    Op::ConstantTrue
                } else {
                    Op::ConstantFalse
                };
                self.emit_inst(op, &[ty, id]);
            }
            Value::Bits(bits) => {
                let (width, signed) = match self.types.get(&ty) {
                    Some(Ty::Int { width, signed }) => (*width, *signed),
                    Some(Ty::Float { width }) => (*width, false),
                    _ => (32, false),
                };
                if width > 32 {
                    self.emit_inst(Op::Constant, &[ty, id, *bits as u32, (*bits >> 32) as u32]);
                } else {
                    // SPIR-V 2.2.1: narrow literals are sign-extended for signed integer types.
                    let word = if signed {
                        sign_extend(*bits, width) as u32
                    } else {
                        *bits as u32
                    };
                    self.emit_inst(Op::Constant, &[ty, id, word]);
                }
            }
            Value::Composite(_) => {}
        }
    }

    /// Emits `v` as constant `id` of type `ty`, first emitting fresh constants for the
    /// components of a composite.
    fn emit_value(&mut self, ty: u32, id: u32, v: &Value, i: &Inst) -> Result<(), FrontendError> {
        match v {
            Value::Composite(parts) => {
                let member_types: Vec<u32> = match self.types.get(&ty) {
                    // A count beyond the value's (a corrupt type) fails the check below; it
                    // must not size an allocation.
                    Some(Ty::Vector { elem, count }) => {
                        vec![*elem; (*count as usize).min(parts.len() + 1)]
                    }
                    Some(Ty::Array { elem, .. }) => vec![*elem; parts.len()],
                    Some(Ty::Struct { members }) => members.clone(),
                    _ => {
                        return Err(problem(
                            format!(
                                "SPIR-V 2.12: result type %{ty} does not fit a composite value"
                            ),
                            i,
                        ))
                    }
                };
                if member_types.len() != parts.len() {
                    return Err(problem(
                        format!(
                            "SPIR-V 2.12: result type %{ty} has {} components, the value {}",
                            member_types.len(),
                            parts.len()
                        ),
                        i,
                    ));
                }
                let mut ids = vec![ty, id];
                for (part, part_ty) in parts.iter().zip(member_types) {
                    let part_id = self.next_id;
                    self.next_id = self
                        .next_id
                        .checked_add(1)
                        .filter(|&n| n <= 0x0400_0000)
                        .ok_or_else(|| {
                            problem(
                                "SPIR-V 2.3: folding specialization constants exceeds the id bound",
                                i,
                            )
                        })?;
                    self.emit_value(part_ty, part_id, part, i)?;
                    ids.push(part_id);
                }
                self.emit_inst(Op::ConstantComposite, &ids);
                Ok(())
            }
            scalar => {
                self.emit_scalar(ty, id, scalar);
                Ok(())
            }
        }
    }

    fn operand(&self, i: &Inst, index: usize) -> Result<Value, FrontendError> {
        let Some(&id) = i.words.get(4 + index) else {
            return Err(problem(
                format!("SPIR-V 2.12: OpSpecConstantOp is missing operand {index}"),
                i,
            ));
        };
        self.consts.get(&id).cloned().ok_or_else(|| {
            problem(
                format!("SPIR-V 2.12: operand %{id} of OpSpecConstantOp is not a constant defined before it"),
                i,
            )
        })
    }

    /// The scalar component type of `ty` (itself, or a vector's element).
    fn component_type(&self, ty: u32) -> Option<Ty> {
        match self.types.get(&ty)? {
            Ty::Vector { elem, .. } => self.types.get(elem).cloned(),
            t => Some(t.clone()),
        }
    }

    fn evaluate(&self, i: &Inst) -> Result<Value, FrontendError> {
        let w = i.words;
        let result_ty = w[1];
        let inner = w[3];
        let Some(opcode) = Op::from_u32(inner) else {
            return Err(problem(
                format!("SPIR-V 2.12: OpSpecConstantOp names unknown opcode {inner}"),
                i,
            ));
        };
        let Some(result_comp) = self.component_type(result_ty) else {
            return Err(problem(
                format!("SPIR-V 2.12: result type %{result_ty} is not a type"),
                i,
            ));
        };
        let literals = &w[4..];
        use Op::*;
        match opcode {
            VectorShuffle => {
                let a = self.operand(i, 0)?;
                let b = self.operand(i, 1)?;
                let (Value::Composite(a), Value::Composite(b)) = (a, b) else {
                    return Err(problem("SPIR-V 3.49.12: OpVectorShuffle operands must be vectors", i));
                };
                let both: Vec<Value> = a.iter().chain(&b).cloned().collect();
                let zero = self.null_of(result_ty, &mut 64).and_then(|v| match v {
                    Value::Composite(p) => p.into_iter().next(),
                    _ => None,
                });
                literals
                    .get(2..)
                    .unwrap_or(&[])
                    .iter()
                    .map(|&c| {
                        if c == u32::MAX {
                            // An undefined component: any value will do.
                            zero.clone().ok_or_else(|| problem("SPIR-V 2.12: bad shuffle result type", i))
                        } else {
                            both.get(c as usize).cloned().ok_or_else(|| {
                                problem(format!("SPIR-V 3.49.12: shuffle component {c} is out of range"), i)
                            })
                        }
                    })
                    .collect::<Result<Vec<_>, _>>()
                    .map(Value::Composite)
            }
            CompositeExtract => {
                let mut v = self.operand(i, 0)?;
                for &index in literals.get(1..).unwrap_or(&[]) {
                    v = match v {
                        Value::Composite(mut parts) if (index as usize) < parts.len() => {
                            parts.swap_remove(index as usize)
                        }
                        _ => {
                            return Err(problem(
                                format!("SPIR-V 3.49.12: OpCompositeExtract index {index} is out of range"),
                                i,
                            ))
                        }
                    };
                }
                Ok(v)
            }
            CompositeInsert => {
                let object = self.operand(i, 0)?;
                let mut composite = self.operand(i, 1)?;
                let mut slot = &mut composite;
                for &index in literals.get(2..).unwrap_or(&[]) {
                    slot = match slot {
                        Value::Composite(parts) if (index as usize) < parts.len() => {
                            &mut parts[index as usize]
                        }
                        _ => {
                            return Err(problem(
                                format!("SPIR-V 3.49.12: OpCompositeInsert index {index} is out of range"),
                                i,
                            ))
                        }
                    };
                }
                *slot = object;
                Ok(composite)
            }
            Select => {
                let cond = self.operand(i, 0)?;
                let a = self.operand(i, 1)?;
                let b = self.operand(i, 2)?;
                match cond {
                    Value::Bool(c) => Ok(if c { a } else { b }),
                    Value::Composite(c) => match (a, b) {
                        (Value::Composite(a), Value::Composite(b))
                            if a.len() == c.len() && b.len() == c.len() =>
                        {
                            Ok(Value::Composite(
                                c.iter()
                                    .zip(a.into_iter().zip(b))
                                    .map(|(c, (a, b))| if *c == Value::Bool(true) { a } else { b })
                                    .collect(),
                            ))
                        }
                        _ => Err(problem("SPIR-V 3.49.15: OpSelect vector condition needs vector operands of its size", i)),
                    },
                    Value::Bits(_) => Err(problem("SPIR-V 3.49.15: OpSelect condition must be a bool", i)),
                }
            }
            AccessChain | InBoundsAccessChain | PtrAccessChain | InBoundsPtrAccessChain
            | ConvertPtrToU | ConvertUToPtr | GenericCastToPtr | PtrCastToGeneric => Err(problem(
                format!("OpSpecConstantOp {opcode:?} (a pointer expression) is not supported by Ferrocl's specialization; use a constant index instead"),
                i,
            )),
            _ => {
                let arity = match opcode {
                    SConvert | UConvert | FConvert | SNegate | Not | LogicalNot | FNegate
                    | ConvertFToS | ConvertSToF | ConvertFToU | ConvertUToF | Bitcast => 1,
                    IAdd | ISub | IMul | UDiv | SDiv | UMod | SRem | SMod | ShiftRightLogical
                    | ShiftRightArithmetic | ShiftLeftLogical | BitwiseOr | BitwiseXor
                    | BitwiseAnd | LogicalOr | LogicalAnd | LogicalEqual | LogicalNotEqual
                    | IEqual | INotEqual | ULessThan | SLessThan | UGreaterThan | SGreaterThan
                    | ULessThanEqual | SLessThanEqual | UGreaterThanEqual | SGreaterThanEqual
                    | FAdd | FSub | FMul | FDiv | FRem | FMod => 2,
                    other => {
                        return Err(problem(
                            format!("SPIR-V 2.12 / env 2.1: Op{other:?} is not allowed in OpSpecConstantOp for the Kernel capability"),
                            i,
                        ))
                    }
                };
                if w.len() != 4 + arity {
                    return Err(problem(
                        format!("SPIR-V 2.12: OpSpecConstantOp {opcode:?} takes {arity} operand(s)"),
                        i,
                    ));
                }
                let operand_ty = |k: usize| -> Option<Ty> {
                    let id = w[4 + k];
                    // The operand's declared type, found through its defining constant's type.
                    self.const_types.get(&id).and_then(|t| self.component_type(*t))
                };
                let a_ty = operand_ty(0).ok_or_else(|| problem("SPIR-V 2.12: operand type unknown", i))?;
                let a = self.operand(i, 0)?;
                let b = if arity == 2 { Some(self.operand(i, 1)?) } else { None };
                let b_ty = if arity == 2 { operand_ty(1) } else { None };
                let scalar = |x: &Value, y: Option<&Value>| -> Result<Value, FrontendError> {
                    fold(opcode, x, y, &a_ty, b_ty.as_ref(), &result_comp)
                        .map_err(|why| problem(format!("SPIR-V 2.12: OpSpecConstantOp {opcode:?}: {why}"), i))
                };
                match (&a, &b) {
                    (Value::Composite(xs), None) => xs
                        .iter()
                        .map(|x| scalar(x, None))
                        .collect::<Result<_, _>>()
                        .map(Value::Composite),
                    (Value::Composite(xs), Some(Value::Composite(ys))) if xs.len() == ys.len() => xs
                        .iter()
                        .zip(ys)
                        .map(|(x, y)| scalar(x, Some(y)))
                        .collect::<Result<_, _>>()
                        .map(Value::Composite),
                    (Value::Composite(_), Some(_)) | (_, Some(Value::Composite(_))) => Err(problem(
                        "SPIR-V 2.12: OpSpecConstantOp operands must both be scalars or vectors of one size",
                        i,
                    )),
                    (x, y) => scalar(x, y.as_ref()),
                }
            }
        }
    }
}

fn as_f64(bits: u64, width: u32) -> Result<f64, String> {
    match width {
        16 => Ok(half_to_f64(bits as u16)),
        32 => Ok(f64::from(f32::from_bits(bits as u32))),
        64 => Ok(f64::from_bits(bits)),
        w => Err(format!("{w}-bit floats are not folded")),
    }
}

/// `x` (exact in f64 for f32 operands of + - * / and conversions; for halves, f64 results of
/// + - * / round correctly to half, 53 ≥ 2·11 + 2) rounded to `width` bits.
fn from_f64(x: f64, width: u32) -> Result<Value, String> {
    match width {
        16 => Ok(Value::Bits(u64::from(f64_to_half(x)))),
        32 => Ok(Value::Bits(u64::from((x as f32).to_bits()))),
        64 => Ok(Value::Bits(x.to_bits())),
        w => Err(format!("{w}-bit floats are not folded")),
    }
}

/// The value of half encoding `h`.
fn half_to_f64(h: u16) -> f64 {
    let sign = if h & 0x8000 != 0 { -1.0 } else { 1.0 };
    let e = i32::from((h >> 10) & 0x1f);
    let m = f64::from(h & 0x3ff);
    sign * match e {
        0x1f if m == 0.0 => f64::INFINITY,
        0x1f => f64::NAN,
        0 => m * 2f64.powi(-24),
        _ => (1024.0 + m) * 2f64.powi(e - 25),
    }
}

/// `x` rounded once to the nearest half, ties to even (the default rounding of folded half
/// arithmetic); NaNs become the quiet NaN with x's sign.
fn f64_to_half(x: f64) -> u16 {
    let sign: u16 = if x.is_sign_negative() { 0x8000 } else { 0 };
    if x.is_nan() {
        return sign | 0x7e00;
    }
    let a = x.abs();
    if a >= 65520.0 {
        return sign | 0x7c00;
    }
    if a == 0.0 {
        return sign;
    }
    // a = n · 2^q with q the half quantum at a's binade (2^-24 for subnormals); a ≥ 2^-1074
    // so the exponent fits, and a / 2^q < 2^11 is exact in f64.
    let exponent = (a.log2().floor() as i32).clamp(-14, 15);
    // log2 may be off by one at binade edges: fix the binade exactly.
    let exponent = if a < 2f64.powi(exponent) {
        (exponent - 1).max(-14)
    } else if exponent < 15 && a >= 2f64.powi(exponent + 1) {
        exponent + 1
    } else {
        exponent
    };
    let q = exponent - 10;
    let scaled = a * 2f64.powi(-q);
    let n = scaled.floor();
    let rem = scaled - n;
    let n = n as u64 + u64::from(rem > 0.5 || (rem == 0.5 && (n as u64) & 1 == 1));
    // Subnormals encode as n; normals as (biased exponent - 1) << 10 plus n in [2^10, 2^11].
    sign | ((((q + 24) as u64) << 10) + n) as u16
}

/// Folds one scalar operation. `a_ty`/`b_ty` are the operands' scalar types, `r` the result's.
fn fold(
    op: Op,
    x: &Value,
    y: Option<&Value>,
    a_ty: &Ty,
    b_ty: Option<&Ty>,
    r: &Ty,
) -> Result<Value, String> {
    use Op::*;
    let bool_of = |v: &Value| match v {
        Value::Bool(b) => Ok(*b),
        _ => Err("expects bool operands".to_owned()),
    };
    let bits_of = |v: &Value| match v {
        Value::Bits(b) => Ok(*b),
        _ => Err("expects numeric operands".to_owned()),
    };
    let int_width = |t: &Ty| match t {
        Ty::Int { width, .. } => Ok(*width),
        _ => Err("expects integer operands".to_owned()),
    };
    let float_width = |t: &Ty| match t {
        Ty::Float { width } => Ok(*width),
        _ => Err("expects float operands".to_owned()),
    };
    match op {
        LogicalNot => return Ok(Value::Bool(!bool_of(x)?)),
        LogicalOr | LogicalAnd | LogicalEqual | LogicalNotEqual => {
            let (a, b) = (bool_of(x)?, bool_of(y.ok_or("missing operand")?)?);
            return Ok(Value::Bool(match op {
                LogicalOr => a | b,
                LogicalAnd => a & b,
                LogicalEqual => a == b,
                _ => a != b,
            }));
        }
        _ => {}
    }
    let a = bits_of(x)?;
    let b = y.map(bits_of).transpose()?;
    let need_b = || b.ok_or_else(|| "missing operand".to_owned());
    let rw = || match r {
        Ty::Int { width, .. } | Ty::Float { width } => Ok(*width),
        _ => Err("result must be an integer or float".to_owned()),
    };
    match op {
        FAdd | FSub | FMul | FDiv | FRem | FMod | FNegate => {
            let w = float_width(a_ty)?;
            if rw()? != w || b_ty.is_some_and(|t| float_width(t) != Ok(w)) {
                return Err("operands and result must be floats of one width".into());
            }
            let xa = as_f64(a, w)?;
            if op == FNegate {
                return Ok(Value::Bits(a ^ (1u64 << (w - 1))));
            }
            let xb = as_f64(need_b()?, w)?;
            if w == 32 {
                // f32 arithmetic directly: one rounding, as the device does it.
                let (fa, fb) = (xa as f32, xb as f32);
                let v = match op {
                    FAdd => fa + fb,
                    FSub => fa - fb,
                    FMul => fa * fb,
                    FDiv => fa / fb,
                    FRem => fa % fb,
                    _ => {
                        let m = fa % fb;
                        if m != 0.0 && (m < 0.0) != (fb < 0.0) {
                            m + fb
                        } else {
                            m
                        }
                    }
                };
                return Ok(Value::Bits(u64::from(v.to_bits())));
            }
            let v = match op {
                FAdd => xa + xb,
                FSub => xa - xb,
                FMul => xa * xb,
                FDiv => xa / xb,
                FRem => xa % xb,
                _ => {
                    let m = xa % xb;
                    if m != 0.0 && (m < 0.0) != (xb < 0.0) {
                        m + xb
                    } else {
                        m
                    }
                }
            };
            from_f64(v, w)
        }
        FConvert => from_f64(as_f64(a, float_width(a_ty)?)?, rw()?),
        ConvertFToS | ConvertFToU => {
            let f = as_f64(a, float_width(a_ty)?)?;
            let w = int_width(r)?;
            // Out of range is undefined in SPIR-V: saturate, NaN to 0, as codegen does.
            let v = if op == ConvertFToS {
                let lo = -(2f64.powi(w as i32 - 1));
                let hi = 2f64.powi(w as i32 - 1) - 1.0;
                if f.is_nan() {
                    0
                } else {
                    f.trunc().clamp(lo, hi) as i64 as u64
                }
            } else {
                let hi = 2f64.powi(w as i32) - 1.0;
                if f.is_nan() {
                    0
                } else if w == 64 {
                    f.trunc().max(0.0) as u64
                } else {
                    f.trunc().clamp(0.0, hi) as u64
                }
            };
            Ok(Value::Bits(mask(v, w)))
        }
        ConvertSToF | ConvertUToF => {
            let w = int_width(a_ty)?;
            let fw = float_width(r)?;
            match (op, fw) {
                (ConvertSToF, 32) => {
                    Ok(Value::Bits(u64::from((sign_extend(a, w) as f32).to_bits())))
                }
                (ConvertSToF, 64) => Ok(Value::Bits((sign_extend(a, w) as f64).to_bits())),
                (_, 32) => Ok(Value::Bits(u64::from((a as f32).to_bits()))),
                (_, 64) => Ok(Value::Bits((a as f64).to_bits())),
                // Exact in f64 up to 2^53; beyond, far past half's range either way.
                (ConvertSToF, 16) => from_f64(sign_extend(a, w) as f64, 16),
                (_, 16) => from_f64(a as f64, 16),
                _ => Err(format!("{fw}-bit floats are not folded")),
            }
        }
        Bitcast => {
            let from = match a_ty {
                Ty::Int { width, .. } | Ty::Float { width } => *width,
                _ => return Err("bitcast of a non-scalar".into()),
            };
            if from != rw()? {
                return Err(
                    "bitcast between different widths is only folded for scalars of one width"
                        .into(),
                );
            }
            Ok(Value::Bits(a))
        }
        SConvert => Ok(Value::Bits(mask(
            sign_extend(a, int_width(a_ty)?) as u64,
            int_width(r)?,
        ))),
        UConvert => Ok(Value::Bits(mask(a, int_width(r)?))),
        _ => {
            let w = int_width(a_ty)?;
            let shift_op = matches!(
                op,
                ShiftRightLogical | ShiftRightArithmetic | ShiftLeftLogical
            );
            match b_ty {
                Some(Ty::Int { width, .. }) if *width == w || shift_op => {}
                Some(_) => return Err("operands must be integers of one width".into()),
                None => {}
            }
            let s = |v: u64| sign_extend(v, w);
            let b = if op == SNegate || op == Not {
                0
            } else {
                need_b()?
            };
            let shift = b % u64::from(w);
            let bool_result = |c: bool| Ok(Value::Bool(c));
            let v = match op {
                SNegate => a.wrapping_neg(),
                Not => !a,
                IAdd => a.wrapping_add(b),
                ISub => a.wrapping_sub(b),
                IMul => a.wrapping_mul(b),
                // Division by zero is undefined: fold to 0 rather than fail the build.
                UDiv => a.checked_div(b).unwrap_or(0),
                UMod => a.checked_rem(b).unwrap_or(0),
                SDiv => s(a).checked_div(s(b)).unwrap_or(0) as u64,
                SRem => s(a).checked_rem(s(b)).unwrap_or(0) as u64,
                SMod => {
                    let m = s(a).checked_rem(s(b)).unwrap_or(0);
                    (if m != 0 && (m < 0) != (s(b) < 0) {
                        m + s(b)
                    } else {
                        m
                    }) as u64
                }
                ShiftRightLogical => a >> shift,
                ShiftRightArithmetic => (s(a) >> shift) as u64,
                ShiftLeftLogical => a << shift,
                BitwiseOr => a | b,
                BitwiseXor => a ^ b,
                BitwiseAnd => a & b,
                IEqual => return bool_result(a == b),
                INotEqual => return bool_result(a != b),
                ULessThan => return bool_result(a < b),
                UGreaterThan => return bool_result(a > b),
                ULessThanEqual => return bool_result(a <= b),
                UGreaterThanEqual => return bool_result(a >= b),
                SLessThan => return bool_result(s(a) < s(b)),
                SGreaterThan => return bool_result(s(a) > s(b)),
                SLessThanEqual => return bool_result(s(a) <= s(b)),
                SGreaterThanEqual => return bool_result(s(a) >= s(b)),
                other => return Err(format!("Op{other:?} is not folded")),
            };
            Ok(Value::Bits(mask(v, rw()?.min(w))))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn halves_round_trip_and_round_to_nearest_even() {
        for h in (0..0x7c00u16).chain(0x8000..0xfc00) {
            assert_eq!(f64_to_half(half_to_f64(h)), h, "{h:#06x}");
        }
        assert_eq!(f64_to_half(1.0 + 2f64.powi(-11)), 0x3c00);
        assert_eq!(f64_to_half(1.0 + 3.0 * 2f64.powi(-11)), 0x3c02);
        assert_eq!(f64_to_half(65519.9), 0x7bff);
        assert_eq!(f64_to_half(65520.0), 0x7c00);
        assert_eq!(f64_to_half(2f64.powi(-25)), 0);
        assert_eq!(f64_to_half(1.5 * 2f64.powi(-25)), 1);
        assert_eq!(f64_to_half(5e-324), 0);
        assert_eq!(f64_to_half(-1e300), 0xfc00);
    }
}

#[cfg(test)]
mod width_tests {
    use super::*;

    fn inst(op: Op, operands: &[u32]) -> Vec<u32> {
        let mut v = vec![((operands.len() as u32 + 1) << 16) | op as u32];
        v.extend_from_slice(operands);
        v
    }

    /// Found by fuzzing (crash ca128463): a shift on a zero-width integer type made the
    /// specializer divide by zero. Unusual widths are not folded: an error, never a panic.
    #[test]
    fn odd_integer_widths_are_refused_not_folded() {
        for width in [0u32, 1, 7, 65, 0xffff_ffff] {
            let mut words = vec![0x0723_0203, 0x0001_0000, 0, 10, 0];
            words.extend(inst(Op::TypeInt, &[1, width, 0]));
            words.extend(inst(Op::SpecConstant, &[1, 2, 5]));
            words.extend(inst(
                Op::SpecConstantOp,
                &[1, 3, Op::ShiftLeftLogical as u32, 2, 2],
            ));
            words.extend(inst(Op::SpecConstantOp, &[1, 4, Op::SNegate as u32, 2]));
            assert!(freeze(words, &HashMap::new()).is_err(), "width {width}");
        }
    }

    /// Found by fuzzing: a folded vector given a result type of 2^31 components made the
    /// specializer allocate 2 GiB before noticing the mismatch.
    #[test]
    fn huge_vector_result_types_are_refused_without_allocating() {
        let mut words = vec![0x0723_0203, 0x0001_0000, 0, 10, 0];
        words.extend(inst(Op::TypeInt, &[1, 32, 0]));
        words.extend(inst(Op::TypeVector, &[2, 1, 2]));
        words.extend(inst(Op::TypeVector, &[3, 1, 0x8000_0000]));
        words.extend(inst(Op::SpecConstant, &[1, 4, 5]));
        words.extend(inst(Op::SpecConstantComposite, &[2, 5, 4, 4]));
        words.extend(inst(Op::SpecConstantOp, &[3, 6, Op::IAdd as u32, 5, 5]));
        assert!(freeze(words, &HashMap::new()).is_err());
    }
}
