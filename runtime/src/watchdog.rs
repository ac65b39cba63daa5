//! The kernel watchdog's clock (`FERROCL_KERNEL_TIMEOUT`): one thread for the process that
//! keeps a deadline per running launch and sets the launch's stop word when its deadline
//! passes. JIT code built with stop checks reads the word at every loop head and leaves its
//! work-group (codegen's watchdog.rs), the executor hands out no more work-groups, and the
//! launch fails ([`crate::kernel::KernelLaunch::run`]).
//!
//! Arming costs a lock and, only when the thread sleeps past the new deadline (or has nothing
//! to wait for), a wake-up: with one timeout for the process, deadlines arrive in order, so a
//! stream of launches wakes the thread about once per timeout, not once per launch.

use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, OnceLock};
use std::time::{Duration, Instant};

/// One armed deadline; disarmed when dropped.
pub struct Watch {
    id: u64,
    stop: Arc<AtomicU32>,
}

impl Watch {
    /// The stop word the launch hands to JIT code and checks between work-groups.
    pub fn stop_word(&self) -> Arc<AtomicU32> {
        self.stop.clone()
    }

    /// Whether the deadline passed before the watch was dropped.
    pub fn fired(&self) -> bool {
        self.stop.load(Ordering::Acquire) != 0
    }
}

impl Drop for Watch {
    fn drop(&mut self) {
        let mut state = watchdog().state.lock().unwrap_or_else(|p| p.into_inner());
        // No wake-up: the thread finds nothing due when it next wakes and sleeps on.
        state.armed.retain(|a| a.id != self.id);
    }
}

struct Armed {
    id: u64,
    deadline: Instant,
    stop: Arc<AtomicU32>,
}

#[derive(Default)]
struct State {
    armed: Vec<Armed>,
    /// What the thread sleeps until: None while it waits without a deadline (or before it
    /// runs), so arming must wake it.
    sleeping_until: Option<Instant>,
}

struct Watchdog {
    state: Mutex<State>,
    wake: Condvar,
    next_id: AtomicU64,
}

fn watchdog() -> &'static Watchdog {
    static WATCHDOG: OnceLock<Watchdog> = OnceLock::new();
    WATCHDOG.get_or_init(|| {
        let spawned = std::thread::Builder::new()
            .name("ferrocl-watchdog".into())
            .spawn(|| watch_loop(watchdog()));
        if spawned.is_err() {
            // Without the thread no deadline fires: launches run as without the setting.
            eprintln!("ferrocl: warning: cannot start the kernel watchdog thread");
        }
        Watchdog {
            state: Mutex::new(State::default()),
            wake: Condvar::new(),
            next_id: AtomicU64::new(0),
        }
    })
}

fn watch_loop(w: &Watchdog) {
    let mut state = w.state.lock().unwrap_or_else(|p| p.into_inner());
    loop {
        let now = Instant::now();
        for a in state.armed.iter().filter(|a| a.deadline <= now) {
            a.stop.store(1, Ordering::Release);
        }
        state.armed.retain(|a| a.deadline > now);
        let next = state.armed.iter().map(|a| a.deadline).min();
        state.sleeping_until = next;
        state = match next {
            None => w.wake.wait(state).unwrap_or_else(|p| p.into_inner()),
            Some(t) => {
                w.wake
                    .wait_timeout(state, t.saturating_duration_since(now))
                    .unwrap_or_else(|p| p.into_inner())
                    .0
            }
        };
    }
}

/// Arms a deadline `timeout` from now; its stop word is set when it passes.
pub fn watch(timeout: Duration) -> Watch {
    let w = watchdog();
    let id = w.next_id.fetch_add(1, Ordering::Relaxed);
    let stop = Arc::new(AtomicU32::new(0));
    // A timeout too large for the clock never fires.
    if let Some(deadline) = Instant::now().checked_add(timeout) {
        let mut state = w.state.lock().unwrap_or_else(|p| p.into_inner());
        state.armed.push(Armed {
            id,
            deadline,
            stop: stop.clone(),
        });
        if state.sleeping_until.is_none_or(|t| t > deadline) {
            w.wake.notify_one();
        }
    }
    Watch { id, stop }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn wait_until_fired(w: &Watch, limit: Duration) -> Option<Duration> {
        let start = Instant::now();
        while start.elapsed() < limit {
            if w.fired() {
                return Some(start.elapsed());
            }
            std::thread::sleep(Duration::from_millis(2));
        }
        None
    }

    #[test]
    fn a_deadline_fires_after_its_timeout_and_not_before() {
        let start = Instant::now();
        let w = watch(Duration::from_millis(50));
        assert!(!w.fired());
        wait_until_fired(&w, Duration::from_secs(10)).expect("the watchdog fired");
        assert!(start.elapsed() >= Duration::from_millis(50));
    }

    #[test]
    fn an_earlier_deadline_wakes_a_thread_sleeping_on_a_later_one() {
        let late = watch(Duration::from_secs(3600));
        // Let the thread settle on the late deadline first.
        std::thread::sleep(Duration::from_millis(20));
        let early = watch(Duration::from_millis(30));
        wait_until_fired(&early, Duration::from_secs(10)).expect("the early deadline fired");
        assert!(!late.fired());
    }

    #[test]
    fn a_dropped_watch_never_fires() {
        let w = watch(Duration::from_millis(20));
        let stop = w.stop_word();
        drop(w);
        std::thread::sleep(Duration::from_millis(80));
        assert_eq!(stop.load(Ordering::Acquire), 0);
        // A huge timeout is accepted and simply never fires.
        let w = watch(Duration::MAX);
        assert!(!w.fired());
    }
}
