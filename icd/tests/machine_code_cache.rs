//! The machine-code half of the program cache (runtime/src/program_cache.rs, codegen's
//! serialize.rs), through the real loader. Every build runs in a child process (this test
//! binary again, running `child`) with its own FERROCL_CACHE_DIR and FERROCL_LOG=info: the
//! child builds `kernels/machine_code_cache.cl` from OpenCL C or from IL, runs its kernels and
//! prints the build log and every output byte; the parent compares children.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::{arg, arg_buf, check, cl, Env, Opt};
use opencl3::kernel::Kernel;
use opencl3::program::Program;

const CHILD: &str = "FERROCL_MCACHE_TEST_CHILD";
const FILE: &str = "FERROCL_MCACHE_TEST_FILE";
const OPTIONS: &str = "FERROCL_MCACHE_TEST_OPTIONS";

/// Builds `file` with `options` from OpenCL C (`source`) or IL (`il`); `build` only builds IL.
fn build_in_child(env: &Env, mode: &str, file: &str, options: &str) -> Result<Program, String> {
    if mode == "source" {
        let src = std::fs::read_to_string(common::kernel_source(file)).expect("kernel source");
        return env.try_program_from_source(&src, options);
    }
    let il = common::spirv(file, Opt::Optimised);
    let program = check(
        cl(Program::create_from_il(&env.context, &il)),
        "clCreateProgramWithIL",
    );
    let c_options = std::ffi::CString::new(options).expect("options");
    match opencl3::program::build_program(
        program.get(),
        env.context.devices(),
        &c_options,
        None,
        std::ptr::null_mut(),
    ) {
        Ok(()) => Ok(program),
        Err(_) => Err(program.get_build_log(env.device.id()).unwrap_or_default()),
    }
}

/// Every output of the kernels of machine_code_cache.cl, as bytes.
fn run_kernels(env: &Env, program: &Program) -> Vec<u8> {
    let n = 256usize;
    let mut rng = common::Rng::new(21);
    let input: Vec<f32> = (0..n).map(|_| rng.f32_in(-6.0, 6.0)).collect();
    // Normal and subnormal values, scaled into the subnormal range.
    let tiny: Vec<f32> = (0..n).map(|i| (i as f32 + 1.0) * 1e-39).collect();
    let mut bytes = Vec::new();

    let mix = check(cl(Kernel::create(program, "mix")), "clCreateKernel");
    let a = env.buffer(&input);
    let out = env.buffer_filled(n, 0f32);
    let hashes = env.buffer_filled(n, 0u32);
    arg_buf(&mix, 0, &a);
    arg_buf(&mix, 1, &out);
    arg_buf(&mix, 2, &hashes);
    env.run(&mix, &[n], None, None);
    bytes.extend(env.read(&out, n).iter().flat_map(|v| v.to_le_bytes()));
    bytes.extend(env.read(&hashes, n).iter().flat_map(|v| v.to_le_bytes()));

    let sum = check(cl(Kernel::create(program, "tile_sum")), "clCreateKernel");
    let sums = env.buffer_filled(n / 64, 0f32);
    arg_buf(&sum, 0, &a);
    arg_buf(&sum, 1, &sums);
    env.run(&sum, &[n], Some(&[64]), None);
    bytes.extend(env.read(&sums, n / 64).iter().flat_map(|v| v.to_le_bytes()));

    let scale = check(cl(Kernel::create(program, "scale")), "clCreateKernel");
    let t = env.buffer(&tiny);
    let scaled = env.buffer_filled(n, 0f32);
    arg_buf(&scale, 0, &t);
    arg_buf(&scale, 1, &scaled);
    arg(&scale, 2, &0.75f32);
    env.run(&scale, &[n], None, None);
    bytes.extend(env.read(&scaled, n).iter().flat_map(|v| v.to_le_bytes()));
    bytes
}

/// The child's part: builds FILE in mode CHILD with OPTIONS and prints the build log (or the
/// failure's), then, unless the mode is `build`, every output byte in hex.
#[test]
fn child() {
    let Ok(mode) = std::env::var(CHILD) else {
        return;
    };
    let file = std::env::var(FILE).expect(FILE);
    let options = std::env::var(OPTIONS).unwrap_or_default();
    let env = Env::new();
    let program = match build_in_child(&env, &mode, &file, &options) {
        Ok(p) => p,
        Err(log) => {
            println!("<<<FAILED\n{log}FAILED>>>");
            return;
        }
    };
    let log = program.get_build_log(env.device.id()).unwrap_or_default();
    println!("<<<LOG\n{log}LOG>>>");
    if mode != "build" {
        let hex: String = run_kernels(&env, &program)
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        println!("<<<OUT\n{hex}\nOUT>>>");
    }
}

/// A fresh directory under the system's temporary directory, removed afterwards.
struct TempDir(PathBuf);

