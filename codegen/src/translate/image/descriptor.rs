//! An image's descriptor fields, its mip levels, and the texel a coordinate addresses.

use super::*;

impl Translator<'_, '_, '_> {
    pub(super) fn load_desc(&mut self, image: Value) -> Desc {
        let f = ro();
        // A specialised build knows the format: the switches below fold to one case.
        let known = self
            .env
            .known_image(image)
            .map(|k| (k.order, k.data_type, k.mipmapped));
        let field =
            |t: &mut Self, field: ImageField| t.env.load_image_field(&mut t.b, f, image, field);
        let u32_field = |t: &mut Self, at: ImageField| {
            let v = field(t, at);
            t.b.ins().uextend(types::I64, v)
        };
        Desc {
            image,
            single_level: known.is_some_and(|k| !k.2),
            data: field(self, ImageField::Data),
            size: [
                u32_field(self, ImageField::Width),
                u32_field(self, ImageField::Height),
                u32_field(self, ImageField::Depth),
                u32_field(self, ImageField::ArraySize),
            ],
            row_pitch: field(self, ImageField::RowPitch),
            slice_pitch: field(self, ImageField::SlicePitch),
            element_size: u32_field(self, ImageField::ElementSize),
            order: match known {
                Some((o, _, _)) => self.b.ins().iconst(types::I32, i64::from(o)),
                None => field(self, ImageField::ChannelOrder),
            },
            data_type: match known {
                Some((_, t, _)) => self.b.ins().iconst(types::I32, i64::from(t)),
                None => field(self, ImageField::ChannelDataType),
            },
        }
    }

    /// The image's number of mip levels (i64): `max(1, num_mip_levels)`.
    pub(super) fn level_count(&mut self, d: &Desc) -> Value {
        if d.single_level {
            return self.b.ins().iconst(types::I64, 1);
        }
        let n = self
            .env
            .load_image_field(&mut self.b, ro(), d.image, ImageField::NumMipLevels);
        let n = self.b.ins().uextend(types::I64, n);
        let one = self.b.ins().iconst(types::I64, 1);
        self.b.ins().umax(n, one)
    }

    /// The descriptor of mip level `level` (i64, in `[0, levels)`) of image `d` (level 0's):
    /// its format, data, sizes and pitches from the level table.
    pub(super) fn level_desc(&mut self, d: &Desc, level: Value) -> Desc {
        let f = ro();
        let entry = self.env.mip_level_entry(&mut self.b, d.image, level);
        let field = |t: &mut Self, field: MipLevelField| {
            t.env.load_mip_level_field(&mut t.b, f, entry, field)
        };
        let offset = field(self, MipLevelField::Offset);
        let row_pitch = field(self, MipLevelField::RowPitch);
        let slice_pitch = field(self, MipLevelField::SlicePitch);
        let mut size = d.size;
        for (c, which) in [
            MipLevelField::Width,
            MipLevelField::Height,
            MipLevelField::Depth,
        ]
        .into_iter()
        .enumerate()
        {
            let v = field(self, which);
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
    pub(super) fn is_zero_constant(&self, id: Word) -> bool {
        let Some(g) = self.m.global(id) else {
            return false;
        };
        match g.opcode() {
            Op::ConstantNull => true,
            Op::Constant => {
                let Ok(bits) = g.constant_bits() else {
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

    /// The level named by image operands `ops`.
    pub(super) fn level_of(&mut self, ops: &ImageOperands) -> Result<LevelOf, BuildError> {
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
    pub(super) fn at_level(&mut self, d: &Desc, level: &LevelOf) -> Result<Desc, BuildError> {
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
    pub(super) fn int_level(&mut self, lod: Value) -> Value {
        if self.ty_of(lod) == types::F32 {
            self.b.ins().fcvt_to_sint_sat(types::I64, lod)
        } else {
            self.resize_int(lod, types::I64, true)
        }
    }

    /// The extent (i64) of coordinate component `c` of an image of `shape`: width, height,
    /// depth, or the array size for the layer.
    pub(super) fn extent(&self, d: &Desc, shape: Shape, c: usize) -> Value {
        if shape.arrayed && c == shape.spatial() {
            d.size[3]
        } else {
            d.size[c]
        }
    }

    /// The components of `inst`'s coordinate `coordinate`: integers, or (`float_allowed`, for
    /// sampled reads) f32s.
    pub(super) fn coordinates(
        &mut self,
        inst: Inst<'_>,
        coordinate: Word,
        float_allowed: bool,
    ) -> Result<Vec<Value>, BuildError> {
        let leaves = self.value(coordinate)?.flat();
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
    pub(super) fn clamped_texel(
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
    pub(super) fn inside(
        &mut self,
        d: &Desc,
        shape: Shape,
        coords: &[Value],
    ) -> Result<Value, BuildError> {
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
    pub(super) fn texel_address(&mut self, d: &Desc, shape: Shape, xyz: [Value; 3]) -> Value {
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
}
