//! Mipmapped images (`cl_khr_mipmap_image`, `cl_khr_mipmap_image_writes`) through the loader
//! with `FERROCL_IMAGES=on`, against a host model written from the specs: the API spec's level
//! geometry (each level half the previous one, rounded down, at least 1, levels packed one
//! after another) and its level-in-origin rule for every image command; the sampler's mip
//! properties; in kernels, reads at an explicit lod and from gradients with the nearest and
//! linear mip filters and the sampler's lod range (the level of detail as OpenGL 4.6 §8.14
//! computes it, the texel filtering of the SPIR-V environment spec's chapter 7 on the chosen
//! level), writes to a level, sampler-less reads of a level and the per-level size query
//! (hand-written SPIR-V), `get_image_num_mip_levels`; and bad input → the spec's errors.

mod common;

use std::ffi::c_void;
use std::ptr::{null, null_mut};
use std::sync::Once;

use common::*;
use opencl3::kernel::Kernel;
use opencl3::memory::Buffer;
use opencl3::program::Program;
use opencl_sys::*;

#[link(name = "OpenCL")]
extern "C" {
    fn clCreateImage(
        c: cl_context,
        f: cl_mem_flags,
        fmt: *const cl_image_format,
        desc: *const cl_image_desc,
        host: *mut c_void,
        err: *mut cl_int,
    ) -> cl_mem;
    fn clCreateBuffer(
        c: cl_context,
        f: cl_mem_flags,
        size: usize,
        host: *mut c_void,
        err: *mut cl_int,
    ) -> cl_mem;
    fn clReleaseMemObject(m: cl_mem) -> cl_int;
    fn clGetImageInfo(
        m: cl_mem,
        name: cl_image_info,
        size: usize,
        v: *mut c_void,
        ret: *mut usize,
    ) -> cl_int;
    fn clGetMemObjectInfo(
        m: cl_mem,
        name: cl_mem_info,
        size: usize,
        v: *mut c_void,
        ret: *mut usize,
    ) -> cl_int;
    fn clEnqueueReadImage(
        q: cl_command_queue,
        m: cl_mem,
        blocking: cl_bool,
        origin: *const usize,
        region: *const usize,
        row: usize,
        slice: usize,
        ptr: *mut c_void,
        n: cl_uint,
        wait: *const cl_event,
        ev: *mut cl_event,
    ) -> cl_int;
    fn clEnqueueWriteImage(
        q: cl_command_queue,
        m: cl_mem,
        blocking: cl_bool,
        origin: *const usize,
        region: *const usize,
        row: usize,
        slice: usize,
        ptr: *const c_void,
        n: cl_uint,
        wait: *const cl_event,
        ev: *mut cl_event,
    ) -> cl_int;
    fn clEnqueueCopyImage(
        q: cl_command_queue,
        src: cl_mem,
        dst: cl_mem,
        src_origin: *const usize,
        dst_origin: *const usize,
        region: *const usize,
        n: cl_uint,
        wait: *const cl_event,
        ev: *mut cl_event,
    ) -> cl_int;
    fn clEnqueueFillImage(
        q: cl_command_queue,
        m: cl_mem,
        color: *const c_void,
        origin: *const usize,
        region: *const usize,
        n: cl_uint,
        wait: *const cl_event,
        ev: *mut cl_event,
    ) -> cl_int;
    fn clEnqueueCopyImageToBuffer(
        q: cl_command_queue,
        src: cl_mem,
        dst: cl_mem,
        src_origin: *const usize,
        region: *const usize,
        dst_offset: usize,
        n: cl_uint,
        wait: *const cl_event,
        ev: *mut cl_event,
    ) -> cl_int;
    fn clEnqueueCopyBufferToImage(
        q: cl_command_queue,
        src: cl_mem,
        dst: cl_mem,
        src_offset: usize,
        dst_origin: *const usize,
        region: *const usize,
        n: cl_uint,
        wait: *const cl_event,
        ev: *mut cl_event,
    ) -> cl_int;
    fn clEnqueueReadBuffer(
        q: cl_command_queue,
        m: cl_mem,
        blocking: cl_bool,
        offset: usize,
        size: usize,
        ptr: *mut c_void,
        n: cl_uint,
        wait: *const cl_event,
        ev: *mut cl_event,
    ) -> cl_int;
    fn clEnqueueMapImage(
        q: cl_command_queue,
        m: cl_mem,
        blocking: cl_bool,
        flags: cl_map_flags,
        origin: *const usize,
        region: *const usize,
        row: *mut usize,
        slice: *mut usize,
        n: cl_uint,
        wait: *const cl_event,
        ev: *mut cl_event,
        err: *mut cl_int,
    ) -> *mut c_void;
    fn clEnqueueUnmapMemObject(
        q: cl_command_queue,
        m: cl_mem,
        ptr: *mut c_void,
        n: cl_uint,
        wait: *const cl_event,
        ev: *mut cl_event,
    ) -> cl_int;
    fn clFinish(q: cl_command_queue) -> cl_int;
    fn clCreateSampler(
        c: cl_context,
        normalized: cl_bool,
        addressing: cl_addressing_mode,
        filter: cl_filter_mode,
        err: *mut cl_int,
    ) -> cl_sampler;
    fn clCreateSamplerWithProperties(
        c: cl_context,
        props: *const cl_sampler_properties,
        err: *mut cl_int,
    ) -> cl_sampler;
    fn clGetSamplerInfo(
        s: cl_sampler,
        name: cl_sampler_info,
        size: usize,
        v: *mut c_void,
        ret: *mut usize,
    ) -> cl_int;
    fn clReleaseSampler(s: cl_sampler) -> cl_int;
}

