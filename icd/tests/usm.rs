//! `cl_intel_unified_shared_memory` through the loader, as SYCL and HIP-on-OpenCL runtimes use
//! it: the entry points from `clGetExtensionFunctionAddressForPlatform`, the capability queries,
//! host/device/shared allocations with their queries, kernels on USM pointers (directly and
//! through pointers stored in USM memory, with indirect access), fill/memset/copy/migrate/
//! advice commands, frees (blocking while a kernel uses the memory) and bad input.

mod common;

use std::ffi::c_void;
use std::ptr;

use cl3::command_queue as cq;
use common::*;
use opencl3::kernel::Kernel;
use opencl_sys::*;

/// The extension's entry points, looked up as applications do.
struct Usm {
    host_alloc: unsafe extern "C" fn(
        cl_context,
        *const cl_mem_properties_intel,
        usize,
        cl_uint,
        *mut cl_int,
    ) -> *mut c_void,
    device_alloc: unsafe extern "C" fn(
        cl_context,
        cl_device_id,
        *const cl_mem_properties_intel,
        usize,
        cl_uint,
        *mut cl_int,
    ) -> *mut c_void,
    shared_alloc: unsafe extern "C" fn(
        cl_context,
        cl_device_id,
        *const cl_mem_properties_intel,
        usize,
        cl_uint,
        *mut cl_int,
    ) -> *mut c_void,
    free: unsafe extern "C" fn(cl_context, *mut c_void) -> cl_int,
    blocking_free: unsafe extern "C" fn(cl_context, *mut c_void) -> cl_int,
    info: unsafe extern "C" fn(
        cl_context,
        *const c_void,
        cl_mem_info_intel,
        usize,
        *mut c_void,
        *mut usize,
    ) -> cl_int,
    set_arg: unsafe extern "C" fn(cl_kernel, cl_uint, *const c_void) -> cl_int,
    fill: unsafe extern "C" fn(
        cl_command_queue,
        *mut c_void,
        *const c_void,
        usize,
        usize,
        cl_uint,
        *const cl_event,
        *mut cl_event,
    ) -> cl_int,
    memset: unsafe extern "C" fn(
        cl_command_queue,
        *mut c_void,
        cl_int,
        usize,
        cl_uint,
        *const cl_event,
        *mut cl_event,
    ) -> cl_int,
    memcpy: unsafe extern "C" fn(
        cl_command_queue,
        cl_bool,
        *mut c_void,
        *const c_void,
        usize,
        cl_uint,
        *const cl_event,
        *mut cl_event,
    ) -> cl_int,
    migrate: unsafe extern "C" fn(
        cl_command_queue,
        *const c_void,
        usize,
        cl_mem_migration_flags,
        cl_uint,
        *const cl_event,
        *mut cl_event,
    ) -> cl_int,
    advise: unsafe extern "C" fn(
        cl_command_queue,
        *const c_void,
        usize,
        cl_mem_advice_intel,
        cl_uint,
        *const cl_event,
        *mut cl_event,
    ) -> cl_int,
}

fn usm() -> Usm {
    // SAFETY: each pointer is the driver's function of that name, whose signature the
    // extension defines as written in `Usm`.
    unsafe {
        Usm {
            host_alloc: extension_entry("clHostMemAllocINTEL"),
            device_alloc: extension_entry("clDeviceMemAllocINTEL"),
            shared_alloc: extension_entry("clSharedMemAllocINTEL"),
            free: extension_entry("clMemFreeINTEL"),
            blocking_free: extension_entry("clMemBlockingFreeINTEL"),
            info: extension_entry("clGetMemAllocInfoINTEL"),
            set_arg: extension_entry("clSetKernelArgMemPointerINTEL"),
            fill: extension_entry("clEnqueueMemFillINTEL"),
            memset: extension_entry("clEnqueueMemsetINTEL"),
            memcpy: extension_entry("clEnqueueMemcpyINTEL"),
            migrate: extension_entry("clEnqueueMigrateMemINTEL"),
            advise: extension_entry("clEnqueueMemAdviseINTEL"),
        }
    }
}

fn ok(status: cl_int, what: &str) {
    assert_eq!(status, CL_SUCCESS, "{what}: {}", error_text(status));
}

fn info_u64(u: &Usm, env: &Env, p: *const c_void, param: cl_mem_info_intel) -> u64 {
    let mut out = [0u8; 8];
    let mut size = 0usize;
    // SAFETY: an 8-byte output, enough for every USM query.
    ok(
        unsafe {
            (u.info)(
                env.context.get(),
                p,
                param,
                8,
                out.as_mut_ptr().cast(),
                &mut size,
            )
        },
        "clGetMemAllocInfoINTEL",
    );
    out[size..].fill(0);
    u64::from_ne_bytes(out)
}

