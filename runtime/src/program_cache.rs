//! The persistent program cache, on disk under `settings.cache_dir`, with two kinds of entries:
//! - what an OpenCL C build made (the SPIR-V and the log the build kept), content-addressed by
//!   everything that changes it — the source, the options as they reach clang, the device's
//!   extensions and features, this driver's build, the tools' builds, embedded headers, and the
//!   contents of every header the source included (clang's dependency output, checked again on
//!   every lookup);
//! - what the JIT made of a SPIR-V module (codegen's serialized program: machine code before
//!   linking, relocations, data, kernel metadata) with what the runtime checks before using it,
//!   keyed by the SPIR-V, the specialization constants, the code generator's options, the
//!   target as Cranelift sees this CPU, the Cranelift release and this driver's build.
//!
//! Owns the keys, the entry formats, lookups, stores and the size bound (shared by both kinds).
//! Nothing here can fail a build: an unreadable, corrupt or stale entry is a miss, a store that
//! cannot be made (read-only directory, full disk) is skipped, and the caller then simply runs
//! the recipe or the code generator.

use std::hash::Hasher;
use std::io::{self, Read, Write};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;
use std::time::SystemTime;

use crate::settings::{log, LogLevel, Settings};

/// First bytes of every entry; a new format gets a new number (and a new directory, below).
const MAGIC: &[u8] = b"ferrocl program cache 1\n";
/// Entries live in `<cache dir>/v1/<2 hex digits>/<30 hex digits>`, so a later format can sit
/// beside this one and no directory grows to hundreds of thousands of names.
const FORMAT_DIR: &str = "v1";
/// Machine-code entries: `<cache dir>/code-v1/<2 hex digits>/<30 hex digits>`.
const CODE_FORMAT_DIR: &str = "code-v1";
/// First bytes of every machine-code entry.
const CODE_MAGIC: &[u8] = b"ferrocl machine code cache 1\n";
/// Temporary files are named so: a store writes one and renames it over the entry.
const TEMP_PREFIX: &str = ".tmp-";

/// A 128-bit digest: two SipHash-1-3 (std's `DefaultHasher`, fixed keys, so the same in every
/// process) over length-prefixed parts, the second one seeded differently. It names entries and
/// checks their integrity; keys are also compared byte for byte, so no stale hit depends on it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Digest([u64; 2]);

impl Digest {
    fn of(parts: &[&[u8]]) -> Digest {
        let mut a = std::hash::DefaultHasher::new();
        let mut b = std::hash::DefaultHasher::new();
        b.write(b"ferrocl: the second half");
        for part in parts {
            for h in [&mut a, &mut b] {
                h.write_u64(part.len() as u64);
                h.write(part);
            }
        }
        Digest([a.finish(), b.finish()])
    }

    fn hex(&self) -> String {
        format!("{:016x}{:016x}", self.0[0], self.0[1])
    }

    fn bytes(&self) -> [u8; 16] {
        let mut out = [0; 16];
        out[..8].copy_from_slice(&self.0[0].to_le_bytes());
        out[8..].copy_from_slice(&self.0[1].to_le_bytes());
        out
    }
}

/// Appends `bytes` with its length in front.
fn put(out: &mut Vec<u8>, bytes: &[u8]) {
    out.extend_from_slice(&(bytes.len() as u64).to_le_bytes());
    out.extend_from_slice(bytes);
}

/// A file's identity without reading it: its path, size and modification time. For the driver
/// and tool binaries, whose contents are large and whose change always comes with a new file.
fn file_identity(path: &Path) -> Vec<u8> {
    let mut out = Vec::new();
    put(&mut out, path.as_os_str().as_encoded_bytes());
    if let Ok(meta) = std::fs::metadata(path) {
        let mtime = meta
            .modified()
            .ok()
            .and_then(|t| t.duration_since(SystemTime::UNIX_EPOCH).ok())
            .map_or(0, |d| d.as_nanos());
        out.extend_from_slice(&meta.len().to_le_bytes());
        out.extend_from_slice(&mtime.to_le_bytes());
    }
    out
}

/// This driver's build: the version and the identity of the file its code was loaded from
/// (`libferrocl.so`, or a test binary). The recipe's preludes and repairs of llvm-spirv's
/// output are code, so a rebuilt driver must not take entries an older one made.
fn driver_identity() -> &'static [u8] {
    static ID: OnceLock<Vec<u8>> = OnceLock::new();
    ID.get_or_init(|| {
        let mut out = env!("CARGO_PKG_VERSION").as_bytes().to_vec();
        // SAFETY: dladdr only reads the loader's tables; `info` is written by it on success,
        // and dli_fname then points to a NUL-terminated name owned by the loader.
        let object = unsafe {
            let mut info: libc::Dl_info = std::mem::zeroed();
            let here = driver_identity as *const libc::c_void;
            (libc::dladdr(here, &mut info) != 0 && !info.dli_fname.is_null()).then(|| {
                let name = std::ffi::CStr::from_ptr(info.dli_fname);
                PathBuf::from(std::ffi::OsStr::from_encoded_bytes_unchecked(
                    name.to_bytes(),
                ))
            })
        };
        let object = object
            .and_then(|p| std::fs::canonicalize(p).ok())
            .or_else(|| std::env::current_exe().ok());
        if let Some(path) = object {
            out.extend(file_identity(&path));
        }
        out
    })
}

/// The recipe's tools as found on PATH (resolved through symlinks), and the directory trees they
/// were installed with: a header under one of those (clang's `opencl-c-base.h`) belongs to the
/// toolchain, whose identity the key already holds, so it is not read again on each lookup.
struct Toolchain {
    identity: Vec<u8>,
    trees: Vec<PathBuf>,
}

