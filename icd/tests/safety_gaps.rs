//! The smaller gaps of issue #35 through the real loader: launches whose work-item count does not
//! fit in `size_t` (clEnqueueNDRangeKernel, clCommandNDRangeKernelKHR and
//! clGetKernelSuggestedLocalWorkSizeKHR share the check), images of another type than the kernel
//! argument declares, and SVM/USM copies and fills whose size wraps the address space.
//!
//! The watchdog is on in this binary (set before the driver reads its settings): a launch the
//! driver wrongly accepts is stopped instead of holding the workers forever.

mod common;
#[path = "common/images.rs"]
mod image_helpers;

use std::ffi::{c_void, CString};
use std::ptr::{null, null_mut};
use std::sync::Once;

use common::*;
use image_helpers::*;
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
    fn clSetKernelArg(k: cl_kernel, i: cl_uint, size: usize, v: *const c_void) -> cl_int;
    fn clEnqueueSVMMemcpy(
        q: cl_command_queue,
        blocking: cl_bool,
        dst: *mut c_void,
        src: *const c_void,
        size: usize,
        n: cl_uint,
        wait: *const cl_event,
        ev: *mut cl_event,
    ) -> cl_int;
    fn clEnqueueSVMMemFill(
        q: cl_command_queue,
        dst: *mut c_void,
        pattern: *const c_void,
        pattern_size: usize,
        size: usize,
        n: cl_uint,
        wait: *const cl_event,
        ev: *mut cl_event,
    ) -> cl_int;
    fn clSVMAlloc(
        c: cl_context,
        flags: cl_svm_mem_flags,
        size: usize,
        align: cl_uint,
    ) -> *mut c_void;
    fn clSVMFree(c: cl_context, p: *mut c_void);
}

