//! Command queues. An in-order queue has a thread that runs its commands in submission order:
//! it waits for each command's event wait list, runs the command
//! ([`crate::command::Command`]) and completes its event. An out-of-order queue runs each
//! command as soon as its wait list (and the barriers and markers before it, as the spec orders
//! them) is complete, on a few runner threads of its own, so independent commands run at the
//! same time and share the device's workers (crate::executor). A drop guard marks the event
//! failed if a command panics, so no waiter hangs.
//!
//! A thread that waits for a command's event (`clFinish`, `clWaitForEvents`, a blocking read or
//! map) runs the commands it waits for itself when they are ready ([`Queue::help`]): in an
//! in-order queue the commands at the front up to the awaited one, one at a time as the queue's
//! thread would (the two take turns through `Line::running`); in an out-of-order queue the
//! awaited command once its dependencies ended, taken from its runners. Its wait then does not
//! depend on another thread being scheduled. Commands whose event has application callbacks,
//! and SVM frees with a callback, are left to the queue's threads: an application may hold a
//! lock around its wait that its callback takes.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::mpsc::{channel, Receiver, Sender};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, Weak};

use opencl_sys::*;

use crate::command::Command;
use crate::context::Context;
use crate::event::{wait_all, Event};
use crate::executor::JobHints;
use crate::object::{Base, CLResult, Tag};
use crate::platform::Device;

/// What the worker runs for one submitted command (tests submit closures directly).
type Work = Box<dyn FnOnce() -> CLResult<()> + Send>;

struct Pending {
    event: Arc<Event>,
    wait: Vec<Arc<Event>>,
    work: Work,
}

#[repr(C)]
pub struct Queue {
    base: Base,
    pub context: Arc<Context>,
    pub device: Arc<Device>,
    pub properties: cl_command_queue_properties,
    /// As given to clCreateCommandQueueWithProperties (CL_QUEUE_PROPERTIES_ARRAY).
    pub properties_array: Vec<cl_queue_properties>,
    /// How its commands share the device's workers with other queues' (priority, throttle).
    pub hints: JobHints,
    mode: Mode,
}
crate::cl_object!(Queue, Queue, CL_INVALID_COMMAND_QUEUE);

enum Mode {
    InOrder {
        line: Arc<Line>,
        /// The most recently enqueued command's event: clFinish waits for it. Weak, because
        /// events hold their queue (a strong reference here would be a cycle); a pending
        /// command holds its event, so a dead Weak means that command already finished.
        last: Mutex<Weak<Event>>,
    },
    OutOfOrder {
        order: Mutex<Order>,
        runners: Arc<Runners>,
    },
}

/// What orders the commands of an out-of-order queue besides their wait lists.
#[derive(Default)]
struct Order {
    /// Commands not known to be finished (pruned at each enqueue): a marker or barrier
    /// without a wait list waits for all of them, clFinish too.
    outstanding: Vec<Weak<Event>>,
    /// The last barrier: every later command waits for it.
    barrier: Weak<Event>,
}

/// The commands of an in-order queue not yet taken, shared by its thread and the threads that
/// wait for them.
struct Line {
    state: Mutex<LineState>,
    /// The queue's thread sleeps here.
    wake: Condvar,
    /// Bumped at every enqueue: the queue's thread polls it for a while before it sleeps.
    enqueued: AtomicU64,
}

struct LineState {
    pending: VecDeque<Pending>,
    /// A thread (the queue's or a waiter) took a command and has not finished it: the next
    /// waits, whoever takes it.
    running: bool,
    /// The queue's thread is asleep on `Line::wake`.
    sleeping: bool,
    /// The queue is gone: its thread ends once `pending` is empty.
    closed: bool,
}

impl Line {
    fn lock(&self) -> MutexGuard<'_, LineState> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The front command, taken by the calling thread.
    fn take_front(state: &mut LineState) -> Option<Pending> {
        if state.running {
            return None;
        }
        let cmd = state.pending.pop_front()?;
        state.running = true;
        Some(cmd)
    }

