//! Results of a run and how they are shown: the terminal table with ratios and targets, and the
//! machine-readable JSON and CSV written under `bench/results/`. Ratios are Ferrocl's time over
//! PoCL's (`F/P`) and, where Intel's CPU runtime was measured, over Intel's (`F/I`).

use crate::kernels::Class;
use crate::probe::Roofline;
use crate::stats::{format_ms, format_ratio, geomean, median, min};
use std::fmt::Write as _;

#[derive(Clone, Debug, PartialEq)]
pub enum Status {
    Ok,
    /// Wrong result against the host reference.
    Fail(String),
    /// The program did not build (or could not be created) on this platform.
    Unsupported(String),
    /// A runtime error after a successful build.
    Error(String),
}

impl Status {
    pub fn label(&self) -> String {
        match self {
            Status::Ok => "ok".into(),
            Status::Fail(m) => format!("FAIL: {m}"),
            Status::Unsupported(m) => format!("unsupported: {m}"),
            Status::Error(m) => format!("error: {m}"),
        }
    }
    fn short(&self) -> &'static str {
        match self {
            Status::Ok => "ok",
            Status::Fail(_) => "FAIL",
            Status::Unsupported(_) => "unsupported",
            Status::Error(_) => "error",
        }
    }
}

pub struct PlatResult {
    pub platform: &'static str,
    pub status: Status,
    pub build_ms: Option<f64>,
    /// Instructions of the SPIR-V module the platform built (IL platforms only).
    pub spirv_instructions: Option<usize>,
    pub first_ms: Option<f64>,
    /// Built from OpenCL C a second time, with the program cache holding the first build
    /// (Ferrocl with `--ferrocl-source`): clBuildProgram and first-launch host times.
    pub warm_build_ms: Option<f64>,
    pub warm_first_ms: Option<f64>,
    /// Kernel time per repetition (profiling events), or host time per launch for launch kernels.
    pub samples_ms: Vec<f64>,
}

impl PlatResult {
    pub fn ok(&self) -> bool {
        self.status == Status::Ok
    }
    pub fn median_ms(&self) -> Option<f64> {
        median(&self.samples_ms)
    }
    pub fn min_ms(&self) -> Option<f64> {
        min(&self.samples_ms)
    }
    pub fn build_first_ms(&self) -> Option<f64> {
        Some(self.build_ms? + self.first_ms?)
    }
    pub fn warm_build_first_ms(&self) -> Option<f64> {
        Some(self.warm_build_ms? + self.warm_first_ms?)
    }
}

pub struct KernelResult {
    pub name: &'static str,
    pub class: Class,
    /// `flops` counts integer operations: throughput in GIOP/s, and no FLOP roofline.
    pub int_ops: bool,
    pub size: String,
    pub bytes: f64,
    pub flops: f64,
    pub results: Vec<PlatResult>,
}

impl KernelResult {
    fn get(&self, platform: &str) -> Option<&PlatResult> {
        self.results
            .iter()
            .find(|r| r.platform == platform && r.ok())
    }

    /// Throughput from the median time, with its unit.
    pub fn throughput(&self, r: &PlatResult) -> Option<(f64, &'static str)> {
        let s = r.median_ms()? / 1e3;
        if s <= 0.0 {
            return None;
        }
        Some(match self.class {
            Class::Build => return None,
            Class::Launch { .. } => (1.0 / s / 1e3, "k launch/s"),
            Class::Memory => (self.bytes / s / 1e9, "GB/s"),
            _ if self.int_ops && self.flops > 0.0 => (self.flops / s / 1e9, "GIOP/s"),
            _ if self.flops > 0.0 => (self.flops / s / 1e9, "GFLOP/s"),
            _ => (self.bytes / s / 1e9, "GB/s"),
        })
    }

    /// Fraction of the roofline reached by the best repetition: the time the machine's limits
    /// allow (bytes at STREAM bandwidth, FLOP at FMA peak, whichever is longer) over the time taken.
    pub fn roof(&self, r: &PlatResult, roof: &Roofline) -> Option<f64> {
        if !matches!(self.class, Class::Memory | Class::Compute) {
            return None;
        }
        let t = r.min_ms()? / 1e3;
        let flops = if self.int_ops { 0.0 } else { self.flops };
        let bound = (self.bytes / roof.stream_bytes_per_s).max(flops / roof.fma_flops_per_s);
        (t > 0.0 && bound > 0.0).then(|| bound / t)
    }

