//! The wide backend (src/backend/): where LLVM is available, a simple kernel really gets the
//! wide backend's code (no silent fallback to Cranelift), gives the bits Cranelift's code
//! gives, survives the serialized form (the machine-code cache) with its backend recorded, and
//! a refusal (round-to-zero) falls back to Cranelift with its reason.

mod common;

use common::*;
use ferrocl_codegen::{Backend, BuildError, BuildOptions, Program};

fn build(recipe: Recipe, options: &BuildOptions) -> Program {
    let spirv = spirv_from_c("wide_backend.cl", recipe, CL1_2);
    let module = ferrocl_frontend::parse(&spirv).unwrap_or_else(|e| panic!("frontend: {e}"));
    compile(&module, options).unwrap_or_else(|e| panic!("codegen: {e}"))
}

fn wide() -> BuildOptions {
    BuildOptions {
        backend: Backend::Wide,
        ..BuildOptions::default()
    }
}

fn cranelift() -> BuildOptions {
    BuildOptions {
        backend: Backend::Cranelift,
        ..BuildOptions::default()
    }
}

/// Every kernel's output for fixed inputs, at a local size that leaves a partial vector.
fn outputs(p: &Program) -> Vec<Vec<u8>> {
    let n = 203usize;
    let mut rng = Rng(7);
    let x: Vec<f32> = (0..n)
        .map(|_| (rng.next() % 20001) as f32 / 200.0 - 50.0)
        .collect();
    let ints: Vec<i32> = (0..n).map(|_| rng.next() as i32).collect();
    let mut out = Vec::new();

    let mut y = bytes_of(&(0..n).map(|i| i as f32 * 0.25).collect::<Vec<f32>>());
    let mut xb = bytes_of(&x);
    let a = bytes_of(&[1.75f32]);
    launch(
        p,
        "saxpy",
        &mut [Arg::Buf(&mut y), Arg::Buf(&mut xb), Arg::Val(a)],
        n as u64,
        37,
    );
    out.push(y);

    let mut steps = vec![0u8; n * 4];
    launch(p, "collatz", &mut [Arg::Buf(&mut steps)], n as u64, 64);
    out.push(steps);

    let mut r = vec![0u8; n * 4];
    let mut inb = bytes_of(&ints);
    launch(
        p,
        "cases",
        &mut [Arg::Buf(&mut r), Arg::Buf(&mut inb)],
        n as u64,
        16,
    );
    out.push(r);
    out
}

#[test]
fn a_simple_kernel_gets_wide_code_with_cranelift_s_results() {
    assert!(
        ferrocl_opencl_c::wide_backend_available(),
        "libLLVM-15 and the LLVM server must be available here"
    );
    for recipe in RECIPES {
        let wide = build(recipe, &wide());
        let saxpy = wide.kernel("saxpy").expect("saxpy");
        assert_eq!(
            saxpy.backend(),
            Backend::Wide,
            "saxpy ({recipe:?}) fell back to Cranelift: {:?}",
            saxpy.wide_refusal()
        );
        let reference = build(recipe, &cranelift());
        for k in reference.kernels() {
            assert_eq!(k.backend(), Backend::Cranelift);
            assert_eq!(k.wide_refusal(), None);
        }
        assert_eq!(outputs(&wide), outputs(&reference), "{recipe:?}");
    }
}

#[test]
fn wide_code_survives_the_serialized_form() {
    let options = BuildOptions {
        serializable: true,
        ..wide()
    };
    let mut built = build(Recipe::Optimized, &options);
    let bytes = built
        .take_serialized()
        .expect("kept")
        .unwrap_or_else(|e| panic!("not serialized: {e}"));
    let spirv = spirv_from_c("wide_backend.cl", Recipe::Optimized, CL1_2);
    let parse: ferrocl_codegen::ModuleSource =
        Box::new(move || ferrocl_frontend::parse(&spirv).map_err(|e| BuildError::new(e.log())));
    let loaded = Program::load(&bytes, &options, parse).unwrap_or_else(|e| panic!("{e}"));
    for (a, b) in built.kernels().iter().zip(loaded.kernels()) {
        assert_eq!(a.backend(), b.backend(), "{}", a.info.name);
        assert_eq!(a.wide_refusal(), b.wide_refusal(), "{}", a.info.name);
        assert_eq!(a.spill_mem_size, b.spill_mem_size, "{}", a.info.name);
    }
    assert_eq!(
        loaded.kernel("saxpy").map(|k| k.backend()),
        Some(Backend::Wide)
    );
    assert_eq!(outputs(&loaded), outputs(&built));
}

#[test]
fn round_to_zero_is_refused_with_its_reason() {
    let options = BuildOptions {
        round_to_zero: true,
        ..wide()
    };
    let p = build(Recipe::Optimized, &options);
    for k in p.kernels() {
        assert_eq!(k.backend(), Backend::Cranelift);
        let why = k.wide_refusal().expect("a reason");
        assert!(why.contains("toward zero"), "{why}");
    }
}
