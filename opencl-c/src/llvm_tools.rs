//! The recipe's clang-15 and llvm-spirv-15 steps run through the C++ libraries those tools are
//! built on (`libclang-cpp.so.15`, `libLLVMSPIRVLib.so.15`), with opt's passes (llvm_passes.rs),
//! in one LLVM server process, instead of as two processes per build.
//!
//! Nearly all of what each process cost was starting up: mapping and relocating libclang-cpp
//! and libLLVM took about 25 ms of each build's 30–40 ms, while clang's own work on a small
//! kernel, `opencl-c.h` included, is about 2 ms and llvm-spirv's 0.5 ms. A suite that builds
//! thousands of programs (the CTS `test_c11_atomics`) is dominated by that start-up.
//!
//! The C interface over the two libraries is `shim/llvm_tools.cpp`, which build.rs compiles
//! into a shared object embedded here. It is loaded on the first OpenCL C build only (from a
//! memory file, so that the ICD stays one file), so an application that never builds OpenCL C
//! never maps clang. Where the development files were missing at build time, or
//! `FERROCL_LLVM=process` is set (runtime settings), or loading fails, the recipe runs the
//! tools as processes, with the same output.
//!
//! The libraries are loaded in this process and run in a server process forked from it at
//! the first build (see [`Server`]), not in this process: the translator calls exit() on
//! modules it refuses and LLVM on fatal errors, which must end a build, not the application.

use std::ffi::{c_char, c_int, c_uint, c_void, CStr, CString, OsString};
use std::sync::{Mutex, OnceLock};

/// The log line when the tools were to run by their libraries and cannot.
pub(crate) const NOT_AVAILABLE: &str = "error: the LLVM libraries are not available\n";

type ClangFn = unsafe extern "C" fn(*const *const c_char, usize, *mut *mut c_char) -> c_int;
type TranslateFn = unsafe extern "C" fn(
    *const c_char,
    usize,
    c_uint,
    *const c_char,
    c_int,
    *mut *mut c_char,
    *mut usize,
    *mut *mut c_char,
) -> c_int;

/// The shared object's functions (see shim/llvm_tools.cpp).
struct Api {
    clang: ClangFn,
    translate: TranslateFn,
    free: unsafe extern "C" fn(*mut c_void),
    /// Keeps the functions above mapped.
    _library: libloading::os::unix::Library,
}

fn api() -> Option<&'static Mutex<Api>> {
    static API: OnceLock<Option<Mutex<Api>>> = OnceLock::new();
    API.get_or_init(|| load().map(Mutex::new)).as_ref()
}

#[cfg(ferrocl_llvm_tools)]
const SHARED_OBJECT: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/libferrocl_llvm_tools.so"));

#[cfg(not(ferrocl_llvm_tools))]
fn load() -> Option<Api> {
    None
}

#[cfg(ferrocl_llvm_tools)]
fn load() -> Option<Api> {
    use std::io::Write;
    use std::os::fd::FromRawFd;
    // SAFETY: memfd_create takes a NUL-terminated name and flags, and returns a new descriptor
    // (or -1), which the File then owns.
    let file = unsafe {
        let fd = libc::memfd_create(c"ferrocl-llvm-tools".as_ptr(), libc::MFD_CLOEXEC);
        if fd < 0 {
            return None;
        }
        std::fs::File::from_raw_fd(fd)
    };
    (&file).write_all(SHARED_OBJECT).ok()?;
    use std::os::fd::AsRawFd;
    let path = format!("/proc/self/fd/{}", file.as_raw_fd());
    // Bound now, with the libraries it needs, so that each server forked from this process
    // starts with every symbol bound.
    // SAFETY: the object is shim/llvm_tools.cpp, built with this crate; its initialisers and
    // those of the libraries it needs (libclang-cpp, libLLVM, libLLVMSPIRVLib) only register
    // options, passes and targets. Once mapped, it outlives the descriptor.
    let library = unsafe {
        libloading::os::unix::Library::open(Some(&path), libc::RTLD_NOW | libc::RTLD_LOCAL)
    }
    .ok()?;
    drop(file);
    // SAFETY: each symbol is the extern "C" function of that name in shim/llvm_tools.cpp,
    // whose signature is the field's type.
    unsafe {
        Some(Api {
            clang: *library.get(b"ferrocl_llvm_tools_clang\0").ok()?,
            translate: *library.get(b"ferrocl_llvm_tools_translate\0").ok()?,
            free: *library.get(b"ferrocl_llvm_tools_free\0").ok()?,
            _library: library,
        })
    }
}

/// Whether the tools can run by their libraries (the shared object was built and loads, and
/// so does the library of opt's passes).
pub(crate) fn available() -> bool {
    api().is_some() && crate::llvm_passes::available()
}

/// The libraries, in the server (see [`in_server`]).
pub(crate) struct Tools<'a> {
    tools: &'a Api,
    passes: &'a crate::llvm_passes::Api,
}

/// Takes a message the shared object allocated.
///
/// # Safety
/// `text` is null or a NUL-terminated string from the shared object, not yet freed.
unsafe fn take_text(api: &Api, text: *mut c_char) -> String {
    if text.is_null() {
        return String::new();
    }
    // SAFETY: the caller's contract; the string is freed once, here.
    unsafe {
        let owned = CStr::from_ptr(text).to_string_lossy().into_owned();
        (api.free)(text.cast());
        owned
    }
}

