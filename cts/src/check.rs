//! The brute-force run: for each function and type (float, double, half), builds the scalar
//! and 4-wide vector kernels on the device, feeds special then random (or all) inputs, measures every result
//! against the reference with the CTS rules, and produces one table row.

use crate::cl::{Buffer, Device};
use crate::funcs::{Bound, Func, Kind};
use crate::inputs::{self, Rng};
use crate::reference::Reference;
use crate::ulp::{self, Format, F16, F32, F64};
use std::time::Instant;

/// Inputs per kernel launch.
const CHUNK: usize = 1 << 20;

#[derive(Clone, Debug)]
pub struct Options {
    /// Random inputs per function after the special values (quick mode).
    pub random: u64,
    /// Every one of the 2^32 floats for unary float functions (and `full_random` random
    /// inputs for the others).
    pub full: bool,
    pub seed: u64,
    pub float: bool,
    pub double: bool,
    /// Half (cl_khr_fp16): unary functions on all 2^16 inputs, others on specials + random.
    pub half: bool,
    /// Also run the 4-wide vector kernel on every input.
    pub vector: bool,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            random: 1 << 20,
            full: false,
            seed: 0x5eed_f10a7,
            float: true,
            double: true,
            half: true,
            vector: true,
        }
    }
}

#[derive(Clone, Debug)]
pub struct Row {
    pub func: &'static str,
    pub ty: &'static str,
    pub tested: u64,
    pub max_ulp: f64,
    pub bound: Bound,
    pub worst: String,
    /// Results beyond the bound.
    pub fails: u64,
    /// Special inputs whose exactly representable reference (6.7 edge cases included) was not
    /// returned exactly, and zero results of the wrong sign.
    pub edge_fails: u64,
    pub first_edge: String,
    /// Vector lanes whose bits differ from the scalar kernel's.
    pub vec_mismatch: u64,
    pub status: String,
    pub seconds: f64,
}

impl Row {
    pub fn ok(&self) -> bool {
        self.status == "ok" || self.status == "measured"
    }
}

fn fmt_val(x: f64, fmt: Format) -> String {
    if fmt == F32 {
        format!("{:?}", x as f32)
    } else {
        format!("{x:?}")
    }
}

/// The OpenCL C program with the scalar kernel `k1` and the 4-wide kernel `k4`.
pub fn source(func: &Func, fmt: Format) -> String {
    let t = fmt.name;
    let pragma = if fmt == F16 {
        "cl_khr_fp16"
    } else {
        "cl_khr_fp64"
    };
    // CVT: integer (vector) to the kernel's float type; INT: b to a small integer; QUO7: the
    // sign and low 7 bits of remquo's quotient (all the spec promises) where the quotient is
    // below 2^20 in magnitude (decided exactly on the exponents), else 0.
    let macros = |n: &str| {
        format!(
            "#undef CVT\n#undef INT\n#undef QUO7\n\
             #define CVT(x) convert_{t}{n}(x)\n\
             #define INT(b) convert_int{n}_sat(fmod(b, ({t}{n})64))\n\
             #define QUO7(q, a, b) ((clamp(ilogb(a), -2000, 2000) - clamp(ilogb(b), -2000, 2000) < 20) ? (q) % 128 : 0)\n"
        )
    };
    format!(
        "#pragma OPENCL EXTENSION {pragma} : enable\n\
         {m1}\
         __kernel void k1(__global const {t} *A, __global const {t} *B, __global const {t} *C, __global {t} *O) {{\n\
         \x20   size_t i = get_global_id(0);\n\
         \x20   {t} a = A[i], b = B[i], c = C[i];\n\
         \x20   O[i] = {e};\n\
         }}\n\
         {m4}\
         __kernel void k4(__global const {t}4 *A, __global const {t}4 *B, __global const {t}4 *C, __global {t}4 *O) {{\n\
         \x20   size_t i = get_global_id(0);\n\
         \x20   {t}4 a = A[i], b = B[i], c = C[i];\n\
         \x20   O[i] = {e};\n\
         }}\n",
        e = func.expr,
        m1 = macros(""),
        m4 = macros("4"),
    )
}

