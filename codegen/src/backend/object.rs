//! The wide backend's linker: an x86-64 ELF relocatable object from LLVM's code generator
//! becomes what [`cranelift_module::Module::define_function_bytes`] takes — one blob (the
//! kernel function's section first, so that it starts at the blob's first byte, then every
//! allocated section it reaches through relocations: constant pools, jump tables, `.rodata`,
//! each at its alignment) and the relocations the JIT applies when it places the blob.
//!
//! References between parts of the blob that are PC-relative are patched here, as their
//! distance is fixed; absolute ones become `Abs8` relocations to an offset in the function
//! itself (`FunctionOffset`), resolved by cranelift-jit against the blob's address. The code
//! is position-independent (opencl-c's `llvm_codegen.rs`), so what lies outside the blob is
//! reached through words appended after its sections — a GOT slot for an address the code
//! loads (`GOTPCREL`), a PLT stub (`jmp [rip]`, then the address) for a call (`PLT32`) —
//! each an `Abs8` relocation the JIT resolves. References outside are by name: the JIT
//! module's user names `__ferrocl_u{namespace}_{index}` (the names `llvm_ir` gives them), Cranelift's libcalls under the names
//! [`crate::jit::libcall_symbol`] gives, and the few functions LLVM itself calls
//! (`memcpy`, `fmaf`, 128-bit division …), which this module provides ([`llvm_symbols`]).
//! Anything else — a relocation kind, a writable or unallocated section, an unknown symbol —
//! is an error, and the kernel stays on Cranelift: never a wrong link.
//!
//! It also reads the function's prologue for the size of its stack frame, and refuses a frame
//! that grows by more than a page without touching it (the stack-probe rule every JIT function
//! follows: see [`crate::PRIVATE_STACK_LIMIT`]).

use std::collections::HashMap;

use cranelift_codegen::binemit::Reloc;
use cranelift_codegen::ir::LibCall;
use cranelift_module::{FuncId, ModuleReloc, ModuleRelocTarget};
use object::read::elf::ElfFile64;
use object::{
    Object, ObjectSection, ObjectSymbol, RelocationFlags, RelocationTarget, SectionFlags,
    SectionIndex, SectionKind, SymbolSection,
};

/// What a linked object gives the JIT.
pub(crate) struct LoadedFunction {
    pub(crate) bytes: Vec<u8>,
    pub(crate) alignment: u64,
    pub(crate) relocs: Vec<ModuleReloc>,
    /// Functions LLVM calls that are no JIT module name yet: the relocations to `imports[i]`
    /// target `User { namespace: IMPORT_NAMESPACE, index: i }` until the caller declares them
    /// ([`LoadedFunction::declare_imports`]).
    pub(crate) imports: Vec<&'static str>,
    /// Bytes the prologue reserves below the frame pointer (Cranelift's `frame_to_fp_offset`);
    /// the realignment of `and rsp, -N` is not counted (it depends on the caller's stack).
    pub(crate) frame_bytes: u64,
}

/// The namespace of [`LoadedFunction::imports`] placeholders; no JIT name has it.
const IMPORT_NAMESPACE: u32 = u32::MAX;

