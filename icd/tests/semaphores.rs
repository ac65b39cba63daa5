//! `cl_khr_semaphore` through the loader: the reported types and a semaphore's queries, a
//! signal and a wait ordering commands of one queue and across two (the wait enqueued before
//! its signal), a failed signal failing its wait, and bad input.

mod common;

use std::ffi::c_void;
use std::ptr;
use std::time::Duration;

use cl3::command_queue as cq;
use common::*;
use opencl_sys::*;

type CreateFn = unsafe extern "C" fn(
    cl_context,
    *const cl_semaphore_properties_khr,
    *mut cl_int,
) -> cl_semaphore_khr;
type EnqueueFn = unsafe extern "C" fn(
    cl_command_queue,
    cl_uint,
    *const cl_semaphore_khr,
    *const cl_semaphore_payload_khr,
    cl_uint,
    *const cl_event,
    *mut cl_event,
) -> cl_int;
type InfoFn = unsafe extern "C" fn(
    cl_semaphore_khr,
    cl_semaphore_info_khr,
    usize,
    *mut c_void,
    *mut usize,
) -> cl_int;
type RefFn = unsafe extern "C" fn(cl_semaphore_khr) -> cl_int;
type HandleFn = unsafe extern "C" fn(
    cl_semaphore_khr,
    cl_device_id,
    cl_external_semaphore_handle_type_khr,
    usize,
    *mut c_void,
    *mut usize,
) -> cl_int;

/// The extension's entry points, looked up as applications do.
struct Sema {
    create: CreateFn,
    wait: EnqueueFn,
    signal: EnqueueFn,
    info: InfoFn,
    retain: RefFn,
    release: RefFn,
    handle: HandleFn,
}

fn sema() -> Sema {
    // SAFETY: each pointer is the driver's function of that name, with the signature the
    // extension's header gives it.
    unsafe {
        Sema {
            create: extension_entry("clCreateSemaphoreWithPropertiesKHR"),
            wait: extension_entry("clEnqueueWaitSemaphoresKHR"),
            signal: extension_entry("clEnqueueSignalSemaphoresKHR"),
            info: extension_entry("clGetSemaphoreInfoKHR"),
            retain: extension_entry("clRetainSemaphoreKHR"),
            release: extension_entry("clReleaseSemaphoreKHR"),
            handle: extension_entry("clGetSemaphoreHandleForTypeKHR"),
        }
    }
}

const BINARY: [cl_semaphore_properties_khr; 3] = [
    CL_SEMAPHORE_TYPE_KHR as cl_semaphore_properties_khr,
    CL_SEMAPHORE_TYPE_BINARY_KHR as cl_semaphore_properties_khr,
    0,
];

fn create(
    s: &Sema,
    env: &Env,
    props: &[cl_semaphore_properties_khr],
) -> Result<cl_semaphore_khr, cl_int> {
    let mut err = 1;
    let list = if props.is_empty() {
        ptr::null()
    } else {
        props.as_ptr()
    };
    // SAFETY: a valid context and a terminated list or NULL.
    let h = unsafe { (s.create)(env.context.get(), list, &mut err) };
    if err == CL_SUCCESS {
        assert!(!h.is_null());
        Ok(h)
    } else {
        assert!(h.is_null());
        Err(err)
    }
}

/// Signals (`signal`) or waits on `semaphore` in `queue` after `wait`; the command's event.
fn enqueue(
    s: &Sema,
    queue: cl_command_queue,
    signal: bool,
    semaphore: cl_semaphore_khr,
    wait: &[cl_event],
) -> Result<cl_event, cl_int> {
    let f = if signal { s.signal } else { s.wait };
    let mut event = ptr::null_mut();
    let list = if wait.is_empty() {
        ptr::null()
    } else {
        wait.as_ptr()
    };
    // SAFETY: valid handles, a one-semaphore list and an event out-pointer.
    let status = unsafe {
        f(
            queue,
            1,
            &semaphore,
            ptr::null(),
            wait.len() as cl_uint,
            list,
            &mut event,
        )
    };
    if status == CL_SUCCESS {
        Ok(event)
    } else {
        Err(status)
    }
}

fn info(s: &Sema, h: cl_semaphore_khr, param: cl_semaphore_info_khr) -> Vec<u8> {
    let mut size = 0;
    // SAFETY: a size query, then a read into a buffer of that size.
    unsafe {
        assert_eq!(
            (s.info)(h, param, 0, ptr::null_mut(), &mut size),
            CL_SUCCESS,
            "{param:#x}"
        );
        let mut out = vec![0u8; size];
        assert_eq!(
            (s.info)(h, param, size, out.as_mut_ptr().cast(), ptr::null_mut()),
            CL_SUCCESS
        );
        out
    }
}

