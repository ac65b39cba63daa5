//! Images and samplers on the host through the loader, with `FERROCL_IMAGES=on` (set before the
//! first CL call): the device's image queries, supported formats, every image type created
//! with each host-pointer flag, write/read round trips with pitches, copies (with the overlap
//! and format errors), fills checked against texels worked out by hand from the SPIR-V
//! environment spec's conversion rules, zero-copy maps, image↔buffer copies, the info queries,
//! samplers, and bad input → the spec's error. Kernels using images: `image_kernels.rs`.

mod common;

use std::ffi::c_void;
use std::ptr::{null, null_mut};
use std::sync::Once;

use common::*;
use opencl_sys::*;

#[link(name = "OpenCL")]
extern "C" {
    fn clCreateImage(
        c: cl_context,
        f: cl_mem_flags,
        fmt: *const cl_image_format,
        desc: *const cl_image_desc,
        host: *mut c_void,
        err: *mut cl_int,
    ) -> cl_mem;
    fn clCreateImage2D(
        c: cl_context,
        f: cl_mem_flags,
        fmt: *const cl_image_format,
        w: usize,
        h: usize,
        row: usize,
        host: *mut c_void,
        err: *mut cl_int,
    ) -> cl_mem;
    fn clCreateImage3D(
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
    fn clCreateBuffer(
        c: cl_context,
        f: cl_mem_flags,
        size: usize,
        host: *mut c_void,
        err: *mut cl_int,
    ) -> cl_mem;
    fn clReleaseMemObject(m: cl_mem) -> cl_int;
    fn clGetImageInfo(
        m: cl_mem,
        name: cl_image_info,
        size: usize,
        v: *mut c_void,
        ret: *mut usize,
    ) -> cl_int;
    fn clGetMemObjectInfo(
        m: cl_mem,
        name: cl_mem_info,
        size: usize,
        v: *mut c_void,
        ret: *mut usize,
    ) -> cl_int;
    fn clGetSupportedImageFormats(
        c: cl_context,
        f: cl_mem_flags,
        t: cl_mem_object_type,
        n: cl_uint,
        formats: *mut cl_image_format,
        count: *mut cl_uint,
    ) -> cl_int;
    fn clEnqueueReadImage(
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
    fn clEnqueueWriteImage(
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
    fn clEnqueueCopyImage(
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
    fn clEnqueueFillImage(
        q: cl_command_queue,
        m: cl_mem,
        color: *const c_void,
        origin: *const usize,
        region: *const usize,
        n: cl_uint,
        w: *const cl_event,
        e: *mut cl_event,
    ) -> cl_int;
    fn clEnqueueCopyImageToBuffer(
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
    fn clEnqueueCopyBufferToImage(
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
    fn clEnqueueMapImage(
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
    fn clEnqueueUnmapMemObject(
        q: cl_command_queue,
        m: cl_mem,
        p: *mut c_void,
        n: cl_uint,
        w: *const cl_event,
        e: *mut cl_event,
    ) -> cl_int;
    fn clEnqueueReadBuffer(
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
    fn clFinish(q: cl_command_queue) -> cl_int;
    fn clCreateSampler(
        c: cl_context,
        normalized: cl_bool,
        addressing: cl_addressing_mode,
        filter: cl_filter_mode,
        err: *mut cl_int,
    ) -> cl_sampler;
    fn clCreateSamplerWithProperties(
        c: cl_context,
        props: *const cl_sampler_properties,
        err: *mut cl_int,
    ) -> cl_sampler;
    fn clRetainSampler(s: cl_sampler) -> cl_int;
    fn clReleaseSampler(s: cl_sampler) -> cl_int;
    fn clGetSamplerInfo(
        s: cl_sampler,
        name: cl_sampler_info,
        size: usize,
        v: *mut c_void,
        ret: *mut usize,
    ) -> cl_int;
}

/// The test context, with images switched on before the driver reads its settings.
fn env() -> Env {
    static ON: Once = Once::new();
    ON.call_once(|| std::env::set_var("FERROCL_IMAGES", "on"));
    Env::new()
}

fn fmt(order: cl_channel_order, ty: cl_channel_type) -> cl_image_format {
    cl_image_format {
        image_channel_order: order,
        image_channel_data_type: ty,
    }
}

const RGBA8: cl_image_format = cl_image_format {
    image_channel_order: CL_RGBA,
    image_channel_data_type: CL_UNORM_INT8,
};

#[allow(clippy::too_many_arguments)]
fn desc(
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
fn sized(image_type: cl_mem_object_type, w: usize, h: usize, d: usize, a: usize) -> cl_image_desc {
    desc(image_type, w, h, d, a, 0, 0, null_mut())
}

fn create(
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

fn release(m: cl_mem) {
    // SAFETY: a live handle.
    assert_eq!(unsafe { clReleaseMemObject(m) }, CL_SUCCESS);
}

fn buffer(env: &Env, flags: u64, size: usize, host: *mut c_void) -> cl_mem {
    let mut err = 0;
    // SAFETY: valid context; `host` covers `size` bytes when given.
    let m = unsafe { clCreateBuffer(env.context.get(), flags as _, size, host, &mut err) };
    assert_eq!(err, CL_SUCCESS);
    m
}

fn write(
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

fn read_into(
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
fn read(env: &Env, m: cl_mem, origin: [usize; 3], region: [usize; 3], elem: usize) -> Vec<u8> {
    let mut out = vec![0u8; region[0] * region[1] * region[2] * elem];
    check(
        read_into(env, m, origin, region, 0, 0, &mut out),
        "clEnqueueReadImage",
    );
    out
}

fn image_info<T: Copy + Default>(m: cl_mem, name: cl_image_info) -> T {
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

fn mem_info<T: Copy + Default>(m: cl_mem, name: cl_mem_info) -> T {
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

fn formats(env: &Env, flags: u64, ty: cl_mem_object_type) -> Vec<(u32, u32)> {
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

fn pattern(len: usize, seed: u8) -> Vec<u8> {
    (0..len)
        .map(|i| (i as u8).wrapping_mul(31).wrapping_add(seed))
        .collect()
}

const ALL_TYPES: [cl_mem_object_type; 6] = [
    CL_MEM_OBJECT_IMAGE1D,
    CL_MEM_OBJECT_IMAGE1D_BUFFER,
    CL_MEM_OBJECT_IMAGE1D_ARRAY,
    CL_MEM_OBJECT_IMAGE2D,
    CL_MEM_OBJECT_IMAGE2D_ARRAY,
    CL_MEM_OBJECT_IMAGE3D,
];

#[test]
fn the_device_reports_images() {
    let env = env();
    let id = env.device.id();
    let raw = |p: u32| opencl3::device::get_device_data(id, p).expect("clGetDeviceInfo");
    let size = |p: u32| usize::from_ne_bytes(raw(p)[..8].try_into().unwrap());
    let uint = |p: u32| u32::from_ne_bytes(raw(p)[..4].try_into().unwrap());
    assert_eq!(uint(CL_DEVICE_IMAGE_SUPPORT), CL_TRUE);
    assert!(size(CL_DEVICE_IMAGE2D_MAX_WIDTH) >= 16384);
    assert!(size(CL_DEVICE_IMAGE2D_MAX_HEIGHT) >= 16384);
    for p in [
        CL_DEVICE_IMAGE3D_MAX_WIDTH,
        CL_DEVICE_IMAGE3D_MAX_HEIGHT,
        CL_DEVICE_IMAGE3D_MAX_DEPTH,
        CL_DEVICE_IMAGE_MAX_ARRAY_SIZE,
    ] {
        assert!(size(p) >= 2048, "{p:#x}");
    }
    assert!(size(CL_DEVICE_IMAGE_MAX_BUFFER_SIZE) >= 65536);
    assert!(uint(CL_DEVICE_MAX_SAMPLERS) >= 16);
    assert!(uint(CL_DEVICE_MAX_READ_IMAGE_ARGS) >= 128);
    assert!(uint(CL_DEVICE_MAX_WRITE_IMAGE_ARGS) >= 64);
    assert!(uint(CL_DEVICE_MAX_READ_WRITE_IMAGE_ARGS) >= 64);
    assert_eq!(uint(CL_DEVICE_IMAGE_PITCH_ALIGNMENT), 1);
    assert_eq!(uint(CL_DEVICE_IMAGE_BASE_ADDRESS_ALIGNMENT), 1);
    let ext = String::from_utf8(raw(CL_DEVICE_EXTENSIONS)).unwrap();
    assert!(ext.contains("cl_khr_image2d_from_buffer"), "{ext}");
    assert!(ext.contains("cl_khr_3d_image_writes"), "{ext}");
    // Kernels use images: the OpenCL C features and the SPIR-V capabilities say so.
    let features = String::from_utf8_lossy(&raw(CL_DEVICE_OPENCL_C_FEATURES)).into_owned();
    for f in [
        "__opencl_c_images",
        "__opencl_c_3d_image_writes",
        "__opencl_c_read_write_images",
    ] {
        assert!(features.contains(f), "{f} missing from {features}");
    }
    let caps: Vec<u32> = raw(CL_DEVICE_SPIRV_CAPABILITIES_KHR)
        .chunks_exact(4)
        .map(|c| u32::from_ne_bytes(c.try_into().unwrap()))
        .collect();
    // ImageBasic, ImageReadWrite, Sampled1D, Image1D, SampledBuffer, ImageBuffer,
    // LiteralSampler; no ImageMipmap (15): images have one level.
    for cap in [13, 14, 43, 44, 46, 47, 20] {
        assert!(caps.contains(&cap), "capability {cap} missing");
    }
    assert!(!caps.contains(&15), "ImageMipmap is claimed");
}

#[test]
fn supported_formats_for_every_flag_and_type() {
    let env = env();
    let access = [
        0,
        CL_MEM_READ_WRITE,
        CL_MEM_READ_ONLY,
        CL_MEM_WRITE_ONLY,
        CL_MEM_KERNEL_READ_AND_WRITE,
    ];
    let host = [
        0,
        CL_MEM_USE_HOST_PTR,
        CL_MEM_ALLOC_HOST_PTR,
        CL_MEM_COPY_HOST_PTR,
        CL_MEM_HOST_NO_ACCESS,
    ];
    for ty in ALL_TYPES {
        for a in access {
            for h in host {
                let list = formats(&env, a | h, ty);
                // Writable 3D formats are listed: the device has cl_khr_3d_image_writes
                // (API spec consistency rule, CTS consistency_3d_image_writes).
                let mut sorted = list.clone();
                sorted.sort_unstable();
                sorted.dedup();
                assert_eq!(sorted.len(), list.len(), "{ty:#x}: a format listed twice");
                // The full-profile minimum list.
                for t in [
                    CL_UNORM_INT8,
                    CL_UNORM_INT16,
                    CL_SIGNED_INT8,
                    CL_SIGNED_INT16,
                    CL_SIGNED_INT32,
                    CL_UNSIGNED_INT8,
                    CL_UNSIGNED_INT16,
                    CL_UNSIGNED_INT32,
                    CL_HALF_FLOAT,
                    CL_FLOAT,
                ] {
                    assert!(list.contains(&(CL_RGBA, t)), "{ty:#x} {a:#x}: RGBA {t:#x}");
                }
                assert!(list.contains(&(CL_BGRA, CL_UNORM_INT8)));
                assert!(list.contains(&(CL_RG, CL_SNORM_INT16)));
                assert!(list.contains(&(CL_RGB, CL_UNORM_SHORT_565)));
                assert!(list.contains(&(CL_INTENSITY, CL_FLOAT)));
                assert!(list.contains(&(CL_RGBA, CL_UNORM_INT_101010_2)));
                // Depth formats (cl_khr_depth_images) for 2D images and 2D arrays only.
                let depth = list.contains(&(CL_DEPTH, CL_FLOAT))
                    && list.contains(&(CL_DEPTH, CL_UNORM_INT16));
                let depth_type = matches!(ty, CL_MEM_OBJECT_IMAGE2D | CL_MEM_OBJECT_IMAGE2D_ARRAY);
                assert_eq!(depth, depth_type, "{ty:#x}: depth formats");
                // Kernels write sRGB images (cl_khr_srgb_image_writes): listed for every
                // access, as are the 2D formats the extension names.
                assert!(
                    list.contains(&(CL_sRGBA, CL_UNORM_INT8))
                        && list.contains(&(CL_sBGRA, CL_UNORM_INT8)),
                    "{ty:#x} {a:#x}"
                );
            }
        }
    }
    let mut n = 0;
    // SAFETY: bad arguments only; nothing is written.
    unsafe {
        let c = env.context.get();
        assert_eq!(
            clGetSupportedImageFormats(c, 0, CL_MEM_OBJECT_BUFFER, 0, null_mut(), &mut n),
            CL_INVALID_VALUE
        );
        assert_eq!(
            clGetSupportedImageFormats(
                c,
                (CL_MEM_READ_ONLY | CL_MEM_WRITE_ONLY) as _,
                CL_MEM_OBJECT_IMAGE2D,
                0,
                null_mut(),
                &mut n
            ),
            CL_INVALID_VALUE
        );
        let mut one = fmt(0, 0);
        assert_eq!(
            clGetSupportedImageFormats(c, 0, CL_MEM_OBJECT_IMAGE2D, 0, &mut one, &mut n),
            CL_INVALID_VALUE
        );
    }
}

/// (image type, width, height, depth, array size) of a small image of each type whose
/// region is the whole image.
fn shapes() -> Vec<(cl_mem_object_type, [usize; 4], [usize; 3])> {
    vec![
        (CL_MEM_OBJECT_IMAGE1D, [7, 0, 0, 0], [7, 1, 1]),
        (CL_MEM_OBJECT_IMAGE1D_ARRAY, [5, 0, 0, 3], [5, 3, 1]),
        (CL_MEM_OBJECT_IMAGE2D, [5, 4, 0, 0], [5, 4, 1]),
        (CL_MEM_OBJECT_IMAGE2D_ARRAY, [3, 4, 0, 2], [3, 4, 2]),
        (CL_MEM_OBJECT_IMAGE3D, [4, 3, 2, 0], [4, 3, 2]),
    ]
}

#[test]
fn every_type_with_every_host_pointer_flag_round_trips_with_pitches() {
    let env = env();
    let e = 4;
    for (ty, [w, h, d, a], extent) in shapes() {
        let slices = ty != CL_MEM_OBJECT_IMAGE1D && ty != CL_MEM_OBJECT_IMAGE2D;
        // Host data with padded rows (and slices where the type has them).
        let row = w * e + 8;
        let rows = if ty == CL_MEM_OBJECT_IMAGE1D_ARRAY {
            1
        } else {
            extent[1]
        };
        // An image's slice pitch is a multiple of its row pitch.
        let slice = if slices { row * (rows + 1) } else { 0 };
        let layers = if ty == CL_MEM_OBJECT_IMAGE1D_ARRAY {
            extent[1]
        } else {
            extent[2]
        };
        let host_len = if slices {
            slice * layers
        } else {
            row * extent[1]
        };
        // The texel at (x, y, z) in host memory laid out with these pitches.
        let at = |x: usize, y: usize, z: usize| {
            if ty == CL_MEM_OBJECT_IMAGE1D_ARRAY {
                y * slice + x * e
            } else {
                z * slice + y * row + x * e
            }
        };
        let tight = |v: &[u8]| -> Vec<u8> {
            let mut out = Vec::new();
            for z in 0..extent[2] {
                for y in 0..extent[1] {
                    for x in 0..extent[0] {
                        out.extend_from_slice(&v[at(x, y, z)..at(x, y, z) + e]);
                    }
                }
            }
            out
        };
        for flags in [
            0,
            CL_MEM_COPY_HOST_PTR,
            CL_MEM_USE_HOST_PTR,
            CL_MEM_ALLOC_HOST_PTR,
            CL_MEM_ALLOC_HOST_PTR | CL_MEM_COPY_HOST_PTR,
        ] {
            let with_host = flags & (CL_MEM_COPY_HOST_PTR | CL_MEM_USE_HOST_PTR) != 0;
            let mut host = pattern(host_len, ty as u8);
            let dsc = if with_host {
                desc(ty, w, h, d, a, row, slice, null_mut())
            } else {
                desc(ty, w, h, d, a, 0, 0, null_mut())
            };
            let ptr = if with_host {
                host.as_mut_ptr().cast()
            } else {
                null_mut()
            };
            // 3D images are read-only for kernels (no cl_khr_3d_image_writes).
            let access = if ty == CL_MEM_OBJECT_IMAGE3D {
                CL_MEM_READ_ONLY
            } else {
                0
            };
            let img = check(
                create(&env, flags | access, &RGBA8, &dsc, ptr),
                "clCreateImage",
            );
            let what = format!("type {ty:#x} flags {flags:#x}");
            assert_eq!(
                mem_info::<cl_mem_object_type>(img, CL_MEM_TYPE),
                ty,
                "{what}"
            );
            if with_host {
                assert_eq!(read(&env, img, [0; 3], extent, e), tight(&host), "{what}");
            }
            // Write a sub-region at origin 1 of every used coordinate from pitched host memory.
            let origin = [1, usize::from(extent[1] > 1), usize::from(extent[2] > 1)];
            let region = [extent[0] - 1, extent[1] - origin[1], extent[2] - origin[2]];
            let hrow = region[0] * e + 4;
            let hslice = if slices {
                hrow * if ty == CL_MEM_OBJECT_IMAGE1D_ARRAY {
                    1
                } else {
                    region[1]
                } + 12
            } else {
                0
            };
            let src = pattern(
                if slices {
                    hslice * region[1].max(region[2])
                } else {
                    hrow * region[1]
                },
                0x55,
            );
            check(
                write(&env, img, origin, region, hrow, hslice, &src),
                &format!("write {what}"),
            );
            let mut back = vec![0u8; src.len()];
            check(
                read_into(&env, img, origin, region, hrow, hslice, &mut back),
                &format!("read {what}"),
            );
            // Every texel of the region round trips; padding in host memory is untouched.
            let step = |y: usize, z: usize| {
                if ty == CL_MEM_OBJECT_IMAGE1D_ARRAY {
                    y * hslice
                } else {
                    z * hslice + y * hrow
                }
            };
            for z in 0..region[2] {
                for y in 0..region[1] {
                    let o = step(y, z);
                    assert_eq!(
                        &back[o..o + region[0] * e],
                        &src[o..o + region[0] * e],
                        "{what} row {y} slice {z}"
                    );
                }
            }
            if flags & CL_MEM_USE_HOST_PTR != 0 {
                // Zero copy: the write landed in the application's memory at its pitches.
                let o = at(origin[0], origin[1], origin[2]);
                assert_eq!(&host[o..o + e], &src[..e], "{what}: not in host memory");
                assert_eq!(
                    mem_info::<*mut c_void>(img, CL_MEM_HOST_PTR),
                    host.as_mut_ptr().cast(),
                    "{what}"
                );
                assert_eq!(image_info::<usize>(img, CL_IMAGE_ROW_PITCH), row, "{what}");
            }
            release(img);
        }
    }
}

#[test]
fn image_queries_and_mem_object_queries() {
    let env = env();
    let mut host = vec![0u8; 64 * 3 * 2];
    // A 2D array of 3×5 RGBA float texels with rows of 64 bytes and slices of 192.
    let f = fmt(CL_RGBA, CL_FLOAT);
    let img = check(
        create(
            &env,
            CL_MEM_USE_HOST_PTR | CL_MEM_READ_ONLY,
            &f,
            &desc(CL_MEM_OBJECT_IMAGE2D_ARRAY, 3, 3, 0, 2, 64, 192, null_mut()),
            host.as_mut_ptr().cast(),
        ),
        "clCreateImage",
    );
    let got: [cl_uint; 2] = image_info(img, CL_IMAGE_FORMAT);
    assert_eq!(got, [CL_RGBA, CL_FLOAT]);
    assert_eq!(image_info::<usize>(img, CL_IMAGE_ELEMENT_SIZE), 16);
    assert_eq!(image_info::<usize>(img, CL_IMAGE_ROW_PITCH), 64);
    assert_eq!(image_info::<usize>(img, CL_IMAGE_SLICE_PITCH), 192);
    assert_eq!(image_info::<usize>(img, CL_IMAGE_WIDTH), 3);
    assert_eq!(image_info::<usize>(img, CL_IMAGE_HEIGHT), 3);
    assert_eq!(image_info::<usize>(img, CL_IMAGE_DEPTH), 0);
    assert_eq!(image_info::<usize>(img, CL_IMAGE_ARRAY_SIZE), 2);
    assert_eq!(image_info::<cl_mem>(img, CL_IMAGE_BUFFER), null_mut());
    assert_eq!(image_info::<cl_uint>(img, CL_IMAGE_NUM_MIP_LEVELS), 0);
    assert_eq!(image_info::<cl_uint>(img, CL_IMAGE_NUM_SAMPLES), 0);
    assert_eq!(mem_info::<usize>(img, CL_MEM_SIZE), 384);
    assert_eq!(
        mem_info::<cl_mem_flags>(img, CL_MEM_FLAGS),
        (CL_MEM_USE_HOST_PTR | CL_MEM_READ_ONLY) as cl_mem_flags
    );
    assert_eq!(
        mem_info::<cl_mem>(img, CL_MEM_ASSOCIATED_MEMOBJECT),
        null_mut()
    );
    let mut v = 0usize;
    // SAFETY: bad queries only.
    unsafe {
        assert_eq!(
            clGetImageInfo(img, 0x1234, 8, (&mut v as *mut usize).cast(), null_mut()),
            CL_INVALID_VALUE
        );
        assert_eq!(
            clGetImageInfo(
                img,
                CL_IMAGE_WIDTH,
                4,
                (&mut v as *mut usize).cast(),
                null_mut()
            ),
            CL_INVALID_VALUE
        );
        let buf = buffer(&env, 0, 64, null_mut());
        assert_eq!(
            clGetImageInfo(
                buf,
                CL_IMAGE_WIDTH,
                8,
                (&mut v as *mut usize).cast(),
                null_mut()
            ),
            CL_INVALID_MEM_OBJECT
        );
        release(buf);
    }
    release(img);
    // Tight pitches without a host pointer; 1D sizes report height 0.
    let img = check(
        create(
            &env,
            0,
            &fmt(CL_RG, CL_HALF_FLOAT),
            &sized(CL_MEM_OBJECT_IMAGE1D_ARRAY, 10, 0, 0, 4),
            null_mut(),
        ),
        "clCreateImage",
    );
    assert_eq!(image_info::<usize>(img, CL_IMAGE_ELEMENT_SIZE), 4);
    assert_eq!(image_info::<usize>(img, CL_IMAGE_ROW_PITCH), 40);
    assert_eq!(image_info::<usize>(img, CL_IMAGE_SLICE_PITCH), 40);
    assert_eq!(image_info::<usize>(img, CL_IMAGE_HEIGHT), 0);
    assert_eq!(image_info::<usize>(img, CL_IMAGE_ARRAY_SIZE), 4);
    release(img);
}

#[test]
fn images_over_buffers_share_their_memory() {
    let env = env();
    let data = pattern(256, 3);
    let mut host = data.clone();
    let buf = buffer(
        &env,
        CL_MEM_USE_HOST_PTR | CL_MEM_READ_ONLY,
        256,
        host.as_mut_ptr().cast(),
    );
    // A 1D buffer image of 64 RGBA8 texels: same bytes, flags inherited.
    let img = check(
        create(
            &env,
            0,
            &RGBA8,
            &desc(CL_MEM_OBJECT_IMAGE1D_BUFFER, 64, 0, 0, 0, 0, 0, buf),
            null_mut(),
        ),
        "1D buffer image",
    );
    assert_eq!(read(&env, img, [0; 3], [64, 1, 1], 4), data);
    assert_eq!(mem_info::<cl_mem>(img, CL_MEM_ASSOCIATED_MEMOBJECT), buf);
    assert_eq!(image_info::<cl_mem>(img, CL_IMAGE_BUFFER), buf);
    assert_eq!(
        mem_info::<cl_mem_object_type>(img, CL_MEM_TYPE),
        CL_MEM_OBJECT_IMAGE1D_BUFFER
    );
    assert_eq!(
        mem_info::<cl_mem_flags>(img, CL_MEM_FLAGS) & CL_MEM_READ_ONLY as cl_mem_flags,
        CL_MEM_READ_ONLY as cl_mem_flags
    );
    release(img);
    // Too wide for the buffer; host-pointer flags; a wider access than the buffer's.
    assert_eq!(
        create(
            &env,
            0,
            &RGBA8,
            &desc(CL_MEM_OBJECT_IMAGE1D_BUFFER, 65, 0, 0, 0, 0, 0, buf),
            null_mut()
        ),
        Err(CL_INVALID_IMAGE_SIZE)
    );
    assert_eq!(
        create(
            &env,
            CL_MEM_COPY_HOST_PTR,
            &RGBA8,
            &desc(CL_MEM_OBJECT_IMAGE1D_BUFFER, 4, 0, 0, 0, 0, 0, buf),
            null_mut()
        ),
        Err(CL_INVALID_VALUE)
    );
    assert_eq!(
        create(
            &env,
            CL_MEM_READ_WRITE,
            &RGBA8,
            &desc(CL_MEM_OBJECT_IMAGE1D_BUFFER, 4, 0, 0, 0, 0, 0, buf),
            null_mut()
        ),
        Err(CL_INVALID_VALUE)
    );
    // cl_khr_image2d_from_buffer: 3 rows of 5 texels, 24-byte rows.
    let img = check(
        create(
            &env,
            0,
            &RGBA8,
            &desc(CL_MEM_OBJECT_IMAGE2D, 5, 3, 0, 0, 24, 0, buf),
            null_mut(),
        ),
        "2D image from a buffer",
    );
    let got = read(&env, img, [0; 3], [5, 3, 1], 4);
    for y in 0..3 {
        assert_eq!(
            &got[y * 20..y * 20 + 20],
            &data[y * 24..y * 24 + 20],
            "row {y}"
        );
    }
    // A 2D image of a buffer must fit in it; a 3D one cannot be made from a buffer.
    assert_eq!(
        create(
            &env,
            0,
            &RGBA8,
            &desc(CL_MEM_OBJECT_IMAGE2D, 5, 11, 0, 0, 24, 0, buf),
            null_mut()
        ),
        Err(CL_INVALID_IMAGE_SIZE)
    );
    assert_eq!(
        create(
            &env,
            0,
            &RGBA8,
            &desc(CL_MEM_OBJECT_IMAGE3D, 2, 2, 2, 0, 0, 0, buf),
            null_mut()
        ),
        Err(CL_INVALID_IMAGE_DESCRIPTOR)
    );
    // An sRGB view of the 2D image reads the same bytes.
    let view = check(
        create(
            &env,
            0,
            &fmt(CL_sRGBA, CL_UNORM_INT8),
            &desc(CL_MEM_OBJECT_IMAGE2D, 5, 3, 0, 0, 0, 0, img),
            null_mut(),
        ),
        "sRGB view",
    );
    assert_eq!(read(&env, view, [0; 3], [5, 3, 1], 4), got);
    assert_eq!(
        create(
            &env,
            0,
            &fmt(CL_BGRA, CL_UNORM_INT8),
            &desc(CL_MEM_OBJECT_IMAGE2D, 5, 3, 0, 0, 0, 0, img),
            null_mut()
        ),
        Err(CL_INVALID_IMAGE_FORMAT_DESCRIPTOR)
    );
    release(view);
    release(img);
    release(buf);
}

#[test]
fn copies_between_images_and_the_overlap_rule() {
    let env = env();
    let img = check(
        create(
            &env,
            0,
            &RGBA8,
            &sized(CL_MEM_OBJECT_IMAGE2D, 8, 8, 0, 0),
            null_mut(),
        ),
        "2D",
    );
    let data = pattern(8 * 8 * 4, 9);
    check(write(&env, img, [0; 3], [8, 8, 1], 0, 0, &data), "write");
    let enqueue = |s: cl_mem, d: cl_mem, so: [usize; 3], dor: [usize; 3], r: [usize; 3]| {
        // SAFETY: valid handles and triples.
        unsafe {
            clEnqueueCopyImage(
                env.queue.get(),
                s,
                d,
                so.as_ptr(),
                dor.as_ptr(),
                r.as_ptr(),
                0,
                null(),
                null_mut(),
            )
        }
    };
    // Within one image: disjoint is fine, overlapping is CL_MEM_COPY_OVERLAP.
    assert_eq!(
        enqueue(img, img, [0, 0, 0], [4, 4, 0], [4, 4, 1]),
        CL_SUCCESS
    );
    assert_eq!(
        enqueue(img, img, [0, 0, 0], [2, 2, 0], [4, 4, 1]),
        CL_MEM_COPY_OVERLAP
    );
    let got = read(&env, img, [4, 4, 0], [4, 4, 1], 4);
    for y in 0..4 {
        assert_eq!(
            &got[y * 16..y * 16 + 16],
            &data[y * 32..y * 32 + 16],
            "row {y}"
        );
    }
    // A 2D region into a slice of a 3D image.
    let vol = check(
        create(
            &env,
            CL_MEM_READ_ONLY,
            &RGBA8,
            &sized(CL_MEM_OBJECT_IMAGE3D, 4, 4, 3, 0),
            null_mut(),
        ),
        "3D",
    );
    assert_eq!(
        enqueue(img, vol, [0, 0, 0], [0, 0, 2], [4, 4, 1]),
        CL_SUCCESS
    );
    let got = read(&env, vol, [0, 0, 2], [4, 4, 1], 4);
    for y in 0..4 {
        assert_eq!(
            &got[y * 16..y * 16 + 16],
            &data[y * 32..y * 32 + 16],
            "3D row {y}"
        );
    }
    // Formats must match; regions must fit and follow the image type.
    let other = check(
        create(
            &env,
            0,
            &fmt(CL_RGBA, CL_SIGNED_INT8),
            &sized(CL_MEM_OBJECT_IMAGE2D, 8, 8, 0, 0),
            null_mut(),
        ),
        "2D int",
    );
    assert_eq!(
        enqueue(img, other, [0; 3], [0; 3], [1, 1, 1]),
        CL_IMAGE_FORMAT_MISMATCH
    );
    assert_eq!(
        enqueue(img, vol, [6, 0, 0], [0, 0, 0], [4, 1, 1]),
        CL_INVALID_VALUE
    );
    assert_eq!(
        enqueue(img, vol, [0, 0, 0], [0, 0, 0], [4, 4, 2]),
        CL_INVALID_VALUE
    );
    assert_eq!(
        enqueue(img, vol, [0, 0, 0], [0, 0, 0], [0, 4, 1]),
        CL_INVALID_VALUE
    );
    let buf = buffer(&env, 0, 64, null_mut());
    assert_eq!(
        enqueue(buf, img, [0; 3], [0; 3], [1, 1, 1]),
        CL_INVALID_MEM_OBJECT
    );
    // SAFETY: valid queue.
    assert_eq!(unsafe { clFinish(env.queue.get()) }, CL_SUCCESS);
    for m in [img, vol, other, buf] {
        release(m);
    }
}

/// Fills a 3×2 2D image of `format` but its first column and returns the last texel's bytes,
/// checking that every filled texel is alike and the first one kept its zero.
fn filled(env: &Env, format: cl_image_format, color: &[u8]) -> Vec<u8> {
    let img = check(
        create(
            env,
            CL_MEM_READ_ONLY,
            &format,
            &sized(CL_MEM_OBJECT_IMAGE2D, 3, 2, 0, 0),
            null_mut(),
        ),
        "clCreateImage",
    );
    let e: usize = image_info(img, CL_IMAGE_ELEMENT_SIZE);
    let zero = vec![0u8; 6 * e];
    check(write(env, img, [0; 3], [3, 2, 1], 0, 0, &zero), "clear");
    let (origin, region) = ([1usize, 0, 0], [2usize, 2, 1]);
    // SAFETY: `color` holds what the format needs (4 or 16 bytes).
    let r = unsafe {
        clEnqueueFillImage(
            env.queue.get(),
            img,
            color.as_ptr().cast(),
            origin.as_ptr(),
            region.as_ptr(),
            0,
            null(),
            null_mut(),
        )
    };
    assert_eq!(r, CL_SUCCESS);
    let all = read(env, img, [0; 3], [3, 2, 1], e);
    assert_eq!(&all[..e], &zero[..e], "outside the region");
    assert_eq!(&all[e..2 * e], &all[5 * e..], "every filled texel alike");
    release(img);
    all[5 * e..].to_vec()
}

fn floats(c: [f32; 4]) -> Vec<u8> {
    c.iter().flat_map(|f| f.to_ne_bytes()).collect()
}

#[test]
fn fill_converts_the_colour_as_a_kernel_write_would() {
    let env = env();
    // Expected texels worked out from SPIR-V environment spec 7.4 (round to nearest even
    // after saturating) and the API spec's layouts.
    let c = floats([0.5, 1.5 / 255.0, -1.0, 2.0]);
    assert_eq!(filled(&env, RGBA8, &c), [128, 2, 0, 255]);
    assert_eq!(
        filled(&env, fmt(CL_BGRA, CL_UNORM_INT8), &c),
        [0, 2, 128, 255]
    );
    assert_eq!(
        filled(&env, fmt(CL_ARGB, CL_UNORM_INT8), &c),
        [255, 128, 2, 0]
    );
    // SNORM8: 0.5 × 127 = 63.5 → 64; 1.5/255 × 127 = 0.75 → 1; −1 → −127 (0x81); 2 → 127.
    assert_eq!(
        filled(&env, fmt(CL_RGBA, CL_SNORM_INT8), &c),
        [64, 1, 0x81, 127]
    );
    // UNORM16 of 0.5: 32767.5 → 32768.
    assert_eq!(filled(&env, fmt(CL_R, CL_UNORM_INT16), &c), [0x00, 0x80]);
    // Half: 0.5 = 0x3800, 1.5/255 = 0.00588235 → 0x1e06 (nearest even of 0x1e06.4).
    assert_eq!(
        filled(&env, fmt(CL_RG, CL_HALF_FLOAT), &c),
        [0x00, 0x38, 0x06, 0x1e]
    );
    assert_eq!(filled(&env, fmt(CL_A, CL_FLOAT), &c), 2.0f32.to_ne_bytes());
    // 565: R = 0.5 × 31 = 15.5 → 16, G = 1.5/255 × 63 = 0.37 → 0, B = 0: 16 << 11.
    assert_eq!(
        filled(&env, fmt(CL_RGB, CL_UNORM_SHORT_565), &c),
        (16u16 << 11).to_le_bytes()
    );
    // sRGB: 0.5 → 188 (1.055 × 0.5^(1/2.4) − 0.055 = 0.73536, × 255 = 187.52); alpha linear.
    assert_eq!(
        filled(
            &env,
            fmt(CL_sRGBA, CL_UNORM_INT8),
            &floats([0.5, 0.0, 1.0, 0.5])
        ),
        [188, 0, 255, 128]
    );
    // Integers saturate.
    let ints: Vec<u8> = [-200i32, 5, 300, -1]
        .iter()
        .flat_map(|v| v.to_ne_bytes())
        .collect();
    assert_eq!(
        filled(&env, fmt(CL_RGBA, CL_SIGNED_INT8), &ints),
        [0x80, 5, 0x7f, 0xff]
    );
    let uints: Vec<u8> = [70000u32, 5, 0, 1]
        .iter()
        .flat_map(|v| v.to_ne_bytes())
        .collect();
    assert_eq!(
        filled(&env, fmt(CL_RA, CL_UNSIGNED_INT16), &uints),
        [0xff, 0xff, 1, 0]
    );
    // Depth images (whose fill colour is one float) wait for cl_khr_depth_images; the
    // runtime's pixel tests cover their conversion.
}

#[test]
fn maps_are_zero_copy() {
    let env = env();
    let mut host = vec![0u8; 40 * 4];
    let img = check(
        create(
            &env,
            CL_MEM_USE_HOST_PTR,
            &RGBA8,
            &desc(CL_MEM_OBJECT_IMAGE2D, 6, 4, 0, 0, 40, 0, null_mut()),
            host.as_mut_ptr().cast(),
        ),
        "USE_HOST_PTR image",
    );
    let map = |m: cl_mem, flags: u64, origin: [usize; 3], region: [usize; 3], slice: bool| {
        let (mut row, mut sl, mut err) = (0usize, 7usize, 0);
        // SAFETY: valid handles; outputs are locals.
        let p = unsafe {
            clEnqueueMapImage(
                env.queue.get(),
                m,
                CL_TRUE,
                flags,
                origin.as_ptr(),
                region.as_ptr(),
                &mut row,
                if slice { &mut sl } else { null_mut() },
                0,
                null(),
                null_mut(),
                &mut err,
            )
        };
        (p, row, sl, err)
    };
    let (p, row, slice, err) = map(img, CL_MAP_WRITE, [2, 1, 0], [3, 2, 1], true);
    assert_eq!(err, CL_SUCCESS);
    assert_eq!(
        p.cast::<u8>(),
        host.as_mut_ptr().wrapping_add(40 + 8),
        "a pointer into the host memory"
    );
    assert_eq!((row, slice), (40, 0));
    assert_eq!(mem_info::<cl_uint>(img, CL_MEM_MAP_COUNT), 1);
    // SAFETY: the mapped region; then unmapped.
    unsafe {
        *p.cast::<u8>() = 0xab;
        assert_eq!(
            clEnqueueUnmapMemObject(env.queue.get(), img, p, 0, null(), null_mut()),
            CL_SUCCESS
        );
        assert_eq!(clFinish(env.queue.get()), CL_SUCCESS);
    }
    assert_eq!(read(&env, img, [2, 1, 0], [1, 1, 1], 4)[0], 0xab);
    release(img);
    // A 3D image reports its slice pitch and needs somewhere to put it.
    let vol = check(
        create(
            &env,
            CL_MEM_HOST_READ_ONLY | CL_MEM_READ_ONLY,
            &RGBA8,
            &sized(CL_MEM_OBJECT_IMAGE3D, 4, 4, 4, 0),
            null_mut(),
        ),
        "3D",
    );
    let (p, row, slice, err) = map(vol, CL_MAP_READ, [0, 0, 1], [4, 4, 2], true);
    assert_eq!(err, CL_SUCCESS);
    assert_eq!((row, slice), (16, 64));
    // SAFETY: unmapping what was mapped.
    unsafe {
        assert_eq!(
            clEnqueueUnmapMemObject(env.queue.get(), vol, p, 0, null(), null_mut()),
            CL_SUCCESS
        );
        assert_eq!(clFinish(env.queue.get()), CL_SUCCESS);
    }
    assert_eq!(
        map(vol, CL_MAP_READ, [0; 3], [1, 1, 1], false).3,
        CL_INVALID_VALUE
    );
    assert_eq!(
        map(vol, CL_MAP_WRITE, [0; 3], [1, 1, 1], true).3,
        CL_INVALID_OPERATION
    );
    assert_eq!(
        map(vol, CL_MAP_READ, [0, 0, 3], [1, 1, 2], true).3,
        CL_INVALID_VALUE
    );
    release(vol);
}

#[test]
fn copies_between_images_and_buffers() {
    let env = env();
    let img = check(
        create(
            &env,
            0,
            &fmt(CL_RG, CL_UNSIGNED_INT16),
            &sized(CL_MEM_OBJECT_IMAGE2D_ARRAY, 4, 3, 0, 2),
            null_mut(),
        ),
        "2D array",
    );
    let data = pattern(4 * 3 * 2 * 4, 1);
    check(write(&env, img, [0; 3], [4, 3, 2], 0, 0, &data), "write");
    let buf = buffer(&env, 0, 256, null_mut());
    let (origin, region) = ([1usize, 1, 1], [2usize, 2, 1]);
    // SAFETY: valid handles and triples; blocking read of 256 bytes into `out`.
    unsafe {
        assert_eq!(
            clEnqueueCopyImageToBuffer(
                env.queue.get(),
                img,
                buf,
                origin.as_ptr(),
                region.as_ptr(),
                8,
                0,
                null(),
                null_mut()
            ),
            CL_SUCCESS
        );
        let mut out = vec![0u8; 256];
        assert_eq!(
            clEnqueueReadBuffer(
                env.queue.get(),
                buf,
                CL_TRUE,
                0,
                256,
                out.as_mut_ptr().cast(),
                0,
                null(),
                null_mut()
            ),
            CL_SUCCESS
        );
        // Tightly packed in the buffer from offset 8: rows of 2 texels of 4 bytes.
        for y in 0..2 {
            let src = 48 + (1 + y) * 16 + 4;
            assert_eq!(&out[8 + y * 8..16 + y * 8], &data[src..src + 8], "row {y}");
        }
        // Back into layer 0 at (0, 0).
        assert_eq!(
            clEnqueueCopyBufferToImage(
                env.queue.get(),
                buf,
                img,
                8,
                [0usize; 3].as_ptr(),
                region.as_ptr(),
                0,
                null(),
                null_mut()
            ),
            CL_SUCCESS
        );
        let got = read(&env, img, [0; 3], [2, 2, 1], 4);
        assert_eq!(&got[..8], &out[8..16]);
        assert_eq!(&got[8..16], &out[16..24]);
        // Out of the buffer, a buffer given as the image, an image given as the buffer.
        assert_eq!(
            clEnqueueCopyImageToBuffer(
                env.queue.get(),
                img,
                buf,
                origin.as_ptr(),
                region.as_ptr(),
                250,
                0,
                null(),
                null_mut()
            ),
            CL_INVALID_VALUE
        );
        assert_eq!(
            clEnqueueCopyImageToBuffer(
                env.queue.get(),
                buf,
                buf,
                origin.as_ptr(),
                region.as_ptr(),
                0,
                0,
                null(),
                null_mut()
            ),
            CL_INVALID_MEM_OBJECT
        );
        assert_eq!(
            clEnqueueCopyBufferToImage(
                env.queue.get(),
                img,
                img,
                0,
                origin.as_ptr(),
                region.as_ptr(),
                0,
                null(),
                null_mut()
            ),
            CL_INVALID_MEM_OBJECT
        );
        // An image over the buffer overlapping the copied bytes.
        let view = check(
            create(
                &env,
                0,
                &RGBA8,
                &desc(CL_MEM_OBJECT_IMAGE1D_BUFFER, 16, 0, 0, 0, 0, 0, buf),
                null_mut(),
            ),
            "view",
        );
        assert_eq!(
            clEnqueueCopyBufferToImage(
                env.queue.get(),
                buf,
                view,
                0,
                [2usize, 0, 0].as_ptr(),
                [4usize, 1, 1].as_ptr(),
                0,
                null(),
                null_mut()
            ),
            CL_MEM_COPY_OVERLAP
        );
        assert_eq!(clFinish(env.queue.get()), CL_SUCCESS);
        release(view);
    }
    release(img);
    release(buf);
}

#[test]
fn bad_input_gives_the_spec_errors() {
    let env = env();
    let d2 = sized(CL_MEM_OBJECT_IMAGE2D, 4, 4, 0, 0);
    let mut host = vec![0u8; 4096];
    let hp: *mut c_void = host.as_mut_ptr().cast();
    // Formats: invalid pairs, NULL, valid but unsupported for the type or access.
    for (f, want) in [
        (
            fmt(CL_RGB, CL_UNORM_INT8),
            CL_INVALID_IMAGE_FORMAT_DESCRIPTOR,
        ),
        (fmt(CL_BGRA, CL_FLOAT), CL_INVALID_IMAGE_FORMAT_DESCRIPTOR),
        (fmt(0x1234, CL_FLOAT), CL_INVALID_IMAGE_FORMAT_DESCRIPTOR),
    ] {
        assert_eq!(create(&env, 0, &f, &d2, null_mut()), Err(want));
    }
    let mut err = 0;
    // SAFETY: NULL format and NULL descriptor are refused before use.
    unsafe {
        assert!(clCreateImage(env.context.get(), 0, null(), &d2, null_mut(), &mut err).is_null());
        assert_eq!(err, CL_INVALID_IMAGE_FORMAT_DESCRIPTOR);
        assert!(
            clCreateImage(env.context.get(), 0, &RGBA8, null(), null_mut(), &mut err).is_null()
        );
        assert_eq!(err, CL_INVALID_IMAGE_DESCRIPTOR);
    }
    assert_eq!(
        create(
            &env,
            0,
            &fmt(CL_DEPTH, CL_FLOAT),
            &sized(CL_MEM_OBJECT_IMAGE3D, 2, 2, 2, 0),
            null_mut()
        ),
        Err(CL_IMAGE_FORMAT_NOT_SUPPORTED)
    );
    // With cl_khr_depth_images, 2D depth images exist, and with cl_khr_srgb_image_writes
    // write-only sRGB images.
    let depth = check(
        create(&env, 0, &fmt(CL_DEPTH, CL_FLOAT), &d2, null_mut()),
        "2D depth",
    );
    release(depth);
    assert_eq!(
        create(
            &env,
            0,
            &fmt(CL_DEPTH, CL_FLOAT),
            &sized(CL_MEM_OBJECT_IMAGE3D, 2, 2, 2, 0),
            null_mut()
        ),
        Err(CL_IMAGE_FORMAT_NOT_SUPPORTED)
    );
    for (f, d) in [
        (RGBA8, sized(CL_MEM_OBJECT_IMAGE3D, 2, 2, 2, 0)),
        (fmt(CL_sRGBA, CL_UNORM_INT8), d2),
    ] {
        let m = check(
            create(&env, CL_MEM_WRITE_ONLY, &f, &d, null_mut()),
            "clCreateImage",
        );
        release(m);
    }
    // Descriptors: unknown type, mip levels, samples, pitches without a host pointer, bad
    // pitches with one.
    assert_eq!(
        create(
            &env,
            0,
            &RGBA8,
            &sized(CL_MEM_OBJECT_BUFFER, 4, 4, 0, 0),
            null_mut()
        ),
        Err(CL_INVALID_IMAGE_DESCRIPTOR)
    );
    let mut mips = d2;
    mips.num_mip_levels = 2;
    assert_eq!(
        create(&env, 0, &RGBA8, &mips, null_mut()),
        Err(CL_INVALID_IMAGE_DESCRIPTOR)
    );
    let mut samples = d2;
    samples.num_samples = 4;
    assert_eq!(
        create(&env, 0, &RGBA8, &samples, null_mut()),
        Err(CL_INVALID_IMAGE_DESCRIPTOR)
    );
    let pitched = desc(CL_MEM_OBJECT_IMAGE2D, 4, 4, 0, 0, 32, 0, null_mut());
    assert_eq!(
        create(&env, 0, &RGBA8, &pitched, null_mut()),
        Err(CL_INVALID_IMAGE_DESCRIPTOR)
    );
    for (row, slice) in [(12, 0), (18, 0), (16, 16), (16, 72)] {
        let bad = desc(CL_MEM_OBJECT_IMAGE3D, 4, 4, 2, 0, row, slice, null_mut());
        assert_eq!(
            create(&env, CL_MEM_COPY_HOST_PTR, &RGBA8, &bad, hp),
            Err(CL_INVALID_IMAGE_DESCRIPTOR),
            "{row} {slice}"
        );
    }
    // A 2D image has no slices: a slice pitch needs a host pointer, and with one it is
    // ignored (reported as 0).
    let slice_2d = desc(CL_MEM_OBJECT_IMAGE2D, 4, 4, 0, 0, 0, 64, null_mut());
    assert_eq!(
        create(&env, 0, &RGBA8, &slice_2d, null_mut()),
        Err(CL_INVALID_IMAGE_DESCRIPTOR)
    );
    let m = check(
        create(&env, CL_MEM_COPY_HOST_PTR, &RGBA8, &slice_2d, hp),
        "2D with a slice pitch",
    );
    assert_eq!(image_info::<usize>(m, CL_IMAGE_SLICE_PITCH), 0);
    release(m);
    // Sizes: zero, beyond the limits, 1D buffer images without a buffer.
    for d in [
        sized(CL_MEM_OBJECT_IMAGE2D, 0, 4, 0, 0),
        sized(CL_MEM_OBJECT_IMAGE2D, 4, 0, 0, 0),
        sized(CL_MEM_OBJECT_IMAGE2D, 16385, 1, 0, 0),
        sized(CL_MEM_OBJECT_IMAGE3D, 4, 4, 0, 0),
        sized(CL_MEM_OBJECT_IMAGE3D, 2049, 1, 1, 0),
        sized(CL_MEM_OBJECT_IMAGE2D_ARRAY, 4, 4, 0, 0),
        sized(CL_MEM_OBJECT_IMAGE1D_ARRAY, 4, 0, 0, 1 << 20),
    ] {
        assert_eq!(
            create(&env, 0, &RGBA8, &d, null_mut()),
            Err(CL_INVALID_IMAGE_SIZE),
            "{:?}",
            d.image_type
        );
    }
    assert_eq!(
        create(
            &env,
            0,
            &RGBA8,
            &sized(CL_MEM_OBJECT_IMAGE1D_BUFFER, 4, 0, 0, 0),
            null_mut()
        ),
        Err(CL_INVALID_IMAGE_DESCRIPTOR)
    );
    // Host pointers and flags.
    assert_eq!(
        create(&env, CL_MEM_USE_HOST_PTR, &RGBA8, &d2, null_mut()),
        Err(CL_INVALID_HOST_PTR)
    );
    assert_eq!(create(&env, 0, &RGBA8, &d2, hp), Err(CL_INVALID_HOST_PTR));
    assert_eq!(
        create(
            &env,
            CL_MEM_READ_ONLY | CL_MEM_WRITE_ONLY,
            &RGBA8,
            &d2,
            null_mut()
        ),
        Err(CL_INVALID_VALUE)
    );
    // The 1.1 entry points: pitch errors are size errors; a 3D image is at least 2 deep.
    // SAFETY: valid context; `host` covers every image asked for.
    unsafe {
        let c = env.context.get();
        let m = clCreateImage2D(c, CL_MEM_COPY_HOST_PTR as _, &RGBA8, 4, 4, 20, hp, &mut err);
        assert_eq!(err, CL_SUCCESS);
        assert_eq!(
            image_info::<usize>(m, CL_IMAGE_ROW_PITCH),
            16,
            "own storage is packed"
        );
        release(m);
        assert!(
            clCreateImage2D(c, CL_MEM_COPY_HOST_PTR as _, &RGBA8, 4, 4, 18, hp, &mut err).is_null()
        );
        assert_eq!(err, CL_INVALID_IMAGE_SIZE);
        assert!(clCreateImage3D(
            c,
            CL_MEM_READ_ONLY as _,
            &RGBA8,
            4,
            4,
            1,
            0,
            0,
            null_mut(),
            &mut err
        )
        .is_null());
        assert_eq!(err, CL_INVALID_IMAGE_SIZE);
        let m = clCreateImage3D(
            c,
            CL_MEM_READ_ONLY as _,
            &RGBA8,
            4,
            4,
            2,
            0,
            0,
            null_mut(),
            &mut err,
        );
        assert_eq!(err, CL_SUCCESS);
        release(m);
    }
    // Commands: regions for the type, out of range, NULL pointers, host access, buffers.
    let img = check(
        create(&env, CL_MEM_HOST_WRITE_ONLY, &RGBA8, &d2, null_mut()),
        "2D",
    );
    let data = vec![0u8; 256];
    assert_eq!(
        write(&env, img, [0, 0, 1], [1, 1, 1], 0, 0, &data),
        Err(CL_INVALID_VALUE)
    );
    assert_eq!(
        write(&env, img, [0; 3], [1, 1, 2], 0, 0, &data),
        Err(CL_INVALID_VALUE)
    );
    assert_eq!(
        write(&env, img, [3, 0, 0], [2, 1, 1], 0, 0, &data),
        Err(CL_INVALID_VALUE)
    );
    assert_eq!(
        write(&env, img, [0; 3], [2, 1, 1], 4, 0, &data),
        Err(CL_INVALID_VALUE)
    );
    assert_eq!(
        write(&env, img, [0; 3], [2, 1, 1], 0, 64, &data),
        Err(CL_INVALID_VALUE),
        "slice pitch on a 2D image"
    );
    assert_eq!(write(&env, img, [0; 3], [2, 1, 1], 0, 0, &data), Ok(()));
    let mut out = vec![0u8; 64];
    assert_eq!(
        read_into(&env, img, [0; 3], [1, 1, 1], 0, 0, &mut out),
        Err(CL_INVALID_OPERATION)
    );
    // SAFETY: NULL pointers are refused before use.
    unsafe {
        let q = env.queue.get();
        let r = [1usize, 1, 1];
        assert_eq!(
            clEnqueueWriteImage(
                q,
                img,
                CL_TRUE,
                null(),
                r.as_ptr(),
                0,
                0,
                data.as_ptr().cast(),
                0,
                null(),
                null_mut()
            ),
            CL_INVALID_VALUE
        );
        assert_eq!(
            clEnqueueWriteImage(
                q,
                img,
                CL_TRUE,
                r.as_ptr(),
                r.as_ptr(),
                0,
                0,
                null(),
                0,
                null(),
                null_mut()
            ),
            CL_INVALID_VALUE
        );
        assert_eq!(
            clEnqueueFillImage(
                q,
                img,
                null(),
                [0usize; 3].as_ptr(),
                r.as_ptr(),
                0,
                null(),
                null_mut()
            ),
            CL_INVALID_VALUE
        );
        let buf = buffer(&env, 0, 64, null_mut());
        assert_eq!(
            clEnqueueWriteImage(
                q,
                buf,
                CL_TRUE,
                [0usize; 3].as_ptr(),
                r.as_ptr(),
                0,
                0,
                data.as_ptr().cast(),
                0,
                null(),
                null_mut()
            ),
            CL_INVALID_MEM_OBJECT
        );
        assert_eq!(
            clEnqueueReadBuffer(
                q,
                img,
                CL_TRUE,
                0,
                4,
                out.as_mut_ptr().cast(),
                0,
                null(),
                null_mut()
            ),
            CL_INVALID_MEM_OBJECT
        );
        release(buf);
    }
    release(img);
}

#[test]
fn samplers_are_objects_with_their_queries() {
    let env = env();
    let mut err = 0;
    // SAFETY: valid context; the outputs are locals of the sizes given.
    unsafe {
        let c = env.context.get();
        let s = clCreateSampler(
            c,
            CL_TRUE,
            CL_ADDRESS_MIRRORED_REPEAT,
            CL_FILTER_LINEAR,
            &mut err,
        );
        assert_eq!(err, CL_SUCCESS);
        let query = |s: cl_sampler, name: cl_sampler_info| -> Vec<u8> {
            let mut size = 0;
            assert_eq!(
                clGetSamplerInfo(s, name, 0, null_mut(), &mut size),
                CL_SUCCESS
            );
            let mut v = vec![0u8; size];
            assert_eq!(
                clGetSamplerInfo(s, name, size, v.as_mut_ptr().cast(), null_mut()),
                CL_SUCCESS
            );
            v
        };
        let uint = |v: Vec<u8>| u32::from_ne_bytes(v[..4].try_into().unwrap());
        assert_eq!(uint(query(s, CL_SAMPLER_NORMALIZED_COORDS)), CL_TRUE);
        assert_eq!(
            uint(query(s, CL_SAMPLER_ADDRESSING_MODE)),
            CL_ADDRESS_MIRRORED_REPEAT
        );
        assert_eq!(uint(query(s, CL_SAMPLER_FILTER_MODE)), CL_FILTER_LINEAR);
        assert_eq!(query(s, CL_SAMPLER_CONTEXT), (c as usize).to_ne_bytes());
        assert!(query(s, CL_SAMPLER_PROPERTIES).is_empty());
        assert_eq!(clRetainSampler(s), CL_SUCCESS);
        assert_eq!(uint(query(s, CL_SAMPLER_REFERENCE_COUNT)), 2);
        assert_eq!(clReleaseSampler(s), CL_SUCCESS);
        assert_eq!(clReleaseSampler(s), CL_SUCCESS);
        // With properties: the rest default to normalised, clamp, nearest.
        let props: [cl_sampler_properties; 3] =
            [CL_SAMPLER_FILTER_MODE as _, CL_FILTER_LINEAR as _, 0];
        let s = clCreateSamplerWithProperties(c, props.as_ptr(), &mut err);
        assert_eq!(err, CL_SUCCESS);
        assert_eq!(uint(query(s, CL_SAMPLER_ADDRESSING_MODE)), CL_ADDRESS_CLAMP);
        assert_eq!(uint(query(s, CL_SAMPLER_NORMALIZED_COORDS)), CL_TRUE);
        let listed: Vec<u8> = props.iter().flat_map(|p| p.to_ne_bytes()).collect();
        assert_eq!(query(s, CL_SAMPLER_PROPERTIES), listed);
        assert_eq!(
            clGetSamplerInfo(s, 0x1234, 0, null_mut(), null_mut()),
            CL_INVALID_VALUE
        );
        assert_eq!(clReleaseSampler(s), CL_SUCCESS);
        // Bad modes, repeated or unknown properties, handles of the wrong kind.
        assert!(clCreateSampler(c, CL_TRUE, 0x1234, CL_FILTER_LINEAR, &mut err).is_null());
        assert_eq!(err, CL_INVALID_VALUE);
        assert!(clCreateSampler(c, CL_TRUE, CL_ADDRESS_CLAMP, 0x1234, &mut err).is_null());
        assert_eq!(err, CL_INVALID_VALUE);
        let twice: [cl_sampler_properties; 5] = [
            CL_SAMPLER_FILTER_MODE as _,
            CL_FILTER_LINEAR as _,
            CL_SAMPLER_FILTER_MODE as _,
            CL_FILTER_LINEAR as _,
            0,
        ];
        assert!(clCreateSamplerWithProperties(c, twice.as_ptr(), &mut err).is_null());
        assert_eq!(err, CL_INVALID_VALUE);
        let unknown: [cl_sampler_properties; 3] = [0x1234, 0, 0];
        assert!(clCreateSamplerWithProperties(c, unknown.as_ptr(), &mut err).is_null());
        assert_eq!(err, CL_INVALID_VALUE);
        assert!(clCreateSampler(
            null_mut(),
            CL_TRUE,
            CL_ADDRESS_CLAMP,
            CL_FILTER_LINEAR,
            &mut err
        )
        .is_null());
        assert_eq!(err, CL_INVALID_CONTEXT);
        assert_eq!(clRetainSampler(c.cast()), CL_INVALID_SAMPLER);
        assert_eq!(clReleaseSampler(null_mut()), CL_INVALID_SAMPLER);
    }
}

#[test]
fn an_image_is_not_a_buffer_argument() {
    let env = env();
    let k = opencl3::kernel::Kernel::create(
        &env.program_from_source("kernel void k(global int *p) { p[0] = 1; }", ""),
        "k",
    )
    .expect("clCreateKernel");
    let img = check(
        create(
            &env,
            0,
            &RGBA8,
            &sized(CL_MEM_OBJECT_IMAGE2D, 2, 2, 0, 0),
            null_mut(),
        ),
        "2D",
    );
    // SAFETY: a valid kernel; the value is a cl_mem.
    let r = unsafe {
        cl3::kernel::set_kernel_arg(
            k.get(),
            0,
            std::mem::size_of::<cl_mem>(),
            (&img as *const cl_mem).cast(),
        )
    };
    assert_eq!(r, Err(CL_INVALID_MEM_OBJECT));
    release(img);
}
