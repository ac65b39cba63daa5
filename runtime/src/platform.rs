//! The one platform and its one CPU device (with the device's rayon pool). Both live for the
//! whole process; retain/release on them are no-ops.

use std::sync::{Arc, OnceLock};

use crate::config::DeviceConfig;
use crate::object::{Base, Tag};
use crate::settings::Settings;

#[repr(C)]
pub struct Platform {
    base: Base,
    pub devices: Vec<Arc<Device>>,
}
crate::cl_object!(Platform, Platform, CL_INVALID_PLATFORM);

#[repr(C)]
pub struct Device {
    base: Base,
    pub config: DeviceConfig,
    /// Runs work-groups; one pool per device, `compute_units` threads.
    pub pool: rayon::ThreadPool,
}
crate::cl_object!(Device, Device, CL_INVALID_DEVICE);

static PLATFORM: OnceLock<Platform> = OnceLock::new();

/// The platform, created on first use (after the icd layer has set the dispatch pointer).
pub fn platform() -> &'static Platform {
    PLATFORM.get_or_init(|| {
        // The FERROCL_* settings are read once, here, when the platform is first used.
        let settings = Settings::from_env();
        let pin = settings.pin_threads;
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(settings.threads)
            .thread_name(|i| format!("ferrocl-worker-{i}"))
            // Work-group functions keep private memory on the stack (codegen's
            // PRIVATE_STACK_LIMIT); the reservation is virtual until touched.
            .stack_size(ferrocl_codegen::KERNEL_THREAD_STACK_BYTES)
            .start_handler(move |i| {
                if pin {
                    pin_current_thread(i);
                }
            })
            .build()
            .unwrap_or_else(|_| {
                rayon::ThreadPoolBuilder::new()
                    .num_threads(1)
                    .stack_size(ferrocl_codegen::KERNEL_THREAD_STACK_BYTES)
                    .build()
                    .expect("a one-thread pool can always be built")
            });
        let threads = pool.current_num_threads();
        let device = Arc::new(Device {
            base: Base::new(Tag::Device),
            config: DeviceConfig::detect(&settings, threads),
            pool,
        });
        Platform {
            base: Base::new(Tag::Platform),
            devices: vec![device],
        }
    })
}

/// A device of its own with `settings` (one worker), for unit tests of features the process's
/// settings leave off.
#[cfg(test)]
pub(crate) fn test_device(settings: &Settings) -> Arc<Device> {
    Arc::new(Device {
        base: Base::new(Tag::Device),
        config: DeviceConfig::detect(settings, 1),
        pool: rayon::ThreadPoolBuilder::new()
            .num_threads(1)
            .build()
            .expect("a one-thread pool"),
    })
}

impl Platform {
    pub fn is(&self, other: *const Platform) -> bool {
        std::ptr::eq(self, other)
    }
}

/// Pins the calling worker thread to the `index`-th CPU this process may run on.
fn pin_current_thread(index: usize) {
    // SAFETY: cpu_set_t is plain data; sched_getaffinity/sched_setaffinity with pid 0 act on
    // the calling thread and only read/write the set passed with its exact size.
    unsafe {
        let mut allowed: libc::cpu_set_t = std::mem::zeroed();
        if libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut allowed) != 0 {
            return;
        }
        let cpus: Vec<usize> = (0..libc::CPU_SETSIZE as usize)
            .filter(|&c| libc::CPU_ISSET(c, &allowed))
            .collect();
        if cpus.is_empty() {
            return;
        }
        let mut one: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(cpus[index % cpus.len()], &mut one);
        if libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &one) != 0 {
            eprintln!("ferrocl: FERROCL_PIN_THREADS: could not pin worker {index}");
        }
    }
}
