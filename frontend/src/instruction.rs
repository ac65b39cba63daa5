//! The typed decode of instructions: named operands per instruction or family (wasmtime's
//! operators with named fields), and the opcode families declared once. Only the frontend
//! reads an instruction's operands by position; codegen and the validator read these.
//!
//! Each decoder checks the operands it names as [`Inst::id`] does (an operand that is missing
//! or of another kind is an error naming the instruction and the operand) and is called for
//! the opcodes its doc comment lists.

use spirv::{GroupOperation, Op, StorageClass, Word};

use crate::view::{ExtInst, ImageOperands, Inst, MemoryAccess, ViewError};

/// The atomic instructions, declared once: what each opcode does. `AtomicOp::of` is the list
/// every pass matching atomics uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AtomicOp {
    Load,
    Store,
    Exchange,
    CompareExchange,
    CompareExchangeWeak,
    IIncrement,
    IDecrement,
    IAdd,
    ISub,
    SMin,
    UMin,
    SMax,
    UMax,
    And,
    Or,
    Xor,
    FlagTestAndSet,
    FlagClear,
    /// SPV_EXT_shader_atomic_float_add / _min_max.
    FAddEXT,
    FMinEXT,
    FMaxEXT,
}

impl AtomicOp {
    /// The atomic operation of `op`, `None` for other instructions.
    pub fn of(op: Op) -> Option<AtomicOp> {
        use AtomicOp as A;
        Some(match op {
            Op::AtomicLoad => A::Load,
            Op::AtomicStore => A::Store,
            Op::AtomicExchange => A::Exchange,
            Op::AtomicCompareExchange => A::CompareExchange,
            Op::AtomicCompareExchangeWeak => A::CompareExchangeWeak,
            Op::AtomicIIncrement => A::IIncrement,
            Op::AtomicIDecrement => A::IDecrement,
            Op::AtomicIAdd => A::IAdd,
            Op::AtomicISub => A::ISub,
            Op::AtomicSMin => A::SMin,
            Op::AtomicUMin => A::UMin,
            Op::AtomicSMax => A::SMax,
            Op::AtomicUMax => A::UMax,
            Op::AtomicAnd => A::And,
            Op::AtomicOr => A::Or,
            Op::AtomicXor => A::Xor,
            Op::AtomicFlagTestAndSet => A::FlagTestAndSet,
            Op::AtomicFlagClear => A::FlagClear,
            Op::AtomicFAddEXT => A::FAddEXT,
            Op::AtomicFMinEXT => A::FMinEXT,
            Op::AtomicFMaxEXT => A::FMaxEXT,
            _ => return None,
        })
    }

    /// The floating-point atomics of SPV_EXT_shader_atomic_float_*.
    pub fn is_float(self) -> bool {
        matches!(
            self,
            AtomicOp::FAddEXT | AtomicOp::FMinEXT | AtomicOp::FMaxEXT
        )
    }

    /// `OpAtomicFlagTestAndSet` and `OpAtomicFlagClear`.
    pub fn is_flag(self) -> bool {
        matches!(self, AtomicOp::FlagTestAndSet | AtomicOp::FlagClear)
    }

    /// Whether the instruction has a result (what a work-item reads of other work-items'
    /// atomics): all but stores and flag clears.
    pub fn has_result(self) -> bool {
        !matches!(self, AtomicOp::Store | AtomicOp::FlagClear)
    }

    pub fn is_compare_exchange(self) -> bool {
        matches!(
            self,
            AtomicOp::CompareExchange | AtomicOp::CompareExchangeWeak
        )
    }

    /// Operand index of the pointer.
    pub const POINTER: usize = 0;
    /// Operand index of the memory scope.
    pub const SCOPE: usize = 1;

    /// Operand indices of the memory semantics (equal and unequal for a compare-exchange).
    pub fn semantics_operands(self) -> std::ops::Range<usize> {
        if self.is_compare_exchange() {
            2..4
        } else {
            2..3
        }
    }

    /// Operand indices of the values of the pointee's type (value and comparator of a
    /// compare-exchange, the value of stores, exchanges and read-modify-writes).
    pub fn value_operands(self) -> std::ops::Range<usize> {
        if self.is_compare_exchange() {
            4..6
        } else if self.has_value() {
            3..4
        } else {
            0..0
        }
    }

    /// Whether the instruction takes a `Value` operand (stores, exchanges, read-modify-writes).
    pub fn has_value(self) -> bool {
        !matches!(
            self,
            AtomicOp::Load
                | AtomicOp::IIncrement
                | AtomicOp::IDecrement
                | AtomicOp::FlagTestAndSet
                | AtomicOp::FlagClear
        )
    }
}

/// The work-group and sub-group collectives `OpGroup*` (all, any, broadcast, the reductions
/// and scans, and SPV_KHR_uniform_group_instructions' mul, bitwise and logical ones), declared
/// once: the barrier analysis and the validator use this list.
pub fn is_group_collective(op: Op) -> bool {
    matches!(
        op,
        Op::GroupAll
            | Op::GroupAny
            | Op::GroupBroadcast
            | Op::GroupIAdd
            | Op::GroupFAdd
            | Op::GroupFMin
            | Op::GroupUMin
            | Op::GroupSMin
            | Op::GroupFMax
            | Op::GroupUMax
            | Op::GroupSMax
            | Op::GroupIMulKHR
            | Op::GroupFMulKHR
            | Op::GroupBitwiseAndKHR
            | Op::GroupBitwiseOrKHR
            | Op::GroupBitwiseXorKHR
            | Op::GroupLogicalAndKHR
            | Op::GroupLogicalOrKHR
            | Op::GroupLogicalXorKHR
    )
}

