//! Images in kernels through the loader (`FERROCL_IMAGES=on`): sampler-less reads of every
//! channel order and data type family against texels decoded by a host reference written from
//! the SPIR-V environment spec's chapter 7 (7.4 conversions, 7.7 placement), writes checked
//! byte for byte against the same reference's encoding, a format × addressing × filter matrix
//! of sampled reads (normalised and not, nearest and linear) against a host sampler written
//! from 7.2–7.3, literal samplers, the image queries, 1D arrays, 3D writes, and bad kernel
//! arguments → the spec's errors.

#![allow(non_upper_case_globals)] // CL_sRGBA and friends are the spec's names.

mod common;
#[path = "common/images.rs"]
mod image_helpers;

use std::ffi::c_void;
use std::ptr::null_mut;

use common::*;
use ferrocl_testref::image::{
    border_color, decode_float as decode_f, decode_int as decode_i, encode_float as encode_f,
    sample, texel_bytes, Addressing, Sampler,
};
use image_helpers::*;
use opencl3::kernel::Kernel;
use opencl3::memory::{Buffer, CL_MEM_READ_WRITE};
use opencl_sys::*;

#[link(name = "OpenCL")]
extern "C" {
    fn clSetKernelArg(k: cl_kernel, i: cl_uint, size: usize, v: *const c_void) -> cl_int;
}

const SOURCE: &str = r#"
#pragma OPENCL EXTENSION cl_khr_3d_image_writes : enable
#pragma OPENCL EXTENSION cl_khr_depth_images : enable
__kernel void read_f(read_only image2d_t img, __global float4 *out) {
    int x = get_global_id(0), y = get_global_id(1);
    out[y * get_image_width(img) + x] = read_imagef(img, (int2)(x, y));
}
__kernel void read_i(read_only image2d_t img, __global int4 *out) {
    int x = get_global_id(0), y = get_global_id(1);
    out[y * get_image_width(img) + x] = read_imagei(img, (int2)(x, y));
}
__kernel void read_ui(read_only image2d_t img, __global uint4 *out) {
    int x = get_global_id(0), y = get_global_id(1);
    out[y * get_image_width(img) + x] = read_imageui(img, (int2)(x, y));
}
__kernel void write_f(write_only image2d_t img, __global const float4 *in) {
    int x = get_global_id(0), y = get_global_id(1);
    write_imagef(img, (int2)(x, y), in[y * get_image_width(img) + x]);
}
__kernel void write_i(write_only image2d_t img, __global const int4 *in) {
    int x = get_global_id(0), y = get_global_id(1);
    write_imagei(img, (int2)(x, y), in[y * get_image_width(img) + x]);
}
__kernel void write_ui(write_only image2d_t img, __global const uint4 *in) {
    int x = get_global_id(0), y = get_global_id(1);
    write_imageui(img, (int2)(x, y), in[y * get_image_width(img) + x]);
}
__kernel void copy(read_only image2d_t src, write_only image2d_t dst) {
    int2 p = (int2)(get_global_id(0), get_global_id(1));
    write_imagef(dst, p, read_imagef(src, p));
}
__kernel void sample(read_only image2d_t img, sampler_t s, __global const float2 *at,
                     __global float4 *out) {
    int i = get_global_id(0);
    out[i] = read_imagef(img, s, at[i]);
}
__kernel void literal(read_only image2d_t img, __global float4 *out) {
    const sampler_t s = CLK_NORMALIZED_COORDS_FALSE | CLK_ADDRESS_CLAMP | CLK_FILTER_NEAREST;
    int i = get_global_id(0);
    out[i] = read_imagef(img, s, (float2)((float)i - 0.5f, 0.5f));
}
__kernel void queries(read_only image3d_t img, __global int *out) {
    out[0] = get_image_width(img);
    out[1] = get_image_height(img);
    out[2] = get_image_depth(img);
    out[3] = get_image_channel_data_type(img);
    out[4] = get_image_channel_order(img);
    out[5] = CLK_UNORM_INT_101010_2;
}
__kernel void layers(read_only image1d_array_t img, __global float4 *out) {
    int x = get_global_id(0), l = get_global_id(1);
    out[l * get_image_width(img) + x] = read_imagef(img, (int2)(x, l));
}
__kernel void depth_copy(read_only image2d_depth_t src, write_only image2d_depth_t dst,
                         __global float *out) {
    int x = get_global_id(0), y = get_global_id(1);
    float d = read_imagef(src, (int2)(x, y));
    out[y * get_image_width(src) + x] = d;
    write_imagef(dst, (int2)(x, y), d * 0.5f);
}
__kernel void write3d(write_only image3d_t img) {
    int x = get_global_id(0), y = get_global_id(1), z = get_global_id(2);
    write_imagef(img, (int4)(x, y, z, 0), (float4)(x, y, z, 1.0f) / 8.0f);
}
"#;

