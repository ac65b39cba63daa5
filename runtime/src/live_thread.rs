//! Work that uses thread-local state (Cranelift keeps its pass timers in one, rayon and the
//! standard library theirs) from a thread whose thread-locals may already be gone: an
//! application may call OpenCL from an `atexit` handler, which runs on the main thread after its
//! thread-local destructors. Such calls run their work on a short-lived thread of their own.

use std::sync::Mutex;

/// Threads (kernel thread ids) whose thread-local destructors have run: a thread-local's
/// destructor records its thread here, so the answer does not depend on the order in which a
/// thread's destructors run.
static DESTROYED: Mutex<Vec<libc::pid_t>> = Mutex::new(Vec::new());

fn thread_id() -> libc::pid_t {
    // SAFETY: gettid has no preconditions and cannot fail.
    unsafe { libc::gettid() }
}

/// A thread-local with a destructor, touched by every call here.
struct Liveness;

impl Drop for Liveness {
    fn drop(&mut self) {
        if let Ok(mut destroyed) = DESTROYED.lock() {
            destroyed.push(thread_id());
        }
    }
}

thread_local! {
    static LIVENESS: Liveness = const { Liveness };
}

/// Whether this thread's thread-local storage is usable (its destructors have not run).
pub fn thread_locals_alive() -> bool {
    LIVENESS.try_with(|_| ()).is_ok()
        && DESTROYED
            .lock()
            .map_or(true, |destroyed| !destroyed.contains(&thread_id()))
}

/// Runs `work` here while this thread's thread-locals live, otherwise on a new thread (with
/// the 8 MiB stack a main thread usually has), waiting for it.
pub fn on_live_thread<R: Send>(work: impl FnOnce() -> R + Send) -> R {
    if thread_locals_alive() {
        return work();
    }
    std::thread::scope(|scope| {
        let worker = std::thread::Builder::new()
            .name("ferrocl-late-call".into())
            .stack_size(8 << 20)
            .spawn_scoped(scope, work)
            .unwrap_or_else(|_| {
                panic!("ferrocl: no thread for a call made after thread-local destruction")
            });
        match worker.join() {
            Ok(result) => result,
            Err(panic) => std::panic::resume_unwind(panic),
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn live_threads_run_work_in_place() {
        assert!(thread_locals_alive());
        let here = std::thread::current().id();
        assert_eq!(on_live_thread(|| std::thread::current().id()), here);
    }
}