impl Tools<'_> {
    /// `clang-15 <args>`, where `args[0]` is clang's executable path (clang finds its resource
    /// directory, and `opencl-c.h`, from there): Ok or Err with clang's diagnostics.
    pub(crate) fn clang(&self, args: &[OsString]) -> Result<String, String> {
        use std::os::unix::ffi::OsStrExt;
        let api = self.tools;
        let Ok(args) = args
            .iter()
            .map(|a| CString::new(a.as_bytes()))
            .collect::<Result<Vec<_>, _>>()
        else {
            return Err("error: a clang argument with a NUL byte\n".into());
        };
        let pointers: Vec<*const c_char> = args.iter().map(|a| a.as_ptr()).collect();
        let mut log: *mut c_char = std::ptr::null_mut();
        // SAFETY: `pointers` are `args.len()` NUL-terminated strings alive for the call; the
        // log is the shared object's to allocate and ours to free.
        let (success, log) = unsafe {
            let success = (api.clang)(pointers.as_ptr(), pointers.len(), &mut log) != 0;
            (success, take_text(api, log))
        };
        if success {
            Ok(log)
        } else {
            Err(log)
        }
    }

    /// opt's passes, as [`crate::llvm_passes::optimise`].
    pub(crate) fn optimise(
        &self,
        bitcode: &[u8],
        passes: &str,
        data_layout: &str,
    ) -> Result<Vec<u8>, String> {
        crate::llvm_passes::optimise_with(self.passes, bitcode, passes, data_layout)
    }

    /// `llvm-spirv-15 --spirv-max-version=<max_version> --spirv-ext=<extensions>
    /// --preserve-ocl-kernel-arg-type-metadata-through-string` on a module (bitcode or textual
    /// IR): the SPIR-V, or the translator's error. The translator calls exit() on some modules
    /// it refuses, which only a process of its own (the server) can survive.
    pub(crate) fn translate(
        &self,
        ir: &[u8],
        max_version: (u8, u8),
        extensions: &str,
    ) -> Result<Vec<u8>, String> {
        let api = self.tools;
        let Ok(extensions) = CString::new(extensions) else {
            return Err("error: an extension list with a NUL byte\n".into());
        };
        let version = (c_uint::from(max_version.0) << 16) | (c_uint::from(max_version.1) << 8);
        let mut spirv: *mut c_char = std::ptr::null_mut();
        let mut spirv_size = 0usize;
        let mut log: *mut c_char = std::ptr::null_mut();
        // SAFETY: `ir` and `extensions` are alive for the call; on success `spirv` points to
        // `spirv_size` bytes the shared object allocated, copied and then freed here once.
        unsafe {
            let success = (api.translate)(
                ir.as_ptr().cast(),
                ir.len(),
                version,
                extensions.as_ptr(),
                1,
                &mut spirv,
                &mut spirv_size,
                &mut log,
            ) != 0;
            let log = take_text(api, log);
            if !success {
                return Err(log);
            }
            let bytes = std::slice::from_raw_parts(spirv.cast::<u8>(), spirv_size).to_vec();
            (api.free)(spirv.cast());
            Ok(bytes)
        }
    }
}

/// What a request's handler sent before it ended: (kind, bytes) frames in order, and how it
/// ended (Err: the reason and what it wrote to stderr, when the server died during it).
pub(crate) struct Reply {
    pub frames: Vec<(u8, Vec<u8>)>,
    pub ended: Result<(), String>,
}

impl Reply {
    /// The last frame of `kind`.
    pub(crate) fn frame(&self, kind: u8) -> Option<&[u8]> {
        self.frames
            .iter()
            .rev()
            .find(|f| f.0 == kind)
            .map(|f| f.1.as_slice())
    }
}

/// Where a handler writes its frames.
pub(crate) struct Sender(std::fs::File);

impl Sender {
    /// Sends one frame; the parent keeps what arrived even if the server then dies.
    pub(crate) fn send(&mut self, kind: u8, bytes: &[u8]) {
        use std::io::Write;
        // A parent that stopped reading has nothing to learn: errors are ignored.
        let _ = self.0.write_all(&frame(kind, bytes));
    }
}

/// The frame that ends a request's reply, the one that carries a request, and the one that
/// acknowledges it: a server that ends before it is no error of the request's.
const FRAME_DONE: u8 = 0;
const FRAME_REQUEST: u8 = 1;
const FRAME_TAKEN: u8 = 2;

/// One frame on the server's socket, either way: its kind, its length, its bytes.
fn frame(kind: u8, bytes: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(9 + bytes.len());
    out.push(kind);
    out.extend_from_slice(&(bytes.len() as u64).to_le_bytes());
    out.extend_from_slice(bytes);
    out
}

/// The next frame from the socket; None when it ends first.
fn read_frame(socket: &mut std::fs::File) -> Option<(u8, Vec<u8>)> {
    use std::io::Read;
    let mut header = [0u8; 9];
    socket.read_exact(&mut header).ok()?;
    let len = usize::try_from(u64::from_le_bytes(header[1..].try_into().ok()?)).ok()?;
    let mut bytes = vec![0u8; len];
    socket.read_exact(&mut bytes).ok()?;
    Some((header[0], bytes))
}

