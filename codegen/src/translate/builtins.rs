//! Work-item built-ins (`get_global_id` & co.): values computed from the work-group function's
//! loop counters and the `GroupInfo` the runtime passes, never memory; the kernel clock; and
//! cl_intel_devicelib_assert's `__devicelib_assert_fail`.

use cranelift_codegen::ir::{types, InstBuilder, MemFlagsData, Value};
use cranelift_frontend::FunctionBuilder;
use ferrocl_frontend::spirv::{BuiltIn, Decoration, Scope, Word};
use ferrocl_frontend::Type;

use super::function::{err, Translator};
use super::values::{Shape, Val};
use crate::entry_points::EntryPoint;
use crate::environment::{GroupField, KernelEnvironment};
use crate::error::BuildError;

/// Per-launch values loaded once at function entry, and the current work-item's local id.
#[derive(Clone, Copy)]
pub(crate) struct WorkItem {
    /// The `GroupInfo` pointer (checked mode passes it to the fault report).
    pub(crate) group: Value,
    pub(crate) local_mem: Value,
    pub(crate) global_offset: [Value; 3],
    pub(crate) global_size: [Value; 3],
    pub(crate) local_size: [Value; 3],
    pub(crate) enqueued_local_size: [Value; 3],
    pub(crate) group_id: [Value; 3],
    pub(crate) num_groups: [Value; 3],
    pub(crate) work_dim: Value,
    /// The launch's printf buffer (see abi.rs).
    pub(crate) printf_buffer: Value,
    /// The group info's `local_mem_size`, `frames` and `frames_size`: the group's local and
    /// frame-private memory, for telling generic pointers apart.
    pub(crate) local_mem_size: Value,
    pub(crate) frames: Value,
    pub(crate) frames_size: Value,
    /// `group_id * enqueued_local_size + global_offset`: the global id of local id 0.
    pub(crate) base_global_id: [Value; 3],
    pub(crate) local_id: [Value; 3],
}

impl WorkItem {
    /// Loads the group info's fields; `local_id` is filled in by the work-item loop.
    pub(crate) fn load(
        env: &dyn KernelEnvironment,
        b: &mut FunctionBuilder,
        group: Value,
        local_mem: Value,
    ) -> WorkItem {
        // `can_move`: the group info never changes during a call, so unused fields are dropped.
        let flags = MemFlagsData::trusted().with_readonly().with_can_move();
        let mut field = |f: GroupField| env.load_group_field(b, flags, group, f);
        let global_offset = [0, 1, 2].map(|d| field(GroupField::GlobalOffset(d)));
        let global_size = [0, 1, 2].map(|d| field(GroupField::GlobalSize(d)));
        let local_size = [0, 1, 2].map(|d| field(GroupField::LocalSize(d)));
        let enqueued_local_size = [0, 1, 2].map(|d| field(GroupField::EnqueuedLocalSize(d)));
        let group_id = [0, 1, 2].map(|d| field(GroupField::GroupId(d)));
        let num_groups = [0, 1, 2].map(|d| field(GroupField::NumGroups(d)));
        let work_dim = field(GroupField::WorkDim);
        let printf_buffer = field(GroupField::PrintfBuffer);
        let local_mem_size = field(GroupField::LocalMemSize);
        let frames = field(GroupField::Frames);
        let frames_size = field(GroupField::FramesSize);
        let base_global_id = [0, 1, 2].map(|d| {
            let start = b.ins().imul(group_id[d], enqueued_local_size[d]);
            b.ins().iadd(start, global_offset[d])
        });
        let zero = b.ins().iconst(types::I64, 0);
        WorkItem {
            group,
            local_mem,
            global_offset,
            global_size,
            local_size,
            enqueued_local_size,
            group_id,
            num_groups,
            work_dim,
            printf_buffer,
            local_mem_size,
            frames,
            frames_size,
            base_global_id,
            local_id: [zero; 3],
        }
    }
}

