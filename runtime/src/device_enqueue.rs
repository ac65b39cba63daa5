//! Device-side enqueue (OpenCL C 3.0 §6.15.15): the host of one launch of a kernel that
//! enqueues (codegen's [`DeviceEnqueueHost`]), and the children it runs.
//!
//! A launch whose kernel has device-enqueue instructions gets a [`Session`]: its address (that
//! of a `DeviceEnqueueContext`) goes in every work-group's `GroupInfo`, and JIT code calls the
//! session's host for `enqueue_kernel`, `enqueue_marker`, the `clk_event_t` functions and the
//! block queries, from many worker threads at once (one lock, never held while anything runs).
//! Children are recorded, not run: once the parent's work-groups have all run,
//! [`Session::run_children`] runs them one after the other in enqueue order, each once its wait
//! list is complete, on the device's workers through [`run_ndrange`] with the same context, so
//! grandchildren join the session. Starting every child after its parent meets each flag
//! (`CLK_ENQUEUE_FLAGS_NO_WAIT` allows an earlier start without requiring it). A command is
//! complete when it and all its children are (§6.15.15): its event completes then, and the
//! parent's host command only after the whole tree; an error anywhere in the tree fails it.
//!
//! Events are the session's: non-zero handles with the kernels' reference counts, held besides
//! by the commands that use them (a command its own event, wait lists theirs, pending profiling
//! captures theirs) and dropped when neither holds them. Children whose wait lists can never
//! complete (a user event no kernel sets) fail with an error status once nothing else can run,
//! and so does the parent: never a hang.

use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use ferrocl_codegen::{
    BlockQuery, DeviceEnqueueContext, DeviceEnqueueHost, KernelEnqueue, NdRange,
    CLK_DEVICE_QUEUE_FULL, CLK_ENQUEUE_FAILURE, CLK_ENQUEUE_FLAGS_WAIT_WORK_GROUP,
    CLK_EVENT_ALLOCATION_FAILURE, CLK_INVALID_ARG_SIZE, CLK_INVALID_EVENT_WAIT_LIST,
    CLK_INVALID_NDRANGE, CLK_INVALID_QUEUE, CLK_OUT_OF_RESOURCES, CLK_PROFILING_COMMAND_EXEC_TIME,
};
use ferrocl_frontend::ArgKind;
use opencl_sys::*;

use crate::config::DeviceQueueLimits;
use crate::context::Context;
use crate::device_queue::DeviceQueue;
use crate::executor::{run_ndrange, ArgBlock, JobHints, Launch, LaunchFailure};
use crate::kernel::{
    group_limits, max_sub_group_size_for, pack_args, resolve_local_size, sub_group_count_for,
    sub_group_size, ArgValue, MAX_GROUP_FRAME_BYTES,
};
use crate::kernel_launch::Region;
use crate::object::{now_ns, CLResult};
use crate::platform::Device;
use crate::printf::{write_stdout, PrintfBuffer};
use crate::program::Built;
use crate::settings::{log, LogLevel};

/// Bytes a pending command takes of its queue's `CL_QUEUE_SIZE` besides its block literal,
/// `__local` sizes and wait list (8 bytes per entry): its record.
const COMMAND_BYTES: usize = 64;

/// The command id of the launch that made the session.
const ROOT: u64 = 0;

/// The device-enqueue host of one launch, alive until the launch and its children have run.
pub struct Session {
    host: Arc<Host>,
    /// What `GroupInfo::device_enqueue` points at: boxed, so its address stays put.
    context: Box<DeviceEnqueueContext>,
}

