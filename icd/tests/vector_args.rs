//! Vector kernel arguments by value through the loader and clSetKernelArg, at -O0 and
//! optimised: every width from 2 to 16 among char3, short8, int2, long4, float3, double16 and
//! uchar16. A 3-component argument is passed with the size of its 4-component type
//! (cl_float3 is cl_float4), and any other size is CL_INVALID_ARG_SIZE.

mod common;

use common::*;
use opencl_sys::*;

#[test]
fn vectors_by_value_every_width() {
    let env = Env::new();
    for opt in OPTS {
        let kernel = env.kernel("vector_args", opt, "vector_args");
        let c3: [i8; 4] = [-3, 7, 127, 0x55];
        let s8: [i16; 8] = [1, -2, 300, -400, 5000, -6000, 32767, -32768];
        let i2: [i32; 2] = [i32::MIN, 123_456_789];
        let l4: [i64; 4] = [i64::MAX, -1, 1 << 40, -(1 << 50)];
        let f3: [f32; 4] = [1.5, -2.25, 1e30, 0.0];
        let d16: [f64; 16] = std::array::from_fn(|k| k as f64 * -1.25 + 0.5);
        let u16: [u8; 16] = std::array::from_fn(|k| (k * 17) as u8);
        arg(&kernel, 0, &c3);
        arg(&kernel, 1, &s8);
        arg(&kernel, 2, &i2);
        arg(&kernel, 3, &l4);
        arg(&kernel, 4, &f3);
        arg(&kernel, 5, &d16);
        arg(&kernel, 6, &u16);
        let out = env.buffer_filled(33, 0i64);
        let dout = env.buffer_filled(19, 0f64);
        arg_buf(&kernel, 7, &out);
        arg_buf(&kernel, 8, &dout);
        env.run(&kernel, &[1], None, None);
        let got = env.read(&out, 33);
        let mut want: Vec<i64> = c3[..3].iter().map(|&v| i64::from(v)).collect();
        want.extend(s8.iter().map(|&v| i64::from(v)));
        want.extend(i2.iter().map(|&v| i64::from(v)));
        want.extend(l4);
        want.extend(u16.iter().map(|&v| i64::from(v)));
        assert_eq!(got, want, "{opt:?} integer vectors");
        let got = env.read(&dout, 19);
        let mut want: Vec<f64> = f3[..3].iter().map(|&v| f64::from(v)).collect();
        want.extend(d16);
        assert_eq!(got, want, "{opt:?} float3 and double16");

        if env.other_icd {
            continue;
        }
        // A float3 is 16 bytes; 12 is the wrong size.
        let twelve = [0f32; 3];
        // SAFETY: `twelve` is 12 readable bytes, the size passed.
        let r = unsafe { kernel.set_arg(4, &twelve) };
        assert_eq!(
            r.err().map(|e| e.0),
            Some(CL_INVALID_ARG_SIZE),
            "{opt:?} float3 as 12 bytes"
        );
    }
}
