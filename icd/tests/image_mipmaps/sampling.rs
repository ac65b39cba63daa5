//! Sampled reads of levels in kernels against the host reference: level selection (OpenGL 4.6
//! §8.14.3) and texel filtering (`ferrocl_testref::image`, env 7.2) at an explicit lod, from
//! gradients, literal samplers, reads without a lod, images without levels, integer and depth
//! images.

use super::*;
use ferrocl_testref::image::{sample, taps, Addressing, Sampler};

// ---- Sampling reference: level selection (OpenGL 4.6 §8.14.3), texel filtering (env 7.2) ----

/// The levels a read at level of detail `lambda` blends, with their weights: λ clamped to the
/// sampler's [lod_min, lod_max] and to [0, levels − 1]; the nearest mip filter takes level
/// ceil(λ + 1/2) − 1, the linear one floor(λ) and the next, by frac(λ).
fn mip_levels(lambda: f32, lod: (f32, f32), levels: usize, mip_linear: bool) -> Vec<(usize, f32)> {
    let q = (levels - 1) as f32;
    let l = lambda.max(lod.0).min(lod.1).max(0.0).min(q);
    if !mip_linear {
        return vec![(((l + 0.5).ceil() as usize).saturating_sub(1), 1.0)];
    }
    let d1 = l.floor();
    let f = l - d1;
    let d1 = d1 as usize;
    if f == 0.0 {
        vec![(d1, 1.0)]
    } else {
        vec![(d1, 1.0 - f), ((d1 + 1).min(levels - 1), f)]
    }
}

/// A read of one level: `dims` its size, `layer` the array layer, `coord` normalised; the texel
/// filtering of `ferrocl_testref::image` (env 7.2.1, 7.2.2), clamp-to-edge or repeat.
fn sample_level(
    texels: &[[f32; 4]],
    dims: [usize; 3],
    layer: usize,
    coord: &[f32],
    linear: bool,
    repeat: bool,
) -> [f32; 4] {
    let sampler = Sampler {
        normalized: true,
        addressing: if repeat {
            Addressing::Repeat
        } else {
            Addressing::ClampToEdge
        },
        linear,
    };
    // Clamp-to-edge and repeat never reach the border.
    sample(sampler, coord, &dims[..coord.len()], [0.0; 4], |idx| {
        let at = |k: usize| idx.get(k).copied().unwrap_or(0);
        texels[((layer * dims[2] + at(2)) * dims[1] + at(1)) * dims[0] + at(0)]
    })
    .expect("normalised coordinates: every read is defined")
}

/// The texel a nearest clamp-to-edge read of normalised `s` takes in `size` texels.
fn nearest(s: f32, size: usize) -> usize {
    let sampler = Sampler {
        normalized: true,
        addressing: Addressing::ClampToEdge,
        linear: false,
    };
    taps(sampler, s, size)
        .and_then(|t| t[0].0)
        .expect("clamp-to-edge stays in the image")
}

/// Spatial dimensions of an image type.
pub(super) fn spatial(ty: cl_mem_object_type) -> usize {
    match ty {
        CL_MEM_OBJECT_IMAGE1D | CL_MEM_OBJECT_IMAGE1D_ARRAY => 1,
        CL_MEM_OBJECT_IMAGE3D => 3,
        _ => 2,
    }
}

/// The reference read at `coord` (normalised; the layer last for arrays) and `lambda`.
#[allow(clippy::too_many_arguments)]
fn sample_ref(
    shape: &Shape,
    data: &[Vec<[f32; 4]>],
    coord: [f32; 4],
    lambda: f32,
    lod: (f32, f32),
    linear: bool,
    mip_linear: bool,
    repeat: bool,
) -> [f32; 4] {
    let sp = spatial(shape.ty);
    let layer = if matches!(
        shape.ty,
        CL_MEM_OBJECT_IMAGE1D_ARRAY | CL_MEM_OBJECT_IMAGE2D_ARRAY
    ) {
        (coord[sp].round_ties_even() as i64).clamp(0, shape.layers as i64 - 1) as usize
    } else {
        0
    };
    let picks = mip_levels(lambda, lod, shape.levels, mip_linear);
    let reads: Vec<[f32; 4]> = picks
        .iter()
        .map(|&(l, _)| {
            let size = shape.level_size(l);
            sample_level(&data[l], size, layer, &coord[..sp], linear, repeat)
        })
        .collect();
    if reads.len() == 1 {
        return reads[0];
    }
    let (a, b) = (picks[0].1, picks[1].1);
    [0, 1, 2, 3].map(|k| a * reads[0][k] + b * reads[1][k])
}

