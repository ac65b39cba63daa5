//! The one platform and its one CPU device (with the device's rayon pool). Both live for the
//! whole process; retain/release on them are no-ops.

use std::sync::{Arc, OnceLock};

use crate::config::{thread_count, DeviceConfig};
use crate::object::{Base, Tag};

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
        let threads = thread_count();
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .thread_name(|i| format!("ferrocl-worker-{i}"))
            .build()
            .unwrap_or_else(|_| {
                rayon::ThreadPoolBuilder::new()
                    .num_threads(1)
                    .build()
                    .expect("a one-thread pool can always be built")
            });
        let threads = pool.current_num_threads();
        let device = Arc::new(Device {
            base: Base::new(Tag::Device),
            config: DeviceConfig::detect(threads),
            pool,
        });
        Platform {
            base: Base::new(Tag::Platform),
            devices: vec![device],
        }
    })
}

impl Platform {
    pub fn is(&self, other: *const Platform) -> bool {
        std::ptr::eq(self, other)
    }
}
