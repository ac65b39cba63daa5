//! Pipes (`__opencl_c_pipes`, OpenCL C 3.0 §6.15.16, SPIR-V's `Pipes` capability): the memory
//! a pipe object owns and the functions kernels call to use it. A kernel's pipe argument is the
//! address of a [`Pipe`] the runtime made (`clCreatePipe`); codegen passes it, unchanged, to
//! the `ferrocl_pipe_*` functions below, whose symbols are [`crate::entry_points::EntryPoint`]s.
//!
//! A pipe is a ring of `max_packets` slots of `packet_size` bytes. Reservations take
//! consecutive positions (counts of packets since the pipe was made, so they never wrap):
//! a write reservation takes free slots, a read reservation takes written ones. Slots become
//! readable when the write reservation holding them and every one before it are committed, and
//! free when the read reservation holding them and every one before it are: packets leave the
//! pipe in the order they were reserved, whatever order reservations commit in. The position
//! counters and the open reservations are under one lock; a reserved slot belongs to its
//! reservation, so its packet is copied outside the lock (the commit's unlock and the next
//! reservation's lock order the copy before any reader of the slot). `read_pipe`/`write_pipe`
//! without a reservation reserve, copy and commit one packet under the lock.

use std::alloc::Layout;
use std::collections::VecDeque;
use std::sync::Mutex;

/// What a reservation id is when the reservation failed (`is_valid_reserve_id` is false).
pub const INVALID_RESERVE_ID: u64 = 0;

/// Slots are aligned so that any packet type (up to a `long16` or `double16`) is aligned in
/// them whatever its size: every slot of a pipe whose packet size is a multiple of the type's
/// alignment is aligned as the type.
const STORAGE_ALIGN: usize = 128;

/// One pipe object's memory: its slots and the state of its ring.
pub struct Pipe {
    packet_size: usize,
    max_packets: usize,
    /// `max_packets * packet_size` bytes, STORAGE_ALIGN-aligned, owned.
    storage: *mut u8,
    layout: Layout,
    ring: Mutex<Ring>,
}

// SAFETY: `storage` is owned by the pipe and freed only on drop; concurrent access to it is
// to slots that the ring hands to one reservation at a time (see the module comment).
unsafe impl Send for Pipe {}
// SAFETY: as for Send: the ring's lock orders every hand-over of a slot.
unsafe impl Sync for Pipe {}

/// A reservation not yet over: `count` packets from position `start`.
#[derive(Clone, Copy, Debug)]
struct Span {
    start: u64,
    count: u64,
    committed: bool,
}

/// The positions of a pipe (see the module comment) and its open reservations.
#[derive(Debug, Default)]
struct Ring {
    /// Packets before this position are read and committed: their slots are free.
    freed: u64,
    /// The next position a read reservation takes.
    read_next: u64,
    /// Packets before this position are written and committed: readable.
    written: u64,
    /// The next position a write reservation takes.
    write_next: u64,
    /// Open read and write reservations, by position.
    reads: VecDeque<Span>,
    writes: VecDeque<Span>,
}

/// Which end of the pipe a call is at.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PipeEnd {
    Read,
    Write,
}

impl Ring {
    fn reserve(&mut self, end: PipeEnd, count: u64, max_packets: u64) -> Option<u64> {
        if count == 0 {
            return None;
        }
        let (next, open) = match end {
            PipeEnd::Write => {
                if self.write_next + count - self.freed > max_packets {
                    return None;
                }
                (&mut self.write_next, &mut self.writes)
            }
            PipeEnd::Read => {
                if self.written - self.read_next < count {
                    return None;
                }
                (&mut self.read_next, &mut self.reads)
            }
        };
        let start = *next;
        *next += count;
        open.push_back(Span {
            start,
            count,
            committed: false,
        });
        Some(start)
    }

    /// The open reservation at `start`. Reservations are pushed in position order and leave
    /// from the front, so each list stays sorted: a binary search finds one among thousands.
    fn span(&self, end: PipeEnd, start: u64) -> Option<&Span> {
        let open = match end {
            PipeEnd::Read => &self.reads,
            PipeEnd::Write => &self.writes,
        };
        let i = open.binary_search_by_key(&start, |s| s.start).ok()?;
        open.get(i)
    }

