//! `cl_intel_devicelib_assert` (issue #36): SYCL's `assert` in device code, shaped as DPC++
//! ships it for a device that reports the extension (`tests/data/sycl_assert.spvasm`: the
//! kernel calls libdevice's `__assert_fail`, which calls `__devicelib_assert_fail`, imported
//! with no body). An assertion that holds changes nothing; one that fails prints
//! `file:line: func: global id: [..], local id: [..] Assertion `expr` failed.` on stderr and
//! aborts the process (SIGABRT), which the tests watch from outside, running the test binary
//! again as a child: one failing work-item of a one-dimensional range; one of a
//! two-dimensional range in vector lanes (the debug log says how the kernel was built), in
//! wide code and in checked mode; every work-item failing at once (one message). A
//! declaration of another signature fails the build with a log naming it; the extension is
//! reported at 1.0.0.
//!
//! Only meaningful for Ferrocl: against another ICD (Debian's PoCL takes no SPIR-V) the tests
//! report that and pass without checking.

mod common;

use std::os::unix::process::ExitStatusExt;
use std::path::PathBuf;
use std::process::Output;

use common::*;

/// The kernels of `sycl_assert.spvasm`: the same work, the second with a barrier before the
/// assertion.
const KERNELS: [&str; 2] = ["scale", "scale_barrier"];

/// The assertion's strings, as the kernel's module holds them.
const EXPR: &str = "v != fail_value";
const FILE: &str = "/src/sycl/assert_kernel.cpp";
const LINE: u32 = 42;
const FUNC: &str = "auto main()::(anonymous class)::operator()(sycl::nd_item<2>) const";

/// The message of a failure at `global` / `local` (DPC++'s fallback format).
fn message(global: [usize; 3], local: [usize; 3]) -> String {
    let [g0, g1, g2] = global;
    let [l0, l1, l2] = local;
    format!(
        "{FILE}:{LINE}: {FUNC}: global id: [{g0}, {g1}, {g2}], local id: [{l0}, {l1}, {l2}] \
         Assertion `{EXPR}` failed."
    )
}

/// `tests/data/<name>.spvasm` with the lines `; @DECORATIONS@` and `; @STRINGS@` replaced
/// by `strings` as NUL-terminated program-scope constants `%str_<name>` in CrossWorkgroup
/// memory, the way llvm-spirv writes string literals.
fn assemble_with_strings(name: &str, strings: &[(&str, &str)]) -> Vec<u8> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(format!("tests/data/{name}.spvasm"));
    let template = std::fs::read_to_string(path).expect("read .spvasm");
    let mut decorations = String::new();
    let mut declarations = String::new();
    let mut chars = std::collections::BTreeSet::new();
    for (_, text) in strings {
        chars.extend(text.bytes().chain([0]));
    }
    for c in &chars {
        declarations.push_str(&format!("%c_{c} = OpConstant %uchar {c}\n"));
    }
    for (id, text) in strings {
        let bytes: Vec<u8> = text.bytes().chain([0]).collect();
        let elements: Vec<String> = bytes.iter().map(|c| format!("%c_{c}")).collect();
        decorations.push_str(&format!(
            "OpDecorate %str_{id} Constant\nOpDecorate %str_{id} Alignment 1\n"
        ));
        declarations.push_str(&format!(
            "%len_{id} = OpConstant %ulong {len}\n\
             %arr_{id} = OpTypeArray %uchar %len_{id}\n\
             %parr_{id} = OpTypePointer CrossWorkgroup %arr_{id}\n\
             %init_{id} = OpConstantComposite %arr_{id} {elements}\n\
             %str_{id} = OpVariable %parr_{id} CrossWorkgroup %init_{id}\n",
            len = bytes.len(),
            elements = elements.join(" ")
        ));
    }
    let text = template
        .replace("; @DECORATIONS@", &decorations)
        .replace("; @STRINGS@", &declarations);
    common::assemble_text(name, &text, "1.0")
}

fn ferrocl_only() -> bool {
    if target().other_icd {
        eprintln!("not checked: the ICD under test does not take SPIR-V");
        return false;
    }
    true
}

/// Kernel `name` (`scale` or `scale_barrier`) of `sycl_assert.spvasm`.
fn scale_kernel(env: &Env, name: &str) -> Kernel {
    let il = assemble_with_strings(
        "sycl_assert",
        &[("expr", EXPR), ("file", FILE), ("func", FUNC)],
    );
    let p = env.program_from_il(&il, "");
    check(cl(Kernel::create(&p, name)), "clCreateKernel")
}

