//! The implemented entry points, one module per object family (thin argument checking that
//! calls the runtime).
//!
//! Safety contract of every `extern "C"` function here: the pointers obey the OpenCL 3.0 spec
//! for that entry point (NULL or valid for the sizes given); handles are checked.
#![allow(clippy::missing_safety_doc)]

pub mod command_buffer;
pub mod context;
pub mod image;
pub mod kernel;
pub mod memory;
pub mod platform;
pub mod program;
pub mod queue;
pub mod semaphore;
pub mod svm;
pub mod unified_svm;
pub mod usm;

pub use context::*;
pub use image::*;
pub use kernel::*;
pub use memory::*;
pub use platform::*;
pub use program::*;
pub use queue::*;
pub use svm::*;
