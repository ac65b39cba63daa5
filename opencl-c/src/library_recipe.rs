//! The OpenCL C recipe (opencl_c.rs) run by the LLVM libraries in the LLVM server
//! (llvm_tools.rs) instead of as processes: the request a build sends, the server's side of
//! it, and the retry the process recipe makes when llvm-spirv-15 refuses an optimised module.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use crate::opencl_c::{unsigned_vec_type_hints, CLANG, OPT_DATA_LAYOUT, OPT_PASSES};

/// clang's executable path when the tools can run by their libraries (llvm_tools.rs): clang's
/// driver finds its resource directory, and `opencl-c.h`, from it, as the process does from
/// its own path.
pub(crate) fn clang_path() -> Option<&'static Path> {
    static PATH: OnceLock<Option<PathBuf>> = OnceLock::new();
    let found = PATH.get_or_init(|| {
        let on_path = std::env::var_os("PATH")?;
        let program = std::env::split_paths(&on_path)
            .map(|dir| dir.join(CLANG))
            .find(|p| p.is_file())?;
        std::fs::canonicalize(program).ok()
    });
    let path = found.as_deref()?;
    crate::llvm_tools::available().then_some(path)
}

/// Frames of a build's reply (llvm_tools::in_server): the log so far, sent as the
/// translation starts; the SPIR-V; the unsigned `vec_type_hint` types; the log of a failure.
const FRAME_LOG: u8 = b'L';
const FRAME_SPIRV: u8 = b'S';
const FRAME_HINTS: u8 = b'H';
const FRAME_FAILED: u8 = b'E';

/// Kernels whose `vec_type_hint` is unsigned, with the type's OpenCL C name.
type UnsignedHints = Vec<(String, String)>;

/// One build for the LLVM server: clang's arguments (its path first) for bitcode and, where
/// the hints are read, for textual IR (empty otherwise), each ending in `-o <file>`; whether
/// opt's passes run; llvm-spirv's extension list.
struct ServerBuild {
    clang_bitcode: Vec<OsString>,
    clang_textual: Vec<OsString>,
    optimise: bool,
    spirv_extensions: String,
}

fn pack_args(args: &[OsString]) -> Vec<u8> {
    use std::os::unix::ffi::OsStrExt;
    crate::llvm_tools::pack(&args.iter().map(|a| a.as_bytes()).collect::<Vec<_>>())
}

fn unpack_args(bytes: &[u8]) -> Option<Vec<OsString>> {
    use std::os::unix::ffi::OsStrExt;
    let items = crate::llvm_tools::unpack(bytes)?;
    Some(
        items
            .iter()
            .map(|a| std::ffi::OsStr::from_bytes(a).to_owned())
            .collect(),
    )
}

impl ServerBuild {
    fn pack(&self) -> Vec<u8> {
        crate::llvm_tools::pack(&[
            if self.optimise { b"1" } else { b"0" },
            self.spirv_extensions.as_bytes(),
            &pack_args(&self.clang_bitcode),
            &pack_args(&self.clang_textual),
        ])
    }

    fn unpack(bytes: &[u8]) -> Option<ServerBuild> {
        let [optimise, extensions, bitcode, textual] =
            <[&[u8]; 4]>::try_from(crate::llvm_tools::unpack(bytes)?).ok()?;
        Some(ServerBuild {
            clang_bitcode: unpack_args(bitcode)?,
            clang_textual: unpack_args(textual)?,
            optimise: optimise == b"1",
            spirv_extensions: String::from_utf8(extensions.to_vec()).ok()?,
        })
    }
}

/// clang with `argv`, then the file its `-o` names: the output, with clang's diagnostics
/// added to `log`; or the log up to the failure.
fn run_clang(
    tools: &crate::llvm_tools::Tools,
    argv: &[OsString],
    log: &mut String,
) -> Result<Vec<u8>, String> {
    match tools.clang(argv) {
        Ok(diagnostics) => log.push_str(&diagnostics),
        Err(diagnostics) => return Err(format!("{log}{diagnostics}error: {CLANG} failed\n")),
    }
    let output = argv
        .iter()
        .rposition(|a| a == "-o")
        .and_then(|o| argv.get(o + 1));
    let output = output.ok_or_else(|| format!("{log}error: clang was given no output file\n"))?;
    std::fs::read(output).map_err(|e| format!("{log}error: cannot read clang's output: {e}\n"))
}