    /// Ends the reservation at `start`; false if there is none.
    fn commit(&mut self, end: PipeEnd, start: u64) -> bool {
        let (open, done) = match end {
            PipeEnd::Read => (&mut self.reads, &mut self.freed),
            PipeEnd::Write => (&mut self.writes, &mut self.written),
        };
        let Ok(i) = open.binary_search_by_key(&start, |s| s.start) else {
            return false;
        };
        let span = &mut open[i];
        if span.committed {
            return false;
        }
        span.committed = true;
        while let Some(front) = open.front().filter(|s| s.committed) {
            *done = front.start + front.count;
            open.pop_front();
        }
        true
    }
}

impl Pipe {
    /// A pipe of `max_packets` packets of `packet_size` bytes, or None when its memory cannot
    /// be had (the sizes are the runtime's to check against the device's limits).
    pub fn new(packet_size: usize, max_packets: usize) -> Option<Pipe> {
        if packet_size == 0 || max_packets == 0 {
            return None;
        }
        let bytes = packet_size.checked_mul(max_packets)?;
        let layout = Layout::from_size_align(bytes, STORAGE_ALIGN).ok()?;
        // SAFETY: the layout has a non-zero size (both factors are).
        let storage = unsafe { std::alloc::alloc_zeroed(layout) };
        if storage.is_null() {
            return None;
        }
        Some(Pipe {
            packet_size,
            max_packets,
            storage,
            layout,
            ring: Mutex::new(Ring::default()),
        })
    }

    pub fn packet_size(&self) -> usize {
        self.packet_size
    }

    pub fn max_packets(&self) -> usize {
        self.max_packets
    }

    /// The bytes the pipe's memory takes (CL_MEM_SIZE).
    pub fn memory_size(&self) -> usize {
        self.layout.size()
    }

    fn ring(&self) -> std::sync::MutexGuard<'_, Ring> {
        self.ring.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The address of the slot of `position`.
    fn slot(&self, position: u64) -> *mut u8 {
        let index = (position % self.max_packets as u64) as usize;
        // SAFETY: index < max_packets, so the slot lies within the storage.
        unsafe { self.storage.add(index * self.packet_size) }
    }

    /// Copies one packet between `packet` and the slot of `position`: `size` bytes (the
    /// kernel's packet type), at most the pipe's packet size.
    ///
    /// # Safety
    /// The slot belongs to the caller's reservation, and `packet` is valid for `size` bytes
    /// of the access (read for a write to the pipe, written for a read).
    unsafe fn copy(&self, end: PipeEnd, position: u64, packet: *mut u8, size: usize) {
        let n = size.min(self.packet_size);
        let slot = self.slot(position);
        // SAFETY: the caller's contract; the slot has packet_size bytes, n at most.
        unsafe {
            match end {
                PipeEnd::Write => std::ptr::copy_nonoverlapping(packet.cast_const(), slot, n),
                PipeEnd::Read => std::ptr::copy_nonoverlapping(slot.cast_const(), packet, n),
            }
        }
    }

    /// `reserve_read_pipe`/`reserve_write_pipe` (and the work-group and sub-group forms, which
    /// one work-item calls for its group): `count` packets, or [`INVALID_RESERVE_ID`].
    pub fn reserve(&self, end: PipeEnd, count: u64) -> u64 {
        self.ring()
            .reserve(end, count, self.max_packets as u64)
            .map_or(INVALID_RESERVE_ID, |start| start + 1)
    }

    /// `commit_read_pipe`/`commit_write_pipe`; an id that names no open reservation is
    /// ignored.
    pub fn commit(&self, end: PipeEnd, id: u64) {
        if id != INVALID_RESERVE_ID {
            self.ring().commit(end, id - 1);
        }
    }

