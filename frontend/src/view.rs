//! The typed view of a validated module that the crates after the frontend read: instructions
//! with accessors per operand family (ids, literals, enumerants, `OpExtInst`, the optional
//! memory-access and image-operand masks decoded once), functions, blocks, decorations and the
//! module's capabilities. Only the frontend touches rspirv's data model.
//!
//! The wrappers are `Copy` borrows with inline accessors: reading an operand through them costs
//! what reading `dr::Operand` did. An operand that is missing or of another kind is an error
//! naming the instruction, its result id and the operand, never a panic: codegen turns it into
//! a build log line.

use rspirv::dr::{self, Operand};
use spirv::{
    BuiltIn, Capability, Decoration, FPRoundingMode, GroupOperation, Op, StorageClass, Word,
};

use crate::module::Module;

/// An operand an accessor could not read: the build-log line that says which and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ViewError(pub String);

impl std::fmt::Display for ViewError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for ViewError {}

/// One instruction of the module.
#[derive(Clone, Copy, Debug)]
pub struct Inst<'m>(&'m dr::Instruction);

impl<'m> Inst<'m> {
    /// The view of an rspirv instruction, for the frontend's own passes.
    pub(crate) fn new(inst: &'m dr::Instruction) -> Self {
        Inst(inst)
    }

