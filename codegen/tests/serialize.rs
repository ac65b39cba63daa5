//! The serialized form of a program (what the program cache keeps, src/serialize.rs): a
//! program loaded from it has the compiled program's kernels and metadata and computes the same
//! bits, at both recipes and in checked mode; a damaged or truncated form is refused or loads
//! without crashing — never a panic, an abort or a wild write.

mod common;

use common::*;
use ferrocl_codegen::{compile, BuildError, BuildOptions, Program};

/// The kernels of tests/kernels/serialize.cl, compiled and serialized with `options`.
fn compiled(recipe: Recipe, options: &BuildOptions) -> (Vec<u8>, Program, Vec<u8>) {
    let spirv = spirv_from_c("serialize.cl", recipe, CL2_0);
    let module = ferrocl_frontend::parse(&spirv).unwrap_or_else(|e| panic!("frontend: {e}"));
    let mut program = compile(&module, options).unwrap_or_else(|e| panic!("codegen: {e}"));
    let bytes = program
        .take_serialized()
        .expect("a serializable build keeps its serialized form")
        .unwrap_or_else(|e| panic!("not serialized: {e}"));
    assert!(program.take_serialized().is_none(), "taken once");
    (spirv, program, bytes)
}

fn parser(spirv: Vec<u8>) -> ferrocl_codegen::ModuleSource {
    Box::new(move || ferrocl_frontend::parse(&spirv).map_err(|e| BuildError::new(e.log())))
}

fn serializable() -> BuildOptions {
    BuildOptions {
        serializable: true,
        ..default_options()
    }
}

fn assert_same_kernels(a: &Program, b: &Program) {
    assert_eq!(a.kernels().len(), b.kernels().len());
    assert_eq!(a.global_variable_bytes, b.global_variable_bytes);
    assert_eq!(a.data_regions.len(), b.data_regions.len());
    for (x, y) in a.kernels().iter().zip(b.kernels()) {
        let name = &x.info.name;
        assert_eq!(x.info, y.info, "{name}");
        assert_eq!(x.args, y.args, "{name}");
        assert_eq!(x.args_size, y.args_size, "{name}");
        assert_eq!(x.static_local_mem_size, y.static_local_mem_size, "{name}");
        assert_eq!(x.private_mem_size, y.private_mem_size, "{name}");
        assert_eq!(x.instruction_count, y.instruction_count, "{name}");
        assert_eq!(x.work_item_frame_size, y.work_item_frame_size, "{name}");
        assert_eq!(x.barrier_schedule, y.barrier_schedule, "{name}");
        assert_eq!(x.vectorization, y.vectorization, "{name}");
        assert_eq!(x.printf_formats, y.printf_formats, "{name}");
        assert_eq!(x.checked, y.checked, "{name}");
        assert_eq!(x.check_sites, y.check_sites, "{name}");
    }
}

/// The output buffers of the runnable kernels of serialize.cl, run on `program`.
fn outputs(program: &Program) -> Vec<Vec<u8>> {
    let n = 256u64;
    let mut rng = Rng(7);
    let floats: Vec<f32> = (0..n)
        .map(|_| (rng.next() % 20000) as f32 / 1000.0 - 10.0)
        .collect();
    let words: Vec<u32> = (0..n).map(|_| rng.next() as u32).collect();
    let mut results = Vec::new();

    let mut input = bytes_of(&floats);
    let mut out = vec![0u8; n as usize * 4];
    launch(
        program,
        "math",
        &mut [Arg::Buf(&mut input), Arg::Buf(&mut out)],
        n,
        16,
    );
    results.push(out);

    let mut out = vec![0u8; n as usize * 4];
    launch(program, "globals", &mut [Arg::Buf(&mut out)], n, 8);
    results.push(out);

    let mut out = vec![0u8; n as usize / 64 * 4];
    launch(
        program,
        "reduce",
        &mut [Arg::Buf(&mut input), Arg::Buf(&mut out)],
        n,
        64,
    );
    results.push(out);

    let mut input = bytes_of(&words);
    let mut out = vec![0u8; n as usize * 4];
    launch(
        program,
        "loops",
        &mut [
            Arg::Buf(&mut input),
            Arg::Buf(&mut out),
            Arg::Val(9u32.to_ne_bytes().to_vec()),
        ],
        n - 3,
        1,
    );
    results.push(out);
    results
}

