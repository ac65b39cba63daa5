//! Atomic opcodes. Global (and generic/constant) memory uses Cranelift's atomic instructions,
//! which are sequentially consistent: every order and scope the device advertises is satisfied.
//! A work-group runs on one thread, so atomics on `Workgroup` memory are plain
//! read-modify-write sequences — no other thread can touch that memory concurrently.
//! Float add/min/max (`cl_ext_float_atomics`) have no hardware instruction: on global memory
//! they are compare-and-swap loops on the value's bits.

use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::{
    types, AtomicRmwOp, BlockArg, InstBuilder, MemFlagsData, TrapCode, Value,
};
use ferrocl_frontend::spirv::{Op, StorageClass, Word};
use ferrocl_frontend::Type;
use ferrocl_frontend::{Atomic, AtomicOp, Inst};

use super::function::{err, Translator};
use super::values::Val;
use crate::checked::CheckKind;
use crate::error::BuildError;

/// The trap code that marks the load of a plain read-modify-write standing for an atomic on
/// local memory. Such a sequence is atomic only while one work-item runs it at a time, which
/// the work-item vectoriser would break (four lanes loading before any stores): it keeps
/// bodies holding one scalar. A load's trap code changes nothing else (loads fault only on a
/// bad address, and the host then dies whatever the code).
pub(crate) const LOCAL_RMW_TRAP: TrapCode = TrapCode::unwrap_user(0x4c);

/// Flags of a local atomic's load ([`LOCAL_RMW_TRAP`]).
fn local_rmw_load_flags() -> MemFlagsData {
    MemFlagsData::new().with_trap_code(Some(LOCAL_RMW_TRAP))
}

