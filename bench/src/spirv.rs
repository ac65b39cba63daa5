//! OpenCL C → SPIR-V for Ferrocl at run time (clang-15, opt-15, llvm-spirv-15, the optimised
//! recipe of DESIGN.md), cached under `target/bench-spirv/` keyed by a hash of source and recipe.

use std::path::{Path, PathBuf};
use std::process::Command;

const CLANG_ARGS: &[&str] = &[
    "-cl-std=CL1.2",
    "-target",
    "spir64",
    "-O0",
    "-Xclang",
    "-disable-O0-optnone",
    "-emit-llvm",
    "-c",
    "-Xclang",
    "-finclude-default-header",
];
const OPT_PASSES: &str = "-passes=sroa,early-cse,instcombine,simplifycfg,loop-mssa(licm),gvn,\
loop(indvars,loop-unroll-full),instcombine,simplifycfg,gvn,instcombine";
const SPIRV_ARGS: &[&str] = &["--spirv-max-version=1.0"];

/// 64-bit FNV-1a: stable across builds, enough to key a cache.
fn fnv1a(parts: &[&[u8]]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for p in parts {
        for &b in *p {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
        h ^= 0xff;
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h
}

/// The workspace `target/` directory: `CARGO_TARGET_DIR`, else the ancestor of this executable
/// named `target`, else `target/` next to the workspace root.
pub fn target_dir() -> PathBuf {
    if let Some(d) = std::env::var_os("CARGO_TARGET_DIR") {
        return PathBuf::from(d);
    }
    if let Ok(exe) = std::env::current_exe() {
        if let Some(t) = exe
            .ancestors()
            .find(|p| p.file_name().is_some_and(|n| n == "target"))
        {
            return t.to_path_buf();
        }
    }
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../target")
}

fn run(cmd: &mut Command) -> Result<(), String> {
    let out = cmd
        .output()
        .map_err(|e| format!("cannot run {:?}: {e}", cmd.get_program()))?;
    if out.status.success() {
        Ok(())
    } else {
        let err = String::from_utf8_lossy(&out.stderr);
        let first = err
            .lines()
            .find(|l| !l.trim().is_empty())
            .unwrap_or("")
            .trim()
            .to_string();
        Err(format!("{:?} failed: {first}", cmd.get_program()))
    }
}

/// SPIR-V for `source` (kernel `name`), from the cache or compiled now.
pub fn compile(name: &str, source: &str) -> Result<Vec<u8>, String> {
    let recipe = format!("{CLANG_ARGS:?}{OPT_PASSES}{SPIRV_ARGS:?}");
    let key = fnv1a(&[source.as_bytes(), recipe.as_bytes()]);
    let dir = target_dir().join("bench-spirv");
    let spv = dir.join(format!("{name}-{key:016x}.spv"));
    if let Ok(words) = std::fs::read(&spv) {
        return Ok(words);
    }
    std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let stem = dir.join(format!("{name}-{key:016x}.{}", std::process::id()));
    let cl = stem.with_extension("cl");
    let bc = stem.with_extension("bc");
    let obc = stem.with_extension("opt.bc");
    let tmp = stem.with_extension("spv.tmp");
    std::fs::write(&cl, source).map_err(|e| format!("{}: {e}", cl.display()))?;
    let result = (|| {
        run(Command::new("clang-15")
            .args(CLANG_ARGS)
            .arg(&cl)
            .arg("-o")
            .arg(&bc))?;
        run(Command::new("opt-15")
            .arg(OPT_PASSES)
            .arg(&bc)
            .arg("-o")
            .arg(&obc))?;
        run(Command::new("llvm-spirv-15")
            .args(SPIRV_ARGS)
            .arg(&obc)
            .arg("-o")
            .arg(&tmp))?;
        std::fs::rename(&tmp, &spv).map_err(|e| e.to_string())?;
        std::fs::read(&spv).map_err(|e| e.to_string())
    })();
    for p in [&cl, &bc, &obc, &tmp] {
        let _ = std::fs::remove_file(p);
    }
    result
}

#[cfg(test)]
mod tests {
    #[test]
    fn cache_key_is_stable_and_separates_parts() {
        assert_eq!(super::fnv1a(&[b"ab"]), super::fnv1a(&[b"ab"]));
        assert_ne!(super::fnv1a(&[b"a", b"b"]), super::fnv1a(&[b"ab"]));
    }
}

/// Instructions in a SPIR-V module (after the 5-word header), following each word count; a
/// zero or overlong count ends the walk.
pub fn instruction_count(bytes: &[u8]) -> usize {
    let words: Vec<u32> = bytes
        .chunks_exact(4)
        .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect();
    let mut at = 5;
    let mut count = 0;
    while let Some(&w) = words.get(at) {
        let n = (w >> 16) as usize;
        if n == 0 || at + n > words.len() {
            break;
        }
        count += 1;
        at += n;
    }
    count
}

#[cfg(test)]
mod instruction_count_tests {
    #[test]
    fn counts_instructions() {
        // Header, OpCapability Kernel (2 words), OpMemoryModel Physical64 OpenCL (3 words).
        let words: [u32; 10] = [
            0x0723_0203,
            0x0001_0000,
            0,
            10,
            0,
            0x0002_0011,
            6,
            0x0003_000e,
            2,
            2,
        ];
        let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
        assert_eq!(super::instruction_count(&bytes), 2);
    }
}
