//! The executor: a device's pool of workers (one per compute unit) and the jobs they share, and
//! the split of an NDRange into chunks of work-groups run as one job. Each worker owns an arena
//! (aligned to LOCAL_ARG_ALIGN, grown on demand) holding the group's local memory followed by
//! the work-item frames of kernels with barriers.
//!
//! Jobs from several queues (or several commands of an out-of-order queue) run at once: after
//! every chunk a worker picks its next chunk from the job of highest priority, rotating among
//! jobs of equal priority, so a small launch is not stuck behind a large one and in-order
//! queues share the workers evenly (rayon, used before, finishes the job a worker started
//! before it takes a new one). Within a job each worker streams through a contiguous part of
//! the chunks and then helps with the others' (as rayon's splitting did). A throttled job is
//! limited to a share of the workers.
//!
//! A thread that waits for a command may run it itself ([`on_calling_thread`]): an application
//! thread blocked in `clFinish` does not then depend on a queue thread or a worker being
//! scheduled (on a loaded machine that costs a scheduler round trip per command). It runs with
//! the workers' floating-point environment, on a stack as large as theirs, and runs small
//! launches' work-groups itself instead of handing them to the pool.

use std::alloc::Layout;
use std::any::Any;
use std::cell::{Cell, RefCell};
use std::sync::atomic::{AtomicU32, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};

use ferrocl_codegen::{CheckedLaunch, GroupInfo, Kernel, LOCAL_ARG_ALIGN};

use crate::context::MemoryInitialize;

/// A kernel's argument block, 16-byte aligned (backed by u128s).
pub struct ArgBlock {
    words: Vec<u128>,
}

impl ArgBlock {
    pub fn new(size: usize) -> Self {
        ArgBlock {
            words: vec![0; size.div_ceil(16).max(1)],
        }
    }

    fn bytes_mut(&mut self) -> &mut [u8] {
        let len = self.words.len() * 16;
        // SAFETY: u128 storage reinterpreted as bytes; same length in bytes, u8 has no alignment.
        unsafe { std::slice::from_raw_parts_mut(self.words.as_mut_ptr().cast::<u8>(), len) }
    }

    /// Writes `bytes` (truncated to the slot's `size`) at `offset`; out-of-range slots are
    /// ignored (the layout comes from codegen and is trusted to fit `args_size`).
    pub fn write(&mut self, offset: usize, size: usize, bytes: &[u8]) {
        let n = size.min(bytes.len());
        if let Some(dst) = self.bytes_mut().get_mut(offset..offset + n) {
            dst.copy_from_slice(&bytes[..n]);
        }
    }

    pub fn as_ptr(&self) -> *const u8 {
        self.words.as_ptr().cast()
    }
}

/// One NDRange launch after validation.
#[derive(Clone, Debug)]
pub struct Launch {
    pub work_dim: u32,
    pub offset: [usize; 3],
    pub global: [usize; 3],
    pub local: [usize; 3],
    /// Local memory of one group: static `__local` variables and `__local` arguments.
    pub arena_size: usize,
    /// Work-item frame bytes of one group (frame size × enqueued work-group size); 0 for
    /// kernels without barriers.
    pub frames_size: usize,
    /// Run with single-precision round-toward-zero (`FERROCL_ROUNDING=rtz`).
    pub round_to_zero: bool,
    /// What the context asks to be zeroed before each work-group (cl_khr_initialize_memory):
    /// the local memory, and with `private` the work-item frames (private variables of
    /// kernels with barriers; codegen zeroes those on the stack).
    pub zero_memory: MemoryInitialize,
    /// `GroupInfo::printf_buffer` of every group (0 when the kernel does not print).
    pub printf_buffer: u64,
    /// The kernel watchdog's stop word for this launch (crate::watchdog), None without a
    /// timeout. Once set, JIT code built with stop checks leaves its work-group at the next
    /// loop head and no further group starts.
    pub stop: Option<Arc<AtomicU32>>,
    /// `GroupInfo::checked`: the address of the launch's `CheckedLaunch` for checked kernels,
    /// alive until the launch returns; 0 otherwise.
    pub checked: u64,
    /// `GroupInfo::device_enqueue`: the address of the launch's
    /// `ferrocl_codegen::DeviceEnqueueContext` for kernels with device-side enqueue, alive
    /// until the launch and its children have run (device_enqueue.rs); 0 otherwise.
    pub device_enqueue: u64,
}

impl Launch {
    /// Checked mode for a launch of a checked kernel (host launches and device-side
    /// children): a `CheckedLaunch` of `regions` and the `read_only` ones, whose first fault
    /// stops the launch through its stop word (a new one without a watchdog), and
    /// `self.checked` its address. The box must outlive the launch.
    pub fn arm_checked(
        &mut self,
        regions: Vec<(u64, u64)>,
        read_only: Vec<(u64, u64)>,
    ) -> Box<CheckedLaunch> {
        let stop = self
            .stop
            .get_or_insert_with(|| Arc::new(AtomicU32::new(0)))
            .clone();
        let checked = Box::new(CheckedLaunch::new(regions, read_only, stop));
        self.checked = &*checked as *const CheckedLaunch as u64;
        checked
    }

    /// Where the frames start in the arena.
    fn frames_offset(&self) -> usize {
        self.arena_size.next_multiple_of(LOCAL_ARG_ALIGN)
    }
}

/// A worker could not get the arena a launch needs: the host is out of memory. The launch's
/// command fails (CL_OUT_OF_HOST_MEMORY) instead of the process aborting.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OutOfArena;

/// Why a launch did not run all of its work-groups.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LaunchFailure {
    OutOfArena,
    /// Its stop word was set (the kernel watchdog's deadline passed).
    Stopped,
}

/// `cl_khr_priority_hints`: which job the workers serve first when several wait.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord)]
pub enum Priority {
    Low,
    #[default]
    Medium,
    High,
}

/// `cl_khr_throttle_hints`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Throttle {
    High,
    #[default]
    Medium,
    Low,
}

/// How a job shares the workers with the other jobs of its pool.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct JobHints {
    pub priority: Priority,
    /// At most this many workers at once (`cl_khr_throttle_hints`); 0 for all of them.
    pub max_workers: usize,
}

