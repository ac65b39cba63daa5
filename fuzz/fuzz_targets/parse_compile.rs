//! Fuzz target: untrusted bytes through `frontend::parse`, then `codegen::compile` on whatever
//! the frontend accepts. A crash is any panic (libfuzzer-sys aborts on panics even when codegen
//! catches them), a hang, an allocation past libFuzzer's `-rss_limit_mb`, or a module the
//! frontend accepted that codegen then refuses for a reason validation should have caught
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

/// Known codegen issue (README "Findings"): large program-scope data can land beyond the
/// ±2 GiB reach of cranelift-jit's PC-relative relocations, which then panic. Such modules are
/// only parsed, so the run keeps looking for new problems.
fn has_large_program_scope_data(m: &ferrocl_frontend::Module) -> bool {
    use ferrocl_frontend::{spirv::Op, Type};
    m.raw.types_global_values.iter().any(|inst| {
        inst.class.opcode == Op::Variable
            && matches!(
                inst.result_type.and_then(|t| m.ty(t)),
                Some(Type::Pointer { pointee, .. })
                    if m.size_of(*pointee).is_none_or(|s| s > 1 << 20)
            )
    })
}

fuzz_target!(|data: &[u8]| {
    let Ok(module) = ferrocl_frontend::parse(data) else {
        return;
    };
    if has_large_program_scope_data(&module) {
        return;
    }
    if let Err(e) = ferrocl_codegen::compile(&module, &ferrocl_codegen::BuildOptions::default()) {
        let log = e.log;
        assert!(
            !VALIDATION_GAPS.iter().any(|gap| log.contains(gap)),
            "the frontend accepted a module codegen could not handle safely:\n{log}"
        );
    }
});
