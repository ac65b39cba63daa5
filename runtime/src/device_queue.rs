//! On-device queues (OpenCL API 3.0 §5.1, `__opencl_c_device_enqueue`): the queues kernels
//! enqueue child kernels into. They are their own object type (tag `DeviceQueue`, invalid
//! handle `CL_INVALID_COMMAND_QUEUE`), so every host command, `clFlush`, `clFinish` and the
//! command-buffer functions refuse them as they refuse any handle that is no host queue; the
//! queue functions that take both (`clGetCommandQueueInfo`, retain, release) try both types.
//!
//! A context keeps a registry of its device queues ([`DeviceQueues`]): weak references, the
//! default queue of each device, and the limit of `CL_DEVICE_MAX_ON_DEVICE_QUEUES`. A kernel
//! sees a queue as its handle's address (`queue_t`); the launch's device-enqueue host
//! (device_enqueue.rs) finds the queue again through the registry, so an address that names no
//! queue of the context is refused without being dereferenced.

use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex, MutexGuard, Weak};

use opencl_sys::*;

use crate::context::Context;
use crate::object::{Base, CLResult, Tag};
use crate::platform::Device;

#[repr(C)]
pub struct DeviceQueue {
    base: Base,
    pub context: Arc<Context>,
    pub device: Arc<Device>,
    /// `CL_QUEUE_PROPERTIES` as given: `CL_QUEUE_ON_DEVICE`, out-of-order, and
    /// `CL_QUEUE_PROFILING_ENABLE` / `CL_QUEUE_ON_DEVICE_DEFAULT` when asked for.
    pub properties: cl_command_queue_properties,
    /// As given to clCreateCommandQueueWithProperties (`CL_QUEUE_PROPERTIES_ARRAY`).
    pub properties_array: Vec<cl_queue_properties>,
    /// `CL_QUEUE_SIZE`: bytes the commands pending on it may take (device_enqueue.rs counts
    /// them).
    pub size: u32,
}
crate::cl_object!(DeviceQueue, DeviceQueue, CL_INVALID_COMMAND_QUEUE);

/// What [`DeviceQueue::create`] made.
pub enum Created {
    /// A new queue: the caller hands it out as a new handle.
    New(Arc<DeviceQueue>),
    /// `CL_QUEUE_ON_DEVICE_DEFAULT` while the device already had a default queue in the
    /// context: that queue, its reference count already incremented (API spec: "will return
    /// the default device queue that has already been created and increment its retain count
    /// by 1").
    ExistingDefault(Arc<DeviceQueue>),
}

impl DeviceQueue {
    /// `clCreateCommandQueueWithProperties` with `CL_QUEUE_ON_DEVICE` in `properties`: checks
    /// what the device supports and the queue limits, then makes the queue (or hands out the
    /// default one, see [`Created`]). `size` is `CL_QUEUE_SIZE` if given.
    pub fn create(
        context: &Arc<Context>,
        device: &Arc<Device>,
        properties: cl_command_queue_properties,
        properties_array: Vec<cl_queue_properties>,
        size: Option<u64>,
    ) -> CLResult<Created> {
        let limits = device
            .config
            .device_queues
            .ok_or(CL_INVALID_QUEUE_PROPERTIES)?;
        let on_device = CL_QUEUE_ON_DEVICE as cl_command_queue_properties;
        let default = CL_QUEUE_ON_DEVICE_DEFAULT as cl_command_queue_properties;
        let out_of_order = CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE as cl_command_queue_properties;
        // Device queues are out-of-order (API spec: ON_DEVICE needs the out-of-order mode).
        if properties & on_device == 0 || properties & out_of_order == 0 {
            return Err(CL_INVALID_VALUE);
        }
        if properties & !(limits.properties | on_device | default) != 0 {
            return Err(CL_INVALID_QUEUE_PROPERTIES);
        }
        let size = match size {
            None => limits.preferred_size,
            Some(s) if s == 0 || s > u64::from(limits.max_size) => return Err(CL_INVALID_VALUE),
            Some(s) => s as u32,
        };
        let registry = &context.device_queues;
        let mut state = registry.lock();
        state.prune();
        let wants_default = properties & default != 0;
        if wants_default {
            if let Some(q) = state.default_of(device) {
                if q.retain() {
                    return Ok(Created::ExistingDefault(q));
                }
            }
        }
        // CL_DEVICE_MAX_ON_DEVICE_QUEUES counts the queues besides the default one.
        if !wants_default {
            let others = state
                .live_of(device)
                .filter(|q| !state.is_default(q))
                .count();
            if others >= limits.max_queues as usize {
                return Err(CL_OUT_OF_RESOURCES);
            }
        }
        let queue = Arc::new(DeviceQueue {
            base: Base::new(Tag::DeviceQueue),
            context: context.clone(),
            device: device.clone(),
            properties,
            properties_array,
            size,
        });
        state.queues.push(Arc::downgrade(&queue));
        if wants_default {
            state.set_default(device, &queue);
        }
        Ok(Created::New(queue))
    }

