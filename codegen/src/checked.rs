//! Checked mode (`BuildOptions::checked`: `FERROCL_CHECKED=on` or `-cl-ferrocl-checked`): what a
//! checked kernel reports and the two functions its JIT code calls to report it. Translation
//! emits the checks (translate/checks.rs); the runtime hands each launch a [`CheckedLaunch`]
//! through [`GroupInfo::checked`], and reads the first [`Fault`] when the launch is over.
//!
//! A memory access is checked against the object its pointer was derived from — a kernel
//! argument's buffer, sub-buffer, SVM allocation or `__local` region, a private or `__local`
//! variable, a program-scope variable — with an inline compare; the object is found at build
//! time by following the pointer through access chains, casts, phis, selects and inlined calls
//! (translate/provenance.rs); a select or phi of several objects is checked against each. A
//! pointer whose object is unknown there (loaded from memory, made from an integer) is looked
//! up at run time ([`checked_lookup`]) among the memory the work-item may reach: its private
//! variables (never the rest of the stack frame or work-item frame), the group's local
//! memory, the launch's buffers and allocations, and the program's variables — `__constant`
//! ones for reads only, as their pages are read-only. A fault stops the work-group at once and
//! sets the launch's stop word, so no further group starts; the command then fails.

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};

use crate::abi::GroupInfo;

/// What a check site guards.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CheckKind {
    Read,
    Write,
    /// An atomic read-modify-write.
    Atomic,
    /// The divisor of an integer division or remainder.
    DivisionByZero,
    /// A barrier that not every work-item of the group reached.
    DivergentBarrier,
    /// An operand outside what the instruction allows (a broadcast from a local id outside
    /// the work-group).
    InvalidOperand,
}

/// One place in a kernel where a check can fail, for the report.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CheckSite {
    pub kind: CheckKind,
    /// Bytes accessed (memory checks).
    pub size: u64,
    /// The object the access is checked against, as the report names it ("argument 'out'",
    /// "private variable 'tmp'"; several joined by " or "); for other kinds, where in the
    /// kernel.
    pub object: String,
    /// How many objects `object` names: a pointer chosen by a select or phi may point into
    /// any of them (the fault's bounds are the first's).
    pub candidates: u32,
}

/// The first check that failed in a launch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Fault {
    /// Index into the kernel's [`crate::Kernel::check_sites`].
    pub site: u32,
    /// The address accessed (memory checks).
    pub address: u64,
    /// Bytes accessed (memory checks): copies know it only at run time.
    pub size: u64,
    /// The address lies in `__constant` data, which the access would have written.
    pub read_only: bool,
    /// The object's bytes `[start, end)`; both 0 when the pointer's object is unknown.
    pub object_start: u64,
    pub object_end: u64,
    pub global_id: [u64; 3],
}

impl Fault {
    /// The report line: kernel, work-item, object, offset and size.
    pub fn describe(&self, kernel: &crate::Kernel) -> String {
        let Some(site) = kernel.check_sites.get(self.site as usize) else {
            return format!("kernel '{}': check {} failed", kernel.info.name, self.site);
        };
        let [x, y, z] = self.global_id;
        let at = format!("kernel '{}', work-item ({x}, {y}, {z})", kernel.info.name);
        let access = match site.kind {
            CheckKind::Read => "read",
            CheckKind::Write => "write",
            CheckKind::Atomic => "atomic access",
            CheckKind::DivisionByZero => {
                return format!("{at}: integer division by zero in {}", site.object)
            }
            CheckKind::InvalidOperand => return format!("{at}: {}", site.object),
            CheckKind::DivergentBarrier => {
                return format!(
                "{at}: divergent barrier: {} (not every work-item of the work-group reached it)",
                site.object
            )
            }
        };
        let size = if self.size != 0 { self.size } else { site.size };
        if self.read_only {
            return format!(
                "{at}: {access} of {size} bytes at address {:#x} through {}: the address is in \
                 __constant data, which is read-only",
                self.address, site.object
            );
        }
        if self.object_end == 0 && self.object_start == 0 {
            return format!(
                "{at}: {access} of {size} bytes at address {:#x} through {}: the address is in \
                 no buffer, SVM allocation, local memory or private variable of the launch",
                self.address, site.object
            );
        }
        if site.candidates > 1 {
            return format!(
                "{at}: {access} of {size} bytes at address {:#x} is outside each object the \
                 pointer may point into: {}",
                self.address, site.object
            );
        }
        let offset = self.address.wrapping_sub(self.object_start) as i64;
        let bytes = self.object_end.wrapping_sub(self.object_start);
        let inside = self.address >= self.object_start
            && self
                .address
                .checked_add(size)
                .is_some_and(|end| end <= self.object_end);
        if inside {
            // In bounds, yet failed: the object is one a write may not touch.
            return format!(
                "{at}: {access} of {size} bytes at offset {offset} of {} ({bytes} bytes): the \
                 object is read-only",
                site.object
            );
        }
        format!(
            "{at}: {access} of {size} bytes at offset {offset} of {} ({bytes} bytes) is out of \
             bounds",
            site.object
        )
    }
}

