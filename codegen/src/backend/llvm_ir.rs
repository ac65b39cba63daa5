//! CLIF → LLVM 15 textual IR for the wide backend: one module defining one function with the
//! CLIF function's signature and body, wide vector types included. Owns the meaning of every
//! CLIF opcode in LLVM terms — exactly Cranelift's x86-64 results, bit for bit (traps where
//! Cranelift traps, never LLVM undefined behaviour or poison where Cranelift has a value) — and
//! the spelling of external symbols the loader maps back to Cranelift relocation targets:
//! `@__ferrocl_u{namespace}_{index}` for user names, the JIT's libcall symbols for libcalls.
//! What it cannot express exactly is refused with a reason, and the caller keeps Cranelift.

use std::collections::{BTreeMap, HashMap};
use std::fmt::Write as _;

use cranelift_codegen::ir::condcodes::{FloatCC, IntCC};
use cranelift_codegen::ir::{
    self, types, AbiParam, ArgumentExtension, ArgumentPurpose, AtomicRmwOp, Block, BlockArg,
    BlockCall, Endianness, ExternalName, GlobalValueData, Inst, InstructionData, Opcode, Type,
    Value,
};
use cranelift_codegen::isa::CallConv;

/// LLVM 15 textual IR (opaque pointers, `ptr`) of one module that defines `symbol` with
/// `func`'s body and signature, or why this function cannot go through the wide backend.
pub(crate) fn translate(func: &ir::Function, symbol: &str) -> Result<String, String> {
    let mut t = Translator::new(func);
    t.function(symbol)?;
    Ok(t.finish())
}

type R<T = ()> = Result<T, String>;

/// One LLVM basic block being written.
struct LBlock {
    label: String,
    /// The CLIF block whose parameters become this block's `phi`s.
    phis_of: Option<Block>,
    body: String,
}

/// What a global symbol of the module is declared as.
enum Decl {
    /// A function, with its full declaration line.
    Func(String),
    /// Data: `external global i8`.
    Data,
}

struct Translator<'a> {
    func: &'a ir::Function,
    /// Blocks of the function body in layout order (the entry block first).
    blocks: Vec<LBlock>,
    /// Edge blocks (for block arguments on branches that need their own predecessor) and
    /// trap blocks, after the body.
    tail: Vec<LBlock>,
    /// The block instructions go to: an index into `blocks`.
    cur: usize,
    /// Per CLIF block: (predecessor label, argument operands) of every incoming edge.
    incoming: HashMap<Block, Vec<(String, Vec<String>)>>,
    /// External symbols by name.
    symbols: BTreeMap<String, Decl>,
    /// Intrinsic declarations by name.
    intrinsics: BTreeMap<String, String>,
    /// Module-level metadata lines.
    metadata: Vec<String>,
    next_tmp: u32,
    next_label: u32,
}

/// The LLVM name of a global symbol, quoted when it is not a plain identifier.
fn global_name(name: &str) -> String {
    let plain = !name.is_empty()
        && !name.starts_with(|c: char| c.is_ascii_digit())
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '$' | '-'));
    if plain {
        format!("@{name}")
    } else {
        let mut s = String::from("@\"");
        for b in name.bytes() {
            if b == b'"' || b == b'\\' || !(0x20..0x7f).contains(&b) {
                let _ = write!(s, "\\{b:02X}");
            } else {
                s.push(b as char);
            }
        }
        s.push('"');
        s
    }
}

/// The LLVM type of a CLIF value type.
fn llty(t: Type) -> R<String> {
    if t.is_dynamic_vector() {
        return Err(format!("dynamic vector type {t}"));
    }
    if t.is_vector() {
        return Ok(format!("<{} x {}>", t.lane_count(), llty(t.lane_type())?));
    }
    Ok(match t {
        types::I8 => "i8".into(),
        types::I16 => "i16".into(),
        types::I32 => "i32".into(),
        types::I64 => "i64".into(),
        types::I128 => "i128".into(),
        types::F32 => "float".into(),
        types::F64 => "double".into(),
        _ => return Err(format!("type {t}")),
    })
}

/// The suffix of an overloaded intrinsic's name for `t` (`i32`, `v8f32` …).
fn mangle(t: Type) -> String {
    let lane = |l: Type| {
        if l.is_float() {
            format!("f{}", l.bits())
        } else {
            format!("i{}", l.bits())
        }
    };
    if t.is_vector() {
        format!("v{}{}", t.lane_count(), lane(t.lane_type()))
    } else {
        lane(t)
    }
}

/// `t` with integer lanes of the same width (floats become their bits).
fn int_shape(t: Type) -> Type {
    let lane = types::Type::int(t.lane_type().bits() as u16).unwrap_or(types::I32);
    if t.is_vector() {
        lane.by(t.lane_count()).unwrap_or(lane)
    } else {
        lane
    }
}

/// `t`'s lanes at `bits` wide.
fn with_lane_bits(t: Type, bits: u32) -> R<Type> {
    let lane = types::Type::int(bits as u16).ok_or_else(|| format!("no {bits}-bit integer"))?;
    Ok(if t.is_vector() {
        lane.by(t.lane_count())
            .ok_or_else(|| format!("no {}-lane {lane} vector", t.lane_count()))?
    } else {
        lane
    })
}

/// `t` with `lanes` lanes of the same lane type.
fn with_lanes(t: Type, lanes: u32) -> R<Type> {
    t.lane_type()
        .by(lanes)
        .ok_or_else(|| format!("no {lanes}-lane {} vector", t.lane_type()))
}

/// The signed value of the low `bits` bits of `v`.
fn sext_bits(v: i128, bits: u32) -> i128 {
    if bits >= 128 {
        v
    } else {
        (v << (128 - bits)) >> (128 - bits)
    }
}

/// A constant of type `t` with every lane `lane` (a literal of the lane type).
fn splat_const(t: Type, lane: &str) -> R<String> {
    if !t.is_vector() {
        return Ok(lane.to_owned());
    }
    let l = llty(t.lane_type())?;
    let parts: Vec<String> = (0..t.lane_count()).map(|_| format!("{l} {lane}")).collect();
    Ok(format!("<{}>", parts.join(", ")))
}

/// An `<n x i32>` shuffle mask.
fn mask(indices: impl IntoIterator<Item = u32>) -> String {
    let parts: Vec<String> = indices.into_iter().map(|i| format!("i32 {i}")).collect();
    format!("<{} x i32> <{}>", parts.len(), parts.join(", "))
}

fn int_pred(cc: IntCC) -> &'static str {
    match cc {
        IntCC::Equal => "eq",
        IntCC::NotEqual => "ne",
        IntCC::SignedLessThan => "slt",
        IntCC::SignedGreaterThanOrEqual => "sge",
        IntCC::SignedGreaterThan => "sgt",
        IntCC::SignedLessThanOrEqual => "sle",
        IntCC::UnsignedLessThan => "ult",
        IntCC::UnsignedGreaterThanOrEqual => "uge",
        IntCC::UnsignedGreaterThan => "ugt",
        IntCC::UnsignedLessThanOrEqual => "ule",
    }
}

fn float_pred(cc: FloatCC) -> &'static str {
    match cc {
        FloatCC::Ordered => "ord",
        FloatCC::Unordered => "uno",
        FloatCC::Equal => "oeq",
        FloatCC::NotEqual => "une",
        FloatCC::OrderedNotEqual => "one",
        FloatCC::UnorderedOrEqual => "ueq",
        FloatCC::LessThan => "olt",
        FloatCC::LessThanOrEqual => "ole",
        FloatCC::GreaterThan => "ogt",
        FloatCC::GreaterThanOrEqual => "oge",
        FloatCC::UnorderedOrLessThan => "ult",
        FloatCC::UnorderedOrLessThanOrEqual => "ule",
        FloatCC::UnorderedOrGreaterThan => "ugt",
        FloatCC::UnorderedOrGreaterThanOrEqual => "uge",
    }
}

/// A float literal with exactly `bits` (LLVM's hex form is the double's bits; a float is
/// written as a bitcast constant expression so NaN payloads and signalling bits survive).
fn float_literal(t: Type, bits: u64) -> String {
    if t == types::F64 {
        format!("0x{bits:016X}")
    } else {
        format!("bitcast (i32 {} to float)", bits as u32 as i32)
    }
}

/// The parameter attribute of an argument extension.
fn ext_attr(p: &AbiParam) -> &'static str {
    match p.extension {
        ArgumentExtension::Uext => " zeroext",
        ArgumentExtension::Sext => " signext",
        ArgumentExtension::None => "",
    }
}

/// The LLVM return type of a signature: void, one value, or a literal struct of two
/// (System V returns two values in RAX/RDX or XMM0/XMM1, as Cranelift does).
fn return_type(sig: &ir::Signature) -> R<String> {
    match sig.returns.as_slice() {
        [] => Ok("void".into()),
        [r] => Ok(format!("{}{}", ext_attr(r).trim_start(), {
            let t = llty(r.value_type)?;
            if ext_attr(r).is_empty() {
                t
            } else {
                format!(" {t}")
            }
        })),
        [a, b] => Ok(format!(
            "{{ {}, {} }}",
            llty(a.value_type)?,
            llty(b.value_type)?
        )),
        _ => Err(format!(
            "a signature with {} return values (Cranelift's return area has no LLVM equivalent)",
            sig.returns.len()
        )),
    }
}

/// Refuses signatures whose ABI LLVM's C calling convention does not reproduce.
fn check_signature(sig: &ir::Signature) -> R {
    if sig.call_conv != CallConv::SystemV {
        return Err(format!("calling convention {}", sig.call_conv));
    }
    for p in sig.params.iter().chain(&sig.returns) {
        if p.purpose != ArgumentPurpose::Normal {
            return Err(format!("a parameter of purpose {}", p.purpose));
        }
        llty(p.value_type)?;
    }
    return_type(sig).map(drop)
}

impl<'a> Translator<'a> {
    fn new(func: &'a ir::Function) -> Self {
        Translator {
            func,
            blocks: Vec::new(),
            tail: Vec::new(),
            cur: 0,
            incoming: HashMap::new(),
            symbols: BTreeMap::new(),
            intrinsics: BTreeMap::new(),
            metadata: Vec::new(),
            next_tmp: 0,
            next_label: 0,
        }
    }

    // ---- naming and emission ----------------------------------------------------------------

    fn v(&self, v: Value) -> String {
        format!("%v{}", self.func.dfg.resolve_aliases(v).as_u32())
    }

    fn ty_of(&self, v: Value) -> Type {
        self.func.dfg.value_type(self.func.dfg.resolve_aliases(v))
    }

    /// `T %vN`.
    fn tv(&self, v: Value) -> R<String> {
        Ok(format!("{} {}", llty(self.ty_of(v))?, self.v(v)))
    }

