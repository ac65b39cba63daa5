//! cl_khr_kernel_clock through the loader: the extension, its scope features, the capability
//! query, ShaderClockKHR among the SPIR-V capabilities, and an OpenCL C program built by the
//! driver (clCreateProgramWithSource) reading the device and work-group clocks around a loop.
//! Against another ICD the test reports that and passes.

mod common;

use common::*;
use opencl3::kernel::Kernel;
use opencl_sys::*;

const SOURCE: &str = "
#if !defined(cl_khr_kernel_clock) || !defined(__opencl_c_kernel_clock_scope_device) \\
    || !defined(__opencl_c_kernel_clock_scope_work_group)
#error the kernel clock macros are missing
#endif
kernel void clocks(global ulong *out, ulong n) {
    size_t i = get_global_id(0);
    ulong t0 = clock_read_device();
    uint2 w = clock_read_hilo_work_group();
    ulong acc = i;
    for (ulong k = 0; k < n; k++)
        acc = acc * acc + k;
    uint2 d = clock_read_hilo_device();
    ulong t3 = clock_read_work_group();
    out[5 * i] = t0;
    out[5 * i + 1] = upsample(w.y, w.x);
    out[5 * i + 2] = upsample(d.y, d.x);
    out[5 * i + 3] = t3;
    out[5 * i + 4] = acc;
}
";

#[test]
fn kernel_clock_queries_and_kernels() {
    let env = Env::new();
    if env.other_icd {
        eprintln!("skipping cl_khr_kernel_clock on {OTHER_ICD_VAR}");
        return;
    }
    let id = env.device.id();
    let extensions = env.device.extensions().unwrap();
    assert!(extensions.contains("cl_khr_kernel_clock"), "{extensions}");
    let data = |param| opencl3::device::get_device_data(id, param).unwrap();
    let caps = u64::from_ne_bytes(
        data(CL_DEVICE_KERNEL_CLOCK_CAPABILITIES_KHR)
            .try_into()
            .unwrap(),
    );
    // No sub-group scope: the device has no sub-groups.
    assert_eq!(
        caps,
        CL_DEVICE_KERNEL_CLOCK_SCOPE_DEVICE_KHR | CL_DEVICE_KERNEL_CLOCK_SCOPE_WORK_GROUP_KHR
    );
    let spirv_caps: Vec<u32> = data(CL_DEVICE_SPIRV_CAPABILITIES_KHR)
        .chunks_exact(4)
        .map(|c| u32::from_ne_bytes(c.try_into().unwrap()))
        .collect();
    assert!(
        spirv_caps.contains(&5055),
        "ShaderClockKHR in {spirv_caps:?}"
    );

    for std in ["-cl-std=CL1.2", "-cl-std=CL3.0"] {
        let program = env.program_from_source(SOURCE, std);
        let kernel = check(cl(Kernel::create(&program, "clocks")), "clCreateKernel");
        let n = 32usize;
        let out = env.buffer_filled(5 * n, 0u64);
        arg_buf(&kernel, 0, &out);
        arg(&kernel, 1, &20_000u64);
        env.run(&kernel, &[n], Some(&[8]), None);
        let got = env.read(&out, 5 * n);
        for i in 0..n {
            let t = &got[5 * i..5 * i + 4];
            // One clock behind every scope: reads in program order never go backwards.
            assert!(t.windows(2).all(|w| w[0] <= w[1]), "{std} item {i}: {t:?}");
            assert!(
                t[2] > t[0],
                "{std} item {i}: no time passed over the loop: {t:?}"
            );
        }
    }
}