    /// The rspirv instruction, for the frontend's own passes.
    pub(crate) fn raw(self) -> &'m dr::Instruction {
        self.0
    }

    #[inline]
    pub fn opcode(self) -> Op {
        self.0.class.opcode
    }

    #[inline]
    pub fn result_id(self) -> Option<Word> {
        self.0.result_id
    }

    #[inline]
    pub fn result_type(self) -> Option<Word> {
        self.0.result_type
    }

    /// Operands after the result type and id.
    #[inline]
    pub fn operand_count(self) -> usize {
        self.0.operands.len()
    }

    /// "OpFoo %12" (or "OpFoo" without a result id): how build logs name an instruction.
    pub fn describe(self) -> String {
        match self.0.result_id {
            Some(id) => format!("Op{:?} %{id}", self.0.class.opcode),
            None => format!("Op{:?}", self.0.class.opcode),
        }
    }

    /// An error about this instruction: `error: <describe> <what>`.
    pub fn error(self, what: &str) -> ViewError {
        ViewError(format!("error: {} {what}\n", self.describe()))
    }

    fn not(self, i: usize, kind: &str) -> ViewError {
        self.error(&format!("operand {i} is not {kind}"))
    }

    /// Operand `i`, which must be an id (`IdRef`, or an `IdScope`/`IdMemorySemantics`).
    #[inline]
    pub fn id(self, i: usize) -> Result<Word, ViewError> {
        self.optional_id(i).ok_or_else(|| self.not(i, "an id"))
    }

    /// Operand `i` if there is one and it is an id (optional operands such as `OpVariable`'s
    /// initialiser).
    #[inline]
    pub fn optional_id(self, i: usize) -> Option<Word> {
        match self.0.operands.get(i) {
            Some(Operand::IdRef(id) | Operand::IdScope(id) | Operand::IdMemorySemantics(id)) => {
                Some(*id)
            }
            _ => None,
        }
    }

    /// Whether operand `i` is an id.
    #[inline]
    pub fn is_id(self, i: usize) -> bool {
        self.optional_id(i).is_some()
    }

    /// Every operand that is an `IdRef` (scope and semantics ids aside), in order: what an
    /// analysis walking the uses of values sees.
    pub fn id_refs(self) -> impl Iterator<Item = Word> + 'm {
        self.id_refs_with_index().map(|(_, id)| id)
    }

    /// [`Inst::id_refs`] with each operand's index.
    pub fn id_refs_with_index(self) -> impl Iterator<Item = (usize, Word)> + 'm {
        self.0
            .operands
            .iter()
            .enumerate()
            .filter_map(|(i, o)| match o {
                Operand::IdRef(id) => Some((i, *id)),
                _ => None,
            })
    }

    /// The ids from operand `i` to the end (`OpFunctionCall`'s arguments,
    /// `OpCompositeConstruct`'s constituents, the ids of `OpExtInst`), each an error if it is not
    /// an id.
    pub fn ids_from(self, i: usize) -> impl Iterator<Item = Result<Word, ViewError>> + 'm {
        (i..self.operand_count()).map(move |k| self.id(k))
    }

    /// A 32-bit literal operand (`OpVectorShuffle` components, `OpCompositeExtract` indices).
    #[inline]
    pub fn literal_u32(self, i: usize) -> Result<u32, ViewError> {
        match self.0.operands.get(i) {
            Some(Operand::LiteralBit32(v)) => Ok(*v),
            _ => Err(self.not(i, "a 32-bit literal")),
        }
    }

    /// `OpConstantSampler`'s operands as SPIR-V values: (`SamplerAddressingMode`, the
    /// normalised-coordinates literal, `SamplerFilterMode`).
    pub fn constant_sampler(self) -> Result<(u32, u32, u32), ViewError> {
        match (
            self.0.operands.first(),
            self.0.operands.get(1),
            self.0.operands.get(2),
        ) {
            (
                Some(Operand::SamplerAddressingMode(a)),
                Some(Operand::LiteralBit32(n)),
                Some(Operand::SamplerFilterMode(f)),
            ) => Ok((*a as u32, *n, *f as u32)),
            _ => Err(self.error("operands are not (addressing mode, normalized, filter mode)")),
        }
    }

    /// The 32-bit literals from operand `i` to the end.
    pub fn literals_from(self, i: usize) -> impl Iterator<Item = Result<u32, ViewError>> + 'm {
        (i..self.operand_count()).map(move |k| self.literal_u32(k))
    }

    /// A literal number of 32 or 64 bits (an `OpConstant` value, an `OpSwitch` case), as its
    /// bits zero-extended.
    #[inline]
    pub fn literal_bits(self, i: usize) -> Result<u64, ViewError> {
        match self.0.operands.get(i) {
            Some(Operand::LiteralBit32(v)) => Ok(u64::from(*v)),
            Some(Operand::LiteralBit64(v)) => Ok(*v),
            _ => Err(self.not(i, "a literal number")),
        }
    }

    /// The opcode of an `OpSpecConstantOp` (its operand 0).
    pub fn spec_constant_opcode(self) -> Result<Op, ViewError> {
        match self.0.operands.first() {
            Some(Operand::LiteralSpecConstantOpInteger(op)) => Ok(*op),
            _ => Err(self.not(0, "an opcode")),
        }
    }

    /// A storage class operand (`OpVariable` 0, `OpTypePointer` 0, `OpGenericCastToPtrExplicit`
    /// 1).
    #[inline]
    pub fn storage_class(self, i: usize) -> Result<StorageClass, ViewError> {
        match self.0.operands.get(i) {
            Some(Operand::StorageClass(s)) => Ok(*s),
            _ => Err(self.not(i, "a storage class")),
        }
    }

    /// A group operation operand (`OpGroupIAdd` & co. and the non-uniform forms).
    #[inline]
    pub fn group_operation(self, i: usize) -> Result<GroupOperation, ViewError> {
        self.optional_group_operation(i)
            .ok_or_else(|| self.not(i, "a group operation"))
    }

    /// Operand `i` if it is a group operation (the non-uniform instructions with and without
    /// one share opcodes' shapes).
    #[inline]
    pub fn optional_group_operation(self, i: usize) -> Option<GroupOperation> {
        match self.0.operands.get(i) {
            Some(Operand::GroupOperation(g)) => Some(*g),
            _ => None,
        }
    }

    /// A rounding-mode operand, as rspirv reads the enumerant where one stands.
    #[inline]
    pub fn fp_rounding_mode(self, i: usize) -> Result<FPRoundingMode, ViewError> {
        match self.0.operands.get(i) {
            Some(Operand::FPRoundingMode(m)) => Ok(*m),
            _ => Err(self.not(i, "a rounding mode")),
        }
    }

    /// Whether the instruction has a packed vector format operand (the integer dot products'
    /// `PackedVectorFormat4x8Bit`).
    pub fn has_packed_vector_format(self) -> bool {
        self.0
            .operands
            .iter()
            .any(|o| matches!(o, Operand::PackedVectorFormat(_)))
    }

    /// An `OpExtInst`: its set, its instruction number in that set; arguments are operands from
    /// [`ExtInst::FIRST_ARGUMENT`] on.
    pub fn ext_inst(self) -> Result<ExtInst, ViewError> {
        let set = self.id(0)?;
        let instruction = match self.0.operands.get(1) {
            Some(Operand::LiteralExtInstInteger(n)) => *n,
            _ => return Err(self.error("has no instruction number")),
        };
        Ok(ExtInst { set, instruction })
    }

    /// A literal argument of an extended instruction (OpenCL.std `vloadn`'s n, `vstore_half_r`'s
    /// rounding mode): the grammar of the set is not rspirv's, which reads such a word as an
    /// id, a literal or an enumerant depending on the set; all of them name the number.
    pub fn ext_literal(self, i: usize) -> Option<u32> {
        match self.0.operands.get(i) {
            Some(Operand::IdRef(n) | Operand::LiteralBit32(n)) => Some(*n),
            Some(Operand::FPRoundingMode(m)) => Some(*m as u32),
            _ => None,
        }
    }

    /// `OpPhi`'s (value, parent block) pairs.
    pub fn phi_pairs(self) -> impl Iterator<Item = Result<(Word, Word), ViewError>> + 'm {
        (0..self.operand_count() / 2).map(move |k| Ok((self.id(2 * k)?, self.id(2 * k + 1)?)))
    }

    /// The optional memory-access operands starting at operand `i` (`OpLoad` 1, `OpStore` 2,
    /// `OpCopyMemory` 2, `OpCopyMemorySized` 3): none when the instruction ends before `i`.
    pub fn memory_access(self, i: usize) -> Result<MemoryAccess, ViewError> {
        let mask = match self.0.operands.get(i) {
            None => return Ok(MemoryAccess::default()),
            Some(Operand::MemoryAccess(m)) => *m,
            Some(_) => return Err(self.not(i, "a memory access mask")),
        };
        use spirv::MemoryAccess as M;
        let mut access = MemoryAccess {
            mask,
            ..MemoryAccess::default()
        };
        // The mask's parameters follow it in the order of its bits.
        let mut next = i + 1;
        if mask.contains(M::ALIGNED) {
            access.aligned = Some(self.literal_u32(next)?);
            next += 1;
        }
        if mask.contains(M::MAKE_POINTER_AVAILABLE) {
            access.make_pointer_available = Some(self.id(next)?);
            next += 1;
        }
        if mask.contains(M::MAKE_POINTER_VISIBLE) {
            access.make_pointer_visible = Some(self.id(next)?);
            next += 1;
        }
        for bit in [M::ALIAS_SCOPE_INTEL_MASK, M::NO_ALIAS_INTEL_MASK] {
            if mask.contains(bit) {
                self.id(next)?;
                next += 1;
            }
        }
        access.end = next;
        Ok(access)
    }

    /// The optional image operands starting at operand `i` (`OpImageRead` 2, `OpImageWrite` 3,
    /// `OpImageSampleExplicitLod` 2, `OpImageFetch` 2): none when the instruction ends before
    /// `i`.
    pub fn image_operands(self, i: usize) -> Result<ImageOperands, ViewError> {
        let mask = match self.0.operands.get(i) {
            None => return Ok(ImageOperands::default()),
            Some(Operand::ImageOperands(m)) => *m,
            Some(_) => return Err(self.not(i, "an image operands mask")),
        };
        use spirv::ImageOperands as I;
        let mut out = ImageOperands {
            mask,
            ..ImageOperands::default()
        };
        // The mask's parameters follow it in the order of its bits.
        let mut next = i + 1;
        let mut take = |out: &mut Option<Word>| -> Result<(), ViewError> {
            *out = Some(self.id(next)?);
            next += 1;
            Ok(())
        };
        if mask.contains(I::BIAS) {
            take(&mut out.bias)?;
        }
        if mask.contains(I::LOD) {
            take(&mut out.lod)?;
        }
        if mask.contains(I::GRAD) {
            let (mut dx, mut dy) = (None, None);
            take(&mut dx)?;
            take(&mut dy)?;
            out.grad = dx.zip(dy);
        }
        if mask.contains(I::CONST_OFFSET) {
            take(&mut out.const_offset)?;
        }
        if mask.contains(I::OFFSET) {
            take(&mut out.offset)?;
        }
        if mask.contains(I::CONST_OFFSETS) {
            take(&mut out.const_offsets)?;
        }
        if mask.contains(I::SAMPLE) {
            take(&mut out.sample)?;
        }
        if mask.contains(I::MIN_LOD) {
            take(&mut out.min_lod)?;
        }
        if mask.contains(I::MAKE_TEXEL_AVAILABLE) {
            take(&mut out.make_texel_available)?;
        }
        if mask.contains(I::MAKE_TEXEL_VISIBLE) {
            take(&mut out.make_texel_visible)?;
        }
        if mask.contains(I::OFFSETS) {
            take(&mut out.offsets)?;
        }
        out.end = next;
        Ok(out)
    }
}

