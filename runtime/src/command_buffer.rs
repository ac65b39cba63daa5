//! Command-buffers (`cl_khr_command_buffer` 0.9.8, `cl_khr_command_buffer_mutable_dispatch`
//! 0.9.5, `cl_khr_command_buffer_multi_device` 0.9.2): commands recorded once — each checked when recorded as its `clEnqueue*` twin checks
//! it, and kept in the form a queue runs (a kernel's arguments already packed) — then enqueued
//! any number of times as one queue command ([`Command::Buffer`]) that runs them in recording
//! order. Kernel commands can have their arguments, exec info and sizes changed between
//! enqueues ([`CommandBuffer::update`]); an enqueue takes the commands as they are at that
//! moment, so an update never reaches an execution already enqueued, and executions of one
//! buffer may overlap (simultaneous use) on any queue of its device.
//!
//! With several queues (multi-device: queues of the root device and its sub-devices, or of
//! one device), each command belongs to the queue it was recorded to and runs on that queue's
//! device (a kernel launch is packed for it); an enqueue runs them, still in recording order
//! (an order every sync point, barrier and in-order queue of the recording allows), as one
//! command of the first queue, which the others wait for and hold their later commands behind
//! ([`CommandBuffer::enqueue`]). [`CommandBuffer::remap`] makes the deep copy
//! `clRemapCommandBufferKHR` returns.

use std::sync::{Arc, Mutex, MutexGuard, Weak};

use opencl_sys::*;

use crate::command::Command;
use crate::context::Context;
use crate::event::Event;
use crate::kernel::Kernel;
use crate::object::{Base, CLResult, Tag};
use crate::queue::Queue;

/// `CL_COMMAND_BUFFER_MUTABLE_DISPATCH_ASSERTS_KHR` as the Khronos header defines it
/// (opencl-sys 0.6 has 0x1287).
pub const CL_COMMAND_BUFFER_MUTABLE_DISPATCH_ASSERTS: cl_command_buffer_properties_khr = 0x12B7;

/// `CL_DEVICE_COMMAND_BUFFER_CAPABILITIES_KHR` of a device: kernels that print run in
/// command-buffers (each run gets its printf buffer, as an enqueued kernel does), executions
/// may overlap (an execution reads only what its enqueue captured), commands may be recorded
/// to several queues of the device (multi-device), and, where the device has device-side
/// enqueue, kernels that enqueue run too (each run gets its session, as an enqueued kernel
/// does, with the context's default device queue at that moment).
pub fn capabilities(
    config: &crate::config::DeviceConfig,
) -> cl_device_command_buffer_capabilities_khr {
    let always = CL_COMMAND_BUFFER_CAPABILITY_KERNEL_PRINTF_KHR
        | CL_COMMAND_BUFFER_CAPABILITY_SIMULTANEOUS_USE_KHR
        | CL_COMMAND_BUFFER_CAPABILITY_MULTIPLE_QUEUE_KHR;
    if config.device_queues.is_some() {
        always | CL_COMMAND_BUFFER_CAPABILITY_DEVICE_SIDE_ENQUEUE_KHR
    } else {
        always
    }
}

/// `CL_PLATFORM_COMMAND_BUFFER_CAPABILITIES_KHR`: every device of the platform is one CPU, so
/// commands of any of them synchronise (universal sync), and commands can be remapped to other
/// queues, by the application or by the runtime.
pub const PLATFORM_CAPABILITIES: cl_platform_command_buffer_capabilities_khr =
    CL_COMMAND_BUFFER_PLATFORM_UNIVERSAL_SYNC_KHR
        | CL_COMMAND_BUFFER_PLATFORM_REMAP_QUEUES_KHR
        | CL_COMMAND_BUFFER_PLATFORM_AUTOMATIC_REMAP_KHR;

/// `CL_DEVICE_COMMAND_BUFFER_REQUIRED_QUEUE_PROPERTIES_KHR`: any queue will do.
pub const REQUIRED_QUEUE_PROPERTIES: cl_command_queue_properties = 0;

