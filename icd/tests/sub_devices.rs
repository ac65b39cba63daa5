//! Device partitioning through the loader: `clCreateSubDevices` equally, by counts and by
//! affinity domain (checked against the machine's own sysfs topology), nested partitions, every
//! `CL_DEVICE_PARTITION_*` query on parent and child, sub-device reference counts, programs,
//! kernels and queues on sub-devices — two sub-devices running kernels at once, each on all of
//! its workers — and the spec's error for every bad request.
//!
//! The process runs with `FERROCL_THREADS=4` (set before the first CL call): a root device of
//! four compute units splits in more ways than two, and on a two-CPU machine units 0 and 2
//! share CPU 0, which the affinity-domain expectations take into account.

mod common;

use std::ffi::c_void;
use std::ptr::{null, null_mut};
use std::sync::Once;

use common::*;
use opencl_sys::*;

#[link(name = "OpenCL")]
extern "C" {
    fn clCreateSubDevices(
        device: cl_device_id,
        properties: *const cl_device_partition_property,
        num_devices: cl_uint,
        out_devices: *mut cl_device_id,
        num_devices_ret: *mut cl_uint,
    ) -> cl_int;
    fn clRetainDevice(device: cl_device_id) -> cl_int;
    fn clReleaseDevice(device: cl_device_id) -> cl_int;
    fn clGetDeviceInfo(
        device: cl_device_id,
        param: cl_device_info,
        size: usize,
        value: *mut c_void,
        size_ret: *mut usize,
    ) -> cl_int;
    fn clGetEventInfo(
        event: cl_event,
        param: cl_event_info,
        size: usize,
        value: *mut c_void,
        size_ret: *mut usize,
    ) -> cl_int;
    fn clGetEventProfilingInfo(
        event: cl_event,
        param: cl_profiling_info,
        size: usize,
        value: *mut c_void,
        size_ret: *mut usize,
    ) -> cl_int;
}

const UNITS: usize = 4;

/// The root device, with FERROCL_THREADS=4 set before the driver reads its settings.
fn root() -> cl_device_id {
    static ENV: Once = Once::new();
    ENV.call_once(|| std::env::set_var("FERROCL_THREADS", UNITS.to_string()));
    let d = device_id();
    assert_eq!(
        units(d),
        UNITS as cl_uint,
        "the root device has FERROCL_THREADS compute units"
    );
    d
}

fn info(d: cl_device_id, param: cl_device_info) -> Vec<u8> {
    let mut size = 0;
    // SAFETY: size query, then a buffer of that size.
    unsafe {
        assert_eq!(
            clGetDeviceInfo(d, param, 0, null_mut(), &mut size),
            CL_SUCCESS
        );
        let mut out = vec![0u8; size];
        assert_eq!(
            clGetDeviceInfo(d, param, size, out.as_mut_ptr().cast(), null_mut()),
            CL_SUCCESS
        );
        out
    }
}

fn words<T: Copy>(bytes: &[u8]) -> Vec<T> {
    bytes
        .chunks_exact(std::mem::size_of::<T>())
        // SAFETY: each chunk holds exactly one T of plain data.
        .map(|c| unsafe { std::ptr::read_unaligned(c.as_ptr().cast::<T>()) })
        .collect()
}

fn uint(d: cl_device_id, param: cl_device_info) -> cl_uint {
    words::<cl_uint>(&info(d, param))[0]
}

fn units(d: cl_device_id) -> cl_uint {
    uint(d, CL_DEVICE_MAX_COMPUTE_UNITS)
}

fn parent(d: cl_device_id) -> cl_device_id {
    words::<cl_device_id>(&info(d, CL_DEVICE_PARENT_DEVICE))[0]
}

fn partition_type(d: cl_device_id) -> Vec<cl_device_partition_property> {
    words(&info(d, CL_DEVICE_PARTITION_TYPE))
}

fn affinity_domains(d: cl_device_id) -> cl_device_affinity_domain {
    words::<cl_device_affinity_domain>(&info(d, CL_DEVICE_PARTITION_AFFINITY_DOMAIN))[0]
}