/// What checked JIT code needs from the runtime for one launch ([`GroupInfo::checked`]).
pub struct CheckedLaunch {
    /// `[start, end)` of the memory a pointer of unknown object may reach besides the group's
    /// local memory and the work-item's private variables: the launch's buffers, SVM
    /// allocations and program-scope `__global` variables. Sorted by start.
    regions: Vec<(u64, u64)>,
    /// `[start, end)` of the program's `__constant` data: readable, never writable (its pages
    /// are read-only, a write would end the application). Sorted by start.
    read_only: Vec<(u64, u64)>,
    /// Set on the first fault: no further work-group starts.
    stop: Arc<AtomicU32>,
    fault: Mutex<Option<Fault>>,
}

impl CheckedLaunch {
    pub fn new(
        mut regions: Vec<(u64, u64)>,
        mut read_only: Vec<(u64, u64)>,
        stop: Arc<AtomicU32>,
    ) -> Self {
        for list in [&mut regions, &mut read_only] {
            list.retain(|&(start, end)| start < end);
            list.sort_unstable();
        }
        CheckedLaunch {
            regions,
            read_only,
            stop,
            fault: Mutex::new(None),
        }
    }

    /// The first fault of the launch, if any.
    pub fn fault(&self) -> Option<Fault> {
        *self.fault.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn record(&self, fault: Fault) {
        let mut first = self.fault.lock().unwrap_or_else(|p| p.into_inner());
        first.get_or_insert(fault);
        self.stop.store(1, Ordering::Release);
    }

    fn in_regions(&self, start: u64, end: u64) -> bool {
        inside_one(&self.regions, start, end)
    }

    /// Whether `[start, end)` touches `__constant` data.
    fn touches_read_only(&self, start: u64, end: u64) -> bool {
        let i = self.read_only.partition_point(|&(s, _)| s < end);
        self.read_only[..i].iter().any(|&(_, e)| start < e)
    }
}

/// Whether `[start, end)` lies inside one of `regions` (sorted by start). The last region
/// starting at or before `start` is the only one that can hold it (regions of one launch do
/// not overlap, except a sub-buffer inside its parent, which the parent then holds).
fn inside_one(regions: &[(u64, u64)], start: u64, end: u64) -> bool {
    let i = regions.partition_point(|&(s, _)| s <= start);
    regions[..i]
        .iter()
        .rev()
        .take(2)
        .any(|&(s, e)| s <= start && end <= e)
}

/// Called by checked JIT code when an access leaves its object, a divisor is zero or a barrier
/// diverges: records the fault (the first of the launch wins). The work-group function returns
/// right after.
///
/// # Safety
/// `group` is the `GroupInfo` the work-group function was called with; its `checked` field is
/// 0 or points at the launch's live `CheckedLaunch`.
pub(crate) unsafe extern "C" fn checked_fault(
    group: *const GroupInfo,
    site: u32,
    address: u64,
    size: u64,
    object_start: u64,
    object_end: u64,
    gx: u64,
    gy: u64,
    gz: u64,
) {
    // SAFETY: per the contract above, `group` is valid for the whole call.
    let checked = unsafe { (*group).checked } as *const CheckedLaunch;
    // SAFETY: the runtime keeps the CheckedLaunch alive until every group of the launch has
    // returned.
    let Some(launch) = (unsafe { checked.as_ref() }) else {
        return;
    };
    launch.record(Fault {
        site,
        address,
        size,
        read_only: false,
        object_start,
        object_end,
        global_id: [gx, gy, gz],
    });
}

/// Flag in `lookup_count`'s high half: the access writes.
pub(crate) const LOOKUP_WRITES: u64 = 1 << 32;

/// Called by checked JIT code for an access through a pointer whose object translation could
/// not tell: whether `[address, address + size)` lies in one of the work-item's private
/// variables, the group's local memory, or one of the launch's regions (a write never in
/// `__constant` data). Returns 0 if so; else records the fault and returns 1
/// (the work-group function then returns).
///
/// `table` holds the work-item's global id (three u64), then `[lo, hi)` (two u64) of each of
/// the `lookup_count & 0xffff_ffff` private variables whose address is taken;
/// [`LOOKUP_WRITES`] is set for writes and atomics.
///
/// # Safety
/// As [`checked_fault`]; `table` points at the global id and the variables' bounds.
pub(crate) unsafe extern "C" fn checked_lookup(
    group: *const GroupInfo,
    site: u32,
    address: u64,
    size: u64,
    local_mem: u64,
    table: *const u64,
    lookup_count: u64,
) -> u32 {
    // SAFETY: per the contract, `group` is valid for the whole call.
    let info = unsafe { &*group };
    let writes = lookup_count & LOOKUP_WRITES != 0;
    let count = (lookup_count & 0xffff_ffff) as usize;
    // SAFETY: JIT code passes a table of 3 + 2 * count u64s it just stored.
    let table = unsafe { std::slice::from_raw_parts(table, 3 + 2 * count) };
    let (global_id, private) = table.split_at(3);
    let end = address.checked_add(size);
    let inside = |start: u64, len: u64| {
        end.is_some_and(|end| start <= address && end <= start.saturating_add(len))
    };
    let in_private = private
        .chunks_exact(2)
        .any(|r| inside(r[0], r[1].saturating_sub(r[0])));
    // The work-item frames of kernels with barriers hold their private variables (in the
    // table) beside values kept across barriers and resume states, which no pointer reaches.
    if in_private || inside(local_mem, info.local_mem_size) {
        return 0;
    }
    let checked = info.checked as *const CheckedLaunch;
    // SAFETY: as in `checked_fault`.
    let Some(launch) = (unsafe { checked.as_ref() }) else {
        return 0;
    };
    let end = end.unwrap_or(u64::MAX);
    let read_only = launch.touches_read_only(address, end);
    if read_only && !writes && inside_one(&launch.read_only, address, end) {
        return 0;
    }
    if !read_only && launch.in_regions(address, end) {
        return 0;
    }
    launch.record(Fault {
        site,
        address,
        size,
        read_only: read_only && writes,
        object_start: 0,
        object_end: 0,
        global_id: [global_id[0], global_id[1], global_id[2]],
    });
    1
}

#[cfg(test)]
mod tests {
    use super::*;

