//! The benchmark kernels: their OpenCL C sources, problem sizes (quick and default), input data,
//! host references and result checks, and the bytes/FLOP each launch moves for the roofline.

use crate::check::{bytes_of, close_f32, close_f64, equal_u32, f32s, f64s, mostly_equal_u32, u32s};

/// What a kernel measures; decides which ratio it feeds in the summary.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Class {
    /// Memory-bound streaming: compared with the STREAM probe.
    Memory,
    /// Everything whose kernel time is the point (compute, local memory, atomics…).
    Compute,
    /// Many tiny launches: per-launch host time; `sync` calls clFinish after each launch
    /// (each command-buffer enqueue). With `recorded` > 0 the launches are recorded in a
    /// command-buffer (`cl_khr_command_buffer`) that many at a time, and the buffer is enqueued
    /// instead; 0 enqueues each launch.
    Launch { sync: bool, recorded: usize },
    /// A large kernel whose build + first launch time is the point.
    Build,
}

impl Class {
    pub fn label(self) -> &'static str {
        match self {
            Class::Memory => "memory",
            Class::Compute => "compute",
            Class::Launch { .. } => "launch",
            Class::Build => "build",
        }
    }
}

/// A kernel argument: a buffer of the case (by index) or a scalar.
pub enum Arg {
    Buf(usize),
    U32(u32),
    F32(f32),
}

pub struct BufSpec {
    pub bytes: usize,
    /// Initial contents (also written back before each launch when `reset`); zeros if `None`.
    pub init: Option<Vec<u8>>,
    pub reset: bool,
}

/// Check of the output buffer's bytes, given how many launches ran since the last reset.
pub type Checker = Box<dyn Fn(&[u8], usize) -> Result<(), String>>;

/// One kernel at one size: everything needed to run it on any platform and judge the result.
pub struct Case {
    pub size: String,
    pub bufs: Vec<BufSpec>,
    pub args: Vec<Arg>,
    pub global: Vec<usize>,
    pub local: Option<Vec<usize>>,
    pub output: usize,
    pub check: Checker,
    /// Bytes moved and FLOP done by one launch (nominal, for throughput and roofline).
    pub bytes: f64,
    pub flops: f64,
    /// Launches per timed repetition (1 except for launch-overhead kernels).
    pub launches: usize,
}

pub struct Spec {
    pub name: &'static str,
    pub entry: &'static str,
    pub source: &'static str,
    pub class: Class,
    pub make: fn(bool) -> Case,
    pub extra: Extra,
}

/// What one launch of a case is: an NDRange of its kernel, or a host command on its buffers
/// (no program is built for those).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Op {
    Kernel,
    /// `clEnqueueFillBuffer` of the output buffer with the pattern.
    Fill([u8; 16]),
    /// `clEnqueueCopyBuffer` of buffer 0 into the output buffer.
    Copy,
    /// `clCreateBuffer` of a new output buffer (the previous one released first, untimed),
    /// then `clEnqueueFillBuffer` with the pattern and `clFinish`, timed on the host.
    CreateFill([u8; 16]),
}

impl Op {
    /// Host commands on 1 GiB buffers are checked on sampled regions
    /// (`gaps::sample_regions`), not read back whole.
    pub fn sampled(self) -> bool {
        self != Op::Kernel
    }
}

/// What most kernels leave at its default.
#[derive(Clone, Copy, Debug)]
pub struct Extra {
    /// A device extension the kernel needs: without it the platform shows `unsupported`.
    pub requires: Option<&'static str>,
    pub op: Op,
    /// `Case::flops` counts integer operations (throughput in GIOP/s, no FLOP roofline).
    pub int_ops: bool,
}

pub const PLAIN: Extra = Extra {
    requires: None,
    op: Op::Kernel,
    int_ops: false,
};

macro_rules! cl {
    ($file:literal) => {
        include_str!(concat!("../kernels/", $file))
    };
}

