//! Checked mode (`BuildOptions::checked`: `FERROCL_CHECKED=on` or `-cl-ferrocl-checked`): what a
//! checked kernel reports and the two functions its JIT code calls to report it. Translation
//! emits the checks (translate/checks.rs); the runtime hands each launch a [`CheckedLaunch`]
//! through [`GroupInfo::checked`], and reads the first [`Fault`] when the launch is over.
//!
//! A memory access is checked against the object its pointer was derived from — a kernel
//! argument's buffer, sub-buffer, SVM allocation or `__local` region, a private or `__local`
//! variable, a program-scope variable — with an inline compare; the object is found at build
//! time by following the pointer through access chains, casts, phis, selects and inlined calls
//! (translate/provenance.rs). A pointer whose object is unknown there (loaded from memory, made
//! from an integer) is looked up at run time ([`checked_lookup`]) among the memory the
//! work-item may reach. A fault stops the work-group at once and sets the launch's stop word,
//! so no further group starts; the command then fails.

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
}

/// One place in a kernel where a check can fail, for the report.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CheckSite {
    pub kind: CheckKind,
    /// Bytes accessed (memory checks).
    pub size: u64,
    /// The object the access is checked against, as the report names it ("argument 'out'",
    /// "private variable 'tmp'"); for other kinds, where in the kernel.
    pub object: String,
}

/// The first check that failed in a launch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Fault {
    /// Index into the kernel's [`crate::Kernel::check_sites`].
    pub site: u32,
    /// The address accessed (memory checks).
    pub address: u64,
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
            CheckKind::DivergentBarrier => {
                return format!(
                "{at}: divergent barrier: {} (not every work-item of the work-group reached it)",
                site.object
            )
            }
        };
        if self.object_end == 0 && self.object_start == 0 {
            return format!(
                "{at}: {access} of {} bytes at address {:#x} through {}: the address is in no \
                 buffer, SVM allocation, local or private memory of the launch",
                site.size, self.address, site.object
            );
        }
        let offset = self.address.wrapping_sub(self.object_start) as i64;
        format!(
            "{at}: {access} of {} bytes at offset {offset} of {} ({} bytes) is out of bounds",
            site.size,
            site.object,
            self.object_end.wrapping_sub(self.object_start)
        )
    }
}

/// What checked JIT code needs from the runtime for one launch ([`GroupInfo::checked`]).
pub struct CheckedLaunch {
    /// `[start, end)` of the memory a pointer of unknown object may reach besides the group's
    /// local memory, work-item frames and the work-group function's stack frame: the launch's
    /// buffers, SVM allocations and program-scope variables. Sorted by start.
    regions: Vec<(u64, u64)>,
    /// Set on the first fault: no further work-group starts.
    stop: Arc<AtomicU32>,
    fault: Mutex<Option<Fault>>,
}

impl CheckedLaunch {
    pub fn new(mut regions: Vec<(u64, u64)>, stop: Arc<AtomicU32>) -> Self {
        regions.retain(|&(start, end)| start < end);
        regions.sort_unstable();
        CheckedLaunch {
            regions,
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
        // The last region starting at or before `start` is the only one that can hold it
        // (regions of one launch do not overlap, except a sub-buffer inside its parent, which
        // the parent then holds).
        let i = self.regions.partition_point(|&(s, _)| s <= start);
        self.regions[..i]
            .iter()
            .rev()
            .take(2)
            .any(|&(s, e)| s <= start && end <= e)
    }
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
        object_start,
        object_end,
        global_id: [gx, gy, gz],
    });
}

/// Called by checked JIT code for an access through a pointer whose object translation could
/// not tell: whether `[address, address + size)` lies in the group's local memory, its
/// work-item frames, the work-group function's stack frame `[sp, fp)`, or one of the launch's
/// regions. Returns 0 if so; else records the fault and returns 1 (the work-group function
/// then returns).
///
/// # Safety
/// As [`checked_fault`].
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe extern "C" fn checked_lookup(
    group: *const GroupInfo,
    site: u32,
    address: u64,
    size: u64,
    local_mem: u64,
    sp: u64,
    fp: u64,
    global_id: *const u64,
) -> u32 {
    // SAFETY: per the contract, `group` is valid for the whole call.
    let info = unsafe { &*group };
    let Some(end) = address.checked_add(size) else {
        return 1;
    };
    let inside = |start: u64, len: u64| start <= address && end <= start.saturating_add(len);
    if inside(local_mem, info.local_mem_size)
        || inside(info.frames, info.frames_size)
        || (sp <= address && end <= fp)
    {
        return 0;
    }
    let checked = info.checked as *const CheckedLaunch;
    // SAFETY: as in `checked_fault`.
    let Some(launch) = (unsafe { checked.as_ref() }) else {
        return 0;
    };
    if launch.in_regions(address, end) {
        return 0;
    }
    // SAFETY: JIT code passes the address of three u64s it just stored.
    let id = unsafe { std::slice::from_raw_parts(global_id, 3) };
    launch.record(Fault {
        site,
        address,
        object_start: 0,
        object_end: 0,
        global_id: [id[0], id[1], id[2]],
    });
    1
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn regions_hold_only_what_lies_inside_one() {
        let l = CheckedLaunch::new(
            vec![(0x3000, 0x4000), (0x1000, 0x2000), (0x1800, 0x1900), (5, 5)],
            Arc::new(AtomicU32::new(0)),
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
        let l = CheckedLaunch::new(Vec::new(), stop.clone());
        let info = GroupInfo {
            checked: &l as *const CheckedLaunch as u64,
            ..GroupInfo::default()
        };
        // SAFETY: `info` and `l` outlive the calls.
        unsafe {
            checked_fault(&info, 3, 0x100, 0x80, 0x100, 1, 2, 3);
            checked_fault(&info, 4, 0, 0, 0, 0, 0, 0);
        }
        assert_eq!(stop.load(Ordering::Relaxed), 1);
        let f = l.fault().expect("recorded");
        assert_eq!((f.site, f.address, f.global_id), (3, 0x100, [1, 2, 3]));
        let id = [7u64, 0, 0];
        let local = [0u8; 64];
        let base = local.as_ptr() as u64;
        let info = GroupInfo {
            local_mem_size: 64,
            checked: &l as *const CheckedLaunch as u64,
            ..GroupInfo::default()
        };
        // SAFETY: as above; `id` holds three u64s.
        unsafe {
            assert_eq!(
                checked_lookup(&info, 0, base + 60, 4, base, 0, 0, id.as_ptr()),
                0
            );
            assert_eq!(
                checked_lookup(&info, 0, base + 61, 4, base, 0, 0, id.as_ptr()),
                1
            );
        }
    }
}
