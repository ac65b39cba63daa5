//! `ferrocl-clc`: OpenCL C → SPIR-V ahead of time, with exactly the recipe and device feature
//! set the driver uses for `clBuildProgram` (clang-15 → opt-15 → llvm-spirv-15, the device's
//! extensions and `__opencl_c_*` features from the same `FERROCL_*` settings), then checked by
//! the driver's own SPIR-V validator. It implements the Khronos CTS offline-compiler interface
//! (`test_common/harness/cl_offline_compiler-interface.txt`), so a CTS suite runs in SPIR-V
//! mode with `--compilation-mode spir-v --compilation-program ferrocl-clc`:
//!
//! ```text
//! ferrocl-clc --source FILE --output FILE [--cl-device-info FILE] [--mode spir-v|binary]
//!             [--debug-info] [-- BUILD_OPTIONS...]
//! ```
//!
//! `spir-v` mode writes the module for `clCreateProgramWithIL`; `binary` mode writes a Ferrocl
//! program binary (the same module recording the executable binary type) for
//! `clCreateProgramWithBinary`. Exit status 0 on success; otherwise the build log on stderr
//! and status 1 (2 for a usage error). `--debug-info` is clang's `-g` (OpenCL.DebugInfo.100
//! instructions in the module; the driver accepts such modules, but `-g` as a build option
//! produces none): for test inputs and fuzz seeds (`fuzz/make_seeds.sh`).

use std::path::PathBuf;
use std::process::ExitCode;

use ferrocl_runtime::config::DeviceConfig;
use ferrocl_runtime::settings::Settings;

const USAGE: &str = "\
usage: ferrocl-clc --source FILE --output FILE [--cl-device-info FILE]
                   [--mode spir-v|binary] [--debug-info] [-- BUILD_OPTIONS...]

Compiles OpenCL C to SPIR-V with the Ferrocl driver's recipe and device feature set (the
FERROCL_* settings of the environment apply, as they do to the driver). Implements the Khronos
OpenCL CTS offline-compiler interface (--compilation-program).
";

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Mode {
    SpirV,
    Binary,
}

#[derive(Debug, PartialEq, Eq)]
struct Args {
    source: PathBuf,
    output: PathBuf,
    device_info: Option<PathBuf>,
    mode: Mode,
    /// `--debug-info`: clang's `-g`.
    debug_info: bool,
    /// The build options, one shell word each, as the CTS passes them after `--`.
    options: Vec<String>,
}

/// What the command line asks for.
#[derive(Debug, PartialEq, Eq)]
enum Command {
    Compile(Args),
    Help,
    Version,
}

/// Parses the command line (without the program name). Each option takes its value as
/// `--name=VALUE` or as the next word.
fn parse_args(argv: &[String]) -> Result<Command, String> {
    let (mut source, mut output, mut device_info, mut mode) = (None, None, None, Mode::SpirV);
    let mut debug_info = false;
    let mut i = 0;
    while i < argv.len() {
        let word = argv[i].as_str();
        if word == "--" {
            let options = argv[i + 1..].to_vec();
            let (Some(source), Some(output)) = (source, output) else {
                return Err("--source and --output are required".into());
            };
            return Ok(Command::Compile(Args {
                source,
                output,
                device_info,
                mode,
                debug_info,
                options,
            }));
        }
        match word {
            "-h" | "--help" => return Ok(Command::Help),
            "--version" => return Ok(Command::Version),
            "--debug-info" => {
                debug_info = true;
                i += 1;
                continue;
            }
            _ => {}
        }
        let (name, inline_value) = match word.split_once('=') {
            Some((n, v)) => (n, Some(v.to_owned())),
            None => (word, None),
        };
        if !matches!(
            name,
            "--source" | "--output" | "--cl-device-info" | "--mode"
        ) {
            return Err(format!("unknown argument \"{word}\""));
        }
        let value = match inline_value {
            Some(v) => v,
            None => {
                i += 1;
                argv.get(i)
                    .cloned()
                    .ok_or_else(|| format!("{name} needs a value"))?
            }
        };
        match name {
            "--source" => source = Some(PathBuf::from(value)),
            "--output" => output = Some(PathBuf::from(value)),
            "--cl-device-info" => device_info = Some(PathBuf::from(value)),
            _ => {
                mode = match value.as_str() {
                    "spir-v" => Mode::SpirV,
                    "binary" => Mode::Binary,
                    other => {
                        return Err(format!("--mode {other}: the modes are spir-v and binary"))
                    }
                }
            }
        }
        i += 1;
    }
    let (Some(source), Some(output)) = (source, output) else {
        return Err("--source and --output are required".into());
    };
    Ok(Command::Compile(Args {
        source,
        output,
        device_info,
        mode,
        debug_info,
        options: Vec::new(),
    }))
}

