//! Kernels: the compiled kernel of a built program, the argument values set so far, and
//! turning a launch into a command (argument block snapshot, local-memory layout, work-group
//! size choice and checks).

use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};

use ferrocl_codegen::{ArgSlot, LOCAL_ARG_ALIGN, SUB_GROUP_SIZE};
use ferrocl_frontend::{ArgKind, KernelInfo};
use opencl_sys::*;

use crate::config::DeviceConfig;
use crate::executor::{run_ndrange, ArgBlock, Launch};
use crate::memory::Mem;
use crate::object::{Base, CLResult, Tag};
use crate::platform::Device;
use crate::printf::{write_stdout, PrintfBuffer};
use crate::program::{Built, Program};
use crate::queue::Work;

/// A value given to clSetKernelArg, kept until the next call for that index.
#[derive(Clone)]
pub enum ArgValue {
    Mem(Option<Arc<Mem>>),
    Local(usize),
    Bytes(Vec<u8>),
}

#[repr(C)]
pub struct Kernel {
    base: Base,
    pub program: Arc<Program>,
    pub built: Arc<Built>,
    pub index: usize,
    args: Mutex<Vec<Option<ArgValue>>>,
}
crate::cl_object!(Kernel, Kernel, CL_INVALID_KERNEL);

fn round_up(v: usize, a: usize) -> usize {
    v.div_ceil(a) * a
}

impl Kernel {
    pub fn new(program: &Arc<Program>, name: &str) -> CLResult<Arc<Kernel>> {
        let built = program.built().ok_or(CL_INVALID_PROGRAM_EXECUTABLE)?;
        let index = built
            .code
            .kernels()
            .iter()
            .position(|k| k.info.name == name)
            .ok_or(CL_INVALID_KERNEL_NAME)?;
        let n = built.code.kernels()[index].info.args.len();
        program.kernel_count.fetch_add(1, Ordering::AcqRel);
        Ok(Arc::new(Kernel {
            base: Base::new(Tag::Kernel),
            program: program.clone(),
            built,
            index,
            args: Mutex::new(vec![None; n]),
        }))
    }

