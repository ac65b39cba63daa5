//! The typed decode of the device-side enqueue instructions (SPIR-V 3.52.24), as
//! instruction.rs decodes the others: named operands, checked as [`Inst::id`] checks them.

use spirv::{Op, Word};

use crate::view::{Inst, ViewError};

/// A block as the enqueue and query instructions name it: the function that runs it and its
/// literal (a `Generic` pointer, its size and alignment).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BlockRef {
    pub invoke: Word,
    pub param: Word,
    pub param_size: Word,
    pub param_align: Word,
}

/// `OpEnqueueKernel`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EnqueueKernel {
    pub queue: Word,
    pub flags: Word,
    /// An `ndrange_t`: the value `OpBuildNDRange` made, or a pointer to one (llvm-spirv-15).
    pub ndrange: Word,
    pub num_events: Word,
    pub wait_events: Word,
    pub ret_event: Word,
    pub block: BlockRef,
    /// One per `Workgroup` pointer parameter of the block after its literal: the bytes each
    /// needs, an integer or a pointer to one (llvm-spirv-15).
    pub local_sizes: Vec<Word>,
}

/// `OpEnqueueMarker`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EnqueueMarker {
    pub queue: Word,
    pub num_events: Word,
    pub wait_events: Word,
    pub ret_event: Word,
}

/// `OpGetKernelWorkGroupSize`, `OpGetKernelPreferredWorkGroupSizeMultiple` (no range),
/// `OpGetKernelNDrangeSubGroupCount`, `OpGetKernelNDrangeMaxSubGroupSize`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BlockQueryOperands {
    pub ndrange: Option<Word>,
    pub block: BlockRef,
}

/// `OpBuildNDRange`: each operand a `size_t` or an array of 2 or 3 of them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BuildNdRange {
    pub global_size: Word,
    pub local_size: Word,
    pub global_offset: Word,
}

impl Inst<'_> {
    fn block_ref(self, first: usize) -> Result<BlockRef, ViewError> {
        Ok(BlockRef {
            invoke: self.id(first)?,
            param: self.id(first + 1)?,
            param_size: self.id(first + 2)?,
            param_align: self.id(first + 3)?,
        })
    }

    /// See [`EnqueueKernel`].
    pub fn enqueue_kernel(self) -> Result<EnqueueKernel, ViewError> {
        if self.opcode() != Op::EnqueueKernel {
            return Err(self.error("is not OpEnqueueKernel"));
        }
        Ok(EnqueueKernel {
            queue: self.id(0)?,
            flags: self.id(1)?,
            ndrange: self.id(2)?,
            num_events: self.id(3)?,
            wait_events: self.id(4)?,
            ret_event: self.id(5)?,
            block: self.block_ref(6)?,
            local_sizes: self.ids_from(10).collect::<Result<_, _>>()?,
        })
    }

    /// See [`EnqueueMarker`].
    pub fn enqueue_marker(self) -> Result<EnqueueMarker, ViewError> {
        if self.opcode() != Op::EnqueueMarker {
            return Err(self.error("is not OpEnqueueMarker"));
        }
        Ok(EnqueueMarker {
            queue: self.id(0)?,
            num_events: self.id(1)?,
            wait_events: self.id(2)?,
            ret_event: self.id(3)?,
        })
    }

    /// See [`BlockQueryOperands`].
    pub fn block_query(self) -> Result<BlockQueryOperands, ViewError> {
        match self.opcode() {
            Op::GetKernelWorkGroupSize | Op::GetKernelPreferredWorkGroupSizeMultiple => {
                Ok(BlockQueryOperands {
                    ndrange: None,
                    block: self.block_ref(0)?,
                })
            }
            Op::GetKernelNDrangeSubGroupCount | Op::GetKernelNDrangeMaxSubGroupSize => {
                Ok(BlockQueryOperands {
                    ndrange: Some(self.id(0)?),
                    block: self.block_ref(1)?,
                })
            }
            _ => Err(self.error("is not a block query")),
        }
    }

    /// See [`BuildNdRange`].
    pub fn build_ndrange(self) -> Result<BuildNdRange, ViewError> {
        if self.opcode() != Op::BuildNDRange {
            return Err(self.error("is not OpBuildNDRange"));
        }
        Ok(BuildNdRange {
            global_size: self.id(0)?,
            local_size: self.id(1)?,
            global_offset: self.id(2)?,
        })
    }
}
