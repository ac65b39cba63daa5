//! `ferrocl-cts convert`: conversions from every 32-bit source type (int, uint, float) to every
//! integer and floating-point destination (char … ulong, float, double) with every rounding
//! mode (default, _rte, _rtz, _rtp, _rtn) and, for integer destinations, with and without _sat,
//! through real kernels on the device, against exact host references. Sampled mode (special
//! values and random inputs) runs in CI; full mode goes through all 2^32 inputs of each source.
//!
//! Undefined results are not judged: a non-saturated float → integer conversion of NaN or of a
//! value outside the destination's range (OpenCL C 6.4.3.3). When the device flushes
//! single-precision denormals (no CL_FP_DENORM), a denormal float input may be read as a zero
//! of its sign, as the CTS conversions test allows.

use crate::cl;

/// Source types: (OpenCL C name, kind).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Source {
    Int,
    Uint,
    Float,
}

impl Source {
    pub const ALL: [Source; 3] = [Source::Int, Source::Uint, Source::Float];
    pub fn name(self) -> &'static str {
        match self {
            Source::Int => "int",
            Source::Uint => "uint",
            Source::Float => "float",
        }
    }
    pub fn by_name(n: &str) -> Option<Source> {
        Source::ALL.into_iter().find(|s| s.name() == n)
    }
}

/// Destination types: (name, bytes, integer range if an integer type).
#[derive(Clone, Copy, Debug)]
pub struct Dest {
    pub name: &'static str,
    pub bytes: usize,
    /// (min, max) for integer destinations; None for float and double.
    pub range: Option<(i128, i128)>,
}

pub const DESTS: [Dest; 10] = [
    Dest {
        name: "char",
        bytes: 1,
        range: Some((-128, 127)),
    },
    Dest {
        name: "uchar",
        bytes: 1,
        range: Some((0, 255)),
    },
    Dest {
        name: "short",
        bytes: 2,
        range: Some((-32768, 32767)),
    },
    Dest {
        name: "ushort",
        bytes: 2,
        range: Some((0, 65535)),
    },
    Dest {
        name: "int",
        bytes: 4,
        range: Some((i32::MIN as i128, i32::MAX as i128)),
    },
    Dest {
        name: "uint",
        bytes: 4,
        range: Some((0, u32::MAX as i128)),
    },
    Dest {
        name: "long",
        bytes: 8,
        range: Some((i64::MIN as i128, i64::MAX as i128)),
    },
    Dest {
        name: "ulong",
        bytes: 8,
        range: Some((0, u64::MAX as i128)),
    },
    Dest {
        name: "float",
        bytes: 4,
        range: None,
    },
    Dest {
        name: "double",
        bytes: 8,
        range: None,
    },
];

pub fn dest_by_name(n: &str) -> Option<Dest> {
    DESTS.into_iter().find(|d| d.name == n)
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Rounding {
    Default,
    Rte,
    Rtz,
    Rtp,
    Rtn,
}

pub const ROUNDINGS: [Rounding; 5] = [
    Rounding::Default,
    Rounding::Rte,
    Rounding::Rtz,
    Rounding::Rtp,
    Rounding::Rtn,
];

impl Rounding {
    fn suffix(self) -> &'static str {
        match self {
            Rounding::Default => "",
            Rounding::Rte => "_rte",
            Rounding::Rtz => "_rtz",
            Rounding::Rtp => "_rtp",
            Rounding::Rtn => "_rtn",
        }
    }
}

/// One conversion variant of a (source, destination) kernel: its output slot.
#[derive(Clone, Copy, Debug)]
pub struct Variant {
    pub rounding: Rounding,
    pub sat: bool,
}

impl Variant {
    pub fn function(self, dest: Dest) -> String {
        format!(
            "convert_{}{}{}",
            dest.name,
            if self.sat { "_sat" } else { "" },
            self.rounding.suffix()
        )
    }
}

pub fn variants(dest: Dest) -> Vec<Variant> {
    let sats: &[bool] = if dest.range.is_some() {
        &[false, true]
    } else {
        &[false]
    };
    sats.iter()
        .flat_map(|&sat| ROUNDINGS.map(|rounding| Variant { rounding, sat }))
        .collect()
}

/// The kernel: each work-item converts one input with every variant; output v of item i is
/// at `out[v * n + i]`.
pub fn kernel_source(src: Source, dest: Dest) -> String {
    let mut body = String::new();
    for (v, var) in variants(dest).iter().enumerate() {
        body.push_str(&format!(
            "    out[{v} * n + i] = {}(x);\n",
            var.function(dest)
        ));
    }
    format!(
        "#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n\
         kernel void cvt(global const {s} *in, global {d} *out) {{\n\
         \x20   size_t i = get_global_id(0), n = get_global_size(0);\n\
         \x20   {s} x = in[i];\n{body}}}\n",
        s = src.name(),
        d = dest.name
    )
}