    fn res(&self, inst: Inst, i: usize) -> String {
        self.v(self.func.dfg.inst_results(inst)[i])
    }

    fn res_ty(&self, inst: Inst, i: usize) -> Type {
        self.func
            .dfg
            .value_type(self.func.dfg.inst_results(inst)[i])
    }

    fn tmp(&mut self) -> String {
        self.next_tmp += 1;
        format!("%t{}", self.next_tmp)
    }

    fn label(&mut self, prefix: &str) -> String {
        self.next_label += 1;
        format!("{prefix}{}", self.next_label)
    }

    fn emit(&mut self, line: impl AsRef<str>) {
        let body = &mut self.blocks[self.cur].body;
        body.push_str("  ");
        body.push_str(line.as_ref());
        body.push('\n');
    }

    /// Emits `%tN = <rhs>` and returns `%tN`.
    fn let_(&mut self, rhs: impl AsRef<str>) -> String {
        let t = self.tmp();
        self.emit(format!("{t} = {}", rhs.as_ref()));
        t
    }

    fn start_block(&mut self, label: String, phis_of: Option<Block>) {
        self.blocks.push(LBlock {
            label,
            phis_of,
            body: String::new(),
        });
        self.cur = self.blocks.len() - 1;
    }

    fn cur_label(&self) -> String {
        self.blocks[self.cur].label.clone()
    }

    /// Declares intrinsic `name` and calls it; `ret` is its return type.
    fn call_intrinsic(&mut self, name: &str, ret: &str, args: &[String]) -> String {
        // The type of a typed operand: a vector type ends at its `>`, others at a space.
        let params: Vec<&str> = args
            .iter()
            .map(|a| match a.strip_prefix('<') {
                Some(rest) => &a[..rest.find('>').map_or(a.len(), |i| i + 2)],
                None => a.split_once(' ').map_or(a.as_str(), |(t, _)| t),
            })
            .collect();
        self.intrinsics.insert(
            name.to_owned(),
            format!("declare {ret} @{name}({})", params.join(", ")),
        );
        let call = format!("call {ret} @{name}({})", args.join(", "));
        if ret == "void" {
            self.emit(call);
            String::new()
        } else {
            self.let_(call)
        }
    }

    /// Branches to a cold block that traps when `cond` (an `i1`) holds; code continues in a
    /// new block.
    fn trap_if(&mut self, cond: &str) {
        let trap = self.label("trap");
        let cont = self.label("cont");
        self.emit(format!("br i1 {cond}, label %{trap}, label %{cont}"));
        self.tail.push(LBlock {
            label: trap,
            phis_of: None,
            body: "  call void @llvm.trap()\n  unreachable\n".into(),
        });
        self.intrinsics
            .insert("llvm.trap".into(), "declare void @llvm.trap()".into());
        self.start_block(cont, None);
    }

    /// `v` (of type `t`) converted to its integer shape when it is a float.
    fn as_int(&mut self, v: &str, t: Type) -> R<String> {
        if t.lane_type().is_float() {
            let (from, to) = (llty(t)?, llty(int_shape(t))?);
            Ok(self.let_(format!("bitcast {from} {v} to {to}")))
        } else {
            Ok(v.to_owned())
        }
    }

    /// Defines result `name` as `v` reinterpreted from `from` to type `to` (a plain copy when
    /// they are the same type; LLVM has no copy instruction, so a no-op bitcast).
    fn define_as(&mut self, name: &str, v: &str, from: Type, to: Type) -> R {
        let (f, t) = (llty(from)?, llty(to)?);
        self.emit(format!("{name} = bitcast {f} {v} to {t}"));
        Ok(())
    }

    /// The scalar `s` (type `st`) in every lane of vector type `vt` (lanes of type `st`).
    fn splat(&mut self, s: &str, st: Type, vt: Type) -> R<String> {
        let (sl, vl) = (llty(st)?, llty(vt)?);
        let one = self.let_(format!("insertelement {vl} poison, {sl} {s}, i64 0"));
        Ok(self.let_(format!(
            "shufflevector {vl} {one}, {vl} poison, <{} x i32> zeroinitializer",
            vt.lane_count()
        )))
    }

    /// An `i1` that is true when the integer value `v` is nonzero.
    fn truthy(&mut self, v: Value) -> R<String> {
        let t = self.ty_of(v);
        if t.is_vector() || t.is_float() {
            return Err(format!("a condition of type {t}"));
        }
        let tv = self.tv(v)?;
        Ok(self.let_(format!("icmp ne {tv}, 0")))
    }

    /// Defines `name` from an `i1` (or vector of `i1`) `b`: a scalar becomes an `i8` 0/1, a
    /// vector lane all ones or zero at `lanes`' lane width.
    fn define_bool(&mut self, name: &str, b: &str, lanes: Type) -> R {
        if lanes.is_vector() {
            let it = llty(int_shape(lanes))?;
            self.emit(format!(
                "{name} = sext <{} x i1> {b} to {it}",
                lanes.lane_count()
            ));
        } else {
            self.emit(format!("{name} = zext i1 {b} to i8"));
        }
        Ok(())
    }

    /// The i1 type (scalar or vector) matching `t`'s shape.
    fn i1_of(t: Type) -> String {
        if t.is_vector() {
            format!("<{} x i1>", t.lane_count())
        } else {
            "i1".into()
        }
    }

    // ---- the function ------------------------------------------------------------------------

    fn function(&mut self, symbol: &str) -> R {
        let func = self.func;
        check_signature(&func.signature)?;
        let ret = return_type(&func.signature)?;
        let params: Vec<String> = func
            .signature
            .params
            .iter()
            .enumerate()
            .map(|(i, p)| Ok(format!("{}{} %arg{i}", llty(p.value_type)?, ext_attr(p))))
            .collect::<R<_>>()?;
        let header = format!(
            "define {ret} {}({}) #0 {{\n",
            global_name(symbol),
            params.join(", ")
        );
        let entry = func
            .layout
            .entry_block()
            .ok_or_else(|| "a function without blocks".to_owned())?;
        // LLVM's entry block has no predecessors and holds the stack slots; the CLIF entry
        // block (which branches may target) follows it, its parameters fed by the arguments.
        self.start_block("entry".into(), None);
        for (slot, data) in func.sized_stack_slots.iter() {
            if data.kind != ir::StackSlotKind::ExplicitSlot {
                return Err(format!("stack slot {slot} of kind {}", data.kind));
            }
            self.emit(format!(
                "%ss{} = alloca [{} x i8], align {}",
                slot.as_u32(),
                data.size,
                1u64 << data.align_shift.min(31)
            ));
        }
        if func.dynamic_stack_slots.iter().next().is_some() {
            return Err("dynamic stack slots".into());
        }
        self.emit(format!("br label %b{}", entry.as_u32()));
        let args = (0..func.signature.params.len())
            .map(|i| format!("%arg{i}"))
            .collect();
        self.incoming
            .entry(entry)
            .or_default()
            .push(("entry".into(), args));
        if func.dfg.block_params(entry).len() != func.signature.params.len() {
            return Err("an entry block whose parameters differ from the signature".into());
        }

        for block in self.reachable_blocks(entry) {
            self.start_block(format!("b{}", block.as_u32()), Some(block));
            for inst in func.layout.block_insts(block) {
                self.inst(inst)?;
            }
        }
        let mut text = header;
        let blocks = std::mem::take(&mut self.blocks);
        let tail = std::mem::take(&mut self.tail);
        for b in blocks.iter().chain(&tail) {
            let _ = writeln!(text, "{}:", b.label);
            if let Some(clif) = b.phis_of {
                text.push_str(&self.phis(clif)?);
            }
            text.push_str(&b.body);
        }
        text.push_str("}\n");
        self.blocks = vec![LBlock {
            label: String::new(),
            phis_of: None,
            body: text,
        }];
        Ok(())
    }

    /// Blocks reachable from `entry`, in layout order (unreachable ones cannot define values
    /// reachable code uses, and their parameters would have no incoming edges).
    fn reachable_blocks(&self, entry: Block) -> Vec<Block> {
        let func = self.func;
        let mut seen = std::collections::HashSet::from([entry]);
        let mut stack = vec![entry];
        while let Some(b) = stack.pop() {
            for inst in func.layout.block_insts(b) {
                for dest in func.dfg.insts[inst]
                    .branch_destination(&func.dfg.jump_tables, &func.dfg.exception_tables)
                {
                    let target = dest.block(&func.dfg.value_lists);
                    if seen.insert(target) {
                        stack.push(target);
                    }
                }
            }
        }
        func.layout.blocks().filter(|b| seen.contains(b)).collect()
    }

    fn phis(&self, block: Block) -> R<String> {
        let mut s = String::new();
        let edges = self.incoming.get(&block).map_or(&[][..], |e| e.as_slice());
        for (i, &p) in self.func.dfg.block_params(block).iter().enumerate() {
            let ty = llty(self.ty_of(p))?;
            let ins: Vec<String> = edges
                .iter()
                .map(|(label, args)| format!("[ {}, %{label} ]", args[i]))
                .collect();
            let _ = writeln!(s, "  {} = phi {ty} {}", self.v(p), ins.join(", "));
        }
        Ok(s)
    }

    fn finish(self) -> String {
        let mut out = String::from(
            "; generated by ferrocl-codegen's wide backend from Cranelift IR\n\
             target triple = \"x86_64-unknown-linux-gnu\"\n\n",
        );
        for (name, decl) in &self.symbols {
            match decl {
                Decl::Func(line) => {
                    let _ = writeln!(out, "{line}");
                }
                Decl::Data => {
                    let _ = writeln!(out, "{} = external global i8", global_name(name));
                }
            }
        }
        for decl in self.intrinsics.values() {
            let _ = writeln!(out, "{decl}");
        }
        out.push('\n');
        out.push_str(&self.blocks[0].body);
        out.push_str(
            "\nattributes #0 = { nounwind \"probe-stack\"=\"inline-asm\" \"frame-pointer\"=\"all\" }\n",
        );
        for m in &self.metadata {
            let _ = writeln!(out, "{m}");
        }
        out
    }

    // ---- symbols ---------------------------------------------------------------------------

    /// The symbol an external name links to.
    fn symbol(&self, name: &ExternalName) -> R<String> {
        match name {
            ExternalName::User(r) => {
                let u = &self.func.params.user_named_funcs()[*r];
                Ok(format!("__ferrocl_u{}_{}", u.namespace, u.index))
            }
            ExternalName::LibCall(lc) => Ok(crate::translate::libcall_symbol(*lc)),
            other => Err(format!("the external name {other:?}")),
        }
    }

