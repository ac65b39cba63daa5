//! `cl_intel_bfloat16_conversions` through the loader: reported (1.0.0, with
//! `SPV_INTEL_bfloat16_conversion` and the `BFloat16ConversionINTEL` capability in the SPIR-V
//! queries), and its conversions checked bit for bit against host references computed
//! numerically (not by the encoding trick the driver uses):
//! - float → bfloat16 rounds to nearest, ties to even: every special (±0, subnormals, the
//!   smallest normal, ±infinity, quiet and signalling NaNs of both signs, ties both ways and
//!   the values just below and above them, the largest finite values rounding to infinity),
//!   every bfloat16 value with seven low halves (exact, just above, just below, the tie and
//!   its neighbours), and four million random bit patterns; a NaN becomes the quiet NaN with
//!   its sign and upper payload bits;
//! - bfloat16 → float is exact for all 65,536 encodings (NaN payloads kept);
//! - the vector forms (2, 3, 4, 8, 16) on the same inputs;
//! - programs from OpenCL C through the device's compiler (OpenCL C 1.2 and 3.0) and from the
//!   recipe's IL at both recipes; again with `FERROCL_FTZ=on` (the conversions do not flush)
//!   and with the wide backend.

mod common;

use common::*;
use opencl_sys::*;

const FILE: &str = "bfloat16_conversions";
const EXTENSION: &str = "cl_intel_bfloat16_conversions";

/// float → bfloat16 by its numeric definition: the nearest number with 8 significant bits
/// (quantum 2^(e-7) for a binade of exponent e, 2^-133 below the normal range, as f32), ties
/// to the even one; a result of 2^128 or more is infinity. A NaN becomes the quiet NaN with
/// its sign and its 7 upper payload bits (the quiet bit set).
fn to_bfloat16_reference(x: f32) -> u16 {
    let bits = x.to_bits();
    if x.is_nan() {
        return (bits >> 16) as u16 | 0x40;
    }
    if x.is_infinite() || x == 0.0 {
        return (bits >> 16) as u16;
    }
    let v = f64::from(x);
    let a = v.abs();
    // f32 subnormals are normal f64s: the exponent is the f64's.
    let e = ((a.to_bits() >> 52) & 0x7ff) as i32 - 1023;
    let quantum = 2f64.powi((e - 7).max(-133));
    let rounded = ((a / quantum).round_ties_even() * quantum).copysign(v);
    if rounded.abs() >= 2f64.powi(128) {
        return if v < 0.0 { 0xff80 } else { 0x7f80 };
    }
    let f = rounded as f32;
    assert_eq!(f64::from(f), rounded, "{x:e} rounds to a float");
    assert_eq!(f.to_bits() & 0xffff, 0, "{x:e}: 8 significant bits");
    (f.to_bits() >> 16) as u16
}

/// bfloat16 → float by its numeric definition (sign, 8-bit exponent biased by 127, 7-bit
/// fraction); a NaN keeps its payload in the upper half.
fn from_bfloat16_reference(b: u16) -> u32 {
    let negative = b & 0x8000 != 0;
    let exponent = i32::from((b >> 7) & 0xff);
    let fraction = f64::from(b & 0x7f);
    if exponent == 0xff {
        return if fraction == 0.0 {
            if negative {
                f32::NEG_INFINITY.to_bits()
            } else {
                f32::INFINITY.to_bits()
            }
        } else {
            u32::from(b) << 16
        };
    }
    let magnitude = if exponent == 0 {
        fraction * 2f64.powi(-133)
    } else {
        (128.0 + fraction) * 2f64.powi(exponent - 134)
    };
    let v = if negative { -magnitude } else { magnitude };
    (v as f32).to_bits()
}

