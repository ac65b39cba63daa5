//! `cl_khr_command_buffer_multi_device`: the platform and device queries; a buffer over the
//! queues of two sub-devices (or, on a machine of one CPU, two queues of the device) with a
//! fill, a kernel and a copy recorded to different queues and ordered by sync points, run as
//! recorded and with substitute queues, ordered after and before the other commands of both
//! queues, its event naming no queue and profiled only when both queues profile; remapped
//! copies (explicit, swapped; automatic, onto one queue) running alike with their command
//! handles on the new queues; and the errors the extension adds.

use std::ptr;

use opencl3::command_queue::CommandQueue;
use opencl3::context::Context;
use opencl3::memory::Buffer;

use super::*;

#[link(name = "OpenCL")]
extern "C" {
    fn clCreateSubDevices(
        d: cl_device_id,
        props: *const cl_device_partition_property,
        n: cl_uint,
        out: *mut cl_device_id,
        ret: *mut cl_uint,
    ) -> cl_int;
    fn clReleaseDevice(d: cl_device_id) -> cl_int;
}

const N: usize = 256;

/// Two devices for the buffer's queues: two sub-devices of one compute unit each, or the
/// device twice where it has only one compute unit. The sub-devices are released on drop.
struct Devices(Vec<cl_device_id>, bool);

impl Devices {
    fn new(root: cl_device_id) -> Devices {
        let props = [
            CL_DEVICE_PARTITION_EQUALLY as cl_device_partition_property,
            1,
            0,
        ];
        let mut n = 0;
        // SAFETY: a zero-terminated property list; out arrays of the size given.
        unsafe {
            if clCreateSubDevices(root, props.as_ptr(), 0, ptr::null_mut(), &mut n) == CL_SUCCESS
                && n >= 2
            {
                let mut out = vec![ptr::null_mut(); n as usize];
                ok(
                    clCreateSubDevices(root, props.as_ptr(), n, out.as_mut_ptr(), ptr::null_mut()),
                    "clCreateSubDevices",
                );
                return Devices(out, true);
            }
        }
        Devices(vec![root, root], false)
    }

    fn pair(&self) -> [cl_device_id; 2] {
        [self.0[0], self.0[1]]
    }
}

impl Drop for Devices {
    fn drop(&mut self) {
        if self.1 {
            for &d in &self.0 {
                // SAFETY: a sub-device this test created, released once.
                unsafe { clReleaseDevice(d) };
            }
        }
    }
}

fn queue_on(context: &Context, device: cl_device_id, profiling: bool) -> CommandQueue {
    let props = if profiling {
        CL_QUEUE_PROFILING_ENABLE
    } else {
        0
    };
    // SAFETY: a device of the context.
    check(
        cl(unsafe { CommandQueue::create_with_properties(context, device, props, 0) }),
        "clCreateCommandQueueWithProperties",
    )
}

/// A command-buffer over `queues`, released on drop (through [`Cb`]).
fn create<'a>(
    api: &'a Api,
    queues: &[cl_command_queue],
    props: &[cl_command_buffer_properties_khr],
) -> Result<Cb<'a>, cl_int> {
    let mut err = 0;
    // SAFETY: valid queues; a zero-terminated property list or NULL.
    let raw = unsafe {
        call!(
            api,
            create(
                queues.len() as cl_uint,
                queues.as_ptr(),
                slice_or_null(props),
                &mut err
            )
        )
    };
    if err == CL_SUCCESS {
        Ok(Cb { api, raw })
    } else {
        Err(err)
    }
}

/// The buffer the tests record: on queue A, fill `data` with 5; on queue B, after it, add
/// `add`'s 10 over the range (a kernel command, its handle returned); on queue A, after that,
/// copy `data` to `out`. Finalized.
fn record_pipeline(
    cb: &Cb,
    queues: [cl_command_queue; 2],
    add: &Kernel,
    data: cl_mem,
    out: cl_mem,
) -> cl_mutable_command_khr {
    let filled = cb
        .try_fill_on(queues[0], data, 5, N * 4, &[])
        .expect("fill on queue A");
    let (mut added, mut handle) = (0, ptr::null_mut());
    let status = cb.try_kernel(
        queues[1],
        add,
        &[],
        N,
        None,
        &[filled],
        &mut added,
        &mut handle,
    );
    ok(status, "kernel on queue B");
    cb.copy_on(queues[0], data, out, N * 4, &[added]);
    ok(cb.finalize(), "clFinalizeCommandBufferKHR");
    handle
}