fn toolchain() -> &'static Toolchain {
    static TOOLS: OnceLock<Toolchain> = OnceLock::new();
    TOOLS.get_or_init(|| {
        let mut identity = Vec::new();
        let mut trees = Vec::new();
        let path = std::env::var_os("PATH").unwrap_or_default();
        for tool in ferrocl_opencl_c::OPENCL_C_TOOLS {
            let found = std::env::split_paths(&path)
                .map(|dir| dir.join(tool))
                .find(|p| p.is_file())
                .and_then(|p| std::fs::canonicalize(p).ok());
            match found {
                Some(p) => {
                    identity.extend(file_identity(&p));
                    // /usr/lib/llvm-15/bin/clang → /usr/lib/llvm-15.
                    if let Some(tree) = p.parent().and_then(Path::parent) {
                        if tree.components().count() > 2 && !trees.iter().any(|t| t == tree) {
                            trees.push(tree.to_owned());
                        }
                    }
                }
                None => put(&mut identity, b"missing"),
            }
        }
        Toolchain { identity, trees }
    })
}

/// What one OpenCL C build depends on besides included files (see [`Key::new`]).
pub struct Request<'a> {
    pub source: &'a str,
    /// The build options as the application gave them.
    pub options: &'a str,
    /// The device's OpenCL C extensions and features, the macros it undefines, the preludes
    /// of its features and its SPIR-V extensions.
    pub extensions: &'a [&'a str],
    pub undefine: &'a [&'a str],
    pub preludes: &'a [ferrocl_opencl_c::Prelude],
    pub spirv_extensions: &'a [&'a str],
    /// clCompileProgram's embedded headers (name, contents).
    pub headers: &'a [(String, Vec<u8>)],
}

/// A cache key: everything that changes a build's result except the included files (those are
/// recorded in the entry and checked on lookup), and its digest, which names the entry.
pub struct Key {
    material: Vec<u8>,
    digest: Digest,
}

impl Key {
    pub fn new(r: &Request) -> Key {
        let mut m = Vec::new();
        put(&mut m, driver_identity());
        put(&mut m, &toolchain().identity);
        let request = ferrocl_opencl_c::BuildRequest::parse(r.options);
        put(&mut m, request.normalised().as_bytes());
        put(&mut m, r.extensions.join(" ").as_bytes());
        put(&mut m, r.undefine.join(" ").as_bytes());
        put(&mut m, format!("{:?}", r.preludes).as_bytes());
        put(&mut m, r.spirv_extensions.join(" ").as_bytes());
        // A relative -I names a directory of the working directory.
        let relative_include = request
            .include_dirs()
            .any(|dir| !dir.trim_start().starts_with('/'));
        if relative_include {
            if let Ok(cwd) = std::env::current_dir() {
                put(&mut m, cwd.as_os_str().as_encoded_bytes());
            }
        }
        for (name, text) in r.headers {
            put(&mut m, name.as_bytes());
            put(&mut m, text);
        }
        put(&mut m, r.source.as_bytes());
        let digest = Digest::of(&[&m]);
        Key {
            material: m,
            digest,
        }
    }

    fn path(&self, dir: &Path) -> PathBuf {
        let hex = self.digest.hex();
        dir.join(FORMAT_DIR).join(&hex[..2]).join(&hex[2..])
    }
}

/// What a build produced, as the cache keeps it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Entry {
    pub spirv: Vec<u8>,
    /// The build log of the successful build: clang's warnings, usually nothing.
    pub log: String,
}

/// Why a lookup found nothing usable.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Miss {
    Absent,
    /// The entry could not be read back whole (truncated, corrupted): it is removed.
    Corrupt,
    /// The entry's name held no regular file of at most the cache's size bound (a FIFO, a
    /// device, a symbolic link, something huge): it is removed unread.
    NotAnEntry,
    /// An included file changed or disappeared since the entry was made.
    Changed(PathBuf),
}

impl std::fmt::Display for Miss {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        match self {
            Miss::Absent => write!(f, "not cached"),
            Miss::Corrupt => write!(f, "the cache entry was damaged; removed"),
            Miss::NotAnEntry => write!(
                f,
                "the cache entry was not a regular file within the cache's size bound; removed"
            ),
            Miss::Changed(p) => write!(f, "{} changed since it was cached", p.display()),
        }
    }
}

/// A dependency recorded in an entry: the file and the digest of its contents.
struct Dependency {
    path: PathBuf,
    digest: Digest,
}

fn contents_digest(path: &Path) -> io::Result<Digest> {
    Ok(Digest::of(&[&std::fs::read(path)?]))
}

