//! `ferrocl-bench`: command line, platform selection and the measurement loop that runs each
//! kernel on Ferrocl (SPIR-V), PoCL and Intel's CPU runtime (OpenCL C), alternating repetitions,
//! checking every result.

mod check;
mod cl;
mod gaps;
mod images;
mod kernels;
mod patterns;
mod probe;
mod report;
mod spirv;
mod stats;
mod svm;
mod watchdog;

use cl::{Api, Buffer, CommandBuffer, Context, Kernel, Program, ProgramCode};
use kernels::{Arg, Case, Class, Op, Spec};
use report::{KernelResult, PlatResult, RunInfo, Status};
use std::cell::RefCell;
use std::path::PathBuf;
use std::rc::Rc;
use std::time::Instant;

const USAGE: &str = "\
usage: ferrocl-bench [options]
  --quick              small sizes, few repetitions (under a minute)
  --kernel NAME        run only kernels whose name contains NAME (repeatable, or comma-separated)
  --platform WHICH     ferrocl | pocl | intel | both (ferrocl,pocl) | all (ferrocl,pocl,intel),
                       or a comma-separated list such as ferrocl,intel (default both)
  --reps N             timed repetitions per platform (default 10, quick 3)
  --json PATH          write JSON results to PATH
  --csv PATH           write CSV results to PATH
  --no-save            do not write bench/results/<date>-<hostname>[-quick].{json,csv}
  --list               list the kernels and exit
  --timeout SECONDS    abort (exit 3) when one build or launch takes longer (default 600)
  --roofline           only measure and print the STREAM and FMA probes
  --ferrocl-name TEXT  platform-name substring for the Ferrocl slot (default Ferrocl)
  --ferrocl-source     give the Ferrocl slot OpenCL C instead of SPIR-V (clCreateProgramWithSource),
                       built cold (empty program cache), then again from the cache (F warm row)
  --svm                only compare SVM with buffers (copy, fill, a triad kernel) on each platform
  --images             only run the image kernels (blur, NV12 -> RGBA, 3D gradient) on each platform
                       (sets FERROCL_IMAGES=on for Ferrocl)