/// Source of the inputs of one run: special values (products of them for two and three
/// arguments), then random values, or for --full unary float functions every bit pattern.
struct Inputs {
    arity: usize,
    fmt: Format,
    specials: Vec<[f64; 3]>,
    pos: usize,
    random_left: u64,
    exhaustive_next: Option<u64>,
    rng: Rng,
}

impl Inputs {
    fn new(func: &Func, fmt: Format, opts: &Options) -> Inputs {
        let double = fmt == F64;
        let s = if fmt == F16 {
            inputs::half_specials()
        } else {
            inputs::specials(double)
        };
        let specials: Vec<[f64; 3]> = match func.arity {
            1 => s.iter().map(|&a| [a, 0.0, 0.0]).collect(),
            2 => s
                .iter()
                .flat_map(|&a| s.iter().map(move |&b| [a, b, 0.0]))
                .collect(),
            _ => {
                let f = if fmt == F16 {
                    inputs::half_few_specials()
                } else {
                    inputs::few_specials(double)
                };
                let mut v = Vec::new();
                for &a in &f {
                    for &b in &f {
                        for &c in &f {
                            v.push([a, b, c]);
                        }
                    }
                }
                v
            }
        };
        // Every half is cheap: unary half functions always see all 2^16 inputs.
        let exhaustive = func.arity == 1 && (fmt == F16 || (opts.full && fmt == F32));
        let random = if opts.full && !exhaustive {
            opts.random.max(1 << 28)
        } else {
            opts.random
        };
        Inputs {
            arity: func.arity,
            fmt,
            specials,
            pos: 0,
            random_left: if exhaustive { 0 } else { random },
            exhaustive_next: exhaustive.then_some(0),
            rng: Rng::new(opts.seed ^ hash(func.name) ^ u64::from(fmt.mant_dig as u32)),
        }
    }

    /// The next chunk as three argument columns, and how many of its leading entries are
    /// special values; `None` when done.
    fn next(&mut self) -> Option<([Vec<f64>; 3], usize)> {
        let mut cols: [Vec<f64>; 3] = Default::default();
        let mut special = 0;
        while cols[0].len() < CHUNK && self.pos < self.specials.len() {
            for (k, col) in cols.iter_mut().enumerate() {
                col.push(self.specials[self.pos][k]);
            }
            self.pos += 1;
            special += 1;
        }
        if let Some(next) = self.exhaustive_next {
            let count: u64 = if self.fmt == F16 { 1 << 16 } else { 1 << 32 };
            let end = (next + (CHUNK - cols[0].len()) as u64).min(count);
            for bits in next..end {
                cols[0].push(if self.fmt == F16 {
                    ulp::f16_to_f64(bits as u16)
                } else {
                    f64::from(f32::from_bits(bits as u32))
                });
            }
            self.exhaustive_next = (end < count).then_some(end);
        }
        while cols[0].len() < CHUNK && self.random_left > 0 {
            for (k, col) in cols.iter_mut().enumerate() {
                let v = if k < self.arity {
                    if self.fmt == F16 {
                        inputs::random_half(&mut self.rng)
                    } else {
                        inputs::random(&mut self.rng, self.fmt == F64)
                    }
                } else {
                    0.0
                };
                col.push(v);
            }
            self.random_left -= 1;
        }
        if cols[0].is_empty() {
            return None;
        }
        let n = cols_len(&cols);
        for col in cols.iter_mut().skip(self.arity) {
            col.clear();
            col.resize(n, 0.0);
        }
        Some((cols, special))
    }
}

fn cols_len(cols: &[Vec<f64>; 3]) -> usize {
    cols[0].len()
}

fn hash(s: &str) -> u64 {
    s.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3)
    })
}

/// Device buffers for one chunk, in the tested type.
struct Buffers<'d> {
    a: Buffer<'d>,
    b: Buffer<'d>,
    c: Buffer<'d>,
    o: Buffer<'d>,
}