fn image(
    env: &Env,
    flags: cl_mem_flags,
    order: cl_channel_order,
    ty: cl_channel_type,
    image_type: cl_mem_object_type,
    size: [usize; 3],
    host: Option<&[u8]>,
) -> cl_mem {
    let format = cl_image_format {
        image_channel_order: order,
        image_channel_data_type: ty,
    };
    let desc = cl_image_desc {
        image_type,
        image_width: size[0],
        image_height: size[1],
        image_depth: size[2],
        image_array_size: if image_type == CL_MEM_OBJECT_IMAGE1D_ARRAY {
            size[1]
        } else {
            0
        },
        image_row_pitch: 0,
        image_slice_pitch: 0,
        num_mip_levels: 0,
        num_samples: 0,
        buffer: null_mut(),
    };
    let flags = flags
        | if host.is_some() {
            CL_MEM_COPY_HOST_PTR
        } else {
            0
        };
    let ptr = host.map_or(null_mut(), |h| h.as_ptr() as *mut c_void);
    create(env, flags, &format, &desc, ptr)
        .unwrap_or_else(|e| panic!("clCreateImage({order:#x}, {ty:#x}): {e}"))
}

fn read_back(env: &Env, m: cl_mem, region: [usize; 3], bytes: usize) -> Vec<u8> {
    let texel = bytes / (region[0] * region[1] * region[2]);
    read(env, m, [0; 3], region, texel)
}

fn out_buffer<T: Copy + Default>(env: &Env, n: usize) -> Buffer<T> {
    env.buffer(&vec![T::default(); n])
}

// ---- Host reference: `ferrocl_testref::image`, from the environment spec, chapter 7 ----

fn pattern(n: usize, seed: u32) -> Vec<u8> {
    let mut s = seed.wrapping_mul(2_654_435_761).wrapping_add(12345);
    (0..n)
        .map(|_| {
            s ^= s << 13;
            s ^= s >> 17;
            s ^= s << 5;
            s as u8
        })
        .collect()
}

/// Valid float bits for float and half formats (the pattern would make NaNs).
fn float_pattern(ty: cl_channel_type, n: usize, seed: u32) -> Vec<u8> {
    let raw = pattern(n, seed);
    match ty {
        CL_FLOAT => raw
            .chunks(4)
            .enumerate()
            .flat_map(|(i, c)| {
                let v = (f32::from(c[0]) - 128.0) / 16.0 + i as f32 * 0.25;
                v.to_le_bytes()
            })
            .collect(),
        CL_HALF_FLOAT => raw
            .chunks(2)
            .flat_map(|c| {
                // Exponent field below 31: a finite half.
                let h = u16::from_le_bytes([c[0], c[1]]) & 0xbfff;
                h.to_le_bytes()
            })
            .collect(),
        _ => raw,
    }
}

const W: usize = 7;
const H: usize = 5;