/// The head of an `OpExtInst`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ExtInst {
    /// The `OpExtInstImport` id of the set.
    pub set: Word,
    /// The instruction's number in its set.
    pub instruction: u32,
}

impl ExtInst {
    /// Operand index of an `OpExtInst`'s first argument (after the set and the number).
    pub const FIRST_ARGUMENT: usize = 2;
}

/// The optional memory operands of a load, store or copy, decoded from their mask.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MemoryAccess {
    pub mask: spirv::MemoryAccess,
    /// `Aligned`: the alignment the access may assume, in bytes.
    pub aligned: Option<u32>,
    /// `MakePointerAvailable`'s scope id.
    pub make_pointer_available: Option<Word>,
    /// `MakePointerVisible`'s scope id.
    pub make_pointer_visible: Option<Word>,
    /// Index of the first operand after these (`OpCopyMemory`'s second mask in SPIR-V 1.4).
    pub end: usize,
}

impl Default for MemoryAccess {
    fn default() -> Self {
        MemoryAccess {
            mask: spirv::MemoryAccess::NONE,
            aligned: None,
            make_pointer_available: None,
            make_pointer_visible: None,
            end: 0,
        }
    }
}

impl MemoryAccess {
    pub fn is_volatile(&self) -> bool {
        self.mask.contains(spirv::MemoryAccess::VOLATILE)
    }