/// `OpAtomic*`: pointer, memory scope, semantics, then by operation the unequal semantics,
/// value and comparator of a compare-exchange or the value of the others.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Atomic {
    pub op: AtomicOp,
    pub pointer: Word,
    pub scope: Word,
    pub semantics: Word,
    /// A compare-exchange's Unequal semantics.
    pub unequal: Option<Word>,
    pub value: Option<Word>,
    /// A compare-exchange's Comparator.
    pub comparator: Option<Word>,
}

/// `OpBranchConditional`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BranchConditional {
    pub condition: Word,
    pub true_label: Word,
    pub false_label: Word,
}

/// `OpSwitch`: the selector, the default label, (literal, label) targets.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Switch {
    pub selector: Word,
    pub default: Word,
    pub targets: Vec<(u64, Word)>,
}

/// `OpFunctionCall`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FunctionCall {
    pub function: Word,
    pub arguments: Vec<Word>,
}

/// `OpVariable`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Variable {
    pub storage: StorageClass,
    pub initializer: Option<Word>,
}

impl Variable {
    pub const STORAGE: usize = 0;
    pub const INITIALIZER: usize = 1;
}

/// `OpLoad`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Load {
    pub pointer: Word,
    pub memory_access: MemoryAccess,
}

impl Load {
    /// Operand index of the pointer (for the validator's per-operand diagnostics).
    pub const POINTER: usize = 0;
}

/// `OpStore`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Store {
    pub pointer: Word,
    pub object: Word,
    pub memory_access: MemoryAccess,
}

impl Store {
    pub const POINTER: usize = 0;
    pub const OBJECT: usize = 1;
}

/// `OpCopyMemory` and `OpCopyMemorySized` (with its size).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CopyMemory {
    pub target: Word,
    pub source: Word,
    pub size: Option<Word>,
}

impl CopyMemory {
    pub const TARGET: usize = 0;
    pub const SOURCE: usize = 1;
    pub const SIZE: usize = 2;
}

/// `Op[InBounds][Ptr]AccessChain`: the `Ptr` forms' element, then the indices.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AccessChain {
    pub base: Word,
    pub element: Option<Word>,
    pub indices: Vec<Word>,
}

/// The instructions of one value operand: conversions, negations, `OpNot`, `OpBitCount`,
/// `OpBitReverse`, `OpLogicalNot`, `OpAny`/`OpAll`, the float class tests, `OpCopyObject`,
/// `OpCopyLogical`, `OpReturnValue`, `OpExpectKHR` (its value), `OpSizeOf` (the pointer),
/// `OpGenericPtrMemSemantics` (the pointer), `OpNamedBarrierInitialize` (the sub-group count).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Unary {
    pub value: Word,
}

impl Unary {
    pub const VALUE: usize = 0;
}

/// The instructions of two value operands: arithmetic, comparisons, `OpDot`,
/// `OpVectorTimesScalar` (vector, scalar), the extended arithmetic, `OpPtrDiff`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Binary {
    pub a: Word,
    pub b: Word,
}

impl Binary {
    pub const A: usize = 0;
    pub const B: usize = 1;
}

/// `OpSelect`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Select {
    pub condition: Word,
    pub accept: Word,
    pub reject: Word,
}

impl Select {
    pub const CONDITION: usize = 0;
    pub const ACCEPT: usize = 1;
    pub const REJECT: usize = 2;
}

/// `OpBitFieldInsert` (with its insert) and `OpBitField[SU]Extract`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BitField {
    pub base: Word,
    pub insert: Option<Word>,
    pub offset: Word,
    pub count: Word,
}

/// `Op[S|U|SU]Dot[AccSat]`: two vectors (or packed words), the accumulator of the
/// saturating forms, and whether the operands are `PackedVectorFormat4x8Bit`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IntegerDot {
    pub a: Word,
    pub b: Word,
    pub accumulator: Option<Word>,
    pub packed: bool,
}

/// `OpCompositeExtract`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CompositeExtract {
    pub composite: Word,
    /// The literal indexes (ill-formed ones left out).
    pub indexes: Vec<u32>,
}

impl CompositeExtract {
    pub const COMPOSITE: usize = 0;
    pub const FIRST_INDEX: usize = 1;
}

/// `OpCompositeInsert`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CompositeInsert {
    pub object: Word,
    pub composite: Word,
    /// The literal indexes (ill-formed ones left out).
    pub indexes: Vec<u32>,
}

impl CompositeInsert {
    pub const OBJECT: usize = 0;
    pub const COMPOSITE: usize = 1;
    pub const FIRST_INDEX: usize = 2;
}

/// `OpVectorShuffle`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VectorShuffle {
    pub vector1: Word,
    pub vector2: Word,
    /// The literal components (ill-formed ones left out).
    pub components: Vec<u32>,
}

/// `OpVectorExtractDynamic`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct VectorExtractDynamic {
    pub vector: Word,
    pub index: Word,
}

impl VectorExtractDynamic {
    pub const VECTOR: usize = 0;
    pub const INDEX: usize = 1;
}