/// `CL_DEVICE_COMMAND_BUFFER_SUPPORTED_QUEUE_PROPERTIES_KHR`: every property a host queue of
/// this device can have; the buffer runs as one command of the queue it is enqueued to.
pub const SUPPORTED_QUEUE_PROPERTIES: cl_command_queue_properties = (CL_QUEUE_PROFILING_ENABLE
    | CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE)
    as cl_command_queue_properties;

/// `CL_DEVICE_MUTABLE_DISPATCH_CAPABILITIES_KHR`: every field of a kernel command.
pub const MUTABLE_FIELDS: cl_mutable_dispatch_fields_khr = CL_MUTABLE_DISPATCH_GLOBAL_OFFSET_KHR
    | CL_MUTABLE_DISPATCH_GLOBAL_SIZE_KHR
    | CL_MUTABLE_DISPATCH_LOCAL_SIZE_KHR
    | CL_MUTABLE_DISPATCH_ARGUMENTS_KHR
    | CL_MUTABLE_DISPATCH_EXEC_INFO_KHR;

/// The `CL_COMMAND_BUFFER_FLAGS_KHR` bits the extensions define.
const KNOWN_FLAGS: cl_command_buffer_flags_khr = CL_COMMAND_BUFFER_SIMULTANEOUS_USE_KHR
    | CL_COMMAND_BUFFER_MUTABLE_KHR
    | CL_COMMAND_BUFFER_DEVICE_SIDE_SYNC_KHR;

/// The `cl_mutable_dispatch_asserts_khr` bits the extension defines.
pub const KNOWN_ASSERTS: cl_mutable_dispatch_asserts_khr =
    CL_MUTABLE_DISPATCH_ASSERT_NO_ADDITIONAL_WORK_GROUPS_KHR;

/// `cl_sync_point_khr` values are the position of their command plus one: 0 names nothing.
fn sync_point_of(index: usize) -> CLResult<cl_sync_point_khr> {
    cl_sync_point_khr::try_from(index + 1).map_err(|_| CL_OUT_OF_RESOURCES)
}

#[repr(C)]
pub struct CommandBuffer {
    base: Base,
    pub context: Arc<Context>,
    /// The queues of clCreateCommandBufferKHR in their order (one without multi-device).
    pub queues: Vec<Arc<Queue>>,
    /// As given to clCreateCommandBufferKHR, terminator included, or empty for NULL.
    pub properties: Vec<cl_command_buffer_properties_khr>,
    pub flags: cl_command_buffer_flags_khr,
    /// `CL_COMMAND_BUFFER_MUTABLE_DISPATCH_ASSERTS_KHR` (hints only: any size runs).
    pub asserts: cl_mutable_dispatch_asserts_khr,
    state: Mutex<State>,
}
crate::cl_object!(CommandBuffer, CommandBuffer, CL_INVALID_COMMAND_BUFFER_KHR);

#[derive(Default)]
struct State {
    finalized: bool,
    steps: Vec<Step>,
    /// What the next enqueue runs: set once the buffer is finalized and every kernel command
    /// has all its arguments (the executable state), rebuilt by each update.
    plan: Option<Arc<Vec<Arc<Command>>>>,
}

enum Step {
    /// Copies, fills, barriers: nothing of them changes after recording; recorded to the
    /// queue of this index.
    Fixed(usize, Arc<Command>),
    Kernel(Arc<MutableCommand>),
}

/// `cl_command_buffer_state_khr` values.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BufferState {
    Recording,
    /// Finalized with a kernel command whose arguments are not all set yet.
    Finalized,
    Executable,
}

impl BufferState {
    pub fn code(self) -> cl_command_buffer_state_khr {
        match self {
            BufferState::Recording => CL_COMMAND_BUFFER_STATE_RECORDING_KHR,
            BufferState::Finalized => CL_COMMAND_BUFFER_STATE_FINALIZED_KHR,
            BufferState::Executable => CL_COMMAND_BUFFER_STATE_EXECUTABLE_KHR,
        }
    }
}

