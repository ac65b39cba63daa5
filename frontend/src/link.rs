//! Linking SPIR-V modules (`clLinkProgram`): each input is parsed and validated on its own,
//! its ids are shifted into one id space, identical types and constants are merged (SPIR-V
//! allows one declaration of each non-aggregate type, and imports are matched to exports by
//! type), every `Import` is resolved to the `Export` of the same name (`LinkOnceODR`
//! definitions may repeat: the first one is kept), and the result is one module whose function
//! declarations precede its definitions. Unresolved imports are reported by name unless a
//! library is being created; built-in variables (`BuiltIn` decoration) are the environment's and
//! never need an export. Module-scope debug information is dropped, as in a single-module build.

use std::collections::{HashMap, HashSet};

use rspirv::binary::Assemble;
use rspirv::dr::{self, Instruction, Operand};
use spirv::{Decoration, LinkageType, Op, Word};

use crate::diagnostics::FrontendError;
use crate::llvm_intrinsics::is_llvm_intrinsic;
use crate::module::Module;
use crate::parse::parse_specialized;

/// What linking produces.
pub struct Linked {
    /// The linked module, as SPIR-V bytes.
    pub spirv: Vec<u8>,
    /// Imports left unresolved (only possible for a library).
    pub unresolved: Vec<String>,
}

fn link_error(rule: impl Into<String>) -> FrontendError {
    FrontendError::invalid(format!("link: {}", rule.into()), "")
}

/// Specialization values by `SpecId`, as `parse_specialized` takes them.
pub type SpecValues = HashMap<u32, Vec<u8>>;

/// Links `inputs` (SPIR-V bytes, each with its specialization values). With `create_library`
/// unresolved imports are allowed and kept; otherwise each one is an error naming it.
pub fn link(
    inputs: &[(&[u8], &SpecValues)],
    create_library: bool,
) -> Result<Linked, FrontendError> {
    let mut modules = Vec::new();
    for (index, (bytes, values)) in inputs.iter().enumerate() {
        let m = parse_specialized(bytes, values).map_err(|e| match e {
            FrontendError::Invalid(mut diags) => {
                for d in &mut diags {
                    d.rule = format!("input program {index}: {}", d.rule);
                }
                FrontendError::Invalid(diags)
            }
            other => other,
        })?;
        modules.push(m);
    }
    let mut merged = Merger::default();
    for (index, m) in modules.iter().enumerate() {
        merged.add(index, m)?;
    }
    merged.finish(create_library)
}

/// A linkage declaration found in an input.
struct Symbol {
    id: Word,
    input: usize,
    kind: LinkageType,
}

/// An import resolved to an export of another function type that differs only in pointee
/// types (resolved type ids).
struct Adapter {
    import_ret: Word,
    export_ret: Word,
    import_params: Vec<Word>,
    export_params: Vec<Word>,
}

#[derive(Default)]
struct Merger {
    out: dr::Module,
    next_id: Word,
    version: (u8, u8),
    memory_model: Option<(Operand, Operand)>,
    /// Canonical id of each merged type/constant, by opcode, result type and operands.
    canonical: HashMap<(Op, Option<Word>, Vec<Operand>), Word>,
    /// Ext-inst imports by set name.
    ext_sets: HashMap<String, Word>,
    /// Ids of debug-info ext-inst sets, whose instructions are dropped.
    debug_sets: HashSet<Word>,
    /// Ids that stand for another id (merged duplicates, resolved imports).
    replace: HashMap<Word, Word>,
    exports: HashMap<String, Symbol>,
    imports: Vec<(String, Symbol)>,
    kernel_names: HashMap<String, usize>,
    /// Ids whose declarations are removed (resolved imports, repeated LinkOnceODR definitions).
    removed: HashSet<Word>,
    /// Type of each function and global variable, to check imports against exports.
    symbol_types: HashMap<Word, Word>,
    builtins: HashSet<Word>,
}

