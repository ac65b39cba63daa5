//! A second copy of CORE-MATH for x86-64-v3 (AVX2, FMA, BMI2), which `core_math_dispatch.rs`
//! calls instead of the baseline copy when the CPU has those instructions.
//!
//! The `core-math-sys` crate compiles CORE-MATH once, with `-march=$TARGET_CPU`
//! (`.cargo/config.toml` sets x86-64-v2, so the library runs on any x86-64-v2 machine). Its f64
//! functions are 3–4× slower without FMA (`sin`, `log`, `pow`: measured 15/6/18 ns against
//! 55/22/75 ns a call), so this script compiles the same C sources — read from the
//! `core-math-sys` package `Cargo.lock` pins, in cargo's registry — again with
//! `-march=x86-64-v3`, and renames every symbol the copy defines `<name>_ferrocl_v3` (objcopy),
//! so the two copies link side by side. Off x86-64, or without the sources or binutils, no
//! copy is built and the baseline serves every call (cfg `ferrocl_core_math_v3` is unset).

use std::path::{Path, PathBuf};
use std::process::Command;

const SUFFIX: &str = "_ferrocl_v3";

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rustc-check-cfg=cfg(ferrocl_core_math_v3)");
    if std::env::var("CARGO_CFG_TARGET_ARCH").as_deref() != Ok("x86_64") {
        return;
    }
    match build_v3_copy() {
        Ok(()) => println!("cargo:rustc-cfg=ferrocl_core_math_v3"),
        Err(why) => println!(
            "cargo:warning=ferrocl-mathlib: no x86-64-v3 copy of CORE-MATH ({why}); the baseline copy serves every CPU"
        ),
    }
}

fn build_v3_copy() -> Result<(), String> {
    let sources = core_math_sys_dir()?.join("vendor/src");
    let mut files = c_sources(&sources.join("binary32"), "f.c")?;
    files.extend(c_sources(&sources.join("binary64"), ".c")?);
    if files.is_empty() {
        return Err(format!("no C sources under {}", sources.display()));
    }
    let out = PathBuf::from(std::env::var("OUT_DIR").map_err(|e| e.to_string())?);
    cc::Build::new()
        .files(&files)
        .flag("-march=x86-64-v3")
        // Optimised like the baseline copy (a dependency) even in this crate's debug builds.
        .opt_level(2)
        .cargo_warnings(false)
        .cargo_metadata(false)
        .try_compile("core-math-v3")
        .map_err(|e| e.to_string())?;
    let archive = out.join("libcore-math-v3.a");
    rename_defined_symbols(&archive, &out)?;
    println!("cargo:rustc-link-search=native={}", out.display());
    println!("cargo:rustc-link-lib=static=core-math-v3");
    Ok(())
}

/// The directory of the `core-math-sys` package this build uses: `FERROCL_CORE_MATH_SRC` when
/// set, else the version `Cargo.lock` pins, unpacked in cargo's registry (cargo unpacks every
/// package of a build before running build scripts, and core-math-sys is built before this
/// crate).
fn core_math_sys_dir() -> Result<PathBuf, String> {
    println!("cargo:rerun-if-env-changed=FERROCL_CORE_MATH_SRC");
    if let Some(dir) = std::env::var_os("FERROCL_CORE_MATH_SRC") {
        return Ok(PathBuf::from(dir));
    }
    let manifest_dir =
        PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").map_err(|e| e.to_string())?);
    let lock = manifest_dir
        .ancestors()
        .map(|d| d.join("Cargo.lock"))
        .find(|p| p.is_file())
        .ok_or("no Cargo.lock")?;
    let lock_text = std::fs::read_to_string(&lock).map_err(|e| e.to_string())?;
    let version =
        locked_version(&lock_text, "core-math-sys").ok_or("core-math-sys is not in Cargo.lock")?;
    let cargo_home = std::env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cargo")))
        .ok_or("neither CARGO_HOME nor HOME is set")?;
    let registry = cargo_home.join("registry/src");
    let wanted = format!("core-math-sys-{version}");
    std::fs::read_dir(&registry)
        .map_err(|e| format!("{}: {e}", registry.display()))?
        .flatten()
        .map(|index| index.path().join(&wanted))
        .find(|dir| dir.join("vendor/src").is_dir())
        .ok_or_else(|| format!("{wanted} is not unpacked under {}", registry.display()))
}

/// The version of package `name` in a `Cargo.lock`.
fn locked_version(lock: &str, name: &str) -> Option<String> {
    let mut lines = lock.lines();
    while let Some(line) = lines.next() {
        if line.trim() == format!("name = \"{name}\"") {
            let version = lines.next()?.trim().strip_prefix("version = \"")?;
            return Some(version.trim_end_matches('"').to_owned());
        }
    }
    None
}

/// `dir/<function>/<function><suffix>` for every function directory, as core-math-sys takes
/// them.
fn c_sources(dir: &Path, suffix: &str) -> Result<Vec<PathBuf>, String> {
    let entries = std::fs::read_dir(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let mut files: Vec<PathBuf> = entries
        .flatten()
        .filter_map(|entry| {
            let dir = entry.path();
            let file = dir.join(format!("{}{suffix}", dir.file_name()?.to_str()?));
            file.is_file().then_some(file)
        })
        .collect();
    files.sort();
    Ok(files)
}

/// Renames every global symbol `archive` defines to `<symbol>_ferrocl_v3`.
fn rename_defined_symbols(archive: &Path, scratch: &Path) -> Result<(), String> {
    let nm = Command::new("nm")
        .args(["--defined-only", "--extern-only", "--format=posix"])
        .arg(archive)
        .output()
        .map_err(|e| format!("nm: {e}"))?;
    if !nm.status.success() {
        return Err(format!("nm failed on {}", archive.display()));
    }
    let mut map = String::new();
    for line in String::from_utf8_lossy(&nm.stdout).lines() {
        // "symbol type value size", or "archive[member.o]:" headers.
        let mut fields = line.split_whitespace();
        if let (Some(symbol), Some(kind)) = (fields.next(), fields.next()) {
            if !symbol.ends_with(':') && kind.len() == 1 {
                map.push_str(&format!("{symbol} {symbol}{SUFFIX}\n"));
            }
        }
    }
    if map.is_empty() {
        return Err("the x86-64-v3 copy defines no symbols".into());
    }
    let map_file = scratch.join("core-math-v3.redefine");
    std::fs::write(&map_file, map).map_err(|e| e.to_string())?;
    let status = Command::new("objcopy")
        .arg(format!("--redefine-syms={}", map_file.display()))
        .arg(archive)
        .status()
        .map_err(|e| format!("objcopy: {e}"))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("objcopy failed on {}", archive.display()))
    }
}
