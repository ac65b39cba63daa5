//! Kernels: the compiled kernel of a built program, the argument values set so far, and
//! turning a launch into a command (argument block snapshot, local-memory layout, work-group
//! size choice and checks).

use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex, Weak};

use ferrocl_codegen::{ArgSlot, LOCAL_ARG_ALIGN, SUB_GROUP_SIZE};
use ferrocl_frontend::{AddressQualifier, ArgKind, KernelInfo};
use opencl_sys::*;

use crate::config::DeviceConfig;
use crate::device_queue::DeviceQueue;
use crate::executor::{ArgBlock, Launch};
use crate::memory::Mem;
use crate::object::{Base, CLResult, Tag};
use crate::platform::Device;
use crate::program::{Built, Program};
use crate::svm::{AllocationKind, SvmAllocation, SvmLevel};

pub use crate::kernel_launch::KernelLaunch;

/// A value given to clSetKernelArg, kept until the next call for that index.
#[derive(Clone)]
pub enum ArgValue {
    /// A memory object, not kept alive by the kernel: releasing its last reference deletes it
    /// (and runs its destructor callbacks) even while it is still set as an argument (API
    /// spec, clReleaseMemObject: only commands that use it keep it; CTS api
    /// retain_mem_object_set_kernel_arg). A launch with a deleted one is refused.
    Mem(Option<Weak<Mem>>),
    /// `clSetKernelArgSVMPointer`: the address itself (host and device share memory).
    Svm(usize),
    Local(usize),
    Bytes(Vec<u8>),
    /// An image, held as weakly as `Mem`; kernels receive the address of its descriptor
    /// (`abi::ImageDescriptor`).
    Image(Weak<Mem>),
    /// A sampler as kernels see it: its record (`abi::SamplerDescriptor`), copied into the
    /// argument block.
    Sampler(ferrocl_codegen::SamplerDescriptor),
    /// A pipe object, held as weakly as `Mem`; kernels receive the address of its
    /// `ferrocl_codegen::Pipe`.
    Pipe(Weak<Mem>),
    /// A device queue for a `queue_t` argument, held as weakly as `Mem`; kernels receive its
    /// handle's address.
    Queue(Weak<DeviceQueue>),
}

/// What `clSetKernelExecInfo` told a kernel.
#[derive(Clone, Debug, Default)]
pub struct ExecInfo {
    /// `CL_KERNEL_EXEC_INFO_SVM_PTRS`: SVM memory the kernel reaches other than through its
    /// arguments; launches hold their allocations until they complete.
    pub svm_pointers: Vec<usize>,
    /// `CL_KERNEL_EXEC_INFO_SVM_FINE_GRAIN_SYSTEM`.
    pub fine_grain_system: bool,
    /// `CL_KERNEL_EXEC_INFO_USM_PTRS_INTEL`.
    pub usm_pointers: Vec<usize>,
    /// `CL_KERNEL_EXEC_INFO_INDIRECT_{HOST,DEVICE,SHARED}_ACCESS_INTEL`: launches hold every
    /// allocation of these kinds.
    pub indirect: Vec<AllocationKind>,
}

#[repr(C)]
pub struct Kernel {
    base: Base,
    pub program: Arc<Program>,
    pub built: Arc<Built>,
    pub index: usize,
    args: Mutex<Vec<Option<ArgValue>>>,
    exec_info: Mutex<ExecInfo>,
}
crate::cl_object!(Kernel, Kernel, CL_INVALID_KERNEL);

fn round_up(v: usize, a: usize) -> usize {
    v.div_ceil(a) * a
}

