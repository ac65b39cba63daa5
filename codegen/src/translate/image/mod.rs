//! Image opcodes (DESIGN.md "Images"): reads, writes, sampling and queries, emitted inline
//! following the OpenCL SPIR-V environment spec, chapter 7. An image value is the address of
//! its image descriptor; a sampler is the address of its record, whose 32-bit pattern
//! ([`crate::environment::SamplerEncoding`]) holds its modes; a sampled image is the pair. Where descriptors and
//! records keep their fields, and what a specialised build knows of them, is the kernel
//! environment's (environment.rs).
//!
//! The format is known only at launch, so each access switches on the descriptor's channel
//! data type (the conversion of 7.4) and then on its channel order (where the stored channels
//! go, 7.7). Every work-item of a launch takes the same branches, so they predict perfectly.
//! Reads outside the image (undefined by the spec) read the nearest texel and writes outside
//! it are dropped: no coordinate can reach memory beyond the image.
//!
//! Mip levels (cl_khr_mipmap_image): an access that names a level (a `Lod` or `Grad` image
//! operand other than the constant 0 that OpenCL C's level-less reads carry) finds it in the
//! descriptor's level table; a specialised build for an image without levels, and every
//! level-less access, reads level 0's fields as before. Sampled reads choose levels as
//! OpenGL 4.6 §8.14 does (the OpenCL specs name the level of detail λ and the mip filters but
//! not the formula): λ from the lod or log2 of the larger gradient length in texels, clamped
//! to the sampler's lod range and the image's levels; the nearest mip filter takes level
//! `ceil(λ + 0.5) − 1`, the linear one blends levels `floor(λ)` and the next by `frac(λ)`.

use cranelift_codegen::ir::condcodes::{FloatCC, IntCC};
use cranelift_codegen::ir::{self, types, BlockArg, Endianness, InstBuilder, MemFlagsData, Value};
use cranelift_frontend::Switch;
use ferrocl_frontend::spirv::{Dim, Op, Word};
use ferrocl_frontend::{ImageOperands, Inst, Type};
use ferrocl_mathlib::{Binary, Precision, Unary};

use super::function::{err, Translator};
use super::values::Val;
use crate::entry_points::EntryPoint;
use crate::environment::{ImageField, MipLevelField, SamplerField, Table};
use crate::error::BuildError;
use crate::SamplerDescriptor;

mod descriptor;
mod read;
mod sample;
mod write;

/// SPIR-V `ImageChannelDataType` values (what the descriptor holds).
mod data_type {
    pub const SNORM_INT8: u32 = 0;
    pub const SNORM_INT16: u32 = 1;
    pub const UNORM_INT8: u32 = 2;
    pub const UNORM_INT16: u32 = 3;
    pub const UNORM_SHORT_565: u32 = 4;
    pub const UNORM_SHORT_555: u32 = 5;
    pub const UNORM_INT_101010: u32 = 6;
    pub const SIGNED_INT8: u32 = 7;
    pub const SIGNED_INT16: u32 = 8;
    pub const SIGNED_INT32: u32 = 9;
    pub const UNSIGNED_INT8: u32 = 10;
    pub const UNSIGNED_INT16: u32 = 11;
    pub const UNSIGNED_INT32: u32 = 12;
    pub const HALF_FLOAT: u32 = 13;
    pub const FLOAT: u32 = 14;
    pub const UNORM_INT_101010_2: u32 = 16;
}

/// SPIR-V `ImageChannelOrder` values.
mod order {
    pub const R: u32 = 0;
    pub const A: u32 = 1;
    pub const RG: u32 = 2;
    pub const RA: u32 = 3;
    pub const RGB: u32 = 4;
    pub const RGBA: u32 = 5;
    pub const BGRA: u32 = 6;
    pub const ARGB: u32 = 7;
    pub const INTENSITY: u32 = 8;
    pub const LUMINANCE: u32 = 9;
    pub const RX: u32 = 10;
    pub const RGX: u32 = 11;
    pub const RGBX: u32 = 12;
    pub const DEPTH: u32 = 13;
    pub const SRGB: u32 = 15;
    pub const SRGBX: u32 = 16;
    pub const SRGBA: u32 = 17;
    pub const SBGRA: u32 = 18;
    pub const ABGR: u32 = 19;
    /// Every order a descriptor can hold.
    pub const ALL: [u32; 19] = [
        R, A, RG, RA, RGB, RGBA, BGRA, ARGB, INTENSITY, LUMINANCE, RX, RGX, RGBX, DEPTH, SRGB,
        SRGBX, SRGBA, SBGRA, ABGR,
    ];
}

