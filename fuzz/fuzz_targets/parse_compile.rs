//! Fuzz target: untrusted bytes through `frontend::parse` (which freezes specialization
//! constants) and `frontend::link`, then `codegen::compile` on whatever the frontend accepts,
//! unchecked and in checked mode (with the watchdog's stop checks), and then *launches* the
//! checked kernels (see `launch_checked`).
//! A crash is any panic (libfuzzer-sys aborts on panics even when codegen catches them), a hang,
//! an allocation past libFuzzer's `-rss_limit_mb`, a module the frontend accepted that codegen then refuses for a reason validation should have caught
//! (Cranelift's verifier, codegen's internal checks, or its double-checks of ids and shapes),
//! a segfault in a checked kernel, or a checked kernel's write that landed outside its object
//! (a guard zone around a buffer, the local arena, the work-item frames, the printf buffer or
//! the argument block changed), whether or not a fault was reported.
#![no_main]

use std::alloc::Layout;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::{mpsc, Arc};
use std::time::{Duration, Instant};

use ferrocl_codegen::{
    CheckedLaunch, GroupInfo, Kernel, Program, KERNEL_THREAD_STACK_BYTES, LOCAL_ARG_ALIGN,
    PRINTF_BUFFER_HEADER,
};
use ferrocl_frontend::ArgKind;
use libfuzzer_sys::{fuzz_mutator, fuzz_target};

/// Codegen messages that mean "the frontend let through something malformed". Feature gaps
/// ("not supported") and resource limits are not in this list.
const VALIDATION_GAPS: &[&str] = &[
    "Verifier",
    "internal:",
    "has no value here",
    "has no type",
    "has no result type",
    "is not a pointer",
    "out of range",
    "is missing operand",
    "is not a function of this module",
    "is not a constant",
    "is not a vector",
    "has no size",
    "unsized type",
    "cannot index into",
];

fuzz_target!(|data: &[u8]| {
    STATS.inputs.fetch_add(1, Ordering::Relaxed);
    // The linker on one input: whatever it accepts must link into a module the frontend
    // accepts again (ids, types and sections stay consistent).
    let no_values = std::collections::HashMap::new();
    if let Ok(linked) = ferrocl_frontend::link(&[(data, &no_values)], true) {
        if let Err(e) = ferrocl_frontend::parse(&linked.spirv) {
            panic!("a linked module no longer parses:\n{}", e.log());
        }
    }
    let Ok(module) = ferrocl_frontend::parse(data) else {
        STATS.report();
        return;
    };
    STATS.parsed.fetch_add(1, Ordering::Relaxed);
    // Plain mode, and checked mode (FERROCL_CHECKED) with the watchdog's stop checks
    // (FERROCL_KERNEL_TIMEOUT): checked kernels have a check in front of every access and
    // division, and their own barrier rounds; stop checks read the stop word at loop heads.
    for checked in [false, true] {
        let options = ferrocl_codegen::BuildOptions {
            checked,
            stop_checks: checked,
            ..Default::default()
        };
        match ferrocl_codegen::compile(&module, &options) {
            Ok(program) => {
                if checked {
                    STATS.checked_built.fetch_add(1, Ordering::Relaxed);
                    launch_checked(&program, data);
                }
            }
            Err(e) => {
                let log = e.log;
                assert!(
                    !VALIDATION_GAPS.iter().any(|gap| log.contains(gap)),
                    "the frontend accepted a module codegen could not handle safely \
                     (checked: {checked}):\n{log}"
                );
            }
        }
    }
    STATS.report();
});

// Half of the mutations change the value of one `OpConstant`/`OpSpecConstant` of a SPIR-V
// module in place (loop bounds, sizes, indices, offsets), which keeps the module valid: byte-level
// mutations alone leave ~98% of mutants refused by the frontend, and so never launched. The other
// half (and every input that is not a little-endian module with constants) is libFuzzer's own.
fuzz_mutator!(|data: &mut [u8], size: usize, max_size: usize, seed: u32| {
    if seed & 1 == 0 {
        if let Some(n) = mutate_constant(&mut data[..size], seed >> 1) {
            return n;
        }
    }
    libfuzzer_sys::fuzzer_mutate(data, size, max_size)
});