pub fn all() -> Vec<Spec> {
    vec![
        Spec {
            name: "vadd",
            entry: "vadd",
            source: cl!("vadd.cl"),
            class: Class::Memory,
            make: vadd,
            extra: PLAIN,
        },
        Spec {
            name: "triad",
            entry: "triad",
            source: cl!("triad.cl"),
            class: Class::Memory,
            make: triad,
            extra: PLAIN,
        },
        Spec {
            name: "reduce",
            entry: "reduce",
            source: cl!("reduce.cl"),
            class: Class::Compute,
            make: reduce,
            extra: PLAIN,
        },
        Spec {
            name: "sgemm_naive",
            entry: "sgemm_naive",
            source: cl!("sgemm_naive.cl"),
            class: Class::Compute,
            make: sgemm_naive,
            extra: PLAIN,
        },
        Spec {
            name: "sgemm_tiled",
            entry: "sgemm_tiled",
            source: cl!("sgemm_tiled.cl"),
            class: Class::Compute,
            make: sgemm_tiled,
            extra: PLAIN,
        },
        Spec {
            name: "mandelbrot",
            entry: "mandelbrot",
            source: cl!("mandelbrot.cl"),
            class: Class::Compute,
            make: mandelbrot,
            extra: PLAIN,
        },
        Spec {
            name: "nbody",
            entry: "nbody",
            source: cl!("nbody.cl"),
            class: Class::Compute,
            make: nbody,
            extra: PLAIN,
        },
        Spec {
            name: "conv5x5",
            entry: "conv",
            source: cl!("conv.cl"),
            class: Class::Compute,
            make: conv,
            extra: PLAIN,
        },
        Spec {
            name: "transcendental",
            entry: "transcendental",
            source: cl!("transcendental.cl"),
            class: Class::Compute,
            make: transcendental,
            extra: PLAIN,
        },
        Spec {
            name: "math_float",
            entry: "math_float",
            source: concat!("#define MATH_FLOAT\n", cl!("math.cl")),
            class: Class::Compute,
            make: math_float,
            extra: PLAIN,
        },
        Spec {
            name: "math_double",
            entry: "math_double",
            source: concat!("#define MATH_DOUBLE\n", cl!("math.cl")),
            class: Class::Compute,
            make: math_double,
            extra: Extra {
                requires: Some("cl_khr_fp64"),
                ..PLAIN
            },
        },
        Spec {
            name: "hash",
            entry: "hash",
            source: cl!("hash.cl"),
            class: Class::Compute,
            make: hash,
            extra: PLAIN,
        },
        Spec {
            name: "histogram_local",
            entry: "histogram_local",
            source: cl!("histogram_local.cl"),
            class: Class::Compute,
            make: histogram_local,
            extra: PLAIN,
        },
        Spec {
            name: "histogram_global",
            entry: "histogram_global",
            source: cl!("histogram_global.cl"),
            class: Class::Compute,
            make: histogram_global,
            extra: PLAIN,
        },
        Spec {
            name: "launch_async",
            entry: "tiny",
            source: cl!("tiny.cl"),
            class: Class::Launch {
                sync: false,
                recorded: 0,
            },
            make: launch,
            extra: PLAIN,
        },
        Spec {
            name: "launch_sync",
            entry: "tiny",
            source: cl!("tiny.cl"),
            class: Class::Launch {
                sync: true,
                recorded: 0,
            },
            make: launch,
            extra: PLAIN,
        },
        Spec {
            name: "launch_cmdbuf_async",
            entry: "tiny",
            source: cl!("tiny.cl"),
            class: Class::Launch {
                sync: false,
                recorded: 1,
            },
            make: launch,
            extra: PLAIN,
        },
        Spec {
            name: "launch_cmdbuf_sync",
            entry: "tiny",
            source: cl!("tiny.cl"),
            class: Class::Launch {
                sync: true,
                recorded: 1,
            },
            make: launch,
            extra: PLAIN,
        },
        Spec {
            name: "launch_cmdbuf_x10",
            entry: "tiny",
            source: cl!("tiny.cl"),
            class: Class::Launch {
                sync: false,
                recorded: 10,
            },
            make: launch,
            extra: PLAIN,
        },
        Spec {
            name: "build_big",
            entry: "big",
            source: cl!("big.cl"),
            class: Class::Build,
            make: big,
            extra: PLAIN,
        },
    ]
    .into_iter()
    .chain(crate::gaps::specs())
    .chain(crate::patterns::specs())
    .collect()
}