impl JobHints {
    /// The hints of a queue on a device of `workers` workers: a low throttle takes half of
    /// them (rounded up); medium, the default, and high take all (the CPU's clock and power
    /// state are the operating system's).
    pub fn new(priority: Priority, throttle: Throttle, workers: usize) -> Self {
        JobHints {
            priority,
            max_workers: match throttle {
                Throttle::Low => workers.div_ceil(2).max(1),
                Throttle::Medium | Throttle::High => 0,
            },
        }
    }
}

/// Runs chunk `i` of a job.
type Task<'a> = dyn Fn(usize) -> Result<(), LaunchFailure> + Sync + 'a;

/// What a job's submitter waits on.
struct JobShared {
    /// The submitter's task; valid while `finished < chunks` (see `WorkerPool::run`).
    task: *const Task<'static>,
    chunks: usize,
    hints: JobHints,
    /// Chunks run, failed or skipped after a failure; the job is over at `chunks`.
    finished: AtomicUsize,
    failure: Mutex<Option<LaunchFailure>>,
    panic: Mutex<Option<Box<dyn Any + Send>>>,
}

// SAFETY: `task` points to a `Sync` closure that outlives every use (WorkerPool::run waits for
// all chunks before it returns); the other fields are thread-safe.
unsafe impl Send for JobShared {}
// SAFETY: as above.
unsafe impl Sync for JobShared {}

/// A job in the pool's list, with what the workers have not taken of it yet.
struct Slot {
    job: Arc<JobShared>,
    /// One contiguous range of chunks per worker, taken from the front by that worker (each
    /// worker streams through its own part of the range, as memory-bound kernels like) and
    /// from the back by workers whose own range is empty.
    unclaimed: Vec<std::ops::Range<usize>>,
    active: usize,
}

impl Slot {
    fn new(job: Arc<JobShared>, workers: usize) -> Slot {
        let (chunks, workers) = (job.chunks, workers.max(1));
        let unclaimed = (0..workers)
            .map(|w| chunks * w / workers..chunks * (w + 1) / workers)
            .collect();
        Slot {
            job,
            unclaimed,
            active: 0,
        }
    }

    fn left(&self) -> usize {
        self.unclaimed.iter().map(|r| r.len()).sum()
    }

    fn eligible(&self) -> bool {
        self.left() > 0
            && (self.job.hints.max_workers == 0 || self.active < self.job.hints.max_workers)
    }

    /// The next chunk for worker `worker`: the front of its own range, else the back of the
    /// largest one left.
    fn take(&mut self, worker: usize) -> Option<usize> {
        let n = self.unclaimed.len();
        if let Some(own) = self.unclaimed.get_mut(worker % n) {
            if let Some(i) = own.next() {
                return Some(i);
            }
        }
        self.unclaimed
            .iter_mut()
            .max_by_key(|r| r.len())
            .and_then(|r| r.next_back())
    }
}

#[derive(Default)]
struct PoolState {
    jobs: Vec<Slot>,
    /// Where the rotation among jobs of equal priority goes on.
    cursor: usize,
    shutdown: bool,
}

struct PoolShared {
    state: Mutex<PoolState>,
    /// Workers sleep here when no job has work for them.
    work: Condvar,
    /// Submitters sleep here until their job is over.
    done: Condvar,
    /// Bumped for every new job, so idle workers can poll for one before they sleep.
    generation: AtomicU64,
}

impl PoolShared {
    fn lock(&self) -> MutexGuard<'_, PoolState> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }
}

thread_local! {
    /// The pool the current thread works for (its address), 0 for other threads.
    static POOL_OF_THIS_THREAD: Cell<usize> = const { Cell::new(0) };
}

/// A device's workers: one thread per compute unit.
pub struct WorkerPool {
    shared: Arc<PoolShared>,
    threads: usize,
}

impl WorkerPool {
    /// `threads` workers named `name-i`, each calling `start(i)` first (to pin itself).
    pub fn new(
        name: &str,
        threads: usize,
        start: impl Fn(usize) + Send + Sync + 'static,
    ) -> std::io::Result<WorkerPool> {
        let shared = Arc::new(PoolShared {
            state: Mutex::new(PoolState::default()),
            work: Condvar::new(),
            done: Condvar::new(),
            generation: AtomicU64::new(0),
        });
        let start = Arc::new(start);
        // Built first: if a spawn fails, dropping it stops the workers already started.
        let mut pool = WorkerPool {
            shared: shared.clone(),
            threads: 0,
        };
        for i in 0..threads.max(1) {
            let shared = shared.clone();
            let start = start.clone();
            std::thread::Builder::new()
                .name(format!("{name}-{i}"))
                // Work-group functions keep private memory on the stack (codegen's
                // PRIVATE_STACK_LIMIT); the reservation is virtual until touched.
                .stack_size(ferrocl_codegen::KERNEL_THREAD_STACK_BYTES)
                .spawn(move || {
                    enter_kernel_thread();
                    start(i);
                    work(&shared, i)
                })?;
            pool.threads += 1;
        }
        Ok(pool)
    }

    pub fn threads(&self) -> usize {
        self.threads
    }

    fn id(&self) -> usize {
        Arc::as_ptr(&self.shared) as usize
    }

    #[cfg(test)]
    fn jobs(&self) -> usize {
        self.shared.lock().jobs.len()
    }

