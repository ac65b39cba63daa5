//! The LLVM server that runs OpenCL C builds (opencl-c/src/llvm_tools.rs), through the real
//! loader, when it dies or loses its socket between builds (issue #35): the next build must
//! still succeed, and the driver must not close a descriptor that has become the
//! application's.
//!
//! A binary of its own, its tests one at a time: the servers are children of this process,
//! and a kill or a close aimed at them must not hit a build of another test.

mod common;

use std::os::fd::AsRawFd;

use common::{arg_buf, check, cl, Env};
use opencl3::kernel::Kernel;

/// The LLVM server processes: children of this process (fork, no exec).
fn servers() -> Vec<i32> {
    let me = std::process::id().to_string();
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").expect("/proc").flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|n| n.parse::<i32>().ok())
        else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
            continue;
        };
        // pid (comm) state ppid …: comm may hold spaces and parentheses, so it is skipped to
        // the last ')'.
        let after = stat.rsplit_once(')').map_or("", |(_, rest)| rest);
        let mut fields = after.split_whitespace();
        let state = fields.next().unwrap_or("");
        if fields.next() == Some(me.as_str()) && state != "Z" {
            found.push(pid);
        }
    }
    found
}

/// This process's socket descriptors: the driver opens none but its ends of the LLVM servers'
/// sockets (the harness and the loader open none).
fn socket_descriptors() -> Vec<i32> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir("/proc/self/fd")
        .expect("/proc/self/fd")
        .flatten()
    {
        let Some(fd) = entry.file_name().to_str().and_then(|n| n.parse().ok()) else {
            continue;
        };
        if let Ok(link) = std::fs::read_link(entry.path()) {
            if link.to_string_lossy().starts_with("socket:[") {
                out.push(fd);
            }
        }
    }
    out
}

/// Builds a kernel that writes `n` (each source is new, so no cache can answer it), runs it
/// and checks the result; the build log when the build fails.
fn try_build_and_run(env: &Env, n: i32, what: &str) -> Result<(), String> {
    let source = format!("kernel void k(global int *p) {{ p[0] = {n}; }} // {what}");
    let program = env
        .try_program_from_source(&source, "")
        .map_err(|log| format!("the build {what}: {log}"))?;
    let kernel = check(cl(Kernel::create(&program, "k")), "clCreateKernel");
    let out = env.buffer_filled(1, 0i32);
    arg_buf(&kernel, 0, &out);
    env.run(&kernel, &[1], None, None);
    assert_eq!(env.read(&out, 1)[0], n, "{what}");
    Ok(())
}

fn build_and_run(env: &Env, n: i32, what: &str) {
    try_build_and_run(env, n, what).unwrap_or_else(|log| panic!("{log}"));
}

/// The tests one at a time: each kills or cuts off the servers the other's builds use.
static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn env() -> (std::sync::MutexGuard<'static, ()>, Env) {
    let guard = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    // Read once by the driver at its first call: the server, never the cache.
    std::env::set_var("FERROCL_LLVM", "server");
    std::env::set_var("FERROCL_CACHE", "off");
    (guard, Env::new())
}

/// The idle server killed between builds (as the out-of-memory killer would): the next build
/// succeeds (before the fix it failed with "the LLVM tools failed (killed by signal 9)").
#[test]
fn a_build_after_the_server_was_killed_succeeds() {
    let (_one, env) = env();
    if env.other_icd {
        return;
    }
    build_and_run(&env, 1, "that starts the server");
    let started = servers();
    assert!(!started.is_empty(), "a build leaves an LLVM server running");
    for &pid in &started {
        // SAFETY: kill sends a signal; the pid is a child of this process not waited for.
        assert_eq!(unsafe { libc::kill(pid, libc::SIGKILL) }, 0);
    }
    // Until the kernel has torn the killed servers down they are not zombies yet.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while servers().iter().any(|p| started.contains(p)) {
        assert!(
            std::time::Instant::now() < deadline,
            "the servers did not die"
        );
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    build_and_run(&env, 2, "after the server was killed");
    build_and_run(&env, 3, "after that");

    // Killed just before the build, so that it may still look alive when it is given the
    // request: the request then goes to a new server.
    for pid in servers() {
        // SAFETY: as above.
        assert_eq!(unsafe { libc::kill(pid, libc::SIGKILL) }, 0);
    }
    build_and_run(&env, 4, "right after the server was killed");
}

/// The application closes the server's socket behind the driver's back and opens a file of
/// its own, which takes the descriptor's number: builds still succeed, and the driver leaves
/// the file open (before the fix its cleanup closed it).
#[test]
fn a_closed_server_socket_is_not_closed_again() {
    let (_one, env) = env();
    if env.other_icd {
        return;
    }
    build_and_run(&env, 6, "that starts the server");
    let running = servers();
    assert_eq!(running.len(), 1, "one server for one building thread");
    let sockets = socket_descriptors();
    assert_eq!(sockets.len(), 1, "our end of the server's socket only");
    let fd = sockets[0];

    let path = std::env::temp_dir().join(format!("ferrocl-llvm-server-{}", std::process::id()));
    let content = b"the application's own file\n";
    std::fs::write(&path, content).expect("write a file");
    // SAFETY: close takes any number; this one is the driver's socket, closed on purpose.
    assert_eq!(unsafe { libc::close(fd) }, 0);
    let file = std::fs::File::open(&path).expect("open the file");
    let _ = std::fs::remove_file(&path);
    assert_eq!(
        file.as_raw_fd(),
        fd,
        "the file takes the lowest free number"
    );
    let before = file.metadata().expect("fstat");
    // Not closed by a drop: should the driver have closed it, that would abort the test
    // before it says so.
    let mut file = std::mem::ManuallyDrop::new(file);

    // The descriptor first, then the builds: either failing is the defect.
    let builds = [
        try_build_and_run(&env, 7, "after the socket was closed"),
        try_build_and_run(&env, 8, "after that"),
    ];

    use std::io::{Read, Seek};
    use std::os::unix::fs::MetadataExt;
    let after = file.metadata().unwrap_or_else(|e| {
        panic!("the application's descriptor {fd} was closed by the driver: {e}")
    });
    assert_eq!(
        (after.dev(), after.ino()),
        (before.dev(), before.ino()),
        "descriptor {fd} is still the application's file"
    );
    file.rewind().expect("rewind");
    let mut read = Vec::new();
    file.read_to_end(&mut read).expect("read the file back");
    assert_eq!(read, content);
    drop(std::mem::ManuallyDrop::into_inner(file));
    for built in builds {
        built.unwrap_or_else(|log| panic!("{log}"));
    }
}