fn close(got: [f32; 4], want: [f32; 4]) -> bool {
    (0..4).all(|k| (got[k] - want[k]).abs() <= 2e-6)
}

const SAMPLE_SOURCE: &str = r#"
__kernel void lod_1d(read_only image1d_t img, sampler_t s, __global const float4 *at,
                     __global float4 *out) {
    int i = get_global_id(0);
    out[i] = read_imagef(img, s, at[i].x, at[i].w);
}
__kernel void lod_1d_array(read_only image1d_array_t img, sampler_t s, __global const float4 *at,
                           __global float4 *out) {
    int i = get_global_id(0);
    out[i] = read_imagef(img, s, at[i].xy, at[i].w);
}
__kernel void lod_2d(read_only image2d_t img, sampler_t s, __global const float4 *at,
                     __global float4 *out) {
    int i = get_global_id(0);
    out[i] = read_imagef(img, s, at[i].xy, at[i].w);
}
__kernel void lod_2d_array(read_only image2d_array_t img, sampler_t s,
                           __global const float4 *at, __global float4 *out) {
    int i = get_global_id(0);
    out[i] = read_imagef(img, s, (float4)(at[i].xyz, 0.0f), at[i].w);
}
__kernel void lod_3d(read_only image3d_t img, sampler_t s, __global const float4 *at,
                     __global float4 *out) {
    int i = get_global_id(0);
    out[i] = read_imagef(img, s, (float4)(at[i].xyz, 0.0f), at[i].w);
}
__kernel void no_lod_2d(read_only image2d_t img, sampler_t s, __global const float4 *at,
                        __global float4 *out) {
    int i = get_global_id(0);
    out[i] = read_imagef(img, s, at[i].xy);
}
__kernel void grad_1d(read_only image1d_t img, sampler_t s, __global const float4 *at,
                      __global const float4 *g, __global float4 *out) {
    int i = get_global_id(0);
    out[i] = read_imagef(img, s, at[i].x, g[i].x, g[i].y);
}
__kernel void grad_2d(read_only image2d_t img, sampler_t s, __global const float4 *at,
                      __global const float4 *g, __global float4 *out) {
    int i = get_global_id(0);
    out[i] = read_imagef(img, s, at[i].xy, g[i].xy, g[i].zw);
}
__kernel void grad_3d(read_only image3d_t img, sampler_t s, __global const float4 *at,
                      __global const float4 *gx, __global const float4 *gy,
                      __global float4 *out) {
    int i = get_global_id(0);
    out[i] = read_imagef(img, s, (float4)(at[i].xyz, 0.0f), gx[i], gy[i]);
}
__kernel void literal_lod(read_only image2d_t img, __global const float4 *at,
                          __global float4 *out) {
    const sampler_t s = CLK_NORMALIZED_COORDS_TRUE | CLK_ADDRESS_CLAMP_TO_EDGE |
                        CLK_FILTER_NEAREST;
    int i = get_global_id(0);
    out[i] = read_imagef(img, s, at[i].xy, at[i].w);
}
__kernel void lod_ui(read_only image2d_t img, sampler_t s, __global const float4 *at,
                     __global uint4 *out) {
    int i = get_global_id(0);
    out[i] = read_imageui(img, s, at[i].xy, at[i].w);
}
__kernel void lod_depth(read_only image2d_depth_t img, sampler_t s, __global const float4 *at,
                        __global float *out) {
    int i = get_global_id(0);
    out[i] = read_imagef(img, s, at[i].xy, at[i].w);
}
__kernel void queries(read_only image3d_t a, read_only image2d_t b, read_only image1d_array_t c,
                      read_only image2d_depth_t d, __global int *out) {
    out[0] = get_image_num_mip_levels(a);
    out[1] = get_image_num_mip_levels(b);
    out[2] = get_image_num_mip_levels(c);
    out[3] = get_image_num_mip_levels(d);
    out[4] = get_image_width(a);
    out[5] = get_image_height(a);
    out[6] = get_image_depth(a);
    out[7] = get_image_array_size(c);
}
__kernel void write_2d(write_only image2d_t img, int lod, __global const float4 *in) {
    int x = get_global_id(0), y = get_global_id(1);
    write_imagef(img, (int2)(x, y), lod, in[y * get_global_size(0) + x]);
}
__kernel void write_1d(write_only image1d_t img, int lod, __global const float4 *in) {
    int x = get_global_id(0);
    write_imagef(img, x, lod, in[x]);
}
__kernel void write_1d_array(write_only image1d_array_t img, int lod, __global const float4 *in) {
    int x = get_global_id(0), y = get_global_id(1);
    write_imagef(img, (int2)(x, y), lod, in[y * get_global_size(0) + x]);
}
__kernel void write_2d_array(write_only image2d_array_t img, int lod, __global const float4 *in) {
    int x = get_global_id(0), y = get_global_id(1), z = get_global_id(2);
    int i = (z * get_global_size(1) + y) * get_global_size(0) + x;
    write_imagef(img, (int4)(x, y, z, 0), lod, in[i]);
}
__kernel void write_3d(write_only image3d_t img, int lod, __global const float4 *in) {
    int x = get_global_id(0), y = get_global_id(1), z = get_global_id(2);
    int i = (z * get_global_size(1) + y) * get_global_size(0) + x;
    write_imagef(img, (int4)(x, y, z, 0), lod, in[i]);
}
__kernel void write_ui(write_only image2d_t img, int lod, __global const uint4 *in) {
    int x = get_global_id(0), y = get_global_id(1);
    write_imageui(img, (int2)(x, y), lod, in[y * get_global_size(0) + x]);
}
__kernel void write_depth(write_only image2d_depth_t img, int lod, __global const float *in) {
    int x = get_global_id(0), y = get_global_id(1);
    write_imagef(img, (int2)(x, y), lod, in[y * get_global_size(0) + x]);
}
"#;

