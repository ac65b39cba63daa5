//! Image helpers shared by the image tests (`images/`, `image_kernels.rs`, `image_mipmaps/`,
//! `safety_gaps.rs`, `small_extensions.rs`): the image and sampler entry points through the
//! loader, a context with images switched on, and creation, read, write and query wrappers.
//! Included with `#[path]` by the tests that use images (not part of `common`, which every
//! test binary compiles).
#![allow(dead_code)]

use std::ffi::c_void;
use std::ptr::{null, null_mut};
use std::sync::Once;

use crate::common::{check, Env};
use opencl_sys::*;

#[link(name = "OpenCL")]
extern "C" {
    pub fn clCreateImage(
        c: cl_context,
        f: cl_mem_flags,
        fmt: *const cl_image_format,
        desc: *const cl_image_desc,
        host: *mut c_void,
        err: *mut cl_int,
    ) -> cl_mem;
    pub fn clCreateImage2D(
        c: cl_context,
        f: cl_mem_flags,
        fmt: *const cl_image_format,
        w: usize,
        h: usize,
        row: usize,
        host: *mut c_void,
        err: *mut cl_int,
    ) -> cl_mem;
    pub fn clCreateImage3D(
        c: cl_context,
        f: cl_mem_flags,
        fmt: *const cl_image_format,
        w: usize,
        h: usize,
        d: usize,
        row: usize,
        slice: usize,
        host: *mut c_void,
        err: *mut cl_int,
    ) -> cl_mem;
    pub fn clCreateBuffer(
        c: cl_context,
        f: cl_mem_flags,
        size: usize,
        host: *mut c_void,
        err: *mut cl_int,
    ) -> cl_mem;
    pub fn clReleaseMemObject(m: cl_mem) -> cl_int;
    pub fn clGetImageInfo(
        m: cl_mem,
        name: cl_image_info,
        size: usize,
        v: *mut c_void,
        ret: *mut usize,
    ) -> cl_int;
    pub fn clGetMemObjectInfo(
        m: cl_mem,
        name: cl_mem_info,
        size: usize,
        v: *mut c_void,
        ret: *mut usize,
    ) -> cl_int;
    pub fn clGetSupportedImageFormats(
        c: cl_context,
        f: cl_mem_flags,
        t: cl_mem_object_type,
        n: cl_uint,
        formats: *mut cl_image_format,
        count: *mut cl_uint,
    ) -> cl_int;
    pub fn clEnqueueReadImage(
        q: cl_command_queue,
        m: cl_mem,
        blocking: cl_bool,
        origin: *const usize,
        region: *const usize,
        row: usize,
        slice: usize,
        p: *mut c_void,
        n: cl_uint,
        w: *const cl_event,
        e: *mut cl_event,
    ) -> cl_int;
    pub fn clEnqueueWriteImage(
        q: cl_command_queue,
        m: cl_mem,
        blocking: cl_bool,
        origin: *const usize,
        region: *const usize,
        row: usize,
        slice: usize,
        p: *const c_void,
        n: cl_uint,
        w: *const cl_event,
        e: *mut cl_event,
    ) -> cl_int;
    pub fn clEnqueueCopyImage(
        q: cl_command_queue,
        s: cl_mem,
        d: cl_mem,
        so: *const usize,
        dst_origin: *const usize,
        region: *const usize,
        n: cl_uint,
        w: *const cl_event,
        e: *mut cl_event,
    ) -> cl_int;
    pub fn clEnqueueFillImage(
        q: cl_command_queue,
        m: cl_mem,
        color: *const c_void,
        origin: *const usize,
        region: *const usize,
        n: cl_uint,
        w: *const cl_event,
        e: *mut cl_event,
    ) -> cl_int;
    pub fn clEnqueueCopyImageToBuffer(
        q: cl_command_queue,
        s: cl_mem,
        d: cl_mem,
        so: *const usize,
        region: *const usize,
        offset: usize,
        n: cl_uint,
        w: *const cl_event,
        e: *mut cl_event,
    ) -> cl_int;
    pub fn clEnqueueCopyBufferToImage(
        q: cl_command_queue,
        s: cl_mem,
        d: cl_mem,
        offset: usize,
        dst_origin: *const usize,
        region: *const usize,
        n: cl_uint,
        w: *const cl_event,
        e: *mut cl_event,
    ) -> cl_int;
    pub fn clEnqueueMapImage(
        q: cl_command_queue,
        m: cl_mem,
        blocking: cl_bool,
        flags: cl_map_flags,
        origin: *const usize,
        region: *const usize,
        row: *mut usize,
        slice: *mut usize,
        n: cl_uint,
        w: *const cl_event,
        e: *mut cl_event,
        err: *mut cl_int,
    ) -> *mut c_void;
    pub fn clEnqueueUnmapMemObject(
        q: cl_command_queue,
        m: cl_mem,
        p: *mut c_void,
        n: cl_uint,
        w: *const cl_event,
        e: *mut cl_event,
    ) -> cl_int;
    pub fn clEnqueueReadBuffer(
        q: cl_command_queue,
        m: cl_mem,
        blocking: cl_bool,
        offset: usize,
        size: usize,
        p: *mut c_void,
        n: cl_uint,
        w: *const cl_event,
        e: *mut cl_event,
    ) -> cl_int;
    pub fn clFinish(q: cl_command_queue) -> cl_int;
    pub fn clCreateSampler(
        c: cl_context,
        normalized: cl_bool,
        addressing: cl_addressing_mode,
        filter: cl_filter_mode,
        err: *mut cl_int,
    ) -> cl_sampler;
    pub fn clCreateSamplerWithProperties(
        c: cl_context,
        props: *const cl_sampler_properties,
        err: *mut cl_int,
    ) -> cl_sampler;
    pub fn clRetainSampler(s: cl_sampler) -> cl_int;
    pub fn clReleaseSampler(s: cl_sampler) -> cl_int;
    pub fn clGetSamplerInfo(
        s: cl_sampler,
        name: cl_sampler_info,
        size: usize,
        v: *mut c_void,
        ret: *mut usize,
    ) -> cl_int;
}