Ferrocl runs SPIR-V built with the driver's OpenCL C recipe (clang-15/opt-15/llvm-spirv-15);
PoCL and Intel's CPU runtime (platform \"Intel(R) OpenCL\", see bench/README.md for how to
load it) run the same OpenCL C. POCL_KERNEL_CACHE=0 is set unless already set, and so is
FERROCL_CACHE=off for SPIR-V builds (the platforms build cold). FERROCL_TIER_UP_AFTER is
set to 1 us unless already set, and every platform pauses 1 s between a kernel's first launch
and its timed repetitions: Ferrocl's tiered kernels are timed on the wide code a hot kernel
runs (FERROCL_BACKEND=cranelift times Cranelift's code).";

struct Options {
    quick: bool,
    kernels: Vec<String>,
    ferrocl: bool,
    pocl: bool,
    intel: bool,
    reps: Option<usize>,
    json: Option<PathBuf>,
    csv: Option<PathBuf>,
    save: bool,
    list: bool,
    timeout: u64,
    roofline_only: bool,
    ferrocl_name: String,
    ferrocl_source: bool,
    svm: bool,
    images: bool,
}

fn parse_args(args: impl Iterator<Item = String>) -> Result<Options, String> {
    let mut o = Options {
        quick: false,
        kernels: Vec::new(),
        ferrocl: true,
        pocl: true,
        intel: false,
        reps: None,
        json: None,
        csv: None,
        save: true,
        list: false,
        timeout: 600,
        roofline_only: false,
        ferrocl_name: "Ferrocl".into(),
        ferrocl_source: false,
        svm: false,
        images: false,
    };
    let mut args = args.peekable();
    while let Some(a) = args.next() {
        let mut value = |name: &str| args.next().ok_or_else(|| format!("{name} needs a value"));
        match a.as_str() {
            "--quick" => o.quick = true,
            "--kernel" => o
                .kernels
                .extend(value("--kernel")?.split(',').map(str::to_string)),
            "--platform" => {
                (o.ferrocl, o.pocl, o.intel) = (false, false, false);
                for p in value("--platform")?.to_ascii_lowercase().split(',') {
                    match p.trim() {
                        "ferrocl" => o.ferrocl = true,
                        "pocl" => o.pocl = true,
                        "intel" => o.intel = true,
                        "both" => (o.ferrocl, o.pocl) = (true, true),
                        "all" => (o.ferrocl, o.pocl, o.intel) = (true, true, true),
                        p => {
                            return Err(format!(
                                "unknown platform {p:?} (ferrocl, pocl, intel, both, all, or a comma list)"
                            ))
                        }
                    }
                }
            }
            "--reps" => {
                let n: usize = value("--reps")?
                    .parse()
                    .map_err(|e| format!("--reps: {e}"))?;
                o.reps = Some(n.max(1));
            }
            "--json" => o.json = Some(value("--json")?.into()),
            "--csv" => o.csv = Some(value("--csv")?.into()),
            "--no-save" => o.save = false,
            "--list" => o.list = true,
            "--timeout" => {
                o.timeout = value("--timeout")?
                    .parse()
                    .map_err(|e| format!("--timeout: {e}"))?;
            }
            "--roofline" => o.roofline_only = true,
            "--ferrocl-name" => o.ferrocl_name = value("--ferrocl-name")?,
            "--ferrocl-source" => o.ferrocl_source = true,
            "--svm" => o.svm = true,
            "--images" => o.images = true,
            "-h" | "--help" => return Err(String::new()),
            other => return Err(format!("unknown argument {other:?}")),
        }
    }
    Ok(o)
}

/// How a platform slot finds its platform, by name, among those `clGetPlatformIDs` returns.
enum Find {
    /// The name contains this lower-case text (case-insensitive).
    Contains(String),
    /// Intel's CPU runtime (`is_intel_cpu`).
    IntelCpu,
}

impl Find {
    fn matches(&self, name: &str) -> bool {
        match self {
            Find::Contains(needle) => name.to_ascii_lowercase().contains(needle.as_str()),
            Find::IntelCpu => is_intel_cpu(name),
        }
    }
}

/// Whether a platform name is Intel's CPU runtime: "Intel(R) OpenCL" (oneAPI, the PyPI wheel
/// `intel-opencl-rt`) or "Intel(R) CPU Runtime for OpenCL(TM) Applications" (older releases),
/// not Intel's GPU ("Intel(R) OpenCL Graphics", "… HD Graphics") or FPGA-emulation platforms.
fn is_intel_cpu(name: &str) -> bool {
    let n = name.to_ascii_lowercase();
    n.starts_with("intel") && n.contains("opencl") && !n.contains("graphics") && !n.contains("fpga")
}

/// A platform under test.
struct Plat {
    label: &'static str,
    ctx: Context,
    /// Programs are created from SPIR-V (Ferrocl) rather than OpenCL C (PoCL).
    il: bool,
    /// Ferrocl from OpenCL C: each kernel is built a second time, from its program cache.
    rebuild_cached: bool,
}

/// A kernel ready to launch on one platform.
struct Ready {
    /// None for host commands (`Op` other than `Kernel`), which build no program.
    _program: Option<Program>,
    kernel: Option<Kernel>,
    /// `Op::CreateFill` replaces the output buffer at each launch.
    bufs: RefCell<Vec<Buffer>>,
    recorded: Recorded,
}

impl Ready {
    fn kernel(&self) -> Result<&Kernel, String> {
        self.kernel.as_ref().ok_or_else(|| "no kernel".to_string())
    }
}

/// The launch rows with command-buffers: the launches recorded once, and how many.
type Recorded = Option<(CommandBuffer, usize)>;

/// One launch of the case, or one enqueue of its command-buffer, or its host command; the
/// launches it makes.
fn launch_once(p: &Plat, spec: &Spec, case: &Case, rd: &Ready) -> Result<usize, String> {
    if spec.extra.op != Op::Kernel {
        host_command(p, spec.extra.op, case, rd, false)?;
        return Ok(1);
    }
    match &rd.recorded {
        Some((cb, n)) => {
            cb.enqueue()?;
            Ok(*n)
        }
        None => {
            p.ctx
                .enqueue(rd.kernel()?, &case.global, case.local.as_deref(), false)?;
            Ok(1)
        }
    }
}

/// Enqueues a host command of the case; with `timed`, waits for it and returns its time in
/// ms: from its profiling event, or for `Op::CreateFill` the host time of creating the
/// buffer, filling it and `clFinish` (the previous buffer is released before, untimed).
fn host_command(
    p: &Plat,
    op: Op,
    case: &Case,
    rd: &Ready,
    timed: bool,
) -> Result<Option<f64>, String> {
    let out = case.output;
    let event = match op {
        Op::Kernel => unreachable!("kernels are launched, not host commands"),
        Op::Fill(pattern) => p.ctx.fill(&rd.bufs.borrow()[out], &pattern, timed)?,
        Op::Copy => {
            let bufs = rd.bufs.borrow();
            p.ctx.copy(&bufs[0], &bufs[out], timed)?
        }
        Op::CreateFill(pattern) => {
            drop(rd.bufs.borrow_mut().remove(out));
            let t0 = Instant::now();
            let buf = p.ctx.buffer(case.bufs[out].bytes, None)?;
            p.ctx.fill(&buf, &pattern, false)?;
            p.ctx.finish()?;
            let ms = t0.elapsed().as_secs_f64() * 1e3;
            rd.bufs.borrow_mut().insert(out, buf);
            return Ok(timed.then_some(ms));
        }
    };
    event
        .map(|e| e.profiled_ns().map(|ns| ns as f64 / 1e6))
        .transpose()
}

fn prepare(p: &Plat, spec: &Spec, case: &Case, r: &mut PlatResult) -> Option<Ready> {
    if let Some(ext) = spec.extra.requires {
        match p.ctx.has_extension(ext) {
            Ok(true) => {}
            Ok(false) => {
                r.status = Status::Unsupported(format!("the device lacks {ext}"));
                return None;
            }
            Err(e) => {
                r.status = Status::Error(e);
                return None;
            }
        }
    }
    if spec.extra.op != Op::Kernel {
        return match case
            .bufs
            .iter()
            .map(|b| p.ctx.buffer(b.bytes, b.init.as_deref()))
            .collect::<Result<Vec<_>, _>>()
        {
            Ok(bufs) => Some(Ready {
                _program: None,
                kernel: None,
                bufs: RefCell::new(bufs),
                recorded: None,
            }),
            Err(e) => {
                r.status = Status::Error(e);
                None
            }
        };
    }
    let code = if p.il {
        match spirv::compile(spec.source) {
            Ok(words) => ProgramCode::Il(words),
            Err(e) => {
                r.status = Status::Unsupported(format!("SPIR-V compile: {e}"));
                return None;
            }
        }
    } else {
        ProgramCode::Source(source_for(p, spec.name, spec.source))
    };
    let (program, took) = match p.ctx.build(&code, "") {
        Ok(v) => v,
        Err(e) => {
            r.status = Status::Unsupported(e);
            return None;
        }
    };
    r.build_ms = Some(took.as_secs_f64() * 1e3);
    if let ProgramCode::Il(words) = &code {
        r.spirv_instructions = Some(spirv::instruction_count(words));
    }
    let setup = || -> Result<(Kernel, Vec<Buffer>, Recorded), String> {
        let kernel = p.ctx.kernel(&program, spec.entry)?;
        let bufs = case
            .bufs
            .iter()
            .map(|b| p.ctx.buffer(b.bytes, b.init.as_deref()))
            .collect::<Result<Vec<_>, _>>()?;
        set_args(&kernel, case, &bufs)?;
        let recorded = match spec.class {
            Class::Launch { recorded, sync } if recorded > 0 => {
                let local = case.local.as_deref();
                let cb = p
                    .ctx
                    .command_buffer(&kernel, &case.global, local, recorded, !sync)?;
                Some((cb, recorded))
            }
            _ => None,
        };
        Ok((kernel, bufs, recorded))
    };
    match setup() {
        Ok((kernel, bufs, recorded)) => Some(Ready {
            _program: Some(program),
            kernel: Some(kernel),
            bufs: RefCell::new(bufs),
            recorded,
        }),
        Err(e) => {
            r.status = Status::Unsupported(e);
            None
        }
    }
}

/// The OpenCL C a platform builds for kernel `name`. Ferrocl's from-source builds must be cold
/// where the table says so, and two kernels share a source (the launch kernels), so Ferrocl
/// gets it with a comment naming the kernel: a program cache entry of its own.
fn source_for(p: &Plat, name: &str, source: &str) -> String {
    if p.rebuild_cached {
        format!("{source}\n// ferrocl-bench: {name}\n")
    } else {
        source.to_string()
    }
}

fn set_args(kernel: &Kernel, case: &Case, bufs: &[Buffer]) -> Result<(), String> {
    for (i, arg) in case.args.iter().enumerate() {
        match arg {
            Arg::Buf(b) => kernel.set_buffer(i as u32, &bufs[*b])?,
            Arg::U32(v) => kernel.set_bytes(i as u32, &v.to_ne_bytes())?,
            Arg::F32(v) => kernel.set_bytes(i as u32, &v.to_ne_bytes())?,
        }
    }
    Ok(())
}

/// Ferrocl from OpenCL C: builds the kernel's source again, now that the program cache holds
/// the first build, and launches it once on the first build's buffers, checking the result.
fn rebuild_cached(
    p: &Plat,
    spec: &Spec,
    case: &Case,
    ready: &Ready,
    r: &mut PlatResult,
) -> Result<Result<(), String>, String> {
    let source = source_for(p, spec.name, spec.source);
    let (program, took) = p.ctx.build(&ProgramCode::Source(source), "")?;
    r.warm_build_ms = Some(took.as_secs_f64() * 1e3);
    let kernel = p.ctx.kernel(&program, spec.entry)?;
    set_args(&kernel, case, &ready.bufs.borrow())?;
    reset(p, case, ready)?;
    let t0 = Instant::now();
    p.ctx
        .enqueue(&kernel, &case.global, case.local.as_deref(), false)?;
    p.ctx.finish()?;
    r.warm_first_ms = Some(t0.elapsed().as_secs_f64() * 1e3);
    verify(p, spec, case, ready, 1)
}

/// Rewrites the buffers that must start fresh for each launch (counters, histogram bins).
fn reset(p: &Plat, case: &Case, ready: &Ready) -> Result<(), String> {
    for (spec, buf) in case.bufs.iter().zip(ready.bufs.borrow().iter()) {
        if spec.reset {
            let zeros;
            let data = match &spec.init {
                Some(d) => d.as_slice(),
                None => {
                    zeros = vec![0u8; spec.bytes];
                    &zeros
                }
            };
            p.ctx.write(buf, data)?;
        }
    }
    Ok(())
}

/// Reads the output back (only `gaps::sample_regions` of it after a host command) and
/// checks it.
fn verify(
    p: &Plat,
    spec: &Spec,
    case: &Case,
    ready: &Ready,
    launches: usize,
) -> Result<Result<(), String>, String> {
    let bufs = ready.bufs.borrow();
    let buf = &bufs[case.output];
    let out = if spec.extra.op.sampled() {
        let mut bytes = Vec::new();
        for r in gaps::sample_regions(buf.size) {
            bytes.extend(p.ctx.read_at(buf, r.start, r.len())?);
        }
        bytes
    } else {
        p.ctx.read(buf)?
    };
    Ok((case.check)(&out, launches))
}

/// One timed repetition: kernel time from profiling events, or host time per launch.
fn timed(p: &Plat, spec: &Spec, case: &Case, ready: &Ready) -> Result<f64, String> {
    reset(p, case, ready)?;
    let local = case.local.as_deref();
    if spec.extra.op != Op::Kernel {
        return host_command(p, spec.extra.op, case, ready, true)?
            .ok_or_else(|| "no time".to_string());
    }
    match spec.class {
        Class::Launch { sync, .. } => {
            // A command-buffer of n launches is enqueued launches / n times.
            let per = ready.recorded.as_ref().map_or(1, |(_, n)| *n);
            let enqueues = case.launches / per;
            let t0 = Instant::now();
            for _ in 0..enqueues {
                launch_once(p, spec, case, ready)?;
                if sync {
                    p.ctx.finish()?;
                }
            }
            p.ctx.finish()?;
            Ok(t0.elapsed().as_secs_f64() * 1e3 / (enqueues * per) as f64)
        }
        _ => {
            let ev = p.ctx.enqueue(ready.kernel()?, &case.global, local, true)?;
            let ns = ev.expect("event requested").profiled_ns()?;
            Ok(ns as f64 / 1e6)
        }
    }
}

/// The pause between the first launch and the timed repetitions (see `run_kernel`): longer
/// than the wide backend's build of the benchmark's largest kernels on a loaded 2-core machine.
const SETTLE: std::time::Duration = std::time::Duration::from_millis(1000);

fn run_kernel(plats: &[Plat], spec: &Spec, quick: bool, reps: usize, index: usize) -> KernelResult {
    let t_ref = Instant::now();
    let case = (spec.make)(quick);
    eprintln!(
        "[{}] {} ({}), reference {:.1} s",
        index + 1,
        spec.name,
        case.size,
        t_ref.elapsed().as_secs_f64()
    );
    let mut results: Vec<PlatResult> = plats
        .iter()
        .map(|p| PlatResult {
            platform: p.label,
            status: Status::Ok,
            build_ms: None,
            spirv_instructions: None,
            first_ms: None,
            warm_build_ms: None,
            warm_first_ms: None,
            samples_ms: Vec::new(),
        })
        .collect();
    // Alternate which platform goes first, per kernel for the build and per repetition after.
    let order = |k: usize| -> Vec<usize> {
        let mut o: Vec<usize> = (0..plats.len()).collect();
        if k % 2 == 1 {
            o.reverse();
        }
        o
    };
    let mut ready: Vec<Option<Ready>> = plats.iter().map(|_| None).collect();
    for i in order(index) {
        let (p, r) = (&plats[i], &mut results[i]);
        watchdog::doing(&format!(
            "{} on {}: build and first launch",
            spec.name, p.label
        ));
        let Some(rd) = prepare(p, spec, &case, r) else {
            continue;
        };
        let first = (|| {
            reset(p, &case, &rd)?;
            let t0 = Instant::now();
            let launched = launch_once(p, spec, &case, &rd)?;
            p.ctx.finish()?;
            r.first_ms = Some(t0.elapsed().as_secs_f64() * 1e3);
            if let Err(wrong) = verify(p, spec, &case, &rd, launched)? {
                return Ok(Err(wrong));
            }
            if p.rebuild_cached && spec.extra.op == Op::Kernel {
                watchdog::doing(&format!(
                    "{} on {}: cached build and first launch",
                    spec.name, p.label
                ));
                return rebuild_cached(p, spec, &case, &rd, r)
                    .map(|checked| checked.map_err(|e| format!("after the cached build: {e}")));
            }
            Ok(Ok(()))
        })();
        match first {
            Ok(Ok(())) => ready[i] = Some(rd),
            Ok(Err(e)) => r.status = Status::Fail(e),
            Err(e) => r.status = Status::Error(e),
        }
    }
    // Steady state: Ferrocl's tiered kernels start their wide build at the first launch (the
    // bench sets FERROCL_TIER_UP_AFTER, see main); every platform gets the same pause for it
    // to finish before the timed repetitions, which then measure the code a hot kernel runs.
    if ready.iter().any(Option::is_some) {
        std::thread::sleep(SETTLE);
    }
    for rep in 0..reps {
        for i in order(rep) {
            let Some(rd) = &ready[i] else { continue };
            watchdog::doing(&format!(
                "{} on {}: repetition {}",
                spec.name,
                plats[i].label,
                rep + 1
            ));
            // Poison the output before the last repetition, so the final check sees that launch.
            if rep + 1 == reps && !case.bufs[case.output].reset {
                let poison = vec![0xFFu8; case.bufs[case.output].bytes];
                let written = plats[i].ctx.write(&rd.bufs.borrow()[case.output], &poison);
                if let Err(e) = written {
                    results[i].status = Status::Error(e);
                    ready[i] = None;
                    continue;
                }
            }
            match timed(&plats[i], spec, &case, rd) {
                Ok(ms) => results[i].samples_ms.push(ms),
                Err(e) => {
                    results[i].status = Status::Error(e);
                    ready[i] = None;
                }
            }
        }
    }
    watchdog::idle();
    // The last repetition's output must be right too.
    for (i, rd) in ready.iter().enumerate() {
        let Some(rd) = rd else { continue };
        match verify(&plats[i], spec, &case, rd, case.launches) {
            Ok(Ok(())) => {}
            Ok(Err(e)) => results[i].status = Status::Fail(format!("after repetitions: {e}")),
            Err(e) => results[i].status = Status::Error(e),
        }
    }
    for r in &results {
        eprintln!(
            "    {:<8} {}  build {} ms, first {} ms, median {} ms",
            r.platform,
            report::Status::label(&r.status),
            stats::format_ms(r.build_ms),
            stats::format_ms(r.first_ms),
            stats::format_ms(r.median_ms())
        );
    }
    KernelResult {
        name: spec.name,
        class: spec.class,
        int_ops: spec.extra.int_ops,
        size: case.size,
        bytes: case.bytes,
        flops: case.flops,
        results,
    }
}

/// Builds and runs a trivial program once per platform, untimed, so one-time platform start-up
/// (compiler libraries loaded, thread pools started) is not charged to the first kernel.
fn warm_up(plats: &[Plat]) {
    let (entry, source) = ("tiny", include_str!("../kernels/tiny.cl"));
    for p in plats {
        let code = if p.il {
            match spirv::compile(source) {
                Ok(w) => ProgramCode::Il(w),
                Err(_) => continue,
            }
        } else {
            ProgramCode::Source(source_for(p, "warm-up", source))
        };
        let run = || -> Result<(), String> {
            let (program, _) = p.ctx.build(&code, "")?;
            let kernel = p.ctx.kernel(&program, entry)?;
            let buf = p.ctx.buffer(4, Some(&[0; 4]))?;
            kernel.set_buffer(0, &buf)?;
            p.ctx.enqueue(&kernel, &[1], None, false)?;
            p.ctx.finish()
        };
        if let Err(e) = run() {
            eprintln!("{}: warm-up failed: {e}", p.label);
        }
    }
}

/// UTC date `YYYY-MM-DD` and time `YYYY-MM-DDTHH:MM:SSZ` from the system clock.
fn utc_now() -> (String, String) {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs()) as i64;
    let (days, rem) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    // Howard Hinnant's days-to-civil algorithm.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    let date = format!("{y:04}-{m:02}-{d:02}");
    let time = format!(
        "{date}T{:02}:{:02}:{:02}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    );
    (date, time)
}

fn hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .or_else(|_| std::fs::read_to_string("/etc/hostname"))
        .map(|s| s.trim().to_string())
        .ok()
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| "unknown-host".into())
}