impl Translator<'_, '_, '_> {
    pub(crate) fn builtin_of(&self, var: Word) -> Option<BuiltIn> {
        self.m
            .decorations(var)
            .filter(|d| d.kind == Decoration::BuiltIn)
            .find_map(|d| d.builtin())
    }

    /// The three components of a vector built-in, or the scalar value of a scalar one.
    fn builtin_value(&mut self, builtin: BuiltIn) -> Result<Result<Vec<Value>, Value>, BuildError> {
        if let Some(v) = self.sub_group_builtin(builtin)? {
            return Ok(Err(v));
        }
        if let Some(mask) = self.sub_group_mask_builtin(builtin)? {
            return Ok(Ok(mask.to_vec()));
        }
        let wi = self.wi;
        Ok(Ok(match builtin {
            BuiltIn::GlobalInvocationId => {
                [0, 1, 2].map(|d| self.b.ins().iadd(wi.base_global_id[d], wi.local_id[d]))
            }
            BuiltIn::LocalInvocationId => wi.local_id,
            BuiltIn::WorkgroupId => wi.group_id,
            BuiltIn::GlobalSize => wi.global_size,
            BuiltIn::WorkgroupSize => wi.local_size,
            BuiltIn::EnqueuedWorkgroupSize => wi.enqueued_local_size,
            BuiltIn::NumWorkgroups => wi.num_groups,
            BuiltIn::GlobalOffset => wi.global_offset,
            BuiltIn::WorkDim => return Ok(Err(wi.work_dim)),
            BuiltIn::GlobalLinearId => {
                // ((gid2 - off2) * gs1 + (gid1 - off1)) * gs0 + (gid0 - off0)
                let rel = [0, 1, 2].map(|d| {
                    let start = self.b.ins().imul(wi.group_id[d], wi.enqueued_local_size[d]);
                    self.b.ins().iadd(start, wi.local_id[d])
                });
                let t = self.b.ins().imul(rel[2], wi.global_size[1]);
                let t = self.b.ins().iadd(t, rel[1]);
                let t = self.b.ins().imul(t, wi.global_size[0]);
                return Ok(Err(self.b.ins().iadd(t, rel[0])));
            }
            BuiltIn::LocalInvocationIndex => {
                let t = self.b.ins().imul(wi.local_id[2], wi.local_size[1]);
                let t = self.b.ins().iadd(t, wi.local_id[1]);
                let t = self.b.ins().imul(t, wi.local_size[0]);
                return Ok(Err(self.b.ins().iadd(t, wi.local_id[0])));
            }
            other => {
                return err(format!(
                    "error: built-in variable {other:?} is not supported by this device\n"
                ))
            }
        }
        .to_vec()))
    }

    /// `OpLoad` from a built-in variable or from a pointer to one of its components.
    pub(crate) fn builtin_load(
        &mut self,
        ptr: Word,
        result_ty: Word,
    ) -> Result<Option<Val>, BuildError> {
        let (var, index) = if let Some((var, index)) = self.frame().builtin_ptrs.get(&ptr).cloned()
        {
            (var, Some(index))
        } else if self.is_builtin_variable(ptr) {
            (ptr, None)
        } else {
            return Ok(None);
        };
        let builtin = self
            .builtin_of(var)
            .ok_or_else(|| BuildError::new("internal: built-in without decoration\n"))?;
        let elem_ty = match self.m.ty(result_ty) {
            Some(Type::Vector { elem, .. }) => *elem,
            _ => result_ty,
        };
        let width = match self.m.ty(elem_ty) {
            Some(Type::Int { width }) => *width,
            _ => {
                return err(format!(
                    "error: built-in {builtin:?} loaded with a non-integer type\n"
                ))
            }
        };
        let fit = |t: &mut Self, v: Value| -> Value {
            let have = t.b.func.dfg.value_type(v).bits();
            if have > width {
                t.b.ins()
                    .ireduce(if width == 32 { types::I32 } else { types::I16 }, v)
            } else if have < width {
                t.b.ins().uextend(types::I64, v)
            } else {
                v
            }
        };
        Ok(Some(match (self.builtin_value(builtin)?, index) {
            (Err(scalar), _) => Val::S(fit(self, scalar)),
            (Ok(comps), None) => Val::C(comps.iter().map(|&c| Val::S(fit(self, c))).collect()),
            (Ok(comps), Some(index)) => {
                let idx = index.scalar()?;
                let mut v = comps[0];
                for (d, &c) in comps.iter().enumerate().skip(1) {
                    let is = self.b.ins().icmp_imm_s(
                        cranelift_codegen::ir::condcodes::IntCC::Equal,
                        idx,
                        d as i64,
                    );
                    v = self.b.ins().select(is, c, v);
                }
                Val::S(fit(self, v))
            }
        }))
    }

    /// OpReadClockKHR with Device or Workgroup scope, and the OpenCL C functions of
    /// cl_khr_kernel_clock that llvm-spirv-15 leaves as imported calls: a 64-bit count of the
    /// device clock, or its low and high halves as a 2-component 32-bit vector.
    pub(crate) fn read_clock(&mut self, scope: u32, result: &Shape) -> Result<Val, BuildError> {
        if scope != Scope::Device as u32 && scope != Scope::Workgroup as u32 {
            return err(format!(
                "error: OpReadClockKHR with scope {scope} is not supported (device and work-group scopes are)\n"
            ));
        }
        let t = self.call_entry(EntryPoint::ClockNs, &[])?[0];
        let mut leaves = Vec::new();
        result.leaf_types(&mut leaves);
        match leaves.as_slice() {
            [types::I64] => Ok(Val::S(t)),
            [types::I32, types::I32] => {
                let lo = self.b.ins().ireduce(types::I32, t);
                let high = self.b.ins().ushr_imm_s(t, 32);
                let hi = self.b.ins().ireduce(types::I32, high);
                Ok(Val::C(vec![Val::S(lo), Val::S(hi)]))
            }
            _ => err("error: OpReadClockKHR result must be a 64-bit integer or a 2-component 32-bit vector\n"),
        }
    }

    /// clock_read_device, clock_read_work_group and their hilo forms by mangled name; None
    /// for other names.
    pub(crate) fn clock_call(
        &mut self,
        mangled: &str,
        result: Option<&Shape>,
    ) -> Result<Option<Val>, BuildError> {
        let Some(name) = ferrocl_frontend::itanium_name(mangled) else {
            return Ok(None);
        };
        let scope = match name {
            "clock_read_devicev" | "clock_read_hilo_devicev" => Scope::Device,
            "clock_read_work_groupv" | "clock_read_hilo_work_groupv" => Scope::Workgroup,
            _ => return Ok(None),
        };
        let Some(shape) = result else {
            return err(format!("error: {mangled} must return a value\n"));
        };
        self.read_clock(scope as u32, shape).map(Some)
    }

    /// A call of cl_intel_devicelib_assert's `__devicelib_assert_fail` (the frontend checked
    /// its declaration): the driver's function, which prints the failure and aborts
    /// (devicelib_assert.rs), with the call's arguments — the ids are the caller's, as DPC++
    /// passes them. Like every call with side effects, it runs only for the work-items that
    /// reach it, in vector lanes too (the vectoriser makes it per lane, under the lane's mask).
    pub(crate) fn devicelib_assert_call(&mut self, args: &[Val]) -> Result<(), BuildError> {
        let entry = EntryPoint::DevicelibAssertFail;
        let mut leaves = Vec::new();
        for a in args {
            a.leaves(&mut leaves);
        }
        self.check_leaf_types(&leaves, &entry.signature().0)?;
        self.call_entry(entry, &leaves)?;
        Ok(())
    }
}