fn enqueue_on(cb: &Cb, queues: &mut [cl_command_queue]) -> Result<cl_event, cl_int> {
    let mut event = ptr::null_mut();
    // SAFETY: valid handles; a queue list as long as given or NULL.
    let status = unsafe {
        call!(
            cb.api,
            enqueue(
                queues.len() as cl_uint,
                if queues.is_empty() {
                    ptr::null_mut()
                } else {
                    queues.as_mut_ptr()
                },
                cb.raw,
                0,
                ptr::null(),
                &mut event
            )
        )
    };
    if status == CL_SUCCESS {
        Ok(event)
    } else {
        Err(status)
    }
}

fn read_ints(queue: &CommandQueue, buf: &Buffer<i32>) -> Vec<i32> {
    let mut v = vec![0i32; N];
    // SAFETY: a blocking read of N ints into `v`.
    let r = unsafe { queue.enqueue_read_buffer(buf, CL_BLOCKING, 0, &mut v, &[]) };
    check(cl(r), "clEnqueueReadBuffer");
    v
}

fn new_buffer(context: &Context) -> Buffer<i32> {
    // SAFETY: no host pointer.
    let b = unsafe { Buffer::<i32>::create(context, CL_MEM_READ_WRITE, N, ptr::null_mut()) };
    check(cl(b), "clCreateBuffer")
}

fn remap<'a>(
    cb: &Cb<'a>,
    automatic: bool,
    queues: &[cl_command_queue],
    handles: &[cl_mutable_command_khr],
) -> Result<(Cb<'a>, Vec<cl_mutable_command_khr>), cl_int> {
    let mut err = 0;
    let mut out = vec![ptr::null_mut(); handles.len()];
    // SAFETY: valid handles; lists as long as given or NULL.
    let raw = unsafe {
        call!(
            cb.api,
            remap(
                cb.raw,
                if automatic { CL_TRUE } else { CL_FALSE },
                queues.len() as cl_uint,
                slice_or_null(queues),
                handles.len() as cl_uint,
                slice_or_null(handles),
                if handles.is_empty() {
                    ptr::null_mut()
                } else {
                    out.as_mut_ptr()
                },
                &mut err
            )
        )
    };
    if err == CL_SUCCESS {
        Ok((Cb { api: cb.api, raw }, out))
    } else {
        assert!(raw.is_null());
        Err(err)
    }
}

fn command_queue_of(api: &Api, command: cl_mutable_command_khr) -> cl_command_queue {
    let bytes = info_bytes(|size, value, ret| {
        // SAFETY: the two-call protocol with a buffer of `size` bytes.
        unsafe {
            call!(
                api,
                command_info(
                    command,
                    CL_MUTABLE_COMMAND_COMMAND_QUEUE_KHR,
                    size,
                    value,
                    ret
                )
            )
        }
    });
    words::<cl_command_queue>(&bytes)[0]
}

#[test]
fn the_platform_and_devices_report_multi_device_command_buffers() {
    let Some((env, _api)) = setup() else { return };
    if !env.extension_or_skip("cl_khr_command_buffer_multi_device") {
        return;
    }
    let raw = cl3::platform::get_platform_data(
        platform().id(),
        CL_PLATFORM_COMMAND_BUFFER_CAPABILITIES_KHR,
    )
    .expect("CL_PLATFORM_COMMAND_BUFFER_CAPABILITIES_KHR");
    assert_eq!(
        u64::from_ne_bytes(raw[..8].try_into().unwrap()),
        CL_COMMAND_BUFFER_PLATFORM_UNIVERSAL_SYNC_KHR
            | CL_COMMAND_BUFFER_PLATFORM_REMAP_QUEUES_KHR
            | CL_COMMAND_BUFFER_PLATFORM_AUTOMATIC_REMAP_KHR
    );
    let devices = Devices::new(env.device.id());
    for d in devices.pair() {
        let n = cl3::device::get_device_data(d, CL_DEVICE_COMMAND_BUFFER_NUM_SYNC_DEVICES_KHR)
            .expect("NUM_SYNC_DEVICES");
        let list = cl3::device::get_device_data(d, CL_DEVICE_COMMAND_BUFFER_SYNC_DEVICES_KHR)
            .expect("SYNC_DEVICES");
        let list = words::<cl_device_id>(&list);
        assert_eq!(
            u32::from_ne_bytes(n[..4].try_into().unwrap()) as usize,
            list.len()
        );
        // Root devices only, this device's root among them.
        assert!(list.contains(&env.device.id()), "{list:?}");
    }
}