    /// The command taken last is over; wakes the queue's thread for the rest if it sleeps.
    fn release(&self) {
        let mut state = self.lock();
        state.running = false;
        if state.sleeping && !state.pending.is_empty() {
            self.wake.notify_one();
        }
    }

    /// Runs the front commands on this thread while they are ready, up to `target`
    /// (`Queue::help`).
    fn run_until(&self, target: &Event) {
        loop {
            let cmd = {
                let mut state = self.lock();
                // Checked under the lock: a thread that finished `target` completed its event
                // before it released `running`, so nothing after `target` runs here.
                if target.is_terminal() || !state.pending.front().is_some_and(Pending::ready) {
                    return;
                }
                match Line::take_front(&mut state) {
                    Some(cmd) => cmd,
                    None => return,
                }
            };
            let last = std::ptr::eq(Arc::as_ptr(&cmd.event), target);
            let Pending { event, wait, work } = cmd;
            execute(&event, wait_all(&wait), work);
            drop((event, wait));
            self.release();
            if last {
                return;
            }
        }
    }
}

impl Pending {
    /// Whether a waiting thread may run it now: its wait list is over, and it calls nothing of
    /// the application's (see the module comment).
    fn ready(&self) -> bool {
        self.wait.iter().all(|e| e.is_terminal()) && helpable(&self.event)
    }
}

/// Whether a waiting thread may run the command of `event` (its dependencies aside).
fn helpable(event: &Event) -> bool {
    event.command_type != CL_COMMAND_SVM_FREE as cl_command_type && !event.has_callbacks()
}

/// A command of an out-of-order queue waiting for its dependencies.
pub(crate) struct Scheduled {
    pending: Mutex<Option<(Arc<Event>, Work)>>,
    /// Dependencies not yet ended, plus one held by the enqueue until all are registered.
    remaining: AtomicUsize,
    /// An event of its wait list failed.
    failed: AtomicBool,
}

impl Scheduled {
    /// How its wait list ended, once `remaining` is 0.
    fn waited(&self) -> CLResult<()> {
        if self.failed.load(Ordering::Acquire) {
            Err(CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST)
        } else {
            Ok(())
        }
    }
}

enum RunnerMessage {
    Run(Arc<Scheduled>),
    Quit,
}

/// The runner threads of an out-of-order queue, started as commands become ready at once.
struct Runners {
    sender: Mutex<Sender<RunnerMessage>>,
    receiver: Arc<Mutex<Receiver<RunnerMessage>>>,
    started: AtomicUsize,
    /// Runners waiting for a command.
    idle: Arc<AtomicUsize>,
    /// Commands sent and not yet taken: one more than there are idle runners starts a runner
    /// (two commands ready at once must not wait for one idle runner in turn).
    waiting: Arc<AtomicUsize>,
    /// More runners than the device has workers (plus a copy or two) would only queue up.
    max: usize,
}

impl Runners {
    fn ready(&self, command: Arc<Scheduled>) {
        self.waiting.fetch_add(1, Ordering::AcqRel);
        let sent = self
            .sender
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .send(RunnerMessage::Run(command));
        if sent.is_ok() && self.waiting.load(Ordering::Acquire) > self.idle.load(Ordering::Acquire)
        {
            self.start_one();
        }
    }

    fn start_one(&self) {
        let n = self.started.load(Ordering::Acquire);
        if n >= self.max
            || self
                .started
                .compare_exchange(n, n + 1, Ordering::AcqRel, Ordering::Acquire)
                .is_err()
        {
            return;
        }
        let receiver = self.receiver.clone();
        let idle = self.idle.clone();
        let waiting = self.waiting.clone();
        let spawned = std::thread::Builder::new()
            .name("ferrocl-queue-runner".into())
            // A launch of one work-group runs on this thread (executor::run_ndrange), with the
            // kernel's private memory on its stack.
            .stack_size(ferrocl_codegen::KERNEL_THREAD_STACK_BYTES)
            .spawn(move || {
                crate::executor::enter_kernel_thread();
                run_ready(&receiver, &idle, &waiting)
            });
        if spawned.is_err() {
            // The runners already there will take the command.
            self.started.fetch_sub(1, Ordering::AcqRel);
        }
    }
}

