//! Image objects and samplers: the device's image queries, supported formats for every type
//! and flag, every image type created with each host-pointer flag with write/read round trips
//! and pitches, the info queries, images over buffers, sampler objects.

use super::*;

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
    // LiteralSampler, ImageMipmap (cl_khr_mipmap_image_writes, image_mipmaps.rs).
    for cap in [13, 14, 43, 44, 46, 47, 20, 15] {
        assert!(caps.contains(&cap), "capability {cap} missing");
    }
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
