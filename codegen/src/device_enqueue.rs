//! Device-side enqueue (OpenCL C 3.0 §6.15.15, SPIR-V 3.52.24 "Device-Side Enqueue
//! Instructions", env 3.1.1 §5.3): what JIT code calls for `enqueue_kernel`, `enqueue_marker`,
//! `get_default_queue`, the `clk_event_t` functions and the block queries, and the contract
//! with the runtime that carries them out ([`DeviceEnqueueHost`]).
//!
//! Codegen knows nothing of queues or events: JIT code finds the launch's
//! [`DeviceEnqueueContext`] through [`crate::GroupInfo::device_enqueue`] and passes it, with the
//! instruction's operands, to the `ferrocl_*` functions below, which turn raw addresses into
//! slices and call the host. A `queue_t` is the device queue's handle address (what
//! `clSetKernelArg` is given and `get_default_queue` returns; 0 when there is none); a
//! `clk_event_t` is a non-zero u64 the host hands out (0 is no event). A block names the
//! kernel that runs it by its index in the program's kernels ([`crate::Program::kernels`] of
//! the whole program, in module order; `Module::block_kernels` maps a block to it).

use std::sync::Arc;

/// `ndrange_t` as `OpBuildNDRange` builds it: clang-15's `struct.ndrange_t`
/// `{ i32 work_dim, [3 x i64] global_work_offset, [3 x i64] global_work_size,
/// [3 x i64] local_work_size }`, 80 bytes. Unused dimensions are 0; a local size of 0 in every
/// dimension means the enqueue leaves the work-group size to the implementation.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct NdRange {
    pub work_dim: u32,
    pub offset: [u64; 3],
    pub global: [u64; 3],
    pub local: [u64; 3],
}

impl NdRange {
    pub(crate) const SIZE: u32 = 80;
    pub(crate) const OFFSET: i32 = 8;
    pub(crate) const GLOBAL: i32 = 32;
    pub(crate) const LOCAL: i32 = 56;
}

const _: () = {
    assert!(std::mem::size_of::<NdRange>() == NdRange::SIZE as usize);
    assert!(std::mem::offset_of!(NdRange, offset) == NdRange::OFFSET as usize);
    assert!(std::mem::offset_of!(NdRange, global) == NdRange::GLOBAL as usize);
    assert!(std::mem::offset_of!(NdRange, local) == NdRange::LOCAL as usize);
};

/// One `enqueue_kernel` call, its operands read.
#[derive(Debug)]
pub struct KernelEnqueue<'a> {
    /// The `queue_t` operand.
    pub queue: u64,
    /// `kernel_enqueue_flags_t`: [`CLK_ENQUEUE_FLAGS_NO_WAIT`], `_WAIT_KERNEL` or
    /// `_WAIT_WORK_GROUP` (any other value is the host's to refuse).
    pub flags: u32,
    pub ndrange: NdRange,
    /// The events the child waits for (`num_events_in_wait_list` of them).
    pub wait_events: &'a [u64],
    /// The kernel that runs the block: its index in [`crate::Program::kernels`] of the whole
    /// program (module order), never in a one-kernel specialised build.
    pub block_kernel: u32,
    /// The block literal (captured variables): its bytes, which the host copies, and its
    /// alignment; the child kernel's first argument is the copy's address.
    pub literal: &'a [u8],
    pub literal_align: u32,
    /// Bytes of each `local void *` argument of the block, in order (its kernel's arguments
    /// after the first).
    pub local_sizes: &'a [u64],
}