/// The test context, with images switched on before the driver reads its settings.
pub fn env() -> Env {
    static ON: Once = Once::new();
    ON.call_once(|| std::env::set_var("FERROCL_IMAGES", "on"));
    Env::new()
}

pub fn fmt(order: cl_channel_order, ty: cl_channel_type) -> cl_image_format {
    cl_image_format {
        image_channel_order: order,
        image_channel_data_type: ty,
    }
}

pub const RGBA8: cl_image_format = cl_image_format {
    image_channel_order: CL_RGBA,
    image_channel_data_type: CL_UNORM_INT8,
};

#[allow(clippy::too_many_arguments)]
pub fn desc(
    image_type: cl_mem_object_type,
    width: usize,
    height: usize,
    depth: usize,
    array_size: usize,
    row_pitch: usize,
    slice_pitch: usize,
    buffer: cl_mem,
) -> cl_image_desc {
    cl_image_desc {
        image_type,
        image_width: width,
        image_height: height,
        image_depth: depth,
        image_array_size: array_size,
        image_row_pitch: row_pitch,
        image_slice_pitch: slice_pitch,
        num_mip_levels: 0,
        num_samples: 0,
        buffer,
    }
}

/// A simple descriptor: sizes only.
pub fn sized(
    image_type: cl_mem_object_type,
    w: usize,
    h: usize,
    d: usize,
    a: usize,
) -> cl_image_desc {
    desc(image_type, w, h, d, a, 0, 0, null_mut())
}

pub fn create(
    env: &Env,
    flags: u64,
    format: &cl_image_format,
    d: &cl_image_desc,
    host: *mut c_void,
) -> Result<cl_mem, cl_int> {
    let mut err = 0;
    // SAFETY: valid context; `host` covers the image when given (the callers size it).
    let m = unsafe { clCreateImage(env.context.get(), flags as _, format, d, host, &mut err) };
    if m.is_null() {
        assert_ne!(err, CL_SUCCESS);
        Err(err)
    } else {
        assert_eq!(err, CL_SUCCESS);
        Ok(m)
    }
}