/// clCreateSubDevices' two calls: the count, then the devices.
fn split(
    d: cl_device_id,
    props: &[cl_device_partition_property],
) -> Result<Vec<cl_device_id>, cl_int> {
    let mut n = 0;
    // SAFETY: a zero-terminated property list; out arrays of the size given.
    unsafe {
        let e = clCreateSubDevices(d, props.as_ptr(), 0, null_mut(), &mut n);
        if e != CL_SUCCESS {
            return Err(e);
        }
        let mut out = vec![null_mut(); n as usize];
        let mut again = 0;
        let e = clCreateSubDevices(d, props.as_ptr(), n, out.as_mut_ptr(), &mut again);
        if e != CL_SUCCESS {
            return Err(e);
        }
        assert_eq!(again, n);
        Ok(out)
    }
}

fn release_all(devices: &[cl_device_id]) {
    for &d in devices {
        // SAFETY: a sub-device this test created and still owns.
        assert_eq!(unsafe { clReleaseDevice(d) }, CL_SUCCESS);
    }
}

#[test]
fn root_and_equal_children_answer_every_partition_query() {
    let root = root();
    assert_eq!(
        uint(root, CL_DEVICE_PARTITION_MAX_SUB_DEVICES),
        UNITS as cl_uint
    );
    let schemes: Vec<cl_device_partition_property> =
        words(&info(root, CL_DEVICE_PARTITION_PROPERTIES));
    assert!(
        schemes.contains(&CL_DEVICE_PARTITION_EQUALLY),
        "{schemes:?}"
    );
    assert!(
        schemes.contains(&CL_DEVICE_PARTITION_BY_COUNTS),
        "{schemes:?}"
    );
    assert_eq!(
        schemes.contains(&CL_DEVICE_PARTITION_BY_AFFINITY_DOMAIN),
        affinity_domains(root) != 0
    );
    assert!(info(root, CL_DEVICE_PARTITION_TYPE).is_empty());
    assert!(parent(root).is_null());
    // Root devices are not reference counted.
    // SAFETY: the root device handle.
    unsafe {
        assert_eq!(clRetainDevice(root), CL_SUCCESS);
        assert_eq!(clReleaseDevice(root), CL_SUCCESS);
        assert_eq!(clReleaseDevice(root), CL_SUCCESS);
    }
    assert_eq!(uint(root, CL_DEVICE_REFERENCE_COUNT), 1);

    let children = split(root, &[CL_DEVICE_PARTITION_EQUALLY, 1, 0]).expect("EQUALLY 1");
    assert_eq!(children.len(), UNITS);
    for &c in &children {
        assert_eq!(units(c), 1);
        assert_eq!(parent(c), root);
        assert_eq!(partition_type(c), [CL_DEVICE_PARTITION_EQUALLY, 1, 0]);
        assert_eq!(uint(c, CL_DEVICE_REFERENCE_COUNT), 1);
        // One compute unit does not split further.
        assert_eq!(
            words::<isize>(&info(c, CL_DEVICE_PARTITION_PROPERTIES)),
            [0]
        );
        assert_eq!(uint(c, CL_DEVICE_PARTITION_MAX_SUB_DEVICES), 0);
        assert_eq!(affinity_domains(c), 0);
        // The rest of the device is the parent's.
        assert_eq!(info(c, CL_DEVICE_NAME), info(root, CL_DEVICE_NAME));
        assert_eq!(
            words::<cl_device_type>(&info(c, CL_DEVICE_TYPE)),
            [CL_DEVICE_TYPE_CPU]
        );
    }
    // SAFETY: a live sub-device.
    unsafe {
        assert_eq!(clRetainDevice(children[0]), CL_SUCCESS);
        assert_eq!(uint(children[0], CL_DEVICE_REFERENCE_COUNT), 2);
        assert_eq!(clReleaseDevice(children[0]), CL_SUCCESS);
    }
    assert_eq!(uint(children[0], CL_DEVICE_REFERENCE_COUNT), 1);
    // Every call makes new sub-devices.
    let again = split(root, &[CL_DEVICE_PARTITION_EQUALLY, 2, 0]).expect("EQUALLY 2");
    assert_eq!(again.len(), 2);
    assert!(again
        .iter()
        .all(|d| !children.contains(d) && units(*d) == 2));
    release_all(&children);
    release_all(&again);
}

