//! The driver used when an application's thread-locals are gone: a C program (compiled here
//! with gcc, run through the loader) builds and runs a kernel in `main` and again in an
//! `atexit` handler, which runs after the main thread's thread-local destructors. Both must
//! work, with nothing on stderr.

mod common;

use std::process::Command;

#[test]
fn builds_and_launches_work_from_an_atexit_handler() {
    let icd = &common::target().icd;
    let dir = std::env::temp_dir().join(format!("ferrocl-lifecycle-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let exe = dir.join("atexit_build");
    let source = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/c/atexit_build.c");
    let gcc = Command::new("gcc")
        .args(["-std=c11", "-Wall", "-Werror", "-o"])
        .arg(&exe)
        .arg(&source)
        .arg("-lOpenCL")
        .output()
        .expect("gcc is installed");
    assert!(
        gcc.status.success(),
        "{}",
        String::from_utf8_lossy(&gcc.stderr)
    );
    let run = Command::new(&exe)
        .env("OCL_ICD_VENDORS", icd)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&run.stdout);
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(
        run.status.success(),
        "status {:?}\n{stdout}\n{stderr}",
        run.status
    );
    for when in ["main", "atexit"] {
        assert!(
            stdout.contains(&format!("{when}: build 0 run 0 read 0 out[5] 35")),
            "{stdout}\n{stderr}"
        );
    }
    assert!(!stderr.contains("panicked"), "{stderr}");
    std::fs::remove_dir_all(dir).ok();
}