/// The bytes of the entry file at `path` and the open file, read without blocking and without
/// following a symbolic link: anyone who can write the cache directory could put a FIFO there
/// (a read that never returns) or a link to `/dev/zero` (one that never ends), so only a
/// regular file of at most `max_bytes` — no real entry outgrows the bound, the store after it
/// evicts — is read; anything else there is removed.
fn read_entry(path: &Path, max_bytes: u64) -> Result<(std::fs::File, Vec<u8>), Miss> {
    let not_an_entry = || {
        let _ = std::fs::remove_file(path);
        Miss::NotAnEntry
    };
    let opened = std::fs::File::options()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOFOLLOW | libc::O_CLOEXEC)
        .open(path);
    let mut file = match opened {
        Ok(file) => file,
        Err(e) if e.raw_os_error() == Some(libc::ELOOP) => return Err(not_an_entry()),
        Err(_) => return Err(Miss::Absent),
    };
    // The descriptor's own status: the name may have been swapped since the open.
    let meta = file.metadata().map_err(|_| Miss::Absent)?;
    if !meta.file_type().is_file() || meta.len() > max_bytes {
        return Err(not_an_entry());
    }
    let mut bytes = Vec::new();
    if bytes.try_reserve_exact(meta.len() as usize).is_err() {
        return Err(Miss::Absent);
    }
    // A file that grows while it is read stops at the bound plus one byte, which fails the
    // size check as any file over the bound does.
    match (&mut file)
        .take(max_bytes.saturating_add(1))
        .read_to_end(&mut bytes)
    {
        Ok(_) if bytes.len() as u64 <= max_bytes => Ok((file, bytes)),
        Ok(_) => Err(not_an_entry()),
        Err(_) => Err(Miss::Absent),
    }
}

/// Marks the entry read through `file` recently used (its modification time) for the size
/// bound. A read-only cache still hits.
fn mark_used(file: &std::fs::File) {
    let _ = file.set_modified(SystemTime::now());
}

/// Reads the cached build for `key`, if there is one whose included files are unchanged and
/// whose entry is within `max_bytes`. A hit marks the entry recently used.
pub fn lookup(dir: &Path, key: &Key, max_bytes: u64) -> Result<Entry, Miss> {
    let path = key.path(dir);
    let (file, bytes) = read_entry(&path, max_bytes)?;
    let Some((material, deps, entry)) = decode(&bytes) else {
        let _ = std::fs::remove_file(&path);
        return Err(Miss::Corrupt);
    };
    if material != key.material {
        // Another key with the same digest (not seen in practice): a miss; the store after
        // the build replaces it.
        return Err(Miss::Absent);
    }
    for dep in deps {
        if contents_digest(&dep.path).ok() != Some(dep.digest) {
            return Err(Miss::Changed(dep.path));
        }
    }
    mark_used(&file);
    Ok(entry)
}

/// A little-endian reader over an entry's bytes; None at the end.
struct Reader<'a>(&'a [u8]);

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        if self.0.len() < n {
            return None;
        }
        let (head, rest) = self.0.split_at(n);
        self.0 = rest;
        Some(head)
    }
    fn u64(&mut self) -> Option<u64> {
        Some(u64::from_le_bytes(self.take(8)?.try_into().ok()?))
    }
    fn field(&mut self) -> Option<&'a [u8]> {
        let n = usize::try_from(self.u64()?).ok()?;
        self.take(n)
    }
    fn digest(&mut self) -> Option<Digest> {
        Some(Digest([self.u64()?, self.u64()?]))
    }
}

/// Entry layout: MAGIC, key material, dependency count, each dependency (path, digest), the
/// SPIR-V, the log, then the digest of everything before it, which detects truncation and
/// damage before anything is trusted.
fn encode(key: &Key, deps: &[Dependency], entry: &Entry) -> Vec<u8> {
    let mut out = MAGIC.to_vec();
    put(&mut out, &key.material);
    out.extend_from_slice(&(deps.len() as u64).to_le_bytes());
    for d in deps {
        put(&mut out, d.path.as_os_str().as_encoded_bytes());
        out.extend_from_slice(&d.digest.bytes());
    }
    put(&mut out, &entry.spirv);
    put(&mut out, entry.log.as_bytes());
    let check = Digest::of(&[&out]);
    out.extend_from_slice(&check.bytes());
    out
}

fn decode(bytes: &[u8]) -> Option<(&[u8], Vec<Dependency>, Entry)> {
    let body_len = bytes.len().checked_sub(16)?;
    let (body, check) = bytes.split_at(body_len);
    if Digest::of(&[body]).bytes() != check || !body.starts_with(MAGIC) {
        return None;
    }
    let mut r = Reader(&body[MAGIC.len()..]);
    let material = r.field()?;
    let count = r.u64()?;
    let mut deps = Vec::new();
    for _ in 0..count {
        let path = PathBuf::from(std::ffi::OsStr::from_bytes(r.field()?));
        deps.push(Dependency {
            path,
            digest: r.digest()?,
        });
    }
    let spirv = r.field()?.to_vec();
    let log = String::from_utf8(r.field()?.to_vec()).ok()?;
    r.0.is_empty()
        .then_some((material, deps, Entry { spirv, log }))
}

/// Why a store was not made (the build itself succeeded either way).
#[derive(Debug)]
pub enum NotStored {
    /// An included file was modified while the build ran: its contents now may not be what
    /// clang read.
    ModifiedDuringBuild(PathBuf),
    Io(io::Error),
}

impl std::fmt::Display for NotStored {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        match self {
            NotStored::ModifiedDuringBuild(p) => {
                write!(f, "{} was modified during the build", p.display())
            }
            NotStored::Io(e) => write!(f, "{e}"),
        }
    }
}

impl From<io::Error> for NotStored {
    fn from(e: io::Error) -> NotStored {
        NotStored::Io(e)
    }
}