#[test]
fn by_counts_and_nested_partitions() {
    let root = root();
    let children = split(
        root,
        &[
            CL_DEVICE_PARTITION_BY_COUNTS,
            3,
            1,
            CL_DEVICE_PARTITION_BY_COUNTS_LIST_END,
            0,
        ],
    )
    .expect("BY_COUNTS 3 1");
    assert_eq!(
        children.iter().map(|&c| units(c)).collect::<Vec<_>>(),
        [3, 1]
    );
    assert_eq!(
        partition_type(children[0]),
        [
            CL_DEVICE_PARTITION_BY_COUNTS,
            3,
            1,
            CL_DEVICE_PARTITION_BY_COUNTS_LIST_END,
            0
        ]
    );
    assert_eq!(uint(children[0], CL_DEVICE_PARTITION_MAX_SUB_DEVICES), 3);
    // A partition of a partition: the three-unit child into ones, then into 2 + 1.
    let grandchildren = split(children[0], &[CL_DEVICE_PARTITION_EQUALLY, 1, 0]).expect("nested");
    assert_eq!(grandchildren.len(), 3);
    let uneven = split(
        children[0],
        &[
            CL_DEVICE_PARTITION_BY_COUNTS,
            2,
            1,
            CL_DEVICE_PARTITION_BY_COUNTS_LIST_END,
            0,
        ],
    )
    .expect("nested by counts");
    assert_eq!(units(uneven[0]), 2);
    // Three levels down.
    let deepest = split(uneven[0], &[CL_DEVICE_PARTITION_EQUALLY, 1, 0]).expect("third level");
    assert_eq!(deepest.len(), 2);
    assert_eq!(parent(deepest[1]), uneven[0]);
    assert_eq!(parent(uneven[0]), children[0]);
    // More than the child has is more than its compute units, whatever the root has.
    let mut n = 0;
    // SAFETY: a zero-terminated property list.
    let e = unsafe {
        clCreateSubDevices(
            children[0],
            [CL_DEVICE_PARTITION_EQUALLY, 4, 0].as_ptr(),
            0,
            null_mut(),
            &mut n,
        )
    };
    assert_eq!(e, CL_INVALID_DEVICE_PARTITION_COUNT);
    // The parents' handles go first: their children keep them alive.
    release_all(&children);
    for &g in &grandchildren {
        assert_eq!(
            parent(g),
            children[0],
            "the parent outlives its last handle"
        );
        assert_eq!(units(g), 1);
    }
    release_all(&uneven);
    assert_eq!(units(deepest[0]), 1);
    release_all(&grandchildren);
    release_all(&deepest);
}

/// The CPUs this process may use, from /proc (the driver reads them with sched_getaffinity).
fn allowed_cpus() -> Vec<usize> {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let list = status
        .lines()
        .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))
        .unwrap()
        .trim()
        .to_owned();
    let mut cpus = Vec::new();
    for piece in list.split(',') {
        match piece.split_once('-') {
            Some((a, b)) => cpus.extend(a.parse::<usize>().unwrap()..=b.parse().unwrap()),
            None => cpus.push(piece.parse().unwrap()),
        }
    }
    cpus
}

