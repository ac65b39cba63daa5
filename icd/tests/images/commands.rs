//! Image commands: copies between images (and the overlap and format rules), fills checked
//! against texels worked out by hand from the environment spec's conversion rules, zero-copy
//! maps, copies between images and buffers.

use super::*;

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