/// Stores `entry` for `key`. `dependencies` are the files clang read (its dependency output);
/// those under the toolchain's trees or under `ephemeral` (the embedded headers' temporary
/// directory, already in the key) are left out. `started` is when the build began: a file
/// modified since is not trusted. The entry is written to a temporary file and renamed into
/// place, so concurrent builders and readers only ever see whole entries. Afterwards the cache
/// is brought back under `max_bytes`.
pub fn store(
    dir: &Path,
    key: &Key,
    dependencies: &[PathBuf],
    ephemeral: Option<&Path>,
    started: SystemTime,
    entry: &Entry,
    max_bytes: u64,
) -> Result<(), NotStored> {
    let trees = &toolchain().trees;
    let mut deps = Vec::new();
    for path in dependencies {
        if trees.iter().any(|t| path.starts_with(t))
            || ephemeral.is_some_and(|e| path.starts_with(e))
        {
            continue;
        }
        let modified = std::fs::metadata(path)?.modified()?;
        if modified > started {
            return Err(NotStored::ModifiedDuringBuild(path.clone()));
        }
        // The absolute path, so that the check on lookup does not depend on the directory
        // the process runs in (the key holds that when a relative -I made it matter).
        let path = std::path::absolute(path)?;
        let digest = contents_digest(&path)?;
        deps.push(Dependency { path, digest });
    }
    write_entry(dir, &key.path(dir), &encode(key, &deps, entry), max_bytes)?;
    Ok(())
}

/// Writes an entry's `bytes` to a temporary file renamed to `path`, so concurrent builders and
/// readers only ever see whole entries; then brings the cache back under `max_bytes`.
fn write_entry(dir: &Path, path: &Path, bytes: &[u8], max_bytes: u64) -> io::Result<()> {
    let parent = path.parent().unwrap_or(dir);
    std::fs::create_dir_all(parent)?;
    static N: AtomicU64 = AtomicU64::new(0);
    let temp = parent.join(format!(
        "{TEMP_PREFIX}{}-{}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    ));
    let written = std::fs::File::create(&temp)
        .and_then(|mut f| f.write_all(bytes))
        .and_then(|()| std::fs::rename(&temp, path));
    if let Err(e) = written {
        let _ = std::fs::remove_file(&temp);
        return Err(e);
    }
    keep_bounded(dir, bytes.len() as u64, max_bytes);
    Ok(())
}

/// Stores between two scans of a cache directory by one process, which catch up with what
/// other processes stored meanwhile.
const STORES_BETWEEN_SCANS: u32 = 256;

/// Brings the cache back under `max_bytes` after a store of `stored` bytes, scanning the
/// directory only when this process's running total passes the bound (or every
/// [`STORES_BETWEEN_SCANS`] stores, and at its first store): scanning at every store made a
/// suite of thousands of builds (CTS `test_c11_atomics`) spend most of its time listing and
/// stating the cache's entries, quadratically.
fn keep_bounded(dir: &Path, stored: u64, max_bytes: u64) {
    use std::collections::HashMap;
    use std::sync::Mutex;
    /// Per directory: the bytes it held at the last scan plus this process's stores since,
    /// and how many stores that was.
    static USAGE: Mutex<Option<HashMap<PathBuf, (u64, u32)>>> = Mutex::new(None);
    let mut usage = USAGE.lock().unwrap_or_else(|e| e.into_inner());
    let usage = usage.get_or_insert_with(HashMap::new);
    let scan = match usage.get_mut(dir) {
        Some((total, stores)) => {
            *total += stored;
            *stores += 1;
            *total > max_bytes || *stores >= STORES_BETWEEN_SCANS
        }
        None => true,
    };
    if scan {
        usage.insert(dir.to_path_buf(), (evict(dir, max_bytes), 0));
    }
}

/// Removes least recently used entries of both kinds until the cache is at most 90 % of
/// `max_bytes` (the margin keeps every store after the bound is reached from scanning and
/// removing again), and temporary files an interrupted store left (older than an hour).
/// Returns the bytes the cache then holds.
pub fn evict(dir: &Path, max_bytes: u64) -> u64 {
    let mut files = Vec::new();
    let mut total = 0u64;
    let hour_ago = SystemTime::now() - std::time::Duration::from_secs(3600);
    let shards = [FORMAT_DIR, CODE_FORMAT_DIR]
        .into_iter()
        .filter_map(|format| std::fs::read_dir(dir.join(format)).ok())
        .flatten();
    for shard in shards.flatten() {
        let Ok(names) = std::fs::read_dir(shard.path()) else {
            continue;
        };
        for file in names.flatten() {
            let Ok(meta) = file.metadata() else { continue };
            let modified = meta.modified().unwrap_or(SystemTime::UNIX_EPOCH);
            if file
                .file_name()
                .as_encoded_bytes()
                .starts_with(TEMP_PREFIX.as_bytes())
            {
                if modified < hour_ago {
                    let _ = std::fs::remove_file(file.path());
                }
                continue;
            }
            total += meta.len();
            files.push((modified, meta.len(), file.path()));
        }
    }
    if total <= max_bytes {
        return total;
    }
    files.sort();
    let target = max_bytes / 10 * 9;
    for (_, len, path) in files {
        if total <= target {
            break;
        }
        if std::fs::remove_file(&path).is_ok() {
            total -= len;
        }
    }
    total
}

/// The bytes the cache holds (entries of both kinds only).
pub fn size(dir: &Path) -> u64 {
    [FORMAT_DIR, CODE_FORMAT_DIR]
        .into_iter()
        .filter_map(|format| std::fs::read_dir(dir.join(format)).ok())
        .flatten()
        .flatten()
        .filter_map(|s| std::fs::read_dir(s.path()).ok())
        .flatten()
        .flatten()
        .filter(|f| {
            !f.file_name()
                .as_encoded_bytes()
                .starts_with(TEMP_PREFIX.as_bytes())
        })
        .filter_map(|f| f.metadata().ok())
        .map(|m| m.len())
        .sum()
}

/// What a build of one SPIR-V module for the JIT depends on (see [`CodeKey::new`]).
pub struct CodeRequest<'a> {
    pub spirv: &'a [u8],
    /// `clSetProgramSpecializationConstant` values, by SpecId.
    pub spec_values: &'a std::collections::HashMap<u32, Vec<u8>>,
    /// `BuildOptions::code_fingerprint` of the options codegen gets.
    pub options: &'a str,
    /// `ferrocl_codegen::code_identity`: Cranelift's release and the target and its flags as
    /// Cranelift sees this CPU.
    pub target: &'a str,
}

/// The key of a machine-code entry. The SPIR-V enters it as its 128-bit digest (the module can
/// be large and would double the entry); everything else byte for byte.
#[derive(Clone)]
pub struct CodeKey {
    material: Vec<u8>,
    digest: Digest,
}

impl CodeKey {
    pub fn new(r: &CodeRequest) -> CodeKey {
        let mut m = Vec::new();
        put(&mut m, CODE_MAGIC);
        put(&mut m, driver_identity());
        put(&mut m, r.target.as_bytes());
        put(&mut m, r.options.as_bytes());
        let mut spec: Vec<(&u32, &Vec<u8>)> = r.spec_values.iter().collect();
        spec.sort();
        m.extend_from_slice(&(spec.len() as u64).to_le_bytes());
        for (id, value) in spec {
            m.extend_from_slice(&id.to_le_bytes());
            put(&mut m, value);
        }
        m.extend_from_slice(&Digest::of(&[r.spirv]).bytes());
        let digest = Digest::of(&[&m]);
        CodeKey {
            material: m,
            digest,
        }
    }

    /// The key of an entry made from the same build as this key's, with `parts` (what else
    /// its code depends on) added: the tiered runtime's wide build of one kernel.
    pub fn derived(&self, parts: &[&[u8]]) -> CodeKey {
        let mut m = self.material.clone();
        for part in parts {
            put(&mut m, part);
        }
        let digest = Digest::of(&[&m]);
        CodeKey {
            material: m,
            digest,
        }
    }

    pub fn path(&self, dir: &Path) -> PathBuf {
        let hex = self.digest.hex();
        dir.join(CODE_FORMAT_DIR).join(&hex[..2]).join(&hex[2..])
    }
}

/// A machine-code entry: codegen's serialized program, the build log's warnings, and what the
/// device must allow for the program to build at all (checked again on every use, since the
/// settings behind them — `FERROCL_FP64`, `FERROCL_FP16`, `FERROCL_SVM`, … — are not in the key).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CodeEntry {
    pub program: Vec<u8>,
    pub warnings: String,
    /// The module's `OpCapability` values.
    pub capabilities: Vec<u32>,
    /// The module has half-precision values (refused with `FERROCL_FP16=off`).
    pub uses_half: bool,
    /// The module uses the all-devices memory scope (refused with `FERROCL_SVM=off`).
    pub all_devices_scope: bool,
}

