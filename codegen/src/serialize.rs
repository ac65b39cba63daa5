//! The serialized form of a compiled [`Program`], which the runtime's program cache keeps so that
//! a later build of the same module skips the frontend and Cranelift: each kernel function's
//! machine code as Cranelift emitted it (before linking) with its relocations by symbol, the
//! program-scope data objects with theirs, the module's declarations in order, and every
//! kernel's metadata. Loading declares the same symbols in a fresh JIT module of this process,
//! defines the code and data, and lets cranelift-jit apply the relocations against this
//! process's addresses (mathlib, the runtime services and the driver's tables, found by name).
//!
//! Owns the byte format, [`code_identity`] (what besides the module and the options decides the
//! code) and the checks on load: a damaged image is an error, never a crash — indices,
//! relocation kinds, offsets and symbols are checked before anything reaches the JIT. The values
//! the runtime trusts at launch (sizes of frames and local memory) are vouched for by the cache
//! entry's digest, not here; argument-block layouts are recomputed from the kernel signatures.

use std::borrow::Cow;
use std::collections::HashSet;
use std::sync::OnceLock;

use cranelift_codegen::binemit::Reloc;
use cranelift_codegen::entity::EntityRef;
use cranelift_codegen::ir::LibCall;
use cranelift_jit::JITModule;
use cranelift_module::{
    DataDescription, DataId, FuncId, Linkage, Module as _, ModuleReloc, ModuleRelocTarget,
};
use ferrocl_frontend::{
    AccessQualifier, AddressQualifier, ArgKind, ImageType, KernelArg, KernelInfo, PrintfArg,
    PrintfConversion, PrintfFormat, PrintfPiece, TypeQualifiers,
};

use crate::abi::WorkGroupFn;
use crate::checked::{CheckKind, CheckSite};
use crate::options::{Backend, BuildOptions};
use crate::program::{BarrierSchedule, BuildError, Kernel, ModuleSource, Program, Vectorization};

/// The Cranelift release the code generator is built with (the workspace pins every Cranelift
/// crate to it; a test checks the pin).
pub const CRANELIFT_VERSION: &str = "0.135.8";

/// First bytes of a serialized program; a new layout gets a new number (2: each kernel's
/// backend and the wide backend's refusal).
const MAGIC: &[u8] = b"ferrocl program image 3\n";

/// A program-scope data object as it was defined: its bytes before relocation, and for each
/// address in it (offset, target object, addend).
pub(crate) struct DataDef {
    pub(crate) id: DataId,
    pub(crate) align: u64,
    pub(crate) bytes: Vec<u8>,
    pub(crate) relocs: Vec<(u32, DataId, i64)>,
}

/// A function as Cranelift emitted it, before linking.
pub(crate) struct FunctionDef {
    pub(crate) id: FuncId,
    pub(crate) alignment: u64,
    pub(crate) bytes: Vec<u8>,
    pub(crate) relocs: Vec<ModuleReloc>,
}

/// What a build defines in its JIT module, kept while the module is built
/// ([`BuildOptions::serializable`]); `functions[i]` is the work-group function of kernel `i`.
#[derive(Default)]
pub(crate) struct Recording {
    pub(crate) data: Vec<DataDef>,
    pub(crate) functions: Vec<FunctionDef>,
}

/// Everything besides the module and the build options that decides the machine code: the
/// Cranelift release, the target triple, and the shared and ISA flags of the JIT's target as
/// Cranelift sees this CPU (`cranelift_native`) for `options`; with the wide backend also
/// LLVM's release and the CPU and features it compiles for. Part of the program cache's key.
pub fn code_identity(options: &BuildOptions) -> Result<&'static str, BuildError> {
    let cranelift = cranelift_identity(options)?;
    if options.backend == Backend::Cranelift {
        return Ok(cranelift);
    }
    // One leaked string per (optimised, width) a process builds with: a handful at most.
    type Identities = Vec<((bool, u32), &'static str)>;
    static WIDE: std::sync::Mutex<Identities> = std::sync::Mutex::new(Vec::new());
    let key = (crate::jit::optimizes(options), options.target.vector_bits);
    let mut wide = WIDE.lock().unwrap_or_else(|e| e.into_inner());
    if let Some((_, identity)) = wide.iter().find(|(k, _)| *k == key) {
        return Ok(identity);
    }
    // Without LLVM every kernel is Cranelift's, which the first part identifies.
    let llvm = ferrocl_opencl_c::wide_code_identity(key.1).unwrap_or_else(|| "no llvm\n".into());
    let identity: &'static str = Box::leak(format!("{cranelift}{llvm}").into_boxed_str());
    wide.push((key, identity));
    Ok(identity)
}

