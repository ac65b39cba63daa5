//! `cl_khr_unified_svm` through the loader: the SVM types the platform and the device report,
//! allocations of every type with their pointer queries, the type suggestion, kernels on
//! device-type memory passed directly and on shared-type memory reached through pointers
//! stored in host-type memory (indirect access), the extension's changes to the SVM commands
//! (NULL for no bytes, no maps of device memory), and bad input.

mod common;

use std::ffi::c_void;
use std::ptr;

use cl3::command_queue as cq;
use cl3::kernel::{set_kernel_arg_svm_pointer, set_kernel_exec_info};
use cl3::memory::{svm_alloc, svm_free};
use common::*;
use opencl3::kernel::Kernel;
use opencl_sys::*;

type AllocFn = unsafe extern "C" fn(
    cl_context,
    *const cl_svm_alloc_properties_khr,
    cl_uint,
    usize,
    *mut cl_int,
) -> *mut c_void;
type FreeFn = unsafe extern "C" fn(
    cl_context,
    *const cl_svm_free_properties_khr,
    cl_bitfield,
    *mut c_void,
) -> cl_int;
type InfoFn = unsafe extern "C" fn(
    cl_context,
    cl_device_id,
    *const c_void,
    cl_svm_pointer_info_khr,
    usize,
    *mut c_void,
    *mut usize,
) -> cl_int;
type SuggestFn = unsafe extern "C" fn(
    cl_context,
    cl_svm_capabilities_khr,
    cl_svm_capabilities_khr,
    *const cl_svm_alloc_properties_khr,
    usize,
    *mut cl_uint,
) -> cl_int;

/// The extension's entry points, looked up as applications do.
struct Usvm {
    alloc: AllocFn,
    free: FreeFn,
    info: InfoFn,
    suggest: SuggestFn,
}

fn usvm() -> Usvm {
    // SAFETY: each pointer is the driver's function of that name, with the signature the
    // extension's header gives it.
    unsafe {
        Usvm {
            alloc: extension_entry("clSVMAllocWithPropertiesKHR"),
            free: extension_entry("clSVMFreeWithPropertiesKHR"),
            info: extension_entry("clGetSVMPointerInfoKHR"),
            suggest: extension_entry("clGetSVMSuggestedTypeIndexKHR"),
        }
    }
}

/// The six types, in the order the device lists them with fine-grain SVM (the default).
const TYPE_MACROS: [cl_svm_capabilities_khr; 6] = [
    CL_SVM_TYPE_MACRO_COARSE_GRAIN_BUFFER_KHR,
    CL_SVM_TYPE_MACRO_FINE_GRAIN_BUFFER_KHR,
    CL_SVM_TYPE_MACRO_DEVICE_KHR,
    CL_SVM_TYPE_MACRO_HOST_KHR,
    CL_SVM_TYPE_MACRO_SINGLE_DEVICE_SHARED_KHR,
    CL_SVM_TYPE_MACRO_SYSTEM_KHR,
];
const COARSE: cl_uint = 0;
const FINE: cl_uint = 1;
const DEVICE: cl_uint = 2;
const HOST: cl_uint = 3;
const SHARED: cl_uint = 4;

fn type_capabilities(raw: Vec<u8>) -> Vec<cl_svm_capabilities_khr> {
    raw.chunks_exact(8)
        .map(|c| u64::from_ne_bytes(c.try_into().unwrap()))
        .collect()
}

fn device_types(env: &Env) -> Vec<cl_svm_capabilities_khr> {
    type_capabilities(
        cl3::device::get_device_data(env.device.id(), CL_DEVICE_SVM_TYPE_CAPABILITIES_KHR)
            .expect("CL_DEVICE_SVM_TYPE_CAPABILITIES_KHR"),
    )
}