/// The context, with the watchdog and images on (set before the driver reads its settings).
fn env() -> Env {
    static SETTINGS: Once = Once::new();
    SETTINGS.call_once(|| {
        std::env::set_var("FERROCL_KERNEL_TIMEOUT", "10");
        std::env::set_var("FERROCL_IMAGES", "on");
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

/// Kernels taking each image type (as `read_only` images, so any image's flags fit).
const IMAGE_KERNELS: &str = r#"
#pragma OPENCL EXTENSION cl_khr_depth_images : enable
kernel void take_2d(read_only image2d_t i, global int *o) { o[0] = get_image_width(i); }
kernel void take_3d(read_only image3d_t i, global int *o) { o[0] = get_image_width(i); }
kernel void take_2d_array(read_only image2d_array_t i, global int *o) { o[0] = get_image_width(i); }
kernel void take_1d(read_only image1d_t i, global int *o) { o[0] = get_image_width(i); }
kernel void take_1d_array(read_only image1d_array_t i, global int *o) { o[0] = get_image_width(i); }
kernel void take_1d_buffer(read_only image1d_buffer_t i, global int *o) { o[0] = get_image_width(i); }
kernel void take_2d_depth(read_only image2d_depth_t i, global int *o) { o[0] = get_image_width(i); }
kernel void take_2d_array_depth(read_only image2d_array_depth_t i, global int *o) { o[0] = get_image_width(i); }
"#;

/// The kernels of IMAGE_KERNELS and the image type and channel order each one takes.
const IMAGE_ARGUMENTS: [(&str, cl_mem_object_type, cl_channel_order); 8] = [
    ("take_2d", CL_MEM_OBJECT_IMAGE2D, CL_RGBA),
    ("take_3d", CL_MEM_OBJECT_IMAGE3D, CL_RGBA),
    ("take_2d_array", CL_MEM_OBJECT_IMAGE2D_ARRAY, CL_RGBA),
    ("take_1d", CL_MEM_OBJECT_IMAGE1D, CL_RGBA),
    ("take_1d_array", CL_MEM_OBJECT_IMAGE1D_ARRAY, CL_RGBA),
    ("take_1d_buffer", CL_MEM_OBJECT_IMAGE1D_BUFFER, CL_RGBA),
    ("take_2d_depth", CL_MEM_OBJECT_IMAGE2D, CL_DEPTH),
    ("take_2d_array_depth", CL_MEM_OBJECT_IMAGE2D_ARRAY, CL_DEPTH),
];

/// A read-write 4×4(×4) image of `image_type` and `order` (float channels), 1D buffers over
/// `buffer`.
fn image(
    env: &Env,
    image_type: cl_mem_object_type,
    order: cl_channel_order,
    buffer: cl_mem,
) -> cl_mem {
    let format = cl_image_format {
        image_channel_order: order,
        image_channel_data_type: CL_FLOAT,
    };
    let two_d = image_type != CL_MEM_OBJECT_IMAGE1D
        && image_type != CL_MEM_OBJECT_IMAGE1D_ARRAY
        && image_type != CL_MEM_OBJECT_IMAGE1D_BUFFER;
    let arrayed =
        image_type == CL_MEM_OBJECT_IMAGE1D_ARRAY || image_type == CL_MEM_OBJECT_IMAGE2D_ARRAY;
    let desc = cl_image_desc {
        image_type,
        image_width: 4,
        image_height: if two_d { 4 } else { 1 },
        image_depth: if image_type == CL_MEM_OBJECT_IMAGE3D {
            4
        } else {
            1
        },
        image_array_size: if arrayed { 4 } else { 1 },
        image_row_pitch: 0,
        image_slice_pitch: 0,
        num_mip_levels: 0,
        num_samples: 0,
        buffer: if image_type == CL_MEM_OBJECT_IMAGE1D_BUFFER {
            buffer
        } else {
            null_mut()
        },
    };
    let m = create(env, CL_MEM_READ_WRITE, &format, &desc, null_mut());
    expect(
        m.err().unwrap_or(CL_SUCCESS),
        CL_SUCCESS,
        &format!("clCreateImage({image_type:#x}, {order:#x})"),
    );
    m.unwrap()
}

#[test]
fn an_image_of_another_type_than_the_argument_is_refused() {
    let env = env();
    if env.other_icd {
        return;
    }
    let depth = env.has_extension("cl_khr_depth_images");
    assert!(depth, "Ferrocl reports cl_khr_depth_images with images on");
    let program = env.program_from_source(IMAGE_KERNELS, "");
    let backing = env.buffer_filled(64, 0f32);
    // (index in IMAGE_ARGUMENTS, image)
    let images: Vec<(usize, cl_mem)> = IMAGE_ARGUMENTS
        .iter()
        .enumerate()
        .filter(|(_, (_, _, order))| depth || *order != CL_DEPTH)
        .map(|(i, &(_, ty, order))| (i, image(&env, ty, order, backing.get())))
        .collect();
    let out = env.buffer_filled(1, 0i32);
    for (kernel_index, &(name, _, order)) in IMAGE_ARGUMENTS.iter().enumerate() {
        if !depth && order == CL_DEPTH {
            continue;
        }
        let k = check(cl(Kernel::create(&program, name)), "clCreateKernel");
        arg_buf(&k, 1, &out);
        for &(image_index, img) in &images {
            // SAFETY: a valid kernel; the value points at a cl_mem.
            let status = unsafe {
                clSetKernelArg(
                    k.get(),
                    0,
                    std::mem::size_of::<cl_mem>(),
                    (&img as *const cl_mem).cast(),
                )
            };
            let (_, img_ty, img_order) = IMAGE_ARGUMENTS[image_index];
            let what = format!("{name} given an image {img_ty:#x} of order {img_order:#x}");
            if image_index == kernel_index {
                expect(status, CL_SUCCESS, &what);
                // The matching image runs and the kernel sees its width.
                env.run(&k, &[1], None, None);
                assert_eq!(env.read(&out, 1)[0], 4, "{what}");
            } else {
                // API spec, clSetKernelArg: "the memory object is not valid for the kernel
                // argument specified by arg_index".
                expect(status, CL_INVALID_MEM_OBJECT, &what);
            }
        }
    }
    for (_, img) in images {
        release(img);
    }
}

/// A size that, added to any pointer above 16, passes the end of the address space.
const WRAPPING: usize = usize::MAX - 15;

#[test]
fn an_svm_or_usm_copy_whose_size_wraps_is_an_invalid_value() {
    let env = env();
    // SAFETY: a valid context; 4 KiB of coarse-grain SVM.
    let svm = unsafe { clSVMAlloc(env.context.get(), CL_MEM_READ_WRITE, 4096, 0) };
    assert!(!svm.is_null(), "clSVMAlloc");
    let host = vec![0u8; 4096];
    let host = host.as_ptr() as *mut c_void;
    let copies = [
        (svm, svm.wrapping_add(2048)),
        (svm.wrapping_add(2048), svm),
        (svm, host),
        (host, svm),
    ];
    for (dst, src) in copies {
        for size in [WRAPPING, usize::MAX] {
            // SAFETY: a valid queue; the driver must refuse the size before touching memory.
            let status = unsafe {
                clEnqueueSVMMemcpy(
                    env.queue.get(),
                    CL_TRUE,
                    dst,
                    src,
                    size,
                    0,
                    null(),
                    null_mut(),
                )
            };
            expect(
                status,
                CL_INVALID_VALUE,
                &format!("clEnqueueSVMMemcpy({dst:?}, {src:?}, {size:#x})"),
            );
        }
    }
    type Memcpy = unsafe extern "C" fn(
        cl_command_queue,
        cl_bool,
        *mut c_void,
        *const c_void,
        usize,
        cl_uint,
        *const cl_event,
        *mut cl_event,
    ) -> cl_int;
    type HostAlloc = unsafe extern "C" fn(
        cl_context,
        *const cl_mem_properties_intel,
        usize,
        cl_uint,
        *mut cl_int,
    ) -> *mut c_void;
    type Free = unsafe extern "C" fn(cl_context, *mut c_void) -> cl_int;
    // SAFETY: the extension's signatures.
    let (memcpy, host_alloc, free) = unsafe {
        (
            entry::<Memcpy>("clEnqueueMemcpyINTEL"),
            entry::<HostAlloc>("clHostMemAllocINTEL"),
            entry::<Free>("clMemFreeINTEL"),
        )
    };
    let mut err = 0;
    // SAFETY: a valid context; 4 KiB of host USM.
    let usm = unsafe { host_alloc(env.context.get(), null(), 4096, 0, &mut err) };
    expect(err, CL_SUCCESS, "clHostMemAllocINTEL");
    for (dst, src) in [(usm, usm.wrapping_add(2048)), (usm, host), (host, usm)] {
        // SAFETY: as above.
        let status = unsafe {
            memcpy(
                env.queue.get(),
                CL_TRUE,
                dst,
                src,
                WRAPPING,
                0,
                null(),
                null_mut(),
            )
        };
        expect(
            status,
            CL_INVALID_VALUE,
            &format!("clEnqueueMemcpyINTEL({dst:?}, {src:?}, {WRAPPING:#x})"),
        );
    }
    // An overlap is still an overlap.
    // SAFETY: both ranges inside the allocation.
    let status = unsafe {
        clEnqueueSVMMemcpy(
            env.queue.get(),
            CL_TRUE,
            svm,
            svm.wrapping_add(8),
            64,
            0,
            null(),
            null_mut(),
        )
    };
    expect(
        status,
        CL_MEM_COPY_OVERLAP,
        "clEnqueueSVMMemcpy(overlapping)",
    );
    // SAFETY: allocations made above, no command pending.
    unsafe {
        expect(free(env.context.get(), usm), CL_SUCCESS, "clMemFreeINTEL");
        clSVMFree(env.context.get(), svm);
    }
}

#[test]
fn an_svm_or_usm_fill_whose_size_wraps_is_an_invalid_value() {
    let env = env();
    type Fill = unsafe extern "C" fn(
        cl_command_queue,
        *mut c_void,
        *const c_void,
        usize,
        usize,
        cl_uint,
        *const cl_event,
        *mut cl_event,
    ) -> cl_int;
    type Memset = unsafe extern "C" fn(
        cl_command_queue,
        *mut c_void,
        cl_int,
        usize,
        cl_uint,
        *const cl_event,
        *mut cl_event,
    ) -> cl_int;
    // SAFETY: the extension's signatures.
    let (fill, memset) = unsafe {
        (
            entry::<Fill>("clEnqueueMemFillINTEL"),
            entry::<Memset>("clEnqueueMemsetINTEL"),
        )
    };
    // Host memory, which fine-grain system SVM lets a command reach. Every command waits for
    // a gate that then fails, so one wrongly accepted never runs.
    let host = vec![0u32; 1024];
    let host = host.as_ptr() as *mut c_void;
    let gate = cl3::event::create_user_event(env.context.get()).expect("clCreateUserEvent");
    let pattern = 0u32;
    let pattern_ptr = (&pattern as *const u32).cast();
    let queue = env.queue.get();
    // Multiples of the 4-byte pattern, past the end of the address space from `host`.
    let size = WRAPPING & !3;
    // SAFETY: a valid queue, a gate event, a 4-byte pattern; the driver must refuse the size
    // before touching memory.
    let statuses = unsafe {
        [
            (
                "clEnqueueSVMMemFill",
                clEnqueueSVMMemFill(queue, host, pattern_ptr, 4, size, 1, &gate, null_mut()),
            ),
            (
                "clEnqueueMemFillINTEL",
                fill(queue, host, pattern_ptr, 4, size, 1, &gate, null_mut()),
            ),
            (
                "clEnqueueMemsetINTEL",
                memset(queue, host, 0, size, 1, &gate, null_mut()),
            ),
        ]
    };
    cl3::event::set_user_event_status(gate, -1).expect("clSetUserEventStatus");
    check(cl(env.queue.finish()), "clFinish");
    // SAFETY: the gate made above.
    let _ = unsafe { cl3::event::release_event(gate) };
    for (what, status) in statuses {
        expect(
            status,
            CL_INVALID_VALUE,
            &format!("{what}(host, {size:#x})"),
        );
    }
}