/// How many sub-devices of the root `domain` should make, from sysfs: units are dealt to the
/// allowed CPUs round-robin; units whose CPUs share the domain's node or cache go together.
fn expected_groups(domain: cl_device_affinity_domain) -> Option<usize> {
    let cpus = allowed_cpus();
    let key = |cpu: usize| -> Option<String> {
        if domain == CL_DEVICE_AFFINITY_DOMAIN_NUMA {
            let nodes = std::fs::read_dir("/sys/devices/system/node").ok()?;
            return nodes.filter_map(|n| n.ok()).find_map(|n| {
                let list = std::fs::read_to_string(n.path().join("cpulist")).ok()?;
                let has = list.trim().split(',').any(|p| match p.split_once('-') {
                    Some((a, b)) => match (a.parse::<usize>(), b.parse::<usize>()) {
                        (Ok(a), Ok(b)) => (a..=b).contains(&cpu),
                        _ => false,
                    },
                    None => p.parse() == Ok(cpu),
                });
                has.then(|| n.file_name().to_string_lossy().into_owned())
            });
        }
        let level = [
            (CL_DEVICE_AFFINITY_DOMAIN_L1_CACHE, "1"),
            (CL_DEVICE_AFFINITY_DOMAIN_L2_CACHE, "2"),
            (CL_DEVICE_AFFINITY_DOMAIN_L3_CACHE, "3"),
            (CL_DEVICE_AFFINITY_DOMAIN_L4_CACHE, "4"),
        ]
        .iter()
        .find(|(d, _)| *d == domain)?
        .1;
        let dir = format!("/sys/devices/system/cpu/cpu{cpu}/cache");
        std::fs::read_dir(dir)
            .ok()?
            .filter_map(|e| e.ok())
            .find_map(|e| {
                let read = |f: &str| std::fs::read_to_string(e.path().join(f)).ok();
                (read("level")?.trim() == level && read("type")?.trim() != "Instruction")
                    .then(|| read("shared_cpu_list"))?
            })
    };
    let mut groups: Vec<String> = Vec::new();
    for unit in 0..UNITS {
        let k = key(cpus[unit % cpus.len()])?;
        if !groups.contains(&k) {
            groups.push(k);
        }
    }
    Some(groups.len())
}

#[test]
fn affinity_domains_follow_the_machine_topology() {
    let root = root();
    let reported = affinity_domains(root);
    let domains = [
        CL_DEVICE_AFFINITY_DOMAIN_NUMA,
        CL_DEVICE_AFFINITY_DOMAIN_L4_CACHE,
        CL_DEVICE_AFFINITY_DOMAIN_L3_CACHE,
        CL_DEVICE_AFFINITY_DOMAIN_L2_CACHE,
        CL_DEVICE_AFFINITY_DOMAIN_L1_CACHE,
    ];
    let mut outermost = None;
    for domain in domains {
        let groups = expected_groups(domain).unwrap_or(0);
        let props = [
            CL_DEVICE_PARTITION_BY_AFFINITY_DOMAIN,
            domain as cl_device_partition_property,
            0,
        ];
        if groups < 2 {
            assert_eq!(
                reported & domain,
                0,
                "domain {domain:#x} does not split the device"
            );
            assert_eq!(split(root, &props).err(), Some(CL_INVALID_VALUE));
            continue;
        }
        assert_ne!(
            reported & domain,
            0,
            "domain {domain:#x} splits the device in {groups}"
        );
        outermost.get_or_insert(domain);
        let subs = split(root, &props).expect("by affinity domain");
        assert_eq!(subs.len(), groups, "domain {domain:#x}");
        assert_eq!(
            subs.iter().map(|&s| units(s) as usize).sum::<usize>(),
            UNITS
        );
        for &s in &subs {
            assert_eq!(partition_type(s), props);
            assert_eq!(parent(s), root);
        }
        release_all(&subs);
    }
    let next = [
        CL_DEVICE_PARTITION_BY_AFFINITY_DOMAIN,
        CL_DEVICE_AFFINITY_DOMAIN_NEXT_PARTITIONABLE as cl_device_partition_property,
        0,
    ];
    match outermost {
        None => {
            assert_eq!(reported, 0);
            assert_eq!(split(root, &next).err(), Some(CL_INVALID_VALUE));
        }
        Some(domain) => {
            assert_ne!(reported & CL_DEVICE_AFFINITY_DOMAIN_NEXT_PARTITIONABLE, 0);
            let subs = split(root, &next).expect("next partitionable");
            // The sub-devices say which domain was used: the outermost that splits.
            assert_eq!(
                partition_type(subs[0]),
                [CL_DEVICE_PARTITION_BY_AFFINITY_DOMAIN, domain as isize, 0]
            );
            release_all(&subs);
        }
    }
}