/// Allocates `size` bytes of type `index`, with the device handle the type needs.
fn alloc(u: &Usvm, env: &Env, index: cl_uint, size: usize) -> *mut c_void {
    let needs_device =
        device_types(env)[index as usize] & CL_SVM_CAPABILITY_DEVICE_UNASSOCIATED_KHR == 0;
    let props = [
        CL_SVM_ALLOC_ASSOCIATED_DEVICE_HANDLE_KHR,
        env.device.id() as cl_svm_alloc_properties_khr,
        0,
    ];
    let list = if needs_device {
        props.as_ptr()
    } else {
        ptr::null()
    };
    let mut err = 0;
    // SAFETY: a valid context and a zero-terminated list.
    let p = unsafe { (u.alloc)(env.context.get(), list, index, size, &mut err) };
    assert_eq!(err, CL_SUCCESS, "clSVMAllocWithPropertiesKHR type {index}");
    assert!(!p.is_null());
    p
}

fn free(u: &Usvm, env: &Env, p: *mut c_void) {
    // SAFETY: a valid context; `p` is the caller's allocation.
    let status = unsafe { (u.free)(env.context.get(), ptr::null(), 0, p) };
    assert_eq!(status, CL_SUCCESS, "clSVMFreeWithPropertiesKHR");
}

/// `clGetSVMPointerInfoKHR` as raw bytes (with `device` NULL or the test's device).
fn info(
    u: &Usvm,
    env: &Env,
    device: cl_device_id,
    p: *const c_void,
    param: cl_svm_pointer_info_khr,
) -> Vec<u8> {
    let mut size = 0;
    // SAFETY: a size query, then a read into a buffer of that size.
    unsafe {
        let status = (u.info)(
            env.context.get(),
            device,
            p,
            param,
            0,
            ptr::null_mut(),
            &mut size,
        );
        assert_eq!(
            status, CL_SUCCESS,
            "clGetSVMPointerInfoKHR({param:#x}) size"
        );
        let mut out = vec![0u8; size];
        let status = (u.info)(
            env.context.get(),
            device,
            p,
            param,
            size,
            out.as_mut_ptr().cast(),
            ptr::null_mut(),
        );
        assert_eq!(status, CL_SUCCESS, "clGetSVMPointerInfoKHR({param:#x})");
        out
    }
}

fn info_u64(u: &Usvm, env: &Env, p: *const c_void, param: cl_svm_pointer_info_khr) -> u64 {
    let mut raw = info(u, env, ptr::null_mut(), p, param);
    raw.resize(8, 0);
    u64::from_ne_bytes(raw[..8].try_into().unwrap())
}

fn kernel(env: &Env, source: &str, name: &str) -> Kernel {
    let program = env.program_from_source(source, "-cl-std=CL3.0");
    check(cl(Kernel::create(&program, name)), "clCreateKernel")
}

fn finish(env: &Env) {
    check(cq::finish(env.queue.get()), "clFinish");
}

#[test]
fn the_platform_and_the_device_report_the_same_six_types() {
    let env = Env::new();
    if !env.extension_or_skip("cl_khr_unified_svm") {
        return;
    }
    let platform_ext = check(cl(platform().extensions()), "CL_PLATFORM_EXTENSIONS");
    assert!(
        platform_ext.contains("cl_khr_unified_svm"),
        "{platform_ext}"
    );
    let platform_types = type_capabilities(
        cl3::platform::get_platform_data(platform().id(), CL_PLATFORM_SVM_TYPE_CAPABILITIES_KHR)
            .expect("CL_PLATFORM_SVM_TYPE_CAPABILITIES_KHR"),
    );
    let types = device_types(&env);
    assert_eq!(
        platform_types, types,
        "one device: the intersection is its list"
    );
    assert_eq!(types.len(), 6, "{types:#x?}");
    for (caps, macro_caps) in types.iter().zip(TYPE_MACROS) {
        assert_eq!(
            caps & macro_caps,
            macro_caps,
            "{caps:#x} lacks {macro_caps:#x}"
        );
        // A CPU gives every type indirect access: kernels reach all host memory.
        assert_ne!(caps & CL_SVM_CAPABILITY_INDIRECT_ACCESS_KHR, 0);
    }
    let system: Vec<_> = types
        .iter()
        .filter(|c| *c & CL_SVM_CAPABILITY_SYSTEM_ALLOCATED_KHR != 0)
        .collect();
    assert_eq!(system.len(), 1, "only the system type is system-allocated");
    // Ownership rules of the capability table: device-owned is never unassociated, host-owned
    // always is.
    for caps in &types {
        if caps & CL_SVM_CAPABILITY_DEVICE_OWNED_KHR != 0 {
            assert_eq!(caps & CL_SVM_CAPABILITY_DEVICE_UNASSOCIATED_KHR, 0);
        }
        if caps & CL_SVM_CAPABILITY_HOST_OWNED_KHR != 0 {
            assert_ne!(caps & CL_SVM_CAPABILITY_DEVICE_UNASSOCIATED_KHR, 0);
        }
    }
}