impl CommandBuffer {
    /// `clCreateCommandBufferKHR` after the icd read the property list and the queues:
    /// CL_INVALID_CONTEXT for queues of several contexts, CL_INVALID_VALUE for flag or
    /// assert bits the extensions do not define. Every flag is met by every device: all
    /// have simultaneous use and several queues ([`capabilities`]), and all are one CPU, so
    /// `CL_COMMAND_BUFFER_DEVICE_SIDE_SYNC_KHR` holds for any queues of the platform.
    pub fn new(
        queues: Vec<Arc<Queue>>,
        properties: Vec<cl_command_buffer_properties_khr>,
        flags: cl_command_buffer_flags_khr,
        asserts: cl_mutable_dispatch_asserts_khr,
    ) -> CLResult<Arc<CommandBuffer>> {
        let context = queues.first().ok_or(CL_INVALID_VALUE)?.context.clone();
        if queues.iter().any(|q| !Arc::ptr_eq(&q.context, &context)) {
            return Err(CL_INVALID_CONTEXT);
        }
        if flags & !KNOWN_FLAGS != 0 || asserts & !KNOWN_ASSERTS != 0 {
            return Err(CL_INVALID_VALUE);
        }
        Ok(Arc::new(CommandBuffer {
            base: Base::new(Tag::CommandBuffer),
            context,
            queues,
            properties,
            flags,
            asserts,
            state: Mutex::new(State::default()),
        }))
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    pub fn is_mutable(&self) -> bool {
        self.flags & CL_COMMAND_BUFFER_MUTABLE_KHR != 0
    }

    pub fn state(&self) -> BufferState {
        let st = self.lock();
        match (st.finalized, st.plan.is_some()) {
            (false, _) => BufferState::Recording,
            (true, false) => BufferState::Finalized,
            (true, true) => BufferState::Executable,
        }
    }

    /// CL_INVALID_OPERATION once finalized: what every recording entry point checks first.
    pub fn check_recording(&self) -> CLResult<()> {
        if self.lock().finalized {
            return Err(CL_INVALID_OPERATION);
        }
        Ok(())
    }

    /// CL_INVALID_SYNC_POINT_WAIT_LIST_KHR unless each sync point names a command recorded
    /// before.
    pub fn check_wait_list(&self, wait: &[cl_sync_point_khr]) -> CLResult<()> {
        Self::check_wait(&self.lock(), wait)
    }

    /// As [`Self::check_wait_list`]. (Commands run in recording order, so a valid wait list
    /// is always met.)
    fn check_wait(st: &State, wait: &[cl_sync_point_khr]) -> CLResult<()> {
        if wait.iter().any(|&p| p == 0 || p as usize > st.steps.len()) {
            return Err(CL_INVALID_SYNC_POINT_WAIT_LIST_KHR);
        }
        Ok(())
    }

    /// The index of the queue a command is recorded to (the API's `command_queue`, None for
    /// NULL): NULL names the only queue, and is CL_INVALID_COMMAND_QUEUE with several; a
    /// queue of another context is CL_INVALID_CONTEXT, one not given at creation
    /// CL_INVALID_COMMAND_QUEUE.
    pub fn queue_index(&self, queue: Option<&Queue>) -> CLResult<usize> {
        match queue {
            None if self.queues.len() == 1 => Ok(0),
            None => Err(CL_INVALID_COMMAND_QUEUE),
            Some(q) if !Arc::ptr_eq(&q.context, &self.context) => Err(CL_INVALID_CONTEXT),
            Some(q) => self
                .queues
                .iter()
                .position(|own| std::ptr::eq(&**own, q))
                .ok_or(CL_INVALID_COMMAND_QUEUE),
        }
    }

    /// Records a command other than a kernel (copy, fill, barrier, SVM copy or fill) to the
    /// queue of index `queue`, built and checked by its constructor as for an enqueue;
    /// returns its sync point.
    pub fn record(
        &self,
        queue: usize,
        command: Command,
        wait: &[cl_sync_point_khr],
    ) -> CLResult<cl_sync_point_khr> {
        let mut st = self.lock();
        if st.finalized {
            return Err(CL_INVALID_OPERATION);
        }
        Self::check_wait(&st, wait)?;
        let point = sync_point_of(st.steps.len())?;
        st.steps.push(Step::Fixed(queue, Arc::new(command)));
        Ok(point)
    }

    /// `clCommandNDRangeKernelKHR`: the launch is checked and packed now, from the kernel's
    /// arguments and exec info at this moment (later clSetKernelArg calls do not reach it).
    /// With `recorded.defer_args` the arguments may still be missing; the buffer then stays
    /// in the Finalized state until an update sets them.
    pub fn record_kernel(
        self: &Arc<Self>,
        recorded: KernelRecording,
        wait: &[cl_sync_point_khr],
    ) -> CLResult<(cl_sync_point_khr, Arc<MutableCommand>)> {
        self.check_recording()?;
        let KernelRecording {
            queue,
            kernel,
            properties,
            defer_args,
            updatable,
            asserts,
            work_dim,
            offset,
            global,
            local,
        } = recorded;
        if !Arc::ptr_eq(&kernel.program.context, &self.context) {
            return Err(CL_INVALID_CONTEXT);
        }
        if updatable & !MUTABLE_FIELDS != 0 {
            return Err(CL_INVALID_OPERATION);
        }
        if (asserts | self.asserts) & CL_MUTABLE_DISPATCH_ASSERT_NO_ADDITIONAL_WORK_GROUPS_KHR != 0
            && local.is_none()
        {
            return Err(CL_INVALID_VALUE);
        }
        let device = self.queues[queue].device.clone();
        if kernel.info().uses_device_enqueue
            && capabilities(&device.config) & CL_COMMAND_BUFFER_CAPABILITY_DEVICE_SIDE_ENQUEUE_KHR
                == 0
        {
            return Err(CL_INVALID_OPERATION);
        }
        let own = kernel.clone_kernel();
        let dispatch = Dispatch {
            kernel: own,
            offset,
            global,
            local,
            command: None,
        };
        let dispatch = dispatch.prepared(&device, work_dim, defer_args)?;
        let command = Arc::new(MutableCommand {
            base: Base::new(Tag::MutableCommand),
            buffer: Arc::downgrade(self),
            queue_index: queue,
            kernel,
            properties,
            updatable,
            work_dim,
            uniform: dispatch.uniform(&device, work_dim),
            dispatch: Mutex::new(dispatch),
        });
        let mut st = self.lock();
        if st.finalized {
            return Err(CL_INVALID_OPERATION);
        }
        Self::check_wait(&st, wait)?;
        let point = sync_point_of(st.steps.len())?;
        st.steps.push(Step::Kernel(command.clone()));
        Ok((point, command))
    }

    /// `clFinalizeCommandBufferKHR`: CL_INVALID_OPERATION unless recording.
    pub fn finalize(&self) -> CLResult<()> {
        let mut st = self.lock();
        if st.finalized {
            return Err(CL_INVALID_OPERATION);
        }
        st.finalized = true;
        st.plan = Self::plan(&st.steps);
        Ok(())
    }

    /// The commands an enqueue runs, or None while a kernel command lacks arguments.
    fn plan(steps: &[Step]) -> Option<Arc<Vec<Arc<Command>>>> {
        let mut commands = Vec::with_capacity(steps.len());
        for step in steps {
            commands.push(match step {
                Step::Fixed(_, c) => c.clone(),
                Step::Kernel(k) => k.lock().command.clone()?,
            });
        }
        Some(Arc::new(commands))
    }

    /// `clEnqueueCommandBufferKHR` on `queues` (the buffer's, or substitutes the icd checked
    /// to share their device and context, as many): one command of the first queue running
    /// the commands as they are now. Each other queue first gets a marker, which the command
    /// waits for (it runs after what that queue had), then a marker waiting for the command
    /// (what that queue gets later runs after it); the event returned is the command's,
    /// which names no queue then ([`Event::spans_queues`]). CL_INVALID_OPERATION unless
    /// executable.
    pub fn enqueue(
        &self,
        queues: &[Arc<Queue>],
        mut wait: Vec<Arc<Event>>,
    ) -> CLResult<Arc<Event>> {
        let commands = self.lock().plan.clone().ok_or(CL_INVALID_OPERATION)?;
        let (first, others) = queues.split_first().ok_or(CL_INVALID_VALUE)?;
        let marker = || Command::Sync {
            command_type: CL_COMMAND_MARKER as cl_command_type,
        };
        for q in others {
            wait.push(q.submit(marker(), Vec::new())?);
        }
        let event = first.submit(Command::Buffer { commands }, wait)?;
        if !others.is_empty() {
            event.spans_queues(queues.iter().all(|q| q.profiling()));
            for q in others {
                q.submit(marker(), vec![event.clone()])?;
            }
        }
        Ok(event)
    }

    /// `clRemapCommandBufferKHR`: a new command-buffer with the same properties, state and
    /// commands, each recorded to `queues[i]` in place of the queue of index `i` (or, with
    /// `automatic`, of index `i % queues.len()`: the runtime's choice keeps the commands of one
    /// queue together), its kernel commands packed again for their new device. Returns the
    /// copy and the copies of the kernel commands, in recording order.
    pub fn remap(
        &self,
        automatic: bool,
        queues: Vec<Arc<Queue>>,
    ) -> CLResult<(Arc<CommandBuffer>, Vec<RemappedCommand>)> {
        if queues.is_empty() || (!automatic && queues.len() != self.queues.len()) {
            return Err(CL_INVALID_VALUE);
        }
        if queues
            .iter()
            .any(|q| !Arc::ptr_eq(&q.context, &self.context))
        {
            return Err(CL_INVALID_CONTEXT);
        }
        let target = |i: usize| i % queues.len();
        let copy = CommandBuffer::new(
            queues.clone(),
            self.properties.clone(),
            self.flags,
            self.asserts,
        )?;
        let st = self.lock();
        let mut steps = Vec::with_capacity(st.steps.len());
        let mut kernels = Vec::new();
        for step in &st.steps {
            steps.push(match step {
                Step::Fixed(q, c) => Step::Fixed(target(*q), c.clone()),
                Step::Kernel(k) => {
                    let index = target(k.queue_index);
                    let device = &queues[index].device;
                    let dispatch = k.lock().clone().prepared(device, k.work_dim, true)?;
                    let remapped = Arc::new(MutableCommand {
                        base: Base::new(Tag::MutableCommand),
                        buffer: Arc::downgrade(&copy),
                        queue_index: index,
                        kernel: k.kernel.clone(),
                        properties: k.properties.clone(),
                        updatable: k.updatable,
                        work_dim: k.work_dim,
                        uniform: k.uniform,
                        dispatch: Mutex::new(dispatch),
                    });
                    kernels.push((k.clone(), remapped.clone()));
                    Step::Kernel(remapped)
                }
            });
        }
        {
            let mut new = copy.lock();
            new.finalized = st.finalized;
            new.plan = if st.finalized {
                Self::plan(&steps)
            } else {
                None
            };
            new.steps = steps;
        }
        Ok((copy, kernels))
    }

    /// CL_INVALID_OPERATION unless the buffer is mutable and finalized: what
    /// clUpdateMutableCommandsKHR checks before it reads its configurations.
    pub fn check_updatable(&self) -> CLResult<()> {
        if !self.is_mutable() || !self.lock().finalized {
            return Err(CL_INVALID_OPERATION);
        }
        Ok(())
    }

    /// CL_INVALID_MUTABLE_COMMAND_KHR unless `command` was recorded into this buffer.
    pub fn owns(&self, command: &MutableCommand) -> CLResult<()> {
        if !std::ptr::eq(command.buffer.as_ptr(), self) {
            return Err(CL_INVALID_MUTABLE_COMMAND_KHR);
        }
        Ok(())
    }

    /// `clUpdateMutableCommandsKHR`: every update is checked and its launch packed before any
    /// is applied, so on an error nothing changes (spec). Executions already enqueued keep
    /// the commands they took.
    pub fn update(&self, updates: Vec<DispatchUpdate>) -> CLResult<()> {
        self.check_updatable()?;
        let mut ready = Vec::with_capacity(updates.len());
        for u in updates {
            self.owns(&u.command)?;
            let c = &u.command;
            let device = &self.queues[c.queue_index].device;
            let dims = c.work_dim;
            let mut next = c.lock().clone();
            next.kernel = u.kernel;
            if let Some(o) = u.offset {
                next.offset = o;
            }
            if let Some(g) = u.global {
                next.global = g;
            }
            if u.local.is_some() {
                next.local = u.local;
            }
            let next = next.prepared(device, dims, true)?;
            // A change of work-group uniformity the application chose is refused (spec); a
            // size the device chooses follows the global size.
            if next.local.is_some() && next.uniform(device, dims) != c.uniform {
                return Err(CL_INVALID_OPERATION);
            }
            ready.push((u.command, next));
        }
        // Commands of one update list are applied under the buffer's lock, so an enqueue
        // sees all of them or none.
        let mut st = self.lock();
        for (command, next) in ready {
            *command.lock() = next;
        }
        st.plan = Self::plan(&st.steps);
        Ok(())
    }
}

/// A kernel command of a remapped buffer: the original, and its copy.
pub type RemappedCommand = (Arc<MutableCommand>, Arc<MutableCommand>);

/// A kernel command as the icd read it from `clCommandNDRangeKernelKHR`.
pub struct KernelRecording {
    /// The index of the queue it is recorded to ([`CommandBuffer::queue_index`]).
    pub queue: usize,
    pub kernel: Arc<Kernel>,
    /// As given, terminator included, or empty for NULL
    /// (CL_MUTABLE_COMMAND_PROPERTIES_ARRAY_KHR).
    pub properties: Vec<cl_command_properties_khr>,
    /// Arguments may be missing: the properties name `CL_MUTABLE_DISPATCH_ARGUMENTS_KHR`
    /// among the updatable fields (the spec's condition for deferring them).
    pub defer_args: bool,
    /// `CL_MUTABLE_DISPATCH_UPDATABLE_FIELDS_KHR` (all of [`MUTABLE_FIELDS`] when not given).
    pub updatable: cl_mutable_dispatch_fields_khr,
    pub asserts: cl_mutable_dispatch_asserts_khr,
    pub work_dim: usize,
    pub offset: [usize; 3],
    /// All zeros for a NULL global size: an empty range.
    pub global: [usize; 3],
    pub local: Option<[usize; 3]>,
}

/// One `cl_mutable_dispatch_config_khr`, read by the icd: `kernel` is the command's argument
/// state with the new arguments and exec info applied (from [`MutableCommand::arguments`]).
pub struct DispatchUpdate {
    pub command: Arc<MutableCommand>,
    pub kernel: Arc<Kernel>,
    pub offset: Option<[usize; 3]>,
    pub global: Option<[usize; 3]>,
    pub local: Option<[usize; 3]>,
}

/// A kernel command of a command-buffer (`cl_mutable_command_khr`). Its handle is not
/// reference counted: it lives as long as its command-buffer (spec).
#[repr(C)]
pub struct MutableCommand {
    base: Base,
    buffer: Weak<CommandBuffer>,
    /// The index among the buffer's queues of the queue it was recorded to
    /// (CL_MUTABLE_COMMAND_COMMAND_QUEUE_KHR), whose device its launch is packed for.
    pub queue_index: usize,
    /// The kernel as recorded (CL_MUTABLE_DISPATCH_KERNEL_KHR); the command-buffer holds it.
    pub kernel: Arc<Kernel>,
    pub properties: Vec<cl_command_properties_khr>,
    pub updatable: cl_mutable_dispatch_fields_khr,
    pub work_dim: usize,
    /// Whether the recorded sizes made uniform work-groups.
    uniform: bool,
    dispatch: Mutex<Dispatch>,
}
crate::cl_object!(
    MutableCommand,
    MutableCommand,
    CL_INVALID_MUTABLE_COMMAND_KHR
);

/// What a kernel command runs with.
#[derive(Clone)]
struct Dispatch {
    /// The command's own copy of the kernel: its argument values and exec info, which
    /// updates change and the application's clSetKernelArg calls do not.
    kernel: Arc<Kernel>,
    offset: [usize; 3],
    global: [usize; 3],
    local: Option<[usize; 3]>,
    /// The checked and packed launch; None while arguments are missing.
    command: Option<Arc<Command>>,
}

impl Dispatch {
    /// Checks and packs the launch; with `defer_args`, missing arguments leave it unpacked
    /// instead of failing (sizes are checked either way).
    fn prepared(
        mut self,
        device: &Arc<crate::platform::Device>,
        work_dim: usize,
        defer_args: bool,
    ) -> CLResult<Dispatch> {
        let (offset, global, local) = (self.offset, self.global, self.local);
        if defer_args && !self.kernel.args_complete() {
            self.kernel
                .launch_shape(device, work_dim, offset, global, local)?;
            self.command = None;
            return Ok(self);
        }
        let launch = self
            .kernel
            .prepare_launch(device, work_dim, offset, global, local)?;
        self.command = Some(Arc::new(Command::kernel(launch)));
        Ok(self)
    }