fn shift(inst: &Instruction, offset: Word) -> Instruction {
    let mut inst = inst.clone();
    if let Some(id) = inst.result_id.as_mut() {
        *id += offset;
    }
    if let Some(ty) = inst.result_type.as_mut() {
        *ty += offset;
    }
    for op in &mut inst.operands {
        if let Some(id) = op.id_ref_any_mut() {
            *id += offset;
        }
    }
    inst
}

fn debug_set(name: &str) -> bool {
    name.starts_with("NonSemantic.") || name == "OpenCL.DebugInfo.100"
}

impl Merger {
    fn resolve(&self, mut id: Word) -> Word {
        // Chains are short (a duplicate of an import resolved to an export); bound the walk.
        for _ in 0..8 {
            match self.replace.get(&id) {
                Some(&next) if next != id => id = next,
                _ => break,
            }
        }
        id
    }

    fn rewrite(&self, inst: &mut Instruction) {
        if let Some(ty) = inst.result_type.as_mut() {
            *ty = self.resolve(*ty);
        }
        for op in &mut inst.operands {
            if let Some(id) = op.id_ref_any_mut() {
                *id = self.resolve(*id);
            }
        }
    }

    fn add(&mut self, input: usize, m: &Module) -> Result<(), FrontendError> {
        let offset = self.next_id;
        let bound = m.raw.header.as_ref().map_or(0, |h| h.bound);
        self.next_id = offset
            .checked_add(bound)
            .filter(|&b| b <= 0x0400_0000)
            .ok_or_else(|| link_error("the linked module would exceed the id bound 2^26"))?;
        self.version = self.version.max(m.version);
        let raw = &m.raw;

        if let Some(mm) = &raw.memory_model {
            let (Some(addressing), Some(memory)) = (mm.operands.first(), mm.operands.get(1)) else {
                return Err(link_error(format!(
                    "input program {input} has a malformed OpMemoryModel"
                )));
            };
            let key = (addressing.clone(), memory.clone());
            match &self.memory_model {
                None => {
                    self.memory_model = Some(key);
                    self.out.memory_model = Some(mm.clone());
                }
                Some(k) if *k == key => {}
                Some(k) => {
                    return Err(link_error(format!(
                    "input program {input} uses memory model {} {} but an earlier input uses {} {}",
                    key.0, key.1, k.0, k.1
                )))
                }
            }
        }
        for inst in &raw.capabilities {
            if !self
                .out
                .capabilities
                .iter()
                .any(|c| c.operands == inst.operands)
            {
                self.out.capabilities.push(inst.clone());
            }
        }
        for inst in &raw.extensions {
            if !self
                .out
                .extensions
                .iter()
                .any(|c| c.operands == inst.operands)
            {
                self.out.extensions.push(inst.clone());
            }
        }
        for inst in &raw.ext_inst_imports {
            let (Some(id), Some(Operand::LiteralString(name))) =
                (inst.result_id, inst.operands.first())
            else {
                continue;
            };
            let id = id + offset;
            if debug_set(name) {
                // Its instructions are dropped (the module-scope debug information they refer
                // to was set aside by the parser), but the import stays: any other use of its
                // id must still resolve.
                self.debug_sets.insert(id);
            }
            match self.ext_sets.get(name) {
                Some(&first) => {
                    self.replace.insert(id, first);
                }
                None => {
                    self.ext_sets.insert(name.clone(), id);
                    self.out.ext_inst_imports.push(shift(inst, offset));
                }
            }
        }

        // Linkage and built-in decorations, before anything is merged.
        for inst in &raw.annotations {
            if inst.class.opcode != Op::Decorate {
                continue;
            }
            match (inst.operands.first(), inst.operands.get(1)) {
                (Some(Operand::IdRef(target)), Some(Operand::Decoration(Decoration::BuiltIn))) => {
                    self.builtins.insert(target + offset);
                }
                (
                    Some(Operand::IdRef(target)),
                    Some(Operand::Decoration(Decoration::LinkageAttributes)),
                ) => {
                    let (Some(Operand::LiteralString(name)), Some(Operand::LinkageType(kind))) =
                        (inst.operands.get(2), inst.operands.get(3))
                    else {
                        continue;
                    };
                    let symbol = Symbol {
                        id: target + offset,
                        input,
                        kind: *kind,
                    };
                    if *kind == LinkageType::Import {
                        self.imports.push((name.clone(), symbol));
                    } else if let Some(first) = self.exports.get(name) {
                        if *kind == LinkageType::LinkOnceODR
                            && first.kind == LinkageType::LinkOnceODR
                        {
                            // One definition rule: the first one stands for all.
                            self.replace.insert(symbol.id, first.id);
                            self.removed.insert(symbol.id);
                        } else {
                            return Err(link_error(format!(
                                "\"{name}\" is defined by input program {} and again by input program {input} (duplicate export)",
                                first.input
                            )));
                        }
                    } else {
                        self.exports.insert(name.clone(), symbol);
                    }
                }
                _ => {}
            }
        }

        for inst in &raw.types_global_values {
            let mut inst = shift(inst, offset);
            self.rewrite(&mut inst);
            let Some(id) = inst.result_id else {
                self.out.types_global_values.push(inst);
                continue;
            };
            let op = inst.class.opcode;
            if op == Op::Variable {
                if let Some(ty) = inst.result_type {
                    self.symbol_types.insert(id, ty);
                }
                self.out.types_global_values.push(inst);
                continue;
            }
            // Types and constants are values: identical ones are one. Structs count as
            // identical only with identical decorations (e.g. CPacked).
            let mut operands = inst.operands.clone();
            if op == Op::TypeStruct {
                for d in &raw.annotations {
                    if d.operands.first() == Some(&Operand::IdRef(id - offset))
                        && d.class.opcode == Op::Decorate
                    {
                        operands.extend(d.operands[1..].iter().cloned());
                    }
                }
            }
            let mergeable = op != Op::TypeForwardPointer && op != Op::Undef;
            let key = (op, inst.result_type, operands);
            match self.canonical.get(&key) {
                Some(&first) if mergeable => {
                    self.replace.insert(id, first);
                }
                _ => {
                    self.canonical.insert(key, id);
                    self.out.types_global_values.push(inst);
                }
            }
        }

        for inst in &raw.entry_points {
            if let Some(Operand::LiteralString(name)) = inst.operands.get(2) {
                if let Some(first) = self.kernel_names.insert(name.clone(), input) {
                    return Err(link_error(format!(
                        "kernel \"{name}\" is defined by input program {first} and again by input program {input}"
                    )));
                }
            }
            self.out.entry_points.push(shift(inst, offset));
        }
        let section = |insts: &[Instruction]| -> Vec<Instruction> {
            insts.iter().map(|i| shift(i, offset)).collect()
        };
        self.out
            .execution_modes
            .extend(section(&raw.execution_modes));
        self.out
            .debug_string_source
            .extend(section(&raw.debug_string_source));
        self.out.debug_names.extend(section(&raw.debug_names));
        self.out
            .debug_module_processed
            .extend(section(&raw.debug_module_processed));
        self.out.annotations.extend(section(&raw.annotations));
        for f in &raw.functions {
            let mut f = f.clone();
            for inst in f.all_inst_iter_mut() {
                *inst = shift(inst, offset);
            }
            if let Some(def) = &f.def {
                if let (Some(id), Some(Operand::IdRef(fn_ty))) =
                    (def.result_id, def.operands.get(1))
                {
                    self.symbol_types.insert(id, *fn_ty);
                }
            }
            self.out.functions.push(f);
        }
        Ok(())
    }