#[test]
fn the_device_reports_unified_shared_memory() {
    let env = Env::new();
    let ext = check(cl(env.device.extensions()), "CL_DEVICE_EXTENSIONS");
    assert!(ext.contains("cl_intel_unified_shared_memory"), "{ext}");
    let all = CL_UNIFIED_SHARED_MEMORY_ACCESS_INTEL
        | CL_UNIFIED_SHARED_MEMORY_ATOMIC_ACCESS_INTEL
        | CL_UNIFIED_SHARED_MEMORY_CONCURRENT_ACCESS_INTEL
        | CL_UNIFIED_SHARED_MEMORY_CONCURRENT_ATOMIC_ACCESS_INTEL;
    for param in [
        CL_DEVICE_HOST_MEM_CAPABILITIES_INTEL,
        CL_DEVICE_DEVICE_MEM_CAPABILITIES_INTEL,
        CL_DEVICE_SINGLE_DEVICE_SHARED_MEM_CAPABILITIES_INTEL,
        CL_DEVICE_CROSS_DEVICE_SHARED_MEM_CAPABILITIES_INTEL,
        CL_DEVICE_SHARED_SYSTEM_MEM_CAPABILITIES_INTEL,
    ] {
        let raw = cl3::device::get_device_data(env.device.id(), param).expect("clGetDeviceInfo");
        assert_eq!(
            u64::from_ne_bytes(raw[..8].try_into().unwrap()),
            all,
            "{param:#x}"
        );
    }
}

#[test]
fn allocations_queries_kernels_and_commands() {
    let env = Env::new();
    let u = usm();
    let ctx = env.context.get();
    let dev = env.device.id();
    let n = 4096usize;
    let mut err = 0;
    let flags = [
        CL_MEM_ALLOC_FLAGS_INTEL,
        CL_MEM_ALLOC_WRITE_COMBINED_INTEL,
        0,
    ];
    // SAFETY: valid handles; results checked.
    let (h, d, s) = unsafe {
        let h = (u.host_alloc)(ctx, ptr::null(), n * 4, 0, &mut err);
        ok(err, "clHostMemAllocINTEL");
        let d = (u.device_alloc)(ctx, dev, flags.as_ptr(), n * 4, 64, &mut err);
        ok(err, "clDeviceMemAllocINTEL");
        let s = (u.shared_alloc)(ctx, ptr::null_mut(), ptr::null(), n * 4, 0, &mut err);
        ok(err, "clSharedMemAllocINTEL");
        (h, d, s)
    };
    assert_eq!(d as usize % 64, 0);
    // Queries, on interior pointers too.
    let interior = d.cast::<u8>().wrapping_add(100).cast::<c_void>();
    assert_eq!(
        info_u64(&u, &env, interior, CL_MEM_ALLOC_TYPE_INTEL),
        CL_MEM_TYPE_DEVICE_INTEL as u64
    );
    assert_eq!(
        info_u64(&u, &env, interior, CL_MEM_ALLOC_BASE_PTR_INTEL),
        d as u64
    );
    assert_eq!(
        info_u64(&u, &env, interior, CL_MEM_ALLOC_SIZE_INTEL),
        (n * 4) as u64
    );
    assert_eq!(info_u64(&u, &env, d, CL_MEM_ALLOC_DEVICE_INTEL), dev as u64);
    assert_eq!(
        info_u64(&u, &env, d, CL_MEM_ALLOC_FLAGS_INTEL as cl_mem_info_intel),
        CL_MEM_ALLOC_WRITE_COMBINED_INTEL
    );
    assert_eq!(
        info_u64(&u, &env, h, CL_MEM_ALLOC_TYPE_INTEL),
        CL_MEM_TYPE_HOST_INTEL as u64
    );
    assert_eq!(info_u64(&u, &env, h, CL_MEM_ALLOC_DEVICE_INTEL), 0);
    assert_eq!(
        info_u64(&u, &env, s, CL_MEM_ALLOC_TYPE_INTEL),
        CL_MEM_TYPE_SHARED_INTEL as u64
    );
    let stack = [0u8; 4];
    assert_eq!(
        info_u64(&u, &env, stack.as_ptr().cast(), CL_MEM_ALLOC_TYPE_INTEL),
        CL_MEM_TYPE_UNKNOWN_INTEL as u64
    );
    assert_eq!(
        info_u64(&u, &env, stack.as_ptr().cast(), CL_MEM_ALLOC_BASE_PTR_INTEL),
        0
    );
    // Fill the device allocation with 3, the host one with bytes 0x01 (memset), add them in
    // a kernel into the shared one.
    let three = 3i32;
    // SAFETY: valid queue and allocations of n ints.
    unsafe {
        ok(
            (u.fill)(
                env.queue.get(),
                d,
                (&three as *const i32).cast(),
                4,
                n * 4,
                0,
                ptr::null(),
                ptr::null_mut(),
            ),
            "clEnqueueMemFillINTEL",
        );
        ok(
            (u.memset)(
                env.queue.get(),
                h,
                1,
                n * 4,
                0,
                ptr::null(),
                ptr::null_mut(),
            ),
            "clEnqueueMemsetINTEL",
        );
    }
    let program = env.program_from_source(
        "kernel void add(global const int *a, global const int *b, global int *c) {
             size_t i = get_global_id(0);
             c[i] = a[i] + b[i];
         }",
        "",
    );
    let k = check(cl(Kernel::create(&program, "add")), "clCreateKernel");
    // SAFETY: valid kernel; the pointers are USM allocations of n ints.
    unsafe {
        ok((u.set_arg)(k.get(), 0, d), "arg 0");
        ok((u.set_arg)(k.get(), 1, h), "arg 1");
        ok((u.set_arg)(k.get(), 2, s), "arg 2");
        // Any pointer value is a valid argument (extension version 1.1.0).
        assert_eq!((u.set_arg)(k.get(), 3, s), CL_INVALID_ARG_INDEX);
        let e = cq::enqueue_nd_range_kernel(
            env.queue.get(),
            k.get(),
            1,
            ptr::null(),
            &n,
            ptr::null(),
            0,
            ptr::null(),
        )
        .expect("clEnqueueNDRangeKernel");
        cl3::event::release_event(e).unwrap();
        ok(
            (u.migrate)(
                env.queue.get(),
                s,
                n * 4,
                CL_MIGRATE_MEM_OBJECT_HOST as cl_mem_migration_flags,
                0,
                ptr::null(),
                ptr::null_mut(),
            ),
            "clEnqueueMigrateMemINTEL",
        );
        ok(
            (u.advise)(
                env.queue.get(),
                s,
                n * 4,
                0,
                0,
                ptr::null(),
                ptr::null_mut(),
            ),
            "clEnqueueMemAdviseINTEL",
        );
    }
    let mut out = vec![0i32; n];
    // SAFETY: blocking copy of n ints into `out`.
    unsafe {
        ok(
            (u.memcpy)(
                env.queue.get(),
                CL_TRUE,
                out.as_mut_ptr().cast(),
                s,
                n * 4,
                0,
                ptr::null(),
                ptr::null_mut(),
            ),
            "clEnqueueMemcpyINTEL",
        );
    }
    assert!(out.iter().all(|&v| v == 3 + 0x0101_0101), "{}", out[0]);
    // SAFETY: frees of this context's allocations.
    unsafe {
        ok((u.free)(ctx, h), "clMemFreeINTEL(host)");
        ok((u.blocking_free)(ctx, d), "clMemBlockingFreeINTEL");
        ok((u.free)(ctx, s), "clMemFreeINTEL(shared)");
        ok((u.free)(ctx, ptr::null_mut()), "clMemFreeINTEL(NULL)");
    }
}

