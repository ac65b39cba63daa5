//! The JIT: construction of a program's JIT module (its target ISA and flags, every symbol
//! kernels may reference registered), and the build of a module's program in it — program-scope
//! data declared and defined, each kernel translated (translate/) in its environment
//! (environment.rs), the translated functions compiled (backend/), defined, linked, and the
//! program's kernels made of them. serialize.rs loads cached machine code into a module made
//! here.

mod environment;

use environment::AbiEnvironment;

use std::collections::HashMap;

use cranelift_codegen::ir::{self, types, AbiParam, UserFuncName};
use cranelift_codegen::settings::{self, Configurable};
use cranelift_frontend::FunctionBuilderContext;
use cranelift_jit::{JITBuilder, JITModule};
use cranelift_module::{DataDescription, DataId, FuncId, Linkage, Module as _};
use ferrocl_frontend::spirv::Word;
use ferrocl_frontend::Module;

use crate::abi::WorkGroupFn;
use crate::entry_points::EntryPoint;
use crate::error::BuildError;
use crate::options::BuildOptions;
use crate::program::{Kernel, Program};
use crate::translate;
use crate::Vectorization;

/// A program's JIT module while it is built: what every kernel's environment
/// ([`environment::AbiEnvironment`]) declares its references in.
pub(crate) struct ModuleEnv {
    pub(crate) jit: JITModule,
    /// The data of each program-scope variable (`CrossWorkgroup`, `UniformConstant`).
    pub(crate) data: HashMap<Word, DataId>,
    imports: HashMap<EntryPoint, FuncId>,
    /// Imported read-only tables of the driver (abi.rs), by symbol.
    tables: HashMap<&'static str, DataId>,
    /// What the module is defined from, kept for [`crate::serialize`] when the build asks.
    pub(crate) recording: Option<crate::serialize::Recording>,
    /// Bytes of `CrossWorkgroup` program-scope variables (CL_PROGRAM_BUILD_GLOBAL_VARIABLE_TOTAL_SIZE).
    global_variable_bytes: u64,
}

impl ModuleEnv {
    /// The module's import of `entry` (declared on first use).
    pub(crate) fn import(&mut self, entry: EntryPoint) -> Result<FuncId, BuildError> {
        if let Some(id) = self.imports.get(&entry) {
            return Ok(*id);
        }
        let (params, returns) = entry.signature();
        let mut sig = self.jit.make_signature();
        sig.params.extend(params.into_iter().map(AbiParam::new));
        sig.returns.extend(returns.into_iter().map(AbiParam::new));
        let name = entry.symbol();
        let id = self
            .jit
            .declare_function(name, Linkage::Import, &sig)
            .map_err(|e| BuildError::new(format!("internal: declaring {name}: {e}\n")))?;
        self.imports.insert(entry, id);
        Ok(id)
    }

    /// The module's import of the driver's table `symbol` (declared on first use).
    pub(crate) fn table(&mut self, symbol: &'static str) -> Result<DataId, BuildError> {
        if let Some(id) = self.tables.get(symbol) {
            return Ok(*id);
        }
        let id = self
            .jit
            .declare_data(symbol, Linkage::Import, false, false)
            .map_err(|e| BuildError::new(format!("internal: declaring {symbol}: {e}\n")))?;
        self.tables.insert(symbol, id);
        Ok(id)
    }

    /// A reference to program-scope data from `func`. Not `colocated`: the JIT may map data
    /// more than 2 GiB away from code, beyond a 32-bit PC-relative relocation (what
    /// `declare_data_in_func` emits for local data), so an absolute 64-bit address is used.
    pub(crate) fn declare_data_in_func(
        &mut self,
        data: DataId,
        func: &mut ir::Function,
    ) -> ir::GlobalValue {
        let name = func.declare_imported_user_function(ir::UserExternalName {
            namespace: 1,
            index: data.as_u32(),
        });
        func.create_global_value(ir::GlobalValueData::Symbol {
            name: ir::ExternalName::user(name),
            offset: ir::immediates::Imm64::new(0),
            colocated: false,
            tls: false,
        })
    }
}

/// Whether Cranelift's optimiser runs for `options` (the only shared flag options change).
pub(crate) fn optimizes(options: &BuildOptions) -> bool {
    options.optimize && !options.round_to_zero
}

