//! The header every CL object starts with (dispatch pointer for the ICD loader, a type tag
//! to validate handles, the CL reference count) and the error/result type of the runtime.

use std::sync::atomic::{AtomicU32, AtomicUsize, Ordering};

use opencl_sys::cl_int;

/// Every runtime operation fails with a CL error code.
pub type CLResult<T> = Result<T, cl_int>;

/// The dispatch table pointer the icd layer registers before creating any object; the loader
/// reads it from the first word of every handle.
static DISPATCH: AtomicUsize = AtomicUsize::new(0);

/// Sets the dispatch pointer stored in new objects (the icd layer calls it once at load).
pub fn set_dispatch(ptr: usize) {
    DISPATCH.store(ptr, Ordering::Release);
}

pub fn dispatch() -> usize {
    DISPATCH.load(Ordering::Acquire)
}

/// Object kinds; the tag values are arbitrary but distinct so a handle of one type passed as
/// another is detected.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u64)]
pub enum Tag {
    Platform = 0x4643_4c50_6c61_7466,
    Device = 0x4643_4c44_6576_6963,
    Context = 0x4643_4c43_6f6e_7478,
    Queue = 0x4643_4c51_7565_7565,
    Mem = 0x4643_4c4d_656d_6f62,
    Program = 0x4643_4c50_726f_6772,
    Kernel = 0x4643_4c4b_6572_6e65,
    Event = 0x4643_4c45_7665_6e74,
    Sampler = 0x4643_4c53_616d_706c,
    CommandBuffer = 0x4643_4c43_6d64_4266,
    MutableCommand = 0x4643_4c4d_7574_436d,
    DeviceQueue = 0x4643_4c44_6576_5175,
    Semaphore = 0x4643_4c53_656d_6170,
}

/// Value written over the tag when an object is destroyed, so a stale handle whose memory has
/// not been reused is detected as invalid.
pub const DEAD_TAG: u64 = 0xdead_dead_dead_dead;

/// First field of every CL object (`#[repr(C)]`): dispatch pointer, then tag.
#[repr(C)]
#[derive(Debug)]
pub struct Base {
    pub dispatch: usize,
    pub tag: std::sync::atomic::AtomicU64,
    /// `clRetain*`/`clRelease*` count; the object itself lives as long as `Arc`s to it do.
    pub cl_refs: AtomicU32,
}

impl Base {
    pub fn new(tag: Tag) -> Self {
        Base {
            dispatch: dispatch(),
            tag: std::sync::atomic::AtomicU64::new(tag as u64),
            cl_refs: AtomicU32::new(1),
        }
    }

    pub fn ref_count(&self) -> u32 {
        self.cl_refs.load(Ordering::Acquire)
    }
}

impl Drop for Base {
    fn drop(&mut self) {
        self.tag.store(DEAD_TAG, Ordering::Release);
    }
}

/// A CL object kind: its tag and the error for an invalid handle of that kind.
pub trait ClObject: Send + Sync + 'static {
    const TAG: Tag;
    const INVALID: cl_int;
    fn base(&self) -> &Base;
}

#[macro_export]
#[doc(hidden)]
macro_rules! cl_object {
    ($t:ty, $tag:ident, $err:ident) => {
        impl $crate::object::ClObject for $t {
            const TAG: $crate::object::Tag = $crate::object::Tag::$tag;
            const INVALID: opencl_sys::cl_int = opencl_sys::$err;
            fn base(&self) -> &$crate::object::Base {
                &self.base
            }
        }
    };
}

/// Monotonic nanoseconds since the first call: the clock of profiling info and host timers.
pub fn now_ns() -> u64 {
    use std::sync::OnceLock;
    use std::time::Instant;
    static EPOCH: OnceLock<Instant> = OnceLock::new();
    // Start at 1 s so a timestamp is never 0 (0 reads as "not recorded").
    EPOCH.get_or_init(Instant::now).elapsed().as_nanos() as u64 + 1_000_000_000
}