impl Session {
    /// The session of a launch `parent` of `built`'s kernel on `device`: children get its
    /// rounding, stop word (the watchdog's deadline covers them) and checked regions.
    pub fn new(
        context: &Arc<Context>,
        device: &Arc<Device>,
        built: &Arc<Built>,
        hints: JobHints,
        parent: &Launch,
        checked_regions: Option<(Vec<Region>, Vec<Region>)>,
    ) -> Session {
        let mut commands = HashMap::new();
        commands.insert(ROOT, Record::new(ROOT, None, 0, None, Vec::new(), 0));
        let host = Arc::new(Host {
            context: context.clone(),
            device: device.clone(),
            built: built.clone(),
            hints,
            limits: device.config.device_queues,
            default_queue: context.device_queues.default_of(device),
            round_to_zero: parent.round_to_zero,
            stop: parent.stop.clone(),
            checked_regions,
            address: AtomicU64::new(0),
            state: Mutex::new(State {
                next_id: 1,
                events: HashMap::new(),
                live_events: 0,
                commands,
                pending: VecDeque::new(),
                running: ROOT,
                queue_bytes: HashMap::new(),
                queues: HashMap::new(),
                root_status: CL_COMPLETE,
            }),
        });
        let context = Box::new(DeviceEnqueueContext { host: host.clone() });
        let address = &*context as *const DeviceEnqueueContext as u64;
        host.address.store(address, Ordering::Release);
        Session { host, context }
    }

    /// `GroupInfo::device_enqueue` of the launch and its children.
    pub fn context_address(&self) -> u64 {
        &*self.context as *const DeviceEnqueueContext as u64
    }

    /// Runs the children (after the parent's work-groups have all run) until none is left,
    /// then answers for the whole tree: an error status if the parent or any descendant
    /// failed.
    pub fn run_children(self) -> CLResult<()> {
        let host = &self.host;
        host.lock().end(ROOT, CL_COMPLETE);
        while let Some((id, child)) = host.next_ready() {
            let status = host.run_child(&child);
            drop(child);
            host.lock().end(id, status);
        }
        let status = host.lock().root_status;
        if status < 0 {
            Err(status)
        } else {
            Ok(())
        }
    }
}

struct Host {
    context: Arc<Context>,
    device: Arc<Device>,
    built: Arc<Built>,
    hints: JobHints,
    limits: Option<DeviceQueueLimits>,
    /// The context's default device queue for the device when the launch started.
    default_queue: Option<Arc<DeviceQueue>>,
    round_to_zero: bool,
    stop: Option<Arc<AtomicU32>>,
    checked_regions: Option<(Vec<Region>, Vec<Region>)>,
    /// The session's `DeviceEnqueueContext`, which children pass on.
    address: AtomicU64,
    state: Mutex<State>,
}

struct State {
    /// Next event or command id (one counter: both are never 0).
    next_id: u64,
    events: HashMap<u64, EventEntry>,
    /// Events kernels hold (reference count above 0): bounded by `CL_DEVICE_MAX_ON_DEVICE_EVENTS`.
    live_events: usize,
    /// Commands not yet complete, the launch itself ([`ROOT`]) among them.
    commands: HashMap<u64, Record>,
    /// Commands not started, in enqueue order.
    pending: VecDeque<u64>,
    /// The command whose work-groups run now: the parent of what they enqueue.
    running: u64,
    /// Bytes of the pending commands of each queue (by address).
    queue_bytes: HashMap<u64, usize>,
    /// The queues commands were enqueued to, held for the session.
    queues: HashMap<u64, Arc<DeviceQueue>>,
    /// The status of the launch's whole tree once it completed (`CL_COMPLETE` before).
    root_status: i32,
}

struct EventEntry {
    /// References kernels hold (create, retain, release).
    refs: u32,
    /// Holders inside the session: the event's own command, wait lists, profiling captures.
    holds: u32,
    /// `CL_SUBMITTED` (a user event not set), `CL_QUEUED`, `CL_RUNNING`, `CL_COMPLETE` or an
    /// error.
    status: i32,
    user: bool,
    /// A command on a queue with profiling: end − start and complete − start (ns) once it is
    /// complete.
    profiling: bool,
    exec_times: Option<[u64; 2]>,
    /// Where `capture_event_profiling_info` asked for the times before the command completed.
    captures: Vec<u64>,
}

/// A command enqueued by a kernel (or the launch itself).
struct Record {
    parent: u64,
    event: Option<u64>,
    /// Its children not complete yet.
    outstanding: u32,
    /// Its own part (work-groups, or a marker's wait) is over.
    ended: bool,
    /// `CL_COMPLETE`, or the first error of it or a descendant.
    status: i32,
    queue: u64,
    bytes: usize,
    /// The events it waits for (each held).
    wait: Vec<u64>,
    work: Option<Work>,
    /// Start and end of its own part (ns).
    times: [u64; 2],
}

