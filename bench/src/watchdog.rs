//! A watchdog for hung drivers: the run names what it is doing, and a thread aborts the process
//! with that name when one step takes longer than the timeout (a kernel that never returns cannot
//! be cancelled through OpenCL).

use std::sync::Mutex;
use std::time::{Duration, Instant};

static CURRENT: Mutex<Option<(String, Instant)>> = Mutex::new(None);

/// Records the step now running; the timeout counts from here.
pub fn doing(what: &str) {
    if let Ok(mut c) = CURRENT.lock() {
        *c = Some((what.to_string(), Instant::now()));
    }
}

/// Nothing to watch (host-side work such as references and probes).
pub fn idle() {
    if let Ok(mut c) = CURRENT.lock() {
        *c = None;
    }
}

/// Starts the watchdog thread; `timeout_s == 0` disables it.
pub fn start(timeout_s: u64) {
    if timeout_s == 0 {
        return;
    }
    let limit = Duration::from_secs(timeout_s);
    std::thread::spawn(move || loop {
        std::thread::sleep(Duration::from_secs(1));
        let late = CURRENT.lock().ok().and_then(|c| {
            c.as_ref()
                .filter(|(_, since)| since.elapsed() > limit)
                .map(|(what, _)| what.clone())
        });
        if let Some(what) = late {
            eprintln!("ferrocl-bench: timeout: {what} took more than {timeout_s} s; aborting");
            std::process::exit(3);
        }
    });
}