    pub fn is_nontemporal(&self) -> bool {
        self.mask.contains(spirv::MemoryAccess::NONTEMPORAL)
    }
}

/// The optional operands of an image instruction, decoded from their mask: the ids of the
/// operands the mask announces, `None` for the others.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ImageOperands {
    pub mask: spirv::ImageOperands,
    pub bias: Option<Word>,
    pub lod: Option<Word>,
    /// `Grad`: (dx, dy).
    pub grad: Option<(Word, Word)>,
    pub const_offset: Option<Word>,
    pub offset: Option<Word>,
    pub const_offsets: Option<Word>,
    pub sample: Option<Word>,
    pub min_lod: Option<Word>,
    /// `MakeTexelAvailable`'s scope id.
    pub make_texel_available: Option<Word>,
    /// `MakeTexelVisible`'s scope id.
    pub make_texel_visible: Option<Word>,
    pub offsets: Option<Word>,
    /// Index of the first operand after these.
    pub end: usize,
}

impl Default for ImageOperands {
    fn default() -> Self {
        ImageOperands {
            mask: spirv::ImageOperands::NONE,
            bias: None,
            lod: None,
            grad: None,
            const_offset: None,
            offset: None,
            const_offsets: None,
            sample: None,
            min_lod: None,
            make_texel_available: None,
            make_texel_visible: None,
            offsets: None,
            end: 0,
        }
    }
}