#[test]
fn sampler_less_reads_decode_every_format_family() {
    let env = env();
    if env.other_icd {
        return;
    }
    let program = env.program_from_source(SOURCE, "");
    let float_formats = [
        (CL_RGBA, CL_UNORM_INT8),
        (CL_BGRA, CL_UNORM_INT8),
        (CL_ARGB, CL_UNORM_INT8),
        (CL_R, CL_FLOAT),
        (CL_RG, CL_HALF_FLOAT),
        (CL_RGBA, CL_SNORM_INT16),
        (CL_A, CL_UNORM_INT16),
        (CL_INTENSITY, CL_FLOAT),
        (CL_LUMINANCE, CL_UNORM_INT8),
        (CL_RA, CL_SNORM_INT8),
        (CL_RGB, CL_UNORM_SHORT_565),
        (CL_RGBA, CL_FLOAT),
    ];
    let read_f = kernel(&program, "read_f");
    for (i, &(order, ty)) in float_formats.iter().enumerate() {
        let bytes = texel_bytes(order, ty);
        let data = float_pattern(ty, W * H * bytes, i as u32);
        let img = image(
            &env,
            CL_MEM_READ_ONLY,
            order,
            ty,
            CL_MEM_OBJECT_IMAGE2D,
            [W, H, 1],
            Some(&data),
        );
        let out = out_buffer::<[f32; 4]>(&env, W * H);
        arg(&read_f, 0, &img);
        arg_buf(&read_f, 1, &out);
        env.run(&read_f, &[W, H], None, None);
        let got = env.read(&out, W * H);
        for p in 0..W * H {
            let want = decode_f(order, ty, &data[p * bytes..]);
            for k in 0..4 {
                assert!(
                    got[p][k] == want[k] || (got[p][k].is_nan() && want[k].is_nan()),
                    "format ({order:#x}, {ty:#x}) texel {p} component {k}: got {} want {}",
                    got[p][k],
                    want[k]
                );
            }
        }
        release(img);
    }
    let int_formats = [
        (CL_RGBA, CL_SIGNED_INT8, "read_i"),
        (CL_RG, CL_UNSIGNED_INT16, "read_ui"),
        (CL_R, CL_SIGNED_INT32, "read_i"),
        (CL_BGRA, CL_UNSIGNED_INT8, "read_ui"),
        (CL_RGBA, CL_SIGNED_INT16, "read_i"),
    ];
    for (i, &(order, ty, name)) in int_formats.iter().enumerate() {
        let k = kernel(&program, name);
        let bytes = texel_bytes(order, ty);
        let data = pattern(W * H * bytes, 100 + i as u32);
        let img = image(
            &env,
            CL_MEM_READ_ONLY,
            order,
            ty,
            CL_MEM_OBJECT_IMAGE2D,
            [W, H, 1],
            Some(&data),
        );
        let out = out_buffer::<[i32; 4]>(&env, W * H);
        arg(&k, 0, &img);
        arg_buf(&k, 1, &out);
        env.run(&k, &[W, H], None, None);
        let got = env.read(&out, W * H);
        for p in 0..W * H {
            assert_eq!(
                got[p],
                decode_i(order, ty, &data[p * bytes..]),
                "format ({order:#x}, {ty:#x}) texel {p}"
            );
        }
        release(img);
    }
}

fn kernel(program: &opencl3::program::Program, name: &str) -> Kernel {
    check(cl(Kernel::create(program, name)), "clCreateKernel")
}

/// Runs write kernel `k` (image, input buffer) over a new W × H write-only image of `order` /
/// `ty`; the image's bytes.
fn written<T>(
    env: &Env,
    k: &Kernel,
    order: cl_channel_order,
    ty: cl_channel_type,
    input: &Buffer<T>,
) -> Vec<u8> {
    let img = image(
        env,
        CL_MEM_WRITE_ONLY,
        order,
        ty,
        CL_MEM_OBJECT_IMAGE2D,
        [W, H, 1],
        None,
    );
    arg(k, 0, &img);
    arg_buf(k, 1, input);
    env.run(k, &[W, H], None, None);
    let got = read_back(env, img, [W, H, 1], W * H * texel_bytes(order, ty));
    release(img);
    got
}

