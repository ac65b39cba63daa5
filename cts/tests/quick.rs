//! A reduced quick run of the math checker through the loader, as part of `cargo test`: a few
//! functions of each kind with a few thousand random inputs (seconds), against the libferrocl.so
//! of this workspace's target directory.

use ferrocl_cts::check::{self, Options};
use ferrocl_cts::ulp::{F16, F32, F64};
use ferrocl_cts::{cl, funcs};
use std::path::PathBuf;

/// The most recently built driver of this workspace: `cargo test --workspace` builds the cdylib
/// into `target/<profile>/deps/`; `cargo build` copies it up to `target/<profile>/`.
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
fn quick_math_subset_is_within_bounds() {
    let Some(lib) = driver() else {
        // `cargo test --workspace` builds the cdylib first; `-p ferrocl-cts` alone may not.
        eprintln!("SKIPPED: no target/*/libferrocl.so; build ferrocl-icd first");
        return;
    };
    // SAFETY: set before any thread of this test binary loads the OpenCL loader; this is the
    // only test in the binary.
    std::env::set_var("OCL_ICD_VENDORS", lib.canonicalize().unwrap());
    let dev = cl::Device::open("ferrocl").expect("Ferrocl platform");
    let opts = Options {
        random: 4096,
        ..Options::default()
    };
    let mut failed = Vec::new();
    for (name, fmt) in [
        ("sin", F32),
        ("sinpi", F32),
        ("tanpi", F32),
        ("exp", F32),
        ("log", F64),
        ("pow", F32),
        ("atan2pi", F32),
        ("divide", F32),
        ("divide", F64),
        ("sqrt", F32),
        ("fma", F32),
        ("mad", F32),
        ("fmin", F32),
        ("half_exp", F32),
        // Functions with a second result through a pointer, and integer arguments.
        ("frexp.exp", F32),
        ("fract", F32),
        ("sincos.cos", F64),
        ("remquo.quo", F32),
        ("lgamma_r.sign", F32),
        ("ilogb", F64),
        ("rootn", F32),
        // Half (cl_khr_fp16): unary functions on every half.
        ("sin", F16),
        ("exp", F16),
        ("log", F16),
        ("sqrt", F16),
        ("pow", F16),
        ("divide", F16),
        ("fma", F16),
        ("mad", F16),
        ("nextafter", F16),
    ] {
        let f = funcs::by_name(name).unwrap();
        let row = check::check(&dev, f, fmt, &opts);
        println!("{}", check::row_text(&row));
        if !row.ok() {
            failed.push(check::row_text(&row));
        }
    }
    assert!(failed.is_empty(), "{}", failed.join("\n"));
}
