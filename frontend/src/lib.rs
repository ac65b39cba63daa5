//! The gate between untrusted bytes and the JIT: parses SPIR-V with rspirv, validates it against
//! the OpenCL environment rules Ferrocl implements, and exposes a typed view of the module plus
//! the kernel metadata the runtime needs (argument kinds, sizes, qualifiers, attributes).
//!
//! Nothing here knows about Cranelift or CL objects.

mod bfloat16;
mod cfg;
mod diagnostics;
mod hints;
mod instruction;
mod instruction_enqueue;
mod legacy;
mod link;
mod llvm_intrinsics;
mod locations;
mod metadata;
mod module;
mod parse;
mod printf;
mod specialize;
mod spin_loops;
mod validate;
mod validate_dominance;
mod validate_structure;
mod validate_types;
mod view;
pub mod words;

pub use cfg::Cfg;
pub use diagnostics::{Diagnostic, FrontendError};
pub use instruction::{
    is_group_collective, is_group_pipe, is_pipe_instruction, AccessChain, Atomic, AtomicOp, Binary,
    BitField, BlockIo, BranchConditional, CompositeExtract, CompositeInsert, ControlBarrier,
    CopyMemory, ExtArgs, FunctionCall, GenericCastToPtrExplicit, GroupAsyncCopy, GroupOp,
    ImageQuery, ImageRead, ImageWrite, IntegerDot, IntelShuffle, Load, MemoryBarrier,
    MemoryNamedBarrier, PipeAccess, PipeCommit, PipePacket, PipeReserve, SampledImage, Select,
    SpecConstantOp, Store, Switch, Unary, Variable, VectorExtractDynamic, VectorInsertDynamic,
    VectorLoad, VectorShuffle, VectorStore,
};
pub use instruction_enqueue::{
    BlockQueryOperands, BlockRef, BuildNdRange, EnqueueKernel, EnqueueMarker,
};
pub use link::{
    itanium_name, link, provided_by_device, unresolved_imports, Linked, SpecValues,
    DEVICELIB_ASSERT_FAIL,
};
pub use metadata::{
    is_barrier_or_collective, is_device_enqueue_instruction, reaches, stops_work_items,
    synchronises_work_group, AccessQualifier, AddressQualifier, ArgKind, ImageType, KernelArg,
    KernelInfo, TypeQualifiers, VEC_TYPE_HINT_RECORD,
};
pub use module::{Module, Type, TypeId};
pub use parse::{is_spirv, parse, parse_for_device, parse_specialized, spec_constants};
pub use printf::{printf_call, PrintfArg, PrintfCall, PrintfConversion, PrintfFormat, PrintfPiece};
pub use rspirv;
pub use specialize::SpecConstantInfo;
pub use spirv;
pub use validate::{
    DeviceSupport, CAPABILITY_MIN_VERSION, MAX_NAMED_BARRIERS, SUPPORTED_CAPABILITIES,
    SUPPORTED_EXTENSIONS, SUPPORTED_EXT_INST_SETS,
};
pub use validate_types::{
    ATOMIC_SCOPES, FENCE_SCOPES, MAX_LOCAL_VARIABLE_BYTES, MAX_PROGRAM_SCOPE_VARIABLE_BYTES,
};
pub use view::{
    Block, DecorationRef, ExtInst, Function, ImageOperands, Inst, MemoryAccess, ViewError,
};
pub use words::{module_processed, with_module_processed, without_module_processed};

/// SPIR-V versions (major, minor) the frontend accepts; the device's `CL_DEVICE_IL_VERSION` and
/// `CL_DEVICE_ILS_WITH_VERSION` are derived from this list.
pub const SUPPORTED_SPIRV_VERSIONS: &[(u8, u8)] =
    &[(1, 0), (1, 1), (1, 2), (1, 3), (1, 4), (1, 5), (1, 6)];

#[cfg(test)]
mod tests;