/// Runs `scale` over `global` in groups of `local` with `input` and `fail_value`; the output.
fn run_scale(
    env: &Env,
    k: &Kernel,
    global: &[usize],
    local: &[usize],
    input: &[u32],
    fail_value: u32,
) -> Vec<u32> {
    let n: usize = global.iter().product();
    assert_eq!(input.len(), n);
    let (bin, bout) = (env.buffer(input), env.buffer_filled(n, 0xdead_beefu32));
    arg_buf(k, 0, &bout);
    arg_buf(k, 1, &bin);
    arg(k, 2, &fail_value);
    env.run(k, global, Some(local), None);
    env.read(&bout, n)
}

/// Runs `scale` where every assertion holds and checks each result.
fn assertions_hold(env: &Env, k: &Kernel, global: &[usize], local: &[usize]) {
    let n: usize = global.iter().product();
    let input: Vec<u32> = (0..n as u32).collect();
    let out = run_scale(env, k, global, local, &input, u32::MAX);
    for (i, (&o, &v)) in out.iter().zip(&input).enumerate() {
        assert_eq!(
            o,
            v * 3 + 1,
            "out[{i}] with global {global:?}, local {local:?}"
        );
    }
}

/// Makes the work-item at linear index `at` (y * X + x) fail: never returns where Ferrocl
/// implements the extension.
fn fail_one(env: &Env, k: &Kernel, global: &[usize], local: &[usize], at: u32) {
    let n: usize = global.iter().product();
    let input: Vec<u32> = (0..n as u32).collect();
    run_scale(env, k, global, local, &input, at);
    panic!("the kernel returned although work-item {at} failed its assertion");
}

/// Checks that `child` died of SIGABRT after printing `expected` once (and no other
/// assertion message); its stderr.
fn aborted_with(child: &Output, expected: &str) -> String {
    let stderr = String::from_utf8_lossy(&child.stderr).into_owned();
    let stdout = String::from_utf8_lossy(&child.stdout);
    let context = format!("--- stdout ---\n{stdout}\n--- stderr ---\n{stderr}");
    assert_eq!(
        child.status.signal(),
        Some(6),
        "the child must die of SIGABRT, it ended with {:?}\n{context}",
        child.status
    );
    assert!(
        stderr.lines().any(|l| l == expected),
        "no line `{expected}`\n{context}"
    );
    assert_eq!(stderr.matches("Assertion `").count(), 1, "{context}");
    stderr
}

#[test]
fn assertions_that_hold_change_nothing() {
    if !ferrocl_only() {
        return;
    }
    let env = Env::new();
    for name in KERNELS {
        let k = scale_kernel(&env, name);
        assertions_hold(&env, &k, &[64], &[8]);
        assertions_hold(&env, &k, &[64, 4], &[32, 2]);
        assertions_hold(&env, &k, &[4096], &[64]);
        assertions_hold(&env, &k, &[100], &[10]);
    }
}

#[test]
fn a_failing_work_item_prints_its_ids_and_aborts() {
    const NAME: &str = "a_failing_work_item_prints_its_ids_and_aborts";
    if !ferrocl_only() {
        return;
    }
    let Some(child) = run_in_child(NAME, &[]) else {
        let env = Env::new();
        let k = scale_kernel(&env, "scale");
        fail_one(&env, &k, &[64], &[8], 37);
        return;
    };
    aborted_with(&child, &message([37, 0, 0], [5, 0, 0]));
}

