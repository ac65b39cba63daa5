//! Control flow (branches as `phi` edges, traps), calls, constants and integer arithmetic
//! (division with Cranelift's traps, overflow pairs, shifts with masked amounts, bit counts).

use super::*;

impl Translator<'_> {
    /// The LLVM target of branch edge `call` from the current block: the CLIF block itself, or
    /// (`split`) an edge block of its own, so that two edges from one block (`brif` to one
    /// block twice, `br_table` entries) each have their own `phi` predecessor.
    pub(super) fn edge(&mut self, call: &BlockCall, split: bool) -> R<String> {
        let pool = &self.func.dfg.value_lists;
        let block = call.block(pool);
        let args = call
            .args(pool)
            .map(|a| match a {
                BlockArg::Value(v) => Ok(self.v(v)),
                other => Err(format!("block argument {other}")),
            })
            .collect::<R<Vec<String>>>()?;
        let target = format!("b{}", block.as_u32());
        if self.func.dfg.block_params(block).is_empty() {
            return Ok(target);
        }
        let from = if split {
            let label = self.label("edge");
            self.tail.push(LBlock {
                label: label.clone(),
                phis_of: None,
                body: format!("  br label %{target}\n"),
            });
            label
        } else {
            self.cur_label()
        };
        self.incoming
            .entry(block)
            .or_default()
            .push((from.clone(), args));
        Ok(if split { from } else { target })
    }

    /// Branches, returns, traps.
    pub(super) fn control(&mut self, inst: Inst, op: Opcode) -> G {
        let func = self.func;
        let pool = &func.dfg.value_lists;
        match (op, &func.dfg.insts[inst]) {
            (Opcode::Jump, InstructionData::Jump { destination, .. }) => {
                let target = self.edge(destination, false)?;
                self.emit(format!("br label %{target}"));
            }
            (Opcode::Brif, InstructionData::Brif { arg, blocks, .. }) => {
                let c = self.truthy(*arg)?;
                let same = blocks[0].block(pool) == blocks[1].block(pool);
                let then = self.edge(&blocks[0], same)?;
                let els = self.edge(&blocks[1], same)?;
                self.emit(format!("br i1 {c}, label %{then}, label %{els}"));
            }
            (Opcode::BrTable, InstructionData::BranchTable { arg, table, .. }) => {
                let jt = &func.dfg.jump_tables[*table];
                let t = self.ty_of(*arg);
                let ity = llty(t)?;
                let index = self.v(*arg);
                let default = self.edge(&jt.default_block(), true)?;
                let mut cases = String::new();
                for (i, call) in jt.as_slice().iter().enumerate() {
                    // Entries past the index type's range are unreachable.
                    if t.bits() < 64 && (i as u64) >> t.bits() != 0 {
                        break;
                    }
                    let target = self.edge(call, true)?;
                    let _ = write!(cases, " {ity} {i}, label %{target}");
                }
                self.emit(format!("switch {ity} {index}, label %{default} [{cases} ]"));
            }
            (Opcode::Return, _) => {
                let args = self.args(inst);
                match args.as_slice() {
                    [] => self.emit("ret void"),
                    [v] => {
                        let tv = self.tv(*v)?;
                        self.emit(format!("ret {tv}"));
                    }
                    [a, b] => {
                        let st =
                            format!("{{ {}, {} }}", llty(self.ty_of(*a))?, llty(self.ty_of(*b))?);
                        let (ta, tb) = (self.tv(*a)?, self.tv(*b)?);
                        let s = self.let_(format!("insertvalue {st} poison, {ta}, 0"));
                        let s = self.let_(format!("insertvalue {st} {s}, {tb}, 1"));
                        self.emit(format!("ret {st} {s}"));
                    }
                    _ => return Err(why("more than two return values")),
                }
            }
            (Opcode::Trap, _) => {
                self.call_intrinsic("llvm.trap", "void", &[]);
                self.emit("unreachable");
            }
            (Opcode::Trapz | Opcode::Trapnz, InstructionData::CondTrap { arg, .. }) => {
                let tv = self.tv(*arg)?;
                let pred = if op == Opcode::Trapz { "eq" } else { "ne" };
                if self.ty_of(*arg).is_vector() {
                    return Err(why("a vector condition"));
                }
                let c = self.let_(format!("icmp {pred} {tv}, 0"));
                self.trap_if(&c);
            }
            (Opcode::Debugtrap, _) => {
                self.call_intrinsic("llvm.debugtrap", "void", &[]);
            }
            (Opcode::Nop, _) => {}
            // No motion of side effects across it: a compiler-only fence.
            (Opcode::SequencePoint, _) => self.emit("fence syncscope(\"singlethread\") seq_cst"),
            _ => return Err(None),
        }
        Ok(())
    }

    /// Calls and addresses of functions and symbols.
    pub(super) fn calls(&mut self, inst: Inst, op: Opcode) -> G {
        let func = self.func;
        let results = func.dfg.inst_results(inst).to_vec();
        let args = self.args(inst);
        let (callee, sig, args) = match &func.dfg.insts[inst] {
            InstructionData::Call { func_ref, .. } if op == Opcode::Call => {
                if let Some(index) = self.lane_intrinsic_index(*func_ref) {
                    return self.lane_intrinsic(inst, index);
                }
                let callee = self.declare_func(*func_ref)?;
                let sig = &func.dfg.signatures[func.dfg.ext_funcs[*func_ref].signature];
                (callee, sig, args.as_slice())
            }
            InstructionData::CallIndirect { sig_ref, .. } if op == Opcode::CallIndirect => {
                let sig = &func.dfg.signatures[*sig_ref];
                check_signature(sig)?;
                let target = self.tv(args[0])?;
                let p = self.let_(format!("inttoptr {target} to ptr"));
                (p, sig, &args[1..])
            }
            InstructionData::FuncAddr { func_ref, .. } => {
                let f = self.declare_func(*func_ref)?;
                if self.res_ty(inst, 0) != types::I64 {
                    return Err(why("a non-64-bit address"));
                }
                let r = self.res(inst, 0);
                self.emit(format!("{r} = ptrtoint ptr {f} to i64"));
                return Ok(());
            }
            InstructionData::UnaryGlobalValue { global_value, .. } if op == Opcode::SymbolValue => {
                let (sym, off) = self.global_value(*global_value, 0)?;
                if self.res_ty(inst, 0) != types::I64 {
                    return Err(why("a non-64-bit address"));
                }
                let p = if off == 0 {
                    sym
                } else {
                    self.let_(format!("getelementptr i8, ptr {sym}, i64 {off}"))
                };
                let r = self.res(inst, 0);
                self.emit(format!("{r} = ptrtoint ptr {p} to i64"));
                return Ok(());
            }
            _ => return Err(None),
        };
        if args.len() != sig.params.len() {
            return Err(why("arguments that do not match the signature"));
        }
        let operands: Vec<String> = sig
            .params
            .iter()
            .zip(args)
            .map(|(p, &v)| {
                Ok(format!(
                    "{}{} {}",
                    llty(p.value_type)?,
                    ext_attr(p),
                    self.v(v)
                ))
            })
            .collect::<R<_>>()?;
        let ret = return_type(sig)?;
        let call = format!("call {ret} {callee}({})", operands.join(", "));
        match results.as_slice() {
            [] => self.emit(call),
            [r] => {
                let r = self.v(*r);
                self.emit(format!("{r} = {call}"));
            }
            [a, b] => {
                let s = self.let_(call);
                let (a, b) = (self.v(*a), self.v(*b));
                self.emit(format!("{a} = extractvalue {ret} {s}, 0"));
                self.emit(format!("{b} = extractvalue {ret} {s}, 1"));
            }
            _ => return Err(why("more than two results")),
        }
        Ok(())
    }

    /// The index of `f` if it is one of the vectoriser's lane intrinsics
    /// (`vectorize/gather.rs`).
    fn lane_intrinsic_index(&self, f: ir::FuncRef) -> Option<u32> {
        let ExternalName::User(r) = &self.func.dfg.ext_funcs[f].name else {
            return None;
        };
        let u = &self.func.params.user_named_funcs()[*r];
        (u.namespace == crate::vectorize::LANE_INTRINSICS).then_some(u.index)
    }

    /// A lane intrinsic's call: a gather as `llvm.masked.gather` (inactive lanes 0), a scatter
    /// as `llvm.masked.scatter` (which writes overlapping lanes in lane order), the addresses
    /// joined from their two halves and the 32-bit mask made `i1`s.
    fn lane_intrinsic(&mut self, inst: Inst, index: u32) -> G {
        if matches!(
            index,
            crate::vectorize::MASKED_LOAD | crate::vectorize::MASKED_STORE
        ) {
            return self.masked_contiguous(inst, index);
        }
        if index == crate::vectorize::TABLE_GATHER {
            return self.table_gather(inst);
        }
        if let Some(k) = crate::vectorize::DIVIDE_BY_CONSTANT
            .iter()
            .position(|&i| i == index)
        {
            return self.vector_division(inst, k);
        }
        let args = self.args(inst);
        let (lo, hi) = (args[0], args[1]);
        let half = self.ty_of(lo);
        if half.lane_type() != types::I64 || self.ty_of(hi) != half {
            return Err(why(format!("lane intrinsic addresses of type {half}")));
        }
        let h = half.lane_count();
        let n = 2 * h;
        let pointers = |s: &mut Self, v: Value| -> R<String> {
            let a = s.tv(v)?;
            Ok(s.let_(format!("inttoptr {a} to <{h} x ptr>")))
        };
        let (p0, p1) = (pointers(self, lo)?, pointers(self, hi)?);
        let all = mask(0..n);
        let ptrs = self.let_(format!(
            "shufflevector <{h} x ptr> {p0}, <{h} x ptr> {p1}, {all}"
        ));
        let m = *args
            .last()
            .ok_or_else(|| why("a lane intrinsic without a mask"))?;
        if self.ty_of(m).lane_count() != n {
            return Err(why("a lane intrinsic mask of another width"));
        }
        let mt = self.tv(m)?;
        let active = self.let_(format!("icmp ne {mt}, zeroinitializer"));
        let (value_ty, name) = match index {
            crate::vectorize::GATHER => (self.res_ty(inst, 0), "gather"),
            crate::vectorize::SCATTER => (self.ty_of(args[2]), "scatter"),
            other => return Err(why(format!("lane intrinsic {other}"))),
        };
        if value_ty.lane_count() != n {
            return Err(why("lane intrinsic lanes of another width"));
        }
        let vt = llty(value_ty)?;
        let intrinsic = format!("llvm.masked.{name}.{}.v{n}p0", mangle(value_ty));
        if index == crate::vectorize::GATHER {
            let got = self.call_intrinsic(
                &intrinsic,
                &vt,
                &[
                    format!("<{n} x ptr> {ptrs}"),
                    "i32 1".to_owned(),
                    format!("<{n} x i1> {active}"),
                    format!("{vt} zeroinitializer"),
                ],
            );
            let r = self.res(inst, 0);
            self.define_as(&r, &got, value_ty, value_ty)?;
        } else {
            let value = self.tv(args[2])?;
            self.call_intrinsic(
                &intrinsic,
                "void",
                &[
                    value,
                    format!("<{n} x ptr> {ptrs}"),
                    "i32 1".to_owned(),
                    format!("<{n} x i1> {active}"),
                ],
            );
        }
        Ok(())
    }

    /// A gather of a driver table's aligned 64-bit elements (`vectorize/gather.rs`), every
    /// lane read: `llvm.masked.gather` under an all-true mask.
    fn table_gather(&mut self, inst: Inst) -> G {
        let args = self.args(inst);
        let &[addresses] = args.as_slice() else {
            return Err(why("a table gather without one address vector"));
        };
        let at = self.ty_of(addresses);
        let value_ty = self.res_ty(inst, 0);
        let n = at.lane_count();
        if at.lane_type() != types::I64 || value_ty.lane_bits() != 64 || value_ty.lane_count() != n
        {
            return Err(why(format!("a table gather of {value_ty} at {at}")));
        }
        let a = self.tv(addresses)?;
        let ptrs = self.let_(format!("inttoptr {a} to <{n} x ptr>"));
        let vt = llty(value_ty)?;
        let all = vec!["i1 true"; n as usize].join(", ");
        let got = self.call_intrinsic(
            &format!("llvm.masked.gather.{}.v{n}p0", mangle(value_ty)),
            &vt,
            &[
                format!("<{n} x ptr> {ptrs}"),
                "i32 8".to_owned(),
                format!("<{n} x i1> <{all}>"),
                format!("{vt} poison"),
            ],
        );
        let r = self.res(inst, 0);
        self.define_as(&r, &got, value_ty, value_ty)?;
        Ok(())
    }

    /// A masked load or store at consecutive addresses (`vectorize/gather.rs`) as
    /// `llvm.masked.load` (inactive lanes 0) / `llvm.masked.store`, the 32-bit mask made `i1`s.
    fn masked_contiguous(&mut self, inst: Inst, index: u32) -> G {
        let args = self.args(inst);
        let (&address, &m) = args
            .first()
            .zip(args.last())
            .ok_or_else(|| why("a masked access without its operands"))?;
        if self.ty_of(address) != types::I64 {
            return Err(why("a masked access address that is not 64 bits"));
        }
        let value_ty = if index == crate::vectorize::MASKED_LOAD {
            self.res_ty(inst, 0)
        } else {
            self.ty_of(args[1])
        };
        let n = value_ty.lane_count();
        if self.ty_of(m).lane_count() != n {
            return Err(why("a masked access mask of another width"));
        }
        let a = self.tv(address)?;
        let ptr = self.let_(format!("inttoptr {a} to ptr"));
        let mt = self.tv(m)?;
        let active = self.let_(format!("icmp ne {mt}, zeroinitializer"));
        let vt = llty(value_ty)?;
        // As the vector loads and stores: no alignment assumed.
        let align = "i32 1".to_owned();
        if index == crate::vectorize::MASKED_LOAD {
            let got = self.call_intrinsic(
                &format!("llvm.masked.load.{}.p0", mangle(value_ty)),
                &vt,
                &[
                    format!("ptr {ptr}"),
                    align,
                    format!("<{n} x i1> {active}"),
                    format!("{vt} zeroinitializer"),
                ],
            );
            let r = self.res(inst, 0);
            self.define_as(&r, &got, value_ty, value_ty)?;
        } else {
            let value = self.tv(args[1])?;
            self.call_intrinsic(
                &format!("llvm.masked.store.{}.p0", mangle(value_ty)),
                "void",
                &[
                    value,
                    format!("ptr {ptr}"),
                    align,
                    format!("<{n} x i1> {active}"),
                ],
            );
        }
        Ok(())
    }

    pub(super) fn constants(&mut self, inst: Inst, op: Opcode) -> G {
        let t = self.res_ty(inst, 0);
        let r = self.res(inst, 0);
        match &self.func.dfg.insts[inst] {
            InstructionData::UnaryImm { imm, .. } if op == Opcode::Iconst => {
                if t.bits() > 64 || t.is_vector() {
                    return Err(why(format!("iconst of type {t}")));
                }
                let v = sext_bits(imm.bits() as i128, t.bits());
                let ty = llty(t)?;
                self.emit(format!("{r} = add {ty} {v}, 0"));
            }
            // Floats from their bits: every bit kept, NaN payloads included.
            InstructionData::UnaryIeee32 { imm, .. } => {
                self.emit(format!("{r} = bitcast i32 {} to float", imm.bits() as i32));
            }
            InstructionData::UnaryIeee64 { imm, .. } => {
                self.emit(format!("{r} = bitcast i64 {} to double", imm.bits() as i64));
            }
            InstructionData::UnaryConst {
                constant_handle, ..
            } => {
                let bytes = self.func.dfg.constants.get(*constant_handle).as_slice();
                if bytes.len() != t.bytes() as usize {
                    return Err(why("a constant whose size is not its type's"));
                }
                let it = int_shape(t);
                let lane = llty(it.lane_type())?;
                let w = it.lane_type().bytes() as usize;
                let lanes: Vec<String> = bytes
                    .chunks(w)
                    .map(|c| {
                        let v = c
                            .iter()
                            .rev()
                            .fold(0u128, |acc, &b| (acc << 8) | u128::from(b));
                        format!("{lane} {}", sext_bits(v as i128, it.lane_bits()))
                    })
                    .collect();
                let value = if t.is_vector() {
                    format!("<{}>", lanes.join(", "))
                } else {
                    lanes[0].rsplit_once(' ').map_or("0", |(_, v)| v).to_owned()
                };
                let (from, to) = (llty(it)?, llty(t)?);
                self.emit(format!("{r} = bitcast {from} {value} to {to}"));
            }
            _ => return Err(None),
        }
        Ok(())
    }

    /// Zero of type `t`.
    pub(super) fn zero(t: Type) -> &'static str {
        if t.is_vector() {
            "zeroinitializer"
        } else if t.is_float() {
            "0.0"
        } else {
            "0"
        }
    }

    /// Integer arithmetic (lane-generic).
    pub(super) fn int_arith(&mut self, inst: Inst, op: Opcode) -> G {
        let args = self.args(inst);
        let t = self.res_ty(inst, 0);
        let ty = llty(t)?;
        let m = mangle(t);
        let r = self.res(inst, 0);
        let a = self.v(args[0]);
        let b = args.get(1).map(|&v| self.v(v)).unwrap_or_default();
        let binop = |name: &str| format!("{r} = {name} {ty} {a}, {b}");
        let intrinsic2 = |name: &str| {
            (
                format!("llvm.{name}.{m}"),
                [format!("{ty} {a}"), format!("{ty} {b}")],
            )
        };
        use Opcode::*;
        match op {
            Iadd => self.emit(binop("add")),
            Isub => self.emit(binop("sub")),
            Imul => self.emit(binop("mul")),
            Ineg => self.emit(format!("{r} = sub {ty} {}, {a}", Self::zero(t))),
            Iabs => {
                let v = self.call_intrinsic(
                    &format!("llvm.abs.{m}"),
                    &ty,
                    &[format!("{ty} {a}"), "i1 false".into()],
                );
                self.define_as(&r, &v, t, t)?;
            }
            Umulhi | Smulhi => {
                let bits = t.lane_bits();
                if bits > 64 {
                    return Err(why("128-bit lanes"));
                }
                let w = with_lane_bits(t, 2 * bits)?;
                let wt = llty(w)?;
                let ext = if op == Umulhi { "zext" } else { "sext" };
                let wa = self.let_(format!("{ext} {ty} {a} to {wt}"));
                let wb = self.let_(format!("{ext} {ty} {b} to {wt}"));
                let p = self.let_(format!("mul {wt} {wa}, {wb}"));
                let sh = splat_const(w, &bits.to_string())?;
                let hi = self.let_(format!("lshr {wt} {p}, {sh}"));
                self.emit(format!("{r} = trunc {wt} {hi} to {ty}"));
            }
            Smin | Smax | Umin | Umax | UaddSat | UsubSat | SaddSat | SsubSat => {
                let name = match op {
                    Smin => "smin",
                    Smax => "smax",
                    Umin => "umin",
                    Umax => "umax",
                    UaddSat => "uadd.sat",
                    UsubSat => "usub.sat",
                    SaddSat => "sadd.sat",
                    _ => "ssub.sat",
                };
                let (name, operands) = intrinsic2(name);
                let v = self.call_intrinsic(&name, &ty, &operands);
                self.define_as(&r, &v, t, t)?;
            }
            AvgRound => {
                // ceil((a + b) / 2) without overflow: (a | b) - ((a ^ b) >> 1).
                let o = self.let_(format!("or {ty} {a}, {b}"));
                let x = self.let_(format!("xor {ty} {a}, {b}"));
                let one = splat_const(t, "1")?;
                let h = self.let_(format!("lshr {ty} {x}, {one}"));
                self.emit(format!("{r} = sub {ty} {o}, {h}"));
            }
            SqmulRoundSat | X86Pmulhrsw => {
                // (a * b + 2^(n-2)) >> (n-1) in twice the width; only MIN * MIN leaves the
                // range, saturated by sqmul_round_sat and wrapped by pmulhrsw.
                let n = t.lane_bits();
                let w = with_lane_bits(t, 2 * n)?;
                let wt = llty(w)?;
                let wa = self.let_(format!("sext {ty} {a} to {wt}"));
                let wb = self.let_(format!("sext {ty} {b} to {wt}"));
                let p = self.let_(format!("mul {wt} {wa}, {wb}"));
                let round = splat_const(w, &(1u64 << (n - 2)).to_string())?;
                let p = self.let_(format!("add {wt} {p}, {round}"));
                let sh = splat_const(w, &(n - 1).to_string())?;
                let mut p = self.let_(format!("ashr {wt} {p}, {sh}"));
                if op == SqmulRoundSat {
                    let max = splat_const(w, &((1u64 << (n - 1)) - 1).to_string())?;
                    p = self.call_intrinsic(
                        &format!("llvm.smin.{}", mangle(w)),
                        &wt,
                        &[format!("{wt} {p}"), format!("{wt} {max}")],
                    );
                }
                self.emit(format!("{r} = trunc {wt} {p} to {ty}"));
            }
            _ => return Err(None),
        }
        Ok(())
    }

    /// The vectoriser's division of a vector by a constant one (`vectorize/division.rs`),
    /// `k` indexing udiv, urem, sdiv, srem: LLVM's vector division, only by a constant none of
    /// whose lanes traps.
    fn vector_division(&mut self, inst: Inst, k: usize) -> G {
        let args = self.args(inst);
        let &[a, d] = args.as_slice() else {
            return Err(why("a vector division without two operands"));
        };
        let t = self.res_ty(inst, 0);
        if !t.is_vector() || self.ty_of(a) != t || self.ty_of(d) != t {
            return Err(why(format!("a vector division of type {t}")));
        }
        if !self.safe_constant_divisor(d, k >= 2) {
            return Err(why("a vector division by a variable or trapping divisor"));
        }
        let name = ["udiv", "urem", "sdiv", "srem"][k];
        let (ty, a, d) = (llty(t)?, self.v(a), self.v(d));
        let r = self.res(inst, 0);
        self.emit(format!("{r} = {name} {ty} {a}, {d}"));
        Ok(())
    }

    /// Scalar division and remainder, trapping where Cranelift traps (LLVM's are undefined
    /// there).
    pub(super) fn division(&mut self, inst: Inst, op: Opcode) -> G {
        let args = self.args(inst);
        let t = self.res_ty(inst, 0);
        if t.is_vector() {
            return Err(why("vector division"));
        }
        let ty = llty(t)?;
        let (a, b) = (self.v(args[0]), self.v(args[1]));
        let r = self.res(inst, 0);
        let zero = self.let_(format!("icmp eq {ty} {b}, 0"));
        self.trap_if(&zero);
        let min = -(1i128 << (t.bits() - 1));
        match op {
            Opcode::Udiv => self.emit(format!("{r} = udiv {ty} {a}, {b}")),
            Opcode::Urem => self.emit(format!("{r} = urem {ty} {a}, {b}")),
            Opcode::Sdiv => {
                let is_min = self.let_(format!("icmp eq {ty} {a}, {min}"));
                let minus1 = self.let_(format!("icmp eq {ty} {b}, -1"));
                let ovf = self.let_(format!("and i1 {is_min}, {minus1}"));
                self.trap_if(&ovf);
                self.emit(format!("{r} = sdiv {ty} {a}, {b}"));
            }
            Opcode::Srem => {
                // x rem -1 is 0 in Cranelift (no trap for MIN rem -1); x rem 1 is too.
                let minus1 = self.let_(format!("icmp eq {ty} {b}, -1"));
                let d = self.let_(format!("select i1 {minus1}, {ty} 1, {ty} {b}"));
                self.emit(format!("{r} = srem {ty} {a}, {d}"));
            }
            _ => return Err(None),
        }
        Ok(())
    }

    /// Whether vector `v` is a constant with no lane 0 (nor, for a signed division, −1).
    fn safe_constant_divisor(&self, v: Value, signed: bool) -> bool {
        let dfg = &self.func.dfg;
        let Some(def) = dfg.value_def(dfg.resolve_aliases(v)).inst() else {
            return false;
        };
        let InstructionData::UnaryConst {
            opcode: Opcode::Vconst,
            constant_handle,
        } = dfg.insts[def]
        else {
            return false;
        };
        let w = dfg.value_type(v).lane_type().bytes() as usize;
        dfg.constants
            .get(constant_handle)
            .as_slice()
            .chunks(w)
            .all(|lane| {
                lane.iter().any(|&b| b != 0) && !(signed && lane.iter().all(|&b| b == 0xff))
            })
    }

    /// Arithmetic with an overflow flag (`i8` 0/1) or a trap on overflow.
    pub(super) fn overflow(&mut self, inst: Inst, op: Opcode) -> G {
        let args = self.args(inst);
        let t = self.ty_of(args[0]);
        if t.is_vector() {
            return Err(why("vector operands"));
        }
        let ty = llty(t)?;
        let name = match op {
            Opcode::UaddOverflow | Opcode::UaddOverflowTrap => "uadd",
            Opcode::SaddOverflow => "sadd",
            Opcode::UsubOverflow => "usub",
            Opcode::SsubOverflow => "ssub",
            Opcode::UmulOverflow => "umul",
            Opcode::SmulOverflow => "smul",
            _ => return Err(None),
        };
        let (a, b) = (self.tv(args[0])?, self.tv(args[1])?);
        let st = format!("{{ {ty}, i1 }}");
        let s = self.call_intrinsic(
            &format!("llvm.{name}.with.overflow.{}", mangle(t)),
            &st,
            &[a, b],
        );
        let flag = self.let_(format!("extractvalue {st} {s}, 1"));
        let r0 = self.res(inst, 0);
        if op == Opcode::UaddOverflowTrap {
            self.trap_if(&flag);
        } else {
            let r1 = self.res(inst, 1);
            self.emit(format!("{r1} = zext i1 {flag} to i8"));
        }
        self.emit(format!("{r0} = extractvalue {st} {s}, 0"));
        Ok(())
    }

    /// The shift amount `y` as `t`'s lane type in every lane (masked to the lane width when
    /// `mask`, as Cranelift's shifts do; funnel shifts take it modulo the width themselves).
    pub(super) fn shift_amount(&mut self, y: Value, t: Type, mask: bool) -> R<String> {
        let yt = self.ty_of(y);
        if yt.is_vector() {
            return Err("a vector shift amount".into());
        }
        let lane = t.lane_type();
        let (ylt, lt) = (llty(yt)?, llty(lane)?);
        let yv = self.v(y);
        let mut amt = match yt.bits().cmp(&lane.bits()) {
            std::cmp::Ordering::Greater => self.let_(format!("trunc {ylt} {yv} to {lt}")),
            std::cmp::Ordering::Less => self.let_(format!("zext {ylt} {yv} to {lt}")),
            std::cmp::Ordering::Equal => yv,
        };
        if mask {
            amt = self.let_(format!("and {lt} {amt}, {}", lane.bits() - 1));
        }
        if t.is_vector() {
            amt = self.splat(&amt, lane, t)?;
        }
        Ok(amt)
    }

    /// Bitwise operations, shifts, rotates, bit counts.
    pub(super) fn bits(&mut self, inst: Inst, op: Opcode) -> G {
        let args = self.args(inst);
        let t = self.res_ty(inst, 0);
        let it = int_shape(t);
        let ity = llty(it)?;
        let m = mangle(t);
        let r = self.res(inst, 0);
        use Opcode::*;
        match op {
            Band | Bor | Bxor | Bnot => {
                // Cranelift allows them on floats: on the bits.
                let a = self.v(args[0]);
                let a = self.as_int(&a, t)?;
                let v = if op == Bnot {
                    let ones = splat_const(it, "-1")?;
                    self.let_(format!("xor {ity} {a}, {ones}"))
                } else {
                    let b = self.v(args[1]);
                    let b = self.as_int(&b, t)?;
                    let name = match op {
                        Band => "and",
                        Bor => "or",
                        _ => "xor",
                    };
                    self.let_(format!("{name} {ity} {a}, {b}"))
                };
                self.define_as(&r, &v, it, t)?;
            }
            Ishl | Ushr | Sshr => {
                let amt = self.shift_amount(args[1], t, true)?;
                let name = match op {
                    Ishl => "shl",
                    Ushr => "lshr",
                    _ => "ashr",
                };
                let a = self.v(args[0]);
                self.emit(format!("{r} = {name} {ity} {a}, {amt}"));
            }
            Rotl | Rotr => {
                let amt = self.shift_amount(args[1], t, false)?;
                let a = self.v(args[0]);
                let name = if op == Rotl { "fshl" } else { "fshr" };
                let v = self.call_intrinsic(
                    &format!("llvm.{name}.{m}"),
                    &ity,
                    &[
                        format!("{ity} {a}"),
                        format!("{ity} {a}"),
                        format!("{ity} {amt}"),
                    ],
                );
                self.define_as(&r, &v, t, t)?;
            }
            Popcnt | Clz | Ctz | Bswap | Bitrev => {
                let a = self.v(args[0]);
                let (name, extra) = match op {
                    Popcnt => ("ctpop", false),
                    Clz => ("ctlz", true),
                    Ctz => ("cttz", true),
                    Bswap => ("bswap", false),
                    _ => ("bitreverse", false),
                };
                if op == Bswap && t.lane_bits() == 8 {
                    self.define_as(&r, &a, t, t)?;
                    return Ok(());
                }
                let mut operands = vec![format!("{ity} {a}")];
                if extra {
                    operands.push("i1 false".into());
                }
                let v = self.call_intrinsic(&format!("llvm.{name}.{m}"), &ity, &operands);
                self.define_as(&r, &v, t, t)?;
            }
            Cls => {
                // Leading bits equal to the sign bit, not counting it: clz(x ^ (x >> (n-1))) - 1.
                let a = self.v(args[0]);
                let sh = splat_const(t, &(t.lane_bits() - 1).to_string())?;
                let s = self.let_(format!("ashr {ity} {a}, {sh}"));
                let x = self.let_(format!("xor {ity} {a}, {s}"));
                let c = self.call_intrinsic(
                    &format!("llvm.ctlz.{m}"),
                    &ity,
                    &[format!("{ity} {x}"), "i1 false".into()],
                );
                let one = splat_const(t, "1")?;
                self.emit(format!("{r} = sub {ity} {c}, {one}"));
            }
            _ => return Err(None),
        }
        Ok(())
    }
}
