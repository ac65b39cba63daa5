//! Reads: texels loaded and converted from the stored channels (environment spec 7.4, 7.7),
//! sRGB, and `OpImageRead`.

use super::*;

impl Translator<'_, '_, '_> {
    /// Stored channels of `order` (1 to 4), from a table of 2-bit entries.
    fn channel_count(&mut self, order: Value) -> Value {
        self.channel_count_of(order, stored_components)
    }

    /// Channels of `order` that `components` lists (1 to 4), from a table of 2-bit entries.
    pub(super) fn channel_count_of(
        &mut self,
        order: Value,
        components: fn(u32) -> &'static [usize],
    ) -> Value {
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
    pub(super) fn switch_values(
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

    pub(super) fn fconst(&mut self, v: f32) -> Value {
        self.b.ins().f32const(v)
    }

    /// Reads the texel at `addr` as RGBA of `kind`: 7.4 conversion of each stored channel,
    /// then 7.7 placement (missing R, G, B are 0, missing alpha 1; intensity in all four,
    /// luminance in R, G, B; sRGB decoded).
    pub(super) fn read_texel(
        &mut self,
        d: &Desc,
        addr: Value,
        kind: Kind,
    ) -> Result<[Value; 4], BuildError> {
        Ok(self.read_texels(d, &[addr], kind)?[0])
    }

    /// [`Translator::read_texel`] for several texels of one image at once (the corners of a
    /// linear filter): one switch on the data type and one on the order serve them all.
    pub(super) fn read_texels(
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
    pub(super) fn unorm8x4_order(&self, d: &Desc) -> Option<u32> {
        let dt = self.int_constant(d.data_type)?;
        let o = u32::try_from(self.int_constant(d.order)?).ok()?;
        (dt == i64::from(data_type::UNORM_INT8)
            && matches!(o, order::RGBA | order::BGRA | order::ARGB | order::ABGR))
        .then_some(o)
    }

    /// The four UNORM_INT8 channels at `addr`, in memory order, as an f32x4 of c / 255 each
    /// rounded once (what the scalar path's exact table holds).
    pub(super) fn load_unorm8x4(&mut self, addr: Value) -> Value {
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
    pub(super) fn place_lanes(&mut self, v: Value, o: u32) -> [Value; 4] {
        let mut rgba = [v; 4];
        for (j, &k) in stored_components(o).iter().enumerate() {
            rgba[k] = self.b.ins().extractlane(v, j as u8);
        }
        rgba
    }

    /// Stores RGBA (already in `o`'s memory order) as four UNORM_INT8 channels in one 32-bit
    /// store, converted as [`Translator::float_to_norm`] converts each (NaN gives 0: the
    /// saturating conversion maps it there).
    pub(super) fn store_unorm8x4(&mut self, addr: Value, stored: &[Value]) {
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

    pub(super) fn zeros(&mut self, kind: Kind) -> Vec<Value> {
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
                        Table::Unorm8
                    } else {
                        Table::Snorm8
                    };
                    let raw = self.b.ins().uload8(types::I64, f, a, 0);
                    let at = self.b.ins().imul_imm_s(raw, 4);
                    let base = self.env.table_address(&mut self.b, table)?;
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
    pub(super) fn linear_to_srgb(&mut self, y: Value) -> Result<Value, BuildError> {
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
    pub(super) fn kind_of(&self, ty: Word) -> Kind {
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
    pub(super) fn define_color(
        &mut self,
        inst: Inst<'_>,
        rgba: [Value; 4],
    ) -> Result<(), BuildError> {
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

    pub(super) fn image_read(&mut self, inst: Inst<'_>) -> Result<(), BuildError> {
        let access = inst.image_read()?;
        let shape = self.image_shape(inst, access.image)?;
        let image = self.scalar(access.image)?;
        let coords = self.coordinates(inst, access.coordinate, false)?;
        let kind = self.kind_of(self.result_type(inst)?);
        let level = self.level_of(&access.operands)?;
        let d = self.load_desc(image);
        let d = self.at_level(&d, &level)?;
        let xyz = self.clamped_texel(&d, shape, &coords)?;
        let addr = self.texel_address(&d, shape, xyz);
        let rgba = self.read_texel(&d, addr, kind)?;
        self.define_color(inst, rgba)
    }
}