#[test]
fn bad_requests_get_the_spec_errors() {
    let root = root();
    let code = |d: cl_device_id, props: &[cl_device_partition_property]| {
        let mut n = 0;
        // SAFETY: zero-terminated lists (or NULL); no output array.
        unsafe {
            clCreateSubDevices(
                d,
                if props.is_empty() {
                    null()
                } else {
                    props.as_ptr()
                },
                0,
                null_mut(),
                &mut n,
            )
        }
    };
    const EQ: isize = CL_DEVICE_PARTITION_EQUALLY;
    const BC: isize = CL_DEVICE_PARTITION_BY_COUNTS;
    const AFF: isize = CL_DEVICE_PARTITION_BY_AFFINITY_DOMAIN;
    let l2l1 = (CL_DEVICE_AFFINITY_DOMAIN_L2_CACHE | CL_DEVICE_AFFINITY_DOMAIN_L1_CACHE) as isize;
    let cases: &[(&[isize], cl_int)] = &[
        (&[], CL_INVALID_VALUE),
        (&[0], CL_INVALID_VALUE),
        (&[-1, 1, 0], CL_INVALID_VALUE),
        (&[0x4050, 1, 0], CL_INVALID_VALUE), // the EXT spelling
        (&[EQ, 1, BC, 1, 0, 0], CL_INVALID_VALUE),
        (&[EQ, 0, 0], CL_INVALID_VALUE),
        (&[EQ, -1, 0], CL_INVALID_DEVICE_PARTITION_COUNT),
        (&[EQ, 5, 0], CL_INVALID_DEVICE_PARTITION_COUNT),
        (&[EQ, 4, 0], CL_DEVICE_PARTITION_FAILED),
        (&[BC, 0, 0], CL_INVALID_VALUE),
        (&[BC, -1, 0, 0], CL_INVALID_DEVICE_PARTITION_COUNT),
        (&[BC, 5, 0, 0], CL_INVALID_DEVICE_PARTITION_COUNT),
        (&[BC, 3, 2, 0, 0], CL_INVALID_DEVICE_PARTITION_COUNT),
        (
            &[BC, 1, 1, 1, 1, 1, 0, 0],
            CL_INVALID_DEVICE_PARTITION_COUNT,
        ),
        (&[BC, 4, 0, 0], CL_DEVICE_PARTITION_FAILED),
        (&[AFF, 0, 0], CL_INVALID_VALUE),
        (&[AFF, l2l1, 0], CL_INVALID_VALUE),
        (&[AFF, 1 << 6, 0], CL_INVALID_VALUE),
    ];
    for (props, want) in cases {
        assert_eq!(code(root, props), *want, "{props:?}");
    }
    assert_eq!(code(null_mut(), &[EQ, 1, 0]), CL_INVALID_DEVICE);
    // SAFETY: NULL and non-device handles are rejected before use.
    unsafe {
        assert_eq!(clRetainDevice(null_mut()), CL_INVALID_DEVICE);
        assert_eq!(clReleaseDevice(null_mut()), CL_INVALID_DEVICE);
        let env = Env::new();
        assert_eq!(
            code(env.context.get() as cl_device_id, &[EQ, 1, 0]),
            CL_INVALID_DEVICE
        );
        assert_eq!(
            clRetainDevice(env.context.get() as cl_device_id),
            CL_INVALID_DEVICE
        );
        // An output array smaller than the partition.
        let mut out = [null_mut(); 3];
        assert_eq!(
            clCreateSubDevices(root, [EQ, 1, 0].as_ptr(), 3, out.as_mut_ptr(), null_mut()),
            CL_INVALID_VALUE
        );
        assert!(
            out.iter().all(|d| d.is_null()),
            "nothing is created on failure"
        );
    }
    let ones = split(root, &[EQ, 1, 0]).unwrap();
    assert_eq!(code(ones[0], &[EQ, 1, 0]), CL_DEVICE_PARTITION_FAILED);
    assert_eq!(
        code(ones[0], &[EQ, 2, 0]),
        CL_INVALID_DEVICE_PARTITION_COUNT
    );
    release_all(&ones);
}