/// The LLVM server's side of a build ([`ServerBuild`], packed): clang, the passes and the
/// translator, each step's failure sent as [`FRAME_FAILED`] with the log up to it.
fn serve_build(
    tools: &crate::llvm_tools::Tools,
    request: &[u8],
    out: &mut crate::llvm_tools::Sender,
) {
    let Some(build) = ServerBuild::unpack(request) else {
        out.send(FRAME_FAILED, b"error: a malformed build request\n");
        return;
    };
    let steps = |out: &mut crate::llvm_tools::Sender| -> Result<(), String> {
        let mut log = String::new();
        let bitcode = run_clang(tools, &build.clang_bitcode, &mut log)?;
        if !build.clang_textual.is_empty() {
            // The hints are read from textual IR, for which clang runs once more (a few ms).
            let ir = run_clang(tools, &build.clang_textual, &mut String::new())?;
            let hints = unsigned_vec_type_hints(&String::from_utf8_lossy(&ir));
            let text: String = hints.iter().map(|(k, t)| format!("{k} {t}\n")).collect();
            out.send(FRAME_HINTS, text.as_bytes());
        }
        let module = if build.optimise {
            tools
                .optimise(&bitcode, OPT_PASSES, OPT_DATA_LAYOUT)
                .map_err(|message| format!("{log}{message}"))?
        } else {
            bitcode
        };
        out.send(FRAME_LOG, log.as_bytes());
        let spirv = tools
            .translate(&module, (1, 3), &build.spirv_extensions)
            .map_err(|e| format!("{log}{e}"))?;
        out.send(FRAME_SPIRV, &spirv);
        Ok(())
    };
    if let Err(failed) = steps(out) {
        out.send(FRAME_FAILED, failed.as_bytes());
    }
}

/// The recipe with clang, opt's passes and llvm-spirv run by their libraries in the LLVM
/// server (llvm_tools.rs), on the same arguments as the processes: the SPIR-V and the
/// unsigned `vec_type_hint` types, or the log up to the step that failed. `clang_args` gives
/// clang's arguments after its name for an output file and textual IR or not.
pub(crate) fn build(
    clang_path: &Path,
    clang_args: &dyn Fn(&Path, bool) -> Vec<OsString>,
    dir: &Path,
    opt_disable: bool,
    read_hints: bool,
    spirv_extensions: &str,
    log: &mut String,
) -> Result<(Vec<u8>, UnsignedHints), String> {
    let argv = |output: &str, text: bool| {
        let mut argv = vec![clang_path.as_os_str().to_owned()];
        argv.extend(clang_args(&dir.join(output), text));
        argv
    };
    let attempt = |optimise: bool| {
        let request = ServerBuild {
            clang_bitcode: argv("input.bc", false),
            clang_textual: if read_hints {
                argv("input.ll", true)
            } else {
                Vec::new()
            },
            optimise,
            spirv_extensions: spirv_extensions.to_owned(),
        };
        crate::llvm_tools::in_server(&dir.join("llvm.err"), &request.pack(), serve_build)
            .ok_or_else(|| format!("{log}{}", crate::llvm_tools::NOT_AVAILABLE))
    };
    let text =
        |bytes: Option<&[u8]>| String::from_utf8_lossy(bytes.unwrap_or_default()).into_owned();
    let first = attempt(!opt_disable)?;
    let report = match (first.frame(FRAME_SPIRV), first.frame(FRAME_LOG)) {
        (Some(_), _) => first,
        (None, Some(before)) if !opt_disable => {
            // As the process recipe: what llvm-spirv-15 refuses of the optimised module
            // (returning an error or calling exit()), it is given unoptimised.
            let refused = match &first.ended {
                Err(ended) => format!("{}{}", String::from_utf8_lossy(before), ended),
                Ok(()) => text(first.frame(FRAME_FAILED)),
            };
            let retry = attempt(false)?;
            if retry.frame(FRAME_SPIRV).is_none() {
                return Err(format!("{log}{refused}"));
            }
            retry
        }
        (None, before) => {
            let failed = match (&first.ended, first.frame(FRAME_FAILED)) {
                (Ok(()), Some(failed)) => String::from_utf8_lossy(failed).into_owned(),
                (Ok(()), None) => "error: the LLVM tools ended without a result\n".to_owned(),
                (Err(ended), _) => format!("{}{ended}", text(before)),
            };
            return Err(format!("{log}{failed}"));
        }
    };
    log.push_str(&text(report.frame(FRAME_LOG)));
    let hints = text(report.frame(FRAME_HINTS))
        .lines()
        .filter_map(|l| l.split_once(' '))
        .map(|(k, t)| (k.to_owned(), t.to_owned()))
        .collect();
    Ok((
        report.frame(FRAME_SPIRV).unwrap_or_default().to_vec(),
        hints,
    ))
}

#[cfg(test)]
mod tests {
    use crate::opencl_c::compile_opencl_c;

    /// Builds on several threads at once each get a server (or wait for one) and the SPIR-V
    /// each thread gets is the one a build on its own gets.
    #[test]
    fn concurrent_builds_get_their_own_results() {
        assert!(
            super::clang_path().is_some(),
            "the LLVM libraries must load here"
        );
        let source =
            |i: usize| format!("kernel void k{i}(global int* p) {{ p[get_global_id(0)] *= {i}; }}");
        let alone: Vec<Vec<u8>> = (0..6)
            .map(|i| compile_opencl_c(&source(i), "", &[], &[]).expect("builds"))
            .collect();
        let together: Vec<Vec<u8>> = std::thread::scope(|scope| {
            let threads: Vec<_> = (0..6)
                .map(|i| scope.spawn(move || compile_opencl_c(&source(i), "", &[], &[])))
                .collect();
            threads
                .into_iter()
                .map(|t| t.join().expect("no panic").expect("builds"))
                .collect()
        });
        assert_eq!(alone, together);
    }
}
