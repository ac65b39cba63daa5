//! `ferrocl-clc` as the Khronos CTS calls it: the `--compilation-program` command line with a
//! device-info file and build options after `--`, its output checked with spirv-val and by the
//! driver's frontend; failures give the documented exit status and a log on stderr.

use std::path::{Path, PathBuf};
use std::process::Command;

fn clc() -> Command {
    Command::new(env!("CARGO_BIN_EXE_ferrocl-clc"))
}

fn tools_present() -> bool {
    ["clang-15", "opt-15", "llvm-spirv-15", "spirv-val"]
        .iter()
        .all(|t| {
            Command::new("sh")
                .args(["-c", &format!("command -v {t}")])
                .output()
                .is_ok_and(|o| o.status.success())
        })
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("ferrocl-clc-test-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn device_info(dir: &Path) -> PathBuf {
    let path = dir.join("clDeviceInfo.txt");
    std::fs::write(
        &path,
        "# OpenCL device info affecting SPIR-V offline compilation:\n\
         CL_DEVICE_ADDRESS_BITS=64\n\
         CL_DEVICE_EXTENSIONS=\"cl_khr_fp64\"\n\
         CL_DEVICE_IL_VERSION=\"SPIR-V_1.0 SPIR-V_1.6\"\n\
         CL_DEVICE_VERSION=\"OpenCL 3.0 Ferrocl\"\n\
         CL_DEVICE_IMAGE_SUPPORT=0\n\
         CL_DEVICE_NAME=\"CPU\"\n",
    )
    .unwrap();
    path
}

/// Asserts that spirv-val accepts the module at `path`.
fn validated(path: &Path, what: &str) {
    let val = Command::new("spirv-val").arg(path).output().unwrap();
    assert!(
        val.status.success(),
        "{what}: {}",
        String::from_utf8_lossy(&val.stderr)
    );
}

const SOURCE: &str = "\
#ifndef SCALE
#error SCALE must come from the build options
#endif
inline float scaled(float x) { return x * SCALE; }
kernel void k(global float4 *p, int n) {
    size_t i = get_global_id(0);
    float4 v = p[i];
    p[i] = n > 2 ? v * scaled(2.0f) : v + 1.0f;
    p[i].x += OFFSET;
}
";

#[test]
fn the_cts_command_line_gives_valid_spirv() {
    if !tools_present() {
        eprintln!("not checked: clang-15, opt-15, llvm-spirv-15 or spirv-val is missing");
        return;
    }
    let dir = scratch("ok");
    let (src, out) = (dir.join("k.cl"), dir.join("k.spv64"));
    std::fs::write(&src, SOURCE).unwrap();
    let run = clc()
        .arg("--mode=spir-v")
        .arg(format!("--source={}", src.display()))
        .arg(format!("--output={}", out.display()))
        .arg(format!("--cl-device-info={}", device_info(&dir).display()))
        .args([
            "--",
            "-cl-std=CL3.0",
            "-DSCALE=3.0f",
            "-DOFFSET=1.0f + 2.0f",
        ])
        .output()
        .unwrap();
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    validated(&out, "the CTS command line");
    let spirv = std::fs::read(&out).unwrap();
    assert_eq!(spirv[..4], 0x0723_0203u32.to_le_bytes());

    // Binary mode: the same module, recording the executable binary type.
    let bin = dir.join("k.bin");
    let run = clc()
        .args(["--mode", "binary", "--source"])
        .arg(&src)
        .arg("--output")
        .arg(&bin)
        .args(["--", "-DSCALE=1.0f", "-DOFFSET=0.0f"])
        .output()
        .unwrap();
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let bytes = std::fs::read(&bin).unwrap();
    let text = String::from_utf8_lossy(&bytes);
    assert!(text.contains("ferrocl binary type: executable"));
    std::fs::remove_dir_all(dir).ok();
}

/// The Khronos CTS `compiler pragma_unroll` kernels: llvm-spirv-15 writes a one-block loop
/// with an `OpLoopMerge` whose merge block is its continue target, and a `do` loop with one
/// that is not right before its block's branch, both of which spirv-val refuses unless the
/// recipe's translator fixes drop them.
#[test]
fn an_unroll_hint_on_a_one_block_loop_gives_valid_spirv() {
    if !tools_present() {
        eprintln!("not checked: clang-15, opt-15, llvm-spirv-15 or spirv-val is missing");
        return;
    }
    let dir = scratch("unroll");
    let (src, out) = (dir.join("k.cl"), dir.join("k.spv64"));
    std::fs::write(
        &src,
        "kernel void one_block(global uint *dst) {
             __attribute__((opencl_unroll_hint(1)))
             for (size_t i = 0; i < 100; ++i)
                 dst[i] = i;
         }
         kernel void do_loop(global uint *dst) {
             size_t i = 0;
             __attribute__((opencl_unroll_hint(1)))
             do {
                 dst[i] = i;
                 ++i;
             } while (i < 100);
         }
         kernel void while_loop(global uint *dst, uint n) {
             size_t i = 0;
             __attribute__((opencl_unroll_hint(4)))
             while (i < n) {
                 dst[i] = i;
                 ++i;
             }
         }",
    )
    .unwrap();
    for std in ["-cl-std=CL1.2", "-cl-std=CL3.0"] {
        let run = clc()
            .arg("--mode=spir-v")
            .arg(format!("--source={}", src.display()))
            .arg(format!("--output={}", out.display()))
            .args(["--", std])
            .output()
            .unwrap();
        assert!(
            run.status.success(),
            "{}",
            String::from_utf8_lossy(&run.stderr)
        );
        validated(&out, std);
    }
    std::fs::remove_dir_all(dir).ok();
}

#[test]
fn failures_exit_non_zero_with_a_log() {
    if !tools_present() {
        eprintln!("not checked: clang-15, opt-15, llvm-spirv-15 or spirv-val is missing");
        return;
    }
    let dir = scratch("fail");
    let (src, out) = (dir.join("k.cl"), dir.join("k.spv64"));
    std::fs::write(&src, SOURCE).unwrap();
    // The source's #error: the compiler's log, status 1, no output.
    let run = clc()
        .arg("--source")
        .arg(&src)
        .arg("--output")
        .arg(&out)
        .output()
        .unwrap();
    assert_eq!(run.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&run.stderr).contains("SCALE must come"));
    assert!(!out.exists());
    // An option clBuildProgram refuses: a language version OpenCL C does not have.
    let run = clc()
        .arg("--source")
        .arg(&src)
        .arg("--output")
        .arg(&out)
        .args(["--", "-DSCALE=1.0f", "-DOFFSET=0.0f", "-cl-std=CL2.2"])
        .output()
        .unwrap();
    assert_eq!(run.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&run.stderr).contains("invalid build options"));
    // A 32-bit device is not this one.
    let info = dir.join("info32.txt");
    std::fs::write(&info, "CL_DEVICE_ADDRESS_BITS=32\n").unwrap();
    let run = clc()
        .arg("--source")
        .arg(&src)
        .arg("--output")
        .arg(&out)
        .arg(format!("--cl-device-info={}", info.display()))
        .output()
        .unwrap();
    assert_eq!(run.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&run.stderr).contains("64-bit"));
    // Usage errors: status 2 and the usage text.
    let run = clc().arg("--source").arg(&src).output().unwrap();
    assert_eq!(run.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&run.stderr).contains("usage:"));
    assert!(clc().arg("--help").output().unwrap().status.success());
    std::fs::remove_dir_all(dir).ok();
}
