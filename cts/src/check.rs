//! The brute-force run: for each function and type (float, double, half), builds the scalar
//! and 4-wide vector kernels on the device, feeds special then random (or all) inputs, measures every result
//! against the reference with the CTS rules, and produces one table row.

use crate::cl::{Buffer, Device};
use crate::funcs::{Bound, Func, Kind};
use crate::inputs::{self, Rng};
use crate::reference::Reference;
use crate::relaxed::{self, MathOptions, Rule, DERIVED_ULPS};
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
    /// clBuildProgram options of every kernel; results are judged by what their math options
    /// allow (relaxed.rs).
    pub build_options: String,
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
            build_options: String::new(),
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
    /// The bound column when it is not a plain ulp bound (table 7 rules).
    pub bound_note: Option<String>,
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

    /// A row before any input.
    fn new(func: &'static Func, fmt: Format, judge: Option<&Judge<'_>>) -> Row {
        Row {
            func: func.name,
            ty: fmt.name,
            tested: 0,
            max_ulp: 0.0,
            bound: judge.and_then(|j| j.bound),
            bound_note: judge.and_then(|j| j.relaxed).map(relaxed::rule_text),
            worst: String::new(),
            fails: 0,
            edge_fails: 0,
            first_edge: String::new(),
            vec_mismatch: 0,
            status: String::new(),
            seconds: 0.0,
        }
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
        let exhaustive = exhaustive(func.arity, fmt, opts);
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

/// Writes one chunk of inputs to the device, in the tested type, padded to whole vectors.
fn write_inputs(bufs: &Buffers<'_>, cols: &[Vec<f64>; 3], fmt: Format) -> Result<(), String> {
    let padded = cols[0].len().div_ceil(4) * 4;
    for (col, buf) in cols.iter().zip([&bufs.a, &bufs.b, &bufs.c]) {
        if fmt == F16 {
            let mut v: Vec<u16> = col.iter().map(|&x| ulp::f64_to_f16(x)).collect();
            v.resize(padded, 0);
            buf.write(&v)?;
        } else if fmt == F64 {
            let mut v = col.clone();
            v.resize(padded, 0.0);
            buf.write(&v)?;
        } else {
            let mut v: Vec<f32> = col.iter().map(|&x| ulp::f64_to_f32(x)).collect();
            v.resize(padded, 0.0);
            buf.write(&v)?;
        }
    }
    Ok(())
}

/// Runs the scalar (and 4-wide) kernel of `prog` on the `n` inputs in the buffers: the scalar
/// results and the vector ones.
fn run_kernels(
    prog: &crate::cl::Program<'_>,
    bufs: &Buffers<'_>,
    n: usize,
    fmt: Format,
    vector: bool,
) -> Result<(Vec<f64>, Option<Vec<f64>>), String> {
    let padded = n.div_ceil(4) * 4;
    let mut outs = Vec::new();
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

/// One function's device results for a chunk, with how they are judged.
struct Results<'r> {
    judge: &'r Judge<'r>,
    scalar: &'r [f64],
    vector: Option<&'r [f64]>,
}

/// One chunk's device results against the reference, measured on all cores: each thread
/// evaluates the reference for its slice and judges it (the judging is as costly as the
/// reference, so both are split). Functions measured together share the reference, which is
/// evaluated once; the tallies come back per function, in input order.
fn judge_chunk(results: &[Results<'_>], cols: &[Vec<f64>; 3], special: usize) -> Vec<Vec<Tally>> {
    let n = cols_len(cols);
    let threads = std::thread::available_parallelism()
        .map_or(1, |t| t.get())
        .max(1);
    let per = n.div_ceil(threads).max(1);
    let per_slice: Vec<Vec<Tally>> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..n.div_ceil(per))
            .map(|k| {
                let range = k * per..((k + 1) * per).min(n);
                s.spawn(move || judge_slice(results, cols, special, range))
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("judging thread panicked"))
            .collect()
    });
    let mut per_function: Vec<Vec<Tally>> = results.iter().map(|_| Vec::new()).collect();
    for slice in per_slice {
        for (tallies, tally) in per_function.iter_mut().zip(slice) {
            tallies.push(tally);
        }
    }
    per_function
}

