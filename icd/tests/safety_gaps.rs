//! The smaller gaps of issue #35 through the real loader: launches whose work-item count does not
//! fit in `size_t` (clEnqueueNDRangeKernel, clCommandNDRangeKernelKHR and
//! clGetKernelSuggestedLocalWorkSizeKHR share the check).
//!
//! The watchdog is on in this binary (set before the driver reads its settings): a launch the
//! driver wrongly accepts is stopped instead of holding the workers forever.

mod common;

use std::ffi::{c_void, CString};
use std::ptr::{null, null_mut};
use std::sync::Once;

use common::*;
use opencl3::kernel::Kernel;
use opencl_sys::*;

#[link(name = "OpenCL")]
extern "C" {
    fn clGetExtensionFunctionAddressForPlatform(
        platform: cl_platform_id,
        name: *const std::ffi::c_char,
    ) -> *mut c_void;
    fn clEnqueueNDRangeKernel(
        q: cl_command_queue,
        k: cl_kernel,
        dims: cl_uint,
        offset: *const usize,
        global: *const usize,
        local: *const usize,
        n: cl_uint,
        wait: *const cl_event,
        ev: *mut cl_event,
    ) -> cl_int;
}

/// The context, with the watchdog on (set before the driver reads its settings).
fn env() -> Env {
    static SETTINGS: Once = Once::new();
    SETTINGS.call_once(|| {
        std::env::set_var("FERROCL_KERNEL_TIMEOUT", "10");
    });
    Env::new()
}

/// Extension entry point `name` as the function pointer type `F`.
///
/// # Safety
/// `F` must be the function pointer type of `name`.
unsafe fn entry<F: Copy>(name: &str) -> F {
    let c = CString::new(name).unwrap();
    // SAFETY: a valid platform and a NUL-terminated name.
    let p = unsafe { clGetExtensionFunctionAddressForPlatform(platform().id(), c.as_ptr()) };
    assert!(!p.is_null(), "{name} is not reachable");
    assert_eq!(std::mem::size_of::<F>(), std::mem::size_of::<*mut c_void>());
    // SAFETY: a non-NULL function pointer of the type the caller vouches for.
    unsafe { std::mem::transmute_copy::<*mut c_void, F>(&p) }
}

#[track_caller]
fn expect(status: cl_int, want: cl_int, what: &str) {
    assert_eq!(
        status,
        want,
        "{what}: {} instead of {}",
        error_text(status),
        error_text(want)
    );
}

/// Ranges whose work-item count overflows `size_t`: (global, local).
fn overflowing_ranges() -> Vec<(Vec<usize>, Option<Vec<usize>>)> {
    vec![
        (vec![1 << 62, 4], None),
        (vec![1 << 63, 2], None),
        (vec![1 << 62, 4], Some(vec![1, 1])),
        (vec![1 << 22; 3], None),
        (vec![usize::MAX, usize::MAX, 2], None),
    ]
}

const NOTHING: &str = "kernel void nothing(void) {}";

fn enqueue(
    env: &Env,
    k: &Kernel,
    offset: Option<&[usize]>,
    global: &[usize],
    local: Option<&[usize]>,
) -> cl_int {
    let mut event = null_mut();
    // SAFETY: arrays of `global.len()` values; the event is released below.
    let status = unsafe {
        clEnqueueNDRangeKernel(
            env.queue.get(),
            k.get(),
            global.len() as cl_uint,
            offset.map_or(null(), <[usize]>::as_ptr),
            global.as_ptr(),
            local.map_or(null(), <[usize]>::as_ptr),
            0,
            null(),
            &mut event,
        )
    };
    if status == CL_SUCCESS {
        // SAFETY: the event the call returned.
        let _ = unsafe { cl3::event::release_event(event) };
        check(cl(env.queue.finish()), "clFinish");
    }
    status
}

