//! Kernels of one module are compiled by Cranelift on several threads at once
//! (`BuildOptions::threads`): every kernel gets the same machine code, vectorisation and
//! dumps as when they are compiled one at a time.

mod common;

use common::*;
use ferrocl_codegen::{compile, BuildOptions};

#[test]
fn kernels_compiled_in_parallel_get_the_code_of_a_serial_build() {
    let spirv = spirv_from_c("vectorize.cl", Recipe::Optimized, common::CL1_2);
    let module = ferrocl_frontend::parse(&spirv).unwrap_or_else(|e| panic!("frontend: {e}"));
    assert!(module.kernels.len() > 4, "a module with several kernels");
    let base = std::env::temp_dir().join(format!("ferrocl-parallel-{}", std::process::id()));
    let mut dumps = Vec::new();
    for threads in [1, 4] {
        let dir = base.join(threads.to_string());
        std::fs::create_dir_all(&dir).unwrap();
        let options = BuildOptions {
            threads,
            dump_dir: Some(dir.clone()),
            ..BuildOptions::default()
        };
        let program = compile(&module, &options).unwrap_or_else(|e| panic!("codegen: {e}"));
        let shapes: Vec<String> = program
            .kernels()
            .iter()
            .map(|k| format!("{} {:?}", k.info.name, k.vectorization))
            .collect();
        let mut files: Vec<(String, String)> = std::fs::read_dir(&dir)
            .unwrap()
            .flatten()
            .map(|e| {
                let name = e.file_name().to_string_lossy().into_owned();
                (name, std::fs::read_to_string(e.path()).unwrap())
            })
            .collect();
        files.sort();
        assert_eq!(
            files.iter().filter(|(n, _)| n.ends_with(".s")).count(),
            module.kernels.len()
        );
        dumps.push((shapes, files));
    }
    let _ = std::fs::remove_dir_all(&base);
    assert_eq!(dumps[0].0, dumps[1].0);
    for (serial, parallel) in dumps[0].1.iter().zip(&dumps[1].1) {
        assert_eq!(serial, parallel, "{}", serial.0);
    }
}