/// A runner's life: take a ready command, run it, until the queue goes away.
fn run_ready(receiver: &Mutex<Receiver<RunnerMessage>>, idle: &AtomicUsize, waiting: &AtomicUsize) {
    loop {
        idle.fetch_add(1, Ordering::AcqRel);
        let message = receiver.lock().unwrap_or_else(|p| p.into_inner()).recv();
        idle.fetch_sub(1, Ordering::AcqRel);
        let Ok(RunnerMessage::Run(command)) = message else {
            return;
        };
        waiting.fetch_sub(1, Ordering::AcqRel);
        let taken = command
            .pending
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .take();
        if let Some((event, work)) = taken {
            execute(&event, command.waited(), work);
        }
    }
}

/// Marks the in-flight event failed unless disarmed (when the command panics or the worker
/// unwinds).
struct FailGuard(Option<Arc<Event>>);

impl Drop for FailGuard {
    fn drop(&mut self) {
        if let Some(e) = self.0.take() {
            e.set_status(CL_OUT_OF_RESOURCES);
        }
    }
}

/// Runs one command whose wait list ended with `waited` and completes its event.
fn execute(event: &Arc<Event>, waited: CLResult<()>, work: Work) {
    if event.is_terminal() {
        // Ended before it ran: its context was terminated (termination.rs).
        return;
    }
    let mut guard = FailGuard(Some(event.clone()));
    let status = match waited {
        Err(e) => e,
        Ok(()) => {
            event.set_status(CL_RUNNING);
            match std::panic::catch_unwind(std::panic::AssertUnwindSafe(work)) {
                Ok(Ok(())) => CL_COMPLETE,
                Ok(Err(e)) => e.min(-1),
                Err(_) => CL_OUT_OF_RESOURCES,
            }
        }
    };
    guard.0 = None;
    event.set_status(status);
}

/// The life of an in-order queue's thread: take the front command when no waiting thread runs
/// one, run it, until the queue is gone. After a command of its own it polls a short while for
/// the next (an application that does not wait enqueues the next right away) before it
/// sleeps; woken for a command a waiter took, it sleeps again at once.
fn in_order_worker(line: Arc<Line>) {
    crate::executor::enter_kernel_thread();
    let mut ran = false;
    let mut state = line.lock();
    loop {
        if let Some(cmd) = Line::take_front(&mut state) {
            drop(state);
            let Pending { event, wait, work } = cmd;
            execute(&event, wait_all(&wait), work);
            drop((event, wait));
            // Released and the next taken under one lock: an application enqueueing without
            // waiting contends for it with every command.
            state = line.lock();
            state.running = false;
            ran = true;
            continue;
        }
        if state.closed && state.pending.is_empty() {
            return;
        }
        if std::mem::take(&mut ran) && !state.running {
            let seen = line.enqueued.load(Ordering::Acquire);
            drop(state);
            let _ = crate::event::poll_briefly(|| {
                (line.enqueued.load(Ordering::Acquire) != seen).then_some(())
            });
            state = line.lock();
            continue;
        }
        state.sleeping = true;
        state = line.wake.wait(state).unwrap_or_else(|p| p.into_inner());
        state.sleeping = false;
    }
}

/// Counts one dependency of `command` as ended; the last makes it ready.
fn dependency_ended(command: &Arc<Scheduled>, runners: &Runners) {
    if command.remaining.fetch_sub(1, Ordering::AcqRel) == 1 {
        runners.ready(command.clone());
    }
}