fn cranelift_identity(options: &BuildOptions) -> Result<&'static str, BuildError> {
    static IDENTITY: [OnceLock<Result<String, BuildError>>; 2] = [OnceLock::new(), OnceLock::new()];
    let optimized = crate::jit::optimizes(options);
    IDENTITY[usize::from(optimized)]
        .get_or_init(|| {
            let isa = crate::jit::new_isa(options)?;
            let mut out = format!(
                "cranelift {CRANELIFT_VERSION} {}\n{}",
                isa.triple(),
                isa.flags()
            );
            for flag in isa.isa_flags() {
                out.push_str(&format!("{flag}\n"));
            }
            Ok(out)
        })
        .as_ref()
        .map(String::as_str)
        .map_err(Clone::clone)
}

/// The relocation kinds a serialized program may hold (cranelift-jit applies them all when it
/// links), with the bytes each patches. Their index is their code in the format.
const RELOC_KINDS: [(Reloc, usize); 7] = [
    (Reloc::Abs4, 4),
    (Reloc::Abs8, 8),
    (Reloc::X86PCRel4, 4),
    (Reloc::X86CallPCRel4, 4),
    (Reloc::Arm64Call, 4),
    (Reloc::Aarch64AdrPrelPgHi21, 4),
    (Reloc::Aarch64AddAbsLo12Nc, 4),
];

fn linkage_code(linkage: Linkage) -> u8 {
    match linkage {
        Linkage::Import => 0,
        Linkage::Local => 1,
        Linkage::Preemptible => 2,
        Linkage::Hidden => 3,
        Linkage::Export => 4,
    }
}

fn linkage_of(code: u8) -> Result<Linkage, String> {
    Ok(match code {
        0 => Linkage::Import,
        1 => Linkage::Local,
        2 => Linkage::Preemptible,
        3 => Linkage::Hidden,
        4 => Linkage::Export,
        _ => return Err(format!("linkage {code}")),
    })
}

/// Little-endian, length-prefixed output.
#[derive(Default)]
struct Writer(Vec<u8>);

impl Writer {
    fn u8(&mut self, v: u8) {
        self.0.push(v);
    }
    fn bool(&mut self, v: bool) {
        self.u8(u8::from(v));
    }
    fn u32(&mut self, v: u32) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    fn u64(&mut self, v: u64) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    fn i64(&mut self, v: i64) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    fn usize(&mut self, v: usize) {
        self.u64(v as u64);
    }
    /// A count of what follows.
    fn len(&mut self, n: usize) -> Result<(), String> {
        self.u32(u32::try_from(n).map_err(|_| format!("{n} items"))?);
        Ok(())
    }
    fn bytes(&mut self, v: &[u8]) -> Result<(), String> {
        self.len(v.len())?;
        self.0.extend_from_slice(v);
        Ok(())
    }
    fn str(&mut self, v: &str) -> Result<(), String> {
        self.bytes(v.as_bytes())
    }
    fn opt_str(&mut self, v: Option<&str>) -> Result<(), String> {
        self.bool(v.is_some());
        match v {
            Some(s) => self.str(s),
            None => Ok(()),
        }
    }
    fn opt_u32(&mut self, v: Option<u32>) {
        self.bool(v.is_some());
        self.u32(v.unwrap_or(0));
    }
    fn opt_xyz(&mut self, v: Option<[u32; 3]>) {
        self.bool(v.is_some());
        for d in v.unwrap_or_default() {
            self.u32(d);
        }
    }
}

/// The reading side of [`Writer`]; every read is bounds-checked, and counts are never trusted
/// for allocation (each item read consumes input, so a damaged count ends at the input's end).
struct Reader<'a>(&'a [u8]);

type Read<T> = Result<T, String>;

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Read<&'a [u8]> {
        if self.0.len() < n {
            return Err("truncated".into());
        }
        let (head, rest) = self.0.split_at(n);
        self.0 = rest;
        Ok(head)
    }
    fn array<const N: usize>(&mut self) -> Read<[u8; N]> {
        let mut out = [0; N];
        out.copy_from_slice(self.take(N)?);
        Ok(out)
    }
    fn u8(&mut self) -> Read<u8> {
        Ok(self.take(1)?[0])
    }
    fn bool(&mut self) -> Read<bool> {
        match self.u8()? {
            0 => Ok(false),
            1 => Ok(true),
            b => Err(format!("boolean {b}")),
        }
    }
    fn u32(&mut self) -> Read<u32> {
        Ok(u32::from_le_bytes(self.array()?))
    }
    fn u64(&mut self) -> Read<u64> {
        Ok(u64::from_le_bytes(self.array()?))
    }
    fn i64(&mut self) -> Read<i64> {
        Ok(i64::from_le_bytes(self.array()?))
    }
    fn usize(&mut self) -> Read<usize> {
        let v = self.u64()?;
        usize::try_from(v).map_err(|_| format!("size {v}"))
    }
    fn len(&mut self) -> Read<usize> {
        Ok(self.u32()? as usize)
    }
    fn bytes(&mut self) -> Read<&'a [u8]> {
        let n = self.len()?;
        self.take(n)
    }
    fn string(&mut self) -> Read<String> {
        String::from_utf8(self.bytes()?.to_vec()).map_err(|_| "a string is not UTF-8".into())
    }
    fn opt_string(&mut self) -> Read<Option<String>> {
        Ok(if self.bool()? {
            Some(self.string()?)
        } else {
            None
        })
    }
    fn opt_u32(&mut self) -> Read<Option<u32>> {
        let some = self.bool()?;
        let v = self.u32()?;
        Ok(some.then_some(v))
    }
    fn opt_xyz(&mut self) -> Read<Option<[u32; 3]>> {
        let some = self.bool()?;
        let v = [self.u32()?, self.u32()?, self.u32()?];
        Ok(some.then_some(v))
    }
    /// `count` items read by `item`.
    fn list<T>(&mut self, mut item: impl FnMut(&mut Self) -> Read<T>) -> Read<Vec<T>> {
        let count = self.len()?;
        let mut out = Vec::new();
        for _ in 0..count {
            out.push(item(self)?);
        }
        Ok(out)
    }
}

