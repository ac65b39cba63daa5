//! The kernels of issue #20, which show known gaps in kernel speed: an unrolled MD5 on `uint4`
//! lanes, clpeak-like peak arithmetic on float4/float16/double16/uint16/half8, vector copies,
//! and host commands on 1 GiB buffers (fill, copy, create + fill); their sizes, inputs, exact
//! host references and checks.

use std::ops::Range;

use crate::check::{bytes_of, equal_u32, u32s};
use crate::kernels::{
    input, output, par_rows, size_label, Arg, BufSpec, Case, Class, Extra, Op, Rng, Spec, MI, PLAIN,
};

/// A peak kernel: `peak.cl` after the definitions of its element type and step.
macro_rules! peak {
    ($prefix:literal) => {
        concat!($prefix, include_str!("../kernels/peak.cl"))
    };
}

pub fn specs() -> Vec<Spec> {
    let int = Extra {
        int_ops: true,
        ..PLAIN
    };
    let host = |op| Extra { op, ..PLAIN };
    vec![
        Spec {
            name: "md5x4",
            entry: "md5x4",
            source: include_str!("../kernels/md5x4.cl"),
            class: Class::Compute,
            make: md5x4,
            extra: int,
        },
        Spec {
            name: "peak_float4",
            entry: "peak",
            source: peak!("#define T float4\n#define MAD(x, a, b) fma(x, a, b)\n"),
            class: Class::Compute,
            make: |q| peak_case::<f32>(q, 4, 16 * 1024, 512),
            extra: PLAIN,
        },
        Spec {
            name: "peak_float16",
            entry: "peak",
            source: peak!("#define T float16\n#define MAD(x, a, b) fma(x, a, b)\n"),
            class: Class::Compute,
            make: |q| peak_case::<f32>(q, 16, 16 * 1024, 128),
            extra: PLAIN,
        },
        Spec {
            name: "peak_double16",
            entry: "peak",
            source: peak!(
                "#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n#define T double16\n#define MAD(x, a, b) fma(x, a, b)\n"
            ),
            class: Class::Compute,
            make: |q| peak_case::<f64>(q, 16, 8 * 1024, 128),
            extra: Extra {
                requires: Some("cl_khr_fp64"),
                ..PLAIN
            },
        },
        Spec {
            name: "peak_int16",
            entry: "peak",
            source: peak!("#define T uint16\n#define MAD(x, a, b) ((x) * (a) + (b))\n"),
            class: Class::Compute,
            make: |q| peak_case::<u32>(q, 16, 32 * 1024, 256),
            extra: int,
        },
        Spec {
            name: "peak_half8",
            entry: "peak",
            source: peak!(
                "#pragma OPENCL EXTENSION cl_khr_fp16 : enable\n#pragma OPENCL FP_CONTRACT OFF\n#define T half8\n#define MAD(x, a, b) ((x) * (a) + (b))\n"
            ),
            class: Class::Compute,
            make: |q| peak_case::<H16>(q, 8, 4 * 1024, 32),
            extra: Extra {
                requires: Some("cl_khr_fp16"),
                ..PLAIN
            },
        },
        Spec {
            name: "copy_float8",
            entry: "copy_vec",
            source: concat!("#define T float8\n", include_str!("../kernels/copy_vec.cl")),
            class: Class::Memory,
            make: |q| copy_vec(q, 8),
            extra: PLAIN,
        },
        Spec {
            name: "copy_float16",
            entry: "copy_vec",
            source: concat!("#define T float16\n", include_str!("../kernels/copy_vec.cl")),
            class: Class::Memory,
            make: |q| copy_vec(q, 16),
            extra: PLAIN,
        },
        Spec {
            name: "fill_1g",
            entry: "",
            source: "",
            class: Class::Memory,
            make: |q| host_case(q, Op::Fill(PATTERN)),
            extra: host(Op::Fill(PATTERN)),
        },
        Spec {
            name: "copy_1g",
            entry: "",
            source: "",
            class: Class::Memory,
            make: |q| host_case(q, Op::Copy),
            extra: host(Op::Copy),
        },
        Spec {
            name: "create_fill_1g",
            entry: "",
            source: "",
            class: Class::Memory,
            make: |q| host_case(q, Op::CreateFill(PATTERN)),
            extra: host(Op::CreateFill(PATTERN)),
        },
    ]
}

