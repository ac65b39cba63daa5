//! Module translation entry point.

use ferrocl_frontend::Module;

use crate::options::BuildOptions;
use crate::program::{BuildError, Program};

pub(crate) fn compile_module(
    _module: &Module,
    _options: &BuildOptions,
) -> Result<Program, BuildError> {
    Err(BuildError::new(
        "error: codegen is not implemented yet on this branch\n",
    ))
}
