//! `--images`: image kernels on each platform — a separable Gaussian blur of a CL_RGBA
//! UNORM_INT8 image through a clamp-to-edge sampler with linear filtering, an NV12 → RGBA
//! conversion reading a CL_R and a CL_RG plane, and the gradient of a CL_R FLOAT volume —
//! timed by profiling events (median of the repetitions). Every platform's output is compared
//! with the first platform's (Ferrocl's when present): image formats round, so results are
//! checked within a tolerance rather than bit for bit.

use std::ffi::c_void;
use std::ptr;

use libloading::Library;
use opencl_sys::cl_function_types as f;
use opencl_sys::*;

use crate::cl::{Context, EventTimer, ProgramCode};
use crate::stats::median;

const SOURCE: &str = r#"
// Nine-tap Gaussian in five bilinear fetches: each pair of taps is one linear sample placed
// between the two texels in proportion to their weights.
constant float offsets[3] = { 0.0f, 1.3846153846f, 3.2307692308f };
constant float weights[3] = { 0.2270270270f, 0.3162162162f, 0.0702702703f };

kernel void blur_h(read_only image2d_t src, write_only image2d_t dst, sampler_t s) {
    int x = get_global_id(0), y = get_global_id(1);
    float2 c = (float2)(x + 0.5f, y + 0.5f);
    float4 sum = read_imagef(src, s, c) * weights[0];
    for (int i = 1; i < 3; i++) {
        sum += read_imagef(src, s, c + (float2)(offsets[i], 0.0f)) * weights[i];
        sum += read_imagef(src, s, c - (float2)(offsets[i], 0.0f)) * weights[i];
    }
    write_imagef(dst, (int2)(x, y), sum);
}

kernel void blur_v(read_only image2d_t src, write_only image2d_t dst, sampler_t s) {
    int x = get_global_id(0), y = get_global_id(1);
    float2 c = (float2)(x + 0.5f, y + 0.5f);
    float4 sum = read_imagef(src, s, c) * weights[0];
    for (int i = 1; i < 3; i++) {
        sum += read_imagef(src, s, c + (float2)(0.0f, offsets[i])) * weights[i];
        sum += read_imagef(src, s, c - (float2)(0.0f, offsets[i])) * weights[i];
    }
    write_imagef(dst, (int2)(x, y), sum);
}

// BT.601 limited range: Y in [16, 235], U and V around 128, one UV pair per 2 × 2 pixels.
kernel void nv12_to_rgba(read_only image2d_t luma, read_only image2d_t chroma,
                         write_only image2d_t rgba) {
    int x = get_global_id(0), y = get_global_id(1);
    float yv = read_imagef(luma, (int2)(x, y)).x - 16.0f / 255.0f;
    float2 uv = read_imagef(chroma, (int2)(x / 2, y / 2)).xy - (float2)(0.5f, 0.5f);
    float r = 1.164f * yv + 1.596f * uv.y;
    float g = 1.164f * yv - 0.392f * uv.x - 0.813f * uv.y;
    float b = 1.164f * yv + 2.017f * uv.x;
    write_imagef(rgba, (int2)(x, y), (float4)(r, g, b, 1.0f));
}

kernel void gradient(read_only image3d_t vol, sampler_t s, global float4 *out) {
    int x = get_global_id(0), y = get_global_id(1), z = get_global_id(2);
    float4 p = (float4)(x, y, z, 0.0f);
    float gx = read_imagef(vol, s, p + (float4)(1, 0, 0, 0)).x - read_imagef(vol, s, p - (float4)(1, 0, 0, 0)).x;
    float gy = read_imagef(vol, s, p + (float4)(0, 1, 0, 0)).x - read_imagef(vol, s, p - (float4)(0, 1, 0, 0)).x;
    float gz = read_imagef(vol, s, p + (float4)(0, 0, 1, 0)).x - read_imagef(vol, s, p - (float4)(0, 0, 1, 0)).x;
    size_t i = ((size_t)z * get_global_size(1) + y) * get_global_size(0) + x;
    out[i] = (float4)(gx, gy, gz, 0.0f) * 0.5f;
}
"#;

/// The entry points this comparison needs beyond `cl::Api`.
struct ImageApi {
    _lib: Library,
    create_image: f::clCreateImage_t,
    create_buffer: f::clCreateBuffer_t,
    create_sampler: f::clCreateSampler_t,
    release_mem: f::clReleaseMemObject_t,
    release_sampler: f::clReleaseSampler_t,
    read_image: f::clEnqueueReadImage_t,
    read_buffer: f::clEnqueueReadBuffer_t,
    set_arg: f::clSetKernelArg_t,
    nd_range: f::clEnqueueNDRangeKernel_t,
    timer: EventTimer,
}

