//! Kernel printf through the loader. Output goes to the process's stdout, so each test runs its
//! body in a child process (this test binary again) and the parent compares the child's stdout
//! between two marker lines with the text expected: integers from Rust's formatting, floats
//! from the host C library's `snprintf` (OpenCL C printf is C99 printf per element).

mod common;

use std::ffi::{c_char, CString};
use std::process::Command;

use common::{arg, arg_buf, check, cl, Env, Opt};
use opencl3::types::cl_int;

const CHILD: &str = "FERROCL_PRINTF_TEST_CHILD";
const BEGIN: &str = "@@ printf output begins\n";
const END: &str = "@@ printf output ends\n";

/// Runs test `name` in a child process and returns what it printed between each [`BEGIN`] and
/// the following [`END`]; in the child returns `None` and the caller runs the body.
fn child_stdout(name: &str) -> Option<String> {
    if std::env::var(CHILD).as_deref() == Ok(name) {
        return None;
    }
    let exe = std::env::current_exe().expect("test binary path");
    let out = Command::new(exe)
        .args([name, "--exact", "--nocapture", "--test-threads=1"])
        .env(CHILD, name)
        .output()
        .expect("run the test binary as a child");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success() && stdout.contains("1 passed"),
        "child {name} failed\n--- stdout ---\n{stdout}\n--- stderr ---\n{stderr}"
    );
    let sections: Vec<&str> = stdout
        .split(BEGIN)
        .skip(1)
        .map(|s| s.split_once(END).expect("end marker").0)
        .collect();
    assert!(!sections.is_empty(), "no begin marker in\n{stdout}");
    Some(sections.concat())
}

/// Prints a marker line on stdout (Rust's stdout flushes at each newline).
fn marker(text: &str) {
    print!("{text}");
    use std::io::Write;
    std::io::stdout().flush().expect("flush stdout");
}

/// The host C library's `snprintf(fmt, v)` for one floating-point conversion.
fn c_float(fmt: &str, v: f64) -> String {
    let fmt = CString::new(fmt).expect("format");
    let mut buf = vec![0u8; 256];
    // SAFETY: `fmt` is one floating-point conversion, which takes a double; `buf` has 256
    // bytes and the result is shorter (checked below).
    let n = unsafe { libc::snprintf(buf.as_mut_ptr() as *mut c_char, buf.len(), fmt.as_ptr(), v) };
    assert!((0..256).contains(&n), "snprintf result {n}");
    buf.truncate(n as usize);
    String::from_utf8(buf).expect("ASCII")
}

fn c_floats(fmt: &str, vs: &[f64]) -> String {
    vs.iter()
        .map(|&v| c_float(fmt, v))
        .collect::<Vec<_>>()
        .join(",")
}

const N: [i64; 9] = [
    -5,
    250,
    -12345,
    54321,
    -2147483647,
    4_000_000_000,
    -9_000_000_000_000_000_000,
    18_000_000_000_000_000_000u64 as i64,
    42,
];
const F: [f32; 9] = [
    std::f32::consts::PI,
    1.5e-7,
    123456.79,
    0.1,
    -2.5e10,
    1e-3,
    f32::INFINITY,
    f32::NAN,
    0.0,
];
const D: [f64; 5] = [
    std::f64::consts::PI,
    6.02214076e23,
    1.0 / 3.0,
    2.5,
    -1234.56789,
];

fn expected_print_all() -> String {
    let (i, u, l, ul) = (N[4] as i32, N[5] as u32, N[6], N[7] as u64);
    let f: Vec<f64> = F.iter().map(|&x| f64::from(x)).collect();
    let mut s = format!(
        "hh -5 250 fa|h -12345 54321 D431|int {i} {i} {u} {u:o} {u:x} {u:X}|long {l} {ul} {ul:x}|c A*|s text abc ab    |%|\n"
    );
    s += &format!("flags {i}  42 00042 42   | 052 0x2a      042 {l}\n");
    s += &format!(
        "float {} {} {} {} {} {} {} {} {}\n",
        c_float("%f", f[0]),
        c_float("%.3e", f[1]),
        c_float("%g", f[2]),
        c_float("%a", f[3]),
        c_float("%A", f[3]),
        c_float("%E", f[1]),
        c_float("%G", f[4]),
        c_float("%F", f[5]),
        c_float("%10.2f", f[0]),
    );
    s += &format!(
        "double {} {} {} {} {}|\n",
        c_float("%.17g", D[0]),
        c_float("%e", D[1]),
        c_float("%a", D[2]),
        c_float("%.0f", D[3]),
        c_float("%-12.4f", D[4]),
    );
    s += "special inf -inf nan -0x0p+0\n";
    s += &format!(
        "vectors {i},2,-3,42|-5,100|54321,0,7|{ul:x},1|{}|{}|0xfa,0x1,0x2,0x3,0x4,0x5,0x6,0xff|{}\n",
        c_floats("%f", &f[..4]),
        c_floats("%f", &D[..2]),
        vec!["-5"; 16].join(","),
    );
    s += &format!(
        "{} {i},   +2 {}\n",
        c_floats("%.2a", &f[..4]),
        c_floats("%e", &f[..4])
    );
    s += "no arguments\n";
    s += "half 42.000000,0.500000,-2.000000,65504.000000 -2,65504\n";
    s
}

