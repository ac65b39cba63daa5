//! The host side of levels: sizes and `CL_MEM_SIZE` of every image type with levels, and every
//! image command (read, write, fill, copy between levels, image↔buffer, map) on a level named
//! in its origin, against the host model; `CL_INVALID_MIP_LEVEL` and the creation errors.

use super::*;

#[test]
fn levels_are_created_sized_and_reported() {
    let Some(env) = env() else { return };
    let extensions = env.device.extensions().unwrap();
    assert!(extensions
        .split(' ')
        .any(|e| e == "cl_khr_mipmap_image_writes"));
    for shape in shapes() {
        let m = image(&env, &RGBA_FLOAT, &shape);
        assert_eq!(
            image_info::<cl_uint>(m, CL_IMAGE_NUM_MIP_LEVELS),
            shape.levels as cl_uint
        );
        assert_eq!(image_info::<usize>(m, CL_IMAGE_WIDTH), shape.w);
        assert_eq!(image_info::<usize>(m, CL_IMAGE_ROW_PITCH), shape.w * TEXEL);
        let mut size = 0usize;
        // SAFETY: `size` is a size_t.
        let r = unsafe {
            clGetMemObjectInfo(
                m,
                CL_MEM_SIZE,
                8,
                (&mut size as *mut usize).cast(),
                null_mut(),
            )
        };
        assert_eq!(r, CL_SUCCESS);
        let levels: usize = (0..shape.levels)
            .map(|l| shape.level_texels(l) * TEXEL)
            .sum();
        assert_eq!(size, levels, "CL_MEM_SIZE of {shape:?}: every level");
        release(m);
    }
    // Depth images too (OpenCL C reads and writes them with a lod).
    let depth = cl_image_format {
        image_channel_order: CL_DEPTH,
        image_channel_data_type: CL_FLOAT,
    };
    for ty in [CL_MEM_OBJECT_IMAGE2D, CL_MEM_OBJECT_IMAGE2D_ARRAY] {
        let m = image(&env, &depth, &Shape::new(ty, [16, 16, 0, 2], 5));
        assert_eq!(image_info::<cl_uint>(m, CL_IMAGE_NUM_MIP_LEVELS), 5);
        release(m);
    }
    // Bad input: more levels than halving the largest dimension gives, a 1D buffer image,
    // application memory.
    for (shape, want) in [
        (
            Shape::new(CL_MEM_OBJECT_IMAGE2D, [13, 6, 0, 0], 5),
            CL_INVALID_IMAGE_DESCRIPTOR,
        ),
        (
            Shape::new(CL_MEM_OBJECT_IMAGE3D, [2, 2, 16, 0], 6),
            CL_INVALID_IMAGE_DESCRIPTOR,
        ),
        (
            Shape::new(CL_MEM_OBJECT_IMAGE1D, [1, 0, 0, 0], 2),
            CL_INVALID_IMAGE_DESCRIPTOR,
        ),
    ] {
        assert_eq!(
            try_image(&env, 0, &RGBA_FLOAT, &shape).err(),
            Some(want),
            "{shape:?}"
        );
    }
    assert!(try_image(
        &env,
        0,
        &RGBA_FLOAT,
        &Shape::new(CL_MEM_OBJECT_IMAGE3D, [2, 2, 16, 0], 5)
    )
    .is_ok_and(|m| {
        release(m);
        true
    }));
    let buf = buffer(&env, CL_MEM_READ_WRITE, 4096, null_mut());
    let mut desc = Shape::new(CL_MEM_OBJECT_IMAGE1D_BUFFER, [64, 0, 0, 0], 2).desc();
    desc.buffer = buf;
    let mut err = 0;
    // SAFETY: valid context, format and descriptor.
    let m = unsafe {
        clCreateImage(
            env.context.get(),
            0,
            &RGBA_FLOAT,
            &desc,
            null_mut(),
            &mut err,
        )
    };
    assert!(m.is_null());
    assert_eq!(
        err, CL_INVALID_IMAGE_DESCRIPTOR,
        "a 1D buffer image has no levels"
    );
    let shape = Shape::new(CL_MEM_OBJECT_IMAGE2D, [4, 4, 0, 0], 2);
    let desc = shape.desc();
    let mut host = vec![0u8; 4 * 4 * TEXEL * 2];
    for flags in [CL_MEM_USE_HOST_PTR, CL_MEM_COPY_HOST_PTR] {
        // SAFETY: valid context, format and descriptor; `host` outlives the call.
        let m = unsafe {
            clCreateImage(
                env.context.get(),
                flags,
                &RGBA_FLOAT,
                &desc,
                host.as_mut_ptr().cast(),
                &mut err,
            )
        };
        assert!(m.is_null());
        assert_eq!(
            err, CL_INVALID_HOST_PTR,
            "application memory with levels ({flags:#x})"
        );
    }
    // One level (0 or 1) may have it.
    let mut one = desc;
    one.num_mip_levels = 1;
    // SAFETY: as above; the image copies 4×4 texels.
    let m = unsafe {
        clCreateImage(
            env.context.get(),
            CL_MEM_COPY_HOST_PTR,
            &RGBA_FLOAT,
            &one,
            host.as_mut_ptr().cast(),
            &mut err,
        )
    };
    assert_eq!(err, CL_SUCCESS);
    assert_eq!(image_info::<cl_uint>(m, CL_IMAGE_NUM_MIP_LEVELS), 1);
    release(m);
    release(buf);
}