enum Work {
    Kernel(Box<Child>),
    Marker,
}

/// A child kernel's launch, packed at its enqueue.
struct Child {
    index: usize,
    launch: Launch,
    block: ArgBlock,
    /// The copy of the block literal its first argument points into.
    _literal: Vec<u8>,
}

impl Record {
    fn new(
        parent: u64,
        event: Option<u64>,
        queue: u64,
        work: Option<Work>,
        wait: Vec<u64>,
        bytes: usize,
    ) -> Record {
        Record {
            parent,
            event,
            outstanding: 0,
            ended: false,
            status: CL_COMPLETE,
            queue,
            bytes,
            wait,
            work,
            times: [0; 2],
        }
    }
}

impl State {
    fn new_id(&mut self) -> u64 {
        let id = self.next_id;
        self.next_id += 1;
        id
    }

    /// A new event held by `refs` kernel references and `holds` session holders.
    fn new_event(&mut self, user: bool, profiling: bool) -> u64 {
        let id = self.new_id();
        self.events.insert(
            id,
            EventEntry {
                refs: 1,
                holds: u32::from(!user),
                status: if user { CL_SUBMITTED } else { CL_QUEUED },
                user,
                profiling,
                exec_times: None,
                captures: Vec::new(),
            },
        );
        self.live_events += 1;
        id
    }

    /// The event if a kernel may still use it (`is_valid_event`).
    fn valid(&mut self, event: u64) -> Option<&mut EventEntry> {
        self.events.get_mut(&event).filter(|e| e.refs > 0)
    }

    fn status(&self, event: u64) -> i32 {
        self.events.get(&event).map_or(CL_COMPLETE, |e| e.status)
    }

    /// Drops `n` session holds of `event`, and the event with the last of everything.
    fn unhold(&mut self, event: u64, n: u32) {
        if let Some(e) = self.events.get_mut(&event) {
            e.holds = e.holds.saturating_sub(n);
            if e.holds == 0 && e.refs == 0 {
                self.events.remove(&event);
            }
        }
    }

    /// Command `id`'s own part is over with `status`: it frees its queue space and wait list,
    /// and completes if its children have.
    fn end(&mut self, id: u64, status: i32) {
        let Some(record) = self.commands.get_mut(&id) else {
            return;
        };
        record.ended = true;
        record.times[1] = now_ns();
        if record.times[0] == 0 {
            record.times[0] = record.times[1];
        }
        if status < 0 && record.status >= 0 {
            record.status = status;
        }
        let (queue, bytes) = (record.queue, record.bytes);
        let wait = std::mem::take(&mut record.wait);
        let done = record.outstanding == 0;
        if let Some(used) = self.queue_bytes.get_mut(&queue) {
            *used = used.saturating_sub(bytes);
        }
        for event in wait {
            self.unhold(event, 1);
        }
        if done {
            self.complete(id);
        }
    }

    /// Command `id` and all its children are over: its event takes its status, and its parent
    /// completes too if it was waiting for this one only.
    fn complete(&mut self, mut id: u64) {
        loop {
            let Some(record) = self.commands.remove(&id) else {
                return;
            };
            if id == ROOT {
                self.root_status = record.status;
                return;
            }
            let completed = now_ns();
            if let Some(event) = record.event {
                if let Some(e) = self.events.get_mut(&event) {
                    e.status = record.status.min(CL_COMPLETE);
                    let captures = std::mem::take(&mut e.captures);
                    if record.status == CL_COMPLETE && e.profiling {
                        let times = [
                            record.times[1].saturating_sub(record.times[0]),
                            completed.saturating_sub(record.times[0]),
                        ];
                        e.exec_times = Some(times);
                        for &dst in &captures {
                            write_times(dst, times);
                        }
                    }
                    self.unhold(event, 1 + captures.len() as u32);
                }
            }
            let parent = record.parent;
            let Some(p) = self.commands.get_mut(&parent) else {
                return;
            };
            p.outstanding = p.outstanding.saturating_sub(1);
            if record.status < 0 && p.status >= 0 {
                p.status = record.status;
            }
            if !(p.ended && p.outstanding == 0) {
                return;
            }
            id = parent;
        }
    }
}

