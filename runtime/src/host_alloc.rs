//! Zeroed, aligned host memory for buffers and SVM allocations.
//!
//! Rust's allocator zeroes an over-aligned block (`MEM_ALIGN` is 128 bytes) with a `memset` on
//! the calling thread: creating a 1 GiB buffer took 1.1–1.5 s here, most of it page faults
//! taken one by one on the application's thread. Large blocks are therefore anonymous
//! mappings instead: the kernel hands out zero pages, nothing is touched until a command or a
//! kernel writes them (on every worker at once). Small blocks stay with the allocator, which
//! recycles them cheaply.
//!
//! Transparent huge pages are not asked for (`MADV_HUGEPAGE`): they made first touches cheaper
//! but the benchmark's streaming kernels slower on this VM (triad 30–33 ms against 22–24 ms
//! with 4 KiB pages, vadd 24–26 against 18–25).

use std::alloc::Layout;

/// From this size on a block is its own mapping (the allocator would use one as well, via
/// `mmap`, but still clears it itself when over-aligned).
const MAPPED_BYTES: usize = 1 << 20;

/// One zeroed block of at least `len` bytes, freed on drop.
pub struct HostBlock {
    ptr: *mut u8,
    origin: Origin,
}

enum Origin {
    Heap(Layout),
    /// The whole mapping's length (a multiple of the page size).
    Mapped(usize),
}

// SAFETY: a HostBlock is a plain byte region owned by whoever holds it; access to the bytes
// is governed by the OpenCL memory model, as for device memory.
unsafe impl Send for HostBlock {}
// SAFETY: see above.
unsafe impl Sync for HostBlock {}

impl HostBlock {
    /// `len` zeroed bytes (at least 1) aligned to `align` (a power of two), or None when the
    /// host is out of memory or the layout is impossible.
    pub fn zeroed(len: usize, align: usize) -> Option<HostBlock> {
        let page = page_size();
        if len >= MAPPED_BYTES && align <= page {
            return Self::mapped(len, page);
        }
        let layout = Layout::from_size_align(len.max(1), align).ok()?;
        // SAFETY: the layout has a non-zero size.
        let ptr = unsafe { std::alloc::alloc_zeroed(layout) };
        (!ptr.is_null()).then_some(HostBlock {
            ptr,
            origin: Origin::Heap(layout),
        })
    }

    fn mapped(len: usize, page: usize) -> Option<HostBlock> {
        let size = len.checked_next_multiple_of(page)?;
        // SAFETY: an anonymous private mapping of `size` bytes at an address the kernel picks;
        // no existing memory is affected.
        let ptr = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                size,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        if ptr == libc::MAP_FAILED {
            return None;
        }
        Some(HostBlock {
            ptr: ptr.cast(),
            origin: Origin::Mapped(size),
        })
    }

    pub fn ptr(&self) -> *mut u8 {
        self.ptr
    }
}

impl Drop for HostBlock {
    fn drop(&mut self) {
        match self.origin {
            // SAFETY: allocated in `zeroed` with this layout, freed once (here).
            Origin::Heap(layout) => unsafe { std::alloc::dealloc(self.ptr, layout) },
            // SAFETY: the mapping made in `mapped`, with its length, unmapped once (here).
            Origin::Mapped(size) => unsafe {
                libc::munmap(self.ptr.cast(), size);
            },
        }
    }
}

fn page_size() -> usize {
    // SAFETY: sysconf has no preconditions.
    let n = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    usize::try_from(n).ok().filter(|&n| n > 0).unwrap_or(4096)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(len: usize, align: usize) {
        let b = HostBlock::zeroed(len, align).expect("allocation");
        assert_eq!(
            b.ptr() as usize % align,
            0,
            "{len} bytes aligned to {align}"
        );
        // SAFETY: the block holds at least `len` bytes (1 for len 0).
        let bytes = unsafe { std::slice::from_raw_parts_mut(b.ptr(), len.max(1)) };
        assert!(bytes.iter().all(|&x| x == 0), "{len} bytes zeroed");
        bytes.fill(0xA5);
        assert_eq!(bytes[len.max(1) - 1], 0xA5);
    }

    #[test]
    fn small_and_mapped_blocks_are_zeroed_aligned_and_writable() {
        for (len, align) in [(0, 128), (1, 128), (4096, 128), (MAPPED_BYTES - 1, 128)] {
            check(len, align);
        }
        for len in [MAPPED_BYTES, MAPPED_BYTES + 3, (4 << 20) + 4096 * 3 + 1] {
            check(len, 128);
        }
        // An alignment beyond the page size goes to the allocator.
        check(MAPPED_BYTES, 2 * page_size());
    }

    #[test]
    fn impossible_sizes_fail_instead_of_panicking() {
        assert!(HostBlock::zeroed(usize::MAX - 10, 128).is_none());
        assert!(HostBlock::zeroed(1 << 62, 128).is_none());
    }
}