/// Serializes a program compiled with a [`Recording`]; an error names what the format cannot
/// hold (the build itself is fine, it is only not cached).
pub(crate) fn encode(
    jit: &JITModule,
    recording: &Recording,
    kernels: &[Kernel],
    global_variable_bytes: u64,
) -> Result<Vec<u8>, String> {
    if recording.functions.len() != kernels.len() {
        return Err("a function is not a kernel's".into());
    }
    let mut w = Writer::default();
    w.0.extend_from_slice(MAGIC);
    w.u64(global_variable_bytes);
    let declarations = jit.declarations();
    let functions: Vec<_> = declarations.get_functions().collect();
    w.len(functions.len())?;
    for (i, (id, decl)) in functions.iter().enumerate() {
        if id.index() != i {
            return Err("function declarations out of order".into());
        }
        let name = decl.name.as_deref().ok_or("an anonymous function")?;
        w.str(name)?;
        w.u8(linkage_code(decl.linkage));
    }
    let data: Vec<_> = declarations.get_data_objects().collect();
    w.len(data.len())?;
    for (i, (id, decl)) in data.iter().enumerate() {
        if id.index() != i || decl.tls {
            return Err("data declarations out of order, or thread-local".into());
        }
        let name = decl.name.as_deref().ok_or("an anonymous data object")?;
        w.str(name)?;
        w.u8(linkage_code(decl.linkage));
        w.bool(decl.writable);
    }
    w.len(recording.data.len())?;
    for d in &recording.data {
        w.u32(d.id.index() as u32);
        w.u64(d.align);
        // Only up to the last non-zero byte: a large zero-initialised array costs nothing.
        let stored = d.bytes.iter().rposition(|&b| b != 0).map_or(0, |i| i + 1);
        w.u64(d.bytes.len() as u64);
        w.bytes(&d.bytes[..stored])?;
        w.len(d.relocs.len())?;
        for &(offset, target, addend) in &d.relocs {
            w.u32(offset);
            w.u32(target.index() as u32);
            w.i64(addend);
        }
    }
    w.len(kernels.len())?;
    for (f, k) in recording.functions.iter().zip(kernels) {
        encode_function(&mut w, f)?;
        encode_kernel(&mut w, k)?;
    }
    // What is stored must load: the same checks a load makes (a module with something the
    // loader refuses is then built each time, not stored and refused each time).
    decode(&w.0)?;
    Ok(w.0)
}

fn encode_function(w: &mut Writer, f: &FunctionDef) -> Result<(), String> {
    w.u32(f.id.index() as u32);
    w.u64(f.alignment);
    w.bytes(&f.bytes)?;
    w.len(f.relocs.len())?;
    for r in &f.relocs {
        w.u32(r.offset);
        let kind = RELOC_KINDS
            .iter()
            .position(|(k, _)| *k == r.kind)
            .ok_or_else(|| format!("relocation kind {:?}", r.kind))?;
        w.u8(kind as u8);
        match &r.name {
            ModuleRelocTarget::User { namespace, index } => {
                w.u8(0);
                w.u32(*namespace);
                w.u32(*index);
            }
            ModuleRelocTarget::LibCall(libcall) => {
                w.u8(1);
                w.str(&libcall.to_string())?;
            }
            ModuleRelocTarget::FunctionOffset(func, offset) => {
                w.u8(2);
                w.u32(func.index() as u32);
                w.u32(*offset);
            }
            other => return Err(format!("relocation target {other}")),
        }
        w.i64(r.addend);
    }
    Ok(())
}

fn address_code(a: AddressQualifier) -> u8 {
    match a {
        AddressQualifier::Global => 0,
        AddressQualifier::Constant => 1,
        AddressQualifier::Local => 2,
        AddressQualifier::Private => 3,
    }
}

fn address_of(code: u8) -> Read<AddressQualifier> {
    Ok(match code {
        0 => AddressQualifier::Global,
        1 => AddressQualifier::Constant,
        2 => AddressQualifier::Local,
        3 => AddressQualifier::Private,
        _ => return Err(format!("address qualifier {code}")),
    })
}

