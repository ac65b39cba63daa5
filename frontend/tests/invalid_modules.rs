//! The invalid-module corpus: every `tests/invalid/*.spvasm` is assembled with Debian's
//! `spirv-as` and must be refused with exactly the build-log lines its `; expect:` comments
//! give (rule, instruction, word offset, source name/line). `; target-env:` picks the SPIR-V
//! version (default spv1.0). Files named `valid-*.spvasm` must be accepted instead.

use std::path::{Path, PathBuf};
use std::process::Command;

fn spirv_as_available() -> bool {
    Command::new("spirv-as").arg("--version").output().is_ok()
}

fn assemble(src: &Path, env: &str) -> Vec<u8> {
    let out = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!(
        "{}.spv",
        src.file_stem().unwrap().to_string_lossy()
    ));
    let res = Command::new("spirv-as")
        .args(["--target-env", env])
        .arg(src)
        .arg("-o")
        .arg(&out)
        .output()
        .expect("run spirv-as");
    assert!(
        res.status.success(),
        "spirv-as failed on {}:\n{}",
        src.display(),
        String::from_utf8_lossy(&res.stderr)
    );
    std::fs::read(&out).expect("read assembled module")
}

#[test]
fn invalid_modules_give_their_exact_errors() {
    if !spirv_as_available() {
        eprintln!("SKIPPED: spirv-as is not installed (Debian package spirv-tools)");
        return;
    }
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/invalid");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("tests/invalid")
        .map(|e| e.expect("dir entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "spvasm"))
        .collect();
    files.sort();
    assert!(files.len() >= 20, "the corpus shrank: {}", files.len());
    let mut failures = Vec::new();
    for file in &files {
        let text = std::fs::read_to_string(file).expect("read corpus file");
        let comment = |key: &str| -> Vec<String> {
            text.lines()
                .filter_map(|l| l.strip_prefix(key))
                .map(|l| l.trim().to_owned())
                .collect()
        };
        let env = comment("; target-env:")
            .pop()
            .unwrap_or_else(|| "spv1.0".into());
        let expected = comment("; expect:");
        let name = file.file_name().unwrap().to_string_lossy().into_owned();
        let bytes = assemble(file, &env);
        match ferrocl_frontend::parse(&bytes) {
            Ok(_) if name.starts_with("valid-") => {}
            Ok(_) => failures.push(format!("{name}: accepted, expected {expected:?}")),
            Err(e) if name.starts_with("valid-") => {
                failures.push(format!("{name}: refused:\n{}", e.log()))
            }
            Err(e) => {
                let log = e.log();
                let lines: Vec<&str> = log.lines().collect();
                if expected.is_empty() {
                    failures.push(format!("{name}: no '; expect:' line; log:\n{log}"));
                }
                for want in &expected {
                    if !lines.contains(&want.as_str()) {
                        failures.push(format!("{name}: missing line\n  {want}\nlog:\n{log}"));
                    }
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}
