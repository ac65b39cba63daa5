//! The FFI plumbing every entry point shares: panic-safe wrappers that turn `CLResult`s into
//! return codes / `errcode_ret`, handle validation and conversion, the two-call `clGet*Info`
//! protocol, and event wait lists.

use std::ffi::c_void;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::Ordering;
use std::sync::{Arc, Once};

use ferrocl_runtime::context::Context;
use ferrocl_runtime::event::Event;
use ferrocl_runtime::object::{dispatch, set_dispatch, Base};
use ferrocl_runtime::{CLResult, ClObject};
use opencl_sys::*;

/// Registers the dispatch table with the runtime before any object exists, and in release
/// builds keeps panic messages off the application's stderr.
pub fn init() {
    static INIT: Once = Once::new();
    INIT.call_once(|| {
        set_dispatch(&crate::dispatch::DISPATCH as *const _ as usize);
        if !cfg!(debug_assertions) {
            quiet_panics();
        }
    });
}

/// A panic inside the driver is caught at the entry point and becomes an error code; its
/// message (and backtrace) is for Ferrocl's developers, shown only with `FERROCL_LOG=debug`.
/// The hook belongs to this library's own copy of the standard library, so a Rust
/// application's panics keep theirs.
fn quiet_panics() {
    let default = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let debug =
            std::env::var("FERROCL_LOG").is_ok_and(|v| v.trim().eq_ignore_ascii_case("debug"));
        if debug {
            default(info);
        }
    }));
}

/// Runs an entry point body returning a status code; panics become CL_OUT_OF_HOST_MEMORY.
pub fn status(f: impl FnOnce() -> CLResult<()>) -> cl_int {
    init();
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(Ok(())) => CL_SUCCESS,
        Ok(Err(e)) => e,
        Err(_) => CL_OUT_OF_HOST_MEMORY,
    }
}

/// Runs a creating entry point: the object on success, NULL and `*errcode_ret` on failure.
///
/// # Safety
/// `errcode_ret` is NULL or points at a writable cl_int (API contract).
pub unsafe fn create<T>(errcode_ret: *mut cl_int, f: impl FnOnce() -> CLResult<*mut T>) -> *mut T {
    init();
    let (p, code) = match catch_unwind(AssertUnwindSafe(f)) {
        Ok(Ok(p)) => (p, CL_SUCCESS),
        Ok(Err(e)) => (std::ptr::null_mut(), e),
        Err(_) => (std::ptr::null_mut(), CL_OUT_OF_HOST_MEMORY),
    };
    if !errcode_ret.is_null() {
        // SAFETY: non-NULL errcode_ret is writable (caller contract).
        unsafe { *errcode_ret = code };
    }
    p
}

/// Validates a handle: non-NULL, our dispatch pointer, the right type tag.
///
/// # Safety
/// A non-NULL `h` must be readable for the header size; handles the application got from us
/// are. Garbage pointers cannot be detected in general (the spec allows undefined behaviour).
pub unsafe fn obj<'a, T: ClObject>(h: *mut c_void) -> CLResult<&'a T> {
    if h.is_null() || !(h as usize).is_multiple_of(std::mem::align_of::<Base>()) {
        return Err(T::INVALID);
    }
    // SAFETY: every object starts with `Base` (#[repr(C)], first field), see above.
    let base = unsafe { &*(h as *const Base) };
    if base.dispatch != dispatch() || base.tag.load(Ordering::Acquire) != T::TAG as u64 {
        return Err(T::INVALID);
    }
    // SAFETY: dispatch and tag match: `h` is the address of a live `T` held by an Arc.
    Ok(unsafe { &*(h as *const T) })
}

/// Validates a handle and takes an internal reference (the object stays alive while the
/// `Arc` lives, whatever the application's reference count does).
///
/// # Safety
/// As [`obj`].
pub unsafe fn arc<T: ClObject>(h: *mut c_void) -> CLResult<Arc<T>> {
    // SAFETY: caller contract of obj.
    unsafe { obj::<T>(h)? };
    // SAFETY: `h` came from Arc::into_raw/Arc::as_ptr of an Arc<T> that is alive.
    unsafe {
        Arc::increment_strong_count(h as *const T);
        Ok(Arc::from_raw(h as *const T))
    }
}