/// Changes one value word of one `OpConstant` (43) or `OpSpecConstant` (50) of the module in
/// `data`; None when it has none (or is not a little-endian SPIR-V module).
fn mutate_constant(data: &mut [u8], seed: u32) -> Option<usize> {
    if data.len() < 24 || data.len() % 4 != 0 || data[..4] != 0x0723_0203u32.to_le_bytes() {
        return None;
    }
    let word = |data: &[u8], i: usize| {
        u32::from_le_bytes(data[4 * i..4 * i + 4].try_into().expect("four bytes"))
    };
    let words = data.len() / 4;
    let mut values = Vec::new();
    let mut i = 5;
    while i < words {
        let w = word(data, i);
        let (count, op) = ((w >> 16) as usize, w & 0xffff);
        if count == 0 || i + count > words {
            break;
        }
        if matches!(op, 43 | 50) && count >= 4 {
            values.extend(i + 3..i + count);
        }
        i += count;
    }
    if values.is_empty() {
        return None;
    }
    // A small xorshift on the seed libFuzzer gives.
    let mut r = u64::from(seed) | 1 << 40;
    let mut next = || {
        r ^= r << 13;
        r ^= r >> 7;
        r ^= r << 17;
        r
    };
    let at = values[next() as usize % values.len()];
    let old = word(data, at);
    const INTERESTING: [u32; 24] = [
        0, 1, 2, 3, 4, 7, 8, 15, 16, 17, 31, 32, 63, 64, 65, 255, 256, 1023, 1024, 4096, 65535,
        0x7fff_ffff, 0x8000_0000, 0xffff_ffff,
    ];
    let new = match next() % 5 {
        0 | 1 => INTERESTING[next() as usize % INTERESTING.len()],
        2 => old.wrapping_add(1 + (next() % 16) as u32),
        3 => old.wrapping_sub(1 + (next() % 16) as u32),
        _ => old ^ 1 << (next() % 32),
    };
    data[4 * at..4 * at + 4].copy_from_slice(&new.to_le_bytes());
    Some(data.len())
}

// ---------------------------------------------------------------------------------------------
// Launching checked kernels.
//
// Each kernel of a module built with `checked` and `stop_checks` is run directly through
// codegen's API (no runtime, no ICD), the way runtime/src/kernel.rs prepares a checked launch:
// an argument block in the kernel's layout with each pointer argument's bounds pair, a
// `CheckedLaunch` over the buffers given and the program's variables, a stop word, the local
// arena and the work-item frames. Arguments are found by trial: up to `CANDIDATES` launches per
// kernel with different value fillings, buffer contents, `__local` sizes and ranges. Each launch
// runs on its own thread with `KERNEL_THREAD_STACK_BYTES` of stack; the fuzzing thread is its
// watchdog and sets the stop word after `DEADLINE` (what FERROCL_KERNEL_TIMEOUT does).
//
// Every object the kernel may write (each buffer, the arena, the frames, the printf buffer,
// the argument block) sits between two guard zones of `GUARD` bytes filled with a pattern;
// after the launch a changed guard byte is a finding ("a write landed outside its object"),
// told apart by whether checked mode reported a fault. A 4 KiB guard on the launching
// thread's stack above the kernel's frame catches writes that run up the stack past the
// kernel's own frame (those that hit the return address crash, which is a finding too).
// ---------------------------------------------------------------------------------------------

/// Launches per kernel (candidate argument sets).
const CANDIDATES: usize = 4;
/// Kernels launched per module.
const MAX_KERNELS: usize = 8;
/// The watchdog's deadline for one launch.
const DEADLINE: Duration = Duration::from_millis(200);
/// Launch time per input after which no further launch starts (libFuzzer wants many
/// executions; a kernel that ran into the deadline is not tried again either).
const INPUT_BUDGET: Duration = Duration::from_millis(1000);
/// Bytes of each `__global`/`__constant` buffer argument.
const BUFFER_BYTES: usize = 256;
/// Bytes of each guard zone.
const GUARD: usize = 4096;
/// Bytes of printf records a launch may write.
const PRINTF_CAPACITY: usize = 4096;
/// Work-item frames (kernels with barriers) a launch may need at most, else it is skipped.
const MAX_FRAME_BYTES: usize = 16 << 20;
/// Argument blocks larger than this are skipped (huge by-value structs).
const MAX_ARGS_BYTES: usize = 1 << 16;

