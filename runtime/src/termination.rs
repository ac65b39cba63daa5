//! `cl_khr_terminate_context` (API spec 3.1 §4.4, clTerminateContextKHR): what a context
//! created with `CL_CONTEXT_TERMINATE_KHR` keeps so that it can be ended while work is in
//! flight: the events of its commands (each not yet over ends with `CL_CONTEXT_TERMINATED_KHR`
//! at once, so no waiter waits for the work) and the stop words of its running launches (set, so
//! JIT code, built with stop checks in such a context, leaves its loops and the executor starts
//! no more work-groups). Commands enqueued later are refused by the queue; commands already
//! queued find their event over and do not run ([`crate::queue`]).
//!
//! Only terminable contexts pay for this: others keep no list.

use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::{Arc, Mutex, Weak};

use opencl_sys::{CL_COMPLETE, CL_CONTEXT_TERMINATED_KHR};

use crate::event::Event;
use crate::object::CLResult;

#[derive(Default)]
pub struct Termination {
    terminated: AtomicBool,
    live: Mutex<Live>,
}

#[derive(Default)]
struct Live {
    events: Vec<Weak<Event>>,
    stop_words: Vec<Weak<AtomicU32>>,
    /// How many entries the lists had after they were last pruned: they are pruned again
    /// when they have doubled, so registering stays amortised O(1) however many commands a
    /// long-lived context runs.
    pruned_at: usize,
}

impl Live {
    fn prune_if_grown(&mut self) {
        let len = self.events.len() + self.stop_words.len();
        if len >= (2 * self.pruned_at).max(64) {
            self.events.retain(|e| e.strong_count() > 0);
            self.stop_words.retain(|w| w.strong_count() > 0);
            self.pruned_at = self.events.len() + self.stop_words.len();
        }
    }
}

impl Termination {
    pub fn is_terminated(&self) -> bool {
        self.terminated.load(Ordering::Acquire)
    }

    /// `CL_CONTEXT_TERMINATED_KHR` once the context was terminated: what the calls that create
    /// objects or enqueue commands return then.
    pub fn check_live(&self) -> CLResult<()> {
        if self.is_terminated() {
            Err(CL_CONTEXT_TERMINATED_KHR)
        } else {
            Ok(())
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Live> {
        self.live.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// A command's event, ended by a termination if it is not over by then.
    pub fn track_event(&self, event: &Arc<Event>) {
        let mut live = self.lock();
        live.events.push(Arc::downgrade(event));
        live.prune_if_grown();
    }

    /// A running launch's stop word, set by a termination. Refused (the launch does not
    /// start) once the context is terminated; checked under the lock `terminate` sets the
    /// flag under, so a launch either is refused or has its word set.
    pub fn track_stop_word(&self, stop: &Arc<AtomicU32>) -> CLResult<()> {
        let mut live = self.lock();
        self.check_live()?;
        live.stop_words.push(Arc::downgrade(stop));
        live.prune_if_grown();
        Ok(())
    }

    /// Terminates: Err(CL_CONTEXT_TERMINATED_KHR) when it already was.
    pub fn terminate(&self) -> CLResult<()> {
        let (events, stop_words) = {
            let mut live = self.lock();
            if self.terminated.swap(true, Ordering::AcqRel) {
                return Err(CL_CONTEXT_TERMINATED_KHR);
            }
            live.pruned_at = 0;
            (
                std::mem::take(&mut live.events),
                std::mem::take(&mut live.stop_words),
            )
        };
        for stop in stop_words.iter().filter_map(Weak::upgrade) {
            stop.store(1, Ordering::Release);
        }
        // Outside the lock: ending an event runs the application's callbacks, which may call
        // back into the API.
        for event in events.iter().filter_map(Weak::upgrade) {
            if event.status() > CL_COMPLETE {
                event.set_status(CL_CONTEXT_TERMINATED_KHR);
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn terminating_sets_stop_words_and_refuses_new_ones_and_a_second_termination() {
        let t = Termination::default();
        let running = Arc::new(AtomicU32::new(0));
        t.track_stop_word(&running).unwrap();
        assert_eq!(t.check_live(), Ok(()));
        t.terminate().unwrap();
        assert_ne!(running.load(Ordering::Acquire), 0);
        assert_eq!(t.check_live(), Err(CL_CONTEXT_TERMINATED_KHR));
        let late = Arc::new(AtomicU32::new(0));
        assert_eq!(t.track_stop_word(&late), Err(CL_CONTEXT_TERMINATED_KHR));
        assert_eq!(t.terminate(), Err(CL_CONTEXT_TERMINATED_KHR));
    }

    #[test]
    fn lists_are_pruned_of_what_ended() {
        let t = Termination::default();
        for _ in 0..10_000 {
            let stop = Arc::new(AtomicU32::new(0));
            t.track_stop_word(&stop).unwrap();
        }
        let kept = Arc::new(AtomicU32::new(0));
        t.track_stop_word(&kept).unwrap();
        assert!(
            t.lock().stop_words.len() < 200,
            "{}",
            t.lock().stop_words.len()
        );
        t.terminate().unwrap();
        assert_eq!(kept.load(Ordering::Acquire), 1);
    }
}