fn access_code(a: AccessQualifier) -> u8 {
    match a {
        AccessQualifier::ReadOnly => 0,
        AccessQualifier::WriteOnly => 1,
        AccessQualifier::ReadWrite => 2,
        AccessQualifier::None => 3,
    }
}

fn access_of(code: u8) -> Read<AccessQualifier> {
    Ok(match code {
        0 => AccessQualifier::ReadOnly,
        1 => AccessQualifier::WriteOnly,
        2 => AccessQualifier::ReadWrite,
        3 => AccessQualifier::None,
        _ => return Err(format!("access qualifier {code}")),
    })
}

/// The image types in their stored order; an image argument's code is its index, or the
/// number of types for none.
const IMAGE_TYPES: [ImageType; 8] = [
    ImageType::Image1d,
    ImageType::Image1dArray,
    ImageType::Image1dBuffer,
    ImageType::Image2d,
    ImageType::Image2dArray,
    ImageType::Image2dDepth,
    ImageType::Image2dArrayDepth,
    ImageType::Image3d,
];

fn image_type_code(t: Option<ImageType>) -> u8 {
    let index = t.and_then(|t| IMAGE_TYPES.iter().position(|&known| known == t));
    index.unwrap_or(IMAGE_TYPES.len()) as u8
}

fn image_type_of(code: u8) -> Read<Option<ImageType>> {
    match IMAGE_TYPES.get(usize::from(code)) {
        Some(&t) => Ok(Some(t)),
        None if usize::from(code) == IMAGE_TYPES.len() => Ok(None),
        None => Err(format!("image type {code}")),
    }
}

fn encode_kernel(w: &mut Writer, k: &Kernel) -> Result<(), String> {
    // Destructured, so that a new field cannot be forgotten here (the argument slots are
    // recomputed on load from the signature).
    let Kernel {
        info,
        args: _,
        args_size: _,
        static_local_mem_size,
        private_mem_size,
        instruction_count,
        work_item_frame_size,
        barrier_schedule,
        vectorization,
        printf_formats,
        checked,
        check_sites,
        spill_mem_size,
        backend,
        wide_refusal,
        entry: _,
    } = k;
    encode_info(w, info)?;
    w.usize(*static_local_mem_size);
    w.usize(*private_mem_size);
    w.usize(*instruction_count);
    w.usize(*work_item_frame_size);
    w.usize(*spill_mem_size);
    w.u8(match barrier_schedule {
        BarrierSchedule::None => 0,
        BarrierSchedule::Static => 1,
        BarrierSchedule::Dynamic => 2,
    });
    match vectorization {
        Vectorization::Vectorized { lanes } => {
            w.u8(0);
            w.u32(*lanes);
        }
        Vectorization::Scalar(why) => {
            w.u8(1);
            w.str(why)?;
        }
        Vectorization::ExplicitVectors => w.u8(2),
    }
    w.u8(match backend {
        Backend::Cranelift => 0,
        Backend::Wide => 1,
    });
    w.opt_str(wide_refusal.as_deref())?;
    w.len(printf_formats.len())?;
    for f in printf_formats {
        w.len(f.pieces.len())?;
        for piece in &f.pieces {
            match piece {
                PrintfPiece::Text(text) => {
                    w.u8(0);
                    w.bytes(text)?;
                }
                PrintfPiece::Conversion(PrintfConversion {
                    directive,
                    arg,
                    count,
                }) => {
                    w.u8(1);
                    w.str(directive)?;
                    match arg {
                        PrintfArg::Int {
                            bytes,
                            signed,
                            long,
                        } => {
                            w.u8(0);
                            w.u32(*bytes);
                            w.bool(*signed);
                            w.bool(*long);
                        }
                        PrintfArg::Float { bytes } => {
                            w.u8(1);
                            w.u32(*bytes);
                        }
                        PrintfArg::Pointer => w.u8(2),
                        PrintfArg::Str(s) => {
                            w.u8(3);
                            w.bytes(s)?;
                        }
                    }
                    w.u32(*count);
                }
            }
        }
    }
    w.bool(*checked);
    w.len(check_sites.len())?;
    for CheckSite {
        kind,
        size,
        object,
        candidates,
    } in check_sites
    {
        w.u8(match kind {
            CheckKind::Read => 0,
            CheckKind::Write => 1,
            CheckKind::Atomic => 2,
            CheckKind::DivisionByZero => 3,
            CheckKind::DivergentBarrier => 4,
            CheckKind::InvalidOperand => 5,
        });
        w.u64(*size);
        w.str(object)?;
        w.u32(*candidates);
    }
    Ok(())
}

