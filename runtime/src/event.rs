//! Events: execution status with a condition variable for waiters, status callbacks, profiling
//! timestamps. Command events belong to a queue; user events are set by the application.

use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::{Arc, Condvar, Mutex, OnceLock, Weak};

use opencl_sys::*;

use crate::context::Context;
use crate::object::{now_ns, Base, CLResult, Tag};
use crate::queue::{Queue, Scheduled};

pub type EventCallback = unsafe extern "C" fn(cl_event, cl_int, *mut std::ffi::c_void);

/// The runtime's own reaction to an event ending (a dependent command becoming ready), called
/// with the final status.
pub type EndHook = Box<dyn FnOnce(cl_int) + Send>;

struct State {
    status: cl_int,
    /// (callback, user data, status it waits for).
    callbacks: Vec<(EventCallback, usize, cl_int)>,
    /// Run once the status is terminal.
    end_hooks: Vec<EndHook>,
    /// queued, submit, start, end (ns, `now_ns` clock).
    times: [u64; 4],
}

#[repr(C)]
pub struct Event {
    base: Base,
    pub context: Arc<Context>,
    pub queue: Option<Arc<Queue>>,
    pub command_type: cl_command_type,
    state: Mutex<State>,
    cv: Condvar,
    /// `state.status` once it is terminal (complete or an error), for waiters that poll
    /// before they sleep; CL_QUEUED (never terminal) until then.
    terminal: AtomicI32,
    /// The command of an out-of-order queue this event belongs to, for a waiter that runs it
    /// itself (`Queue::help`).
    pub(crate) scheduled: OnceLock<Weak<Scheduled>>,
    /// Set for the event of a command-buffer enqueued to several queues
    /// (cl_khr_command_buffer_multi_device): whether all of them have profiling enabled.
    spanning: OnceLock<bool>,
}
crate::cl_object!(Event, Event, CL_INVALID_EVENT);

/// How long a waiter (for an event, or a queue's worker for its next command) polls before it
/// sleeps: short commands (a launch of a few work-groups, a small copy) finish within it, and
/// waking a sleeping thread costs about as much again on a virtual machine.
const SPIN: std::time::Duration = std::time::Duration::from_micros(40);

/// Polls `ready` for [`SPIN`]; its first `Some`, or None when the time is up.
pub(crate) fn poll_briefly<T>(mut ready: impl FnMut() -> Option<T>) -> Option<T> {
    let start = std::time::Instant::now();
    while start.elapsed() <= SPIN {
        if let Some(v) = ready() {
            return Some(v);
        }
        std::hint::spin_loop();
    }
    None
}

impl Event {
    pub fn new_command(queue: &Arc<Queue>, command_type: cl_command_type) -> Arc<Event> {
        let t = now_ns();
        let event = Arc::new(Event {
            base: Base::new(Tag::Event),
            context: queue.context.clone(),
            queue: Some(queue.clone()),
            command_type,
            state: Mutex::new(State {
                status: CL_QUEUED,
                callbacks: Vec::new(),
                end_hooks: Vec::new(),
                times: [t, 0, 0, 0],
            }),
            cv: Condvar::new(),
            terminal: AtomicI32::new(CL_QUEUED),
            scheduled: OnceLock::new(),
            spanning: OnceLock::new(),
        });
        if let Some(t) = &queue.context.termination {
            t.track_event(&event);
        }
        event
    }

    pub fn new_user(context: Arc<Context>) -> Arc<Event> {
        Arc::new(Event {
            base: Base::new(Tag::Event),
            context,
            queue: None,
            command_type: CL_COMMAND_USER as cl_command_type,
            state: Mutex::new(State {
                status: CL_SUBMITTED,
                callbacks: Vec::new(),
                end_hooks: Vec::new(),
                times: [0; 4],
            }),
            cv: Condvar::new(),
            terminal: AtomicI32::new(CL_QUEUED),
            scheduled: OnceLock::new(),
            spanning: OnceLock::new(),
        })
    }

    /// Marks the event of a command-buffer enqueued to several queues: `CL_EVENT_COMMAND_QUEUE`
    /// is NULL for it, and its profiling times exist when every queue has profiling enabled.
    pub fn spans_queues(&self, all_profiling: bool) {
        let _ = self.spanning.set(all_profiling);
    }

    /// The queue `CL_EVENT_COMMAND_QUEUE` names: none for user events and for events spanning
    /// queues.
    pub fn reported_queue(&self) -> Option<&Arc<Queue>> {
        self.queue
            .as_ref()
            .filter(|_| self.spanning.get().is_none())
    }

    /// Whether profiling times are recorded for the event: its queue has profiling enabled
    /// (every queue, for an event spanning queues); never for user events.
    pub fn profiled(&self) -> bool {
        match (self.spanning.get(), &self.queue) {
            (Some(&all), _) => all,
            (None, Some(q)) => q.profiling(),
            (None, None) => false,
        }
    }

