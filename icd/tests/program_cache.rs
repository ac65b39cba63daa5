//! The persistent program cache of OpenCL C builds (runtime/src/program_cache.rs), through the
//! real loader. The cache outlives processes, so every build runs in a child process (this test
//! binary again, running `child_build`) with its own FERROCL_CACHE_DIR and FERROCL_LOG=info;
//! the child builds, runs and checks one kernel and prints the build log, which says whether
//! the module came from the cache.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use common::{arg_buf, check, cl, Env};
use opencl3::kernel::Kernel;

const CHILD: &str = "FERROCL_CACHE_TEST_CHILD";
const OPTIONS: &str = "FERROCL_CACHE_TEST_OPTIONS";
const EXPECT: &str = "FERROCL_CACHE_TEST_EXPECT";

/// `N` comes from an included header, `X` from the options.
const SOURCE: &str = "#include \"n.h\"\nkernel void k(global int *p) { p[0] = N + X; }";

/// The child's part: builds SOURCE with the options in OPTIONS, runs it on one work-item,
/// checks `p[0]` is EXPECT and prints the build log between markers.
#[test]
fn child_build() {
    if std::env::var_os(CHILD).is_none() {
        return;
    }
    let options = std::env::var(OPTIONS).expect(OPTIONS);
    let expect: i32 = std::env::var(EXPECT).expect(EXPECT).parse().expect(EXPECT);
    let env = Env::new();
    let program = env.program_from_source(SOURCE, &options);
    let log = program.get_build_log(env.device.id()).unwrap_or_default();
    let kernel = check(cl(Kernel::create(&program, "k")), "clCreateKernel");
    let out = env.buffer_filled(1, 0i32);
    arg_buf(&kernel, 0, &out);
    env.run(&kernel, &[1], None, None);
    assert_eq!(env.read(&out, 1)[0], expect, "options {options}");
    println!("<<<LOG\n{log}LOG>>>");
}

/// A fresh directory under the system's temporary directory, removed afterwards.
struct TempDir(PathBuf);