    /// Ferrocl/PoCL ratio of median kernel times (per-launch times for launch kernels).
    pub fn kernel_ratio(&self) -> Option<f64> {
        self.kernel_ratio_to("PoCL")
    }

    /// Ferrocl/PoCL ratio of build + first-launch times.
    pub fn build_ratio(&self) -> Option<f64> {
        self.build_ratio_to("PoCL")
    }

    /// Ferrocl/Intel ratio of median kernel times.
    pub fn kernel_ratio_intel(&self) -> Option<f64> {
        self.kernel_ratio_to("Intel")
    }

    /// Ferrocl/Intel ratio of build + first-launch times.
    pub fn build_ratio_intel(&self) -> Option<f64> {
        self.build_ratio_to("Intel")
    }

    fn kernel_ratio_to(&self, other: &str) -> Option<f64> {
        Some(self.get("Ferrocl")?.median_ms()? / self.get(other)?.median_ms()?)
    }

    fn build_ratio_to(&self, other: &str) -> Option<f64> {
        Some(self.get("Ferrocl")?.build_first_ms()? / self.get(other)?.build_first_ms()?)
    }

    /// The rows of issue #34 (correctly rounded math at vector speed): `transcendental` and
    /// the `math_*` kernels.
    pub fn is_math(&self) -> bool {
        self.name == "transcendental" || self.name.starts_with("math_")
    }

    /// The same for Ferrocl's second (cached) build from OpenCL C, against PoCL's cold one.
    pub fn warm_build_ratio(&self) -> Option<f64> {
        Some(self.get("Ferrocl")?.warm_build_first_ms()? / self.get("PoCL")?.build_first_ms()?)
    }
}