    /// Whether every dimension's global size is a multiple of its work-group size.
    fn uniform(&self, device: &crate::platform::Device, work_dim: usize) -> bool {
        let local =
            self.kernel
                .launch_shape(device, work_dim, self.offset, self.global, self.local);
        local.is_ok_and(|l| (0..work_dim).all(|d| self.global[d].is_multiple_of(l[d])))
    }
}

impl MutableCommand {
    fn lock(&self) -> MutexGuard<'_, Dispatch> {
        self.dispatch.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The command-buffer it belongs to (alive while the application may use the handle).
    pub fn command_buffer(&self) -> Option<Arc<CommandBuffer>> {
        self.buffer.upgrade()
    }

    /// A copy of the command's current arguments and exec info, for an update to change:
    /// the command's own state changes only when the whole update succeeds.
    pub fn arguments(&self) -> Arc<Kernel> {
        self.lock().kernel.clone_kernel()
    }

    /// CL_INVALID_OPERATION for a change of a field not updatable (or of `work_dim`).
    pub fn check_update(
        &self,
        work_dim: usize,
        offset: bool,
        global: bool,
        local: bool,
        args: bool,
        exec_info: bool,
    ) -> CLResult<()> {
        let denied = |set: bool, field| set && self.updatable & field == 0;
        if (work_dim != 0 && work_dim != self.work_dim)
            || denied(offset, CL_MUTABLE_DISPATCH_GLOBAL_OFFSET_KHR)
            || denied(global, CL_MUTABLE_DISPATCH_GLOBAL_SIZE_KHR)
            || denied(local, CL_MUTABLE_DISPATCH_LOCAL_SIZE_KHR)
            || denied(args, CL_MUTABLE_DISPATCH_ARGUMENTS_KHR)
            || denied(exec_info, CL_MUTABLE_DISPATCH_EXEC_INFO_KHR)
        {
            return Err(CL_INVALID_OPERATION);
        }
        Ok(())
    }

