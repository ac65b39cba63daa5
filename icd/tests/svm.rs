//! Shared virtual memory through the loader: the reported levels, coarse-grain buffers through
//! map/unmap, memcpy, fill, migrate and free commands, kernels on interior SVM pointers,
//! fine-grain system SVM (a kernel walking a host-built linked list in `Box` memory), host
//! threads and kernels updating one fine-grain counter with atomics while the kernel runs, a
//! free while a kernel uses the memory, and bad input.

mod common;

use std::ffi::c_void;
use std::ptr;
use std::sync::atomic::{AtomicI32, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use cl3::command_queue as cq;
use cl3::kernel::{set_kernel_arg_svm_pointer, set_kernel_exec_info};
use cl3::memory::{svm_alloc, svm_free};
use common::*;
use opencl3::kernel::Kernel;
use opencl_sys::*;

const RW: cl_svm_mem_flags = CL_MEM_READ_WRITE as cl_svm_mem_flags;
const FINE: cl_svm_mem_flags = CL_MEM_SVM_FINE_GRAIN_BUFFER as cl_svm_mem_flags;
const ATOMICS: cl_svm_mem_flags = CL_MEM_SVM_ATOMICS as cl_svm_mem_flags;

fn alloc(env: &Env, flags: cl_svm_mem_flags, bytes: usize) -> *mut c_void {
    // SAFETY: a valid context; the result is checked.
    let p = unsafe { svm_alloc(env.context.get(), flags, bytes, 0) };
    check(p, "clSVMAlloc")
}

fn free(env: &Env, p: *mut c_void) {
    // SAFETY: `p` came from clSVMAlloc on this context (or is NULL / already freed: no-op).
    unsafe { svm_free(env.context.get(), p) }.expect("clSVMFree");
}

fn kernel(env: &Env, source: &str, name: &str) -> Kernel {
    let program = env.program_from_source(source, "-cl-std=CL3.0");
    check(cl(Kernel::create(&program, name)), "clCreateKernel")
}

fn svm_arg(k: &Kernel, index: cl_uint, p: *const c_void) {
    // SAFETY: a valid kernel.
    check(
        unsafe { set_kernel_arg_svm_pointer(k.get(), index, p) },
        "clSetKernelArgSVMPointer",
    );
}

fn memcpy(env: &Env, dst: *mut c_void, src: *const c_void, bytes: usize) -> Result<(), cl_int> {
    // SAFETY: blocking copy between regions the caller vouches for (or that the driver refuses).
    let event = unsafe {
        cq::enqueue_svm_mem_cpy(env.queue.get(), CL_TRUE, dst, src, bytes, 0, ptr::null())
    }?;
    // SAFETY: the event just returned.
    unsafe { cl3::event::release_event(event) }.expect("clReleaseEvent");
    Ok(())
}

fn launch(env: &Env, k: &Kernel, global: usize) -> cl_event {
    // SAFETY: arguments set by the caller; one dimension.
    let r = unsafe {
        cq::enqueue_nd_range_kernel(
            env.queue.get(),
            k.get(),
            1,
            ptr::null(),
            &global,
            ptr::null(),
            0,
            ptr::null(),
        )
    };
    check(r, "clEnqueueNDRangeKernel")
}

fn finish(env: &Env) {
    check(cl3::command_queue::finish(env.queue.get()), "clFinish");
}

#[test]
fn the_device_reports_every_svm_level_and_all_devices_scope() {
    let env = Env::new();
    let id = env.device.id();
    let raw = |param| cl3::device::get_device_data(id, param).expect("clGetDeviceInfo");
    let u64_of = |param| u64::from_ne_bytes(raw(param)[..8].try_into().unwrap());
    assert_eq!(
        u64_of(CL_DEVICE_SVM_CAPABILITIES),
        (CL_DEVICE_SVM_COARSE_GRAIN_BUFFER
            | CL_DEVICE_SVM_FINE_GRAIN_BUFFER
            | CL_DEVICE_SVM_FINE_GRAIN_SYSTEM
            | CL_DEVICE_SVM_ATOMICS)
    );
    for param in [
        CL_DEVICE_ATOMIC_MEMORY_CAPABILITIES,
        CL_DEVICE_ATOMIC_FENCE_CAPABILITIES,
    ] {
        assert_ne!(
            u64_of(param) & CL_DEVICE_ATOMIC_SCOPE_ALL_DEVICES,
            0,
            "{param:#x}"
        );
    }
    let features = String::from_utf8_lossy(&raw(CL_DEVICE_OPENCL_C_FEATURES)).into_owned();
    assert!(features.contains("__opencl_c_atomic_scope_all_devices"));
}

static FREED: AtomicUsize = AtomicUsize::new(0);

unsafe extern "C" fn free_callback(
    _queue: cl_command_queue,
    n: cl_uint,
    pointers: *mut *mut c_void,
    user_data: *mut c_void,
) {
    // SAFETY: the driver passes the `n` pointers enqueued; user_data is the context.
    unsafe {
        for i in 0..n as usize {
            svm_free(user_data as cl_context, *pointers.add(i)).expect("clSVMFree");
        }
    }
    FREED.fetch_add(n as usize, Ordering::SeqCst);
}

#[test]
fn coarse_grain_buffers_through_maps_commands_and_kernels() {
    let env = Env::new();
    let n = 1024usize;
    let p = alloc(&env, RW, n * 4);
    assert_eq!(p as usize % 128, 0, "default alignment: the largest type");
    // Fill through a map.
    // SAFETY: blocking map of the whole allocation.
    let e = unsafe {
        cq::enqueue_svm_map(
            env.queue.get(),
            CL_TRUE,
            CL_MAP_WRITE as cl_map_flags,
            p,
            n * 4,
            0,
            ptr::null(),
        )
    };
    check(e, "clEnqueueSVMMap");
    // SAFETY: mapped for writing, n ints.
    let host = unsafe { std::slice::from_raw_parts_mut(p.cast::<i32>(), n) };
    for (i, v) in host.iter_mut().enumerate() {
        *v = i as i32;
    }
    // SAFETY: the pointer mapped above.
    check(
        unsafe { cq::enqueue_svm_unmap(env.queue.get(), p, 0, ptr::null()) },
        "clEnqueueSVMUnmap",
    );
    // A kernel on an interior pointer: elements 16.. get 1000 added.
    let k = kernel(
        &env,
        "kernel void add(global int *a, int k) { a[get_global_id(0)] += k; }",
        "add",
    );
    // SAFETY: 16 ints into the allocation.
    svm_arg(&k, 0, unsafe { p.cast::<i32>().add(16) }.cast());
    arg(&k, 1, &1000i32);
    launch(&env, &k, n - 16);
    let mut out = vec![0i32; n];
    memcpy(&env, out.as_mut_ptr().cast(), p, n * 4).expect("clEnqueueSVMMemcpy");
    for (i, &v) in out.iter().enumerate() {
        let want = i as i32 + if i >= 16 { 1000 } else { 0 };
        assert_eq!(v, want, "element {i}");
    }
    // An 8-byte pattern over the second half, then back to the host.
    let pattern: [i32; 2] = [7, -7];
    // SAFETY: the pattern outlives the call (it is copied at enqueue).
    let e = unsafe {
        cq::enqueue_svm_mem_fill(
            env.queue.get(),
            p.cast::<i32>().add(n / 2).cast(),
            pattern.as_ptr().cast(),
            8,
            n * 2,
            0,
            ptr::null(),
        )
    };
    check(e, "clEnqueueSVMMemFill");
    memcpy(&env, out.as_mut_ptr().cast(), p, n * 4).expect("clEnqueueSVMMemcpy");
    assert_eq!(out[n / 2 - 1], (n / 2 - 1) as i32 + 1000);
    assert!(out[n / 2..].chunks(2).all(|c| c == pattern));
    // SVM to SVM, then migrate both.
    let q = alloc(&env, RW, n * 4);
    memcpy(&env, q, p, n * 4).expect("SVM to SVM copy");
    let pointers = [p as *const c_void, q as *const c_void];
    // SAFETY: two SVM pointers, whole allocations (no sizes).
    let e = unsafe {
        cq::enqueue_svm_migrate_mem(
            env.queue.get(),
            2,
            pointers.as_ptr(),
            ptr::null(),
            0,
            0,
            ptr::null(),
        )
    };
    check(e, "clEnqueueSVMMigrateMem");
    let mut back = vec![0i32; n];
    memcpy(&env, back.as_mut_ptr().cast(), q, n * 4).expect("copy back");
    assert_eq!(back, out);
    // clEnqueueSVMFree with the application's callback.
    let before = FREED.load(Ordering::SeqCst);
    let pointers = [p as *const c_void, q as *const c_void];
    // SAFETY: two allocations of this context, freed by the callback.
    let e = unsafe {
        cq::enqueue_svm_free(
            env.queue.get(),
            2,
            pointers.as_ptr(),
            Some(free_callback),
            env.context.get(),
            0,
            ptr::null(),
        )
    };
    check(e, "clEnqueueSVMFree");
    finish(&env);
    assert_eq!(FREED.load(Ordering::SeqCst), before + 2);
}

#[repr(C)]
struct Node {
    value: i32,
    next: *const Node,
}

#[test]
fn fine_grain_system_kernels_chase_pointers_through_host_memory() {
    let env = Env::new();
    // A list of 1000 nodes, each in its own Box, linked in a scrambled order.
    let count = 1000;
    let mut nodes: Vec<Box<Node>> = (0..count)
        .map(|i| {
            Box::new(Node {
                value: i * 3 + 1,
                next: ptr::null(),
            })
        })
        .collect();
    let order: Vec<usize> = (0..count as usize)
        .map(|i| (i * 389) % count as usize)
        .collect();
    for w in order.windows(2) {
        let next: *const Node = &*nodes[w[1]];
        nodes[w[0]].next = next;
    }
    let head: *const Node = &*nodes[order[0]];
    let mut sum = Box::new(0i64);
    let k = kernel(
        &env,
        "typedef struct Node { int value; global struct Node *next; } Node;
         kernel void walk(global const Node *head, global long *sum) {
             long s = 0;
             for (global const Node *n = head; n; n = n->next) s += n->value;
             *sum = s;
         }",
        "walk",
    );
    let on: cl_bool = CL_TRUE;
    // SAFETY: one cl_bool.
    check(
        unsafe {
            set_kernel_exec_info(
                k.get(),
                CL_KERNEL_EXEC_INFO_SVM_FINE_GRAIN_SYSTEM,
                std::mem::size_of::<cl_bool>(),
                (&on as *const cl_bool).cast(),
            )
        },
        "clSetKernelExecInfo(FINE_GRAIN_SYSTEM)",
    );
    svm_arg(&k, 0, head.cast());
    svm_arg(&k, 1, (&mut *sum as *mut i64).cast());
    launch(&env, &k, 1);
    finish(&env);
    let want: i64 = (0..count as i64).map(|i| i * 3 + 1).sum();
    assert_eq!(*sum, want);
}

#[test]
fn host_threads_and_kernels_see_each_others_atomics_while_the_kernel_runs() {
    let env = Env::new();
    let p = alloc(&env, RW | FINE | ATOMICS, 8);
    // SAFETY: 8 bytes of fine-grain SVM, 4-byte aligned, shared with the kernel through
    // atomics only.
    let (counter, seen) = unsafe { (&*(p as *const AtomicI32), &*(p as *const AtomicI32).add(1)) };
    counter.store(0, Ordering::SeqCst);
    seen.store(-1, Ordering::SeqCst);
    // The kernel announces itself, waits for the host's increment (bounded, so a driver that
    // cannot see it fails the test instead of hanging), records what it saw and answers.
    let k = kernel(
        &env,
        "kernel void handshake(global atomic_int *c) {
             atomic_fetch_add_explicit(c, 1, memory_order_seq_cst, memory_scope_all_svm_devices);
             long spins = 0;
             while (atomic_load_explicit(c, memory_order_seq_cst, memory_scope_all_svm_devices) < 2
                    && spins < 2000000000L)
                 spins++;
             atomic_store_explicit(c + 1,
                 atomic_load_explicit(c, memory_order_seq_cst, memory_scope_all_svm_devices),
                 memory_order_seq_cst, memory_scope_all_svm_devices);
             atomic_fetch_add_explicit(c, 1, memory_order_seq_cst, memory_scope_all_svm_devices);
         }",
        "handshake",
    );
    svm_arg(&k, 0, p);
    let event = launch(&env, &k, 1);
    check(cl3::command_queue::flush(env.queue.get()), "clFlush");
    let wait_for = |want: i32| {
        let start = Instant::now();
        while counter.load(Ordering::SeqCst) < want {
            assert!(
                start.elapsed() < Duration::from_secs(60),
                "the host never saw the kernel's increment (counter {})",
                counter.load(Ordering::SeqCst)
            );
            std::hint::spin_loop();
        }
    };
    wait_for(1);
    counter.fetch_add(1, Ordering::SeqCst);
    wait_for(3);
    check(cl3::event::wait_for_events(&[event]), "clWaitForEvents");
    assert_eq!(
        seen.load(Ordering::SeqCst),
        2,
        "the kernel saw the host's update"
    );
    assert_eq!(counter.load(Ordering::SeqCst), 3);
    // SAFETY: the event from the launch, released once.
    unsafe { cl3::event::release_event(event) }.expect("clReleaseEvent");
    free(&env, p);
}

