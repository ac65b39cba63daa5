//! The `FERROCL_*` environment variables: one table of what users may choose without rebuilding
//! anything, parsed strictly once when the platform is first used. An invalid value prints one
//! warning naming the variable and its accepted values, and the default applies.

use std::path::PathBuf;
use std::time::Duration;

use crate::svm::SvmLevel;

/// One documented variable (the table of docs/configuration.md is checked against this list).
pub struct Variable {
    pub name: &'static str,
    pub values: &'static str,
    pub default: &'static str,
    pub effect: &'static str,
}

pub const VARIABLES: &[Variable] = &[
    Variable {
        name: "FERROCL_THREADS",
        values: "a positive integer",
        default: "available parallelism",
        effect: "worker threads of the root device, one per compute unit: CL_DEVICE_MAX_COMPUTE_UNITS \
                 follows, and sub-devices divide these units (see Sub-devices)",
    },
    Variable {
        name: "FERROCL_PIN_THREADS",
        values: "on/off (also 1/0, true/false, yes/no)",
        default: "off",
        effect: "pin the worker of compute unit i to CPU i (modulo the CPUs this process may use); a \
                 sub-device's workers are pinned to the CPUs of its units",
    },
    Variable {
        name: "FERROCL_FTZ",
        values: "on/off (also 1/0, true/false, yes/no)",
        default: "off",
        effect: "flush single-precision denormal inputs and results to zero (doubles keep \
                 denormals); CL_DEVICE_SINGLE_FP_CONFIG drops CL_FP_DENORM",
    },
    Variable {
        name: "FERROCL_ROUNDING",
        values: "rte, rtz",
        default: "rte",
        effect: "default single-precision rounding; rtz selects the embedded profile and turns \
                 fp64 off (the rounding mode is per thread and would affect doubles)",
    },
    Variable {
        name: "FERROCL_PROFILE",
        values: "full, embedded",
        default: "full",
        effect: "CL_PLATFORM_PROFILE / CL_DEVICE_PROFILE; embedded adds cles_khr_int64",
    },
    Variable {
        name: "FERROCL_FP64",
        values: "on/off (also 1/0, true/false, yes/no)",
        default: "on",
        effect: "cl_khr_fp64, __opencl_c_fp64, the Float64 SPIR-V capability and \
                 CL_DEVICE_DOUBLE_FP_CONFIG together",
    },
    Variable {
        name: "FERROCL_FP16",
        values: "on/off (also 1/0, true/false, yes/no)",
        default: "on",
        effect: "cl_khr_fp16, the Float16 SPIR-V capability (half values and arithmetic), \
                 CL_DEVICE_HALF_FP_CONFIG and the half vector widths together; \
                 vload_half/vstore_half work either way",
    },
    Variable {
        name: "FERROCL_IMAGES",
        values: "on/off (also 1/0, true/false, yes/no)",
        default: "on",
        effect: "on: images and samplers (CL_DEVICE_IMAGE_SUPPORT, image and sampler objects, \
                 every image command, cl_khr_image2d_from_buffer, cl_khr_3d_image_writes, \
                 cl_khr_depth_images, cl_khr_srgb_image_writes, cl_khr_mipmap_image, \
                 cl_khr_mipmap_image_writes, image reads, writes and sampling in kernels); off: \
                 no images (CL_DEVICE_IMAGE_SUPPORT false, the image functions return \
                 CL_INVALID_OPERATION)",
    },
    Variable {
        name: "FERROCL_SUBGROUPS",
        values: "on/off (also 1/0, true/false, yes/no)",
        default: "on",
        effect: "on: sub-groups of 4 work-items, cl_khr_subgroups and the cl_khr_subgroup_* extensions; off: none of them, and modules using sub-groups fail to build",
    },
    Variable {
        name: "FERROCL_PIPES",
        values: "on/off (also 1/0, true/false, yes/no)",
        default: "on",
        effect: "on: pipes (CL_DEVICE_PIPE_SUPPORT, clCreatePipe, pipe kernel arguments, \
                 __opencl_c_pipes and the Pipes SPIR-V capability); off: no pipes \
                 (CL_DEVICE_PIPE_SUPPORT false and the pipe limits 0, clCreatePipe returns \
                 CL_INVALID_OPERATION, modules using pipes fail to build)",
    },
    Variable {
        name: "FERROCL_DEVICE_ENQUEUE",
        values: "on/off (also 1/0, true/false, yes/no)",
        default: "on",
        effect: "on: device-side enqueue (CL_DEVICE_DEVICE_ENQUEUE_CAPABILITIES, on-device \
                 queues with CL_QUEUE_ON_DEVICE, clSetDefaultDeviceCommandQueue, queue_t kernel \
                 arguments, enqueue_kernel and the other device-enqueue built-ins, \
                 __opencl_c_device_enqueue and the DeviceEnqueue SPIR-V capability); off: none \
                 of them (the on-device queue queries 0, CL_QUEUE_ON_DEVICE refused with \
                 CL_INVALID_QUEUE_PROPERTIES, modules using device-side enqueue fail to build)",
    },
    Variable {
        name: "FERROCL_VECTORIZE",
        values: "on/off (also 1/0, true/false, yes/no)",
        default: "on",
        effect: "on: kernels without barriers run four work-items at a time in vector lanes where their control flow allows (the log's debug level says which); off: one work-item at a time",
    },
    Variable {
        name: "FERROCL_BACKEND",
        values: "tiered, cranelift, wide",
        default: "tiered",
        effect: "the code generator of kernels: cranelift: Cranelift alone (builds in \
                 milliseconds, vectors of 128 bits); wide: LLVM 15's code generator in the LLVM \
                 server from the first launch, with vectors as wide as the CPU's (256 bits with \
                 AVX2, 512 with AVX-512: 8 or 16 work-items per vector), the same results bit \
                 for bit; tiered: Cranelift first, and a kernel that has run for \
                 FERROCL_TIER_UP_AFTER is rebuilt by the wide backend on a background thread, \
                 later launches running the wide code. A kernel the wide backend refuses (or \
                 every kernel, where libLLVM-15 or the server is not available) stays on \
                 Cranelift, with the reason at the log's debug level",
    },
    Variable {
        name: "FERROCL_TIER_UP_AFTER",
        values: "seconds (a positive number, fractions allowed)",
        default: "0.05",
        effect: "with FERROCL_BACKEND=tiered: the run time after which a kernel (all its launches \
                 together) is rebuilt by the wide backend",
    },
    Variable {
        name: "FERROCL_SVM",
        values: "on/off (also 1/0, true/false, yes/no), coarse",
        default: "on",
        effect: "on: every SVM level (coarse- and fine-grain buffers, fine-grain system memory, SVM atomics) and the all-devices atomic scope; coarse: coarse-grain buffers only (to test applications' fallbacks); off: no SVM",
    },
    Variable {
        name: "FERROCL_KERNEL_TIMEOUT",
        values: "seconds (a positive number, fractions allowed), off (also 0)",
        default: "off",
        effect: "kernel watchdog: a kernel command running longer is stopped at its next loop \
                 iteration, its event gets CL_OUT_OF_RESOURCES and the queue goes on; on, \
                 kernels read a stop word at every loop head (see \"Kernel watchdog\"); off, \
                 kernels carry no check",
    },
    Variable {
        name: "FERROCL_SPECIALIZE",
        values: "on/off (also 1/0, true/false, yes/no)",
        default: "on",
        effect: "on: a kernel with image or sampler arguments is built again for the formats and samplers a launch binds (cached per combination), so each image access converts one known format; off: one build reads every format through run-time switches",
    },
    Variable {
        name: "FERROCL_CHECKED",
        values: "on/off (also 1/0, true/false, yes/no)",
        default: "off",
        effect: "checked mode for every program (one program: the build option \
                 -cl-ferrocl-checked): every memory access is bounds-checked against its buffer, \
                 SVM allocation, local or private object, integer divisors against zero and \
                 barriers against divergence; a failed check stops the command, its event gets \
                 CL_OUT_OF_RESOURCES and stderr names the kernel, work-item, object, offset and \
                 size (see \"Checked mode\")",
    },
    Variable {
        name: "FERROCL_DUMP_DIR",
        values: "a directory",
        default: "unset (no dumps)",
        effect: "per built program (DIR/program-N/): input.spv, <kernel>.clif, \
                 <kernel>.opt.clif and <kernel>.s (Cranelift's machine code) or <kernel>.ll (the wide backend's LLVM IR)",
    },
    Variable {
        name: "FERROCL_CACHE",
        values: "on/off (also 1/0, true/false, yes/no)",
        default: "on",
        effect: "the persistent cache of OpenCL C builds (the SPIR-V clang, opt and llvm-spirv \
                 made, keyed on everything that changes it, included headers too); off: every \
                 build runs the tools",
    },
    Variable {
        name: "FERROCL_LLVM",
        values: "server, process",
        default: "server",
        effect: "how OpenCL C builds run clang-15, opt-15's passes and llvm-spirv-15: \
                 server: through their libraries, in a server process forked from the \
                 application at its first OpenCL C build (a few ms per build; one per thread \
                 building at once, up to the CPUs or 4), or process: \
                 each tool as a process (about 25 ms of start-up each). Both give the same \
                 SPIR-V; server falls back to processes where the libraries do not load",
    },
    Variable {
        name: "FERROCL_CACHE_DIR",
        values: "a directory",
        default: "$XDG_CACHE_HOME/ferrocl, else ~/.cache/ferrocl",
        effect: "where the program cache lives (created when needed; a directory that cannot be \
                 written only makes builds uncached)",
    },
    Variable {
        name: "FERROCL_CACHE_MAX_SIZE",
        values: "bytes, or a number with K, M or G (binary units)",
        default: "256M",
        effect: "bound on the cache's size: after a store that passes it, the least recently \
                 used entries are removed down to 90 % of it",
    },
    Variable {
        name: "FERROCL_LOG",
        values: "off, error, warn, info, debug",
        default: "warn",
        effect: "build and launch tracing on stderr (info: builds, with the OpenCL C, frontend, codegen and total times of each program and whether the program cache served it, and launches; debug: also each kernel's sizes)",
    },
];