    /// `CL_MUTABLE_DISPATCH_GLOBAL_WORK_OFFSET_KHR`, `_GLOBAL_WORK_SIZE_KHR` and
    /// `_LOCAL_WORK_SIZE_KHR` (zeros for a size the application left to the device).
    pub fn sizes(&self) -> ([usize; 3], [usize; 3], [usize; 3]) {
        let d = self.lock();
        (d.offset, d.global, d.local.unwrap_or([0; 3]))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::executor::JobHints;
    use crate::memory::Mem;
    use crate::platform::platform;

    fn queue() -> Arc<Queue> {
        let d = platform().devices[0].clone();
        let c = Context::new(vec![d.clone()], Vec::new());
        Queue::new(c, d, 0, Vec::new(), JobHints::default()).unwrap()
    }

    fn buffer(c: &Arc<Context>, size: usize) -> Arc<Mem> {
        // SAFETY: no host pointer.
        unsafe { Mem::new_buffer(c.clone(), 0, size, std::ptr::null_mut(), Vec::new()) }.unwrap()
    }

    #[test]
    fn commands_run_in_order_at_every_enqueue() {
        let q = queue();
        let cb = CommandBuffer::new(vec![q.clone()], Vec::new(), 0, 0).unwrap();
        let (a, b) = (buffer(&q.context, 64), buffer(&q.context, 64));
        assert_eq!(cb.state(), BufferState::Recording);
        let fill = Command::fill_buffer(a.clone(), &[7], 0, 64).unwrap();
        assert_eq!(cb.record(0, fill, &[]), Ok(1));
        let copy = Command::copy_buffer(a.clone(), b.clone(), 0, 0, 64).unwrap();
        assert_eq!(cb.record(0, copy, &[1]), Ok(2));
        let barrier = Command::Sync {
            command_type: CL_COMMAND_BARRIER as cl_command_type,
        };
        assert_eq!(
            cb.record(0, barrier, &[3]),
            Err(CL_INVALID_SYNC_POINT_WAIT_LIST_KHR)
        );
        assert_eq!(
            cb.enqueue(std::slice::from_ref(&q), Vec::new()).err(),
            Some(CL_INVALID_OPERATION),
            "not finalized"
        );
        cb.finalize().unwrap();
        assert_eq!(cb.finalize(), Err(CL_INVALID_OPERATION));
        assert_eq!(cb.state(), BufferState::Executable);
        let fill = Command::fill_buffer(a.clone(), &[1], 0, 64).unwrap();
        assert_eq!(cb.record(0, fill, &[]), Err(CL_INVALID_OPERATION));
        for _ in 0..3 {
            let e = cb.enqueue(std::slice::from_ref(&q), Vec::new()).unwrap();
            assert_eq!(e.wait(), CL_COMPLETE);
            assert_eq!(e.command_type, CL_COMMAND_COMMAND_BUFFER_KHR);
        }
        // SAFETY: both buffers hold 64 bytes and no command runs now.
        let got = unsafe { std::slice::from_raw_parts(b.address(), 64) };
        assert!(got.iter().all(|&x| x == 7));
        assert_eq!(
            cb.update(Vec::new()),
            Err(CL_INVALID_OPERATION),
            "not mutable"
        );
    }

    #[test]
    fn flags_outside_the_extensions_are_refused() {
        let q = queue();
        assert_eq!(
            CommandBuffer::new(vec![q.clone()], Vec::new(), 1 << 3, 0).err(),
            Some(CL_INVALID_VALUE)
        );
        assert_eq!(
            CommandBuffer::new(vec![q.clone()], Vec::new(), 0, 2).err(),
            Some(CL_INVALID_VALUE)
        );
        let both = CL_COMMAND_BUFFER_MUTABLE_KHR | CL_COMMAND_BUFFER_SIMULTANEOUS_USE_KHR;
        assert!(CommandBuffer::new(vec![q], Vec::new(), both, KNOWN_ASSERTS)
            .unwrap()
            .is_mutable());
    }
}