/// `OpVectorInsertDynamic`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct VectorInsertDynamic {
    pub vector: Word,
    pub component: Word,
    pub index: Word,
}

impl VectorInsertDynamic {
    pub const VECTOR: usize = 0;
    pub const COMPONENT: usize = 1;
    pub const INDEX: usize = 2;
}

/// `OpGenericCastToPtrExplicit`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GenericCastToPtrExplicit {
    pub pointer: Word,
    /// `None` when the operand is not a storage class.
    pub storage: Option<StorageClass>,
}

/// The end of a pipe an instruction uses, and its packets' size and alignment (operands every
/// pipe instruction has, SPIR-V 3.52.23).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PipePacket {
    pub pipe: Word,
    pub write: bool,
    pub size: Word,
    pub alignment: Word,
}

/// `OpReadPipe`/`OpWritePipe` (one packet, no reservation) and `OpReservedReadPipe`/
/// `OpReservedWritePipe` (packet `index` of reservation `reserve_id`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PipeAccess {
    pub packet: PipePacket,
    /// `(reserve id, index)` of the reserved forms.
    pub reserved: Option<(Word, Word)>,
    pub pointer: Word,
}

/// `OpReserveReadPipePackets`/`OpReserveWritePipePackets` and their `OpGroup` forms (the
/// execution scope).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PipeReserve {
    pub packet: PipePacket,
    pub scope: Option<Word>,
    pub num_packets: Word,
}

/// `OpCommitReadPipe`/`OpCommitWritePipe` and their `OpGroup` forms.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PipeCommit {
    pub packet: PipePacket,
    pub scope: Option<Word>,
    pub reserve_id: Word,
}

/// The pipe instructions that take part in a work-group or sub-group reservation: every
/// work-item of the group meets them, as a collective.
pub fn is_group_pipe(op: Op) -> bool {
    matches!(
        op,
        Op::GroupReserveReadPipePackets
            | Op::GroupReserveWritePipePackets
            | Op::GroupCommitReadPipe
            | Op::GroupCommitWritePipe
    )
}

/// Every instruction of SPIR-V's Pipes capability that codegen translates (`OpConstantPipeStorage`
/// and `OpCreatePipeFromPipeStorage` are PipeStorage's).
pub fn is_pipe_instruction(op: Op) -> bool {
    is_group_pipe(op)
        || matches!(
            op,
            Op::ReadPipe
                | Op::WritePipe
                | Op::ReservedReadPipe
                | Op::ReservedWritePipe
                | Op::ReserveReadPipePackets
                | Op::ReserveWritePipePackets
                | Op::CommitReadPipe
                | Op::CommitWritePipe
                | Op::IsValidReserveId
                | Op::GetNumPipePackets
                | Op::GetMaxPipePackets
        )
}

/// `OpGroupAsyncCopy`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GroupAsyncCopy {
    pub scope: Word,
    pub destination: Word,
    pub source: Word,
    pub num_elements: Word,
    pub stride: Word,
    pub event: Word,
}

/// `OpGroup*` and `OpGroupNonUniform*`: the execution scope, the group operation of those
/// that have one, the value (predicate, ballot), the second operand (a broadcast's or
/// shuffle's id, a shuffle's mask or delta, a bit extract's index, a rotate's delta) and the
/// cluster size of clustered reductions and rotates.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GroupOp {
    pub scope: Word,
    pub operation: Option<GroupOperation>,
    /// `None` for `OpGroupNonUniformElect`.
    pub value: Option<Word>,
    pub argument: Option<Word>,
    pub cluster_size: Option<Word>,
}

impl GroupOp {
    /// Operand index of the execution scope.
    pub const SCOPE: usize = 0;
    /// Operand index of the group operation of the instructions that have one (the value
    /// follows it; without one, the value is here).
    pub const OPERATION: usize = 1;
}

/// `OpControlBarrier`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ControlBarrier {
    pub execution: Word,
    pub memory: Word,
    pub semantics: Word,
}

impl ControlBarrier {
    pub const EXECUTION: usize = 0;
    pub const MEMORY: usize = 1;
    pub const SEMANTICS: usize = 2;
}

/// `OpMemoryBarrier`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MemoryBarrier {
    pub memory: Word,
    pub semantics: Word,
}

impl MemoryBarrier {
    pub const MEMORY: usize = 0;
    pub const SEMANTICS: usize = 1;
}

/// `OpMemoryNamedBarrier`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MemoryNamedBarrier {
    pub barrier: Word,
    pub memory: Word,
    pub semantics: Word,
}

impl MemoryNamedBarrier {
    pub const BARRIER: usize = 0;
    pub const MEMORY: usize = 1;
    pub const SEMANTICS: usize = 2;
}

/// `OpSubgroupShuffle[Down|Up|Xor]INTEL`: the data (`Current`/`Previous`, then `Next`/`Current`
/// of the two-value forms) and the invocation id, delta or mask.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IntelShuffle {
    pub data: Word,
    pub second: Option<Word>,
    pub operand: Word,
}

/// `OpSubgroup[Image]Block{Read,Write}INTEL`: the pointer (or image), the image forms'
/// coordinate, the writes' data.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BlockIo {
    pub pointer: Word,
    pub coordinate: Option<Word>,
    pub data: Option<Word>,
}

/// `OpSampledImage`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SampledImage {
    pub image: Word,
    pub sampler: Word,
}