fn run_kernels(
    prog: &crate::cl::Program<'_>,
    bufs: &Buffers<'_>,
    cols: &[Vec<f64>; 3],
    fmt: Format,
    vector: bool,
) -> Result<(Vec<f64>, Option<Vec<f64>>), String> {
    let n = cols[0].len();
    let padded = n.div_ceil(4) * 4;
    let mut outs = Vec::new();
    if fmt == F16 {
        for (col, buf) in cols.iter().zip([&bufs.a, &bufs.b, &bufs.c]) {
            let mut v: Vec<u16> = col.iter().map(|&x| ulp::f64_to_f16(x)).collect();
            v.resize(padded, 0);
            buf.write(&v)?;
        }
    } else if fmt == F64 {
        for (col, buf) in cols.iter().zip([&bufs.a, &bufs.b, &bufs.c]) {
            let mut v = col.clone();
            v.resize(padded, 0.0);
            buf.write(&v)?;
        }
    } else {
        for (col, buf) in cols.iter().zip([&bufs.a, &bufs.b, &bufs.c]) {
            let mut v: Vec<f32> = col.iter().map(|&x| x as f32).collect();
            v.resize(padded, 0.0);
            buf.write(&v)?;
        }
    }
    let kernels: &[(&str, usize)] = if vector {
        &[("k1", padded), ("k4", padded / 4)]
    } else {
        &[("k1", padded)]
    };
    for &(k, global) in kernels {
        prog.run(k, &[&bufs.a, &bufs.b, &bufs.c, &bufs.o], global)?;
        let out: Vec<f64> = if fmt == F16 {
            let mut v = vec![0u16; padded];
            bufs.o.read(&mut v)?;
            v[..n].iter().map(|&h| ulp::f16_to_f64(h)).collect()
        } else if fmt == F64 {
            let mut v = vec![0.0f64; padded];
            bufs.o.read(&mut v)?;
            v.truncate(n);
            v
        } else {
            let mut v = vec![0.0f32; padded];
            bufs.o.read(&mut v)?;
            v[..n].iter().map(|&x| f64::from(x)).collect()
        };
        outs.push(out);
    }
    let vec_out = if vector { outs.pop() } else { None };
    Ok((outs.pop().expect("scalar output"), vec_out))
}

/// What one slice of a chunk contributes to a row; merged in input order, so the row is the
/// one a serial pass would produce.
#[derive(Default)]
struct Tally {
    tested: u64,
    max_ulp: f64,
    worst: String,
    fails: u64,
    edge_fails: u64,
    first_edge: String,
    vec_mismatch: u64,
}

impl Tally {
    fn merge_into(self, row: &mut Row) {
        row.tested += self.tested;
        if self.max_ulp > row.max_ulp
            || (row.worst.is_empty() && !self.worst.is_empty() && self.max_ulp == row.max_ulp)
        {
            row.max_ulp = self.max_ulp;
            row.worst = self.worst;
        }
        row.fails += self.fails;
        if row.edge_fails == 0 && self.edge_fails > 0 {
            row.first_edge = self.first_edge;
        }
        row.edge_fails += self.edge_fails;
        row.vec_mismatch += self.vec_mismatch;
    }
}