#[test]
fn a_work_item_count_beyond_size_t_is_an_invalid_global_work_size() {
    let env = env();
    let program = env.program_from_source(NOTHING, "");
    let k = check(cl(Kernel::create(&program, "nothing")), "clCreateKernel");
    for (global, local) in overflowing_ranges() {
        expect(
            enqueue(&env, &k, None, &global, local.as_deref()),
            CL_INVALID_GLOBAL_WORK_SIZE,
            &format!("clEnqueueNDRangeKernel(global {global:?}, local {local:?})"),
        );
    }
    // The offset rule: offset + size past size_t's maximum.
    expect(
        enqueue(&env, &k, Some(&[usize::MAX - 5]), &[10], None),
        CL_INVALID_GLOBAL_OFFSET,
        "clEnqueueNDRangeKernel(offset 2^64-6, global 10)",
    );
    expect(
        enqueue(&env, &k, Some(&[0, 1 << 63]), &[1, 1 << 63], None),
        CL_INVALID_GLOBAL_OFFSET,
        "clEnqueueNDRangeKernel(offset [0, 2^63], global [1, 2^63])",
    );
    // An empty range stays empty whatever the other sizes are; ordinary ranges still run.
    for global in [
        vec![1 << 40, 1 << 40, 0],
        vec![0, 1 << 62, 1 << 62],
        vec![64, 4, 2],
    ] {
        expect(
            enqueue(&env, &k, None, &global, None),
            CL_SUCCESS,
            &format!("clEnqueueNDRangeKernel(global {global:?})"),
        );
    }
    let suggest: clGetKernelSuggestedLocalWorkSizeKHR_fn =
        // SAFETY: the extension's signature, as opencl-sys declares it.
        unsafe { entry("clGetKernelSuggestedLocalWorkSizeKHR") };
    for (global, _) in overflowing_ranges() {
        let mut local = [0usize; 3];
        // SAFETY: arrays of `global.len()` values.
        let status = unsafe {
            suggest.expect("clGetKernelSuggestedLocalWorkSizeKHR")(
                env.queue.get(),
                k.get(),
                global.len() as cl_uint,
                null(),
                global.as_ptr(),
                local.as_mut_ptr(),
            )
        };
        expect(
            status,
            CL_INVALID_GLOBAL_WORK_SIZE,
            &format!("clGetKernelSuggestedLocalWorkSizeKHR(global {global:?})"),
        );
    }
}

#[test]
fn a_recorded_launch_beyond_size_t_is_an_invalid_global_work_size() {
    let env = env();
    let program = env.program_from_source(NOTHING, "");
    let k = check(cl(Kernel::create(&program, "nothing")), "clCreateKernel");
    // SAFETY: the extension's signatures, as opencl-sys declares them.
    let (create, release, ndrange) = unsafe {
        (
            entry::<clCreateCommandBufferKHR_fn>("clCreateCommandBufferKHR")
                .expect("clCreateCommandBufferKHR"),
            entry::<clReleaseCommandBufferKHR_fn>("clReleaseCommandBufferKHR")
                .expect("clReleaseCommandBufferKHR"),
            entry::<clCommandNDRangeKernelKHR_fn>("clCommandNDRangeKernelKHR")
                .expect("clCommandNDRangeKernelKHR"),
        )
    };
    let queue = env.queue.get();
    let mut err = 0;
    // SAFETY: one valid queue, no properties.
    let cb = unsafe { create(1, &queue, null(), &mut err) };
    expect(err, CL_SUCCESS, "clCreateCommandBufferKHR");
    let record = |offset: Option<&[usize]>, global: &[usize], local: Option<&[usize]>| {
        // SAFETY: arrays of `global.len()` values; no sync points or mutable handle.
        unsafe {
            ndrange(
                cb,
                null_mut(),
                null(),
                k.get(),
                global.len() as cl_uint,
                offset.map_or(null(), <[usize]>::as_ptr),
                global.as_ptr(),
                local.map_or(null(), <[usize]>::as_ptr),
                0,
                null(),
                null_mut(),
                null_mut(),
            )
        }
    };
    for (global, local) in overflowing_ranges() {
        expect(
            record(None, &global, local.as_deref()),
            CL_INVALID_GLOBAL_WORK_SIZE,
            &format!("clCommandNDRangeKernelKHR(global {global:?}, local {local:?})"),
        );
    }
    expect(
        record(Some(&[usize::MAX - 5]), &[10], None),
        CL_INVALID_GLOBAL_OFFSET,
        "clCommandNDRangeKernelKHR(offset 2^64-6, global 10)",
    );
    expect(
        record(None, &[64, 4, 2], None),
        CL_SUCCESS,
        "clCommandNDRangeKernelKHR(global [64, 4, 2])",
    );
    // SAFETY: the command-buffer made above.
    expect(
        unsafe { release(cb) },
        CL_SUCCESS,
        "clReleaseCommandBufferKHR",
    );
}