    fn launch(regions: Vec<(u64, u64)>, read_only: Vec<(u64, u64)>) -> CheckedLaunch {
        CheckedLaunch::new(regions, read_only, Arc::new(AtomicU32::new(0)))
    }

    #[test]
    fn regions_hold_only_what_lies_inside_one() {
        let l = launch(
            vec![(0x3000, 0x4000), (0x1000, 0x2000), (0x1800, 0x1900), (5, 5)],
            Vec::new(),
        );
        assert!(l.in_regions(0x1000, 0x2000));
        assert!(l.in_regions(0x1850, 0x1860));
        assert!(l.in_regions(0x1950, 0x1960));
        assert!(!l.in_regions(0x1ffc, 0x2004));
        assert!(!l.in_regions(0x2000, 0x2004));
        assert!(l.in_regions(0x3ffc, 0x4000));
        assert!(!l.in_regions(0x0, 0x4));
    }

    #[test]
    fn the_first_fault_wins_and_stops_the_launch() {
        let stop = Arc::new(AtomicU32::new(0));
        let l = CheckedLaunch::new(Vec::new(), Vec::new(), stop.clone());
        let info = GroupInfo {
            checked: &l as *const CheckedLaunch as u64,
            ..GroupInfo::default()
        };
        // SAFETY: `info` and `l` outlive the calls.
        unsafe {
            checked_fault(&info, 3, 0x100, 4, 0x80, 0x100, 1, 2, 3);
            checked_fault(&info, 4, 0, 0, 0, 0, 0, 0, 0);
        }
        assert_eq!(stop.load(Ordering::Relaxed), 1);
        let f = l.fault().expect("recorded");
        assert_eq!(
            (f.site, f.address, f.size, f.global_id),
            (3, 0x100, 4, [1, 2, 3])
        );
    }

