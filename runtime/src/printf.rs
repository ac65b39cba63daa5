//! Kernel printf output: the buffer of one NDRange command whose kernel prints (layout in
//! codegen's abi.rs), and its records turned into text after the launch. Each conversion is
//! formatted by the C library's `snprintf` with the C type the format names (OpenCL C printf is
//! C99 printf per element), and the text goes to the process's C `stdout` — the stream the
//! application's own `printf` uses, so their order is kept — then `stdout` is flushed.

use std::ffi::{c_char, c_int, c_long, c_void, CString};

use ferrocl_codegen::{PRINTF_BUFFER_HEADER, PRINTF_RECORD_HEADER};
use ferrocl_frontend::{PrintfArg, PrintfConversion, PrintfFormat, PrintfPiece};

extern "C" {
    /// glibc's `stdout` stream.
    static stdout: *mut libc::FILE;
}

/// One launch's printf buffer: zeroed, 8-byte aligned, header then `capacity` record bytes.
pub struct PrintfBuffer {
    words: Vec<u64>,
}

impl PrintfBuffer {
    pub fn new(capacity: usize) -> Self {
        let mut words = vec![0u64; (PRINTF_BUFFER_HEADER + capacity).div_ceil(8)];
        words[1] = capacity as u64;
        PrintfBuffer { words }
    }

    /// For `GroupInfo::printf_buffer`. JIT code writes through it while the launch runs; the
    /// buffer is not touched from Rust until [`Self::render`], after the launch.
    pub fn address(&mut self) -> u64 {
        self.words.as_mut_ptr() as u64
    }

    fn bytes(&self) -> &[u8] {
        // SAFETY: u64 storage viewed as bytes: same memory, u8 has no alignment requirement.
        unsafe { std::slice::from_raw_parts(self.words.as_ptr().cast(), self.words.len() * 8) }
    }

    /// The text of the records written, in record order. Records are checked against their
    /// format; a record that does not match ends the output (it cannot come from JIT code).
    pub fn render(&self, formats: &[PrintfFormat]) -> Vec<u8> {
        let capacity = self.words[1] as usize;
        let used = (self.words[0] as usize).min(capacity);
        let records = &self.bytes()[PRINTF_BUFFER_HEADER..PRINTF_BUFFER_HEADER + used];
        let mut out = Vec::new();
        let mut pos = 0;
        while let Some(header) = records.get(pos..pos + PRINTF_RECORD_HEADER) {
            let len = u32::from_ne_bytes(header[..4].try_into().expect("4 bytes")) as usize;
            let index = u32::from_ne_bytes(header[4..].try_into().expect("4 bytes")) as usize;
            let Some(format) = formats.get(index) else {
                break;
            };
            let args_end = pos + PRINTF_RECORD_HEADER + format.args_bytes() as usize;
            if len < PRINTF_RECORD_HEADER || args_end > pos + len || pos + len > used {
                break;
            }
            render_record(
                format,
                &records[pos + PRINTF_RECORD_HEADER..args_end],
                &mut out,
            );
            pos += len;
        }
        out
    }
}

/// Writes `text` to the C `stdout` and flushes it.
pub fn write_stdout(text: &[u8]) {
    if text.is_empty() {
        return;
    }
    // SAFETY: `stdout` is glibc's initialised stream (stdio locks it per call); `text` is
    // valid for `text.len()` bytes.
    unsafe {
        libc::fwrite(text.as_ptr().cast(), 1, text.len(), stdout);
        libc::fflush(stdout);
    }
}

fn render_record(format: &PrintfFormat, mut args: &[u8], out: &mut Vec<u8>) {
    for piece in &format.pieces {
        match piece {
            PrintfPiece::Text(text) => out.extend_from_slice(text),
            PrintfPiece::Conversion(c) => {
                for i in 0..c.count {
                    if i > 0 {
                        out.push(b',');
                    }
                    let (element, rest) = args.split_at(c.arg.bytes() as usize);
                    args = rest;
                    format_element(c, element, out);
                }
            }
        }
    }
}

// `%zd` and `%td` values are passed to snprintf as longs (see `format_element`).
const _: () = assert!(std::mem::size_of::<c_long>() == std::mem::size_of::<usize>());

/// `element`'s bytes (as many as `c.arg.bytes()`) widened to 8, little-endian.
fn widen(element: &[u8], signed: bool) -> u64 {
    let mut bytes = [0u8; 8];
    bytes[..element.len()].copy_from_slice(element);
    let v = u64::from_le_bytes(bytes);
    let unused = 64 - 8 * element.len() as u32;
    if signed && unused > 0 && unused < 64 {
        (((v << unused) as i64) >> unused) as u64
    } else {
        v
    }
}