/// `items` as one byte string (each item's length, then its bytes), for [`unpack`].
pub(crate) fn pack(items: &[&[u8]]) -> Vec<u8> {
    let mut out = Vec::new();
    for item in items {
        out.extend_from_slice(&(item.len() as u64).to_le_bytes());
        out.extend_from_slice(item);
    }
    out
}

/// The items of a [`pack`]ed byte string; None when it is cut or malformed.
pub(crate) fn unpack(mut bytes: &[u8]) -> Option<Vec<&[u8]>> {
    let mut items = Vec::new();
    while !bytes.is_empty() {
        let len = usize::try_from(u64::from_le_bytes(bytes.get(..8)?.try_into().ok()?)).ok()?;
        items.push(bytes.get(8..8usize.checked_add(len)?)?);
        bytes = &bytes[8 + len..];
    }
    Some(items)
}

/// A request handler: runs in the server with the libraries, replies through the sender.
pub(crate) type Handler = fn(&Tools, &[u8], &mut Sender);

/// Exit status of a server whose libraries called exit() (the translator on a module it
/// refuses, LLVM on a fatal error): its own handler ends it at once, so that none of the
/// application's exit handlers run in it.
const LIBRARY_EXIT: c_int = 113;

extern "C" fn end_server_at_exit() {
    // SAFETY: _exit ends the process without running anything else.
    unsafe { libc::_exit(LIBRARY_EXIT) }
}

/// A server process: a fork of this one made at a build, with the libraries already loaded.
/// It serves requests one at a time, so it stays warm (clang initialises itself on first use,
/// about 30 ms); it ends when its request socket closes (this process exits;
/// `PR_SET_PDEATHSIG` is not used, as it fires when the forking thread ends), or when the
/// libraries end it, and a later request forks a new one. Builds on several threads at once
/// get a server each, up to [`MAX_SERVERS`].
///
/// An idle server can die (the out-of-memory killer's natural pick, or anything that ends
/// stray processes), and the application can close its socket's descriptor, whose number
/// then names whatever the application opens next: a server is checked before it is given a
/// request ([`Server::can_take_request`]), its descriptor is closed only while it still is
/// its socket, and its process is signalled only while it is this process's unreaped child.
struct Server {
    pid: libc::pid_t,
    /// Requests go out and replies come back on it; None once closed or given up.
    socket: Option<std::fs::File>,
    /// The socket's device and inode, which no other open file shares.
    identity: (u64, u64),
    process: Process,
}

/// What is known of a server's process.
#[derive(Clone, Copy)]
enum Process {
    /// Not waited for yet: the pid is still this process's child, no other process's.
    Unreaped,
    /// Waited for, with this status; the pid may now be another process's.
    Reaped(c_int),
    /// Waited for elsewhere (the application waited for any child, or ignores SIGCHLD).
    Lost,
}

/// The device and inode of an open descriptor.
fn identity(fd: c_int) -> Option<(u64, u64)> {
    let mut stat = std::mem::MaybeUninit::<libc::stat>::uninit();
    // SAFETY: fstat writes a `stat` into the buffer when it returns 0, and only reads `fd`.
    unsafe {
        if libc::fstat(fd, stat.as_mut_ptr()) != 0 {
            return None;
        }
        let stat = stat.assume_init();
        Some((stat.st_dev, stat.st_ino))
    }
}

impl Server {
    fn new(pid: libc::pid_t, socket: std::fs::File) -> Server {
        use std::os::fd::AsRawFd;
        Server {
            pid,
            // A socket just made always has one; (0, 0) then only makes it never ours.
            identity: identity(socket.as_raw_fd()).unwrap_or((0, 0)),
            socket: Some(socket),
            process: Process::Unreaped,
        }
    }

    /// The socket, while its descriptor still is the socket this server was made with.
    fn socket(&mut self) -> Option<&mut std::fs::File> {
        use std::os::fd::AsRawFd;
        let socket = self.socket.as_mut()?;
        (identity(socket.as_raw_fd()) == Some(self.identity)).then_some(socket)
    }

    /// Closes the socket if its descriptor is still ours; otherwise forgets it, as the number
    /// is the application's now. Closing it ends an idle server (it reads the end).
    fn close_socket(&mut self) {
        let ours = self.socket().is_some();
        if let Some(socket) = self.socket.take() {
            if ours {
                drop(socket);
            } else {
                std::mem::forget(socket);
            }
        }
    }

    /// Whether the process has ended (waiting for it if so); true once it is no longer ours.
    fn has_ended(&mut self) -> bool {
        if !matches!(self.process, Process::Unreaped) {
            return true;
        }
        let mut status: c_int = 0;
        loop {
            // SAFETY: waitpid without blocking on this process's own child, not waited for.
            let r = unsafe { libc::waitpid(self.pid, &mut status, libc::WNOHANG) };
            if r == 0 {
                return false;
            }
            if r == self.pid {
                self.process = Process::Reaped(status);
                return true;
            }
            if std::io::Error::last_os_error().kind() != std::io::ErrorKind::Interrupted {
                self.process = Process::Lost;
                return true;
            }
        }
    }