impl LoadedFunction {
    /// Replaces the import placeholders by the JIT module's names, `declare(name)` giving the
    /// function id a name has (declaring it as an import when it is new).
    pub(crate) fn declare_imports(
        relocs: &mut [ModuleReloc],
        imports: &[&'static str],
        mut declare: impl FnMut(&'static str) -> Result<FuncId, String>,
    ) -> Result<(), String> {
        let mut declared = HashMap::new();
        for reloc in relocs {
            let ModuleRelocTarget::User {
                namespace: IMPORT_NAMESPACE,
                index,
            } = reloc.name
            else {
                continue;
            };
            let name = *imports
                .get(index as usize)
                .ok_or("internal: an import placeholder out of range")?;
            let id = match declared.get(name) {
                Some(id) => *id,
                None => *declared.entry(name).or_insert(declare(name)?),
            };
            reloc.name = ModuleRelocTarget::user(0, id.as_u32());
        }
        Ok(())
    }
}

/// ELF x86-64 relocation types (the psABI's numbers).
const R_X86_64_64: u32 = 1;
const R_X86_64_PC32: u32 = 2;
const R_X86_64_PLT32: u32 = 4;
const R_X86_64_GOTPCREL: u32 = 9;
const R_X86_64_PC64: u32 = 24;
const R_X86_64_GOTPCRELX: u32 = 41;
const R_X86_64_REX_GOTPCRELX: u32 = 42;

/// ELF section flags.
const SHF_WRITE: u64 = 0x1;
const SHF_ALLOC: u64 = 0x2;

/// The page the stack grows by before it must be touched (the guard page's size).
const PROBE_INTERVAL: u64 = 4096;

/// Links the function `symbol` of `object` as the JIT's function `func`.
pub(crate) fn load(object: &[u8], symbol: &str, func: FuncId) -> Result<LoadedFunction, String> {
    let file = ElfFile64::<object::Endianness>::parse(object)
        .map_err(|e| format!("the object does not parse: {e}"))?;
    if file.architecture() != object::Architecture::X86_64
        || file.kind() != object::ObjectKind::Relocatable
    {
        return Err("the object is not an x86-64 relocatable object".into());
    }
    let entry = file
        .symbols()
        .find(|s| s.name() == Ok(symbol) && s.is_definition())
        .ok_or_else(|| format!("the object does not define {symbol}"))?;
    let SymbolSection::Section(text) = entry.section() else {
        return Err(format!("{symbol} is not in a section"));
    };
    if entry.address() != 0 {
        return Err(format!(
            "{symbol} starts at offset {} of its section, not at its start",
            entry.address()
        ));
    }

    // The sections the function reaches, in the order they are met: its own first.
    let mut order = vec![text];
    let mut next = 0;
    while let Some(&index) = order.get(next) {
        next += 1;
        let section = file
            .section_by_index(index)
            .map_err(|e| format!("section {}: {e}", index.0))?;
        for (_, relocation) in section.relocations() {
            if let Target::Internal(target, _) = resolve(&file, relocation.target())? {
                if !order.contains(&target) {
                    order.push(target);
                }
            }
        }
    }

    // The blob: each section at its alignment.
    let mut bytes: Vec<u8> = Vec::new();
    let mut alignment = 1u64;
    let mut placed: HashMap<SectionIndex, u64> = HashMap::new();
    for &index in &order {
        let section = file
            .section_by_index(index)
            .map_err(|e| format!("section {}: {e}", index.0))?;
        let name = section.name().unwrap_or("?");
        let SectionFlags::Elf { sh_flags, .. } = section.flags() else {
            return Err(format!("section {name} has no ELF flags"));
        };
        if sh_flags.0 & SHF_ALLOC == 0 {
            return Err(format!(
                "the code refers to section {name}, which is not loaded"
            ));
        }
        if sh_flags.0 & SHF_WRITE != 0 || section.kind() == SectionKind::UninitializedData {
            return Err(format!(
                "the code refers to writable section {name}, which JIT code memory cannot hold"
            ));
        }
        let align = section.align().max(1);
        if !align.is_power_of_two() || align > 4096 {
            return Err(format!("section {name} has alignment {align}"));
        }
        alignment = alignment.max(align);
        let data = section.data().map_err(|e| format!("section {name}: {e}"))?;
        let start = (bytes.len() as u64).next_multiple_of(align);
        placed.insert(index, start);
        bytes.resize(start as usize, 0);
        bytes.extend_from_slice(data);
    }
    if u32::try_from(bytes.len()).is_err() {
        return Err("the code is larger than 4 GiB".into());
    }

    // The relocations of every placed section.
    let mut relocs = Vec::new();
    let mut imports: Vec<&'static str> = Vec::new();
    // GOT slots and PLT stubs made so far, by what they point to.
    let mut slots: HashMap<Target, u64> = HashMap::new();
    let mut stubs: HashMap<Target, u64> = HashMap::new();
    for &index in &order {
        let section = file
            .section_by_index(index)
            .map_err(|e| format!("section {}: {e}", index.0))?;
        let base = placed[&index];
        for (offset, relocation) in section.relocations() {
            let RelocationFlags::Elf { r_type } = relocation.flags() else {
                return Err("a relocation without an ELF type".into());
            };
            let r_type = r_type.0;
            let width = match r_type {
                R_X86_64_64 | R_X86_64_PC64 => 8,
                R_X86_64_PC32
                | R_X86_64_PLT32
                | R_X86_64_GOTPCREL
                | R_X86_64_GOTPCRELX
                | R_X86_64_REX_GOTPCRELX => 4,
                other => return Err(format!("relocation type {other} is not linked")),
            };
            if offset
                .checked_add(width)
                .is_none_or(|end| end > section.size())
            {
                return Err(format!("a relocation at {offset:#x} outside its section"));
            }
            let site = base + offset;
            let addend = relocation.addend();
            let target = resolve(&file, relocation.target())?;
            // What an absolute address of `target` resolves against: an offset in the blob,
            // or a name the JIT knows.
            let absolute = |imports: &mut Vec<&'static str>| -> Result<ModuleRelocTarget, String> {
                Ok(match target {
                    Target::Internal(section, value) => {
                        let at = placed[&section]
                            .checked_add(value)
                            .and_then(|v| u32::try_from(v).ok())
                            .ok_or("a relocation target beyond the code")?;
                        ModuleRelocTarget::FunctionOffset(func, at)
                    }
                    Target::External(name) => match external(name)? {
                        External::Name(name) => name,
                        External::Import(symbol) => {
                            let index = match imports.iter().position(|i| *i == symbol) {
                                Some(i) => i,
                                None => {
                                    imports.push(symbol);
                                    imports.len() - 1
                                }
                            };
                            ModuleRelocTarget::user(IMPORT_NAMESPACE, index as u32)
                        }
                    },
                })
            };
            // S + A - P into the site, S an offset in the blob.
            let patch = |bytes: &mut Vec<u8>, s: u64| -> Result<(), String> {
                let distance = (s as i64)
                    .checked_add(addend)
                    .and_then(|s| s.checked_sub(site as i64))
                    .ok_or("a PC-relative relocation overflows")?;
                let at = site as usize;
                if width == 4 {
                    let value = i32::try_from(distance)
                        .map_err(|_| "a PC-relative relocation out of range")?;
                    bytes[at..at + 4].copy_from_slice(&value.to_le_bytes());
                } else {
                    bytes[at..at + 8].copy_from_slice(&distance.to_le_bytes());
                }
                Ok(())
            };
            match (r_type, target) {
                (R_X86_64_64, _) => {
                    let name = absolute(&mut imports)?;
                    relocs.push(ModuleReloc {
                        offset: site as u32,
                        kind: Reloc::Abs8,
                        name,
                        addend,
                    });
                }
                (R_X86_64_GOTPCREL | R_X86_64_GOTPCRELX | R_X86_64_REX_GOTPCRELX, _) => {
                    // The address in a slot after the sections (the blob's own GOT), which
                    // the instruction reads PC-relative.
                    let name = absolute(&mut imports)?;
                    let slot = *slots
                        .entry(target)
                        .or_insert_with(|| append_word(&mut bytes, &mut relocs, name, 0));
                    patch(&mut bytes, slot)?;
                }
                (_, Target::Internal(section, value)) => {
                    // All within the blob.
                    let s = placed[&section]
                        .checked_add(value)
                        .ok_or("a relocation target beyond the code")?;
                    patch(&mut bytes, s)?;
                }
                (R_X86_64_PLT32, Target::External(_)) => {
                    // A call of a function outside: through a stub after the sections,
                    // `jmp [rip]` and the function's address (the blob's own PLT).
                    let name = absolute(&mut imports)?;
                    let stub = *stubs.entry(target).or_insert_with(|| {
                        let stub = append_word(&mut bytes, &mut relocs, name, 6) - 6;
                        bytes[stub as usize..][..6].copy_from_slice(&[0xff, 0x25, 0, 0, 0, 0]);
                        stub
                    });
                    patch(&mut bytes, stub)?;
                }
                (_, Target::External(name)) => {
                    return Err(format!(
                        "a PC-relative reference to {name} (the JIT places code too far from \
                         everything outside it)"
                    ))
                }
            }
        }
    }
    let code = &bytes[..file
        .section_by_index(text)
        .map_err(|e| e.to_string())?
        .size() as usize];
    let frame_bytes = frame_bytes(code)?;
    Ok(LoadedFunction {
        bytes,
        alignment,
        relocs,
        imports,
        frame_bytes,
    })
}

/// Appends `before` bytes then an 8-byte word that the JIT sets to the address of `name`
/// (aligned to 8); the word's offset in the blob.
fn append_word(
    bytes: &mut Vec<u8>,
    relocs: &mut Vec<ModuleReloc>,
    name: ModuleRelocTarget,
    before: u64,
) -> u64 {
    let word = (bytes.len() as u64 + before).next_multiple_of(8);
    bytes.resize(word as usize + 8, 0);
    relocs.push(ModuleReloc {
        offset: word as u32,
        kind: Reloc::Abs8,
        name,
        addend: 0,
    });
    word
}

/// Where a relocation points.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
enum Target<'a> {
    /// (section, offset in it).
    Internal(SectionIndex, u64),
    /// An undefined symbol of that name.
    External(&'a str),
}

fn resolve<'a>(
    file: &'a ElfFile64<'a, object::Endianness>,
    target: RelocationTarget,
) -> Result<Target<'a>, String> {
    match target {
        RelocationTarget::Section(section) => Ok(Target::Internal(section, 0)),
        RelocationTarget::Symbol(index) => {
            let symbol = file
                .symbol_by_index(index)
                .map_err(|e| format!("symbol {}: {e}", index.0))?;
            match symbol.section() {
                SymbolSection::Section(section) => Ok(Target::Internal(section, symbol.address())),
                SymbolSection::Undefined => Ok(Target::External(
                    symbol
                        .name()
                        .map_err(|e| format!("symbol {}: {e}", index.0))?,
                )),
                other => Err(format!(
                    "a relocation to symbol {} in {other:?}",
                    symbol.name().unwrap_or("?")
                )),
            }
        }
        other => Err(format!("a relocation to {other:?}")),
    }
}

