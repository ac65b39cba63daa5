//! The OpenCL C recipe's tools (clang-15, opt-15, llvm-spirv-15) run as processes: where the
//! LLVM server (library_recipe.rs) cannot run them, or `FERROCL_LLVM=process` asks for them.
//! Each tool's stderr becomes the build log.

use std::path::Path;
use std::process::Command;

use crate::opencl_c::{OPT_DATA_LAYOUT, OPT_PASSES};

/// Runs `commands` as one pipeline, each one's stdout the next one's stdin, all started at
/// once; returns the last one's stdout. Each tool's stderr goes to a file of `dir` (a pipe
/// could fill up and stall it) and into `log`, up to the first tool that failed, whose index
/// comes with the log: a tool after it fails only for want of input.
pub(crate) fn run_pipeline(
    commands: &mut [Command],
    dir: &Path,
    log: &mut String,
) -> Result<Vec<u8>, (usize, String)> {
    use std::io::Read;
    use std::process::Stdio;
    let mut children: Vec<std::process::Child> = Vec::new();
    let mut errors = Vec::new();
    let mut previous: Option<std::process::ChildStdout> = None;
    let mut failure = None;
    for (i, cmd) in commands.iter_mut().enumerate() {
        let path = dir.join(format!("step-{i}.err"));
        let spawned = std::fs::File::create(&path).and_then(|err| {
            cmd.stdin(previous.take().map_or(Stdio::null(), Stdio::from))
                .stdout(Stdio::piped())
                .stderr(err)
                .spawn()
        });
        match spawned {
            Ok(mut child) => {
                previous = child.stdout.take();
                children.push(child);
                errors.push(path);
            }
            Err(e) => {
                failure = Some((
                    i,
                    format!("{log}error: cannot run {:?}: {e}\n", cmd.get_program()),
                ));
                break;
            }
        }
    }
    let mut output = Vec::new();
    if let Some(mut last) = previous.filter(|_| failure.is_none()) {
        let _ = last.read_to_end(&mut output);
    }
    // Every child is waited for, also after a failure, so none is left a zombie.
    let statuses: Vec<_> = children.iter_mut().map(|c| c.wait()).collect();
    if let Some(f) = failure {
        return Err(f);
    }
    for (i, status) in statuses.into_iter().enumerate() {
        log.push_str(&std::fs::read_to_string(&errors[i]).unwrap_or_default());
        let program = commands[i].get_program();
        match status {
            Ok(s) if s.success() => {}
            Ok(s) => return Err((i, format!("{log}error: {program:?} failed ({s})\n"))),
            Err(e) => return Err((i, format!("{log}error: cannot run {program:?}: {e}\n"))),
        }
    }
    Ok(output)
}

/// The recipe's clang → opt → llvm-spirv with opt's passes run in this process
/// (llvm_passes.rs): llvm-spirv starts with clang, so that its start-up overlaps clang's work,
/// and is fed the optimised module. Errors as [`run_pipeline`]'s, the steps numbered 0–2.
pub(crate) fn run_with_passes_in_process(
    clang: &mut Command,
    translate: &mut Command,
    dir: &Path,
    log: &mut String,
) -> Result<Vec<u8>, (usize, String)> {
    use std::io::{Read, Write};
    use std::process::Stdio;
    let spawn = |cmd: &mut Command, i: usize, stdin: Stdio| {
        let path = dir.join(format!("step-{i}.err"));
        std::fs::File::create(&path)
            .and_then(|err| cmd.stdin(stdin).stdout(Stdio::piped()).stderr(err).spawn())
            .map(|child| (child, path))
    };
    let cannot_run = |cmd: &Command, e: std::io::Error, log: &str| {
        format!("{log}error: cannot run {:?}: {e}\n", cmd.get_program())
    };
    let (mut front, front_err) =
        spawn(clang, 0, Stdio::null()).map_err(|e| (0, cannot_run(clang, e, log)))?;
    let (mut back, back_err) = match spawn(translate, 2, Stdio::piped()) {
        Ok(b) => b,
        Err(e) => {
            let _ = front.wait();
            return Err((2, cannot_run(translate, e, log)));
        }
    };
    let mut bitcode = Vec::new();
    if let Some(mut out) = front.stdout.take() {
        let _ = out.read_to_end(&mut bitcode);
    }
    let front_status = front.wait();
    log.push_str(&std::fs::read_to_string(&front_err).unwrap_or_default());
    let mut input = back.stdin.take();
    let failed = match front_status {
        Ok(s) if s.success() => None,
        Ok(s) => Some((
            0,
            format!("{log}error: {:?} failed ({s})\n", clang.get_program()),
        )),
        Err(e) => Some((0, cannot_run(clang, e, log))),
    };
    let optimised = match failed {
        Some(f) => Err(f),
        None => match crate::llvm_passes::optimise(&bitcode, OPT_PASSES, OPT_DATA_LAYOUT) {
            Some(Ok(b)) => Ok(b),
            Some(Err(message)) => Err((1, format!("{log}{message}"))),
            None => Err((
                1,
                format!("{log}error: the LLVM library is not available\n"),
            )),
        },
    };
    let optimised = match optimised {
        Ok(b) => b,
        Err(e) => {
            // llvm-spirv sees its input end and exits; it is waited for.
            drop(input.take());
            let _ = back.wait();
            return Err(e);
        }
    };
    // llvm-spirv reads its whole input before it writes: written first, then read.
    let written = input.take().map(|mut i| i.write_all(&optimised));
    let mut output = Vec::new();
    if let Some(mut out) = back.stdout.take() {
        let _ = out.read_to_end(&mut output);
    }
    let back_status = back.wait();
    log.push_str(&std::fs::read_to_string(&back_err).unwrap_or_default());
    let program = translate.get_program();
    match back_status {
        Ok(s) if s.success() && written.is_none_or(|w| w.is_ok()) => Ok(output),
        Ok(s) => Err((2, format!("{log}error: {program:?} failed ({s})\n"))),
        Err(e) => Err((2, cannot_run(translate, e, log))),
    }
}

pub(crate) fn run(cmd: &mut Command, log: &mut String) -> Result<(), String> {
    let out = cmd
        .output()
        .map_err(|e| format!("{log}error: cannot run {:?}: {e}\n", cmd.get_program()))?;
    log.push_str(&String::from_utf8_lossy(&out.stderr));
    if out.status.success() {
        Ok(())
    } else {
        Err(format!(
            "{log}error: {:?} failed ({})\n",
            cmd.get_program(),
            out.status
        ))
    }
}