/// One chunk's device results against the reference, measured on all cores: each thread
/// evaluates the reference for its slice and judges it (the judging is as costly as the
/// reference, so both are split).
fn judge_chunk(
    judge: &Judge<'_>,
    limit: Option<f64>,
    cols: &[Vec<f64>; 3],
    scalar: &[f64],
    vector: Option<&[f64]>,
    special: usize,
) -> Vec<Tally> {
    let n = scalar.len();
    let threads = std::thread::available_parallelism()
        .map_or(1, |t| t.get())
        .max(1);
    let per = n.div_ceil(threads).max(1);
    std::thread::scope(|s| {
        let handles: Vec<_> = (0..n.div_ceil(per))
            .map(|k| {
                let range = k * per..((k + 1) * per).min(n);
                s.spawn(move || judge_slice(judge, limit, cols, scalar, vector, special, range))
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("judging thread panicked"))
            .collect()
    })
}

#[allow(clippy::too_many_arguments)]
fn judge_slice(
    judge: &Judge<'_>,
    limit: Option<f64>,
    cols: &[Vec<f64>; 3],
    scalar: &[f64],
    vector: Option<&[f64]>,
    special: usize,
    range: std::ops::Range<usize>,
) -> Tally {
    let mut t = Tally::default();
    // The reference in small blocks: buffers that stay in cache and are not page-faulted in
    // anew for every chunk.
    const BLOCK: usize = 4096;
    let (mut hi, mut lo) = (vec![0.0; BLOCK], vec![0.0; BLOCK]);
    let mut start = range.start;
    while start < range.end {
        let block = start..(start + BLOCK).min(range.end);
        start = block.end;
        judge_block(
            judge, limit, cols, scalar, vector, special, block, &mut hi, &mut lo, &mut t,
        );
    }
    t
}

#[allow(clippy::too_many_arguments)]
fn judge_block(
    judge: &Judge<'_>,
    limit: Option<f64>,
    cols: &[Vec<f64>; 3],
    scalar: &[f64],
    vector: Option<&[f64]>,
    special: usize,
    range: std::ops::Range<usize>,
    hi: &mut [f64],
    lo: &mut [f64],
    t: &mut Tally,
) {
    let func = judge.func;
    let fmt = judge.fmt;
    let len = range.len();
    let (a, b, c) = (
        &cols[0][range.clone()],
        &cols[1][range.clone()],
        &cols[2][range.clone()],
    );
    if fmt == F16 && func.name == "nextafter" {
        // Defined by the format: the neighbouring half (reference.c steps in float or double
        // only).
        for i in 0..len {
            hi[i] = ulp::next_half(a[i], b[i]);
            lo[i] = 0.0;
        }
    } else {
        judge
            .reference
            .eval(fmt, a, b, c, &mut hi[..len], &mut lo[..len]);
    }
    let domain_limited = domain_limited(func);
    for (j, i) in range.enumerate() {
        let args = [cols[0][i], cols[1][i], cols[2][i]];
        t.tested += 1;
        if domain_limited && out_of_domain(args[0]) {
            continue;
        }
        // A vector lane with the scalar result's bits has its error: judge it once, count it
        // twice.
        let (lane, copies) = match vector.map(|v| v[i]) {
            Some(v) if same(v, scalar[i]) => (None, 2),
            Some(v) => {
                t.vec_mismatch += 1;
                (Some(v), 1)
            }
            None => (None, 1),
        };
        for got in [Some(scalar[i]), lane].into_iter().flatten() {
            let err = judge.error(got, args, hi[j], lo[j]);
            if err > t.max_ulp || (t.worst.is_empty() && err == t.max_ulp && err > 0.0) {
                t.max_ulp = err;
                let a: Vec<String> = args[..func.arity]
                    .iter()
                    .map(|&x| fmt_val(x, fmt))
                    .collect();
                t.worst = format!(
                    "({}) → {} vs {}",
                    a.join(", "),
                    fmt_val(got, fmt),
                    fmt_val(hi[j] + lo[j], fmt)
                );
            }
            if limit.is_some_and(|l| err > l) {
                t.fails += copies;
            }
            if let Some(msg) = judge.exactness(got, args, hi[j], lo[j], i < special) {
                if t.edge_fails == 0 {
                    t.first_edge = msg;
                }
                t.edge_fails += copies;
            }
        }
    }
}

fn same(x: f64, y: f64) -> bool {
    (x.is_nan() && y.is_nan()) || x.to_bits() == y.to_bits()
}

/// Flushes subnormals to a zero of the same sign (CTS rule 5 inputs).
fn flush(x: f64, fmt: Format) -> f64 {
    if x != 0.0 && x.abs() < fmt.min_normal() {
        0.0f64.copysign(x)
    } else {
        x
    }
}

pub struct Judge<'a> {
    pub func: &'a Func,
    pub reference: Reference,
    pub double: bool,
    pub fmt: Format,
    pub bound: Bound,
    pub ftz: bool,
    pub tol: f64,
}