pub(super) fn program(env: &Env) -> Program {
    env.program_from_source(SAMPLE_SOURCE, "-cl-std=CL3.0")
}

pub(super) fn kernel(program: &Program, name: &str) -> Kernel {
    check(cl(Kernel::create(program, name)), "clCreateKernel")
}

/// A sampler with normalised coordinates and the given modes and mip parameters (None: the
/// defaults, through clCreateSampler).
pub(super) fn sampler(
    env: &Env,
    repeat: bool,
    linear: bool,
    mip: Option<(bool, f32, f32)>,
) -> cl_sampler {
    let addressing = if repeat {
        CL_ADDRESS_REPEAT
    } else {
        CL_ADDRESS_CLAMP_TO_EDGE
    };
    let filter = if linear {
        CL_FILTER_LINEAR
    } else {
        CL_FILTER_NEAREST
    };
    let mut err = 0;
    let s = match mip {
        None => {
            // SAFETY: valid context.
            unsafe { clCreateSampler(env.context.get(), CL_TRUE, addressing, filter, &mut err) }
        }
        Some((mip_linear, lo, hi)) => {
            let props: [cl_sampler_properties; 13] = [
                CL_SAMPLER_NORMALIZED_COORDS as _,
                CL_TRUE as _,
                CL_SAMPLER_ADDRESSING_MODE as _,
                addressing as _,
                CL_SAMPLER_FILTER_MODE as _,
                filter as _,
                CL_SAMPLER_MIP_FILTER_MODE_KHR,
                if mip_linear {
                    CL_FILTER_LINEAR
                } else {
                    CL_FILTER_NEAREST
                } as _,
                CL_SAMPLER_LOD_MIN_KHR,
                lo.to_bits() as _,
                CL_SAMPLER_LOD_MAX_KHR,
                hi.to_bits() as _,
                0,
            ];
            // SAFETY: valid context, zero-terminated list.
            unsafe { clCreateSamplerWithProperties(env.context.get(), props.as_ptr(), &mut err) }
        }
    };
    assert_eq!(err, CL_SUCCESS);
    s
}