impl Queue {
    pub fn new(
        context: Arc<Context>,
        device: Arc<Device>,
        properties: cl_command_queue_properties,
        properties_array: Vec<cl_queue_properties>,
        hints: JobHints,
    ) -> CLResult<Arc<Queue>> {
        let out_of_order =
            properties & CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE as cl_command_queue_properties != 0;
        let mode = if out_of_order {
            let (sender, receiver) = channel();
            Mode::OutOfOrder {
                order: Mutex::new(Order::default()),
                runners: Arc::new(Runners {
                    sender: Mutex::new(sender),
                    receiver: Arc::new(Mutex::new(receiver)),
                    started: AtomicUsize::new(0),
                    idle: Arc::new(AtomicUsize::new(0)),
                    waiting: Arc::new(AtomicUsize::new(0)),
                    max: device.pool.threads() + 2,
                }),
            }
        } else {
            let line = Arc::new(Line {
                state: Mutex::new(LineState {
                    pending: VecDeque::new(),
                    running: false,
                    sleeping: false,
                    closed: false,
                }),
                wake: Condvar::new(),
                enqueued: AtomicU64::new(0),
            });
            let for_thread = line.clone();
            std::thread::Builder::new()
                .name("ferrocl-queue".into())
                // A launch of one work-group runs on this thread (executor::run_ndrange), with
                // the kernel's private memory on its stack.
                .stack_size(ferrocl_codegen::KERNEL_THREAD_STACK_BYTES)
                .spawn(move || in_order_worker(for_thread))
                .map_err(|_| CL_OUT_OF_HOST_MEMORY)?;
            Mode::InOrder {
                line,
                last: Mutex::new(Weak::new()),
            }
        };
        Ok(Arc::new(Queue {
            base: Base::new(Tag::Queue),
            context,
            device,
            properties,
            properties_array,
            hints,
            mode,
        }))
    }

    pub fn profiling(&self) -> bool {
        self.properties & CL_QUEUE_PROFILING_ENABLE as cl_command_queue_properties != 0
    }

    /// Submits `command` to run after `wait` completes; returns its event (already submitted:
    /// every enqueue is an implicit flush).
    pub fn submit(
        self: &Arc<Self>,
        command: Command,
        wait: Vec<Arc<Event>>,
    ) -> CLResult<Arc<Event>> {
        let device = self.device.clone();
        let hints = self.hints;
        self.enqueue(
            command.command_type(),
            wait,
            Box::new(move || command.run(&device, hints)),
        )
    }

    fn enqueue(
        self: &Arc<Self>,
        command_type: cl_command_type,
        wait: Vec<Arc<Event>>,
        work: Work,
    ) -> CLResult<Arc<Event>> {
        // cl_khr_terminate_context: a terminated context takes no more commands.
        self.context.check_live()?;
        let event = Event::new_command(self, command_type);
        event.set_status(CL_SUBMITTED);
        match &self.mode {
            Mode::InOrder { line, last } => {
                let mut last = last.lock().unwrap_or_else(|p| p.into_inner());
                let cmd = Pending {
                    event: event.clone(),
                    wait,
                    work,
                };
                let mut state = line.lock();
                state.pending.push_back(cmd);
                line.enqueued.fetch_add(1, Ordering::Release);
                if state.sleeping && !state.running {
                    line.wake.notify_one();
                }
                drop(state);
                *last = Arc::downgrade(&event);
            }
            Mode::OutOfOrder { order, runners } => {
                let ordered_after = {
                    let mut order = order.lock().unwrap_or_else(|p| p.into_inner());
                    order
                        .outstanding
                        .retain(|w| w.upgrade().is_some_and(|e| e.status() > CL_COMPLETE));
                    let mut after: Vec<Arc<Event>> = order.barrier.upgrade().into_iter().collect();
                    let sync = command_type == CL_COMMAND_MARKER as cl_command_type
                        || command_type == CL_COMMAND_BARRIER as cl_command_type;
                    if sync && wait.is_empty() {
                        // "Waits for all commands previously enqueued" (spec).
                        after.extend(order.outstanding.iter().filter_map(Weak::upgrade));
                    }
                    if command_type == CL_COMMAND_BARRIER as cl_command_type {
                        order.barrier = Arc::downgrade(&event);
                    }
                    order.outstanding.push(Arc::downgrade(&event));
                    after
                };
                let command = Arc::new(Scheduled {
                    pending: Mutex::new(Some((event.clone(), work))),
                    remaining: AtomicUsize::new(wait.len() + ordered_after.len() + 1),
                    failed: AtomicBool::new(false),
                });
                let _ = event.scheduled.set(Arc::downgrade(&command));
                // A failed wait-list event fails the command (spec); the implicit order only
                // orders it.
                for (dependency, fails) in wait
                    .iter()
                    .map(|e| (e, true))
                    .chain(ordered_after.iter().map(|e| (e, false)))
                {
                    let command = command.clone();
                    let runners = runners.clone();
                    dependency.on_end(Box::new(move |status| {
                        if fails && status < 0 {
                            command.failed.store(true, Ordering::Release);
                        }
                        dependency_ended(&command, &runners);
                    }));
                }
                dependency_ended(&command, runners);
            }
        }
        Ok(event)
    }