impl TempDir {
    fn new(tag: &str) -> TempDir {
        let dir =
            std::env::temp_dir().join(format!("ferrocl-mcache-test-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("create a temporary directory");
        TempDir(dir)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// What a child printed: its build log, the outputs (empty for `build`), the failure log if
/// the build failed, and the `FERROCL_LOG=info` line about the build on stderr.
struct Child {
    log: String,
    out: String,
    failed: Option<String>,
    built_line: String,
}

impl Child {
    fn assert_hit(&self) {
        assert!(
            self.log
                .contains("info: machine code from the program cache"),
            "not a hit:\n{}",
            self.log
        );
        // Neither the frontend nor the code generator ran.
        assert!(
            self.built_line.contains("machine code")
                && self.built_line.contains("(program cache: hit)")
                && !self.built_line.contains("frontend")
                && !self.built_line.contains("codegen"),
            "{}",
            self.built_line
        );
    }

    fn assert_miss(&self, why: &str) {
        assert!(
            self.log
                .contains(&format!("info: machine code compiled ({why}")),
            "not a miss because {why}:\n{}",
            self.log
        );
        assert!(
            self.built_line.contains("frontend") && self.built_line.contains("codegen"),
            "{}",
            self.built_line
        );
    }
}

fn section(text: &str, name: &str) -> Option<String> {
    text.split_once(&format!("<<<{name}\n"))
        .and_then(|(_, rest)| rest.split_once(&format!("{name}>>>")))
        .map(|(inside, _)| inside.to_owned())
}

/// Runs `child` in `mode` on `file` with the cache in `cache`, `options` and `vars`.
fn build(cache: &Path, mode: &str, file: &str, options: &str, vars: &[(&str, &str)]) -> Child {
    let exe = std::env::current_exe().expect("test binary path");
    let mut cmd = Command::new(exe);
    cmd.args(["child", "--exact", "--nocapture", "--test-threads=1"])
        .env(CHILD, mode)
        .env(FILE, file)
        .env(OPTIONS, options)
        .env("FERROCL_CACHE_DIR", cache)
        .env("FERROCL_LOG", "info");
    for var in [
        "FERROCL_CACHE",
        "FERROCL_CACHE_MAX_SIZE",
        "FERROCL_FTZ",
        "FERROCL_ROUNDING",
        "FERROCL_FP64",
        "FERROCL_FP16",
        "FERROCL_SUBGROUPS",
        "FERROCL_VECTORIZE",
        "FERROCL_CHECKED",
        "FERROCL_KERNEL_TIMEOUT",
        "FERROCL_THREADS",
        "FERROCL_DUMP_DIR",
    ] {
        cmd.env_remove(var);
    }
    cmd.envs(vars.iter().copied());
    let out = cmd.output().expect("run the test binary as a child");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(
        out.status.success() && stdout.contains("1 passed"),
        "child failed\n--- stdout ---\n{stdout}\n--- stderr ---\n{stderr}"
    );
    let failed = section(&stdout, "FAILED");
    let log = section(&stdout, "LOG").unwrap_or_default();
    let built_line = stderr
        .lines()
        .rfind(|l| l.contains("info: built "))
        .unwrap_or_default()
        .to_owned();
    Child {
        out: section(&stdout, "OUT").unwrap_or_default(),
        log,
        failed,
        built_line,
    }
}

/// The cache's machine-code entries.
fn code_entries(cache: &Path) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = std::fs::read_dir(cache.join("code-v1"))
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|shard| std::fs::read_dir(shard.path()).ok())
        .flatten()
        .flatten()
        .map(|f| f.path())
        .collect();
    out.sort();
    out
}

const FILE_NAME: &str = "machine_code_cache";

#[test]
fn a_warm_build_skips_the_frontend_and_codegen_and_computes_the_same() {
    let dir = TempDir::new("hit");
    let cache = dir.0.join("cache");
    let uncached = build(&cache, "source", FILE_NAME, "", &[("FERROCL_CACHE", "off")]);
    assert!(!uncached.log.contains("cache"), "{}", uncached.log);
    assert!(code_entries(&cache).is_empty());
    assert!(!uncached.out.is_empty());
    let cold = build(&cache, "source", FILE_NAME, "", &[]);
    cold.assert_miss("not cached");
    assert!(
        cold.log.contains("stored in the program cache"),
        "{}",
        cold.log
    );
    assert_eq!(code_entries(&cache).len(), 1);
    let warm = build(&cache, "source", FILE_NAME, "", &[]);
    warm.assert_hit();
    assert!(
        warm.log.contains("OpenCL C from the program cache"),
        "{}",
        warm.log
    );
    assert_eq!(warm.out, cold.out, "the cached code computes the same bits");
    assert_eq!(warm.out, uncached.out, "as a build without the cache");
    // IL builds are cached the same way (the harness's IL is the same recipe's, so it may
    // already be there).
    let il = build(&cache, "il", FILE_NAME, "", &[]);
    assert!(il.log.contains("info: machine code "), "{}", il.log);
    let warm_il = build(&cache, "il", FILE_NAME, "", &[]);
    warm_il.assert_hit();
    assert_eq!(warm_il.out, uncached.out);
    // The thread count does not change the code: still a hit.
    build(&cache, "il", FILE_NAME, "", &[("FERROCL_THREADS", "1")]).assert_hit();
}

#[test]
fn a_setting_or_option_that_changes_the_code_misses() {
    let dir = TempDir::new("settings");
    let cache = dir.0.join("cache");
    let plain = build(&cache, "il", FILE_NAME, "", &[]);
    plain.assert_miss("not cached");
    let ftz = [("FERROCL_FTZ", "on")];
    let flushed = build(&cache, "il", FILE_NAME, "", &ftz);
    flushed.assert_miss("not cached");
    assert_ne!(
        flushed.out, plain.out,
        "flush-to-zero changes the subnormal products"
    );
    let again = build(&cache, "il", FILE_NAME, "", &ftz);
    again.assert_hit();
    assert_eq!(again.out, flushed.out);
    build(&cache, "il", FILE_NAME, "", &[]).assert_hit();
    // The key is what codegen gets: -cl-denorms-are-zero asks for the code FERROCL_FTZ=on
    // made.
    let daz = build(&cache, "il", FILE_NAME, "-cl-denorms-are-zero", &[]);
    daz.assert_hit();
    assert_eq!(daz.out, flushed.out);
    for vars in [
        [("FERROCL_CHECKED", "on")],
        [("FERROCL_VECTORIZE", "off")],
        [("FERROCL_KERNEL_TIMEOUT", "60")],
        [("FERROCL_ROUNDING", "rtz")],
    ] {
        let first = build(&cache, "il", FILE_NAME, "", &vars);
        first.assert_miss("not cached");
        build(&cache, "il", FILE_NAME, "", &vars).assert_hit();
    }
    let opt = build(&cache, "il", FILE_NAME, "-cl-opt-disable", &[]);
    opt.assert_miss("not cached");
}

#[test]
fn a_device_that_refuses_the_module_fails_the_build_as_without_the_cache() {
    let dir = TempDir::new("refuse");
    let cache = dir.0.join("cache");
    // Built and cached where the device allows halves and doubles …
    for file in ["half", "fpmode_double"] {
        let ok = build(&cache, "build", file, "", &[]);
        assert!(ok.failed.is_none(), "{file}: {:?}", ok.failed);
        build(&cache, "build", file, "", &[]).assert_hit();
    }
    // … then refused by a device without them, with the log of an uncached build.
    for (file, var, expected) in [
        (
            "half",
            "FERROCL_FP16",
            "half values need the Float16 capability",
        ),
        (
            "fpmode_double",
            "FERROCL_FP64",
            "capability Float64 is turned off",
        ),
    ] {
        let cached = build(&cache, "build", file, "", &[(var, "off")]);
        let uncached = build(
            &cache,
            "build",
            file,
            "",
            &[(var, "off"), ("FERROCL_CACHE", "off")],
        );
        let log = cached
            .failed
            .unwrap_or_else(|| panic!("{file} built with {var}=off"));
        assert!(log.contains(expected), "{log}");
        let plain = |log: &str| -> String {
            log.lines()
                .filter(|l| !l.starts_with("info:"))
                .collect::<Vec<_>>()
                .join("\n")
        };
        assert_eq!(plain(&log), plain(&uncached.failed.unwrap_or_default()));
    }
}

#[test]
fn a_damaged_machine_code_entry_is_rebuilt() {
    let dir = TempDir::new("damaged");
    let cache = dir.0.join("cache");
    let cold = build(&cache, "il", FILE_NAME, "", &[]);
    let entry = code_entries(&cache).pop().expect("a machine-code entry");
    let good = std::fs::read(&entry).unwrap();
    // Truncated (an interrupted copy), one byte changed in the machine code's part, empty.
    let mut flipped = good.clone();
    flipped[good.len() * 3 / 4] ^= 0x40;
    for bad in [good[..good.len() / 2].to_vec(), flipped, Vec::new()] {
        std::fs::write(&entry, &bad).unwrap();
        let rebuilt = build(&cache, "il", FILE_NAME, "", &[]);
        rebuilt.assert_miss("the cache entry was damaged; removed");
        assert_eq!(rebuilt.out, cold.out);
        assert_eq!(
            std::fs::read(&entry).unwrap(),
            good,
            "rebuilt and stored again, the same bytes"
        );
        build(&cache, "il", FILE_NAME, "", &[]).assert_hit();
    }
}