pub(super) fn release_sampler(s: cl_sampler) {
    // SAFETY: a live handle.
    assert_eq!(unsafe { clReleaseSampler(s) }, CL_SUCCESS);
}

/// Runs `k(image, sampler, at, [extra…], out)` over `at.len()` work-items.
fn run_sampled<T: Copy + Default>(
    env: &Env,
    k: &Kernel,
    m: cl_mem,
    s: Option<cl_sampler>,
    at: &[[f32; 4]],
    extra: &[&Buffer<[f32; 4]>],
) -> Vec<T> {
    let at_buf = env.buffer(at);
    let out = env.buffer(&vec![T::default(); at.len()]);
    let mut i = 0;
    arg(k, i, &m);
    i += 1;
    if let Some(s) = s {
        arg(k, i, &s);
        i += 1;
    }
    arg_buf(k, i, &at_buf);
    i += 1;
    for b in extra {
        arg_buf(k, i, b);
        i += 1;
    }
    arg_buf(k, i, &out);
    env.run(k, &[at.len()], None, None);
    env.read(&out, at.len())
}

/// Coordinates inside the image (and layers, rounded, in range and just outside), each with
/// every lod of `lods` in `w`.
fn points(shape: &Shape, lods: &[f32], seed: u64) -> Vec<[f32; 4]> {
    let mut rng = Rng::new(seed);
    let sp = spatial(shape.ty);
    let mut out = Vec::new();
    for &lod in lods {
        for _ in 0..12 {
            let mut p = [0.0f32; 4];
            for c in p.iter_mut().take(sp) {
                *c = (rng.next_u32() % 1000) as f32 / 999.0 * 1.2 - 0.1;
            }
            if matches!(
                shape.ty,
                CL_MEM_OBJECT_IMAGE1D_ARRAY | CL_MEM_OBJECT_IMAGE2D_ARRAY
            ) {
                p[sp] = (rng.next_u32() % (shape.layers as u32 + 1)) as f32 - 0.3;
            }
            p[3] = lod;
            out.push(p);
        }
    }
    out
}

const LODS: [f32; 12] = [
    -1.0, 0.0, 0.25, 0.5, 0.7, 1.0, 1.5, 1.75, 2.0, 2.4, 3.0, 40.0,
];

#[test]
fn reads_at_a_lod_choose_levels_as_the_mip_filter_says() {
    let Some(env) = env() else { return };
    let program = program(&env);
    for (n, shape) in shapes().iter().enumerate() {
        let name = match shape.ty {
            CL_MEM_OBJECT_IMAGE1D => "lod_1d",
            CL_MEM_OBJECT_IMAGE1D_ARRAY => "lod_1d_array",
            CL_MEM_OBJECT_IMAGE2D => "lod_2d",
            CL_MEM_OBJECT_IMAGE2D_ARRAY => "lod_2d_array",
            _ => "lod_3d",
        };
        let k = kernel(&program, name);
        let m = image(&env, &RGBA_FLOAT, shape);
        let data = level_data(shape, 40 + n as u32);
        upload(&env, m, shape, &data);
        let at = points(shape, &LODS, n as u64 + 1);
        // Every texel filter, mip filter and addressing mode here, the defaults and lod
        // ranges that clamp from below, above and to one value.
        let mut cases = vec![(false, false, None), (true, false, None)];
        for (linear, mip_linear, repeat) in [
            (false, false, false),
            (true, true, false),
            (false, true, true),
            (true, false, true),
        ] {
            for lod in [
                (0.0, f32::MAX),
                (1.25, f32::MAX),
                (0.0, 1.5),
                (2.0, 2.0),
                (-3.0, 0.75),
            ] {
                cases.push((linear, repeat, Some((mip_linear, lod.0, lod.1))));
            }
        }
        for (linear, repeat, mip) in cases {
            let s = sampler(&env, repeat, linear, mip);
            let got: Vec<[f32; 4]> = run_sampled(&env, &k, m, Some(s), &at, &[]);
            let (mip_linear, lo, hi) = mip.unwrap_or((false, 0.0, f32::MAX));
            for (p, g) in at.iter().zip(&got) {
                let want = sample_ref(shape, &data, *p, p[3], (lo, hi), linear, mip_linear, repeat);
                assert!(close(*g, want), "{shape:?} linear {linear} repeat {repeat} mip {mip:?} at {p:?}: got {g:?} want {want:?}");
            }
            release_sampler(s);
        }
        release(m);
    }
}

