//! Global atomics through the loader under real concurrency: thousands of work-groups on every
//! worker thread update the same counters; the results must be exact.

mod common;

use common::{arg_buf, Env, OPTS};

#[test]
fn concurrent_global_atomics_are_exact() {
    let env = Env::new();
    let n = 1 << 20;
    let data: Vec<u32> = (0..n as u32)
        .map(|i| i.wrapping_mul(2_654_435_761) >> 7)
        .collect();
    let mut want_hist = vec![0u32; 64];
    for d in &data {
        want_hist[(d & 63) as usize] += 1;
    }
    for opt in OPTS {
        let k = env.kernel("atomic_counter", opt, "count");
        let counter = env.buffer(&[0u32]);
        let sum = env.buffer(&[0u32]);
        let hist = env.buffer(&[0u32; 64]);
        let input = env.buffer(&data);
        arg_buf(&k, 0, &counter);
        arg_buf(&k, 1, &sum);
        arg_buf(&k, 2, &hist);
        arg_buf(&k, 3, &input);
        env.run(&k, &[n], Some(&[64]), None);
        assert_eq!(env.read(&counter, 1)[0], n as u32, "{opt:?} counter");
        assert_eq!(
            env.read(&sum, 1)[0],
            ((n as u64 - 1) * n as u64 / 2) as u32,
            "{opt:?} sum (mod 2^32)"
        );
        assert_eq!(env.read(&hist, 64), want_hist, "{opt:?} histogram");
    }
}

const FLOAT_ATOMICS: &str = r#"
kernel void float_atomics(global atomic_float* sum, global atomic_float* lo,
                          global atomic_float* hi, global atomic_double* dsum,
                          global float* olds) {
    local atomic_float group_sum;
    size_t g = get_global_id(0);
    if (get_local_id(0) == 0)
        atomic_init(&group_sum, 0.0f);
    barrier(CLK_LOCAL_MEM_FENCE);
    atomic_fetch_add_explicit(&group_sum, 1.0f, memory_order_relaxed, memory_scope_work_group);
    barrier(CLK_LOCAL_MEM_FENCE);
    if (get_local_id(0) == 0)
        atomic_fetch_add(sum + 1, atomic_load_explicit(&group_sum, memory_order_relaxed,
                                                       memory_scope_work_group));
    olds[g] = atomic_fetch_add(sum, 1.0f);
    float v = (float)((g * 7919) % 10007) - 5000.0f;
    atomic_fetch_min(lo, v);
    atomic_fetch_max(hi, v);
    atomic_fetch_add(dsum, 0.5);
}
"#;

/// cl_ext_float_atomics from OpenCL C through the device's own compiler: global add under
/// contention (every old value seen exactly once), local add, min, max, and double add.
#[test]
fn concurrent_float_atomics_are_exact() {
    let env = Env::new();
    if !env.extension_or_skip("cl_ext_float_atomics") {
        return;
    }
    // CL_DEVICE_{SINGLE,DOUBLE}_FP_ATOMIC_CAPABILITIES_EXT (0x4231, 0x4232): load/store, add
    // and min/max on global (bits 0-2) and local (bits 16-18) memory.
    for query in [0x4231, 0x4232] {
        let caps = opencl3::device::get_device_data(env.device.id(), query).unwrap();
        assert_eq!(caps, 0x7_0007u64.to_ne_bytes().to_vec(), "query {query:#x}");
    }
    let n = 1usize << 16;
    let program = env.program_from_source(FLOAT_ATOMICS, "-cl-std=CL3.0");
    let k = opencl3::kernel::Kernel::create(&program, "float_atomics").expect("clCreateKernel");
    let sum = env.buffer(&[0.0f32, 0.0]);
    let lo = env.buffer(&[f32::INFINITY]);
    let hi = env.buffer(&[f32::NEG_INFINITY]);
    let dsum = env.buffer(&[0.0f64]);
    let olds = env.buffer_filled(n, -1.0f32);
    arg_buf(&k, 0, &sum);
    arg_buf(&k, 1, &lo);
    arg_buf(&k, 2, &hi);
    arg_buf(&k, 3, &dsum);
    arg_buf(&k, 4, &olds);
    env.run(&k, &[n], Some(&[64]), None);
    assert_eq!(
        env.read(&sum, 2),
        vec![n as f32, n as f32],
        "global and local sums"
    );
    let mut seen = env.read(&olds, n);
    seen.sort_by(f32::total_cmp);
    let want: Vec<f32> = (0..n).map(|i| i as f32).collect();
    assert_eq!(
        seen, want,
        "every old value of the contended add exactly once"
    );
    let values = (0..n).map(|g| ((g * 7919) % 10007) as f32 - 5000.0);
    let (min, max) = values.fold((f32::INFINITY, f32::NEG_INFINITY), |(a, b), v| {
        (a.min(v), b.max(v))
    });
    assert_eq!(env.read(&lo, 1)[0], min);
    assert_eq!(env.read(&hi, 1)[0], max);
    assert_eq!(env.read(&dsum, 1)[0], n as f64 * 0.5);
}