#[test]
fn a_loaded_program_is_the_compiled_one() {
    for recipe in RECIPES {
        let (spirv, compiled, bytes) = compiled(recipe, &serializable());
        let loaded = Program::load(&bytes, &serializable(), parser(spirv))
            .unwrap_or_else(|e| panic!("{recipe:?}: {e}"));
        assert_same_kernels(&compiled, &loaded);
        let expected = outputs(&compiled);
        assert_eq!(outputs(&loaded), expected, "{recipe:?}");
        // Relocations are applied per load: a second load in the same process is separate
        // code and data, and computes the same.
        let again = Program::load(&bytes, &serializable(), parser(Vec::new())).unwrap();
        assert_ne!(again.data_regions, loaded.data_regions);
        assert_eq!(outputs(&again), expected, "{recipe:?}");
        // The large zero array is not stored as bytes.
        assert!(bytes.len() < 1 << 18, "{} bytes", bytes.len());
        // The image kernels' tables (8-bit texels, literal sampler records) are reached
        // through symbols, not their addresses in this process.
        for symbol in [&b"ferrocl_unorm8_table"[..], b"ferrocl_literal_samplers"] {
            assert!(
                bytes.windows(symbol.len()).any(|w| w == symbol),
                "{recipe:?}: {}",
                String::from_utf8_lossy(symbol)
            );
        }
    }
}

#[test]
fn checked_kernels_keep_their_checks() {
    let options = BuildOptions {
        checked: true,
        ..serializable()
    };
    let (spirv, compiled, bytes) = compiled(Recipe::Optimized, &options);
    let loaded = Program::load(&bytes, &options, parser(spirv)).unwrap();
    assert!(loaded.kernels().iter().all(|k| k.checked));
    assert!(loaded.kernels().iter().any(|k| !k.check_sites.is_empty()));
    assert_same_kernels(&compiled, &loaded);
}

#[test]
fn a_program_kernels_specialise_is_made_again_from_its_module() {
    use ferrocl_codegen::Specialization;
    let (spirv, _, bytes) = compiled(Recipe::Optimized, &serializable());
    let loaded = Program::load(&bytes, &serializable(), parser(spirv)).unwrap();
    // RGBA (SPIR-V ImageChannelOrder 5) of UnormInt8 (ImageChannelDataType 2).
    let spec = Specialization {
        kernel: "image".into(),
        images: vec![(
            0,
            ferrocl_codegen::ImageKey {
                order: 5,
                data_type: 2,
                mipmapped: false,
            },
        )],
        samplers: Vec::new(),
        backend: ferrocl_codegen::Backend::Cranelift,
    };
    let (specialised, built) = loaded
        .specialized(&spec)
        .expect("the image kernel can be specialised")
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(built);
    assert_eq!(specialised.kernels().len(), 1);
    assert_eq!(specialised.kernels()[0].info.name, "image");
    // A loaded program whose module cannot be made again says so at the specialisation.
    let broken = Program::load(&bytes, &serializable(), parser(b"not SPIR-V".to_vec())).unwrap();
    assert!(broken.specialized(&spec).unwrap().is_err());
}

#[test]
fn a_damaged_serialized_program_never_crashes_the_loader() {
    let (spirv, _, bytes) = compiled(Recipe::Optimized, &serializable());
    let load = |b: &[u8]| Program::load(b, &serializable(), parser(spirv.clone()));
    // Every cut is refused: the format knows where it ends.
    for len in (0..bytes.len()).step_by(13).chain([bytes.len() - 1]) {
        assert!(load(&bytes[..len]).is_err(), "cut to {len}");
    }
    let mut longer = bytes.clone();
    longer.push(0);
    assert!(load(&longer).is_err(), "a byte after the end");
    // Changed bytes anywhere: refused, or loaded (a change inside machine code or a value is
    // what the cache entry's digest catches) — but never a crash while loading.
    let mut refused = 0;
    for i in (0..bytes.len()).step_by(7) {
        for flip in [0x01u8, 0x80] {
            let mut bad = bytes.clone();
            bad[i] ^= flip;
            refused += usize::from(load(&bad).is_err());
        }
    }
    assert!(refused > 0);
}