impl ImageApi {
    fn load() -> Result<ImageApi, String> {
        // SAFETY: the system OpenCL loader, as `cl::Api::load` opens it.
        let lib = unsafe { Library::new("libOpenCL.so.1") }.map_err(|e| e.to_string())?;
        macro_rules! sym {
            ($name:literal) => {{
                // SAFETY: the symbol has the OpenCL signature of its name.
                let s = unsafe { lib.get(concat!($name, "\0").as_bytes()) }
                    .map_err(|e| format!("{}: {e}", $name))?;
                Some(*s)
            }};
        }
        Ok(ImageApi {
            create_image: sym!("clCreateImage"),
            create_buffer: sym!("clCreateBuffer"),
            create_sampler: sym!("clCreateSampler"),
            release_mem: sym!("clReleaseMemObject"),
            release_sampler: sym!("clReleaseSampler"),
            read_image: sym!("clEnqueueReadImage"),
            read_buffer: sym!("clEnqueueReadBuffer"),
            set_arg: sym!("clSetKernelArg"),
            nd_range: sym!("clEnqueueNDRangeKernel"),
            timer: EventTimer::load(&lib)?,
            _lib: lib,
        })
    }

    /// A read-write image of `order`/`ty`, `dims` (depth 0 for 2D), from `data` when given.
    fn image(
        &self,
        context: cl_context,
        order: cl_channel_order,
        ty: cl_channel_type,
        dims: [usize; 3],
        data: Option<&[u8]>,
    ) -> Result<cl_mem, String> {
        let format = cl_image_format {
            image_channel_order: order,
            image_channel_data_type: ty,
        };
        let desc = cl_image_desc {
            image_type: if dims[2] > 0 {
                CL_MEM_OBJECT_IMAGE3D
            } else {
                CL_MEM_OBJECT_IMAGE2D
            },
            image_width: dims[0],
            image_height: dims[1],
            image_depth: dims[2],
            image_array_size: 0,
            image_row_pitch: 0,
            image_slice_pitch: 0,
            num_mip_levels: 0,
            num_samples: 0,
            buffer: ptr::null_mut(),
        };
        let flags = CL_MEM_READ_WRITE
            | if data.is_some() {
                CL_MEM_COPY_HOST_PTR
            } else {
                0
            };
        let mut err = 0;
        // SAFETY: valid context; `data` covers the image when given (the callers size it).
        let m = unsafe {
            self.create_image.expect("loaded")(
                context,
                flags,
                &format,
                &desc,
                data.map_or(ptr::null_mut(), |d| d.as_ptr() as *mut c_void),
                &mut err,
            )
        };
        if err != CL_SUCCESS {
            return Err(format!("clCreateImage: error {err}"));
        }
        Ok(m)
    }

    fn set<T>(&self, k: cl_kernel, i: u32, v: &T) -> Result<(), String> {
        // SAFETY: `v` points at a value of the argument's size.
        let st = unsafe {
            self.set_arg.expect("loaded")(k, i, std::mem::size_of::<T>(), (v as *const T).cast())
        };
        if st != CL_SUCCESS {
            return Err(format!("clSetKernelArg({i}): error {st}"));
        }
        Ok(())
    }

    fn launch(
        &self,
        queue: cl_command_queue,
        k: cl_kernel,
        global: &[usize],
        what: &str,
    ) -> Result<f64, String> {
        let mut e = ptr::null_mut();
        // SAFETY: valid queue and kernel with every argument set; `global` outlives the call.
        let st = unsafe {
            self.nd_range.expect("loaded")(
                queue,
                k,
                global.len() as cl_uint,
                ptr::null(),
                global.as_ptr(),
                ptr::null(),
                0,
                ptr::null(),
                &mut e,
            )
        };
        self.timer.elapsed_ms(e, st, what)
    }

    fn read_image(
        &self,
        queue: cl_command_queue,
        m: cl_mem,
        dims: [usize; 3],
        bytes: usize,
    ) -> Result<Vec<u8>, String> {
        let mut out = vec![0u8; bytes];
        let origin = [0usize; 3];
        let region = [dims[0], dims[1], dims[2].max(1)];
        // SAFETY: blocking read of the whole image into `out`, tightly packed.
        let st = unsafe {
            self.read_image.expect("loaded")(
                queue,
                m,
                CL_TRUE,
                origin.as_ptr(),
                region.as_ptr(),
                0,
                0,
                out.as_mut_ptr().cast(),
                0,
                ptr::null(),
                ptr::null_mut(),
            )
        };
        if st != CL_SUCCESS {
            return Err(format!("clEnqueueReadImage: error {st}"));
        }
        Ok(out)
    }
}

