//! Checked mode's code (checked.rs has the contract): a bounds check in front of every memory
//! access, a zero check in front of every integer division, and the cold blocks that report a
//! failed check and leave the work-group function. Nothing here emits code unless
//! `BuildOptions::checked` is set.
//!
//! An access through a pointer whose object provenance.rs found is checked inline against that
//! object's bytes `[lo, hi)`: a kernel argument's bounds come from the argument block (the
//! runtime writes them at launch), a variable's from its address and type. Other accesses call
//! `checked_lookup`, which accepts any memory of the launch — weaker, but such pointers are
//! rare in kernels (loaded from memory, made from integers).

use std::rc::Rc;

use cranelift_codegen::ir::{self, condcodes::IntCC, types, InstBuilder, Value};
use ferrocl_frontend::spirv::{Op, StorageClass, Word};
use ferrocl_frontend::Type;

use super::function::{Translator, VarStorage};
use super::provenance::Origin;
use crate::checked::{CheckKind, CheckSite};
use crate::entry_points::EntryPoint;
use crate::program::BuildError;

/// The bytes `[lo, hi)` of the object a pointer points into, and how the report names it.
#[derive(Clone)]
pub(crate) struct Bounds {
    pub(crate) lo: Value,
    pub(crate) hi: Value,
    pub(crate) object: Rc<str>,
}

impl Translator<'_, '_, '_> {
    /// The bounds of the object `ptr` points into, where translation knows it.
    pub(crate) fn bounds_of(&mut self, ptr: Word) -> Result<Option<Bounds>, BuildError> {
        let Some(origin) = self.frame().origins.get(&ptr).copied() else {
            return Ok(None);
        };
        match origin {
            Origin::Param(i) => Ok(self.frame().param_bounds.get(i).cloned().flatten()),
            Origin::Variable(var) => self.variable_bounds(var),
        }
    }

    fn variable_bounds(&mut self, var: Word) -> Result<Option<Bounds>, BuildError> {
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
        let kind = match storage {
            StorageClass::Function => "private variable",
            StorageClass::Workgroup => "__local variable",
            StorageClass::UniformConstant => "__constant variable",
            _ => "program-scope variable",
        };
        let object = match self.m.name(var) {
            Some(name) if !name.is_empty() => format!("{kind} '{name}'"),
            _ => format!("{kind} %{var}"),
        };
        Ok(Some(Bounds {
            lo,
            hi,
            object: object.into(),
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
                    || (self.prologue_values.contains(&b.lo)
                        && self.prologue_values.contains(&b.hi))
            });
            bounds.push(b);
        }
        Ok(bounds)
    }

    /// A new check site of this kernel; its index.
    fn check_site(&mut self, kind: CheckKind, size: u64, object: &str) -> Value {
        let index = self.check_sites.len();
        self.check_sites.push(CheckSite {
            kind,
            size,
            object: object.to_owned(),
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

    fn report_fault(
        &mut self,
        site: Value,
        address: Value,
        lo: Value,
        hi: Value,
    ) -> Result<(), BuildError> {
        let gid = self.global_id_now();
        let group = self.wi.group;
        self.call_entry(
            EntryPoint::CheckedFault,
            &[group, site, address, lo, hi, gid[0], gid[1], gid[2]],
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

    /// `size` is the i64 byte count; `report_size` what the report says (0: run-time).
    fn check_span(
        &mut self,
        ptr: Word,
        addr: Value,
        size: Value,
        report_size: u64,
        kind: CheckKind,
    ) -> Result<(), BuildError> {
        match self.bounds_of(ptr)? {
            Some(bounds) => {
                // One subtraction and one compare per access: `addr - lo` wraps to a huge
                // offset below the object, and the limit depends on the object alone, so it is
                // computed once per object (Cranelift hoists it out of loops). An object
                // smaller than the access makes the limit wrap: `too_small` catches that.
                let span = self.b.ins().isub(bounds.hi, bounds.lo);
                let limit = self.b.ins().isub(span, size);
                let too_small = self.b.ins().icmp(IntCC::UnsignedGreaterThan, limit, span);
                let offset = self.b.ins().isub(addr, bounds.lo);
                let beyond = self.b.ins().icmp(IntCC::UnsignedGreaterThan, offset, limit);
                let failed = self.b.ins().bor(beyond, too_small);
                self.fail_if(failed, |t| {
                    let site = t.check_site(kind, report_size, &bounds.object);
                    t.report_fault(site, addr, bounds.lo, bounds.hi)
                })
            }
            None => {
                let object = match self.m.name(ptr) {
                    Some(name) if !name.is_empty() => format!("pointer '{name}'"),
                    _ => format!("pointer %{ptr}"),
                };
                let site = self.check_site(kind, report_size, &object);
                let gid = self.global_id_now();
                let slot = self.b.create_sized_stack_slot(ir::StackSlotData::new(
                    ir::StackSlotKind::ExplicitSlot,
                    24,
                    3,
                ));
                for (d, v) in gid.iter().enumerate() {
                    self.b.ins().stack_store(types::I64, *v, slot, 8 * d as i32);
                }
                let gid_addr = self.b.ins().stack_addr(types::I64, slot, 0);
                let sp = self.b.ins().get_stack_pointer(types::I64);
                let fp = self.b.ins().get_frame_pointer(types::I64);
                let (group, local_mem) = (self.wi.group, self.wi.local_mem);
                let failed = self.call_entry(
                    EntryPoint::CheckedLookup,
                    &[group, site, addr, size, local_mem, sp, fp, gid_addr],
                )?[0];
                self.fail_if(failed, |_| Ok(()))
            }
        }
    }

    /// Checks that divisor `d` of integer division `op` is not zero (checked mode only).
    pub(crate) fn check_divisor(&mut self, op: Op, d: Value) -> Result<(), BuildError> {
        if !self.options.checked {
            return Ok(());
        }
        let zero = self.b.ins().icmp_imm_s(IntCC::Equal, d, 0);
        self.fail_if(zero, |t| {
            let site = t.check_site(CheckKind::DivisionByZero, 0, &format!("Op{op:?}"));
            let none = t.b.ins().iconst(types::I64, 0);
            t.report_fault(site, none, none, none)
        })
    }
}
