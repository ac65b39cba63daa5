//! Lane operations (splats, shuffles, narrowing and widening), memory, atomics and the
//! stack frame.

use super::*;

impl Translator<'_> {
    /// Lane operations: splats, lane access, shuffles, narrowing and widening (lane-generic
    /// unless CLIF defines them for 128 bits only).
    pub(super) fn lanes(&mut self, inst: Inst, op: Opcode) -> G {
        let func = self.func;
        let args = self.args(inst);
        let rt = self.res_ty(inst, 0);
        let rty = llty(rt)?;
        let r = self.res(inst, 0);
        let t = self.ty_of(args[0]);
        let ty = llty(t)?;
        let a = self.v(args[0]);
        use Opcode::*;
        match (op, &func.dfg.insts[inst]) {
            (Splat, _) => {
                let v = self.splat(&a, t, rt)?;
                self.define_as(&r, &v, rt, rt)?;
            }
            (ScalarToVector, _) => {
                self.emit(format!(
                    "{r} = insertelement {rty} zeroinitializer, {ty} {a}, i64 0"
                ));
            }
            (Insertlane, InstructionData::TernaryImm8 { imm, .. }) => {
                let lane = *imm;
                let b = self.tv(args[1])?;
                self.emit(format!("{r} = insertelement {ty} {a}, {b}, i64 {lane}"));
            }
            (Extractlane, InstructionData::BinaryImm8 { imm, .. }) => {
                let lane = *imm;
                self.emit(format!("{r} = extractelement {ty} {a}, i64 {lane}"));
            }
            (Shuffle, InstructionData::Shuffle { imm, .. }) => {
                let bytes = func
                    .dfg
                    .immediates
                    .get(*imm)
                    .ok_or_else(|| why("a missing immediate"))?
                    .as_slice();
                let n = t.lane_count();
                if t.lane_type() != types::I8 || bytes.len() != n as usize {
                    return Err(why(format!("a {}-byte mask on {t}", bytes.len())));
                }
                // Indices past both operands give 0: shuffle a valid lane, then select zero.
                let valid: Vec<bool> = bytes.iter().map(|&i| u32::from(i) < 2 * n).collect();
                let idx = mask(bytes.iter().map(|&i| {
                    if u32::from(i) < 2 * n {
                        u32::from(i)
                    } else {
                        0
                    }
                }));
                let b = self.v(args[1]);
                let s = self.let_(format!("shufflevector {ty} {a}, {ty} {b}, {idx}"));
                if valid.iter().all(|&v| v) {
                    self.define_as(&r, &s, t, t)?;
                } else {
                    let keep: Vec<String> = valid.iter().map(|&v| format!("i1 {v}")).collect();
                    self.emit(format!(
                        "{r} = select <{n} x i1> <{}>, {ty} {s}, {ty} zeroinitializer",
                        keep.join(", ")
                    ));
                }
            }
            (Swizzle | X86Pshufb, _) => {
                // Lane by lane: swizzle gives 0 for an index >= the lane count, pshufb for an
                // index with its top bit set (else it takes the index modulo 16).
                let n = t.lane_count();
                if t.lane_type() != types::I8 || !n.is_power_of_two() {
                    return Err(why(format!("type {t}")));
                }
                let b = self.v(args[1]);
                let mut acc = "zeroinitializer".to_owned();
                for i in 0..n {
                    let y = self.let_(format!("extractelement {ty} {b}, i64 {i}"));
                    let valid = if op == Swizzle {
                        self.let_(format!("icmp ult i8 {y}, {n}"))
                    } else {
                        self.let_(format!("icmp sge i8 {y}, 0"))
                    };
                    let m = if op == Swizzle { n - 1 } else { 15.min(n - 1) };
                    let idx = self.let_(format!("and i8 {y}, {m}"));
                    let e = self.let_(format!("extractelement {ty} {a}, i8 {idx}"));
                    let v = self.let_(format!("select i1 {valid}, i8 {e}, i8 0"));
                    acc = self.let_(format!("insertelement {ty} {acc}, i8 {v}, i64 {i}"));
                }
                self.define_as(&r, &acc, t, t)?;
            }
            (Snarrow, _)
                if t.lane_type().is_int()
                    && args[..2]
                        .iter()
                        .all(|&v| self.masks.contains(&self.func.dfg.resolve_aliases(v))) =>
            {
                // Two halves of a lane mask joined as booleans: LLVM joins them in mask
                // registers (`kunpckbw`) where the saturating narrowing went through vectors.
                let n = t.lane_count();
                let bits: Vec<String> = args[..2]
                    .iter()
                    .map(|&v| {
                        let v = self.v(v);
                        self.let_(format!("icmp slt {ty} {v}, zeroinitializer"))
                    })
                    .collect();
                let idx = mask(0..2 * n);
                let joined = self.let_(format!(
                    "shufflevector <{n} x i1> {}, <{n} x i1> {}, {idx}",
                    bits[0], bits[1]
                ));
                self.emit(format!("{r} = sext <{} x i1> {joined} to {rty}", 2 * n));
            }
            (Snarrow | Unarrow | Uunarrow, _) => {
                let n = t.lane_count();
                let w = t.lane_bits();
                let h = w / 2;
                let narrow = llty(with_lane_bits(t, h)?)?;
                let m = mangle(t);
                let smax = (1i128 << (h - 1)) - 1;
                let smin = -(1i128 << (h - 1));
                let umax = (1i128 << h) - 1;
                let mut halves = Vec::new();
                for &v in &args[..2] {
                    let v = self.v(v);
                    let clamp = |s: &mut Self, name: &str, x: &str, bound: i128| -> R<String> {
                        let c = splat_const(t, &bound.to_string())?;
                        Ok(s.call_intrinsic(
                            &format!("llvm.{name}.{m}"),
                            &ty,
                            &[format!("{ty} {x}"), format!("{ty} {c}")],
                        ))
                    };
                    let c = match op {
                        Snarrow => {
                            let c = clamp(self, "smin", &v, smax)?;
                            clamp(self, "smax", &c, smin)?
                        }
                        Unarrow => {
                            let c = clamp(self, "smax", &v, 0)?;
                            clamp(self, "smin", &c, umax)?
                        }
                        _ => clamp(self, "umin", &v, umax)?,
                    };
                    halves.push(self.let_(format!("trunc {ty} {c} to {narrow}")));
                }
                let idx = mask(0..2 * n);
                self.emit(format!(
                    "{r} = shufflevector {narrow} {}, {narrow} {}, {idx}",
                    halves[0], halves[1]
                ));
            }
            (SwidenLow | SwidenHigh | UwidenLow | UwidenHigh | FvpromoteLow, _) => {
                let half = rt.lane_count();
                let start = if matches!(op, SwidenHigh | UwidenHigh) {
                    half
                } else {
                    0
                };
                let ht = llty(with_lanes(t, half)?)?;
                let idx = mask(start..start + half);
                if matches!(op, SwidenLow | SwidenHigh)
                    && t.lane_type().is_int()
                    && self.masks.contains(&self.func.dfg.resolve_aliases(args[0]))
                {
                    // Half of a lane mask, split as booleans: LLVM keeps them in a mask
                    // register (`kshiftrw`) where the split of integer lanes went lane by lane.
                    let n = t.lane_count();
                    let bits = self.let_(format!("icmp slt {ty} {a}, zeroinitializer"));
                    // Through an integer: as a vector shuffle, InstCombine moves the compare
                    // after the split again.
                    let word = self.let_(format!("bitcast <{n} x i1> {bits} to i{n}"));
                    let shifted = self.let_(format!("lshr i{n} {word}, {start}"));
                    let narrow = self.let_(format!("trunc i{n} {shifted} to i{half}"));
                    let h = self.let_(format!("bitcast i{half} {narrow} to <{half} x i1>"));
                    self.emit(format!("{r} = sext <{half} x i1> {h} to {rty}"));
                    return Ok(());
                }
                let h = self.let_(format!("shufflevector {ty} {a}, {ty} poison, {idx}"));
                let ext = match op {
                    SwidenLow | SwidenHigh => "sext",
                    UwidenLow | UwidenHigh => "zext",
                    _ => "fpext",
                };
                self.emit(format!("{r} = {ext} {ht} {h} to {rty}"));
            }
            (Fvdemote, _) => {
                let n = t.lane_count();
                let ft = llty(with_lanes(types::F32X4, n)?)?;
                let d = self.let_(format!("fptrunc {ty} {a} to {ft}"));
                let idx = mask(0..rt.lane_count());
                if rt.lane_count() != 2 * n {
                    return Err(why(format!("from {t} to {rt}")));
                }
                self.emit(format!(
                    "{r} = shufflevector {ft} {d}, {ft} zeroinitializer, {idx}"
                ));
            }
            (IaddPairwise, _) => {
                let n = t.lane_count();
                let b = self.v(args[1]);
                let evens = mask((0..n).map(|i| 2 * i));
                let odds = mask((0..n).map(|i| 2 * i + 1));
                let e = self.let_(format!("shufflevector {ty} {a}, {ty} {b}, {evens}"));
                let o = self.let_(format!("shufflevector {ty} {a}, {ty} {b}, {odds}"));
                self.emit(format!("{r} = add {ty} {e}, {o}"));
            }
            (X86Pmaddubsw, _) => {
                // Signed bytes of x times unsigned bytes of y, adjacent pairs added with signed
                // saturation (each product fits in i16).
                let n = t.lane_count();
                let half = n / 2;
                let b = self.v(args[1]);
                let ht = llty(with_lanes(t, half)?)?;
                let mut products = Vec::new();
                for parity in 0..2 {
                    let idx = mask((0..half).map(|i| 2 * i + parity));
                    let xs = self.let_(format!("shufflevector {ty} {a}, {ty} poison, {idx}"));
                    let ys = self.let_(format!("shufflevector {ty} {b}, {ty} poison, {idx}"));
                    let xs = self.let_(format!("sext {ht} {xs} to {rty}"));
                    let ys = self.let_(format!("zext {ht} {ys} to {rty}"));
                    products.push(self.let_(format!("mul {rty} {xs}, {ys}")));
                }
                let v = self.call_intrinsic(
                    &format!("llvm.sadd.sat.{}", mangle(rt)),
                    &rty,
                    &[
                        format!("{rty} {}", products[0]),
                        format!("{rty} {}", products[1]),
                    ],
                );
                self.define_as(&r, &v, rt, rt)?;
            }
            _ => return Err(None),
        }
        Ok(())
    }

    /// A `ptr` to the CLIF address `p` (an `i64`) plus `offset`.
    pub(super) fn address(&mut self, p: Value, offset: i64) -> R<String> {
        if self.ty_of(p) != types::I64 {
            return Err("a non-64-bit address".into());
        }
        let v = self.v(p);
        let ptr = self.let_(format!("inttoptr i64 {v} to ptr"));
        Ok(if offset == 0 {
            ptr
        } else {
            self.let_(format!("getelementptr i8, ptr {ptr}, i64 {offset}"))
        })
    }

    /// The alignment LLVM may assume: the access's lane size with the `aligned` flag (Cranelift
    /// promises alignment to the accessed size; the lane size is the safe part of that for
    /// vectors), else none.
    pub(super) fn alignment(&self, inst: Inst, t: Type) -> R<u32> {
        let flags = self.func.dfg.insts[inst]
            .memflags_data(&self.func.dfg)
            .unwrap_or_else(ir::MemFlagsData::new);
        if flags.explicit_endianness() == Some(Endianness::Big) {
            return Err("a big-endian access".into());
        }
        Ok(if flags.aligned() {
            t.lane_type().bytes()
        } else {
            1
        })
    }

    /// Loads, stores, stack addresses.
    pub(super) fn memory(&mut self, inst: Inst, op: Opcode) -> G {
        let func = self.func;
        let args = self.args(inst);
        use Opcode::*;
        if let InstructionData::StackAddr {
            stack_slot, offset, ..
        } = func.dfg.insts[inst]
        {
            if self.res_ty(inst, 0) != types::I64 {
                return Err(why("a non-64-bit address"));
            }
            let off = i64::from(i32::from(offset));
            let p = self.let_(format!(
                "getelementptr i8, ptr %ss{}, i64 {off}",
                stack_slot.as_u32()
            ));
            let r = self.res(inst, 0);
            self.emit(format!("{r} = ptrtoint ptr {p} to i64"));
            return Ok(());
        }
        let offset = i64::from(
            func.dfg.insts[inst]
                .load_store_offset()
                .ok_or_else(|| why("no offset"))?,
        );
        match op {
            Store | Istore8 | Istore16 | Istore32 => {
                let t = self.ty_of(args[0]);
                let p = self.address(args[1], offset)?;
                let (st, v) = match op {
                    Store => (t, self.v(args[0])),
                    _ => {
                        let bits = match op {
                            Istore8 => 8,
                            Istore16 => 16,
                            _ => 32,
                        };
                        let nt = with_lane_bits(t, bits)?;
                        let a = self.tv(args[0])?;
                        let v = self.let_(format!("trunc {a} to {}", llty(nt)?));
                        (nt, v)
                    }
                };
                let align = self.alignment(inst, st)?;
                self.emit(format!("store {} {v}, ptr {p}, align {align}", llty(st)?));
            }
            _ => {
                let rt = self.res_ty(inst, 0);
                let (mem, ext) = match op {
                    Load => (rt, ""),
                    Uload8 | Sload8 | Uload16 | Sload16 | Uload32 | Sload32 => {
                        let bits = match op {
                            Uload8 | Sload8 => 8,
                            Uload16 | Sload16 => 16,
                            _ => 32,
                        };
                        let s = matches!(op, Sload8 | Sload16 | Sload32);
                        (with_lane_bits(rt, bits)?, if s { "sext" } else { "zext" })
                    }
                    Uload8x8 | Sload8x8 | Uload16x4 | Sload16x4 | Uload32x2 | Sload32x2 => {
                        let s = matches!(op, Sload8x8 | Sload16x4 | Sload32x2);
                        (
                            with_lane_bits(rt, rt.lane_bits() / 2)?,
                            if s { "sext" } else { "zext" },
                        )
                    }
                    _ => return Err(None),
                };
                let p = self.address(args[0], offset)?;
                let align = self.alignment(inst, mem)?;
                let (mty, rty) = (llty(mem)?, llty(rt)?);
                let r = self.res(inst, 0);
                if ext.is_empty() {
                    self.emit(format!("{r} = load {mty}, ptr {p}, align {align}"));
                } else {
                    let v = self.let_(format!("load {mty}, ptr {p}, align {align}"));
                    self.emit(format!("{r} = {ext} {mty} {v} to {rty}"));
                }
            }
        }
        Ok(())
    }

    /// Atomics: sequentially consistent, naturally aligned, as Cranelift's.
    pub(super) fn atomics(&mut self, inst: Inst, op: Opcode) -> G {
        let func = self.func;
        let args = self.args(inst);
        let scalar = |t: Type| -> G {
            if t.is_vector() || t.is_float() || t.bits() > 64 {
                Err(why(format!("type {t}")))
            } else {
                Ok(())
            }
        };
        match (op, &func.dfg.insts[inst]) {
            (Opcode::AtomicRmw, InstructionData::AtomicRmw { op: rmw, .. }) => {
                let t = self.ty_of(args[1]);
                scalar(t)?;
                let name = match rmw {
                    AtomicRmwOp::Add => "add",
                    AtomicRmwOp::Sub => "sub",
                    AtomicRmwOp::And => "and",
                    AtomicRmwOp::Nand => "nand",
                    AtomicRmwOp::Or => "or",
                    AtomicRmwOp::Xor => "xor",
                    AtomicRmwOp::Xchg => "xchg",
                    AtomicRmwOp::Umin => "umin",
                    AtomicRmwOp::Umax => "umax",
                    AtomicRmwOp::Smin => "min",
                    AtomicRmwOp::Smax => "max",
                };
                let p = self.address(args[0], 0)?;
                let x = self.tv(args[1])?;
                let r = self.res(inst, 0);
                self.emit(format!(
                    "{r} = atomicrmw {name} ptr {p}, {x} seq_cst, align {}",
                    t.bytes()
                ));
            }
            (Opcode::AtomicCas, _) => {
                let t = self.ty_of(args[1]);
                scalar(t)?;
                let p = self.address(args[0], 0)?;
                let (e, n) = (self.tv(args[1])?, self.tv(args[2])?);
                let s = self.let_(format!(
                    "cmpxchg ptr {p}, {e}, {n} seq_cst seq_cst, align {}",
                    t.bytes()
                ));
                let r = self.res(inst, 0);
                self.emit(format!("{r} = extractvalue {{ {}, i1 }} {s}, 0", llty(t)?));
            }
            (Opcode::AtomicLoad, _) => {
                let t = self.res_ty(inst, 0);
                scalar(t)?;
                let p = self.address(args[0], 0)?;
                let r = self.res(inst, 0);
                self.emit(format!(
                    "{r} = load atomic {}, ptr {p} seq_cst, align {}",
                    llty(t)?,
                    t.bytes()
                ));
            }
            (Opcode::AtomicStore, _) => {
                let t = self.ty_of(args[0]);
                scalar(t)?;
                let p = self.address(args[1], 0)?;
                let x = self.tv(args[0])?;
                self.emit(format!(
                    "store atomic {x}, ptr {p} seq_cst, align {}",
                    t.bytes()
                ));
            }
            (Opcode::Fence, _) => self.emit("fence seq_cst"),
            _ => return Err(None),
        }
        Ok(())
    }

    /// The frame pointer and stack pointer: Ferrocl classifies generic pointers into the
    /// current frame by [SP, FP), which holds for LLVM's frames too (`"frame-pointer"="all"`,
    /// static allocas between them).
    pub(super) fn frame(&mut self, inst: Inst, op: Opcode) -> G {
        if self.res_ty(inst, 0) != types::I64 {
            return Err(why("a non-64-bit pointer"));
        }
        let r = self.res(inst, 0);
        if op == Opcode::GetFramePointer {
            let f = self.call_intrinsic("llvm.frameaddress.p0", "ptr", &["i32 0".into()]);
            self.emit(format!("{r} = ptrtoint ptr {f} to i64"));
        } else {
            if self.metadata.is_empty() {
                self.metadata.push("!0 = !{!\"rsp\"}".into());
            }
            let v = self.call_intrinsic("llvm.read_register.i64", "i64", &["metadata !0".into()]);
            self.define_as(&r, &v, types::I64, types::I64)?;
        }
        Ok(())
    }
}