    /// The (return type, parameter types) of function type `ty`, resolved.
    fn signature(&self, ty: Word) -> Option<(Word, Vec<Word>)> {
        let def = self.out.types_global_values.iter().find(|i| {
            i.class.opcode == Op::TypeFunction && i.result_id == Some(self.resolve(ty))
        })?;
        let mut ids = def.operands.iter().map(|o| match o {
            Operand::IdRef(id) => Some(self.resolve(*id)),
            _ => None,
        });
        let ret = ids.next()??;
        Some((ret, ids.collect::<Option<Vec<_>>>()?))
    }

    fn is_function_type(&self, ty: Option<Word>) -> bool {
        ty.and_then(|t| self.signature(t)).is_some()
    }

    /// The storage class of pointer type `ty`.
    fn pointer_storage(&self, ty: Word) -> Option<&Operand> {
        self.out
            .types_global_values
            .iter()
            .find(|i| i.class.opcode == Op::TypePointer && i.result_id == Some(ty))?
            .operands
            .first()
    }

    /// How calls to an import of function type `import` reach an export of function type
    /// `export`, when the two differ only in the pointee types of pointers (parameters and
    /// result) of one storage class each.
    fn pointer_compatible(&self, import: Word, export: Word) -> Option<Adapter> {
        let (import_ret, import_params) = self.signature(import)?;
        let (export_ret, export_params) = self.signature(export)?;
        let fits = |i: Word, e: Word| {
            i == e
                || self
                    .pointer_storage(i)
                    .is_some_and(|s| self.pointer_storage(e) == Some(s))
        };
        let same_shape = import_params.len() == export_params.len()
            && fits(import_ret, export_ret)
            && import_params
                .iter()
                .zip(&export_params)
                .all(|(&i, &e)| fits(i, e));
        same_shape.then_some(Adapter {
            import_ret,
            export_ret,
            import_params,
            export_params,
        })
    }