/// The RGBA components (0 = R … 3 = A) an order's stored channels hold, in memory order.
fn stored_components(o: u32) -> &'static [usize] {
    use order::*;
    match o {
        A => &[3],
        RG | RGX => &[0, 1],
        RA => &[0, 3],
        RGB | RGBX | SRGB | SRGBX => &[0, 1, 2],
        RGBA | SRGBA => &[0, 1, 2, 3],
        BGRA | SBGRA => &[2, 1, 0, 3],
        ARGB => &[3, 0, 1, 2],
        ABGR => &[3, 2, 1, 0],
        _ => &[0],
    }
}

/// The components a write stores, in memory order: the stored ones, and for `CL_sRGBx` also
/// alpha in its fourth byte (kept linear), as the Khronos CTS's write and fill references
/// store it; reads ignore that byte (x orders read alpha 1).
fn written_components(o: u32) -> &'static [usize] {
    match o {
        order::SRGBX => &[0, 1, 2, 3],
        _ => stored_components(o),
    }
}

fn is_srgb(o: u32) -> bool {
    matches!(o, order::SRGB | order::SRGBX | order::SRGBA | order::SBGRA)
}

/// Orders whose CL_ADDRESS_CLAMP border colour has alpha 1: those without an alpha channel,
/// the `x` orders included (as the Khronos CTS reads 5.3.1.1).
fn border_alpha_is_one(o: u32) -> bool {
    use order::*;
    matches!(
        o,
        R | RG | RGB | LUMINANCE | SRGB | RX | RGX | RGBX | SRGBX | DEPTH
    )
}

/// (shift, bits) of each channel of a packed type, R first in the most significant bits.
fn packed_fields(t: u32) -> &'static [(u32, u32)] {
    match t {
        data_type::UNORM_SHORT_565 => &[(11, 5), (5, 6), (0, 5)],
        data_type::UNORM_SHORT_555 => &[(10, 5), (5, 5), (0, 5)],
        data_type::UNORM_INT_101010 => &[(20, 10), (10, 10), (0, 10)],
        data_type::UNORM_INT_101010_2 => &[(22, 10), (12, 10), (2, 10), (0, 2)],
        _ => &[],
    }
}

/// Bytes of one stored channel (of the whole texel for packed types).
fn channel_bytes(t: u32) -> i64 {
    use data_type::*;
    match t {
        SNORM_INT8 | UNORM_INT8 | SIGNED_INT8 | UNSIGNED_INT8 => 1,
        SNORM_INT16 | UNORM_INT16 | SIGNED_INT16 | UNSIGNED_INT16 | HALF_FLOAT => 2,
        UNORM_SHORT_565 | UNORM_SHORT_555 => 2,
        _ => 4,
    }
}

const DATA_TYPES: [u32; 16] = [
    data_type::SNORM_INT8,
    data_type::SNORM_INT16,
    data_type::UNORM_INT8,
    data_type::UNORM_INT16,
    data_type::UNORM_SHORT_565,
    data_type::UNORM_SHORT_555,
    data_type::UNORM_INT_101010,
    data_type::SIGNED_INT8,
    data_type::SIGNED_INT16,
    data_type::SIGNED_INT32,
    data_type::UNSIGNED_INT8,
    data_type::UNSIGNED_INT16,
    data_type::UNSIGNED_INT32,
    data_type::HALF_FLOAT,
    data_type::FLOAT,
    data_type::UNORM_INT_101010_2,
];

/// What a read or write moves: floats (`read_imagef`, also halves) or 32-bit integers.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Float,
    Int,
}

impl Kind {
    fn ir(self) -> types::Type {
        match self {
            Kind::Float => types::F32,
            Kind::Int => types::I32,
        }
    }
}

/// The descriptor fields of one image (of one of its mip levels), loaded once per access.
#[derive(Clone, Copy)]
struct Desc {
    /// The descriptor's address.
    image: Value,
    /// Whether the image is known to have one level (a specialised build's image without
    /// mip levels): a level named by an access is then level 0.
    single_level: bool,
    data: Value,
    /// width, height, depth, array size (i64).
    size: [Value; 4],
    row_pitch: Value,
    slice_pitch: Value,
    element_size: Value,
    order: Value,
    data_type: Value,
}

/// The shape of an image type.
#[derive(Clone, Copy)]
struct Shape {
    dim: Dim,
    arrayed: bool,
}

impl Shape {
    /// Coordinate components before the layer.
    fn spatial(self) -> usize {
        match self.dim {
            Dim::Dim2D => 2,
            Dim::Dim3D => 3,
            _ => 1,
        }
    }
}