    /// Whether its commands record profiling times (`CL_QUEUE_PROFILING_ENABLE`).
    pub fn profiling(&self) -> bool {
        self.properties & CL_QUEUE_PROFILING_ENABLE as cl_command_queue_properties != 0
    }

    /// The `queue_t` kernels see for it: its handle's address.
    pub fn address(&self) -> u64 {
        self as *const DeviceQueue as u64
    }

    /// Whether the application still holds it (its CL reference count is not 0).
    fn held(&self) -> bool {
        self.base.ref_count() > 0
    }

    /// clRetainCommandQueue's increment, unless the count already reached 0.
    fn retain(&self) -> bool {
        self.base
            .cl_refs
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |c| {
                (c > 0).then_some(c + 1)
            })
            .is_ok()
    }

    /// `clSetDefaultDeviceCommandQueue`: makes this queue the default device queue of
    /// `device` in `context`.
    pub fn make_default(self: &Arc<Self>, context: &Context, device: &Arc<Device>) -> CLResult<()> {
        if !std::ptr::eq(&*self.context, context) || !Arc::ptr_eq(&self.device, device) {
            return Err(CL_INVALID_COMMAND_QUEUE);
        }
        let mut state = context.device_queues.lock();
        state.prune();
        state.set_default(device, self);
        Ok(())
    }
}

/// The device queues of one context.
#[derive(Default)]
pub struct DeviceQueues {
    state: Mutex<Registry>,
}

#[derive(Default)]
struct Registry {
    queues: Vec<Weak<DeviceQueue>>,
    /// Each device's default queue (the device by address).
    defaults: Vec<(usize, Weak<DeviceQueue>)>,
}

impl Registry {
    /// Forgets queues that no longer exist.
    fn prune(&mut self) {
        self.queues.retain(|q| q.strong_count() > 0);
        self.defaults.retain(|(_, q)| q.strong_count() > 0);
    }

    /// The queues of `device` the application still holds.
    fn live_of<'a>(&'a self, device: &'a Device) -> impl Iterator<Item = Arc<DeviceQueue>> + 'a {
        self.queues
            .iter()
            .filter_map(Weak::upgrade)
            .filter(move |q| std::ptr::eq(&*q.device, device) && q.held())
    }

    fn default_of(&self, device: &Device) -> Option<Arc<DeviceQueue>> {
        let key = device as *const Device as usize;
        self.defaults
            .iter()
            .find(|(d, _)| *d == key)
            .and_then(|(_, q)| q.upgrade())
            .filter(|q| q.held())
    }

    fn is_default(&self, queue: &Arc<DeviceQueue>) -> bool {
        self.default_of(&queue.device)
            .is_some_and(|d| Arc::ptr_eq(&d, queue))
    }

    fn set_default(&mut self, device: &Device, queue: &Arc<DeviceQueue>) {
        let key = device as *const Device as usize;
        self.defaults.retain(|(d, _)| *d != key);
        self.defaults.push((key, Arc::downgrade(queue)));
    }
}

