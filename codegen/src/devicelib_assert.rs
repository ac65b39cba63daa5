//! `cl_intel_devicelib_assert`: what a kernel's call of `__devicelib_assert_fail` (SYCL's
//! `assert` in device code, DPC++'s `Assert.md`) does — the function JIT code calls in its
//! place (translate/builtins.rs `devicelib_assert_call`). As libc's `assert` and Intel's CPU
//! runtime do, it prints the failed assertion to the host's stderr and ends the process with
//! `abort()` (SIGABRT): the extension's "native" mode, in which the DPC++ runtime expects the
//! device to stop the program. The message has the form of DPC++'s fallback library:
//! `file:line: func: global id: [x, y, z], local id: [x, y, z] Assertion `expr` failed.`
//!
//! Work-items that fail at once on several workers print one message: the first to get here
//! prints it and aborts while the others wait.

use std::ffi::c_char;
use std::io::Write;
use std::sync::Mutex;

/// Longest string read through one of the pointers (a string without its NUL within this many
/// bytes is cut there).
const MAX_STRING_BYTES: usize = 4096;

/// The failing work-item that prints; the others wait here until the process ends.
static FAILING: Mutex<()> = Mutex::new(());

/// The NUL-terminated string at `p`, at most [`MAX_STRING_BYTES`] of it ("..." marks a cut),
/// invalid UTF-8 replaced; `(null)` for a null pointer.
///
/// # Safety
/// `p` is null, or readable up to its first NUL or for [`MAX_STRING_BYTES`] bytes.
unsafe fn c_string(p: *const c_char) -> String {
    if p.is_null() {
        return "(null)".to_owned();
    }
    let mut bytes = Vec::new();
    for i in 0..MAX_STRING_BYTES {
        // SAFETY: per the contract, every byte before the NUL (or the bound) is readable.
        let b = unsafe { p.add(i).read() } as u8;
        if b == 0 {
            return String::from_utf8_lossy(&bytes).into_owned();
        }
        bytes.push(b);
    }
    format!("{}...", String::from_utf8_lossy(&bytes))
}

/// The report of a failed assertion (DPC++'s fallback format), with its newline.
fn message(
    expr: &str,
    file: &str,
    line: i32,
    func: &str,
    global_id: [u64; 3],
    local_id: [u64; 3],
) -> String {
    let [g0, g1, g2] = global_id;
    let [l0, l1, l2] = local_id;
    format!(
        "{file}:{line}: {func}: global id: [{g0}, {g1}, {g2}], local id: [{l0}, {l1}, {l2}] \
         Assertion `{expr}` failed.\n"
    )
}

/// `__devicelib_assert_fail(expr, file, line, func, gid0, gid1, gid2, lid0, lid1, lid2)`:
/// prints the failed assertion to stderr, flushes it and aborts the process.
///
/// # Safety
/// `expr`, `file` and `func` are null or point to NUL-terminated strings (read up to
/// [`MAX_STRING_BYTES`]): the kernel's string constants, as the frontend's signature check
/// lets only pointers to bytes through.
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe extern "C" fn devicelib_assert_fail(
    expr: *const c_char,
    file: *const c_char,
    line: i32,
    func: *const c_char,
    gid0: u64,
    gid1: u64,
    gid2: u64,
    lid0: u64,
    lid1: u64,
    lid2: u64,
) {
    let _first = FAILING.lock().unwrap_or_else(|p| p.into_inner());
    // SAFETY: per this function's contract.
    let (expr, file, func) = unsafe { (c_string(expr), c_string(file), c_string(func)) };
    let text = message(
        &expr,
        &file,
        line,
        &func,
        [gid0, gid1, gid2],
        [lid0, lid1, lid2],
    );
    let mut stderr = std::io::stderr().lock();
    // Nothing is left to do about a stderr that cannot be written.
    let _ = stderr.write_all(text.as_bytes());
    let _ = stderr.flush();
    std::process::abort();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_message_has_dpcpp_fallback_form() {
        assert_eq!(
            message("x < n", "k.cpp", 12, "void k()", [37, 1, 2], [5, 1, 0]),
            "k.cpp:12: void k(): global id: [37, 1, 2], local id: [5, 1, 0] Assertion `x < n` failed.\n"
        );
    }

    #[test]
    fn strings_are_read_to_their_nul_or_a_bound() {
        // SAFETY: each pointer is null or a NUL-terminated buffer (or longer than the bound).
        unsafe {
            assert_eq!(c_string(c"i != 37".as_ptr()), "i != 37");
            assert_eq!(c_string(std::ptr::null()), "(null)");
            assert_eq!(c_string(c"caf\xc3\xa9 \xff".as_ptr()), "café \u{fffd}");
            let long = vec![b'a' as c_char; MAX_STRING_BYTES + 10];
            let cut = c_string(long.as_ptr());
            assert_eq!(cut.len(), MAX_STRING_BYTES + 3);
            assert!(cut.ends_with("a..."));
        }
    }
}
