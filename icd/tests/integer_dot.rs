//! cl_khr_integer_dot_product through the loader: the extension, its OpenCL C features, the
//! capability and acceleration queries, the SPIR-V extensions and capabilities the
//! cl_khr_spirv_queries answers list, and an OpenCL C program built by the driver itself
//! (clCreateProgramWithSource) using the vector and packed dot products, checked against exact
//! references. Against another ICD (PoCL lacks the extension) the test reports that and passes.

mod common;

use common::*;
use opencl3::kernel::Kernel;
use opencl_sys::*;

const SOURCE: &str = "
kernel void dots(global const uint *a, global const uint *b, global const int *c,
                 global int *out) {
    size_t i = get_global_id(0);
    uint x = a[i], y = b[i];
    out[4 * i] = dot(as_char4(x), as_uchar4(y));
    out[4 * i + 1] = dot_acc_sat(as_char4(x), as_char4(y), c[i]);
    out[4 * i + 2] = dot_4x8packed_us_int(x, y);
    out[4 * i + 3] = dot_acc_sat_4x8packed_ss_int(x, y, c[i]);
}
";

fn dot4(a: u32, b: u32, signed_a: bool, signed_b: bool) -> i64 {
    (0..4)
        .map(|k| {
            let (x, y) = ((a >> (8 * k)) as u8, (b >> (8 * k)) as u8);
            let x = if signed_a {
                i64::from(x as i8)
            } else {
                i64::from(x)
            };
            let y = if signed_b {
                i64::from(y as i8)
            } else {
                i64::from(y)
            };
            x * y
        })
        .sum()
}

#[test]
fn integer_dot_product_queries_and_kernels() {
    let env = Env::new();
    if env.other_icd {
        eprintln!("skipping cl_khr_integer_dot_product on {OTHER_ICD_VAR}");
        return;
    }
    let id = env.device.id();
    let extensions = env.device.extensions().unwrap();
    assert!(
        extensions.contains("cl_khr_integer_dot_product"),
        "{extensions}"
    );
    let data = |param| opencl3::device::get_device_data(id, param).unwrap();
    let caps = u64::from_ne_bytes(
        data(CL_DEVICE_INTEGER_DOT_PRODUCT_CAPABILITIES_KHR)
            .try_into()
            .unwrap(),
    );
    assert_eq!(
        caps,
        CL_DEVICE_INTEGER_DOT_PRODUCT_INPUT_4x8BIT_KHR
            | CL_DEVICE_INTEGER_DOT_PRODUCT_INPUT_4x8BIT_PACKED_KHR
    );
    // Six cl_bool: nothing is faster than the equivalent multiply-adds on this device.
    for param in [
        CL_DEVICE_INTEGER_DOT_PRODUCT_ACCELERATION_PROPERTIES_8BIT_KHR,
        CL_DEVICE_INTEGER_DOT_PRODUCT_ACCELERATION_PROPERTIES_4x8BIT_PACKED_KHR,
    ] {
        assert_eq!(data(param), vec![0u8; 6 * 4], "query {param:#x}");
    }
    let features = data(CL_DEVICE_OPENCL_C_FEATURES);
    let names: Vec<String> = features
        .chunks_exact(std::mem::size_of::<cl_name_version>())
        .map(|c| {
            let name = &c[4..];
            let end = name.iter().position(|&b| b == 0).unwrap_or(name.len());
            String::from_utf8_lossy(&name[..end]).into_owned()
        })
        .collect();
    for f in [
        "__opencl_c_integer_dot_product_input_4x8bit",
        "__opencl_c_integer_dot_product_input_4x8bit_packed",
    ] {
        assert!(names.iter().any(|n| n == f), "{f} in {names:?}");
    }
    let spirv_caps: Vec<u32> = data(CL_DEVICE_SPIRV_CAPABILITIES_KHR)
        .chunks_exact(4)
        .map(|c| u32::from_ne_bytes(c.try_into().unwrap()))
        .collect();
    // DotProductInput4x8Bit 6017, DotProductInput4x8BitPacked 6018, DotProduct 6019;
    // DotProductInputAll 6016 is not supported.
    for cap in [6017, 6018, 6019] {
        assert!(spirv_caps.contains(&cap), "{cap} in {spirv_caps:?}");
    }
    assert!(!spirv_caps.contains(&6016), "{spirv_caps:?}");

    let program = env.program_from_source(SOURCE, "-cl-std=CL3.0");
    let kernel = check(cl(Kernel::create(&program, "dots")), "clCreateKernel");
    let n = 64usize;
    let mut rng = Rng::new(42);
    let xs: Vec<u32> = (0..n).map(|_| rng.next_u32()).collect();
    let ys: Vec<u32> = (0..n).map(|_| rng.next_u32()).collect();
    let cs: Vec<i32> = (0..n)
        .map(|i| {
            if i % 2 == 0 {
                i32::MAX - 1000
            } else {
                rng.next_u32() as i32
            }
        })
        .collect();
    let (a, b, c) = (env.buffer(&xs), env.buffer(&ys), env.buffer(&cs));
    let out = env.buffer_filled(4 * n, 0i32);
    arg_buf(&kernel, 0, &a);
    arg_buf(&kernel, 1, &b);
    arg_buf(&kernel, 2, &c);
    arg_buf(&kernel, 3, &out);
    env.run(&kernel, &[n], None, None);
    let got = env.read(&out, 4 * n);
    let sat = |v: i64| v.clamp(i64::from(i32::MIN), i64::from(i32::MAX)) as i32;
    for i in 0..n {
        let (x, y, acc) = (xs[i], ys[i], i64::from(cs[i]));
        let want = [
            dot4(x, y, true, false) as i32,
            sat(dot4(x, y, true, true) + acc),
            dot4(x, y, false, true) as i32,
            sat(dot4(x, y, true, true) + acc),
        ];
        assert_eq!(&got[4 * i..4 * i + 4], &want, "a={x:#x} b={y:#x} c={acc}");
    }
}