/// The expected result as raw little-endian bits (integers sign-extended to i128 then
/// truncated to the destination's bytes; floats as their bit patterns), or None when the
/// result is undefined.
pub fn reference(src: Source, bits: u32, dest: Dest, var: Variant) -> Option<u64> {
    match src {
        Source::Int => from_integer(i128::from(bits as i32), dest, var),
        Source::Uint => from_integer(i128::from(bits), dest, var),
        Source::Float => from_float(f32::from_bits(bits), dest, var),
    }
}

fn truncate(v: i128, bytes: usize) -> u64 {
    let mask = if bytes == 8 {
        u64::MAX
    } else {
        (1u64 << (bytes * 8)) - 1
    };
    (v as u64) & mask
}

fn from_integer(v: i128, dest: Dest, var: Variant) -> Option<u64> {
    Some(match dest.range {
        Some((lo, hi)) => {
            let r = if var.sat { v.clamp(lo, hi) } else { v };
            truncate(r, dest.bytes)
        }
        None if dest.bytes == 8 => (v as f64).to_bits(), // every 32-bit integer is exact
        None => integer_to_f32(v, var.rounding).to_bits() as u64,
    })
}

/// An integer (|v| < 2^33) rounded to single precision in the given mode (default: to nearest
/// even, OpenCL C 6.4.3.2).
pub fn integer_to_f32(v: i128, mode: Rounding) -> f32 {
    let near = v as f32; // Rust rounds integer → float to nearest, ties to even
    let back = near as f64 as i128;
    if back == v {
        return near;
    }
    let (below, above) = if back > v {
        (near.next_down(), near)
    } else {
        (near, near.next_up())
    };
    match mode {
        Rounding::Default | Rounding::Rte => near,
        Rounding::Rtz => {
            if v < 0 {
                above
            } else {
                below
            }
        }
        Rounding::Rtp => above,
        Rounding::Rtn => below,
    }
}

fn from_float(x: f32, dest: Dest, var: Variant) -> Option<u64> {
    match dest.range {
        None if dest.bytes == 8 => Some(f64::from(x).to_bits()),
        None => Some(x.to_bits() as u64),
        Some((lo, hi)) => {
            if x.is_nan() {
                // _sat: NaN converts to 0; otherwise undefined.
                return var.sat.then_some(0);
            }
            let x = f64::from(x);
            // Float → integer defaults to round toward zero (OpenCL C 6.4.3.2).
            let r = match var.rounding {
                Rounding::Default | Rounding::Rtz => x.trunc(),
                Rounding::Rte => x.round_ties_even(),
                Rounding::Rtp => x.ceil(),
                Rounding::Rtn => x.floor(),
            };
            // f64 → i128 saturates at the i128 range (±inf included), far beyond any
            // destination's range.
            let r = r as i128;
            if var.sat {
                Some(truncate(r.clamp(lo, hi), dest.bytes))
            } else if (lo..=hi).contains(&r) {
                Some(truncate(r, dest.bytes))
            } else {
                None
            }
        }
    }
}

/// Whether `got` (raw bits of the destination) is an acceptable result for input `bits`.
pub fn accepts(src: Source, bits: u32, dest: Dest, var: Variant, got: u64, ftz: bool) -> bool {
    let matches = |input: u32| match reference(src, input, dest, var) {
        None => true,
        Some(want) => {
            want == got
                || (dest.range.is_none()
                    && is_nan_bits(want, dest.bytes)
                    && is_nan_bits(got, dest.bytes))
        }
    };
    if matches(bits) {
        return true;
    }
    // A flushed denormal input reads as a zero of its sign.
    let denormal = src == Source::Float && {
        let x = f32::from_bits(bits);
        x != 0.0 && x.abs() < f32::MIN_POSITIVE
    };
    ftz && denormal && matches(bits & 0x8000_0000)
}

fn is_nan_bits(v: u64, bytes: usize) -> bool {
    if bytes == 8 {
        f64::from_bits(v).is_nan()
    } else {
        f32::from_bits(v as u32).is_nan()
    }
}

