//! SPIR-V → Cranelift IR → machine code. For every kernel of a validated module this crate emits
//! one *work-group function* (see [`WorkGroupFn`]) that runs all work-items of a work-group in a
//! loop inside JIT code, with builtins inlined and math calls bound to `ferrocl-mathlib`.
//!
//! Nothing here knows about CL objects: the runtime hands in a [`ferrocl_frontend::Module`] and
//! [`BuildOptions`], and gets back a [`Program`] whose kernels it calls through [`Kernel::run_group`].

mod abi;
mod backend;
mod cfg;
mod checked;
mod device_enqueue;
mod devicelib_assert;
mod entry_points;
mod environment;
mod error;
mod half_rounding;
mod jit;
mod options;
mod pipe;
mod private_forward;
mod program;
mod serialize;
mod translate;
mod vector_pack;
mod vectorize;
mod watchdog;

pub use abi::{
    sampler, sub_group_size_of, ArgSlot, GroupInfo, ImageDescriptor, ImageGeometry, MipLevel,
    SamplerDescriptor, WorkGroupFn, LOCAL_ARG_ALIGN, MAX_MIP_LEVELS, PRINTF_BUFFER_HEADER,
    PRINTF_RECORD_HEADER, SUB_GROUP_SIZE, SUB_GROUP_SIZES,
};
pub use checked::{CheckKind, CheckSite, CheckedLaunch, Fault};
pub use device_enqueue::{
    BlockQuery, DeviceEnqueueContext, DeviceEnqueueHost, KernelEnqueue, NdRange,
    CLK_DEVICE_QUEUE_FULL, CLK_ENQUEUE_FAILURE, CLK_ENQUEUE_FLAGS_NO_WAIT,
    CLK_ENQUEUE_FLAGS_WAIT_KERNEL, CLK_ENQUEUE_FLAGS_WAIT_WORK_GROUP, CLK_EVENT_ALLOCATION_FAILURE,
    CLK_INVALID_ARG_SIZE, CLK_INVALID_EVENT_WAIT_LIST, CLK_INVALID_NDRANGE, CLK_INVALID_QUEUE,
    CLK_OUT_OF_RESOURCES, CLK_PROFILING_COMMAND_EXEC_TIME, CLK_SUCCESS,
};
pub use options::{
    Backend, BuildOptions, ImageKey, Specialization, Target, MATH_FALLBACK_MARKER,
    MATH_FALLBACK_MARKER_F64,
};
pub use pipe::{Pipe, PipeEnd, INVALID_RESERVE_ID};

/// Private memory one work-item of a kernel may use on the stack (the sum of its
/// function-storage variables kept in memory; a kernel with barriers keeps them in its heap
/// frame instead): a larger kernel fails to build with a log naming the variable. The threads
/// that run kernels have stacks of [`KERNEL_THREAD_STACK_BYTES`], and every JIT function whose
/// frame passes a page probes each page, so a frame can never skip the guard page below a stack
/// and write over what lies beyond it.
pub const PRIVATE_STACK_LIMIT: u64 = 16 << 20;

/// Stack size of the threads that run work-group functions: the private-memory limit, plus room
/// for the spill slots and calls of a kernel and the runtime frames below it.
pub const KERNEL_THREAD_STACK_BYTES: usize = (PRIVATE_STACK_LIMIT as usize) + (16 << 20);
pub use program::{
    compile, BarrierSchedule, BuildError, Kernel, ModuleSource, Program, Vectorization,
};
pub use serialize::{code_identity, CRANELIFT_VERSION};