/// How the on/off variables may be spelt (any case), as other drivers' variables are.
pub const SWITCH_SPELLINGS: &str = "on/off, 1/0, true/false, yes/no";

/// An on/off value in any of the [`SWITCH_SPELLINGS`], or None.
pub fn parse_switch(raw: &str) -> Option<bool> {
    match raw.trim().to_ascii_lowercase().as_str() {
        "on" | "1" | "true" | "yes" => Some(true),
        "off" | "0" | "false" | "no" => Some(false),
        _ => None,
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rounding {
    NearestEven,
    TowardZero,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Profile {
    Full,
    Embedded,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum LogLevel {
    Off,
    Error,
    Warn,
    Info,
    Debug,
}

/// The settings in force for the process.
/// `FERROCL_BACKEND`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BackendSetting {
    /// Cranelift first, the wide backend for kernels that run long enough (tiering.rs).
    Tiered,
    Cranelift,
    Wide,
}

/// A kernel's launches must have run this long together before it is rebuilt wide: long
/// enough that a program's one-off kernels (setup, tests, a single small launch) never pay for
/// an LLVM build, short enough that a kernel an application runs in a loop switches within
/// its first launches. Measured: see tiering.rs.
pub const DEFAULT_TIER_UP_AFTER: Duration = Duration::from_millis(50);

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Settings {
    pub threads: usize,
    pub pin_threads: bool,
    pub flush_denormals: bool,
    pub rounding: Rounding,
    pub profile: Profile,
    pub fp64: bool,
    pub sub_groups: bool,
    pub fp16: bool,
    pub vectorize: bool,
    /// `FERROCL_BACKEND`: the code generator of kernels.
    pub backend: BackendSetting,
    /// `FERROCL_TIER_UP_AFTER`: run time after which a tiered kernel gets wide code.
    pub tier_up_after: Duration,
    pub svm: crate::svm::SvmLevel,
    /// `FERROCL_IMAGES`: images and samplers, on the host and in kernels.
    pub images: bool,
    /// `FERROCL_PIPES`: pipe objects and pipes in kernels.
    pub pipes: bool,
    /// `FERROCL_DEVICE_ENQUEUE`: on-device queues and device-side enqueue in kernels.
    pub device_enqueue: bool,
    pub dump_dir: Option<PathBuf>,
    pub log: LogLevel,
    /// `FERROCL_KERNEL_TIMEOUT`: None when the watchdog is off.
    pub kernel_timeout: Option<Duration>,
    /// `FERROCL_CHECKED`: every program is built in checked mode.
    pub checked: bool,
    /// `FERROCL_SPECIALIZE`: image kernels are built per bound format set.
    pub specialize: bool,
    /// The program cache's directory; None when FERROCL_CACHE is off or no directory is known
    /// (no FERROCL_CACHE_DIR, XDG_CACHE_HOME or HOME).
    pub cache_dir: Option<PathBuf>,
    /// FERROCL_CACHE_MAX_SIZE in bytes.
    pub cache_max_bytes: u64,
    /// `FERROCL_LLVM`: OpenCL C builds run the LLVM tools by their libraries in the LLVM server.
    pub llvm_server: bool,
}

/// The default bound of the program cache: an entry is the SPIR-V of one program (a few to a
/// few hundred KiB), so this holds thousands of programs (a CTS run's worth).
pub const DEFAULT_CACHE_MAX_BYTES: u64 = 256 << 20;

/// `1048576`, `64K`, `256M`, `2G` (binary units, any case) as bytes; None otherwise.
pub fn parse_size(raw: &str) -> Option<u64> {
    let v = raw.trim();
    let (digits, shift) = match v.char_indices().last()? {
        (i, 'k' | 'K') => (&v[..i], 10),
        (i, 'm' | 'M') => (&v[..i], 20),
        (i, 'g' | 'G') => (&v[..i], 30),
        _ => (v, 0),
    };
    let n: u64 = digits.trim().parse().ok()?;
    n.checked_mul(1u64 << shift)
}

impl Settings {
    /// Reads the process environment; warnings go to stderr.
    pub fn from_env() -> Settings {
        Settings::parse(
            |name| std::env::var(name).ok(),
            |w| eprintln!("ferrocl: {w}"),
        )
    }

    /// Parses settings from `lookup`, reporting each invalid value through `warn`.
    pub fn parse(
        lookup: impl Fn(&str) -> Option<String>,
        mut warn: impl FnMut(String),
    ) -> Settings {
        let default_threads = std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(1);
        let mut switch = |name: &str, default: bool| -> bool {
            let Some(raw) = lookup(name) else {
                return default;
            };
            parse_switch(&raw).unwrap_or_else(|| {
                warn(format!(
                    "{name}={raw:?} is not one of {SWITCH_SPELLINGS}; using {}",
                    if default { "on" } else { "off" }
                ));
                default
            })
        };
        let pin_threads = switch("FERROCL_PIN_THREADS", false);
        let flush_denormals = switch("FERROCL_FTZ", false);
        let mut fp64 = switch("FERROCL_FP64", true);
        let sub_groups = switch("FERROCL_SUBGROUPS", true);
        let fp16 = switch("FERROCL_FP16", true);
        let vectorize = switch("FERROCL_VECTORIZE", true);
        let checked = switch("FERROCL_CHECKED", false);
        let specialize = switch("FERROCL_SPECIALIZE", true);
        let cache_on = switch("FERROCL_CACHE", true);
        let images = switch("FERROCL_IMAGES", true);
        let pipes = switch("FERROCL_PIPES", true);
        let device_enqueue = switch("FERROCL_DEVICE_ENQUEUE", true);
        let svm = match lookup("FERROCL_SVM") {
            None => SvmLevel::FineGrain,
            Some(raw) if raw.trim().eq_ignore_ascii_case("coarse") => SvmLevel::CoarseGrain,
            Some(raw) => match parse_switch(&raw) {
                Some(true) => SvmLevel::FineGrain,
                Some(false) => SvmLevel::Off,
                None => {
                    warn(format!(
                        "FERROCL_SVM={raw:?} is not one of {SWITCH_SPELLINGS}, coarse; using on"
                    ));
                    SvmLevel::FineGrain
                }
            },
        };
        let mut pick = |name: &str, choices: &[&str], default: &str| -> String {
            let Some(raw) = lookup(name) else {
                return default.to_owned();
            };
            let v = raw.trim().to_ascii_lowercase();
            if choices.contains(&v.as_str()) {
                v
            } else {
                warn(format!(
                    "{name}={raw:?} is not one of {}; using {default}",
                    choices.join(", ")
                ));
                default.to_owned()
            }
        };
        let rounding = match pick("FERROCL_ROUNDING", &["rte", "rtz"], "rte").as_str() {
            "rtz" => Rounding::TowardZero,
            _ => Rounding::NearestEven,
        };
        let mut profile = match pick("FERROCL_PROFILE", &["full", "embedded"], "full").as_str() {
            "embedded" => Profile::Embedded,
            _ => Profile::Full,
        };
        let log = match pick(
            "FERROCL_LOG",
            &["off", "error", "warn", "info", "debug"],
            "warn",
        )
        .as_str()
        {
            "off" => LogLevel::Off,
            "error" => LogLevel::Error,
            "info" => LogLevel::Info,
            "debug" => LogLevel::Debug,
            _ => LogLevel::Warn,
        };
        let llvm_server = pick("FERROCL_LLVM", &["server", "process"], "server") == "server";
        let backend = match pick(
            "FERROCL_BACKEND",
            &["tiered", "cranelift", "wide"],
            "tiered",
        )
        .as_str()
        {
            "wide" => BackendSetting::Wide,
            "cranelift" => BackendSetting::Cranelift,
            _ => BackendSetting::Tiered,
        };
        let tier_up_after = lookup("FERROCL_TIER_UP_AFTER")
            .map(|raw| {
                let seconds = raw.trim().parse::<f64>().ok().filter(|s| *s > 0.0);
                seconds
                    .and_then(|s| Duration::try_from_secs_f64(s).ok())
                    .unwrap_or_else(|| {
                        warn(format!(
                            "FERROCL_TIER_UP_AFTER={raw:?} is not a positive number of seconds; using 0.05"
                        ));
                        DEFAULT_TIER_UP_AFTER
                    })
            })
            .unwrap_or(DEFAULT_TIER_UP_AFTER);
        let threads = match lookup("FERROCL_THREADS") {
            None => default_threads,
            Some(raw) => match raw.trim().parse::<usize>() {
                Ok(n) if (1..=4096).contains(&n) => n,
                _ => {
                    warn(format!(
                        "FERROCL_THREADS={raw:?} is not a positive integer up to 4096; using {default_threads}"
                    ));
                    default_threads
                }
            },
        };
        let kernel_timeout = lookup("FERROCL_KERNEL_TIMEOUT").and_then(|raw| {
            if parse_switch(&raw) == Some(false) {
                return None;
            }
            let seconds = raw.trim().parse::<f64>().ok().filter(|s| *s > 0.0);
            let timeout = seconds.and_then(|s| Duration::try_from_secs_f64(s).ok());
            if timeout.is_none() {
                warn(format!(
                    "FERROCL_KERNEL_TIMEOUT={raw:?} is not a positive number of seconds or off; using off"
                ));
            }
            timeout
        });
        let non_empty = |name: &str| lookup(name).filter(|v| !v.trim().is_empty());
        // XDG: a relative XDG_CACHE_HOME is invalid and ignored.
        let cache_dir = non_empty("FERROCL_CACHE_DIR")
            .map(PathBuf::from)
            .or_else(|| {
                non_empty("XDG_CACHE_HOME")
                    .map(PathBuf::from)
                    .filter(|p| p.is_absolute())
                    .map(|p| p.join("ferrocl"))
            })
            .or_else(|| non_empty("HOME").map(|h| PathBuf::from(h).join(".cache/ferrocl")))
            .filter(|_| cache_on);
        let cache_max_bytes = match lookup("FERROCL_CACHE_MAX_SIZE") {
            None => DEFAULT_CACHE_MAX_BYTES,
            Some(raw) => parse_size(&raw).unwrap_or_else(|| {
                warn(format!(
                    "FERROCL_CACHE_MAX_SIZE={raw:?} is not a size in bytes (a number, or one \
                     with K, M or G); using 256M"
                ));
                DEFAULT_CACHE_MAX_BYTES
            }),
        };
        let dump_dir = lookup("FERROCL_DUMP_DIR")
            .filter(|d| !d.trim().is_empty())
            .map(PathBuf::from);
        if rounding == Rounding::TowardZero {
            // Round-to-zero is allowed only for the embedded profile, and the MXCSR rounding
            // mode would apply to doubles too, which must round to nearest.
            if profile == Profile::Full && lookup("FERROCL_PROFILE").is_some() {
                warn(
                    "FERROCL_ROUNDING=rtz requires the embedded profile; using embedded".to_owned(),
                );
            }
            profile = Profile::Embedded;
            if fp64 && lookup("FERROCL_FP64").is_some() {
                warn(
                    "FERROCL_ROUNDING=rtz turns fp64 off (doubles must round to nearest)"
                        .to_owned(),
                );
            }
            fp64 = false;
        }
        Settings {
            threads,
            pin_threads,
            flush_denormals,
            rounding,
            profile,
            fp64,
            sub_groups,
            fp16,
            vectorize,
            backend,
            tier_up_after,
            svm,
            images,
            pipes,
            device_enqueue,
            dump_dir,
            log,
            kernel_timeout,
            checked,
            specialize,
            cache_dir,
            cache_max_bytes,
            llvm_server,
        }
    }
}

/// Writes `message` to stderr when `FERROCL_LOG` lets `level` through.
pub fn log(settings: &Settings, level: LogLevel, message: std::fmt::Arguments) {
    if level != LogLevel::Off && level <= settings.log {
        let tag = match level {
            LogLevel::Error => "error",
            LogLevel::Warn => "warning",
            LogLevel::Info => "info",
            _ => "debug",
        };
        eprintln!("ferrocl: {tag}: {message}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn parse(vars: &[(&str, &str)]) -> (Settings, Vec<String>) {
        let map: HashMap<String, String> = vars
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        let mut warnings = Vec::new();
        let s = Settings::parse(|k| map.get(k).cloned(), |w| warnings.push(w));
        (s, warnings)
    }

    #[test]
    fn defaults_are_full_profile_rte_with_denormals_and_fp64() {
        let (s, w) = parse(&[]);
        assert!(w.is_empty());
        assert_eq!(s.rounding, Rounding::NearestEven);
        assert_eq!(s.profile, Profile::Full);
        assert!(s.fp64 && s.sub_groups && s.fp16 && !s.flush_denormals && !s.pin_threads);
        assert!(s.images && s.pipes && s.device_enqueue);
        let (s, w) = parse(&[("FERROCL_FP16", "off")]);
        assert!(w.is_empty() && !s.fp16);
        assert_eq!(s.log, LogLevel::Warn);
        assert!(s.threads >= 1);
    }

    #[test]
    fn valid_values_are_taken_case_insensitively() {
        let (s, w) = parse(&[
            ("FERROCL_FTZ", "ON"),
            ("FERROCL_THREADS", " 3 "),
            ("FERROCL_LOG", "debug"),
        ]);
        assert!(w.is_empty(), "{w:?}");
        assert!(s.flush_denormals);
        assert_eq!(s.threads, 3);
        assert_eq!(s.log, LogLevel::Debug);
    }

    #[test]
    fn invalid_values_warn_once_and_fall_back() {
        let (s, w) = parse(&[
            ("FERROCL_FTZ", "maybe"),
            ("FERROCL_THREADS", "0"),
            ("FERROCL_IMAGES", "maybe"),
        ]);
        assert_eq!(w.len(), 3, "{w:?}");
        assert!(
            w[0].contains("FERROCL_FTZ=\"maybe\"") && w[0].contains(SWITCH_SPELLINGS),
            "{}",
            w[0]
        );
        assert!(w.iter().any(|m| m.contains("FERROCL_THREADS")));
        assert!(w
            .iter()
            .any(|m| m.contains("FERROCL_IMAGES") && m.contains(SWITCH_SPELLINGS)));
        assert!(!s.flush_denormals);
    }

    #[test]
    fn every_switch_takes_every_spelling() {
        let switches = [
            "FERROCL_PIN_THREADS",
            "FERROCL_FTZ",
            "FERROCL_FP64",
            "FERROCL_SUBGROUPS",
            "FERROCL_FP16",
            "FERROCL_VECTORIZE",
            "FERROCL_CACHE",
            "FERROCL_IMAGES",
            "FERROCL_PIPES",
            "FERROCL_DEVICE_ENQUEUE",
        ];
        let on = ["on", "ON", "1", "true", "True", "yes", "YES", " on "];
        let off = ["off", "Off", "0", "false", "FALSE", "no", "No"];
        for name in switches {
            for (spellings, want) in [(&on[..], true), (&off[..], false)] {
                for v in spellings {
                    let (s, w) = parse(&[(name, v), ("HOME", "/home/u")]);
                    assert!(w.is_empty(), "{name}={v}: {w:?}");
                    let got = match name {
                        "FERROCL_PIN_THREADS" => s.pin_threads,
                        "FERROCL_FTZ" => s.flush_denormals,
                        "FERROCL_FP64" => s.fp64,
                        "FERROCL_SUBGROUPS" => s.sub_groups,
                        "FERROCL_FP16" => s.fp16,
                        "FERROCL_CACHE" => s.cache_dir.is_some(),
                        "FERROCL_IMAGES" => s.images,
                        "FERROCL_PIPES" => s.pipes,
                        "FERROCL_DEVICE_ENQUEUE" => s.device_enqueue,
                        _ => s.vectorize,
                    };
                    assert_eq!(got, want, "{name}={v}");
                }
            }
        }
    }

    #[test]
    fn kernel_timeout_is_off_by_default_and_takes_seconds() {
        assert_eq!(parse(&[]).0.kernel_timeout, None);
        for (v, want) in [
            ("2", Some(Duration::from_secs(2))),
            (" 0.25 ", Some(Duration::from_millis(250))),
            ("1e-3", Some(Duration::from_millis(1))),
            ("off", None),
            ("0", None),
            ("NO", None),
        ] {
            let (s, w) = parse(&[("FERROCL_KERNEL_TIMEOUT", v)]);
            assert!(w.is_empty(), "{v}: {w:?}");
            assert_eq!(s.kernel_timeout, want, "{v}");
        }
        for v in ["-1", "soon", "inf", "NaN", "1e400", "on"] {
            let (s, w) = parse(&[("FERROCL_KERNEL_TIMEOUT", v)]);
            assert_eq!(s.kernel_timeout, None, "{v}");
            assert_eq!(w.len(), 1, "{v}: {w:?}");
            assert!(w[0].contains("FERROCL_KERNEL_TIMEOUT"), "{}", w[0]);
        }
    }

    #[test]
    fn svm_levels() {
        assert_eq!(parse(&[]).0.svm, SvmLevel::FineGrain);
        for (v, want) in [
            ("on", SvmLevel::FineGrain),
            ("COARSE", SvmLevel::CoarseGrain),
            ("no", SvmLevel::Off),
            ("0", SvmLevel::Off),
        ] {
            let (s, w) = parse(&[("FERROCL_SVM", v)]);
            assert!(w.is_empty(), "{v}: {w:?}");
            assert_eq!(s.svm, want, "{v}");
        }
        let (s, w) = parse(&[("FERROCL_SVM", "fine")]);
        assert_eq!((s.svm, w.len()), (SvmLevel::FineGrain, 1));
    }

    #[test]
    fn cache_directory_and_bound() {
        let dir = |vars: &[(&str, &str)]| parse(vars).0.cache_dir;
        assert_eq!(
            dir(&[("HOME", "/home/u")]),
            Some(PathBuf::from("/home/u/.cache/ferrocl"))
        );
        assert_eq!(
            dir(&[("HOME", "/home/u"), ("XDG_CACHE_HOME", "/xdg")]),
            Some(PathBuf::from("/xdg/ferrocl"))
        );
        assert_eq!(
            dir(&[("HOME", "/home/u"), ("XDG_CACHE_HOME", "rel")]),
            Some(PathBuf::from("/home/u/.cache/ferrocl"))
        );
        assert_eq!(
            dir(&[("XDG_CACHE_HOME", "/xdg"), ("FERROCL_CACHE_DIR", "/c")]),
            Some(PathBuf::from("/c"))
        );
        assert_eq!(
            dir(&[("FERROCL_CACHE_DIR", "/c"), ("FERROCL_CACHE", "off")]),
            None
        );
        assert_eq!(dir(&[]), None);
        assert_eq!(parse(&[]).0.cache_max_bytes, DEFAULT_CACHE_MAX_BYTES);
        assert_eq!(parse_size("64k"), Some(65536));
        assert_eq!(parse_size(" 3M "), Some(3 << 20));
        assert_eq!(parse_size("2G"), Some(2 << 30));
        assert_eq!(parse_size("1000"), Some(1000));
        for bad in ["", "M", "-1", "1.5M", "12T", "99999999999G"] {
            assert_eq!(parse_size(bad), None, "{bad}");
        }
        let (s, w) = parse(&[("FERROCL_CACHE_MAX_SIZE", "lots")]);
        assert_eq!(w.len(), 1, "{w:?}");
        assert_eq!(s.cache_max_bytes, DEFAULT_CACHE_MAX_BYTES);
    }

    #[test]
    fn llvm_tools_in_a_server_or_as_processes() {
        assert!(parse(&[]).0.llvm_server);
        assert!(!parse(&[("FERROCL_LLVM", "process")]).0.llvm_server);
        assert!(parse(&[("FERROCL_LLVM", " Server ")]).0.llvm_server);
        let (s, w) = parse(&[("FERROCL_LLVM", "both")]);
        assert!(s.llvm_server);
        assert_eq!(w.len(), 1, "{w:?}");
    }

    #[test]
    fn rtz_selects_embedded_profile_without_fp64() {
        let (s, w) = parse(&[("FERROCL_ROUNDING", "rtz")]);
        assert!(w.is_empty());
        assert_eq!(s.profile, Profile::Embedded);
        assert!(!s.fp64);
        let (_, w) = parse(&[
            ("FERROCL_ROUNDING", "rtz"),
            ("FERROCL_FP64", "on"),
            ("FERROCL_PROFILE", "full"),
        ]);
        assert_eq!(w.len(), 2, "{w:?}");
    }

    #[test]
    fn backend_is_tiered_unless_another_is_asked() {
        assert_eq!(parse(&[]).0.backend, BackendSetting::Tiered);
        assert_eq!(parse(&[]).0.tier_up_after, DEFAULT_TIER_UP_AFTER);
        let (s, w) = parse(&[("FERROCL_BACKEND", " Wide ")]);
        assert!(w.is_empty(), "{w:?}");
        assert_eq!(s.backend, BackendSetting::Wide);
        let (s, w) = parse(&[
            ("FERROCL_BACKEND", "cranelift"),
            ("FERROCL_TIER_UP_AFTER", "2.5"),
        ]);
        assert!(w.is_empty(), "{w:?}");
        assert_eq!(s.backend, BackendSetting::Cranelift);
        assert_eq!(s.tier_up_after, Duration::from_millis(2500));
        let (s, w) = parse(&[
            ("FERROCL_BACKEND", "llvm"),
            ("FERROCL_TIER_UP_AFTER", "soon"),
        ]);
        assert_eq!(s.backend, BackendSetting::Tiered);
        assert_eq!(s.tier_up_after, DEFAULT_TIER_UP_AFTER);
        assert_eq!(
            w,
            [
                "FERROCL_BACKEND=\"llvm\" is not one of tiered, cranelift, wide; using tiered",
                "FERROCL_TIER_UP_AFTER=\"soon\" is not a positive number of seconds; using 0.05"
            ]
        );
    }

    /// docs/configuration.md has a row for every variable, and its table of runtime settings
    /// names no variable this list lacks.
    #[test]
    fn every_variable_is_documented() {
        let doc = include_str!("../../docs/configuration.md");
        for v in VARIABLES {
            let row = format!("| `{}` |", v.name);
            assert!(
                doc.contains(&row),
                "docs/configuration.md lacks a row for {}",
                v.name
            );
        }
        let runtime_table = doc
            .split("## Runtime settings")
            .nth(1)
            .and_then(|s| s.split("\n## ").next())
            .expect("docs/configuration.md has a Runtime settings section");
        for line in runtime_table.lines() {
            if let Some(name) = line.strip_prefix("| `").and_then(|l| l.split('`').next()) {
                assert!(
                    VARIABLES.iter().any(|v| v.name == name),
                    "docs/configuration.md documents {name}, which settings.rs does not read"
                );
            }
        }
    }
}