impl Judge<'_> {
    /// |error| in ulps of one result, with the allowances the CTS makes (mad's two forms,
    /// flush-to-zero rules 4 and 5); infinite when wrong beyond measure.
    pub fn error(&self, got: f64, args: [f64; 3], hi: f64, lo: f64) -> f64 {
        // CTS rule 1: the reference rounded to the format is accepted; it matters where the
        // reference overflows the format but not the double it is carried in (then only the
        // infinity is right, and ulp_error would measure it against the finite reference).
        let rounded = self.fmt.round(hi + ulp::unscale_lo(hi, lo));
        if rounded.is_infinite() && got == rounded {
            return 0.0;
        }
        let mut err = ulp::ulp_error(got, hi, lo, self.fmt).abs();
        if self.func.kind == Kind::Mad {
            let alt = if self.double {
                args[0] * args[1] + args[2]
            } else if self.fmt == F16 {
                self.fmt.round(self.fmt.round(args[0] * args[1]) + args[2])
            } else {
                f64::from((args[0] as f32) * (args[1] as f32) + args[2] as f32)
            };
            if same(got, alt) {
                err = 0.0;
            }
        }
        let limit = self.bound.unwrap_or(f64::INFINITY) + self.tol;
        if self.ftz && err > limit {
            // Rule 4: a subnormal exact result may come back as zero.
            if got == 0.0 && hi.abs() < self.fmt.min_normal() {
                return 0.0;
            }
            // Rule 5: the result for the arguments with subnormals flushed.
            let f = args.map(|x| flush(x, self.fmt));
            if f != args {
                let (h, l) = self.reference.one(self.fmt, f[0], f[1], f[2]);
                let e = ulp::ulp_error(got, h, l, self.fmt).abs();
                if e <= limit || (got == 0.0 && h.abs() < self.fmt.min_normal()) {
                    return e.min(err);
                }
            }
        }
        err
    }

    /// For a result the spec prescribes exactly: None if fine, else a description.
    pub fn exactness(
        &self,
        got: f64,
        args: [f64; 3],
        hi: f64,
        lo: f64,
        special: bool,
    ) -> Option<String> {
        if lo != 0.0 || (self.fmt.round(hi) != hi && !hi.is_nan()) {
            return None;
        }
        // The long double reference has only 11 bits beyond double: a double reference that
        // looks exact may be a rounded one. For double, only the values 6.7 prescribes are
        // taken as exact (zeros, infinities, NaN and the quarters of acospi/atan2pi/cospi…).
        if self.double
            && !(hi == 0.0 || !hi.is_finite() || [0.25, 0.5, 0.75, 1.0].contains(&hi.abs()))
        {
            return None;
        }
        let zero_rule = hi == 0.0 && self.func.kind != Kind::ZeroSignFree && !self.ftz;
        if !(special || zero_rule) {
            return None;
        }
        if self.func.kind == Kind::Native || (special && self.func.kind == Kind::Mad) {
            return None;
        }
        let ok = if hi == 0.0 && self.func.kind == Kind::ZeroSignFree {
            got == 0.0
        } else {
            same(got, hi)
        };
        if ok || (self.ftz && hi == 0.0 && got == 0.0) {
            return None;
        }
        let args: Vec<String> = args[..self.func.arity]
            .iter()
            .map(|&x| fmt_val(x, self.fmt))
            .collect();
        Some(format!(
            "{}({}) = {} (expected {})",
            self.func.name,
            args.join(", "),
            fmt_val(got, self.fmt),
            fmt_val(hi, self.fmt)
        ))
    }
}

/// Whether an input is outside the domain of a `domain_limited` function (any result is then accepted, rule 9).
fn out_of_domain(a: f64) -> bool {
    a.abs() > 65536.0
}

/// Whether the function has a restricted domain (`out_of_domain`).
fn domain_limited(func: &Func) -> bool {
    matches!(func.name, "half_sin" | "half_cos" | "half_tan")
}