    /// Runs `task(0)` … `task(chunks - 1)` on the workers and returns when every chunk has
    /// run, or the first failure once the chunks already started are over (the others do not
    /// run). A panic in a chunk is resumed here.
    pub fn run(
        &self,
        chunks: usize,
        hints: JobHints,
        task: &Task<'_>,
    ) -> Result<(), LaunchFailure> {
        if chunks == 0 {
            return Ok(());
        }
        if POOL_OF_THIS_THREAD.with(Cell::get) == self.id() {
            // A worker waiting for its own pool could wait for itself.
            return (0..chunks).try_for_each(task);
        }
        // SAFETY: only the lifetime is erased. The pointer is used by workers for chunks they
        // claimed, each before it counts the chunk finished, and this function does not return
        // (nor unwind: nothing below panics) until every chunk is finished.
        let task: *const Task<'static> = unsafe { std::mem::transmute(task as *const Task<'_>) };
        let job = Arc::new(JobShared {
            task,
            chunks,
            hints,
            finished: AtomicUsize::new(0),
            failure: Mutex::new(None),
            panic: Mutex::new(None),
        });
        {
            let mut state = self.shared.lock();
            state.jobs.push(Slot::new(job.clone(), self.threads));
            self.shared.generation.fetch_add(1, Ordering::Release);
        }
        self.shared.work.notify_all();
        let over = || job.finished.load(Ordering::Acquire) == chunks;
        if crate::event::poll_briefly(|| over().then_some(())).is_none() {
            let mut state = self.shared.lock();
            while !over() {
                state = self
                    .shared
                    .done
                    .wait(state)
                    .unwrap_or_else(|p| p.into_inner());
            }
        }
        if let Some(payload) = job.panic.lock().unwrap_or_else(|p| p.into_inner()).take() {
            std::panic::resume_unwind(payload);
        }
        let failure = job.failure.lock().unwrap_or_else(|p| p.into_inner()).take();
        failure.map_or(Ok(()), Err)
    }
}

impl Drop for WorkerPool {
    fn drop(&mut self) {
        self.shared.lock().shutdown = true;
        self.shared.work.notify_all();
    }
}

/// The next chunk for a worker: from the highest-priority job that has one, rotating among
/// jobs of that priority.
fn claim(state: &mut PoolState, worker: usize) -> Option<(Arc<JobShared>, usize)> {
    let best = state
        .jobs
        .iter()
        .filter(|s| s.eligible())
        .map(|s| s.job.hints.priority)
        .max()?;
    let n = state.jobs.len();
    for k in 1..=n {
        let i = (state.cursor + k) % n;
        let slot = &mut state.jobs[i];
        if slot.eligible() && slot.job.hints.priority == best {
            state.cursor = i;
            let index = slot.take(worker)?;
            slot.active += 1;
            return Some((slot.job.clone(), index));
        }
    }
    None
}

/// The life of worker `worker`: claim a chunk, run it, account for it; sleep when there is
/// nothing.
fn work(shared: &PoolShared, worker: usize) {
    POOL_OF_THIS_THREAD.with(|p| p.set(shared as *const PoolShared as usize));
    let mut state = shared.lock();
    loop {
        if state.shutdown {
            return;
        }
        let Some((job, index)) = claim(&mut state, worker) else {
            let seen = shared.generation.load(Ordering::Acquire);
            drop(state);
            // A launch often follows the last one at once: look for it before sleeping.
            let _ = crate::event::poll_briefly(|| {
                (shared.generation.load(Ordering::Acquire) != seen).then_some(())
            });
            state = shared.lock();
            if shared.generation.load(Ordering::Acquire) == seen && !state.shutdown {
                state = shared.work.wait(state).unwrap_or_else(|p| p.into_inner());
            }
            continue;
        };
        drop(state);
        // SAFETY: the chunk was claimed and is not yet counted finished: the submitter is
        // still waiting in WorkerPool::run, so the task it points to is alive.
        let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| unsafe {
            (*job.task)(index)
        }));
        let failed = match outcome {
            Ok(Ok(())) => false,
            Ok(Err(f)) => {
                job.failure
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .get_or_insert(f);
                true
            }
            Err(payload) => {
                job.panic
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .get_or_insert(payload);
                true
            }
        };
        state = shared.lock();
        let mut finished = 1;
        if let Some(slot) = state.jobs.iter_mut().find(|s| Arc::ptr_eq(&s.job, &job)) {
            slot.active -= 1;
            if failed {
                // The chunks nobody started are skipped.
                finished += slot.left();
                slot.unclaimed.clear();
            }
        }
        state.jobs.retain(|s| s.left() > 0 || s.active > 0);
        // Counted under the lock, so a submitter about to sleep cannot miss the wake-up.
        if job.finished.fetch_add(finished, Ordering::AcqRel) + finished == job.chunks {
            shared.done.notify_all();
        }
    }
}

impl From<OutOfArena> for LaunchFailure {
    fn from(_: OutOfArena) -> Self {
        LaunchFailure::OutOfArena
    }
}

/// The stop word of launches without a watchdog: never set. Kernels built without stop checks
/// never read `GroupInfo::stop`; the address is valid anyway, so a kernel built with them could
/// never read through a null pointer.
static NEVER_STOP: AtomicU32 = AtomicU32::new(0);

/// A per-thread local-memory arena.
struct Arena {
    ptr: *mut u8,
    layout: Option<Layout>,
}

impl Arena {
    /// At least `size` bytes, aligned to LOCAL_ARG_ALIGN; grown (to a power of two, so a
    /// sequence of launches reallocates rarely) when too small.
    fn get(&mut self, size: usize) -> Result<*mut u8, OutOfArena> {
        let need = size.max(LOCAL_ARG_ALIGN);
        if self.layout.is_none_or(|l| l.size() < need) {
            self.free();
            let layout = need
                .checked_next_power_of_two()
                .and_then(|n| Layout::from_size_align(n, LOCAL_ARG_ALIGN).ok())
                .ok_or(OutOfArena)?;
            // SAFETY: non-zero size.
            let p = unsafe { std::alloc::alloc_zeroed(layout) };
            if p.is_null() {
                return Err(OutOfArena);
            }
            self.ptr = p;
            self.layout = Some(layout);
        }
        Ok(self.ptr)
    }

    fn free(&mut self) {
        if let Some(l) = self.layout.take() {
            // SAFETY: allocated in `get` with layout `l`.
            unsafe { std::alloc::dealloc(self.ptr, l) };
        }
    }
}

impl Drop for Arena {
    fn drop(&mut self) {
        self.free();
    }
}

thread_local! {
    static ARENA: RefCell<Arena> = const { RefCell::new(Arena { ptr: std::ptr::null_mut(), layout: None }) };
}

/// Sets the calling thread's SSE rounding control (MXCSR.RC) to round-toward-zero and restores
/// the previous MXCSR when dropped, so the mode never leaks into other work on the thread.
struct RoundingGuard {
    saved: u32,
}

impl RoundingGuard {
    const RC_MASK: u32 = 0b11 << 13;
    const RC_TOWARD_ZERO: u32 = 0b11 << 13;

