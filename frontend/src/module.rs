//! The parsed module: rspirv's data representation plus the tables codegen and metadata need
//! (types with their OpenCL memory layout, names, decorations, constants).

use std::collections::{HashMap, HashSet};

use rspirv::dr;
use spirv::{Decoration, Op, StorageClass, Word};

use crate::diagnostics::Diagnostic;
use crate::locations::Locations;
use crate::metadata::KernelInfo;
use crate::view::Inst;

pub type TypeId = Word;

/// A SPIR-V type, as far as an OpenCL kernel can use it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Type {
    Void,
    Bool,
    /// Integers carry no signedness in OpenCL SPIR-V (signedness operand is 0).
    Int {
        width: u32,
    },
    Float {
        width: u32,
    },
    Vector {
        elem: TypeId,
        count: u32,
    },
    Array {
        elem: TypeId,
        len: u64,
    },
    RuntimeArray {
        elem: TypeId,
    },
    Struct {
        members: Vec<TypeId>,
        packed: bool,
    },
    Pointer {
        storage: StorageClass,
        pointee: TypeId,
    },
    Function {
        ret: TypeId,
        params: Vec<TypeId>,
    },
    Event,
    /// `OpTypeNamedBarrier` (cl_khr_subgroup_named_barrier): a handle codegen makes.
    NamedBarrier,
    DeviceEvent,
    ReserveId,
    Queue,
    /// `OpTypePipe`: a pipe argument, with the end the kernel uses.
    Pipe {
        access: spirv::AccessQualifier,
    },
    Image {
        dim: spirv::Dim,
        arrayed: bool,
        /// Depth operand 1: a depth image (`image2d_depth_t`, `image2d_array_depth_t`).
        depth: bool,
        access: Option<spirv::AccessQualifier>,
    },
    Sampler,
    SampledImage {
        image: TypeId,
    },
    Opaque(String),
}

/// A validated SPIR-V module. Other crates read it through the typed view (view.rs); `raw`
/// is rspirv's representation, public for the frontend's own integration tests. Cloned by
/// codegen to specialise kernels at launch.
#[derive(Clone)]
pub struct Module {
    pub raw: dr::Module,
    pub version: (u8, u8),
    pub kernels: Vec<KernelInfo>,
    /// A block's function (the Invoke operand of the device-side enqueue instructions) → the
    /// index in `kernels` of the kernel that runs it.
    pub block_kernels: HashMap<Word, usize>,
    pub(crate) types: HashMap<Word, Type>,
    pub(crate) names: HashMap<Word, String>,
    pub(crate) decorations: HashMap<Word, Vec<(Decoration, Vec<dr::Operand>)>>,
    /// Result id → the global instruction defining it (types, constants, global variables).
    pub(crate) globals: HashMap<Word, usize>,
    /// Result id → defining instruction type id, for every instruction with a result type.
    pub(crate) result_types: HashMap<Word, TypeId>,
    pub(crate) ext_imports: HashMap<Word, String>,
    /// Where each instruction of `raw` was in the binary (word offset, `OpLine`).
    pub(crate) locations: Locations,
    /// `OpString` id → text (file names for `OpLine`).
    pub(crate) strings: HashMap<Word, String>,
    /// Function result id → index in `raw.functions`.
    pub(crate) function_index: HashMap<Word, usize>,
    /// Ids defined by module-scope debug-info instructions the parser set aside.
    pub(crate) debug_ids: HashSet<Word>,
    /// Function id → back edges of its spin loops (spin_loops.rs).
    pub(crate) spin_loops: HashMap<Word, Vec<(Word, Word)>>,
    /// Build-log lines for legacy forms accepted (legacy.rs), each starting "warning: ".
    pub warnings: Vec<String>,
}

impl Module {
    pub fn ty(&self, id: TypeId) -> Option<&Type> {
        self.types.get(&id)
    }

    pub fn name(&self, id: Word) -> Option<&str> {
        self.names.get(&id).map(String::as_str)
    }

    /// Decorations applied to `id` (`OpDecorate`, with group decorations expanded), as rspirv
    /// holds them.
    pub(crate) fn decorations_raw(&self, id: Word) -> &[(Decoration, Vec<dr::Operand>)] {
        self.decorations.get(&id).map(Vec::as_slice).unwrap_or(&[])
    }