/// Bit patterns with a known answer each: (float bits, bfloat16 bits).
const SPECIALS: [(u32, u16); 34] = [
    (0x0000_0000, 0x0000), // +0
    (0x8000_0000, 0x8000), // -0
    (0x0000_0001, 0x0000), // smallest subnormal: rounds to +0
    (0x8000_0001, 0x8000),
    (0x0000_8000, 0x0000), // subnormal tie, even below
    (0x0001_8000, 0x0002), // subnormal tie, odd below: up
    (0x0001_7fff, 0x0001), // just below a tie
    (0x0000_8001, 0x0001), // just above a tie
    (0x007f_ffff, 0x0080), // largest subnormal: rounds to the smallest normal
    (0x807f_ffff, 0x8080),
    (0x0080_0000, 0x0080), // smallest normal
    (0x3f80_0000, 0x3f80), // 1
    (0xbf80_0000, 0xbf80), // -1
    (0x3f80_8000, 0x3f80), // 1 + half a bfloat16 ulp: tie to even (down)
    (0x3f81_8000, 0x3f82), // tie with an odd neighbour below: up
    (0xbf81_8000, 0xbf82),
    (0x3f80_7fff, 0x3f80), // just below the tie
    (0x3f80_8001, 0x3f81), // just above the tie
    (0x3f81_7fff, 0x3f81),
    (0x3fff_8000, 0x4000), // a tie carrying into the exponent
    (0x7f7f_0000, 0x7f7f), // largest finite bfloat16
    (0x7f7f_7fff, 0x7f7f), // just below the tie above it
    (0x7f7f_8000, 0x7f80), // the tie: odd, up to infinity
    (0x7f7f_ffff, 0x7f80), // largest finite float: infinity
    (0xff7f_ffff, 0xff80),
    (0x7f80_0000, 0x7f80), // +infinity
    (0xff80_0000, 0xff80), // -infinity
    (0x7fc0_0000, 0x7fc0), // quiet NaN
    (0xffc0_0000, 0xffc0),
    (0x7f80_0001, 0x7fc0), // signalling NaN, payload in the lower half: quiet, not infinity
    (0xff80_0001, 0xffc0),
    (0x7fbf_ffff, 0x7fff), // signalling NaN with a full payload
    (0x7f81_0000, 0x7fc1), // signalling NaN, payload in the upper half: kept, quiet
    (0x7fff_ffff, 0x7fff),
];

/// The float inputs of the scalar checks: the specials, every bfloat16 with seven low halves,
/// and four million random patterns.
fn float_inputs() -> Vec<u32> {
    let mut inputs: Vec<u32> = SPECIALS.iter().map(|s| s.0).collect();
    inputs.extend(structured_inputs());
    let mut rng = Rng::new(0xbf16);
    inputs.extend((0..4_000_000).map(|_| rng.next_u32()));
    inputs
}

/// Every bfloat16 encoding with low halves exact, just above and below the bottom, the tie
/// and its neighbours, a quarter, and the top.
fn structured_inputs() -> Vec<u32> {
    let mut inputs = Vec::with_capacity(7 << 16);
    for high in 0..=u16::MAX {
        for low in [0x0000, 0x0001, 0x4000, 0x7fff, 0x8000, 0x8001, 0xffff] {
            inputs.push(u32::from(high) << 16 | low);
        }
    }
    inputs
}

/// Runs `kernel` on `input` (n elements of `width` components), one element per work-item.
fn run<I: Copy, O: Copy + Default>(
    env: &Env,
    program: &Program,
    kernel: &str,
    input: &[I],
    width: usize,
) -> Vec<O> {
    let k = check(cl(Kernel::create(program, kernel)), "clCreateKernel");
    let n = input.len() / width;
    let ib = env.buffer(&input[..n * width]);
    let ob = env.buffer_filled(n * width, O::default());
    arg_buf(&k, 0, &ib);
    arg_buf(&k, 1, &ob);
    env.run(&k, &[n], None, None);
    env.read(&ob, n * width)
}

/// Panics with the first mismatches of a conversion.
fn compare<I: std::fmt::LowerHex, O: PartialEq + std::fmt::LowerHex>(
    what: &str,
    inputs: &[I],
    got: &[O],
    want: impl Fn(usize) -> O,
) {
    let bad: Vec<String> = got
        .iter()
        .enumerate()
        .filter(|(i, g)| **g != want(*i))
        .take(8)
        .map(|(i, g)| format!("{:#x}: got {g:#x}, want {:#x}", inputs[i], want(i)))
        .collect();
    assert!(bad.is_empty(), "{what}: {}", bad.join("; "));
}

fn check_program(env: &Env, program: &Program, what: &str) {
    for &(bits, want) in &SPECIALS {
        assert_eq!(
            to_bfloat16_reference(f32::from_bits(bits)),
            want,
            "the reference for {bits:#x}"
        );
    }
    let inputs = float_inputs();
    let floats: Vec<f32> = inputs.iter().map(|&b| f32::from_bits(b)).collect();
    let got: Vec<u16> = run(env, program, "to_bf16", &floats, 1);
    compare(&format!("{what}: to_bf16"), &inputs, &got, |i| {
        to_bfloat16_reference(floats[i])
    });
    let all: Vec<u16> = (0..=u16::MAX).collect();
    let got: Vec<f32> = run(env, program, "from_bf16", &all, 1);
    let got: Vec<u32> = got.iter().map(|f| f.to_bits()).collect();
    compare(&format!("{what}: from_bf16"), &all, &got, |i| {
        from_bfloat16_reference(all[i])
    });
    let structured = structured_inputs();
    let floats: Vec<f32> = structured.iter().map(|&b| f32::from_bits(b)).collect();
    for n in [2, 3, 4, 8, 16] {
        let got: Vec<u16> = run(env, program, &format!("to_bf16_{n}"), &floats, n);
        compare(&format!("{what}: to_bf16_{n}"), &structured, &got, |i| {
            to_bfloat16_reference(floats[i])
        });
        let got: Vec<f32> = run(env, program, &format!("from_bf16_{n}"), &all, n);
        let got: Vec<u32> = got.iter().map(|f| f.to_bits()).collect();
        compare(&format!("{what}: from_bf16_{n}"), &all, &got, |i| {
            from_bfloat16_reference(all[i])
        });
    }
}