fn ro() -> MemFlagsData {
    MemFlagsData::trusted().with_readonly()
}

/// The mip level an access names (its image operands).
enum LevelOf {
    /// Level 0: no `Lod` operand, or the constant 0.
    Base,
    /// A `Lod` operand: an integer level (reads and writes without a sampler) or a float level
    /// of detail (sampled reads).
    Lod(Value),
    /// `Grad` operands: the coordinate's derivatives in x and y, one component per spatial
    /// dimension.
    Grad(Vec<Value>, Vec<Value>),
}

/// A sampler's record as values: its pattern (i32), and its lod range (f32), constants when
/// the record is known at build time.
struct SamplerVals {
    bits: Value,
    known: Option<SamplerDescriptor>,
    lod_min: Value,
    lod_max: Value,
}

impl Translator<'_, '_, '_> {
    pub(crate) fn image_instruction(&mut self, inst: Inst<'_>) -> Result<(), BuildError> {
        match inst.opcode() {
            Op::SampledImage => {
                let pair = inst.sampled_image()?;
                let image = self.scalar(pair.image)?;
                let sampler = self.scalar(pair.sampler)?;
                self.define(inst, Val::C(vec![Val::S(image), Val::S(sampler)]))
            }
            Op::ImageRead => self.image_read(inst),
            Op::ImageWrite => self.image_write(inst),
            Op::ImageSampleExplicitLod => self.image_sample(inst),
            Op::ImageQuerySizeLod | Op::ImageQuerySize => self.image_query_size(inst),
            Op::ImageQueryFormat | Op::ImageQueryOrder | Op::ImageQueryLevels => {
                let query = inst.image_query()?;
                self.image_shape(inst, query.image)?;
                let image = self.scalar(query.image)?;
                let d = self.load_desc(image);
                let v = match inst.opcode() {
                    Op::ImageQueryFormat => d.data_type,
                    Op::ImageQueryOrder => d.order,
                    _ => {
                        let n = self.level_count(&d);
                        self.b.ins().ireduce(types::I32, n)
                    }
                };
                let rt = self.result_type(inst)?;
                let t = super::values::scalar_ir_type(self.m, rt)?;
                let v = self.resize_int(v, t, false);
                self.define(inst, Val::S(v))
            }
            op => err(format!(
                "error: image instruction Op{op:?} is not supported\n"
            )),
        }
    }

    /// The shape of `inst`'s image operand `id` (an image or a sampled image).
    fn image_shape(&self, inst: Inst<'_>, id: Word) -> Result<Shape, BuildError> {
        let mut ty = self.m.type_of(id).and_then(|t| self.m.ty(t));
        if let Some(Type::SampledImage { image }) = ty {
            ty = self.m.ty(*image);
        }
        match ty {
            Some(Type::Image { dim, arrayed, .. }) => Ok(Shape {
                dim: *dim,
                arrayed: *arrayed,
            }),
            _ => err(format!(
                "error: operand %{id} of {} is not an image\n",
                inst.describe()
            )),
        }
    }

    fn image_query_size(&mut self, inst: Inst<'_>) -> Result<(), BuildError> {
        let query = inst.image_query()?;
        let shape = self.image_shape(inst, query.image)?;
        let image = self.scalar(query.image)?;
        let d = self.load_desc(image);
        // OpImageQuerySizeLod: the sizes of that level (a level outside the image, undefined,
        // answers for the nearest one).
        let level = match query.lod {
            Some(lod) if !self.is_zero_constant(lod) => LevelOf::Lod(self.scalar(lod)?),
            _ => LevelOf::Base,
        };
        let d = self.at_level(&d, &level)?;
        let n = shape.spatial() + usize::from(shape.arrayed);
        let rt = self.result_type(inst)?;
        let (elem, count) = match self.m.ty(rt) {
            Some(Type::Vector { elem, count }) => (*elem, *count as usize),
            _ => (rt, 1),
        };
        if count != n {
            return err(format!(
                "error: {} returns {count} components for an image with {n}\n",
                inst.describe()
            ));
        }
        let t = super::values::scalar_ir_type(self.m, elem)?;
        let vals: Vec<Val> = (0..n)
            .map(|c| {
                let v = self.extent(&d, shape, c);
                Val::S(self.resize_int(v, t, false))
            })
            .collect();
        let v = if count == 1 {
            vals.into_iter().next().expect("one component")
        } else {
            Val::C(vals)
        };
        self.define(inst, v)
    }
}