/// Counters, printed every `FERROCL_FUZZ_STATS` inputs (500 when it is not a number; never
/// when unset): how the README's figures are known (launches really happen, guard zones were
/// really checked).
struct Stats {
    inputs: AtomicU64,
    parsed: AtomicU64,
    checked_built: AtomicU64,
    /// Inputs with at least one launch.
    inputs_launched: AtomicU64,
    kernels: AtomicU64,
    kernels_skipped: AtomicU64,
    launches: AtomicU64,
    timed_out: AtomicU64,
    faults: AtomicU64,
    guard_checks: AtomicU64,
}

static STATS: Stats = Stats {
    inputs: AtomicU64::new(0),
    parsed: AtomicU64::new(0),
    checked_built: AtomicU64::new(0),
    inputs_launched: AtomicU64::new(0),
    kernels: AtomicU64::new(0),
    kernels_skipped: AtomicU64::new(0),
    launches: AtomicU64::new(0),
    timed_out: AtomicU64::new(0),
    faults: AtomicU64::new(0),
    guard_checks: AtomicU64::new(0),
};

impl Stats {
    fn report(&self) {
        let inputs = self.inputs.load(Ordering::Relaxed);
        static EVERY: std::sync::OnceLock<u64> = std::sync::OnceLock::new();
        let every = *EVERY.get_or_init(|| {
            std::env::var("FERROCL_FUZZ_STATS").map_or(0, |v| v.parse().unwrap_or(500))
        });
        if every == 0 || inputs % every != 0 {
            return;
        }
        let l = |c: &AtomicU64| c.load(Ordering::Relaxed);
        eprintln!(
            "launch stats: inputs {inputs}, parsed {}, checked builds {}, inputs launched {}, \
             kernels {} (skipped {}), launches {}, stopped by the deadline {}, faults reported \
             {}, guard zones checked {} (all intact)",
            l(&self.parsed),
            l(&self.checked_built),
            l(&self.inputs_launched),
            l(&self.kernels),
            l(&self.kernels_skipped),
            l(&self.launches),
            l(&self.timed_out),
            l(&self.faults),
            l(&self.guard_checks),
        );
    }
}

/// Bytes added to the end of every buffer argument's bounds pair: 0, except to test the
/// harness itself (`FERROCL_FUZZ_WIDEN_BOUNDS=64`: checked mode then lets writes through into
/// the guard zone after a buffer, which must end the run as a finding).
fn widen_bounds() -> u64 {
    static WIDEN: std::sync::OnceLock<u64> = std::sync::OnceLock::new();
    *WIDEN.get_or_init(|| {
        std::env::var("FERROCL_FUZZ_WIDEN_BOUNDS").map_or(0, |v| v.parse().unwrap_or(0))
    })
}

/// The byte a guard zone holds at `i` (bytes counted from the zone's start): varied, so that
/// a stray store of any constant is seen.
fn guard_byte(i: usize, salt: u8) -> u8 {
    ((i.wrapping_mul(0x9e37_79b9) >> 7) as u8) ^ salt ^ 0xa5
}

/// `size` bytes aligned to `GUARD` (4096, more than any kernel object needs), with a guard
/// zone of `GUARD` bytes on each side.
struct Guarded {
    what: String,
    base: *mut u8,
    layout: Layout,
    size: usize,
    salt: u8,
}

impl Guarded {
    fn new(what: String, size: usize, salt: u8) -> Option<Guarded> {
        let layout = Layout::from_size_align(GUARD + size + GUARD, GUARD).ok()?;
        // SAFETY: the layout has a non-zero size.
        let base = unsafe { std::alloc::alloc_zeroed(layout) };
        if base.is_null() {
            return None;
        }
        let g = Guarded {
            what,
            base,
            layout,
            size,
            salt,
        };
        // SAFETY: both zones lie inside the allocation.
        let (before, after) = unsafe { g.zones() };
        for (i, b) in before.iter_mut().chain(after.iter_mut()).enumerate() {
            *b = guard_byte(i, salt);
        }
        Some(g)
    }

    fn ptr(&self) -> *mut u8 {
        // SAFETY: the object starts GUARD bytes into the allocation.
        unsafe { self.base.add(GUARD) }
    }

    fn addr(&self) -> u64 {
        self.ptr() as u64
    }

    fn bytes(&mut self) -> &mut [u8] {
        // SAFETY: the object's bytes, owned by self; no launch is running.
        unsafe { std::slice::from_raw_parts_mut(self.ptr(), self.size) }
    }