    /// Runs what `target` (an event of this queue, not yet over) waits for on the calling
    /// thread, as far as it is ready (see the module comment): the caller then waits for the
    /// event as usual, which is over unless a command was not ready or another thread runs
    /// one.
    pub(crate) fn help(&self, target: &Event) {
        match &self.mode {
            Mode::InOrder { line, .. } => {
                let front_ready = {
                    let state = line.lock();
                    !state.running && state.pending.front().is_some_and(Pending::ready)
                };
                if front_ready {
                    let _ = crate::executor::on_calling_thread(|| line.run_until(target));
                }
            }
            Mode::OutOfOrder { .. } => {
                let Some(command) = target.scheduled.get().and_then(Weak::upgrade) else {
                    return;
                };
                if command.remaining.load(Ordering::Acquire) != 0 || !helpable(target) {
                    return;
                }
                let _ = crate::executor::on_calling_thread(|| {
                    // Taken here, it is skipped by the runner its message reaches.
                    let taken = command
                        .pending
                        .lock()
                        .unwrap_or_else(|p| p.into_inner())
                        .take();
                    if let Some((event, work)) = taken {
                        execute(&event, command.waited(), work);
                    }
                });
            }
        }
    }

    /// Waits until every command enqueued so far has finished.
    pub fn finish(&self) {
        match &self.mode {
            Mode::InOrder { last, .. } => {
                let last = last.lock().unwrap_or_else(|p| p.into_inner()).upgrade();
                if let Some(e) = last {
                    e.wait();
                }
            }
            Mode::OutOfOrder { order, .. } => {
                let outstanding: Vec<Arc<Event>> = order
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .outstanding
                    .iter()
                    .filter_map(Weak::upgrade)
                    .collect();
                for e in outstanding {
                    e.wait();
                }
            }
        }
    }
}