/// Entry layout: CODE_MAGIC, key material, the requirements, the warnings, the program, then
/// the digest of everything before it.
fn encode_code(key: &CodeKey, entry: &CodeEntry) -> Vec<u8> {
    let mut out = CODE_MAGIC.to_vec();
    put(&mut out, &key.material);
    out.extend_from_slice(&(entry.capabilities.len() as u64).to_le_bytes());
    for c in &entry.capabilities {
        out.extend_from_slice(&u64::from(*c).to_le_bytes());
    }
    out.push(u8::from(entry.uses_half));
    out.push(u8::from(entry.all_devices_scope));
    put(&mut out, entry.warnings.as_bytes());
    put(&mut out, &entry.program);
    let check = Digest::of(&[&out]);
    out.extend_from_slice(&check.bytes());
    out
}

fn decode_code(bytes: &[u8]) -> Option<(&[u8], CodeEntry)> {
    let body_len = bytes.len().checked_sub(16)?;
    let (body, check) = bytes.split_at(body_len);
    if Digest::of(&[body]).bytes() != check || !body.starts_with(CODE_MAGIC) {
        return None;
    }
    let mut r = Reader(&body[CODE_MAGIC.len()..]);
    let material = r.field()?;
    let count = r.u64()?;
    let mut capabilities = Vec::new();
    for _ in 0..count {
        capabilities.push(u32::try_from(r.u64()?).ok()?);
    }
    let flag = |b: &[u8]| match b {
        [0] => Some(false),
        [1] => Some(true),
        _ => None,
    };
    let uses_half = flag(r.take(1)?)?;
    let all_devices_scope = flag(r.take(1)?)?;
    let warnings = String::from_utf8(r.field()?.to_vec()).ok()?;
    let program = r.field()?.to_vec();
    r.0.is_empty().then_some((
        material,
        CodeEntry {
            program,
            warnings,
            capabilities,
            uses_half,
            all_devices_scope,
        },
    ))
}

/// Reads the machine-code entry for `key` if it is within `max_bytes`; a hit marks it
/// recently used.
pub fn lookup_code(dir: &Path, key: &CodeKey, max_bytes: u64) -> Result<CodeEntry, Miss> {
    let path = key.path(dir);
    let (file, bytes) = read_entry(&path, max_bytes)?;
    let Some((material, entry)) = decode_code(&bytes) else {
        let _ = std::fs::remove_file(&path);
        return Err(Miss::Corrupt);
    };
    if material != key.material {
        return Err(Miss::Absent);
    }
    mark_used(&file);
    Ok(entry)
}