#[test]
fn allocations_of_every_type_answer_their_queries() {
    let env = Env::new();
    if !env.extension_or_skip("cl_khr_unified_svm") {
        return;
    }
    let u = usvm();
    let types = device_types(&env);
    let device = env.device.id() as cl_device_id;
    for (index, &caps) in types.iter().enumerate() {
        let index = index as cl_uint;
        let props = [
            CL_SVM_ALLOC_ASSOCIATED_DEVICE_HANDLE_KHR,
            device as cl_svm_alloc_properties_khr,
            CL_SVM_ALLOC_ACCESS_FLAGS_KHR,
            CL_SVM_ALLOC_ACCESS_HOST_NOREAD_KHR,
            CL_SVM_ALLOC_ALIGNMENT_KHR,
            64,
            0,
        ];
        let mut err = 0;
        // SAFETY: a valid context and a zero-terminated list.
        let p = unsafe { (u.alloc)(env.context.get(), props.as_ptr(), index, 1000, &mut err) };
        assert_eq!(err, CL_SUCCESS, "type {index}");
        assert_eq!(p as usize % 64, 0);
        let interior = p.cast::<u8>().wrapping_add(999).cast::<c_void>();
        for q in [p.cast_const(), interior.cast_const()] {
            for d in [ptr::null_mut(), device] {
                let u32_info = |param| {
                    u32::from_ne_bytes(info(&u, &env, d, q, param)[..4].try_into().unwrap())
                };
                let u64_info = |param| {
                    u64::from_ne_bytes(info(&u, &env, d, q, param)[..8].try_into().unwrap())
                };
                assert_eq!(u32_info(CL_SVM_INFO_TYPE_INDEX_KHR), index);
                assert_eq!(u64_info(CL_SVM_INFO_CAPABILITIES_KHR), caps);
                assert_eq!(
                    u64_info(CL_SVM_INFO_ACCESS_FLAGS_KHR),
                    CL_SVM_ALLOC_ACCESS_HOST_NOREAD_KHR
                );
                assert_eq!(u64_info(CL_SVM_INFO_BASE_PTR_KHR), p as u64);
                assert_eq!(u64_info(CL_SVM_INFO_SIZE_KHR), 1000);
                assert_eq!(
                    u64_info(CL_SVM_INFO_ASSOCIATED_DEVICE_HANDLE_KHR),
                    device as u64
                );
                // The list as given, terminator included.
                assert_eq!(
                    type_capabilities(info(&u, &env, d, q, CL_SVM_INFO_PROPERTIES_KHR)),
                    props
                );
            }
        }
        free(&u, &env, p);
        assert_eq!(
            info_u64(&u, &env, p, CL_SVM_INFO_TYPE_INDEX_KHR),
            cl_uint::MAX as u64,
            "freed"
        );
    }

    // Memory of no allocation answers the defaults.
    let local = 5u64;
    let stack = (&local as *const u64).cast::<c_void>();
    assert_eq!(
        info_u64(&u, &env, stack, CL_SVM_INFO_TYPE_INDEX_KHR),
        cl_uint::MAX as u64
    );
    for param in [
        CL_SVM_INFO_CAPABILITIES_KHR,
        CL_SVM_INFO_ACCESS_FLAGS_KHR,
        CL_SVM_INFO_BASE_PTR_KHR,
        CL_SVM_INFO_SIZE_KHR,
        CL_SVM_INFO_ASSOCIATED_DEVICE_HANDLE_KHR,
    ] {
        assert_eq!(info_u64(&u, &env, stack, param), 0, "{param:#x}");
    }
    assert!(info(&u, &env, ptr::null_mut(), stack, CL_SVM_INFO_PROPERTIES_KHR).is_empty());

    // clSVMAlloc's allocations are of the buffer types, without properties; clSVMFree frees
    // the extension's allocations too.
    let flags = (CL_MEM_READ_WRITE | CL_MEM_SVM_FINE_GRAIN_BUFFER) as cl_svm_mem_flags;
    // SAFETY: a valid context.
    let fine = unsafe { svm_alloc(env.context.get(), flags, 256, 0) }.expect("clSVMAlloc");
    assert_eq!(
        info_u64(&u, &env, fine, CL_SVM_INFO_TYPE_INDEX_KHR),
        FINE as u64
    );
    assert_eq!(info_u64(&u, &env, fine, CL_SVM_INFO_SIZE_KHR), 256);
    assert!(info(&u, &env, ptr::null_mut(), fine, CL_SVM_INFO_PROPERTIES_KHR).is_empty());
    // SAFETY: `fine` came from clSVMAlloc on this context.
    unsafe { svm_free(env.context.get(), fine) }.expect("clSVMFree");
    let host = alloc(&u, &env, HOST, 64);
    // SAFETY: `host` came from clSVMAllocWithPropertiesKHR on this context.
    unsafe { svm_free(env.context.get(), host) }.expect("clSVMFree");
    assert_eq!(
        info_u64(&u, &env, host, CL_SVM_INFO_TYPE_INDEX_KHR),
        cl_uint::MAX as u64
    );
}

