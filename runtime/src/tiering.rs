//! Tiered code generation (`FERROCL_BACKEND=tiered`): every kernel starts on Cranelift's code,
//! built in milliseconds; once it has run for [`Settings::tier_up_after`] in total, the wide
//! backend (LLVM's code generator, vectors as wide as the CPU's) rebuilds it on a background
//! thread, and launches enqueued after that build finished run the wide code. A kernel the
//! wide backend refuses stays on Cranelift, and the debug log says why.
//!
//! With the program cache on, a kernel's wide build is stored beside the program's machine
//! code, and a later process looks for it at the kernel's first launch: a kernel that was hot
//! before runs its wide code again after a load of milliseconds, not after its runs and a wide
//! build of 20 ms to over a second.
//!
//! The state is per kernel of one build ([`crate::program::Built`]), so every `cl_kernel`
//! made from the program shares it, and a rebuilt program starts over.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::program::Built;
use crate::program_cache::{CodeEntry, CodeKey};
use crate::settings::{log, LogLevel, Settings};

/// Where a program's kernels keep their wide builds: the program cache's entry of the generic
/// build, which every wide entry's key extends (so the SPIR-V, its specialisation constants,
/// the options, this driver and Cranelift's target are in it), and what the device had to
/// allow for that build, stored with each wide entry as the generic entry has it.
pub struct TierCache {
    pub dir: PathBuf,
    pub key: CodeKey,
    /// The generic entry's requirements (its program and warnings are not used).
    pub requirements: CodeEntry,
}

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
    /// The program cache was asked for the kernel's wide build (at its first launch).
    looked_up: AtomicBool,
    state: Mutex<State>,
}

/// The tier state of each kernel of a build, by kernel index.
pub struct Tiers {
    kernels: Vec<Tier>,
    cache: Option<TierCache>,
}