fn encode_info(w: &mut Writer, info: &KernelInfo) -> Result<(), String> {
    let KernelInfo {
        name,
        function,
        args,
        reqd_work_group_size,
        work_group_size_hint,
        vec_type_hint,
        contraction_off,
        required_sub_group_size,
        sub_groups_per_work_group,
        uses_barrier,
        has_spin_loops,
        has_named_barriers,
        block_invoke,
        uses_device_enqueue,
    } = info;
    w.str(name)?;
    w.u32(*function);
    w.len(args.len())?;
    for KernelArg {
        name,
        kind,
        address,
        access,
        type_name,
        qualifiers,
    } in args
    {
        w.opt_str(name.as_deref())?;
        match kind {
            ArgKind::Buffer { address } => {
                w.u8(0);
                w.u8(address_code(*address));
            }
            ArgKind::Local => w.u8(1),
            ArgKind::Value { size, align } => {
                w.u8(2);
                w.usize(*size);
                w.usize(*align);
            }
            ArgKind::Sampler => w.u8(3),
            ArgKind::Image { access, image_type } => {
                w.u8(4);
                w.u8(access_code(*access));
                w.u8(image_type_code(*image_type));
            }
            ArgKind::Pipe { access } => {
                w.u8(5);
                w.u8(access_code(*access));
            }
            ArgKind::Queue => w.u8(6),
            ArgKind::BlockLiteral => w.u8(7),
        }
        w.u8(address_code(*address));
        w.u8(access_code(*access));
        w.opt_str(type_name.as_deref())?;
        let TypeQualifiers {
            is_const,
            is_restrict,
            is_volatile,
            is_pipe,
        } = qualifiers;
        for q in [is_const, is_restrict, is_volatile, is_pipe] {
            w.bool(*q);
        }
    }
    w.opt_xyz(*reqd_work_group_size);
    w.opt_xyz(*work_group_size_hint);
    w.opt_str(vec_type_hint.as_deref())?;
    w.bool(*contraction_off);
    w.opt_u32(*required_sub_group_size);
    w.opt_u32(*sub_groups_per_work_group);
    w.bool(*uses_barrier);
    w.bool(*has_spin_loops);
    w.bool(*has_named_barriers);
    w.bool(*block_invoke);
    w.bool(*uses_device_enqueue);
    Ok(())
}

fn decode_info(r: &mut Reader) -> Read<KernelInfo> {
    let name = r.string()?;
    let function = r.u32()?;
    let args = r.list(|r| {
        let name = r.opt_string()?;
        let kind = match r.u8()? {
            0 => ArgKind::Buffer {
                address: address_of(r.u8()?)?,
            },
            1 => ArgKind::Local,
            2 => ArgKind::Value {
                size: r.usize()?,
                align: r.usize()?,
            },
            3 => ArgKind::Sampler,
            4 => ArgKind::Image {
                access: access_of(r.u8()?)?,
                image_type: image_type_of(r.u8()?)?,
            },
            5 => ArgKind::Pipe {
                access: access_of(r.u8()?)?,
            },
            6 => ArgKind::Queue,
            7 => ArgKind::BlockLiteral,
            k => return Err(format!("argument kind {k}")),
        };
        Ok(KernelArg {
            name,
            kind,
            address: address_of(r.u8()?)?,
            access: access_of(r.u8()?)?,
            type_name: r.opt_string()?,
            qualifiers: TypeQualifiers {
                is_const: r.bool()?,
                is_restrict: r.bool()?,
                is_volatile: r.bool()?,
                is_pipe: r.bool()?,
            },
        })
    })?;
    Ok(KernelInfo {
        name,
        function,
        args,
        reqd_work_group_size: r.opt_xyz()?,
        work_group_size_hint: r.opt_xyz()?,
        vec_type_hint: r.opt_string()?,
        contraction_off: r.bool()?,
        required_sub_group_size: r.opt_u32()?,
        sub_groups_per_work_group: r.opt_u32()?,
        uses_barrier: r.bool()?,
        has_spin_loops: r.bool()?,
        has_named_barriers: r.bool()?,
        block_invoke: r.bool()?,
        uses_device_enqueue: r.bool()?,
    })
}

/// A kernel's metadata as read back; its entry point comes once the code is linked.
struct KernelMeta {
    info: KernelInfo,
    static_local_mem_size: usize,
    private_mem_size: usize,
    instruction_count: usize,
    work_item_frame_size: usize,
    spill_mem_size: usize,
    barrier_schedule: BarrierSchedule,
    vectorization: Vectorization,
    backend: Backend,
    wide_refusal: Option<String>,
    printf_formats: Vec<PrintfFormat>,
    checked: bool,
    check_sites: Vec<CheckSite>,
}