    fn toward_zero() -> Self {
        let saved = read_mxcsr();
        write_mxcsr((saved & !Self::RC_MASK) | Self::RC_TOWARD_ZERO);
        RoundingGuard { saved }
    }
}

impl Drop for RoundingGuard {
    fn drop(&mut self) {
        write_mxcsr(self.saved);
    }
}

fn read_mxcsr() -> u32 {
    let mut v: u32 = 0;
    // SAFETY: stmxcsr stores the 32-bit MXCSR register into the local `v`.
    unsafe { std::arch::asm!("stmxcsr [{}]", in(reg) &mut v, options(nostack)) };
    v
}

fn write_mxcsr(v: u32) {
    // SAFETY: ldmxcsr loads a value read from MXCSR (possibly with only the rounding-control
    // bits changed) or KERNEL_MXCSR: no reserved bits set, so it cannot fault.
    unsafe { std::arch::asm!("ldmxcsr [{}]", in(reg) &v, options(nostack)) };
}

/// The `GroupInfo` of linear group `g`.
pub fn group_info(l: &Launch, g: usize) -> GroupInfo {
    let mut info = GroupInfo {
        work_dim: l.work_dim,
        printf_buffer: l.printf_buffer,
        local_mem_size: l.arena_size as u64,
        frames_size: l.frames_size as u64,
        stop: l.stop.as_ref().map_or(NEVER_STOP.as_ptr(), |s| s.as_ptr()) as u64,
        checked: l.checked,
        device_enqueue: l.device_enqueue,
        ..GroupInfo::default()
    };
    let mut rest = g;
    for d in 0..3 {
        let global = l.global[d].max(1) as u64;
        let local = l.local[d].max(1) as u64;
        let groups = global.div_ceil(local);
        let id = rest as u64 % groups;
        rest /= groups as usize;
        info.global_offset[d] = l.offset[d] as u64;
        info.global_size[d] = global;
        info.enqueued_local_size[d] = local;
        info.num_groups[d] = groups;
        info.group_id[d] = id;
        // Last group of a non-uniform range: the remainder.
        info.local_size[d] = local.min(global - id * local);
    }
    info
}

/// Moves `info` from its group to the next one in linear order (x fastest), as
/// `group_info(l, g + 1)` would compute it, without its divisions.
pub fn advance_group(info: &mut GroupInfo) {
    for d in 0..3 {
        info.group_id[d] += 1;
        if info.group_id[d] == info.num_groups[d] {
            info.group_id[d] = 0;
        }
        let local = info.enqueued_local_size[d];
        info.local_size[d] = local.min(info.global_size[d] - info.group_id[d] * local);
        if info.group_id[d] != 0 {
            return;
        }
    }
}

/// Work-groups handed to a worker at a time: enough chunks per thread for work stealing to
/// balance uneven groups, few enough that a chunk's setup (its first group's ids, the arena)
/// is paid rarely.
fn groups_per_chunk(groups: usize, threads: usize) -> usize {
    groups.div_ceil(threads.max(1) * 16).max(1)
}

pub fn group_count(l: &Launch) -> usize {
    (0..3)
        .map(|d| l.global[d].max(1).div_ceil(l.local[d].max(1)))
        .product()
}

/// Something that runs one work-group: the JIT kernel, or a stand-in in tests.
pub trait GroupRunner: Sync {
    /// # Safety
    /// As [`Kernel::run_group`].
    unsafe fn run_group(&self, args: *const u8, group: &GroupInfo, local_mem: *mut u8);
}

impl GroupRunner for Kernel {
    unsafe fn run_group(&self, args: *const u8, group: &GroupInfo, local_mem: *mut u8) {
        // SAFETY: forwarded contract.
        unsafe { Kernel::run_group(self, args, group, local_mem) }
    }
}

/// Runs every work-group of the launch on `pool` and returns when all have finished, or
/// when a worker could not get its arena (the groups of that worker's chunk do not run), or
/// when the launch's stop word is set (groups not yet started do not run).
pub fn run_ndrange<K: GroupRunner>(
    pool: &WorkerPool,
    hints: JobHints,
    kernel: &K,
    args: &ArgBlock,
    l: &Launch,
) -> Result<(), LaunchFailure> {
    if l.global[..l.work_dim as usize].contains(&0) {
        return Ok(()); // an empty range executes nothing (OpenCL 2.1+)
    }
    let groups = group_count(l);
    let args_ptr = args.as_ptr() as usize;
    // Groups first..last, in linear order, on the calling worker.
    let run_groups = |first: usize, last: usize| {
        let mut info = group_info(l, first);
        ARENA.with(|a| {
            let mut a = a.borrow_mut();
            let frames_offset = l.frames_offset();
            let mem = a.get(frames_offset.saturating_add(l.frames_size))?;
            let _rounding = l.round_to_zero.then(RoundingGuard::toward_zero);
            if l.frames_size > 0 {
                // SAFETY: the arena has frames_offset + frames_size bytes.
                info.frames = unsafe { mem.add(frames_offset) } as u64;
            }
            for g in first..last {
                if g > first {
                    advance_group(&mut info);
                }
                if l.stop
                    .as_ref()
                    .is_some_and(|s| s.load(Ordering::Relaxed) != 0)
                {
                    return Err(LaunchFailure::Stopped);
                }
                zero_group_memory(l, mem);
                // SAFETY: the argument block was filled per the kernel's ArgSlot layout and
                // the buffers it points to are kept alive by the command; the arena is this
                // thread's own, at least arena_size bytes and LOCAL_ARG_ALIGN-aligned,
                // followed by the frames the kernel asked for.
                unsafe { kernel.run_group(args_ptr as *const u8, &info, mem) };
            }
            Ok(())
        })
    };
    let items: usize = l.global[..l.work_dim as usize].iter().product();
    if groups == 1 || (RUNS_SMALL_LAUNCHES.get() && items <= SMALL_LAUNCH_ITEMS) {
        // Nothing to share: handing one group to the pool and waiting for it only adds a
        // cross-thread round trip to every small launch. A thread that waits for the launch
        // (on_calling_thread) runs a few groups itself for the same reason.
        run_groups(0, groups)
    } else {
        let per = groups_per_chunk(groups, pool.threads());
        pool.run(groups.div_ceil(per), hints, &|c| {
            run_groups(c * per, ((c + 1) * per).min(groups))
        })
    }
}