#[test]
fn writes_encode_as_the_spec_says() {
    let env = env();
    if env.other_icd {
        return;
    }
    let program = env.program_from_source(SOURCE, "");
    let colors: Vec<[f32; 4]> = (0..W * H)
        .map(|i| {
            let t = i as f32 / (W * H) as f32;
            match i {
                // NaN writes 0, infinities saturate.
                0 => [f32::NAN, f32::INFINITY, f32::NEG_INFINITY, 0.5],
                _ => [t * 1.2 - 0.1, 0.5 + i as f32 / 510.0, -t, 1.5 - t],
            }
        })
        .collect();
    let input = env.buffer(&colors);
    let write_f = kernel(&program, "write_f");
    for (order, ty) in [
        (CL_RGBA, CL_UNORM_INT8),
        (CL_BGRA, CL_UNORM_INT8),
        (CL_RG, CL_UNORM_INT16),
        (CL_RGBA, CL_SNORM_INT8),
        (CL_R, CL_SNORM_INT16),
        (CL_RGBA, CL_FLOAT),
        (CL_A, CL_UNORM_INT8),
    ] {
        let bytes = texel_bytes(order, ty);
        let got = written(&env, &write_f, order, ty, &input);
        for p in 0..W * H {
            assert_eq!(
                &got[p * bytes..(p + 1) * bytes],
                &encode_f(order, ty, colors[p])[..],
                "format ({order:#x}, {ty:#x}) texel {p} from {:?}",
                colors[p]
            );
        }
    }
    // sRGB (cl_khr_srgb_image_writes, env spec 7.4.5): R, G, B encoded within 0.6 of
    // 255 × c_sRGB(y), alpha linear and exact (sRGBx keeps it in its fourth byte, as the
    // Khronos CTS expects).
    let srgb = |y: f32| -> f64 {
        let y = f64::from(y);
        if y.is_nan() || y < 0.0 {
            0.0
        } else if y < 0.0031308 {
            12.92 * y
        } else if y <= 1.0 {
            1.055 * y.powf(1.0 / 2.4) - 0.055
        } else {
            1.0
        }
    };
    let ramp: Vec<[f32; 4]> = (0..W * H)
        .map(|i| {
            let t = i as f32 / (W * H - 1) as f32;
            [t, t * t * 0.01, 1.0 - t, t]
        })
        .collect();
    let input = env.buffer(&ramp);
    for (order, rgb_at) in [
        (CL_sRGBA, [0, 1, 2]),
        (CL_sBGRA, [2, 1, 0]),
        (CL_sRGBx, [0, 1, 2]),
    ] {
        let got = written(&env, &write_f, order, CL_UNORM_INT8, &input);
        for p in 0..W * H {
            let texel = &got[p * 4..p * 4 + 4];
            for (k, &at) in rgb_at.iter().enumerate() {
                let want = 255.0 * srgb(ramp[p][k]);
                assert!(
                    (f64::from(texel[at]) - want).abs() <= 0.6,
                    "{order:#x} texel {p} channel {k}: {} for {want} from {}",
                    texel[at],
                    ramp[p][k]
                );
            }
            assert_eq!(
                texel[3],
                encode_f(CL_A, CL_UNORM_INT8, ramp[p])[0],
                "{order:#x} texel {p}: alpha is linear"
            );
        }
    }
    // Integers saturate to the channel type.
    let ints: Vec<[i32; 4]> = (0..(W * H) as i32)
        .map(|i| [i * 40 - 600, -i, i, 300])
        .collect();
    let input = env.buffer(&ints);
    let k = kernel(&program, "write_i");
    let got = written(&env, &k, CL_RGBA, CL_SIGNED_INT8, &input);
    for p in 0..W * H {
        let want: Vec<u8> = ints[p]
            .iter()
            .map(|&v| v.clamp(-128, 127) as i8 as u8)
            .collect();
        assert_eq!(&got[p * 4..p * 4 + 4], &want[..], "texel {p}");
    }
    let uints: Vec<[u32; 4]> = (0..(W * H) as u32)
        .map(|i| [i * 3000, i, 70000, 5])
        .collect();
    let input = env.buffer(&uints);
    let k = kernel(&program, "write_ui");
    let got = written(&env, &k, CL_RG, CL_UNSIGNED_INT16, &input);
    for p in 0..W * H {
        let want: Vec<u8> = uints[p][..2]
            .iter()
            .flat_map(|&v| (v.min(65535) as u16).to_le_bytes())
            .collect();
        assert_eq!(&got[p * 4..p * 4 + 4], &want[..], "texel {p}");
    }
}

#[test]
fn a_copy_kernel_moves_texels_unchanged() {
    let env = env();
    if env.other_icd {
        return;
    }
    let program = env.program_from_source(SOURCE, "");
    let k = kernel(&program, "copy");
    let data = pattern(W * H * 4, 7);
    let src = image(
        &env,
        CL_MEM_READ_ONLY,
        CL_RGBA,
        CL_UNORM_INT8,
        CL_MEM_OBJECT_IMAGE2D,
        [W, H, 1],
        Some(&data),
    );
    let dst = image(
        &env,
        CL_MEM_WRITE_ONLY,
        CL_RGBA,
        CL_UNORM_INT8,
        CL_MEM_OBJECT_IMAGE2D,
        [W, H, 1],
        None,
    );
    arg(&k, 0, &src);
    arg(&k, 1, &dst);
    env.run(&k, &[W, H], None, None);
    assert_eq!(read_back(&env, dst, [W, H, 1], W * H * 4), data);
    release(src);
    release(dst);
}