fn info_u64(s: &Sema, h: cl_semaphore_khr, param: cl_semaphore_info_khr) -> u64 {
    let mut raw = info(s, h, param);
    raw.resize(8, 0);
    u64::from_ne_bytes(raw[..8].try_into().unwrap())
}

fn event_status(e: cl_event) -> cl_int {
    let raw = cl3::event::get_event_data(e, CL_EVENT_COMMAND_EXECUTION_STATUS)
        .expect("CL_EVENT_COMMAND_EXECUTION_STATUS");
    cl_int::from_ne_bytes(raw[..4].try_into().unwrap())
}

fn release_event(e: cl_event) {
    // SAFETY: an event this test owns.
    unsafe { cl3::event::release_event(e) }.expect("clReleaseEvent");
}

fn user_event(env: &Env) -> cl_event {
    check(
        cl3::event::create_user_event(env.context.get()),
        "clCreateUserEvent",
    )
}

fn second_queue(env: &Env) -> CommandQueue {
    check(
        cl(CommandQueue::create_default_with_properties(
            &env.context,
            0,
            0,
        )),
        "clCreateCommandQueueWithProperties",
    )
}

#[test]
fn the_device_reports_binary_semaphores_and_their_queries() {
    let env = Env::new();
    if !env.extension_or_skip("cl_khr_semaphore") {
        return;
    }
    let s = sema();
    let binary = CL_SEMAPHORE_TYPE_BINARY_KHR.to_ne_bytes().to_vec();
    assert_eq!(
        cl3::platform::get_platform_data(platform().id(), CL_PLATFORM_SEMAPHORE_TYPES_KHR).unwrap(),
        binary
    );
    assert_eq!(
        cl3::device::get_device_data(env.device.id(), CL_DEVICE_SEMAPHORE_TYPES_KHR).unwrap(),
        binary
    );
    let device = env.device.id() as cl_semaphore_properties_khr;
    let props = [
        CL_SEMAPHORE_TYPE_KHR as cl_semaphore_properties_khr,
        CL_SEMAPHORE_TYPE_BINARY_KHR as cl_semaphore_properties_khr,
        CL_SEMAPHORE_DEVICE_HANDLE_LIST_KHR as cl_semaphore_properties_khr,
        device,
        0,
        0,
    ];
    for (list, what) in [(&props[..], "with a device list"), (&BINARY[..], "without")] {
        let h = create(&s, &env, list).expect(what);
        assert_eq!(
            info_u64(&s, h, CL_SEMAPHORE_TYPE_KHR),
            CL_SEMAPHORE_TYPE_BINARY_KHR as u64
        );
        assert_eq!(
            info_u64(&s, h, CL_SEMAPHORE_CONTEXT_KHR),
            env.context.get() as u64
        );
        assert_eq!(
            info_u64(&s, h, CL_SEMAPHORE_DEVICE_HANDLE_LIST_KHR),
            device,
            "{what}"
        );
        assert_eq!(
            info_u64(&s, h, CL_SEMAPHORE_PAYLOAD_KHR),
            0,
            "created unsignaled"
        );
        let echoed: Vec<u64> = info(&s, h, CL_SEMAPHORE_PROPERTIES_KHR)
            .chunks_exact(8)
            .map(|c| u64::from_ne_bytes(c.try_into().unwrap()))
            .collect();
        assert_eq!(echoed, list, "the list as given");
        assert_eq!(
            info_u64(&s, h, CL_SEMAPHORE_EXPORTABLE_KHR),
            CL_FALSE as u64
        );
        assert!(info(
            &s,
            h,
            CL_SEMAPHORE_EXPORT_HANDLE_TYPES_KHR as cl_semaphore_info_khr
        )
        .is_empty());
        assert_eq!(info_u64(&s, h, CL_SEMAPHORE_REFERENCE_COUNT_KHR), 1);
        // SAFETY: a live semaphore this test owns.
        unsafe {
            assert_eq!((s.retain)(h), CL_SUCCESS);
            assert_eq!(info_u64(&s, h, CL_SEMAPHORE_REFERENCE_COUNT_KHR), 2);
            assert_eq!((s.release)(h), CL_SUCCESS);
            assert_eq!((s.release)(h), CL_SUCCESS);
        }
    }
}