#[test]
fn kernels_reach_usm_indirectly_and_blocking_frees_wait_for_them() {
    let env = Env::new();
    let u = usm();
    let ctx = env.context.get();
    let n = 1usize << 20;
    let mut err = 0;
    // SAFETY: valid handles; results checked.
    let (table, data) = unsafe {
        let table = (u.shared_alloc)(ctx, env.device.id(), ptr::null(), 8, 0, &mut err);
        ok(err, "clSharedMemAllocINTEL");
        let data = (u.device_alloc)(ctx, env.device.id(), ptr::null(), n * 4, 0, &mut err);
        ok(err, "clDeviceMemAllocINTEL");
        (table, data)
    };
    // The kernel finds `data` through a pointer stored in `table`.
    // SAFETY: 8 bytes of shared memory, written by the host before the launch.
    unsafe { *(table as *mut *mut c_void) = data };
    let program = env.program_from_source(
        "kernel void k(global int * global *table) {
             size_t i = get_global_id(0);
             global int *d = table[0];
             int v = (int)i;
             for (int r = 0; r < 32; r++) v = v * 5 + 1;
             d[i] = v;
         }",
        "-cl-std=CL3.0",
    );
    let k = check(cl(Kernel::create(&program, "k")), "clCreateKernel");
    let on: cl_bool = CL_TRUE;
    // SAFETY: valid kernel and queue.
    unsafe {
        ok((u.set_arg)(k.get(), 0, table), "arg 0");
        cl3::kernel::set_kernel_exec_info(
            k.get(),
            CL_KERNEL_EXEC_INFO_INDIRECT_DEVICE_ACCESS_INTEL,
            std::mem::size_of::<cl_bool>(),
            (&on as *const cl_bool).cast(),
        )
        .expect("INDIRECT_DEVICE_ACCESS");
        let pointers = [data];
        cl3::kernel::set_kernel_exec_info(
            k.get(),
            CL_KERNEL_EXEC_INFO_USM_PTRS_INTEL,
            std::mem::size_of_val(&pointers),
            pointers.as_ptr().cast(),
        )
        .expect("USM_PTRS");
        let e = cq::enqueue_nd_range_kernel(
            env.queue.get(),
            k.get(),
            1,
            ptr::null(),
            &n,
            ptr::null(),
            0,
            ptr::null(),
        )
        .expect("clEnqueueNDRangeKernel");
        cl3::event::release_event(e).unwrap();
    }
    let mut out = vec![0i32; n];
    // SAFETY: blocking copy of n ints, then frees; the blocking free returns once the launch
    // that holds the allocation has ended.
    unsafe {
        ok(
            (u.memcpy)(
                env.queue.get(),
                CL_TRUE,
                out.as_mut_ptr().cast(),
                data,
                n * 4,
                0,
                ptr::null(),
                ptr::null_mut(),
            ),
            "clEnqueueMemcpyINTEL",
        );
        ok((u.blocking_free)(ctx, data), "clMemBlockingFreeINTEL");
        ok((u.free)(ctx, table), "clMemFreeINTEL");
    }
    for (i, &v) in out.iter().enumerate().step_by(997) {
        let mut want = i as i32;
        for _ in 0..32 {
            want = want.wrapping_mul(5).wrapping_add(1);
        }
        assert_eq!(v, want, "item {i}");
    }
}