/// Special inputs of a source type: zeros, extremes, integer and rounding boundaries.
pub fn special_inputs(src: Source) -> Vec<u32> {
    match src {
        Source::Int | Source::Uint => {
            let mut v: Vec<u32> = vec![0, 1, 2, 0x7f, 0x80, 0xff, 0x100, 0x7fff, 0x8000, 0xffff];
            v.extend([
                0x1_0000,
                0x7fff_ffff,
                0x8000_0000,
                0x8000_0001,
                u32::MAX,
                u32::MAX - 1,
            ]);
            // Integers around float's 24-bit precision, where rounding modes differ.
            for base in [1u32 << 24, 1 << 25, 1 << 31, u32::MAX - 200] {
                v.extend((0..8).map(|k| base.wrapping_add(k)));
            }
            let negatives: Vec<u32> = v.iter().map(|&x| x.wrapping_neg()).collect();
            v.extend(negatives);
            v
        }
        Source::Float => {
            let mut f: Vec<f32> = vec![
                0.0,
                0.5,
                1.0,
                1.5,
                2.5,
                127.5,
                128.0,
                255.5,
                256.0,
                32767.5,
                32768.0,
                65535.5,
                65536.0,
                2147483520.0, // largest float below 2^31
                2147483648.0,
                4294967040.0, // largest float below 2^32
                4294967296.0,
                9.223_371_5e18, // largest float below 2^63
                9.223_372e18,   // 2^63
                1.844_674_3e19, // 2^64
                f32::MAX,
                f32::MIN_POSITIVE,
                f32::from_bits(1),
                f32::from_bits(0x007f_ffff),
                f32::INFINITY,
                0.499_999_97,
                0.999_999_94,
            ];
            let negatives: Vec<f32> = f.iter().map(|x| -x).collect();
            f.extend(negatives);
            let mut v: Vec<u32> = f.iter().map(|x| x.to_bits()).collect();
            v.extend([0x7fc0_0000, 0xffc0_0000, 0x7f80_0001, 0x7fbf_ffff]); // NaNs
            v
        }
    }
}

/// Result of one (source, destination) pair.
pub struct PairResult {
    pub src: Source,
    pub dest: Dest,
    pub inputs: u64,
    pub judged: u64,
    pub failures: u64,
    /// The first few failures, as text.
    pub examples: Vec<String>,
}

/// Checks one (source, destination) pair on `inputs`, run in chunks through the device;
/// with `progress_total`, prints the inputs done so far to stderr after each chunk.
pub fn check_pair(
    dev: &cl::Device,
    src: Source,
    dest: Dest,
    inputs: &mut dyn Iterator<Item = Vec<u32>>,
    progress_total: Option<u64>,
) -> Result<PairResult, String> {
    let program = dev.program(&kernel_source(src, dest), "-cl-std=CL1.2")?;
    let vars = variants(dest);
    let mut result = PairResult {
        src,
        dest,
        inputs: 0,
        judged: 0,
        failures: 0,
        examples: Vec::new(),
    };
    for chunk in inputs {
        let n = chunk.len();
        if n == 0 {
            continue;
        }
        let input = dev.buffer(n * 4)?;
        input.write(&chunk)?;
        let output = dev.buffer(n * vars.len() * dest.bytes)?;
        program.run("cvt", &[&input, &output], n)?;
        let mut raw = vec![0u8; n * vars.len() * dest.bytes];
        output.read(&mut raw)?;
        for (v, &var) in vars.iter().enumerate() {
            for (i, &bits) in chunk.iter().enumerate() {
                let at = (v * n + i) * dest.bytes;
                let mut word = [0u8; 8];
                word[..dest.bytes].copy_from_slice(&raw[at..at + dest.bytes]);
                let got = u64::from_le_bytes(word);
                if reference(src, bits, dest, var).is_some() {
                    result.judged += 1;
                }
                if !accepts(src, bits, dest, var, got, dev.ftz_f32) {
                    result.failures += 1;
                    if result.examples.len() < 5 {
                        let want = reference(src, bits, dest, var)
                            .map_or_else(|| "undefined".to_string(), |w| format!("{w:#x}"));
                        let text = format!(
                            "{}({} {}) = {got:#x}, want {want}",
                            var.function(dest),
                            src.name(),
                            show_input(src, bits),
                        );
                        // Long runs report mismatches as they are found, not only at the end.
                        if progress_total.is_some() {
                            eprintln!("\nmismatch: {text}");
                        }
                        result.examples.push(text);
                    }
                }
            }
        }
        result.inputs += n as u64;
        if let Some(total) = progress_total {
            eprint!(
                "\r{:>5} -> {:<6} {:>10} / {total} inputs",
                src.name(),
                dest.name,
                result.inputs
            );
        }
    }
    if progress_total.is_some() {
        eprintln!();
    }
    Ok(result)
}