/// Zeroes what the context asks to be zeroed before a work-group of `l` runs in arena `mem`
/// (cl_khr_initialize_memory): every group starts from zeros, not from what the group before
/// it on this thread (of any context) left.
fn zero_group_memory(l: &Launch, mem: *mut u8) {
    if l.zero_memory.local && l.arena_size > 0 {
        // SAFETY: the arena has at least arena_size bytes, this thread's own.
        unsafe { std::ptr::write_bytes(mem, 0, l.arena_size) };
    }
    if l.zero_memory.private && l.frames_size > 0 {
        // SAFETY: the frames follow at frames_offset, frames_size bytes, this thread's own.
        unsafe { std::ptr::write_bytes(mem.add(l.frames_offset()), 0, l.frames_size) };
    }
}

/// The MXCSR every thread that runs kernels has: all exceptions masked, round to nearest, no
/// flush-to-zero or denormals-are-zero (codegen flushes f32 denormals per operation when the
/// device says so, and doubles keep theirs). `Launch::round_to_zero` changes the rounding
/// control per launch (RoundingGuard).
const KERNEL_MXCSR: u32 = 0x1f80;

/// Launches of at most this many work-items run all their groups on a thread that waits for
/// them ([`on_calling_thread`]) instead of on the pool: a few µs of work, less than a hand-over
/// to the workers and back costs on a loaded machine.
pub const SMALL_LAUNCH_ITEMS: usize = 1024;

thread_local! {
    /// The thread runs on a stack of at least KERNEL_THREAD_STACK_BYTES: a worker, a queue's
    /// thread, or a thread inside [`on_calling_thread`].
    static ON_KERNEL_STACK: Cell<bool> = const { Cell::new(false) };
    /// Inside [`on_calling_thread`]: small launches run here, not on the pool.
    static RUNS_SMALL_LAUNCHES: Cell<bool> = const { Cell::new(false) };
}

/// Called first by every thread the runtime starts to run commands or kernels (workers, queue
/// threads): it has a kernel-sized stack, and the kernels' floating-point environment, whatever
/// the thread that started it had (an application built with fast-math sets FTZ/DAZ in its
/// threads, which new threads inherit).
pub(crate) fn enter_kernel_thread() {
    ON_KERNEL_STACK.set(true);
    write_mxcsr(KERNEL_MXCSR);
}

/// Runs `f` on the calling thread as a worker would: with the workers' MXCSR (the caller's is
/// restored after), on a stack of KERNEL_THREAD_STACK_BYTES (a mapped one the thread switches
/// to when it is not a runtime thread: an application thread may have 8 MiB of stack or less,
/// and a kernel may keep 16 MiB of private memory on it), and running small launches itself.
/// None, without calling `f`, when this cannot be had (no memory for a stack, or the thread's
/// thread-locals are already destroyed: a call from an `atexit` handler): the caller then
/// leaves the work to the runtime's threads. A panic in `f` is resumed here.
pub(crate) fn on_calling_thread<R>(f: impl FnOnce() -> R) -> Option<R> {
    if !crate::live_thread::thread_locals_alive() {
        return None;
    }
    let saved = read_mxcsr();
    let small = RUNS_SMALL_LAUNCHES.replace(true);
    write_mxcsr(KERNEL_MXCSR);
    let out = if ON_KERNEL_STACK.get() {
        Some(std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)))
    } else {
        KernelStack::take().map(|stack| {
            let mut f = Some(f);
            let mut out = None;
            let mut body = || {
                ON_KERNEL_STACK.set(true);
                let f = f.take().expect("called once");
                out = Some(std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)));
                ON_KERNEL_STACK.set(false);
            };
            // SAFETY: the stack is mapped, unused by anyone else until given back below, and
            // `body` catches every panic, so nothing unwinds through the switch.
            unsafe { switch_stack(stack.top(), &mut body) };
            stack.give_back();
            out.expect("the body ran")
        })
    };
    RUNS_SMALL_LAUNCHES.set(small);
    write_mxcsr(saved);
    out.map(|r| r.unwrap_or_else(|payload| std::panic::resume_unwind(payload)))
}

/// A mapped stack of KERNEL_THREAD_STACK_BYTES below `STACK_HEADROOM` bytes of zeros, above a
/// guard page, for [`on_calling_thread`]. Pages are committed when touched; a few stacks are
/// kept for the next calls.
struct KernelStack {
    base: usize,
    len: usize,
}

/// Zeros above the first frame: an unwinder or debugger walking out of the switched-to stack
/// reads a null return address there and stops.
const STACK_HEADROOM: usize = 4096;
const GUARD: usize = 4096;
static SPARE_STACKS: Mutex<Vec<KernelStack>> = Mutex::new(Vec::new());

impl KernelStack {
    fn take() -> Option<KernelStack> {
        if let Some(s) = SPARE_STACKS.lock().unwrap_or_else(|p| p.into_inner()).pop() {
            return Some(s);
        }
        let len = GUARD + ferrocl_codegen::KERNEL_THREAD_STACK_BYTES + STACK_HEADROOM;
        // SAFETY: a new private anonymous mapping; no existing memory is affected.
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE | libc::MAP_STACK,
                -1,
                0,
            )
        };
        if p == libc::MAP_FAILED {
            return None;
        }
        let stack = KernelStack {
            base: p as usize,
            len,
        };
        // SAFETY: the first page of the mapping just made; an overflow faults there instead of
        // writing below the stack.
        if unsafe { libc::mprotect(p, GUARD, libc::PROT_NONE) } != 0 {
            return None; // dropped: unmapped
        }
        Some(stack)
    }

    /// The initial stack pointer: 16-byte aligned, below the headroom.
    fn top(&self) -> *mut u8 {
        (self.base + self.len - STACK_HEADROOM) as *mut u8
    }

    fn give_back(self) {
        let mut spare = SPARE_STACKS.lock().unwrap_or_else(|p| p.into_inner());
        if spare.len() < 4 {
            spare.push(self);
        }
    }
}