#[test]
fn a_free_while_a_kernel_uses_the_memory_waits_for_the_kernel() {
    let env = Env::new();
    let n = 1 << 20;
    let p = alloc(&env, RW, n * 4);
    let out = env.buffer_filled(n, 0i32);
    let k = kernel(
        &env,
        "kernel void work(global int *tmp, global int *out) {
             size_t i = get_global_id(0);
             int v = (int)i;
             for (int r = 0; r < 64; r++) { tmp[i] = v; v = tmp[i] * 3 + 1; }
             out[i] = v;
         }",
        "work",
    );
    svm_arg(&k, 0, p);
    arg_buf(&k, 1, &out);
    let event = launch(&env, &k, n);
    // Freed at once, while the kernel is queued or running: the memory stays until it ends.
    free(&env, p);
    check(cl3::event::wait_for_events(&[event]), "clWaitForEvents");
    // SAFETY: released once.
    unsafe { cl3::event::release_event(event) }.expect("clReleaseEvent");
    let got = env.read(&out, n);
    for (i, &v) in got.iter().enumerate().step_by(4099) {
        let mut want = i as i32;
        for _ in 0..64 {
            want = want.wrapping_mul(3).wrapping_add(1);
        }
        assert_eq!(v, want, "item {i}");
    }
}