    /// Whether an idle server can take a request: its descriptor is still its socket, its
    /// process runs, and nothing is to be read (an idle server sends nothing, so a readable
    /// socket is one it closed).
    fn can_take_request(&mut self) -> bool {
        use std::os::fd::AsRawFd;
        let Some(fd) = self.socket().map(|s| s.as_raw_fd()) else {
            return false;
        };
        if self.has_ended() {
            return false;
        }
        let mut poll = libc::pollfd {
            fd,
            events: libc::POLLIN,
            revents: 0,
        };
        loop {
            // SAFETY: polls one descriptor of this process without waiting.
            let r = unsafe { libc::poll(&mut poll, 1, 0) };
            if r >= 0 || std::io::Error::last_os_error().kind() != std::io::ErrorKind::Interrupted {
                return r == 0;
            }
        }
    }

    /// Ends the server: closes its socket, gives the process `grace` to end by itself (it
    /// ends on reading the socket's end, or is ending when it closed the socket), then kills
    /// it, and waits for it. Its wait status, None when another waited for it.
    fn end(mut self, grace: std::time::Duration) -> Option<c_int> {
        self.close_socket();
        let deadline = std::time::Instant::now() + grace;
        let mut pause = std::time::Duration::from_micros(50);
        while !self.has_ended() {
            if std::time::Instant::now() >= deadline {
                // Just seen running and not waited for: the pid is still this child's.
                // SAFETY: kill sends a signal and touches no memory.
                unsafe { libc::kill(self.pid, libc::SIGKILL) };
                let mut status: c_int = 0;
                let waited = loop {
                    // SAFETY: waits for this process's own child, killed just now.
                    let r = unsafe { libc::waitpid(self.pid, &mut status, 0) };
                    if r >= 0
                        || std::io::Error::last_os_error().kind() != std::io::ErrorKind::Interrupted
                    {
                        break r == self.pid;
                    }
                };
                self.process = if waited {
                    Process::Reaped(status)
                } else {
                    Process::Lost
                };
                break;
            }
            std::thread::sleep(pause);
            pause = (pause * 2).min(std::time::Duration::from_millis(10));
        }
        match self.process {
            Process::Reaped(status) => Some(status),
            Process::Unreaped | Process::Lost => None,
        }
    }
}

impl Drop for Server {
    /// Closes the socket only: the pool of a forked child of this process drops the parent's
    /// servers, which are not its children to wait for.
    fn drop(&mut self) {
        self.close_socket();
    }
}

/// At most this many servers (and never more than the CPUs): each holds clang's working
/// memory, tens of MB.
const MAX_SERVERS: usize = 4;

/// The idle servers, and how many there are in all.
struct Pool {
    /// The process whose servers these are: a child of it (fork without exec) inherits the
    /// pool, and must start servers of its own rather than share the sockets.
    owner: u32,
    idle: Vec<Server>,
    started: usize,
}

static POOL: Mutex<Pool> = Mutex::new(Pool {
    owner: 0,
    idle: Vec::new(),
    started: 0,
});
static SERVER_FREED: std::sync::Condvar = std::sync::Condvar::new();

/// A live idle server, or a new one while there are fewer than the limit, else the next one
/// a build hands back. Idle servers that died or lost their socket are ended on the way.
/// None when no server can be started.
fn take_server() -> Option<Server> {
    loop {
        let (mut server, idle) = take_or_start()?;
        if !idle || server.can_take_request() {
            return Some(server);
        }
        // Killed, or cut off by the application closing the descriptor: whatever is left of
        // it is of no use, and not worth waiting for.
        server.end(std::time::Duration::ZERO);
        give_back(None);
    }
}

/// An idle server (true) or a new one (false): see [`take_server`].
fn take_or_start() -> Option<(Server, bool)> {
    let limit = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(MAX_SERVERS);
    let mut pool = POOL.lock().unwrap_or_else(|e| e.into_inner());
    loop {
        if pool.owner != std::process::id() {
            // Inherited (or never used): the sockets are copies of the parent's; closing them
            // here leaves the parent's servers alone, which are not ours to wait for.
            pool.idle.clear();
            pool.started = 0;
            pool.owner = std::process::id();
        }
        if let Some(server) = pool.idle.pop() {
            return Some((server, true));
        }
        if pool.started < limit {
            pool.started += 1;
            drop(pool);
            let server = start_server();
            if server.is_none() {
                give_back(None);
            }
            return server.map(|s| (s, false));
        }
        pool = SERVER_FREED.wait(pool).unwrap_or_else(|e| e.into_inner());
    }
}

/// Returns a server to the pool after a request, or None for one that died.
fn give_back(server: Option<Server>) {
    let mut pool = POOL.lock().unwrap_or_else(|e| e.into_inner());
    match server {
        Some(server) => pool.idle.push(server),
        None => pool.started = pool.started.saturating_sub(1),
    }
    SERVER_FREED.notify_one();
}

/// Runs `handler` on `request` in the server process with the libraries (see [`Server`]), so
/// that what they do to a process on input they refuse (the translator's exit(), LLVM's fatal
/// errors, a crash) ends the server and becomes a build error, as with the tools' processes.
/// A server that ended before it took the request (killed between the check and the request)
/// is no error of the request's: it goes to a new server once more.
/// `stderr` names a file that takes the server's stderr for this request; relative paths in
/// the request are taken from this process's working directory. None when the tools are not
/// available or no server can be started.
pub(crate) fn in_server(
    stderr: &std::path::Path,
    request: &[u8],
    handler: Handler,
) -> Option<Reply> {
    let message = request_frame(stderr, request, handler);
    let mut last = None;
    for _ in 0..2 {
        match exchange(take_server()?, &message, stderr) {
            Exchange::Replied(reply, server) => {
                give_back(Some(server));
                return Some(reply);
            }
            Exchange::Died { reply, taken } => {
                give_back(None);
                if taken {
                    return Some(reply);
                }
                last = Some(reply);
            }
        }
    }
    last
}