    /// The LLVM name of function `fref`, declared with its signature.
    fn declare_func(&mut self, fref: ir::FuncRef) -> R<String> {
        let ext = &self.func.dfg.ext_funcs[fref];
        let name = self.symbol(&ext.name)?;
        let sig = &self.func.dfg.signatures[ext.signature];
        check_signature(sig)?;
        let params: Vec<String> = sig
            .params
            .iter()
            .map(|p| Ok(format!("{}{}", llty(p.value_type)?, ext_attr(p))))
            .collect::<R<_>>()?;
        let line = format!(
            "declare {} {}({}) nounwind",
            return_type(sig)?,
            global_name(&name),
            params.join(", ")
        );
        // A function wins over a data use of the same symbol (both are just an address).
        if !matches!(self.symbols.get(&name), Some(Decl::Func(_))) {
            self.symbols.insert(name.clone(), Decl::Func(line));
        }
        Ok(global_name(&name))
    }

    /// (symbol, byte offset) of global value `gv`.
    fn global_value(&mut self, gv: ir::GlobalValue, depth: u32) -> R<(String, i64)> {
        if depth > 16 {
            return Err(format!("global value {gv} (too deep)"));
        }
        match &self.func.global_values[gv] {
            GlobalValueData::Symbol {
                name, offset, tls, ..
            } => {
                if *tls {
                    return Err(format!("thread-local global value {gv}"));
                }
                let sym = self.symbol(name)?;
                self.symbols.entry(sym.clone()).or_insert(Decl::Data);
                Ok((global_name(&sym), offset.bits()))
            }
            GlobalValueData::IAddImm { base, offset, .. } => {
                let (sym, off) = self.global_value(*base, depth + 1)?;
                Ok((sym, off.wrapping_add(offset.bits())))
            }
            other => Err(format!("global value {gv} ({other})")),
        }
    }

    // ---- instructions ----------------------------------------------------------------------

    fn inst(&mut self, inst: Inst) -> R {
        let op = self.func.dfg.insts[inst].opcode();
        let refuse = |why: Option<String>| {
            let at = match self.func.dfg.inst_results(inst).first() {
                Some(v) => format!("{v}"),
                None => format!("{inst}"),
            };
            match why {
                Some(why) => format!("the wide backend cannot lower `{op}` ({at}): {why}"),
                None => format!("the wide backend cannot lower `{op}` ({at})"),
            }
        };
        // Every value involved must have an LLVM type.
        for &v in self
            .func
            .dfg
            .inst_args(inst)
            .iter()
            .chain(self.func.dfg.inst_results(inst))
        {
            llty(self.ty_of(v)).map_err(|e| refuse(Some(e)))?;
        }
        use Opcode::*;
        let done = match op {
            Jump | Brif | BrTable | Return | Trap | Trapz | Trapnz | Debugtrap | Nop
            | SequencePoint => self.control(inst, op),
            Call | CallIndirect | FuncAddr | SymbolValue => self.calls(inst, op),
            Iconst | F32const | F64const | Vconst => self.constants(inst, op),
            Iadd | Isub | Imul | Ineg | Iabs | Umulhi | Smulhi | Smin | Smax | Umin | Umax
            | UaddSat | UsubSat | SaddSat | SsubSat | AvgRound | SqmulRoundSat | X86Pmulhrsw => {
                self.int_arith(inst, op)
            }
            Udiv | Sdiv | Urem | Srem => self.division(inst, op),
            UaddOverflow | SaddOverflow | UsubOverflow | SsubOverflow | UmulOverflow
            | SmulOverflow | UaddOverflowTrap => self.overflow(inst, op),
            Band | Bor | Bxor | Bnot | Ishl | Ushr | Sshr | Rotl | Rotr | Popcnt | Clz | Ctz
            | Cls | Bswap | Bitrev => self.bits(inst, op),
            Icmp | Fcmp | Select | SelectSpectreGuard | Bitselect | Blendv | Bmask | VanyTrue
            | VallTrue | VhighBits => self.compare_select(inst, op),
            Fadd | Fsub | Fmul | Fdiv | Sqrt | Fma | Fneg | Fabs | Fcopysign | Floor | Ceil
            | Trunc | Nearest | Fmin | Fmax => self.float_arith(inst, op),
            Uextend | Sextend | Ireduce | Fpromote | Fdemote | FcvtFromSint | FcvtFromUint
            | FcvtToSintSat | FcvtToUintSat | FcvtToSint | FcvtToUint | X86Cvtt2dq | Bitcast
            | Isplit | Iconcat => self.conversions(inst, op),
            Splat | Insertlane | Extractlane | ScalarToVector | Shuffle | Swizzle | X86Pshufb
            | Snarrow | Unarrow | Uunarrow | SwidenLow | SwidenHigh | UwidenLow | UwidenHigh
            | IaddPairwise | X86Pmaddubsw | FvpromoteLow | Fvdemote => self.lanes(inst, op),
            Load | Store | Uload8 | Sload8 | Uload16 | Sload16 | Uload32 | Sload32 | Istore8
            | Istore16 | Istore32 | Uload8x8 | Sload8x8 | Uload16x4 | Sload16x4 | Uload32x2
            | Sload32x2 | StackAddr => self.memory(inst, op),
            AtomicRmw | AtomicCas | AtomicLoad | AtomicStore | Fence => self.atomics(inst, op),
            GetFramePointer | GetStackPointer => self.frame(inst, op),
            _ => Err(None),
        };
        done.map_err(refuse)
    }

    /// Arguments of `inst` (fixed and variable).
    fn args(&self, inst: Inst) -> Vec<Value> {
        self.func.dfg.inst_args(inst).to_vec()
    }
}

/// An instruction group's result: `Err(None)` is "not this group's opcode / unsupported form"
/// without more to say, `Err(Some(why))` a refusal with a reason.
type G = Result<(), Option<String>>;

fn why(s: impl Into<String>) -> Option<String> {
    Some(s.into())
}