pub struct Summary {
    pub kernel_geomean: Option<f64>,
    pub kernel_max: Option<(f64, &'static str)>,
    pub build_geomean: Option<f64>,
    /// The same three against Intel's CPU runtime (None when it was not measured).
    pub kernel_geomean_intel: Option<f64>,
    pub kernel_max_intel: Option<(f64, &'static str)>,
    pub build_geomean_intel: Option<f64>,
    /// Issue #34's rows (`KernelResult::is_math`): the worst kernel-time ratio to PoCL and to
    /// Intel.
    pub math_max: Option<(f64, &'static str)>,
    pub math_max_intel: Option<(f64, &'static str)>,
    /// Ferrocl built from OpenCL C (`--ferrocl-source`): the warm (cached) build + first
    /// launch against PoCL's cold one, and the slowest warm clBuildProgram.
    pub warm_build_geomean: Option<f64>,
    pub warm_build_max: Option<(f64, &'static str)>,
    pub launch_ratios: Vec<(&'static str, f64)>,
    /// (platform, lowest % of STREAM among memory-bound kernels)
    pub memory_roof: Vec<(&'static str, f64)>,
    /// clBuildProgram ms per 1 000 SPIR-V instructions on the largest module built from IL,
    /// with that kernel's name (small modules measure fixed costs, not speed per instruction).
    pub build_per_kilo_instruction: Option<(f64, &'static str)>,
}

/// The largest ratio with its kernel's name.
fn worst(v: impl Iterator<Item = (f64, &'static str)>) -> Option<(f64, &'static str)> {
    v.max_by(|a, b| a.0.total_cmp(&b.0))
}

pub fn summarise(kernels: &[KernelResult], roof: &Roofline) -> Summary {
    let timed_against = |ratio: fn(&KernelResult) -> Option<f64>| -> Vec<(f64, &'static str)> {
        kernels
            .iter()
            .filter(|k| matches!(k.class, Class::Memory | Class::Compute))
            .filter_map(|k| Some((ratio(k)?, k.name)))
            .collect()
    };
    let timed = timed_against(KernelResult::kernel_ratio);
    let timed_intel = timed_against(KernelResult::kernel_ratio_intel);
    let ratios: Vec<f64> = timed.iter().map(|r| r.0).collect();
    let ratios_intel: Vec<f64> = timed_intel.iter().map(|r| r.0).collect();
    let builds: Vec<f64> = kernels
        .iter()
        .filter_map(KernelResult::build_ratio)
        .collect();
    let builds_intel: Vec<f64> = kernels
        .iter()
        .filter_map(KernelResult::build_ratio_intel)
        .collect();
    let math = |ratio: fn(&KernelResult) -> Option<f64>| {
        worst(
            kernels
                .iter()
                .filter(|k| k.is_math())
                .filter_map(|k| Some((ratio(k)?, k.name))),
        )
    };
    let warm: Vec<f64> = kernels
        .iter()
        .filter_map(KernelResult::warm_build_ratio)
        .collect();
    let warm_build_max = kernels
        .iter()
        .filter_map(|k| Some((k.get("Ferrocl")?.warm_build_ms?, k.name)))
        .max_by(|a, b| a.0.total_cmp(&b.0));
    let launch_ratios = kernels
        .iter()
        .filter(|k| matches!(k.class, Class::Launch { .. }))
        .filter_map(|k| Some((k.name, k.kernel_ratio()?)))
        .collect();
    let mut memory_roof = Vec::new();
    for p in ["Ferrocl", "PoCL", "Intel"] {
        let fr: Vec<f64> = kernels
            .iter()
            .filter(|k| k.class == Class::Memory)
            .filter_map(|k| k.roof(k.get(p)?, roof))
            .collect();
        if let Some(m) = fr.iter().copied().min_by(f64::total_cmp) {
            memory_roof.push((p, m));
        }
    }
    let build_per_kilo_instruction = kernels
        .iter()
        .filter_map(|k| {
            let r = k
                .results
                .iter()
                .find(|r| r.ok() && r.spirv_instructions.is_some())?;
            Some((r.spirv_instructions?, r.build_ms?, k.name))
        })
        .max_by_key(|(n, _, _)| *n)
        .map(|(n, ms, name)| (ms * 1000.0 / n.max(1) as f64, name));
    Summary {
        build_per_kilo_instruction,
        kernel_geomean: geomean(&ratios),
        kernel_max: worst(timed.iter().copied()),
        build_geomean: geomean(&builds),
        kernel_geomean_intel: geomean(&ratios_intel),
        kernel_max_intel: worst(timed_intel.iter().copied()),
        build_geomean_intel: geomean(&builds_intel),
        math_max: math(KernelResult::kernel_ratio),
        math_max_intel: math(KernelResult::kernel_ratio_intel),
        warm_build_geomean: geomean(&warm),
        warm_build_max,
        launch_ratios,
        memory_roof,
    }
}

fn pct(v: Option<f64>) -> String {
    v.map_or("-".into(), |v| format!("{:.0}%", v * 100.0))
}

fn truncate(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        s.to_string()
    } else {
        format!("{}…", s.chars().take(n - 1).collect::<String>())
    }
}

/// The human-readable table plus summary lines.
pub fn table(kernels: &[KernelResult], roof: &Roofline, summary: &Summary) -> String {
    let mut o = String::new();
    // Ferrocl/Intel columns only when Intel's CPU runtime was among the platforms.
    let intel = kernels
        .iter()
        .any(|k| k.results.iter().any(|r| r.platform == "Intel"));
    let intel_columns = |kern: &str, build: &str| {
        if intel {
            format!(" {kern:>8} {build:>8}")
        } else {
            String::new()
        }
    };
    let _ = writeln!(
        o,
        "{:<17} {:<8} {:<20} {:>9} {:>9} {:>9} {:>9} {:>18} {:>6} {:>8} {:>8}{}",
        "kernel",
        "platform",
        "size",
        "build ms",
        "1st ms",
        "med ms",
        "min ms",
        "throughput",
        "roof",
        "F/P kern",
        "F/P b+1",
        intel_columns("F/I kern", "F/I b+1")
    );
    for k in kernels {
        for (i, r) in k.results.iter().enumerate() {
            let name = if i == 0 { k.name } else { "" };
            let size = if i == 0 { k.size.as_str() } else { "" };
            if !r.ok() {
                let _ = writeln!(
                    o,
                    "{:<17} {:<8} {:<20} {:>9} {:>9}  {}",
                    name,
                    r.platform,
                    size,
                    format_ms(r.build_ms),
                    format_ms(r.first_ms),
                    truncate(&r.status.label(), 90)
                );
                continue;
            }
            let tp = k
                .throughput(r)
                .map_or("-".into(), |(v, u)| format!("{v:.2} {u}"));
            let last = i + 1 == k.results.len() && k.results.len() > 1;
            let (kr, br, intel_ratios) = if last {
                (
                    format_ratio(k.kernel_ratio()),
                    format_ratio(k.build_ratio()),
                    intel_columns(
                        &format_ratio(k.kernel_ratio_intel()),
                        &format_ratio(k.build_ratio_intel()),
                    ),
                )
            } else {
                (String::new(), String::new(), String::new())
            };
            let _ = writeln!(
                o,
                "{:<17} {:<8} {:<20} {:>9} {:>9} {:>9} {:>9} {:>18} {:>6} {:>8} {:>8}{}",
                name,
                r.platform,
                size,
                format_ms(r.build_ms),
                format_ms(r.first_ms),
                format_ms(r.median_ms()),
                format_ms(r.min_ms()),
                tp,
                pct(k.roof(r, roof)),
                kr,
                br,
                intel_ratios
            );
        }
        // Ferrocl's second build from OpenCL C: the program cache's row.
        if let Some(f) = k.get("Ferrocl").filter(|f| f.warm_build_ms.is_some()) {
            let _ = writeln!(
                o,
                "{:<17} {:<8} {:<20} {:>9} {:>9} {:>9} {:>9} {:>18} {:>6} {:>8} {:>8}",
                "",
                "F warm",
                "(cached build)",
                format_ms(f.warm_build_ms),
                format_ms(f.warm_first_ms),
                "",
                "",
                "",
                "",
                "",
                format_ratio(k.warm_build_ratio())
            );
        }
    }
    let _ = writeln!(
        o,
        "\nroofline: STREAM triad {:.1} GB/s, FMA peak {:.1} GFLOP/s ({}, {} threads)",
        roof.stream_bytes_per_s / 1e9,
        roof.fma_flops_per_s / 1e9,
        roof.fma_kind,
        roof.threads
    );
    let _ = writeln!(
        o,
        "targets (tracked, not asserted), F/P = Ferrocl time / PoCL time{}:",
        if intel {
            ", F/I = Ferrocl time / Intel time"
        } else {
            ""
        }
    );
    let _ = writeln!(
        o,
        "  kernel time geomean            {:>8}   target <= 0.6x",
        format_ratio(summary.kernel_geomean)
    );
    let (worst, which) = match summary.kernel_max {
        Some((r, n)) => (format_ratio(Some(r)), format!(" ({n})")),
        None => ("-".into(), String::new()),
    };
    let _ = writeln!(
        o,
        "  worst kernel time ratio        {worst:>8}   target <= 1.0x{which}"
    );
    let _ = writeln!(
        o,
        "  build + first launch geomean   {:>8}   target <= 0.1x",
        format_ratio(summary.build_geomean)
    );
    let named = |m: Option<(f64, &'static str)>| match m {
        Some((r, n)) => (format_ratio(Some(r)), format!(" ({n})")),
        None => ("-".into(), String::new()),
    };
    if summary.math_max.is_some() || summary.math_max_intel.is_some() {
        let (r, which) = named(summary.math_max);
        let _ = writeln!(
            o,
            "  math rows (#34), worst F/P     {r:>8}   target <= 1.0x{which}"
        );
    }
    if intel {
        let _ = writeln!(
            o,
            "  F/I kernel time geomean        {:>8}   (no target)",
            format_ratio(summary.kernel_geomean_intel)
        );
        let (r, which) = named(summary.kernel_max_intel);
        let _ = writeln!(
            o,
            "  F/I worst kernel time ratio    {r:>8}   (no target){which}"
        );
        let _ = writeln!(
            o,
            "  F/I build + first geomean      {:>8}   (no target)",
            format_ratio(summary.build_geomean_intel)
        );
        let (r, which) = named(summary.math_max_intel);
        let _ = writeln!(
            o,
            "  math rows (#34), worst F/I     {r:>8}   target <= 1.5x{which}"
        );
    }
    if summary.warm_build_geomean.is_some() {
        // With --ferrocl-source the line above compares cold builds from OpenCL C.
        let _ = writeln!(
            o,
            "  (Ferrocl from OpenCL C: the line above is its cold build, target <= 0.5x)"
        );
        let _ = writeln!(
            o,
            "  cached build + first geomean   {:>8}   (Ferrocl's warm build, PoCL cold)",
            format_ratio(summary.warm_build_geomean)
        );
        let (ms, which) = match summary.warm_build_max {
            Some((ms, n)) => (format!("{ms:.2} ms"), format!(" ({n})")),
            None => ("-".into(), String::new()),
        };
        let _ = writeln!(
            o,
            "  slowest cached build           {ms:>8}   target <= 5 ms{which}"
        );
    }
    let (per_kilo, which) = match summary.build_per_kilo_instruction {
        Some((ms, n)) => (format!("{ms:.2} ms"), format!(" ({n})")),
        None => ("-".into(), String::new()),
    };
    let _ = writeln!(
        o,
        "  build per 1000 SPIR-V instr.   {per_kilo:>8}   target <= 10 ms{which}"
    );
    if summary.launch_ratios.is_empty() {
        let _ = writeln!(
            o,
            "  launch overhead                {:>8}   target <= 0.5x",
            "-"
        );
    }
    for (n, r) in &summary.launch_ratios {
        let _ = writeln!(
            o,
            "  launch overhead {n:<14} {:>8}   target <= 0.5x",
            format_ratio(Some(*r))
        );
    }
    if summary.memory_roof.is_empty() {
        let _ = writeln!(
            o,
            "  memory-bound, worst % STREAM   {:>8}   target >= 85% (Ferrocl)",
            "-"
        );
    }
    for (p, f) in &summary.memory_roof {
        let _ = writeln!(
            o,
            "  memory-bound, worst % STREAM   {:>8}   target >= 85% (Ferrocl) [{p}]",
            pct(Some(*f))
        );
    }
    o
}

/// JSON string literal.
fn js(s: &str) -> String {
    let mut o = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => o.push_str("\\\""),
            '\\' => o.push_str("\\\\"),
            '\n' => o.push_str("\\n"),
            c if (c as u32) < 0x20 => {
                let _ = write!(o, "\\u{:04x}", c as u32);
            }
            c => o.push(c),
        }
    }
    o.push('"');
    o
}

/// JSON number, `null` when absent or not finite.
fn jn(v: Option<f64>) -> String {
    match v {
        Some(v) if v.is_finite() => format!("{v}"),
        _ => "null".into(),
    }
}

pub struct RunInfo {
    pub date: String,
    pub hostname: String,
    pub cpu: String,
    pub mode: &'static str,
    pub reps: usize,
    pub platforms: Vec<(String, String, String)>,
    pub env: Vec<(String, String)>,
}

pub fn json(info: &RunInfo, kernels: &[KernelResult], roof: &Roofline, s: &Summary) -> String {
    let mut o = String::from("{\n");
    let _ = writeln!(o, "  \"date\": {},", js(&info.date));
    let _ = writeln!(o, "  \"hostname\": {},", js(&info.hostname));
    let _ = writeln!(o, "  \"cpu\": {},", js(&info.cpu));
    let _ = writeln!(o, "  \"mode\": {},", js(info.mode));
    let _ = writeln!(o, "  \"reps\": {},", info.reps);
    let env: Vec<String> = info
        .env
        .iter()
        .map(|(k, v)| format!("{}: {}", js(k), js(v)))
        .collect();
    let _ = writeln!(o, "  \"env\": {{{}}},", env.join(", "));
    let plats: Vec<String> = info
        .platforms
        .iter()
        .map(|(n, v, d)| {
            format!(
                "    {{\"name\": {}, \"version\": {}, \"device\": {}}}",
                js(n),
                js(v),
                js(d)
            )
        })
        .collect();
    let _ = writeln!(o, "  \"platforms\": [\n{}\n  ],", plats.join(",\n"));
    let _ = writeln!(
        o,
        "  \"roofline\": {{\"stream_triad_gb_s\": {}, \"fma_gflop_s\": {}, \"fma_kind\": {}, \"threads\": {}}},",
        jn(Some(roof.stream_bytes_per_s / 1e9)),
        jn(Some(roof.fma_flops_per_s / 1e9)),
        js(roof.fma_kind),
        roof.threads
    );
    let mut ks = Vec::new();
    for k in kernels {
        let rs: Vec<String> = k
            .results
            .iter()
            .map(|r| {
                let tp = k.throughput(r);
                let samples: Vec<String> = r.samples_ms.iter().map(|v| jn(Some(*v))).collect();
                format!(
                    "        {{\"platform\": {}, \"status\": {}, \"message\": {}, \"build_ms\": {}, \"spirv_instructions\": {}, \"first_launch_ms\": {}, \"warm_build_ms\": {}, \"warm_first_launch_ms\": {}, \"median_ms\": {}, \"min_ms\": {}, \"throughput\": {}, \"throughput_unit\": {}, \"roofline_fraction\": {}, \"samples_ms\": [{}]}}",
                    js(r.platform),
                    js(r.status.short()),
                    js(&r.status.label()),
                    jn(r.build_ms),
                    r.spirv_instructions.map_or("null".into(), |n| n.to_string()),
                    jn(r.first_ms),
                    jn(r.warm_build_ms),
                    jn(r.warm_first_ms),
                    jn(r.median_ms()),
                    jn(r.min_ms()),
                    jn(tp.map(|t| t.0)),
                    tp.map_or("null".into(), |t| js(t.1)),
                    jn(k.roof(r, roof)),
                    samples.join(", ")
                )
            })
            .collect();
        ks.push(format!(
            "    {{\"name\": {}, \"class\": {}, \"size\": {}, \"bytes\": {}, \"flops\": {}, \"ratio_kernel\": {}, \"ratio_build_first\": {}, \"ratio_warm_build_first\": {}, \"ratio_kernel_intel\": {}, \"ratio_build_first_intel\": {},\n      \"results\": [\n{}\n      ]}}",
            js(k.name),
            js(k.class.label()),
            js(&k.size),
            jn(Some(k.bytes)),
            jn(Some(k.flops)),
            jn(k.kernel_ratio()),
            jn(k.build_ratio()),
            jn(k.warm_build_ratio()),
            jn(k.kernel_ratio_intel()),
            jn(k.build_ratio_intel()),
            rs.join(",\n")
        ));
    }
    let _ = writeln!(o, "  \"kernels\": [\n{}\n  ],", ks.join(",\n"));
    let launch: Vec<String> = s
        .launch_ratios
        .iter()
        .map(|(n, r)| format!("{}: {}", js(n), jn(Some(*r))))
        .collect();
    let mem: Vec<String> = s
        .memory_roof
        .iter()
        .map(|(n, r)| format!("{}: {}", js(n), jn(Some(*r))))
        .collect();
    let _ = writeln!(
        o,
        "  \"summary\": {{\"kernel_ratio_geomean\": {}, \"kernel_ratio_max\": {}, \"kernel_ratio_max_kernel\": {}, \"build_first_ratio_geomean\": {}, \"warm_build_first_ratio_geomean\": {}, \"warm_build_max_ms\": {}, \"launch_ratios\": {{{}}}, \"memory_bound_min_stream_fraction\": {{{}}}, \"kernel_ratio_geomean_intel\": {}, \"kernel_ratio_max_intel\": {}, \"kernel_ratio_max_kernel_intel\": {}, \"build_first_ratio_geomean_intel\": {}, \"math_ratio_max\": {}, \"math_ratio_max_kernel\": {}, \"math_ratio_max_intel\": {}, \"math_ratio_max_kernel_intel\": {}}}",
        jn(s.kernel_geomean),
        jn(s.kernel_max.map(|m| m.0)),
        s.kernel_max.map_or("null".into(), |m| js(m.1)),
        jn(s.build_geomean),
        jn(s.warm_build_geomean),
        jn(s.warm_build_max.map(|m| m.0)),
        launch.join(", "),
        mem.join(", "),
        jn(s.kernel_geomean_intel),
        jn(s.kernel_max_intel.map(|m| m.0)),
        s.kernel_max_intel.map_or("null".into(), |m| js(m.1)),
        jn(s.build_geomean_intel),
        jn(s.math_max.map(|m| m.0)),
        s.math_max.map_or("null".into(), |m| js(m.1)),
        jn(s.math_max_intel.map(|m| m.0)),
        s.math_max_intel.map_or("null".into(), |m| js(m.1))
    );
    o.push_str("}\n");
    o
}

fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

pub fn csv(info: &RunInfo, kernels: &[KernelResult], roof: &Roofline) -> String {
    let mut o = String::from(
        "date,hostname,mode,kernel,class,size,platform,status,build_ms,first_launch_ms,median_ms,min_ms,throughput,throughput_unit,roofline_fraction,ratio_kernel,ratio_build_first,message,warm_build_ms,warm_first_launch_ms,ratio_warm_build_first,ratio_kernel_intel,ratio_build_first_intel\n",
    );
    let f = |v: Option<f64>| v.map_or(String::new(), |v| format!("{v}"));
    for k in kernels {
        for r in &k.results {
            let tp = k.throughput(r);
            let fields = [
                info.date.clone(),
                info.hostname.clone(),
                info.mode.to_string(),
                k.name.to_string(),
                k.class.label().to_string(),
                k.size.clone(),
                r.platform.to_string(),
                r.status.short().to_string(),
                f(r.build_ms),
                f(r.first_ms),
                f(r.median_ms()),
                f(r.min_ms()),
                f(tp.map(|t| t.0)),
                tp.map_or(String::new(), |t| t.1.to_string()),
                f(k.roof(r, roof)),
                f(k.kernel_ratio()),
                f(k.build_ratio()),
                r.status.label(),
                f(r.warm_build_ms),
                f(r.warm_first_ms),
                f(k.warm_build_ratio().filter(|_| r.warm_build_ms.is_some())),
                f(k.kernel_ratio_intel()),
                f(k.build_ratio_intel()),
            ];
            let line: Vec<String> = fields.iter().map(|s| csv_field(s)).collect();
            o.push_str(&line.join(","));
            o.push('\n');
        }
    }
    o
}

#[cfg(test)]
mod tests {
    use super::*;

    fn roof() -> Roofline {
        Roofline {
            stream_bytes_per_s: 10e9,
            fma_flops_per_s: 100e9,
            threads: 2,
            fma_kind: "test",
        }
    }

    fn pr(platform: &'static str, status: Status, samples: &[f64]) -> PlatResult {
        PlatResult {
            platform,
            status,
            build_ms: Some(10.0),
            spirv_instructions: None,
            first_ms: Some(10.0),
            warm_build_ms: None,
            warm_first_ms: None,
            samples_ms: samples.to_vec(),
        }
    }

    fn kernel(name: &'static str, f: PlatResult, p: PlatResult) -> KernelResult {
        KernelResult {
            name,
            class: Class::Memory,
            int_ops: false,
            size: "n".into(),
            bytes: 1e9,
            flops: 0.0,
            results: vec![p, f],
        }
    }

    #[test]
    fn ratios_exclude_failed_and_unsupported_platforms() {
        let ks = vec![
            kernel(
                "a",
                pr("Ferrocl", Status::Ok, &[50.0, 60.0, 40.0]),
                pr("PoCL", Status::Ok, &[100.0]),
            ),
            kernel(
                "b",
                pr("Ferrocl", Status::Ok, &[200.0]),
                pr("PoCL", Status::Ok, &[100.0]),
            ),
            kernel(
                "c",
                pr("Ferrocl", Status::Fail("x".into()), &[1.0]),
                pr("PoCL", Status::Ok, &[100.0]),
            ),
            kernel(
                "d",
                pr("Ferrocl", Status::Unsupported("y".into()), &[]),
                pr("PoCL", Status::Ok, &[100.0]),
            ),
        ];
        assert_eq!(ks[0].kernel_ratio(), Some(0.5));
        assert_eq!(ks[2].kernel_ratio(), None);
        assert_eq!(ks[3].build_ratio(), None);
        let s = summarise(&ks, &roof());
        assert!((s.kernel_geomean.unwrap() - 1.0).abs() < 1e-12);
        assert_eq!(s.kernel_max, Some((2.0, "b")));
        // 1 GB in 40 ms best = 25 GB/s against a 10 GB/s STREAM: 250 %
        assert!((ks[0].roof(&ks[0].results[1], &roof()).unwrap() - 2.5).abs() < 1e-9);
        let t = table(&ks, &roof(), &s);
        assert!(t.contains("FAIL: x") && t.contains("unsupported: y"), "{t}");
        assert!(
            !t.contains("F warm") && s.warm_build_geomean.is_none(),
            "{t}"
        );
    }

    #[test]
    fn the_cached_build_row_and_its_ratio() {
        let mut f = pr("Ferrocl", Status::Ok, &[1.0]);
        f.warm_build_ms = Some(2.0);
        f.warm_first_ms = Some(3.0);
        let ks = vec![kernel("a", f, pr("PoCL", Status::Ok, &[1.0]))];
        assert_eq!(ks[0].warm_build_ratio(), Some(0.25));
        let s = summarise(&ks, &roof());
        assert_eq!(s.warm_build_max, Some((2.0, "a")));
        let t = table(&ks, &roof(), &s);
        assert!(
            t.contains("F warm") && t.contains("slowest cached build"),
            "{t}"
        );
        let j = json(
            &RunInfo {
                date: String::new(),
                hostname: String::new(),
                cpu: String::new(),
                mode: "quick",
                reps: 1,
                platforms: Vec::new(),
                env: Vec::new(),
            },
            &ks,
            &roof(),
            &s,
        );
        assert!(
            j.contains("\"warm_build_ms\": 2") && j.contains("\"ratio_warm_build_first\": 0.25"),
            "{j}"
        );
    }

    fn info() -> RunInfo {
        RunInfo {
            date: String::new(),
            hostname: String::new(),
            cpu: String::new(),
            mode: "quick",
            reps: 1,
            platforms: Vec::new(),
            env: Vec::new(),
        }
    }

    #[test]
    fn three_platforms_ratios_to_pocl_and_to_intel() {
        let three = |name, f: f64, p: f64, i: Status| {
            let mut k = kernel(
                name,
                pr("Ferrocl", Status::Ok, &[f]),
                pr("PoCL", Status::Ok, &[p]),
            );
            k.class = Class::Compute;
            k.results.push(pr("Intel", i, &[10.0]));
            k
        };
        let ks = vec![
            three("transcendental", 20.0, 10.0, Status::Ok),
            three("math_float", 5.0, 10.0, Status::Ok),
            three("math_double", 30.0, 60.0, Status::Unsupported("z".into())),
            three("vadd", 40.0, 80.0, Status::Ok),
        ];
        assert_eq!(ks[0].kernel_ratio(), Some(2.0));
        assert_eq!(ks[0].kernel_ratio_intel(), Some(2.0));
        assert_eq!(ks[1].kernel_ratio_intel(), Some(0.5));
        assert_eq!(ks[2].kernel_ratio_intel(), None);
        assert_eq!(ks[2].kernel_ratio(), Some(0.5));
        assert_eq!(ks[0].build_ratio_intel(), Some(1.0));
        let s = summarise(&ks, &roof());
        assert_eq!(s.math_max, Some((2.0, "transcendental")));
        assert_eq!(s.math_max_intel, Some((2.0, "transcendental")));
        assert_eq!(s.kernel_max_intel, Some((4.0, "vadd")));
        assert!((s.kernel_geomean_intel.unwrap() - 4f64.powf(1.0 / 3.0)).abs() < 1e-12);
        let t = table(&ks, &roof(), &s);
        assert!(t.contains("F/I kern") && t.contains("worst F/I"), "{t}");
        assert!(t.contains("unsupported: z"), "{t}");
        let j = json(&info(), &ks, &roof(), &s);
        assert!(
            j.contains("\"ratio_kernel_intel\": 0.5") && j.contains("\"math_ratio_max_intel\": 2"),
            "{j}"
        );
        let c = csv(&info(), &ks, &roof());
        let header = c.lines().next().unwrap().split(',').count();
        assert!(c.lines().count() == 1 + 12, "{c}");
        assert!(
            c.lines().skip(1).all(|l| l.split(',').count() == header),
            "{c}"
        );
        // without Intel, no F/I columns or lines
        let two = vec![kernel(
            "math_float",
            pr("Ferrocl", Status::Ok, &[1.0]),
            pr("PoCL", Status::Ok, &[1.0]),
        )];
        let t = table(&two, &roof(), &summarise(&two, &roof()));
        assert!(!t.contains("F/I") && t.contains("worst F/P"), "{t}");
    }

    #[test]
    fn json_and_csv_escape_and_null() {
        assert_eq!(js("a\"b\\\n"), "\"a\\\"b\\\\\\n\"");
        assert_eq!(jn(None), "null");
        assert_eq!(jn(Some(f64::NAN)), "null");
        assert_eq!(csv_field("a,b"), "\"a,b\"");
        assert_eq!(csv_field("plain"), "plain");
    }
}
