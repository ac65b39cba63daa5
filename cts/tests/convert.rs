//! The conversion checker in sampled mode as part of `cargo test`: every conversion from int,
//! uint and float to every integer and floating-point type with every rounding mode and
//! saturation, on the special values and 2^20 random inputs per source type (about 3 million
//! inputs, 10 variants each), through the loader against this workspace's libferrocl.so.
//! The full 2^32 run is `ferrocl-cts convert --full` (docs/math-accuracy.md).

use ferrocl_cts::{cl, convert};
use std::path::PathBuf;

/// The most recently built driver of this workspace (see quick.rs).
fn driver() -> Option<PathBuf> {
    let target = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../target");
    ["debug", "release"]
        .iter()
        .flat_map(|p| {
            [
                target.join(p).join("deps/libferrocl.so"),
                target.join(p).join("libferrocl.so"),
            ]
        })
        .filter_map(|p| Some((p.metadata().ok()?.modified().ok()?, p)))
        .max()
        .map(|(_, p)| p)
}

#[test]
fn sampled_conversions_are_exact() {
    let Some(lib) = driver() else {
        eprintln!("SKIPPED: no target/*/libferrocl.so; build ferrocl-icd first");
        return;
    };
    // SAFETY: set before any thread of this test binary loads the OpenCL loader; this is the
    // only test in the binary.
    std::env::set_var("OCL_ICD_VENDORS", lib.canonicalize().unwrap());
    let dev = cl::Device::open("ferrocl").expect("Ferrocl platform");
    let mut failures = Vec::new();
    let mut judged = 0;
    for src in convert::Source::ALL {
        for dest in convert::DESTS {
            if dest.name == "double" && !dev.has_double {
                continue;
            }
            let mut inputs = convert::sampled_inputs(src, 1 << 20, 0x5EED, 1 << 20);
            let r = convert::check_pair(&dev, src, dest, &mut inputs, None).expect("kernel runs");
            judged += r.judged;
            if r.failures > 0 {
                failures.push(format!(
                    "{} -> {}: {} failures, e.g. {:?}",
                    src.name(),
                    dest.name,
                    r.failures,
                    r.examples
                ));
            }
        }
    }
    println!("{judged} conversion results judged");
    assert!(judged > 100_000_000, "too few results judged: {judged}");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
