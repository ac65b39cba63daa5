//! Sampled reads (7.1–7.3): samplers, addressing, nearest and linear filtering, mip levels.

use super::*;

impl Translator<'_, '_, '_> {
    /// `OpImageSampleExplicitLod`: a read through a sampler (7.1–7.3: normalised or not,
    /// the addressing mode, nearest or linear filtering) of the level its operands name.
    pub(super) fn image_sample(&mut self, inst: Inst<'_>) -> Result<(), BuildError> {
        let access = inst.image_read()?;
        let shape = self.image_shape(inst, access.image)?;
        let pair = self.value(access.image)?;
        let (image, smp) = match pair.children()? {
            [Val::S(i), Val::S(s)] => (*i, *s),
            _ => return err("error: OpImageSampleExplicitLod needs a sampled image\n"),
        };
        let coords = self.coordinates(inst, access.coordinate, true)?;
        let kind = self.kind_of(self.result_type(inst)?);
        let level = self.level_of(&access.operands)?;
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
        if let Some(r) = self.env.known_sampler(smp) {
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
                .env
                .load_sampler_field(&mut self.b, f, smp, SamplerField::Bits),
            known: None,
            lod_min: self
                .env
                .load_sampler_field(&mut self.b, f, smp, SamplerField::LodMin),
            lod_max: self
                .env
                .load_sampler_field(&mut self.b, f, smp, SamplerField::LodMax),
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
        let normalized = self.b.ins().band_imm_s(
            smp.bits,
            i64::from(self.env.sampler_encoding().normalized_coords),
        );
        let address = self.b.ins().band_imm_s(
            smp.bits,
            i64::from(self.env.sampler_encoding().address_mask),
        );
        // A literal or specialised sampler: its filter is known, only that path is emitted.
        if let Some(r) = smp.known {
            let linear =
                r.bits & self.env.sampler_encoding().filter_linear != 0 && kind == Kind::Float;
            return if linear {
                self.sample_linear(d, shape, coords, normalized, address)
            } else {
                self.sample_nearest(d, shape, coords, normalized, address, kind)
            };
        }
        let linear_bits = self.b.ins().band_imm_s(
            smp.bits,
            i64::from(self.env.sampler_encoding().filter_linear),
        );
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
        let normalized = self.b.ins().band_imm_s(
            smp.bits,
            i64::from(self.env.sampler_encoding().normalized_coords),
        );
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
                let on = r.bits & self.env.sampler_encoding().mip_filter_linear != 0
                    && kind == Kind::Float;
                self.b.ins().iconst(types::I8, i64::from(on))
            }
            None if kind == Kind::Float => {
                let bit = self.b.ins().band_imm_s(
                    smp.bits,
                    i64::from(self.env.sampler_encoding().mip_filter_linear),
                );
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
                .is_some_and(|r| r.bits & self.env.sampler_encoding().mip_filter_linear == 0)
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
        let is_repeat = self.b.ins().icmp_imm_s(
            IntCC::Equal,
            address,
            i64::from(self.env.sampler_encoding().address_repeat),
        );
        let is_mirror = self.b.ins().icmp_imm_s(
            IntCC::Equal,
            address,
            i64::from(self.env.sampler_encoding().address_mirrored_repeat),
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
        let is_repeat = self.b.ins().icmp_imm_s(
            IntCC::Equal,
            address,
            i64::from(self.env.sampler_encoding().address_repeat),
        );
        let over = self.b.ins().icmp(IntCC::SignedGreaterThanOrEqual, i, size);
        let under = self.b.ins().icmp(IntCC::SignedLessThan, i, zero);
        let minus = self.b.ins().isub(i, size);
        let plus = self.b.ins().iadd(i, size);
        let wrapped = self.b.ins().select(over, minus, i);
        let wrapped = self.b.ins().select(under, plus, wrapped);
        let i = self.b.ins().select(is_repeat, wrapped, i);
        let is_clamp = self.b.ins().icmp_imm_s(
            IntCC::Equal,
            address,
            i64::from(self.env.sampler_encoding().address_clamp),
        );
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