/// Every group's first work-item arrives at `arrived` and waits (boundedly) until `expected`
/// groups have: only work-groups running at the same time all get through. A group that gives
/// up counts itself in `missed` instead of hanging the test.
const RENDEZVOUS: &str = r#"
__kernel void rendezvous(volatile __global int *arrived, int expected, __global int *missed)
{
    if (get_local_id(0) != 0) return;
    atomic_inc(arrived);
    ulong spins = 0;
    while (atomic_add(arrived, 0) < expected) {
        if (++spins == (1UL << 32)) { atomic_inc(missed); return; }
    }
}
"#;

fn execution_status(event: cl_event) -> cl_int {
    let mut status: cl_int = 0;
    // SAFETY: a live event; 4 writable bytes.
    let e = unsafe {
        clGetEventInfo(
            event,
            CL_EVENT_COMMAND_EXECUTION_STATUS,
            4,
            (&mut status as *mut cl_int).cast(),
            null_mut(),
        )
    };
    assert_eq!(e, CL_SUCCESS);
    assert!(status >= 0, "the launch failed: {status}");
    status
}

fn profile(event: cl_event, which: cl_profiling_info) -> cl_ulong {
    let mut t: cl_ulong = 0;
    // SAFETY: a completed event of a profiling queue; 8 writable bytes.
    let e = unsafe {
        clGetEventProfilingInfo(
            event,
            which,
            8,
            (&mut t as *mut cl_ulong).cast(),
            null_mut(),
        )
    };
    assert_eq!(e, CL_SUCCESS);
    t
}