/// MD5's per-step additive constants: floor(|sin(i + 1)| · 2³²), computed here rather than
/// copied, so a mistyped constant in `md5x4.cl` shows as a wrong result.
pub(crate) fn md5_k() -> [u32; 64] {
    std::array::from_fn(|i| ((i as f64 + 1.0).sin().abs() * 4_294_967_296.0) as u32)
}

pub(crate) const MD5_INIT: [u32; 4] = [0x6745_2301, 0xEFCD_AB89, 0x98BA_DCFE, 0x1032_5476];

/// The MD5 compression of one 16-word block into the state `init`.
pub(crate) fn md5_block(init: [u32; 4], m: &[u32; 16], k: &[u32; 64]) -> [u32; 4] {
    const S: [[u32; 4]; 4] = [
        [7, 12, 17, 22],
        [5, 9, 14, 20],
        [4, 11, 16, 23],
        [6, 10, 15, 21],
    ];
    let [mut a, mut b, mut c, mut d] = init;
    for i in 0..64 {
        let (f, g) = match i / 16 {
            0 => ((b & c) | (!b & d), i),
            1 => ((b & d) | (c & !d), (5 * i + 1) % 16),
            2 => (b ^ c ^ d, (3 * i + 5) % 16),
            _ => (c ^ (b | !d), (7 * i) % 16),
        };
        let t = a
            .wrapping_add(f)
            .wrapping_add(m[g])
            .wrapping_add(k[i])
            .rotate_left(S[i / 16][i % 4]);
        (a, b, c, d) = (d, b.wrapping_add(t), b, c);
    }
    [
        a.wrapping_add(init[0]),
        b.wrapping_add(init[1]),
        c.wrapping_add(init[2]),
        d.wrapping_add(init[3]),
    ]
}

/// Message block `block` (0 or 1) that `md5x4.cl` builds for candidate `id`: its W(j).
fn md5_message(id: u32, salt: u32, block: u32) -> [u32; 16] {
    std::array::from_fn(|j| {
        let j = 16 * block + j as u32;
        id.rotate_left(j) ^ salt.wrapping_add(j.wrapping_mul(0x9E37_79B9))
    })
}

fn md5x4(quick: bool) -> Case {
    let n = if quick { 16 * 1024 } else { 256 * 1024 };
    let salt = 0x2024_0020u32;
    let k = md5_k();
    // out[4g + w] holds digest word w of the item's 4 candidates, one per lane
    let want = par_rows(n, |g| {
        let d: Vec<[u32; 4]> = (0..4)
            .map(|lane| {
                let id = 4 * g as u32 + lane;
                let first = md5_block(MD5_INIT, &md5_message(id, salt, 0), &k);
                md5_block(first, &md5_message(id, salt, 1), &k)
            })
            .collect();
        (0..16).map(|i| d[i % 4][i / 4]).collect()
    });
    Case {
        size: format!("n={} x4, 2 blocks", size_label(n)),
        bufs: vec![output(64 * n)],
        args: vec![Arg::Buf(0), Arg::U32(salt)],
        global: vec![n],
        local: None,
        output: 0,
        check: Box::new(move |out, _| equal_u32(&u32s(out), &want)),
        bytes: (64 * n) as f64,
        // nominal: 8 integer operations per step and lane, 2 × 64 steps, 4 lanes
        flops: (n * 4 * 2 * 64 * 8) as f64,
        launches: 1,
    }
}

/// Which input of a peak chain a value is.
#[derive(Clone, Copy)]
enum Role {
    A,
    B,
    X,
}