/// `kernel_enqueue_flags_t` (OpenCL C 6.15.15.2).
pub const CLK_ENQUEUE_FLAGS_NO_WAIT: u32 = 0;
pub const CLK_ENQUEUE_FLAGS_WAIT_KERNEL: u32 = 1;
pub const CLK_ENQUEUE_FLAGS_WAIT_WORK_GROUP: u32 = 2;
/// `enqueue_kernel`'s results (OpenCL C 6.15.15.3; the values are the API's error codes).
pub const CLK_SUCCESS: i32 = 0;
pub const CLK_ENQUEUE_FAILURE: i32 = -101;
pub const CLK_INVALID_QUEUE: i32 = -102;
pub const CLK_INVALID_NDRANGE: i32 = -160;
pub const CLK_INVALID_EVENT_WAIT_LIST: i32 = -57;
pub const CLK_DEVICE_QUEUE_FULL: i32 = -161;
pub const CLK_INVALID_ARG_SIZE: i32 = -51;
pub const CLK_EVENT_ALLOCATION_FAILURE: i32 = -100;
pub const CLK_OUT_OF_RESOURCES: i32 = -5;
/// `clk_profiling_info`: the only one OpenCL C defines.
pub const CLK_PROFILING_COMMAND_EXEC_TIME: u32 = 0x1;

/// The block queries (OpGetKernelWorkGroupSize and friends), answered for one block kernel.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BlockQuery {
    /// `get_kernel_work_group_size`.
    WorkGroupSize,
    /// `get_kernel_preferred_work_group_size_multiple`.
    PreferredWorkGroupSizeMultiple,
    /// `get_kernel_sub_group_count_for_ndrange`.
    SubGroupCount,
    /// `get_kernel_max_sub_group_size_for_ndrange`.
    MaxSubGroupSize,
}