/// How an outside name is linked.
enum External {
    /// A name the JIT resolves already.
    Name(ModuleRelocTarget),
    /// One of [`llvm_symbols`], to be declared in the JIT module.
    Import(&'static str),
}

/// The C library functions LLVM may call that Cranelift has a libcall for: linked to the
/// same functions Cranelift's code calls.
const C_LIBCALLS: [(&str, LibCall); 14] = [
    ("memcpy", LibCall::Memcpy),
    ("memset", LibCall::Memset),
    ("memmove", LibCall::Memmove),
    ("memcmp", LibCall::Memcmp),
    ("fmaf", LibCall::FmaF32),
    ("fma", LibCall::FmaF64),
    ("ceilf", LibCall::CeilF32),
    ("ceil", LibCall::CeilF64),
    ("floorf", LibCall::FloorF32),
    ("floor", LibCall::FloorF64),
    ("truncf", LibCall::TruncF32),
    ("trunc", LibCall::TruncF64),
    ("nearbyintf", LibCall::NearestF32),
    ("nearbyint", LibCall::NearestF64),
];

fn external(name: &str) -> Result<External, String> {
    if let Some(rest) = name.strip_prefix("__ferrocl_u") {
        let parsed = rest.split_once('_').and_then(|(namespace, index)| {
            let canonical = |s: &str| s == "0" || !s.starts_with('0');
            (canonical(namespace) && canonical(index))
                .then(|| Some((namespace.parse().ok()?, index.parse().ok()?)))
                .flatten()
        });
        let Some((namespace, index)) = parsed.filter(|(ns, _)| *ns != IMPORT_NAMESPACE) else {
            return Err(format!("a malformed JIT name {name}"));
        };
        return Ok(External::Name(ModuleRelocTarget::user(namespace, index)));
    }
    if let Some(libcall) = LibCall::all_libcalls()
        .iter()
        .find(|lc| crate::jit::libcall_symbol(**lc) == name)
    {
        return Ok(External::Name(ModuleRelocTarget::LibCall(*libcall)));
    }
    if let Some((_, libcall)) = C_LIBCALLS.iter().find(|(c, _)| *c == name) {
        return Ok(External::Name(ModuleRelocTarget::LibCall(*libcall)));
    }
    if let Some((symbol, _)) = llvm_symbols().into_iter().find(|(s, _)| *s == name) {
        return Ok(External::Import(symbol));
    }
    Err(format!(
        "LLVM's code calls {name}, which the JIT does not provide"
    ))
}

/// compiler-rt's functions LLVM calls for 128-bit division on x86-64, by name, with this
/// crate's versions: the JIT registers them (jit.rs `new_jit`), so that code linked here
/// (or loaded from the program cache) finds them. Division by zero, which the kernels'
/// translation guards, gives 0 instead of a Rust panic.
pub(crate) fn llvm_symbols() -> [(&'static str, *const u8); 4] {
    [
        ("__udivti3", udivti3 as *const u8),
        ("__umodti3", umodti3 as *const u8),
        ("__divti3", divti3 as *const u8),
        ("__modti3", modti3 as *const u8),
    ]
}

extern "C" fn udivti3(a: u128, b: u128) -> u128 {
    a.checked_div(b).unwrap_or(0)
}

extern "C" fn umodti3(a: u128, b: u128) -> u128 {
    a.checked_rem(b).unwrap_or(0)
}

extern "C" fn divti3(a: i128, b: i128) -> i128 {
    if b == 0 {
        0
    } else {
        a.wrapping_div(b)
    }
}

extern "C" fn modti3(a: i128, b: i128) -> i128 {
    if b == 0 {
        0
    } else {
        a.wrapping_rem(b)
    }
}

/// The bytes LLVM's x86-64 prologue at the start of `code` reserves below the frame pointer
/// (pushes and `sub rsp` after `mov rbp, rsp`), read instruction by instruction until the first that is not the prologue's. Err when the
/// stack grows by more than [`PROBE_INTERVAL`] without a write to it (an unprobed frame could
/// step over the guard page below the stack).
pub(crate) fn frame_bytes(code: &[u8]) -> Result<u64, String> {
    let mut stack = Stack::default();
    let imm32 = |at: usize| -> Result<u64, String> {
        let b = code.get(at..at + 4).ok_or("a cut prologue")?;
        Ok(u64::from(u32::from_le_bytes([b[0], b[1], b[2], b[3]])))
    };
    let mut at = 0usize;
    loop {
        let rest = code.get(at..).unwrap_or_default();
        match rest {
            // endbr64
            [0xf3, 0x0f, 0x1e, 0xfa, ..] => at += 4,
            // push r64: the stack grows and its new lowest word is written.
            [0x50..=0x57, ..] => {
                stack.grow(8)?;
                stack.touched();
                at += 1;
            }
            [0x41, 0x50..=0x57, ..] => {
                stack.grow(8)?;
                stack.touched();
                at += 2;
            }
            // mov rbp, rsp: what follows is below the frame pointer, which is what is counted.
            [0x48, 0x89, 0xe5, ..] => {
                stack.frame = 0;
                at += 3;
            }
            // and rsp, -N: realignment by up to N - 8 bytes, unwritten and uncounted.
            [0x48, 0x83, 0xe4, n, ..] => {
                stack.untouched += u64::from(n.wrapping_neg());
                at += 4;
            }
            [0x48, 0x81, 0xe4, ..] => {
                stack.untouched += u64::from((imm32(at + 3)? as u32).wrapping_neg());
                at += 7;
            }
            // sub rsp, imm8 / imm32
            [0x48, 0x83, 0xec, n, ..] => {
                stack.grow(u64::from(*n))?;
                at += 4;
            }
            [0x48, 0x81, 0xec, ..] => {
                stack.grow(imm32(at + 3)?)?;
                at += 7;
            }
            // mov qword ptr [rsp], 0: a probe.
            [0x48, 0xc7, 0x04, 0x24, 0, 0, 0, 0, ..] => {
                stack.touched();
                at += 8;
            }
            // LLVM's probing loop for large frames: mov r11, rsp; sub r11, SIZE; then
            // `sub rsp, 4096; mov qword ptr [rsp], 0; cmp rsp, r11; jne` (each page written).
            [0x49, 0x89, 0xe3, 0x49, 0x81, 0xeb, ..] => {
                let size = imm32(at + 6)?;
                let body = at + 10;
                let probe_loop: &[u8] = &[
                    0x48, 0x81, 0xec, 0x00, 0x10, 0x00, 0x00, // sub rsp, 4096
                    0x48, 0xc7, 0x04, 0x24, 0, 0, 0, 0, // mov qword ptr [rsp], 0
                    0x4c, 0x39, 0xdc, // cmp rsp, r11
                    0x75, // jne rel8
                ];
                if code.get(body..body + probe_loop.len()) != Some(probe_loop) {
                    return Err("an unknown stack probing loop".into());
                }
                stack.frame += size;
                stack.touched();
                at = body + probe_loop.len() + 1;
            }
            _ => return Ok(stack.frame),
        }
    }
}

/// The prologue's stack as [`frame_bytes`] reads it.
#[derive(Default)]
struct Stack {
    /// Bytes reserved so far (below the frame pointer once it is set).
    frame: u64,
    /// Bytes the stack grew by since the last write to its lowest address.
    untouched: u64,
}

impl Stack {
    fn grow(&mut self, bytes: u64) -> Result<(), String> {
        self.frame += bytes;
        self.untouched += bytes;
        if self.untouched > PROBE_INTERVAL {
            return Err(format!(
                "the stack frame grows by {} bytes without being probed",
                self.untouched
            ));
        }
        Ok(())
    }

    fn touched(&mut self) {
        self.untouched = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prologues_are_measured() {
        // push rbp; mov rbp, rsp; push r15; push rbx; sub rsp, 0x40; mov eax, 1
        let code = [
            0x55, 0x48, 0x89, 0xe5, 0x41, 0x57, 0x53, 0x48, 0x83, 0xec, 0x40, 0xb8, 1, 0, 0, 0,
        ];
        assert_eq!(frame_bytes(&code), Ok(16 + 0x40));
        // sub rsp, 0x2000 unprobed.
        let unprobed = [
            0x55, 0x48, 0x89, 0xe5, 0x48, 0x81, 0xec, 0x00, 0x20, 0, 0, 0xc3,
        ];
        assert!(frame_bytes(&unprobed).is_err());
        // Two probed pages and a rest.
        let mut probed = vec![0x55, 0x48, 0x89, 0xe5];
        for _ in 0..2 {
            probed.extend([0x48, 0x81, 0xec, 0x00, 0x10, 0, 0]);
            probed.extend([0x48, 0xc7, 0x04, 0x24, 0, 0, 0, 0]);
        }
        probed.extend([0x48, 0x83, 0xec, 0x10, 0xc3]);
        assert_eq!(frame_bytes(&probed), Ok(0x2000 + 0x10));
    }

    #[test]
    fn jit_names_parse_strictly() {
        assert!(matches!(
            external("__ferrocl_u1_23"),
            Ok(External::Name(ModuleRelocTarget::User {
                namespace: 1,
                index: 23
            }))
        ));
        for bad in [
            "__ferrocl_u1",
            "__ferrocl_u01_2",
            "__ferrocl_u1_x",
            "printf",
        ] {
            assert!(external(bad).is_err(), "{bad}");
        }
        assert!(matches!(
            external("memcpy"),
            Ok(External::Name(ModuleRelocTarget::LibCall(LibCall::Memcpy)))
        ));
        assert!(matches!(
            external("ferrocl_fmaf"),
            Ok(External::Name(ModuleRelocTarget::LibCall(LibCall::FmaF32)))
        ));
        assert!(matches!(
            external("__udivti3"),
            Ok(External::Import("__udivti3"))
        ));
    }

    #[test]
    fn garbage_is_an_error() {
        let id = FuncId::from_u32(0);
        assert!(load(b"", "f", id).is_err());
        assert!(load(b"\x7fELF\x02\x01\x01garbage", "f", id).is_err());
    }

    /// The frontend's sample (constant pool, jump table, calls), compiled by LLVM and linked:
    /// one blob with the pool and the table after the code, reached PC-relative, and the
    /// calls to the JIT's user names through stubs after them.
    #[test]
    fn an_llvm_object_links() {
        if !ferrocl_opencl_c::wide_backend_available() {
            panic!("the LLVM server and libLLVM-15 must be available here");
        }
        let ir = SAMPLE_IR;
        let object = ferrocl_opencl_c::compile_object(ir, 256).expect("compiles");
        let id = FuncId::from_u32(3);
        let loaded = load(&object, "sample", id).expect("links");
        // The constant pool and the jump table are reached PC-relative: patched here.
        assert!(
            !loaded
                .relocs
                .iter()
                .any(|r| matches!(r.name, ModuleRelocTarget::FunctionOffset(..))),
            "internal references left to the JIT"
        );
        // Each callee once, through a stub after the code: `jmp [rip]` then its address,
        // which the JIT writes.
        for callee in 1..=5 {
            let words: Vec<&ModuleReloc> = loaded
                .relocs
                .iter()
                .filter(|r| matches!(r.name, ModuleRelocTarget::User { namespace: 0, index } if index == callee))
                .collect();
            assert_eq!(words.len(), 1, "callee {callee}");
            let at = words[0].offset as usize;
            assert_eq!(words[0].kind, Reloc::Abs8);
            assert_eq!(at % 8, 0);
            assert_eq!(loaded.bytes[at - 6..at], [0xff, 0x25, 0, 0, 0, 0]);
            assert!(at + 8 <= loaded.bytes.len());
        }
        assert!(loaded.alignment >= 16);
        assert!(loaded.imports.is_empty());
        // Unknown symbol: refused.
        let unknown = ir.replace("__ferrocl_u0_5", "puts");
        let object = ferrocl_opencl_c::compile_object(&unknown, 256).expect("compiles");
        let error = load(&object, "sample", id).err().expect("refused");
        assert!(error.contains("puts"), "{error}");
        // An outside data symbol: its address in a GOT slot after the code.
        let data = "@__ferrocl_u1_7 = external global i8\n\
                    define i64 @g() nounwind {\n  ret i64 ptrtoint (ptr @__ferrocl_u1_7 to i64)\n}\n";
        let object = ferrocl_opencl_c::compile_object(data, 256).expect("compiles");
        let loaded = load(&object, "g", id).expect("links");
        let slots: Vec<&ModuleReloc> = loaded
            .relocs
            .iter()
            .filter(|r| {
                matches!(
                    r.name,
                    ModuleRelocTarget::User {
                        namespace: 1,
                        index: 7
                    }
                )
            })
            .collect();
        assert_eq!(slots.len(), 1);
        assert_eq!((slots[0].kind, slots[0].offset % 8), (Reloc::Abs8, 0));
        // A writable global: refused.
        let writable =
            "@g = global i32 0\ndefine i32 @f() {\n  %v = load i32, ptr @g\n  ret i32 %v\n}\n";
        let object = ferrocl_opencl_c::compile_object(writable, 256).expect("compiles");
        let error = load(&object, "f", id).err().expect("refused");
        assert!(error.contains("writable"), "{error}");
    }

    const SAMPLE_IR: &str = r#"
declare void @__ferrocl_u0_1(ptr)
declare void @__ferrocl_u0_2(ptr)
declare void @__ferrocl_u0_3(ptr)
declare void @__ferrocl_u0_4(ptr)
declare void @__ferrocl_u0_5(ptr)

define void @sample(ptr %out, i32 %sel) nounwind {
entry:
  %v = load <8 x float>, ptr %out, align 4
  %m = fmul <8 x float> %v, <float 1.5, float 2.5, float 3.5, float 4.5, float 5.5, float 6.5, float 7.5, float 8.5>
  store <8 x float> %m, ptr %out, align 4
  switch i32 %sel, label %done [
    i32 0, label %a
    i32 1, label %b
    i32 2, label %c
    i32 3, label %d
    i32 4, label %e
  ]
a:
  call void @__ferrocl_u0_1(ptr %out)
  br label %done
b:
  call void @__ferrocl_u0_2(ptr %out)
  br label %done
c:
  call void @__ferrocl_u0_3(ptr %out)
  br label %done
d:
  call void @__ferrocl_u0_4(ptr %out)
  br label %done
e:
  call void @__ferrocl_u0_5(ptr %out)
  br label %done
done:
  ret void
}
"#;
}