impl Tiers {
    pub fn new(kernels: usize, cache: Option<TierCache>) -> Tiers {
        Tiers {
            kernels: (0..kernels)
                .map(|_| Tier {
                    ran: AtomicU64::new(0),
                    looked_up: AtomicBool::new(false),
                    state: Mutex::new(State::Cold),
                })
                .collect(),
            cache,
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
/// build when the kernel has run long enough — or, at its first launch, the program cache's
/// lookup of the wide build an earlier process made. Launches of specialised builds (image
/// formats) are not counted: those kernels stay on Cranelift (their specialisations are per
/// launch).
pub fn ran(built: &Arc<Built>, index: usize, elapsed: Duration, settings: &Settings) {
    let Some(tier) = built.tiers.kernels.get(index) else {
        return;
    };
    let nanos = u64::try_from(elapsed.as_nanos()).unwrap_or(u64::MAX);
    let total = tier
        .ran
        .fetch_add(nanos, Ordering::Relaxed)
        .saturating_add(nanos);
    let hot = total >= u64::try_from(settings.tier_up_after.as_nanos()).unwrap_or(u64::MAX);
    let first = built.tiers.cache.is_some() && !tier.looked_up.swap(true, Ordering::Relaxed);
    if !hot && !first {
        return;
    }
    {
        let mut state = tier.state.lock().unwrap_or_else(|p| p.into_inner());
        if !matches!(*state, State::Cold) {
            return;
        }
        *state = State::Building;
    }
    // LLVM's libraries load here, on the launching thread, not on the tier-up thread: a
    // library's static constructors that run while the process exits race its exit handlers
    // (they register destructors that exit runs at once, and the constructor then uses what
    // they destroyed), and a tier-up thread loading libLLVM as a test's main returned spun
    // forever holding the loader's lock, so the process never ended. Once per process, about
    // 20 ms; nothing when the libraries are already loaded.
    let _ = ferrocl_opencl_c::wide_backend_available();
    let for_thread = built.clone();
    let settings = settings.clone();
    let spawned = std::thread::Builder::new()
        .name("ferrocl-tier-up".into())
        .spawn(move || tier_up(&for_thread, index, &settings, hot));
    if spawned.is_err() {
        // No thread for it now: a later launch tries again.
        tier.looked_up.store(false, Ordering::Relaxed);
        *tier.state.lock().unwrap_or_else(|p| p.into_inner()) = State::Cold;
    }
}

/// The second tier of kernel `index` (on the tier-up thread): the wide build from the program
/// cache if it has one, else, when `build` (the kernel is hot), built now and stored there.
fn tier_up(built: &Built, index: usize, settings: &Settings, build: bool) {
    let generic = &built.code.kernels()[index];
    let spec = ferrocl_codegen::Specialization {
        kernel: generic.info.name.clone(),
        backend: ferrocl_codegen::Backend::Wide,
        ..Default::default()
    };
    let start = std::time::Instant::now();
    let cached = built
        .tiers
        .cache
        .as_ref()
        .and_then(|cache| WideEntry::new(cache, built, &spec));
    let outcome = match cached.as_ref().and_then(|entry| entry.load(settings)) {
        Some(p) => usable(generic, p).map(|p| {
            let took = start.elapsed().as_secs_f64() * 1e3;
            (p, format!("loaded from the program cache in {took:.2} ms"))
        }),
        None if !build => {
            // Nothing stored: the kernel counts its runs on Cranelift's code as before.
            if let Some(mut state) = built.tiers.state(index) {
                *state = State::Cold;
            }
            return;
        }
        None => match built.code.build_specialization(&spec, cached.is_some()) {
            None => Err("the program kept no module to rebuild it from".to_owned()),
            Some(Err(e)) => Err(e.log.trim_end().to_owned()),
            Some(Ok(mut p)) => {
                let stored = cached.as_ref().map(|entry| entry.store(settings, &mut p));
                usable(generic, p).map(|p| {
                    let ran = Duration::from_nanos(
                        built.tiers.kernels[index].ran.load(Ordering::Relaxed),
                    );
                    let built = format!(
                        "built in {:.1} ms after {:.1} ms of runs",
                        start.elapsed().as_secs_f64() * 1e3,
                        ran.as_secs_f64() * 1e3
                    );
                    (p, built + &stored.unwrap_or_default())
                })
            }
        },
    };
    let Some(mut state) = built.tiers.state(index) else {
        return;
    };
    match outcome {
        Ok((p, how)) => {
            crate::program::log_kernel_shape(settings, &p.kernels()[0], " (wide code)");
            log(
                settings,
                LogLevel::Debug,
                format_args!(
                    "kernel {}: wide code {how}; later launches run it",
                    generic.info.name,
                ),
            );
            *state = State::Ready(Arc::new(p));
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

/// `program`, a wide build of `generic`, if launches sized for `generic` can run it.
fn usable(
    generic: &ferrocl_codegen::Kernel,
    program: ferrocl_codegen::Program,
) -> Result<ferrocl_codegen::Program, String> {
    match program.kernels() {
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
        [_] => Ok(program),
        _ => Err("internal: the wide build holds another number of kernels".to_owned()),
    }
}

/// One kernel's wide build in the program cache.
struct WideEntry<'a> {
    cache: &'a TierCache,
    key: CodeKey,
    options: ferrocl_codegen::BuildOptions,
}

impl<'a> WideEntry<'a> {
    /// The entry of the wide build `spec` of `built`; None when the program cannot make one
    /// (it kept nothing to specialise) or the JIT does not support this host.
    fn new(
        cache: &'a TierCache,
        built: &Built,
        spec: &ferrocl_codegen::Specialization,
    ) -> Option<WideEntry<'a>> {
        let options = built.code.specialization_options(spec)?;
        // The wide code's identity: LLVM's view of this CPU, its features and width.
        let identity = ferrocl_codegen::code_identity(&options).ok()?;
        let key = cache.key.derived(&[
            b"the tiered runtime's wide build".as_slice(),
            options.code_fingerprint().as_bytes(),
            identity.as_bytes(),
        ]);
        Some(WideEntry {
            cache,
            key,
            options,
        })
    }

    /// The stored wide build, if there is one that loads.
    fn load(&self, settings: &Settings) -> Option<ferrocl_codegen::Program> {
        let entry =
            crate::program_cache::lookup_code(&self.cache.dir, &self.key, settings.cache_max_bytes)
                .ok()?;
        // A specialised build keeps no specialisations of its own, so it never parses.
        let parse: ferrocl_codegen::ModuleSource = Box::new(|| {
            Err(ferrocl_codegen::BuildError::new(
                "internal: a wide build is not specialised again\n",
            ))
        });
        match ferrocl_codegen::Program::load(&entry.program, &self.options, parse) {
            Ok(p) => Some(p),
            Err(e) => {
                // Memory running out says nothing of the entry; anything else does.
                if !e.out_of_memory {
                    crate::program_cache::remove_code(&self.cache.dir, &self.key);
                }
                log(
                    settings,
                    LogLevel::Debug,
                    format_args!(
                        "program cache: a stored wide build could not be loaded: {}",
                        e.log.trim_end()
                    ),
                );
                None
            }
        }
    }

    /// Stores the serialized form of `program`, just built; says what became of it (for the
    /// debug log line).
    fn store(&self, settings: &Settings, program: &mut ferrocl_codegen::Program) -> String {
        let serialized = match program.take_serialized() {
            Some(Ok(bytes)) => bytes,
            Some(Err(why)) => return format!(", not cacheable: {why}"),
            None => return ", not cacheable".to_owned(),
        };
        let entry = CodeEntry {
            program: serialized,
            warnings: String::new(),
            ..self.cache.requirements.clone()
        };
        match crate::program_cache::store_code(
            &self.cache.dir,
            &self.key,
            &entry,
            settings.cache_max_bytes,
        ) {
            Ok(()) => ", stored in the program cache".to_owned(),
            Err(e) => format!(", not stored in the program cache: {e}"),
        }
    }
}
