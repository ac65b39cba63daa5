//! Builds `shim/llvm_tools.cpp` (clang and llvm-spirv as libraries, see src/llvm_tools.rs) into
//! a shared object that this crate embeds and loads on its first OpenCL C build. Where the
//! LLVM 15 and SPIRV-LLVM-Translator development files are missing (scripts/setup.sh installs
//! them), the crate is built without it and runs clang and llvm-spirv as processes.

use std::path::Path;
use std::process::Command;

const SOURCE: &str = "shim/llvm_tools.cpp";
const INCLUDE: &str = "/usr/lib/llvm-15/include";
const LIBRARIES: &str = "/usr/lib/llvm-15/lib";
const NEEDED: [&str; 3] = [
    "/usr/lib/llvm-15/include/clang/Frontend/CompilerInstance.h",
    "/usr/include/LLVMSPIRVLib/LLVMSPIRVLib.h",
    "/usr/lib/llvm-15/lib/libclang-cpp.so",
];

fn main() {
    println!("cargo::rerun-if-changed={SOURCE}");
    println!("cargo::rerun-if-env-changed=CXX");
    println!("cargo::rustc-check-cfg=cfg(ferrocl_llvm_tools)");
    let out = std::env::var("OUT_DIR").expect("cargo sets OUT_DIR");
    let shared_object = Path::new(&out).join("libferrocl_llvm_tools.so");
    if let Some(missing) = NEEDED.iter().find(|p| !Path::new(p).exists()) {
        println!(
            "cargo::warning=OpenCL C builds will run clang and llvm-spirv as processes: \
             {missing} is missing (scripts/setup.sh installs libclang-15-dev, llvm-15-dev and \
             libllvmspirvlib-15-dev)"
        );
        return;
    }
    let compiler = std::env::var("CXX").unwrap_or_else(|_| "c++".to_owned());
    let status = Command::new(&compiler)
        .args(["-std=c++17", "-O2", "-fPIC", "-shared", "-fno-rtti", "-w"])
        .arg(format!("-I{INCLUDE}"))
        .arg(SOURCE)
        .arg("-o")
        .arg(&shared_object)
        .arg(format!("-L{LIBRARIES}"))
        .args([
            "-lclang-cpp",
            "-lLLVM-15",
            "-lLLVMSPIRVLib",
            "-Wl,--no-undefined",
            "-s",
        ])
        .status();
    match status {
        Ok(s) if s.success() => println!("cargo::rustc-cfg=ferrocl_llvm_tools"),
        Ok(s) => panic!("{compiler} {SOURCE} failed ({s})"),
        Err(e) => println!(
            "cargo::warning=OpenCL C builds will run clang and llvm-spirv as processes: \
             cannot run {compiler}: {e}"
        ),
    }
}