fn show_input(src: Source, bits: u32) -> String {
    match src {
        Source::Int => format!("{}", bits as i32),
        Source::Uint => format!("{bits}"),
        Source::Float => format!("{:e} ({bits:#010x})", f32::from_bits(bits)),
    }
}

/// Inputs of sampled mode: the special values, then `random` pseudo-random bit patterns
/// (xorshift, `seed`), in chunks of at most `chunk`.
pub fn sampled_inputs(
    src: Source,
    random: u64,
    seed: u64,
    chunk: usize,
) -> impl Iterator<Item = Vec<u32>> {
    let special = special_inputs(src);
    let mut state = seed | 1;
    let mut left = random;
    let mut first = Some(special);
    std::iter::from_fn(move || {
        if let Some(s) = first.take() {
            return Some(s);
        }
        if left == 0 {
            return None;
        }
        let n = left.min(chunk as u64);
        left -= n;
        Some(
            (0..n)
                .map(|_| {
                    state ^= state << 13;
                    state ^= state >> 7;
                    state ^= state << 17;
                    let bits = (state >> 16) as u32;
                    // Half of the float inputs near the integer destinations' ranges, with
                    // fractions (random bit patterns are mostly far outside them).
                    if src == Source::Float && state & 1 == 0 {
                        let shift = ((state >> 1) % 24) as i32 + ((state >> 8) & 1) as i32 * 8;
                        let scale = 2f32.powi(-shift);
                        ((bits as i32) as f32 * scale).to_bits()
                    } else {
                        bits
                    }
                })
                .collect(),
        )
    })
}

/// Every 32-bit pattern, in chunks of `chunk` (a power of two up to 2^32).
pub fn all_inputs(chunk: usize) -> impl Iterator<Item = Vec<u32>> {
    let chunk = chunk as u64;
    (0..(1u64 << 32).div_ceil(chunk)).map(move |c| {
        (c * chunk..((c + 1) * chunk).min(1 << 32))
            .map(|v| v as u32)
            .collect()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integer_to_float_rounding_modes() {
        let v = (1 << 24) + 1; // halfway between 2^24 and 2^24 + 2
        assert_eq!(integer_to_f32(v, Rounding::Rte), 16_777_216.0);
        assert_eq!(integer_to_f32(v, Rounding::Rtz), 16_777_216.0);
        assert_eq!(integer_to_f32(v, Rounding::Rtp), 16_777_218.0);
        assert_eq!(integer_to_f32(v, Rounding::Rtn), 16_777_216.0);
        assert_eq!(integer_to_f32(-v, Rounding::Rtz), -16_777_216.0);
        assert_eq!(integer_to_f32(-v, Rounding::Rtn), -16_777_218.0);
        assert_eq!(
            integer_to_f32(u32::MAX.into(), Rounding::Rtz),
            4_294_967_040.0
        );
        assert_eq!(
            integer_to_f32(u32::MAX.into(), Rounding::Rte),
            4_294_967_296.0
        );
    }

    #[test]
    fn float_to_integer_references() {
        let char_ = dest_by_name("char").unwrap();
        let sat = |rounding| Variant {
            rounding,
            sat: true,
        };
        let plain = |rounding| Variant {
            rounding,
            sat: false,
        };
        let f = |x: f32| x.to_bits();
        assert_eq!(
            reference(Source::Float, f(2.5), char_, plain(Rounding::Rte)),
            Some(2)
        );
        assert_eq!(
            reference(Source::Float, f(-2.5), char_, plain(Rounding::Default)),
            Some(0xfe)
        );
        assert_eq!(
            reference(Source::Float, f(-0.5), char_, plain(Rounding::Rtn)),
            Some(0xff)
        );
        assert_eq!(
            reference(Source::Float, f(300.0), char_, plain(Rounding::Rtz)),
            None
        );
        assert_eq!(
            reference(Source::Float, f(300.0), char_, sat(Rounding::Rtz)),
            Some(127)
        );
        assert_eq!(
            reference(Source::Float, f(f32::NAN), char_, sat(Rounding::Rte)),
            Some(0)
        );
        assert_eq!(
            reference(Source::Float, f(f32::NAN), char_, plain(Rounding::Rte)),
            None
        );
        assert_eq!(
            reference(
                Source::Float,
                f(f32::NEG_INFINITY),
                char_,
                sat(Rounding::Rtp)
            ),
            Some(0x80)
        );
        let uint = dest_by_name("uint").unwrap();
        assert_eq!(
            reference(Source::Int, (-1i32) as u32, uint, sat(Rounding::Rte)),
            Some(0)
        );
        assert_eq!(
            reference(Source::Int, (-1i32) as u32, uint, plain(Rounding::Rte)),
            Some(0xffff_ffff)
        );
    }
}