    /// # Safety
    /// No launch may be writing the allocation.
    #[allow(clippy::mut_from_ref)]
    unsafe fn zones(&self) -> (&mut [u8], &mut [u8]) {
        // SAFETY: both zones lie inside the allocation (layout size GUARD + size + GUARD).
        unsafe {
            (
                std::slice::from_raw_parts_mut(self.base, GUARD),
                std::slice::from_raw_parts_mut(self.base.add(GUARD + self.size), GUARD),
            )
        }
    }

    /// Where a guard byte changed, if one did: the first byte before the object, else the
    /// first after it.
    fn damage(&self) -> Option<String> {
        STATS.guard_checks.fetch_add(1, Ordering::Relaxed);
        // SAFETY: the launch has ended.
        let (before, after) = unsafe { self.zones() };
        let mut i = 0;
        for (zone, name) in [(&*before, "before"), (&*after, "after")] {
            for (j, &b) in zone.iter().enumerate() {
                if b != guard_byte(i, self.salt) {
                    let (lo, hi) = (self.addr(), self.addr() + self.size as u64);
                    let offset = if name == "before" {
                        j as i64 - GUARD as i64
                    } else {
                        (self.size + j) as i64
                    };
                    return Some(format!(
                        "{}: [{lo:#x}, {hi:#x}) ({} bytes): byte at offset {offset} ({name} the \
                         object) is {b:#04x}, was {:#04x}",
                        self.what,
                        self.size,
                        guard_byte(i, self.salt)
                    ));
                }
                i += 1;
            }
        }
        None
    }
}

impl Drop for Guarded {
    fn drop(&mut self) {
        // SAFETY: allocated in `new` with this layout.
        unsafe { std::alloc::dealloc(self.base, self.layout) }
    }
}

/// Copies `data` cyclically from `start` into `out` (zeros when `data` is empty).
fn fill_from(out: &mut [u8], data: &[u8], start: usize) {
    if data.is_empty() {
        out.fill(0);
        return;
    }
    for (i, b) in out.iter_mut().enumerate() {
        *b = data[(start + i) % data.len()];
    }
}

/// A by-value argument's bytes for candidate `c`: zeros, small integers (1, then 7) in every
/// element (u8/u16 for 1- and 2-byte values, u64 for 8-byte ones, u32 words otherwise), or
/// bytes of the input.
fn value_bytes(size: usize, c: usize, data: &[u8], arg: usize) -> Vec<u8> {
    let mut v = vec![0u8; size];
    let small = match c {
        0 => return v,
        1 => 1u64,
        2 => 7,
        _ => {
            fill_from(&mut v, data, data.len() / 2 + 13 * arg);
            return v;
        }
    };
    match size {
        1 => v[0] = small as u8,
        2 => v.copy_from_slice(&(small as u16).to_ne_bytes()),
        8 => v.copy_from_slice(&small.to_ne_bytes()),
        _ => {
            for w in v.chunks_mut(4) {
                let n = w.len();
                w.copy_from_slice(&(small as u32).to_ne_bytes()[..n]);
            }
        }
    }
    v
}

/// Why `kernel` is not launched, if it is not.
fn unlaunchable(kernel: &Kernel) -> Option<&'static str> {
    if !kernel.checked {
        return Some("not built checked");
    }
    if kernel.args_size > MAX_ARGS_BYTES {
        return Some("argument block too large");
    }
    for arg in &kernel.info.args {
        // Images and samplers need descriptors and per-launch specialisation; pipes (only
        // metadata here) are not runtime objects this harness has. Queues, events and other
        // opaque types are no kernel arguments the frontend accepts.
        match arg.kind {
            ArgKind::Image { .. } => return Some("image argument"),
            ArgKind::Sampler => return Some("sampler argument"),
            _ if arg.qualifiers.is_pipe => return Some("pipe argument"),
            _ => {}
        }
    }
    if kernel.info.sub_groups_per_work_group == Some(0) {
        return Some("zero sub-groups per work-group");
    }
    None
}

