//! Checked mode's code (checked.rs has the contract): a bounds check in front of every memory
//! access, a zero check in front of every integer division, and the cold blocks that report a
//! failed check and leave the work-group function. Nothing here emits code unless
//! `BuildOptions::checked` is set.
//!
//! An access through a pointer whose candidate objects provenance.rs found is checked inline
//! against each candidate's bytes `[lo, hi)` and passes if it lies inside one: a kernel
//! argument's bounds come from the argument block (the runtime writes them at launch), a
//! variable's from its address and type. A write never passes on a `__constant` object. Other
//! accesses call `checked_lookup` with the bytes of every private variable whose address is
//! taken (a table built at the access): the work-group function's stack frame also holds
//! spill slots, saved registers and the checker's own limits, so only the variables in it are
//! private memory a pointer may reach.

use std::rc::Rc;

use cranelift_codegen::ir::{self, condcodes::IntCC, types, InstBuilder, Value};
use ferrocl_frontend::spirv::{Op, StorageClass, Word};
use ferrocl_frontend::Type;

use super::function::{Translator, VarStorage};
use super::provenance::Origin;
use crate::checked::{CheckKind, CheckSite};
use crate::entry_points::EntryPoint;
use crate::error::BuildError;

/// The bytes `[lo, hi)` of one object a pointer may point into, and how the report names it.
#[derive(Clone)]
pub(crate) struct Object {
    pub(crate) lo: Value,
    pub(crate) hi: Value,
    pub(crate) name: Rc<str>,
    /// False for `__constant` data, which lives in read-only pages.
    pub(crate) writable: bool,
}

/// The objects a pointer may point into (one of them): never empty.
#[derive(Clone)]
pub(crate) struct Bounds(pub(crate) Vec<Object>);

impl Bounds {
    pub(crate) fn one(object: Object) -> Self {
        Bounds(vec![object])
    }

    /// How the report names the candidates.
    fn name(&self) -> String {
        let names: Vec<&str> = self.0.iter().map(|o| &*o.name).collect();
        names.join(" or ")
    }
}

/// A private variable whose address is taken: where its bytes are, so that a check through a
/// pointer of unknown object can accept exactly the variables' bytes (see the module comment).
#[derive(Clone, Copy)]
pub(crate) enum PrivateObject {
    /// A stack slot of the work-group function, its address rounded up to `align`.
    Slot {
        slot: ir::StackSlot,
        align: u64,
        size: u64,
    },
    /// Kernels with barriers: `offset` in the work-item's frame, rounded up to `align`.
    Frame { offset: u64, align: u64, size: u64 },
}