pub fn release(m: cl_mem) {
    // SAFETY: a live handle.
    assert_eq!(unsafe { clReleaseMemObject(m) }, CL_SUCCESS);
}

pub fn buffer(env: &Env, flags: u64, size: usize, host: *mut c_void) -> cl_mem {
    let mut err = 0;
    // SAFETY: valid context; `host` covers `size` bytes when given.
    let m = unsafe { clCreateBuffer(env.context.get(), flags as _, size, host, &mut err) };
    assert_eq!(err, CL_SUCCESS);
    m
}

pub fn write(
    env: &Env,
    m: cl_mem,
    origin: [usize; 3],
    region: [usize; 3],
    row: usize,
    slice: usize,
    data: &[u8],
) -> Result<(), cl_int> {
    // SAFETY: blocking; `data` covers the region with these pitches (callers size it).
    let r = unsafe {
        clEnqueueWriteImage(
            env.queue.get(),
            m,
            CL_TRUE,
            origin.as_ptr(),
            region.as_ptr(),
            row,
            slice,
            data.as_ptr().cast(),
            0,
            null(),
            null_mut(),
        )
    };
    if r == CL_SUCCESS {
        Ok(())
    } else {
        Err(r)
    }
}

pub fn read_into(
    env: &Env,
    m: cl_mem,
    origin: [usize; 3],
    region: [usize; 3],
    row: usize,
    slice: usize,
    out: &mut [u8],
) -> Result<(), cl_int> {
    // SAFETY: blocking; `out` covers the region with these pitches (callers size it).
    let r = unsafe {
        clEnqueueReadImage(
            env.queue.get(),
            m,
            CL_TRUE,
            origin.as_ptr(),
            region.as_ptr(),
            row,
            slice,
            out.as_mut_ptr().cast(),
            0,
            null(),
            null_mut(),
        )
    };
    if r == CL_SUCCESS {
        Ok(())
    } else {
        Err(r)
    }
}

/// The whole region, tightly packed.
pub fn read(env: &Env, m: cl_mem, origin: [usize; 3], region: [usize; 3], elem: usize) -> Vec<u8> {
    let mut out = vec![0u8; region[0] * region[1] * region[2] * elem];
    check(
        read_into(env, m, origin, region, 0, 0, &mut out),
        "clEnqueueReadImage",
    );
    out
}

pub fn image_info<T: Copy + Default>(m: cl_mem, name: cl_image_info) -> T {
    let mut v = T::default();
    let mut size = 0;
    // SAFETY: `v` holds size_of::<T>() bytes.
    let r = unsafe {
        clGetImageInfo(
            m,
            name,
            std::mem::size_of::<T>(),
            (&mut v as *mut T).cast(),
            &mut size,
        )
    };
    assert_eq!(r, CL_SUCCESS, "clGetImageInfo({name:#x})");
    assert_eq!(size, std::mem::size_of::<T>(), "size of {name:#x}");
    v
}

pub fn mem_info<T: Copy + Default>(m: cl_mem, name: cl_mem_info) -> T {
    let mut v = T::default();
    // SAFETY: `v` holds size_of::<T>() bytes.
    let r = unsafe {
        clGetMemObjectInfo(
            m,
            name,
            std::mem::size_of::<T>(),
            (&mut v as *mut T).cast(),
            null_mut(),
        )
    };
    assert_eq!(r, CL_SUCCESS, "clGetMemObjectInfo({name:#x})");
    v
}

pub fn formats(env: &Env, flags: u64, ty: cl_mem_object_type) -> Vec<(u32, u32)> {
    let mut n = 0;
    // SAFETY: count query, then a vector of that size.
    unsafe {
        assert_eq!(
            clGetSupportedImageFormats(env.context.get(), flags, ty, 0, null_mut(), &mut n),
            CL_SUCCESS
        );
        if n == 0 {
            return Vec::new();
        }
        let mut v = vec![fmt(0, 0); n as usize];
        assert_eq!(
            clGetSupportedImageFormats(env.context.get(), flags, ty, n, v.as_mut_ptr(), null_mut()),
            CL_SUCCESS
        );
        v.iter()
            .map(|f| (f.image_channel_order, f.image_channel_data_type))
            .collect()
    }
}