const W: usize = 1920;
const H: usize = 1088;
const V: usize = 128;

fn pattern(n: usize, seed: u32) -> Vec<u8> {
    let mut s = seed.wrapping_mul(2_654_435_761) | 1;
    (0..n)
        .map(|_| {
            s ^= s << 13;
            s ^= s >> 17;
            s ^= s << 5;
            s as u8
        })
        .collect()
}

/// One kernel's median time (ms) and output, or why it could not run.
type Outcome = Result<(f64, Vec<u8>), String>;

/// Times `launch` (which returns its kernel time in ms) `reps` times after one untimed run
/// (first launches compile lazily on some platforms), then reads the output with `read`.
fn timed(
    reps: usize,
    mut launch: impl FnMut() -> Result<f64, String>,
    read: impl FnOnce() -> Result<Vec<u8>, String>,
) -> Outcome {
    launch()?;
    let mut t = Vec::new();
    for _ in 0..reps.max(1) {
        t.push(launch()?);
    }
    Ok((median(&t).unwrap_or(f64::NAN), read()?))
}

fn measure(ctx: &Context, api: &ImageApi, reps: usize) -> Result<[Outcome; 3], String> {
    let (context, queue) = ctx.raw_handles();
    let (program, _) = ctx.build(&ProgramCode::Source(SOURCE.into()), "")?;
    let blur_h = ctx.kernel(&program, "blur_h")?;
    let blur_v = ctx.kernel(&program, "blur_v")?;
    let nv12 = ctx.kernel(&program, "nv12_to_rgba")?;
    let gradient = ctx.kernel(&program, "gradient")?;
    let mut err = 0;
    // SAFETY: valid context; the samplers are released at the end.
    let (linear, nearest) = unsafe {
        let linear = api.create_sampler.expect("loaded")(
            context,
            CL_FALSE,
            CL_ADDRESS_CLAMP_TO_EDGE,
            CL_FILTER_LINEAR,
            &mut err,
        );
        let nearest = api.create_sampler.expect("loaded")(
            context,
            CL_FALSE,
            CL_ADDRESS_CLAMP_TO_EDGE,
            CL_FILTER_NEAREST,
            &mut err,
        );
        (linear, nearest)
    };
    if err != CL_SUCCESS {
        return Err(format!("clCreateSampler: error {err}"));
    }
    let mut made = Vec::new();
    let mut image = |order, ty, dims, data: Option<&[u8]>| -> Result<cl_mem, String> {
        let m = api.image(context, order, ty, dims, data)?;
        made.push(m);
        Ok(m)
    };
    let blur = (|| -> Outcome {
        let photo = pattern(W * H * 4, 1);
        let src = image(CL_RGBA, CL_UNORM_INT8, [W, H, 0], Some(&photo))?;
        let tmp = image(CL_RGBA, CL_UNORM_INT8, [W, H, 0], None)?;
        let dst = image(CL_RGBA, CL_UNORM_INT8, [W, H, 0], None)?;
        let (h, v) = (blur_h.raw_handle(), blur_v.raw_handle());
        api.set(h, 0, &src)?;
        api.set(h, 1, &tmp)?;
        api.set(h, 2, &linear)?;
        api.set(v, 0, &tmp)?;
        api.set(v, 1, &dst)?;
        api.set(v, 2, &linear)?;
        timed(
            reps,
            || {
                Ok(api.launch(queue, h, &[W, H], "blur_h")?
                    + api.launch(queue, v, &[W, H], "blur_v")?)
            },
            || api.read_image(queue, dst, [W, H, 0], W * H * 4),
        )
    })();
    let convert = (|| -> Outcome {
        let luma = image(CL_R, CL_UNORM_INT8, [W, H, 0], Some(&pattern(W * H, 2)))?;
        let chroma_data = pattern(W / 2 * H / 2 * 2, 3);
        let chroma = image(CL_RG, CL_UNORM_INT8, [W / 2, H / 2, 0], Some(&chroma_data))
            .map_err(|e| format!("{e} (a CL_RG UNORM_INT8 plane)"))?;
        let frame = image(CL_RGBA, CL_UNORM_INT8, [W, H, 0], None)?;
        let n = nv12.raw_handle();
        api.set(n, 0, &luma)?;
        api.set(n, 1, &chroma)?;
        api.set(n, 2, &frame)?;
        timed(
            reps,
            || api.launch(queue, n, &[W, H], "nv12_to_rgba"),
            || api.read_image(queue, frame, [W, H, 0], W * H * 4),
        )
    })();
    let grad_bytes = V * V * V * 16;
    // SAFETY: valid context; released at the end.
    let grad = unsafe {
        api.create_buffer.expect("loaded")(
            context,
            CL_MEM_READ_WRITE,
            grad_bytes,
            ptr::null_mut(),
            &mut err,
        )
    };
    let gradient_outcome = (|| -> Outcome {
        if err != CL_SUCCESS {
            return Err(format!("clCreateBuffer: error {err}"));
        }
        let volume: Vec<u8> = (0..V * V * V)
            .flat_map(|i| {
                let (x, y, z) = (i % V, i / V % V, i / (V * V));
                (((x * x + 2 * y * y + 3 * z) % 1000) as f32 / 7.0).to_le_bytes()
            })
            .collect();
        let vol = image(CL_R, CL_FLOAT, [V, V, V], Some(&volume))?;
        let g = gradient.raw_handle();
        api.set(g, 0, &vol)?;
        api.set(g, 1, &nearest)?;
        api.set(g, 2, &grad)?;
        timed(
            reps,
            || api.launch(queue, g, &[V, V, V], "gradient"),
            || {
                let mut out = vec![0u8; grad_bytes];
                // SAFETY: blocking read of the whole buffer into `out`.
                let st = unsafe {
                    api.read_buffer.expect("loaded")(
                        queue,
                        grad,
                        CL_TRUE,
                        0,
                        grad_bytes,
                        out.as_mut_ptr().cast(),
                        0,
                        ptr::null(),
                        ptr::null_mut(),
                    )
                };
                if st != CL_SUCCESS {
                    return Err(format!("clEnqueueReadBuffer: error {st}"));
                }
                Ok(out)
            },
        )
    })();
    // SAFETY: every object was created above and is released once.
    unsafe {
        for m in made.into_iter().chain(std::iter::once(grad)) {
            if !m.is_null() {
                api.release_mem.expect("loaded")(m);
            }
        }
        api.release_sampler.expect("loaded")(linear);
        api.release_sampler.expect("loaded")(nearest);
    }
    Ok([blur, convert, gradient_outcome])
}