#[test]
fn gradients_give_the_level_of_detail() {
    let Some(env) = env() else { return };
    let program = program(&env);
    // 2D, 32×16, 6 levels: gradients whose longer one spans 2^k texels of level 0 read at
    // λ = k; non-powers of two blend under the linear mip filter.
    let shape = Shape::new(CL_MEM_OBJECT_IMAGE2D, [32, 16, 0, 0], 6);
    let m = image(&env, &RGBA_FLOAT, &shape);
    let data = level_data(&shape, 77);
    upload(&env, m, &shape, &data);
    let k = kernel(&program, "grad_2d");
    let mut at = Vec::new();
    let mut grads = Vec::new();
    let mut lambdas = Vec::new();
    let mut rng = Rng::new(5);
    // (texels in x of dx, texels in y of dx, texels in x of dy, texels in y of dy)
    for g in [
        [1.0f32, 0.0, 0.0, 1.0],
        [0.5, 0.0, 0.0, 0.25],
        [2.0, 0.0, 0.0, 1.0],
        [0.0, 4.0, 1.0, 0.0],
        [3.0, 4.0, 0.0, 1.0],
        [0.0, 0.0, 8.0, 0.0],
        [12.0, 0.0, 0.0, 3.0],
        [0.0, 0.0, 0.0, 0.0],
        [64.0, 0.0, 0.0, 0.0],
        [2.5, 0.0, 0.0, 0.0],
    ] {
        for _ in 0..6 {
            at.push([
                (rng.next_u32() % 100) as f32 / 99.0,
                (rng.next_u32() % 100) as f32 / 99.0,
                0.0,
                0.0,
            ]);
            grads.push([g[0] / 32.0, g[1] / 16.0, g[2] / 32.0, g[3] / 16.0]);
            // OpenGL (8.6)–(8.8): ρ the larger of the two lengths in texels; λ = log2 ρ.
            let rho = (g[0] * g[0] + g[1] * g[1])
                .sqrt()
                .max((g[2] * g[2] + g[3] * g[3]).sqrt());
            lambdas.push((rho as f64).log2() as f32);
        }
    }
    let g_buf = env.buffer(&grads);
    for (linear, mip_linear, lod) in [
        (false, false, (0.0, f32::MAX)),
        (true, true, (0.0, f32::MAX)),
        (false, true, (1.0, 3.5)),
    ] {
        let s = sampler(&env, false, linear, Some((mip_linear, lod.0, lod.1)));
        let got: Vec<[f32; 4]> = run_sampled(&env, &k, m, Some(s), &at, &[&g_buf]);
        for i in 0..at.len() {
            let want = sample_ref(
                &shape, &data, at[i], lambdas[i], lod, linear, mip_linear, false,
            );
            // log2 of a non-power of two is rounded: a weight may differ in its last bit.
            assert!(
                (0..4).all(|c| (got[i][c] - want[c]).abs() <= 1e-5),
                "2D gradient {:?} (λ {}), mip linear {mip_linear}: got {:?} want {want:?}",
                grads[i],
                lambdas[i],
                got[i]
            );
        }
        release_sampler(s);
    }
    release(m);
    // 1D and 3D: the gradient's components scale by each dimension's size.
    let shape = Shape::new(CL_MEM_OBJECT_IMAGE1D, [64, 0, 0, 0], 7);
    let m = image(&env, &RGBA_FLOAT, &shape);
    let data = level_data(&shape, 78);
    upload(&env, m, &shape, &data);
    let k = kernel(&program, "grad_1d");
    let cases: Vec<(f32, f32)> = vec![
        (1.0, 0.0),
        (4.0, 2.0),
        (0.0, 16.0),
        (-8.0, 1.0),
        (32.0, 32.0),
    ];
    let at: Vec<[f32; 4]> = (0..cases.len())
        .map(|i| [0.1 + 0.17 * i as f32, 0.0, 0.0, 0.0])
        .collect();
    let grads: Vec<[f32; 4]> = cases
        .iter()
        .map(|&(x, y)| [x / 64.0, y / 64.0, 0.0, 0.0])
        .collect();
    let g_buf = env.buffer(&grads);
    let s = sampler(&env, false, false, Some((false, 0.0, f32::MAX)));
    let got: Vec<[f32; 4]> = run_sampled(&env, &k, m, Some(s), &at, &[&g_buf]);
    for (i, &(x, y)) in cases.iter().enumerate() {
        let lambda = x.abs().max(y.abs()).log2();
        let want = sample_ref(
            &shape,
            &data,
            at[i],
            lambda,
            (0.0, f32::MAX),
            false,
            false,
            false,
        );
        assert_eq!(got[i], want, "1D gradient {x}, {y}");
    }
    release_sampler(s);
    release(m);
    let shape = Shape::new(CL_MEM_OBJECT_IMAGE3D, [16, 8, 4, 0], 5);
    let m = image(&env, &RGBA_FLOAT, &shape);
    let data = level_data(&shape, 79);
    upload(&env, m, &shape, &data);
    let k = kernel(&program, "grad_3d");
    let texels: Vec<([f32; 3], [f32; 3])> = vec![
        ([1.0, 0.0, 0.0], [0.0, 1.0, 0.0]),
        ([0.0, 0.0, 4.0], [0.0, 0.0, 0.0]),
        ([2.0, 2.0, 1.0], [0.0, 0.0, 2.0]),
        ([0.0, 8.0, 0.0], [16.0, 0.0, 0.0]),
    ];
    let scale = [16.0, 8.0, 4.0];
    let gx: Vec<[f32; 4]> = texels
        .iter()
        .map(|(x, _)| [x[0] / scale[0], x[1] / scale[1], x[2] / scale[2], 0.0])
        .collect();
    let gy: Vec<[f32; 4]> = texels
        .iter()
        .map(|(_, y)| [y[0] / scale[0], y[1] / scale[1], y[2] / scale[2], 0.0])
        .collect();
    let at: Vec<[f32; 4]> = (0..texels.len())
        .map(|i| [0.2 + 0.2 * i as f32, 0.7, 0.4, 0.0])
        .collect();
    let (gx_buf, gy_buf) = (env.buffer(&gx), env.buffer(&gy));
    let s = sampler(&env, false, false, Some((false, 0.0, f32::MAX)));
    let got: Vec<[f32; 4]> = run_sampled(&env, &k, m, Some(s), &at, &[&gx_buf, &gy_buf]);
    for (i, (x, y)) in texels.iter().enumerate() {
        let len = |v: &[f32; 3]| (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]).sqrt();
        let lambda = (len(x).max(len(y)) as f64).log2() as f32;
        let want = sample_ref(
            &shape,
            &data,
            at[i],
            lambda,
            (0.0, f32::MAX),
            false,
            false,
            false,
        );
        assert_eq!(got[i], want, "3D gradients {x:?} {y:?}");
    }
    release_sampler(s);
    release(m);
}