/// `OpImageRead` and `OpImageSampleExplicitLod` (whose image is a sampled image).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ImageRead {
    pub image: Word,
    pub coordinate: Word,
    pub operands: ImageOperands,
}

/// `OpImageWrite`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ImageWrite {
    pub image: Word,
    pub coordinate: Word,
    pub texel: Word,
    pub operands: ImageOperands,
}

/// `OpImageQuery*`: the image and `OpImageQuerySizeLod`'s level.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ImageQuery {
    pub image: Word,
    pub lod: Option<Word>,
}

/// `OpSpecConstantOp`: the opcode and the first two id operands of that instruction (a
/// conversion's value; the two values of an arithmetic operation).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SpecConstantOp {
    pub opcode: Op,
    pub a: Option<Word>,
    pub b: Option<Word>,
}

/// OpenCL.std `vloadn`, `vload_half`, `vload_halfn`, `vloada_halfn`: offset, p and the
/// literal n of the vector forms.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct VectorLoad {
    pub offset: Word,
    pub pointer: Word,
    pub n: Option<u32>,
}

/// OpenCL.std `vstoren`, `vstore_half[n][_r]`, `vstorea_halfn[_r]`: data, offset, p and the
/// rounding mode of the `_r` forms.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct VectorStore {
    pub data: Word,
    pub offset: Word,
    pub pointer: Word,
    pub mode: Option<u32>,
}

/// The arguments of an `OpExtInst`, indexed from its first argument in the set's layout.
#[derive(Clone, Copy, Debug)]
pub struct ExtArgs<'m>(Inst<'m>);

impl<'m> ExtArgs<'m> {
    pub fn len(self) -> usize {
        self.0
            .operand_count()
            .saturating_sub(ExtInst::FIRST_ARGUMENT)
    }

    pub fn is_empty(self) -> bool {
        self.len() == 0
    }

    /// Argument `k`, which must be an id.
    pub fn id(self, k: usize) -> Result<Word, ViewError> {
        self.0.id(ExtInst::FIRST_ARGUMENT + k)
    }

    pub fn optional_id(self, k: usize) -> Option<Word> {
        self.0.optional_id(ExtInst::FIRST_ARGUMENT + k)
    }

    /// Each argument as an id (`None` for a literal).
    pub fn ids(self) -> impl Iterator<Item = Option<Word>> + 'm {
        (0..self.len()).map(move |k| self.optional_id(k))
    }

    /// See [`VectorLoad`].
    pub fn vector_load(self) -> Result<VectorLoad, ViewError> {
        Ok(VectorLoad {
            offset: self.id(0)?,
            pointer: self.id(1)?,
            n: self.literal(2),
        })
    }

    /// See [`VectorStore`].
    pub fn vector_store(self) -> Result<VectorStore, ViewError> {
        Ok(VectorStore {
            data: self.id(0)?,
            offset: self.id(1)?,
            pointer: self.id(2)?,
            mode: self.literal(3),
        })
    }

    /// The last argument, which must be an id (the out-parameter of frexp & co.).
    pub fn last_id(self) -> Result<Word, ViewError> {
        self.0.id(self.0.operand_count().saturating_sub(1))
    }

    /// A literal argument (see [`Inst::ext_literal`]).
    pub fn literal(self, k: usize) -> Option<u32> {
        self.0.ext_literal(ExtInst::FIRST_ARGUMENT + k)
    }
}

impl<'m> Inst<'m> {
    fn ids(self, from: usize) -> Result<Vec<Word>, ViewError> {
        self.ids_from(from).collect()
    }

    fn id_if(self, present: bool, i: usize) -> Result<Option<Word>, ViewError> {
        if present {
            self.id(i).map(Some)
        } else {
            Ok(None)
        }
    }

    /// `OpAtomic*` (see [`AtomicOp::of`]).
    pub fn atomic(self) -> Result<Atomic, ViewError> {
        let op = AtomicOp::of(self.opcode()).ok_or_else(|| self.error("is not an atomic"))?;
        let cmpxchg = op.is_compare_exchange();
        Ok(Atomic {
            op,
            pointer: self.id(0)?,
            scope: self.id(1)?,
            semantics: self.id(2)?,
            unequal: self.id_if(cmpxchg, 3)?,
            value: self.id_if(op.has_value(), if cmpxchg { 4 } else { 3 })?,
            comparator: self.id_if(cmpxchg, 5)?,
        })
    }

    /// The memory scope of an atomic or a barrier (`OpMemoryBarrier`, `OpControlBarrier`),
    /// `None` for other instructions.
    pub fn memory_scope(self) -> Option<Word> {
        match self.opcode() {
            Op::MemoryBarrier => self.optional_id(MemoryBarrier::MEMORY),
            Op::ControlBarrier => self.optional_id(ControlBarrier::MEMORY),
            op if AtomicOp::of(op).is_some() => self.optional_id(AtomicOp::SCOPE),
            _ => None,
        }
    }

    /// The pointer a load, store or access chain reads through, or that a pointer cast or copy
    /// (`OpCopyObject`, `OpPtrCastToGeneric`, `OpGenericCastToPtr[Explicit]`, `OpBitcast`)
    /// converts: operand 0 of each.
    pub fn base_pointer(self) -> Result<Word, ViewError> {
        self.id(0)
    }

    /// `OpBranch`'s target label.
    pub fn branch_target(self) -> Result<Word, ViewError> {
        self.id(0)
    }