#[test]
fn two_sub_devices_run_kernels_at_once_on_all_their_workers() {
    let root = root();
    let halves = split(root, &[CL_DEVICE_PARTITION_EQUALLY, 2, 0]).unwrap();
    let context = check(
        cl(Context::from_devices(&halves, &[], None, null_mut())),
        "clCreateContext(sub-devices)",
    );
    let queues: Vec<CommandQueue> = halves
        .iter()
        .map(|&d| {
            // SAFETY: `d` is a device of `context`.
            let q = unsafe {
                CommandQueue::create_with_properties(&context, d, CL_QUEUE_PROFILING_ENABLE, 0)
            };
            check(cl(q), "clCreateCommandQueueWithProperties(sub-device)")
        })
        .collect();
    let env = Env {
        device: Device::new(halves[0]),
        context,
        queue: queues.into_iter().next().unwrap(),
        other_icd: false,
    };
    // SAFETY: halves[1] belongs to the context.
    let second = unsafe {
        CommandQueue::create_with_properties(&env.context, halves[1], CL_QUEUE_PROFILING_ENABLE, 0)
    };
    let second = check(cl(second), "second queue");
    let program = env.program_from_source(RENDEZVOUS, "");
    let kernel = check(cl(Kernel::create(&program, "rendezvous")), "clCreateKernel");
    let arrived = env.buffer(&[0i32]);
    let missed = env.buffer(&[0i32]);
    // Two groups on each two-unit sub-device: all four meet only if both sub-devices run at
    // once with both of their workers each.
    let expected: i32 = 4;
    arg_buf(&kernel, 0, &arrived);
    arg(&kernel, 1, &expected);
    arg_buf(&kernel, 2, &missed);
    let (global, local) = ([2usize], [1usize]);
    let events: Vec<_> = [&env.queue, &second]
        .iter()
        .map(|q| {
            // SAFETY: arguments set; sizes arrays outlive the call.
            let e = unsafe {
                q.enqueue_nd_range_kernel(
                    kernel.get(),
                    1,
                    null(),
                    global.as_ptr(),
                    local.as_ptr(),
                    &[],
                )
            };
            check(cl(e), "clEnqueueNDRangeKernel(sub-device)")
        })
        .collect();
    // Not clWaitForEvents: a thread that waits for a command may run it itself, and it runs a
    // launch this small on its own, one group after the other, so the groups would never all
    // meet. Flushed and polled, both launches run on their sub-devices' workers.
    for q in [&env.queue, &second] {
        check(cl(q.flush()), "clFlush");
    }
    while events
        .iter()
        .any(|e| execution_status(e.get()) != CL_COMPLETE)
    {
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
    assert_eq!(
        env.read(&missed, 1),
        [0],
        "a work-group waited in vain for the others"
    );
    assert_eq!(env.read(&arrived, 1), [4]);
    let window = |e: &opencl3::event::Event| {
        (
            profile(e.get(), CL_PROFILING_COMMAND_START),
            profile(e.get(), CL_PROFILING_COMMAND_END),
        )
    };
    let (a, b) = (window(&events[0]), window(&events[1]));
    assert!(
        a.0 < b.1 && b.0 < a.1,
        "the two kernels overlap in time: {a:?} {b:?}"
    );
    drop(events);
    drop(kernel);
    drop(program);
    drop(second);
    drop(env);
    release_all(&halves);
}

#[test]
fn programs_contexts_and_queues_mix_root_and_sub_devices() {
    let root = root();
    let parts = split(root, &[CL_DEVICE_PARTITION_BY_COUNTS, 1, 2, 0, 0]).unwrap();
    let all = [parts[0], parts[1], root];
    let context = check(
        cl(Context::from_devices(&all, &[], None, null_mut())),
        "clCreateContext(root and sub-devices)",
    );
    let source = "__kernel void twice(__global int *x) { x[get_global_id(0)] *= 2; }";
    let program = check(
        cl(Program::create_from_source(&context, source)),
        "clCreateProgramWithSource",
    );
    // Built for one sub-device only.
    let options = std::ffi::CString::new("").unwrap();
    check(
        opencl3::program::build_program(program.get(), &[parts[1]], &options, None, null_mut()),
        "clBuildProgram(sub-device)",
    );
    let status: Vec<u8> = check(
        cl3::program::get_program_build_data(program.get(), parts[1], CL_PROGRAM_BUILD_STATUS),
        "build status",
    );
    assert_eq!(words::<cl_build_status>(&status), [CL_BUILD_SUCCESS]);
    let kernel = check(cl(Kernel::create(&program, "twice")), "clCreateKernel");
    let env = Env {
        device: Device::new(parts[1]),
        // SAFETY: parts[1] belongs to the context.
        queue: check(
            cl(unsafe { CommandQueue::create_with_properties(&context, parts[1], 0, 0) }),
            "queue",
        ),
        context,
        other_icd: false,
    };
    let data: Vec<i32> = (0..1000).collect();
    let buf = env.buffer(&data);
    arg_buf(&kernel, 0, &buf);
    env.run(&kernel, &[1000], None, None);
    assert_eq!(
        env.read(&buf, 1000),
        data.iter().map(|x| x * 2).collect::<Vec<_>>()
    );
    // The same buffer, next on the root device of the same context.
    // SAFETY: root belongs to the context.
    let on_root = check(
        cl(unsafe { CommandQueue::create_with_properties(&env.context, root, 0, 0) }),
        "queue on root",
    );
    let global = [1000usize];
    // SAFETY: arguments set; the sizes array outlives the call.
    let e = unsafe {
        on_root.enqueue_nd_range_kernel(kernel.get(), 1, null(), global.as_ptr(), null(), &[])
    };
    check(cl(check(cl(e), "launch on root").wait()), "wait");
    assert_eq!(env.read(&buf, 4), [0, 4, 8, 12]);
    let devices: Vec<u8> = check(
        cl3::context::get_context_data(env.context.get(), CL_CONTEXT_DEVICES),
        "devices",
    );
    assert_eq!(words::<cl_device_id>(&devices), all);
    drop(on_root);
    drop(kernel);
    drop(program);
    drop(env);
    release_all(&parts);
}
