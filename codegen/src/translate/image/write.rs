//! Writes: `OpImageWrite`, values converted to the stored format (7.4, 7.7).

use super::*;

impl Translator<'_, '_, '_> {
    pub(super) fn image_write(&mut self, inst: Inst<'_>) -> Result<(), BuildError> {
        let access = inst.image_write()?;
        let shape = self.image_shape(inst, access.image)?;
        let image = self.scalar(access.image)?;
        let coords = self.coordinates(inst, access.coordinate, false)?;
        let kind = self.kind_of(self.m.type_of(access.texel).unwrap_or(0));
        let texel = self.value(access.texel)?.flat();
        let level = self.level_of(&access.operands)?;
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
}