    pub fn branch_conditional(self) -> Result<BranchConditional, ViewError> {
        Ok(BranchConditional {
            condition: self.id(0)?,
            true_label: self.id(1)?,
            false_label: self.id(2)?,
        })
    }

    pub fn switch(self) -> Result<Switch, ViewError> {
        let selector = self.id(0)?;
        let default = self.id(1)?;
        let mut targets = Vec::new();
        let mut i = 2;
        while i < self.operand_count() {
            let literal = self
                .literal_bits(i)
                .map_err(|_| ViewError("error: OpSwitch literal is malformed\n".into()))?;
            targets.push((literal, self.id(i + 1)?));
            i += 2;
        }
        Ok(Switch {
            selector,
            default,
            targets,
        })
    }

    pub fn function_call(self) -> Result<FunctionCall, ViewError> {
        Ok(FunctionCall {
            function: self.id(0)?,
            arguments: self.ids(1)?,
        })
    }

    /// The callee of an `OpFunctionCall`, `None` for other instructions.
    pub fn callee(self) -> Option<Word> {
        match self.opcode() {
            Op::FunctionCall => self.optional_id(0),
            _ => None,
        }
    }

    pub fn variable(self) -> Result<Variable, ViewError> {
        Ok(Variable {
            storage: self.storage_class(Variable::STORAGE)?,
            initializer: self.id_if(
                self.operand_count() > Variable::INITIALIZER,
                Variable::INITIALIZER,
            )?,
        })
    }

    /// The storage class of an `OpVariable` (a global's, whose other operands need not be
    /// read).
    pub fn variable_storage(self) -> Result<StorageClass, ViewError> {
        self.storage_class(Variable::STORAGE)
    }

    /// The value of an `OpConstant` or `OpSpecConstant`, its bits zero-extended.
    pub fn constant_bits(self) -> Result<u64, ViewError> {
        self.literal_bits(0)
    }

    pub fn spec_constant_op(self) -> Result<SpecConstantOp, ViewError> {
        Ok(SpecConstantOp {
            opcode: self.spec_constant_opcode()?,
            a: self.optional_id(1),
            b: self.optional_id(2),
        })
    }

    pub fn load(self) -> Result<Load, ViewError> {
        Ok(Load {
            pointer: self.id(Load::POINTER)?,
            memory_access: self.memory_access(Load::POINTER + 1)?,
        })
    }

    pub fn store(self) -> Result<Store, ViewError> {
        Ok(Store {
            pointer: self.id(Store::POINTER)?,
            object: self.id(Store::OBJECT)?,
            memory_access: self.memory_access(Store::OBJECT + 1)?,
        })
    }

    pub fn copy_memory(self) -> Result<CopyMemory, ViewError> {
        Ok(CopyMemory {
            target: self.id(CopyMemory::TARGET)?,
            source: self.id(CopyMemory::SOURCE)?,
            size: self.id_if(self.opcode() == Op::CopyMemorySized, CopyMemory::SIZE)?,
        })
    }

    pub fn access_chain(self) -> Result<AccessChain, ViewError> {
        let with_element = matches!(
            self.opcode(),
            Op::PtrAccessChain | Op::InBoundsPtrAccessChain
        );
        Ok(AccessChain {
            base: self.id(0)?,
            element: self.id_if(with_element, 1)?,
            indices: self.ids(if with_element { 2 } else { 1 })?,
        })
    }

    /// See [`Unary`].
    pub fn unary(self) -> Result<Unary, ViewError> {
        Ok(Unary {
            value: self.id(Unary::VALUE)?,
        })
    }

    /// See [`Binary`].
    pub fn binary(self) -> Result<Binary, ViewError> {
        Ok(Binary {
            a: self.id(Binary::A)?,
            b: self.id(Binary::B)?,
        })
    }

    pub fn select(self) -> Result<Select, ViewError> {
        Ok(Select {
            condition: self.id(Select::CONDITION)?,
            accept: self.id(Select::ACCEPT)?,
            reject: self.id(Select::REJECT)?,
        })
    }

    pub fn bit_field(self) -> Result<BitField, ViewError> {
        let insert = self.opcode() == Op::BitFieldInsert;
        let last = if insert { 3 } else { 2 };
        Ok(BitField {
            base: self.id(0)?,
            insert: self.id_if(insert, 1)?,
            offset: self.id(last - 1)?,
            count: self.id(last)?,
        })
    }

    pub fn integer_dot(self) -> Result<IntegerDot, ViewError> {
        let accumulate = matches!(
            self.opcode(),
            Op::SDotAccSat | Op::UDotAccSat | Op::SUDotAccSat
        );
        Ok(IntegerDot {
            a: self.id(0)?,
            b: self.id(1)?,
            accumulator: self.id_if(accumulate, 2)?,
            packed: self.has_packed_vector_format(),
        })
    }

    /// `OpCompositeConstruct`'s constituents.
    pub fn constituents(self) -> Result<Vec<Word>, ViewError> {
        self.ids(0)
    }

    pub fn composite_extract(self) -> Result<CompositeExtract, ViewError> {
        Ok(CompositeExtract {
            composite: self.id(CompositeExtract::COMPOSITE)?,
            indexes: self
                .literals_from(CompositeExtract::FIRST_INDEX)
                .filter_map(Result::ok)
                .collect(),
        })
    }