impl DeviceQueues {
    fn lock(&self) -> MutexGuard<'_, Registry> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The default device queue of `device` (`CL_QUEUE_DEVICE_DEFAULT`, `get_default_queue`),
    /// while the application holds it.
    pub fn default_of(&self, device: &Device) -> Option<Arc<DeviceQueue>> {
        self.lock().default_of(device)
    }

    /// The queue whose `queue_t` is `address`, if it is one of this context's and still
    /// exists (a launch holds the queues its arguments name).
    pub fn find(&self, address: u64) -> Option<Arc<DeviceQueue>> {
        if address == 0 {
            return None;
        }
        self.lock()
            .queues
            .iter()
            .filter_map(Weak::upgrade)
            .find(|q| q.address() == address)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::object::ClObject;

    fn context() -> (Arc<Context>, Arc<Device>) {
        let settings = crate::settings::Settings::parse(|_| None, |w| panic!("{w}"));
        let device = crate::platform::test_device(&settings);
        (Context::new(vec![device.clone()], Vec::new()), device)
    }

    const ON: cl_command_queue_properties = (CL_QUEUE_ON_DEVICE
        | CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE)
        as cl_command_queue_properties;
    const DEFAULT: cl_command_queue_properties = ON | CL_QUEUE_ON_DEVICE_DEFAULT;

    fn new(
        c: &Arc<Context>,
        d: &Arc<Device>,
        props: cl_command_queue_properties,
    ) -> CLResult<Arc<DeviceQueue>> {
        match DeviceQueue::create(c, d, props, Vec::new(), None)? {
            Created::New(q) => Ok(q),
            Created::ExistingDefault(q) => Ok(q),
        }
    }

    #[test]
    fn creation_rules() {
        let (c, d) = context();
        let limits = d.config.device_queues.unwrap();
        let only = CL_QUEUE_ON_DEVICE as cl_command_queue_properties;
        assert_eq!(new(&c, &d, only).err(), Some(CL_INVALID_VALUE));
        let q = new(&c, &d, ON).unwrap();
        assert_eq!(q.size, limits.preferred_size);
        assert!(!q.profiling());
        let size = |s| DeviceQueue::create(&c, &d, ON, Vec::new(), Some(s)).err();
        assert_eq!(size(0), Some(CL_INVALID_VALUE));
        assert_eq!(size(u64::from(limits.max_size) + 1), Some(CL_INVALID_VALUE));
        assert_eq!(
            c.device_queues.find(q.address()).map(|f| f.address()),
            Some(q.address())
        );
        assert!(c.device_queues.find(0).is_none());
        assert!(c.device_queues.find(q.address() + 8).is_none());
        assert!(c.device_queues.default_of(&d).is_none());
    }

    #[test]
    fn the_default_queue_is_shared_and_replaceable() {
        let (c, d) = context();
        let first = new(&c, &d, DEFAULT).unwrap();
        let again = DeviceQueue::create(&c, &d, DEFAULT, Vec::new(), None).unwrap();
        let Created::ExistingDefault(again) = again else {
            panic!("a second default queue")
        };
        assert!(Arc::ptr_eq(&first, &again));
        assert_eq!(first.base().ref_count(), 2);
        let other = new(&c, &d, ON).unwrap();
        other.make_default(&c, &d).unwrap();
        assert!(Arc::ptr_eq(
            &c.device_queues.default_of(&d).unwrap(),
            &other
        ));
        // The application's last release ends it as the default.
        other.base().cl_refs.store(0, Ordering::Release);
        assert!(c.device_queues.default_of(&d).is_none());
        let (c2, d2) = context();
        assert_eq!(
            first.make_default(&c2, &d2).err(),
            Some(CL_INVALID_COMMAND_QUEUE)
        );
    }

    #[test]
    fn the_queue_limit_leaves_room_for_the_default() {
        let (c, d) = context();
        let max = d.config.device_queues.unwrap().max_queues as usize;
        let _default = new(&c, &d, DEFAULT).unwrap();
        let mut held: Vec<_> = (0..max).map(|_| new(&c, &d, ON).unwrap()).collect();
        assert_eq!(new(&c, &d, ON).err(), Some(CL_OUT_OF_RESOURCES));
        held.pop();
        assert!(new(&c, &d, ON).is_ok());
    }
}