    pub fn is_user(&self) -> bool {
        self.queue.is_none()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    pub fn status(&self) -> cl_int {
        self.lock().status
    }

    /// Complete or failed.
    pub(crate) fn is_terminal(&self) -> bool {
        self.terminal.load(Ordering::Acquire) <= CL_COMPLETE
    }

    /// The application registered a status callback that has not been called yet.
    pub(crate) fn has_callbacks(&self) -> bool {
        !self.lock().callbacks.is_empty()
    }

    /// Moves the event to `status` (a lower value: submitted → running → complete, or a
    /// negative error), stamps the profiling time and runs the callbacks now due.
    pub fn set_status(&self, status: cl_int) {
        let (due, hooks) = {
            let mut st = self.lock();
            if st.status <= CL_COMPLETE {
                return; // terminal already
            }
            let t = now_ns();
            match status {
                CL_SUBMITTED => st.times[1] = t,
                CL_RUNNING => st.times[2] = t,
                _ => {
                    if st.times[1] == 0 {
                        st.times[1] = t;
                    }
                    if st.times[2] == 0 {
                        st.times[2] = t;
                    }
                    st.times[3] = t;
                }
            }
            st.status = status;
            if status <= CL_COMPLETE {
                self.terminal.store(status, Ordering::Release);
            }
            let (due, keep): (Vec<_>, Vec<_>) = std::mem::take(&mut st.callbacks)
                .into_iter()
                .partition(|c| status <= c.2);
            st.callbacks = keep;
            let hooks = if status <= CL_COMPLETE {
                std::mem::take(&mut st.end_hooks)
            } else {
                Vec::new()
            };
            (due, hooks)
        };
        if status <= CL_COMPLETE {
            self.cv.notify_all();
        }
        for hook in hooks {
            hook(status);
        }
        let me = self as *const Event as cl_event;
        for (f, ud, _) in due {
            // SAFETY: registered by the application for this event; the spec passes the
            // execution status (negative on error) to the callback.
            unsafe { f(me, status, ud as *mut std::ffi::c_void) };
        }
    }

    /// `clSetUserEventStatus`: only once, CL_COMPLETE or a negative value.
    pub fn set_user_status(&self, status: cl_int) -> CLResult<()> {
        if status > CL_COMPLETE {
            return Err(CL_INVALID_VALUE);
        }
        if self.status() <= CL_COMPLETE {
            return Err(CL_INVALID_OPERATION);
        }
        self.set_status(status);
        Ok(())
    }

    /// Blocks until the event is complete or failed; returns the final status. A command's
    /// event is first helped along: the commands of its queue up to it that are ready run on
    /// this thread (`Queue::help`), as far as their order allows.
    pub fn wait(&self) -> cl_int {
        if let Some(queue) = &self.queue {
            if !self.is_terminal() {
                queue.help(self);
            }
        }
        let terminal = poll_briefly(|| {
            let t = self.terminal.load(Ordering::Acquire);
            (t <= CL_COMPLETE).then_some(t)
        });
        if let Some(t) = terminal {
            return t;
        }
        let mut st = self.lock();
        while st.status > CL_COMPLETE {
            st = self.cv.wait(st).unwrap_or_else(|p| p.into_inner());
        }
        st.status
    }

    /// Runs `hook` with the final status once the event is complete or failed (at once when
    /// it already is).
    pub fn on_end(&self, hook: EndHook) {
        let status = {
            let mut st = self.lock();
            if st.status > CL_COMPLETE {
                st.end_hooks.push(hook);
                return;
            }
            st.status
        };
        hook(status);
    }

    pub fn add_callback(&self, f: EventCallback, user_data: usize, on: cl_int) {
        let status = {
            let mut st = self.lock();
            if st.status > on {
                st.callbacks.push((f, user_data, on));
                return;
            }
            st.status
        };
        let me = self as *const Event as cl_event;
        // SAFETY: as in set_status; the status was already reached, so call at once.
        unsafe { f(me, status, user_data as *mut std::ffi::c_void) };
    }

    /// Profiling info for queued/submit/start/end; None until the event completed.
    pub fn profiling(&self, which: usize) -> Option<u64> {
        let st = self.lock();
        if st.status != CL_COMPLETE || self.is_user() {
            return None;
        }
        st.times.get(which).copied()
    }
}

/// Waits for all events; Err(CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST) if any failed.
pub fn wait_all(events: &[Arc<Event>]) -> CLResult<()> {
    let mut ok = true;
    for e in events {
        if e.wait() < 0 {
            ok = false;
        }
    }
    if ok {
        Ok(())
    } else {
        Err(CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST)
    }
}