fn judge_slice(
    results: &[Results<'_>],
    cols: &[Vec<f64>; 3],
    special: usize,
    range: std::ops::Range<usize>,
) -> Vec<Tally> {
    let mut tallies: Vec<Tally> = results.iter().map(|_| Tally::default()).collect();
    // The reference in small blocks: buffers that stay in cache and are not page-faulted in
    // anew for every chunk.
    const BLOCK: usize = 4096;
    let (mut hi, mut lo) = (vec![0.0; BLOCK], vec![0.0; BLOCK]);
    let (mut derived, mut derived_tail) = (vec![0.0; BLOCK], vec![0.0; BLOCK]);
    let mut start = range.start;
    while start < range.end {
        let block = start..(start + BLOCK).min(range.end);
        start = block.end;
        let len = block.len();
        let args = [
            &cols[0][block.clone()],
            &cols[1][block.clone()],
            &cols[2][block.clone()],
        ];
        reference_block(results[0].judge, args, &mut hi[..len], &mut lo[..len]);
        for (r, t) in results.iter().zip(&mut tallies) {
            if let Some(d) = r.judge.derived {
                // The derived formula is a float value: its tail is zero.
                let [a, b, c] = args;
                let (value, tail) = (&mut derived[..len], &mut derived_tail[..len]);
                d.eval(r.judge.fmt, a, b, c, value, tail);
            }
            judge_block(r, cols, special, block.clone(), [&hi, &lo, &derived], t);
        }
    }
    tallies
}

/// The reference of one block of inputs, as hi + lo.
fn reference_block(judge: &Judge<'_>, [a, b, c]: [&[f64]; 3], hi: &mut [f64], lo: &mut [f64]) {
    if judge.fmt == F16 && judge.func.name == "nextafter" {
        // Defined by the format: the neighbouring half (reference.c steps in float or double
        // only).
        for i in 0..a.len() {
            hi[i] = ulp::next_half(a[i], b[i]);
            lo[i] = 0.0;
        }
    } else {
        judge.reference.eval(judge.fmt, a, b, c, hi, lo);
    }
}

/// Judges one function's results for one block of inputs against the block's reference
/// (`hi + lo`, and the derived formula where table 7 has one).
fn judge_block(
    results: &Results<'_>,
    cols: &[Vec<f64>; 3],
    special: usize,
    range: std::ops::Range<usize>,
    [hi, lo, derived]: [&[f64]; 3],
    t: &mut Tally,
) {
    let Results {
        judge,
        scalar,
        vector,
    } = *results;
    let func = judge.func;
    let fmt = judge.fmt;
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
            // The exact reference itself: no error, nothing an edge case or (outside table 7,
            // whose absolute bounds treat infinities apart) a bound could object to.
            if judge.relaxed.is_none() && lo[j] == 0.0 && same(got, hi[j]) {
                continue;
            }
            let derived = judge.derived.map(|_| derived[j]);
            let (err, fail) = judge.judge(got, args, hi[j], lo[j], derived);
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
            if fail {
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
    /// Table 7 (float under -cl-unsafe-math-optimizations): replaces `bound` for judging.
    pub relaxed: Option<Rule>,
    /// The derived formula of a table 7 rule, evaluated in float.
    pub derived: Option<Reference>,
    /// -cl-finite-math-only: results for infinite or NaN arguments or results are not judged.
    pub finite_only: bool,
    /// -cl-no-signed-zeros: the sign of a zero result is not judged.
    pub no_signed_zeros: bool,
    /// The 6.7 edge cases must hold (not under -cl-unsafe-math-optimizations).
    pub edge_cases: bool,
}

impl<'a> Judge<'a> {
    /// How `func` in `fmt` is judged for programs built with `math` options, on a device that
    /// flushes float subnormals (`device_ftz`) and, with `correctly_rounded`, is held to
    /// correctly rounded float divide and sqrt.
    pub fn new(
        func: &'a Func,
        fmt: Format,
        math: &MathOptions,
        device_ftz: bool,
        correctly_rounded: bool,
    ) -> Result<Judge<'a>, String> {
        let double = fmt == F64;
        let bound = if correctly_rounded {
            crate::funcs::CR
        } else if double {
            func.f64_bound.flatten()
        } else if fmt == F16 {
            func.f16_bound.flatten()
        } else {
            func.f32_bound
        };
        let reference =
            |name: &str| Reference::by_name(name).ok_or_else(|| format!("no reference {name}"));
        let relaxed = (fmt == F32 && math.unsafe_math && !correctly_rounded)
            .then(|| relaxed::rule(func.name))
            .flatten();
        let derived = match relaxed {
            Some(Rule::Derived { reference: r, .. }) => Some(reference(r)?),
            _ => None,
        };
        Ok(Judge {
            func,
            reference: reference(func.reference)?,
            double,
            fmt,
            bound,
            // The CTS applies its flush-to-zero rules in relaxed mode too.
            ftz: (fmt == F32 && (device_ftz || math.denorms_are_zero || math.unsafe_math))
                || func.kind == Kind::Half,
            tol: if double {
                1.0 / 512.0
            } else {
                1.0 / (1 << 20) as f64
            },
            relaxed,
            derived,
            finite_only: math.finite_only,
            no_signed_zeros: math.no_signed_zeros,
            edge_cases: !math.unsafe_math,
        })
    }

    /// The error of one result in ulps (as [`Judge::error`]) and whether it fails: beyond the
    /// bound or, under table 7, outside what the rule accepts. `derived` is the derived
    /// formula's value for these arguments.
    pub fn judge(
        &self,
        got: f64,
        args: [f64; 3],
        hi: f64,
        lo: f64,
        derived: Option<f64>,
    ) -> (f64, bool) {
        let err = self.error(got, args, hi, lo);
        if self.finite_only
            && !(args[..self.func.arity].iter().all(|x| x.is_finite())
                && self.fmt.round(hi).is_finite())
        {
            return (err, false);
        }
        let fail = match self.relaxed {
            None => self.bound.is_some_and(|b| err > b + self.tol),
            Some(rule) => !self.relaxed_accepts(rule, got, args, hi, lo, derived),
        };
        (err, fail)
    }

    /// Whether table 7's `rule` accepts `got`, with the flush-to-zero allowances (the CTS
    /// applies them in relaxed mode).
    fn relaxed_accepts(
        &self,
        rule: Rule,
        got: f64,
        args: [f64; 3],
        hi: f64,
        lo: f64,
        derived: Option<f64>,
    ) -> bool {
        let x = args[0];
        let within_ulps =
            |b: f64| self.error_within(got, args, hi, lo, b + self.tol) <= b + self.tol;
        let within_abs = |abs: f64| {
            let exact = |h: f64, l: f64| (got - h - ulp::unscale_lo(h, l)).abs() <= abs;
            if exact(hi, lo) {
                return true;
            }
            // Rule 5: the arguments with subnormals flushed.
            self.ftz
                && self.flushed_variants(args).into_iter().any(|f| {
                    let (h, l) = self.reference.one(self.fmt, f[0], f[1], f[2]);
                    exact(h, l)
                })
        };
        match rule {
            Rule::Ulp(b) => within_ulps(b),
            Rule::AbsWithin { limit, abs } => x.abs() > limit || within_abs(abs),
            Rule::ExpUlp => within_ulps(3.0 + (2.0 * x).abs().floor()),
            Rule::LogAbs => {
                if (0.5..=2.0).contains(&x) {
                    within_abs(1.0 / (1 << 21) as f64)
                } else {
                    within_ulps(3.0)
                }
            }
            Rule::Divide => {
                let in_range = |v: f64| (2f64.powi(-62)..=2f64.powi(62)).contains(&v.abs());
                !(in_range(args[0]) && in_range(args[1])) || within_ulps(2.5)
            }
            Rule::Derived { domain, .. } => {
                if !domain.defined(args[0], args[1]) {
                    return true;
                }
                if within_ulps(DERIVED_ULPS)
                    || (got == 0.0 && domain.zero_allowed(args[0], args[1]))
                {
                    return true;
                }
                derived.is_some_and(|d| {
                    d.is_finite()
                        && ulp::ulp_error(got, d, 0.0, self.fmt).abs() <= DERIVED_ULPS + self.tol
                })
            }
        }
    }

    /// |error| in ulps of one result, with the allowances the CTS makes (mad's two forms,
    /// flush-to-zero rules 4 and 5, tried when the error is over the bound); infinite when
    /// wrong beyond measure.
    pub fn error(&self, got: f64, args: [f64; 3], hi: f64, lo: f64) -> f64 {
        self.error_within(
            got,
            args,
            hi,
            lo,
            self.bound.unwrap_or(f64::INFINITY) + self.tol,
        )
    }

    /// [`Judge::error`] with the flush-to-zero allowances tried when the error is over `limit`.
    fn error_within(&self, got: f64, args: [f64; 3], hi: f64, lo: f64, limit: f64) -> f64 {
        // CTS rule 1: the reference rounded to the format is accepted; it matters where the
        // reference overflows the format but not the double it is carried in (then only the
        // infinity is right, and ulp_error would measure it against the finite reference).
        // Only a reference at or beyond the largest finite value can round to infinity (its
        // tail is far below half an ulp of the format).
        if hi.abs() >= self.fmt.max_finite() {
            let rounded = self.fmt.round(hi + ulp::unscale_lo(hi, lo));
            if rounded.is_infinite() && got == rounded {
                return 0.0;
            }
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
        if self.ftz && err > limit {
            // Rule 4: a subnormal exact result may come back as zero.
            if got == 0.0 && hi.abs() < self.fmt.min_normal() {
                return 0.0;
            }
            // Rule 5: the result for the arguments with subnormals flushed.
            for f in self.flushed_variants(args) {
                let (h, l) = self.reference.one(self.fmt, f[0], f[1], f[2]);
                // Rule 4 on it: a subnormal result for the flushed arguments may be zero.
                if got == 0.0 && h.abs() < self.fmt.min_normal() {
                    return 0.0;
                }
                let e = ulp::ulp_error(got, h, l, self.fmt).abs();
                if e <= limit {
                    return e.min(err);
                }
            }
        }
        err
    }

    /// The arguments with their subnormals flushed to zeros of either sign (the sign of a
    /// flushed zero is unspecified, env 6.7.3; the CTS tries both); empty when none is
    /// subnormal.
    fn flushed_variants(&self, args: [f64; 3]) -> Vec<[f64; 3]> {
        let arity = self.func.arity;
        let subnormal: Vec<usize> = (0..arity)
            .filter(|&k| flush(args[k], self.fmt) != args[k])
            .collect();
        (0..1usize << subnormal.len())
            .map(|signs| {
                let mut f = args;
                for (bit, &k) in subnormal.iter().enumerate() {
                    f[k] = if signs >> bit & 1 == 0 {
                        flush(args[k], self.fmt)
                    } else {
                        -flush(args[k], self.fmt)
                    };
                }
                f
            })
            .filter(|_| !subnormal.is_empty())
            .collect()
    }

    /// Env 6.7.3 in flush-to-zero mode: `got` is a zero for a subnormal result, or the exact
    /// result for the arguments with their subnormals flushed (or zero if that is subnormal).
    /// An inexact result for flushed arguments is no exact prescription: the error measure
    /// judges it.
    fn flush_conforms(&self, got: f64, args: [f64; 3], hi: f64) -> bool {
        let tiny = |h: f64| h.abs() < self.fmt.min_normal();
        if got == 0.0 && tiny(hi) {
            return true;
        }
        self.flushed_variants(args).into_iter().any(|f| {
            let (h, l) = self.reference.one(self.fmt, f[0], f[1], f[2]);
            l != 0.0
                || (self.fmt.round(h) != h && !h.is_nan())
                || same(got, h)
                || (got == 0.0 && tiny(h))
        })
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
        // Only special inputs and zero results are prescribed (the rest of this function
        // narrows that down); this first test is what most results take.
        if !special && hi != 0.0 {
            return None;
        }
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
        if !self.edge_cases || (self.finite_only && !hi.is_finite()) {
            return None;
        }
        let zero_rule =
            hi == 0.0 && self.func.kind != Kind::ZeroSignFree && !self.ftz && !self.no_signed_zeros;
        if !(special || zero_rule) {
            return None;
        }
        if self.func.kind == Kind::Native || (special && self.func.kind == Kind::Mad) {
            return None;
        }
        if self.ftz && self.flush_conforms(got, args, hi) {
            return None;
        }
        let ok = if hi == 0.0 && (self.func.kind == Kind::ZeroSignFree || self.no_signed_zeros) {
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

/// Whether float `func` is held to correct rounding (the CTS's divide_cr and sqrt_cr): the device
/// reports CL_FP_CORRECTLY_ROUNDED_DIVIDE_SQRT, and the build options ask for it or do not ask
/// for table 7 instead (the checker then adds the option itself).
pub fn correctly_rounded(dev: &Device, func: &Func, fmt: Format, math: &MathOptions) -> bool {
    fmt == F32
        && dev.cr_divide_sqrt_f32
        && matches!(func.name, "divide" | "sqrt")
        && (math.correctly_rounded_divide_sqrt || !math.unsafe_math)
}

/// Measures one function in one type.
pub fn check(dev: &Device, func: &'static Func, fmt: Format, opts: &Options) -> Row {
    check_together(dev, &[func], fmt, opts)
        .pop()
        .expect("one row per function")
}

/// Whether `a` and `b` can be measured in one pass ([`check_together`]): they see the same
/// inputs (every value of the type, so no per-function random stream) and share the reference,
/// so the reference, the costly part of a full run, is evaluated once for both. Table 7's
/// derived formulas are per function: relaxed float runs are not shared. (The one reference
/// defined by the format, half nextafter, has two arguments: never exhaustive.)
pub fn shares_pass(a: &Func, b: &Func, fmt: Format, opts: &Options) -> bool {
    a.reference == b.reference
        && a.arity == b.arity
        && exhaustive(a.arity, fmt, opts)
        && !(fmt == F32 && MathOptions::parse(&opts.build_options).unsafe_math)
}

/// Every value of the type is an input: unary half functions (all 2^16 halves are cheap), and
/// unary float ones in full runs.
fn exhaustive(arity: usize, fmt: Format, opts: &Options) -> bool {
    arity == 1 && (fmt == F16 || (opts.full && fmt == F32))
}

/// How one function is measured in a pass, and its row so far.
struct Measured<'d> {
    judge: Judge<'static>,
    prog: crate::cl::Program<'d>,
    row: Row,
}

/// Measures functions in one type in one pass over the inputs, one row each; every pair must
/// [share a pass](shares_pass). Each row's time is the whole pass's.
pub fn check_together(
    dev: &Device,
    funcs: &[&'static Func],
    fmt: Format,
    opts: &Options,
) -> Vec<Row> {
    assert!(
        !funcs.is_empty() && funcs.windows(2).all(|w| shares_pass(w[0], w[1], fmt, opts)),
        "functions measured together must share their inputs and reference"
    );
    let start = Instant::now();
    let math = MathOptions::parse(&opts.build_options);
    let finish = |mut row: Row, status: String| {
        row.status = status;
        row.seconds = start.elapsed().as_secs_f64();
        row
    };
    // Rows that ended before any input (no judge, build error), and the functions measured.
    let mut done: Vec<(usize, Row)> = Vec::new();
    let mut measured: Vec<(usize, Measured<'_>)> = Vec::new();
    for (k, &func) in funcs.iter().enumerate() {
        match prepare(dev, func, fmt, opts, &math) {
            Ok(m) => measured.push((k, m)),
            Err(unmeasured) => {
                let (row, status) = *unmeasured;
                done.push((k, finish(row, status)));
            }
        }
    }
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
        Err(e) => {
            done.extend(
                measured
                    .into_iter()
                    .map(|(k, m)| (k, finish(m.row, e.clone()))),
            );
            return in_input_order(done);
        }
    };
    let mut inputs = Inputs::new(funcs[0], fmt, opts);
    let mut chunks = 0u64;
    while !measured.is_empty() {
        let Some((cols, special)) = inputs.next() else {
            break;
        };
        chunks += 1;
        if opts.full && chunks.is_multiple_of(64) {
            // Full runs take minutes per row: show that they progress.
            for (_, m) in &measured {
                eprintln!(
                    "  {} {}: {} inputs in {:.0} s, max {:.3} ulp so far",
                    m.row.func,
                    fmt.name,
                    m.row.tested,
                    start.elapsed().as_secs_f64(),
                    m.row.max_ulp
                );
            }
        }
        if let Err(e) = write_inputs(&bufs, &cols, fmt) {
            let status = format!("run error: {e}");
            done.extend(
                measured
                    .drain(..)
                    .map(|(k, m)| (k, finish(m.row, status.clone()))),
            );
            break;
        }
        let mut outputs = Vec::new();
        let mut k = 0;
        while k < measured.len() {
            match run_kernels(
                &measured[k].1.prog,
                &bufs,
                cols_len(&cols),
                fmt,
                opts.vector,
            ) {
                Ok(o) => {
                    outputs.push(o);
                    k += 1;
                }
                Err(e) => {
                    let (at, m) = measured.remove(k);
                    done.push((at, finish(m.row, format!("run error: {e}"))));
                }
            }
        }
        if measured.is_empty() {
            break;
        }
        let results: Vec<Results<'_>> = measured
            .iter()
            .zip(&outputs)
            .map(|((_, m), (scalar, vector))| Results {
                judge: &m.judge,
                scalar,
                vector: vector.as_deref(),
            })
            .collect();
        let tallies = judge_chunk(&results, &cols, special);
        for ((_, m), tallies) in measured.iter_mut().zip(tallies) {
            for tally in tallies {
                tally.merge_into(&mut m.row);
            }
        }
    }
    for (k, m) in measured {
        let status = if m.row.fails > 0 || m.row.edge_fails > 0 {
            "FAIL"
        } else if m.judge.bound.is_none() {
            "measured"
        } else {
            "ok"
        };
        done.push((k, finish(m.row, status.to_string())));
    }
    in_input_order(done)
}

/// Rows tagged with their function's place in the pass, in that order.
fn in_input_order(mut rows: Vec<(usize, Row)>) -> Vec<Row> {
    rows.sort_by_key(|&(k, _)| k);
    rows.into_iter().map(|(_, row)| row).collect()
}

/// The judge and the built program of one function, or its row and status when it cannot be
/// measured (no reference, build error).
fn prepare<'d>(
    dev: &'d Device,
    func: &'static Func,
    fmt: Format,
    opts: &Options,
    math: &MathOptions,
) -> Result<Measured<'d>, Box<(Row, String)>> {
    let correctly_rounded = correctly_rounded(dev, func, fmt, math);
    let mut build_options = opts.build_options.clone();
    if correctly_rounded && !math.correctly_rounded_divide_sqrt {
        build_options.push(' ');
        build_options.push_str(relaxed::CR_DIVIDE_SQRT);
    }
    let judge = Judge::new(func, fmt, math, dev.ftz_f32, correctly_rounded)
        .map_err(|e| Box::new((Row::new(func, fmt, None), e)))?;
    let row = Row::new(func, fmt, Some(&judge));
    match dev.program(&source(func, fmt), &build_options) {
        Ok(prog) => Ok(Measured { judge, prog, row }),
        Err(e) => {
            let first = e
                .lines()
                .find(|l| l.contains("error"))
                .unwrap_or(e.lines().next().unwrap_or(""))
                .to_string();
            Err(Box::new((row, format!("build error: {first}"))))
        }
    }
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
        r.bound_note
            .clone()
            .unwrap_or_else(|| crate::funcs::bound_text(r.bound)),
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::funcs::by_name;

    fn judge(name: &str, fmt: Format, options: &str, cr: bool) -> Judge<'static> {
        let math = MathOptions::parse(options);
        Judge::new(by_name(name).unwrap(), fmt, &math, false, cr).unwrap()
    }

    /// Whether `got` fails for `args` (the reference computed here).
    fn fails(j: &Judge<'_>, got: f64, args: [f64; 3]) -> bool {
        let (hi, lo) = j.reference.one(j.fmt, args[0], args[1], args[2]);
        let derived = j.derived.map(|d| d.one(j.fmt, args[0], args[1], args[2]).0);
        j.judge(got, args, hi, lo, derived).1
    }

    fn ulps_away(x: f32, n: i32) -> f64 {
        // Wrapping: the shared-pass test moves NaN and infinite results too.
        f64::from(f32::from_bits(x.to_bits().wrapping_add_signed(n)))
    }

    #[test]
    fn a_shared_pass_judges_each_function_as_its_own_pass_would() {
        // Three judges for one reference: a 4-ulp bound, a domain-limited 8192-ulp bound with
        // flushing, and none at all.
        let names = ["sincos.cos", "half_cos", "native_cos"];
        let judges: Vec<Judge<'_>> = names.iter().map(|n| judge(n, F32, "", false)).collect();
        let mut a = inputs::specials(false);
        let special = a.len();
        let mut rng = Rng::new(7);
        a.extend((0..20_000).map(|_| inputs::random(&mut rng, false)));
        let n = a.len();
        let cols = [a.clone(), vec![0.0; n], vec![0.0; n]];
        // Device results: the rounded reference moved by 5, 10 000 and 10^6 ulps on a different
        // share of the inputs per function, and vector lanes that differ from the scalar ones.
        let device: Vec<(Vec<f64>, Vec<f64>)> = (0..names.len())
            .map(|k| {
                let moved = |i: usize, step: usize| {
                    let (hi, _) = judges[k].reference.one(F32, a[i], 0.0, 0.0);
                    let r = hi as f32;
                    if i % step == k {
                        ulps_away(r, [5, 10_000, 1_000_000][k])
                    } else {
                        f64::from(r)
                    }
                };
                let scalar = (0..n).map(|i| moved(i, 7 + k)).collect();
                let vector = (0..n).map(|i| moved(i, 5)).collect();
                (scalar, vector)
            })
            .collect();
        let results: Vec<Results<'_>> = judges
            .iter()
            .zip(&device)
            .map(|(judge, (scalar, vector))| Results {
                judge,
                scalar,
                vector: Some(vector),
            })
            .collect();
        let row = |k: usize, tallies: Vec<Tally>| {
            let mut row = Row::new(by_name(names[k]).unwrap(), F32, Some(&judges[k]));
            for t in tallies {
                t.merge_into(&mut row);
            }
            row
        };
        let together = judge_chunk(&results, &cols, special);
        for (k, tallies) in together.into_iter().enumerate() {
            let shared = row(k, tallies);
            let alone = row(k, judge_chunk(&results[k..=k], &cols, special).remove(0));
            let fields = |r: &Row| {
                (
                    r.tested,
                    r.max_ulp.to_bits(),
                    r.worst.clone(),
                    r.fails,
                    r.edge_fails,
                    r.first_edge.clone(),
                    r.vec_mismatch,
                )
            };
            assert_eq!(fields(&shared), fields(&alone), "{}", names[k]);
            // Each function was judged by its own rules.
            assert_eq!(shared.fails > 0, k < 2, "{}", names[k]);
            assert!(shared.vec_mismatch > 0 && shared.max_ulp >= 5.0);
        }
    }

    #[test]
    fn only_functions_with_the_same_inputs_and_reference_share_a_pass() {
        let f = |n| by_name(n).unwrap();
        let full = Options {
            full: true,
            ..Options::default()
        };
        let quick = Options::default();
        // Every float in a full run, every half always: the inputs do not depend on the function.
        assert!(shares_pass(f("sincos.cos"), f("half_cos"), F32, &full));
        assert!(shares_pass(f("cos"), f("sincos.cos"), F16, &quick));
        // Random inputs are drawn per function.
        assert!(!shares_pass(f("sincos.cos"), f("half_cos"), F32, &quick));
        assert!(!shares_pass(f("cos"), f("sincos.cos"), F64, &full));
        assert!(!shares_pass(f("pow"), f("half_powr"), F32, &full));
        // Different references, or table 7's per-function rules.
        assert!(!shares_pass(f("cos"), f("sin"), F32, &full));
        let relaxed = Options {
            build_options: "-cl-fast-relaxed-math".into(),
            ..full
        };
        assert!(!shares_pass(f("sincos.cos"), f("half_cos"), F32, &relaxed));
    }

    #[test]
    fn correctly_rounded_divide_and_sqrt_allow_half_an_ulp() {
        let exact = (1.0f32 / 3.0) as f64;
        let plain = judge("divide", F32, "", false);
        assert!(!fails(&plain, ulps_away(1.0 / 3.0, 2), [1.0, 3.0, 0.0]));
        let cr = judge("divide", F32, relaxed::CR_DIVIDE_SQRT, true);
        assert_eq!(cr.bound, crate::funcs::CR);
        assert!(!fails(&cr, exact, [1.0, 3.0, 0.0]));
        assert!(fails(&cr, ulps_away(1.0 / 3.0, 1), [1.0, 3.0, 0.0]));
        let sqrt = judge("sqrt", F32, "", true);
        assert!(fails(&sqrt, ulps_away(2f32.sqrt(), -1), [2.0, 0.0, 0.0]));
    }

    #[test]
    fn table_7_absolute_and_input_dependent_bounds() {
        let fast = "-cl-fast-relaxed-math";
        let sin = judge("sin", F32, fast, false);
        let s1 = f64::from(1f32.sin());
        assert!(!fails(&sin, s1 + 4.0e-4, [1.0, 0.0, 0.0]));
        assert!(fails(&sin, s1 + 6.0e-4, [1.0, 0.0, 0.0]));
        // Outside [-pi, pi] the error may be larger.
        assert!(!fails(&sin, 0.5, [4.0, 0.0, 0.0]));
        // Without the option, the full-profile 4 ulp hold.
        assert!(fails(
            &judge("sin", F32, "", false),
            s1 + 4.0e-4,
            [1.0, 0.0, 0.0]
        ));
        // exp: 3 + floor(|2x|) ulp: 23 at x = 10.
        let exp = judge("exp", F32, fast, false);
        let e10 = 10f32.exp();
        assert!(!fails(&exp, ulps_away(e10, 22), [10.0, 0.0, 0.0]));
        assert!(fails(&exp, ulps_away(e10, 25), [10.0, 0.0, 0.0]));
        // log on [0.5, 2]: absolute 2^-21, huge in ulps near 1.
        let log = judge("log", F32, fast, false);
        let x = 1.0 + 2f64.powi(-20);
        assert!(!fails(
            &log,
            f64::from((x.ln() + 2e-7) as f32),
            [x, 0.0, 0.0]
        ));
        assert!(fails(
            &log,
            f64::from((x.ln() + 1e-6) as f32),
            [x, 0.0, 0.0]
        ));
        // divide: 2.5 ulp inside [2^-62, 2^62], anything outside.
        let div = judge("divide", F32, fast, false);
        assert!(!fails(&div, ulps_away(1.0 / 3.0, 2), [1.0, 3.0, 0.0]));
        assert!(fails(&div, ulps_away(1.0 / 3.0, 3), [1.0, 3.0, 0.0]));
        assert!(!fails(&div, 7.0, [1.0, 1e30, 0.0]));
        // ...unless the program asked for correctly rounded division as well.
        let both = judge(
            "divide",
            F32,
            &format!("{fast} {}", relaxed::CR_DIVIDE_SQRT),
            true,
        );
        assert!(both.relaxed.is_none());
        assert!(fails(&both, ulps_away(1.0 / 3.0, 1), [1.0, 3.0, 0.0]));
        // acos: 4096 ulp.
        let acos = judge("acos", F32, fast, false);
        let a = 0.3f32.acos();
        assert!(!fails(
            &acos,
            ulps_away(a, 4000),
            [f64::from(0.3f32), 0.0, 0.0]
        ));
        assert!(fails(
            &acos,
            ulps_away(a, 4200),
            [f64::from(0.3f32), 0.0, 0.0]
        ));
        // Double keeps its full-profile bound.
        let d = judge("sin", F64, fast, false);
        assert!(fails(&d, 1f64.sin() + 1e-10, [1.0, 0.0, 0.0]));
    }

    #[test]
    fn table_7_derived_implementations() {
        let fast = "-cl-fast-relaxed-math";
        let pow = judge("pow", F32, fast, false);
        assert!(pow.derived.is_some());
        // 8192 ulp of the exact value...
        let p = 1.5f32.powf(40.0);
        assert!(!fails(&pow, ulps_away(p, 8000), [1.5, 40.0, 0.0]));
        assert!(fails(&pow, ulps_away(p, 9000), [1.5, 40.0, 0.0]));
        // ...or of exp2(y * log2(x)) in float, which is off by itself at large exponents.
        // Find a base where that evaluation is tens of ulps off (the rounding of log2(x) times
        // an exponent near 120).
        let relaxed_pow = Reference::by_name("relaxed_pow").unwrap();
        let (x, y, derived, exact, off) = (1..200)
            .map(|k| {
                let x = f64::from(1.0f32 + k as f32 / 256.0);
                let y = f64::from((120.0 / x.log2()).round() as f32);
                let derived = relaxed_pow.one(F32, x, y, 0.0).0;
                let exact = x.powf(y);
                (
                    x,
                    y,
                    derived,
                    exact,
                    ulp::ulp_error(derived, exact, 0.0, F32),
                )
            })
            .find(|r| r.4.abs() > 30.0)
            .expect("a base where the derived formula is off");
        // 8180 ulp beyond the formula's value, away from the exact one: over 8192 from it.
        let got = ulps_away(derived as f32, 8180 * off.signum() as i32);
        assert!(ulp::ulp_error(got, exact, 0.0, F32).abs() > 8192.0);
        assert!(!fails(&pow, got, [x, y, 0.0]));
        // Undefined: 0^0 and negative bases with non-integer exponents; 0^y may be 0.
        assert!(!fails(&pow, 42.0, [0.0, 0.0, 0.0]));
        assert!(!fails(&pow, 42.0, [-2.0, 0.5, 0.0]));
        assert!(!fails(&pow, 0.0, [0.0, -3.0, 0.0]));
        assert!(fails(&pow, 42.0, [-2.0, 3.0, 0.0]));
        // cosh is defined on [-88, 88] only.
        let cosh = judge("cosh", F32, fast, false);
        assert!(!fails(&cosh, 1.0, [89.0, 0.0, 0.0]));
        assert!(fails(&cosh, 1.0, [80.0, 0.0, 0.0]));
    }

    #[test]
    fn flush_to_zero_alternatives_for_exact_results() {
        let tiny = f64::from(f32::from_bits(1));
        let exact = |j: &Judge<'_>, got: f64, x: f64| {
            let (hi, lo) = j.reference.one(F32, x, 0.0, 0.0);
            j.exactness(got, [x, 0.0, 0.0], hi, lo, true).is_none()
        };
        let ceil = judge("ceil", F32, "-cl-denorms-are-zero", false);
        assert!(exact(&ceil, 1.0, tiny) && exact(&ceil, 0.0, tiny));
        assert!(!exact(&ceil, 0.5, tiny));
        assert!(!exact(&judge("ceil", F32, "", false), 0.0, tiny));
        // rsqrt(-0) = -inf: the flushed zero may have either sign.
        let rsqrt = judge("rsqrt", F32, "-cl-denorms-are-zero", false);
        assert!(exact(&rsqrt, f64::NEG_INFINITY, -tiny) && exact(&rsqrt, f64::NAN, -tiny));
        assert!(exact(&rsqrt, f64::INFINITY, -tiny));
        assert!(!exact(&rsqrt, 1.0, -tiny));
        // A subnormal result flushed: exp2(-127).
        // fma with a subnormal addend flushed and the product subnormal: zero (rules 3 + 4).
        let fma = judge("fma", F32, "-cl-denorms-are-zero", false);
        let args = [2.0070122e-20f32, -5.0282247e-19, -4.498214e-39].map(f64::from);
        let (hi, lo) = fma.reference.one(F32, args[0], args[1], args[2]);
        assert!(hi.abs() > f64::from(f32::MIN_POSITIVE));
        assert_eq!(fma.error(0.0, args, hi, lo), 0.0);
        assert!(!fma.judge(0.0, args, hi, lo, None).1);
        assert!(
            judge("fma", F32, "", false)
                .judge(0.0, args, hi, lo, None)
                .1
        );
        let exp2 = judge("exp2", F32, "-cl-denorms-are-zero", false);
        assert!(exact(&exp2, 0.0, -127.0));
        assert!(!exact(&exp2, f64::from(f32::MIN_POSITIVE), -127.0));
    }

    #[test]
    fn finite_math_and_signed_zeros() {
        let finite = judge("exp", F32, "-cl-finite-math-only", false);
        assert!(!fails(&finite, 0.0, [f64::INFINITY, 0.0, 0.0]));
        assert!(
            !fails(&finite, 0.0, [100.0, 0.0, 0.0]),
            "exp(100) overflows float"
        );
        assert!(fails(&finite, 0.0, [1.0, 0.0, 0.0]));
        assert!(fails(
            &judge("exp", F32, "", false),
            0.0,
            [f64::INFINITY, 0.0, 0.0]
        ));
        // The sign of a zero result: judged by default, not under -cl-no-signed-zeros.
        let sin = judge("sin", F32, "", false);
        assert!(sin
            .exactness(0.0, [-0.0, 0.0, 0.0], -0.0, 0.0, true)
            .is_some());
        let nsz = judge("sin", F32, "-cl-no-signed-zeros", false);
        assert!(nsz
            .exactness(0.0, [-0.0, 0.0, 0.0], -0.0, 0.0, true)
            .is_none());
        assert!(nsz
            .exactness(1.0, [0.0, 0.0, 0.0], 0.0, 0.0, true)
            .is_some());
        // Unsafe math may break the 6.7 edge cases.
        let fast = judge("sin", F32, "-cl-unsafe-math-optimizations", false);
        assert!(fast
            .exactness(0.0, [-0.0, 0.0, 0.0], -0.0, 0.0, true)
            .is_none());
    }
}