/// Largest difference between two outputs: bytes (UNORM_INT8 images) or f32s (gradients).
fn max_difference(a: &[u8], b: &[u8], floats: bool) -> f64 {
    if a.len() != b.len() {
        return f64::INFINITY;
    }
    if floats {
        a.chunks_exact(4)
            .zip(b.chunks_exact(4))
            .map(|(x, y)| {
                let x = f32::from_le_bytes(x.try_into().unwrap());
                let y = f32::from_le_bytes(y.try_into().unwrap());
                f64::from((x - y).abs())
            })
            .fold(0.0, f64::max)
    } else {
        a.iter()
            .zip(b)
            .map(|(&x, &y)| f64::from((i16::from(x) - i16::from(y)).unsigned_abs()))
            .fold(0.0, f64::max)
    }
}

/// Runs the image kernels on every platform and prints the table with ratios to the first.
pub fn run(platforms: &[(&str, &Context)], reps: usize) {
    let api = match ImageApi::load() {
        Ok(a) => a,
        Err(e) => {
            println!("image comparison unavailable: {e}");
            return;
        }
    };
    let names = [
        "gaussian blur 1920x1088 RGBA8 (2 passes, linear)",
        "NV12 -> RGBA 1920x1088",
        "3D gradient 128^3 R float",
    ];
    println!(
        "\nImage kernels, median of {reps} (profiling events, ms; ratio to the first platform)"
    );
    let mut first: Vec<Option<(f64, Vec<u8>)>> = vec![None, None, None];
    for (label, ctx) in platforms {
        let outcomes = match measure(ctx, &api, reps) {
            Ok(o) => o,
            Err(e) => {
                println!("{label:<10} unsupported or failed: {e}");
                continue;
            }
        };
        for (i, (name, outcome)) in names.iter().zip(outcomes).enumerate() {
            match outcome {
                Ok((ms, out)) => {
                    let (ratio, diff) = match &first[i] {
                        Some((f_ms, f_out)) => (
                            format!("{:.2}", ms / f_ms),
                            format!("max diff {}", max_difference(&out, f_out, i == 2)),
                        ),
                        None => ("1.00".into(), String::new()),
                    };
                    println!("{label:<10} {name:<50} {ms:>9.3} {ratio:>6} {diff}");
                    if first[i].is_none() {
                        first[i] = Some((ms, out));
                    }
                }
                Err(e) => println!("{label:<10} {name:<50} unsupported: {e}"),
            }
        }
    }
}