    pub fn has_decoration(&self, id: Word, decoration: Decoration) -> bool {
        self.decorations_raw(id)
            .iter()
            .any(|(d, _)| *d == decoration)
    }

    /// The instruction defining a type, constant or module-scope variable, as rspirv holds it.
    pub(crate) fn global_raw(&self, id: Word) -> Option<&dr::Instruction> {
        self.globals
            .get(&id)
            .map(|&i| &self.raw.types_global_values[i])
    }

    /// Type of the value with result id `id`.
    pub fn type_of(&self, id: Word) -> Option<TypeId> {
        self.result_types.get(&id).copied()
    }

    /// Name of the extended instruction set imported as `id` (e.g. "OpenCL.std").
    pub fn ext_import(&self, id: Word) -> Option<&str> {
        self.ext_imports.get(&id).map(String::as_str)
    }

    /// Size in bytes of a value of type `id` in OpenCL memory (3-component vectors take 4 slots).
    pub fn size_of(&self, id: TypeId) -> Option<u64> {
        size_of(&self.types, id)
    }

    /// Alignment in bytes of type `id` (a vector is aligned to its padded size).
    pub fn align_of(&self, id: TypeId) -> Option<u64> {
        align_of(&self.types, id)
    }

    /// Byte offsets of a struct's members, following C layout rules (or `CPacked`).
    pub fn member_offsets(&self, id: TypeId) -> Option<Vec<u64>> {
        member_offsets(&self.types, id)
    }

    /// Word offset of `inst` (an instruction of `self.raw`) in the module as given.
    pub fn word_offset(&self, inst: &dr::Instruction) -> Option<usize> {
        self.locations.get(inst).map(|l| l.offset)
    }

    /// Source file and line of the `OpLine` in effect at `inst`, if any.
    pub fn source_line(&self, inst: &dr::Instruction) -> Option<(String, u32)> {
        let (file, line) = self.locations.get(inst)?.line?;
        Some((self.strings.get(&file)?.clone(), line))
    }

    /// A diagnostic for `inst`: the rule, "OpX %id", its word offset, the source name of its
    /// result id (or of `named`, when given) and its source line.
    pub(crate) fn diag(
        &self,
        rule: impl Into<String>,
        inst: &dr::Instruction,
        named: Option<Word>,
    ) -> Diagnostic {
        let instruction = match inst.result_id {
            Some(id) => format!("Op{:?} %{id}", inst.class.opcode),
            None => format!("Op{:?}", inst.class.opcode),
        };
        Diagnostic {
            rule: rule.into(),
            instruction,
            word_offset: self.word_offset(inst),
            source_name: named
                .or(inst.result_id)
                .and_then(|id| self.name(id))
                .map(str::to_owned),
            source_line: self.source_line(inst),
        }
    }

    /// The back edges (latch block label, header block label) of the spin loops of `function`:
    /// loops whose exit depends on an atomic executed in them, where a work-item waits for
    /// another (spin_loops.rs). Codegen puts a yield point on each.
    pub fn spin_loop_back_edges(&self, function: Word) -> &[(Word, Word)] {
        self.spin_loops
            .get(&function)
            .map(Vec::as_slice)
            .unwrap_or(&[])
    }

    /// The function with result id `id`, as rspirv holds it.
    pub(crate) fn function_raw(&self, id: Word) -> Option<&dr::Function> {
        self.function_index
            .get(&id)
            .map(|&i| &self.raw.functions[i])
    }

    /// The first instruction whose memory scope is CrossDevice, as a diagnostic for devices
    /// without SVM (the validator accepts the scope; CL_DEVICE_ATOMIC_*_CAPABILITIES report it
    /// only with SVM).
    pub fn first_all_devices_scope(&self) -> Option<Diagnostic> {
        let constant = |id: Word| match self.global_raw(id) {
            Some(c) if c.class.opcode == Op::Constant => match c.operands.first() {
                Some(dr::Operand::LiteralBit32(v)) => Some(*v),
                _ => None,
            },
            _ => None,
        };
        self.raw
            .functions
            .iter()
            .flat_map(|f| f.blocks.iter().flat_map(|b| b.instructions.iter()))
            .find(|inst| {
                Inst::new(inst)
                    .memory_scope()
                    .and_then(constant)
                    .is_some_and(|scope| scope == spirv::Scope::CrossDevice as u32)
            })
            .map(|inst| {
                self.diag(
                    "env 4: memory scope CrossDevice (memory_scope_all_devices / \
                     all_svm_devices) needs SVM, which is turned off on this device \
                     (FERROCL_SVM=off)",
                    inst,
                    None,
                )
            })
    }

