//! Host commands and memory objects over a pipe: all refused.

use std::ffi::c_void;
use std::ptr::{null, null_mut};

use super::common::*;
use super::*;
use opencl_sys::*;

/// A pipe is only for kernels: every host command that takes a buffer or an image refuses
/// it, and so do sub-buffers and images over it; migrating it is allowed (the API spec lets
/// any memory object migrate).
#[test]
fn host_commands_refuse_pipes() {
    let env = Env::new();
    if !pipes_or_skip(&env) {
        return;
    }
    let q = env.queue.get();
    let p = pipe(&env, 4, 16);
    let buf = buffer(&env, 64);
    let mut host = [0u8; 64];
    let h = host.as_mut_ptr().cast::<c_void>();
    let zero = [0usize; 3];
    let region = [4usize, 1, 1];
    let pattern = 0u32;
    let pat = (&pattern as *const u32).cast::<c_void>();
    let invalid = CL_INVALID_MEM_OBJECT;
    let mut err = 0;
    // SAFETY: valid queue and objects; host memory of 64 bytes; every call must fail before
    // touching memory, or (the migration) do nothing to it.
    unsafe {
        let statuses = [
            (
                "read",
                clEnqueueReadBuffer(q, p.0, CL_TRUE, 0, 4, h, 0, null(), null_mut()),
            ),
            (
                "write",
                clEnqueueWriteBuffer(q, p.0, CL_TRUE, 0, 4, h, 0, null(), null_mut()),
            ),
            (
                "copy from",
                clEnqueueCopyBuffer(q, p.0, buf.0, 0, 0, 4, 0, null(), null_mut()),
            ),
            (
                "copy to",
                clEnqueueCopyBuffer(q, buf.0, p.0, 0, 0, 4, 0, null(), null_mut()),
            ),
            (
                "fill",
                clEnqueueFillBuffer(q, p.0, pat, 4, 0, 4, 0, null(), null_mut()),
            ),
            (
                "read rect",
                clEnqueueReadBufferRect(
                    q,
                    p.0,
                    CL_TRUE,
                    zero.as_ptr(),
                    zero.as_ptr(),
                    region.as_ptr(),
                    0,
                    0,
                    0,
                    0,
                    h,
                    0,
                    null(),
                    null_mut(),
                ),
            ),
            (
                "write rect",
                clEnqueueWriteBufferRect(
                    q,
                    p.0,
                    CL_TRUE,
                    zero.as_ptr(),
                    zero.as_ptr(),
                    region.as_ptr(),
                    0,
                    0,
                    0,
                    0,
                    h,
                    0,
                    null(),
                    null_mut(),
                ),
            ),
            (
                "copy rect from",
                clEnqueueCopyBufferRect(
                    q,
                    p.0,
                    buf.0,
                    zero.as_ptr(),
                    zero.as_ptr(),
                    region.as_ptr(),
                    0,
                    0,
                    0,
                    0,
                    0,
                    null(),
                    null_mut(),
                ),
            ),
            (
                "copy rect to",
                clEnqueueCopyBufferRect(
                    q,
                    buf.0,
                    p.0,
                    zero.as_ptr(),
                    zero.as_ptr(),
                    region.as_ptr(),
                    0,
                    0,
                    0,
                    0,
                    0,
                    null(),
                    null_mut(),
                ),
            ),
            (
                "unmap",
                clEnqueueUnmapMemObject(q, p.0, h, 0, null(), null_mut()),
            ),
        ];
        for (what, status) in statuses {
            assert_eq!(status, invalid, "{what}: {}", error_text(status));
        }
        let mapped = clEnqueueMapBuffer(
            q,
            p.0,
            CL_TRUE,
            CL_MAP_READ,
            0,
            4,
            0,
            null(),
            null_mut(),
            &mut err,
        );
        assert!(mapped.is_null());
        assert_eq!(err, invalid, "map");
        let region_info = cl_buffer_region { origin: 0, size: 4 };
        let sub = clCreateSubBuffer(
            p.0,
            0,
            CL_BUFFER_CREATE_TYPE_REGION,
            (&region_info as *const cl_buffer_region).cast(),
            &mut err,
        );
        assert!(sub.is_null());
        assert_eq!(err, invalid, "sub-buffer");
        let both = [p.0, buf.0];
        assert_eq!(
            clEnqueueMigrateMemObjects(q, 2, both.as_ptr(), 0, 0, null(), null_mut()),
            CL_SUCCESS,
            "migrate"
        );
        assert_eq!(clFinish(q), CL_SUCCESS);
    }
    if let Some(img) = image(&env) {
        let color = [0f32; 4];
        let c = color.as_ptr().cast::<c_void>();
        let (mut row, mut slice) = (0usize, 0usize);
        // SAFETY: as above; the image is 4×4 RGBA8 (64 bytes, the host array's size).
        unsafe {
            let statuses = [
                (
                    "read image",
                    clEnqueueReadImage(
                        q,
                        p.0,
                        CL_TRUE,
                        zero.as_ptr(),
                        region.as_ptr(),
                        0,
                        0,
                        h,
                        0,
                        null(),
                        null_mut(),
                    ),
                ),
                (
                    "write image",
                    clEnqueueWriteImage(
                        q,
                        p.0,
                        CL_TRUE,
                        zero.as_ptr(),
                        region.as_ptr(),
                        0,
                        0,
                        h,
                        0,
                        null(),
                        null_mut(),
                    ),
                ),
                (
                    "fill image",
                    clEnqueueFillImage(
                        q,
                        p.0,
                        c,
                        zero.as_ptr(),
                        region.as_ptr(),
                        0,
                        null(),
                        null_mut(),
                    ),
                ),
                (
                    "copy image from",
                    clEnqueueCopyImage(
                        q,
                        p.0,
                        img.0,
                        zero.as_ptr(),
                        zero.as_ptr(),
                        region.as_ptr(),
                        0,
                        null(),
                        null_mut(),
                    ),
                ),
                (
                    "copy image to",
                    clEnqueueCopyImage(
                        q,
                        img.0,
                        p.0,
                        zero.as_ptr(),
                        zero.as_ptr(),
                        region.as_ptr(),
                        0,
                        null(),
                        null_mut(),
                    ),
                ),
                (
                    "image to pipe",
                    clEnqueueCopyImageToBuffer(
                        q,
                        img.0,
                        p.0,
                        zero.as_ptr(),
                        region.as_ptr(),
                        0,
                        0,
                        null(),
                        null_mut(),
                    ),
                ),
                (
                    "pipe to image",
                    clEnqueueCopyBufferToImage(
                        q,
                        p.0,
                        img.0,
                        0,
                        zero.as_ptr(),
                        region.as_ptr(),
                        0,
                        null(),
                        null_mut(),
                    ),
                ),
                (
                    "image info",
                    clGetImageInfo(p.0, CL_IMAGE_WIDTH, 8, h, null_mut()),
                ),
            ];
            for (what, status) in statuses {
                assert_eq!(status, invalid, "{what}: {}", error_text(status));
            }
            let mapped = clEnqueueMapImage(
                q,
                p.0,
                CL_TRUE,
                CL_MAP_READ,
                zero.as_ptr(),
                region.as_ptr(),
                &mut row,
                &mut slice,
                0,
                null(),
                null_mut(),
                &mut err,
            );
            assert!(mapped.is_null());
            assert_eq!(err, invalid, "map image");
            // mem_object "may refer to a valid buffer or image memory object": a pipe makes
            // the descriptor invalid.
            let format = cl_image_format {
                image_channel_order: CL_RGBA,
                image_channel_data_type: CL_UNORM_INT8,
            };
            let desc = cl_image_desc {
                image_type: CL_MEM_OBJECT_IMAGE1D_BUFFER,
                image_width: 4,
                image_height: 0,
                image_depth: 0,
                image_array_size: 0,
                image_row_pitch: 0,
                image_slice_pitch: 0,
                num_mip_levels: 0,
                num_samples: 0,
                buffer: p.0,
            };
            let over = clCreateImage(env.context.get(), 0, &format, &desc, null_mut(), &mut err);
            assert!(over.is_null());
            assert_eq!(err, CL_INVALID_IMAGE_DESCRIPTOR, "an image over a pipe");
        }
    }
    // The pipe is unharmed.
    assert_eq!(word(&pipe_info(p.0, CL_PIPE_MAX_PACKETS)), 16);
}
