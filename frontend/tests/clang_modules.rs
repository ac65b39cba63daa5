//! Real modules: OpenCL C kernels compiled by clang-15 + llvm-spirv-15 (SPIR-V 1.0 and 1.4,
//! -O0 and the optimising recipe, and -g with OpenCL.DebugInfo.100) must be accepted; mutated
//! copies must be refused with their exact diagnostic (word offsets checked against an
//! independent walk of the words), and no single-word mutation may make the frontend panic.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};

fn tools_available() -> bool {
    ["clang-15", "llvm-spirv-15", "opt-15"]
        .iter()
        .all(|t| Command::new(t).arg("--version").output().is_ok())
}

fn run(cmd: &mut Command) -> bool {
    match cmd.output() {
        Ok(out) if out.status.success() => true,
        Ok(out) => panic!("{cmd:?} failed:\n{}", String::from_utf8_lossy(&out.stderr)),
        Err(e) => panic!("cannot run {cmd:?}: {e}"),
    }
}

/// `features.cl` compiled with the given options; `opt` runs the DESIGN.md optimising recipe.
fn compile(debug: bool, opt: bool, version: &str) -> Vec<u8> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/kernels/features.cl");
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("frontend-clang");
    std::fs::create_dir_all(&dir).expect("temp dir");
    // Tests run in parallel: every compilation gets its own files.
    static SERIAL: AtomicUsize = AtomicUsize::new(0);
    let serial = SERIAL.fetch_add(1, Ordering::Relaxed);
    let stem = format!("features-{debug}-{opt}-{version}-{serial}");
    let bc = dir.join(format!("{stem}.bc"));
    let spv = dir.join(format!("{stem}.spv"));
    let mut clang = Command::new("clang-15");
    clang.args([
        "-cl-std=CL1.2",
        "-target",
        "spir64",
        "-O0",
        "-emit-llvm",
        "-c",
    ]);
    clang.args(["-Xclang", "-finclude-default-header"]);
    if debug {
        clang.arg("-g");
    }
    if opt {
        clang.args(["-Xclang", "-disable-O0-optnone"]);
    }
    run(clang.arg(&src).arg("-o").arg(&bc));
    if opt {
        let passes = "sroa,early-cse,instcombine,simplifycfg,loop-mssa(licm),gvn,loop(indvars,loop-unroll-full),instcombine,simplifycfg,gvn,instcombine";
        run(Command::new("opt-15")
            .arg(format!("-passes={passes}"))
            .arg(&bc)
            .arg("-o")
            .arg(&bc));
    }
    run(Command::new("llvm-spirv-15")
        .arg(format!("--spirv-max-version={version}"))
        .arg(&bc)
        .arg("-o")
        .arg(&spv));
    std::fs::read(&spv).expect("read module")
}

fn words(bytes: &[u8]) -> Vec<u32> {
    bytes
        .chunks_exact(4)
        .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect()
}

fn bytes(words: &[u32]) -> Vec<u8> {
    words.iter().flat_map(|w| w.to_le_bytes()).collect()
}

/// (offset, opcode, word count) of every instruction, walked independently of the frontend.
fn instructions(words: &[u32]) -> Vec<(usize, u32, usize)> {
    let mut out = Vec::new();
    let mut at = 5;
    while at < words.len() {
        let count = (words[at] >> 16) as usize;
        out.push((at, words[at] & 0xffff, count));
        at += count.max(1);
    }
    out
}

const OP_TYPE_INT: u32 = 21;
const OP_MEMORY_MODEL: u32 = 14;
const OP_FADD: u32 = 129;
const OP_FUNCTION_CALL: u32 = 57;
const OP_EXT_INST: u32 = 12;

#[test]
fn clang_modules_are_accepted() {
    if !tools_available() {
        eprintln!("SKIPPED: clang-15, opt-15 or llvm-spirv-15 missing");
        return;
    }
    for (debug, opt, version) in [
        (false, false, "1.0"),
        (false, true, "1.0"),
        (false, false, "1.4"),
        (false, true, "1.4"),
        (true, false, "1.4"),
    ] {
        let m = ferrocl_frontend::parse(&compile(debug, opt, version)).unwrap_or_else(|e| {
            panic!(
                "debug={debug} opt={opt} SPIR-V {version} refused:\n{}",
                e.log()
            )
        });
        assert_eq!(m.kernels.len(), 8, "debug={debug} opt={opt} {version}");
    }
}