/// The JIT's target: this host's ISA as `cranelift_native` detects it, with Ferrocl's flags.
pub(crate) fn new_isa(
    options: &BuildOptions,
) -> Result<cranelift_codegen::isa::OwnedTargetIsa, BuildError> {
    let mut flags = settings::builder();
    let set = |flags: &mut settings::Builder, k: &str, v: &str| {
        flags
            .set(k, v)
            .map_err(|e| BuildError::new(format!("internal: cranelift flag {k}={v}: {e}\n")))
    };
    set(&mut flags, "use_colocated_libcalls", "false")?;
    set(&mut flags, "is_pic", "false")?;
    // Generic pointers are classified by address; private memory is the frame [SP, FP).
    set(&mut flags, "preserve_frame_pointers", "true")?;
    set(
        &mut flags,
        "opt_level",
        if optimizes(options) { "speed" } else { "none" },
    )?;
    // Frames larger than a page touch each page on the way down, so a frame larger than what is
    // left of the stack faults on its guard page instead of writing beyond it (crate docs of
    // PRIVATE_STACK_LIMIT).
    set(&mut flags, "enable_probestack", "true")?;
    set(&mut flags, "probestack_strategy", "inline")?;
    // The verifier stays on until the frontend checks the operand types of every instruction:
    // it turns inconsistent modules into build errors instead of miscompiled code.
    set(&mut flags, "enable_verifier", "true")?;
    cranelift_native::builder()
        .map_err(|e| {
            BuildError::new(format!(
                "error: this host is not supported by the JIT: {e}\n"
            ))
        })?
        .finish(settings::Flags::new(flags))
        .map_err(|e| BuildError::new(format!("internal: building the target ISA: {e}\n")))
}

/// The symbol a Cranelift libcall is linked to (every one codegen can cause is registered;
/// the rest name a symbol that is not, so linking them fails).
pub(crate) fn libcall_symbol(libcall: ir::LibCall) -> String {
    use cranelift_codegen::ir::LibCall::*;
    match libcall {
        CeilF32 => "ferrocl_ceilf",
        CeilF64 => "ferrocl_ceil",
        FloorF32 => "ferrocl_floorf",
        FloorF64 => "ferrocl_floor",
        TruncF32 => "ferrocl_truncf",
        TruncF64 => "ferrocl_trunc",
        NearestF32 => "ferrocl_nearbyintf",
        NearestF64 => "ferrocl_nearbyint",
        FmaF32 => "ferrocl_fmaf",
        FmaF64 => "ferrocl_fma",
        Memcpy => "ferrocl_memcpy",
        Memset => "ferrocl_memset",
        Memmove => "ferrocl_memmove",
        Memcmp => "ferrocl_memcmp",
        _ => "ferrocl_unsupported_libcall",
    }
    .to_owned()
}

/// A JIT module for `options` with every symbol kernels may reference registered.
pub(crate) fn new_jit(options: &BuildOptions) -> Result<JITModule, BuildError> {
    let mut builder = JITBuilder::with_isa(new_isa(options)?, Box::new(libcall_symbol));
    for (name, ptr) in crate::entry_points::jit_symbols() {
        builder.symbol(name, ptr);
    }
    // What LLVM's code (the wide backend) may call besides: registered for every program, so
    // that a cached wide program links in any build.
    for (name, ptr) in crate::backend::object::llvm_symbols() {
        builder.symbol(name, ptr);
    }
    Ok(JITModule::new(builder))
}

