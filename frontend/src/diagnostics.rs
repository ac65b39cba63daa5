//! Errors the frontend reports: one `Diagnostic` per broken rule, rendered as build-log lines
//! that name the rule, the instruction and (when the module says) the source location.

use std::fmt;

/// One problem found in a module.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Diagnostic {
    /// The rule broken, with its spec section where there is one
    /// (e.g. "env 4.1: Physical32 addressing is not supported by this 64-bit device").
    pub rule: String,
    /// The offending instruction, as "OpName %id" or "OpName" (may be empty for header problems).
    pub instruction: String,
    /// Word offset of the instruction in the module, when known.
    pub word_offset: Option<usize>,
    /// Source name from `OpName`, if the offending id has one.
    pub source_name: Option<String>,
    /// Source file and line from the `OpLine` in effect at the instruction, if any.
    pub source_line: Option<(String, u32)>,
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "error: {}", self.rule)?;
        match (self.instruction.is_empty(), self.word_offset) {
            (false, Some(off)) => write!(f, " [{} at word {off}]", self.instruction)?,
            (false, None) => write!(f, " [{}]", self.instruction)?,
            (true, Some(off)) => write!(f, " [at word {off}]")?,
            (true, None) => {}
        }
        if let Some(name) = &self.source_name {
            write!(f, " (source name '{name}')")?;
        }
        if let Some((file, line)) = &self.source_line {
            write!(f, " ({file}:{line})")?;
        }
        Ok(())
    }
}

/// Why a module was refused.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FrontendError {
    /// The bytes are not a SPIR-V module at all (`clCreateProgramWithIL` → `CL_INVALID_VALUE`).
    NotSpirv(String),
    /// A SPIR-V module that breaks rules (`clBuildProgram` → `CL_BUILD_PROGRAM_FAILURE`).
    Invalid(Vec<Diagnostic>),
}

impl FrontendError {
    pub fn invalid(rule: impl Into<String>, instruction: impl Into<String>) -> Self {
        FrontendError::Invalid(vec![Diagnostic {
            rule: rule.into(),
            instruction: instruction.into(),
            word_offset: None,
            source_name: None,
            source_line: None,
        }])
    }

    /// The build log text: one line per problem.
    pub fn log(&self) -> String {
        match self {
            FrontendError::NotSpirv(why) => format!("error: not a SPIR-V module: {why}\n"),
            FrontendError::Invalid(diags) => diags.iter().map(|d| format!("{d}\n")).collect(),
        }
    }
}

impl fmt::Display for FrontendError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.log().trim_end())
    }
}

impl std::error::Error for FrontendError {}