#[test]
fn prints_every_conversion() {
    let Some(out) = child_stdout("prints_every_conversion") else {
        let env = Env::new();
        for opt in [Opt::O0, Opt::Optimised] {
            let kernel = env.kernel("printf", opt, "print_all");
            let (n, f, d) = (env.buffer(&N), env.buffer(&F), env.buffer(&D));
            let ret = env.buffer_filled(9, 7 as cl_int);
            arg_buf(&kernel, 0, &n);
            arg_buf(&kernel, 1, &f);
            arg_buf(&kernel, 2, &d);
            arg_buf(&kernel, 3, &ret);
            marker(BEGIN);
            env.run(&kernel, &[1], None, None);
            marker(END);
            assert_eq!(env.read(&ret, 9), [0; 9], "printf results ({opt:?})");
        }
        return;
    };
    assert_eq!(out, expected_print_all().repeat(2));
}

#[test]
fn prints_pointers_as_the_host_does() {
    let Some(out) = child_stdout("prints_pointers_as_the_host_does") else {
        let env = Env::new();
        let kernel = env.kernel("printf", Opt::O0, "print_pointer");
        let where_ = env.buffer_filled(1, 0u64);
        arg_buf(&kernel, 0, &where_);
        marker(BEGIN);
        env.run(&kernel, &[1], None, None);
        let address = env.read(&where_, 1)[0];
        // What the host's %p makes of the address the kernel stored, for the parent to compare.
        let fmt = CString::new("%p").expect("format");
        let mut buf = [0u8; 64];
        // SAFETY: %p takes a pointer (only printed); the buffer has 64 bytes.
        let n = unsafe {
            libc::snprintf(
                buf.as_mut_ptr() as *mut c_char,
                buf.len(),
                fmt.as_ptr(),
                address as usize as *const libc::c_void,
            )
        };
        marker(&format!(
            "host {}\n",
            String::from_utf8_lossy(&buf[..n as usize])
        ));
        marker(END);
        return;
    };
    let (device, host) = out.split_once("host ").expect("two lines");
    assert!(device.starts_with("0x"), "{out}");
    assert_eq!(device, host, "{out}");
}

/// More records than CL_DEVICE_PRINTF_BUFFER_SIZE holds: the ones that fit are printed whole,
/// the others return -1 and print nothing.
#[test]
fn full_buffer_drops_records_and_returns_minus_one() {
    let Some(out) = child_stdout("full_buffer_drops_records_and_returns_minus_one") else {
        let env = Env::new();
        let size = check(cl(env.device.printf_buffer_size()), "PRINTF_BUFFER_SIZE");
        // Each record carries at least its two longs: more than the buffer can take.
        let items = size / 16 + 1000;
        let kernel = env.kernel("printf", Opt::Optimised, "print_many");
        let ret = env.buffer_filled(items, 7 as cl_int);
        arg_buf(&kernel, 0, &ret);
        marker(BEGIN);
        env.run(&kernel, &[items], None, None);
        let results = env.read(&ret, items);
        for (id, r) in results.iter().enumerate() {
            if *r == 0 {
                marker(&format!("ok {id}\n"));
            } else {
                assert_eq!(*r, -1, "printf result of item {id}");
            }
        }
        marker(END);
        return;
    };
    let mut printed = Vec::new();
    let mut succeeded = Vec::new();
    for line in out.lines() {
        if let Some(id) = line.strip_prefix("ok ") {
            succeeded.push(id.parse::<i64>().expect("id"));
        } else {
            let (id, triple) = line.split_once(' ').expect("two numbers");
            let id: i64 = id.parse().expect("id");
            assert_eq!(triple.parse::<i64>().expect("3 * id"), 3 * id, "{line}");
            printed.push(id);
        }
    }
    printed.sort_unstable();
    assert!(!succeeded.is_empty(), "no record fitted");
    assert!(
        succeeded.len() < 1 << 20,
        "every record fitted: the buffer was not filled"
    );
    assert_eq!(
        printed, succeeded,
        "the printed records are those that returned 0"
    );
}