fn decode_kernel(r: &mut Reader) -> Read<KernelMeta> {
    let info = decode_info(r)?;
    let static_local_mem_size = r.usize()?;
    let private_mem_size = r.usize()?;
    let instruction_count = r.usize()?;
    let work_item_frame_size = r.usize()?;
    let spill_mem_size = r.usize()?;
    let barrier_schedule = match r.u8()? {
        0 => BarrierSchedule::None,
        1 => BarrierSchedule::Static,
        2 => BarrierSchedule::Dynamic,
        b => return Err(format!("barrier schedule {b}")),
    };
    let vectorization = match r.u8()? {
        0 => Vectorization::Vectorized { lanes: r.u32()? },
        1 => Vectorization::Scalar(Cow::Owned(r.string()?)),
        2 => Vectorization::ExplicitVectors,
        v => return Err(format!("vectorization {v}")),
    };
    let backend = match r.u8()? {
        0 => Backend::Cranelift,
        1 => Backend::Wide,
        b => return Err(format!("backend {b}")),
    };
    let wide_refusal = r.opt_string()?;
    let printf_formats = r.list(|r| {
        let pieces = r.list(|r| {
            Ok(match r.u8()? {
                0 => PrintfPiece::Text(r.bytes()?.to_vec()),
                1 => {
                    let directive = r.string()?;
                    let arg = match r.u8()? {
                        0 => PrintfArg::Int {
                            bytes: r.u32()?,
                            signed: r.bool()?,
                            long: r.bool()?,
                        },
                        1 => PrintfArg::Float { bytes: r.u32()? },
                        2 => PrintfArg::Pointer,
                        3 => PrintfArg::Str(r.bytes()?.to_vec()),
                        a => return Err(format!("printf argument {a}")),
                    };
                    PrintfPiece::Conversion(PrintfConversion {
                        directive,
                        arg,
                        count: r.u32()?,
                    })
                }
                p => return Err(format!("printf piece {p}")),
            })
        })?;
        Ok(PrintfFormat { pieces })
    })?;
    let checked = r.bool()?;
    let check_sites = r.list(|r| {
        let kind = match r.u8()? {
            0 => CheckKind::Read,
            1 => CheckKind::Write,
            2 => CheckKind::Atomic,
            3 => CheckKind::DivisionByZero,
            4 => CheckKind::DivergentBarrier,
            5 => CheckKind::InvalidOperand,
            k => return Err(format!("check kind {k}")),
        };
        Ok(CheckSite {
            kind,
            size: r.u64()?,
            object: r.string()?,
            candidates: r.u32()?,
        })
    })?;
    Ok(KernelMeta {
        info,
        static_local_mem_size,
        private_mem_size,
        instruction_count,
        work_item_frame_size,
        spill_mem_size,
        barrier_schedule,
        vectorization,
        backend,
        wide_refusal,
        printf_formats,
        checked,
        check_sites,
    })
}

/// A serialized program read back, checked, not yet loaded.
struct Image {
    global_variable_bytes: u64,
    functions: Vec<(String, Linkage)>,
    /// (name, linkage, writable).
    data: Vec<(String, Linkage, bool)>,
    data_defs: Vec<DataDef>,
    kernels: Vec<(FunctionDef, KernelMeta)>,
}

/// Alignments a definition may ask for (powers of two up to a page).
fn valid_alignment(align: u64) -> bool {
    align.is_power_of_two() && align <= 4096
}

fn decode(bytes: &[u8]) -> Read<Image> {
    let rest = bytes
        .strip_prefix(MAGIC)
        .ok_or("not a serialized program")?;
    let mut r = Reader(rest);
    let global_variable_bytes = r.u64()?;
    let functions = r.list(|r| Ok((r.string()?, linkage_of(r.u8()?)?)))?;
    let data = r.list(|r| Ok((r.string()?, linkage_of(r.u8()?)?, r.bool()?)))?;
    let data_defs = r.list(|r| {
        let id = r.len()?;
        let align = r.u64()?;
        let size = r.usize()?;
        let stored = r.bytes()?;
        let relocs = r.list(|r| {
            let offset = r.u32()?;
            let target = r.len()?;
            let addend = r.i64()?;
            if target >= data.len() || (offset as usize).saturating_add(8) > size {
                return Err(format!("data relocation at {offset} to {target}"));
            }
            Ok((offset, DataId::new(target), addend))
        })?;
        // No program-scope variable is larger (the frontend refuses them): a damaged size
        // fails here, not in an allocation.
        let largest = ferrocl_frontend::MAX_PROGRAM_SCOPE_VARIABLE_BYTES as usize;
        if stored.len() > size || size > largest || !valid_alignment(align) {
            return Err(format!(
                "data object {id} of {size} bytes aligned to {align}"
            ));
        }
        let mut bytes = Vec::new();
        bytes
            .try_reserve_exact(size)
            .map_err(|_| format!("data object {id} of {size} bytes"))?;
        bytes.extend_from_slice(stored);
        bytes.resize(size, 0);
        Ok(DataDef {
            id: DataId::new(id),
            align,
            bytes,
            relocs,
        })
    })?;
    let kernels = r.list(|r| {
        let id = r.len()?;
        let alignment = r.u64()?;
        let code = r.bytes()?.to_vec();
        let relocs = r.list(|r| {
            let offset = r.u32()?;
            let (kind, width) = *RELOC_KINDS.get(r.u8()? as usize).ok_or("relocation kind")?;
            let name = match r.u8()? {
                0 => ModuleRelocTarget::User {
                    namespace: r.u32()?,
                    index: r.u32()?,
                },
                1 => {
                    let name = r.string()?;
                    ModuleRelocTarget::LibCall(
                        name.parse::<LibCall>()
                            .map_err(|()| format!("libcall {name}"))?,
                    )
                }
                2 => ModuleRelocTarget::FunctionOffset(FuncId::new(r.len()?), r.u32()?),
                t => return Err(format!("relocation target {t}")),
            };
            let addend = r.i64()?;
            if (offset as usize).saturating_add(width) > code.len() {
                return Err(format!("relocation at {offset} past the code"));
            }
            Ok(ModuleReloc {
                offset,
                kind,
                name,
                addend,
            })
        })?;
        if !valid_alignment(alignment) {
            return Err(format!("function aligned to {alignment}"));
        }
        let function = FunctionDef {
            id: FuncId::new(id),
            alignment,
            bytes: code,
            relocs,
        };
        Ok((function, decode_kernel(r)?))
    })?;
    if !r.0.is_empty() {
        return Err("bytes after the end".into());
    }
    let image = Image {
        global_variable_bytes,
        functions,
        data,
        data_defs,
        kernels,
    };
    check_links(&image)?;
    Ok(image)
}