/// Declares the data of every program-scope variable, then defines each (initializers may
/// hold each other's addresses).
fn define_module_data(m: &Module, env: &mut ModuleEnv) -> Result<(), BuildError> {
    let variables = translate::program_variables(m);
    for &(id, writable) in &variables {
        let name = format!("__ferrocl_global_{id}");
        let data = env
            .jit
            .declare_data(&name, Linkage::Local, writable, false)
            .map_err(|e| BuildError::new(format!("internal: declaring {name}: {e}\n")))?;
        env.data.insert(id, data);
    }
    for (id, writable) in variables {
        let Some(contents) = translate::variable_contents(m, id)? else {
            continue;
        };
        let data = env.data[&id];
        let size = contents.bytes.len() as u64;
        if writable {
            env.global_variable_bytes += size;
        }
        let mut desc = DataDescription::new();
        let mut recorded = crate::serialize::DataDef {
            id: data,
            align: contents.align,
            bytes: Vec::new(),
            relocs: Vec::new(),
        };
        if env.recording.is_some() {
            recorded
                .bytes
                .try_reserve_exact(contents.bytes.len())
                .map_err(|_| {
                    BuildError::out_of_memory(&format!(
                        "program-scope variable %{id} of {size} bytes"
                    ))
                })?;
            recorded.bytes.extend_from_slice(&contents.bytes);
        }
        desc.define(contents.bytes.into_boxed_slice());
        desc.set_align(contents.align);
        for r in contents.relocs {
            let target = *env.data.get(&r.target).ok_or_else(|| {
                BuildError::new(format!(
                    "error: initializer of %{id} takes the address of %{}, which is not program-scope global or constant data\n",
                    r.target
                ))
            })?;
            let gv = env.jit.declare_data_in_data(target, &mut desc);
            desc.write_data_addr(r.offset as u32, gv, r.addend);
            recorded.relocs.push((r.offset as u32, target, r.addend));
        }
        if let Some(recording) = &mut env.recording {
            recording.data.push(recorded);
        }
        env.jit
            .define_data(data, &desc)
            .map_err(|e| BuildError::jit("internal", &format!("defining data of %{id}"), &e))?;
    }
    Ok(())
}