    fn fresh_id(&mut self) -> Result<Word, FrontendError> {
        let id = self.next_id;
        if id >= 0x0400_0000 {
            return Err(link_error(
                "the linked module would exceed the id bound 2^26",
            ));
        }
        self.next_id += 1;
        Ok(id)
    }

    /// `insts` with each call to an adapted import passing its pointers as the export's
    /// parameter types and taking its pointer result back as the import's: `OpBitcast`s
    /// around the call (the callee reads its parameters with its own types).
    fn adapt_calls(
        &mut self,
        insts: Vec<Instruction>,
        adapters: &HashMap<Word, Adapter>,
    ) -> Result<Vec<Instruction>, FrontendError> {
        let mut out = Vec::with_capacity(insts.len());
        for mut inst in insts {
            let callee = match (inst.class.opcode, inst.operands.first()) {
                (Op::FunctionCall, Some(Operand::IdRef(f))) => *f,
                _ => {
                    out.push(inst);
                    continue;
                }
            };
            let Some(a) = adapters.get(&callee) else {
                out.push(inst);
                continue;
            };
            for (k, (&i, &e)) in a.import_params.iter().zip(&a.export_params).enumerate() {
                let Some(Operand::IdRef(arg)) = inst.operands.get(k + 1).cloned() else {
                    continue;
                };
                if i != e {
                    let cast = self.fresh_id()?;
                    out.push(Instruction::new(
                        Op::Bitcast,
                        Some(e),
                        Some(cast),
                        vec![Operand::IdRef(arg)],
                    ));
                    inst.operands[k + 1] = Operand::IdRef(cast);
                }
            }
            match inst.result_id {
                Some(result) if a.import_ret != a.export_ret => {
                    let returned = self.fresh_id()?;
                    inst.result_type = Some(a.export_ret);
                    inst.result_id = Some(returned);
                    out.push(inst);
                    out.push(Instruction::new(
                        Op::Bitcast,
                        Some(a.import_ret),
                        Some(result),
                        vec![Operand::IdRef(returned)],
                    ));
                }
                _ => out.push(inst),
            }
        }
        Ok(out)
    }