/// The frame that asks a server to run `handler` on `request` (see [`serve`]).
fn request_frame(stderr: &std::path::Path, request: &[u8], handler: Handler) -> Vec<u8> {
    use std::os::unix::ffi::OsStrExt;
    let cwd = std::env::current_dir().unwrap_or_default();
    // The server is a fork of this process: the handler's address is the same there.
    let handler_address = (handler as usize).to_le_bytes();
    frame(
        FRAME_REQUEST,
        &pack(&[
            &handler_address,
            request,
            stderr.as_os_str().as_bytes(),
            cwd.as_os_str().as_bytes(),
        ]),
    )
}

/// How one request to one server went.
enum Exchange {
    /// The whole reply, and the server, ready for another request.
    Replied(Reply, Server),
    /// The server died (and was waited for): the frames it sent and the error; whether it
    /// had taken the request, which it acknowledges before running anything.
    Died { reply: Reply, taken: bool },
}

/// Sends `message` (a request frame) to `server` and reads the reply.
fn exchange(mut server: Server, message: &[u8], stderr: &std::path::Path) -> Exchange {
    let mut frames = Vec::new();
    let mut taken = false;
    if let Some(socket) = server.socket() {
        if send_all(socket, message) && read_reply(socket, &mut frames, &mut taken) {
            return Exchange::Replied(
                Reply {
                    frames,
                    ended: Ok(()),
                },
                server,
            );
        }
    }
    // The socket's end means the process is ending; the grace only matters for a server
    // that is somehow still running without it.
    let status = server.end(std::time::Duration::from_secs(2));
    let how = match status {
        None => "it ended".to_owned(),
        Some(status) if libc::WIFSIGNALED(status) => {
            format!("killed by signal {}", libc::WTERMSIG(status))
        }
        Some(status) if libc::WEXITSTATUS(status) == LIBRARY_EXIT => {
            "the library called exit()".to_owned()
        }
        Some(status) => format!("exit status {}", libc::WEXITSTATUS(status)),
    };
    let ended = if taken {
        // Its status and what it printed are the error.
        let printed = std::fs::read_to_string(stderr).unwrap_or_default();
        format!("{printed}error: the LLVM tools failed ({how})\n")
    } else {
        // It never opened the stderr file: what is there is not this request's.
        format!("error: the LLVM server ended before it took the request ({how})\n")
    };
    Exchange::Died {
        reply: Reply {
            frames,
            ended: Err(ended),
        },
        taken,
    }
}

/// Reads a reply's frames up to its end; false when the socket ends first. `taken` is set
/// when the server acknowledged the request.
fn read_reply(
    socket: &mut std::fs::File,
    frames: &mut Vec<(u8, Vec<u8>)>,
    taken: &mut bool,
) -> bool {
    while let Some((kind, bytes)) = read_frame(socket) {
        match kind {
            FRAME_DONE => return true,
            FRAME_TAKEN => *taken = true,
            _ => frames.push((kind, bytes)),
        }
    }
    false
}

/// Two connected stream sockets, closed on exec: this process's end and the server's. This
/// end is written with MSG_NOSIGNAL so that a dead server is an error here, not a SIGPIPE
/// that ends the application.
fn socket_pair() -> Option<(std::fs::File, std::fs::File)> {
    use std::os::fd::FromRawFd;
    let mut fds = [0 as c_int; 2];
    // SAFETY: socketpair fills `fds` with two new descriptors, each then owned by one File.
    unsafe {
        let kind = libc::SOCK_STREAM | libc::SOCK_CLOEXEC;
        if libc::socketpair(libc::AF_UNIX, kind, 0, fds.as_mut_ptr()) != 0 {
            return None;
        }
        Some((
            std::fs::File::from_raw_fd(fds[0]),
            std::fs::File::from_raw_fd(fds[1]),
        ))
    }
}

/// Writes all of `bytes` to the server's socket; false when the server is gone.
fn send_all(socket: &std::fs::File, mut bytes: &[u8]) -> bool {
    use std::os::fd::AsRawFd;
    while !bytes.is_empty() {
        // SAFETY: sends from a live buffer on a socket this process owns.
        let n = unsafe {
            libc::send(
                socket.as_raw_fd(),
                bytes.as_ptr().cast(),
                bytes.len(),
                libc::MSG_NOSIGNAL,
            )
        };
        if n < 0 && std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted {
            continue;
        }
        let Ok(n) = usize::try_from(n) else {
            return false;
        };
        if n == 0 {
            return false;
        }
        bytes = &bytes[n..];
    }
    true
}