/// The range of candidate `c`: (work_dim, global, local). Mostly 1-D, with the kernel's
/// `reqd_work_group_size` when it has one (two groups in x).
fn range_of(kernel: &Kernel, c: usize) -> Option<(u32, [u64; 3], [u64; 3])> {
    if let Some(r) = kernel.info.reqd_work_group_size {
        let r = r.map(u64::from);
        if r.contains(&0) || r.iter().product::<u64>() > 64 {
            return None;
        }
        let dim = if r[2] > 1 {
            3
        } else if r[1] > 1 {
            2
        } else {
            1
        };
        return Some((dim, [2 * r[0], r[1], r[2]], r));
    }
    // (global, local): a vector's worth per group, two vectors per group, one work-item per
    // group, a non-uniform range (the last group is smaller).
    let (global, mut local) = [(8, 4), (16, 8), (4, 1), (6, 4)][c % 4];
    if let Some(n) = kernel.info.sub_groups_per_work_group {
        local = local.min(u64::from(n) * ferrocl_codegen::SUB_GROUP_SIZE);
    }
    Some((1, [global, 1, 1], [local, 1, 1]))
}

/// Everything one launch points at.
struct Launch {
    block: Guarded,
    buffers: Vec<Guarded>,
    arena: Guarded,
    frames: Guarded,
    printf: Option<Guarded>,
    regions: Vec<(u64, u64)>,
    groups: Vec<GroupInfo>,
}

impl Launch {
    fn objects(&self) -> impl Iterator<Item = &Guarded> {
        [&self.block, &self.arena, &self.frames]
            .into_iter()
            .chain(&self.buffers)
            .chain(&self.printf)
    }
}

/// Prepares candidate `c` of `kernel`'s launch (None when the kernel cannot take it).
fn prepare(program: &Program, kernel: &Kernel, c: usize, data: &[u8]) -> Option<Launch> {
    let (work_dim, global, local) = range_of(kernel, c)?;
    let items = local.iter().product::<u64>() as usize;
    let frame_bytes = kernel.work_item_frame_size.checked_mul(items)?;
    if frame_bytes > MAX_FRAME_BYTES {
        return None;
    }
    let info = &kernel.info;
    assert_eq!(
        kernel.args.len(),
        info.args.len(),
        "kernel '{}': one argument slot per argument",
        info.name
    );
    let mut block = Guarded::new(format!("argument block of '{}'", info.name), kernel.args_size, 1)?;
    let mut buffers = Vec::new();
    let local_arg_bytes = [64usize, 256, 16, 128][c % 4];
    let mut arena_size = kernel.static_local_mem_size.next_multiple_of(LOCAL_ARG_ALIGN);
    // The first buffer argument is NULL in the last candidate when the input's last byte is
    // odd: every access through it must be reported.
    let null_first = c == 3 && data.last().is_some_and(|b| b & 1 == 1);
    let mut first_buffer = true;
    let mut writes: Vec<(usize, Vec<u8>)> = Vec::new();
    for (i, (slot, arg)) in kernel.args.iter().zip(&info.args).enumerate() {
        assert!(
            slot.offset + slot.size <= kernel.args_size,
            "kernel '{}': argument {i}'s slot lies outside the block",
            info.name
        );
        let bounds = |lo: u64, hi: u64| -> (usize, Vec<u8>) {
            let at = slot.bounds.unwrap_or_else(|| {
                panic!(
                    "kernel '{}': checked, yet pointer argument {i} has no bounds pair",
                    info.name
                )
            });
            assert!(at + 16 <= kernel.args_size, "bounds pair outside the block");
            let mut pair = lo.to_ne_bytes().to_vec();
            pair.extend_from_slice(&hi.to_ne_bytes());
            (at, pair)
        };
        match arg.kind {
            ArgKind::Buffer { .. } => {
                let (addr, lo, hi) = if null_first && first_buffer {
                    (0, 0, 0)
                } else {
                    let mut b = Guarded::new(
                        format!("buffer argument {i} of '{}'", info.name),
                        BUFFER_BYTES,
                        0x10 + i as u8,
                    )?;
                    match c {
                        0 | 3 => fill_from(b.bytes(), data, 97 * i + 7 * c),
                        // Indices 0, 1, 2, … as u32: in range of everything.
                        1 => {
                            for (k, w) in b.bytes().chunks_mut(4).enumerate() {
                                w.copy_from_slice(&(k as u32).to_ne_bytes());
                            }
                        }
                        _ => {}
                    }
                    let a = b.addr();
                    buffers.push(b);
                    (a, a, a + BUFFER_BYTES as u64 + widen_bounds())
                };
                first_buffer = false;
                writes.push((slot.offset, addr.to_ne_bytes().to_vec()));
                writes.push(bounds(lo, hi));
            }
            ArgKind::Local => {
                arena_size = arena_size.next_multiple_of(LOCAL_ARG_ALIGN);
                let off = arena_size as u64;
                writes.push((slot.offset, off.to_ne_bytes().to_vec()));
                writes.push(bounds(off, off + local_arg_bytes as u64));
                arena_size += local_arg_bytes;
            }
            ArgKind::Value { size, .. } => {
                assert_eq!(slot.size, size, "kernel '{}': argument {i} size", info.name);
                writes.push((slot.offset, value_bytes(size, c, data, i)));
            }
            ArgKind::Image { .. } | ArgKind::Sampler => return None,
        }
    }
    for (at, bytes) in writes {
        block.bytes()[at..at + bytes.len()].copy_from_slice(&bytes);
    }
    let mut arena = Guarded::new(format!("local arena of '{}'", info.name), arena_size, 2)?;
    fill_from(arena.bytes(), data, 31);
    let frames = Guarded::new(format!("work-item frames of '{}'", info.name), frame_bytes, 3)?;
    let printf = if kernel.printf_formats.is_empty() {
        None
    } else {
        let mut p = Guarded::new(
            format!("printf buffer of '{}'", info.name),
            PRINTF_BUFFER_HEADER + PRINTF_CAPACITY,
            4,
        )?;
        p.bytes()[8..16].copy_from_slice(&(PRINTF_CAPACITY as u64).to_ne_bytes());
        Some(p)
    };
    let mut regions: Vec<(u64, u64)> = buffers
        .iter()
        .map(|b| (b.addr(), b.addr() + BUFFER_BYTES as u64))
        .collect();
    // As the runtime: a pointer of unknown object may also reach the program's `__global`
    // variables.
    regions.extend(program.data_regions.iter().copied());
    let groups_per_dim = [0, 1, 2].map(|d| global[d].div_ceil(local[d]));
    let mut groups = Vec::new();
    for gz in 0..groups_per_dim[2] {
        for gy in 0..groups_per_dim[1] {
            for gx in 0..groups_per_dim[0] {
                let id = [gx, gy, gz];
                groups.push(GroupInfo {
                    global_offset: [0; 3],
                    global_size: global,
                    local_size: [0, 1, 2].map(|d| local[d].min(global[d] - id[d] * local[d])),
                    enqueued_local_size: local,
                    group_id: id,
                    num_groups: groups_per_dim,
                    work_dim,
                    frames: if frame_bytes > 0 { frames.addr() } else { 0 },
                    printf_buffer: printf.as_ref().map_or(0, Guarded::addr),
                    local_mem_size: arena_size as u64,
                    frames_size: frame_bytes as u64,
                    // Set per launch.
                    stop: 0,
                    checked: 0,
                });
            }
        }
    }
    Some(Launch {
        block,
        buffers,
        arena,
        frames,
        printf,
        regions,
        groups,
    })
}