/// The checks that keep linking from panicking or writing out of place: every definable
/// declaration defined exactly once and nothing else defined, every relocation target
/// declared, every import and libcall a symbol this driver registers.
fn check_links(image: &Image) -> Read<()> {
    let symbols: HashSet<String> = crate::entry_points::jit_symbols()
        .into_iter()
        .map(|(name, _)| name)
        .chain(
            crate::backend::object::llvm_symbols()
                .into_iter()
                .map(|(name, _)| name.to_owned()),
        )
        .collect();
    let defined_once = |ids: &mut dyn Iterator<Item = usize>, decls: &[Linkage], what: &str| {
        let mut defined = vec![false; decls.len()];
        for id in ids {
            match defined.get_mut(id) {
                Some(d) if !*d && decls[id] != Linkage::Import => *d = true,
                _ => return Err(format!("{what} {id} defined wrongly")),
            }
        }
        match decls
            .iter()
            .zip(&defined)
            .position(|(l, d)| *l != Linkage::Import && !d)
        {
            Some(id) => Err(format!("{what} {id} is not defined")),
            None => Ok(()),
        }
    };
    let function_linkage: Vec<Linkage> = image.functions.iter().map(|f| f.1).collect();
    let data_linkage: Vec<Linkage> = image.data.iter().map(|d| d.1).collect();
    defined_once(
        &mut image.kernels.iter().map(|(f, _)| f.id.index()),
        &function_linkage,
        "function",
    )?;
    defined_once(
        &mut image.data_defs.iter().map(|d| d.id.index()),
        &data_linkage,
        "data object",
    )?;
    let imports = image
        .functions
        .iter()
        .map(|(name, linkage)| (name, *linkage))
        .chain(image.data.iter().map(|(name, linkage, _)| (name, *linkage)));
    for (name, linkage) in imports {
        if linkage == Linkage::Import && !symbols.contains(name) {
            return Err(format!("unknown symbol {name}"));
        }
    }
    for (f, _) in &image.kernels {
        for r in &f.relocs {
            let ok = match &r.name {
                ModuleRelocTarget::User {
                    namespace: 0,
                    index,
                } => (*index as usize) < image.functions.len(),
                ModuleRelocTarget::User {
                    namespace: 1,
                    index,
                } => (*index as usize) < image.data.len(),
                ModuleRelocTarget::LibCall(libcall) => {
                    symbols.contains(&crate::jit::libcall_symbol(*libcall))
                }
                ModuleRelocTarget::FunctionOffset(func, offset) => image
                    .kernels
                    .iter()
                    .any(|(g, _)| g.id == *func && (*offset as usize) <= g.bytes.len()),
                _ => false,
            };
            if !ok {
                return Err(format!("relocation to {}", r.name));
            }
        }
    }
    Ok(())
}

impl Program {
    /// Turns the output of [`Program::take_serialized`] back into a program, in a fresh JIT
    /// module of this process: no frontend, no Cranelift compilation. `options` are those of
    /// the build that made it (kept for specialised builds), and `parse` makes the module
    /// again if a kernel with image arguments is specialised at a launch. A damaged image is an
    /// error.
    pub fn load(
        bytes: &[u8],
        options: &BuildOptions,
        parse: ModuleSource,
    ) -> Result<Program, BuildError> {
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            let image = decode(bytes)
                .map_err(|e| BuildError::new(format!("serialized program damaged: {e}\n")))?;
            let mut program = link(image, options)?;
            program.keep_parser_for_specialization(parse, options);
            Ok(program)
        }))
        .unwrap_or_else(|panic| {
            let what = panic
                .downcast_ref::<String>()
                .map(String::as_str)
                .or_else(|| panic.downcast_ref::<&str>().copied())
                .unwrap_or("unknown panic");
            Err(BuildError::new(format!(
                "internal: loading a serialized program failed: {what}\n"
            )))
        })
    }
}