#[test]
fn literal_samplers_reads_without_a_lod_and_images_without_levels() {
    let Some(env) = env() else { return };
    let program = program(&env);
    let shape = Shape::new(CL_MEM_OBJECT_IMAGE2D, [16, 16, 0, 0], 5);
    let m = image(&env, &RGBA_FLOAT, &shape);
    let data = level_data(&shape, 90);
    upload(&env, m, &shape, &data);
    let at = points(&shape, &LODS, 9);
    // A literal sampler has the defaults: nearest mip filter, lod range [0, MAXFLOAT].
    let k = kernel(&program, "literal_lod");
    let got: Vec<[f32; 4]> = run_sampled(&env, &k, m, None, &at, &[]);
    for (p, g) in at.iter().zip(&got) {
        let want = sample_ref(
            &shape,
            &data,
            *p,
            p[3],
            (0.0, f32::MAX),
            false,
            false,
            false,
        );
        assert_eq!(*g, want, "literal sampler at {p:?}");
    }
    // A read without a lod reads level 0, whatever the sampler's lod range.
    let k = kernel(&program, "no_lod_2d");
    let s = sampler(&env, false, true, Some((true, 2.0, 3.0)));
    let got: Vec<[f32; 4]> = run_sampled(&env, &k, m, Some(s), &at, &[]);
    for (p, g) in at.iter().zip(&got) {
        let want = sample_level(&data[0], shape.level_size(0), 0, &p[..2], true, false);
        assert!(close(*g, want), "no lod at {p:?}: got {g:?} want {want:?}");
    }
    // An image without levels read at a lod: its only level (the same kernel, so also a
    // build specialised to an image without levels after one with them).
    let k = kernel(&program, "lod_2d");
    let flat = Shape { levels: 1, ..shape };
    let plain = image(&env, &RGBA_FLOAT, &Shape { levels: 0, ..shape });
    upload(&env, plain, &flat, &data[..1]);
    for img in [m, plain, m] {
        let got: Vec<[f32; 4]> = run_sampled(&env, &k, img, Some(s), &at, &[]);
        let (which, levels) = if img == m {
            (&data[..], shape)
        } else {
            (&data[..1], flat)
        };
        for (p, g) in at.iter().zip(&got) {
            let want = sample_ref(&levels, which, *p, p[3], (2.0, 3.0), true, true, false);
            assert!(
                close(*g, want),
                "{} levels at {p:?}: got {g:?} want {want:?}",
                levels.levels
            );
        }
    }
    release_sampler(s);
    release(plain);
    release(m);
}