/// The failure of one work-item of a two-dimensional range, in groups of 32 × 2 whose x loop
/// the vectoriser may run in vector lanes (the kernel's debug line says whether it did), with
/// Cranelift, with the wide backend (8 or 16 lanes) and in checked mode, without and with a
/// barrier before the assertion; before it, the same kernel with assertions that hold.
#[test]
fn a_failure_in_vector_lanes_in_wide_code_and_in_checked_mode() {
    const NAME: &str = "a_failure_in_vector_lanes_in_wide_code_and_in_checked_mode";
    const KERNEL_VAR: &str = "FERROCL_TEST_ASSERT_KERNEL";
    let modes: [(&str, &str); 3] = [
        ("FERROCL_BACKEND", "cranelift"),
        ("FERROCL_BACKEND", "wide"),
        ("FERROCL_CHECKED", "on"),
    ];
    if !ferrocl_only() {
        return;
    }
    let mut children = Vec::new();
    for kernel in KERNELS {
        for mode in modes {
            let vars = [mode, ("FERROCL_LOG", "debug"), (KERNEL_VAR, kernel)];
            match run_in_child(NAME, &vars) {
                Some(child) => children.push((kernel, mode, child)),
                None => {
                    let env = Env::new();
                    let name = std::env::var(KERNEL_VAR).expect("the kernel to run");
                    let k = scale_kernel(&env, &name);
                    assertions_hold(&env, &k, &[64, 4], &[32, 2]);
                    eprintln!("assertions that hold: results right");
                    fail_one(&env, &k, &[64, 4], &[32, 2], 3 * 64 + 37);
                    return;
                }
            }
        }
    }
    for (kernel, (var, value), child) in children {
        let what = format!("{kernel} with {var}={value}");
        let stderr = aborted_with(&child, &message([37, 3, 0], [5, 1, 0]));
        assert!(
            stderr.contains("assertions that hold: results right"),
            "{what}:\n{stderr}"
        );
        let shape = stderr
            .lines()
            .find(|l| l.contains(&format!("kernel {kernel}:")))
            .unwrap_or_else(|| panic!("{what}: no debug line of the kernel\n{stderr}"));
        assert!(
            shape.contains("vectorised (") || shape.contains("scalar ("),
            "{what}: {shape}"
        );
        if value == "wide" {
            assert!(
                shape.contains("code by the wide backend") || shape.contains("refused it"),
                "{what}: {shape}"
            );
        }
        eprintln!("{what}: {shape}");
    }
}

#[test]
fn several_failing_work_items_print_one_message() {
    const NAME: &str = "several_failing_work_items_print_one_message";
    if !ferrocl_only() {
        return;
    }
    let Some(child) = run_in_child(NAME, &[]) else {
        let env = Env::new();
        let k = scale_kernel(&env, "scale");
        // Every work-item of 64 groups fails, on every worker.
        run_scale(&env, &k, &[4096], &[64], &[7; 4096], 7);
        panic!("the kernel returned although every work-item failed its assertion");
    };
    let stderr = String::from_utf8_lossy(&child.stderr).into_owned();
    assert_eq!(
        child.status.signal(),
        Some(6),
        "{:?}\n{stderr}",
        child.status
    );
    let lines: Vec<&str> = stderr.lines().filter(|l| l.contains("Assertion")).collect();
    assert_eq!(lines.len(), 1, "{stderr}");
    // Whichever work-item printed, the line is whole and its ids agree.
    let ids = lines[0]
        .strip_prefix(&format!("{FILE}:{LINE}: {FUNC}: global id: ["))
        .and_then(|rest| rest.strip_suffix(&format!(" Assertion `{EXPR}` failed.")))
        .unwrap_or_else(|| panic!("not a whole message: {}", lines[0]));
    let (global, local) = ids.split_once("], local id: [").expect("two ids");
    let number = |s: &str| {
        s.trim_end_matches(']')
            .split(", ")
            .map(|n| n.parse::<usize>().unwrap())
            .collect::<Vec<_>>()
    };
    let (global, local) = (number(global), number(local));
    assert_eq!(global.len(), 3, "{}", lines[0]);
    assert!(
        global[0] < 4096 && global[1] == 0 && global[2] == 0,
        "{}",
        lines[0]
    );
    assert_eq!(local, [global[0] % 64, 0, 0], "{}", lines[0]);
}

#[test]
fn a_declaration_of_another_signature_fails_the_build() {
    if !ferrocl_only() {
        return;
    }
    let env = Env::new();
    let il = assemble_with_strings("sycl_assert_wrong_signature", &[]);
    let Err(log) = env.try_program_from_il(&il, "") else {
        panic!("a declaration without the ids must fail the build");
    };
    assert!(
        log.contains(
            "cl_intel_devicelib_assert: __devicelib_assert_fail must be declared void(i8* expr, i8* file, i32 line, i8* func, i64 gid0, i64 gid1, i64 gid2, i64 lid0, i64 lid1, i64 lid2)"
        ) && log.contains("found void(Generic i8*, Generic i8*, i32, Generic i8*)"),
        "{log}"
    );
}

#[test]
fn the_extension_is_reported_at_1_0_0() {
    if !ferrocl_only() {
        return;
    }
    let env = Env::new();
    assert!(env.has_extension("cl_intel_devicelib_assert"));
    let versions = check(
        cl(env.device.extensions_with_version()),
        "CL_DEVICE_EXTENSIONS_WITH_VERSION",
    );
    let found: Vec<u32> = versions
        .iter()
        .filter(|nv| nv.name.split(|&c| c == 0).next() == Some(b"cl_intel_devicelib_assert"))
        .map(|nv| nv.version)
        .collect();
    // CL_MAKE_VERSION(1, 0, 0).
    assert_eq!(found, [1 << 22]);
}