#[test]
fn a_buffer_over_two_devices_runs_its_commands_in_order_on_their_queues() {
    let Some((env, api)) = setup() else { return };
    if !env.extension_or_skip("cl_khr_command_buffer_multi_device") {
        return;
    }
    let devices = Devices::new(env.device.id());
    let [da, db] = devices.pair();
    let context = check(
        cl(Context::from_devices(
            &devices.0[..2],
            &[],
            None,
            ptr::null_mut(),
        )),
        "clCreateContext",
    );
    let program = opencl3::program::Program::create_and_build_from_source(&context, KERNELS, "")
        .unwrap_or_else(|log| panic!("build: {log}"));
    let add = check(cl(Kernel::create(&program, "add")), "clCreateKernel");
    let (qa, qb) = (queue_on(&context, da, true), queue_on(&context, db, true));
    let (data, mut out) = (new_buffer(&context), new_buffer(&context));
    arg_buf(&add, 0, &data);
    arg(&add, 1, &10i32);

    let queues = [qa.get(), qb.get()];
    let cb = create(&api, &queues, &[]).expect("two queues");
    // A command must name one of the buffer's queues now.
    assert_eq!(
        cb.try_fill_on(ptr::null_mut(), data.get(), 1, N * 4, &[])
            .err(),
        Some(CL_INVALID_COMMAND_QUEUE)
    );
    let handle = record_pipeline(&cb, queues, &add, data.get(), out.get());
    assert_eq!(
        words::<u32>(&cb.info(CL_COMMAND_BUFFER_NUM_QUEUES_KHR)),
        vec![2]
    );
    assert_eq!(
        words::<cl_command_queue>(&cb.info(CL_COMMAND_BUFFER_QUEUES_KHR)),
        queues.to_vec()
    );
    assert_eq!(command_queue_of(&api, handle), queues[1]);

    // Run as recorded; the event names no queue, and is profiled (both queues profile).
    let e = enqueue_on(&cb, &mut []).expect("enqueue");
    assert_eq!(event_status(e), CL_COMPLETE);
    let q = cl3::event::get_event_data(e, CL_EVENT_COMMAND_QUEUE).unwrap();
    assert_eq!(words::<cl_command_queue>(&q), vec![ptr::null_mut()]);
    assert!(cl3::event::get_event_profiling_data(e, CL_PROFILING_COMMAND_END).is_ok());
    release(e);
    assert!(read_ints(&qb, &out).iter().all(|&v| v == 15));

    // Ordered with the other commands of both queues: a write on queue B before the buffer
    // is overwritten by its fill, and a read on queue B after it sees its copy.
    let sevens = vec![7i32; N];
    // SAFETY: a non-blocking write from `sevens`, which outlives it (the blocking read
    // below comes after it on the same queue).
    let write = unsafe { qb.enqueue_write_buffer(&mut out, CL_NON_BLOCKING, 0, &sevens, &[]) };
    check(cl(write), "clEnqueueWriteBuffer");
    let e = enqueue_on(&cb, &mut []).expect("enqueue");
    assert!(read_ints(&qb, &out).iter().all(|&v| v == 15));
    release(e);

    // Substitute queues of the same devices; a queue of the wrong device is refused.
    let (qa2, qb2) = (queue_on(&context, da, false), queue_on(&context, db, false));
    let e = enqueue_on(&cb, &mut [qa2.get(), qb2.get()]).expect("substitutes");
    assert_eq!(event_status(e), CL_COMPLETE);
    // One of the queues does not profile: no profiling times.
    assert_eq!(
        cl3::event::get_event_profiling_data(e, CL_PROFILING_COMMAND_END).err(),
        Some(CL_PROFILING_INFO_NOT_AVAILABLE)
    );
    release(e);
    if devices.1 {
        assert_eq!(
            enqueue_on(&cb, &mut [qb2.get(), qa2.get()]).err(),
            Some(CL_INVALID_DEVICE)
        );
    }
    assert_eq!(
        enqueue_on(&cb, &mut [qa2.get()]).err(),
        Some(CL_INVALID_VALUE),
        "one queue for a buffer of two"
    );

    // Remapped, swapped: the kernel now on queue A, the fill and copy on queue B.
    let (swapped, handles) = remap(&cb, false, &[qb.get(), qa.get()], &[handle]).expect("remap");
    assert_eq!(command_queue_of(&api, handles[0]), qa.get());
    assert_ne!(handles[0], handle);
    assert_eq!(swapped.state(), CL_COMMAND_BUFFER_STATE_EXECUTABLE_KHR);
    assert_eq!(
        words::<cl_command_queue>(&swapped.info(CL_COMMAND_BUFFER_QUEUES_KHR)),
        vec![qb.get(), qa.get()]
    );
    // SAFETY: a fill of the whole buffer, waited for by the in-order queue.
    let cleared = unsafe { qa.enqueue_fill_buffer(&mut out, &[0i32], 0, N * 4, &[]) };
    check(cl(cleared), "clEnqueueFillBuffer");
    let e = enqueue_on(&swapped, &mut []).expect("enqueue the remapped copy");
    assert_eq!(event_status(e), CL_COMPLETE);
    release(e);
    assert!(read_ints(&qa, &out).iter().all(|&v| v == 15));
    // Automatic, onto one queue: a buffer of one queue, recorded to with NULL.
    let (single, _) = remap(&cb, true, &[qa.get()], &[]).expect("automatic remap");
    assert_eq!(
        words::<u32>(&single.info(CL_COMMAND_BUFFER_NUM_QUEUES_KHR)),
        vec![1]
    );
    let e = enqueue_on(&single, &mut []).expect("enqueue the single-queue copy");
    assert_eq!(event_status(e), CL_COMPLETE);
    let q = cl3::event::get_event_data(e, CL_EVENT_COMMAND_QUEUE).unwrap();
    assert_eq!(words::<cl_command_queue>(&q), vec![qa.get()]);
    release(e);
    assert!(read_ints(&qa, &out).iter().all(|&v| v == 15));

    // The remap errors.
    assert_eq!(
        remap(&cb, false, &[qa.get()], &[]).err(),
        Some(CL_INVALID_VALUE),
        "explicit, with another number of queues"
    );
    assert_eq!(remap(&cb, true, &[], &[]).err(), Some(CL_INVALID_VALUE));
    assert_eq!(
        remap(&cb, false, &queues, &[handles[0]]).err(),
        Some(CL_INVALID_VALUE),
        "a handle of another buffer"
    );
    let other = Context::from_device(&env.device).unwrap();
    let foreign = queue_on(&other, env.device.id(), false);
    assert_eq!(
        remap(&cb, false, &[qa.get(), foreign.get()], &[]).err(),
        Some(CL_INVALID_CONTEXT)
    );
    assert_eq!(
        remap(&cb, false, &[qa.get(), data.get() as cl_command_queue], &[]).err(),
        Some(CL_INVALID_COMMAND_QUEUE)
    );
    check(cl(qa.finish()), "clFinish");
    check(cl(qb.finish()), "clFinish");
}

