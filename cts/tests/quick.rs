//! A reduced quick run of the math checker through the loader, as part of `cargo test`: a few
//! functions of each kind with a few thousand random inputs (seconds), then a few under
//! -cl-fast-relaxed-math (table 7), against the libferrocl.so of this workspace's target
//! directory.

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
        // The device reports CL_FP_CORRECTLY_ROUNDED_DIVIDE_SQRT: float divide and sqrt are
        // built with -cl-fp32-correctly-rounded-divide-sqrt and held to half an ulp.
        if fmt == F32 && matches!(name, "divide" | "sqrt") {
            assert!(dev.cr_divide_sqrt_f32);
            assert_eq!(row.bound, funcs::CR, "{name}");
        }
    }
    // -cl-fast-relaxed-math: table 7 (absolute, input-dependent and derived bounds).
    let relaxed = Options {
        build_options: "-cl-fast-relaxed-math".into(),
        ..opts
    };
    for name in ["sin", "exp", "log", "pow", "tan", "divide", "acosh"] {
        let f = funcs::by_name(name).unwrap();
        let row = check::check(&dev, f, F32, &relaxed);
        println!("{}", check::row_text(&row));
        assert!(row.bound_note.is_some(), "{name} has a table 7 rule");
        if !row.ok() {
            failed.push(check::row_text(&row));
        }
    }
    // One pass for functions sharing the reference and every input gives each the row of its
    // own pass (the time apart).
    let (sin, sincos) = (
        funcs::by_name("sin").unwrap(),
        funcs::by_name("sincos").unwrap(),
    );
    assert!(check::shares_pass(sin, sincos, F16, &opts));
    let together = check::check_together(&dev, &[sin, sincos], F16, &opts);
    for (row, f) in together.iter().zip([sin, sincos]) {
        let alone = check::check(&dev, f, F16, &opts);
        assert_eq!(row.func, f.name);
        assert!(
            row.tested > 1 << 16 && alone.tested == row.tested,
            "{}",
            f.name
        );
        assert_eq!(row.max_ulp.to_bits(), alone.max_ulp.to_bits(), "{}", f.name);
        assert_eq!(
            (
                &row.worst,
                row.fails,
                row.edge_fails,
                row.vec_mismatch,
                &row.status
            ),
            (
                &alone.worst,
                alone.fails,
                alone.edge_fails,
                alone.vec_mismatch,
                &alone.status
            ),
            "{}",
            f.name
        );
    }
    assert!(failed.is_empty(), "{}", failed.join("\n"));
}
