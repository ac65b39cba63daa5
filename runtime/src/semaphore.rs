//! Binary semaphores (`cl_khr_semaphore`, API spec 3.1 §5.15, "Semaphores"): the object, its
//! properties, and how signal and wait commands find each other. A binary semaphore passes a
//! token from a signal to the next wait, across queues: each signal command is matched, in
//! enqueue order, with the wait that takes it, and the wait command depends on that signal's
//! event, so it runs once the signal has completed. A wait enqueued before any signal it could
//! take depends instead on a private event that the next signal completes with its own status
//! (a failed signal fails the wait, as a failed event in a wait list does). The payload is 1
//! between a signal's completion and the completion of the wait that took it.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use opencl_sys::*;

use crate::command::Command;
use crate::context::Context;
use crate::event::Event;
use crate::object::{Base, CLResult, Tag};
use crate::platform::Device;
use crate::queue::Queue;

/// `cl_semaphore_khr`.
#[repr(C)]
pub struct Semaphore {
    base: Base,
    pub context: Arc<Context>,
    /// `CL_SEMAPHORE_DEVICE_HANDLE_LIST_KHR`: the one device given, or the context's (one).
    pub devices: Vec<Arc<Device>>,
    /// The properties as given, terminator included (`CL_SEMAPHORE_PROPERTIES_KHR`).
    pub properties: Vec<cl_semaphore_properties_khr>,
    state: Mutex<Token>,
}
crate::cl_object!(Semaphore, Semaphore, CL_INVALID_SEMAPHORE_KHR);

#[derive(Default)]
struct Token {
    /// The payload: a signal completed that no completed wait has taken yet.
    signaled: bool,
    /// Events of signal commands no wait has taken yet, oldest first.
    signals: VecDeque<Arc<Event>>,
    /// Waits enqueued before a signal they could take: the private events they wait on, which
    /// the next signals complete, oldest first.
    waiters: VecDeque<Arc<Event>>,
}

