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
    /// Vector values whose lanes are all ones or all zeros (masks.rs).
    masks: std::collections::HashSet<Value>,
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
        types::F16 => "half".into(),
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
            masks: masks::lane_masks(func),
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
            ExternalName::LibCall(lc) => Ok(crate::jit::libcall_symbol(*lc)),
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

mod float;
mod integer;
mod lanes;
mod masks;
#[cfg(test)]
pub(crate) mod tests;