/// The handle for a new object: the application owns one CL reference (cl_refs starts at 1),
/// backed by one Arc strong count released when cl_refs reaches 0.
pub fn new_handle<T: ClObject>(a: Arc<T>) -> *mut c_void {
    Arc::into_raw(a) as *mut c_void
}

/// The handle of an existing object (no reference taken).
pub fn handle<T>(a: &T) -> *mut c_void {
    a as *const T as *mut c_void
}

/// clRetain*.
///
/// # Safety
/// As [`obj`].
pub unsafe fn retain<T: ClObject>(h: *mut c_void) -> CLResult<()> {
    // SAFETY: caller contract of obj.
    let o = unsafe { obj::<T>(h)? };
    o.base()
        .cl_refs
        .fetch_update(Ordering::AcqRel, Ordering::Acquire, |c| {
            (c > 0).then_some(c + 1)
        })
        .map_err(|_| T::INVALID)?;
    Ok(())
}

/// clRelease*: at zero the application's Arc reference is dropped; internal references
/// (kernels → program, commands → buffers) may keep the object alive longer.
///
/// # Safety
/// As [`obj`].
pub unsafe fn release<T: ClObject>(h: *mut c_void) -> CLResult<()> {
    // SAFETY: caller contract of obj.
    let o = unsafe { obj::<T>(h)? };
    let prev = o
        .base()
        .cl_refs
        .fetch_update(Ordering::AcqRel, Ordering::Acquire, |c| c.checked_sub(1))
        .map_err(|_| T::INVALID)?;
    if prev == 1 {
        // SAFETY: this is the strong count `new_handle` leaked for the application.
        drop(unsafe { Arc::from_raw(h as *const T) });
    }
    Ok(())
}

/// Raw bytes of a plain value for an info query.
pub fn v<T: Copy>(x: T) -> Vec<u8> {
    arr(std::slice::from_ref(&x))
}

/// Raw bytes of a slice of plain values.
pub fn arr<T: Copy>(x: &[T]) -> Vec<u8> {
    let len = std::mem::size_of_val(x);
    // SAFETY: T is Copy plain data (integers, pointers, repr(C) structs of them); reading its
    // bytes is defined.
    unsafe { std::slice::from_raw_parts(x.as_ptr().cast::<u8>(), len) }.to_vec()
}

/// A NUL-terminated string.
pub fn s(x: &str) -> Vec<u8> {
    let mut b = x.as_bytes().to_vec();
    b.push(0);
    b
}

pub fn b(x: bool) -> Vec<u8> {
    v(if x { CL_TRUE } else { CL_FALSE } as cl_bool)
}

/// The two-call protocol: report the size, copy when there is room, CL_INVALID_VALUE when the
/// buffer given is too small.
///
/// # Safety
/// `value` is NULL or writable for `size` bytes; `size_ret` is NULL or writable.
pub unsafe fn write_info(
    bytes: CLResult<Vec<u8>>,
    size: usize,
    value: *mut c_void,
    size_ret: *mut usize,
) -> CLResult<()> {
    let bytes = bytes?;
    if !value.is_null() {
        if size < bytes.len() {
            return Err(CL_INVALID_VALUE);
        }
        // SAFETY: value is writable for size >= bytes.len() bytes (caller contract).
        unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), value.cast::<u8>(), bytes.len()) };
    }
    if !size_ret.is_null() {
        // SAFETY: writable (caller contract).
        unsafe { *size_ret = bytes.len() };
    }
    Ok(())
}

/// Converts an event wait list; all events must belong to `ctx`.
///
/// # Safety
/// `list` is NULL or readable for `n` handles.
pub unsafe fn wait_list(
    n: cl_uint,
    list: *const cl_event,
    ctx: &Context,
) -> CLResult<Vec<Arc<Event>>> {
    if (n == 0) != list.is_null() {
        return Err(CL_INVALID_EVENT_WAIT_LIST);
    }
    let mut out = Vec::with_capacity(n as usize);
    for i in 0..n as usize {
        // SAFETY: readable for n entries (caller contract).
        let h = unsafe { *list.add(i) };
        // SAFETY: handle check.
        let e = unsafe { arc::<Event>(h) }.map_err(|_| CL_INVALID_EVENT_WAIT_LIST)?;
        if !std::ptr::eq(&*e.context, ctx) {
            return Err(CL_INVALID_CONTEXT);
        }
        out.push(e);
    }
    Ok(out)
}