    /// `read_pipe`/`write_pipe` with a reservation: packet `index` of reservation `id`.
    /// 0, or -1 when the reservation does not hold that packet.
    ///
    /// # Safety
    /// `packet` is valid for `size` bytes of the access.
    pub unsafe fn reserved_access(
        &self,
        end: PipeEnd,
        id: u64,
        index: u64,
        packet: *mut u8,
        size: usize,
    ) -> i32 {
        let position = {
            let ring = self.ring();
            let held = (id != INVALID_RESERVE_ID)
                .then(|| ring.span(end, id - 1))
                .flatten()
                .filter(|s| !s.committed && index < s.count);
            match held {
                Some(s) => s.start + index,
                None => return -1,
            }
        };
        // SAFETY: the position belongs to the open reservation; `packet` per the contract.
        unsafe { self.copy(end, position, packet, size) };
        0
    }

    /// `read_pipe`/`write_pipe` without a reservation: 0, or -1 when the pipe is empty (read)
    /// or full (write).
    ///
    /// # Safety
    /// `packet` is valid for `size` bytes of the access.
    pub unsafe fn access(&self, end: PipeEnd, packet: *mut u8, size: usize) -> i32 {
        let mut ring = self.ring();
        let Some(start) = ring.reserve(end, 1, self.max_packets as u64) else {
            return -1;
        };
        // SAFETY: the position was just reserved; `packet` per the contract.
        unsafe { self.copy(end, start, packet, size) };
        ring.commit(end, start);
        0
    }

    /// `get_pipe_num_packets`: the packets written and committed that no read has reserved.
    pub fn packets(&self) -> u64 {
        let ring = self.ring();
        ring.written - ring.read_next
    }
}

impl Drop for Pipe {
    fn drop(&mut self) {
        // SAFETY: allocated in `new` with this layout, freed once.
        unsafe { std::alloc::dealloc(self.storage, self.layout) };
    }
}

/// The pipe behind a kernel's pipe argument. None for a null address (the runtime never
/// launches with one; a kernel that makes its own pipe value gets failures, not a fault).
///
/// # Safety
/// A non-null `pipe` is the address of a live [`Pipe`] (the launch holds its memory object).
unsafe fn pipe<'a>(pipe: *const Pipe) -> Option<&'a Pipe> {
    // SAFETY: the caller's contract.
    unsafe { pipe.as_ref() }
}

fn end(write: bool) -> PipeEnd {
    if write {
        PipeEnd::Write
    } else {
        PipeEnd::Read
    }
}

/// `ferrocl_pipe_reserve(pipe, write, count) -> reserve id`.
pub(crate) extern "C" fn ferrocl_pipe_reserve(p: *const Pipe, write: u32, count: u32) -> u64 {
    // SAFETY: the argument is the runtime's pipe address (module comment).
    unsafe { pipe(p) }.map_or(INVALID_RESERVE_ID, |p| {
        p.reserve(end(write != 0), count.into())
    })
}

/// `ferrocl_pipe_commit(pipe, write, id)`.
pub(crate) extern "C" fn ferrocl_pipe_commit(p: *const Pipe, write: u32, id: u64) {
    // SAFETY: as in ferrocl_pipe_reserve.
    if let Some(p) = unsafe { pipe(p) } {
        p.commit(end(write != 0), id);
    }
}

/// `ferrocl_pipe_reserved_access(pipe, write, id, index, packet, size) -> 0 or -1`.
pub(crate) extern "C" fn ferrocl_pipe_reserved_access(
    p: *const Pipe,
    write: u32,
    id: u64,
    index: u32,
    packet: *mut u8,
    size: u32,
) -> i32 {
    // SAFETY: as in ferrocl_pipe_reserve; `packet` is the kernel's pointer to a packet of its
    // type, `size` bytes (a bad one faults as any kernel access would).
    match unsafe { pipe(p) } {
        Some(p) => unsafe {
            p.reserved_access(end(write != 0), id, index.into(), packet, size as usize)
        },
        None => -1,
    }
}

/// `ferrocl_pipe_access(pipe, write, packet, size) -> 0 or -1`.
pub(crate) extern "C" fn ferrocl_pipe_access(
    p: *const Pipe,
    write: u32,
    packet: *mut u8,
    size: u32,
) -> i32 {
    // SAFETY: as in ferrocl_pipe_reserved_access.
    match unsafe { pipe(p) } {
        Some(p) => unsafe { p.access(end(write != 0), packet, size as usize) },
        None => -1,
    }
}