/// The programs to check: OpenCL C through the device's compiler, and the recipe's IL.
fn programs(env: &Env) -> Vec<(Program, String)> {
    let source = std::fs::read_to_string(kernel_source(FILE)).unwrap();
    let mut out = Vec::new();
    for std in ["-cl-std=CL1.2", "-cl-std=CL3.0"] {
        out.push((env.program_from_source(&source, std), std.to_owned()));
    }
    for opt in OPTS {
        out.push((env.program(FILE, opt), format!("IL {opt:?}")));
    }
    out
}

#[test]
fn the_extension_is_reported_with_its_spirv() {
    let env = Env::new();
    if env.other_icd {
        return;
    }
    assert!(env.has_extension(EXTENSION));
    let with_version = check(
        cl(env.device.extensions_with_version()),
        "CL_DEVICE_EXTENSIONS_WITH_VERSION",
    );
    let version = with_version.iter().find_map(|e| {
        let n: Vec<u8> = e.name.iter().take_while(|&&c| c != 0).copied().collect();
        (n == EXTENSION.as_bytes()).then_some(e.version)
    });
    assert_eq!(version, Some(1 << 22), "1.0.0");
    let id = env.device.id();
    let caps: Vec<u32> = opencl3::device::get_device_data(id, CL_DEVICE_SPIRV_CAPABILITIES_KHR)
        .expect("CL_DEVICE_SPIRV_CAPABILITIES_KHR")
        .chunks_exact(4)
        .map(|c| u32::from_ne_bytes(c.try_into().unwrap()))
        .collect();
    assert!(caps.contains(&6115), "BFloat16ConversionINTEL in {caps:?}");
    let extensions: Vec<String> =
        opencl3::device::get_device_data(id, CL_DEVICE_SPIRV_EXTENSIONS_KHR)
            .expect("CL_DEVICE_SPIRV_EXTENSIONS_KHR")
            .chunks_exact(std::mem::size_of::<usize>())
            .map(|c| {
                let p = usize::from_ne_bytes(c.try_into().unwrap()) as *const std::ffi::c_char;
                // SAFETY: the driver answers with pointers to strings it keeps for the process.
                unsafe { std::ffi::CStr::from_ptr(p) }
                    .to_string_lossy()
                    .into_owned()
            })
            .collect();
    assert!(
        extensions
            .iter()
            .any(|e| e == "SPV_INTEL_bfloat16_conversion"),
        "{extensions:?}"
    );
}

/// The recipe's module holds the two instructions (opcodes 6116 and 6117), not calls.
#[test]
fn the_module_uses_the_intel_instructions() {
    let env = Env::new();
    if env.other_icd {
        return;
    }
    for opt in OPTS {
        let il = spirv(FILE, opt);
        let words: Vec<u32> = il
            .chunks_exact(4)
            .map(|c| u32::from_le_bytes(c.try_into().unwrap()))
            .collect();
        let mut ops = Vec::new();
        let mut at = 5;
        while at < words.len() {
            ops.push(words[at] & 0xffff);
            at += (words[at] >> 16).max(1) as usize;
        }
        // Six kernels of each direction.
        for op in [6116, 6117] {
            let count = ops.iter().filter(|&&o| o == op).count();
            assert_eq!(count, 6, "{opt:?}: opcode {op}");
        }
    }
}

#[test]
fn conversions_against_the_host() {
    let env = Env::new();
    if !env.extension_or_skip(EXTENSION) {
        return;
    }
    for (program, what) in programs(&env) {
        check_program(&env, &program, &what);
    }
}

/// With single-precision denormals flushed, the conversions still take and give subnormals
/// (they convert encodings, no float arithmetic happens).
#[test]
fn conversions_do_not_flush_denormals() {
    if rerun_in_child(
        "conversions_do_not_flush_denormals",
        &[("FERROCL_FTZ", "on")],
    )
    .is_some()
    {
        return;
    }
    let env = Env::new();
    if env.other_icd {
        return;
    }
    let program = env.program(FILE, Opt::Optimised);
    check_program(&env, &program, "FERROCL_FTZ=on");
}

#[test]
fn conversions_with_the_wide_backend() {
    if rerun_in_child(
        "conversions_with_the_wide_backend",
        &[("FERROCL_BACKEND", "wide")],
    )
    .is_some()
    {
        return;
    }
    let env = Env::new();
    if env.other_icd {
        return;
    }
    let program = env.program(FILE, Opt::Optimised);
    check_program(&env, &program, "wide backend");
}