/// A JIT module being loaded: its memory is released if loading stops half-way (an error or a
/// panic), since dropping a `JITModule` leaks it.
struct Loading(Option<JITModule>);

impl Drop for Loading {
    fn drop(&mut self) {
        if let Some(jit) = self.0.take() {
            // SAFETY: loading did not finish, so no pointer into this module's code or data
            // has left `link`.
            unsafe { jit.free_memory() };
        }
    }
}

fn link(image: Image, options: &BuildOptions) -> Result<Program, BuildError> {
    let internal = |what: &str, e: &dyn std::fmt::Display| {
        BuildError::new(format!(
            "internal: loading a serialized program, {what}: {e}\n"
        ))
    };
    // The steps that allocate the JIT's memory, where running out of it is no damage.
    let loading_failed = |what: &str, e: &cranelift_module::ModuleError| {
        BuildError::jit(
            "internal",
            &format!("loading a serialized program, {what}"),
            e,
        )
    };
    let mut loading = Loading(Some(crate::jit::new_jit(options)?));
    let jit = loading.0.as_mut().expect("set above");
    // Declared in the original order, so the ids the relocations name are the same. Imports
    // need no signature to be linked (only their address is used), and definitions are bytes.
    let signature = jit.make_signature();
    for (i, (name, linkage)) in image.functions.iter().enumerate() {
        let id = jit
            .declare_function(name, *linkage, &signature)
            .map_err(|e| internal(name, &e))?;
        if id.index() != i {
            return Err(internal(name, &"declared twice"));
        }
    }
    for (i, (name, linkage, writable)) in image.data.iter().enumerate() {
        let id = jit
            .declare_data(name, *linkage, *writable, false)
            .map_err(|e| internal(name, &e))?;
        if id.index() != i {
            return Err(internal(name, &"declared twice"));
        }
    }
    let mut data_ids = Vec::new();
    for d in image.data_defs {
        let mut desc = DataDescription::new();
        desc.define(d.bytes.into_boxed_slice());
        desc.set_align(d.align);
        for (offset, target, addend) in d.relocs {
            let gv = jit.declare_data_in_data(target, &mut desc);
            desc.write_data_addr(offset, gv, addend);
        }
        jit.define_data(d.id, &desc)
            .map_err(|e| loading_failed("defining data", &e))?;
        data_ids.push(d.id);
    }
    let mut metas = Vec::new();
    for (f, meta) in image.kernels {
        jit.define_function_bytes(f.id, f.alignment, &f.bytes, &f.relocs)
            .map_err(|e| loading_failed(&meta.info.name, &e))?;
        metas.push((f.id, meta));
    }
    jit.finalize_definitions()
        .map_err(|e| loading_failed("linking", &e))?;
    let kernels = metas
        .into_iter()
        .map(|(id, m)| {
            let code = jit.get_finalized_function(id);
            // SAFETY: the code is a work-group function compiled (in the process that stored
            // it, for this host's ISA, checked by the cache key) from a function with signature
            // (i64, i64, i64) -> () in the host's default calling convention, `WorkGroupFn`'s
            // ABI; its relocations were applied by the JIT against this process's symbols.
            let entry = unsafe { std::mem::transmute::<*const u8, WorkGroupFn>(code) };
            let (slots, args_size) = crate::abi::arg_block_layout(&m.info, m.checked);
            Kernel::new(
                m.info,
                slots,
                args_size,
                m.static_local_mem_size,
                m.private_mem_size,
                m.instruction_count,
                m.work_item_frame_size,
                m.barrier_schedule,
                m.vectorization,
                m.printf_formats,
                m.checked,
                m.check_sites,
                entry,
            )
            .with_spill_mem_size(m.spill_mem_size)
            .with_backend(m.backend, m.wide_refusal)
        })
        .collect();
    let jit = loading.0.take().expect("set above");
    Ok(Program::new(
        kernels,
        jit,
        image.global_variable_bytes,
        data_ids,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_pinned_cranelift_is_the_one_named() {
        let manifest =
            std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../Cargo.toml"))
                .expect("the workspace manifest");
        for krate in ["codegen", "frontend", "jit", "module", "native"] {
            let pin = format!("cranelift-{krate} = \"={CRANELIFT_VERSION}\"");
            assert!(
                manifest.contains(&pin),
                "{pin} not in the workspace manifest"
            );
        }
    }

    #[test]
    fn every_relocation_kind_has_one_code() {
        for (i, (kind, width)) in RELOC_KINDS.iter().enumerate() {
            assert_eq!(RELOC_KINDS.iter().position(|(k, _)| k == kind), Some(i));
            assert!(*width == 4 || *width == 8);
        }
    }
}