#[test]
fn bad_input_gives_the_extensions_errors() {
    let env = Env::new();
    let u = usm();
    let ctx = env.context.get();
    let mut err = 0;
    let placement = [
        CL_MEM_ALLOC_FLAGS_INTEL,
        CL_MEM_ALLOC_INITIAL_PLACEMENT_HOST_INTEL,
        0,
    ];
    let unknown = [0x1234u64, 1, 0];
    // SAFETY: valid handles; each call must fail without allocating.
    unsafe {
        let refused = |p: *mut c_void, err: cl_int, want: cl_int, what: &str| {
            assert!(p.is_null(), "{what}");
            assert_eq!(err, want, "{what}");
        };
        let p = (u.host_alloc)(ctx, ptr::null(), 64, 256, &mut err);
        refused(p, err, CL_INVALID_VALUE, "alignment above the largest type");
        let p = (u.host_alloc)(ctx, ptr::null(), 64, 3, &mut err);
        refused(p, err, CL_INVALID_VALUE, "alignment not a power of two");
        let p = (u.host_alloc)(ctx, ptr::null(), 0, 0, &mut err);
        refused(p, err, CL_INVALID_BUFFER_SIZE, "size 0");
        let p = (u.host_alloc)(ctx, placement.as_ptr(), 64, 0, &mut err);
        refused(
            p,
            err,
            CL_INVALID_PROPERTY,
            "a placement on a host allocation",
        );
        let p = (u.host_alloc)(ctx, unknown.as_ptr(), 64, 0, &mut err);
        refused(p, err, CL_INVALID_PROPERTY, "an unknown property");
        let p = (u.device_alloc)(ctx, ptr::null_mut(), ptr::null(), 64, 0, &mut err);
        refused(p, err, CL_INVALID_DEVICE, "no device");
        // Shared allocations may ask for a placement.
        let s = (u.shared_alloc)(ctx, ptr::null_mut(), placement.as_ptr(), 64, 0, &mut err);
        ok(err, "shared with a placement hint");
        assert_eq!(
            (u.free)(ctx, s.cast::<u8>().add(8).cast()),
            CL_INVALID_VALUE,
            "not the base of an allocation"
        );
        let svm = cl3::memory::svm_alloc(ctx, CL_MEM_READ_WRITE as cl_svm_mem_flags, 64, 0)
            .expect("clSVMAlloc");
        assert_eq!((u.free)(ctx, svm), CL_INVALID_VALUE, "an SVM allocation");
        cl3::memory::svm_free(ctx, svm).unwrap();
        ok((u.free)(ctx, s), "clMemFreeINTEL");
        assert_eq!((u.free)(ctx, s), CL_INVALID_VALUE, "a second free");
        let mut param = [0u8; 8];
        assert_eq!(
            (u.info)(
                ctx,
                s,
                0x1234,
                8,
                param.as_mut_ptr().cast(),
                ptr::null_mut()
            ),
            CL_INVALID_VALUE
        );
        assert_eq!(
            (u.info)(
                ctx,
                s,
                CL_MEM_ALLOC_SIZE_INTEL,
                2,
                param.as_mut_ptr().cast(),
                ptr::null_mut()
            ),
            CL_INVALID_VALUE,
            "param_value_size too small"
        );
    }
}
