//! Buffers: read, write, copy, fill, map, zero-copy host pointers, destructor callbacks.

use super::*;

static DESTROYED: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
extern "C" fn on_destroy(_m: cl_mem, _u: *mut c_void) {
    DESTROYED.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
}

#[test]
fn buffers_read_write_copy_fill_map() {
    let env = Env::new(0);
    // SAFETY: buffers and host arrays are sized for every command.
    unsafe {
        let n = 1024usize;
        let a = env.buffer(CL_MEM_READ_WRITE, n * 4, null_mut());
        let b = env.buffer(CL_MEM_READ_WRITE, n * 4, null_mut());
        let src: Vec<u32> = (0..n as u32).collect();
        assert_eq!(
            clEnqueueWriteBuffer(
                env.q,
                a,
                CL_TRUE,
                0,
                n * 4,
                src.as_ptr().cast(),
                0,
                null(),
                null_mut()
            ),
            CL_SUCCESS
        );
        assert_eq!(
            clEnqueueCopyBuffer(env.q, a, b, 0, 0, n * 4, 0, null(), null_mut()),
            CL_SUCCESS
        );
        let pat = 0xabcd_ef01u32;
        assert_eq!(
            clEnqueueFillBuffer(
                env.q,
                b,
                (&pat as *const u32).cast(),
                4,
                16,
                32,
                0,
                null(),
                null_mut()
            ),
            CL_SUCCESS
        );
        let mut out = vec![0u32; n];
        assert_eq!(
            clEnqueueReadBuffer(
                env.q,
                b,
                CL_TRUE,
                0,
                n * 4,
                out.as_mut_ptr().cast(),
                0,
                null(),
                null_mut()
            ),
            CL_SUCCESS
        );
        for (i, v) in out.iter().enumerate() {
            let want = if (4..12).contains(&i) { pat } else { i as u32 };
            assert_eq!(*v, want, "index {i}");
        }
        // Rect read: a 2x3 block from a 32-int-wide matrix.
        let (bo, ho, region) = ([4usize * 4, 2, 0], [0usize, 0, 0], [2usize * 4, 3, 1]);
        let mut rect = [0u32; 6];
        assert_eq!(
            clEnqueueReadBufferRect(
                env.q,
                a,
                CL_TRUE,
                bo.as_ptr(),
                ho.as_ptr(),
                region.as_ptr(),
                128,
                0,
                8,
                0,
                rect.as_mut_ptr().cast(),
                0,
                null(),
                null_mut()
            ),
            CL_SUCCESS
        );
        assert_eq!(rect, [68, 69, 100, 101, 132, 133]);

        // Map is zero-copy and counted.
        let mut err = 0;
        let p = clEnqueueMapBuffer(
            env.q,
            a,
            CL_TRUE,
            CL_MAP_READ | CL_MAP_WRITE,
            8,
            16,
            0,
            null(),
            null_mut(),
            &mut err,
        ) as *mut u32;
        assert_eq!(err, CL_SUCCESS);
        assert_eq!(*p, 2);
        *p = 77;
        let mut count: cl_uint = 0;
        assert_eq!(
            clGetMemObjectInfo(
                a,
                CL_MEM_MAP_COUNT,
                4,
                (&mut count as *mut cl_uint).cast(),
                null_mut()
            ),
            CL_SUCCESS
        );
        assert_eq!(count, 1);
        assert_eq!(
            clEnqueueUnmapMemObject(env.q, a, p.cast(), 0, null(), null_mut()),
            CL_SUCCESS
        );
        assert_eq!(
            clEnqueueUnmapMemObject(env.q, a, p.cast(), 0, null(), null_mut()),
            CL_INVALID_VALUE
        );
        let mut one = 0u32;
        assert_eq!(
            clEnqueueReadBuffer(
                env.q,
                a,
                CL_TRUE,
                8,
                4,
                (&mut one as *mut u32).cast(),
                0,
                null(),
                null_mut()
            ),
            CL_SUCCESS
        );
        assert_eq!(one, 77);

        // Sub-buffer shares storage.
        let region = cl_buffer_region {
            origin: 128,
            size: 64,
        };
        let sub = clCreateSubBuffer(
            a,
            0,
            CL_BUFFER_CREATE_TYPE_REGION,
            (&region as *const cl_buffer_region).cast(),
            &mut err,
        );
        assert_eq!(err, CL_SUCCESS);
        assert_eq!(
            clEnqueueReadBuffer(
                env.q,
                sub,
                CL_TRUE,
                0,
                4,
                (&mut one as *mut u32).cast(),
                0,
                null(),
                null_mut()
            ),
            CL_SUCCESS
        );
        assert_eq!(one, 32);
        let bad = cl_buffer_region {
            origin: 4,
            size: 64,
        };
        assert!(clCreateSubBuffer(
            a,
            0,
            CL_BUFFER_CREATE_TYPE_REGION,
            (&bad as *const cl_buffer_region).cast(),
            &mut err
        )
        .is_null());
        assert_eq!(err, CL_MISALIGNED_SUB_BUFFER_OFFSET);

        // Errors.
        assert_eq!(
            clEnqueueReadBuffer(
                env.q,
                a,
                CL_TRUE,
                n * 4 - 2,
                4,
                out.as_mut_ptr().cast(),
                0,
                null(),
                null_mut()
            ),
            CL_INVALID_VALUE
        );
        assert_eq!(
            clEnqueueReadBuffer(env.q, a, CL_TRUE, 0, 4, null_mut(), 0, null(), null_mut()),
            CL_INVALID_VALUE
        );
        assert_eq!(
            clEnqueueReadBuffer(
                env.q,
                env.ctx as cl_mem,
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
        assert_eq!(
            clEnqueueCopyBuffer(env.q, a, a, 0, 8, 16, 0, null(), null_mut()),
            CL_MEM_COPY_OVERLAP
        );
        assert_eq!(
            clEnqueueFillBuffer(
                env.q,
                a,
                (&pat as *const u32).cast(),
                3,
                0,
                12,
                0,
                null(),
                null_mut()
            ),
            CL_INVALID_VALUE
        );
        assert_eq!(
            clEnqueueReadBuffer(
                env.q,
                a,
                CL_TRUE,
                0,
                4,
                out.as_mut_ptr().cast(),
                1,
                null(),
                null_mut()
            ),
            CL_INVALID_EVENT_WAIT_LIST
        );
        assert!(clCreateBuffer(env.ctx, 0, 0, null_mut(), &mut err).is_null());
        assert_eq!(err, CL_INVALID_BUFFER_SIZE);
        assert!(clCreateBuffer(
            env.ctx,
            CL_MEM_USE_HOST_PTR as cl_mem_flags,
            16,
            null_mut(),
            &mut err
        )
        .is_null());
        assert_eq!(err, CL_INVALID_HOST_PTR);
        assert!(clCreateBuffer(
            env.ctx,
            (CL_MEM_READ_ONLY | CL_MEM_WRITE_ONLY) as cl_mem_flags,
            16,
            null_mut(),
            &mut err
        )
        .is_null());
        assert_eq!(err, CL_INVALID_VALUE);
        let ro = env.buffer(CL_MEM_HOST_NO_ACCESS, 16, null_mut());
        assert_eq!(
            clEnqueueReadBuffer(
                env.q,
                ro,
                CL_TRUE,
                0,
                4,
                out.as_mut_ptr().cast(),
                0,
                null(),
                null_mut()
            ),
            CL_INVALID_OPERATION
        );

        // Destructor callbacks run once the last reference is gone (the sub-buffer holds `a`).
        let before = DESTROYED.load(std::sync::atomic::Ordering::SeqCst);
        assert_eq!(
            clSetMemObjectDestructorCallback(a, on_destroy, null_mut()),
            CL_SUCCESS
        );
        assert_eq!(clRetainMemObject(a), CL_SUCCESS);
        assert_eq!(clReleaseMemObject(a), CL_SUCCESS);
        assert_eq!(clReleaseMemObject(a), CL_SUCCESS);
        assert_eq!(DESTROYED.load(std::sync::atomic::Ordering::SeqCst), before);
        assert_eq!(clReleaseMemObject(sub), CL_SUCCESS);
        assert_eq!(
            DESTROYED.load(std::sync::atomic::Ordering::SeqCst),
            before + 1
        );
        for m in [b, ro] {
            assert_eq!(clReleaseMemObject(m), CL_SUCCESS);
        }
    }
}

#[test]
fn use_host_ptr_is_zero_copy() {
    let env = Env::new(0);
    let mut host = vec![5u32; 64];
    // SAFETY: `host` outlives the buffer.
    unsafe {
        let m = env.buffer(CL_MEM_USE_HOST_PTR, 256, host.as_mut_ptr().cast());
        let mut err = 0;
        let p = clEnqueueMapBuffer(
            env.q,
            m,
            CL_TRUE,
            CL_MAP_READ,
            0,
            256,
            0,
            null(),
            null_mut(),
            &mut err,
        );
        assert_eq!(err, CL_SUCCESS);
        assert_eq!(p, host.as_mut_ptr().cast());
        assert_eq!(
            clEnqueueUnmapMemObject(env.q, m, p, 0, null(), null_mut()),
            CL_SUCCESS
        );
        let mut hp: *mut c_void = null_mut();
        assert_eq!(
            clGetMemObjectInfo(
                m,
                CL_MEM_HOST_PTR,
                8,
                (&mut hp as *mut *mut c_void).cast(),
                null_mut()
            ),
            CL_SUCCESS
        );
        assert_eq!(hp, host.as_mut_ptr().cast());
        assert_eq!(clFinish(env.q), CL_SUCCESS);
        assert_eq!(clReleaseMemObject(m), CL_SUCCESS);
    }
}