    pub fn clone_kernel(&self) -> Arc<Kernel> {
        self.program.kernel_count.fetch_add(1, Ordering::AcqRel);
        Arc::new(Kernel {
            base: Base::new(Tag::Kernel),
            program: self.program.clone(),
            built: self.built.clone(),
            index: self.index,
            args: Mutex::new(self.lock().clone()),
        })
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<Option<ArgValue>>> {
        self.args.lock().unwrap_or_else(|p| p.into_inner())
    }

    pub fn code(&self) -> &ferrocl_codegen::Kernel {
        &self.built.code.kernels()[self.index]
    }

    pub fn info(&self) -> &KernelInfo {
        &self.code().info
    }

    /// The argument's kind (for the icd layer to know how to read the value pointer).
    pub fn arg_kind(&self, index: usize) -> CLResult<&ArgKind> {
        self.info()
            .args
            .get(index)
            .map(|a| &a.kind)
            .ok_or(CL_INVALID_ARG_INDEX)
    }

    /// clSetKernelArg after the icd layer read the value as its kind requires.
    pub fn set_arg(&self, index: usize, size: usize, value: ArgValue) -> CLResult<()> {
        let kind = self.arg_kind(index)?;
        let ok = match (kind, &value) {
            (ArgKind::Buffer { .. }, ArgValue::Mem(_)) => {
                if size != std::mem::size_of::<cl_mem>() {
                    return Err(CL_INVALID_ARG_SIZE);
                }
                true
            }
            (ArgKind::Local, ArgValue::Local(n)) => {
                if *n == 0 {
                    return Err(CL_INVALID_ARG_SIZE);
                }
                true
            }
            (ArgKind::Value { size: want, .. }, ArgValue::Bytes(b)) => {
                if size != *want || b.len() != *want {
                    return Err(CL_INVALID_ARG_SIZE);
                }
                true
            }
            _ => false,
        };
        if !ok {
            return Err(CL_INVALID_ARG_VALUE);
        }
        self.lock()[index] = Some(value);
        Ok(())
    }

    /// Bytes of local memory one work-group needs with the current arguments.
    pub fn local_mem_size(&self) -> usize {
        let mut total = round_up(self.code().static_local_mem_size, LOCAL_ARG_ALIGN);
        for v in self.lock().iter() {
            if let Some(ArgValue::Local(n)) = v {
                total = round_up(total, LOCAL_ARG_ALIGN) + n;
            }
        }
        total
    }

    /// The largest work-group this kernel can run with (reqd_work_group_size bounds it).
    pub fn max_work_group_size(&self, device: &Device) -> usize {
        match self.info().reqd_work_group_size {
            Some([x, y, z]) => x as usize * y as usize * z as usize,
            None => device.config.max_work_group_size,
        }
    }

    /// Whether `device` has sub-groups (FERROCL_SUBGROUPS=on).
    pub fn sub_groups_supported(device: &Device) -> bool {
        device.config.settings.sub_groups
    }

    /// `CL_KERNEL_MAX_SUB_GROUP_SIZE_FOR_NDRANGE`: the largest sub-group of a work-group of
    /// `local` work-items (sub-groups are `SUB_GROUP_SIZE` consecutive work-items, the last
    /// one may be smaller).
    pub fn max_sub_group_size_for(local: &[usize]) -> usize {
        let items: usize = local.iter().product();
        items.min(SUB_GROUP_SIZE as usize)
    }

    /// `CL_KERNEL_SUB_GROUP_COUNT_FOR_NDRANGE`.
    pub fn sub_group_count_for(local: &[usize]) -> usize {
        let items: usize = local.iter().product();
        items.div_ceil(SUB_GROUP_SIZE as usize)
    }

    /// `CL_KERNEL_LOCAL_SIZE_FOR_SUB_GROUP_COUNT`: a `dims`-dimensional local size this
    /// kernel can be launched with that has `count` sub-groups, or all zeros when there is
    /// none.
    pub fn local_size_for_sub_group_count(
        &self,
        device: &Device,
        count: usize,
        dims: usize,
    ) -> Vec<usize> {
        let none = vec![0; dims];
        if let Some(reqd) = self.info().reqd_work_group_size {
            let reqd = reqd.map(|x| x as usize);
            let fits = reqd[dims..].iter().all(|&x| x == 1);
            return if fits && Self::sub_group_count_for(&reqd) == count {
                reqd[..dims].to_vec()
            } else {
                none
            };
        }
        let Some(items) = count.checked_mul(SUB_GROUP_SIZE as usize) else {
            return none;
        };
        if count == 0
            || items > self.max_work_group_size(device)
            || items > device.config.max_work_item_sizes[0]
        {
            return none;
        }
        let mut local = vec![1; dims];
        local[0] = items;
        local
    }

    /// `CL_KERNEL_MAX_NUM_SUB_GROUPS`: sub-groups in the largest work-group this kernel runs.
    pub fn max_num_sub_groups(&self, device: &Device) -> usize {
        self.max_work_group_size(device)
            .div_ceil(SUB_GROUP_SIZE as usize)
    }

    /// `CL_KERNEL_COMPILE_NUM_SUB_GROUPS`: execution mode `SubgroupsPerWorkgroup`, or 0.
    pub fn compile_num_sub_groups(&self) -> usize {
        self.info().sub_groups_per_work_group.unwrap_or(0) as usize
    }

    /// The work-group size a launch uses: `local` checked against the device and the
    /// kernel, or the device's choice when it is `None`. Also checks what every launch needs
    /// (all arguments set, offset + size in range).
    fn launch_local_size(
        &self,
        device: &Device,
        values: &[Option<ArgValue>],
        work_dim: usize,
        offset: [usize; 3],
        global: [usize; 3],
        local: Option<[usize; 3]>,
    ) -> CLResult<[usize; 3]> {
        if values.iter().any(Option::is_none) {
            return Err(CL_INVALID_KERNEL_ARGS);
        }
        for d in 0..3 {
            if offset[d].checked_add(global[d]).is_none() {
                return Err(CL_INVALID_GLOBAL_OFFSET);
            }
        }
        let uniform = self.built.options.codegen.uniform_work_group_size;
        let reqd = self
            .info()
            .reqd_work_group_size
            .map(|r| r.map(|v| v as usize));
        resolve_local_size(
            &device.config,
            self.max_work_group_size(device),
            work_dim,
            global,
            local,
            reqd,
            uniform,
        )
    }

    /// `clGetKernelSuggestedLocalWorkSizeKHR`: what a launch with `local_work_size = NULL`
    /// would use.
    pub fn suggested_local_size(
        &self,
        device: &Device,
        work_dim: usize,
        offset: [usize; 3],
        global: [usize; 3],
    ) -> CLResult<[usize; 3]> {
        let values = self.lock().clone();
        self.launch_local_size(device, &values, work_dim, offset, global, None)
    }

    /// Validates a launch and packages it as a queue command that keeps every buffer argument
    /// and the compiled code alive until it has run.
    pub fn prepare_launch(
        self: &Arc<Self>,
        device: &Arc<Device>,
        work_dim: usize,
        offset: [usize; 3],
        global: [usize; 3],
        local: Option<[usize; 3]>,
    ) -> CLResult<Work> {
        let cfg = &device.config;
        let code = self.code();
        let values = self.lock().clone();
        let local = self.launch_local_size(device, &values, work_dim, offset, global, local)?;
        let packed = pack_args(
            &code.args,
            code.args_size,
            code.static_local_mem_size,
            &values,
        )?;
        if packed.arena_size as u64 > cfg.local_mem_size {
            return Err(CL_OUT_OF_RESOURCES);
        }
        let (block, keep, local_total) = (packed.block, packed.keep, packed.arena_size);
        let mut launch = Launch {
            work_dim: work_dim as u32,
            offset,
            global,
            local,
            arena_size: local_total,
            frames_size: code.work_item_frame_size * local.iter().product::<usize>(),
            round_to_zero: cfg.settings.rounding == crate::settings::Rounding::TowardZero,
            printf_buffer: 0,
        };
        crate::settings::log(
            &cfg.settings,
            crate::settings::LogLevel::Info,
            format_args!(
                "launch {}: work_dim {work_dim}, offset {:?}, global {:?}, local {:?}",
                code.info.name, launch.offset, launch.global, launch.local
            ),
        );
        let built = self.built.clone();
        let index = self.index;
        let device = device.clone();
        Ok(Box::new(move || {
            let _keep_alive = keep;
            let kernel = &built.code.kernels()[index];
            // A command whose kernel prints gets its own buffer; the text is out before the
            // command's event completes.
            let mut printf = (!kernel.printf_formats.is_empty())
                .then(|| PrintfBuffer::new(device.config.printf_buffer_size));
            launch.printf_buffer = printf.as_mut().map_or(0, PrintfBuffer::address);
            run_ndrange(&device.pool, kernel, &block, &launch);
            if let Some(printf) = printf {
                write_stdout(&printf.render(&kernel.printf_formats));
            }
            Ok(())
        }))
    }
}

impl Drop for Kernel {
    fn drop(&mut self) {
        self.program.kernel_count.fetch_sub(1, Ordering::AcqRel);
    }
}

/// The argument block of one launch, the arena size it needs and the buffers it refers to.
pub struct PackedArgs {
    pub block: ArgBlock,
    pub arena_size: usize,
    pub keep: Vec<Arc<Mem>>,
}

/// Lays the argument values out as codegen's [`ArgSlot`]s describe:
/// - buffers: the host address (u64; 0 for NULL), the buffer kept alive by the command;
/// - `__local` arguments: the u64 byte offset of their region in the arena; regions follow the
///   kernel's static local variables (rounded up to LOCAL_ARG_ALIGN), each aligned to
///   LOCAL_ARG_ALIGN;
/// - values: the bytes given to clSetKernelArg.
pub fn pack_args(
    slots: &[ArgSlot],
    args_size: usize,
    static_local_mem_size: usize,
    values: &[Option<ArgValue>],
) -> CLResult<PackedArgs> {
    let mut arena = round_up(static_local_mem_size, LOCAL_ARG_ALIGN);
    let mut block = ArgBlock::new(args_size);
    let mut keep = Vec::new();
    if slots.len() != values.len() {
        return Err(CL_INVALID_KERNEL_ARGS);
    }
    for (slot, v) in slots.iter().zip(values) {
        match v.as_ref().ok_or(CL_INVALID_KERNEL_ARGS)? {
            ArgValue::Mem(m) => {
                let addr = m.as_ref().map_or(0u64, |m| m.address() as u64);
                block.write(slot.offset, slot.size, &addr.to_ne_bytes());
                if let Some(m) = m {
                    keep.push(m.clone());
                }
            }
            ArgValue::Local(n) => {
                arena = round_up(arena, LOCAL_ARG_ALIGN);
                block.write(slot.offset, slot.size, &(arena as u64).to_ne_bytes());
                arena = arena.checked_add(*n).ok_or(CL_OUT_OF_RESOURCES)?;
            }
            ArgValue::Bytes(b) => block.write(slot.offset, slot.size, b),
        }
    }
    Ok(PackedArgs {
        block,
        arena_size: arena,
        keep,
    })
}

/// The work-group size of a launch: the application's (checked against the device limits,
/// `reqd_work_group_size` and `-cl-uniform-work-group-size`), else the required one, else one
/// chosen to divide the global size.
pub fn resolve_local_size(
    cfg: &DeviceConfig,
    max_work_group_size: usize,
    work_dim: usize,
    global: [usize; 3],
    local: Option<[usize; 3]>,
    reqd: Option<[usize; 3]>,
    uniform: bool,
) -> CLResult<[usize; 3]> {
    match local {
        Some(l) => {
            if l[..work_dim].contains(&0) {
                return Err(CL_INVALID_WORK_GROUP_SIZE);
            }
            if (0..work_dim).any(|d| l[d] > cfg.max_work_item_sizes[d]) {
                return Err(CL_INVALID_WORK_ITEM_SIZE);
            }
            if l.iter().product::<usize>() > max_work_group_size {
                return Err(CL_INVALID_WORK_GROUP_SIZE);
            }
            if reqd.is_some_and(|r| r != l) {
                return Err(CL_INVALID_WORK_GROUP_SIZE);
            }
            if uniform && (0..work_dim).any(|d| !global[d].is_multiple_of(l[d])) {
                return Err(CL_INVALID_WORK_GROUP_SIZE);
            }
            Ok(l)
        }
        None => match reqd {
            Some(r) => {
                if uniform && (0..3).any(|d| !global[d].is_multiple_of(r[d])) {
                    return Err(CL_INVALID_WORK_GROUP_SIZE);
                }
                Ok(r)
            }
            None => Ok(choose_local_size(global, cfg.max_work_group_size)),
        },
    }
}

/// Picks a work-group size when the application passes NULL: per dimension the largest divisor
/// of the global size that keeps the product within `max` (so the range stays uniform).
pub fn choose_local_size(global: [usize; 3], max: usize) -> [usize; 3] {
    // Budget: large groups amortise the per-group call, but enough groups must remain to feed
    // every worker; 256 items is a good compromise on CPUs.
    let mut budget = max.min(256);
    let mut out = [1; 3];
    for d in 0..3 {
        let g = global[d].max(1);
        let mut best = 1;
        for cand in (1..=budget.min(g)).rev() {
            if g.is_multiple_of(cand) {
                best = cand;
                break;
            }
        }
        out[d] = best;
        budget /= best;
        budget = budget.max(1);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::config::DeviceConfig;

    #[test]
    fn args_are_packed_per_slot() {
        let slots = [
            ArgSlot { offset: 0, size: 8 },
            ArgSlot { offset: 8, size: 8 },
            ArgSlot {
                offset: 16,
                size: 4,
            },
            ArgSlot {
                offset: 24,
                size: 8,
            },
        ];
        let values = [
            Some(ArgValue::Mem(None)),
            Some(ArgValue::Local(10)),
            Some(ArgValue::Bytes(vec![1, 2, 3, 4])),
            Some(ArgValue::Local(300)),
        ];
        let p = pack_args(&slots, 32, 5, &values).unwrap();
        // SAFETY: the block has at least 32 bytes.
        let b = unsafe { std::slice::from_raw_parts(p.block.as_ptr(), 32) };
        let word = |o: usize| u64::from_ne_bytes(b[o..o + 8].try_into().unwrap());
        assert_eq!(word(0), 0);
        assert_eq!(word(8), LOCAL_ARG_ALIGN as u64);
        assert_eq!(&b[16..20], &[1, 2, 3, 4]);
        assert_eq!(word(24), 2 * LOCAL_ARG_ALIGN as u64);
        assert_eq!(p.arena_size, 2 * LOCAL_ARG_ALIGN + 300);
        assert!(p.keep.is_empty());
        let missing = [Some(ArgValue::Mem(None)), None, None, None];
        assert_eq!(
            pack_args(&slots, 32, 0, &missing).err(),
            Some(CL_INVALID_KERNEL_ARGS)
        );
    }

    #[test]
    fn work_group_size_rules() {
        let cfg = DeviceConfig::detect(&crate::settings::Settings::parse(|_| None, |_| {}), 2);
        let r =
            |l, reqd, uniform| resolve_local_size(&cfg, 4096, 2, [100, 10, 1], l, reqd, uniform);
        assert_eq!(r(Some([10, 10, 1]), None, false), Ok([10, 10, 1]));
        assert_eq!(
            r(Some([0, 1, 1]), None, false),
            Err(CL_INVALID_WORK_GROUP_SIZE)
        );
        assert_eq!(
            r(Some([5000, 1, 1]), None, false),
            Err(CL_INVALID_WORK_ITEM_SIZE)
        );
        assert_eq!(
            r(Some([1024, 8, 1]), None, false),
            Err(CL_INVALID_WORK_GROUP_SIZE)
        );
        assert_eq!(r(Some([30, 1, 1]), None, false), Ok([30, 1, 1]));
        assert_eq!(
            r(Some([30, 1, 1]), None, true),
            Err(CL_INVALID_WORK_GROUP_SIZE)
        );
        assert_eq!(
            r(Some([10, 1, 1]), Some([20, 1, 1]), false),
            Err(CL_INVALID_WORK_GROUP_SIZE)
        );
        assert_eq!(r(None, Some([20, 1, 1]), false), Ok([20, 1, 1]));
        assert_eq!(r(None, None, false), Ok([100, 2, 1]));
    }

    #[test]
    fn local_size_divides_global() {
        assert_eq!(choose_local_size([1024, 1, 1], 4096), [256, 1, 1]);
        assert_eq!(choose_local_size([1000, 1, 1], 4096), [250, 1, 1]);
        assert_eq!(choose_local_size([7, 9, 1], 4096), [7, 9, 1]);
        assert_eq!(choose_local_size([97, 1, 1], 4096), [97, 1, 1]);
        let l = choose_local_size([64, 64, 64], 4096);
        assert!(l.iter().product::<usize>() <= 256);
        assert!((0..3).all(|d| 64 % l[d] == 0));
    }
}