fn format_element(c: &PrintfConversion, element: &[u8], out: &mut Vec<u8>) {
    // The directive comes from a NUL-terminated format string: it contains no NUL.
    let Ok(directive) = CString::new(c.directive.as_str()) else {
        return;
    };
    let fmt = directive.as_ptr();
    // Every snprintf below: `fmt` is one C conversion directive built by the frontend whose
    // length modifier and conversion take exactly the C type passed after it, and `buf` has
    // `len` writable bytes (see `c_format`).
    match &c.arg {
        PrintfArg::Int { signed, long, .. } => {
            let v = widen(element, *signed);
            if *long {
                c_format(out, |buf, len| {
                    // SAFETY: `%…l…` takes a `long`, `%…z…` and `%…t…` a `size_t` or
                    // `ptrdiff_t`, of long's size and registers on this LP64 host; `buf` has
                    // `len` bytes.
                    unsafe { libc::snprintf(buf, len, fmt, v as c_long) }
                });
            } else {
                c_format(out, |buf, len| {
                    // SAFETY: `%c` and the `hh`/`h`/no-modifier integer conversions take an
                    // `int`; `buf` has `len` bytes.
                    unsafe { libc::snprintf(buf, len, fmt, v as c_int) }
                });
            }
        }
        PrintfArg::Float { .. } => {
            let v = if element.len() == 4 {
                f64::from(f32::from_bits(widen(element, false) as u32))
            } else {
                f64::from_bits(widen(element, false))
            };
            c_format(out, |buf, len| {
                // SAFETY: the floating-point conversions take a `double`; `buf` has `len` bytes.
                unsafe { libc::snprintf(buf, len, fmt, v) }
            });
        }
        PrintfArg::Pointer => {
            let v = widen(element, false) as usize as *const c_void;
            c_format(out, |buf, len| {
                // SAFETY: `%p` takes a `void *` (only printed); `buf` has `len` bytes.
                unsafe { libc::snprintf(buf, len, fmt, v) }
            });
        }
        PrintfArg::Str(s) => {
            let Ok(s) = CString::new(s.as_slice()) else {
                return;
            };
            let p = s.as_ptr();
            c_format(out, |buf, len| {
                // SAFETY: `%s` takes a NUL-terminated `char *`, `s` outlives the call; `buf`
                // has `len` bytes.
                unsafe { libc::snprintf(buf, len, fmt, p) }
            });
        }
    }
}

/// Runs `snprintf` (as `call(buffer, size)`) and appends its output, growing the buffer once
/// when the first one was too small. An encoding error (negative result) appends nothing.
fn c_format(out: &mut Vec<u8>, call: impl Fn(*mut c_char, usize) -> c_int) {
    let mut buf = vec![0u8; 128];
    let Ok(n) = usize::try_from(call(buf.as_mut_ptr().cast(), buf.len())) else {
        return;
    };
    if n >= buf.len() {
        buf = vec![0u8; n + 1];
        if call(buf.as_mut_ptr().cast(), buf.len()) < 0 {
            return;
        }
    }
    out.extend_from_slice(&buf[..n]);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn conv(directive: &str, arg: PrintfArg, count: u32) -> PrintfPiece {
        PrintfPiece::Conversion(PrintfConversion {
            directive: directive.into(),
            arg,
            count,
        })
    }

    /// Writes records as JIT code does and checks the text and where the output stops.
    #[test]
    fn records_render_in_order_until_the_first_unwritten_one() {
        let format = PrintfFormat {
            pieces: vec![
                PrintfPiece::Text(b"x=".to_vec()),
                conv(
                    "%hhd",
                    PrintfArg::Int {
                        bytes: 1,
                        signed: true,
                        long: false,
                    },
                    2,
                ),
                PrintfPiece::Text(b" ".to_vec()),
                conv("%.2f", PrintfArg::Float { bytes: 4 }, 1),
                conv("%s", PrintfArg::Str(b"!".to_vec()), 1),
            ],
        };
        assert_eq!(format.args_bytes(), 6);
        let mut buffer = PrintfBuffer::new(64);
        let mut write = |at: usize, a: i8, b: i8, f: f32| {
            let mut rec = vec![16u8, 0, 0, 0, 0, 0, 0, 0, a as u8, b as u8];
            rec.extend_from_slice(&f.to_le_bytes());
            // SAFETY: the buffer's own 80 bytes of storage, no other reference to them lives.
            let bytes = unsafe {
                std::slice::from_raw_parts_mut(buffer.words.as_mut_ptr().cast::<u8>(), 80)
            };
            bytes[PRINTF_BUFFER_HEADER + at..][..rec.len()].copy_from_slice(&rec);
        };
        write(0, -1, 7, 1.5);
        write(16, 127, -128, -0.125);
        // Allocated 48 bytes: a third record was reserved but never written (it did not fit).
        buffer.words[0] = 48;
        let text = buffer.render(&[format]);
        assert_eq!(
            String::from_utf8(text).unwrap(),
            "x=-1,7 1.50!x=127,-128 -0.12!"
        );
    }
}
