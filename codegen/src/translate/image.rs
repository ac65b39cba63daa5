//! Image opcodes (DESIGN.md "Images"): reads, writes, sampling and queries, emitted inline
//! following the OpenCL SPIR-V environment spec, chapter 7. An image value is the address of
//! its [`ImageDescriptor`]; a sampler is its 32-bit pattern ([`crate::abi::sampler`]); a
//! sampled image is the pair.
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
use ferrocl_frontend::{Inst, Type};
use ferrocl_mathlib::{Binary, Precision, Unary};

use super::function::{err, Translator};
use super::values::Val;
use crate::abi::{sampler, ImageDescriptor, MipLevel, SamplerDescriptor};
use crate::entry_points::EntryPoint;
use crate::program::BuildError;

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

/// 8-bit normalised channels as floats (7.4: `x / 255`, `max(-1, x / 127)`, each one
/// correctly rounded division), looked up instead of divided: a read of an RGBA8 texel is then
/// four loads rather than four divisions. Kernels reach them through JIT symbols (a relocation),
/// not their address as a constant, so machine code stays valid in another process
/// (serialize.rs: the program cache).
pub(crate) static UNORM8: [f32; 256] = {
    let mut t = [0.0; 256];
    let mut i = 0;
    while i < 256 {
        t[i] = i as f32 / 255.0;
        i += 1;
    }
    t
};
pub(crate) const UNORM8_SYMBOL: &str = "ferrocl_unorm8_table";
pub(crate) const SNORM8_SYMBOL: &str = "ferrocl_snorm8_table";
pub(crate) static SNORM8: [f32; 256] = {
    let mut t = [0.0; 256];
    let mut i = 0;
    while i < 256 {
        let q = (i as u8 as i8) as f32 / 127.0;
        t[i] = if q < -1.0 { -1.0 } else { q };
        i += 1;
    }
    t
};

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
    /// The address of the literal sampler table (abi.rs `LITERAL_SAMPLERS`).
    pub(crate) fn literal_samplers_address(&mut self) -> Result<Value, BuildError> {
        self.table_address(crate::abi::LITERAL_SAMPLERS_SYMBOL)
    }

    /// The address of the driver's table `symbol` (a relocation, resolved when the code is
    /// loaded).
    fn table_address(&mut self, symbol: &'static str) -> Result<Value, BuildError> {
        let gv = match self.table_refs.get(symbol) {
            Some(gv) => *gv,
            None => {
                let data = self.env.table(symbol)?;
                let gv = self.env.jit_declare_data_in_func(data, self.b.func);
                self.table_refs.insert(symbol, gv);
                gv
            }
        };
        Ok(self.b.ins().symbol_value(types::I64, gv))
    }

    pub(crate) fn image_instruction(&mut self, inst: Inst<'_>) -> Result<(), BuildError> {
        match inst.opcode() {
            Op::SampledImage => {
                let image = self.scalar_operand(inst, 0)?;
                let sampler = self.scalar_operand(inst, 1)?;
                self.define(inst, Val::C(vec![Val::S(image), Val::S(sampler)]))
            }
            Op::ImageRead => self.image_read(inst),
            Op::ImageWrite => self.image_write(inst),
            Op::ImageSampleExplicitLod => self.image_sample(inst),
            Op::ImageQuerySizeLod | Op::ImageQuerySize => self.image_query_size(inst),
            Op::ImageQueryFormat | Op::ImageQueryOrder | Op::ImageQueryLevels => {
                self.image_shape(inst, 0)?;
                let image = self.scalar_operand(inst, 0)?;
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

    /// The shape of image operand `i` (an image or a sampled image).
    fn image_shape(&self, inst: Inst<'_>, i: usize) -> Result<Shape, BuildError> {
        let id = self.id_operand(inst, i)?;
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
                "error: operand {i} of {} is not an image\n",
                inst.describe()
            )),
        }
    }

    fn load_desc(&mut self, image: Value) -> Desc {
        let f = ro();
        // A specialised build knows the format: the switches below fold to one case.
        let known = self
            .known_images
            .get(&image)
            .map(|k| (k.order, k.data_type, k.mipmapped));
        let u32_field = |t: &mut Self, at: i32| {
            let v = t.b.ins().load(types::I32, f, image, at);
            t.b.ins().uextend(types::I64, v)
        };
        Desc {
            image,
            single_level: known.is_some_and(|k| !k.2),
            data: self
                .b
                .ins()
                .load(types::I64, f, image, ImageDescriptor::DATA),
            size: [
                u32_field(self, ImageDescriptor::WIDTH),
                u32_field(self, ImageDescriptor::HEIGHT),
                u32_field(self, ImageDescriptor::DEPTH),
                u32_field(self, ImageDescriptor::ARRAY_SIZE),
            ],
            row_pitch: self
                .b
                .ins()
                .load(types::I64, f, image, ImageDescriptor::ROW_PITCH),
            slice_pitch: self
                .b
                .ins()
                .load(types::I64, f, image, ImageDescriptor::SLICE_PITCH),
            element_size: u32_field(self, ImageDescriptor::ELEMENT_SIZE),
            order: match known {
                Some((o, _, _)) => self.b.ins().iconst(types::I32, i64::from(o)),
                None => self
                    .b
                    .ins()
                    .load(types::I32, f, image, ImageDescriptor::CHANNEL_ORDER),
            },
            data_type: match known {
                Some((_, t, _)) => self.b.ins().iconst(types::I32, i64::from(t)),
                None => self
                    .b
                    .ins()
                    .load(types::I32, f, image, ImageDescriptor::CHANNEL_DATA_TYPE),
            },
        }
    }

    /// The image's number of mip levels (i64): `max(1, num_mip_levels)`.
    fn level_count(&mut self, d: &Desc) -> Value {
        if d.single_level {
            return self.b.ins().iconst(types::I64, 1);
        }
        let n = self
            .b
            .ins()
            .load(types::I32, ro(), d.image, ImageDescriptor::NUM_MIP_LEVELS);
        let n = self.b.ins().uextend(types::I64, n);
        let one = self.b.ins().iconst(types::I64, 1);
        self.b.ins().umax(n, one)
    }

    /// The descriptor of mip level `level` (i64, in `[0, levels)`) of image `d` (level 0's):
    /// its format, data, sizes and pitches from the level table.
    fn level_desc(&mut self, d: &Desc, level: Value) -> Desc {
        let f = ro();
        let at = self.b.ins().imul_imm_s(level, MipLevel::SIZE as i64);
        let entry = self.b.ins().iadd(d.image, at);
        let field = |t: &mut Self, ty: types::Type, off: i32| {
            t.b.ins().load(ty, f, entry, ImageDescriptor::LEVELS + off)
        };
        let offset = field(self, types::I64, MipLevel::OFFSET);
        let row_pitch = field(self, types::I64, MipLevel::ROW_PITCH);
        let slice_pitch = field(self, types::I64, MipLevel::SLICE_PITCH);
        let mut size = d.size;
        for (c, off) in [MipLevel::WIDTH, MipLevel::HEIGHT, MipLevel::DEPTH]
            .into_iter()
            .enumerate()
        {
            let v = field(self, types::I32, off);
            size[c] = self.b.ins().uextend(types::I64, v);
        }
        Desc {
            data: self.b.ins().iadd(d.data, offset),
            size,
            row_pitch,
            slice_pitch,
            ..*d
        }
    }

    /// Whether id `id` is the constant 0 (integer or float of either sign, or a null
    /// constant): the level OpenCL C's level-less built-ins pass.
    fn is_zero_constant(&self, id: Word) -> bool {
        let Some(g) = self.m.global(id) else {
            return false;
        };
        match g.opcode() {
            Op::ConstantNull => true,
            Op::Constant => {
                let Ok(bits) = g.literal_bits(0) else {
                    return false;
                };
                let magnitude = match g.result_type().and_then(|t| self.m.ty(t)) {
                    Some(Type::Float { width: 16 }) => bits & 0x7fff,
                    Some(Type::Float { width: 32 }) => bits & 0x7fff_ffff,
                    Some(Type::Float { .. }) => bits & !(1 << 63),
                    _ => bits,
                };
                magnitude == 0
            }
            _ => false,
        }
    }

    /// The level named by the image operands of `inst` starting at operand `i`.
    fn level_of(&mut self, inst: Inst<'_>, i: usize) -> Result<LevelOf, BuildError> {
        let ops = inst.image_operands(i)?;
        if let Some((dx, dy)) = ops.grad {
            let dx = self.value(dx)?.flat();
            let dy = self.value(dy)?.flat();
            return Ok(LevelOf::Grad(dx, dy));
        }
        match ops.lod {
            Some(lod) if !self.is_zero_constant(lod) => {
                Ok(LevelOf::Lod(self.value(lod)?.scalar()?))
            }
            _ => Ok(LevelOf::Base),
        }
    }

    /// The descriptor of the level an integer `Lod` names (reads without a sampler; a level
    /// outside the image, undefined, reads the nearest one).
    fn at_level(&mut self, d: &Desc, level: &LevelOf) -> Result<Desc, BuildError> {
        let lod = match level {
            LevelOf::Lod(v) if !d.single_level => *v,
            LevelOf::Grad(..) => return err("error: gradients are for sampled reads only\n"),
            _ => return Ok(*d),
        };
        let lod = self.int_level(lod);
        let n = self.level_count(d);
        let last = self.b.ins().iadd_imm_s(n, -1);
        let zero = self.b.ins().iconst(types::I64, 0);
        let l = self.b.ins().smax(lod, zero);
        let l = self.b.ins().smin(l, last);
        Ok(self.level_desc(d, l))
    }

    /// An integer level operand as i64 (a float one, which only sampled reads have, rounded
    /// toward zero).
    fn int_level(&mut self, lod: Value) -> Value {
        if self.ty_of(lod) == types::F32 {
            self.b.ins().fcvt_to_sint_sat(types::I64, lod)
        } else {
            self.resize_int(lod, types::I64, true)
        }
    }

    /// The extent (i64) of coordinate component `c` of an image of `shape`: width, height,
    /// depth, or the array size for the layer.
    fn extent(&self, d: &Desc, shape: Shape, c: usize) -> Value {
        if shape.arrayed && c == shape.spatial() {
            d.size[3]
        } else {
            d.size[c]
        }
    }

    /// The coordinate components of operand `i`: integers, or (`float_allowed`, for sampled
    /// reads) f32s.
    fn coordinates(
        &mut self,
        inst: Inst<'_>,
        i: usize,
        float_allowed: bool,
    ) -> Result<Vec<Value>, BuildError> {
        let leaves = self.operand(inst, i)?.flat();
        for &c in &leaves {
            let t = self.ty_of(c);
            if !(t.is_int() || (float_allowed && t == types::F32)) {
                return err(format!(
                    "error: {} has a coordinate of type {t}; env 7 wants {}\n",
                    inst.describe(),
                    if float_allowed {
                        "32-bit floats or integers"
                    } else {
                        "integers"
                    }
                ));
            }
        }
        Ok(leaves)
    }

    /// Integer coordinates (i64) clamped into the image: x, y, z where y and z are 0 when the
    /// image has no such dimension, and the layer in y (1D arrays) or z (2D arrays).
    fn clamped_texel(
        &mut self,
        d: &Desc,
        shape: Shape,
        coords: &[Value],
    ) -> Result<[Value; 3], BuildError> {
        let n = shape.spatial() + usize::from(shape.arrayed);
        if coords.len() < n {
            return err("error: image coordinate has too few components\n");
        }
        let zero = self.b.ins().iconst(types::I64, 0);
        let mut out = [zero; 3];
        for (c, slot) in out.iter_mut().enumerate().take(n) {
            let v = self.resize_int(coords[c], types::I64, true);
            let hi = self.extent(d, shape, c);
            let last = self.b.ins().iadd_imm_s(hi, -1);
            let v = self.b.ins().smax(v, zero);
            *slot = self.b.ins().smin(v, last);
        }
        Ok(out)
    }

    /// Whether integer coordinates (any type) lie inside the image.
    fn inside(&mut self, d: &Desc, shape: Shape, coords: &[Value]) -> Result<Value, BuildError> {
        let n = shape.spatial() + usize::from(shape.arrayed);
        if coords.len() < n {
            return err("error: image coordinate has too few components\n");
        }
        let mut all = self.b.ins().iconst(types::I8, 1);
        for (c, &v) in coords.iter().enumerate().take(n) {
            let v = self.resize_int(v, types::I64, true);
            let hi = self.extent(d, shape, c);
            // Unsigned: negative coordinates are huge.
            let ok = self.b.ins().icmp(IntCC::UnsignedLessThan, v, hi);
            all = self.b.ins().band(all, ok);
        }
        Ok(all)
    }

    /// The address of texel (x, y, z) (clamped coordinates: y is the layer of a 1D array).
    fn texel_address(&mut self, d: &Desc, shape: Shape, xyz: [Value; 3]) -> Value {
        let x = self.b.ins().imul(xyz[0], d.element_size);
        let mut addr = self.b.ins().iadd(d.data, x);
        // A 1D array's layer is in y but its layers are slice_pitch apart.
        let (row, slice) = if shape.dim == Dim::Dim1D && shape.arrayed {
            (None, Some(xyz[1]))
        } else {
            (Some(xyz[1]), Some(xyz[2]))
        };
        if let Some(y) = row {
            let o = self.b.ins().imul(y, d.row_pitch);
            addr = self.b.ins().iadd(addr, o);
        }
        if let Some(z) = slice {
            let o = self.b.ins().imul(z, d.slice_pitch);
            addr = self.b.ins().iadd(addr, o);
        }
        addr
    }

    /// Stored channels of `order` (1 to 4), from a table of 2-bit entries.
    fn channel_count(&mut self, order: Value) -> Value {
        self.channel_count_of(order, stored_components)
    }

    /// Channels of `order` that `components` lists (1 to 4), from a table of 2-bit entries.
    fn channel_count_of(&mut self, order: Value, components: fn(u32) -> &'static [usize]) -> Value {
        let mut table = 0u64;
        for o in order::ALL {
            table |= ((components(o).len() as u64 - 1) & 3) << (2 * o);
        }
        let t = self.b.ins().iconst(types::I64, table as i64);
        let o = self.b.ins().uextend(types::I64, order);
        let o = self.b.ins().imul_imm_s(o, 2);
        let shifted = self.b.ins().ushr(t, o);
        let n1 = self.b.ins().band_imm_s(shifted, 3);
        self.b.ins().iadd_imm_s(n1, 1)
    }

    /// Emits a switch on `selector` (an i32) with one block per case; each block's values
    /// (of `tys`) flow to the returned merge values; `default` fills unknown selectors.
    fn switch_values(
        &mut self,
        selector: Value,
        cases: &[u32],
        tys: &[types::Type],
        mut case: impl FnMut(&mut Self, u32) -> Result<Vec<Value>, BuildError>,
        default: impl FnOnce(&mut Self) -> Result<Vec<Value>, BuildError>,
    ) -> Result<Vec<Value>, BuildError> {
        if let Some(c) = self.int_constant(selector) {
            // A known selector (specialised builds): only its case is emitted.
            return match cases.iter().find(|&&k| i64::from(k) == c) {
                Some(&k) => case(self, k),
                None => default(self),
            };
        }
        let merge = self.b.create_block();
        for &t in tys {
            self.b.append_block_param(merge, t);
        }
        let mut switch = Switch::new();
        let blocks: Vec<ir::Block> = cases.iter().map(|_| self.b.create_block()).collect();
        for (&c, &block) in cases.iter().zip(&blocks) {
            switch.set_entry(u128::from(c), block);
        }
        let otherwise = self.b.create_block();
        switch.emit(&mut self.b, selector, otherwise);
        for (&c, &block) in cases.iter().zip(&blocks) {
            self.b.switch_to_block(block);
            let vals = case(self, c)?;
            let args: Vec<BlockArg> = vals.into_iter().map(BlockArg::Value).collect();
            self.b.ins().jump(merge, &args);
        }
        self.b.switch_to_block(otherwise);
        let vals = default(self)?;
        let args: Vec<BlockArg> = vals.into_iter().map(BlockArg::Value).collect();
        self.b.ins().jump(merge, &args);
        self.b.switch_to_block(merge);
        Ok(self.b.block_params(merge).to_vec())
    }

    fn fconst(&mut self, v: f32) -> Value {
        self.b.ins().f32const(v)
    }

    /// Reads the texel at `addr` as RGBA of `kind`: 7.4 conversion of each stored channel,
    /// then 7.7 placement (missing R, G, B are 0, missing alpha 1; intensity in all four,
    /// luminance in R, G, B; sRGB decoded).
    fn read_texel(&mut self, d: &Desc, addr: Value, kind: Kind) -> Result<[Value; 4], BuildError> {
        Ok(self.read_texels(d, &[addr], kind)?[0])
    }

    /// [`Translator::read_texel`] for several texels of one image at once (the corners of a
    /// linear filter): one switch on the data type and one on the order serve them all.
    fn read_texels(
        &mut self,
        d: &Desc,
        addrs: &[Value],
        kind: Kind,
    ) -> Result<Vec<[Value; 4]>, BuildError> {
        if kind == Kind::Float {
            if let Some(o) = self.unorm8x4_order(d) {
                let mut out = Vec::with_capacity(addrs.len());
                for &addr in addrs {
                    let v = self.load_unorm8x4(addr);
                    out.push(self.place_lanes(v, o));
                }
                return Ok(out);
            }
        }
        let n = self.channel_count(d.order);
        let last = self.b.ins().iadd_imm_s(n, -1);
        let t = kind.ir();
        let tys = vec![t; 4 * addrs.len()];
        // Stored channels in memory order (packed types: R, G, B, A), four per texel.
        let stored = self.switch_values(
            d.data_type,
            &DATA_TYPES,
            &tys,
            |s, dt| {
                let mut all = Vec::with_capacity(4 * addrs.len());
                for &addr in addrs {
                    all.extend(s.load_channels(addr, last, dt, kind)?);
                }
                Ok(all)
            },
            |s| Ok(vec![s.zeros(kind)[0]; 4 * addrs.len()]),
        )?;
        let placed = self.switch_values(
            d.order,
            &order::ALL,
            &tys,
            |s, o| {
                let mut all = Vec::with_capacity(4 * addrs.len());
                for texel in stored.chunks(4) {
                    all.extend(s.place_channels(texel, o, kind, d.data_type)?);
                }
                Ok(all)
            },
            |s| Ok(vec![s.zeros(kind)[0]; 4 * addrs.len()]),
        )?;
        Ok(placed.chunks(4).map(|c| [c[0], c[1], c[2], c[3]]).collect())
    }

    /// The order of a specialised build's image whose texels are four UNORM_INT8 channels
    /// read linearly (RGBA, BGRA, ARGB, ABGR: the common 8-bit colour images). Such a texel
    /// converts as one f32x4 instead of four table lookups, and linear filtering blends the
    /// four channels at once.
    fn unorm8x4_order(&self, d: &Desc) -> Option<u32> {
        let dt = self.int_constant(d.data_type)?;
        let o = u32::try_from(self.int_constant(d.order)?).ok()?;
        (dt == i64::from(data_type::UNORM_INT8)
            && matches!(o, order::RGBA | order::BGRA | order::ARGB | order::ABGR))
        .then_some(o)
    }

    /// The four UNORM_INT8 channels at `addr`, in memory order, as an f32x4 of c / 255 each
    /// rounded once (what the scalar path's exact table holds).
    fn load_unorm8x4(&mut self, addr: Value) -> Value {
        let word = self.b.ins().load(types::I32, MemFlagsData::new(), addr, 0);
        let v = self.b.ins().scalar_to_vector(types::I32X4, word);
        let little = MemFlagsData::new().with_endianness(Endianness::Little);
        let bytes = self.b.ins().bitcast(types::I8X16, little, v);
        let shorts = self.b.ins().uwiden_low(bytes);
        let ints = self.b.ins().uwiden_low(shorts);
        // 0..=255: the signed conversion (one instruction on x86-64) is exact.
        let f = self.b.ins().fcvt_from_sint(types::F32X4, ints);
        let m = self.fconst(255.0);
        let m = self.b.ins().splat(types::F32X4, m);
        self.b.ins().fdiv(f, m)
    }

    /// RGBA from an f32x4 holding order `o`'s four channels in memory order.
    fn place_lanes(&mut self, v: Value, o: u32) -> [Value; 4] {
        let mut rgba = [v; 4];
        for (j, &k) in stored_components(o).iter().enumerate() {
            rgba[k] = self.b.ins().extractlane(v, j as u8);
        }
        rgba
    }

    /// Stores RGBA (already in `o`'s memory order) as four UNORM_INT8 channels in one 32-bit
    /// store, converted as [`Translator::float_to_norm`] converts each (NaN gives 0: the
    /// saturating conversion maps it there).
    fn store_unorm8x4(&mut self, addr: Value, stored: &[Value]) {
        let mut v = self.b.ins().scalar_to_vector(types::F32X4, stored[0]);
        for (i, &c) in stored.iter().enumerate().take(4).skip(1) {
            v = self.b.ins().insertlane(v, c, i as u8);
        }
        let splat = |t: &mut Self, x: f32| {
            let c = t.fconst(x);
            t.b.ins().splat(types::F32X4, c)
        };
        let scale = splat(self, 255.0);
        let v = self.b.ins().fmul(v, scale);
        let lo = splat(self, 0.0);
        let v = self.b.ins().fmax(v, lo);
        let v = self.b.ins().fmin(v, scale);
        let v = self.b.ins().nearest(v);
        let ints = self.b.ins().fcvt_to_sint_sat(types::I32X4, v);
        let shorts = self.b.ins().snarrow(ints, ints);
        let bytes = self.b.ins().unarrow(shorts, shorts);
        let little = MemFlagsData::new().with_endianness(Endianness::Little);
        let words = self.b.ins().bitcast(types::I32X4, little, bytes);
        let word = self.b.ins().extractlane(words, 0);
        self.b.ins().store(MemFlagsData::new(), word, addr, 0);
    }

    fn zeros(&mut self, kind: Kind) -> Vec<Value> {
        let z = match kind {
            Kind::Float => self.fconst(0.0),
            Kind::Int => self.b.ins().iconst(types::I32, 0),
        };
        vec![z; 4]
    }

    /// The four stored channels of data type `dt` at `addr` (channel i at
    /// `min(i, last) × size`, so no load leaves the texel), converted for `kind`.
    fn load_channels(
        &mut self,
        addr: Value,
        last: Value,
        dt: u32,
        kind: Kind,
    ) -> Result<Vec<Value>, BuildError> {
        use data_type::*;
        let f = MemFlagsData::new();
        if !packed_fields(dt).is_empty() {
            if kind == Kind::Int {
                return Ok(self.zeros(kind));
            }
            let word = if channel_bytes(dt) == 2 {
                self.b.ins().uload16(types::I32, f, addr, 0)
            } else {
                self.b.ins().load(types::I32, f, addr, 0)
            };
            let mut out = Vec::new();
            for &(shift, bits) in packed_fields(dt) {
                let max = (1u32 << bits) - 1;
                let v = self.b.ins().ushr_imm_u(word, i64::from(shift));
                let v = self.b.ins().band_imm_s(v, i64::from(max));
                let v = self.b.ins().fcvt_from_uint(types::F32, v);
                let m = self.fconst(max as f32);
                out.push(self.b.ins().fdiv(v, m));
            }
            while out.len() < 4 {
                let one = self.fconst(1.0);
                out.push(one);
            }
            return Ok(out);
        }
        let size = channel_bytes(dt);
        let mut out = Vec::with_capacity(4);
        for i in 0..4i64 {
            let idx = self.b.ins().iconst(types::I64, i);
            let idx = self.b.ins().umin(idx, last);
            let off = self.b.ins().imul_imm_s(idx, size);
            let a = self.b.ins().iadd(addr, off);
            let v = match (kind, dt) {
                (Kind::Float, UNORM_INT8 | SNORM_INT8) => {
                    let table = if dt == UNORM_INT8 {
                        UNORM8_SYMBOL
                    } else {
                        SNORM8_SYMBOL
                    };
                    let raw = self.b.ins().uload8(types::I64, f, a, 0);
                    let at = self.b.ins().imul_imm_s(raw, 4);
                    let base = self.table_address(table)?;
                    let at = self.b.ins().iadd(base, at);
                    // A static table: never written, valid for the process's life.
                    self.b.ins().load(types::F32, ro(), at, 0)
                }
                (Kind::Float, UNORM_INT16) => {
                    let raw = self.b.ins().uload16(types::I32, f, a, 0);
                    let x = self.b.ins().fcvt_from_uint(types::F32, raw);
                    let m = self.fconst(65535.0);
                    self.b.ins().fdiv(x, m)
                }
                (Kind::Float, SNORM_INT16) => {
                    let raw = self.b.ins().sload16(types::I32, f, a, 0);
                    let x = self.b.ins().fcvt_from_sint(types::F32, raw);
                    let m = self.fconst(32767.0);
                    let q = self.b.ins().fdiv(x, m);
                    let minus_one = self.fconst(-1.0);
                    self.b.ins().fmax(q, minus_one)
                }
                (Kind::Float, HALF_FLOAT) => self.load_half(a, 0)?,
                (Kind::Float, FLOAT) => self.b.ins().load(types::F32, f, a, 0),
                (Kind::Int, SIGNED_INT8) => self.b.ins().sload8(types::I32, f, a, 0),
                (Kind::Int, SIGNED_INT16) => self.b.ins().sload16(types::I32, f, a, 0),
                (Kind::Int, UNSIGNED_INT8) => self.b.ins().uload8(types::I32, f, a, 0),
                (Kind::Int, UNSIGNED_INT16) => self.b.ins().uload16(types::I32, f, a, 0),
                (Kind::Int, SIGNED_INT32 | UNSIGNED_INT32) => {
                    self.b.ins().load(types::I32, f, a, 0)
                }
                // A read of the other kind is undefined (7.4): it reads zeros.
                (Kind::Float, _) => self.fconst(0.0),
                (Kind::Int, _) => self.b.ins().iconst(types::I32, 0),
            };
            out.push(v);
        }
        Ok(out)
    }

    /// RGBA from the stored channels of order `o`.
    fn place_channels(
        &mut self,
        stored: &[Value],
        o: u32,
        kind: Kind,
        data_type: Value,
    ) -> Result<Vec<Value>, BuildError> {
        let (zero, one) = match kind {
            Kind::Float => (self.fconst(0.0), self.fconst(1.0)),
            Kind::Int => (
                self.b.ins().iconst(types::I32, 0),
                self.b.ins().iconst(types::I32, 1),
            ),
        };
        let mut rgba = [zero, zero, zero, one];
        match o {
            order::INTENSITY => rgba = [stored[0]; 4],
            order::LUMINANCE => rgba = [stored[0], stored[0], stored[0], one],
            _ => {
                let comps = stored_components(o);
                if comps.len() == 3 && kind == Kind::Float {
                    // RGB orders hold packed types: their decoded R, G, B (and A for
                    // 101010_2) are in `stored` as they go.
                    let is_101010_2 = self.b.ins().icmp_imm_s(
                        IntCC::Equal,
                        data_type,
                        i64::from(data_type::UNORM_INT_101010_2),
                    );
                    rgba[3] = self.b.ins().select(is_101010_2, stored[3], one);
                }
                for (j, &k) in comps.iter().enumerate() {
                    rgba[k] = stored[j];
                }
            }
        }
        if is_srgb(o) && kind == Kind::Float {
            for c in rgba.iter_mut().take(3) {
                *c = self.srgb_to_linear(*c)?;
            }
        }
        Ok(rgba.to_vec())
    }

    /// 7.4.5: r ≤ 0.04045 ? r / 12.92 : ((r + 0.055) / 1.055)^2.4.
    fn srgb_to_linear(&mut self, r: Value) -> Result<Value, BuildError> {
        let low = self.fconst(12.92);
        let low = self.b.ins().fdiv(r, low);
        let a = self.fconst(0.055);
        let s = self.b.ins().fadd(r, a);
        let k = self.fconst(1.055);
        let s = self.b.ins().fdiv(s, k);
        let e = self.fconst(2.4);
        let high = self.call_entry(EntryPoint::Binary(Binary::pow, Precision::F32), &[s, e])?[0];
        let edge = self.fconst(0.04045);
        let is_low = self.b.ins().fcmp(FloatCC::LessThanOrEqual, r, edge);
        Ok(self.b.ins().select(is_low, low, high))
    }

    /// 7.4.5, encoding: NaN and negatives 0, above 1 1, else the curve.
    fn linear_to_srgb(&mut self, y: Value) -> Result<Value, BuildError> {
        let zero = self.fconst(0.0);
        let one = self.fconst(1.0);
        let y0 = self.b.ins().fmax(y, zero);
        let y0 = self.b.ins().fmin(y0, one);
        // fmax/fmin propagate NaN: make it 0.
        let nan = self.b.ins().fcmp(FloatCC::Unordered, y, y);
        let y0 = self.b.ins().select(nan, zero, y0);
        let k = self.fconst(12.92);
        let low = self.b.ins().fmul(y0, k);
        let e = self.fconst(1.0 / 2.4);
        let p = self.call_entry(EntryPoint::Binary(Binary::pow, Precision::F32), &[y0, e])?[0];
        let a = self.fconst(1.055);
        let p = self.b.ins().fmul(p, a);
        let c = self.fconst(0.055);
        let high = self.b.ins().fsub(p, c);
        let edge = self.fconst(0.0031308);
        let is_low = self.b.ins().fcmp(FloatCC::LessThan, y0, edge);
        Ok(self.b.ins().select(is_low, low, high))
    }

    /// The kind a read or write of values of SPIR-V type `ty` (a vector or scalar) moves.
    fn kind_of(&self, ty: Word) -> Kind {
        let elem = match self.m.ty(ty) {
            Some(Type::Vector { elem, .. }) => *elem,
            _ => ty,
        };
        match self.m.ty(elem) {
            Some(Type::Float { .. }) => Kind::Float,
            _ => Kind::Int,
        }
    }

    /// Defines `inst`'s result (a 4-vector, or a scalar for depth images) from RGBA.
    fn define_color(&mut self, inst: Inst<'_>, rgba: [Value; 4]) -> Result<(), BuildError> {
        let rt = self.result_type(inst)?;
        let half = self.is_half(rt);
        let mut rgba = rgba;
        if half {
            let mode = ferrocl_frontend::spirv::FPRoundingMode::RTE;
            for c in rgba.iter_mut() {
                *c = self.round_to_half(*c, mode)?;
            }
        }
        let v = match self.m.ty(rt) {
            Some(Type::Vector { count: 4, .. }) => {
                Val::C(rgba.iter().map(|&c| Val::S(c)).collect())
            }
            Some(Type::Vector { .. }) => {
                return err("error: an image read must return a 4-component vector\n")
            }
            _ => Val::S(rgba[0]),
        };
        self.define(inst, v)
    }

    fn image_read(&mut self, inst: Inst<'_>) -> Result<(), BuildError> {
        let shape = self.image_shape(inst, 0)?;
        let image = self.scalar_operand(inst, 0)?;
        let coords = self.coordinates(inst, 1, false)?;
        let kind = self.kind_of(self.result_type(inst)?);
        let level = self.level_of(inst, 2)?;
        let d = self.load_desc(image);
        let d = self.at_level(&d, &level)?;
        let xyz = self.clamped_texel(&d, shape, &coords)?;
        let addr = self.texel_address(&d, shape, xyz);
        let rgba = self.read_texel(&d, addr, kind)?;
        self.define_color(inst, rgba)
    }

    fn image_write(&mut self, inst: Inst<'_>) -> Result<(), BuildError> {
        let shape = self.image_shape(inst, 0)?;
        let image = self.scalar_operand(inst, 0)?;
        let coords = self.coordinates(inst, 1, false)?;
        let texel_id = self.id_operand(inst, 2)?;
        let kind = self.kind_of(self.m.type_of(texel_id).unwrap_or(0));
        let texel = self.operand(inst, 2)?.flat();
        let level = self.level_of(inst, 3)?;
        let d = self.load_desc(image);
        // A level outside the image drops the write, as coordinates outside it do.
        let (d, level_ok) = match level {
            LevelOf::Lod(lod) if !d.single_level => {
                let lod = self.int_level(lod);
                let n = self.level_count(&d);
                let ok = self.b.ins().icmp(IntCC::UnsignedLessThan, lod, n);
                let last = self.b.ins().iadd_imm_s(n, -1);
                let l = self.b.ins().umin(lod, last);
                (self.level_desc(&d, l), Some(ok))
            }
            LevelOf::Grad(..) => return err("error: gradients are for sampled reads only\n"),
            _ => (d, None),
        };
        let inside = self.inside(&d, shape, &coords)?;
        let inside = match level_ok {
            Some(ok) => self.b.ins().band(inside, ok),
            None => inside,
        };
        let write = self.b.create_block();
        let done = self.b.create_block();
        self.b.ins().brif(inside, write, &[], done, &[]);
        self.b.switch_to_block(write);
        let xyz = self.clamped_texel(&d, shape, &coords)?;
        let addr = self.texel_address(&d, shape, xyz);
        let zero = match kind {
            Kind::Float => self.fconst(0.0),
            Kind::Int => self.b.ins().iconst(types::I32, 0),
        };
        let rgba = [0, 1, 2, 3].map(|i| texel.get(i).copied().unwrap_or(zero));
        self.write_texel(&d, addr, rgba, kind)?;
        self.b.ins().jump(done, &[]);
        self.b.switch_to_block(done);
        Ok(())
    }

    /// Stores RGBA of `kind` as the texel at `addr`: channels reordered for the order (sRGB
    /// encoded), then converted by 7.4 and stored (only the order's channels).
    fn write_texel(
        &mut self,
        d: &Desc,
        addr: Value,
        rgba: [Value; 4],
        kind: Kind,
    ) -> Result<(), BuildError> {
        let t = kind.ir();
        for c in rgba {
            if self.ty_of(c) != t {
                return err("error: image write texel of the wrong type\n");
            }
        }
        // RGBA kept for packed types (they store R, G, B[, A] in their fixed fields).
        let stored = self.switch_values(
            d.order,
            &order::ALL,
            &[t; 4],
            |s, o| {
                let mut out = rgba.to_vec();
                for (j, &k) in written_components(o).iter().enumerate() {
                    out[j] = rgba[k];
                    if is_srgb(o) && kind == Kind::Float && k < 3 {
                        out[j] = s.linear_to_srgb(rgba[k])?;
                    }
                }
                Ok(out)
            },
            |_| Ok(rgba.to_vec()),
        )?;
        if kind == Kind::Float && self.unorm8x4_order(d).is_some() {
            self.store_unorm8x4(addr, &stored);
            return Ok(());
        }
        let n = self.channel_count_of(d.order, written_components);
        let known_n = self
            .int_constant(d.order)
            .map(|o| written_components(o as u32).len());
        self.switch_values(
            d.data_type,
            &DATA_TYPES,
            &[],
            |s, dt| {
                s.store_channels(addr, (n, known_n), &stored, &rgba, dt, kind)?;
                Ok(Vec::new())
            },
            |_| Ok(Vec::new()),
        )?;
        Ok(())
    }

    /// float → normalised integer: saturate to [lo, hi] after scaling by `scale`, round to
    /// nearest even; NaN 0.
    fn float_to_norm(&mut self, x: Value, scale: f32, lo: f32, hi: f32) -> Value {
        let s = self.fconst(scale);
        let v = self.b.ins().fmul(x, s);
        let (l, h) = (self.fconst(lo), self.fconst(hi));
        let v = self.b.ins().fmax(v, l);
        let v = self.b.ins().fmin(v, h);
        let v = self.b.ins().nearest(v);
        let nan = self.b.ins().fcmp(FloatCC::Unordered, x, x);
        let zero = self.fconst(0.0);
        let v = self.b.ins().select(nan, zero, v);
        self.b.ins().fcvt_to_sint_sat(types::I32, v)
    }

    #[allow(clippy::too_many_arguments)]
    /// `n` is the number of stored channels, also as a constant when the order is known.
    fn store_channels(
        &mut self,
        addr: Value,
        (n, known_n): (Value, Option<usize>),
        stored: &[Value],
        rgba: &[Value; 4],
        dt: u32,
        kind: Kind,
    ) -> Result<(), BuildError> {
        use data_type::*;
        let f = MemFlagsData::new();
        let fields = packed_fields(dt);
        if !fields.is_empty() {
            if kind != Kind::Float {
                return Ok(());
            }
            let mut word = self.b.ins().iconst(types::I32, 0);
            for (i, &(shift, bits)) in fields.iter().enumerate() {
                let max = ((1u32 << bits) - 1) as f32;
                let v = self.float_to_norm(rgba[i], max, 0.0, max);
                let v = self.b.ins().ishl_imm_u(v, i64::from(shift));
                word = self.b.ins().bor(word, v);
            }
            if channel_bytes(dt) == 2 {
                self.b.ins().istore16(f, word, addr, 0);
            } else {
                self.b.ins().store(f, word, addr, 0);
            }
            return Ok(());
        }
        let size = channel_bytes(dt);
        for (i, &x) in stored.iter().enumerate() {
            // Channel i exists when i < n; a known order needs no branch.
            let next = match known_n {
                Some(k) if i >= k => break,
                Some(_) => None,
                None => {
                    let exists = self
                        .b
                        .ins()
                        .icmp_imm_s(IntCC::UnsignedGreaterThan, n, i as i64);
                    let store = self.b.create_block();
                    let next = self.b.create_block();
                    self.b.ins().brif(exists, store, &[], next, &[]);
                    self.b.switch_to_block(store);
                    Some(next)
                }
            };
            let off = (i as i64 * size) as i32;
            match (kind, dt) {
                (Kind::Float, UNORM_INT8) => {
                    // sRGB channels arrive encoded (in [0, 1]) and scale as linear alpha does.
                    let v = self.float_to_norm(x, 255.0, 0.0, 255.0);
                    self.b.ins().istore8(f, v, addr, off);
                }
                (Kind::Float, UNORM_INT16) => {
                    let v = self.float_to_norm(x, 65535.0, 0.0, 65535.0);
                    self.b.ins().istore16(f, v, addr, off);
                }
                (Kind::Float, SNORM_INT8) => {
                    let v = self.float_to_norm(x, 127.0, -128.0, 127.0);
                    self.b.ins().istore8(f, v, addr, off);
                }
                (Kind::Float, SNORM_INT16) => {
                    let v = self.float_to_norm(x, 32767.0, -32768.0, 32767.0);
                    self.b.ins().istore16(f, v, addr, off);
                }
                (Kind::Float, HALF_FLOAT) => {
                    let mode = ferrocl_frontend::spirv::FPRoundingMode::RTE;
                    let bits = self.half_bits(x, mode)?;
                    self.b.ins().store(f, bits, addr, off);
                }
                (Kind::Float, FLOAT) => {
                    self.b.ins().store(f, x, addr, off);
                }
                (Kind::Int, SIGNED_INT8 | SIGNED_INT16) => {
                    let (lo, hi) = if dt == SIGNED_INT8 {
                        (-128, 127)
                    } else {
                        (-32768, 32767)
                    };
                    let lo = self.b.ins().iconst(types::I32, lo);
                    let hi = self.b.ins().iconst(types::I32, hi);
                    let v = self.b.ins().smax(x, lo);
                    let v = self.b.ins().smin(v, hi);
                    if dt == SIGNED_INT8 {
                        self.b.ins().istore8(f, v, addr, off);
                    } else {
                        self.b.ins().istore16(f, v, addr, off);
                    }
                }
                (Kind::Int, UNSIGNED_INT8 | UNSIGNED_INT16) => {
                    let hi = if dt == UNSIGNED_INT8 { 255 } else { 65535 };
                    let hi = self.b.ins().iconst(types::I32, hi);
                    let v = self.b.ins().umin(x, hi);
                    if dt == UNSIGNED_INT8 {
                        self.b.ins().istore8(f, v, addr, off);
                    } else {
                        self.b.ins().istore16(f, v, addr, off);
                    }
                }
                (Kind::Int, SIGNED_INT32 | UNSIGNED_INT32) => {
                    self.b.ins().store(f, x, addr, off);
                }
                // A write of the other kind is undefined (7.4): nothing is stored.
                _ => {}
            }
            if let Some(next) = next {
                self.b.ins().jump(next, &[]);
                self.b.switch_to_block(next);
            }
        }
        Ok(())
    }

    fn image_query_size(&mut self, inst: Inst<'_>) -> Result<(), BuildError> {
        let shape = self.image_shape(inst, 0)?;
        let image = self.scalar_operand(inst, 0)?;
        let d = self.load_desc(image);
        // OpImageQuerySizeLod: the sizes of that level (a level outside the image, undefined,
        // answers for the nearest one).
        let level = match inst.opcode() {
            Op::ImageQuerySizeLod => {
                let lod = self.id_operand(inst, 1)?;
                if self.is_zero_constant(lod) {
                    LevelOf::Base
                } else {
                    LevelOf::Lod(self.scalar_operand(inst, 1)?)
                }
            }
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

    /// `OpImageSampleExplicitLod`: a read through a sampler (7.1–7.3: normalised or not,
    /// the addressing mode, nearest or linear filtering) of the level its operands name.
    fn image_sample(&mut self, inst: Inst<'_>) -> Result<(), BuildError> {
        let shape = self.image_shape(inst, 0)?;
        let pair = self.operand(inst, 0)?;
        let (image, smp) = match pair.children()? {
            [Val::S(i), Val::S(s)] => (*i, *s),
            _ => return err("error: OpImageSampleExplicitLod needs a sampled image\n"),
        };
        let coords = self.coordinates(inst, 1, true)?;
        let kind = self.kind_of(self.result_type(inst)?);
        let level = self.level_of(inst, 2)?;
        let d = self.load_desc(image);
        let n = shape.spatial() + usize::from(shape.arrayed);
        if coords.len() < n {
            return err("error: image coordinate has too few components\n");
        }
        // Integer coordinates are unnormalised texel coordinates.
        let coords: Vec<Value> = coords
            .iter()
            .take(n)
            .map(|&c| {
                if self.ty_of(c).is_int() {
                    let c = self.resize_int(c, types::I32, true);
                    self.b.ins().fcvt_from_sint(types::F32, c)
                } else {
                    c
                }
            })
            .collect();
        let smp = self.sampler_vals(smp);
        let rgba = if matches!(level, LevelOf::Base) || d.single_level {
            self.sample_level(&d, shape, &coords, &smp, kind)?
        } else {
            self.sample_mipmapped(&d, shape, &coords, &smp, kind, level)?
        };
        self.define_color(inst, rgba)
    }

    /// The record of sampler value `smp` (its address): constants when known, else loaded.
    fn sampler_vals(&mut self, smp: Value) -> SamplerVals {
        if let Some(r) = self.known_samplers.get(&smp).copied() {
            return SamplerVals {
                bits: self.b.ins().iconst(types::I32, i64::from(r.bits)),
                known: Some(r),
                lod_min: self.fconst(r.lod_min),
                lod_max: self.fconst(r.lod_max),
            };
        }
        let f = ro();
        SamplerVals {
            bits: self
                .b
                .ins()
                .load(types::I32, f, smp, SamplerDescriptor::BITS),
            known: None,
            lod_min: self
                .b
                .ins()
                .load(types::F32, f, smp, SamplerDescriptor::LOD_MIN),
            lod_max: self
                .b
                .ins()
                .load(types::F32, f, smp, SamplerDescriptor::LOD_MAX),
        }
    }

    /// A sampled read of the image (or level) `d`: nearest or linear filtering as the
    /// sampler says.
    fn sample_level(
        &mut self,
        d: &Desc,
        shape: Shape,
        coords: &[Value],
        smp: &SamplerVals,
        kind: Kind,
    ) -> Result<[Value; 4], BuildError> {
        let normalized = self
            .b
            .ins()
            .band_imm_s(smp.bits, i64::from(sampler::NORMALIZED_COORDS));
        let address = self
            .b
            .ins()
            .band_imm_s(smp.bits, i64::from(sampler::ADDRESS_MASK));
        // A literal or specialised sampler: its filter is known, only that path is emitted.
        if let Some(r) = smp.known {
            let linear = r.bits & sampler::FILTER_LINEAR != 0 && kind == Kind::Float;
            return if linear {
                self.sample_linear(d, shape, coords, normalized, address)
            } else {
                self.sample_nearest(d, shape, coords, normalized, address, kind)
            };
        }
        let linear_bits = self
            .b
            .ins()
            .band_imm_s(smp.bits, i64::from(sampler::FILTER_LINEAR));
        // Filtering of integer images is nearest whatever the sampler says (undefined).
        let linear = if kind == Kind::Float {
            self.b.ins().icmp_imm_s(IntCC::NotEqual, linear_bits, 0)
        } else {
            self.b.ins().iconst(types::I8, 0)
        };
        let t = kind.ir();
        let nearest_block = self.b.create_block();
        let linear_block = self.b.create_block();
        let merge = self.b.create_block();
        for _ in 0..4 {
            self.b.append_block_param(merge, t);
        }
        self.b
            .ins()
            .brif(linear, linear_block, &[], nearest_block, &[]);

        self.b.switch_to_block(nearest_block);
        let rgba = self.sample_nearest(d, shape, coords, normalized, address, kind)?;
        let args: Vec<BlockArg> = rgba.iter().map(|&v| BlockArg::Value(v)).collect();
        self.b.ins().jump(merge, &args);

        self.b.switch_to_block(linear_block);
        let rgba = if kind == Kind::Float {
            self.sample_linear(d, shape, coords, normalized, address)?
        } else {
            let z = self.zeros(kind);
            [z[0], z[1], z[2], z[3]]
        };
        let args: Vec<BlockArg> = rgba.iter().map(|&v| BlockArg::Value(v)).collect();
        self.b.ins().jump(merge, &args);

        self.b.switch_to_block(merge);
        let p = self.b.block_params(merge).to_vec();
        Ok([p[0], p[1], p[2], p[3]])
    }

    /// The level of detail λ of gradients `dx`, `dy` (derivatives of the coordinate, in
    /// normalised units when the sampler normalises, scaled by level 0's size to texels):
    /// log2 of the larger of their lengths (OpenGL 4.6 (8.6)–(8.8) with ρ the maximum).
    fn lod_from_gradients(
        &mut self,
        d: &Desc,
        shape: Shape,
        smp: &SamplerVals,
        dx: &[Value],
        dy: &[Value],
    ) -> Result<Value, BuildError> {
        let sp = shape.spatial();
        if dx.len() < sp || dy.len() < sp {
            return err("error: image gradients have too few components\n");
        }
        let normalized = self
            .b
            .ins()
            .band_imm_s(smp.bits, i64::from(sampler::NORMALIZED_COORDS));
        let is_norm = self.b.ins().icmp_imm_s(IntCC::NotEqual, normalized, 0);
        let one = self.fconst(1.0);
        let mut lengths = [self.fconst(0.0); 2];
        for (len, g) in lengths.iter_mut().zip([dx, dy]) {
            for (&v, &n) in g.iter().zip(&d.size).take(sp) {
                if self.ty_of(v) != types::F32 {
                    return err("error: image gradients must be 32-bit floats\n");
                }
                let size = self.b.ins().fcvt_from_uint(types::F32, n);
                let scale = self.b.ins().select(is_norm, size, one);
                let t = self.b.ins().fmul(v, scale);
                let t2 = self.b.ins().fmul(t, t);
                *len = self.b.ins().fadd(*len, t2);
            }
            *len = self.b.ins().sqrt(*len);
        }
        let rho = self.b.ins().fmax(lengths[0], lengths[1]);
        Ok(self.call_entry(EntryPoint::Unary(Unary::log2, Precision::F32), &[rho])?[0])
    }

    /// A sampled read of a mipmapped image `d` (level 0's fields) at the level `level`
    /// names: λ clamped to the sampler's lod range and to `[0, levels − 1]`, then one level
    /// (nearest mip filter, and integer reads) or two blended (linear mip filter).
    #[allow(clippy::too_many_arguments)]
    fn sample_mipmapped(
        &mut self,
        d: &Desc,
        shape: Shape,
        coords: &[Value],
        smp: &SamplerVals,
        kind: Kind,
        level: LevelOf,
    ) -> Result<[Value; 4], BuildError> {
        let lambda = match level {
            LevelOf::Lod(v) if self.ty_of(v) == types::F32 => v,
            LevelOf::Lod(v) => {
                let v = self.resize_int(v, types::I32, true);
                self.b.ins().fcvt_from_sint(types::F32, v)
            }
            LevelOf::Grad(dx, dy) => self.lod_from_gradients(d, shape, smp, &dx, &dy)?,
            LevelOf::Base => self.fconst(0.0),
        };
        // fmax/fmin propagate NaN: a NaN λ (undefined) reads level 0.
        let l = self.b.ins().fmax(lambda, smp.lod_min);
        let l = self.b.ins().fmin(l, smp.lod_max);
        let n = self.level_count(d);
        let last = self.b.ins().iadd_imm_s(n, -1);
        let lastf = self.b.ins().fcvt_from_uint(types::F32, last);
        let zero = self.fconst(0.0);
        let l = self.b.ins().fmax(l, zero);
        let l = self.b.ins().fmin(l, lastf);
        let nan = self.b.ins().fcmp(FloatCC::Unordered, l, l);
        let l = self.b.ins().select(nan, zero, l);
        // Nearest: ceil(λ + 1/2) − 1 (λ in [0, q] keeps it in [0, q]).
        let half = self.fconst(0.5);
        let up = self.b.ins().fadd(l, half);
        let up = self.b.ins().ceil(up);
        let up = self.b.ins().fcvt_to_sint_sat(types::I64, up);
        let nearest = self.b.ins().iadd_imm_s(up, -1);
        let zero_i = self.b.ins().iconst(types::I64, 0);
        let nearest = self.b.ins().smax(nearest, zero_i);
        // Linear: floor(λ) and the next level, weighted by frac(λ).
        let fl = self.b.ins().floor(l);
        let lower = self.b.ins().fcvt_to_sint_sat(types::I64, fl);
        let frac = self.b.ins().fsub(l, fl);
        let mip_linear = match smp.known {
            Some(r) => {
                let on = r.bits & sampler::MIP_FILTER_LINEAR != 0 && kind == Kind::Float;
                self.b.ins().iconst(types::I8, i64::from(on))
            }
            None if kind == Kind::Float => {
                let bit = self
                    .b
                    .ins()
                    .band_imm_s(smp.bits, i64::from(sampler::MIP_FILTER_LINEAR));
                self.b.ins().icmp_imm_s(IntCC::NotEqual, bit, 0)
            }
            None => self.b.ins().iconst(types::I8, 0),
        };
        let first = self.b.ins().select(mip_linear, lower, nearest);
        let weight = self.b.ins().select(mip_linear, frac, zero);
        let d1 = self.level_desc(d, first);
        let t1 = self.sample_level(&d1, shape, coords, smp, kind)?;
        if kind != Kind::Float
            || smp
                .known
                .is_some_and(|r| r.bits & sampler::MIP_FILTER_LINEAR == 0)
        {
            return Ok(t1);
        }
        // A second level only when λ falls between two (an integral λ reads one).
        let blend = self.b.create_block();
        let merge = self.b.create_block();
        for _ in 0..4 {
            self.b.append_block_param(merge, types::F32);
        }
        let between = self.b.ins().fcmp(FloatCC::NotEqual, weight, zero);
        let args: Vec<BlockArg> = t1.iter().map(|&v| BlockArg::Value(v)).collect();
        self.b.ins().brif(between, blend, &[], merge, &args);
        self.b.switch_to_block(blend);
        let next = self.b.ins().iadd_imm_s(first, 1);
        let next = self.b.ins().smin(next, last);
        let d2 = self.level_desc(d, next);
        let t2 = self.sample_level(&d2, shape, coords, smp, kind)?;
        let one = self.fconst(1.0);
        let keep = self.b.ins().fsub(one, weight);
        let mut out = Vec::with_capacity(4);
        for k in 0..4 {
            let a = self.b.ins().fmul(keep, t1[k]);
            let b = self.b.ins().fmul(weight, t2[k]);
            out.push(BlockArg::Value(self.b.ins().fadd(a, b)));
        }
        self.b.ins().jump(merge, &out);
        self.b.switch_to_block(merge);
        let p = self.b.block_params(merge).to_vec();
        Ok([p[0], p[1], p[2], p[3]])
    }

    /// The unnormalised coordinate `u` of component `c` and, for repeat modes on normalised
    /// coordinates, the wrapped one (7.3.1–7.3.2 compute them differently).
    fn unnormalise(&mut self, s: Value, size: Value, normalized: Value, address: Value) -> Value {
        let sizef = self.b.ins().fcvt_from_uint(types::F32, size);
        let scaled = self.b.ins().fmul(s, sizef);
        // Repeat: u = (s − floor(s)) × size.
        let fl = self.b.ins().floor(s);
        let frac = self.b.ins().fsub(s, fl);
        let repeat = self.b.ins().fmul(frac, sizef);
        // Mirrored repeat: s' = |s − 2 × rint(0.5 × s)|, u = s' × size.
        let half = self.fconst(0.5);
        let hs = self.b.ins().fmul(s, half);
        let r = self.b.ins().nearest(hs);
        let two = self.fconst(2.0);
        let r2 = self.b.ins().fmul(r, two);
        let m = self.b.ins().fsub(s, r2);
        let m = self.b.ins().fabs(m);
        let mirrored = self.b.ins().fmul(m, sizef);
        let is_repeat =
            self.b
                .ins()
                .icmp_imm_s(IntCC::Equal, address, i64::from(sampler::ADDRESS_REPEAT));
        let is_mirror = self.b.ins().icmp_imm_s(
            IntCC::Equal,
            address,
            i64::from(sampler::ADDRESS_MIRRORED_REPEAT),
        );
        let norm = self.b.ins().select(is_repeat, repeat, scaled);
        let norm = self.b.ins().select(is_mirror, mirrored, norm);
        let is_norm = self.b.ins().icmp_imm_s(IntCC::NotEqual, normalized, 0);
        self.b.ins().select(is_norm, norm, s)
    }

    /// Texel index `i` (i64) of one dimension after the addressing mode, and whether it is
    /// outside the image (the CL_ADDRESS_CLAMP border). Indices are clamped into the image
    /// whatever the mode, so a fetch never leaves it.
    fn address_index(&mut self, i: Value, size: Value, address: Value) -> (Value, Value) {
        let zero = self.b.ins().iconst(types::I64, 0);
        // Repeat wraps (7.3.2: i > size − 1 → i − size; i < 0 → i + size).
        let is_repeat =
            self.b
                .ins()
                .icmp_imm_s(IntCC::Equal, address, i64::from(sampler::ADDRESS_REPEAT));
        let over = self.b.ins().icmp(IntCC::SignedGreaterThanOrEqual, i, size);
        let under = self.b.ins().icmp(IntCC::SignedLessThan, i, zero);
        let minus = self.b.ins().isub(i, size);
        let plus = self.b.ins().iadd(i, size);
        let wrapped = self.b.ins().select(over, minus, i);
        let wrapped = self.b.ins().select(under, plus, wrapped);
        let i = self.b.ins().select(is_repeat, wrapped, i);
        let is_clamp =
            self.b
                .ins()
                .icmp_imm_s(IntCC::Equal, address, i64::from(sampler::ADDRESS_CLAMP));
        let out_hi = self.b.ins().icmp(IntCC::SignedGreaterThanOrEqual, i, size);
        let out_lo = self.b.ins().icmp(IntCC::SignedLessThan, i, zero);
        let outside = self.b.ins().bor(out_hi, out_lo);
        let border = self.b.ins().band(outside, is_clamp);
        let last = self.b.ins().iadd_imm_s(size, -1);
        let c = self.b.ins().smax(i, zero);
        let c = self.b.ins().smin(c, last);
        (c, border)
    }

    /// The border colour (7.3.1, CL_ADDRESS_CLAMP): all zero, alpha 1 for orders without
    /// alpha.
    fn border(&mut self, d: &Desc, kind: Kind) -> [Value; 4] {
        let mut mask = 0u64;
        for o in order::ALL {
            if border_alpha_is_one(o) {
                mask |= 1 << o;
            }
        }
        let m = self.b.ins().iconst(types::I64, mask as i64);
        let o = self.b.ins().uextend(types::I64, d.order);
        let bit = self.b.ins().ushr(m, o);
        let bit = self.b.ins().band_imm_s(bit, 1);
        let z = self.zeros(kind);
        let alpha = match kind {
            Kind::Float => {
                let b = self.b.ins().ireduce(types::I32, bit);
                self.b.ins().fcvt_from_uint(types::F32, b)
            }
            Kind::Int => self.b.ins().ireduce(types::I32, bit),
        };
        [z[0], z[1], z[2], alpha]
    }

    /// The layer of an array image: rint(coordinate) clamped to [0, layers − 1] (7.3).
    fn layer(&mut self, d: &Desc, c: Value) -> Value {
        let r = self.b.ins().nearest(c);
        let i = self.b.ins().fcvt_to_sint_sat(types::I64, r);
        let zero = self.b.ins().iconst(types::I64, 0);
        let last = self.b.ins().iadd_imm_s(d.size[3], -1);
        let i = self.b.ins().smax(i, zero);
        self.b.ins().smin(i, last)
    }

    #[allow(clippy::too_many_arguments)]
    fn sample_nearest(
        &mut self,
        d: &Desc,
        shape: Shape,
        coords: &[Value],
        normalized: Value,
        address: Value,
        kind: Kind,
    ) -> Result<[Value; 4], BuildError> {
        let zero = self.b.ins().iconst(types::I64, 0);
        let mut idx = [zero; 3];
        let mut border = self.b.ins().iconst(types::I8, 0);
        let sp = shape.spatial();
        for c in 0..sp {
            let size = d.size[c];
            let u = self.unnormalise(coords[c], size, normalized, address);
            let f = self.b.ins().floor(u);
            let i = self.b.ins().fcvt_to_sint_sat(types::I64, f);
            let (ci, b) = self.address_index(i, size, address);
            idx[c] = ci;
            border = self.b.ins().bor(border, b);
        }
        if shape.arrayed {
            idx[sp] = self.layer(d, coords[sp]);
        }
        let addr = self.texel_address(d, shape, idx);
        let texel = self.read_texel(d, addr, kind)?;
        let bc = self.border(d, kind);
        Ok([0, 1, 2, 3].map(|k| self.b.ins().select(border, bc[k], texel[k])))
    }

    /// Linear filtering (7.3.1.2 / 7.3.2.2): the 2, 4 or 8 texels around `u − 0.5`, weighted
    /// by the fractions; texels in the CL_ADDRESS_CLAMP border are the border colour.
    fn sample_linear(
        &mut self,
        d: &Desc,
        shape: Shape,
        coords: &[Value],
        normalized: Value,
        address: Value,
    ) -> Result<[Value; 4], BuildError> {
        let sp = shape.spatial();
        let half = self.fconst(0.5);
        let one = self.fconst(1.0);
        // Per dimension: (index, border) of the lower and upper texel, and the upper weight.
        let mut dims = Vec::with_capacity(sp);
        for (&coord, &size) in coords.iter().zip(&d.size).take(sp) {
            let u = self.unnormalise(coord, size, normalized, address);
            let u = self.b.ins().fsub(u, half);
            let f = self.b.ins().floor(u);
            let a = self.b.ins().fsub(u, f);
            let i0 = self.b.ins().fcvt_to_sint_sat(types::I64, f);
            let i1 = self.b.ins().iadd_imm_s(i0, 1);
            let lower = self.address_index(i0, size, address);
            let upper = self.address_index(i1, size, address);
            dims.push((lower, upper, a));
        }
        let layer = shape.arrayed.then(|| self.layer(d, coords[sp]));
        let bc = self.border(d, Kind::Float);
        let mut corners = Vec::new();
        for corner in 0..(1usize << sp) {
            let zero = self.b.ins().iconst(types::I64, 0);
            let mut idx = [zero; 3];
            let mut border = self.b.ins().iconst(types::I8, 0);
            let mut weight = one;
            for (c, &((i0, b0), (i1, b1), a)) in dims.iter().enumerate() {
                let upper = corner >> c & 1 == 1;
                idx[c] = if upper { i1 } else { i0 };
                border = self.b.ins().bor(border, if upper { b1 } else { b0 });
                let w = if upper { a } else { self.b.ins().fsub(one, a) };
                weight = self.b.ins().fmul(weight, w);
            }
            if let Some(l) = layer {
                idx[sp] = l;
            }
            let addr = self.texel_address(d, shape, idx);
            corners.push((addr, border, weight));
        }
        if let Some(o) = self.unorm8x4_order(d) {
            // The four channels blend at once, in the order and with the rounding of the
            // scalar sum below (these orders have alpha, so their border colour is all zero).
            let zero = self.fconst(0.0);
            let zeros = self.b.ins().splat(types::F32X4, zero);
            let mut sum = zeros;
            for &(addr, border, weight) in &corners {
                let texel = self.load_unorm8x4(addr);
                let texel = self.b.ins().select(border, zeros, texel);
                let w = self.b.ins().splat(types::F32X4, weight);
                let v = self.b.ins().fmul(texel, w);
                sum = self.b.ins().fadd(sum, v);
            }
            return Ok(self.place_lanes(sum, o));
        }
        let addrs: Vec<Value> = corners.iter().map(|c| c.0).collect();
        let texels = self.read_texels(d, &addrs, Kind::Float)?;
        let mut sum = [self.fconst(0.0); 4];
        for (&(_, border, weight), texel) in corners.iter().zip(texels) {
            for k in 0..4 {
                let v = self.b.ins().select(border, bc[k], texel[k]);
                let v = self.b.ins().fmul(v, weight);
                sum[k] = self.b.ins().fadd(sum[k], v);
            }
        }
        Ok(sum)
    }
}