#[test]
fn suggested_types_have_the_required_capabilities() {
    let env = Env::new();
    if !env.extension_or_skip("cl_khr_unified_svm") {
        return;
    }
    let u = usvm();
    let types = device_types(&env);
    let device_props = [
        CL_SVM_ALLOC_ASSOCIATED_DEVICE_HANDLE_KHR,
        env.device.id() as cl_svm_alloc_properties_khr,
        0,
    ];
    let suggest = |required, desired, props: *const cl_svm_alloc_properties_khr| {
        let mut index = 77;
        // SAFETY: a valid context, a zero-terminated list or NULL, a writable result.
        let status = unsafe {
            (u.suggest)(
                env.context.get(),
                required,
                desired,
                props,
                4096,
                &mut index,
            )
        };
        assert_eq!(status, CL_SUCCESS);
        index
    };
    for bit in 0..15 {
        let required = 1u64 << bit;
        for props in [ptr::null(), device_props.as_ptr()] {
            let index = suggest(required, 0, props);
            assert_ne!(types[index as usize] & required, 0, "bit {bit}");
        }
    }
    for &macro_caps in &TYPE_MACROS {
        let index = suggest(macro_caps, 0, ptr::null());
        assert_eq!(types[index as usize] & macro_caps, macro_caps);
    }
    // Desired capabilities steer among the types that qualify: device reads plus desired host
    // reads is fine grain, the first type with both.
    assert_eq!(
        suggest(
            CL_SVM_CAPABILITY_DEVICE_READ_KHR,
            CL_SVM_CAPABILITY_HOST_READ_KHR,
            ptr::null()
        ),
        FINE
    );
    assert_eq!(
        suggest(1 << 40, 0, ptr::null()),
        cl_uint::MAX,
        "no such type"
    );
    // SAFETY: refused before anything is written.
    let status = unsafe { (u.suggest)(env.context.get(), 1, 0, ptr::null(), 0, ptr::null_mut()) };
    assert_eq!(status, CL_INVALID_VALUE, "no place for the answer");
}