impl Translator<'_, '_, '_> {
    /// The objects `ptr` may point into, where translation knows them all.
    pub(crate) fn bounds_of(&mut self, ptr: Word) -> Result<Option<Bounds>, BuildError> {
        let Some(origins) = self.frame().origins.get(&ptr).cloned() else {
            return Ok(None);
        };
        let mut objects = Vec::with_capacity(origins.len());
        for origin in origins {
            let bounds = match origin {
                Origin::Param(i) => self.frame().param_bounds.get(i).cloned().flatten(),
                Origin::Variable(var) => self.variable_bounds(var)?.map(Bounds::one),
            };
            // One candidate whose bytes are unknown makes the whole pointer unknown.
            let Some(bounds) = bounds else {
                return Ok(None);
            };
            objects.extend(bounds.0);
        }
        Ok(Some(Bounds(objects)))
    }

    fn variable_bounds(&mut self, var: Word) -> Result<Option<Object>, BuildError> {
        if matches!(
            self.frame().vars.get(&var),
            Some(VarStorage::Promoted { .. })
        ) || self.is_builtin_variable(var)
        {
            return Ok(None);
        }
        let Some(Type::Pointer { storage, pointee }) =
            self.m.type_of(var).and_then(|t| self.m.ty(t)).cloned()
        else {
            return Ok(None);
        };
        let Some(size) = self.m.size_of(pointee) else {
            return Ok(None);
        };
        let lo = self.value(var)?.scalar()?;
        let hi = self.b.ins().iadd_imm_s(lo, size as i64);
        // The variable's own storage class decides where it lives (module.rs lays out
        // UniformConstant variables in read-only data).
        let declared = self
            .m
            .global(var)
            .and_then(|g| g.variable_storage().ok())
            .unwrap_or(storage);
        let kind = match declared {
            StorageClass::Function => "private variable",
            StorageClass::Workgroup => "__local variable",
            StorageClass::UniformConstant => "__constant variable",
            _ => "program-scope variable",
        };
        let name = match self.m.name(var) {
            Some(name) if !name.is_empty() => format!("{kind} '{name}'"),
            _ => format!("{kind} %{var}"),
        };
        Ok(Some(Object {
            lo,
            hi,
            name: name.into(),
            writable: declared != StorageClass::UniformConstant,
        }))
    }

    /// The bounds of each argument of a call, for the callee's parameters. Bounds computed
    /// here are SSA values of the call site: a callee with a barrier resumes where they do not
    /// reach, so it keeps only those of the prologue (kernel arguments) and looks the others up
    /// at run time.
    pub(crate) fn call_bounds(
        &mut self,
        args: &[Word],
        callee_has_barrier: bool,
    ) -> Result<Vec<Option<Bounds>>, BuildError> {
        if !self.options.checked {
            return Ok(Vec::new());
        }
        let mut bounds = Vec::with_capacity(args.len());
        for &arg in args {
            let b = self.bounds_of(arg)?.filter(|b| {
                !callee_has_barrier
                    || b.0.iter().all(|o| {
                        self.prologue_values.contains(&o.lo) && self.prologue_values.contains(&o.hi)
                    })
            });
            bounds.push(b);
        }
        Ok(bounds)
    }

    /// A new check site of this kernel; its index.
    fn check_site(&mut self, kind: CheckKind, size: u64, object: &str, candidates: usize) -> Value {
        let index = self.check_sites.len();
        self.check_sites.push(CheckSite {
            kind,
            size,
            object: object.to_owned(),
            candidates: candidates as u32,
        });
        self.b.ins().iconst(types::I32, index as i64)
    }

    fn global_id_now(&mut self) -> [Value; 3] {
        let wi = self.wi;
        [0, 1, 2].map(|d| self.b.ins().iadd(wi.base_global_id[d], wi.local_id[d]))
    }

    /// Branches to a cold block that reports with `report` and leaves the work-group when
    /// `failed` is set; continues in a new block otherwise.
    fn fail_if(
        &mut self,
        failed: Value,
        report: impl FnOnce(&mut Self) -> Result<(), BuildError>,
    ) -> Result<(), BuildError> {
        let fail = self.b.create_block();
        let cont = self.b.create_block();
        self.b.set_cold_block(fail);
        self.b.ins().brif(failed, fail, &[], cont, &[]);
        self.b.switch_to_block(fail);
        report(self)?;
        self.b.ins().return_(&[]);
        self.b.switch_to_block(cont);
        Ok(())
    }

    /// `size` is the i64 byte count of the access (0 for other checks).
    fn report_fault(
        &mut self,
        site: Value,
        address: Value,
        size: Value,
        lo: Value,
        hi: Value,
    ) -> Result<(), BuildError> {
        let gid = self.global_id_now();
        let group = self.wi.group;
        self.call_entry(
            EntryPoint::CheckedFault,
            &[group, site, address, size, lo, hi, gid[0], gid[1], gid[2]],
        )?;
        Ok(())
    }

    /// Checks an access of `size` bytes at `addr` through pointer `ptr` (checked mode only).
    pub(crate) fn check_access(
        &mut self,
        ptr: Word,
        addr: Value,
        size: u64,
        kind: CheckKind,
    ) -> Result<(), BuildError> {
        if !self.options.checked || size == 0 {
            return Ok(());
        }
        let size_v = self.b.ins().iconst(types::I64, size as i64);
        self.check_span(ptr, addr, size_v, size, kind)
    }

    /// Checks an access of a run-time number of bytes, `size` (an i64), at `addr` through
    /// pointer `ptr` (checked mode only): copies.
    pub(crate) fn check_access_dynamic(
        &mut self,
        ptr: Word,
        addr: Value,
        size: Value,
        kind: CheckKind,
    ) -> Result<(), BuildError> {
        if !self.options.checked {
            return Ok(());
        }
        self.check_span(ptr, addr, size, 0, kind)
    }

    /// `size` is the i64 byte count; `report_size` what the site records (0: known at run
    /// time only, and the fault carries it).
    fn check_span(
        &mut self,
        ptr: Word,
        addr: Value,
        size: Value,
        report_size: u64,
        kind: CheckKind,
    ) -> Result<(), BuildError> {
        let writes = kind != CheckKind::Read;
        match self.bounds_of(ptr)? {
            Some(bounds) => {
                // The access passes if it lies inside one candidate: a write only inside a
                // writable one. With no candidate left it fails every time.
                let mut failed: Option<Value> = None;
                for object in bounds.0.iter().filter(|o| o.writable || !writes) {
                    // One subtraction and one compare per access and object: `addr - lo`
                    // wraps to a huge offset below the object, and the limit depends on the
                    // object alone, so it is computed once per object (Cranelift hoists it out
                    // of loops). An object smaller than the access makes the limit wrap:
                    // `too_small` catches that.
                    let span = self.b.ins().isub(object.hi, object.lo);
                    let limit = self.b.ins().isub(span, size);
                    let too_small = self.b.ins().icmp(IntCC::UnsignedGreaterThan, limit, span);
                    let offset = self.b.ins().isub(addr, object.lo);
                    let beyond = self.b.ins().icmp(IntCC::UnsignedGreaterThan, offset, limit);
                    let outside = self.b.ins().bor(beyond, too_small);
                    failed = Some(match failed {
                        Some(f) => self.b.ins().band(f, outside),
                        None => outside,
                    });
                }
                let failed = match failed {
                    Some(f) => f,
                    None => self.b.ins().iconst(types::I8, 1),
                };
                let first = bounds.0[0].clone();
                let name = bounds.name();
                self.fail_if(failed, |t| {
                    let site = t.check_site(kind, report_size, &name, bounds.0.len());
                    t.report_fault(site, addr, size, first.lo, first.hi)
                })
            }
            None => {
                let object = match self.m.name(ptr) {
                    Some(name) if !name.is_empty() => format!("pointer '{name}'"),
                    _ => format!("pointer %{ptr}"),
                };
                let site = self.check_site(kind, report_size, &object, 1);
                // The work-item's global id, then [lo, hi) of each private variable.
                let private = self.private_objects.clone();
                let slot = self.b.create_sized_stack_slot(ir::StackSlotData::new(
                    ir::StackSlotKind::ExplicitSlot,
                    (24 + 16 * private.len()) as u32,
                    3,
                ));
                let gid = self.global_id_now();
                for (d, v) in gid.iter().enumerate() {
                    self.b.ins().stack_store(types::I64, *v, slot, 8 * d as i32);
                }
                for (i, object) in private.iter().enumerate() {
                    let (lo, bytes) = self.private_object_address(*object)?;
                    let hi = self.b.ins().iadd_imm_s(lo, bytes as i64);
                    let at = 24 + 16 * i as i32;
                    self.b.ins().stack_store(types::I64, lo, slot, at);
                    self.b.ins().stack_store(types::I64, hi, slot, at + 8);
                }
                let table = self.b.ins().stack_addr(types::I64, slot, 0);
                let count = private.len() as i64 | if writes { 1 << 32 } else { 0 };
                let count = self.b.ins().iconst(types::I64, count);
                let (group, local_mem) = (self.wi.group, self.wi.local_mem);
                let failed = self.call_entry(
                    EntryPoint::CheckedLookup,
                    &[group, site, addr, size, local_mem, table, count],
                )?[0];
                self.fail_if(failed, |_| Ok(()))
            }
        }
    }

    /// The address of private variable `object` here, and its size.
    fn private_object_address(
        &mut self,
        object: PrivateObject,
    ) -> Result<(Value, u64), BuildError> {
        Ok(match object {
            PrivateObject::Slot { slot, align, size } => {
                let addr = self.b.ins().stack_addr(types::I64, slot, 0);
                (self.align_up(addr, align), size)
            }
            PrivateObject::Frame {
                offset,
                align,
                size,
            } => {
                let base = self.frame_base()?;
                let addr = self.b.ins().iadd_imm_s(base, offset as i64);
                (self.align_up(addr, align), size)
            }
        })
    }

    /// Reports `what` (checked mode only) when `bad` (an i8) is set: an operand outside what
    /// the instruction allows.
    pub(crate) fn check_operand(&mut self, bad: Value, what: &str) -> Result<(), BuildError> {
        if !self.options.checked {
            return Ok(());
        }
        self.fail_if(bad, |t| {
            let site = t.check_site(CheckKind::InvalidOperand, 0, what, 1);
            let none = t.b.ins().iconst(types::I64, 0);
            t.report_fault(site, none, none, none, none)
        })
    }

    /// Checks that divisor `d` of integer division `op` is not zero (checked mode only).
    pub(crate) fn check_divisor(&mut self, op: Op, d: Value) -> Result<(), BuildError> {
        if !self.options.checked {
            return Ok(());
        }
        let zero = self.b.ins().icmp_imm_s(IntCC::Equal, d, 0);
        self.fail_if(zero, |t| {
            let site = t.check_site(CheckKind::DivisionByZero, 0, &format!("Op{op:?}"), 1);
            let none = t.b.ins().iconst(types::I64, 0);
            t.report_fault(site, none, none, none, none)
        })
    }
}