impl TempDir {
    fn new(tag: &str) -> TempDir {
        let dir =
            std::env::temp_dir().join(format!("ferrocl-cache-test-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("create a temporary directory");
        TempDir(dir)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        make_writable(&self.0);
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn make_writable(dir: &Path) {
    use std::os::unix::fs::PermissionsExt;
    let _ = std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o755));
    if let Ok(entries) = std::fs::read_dir(dir) {
        for e in entries.flatten() {
            if e.path().is_dir() {
                make_writable(&e.path());
            }
        }
    }
}

/// The command that runs `child_build` with the cache in `cache`, `options` and `vars`.
fn child_command(cache: &Path, options: &str, expect: i32, vars: &[(&str, &str)]) -> Command {
    let exe = std::env::current_exe().expect("test binary path");
    let mut cmd = Command::new(exe);
    cmd.args(["child_build", "--exact", "--nocapture", "--test-threads=1"])
        .env(CHILD, "1")
        .env(OPTIONS, options)
        .env(EXPECT, expect.to_string())
        .env("FERROCL_CACHE_DIR", cache)
        .env("FERROCL_LOG", "info");
    for var in [
        "FERROCL_CACHE",
        "FERROCL_CACHE_MAX_SIZE",
        "FERROCL_FP64",
        "FERROCL_FP16",
        "FERROCL_SUBGROUPS",
        "FERROCL_ROUNDING",
        "FERROCL_PROFILE",
    ] {
        cmd.env_remove(var);
    }
    cmd.envs(vars.iter().copied());
    cmd
}

/// The build log of a child, after checking it passed; and its stderr.
fn child_result(out: Output) -> (String, String) {
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(
        out.status.success() && stdout.contains("1 passed"),
        "child failed\n--- stdout ---\n{stdout}\n--- stderr ---\n{stderr}"
    );
    let log = stdout
        .split_once("<<<LOG\n")
        .and_then(|(_, rest)| rest.split_once("LOG>>>"))
        .map(|(log, _)| log.to_owned())
        .unwrap_or_else(|| panic!("no build log in the child's output:\n{stdout}"));
    (log, stderr)
}

/// Builds in a child; returns the build log and stderr.
fn build(cache: &Path, options: &str, expect: i32, vars: &[(&str, &str)]) -> (String, String) {
    let out = child_command(cache, options, expect, vars)
        .output()
        .expect("run the test binary as a child");
    child_result(out)
}

fn assert_hit(log: &str) {
    assert!(log.contains("from the program cache"), "not a hit:\n{log}");
}

fn assert_miss(log: &str, why: &str) {
    assert!(
        log.contains("info: OpenCL C compiled (") && log.contains(why),
        "not a miss because {why}:\n{log}"
    );
}

/// The cache's entry files of one kind: `v1` (SPIR-V) or `code-v1` (machine code).
fn entries_of(cache: &Path, kind: &str) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for shard in std::fs::read_dir(cache.join(kind))
        .into_iter()
        .flatten()
        .flatten()
    {
        for f in std::fs::read_dir(shard.path())
            .into_iter()
            .flatten()
            .flatten()
        {
            out.push(f.path());
        }
    }
    out.sort();
    out
}

/// The SPIR-V entries.
fn entries(cache: &Path) -> Vec<PathBuf> {
    entries_of(cache, "v1")
}

/// Both kinds of entries, which share the size bound.
fn cache_bytes(cache: &Path) -> u64 {
    entries(cache)
        .into_iter()
        .chain(entries_of(cache, "code-v1"))
        .map(|p| std::fs::metadata(p).map_or(0, |m| m.len()))
        .sum()
}

/// A header directory with `n.h` defining N, and the options that use it.
fn header_dir(dir: &TempDir, n: i32) -> String {
    let inc = dir.0.join("inc");
    std::fs::create_dir_all(&inc).unwrap();
    std::fs::write(inc.join("n.h"), format!("#define N {n}\n")).unwrap();
    format!("-I {}", inc.display())
}

#[test]
fn a_build_is_cached_and_each_change_that_matters_misses() {
    let dir = TempDir::new("hits");
    let cache = dir.0.join("cache");
    let inc = header_dir(&dir, 40);
    let x2 = format!("{inc} -DX=2");
    let (log, _) = build(&cache, &x2, 42, &[]);
    assert_miss(&log, "not cached");
    assert!(log.contains("stored in the program cache"), "{log}");
    assert_eq!(entries(&cache).len(), 1);
    assert_hit(&build(&cache, &x2, 42, &[]).0);
    // Options that do not reach clang, and another spelling of the same ones, hit.
    let same = format!("{inc} -D X=2 -cl-uniform-work-group-size -cl-denorms-are-zero");
    assert_hit(&build(&cache, &same, 42, &[]).0);
    // A changed option misses.
    assert_miss(
        &build(&cache, &format!("{inc} -DX=3"), 43, &[]).0,
        "not cached",
    );
    // A changed included header misses, and the new contents are used.
    std::fs::write(dir.0.join("inc/n.h"), "#define N 50\n").unwrap();
    assert_miss(
        &build(&cache, &x2, 52, &[]).0,
        "n.h changed since it was cached",
    );
    assert_hit(&build(&cache, &x2, 52, &[]).0);
    // Another device feature set misses, and is an entry of its own.
    let no_fp64 = [("FERROCL_FP64", "off")];
    assert_miss(&build(&cache, &x2, 52, &no_fp64).0, "not cached");
    assert_hit(&build(&cache, &x2, 52, &no_fp64).0);
    assert_hit(&build(&cache, &x2, 52, &[]).0);
    let no_sub_groups = [("FERROCL_SUBGROUPS", "off")];
    assert_miss(&build(&cache, &x2, 52, &no_sub_groups).0, "not cached");
    // Without FERROCL_LOG=info the build log says nothing of the cache.
    let (log, _) = build(&cache, &x2, 52, &[("FERROCL_LOG", "warn")]);
    assert!(!log.contains("cache"), "{log}");
    // FERROCL_CACHE=off neither reads nor writes.
    let before = entries(&cache).len();
    let (log, _) = build(
        &cache,
        &format!("{inc} -DX=9"),
        59,
        &[("FERROCL_CACHE", "off")],
    );
    assert!(!log.contains("cache"), "{log}");
    assert_eq!(entries(&cache).len(), before);
}

#[test]
fn processes_building_the_same_program_at_once() {
    let dir = TempDir::new("concurrent");
    let cache = dir.0.join("cache");
    let options = format!("{} -DX=1", header_dir(&dir, 6));
    let children: Vec<_> = (0..4)
        .map(|_| {
            child_command(&cache, &options, 7, &[])
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .expect("spawn a child")
        })
        .collect();
    for child in children {
        let out = child.wait_with_output().expect("wait for a child");
        child_result(out);
    }
    // One entry of each kind, whole, and no temporary file left.
    assert_eq!(entries(&cache).len(), 1, "{:?}", entries(&cache));
    assert_eq!(entries_of(&cache, "code-v1").len(), 1);
    assert_hit(&build(&cache, &options, 7, &[]).0);
}

#[test]
fn a_damaged_entry_is_rebuilt() {
    let dir = TempDir::new("corrupt");
    let cache = dir.0.join("cache");
    let options = format!("{} -DX=1", header_dir(&dir, 1));
    build(&cache, &options, 2, &[]);
    let entry = entries(&cache).pop().expect("an entry");
    let good = std::fs::read(&entry).unwrap();
    // Truncated (an interrupted copy), then one byte changed in the middle.
    std::fs::write(&entry, &good[..good.len() * 2 / 3]).unwrap();
    assert_miss(&build(&cache, &options, 2, &[]).0, "damaged");
    assert_eq!(
        std::fs::read(&entry).unwrap(),
        good,
        "rebuilt and stored again"
    );
    let mut bad = good.clone();
    bad[good.len() / 2] ^= 1;
    std::fs::write(&entry, &bad).unwrap();
    assert_miss(&build(&cache, &options, 2, &[]).0, "damaged");
    assert_hit(&build(&cache, &options, 2, &[]).0);
    // An empty file too.
    std::fs::write(&entry, b"").unwrap();
    assert_miss(&build(&cache, &options, 2, &[]).0, "damaged");
}

#[test]
fn a_cache_that_cannot_be_written_never_fails_a_build() {
    let dir = TempDir::new("readonly");
    let options = format!("{} -DX=1", header_dir(&dir, 1));
    // The cache directory's place is taken by a file: nothing can be created there.
    let blocked = dir.0.join("file");
    std::fs::write(&blocked, b"not a directory").unwrap();
    for cache in [blocked.clone(), blocked.join("cache")] {
        let (log, stderr) = build(&cache, &options, 2, &[]);
        assert!(log.contains("not stored in the program cache"), "{log}");
        assert!(
            log.contains("info: machine code compiled (not cached); not stored"),
            "{log}"
        );
        assert!(
            stderr.contains("ferrocl: info: program cache: not stored"),
            "{stderr}"
        );
    }
    // A read-only directory (not for root, whom permissions do not stop): what is there is
    // still used, what is not is built and not stored.
    use std::os::unix::fs::PermissionsExt;
    let cache = dir.0.join("cache");
    build(&cache, &options, 2, &[]);
    for kind in ["v1", "code-v1"] {
        for d in std::fs::read_dir(cache.join(kind))
            .unwrap()
            .flatten()
            .map(|e| e.path())
            .chain([cache.join(kind)])
        {
            std::fs::set_permissions(&d, std::fs::Permissions::from_mode(0o555)).unwrap();
        }
    }
    std::fs::set_permissions(&cache, std::fs::Permissions::from_mode(0o555)).unwrap();
    if std::fs::write(cache.join("v1/probe"), b"").is_ok() {
        eprintln!("running as root: the read-only directory case is not checked");
        return;
    }
    let (log, _) = build(&cache, &options, 2, &[]);
    assert_hit(&log);
    assert!(
        log.contains("info: machine code from the program cache"),
        "{log}"
    );
    let other = format!("{} -DX=5", header_dir(&dir, 1));
    let (log, _) = build(&cache, &other, 6, &[]);
    assert!(log.contains("not stored in the program cache"), "{log}");
    assert!(
        log.contains("info: machine code compiled (not cached); not stored"),
        "{log}"
    );
}

#[test]
fn the_cache_stays_within_its_bound() {
    let dir = TempDir::new("bound");
    let cache = dir.0.join("cache");
    let inc = header_dir(&dir, 0);
    build(&cache, &format!("{inc} -DX=0"), 0, &[]);
    let one = cache_bytes(&cache);
    assert!(one > 0);
    // Room for four and a half entries.
    let bound = (one * 9 / 2).to_string();
    let vars = [("FERROCL_CACHE_MAX_SIZE", bound.as_str())];
    for x in 1..8 {
        build(&cache, &format!("{inc} -DX={x}"), x, &vars);
        assert!(
            cache_bytes(&cache) <= one * 9 / 2,
            "{x}: {} bytes",
            cache_bytes(&cache)
        );
    }
    // The most recent builds are there, the oldest are not.
    assert_hit(&build(&cache, &format!("{inc} -DX=7"), 7, &vars).0);
    assert_hit(&build(&cache, &format!("{inc} -DX=6"), 6, &vars).0);
    assert_miss(
        &build(&cache, &format!("{inc} -DX=0"), 0, &vars).0,
        "not cached",
    );
}

/// Builds in a child that must finish within a minute and within 4 GiB of address space: a
/// cache read that blocks would hang it, one that never ends would exhaust the machine.
fn bounded_build(cache: &Path, options: &str, expect: i32) -> (String, String) {
    use std::os::unix::process::CommandExt;
    let mut cmd = child_command(cache, options, expect, &[]);
    cmd.stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    // SAFETY: setrlimit is async-signal-safe; the closure runs in the forked child before exec
    // and touches nothing of the parent.
    unsafe {
        cmd.pre_exec(|| {
            let limit = libc::rlimit {
                rlim_cur: 4 << 30,
                rlim_max: 4 << 30,
            };
            if libc::setrlimit(libc::RLIMIT_AS, &limit) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let mut child = cmd.spawn().expect("spawn a child");
    let start = std::time::Instant::now();
    while child.try_wait().expect("wait for the child").is_none() {
        if start.elapsed() > std::time::Duration::from_secs(60) {
            let _ = child.kill();
            let out = child.wait_with_output().expect("the child's output");
            panic!(
                "the build did not finish within 60 s\n--- stderr ---\n{}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    child_result(child.wait_with_output().expect("the child's output"))
}

#[test]
fn an_entry_that_is_a_fifo_or_a_link_to_dev_zero_is_a_miss() {
    let dir = TempDir::new("not-a-file");
    let cache = dir.0.join("cache");
    let options = format!("{} -DX=1", header_dir(&dir, 2));
    build(&cache, &options, 3, &[]);
    for kind in ["v1", "code-v1"] {
        for bad in ["fifo", "link"] {
            let entry = entries_of(&cache, kind).pop().expect("an entry");
            std::fs::remove_file(&entry).unwrap();
            if bad == "fifo" {
                let path = std::ffi::CString::new(entry.as_os_str().as_encoded_bytes()).unwrap();
                // SAFETY: a NUL-terminated path.
                assert_eq!(unsafe { libc::mkfifo(path.as_ptr(), 0o644) }, 0);
            } else {
                std::os::unix::fs::symlink("/dev/zero", &entry).unwrap();
            }
            let (log, _) = bounded_build(&cache, &options, 3);
            let why = "not a regular file within the cache's size bound; removed";
            let line = match kind {
                "v1" => "info: OpenCL C compiled (",
                _ => "info: machine code compiled (",
            };
            assert!(
                log.lines().any(|l| l.starts_with(line) && l.contains(why)),
                "{kind} {bad}: not a miss because {why}:\n{log}"
            );
            // Built again and stored in its place.
            let meta = std::fs::symlink_metadata(&entry).expect("the entry is stored again");
            assert!(meta.file_type().is_file(), "{kind} {bad}: {meta:?}");
            assert_hit(&build(&cache, &options, 3, &[]).0);
        }
    }
}