#[test]
fn integer_and_depth_images_read_a_level() {
    let Some(env) = env() else { return };
    let program = program(&env);
    let shape = Shape::new(CL_MEM_OBJECT_IMAGE2D, [8, 8, 0, 0], 4);
    let format = cl_image_format {
        image_channel_order: CL_RGBA,
        image_channel_data_type: CL_UNSIGNED_INT8,
    };
    let m = image(&env, &format, &shape);
    let mut levels = Vec::new();
    for l in 0..shape.levels {
        let texels: Vec<[u8; 4]> = (0..shape.level_texels(l))
            .map(|i| [l as u8, i as u8, (i * 7) as u8, 200])
            .collect();
        let r = write_level(
            &env,
            m,
            shape.origin(l, [0; 3]),
            shape.level_region(l),
            &texels.concat(),
        );
        assert_eq!(r, CL_SUCCESS);
        levels.push(texels);
    }
    let k = kernel(&program, "lod_ui");
    let at = points(&shape, &LODS, 11);
    let s = sampler(&env, false, false, Some((false, 0.0, f32::MAX)));
    let got: Vec<[u32; 4]> = run_sampled(&env, &k, m, Some(s), &at, &[]);
    for (p, g) in at.iter().zip(&got) {
        let (l, _) = mip_levels(p[3], (0.0, f32::MAX), shape.levels, false)[0];
        let [w, h, _] = shape.level_size(l);
        let (x, y) = (nearest(p[0], w), nearest(p[1], h));
        let want = levels[l][y * w + x].map(u32::from);
        assert_eq!(*g, want, "uint level {l} at {p:?}");
    }
    release_sampler(s);
    release(m);

    let depth = cl_image_format {
        image_channel_order: CL_DEPTH,
        image_channel_data_type: CL_FLOAT,
    };
    let m = image(&env, &depth, &shape);
    let data = level_data(&shape, 12);
    for (l, texels) in data.iter().enumerate() {
        let values: Vec<f32> = texels.iter().map(|t| t[0]).collect();
        let r = write_level(
            &env,
            m,
            shape.origin(l, [0; 3]),
            shape.level_region(l),
            &floats(&values),
        );
        assert_eq!(r, CL_SUCCESS);
    }
    let k = kernel(&program, "lod_depth");
    let s = sampler(&env, false, true, Some((true, 0.0, f32::MAX)));
    let got: Vec<f32> = run_sampled(&env, &k, m, Some(s), &at, &[]);
    for (p, g) in at.iter().zip(&got) {
        let want = sample_ref(&shape, &data, *p, p[3], (0.0, f32::MAX), true, true, false)[0];
        assert!(
            (g - want).abs() <= 2e-6,
            "depth at {p:?}: got {g} want {want}"
        );
    }
    release_sampler(s);
    release(m);
}