// ---- Sampling: the host sampler of 7.2-7.3 (`ferrocl_testref::image::sample`) ----

fn sample_ref(texels: &[[f32; 4]], sp: Sampler, s: f32, t: f32) -> [f32; 4] {
    // RGBA has alpha: the border is (0, 0, 0, 0).
    sample(sp, &[s, t], &[W, H], border_color(CL_RGBA), |i| {
        texels[i[1] * W + i[0]]
    })
    .expect("7.2 defines every read of this test")
}

#[test]
fn sampled_reads_follow_every_addressing_mode_and_filter() {
    let env = env();
    if env.other_icd {
        return;
    }
    let program = env.program_from_source(SOURCE, "");
    let k = kernel(&program, "sample");
    let texels: Vec<[f32; 4]> = (0..W * H)
        .map(|p| {
            [
                p as f32 / 35.0,
                (p % 7) as f32 / 8.0,
                (p / 7) as f32 / 4.0,
                0.5,
            ]
        })
        .collect();
    let bytes: Vec<u8> = texels
        .iter()
        .flatten()
        .flat_map(|v| v.to_le_bytes())
        .collect();
    let img = image(
        &env,
        CL_MEM_READ_ONLY,
        CL_RGBA,
        CL_FLOAT,
        CL_MEM_OBJECT_IMAGE2D,
        [W, H, 1],
        Some(&bytes),
    );
    // Normalised coordinates, inside and outside [0, 1], on and between texel centres.
    let normalized: Vec<[f32; 2]> = [
        [0.5, 0.5],
        [0.07, 0.1],
        [0.93, 0.9],
        [0.0, 0.0],
        [1.0, 1.0],
        [-0.3, 0.45],
        [1.37, -0.8],
        [2.6, 1.9],
        [-1.25, 3.3],
        [0.5 / 7.0, 0.5 / 5.0],
        [0.33, 0.71],
    ]
    .to_vec();
    let unnormalized: Vec<[f32; 2]> = [
        [0.5, 0.5],
        [3.2, 2.7],
        [6.9, 4.9],
        [-0.4, 1.5],
        [7.6, 5.2],
        [2.0, 3.0],
        [0.0, 4.99],
    ]
    .to_vec();
    let out = out_buffer::<[f32; 4]>(&env, 16);
    for normalized_coords in [true, false] {
        let coords = if normalized_coords {
            &normalized
        } else {
            &unnormalized
        };
        let at = env.buffer(coords);
        let modes: &[cl_addressing_mode] = if normalized_coords {
            &[
                CL_ADDRESS_CLAMP_TO_EDGE,
                CL_ADDRESS_CLAMP,
                CL_ADDRESS_REPEAT,
                CL_ADDRESS_MIRRORED_REPEAT,
            ]
        } else {
            &[CL_ADDRESS_CLAMP_TO_EDGE, CL_ADDRESS_CLAMP]
        };
        for &addressing in modes {
            for linear in [false, true] {
                let sp = Sampler {
                    normalized: normalized_coords,
                    addressing: Addressing::of(addressing),
                    linear,
                };
                let mut err = 0;
                // SAFETY: valid context.
                let sampler = unsafe {
                    clCreateSampler(
                        env.context.get(),
                        normalized_coords as cl_bool,
                        addressing,
                        if linear {
                            CL_FILTER_LINEAR
                        } else {
                            CL_FILTER_NEAREST
                        },
                        &mut err,
                    )
                };
                assert_eq!(err, CL_SUCCESS);
                arg(&k, 0, &img);
                arg(&k, 1, &sampler);
                arg_buf(&k, 2, &at);
                arg_buf(&k, 3, &out);
                env.run(&k, &[coords.len()], None, None);
                let got = env.read(&out, coords.len());
                for (i, c) in coords.iter().enumerate() {
                    let want = sample_ref(&texels, sp, c[0], c[1]);
                    for ch in 0..4 {
                        assert!(
                            (got[i][ch] - want[ch]).abs() <= 1e-5,
                            "{sp:?} at {c:?} component {ch}: got {:?} want {want:?}",
                            got[i]
                        );
                    }
                }
                // SAFETY: a live sampler.
                assert_eq!(unsafe { clReleaseSampler(sampler) }, CL_SUCCESS);
            }
        }
    }
    release(img);
}