fn start_server() -> Option<Server> {
    use std::os::fd::AsRawFd;
    let tools = api()?.lock().unwrap_or_else(|e| e.into_inner());
    // Held across the fork, so that no thread of this process is inside the passes then.
    let passes = crate::llvm_passes::lock()?;
    // The wide backend's functions are looked up here, so that the server finds them loaded.
    crate::llvm_codegen::preload();
    let (ours, theirs) = socket_pair()?;
    // SAFETY: fflush(NULL) flushes every stdio stream, so that a server that exits through
    // the C library has no copy of unwritten output to write twice.
    unsafe { libc::fflush(std::ptr::null_mut()) };
    // SAFETY: fork; the child only runs the libraries already loaded (whose locks this thread
    // holds, or are idle) and its own descriptors, and leaves by _exit.
    let pid = unsafe { libc::fork() };
    if pid == 0 {
        // The parent's end, closed before the others so that it is closed once.
        drop(ours);
        let keep = theirs.as_raw_fd();
        // SAFETY: in the child, single-threaded: the descriptors are this process's own.
        unsafe {
            let null = libc::open(c"/dev/null".as_ptr(), libc::O_RDWR);
            if null >= 0 {
                libc::dup2(null, 0);
                libc::dup2(null, 1);
            }
            // The application's descriptors stay the application's: a pipe it waits on must
            // not stay open here.
            let open: Vec<c_int> = std::fs::read_dir("/proc/self/fd")
                .map(|dir| {
                    dir.flatten()
                        .filter_map(|e| e.file_name().to_str()?.parse().ok())
                        .collect()
                })
                .unwrap_or_default();
            for fd in open.into_iter().filter(|fd| *fd > 2 && *fd != keep) {
                libc::close(fd);
            }
            libc::atexit(end_server_at_exit);
            libc::signal(libc::SIGPIPE, libc::SIG_IGN);
        }
        let tools = Tools {
            tools: &tools,
            passes: &passes,
        };
        serve(&tools, theirs);
        // SAFETY: _exit ends the server without unwinding into the parent's code.
        unsafe { libc::_exit(0) }
    }
    if pid < 0 {
        return None;
    }
    Some(Server::new(pid, ours))
}

/// The server's loop: each request's stderr file and working directory set, its handler run
/// (a panic ends the server), its reply ended with [`FRAME_DONE`].
fn serve(tools: &Tools, mut socket: std::fs::File) {
    use std::os::unix::ffi::OsStrExt;
    let Ok(reply_end) = socket.try_clone() else {
        return;
    };
    let mut out = Sender(reply_end);
    while let Some((FRAME_REQUEST, message)) = read_frame(&mut socket) {
        let Some([handler, request, stderr, cwd]) =
            unpack(&message).and_then(|i| <[&[u8]; 4]>::try_from(i).ok())
        else {
            return;
        };
        let Ok(handler) = <[u8; std::mem::size_of::<usize>()]>::try_from(handler) else {
            return;
        };
        // SAFETY: the address is that of a `Handler` of the process this server was forked
        // from (in_server), whose code is mapped at the same addresses here.
        let handler: Handler = unsafe { std::mem::transmute(usize::from_le_bytes(handler)) };
        out.send(FRAME_TAKEN, b"");
        let stderr = std::path::Path::new(std::ffi::OsStr::from_bytes(stderr));
        if let Ok(file) = std::fs::File::create(stderr) {
            use std::os::fd::AsRawFd;
            // SAFETY: the server's own descriptors.
            unsafe { libc::dup2(file.as_raw_fd(), 2) };
        }
        let _ = std::env::set_current_dir(std::ffi::OsStr::from_bytes(cwd));
        let ran = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            handler(tools, request, &mut out)
        }));
        if ran.is_err() {
            // SAFETY: ends the server; the parent reports the status.
            unsafe { libc::_exit(101) }
        }
        out.send(FRAME_DONE, b"");
    }
}

#[cfg(test)]
mod tests {
    use super::{pack, unpack, Reply, Sender, Tools};
    use std::ffi::OsString;
    use std::os::unix::ffi::OsStrExt;
    use std::path::{Path, PathBuf};

    fn clang_path() -> OsString {
        let path = std::fs::canonicalize("/usr/bin/clang-15").expect("clang-15 is installed");
        path.into_os_string()
    }