/// Writes the two times of `capture_event_profiling_info` at `dst`.
fn write_times(dst: u64, times: [u64; 2]) {
    if dst == 0 {
        return;
    }
    // SAFETY: `dst` is the global address a kernel gave capture_event_profiling_info, where
    // OpenCL C lets the implementation write two ulongs; the memory (a buffer or program-scope
    // variable) is held by the parent's launch, which outlives its session.
    unsafe {
        std::ptr::write_unaligned(dst as *mut u64, times[0]);
        std::ptr::write_unaligned((dst as *mut u64).add(1), times[1]);
    }
}

/// Runs `f`, giving `default` if it panics: these functions are called from JIT code, which a
/// panic must not unwind through.
fn guard<T>(default: T, f: impl FnOnce() -> T) -> T {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)).unwrap_or(default)
}

/// A launch's shape: work_dim, offset, global and local sizes (1 past work_dim).
type Shape = (u32, [usize; 3], [usize; 3], [usize; 3]);

impl Host {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The device queue whose `queue_t` is `queue`: one of the context's for this device,
    /// held for the session.
    fn queue(&self, state: &mut State, queue: u64) -> Option<Arc<DeviceQueue>> {
        if let Some(q) = state.queues.get(&queue) {
            return Some(q.clone());
        }
        let q = self
            .context
            .device_queues
            .find(queue)
            .filter(|q| std::ptr::eq(&*q.device, &*self.device))?;
        state.queues.insert(queue, q.clone());
        Some(q)
    }

    /// The shape of a launch of block kernel `index` over `r` (OpenCL C 6.15.15.3:
    /// `CLK_INVALID_NDRANGE` for a work_dim outside 1..3, a zero global size, a local size
    /// the kernel cannot run with or zero in some dimensions only). A local size of 0 in every
    /// dimension leaves the choice to the device, as a NULL local size does on the host.
    fn shape(&self, index: usize, r: &NdRange) -> Result<Shape, i32> {
        let dims = r.work_dim as usize;
        if !(1..=3).contains(&dims) {
            return Err(CLK_INVALID_NDRANGE);
        }
        let size = |v: u64| usize::try_from(v).map_err(|_| CLK_INVALID_NDRANGE);
        let (mut offset, mut global, mut local) = ([0; 3], [1; 3], [1; 3]);
        for d in 0..dims {
            (offset[d], global[d], local[d]) =
                (size(r.offset[d])?, size(r.global[d])?, size(r.local[d])?);
            if global[d] == 0 || offset[d].checked_add(global[d]).is_none() {
                return Err(CLK_INVALID_NDRANGE);
            }
        }
        if global
            .iter()
            .try_fold(1usize, |n, &g| n.checked_mul(g))
            .is_none()
        {
            return Err(CLK_INVALID_NDRANGE);
        }
        let limits = group_limits(&self.built, index, &self.device);
        let given = local[..dims].iter().any(|&l| l != 0);
        let local =
            resolve_local_size(&limits, dims, global, given.then_some(local)).map_err(|e| {
                if e == CL_OUT_OF_RESOURCES {
                    CLK_OUT_OF_RESOURCES
                } else {
                    CLK_INVALID_NDRANGE
                }
            })?;
        Ok((dims as u32, offset, global, local))
    }