/// A command's output is out when its event completes, before the next command's.
#[test]
fn output_follows_command_order() {
    let Some(out) = child_stdout("output_follows_command_order") else {
        let env = Env::new();
        let kernel = env.kernel("printf", Opt::O0, "print_tagged");
        marker(BEGIN);
        for tag in 0..3 {
            arg(&kernel, 0, &(tag as cl_int));
            // SAFETY: the global size array outlives the call; the argument is set.
            let event = unsafe {
                env.queue.enqueue_nd_range_kernel(
                    kernel.get(),
                    1,
                    std::ptr::null(),
                    [4usize].as_ptr(),
                    std::ptr::null(),
                    &[],
                )
            };
            let event = check(cl(event), "clEnqueueNDRangeKernel");
            if tag == 1 {
                check(cl(event.wait()), "clWaitForEvents");
                marker("event 1 complete\n");
            }
        }
        check(cl(env.queue.finish()), "clFinish");
        marker(END);
        return;
    };
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 13, "{out}");
    for (k, block) in [&lines[0..4], &lines[4..8], &lines[9..13]]
        .iter()
        .enumerate()
    {
        let mut items: Vec<&str> = block.to_vec();
        items.sort_unstable();
        let want: Vec<String> = (0..4).map(|i| format!("command {k} item {i}")).collect();
        assert_eq!(items, want, "{out}");
    }
    assert_eq!(lines[8], "event 1 complete", "{out}");
}

/// OpenCL C 3.1's `z` (`size_t`) and `t` (`ptrdiff_t`) length modifiers (OpenCL C 3.1
/// §6.15.14.2, env 3.1 §2.11) with every integer conversion, flags, widths, precisions and
/// 64-bit values; both recipes.
#[test]
fn prints_size_t_and_ptrdiff_t() {
    const Z: u64 = 10_000_000_000;
    const T: i64 = -12_345_678_901;
    let Some(out) = child_stdout("prints_size_t_and_ptrdiff_t") else {
        let env = Env::new();
        let source = r#"kernel void zt(global const ulong *v) {
            size_t z = (size_t)v[0], g = get_global_id(0);
            ptrdiff_t t = (ptrdiff_t)v[1];
            printf("z %zu %zd %zx %#zX %#zo %5zu|%-15zu|%015zd|%.3zi\n", z, z, z, z, z, g, z, z, g);
            printf("t %td %ti %+td %tu %tx %-+7td|%08tX\n", t, t, t, t, t, (ptrdiff_t)-3, t);
        }"#;
        for options in ["-cl-std=CL3.1", "-cl-std=CL3.1 -cl-opt-disable"] {
            let program = env.program_from_source(source, options);
            let kernel = opencl3::kernel::Kernel::create(&program, "zt").expect("clCreateKernel");
            let v = env.buffer(&[Z, T as u64]);
            arg_buf(&kernel, 0, &v);
            marker(BEGIN);
            env.run(&kernel, &[1], None, None);
            marker(END);
        }
        return;
    };
    let t = T as u64;
    let expected = format!(
        "z {Z} {Z} {Z:x} 0X{Z:X} 0{Z:o}     0|{Z:<15}|{Z:015}|000\n\
         t {T} {T} {T} {t} {t:x} -3     |{t:08X}\n"
    );
    assert_eq!(out, expected.repeat(2));
}

/// `z` and `t` take a scalar integer conversion: with a vector or a floating-point conversion
/// the build fails, naming the modifier.
#[test]
fn size_t_and_ptrdiff_t_modifiers_take_scalar_integers() {
    let env = Env::new();
    if env.other_icd {
        return;
    }
    for (call, modifier) in [
        ("printf(\"%zf\\n\", 1.0f);", 'z'),
        ("printf(\"%v2td\\n\", (long2)(1, 2));", 't'),
    ] {
        let source = format!("kernel void k(void) {{ {call} }}");
        let Err(log) = env.try_program_from_source(&source, "-cl-std=CL3.1") else {
            panic!("{call} built");
        };
        assert!(
            log.contains(&format!("length modifier '{modifier}'")),
            "{call}: {log}"
        );
    }
}
