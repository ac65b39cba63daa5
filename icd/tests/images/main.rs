//! Images and samplers on the host through the loader (images are on by default; the harness
//! also sets `FERROCL_IMAGES=on` before the first CL call). `objects.rs`: the device's image
//! queries, supported formats, every image type created with each host-pointer flag with
//! write/read round trips and pitches, the info queries, images over buffers, samplers.
//! `commands.rs`: copies (with the overlap and format errors), fills checked against texels
//! worked out by hand from the SPIR-V environment spec's conversion rules, zero-copy maps,
//! image↔buffer copies. `errors.rs`: bad input → the spec's error. This file holds the helpers
//! they share beyond `common/images.rs`. Kernels using images: `image_kernels.rs`.

#[path = "../common/mod.rs"]
mod common;
#[path = "../common/images.rs"]
mod image_helpers;

mod commands;
mod errors;
mod objects;

use std::ffi::c_void;
use std::ptr::{null, null_mut};

use common::*;
use image_helpers::*;
use opencl_sys::*;

fn pattern(len: usize, seed: u8) -> Vec<u8> {
    (0..len)
        .map(|i| (i as u8).wrapping_mul(31).wrapping_add(seed))
        .collect()
}

const ALL_TYPES: [cl_mem_object_type; 6] = [
    CL_MEM_OBJECT_IMAGE1D,
    CL_MEM_OBJECT_IMAGE1D_BUFFER,
    CL_MEM_OBJECT_IMAGE1D_ARRAY,
    CL_MEM_OBJECT_IMAGE2D,
    CL_MEM_OBJECT_IMAGE2D_ARRAY,
    CL_MEM_OBJECT_IMAGE3D,
];