/// The context with images on (set before the driver reads its settings); None when the
/// platform under test is another ICD or lacks the extension.
fn env() -> Option<Env> {
    static ON: Once = Once::new();
    ON.call_once(|| std::env::set_var("FERROCL_IMAGES", "on"));
    let env = Env::new();
    let extensions = env.device.extensions().unwrap_or_default();
    if env.other_icd || !extensions.split(' ').any(|e| e == "cl_khr_mipmap_image") {
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
    let desc = shape.desc();
    let mut err = 0;
    // SAFETY: valid context, format and descriptor; no host pointer.
    let m = unsafe {
        clCreateImage(
            env.context.get(),
            flags,
            format,
            &desc,
            null_mut(),
            &mut err,
        )
    };
    if err == CL_SUCCESS {
        Ok(m)
    } else {
        Err(err)
    }
}

fn image(env: &Env, format: &cl_image_format, shape: &Shape) -> cl_mem {
    try_image(env, CL_MEM_READ_WRITE, format, shape)
        .unwrap_or_else(|e| panic!("clCreateImage({shape:?}): {e}"))
}

fn release(m: cl_mem) {
    // SAFETY: a live handle.
    assert_eq!(unsafe { clReleaseMemObject(m) }, CL_SUCCESS);
}

fn buffer(env: &Env, size: usize) -> cl_mem {
    let mut err = 0;
    // SAFETY: valid context, no host pointer.
    let m = unsafe {
        clCreateBuffer(
            env.context.get(),
            CL_MEM_READ_WRITE,
            size,
            null_mut(),
            &mut err,
        )
    };
    assert_eq!(err, CL_SUCCESS);
    m
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

fn image_info<T: Copy + Default>(m: cl_mem, name: cl_image_info) -> T {
    let mut v = T::default();
    // SAFETY: `v` is a T, the size the query answers with.
    let r = unsafe {
        clGetImageInfo(
            m,
            name,
            std::mem::size_of::<T>(),
            (&mut v as *mut T).cast(),
            null_mut(),
        )
    };
    assert_eq!(r, CL_SUCCESS);
    v
}

#[test]
fn levels_are_created_sized_and_reported() {
    let Some(env) = env() else { return };
    let extensions = env.device.extensions().unwrap();
    assert!(extensions
        .split(' ')
        .any(|e| e == "cl_khr_mipmap_image_writes"));
    for shape in shapes() {
        let m = image(&env, &RGBA_FLOAT, &shape);
        assert_eq!(
            image_info::<cl_uint>(m, CL_IMAGE_NUM_MIP_LEVELS),
            shape.levels as cl_uint
        );
        assert_eq!(image_info::<usize>(m, CL_IMAGE_WIDTH), shape.w);
        assert_eq!(image_info::<usize>(m, CL_IMAGE_ROW_PITCH), shape.w * TEXEL);
        let mut size = 0usize;
        // SAFETY: `size` is a size_t.
        let r = unsafe {
            clGetMemObjectInfo(
                m,
                CL_MEM_SIZE,
                8,
                (&mut size as *mut usize).cast(),
                null_mut(),
            )
        };
        assert_eq!(r, CL_SUCCESS);
        let levels: usize = (0..shape.levels)
            .map(|l| shape.level_texels(l) * TEXEL)
            .sum();
        assert_eq!(size, levels, "CL_MEM_SIZE of {shape:?}: every level");
        release(m);
    }
    // Depth images too (OpenCL C reads and writes them with a lod).
    let depth = cl_image_format {
        image_channel_order: CL_DEPTH,
        image_channel_data_type: CL_FLOAT,
    };
    for ty in [CL_MEM_OBJECT_IMAGE2D, CL_MEM_OBJECT_IMAGE2D_ARRAY] {
        let m = image(&env, &depth, &Shape::new(ty, [16, 16, 0, 2], 5));
        assert_eq!(image_info::<cl_uint>(m, CL_IMAGE_NUM_MIP_LEVELS), 5);
        release(m);
    }
    // Bad input: more levels than halving the largest dimension gives, a 1D buffer image,
    // application memory.
    for (shape, want) in [
        (
            Shape::new(CL_MEM_OBJECT_IMAGE2D, [13, 6, 0, 0], 5),
            CL_INVALID_IMAGE_DESCRIPTOR,
        ),
        (
            Shape::new(CL_MEM_OBJECT_IMAGE3D, [2, 2, 16, 0], 6),
            CL_INVALID_IMAGE_DESCRIPTOR,
        ),
        (
            Shape::new(CL_MEM_OBJECT_IMAGE1D, [1, 0, 0, 0], 2),
            CL_INVALID_IMAGE_DESCRIPTOR,
        ),
    ] {
        assert_eq!(
            try_image(&env, 0, &RGBA_FLOAT, &shape).err(),
            Some(want),
            "{shape:?}"
        );
    }
    assert!(try_image(
        &env,
        0,
        &RGBA_FLOAT,
        &Shape::new(CL_MEM_OBJECT_IMAGE3D, [2, 2, 16, 0], 5)
    )
    .is_ok_and(|m| {
        release(m);
        true
    }));
    let buf = buffer(&env, 4096);
    let mut desc = Shape::new(CL_MEM_OBJECT_IMAGE1D_BUFFER, [64, 0, 0, 0], 2).desc();
    desc.buffer = buf;
    let mut err = 0;
    // SAFETY: valid context, format and descriptor.
    let m = unsafe {
        clCreateImage(
            env.context.get(),
            0,
            &RGBA_FLOAT,
            &desc,
            null_mut(),
            &mut err,
        )
    };
    assert!(m.is_null());
    assert_eq!(
        err, CL_INVALID_IMAGE_DESCRIPTOR,
        "a 1D buffer image has no levels"
    );
    let shape = Shape::new(CL_MEM_OBJECT_IMAGE2D, [4, 4, 0, 0], 2);
    let desc = shape.desc();
    let mut host = vec![0u8; 4 * 4 * TEXEL * 2];
    for flags in [CL_MEM_USE_HOST_PTR, CL_MEM_COPY_HOST_PTR] {
        // SAFETY: valid context, format and descriptor; `host` outlives the call.
        let m = unsafe {
            clCreateImage(
                env.context.get(),
                flags,
                &RGBA_FLOAT,
                &desc,
                host.as_mut_ptr().cast(),
                &mut err,
            )
        };
        assert!(m.is_null());
        assert_eq!(
            err, CL_INVALID_HOST_PTR,
            "application memory with levels ({flags:#x})"
        );
    }
    // One level (0 or 1) may have it.
    let mut one = desc;
    one.num_mip_levels = 1;
    // SAFETY: as above; the image copies 4×4 texels.
    let m = unsafe {
        clCreateImage(
            env.context.get(),
            CL_MEM_COPY_HOST_PTR,
            &RGBA_FLOAT,
            &one,
            host.as_mut_ptr().cast(),
            &mut err,
        )
    };
    assert_eq!(err, CL_SUCCESS);
    assert_eq!(image_info::<cl_uint>(m, CL_IMAGE_NUM_MIP_LEVELS), 1);
    release(m);
    release(buf);
}

/// Texel `i` (in command order: x fastest, then rows or layers, then slices or layers) of the
/// box `region` at `origin` inside a level of `size`.
fn box_indices(size: [usize; 3], origin: [usize; 3], region: [usize; 3]) -> Vec<usize> {
    let mut out = Vec::new();
    for z in 0..region[2] {
        for y in 0..region[1] {
            for x in 0..region[0] {
                out.push(((origin[2] + z) * size[1] + origin[1] + y) * size[0] + origin[0] + x);
            }
        }
    }
    out
}

#[test]
fn every_image_command_works_on_a_level() {
    let Some(env) = env() else { return };
    for (n, shape) in shapes().iter().enumerate() {
        let m = image(&env, &RGBA_FLOAT, shape);
        let mut model = level_data(shape, n as u32);
        upload(&env, m, shape, &model);
        let check = |model: &Vec<Vec<[f32; 4]>>, what: &str| {
            for (l, want) in model.iter().enumerate() {
                let got = read_level(
                    &env,
                    m,
                    shape.origin(l, [0; 3]),
                    shape.level_region(l),
                    want.len() * TEXEL,
                )
                .unwrap();
                assert_eq!(to_texels(&got), *want, "{what}: level {l} of {shape:?}");
            }
        };
        check(&model, "written");
        // A part of level 1: the box past its first texel in each coordinate the level has.
        let size = shape.level_region(1);
        let start = size.map(|s| usize::from(s > 1));
        let part = [0, 1, 2].map(|k| size[k] - start[k]);
        let got = read_level(
            &env,
            m,
            shape.origin(1, start),
            part,
            part.iter().product::<usize>() * TEXEL,
        )
        .unwrap();
        let want: Vec<[f32; 4]> = box_indices(size, start, part)
            .iter()
            .map(|&i| model[1][i])
            .collect();
        assert_eq!(to_texels(&got), want, "a box of level 1 of {shape:?}");
        // Fill a box of the last level but one.
        let l = shape.levels - 2;
        let color = [0.25f32, 0.5, 0.75, 1.0];
        let size = shape.level_region(l);
        // SAFETY: four floats of colour; four-value origin.
        let r = unsafe {
            clEnqueueFillImage(
                env.queue.get(),
                m,
                color.as_ptr().cast(),
                shape.origin(l, [0; 3]).as_ptr(),
                size.as_ptr(),
                0,
                null(),
                null_mut(),
            )
        };
        assert_eq!(r, CL_SUCCESS);
        model[l].iter_mut().for_each(|t| *t = color);
        // SAFETY: a live queue.
        assert_eq!(unsafe { clFinish(env.queue.get()) }, CL_SUCCESS);
        check(&model, "after a fill of one level");
        // Copy level 1 into level 0 of the same image (levels never overlap).
        let region = shape.level_region(1);
        // SAFETY: four-value origins, three-value region.
        let r = unsafe {
            clEnqueueCopyImage(
                env.queue.get(),
                m,
                m,
                shape.origin(1, [0; 3]).as_ptr(),
                shape.origin(0, [0; 3]).as_ptr(),
                region.as_ptr(),
                0,
                null(),
                null_mut(),
            )
        };
        assert_eq!(r, CL_SUCCESS);
        let size0 = shape.level_region(0);
        for (j, &i) in box_indices(size0, [0; 3], region).iter().enumerate() {
            model[0][i] = model[1][j];
        }
        // Level 1 → a buffer, and the buffer → the last level's first texels.
        let bytes = shape.level_texels(1) * TEXEL;
        let buf = buffer(&env, bytes + 16);
        // SAFETY: as above; the buffer holds the level after 16 bytes.
        let r = unsafe {
            clEnqueueCopyImageToBuffer(
                env.queue.get(),
                m,
                buf,
                shape.origin(1, [0; 3]).as_ptr(),
                region.as_ptr(),
                16,
                0,
                null(),
                null_mut(),
            )
        };
        assert_eq!(r, CL_SUCCESS);
        let mut raw = vec![0u8; bytes];
        // SAFETY: blocking read of `bytes` into `raw`.
        let r = unsafe {
            clEnqueueReadBuffer(
                env.queue.get(),
                buf,
                CL_TRUE,
                16,
                bytes,
                raw.as_mut_ptr().cast(),
                0,
                null(),
                null_mut(),
            )
        };
        assert_eq!(r, CL_SUCCESS);
        assert_eq!(
            to_texels(&raw),
            model[1],
            "level 1 into a buffer ({shape:?})"
        );
        let last = shape.levels - 1;
        let last_region = shape.level_region(last);
        // SAFETY: as above; the region's texels fit in the buffer.
        let r = unsafe {
            clEnqueueCopyBufferToImage(
                env.queue.get(),
                buf,
                m,
                16,
                shape.origin(last, [0; 3]).as_ptr(),
                last_region.as_ptr(),
                0,
                null(),
                null_mut(),
            )
        };
        assert_eq!(r, CL_SUCCESS);
        let n_last = shape.level_texels(last);
        model[last] = model[1][..n_last].to_vec();
        // SAFETY: a live queue.
        assert_eq!(unsafe { clFinish(env.queue.get()) }, CL_SUCCESS);
        check(&model, "after copies");
        // Map level 1: the level's texels at the level's pitches; a write through the map.
        let (mut row, mut slice, mut err) = (0usize, 0usize, 0);
        // SAFETY: four-value origin, three-value region, pitches written back.
        let p = unsafe {
            clEnqueueMapImage(
                env.queue.get(),
                m,
                CL_TRUE,
                CL_MAP_READ | CL_MAP_WRITE,
                shape.origin(1, [0; 3]).as_ptr(),
                region.as_ptr(),
                &mut row,
                &mut slice,
                0,
                null(),
                null_mut(),
                &mut err,
            )
        };
        assert_eq!(err, CL_SUCCESS);
        assert_eq!(
            row,
            shape.level_size(1)[0] * TEXEL,
            "row pitch of level 1 ({shape:?})"
        );
        let step = match shape.ty {
            CL_MEM_OBJECT_IMAGE1D_ARRAY => row,
            CL_MEM_OBJECT_IMAGE2D_ARRAY | CL_MEM_OBJECT_IMAGE3D => row * shape.level_size(1)[1],
            _ => 0,
        };
        assert_eq!(slice, step, "slice pitch of level 1 ({shape:?})");
        // SAFETY: the map covers level 1, tightly packed at these pitches.
        let mapped =
            unsafe { std::slice::from_raw_parts_mut(p.cast::<f32>(), shape.level_texels(1) * 4) };
        let flat: Vec<f32> = model[1].concat();
        assert_eq!(mapped, &flat[..], "mapped level 1 ({shape:?})");
        mapped[0] = 9.5;
        model[1][0][0] = 9.5;
        // SAFETY: the pointer the map returned.
        let r = unsafe { clEnqueueUnmapMemObject(env.queue.get(), m, p, 0, null(), null_mut()) };
        assert_eq!(r, CL_SUCCESS);
        // SAFETY: a live queue.
        assert_eq!(unsafe { clFinish(env.queue.get()) }, CL_SUCCESS);
        check(&model, "after a write through a map");

        // Bad input: a level the image does not have, a region past the level's size.
        let bad = shape.origin(shape.levels, [0; 3]);
        let one = [1usize, 1, 1];
        assert_eq!(
            read_level(&env, m, bad, one, TEXEL),
            Err(CL_INVALID_MIP_LEVEL),
            "{shape:?}"
        );
        assert_eq!(
            write_level(&env, m, bad, one, &[0; TEXEL]),
            CL_INVALID_MIP_LEVEL
        );
        let past = {
            let mut r = shape.level_region(1);
            r[0] += 1;
            r
        };
        assert_eq!(
            read_level(
                &env,
                m,
                shape.origin(1, [0; 3]),
                past,
                past.iter().product::<usize>() * TEXEL
            ),
            Err(CL_INVALID_VALUE)
        );
        // SAFETY: as for the calls above.
        unsafe {
            let q = env.queue.get();
            let good = shape.origin(0, [0; 3]);
            assert_eq!(
                clEnqueueFillImage(
                    q,
                    m,
                    color.as_ptr().cast(),
                    bad.as_ptr(),
                    one.as_ptr(),
                    0,
                    null(),
                    null_mut()
                ),
                CL_INVALID_MIP_LEVEL
            );
            assert_eq!(
                clEnqueueCopyImage(
                    q,
                    m,
                    m,
                    bad.as_ptr(),
                    good.as_ptr(),
                    one.as_ptr(),
                    0,
                    null(),
                    null_mut()
                ),
                CL_INVALID_MIP_LEVEL
            );
            assert_eq!(
                clEnqueueCopyImage(
                    q,
                    m,
                    m,
                    good.as_ptr(),
                    bad.as_ptr(),
                    one.as_ptr(),
                    0,
                    null(),
                    null_mut()
                ),
                CL_INVALID_MIP_LEVEL
            );
            assert_eq!(
                clEnqueueCopyImageToBuffer(
                    q,
                    m,
                    buf,
                    bad.as_ptr(),
                    one.as_ptr(),
                    0,
                    0,
                    null(),
                    null_mut()
                ),
                CL_INVALID_MIP_LEVEL
            );
            assert_eq!(
                clEnqueueCopyBufferToImage(
                    q,
                    buf,
                    m,
                    0,
                    bad.as_ptr(),
                    one.as_ptr(),
                    0,
                    null(),
                    null_mut()
                ),
                CL_INVALID_MIP_LEVEL
            );
            let p = clEnqueueMapImage(
                q,
                m,
                CL_TRUE,
                CL_MAP_READ,
                bad.as_ptr(),
                one.as_ptr(),
                &mut row,
                &mut slice,
                0,
                null(),
                null_mut(),
                &mut err,
            );
            assert!(p.is_null());
            assert_eq!(err, CL_INVALID_MIP_LEVEL);
        }
        check(&model, "after refused commands");
        release(buf);
        release(m);
    }
}

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

/// (index, weight) pairs of one coordinate: nearest or linear, clamp-to-edge or repeat, on
/// normalised coordinate `s` over `size` texels (env 7.2.1, 7.2.2).
fn taps(s: f32, size: usize, linear: bool, repeat: bool) -> Vec<(usize, f32)> {
    let n = size as f32;
    let u = if repeat { (s - s.floor()) * n } else { s * n };
    let wrap = |i: i64| -> usize {
        if repeat {
            (if i >= size as i64 {
                i - size as i64
            } else if i < 0 {
                i + size as i64
            } else {
                i
            }) as usize
        } else {
            i.clamp(0, size as i64 - 1) as usize
        }
    };
    if !linear {
        return vec![(wrap(u.floor() as i64), 1.0)];
    }
    let u = u - 0.5;
    let f = u.floor();
    let a = u - f;
    vec![(wrap(f as i64), 1.0 - a), (wrap(f as i64 + 1), a)]
}

/// A read of one level: `dims` its size, `layer` the array layer, `coord` normalised.
fn sample_level(
    texels: &[[f32; 4]],
    dims: [usize; 3],
    layer: usize,
    coord: &[f32],
    linear: bool,
    repeat: bool,
) -> [f32; 4] {
    let per: Vec<Vec<(usize, f32)>> = coord
        .iter()
        .zip(dims)
        .map(|(&s, n)| taps(s, n, linear, repeat))
        .collect();
    let mut sum = [0.0f32; 4];
    // Corners in the order of the kernel's sum (x varies fastest), each weighted by the
    // product of its per-dimension weights.
    let corners = per.iter().map(Vec::len).product::<usize>();
    for c in 0..corners {
        let mut idx = [0usize; 3];
        let mut w = 1.0f32;
        let mut rest = c;
        for (k, t) in per.iter().enumerate() {
            let (i, wk) = t[rest % t.len()];
            rest /= t.len();
            idx[k] = i;
            w *= wk;
        }
        let at = ((layer * dims[2] + idx[2]) * dims[1] + idx[1]) * dims[0] + idx[0];
        for k in 0..4 {
            sum[k] += texels[at][k] * w;
        }
    }
    sum
}

/// Spatial dimensions of an image type.
fn spatial(ty: cl_mem_object_type) -> usize {
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

fn program(env: &Env) -> Program {
    env.program_from_source(SAMPLE_SOURCE, "-cl-std=CL3.0")
}

fn kernel(program: &Program, name: &str) -> Kernel {
    check(cl(Kernel::create(program, name)), "clCreateKernel")
}

/// A sampler with normalised coordinates and the given modes and mip parameters (None: the
/// defaults, through clCreateSampler).
fn sampler(env: &Env, repeat: bool, linear: bool, mip: Option<(bool, f32, f32)>) -> cl_sampler {
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

fn release_sampler(s: cl_sampler) {
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
        let x = taps(p[0], w, false, false)[0].0;
        let y = taps(p[1], h, false, false)[0].0;
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

/// Runs write kernel `k(image, lod, input)` over level `lod` of `shape`.
fn write_with_lod<T>(env: &Env, k: &Kernel, m: cl_mem, shape: &Shape, lod: i32, input: &[T]) {
    let size = shape.level_region(lod.clamp(0, shape.levels as i32 - 1) as usize);
    let buf = env.buffer(input);
    arg(k, 0, &m);
    arg(k, 1, &lod);
    arg_buf(k, 2, &buf);
    let dims = match shape.ty {
        CL_MEM_OBJECT_IMAGE1D => 1,
        CL_MEM_OBJECT_IMAGE1D_ARRAY | CL_MEM_OBJECT_IMAGE2D => 2,
        _ => 3,
    };
    env.run(k, &size[..dims], None, None);
}

#[test]
fn writes_reach_the_level_they_name() {
    let Some(env) = env() else { return };
    let program = program(&env);
    for (n, shape) in shapes().iter().enumerate() {
        let name = match shape.ty {
            CL_MEM_OBJECT_IMAGE1D => "write_1d",
            CL_MEM_OBJECT_IMAGE1D_ARRAY => "write_1d_array",
            CL_MEM_OBJECT_IMAGE2D => "write_2d",
            CL_MEM_OBJECT_IMAGE2D_ARRAY => "write_2d_array",
            _ => "write_3d",
        };
        let k = kernel(&program, name);
        let m = image(&env, &RGBA_FLOAT, shape);
        let mut model = level_data(shape, 100 + n as u32);
        upload(&env, m, shape, &model);
        for l in [1, shape.levels - 1, 0] {
            let fresh = level_data(shape, 200 + (n * 10 + l) as u32).swap_remove(l);
            write_with_lod(&env, &k, m, shape, l as i32, &fresh);
            model[l] = fresh;
            for (j, want) in model.iter().enumerate() {
                let got = read_level(
                    &env,
                    m,
                    shape.origin(j, [0; 3]),
                    shape.level_region(j),
                    want.len() * TEXEL,
                )
                .unwrap();
                assert_eq!(
                    to_texels(&got),
                    *want,
                    "{shape:?}: level {j} after a kernel wrote level {l}"
                );
            }
        }
        // A level the image does not have (undefined): nothing is written, nothing breaks.
        let junk = vec![[7.0f32; 4]; shape.level_texels(0)];
        for bad in [shape.levels as i32, -1] {
            let buf = env.buffer(&junk);
            arg(&k, 0, &m);
            arg(&k, 1, &bad);
            arg_buf(&k, 2, &buf);
            let size = shape.level_region(0);
            let dims = spatial(shape.ty)
                + usize::from(matches!(
                    shape.ty,
                    CL_MEM_OBJECT_IMAGE1D_ARRAY | CL_MEM_OBJECT_IMAGE2D_ARRAY
                ));
            env.run(&k, &size[..dims], None, None);
        }
        for (j, want) in model.iter().enumerate() {
            let got = read_level(
                &env,
                m,
                shape.origin(j, [0; 3]),
                shape.level_region(j),
                want.len() * TEXEL,
            )
            .unwrap();
            assert_eq!(
                to_texels(&got),
                *want,
                "{shape:?}: level {j} after writes to levels it lacks"
            );
        }
        release(m);
    }
    // Integer and depth images.
    let shape = Shape::new(CL_MEM_OBJECT_IMAGE2D, [9, 4, 0, 0], 3);
    let format = cl_image_format {
        image_channel_order: CL_RGBA,
        image_channel_data_type: CL_UNSIGNED_INT16,
    };
    let m = image(&env, &format, &shape);
    let k = kernel(&program, "write_ui");
    let values: Vec<[u32; 4]> = (0..shape.level_texels(2))
        .map(|i| [i as u32, 70000, 3, 65535])
        .collect();
    write_with_lod(&env, &k, m, &shape, 2, &values);
    let got = read_level(
        &env,
        m,
        shape.origin(2, [0; 3]),
        shape.level_region(2),
        values.len() * 8,
    )
    .unwrap();
    let want: Vec<u8> = values
        .iter()
        .flat_map(|v| {
            v.map(|c| c.min(65535) as u16)
                .into_iter()
                .flat_map(u16::to_le_bytes)
        })
        .collect();
    assert_eq!(got, want, "uint16 level 2 (saturated)");
    release(m);
    let depth = cl_image_format {
        image_channel_order: CL_DEPTH,
        image_channel_data_type: CL_FLOAT,
    };
    let m = image(&env, &depth, &shape);
    let k = kernel(&program, "write_depth");
    let values: Vec<f32> = (0..shape.level_texels(1))
        .map(|i| i as f32 * 0.125)
        .collect();
    write_with_lod(&env, &k, m, &shape, 1, &values);
    let got = read_level(
        &env,
        m,
        shape.origin(1, [0; 3]),
        shape.level_region(1),
        values.len() * 4,
    )
    .unwrap();
    assert_eq!(got, floats(&values), "depth level 1");
    release(m);
}

#[test]
fn kernel_queries_answer_for_the_image_and_its_levels() {
    let Some(env) = env() else { return };
    let program = program(&env);
    let k = kernel(&program, "queries");
    let a = image(
        &env,
        &RGBA_FLOAT,
        &Shape::new(CL_MEM_OBJECT_IMAGE3D, [6, 4, 9, 0], 4),
    );
    let b = image(
        &env,
        &RGBA_FLOAT,
        &Shape::new(CL_MEM_OBJECT_IMAGE2D, [5, 5, 0, 0], 0),
    );
    let c = image(
        &env,
        &RGBA_FLOAT,
        &Shape::new(CL_MEM_OBJECT_IMAGE1D_ARRAY, [12, 0, 0, 3], 2),
    );
    let depth = cl_image_format {
        image_channel_order: CL_DEPTH,
        image_channel_data_type: CL_FLOAT,
    };
    let d = image(
        &env,
        &depth,
        &Shape::new(CL_MEM_OBJECT_IMAGE2D, [8, 8, 0, 0], 4),
    );
    let out = env.buffer(&[0i32; 8]);
    for (i, m) in [a, b, c, d].iter().enumerate() {
        arg(&k, i as cl_uint, m);
    }
    arg_buf(&k, 4, &out);
    env.run(&k, &[1], None, None);
    // An image without mipmaps has one level; sizes are level 0's.
    assert_eq!(env.read(&out, 8), [4, 1, 2, 4, 6, 4, 9, 3]);
    for m in [a, b, c, d] {
        release(m);
    }

    // Hand-written SPIR-V: a sampler-less read of a level (OpImageRead with Lod, which the
    // environment spec allows with cl_khr_mipmap_image; spirv-val's core rules do not, so
    // the module is only assembled) and each level's size (OpImageQuerySizeLod).
    let il = assemble(LEVEL_SPIRV);
    let p = check(
        cl(Program::create_from_il(&env.context, &il)),
        "clCreateProgramWithIL",
    );
    let c_options = std::ffi::CString::new("").unwrap();
    opencl3::program::build_program(p.get(), env.context.devices(), &c_options, None, null_mut())
        .unwrap_or_else(|e| {
            let log = p.get_build_log(env.device.id()).unwrap_or_default();
            panic!("clBuildProgram: {e}\n{log}")
        });
    let read = kernel(&p, "read_lod");
    let size = kernel(&p, "size_lod");
    let shape = Shape::new(CL_MEM_OBJECT_IMAGE2D, [13, 6, 0, 0], 4);
    let m = image(&env, &RGBA_FLOAT, &shape);
    let data = level_data(&shape, 300);
    upload(&env, m, &shape, &data);
    for l in 0..shape.levels as u32 + 1 {
        let [w, h, _] = shape.level_size((l as usize).min(shape.levels - 1));
        let out = env.buffer(&vec![[0.0f32; 4]; w * h]);
        arg(&read, 0, &m);
        arg(&read, 1, &l);
        arg_buf(&read, 2, &out);
        env.run(&read, &[w, h], None, None);
        // A level past the last (undefined) reads the last.
        assert_eq!(
            env.read(&out, w * h),
            data[(l as usize).min(shape.levels - 1)],
            "sampler-less read of level {l}"
        );
        let sizes = env.buffer(&[0u32; 2]);
        arg(&size, 0, &m);
        arg(&size, 1, &l);
        arg_buf(&size, 2, &sizes);
        env.run(&size, &[1], None, None);
        assert_eq!(
            env.read(&sizes, 2),
            [w as u32, h as u32],
            "size of level {l}"
        );
    }
    release(m);
}

const LEVEL_SPIRV: &str = r#"
               OpCapability Addresses
               OpCapability Kernel
               OpCapability Int64
               OpCapability ImageBasic
               OpCapability ImageMipmap
               OpMemoryModel Physical64 OpenCL
               OpEntryPoint Kernel %read_lod "read_lod" %gid %gsize
               OpEntryPoint Kernel %size_lod "size_lod"
               OpDecorate %gid BuiltIn GlobalInvocationId
               OpDecorate %gid Constant
               OpDecorate %gsize BuiltIn GlobalSize
               OpDecorate %gsize Constant
       %void = OpTypeVoid
       %uint = OpTypeInt 32 0
      %ulong = OpTypeInt 64 0
      %float = OpTypeFloat 32
     %v2uint = OpTypeVector %uint 2
    %v3ulong = OpTypeVector %ulong 3
    %v4float = OpTypeVector %float 4
        %img = OpTypeImage %void 2D 0 0 0 0 Unknown ReadOnly
  %ptr_in_v3 = OpTypePointer Input %v3ulong
  %ptr_g_v4f = OpTypePointer CrossWorkgroup %v4float
   %ptr_g_u = OpTypePointer CrossWorkgroup %uint
        %gid = OpVariable %ptr_in_v3 Input
      %gsize = OpVariable %ptr_in_v3 Input
    %ulong_1 = OpConstant %ulong 1
    %fn_read = OpTypeFunction %void %img %uint %ptr_g_v4f
    %fn_size = OpTypeFunction %void %img %uint %ptr_g_u
   %read_lod = OpFunction %void None %fn_read
          %i = OpFunctionParameter %img
        %lod = OpFunctionParameter %uint
        %out = OpFunctionParameter %ptr_g_v4f
          %e = OpLabel
         %g3 = OpLoad %v3ulong %gid
         %s3 = OpLoad %v3ulong %gsize
         %gx = OpCompositeExtract %ulong %g3 0
         %gy = OpCompositeExtract %ulong %g3 1
         %sx = OpCompositeExtract %ulong %s3 0
          %x = OpUConvert %uint %gx
          %y = OpUConvert %uint %gy
      %coord = OpCompositeConstruct %v2uint %x %y
      %texel = OpImageRead %v4float %i %coord Lod %lod
        %row = OpIMul %ulong %gy %sx
         %at = OpIAdd %ulong %row %gx
        %dst = OpInBoundsPtrAccessChain %ptr_g_v4f %out %at
               OpStore %dst %texel
               OpReturn
               OpFunctionEnd
   %size_lod = OpFunction %void None %fn_size
         %i2 = OpFunctionParameter %img
       %lod2 = OpFunctionParameter %uint
       %out2 = OpFunctionParameter %ptr_g_u
         %e2 = OpLabel
         %sz = OpImageQuerySizeLod %v2uint %i2 %lod2
          %w = OpCompositeExtract %uint %sz 0
          %h = OpCompositeExtract %uint %sz 1
               OpStore %out2 %w
         %p1 = OpInBoundsPtrAccessChain %ptr_g_u %out2 %ulong_1
               OpStore %p1 %h
               OpReturn
               OpFunctionEnd
"#;

fn assemble(text: &str) -> Vec<u8> {
    let dir = profile_dir().join("ferrocl-test-spirv");
    std::fs::create_dir_all(&dir).expect("create spirv dir");
    let src = dir.join(format!("mip-levels.{}.spvasm", std::process::id()));
    let spv = src.with_extension("spv");
    std::fs::write(&src, text).expect("write .spvasm");
    let out = std::process::Command::new("spirv-as")
        .args(["--target-env", "spv1.0"])
        .arg(&src)
        .arg("-o")
        .arg(&spv)
        .output()
        .expect("run spirv-as (spirv-tools)");
    assert!(
        out.status.success(),
        "spirv-as: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let bytes = std::fs::read(&spv).expect("read .spv");
    let _ = std::fs::remove_file(&src);
    let _ = std::fs::remove_file(&spv);
    bytes
}

#[test]
fn samplers_answer_their_mip_properties() {
    let Some(env) = env() else { return };
    let info = |s: cl_sampler, name: cl_sampler_info| -> (u32, usize) {
        let mut v = 0u32;
        let mut size = 0usize;
        // SAFETY: the mip properties are 4-byte values.
        let r = unsafe { clGetSamplerInfo(s, name, 4, (&mut v as *mut u32).cast(), &mut size) };
        assert_eq!(r, CL_SUCCESS);
        (v, size)
    };
    let plain = sampler(&env, false, false, None);
    assert_eq!(
        info(plain, CL_SAMPLER_MIP_FILTER_MODE_KHR as _),
        (CL_FILTER_NEAREST, 4)
    );
    assert_eq!(
        info(plain, CL_SAMPLER_LOD_MIN_KHR as _),
        (0.0f32.to_bits(), 4)
    );
    assert_eq!(
        info(plain, CL_SAMPLER_LOD_MAX_KHR as _),
        (f32::MAX.to_bits(), 4)
    );
    release_sampler(plain);
    let third = 1.0f32 / 3.0;
    let s = sampler(&env, true, true, Some((true, third, 7.25)));
    assert_eq!(
        info(s, CL_SAMPLER_MIP_FILTER_MODE_KHR as _).0,
        CL_FILTER_LINEAR
    );
    assert_eq!(info(s, CL_SAMPLER_LOD_MIN_KHR as _).0, third.to_bits());
    assert_eq!(info(s, CL_SAMPLER_LOD_MAX_KHR as _).0, 7.25f32.to_bits());
    release_sampler(s);
    // Bad values: an unknown mip filter, a NaN bound, a repeated property.
    for props in [
        [CL_SAMPLER_MIP_FILTER_MODE_KHR, 0x1234, 0, 0, 0],
        [CL_SAMPLER_LOD_MIN_KHR, f32::NAN.to_bits() as _, 0, 0, 0],
        [CL_SAMPLER_LOD_MAX_KHR, 0, CL_SAMPLER_LOD_MAX_KHR, 0, 0],
    ] {
        let mut err = 0;
        // SAFETY: valid context, zero-terminated list.
        let s =
            unsafe { clCreateSamplerWithProperties(env.context.get(), props.as_ptr(), &mut err) };
        assert!(s.is_null());
        assert_eq!(err, CL_INVALID_VALUE, "{props:?}");
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
