//! Contexts: the devices they span, their creation properties and destructor callbacks.

use std::sync::{Arc, Mutex};

use opencl_sys::*;

use crate::object::{Base, CLResult, Tag};
use crate::platform::Device;

pub type ContextCallback = unsafe extern "C" fn(cl_context, *mut std::ffi::c_void);

#[repr(C)]
pub struct Context {
    base: Base,
    pub devices: Vec<Arc<Device>>,
    /// The properties as given (zero-terminated list, or empty), for `CL_CONTEXT_PROPERTIES`.
    pub properties: Vec<cl_context_properties>,
    destructors: Mutex<Vec<(ContextCallback, usize)>>,
}
crate::cl_object!(Context, Context, CL_INVALID_CONTEXT);

impl Context {
    pub fn new(devices: Vec<Arc<Device>>, properties: Vec<cl_context_properties>) -> Arc<Self> {
        Arc::new(Context {
            base: Base::new(Tag::Context),
            devices,
            properties,
            destructors: Mutex::new(Vec::new()),
        })
    }

    pub fn has_device(&self, d: &Device) -> bool {
        self.devices.iter().any(|x| std::ptr::eq(&**x, d))
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
