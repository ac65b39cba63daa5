//! Fuzz target: untrusted bytes through `frontend::parse`, then `codegen::compile` on whatever
//! the frontend accepts. A crash is any panic (libfuzzer-sys aborts on panics even when codegen
//! catches them), a hang, an allocation past libFuzzer's `-rss_limit_mb`, or a module the
//! frontend accepted that Cranelift's verifier or codegen's internal checks then refuse — that
//! is a validation gap in the frontend.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(module) = ferrocl_frontend::parse(data) else {
        return;
    };
    if let Err(e) = ferrocl_codegen::compile(&module, &ferrocl_codegen::BuildOptions::default()) {
        let log = e.log;
        assert!(
            !log.contains("Verifier") && !log.contains("internal:"),
            "the frontend accepted a module codegen could not handle safely:\n{log}"
        );
    }
});