impl Drop for Queue {
    fn drop(&mut self) {
        // Every command holds its event and every event its queue: nothing is pending now.
        match &self.mode {
            Mode::OutOfOrder { runners, .. } => {
                let sender = runners.sender.lock().unwrap_or_else(|p| p.into_inner());
                for _ in 0..runners.started.load(Ordering::Acquire) {
                    let _ = sender.send(RunnerMessage::Quit);
                }
            }
            Mode::InOrder { line, .. } => {
                line.lock().closed = true;
                line.wake.notify_one();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::platform::platform;

    fn queue() -> Arc<Queue> {
        let d = platform().devices[0].clone();
        let c = Context::new(vec![d.clone()], Vec::new());
        Queue::new(c, d, 0, Vec::new(), JobHints::default()).unwrap()
    }

    fn out_of_order_queue() -> Arc<Queue> {
        let d = platform().devices[0].clone();
        let c = Context::new(vec![d.clone()], Vec::new());
        let props = CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE as cl_command_queue_properties;
        Queue::new(c, d, props, Vec::new(), JobHints::default()).unwrap()
    }

    /// Work that logs `name` when it runs.
    fn logged(log: &Arc<Mutex<Vec<&'static str>>>, name: &'static str) -> Work {
        let log = log.clone();
        Box::new(move || {
            log.lock().unwrap().push(name);
            Ok(())
        })
    }

    const MARKER: cl_command_type = CL_COMMAND_MARKER as cl_command_type;
    const BARRIER: cl_command_type = CL_COMMAND_BARRIER as cl_command_type;
    const KERNEL: cl_command_type = CL_COMMAND_NDRANGE_KERNEL as cl_command_type;

    #[test]
    fn out_of_order_commands_run_at_the_same_time() {
        let q = out_of_order_queue();
        let arrived = Arc::new(AtomicUsize::new(0));
        // Each command waits for the other to have started: only concurrent commands meet (a
        // deadline turns a hang into a failure).
        let meet = || -> Work {
            let arrived = arrived.clone();
            Box::new(move || {
                arrived.fetch_add(1, Ordering::AcqRel);
                let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
                while arrived.load(Ordering::Acquire) < 2 {
                    if std::time::Instant::now() > deadline {
                        return Err(CL_OUT_OF_RESOURCES);
                    }
                    std::thread::yield_now();
                }
                Ok(())
            })
        };
        let a = q.enqueue(KERNEL, Vec::new(), meet()).unwrap();
        let b = q.enqueue(KERNEL, Vec::new(), meet()).unwrap();
        assert_eq!(a.wait(), CL_COMPLETE);
        assert_eq!(b.wait(), CL_COMPLETE);
        // Two commands made ready by one event while the queue's one runner is idle: they
        // still run at once.
        arrived.store(0, Ordering::Release);
        let q = out_of_order_queue();
        let warm_up = q.enqueue(KERNEL, Vec::new(), Box::new(|| Ok(()))).unwrap();
        assert_eq!(warm_up.wait(), CL_COMPLETE);
        std::thread::sleep(std::time::Duration::from_millis(20));
        let gate = Event::new_user(q.context.clone());
        let c = q.enqueue(KERNEL, vec![gate.clone()], meet()).unwrap();
        let d = q.enqueue(KERNEL, vec![gate.clone()], meet()).unwrap();
        gate.set_user_status(CL_COMPLETE).unwrap();
        assert_eq!(c.wait(), CL_COMPLETE);
        assert_eq!(d.wait(), CL_COMPLETE);
    }

    #[test]
    fn out_of_order_barriers_and_markers_order_as_the_spec_says() {
        let q = out_of_order_queue();
        let log = Arc::new(Mutex::new(Vec::new()));
        let gate = Event::new_user(q.context.clone());
        let a = q
            .enqueue(KERNEL, vec![gate.clone()], logged(&log, "a"))
            .unwrap();
        // A marker without a wait list waits for everything before it, and holds nothing up.
        let marker = q
            .enqueue(MARKER, Vec::new(), logged(&log, "marker"))
            .unwrap();
        let free = q.enqueue(KERNEL, Vec::new(), logged(&log, "free")).unwrap();
        assert_eq!(free.wait(), CL_COMPLETE);
        std::thread::sleep(std::time::Duration::from_millis(20));
        assert!(marker.status() > CL_COMPLETE && a.status() > CL_COMPLETE);
        // A barrier with a wait list waits for that list only, and holds every later command.
        let other_gate = Event::new_user(q.context.clone());
        let barrier = q
            .enqueue(BARRIER, vec![other_gate.clone()], logged(&log, "barrier"))
            .unwrap();
        let after = q
            .enqueue(KERNEL, Vec::new(), logged(&log, "after"))
            .unwrap();
        // A marker without a wait list after the barrier still waits for `a`.
        let last_marker = q.enqueue(MARKER, Vec::new(), logged(&log, "last")).unwrap();
        std::thread::sleep(std::time::Duration::from_millis(20));
        assert!(after.status() > CL_COMPLETE, "held by the barrier");
        other_gate.set_user_status(CL_COMPLETE).unwrap();
        assert_eq!(after.wait(), CL_COMPLETE);
        assert_eq!(barrier.status(), CL_COMPLETE);
        assert!(last_marker.status() > CL_COMPLETE, "still waits for a");
        gate.set_user_status(CL_COMPLETE).unwrap();
        q.finish();
        for e in [&a, &marker, &last_marker] {
            assert_eq!(e.status(), CL_COMPLETE);
        }
        let log = log.lock().unwrap().clone();
        let at = |n| log.iter().position(|x| *x == n).unwrap();
        assert!(at("free") < at("a") && at("a") < at("marker"), "{log:?}");
        assert!(
            at("barrier") < at("after") && at("a") < at("last"),
            "{log:?}"
        );
    }

    #[test]
    fn out_of_order_failures_fail_only_their_waiters() {
        let q = out_of_order_queue();
        let failing = q
            .enqueue(KERNEL, Vec::new(), Box::new(|| Err(CL_OUT_OF_RESOURCES)))
            .unwrap();
        let waiter = q
            .enqueue(KERNEL, vec![failing.clone()], Box::new(|| Ok(())))
            .unwrap();
        // Ordered after it by a barrier, not by a wait list: it runs.
        let barrier = q.enqueue(BARRIER, Vec::new(), Box::new(|| Ok(()))).unwrap();
        let after = q.enqueue(KERNEL, Vec::new(), Box::new(|| Ok(()))).unwrap();
        q.finish();
        assert_eq!(failing.status(), CL_OUT_OF_RESOURCES);
        assert_eq!(
            waiter.status(),
            CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST
        );
        assert_eq!(barrier.status(), CL_COMPLETE);
        assert_eq!(after.status(), CL_COMPLETE);
        let weak = Arc::downgrade(&q);
        drop((q, failing, waiter, barrier, after));
        for _ in 0..100 {
            if weak.upgrade().is_none() {
                return;
            }
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        panic!("out-of-order queue leaked");
    }

    #[test]
    fn commands_run_in_order_and_complete() {
        let q = queue();
        let log = Arc::new(Mutex::new(Vec::new()));
        let mut evs = Vec::new();
        for i in 0..10 {
            let l = log.clone();
            evs.push(
                q.enqueue(
                    CL_COMMAND_MARKER as _,
                    Vec::new(),
                    Box::new(move || {
                        l.lock().unwrap().push(i);
                        Ok(())
                    }),
                )
                .unwrap(),
            );
        }
        q.finish();
        assert_eq!(*log.lock().unwrap(), (0..10).collect::<Vec<_>>());
        assert!(evs.iter().all(|e| e.status() == CL_COMPLETE));
    }

    #[test]
    fn panic_and_failed_dependency_mark_events() {
        let q = queue();
        let e1 = q
            .enqueue(
                CL_COMMAND_MARKER as _,
                Vec::new(),
                Box::new(|| panic!("boom")),
            )
            .unwrap();
        let e2 = q
            .enqueue(
                CL_COMMAND_MARKER as _,
                vec![e1.clone()],
                Box::new(|| Ok(())),
            )
            .unwrap();
        assert!(e1.wait() < 0);
        assert_eq!(e2.wait(), CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST);
    }

    #[test]
    fn queue_is_freed_after_its_commands() {
        let q = queue();
        let e = q
            .enqueue(CL_COMMAND_MARKER as _, Vec::new(), Box::new(|| Ok(())))
            .unwrap();
        q.finish();
        let weak = Arc::downgrade(&q);
        drop(q);
        assert!(
            weak.upgrade().is_some(),
            "the event still refers to its queue"
        );
        drop(e);
        // The worker may still hold the command for a moment after completing it.
        for _ in 0..100 {
            if weak.upgrade().is_none() {
                return;
            }
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        panic!("queue leaked");
    }

    #[test]
    fn user_event_gates_command() {
        let q = queue();
        let u = Event::new_user(q.context.clone());
        let e = q
            .enqueue(CL_COMMAND_MARKER as _, vec![u.clone()], Box::new(|| Ok(())))
            .unwrap();
        std::thread::sleep(std::time::Duration::from_millis(20));
        assert!(e.status() > CL_COMPLETE);
        u.set_user_status(CL_COMPLETE).unwrap();
        assert_eq!(e.wait(), CL_COMPLETE);
        assert_eq!(u.set_user_status(CL_COMPLETE), Err(CL_INVALID_OPERATION));
    }
}
