//! Mipmapped images (`cl_khr_mipmap_image`, `cl_khr_mipmap_image_writes`) through the loader
//! with `FERROCL_IMAGES=on`, against a host model written from the specs: the API spec's level
//! geometry (each level half the previous one, rounded down, at least 1, levels packed one
//! after another) and its level-in-origin rule for every image command; the sampler's mip
//! properties; in kernels, reads at an explicit lod and from gradients with the nearest and
//! linear mip filters and the sampler's lod range (the level of detail as OpenGL 4.6 §8.14
//! computes it, the texel filtering of the SPIR-V environment spec's chapter 7 on the chosen
//! level), writes to a level, sampler-less reads of a level and the per-level size query
//! (hand-written SPIR-V), `get_image_num_mip_levels`; and bad input → the spec's errors. By area:
//! `host.rs` (levels and image commands on the host), `sampling.rs` (sampled reads in kernels),
//! `writes.rs` (writes, kernel queries, samplers); this file holds the entry points, the host
//! model and the helpers they share.

#[path = "../common/mod.rs"]
mod common;
#[path = "../common/images.rs"]
mod image_helpers;

mod host;
mod sampling;
mod writes;

use std::ptr::{null, null_mut};

use common::*;
use image_helpers::*;
use opencl3::kernel::Kernel;
use opencl3::memory::Buffer;
use opencl3::program::Program;
use opencl_sys::*;

/// The context with images on (set before the driver reads its settings); None when the
/// platform under test is another ICD (Ferrocl must report the extension).
fn env() -> Option<Env> {
    let env = image_helpers::env();
    if env.other_icd || !env.extension_or_skip("cl_khr_mipmap_image") {
        return None;
    }
    Some(env)
}

// ---- The host model, from the API spec ----

/// An image's kind and level-0 size: width, height (1 for 1D kinds), depth (1 unless 3D),
/// layers (1 unless an array), and its levels.
#[derive(Clone, Copy, Debug)]
struct Shape {
    ty: cl_mem_object_type,
    w: usize,
    h: usize,
    d: usize,
    layers: usize,
    levels: usize,
}

impl Shape {
    fn new(ty: cl_mem_object_type, size: [usize; 4], levels: usize) -> Shape {
        Shape {
            ty,
            w: size[0],
            h: size[1].max(1),
            d: size[2].max(1),
            layers: size[3].max(1),
            levels,
        }
    }

    /// "Each successively smaller mipmap level is half the size of the previous level,
    /// rounded down" — and at least 1, or the last levels would be empty.
    fn level_size(&self, l: usize) -> [usize; 3] {
        let half = |v: usize| (v >> l).max(1);
        match self.ty {
            CL_MEM_OBJECT_IMAGE1D | CL_MEM_OBJECT_IMAGE1D_ARRAY => [half(self.w), 1, 1],
            CL_MEM_OBJECT_IMAGE3D => [half(self.w), half(self.h), half(self.d)],
            _ => [half(self.w), half(self.h), 1],
        }
    }

    /// The region of a whole level in command coordinates (pixels, rows or layers, slices or
    /// layers).
    fn level_region(&self, l: usize) -> [usize; 3] {
        let [w, h, d] = self.level_size(l);
        match self.ty {
            CL_MEM_OBJECT_IMAGE1D_ARRAY => [w, self.layers, 1],
            CL_MEM_OBJECT_IMAGE2D_ARRAY => [w, h, self.layers],
            _ => [w, h, d],
        }
    }

    fn level_texels(&self, l: usize) -> usize {
        self.level_region(l).iter().product()
    }

    /// A command origin naming level `l`: the level goes in the component after the image's
    /// coordinates (origin[1] for 1D, [2] for 1D arrays and 2D, [3] for 2D arrays and 3D).
    fn origin(&self, l: usize, at: [usize; 3]) -> [usize; 4] {
        let mut o = [at[0], at[1], at[2], 0];
        let k = match self.ty {
            CL_MEM_OBJECT_IMAGE1D => 1,
            CL_MEM_OBJECT_IMAGE1D_ARRAY | CL_MEM_OBJECT_IMAGE2D => 2,
            _ => 3,
        };
        o[k] = l;
        o
    }

    fn desc(&self) -> cl_image_desc {
        let (h, d, a) = match self.ty {
            CL_MEM_OBJECT_IMAGE1D => (0, 0, 0),
            CL_MEM_OBJECT_IMAGE1D_ARRAY => (0, 0, self.layers),
            CL_MEM_OBJECT_IMAGE2D => (self.h, 0, 0),
            CL_MEM_OBJECT_IMAGE2D_ARRAY => (self.h, 0, self.layers),
            _ => (self.h, self.d, 0),
        };
        cl_image_desc {
            image_type: self.ty,
            image_width: self.w,
            image_height: h,
            image_depth: d,
            image_array_size: a,
            image_row_pitch: 0,
            image_slice_pitch: 0,
            num_mip_levels: self.levels as cl_uint,
            num_samples: 0,
            buffer: null_mut(),
        }
    }
}

