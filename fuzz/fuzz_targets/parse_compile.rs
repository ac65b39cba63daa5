//! Fuzz target: untrusted bytes through `frontend::parse` (which freezes specialization
//! constants) and `frontend::link`, then `codegen::compile` on whatever the frontend accepts,
//! unchecked and in checked mode.
//! A crash is any panic (libfuzzer-sys aborts on panics even when codegen catches them), a hang,
//! an allocation past libFuzzer's `-rss_limit_mb`, or a module the frontend accepted that codegen then refuses for a reason validation should have caught
//! (Cranelift's verifier, codegen's internal checks, or its double-checks of ids and shapes).
#![no_main]

use libfuzzer_sys::fuzz_target;

/// Codegen messages that mean "the frontend let through something malformed". Feature gaps
/// ("not supported") and resource limits are not in this list.
const VALIDATION_GAPS: &[&str] = &[
    "Verifier",
    "internal:",
    "has no value here",
    "has no type",
    "has no result type",
    "is not a pointer",
    "out of range",
    "is missing operand",
    "is not a function of this module",
    "is not a constant",
    "is not a vector",
    "has no size",
    "unsized type",
    "cannot index into",
];

fuzz_target!(|data: &[u8]| {
    // The linker on one input: whatever it accepts must link into a module the frontend
    // accepts again (ids, types and sections stay consistent).
    let no_values = std::collections::HashMap::new();
    if let Ok(linked) = ferrocl_frontend::link(&[(data, &no_values)], true) {
        if let Err(e) = ferrocl_frontend::parse(&linked.spirv) {
            panic!("a linked module no longer parses:\n{}", e.log());
        }
    }
    let Ok(module) = ferrocl_frontend::parse(data) else {
        return;
    };
    // Plain and checked mode (FERROCL_CHECKED): checked kernels have a check in front of every
    // access and division, and their own barrier rounds.
    for checked in [false, true] {
        let options = ferrocl_codegen::BuildOptions {
            checked,
            ..Default::default()
        };
        if let Err(e) = ferrocl_codegen::compile(&module, &options) {
            let log = e.log;
            assert!(
                !VALIDATION_GAPS.iter().any(|gap| log.contains(gap)),
                "the frontend accepted a module codegen could not handle safely \
                 (checked: {checked}):\n{log}"
            );
        }
    }
});