impl ImageOperands {
    pub fn non_private_texel(&self) -> bool {
        self.mask.contains(spirv::ImageOperands::NON_PRIVATE_TEXEL)
    }

    pub fn volatile_texel(&self) -> bool {
        self.mask.contains(spirv::ImageOperands::VOLATILE_TEXEL)
    }

    /// `SignExtend`: the texel is read or written as a signed integer.
    pub fn sign_extend(&self) -> bool {
        self.mask.contains(spirv::ImageOperands::SIGN_EXTEND)
    }

    /// `ZeroExtend`: the texel is read or written as an unsigned integer.
    pub fn zero_extend(&self) -> bool {
        self.mask.contains(spirv::ImageOperands::ZERO_EXTEND)
    }

    pub fn nontemporal(&self) -> bool {
        self.mask.contains(spirv::ImageOperands::NONTEMPORAL)
    }
}

/// One function of the module.
#[derive(Clone, Copy, Debug)]
pub struct Function<'m>(&'m dr::Function);

impl<'m> Function<'m> {
    /// The rspirv function, for the frontend's own passes.
    pub(crate) fn raw(self) -> &'m dr::Function {
        self.0
    }

    /// The `OpFunction` instruction, if the function has one (the validator makes sure).
    pub fn definition(self) -> Option<Inst<'m>> {
        self.0.def.as_ref().map(Inst)
    }

    /// The declared return type.
    pub fn return_type(self) -> Option<Word> {
        self.0.def.as_ref().and_then(|d| d.result_type)
    }

    /// The `OpFunctionParameter` instructions.
    pub fn params(self) -> impl ExactSizeIterator<Item = Inst<'m>> + 'm {
        self.0.parameters.iter().map(Inst)
    }

    pub fn param_count(self) -> usize {
        self.0.parameters.len()
    }

    /// The blocks in module order (the entry first); none for an imported function.
    pub fn blocks(self) -> impl ExactSizeIterator<Item = Block<'m>> + DoubleEndedIterator + 'm {
        self.0.blocks.iter().map(Block)
    }

    pub fn block_count(self) -> usize {
        self.0.blocks.len()
    }

    /// Block `index` in module order.
    pub fn block(self, index: usize) -> Option<Block<'m>> {
        self.0.blocks.get(index).map(Block)
    }

    /// Every instruction of the body, block after block.
    pub fn instructions(self) -> impl Iterator<Item = Inst<'m>> + 'm {
        self.0
            .blocks
            .iter()
            .flat_map(|b| b.instructions.iter().map(Inst))
    }
}

/// One block of a function.
#[derive(Clone, Copy, Debug)]
pub struct Block<'m>(&'m dr::Block);

impl<'m> Block<'m> {
    /// The block's `OpLabel` id (0 without one, which validation refuses).
    pub fn label(self) -> Word {
        self.0.label.as_ref().and_then(|l| l.result_id).unwrap_or(0)
    }

    /// The instructions after the label, the terminator last.
    pub fn instructions(
        self,
    ) -> impl ExactSizeIterator<Item = Inst<'m>> + DoubleEndedIterator + Clone + 'm {
        self.0.instructions.iter().map(Inst)
    }
}

/// One decoration of an id (`OpDecorate`, group decorations expanded).
#[derive(Clone, Copy, Debug)]
pub struct DecorationRef<'m> {
    pub kind: Decoration,
    args: &'m [Operand],
}

impl<'m> DecorationRef<'m> {
    pub(crate) fn new(kind: Decoration, args: &'m [Operand]) -> Self {
        DecorationRef { kind, args }
    }

    /// `FPRoundingMode`'s mode.
    pub fn fp_rounding_mode(self) -> Option<FPRoundingMode> {
        match self.args.first() {
            Some(Operand::FPRoundingMode(m)) => Some(*m),
            _ => None,
        }
    }