/// The build options as one string for the driver's tokeniser: words with white space or
/// quotes are quoted again, so `-DNAME=a b` stays one word.
fn join_options(words: &[String]) -> String {
    words
        .iter()
        .map(|w| {
            if w.is_empty() || w.contains(|c: char| c.is_whitespace() || c == '"') {
                format!("\"{}\"", w.replace('"', ""))
            } else {
                w.clone()
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// The `KEY=VALUE` lines of a CTS device-info file (values unquoted; `#` lines skipped).
fn parse_device_info(text: &str) -> Vec<(String, String)> {
    text.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .filter_map(|l| {
            let (k, v) = l.split_once('=')?;
            let v = v.trim();
            let v = v
                .strip_prefix('"')
                .and_then(|v| v.strip_suffix('"'))
                .unwrap_or(v);
            Some((k.trim().to_owned(), v.to_owned()))
        })
        .collect()
}

/// Checks the device described by the CTS against this device: a 64-bit device taking SPIR-V
/// (in spir-v mode); extensions that differ are reported on stderr (the FERROCL_* settings of
/// this process decide what the module may use, as they decide for the driver).
fn check_device_info(
    info: &[(String, String)],
    mode: Mode,
    device: &DeviceConfig,
) -> Result<(), String> {
    let get = |key: &str| info.iter().find(|(k, _)| k == key).map(|(_, v)| v.as_str());
    if let Some(bits) = get("CL_DEVICE_ADDRESS_BITS") {
        if bits != "64" {
            return Err(format!(
                "CL_DEVICE_ADDRESS_BITS={bits}: Ferrocl devices are 64-bit (spir64)"
            ));
        }
    }
    if mode == Mode::SpirV {
        if let Some(il) = get("CL_DEVICE_IL_VERSION") {
            if !il.contains("SPIR-V") {
                return Err(format!(
                    "CL_DEVICE_IL_VERSION=\"{il}\": the device takes no SPIR-V"
                ));
            }
        }
    }
    if let Some(listed) = get("CL_DEVICE_EXTENSIONS") {
        let ours = device.extension_string();
        let mut listed: Vec<&str> = listed.split_whitespace().collect();
        let mut ours: Vec<&str> = ours.split_whitespace().collect();
        listed.sort_unstable();
        ours.sort_unstable();
        if listed != ours {
            eprintln!(
                "ferrocl-clc: warning: the device-info file lists other extensions than this \
                 device's FERROCL_* settings give ({}); compiling for the settings",
                ours.join(" ")
            );
        }
    }
    Ok(())
}

fn compile(args: &Args) -> Result<(), String> {
    let device = DeviceConfig::detect(&Settings::from_env(), 1);
    if let Some(path) = &args.device_info {
        let text = std::fs::read_to_string(path)
            .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        check_device_info(&parse_device_info(&text), args.mode, &device)?;
    }
    let options = join_options(&args.options);
    // The driver's own option check: what clBuildProgram would refuse is refused here, the
    // OpenCL C version (-cl-std=CL3.1 only on an OpenCL 3.1 device) included.
    let parsed = ferrocl_runtime::program::parse_options(&options)
        .map_err(|_| format!("invalid build options: {options}"))?;
    ferrocl_runtime::program::check_language_version(&parsed, &device)?;
    let source = std::fs::read(&args.source)
        .map_err(|e| format!("cannot read {}: {e}", args.source.display()))?;
    let source = String::from_utf8_lossy(&source);
    let spirv = if args.debug_info {
        ferrocl_runtime::opencl_c::OpenClC {
            source: &source,
            options: &options,
            extensions: &device.opencl_c_extensions(),
            undefine: &device.clang_undefines(),
            preludes: &device.clang_preludes(),
            spirv_extensions: &device.llvm_spirv_extensions(),
            debug_info: true,
            llvm_server: device.settings.llvm_server,
        }
        .compile()?
    } else {
        device.compile_opencl_c(&source, &options)?
    };
    // What the driver would refuse is not written.
    device
        .features
        .parse(&spirv, &Default::default())
        .map_err(|e| e.log())?;
    let bytes = match args.mode {
        Mode::SpirV => spirv,
        Mode::Binary => ferrocl_runtime::binary::with_type(
            &spirv,
            opencl_sys::CL_PROGRAM_BINARY_TYPE_EXECUTABLE as _,
        ),
    };
    // Written under another name and renamed: a reader never sees half a module.
    let tmp = args
        .output
        .with_extension(format!("tmp-{}", std::process::id()));
    std::fs::write(&tmp, &bytes)
        .and_then(|()| std::fs::rename(&tmp, &args.output))
        .map_err(|e| {
            let _ = std::fs::remove_file(&tmp);
            format!("cannot write {}: {e}", args.output.display())
        })
}

fn main() -> ExitCode {
    let argv: Vec<String> = std::env::args().skip(1).collect();
    match parse_args(&argv) {
        Ok(Command::Help) => {
            print!("{USAGE}");
            ExitCode::SUCCESS
        }
        Ok(Command::Version) => {
            println!(
                "ferrocl-clc {} (driver {})",
                env!("CARGO_PKG_VERSION"),
                ferrocl_runtime::config::DRIVER_VERSION
            );
            ExitCode::SUCCESS
        }
        Ok(Command::Compile(args)) => match compile(&args) {
            Ok(()) => ExitCode::SUCCESS,
            Err(log) => {
                eprint!("{}", if log.ends_with('\n') { log } else { log + "\n" });
                ExitCode::FAILURE
            }
        },
        Err(why) => {
            eprintln!("ferrocl-clc: {why}\n{USAGE}");
            ExitCode::from(2)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(s: &[&str]) -> Vec<String> {
        s.iter().map(|w| w.to_string()).collect()
    }

    #[test]
    fn the_cts_command_line() {
        let argv = words(&[
            "--mode=spir-v",
            "--source=k.cl",
            "--output=k.spv64",
            "--cl-device-info=info.txt",
            "--",
            "-cl-std=CL3.0",
            "-DNAME=a b",
        ]);
        assert_eq!(
            parse_args(&argv),
            Ok(Command::Compile(Args {
                source: "k.cl".into(),
                output: "k.spv64".into(),
                device_info: Some("info.txt".into()),
                mode: Mode::SpirV,
                debug_info: false,
                options: words(&["-cl-std=CL3.0", "-DNAME=a b"]),
            }))
        );
        let Ok(Command::Compile(args)) =
            parse_args(&words(&["--debug-info", "--source=a.cl", "--output=a.spv"]))
        else {
            panic!("not a compile")
        };
        assert!(args.debug_info);
        let spaced = words(&["--source", "a.cl", "--output", "a.bin", "--mode", "binary"]);
        let Ok(Command::Compile(args)) = parse_args(&spaced) else {
            panic!("not a compile")
        };
        assert_eq!((args.mode, args.options.len()), (Mode::Binary, 0));
        assert!(parse_args(&words(&["--source=a.cl"])).is_err());
        assert!(parse_args(&words(&["--source=a", "--output=b", "--mode=llvm"])).is_err());
        assert!(parse_args(&words(&["--bogus"])).is_err());
        assert!(parse_args(&words(&["--output"])).is_err());
        assert_eq!(parse_args(&words(&["--help"])), Ok(Command::Help));
    }

    #[test]
    fn options_keep_their_words() {
        let joined = join_options(&words(&["-DNAME=a b", "-I", "/x y", "-cl-mad-enable"]));
        assert_eq!(joined, "\"-DNAME=a b\" -I \"/x y\" -cl-mad-enable");
        assert_eq!(
            ferrocl_runtime::opencl_c::split_build_options(&joined),
            words(&["-DNAME=a b", "-I", "/x y", "-cl-mad-enable"])
        );
    }

    #[test]
    fn device_info_files() {
        let text = "# OpenCL device info affecting SPIR-V offline compilation:\n\
                    CL_DEVICE_ADDRESS_BITS=64\n\
                    CL_DEVICE_EXTENSIONS=\"cl_khr_fp64 cl_khr_icd\"\n\
                    CL_DEVICE_IL_VERSION=\"SPIR-V_1.0 SPIR-V_1.6\"\n\
                    CL_DEVICE_NAME=\"x = y\"\n";
        let info = parse_device_info(text);
        assert_eq!(info.len(), 4);
        assert_eq!(
            info[1],
            (
                "CL_DEVICE_EXTENSIONS".into(),
                "cl_khr_fp64 cl_khr_icd".into()
            )
        );
        assert_eq!(info[3].1, "x = y");
        let device = DeviceConfig::detect(&Settings::parse(|_| None, |_| {}), 1);
        assert!(check_device_info(&info, Mode::SpirV, &device).is_ok());
        let bits32 = parse_device_info("CL_DEVICE_ADDRESS_BITS=32");
        assert!(check_device_info(&bits32, Mode::SpirV, &device).is_err());
        let no_il = parse_device_info("CL_DEVICE_IL_VERSION=\"\"");
        assert!(check_device_info(&no_il, Mode::SpirV, &device).is_err());
        assert!(check_device_info(&no_il, Mode::Binary, &device).is_ok());
    }
}