#[test]
fn a_wait_holds_back_its_queue_until_the_signal_in_another_queue_completes() {
    let env = Env::new();
    if !env.extension_or_skip("cl_khr_semaphore") {
        return;
    }
    let s = sema();
    let h = create(&s, &env, &BINARY).expect("clCreateSemaphoreWithPropertiesKHR");
    let other = second_queue(&env);
    let buffer = env.buffer_filled(16, 0i32);
    let gate = user_event(&env);
    // The wait comes first, in `env.queue`, with a fill behind it.
    let wait = enqueue(&s, env.queue.get(), false, h, &[]).expect("clEnqueueWaitSemaphoresKHR");
    let seven = 7i32;
    // SAFETY: a fill of the whole 16-int buffer.
    let fill = unsafe {
        cq::enqueue_fill_buffer(
            env.queue.get(),
            buffer.get(),
            (&seven as *const i32).cast(),
            4,
            0,
            64,
            0,
            ptr::null(),
        )
    }
    .expect("clEnqueueFillBuffer");
    // The signal, in the other queue, waits on the application's gate.
    let signal = enqueue(&s, other.get(), true, h, &[gate]).expect("clEnqueueSignalSemaphoresKHR");
    std::thread::sleep(Duration::from_millis(50));
    assert!(
        event_status(wait) > CL_COMPLETE,
        "the wait ran before its signal"
    );
    assert!(event_status(fill) > CL_COMPLETE, "the fill passed the wait");
    assert_eq!(info_u64(&s, h, CL_SEMAPHORE_PAYLOAD_KHR), 0);
    check(
        cl3::event::set_user_event_status(gate, CL_COMPLETE),
        "clSetUserEventStatus",
    );
    check(cq::finish(env.queue.get()), "clFinish");
    assert_eq!(event_status(signal), CL_COMPLETE);
    assert_eq!(event_status(wait), CL_COMPLETE);
    assert_eq!(env.read(&buffer, 16), vec![7; 16]);
    assert_eq!(
        info_u64(&s, h, CL_SEMAPHORE_PAYLOAD_KHR),
        0,
        "the wait took the signal"
    );

    // Signal first, then wait, in one queue: the payload is 1 in between.
    let signal2 = enqueue(&s, env.queue.get(), true, h, &[]).expect("signal");
    check(cq::finish(env.queue.get()), "clFinish");
    assert_eq!(info_u64(&s, h, CL_SEMAPHORE_PAYLOAD_KHR), 1);
    let wait2 = enqueue(&s, env.queue.get(), false, h, &[]).expect("wait");
    check(cq::finish(env.queue.get()), "clFinish");
    assert_eq!(event_status(wait2), CL_COMPLETE);
    assert_eq!(info_u64(&s, h, CL_SEMAPHORE_PAYLOAD_KHR), 0);
    let command_type = |e| {
        let raw = cl3::event::get_event_data(e, CL_EVENT_COMMAND_TYPE).unwrap();
        cl_command_type::from_ne_bytes(raw[..4].try_into().unwrap())
    };
    assert_eq!(command_type(signal2), CL_COMMAND_SEMAPHORE_SIGNAL_KHR);
    assert_eq!(command_type(wait2), CL_COMMAND_SEMAPHORE_WAIT_KHR);
    for e in [wait, fill, signal, signal2, wait2, gate] {
        release_event(e);
    }
    // SAFETY: the semaphore this test created.
    assert_eq!(unsafe { (s.release)(h) }, CL_SUCCESS);
}

#[test]
fn a_failed_signal_fails_its_wait() {
    let env = Env::new();
    if !env.extension_or_skip("cl_khr_semaphore") {
        return;
    }
    let s = sema();
    let h = create(&s, &env, &BINARY).expect("clCreateSemaphoreWithPropertiesKHR");
    let other = second_queue(&env);
    let gate = user_event(&env);
    let wait = enqueue(&s, env.queue.get(), false, h, &[]).expect("wait");
    let signal = enqueue(&s, other.get(), true, h, &[gate]).expect("signal");
    check(
        cl3::event::set_user_event_status(gate, -7),
        "clSetUserEventStatus",
    );
    assert!(cl3::event::wait_for_events(&[wait]).is_err());
    assert!(event_status(signal) < 0);
    assert!(event_status(wait) < 0);
    assert_eq!(info_u64(&s, h, CL_SEMAPHORE_PAYLOAD_KHR), 0);
    for e in [wait, signal, gate] {
        release_event(e);
    }
    // SAFETY: the semaphore this test created.
    assert_eq!(unsafe { (s.release)(h) }, CL_SUCCESS);
}