/// Stores a new event handle in `*out` when the application asked for one.
///
/// # Safety
/// `out` is NULL or writable.
pub unsafe fn out_event(out: *mut cl_event, e: Arc<Event>) {
    if !out.is_null() {
        // SAFETY: writable (caller contract).
        unsafe { *out = new_handle(e) };
    }
}

/// Reads `n` values from a C array (NULL with n == 0 gives an empty Vec).
///
/// # Safety
/// `p` is NULL or readable for `n` values.
pub unsafe fn slice<'a, T>(p: *const T, n: usize) -> &'a [T] {
    if p.is_null() || n == 0 {
        &[]
    } else {
        // SAFETY: readable for n values (caller contract).
        unsafe { std::slice::from_raw_parts(p, n) }
    }
}

/// A zero-terminated property list as (key, value) pairs plus the raw list (with terminator).
///
/// # Safety
/// `p` is NULL or a zero-terminated list of key/value pairs.
pub unsafe fn properties<T: Copy + Default + PartialEq>(p: *const T) -> (Vec<(T, T)>, Vec<T>) {
    let mut pairs = Vec::new();
    let mut raw = Vec::new();
    if p.is_null() {
        return (pairs, raw);
    }
    let mut i = 0;
    loop {
        // SAFETY: the list is terminated by a zero key (caller contract).
        let k = unsafe { *p.add(i) };
        raw.push(k);
        if k == T::default() {
            break;
        }
        // SAFETY: as above: every non-zero key has a value.
        let val = unsafe { *p.add(i + 1) };
        raw.push(val);
        pairs.push((k, val));
        i += 2;
    }
    (pairs, raw)
}

#[cfg(test)]
mod tests {
    use super::*;
    use ferrocl_runtime::memory::Mem;
    use ferrocl_runtime::platform::platform;

    #[test]
    fn info_protocol() {
        let mut size = 0;
        let mut buf = [0u8; 8];
        // SAFETY: buf has 8 bytes, size is writable.
        unsafe {
            assert_eq!(write_info(Ok(s("abc")), 0, null(), &mut size), Ok(()));
            assert_eq!(size, 4);
            assert_eq!(
                write_info(Ok(s("abc")), 3, buf.as_mut_ptr().cast(), &mut size),
                Err(CL_INVALID_VALUE)
            );
            assert_eq!(
                write_info(
                    Ok(v(7u32)),
                    8,
                    buf.as_mut_ptr().cast(),
                    std::ptr::null_mut()
                ),
                Ok(())
            );
            assert_eq!(&buf[..4], &7u32.to_ne_bytes());
            assert_eq!(
                write_info(Err(CL_INVALID_VALUE), 8, buf.as_mut_ptr().cast(), &mut size),
                Err(CL_INVALID_VALUE)
            );
        }
    }

    fn null() -> *mut c_void {
        std::ptr::null_mut()
    }

    #[test]
    fn handles_are_validated_and_counted() {
        init();
        let ctx = Context::new(platform().devices.clone(), Vec::new());
        let weak = Arc::downgrade(&ctx);
        let h = new_handle(ctx);
        // SAFETY: `h` is a live handle; the other pointers are NULL or of another type.
        unsafe {
            assert!(obj::<Context>(h).is_ok());
            assert_eq!(obj::<Mem>(h).err(), Some(CL_INVALID_MEM_OBJECT));
            assert_eq!(obj::<Context>(null()).err(), Some(CL_INVALID_CONTEXT));
            assert_eq!(
                obj::<Context>(handle(platform())).err(),
                Some(CL_INVALID_CONTEXT)
            );
            let internal = arc::<Context>(h).unwrap();
            retain::<Context>(h).unwrap();
            assert_eq!(internal.base().ref_count(), 2);
            release::<Context>(h).unwrap();
            release::<Context>(h).unwrap();
            // The CL count is 0 but the internal reference keeps the object alive.
            assert!(weak.upgrade().is_some());
            assert_eq!(internal.base().ref_count(), 0);
            drop(internal);
            assert!(weak.upgrade().is_none());
        }
    }

    #[test]
    fn panics_do_not_cross_the_boundary() {
        assert_eq!(status(|| panic!("boom")), CL_OUT_OF_HOST_MEMORY);
        let mut err = 0;
        // SAFETY: err is writable.
        let p: *mut c_void = unsafe { create(&mut err, || panic!("boom")) };
        assert!(p.is_null());
        assert_eq!(err, CL_OUT_OF_HOST_MEMORY);
    }
}