/// `ferrocl_pipe_packets(pipe, max) -> get_pipe_num_packets or get_pipe_max_packets`.
pub(crate) extern "C" fn ferrocl_pipe_packets(p: *const Pipe, max: u32) -> u32 {
    // SAFETY: as in ferrocl_pipe_reserve.
    match unsafe { pipe(p) } {
        Some(p) if max != 0 => p.max_packets() as u32,
        Some(p) => p.packets() as u32,
        None => 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(p: &Pipe, v: u32) -> i32 {
        let mut v = v;
        // SAFETY: 4 bytes of a local.
        unsafe { p.access(PipeEnd::Write, (&mut v as *mut u32).cast(), 4) }
    }

    fn read(p: &Pipe) -> Option<u32> {
        let mut v = 0u32;
        // SAFETY: 4 bytes of a local.
        let r = unsafe { p.access(PipeEnd::Read, (&mut v as *mut u32).cast(), 4) };
        (r == 0).then_some(v)
    }

    #[test]
    fn packets_come_out_in_order_until_empty_and_in_until_full() {
        let p = Pipe::new(4, 3).unwrap();
        assert_eq!(read(&p), None);
        for v in [10, 11, 12] {
            assert_eq!(write(&p, v), 0);
        }
        assert_eq!(write(&p, 13), -1, "full");
        assert_eq!(p.packets(), 3);
        assert_eq!(read(&p), Some(10));
        assert_eq!(write(&p, 13), 0, "a slot was freed");
        assert_eq!(
            [read(&p), read(&p), read(&p), read(&p)],
            [Some(11), Some(12), Some(13), None]
        );
    }

    #[test]
    fn reservations_commit_out_of_order_and_packets_keep_reservation_order() {
        let p = Pipe::new(4, 8).unwrap();
        let a = p.reserve(PipeEnd::Write, 2);
        let b = p.reserve(PipeEnd::Write, 3);
        assert!(a != INVALID_RESERVE_ID && b != INVALID_RESERVE_ID && a != b);
        assert_eq!(
            p.reserve(PipeEnd::Write, 4),
            INVALID_RESERVE_ID,
            "5 of 8 taken"
        );
        let put = |id, index, v: u32| {
            let mut v = v;
            // SAFETY: 4 bytes of a local.
            unsafe { p.reserved_access(PipeEnd::Write, id, index, (&mut v as *mut u32).cast(), 4) }
        };
        assert_eq!(put(b, 0, 20), 0);
        assert_eq!(put(b, 2, 22), 0);
        assert_eq!(put(b, 3, 23), -1, "outside the reservation");
        assert_eq!(put(b, 1, 21), 0);
        p.commit(PipeEnd::Write, b);
        // b is committed but a, before it, is not: nothing is readable yet.
        assert_eq!(p.packets(), 0);
        assert_eq!(p.reserve(PipeEnd::Read, 1), INVALID_RESERVE_ID);
        assert_eq!(put(a, 1, 11), 0);
        assert_eq!(put(a, 0, 10), 0);
        p.commit(PipeEnd::Write, a);
        assert_eq!(p.packets(), 5);
        let r = p.reserve(PipeEnd::Read, 4);
        let mut got = [0u32; 4];
        for (i, g) in got.iter_mut().enumerate() {
            // SAFETY: 4 bytes of a local.
            let ok =
                unsafe { p.reserved_access(PipeEnd::Read, r, i as u64, (g as *mut u32).cast(), 4) };
            assert_eq!(ok, 0);
        }
        assert_eq!(got, [10, 11, 20, 21]);
        // The read is not committed: its slots stay taken.
        assert_eq!(p.reserve(PipeEnd::Write, 4), INVALID_RESERVE_ID);
        p.commit(PipeEnd::Read, r);
        assert_ne!(p.reserve(PipeEnd::Write, 4), INVALID_RESERVE_ID);
        assert_eq!(read(&p), Some(22));
    }

    #[test]
    fn thousands_of_open_reservations_commit_in_any_order() {
        const N: u64 = 20_000;
        let p = Pipe::new(4, N as usize).unwrap();
        let ids: Vec<u64> = (0..N).map(|_| p.reserve(PipeEnd::Write, 1)).collect();
        assert!(ids.iter().all(|&id| id != INVALID_RESERVE_ID));
        for (i, &id) in ids.iter().enumerate().rev() {
            let mut v = i as u32;
            // SAFETY: 4 bytes of a local.
            let r =
                unsafe { p.reserved_access(PipeEnd::Write, id, 0, (&mut v as *mut u32).cast(), 4) };
            assert_eq!(r, 0);
            p.commit(PipeEnd::Write, id);
            // Nothing is readable until the first reservation commits, last.
            assert_eq!(p.packets(), if i == 0 { N } else { 0 });
        }
        p.commit(PipeEnd::Write, ids[5]);
        assert_eq!(read(&p), Some(0));
        assert_eq!(read(&p), Some(1));
    }

    #[test]
    fn bad_ids_and_null_pipes_fail_without_touching_memory() {
        let p = Pipe::new(4, 2).unwrap();
        let mut v = 7u32;
        let packet = (&mut v as *mut u32).cast();
        // SAFETY: 4 bytes of a local.
        unsafe {
            assert_eq!(
                p.reserved_access(PipeEnd::Write, INVALID_RESERVE_ID, 0, packet, 4),
                -1
            );
            assert_eq!(p.reserved_access(PipeEnd::Write, 99, 0, packet, 4), -1);
        }
        p.commit(PipeEnd::Write, 99);
        p.commit(PipeEnd::Read, INVALID_RESERVE_ID);
        assert_eq!(
            ferrocl_pipe_reserve(std::ptr::null(), 1, 1),
            INVALID_RESERVE_ID
        );
        assert_eq!(ferrocl_pipe_access(std::ptr::null(), 1, packet, 4), -1);
        assert_eq!(ferrocl_pipe_packets(std::ptr::null(), 1), 0);
        assert_eq!(ferrocl_pipe_packets(&p, 1), 2);
        assert!(Pipe::new(0, 4).is_none() && Pipe::new(4, 0).is_none());
        assert!(Pipe::new(usize::MAX, 2).is_none());
    }

    #[test]
    fn a_larger_kernel_packet_copies_only_the_pipes_packet_size() {
        let p = Pipe::new(2, 2).unwrap();
        let mut wide = [1u8, 2, 3, 4];
        // SAFETY: 4 bytes of a local.
        unsafe {
            assert_eq!(p.access(PipeEnd::Write, wide.as_mut_ptr(), 4), 0);
            let mut out = [9u8; 4];
            assert_eq!(p.access(PipeEnd::Read, out.as_mut_ptr(), 4), 0);
            assert_eq!(out, [1, 2, 9, 9]);
        }
    }

    #[test]
    fn threads_pass_every_packet_exactly_once() {
        let p = std::sync::Arc::new(Pipe::new(8, 64).unwrap());
        const EACH: u64 = 20_000;
        let writers: Vec<_> = (0..2u64)
            .map(|t| {
                let p = p.clone();
                std::thread::spawn(move || {
                    for i in 0..EACH {
                        let mut v = t * EACH + i;
                        // SAFETY: 8 bytes of a local.
                        while unsafe { p.access(PipeEnd::Write, (&mut v as *mut u64).cast(), 8) }
                            != 0
                        {
                            std::thread::yield_now();
                        }
                    }
                })
            })
            .collect();
        let mut seen = vec![false; 2 * EACH as usize];
        let mut got = 0;
        while got < seen.len() {
            let mut v = 0u64;
            // SAFETY: 8 bytes of a local.
            if unsafe { p.access(PipeEnd::Read, (&mut v as *mut u64).cast(), 8) } == 0 {
                assert!(!std::mem::replace(&mut seen[v as usize], true), "{v} twice");
                got += 1;
            } else {
                std::thread::yield_now();
            }
        }
        for w in writers {
            w.join().unwrap();
        }
        assert_eq!(read_u64(&p), None);
    }

    fn read_u64(p: &Pipe) -> Option<u64> {
        let mut v = 0u64;
        // SAFETY: 8 bytes of a local.
        let r = unsafe { p.access(PipeEnd::Read, (&mut v as *mut u64).cast(), 8) };
        (r == 0).then_some(v)
    }
}
