//! Tiered code generation through the real loader (`FERROCL_BACKEND=tiered`, runtime
//! tiering.rs): a kernel starts on Cranelift's code; once its launches have run for
//! `FERROCL_TIER_UP_AFTER`, the wide backend rebuilds it in the background and later launches
//! run the wide code — with the same results bit for bit. Settings are read once per process,
//! so the test re-runs this binary as a child with the variables set, its stderr (the debug
//! log) going to a file the child reads to see when the wide code is ready. With the program
//! cache on, the wide build is stored, and a second process loads it at the kernel's first
//! launch instead of building it again.

mod common;

use std::process::Command;
use std::ptr;
use std::time::{Duration, Instant};

use common::{arg, arg_buf, check, cl, Env};
use opencl3::kernel::Kernel;

const CHILD: &str = "FERROCL_TIERING_TEST_CHILD";
const LOG: &str = "FERROCL_TIERING_TEST_LOG";

/// Runs test `name`'s body in a child process with `vars` set; returns the child's stderr.
/// In the child returns `None` and the caller runs the body.
fn in_child(name: &str, vars: &[(&str, &str)]) -> Option<String> {
    if std::env::var(CHILD).as_deref() == Ok(name) {
        return None;
    }
    let log =
        std::env::temp_dir().join(format!("ferrocl-tiering-{}-{name}.log", std::process::id()));
    let stderr = std::fs::File::create(&log).expect("child log file");
    let exe = std::env::current_exe().expect("test binary path");
    let out = Command::new(exe)
        .args([name, "--exact", "--nocapture", "--test-threads=1"])
        .env(CHILD, name)
        .env(LOG, &log)
        .env_remove("FERROCL_LOG")
        .env_remove("FERROCL_BACKEND")
        .env_remove("FERROCL_TIER_UP_AFTER")
        .env_remove("FERROCL_VECTORIZE")
        .envs(vars.iter().copied())
        .stderr(stderr)
        .output()
        .expect("run the test binary as a child");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = std::fs::read_to_string(&log).unwrap_or_default();
    let _ = std::fs::remove_file(&log);
    assert!(
        out.status.success(),
        "child {name} failed\n--- stdout ---\n{stdout}\n--- stderr ---\n{stderr}"
    );
    assert!(
        stdout.contains("1 passed"),
        "child {name} ran no test:\n{stdout}"
    );
    Some(stderr)
}

/// Float, double and integer work per work-item, with a loop: what the wide backend must
/// reproduce bit for bit (division, square roots, fused multiply-adds, conversions, rotates).
const SOURCE: &str = r#"
kernel void mix(global const float *a, global const uint *b, global float *out,
                global uint *bits, global double *dout, uint rounds) {
    size_t i = get_global_id(0);
    float x = a[i];
    uint h = b[i];
    double d = (double)x;
    for (uint r = 0; r < rounds; r++) {
        x = fma(x, 1.0001f, sqrt(fabs(x) + 1.0f)) / (1.5f + (float)(r & 3));
        h = rotate(h ^ (h >> 7), 5u) * 0x9E3779B1u + r;
        d = d * 0.999 + sqrt((double)h);
    }
    out[i] = x;
    bits[i] = h + convert_uint_sat(x * 1000.0f);
    dout[i] = d;
}
"#;

const N: usize = 1000;

struct Outputs {
    floats: Vec<u32>,
    words: Vec<u32>,
    doubles: Vec<u64>,
}

fn launch(env: &Env, kernel: &Kernel) -> Outputs {
    let a: Vec<f32> = (0..N).map(|i| (i as f32 - 500.0) * 0.37).collect();
    let b: Vec<u32> = (0..N as u32)
        .map(|i| i.wrapping_mul(2_654_435_761))
        .collect();
    let (ba, bb) = (env.buffer(&a), env.buffer(&b));
    let (out, bits, dout) = (
        env.buffer_filled(N, 0f32),
        env.buffer_filled(N, 0u32),
        env.buffer_filled(N, 0f64),
    );
    arg_buf(kernel, 0, &ba);
    arg_buf(kernel, 1, &bb);
    arg_buf(kernel, 2, &out);
    arg_buf(kernel, 3, &bits);
    arg_buf(kernel, 4, &dout);
    arg(kernel, 5, &200u32);
    let global = N;
    // SAFETY: the size outlives the call; the arguments are set above.
    let r = unsafe {
        env.queue
            .enqueue_nd_range_kernel(kernel.get(), 1, ptr::null(), &global, ptr::null(), &[])
    };
    check(cl(r), "clEnqueueNDRangeKernel");
    check(cl(env.queue.finish()), "clFinish");
    Outputs {
        floats: env.read(&out, N).iter().map(|f| f.to_bits()).collect(),
        words: env.read(&bits, N),
        doubles: env.read(&dout, N).iter().map(|d| d.to_bits()).collect(),
    }
}

fn same(a: &Outputs, b: &Outputs, what: &str) {
    for i in 0..N {
        assert_eq!(a.floats[i], b.floats[i], "{what}: out[{i}]");
        assert_eq!(a.words[i], b.words[i], "{what}: bits[{i}]");
        assert_eq!(a.doubles[i], b.doubles[i], "{what}: dout[{i}]");
    }
}

