//! `cl_khr_extended_bit_ops` and `cl_khr_expect_assume` through the loader, from OpenCL C built
//! by the device's compiler: bitfield_insert, bitfield_extract_signed/unsigned and bit_reverse
//! on scalars and vectors against host references, and kernels carrying __builtin_expect and
//! __builtin_assume hints.

mod common;

use common::{arg_buf, Env};

const SOURCE: &str = r#"
kernel void bits(global const uint* in, global uint* out, global int* outs) {
    size_t i = get_global_id(0);
    uint x = in[i];
    uint n = i % 33;
    uint off = (i * 7) % (33 - n);
    out[i * 4 + 0] = bitfield_insert(x, ~x, off, n);
    out[i * 4 + 1] = bitfield_extract_unsigned(x, off, n);
    outs[i] = bitfield_extract_signed((int)x, off, n);
    out[i * 4 + 2] = bit_reverse(x);
    uint4 v = (uint4)(x, x + 1, x * 3, ~x);
    uint4 r = bit_reverse(v);
    out[i * 4 + 3] = __builtin_expect(r.x ^ r.y ^ r.z ^ r.w, 0u);
    __builtin_assume(n <= 32);
}
"#;

fn mask(n: u32) -> u32 {
    if n >= 32 {
        u32::MAX
    } else {
        (1u32 << n) - 1
    }
}

#[test]
fn bit_ops_and_hints() {
    let env = Env::new();
    if !env.extension_or_skip("cl_khr_extended_bit_ops")
        || !env.extension_or_skip("cl_khr_expect_assume")
    {
        return;
    }
    let program = env.program_from_source(SOURCE, "-cl-std=CL3.0");
    let k = opencl3::kernel::Kernel::create(&program, "bits").expect("clCreateKernel");
    let n = 1000usize;
    let input: Vec<u32> = (0..n as u32)
        .map(|i| i.wrapping_mul(2_654_435_761) ^ 0x5a5a_0ff0)
        .collect();
    let buf_in = env.buffer(&input);
    let out = env.buffer_filled(n * 4, 0u32);
    let outs = env.buffer_filled(n, 0i32);
    arg_buf(&k, 0, &buf_in);
    arg_buf(&k, 1, &out);
    arg_buf(&k, 2, &outs);
    env.run(&k, &[n], None, None);
    let got = env.read(&out, n * 4);
    let got_s = env.read(&outs, n);
    for (i, &x) in input.iter().enumerate() {
        let bits = (i % 33) as u32;
        let off = ((i * 7) % (33 - i % 33)) as u32;
        let field = mask(bits).checked_shl(off).unwrap_or(0);
        let insert = (x & !field) | ((!x).checked_shl(off).unwrap_or(0) & field);
        let extract = x.checked_shr(off).unwrap_or(0) & mask(bits);
        let signed = if bits == 0 {
            0
        } else {
            ((extract << (32 - bits)) as i32) >> (32 - bits)
        };
        let v = [x, x.wrapping_add(1), x.wrapping_mul(3), !x];
        let folded = v.iter().fold(0, |a, e| a ^ e.reverse_bits());
        assert_eq!(
            &got[i * 4..i * 4 + 4],
            &[insert, extract, x.reverse_bits(), folded],
            "item {i}: x={x:#x} offset {off} count {bits}"
        );
        assert_eq!(got_s[i], signed, "item {i}: signed extract");
    }
}
