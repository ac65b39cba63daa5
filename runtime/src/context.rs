//! Contexts: the devices they span, their creation properties (and what they ask of the
//! device: memory initialisation, termination), destructor callbacks, SVM allocations and
//! on-device queues.

use std::sync::{Arc, Mutex};

use opencl_sys::*;

use crate::object::{Base, CLResult, Tag};
use crate::platform::Device;
use crate::svm::{SvmLevel, SvmRegistry};
use crate::termination::Termination;

pub type ContextCallback = unsafe extern "C" fn(cl_context, *mut std::ffi::c_void);

#[repr(C)]
pub struct Context {
    base: Base,
    pub devices: Vec<Arc<Device>>,
    /// The properties as given (zero-terminated list, or empty), for `CL_CONTEXT_PROPERTIES`.
    pub properties: Vec<cl_context_properties>,
    /// The SVM allocations made in this context; dropping the context frees what is left.
    pub svm: SvmRegistry,
    /// The on-device queues made in this context and each device's default one.
    pub device_queues: crate::device_queue::DeviceQueues,
    /// `CL_CONTEXT_MEMORY_INITIALIZE_KHR` (cl_khr_initialize_memory): which memory kernels
    /// find zeroed.
    pub initialize: MemoryInitialize,
    /// `CL_CONTEXT_TERMINATE_KHR` set: what clTerminateContextKHR ends (None otherwise).
    pub termination: Option<Termination>,
    destructors: Mutex<Vec<(ContextCallback, usize)>>,
}

/// The bits of `CL_CONTEXT_MEMORY_INITIALIZE_KHR`: local memory is zeroed before each
/// work-group (executor.rs), private variables before each work-item uses them (codegen's
/// `BuildOptions::zero_private` and the work-item frames in executor.rs).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MemoryInitialize {
    pub local: bool,
    pub private: bool,
}
crate::cl_object!(Context, Context, CL_INVALID_CONTEXT);

impl Context {
    /// `properties` were checked by the API layer (known keys, valid values).
    pub fn new(devices: Vec<Arc<Device>>, properties: Vec<cl_context_properties>) -> Arc<Self> {
        let value = |key: cl_uint| {
            properties
                .chunks_exact(2)
                .find(|kv| kv[0] == key as cl_context_properties)
                .map(|kv| kv[1])
        };
        let bits = value(CL_CONTEXT_MEMORY_INITIALIZE_KHR).unwrap_or(0) as u64;
        let initialize = MemoryInitialize {
            local: bits & CL_CONTEXT_MEMORY_INITIALIZE_LOCAL_KHR != 0,
            private: bits & CL_CONTEXT_MEMORY_INITIALIZE_PRIVATE_KHR != 0,
        };
        let termination = value(CL_CONTEXT_TERMINATE_KHR)
            .or_else(|| value(crate::config::CL_CONTEXT_TERMINATE_KHR_1X))
            .is_some_and(|v| v == CL_TRUE as cl_context_properties)
            .then(Termination::default);
        Arc::new(Context {
            base: Base::new(Tag::Context),
            devices,
            properties,
            svm: SvmRegistry::default(),
            device_queues: Default::default(),
            initialize,
            termination,
            destructors: Mutex::new(Vec::new()),
        })
    }

    /// `CL_CONTEXT_TERMINATED_KHR` once the context was terminated (cl_khr_terminate_context):
    /// what creating an object in it or enqueueing a command returns then.
    pub fn check_live(&self) -> CLResult<()> {
        self.termination
            .as_ref()
            .map_or(Ok(()), Termination::check_live)
    }

    pub fn has_device(&self, d: &Device) -> bool {
        self.devices.iter().any(|x| std::ptr::eq(&**x, d))
    }

    /// The SVM level every device of the context has.
    pub fn svm_level(&self) -> SvmLevel {
        let levels = self.devices.iter().map(|d| d.config.settings.svm);
        if levels.clone().any(|l| l == SvmLevel::Off) {
            SvmLevel::Off
        } else if levels.clone().any(|l| l == SvmLevel::CoarseGrain) {
            SvmLevel::CoarseGrain
        } else {
            SvmLevel::FineGrain
        }
    }

    /// The smallest CL_DEVICE_MAX_MEM_ALLOC_SIZE of the context's devices.
    pub fn max_mem_alloc_size(&self) -> u64 {
        self.devices
            .iter()
            .map(|d| d.config.max_mem_alloc_size)
            .min()
            .unwrap_or(0)
    }

    pub fn add_destructor(&self, f: ContextCallback, user_data: usize) -> CLResult<()> {
        self.destructors
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push((f, user_data));
        Ok(())
    }
}

impl Drop for Context {
    fn drop(&mut self) {
        let cbs = std::mem::take(
            self.destructors
                .get_mut()
                .unwrap_or_else(|p| p.into_inner()),
        );
        let me = self as *mut Context as cl_context;
        // Spec: callbacks run in reverse order of registration.
        for (f, ud) in cbs.into_iter().rev() {
            // SAFETY: the application registered `f` for this context with this user data;
            // the handle is still readable while Drop runs.
            unsafe { f(me, ud as *mut std::ffi::c_void) };
        }
    }
}
