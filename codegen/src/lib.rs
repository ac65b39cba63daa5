//! SPIR-V → Cranelift IR → machine code. For every kernel of a validated module this crate emits
//! one *work-group function* (see [`WorkGroupFn`]) that runs all work-items of a work-group in a
//! loop inside JIT code, with builtins inlined and math calls bound to `ferrocl-mathlib`.
//!
//! Nothing here knows about CL objects: the runtime hands in a [`ferrocl_frontend::Module`] and
//! [`BuildOptions`], and gets back a [`Program`] whose kernels it calls through [`Kernel::run_group`].

mod abi;
mod options;
mod program;
mod translate;
mod vectorize;

pub use abi::{
    ArgSlot, GroupInfo, WorkGroupFn, LOCAL_ARG_ALIGN, PRINTF_BUFFER_HEADER, PRINTF_RECORD_HEADER,
    SUB_GROUP_SIZE,
};
pub use options::BuildOptions;
pub use program::{compile, BarrierSchedule, BuildError, Kernel, Program, Vectorization};