#[test]
fn literal_samplers_queries_arrays_and_3d_writes() {
    let env = env();
    if env.other_icd {
        return;
    }
    let program = env.program_from_source(SOURCE, "");
    // A literal sampler with CL_ADDRESS_CLAMP: x = -0.5 is in the border, the others texels.
    let data = pattern(W * 4, 3);
    let img = image(
        &env,
        CL_MEM_READ_ONLY,
        CL_RGBA,
        CL_UNORM_INT8,
        CL_MEM_OBJECT_IMAGE2D,
        [W, 1, 1],
        Some(&data),
    );
    let k = kernel(&program, "literal");
    let out = out_buffer::<[f32; 4]>(&env, W + 1);
    arg(&k, 0, &img);
    arg_buf(&k, 1, &out);
    env.run(&k, &[W + 1], None, None);
    let got = env.read(&out, W + 1);
    assert_eq!(got[0], [0.0; 4], "border");
    for x in 1..=W {
        assert_eq!(
            got[x],
            decode_f(CL_RGBA, CL_UNORM_INT8, &data[(x - 1) * 4..]),
            "x {x}"
        );
    }
    release(img);

    let vol = image(
        &env,
        CL_MEM_READ_WRITE,
        CL_R,
        CL_FLOAT,
        CL_MEM_OBJECT_IMAGE3D,
        [4, 3, 2],
        None,
    );
    let k = kernel(&program, "queries");
    let q = out_buffer::<i32>(&env, 6);
    arg(&k, 0, &vol);
    arg_buf(&k, 1, &q);
    env.run(&k, &[1], None, None);
    assert_eq!(
        env.read(&q, 6),
        vec![
            4,
            3,
            2,
            CL_FLOAT as i32,
            CL_R as i32,
            CL_UNORM_INT_101010_2 as i32
        ]
    );

    // 3D writes: each texel (x, y, z) gets x / 8.
    let k = kernel(&program, "write3d");
    arg(&k, 0, &vol);
    env.run(&k, &[4, 3, 2], None, None);
    let got = read_back(&env, vol, [4, 3, 2], 4 * 3 * 2 * 4);
    for z in 0..2 {
        for y in 0..3 {
            for x in 0..4 {
                let p = (z * 3 + y) * 4 + x;
                let v = f32::from_le_bytes(got[p * 4..p * 4 + 4].try_into().unwrap());
                assert_eq!(v, x as f32 / 8.0, "({x}, {y}, {z})");
            }
        }
    }
    release(vol);

    // A 1D array: layer l of width W.
    let data = float_pattern(CL_FLOAT, W * 3 * 16, 9);
    let arr = image(
        &env,
        CL_MEM_READ_ONLY,
        CL_RGBA,
        CL_FLOAT,
        CL_MEM_OBJECT_IMAGE1D_ARRAY,
        [W, 3, 1],
        Some(&data),
    );
    let k = kernel(&program, "layers");
    let out = out_buffer::<[f32; 4]>(&env, W * 3);
    arg(&k, 0, &arr);
    arg_buf(&k, 1, &out);
    env.run(&k, &[W, 3], None, None);
    let got = env.read(&out, W * 3);
    for p in 0..W * 3 {
        assert_eq!(
            got[p],
            decode_f(CL_RGBA, CL_FLOAT, &data[p * 16..]),
            "texel {p}"
        );
    }
    release(arr);
}