/// An element type of the peak kernels with the device's arithmetic, bit for bit.
trait Lane: Copy + PartialEq + std::fmt::Debug + Send + Sync + 'static {
    const BYTES: usize;
    /// MAD(x, a, b) of `peak.cl`.
    fn mad(x: Self, a: Self, b: Self) -> Self;
    fn add(x: Self, y: Self) -> Self;
    fn put(self, out: &mut Vec<u8>);
    fn get(bytes: &[u8]) -> Self;
    fn gen(rng: &mut Rng, role: Role) -> Self;
}

/// Float inputs keep every value of the chains positive and bounded (x → b / (1 − a) ≤ 5,
/// never below b ≥ 0.25): no overflow, no subnormals, whatever a platform does with those.
fn positive(rng: &mut Rng, role: Role) -> f32 {
    match role {
        Role::A => rng.f32(0.5, 0.9),
        Role::B => rng.f32(0.25, 0.5),
        Role::X => rng.f32(0.5, 2.0),
    }
}

impl Lane for f32 {
    const BYTES: usize = 4;
    fn mad(x: f32, a: f32, b: f32) -> f32 {
        x.mul_add(a, b)
    }
    fn add(x: f32, y: f32) -> f32 {
        x + y
    }
    fn put(self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.to_le_bytes());
    }
    fn get(b: &[u8]) -> f32 {
        f32::from_le_bytes(b.try_into().expect("4 bytes"))
    }
    fn gen(rng: &mut Rng, role: Role) -> f32 {
        positive(rng, role)
    }
}

impl Lane for f64 {
    const BYTES: usize = 8;
    fn mad(x: f64, a: f64, b: f64) -> f64 {
        x.mul_add(a, b)
    }
    fn add(x: f64, y: f64) -> f64 {
        x + y
    }
    fn put(self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.to_le_bytes());
    }
    fn get(b: &[u8]) -> f64 {
        f64::from_le_bytes(b.try_into().expect("8 bytes"))
    }
    fn gen(rng: &mut Rng, role: Role) -> f64 {
        // all 53 bits used: the products are not exact in f32
        let low = (rng.next_u64() >> 40) as f64 / (1u64 << 24) as f64 / (1u64 << 24) as f64;
        f64::from(positive(rng, role)) + low / 64.0
    }
}

impl Lane for u32 {
    const BYTES: usize = 4;
    fn mad(x: u32, a: u32, b: u32) -> u32 {
        x.wrapping_mul(a).wrapping_add(b)
    }
    fn add(x: u32, y: u32) -> u32 {
        x.wrapping_add(y)
    }
    fn put(self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.to_le_bytes());
    }
    fn get(b: &[u8]) -> u32 {
        u32::from_le_bytes(b.try_into().expect("4 bytes"))
    }
    fn gen(rng: &mut Rng, role: Role) -> u32 {
        match role {
            // odd: the chains do not collapse to a constant
            Role::A => rng.u32() | 1,
            _ => rng.u32(),
        }
    }
}

/// An IEEE binary16 value by its bits. The host computes each half operation in f32 and
/// rounds once to half: exact for the product of two halves (22 significant bits), and for
/// a sum the double rounding is innocuous because 24 ≥ 2·11 + 2.
#[derive(Clone, Copy, PartialEq, Debug)]
struct H16(u16);

impl H16 {
    fn f32(self) -> f32 {
        f16_to_f32(self.0)
    }
    fn of(x: f32) -> H16 {
        H16(f32_to_f16(x))
    }
}

impl Lane for H16 {
    const BYTES: usize = 2;
    fn mad(x: H16, a: H16, b: H16) -> H16 {
        // FP_CONTRACT OFF: the product is rounded to half before the addition
        let p = H16::of(x.f32() * a.f32());
        H16::of(p.f32() + b.f32())
    }
    fn add(x: H16, y: H16) -> H16 {
        H16::of(x.f32() + y.f32())
    }
    fn put(self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.0.to_le_bytes());
    }
    fn get(b: &[u8]) -> H16 {
        H16(u16::from_le_bytes(b.try_into().expect("2 bytes")))
    }
    fn gen(rng: &mut Rng, role: Role) -> H16 {
        H16::of(positive(rng, role))
    }
}

