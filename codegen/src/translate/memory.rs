//! Memory opcodes: loads and stores of scalarised values with OpenCL layout, access chains,
//! `OpCopyMemory*`, and the values of module-scope ids (constants, program-scope variables,
//! built-in variables).

use cranelift_codegen::ir::{self, types, InstBuilder, MemFlagsData, Value};
use ferrocl_frontend::spirv::{Decoration, Op, StorageClass, Word};
use ferrocl_frontend::Type;
use ferrocl_frontend::{Inst, SpecConstantOp};

use super::function::{err, inst_desc, Translator, VarStorage};
use super::values::{scalar_ir_type, Val};
use crate::checked::CheckKind;
use crate::entry_points::EntryPoint;
use crate::error::BuildError;

/// No `aligned` flag: OpenCL pointers may be unaligned for the access width (vloadn, packed
/// structs) and Cranelift would fold such loads into SSE ops that fault.
fn flags() -> MemFlagsData {
    MemFlagsData::new()
}

impl Translator<'_, '_, '_> {
    /// Loads a value of type `ty` from `addr`.
    pub(crate) fn load_val(&mut self, ty: Word, addr: Value) -> Result<Val, BuildError> {
        self.load_at(ty, addr, 0)
    }

    fn load_at(&mut self, ty: Word, addr: Value, offset: i32) -> Result<Val, BuildError> {
        let m = self.m;
        Ok(match m.ty(ty) {
            Some(Type::Vector { elem, count }) => {
                let esize = m.size_of(*elem).unwrap_or(0) as i32;
                Val::C(
                    (0..*count as i32)
                        .map(|i| self.load_at(*elem, addr, offset + i * esize))
                        .collect::<Result<_, _>>()?,
                )
            }
            Some(Type::Array { elem, len }) => {
                let esize = m.size_of(*elem).unwrap_or(0) as i32;
                if *len > 4096 {
                    return err("error: loading an array of more than 4096 elements as a value is not supported\n");
                }
                Val::C(
                    (0..*len as i32)
                        .map(|i| self.load_at(*elem, addr, offset + i * esize))
                        .collect::<Result<_, _>>()?,
                )
            }
            Some(Type::Struct { members, .. }) => {
                let offsets = m.member_offsets(ty).unwrap_or_default();
                let members = members.clone();
                Val::C(
                    members
                        .iter()
                        .zip(offsets)
                        .map(|(&mt, mo)| self.load_at(mt, addr, offset + mo as i32))
                        .collect::<Result<_, _>>()?,
                )
            }
            Some(Type::Bool) => {
                let byte = self.b.ins().load(types::I8, flags(), addr, offset);
                Val::S(
                    self.b
                        .ins()
                        .icmp_imm_s(ir::condcodes::IntCC::NotEqual, byte, 0),
                )
            }
            Some(Type::Float { width: 16 }) => Val::S(self.load_half(addr, offset)?),
            _ => {
                let t = scalar_ir_type(m, ty)?;
                Val::S(self.b.ins().load(t, flags(), addr, offset))
            }
        })
    }

    pub(crate) fn store_val(&mut self, ty: Word, addr: Value, v: &Val) -> Result<(), BuildError> {
        self.store_at(ty, addr, 0, v)
    }

    fn store_at(&mut self, ty: Word, addr: Value, offset: i32, v: &Val) -> Result<(), BuildError> {
        let m = self.m;
        match m.ty(ty) {
            Some(Type::Vector { elem, .. }) | Some(Type::Array { elem, .. }) => {
                let esize = m.size_of(*elem).unwrap_or(0) as i32;
                for (i, c) in v.children()?.iter().enumerate() {
                    self.store_at(*elem, addr, offset + i as i32 * esize, c)?;
                }
            }
            Some(Type::Struct { members, .. }) => {
                let offsets = m.member_offsets(ty).unwrap_or_default();
                for ((&mt, mo), c) in members.clone().iter().zip(offsets).zip(v.children()?) {
                    self.store_at(mt, addr, offset + mo as i32, c)?;
                }
            }
            Some(Type::Float { width: 16 }) => self.store_half(v.scalar()?, addr, offset)?,
            _ => {
                self.b.ins().store(flags(), v.scalar()?, addr, offset);
            }
        }
        Ok(())
    }

    pub(crate) fn load(&mut self, inst: Inst<'_>) -> Result<(), BuildError> {
        let ptr = inst.load()?.pointer;
        let ty = self.result_type(inst)?;
        if let Some(VarStorage::Promoted { vars, shape }) = self.frame().vars.get(&ptr) {
            let (vars, shape) = (vars.clone(), shape.clone());
            let leaves: Vec<Value> = vars.iter().map(|v| self.b.use_var(*v)).collect();
            let v = shape.assemble(&mut leaves.into_iter())?;
            self.define(inst, v)?;
            return Ok(());
        }
        if let Some(v) = self.builtin_load(ptr, ty)? {
            self.define(inst, v)?;
            return Ok(());
        }
        let addr = self.value(ptr)?.scalar()?;
        let size = self.m.size_of(ty).unwrap_or(0);
        self.check_access(ptr, addr, size, CheckKind::Read)?;
        let v = self.load_val(ty, addr)?;
        self.define(inst, v)?;
        Ok(())
    }

    pub(crate) fn store(&mut self, inst: Inst<'_>) -> Result<(), BuildError> {
        let store = inst.store()?;
        let ptr = store.pointer;
        let v = self.value(store.object)?;
        if let Some(VarStorage::Promoted { vars, shape }) = self.frame().vars.get(&ptr) {
            let (vars, shape) = (vars.clone(), shape.clone());
            let mut want = Vec::new();
            shape.leaf_types(&mut want);
            self.check_leaf_types(&v.flat(), &want)?;
            for (var, leaf) in vars.iter().zip(v.flat()) {
                self.b.def_var(*var, leaf);
            }
            return Ok(());
        }
        let value_ty = self
            .m
            .type_of(store.object)
            .ok_or_else(|| BuildError::new("error: stored value has no type\n"))?;
        let addr = self.value(ptr)?.scalar()?;
        let size = self.m.size_of(value_ty).unwrap_or(0);
        self.check_access(ptr, addr, size, CheckKind::Write)?;
        self.store_val(value_ty, addr, &v)
    }

    pub(crate) fn access_chain(&mut self, inst: Inst<'_>) -> Result<(), BuildError> {
        let m = self.m;
        let chain = inst.access_chain()?;
        let base = chain.base;
        if self.is_builtin_variable(base) {
            // Pointer to one component of a built-in vector: `get_global_id(i)` through memory.
            let Some(&index) = chain.indices.first() else {
                return err(format!("error: {} has no index\n", inst_desc(inst)));
            };
            let index = self.value(index)?;
            let id = inst.result_id().unwrap_or(0);
            self.frame().builtin_ptrs.insert(id, (base, index));
            return Ok(());
        }
        let base_ty = m
            .type_of(base)
            .ok_or_else(|| BuildError::new("error: access chain base has no type\n"))?;
        let Some(Type::Pointer { pointee, .. }) = m.ty(base_ty).cloned() else {
            return err("error: access chain base is not a pointer\n");
        };
        let mut addr = self.value(base)?.scalar()?;
        let mut cur = pointee;
        if let Some(element) = chain.element {
            let size = m
                .size_of(cur)
                .ok_or_else(|| BuildError::new("error: element type has no size\n"))?;
            addr = self.scaled_add(addr, element, size)?;
        }
        for &i in &chain.indices {
            match m.ty(cur).cloned() {
                Some(Type::Struct { members, .. }) => {
                    let idx = self.constant_index(inst, i)? as usize;
                    let offsets = m.member_offsets(cur).unwrap_or_default();
                    let (Some(&mt), Some(&off)) = (members.get(idx), offsets.get(idx)) else {
                        return err(format!("error: struct member index {idx} out of range\n"));
                    };
                    if off != 0 {
                        addr = self.b.ins().iadd_imm_s(addr, off as i64);
                    }
                    cur = mt;
                }
                Some(Type::Array { elem, .. })
                | Some(Type::RuntimeArray { elem })
                | Some(Type::Vector { elem, .. }) => {
                    let size = m
                        .size_of(elem)
                        .ok_or_else(|| BuildError::new("error: element type has no size\n"))?;
                    addr = self.scaled_add(addr, i, size)?;
                    cur = elem;
                }
                other => return err(format!("error: cannot index into {other:?}\n")),
            }
        }
        self.define(inst, Val::S(addr))?;
        Ok(())
    }

    /// `addr + index * size`, with the index sign-extended to 64 bits.
    fn scaled_add(&mut self, addr: Value, index: Word, size: u64) -> Result<Value, BuildError> {
        let idx = self.scalar(index)?;
        let idx = self.sext_i64(idx);
        let scaled = self.b.ins().imul_imm_s(idx, size as i64);
        Ok(self.b.ins().iadd(addr, scaled))
    }

    pub(crate) fn sext_i64(&mut self, v: Value) -> Value {
        let t = self.b.func.dfg.value_type(v);
        if t == types::I64 {
            v
        } else {
            self.b.ins().sextend(types::I64, v)
        }
    }

    /// A literal integer from `inst`'s constant id operand `id` (struct indices, scopes must
    /// be constants).
    pub(crate) fn constant_index(&self, inst: Inst<'_>, id: Word) -> Result<u64, BuildError> {
        self.constant_u64(id).ok_or_else(|| {
            BuildError::new(format!(
                "error: {} operand %{id} must be a constant\n",
                inst_desc(inst)
            ))
        })
    }

    pub(crate) fn constant_u64(&self, id: Word) -> Option<u64> {
        let c = self.m.global(id)?;
        match c.opcode() {
            Op::Constant | Op::SpecConstant => c.constant_bits().ok(),
            Op::ConstantNull => Some(0),
            _ => None,
        }
    }

    pub(crate) fn copy_memory(&mut self, inst: Inst<'_>) -> Result<(), BuildError> {
        let copy = inst.copy_memory()?;
        let dst = self.scalar(copy.target)?;
        let src = self.scalar(copy.source)?;
        let size = if let Some(size) = copy.size {
            let s = self.scalar(size)?;
            let t = self.b.func.dfg.value_type(s);
            if t == types::I64 {
                s
            } else {
                self.b.ins().uextend(types::I64, s)
            }
        } else {
            let ty = self
                .m
                .type_of(copy.target)
                .and_then(|t| match self.m.ty(t) {
                    Some(Type::Pointer { pointee, .. }) => self.m.size_of(*pointee),
                    _ => None,
                });
            let size =
                ty.ok_or_else(|| BuildError::new("error: OpCopyMemory of an unsized type\n"))?;
            self.b.ins().iconst(types::I64, size as i64)
        };
        let (dst_id, src_id) = (copy.target, copy.source);
        self.check_access_dynamic(dst_id, dst, size, CheckKind::Write)?;
        self.check_access_dynamic(src_id, src, size, CheckKind::Read)?;
        self.call_entry(EntryPoint::Memmove, &[dst, src, size])?;
        Ok(())
    }

    pub(crate) fn is_builtin_variable(&self, id: Word) -> bool {
        self.m
            .global(id)
            .is_some_and(|g| g.opcode() == Op::Variable)
            && self.m.has_decoration(id, Decoration::BuiltIn)
    }

    /// The value of a module-scope id: constants (emitted inline) and variables' addresses.
    pub(crate) fn global_value(&mut self, id: Word) -> Result<Val, BuildError> {
        let m = self.m;
        let g = m.global(id).ok_or_else(|| {
            BuildError::new(format!("internal: %{id} is not a module-scope value\n"))
        })?;
        let ty = g.result_type().unwrap_or(0);
        match g.opcode() {
            Op::Constant | Op::SpecConstant => {
                let t = scalar_ir_type(m, ty)?;
                let Ok(bits) = g.constant_bits() else {
                    return err(format!("error: OpConstant %{id} has no literal\n"));
                };
                let half = matches!(m.ty(ty), Some(Type::Float { width: 16 }));
                Ok(Val::S(if half {
                    let v = ferrocl_mathlib::half::f16_to_f32(bits as u16);
                    self.b.ins().f32const(v)
                } else if t == types::F32 {
                    self.b.ins().f32const(f32::from_bits(bits as u32))
                } else if t == types::F64 {
                    self.b.ins().f64const(f64::from_bits(bits))
                } else {
                    self.b.ins().iconst(t, bits as i64)
                }))
            }
            Op::ConstantTrue | Op::SpecConstantTrue => {
                Ok(Val::S(self.b.ins().iconst(types::I8, 1)))
            }
            Op::ConstantFalse | Op::SpecConstantFalse => {
                Ok(Val::S(self.b.ins().iconst(types::I8, 0)))
            }
            Op::ConstantComposite | Op::SpecConstantComposite => {
                let parts = g.id_refs().collect::<Vec<_>>();
                Ok(Val::C(
                    parts
                        .into_iter()
                        .map(|p| self.value(p))
                        .collect::<Result<_, _>>()?,
                ))
            }
            Op::ConstantNull | Op::Undef => {
                let s = self.shape_of_type(ty)?;
                Ok(s.zero(&mut self.b))
            }
            Op::Variable => self.global_variable_address(id, g),
            // The frontend's freezing leaves only address arithmetic over program-scope
            // variables: ConvertPtrToU, IAdd of a constant, ConvertUToPtr (all 64-bit).
            Op::SpecConstantOp => {
                let spec = g.spec_constant_op();
                let operand = |x: Option<Word>, i: usize| match x {
                    Some(x) => Ok(x),
                    None => err(format!(
                        "error: OpSpecConstantOp %{id} is missing operand {i}\n"
                    )),
                };
                let v = match spec {
                    Ok(SpecConstantOp {
                        opcode: Op::ConvertPtrToU | Op::ConvertUToPtr,
                        a,
                        ..
                    }) => self.scalar(operand(a, 1)?)?,
                    Ok(SpecConstantOp {
                        opcode: Op::IAdd,
                        a,
                        b,
                    }) => {
                        let a = self.scalar(operand(a, 1)?)?;
                        let b = self.scalar(operand(b, 2)?)?;
                        self.b.ins().iadd(a, b)
                    }
                    _ => {
                        return err(format!(
                            "error: OpSpecConstantOp %{id} is not address arithmetic over program-scope variables\n"
                        ))
                    }
                };
                if self.ty_of(v) != types::I64 {
                    return err(format!(
                        "error: OpSpecConstantOp %{id} is not 64-bit address arithmetic\n"
                    ));
                }
                Ok(Val::S(v))
            }
            // A literal sampler: the address of its record (the environment's), as sampler
            // values are; its record is known.
            Op::ConstantSampler => {
                let (address, normalized, filter) = g.constant_sampler()?;
                let v = self
                    .env
                    .literal_sampler(&mut self.b, address, normalized != 0, filter)?;
                Ok(Val::S(v))
            }
            other => err(format!(
                "error: module-scope Op{other:?} %{id} is not supported as a value yet\n"
            )),
        }
    }

    fn global_variable_address(&mut self, id: Word, g: Inst<'_>) -> Result<Val, BuildError> {
        let Ok(storage) = g.variable_storage() else {
            return err("error: OpVariable without storage class\n");
        };
        match storage {
            StorageClass::Workgroup => {
                let offset = self.env.local_variable_offset(id).ok_or_else(|| BuildError::new("internal: Workgroup variable without offset\n"))?;
                Ok(Val::S(self.b.ins().iadd_imm_s(self.wi.local_mem, offset as i64)))
            }
            StorageClass::CrossWorkgroup | StorageClass::UniformConstant => {
                let gv = self.env.program_variable(self.b.func, id)?;
                Ok(Val::S(self.b.ins().symbol_value(types::I64, gv)))
            }
            StorageClass::Input => err(format!("error: built-in variable %{id} used as a pointer value (only loads and access chains are supported)\n")),
            other => err(format!("error: module-scope variable %{id} in storage class {other:?} is not supported\n")),
        }
    }
}