    /// `BuiltIn`'s built-in.
    pub fn builtin(self) -> Option<BuiltIn> {
        match self.args.first() {
            Some(Operand::BuiltIn(b)) => Some(*b),
            _ => None,
        }
    }

    /// `LinkageAttributes`' name.
    pub fn linkage_name(self) -> Option<&'m str> {
        match (self.kind, self.args.first()) {
            (Decoration::LinkageAttributes, Some(Operand::LiteralString(name))) => Some(name),
            _ => None,
        }
    }
}

impl Module {
    /// The capabilities the module declares.
    pub fn capabilities(&self) -> impl Iterator<Item = Capability> + '_ {
        self.raw
            .capabilities
            .iter()
            .filter_map(|i| match i.operands.first() {
                Some(Operand::Capability(c)) => Some(*c),
                _ => None,
            })
    }

    /// Types, constants and module-scope variables in module order.
    pub fn global_values(&self) -> impl Iterator<Item = Inst<'_>> {
        self.raw.types_global_values.iter().map(Inst)
    }

    /// The functions in module order.
    pub fn functions(&self) -> impl ExactSizeIterator<Item = Function<'_>> {
        self.raw.functions.iter().map(Function)
    }

    /// The instruction defining a type, constant or module-scope variable.
    pub fn global(&self, id: Word) -> Option<Inst<'_>> {
        self.global_raw(id).map(Inst)
    }

    /// The function with result id `id`.
    pub fn function(&self, id: Word) -> Option<Function<'_>> {
        self.function_raw(id).map(Function)
    }

    /// Decorations applied to `id` (`OpDecorate`, with group decorations expanded).
    pub fn decorations(&self, id: Word) -> impl Iterator<Item = DecorationRef<'_>> {
        self.decorations_raw(id)
            .iter()
            .map(|(kind, args)| DecorationRef::new(*kind, args))
    }

    /// The name `id` is linked by (`LinkageAttributes`), else its debug name (`OpName`): what
    /// identifies an imported built-in, since debug names may be stripped.
    pub fn linkage_name(&self, id: Word) -> Option<&str> {
        self.decorations(id)
            .find_map(|d| d.linkage_name())
            .or_else(|| self.name(id))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rspirv::dr::Instruction;

    fn inst(
        op: Op,
        result_type: Option<Word>,
        result_id: Option<Word>,
        ops: Vec<Operand>,
    ) -> Instruction {
        Instruction::new(op, result_type, result_id, ops)
    }

    #[test]
    fn ids_and_literals_with_errors_that_name_the_instruction() {
        let call = inst(
            Op::FunctionCall,
            Some(1),
            Some(12),
            vec![
                Operand::IdRef(5),
                Operand::IdRef(6),
                Operand::LiteralBit32(7),
            ],
        );
        let v = Inst::new(&call);
        assert_eq!(v.opcode(), Op::FunctionCall);
        assert_eq!((v.result_type(), v.result_id()), (Some(1), Some(12)));
        assert_eq!(v.id(0), Ok(5));
        assert_eq!(
            v.id(2).unwrap_err().0,
            "error: OpFunctionCall %12 operand 2 is not an id\n"
        );
        assert_eq!(
            v.id(9).unwrap_err().0,
            "error: OpFunctionCall %12 operand 9 is not an id\n"
        );
        assert_eq!(v.literal_u32(2), Ok(7));
        assert!(v.literal_u32(0).is_err());
        let args: Vec<_> = v.ids_from(1).collect();
        assert_eq!(args[0], Ok(6));
        assert!(args[1].is_err());
        assert_eq!(v.optional_id(1), Some(6));
        assert_eq!(v.optional_id(2), None);
        let store = inst(Op::Store, None, None, vec![]);
        assert_eq!(
            Inst::new(&store).id(0).unwrap_err().0,
            "error: OpStore operand 0 is not an id\n"
        );
    }

    #[test]
    fn scopes_and_semantics_are_ids() {
        let barrier = inst(
            Op::ControlBarrier,
            None,
            None,
            vec![
                Operand::IdScope(3),
                Operand::IdScope(4),
                Operand::IdMemorySemantics(5),
            ],
        );
        let v = Inst::new(&barrier);
        assert_eq!([v.id(0), v.id(1), v.id(2)], [Ok(3), Ok(4), Ok(5)]);
    }

    #[test]
    fn constants_phis_and_shuffles() {
        let wide = inst(
            Op::Constant,
            Some(2),
            Some(3),
            vec![Operand::LiteralBit64(1 << 40)],
        );
        assert_eq!(Inst::new(&wide).literal_bits(0), Ok(1 << 40));
        let phi = inst(
            Op::Phi,
            Some(2),
            Some(9),
            vec![
                Operand::IdRef(4),
                Operand::IdRef(5),
                Operand::IdRef(6),
                Operand::IdRef(7),
            ],
        );
        let pairs: Vec<_> = Inst::new(&phi).phi_pairs().collect();
        assert_eq!(pairs, [Ok((4, 5)), Ok((6, 7))]);
        let shuffle = inst(
            Op::VectorShuffle,
            Some(2),
            Some(8),
            vec![
                Operand::IdRef(1),
                Operand::IdRef(1),
                Operand::LiteralBit32(3),
                Operand::LiteralBit32(0xffff_ffff),
            ],
        );
        let lanes: Vec<_> = Inst::new(&shuffle).literals_from(2).collect();
        assert_eq!(lanes, [Ok(3), Ok(0xffff_ffff)]);
    }

    #[test]
    fn ext_inst_and_enumerants() {
        let ext = inst(
            Op::ExtInst,
            Some(2),
            Some(7),
            vec![
                Operand::IdRef(1),
                Operand::LiteralExtInstInteger(26),
                Operand::IdRef(5),
            ],
        );
        let v = Inst::new(&ext);
        assert_eq!(
            v.ext_inst(),
            Ok(ExtInst {
                set: 1,
                instruction: 26
            })
        );
        assert_eq!(v.id(ExtInst::FIRST_ARGUMENT), Ok(5));
        let broken = inst(Op::ExtInst, Some(2), Some(7), vec![Operand::IdRef(1)]);
        assert_eq!(
            Inst::new(&broken).ext_inst().unwrap_err().0,
            "error: OpExtInst %7 has no instruction number\n"
        );
        let var = inst(
            Op::Variable,
            Some(2),
            Some(3),
            vec![Operand::StorageClass(StorageClass::Workgroup)],
        );
        assert_eq!(
            Inst::new(&var).storage_class(0),
            Ok(StorageClass::Workgroup)
        );
        assert!(Inst::new(&var).storage_class(1).is_err());
        let reduce = inst(
            Op::GroupIAdd,
            Some(2),
            Some(3),
            vec![
                Operand::IdScope(1),
                Operand::GroupOperation(GroupOperation::Reduce),
                Operand::IdRef(4),
            ],
        );
        assert_eq!(
            Inst::new(&reduce).group_operation(1),
            Ok(GroupOperation::Reduce)
        );
        assert_eq!(Inst::new(&reduce).optional_group_operation(2), None);
    }

    #[test]
    fn memory_access_masks_and_their_literals() {
        use spirv::MemoryAccess as M;
        let plain = inst(Op::Load, Some(2), Some(3), vec![Operand::IdRef(1)]);
        assert_eq!(
            Inst::new(&plain).memory_access(1),
            Ok(MemoryAccess::default())
        );
        let aligned = inst(
            Op::Load,
            Some(2),
            Some(3),
            vec![
                Operand::IdRef(1),
                Operand::MemoryAccess(M::VOLATILE | M::ALIGNED | M::MAKE_POINTER_VISIBLE),
                Operand::LiteralBit32(16),
                Operand::IdScope(9),
            ],
        );
        let a = Inst::new(&aligned).memory_access(1).unwrap();
        assert_eq!(a.aligned, Some(16));
        assert_eq!(a.make_pointer_visible, Some(9));
        assert_eq!(a.make_pointer_available, None);
        assert!(a.is_volatile() && !a.is_nontemporal());
        assert_eq!(a.end, 4);
        // Aligned without its literal.
        let short = inst(
            Op::Store,
            None,
            None,
            vec![
                Operand::IdRef(1),
                Operand::IdRef(2),
                Operand::MemoryAccess(M::ALIGNED),
            ],
        );
        assert_eq!(
            Inst::new(&short).memory_access(2).unwrap_err().0,
            "error: OpStore operand 3 is not a 32-bit literal\n"
        );
        assert!(Inst::new(&short).memory_access(1).is_err());
    }

    #[test]
    fn image_operands_in_mask_order() {
        use spirv::ImageOperands as I;
        let sample = inst(
            Op::ImageSampleExplicitLod,
            Some(2),
            Some(20),
            vec![
                Operand::IdRef(10),
                Operand::IdRef(11),
                Operand::ImageOperands(I::LOD | I::GRAD | I::CONST_OFFSET | I::SIGN_EXTEND),
                Operand::IdRef(12),
                Operand::IdRef(13),
                Operand::IdRef(14),
                Operand::IdRef(15),
            ],
        );
        let o = Inst::new(&sample).image_operands(2).unwrap();
        assert_eq!(o.lod, Some(12));
        assert_eq!(o.grad, Some((13, 14)));
        assert_eq!(o.const_offset, Some(15));
        assert_eq!(
            (o.bias, o.offset, o.sample, o.min_lod),
            (None, None, None, None)
        );
        assert!(o.sign_extend() && !o.zero_extend() && !o.nontemporal());
        assert_eq!(o.end, 7);
        let read = inst(
            Op::ImageRead,
            Some(2),
            Some(21),
            vec![
                Operand::IdRef(10),
                Operand::IdRef(11),
                Operand::ImageOperands(
                    I::BIAS
                        | I::OFFSET
                        | I::CONST_OFFSETS
                        | I::SAMPLE
                        | I::MIN_LOD
                        | I::MAKE_TEXEL_AVAILABLE
                        | I::MAKE_TEXEL_VISIBLE
                        | I::NON_PRIVATE_TEXEL
                        | I::ZERO_EXTEND
                        | I::OFFSETS,
                ),
                Operand::IdRef(30),
                Operand::IdRef(31),
                Operand::IdRef(32),
                Operand::IdRef(33),
                Operand::IdRef(34),
                Operand::IdScope(35),
                Operand::IdScope(36),
                Operand::IdRef(37),
            ],
        );
        let o = Inst::new(&read).image_operands(2).unwrap();
        assert_eq!(
            (o.bias, o.offset, o.const_offsets, o.sample, o.min_lod),
            (Some(30), Some(31), Some(32), Some(33), Some(34))
        );
        assert_eq!(
            (o.make_texel_available, o.make_texel_visible, o.offsets),
            (Some(35), Some(36), Some(37))
        );
        assert!(o.non_private_texel() && o.zero_extend() && !o.volatile_texel());
        assert_eq!(o.lod, None);
        // No mask: nothing optional.
        let bare = inst(
            Op::ImageRead,
            Some(2),
            Some(22),
            vec![Operand::IdRef(10), Operand::IdRef(11)],
        );
        assert_eq!(
            Inst::new(&bare).image_operands(2),
            Ok(ImageOperands::default())
        );
        // Grad announced, one id given.
        let short = inst(
            Op::ImageSampleExplicitLod,
            Some(2),
            Some(23),
            vec![
                Operand::IdRef(10),
                Operand::IdRef(11),
                Operand::ImageOperands(I::GRAD),
                Operand::IdRef(12),
            ],
        );
        assert_eq!(
            Inst::new(&short).image_operands(2).unwrap_err().0,
            "error: OpImageSampleExplicitLod %23 operand 4 is not an id\n"
        );
    }
}