#[test]
fn bad_input_gives_the_specs_errors() {
    let env = Env::new();
    let ctx = env.context.get();
    // SAFETY (every call below): a valid context, queue and kernel; the pointers are what the
    // driver must refuse or treat as the spec says.
    unsafe {
        assert!(svm_alloc(ctx, RW, 0, 0).is_err(), "size 0");
        assert!(
            svm_alloc(ctx, ATOMICS, 64, 0).is_err(),
            "atomics without fine grain"
        );
        assert!(
            svm_alloc(ctx, RW, 64, 3).is_err(),
            "alignment not a power of two"
        );
        assert!(svm_alloc(ctx, 1 << 40, 64, 0).is_err(), "unknown flag");
        let big = svm_alloc(ctx, RW, 64, 1 << 16).expect("64 KiB alignment");
        assert_eq!(big as usize % (1 << 16), 0);
        svm_free(ctx, big).unwrap();
        svm_free(ctx, big).unwrap(); // a second free is a no-op
        svm_free(ctx, ptr::null_mut()).unwrap();
    }
    let p = alloc(&env, RW, 256);
    let mut host = [0u8; 512];
    assert_eq!(
        memcpy(&env, p, p.cast::<u8>().wrapping_add(8).cast(), 64),
        Err(CL_MEM_COPY_OVERLAP)
    );
    assert_eq!(
        memcpy(&env, ptr::null_mut(), p, 4),
        Err(CL_INVALID_VALUE),
        "NULL destination"
    );
    assert_eq!(
        memcpy(&env, host.as_mut_ptr().cast(), p, 512),
        Err(CL_INVALID_VALUE),
        "past the end of the allocation"
    );
    let pattern = [1u8; 4];
    // SAFETY: refused before anything is written.
    unsafe {
        let fill = |dst: *mut c_void, pattern_size, size| {
            cq::enqueue_svm_mem_fill(
                env.queue.get(),
                dst,
                pattern.as_ptr().cast(),
                pattern_size,
                size,
                0,
                ptr::null(),
            )
            .err()
        };
        assert_eq!(fill(p, 3, 6), Some(CL_INVALID_VALUE), "pattern size 3");
        assert_eq!(
            fill(p.cast::<u8>().add(2).cast(), 4, 8),
            Some(CL_INVALID_VALUE),
            "misaligned"
        );
        assert_eq!(fill(p, 4, 6), Some(CL_INVALID_VALUE), "size not a multiple");
    }
    let k = kernel(
        &env,
        "kernel void k(global int *a, int v, local int *l) { a[0] = v + l[0]; }",
        "k",
    );
    // SAFETY: a valid kernel.
    unsafe {
        assert_eq!(
            set_kernel_arg_svm_pointer(k.get(), 1, p),
            Err(CL_INVALID_ARG_VALUE),
            "a value argument"
        );
        assert_eq!(
            set_kernel_arg_svm_pointer(k.get(), 2, p),
            Err(CL_INVALID_ARG_VALUE),
            "a local pointer"
        );
        assert_eq!(
            set_kernel_arg_svm_pointer(k.get(), 3, p),
            Err(CL_INVALID_ARG_INDEX)
        );
        assert_eq!(
            set_kernel_exec_info(k.get(), 0x1234, 8, (&p as *const *mut c_void).cast()),
            Err(CL_INVALID_VALUE)
        );
        let pointers = [p];
        set_kernel_exec_info(
            k.get(),
            CL_KERNEL_EXEC_INFO_SVM_PTRS,
            std::mem::size_of_val(&pointers),
            pointers.as_ptr().cast(),
        )
        .expect("CL_KERNEL_EXEC_INFO_SVM_PTRS");
    }
    // A buffer over SVM memory says so; one over plain host memory does not.
    let uses_svm = |host_ptr: *mut c_void| {
        // SAFETY: both regions outlive the buffer, released at the end of the closure.
        let b = unsafe {
            opencl3::memory::Buffer::<u8>::create(
                &env.context,
                opencl3::memory::CL_MEM_USE_HOST_PTR,
                256,
                host_ptr,
            )
        }
        .expect("clCreateBuffer(USE_HOST_PTR)");
        let info = opencl3::memory::get_mem_object_data(b.get(), CL_MEM_USES_SVM_POINTER)
            .expect("CL_MEM_USES_SVM_POINTER");
        u32::from_ne_bytes(info[..4].try_into().unwrap()) != 0
    };
    assert!(uses_svm(p));
    assert!(!uses_svm(host.as_mut_ptr().cast()));
    free(&env, p);
}