/// Builds the program of `m` for `options`: every kernel, or the one a specialised build is for.
pub(crate) fn compile_module(m: &Module, options: &BuildOptions) -> Result<Program, BuildError> {
    let mut env = ModuleEnv {
        jit: new_jit(options)?,
        data: HashMap::new(),
        imports: HashMap::new(),
        tables: HashMap::new(),
        recording: options
            .serializable
            .then(crate::serialize::Recording::default),
        global_variable_bytes: 0,
    };
    define_module_data(m, &mut env)?;
    // Translation needs the module (imports, data) and runs kernel by kernel; Cranelift's
    // compilation of the translated functions needs only the ISA, so the kernels of a
    // program compile in parallel, and their machine code is defined in the module after.
    let mut fctx = FunctionBuilderContext::new();
    let mut translated = Vec::new();
    for (index, kernel) in m.kernels.iter().enumerate() {
        // A specialised build is for one kernel.
        if options
            .specialize
            .as_ref()
            .is_some_and(|s| s.kernel != kernel.name)
        {
            continue;
        }
        let mut sig = env.jit.make_signature();
        sig.params.extend([AbiParam::new(types::I64); 3]);
        let mut func =
            ir::Function::with_name_signature(UserFuncName::user(0, index as u32), sig.clone());
        let (local_offsets, static_local) = translate::layout_kernel_local_variables(m, kernel)?;
        let mut kernel_env = AbiEnvironment::new(&mut env, kernel, options, local_offsets);
        let mut shape =
            translate::kernel::build(m, kernel, &mut kernel_env, options, &mut func, &mut fctx)
                .map_err(|e| {
                    BuildError::new(format!(
                        "{}kernel \"{}\" was not built\n",
                        e.log, kernel.name
                    ))
                })?;
        let (slots, args_size) = kernel_env.into_arg_block();
        if options.dump_dir.is_some() {
            dump(options, &kernel.name, "clif", &func.display().to_string());
        }
        let name = format!("__ferrocl_kernel_{index}");
        let id = env
            .jit
            .declare_function(&name, Linkage::Export, &sig)
            .map_err(|e| BuildError::new(format!("internal: declaring {name}: {e}\n")))?;
        let fallback = shape.scalar_fallback.take();
        translated.push((
            id,
            func,
            fallback,
            (kernel, slots, args_size, static_local, shape),
        ));
    }
    let jobs: Vec<(FuncId, ir::Function, Option<ir::Function>)> = translated
        .iter_mut()
        .map(|(id, func, fallback, _)| {
            let func = std::mem::replace(func, ir::Function::new());
            (*id, func, fallback.take())
        })
        .collect();
    let compiled = crate::backend::compile_functions(env.jit.isa(), jobs, options);
    let mut built = Vec::new();
    for ((id, _, _, (kernel, slots, args_size, static_local, mut shape)), code) in
        translated.into_iter().zip(compiled)
    {
        let mut code = code.map_err(|e| {
            BuildError::new(format!(
                "error: the JIT could not compile kernel \"{}\": {e}\n",
                kernel.name
            ))
        })?;
        if code.scalar_fallback {
            // A vector operation the host's ISA cannot lower: the scalar loop needs nothing
            // beyond what every kernel uses.
            shape.vectorization =
                Vectorization::Scalar("the JIT could not lower its vector code".into());
        }
        for (suffix, text) in &code.dumps {
            dump(options, &kernel.name, suffix, text);
        }
        // Functions LLVM's code calls that no kernel named: declared now, as imports the
        // JIT resolves among its symbols ([`new_jit`]).
        let imports = std::mem::take(&mut code.imports);
        crate::backend::object::LoadedFunction::declare_imports(
            &mut code.relocs,
            &imports,
            |name| {
                let sig = env.jit.make_signature();
                env.jit
                    .declare_function(name, Linkage::Import, &sig)
                    .map_err(|e| format!("declaring {name}: {e}"))
            },
        )
        .map_err(|e| {
            BuildError::new(format!(
                "internal: linking kernel \"{}\": {e}\n",
                kernel.name
            ))
        })?;
        env.jit
            .define_function_bytes(id, code.alignment, &code.bytes, &code.relocs)
            .map_err(|e| {
                let step = format!("the JIT could not load kernel \"{}\"", kernel.name);
                BuildError::jit("error", &step, &e)
            })?;
        if let Some(recording) = &mut env.recording {
            recording.functions.push(crate::serialize::FunctionDef {
                id,
                alignment: code.alignment,
                bytes: code.bytes,
                relocs: code.relocs,
            });
        }
        built.push((
            id,
            kernel.clone(),
            slots,
            args_size,
            static_local,
            shape,
            code.spill_bytes,
            (code.backend, code.wide_refusal),
        ));
    }
    env.jit
        .finalize_definitions()
        .map_err(|e| BuildError::jit("error", "linking JIT code failed", &e))?;
    let kernels: Vec<Kernel> = built
        .into_iter()
        .map(
            |(id, info, slots, args_size, static_local, shape, spill_bytes, backend)| {
                let code = env.jit.get_finalized_function(id);
                // SAFETY: `code` was compiled from a function with signature (i64, i64, i64) -> ()
                // in the host's default calling convention, which is `WorkGroupFn`'s ABI.
                let entry = unsafe { std::mem::transmute::<*const u8, WorkGroupFn>(code) };
                Kernel::new(
                    info,
                    slots,
                    args_size,
                    static_local as usize,
                    // With barriers every work-item's private variables and the values live across
                    // barriers sit in its frame, which is then what each work-item needs (the body
                    // is translated once per resume point, so `private_bytes` would count each
                    // variable several times).
                    if shape.frame_size > 0 {
                        shape.frame_size
                    } else {
                        shape.private_bytes
                    } as usize,
                    shape.instruction_count,
                    shape.frame_size as usize,
                    shape.barrier_schedule,
                    shape.vectorization,
                    shape.printf_formats,
                    options.checked,
                    shape.check_sites,
                    entry,
                )
                .with_spill_mem_size(spill_bytes)
                .with_backend(backend.0, backend.1)
            },
        )
        .collect();
    let data: Vec<_> = env.data.values().copied().collect();
    let serialized = env.recording.take().map(|recording| {
        crate::serialize::encode(&env.jit, &recording, &kernels, env.global_variable_bytes)
    });
    let mut program = Program::new(kernels, env.jit, env.global_variable_bytes, data);
    program.serialized = serialized;
    Ok(program)
}

/// Writes one dump file of a kernel (IR or machine code) into `options.dump_dir`; failing to
/// write is reported, not fatal.
fn dump(options: &BuildOptions, kernel: &str, suffix: &str, text: &str) {
    let Some(dir) = &options.dump_dir else { return };
    let safe: String = kernel
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect();
    let path = dir.join(format!("{safe}.{suffix}"));
    if let Err(e) = std::fs::create_dir_all(dir).and_then(|()| std::fs::write(&path, text)) {
        eprintln!("ferrocl: cannot write {}: {e}", path.display());
    }
}