#[test]
fn debug_info_modules_name_source_lines() {
    if !tools_available() {
        eprintln!("SKIPPED: clang-15, opt-15 or llvm-spirv-15 missing");
        return;
    }
    // Retype the first OpFAdd of the -g module as an integer: the diagnostic must give the
    // word offset and the features.cl line its OpLine names.
    let mut w = words(&compile(true, false, "1.4"));
    let insts = instructions(&w);
    let int_id = insts
        .iter()
        .find(|(at, op, _)| *op == OP_TYPE_INT && w[at + 2] == 32)
        .map(|(at, _, _)| w[at + 1])
        .expect("an i32 type");
    let (fadd, _, _) = *insts
        .iter()
        .find(|(_, op, _)| *op == OP_FADD)
        .expect("an OpFAdd");
    w[fadd + 1] = int_id;
    let log = ferrocl_frontend::parse(&bytes(&w))
        .err()
        .expect("refused")
        .log();
    let want = format!(
        "error: SPIR-V Arithmetic: result type i32 is not allowed for OpFAdd [OpFAdd %{} at word {fadd}]",
        w[fadd + 2]
    );
    let line = log.lines().next().unwrap_or_default();
    assert!(line.starts_with(&want), "{log}");
    assert!(line.contains("features.cl:"), "{log}");
}

#[test]
fn mutated_clang_modules_give_exact_errors() {
    if !tools_available() {
        eprintln!("SKIPPED: clang-15, opt-15 or llvm-spirv-15 missing");
        return;
    }
    let base = words(&compile(false, true, "1.0"));
    let insts = instructions(&base);

    // Physical64 → Physical32.
    let (mm, _, _) = *insts
        .iter()
        .find(|(_, op, _)| *op == OP_MEMORY_MODEL)
        .expect("OpMemoryModel");
    let mut w = base.clone();
    w[mm + 1] = 1;
    assert_eq!(
        ferrocl_frontend::parse(&bytes(&w)).err().expect("refused").log(),
        format!("error: env 4: Physical32 addressing is not supported by this 64-bit device (CL_DEVICE_ADDRESS_BITS is 64); compile for spir64 [OpMemoryModel at word {mm}]\n")
    );

    // Drop the last argument of the first call that has one: the arity rule.
    let (call, _, count) = *insts
        .iter()
        .find(|(_, op, count)| *op == OP_FUNCTION_CALL && *count > 4)
        .expect("a call with arguments");
    let mut w = base.clone();
    w[call] = ((count as u32 - 1) << 16) | OP_FUNCTION_CALL;
    w.remove(call + count - 1);
    let log = ferrocl_frontend::parse(&bytes(&w))
        .err()
        .expect("refused")
        .log();
    let want = format!(
        "error: SPIR-V Function: OpFunctionCall passes {} arguments to %{}, which takes {} [OpFunctionCall %{} at word {call}]",
        count - 5,
        w[call + 3],
        count - 4,
        w[call + 2]
    );
    assert!(log.lines().any(|l| l.starts_with(&want)), "{want}\n{log}");

    // An OpExtInst whose Set is a type id (found by fuzzing: codegen skipped the instruction
    // as "not OpenCL.std" and its result had no value).
    let (ext, _, _) = *insts
        .iter()
        .find(|(_, op, _)| *op == OP_EXT_INST)
        .expect("an OpExtInst");
    let mut w = base.clone();
    w[ext + 3] = w[ext + 1];
    let log = ferrocl_frontend::parse(&bytes(&w))
        .err()
        .expect("refused")
        .log();
    let want = format!(
        "error: SPIR-V 2.2: the Set %{} of OpExtInst is not an OpExtInstImport [OpExtInst %{} at word {ext}]",
        w[ext + 1],
        w[ext + 2]
    );
    assert!(log.lines().any(|l| l.starts_with(&want)), "{want}\n{log}");
}

#[test]
fn single_word_mutations_of_real_modules_never_panic() {
    if !tools_available() {
        eprintln!("SKIPPED: clang-15, opt-15 or llvm-spirv-15 missing");
        return;
    }
    let base = words(&compile(false, true, "1.0"));
    // Every word of the module, a handful of values each: Ok or a diagnostic, never a panic.
    for at in 5..base.len() {
        for value in [
            0u32,
            1,
            2,
            0xffff_ffff,
            0x0001_0000,
            base[at] ^ 1,
            base[at].wrapping_add(1),
        ] {
            let mut w = base.clone();
            w[at] = value;
            let _ = ferrocl_frontend::parse(&bytes(&w));
        }
    }
}
