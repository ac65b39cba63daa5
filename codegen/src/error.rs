//! Why a build failed: the error every stage of codegen returns, whose log is the program's
//! build log. Its own module so that translation, the environment and the JIT depend on it
//! without depending on the compiled program (`program.rs`), which depends on them.

use std::fmt;

/// Why a build failed; `log` is what `CL_PROGRAM_BUILD_LOG` shows (one line per problem).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BuildError {
    pub log: String,
    /// The build stopped because memory ran out (the JIT could not map memory for code or
    /// data), not because of the program: the runtime answers `CL_OUT_OF_HOST_MEMORY`.
    pub out_of_memory: bool,
}

impl BuildError {
    pub fn new(log: impl Into<String>) -> Self {
        BuildError {
            log: log.into(),
            out_of_memory: false,
        }
    }

    /// The build ran out of host memory during `step`.
    pub fn out_of_memory(step: &str) -> Self {
        BuildError {
            log: format!("error: out of host memory: {step}\n"),
            out_of_memory: true,
        }
    }

    /// A failure of the JIT module during `step` (a build-log line `problem: step: error`), or,
    /// when the module could not allocate, the build running out of host memory.
    pub fn jit(problem: &str, step: &str, e: &cranelift_module::ModuleError) -> Self {
        match e {
            cranelift_module::ModuleError::Allocation { .. } => {
                BuildError::out_of_memory(&format!("{step}: {e}"))
            }
            _ => BuildError::new(format!("{problem}: {step}: {e}\n")),
        }
    }
}

impl fmt::Display for BuildError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.log)
    }
}

impl std::error::Error for BuildError {}

/// An operand the module view could not read: its message is already a build-log line that
/// names the instruction, its result id and the operand.
impl From<ferrocl_frontend::ViewError> for BuildError {
    fn from(e: ferrocl_frontend::ViewError) -> Self {
        BuildError::new(e.0)
    }
}