#[test]
fn bad_input_gives_the_extensions_errors() {
    let env = Env::new();
    if !env.extension_or_skip("cl_khr_semaphore") {
        return;
    }
    let s = sema();
    let t = CL_SEMAPHORE_TYPE_KHR as cl_semaphore_properties_khr;
    let binary = CL_SEMAPHORE_TYPE_BINARY_KHR as cl_semaphore_properties_khr;
    let list = CL_SEMAPHORE_DEVICE_HANDLE_LIST_KHR as cl_semaphore_properties_khr;
    let device = env.device.id() as cl_semaphore_properties_khr;
    assert_eq!(
        create(&s, &env, &[]).err(),
        Some(CL_INVALID_VALUE),
        "NULL properties"
    );
    assert_eq!(
        create(&s, &env, &[0]).err(),
        Some(CL_INVALID_VALUE),
        "no type"
    );
    assert_eq!(
        create(&s, &env, &[t, 7, 0]).err(),
        Some(CL_INVALID_PROPERTY),
        "no such type"
    );
    assert_eq!(
        create(&s, &env, &[t, binary, t, 0]).err(),
        Some(CL_INVALID_PROPERTY),
        "twice"
    );
    assert_eq!(
        create(&s, &env, &[!0, binary, 0]).err(),
        Some(CL_INVALID_PROPERTY)
    );
    assert_eq!(
        create(&s, &env, &[t, binary, list, device, device, 0, 0]).err(),
        Some(CL_INVALID_DEVICE),
        "two devices"
    );
    assert_eq!(
        create(&s, &env, &[t, binary, list, 0, 0]).err(),
        Some(CL_INVALID_DEVICE),
        "no device"
    );
    let not_a_device = (&env as *const Env) as cl_semaphore_properties_khr;
    assert_eq!(
        create(&s, &env, &[t, binary, list, not_a_device, 0, 0]).err(),
        Some(CL_INVALID_DEVICE)
    );
    let mut err = 0;
    // SAFETY: refused for the NULL context.
    let h = unsafe { (s.create)(ptr::null_mut(), BINARY.as_ptr(), &mut err) };
    assert!(h.is_null());
    assert_eq!(err, CL_INVALID_CONTEXT);

    let h = create(&s, &env, &BINARY).expect("clCreateSemaphoreWithPropertiesKHR");
    let q = env.queue.get();
    let failed = user_event(&env);
    check(
        cl3::event::set_user_event_status(failed, -1),
        "clSetUserEventStatus",
    );
    // SAFETY: each call is refused before anything is enqueued.
    unsafe {
        for f in [s.signal, s.wait] {
            assert_eq!(
                f(q, 0, &h, ptr::null(), 0, ptr::null(), ptr::null_mut()),
                CL_INVALID_VALUE,
                "no semaphore"
            );
            let bogus: cl_semaphore_khr = env.context.get();
            assert_eq!(
                f(q, 1, &bogus, ptr::null(), 0, ptr::null(), ptr::null_mut()),
                CL_INVALID_SEMAPHORE_KHR
            );
            assert_eq!(
                f(
                    ptr::null_mut(),
                    1,
                    &h,
                    ptr::null(),
                    0,
                    ptr::null(),
                    ptr::null_mut()
                ),
                CL_INVALID_COMMAND_QUEUE
            );
            assert_eq!(
                f(q, 1, &h, ptr::null(), 1, ptr::null(), ptr::null_mut()),
                CL_INVALID_EVENT_WAIT_LIST
            );
            let wait = [failed];
            assert_eq!(
                f(q, 1, &h, ptr::null(), 1, wait.as_ptr(), ptr::null_mut()),
                CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST
            );
        }
        let mut small = 0u8;
        assert_eq!(
            (s.info)(
                h,
                CL_SEMAPHORE_PAYLOAD_KHR,
                1,
                (&mut small as *mut u8).cast(),
                ptr::null_mut()
            ),
            CL_INVALID_VALUE
        );
        assert_eq!(
            (s.info)(h, 0x1234, 0, ptr::null_mut(), ptr::null_mut()),
            CL_INVALID_VALUE
        );
        assert_eq!(
            (s.info)(
                ptr::null_mut(),
                CL_SEMAPHORE_PAYLOAD_KHR,
                0,
                ptr::null_mut(),
                ptr::null_mut()
            ),
            CL_INVALID_SEMAPHORE_KHR
        );
        // Nothing is exportable: no external handle for any type.
        let mut fd = 0i32;
        assert_eq!(
            (s.handle)(
                h,
                env.device.id() as cl_device_id,
                CL_SEMAPHORE_HANDLE_SYNC_FD_KHR,
                4,
                (&mut fd as *mut i32).cast(),
                ptr::null_mut()
            ),
            CL_INVALID_VALUE
        );
        assert_eq!((s.retain)(ptr::null_mut()), CL_INVALID_SEMAPHORE_KHR);
        assert_eq!((s.release)(h), CL_SUCCESS);
    }
    release_event(failed);
}
