//! Tiered code generation (`FERROCL_BACKEND=tiered`): every kernel starts on Cranelift's code,
//! built in milliseconds; once it has run for [`Settings::tier_up_after`] in total, the wide
//! backend (LLVM's code generator, vectors as wide as the CPU's) rebuilds it on a background
//! thread, and launches enqueued after that build finished run the wide code. A kernel the
//! wide backend refuses stays on Cranelift, and the debug log says why.
//!
//! The state is per kernel of one build ([`crate::program::Built`]), so every `cl_kernel`
//! made from the program shares it, and a rebuilt program starts over.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::program::Built;
use crate::settings::{log, LogLevel, Settings};

/// What became of one kernel's second tier.
enum State {
    /// Still on Cranelift's code, counting its run time.
    Cold,
    /// The wide build runs on a background thread.
    Building,
    /// The wide build, for launches to take.
    Ready(Arc<ferrocl_codegen::Program>),
    /// The wide backend refused it, or its build failed: Cranelift's code for good.
    Stays,
}

struct Tier {
    /// Nanoseconds the kernel's launches have run in total.
    ran: AtomicU64,
    state: Mutex<State>,
}

/// The tier state of each kernel of a build, by kernel index.
pub struct Tiers {
    kernels: Vec<Tier>,
}

impl Tiers {
    pub fn new(kernels: usize) -> Tiers {
        Tiers {
            kernels: (0..kernels)
                .map(|_| Tier {
                    ran: AtomicU64::new(0),
                    state: Mutex::new(State::Cold),
                })
                .collect(),
        }
    }

    fn state(&self, index: usize) -> Option<std::sync::MutexGuard<'_, State>> {
        let tier = self.kernels.get(index)?;
        Some(tier.state.lock().unwrap_or_else(|p| p.into_inner()))
    }

    /// The wide build of kernel `index`, once it is ready.
    pub fn wide(&self, index: usize) -> Option<Arc<ferrocl_codegen::Program>> {
        match &*self.state(index)? {
            State::Ready(p) => Some(p.clone()),
            _ => None,
        }
    }
}

/// Counts a launch of kernel `index` of `built` that ran for `elapsed`, and starts its wide
/// build when the kernel has run long enough. Launches of specialised builds (image formats)
/// are not counted: those kernels stay on Cranelift (their specialisations are per launch).
pub fn ran(built: &Arc<Built>, index: usize, elapsed: Duration, settings: &Settings) {
    let Some(tier) = built.tiers.kernels.get(index) else {
        return;
    };
    let nanos = u64::try_from(elapsed.as_nanos()).unwrap_or(u64::MAX);
    let total = tier
        .ran
        .fetch_add(nanos, Ordering::Relaxed)
        .saturating_add(nanos);
    if total < u64::try_from(settings.tier_up_after.as_nanos()).unwrap_or(u64::MAX) {
        return;
    }
    {
        let mut state = tier.state.lock().unwrap_or_else(|p| p.into_inner());
        if !matches!(*state, State::Cold) {
            return;
        }
        *state = State::Building;
    }
    let for_thread = built.clone();
    let settings = settings.clone();
    let spawned = std::thread::Builder::new()
        .name("ferrocl-tier-up".into())
        .spawn(move || build_wide(&for_thread, index, &settings));
    if spawned.is_err() {
        // No thread for it now: a later launch tries again.
        *tier.state.lock().unwrap_or_else(|p| p.into_inner()) = State::Cold;
    }
}

/// The wide build of kernel `index` (on the tier-up thread).
fn build_wide(built: &Built, index: usize, settings: &Settings) {
    let generic = &built.code.kernels()[index];
    let spec = ferrocl_codegen::Specialization {
        kernel: generic.info.name.clone(),
        backend: ferrocl_codegen::Backend::Wide,
        ..Default::default()
    };
    let start = std::time::Instant::now();
    let outcome = match built.code.specialized(&spec) {
        None => Err("the program kept no module to rebuild it from".to_owned()),
        Some(Err(e)) => Err(e.log.trim_end().to_owned()),
        Some(Ok((p, _))) => match p.kernels() {
            [k] if k.backend() != ferrocl_codegen::Backend::Wide => Err(k
                .wide_refusal()
                .unwrap_or("the wide backend refused it")
                .to_owned()),
            // Launches are sized for the generic kernel: its argument block and frames.
            [k] if k.args_size != generic.args_size
                || k.work_item_frame_size > generic.work_item_frame_size =>
            {
                Err("its wide build has another argument layout or larger frames".to_owned())
            }
            [_] => Ok(p),
            _ => Err("internal: the wide build holds another number of kernels".to_owned()),
        },
    };
    let took = start.elapsed();
    let Some(mut state) = built.tiers.state(index) else {
        return;
    };
    match outcome {
        Ok(p) => {
            crate::program::log_kernel_shape(settings, &p.kernels()[0], " (wide code)");
            log(
                settings,
                LogLevel::Debug,
                format_args!(
                    "kernel {}: wide code built in {:.1} ms after {:.1} ms of runs; later launches run it",
                    generic.info.name,
                    took.as_secs_f64() * 1e3,
                    Duration::from_nanos(built.tiers.kernels[index].ran.load(Ordering::Relaxed))
                        .as_secs_f64()
                        * 1e3
                ),
            );
            *state = State::Ready(p);
        }
        Err(why) => {
            log(
                settings,
                LogLevel::Debug,
                format_args!(
                    "kernel {}: stays on Cranelift's code: {why}",
                    generic.info.name
                ),
            );
            *state = State::Stays;
        }
    }
}