impl Translator<'_> {
    /// The LLVM target of branch edge `call` from the current block: the CLIF block itself, or
    /// (`split`) an edge block of its own, so that two edges from one block (`brif` to one
    /// block twice, `br_table` entries) each have their own `phi` predecessor.
    fn edge(&mut self, call: &BlockCall, split: bool) -> R<String> {
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
    fn control(&mut self, inst: Inst, op: Opcode) -> G {
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
    fn calls(&mut self, inst: Inst, op: Opcode) -> G {
        let func = self.func;
        let results = func.dfg.inst_results(inst).to_vec();
        let args = self.args(inst);
        let (callee, sig, args) = match &func.dfg.insts[inst] {
            InstructionData::Call { func_ref, .. } if op == Opcode::Call => {
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

    fn constants(&mut self, inst: Inst, op: Opcode) -> G {
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
    fn zero(t: Type) -> &'static str {
        if t.is_vector() {
            "zeroinitializer"
        } else if t.is_float() {
            "0.0"
        } else {
            "0"
        }
    }

    /// Integer arithmetic (lane-generic).
    fn int_arith(&mut self, inst: Inst, op: Opcode) -> G {
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

    /// Scalar division and remainder, trapping where Cranelift traps (LLVM's are undefined
    /// there).
    fn division(&mut self, inst: Inst, op: Opcode) -> G {
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

    /// Arithmetic with an overflow flag (`i8` 0/1) or a trap on overflow.
    fn overflow(&mut self, inst: Inst, op: Opcode) -> G {
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
    fn shift_amount(&mut self, y: Value, t: Type, mask: bool) -> R<String> {
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
    fn bits(&mut self, inst: Inst, op: Opcode) -> G {
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

impl Translator<'_> {
    /// Comparisons, selects, masks and lane reductions to booleans.
    fn compare_select(&mut self, inst: Inst, op: Opcode) -> G {
        let func = self.func;
        let args = self.args(inst);
        let r = self.res(inst, 0);
        let rt = self.res_ty(inst, 0);
        use Opcode::*;
        match (op, &func.dfg.insts[inst]) {
            (Icmp, InstructionData::IntCompare { cond, .. }) => {
                let t = self.ty_of(args[0]);
                let (a, b) = (self.tv(args[0])?, self.v(args[1]));
                let c = self.let_(format!("icmp {} {a}, {b}", int_pred(*cond)));
                self.define_bool(&r, &c, t)?;
            }
            (Fcmp, InstructionData::FloatCompare { cond, .. }) => {
                let t = self.ty_of(args[0]);
                let (a, b) = (self.tv(args[0])?, self.v(args[1]));
                let c = self.let_(format!("fcmp {} {a}, {b}", float_pred(*cond)));
                self.define_bool(&r, &c, t)?;
            }
            (Select | SelectSpectreGuard, _) => {
                let c = self.truthy(args[0])?;
                let (x, y) = (self.tv(args[1])?, self.tv(args[2])?);
                self.emit(format!("{r} = select i1 {c}, {x}, {y}"));
            }
            (Bitselect, _) => {
                let ts: Vec<Type> = args.iter().map(|&a| self.ty_of(a)).collect();
                if ts[0].bits() != rt.bits() {
                    return Err(why("a mask of another size"));
                }
                let it = int_shape(rt);
                let ity = llty(it)?;
                let mut ops = Vec::new();
                for (&a, &t) in args.iter().zip(&ts) {
                    let v = self.v(a);
                    let v = self.as_int(&v, t)?;
                    // A mask of another shape of the same size: its bits.
                    let v = if int_shape(t) != it {
                        self.let_(format!("bitcast {} {v} to {ity}", llty(int_shape(t))?))
                    } else {
                        v
                    };
                    ops.push(v);
                }
                let ones = splat_const(it, "-1")?;
                let cx = self.let_(format!("and {ity} {}, {}", ops[0], ops[1]));
                let nc = self.let_(format!("xor {ity} {}, {ones}", ops[0]));
                let ncy = self.let_(format!("and {ity} {nc}, {}", ops[2]));
                let v = self.let_(format!("or {ity} {cx}, {ncy}"));
                self.define_as(&r, &v, it, rt)?;
            }
            (Blendv, _) => {
                // The top bit of each lane of `c` chooses.
                let ct = self.ty_of(args[0]);
                if ct.lane_count() != rt.lane_count() {
                    return Err(why("a mask of another lane count"));
                }
                let c = self.v(args[0]);
                let c = self.as_int(&c, ct)?;
                let cit = llty(int_shape(ct))?;
                let m = self.let_(format!("icmp slt {cit} {c}, {}", Self::zero(ct)));
                let (x, y) = (self.tv(args[1])?, self.tv(args[2])?);
                let i1 = Self::i1_of(rt);
                self.emit(format!("{r} = select {i1} {m}, {x}, {y}"));
            }
            (Bmask, _) => {
                let t = self.ty_of(args[0]);
                if t.lane_count() != rt.lane_count() || t.is_float() {
                    return Err(why(format!("bmask from {t} to {rt}")));
                }
                let a = self.tv(args[0])?;
                let c = self.let_(format!("icmp ne {a}, {}", Self::zero(t)));
                let (i1, rty) = (Self::i1_of(t), llty(rt)?);
                self.emit(format!("{r} = sext {i1} {c} to {rty}"));
            }
            (VanyTrue | VallTrue | VhighBits, _) => {
                let t = self.ty_of(args[0]);
                if !t.is_vector() {
                    return Err(why("a scalar operand"));
                }
                let n = t.lane_count();
                let a = self.v(args[0]);
                let a = self.as_int(&a, t)?;
                let ity = llty(int_shape(t))?;
                if op == VhighBits {
                    let neg = self.let_(format!("icmp slt {ity} {a}, zeroinitializer"));
                    let bits = self.let_(format!("bitcast <{n} x i1> {neg} to i{n}"));
                    let rty = llty(rt)?;
                    let cast = match n.cmp(&rt.bits()) {
                        std::cmp::Ordering::Less => "zext",
                        std::cmp::Ordering::Greater => "trunc",
                        std::cmp::Ordering::Equal => "bitcast",
                    };
                    self.emit(format!("{r} = {cast} i{n} {bits} to {rty}"));
                } else {
                    let nz = self.let_(format!("icmp ne {ity} {a}, zeroinitializer"));
                    let name = if op == VanyTrue { "or" } else { "and" };
                    let b = self.call_intrinsic(
                        &format!("llvm.vector.reduce.{name}.v{n}i1"),
                        "i1",
                        &[format!("<{n} x i1> {nz}")],
                    );
                    self.emit(format!("{r} = zext i1 {b} to i8"));
                }
            }
            _ => return Err(None),
        }
        Ok(())
    }

    /// Float arithmetic (lane-generic).
    fn float_arith(&mut self, inst: Inst, op: Opcode) -> G {
        let args = self.args(inst);
        let t = self.res_ty(inst, 0);
        let ty = llty(t)?;
        let m = mangle(t);
        let r = self.res(inst, 0);
        let ops: Vec<String> = args
            .iter()
            .map(|&a| format!("{ty} {}", self.v(a)))
            .collect();
        use Opcode::*;
        let intrinsic = match op {
            Fadd | Fsub | Fmul | Fdiv => {
                let name = format!("{op}");
                let (a, b) = (self.v(args[0]), self.v(args[1]));
                self.emit(format!("{r} = {name} {ty} {a}, {b}"));
                return Ok(());
            }
            Fneg => {
                self.emit(format!("{r} = fneg {}", ops[0]));
                return Ok(());
            }
            Fmin | Fmax => return self.min_max(inst, op == Fmin).map_err(Some),
            Sqrt => "sqrt",
            Fma => "fma",
            Fabs => "fabs",
            Fcopysign => "copysign",
            Floor => "floor",
            Ceil => "ceil",
            Trunc => "trunc",
            Nearest => "roundeven",
            _ => return Err(None),
        };
        let v = self.call_intrinsic(&format!("llvm.{intrinsic}.{m}"), &ty, &ops);
        self.define_as(&r, &v, t, t)?;
        Ok(())
    }

    /// fmin/fmax exactly as Cranelift's x86-64 lowering computes them, NaN bits included:
    /// scalars by its compare-and-branch sequence, vectors by its branchless one.
    fn min_max(&mut self, inst: Inst, is_min: bool) -> R {
        let args = self.args(inst);
        let t = self.res_ty(inst, 0);
        let it = int_shape(t);
        let (ty, ity) = (llty(t)?, llty(it)?);
        let i1 = Self::i1_of(t);
        let r = self.res(inst, 0);
        let (x, y) = (self.v(args[0]), self.v(args[1]));
        let xb = self.as_int(&x, t)?;
        let yb = self.as_int(&y, t)?;
        let frac_shift = if t.lane_bits() == 32 { 10 } else { 13 };
        if !t.is_vector() {
            // ucomis y, x; unordered: y + x (y's NaN quieted if y is one, else x's); equal:
            // or (min) / and (max) of the bits; else min/max of y and x.
            let quiet = if t.bits() == 32 {
                "4194304".to_owned()
            } else {
                "2251799813685248".to_owned()
            };
            let y_nan = self.let_(format!("fcmp uno {ty} {y}, {y}"));
            let qy = self.let_(format!("or {ity} {yb}, {quiet}"));
            let qx = self.let_(format!("or {ity} {xb}, {quiet}"));
            let nan = self.let_(format!("select i1 {y_nan}, {ity} {qy}, {ity} {qx}"));
            let merge = if is_min { "or" } else { "and" };
            let eq_bits = self.let_(format!("{merge} {ity} {xb}, {yb}"));
            let pred = if is_min { "olt" } else { "ogt" };
            let y_wins = self.let_(format!("fcmp {pred} {ty} {y}, {x}"));
            let mm = self.let_(format!("select i1 {y_wins}, {ity} {yb}, {ity} {xb}"));
            let uno = self.let_(format!("fcmp uno {ty} {x}, {y}"));
            let oeq = self.let_(format!("fcmp oeq {ty} {x}, {y}"));
            let v = self.let_(format!("select i1 {oeq}, {ity} {eq_bits}, {ity} {mm}"));
            let v = self.let_(format!("select i1 {uno}, {ity} {nan}, {ity} {v}"));
            return self.define_as(&r, &v, it, t);
        }
        // minps/maxps a, b = a <op> b ? a : b (b when unordered or both zero).
        let pred = if is_min { "olt" } else { "ogt" };
        let c1 = self.let_(format!("fcmp {pred} {ty} {x}, {y}"));
        let m1 = self.let_(format!("select {i1} {c1}, {ity} {xb}, {ity} {yb}"));
        let c2 = self.let_(format!("fcmp {pred} {ty} {y}, {x}"));
        let m2 = self.let_(format!("select {i1} {c2}, {ity} {yb}, {ity} {xb}"));
        let f = |s: &mut Self, v: &str| s.let_(format!("bitcast {ity} {v} to {ty}"));
        let (value, nan) = if is_min {
            // or of both (NaN if either is, -0 if either is); unordered lanes get all ones.
            let or = self.let_(format!("or {ity} {m1}, {m2}"));
            let (m1f, m2f) = (f(self, &m1), f(self, &m2));
            let nan = self.let_(format!("fcmp uno {ty} {m1f}, {m2f}"));
            let mask = self.let_(format!("sext {i1} {nan} to {ity}"));
            let v = self.let_(format!("or {ity} {or}, {mask}"));
            (v, mask)
        } else {
            // max1 | (max1 ^ max2) is NaN if either is; minus the xor makes +0 of ±0.
            let x12 = self.let_(format!("xor {ity} {m1}, {m2}"));
            let blended = self.let_(format!("or {ity} {m1}, {x12}"));
            let (bf, xf) = (f(self, &blended), f(self, &x12));
            let pos = self.let_(format!("fsub {ty} {bf}, {xf}"));
            let nan = self.let_(format!("fcmp uno {ty} {bf}, {bf}"));
            let mask = self.let_(format!("sext {i1} {nan} to {ity}"));
            let v = self.as_int(&pos, t)?;
            (v, mask)
        };
        // NaN lanes keep sign, exponent and the quiet bit only.
        let sh = splat_const(it, &frac_shift.to_string())?;
        let frac = self.let_(format!("lshr {ity} {nan}, {sh}"));
        let ones = splat_const(it, "-1")?;
        let keep = self.let_(format!("xor {ity} {frac}, {ones}"));
        let v = self.let_(format!("and {ity} {keep}, {value}"));
        self.define_as(&r, &v, it, t)
    }

    /// Conversions between integer widths, floats, and types of one size.
    fn conversions(&mut self, inst: Inst, op: Opcode) -> G {
        let func = self.func;
        let args = self.args(inst);
        let rt = self.res_ty(inst, 0);
        let rty = llty(rt)?;
        let r = self.res(inst, 0);
        let t = self.ty_of(args[0]);
        let a = self.tv(args[0])?;
        use Opcode::*;
        let cast = |name: &str| format!("{r} = {name} {a} to {rty}");
        match op {
            Uextend => self.emit(cast("zext")),
            Sextend => self.emit(cast("sext")),
            Ireduce => self.emit(cast("trunc")),
            Fpromote => self.emit(cast("fpext")),
            Fdemote => self.emit(cast("fptrunc")),
            FcvtFromSint => self.emit(cast("sitofp")),
            FcvtFromUint => self.emit(cast("uitofp")),
            FcvtToSintSat | FcvtToUintSat => {
                let s = if op == FcvtToSintSat { "s" } else { "u" };
                let v = self.call_intrinsic(
                    &format!("llvm.fpto{s}i.sat.{}.{}", mangle(rt), mangle(t)),
                    &rty,
                    &[a],
                );
                self.define_as(&r, &v, rt, rt)?;
            }
            FcvtToSint | FcvtToUint => {
                if t.is_vector() {
                    return Err(why("a vector conversion"));
                }
                let signed = op == FcvtToSint;
                let ok = self.in_int_range(&a, t, rt.bits(), signed)?;
                let bad = self.let_(format!("xor i1 {ok}, true"));
                self.trap_if(&bad);
                self.emit(cast(if signed { "fptosi" } else { "fptoui" }));
            }
            X86Cvtt2dq => {
                // cvtt{ps,pd}2dq: INT_MIN for NaN and out-of-range lanes; a 2-lane source
                // fills the low lanes and zeroes the rest.
                let n = t.lane_count();
                if rt.lane_type() != types::I32 || !t.lane_type().is_float() || rt.lane_count() < n
                {
                    return Err(why(format!("from {t} to {rt}")));
                }
                let ok = self.in_int_range(&a, t, 32, true)?;
                let narrow = llty(with_lanes(types::I32X4, n)?)?;
                let c = self.let_(format!("fptosi {a} to {narrow}"));
                let min = splat_const(with_lanes(types::I32X4, n)?, "-2147483648")?;
                let i1 = Self::i1_of(t);
                let v = self.let_(format!("select {i1} {ok}, {narrow} {c}, {narrow} {min}"));
                let rl = rt.lane_count();
                if rl == n {
                    self.define_as(&r, &v, rt, rt)?;
                } else {
                    let idx = mask((0..n).chain((0..rl - n).map(|i| n + (i % n))));
                    self.emit(format!(
                        "{r} = shufflevector {narrow} {v}, {narrow} zeroinitializer, {idx}"
                    ));
                }
            }
            Bitcast => {
                let flags = func.dfg.insts[inst]
                    .memflags_data(&func.dfg)
                    .unwrap_or_else(ir::MemFlagsData::new);
                if flags.explicit_endianness() == Some(Endianness::Big) && t.is_vector() {
                    return Err(why("a big-endian lane order"));
                }
                self.emit(cast("bitcast"));
            }
            Isplit => {
                if t.is_vector() {
                    return Err(why("vector operand"));
                }
                let h = t.bits() / 2;
                let hty = format!("i{h}");
                let lo = self.res(inst, 0);
                let hi = self.res(inst, 1);
                self.emit(format!("{lo} = trunc {a} to {hty}"));
                let s = self.let_(format!("lshr {a}, {h}"));
                let ty = llty(t)?;
                self.emit(format!("{hi} = trunc {ty} {s} to {hty}"));
            }
            Iconcat => {
                if t.is_vector() {
                    return Err(why("vector operands"));
                }
                let b = self.tv(args[1])?;
                let lo = self.let_(format!("zext {a} to {rty}"));
                let hi = self.let_(format!("zext {b} to {rty}"));
                let hi = self.let_(format!("shl {rty} {hi}, {}", t.bits()));
                self.emit(format!("{r} = or {rty} {lo}, {hi}"));
            }
            _ => return Err(None),
        }
        Ok(())
    }

    /// An `i1` (per lane) that holds when the float `a` (typed operand of type `t`) truncates
    /// to a value of a `bits`-bit integer (false for NaN): the bounds are exact floats.
    fn in_int_range(&mut self, a: &str, t: Type, bits: u32, signed: bool) -> R<String> {
        let lane = t.lane_type();
        let precision = if lane == types::F64 { 53 } else { 24 };
        let lit = |v: f64| -> R<String> {
            let s = if lane == types::F64 {
                float_literal(types::F64, v.to_bits())
            } else {
                float_literal(types::F32, u64::from((v as f32).to_bits()))
            };
            splat_const(t, &s)
        };
        let two = |e: u32| 2f64.powi(e as i32);
        let (hi, lo, lo_pred) = if signed {
            if precision >= bits {
                (two(bits - 1), -two(bits - 1) - 1.0, "ogt")
            } else {
                (two(bits - 1), -two(bits - 1), "oge")
            }
        } else {
            (two(bits), -1.0, "ogt")
        };
        let (hi, lo) = (lit(hi)?, lit(lo)?);
        let i1 = Self::i1_of(t);
        let below = self.let_(format!("fcmp olt {a}, {hi}"));
        let above = self.let_(format!("fcmp {lo_pred} {a}, {lo}"));
        Ok(self.let_(format!("and {i1} {below}, {above}")))
    }
}

impl Translator<'_> {
    /// Lane operations: splats, lane access, shuffles, narrowing and widening (lane-generic
    /// unless CLIF defines them for 128 bits only).
    fn lanes(&mut self, inst: Inst, op: Opcode) -> G {
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
    fn address(&mut self, p: Value, offset: i64) -> R<String> {
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
    fn alignment(&self, inst: Inst, t: Type) -> R<u32> {
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
    fn memory(&mut self, inst: Inst, op: Opcode) -> G {
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
    fn atomics(&mut self, inst: Inst, op: Opcode) -> G {
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
    fn frame(&mut self, inst: Inst, op: Opcode) -> G {
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

#[cfg(test)]
mod tests {
    //! Every opcode group is translated at 4, 8 and 16 lanes (where lane-generic) and the IR
    //! must pass `opt-15 -passes=verify` and `llc-15` with AVX-512; pure functions of scalars
    //! and 128-bit vectors (what Cranelift's x86-64 backend lowers) run under both Cranelift's
    //! JIT and `lli-15` on the same inputs, and their results must be bit-identical.

    use super::*;
    use cranelift_codegen::ir::{InstBuilder, MemFlagsData, UserFuncName};
    use cranelift_frontend::{FunctionBuilder, FunctionBuilderContext};
    use std::path::PathBuf;
    use std::process::Command;

    /// `/usr/bin/<name>`, or None (the test is skipped, said on stderr) when it is not
    /// installed; under `CI=true` a missing tool fails the test.
    fn tool(name: &str) -> Option<PathBuf> {
        let path = PathBuf::from("/usr/bin").join(name);
        if path.exists() {
            return Some(path);
        }
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "{name} is not installed (CI=true: the LLVM IR tests must run)"
        );
        eprintln!("skipped: {name} is not installed");
        None
    }

    fn temp_file(ext: &str) -> PathBuf {
        static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        std::env::temp_dir().join(format!("ferrocl-llvm-ir-{}-{n}.{ext}", std::process::id()))
    }

    fn run(cmd: &mut Command, what: &str, ir: &str) -> Vec<u8> {
        let out = cmd
            .output()
            .unwrap_or_else(|e| panic!("cannot run {cmd:?}: {e}"));
        assert!(
            out.status.success(),
            "{what}: {cmd:?} failed:\n{}\n--- IR ---\n{ir}",
            String::from_utf8_lossy(&out.stderr)
        );
        out.stdout
    }

    /// Checks `ir` with LLVM's verifier and compiles it with llc for AVX-512; the assembly.
    fn llc(ir: &str, what: &str) -> Option<String> {
        let (opt, llc) = (tool("opt-15")?, tool("llc-15")?);
        let file = temp_file("ll");
        std::fs::write(&file, ir).expect("write IR");
        run(
            Command::new(opt)
                .args(["-passes=verify", "-disable-output"])
                .arg(&file),
            what,
            ir,
        );
        let asm = run(
            Command::new(llc)
                .args([
                    "-O2",
                    "-mattr=+avx512f,+avx512bw,+avx512dq,+avx512vl",
                    "-filetype=asm",
                    "-o",
                    "-",
                ])
                .arg(&file),
            what,
            ir,
        );
        let _ = std::fs::remove_file(&file);
        Some(String::from_utf8_lossy(&asm).into_owned())
    }

    fn frontend_config() -> cranelift_codegen::isa::TargetFrontendConfig {
        cranelift_native::builder()
            .expect("host ISA")
            .finish(cranelift_codegen::settings::Flags::new(
                cranelift_codegen::settings::builder(),
            ))
            .expect("host ISA")
            .frontend_config()
    }

    /// A verified function of signature `params -> returns` whose body `body` builds from
    /// the parameters.
    fn build(
        params: &[Type],
        returns: &[Type],
        body: impl FnOnce(&mut FunctionBuilder, &[Value]) -> Vec<Value>,
    ) -> ir::Function {
        let mut sig = ir::Signature::new(CallConv::SystemV);
        sig.params.extend(params.iter().map(|&t| AbiParam::new(t)));
        sig.returns
            .extend(returns.iter().map(|&t| AbiParam::new(t)));
        let mut func = ir::Function::with_name_signature(UserFuncName::user(0, 0), sig);
        let mut ctx = FunctionBuilderContext::new();
        let mut b = FunctionBuilder::new(&mut func, &mut ctx);
        let entry = b.create_block();
        b.append_block_params_for_function_params(entry);
        b.switch_to_block(entry);
        let ps = b.block_params(entry).to_vec();
        let rs = body(&mut b, &ps);
        b.ins().return_(&rs);
        b.seal_all_blocks();
        b.finalize(frontend_config());
        let mut flags = cranelift_codegen::settings::builder();
        cranelift_codegen::settings::Configurable::set(
            &mut flags,
            "preserve_frame_pointers",
            "true",
        )
        .expect("flag");
        let isa = cranelift_native::builder()
            .expect("host ISA")
            .finish(cranelift_codegen::settings::Flags::new(flags))
            .expect("host ISA");
        cranelift_codegen::verify_function(&func, isa.as_ref())
            .unwrap_or_else(|e| panic!("CLIF does not verify: {e}\n{}", func.display()));
        func
    }

    /// Translates `func` and checks the IR with opt and llc.
    fn accept(func: &ir::Function, what: &str) -> String {
        let ir = translate(func, "f")
            .unwrap_or_else(|e| panic!("{what}: refused: {e}\n{}", func.display()));
        llc(&ir, what);
        ir
    }

    fn int_vectors(lane_bits: &[u16]) -> Vec<Type> {
        let mut ts = Vec::new();
        for &bits in lane_bits {
            let lane = Type::int(bits).unwrap();
            ts.push(lane);
            for lanes in [4, 8, 16] {
                ts.push(lane.by(lanes).unwrap());
            }
        }
        ts
    }

    fn float_vectors() -> Vec<Type> {
        let mut ts = Vec::new();
        for lane in [types::F32, types::F64] {
            ts.push(lane);
            for lanes in [4, 8, 16] {
                ts.push(lane.by(lanes).unwrap());
            }
        }
        ts
    }

    #[test]
    fn integer_arithmetic_and_bits_at_every_width() {
        for t in int_vectors(&[8, 16, 32, 64]) {
            let f = build(&[t, t, types::I32], &[t], |b, p| {
                let (x, y, s) = (p[0], p[1], p[2]);
                let mut v = b.ins().iadd(x, y);
                v = b.ins().isub(v, y);
                v = b.ins().imul(v, x);
                v = b.ins().ineg(v);
                v = b.ins().iabs(v);
                v = b.ins().umulhi(v, y);
                v = b.ins().smulhi(v, x);
                v = b.ins().smin(v, y);
                v = b.ins().umax(v, x);
                v = b.ins().band(v, y);
                v = b.ins().bor(v, x);
                v = b.ins().bxor(v, y);
                v = b.ins().bnot(v);
                v = b.ins().band_not(v, x);
                v = b.ins().ishl(v, s);
                v = b.ins().ushr(v, s);
                v = b.ins().sshr(v, s);
                v = b.ins().rotl(v, s);
                v = b.ins().rotr(v, s);
                v = b.ins().popcnt(v);
                if !t.is_vector() {
                    v = b.ins().clz(v);
                    v = b.ins().ctz(v);
                    v = b.ins().cls(v);
                    v = b.ins().bitrev(v);
                    if t.bits() > 8 {
                        v = b.ins().bswap(v);
                    }
                }
                if t.is_vector() && t.lane_bits() <= 16 {
                    v = b.ins().uadd_sat(v, x);
                    v = b.ins().ssub_sat(v, y);
                    v = b.ins().avg_round(v, y);
                }
                let mut c = b.ins().icmp(IntCC::SignedLessThan, v, y);
                if !t.is_vector() {
                    c = b.ins().bmask(t, c);
                }
                let v = b.ins().bitselect(c, v, x);
                vec![b.ins().select(s, v, y)]
            });
            accept(&f, &format!("integer ops on {t}"));
        }
    }

    #[test]
    fn float_arithmetic_and_compares_at_every_width() {
        for t in float_vectors() {
            let f = build(&[t, t, t], &[t, int_shape(t)], |b, p| {
                let (x, y, z) = (p[0], p[1], p[2]);
                let mut v = b.ins().fadd(x, y);
                v = b.ins().fsub(v, z);
                v = b.ins().fmul(v, x);
                v = b.ins().fdiv(v, y);
                v = b.ins().sqrt(v);
                v = b.ins().fma(v, y, z);
                v = b.ins().fneg(v);
                v = b.ins().fabs(v);
                v = b.ins().fcopysign(v, x);
                v = b.ins().floor(v);
                v = b.ins().ceil(v);
                v = b.ins().trunc(v);
                v = b.ins().nearest(v);
                v = b.ins().fmin(v, x);
                v = b.ins().fmax(v, y);
                let mut mask = b.ins().fcmp(FloatCC::Equal, v, x);
                for cc in [
                    FloatCC::NotEqual,
                    FloatCC::Ordered,
                    FloatCC::Unordered,
                    FloatCC::OrderedNotEqual,
                    FloatCC::UnorderedOrEqual,
                    FloatCC::LessThan,
                    FloatCC::LessThanOrEqual,
                    FloatCC::GreaterThan,
                    FloatCC::GreaterThanOrEqual,
                    FloatCC::UnorderedOrLessThan,
                    FloatCC::UnorderedOrLessThanOrEqual,
                    FloatCC::UnorderedOrGreaterThan,
                    FloatCC::UnorderedOrGreaterThanOrEqual,
                ] {
                    let m = b.ins().fcmp(cc, v, y);
                    mask = b.ins().bxor(mask, m);
                }
                let bits = if t.is_vector() {
                    mask
                } else {
                    b.ins().uextend(int_shape(t), mask)
                };
                vec![v, bits]
            });
            accept(&f, &format!("float ops on {t}"));
        }
    }

    /// Stores `values` one after the other at `out`; no return values.
    fn sink(b: &mut FunctionBuilder, out: Value, values: &[Value]) -> Vec<Value> {
        let mut offset = 0;
        for &v in values {
            b.ins().store(flags(), v, out, offset);
            offset += b.func.dfg.value_type(v).bytes() as i32;
        }
        Vec::new()
    }

    fn flags() -> MemFlagsData {
        MemFlagsData::new()
    }

    #[test]
    fn conversions_at_every_width() {
        let f = build(
            &[types::I32, types::F32, types::F64, types::I64],
            &[],
            |b, p| {
                let (i, x, d) = (p[0], p[1], p[2]);
                let w = b.ins().sextend(types::I64, i);
                let u = b.ins().uextend(types::I64, i);
                let w = b.ins().iadd(w, u);
                let n = b.ins().ireduce(types::I16, w);
                let pd = b.ins().fpromote(types::F64, x);
                let dd = b.ins().fdemote(types::F32, d);
                let t1 = b.ins().fcvt_to_sint(types::I64, d);
                let t2 = b.ins().fcvt_to_uint(types::I32, x);
                let t3 = b.ins().fcvt_to_sint(types::I32, x);
                let t4 = b.ins().fcvt_to_uint(types::I64, d);
                let bits = b.ins().bitcast(types::I32, flags(), dd);
                sink(b, p[3], &[n, pd, t1, t2, t3, t4, bits])
            },
        );
        accept(&f, "scalar conversions");
        for lanes in [1u32, 4, 8, 16] {
            let by = |t: Type| if lanes == 1 { t } else { t.by(lanes).unwrap() };
            let (i32t, i64t, f32t, f64t) = (
                by(types::I32),
                by(types::I64),
                by(types::F32),
                by(types::F64),
            );
            let f = build(&[i32t, f32t, i64t, f64t, types::I64], &[], |b, p| {
                let (i, x, l, d) = (p[0], p[1], p[2], p[3]);
                let s = b.ins().fcvt_from_sint(f64t, l);
                let us = b.ins().fcvt_from_uint(f32t, i);
                let s2 = b.ins().fcvt_from_sint(f32t, i);
                let u2 = b.ins().fcvt_from_uint(f64t, l);
                let c1 = b.ins().fcvt_to_sint_sat(i32t, x);
                let c2 = b.ins().fcvt_to_uint_sat(i64t, d);
                let c3 = b.ins().fcvt_to_uint_sat(i32t, x);
                let c4 = b.ins().fcvt_to_sint_sat(i64t, d);
                let bits = b.ins().bitcast(i32t, flags(), us);
                sink(b, p[4], &[s, us, s2, u2, c1, c2, c3, c4, bits])
            });
            accept(&f, &format!("conversions at {lanes} lanes"));
        }
        // i128 as the frontend uses it (wide saturating arithmetic).
        let f = build(&[types::I64, types::I64], &[types::I64], |b, p| {
            let x = b.ins().sextend(types::I128, p[0]);
            let y = b.ins().uextend(types::I128, p[1]);
            let s = b.ins().iadd(x, y);
            let m = b.ins().imul(s, y);
            let (lo, hi) = b.ins().isplit(m);
            let c = b.ins().icmp(IntCC::SignedGreaterThan, m, s);
            let lo = b.ins().select(c, lo, hi);
            let j = b.ins().iconcat(lo, hi);
            let sh = b.ins().sshr_imm_u(j, 3);
            vec![b.ins().ireduce(types::I64, sh)]
        });
        accept(&f, "i128");
    }

    #[test]
    fn lane_operations_at_every_width() {
        for lanes in [4u32, 8, 16] {
            let v32 = types::I32.by(lanes).unwrap();
            let v16 = types::I16.by(lanes * 2).unwrap();
            let f32v = types::F32.by(lanes).unwrap();
            let f = build(&[v32, v32, types::I32, f32v, types::I64], &[], |b, p| {
                let (x, y, s, fx) = (p[0], p[1], p[2], p[3]);
                let sp = b.ins().splat(v32, s);
                let x = b.ins().insertlane(x, s, 1);
                let e = b.ins().extractlane(x, (lanes - 1) as u8);
                let sv = b.ins().scalar_to_vector(v32, e);
                let x = b.ins().iadd(x, sv);
                let x = b.ins().iadd(x, sp);
                // CLIF narrows from at most 8 lanes and widens to at most 16.
                let (n, w) = if lanes <= 8 {
                    let n = b.ins().snarrow(x, y);
                    let un = b.ins().unarrow(x, y);
                    let uun = b.ins().uunarrow(y, x);
                    let n = b.ins().iadd(n, un);
                    let n = b.ins().iadd(n, uun);
                    let wl = b.ins().swiden_low(n);
                    let wh = b.ins().uwiden_high(n);
                    let w = b.ins().iadd_pairwise(wl, wh);
                    let wl2 = b.ins().uwiden_low(n);
                    let wh2 = b.ins().swiden_high(n);
                    let w = b.ins().iadd(w, wl2);
                    (n, b.ins().iadd(w, wh2))
                } else {
                    let n = b
                        .ins()
                        .bitcast(v16, flags().with_endianness(Endianness::Little), x);
                    (n, b.ins().iadd_pairwise(x, y))
                };
                let any = b.ins().vany_true(w);
                let all = b.ins().vall_true(w);
                let hb = b.ins().vhigh_bits(types::I8, w);
                let r = b.ins().iadd(any, all);
                let r = b.ins().iadd(r, hb);
                let m = b.ins().icmp(IntCC::UnsignedLessThan, w, x);
                let bl = b.ins().blendv(m, w, y);
                sink(b, p[4], &[n, bl, r, fx])
            });
            accept(&f, &format!("lane operations at {lanes} lanes"));
        }
        // The 128-bit-only ones.
        let t = types::I8X16;
        let f = build(&[t, t, types::F32X4, types::I64], &[], |b, p| {
            let mask: Vec<u8> = (0..16u8).map(|i| (i * 5) % 32).collect();
            let imm = b.func.dfg.immediates.push(mask.into());
            let s = b.ins().shuffle(p[0], p[1], imm);
            let s = b.ins().swizzle(s, p[1]);
            let s = b.ins().x86_pshufb(s, p[0]);
            let m = b.ins().x86_pmaddubsw(s, p[1]);
            let c = b.ins().x86_cvtt2dq(types::I32X4, p[2]);
            let q = b.ins().sqmul_round_sat(m, m);
            let q2 = b.ins().x86_pmulhrsw(q, m);
            let pd = b.ins().fvpromote_low(p[2]);
            let dm = b.ins().fvdemote(pd);
            let pd2 = b.ins().x86_cvtt2dq(types::I32X4, pd);
            sink(b, p[3], &[s, m, c, q2, dm, pd2])
        });
        accept(&f, "128-bit lane operations");
    }

    #[test]
    fn memory_atomics_calls_and_control() {
        let f = build(
            &[types::I64, types::I64, types::I32],
            &[types::I64, types::F32],
            |b, p| {
                let (ptr, fp, idx) = (p[0], p[1], p[2]);
                let slot = b.create_sized_stack_slot(ir::StackSlotData::new(
                    ir::StackSlotKind::ExplicitSlot,
                    64,
                    6,
                ));
                let aligned = MemFlagsData::new().with_aligned();
                let v = b.ins().load(types::F32X16, flags(), ptr, 4);
                b.ins().stack_store(types::I64, v, slot, 0);
                let w = b.ins().stack_load(types::I64, types::F32X16, slot, 0);
                b.ins().store(aligned, w, ptr, 64);
                let a = b.ins().uload8(types::I32, flags(), ptr, 1);
                let c = b.ins().sload16(types::I64, flags(), ptr, 2);
                let d = b.ins().uload32(flags(), ptr, 8);
                let e = b.ins().sload8x8(flags(), ptr, 16);
                b.ins().store(flags(), e, ptr, 32);
                b.ins().istore8(flags(), a, ptr, 3);
                b.ins().istore16(flags(), c, ptr, 5);
                b.ins().istore32(flags(), d, ptr, 7);
                let x = b
                    .ins()
                    .atomic_rmw(types::I32, flags(), AtomicRmwOp::Smax, ptr, a);
                let x2 = b
                    .ins()
                    .atomic_rmw(types::I64, flags(), AtomicRmwOp::Nand, ptr, c);
                let y = b.ins().atomic_cas(flags(), ptr, x, a);
                let z = b.ins().atomic_load(types::I64, flags(), ptr);
                b.ins().atomic_store(flags(), y, ptr);
                b.ins().fence();
                let sa = b.ins().stack_addr(types::I64, slot, 8);
                let z = b.ins().iadd(z, sa);
                let z = b.ins().iadd(z, x2);
                // Calls: a user function, a libcall, an indirect call.
                let mut sig = ir::Signature::new(CallConv::SystemV);
                sig.params.push(AbiParam::new(types::I32).uext());
                sig.returns.push(AbiParam::new(types::I64));
                sig.returns.push(AbiParam::new(types::F32));
                let sigref = b.import_signature(sig.clone());
                let name = b.func.declare_imported_user_function(ir::UserExternalName {
                    namespace: 0,
                    index: 7,
                });
                let callee = b.import_function(ir::ExtFuncData {
                    name: ExternalName::user(name),
                    signature: sigref,
                    colocated: false,
                    patchable: false,
                });
                let call = b.ins().call(callee, &[idx]);
                let (r0, r1) = (b.inst_results(call)[0], b.inst_results(call)[1]);
                let ind = b.ins().call_indirect(sigref, fp, &[idx]);
                let r2 = b.inst_results(ind)[0];
                let fa = b.ins().func_addr(types::I64, callee);
                let mut lsig = ir::Signature::new(CallConv::SystemV);
                lsig.params.push(AbiParam::new(types::F32));
                lsig.returns.push(AbiParam::new(types::F32));
                let lsigref = b.import_signature(lsig);
                let floorf = b.import_function(ir::ExtFuncData {
                    name: ExternalName::LibCall(ir::LibCall::FloorF32),
                    signature: lsigref,
                    colocated: false,
                    patchable: false,
                });
                let fl = b.ins().call(floorf, &[r1]);
                let fl = b.inst_results(fl)[0];
                let data = b.func.declare_imported_user_function(ir::UserExternalName {
                    namespace: 1,
                    index: 3,
                });
                let gv = b.create_global_value(GlobalValueData::Symbol {
                    name: ExternalName::user(data),
                    offset: ir::immediates::Imm64::new(16),
                    colocated: false,
                    tls: false,
                });
                let gv2 = b.create_global_value(GlobalValueData::IAddImm {
                    base: gv,
                    offset: ir::immediates::Imm64::new(8),
                    global_type: types::I64,
                });
                let sv = b.ins().symbol_value(types::I64, gv2);
                let sum = b.ins().iadd(r0, r2);
                let sum = b.ins().iadd(sum, fa);
                let sum = b.ins().iadd(sum, sv);
                let sum = b.ins().iadd(sum, z);
                // Control: a loop whose brif enters one block twice with different arguments, a
                // br_table, division traps and a conditional trap.
                let head = b.create_block();
                let body = b.create_block();
                let exit = b.create_block();
                b.append_block_param(head, types::I64);
                b.append_block_param(body, types::I64);
                b.append_block_param(exit, types::I64);
                b.ins().jump(head, &[sum.into()]);
                b.switch_to_block(head);
                let h = b.block_params(head)[0];
                let one = b.ins().iconst(types::I64, 1);
                let h1 = b.ins().iadd(h, one);
                b.ins().brif(idx, body, &[h.into()], body, &[h1.into()]);
                b.switch_to_block(body);
                let bv = b.block_params(body)[0];
                let q = b.ins().udiv(bv, sum);
                let q = b.ins().sdiv(q, bv);
                let q = b.ins().srem(q, sum);
                let q = b.ins().urem(q, bv);
                b.ins().trapnz(q, ir::TrapCode::unwrap_user(1));
                let jt = ir::JumpTableData::new(
                    b.func.dfg.block_call(exit, &[bv.into()]),
                    &[
                        b.func.dfg.block_call(head, &[q.into()]),
                        b.func.dfg.block_call(exit, &[q.into()]),
                        b.func.dfg.block_call(exit, &[bv.into()]),
                    ],
                );
                let jt = b.create_jump_table(jt);
                b.ins().br_table(idx, jt);
                b.switch_to_block(exit);
                let out = b.block_params(exit)[0];
                let fp2 = b.ins().get_frame_pointer(types::I64);
                let sp = b.ins().get_stack_pointer(types::I64);
                let d = b.ins().isub(fp2, sp);
                let out = b.ins().iadd(out, d);
                vec![out, fl]
            },
        );
        let ir = accept(&f, "memory, atomics, calls and control");
        for needle in [
            "declare { i64, float } @__ferrocl_u0_7(i32 zeroext) nounwind",
            "@__ferrocl_u1_3 = external global i8",
            "declare float @ferrocl_floorf(float) nounwind",
            "getelementptr i8, ptr @__ferrocl_u1_3, i64 24",
            "alloca [64 x i8], align 64",
        ] {
            assert!(ir.contains(needle), "{needle:?} not in\n{ir}");
        }
    }

    #[test]
    fn what_cannot_be_lowered_is_refused_with_the_instruction() {
        let f = build(&[types::I64], &[types::I64], |b, p| {
            let r = b.ins().get_return_address(types::I64);
            vec![b.ins().iadd(r, p[0])]
        });
        let e = translate(&f, "f").unwrap_err();
        assert!(
            e.contains("`get_return_address` (v1)"),
            "unexpected refusal: {e}"
        );
        let f = build(
            &[types::I64],
            &[types::I64, types::I64, types::I64],
            |_, p| vec![p[0], p[0], p[0]],
        );
        assert!(translate(&f, "f").unwrap_err().contains("3 return values"));
    }

    // ---- bit-for-bit comparison with Cranelift ----------------------------------------------

    /// A function `(in: i64, out: i64)` that loads operands of `operands`' types one after
    /// the other from `in`, computes `body` and stores the results one after the other at
    /// `out`; with the byte sizes of one row of input and output.
    fn pure_fn(
        operands: &[Type],
        body: impl FnOnce(&mut FunctionBuilder, &[Value]) -> Vec<Value>,
    ) -> (ir::Function, usize, usize) {
        let mut out_bytes = 0;
        let in_bytes = operands.iter().map(|t| t.bytes() as usize).sum();
        let f = build(&[types::I64, types::I64], &[], |b, p| {
            let mut offset = 0;
            let mut xs = Vec::new();
            for &t in operands {
                xs.push(b.ins().load(t, flags(), p[0], offset));
                offset += t.bytes() as i32;
            }
            let rs = body(b, &xs);
            out_bytes = rs
                .iter()
                .map(|&v| b.func.dfg.value_type(v).bytes() as usize)
                .sum();
            sink(b, p[1], &rs)
        });
        (f, in_bytes, out_bytes)
    }

    /// A deterministic generator of operands rich in edge cases.
    struct Inputs(u64);

    impl Inputs {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0
        }

        /// One lane of type `lane`, little-endian.
        fn lane(&mut self, lane: Type, out: &mut Vec<u8>) {
            let r = self.next();
            let pick = (r >> 32) as usize;
            let bits: u64 = match lane {
                types::F32 => {
                    const SPECIAL: [u32; 20] = [
                        0,
                        0x8000_0000,
                        0x3f80_0000,
                        0xbf80_0000,
                        0x3fc0_0000,
                        0x4020_0000,
                        0xc020_0000,
                        0x7f80_0000,
                        0xff80_0000,
                        0x7fc0_0000,
                        0x7fc1_2345,
                        0x7f80_0001,
                        0xffc0_0001,
                        0x7f7f_ffff,
                        0x0000_0001,
                        0x4f32_d05e,
                        0xcf00_0000,
                        0x4f00_0000,
                        0x5f00_0000,
                        0xbf33_3333,
                    ];
                    if r & 1 == 0 {
                        u64::from(SPECIAL[pick % SPECIAL.len()])
                    } else {
                        // Mostly moderate magnitudes, where rounding happens.
                        u64::from((r >> 8) as u32 & 0x8fff_ffff | 0x3000_0000)
                    }
                }
                types::F64 => {
                    const SPECIAL: [u64; 16] = [
                        0,
                        0x8000_0000_0000_0000,
                        0x3ff0_0000_0000_0000,
                        0xbff8_0000_0000_0000,
                        0x4004_0000_0000_0000,
                        0x7ff0_0000_0000_0000,
                        0xfff0_0000_0000_0000,
                        0x7ff8_0000_0000_0000,
                        0x7ff8_0000_0012_3456,
                        0x7ff0_0000_0000_0001,
                        0xfff8_0000_0000_0001,
                        0x0000_0000_0000_0001,
                        0x41e0_0000_0000_0000,
                        0xc1e0_0000_0020_0000,
                        0x43e0_0000_0000_0000,
                        0x41ef_ffff_ffe0_0000,
                    ];
                    if r & 1 == 0 {
                        SPECIAL[pick % SPECIAL.len()]
                    } else {
                        (r >> 3) & 0x8fff_ffff_ffff_ffff | 0x3000_0000_0000_0000
                    }
                }
                _ => {
                    let w = lane.bits();
                    let special = [
                        0u64,
                        1,
                        u64::MAX,
                        1 << (w - 1),
                        (1 << (w - 1)) - 1,
                        2,
                        u64::from(w),
                        u64::from(w) + 3,
                        0x80,
                        0x7f,
                    ];
                    if r & 1 == 0 {
                        special[pick % special.len()]
                    } else {
                        self.next()
                    }
                }
            };
            out.extend_from_slice(&bits.to_le_bytes()[..lane.bytes() as usize]);
        }

        fn row(&mut self, operands: &[Type]) -> Vec<u8> {
            let mut row = Vec::new();
            for &t in operands {
                for _ in 0..t.lane_count() {
                    self.lane(t.lane_type(), &mut row);
                }
            }
            row
        }
    }

    /// Runs `pure_fn(operands, body)` on `ROWS` generated rows under Cranelift's JIT and,
    /// translated, under lli-15; the outputs must be identical bytes.
    fn same_results(
        what: &str,
        operands: &[Type],
        body: impl FnOnce(&mut FunctionBuilder, &[Value]) -> Vec<Value>,
    ) {
        const ROWS: usize = 256;
        let Some(lli) = tool("lli-15") else { return };
        let (func, in_bytes, out_bytes) = pure_fn(operands, body);
        let mut gen = Inputs(0x9e37_79b9_7f4a_7c15 ^ what.len() as u64);
        let input: Vec<u8> = (0..ROWS).flat_map(|_| gen.row(operands)).collect();

        use cranelift_module::Module as _;
        let mut jit = crate::translate::new_jit(&crate::BuildOptions::default()).expect("JIT");
        let id = jit
            .declare_function("f", cranelift_module::Linkage::Export, &func.signature)
            .expect("declare");
        let mut ctx = cranelift_codegen::Context::for_function(func.clone());
        jit.define_function(id, &mut ctx)
            .unwrap_or_else(|e| panic!("{what}: Cranelift: {e:?}\n{}", func.display()));
        jit.finalize_definitions().expect("finalize");
        let code = jit.get_finalized_function(id);
        // SAFETY: compiled from a System V function of signature (i64, i64) -> () that reads
        // `in_bytes` at its first argument and writes `out_bytes` at its second.
        let kernel = unsafe { std::mem::transmute::<*const u8, extern "C" fn(u64, u64)>(code) };
        let mut expected = vec![0u8; ROWS * out_bytes];
        for r in 0..ROWS {
            kernel(
                input[r * in_bytes..].as_ptr() as u64,
                expected[r * out_bytes..].as_mut_ptr() as u64,
            );
        }

        let ir = translate(&func, "f").unwrap_or_else(|e| panic!("{what}: refused: {e}"));
        let bytes: String = input.iter().map(|b| format!("\\{b:02X}")).collect();
        let total = ROWS * out_bytes;
        let harness = format!(
            r#"
@input = global [{n} x i8] c"{bytes}", align 64
@output = global [{total} x i8] zeroinitializer, align 64
declare i64 @write(i32, ptr, i64)
define i32 @main() {{
entry:
  br label %loop
loop:
  %r = phi i64 [ 0, %entry ], [ %r1, %loop ]
  %io = mul i64 %r, {in_bytes}
  %oo = mul i64 %r, {out_bytes}
  %ip = getelementptr i8, ptr @input, i64 %io
  %op = getelementptr i8, ptr @output, i64 %oo
  %ii = ptrtoint ptr %ip to i64
  %oi = ptrtoint ptr %op to i64
  call void @f(i64 %ii, i64 %oi)
  %r1 = add i64 %r, 1
  %done = icmp eq i64 %r1, {ROWS}
  br i1 %done, label %end, label %loop
end:
  %w = call i64 @write(i32 1, ptr @output, i64 {total})
  ret i32 0
}}
"#,
            n = input.len()
        );
        let module = format!("{ir}{harness}");
        let file = temp_file("ll");
        std::fs::write(&file, &module).expect("write IR");
        let got = run(Command::new(lli).arg("-O2").arg(&file), what, &ir);
        let _ = std::fs::remove_file(&file);
        assert_eq!(got.len(), expected.len(), "{what}: output size");
        if got != expected {
            let row = (0..ROWS)
                .find(|r| {
                    got[r * out_bytes..][..out_bytes] != expected[r * out_bytes..][..out_bytes]
                })
                .unwrap_or(0);
            let at = |v: &[u8]| format!("{:02x?}", &v[row * out_bytes..][..out_bytes]);
            panic!(
                "{what}: LLVM and Cranelift differ at row {row}\ninput     {:02x?}\nCranelift {}\nLLVM      {}\n{}\n{ir}",
                &input[row * in_bytes..][..in_bytes],
                at(&expected),
                at(&got),
                func.display()
            );
        }
    }

    const INT_CCS: [IntCC; 10] = [
        IntCC::Equal,
        IntCC::NotEqual,
        IntCC::SignedLessThan,
        IntCC::SignedGreaterThanOrEqual,
        IntCC::SignedGreaterThan,
        IntCC::SignedLessThanOrEqual,
        IntCC::UnsignedLessThan,
        IntCC::UnsignedGreaterThanOrEqual,
        IntCC::UnsignedGreaterThan,
        IntCC::UnsignedLessThanOrEqual,
    ];

    const FLOAT_CCS: [FloatCC; 14] = [
        FloatCC::Ordered,
        FloatCC::Unordered,
        FloatCC::Equal,
        FloatCC::NotEqual,
        FloatCC::OrderedNotEqual,
        FloatCC::UnorderedOrEqual,
        FloatCC::LessThan,
        FloatCC::LessThanOrEqual,
        FloatCC::GreaterThan,
        FloatCC::GreaterThanOrEqual,
        FloatCC::UnorderedOrLessThan,
        FloatCC::UnorderedOrLessThanOrEqual,
        FloatCC::UnorderedOrGreaterThan,
        FloatCC::UnorderedOrGreaterThanOrEqual,
    ];

    #[test]
    fn scalar_integers_match_cranelift() {
        for t in [types::I8, types::I16, types::I32, types::I64] {
            same_results(&format!("scalar {t}"), &[t, t, types::I32], |b, p| {
                let (x, y, s) = (p[0], p[1], p[2]);
                let mut rs = vec![
                    b.ins().iadd(x, y),
                    b.ins().isub(x, y),
                    b.ins().imul(x, y),
                    b.ins().umulhi(x, y),
                    b.ins().smulhi(x, y),
                    b.ins().smin(x, y),
                    b.ins().smax(x, y),
                    b.ins().umin(x, y),
                    b.ins().umax(x, y),
                    b.ins().band_not(x, y),
                    b.ins().bnot(x),
                    b.ins().ineg(x),
                    b.ins().iabs(x),
                    b.ins().ishl(x, s),
                    b.ins().ushr(x, s),
                    b.ins().sshr(x, y),
                    b.ins().rotl(x, s),
                    b.ins().rotr(x, y),
                    b.ins().popcnt(x),
                    b.ins().clz(x),
                    b.ins().ctz(x),
                    b.ins().cls(x),
                    b.ins().bitrev(x),
                ];
                if t.bits() > 8 {
                    rs.push(b.ins().bswap(x));
                }
                // Divisors that do not trap: nonzero, and positive for sdiv; srem gets -1.
                let one = b.ins().iconst(t, 1);
                let d = b.ins().bor(y, one);
                let max = b.ins().iconst(t, ((1u64 << (t.bits() - 1)) - 1) as i64);
                let pd = b.ins().band(d, max);
                rs.push(b.ins().udiv(x, d));
                rs.push(b.ins().urem(x, d));
                rs.push(b.ins().sdiv(x, pd));
                rs.push(b.ins().srem(x, d));
                for cc in INT_CCS {
                    rs.push(b.ins().icmp(cc, x, y));
                }
                rs.push(b.ins().select(s, x, y));
                let c = b.ins().icmp(IntCC::SignedLessThan, x, y);
                let m = b.ins().bmask(t, c);
                rs.push(b.ins().bitselect(m, x, y));
                rs
            });
        }
    }

    #[test]
    fn vector_integers_match_cranelift() {
        for t in [types::I8X16, types::I16X8, types::I32X4, types::I64X2] {
            same_results(&format!("vector {t}"), &[t, t, types::I32], |b, p| {
                let (x, y, s) = (p[0], p[1], p[2]);
                let e = b.ins().extractlane(y, 0);
                let mut rs = vec![
                    b.ins().iadd(x, y),
                    b.ins().isub(x, y),
                    b.ins().band_not(x, y),
                    b.ins().bnot(x),
                    b.ins().ineg(x),
                    b.ins().iabs(x),
                    b.ins().ishl(x, s),
                    b.ins().ushr(x, s),
                    b.ins().sshr(x, s),
                    b.ins().vany_true(x),
                    b.ins().vall_true(x),
                    b.ins().vhigh_bits(types::I32, x),
                    b.ins().select(s, x, y),
                    b.ins().extractlane(x, 1),
                    b.ins().insertlane(x, e, 0),
                ];
                if t != types::I64X2 {
                    rs.extend([
                        b.ins().smin(x, y),
                        b.ins().smax(x, y),
                        b.ins().umin(x, y),
                        b.ins().umax(x, y),
                    ]);
                }
                if t != types::I8X16 {
                    rs.push(b.ins().imul(x, y));
                }
                if t.lane_bits() <= 16 {
                    rs.extend([
                        b.ins().uadd_sat(x, y),
                        b.ins().sadd_sat(x, y),
                        b.ins().usub_sat(x, y),
                        b.ins().ssub_sat(x, y),
                        b.ins().avg_round(x, y),
                    ]);
                }
                for cc in INT_CCS {
                    let m = b.ins().icmp(cc, x, y);
                    rs.push(b.ins().bitselect(m, x, y));
                }
                rs
            });
        }
    }

    #[test]
    fn floats_match_cranelift() {
        for t in [types::F32, types::F64, types::F32X4, types::F64X2] {
            same_results(&format!("floats {t}"), &[t, t, t], |b, p| {
                let (x, y, z) = (p[0], p[1], p[2]);
                let mut rs = vec![
                    b.ins().fadd(x, y),
                    b.ins().fsub(x, y),
                    b.ins().fmul(x, y),
                    b.ins().fdiv(x, y),
                    b.ins().sqrt(x),
                    b.ins().fma(x, y, z),
                    b.ins().fneg(x),
                    b.ins().fabs(x),
                    b.ins().floor(x),
                    b.ins().ceil(x),
                    b.ins().trunc(x),
                    b.ins().nearest(x),
                    b.ins().fmin(x, y),
                    b.ins().fmax(x, y),
                    b.ins().fmin(y, x),
                    b.ins().fmax(y, x),
                ];
                for cc in FLOAT_CCS {
                    // Cranelift's x86-64 backend lowers these two for scalars only.
                    let unlowered = [FloatCC::UnorderedOrEqual, FloatCC::OrderedNotEqual];
                    if !(t.is_vector() && unlowered.contains(&cc)) {
                        rs.push(b.ins().fcmp(cc, x, y));
                    }
                }
                // Cranelift's x86-64 backend converts no i64x2 to or from floats.
                if t != types::F64X2 {
                    let it = int_shape(t);
                    rs.push(b.ins().fcvt_to_sint_sat(it, x));
                    rs.push(b.ins().fcvt_to_uint_sat(it, x));
                    let xi = b.ins().bitcast(it, flags(), x);
                    rs.push(b.ins().fcvt_from_sint(t, xi));
                    rs.push(b.ins().fcvt_from_uint(t, xi));
                }
                if !t.is_vector() {
                    // Cranelift's x86-64 backend lowers fcopysign for scalars only.
                    rs.push(b.ins().fcopysign(x, y));
                    let i32s = b.ins().fcvt_to_sint_sat(types::I32, x);
                    rs.push(b.ins().fcvt_from_sint(t, i32s));
                    let other = if t == types::F32 {
                        types::F64
                    } else {
                        types::F32
                    };
                    rs.push(if t == types::F32 {
                        b.ins().fpromote(other, x)
                    } else {
                        b.ins().fdemote(other, x)
                    });
                }
                rs
            });
        }
    }

    #[test]
    fn lane_operations_match_cranelift() {
        same_results(
            "lanes",
            &[
                types::I8X16,
                types::I8X16,
                types::I16X8,
                types::I32X4,
                types::F32X4,
                types::F64X2,
            ],
            |b, p| {
                let (a, bb, h, w, f, d) = (p[0], p[1], p[2], p[3], p[4], p[5]);
                let mask: Vec<u8> = (0..16u8).map(|i| (i * 7 + 3) % 32).collect();
                let imm = b.func.dfg.immediates.push(mask.into());
                let lane = b.ins().extractlane(w, 2);
                vec![
                    b.ins().shuffle(a, bb, imm),
                    b.ins().swizzle(a, bb),
                    b.ins().snarrow(w, w),
                    b.ins().unarrow(w, w),
                    b.ins().snarrow(h, h),
                    b.ins().unarrow(h, h),
                    b.ins().swiden_low(a),
                    b.ins().swiden_high(h),
                    b.ins().uwiden_low(h),
                    b.ins().uwiden_high(a),
                    b.ins().iadd_pairwise(h, h),
                    b.ins().iadd_pairwise(w, w),
                    b.ins().sqmul_round_sat(h, h),
                    b.ins().x86_pmulhrsw(h, h),
                    b.ins().fvpromote_low(f),
                    b.ins().fvdemote(d),
                    b.ins().x86_cvtt2dq(types::I32X4, f),
                    b.ins().splat(types::I32X4, lane),
                    b.ins().scalar_to_vector(types::I32X4, lane),
                    b.ins().blendv(w, w, w),
                ]
            },
        );
    }
}