fn f16_to_f32(h: u16) -> f32 {
    let sign = if h & 0x8000 != 0 { -1.0f32 } else { 1.0 };
    let exp = u32::from((h >> 10) & 0x1F);
    let man = u32::from(h & 0x3FF);
    match exp {
        // zero and subnormals: man · 2⁻²⁴, exact in f32
        0 => sign * man as f32 / (1u32 << 24) as f32,
        0x1F => f32::from_bits((u32::from(h & 0x8000) << 16) | 0x7F80_0000 | (man << 13)),
        _ => f32::from_bits((u32::from(h & 0x8000) << 16) | ((exp + 112) << 23) | (man << 13)),
    }
}

/// f32 → binary16, rounding to nearest even (overflow to infinity, subnormals kept).
fn f32_to_f16(x: f32) -> u16 {
    let bits = x.to_bits();
    let sign = ((bits >> 16) & 0x8000) as u16;
    let exp = ((bits >> 23) & 0xFF) as i32;
    let man = bits & 0x7F_FFFF;
    if exp == 0xFF {
        return sign | 0x7C00 | if man != 0 { 0x200 } else { 0 };
    }
    let round = |kept: u32, rest: u32, half: u32| -> u32 {
        if rest > half || (rest == half && kept & 1 == 1) {
            kept + 1
        } else {
            kept
        }
    };
    let e = exp - 127 + 15;
    if e >= 0x1F {
        return sign | 0x7C00;
    }
    if e <= 0 {
        if e < -10 {
            return sign;
        }
        // a half subnormal: the 24-bit significand in units of 2⁻²⁴
        let m = man | 0x80_0000;
        let shift = (14 - e) as u32;
        let kept = round(m >> shift, m & ((1 << shift) - 1), 1 << (shift - 1));
        return sign | kept as u16;
    }
    // a carry out of the mantissa steps the exponent (to infinity past the largest)
    sign | round(((e as u32) << 10) | (man >> 13), man & 0x1FFF, 0x1000) as u16
}

/// One chain's value in every lane after `steps` MAD steps, summed as `peak.cl` does.
fn peak_ref<L: Lane>(init: &[L], width: usize, steps: usize) -> Vec<L> {
    let lane = |v: usize, l: usize| init[v * width + l];
    (0..64)
        .flat_map(|class| {
            (0..width).map(move |l| {
                let (a, b) = (lane(0, l), lane(1, l));
                let x: Vec<L> = (0..8)
                    .map(|k| {
                        let mut x = lane(2 + 8 * class + k, l);
                        for _ in 0..steps {
                            x = L::mad(x, a, b);
                        }
                        x
                    })
                    .collect();
                L::add(
                    L::add(L::add(x[0], x[1]), L::add(x[2], x[3])),
                    L::add(L::add(x[4], x[5]), L::add(x[6], x[7])),
                )
            })
        })
        .collect()
}

/// `peak.cl` on `width`-lane vectors of `L`: `n` items (a multiple of 64) of `iters`
/// iterations of 8 chains × 4 steps; quick mode does 1/32 of that.
fn peak_case<L: Lane>(quick: bool, width: usize, n: usize, iters: u32) -> Case {
    let (n, iters) = if quick {
        (n / 4, iters / 8)
    } else {
        (n, iters)
    };
    let mut rng = Rng(20 + width as u64 + L::BYTES as u64);
    // vectors: a, b, then 64 classes × 8 chains of starting values
    let mut init = Vec::new();
    for v in 0..2 + 64 * 8 {
        let role = match v {
            0 => Role::A,
            1 => Role::B,
            _ => Role::X,
        };
        init.extend((0..width).map(|_| L::gen(&mut rng, role)));
    }
    let steps = 4 * iters as usize;
    let classes = peak_ref(&init, width, steps);
    let mut init_bytes = Vec::new();
    init.iter().for_each(|v| v.put(&mut init_bytes));
    let item = width * L::BYTES;
    Case {
        size: format!("n={}, {iters} it", size_label(n)),
        bufs: vec![output(n * item), input(init_bytes)],
        args: vec![Arg::Buf(0), Arg::Buf(1), Arg::U32(iters)],
        global: vec![n],
        local: None,
        output: 0,
        check: Box::new(move |out, _| {
            for (g, got) in out.chunks_exact(item).enumerate() {
                let want = &classes[(g % 64) * width..][..width];
                for (l, (w, b)) in want.iter().zip(got.chunks_exact(L::BYTES)).enumerate() {
                    if L::get(b) != *w {
                        return Err(format!("item {g} lane {l} = {:?} want {w:?}", L::get(b)));
                    }
                }
            }
            Ok(())
        }),
        bytes: (n * item) as f64,
        // 2 operations (FLOP, or integer ops) per step and lane
        flops: (n * 8 * steps * width * 2) as f64,
        launches: 1,
    }
}