/// The image types that have mip levels, each with a size and level count.
fn shapes() -> Vec<Shape> {
    vec![
        Shape::new(CL_MEM_OBJECT_IMAGE1D, [19, 0, 0, 0], 5),
        Shape::new(CL_MEM_OBJECT_IMAGE1D_ARRAY, [12, 0, 0, 3], 4),
        Shape::new(CL_MEM_OBJECT_IMAGE2D, [13, 6, 0, 0], 4),
        Shape::new(CL_MEM_OBJECT_IMAGE2D_ARRAY, [8, 5, 0, 2], 4),
        Shape::new(CL_MEM_OBJECT_IMAGE3D, [6, 4, 9, 0], 4),
    ]
}

const RGBA_FLOAT: cl_image_format = cl_image_format {
    image_channel_order: CL_RGBA,
    image_channel_data_type: CL_FLOAT,
};
const TEXEL: usize = 16;

fn try_image(
    env: &Env,
    flags: cl_mem_flags,
    format: &cl_image_format,
    shape: &Shape,
) -> Result<cl_mem, cl_int> {
    create(env, flags, format, &shape.desc(), null_mut())
}

fn image(env: &Env, format: &cl_image_format, shape: &Shape) -> cl_mem {
    try_image(env, CL_MEM_READ_WRITE, format, shape)
        .unwrap_or_else(|e| panic!("clCreateImage({shape:?}): {e}"))
}

fn write_level(
    env: &Env,
    m: cl_mem,
    origin: [usize; 4],
    region: [usize; 3],
    data: &[u8],
) -> cl_int {
    // SAFETY: blocking write of `region` from `data`, tightly packed (the callers size it);
    // `origin` has four values.
    unsafe {
        clEnqueueWriteImage(
            env.queue.get(),
            m,
            CL_TRUE,
            origin.as_ptr(),
            region.as_ptr(),
            0,
            0,
            data.as_ptr().cast(),
            0,
            null(),
            null_mut(),
        )
    }
}

fn read_level(
    env: &Env,
    m: cl_mem,
    origin: [usize; 4],
    region: [usize; 3],
    bytes: usize,
) -> Result<Vec<u8>, cl_int> {
    let mut out = vec![0u8; bytes];
    // SAFETY: blocking read of `region` into `out`, tightly packed (the callers size it).
    let r = unsafe {
        clEnqueueReadImage(
            env.queue.get(),
            m,
            CL_TRUE,
            origin.as_ptr(),
            region.as_ptr(),
            0,
            0,
            out.as_mut_ptr().cast(),
            0,
            null(),
            null_mut(),
        )
    };
    if r == CL_SUCCESS {
        Ok(out)
    } else {
        Err(r)
    }
}

fn floats(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|f| f.to_le_bytes()).collect()
}

fn to_texels(b: &[u8]) -> Vec<[f32; 4]> {
    b.chunks(16)
        .map(|c| {
            let f = |i: usize| f32::from_le_bytes(c[4 * i..4 * i + 4].try_into().unwrap());
            [f(0), f(1), f(2), f(3)]
        })
        .collect()
}

/// Distinct texels for each level: values in [0, 1) from a hash of (level, index).
fn level_data(shape: &Shape, seed: u32) -> Vec<Vec<[f32; 4]>> {
    let mut rng = Rng::new(u64::from(seed) * 7919 + 1);
    (0..shape.levels)
        .map(|l| {
            (0..shape.level_texels(l))
                .map(|_| [0; 4].map(|_| (rng.next_u32() >> 8) as f32 / (1u32 << 24) as f32))
                .collect()
        })
        .collect()
}

fn upload(env: &Env, m: cl_mem, shape: &Shape, data: &[Vec<[f32; 4]>]) {
    for (l, texels) in data.iter().enumerate() {
        let bytes = floats(&texels.concat());
        let r = write_level(
            env,
            m,
            shape.origin(l, [0; 3]),
            shape.level_region(l),
            &bytes,
        );
        assert_eq!(r, CL_SUCCESS, "write level {l} of {shape:?}");
    }
}

/// Every test above again with `FERROCL_SPECIALIZE=off` in a child process: level selection
/// and the sampler's mip parameters go through the run-time paths there.
#[test]
fn the_same_tests_pass_without_specialisation() {
    const CHILD: &str = "FERROCL_IMAGE_MIPMAPS_CHILD";
    if std::env::var_os(CHILD).is_some() || env().is_none() {
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
        out.status.success() && stdout.contains("9 passed"),
        "without specialisation:\n{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
}