/// Launches each launchable kernel of `program` (built checked, with stop checks) with up to
/// `CANDIDATES` argument sets, and checks every guard zone after each launch.
fn launch_checked(program: &Program, data: &[u8]) {
    let started = Instant::now();
    let mut launched = false;
    for kernel in program.kernels().iter().take(MAX_KERNELS) {
        STATS.kernels.fetch_add(1, Ordering::Relaxed);
        if unlaunchable(kernel).is_some() {
            STATS.kernels_skipped.fetch_add(1, Ordering::Relaxed);
            continue;
        }
        for c in 0..CANDIDATES {
            if started.elapsed() > INPUT_BUDGET {
                break;
            }
            let Some(launch) = prepare(program, kernel, c, data) else {
                continue;
            };
            launched = true;
            let timed_out = run_one(program, kernel, c, launch);
            if timed_out {
                break;
            }
        }
    }
    if launched {
        STATS.inputs_launched.fetch_add(1, Ordering::Relaxed);
    }
}

/// Runs one launch on a thread of its own, stops it after `DEADLINE`, then checks the guard
/// zones and the fault report. Returns whether the deadline stopped it.
fn run_one(program: &Program, kernel: &Kernel, c: usize, mut launch: Launch) -> bool {
    let stop = Arc::new(AtomicU32::new(0));
    let checked = CheckedLaunch::new(
        launch.regions.clone(),
        program.constant_regions.clone(),
        stop.clone(),
    );
    for g in &mut launch.groups {
        g.stop = Arc::as_ptr(&stop) as u64;
        g.checked = &checked as *const CheckedLaunch as u64;
    }
    let (args, arena) = (launch.block.addr() as usize, launch.arena.addr() as usize);
    let groups = &launch.groups;
    let stop_word = &*stop;
    STATS.launches.fetch_add(1, Ordering::Relaxed);
    let (done_tx, done_rx) = mpsc::channel::<()>();
    let (timed_out, stack_damage) = std::thread::scope(|s| {
        let worker = std::thread::Builder::new()
            .name("kernel".into())
            .stack_size(KERNEL_THREAD_STACK_BYTES)
            .spawn_scoped(s, move || {
                let damage = with_stack_guard(|| {
                    for g in groups {
                        // As the runtime's executor: no group starts after the stop word is set.
                        if stop_word.load(Ordering::Relaxed) != 0 {
                            break;
                        }
                        // SAFETY: the block follows the kernel's layout (slots and bounds
                        // pairs); each buffer has BUFFER_BYTES bytes, the arena
                        // `local_mem_size` bytes aligned to 4096, the frames `frames_size`
                        // bytes, the printf buffer its header and capacity; nothing else uses
                        // them during the launch; `checked` and `stop` outlive it.
                        unsafe { kernel.run_group(args as *const u8, g, arena as *mut u8) };
                    }
                });
                let _ = done_tx.send(());
                damage
            });
        let Ok(worker) = worker else {
            // No thread (resources): nothing ran.
            return (false, None);
        };
        // The watchdog: after the deadline the stop word makes every loop head return.
        let timed_out = match done_rx.recv_timeout(DEADLINE) {
            Ok(()) => false,
            Err(_) => {
                stop.store(1, Ordering::Release);
                true
            }
        };
        let damage = worker.join().expect("the launch thread panicked");
        (timed_out, damage)
    });
    if timed_out {
        STATS.timed_out.fetch_add(1, Ordering::Relaxed);
    }
    let name = &kernel.info.name;
    let fault = checked.fault();
    let report = fault.map(|f| {
        STATS.faults.fetch_add(1, Ordering::Relaxed);
        let text = f.describe(kernel);
        assert!(
            !text.trim().is_empty(),
            "kernel '{name}': the fault report is empty: {f:?}"
        );
        text
    });
    let mut damage: Vec<String> = launch.objects().filter_map(Guarded::damage).collect();
    damage.extend(stack_damage);
    if !damage.is_empty() {
        match &report {
            None => panic!(
                "unreported out-of-bounds write: kernel '{name}' (candidate {c}) wrote outside \
                 its object and no fault was reported:\n{}",
                damage.join("\n")
            ),
            Some(text) => panic!(
                "a fault was reported but the write had landed: kernel '{name}' (candidate \
                 {c}): report '{text}'; damage:\n{}",
                damage.join("\n")
            ),
        }
    }
    if let Some(f) = fault {
        // The reported work-item is one of the launch.
        let global = launch.groups[0].global_size;
        assert!(
            (0..3).all(|d| f.global_id[d] < global[d]),
            "kernel '{name}' (candidate {c}): the fault names work-item {:?} outside the range \
             {global:?}: {}",
            f.global_id,
            report.unwrap_or_default()
        );
    }
    timed_out
}

/// Runs `f` below a 4 KiB guard zone in this frame: a write that runs up the stack from the
/// kernel's frame past the frames between them lands in it. Returns the damage, if any.
#[inline(never)]
fn with_stack_guard(f: impl FnOnce()) -> Option<String> {
    let mut guard = [0u8; GUARD];
    for (i, b) in guard.iter_mut().enumerate() {
        *b = guard_byte(i, 0x77);
    }
    std::hint::black_box(&mut guard);
    call_below(f);
    std::hint::black_box(&mut guard);
    STATS.guard_checks.fetch_add(1, Ordering::Relaxed);
    guard
        .iter()
        .enumerate()
        .find(|&(i, &b)| b != guard_byte(i, 0x77))
        .map(|(i, &b)| {
            format!(
                "the launching thread's stack: byte {i} of the guard above the kernel's frame is \
                 {b:#04x}"
            )
        })
}

#[inline(never)]
fn call_below(f: impl FnOnce()) {
    f();
    std::hint::black_box(());
}