/// SplitMix64: deterministic inputs without a dependency.
pub(crate) struct Rng(pub(crate) u64);
impl Rng {
    pub(crate) fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    pub(crate) fn u32(&mut self) -> u32 {
        (self.next_u64() >> 32) as u32
    }
    /// Uniform in [lo, hi).
    pub(crate) fn f32(&mut self, lo: f32, hi: f32) -> f32 {
        lo + (hi - lo) * ((self.next_u64() >> 40) as f32 / (1u64 << 24) as f32)
    }
    pub(crate) fn f32s(&mut self, n: usize, lo: f32, hi: f32) -> Vec<f32> {
        (0..n).map(|_| self.f32(lo, hi)).collect()
    }
    /// Uniform in [lo, hi), all 53 bits of the significand random.
    pub(crate) fn f64(&mut self, lo: f64, hi: f64) -> f64 {
        lo + (hi - lo) * ((self.next_u64() >> 11) as f64 / (1u64 << 53) as f64)
    }
}

pub(crate) const MI: usize = 1 << 20;

pub(crate) fn size_label(n: usize) -> String {
    if n >= MI && n.is_multiple_of(MI) {
        format!("{}Mi", n / MI)
    } else if n >= 1024 && n.is_multiple_of(1024) {
        format!("{}Ki", n / 1024)
    } else {
        n.to_string()
    }
}

pub(crate) fn input(data: Vec<u8>) -> BufSpec {
    BufSpec {
        bytes: data.len(),
        init: Some(data),
        reset: false,
    }
}
pub(crate) fn output(bytes: usize) -> BufSpec {
    BufSpec {
        bytes,
        init: None,
        reset: false,
    }
}
fn zeroed_each_launch(bytes: usize) -> BufSpec {
    BufSpec {
        bytes,
        init: None,
        reset: true,
    }
}