#[test]
fn kernels_reach_device_memory_directly_and_shared_memory_indirectly() {
    let env = Env::new();
    if !env.extension_or_skip("cl_khr_unified_svm") {
        return;
    }
    let u = usvm();
    const N: usize = 8;
    // Device memory the kernel is given; shared allocations it reaches only through the
    // pointers a host allocation holds.
    let out = alloc(&u, &env, DEVICE, N * 4).cast::<i32>();
    let table = alloc(&u, &env, HOST, N * 8).cast::<u64>();
    let cells: Vec<*mut i32> = (0..N)
        .map(|_| alloc(&u, &env, SHARED, 4).cast::<i32>())
        .collect();
    for (i, &cell) in cells.iter().enumerate() {
        // SAFETY: host and shared types are host-readable and -writable, and nothing runs yet.
        unsafe {
            *table.add(i) = cell as u64;
            *cell = i as i32 * 100;
        }
    }
    let k = kernel(
        &env,
        "kernel void chase(global int *out, global const ulong *table) {
             size_t i = get_global_id(0);
             global int *cell = (global int *)table[i];
             out[i] = *cell + 1;
             *cell = -(int)i;
         }",
        "chase",
    );
    let on: cl_bool = CL_TRUE;
    // SAFETY: a valid kernel, a cl_bool value, pointers of this context.
    unsafe {
        check(
            set_kernel_arg_svm_pointer(k.get(), 0, out.cast()),
            "clSetKernelArgSVMPointer",
        );
        check(
            set_kernel_arg_svm_pointer(k.get(), 1, table.cast()),
            "clSetKernelArgSVMPointer",
        );
        check(
            set_kernel_exec_info(
                k.get(),
                CL_KERNEL_EXEC_INFO_SVM_INDIRECT_ACCESS_KHR,
                std::mem::size_of::<cl_bool>(),
                (&on as *const cl_bool).cast(),
            ),
            "clSetKernelExecInfo(CL_KERNEL_EXEC_INFO_SVM_INDIRECT_ACCESS_KHR)",
        );
        let global = N;
        let e = cq::enqueue_nd_range_kernel(
            env.queue.get(),
            k.get(),
            1,
            ptr::null(),
            &global,
            ptr::null(),
            0,
            ptr::null(),
        )
        .expect("clEnqueueNDRangeKernel");
        cl3::event::release_event(e).expect("clReleaseEvent");
    }
    finish(&env);
    // Device memory is read back with a copy, as the type's capabilities say.
    let mut got = [0i32; N];
    // SAFETY: a blocking copy out of the N-int device allocation.
    unsafe {
        let e = cq::enqueue_svm_mem_cpy(
            env.queue.get(),
            CL_TRUE,
            got.as_mut_ptr().cast(),
            out.cast(),
            N * 4,
            0,
            ptr::null(),
        )
        .expect("clEnqueueSVMMemcpy");
        cl3::event::release_event(e).expect("clReleaseEvent");
    }
    let expected: Vec<i32> = (0..N as i32).map(|i| i * 100 + 1).collect();
    assert_eq!(got.to_vec(), expected);
    for (i, &cell) in cells.iter().enumerate() {
        // SAFETY: the kernel has finished.
        assert_eq!(unsafe { *cell }, -(i as i32));
        free(&u, &env, cell.cast());
    }
    free(&u, &env, out.cast());
    free(&u, &env, table.cast());
}

