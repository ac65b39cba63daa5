//! ferrocl-cts: Ferrocl's own conformance checks, run through the installed OpenCL loader.
//! The math brute-force ULP checker modelled on the CTS's math_brute_force, and the exhaustive
//! conversion checker (`convert`).

pub mod check;
pub mod cl;
pub mod convert;
pub mod funcs;
pub mod inputs;
pub mod reference;
pub mod relaxed;
pub mod ulp;