fn cpu_model() -> String {
    std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split(':').nth(1))
                .map(|m| m.trim().to_string())
        })
        .unwrap_or_default()
}

fn write_file(path: &PathBuf, text: &str) {
    if let Some(dir) = path.parent() {
        let _ = std::fs::create_dir_all(dir);
    }
    match std::fs::write(path, text) {
        Ok(()) => println!("wrote {}", path.display()),
        Err(e) => eprintln!("cannot write {}: {e}", path.display()),
    }
}

fn main() {
    let opts = match parse_args(std::env::args().skip(1)) {
        Ok(o) => o,
        Err(e) => {
            if !e.is_empty() {
                eprintln!("ferrocl-bench: {e}");
            }
            eprintln!("{USAGE}");
            std::process::exit(if e.is_empty() { 0 } else { 2 });
        }
    };
    if opts.images && std::env::var_os("FERROCL_IMAGES").is_none() {
        // Before the first CL call: Ferrocl reads its settings once.
        std::env::set_var("FERROCL_IMAGES", "on");
    }
    let specs: Vec<Spec> = kernels::all()
        .into_iter()
        .filter(|s| {
            opts.kernels.is_empty() || opts.kernels.iter().any(|k| s.name.contains(k.as_str()))
        })
        .collect();
    if opts.list {
        for s in kernels::all() {
            let needs = s
                .extra
                .requires
                .map_or(String::new(), |e| format!(" (needs {e})"));
            println!("{:<17} {}{needs}", s.name, s.class.label());
        }
        return;
    }
    if opts.roofline_only {
        let r = probe::measure(opts.quick);
        println!(
            "STREAM triad {:.1} GB/s, FMA peak {:.1} GFLOP/s ({}, {} threads)",
            r.stream_bytes_per_s / 1e9,
            r.fma_flops_per_s / 1e9,
            r.fma_kind,
            r.threads
        );
        return;
    }
    if specs.is_empty() {
        eprintln!(
            "ferrocl-bench: no kernel matches {:?} (see --list)",
            opts.kernels
        );
        std::process::exit(2);
    }
    // Cold PoCL builds: must be set before PoCL is loaded.
    if std::env::var_os("POCL_KERNEL_CACHE").is_none() {
        std::env::set_var("POCL_KERNEL_CACHE", "0");
    }
    // Ferrocl from OpenCL C: its program cache starts empty, so the first build of each
    // kernel is cold and the second one (the "F warm" row) is served by the cache. Set before
    // the driver is loaded, which reads it once.
    let cache_dir = opts.ferrocl_source.then(|| {
        let dir = std::env::temp_dir().join(format!("ferrocl-bench-cache-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::env::set_var("FERROCL_CACHE_DIR", &dir);
        std::env::remove_var("FERROCL_CACHE");
        dir
    });
    // From SPIR-V the program cache would serve the machine code of an earlier run: cold
    // builds, as PoCL's.
    if !opts.ferrocl_source && std::env::var_os("FERROCL_CACHE").is_none() {
        std::env::set_var("FERROCL_CACHE", "off");
    }
    // Ferrocl tiers kernels up after FERROCL_TIER_UP_AFTER of run time; here at their first
    // launch, so the timed repetitions measure the code a hot kernel runs (FERROCL_BACKEND=
    // cranelift measures Cranelift's code alone). Build and first launch are unaffected.
    if std::env::var_os("FERROCL_TIER_UP_AFTER").is_none() {
        std::env::set_var("FERROCL_TIER_UP_AFTER", "0.000001");
    }
    let reps = opts.reps.unwrap_or(if opts.quick { 3 } else { 10 });
    let api: Rc<Api> = match Api::load() {
        Ok(a) => a,
        Err(e) => {
            eprintln!("ferrocl-bench: {e}");
            std::process::exit(1);
        }
    };
    let available = api.platforms().unwrap_or_else(|e| {
        eprintln!("ferrocl-bench: {e}");
        Vec::new()
    });
    let mut plats = Vec::new();
    let mut plat_info = Vec::new();
    let wanted = [
        (
            "Ferrocl",
            Find::Contains(opts.ferrocl_name.to_ascii_lowercase()),
            opts.ferrocl,
            !opts.ferrocl_source,
        ),
        (
            "PoCL",
            Find::Contains("portable computing language".into()),
            opts.pocl,
            false,
        ),
        ("Intel", Find::IntelCpu, opts.intel, false),
    ];
    for (label, find, want, il) in wanted {
        if !want {
            continue;
        }
        let Some(pi) = available.iter().find(|p| find.matches(&p.name)) else {
            let hint = if label == "Intel" {
                " (bench/README.md: an intel-cpu.icd in OCL_ICD_VENDORS)"
            } else {
                ""
            };
            println!("{label}: platform not found through the loader, skipped{hint}");
            continue;
        };
        match Context::new(&api, pi.id) {
            Ok(ctx) => {
                let how = if il { "SPIR-V" } else { "OpenCL C" };
                println!(
                    "{label}: {} / {} / {} ({how})",
                    pi.name, pi.version, ctx.device_name
                );
                plat_info.push((pi.name.clone(), pi.version.clone(), ctx.device_name.clone()));
                let rebuild_cached = label == "Ferrocl" && !il;
                plats.push(Plat {
                    label,
                    ctx,
                    il,
                    rebuild_cached,
                });
            }
            Err(e) => println!("{label}: {} found but unusable ({e}), skipped", pi.name),
        }
    }
    if plats.is_empty() {
        let names: Vec<&str> = available.iter().map(|p| p.name.as_str()).collect();
        println!("no platform to measure (loader reports {names:?}); nothing to do");
        return;
    }
    if opts.svm {
        let contexts: Vec<(&str, &Context)> = plats.iter().map(|p| (p.label, &p.ctx)).collect();
        svm::run(&contexts, reps);
        return;
    }
    if opts.images {
        let contexts: Vec<(&str, &Context)> = plats.iter().map(|p| (p.label, &p.ctx)).collect();
        images::run(&contexts, reps);
        return;
    }
    warm_up(&plats);
    watchdog::start(opts.timeout);
    eprintln!("measuring roofline probes…");
    let before = probe::measure(opts.quick);
    let mode = if opts.quick { "quick" } else { "default" };
    let results: Vec<KernelResult> = specs
        .iter()
        .enumerate()
        .map(|(i, s)| run_kernel(&plats, s, opts.quick, reps, i))
        .collect();
    // The VM's speed drifts: probe again after the kernels and keep the better of the two limits.
    eprintln!("measuring roofline probes again…");
    let roof = probe::best(before, probe::measure(opts.quick));
    let summary = report::summarise(&results, &roof);
    println!("\nferrocl-bench, {mode} mode, {reps} repetitions, kernel times from profiling events (launch kernels: host time per launch)");
    print!("{}", report::table(&results, &roof, &summary));

    let (date, time) = utc_now();
    let host = hostname();
    let info = RunInfo {
        date: time,
        hostname: host.clone(),
        cpu: cpu_model(),
        mode,
        reps,
        platforms: plat_info,
        env: [
            "POCL_KERNEL_CACHE",
            "OCL_ICD_VENDORS",
            "FERROCL_CACHE_DIR",
            "FERROCL_CACHE",
            "FERROCL_BACKEND",
            "FERROCL_TIER_UP_AFTER",
            "LD_LIBRARY_PATH",
        ]
        .iter()
        .filter_map(|k| Some((k.to_string(), std::env::var(k).ok()?)))
        .collect(),
    };
    let stem = format!("{date}-{host}{}", if opts.quick { "-quick" } else { "" });
    let results_dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("results");
    let json_path = opts
        .json
        .clone()
        .or_else(|| opts.save.then(|| results_dir.join(format!("{stem}.json"))));
    let csv_path = opts
        .csv
        .clone()
        .or_else(|| opts.save.then(|| results_dir.join(format!("{stem}.csv"))));
    if let Some(p) = json_path {
        write_file(&p, &report::json(&info, &results, &roof, &summary));
    }
    if let Some(p) = csv_path {
        write_file(&p, &report::csv(&info, &results, &roof));
    }
    if let Some(dir) = cache_dir {
        let _ = std::fs::remove_dir_all(dir);
    }
    let all: Vec<&Status> = results
        .iter()
        .flat_map(|k| k.results.iter().map(|r| &r.status))
        .collect();
    let count = |f: fn(&Status) -> bool| all.iter().filter(|s| f(s)).count();
    let (fail, error) = (
        count(|s| matches!(s, Status::Fail(_))),
        count(|s| matches!(s, Status::Error(_))),
    );
    println!(
        "results: {} ok, {fail} FAIL, {} unsupported, {error} error",
        count(|s| *s == Status::Ok),
        count(|s| matches!(s, Status::Unsupported(_)))
    );
    // Wrong results and runtime errors fail the command; unsupported kernels do not.
    if fail + error > 0 {
        std::process::exit(1);
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn args_parse() {
        let o = super::parse_args(
            [
                "--quick",
                "--platform",
                "pocl",
                "--kernel",
                "vadd,sgemm",
                "--reps",
                "4",
                "--no-save",
            ]
            .iter()
            .map(|s| s.to_string()),
        )
        .unwrap();
        assert!(o.quick && o.pocl && !o.ferrocl && !o.save);
        assert_eq!(o.kernels, ["vadd", "sgemm"]);
        assert_eq!(o.reps, Some(4));
        assert!(super::parse_args(["--platform", "x"].iter().map(|s| s.to_string())).is_err());
        let which = |p: &str| {
            let o = super::parse_args(["--platform", p].iter().map(|s| s.to_string())).unwrap();
            (o.ferrocl, o.pocl, o.intel)
        };
        assert_eq!(which("ferrocl"), (true, false, false));
        assert_eq!(which("both"), (true, true, false));
        assert_eq!(which("intel"), (false, false, true));
        assert_eq!(which("all"), (true, true, true));
        assert_eq!(which("ferrocl,intel"), (true, false, true));
        assert_eq!(which("Intel, PoCL"), (false, true, true));
        let default = super::parse_args(std::iter::empty()).unwrap();
        assert!(default.ferrocl && default.pocl && !default.intel);
        assert!(
            super::parse_args(["--platform", "ferrocl,x"].iter().map(|s| s.to_string())).is_err()
        );
    }

    #[test]
    fn intel_cpu_platform_names() {
        assert!(super::is_intel_cpu("Intel(R) OpenCL"));
        assert!(super::is_intel_cpu(
            "Intel(R) CPU Runtime for OpenCL(TM) Applications"
        ));
        for other in [
            "Intel(R) OpenCL Graphics",
            "Intel(R) OpenCL HD Graphics",
            "Intel(R) FPGA Emulation Platform for OpenCL(TM)",
            "Portable Computing Language",
            "Ferrocl",
        ] {
            assert!(!super::is_intel_cpu(other), "{other}");
        }
    }

    #[test]
    fn date_is_well_formed() {
        let (d, t) = super::utc_now();
        assert_eq!(d.len(), 10);
        assert!(t.starts_with(&d) && t.ends_with('Z'));
    }
}