#[test]
fn two_queues_of_one_device_and_device_side_sync() {
    let Some((env, api)) = setup() else { return };
    if !env.extension_or_skip("cl_khr_command_buffer_multi_device") {
        return;
    }
    let second = check(
        cl(CommandQueue::create_default_with_properties(
            &env.context,
            CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE,
            0,
        )),
        "clCreateCommandQueueWithProperties",
    );
    let queues = [env.queue.get(), second.get()];
    let props = [
        CL_COMMAND_BUFFER_FLAGS_KHR,
        CL_COMMAND_BUFFER_DEVICE_SIDE_SYNC_KHR,
        0,
    ];
    let cb = create(&api, &queues, &props).expect("device-side sync");
    let add = kernel(&env, "add");
    let data = env.buffer_filled(N, 0i32);
    let out = env.buffer_filled(N, 0i32);
    arg_buf(&add, 0, &data);
    arg(&add, 1, &10i32);
    record_pipeline(&cb, queues, &add, data.get(), out.get());
    for _ in 0..3 {
        let e = enqueue_on(&cb, &mut []).expect("enqueue");
        assert_eq!(event_status(e), CL_COMPLETE);
        release(e);
    }
    check(cl(second.finish()), "clFinish");
    assert!(env.read(&out, N).iter().all(|&v| v == 15));
}