impl Semaphore {
    /// `clCreateSemaphoreWithPropertiesKHR` from the parsed properties: a binary semaphore,
    /// unsignaled. `device` is the device list's one entry (checked to be in `context`), None
    /// when the list was not given (then the context must have one device:
    /// CL_INVALID_PROPERTY otherwise).
    pub fn new(
        context: Arc<Context>,
        device: Option<Arc<Device>>,
        properties: Vec<cl_semaphore_properties_khr>,
    ) -> CLResult<Arc<Self>> {
        let devices = match device {
            Some(d) if context.has_device(&d) => vec![d],
            Some(_) => return Err(CL_INVALID_DEVICE),
            None if context.devices.len() == 1 => context.devices.clone(),
            None => return Err(CL_INVALID_PROPERTY),
        };
        Ok(Arc::new(Semaphore {
            base: Base::new(Tag::Semaphore),
            context,
            devices,
            properties,
            state: Mutex::new(Token::default()),
        }))
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Token> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// `CL_SEMAPHORE_PAYLOAD_KHR`: 1 while signaled, else 0.
    pub fn payload(&self) -> cl_semaphore_payload_khr {
        cl_semaphore_payload_khr::from(self.lock().signaled)
    }

    /// Whether a queue on `device` may signal or wait on it.
    pub fn is_for(&self, device: &Device) -> bool {
        self.devices.iter().any(|d| std::ptr::eq(&**d, device))
    }

    /// `clEnqueueWaitSemaphoresKHR` (the arguments checked): a wait command on `queue` after
    /// `wait` and the signal each semaphore passes it.
    pub fn enqueue_wait(
        queue: &Arc<Queue>,
        semaphores: Vec<Arc<Semaphore>>,
        mut wait: Vec<Arc<Event>>,
    ) -> CLResult<Arc<Event>> {
        wait.extend(semaphores.iter().map(|s| s.take_signal()));
        let command = Command::Semaphores {
            signal: false,
            semaphores,
        };
        queue.submit(command, wait)
    }

    /// `clEnqueueSignalSemaphoresKHR` (the arguments checked): a signal command on `queue`
    /// after `wait`, handed to the waits that take it.
    pub fn enqueue_signal(
        queue: &Arc<Queue>,
        semaphores: Vec<Arc<Semaphore>>,
        wait: Vec<Arc<Event>>,
    ) -> CLResult<Arc<Event>> {
        let command = Command::Semaphores {
            signal: true,
            semaphores: semaphores.clone(),
        };
        let event = queue.submit(command, wait)?;
        for s in &semaphores {
            s.give_signal(&event);
        }
        Ok(event)
    }

    /// What a new wait command must wait for: the oldest signal not yet taken, or a private
    /// event the next signal completes.
    fn take_signal(&self) -> Arc<Event> {
        let mut token = self.lock();
        if let Some(signal) = token.signals.pop_front() {
            return signal;
        }
        let waiter = Event::new_user(self.context.clone());
        token.waiters.push_back(waiter.clone());
        waiter
    }

    /// Registers a new signal command's event: the oldest waiting wait takes it, else it waits
    /// for the next wait.
    fn give_signal(&self, signal: &Arc<Event>) {
        // One lock for the choice, so that a wait enqueued meanwhile on another thread either
        // is the waiter taken here or finds the signal queued.
        let waiter = {
            let mut token = self.lock();
            let waiter = token.waiters.pop_front();
            if waiter.is_none() {
                token.signals.push_back(signal.clone());
            }
            waiter
        };
        // A failed signal fails its wait; a completed one lets it run (the hook may run at
        // once, so outside the lock).
        if let Some(waiter) = waiter {
            signal.on_end(Box::new(move |status| waiter.set_status(status)));
        }
    }

    /// The signal command's work.
    pub fn signal(&self) {
        self.lock().signaled = true;
    }

    /// The wait command's work.
    pub fn unsignal(&self) {
        self.lock().signaled = false;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::platform::platform;

    fn semaphore() -> Arc<Semaphore> {
        let ctx = Context::new(platform().devices.clone(), Vec::new());
        Semaphore::new(ctx, None, vec![0]).unwrap()
    }

    #[test]
    fn a_wait_takes_the_oldest_signal() {
        let s = semaphore();
        let (a, b) = (
            Event::new_user(s.context.clone()),
            Event::new_user(s.context.clone()),
        );
        s.give_signal(&a);
        s.give_signal(&b);
        assert!(Arc::ptr_eq(&s.take_signal(), &a));
        assert!(Arc::ptr_eq(&s.take_signal(), &b));
    }

    #[test]
    fn a_wait_before_its_signal_ends_as_the_signal_does() {
        let s = semaphore();
        let first = s.take_signal();
        let second = s.take_signal();
        assert!(first.status() > CL_COMPLETE, "nothing signaled yet");
        let (ok, failed) = (
            Event::new_user(s.context.clone()),
            Event::new_user(s.context.clone()),
        );
        s.give_signal(&ok);
        s.give_signal(&failed);
        ok.set_status(CL_COMPLETE);
        failed.set_status(-5);
        assert_eq!(first.status(), CL_COMPLETE);
        assert_eq!(second.status(), -5);
    }

    #[test]
    fn signals_and_waits_from_two_threads_all_meet() {
        let s = semaphore();
        const N: usize = 20_000;
        let signals: Vec<Arc<Event>> = (0..N)
            .map(|_| {
                let e = Event::new_user(s.context.clone());
                e.set_status(CL_COMPLETE);
                e
            })
            .collect();
        let taken = std::thread::scope(|scope| {
            let waits = scope.spawn(|| (0..N).map(|_| s.take_signal()).collect::<Vec<_>>());
            for e in &signals {
                s.give_signal(e);
            }
            waits.join().unwrap()
        });
        // Every wait took a signal, or a private event a later signal completed.
        assert!(taken.iter().all(|e| e.status() == CL_COMPLETE));
    }

    #[test]
    fn the_payload_follows_the_commands() {
        let s = semaphore();
        assert_eq!(s.payload(), 0);
        s.signal();
        assert_eq!(s.payload(), 1);
        s.unsignal();
        assert_eq!(s.payload(), 0);
    }
}