/// Removes the machine-code entry for `key`: one that read back whole but could not be used
/// (codegen refused the program in it).
pub fn remove_code(dir: &Path, key: &CodeKey) {
    let _ = std::fs::remove_file(key.path(dir));
}

/// Stores `entry` for `key` (atomically, as [`store`] does), then applies the size bound.
pub fn store_code(dir: &Path, key: &CodeKey, entry: &CodeEntry, max_bytes: u64) -> io::Result<()> {
    write_entry(dir, &key.path(dir), &encode_code(key, entry), max_bytes)
}

/// What [`build_opencl_c`] made.
pub struct SourceBuild {
    pub spirv: Vec<u8>,
    /// The start of the build log: what the build kept, and at `FERROCL_LOG=info` a line
    /// saying whether the module came from the cache.
    pub log: String,
    /// The cache's part, for the timing line: "hit", "miss", "off", …
    pub cache: String,
    pub elapsed: std::time::Duration,
}

/// OpenCL C → SPIR-V with the cache in front of the recipe: a hit returns the stored build,
/// otherwise the recipe runs (with `clang_options`, which may add the embedded headers'
/// directory `ephemeral` to the request's options) and what it made is stored. Only the
/// recipe's own failure is an error.
pub fn build_opencl_c(
    settings: &Settings,
    request: &Request,
    clang_options: &str,
    ephemeral: Option<&Path>,
) -> Result<SourceBuild, String> {
    let wall_start = SystemTime::now();
    let start = std::time::Instant::now();
    let info = settings.log >= LogLevel::Info;
    let compile = || {
        ferrocl_opencl_c::OpenClC {
            source: request.source,
            options: clang_options,
            extensions: request.extensions,
            undefine: request.undefine,
            preludes: request.preludes,
            spirv_extensions: request.spirv_extensions,
            debug_info: false,
            llvm_server: settings.llvm_server,
        }
        .compile_with_dependencies()
    };
    let Some(dir) = &settings.cache_dir else {
        let compiled = compile()?;
        return Ok(SourceBuild {
            spirv: compiled.spirv,
            log: compiled.log,
            cache: "off".into(),
            elapsed: start.elapsed(),
        });
    };
    let key = Key::new(request);
    let miss = match lookup(dir, &key, settings.cache_max_bytes) {
        Ok(entry) => {
            let mut log = entry.log;
            if info {
                log.insert_str(
                    0,
                    &format!(
                        "info: OpenCL C from the program cache ({})\n",
                        key.path(dir).display()
                    ),
                );
            }
            return Ok(SourceBuild {
                spirv: entry.spirv,
                log,
                cache: "hit".into(),
                elapsed: start.elapsed(),
            });
        }
        Err(miss) => miss,
    };
    let compiled = compile()?;
    let entry = Entry {
        spirv: compiled.spirv,
        log: compiled.log,
    };
    let stored = store(
        dir,
        &key,
        &compiled.dependencies,
        ephemeral,
        wall_start,
        &entry,
        settings.cache_max_bytes,
    );
    let outcome = match &stored {
        Ok(()) => format!("stored in the program cache ({})", key.path(dir).display()),
        Err(e) => {
            log(
                settings,
                LogLevel::Info,
                format_args!("program cache: not stored in {}: {e}", dir.display()),
            );
            format!("not stored in the program cache: {e}")
        }
    };
    Ok(SourceBuild {
        spirv: entry.spirv,
        log: if info {
            format!("info: OpenCL C compiled ({miss}); {outcome}\n{}", entry.log)
        } else {
            entry.log.clone()
        },
        cache: format!("miss, {miss}"),
        elapsed: start.elapsed(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A size bound no entry of these tests reaches.
    const BOUND: u64 = 1 << 30;

    struct TempDir(PathBuf);
    impl TempDir {
        fn new(tag: &str) -> TempDir {
            static N: AtomicU64 = AtomicU64::new(0);
            let dir = std::env::temp_dir().join(format!(
                "ferrocl-cache-unit-{tag}-{}-{}",
                std::process::id(),
                N.fetch_add(1, Ordering::Relaxed)
            ));
            std::fs::create_dir_all(&dir).unwrap();
            TempDir(dir)
        }
    }
    impl Drop for TempDir {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    fn request<'a>(source: &'a str, options: &'a str, extensions: &'a [&'a str]) -> Request<'a> {
        Request {
            source,
            options,
            extensions,
            undefine: &[],
            preludes: &[],
            spirv_extensions: &[],
            headers: &[],
        }
    }

    fn entry(spirv: &[u8]) -> Entry {
        Entry {
            spirv: spirv.to_vec(),
            log: "warning: kept\n".into(),
        }
    }

    /// A build start later than every file the tests write.
    fn started() -> SystemTime {
        SystemTime::now() + std::time::Duration::from_secs(60)
    }

    #[test]
    fn a_stored_entry_is_found_with_the_same_key_only() {
        let dir = TempDir::new("key");
        let key = Key::new(&request("kernel void k() {}", "-cl-std=CL3.0", &["a"]));
        assert_eq!(lookup(&dir.0, &key, BOUND), Err(Miss::Absent));
        store(
            &dir.0,
            &key,
            &[],
            None,
            started(),
            &entry(b"spirv"),
            1 << 20,
        )
        .unwrap();
        assert_eq!(lookup(&dir.0, &key, BOUND), Ok(entry(b"spirv")));
        // Options clang never sees do not change the key; those it sees do.
        let same = Key::new(&request(
            "kernel void k() {}",
            "-cl-std=CL3.0 -cl-uniform-work-group-size -cl-denorms-are-zero",
            &["a"],
        ));
        assert_eq!(lookup(&dir.0, &same, BOUND), Ok(entry(b"spirv")));
        for other in [
            request("kernel void k() {}", "-cl-std=CL3.0 -DX", &["a"]),
            request("kernel void k() {}", "-cl-std=CL1.2", &["a"]),
            request("kernel void k() {}", "-cl-std=CL3.0", &["a", "b"]),
            request("kernel void k() { }", "-cl-std=CL3.0", &["a"]),
        ] {
            assert_eq!(lookup(&dir.0, &Key::new(&other), BOUND), Err(Miss::Absent));
        }
        // A relative include directory makes the working directory part of the key; an
        // absolute one does not.
        let with_cwd = |options: &str| Key::new(&request("k", options, &[])).material;
        let cwd = std::env::current_dir().unwrap();
        let contains = |hay: &[u8], needle: &[u8]| hay.windows(needle.len()).any(|w| w == needle);
        let cwd = cwd.as_os_str().as_encoded_bytes();
        assert!(contains(&with_cwd("-I inc"), cwd));
        assert!(contains(&with_cwd("-Iinc"), cwd));
        // (cargo runs the tests in the crate's directory, never `/`.)
        assert!(!contains(&with_cwd("-I /abs/inc"), cwd));
        assert!(!contains(&with_cwd("-I/abs/inc -DX"), cwd));
        let headers = [("h.h".to_owned(), b"#define X 1".to_vec())];
        let with_header = Request {
            headers: &headers,
            ..request("kernel void k() {}", "-cl-std=CL3.0", &["a"])
        };
        assert_eq!(
            lookup(&dir.0, &Key::new(&with_header), BOUND),
            Err(Miss::Absent)
        );
    }

    #[test]
    fn a_changed_or_removed_dependency_misses() {
        let dir = TempDir::new("deps");
        let header = dir.0.join("inc.h");
        std::fs::write(&header, "#define N 1\n").unwrap();
        let key = Key::new(&request("#include \"inc.h\"", "", &[]));
        store(
            &dir.0,
            &key,
            std::slice::from_ref(&header),
            None,
            started(),
            &entry(b"1"),
            1 << 20,
        )
        .unwrap();
        assert!(lookup(&dir.0, &key, BOUND).is_ok());
        std::fs::write(&header, "#define N 2\n").unwrap();
        assert_eq!(
            lookup(&dir.0, &key, BOUND),
            Err(Miss::Changed(header.clone()))
        );
        std::fs::remove_file(&header).unwrap();
        assert_eq!(
            lookup(&dir.0, &key, BOUND),
            Err(Miss::Changed(header.clone()))
        );
        // A file written after the build began is not trusted: no entry is made.
        std::fs::write(&header, "#define N 3\n").unwrap();
        let before = SystemTime::now() - std::time::Duration::from_secs(60);
        assert!(matches!(
            store(&dir.0, &key, &[header], None, before, &entry(b"3"), 1 << 20),
            Err(NotStored::ModifiedDuringBuild(_))
        ));
    }

    #[test]
    fn every_truncation_and_damaged_byte_is_detected() {
        let dir = TempDir::new("corrupt");
        let key = Key::new(&request("kernel void k() {}", "", &[]));
        store(
            &dir.0,
            &key,
            &[],
            None,
            started(),
            &entry(b"0123456789"),
            1 << 20,
        )
        .unwrap();
        let path = key.path(&dir.0);
        let good = std::fs::read(&path).unwrap();
        for len in 0..good.len() {
            assert!(decode(&good[..len]).is_none(), "truncated to {len}");
        }
        for i in 0..good.len() {
            let mut bad = good.clone();
            bad[i] ^= 0x10;
            assert!(decode(&bad).is_none(), "byte {i} changed");
        }
        std::fs::write(&path, &good[..good.len() / 2]).unwrap();
        assert_eq!(lookup(&dir.0, &key, BOUND), Err(Miss::Corrupt));
        assert!(!path.exists(), "a damaged entry is removed");
    }

    #[test]
    fn only_a_regular_file_within_the_bound_is_read() {
        let dir = TempDir::new("not-a-file");
        let key = Key::new(&request("kernel void k() {}", "", &[]));
        let path = key.path(&dir.0);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        let fifo = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()).unwrap();
        // SAFETY: a NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o644) }, 0);
        assert_eq!(lookup(&dir.0, &key, BOUND), Err(Miss::NotAnEntry));
        assert!(
            std::fs::symlink_metadata(&path).is_err(),
            "the FIFO is removed"
        );
        std::os::unix::fs::symlink("/dev/zero", &path).unwrap();
        assert_eq!(lookup(&dir.0, &key, BOUND), Err(Miss::NotAnEntry));
        assert!(
            std::fs::symlink_metadata(&path).is_err(),
            "the link is removed"
        );
        // A whole entry over the bound is not read either.
        store(&dir.0, &key, &[], None, started(), &entry(b"spirv"), BOUND).unwrap();
        let len = std::fs::metadata(&path).unwrap().len();
        assert_eq!(lookup(&dir.0, &key, len - 1), Err(Miss::NotAnEntry));
        store(&dir.0, &key, &[], None, started(), &entry(b"spirv"), BOUND).unwrap();
        assert_eq!(lookup(&dir.0, &key, len), Ok(entry(b"spirv")));
    }

    #[test]
    fn machine_code_entries_round_trip_under_their_own_key() {
        let dir = TempDir::new("code");
        let none = std::collections::HashMap::new();
        let one = std::collections::HashMap::from([(1u32, vec![1u8, 0, 0, 0])]);
        let key_of = |spirv: &[u8], options: &str, target: &str, spec| {
            CodeKey::new(&CodeRequest {
                spirv,
                spec_values: spec,
                options,
                target,
            })
        };
        let key = key_of(b"spirv", "optimize=true", "x86_64", &none);
        assert_eq!(lookup_code(&dir.0, &key, BOUND), Err(Miss::Absent));
        let entry = CodeEntry {
            program: b"serialized program".to_vec(),
            warnings: "warning: kept\n".into(),
            capabilities: vec![4, 5, 11],
            uses_half: true,
            all_devices_scope: false,
        };
        store_code(&dir.0, &key, &entry, 1 << 20).unwrap();
        assert_eq!(lookup_code(&dir.0, &key, BOUND), Ok(entry.clone()));
        // Each part of the key makes another entry.
        for other in [
            key_of(b"spirv.", "optimize=true", "x86_64", &none),
            key_of(b"spirv", "optimize=false", "x86_64", &none),
            key_of(b"spirv", "optimize=true", "x86_64 has_avx512f=1", &none),
            key_of(b"spirv", "optimize=true", "x86_64", &one),
            key.derived(&[b"wide"]),
        ] {
            assert_eq!(lookup_code(&dir.0, &other, BOUND), Err(Miss::Absent));
        }
        // A derived key is an entry of its own, different for each addition.
        let wide = key.derived(&[b"kernel k".as_slice(), b"wide"]);
        store_code(&dir.0, &wide, &entry, 1 << 20).unwrap();
        assert_eq!(lookup_code(&dir.0, &wide, BOUND), Ok(entry.clone()));
        for other in [key.derived(&[b"kernel k"]), key.derived(&[b"kernel kwide"])] {
            assert_eq!(lookup_code(&dir.0, &other, BOUND), Err(Miss::Absent));
        }
        assert_eq!(lookup_code(&dir.0, &key, BOUND), Ok(entry.clone()));
        let path = key.path(&dir.0);
        let good = std::fs::read(&path).unwrap();
        for len in 0..good.len() {
            assert!(decode_code(&good[..len]).is_none(), "truncated to {len}");
        }
        for i in 0..good.len() {
            let mut bad = good.clone();
            bad[i] ^= 0x10;
            assert!(decode_code(&bad).is_none(), "byte {i} changed");
        }
        std::fs::write(&path, &good[..good.len() - 1]).unwrap();
        assert_eq!(lookup_code(&dir.0, &key, BOUND), Err(Miss::Corrupt));
        assert!(!path.exists(), "a damaged entry is removed");
    }

    #[test]
    fn both_kinds_of_entries_share_the_bound() {
        let dir = TempDir::new("shared-bound");
        let source = Key::new(&request("kernel void k() {}", "", &[]));
        let none = std::collections::HashMap::new();
        let code = CodeKey::new(&CodeRequest {
            spirv: b"spirv",
            spec_values: &none,
            options: "",
            target: "",
        });
        let code_entry = CodeEntry {
            program: vec![1; 1000],
            warnings: String::new(),
            capabilities: Vec::new(),
            uses_half: false,
            all_devices_scope: false,
        };
        store(
            &dir.0,
            &source,
            &[],
            None,
            started(),
            &entry(b"0"),
            u64::MAX,
        )
        .unwrap();
        let spirv_only = size(&dir.0);
        store_code(&dir.0, &code, &code_entry, u64::MAX).unwrap();
        assert!(
            size(&dir.0) > spirv_only + 1000,
            "the size counts both kinds"
        );
        // The SPIR-V entry was used last: it stays, the machine code goes.
        let old = SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(1_000_000);
        std::fs::File::options()
            .append(true)
            .open(code.path(&dir.0))
            .unwrap()
            .set_modified(old)
            .unwrap();
        evict(&dir.0, spirv_only + 500);
        assert!(lookup(&dir.0, &source, BOUND).is_ok());
        assert_eq!(lookup_code(&dir.0, &code, BOUND), Err(Miss::Absent));
    }

    #[test]
    fn the_least_recently_used_entries_go_first() {
        let dir = TempDir::new("lru");
        let keys: Vec<Key> = (0..10)
            .map(|i| Key::new(&request(&format!("// {i}"), "", &[])))
            .collect();
        let big = vec![7u8; 1000];
        let unbounded = u64::MAX;
        for (i, key) in keys.iter().enumerate() {
            store(&dir.0, key, &[], None, started(), &entry(&big), unbounded).unwrap();
            // Distinct, ordered use times (file times may be coarse).
            let t = SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(1_000_000 + i as u64);
            std::fs::File::options()
                .append(true)
                .open(key.path(&dir.0))
                .unwrap()
                .set_modified(t)
                .unwrap();
        }
        let one = size(&dir.0) / 10;
        // Using entry 0 makes it the most recent.
        assert!(lookup(&dir.0, &keys[0], BOUND).is_ok());
        evict(&dir.0, one * 5);
        assert!(size(&dir.0) <= one * 5 / 10 * 9);
        assert!(lookup(&dir.0, &keys[0], BOUND).is_ok(), "used last, kept");
        // 4.5 entries' worth is left: entry 0 and the three used before it.
        for key in &keys[1..7] {
            assert_eq!(lookup(&dir.0, key, BOUND), Err(Miss::Absent));
        }
        for key in &keys[7..] {
            assert!(lookup(&dir.0, key, BOUND).is_ok());
        }
    }
}