impl Drop for KernelStack {
    fn drop(&mut self) {
        // SAFETY: the whole mapping made in `take`, no longer in use.
        unsafe { libc::munmap(self.base as *mut libc::c_void, self.len) };
    }
}

/// Calls `body` with the stack pointer at `top`, then switches back.
///
/// # Safety
/// `top` is the 16-byte aligned end of a mapped stack nobody else uses, large enough for
/// `body`; `body` must not unwind.
#[inline(never)]
unsafe fn switch_stack(top: *mut u8, body: &mut dyn FnMut()) {
    extern "C" fn trampoline(body: *mut u8) {
        // SAFETY: `switch_stack` passes a pointer to its live `&mut dyn FnMut()`.
        unsafe { (*body.cast::<&mut dyn FnMut()>())() }
    }
    debug_assert_eq!(top as usize % 16, 0);
    let mut body = body;
    // SAFETY: r12 is callee-saved, so it holds the old stack pointer across the call; the new
    // stack is aligned as the ABI wants at a call; `trampoline` is an ordinary C-ABI function
    // (every caller-saved register is declared clobbered) that returns normally (a panic
    // escaping an extern "C" function aborts).
    unsafe {
        std::arch::asm!(
            "mov r12, rsp",
            "mov rsp, {top}",
            "call {trampoline}",
            "mov rsp, r12",
            top = in(reg) top,
            trampoline = sym trampoline,
            in("rdi") (&mut body as *mut &mut dyn FnMut()).cast::<u8>(),
            out("r12") _,
            clobber_abi("C"),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rounding_guard_sets_and_restores_mxcsr() {
        let before = read_mxcsr();
        {
            let _g = RoundingGuard::toward_zero();
            assert_eq!(
                read_mxcsr() & RoundingGuard::RC_MASK,
                RoundingGuard::RC_TOWARD_ZERO
            );
            let third = std::hint::black_box(1.0f32) / std::hint::black_box(3.0f32);
            assert_eq!(third.to_bits(), 0x3eaa_aaaa); // nearest would be 0x3eaaaaab
        }
        assert_eq!(read_mxcsr(), before);
    }

    /// Fills and sums `n` bytes of its own frame.
    #[inline(never)]
    fn deep<const N: usize>() -> u64 {
        let mut a = [0u8; N];
        for (i, b) in a.iter_mut().enumerate().step_by(4096) {
            *b = i as u8 | 1;
        }
        std::hint::black_box(&mut a);
        a.iter().map(|&b| b as u64).sum()
    }

    #[test]
    fn a_calling_thread_runs_with_the_workers_stack_and_mxcsr() {
        const FTZ_DAZ: u32 = (1 << 15) | (1 << 6);
        // A thread with a small stack (1 MiB) and an application's fast-math MXCSR.
        let caller = std::thread::Builder::new().stack_size(1 << 20).spawn(|| {
            let mine = read_mxcsr() | FTZ_DAZ;
            write_mxcsr(mine);
            let inside = on_calling_thread(|| {
                let mxcsr = read_mxcsr();
                // 12 MiB of frame: far beyond this thread's own stack.
                let sum = deep::<{ 12 << 20 }>();
                // Nested use stays on the same stack.
                let nested = on_calling_thread(|| ON_KERNEL_STACK.get()).unwrap();
                (mxcsr, sum, RUNS_SMALL_LAUNCHES.get(), nested)
            });
            let after = (
                read_mxcsr(),
                RUNS_SMALL_LAUNCHES.get(),
                ON_KERNEL_STACK.get(),
            );
            // A panic reaches the caller, on its own stack again.
            let caught = std::panic::catch_unwind(|| on_calling_thread(|| panic!("in a kernel")));
            (mine, inside, after, caught.is_err(), read_mxcsr())
        });
        let (mine, inside, after, panicked, last) = caller.unwrap().join().unwrap();
        let (mxcsr, sum, small, nested) = inside.expect("a stack could be mapped");
        assert_eq!(mxcsr, KERNEL_MXCSR);
        assert_eq!(sum, (12 << 20) / 4096);
        assert!(small && nested);
        assert_eq!(after, (mine, false, false));
        assert!(panicked);
        assert_eq!(last, mine);
    }

    #[test]
    fn a_calling_thread_runs_small_launches_itself() {
        // A pool whose one worker never gets to it: the groups run on the calling thread.
        let pool = WorkerPool::new("test-worker", 1, |_| {}).unwrap();
        let l = Launch {
            work_dim: 1,
            offset: [0, 0, 0],
            global: [64, 1, 1],
            local: [16, 1, 1],
            arena_size: 16,
            frames_size: 0,
            round_to_zero: false,
            zero_memory: Default::default(),
            printf_buffer: 0,
            stop: None,
            checked: 0,
            device_enqueue: 0,
        };
        struct Here(
            std::thread::ThreadId,
            std::sync::Mutex<Vec<std::thread::ThreadId>>,
        );
        impl GroupRunner for Here {
            unsafe fn run_group(&self, _: *const u8, _: &GroupInfo, _: *mut u8) {
                self.1.lock().unwrap().push(std::thread::current().id());
            }
        }
        let r = Here(std::thread::current().id(), Default::default());
        let block = ArgBlock::new(8);
        let ran = on_calling_thread(|| run_ndrange(&pool, JobHints::default(), &r, &block, &l));
        assert_eq!(ran, Some(Ok(())));
        assert_eq!(*r.1.lock().unwrap(), vec![r.0; 4]);
        // Outside, four groups go to the pool.
        r.1.lock().unwrap().clear();
        assert_eq!(
            run_ndrange(&pool, JobHints::default(), &r, &block, &l),
            Ok(())
        );
        assert!(r.1.lock().unwrap().iter().all(|t| *t != r.0));
    }

    #[test]
    fn non_uniform_last_group() {
        let l = Launch {
            work_dim: 2,
            offset: [5, 0, 0],
            global: [10, 3, 1],
            local: [4, 2, 1],
            arena_size: 0,
            frames_size: 0,
            round_to_zero: false,
            zero_memory: Default::default(),
            printf_buffer: 0,
            stop: None,
            checked: 0,
            device_enqueue: 0,
        };
        assert_eq!(group_count(&l), 3 * 2);
        let last = group_info(&l, 5);
        assert_eq!(last.group_id, [2, 1, 0]);
        assert_eq!(last.local_size, [2, 1, 1]);
        assert_eq!(last.enqueued_local_size, [4, 2, 1]);
        assert_eq!(last.num_groups, [3, 2, 1]);
        assert_eq!(last.global_offset, [5, 0, 0]);
        let first = group_info(&l, 0);
        assert_eq!(first.local_size, [4, 2, 1]);
    }

    #[test]
    fn advancing_a_group_matches_computing_it() {
        for (global, local) in [
            ([10, 3, 1], [4, 2, 1]),
            ([7, 5, 9], [3, 5, 2]),
            ([1, 1, 1], [1, 1, 1]),
            ([16, 1, 1], [16, 1, 1]),
        ] {
            let l = Launch {
                work_dim: 3,
                offset: [1, 2, 3],
                global,
                local,
                arena_size: 0,
                frames_size: 0,
                round_to_zero: false,
                zero_memory: Default::default(),
                printf_buffer: 0,
                stop: None,
                checked: 0,
                device_enqueue: 0,
            };
            let mut info = group_info(&l, 0);
            for g in 1..group_count(&l) {
                advance_group(&mut info);
                let want = group_info(&l, g);
                assert_eq!(
                    info.group_id, want.group_id,
                    "group {g} of {global:?}/{local:?}"
                );
                assert_eq!(info.local_size, want.local_size, "group {g}");
            }
        }
        assert_eq!(groups_per_chunk(65536, 2), 2048);
        assert_eq!(groups_per_chunk(3, 2), 1);
    }

    /// Records every group it is asked to run and writes its group id through the argument
    /// block's first pointer, checking the arena on the way.
    struct Recorder {
        arena: usize,
        seen: std::sync::Mutex<Vec<GroupInfo>>,
    }

    impl GroupRunner for Recorder {
        unsafe fn run_group(&self, args: *const u8, group: &GroupInfo, local_mem: *mut u8) {
            assert_eq!(args as usize % 16, 0);
            assert_eq!(local_mem as usize % LOCAL_ARG_ALIGN, 0);
            // SAFETY: the arena has at least `arena` bytes for this thread alone.
            unsafe { std::ptr::write_bytes(local_mem, 0xab, self.arena) };
            // SAFETY: the test put a pointer to a u32 array with one slot per group first.
            unsafe {
                let out = *(args as *const *mut u32);
                let linear = group.group_id[0] + group.group_id[1] * group.num_groups[0];
                *out.add(linear as usize) = (group.local_size[0] * group.local_size[1]) as u32;
            }
            self.seen.lock().unwrap().push(*group);
        }
    }

    #[test]
    fn every_group_runs_once_with_its_size() {
        let pool = WorkerPool::new("test-worker", 2, |_| {}).unwrap();
        let l = Launch {
            work_dim: 2,
            offset: [0, 0, 0],
            global: [10, 7, 1],
            local: [4, 3, 1],
            arena_size: 1000,
            frames_size: 0,
            round_to_zero: false,
            zero_memory: Default::default(),
            printf_buffer: 0,
            stop: None,
            checked: 0,
            device_enqueue: 0,
        };
        let mut out = vec![0u32; group_count(&l)];
        let mut block = ArgBlock::new(8);
        block.write(0, 8, &(out.as_mut_ptr() as u64).to_ne_bytes());
        let r = Recorder {
            arena: 1000,
            seen: Default::default(),
        };
        assert_eq!(
            run_ndrange(&pool, JobHints::default(), &r, &block, &l),
            Ok(())
        );
        assert_eq!(r.seen.lock().unwrap().len(), 9);
        // Groups along x: 4, 4, 2 items; along y: 3, 3, 1.
        assert_eq!(out, [12, 12, 6, 12, 12, 6, 4, 4, 2]);
        let total: u32 = out.iter().sum();
        assert_eq!(total, 70);
    }

    #[test]
    fn an_arena_the_host_cannot_give_fails_the_launch() {
        let pool = WorkerPool::new("test-worker", 2, |_| {}).unwrap();
        let l = Launch {
            work_dim: 1,
            offset: [0, 0, 0],
            global: [8, 1, 1],
            local: [4, 1, 1],
            arena_size: 64,
            frames_size: 1 << 60,
            round_to_zero: false,
            zero_memory: Default::default(),
            printf_buffer: 0,
            stop: None,
            checked: 0,
            device_enqueue: 0,
        };
        let r = Recorder {
            arena: 64,
            seen: Default::default(),
        };
        let block = ArgBlock::new(8);
        assert_eq!(
            run_ndrange(&pool, JobHints::default(), &r, &block, &l),
            Err(LaunchFailure::OutOfArena)
        );
        assert!(r.seen.lock().unwrap().is_empty());
    }

    /// Sets the launch's stop word in its first group, as the watchdog would mid-launch.
    struct Stopper {
        stop: Arc<AtomicU32>,
        ran: std::sync::atomic::AtomicUsize,
    }

    impl GroupRunner for Stopper {
        unsafe fn run_group(&self, _: *const u8, group: &GroupInfo, _: *mut u8) {
            assert_eq!(group.stop, self.stop.as_ptr() as u64);
            self.ran.fetch_add(1, Ordering::Relaxed);
            self.stop.store(1, Ordering::Relaxed);
        }
    }

    #[test]
    fn a_set_stop_word_starts_no_more_groups() {
        let pool = WorkerPool::new("test-worker", 2, |_| {}).unwrap();
        let stop = Arc::new(AtomicU32::new(0));
        let l = Launch {
            work_dim: 1,
            offset: [0, 0, 0],
            global: [4096, 1, 1],
            local: [4, 1, 1],
            arena_size: 0,
            frames_size: 0,
            round_to_zero: false,
            zero_memory: Default::default(),
            printf_buffer: 0,
            stop: Some(stop.clone()),
            checked: 0,
            device_enqueue: 0,
        };
        let r = Stopper {
            stop,
            ran: Default::default(),
        };
        let block = ArgBlock::new(8);
        assert_eq!(
            run_ndrange(&pool, JobHints::default(), &r, &block, &l),
            Err(LaunchFailure::Stopped)
        );
        // Each worker may have started one group before it saw the word.
        assert!(r.ran.load(Ordering::Relaxed) <= 2);
        // Without a watchdog the word JIT code would read is valid and never set.
        let never = group_info(&Launch { stop: None, ..l }, 0).stop;
        // SAFETY: the address of NEVER_STOP, a static AtomicU32.
        assert_eq!(
            unsafe { &*(never as *const AtomicU32) }.load(Ordering::Relaxed),
            0
        );
    }

    /// Spins until `ready` or a minute passed (a hang becomes a failure).
    fn wait_for(ready: impl Fn() -> bool) -> bool {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
        while !ready() {
            if std::time::Instant::now() > deadline {
                return false;
            }
            std::thread::yield_now();
        }
        true
    }

    #[test]
    fn a_small_job_is_not_stuck_behind_a_large_one() {
        let pool = WorkerPool::new("test-worker", 1, |_| {}).unwrap();
        let large_ran = std::sync::atomic::AtomicUsize::new(0);
        let seen_by_small = std::sync::atomic::AtomicUsize::new(usize::MAX);
        const LARGE: usize = 10_000;
        std::thread::scope(|s| {
            s.spawn(|| {
                pool.run(LARGE, JobHints::default(), &|i| {
                    // The second chunk waits until the small job is in the pool too.
                    if i == 1 && !wait_for(|| pool.jobs() == 2) {
                        return Err(LaunchFailure::Stopped);
                    }
                    large_ran.fetch_add(1, Ordering::AcqRel);
                    Ok(())
                })
            });
            assert!(wait_for(|| large_ran.load(Ordering::Acquire) > 0));
            pool.run(1, JobHints::default(), &|_| {
                seen_by_small.store(large_ran.load(Ordering::Acquire), Ordering::Release);
                Ok(())
            })
            .unwrap();
        });
        assert_eq!(large_ran.load(Ordering::Acquire), LARGE);
        let seen = seen_by_small.load(Ordering::Acquire);
        assert!(
            seen < 4,
            "the small job ran after {seen} chunks of the large one"
        );
    }

    #[test]
    fn higher_priority_jobs_go_first_and_throttled_jobs_use_fewer_workers() {
        let pool = WorkerPool::new("test-worker", 1, |_| {}).unwrap();
        let order = Mutex::new(Vec::new());
        let hints = |priority| JobHints {
            priority,
            max_workers: 0,
        };
        let holding = std::sync::atomic::AtomicBool::new(false);
        std::thread::scope(|s| {
            // The one worker is held until both jobs are waiting. They are submitted only once
            // it runs the holding chunk: a worker that woke late would otherwise take the
            // high-priority job first and never see three jobs.
            s.spawn(|| {
                pool.run(1, JobHints::default(), &|_| {
                    holding.store(true, Ordering::Release);
                    assert!(wait_for(|| pool.jobs() == 3));
                    Ok(())
                })
            });
            assert!(wait_for(|| holding.load(Ordering::Acquire)));
            for (priority, name) in [(Priority::Low, "low"), (Priority::High, "high")] {
                let order = &order;
                let pool = &pool;
                s.spawn(move || {
                    pool.run(5, hints(priority), &|_| {
                        order.lock().unwrap().push(name);
                        Ok(())
                    })
                });
            }
        });
        let order = order.into_inner().unwrap();
        assert_eq!(order, [["high"; 5], ["low"; 5]].concat());

        let pool = WorkerPool::new("test-worker", 2, |_| {}).unwrap();
        let (now, most) = (AtomicUsize::new(0), AtomicUsize::new(0));
        let throttled = JobHints {
            priority: Priority::Medium,
            max_workers: 1,
        };
        pool.run(64, throttled, &|_| {
            let n = now.fetch_add(1, Ordering::AcqRel) + 1;
            most.fetch_max(n, Ordering::AcqRel);
            std::thread::yield_now();
            now.fetch_sub(1, Ordering::AcqRel);
            Ok(())
        })
        .unwrap();
        assert_eq!(most.load(Ordering::Acquire), 1);
    }

    #[test]
    fn a_panicking_chunk_is_resumed_by_the_submitter_and_the_pool_goes_on() {
        let pool = WorkerPool::new("test-worker", 2, |_| {}).unwrap();
        let caught = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            pool.run(100, JobHints::default(), &|i| {
                assert_ne!(i, 7, "chunk 7 panics");
                Ok(())
            })
        }));
        assert!(caught.is_err());
        let ran = AtomicUsize::new(0);
        pool.run(10, JobHints::default(), &|_| {
            ran.fetch_add(1, Ordering::AcqRel);
            Ok(())
        })
        .unwrap();
        assert_eq!(ran.load(Ordering::Acquire), 10);
    }

    #[test]
    fn each_worker_streams_through_its_own_part_then_helps() {
        static NOTHING: fn(usize) -> Result<(), LaunchFailure> = |_| Ok(());
        let job = Arc::new(JobShared {
            task: &NOTHING as &Task<'static> as *const Task<'static>,
            chunks: 10,
            hints: JobHints::default(),
            finished: AtomicUsize::new(0),
            failure: Mutex::new(None),
            panic: Mutex::new(None),
        });
        let mut slot = Slot::new(job, 2);
        let taken: Vec<_> = [0, 1, 0, 1, 1, 1, 1, 1, 1, 0, 0]
            .iter()
            .map(|&w| slot.take(w))
            .collect();
        // Worker 1 finishes 5..10 and then takes worker 0's chunks from the back.
        let want = [0, 5, 1, 6, 7, 8, 9, 4, 3, 2].map(Some);
        assert_eq!(taken[..10], want);
        assert_eq!(taken[10], None);
        assert_eq!(slot.left(), 0);
    }

    #[test]
    fn arg_block_alignment() {
        let mut b = ArgBlock::new(20);
        assert_eq!(b.as_ptr() as usize % 16, 0);
        b.write(8, 8, &7u64.to_ne_bytes());
        b.write(16, 4, &[1, 2, 3, 4, 5]);
        // SAFETY: 32 bytes backing.
        let s = unsafe { std::slice::from_raw_parts(b.as_ptr(), 20) };
        assert_eq!(&s[8..16], &7u64.to_ne_bytes());
        assert_eq!(&s[16..20], &[1, 2, 3, 4]);
    }
}