#[test]
fn depth_images_read_and_write_one_value() {
    let env = env();
    if env.other_icd {
        return;
    }
    let program = env.program_from_source(SOURCE, "");
    let k = kernel(&program, "depth_copy");
    for ty in [CL_FLOAT, CL_UNORM_INT16] {
        let size = if ty == CL_FLOAT { 4 } else { 2 };
        let values: Vec<f32> = (0..W * H).map(|p| p as f32 / (W * H) as f32).collect();
        let bytes: Vec<u8> = values
            .iter()
            .flat_map(|&v| {
                if ty == CL_FLOAT {
                    v.to_le_bytes().to_vec()
                } else {
                    ((v * 65535.0).round_ties_even() as u16)
                        .to_le_bytes()
                        .to_vec()
                }
            })
            .collect();
        let src = image(
            &env,
            CL_MEM_READ_ONLY,
            CL_DEPTH,
            ty,
            CL_MEM_OBJECT_IMAGE2D,
            [W, H, 1],
            Some(&bytes),
        );
        let dst = image(
            &env,
            CL_MEM_WRITE_ONLY,
            CL_DEPTH,
            ty,
            CL_MEM_OBJECT_IMAGE2D,
            [W, H, 1],
            None,
        );
        let out = out_buffer::<f32>(&env, W * H);
        arg(&k, 0, &src);
        arg(&k, 1, &dst);
        arg_buf(&k, 2, &out);
        env.run(&k, &[W, H], None, None);
        let got = env.read(&out, W * H);
        let written = read_back(&env, dst, [W, H, 1], W * H * size);
        for p in 0..W * H {
            let stored = &bytes[p * size..(p + 1) * size];
            let want = if ty == CL_FLOAT {
                f32::from_le_bytes(stored.try_into().unwrap())
            } else {
                f32::from(u16::from_le_bytes(stored.try_into().unwrap())) / 65535.0
            };
            assert_eq!(got[p], want, "{ty:#x} read {p}");
            let half: Vec<u8> = if ty == CL_FLOAT {
                (want * 0.5).to_le_bytes().to_vec()
            } else {
                ((want * 0.5 * 65535.0).clamp(0.0, 65535.0).round_ties_even() as u16)
                    .to_le_bytes()
                    .to_vec()
            };
            assert_eq!(
                &written[p * size..(p + 1) * size],
                &half[..],
                "{ty:#x} write {p}"
            );
        }
        release(src);
        release(dst);
    }
}

#[test]
fn bad_image_and_sampler_arguments_fail() {
    let env = env();
    if env.other_icd {
        return;
    }
    let program = env.program_from_source(SOURCE, "");
    let k = kernel(&program, "read_f");
    let buf: Buffer<u8> = check(
        cl(unsafe { Buffer::create(&env.context, CL_MEM_READ_WRITE, 64, null_mut()) }),
        "clCreateBuffer",
    );
    let size = std::mem::size_of::<cl_mem>();
    let b = buf.get();
    // SAFETY: valid kernel; the value points at a cl_mem.
    let r = unsafe { clSetKernelArg(k.get(), 0, size, (&b as *const cl_mem).cast()) };
    assert_eq!(r, CL_INVALID_MEM_OBJECT, "a buffer for an image argument");
    // A write-only image for a read_only argument.
    let img = image(
        &env,
        CL_MEM_WRITE_ONLY,
        CL_RGBA,
        CL_FLOAT,
        CL_MEM_OBJECT_IMAGE2D,
        [2, 2, 1],
        None,
    );
    // SAFETY: as above.
    let r = unsafe { clSetKernelArg(k.get(), 0, size, (&img as *const cl_mem).cast()) };
    assert_eq!(r, CL_INVALID_ARG_VALUE, "a write-only image for read_only");
    // An image for a pointer argument.
    // SAFETY: as above.
    let r = unsafe { clSetKernelArg(k.get(), 1, size, (&img as *const cl_mem).cast()) };
    assert_eq!(r, CL_INVALID_MEM_OBJECT, "an image for a pointer argument");
    release(img);
    let s = kernel(&program, "sample");
    let not_a_sampler: cl_sampler = b.cast();
    // SAFETY: the value points at a handle-sized value.
    let r = unsafe {
        clSetKernelArg(
            s.get(),
            1,
            std::mem::size_of::<cl_sampler>(),
            (&not_a_sampler as *const cl_sampler).cast(),
        )
    };
    assert_eq!(r, CL_INVALID_SAMPLER, "a buffer for a sampler argument");
}

/// Every test above again with `FERROCL_SPECIALIZE=off` in a child process: there, each access
/// goes through the run-time switches on the format instead of a build for the bound format.
#[test]
fn the_same_tests_pass_without_specialisation() {
    const CHILD: &str = "FERROCL_IMAGE_KERNELS_CHILD";
    if std::env::var_os(CHILD).is_some() || env().other_icd {
        return;
    }
    let exe = std::env::current_exe().expect("test binary path");
    let out = std::process::Command::new(exe)
        .args([
            "--skip",
            "the_same_tests_pass_without_specialisation",
            "--test-threads=1",
        ])
        .env(CHILD, "1")
        .env("FERROCL_SPECIALIZE", "off")
        .output()
        .expect("run the test binary as a child");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && stdout.contains("7 passed"),
        "without specialisation:\n{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
}