/// Runs `f(row)` for rows `0..rows` on all hardware threads, concatenating the rows' outputs.
pub(crate) fn par_rows<T: Send>(rows: usize, f: impl Fn(usize) -> Vec<T> + Sync) -> Vec<T> {
    let t = std::thread::available_parallelism().map_or(1, |n| n.get());
    let chunk = rows.div_ceil(t).max(1);
    let f = &f;
    std::thread::scope(|s| {
        let handles: Vec<_> = (0..rows)
            .step_by(chunk)
            .map(|start| {
                s.spawn(move || {
                    (start..(start + chunk).min(rows))
                        .flat_map(f)
                        .collect::<Vec<T>>()
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().expect("reference thread"))
            .collect()
    })
}

fn vadd(quick: bool) -> Case {
    let n = if quick { 8 * MI } else { 64 * MI };
    let mut rng = Rng(1);
    let a = rng.f32s(n, -1.0, 1.0);
    let b = rng.f32s(n, -1.0, 1.0);
    let want: Vec<f64> = a.iter().zip(&b).map(|(x, y)| f64::from(*x + *y)).collect();
    Case {
        size: format!("n={}", size_label(n)),
        bufs: vec![input(bytes_of(&a)), input(bytes_of(&b)), output(4 * n)],
        args: vec![Arg::Buf(0), Arg::Buf(1), Arg::Buf(2)],
        global: vec![n],
        local: None,
        output: 2,
        check: Box::new(move |out, _| close_f32(&f32s(out), &want, &[], 0.0, 0.0)),
        bytes: (12 * n) as f64,
        flops: 0.0,
        launches: 1,
    }
}

fn triad(quick: bool) -> Case {
    let n = if quick { 8 * MI } else { 64 * MI };
    let s = 3.0f32;
    let mut rng = Rng(2);
    let b = rng.f32s(n, -1.0, 1.0);
    let c = rng.f32s(n, -1.0, 1.0);
    let want: Vec<f64> = b
        .iter()
        .zip(&c)
        .map(|(x, y)| f64::from(*x) + f64::from(s) * f64::from(*y))
        .collect();
    let scale: Vec<f64> = b
        .iter()
        .zip(&c)
        .map(|(x, y)| f64::from(x.abs() + s * y.abs()))
        .collect();
    Case {
        size: format!("n={}", size_label(n)),
        bufs: vec![output(4 * n), input(bytes_of(&b)), input(bytes_of(&c))],
        args: vec![Arg::Buf(0), Arg::Buf(1), Arg::Buf(2), Arg::F32(s)],
        global: vec![n],
        local: None,
        output: 0,
        // with or without contraction into an fma: within 1 ulp of the terms
        check: Box::new(move |out, _| close_f32(&f32s(out), &want, &scale, 1.2e-7, 0.0)),
        bytes: (12 * n) as f64,
        flops: (2 * n) as f64,
        launches: 1,
    }
}

fn reduce(quick: bool) -> Case {
    let n = if quick { MI } else { 16 * MI };
    let wg = 256;
    let mut rng = Rng(3);
    let x = rng.f32s(n, 0.0, 1.0);
    let want: Vec<f64> = x
        .chunks(wg)
        .map(|c| c.iter().map(|&v| f64::from(v)).sum())
        .collect();
    Case {
        size: format!("n={}", size_label(n)),
        bufs: vec![input(bytes_of(&x)), output(4 * (n / wg))],
        args: vec![Arg::Buf(0), Arg::Buf(1)],
        global: vec![n],
        local: Some(vec![wg]),
        output: 1,
        check: Box::new(move |out, _| close_f32(&f32s(out), &want, &want, 1e-5, 0.0)),
        bytes: (4 * n) as f64,
        flops: n as f64,
        launches: 1,
    }
}

fn sgemm_case(quick: bool, tiled: bool) -> Case {
    let n = if quick {
        128
    } else if tiled {
        1024
    } else {
        512
    };
    let mut rng = Rng(4);
    let a = rng.f32s(n * n, -1.0, 1.0);
    let b = rng.f32s(n * n, -1.0, 1.0);
    let want = par_rows(n, |i| {
        let mut row = vec![0.0f64; n];
        for k in 0..n {
            let aik = f64::from(a[i * n + k]);
            for (r, bkj) in row.iter_mut().zip(&b[k * n..(k + 1) * n]) {
                *r += aik * f64::from(*bkj);
            }
        }
        row
    });
    // |error| of an n-term f32 dot product of values in [-1, 1] stays far below n * 1e-5
    let scale = vec![n as f64; n * n];
    Case {
        size: format!("{n}x{n}"),
        bufs: vec![input(bytes_of(&a)), input(bytes_of(&b)), output(4 * n * n)],
        args: vec![Arg::Buf(0), Arg::Buf(1), Arg::Buf(2), Arg::U32(n as u32)],
        global: vec![n, n],
        local: tiled.then(|| vec![16, 16]),
        output: 2,
        check: Box::new(move |out, _| close_f32(&f32s(out), &want, &scale, 1e-5, 0.0)),
        bytes: (12 * n * n) as f64,
        flops: 2.0 * (n as f64).powi(3),
        launches: 1,
    }
}
fn sgemm_naive(quick: bool) -> Case {
    sgemm_case(quick, false)
}
fn sgemm_tiled(quick: bool) -> Case {
    sgemm_case(quick, true)
}

fn mandelbrot(quick: bool) -> Case {
    let (w, h, max_iter) = if quick {
        (256usize, 256usize, 256u32)
    } else {
        (1024, 1024, 256)
    };
    let want = par_rows(h, |py| {
        (0..w)
            .map(|px| {
                let cr = -2.0f32 + 2.5f32 * px as f32 / w as f32;
                let ci = -1.25f32 + 2.5f32 * py as f32 / h as f32;
                let (mut zr, mut zi, mut i) = (0.0f32, 0.0f32, 0u32);
                while i < max_iter && zr * zr + zi * zi <= 4.0 {
                    let t = zr * zr - zi * zi + cr;
                    zi = 2.0 * zr * zi + ci;
                    zr = t;
                    i += 1;
                }
                i
            })
            .collect()
    });
    let iters: f64 = want.iter().map(|&i| f64::from(i)).sum();
    Case {
        size: format!("{w}x{h} it{max_iter}"),
        bufs: vec![output(4 * w * h)],
        args: vec![
            Arg::Buf(0),
            Arg::U32(w as u32),
            Arg::U32(h as u32),
            Arg::U32(max_iter),
        ],
        global: vec![w, h],
        local: None,
        output: 0,
        // contraction into fma legitimately changes counts near the boundary of the set
        check: Box::new(move |out, _| mostly_equal_u32(&u32s(out), &want, 0.01)),
        bytes: (4 * w * h) as f64,
        flops: 10.0 * iters,
        launches: 1,
    }
}

fn nbody(quick: bool) -> Case {
    let n = if quick { 1024 } else { 8192 };
    let eps2 = 0.01f32;
    let mut rng = Rng(5);
    let pos: Vec<f32> = (0..n)
        .flat_map(|_| {
            [
                rng.f32(0.0, 1.0),
                rng.f32(0.0, 1.0),
                rng.f32(0.0, 1.0),
                rng.f32(0.5, 1.0),
            ]
        })
        .collect();
    let ref_rows = par_rows(n, |i| {
        let p = &pos[4 * i..4 * i + 4];
        let (mut a, mut s) = ([0.0f64; 3], [0.0f64; 3]);
        for q in pos.chunks_exact(4) {
            let d: Vec<f64> = (0..3).map(|c| f64::from(q[c]) - f64::from(p[c])).collect();
            let r2 = d.iter().map(|v| v * v).sum::<f64>() + f64::from(eps2);
            let k = f64::from(q[3]) / (r2 * r2.sqrt());
            for c in 0..3 {
                a[c] += k * d[c];
                s[c] += (k * d[c]).abs();
            }
        }
        vec![(a[0], s[0]), (a[1], s[1]), (a[2], s[2]), (0.0, 0.0)]
    });
    let want: Vec<f64> = ref_rows.iter().map(|v| v.0).collect();
    let scale: Vec<f64> = ref_rows.iter().map(|v| v.1).collect();
    Case {
        size: format!("n={n}"),
        bufs: vec![input(bytes_of(&pos)), output(16 * n)],
        args: vec![Arg::Buf(0), Arg::Buf(1), Arg::U32(n as u32), Arg::F32(eps2)],
        global: vec![n],
        local: None,
        output: 1,
        check: Box::new(move |out, _| close_f32(&f32s(out), &want, &scale, 1e-4, 1e-6)),
        bytes: (32 * n) as f64,
        flops: 20.0 * (n as f64) * (n as f64),
        launches: 1,
    }
}

fn conv(quick: bool) -> Case {
    let (w, h) = if quick {
        (512usize, 512usize)
    } else {
        (2048, 2048)
    };
    let mut rng = Rng(6);
    let img = rng.f32s(w * h, 0.0, 1.0);
    let weights = rng.f32s(25, 0.0, 0.08);
    let want = par_rows(h, |y| {
        (0..w)
            .map(|x| {
                let mut acc = 0.0f64;
                for dy in -2i64..=2 {
                    let yy = (y as i64 + dy).clamp(0, h as i64 - 1) as usize;
                    for dx in -2i64..=2 {
                        let xx = (x as i64 + dx).clamp(0, w as i64 - 1) as usize;
                        acc += f64::from(weights[((dy + 2) * 5 + dx + 2) as usize])
                            * f64::from(img[yy * w + xx]);
                    }
                }
                acc
            })
            .collect()
    });
    Case {
        size: format!("{w}x{h}"),
        bufs: vec![
            input(bytes_of(&img)),
            output(4 * w * h),
            input(bytes_of(&weights)),
        ],
        args: vec![
            Arg::Buf(0),
            Arg::Buf(1),
            Arg::Buf(2),
            Arg::U32(w as u32),
            Arg::U32(h as u32),
        ],
        global: vec![w, h],
        local: None,
        output: 1,
        // inputs and weights are positive: the value is its own error scale
        check: Box::new(move |out, _| close_f32(&f32s(out), &want, &want, 1e-5, 1e-7)),
        bytes: (8 * w * h) as f64,
        flops: (50 * w * h) as f64,
        launches: 1,
    }
}

fn transcendental(quick: bool) -> Case {
    let n = if quick { MI } else { 2 * MI };
    let mut rng = Rng(7);
    let x = rng.f32s(n, -4.0, 4.0);
    let (want, scale): (Vec<f64>, Vec<f64>) = x
        .iter()
        .map(|&v| {
            let v = f64::from(v);
            let t = [
                v.sin() * (0.5 * v).cos(),
                (-0.25 * v * v).exp(),
                (1.0 + v * v).ln(),
            ];
            (
                t.iter().sum::<f64>(),
                1.0 + t.iter().map(|t| t.abs()).sum::<f64>(),
            )
        })
        .unzip();
    Case {
        size: format!("n={}", size_label(n)),
        bufs: vec![input(bytes_of(&x)), output(4 * n)],
        args: vec![Arg::Buf(0), Arg::Buf(1)],
        global: vec![n],
        local: None,
        output: 1,
        // a few ulp per term (full-profile sin/cos 4, exp/log 3) plus argument rounding
        check: Box::new(move |out, _| close_f32(&f32s(out), &want, &scale, 4e-6, 0.0)),
        bytes: (8 * n) as f64,
        flops: (60 * n) as f64,
        launches: 1,
    }
}

/// The terms of `math.cl`'s expression for one input, in f64 (the host reference of both rows):
/// `sin(x)·cos(2x)`, `exp(x/2)·log(1 + x²)`, `exp2(-x²)`, `log2(2 + x)`, `pow(1 + |x|, 0.75)`.
fn math_terms(x: f64) -> [f64; 5] {
    [
        x.sin() * (2.0 * x).cos(),
        (0.5 * x).exp() * (1.0 + x * x).ln(),
        (-x * x).exp2(),
        (2.0 + x).log2(),
        (1.0 + x.abs()).powf(0.75),
    ]
}

/// Reference value and error scale (1 + Σ|terms|) of `math.cl`'s expression for each input.
fn math_reference(x: impl Iterator<Item = f64>) -> (Vec<f64>, Vec<f64>) {
    x.map(|v| {
        let t = math_terms(v);
        (
            t.iter().sum::<f64>(),
            1.0 + t.iter().map(|t| t.abs()).sum::<f64>(),
        )
    })
    .unzip()
}

/// The math rows' size; transcendental calls counted as transcendental's (a nominal 15 FLOP
/// each, the arithmetic around them not counted): 7 per element.
fn math_n(quick: bool) -> usize {
    if quick {
        MI
    } else {
        2 * MI
    }
}
const MATH_FLOP_PER_ITEM: usize = 7 * 15;
/// Inputs: 2 + x must stay positive for log2.
const MATH_RANGE: (f64, f64) = (-1.5, 4.0);

fn math_float(quick: bool) -> Case {
    let n = math_n(quick);
    let mut rng = Rng(11);
    let x = rng.f32s(n, MATH_RANGE.0 as f32, MATH_RANGE.1 as f32);
    let (want, scale) = math_reference(x.iter().map(|&v| f64::from(v)));
    Case {
        size: format!("n={}", size_label(n)),
        bufs: vec![input(bytes_of(&x)), output(4 * n)],
        args: vec![Arg::Buf(0), Arg::Buf(1)],
        global: vec![n],
        local: None,
        output: 1,
        // a few ulp per term (full profile: sin/cos 4, exp/log/exp2/log2 3, pow 16) plus the
        // rounding of arguments (x², 1 + x²), as transcendental's ~34 float ulp of Σ|terms|
        check: Box::new(move |out, _| close_f32(&f32s(out), &want, &scale, 4e-6, 0.0)),
        bytes: (8 * n) as f64,
        flops: (MATH_FLOP_PER_ITEM * n) as f64,
        launches: 1,
    }
}

fn math_double(quick: bool) -> Case {
    let n = math_n(quick);
    let mut rng = Rng(12);
    let x: Vec<f64> = (0..n)
        .map(|_| rng.f64(MATH_RANGE.0, MATH_RANGE.1))
        .collect();
    let (want, scale) = math_reference(x.iter().copied());
    Case {
        size: format!("n={}", size_label(n)),
        bufs: vec![input(bytes_of(&x)), output(8 * n)],
        args: vec![Arg::Buf(0), Arg::Buf(1)],
        global: vec![n],
        local: None,
        output: 1,
        // the same ulp budget in double (~45 ulp of Σ|terms|); a result computed in float
        // precision misses it by nine orders of magnitude
        check: Box::new(move |out, _| close_f64(&f64s(out), &want, &scale, 1e-14, 0.0)),
        bytes: (16 * n) as f64,
        flops: (MATH_FLOP_PER_ITEM * n) as f64,
        launches: 1,
    }
}

fn hash(quick: bool) -> Case {
    let n = if quick { MI } else { 8 * MI };
    let mut rng = Rng(8);
    let x: Vec<u32> = (0..n).map(|_| rng.u32()).collect();
    let want: Vec<u32> = x
        .iter()
        .enumerate()
        .map(|(i, &x0)| {
            let mut x = x0;
            let mut h = 0x811C_9DC5u32 ^ i as u32;
            for r in 0..16u32 {
                x ^= x >> 15;
                x = x.wrapping_mul(0x2C1B_3C6D);
                x = x.rotate_left(r + 7);
                h = (h ^ x).wrapping_mul(0x0100_0193);
                h = h.wrapping_add(x.count_ones() + (h | 1).leading_zeros());
            }
            h ^ x
        })
        .collect();
    Case {
        size: format!("n={}", size_label(n)),
        bufs: vec![input(bytes_of(&x)), output(4 * n)],
        args: vec![Arg::Buf(0), Arg::Buf(1)],
        global: vec![n],
        local: None,
        output: 1,
        check: Box::new(move |out, _| equal_u32(&u32s(out), &want)),
        bytes: (8 * n) as f64,
        flops: 0.0,
        launches: 1,
    }
}

fn histogram_case(quick: bool, local: bool) -> Case {
    let n = if quick { MI } else { 16 * MI };
    let mut rng = Rng(9);
    let data: Vec<u32> = (0..n).map(|_| rng.u32()).collect();
    let mut want = vec![0u32; 256];
    for d in &data {
        want[(d & 255) as usize] += 1;
    }
    Case {
        size: format!("n={}", size_label(n)),
        bufs: vec![input(bytes_of(&data)), zeroed_each_launch(4 * 256)],
        args: vec![Arg::Buf(0), Arg::Buf(1)],
        global: vec![n / 16],
        local: local.then(|| vec![256]),
        output: 1,
        check: Box::new(move |out, _| equal_u32(&u32s(out), &want)),
        bytes: (4 * n) as f64,
        flops: 0.0,
        launches: 1,
    }
}
fn histogram_local(quick: bool) -> Case {
    histogram_case(quick, true)
}
fn histogram_global(quick: bool) -> Case {
    histogram_case(quick, false)
}

fn launch(quick: bool) -> Case {
    let launches = if quick { 200 } else { 2000 };
    Case {
        size: format!("{launches} launches"),
        bufs: vec![zeroed_each_launch(4)],
        args: vec![Arg::Buf(0)],
        global: vec![1],
        local: None,
        output: 0,
        check: Box::new(|out, count| equal_u32(&u32s(out), &[count as u32])),
        bytes: 0.0,
        flops: 0.0,
        launches,
    }
}

/// Host version of `big.cl`: 2048 mixing steps.
fn big_ref(x0: u32, i: u32) -> u32 {
    let (mut x, mut y) = (x0, i);
    for k in 0..2048u32 {
        x = (x ^ k.wrapping_mul(0x9E37_79B9))
            .rotate_left(k % 31 + 1)
            .wrapping_mul(0x85EB_CA6B)
            .wrapping_add(y >> (k % 13));
        y = y.wrapping_add(x ^ (x >> 7)).wrapping_add(k);
    }
    x ^ y
}

fn big(quick: bool) -> Case {
    let n = if quick { 256 } else { 4096 };
    let mut rng = Rng(10);
    let x: Vec<u32> = (0..n).map(|_| rng.u32()).collect();
    let want: Vec<u32> = x
        .iter()
        .enumerate()
        .map(|(i, &v)| big_ref(v, i as u32))
        .collect();
    Case {
        size: format!("2048 steps, n={n}"),
        bufs: vec![input(bytes_of(&x)), output(4 * n)],
        args: vec![Arg::Buf(0), Arg::Buf(1)],
        global: vec![n],
        local: None,
        output: 1,
        check: Box::new(move |out, _| equal_u32(&u32s(out), &want)),
        bytes: (8 * n) as f64,
        flops: 0.0,
        launches: 1,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kernel_has_its_entry_point_and_quick_case_is_consistent() {
        for spec in all() {
            let case = (spec.make)(true);
            if spec.extra.op != Op::Kernel {
                assert!(case.output < case.bufs.len(), "{}", spec.name);
                continue;
            }
            assert!(
                spec.source.contains(&format!("void {}(", spec.entry)),
                "{}",
                spec.name
            );
            assert!(case.output < case.bufs.len());
            for arg in &case.args {
                if let Arg::Buf(i) = arg {
                    assert!(*i < case.bufs.len(), "{}", spec.name);
                }
            }
            if let Some(local) = &case.local {
                for (g, l) in case.global.iter().zip(local) {
                    assert_eq!(g % l, 0, "{}: global not a multiple of local", spec.name);
                }
            }
        }
    }

    #[test]
    fn math_checks_accept_the_reference_and_reject_float_precision() {
        for (make, width) in [(math_float as fn(bool) -> Case, 4), (math_double, 8)] {
            let case = make(true);
            let x = &case.bufs[0].init.as_ref().expect("input");
            let inputs: Vec<f64> = if width == 4 {
                f32s(x).into_iter().map(f64::from).collect()
            } else {
                f64s(x)
            };
            assert!(inputs
                .iter()
                .all(|v| (MATH_RANGE.0..MATH_RANGE.1).contains(v)));
            let (want, _) = math_reference(inputs.iter().copied());
            let exact = if width == 4 {
                bytes_of(&want.iter().map(|&v| v as f32).collect::<Vec<_>>())
            } else {
                bytes_of(&want)
            };
            assert!((case.check)(&exact, 1).is_ok(), "width {width}");
            // one value off by 1e-6 relative: within float's budget, far outside double's
            let mut off = want.clone();
            off[7] *= 1.0 + 1e-6;
            let off = if width == 4 {
                bytes_of(&off.iter().map(|&v| v as f32).collect::<Vec<_>>())
            } else {
                bytes_of(&off)
            };
            assert_eq!((case.check)(&off, 1).is_ok(), width == 4, "width {width}");
            // a NaN (a platform's log2 of a negative argument) fails both
            let mut nan = exact.clone();
            nan[..width].fill(0xFF);
            assert!((case.check)(&nan, 1).is_err(), "width {width}");
        }
    }

    #[test]
    fn hash_check_rejects_a_wrong_output() {
        let case = hash(true);
        // the reference is the only thing that passes: a zero output fails
        let zeros = vec![0u8; case.bufs[1].bytes];
        assert!((case.check)(&zeros, 1).is_err());
    }
}
