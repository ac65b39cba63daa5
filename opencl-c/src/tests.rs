//! Helpers for the unit tests that compare the recipe run by the LLVM libraries with the tools run
//! as processes.

/// clang-15's arguments for the `-O0` bitcode the recipe starts from (OpenCL C 2.0), before
/// the input and output: what the tests of the tools compare against the processes.
pub(crate) fn clang_o0_args() -> Vec<&'static str> {
    let mut args = vec!["-cl-std=CL2.0"];
    args.extend(crate::opencl_c::CLANG_O0_OPTIONS);
    args.push("-c");
    args
}

/// `program args...` with `input` on its stdin: its stdout; panics unless it succeeds.
pub(crate) fn tool(program: &str, args: &[&str], input: &[u8]) -> Vec<u8> {
    use std::io::Write;
    let mut child = std::process::Command::new(program)
        .args(args)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("{program}: {e}"));
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(input)
        .expect("input");
    let out = child.wait_with_output().expect("output");
    assert!(out.status.success(), "{program} {args:?} failed");
    out.stdout
}