    /// The first instruction that makes a half value (a half or half-vector constant, function
    /// parameter or result), as a diagnostic for devices without `cl_khr_fp16`: Float16Buffer
    /// allows halves only in memory, and llvm-spirv-15 declares Float16Buffer alone even for
    /// half arithmetic, so the capability list cannot tell.
    pub fn first_half_value(&self) -> Option<Diagnostic> {
        let is_half = |ty: Word| match self.ty(ty) {
            Some(Type::Float { width: 16 }) => true,
            Some(Type::Vector { elem, .. }) => {
                matches!(self.ty(*elem), Some(Type::Float { width: 16 }))
            }
            _ => false,
        };
        let globals = self.raw.types_global_values.iter();
        let functions = self.raw.functions.iter().flat_map(|f| {
            f.parameters
                .iter()
                .chain(f.blocks.iter().flat_map(|b| b.instructions.iter()))
        });
        globals
            .chain(functions)
            .find(|i| i.result_type.is_some_and(is_half))
            .map(|inst| {
                self.diag(
                    "env 5.2.4: half values need the Float16 capability (cl_khr_fp16), which is \
                     turned off on this device (FERROCL_FP16=off); vload_half/vstore_half \
                     remain available",
                    inst,
                    None,
                )
            })
    }
}

/// Number of element slots a vector occupies in memory: 3 → 4 (env spec 2.10).
/// OpenCL memory layout of a table of types (the module's, or the specializer's partial one).
pub(crate) fn size_of(types: &HashMap<TypeId, Type>, id: TypeId) -> Option<u64> {
    Some(match types.get(&id)? {
        Type::Bool => 1,
        Type::Int { width } | Type::Float { width } => u64::from(*width / 8),
        Type::Vector { elem, count } => size_of(types, *elem)? * u64::from(padded_count(*count)),
        Type::Array { elem, len } => size_of(types, *elem)?.checked_mul(*len)?,
        Type::Struct { members, packed } => {
            let mut offset = 0u64;
            let mut max_align = 1;
            for &m in members {
                let align = if *packed { 1 } else { align_of(types, m)? };
                max_align = max_align.max(align);
                offset = offset.next_multiple_of(align) + size_of(types, m)?;
            }
            offset.next_multiple_of(max_align)
        }
        Type::Pointer { .. }
        | Type::Event
        | Type::NamedBarrier
        | Type::Sampler
        | Type::Image { .. }
        | Type::Queue
        | Type::DeviceEvent
        | Type::ReserveId
        | Type::Pipe { .. } => 8,
        _ => return None,
    })
}

pub(crate) fn align_of(types: &HashMap<TypeId, Type>, id: TypeId) -> Option<u64> {
    Some(match types.get(&id)? {
        Type::Vector { .. } => size_of(types, id)?,
        Type::Array { elem, .. } => align_of(types, *elem)?,
        Type::Struct { members, packed } => {
            if *packed {
                1
            } else {
                let mut a = 1;
                for &m in members {
                    a = a.max(align_of(types, m)?);
                }
                a
            }
        }
        _ => size_of(types, id)?,
    })
}

pub(crate) fn member_offsets(types: &HashMap<TypeId, Type>, id: TypeId) -> Option<Vec<u64>> {
    let Type::Struct { members, packed } = types.get(&id)? else {
        return None;
    };
    let mut offsets = Vec::with_capacity(members.len());
    let mut offset = 0u64;
    for &m in members {
        let align = if *packed { 1 } else { align_of(types, m)? };
        offset = offset.next_multiple_of(align);
        offsets.push(offset);
        offset += size_of(types, m)?;
    }
    Some(offsets)
}

pub fn padded_count(count: u32) -> u32 {
    if count == 3 {
        4
    } else {
        count
    }
}