    /// `checked_lookup` of `size` bytes at `address` with `private` variables; 0 = accepted.
    fn lookup(
        l: &CheckedLaunch,
        local: &[u8],
        private: &[(u64, u64)],
        address: u64,
        size: u64,
        writes: bool,
    ) -> u32 {
        let info = GroupInfo {
            local_mem_size: local.len() as u64,
            checked: l as *const CheckedLaunch as u64,
            ..GroupInfo::default()
        };
        let mut table = vec![7u64, 0, 0];
        table.extend(private.iter().flat_map(|&(lo, hi)| [lo, hi]));
        let count = private.len() as u64 | if writes { LOOKUP_WRITES } else { 0 };
        // SAFETY: `info`, `l` and `table` (3 + 2 * count u64s) outlive the call.
        unsafe {
            checked_lookup(
                &info,
                0,
                address,
                size,
                local.as_ptr() as u64,
                table.as_ptr(),
                count,
            )
        }
    }

    #[test]
    fn lookups_accept_local_memory_and_private_variables_only() {
        let l = launch(vec![(0x10_0000, 0x10_1000)], Vec::new());
        let local = [0u8; 64];
        let base = local.as_ptr() as u64;
        assert_eq!(lookup(&l, &local, &[], base + 60, 4, true), 0);
        assert_eq!(lookup(&l, &local, &[], base + 61, 4, true), 1);
        // Two private variables with a gap (a spill slot, say) between them.
        let vars = [(0x9000, 0x9010), (0x9020, 0x9040)];
        assert_eq!(lookup(&l, &[], &vars, 0x9000, 16, true), 0);
        assert_eq!(lookup(&l, &[], &vars, 0x903c, 4, true), 0);
        assert_eq!(
            lookup(&l, &[], &vars, 0x9010, 4, true),
            1,
            "the gap is not private memory"
        );
        assert_eq!(
            lookup(&l, &[], &vars, 0x900c, 8, true),
            1,
            "straddles the end"
        );
        assert_eq!(lookup(&l, &[], &vars, 0x8ffc, 4, false), 1);
        assert_eq!(
            lookup(&l, &[], &vars, 0x10_0ffc, 4, true),
            0,
            "a buffer of the launch"
        );
        assert_eq!(lookup(&l, &[], &vars, u64::MAX - 1, 4, false), 1, "wraps");
        // The first fault of the launch is the one kept.
        let f = l.fault().expect("recorded");
        assert_eq!((f.address, f.size, f.global_id), (base + 61, 4, [7, 0, 0]));
    }

    #[test]
    fn constant_data_is_readable_but_never_written() {
        let l = launch(vec![(0x1000, 0x2000)], vec![(0x5000, 0x5010)]);
        assert_eq!(lookup(&l, &[], &[], 0x5004, 4, false), 0);
        assert_eq!(lookup(&l, &[], &[], 0x500c, 8, false), 1, "past the end");
        assert!(l.fault().is_some_and(|f| !f.read_only));
        let l = launch(vec![(0x1000, 0x2000)], vec![(0x5000, 0x5010)]);
        assert_eq!(lookup(&l, &[], &[], 0x5004, 4, true), 1);
        assert!(l.fault().is_some_and(|f| f.read_only));
    }
}
