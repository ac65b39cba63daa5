//! libferrocl.so: the OpenCL C API of Ferrocl as an ICD for the system loader. Every entry point
//! checks and converts its C arguments and calls the runtime; the dispatch table has every slot
//! filled; unsupported features return the spec's error.
//!
//! Exported symbols: `clIcdGetPlatformIDsKHR`, `clGetExtensionFunctionAddress`,
//! `clGetExtensionFunctionAddressForPlatform` (what the ICD loader looks up); everything else is
//! reached through the dispatch table.

pub mod api;
mod dispatch;
mod unsupported;
mod util;

pub use dispatch::DISPATCH;