impl Translator<'_, '_, '_> {
    /// Whether pointer `ptr` points to work-group local memory.
    fn points_to_local(&self, ptr: Word) -> bool {
        let ty = self.m.type_of(ptr).and_then(|t| self.m.ty(t));
        matches!(
            ty,
            Some(Type::Pointer {
                storage: StorageClass::Workgroup,
                ..
            })
        )
    }

    /// The value operand of an atomic that has one (the decode reads it for those).
    fn atomic_value(&mut self, inst: Inst<'_>, a: &Atomic) -> Result<Value, BuildError> {
        let v = a.value.ok_or_else(|| {
            BuildError::new(format!("internal: {} has no value\n", inst.describe()))
        })?;
        self.scalar(v)
    }

    /// Atomic operations compute on integers; float atomics (exchange, load, store) move bits.
    fn atomic_int_type(t: types::Type) -> types::Type {
        match t {
            types::F32 => types::I32,
            types::F64 => types::I64,
            other => other,
        }
    }

    fn atomic_operand(&mut self, v: Value) -> Value {
        let t = self.ty_of(v);
        let it = Self::atomic_int_type(t);
        if it == t {
            v
        } else {
            self.b.ins().bitcast(it, MemFlagsData::new(), v)
        }
    }

    /// Checked mode: the atomic's pointer must reach the whole pointee.
    fn check_atomic(&mut self, a: &Atomic, addr: Value) -> Result<(), BuildError> {
        let ptr = a.pointer;
        let size = match self.m.type_of(ptr).and_then(|t| self.m.ty(t)) {
            Some(Type::Pointer { pointee, .. }) => self.m.size_of(*pointee).unwrap_or(0),
            _ => 0,
        };
        let kind = match a.op {
            AtomicOp::Load => CheckKind::Read,
            AtomicOp::Store | AtomicOp::FlagClear => CheckKind::Write,
            _ => CheckKind::Atomic,
        };
        self.check_access(ptr, addr, size, kind)
    }

    fn atomic_result(&mut self, v: Value, t: types::Type) -> Value {
        if self.ty_of(v) == t {
            v
        } else {
            self.b.ins().bitcast(t, MemFlagsData::new(), v)
        }
    }

    pub(crate) fn atomic(&mut self, inst: Inst<'_>) -> Result<(), BuildError> {
        let a = inst.atomic()?;
        let op = a.op;
        let ptr = self.scalar(a.pointer)?;
        let local = self.points_to_local(a.pointer);
        self.check_atomic(&a, ptr)?;
        let flags = MemFlagsData::new();
        if op == AtomicOp::Store {
            let v = self.atomic_value(inst, &a)?;
            let bits = self.atomic_operand(v);
            if local {
                self.b.ins().store(flags, bits, ptr, 0);
            } else {
                self.b.ins().atomic_store(flags, bits, ptr);
            }
            return Ok(());
        }
        if op == AtomicOp::FlagClear {
            let zero = self.b.ins().iconst(types::I32, 0);
            if local {
                self.b.ins().store(flags, zero, ptr, 0);
            } else {
                self.b.ins().atomic_store(flags, zero, ptr);
            }
            return Ok(());
        }
        let rt = self.result_type(inst)?;
        let result_ty = super::values::scalar_ir_type(self.m, rt)?;
        let ty = match op {
            AtomicOp::FlagTestAndSet => types::I32,
            _ => Self::atomic_int_type(result_ty),
        };
        let old = match op {
            AtomicOp::Load => {
                if local {
                    self.b.ins().load(ty, flags, ptr, 0)
                } else {
                    self.b.ins().atomic_load(ty, flags, ptr)
                }
            }
            AtomicOp::CompareExchange | AtomicOp::CompareExchangeWeak => {
                let v = self.atomic_value(inst, &a)?;
                let cmp = a.comparator.ok_or_else(|| {
                    BuildError::new(format!("internal: {} has no comparator\n", inst.describe()))
                })?;
                let cmp = self.scalar(cmp)?;
                let (v, cmp) = (self.atomic_operand(v), self.atomic_operand(cmp));
                if local {
                    let cur = self.b.ins().load(ty, local_rmw_load_flags(), ptr, 0);
                    let equal = self.b.ins().icmp(IntCC::Equal, cur, cmp);
                    let new = self.b.ins().select(equal, v, cur);
                    self.b.ins().store(flags, new, ptr, 0);
                    cur
                } else {
                    self.b.ins().atomic_cas(flags, ptr, cmp, v)
                }
            }
            _ => {
                let (rmw, operand) = match op {
                    AtomicOp::IIncrement => (AtomicRmwOp::Add, self.b.ins().iconst(ty, 1)),
                    AtomicOp::IDecrement => (AtomicRmwOp::Sub, self.b.ins().iconst(ty, 1)),
                    AtomicOp::FlagTestAndSet => (AtomicRmwOp::Xchg, self.b.ins().iconst(ty, 1)),
                    _ => {
                        let v = self.atomic_value(inst, &a)?;
                        let v = self.atomic_operand(v);
                        let rmw = match op {
                            AtomicOp::Exchange => AtomicRmwOp::Xchg,
                            AtomicOp::IAdd => AtomicRmwOp::Add,
                            AtomicOp::ISub => AtomicRmwOp::Sub,
                            AtomicOp::SMin => AtomicRmwOp::Smin,
                            AtomicOp::UMin => AtomicRmwOp::Umin,
                            AtomicOp::SMax => AtomicRmwOp::Smax,
                            AtomicOp::UMax => AtomicRmwOp::Umax,
                            AtomicOp::And => AtomicRmwOp::And,
                            AtomicOp::Or => AtomicRmwOp::Or,
                            AtomicOp::Xor => AtomicRmwOp::Xor,
                            _ => {
                                let other = inst.opcode();
                                return err(format!("error: Op{other:?} is not supported yet\n"));
                            }
                        };
                        (rmw, v)
                    }
                };
                if local {
                    self.local_rmw(rmw, ty, ptr, operand)
                } else {
                    self.b.ins().atomic_rmw(ty, flags, rmw, ptr, operand)
                }
            }
        };
        let v = if op == AtomicOp::FlagTestAndSet {
            // The result is a bool: whether the flag was set before.
            self.b.ins().icmp_imm_s(IntCC::NotEqual, old, 0)
        } else {
            self.atomic_result(old, result_ty)
        };
        self.define(inst, Val::S(v))
    }

    /// `OpAtomicFAddEXT` / `OpAtomicFMinEXT` / `OpAtomicFMaxEXT`: pointer, scope, semantics,
    /// value; the result is the old value. Min and max follow OpenCL's fmin/fmax (a NaN operand
    /// yields the other one); the addition flushes denormals like any float add here.
    pub(crate) fn atomic_float(&mut self, inst: Inst<'_>) -> Result<(), BuildError> {
        let op = inst.opcode();
        let a = inst.atomic()?;
        let ptr = self.scalar(a.pointer)?;
        let local = self.points_to_local(a.pointer);
        self.check_atomic(&a, ptr)?;
        let v = self.atomic_value(inst, &a)?;
        let t = self.ty_of(v);
        if t != types::F32 && t != types::F64 {
            return err(format!("error: Op{op:?} on {t} is not supported\n"));
        }
        let flags = MemFlagsData::new();
        let combine = |this: &mut Self, old: Value| -> Value {
            match op {
                Op::AtomicFMinEXT => this.fmin_cl(old, v),
                Op::AtomicFMaxEXT => this.fmax_cl(old, v),
                _ => {
                    let (a, b) = (this.ftz(old), this.ftz(v));
                    let sum = this.b.ins().fadd(a, b);
                    this.ftz(sum)
                }
            }
        };
        let old = if local {
            let old = self.b.ins().load(t, local_rmw_load_flags(), ptr, 0);
            let new = combine(self, old);
            self.b.ins().store(flags, new, ptr, 0);
            old
        } else {
            let it = Self::atomic_int_type(t);
            let retry = self.b.create_block();
            self.b.append_block_param(retry, it);
            let done = self.b.create_block();
            self.b.append_block_param(done, it);
            let first = self.b.ins().atomic_load(it, flags, ptr);
            self.b.ins().jump(retry, &[BlockArg::Value(first)]);

            self.b.switch_to_block(retry);
            let expected = self.b.block_params(retry)[0];
            let old = self.b.ins().bitcast(t, flags, expected);
            let new = combine(self, old);
            let new_bits = self.b.ins().bitcast(it, flags, new);
            let seen = self.b.ins().atomic_cas(flags, ptr, expected, new_bits);
            let swapped = self.b.ins().icmp(IntCC::Equal, seen, expected);
            self.b.ins().brif(
                swapped,
                done,
                &[BlockArg::Value(seen)],
                retry,
                &[BlockArg::Value(seen)],
            );

            self.b.switch_to_block(done);
            let bits = self.b.block_params(done)[0];
            self.b.ins().bitcast(t, flags, bits)
        };
        self.define(inst, Val::S(old))
    }

    /// Read-modify-write on memory no other thread can access; returns the old value.
    fn local_rmw(&mut self, rmw: AtomicRmwOp, ty: types::Type, ptr: Value, v: Value) -> Value {
        let flags = MemFlagsData::new();
        let old = self.b.ins().load(ty, local_rmw_load_flags(), ptr, 0);
        let new = match rmw {
            AtomicRmwOp::Add => self.b.ins().iadd(old, v),
            AtomicRmwOp::Sub => self.b.ins().isub(old, v),
            AtomicRmwOp::And => self.b.ins().band(old, v),
            AtomicRmwOp::Or => self.b.ins().bor(old, v),
            AtomicRmwOp::Xor => self.b.ins().bxor(old, v),
            AtomicRmwOp::Smin => self.b.ins().smin(old, v),
            AtomicRmwOp::Smax => self.b.ins().smax(old, v),
            AtomicRmwOp::Umin => self.b.ins().umin(old, v),
            AtomicRmwOp::Umax => self.b.ins().umax(old, v),
            AtomicRmwOp::Nand => {
                let a = self.b.ins().band(old, v);
                self.b.ins().bnot(a)
            }
            AtomicRmwOp::Xchg => v,
        };
        self.b.ins().store(flags, new, ptr, 0);
        old
    }
}