#[test]
fn commands_take_null_for_no_bytes_and_refuse_to_map_device_memory() {
    let env = Env::new();
    if !env.extension_or_skip("cl_khr_unified_svm") {
        return;
    }
    let u = usvm();
    let q = env.queue.get();
    let pattern = 7i32;
    // SAFETY: commands of no bytes, or on allocations of this context of the sizes given.
    unsafe {
        let e =
            cq::enqueue_svm_mem_cpy(q, CL_TRUE, ptr::null_mut(), ptr::null(), 0, 0, ptr::null())
                .expect("a copy of no bytes between NULL pointers");
        cl3::event::release_event(e).expect("clReleaseEvent");
        let e = cq::enqueue_svm_mem_fill(
            q,
            ptr::null_mut(),
            (&pattern as *const i32).cast(),
            4,
            0,
            0,
            ptr::null(),
        )
        .expect("a fill of no bytes at NULL");
        cl3::event::release_event(e).expect("clReleaseEvent");

        let device = alloc(&u, &env, DEVICE, 64);
        assert_eq!(
            cq::enqueue_svm_map(q, CL_TRUE, CL_MAP_READ, device, 64, 0, ptr::null()).err(),
            Some(CL_INVALID_VALUE),
            "device memory has no CL_SVM_CAPABILITY_HOST_MAP_KHR"
        );
        assert_eq!(
            cq::enqueue_svm_unmap(q, device, 0, ptr::null()).err(),
            Some(CL_INVALID_VALUE)
        );
        let coarse = alloc(&u, &env, COARSE, 64);
        let e = cq::enqueue_svm_map(q, CL_TRUE, CL_MAP_WRITE, coarse, 64, 0, ptr::null())
            .expect("clEnqueueSVMMap");
        cl3::event::release_event(e).expect("clReleaseEvent");
        coarse.cast::<i32>().write(42);
        let e = cq::enqueue_svm_unmap(q, coarse, 0, ptr::null()).expect("clEnqueueSVMUnmap");
        cl3::event::release_event(e).expect("clReleaseEvent");
        // A NULL pointer with no size is skipped by a migration.
        let mut pointers = [coarse.cast_const(), ptr::null()];
        let e = cq::enqueue_svm_migrate_mem(
            q,
            2,
            pointers.as_mut_ptr(),
            ptr::null(),
            0,
            0,
            ptr::null(),
        )
        .expect("clEnqueueSVMMigrateMem with a NULL pointer");
        cl3::event::release_event(e).expect("clReleaseEvent");
        // The device copies its own memory.
        let e = cq::enqueue_svm_mem_cpy(q, CL_TRUE, device, coarse, 4, 0, ptr::null())
            .expect("clEnqueueSVMMemcpy");
        cl3::event::release_event(e).expect("clReleaseEvent");
        let mut back = 0i32;
        let e = cq::enqueue_svm_mem_cpy(
            q,
            CL_TRUE,
            (&mut back as *mut i32).cast(),
            device,
            4,
            0,
            ptr::null(),
        )
        .expect("clEnqueueSVMMemcpy");
        cl3::event::release_event(e).expect("clReleaseEvent");
        assert_eq!(back, 42);
        free(&u, &env, device);
        free(&u, &env, coarse);
    }
}