    /// A file of its own for each test (they run in parallel).
    fn scratch(name: &str, text: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("ferrocl-llvm-tools-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("temp dir");
        let path = dir.join(name);
        std::fs::write(&path, text).expect("source");
        path
    }

    /// The tests' requests: `clang ARGS...` (replies D with clang's log, or E, then B with
    /// the file after `-o`), `translate EXTENSIONS MODULE` (replies S or E), `panic`.
    fn test_handler(tools: &Tools, request: &[u8], out: &mut Sender) {
        let items = unpack(request).expect("a packed request");
        match items[0] {
            b"clang" => {
                let argv: Vec<OsString> = items[1..]
                    .iter()
                    .map(|a| std::ffi::OsStr::from_bytes(a).to_owned())
                    .collect();
                match tools.clang(&argv) {
                    Ok(log) => {
                        out.send(b'D', log.as_bytes());
                        let o = items.iter().position(|a| *a == b"-o").expect("-o");
                        let output = Path::new(std::ffi::OsStr::from_bytes(items[o + 1]));
                        out.send(b'B', &std::fs::read(output).expect("clang's output"));
                    }
                    Err(log) => out.send(b'E', log.as_bytes()),
                }
            }
            b"translate" => {
                let extensions = std::str::from_utf8(items[1]).expect("UTF-8");
                match tools.translate(items[2], (1, 3), extensions) {
                    Ok(spirv) => out.send(b'S', &spirv),
                    Err(log) => out.send(b'E', log.as_bytes()),
                }
            }
            b"panic" => panic!("deliberately"),
            other => panic!("unknown request {other:?}"),
        }
    }

    fn request(name: &str, items: &[&[u8]]) -> Reply {
        assert!(
            super::available(),
            "the LLVM tools shared object must be built and load here (build.rs)"
        );
        let stderr = scratch(&format!("{name}.err"), "");
        super::in_server(&stderr, &pack(items), test_handler).expect("available")
    }

    fn text(bytes: Option<&[u8]>) -> String {
        String::from_utf8_lossy(bytes.expect("the frame was sent")).into_owned()
    }

    use crate::tests::clang_o0_args;

    fn clang(name: &str, input: &Path, output: &Path) -> Reply {
        let path = clang_path();
        let mut items: Vec<&[u8]> = vec![b"clang", path.as_bytes()];
        let args = clang_o0_args();
        items.extend(args.iter().map(|a| a.as_bytes()));
        items.extend([
            input.as_os_str().as_bytes(),
            b"-o",
            output.as_os_str().as_bytes(),
        ]);
        request(name, &items)
    }

    /// clang run by its library writes the bitcode the clang-15 process writes, and the
    /// translator the SPIR-V llvm-spirv-15 writes from it, byte for byte.
    #[test]
    fn library_tools_match_the_processes() {
        let kernels = [
            "__kernel void a(__global float* x, int n) { float s = 0; for (int i = 0; i < 8; i++) s += x[i] * i; x[get_global_id(0)] = n > 3 ? s : -s; }",
            "__kernel void b(__global float4* v) { size_t i = get_global_id(0); float4 p = v[i]; v[i] = (float4)(dot(p, p), rsqrt(p.x), p.zw) + p.yxwz; }",
            "int f(int x) { return x * x + 1; } __kernel void c(__global atomic_int* a, __local int* l, __global const char* restrict s) { size_t i = get_local_id(0); l[i] = f(s[i]); work_group_barrier(CLK_LOCAL_MEM_FENCE); if (l[i ^ 1] > 3) atomic_fetch_add(a, l[0]); }",
        ];
        let extensions = "-all,+SPV_KHR_no_integer_wrap_decoration";
        for (i, source) in kernels.iter().enumerate() {
            let input = scratch(&format!("match-{i}.cl"), source);
            let output = input.with_extension("bc");
            let compiled = clang(&format!("match-{i}"), &input, &output);
            assert_eq!(compiled.ended, Ok(()));
            assert_eq!(text(compiled.frame(b'D')), "", "{source}");
            let bitcode = compiled.frame(b'B').expect("bitcode");
            let input_text = input.to_str().expect("UTF-8 path");
            let mut args: Vec<&str> = clang_o0_args();
            args.extend([input_text, "-o", "-"]);
            assert_eq!(
                bitcode,
                crate::tests::tool("clang-15", &args, b""),
                "clang on {source}"
            );
            let translated = request(
                &format!("match-{i}-spirv"),
                &[b"translate", extensions.as_bytes(), bitcode],
            );
            let by_process = crate::tests::tool(
                "llvm-spirv-15",
                &[
                    "--spirv-max-version=1.3",
                    "--preserve-ocl-kernel-arg-type-metadata-through-string",
                    &format!("--spirv-ext={extensions}"),
                    "-",
                    "-o",
                    "-",
                ],
                bitcode,
            );
            assert_eq!(
                translated.frame(b'S'),
                Some(by_process.as_slice()),
                "llvm-spirv on {source}"
            );
        }
    }

    /// A source error is clang's diagnostic with its file, line and column, without colours; an
    /// unknown option is the driver's error.
    #[test]
    fn clang_errors_are_diagnostics() {
        let input = scratch(
            "error.cl",
            "__kernel void k(__global int* p) {\n  p[0] = q;\n}\n",
        );
        let report = clang("clang-error", &input, &input.with_extension("bc"));
        assert_eq!(report.ended, Ok(()));
        let log = text(report.frame(b'E'));
        assert!(
            log.contains("error.cl:2:10: error: use of undeclared identifier 'q'"),
            "{log}"
        );
        assert!(
            !log.contains('\u{1b}'),
            "no colours in a build log: {log:?}"
        );
        let path = clang_path();
        let unknown = request(
            "clang-option",
            &[
                b"clang",
                path.as_bytes(),
                b"-fno-such-option",
                input.as_os_str().as_bytes(),
            ],
        );
        let log = text(unknown.frame(b'E'));
        assert!(
            log.contains("unknown argument: '-fno-such-option'"),
            "{log}"
        );
    }

    /// Unreadable modules and unknown extensions are the translator's errors; a module it
    /// refuses by calling exit() (a cast between two named address spaces) ends the server
    /// only, with the translator's message, and the next request starts a new one.
    #[test]
    fn translator_errors_end_the_build_not_the_process() {
        let module = "target triple = \"spir64-unknown-unknown\"\n";
        let translate = |name: &str, extensions: &str, ir: &[u8]| {
            request(name, &[b"translate", extensions.as_bytes(), ir])
        };
        let garbage = translate("garbage", "-all", b"BC\xc0\xde garbage");
        assert!(!text(garbage.frame(b'E')).is_empty());
        let not_ir = translate("not-ir", "-all", b"this is not IR");
        assert!(text(not_ir.frame(b'E')).contains("llvm-spirv"));
        let unknown = translate("unknown", "-all,+SPV_NO_SUCH", module.as_bytes());
        assert!(text(unknown.frame(b'E')).contains("Unknown extension 'SPV_NO_SUCH'"));
        let empty = translate("empty", "-all", module.as_bytes());
        let spirv = empty.frame(b'S').expect("an empty module translates");
        assert!(spirv.starts_with(&[0x03, 0x02, 0x23, 0x07]));
        let refused = format!(
            "{module}define spir_kernel void @k(i32 addrspace(1)* addrspace(1)* %out) {{\n\
             store i32 addrspace(1)* addrspacecast (i32 addrspace(3)* null to i32 addrspace(1)*), \
             i32 addrspace(1)* addrspace(1)* %out\nret void\n}}\n"
        );
        let exited = translate("exit", "-all", refused.as_bytes());
        assert!(exited.frames.is_empty());
        let ended = exited.ended.unwrap_err();
        assert!(
            ended.contains("Casts from private/local/global address space"),
            "{ended}"
        );
        assert!(ended.contains("the library called exit()"), "{ended}");
        let again = translate("after-exit", "-all", module.as_bytes());
        assert_eq!(again.ended, Ok(()));
        assert!(again.frame(b'S').is_some());
    }

    /// A panic in the server is a failed request, and the next request is served.
    #[test]
    fn a_panicking_server_is_reported() {
        let report = request("panic", &[b"panic"]);
        let ended = report.ended.unwrap_err();
        // (The panic's message goes to the server's stderr, except under the test harness,
        // which captures it.)
        assert!(ended.contains("exit status 101"), "{ended}");
        let module = "target triple = \"spir64-unknown-unknown\"\n";
        let again = request("after-panic", &[b"translate", b"-all", module.as_bytes()]);
        assert!(again.frame(b'S').is_some());
    }

    /// A server killed while idle is seen dead before it is given a request; one given a
    /// request anyway never took it (so in_server sends it to another), with how it ended.
    #[test]
    fn a_killed_server_is_noticed() {
        assert!(super::available(), "the LLVM libraries must load here");
        let mut idle = super::start_server().expect("a server starts");
        assert!(idle.can_take_request());
        // SAFETY: kill sends a signal to this process's child, not waited for yet.
        assert_eq!(unsafe { libc::kill(idle.pid, libc::SIGKILL) }, 0);
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while idle.can_take_request() {
            assert!(
                std::time::Instant::now() < deadline,
                "the kill is never seen"
            );
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        let status = idle
            .end(std::time::Duration::ZERO)
            .expect("waited for here");
        assert!(libc::WIFSIGNALED(status) && libc::WTERMSIG(status) == libc::SIGKILL);

        let unchecked = super::start_server().expect("a server starts");
        // SAFETY: as above.
        assert_eq!(unsafe { libc::kill(unchecked.pid, libc::SIGKILL) }, 0);
        let stderr = scratch("killed.err", "not this request's\n");
        let module = "target triple = \"spir64-unknown-unknown\"\n";
        let request = pack(&[b"translate", b"-all", module.as_bytes()]);
        let message = super::request_frame(&stderr, &request, test_handler);
        let super::Exchange::Died { reply, taken } = super::exchange(unchecked, &message, &stderr)
        else {
            panic!("a killed server replied");
        };
        assert!(!taken);
        assert_eq!(
            reply.ended,
            Err(
                "error: the LLVM server ended before it took the request (killed by signal 9)\n"
                    .to_owned()
            )
        );
    }

    /// A server whose descriptor the application closed and reused (dup2 does both at once,
    /// so that no other test's file takes the number between) is not used, and its end leaves
    /// the descriptor, now the application's file, open.
    #[test]
    fn a_reused_descriptor_is_left_alone() {
        use std::io::Read;
        use std::os::fd::{AsRawFd, FromRawFd};
        assert!(super::available(), "the LLVM libraries must load here");
        let mut server = super::start_server().expect("a server starts");
        let fd = server.socket().expect("its socket").as_raw_fd();
        let path = scratch("reused", "the application's file\n");
        let file = std::fs::File::open(&path).expect("open");
        // SAFETY: dup2 replaces the server's socket by the file, as the application would.
        assert_eq!(unsafe { libc::dup2(file.as_raw_fd(), fd) }, fd);
        drop(file);
        assert!(!server.can_take_request());
        server.end(std::time::Duration::ZERO);
        // SAFETY: the descriptor is the file's now, owned by this test from here on.
        let mut reused = unsafe { std::fs::File::from_raw_fd(fd) };
        let mut text = String::new();
        reused
            .read_to_string(&mut text)
            .expect("the file is still open");
        assert_eq!(text, "the application's file\n");
    }

    #[test]
    fn packed_items_come_back() {
        let items: [&[u8]; 4] = [b"", b"a", b"\0\xff", &[7; 300]];
        assert_eq!(unpack(&pack(&items)), Some(items.to_vec()));
        assert_eq!(unpack(&pack(&items)[..20]), None);
        assert_eq!(unpack(b""), Some(Vec::new()));
    }
}