/// What the runtime does for the device-enqueue instructions of one launch and the children it
/// enqueues. Every method is called from JIT code on worker threads, many at once; none may
/// block on another work-item (children never start before `enqueue_kernel` returns to the
/// work-item that called it). Results are what the OpenCL C functions return.
pub trait DeviceEnqueueHost: Send + Sync {
    /// `enqueue_kernel`: `Ok(event)` where `want_event` (the `clk_event_t` the call's
    /// `event_ret` receives, retained once for the caller), `Ok(0)` otherwise; `Err` is one of
    /// the `CLK_*` failures and enqueues nothing.
    fn enqueue_kernel(&self, request: &KernelEnqueue<'_>, want_event: bool) -> Result<u64, i32>;
    /// `enqueue_marker`: an event that completes when every event of `wait_events` has.
    fn enqueue_marker(&self, queue: u64, wait_events: &[u64], want_event: bool)
        -> Result<u64, i32>;
    /// `get_default_queue`: the default device queue, 0 if there is none.
    fn default_queue(&self) -> u64;
    /// `create_user_event`: 0 when no event can be made.
    fn create_user_event(&self) -> u64;
    /// `retain_event`; invalid events are ignored.
    fn retain_event(&self, event: u64);
    /// `release_event`; invalid events are ignored.
    fn release_event(&self, event: u64);
    /// `set_user_event_status`: `CL_COMPLETE` or a negative error.
    fn set_user_event_status(&self, event: u64, status: i32);
    /// `is_valid_event`.
    fn is_valid_event(&self, event: u64) -> bool;
    /// `capture_event_profiling_info`: once the event's command completes, two u64s at `dst`
    /// (a global address): end − start and complete − start, in nanoseconds.
    fn capture_profiling_info(&self, event: u64, name: u32, dst: u64);
    /// A block query: `ndrange` is given for the two sub-group queries.
    fn block_query(&self, block_kernel: u32, query: BlockQuery, ndrange: Option<&NdRange>) -> u32;
}

/// What [`crate::GroupInfo::device_enqueue`] points at: the host of one launch, kept alive by
/// the runtime until the launch and every child it enqueued have finished.
pub struct DeviceEnqueueContext {
    pub host: Arc<dyn DeviceEnqueueHost>,
}

/// # Safety
/// `ctx` is 0 or the address of a live [`DeviceEnqueueContext`].
unsafe fn host<'a>(ctx: u64) -> Option<&'a dyn DeviceEnqueueHost> {
    // SAFETY: the caller's contract; the runtime keeps the context alive for the launch.
    (ctx != 0).then(|| unsafe { &*(*(ctx as *const DeviceEnqueueContext)).host })
}

/// # Safety
/// `ptr` is readable for `count` u64s when `count` is non-zero.
unsafe fn u64s<'a>(ptr: u64, count: u32) -> &'a [u64] {
    if count == 0 || ptr == 0 {
        return &[];
    }
    // SAFETY: the caller's contract (JIT code passes the kernel's own pointers).
    unsafe { std::slice::from_raw_parts(ptr as *const u64, count as usize) }
}

/// The wait list's operands as OpenCL C 6.15.15.3 judges them: a count without a list, or a
/// list without a count, is `CLK_INVALID_EVENT_WAIT_LIST`.
fn wait_list_valid(num_events: u32, events: u64) -> bool {
    (num_events == 0) == (events == 0)
}

/// `OpEnqueueKernel`. `ndrange` is the address of an [`NdRange`]; `events` of `num_events`
/// event handles; `ret_event` of a `clk_event_t` to set, or 0; `literal` of `literal_size`
/// bytes; `locals` of `num_locals` u64 sizes.
///
/// # Safety
/// JIT code passes addresses the kernel may read (and `ret_event` write).
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe extern "C" fn ferrocl_enqueue_kernel(
    ctx: u64,
    queue: u64,
    flags: u32,
    ndrange: u64,
    num_events: u32,
    events: u64,
    ret_event: u64,
    block_kernel: u32,
    literal: u64,
    literal_size: u32,
    literal_align: u32,
    num_locals: u32,
    locals: u64,
) -> i32 {
    // SAFETY: ctx comes from GroupInfo, which the runtime set.
    let Some(host) = (unsafe { host(ctx) }) else {
        return CLK_INVALID_QUEUE;
    };
    if !wait_list_valid(num_events, events) {
        return CLK_INVALID_EVENT_WAIT_LIST;
    }
    if literal == 0 && literal_size != 0 {
        return CLK_INVALID_ARG_SIZE;
    }
    // SAFETY: the kernel's own ndrange_t, events, literal and local sizes (JIT contract).
    let request = unsafe {
        KernelEnqueue {
            queue,
            flags,
            ndrange: std::ptr::read_unaligned(ndrange as *const NdRange),
            wait_events: u64s(events, num_events),
            block_kernel,
            literal: if literal_size == 0 {
                &[]
            } else {
                std::slice::from_raw_parts(literal as *const u8, literal_size as usize)
            },
            literal_align,
            local_sizes: u64s(locals, num_locals),
        }
    };
    match host.enqueue_kernel(&request, ret_event != 0) {
        Ok(event) => {
            if ret_event != 0 {
                // SAFETY: event_ret points at a clk_event_t the kernel may write.
                unsafe { std::ptr::write_unaligned(ret_event as *mut u64, event) };
            }
            CLK_SUCCESS
        }
        Err(code) => code,
    }
}

/// `OpEnqueueMarker`.
///
/// # Safety
/// As [`ferrocl_enqueue_kernel`].
pub(crate) unsafe extern "C" fn ferrocl_enqueue_marker(
    ctx: u64,
    queue: u64,
    num_events: u32,
    events: u64,
    ret_event: u64,
) -> i32 {
    // SAFETY: ctx comes from GroupInfo.
    let Some(host) = (unsafe { host(ctx) }) else {
        return CLK_INVALID_QUEUE;
    };
    // enqueue_marker needs a wait list (OpenCL C 6.15.15.4).
    if num_events == 0 || events == 0 {
        return CLK_INVALID_EVENT_WAIT_LIST;
    }
    // SAFETY: the kernel's own event list.
    let wait = unsafe { u64s(events, num_events) };
    match host.enqueue_marker(queue, wait, ret_event != 0) {
        Ok(event) => {
            if ret_event != 0 {
                // SAFETY: event_ret points at a clk_event_t the kernel may write.
                unsafe { std::ptr::write_unaligned(ret_event as *mut u64, event) };
            }
            CLK_SUCCESS
        }
        Err(code) => code,
    }
}

/// `OpGetDefaultQueue`.
///
/// # Safety
/// `ctx` as [`ferrocl_enqueue_kernel`].
pub(crate) unsafe extern "C" fn ferrocl_default_queue(ctx: u64) -> u64 {
    // SAFETY: ctx comes from GroupInfo.
    unsafe { host(ctx) }.map_or(0, |h| h.default_queue())
}

/// `OpCreateUserEvent`.
///
/// # Safety
/// `ctx` as [`ferrocl_enqueue_kernel`].
pub(crate) unsafe extern "C" fn ferrocl_create_user_event(ctx: u64) -> u64 {
    // SAFETY: ctx comes from GroupInfo.
    unsafe { host(ctx) }.map_or(0, |h| h.create_user_event())
}

/// What [`ferrocl_event_op`] does to an event.
pub(crate) const EVENT_RETAIN: u32 = 0;
pub(crate) const EVENT_RELEASE: u32 = 1;
pub(crate) const EVENT_IS_VALID: u32 = 2;
pub(crate) const EVENT_SET_STATUS: u32 = 3;

/// `OpRetainEvent`, `OpReleaseEvent`, `OpIsValidEvent` (1 or 0) and `OpSetUserEventStatus`
/// (`status` its operand), by `op`.
///
/// # Safety
/// `ctx` as [`ferrocl_enqueue_kernel`].
pub(crate) unsafe extern "C" fn ferrocl_event_op(
    ctx: u64,
    event: u64,
    op: u32,
    status: i32,
) -> i32 {
    // SAFETY: ctx comes from GroupInfo.
    let Some(host) = (unsafe { host(ctx) }) else {
        return 0;
    };
    match op {
        EVENT_RETAIN => host.retain_event(event),
        EVENT_RELEASE => host.release_event(event),
        EVENT_IS_VALID => return i32::from(host.is_valid_event(event)),
        EVENT_SET_STATUS => host.set_user_event_status(event, status),
        _ => {}
    }
    0
}

/// `OpCaptureEventProfilingInfo`.
///
/// # Safety
/// `ctx` as [`ferrocl_enqueue_kernel`]; `dst` a global address the kernel may write 16 bytes at.
pub(crate) unsafe extern "C" fn ferrocl_capture_profiling(
    ctx: u64,
    event: u64,
    name: u32,
    dst: u64,
) {
    // SAFETY: ctx comes from GroupInfo.
    if let Some(host) = unsafe { host(ctx) } {
        host.capture_profiling_info(event, name, dst);
    }
}

/// The block queries: `query` is a [`BlockQuery`] as 0..=3 in declaration order; `ndrange`
/// the address of an [`NdRange`] for the sub-group queries, else 0.
///
/// # Safety
/// `ctx` as [`ferrocl_enqueue_kernel`]; `ndrange` 0 or readable.
pub(crate) unsafe extern "C" fn ferrocl_block_query(
    ctx: u64,
    block_kernel: u32,
    query: u32,
    ndrange: u64,
) -> u32 {
    // SAFETY: ctx comes from GroupInfo.
    let Some(host) = (unsafe { host(ctx) }) else {
        return 0;
    };
    let query = match query {
        0 => BlockQuery::WorkGroupSize,
        1 => BlockQuery::PreferredWorkGroupSizeMultiple,
        2 => BlockQuery::SubGroupCount,
        _ => BlockQuery::MaxSubGroupSize,
    };
    // SAFETY: the kernel's own ndrange_t.
    let range =
        (ndrange != 0).then(|| unsafe { std::ptr::read_unaligned(ndrange as *const NdRange) });
    host.block_query(block_kernel, query, range.as_ref())
}