    /// The child launch `request` asks for, checked and packed: the block literal copied
    /// (aligned as asked), the argument block laid out as the block kernel's slots say (its
    /// first argument the copy's address, then the `__local` arguments as `pack_args` lays out
    /// local arguments).
    fn prepare(&self, request: &KernelEnqueue<'_>) -> Result<Child, i32> {
        if request.flags > CLK_ENQUEUE_FLAGS_WAIT_WORK_GROUP {
            return Err(CLK_ENQUEUE_FAILURE);
        }
        let index = request.block_kernel as usize;
        let kernel = self
            .built
            .code
            .kernels()
            .get(index)
            .filter(|k| k.info.block_invoke)
            .ok_or(CLK_ENQUEUE_FAILURE)?;
        let (work_dim, offset, global, local) = self.shape(index, &request.ndrange)?;
        let args = &kernel.info.args;
        let has_literal = matches!(args.first().map(|a| &a.kind), Some(ArgKind::BlockLiteral));
        if args.len() != usize::from(has_literal) + request.local_sizes.len() {
            return Err(CLK_ENQUEUE_FAILURE);
        }
        if request.local_sizes.contains(&0) {
            return Err(CLK_INVALID_ARG_SIZE);
        }
        let align = (request.literal_align as usize)
            .clamp(1, 4096)
            .next_power_of_two();
        let len = request.literal.len();
        let mut literal = vec![0u8; len + align];
        let start = literal.as_ptr().align_offset(align).min(align - 1);
        literal[start..start + len].copy_from_slice(request.literal);
        // The heap buffer stays where it is when the Vec moves into the Child.
        let address = literal.as_ptr() as usize + start;
        let mut values = Vec::with_capacity(args.len());
        if has_literal {
            values.push(Some(ArgValue::Svm(address)));
        }
        for &n in request.local_sizes {
            let n = usize::try_from(n).map_err(|_| CLK_OUT_OF_RESOURCES)?;
            values.push(Some(ArgValue::Local(n)));
        }
        // Checked kernels may reach the literal through their first argument.
        let object = |p: usize| {
            if p == address {
                (address as u64, (address + len) as u64)
            } else {
                (0, u64::MAX)
            }
        };
        let packed = pack_args(
            &kernel.args,
            kernel.args_size,
            kernel.static_local_mem_size,
            &values,
            &object,
        )
        .map_err(|_| CLK_OUT_OF_RESOURCES)?;
        if packed.arena_size as u64 > self.device.config.local_mem_size {
            return Err(CLK_OUT_OF_RESOURCES);
        }
        let items: usize = local.iter().product();
        let frames_size = kernel
            .work_item_frame_size
            .checked_mul(items)
            .filter(|&f| f <= MAX_GROUP_FRAME_BYTES)
            .ok_or(CLK_OUT_OF_RESOURCES)?;
        Ok(Child {
            index,
            launch: Launch {
                work_dim,
                offset,
                global,
                local,
                arena_size: packed.arena_size,
                frames_size,
                round_to_zero: self.round_to_zero,
                zero_memory: self.context.initialize,
                printf_buffer: 0,
                stop: self.stop.clone(),
                checked: 0,
                device_enqueue: self.address.load(Ordering::Acquire),
            },
            block: packed.block,
            _literal: literal,
        })
    }

    /// Records a command enqueued by the running kernel: its wait list checked and held, its
    /// bytes counted against its queue, its event made if asked for.
    #[allow(clippy::too_many_arguments)]
    fn add(
        &self,
        state: &mut State,
        queue: &DeviceQueue,
        limits: &DeviceQueueLimits,
        wait: &[u64],
        want_event: bool,
        bytes: usize,
        work: Work,
    ) -> Result<u64, i32> {
        if wait.iter().any(|&e| state.valid(e).is_none()) {
            return Err(CLK_INVALID_EVENT_WAIT_LIST);
        }
        let used = state
            .queue_bytes
            .get(&queue.address())
            .copied()
            .unwrap_or(0);
        if used.saturating_add(bytes) > queue.size as usize {
            return Err(CLK_DEVICE_QUEUE_FULL);
        }
        if want_event && state.live_events >= limits.max_events as usize {
            return Err(CLK_EVENT_ALLOCATION_FAILURE);
        }
        for e in wait {
            if let Some(e) = state.events.get_mut(e) {
                e.holds += 1;
            }
        }
        *state.queue_bytes.entry(queue.address()).or_default() += bytes;
        let event = want_event.then(|| state.new_event(false, queue.profiling()));
        let id = state.new_id();
        let parent = state.running;
        if let Some(p) = state.commands.get_mut(&parent) {
            p.outstanding += 1;
        }
        let record = Record::new(
            parent,
            event,
            queue.address(),
            Some(work),
            wait.to_vec(),
            bytes,
        );
        state.commands.insert(id, record);
        state.pending.push_back(id);
        Ok(event.unwrap_or(0))
    }

