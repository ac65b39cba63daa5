//! Reports frontend + codegen time for SPIR-V modules given on the command line, per 1 000
//! SPIR-V instructions (the build-speed target of the codegen issue is ≤ 10 ms per 1 000).
//!
//! `cargo run --release -p ferrocl-codegen --example build_time -- file.spv [more.spv …]`

use std::time::Instant;

use ferrocl_codegen::{compile, BuildOptions};

fn main() {
    let paths: Vec<String> = std::env::args().skip(1).collect();
    if paths.is_empty() {
        eprintln!("usage: build_time FILE.spv [FILE.spv …]");
        std::process::exit(2);
    }
    for path in paths {
        let bytes = match std::fs::read(&path) {
            Ok(b) => b,
            Err(e) => {
                eprintln!("{path}: {e}");
                std::process::exit(1);
            }
        };
        // Serially and with the kernels on every thread (BuildOptions::threads).
        let all = BuildOptions::default().threads;
        let settings = [false, true]
            .into_iter()
            .flat_map(|optimize| [(optimize, 1), (optimize, all)])
            .filter(|&(_, threads)| threads == 1 || all > 1);
        for (optimize, threads) in settings {
            let dump_dir = std::env::var_os("FERROCL_DUMP_DIR").map(Into::into);
            let options = BuildOptions {
                optimize,
                dump_dir,
                threads,
                ..BuildOptions::default()
            };
            let mut best = f64::INFINITY;
            let mut instructions = 0;
            for _ in 0..5 {
                let start = Instant::now();
                let module = match ferrocl_frontend::parse(&bytes) {
                    Ok(m) => m,
                    Err(e) => {
                        eprintln!("{path}: {e}");
                        std::process::exit(1);
                    }
                };
                let program = match compile(&module, &options) {
                    Ok(p) => p,
                    Err(e) => {
                        eprintln!("{path}: {e}");
                        std::process::exit(1);
                    }
                };
                best = best.min(start.elapsed().as_secs_f64());
                instructions = program
                    .kernels()
                    .iter()
                    .map(|k| k.instruction_count)
                    .sum::<usize>();
            }
            println!(
                "{path}: optimize={optimize} threads={threads} {instructions} instructions translated, build {:.2} ms, {:.2} ms per 1000 instructions",
                best * 1e3,
                best * 1e6 / instructions.max(1) as f64
            );
        }
    }
}