    pub fn composite_insert(self) -> Result<CompositeInsert, ViewError> {
        Ok(CompositeInsert {
            object: self.id(CompositeInsert::OBJECT)?,
            composite: self.id(CompositeInsert::COMPOSITE)?,
            indexes: self
                .literals_from(CompositeInsert::FIRST_INDEX)
                .filter_map(Result::ok)
                .collect(),
        })
    }

    pub fn vector_shuffle(self) -> Result<VectorShuffle, ViewError> {
        Ok(VectorShuffle {
            vector1: self.id(0)?,
            vector2: self.id(1)?,
            components: self.literals_from(2).filter_map(Result::ok).collect(),
        })
    }

    pub fn vector_extract_dynamic(self) -> Result<VectorExtractDynamic, ViewError> {
        Ok(VectorExtractDynamic {
            vector: self.id(VectorExtractDynamic::VECTOR)?,
            index: self.id(VectorExtractDynamic::INDEX)?,
        })
    }

    pub fn vector_insert_dynamic(self) -> Result<VectorInsertDynamic, ViewError> {
        Ok(VectorInsertDynamic {
            vector: self.id(VectorInsertDynamic::VECTOR)?,
            component: self.id(VectorInsertDynamic::COMPONENT)?,
            index: self.id(VectorInsertDynamic::INDEX)?,
        })
    }

    pub fn generic_cast_explicit(self) -> Result<GenericCastToPtrExplicit, ViewError> {
        Ok(GenericCastToPtrExplicit {
            pointer: self.id(0)?,
            storage: self.storage_class(1).ok(),
        })
    }

    /// The packet operands of a pipe instruction whose pipe is operand `first` (after an
    /// execution scope, a reservation and index, as the opcode has them).
    fn pipe_packet(self, first: usize, write: bool) -> Result<PipePacket, ViewError> {
        Ok(PipePacket {
            pipe: self.id(first)?,
            write,
            size: self.last_but(1)?,
            alignment: self.last_but(0)?,
        })
    }

    /// Operand `count - 1 - k`, an id.
    fn last_but(self, k: usize) -> Result<Word, ViewError> {
        let i = self
            .operand_count()
            .checked_sub(1 + k)
            .ok_or_else(|| self.error("has too few operands"))?;
        self.id(i)
    }

    /// See [`PipeAccess`].
    pub fn pipe_access(self) -> Result<PipeAccess, ViewError> {
        let (write, reserved) = match self.opcode() {
            Op::ReadPipe => (false, false),
            Op::WritePipe => (true, false),
            Op::ReservedReadPipe => (false, true),
            Op::ReservedWritePipe => (true, true),
            _ => return Err(self.error("is not a pipe read or write")),
        };
        Ok(PipeAccess {
            packet: self.pipe_packet(0, write)?,
            reserved: if reserved {
                Some((self.id(1)?, self.id(2)?))
            } else {
                None
            },
            pointer: self.id(if reserved { 3 } else { 1 })?,
        })
    }

    /// See [`PipeReserve`].
    pub fn pipe_reserve(self) -> Result<PipeReserve, ViewError> {
        let (write, group) = match self.opcode() {
            Op::ReserveReadPipePackets => (false, false),
            Op::ReserveWritePipePackets => (true, false),
            Op::GroupReserveReadPipePackets => (false, true),
            Op::GroupReserveWritePipePackets => (true, true),
            _ => return Err(self.error("is not a pipe reservation")),
        };
        let first = usize::from(group);
        Ok(PipeReserve {
            packet: self.pipe_packet(first, write)?,
            scope: if group { Some(self.id(0)?) } else { None },
            num_packets: self.id(first + 1)?,
        })
    }

    /// See [`PipeCommit`].
    pub fn pipe_commit(self) -> Result<PipeCommit, ViewError> {
        let (write, group) = match self.opcode() {
            Op::CommitReadPipe => (false, false),
            Op::CommitWritePipe => (true, false),
            Op::GroupCommitReadPipe => (false, true),
            Op::GroupCommitWritePipe => (true, true),
            _ => return Err(self.error("is not a pipe commit")),
        };
        let first = usize::from(group);
        Ok(PipeCommit {
            packet: self.pipe_packet(first, write)?,
            scope: if group { Some(self.id(0)?) } else { None },
            reserve_id: self.id(first + 1)?,
        })
    }

    /// `OpGetNumPipePackets`/`OpGetMaxPipePackets`: the pipe's packet operands (`write` is
    /// false: either end may ask).
    pub fn pipe_query(self) -> Result<PipePacket, ViewError> {
        match self.opcode() {
            Op::GetNumPipePackets | Op::GetMaxPipePackets => self.pipe_packet(0, false),
            _ => Err(self.error("is not a pipe query")),
        }
    }

    pub fn group_async_copy(self) -> Result<GroupAsyncCopy, ViewError> {
        Ok(GroupAsyncCopy {
            scope: self.id(0)?,
            destination: self.id(1)?,
            source: self.id(2)?,
            num_elements: self.id(3)?,
            stride: self.id(4)?,
            event: self.id(5)?,
        })
    }

