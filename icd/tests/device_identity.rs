//! Device identity extensions through the loader: `cl_khr_device_uuid` (UUIDs stable across
//! queries and processes of one driver build, device and driver distinct, no LUID),
//! `cl_khr_extended_versioning` and `cl_khr_create_command_queue` (the KHR entry point makes
//! a working queue).

mod common;

use std::ffi::{c_void, CString};
use std::process::Command;
use std::ptr;

use common::*;
use opencl_sys::*;

#[link(name = "OpenCL")]
extern "C" {
    fn clGetExtensionFunctionAddressForPlatform(
        platform: cl_platform_id,
        name: *const std::ffi::c_char,
    ) -> *mut c_void;
}

fn uuids() -> (Vec<u8>, Vec<u8>) {
    let id = device_id();
    let get = |param| cl3::device::get_device_data(id, param).expect("clGetDeviceInfo");
    (get(CL_DEVICE_UUID_KHR), get(CL_DRIVER_UUID_KHR))
}

#[test]
fn uuids_are_stable_and_distinct() {
    let (device, driver) = uuids();
    // The child prints its UUIDs; they must equal the parent's.
    if std::env::var("FERROCL_UUID_CHILD").is_ok() {
        println!("UUIDS {device:?} {driver:?}");
        return;
    }
    assert_eq!((device.len(), driver.len()), (16, 16));
    assert_ne!(device, driver);
    assert_ne!(device, vec![0u8; 16]);
    for u in [&device, &driver] {
        assert_eq!(u[6] >> 4, 8, "version 8 (custom) UUID");
        assert_eq!(u[8] >> 6, 0b10, "RFC 9562 variant");
    }
    assert_eq!(
        uuids(),
        (device.clone(), driver.clone()),
        "stable across queries"
    );
    let exe = std::env::current_exe().unwrap();
    let out = Command::new(exe)
        .args(["uuids_are_stable_and_distinct", "--exact", "--nocapture"])
        .env("FERROCL_UUID_CHILD", "1")
        .output()
        .expect("run the test binary again");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains(&format!("UUIDS {device:?} {driver:?}")),
        "another process sees other UUIDs:\n{stdout}"
    );
    let id = device_id();
    let luid_valid = cl3::device::get_device_data(id, CL_DEVICE_LUID_VALID_KHR).unwrap();
    assert_eq!(u32::from_ne_bytes(luid_valid[..4].try_into().unwrap()), 0);
    let node_mask = cl3::device::get_device_data(id, CL_DEVICE_NODE_MASK_KHR).unwrap();
    assert_eq!(node_mask, vec![0u8; 4]);
}

#[test]
fn versioning_and_create_command_queue_extensions() {
    let env = Env::new();
    let ext = check(cl(env.device.extensions()), "CL_DEVICE_EXTENSIONS");
    for name in [
        "cl_khr_extended_versioning",
        "cl_khr_device_uuid",
        "cl_khr_create_command_queue",
    ] {
        assert!(ext.split(' ').any(|e| e == name), "{name} missing: {ext}");
    }
    let name = CString::new("clCreateCommandQueueWithPropertiesKHR").unwrap();
    // SAFETY: a valid platform and a NUL-terminated name.
    let f = unsafe { clGetExtensionFunctionAddressForPlatform(platform().id(), name.as_ptr()) };
    assert!(!f.is_null());
    type Create = unsafe extern "C" fn(
        cl_context,
        cl_device_id,
        *const cl_queue_properties,
        *mut cl_int,
    ) -> cl_command_queue;
    // SAFETY: the extension gives the function this signature.
    let create: Create = unsafe { std::mem::transmute::<*mut c_void, Create>(f) };
    let props = [
        CL_QUEUE_PROPERTIES as cl_queue_properties,
        CL_QUEUE_PROFILING_ENABLE,
        0,
    ];
    let mut err = 0;
    // SAFETY: valid context and device, zero-terminated properties.
    let q = unsafe { create(env.context.get(), env.device.id(), props.as_ptr(), &mut err) };
    assert_eq!(err, CL_SUCCESS);
    assert!(!q.is_null());
    // SAFETY: the queue just created: a marker runs on it, then it is released.
    unsafe {
        let e = cl3::command_queue::enqueue_marker_with_wait_list(q, 0, ptr::null())
            .expect("a marker on the KHR queue");
        cl3::event::wait_for_events(&[e]).expect("marker completes");
        cl3::event::release_event(e).unwrap();
        cl3::command_queue::release_command_queue(q).unwrap();
    }
}