    fn finish(mut self, create_library: bool) -> Result<Linked, FrontendError> {
        let mut unresolved = Vec::new();
        let mut problems = Vec::new();
        let mut adapters: HashMap<Word, Adapter> = HashMap::new();
        for (name, import) in std::mem::take(&mut self.imports) {
            if self.builtins.contains(&import.id) || provided_by_device(&name) {
                continue;
            }
            let Some(export) = self.exports.get(&name) else {
                unresolved.push((name, import.input));
                continue;
            };
            let (it, et) = (
                self.symbol_types.get(&import.id).map(|&t| self.resolve(t)),
                self.symbol_types.get(&export.id).map(|&t| self.resolve(t)),
            );
            if it != et {
                // Under LLVM's opaque pointers one function is declared with whatever pointee
                // each module's front end saw (oneMKL's fp16 modf exports f(struct{half}*,
                // half*, half*), kernels import f(struct{half}*, struct{half}*,
                // struct{half}*)): pointers match by storage class, and the calls get bitcasts.
                match it.zip(et).and_then(|(i, e)| self.pointer_compatible(i, e)) {
                    Some(adapter) => {
                        adapters.insert(import.id, adapter);
                    }
                    None => {
                        problems.push(format!(
                            "link: import of \"{name}\" in input program {} (%{}) does not have the type of its export in input program {} (%{}){}",
                            import.input, import.id, export.input, export.id,
                            if self.is_function_type(it) { " (pointer parameters and results may differ in pointee type, not in storage class)" } else { "" }
                        ));
                        continue;
                    }
                }
            }
            self.replace.insert(import.id, export.id);
            self.removed.insert(import.id);
        }
        if !create_library {
            for (name, input) in &unresolved {
                problems.push(if is_llvm_intrinsic(name) {
                    format!("link: unresolved import {name}: an LLVM intrinsic Ferrocl does not provide (declared in input program {input})")
                } else {
                    format!("link: unresolved import \"{name}\" (declared in input program {input}, exported by no input)")
                });
            }
        }
        if !problems.is_empty() {
            return Err(FrontendError::Invalid(
                problems
                    .into_iter()
                    .map(|rule| crate::diagnostics::Diagnostic {
                        rule,
                        instruction: String::new(),
                        word_offset: None,
                        source_name: None,
                        source_line: None,
                    })
                    .collect(),
            ));
        }

        let removed = &self.removed;
        let targets_removed = |i: &Instruction| matches!(i.operands.first(), Some(Operand::IdRef(t)) if removed.contains(t));
        let is_debug = |i: &Instruction, sets: &HashSet<Word>| {
            i.class.opcode == Op::ExtInst
                && matches!(i.operands.first(), Some(Operand::IdRef(s)) if sets.contains(s))
        };
        let mut out = std::mem::take(&mut self.out);
        out.annotations.retain(|i| !targets_removed(i));
        out.debug_names.retain(|i| !targets_removed(i));
        out.types_global_values
            .retain(|i| !i.result_id.is_some_and(|id| removed.contains(&id)));
        out.functions
            .retain(|f| !f.def_id().is_some_and(|id| removed.contains(&id)));
        for f in &mut out.functions {
            for b in &mut f.blocks {
                b.instructions.retain(|i| !is_debug(i, &self.debug_sets));
            }
        }
        if !adapters.is_empty() {
            for f in &mut out.functions {
                for b in &mut f.blocks {
                    let insts = std::mem::take(&mut b.instructions);
                    b.instructions = self.adapt_calls(insts, &adapters)?;
                }
            }
        }
        // Merged duplicates leave repeated decorations and names behind.
        for inst in out.all_inst_iter_mut() {
            self.rewrite(inst);
        }
        let mut seen = HashSet::new();
        out.annotations
            .retain(|i| seen.insert(format!("{:?}{:?}", i.class.opcode, i.operands)));
        let mut named = HashSet::new();
        out.debug_names
            .retain(|i| match (i.class.opcode, i.operands.first()) {
                (Op::Name, Some(Operand::IdRef(t))) => named.insert(*t),
                _ => true,
            });
        // SPIR-V 2.4: function declarations come before definitions.
        out.functions.sort_by_key(|f| !f.blocks.is_empty());

        let mut header = dr::ModuleHeader::new(self.next_id.max(1));
        header.set_version(self.version.0, self.version.1);
        out.header = Some(header);
        let words = out.assemble();
        Ok(Linked {
            spirv: words.iter().flat_map(|w| w.to_le_bytes()).collect(),
            unresolved: unresolved.into_iter().map(|(n, _)| n).collect(),
        })
    }
}