    /// See [`GroupOp`]. Operands after the scope are optional here: each user asks for the
    /// ones its opcode has (the error then names the operand).
    pub fn group_op(self) -> Result<GroupOp, ViewError> {
        let operation = self.optional_group_operation(GroupOp::OPERATION);
        let first = GroupOp::OPERATION + usize::from(operation.is_some());
        let optional = |i: usize| (i < self.operand_count()).then_some(i);
        let id = |i: Option<usize>| i.map(|i| self.id(i)).transpose();
        Ok(GroupOp {
            scope: self.id(GroupOp::SCOPE)?,
            operation,
            value: id(optional(first))?,
            argument: if operation.is_some() {
                None
            } else {
                id(optional(2))?
            },
            cluster_size: match operation {
                Some(_) => id(optional(3))?,
                None if self.opcode() == Op::GroupNonUniformRotateKHR => id(optional(3))?,
                None => None,
            },
        })
    }

    pub fn control_barrier(self) -> Result<ControlBarrier, ViewError> {
        Ok(ControlBarrier {
            execution: self.id(ControlBarrier::EXECUTION)?,
            memory: self.id(ControlBarrier::MEMORY)?,
            semantics: self.id(ControlBarrier::SEMANTICS)?,
        })
    }

    pub fn memory_barrier(self) -> Result<MemoryBarrier, ViewError> {
        Ok(MemoryBarrier {
            memory: self.id(MemoryBarrier::MEMORY)?,
            semantics: self.id(MemoryBarrier::SEMANTICS)?,
        })
    }

    pub fn memory_named_barrier(self) -> Result<MemoryNamedBarrier, ViewError> {
        Ok(MemoryNamedBarrier {
            barrier: self.id(MemoryNamedBarrier::BARRIER)?,
            memory: self.id(MemoryNamedBarrier::MEMORY)?,
            semantics: self.id(MemoryNamedBarrier::SEMANTICS)?,
        })
    }

    /// `OpReadClockKHR`'s scope.
    pub fn clock_scope(self) -> Result<Word, ViewError> {
        self.id(0)
    }

    pub fn intel_shuffle(self) -> Result<IntelShuffle, ViewError> {
        let two = matches!(
            self.opcode(),
            Op::SubgroupShuffleDownINTEL | Op::SubgroupShuffleUpINTEL
        );
        Ok(IntelShuffle {
            data: self.id(0)?,
            second: self.id_if(two, 1)?,
            operand: self.id(if two { 2 } else { 1 })?,
        })
    }

    pub fn block_io(self) -> Result<BlockIo, ViewError> {
        let (image, write) = match self.opcode() {
            Op::SubgroupImageBlockReadINTEL => (true, false),
            Op::SubgroupImageBlockWriteINTEL => (true, true),
            Op::SubgroupBlockWriteINTEL => (false, true),
            _ => (false, false),
        };
        Ok(BlockIo {
            pointer: self.id(0)?,
            coordinate: self.id_if(image, 1)?,
            data: self.id_if(write, if image { 2 } else { 1 })?,
        })
    }

    pub fn sampled_image(self) -> Result<SampledImage, ViewError> {
        Ok(SampledImage {
            image: self.id(0)?,
            sampler: self.id(1)?,
        })
    }

    /// `OpImageRead` and `OpImageSampleExplicitLod`.
    pub fn image_read(self) -> Result<ImageRead, ViewError> {
        Ok(ImageRead {
            image: self.id(0)?,
            coordinate: self.id(1)?,
            operands: self.image_operands(2)?,
        })
    }

    pub fn image_write(self) -> Result<ImageWrite, ViewError> {
        Ok(ImageWrite {
            image: self.id(0)?,
            coordinate: self.id(1)?,
            texel: self.id(2)?,
            operands: self.image_operands(3)?,
        })
    }

    pub fn image_query(self) -> Result<ImageQuery, ViewError> {
        Ok(ImageQuery {
            image: self.id(0)?,
            lod: self.id_if(self.opcode() == Op::ImageQuerySizeLod, 1)?,
        })
    }