    /// The first pending child whose wait list is complete, taken to run; markers whose wait
    /// list is complete complete on the way, and commands waiting for a failed event fail.
    /// When children remain that nothing can make ready (their wait lists hold events no
    /// command or kernel will complete: nothing runs while this looks), they fail.
    fn next_ready(&self) -> Option<(u64, Box<Child>)> {
        let mut guard = self.lock();
        let state = &mut *guard;
        state.running = ROOT;
        loop {
            if state.pending.is_empty() {
                return None;
            }
            let mut progressed = false;
            let mut i = 0;
            while i < state.pending.len() {
                let id = state.pending[i];
                let (failed, ready) = match state.commands.get(&id) {
                    Some(r) => (
                        r.wait.iter().any(|&e| state.status(e) < 0),
                        r.wait.iter().all(|&e| state.status(e) == CL_COMPLETE),
                    ),
                    None => (true, false),
                };
                if !failed && !ready {
                    i += 1;
                    continue;
                }
                state.pending.remove(i);
                progressed = true;
                if failed {
                    state.end(id, CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST);
                    continue;
                }
                let Some(record) = state.commands.get_mut(&id) else {
                    continue;
                };
                match record.work.take() {
                    Some(Work::Kernel(child)) => {
                        record.times[0] = now_ns();
                        let event = record.event;
                        if let Some(e) = event.and_then(|e| state.events.get_mut(&e)) {
                            e.status = CL_RUNNING;
                        }
                        state.running = id;
                        return Some((id, child));
                    }
                    _ => state.end(id, CL_COMPLETE),
                }
            }
            if !progressed {
                let stuck: Vec<u64> = state.pending.drain(..).collect();
                log(
                    &self.device.config.settings,
                    LogLevel::Error,
                    format_args!(
                        "device-side enqueue: {} child command(s) wait for events that never complete (a user event no kernel set, or a command waiting for one): they fail with CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST, and so does the parent kernel's command",
                        stuck.len()
                    ),
                );
                for id in stuck {
                    state.end(id, CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST);
                }
            }
        }
    }

    /// Runs one child's work-groups: its status.
    fn run_child(&self, child: &Child) -> i32 {
        let kernel = &self.built.code.kernels()[child.index];
        let mut launch = child.launch.clone();
        let mut printf = (!kernel.printf_formats.is_empty())
            .then(|| PrintfBuffer::new(self.device.config.printf_buffer_size));
        launch.printf_buffer = printf.as_mut().map_or(0, PrintfBuffer::address);
        let checked = kernel.checked.then(|| {
            let (regions, read_only) = self.checked_regions.clone().unwrap_or_default();
            launch.arm_checked(regions, read_only)
        });
        let ran = run_ndrange(&self.device.pool, self.hints, kernel, &child.block, &launch);
        if let Some(printf) = printf {
            write_stdout(&printf.render(&kernel.printf_formats));
        }
        if let Some(fault) = checked.as_ref().and_then(|c| c.fault()) {
            // Always on stderr, as for a host launch's fault (kernel.rs).
            eprintln!(
                "ferrocl: checked mode: {}; the command of its parent kernel fails with CL_OUT_OF_RESOURCES",
                fault.describe(kernel)
            );
            return CL_OUT_OF_RESOURCES;
        }
        match ran {
            Ok(()) => CL_COMPLETE,
            Err(LaunchFailure::Stopped) => CL_OUT_OF_RESOURCES,
            Err(LaunchFailure::OutOfArena) => CL_OUT_OF_HOST_MEMORY,
        }
    }
}

impl DeviceEnqueueHost for Host {
    fn enqueue_kernel(&self, request: &KernelEnqueue<'_>, want_event: bool) -> Result<u64, i32> {
        guard(Err(CLK_ENQUEUE_FAILURE), || {
            let limits = self.limits.ok_or(CLK_INVALID_QUEUE)?;
            let queue = {
                let mut state = self.lock();
                self.queue(&mut state, request.queue)
            }
            .ok_or(CLK_INVALID_QUEUE)?;
            // Checked and packed outside the lock: many work-items enqueue at once.
            let child = self.prepare(request)?;
            let bytes = COMMAND_BYTES
                + request.literal.len().next_multiple_of(8)
                + 8 * (request.local_sizes.len() + request.wait_events.len());
            let work = Work::Kernel(Box::new(child));
            let mut state = self.lock();
            self.add(
                &mut state,
                &queue,
                &limits,
                request.wait_events,
                want_event,
                bytes,
                work,
            )
        })
    }