/// In a child: launches `mix` (on Cranelift's code first) until the log says its wide code is
/// ready, then a few more; every launch's results equal the first's bit for bit.
fn launch_until_wide() {
    let env = Env::new();
    if env.other_icd {
        return; // the variables are Ferrocl's
    }
    let log = std::path::PathBuf::from(std::env::var_os(LOG).expect("log path"));
    let program = env.program_from_source(SOURCE, "");
    let kernel = check(cl(Kernel::create(&program, "mix")), "clCreateKernel");
    let first = launch(&env, &kernel);
    // The wide build (or its load) runs in the background: launches go on (on Cranelift's
    // code) until the log says it is ready, then run it.
    let start = Instant::now();
    loop {
        let text = std::fs::read_to_string(&log).unwrap_or_default();
        if text.contains("later launches run it") {
            break;
        }
        assert!(
            !text.contains("stays on Cranelift"),
            "the wide build was refused:\n{text}"
        );
        assert!(
            start.elapsed() < Duration::from_secs(300),
            "no wide code after 300 s:\n{text}"
        );
        same(
            &launch(&env, &kernel),
            &first,
            "a launch while the wide build runs",
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    for _ in 0..3 {
        same(&launch(&env, &kernel), &first, "a launch of the wide code");
    }
}

/// A program cache of its own for a test's children, removed when dropped.
struct CacheDir(std::path::PathBuf);

impl CacheDir {
    fn new(name: &str) -> CacheDir {
        let dir = std::env::temp_dir().join(format!(
            "ferrocl-tiering-cache-{}-{name}",
            std::process::id()
        ));
        let _ = std::fs::remove_dir_all(&dir);
        CacheDir(dir)
    }

    fn path(&self) -> &str {
        self.0.to_str().expect("a UTF-8 temporary directory")
    }
}

impl Drop for CacheDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

#[test]
fn a_hot_kernel_moves_to_wide_code_with_the_same_results() {
    const NAME: &str = "a_hot_kernel_moves_to_wide_code_with_the_same_results";
    if std::env::var(CHILD).as_deref() == Ok(NAME) {
        return launch_until_wide();
    }
    for cache in ["off", "on"] {
        let dir = CacheDir::new(NAME);
        let stderr = in_child(
            NAME,
            &[
                ("FERROCL_BACKEND", "tiered"),
                // Its first launch is hot enough.
                ("FERROCL_TIER_UP_AFTER", "0.000001"),
                ("FERROCL_LOG", "debug"),
                ("FERROCL_CACHE", cache),
                ("FERROCL_CACHE_DIR", dir.path()),
            ],
        )
        .expect("the parent");
        assert!(
            stderr.contains("kernel mix: wide code built in"),
            "no tier-up line (cache {cache}):\n{stderr}"
        );
        assert_eq!(
            stderr.contains("stored in the program cache; later launches run it"),
            cache == "on",
            "the wide build is stored with the cache on only:\n{stderr}"
        );
        assert!(
            stderr.contains("(wide code)") && stderr.contains("code by the wide backend"),
            "the wide build's kernel line is missing:\n{stderr}"
        );
    }
}

#[test]
fn a_later_process_loads_the_stored_wide_code_at_the_first_launch() {
    const NAME: &str = "a_later_process_loads_the_stored_wide_code_at_the_first_launch";
    if std::env::var(CHILD).as_deref() == Ok(NAME) {
        return launch_until_wide();
    }
    let dir = CacheDir::new(NAME);
    let run = |after: &str| {
        in_child(
            NAME,
            &[
                ("FERROCL_BACKEND", "tiered"),
                ("FERROCL_TIER_UP_AFTER", after),
                ("FERROCL_LOG", "debug"),
                ("FERROCL_CACHE", "on"),
                ("FERROCL_CACHE_DIR", dir.path()),
            ],
        )
        .expect("the parent")
    };
    let first = run("0.000001");
    assert!(
        first.contains("kernel mix: wide code built in")
            && first.contains("stored in the program cache"),
        "the first process builds and stores the wide code:\n{first}"
    );
    // An hour of runs before a tier-up: only the stored build can make the code wide.
    let second = run("3600");
    assert!(
        second.contains("machine code from the program cache")
            || second.contains("program cache: hit"),
        "the second process loads the program's machine code:\n{second}"
    );
    assert!(
        second.contains("kernel mix: wide code loaded from the program cache"),
        "the second process loads the stored wide build:\n{second}"
    );
    assert!(
        !second.contains("wide code built in"),
        "the second process built the wide code again:\n{second}"
    );
}

#[test]
fn cranelift_alone_never_tiers_up() {
    let stderr = in_child(
        "cranelift_alone_never_tiers_up",
        &[
            ("FERROCL_BACKEND", "cranelift"),
            ("FERROCL_TIER_UP_AFTER", "0.000001"),
            ("FERROCL_LOG", "debug"),
        ],
    );
    let Some(stderr) = stderr else {
        let env = Env::new();
        if env.other_icd {
            return;
        }
        let program = env.program_from_source(SOURCE, "");
        let kernel = check(cl(Kernel::create(&program, "mix")), "clCreateKernel");
        let first = launch(&env, &kernel);
        for _ in 0..5 {
            same(&launch(&env, &kernel), &first, "a later launch");
        }
        return;
    };
    assert!(
        !stderr.contains("wide code"),
        "a Cranelift-only run tiered up:\n{stderr}"
    );
}
