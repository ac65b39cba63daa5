//! Command queues: a worker thread per queue, fed by a channel, that waits for each command's
//! event wait list, runs the command ([`crate::command::Command`]) and completes its event. Commands run in submission order
//! (an out-of-order queue is allowed to execute in order). A drop guard marks the event failed if
//! a command panics, so no waiter hangs.

use std::sync::mpsc::{channel, Sender};
use std::sync::{Arc, Mutex, Weak};

use opencl_sys::*;

use crate::command::Command;
use crate::context::Context;
use crate::event::{wait_all, Event};
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
    sender: Mutex<Sender<Pending>>,
    /// The most recently enqueued command's event: clFinish waits for it (in-order execution).
    /// Weak, because events hold their queue (a strong reference here would be a cycle); a
    /// pending command holds its event, so a dead Weak means that command already finished.
    last: Mutex<Weak<Event>>,
}
crate::cl_object!(Queue, Queue, CL_INVALID_COMMAND_QUEUE);

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

/// The next command: polled for a short while after the last one (an application waiting for
/// each command enqueues the next right away), then waited for asleep.
fn next_command(rx: &std::sync::mpsc::Receiver<Pending>) -> Option<Pending> {
    use std::sync::mpsc::TryRecvError;
    // Some(Some(command)), or Some(None) once the queue is gone.
    let polled = crate::event::poll_briefly(|| match rx.try_recv() {
        Ok(cmd) => Some(Some(cmd)),
        Err(TryRecvError::Disconnected) => Some(None),
        Err(TryRecvError::Empty) => None,
    });
    polled.unwrap_or_else(|| rx.recv().ok())
}

fn worker(rx: std::sync::mpsc::Receiver<Pending>) {
    while let Some(cmd) = next_command(&rx) {
        let mut guard = FailGuard(Some(cmd.event.clone()));
        let status = match wait_all(&cmd.wait) {
            Err(e) => e,
            Ok(()) => {
                cmd.event.set_status(CL_RUNNING);
                let work = cmd.work;
                match std::panic::catch_unwind(std::panic::AssertUnwindSafe(work)) {
                    Ok(Ok(())) => CL_COMPLETE,
                    Ok(Err(e)) => e.min(-1),
                    Err(_) => CL_OUT_OF_RESOURCES,
                }
            }
        };
        guard.0 = None;
        cmd.event.set_status(status);
    }
}

impl Queue {
    pub fn new(
        context: Arc<Context>,
        device: Arc<Device>,
        properties: cl_command_queue_properties,
        properties_array: Vec<cl_queue_properties>,
    ) -> CLResult<Arc<Queue>> {
        let (tx, rx) = channel();
        std::thread::Builder::new()
            .name("ferrocl-queue".into())
            // A launch of one work-group runs on this thread (executor::run_ndrange), with the
            // kernel's private memory on its stack.
            .stack_size(ferrocl_codegen::KERNEL_THREAD_STACK_BYTES)
            .spawn(move || worker(rx))
            .map_err(|_| CL_OUT_OF_HOST_MEMORY)?;
        Ok(Arc::new(Queue {
            base: Base::new(Tag::Queue),
            context,
            device,
            properties,
            properties_array,
            sender: Mutex::new(tx),
            last: Mutex::new(Weak::new()),
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
        self.enqueue(
            command.command_type(),
            wait,
            Box::new(move || command.run(&device)),
        )
    }

    fn enqueue(
        self: &Arc<Self>,
        command_type: cl_command_type,
        wait: Vec<Arc<Event>>,
        work: Work,
    ) -> CLResult<Arc<Event>> {
        let event = Event::new_command(self, command_type);
        event.set_status(CL_SUBMITTED);
        let mut last = self.last.lock().unwrap_or_else(|p| p.into_inner());
        let cmd = Pending {
            event: event.clone(),
            wait,
            work,
        };
        self.sender
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .send(cmd)
            .map_err(|_| CL_OUT_OF_RESOURCES)?;
        *last = Arc::downgrade(&event);
        Ok(event)
    }

    /// Waits until every command enqueued so far has finished.
    pub fn finish(&self) {
        let last = self
            .last
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .upgrade();
        if let Some(e) = last {
            e.wait();
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
        Queue::new(c, d, 0, Vec::new()).unwrap()
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
