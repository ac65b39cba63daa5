//! The OpenCL C driver: OpenCL C source → SPIR-V for the frontend's gate, by one recipe
//! (clang-15 at `-O0`, opt's passes, llvm-spirv-15; see `opencl_c.rs`) used by clBuildProgram,
//! `ferrocl-clc`, the tests and the benchmark.
//!
//! The tools run as libraries in an LLVM server forked from the application (`llvm_tools.rs`,
//! with the C++ shim `shim/llvm_tools.cpp` that build.rs compiles, and opt's passes through
//! LLVM's C API in `llvm_passes.rs`), so that an LLVM abort ends a build, not the application;
//! or as processes (`process_recipe.rs`) where the libraries are missing. The translator's
//! output is repaired before the frontend sees it (`translator_fixes.rs`).
//!
//! The wide backend's LLVM code generation (`llvm_codegen.rs`, [`compile_object`]) runs in the
//! same server, so codegen reaches LLVM through this crate too.

mod library_recipe;
mod llvm_codegen;
mod llvm_passes;
mod llvm_tools;
mod opencl_c;
mod options;
mod process_recipe;
mod translator_fixes;

pub use llvm_codegen::{compile_object, wide_backend_available, wide_code_identity};
pub use opencl_c::{
    compile_opencl_c, opencl_c_compiler_available, CompiledOpenClC, OpenClC, Prelude,
    OPENCL_C_TOOLS,
};
pub use options::{split_build_options, BuildRequest, MathOptions, Preprocessor, Refused};

#[cfg(test)]
mod tests;
