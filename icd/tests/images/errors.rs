//! Bad input to the image and sampler functions → the spec's error codes, never a crash.

use super::*;

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
    // Descriptors: unknown type, more mip levels than the size has (image_mipmaps.rs has
    // the rest), samples, pitches without a host pointer, bad pitches with one.
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
    mips.num_mip_levels = 33;
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