/// Finite floats in ±[0.5, 1) from an element's index: the copies are checked without
/// keeping a second copy of the input.
fn copy_word(i: usize) -> u32 {
    let h = (i as u32).wrapping_mul(0x9E37_79B9) ^ ((i >> 7) as u32).wrapping_mul(0x85EB_CA6B);
    (h & 0x807F_FFFF) | 0x3F00_0000
}

fn copy_vec(quick: bool, width: usize) -> Case {
    let floats = if quick { 8 * MI } else { 64 * MI };
    let data: Vec<u32> = (0..floats).map(copy_word).collect();
    Case {
        size: format!("n={} floats", size_label(floats)),
        bufs: vec![input(bytes_of(&data)), output(4 * floats)],
        args: vec![Arg::Buf(0), Arg::Buf(1)],
        global: vec![floats / width],
        local: None,
        output: 1,
        check: Box::new(move |out, _| {
            let got = u32s(out);
            match (0..floats).find(|&i| got[i] != copy_word(i)) {
                None => Ok(()),
                Some(i) => Err(format!(
                    "float {i} = {:#x} want {:#x}",
                    got[i],
                    copy_word(i)
                )),
            }
        }),
        bytes: (8 * floats) as f64,
        flops: 0.0,
        launches: 1,
    }
}

/// The fill pattern: 16 distinct bytes, so a fill shifted by any offset shows.
pub const PATTERN: [u8; 16] = {
    let mut p = [0u8; 16];
    let mut i = 0;
    while i < 16 {
        p[i] = (i as u8).wrapping_mul(0x1F).wrapping_add(0x5A);
        i += 1;
    }
    p
};

/// Where the host commands' results are checked: the first and last 4 KiB and 62 regions of
/// 4 KiB at pseudo-random (unaligned) offsets.
pub fn sample_regions(size: usize) -> Vec<Range<usize>> {
    const R: usize = 4096;
    let mut rng = Rng(size as u64);
    let mut v: Vec<Range<usize>> = Vec::with_capacity(64);
    v.push(0..R);
    v.extend((0..62).map(|_| {
        let at = (rng.next_u64() % (size - R) as u64) as usize;
        at..at + R
    }));
    v.push(size - R..size);
    v
}

/// Sampled bytes (the regions' bytes, concatenated) against `want(offset)`.
fn check_sampled(got: &[u8], size: usize, want: impl Fn(usize) -> u8) -> Result<(), String> {
    let offsets = sample_regions(size).into_iter().flatten();
    let mut n = 0;
    for (at, &g) in offsets.zip(got) {
        n += 1;
        if g != want(at) {
            return Err(format!("byte {at} = {g:#04x} want {:#04x}", want(at)));
        }
    }
    let expected: usize = sample_regions(size).iter().map(|r| r.len()).sum();
    if n != expected || got.len() != expected {
        return Err(format!("{} sampled bytes, want {expected}", got.len()));
    }
    Ok(())
}