/// Measures one function in one type.
pub fn check(dev: &Device, func: &'static Func, fmt: Format, opts: &Options) -> Row {
    let start = Instant::now();
    let double = fmt == F64;
    let bound = if double {
        func.f64_bound.flatten()
    } else if fmt == F16 {
        func.f16_bound.flatten()
    } else {
        func.f32_bound
    };
    let mut row = Row {
        func: func.name,
        ty: fmt.name,
        tested: 0,
        max_ulp: 0.0,
        bound,
        worst: String::new(),
        fails: 0,
        edge_fails: 0,
        first_edge: String::new(),
        vec_mismatch: 0,
        status: String::new(),
        seconds: 0.0,
    };
    let finish = |mut row: Row, status: String| {
        row.status = status;
        row.seconds = start.elapsed().as_secs_f64();
        row
    };
    let Some(reference) = Reference::by_name(func.reference) else {
        return finish(row, format!("no reference {}", func.reference));
    };
    let prog = match dev.program(&source(func, fmt), "") {
        Ok(p) => p,
        Err(e) => {
            let first = e
                .lines()
                .find(|l| l.contains("error"))
                .unwrap_or(e.lines().next().unwrap_or(""))
                .to_string();
            return finish(row, format!("build error: {first}"));
        }
    };
    let size = fmt.bytes();
    let bufs = match (|| -> Result<Buffers<'_>, String> {
        Ok(Buffers {
            a: dev.buffer(CHUNK * size)?,
            b: dev.buffer(CHUNK * size)?,
            c: dev.buffer(CHUNK * size)?,
            o: dev.buffer(CHUNK * size)?,
        })
    })() {
        Ok(b) => b,
        Err(e) => return finish(row, e),
    };
    let judge = Judge {
        func,
        reference,
        double,
        fmt,
        bound,
        ftz: (fmt == F32 && dev.ftz_f32) || func.kind == Kind::Half,
        tol: if double {
            1.0 / 512.0
        } else {
            1.0 / (1 << 20) as f64
        },
    };
    let limit = bound.map(|b| b + judge.tol);
    let mut inputs = Inputs::new(func, fmt, opts);
    let mut chunks = 0u64;
    while let Some((cols, special)) = inputs.next() {
        chunks += 1;
        if opts.full && chunks.is_multiple_of(64) {
            // Full runs take minutes per row: show that they progress.
            eprintln!(
                "  {} {}: {} inputs in {:.0} s, max {:.3} ulp so far",
                func.name,
                fmt.name,
                row.tested,
                start.elapsed().as_secs_f64(),
                row.max_ulp
            );
        }
        let (scalar, vector) = match run_kernels(&prog, &bufs, &cols, fmt, opts.vector) {
            Ok(o) => o,
            Err(e) => return finish(row, format!("run error: {e}")),
        };
        for tally in judge_chunk(&judge, limit, &cols, &scalar, vector.as_deref(), special) {
            tally.merge_into(&mut row);
        }
    }
    let status = if row.fails > 0 || row.edge_fails > 0 {
        "FAIL"
    } else if bound.is_none() {
        "measured"
    } else {
        "ok"
    };
    finish(row, status.to_string())
}

/// The markdown table header.
pub const HEADER: &str = "| function | type | inputs | max ulp | bound | worst input → got vs reference | over bound | inexact specials | vec≠scalar | status | s |\n|---|---|---:|---:|---|---|---:|---:|---:|---|---:|";

pub fn row_text(r: &Row) -> String {
    let max = if r.max_ulp.is_infinite() {
        "inf".to_string()
    } else {
        format!("{:.3}", r.max_ulp)
    };
    let edge = if r.edge_fails > 0 {
        format!("{} e.g. `{}`", r.edge_fails, r.first_edge)
    } else {
        "0".into()
    };
    format!(
        "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {:.1} |",
        r.func,
        r.ty,
        r.tested,
        max,
        crate::funcs::bound_text(r.bound),
        if r.worst.is_empty() {
            "—".into()
        } else {
            format!("`{}`", r.worst)
        },
        r.fails,
        edge,
        r.vec_mismatch,
        r.status,
        r.seconds
    )
}
