//! Linker regressions from fuzzing: every module in `tests/link_inputs/` must link on its own
//! (each is a module the linker once mishandled, not one it should refuse) into a module the
//! frontend accepts again.
//!
//! - `debug-import-used-as-operand.bin` (libFuzzer crash a8309877, a mutated build of
//!   codegen/tests/kernels/conversions.cl): an instruction names the OpenCL.DebugInfo.100 import
//!   as an operand; the linker dropped debug-info imports, leaving the id undefined.

use std::collections::HashMap;
use std::path::Path;

#[test]
fn linked_modules_parse_again() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/link_inputs");
    let mut seen = 0;
    for entry in std::fs::read_dir(&dir).expect("tests/link_inputs") {
        let path = entry.unwrap().path();
        let bytes = std::fs::read(&path).unwrap();
        let none = HashMap::new();
        let linked = ferrocl_frontend::link(&[(bytes.as_slice(), &none)], true)
            .unwrap_or_else(|e| panic!("{}: linking fails:\n{}", path.display(), e.log()));
        if let Err(e) = ferrocl_frontend::parse(&linked.spirv) {
            panic!(
                "{}: the linked module no longer parses:\n{}",
                path.display(),
                e.log()
            );
        }
        seen += 1;
    }
    assert!(seen > 0, "no inputs in {}", dir.display());
}