/// Texel `i` (in command order: x fastest, then rows or layers, then slices or layers) of the
/// box `region` at `origin` inside a level of `size`.
fn box_indices(size: [usize; 3], origin: [usize; 3], region: [usize; 3]) -> Vec<usize> {
    let mut out = Vec::new();
    for z in 0..region[2] {
        for y in 0..region[1] {
            for x in 0..region[0] {
                out.push(((origin[2] + z) * size[1] + origin[1] + y) * size[0] + origin[0] + x);
            }
        }
    }
    out
}

#[test]
fn every_image_command_works_on_a_level() {
    let Some(env) = env() else { return };
    for (n, shape) in shapes().iter().enumerate() {
        let m = image(&env, &RGBA_FLOAT, shape);
        let mut model = level_data(shape, n as u32);
        upload(&env, m, shape, &model);
        let check = |model: &Vec<Vec<[f32; 4]>>, what: &str| {
            for (l, want) in model.iter().enumerate() {
                let got = read_level(
                    &env,
                    m,
                    shape.origin(l, [0; 3]),
                    shape.level_region(l),
                    want.len() * TEXEL,
                )
                .unwrap();
                assert_eq!(to_texels(&got), *want, "{what}: level {l} of {shape:?}");
            }
        };
        check(&model, "written");
        // A part of level 1: the box past its first texel in each coordinate the level has.
        let size = shape.level_region(1);
        let start = size.map(|s| usize::from(s > 1));
        let part = [0, 1, 2].map(|k| size[k] - start[k]);
        let got = read_level(
            &env,
            m,
            shape.origin(1, start),
            part,
            part.iter().product::<usize>() * TEXEL,
        )
        .unwrap();
        let want: Vec<[f32; 4]> = box_indices(size, start, part)
            .iter()
            .map(|&i| model[1][i])
            .collect();
        assert_eq!(to_texels(&got), want, "a box of level 1 of {shape:?}");
        // Fill a box of the last level but one.
        let l = shape.levels - 2;
        let color = [0.25f32, 0.5, 0.75, 1.0];
        let size = shape.level_region(l);
        // SAFETY: four floats of colour; four-value origin.
        let r = unsafe {
            clEnqueueFillImage(
                env.queue.get(),
                m,
                color.as_ptr().cast(),
                shape.origin(l, [0; 3]).as_ptr(),
                size.as_ptr(),
                0,
                null(),
                null_mut(),
            )
        };
        assert_eq!(r, CL_SUCCESS);
        model[l].iter_mut().for_each(|t| *t = color);
        // SAFETY: a live queue.
        assert_eq!(unsafe { clFinish(env.queue.get()) }, CL_SUCCESS);
        check(&model, "after a fill of one level");
        // Copy level 1 into level 0 of the same image (levels never overlap).
        let region = shape.level_region(1);
        // SAFETY: four-value origins, three-value region.
        let r = unsafe {
            clEnqueueCopyImage(
                env.queue.get(),
                m,
                m,
                shape.origin(1, [0; 3]).as_ptr(),
                shape.origin(0, [0; 3]).as_ptr(),
                region.as_ptr(),
                0,
                null(),
                null_mut(),
            )
        };
        assert_eq!(r, CL_SUCCESS);
        let size0 = shape.level_region(0);
        for (j, &i) in box_indices(size0, [0; 3], region).iter().enumerate() {
            model[0][i] = model[1][j];
        }
        // Level 1 → a buffer, and the buffer → the last level's first texels.
        let bytes = shape.level_texels(1) * TEXEL;
        let buf = buffer(&env, CL_MEM_READ_WRITE, bytes + 16, null_mut());
        // SAFETY: as above; the buffer holds the level after 16 bytes.
        let r = unsafe {
            clEnqueueCopyImageToBuffer(
                env.queue.get(),
                m,
                buf,
                shape.origin(1, [0; 3]).as_ptr(),
                region.as_ptr(),
                16,
                0,
                null(),
                null_mut(),
            )
        };
        assert_eq!(r, CL_SUCCESS);
        let mut raw = vec![0u8; bytes];
        // SAFETY: blocking read of `bytes` into `raw`.
        let r = unsafe {
            clEnqueueReadBuffer(
                env.queue.get(),
                buf,
                CL_TRUE,
                16,
                bytes,
                raw.as_mut_ptr().cast(),
                0,
                null(),
                null_mut(),
            )
        };
        assert_eq!(r, CL_SUCCESS);
        assert_eq!(
            to_texels(&raw),
            model[1],
            "level 1 into a buffer ({shape:?})"
        );
        let last = shape.levels - 1;
        let last_region = shape.level_region(last);
        // SAFETY: as above; the region's texels fit in the buffer.
        let r = unsafe {
            clEnqueueCopyBufferToImage(
                env.queue.get(),
                buf,
                m,
                16,
                shape.origin(last, [0; 3]).as_ptr(),
                last_region.as_ptr(),
                0,
                null(),
                null_mut(),
            )
        };
        assert_eq!(r, CL_SUCCESS);
        let n_last = shape.level_texels(last);
        model[last] = model[1][..n_last].to_vec();
        // SAFETY: a live queue.
        assert_eq!(unsafe { clFinish(env.queue.get()) }, CL_SUCCESS);
        check(&model, "after copies");
        // Map level 1: the level's texels at the level's pitches; a write through the map.
        let (mut row, mut slice, mut err) = (0usize, 0usize, 0);
        // SAFETY: four-value origin, three-value region, pitches written back.
        let p = unsafe {
            clEnqueueMapImage(
                env.queue.get(),
                m,
                CL_TRUE,
                CL_MAP_READ | CL_MAP_WRITE,
                shape.origin(1, [0; 3]).as_ptr(),
                region.as_ptr(),
                &mut row,
                &mut slice,
                0,
                null(),
                null_mut(),
                &mut err,
            )
        };
        assert_eq!(err, CL_SUCCESS);
        assert_eq!(
            row,
            shape.level_size(1)[0] * TEXEL,
            "row pitch of level 1 ({shape:?})"
        );
        let step = match shape.ty {
            CL_MEM_OBJECT_IMAGE1D_ARRAY => row,
            CL_MEM_OBJECT_IMAGE2D_ARRAY | CL_MEM_OBJECT_IMAGE3D => row * shape.level_size(1)[1],
            _ => 0,
        };
        assert_eq!(slice, step, "slice pitch of level 1 ({shape:?})");
        // SAFETY: the map covers level 1, tightly packed at these pitches.
        let mapped =
            unsafe { std::slice::from_raw_parts_mut(p.cast::<f32>(), shape.level_texels(1) * 4) };
        let flat: Vec<f32> = model[1].concat();
        assert_eq!(mapped, &flat[..], "mapped level 1 ({shape:?})");
        mapped[0] = 9.5;
        model[1][0][0] = 9.5;
        // SAFETY: the pointer the map returned.
        let r = unsafe { clEnqueueUnmapMemObject(env.queue.get(), m, p, 0, null(), null_mut()) };
        assert_eq!(r, CL_SUCCESS);
        // SAFETY: a live queue.
        assert_eq!(unsafe { clFinish(env.queue.get()) }, CL_SUCCESS);
        check(&model, "after a write through a map");

        // Bad input: a level the image does not have, a region past the level's size.
        let bad = shape.origin(shape.levels, [0; 3]);
        let one = [1usize, 1, 1];
        assert_eq!(
            read_level(&env, m, bad, one, TEXEL),
            Err(CL_INVALID_MIP_LEVEL),
            "{shape:?}"
        );
        assert_eq!(
            write_level(&env, m, bad, one, &[0; TEXEL]),
            CL_INVALID_MIP_LEVEL
        );
        let past = {
            let mut r = shape.level_region(1);
            r[0] += 1;
            r
        };
        assert_eq!(
            read_level(
                &env,
                m,
                shape.origin(1, [0; 3]),
                past,
                past.iter().product::<usize>() * TEXEL
            ),
            Err(CL_INVALID_VALUE)
        );
        // SAFETY: as for the calls above.
        unsafe {
            let q = env.queue.get();
            let good = shape.origin(0, [0; 3]);
            assert_eq!(
                clEnqueueFillImage(
                    q,
                    m,
                    color.as_ptr().cast(),
                    bad.as_ptr(),
                    one.as_ptr(),
                    0,
                    null(),
                    null_mut()
                ),
                CL_INVALID_MIP_LEVEL
            );
            assert_eq!(
                clEnqueueCopyImage(
                    q,
                    m,
                    m,
                    bad.as_ptr(),
                    good.as_ptr(),
                    one.as_ptr(),
                    0,
                    null(),
                    null_mut()
                ),
                CL_INVALID_MIP_LEVEL
            );
            assert_eq!(
                clEnqueueCopyImage(
                    q,
                    m,
                    m,
                    good.as_ptr(),
                    bad.as_ptr(),
                    one.as_ptr(),
                    0,
                    null(),
                    null_mut()
                ),
                CL_INVALID_MIP_LEVEL
            );
            assert_eq!(
                clEnqueueCopyImageToBuffer(
                    q,
                    m,
                    buf,
                    bad.as_ptr(),
                    one.as_ptr(),
                    0,
                    0,
                    null(),
                    null_mut()
                ),
                CL_INVALID_MIP_LEVEL
            );
            assert_eq!(
                clEnqueueCopyBufferToImage(
                    q,
                    buf,
                    m,
                    0,
                    bad.as_ptr(),
                    one.as_ptr(),
                    0,
                    null(),
                    null_mut()
                ),
                CL_INVALID_MIP_LEVEL
            );
            let p = clEnqueueMapImage(
                q,
                m,
                CL_TRUE,
                CL_MAP_READ,
                bad.as_ptr(),
                one.as_ptr(),
                &mut row,
                &mut slice,
                0,
                null(),
                null_mut(),
                &mut err,
            );
            assert!(p.is_null());
            assert_eq!(err, CL_INVALID_MIP_LEVEL);
        }
        check(&model, "after refused commands");
        release(buf);
        release(m);
    }
}