impl Kernel {
    pub fn new(program: &Arc<Program>, name: &str) -> CLResult<Arc<Kernel>> {
        let built = program.built().ok_or(CL_INVALID_PROGRAM_EXECUTABLE)?;
        // The kernels that run blocks (device-side enqueue) are no application's.
        let index = built
            .code
            .kernels()
            .iter()
            .position(|k| k.info.name == name && !k.info.block_invoke)
            .ok_or(CL_INVALID_KERNEL_NAME)?;
        let n = built.code.kernels()[index].info.args.len();
        program.kernel_count.fetch_add(1, Ordering::AcqRel);
        Ok(Arc::new(Kernel {
            base: Base::new(Tag::Kernel),
            program: program.clone(),
            built,
            index,
            args: Mutex::new(vec![None; n]),
            exec_info: Mutex::new(ExecInfo::default()),
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
            exec_info: Mutex::new(self.exec_info().clone()),
        })
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<Option<ArgValue>>> {
        self.args.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn exec_info(&self) -> std::sync::MutexGuard<'_, ExecInfo> {
        self.exec_info.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// `clSetKernelExecInfo(CL_KERNEL_EXEC_INFO_SVM_PTRS)`.
    pub fn set_svm_pointers(&self, pointers: Vec<usize>) -> CLResult<()> {
        self.require_svm()?;
        self.exec_info().svm_pointers = pointers;
        Ok(())
    }

    /// `clSetKernelExecInfo(CL_KERNEL_EXEC_INFO_SVM_FINE_GRAIN_SYSTEM)`: CL_INVALID_OPERATION
    /// for true unless the device has fine-grain system SVM; false is taken without SVM too
    /// (API spec 3.1 §5.9.2, clSetKernelExecInfo's errors: only `CL_TRUE` needs the support).
    pub fn set_fine_grain_system(&self, on: bool) -> CLResult<()> {
        if on && !self.program.context.svm_level().system_pointers() {
            return Err(CL_INVALID_OPERATION);
        }
        self.exec_info().fine_grain_system = on;
        Ok(())
    }

    /// `clSetKernelExecInfo(CL_KERNEL_EXEC_INFO_USM_PTRS_INTEL)`.
    pub fn set_usm_pointers(&self, pointers: Vec<usize>) -> CLResult<()> {
        self.require_svm()?;
        self.exec_info().usm_pointers = pointers;
        Ok(())
    }

    /// `clSetKernelExecInfo(CL_KERNEL_EXEC_INFO_INDIRECT_*_ACCESS_INTEL)`.
    pub fn set_indirect_access(&self, kind: AllocationKind, on: bool) -> CLResult<()> {
        self.require_svm()?;
        let mut info = self.exec_info();
        info.indirect.retain(|k| *k != kind);
        if on {
            info.indirect.push(kind);
        }
        Ok(())
    }

    /// `clSetKernelExecInfo(CL_KERNEL_EXEC_INFO_SVM_INDIRECT_ACCESS_KHR)`: launches hold every
    /// allocation of `clSVMAlloc` and `clSVMAllocWithPropertiesKHR` (every SVM type here has
    /// `CL_SVM_CAPABILITY_INDIRECT_ACCESS_KHR`).
    pub fn set_svm_indirect_access(&self, on: bool) -> CLResult<()> {
        self.set_indirect_access(AllocationKind::Svm, on)?;
        self.set_indirect_access(AllocationKind::Unified, on)
    }

    /// `clSetKernelArgMemPointerINTEL`: any pointer value (extension version 1.1.0) for a
    /// `__global` or `__constant` pointer argument.
    pub fn set_arg_usm_pointer(&self, index: usize, ptr: usize) -> CLResult<()> {
        self.set_arg_pointer(index, ptr)
    }

    fn require_svm(&self) -> CLResult<()> {
        if self.program.context.svm_level() == SvmLevel::Off {
            return Err(CL_INVALID_OPERATION);
        }
        Ok(())
    }

    /// `clSetKernelArgSVMPointer`: a `__global` or `__constant` pointer argument, any pointer
    /// value: `cl_khr_unified_svm`, which every device with SVM has, makes every value valid
    /// (whether a kernel may dereference it is the application's business, as for USM).
    pub fn set_arg_svm_pointer(&self, index: usize, ptr: usize) -> CLResult<()> {
        self.set_arg_pointer(index, ptr)
    }

    /// A pointer value (any) for a `__global` or `__constant` pointer argument.
    fn set_arg_pointer(&self, index: usize, ptr: usize) -> CLResult<()> {
        self.require_svm()?;
        match self.arg_kind(index)? {
            ArgKind::Buffer { address } if *address != AddressQualifier::Local => {}
            _ => return Err(CL_INVALID_ARG_VALUE),
        }
        self.lock()[index] = Some(ArgValue::Svm(ptr));
        Ok(())
    }

    /// The kernel built for the formats and samplers `values` bind (codegen's
    /// `Program::specialized`, cached per combination); None for kernels without image or
    /// sampler arguments, or when that build fails (the generic kernel runs then, and the log
    /// says why).
    fn specialize(&self, values: &[Option<ArgValue>]) -> Option<Arc<ferrocl_codegen::Program>> {
        if !self.program.context.devices[0].config.settings.specialize {
            return None;
        }
        let mut spec = ferrocl_codegen::Specialization {
            kernel: self.info().name.clone(),
            ..Default::default()
        };
        for (i, v) in values.iter().enumerate() {
            match v {
                Some(ArgValue::Image(m)) => {
                    let m = m.upgrade()?;
                    let d = m.image_descriptor()?;
                    spec.images.push((
                        i,
                        ferrocl_codegen::ImageKey {
                            order: d.channel_order,
                            data_type: d.channel_data_type,
                            mipmapped: d.num_mip_levels > 1,
                        },
                    ));
                }
                Some(ArgValue::Sampler(record)) => spec.samplers.push((i, *record)),
                _ => {}
            }
        }
        if spec.images.is_empty() && spec.samplers.is_empty() {
            return None;
        }
        match self.built.code.specialized(&spec)? {
            // The launch was sized for the generic kernel's work-item frames.
            Ok((p, fresh))
                if p.kernels().len() == 1
                    && p.kernels()[0].work_item_frame_size <= self.code().work_item_frame_size =>
            {
                if fresh {
                    crate::program::log_kernel_shape(
                        &self.program.context.devices[0].config.settings,
                        &p.kernels()[0],
                        " (specialised to its image formats and samplers)",
                    );
                }
                Some(p)
            }
            Ok(_) => None,
            Err(e) => {
                crate::settings::log(
                    &self.program.context.devices[0].config.settings,
                    crate::settings::LogLevel::Warn,
                    format_args!(
                        "kernel {}: its build for the bound image formats failed, the generic one runs: {}",
                        spec.kernel,
                        e.log.trim_end()
                    ),
                );
                None
            }
        }
    }

    /// The SVM allocations a launch with the current arguments and exec info touches.
    fn svm_in_use(&self, values: &[Option<ArgValue>]) -> Vec<Arc<SvmAllocation>> {
        let registry = &self.program.context.svm;
        let args = values.iter().filter_map(|v| match v {
            Some(ArgValue::Svm(p)) => Some(*p),
            _ => None,
        });
        let info = self.exec_info();
        let listed = info.svm_pointers.iter().chain(&info.usm_pointers).copied();
        let mut held: Vec<Arc<SvmAllocation>> = args
            .chain(listed)
            .filter_map(|p| registry.find(p))
            .collect();
        if !info.indirect.is_empty() {
            held.extend(registry.of_kinds(&info.indirect));
        }
        held
    }

    pub fn code(&self) -> &ferrocl_codegen::Kernel {
        &self.built.code.kernels()[self.index]
    }

    pub fn info(&self) -> &KernelInfo {
        &self.code().info
    }

    /// `CL_KERNEL_ATTRIBUTES`: the declaration's attributes, empty for a kernel of IL (API
    /// spec 3.1 §5.9.4: "for kernels not created from OpenCL C source ... empty").
    pub fn attributes(&self) -> String {
        if self.program.source.is_il() {
            return String::new();
        }
        self.info().attributes()
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
            (ArgKind::Buffer { .. }, ArgValue::Mem(m)) => {
                if size != std::mem::size_of::<cl_mem>() {
                    return Err(CL_INVALID_ARG_SIZE);
                }
                // An image is no buffer: its pixels are not a pointer a kernel may use.
                if let Some(m) = m.as_ref().and_then(Weak::upgrade) {
                    m.expect_buffer()?;
                }
                true
            }
            // Zero bytes: no local memory, valid on an OpenCL 3.1 platform (API spec 3.1
            // §5.9.2); the kernel's pointer is then the arena's offset with nothing behind it.
            (ArgKind::Local, ArgValue::Local(n)) => {
                let config = &self.program.context.devices[0].config;
                if *n == 0 && !config.allows_empty_local_args() {
                    return Err(CL_INVALID_ARG_SIZE);
                }
                true
            }
            (ArgKind::Image { .. }, ArgValue::Image(_)) => {
                if size != std::mem::size_of::<cl_mem>() {
                    return Err(CL_INVALID_ARG_SIZE);
                }
                true
            }
            (ArgKind::Pipe { .. }, ArgValue::Pipe(m)) => {
                if size != std::mem::size_of::<cl_mem>() {
                    return Err(CL_INVALID_ARG_SIZE);
                }
                if let Some(m) = m.upgrade() {
                    m.expect_pipe()?;
                }
                true
            }
            (ArgKind::Queue, ArgValue::Queue(_)) => {
                if size != std::mem::size_of::<*const DeviceQueue>() {
                    return Err(CL_INVALID_ARG_SIZE);
                }
                true
            }
            (ArgKind::Sampler, ArgValue::Sampler(_)) => {
                if size != std::mem::size_of::<cl_sampler>() {
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

    /// Whether every argument has a value (a launch needs them all).
    pub fn args_complete(&self) -> bool {
        self.lock().iter().all(Option::is_some)
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

    /// `CL_KERNEL_WORK_GROUP_SIZE`: the largest work-group this kernel can run with on
    /// `device`. Besides the device maximum, `reqd_work_group_size` and
    /// `SubgroupsPerWorkgroup` bound it, and so do the work-item frames of a kernel with
    /// barriers: a group's frames must fit in [`MAX_GROUP_FRAME_BYTES`].
    pub fn max_work_group_size(&self, device: &Device) -> usize {
        self.limits(device).max_items
    }

    /// What this kernel allows as a work-group size on `device` (see [`GroupLimits`]).
    pub fn limits(&self, device: &Device) -> GroupLimits {
        group_limits(&self.built, self.index, device)
    }

    /// Whether `device` has sub-groups (FERROCL_SUBGROUPS=on).
    pub fn sub_groups_supported(device: &Device) -> bool {
        device.config.has(crate::features::FeatureId::SubGroups)
    }

    /// Work-items per sub-group of this kernel (its required size, else the device's).
    pub fn sub_group_size(&self) -> usize {
        sub_group_size(self.info())
    }

    /// `CL_KERNEL_MAX_SUB_GROUP_SIZE_FOR_NDRANGE`: the largest sub-group of a work-group of
    /// `local` work-items (sub-groups are [`Kernel::sub_group_size`] consecutive work-items,
    /// the last one may be smaller).
    pub fn max_sub_group_size_for(&self, local: &[usize]) -> usize {
        max_sub_group_size_for(local, self.sub_group_size())
    }

    /// `CL_KERNEL_SUB_GROUP_COUNT_FOR_NDRANGE`.
    pub fn sub_group_count_for(&self, local: &[usize]) -> usize {
        sub_group_count_for(local, self.sub_group_size())
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
            return if fits && self.sub_group_count_for(&reqd) == count {
                reqd[..dims].to_vec()
            } else {
                none
            };
        }
        if self
            .info()
            .sub_groups_per_work_group
            .is_some_and(|n| n as usize != count)
        {
            return none;
        }
        let Some(items) = count.checked_mul(self.sub_group_size()) else {
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
            .div_ceil(self.sub_group_size())
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
        self.launch_shape(device, work_dim, offset, global, local)
    }

    /// The checks of a launch that do not depend on its argument values, and its work-group
    /// size: also for a command-buffer kernel command recorded before its arguments are set
    /// (`cl_khr_command_buffer_mutable_dispatch`).
    pub fn launch_shape(
        &self,
        device: &Device,
        work_dim: usize,
        offset: [usize; 3],
        global: [usize; 3],
        local: Option<[usize; 3]>,
    ) -> CLResult<[usize; 3]> {
        for d in 0..3 {
            if offset[d].checked_add(global[d]).is_none() {
                return Err(CL_INVALID_GLOBAL_OFFSET);
            }
        }
        // Work-items and work-groups are counted in size_t (the executor, linear ids): a range
        // whose count does not fit would run until the watchdog stops it, or forever.
        let work_items = global
            .iter()
            .try_fold(1usize, |count, &size| count.checked_mul(size));
        if work_items.is_none() && !global.contains(&0) {
            return Err(CL_INVALID_GLOBAL_WORK_SIZE);
        }
        let limits = self.limits(device);
        let local = resolve_local_size(&limits, work_dim, global, local)?;
        // `max_items` counts the frame budget but never drops below 1: a kernel whose single
        // work-item frame is over the budget cannot run at all.
        let items: usize = local.iter().product();
        if items.saturating_mul(self.code().work_item_frame_size) > MAX_GROUP_FRAME_BYTES {
            return Err(CL_OUT_OF_RESOURCES);
        }
        Ok(local)
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
    ) -> CLResult<KernelLaunch> {
        let cfg = &device.config;
        let code = self.code();
        let values = self.lock().clone();
        let local = self.launch_local_size(device, &values, work_dim, offset, global, local)?;
        let registry = &self.program.context.svm;
        // A checked kernel's SVM pointer may reach its whole allocation; one into no allocation
        // (fine-grain system SVM: any host memory) has no object to check against.
        let svm_object = |p: usize| match registry.find(p) {
            Some(a) => (a.base() as u64, (a.base() + a.size()) as u64),
            None if p == 0 => (0, 0),
            None => (0, u64::MAX),
        };
        let packed = pack_args(
            &code.args,
            code.args_size,
            code.static_local_mem_size,
            &values,
            &svm_object,
        )?;
        if packed.arena_size as u64 > cfg.local_mem_size {
            return Err(CL_OUT_OF_RESOURCES);
        }
        let (block, keep, local_total) = (packed.block, packed.keep, packed.arena_size);
        let queues = packed.queues;
        let svm = self.svm_in_use(&values);
        // Where a checked kernel's pointers of unknown object may reach (ferrocl_codegen's
        // CheckedLaunch): the buffers it was given, every SVM and USM allocation of the
        // context, the program's variables.
        let checked_regions = code.checked.then(|| {
            // A pipe's packets are reached by the pipe functions only, never by a pointer.
            let buffers = keep
                .iter()
                .filter(|m| m.pipe().is_none())
                .map(|m| (m.address() as u64, m.address() as u64 + m.size as u64));
            let allocations = registry
                .of_kinds(&[
                    AllocationKind::Svm,
                    AllocationKind::UsmHost,
                    AllocationKind::UsmDevice,
                    AllocationKind::UsmShared,
                    AllocationKind::Unified,
                ])
                .into_iter()
                .map(|a| (a.base() as u64, (a.base() + a.size()) as u64));
            let regions = buffers
                .chain(allocations)
                .chain(self.built.code.data_regions.iter().copied())
                .collect();
            (regions, self.built.code.constant_regions.clone())
        });
        let launch = Launch {
            work_dim: work_dim as u32,
            offset,
            global,
            local,
            arena_size: local_total,
            frames_size: code.work_item_frame_size * local.iter().product::<usize>(),
            round_to_zero: cfg.settings.rounding == crate::settings::Rounding::TowardZero,
            zero_memory: self.program.context.initialize,
            printf_buffer: 0,
            stop: None,
            checked: 0,
            device_enqueue: 0,
        };
        crate::settings::log(
            &cfg.settings,
            crate::settings::LogLevel::Info,
            format_args!(
                "launch {}: work_dim {work_dim}, offset {:?}, global {:?}, local {:?}",
                code.info.name, launch.offset, launch.global, launch.local
            ),
        );
        // Image kernels run their per-format build; others their wide build once tiering made
        // it.
        let specialized = self
            .specialize(&values)
            .or_else(|| self.built.tiers.wide(self.index));
        let tiered = specialized.is_none()
            && cfg.settings.backend == crate::settings::BackendSetting::Tiered;
        Ok(KernelLaunch {
            tiered,
            built: self.built.clone(),
            index: self.index,
            specialized,
            device: device.clone(),
            launch,
            block,
            checked_regions,
            _keep_alive: keep,
            _svm_in_use: svm,
            context: self.program.context.clone(),
            _queues: queues,
        })
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
    /// The device queues of `queue_t` arguments.
    pub queues: Vec<Arc<DeviceQueue>>,
}

/// Lays the argument values out as codegen's [`ArgSlot`]s describe:
/// - buffers: the host address (u64; 0 for NULL), the buffer kept alive by the command;
/// - images, pipes and device queues: the address of the image's descriptor, of the pipe's
///   `ferrocl_codegen::Pipe` or of the queue's handle (u64), the object kept alive by the
///   command;
/// - `__local` arguments: the u64 byte offset of their region in the arena; regions follow the
///   kernel's static local variables (rounded up to LOCAL_ARG_ALIGN), each aligned to
///   LOCAL_ARG_ALIGN;
/// - values: the bytes given to clSetKernelArg.
pub fn pack_args(
    slots: &[ArgSlot],
    args_size: usize,
    static_local_mem_size: usize,
    values: &[Option<ArgValue>],
    svm_object: &dyn Fn(usize) -> (u64, u64),
) -> CLResult<PackedArgs> {
    let mut arena = round_up(static_local_mem_size, LOCAL_ARG_ALIGN);
    let mut block = ArgBlock::new(args_size);
    let mut keep = Vec::new();
    let mut queues = Vec::new();
    if slots.len() != values.len() {
        return Err(CL_INVALID_KERNEL_ARGS);
    }
    for (slot, v) in slots.iter().zip(values) {
        // Checked kernels: the object the pointer may reach (codegen's ArgSlot::bounds).
        let mut write_bounds = |start: u64, end: u64| {
            if let Some(at) = slot.bounds {
                block.write(at, 8, &start.to_ne_bytes());
                block.write(at + 8, 8, &end.to_ne_bytes());
            }
        };
        match v.as_ref().ok_or(CL_INVALID_KERNEL_ARGS)? {
            ArgValue::Mem(m) => {
                let m = m
                    .as_ref()
                    .map(|m| m.upgrade().ok_or(CL_INVALID_KERNEL_ARGS))
                    .transpose()?;
                let addr = m.as_ref().map_or(0u64, |m| m.address() as u64);
                write_bounds(addr, addr + m.as_ref().map_or(0, |m| m.size as u64));
                block.write(slot.offset, slot.size, &addr.to_ne_bytes());
                keep.extend(m);
            }
            ArgValue::Local(n) => {
                arena = round_up(arena, LOCAL_ARG_ALIGN);
                write_bounds(arena as u64, (arena + n) as u64);
                block.write(slot.offset, slot.size, &(arena as u64).to_ne_bytes());
                arena = arena.checked_add(*n).ok_or(CL_OUT_OF_RESOURCES)?;
            }
            ArgValue::Svm(p) => {
                let (start, end) = svm_object(*p);
                write_bounds(start, end);
                block.write(slot.offset, slot.size, &(*p as u64).to_ne_bytes())
            }
            ArgValue::Bytes(b) => block.write(slot.offset, slot.size, b),
            ArgValue::Image(m) => {
                let m = m.upgrade().ok_or(CL_INVALID_KERNEL_ARGS)?;
                let descriptor = m.image_descriptor().ok_or(CL_INVALID_KERNEL_ARGS)?;
                let addr = descriptor as *const ferrocl_codegen::ImageDescriptor as u64;
                block.write(slot.offset, slot.size, &addr.to_ne_bytes());
                keep.push(m);
            }
            ArgValue::Pipe(m) => {
                let m = m.upgrade().ok_or(CL_INVALID_KERNEL_ARGS)?;
                let pipe = m.pipe().ok_or(CL_INVALID_KERNEL_ARGS)?;
                let addr = pipe as *const ferrocl_codegen::Pipe as u64;
                block.write(slot.offset, slot.size, &addr.to_ne_bytes());
                keep.push(m);
            }
            ArgValue::Queue(q) => {
                let q = q.upgrade().ok_or(CL_INVALID_KERNEL_ARGS)?;
                block.write(slot.offset, slot.size, &q.address().to_ne_bytes());
                queues.push(q);
            }
            ArgValue::Sampler(r) => {
                let mut bytes = [0u8; ferrocl_codegen::SamplerDescriptor::SIZE];
                bytes[0..4].copy_from_slice(&r.bits.to_ne_bytes());
                bytes[4..8].copy_from_slice(&r.lod_min.to_ne_bytes());
                bytes[8..12].copy_from_slice(&r.lod_max.to_ne_bytes());
                block.write(slot.offset, bytes.len(), &bytes)
            }
        }
    }
    Ok(PackedArgs {
        block,
        arena_size: arena,
        keep,
        queues,
    })
}

/// Bytes of work-item frames (the private memory of kernels with barriers) one work-group
/// may use. Each worker keeps its arena between launches, so this bounds what a launch can
/// leave allocated per worker; `CL_KERNEL_WORK_GROUP_SIZE` shrinks below the device maximum for
/// kernels whose frames would not fit.
pub const MAX_GROUP_FRAME_BYTES: usize = 64 << 20;

/// Work-items a chosen work-group aims at: large groups amortise the per-group call, but
/// enough groups must remain to feed every worker.
const CHOSEN_GROUP_ITEMS: usize = 256;
/// What a chosen work-group of a kernel without barriers may grow to on a large range: each
/// group is one call of the work-group function (its entry, exit and loop set-up), which
/// groups of 256 made a tenth of a streaming kernel's instructions. The benchmark's triad
/// (64 Mi floats, AVX-512, 2 workers) ran 34.0 ms min / 36.3 median in groups of 4096
/// against 36.0 / 39.7 in groups of 256; PoCL chooses 4096 (33.3 / 36.6). Kernels with
/// barriers keep [`CHOSEN_GROUP_ITEMS`]: their work-item frames and barrier regions grow with
/// the group.
const CHOSEN_GROUP_ITEMS_WITHOUT_BARRIERS: usize = 4096;
/// Work-groups per worker a chosen size larger than [`CHOSEN_GROUP_ITEMS`] still leaves, for
/// the executor's work stealing to balance uneven groups.
const CHOSEN_GROUPS_PER_WORKER: usize = 32;

/// What a kernel allows as a work-group size on one device.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GroupLimits {
    /// Work-items per sub-group of the kernel.
    pub sub_group_size: usize,
    /// `CL_KERNEL_WORK_GROUP_SIZE`.
    pub max_items: usize,
    /// `CL_DEVICE_MAX_WORK_ITEM_SIZES`.
    pub max_item_sizes: [usize; 3],
    /// `reqd_work_group_size` (execution mode `LocalSize`).
    pub reqd: Option<[usize; 3]>,
    /// Execution mode `SubgroupsPerWorkgroup`: the sub-groups every full group must have.
    pub sub_groups: Option<usize>,
    /// The global size must be a multiple of the local size (OpenCL C before 2.0,
    /// `-cl-uniform-work-group-size`, or a device without non-uniform work-groups).
    pub uniform: bool,
    /// The kernel has no barriers (its chosen work-groups may be larger).
    pub barrier_free: bool,
    /// Workers that share a launch (`CL_DEVICE_MAX_COMPUTE_UNITS`).
    pub workers: usize,
}

/// Work-items per sub-group of a kernel: its required size (`SubgroupSize`,
/// `intel_reqd_sub_group_size`), else the device's [`SUB_GROUP_SIZE`].
pub fn sub_group_size(info: &KernelInfo) -> usize {
    ferrocl_codegen::sub_group_size_of(info, SUB_GROUP_SIZE) as usize
}

/// The largest sub-group of a work-group of `local` work-items, sub-groups of `size`.
pub fn max_sub_group_size_for(local: &[usize], size: usize) -> usize {
    local.iter().product::<usize>().min(size)
}

/// Sub-groups of `size` in a work-group of `local` work-items (the last may be smaller).
pub fn sub_group_count_for(local: &[usize], size: usize) -> usize {
    local.iter().product::<usize>().div_ceil(size)
}

/// What kernel `index` of `built` allows as a work-group size on `device`: besides the device
/// maximum, `reqd_work_group_size` and `SubgroupsPerWorkgroup` bound it, and so do the
/// work-item frames of a kernel with barriers (a group's must fit in
/// [`MAX_GROUP_FRAME_BYTES`]). Also for the kernels of blocks (device_enqueue.rs).
pub fn group_limits(built: &Built, index: usize, device: &Device) -> GroupLimits {
    let cfg = &device.config;
    let code = &built.code.kernels()[index];
    let info = &code.info;
    let reqd = info.reqd_work_group_size.map(|r| r.map(|v| v as usize));
    let sub_groups = info.sub_groups_per_work_group.map(|n| n as usize);
    let mut max_items = cfg.max_work_group_size;
    if let Some(r) = reqd {
        max_items = max_items.min(r.iter().product());
    }
    let sub_group_size = sub_group_size(info);
    if let Some(n) = sub_groups {
        max_items = max_items.min(n.saturating_mul(sub_group_size));
    }
    // Kernels without barriers have no frames (size 0).
    if let Some(fit) = MAX_GROUP_FRAME_BYTES.checked_div(code.work_item_frame_size) {
        max_items = max_items.min(fit.max(1));
    }
    GroupLimits {
        sub_group_size,
        max_items: max_items.max(1),
        max_item_sizes: cfg.max_work_item_sizes,
        reqd,
        sub_groups,
        uniform: built.uniform_work_groups || !cfg.non_uniform_work_group_support,
        barrier_free: code.barrier_schedule == ferrocl_codegen::BarrierSchedule::None,
        workers: cfg.compute_units as usize,
    }
}

/// Checks a kernel's work-group attributes against the device when a program is built: a
/// required size or sub-group count no launch could satisfy fails the build, naming the kernel,
/// rather than every launch.
pub fn check_work_group_attributes(info: &KernelInfo, cfg: &DeviceConfig) -> Result<(), String> {
    let name = &info.name;
    let max = cfg.max_work_group_size;
    let sizes = cfg.max_work_item_sizes;
    if let Some(r) = info.reqd_work_group_size {
        let attr = format!("reqd_work_group_size({},{},{})", r[0], r[1], r[2]);
        if r.contains(&0) {
            return Err(format!(
                "error: kernel '{name}': {attr} has a zero dimension\n"
            ));
        }
        if (0..3).any(|d| r[d] as usize > sizes[d]) {
            return Err(format!(
                "error: kernel '{name}': {attr} exceeds CL_DEVICE_MAX_WORK_ITEM_SIZES ({}, {}, {})\n",
                sizes[0], sizes[1], sizes[2]
            ));
        }
        let items = r.iter().map(|&v| v as u64).product::<u64>();
        if items > max as u64 {
            return Err(format!(
                "error: kernel '{name}': {attr} asks for {items} work-items, more than CL_DEVICE_MAX_WORK_GROUP_SIZE ({max})\n"
            ));
        }
    }
    if let Some(n) = info.sub_groups_per_work_group {
        let n = n as usize;
        let size = sub_group_size(info);
        let max_sub_groups = max.div_ceil(size);
        if n == 0 || n > max_sub_groups {
            return Err(format!(
                "error: kernel '{name}': SubgroupsPerWorkgroup {n} is not between 1 and CL_DEVICE_MAX_NUM_SUB_GROUPS ({max_sub_groups})\n"
            ));
        }
        if let Some(r) = info.reqd_work_group_size {
            let items = r.iter().map(|&v| v as usize).product::<usize>();
            if items.div_ceil(size) != n {
                return Err(format!(
                    "error: kernel '{name}': reqd_work_group_size({},{},{}) makes {} sub-groups of {}, but SubgroupsPerWorkgroup asks for {n}\n",
                    r[0], r[1], r[2], items.div_ceil(size), size
                ));
            }
        }
    }
    Ok(())
}

/// The work-group size of a launch: the application's, checked against the device and the
/// kernel (clEnqueueNDRangeKernel's CL_INVALID_WORK_GROUP_SIZE / CL_INVALID_WORK_ITEM_SIZE
/// rules), or with `local = None` the required size, else one chosen by
/// [`choose_local_size`].
pub fn resolve_local_size(
    limits: &GroupLimits,
    work_dim: usize,
    global: [usize; 3],
    local: Option<[usize; 3]>,
) -> CLResult<[usize; 3]> {
    let divides = |l: [usize; 3]| (0..work_dim).all(|d| global[d].is_multiple_of(l[d]));
    match local {
        Some(l) => {
            if l[..work_dim].contains(&0) {
                return Err(CL_INVALID_WORK_GROUP_SIZE);
            }
            if (0..work_dim).any(|d| l[d] > limits.max_item_sizes[d]) {
                return Err(CL_INVALID_WORK_ITEM_SIZE);
            }
            if l.iter().product::<usize>() > limits.max_items {
                return Err(CL_INVALID_WORK_GROUP_SIZE);
            }
            if limits.reqd.is_some_and(|r| r != l) {
                return Err(CL_INVALID_WORK_GROUP_SIZE);
            }
            if limits
                .sub_groups
                .is_some_and(|n| sub_group_count_for(&l, limits.sub_group_size) != n)
            {
                return Err(CL_INVALID_WORK_GROUP_SIZE);
            }
            if limits.uniform && !divides(l) {
                return Err(CL_INVALID_WORK_GROUP_SIZE);
            }
            Ok(l)
        }
        None => match limits.reqd {
            Some(r) => {
                // A required size of more dimensions than the launch cannot be used.
                if r[work_dim..].iter().any(|&v| v != 1) {
                    return Err(CL_INVALID_WORK_GROUP_SIZE);
                }
                if limits.uniform && !divides(r) {
                    return Err(CL_INVALID_WORK_GROUP_SIZE);
                }
                if r.iter().product::<usize>() > limits.max_items {
                    return Err(CL_OUT_OF_RESOURCES);
                }
                Ok(r)
            }
            None => choose_local_size(limits, work_dim, global),
        },
    }
}

/// Picks a work-group size when the application passes NULL (and answers
/// `clGetKernelSuggestedLocalWorkSizeKHR`):
/// - with `SubgroupsPerWorkgroup` n, a size of n sub-groups (see [`sub_group_local_size`]);
/// - otherwise about [`CHOSEN_GROUP_ITEMS`] work-items (for a kernel without barriers, up to
///   [`CHOSEN_GROUP_ITEMS_WITHOUT_BARRIERS`] while each worker keeps
///   [`CHOSEN_GROUPS_PER_WORKER`] groups), dimension 0 first. Uniform ranges get
///   the largest divisor of each global size. Non-uniform ranges take a whole dimension when
///   it fits, else a divisor that fills at least half the budget, else equal groups rounded up
///   to whole sub-groups with a smaller last group — so a prime global size such as 1009 gets
///   groups of 256, not of 1.
pub fn choose_local_size(
    limits: &GroupLimits,
    work_dim: usize,
    global: [usize; 3],
) -> CLResult<[usize; 3]> {
    if let Some(n) = limits.sub_groups {
        return sub_group_local_size(limits, n, work_dim, global);
    }
    let sub_group = limits.sub_group_size;
    let target = if limits.barrier_free {
        let items = global[..work_dim]
            .iter()
            .fold(1usize, |n, &g| n.saturating_mul(g.max(1)));
        (items / (limits.workers.max(1) * CHOSEN_GROUPS_PER_WORKER))
            .clamp(CHOSEN_GROUP_ITEMS, CHOSEN_GROUP_ITEMS_WITHOUT_BARRIERS)
    } else {
        CHOSEN_GROUP_ITEMS
    };
    let mut budget = limits.max_items.min(target);
    let mut out = [1; 3];
    for d in 0..work_dim {
        let g = global[d].max(1);
        let cap = budget.min(limits.max_item_sizes[d]).max(1);
        let l = if limits.uniform {
            largest_divisor(g, 1, cap).unwrap_or(1)
        } else if g <= cap {
            g
        } else if let Some(div) = largest_divisor(g, cap / 2 + 1, cap) {
            div
        } else {
            let groups = g.div_ceil(cap);
            let even = g.div_ceil(groups);
            let whole_sub_groups = even.next_multiple_of(sub_group);
            if d == 0 && whole_sub_groups <= cap {
                whole_sub_groups
            } else {
                even
            }
        };
        out[d] = l;
        budget = (budget / l).max(1);
    }
    Ok(out)
}

/// The largest divisor of `g` in `lo..=hi`.
fn largest_divisor(g: usize, lo: usize, hi: usize) -> Option<usize> {
    (lo.max(1)..=hi.min(g)).rev().find(|c| g.is_multiple_of(*c))
}

/// A work-group size with exactly `n` sub-groups (between 4(n-1)+1 and 4n work-items) for a
/// kernel with `SubgroupsPerWorkgroup` n: in dimension 0 when the range may be non-uniform,
/// else the largest such size whose every dimension divides the global size.
fn sub_group_local_size(
    limits: &GroupLimits,
    n: usize,
    work_dim: usize,
    global: [usize; 3],
) -> CLResult<[usize; 3]> {
    let sub_group = limits.sub_group_size;
    let hi = n.saturating_mul(sub_group);
    let lo = (n.max(1) - 1) * sub_group + 1;
    if hi > limits.max_items {
        return Err(CL_OUT_OF_RESOURCES);
    }
    if !limits.uniform && hi <= limits.max_item_sizes[0] {
        return Ok([hi, 1, 1]);
    }
    let divisors = |d: usize, most: usize| -> Vec<usize> {
        if d >= work_dim {
            return vec![1];
        }
        let g = global[d].max(1);
        (1..=most.min(g).min(limits.max_item_sizes[d]))
            .rev()
            .filter(|c| g.is_multiple_of(*c))
            .collect()
    };
    let mut best: Option<[usize; 3]> = None;
    for l0 in divisors(0, hi) {
        for l1 in divisors(1, hi / l0) {
            for l2 in divisors(2, hi / (l0 * l1)) {
                let items = l0 * l1 * l2;
                if items >= lo && best.is_none_or(|b| items > b.iter().product()) {
                    best = Some([l0, l1, l2]);
                }
            }
        }
    }
    best.ok_or(CL_INVALID_WORK_GROUP_SIZE)
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::config::DeviceConfig;

    #[test]
    fn args_are_packed_per_slot() {
        let slots = [
            ArgSlot {
                offset: 0,
                size: 8,
                bounds: None,
            },
            ArgSlot {
                offset: 8,
                size: 8,
                bounds: None,
            },
            ArgSlot {
                offset: 16,
                size: 4,
                bounds: None,
            },
            ArgSlot {
                offset: 24,
                size: 8,
                bounds: None,
            },
        ];
        let values = [
            Some(ArgValue::Mem(None)),
            Some(ArgValue::Local(10)),
            Some(ArgValue::Bytes(vec![1, 2, 3, 4])),
            Some(ArgValue::Local(300)),
        ];
        let p = pack_args(&slots, 32, 5, &values, &|_| (0, 0)).unwrap();
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
            pack_args(&slots, 32, 0, &missing, &|_| (0, 0)).err(),
            Some(CL_INVALID_KERNEL_ARGS)
        );
    }

    #[test]
    fn images_pass_their_descriptor_and_samplers_their_bits() {
        let settings = crate::settings::Settings::parse(
            |k| (k == "FERROCL_IMAGES").then(|| "on".to_owned()),
            |w| panic!("{w}"),
        );
        let device = crate::platform::test_device(&settings);
        let context = crate::context::Context::new(vec![device], Vec::new());
        let request = crate::image::ImageRequest {
            image_type: CL_MEM_OBJECT_IMAGE2D,
            width: 5,
            height: 3,
            depth: 0,
            array_size: 0,
            row_pitch: 0,
            slice_pitch: 0,
            num_mip_levels: 0,
            num_samples: 0,
            source: None,
        };
        let format = cl_image_format {
            image_channel_order: CL_RG,
            image_channel_data_type: CL_HALF_FLOAT,
        };
        // SAFETY: no host pointer.
        let image = unsafe {
            Mem::new_image(
                context.clone(),
                0,
                Some(&format),
                &request,
                std::ptr::null_mut(),
                vec![],
            )
        }
        .unwrap();
        let sampler = crate::sampler::Sampler::new(
            context,
            CL_TRUE,
            CL_ADDRESS_CLAMP,
            CL_FILTER_LINEAR,
            Vec::new(),
        )
        .unwrap();
        let slots = [
            ArgSlot {
                offset: 0,
                size: 8,
                bounds: None,
            },
            ArgSlot {
                offset: 8,
                size: 16,
                bounds: None,
            },
        ];
        let values = [
            Some(ArgValue::Image(Arc::downgrade(&image))),
            Some(ArgValue::Sampler(sampler.descriptor())),
        ];
        let p = pack_args(&slots, 32, 0, &values, &|_| (0, 0)).unwrap();
        // SAFETY: the block has at least 32 bytes.
        let b = unsafe { std::slice::from_raw_parts(p.block.as_ptr(), 32) };
        let address = u64::from_ne_bytes(b[..8].try_into().unwrap());
        // SAFETY: the address of the image's descriptor, which the image (kept by `p`) owns.
        let d = unsafe { &*(address as *const ferrocl_codegen::ImageDescriptor) };
        assert_eq!(d.data, image.address() as u64);
        assert_eq!((d.width, d.height, d.depth, d.array_size), (5, 3, 0, 0));
        assert_eq!((d.row_pitch, d.slice_pitch, d.element_size), (20, 0, 4));
        // SPIR-V's ImageChannelOrder RG = 2, ImageChannelDataType HalfFloat = 13.
        assert_eq!((d.channel_order, d.channel_data_type), (2, 13));
        // CLK_NORMALIZED_COORDS_TRUE | CLK_ADDRESS_CLAMP | CLK_FILTER_LINEAR, then the
        // default lod range [0, MAXFLOAT].
        let word = |i: usize| u32::from_ne_bytes(b[8 + 4 * i..12 + 4 * i].try_into().unwrap());
        assert_eq!(word(0), 1 | 4 | 0x20);
        assert_eq!(
            (f32::from_bits(word(1)), f32::from_bits(word(2))),
            (0.0, f32::MAX)
        );
        // The level table: level 0 is the image.
        assert_eq!(d.num_mip_levels, 0);
        assert_eq!(
            (d.levels[0].width, d.levels[0].height, d.levels[0].row_pitch),
            (5, 3, 20)
        );
        assert_eq!(d.levels[1], ferrocl_codegen::MipLevel::default());
        assert_eq!(p.keep.len(), 1);
        drop(p);
        drop(image);
        assert_eq!(
            pack_args(&slots, 32, 0, &values, &|_| (0, 0)).err(),
            Some(CL_INVALID_KERNEL_ARGS),
            "a deleted image"
        );
    }

    #[test]
    fn pipes_pass_the_address_of_their_ring() {
        let settings = crate::settings::Settings::parse(|_| None, |w| panic!("{w}"));
        let device = crate::platform::test_device(&settings);
        let context = crate::context::Context::new(vec![device], Vec::new());
        let pipe = Mem::new_pipe(context.clone(), 0, 4, 3).unwrap();
        let slots = [ArgSlot {
            offset: 8,
            size: 8,
            bounds: None,
        }];
        let values = [Some(ArgValue::Pipe(Arc::downgrade(&pipe)))];
        let p = pack_args(&slots, 16, 0, &values, &|_| (0, 0)).unwrap();
        // SAFETY: the block has at least 16 bytes.
        let b = unsafe { std::slice::from_raw_parts(p.block.as_ptr(), 16) };
        let address = u64::from_ne_bytes(b[8..16].try_into().unwrap());
        assert_eq!(address, pipe.pipe().unwrap() as *const _ as u64);
        // SAFETY: the address of the pipe object's ring, which `p` keeps alive.
        let ring = unsafe { &*(address as *const ferrocl_codegen::Pipe) };
        assert_eq!((ring.packet_size(), ring.max_packets()), (4, 3));
        let mut packet = 0x1234_5678u32;
        // SAFETY: 4 bytes of a local.
        let wrote = unsafe {
            ring.access(
                ferrocl_codegen::PipeEnd::Write,
                (&mut packet as *mut u32).cast(),
                4,
            )
        };
        assert_eq!(wrote, 0);
        assert_eq!(pipe.pipe().unwrap().packets(), 1, "the same ring");
        assert_eq!(p.keep.len(), 1);
        assert!(
            Arc::ptr_eq(&p.keep[0], &pipe),
            "the launch holds the pipe object"
        );
        drop(p);
        drop(pipe);
        assert_eq!(
            pack_args(&slots, 16, 0, &values, &|_| (0, 0)).err(),
            Some(CL_INVALID_KERNEL_ARGS),
            "a deleted pipe"
        );
        // SAFETY: no host pointer.
        let buffer =
            unsafe { Mem::new_buffer(context, 0, 16, std::ptr::null_mut(), Vec::new()).unwrap() };
        let values = [Some(ArgValue::Pipe(Arc::downgrade(&buffer)))];
        assert_eq!(
            pack_args(&slots, 16, 0, &values, &|_| (0, 0)).err(),
            Some(CL_INVALID_KERNEL_ARGS),
            "a buffer is no pipe"
        );
    }

    fn limits(uniform: bool) -> GroupLimits {
        GroupLimits {
            sub_group_size: 4,
            max_items: 4096,
            max_item_sizes: [4096, 4096, 4096],
            reqd: None,
            sub_groups: None,
            uniform,
            barrier_free: false,
            workers: 2,
        }
    }

    #[test]
    fn work_group_size_rules() {
        let r = |l, reqd, uniform| {
            let limits = GroupLimits {
                reqd,
                ..limits(uniform)
            };
            resolve_local_size(&limits, 2, [100, 10, 1], l)
        };
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
        assert_eq!(r(None, Some([20, 2, 1]), false), Ok([20, 2, 1]));
        assert_eq!(
            r(None, Some([30, 1, 1]), true),
            Err(CL_INVALID_WORK_GROUP_SIZE)
        );
        assert_eq!(r(None, None, false), Ok([100, 2, 1]));
        // A 3-D required size in a 2-D launch.
        assert_eq!(
            r(None, Some([4, 2, 2]), false),
            Err(CL_INVALID_WORK_GROUP_SIZE)
        );
        // The kernel's limit (frames) is below the device's.
        let small = GroupLimits {
            max_items: 64,
            ..limits(false)
        };
        assert_eq!(
            resolve_local_size(&small, 1, [1000, 1, 1], Some([128, 1, 1])),
            Err(CL_INVALID_WORK_GROUP_SIZE)
        );
        assert_eq!(
            resolve_local_size(&small, 1, [1000, 1, 1], None),
            Ok([50, 1, 1])
        );
    }

    #[test]
    fn sub_groups_per_work_group_rules() {
        let three = GroupLimits {
            sub_groups: Some(3),
            ..limits(false)
        };
        let r = |l| resolve_local_size(&three, 1, [100, 1, 1], l);
        // 9..=12 work-items make 3 sub-groups of 4.
        assert_eq!(r(Some([9, 1, 1])), Ok([9, 1, 1]));
        assert_eq!(r(Some([12, 1, 1])), Ok([12, 1, 1]));
        assert_eq!(r(Some([8, 1, 1])), Err(CL_INVALID_WORK_GROUP_SIZE));
        assert_eq!(r(Some([13, 1, 1])), Err(CL_INVALID_WORK_GROUP_SIZE));
        assert_eq!(
            resolve_local_size(&three, 2, [100, 100, 1], Some([5, 2, 1])),
            Ok([5, 2, 1])
        );
        assert_eq!(r(None), Ok([12, 1, 1]));
        // Uniform: the largest size of 3 sub-groups dividing the range.
        let uniform = GroupLimits {
            uniform: true,
            ..three.clone()
        };
        assert_eq!(
            resolve_local_size(&uniform, 1, [100, 1, 1], None),
            Ok([10, 1, 1])
        );
        assert_eq!(
            resolve_local_size(&uniform, 2, [7, 3, 1], None),
            Err(CL_INVALID_WORK_GROUP_SIZE)
        );
        assert_eq!(
            resolve_local_size(&uniform, 1, [7, 1, 1], None),
            Err(CL_INVALID_WORK_GROUP_SIZE)
        );
        assert_eq!(
            resolve_local_size(&uniform, 2, [2, 6, 1], None),
            Ok([2, 6, 1])
        );
    }

    #[test]
    fn unlaunchable_attributes_fail_the_build() {
        let cfg = DeviceConfig::detect(&crate::settings::Settings::parse(|_| None, |_| {}), 2);
        let kernel = |reqd: Option<[u32; 3]>, sub_groups: Option<u32>| KernelInfo {
            name: "k".into(),
            function: 1,
            args: Vec::new(),
            reqd_work_group_size: reqd,
            work_group_size_hint: None,
            vec_type_hint: None,
            contraction_off: false,
            required_sub_group_size: None,
            sub_groups_per_work_group: sub_groups,
            uses_barrier: false,
            has_spin_loops: false,
            has_named_barriers: false,
            block_invoke: false,
            uses_device_enqueue: false,
        };
        let check = |reqd, sub_groups| check_work_group_attributes(&kernel(reqd, sub_groups), &cfg);
        assert_eq!(check(None, None), Ok(()));
        assert_eq!(check(Some([64, 4, 2]), None), Ok(()));
        assert_eq!(check(Some([4096, 1, 1]), None), Ok(()));
        let zero = check(Some([0, 1, 1]), None).unwrap_err();
        assert!(
            zero.contains("kernel 'k'") && zero.contains("reqd_work_group_size(0,1,1)"),
            "{zero}"
        );
        let wide = check(Some([5000, 1, 1]), None).unwrap_err();
        assert!(wide.contains("CL_DEVICE_MAX_WORK_ITEM_SIZES"), "{wide}");
        let many = check(Some([64, 64, 2]), None).unwrap_err();
        assert!(
            many.contains("8192 work-items") && many.contains("CL_DEVICE_MAX_WORK_GROUP_SIZE"),
            "{many}"
        );
        assert_eq!(check(None, Some(3)), Ok(()));
        assert!(check(None, Some(0)).is_err());
        assert!(check(None, Some(1025)).is_err());
        assert_eq!(check(Some([10, 1, 1]), Some(3)), Ok(()));
        let clash = check(Some([16, 1, 1]), Some(3)).unwrap_err();
        assert!(clash.contains("makes 4 sub-groups"), "{clash}");
    }

    #[test]
    fn chosen_local_size() {
        let choose = |uniform, dims, g| choose_local_size(&limits(uniform), dims, g).unwrap();
        // Uniform: the largest divisors.
        assert_eq!(choose(true, 1, [1024, 1, 1]), [256, 1, 1]);
        assert_eq!(choose(true, 1, [1000, 1, 1]), [250, 1, 1]);
        assert_eq!(choose(true, 2, [7, 9, 1]), [7, 9, 1]);
        assert_eq!(choose(true, 1, [97, 1, 1]), [97, 1, 1]);
        assert_eq!(choose(true, 1, [1009, 1, 1]), [1, 1, 1]);
        assert_eq!(choose(true, 2, [1009, 1024, 1]), [1, 256, 1]);
        let l = choose(true, 3, [64, 64, 64]);
        assert!(l.iter().product::<usize>() <= 256);
        assert!((0..3).all(|d| 64 % l[d] == 0));
        // Non-uniform: a prime range gets full groups of whole sub-groups and a smaller last.
        assert_eq!(choose(false, 1, [1009, 1, 1]), [256, 1, 1]);
        assert_eq!(choose(false, 1, [300, 1, 1]), [150, 1, 1]);
        assert_eq!(choose(false, 1, [1000, 1, 1]), [250, 1, 1]);
        assert_eq!(choose(false, 1, [97, 1, 1]), [97, 1, 1]);
        assert_eq!(choose(false, 1, [521, 1, 1]), [176, 1, 1]);
        assert_eq!(choose(false, 2, [1009, 1009, 1]), [256, 1, 1]);
        assert_eq!(choose(false, 2, [10, 1009, 1]), [10, 25, 1]);
        assert_eq!(choose(false, 3, [0, 5, 5]), [1, 5, 5]);
        // Dimensions past work_dim stay 1.
        assert_eq!(choose(false, 1, [4, 1, 1]), [4, 1, 1]);
        // The kernel's limit bounds the choice.
        let small = GroupLimits {
            max_items: 16,
            ..limits(false)
        };
        assert_eq!(choose_local_size(&small, 1, [1009, 1, 1]), Ok([16, 1, 1]));
    }

    #[test]
    fn chosen_local_size_without_barriers() {
        let free = |uniform| GroupLimits {
            barrier_free: true,
            ..limits(uniform)
        };
        let choose = |uniform, dims, g| choose_local_size(&free(uniform), dims, g).unwrap();
        let choose_1d = |limits: GroupLimits, g| choose_local_size(&limits, 1, [g, 1, 1]);
        // Large ranges: groups of 4096, and more when there are only few workers' worth.
        assert_eq!(choose(true, 1, [64 << 20, 1, 1]), [4096, 1, 1]);
        assert_eq!(choose(false, 2, [4096, 4096, 1]), [4096, 1, 1]);
        // 32 groups for each of the 2 workers: 100000 / 64 = 1562 items at most.
        assert_eq!(choose(false, 1, [100_000, 1, 1]), [1250, 1, 1]);
        // Small ranges keep groups of 256.
        assert_eq!(choose(true, 1, [4096, 1, 1]), [256, 1, 1]);
        assert_eq!(choose(false, 1, [1009, 1, 1]), [256, 1, 1]);
        // More workers, smaller groups.
        let many = GroupLimits {
            workers: 64,
            ..free(true)
        };
        assert_eq!(choose_1d(many, 1 << 20), Ok([512, 1, 1]));
        // The kernel's limit still bounds the choice.
        let small = GroupLimits {
            max_items: 1024,
            ..free(true)
        };
        assert_eq!(choose_1d(small, 64 << 20), Ok([1024, 1, 1]));
    }
}
