//! ferrocl-cts: Ferrocl's own conformance checks, run through the installed OpenCL loader.
//! Today: the math brute-force ULP checker modelled on the CTS's math_brute_force.

pub mod check;
pub mod cl;
pub mod funcs;
pub mod inputs;
pub mod reference;
pub mod ulp;