fn host_case(quick: bool, op: Op) -> Case {
    let size = if quick { 64 * MI } else { 1024 * MI };
    let label = if quick { "64 MiB" } else { "1 GiB" };
    let dst = output(size);
    let (bufs, bytes): (Vec<BufSpec>, usize) = match op {
        Op::Copy => {
            let words: Vec<u32> = (0..size / 4).map(copy_word).collect();
            (vec![input(bytes_of(&words)), dst], 2 * size)
        }
        _ => (vec![dst], size),
    };
    let output = bufs.len() - 1;
    let check: crate::kernels::Checker = match op {
        Op::Fill(p) | Op::CreateFill(p) => {
            Box::new(move |got, _| check_sampled(got, size, |at| p[at % 16]))
        }
        _ => Box::new(move |got, _| {
            check_sampled(got, size, |at| copy_word(at / 4).to_le_bytes()[at % 4])
        }),
    };
    Case {
        size: label.into(),
        bufs,
        args: Vec::new(),
        global: Vec::new(),
        local: None,
        output,
        check,
        bytes: bytes as f64,
        flops: 0.0,
        launches: 1,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn md5_reference_matches_known_digests() {
        let k = md5_k();
        // MD5("") = d41d8cd98f00b204e9800998ecf8427e, as little-endian words
        let mut empty = [0u32; 16];
        empty[0] = 0x80;
        assert_eq!(
            md5_block(MD5_INIT, &empty, &k),
            [0xd98c_1dd4, 0x04b2_008f, 0x9809_80e9, 0x7e42_f8ec]
        );
        // MD5("abc") = 900150983cd24fb0d6963f7d28e17f72
        let mut abc = [0u32; 16];
        abc[0] = 0x8063_6261;
        abc[14] = 24;
        assert_eq!(
            md5_block(MD5_INIT, &abc, &k),
            [0x9850_0190, 0xb04f_d23c, 0x7d3f_96d6, 0x727f_e128]
        );
        // the kernel's table, spot-checked
        assert_eq!((k[0], k[63]), (0xD76A_A478, 0xEB86_D391));
    }

    #[test]
    fn half_conversions_round_to_nearest_even() {
        for h in 0..=0xFFFFu16 {
            let is_nan = h & 0x7C00 == 0x7C00 && h & 0x3FF != 0;
            if !is_nan {
                assert_eq!(f32_to_f16(f16_to_f32(h)), h, "{h:#x}");
            }
        }
        assert_eq!(f32_to_f16(1.0), 0x3C00);
        assert_eq!(f32_to_f16(65504.0), 0x7BFF);
        assert_eq!(f32_to_f16(65520.0), 0x7C00);
        // ties: 1 + 2⁻¹¹ to even (1.0), 1 + 3·2⁻¹¹ up to 1 + 2⁻⁹
        assert_eq!(f32_to_f16(1.0 + 2f32.powi(-11)), 0x3C00);
        assert_eq!(f32_to_f16(1.0 + 3.0 * 2f32.powi(-11)), 0x3C02);
        assert_eq!(f32_to_f16(1.0 + 2f32.powi(-11) + 2f32.powi(-20)), 0x3C01);
        assert_eq!(f32_to_f16(2f32.powi(-24)), 1);
        assert_eq!(f32_to_f16(2f32.powi(-25)), 0);
        assert_eq!(f32_to_f16(-2.0), 0xC000);
    }

    #[test]
    fn checks_reject_wrong_results() {
        let case = peak_case::<H16>(true, 8, 4096, 32);
        assert!((case.check)(&vec![0u8; case.bufs[0].bytes], 1).is_err());
        let case = host_case(true, Op::Fill(PATTERN));
        let size = case.bufs[0].bytes;
        let good: Vec<u8> = sample_regions(size)
            .into_iter()
            .flatten()
            .map(|at| PATTERN[at % 16])
            .collect();
        assert!((case.check)(&good, 1).is_ok());
        let mut shifted = good.clone();
        shifted.rotate_left(1);
        assert!((case.check)(&shifted, 1).is_err());
        assert!((case.check)(&good[1..], 1).is_err());
    }
}