    /// An `OpExtInst`'s arguments.
    pub fn ext_args(self) -> ExtArgs<'m> {
        ExtArgs(self)
    }

    /// An `OpExtInst`'s set (before its number is read).
    pub fn ext_set(self) -> Result<Word, ViewError> {
        self.id(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rspirv::dr::{Instruction, Operand};

    fn inst(op: Op, ops: Vec<Operand>) -> Instruction {
        Instruction::new(op, Some(1), Some(9), ops)
    }

    fn ids(ids: &[Word]) -> Vec<Operand> {
        ids.iter().map(|&i| Operand::IdRef(i)).collect()
    }

    #[test]
    fn atomics_by_layout() {
        let cmpxchg = inst(
            Op::AtomicCompareExchange,
            vec![
                Operand::IdRef(2),
                Operand::IdScope(3),
                Operand::IdMemorySemantics(4),
                Operand::IdMemorySemantics(5),
                Operand::IdRef(6),
                Operand::IdRef(7),
            ],
        );
        let a = Inst::new(&cmpxchg).atomic().unwrap();
        assert_eq!(
            a,
            Atomic {
                op: AtomicOp::CompareExchange,
                pointer: 2,
                scope: 3,
                semantics: 4,
                unequal: Some(5),
                value: Some(6),
                comparator: Some(7),
            }
        );
        let load = inst(Op::AtomicLoad, ids(&[2, 3, 4]));
        let a = Inst::new(&load).atomic().unwrap();
        assert_eq!((a.value, a.unequal, a.comparator), (None, None, None));
        let add = inst(Op::AtomicIAdd, ids(&[2, 3, 4, 8]));
        assert_eq!(Inst::new(&add).atomic().unwrap().value, Some(8));
        let short = inst(Op::AtomicStore, ids(&[2, 3, 4]));
        assert_eq!(
            Inst::new(&short).atomic().unwrap_err().0,
            "error: OpAtomicStore %9 operand 3 is not an id\n"
        );
        assert!(Inst::new(&inst(Op::IAdd, ids(&[1, 2]))).atomic().is_err());
        assert_eq!(Inst::new(&add).memory_scope(), Some(3));
    }

    #[test]
    fn the_atomic_family() {
        let atomics = [
            Op::AtomicLoad,
            Op::AtomicStore,
            Op::AtomicExchange,
            Op::AtomicCompareExchange,
            Op::AtomicCompareExchangeWeak,
            Op::AtomicIIncrement,
            Op::AtomicIDecrement,
            Op::AtomicIAdd,
            Op::AtomicISub,
            Op::AtomicSMin,
            Op::AtomicUMin,
            Op::AtomicSMax,
            Op::AtomicUMax,
            Op::AtomicAnd,
            Op::AtomicOr,
            Op::AtomicXor,
            Op::AtomicFlagTestAndSet,
            Op::AtomicFlagClear,
            Op::AtomicFAddEXT,
            Op::AtomicFMinEXT,
            Op::AtomicFMaxEXT,
        ];
        for op in atomics {
            assert!(AtomicOp::of(op).is_some(), "{op:?}");
        }
        let of = |op| AtomicOp::of(op).unwrap();
        assert!(of(Op::AtomicFMinEXT).is_float() && !of(Op::AtomicIAdd).is_float());
        assert!(!of(Op::AtomicStore).has_result() && !of(Op::AtomicFlagClear).has_result());
        assert!(of(Op::AtomicFlagTestAndSet).has_result() && of(Op::AtomicFlagClear).is_flag());
        assert_eq!(of(Op::AtomicCompareExchangeWeak).value_operands(), 4..6);
        assert_eq!(of(Op::AtomicCompareExchange).semantics_operands(), 2..4);
        assert_eq!(of(Op::AtomicIIncrement).value_operands(), 0..0);
        assert_eq!(of(Op::AtomicStore).value_operands(), 3..4);
        assert_eq!(AtomicOp::of(Op::Load), None);
    }

    #[test]
    fn memory_and_composites() {
        let chain = inst(Op::PtrAccessChain, ids(&[2, 3, 4, 5]));
        assert_eq!(
            Inst::new(&chain).access_chain().unwrap(),
            AccessChain {
                base: 2,
                element: Some(3),
                indices: vec![4, 5],
            }
        );
        let chain = inst(Op::InBoundsAccessChain, ids(&[2, 4]));
        let c = Inst::new(&chain).access_chain().unwrap();
        assert_eq!((c.element, c.indices), (None, vec![4]));
        let sized = inst(Op::CopyMemorySized, ids(&[2, 3, 4]));
        assert_eq!(Inst::new(&sized).copy_memory().unwrap().size, Some(4));
        let store = inst(Op::Store, ids(&[2, 3]));
        let s = Inst::new(&store).store().unwrap();
        assert_eq!((s.pointer, s.object), (2, 3));
        let insert = inst(
            Op::CompositeInsert,
            vec![
                Operand::IdRef(2),
                Operand::IdRef(3),
                Operand::LiteralBit32(1),
                Operand::LiteralBit32(0),
            ],
        );
        assert_eq!(
            Inst::new(&insert).composite_insert().unwrap(),
            CompositeInsert {
                object: 2,
                composite: 3,
                indexes: vec![1, 0],
            }
        );
        let field = inst(Op::BitFieldUExtract, ids(&[2, 3, 4]));
        assert_eq!(
            Inst::new(&field).bit_field().unwrap(),
            BitField {
                base: 2,
                insert: None,
                offset: 3,
                count: 4,
            }
        );
    }

    #[test]
    fn group_operands() {
        let reduce = inst(
            Op::GroupNonUniformIAdd,
            vec![
                Operand::IdScope(3),
                Operand::GroupOperation(GroupOperation::ClusteredReduce),
                Operand::IdRef(4),
                Operand::IdRef(5),
            ],
        );
        assert_eq!(
            Inst::new(&reduce).group_op().unwrap(),
            GroupOp {
                scope: 3,
                operation: Some(GroupOperation::ClusteredReduce),
                value: Some(4),
                argument: None,
                cluster_size: Some(5),
            }
        );
        let shuffle = inst(
            Op::GroupNonUniformShuffle,
            vec![Operand::IdScope(3), Operand::IdRef(4), Operand::IdRef(6)],
        );
        let g = Inst::new(&shuffle).group_op().unwrap();
        assert_eq!((g.operation, g.value, g.argument), (None, Some(4), Some(6)));
        let elect = inst(Op::GroupNonUniformElect, vec![Operand::IdScope(3)]);
        assert_eq!(Inst::new(&elect).group_op().unwrap().value, None);
        let rotate = inst(
            Op::GroupNonUniformRotateKHR,
            vec![
                Operand::IdScope(3),
                Operand::IdRef(4),
                Operand::IdRef(6),
                Operand::IdRef(7),
            ],
        );
        assert_eq!(Inst::new(&rotate).group_op().unwrap().cluster_size, Some(7));
    }
}