/// A mangled OpenCL C built-in's name followed by its parameter codes (`_Z17clock_read_devicev`
/// gives `clock_read_devicev`); None for names that are not Itanium-mangled.
pub fn itanium_name(mangled: &str) -> Option<&str> {
    let rest = mangled.strip_prefix("_Z")?;
    Some(rest.trim_start_matches(|c: char| c.is_ascii_digit()))
}

/// `cl_intel_devicelib_assert`'s function: SYCL's `assert` in device code calls it (DPC++
/// imports it by this unmangled name) when the device reports the extension, and codegen
/// calls the driver's implementation, which prints the failure to stderr and aborts
/// (`devicelib_assert_call`). Its declaration must have the extension's signature
/// (validate_types/devicelib.rs).
pub const DEVICELIB_ASSERT_FAIL: &str = "__devicelib_assert_fail";

/// Imported functions the device itself provides: OpenCL C built-ins llvm-spirv-15 leaves as
/// calls (cl_khr_integer_dot_product's packed forms, cl_khr_kernel_clock's clock_read_*,
/// cl_khr_extended_async_copies' copies, cl_khr_async_work_group_copy_fence's fence), by
/// their mangled names, and [`DEVICELIB_ASSERT_FAIL`]; codegen computes them
/// (`packed_dot_call`, `clock_call`, `extended_async_copy`, `devicelib_assert_call`).
pub fn provided_by_device(mangled: &str) -> bool {
    if mangled == DEVICELIB_ASSERT_FAIL {
        return true;
    }
    let Some(name) = itanium_name(mangled) else {
        return false;
    };
    name.starts_with("dot_4x8packed_")
        || name.starts_with("dot_acc_sat_4x8packed_")
        || name.starts_with("async_work_group_copy_2D2D")
        || name.starts_with("async_work_group_copy_3D3D")
        || matches!(
            name,
            "clock_read_devicev"
                | "clock_read_hilo_devicev"
                | "clock_read_work_groupv"
                | "clock_read_hilo_work_groupv"
                | "async_work_group_copy_fencej"
        )
}

/// The imports of a module that only linking could resolve (`Import` linkage on anything but a
/// built-in variable), as build-log lines; empty for a module that builds on its own.
pub fn unresolved_imports(m: &Module) -> Vec<String> {
    m.raw
        .annotations
        .iter()
        .filter_map(|inst| {
            let (
                Some(Operand::IdRef(target)),
                Some(Operand::Decoration(Decoration::LinkageAttributes)),
                Some(Operand::LiteralString(name)),
                Some(Operand::LinkageType(LinkageType::Import)),
            ) = (
                inst.operands.first(),
                inst.operands.get(1),
                inst.operands.get(2),
                inst.operands.get(3),
            )
            else {
                return None;
            };
            if m.has_decoration(*target, Decoration::BuiltIn) || provided_by_device(name) {
                return None;
            }
            if is_llvm_intrinsic(name) {
                // No program can export it: linking would not help.
                return Some(format!(
                    "error: link: unresolved import {name}: an LLVM intrinsic Ferrocl does not provide (function %{target}); the SPIR-V translator left it as an imported function\n"
                ));
            }
            let what = if m.function_raw(*target).is_some() {
                "function"
            } else {
                "variable"
            };
            Some(format!(
                "error: link: unresolved import \"{name}\" ({what} %{target}): no program provides it; compile this program and link it with one that exports it (clCompileProgram + clLinkProgram)\n"
            ))
        })
        .collect()
}