#[test]
fn bad_input_gives_the_extensions_errors() {
    let env = Env::new();
    if !env.extension_or_skip("cl_khr_unified_svm") {
        return;
    }
    let u = usvm();
    let ctx = env.context.get();
    let types = device_types(&env);
    let try_alloc = |props: &[cl_svm_alloc_properties_khr], index, size| {
        let mut err = 1;
        let list = if props.is_empty() {
            ptr::null()
        } else {
            props.as_ptr()
        };
        // SAFETY: a valid context and a zero-terminated list or NULL.
        let p = unsafe { (u.alloc)(ctx, list, index, size, &mut err) };
        (p, err)
    };
    let refused = |props: &[cl_svm_alloc_properties_khr], index| {
        let (p, err) = try_alloc(props, index, 64);
        assert!(p.is_null());
        err
    };
    assert_eq!(
        refused(&[], types.len() as cl_uint),
        CL_INVALID_VALUE,
        "no such type"
    );
    assert_eq!(
        refused(&[], DEVICE),
        CL_INVALID_PROPERTY,
        "device memory needs a device"
    );
    assert_eq!(
        refused(&[0x1234, 1, 0], HOST),
        CL_INVALID_PROPERTY,
        "unknown property"
    );
    let twice = [
        CL_SVM_ALLOC_ALIGNMENT_KHR,
        8,
        CL_SVM_ALLOC_ALIGNMENT_KHR,
        8,
        0,
    ];
    assert_eq!(
        refused(&twice, HOST),
        CL_INVALID_PROPERTY,
        "a repeated property"
    );
    for alignment in [3, 256] {
        assert_eq!(
            refused(&[CL_SVM_ALLOC_ALIGNMENT_KHR, alignment, 0], HOST),
            CL_INVALID_PROPERTY,
            "alignment {alignment}"
        );
    }
    assert_eq!(
        refused(&[CL_SVM_ALLOC_ACCESS_FLAGS_KHR, 1 << 3, 0], HOST),
        CL_INVALID_PROPERTY,
        "an access flag the extension does not define"
    );
    let not_a_device = (&env as *const Env) as cl_svm_alloc_properties_khr;
    assert_eq!(
        refused(
            &[CL_SVM_ALLOC_ASSOCIATED_DEVICE_HANDLE_KHR, not_a_device, 0],
            HOST
        ),
        CL_INVALID_PROPERTY
    );
    let mut err = 0;
    // SAFETY: refused for the NULL context.
    let p = unsafe { (u.alloc)(ptr::null_mut(), ptr::null(), HOST, 64, &mut err) };
    assert!(p.is_null());
    assert_eq!(err, CL_INVALID_CONTEXT);
    // Size 0 is no allocation and no error.
    assert_eq!(try_alloc(&[], HOST, 0), (ptr::null_mut(), CL_SUCCESS));

    let p = alloc(&u, &env, HOST, 64);
    let free_props = [0x5678, 0, 0];
    // SAFETY: each call is refused before anything is freed, or frees `p` once.
    unsafe {
        assert_eq!(
            (u.free)(ctx, ptr::null(), 1, p),
            CL_INVALID_VALUE,
            "a free flag"
        );
        assert_eq!(
            (u.free)(ctx, free_props.as_ptr(), 0, p),
            CL_INVALID_PROPERTY,
            "a free property"
        );
        assert_eq!(
            (u.free)(ctx, ptr::null(), 0, p.cast::<u8>().add(8).cast()),
            CL_INVALID_VALUE,
            "an interior pointer"
        );
        assert_eq!(
            (u.free)(ptr::null_mut(), ptr::null(), 0, p),
            CL_INVALID_CONTEXT
        );
        assert_eq!(
            (u.free)(ctx, ptr::null(), 0, ptr::null_mut()),
            CL_SUCCESS,
            "NULL"
        );
        let mut small = 0u8;
        assert_eq!(
            (u.info)(
                ctx,
                ptr::null_mut(),
                p,
                CL_SVM_INFO_SIZE_KHR,
                1,
                (&mut small as *mut u8).cast(),
                ptr::null_mut()
            ),
            CL_INVALID_VALUE,
            "too small a result"
        );
        assert_eq!(
            (u.info)(
                ctx,
                ptr::null_mut(),
                p,
                0x1234,
                0,
                ptr::null_mut(),
                ptr::null_mut()
            ),
            CL_INVALID_VALUE,
            "an unknown query"
        );
        assert_eq!(
            (u.info)(
                ctx,
                not_a_device as cl_device_id,
                p,
                CL_SVM_INFO_SIZE_KHR,
                0,
                ptr::null_mut(),
                ptr::null_mut()
            ),
            CL_INVALID_DEVICE
        );
        free(&u, &env, p);
        assert_eq!(
            (u.free)(ctx, ptr::null(), 0, p),
            CL_INVALID_VALUE,
            "a pointer freed before"
        );
    }
}