    fn enqueue_marker(
        &self,
        queue: u64,
        wait_events: &[u64],
        want_event: bool,
    ) -> Result<u64, i32> {
        guard(Err(CLK_ENQUEUE_FAILURE), || {
            let limits = self.limits.ok_or(CLK_INVALID_QUEUE)?;
            let mut state = self.lock();
            let queue = self.queue(&mut state, queue).ok_or(CLK_INVALID_QUEUE)?;
            if wait_events.is_empty() {
                return Err(CLK_INVALID_EVENT_WAIT_LIST);
            }
            let bytes = COMMAND_BYTES + 8 * wait_events.len();
            self.add(
                &mut state,
                &queue,
                &limits,
                wait_events,
                want_event,
                bytes,
                Work::Marker,
            )
        })
    }

    fn default_queue(&self) -> u64 {
        self.default_queue.as_ref().map_or(0, |q| q.address())
    }

    fn create_user_event(&self) -> u64 {
        guard(0, || {
            let mut state = self.lock();
            let max = self.limits.map_or(0, |l| l.max_events as usize);
            if state.live_events >= max {
                return 0;
            }
            state.new_event(true, false)
        })
    }

    fn retain_event(&self, event: u64) {
        guard((), || {
            if let Some(e) = self.lock().valid(event) {
                e.refs = e.refs.saturating_add(1);
            }
        })
    }

    fn release_event(&self, event: u64) {
        guard((), || {
            let mut state = self.lock();
            let Some(e) = state.valid(event) else {
                return;
            };
            e.refs -= 1;
            let (refs, holds) = (e.refs, e.holds);
            if refs == 0 {
                state.live_events = state.live_events.saturating_sub(1);
                if holds == 0 {
                    state.events.remove(&event);
                }
            }
        })
    }

    fn set_user_event_status(&self, event: u64, status: i32) {
        guard((), || {
            if status != CL_COMPLETE && status >= 0 {
                return;
            }
            if let Some(e) = self.lock().valid(event) {
                if e.user && e.status == CL_SUBMITTED {
                    e.status = status;
                }
            }
        })
    }

    fn is_valid_event(&self, event: u64) -> bool {
        guard(false, || self.lock().valid(event).is_some())
    }

    fn capture_profiling_info(&self, event: u64, name: u32, dst: u64) {
        guard((), || {
            if name != CLK_PROFILING_COMMAND_EXEC_TIME || dst == 0 {
                return;
            }
            let mut state = self.lock();
            let Some(e) = state.valid(event) else {
                return;
            };
            if e.user || !e.profiling {
                return;
            }
            match e.exec_times {
                Some(times) => write_times(dst, times),
                // Written when the command completes (not at all if it fails).
                None if e.status >= 0 => {
                    e.captures.push(dst);
                    e.holds += 1;
                }
                None => {}
            }
        })
    }

    fn block_query(&self, block_kernel: u32, query: BlockQuery, ndrange: Option<&NdRange>) -> u32 {
        guard(0, || {
            let index = block_kernel as usize;
            if index >= self.built.code.kernels().len() {
                return 0;
            }
            let answer = match query {
                // CL_KERNEL_WORK_GROUP_SIZE as clGetKernelWorkGroupInfo answers it.
                BlockQuery::WorkGroupSize => {
                    group_limits(&self.built, index, &self.device).max_items
                }
                BlockQuery::PreferredWorkGroupSizeMultiple => {
                    self.device.config.preferred_work_group_size_multiple
                }
                // As clGetKernelSubGroupInfo, for the local size the ndrange has or the device
                // would choose.
                BlockQuery::SubGroupCount | BlockQuery::MaxSubGroupSize => {
                    let Some(Ok((dims, _, _, local))) = ndrange.map(|r| self.shape(index, r))
                    else {
                        return 0;
                    };
                    let local = &local[..dims as usize];
                    let size = sub_group_size(&self.built.code.kernels()[index].info);
                    if query == BlockQuery::SubGroupCount {
                        sub_group_count_for(local, size)
                    } else {
                        max_sub_group_size_for(local, size)
                    }
                }
            };
            u32::try_from(answer).unwrap_or(u32::MAX)
        })
    }
}
