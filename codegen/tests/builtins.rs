//! OpenCL.std integer, geometric, smoothstep and shuffle builtins at every width and signedness,
//! through real kernels at -O0 and optimised, against exact host references (or, for the
//! floating-point geometric functions, references computed in higher precision).

mod common;

use common::*;

/// (OpenCL C type, bits, signed)
const INT_TYPES: [(&str, u32, bool); 8] = [
    ("char", 8, true),
    ("uchar", 8, false),
    ("short", 16, true),
    ("ushort", 16, false),
    ("int", 32, true),
    ("uint", 32, false),
    ("long", 64, true),
    ("ulong", 64, false),
];

fn range(bits: u32, signed: bool) -> (i128, i128) {
    if signed {
        (-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1)
    } else {
        (0, (1i128 << bits) - 1)
    }
}

/// `v` reduced modulo 2^bits and read back with the type's signedness.
fn wrap(v: i128, bits: u32, signed: bool) -> i128 {
    let mask = (1u128 << bits) - 1;
    let u = (v as u128) & mask;
    if signed && (u >> (bits - 1)) & 1 == 1 {
        (u | !mask) as i128
    } else {
        u as i128
    }
}

fn pattern(v: i128, bits: u32) -> u128 {
    (v as u128) & ((1u128 << bits) - 1)
}

/// mul_hi exactly: the product of two 64-bit unsigned values does not fit in i128.
fn mul_hi(x: i128, y: i128, bits: u32, signed: bool) -> i128 {
    if signed {
        (x * y) >> bits
    } else {
        (((x as u128) * (y as u128)) >> bits) as i128
    }
}

fn mad_sat(x: i128, y: i128, z: i128, bits: u32, signed: bool) -> i128 {
    let (lo, hi) = range(bits, signed);
    if signed {
        (x * y + z).clamp(lo, hi)
    } else {
        ((x as u128) * (y as u128) + z as u128).min(hi as u128) as i128
    }
}

fn int_reference(op: usize, x: i128, y: i128, z: i128, bits: u32, signed: bool) -> i128 {
    let (lo, hi) = range(bits, signed);
    let px = pattern(x, bits);
    match op {
        0 => (x + y).clamp(lo, hi),
        1 => (x - y).clamp(lo, hi),
        2 => (x + y) >> 1,
        3 => (x + y + 1) >> 1,
        4 => mad_sat(x, y, z, bits, signed),
        5 => {
            let r = (pattern(y, bits) % u128::from(bits)) as u32;
            let rotated = if r == 0 {
                px
            } else {
                (px << r | px >> (bits - r)) & ((1u128 << bits) - 1)
            };
            wrap(rotated as i128, bits, signed)
        }
        6 => i128::from(px.leading_zeros() - (128 - bits)),
        7 => i128::from(if px == 0 { bits } else { px.trailing_zeros() }),
        8 => i128::from(px.count_ones()),
        9 => mul_hi(x, y, bits, signed),
        10 => wrap(mul_hi(x, y, bits, signed) + z, bits, signed),
        11 => x.max(y),
        12 => x.min(y),
        13 => x.clamp(y.min(z), y.max(z)),
        _ => unreachable!("operation {op}"),
    }
}

const INT_OP_NAMES: [&str; 14] = [
    "add_sat", "sub_sat", "hadd", "rhadd", "mad_sat", "rotate", "clz", "ctz", "popcount", "mul_hi",
    "mad_hi", "max", "min", "clamp",
];

/// Edge values of the type followed by random bit patterns.
fn int_inputs(n: usize, bits: u32, signed: bool, rng: &mut Rng) -> Vec<i128> {
    let (lo, hi) = range(bits, signed);
    let mut v = vec![
        0,
        1,
        -1,
        lo,
        hi,
        lo + 1,
        hi - 1,
        2,
        3,
        7,
        hi / 2,
        hi / 2 + 1,
    ];
    v.retain(|&x| x >= lo && x <= hi);
    while v.len() < n {
        let r = i128::from(rng.next()) | (i128::from(rng.next()) << 64);
        // Half the values small, so sums and products do not always saturate.
        let r = if rng.next().is_multiple_of(2) {
            r % 100
        } else {
            r
        };
        v.push(wrap(r, bits, signed));
    }
    v.truncate(n);
    v
}

#[test]
fn integer_builtins_every_width_and_signedness() {
    let lang = common::CL2_0;
    for recipe in RECIPES {
        let p = build_spirv(&spirv_from_c("integer_builtins.cl", recipe, lang));
        for (seed, (ty, bits, signed)) in INT_TYPES.into_iter().enumerate() {
            let n = 256usize;
            let mut rng = Rng(0x9E37_79B9_7F4A_7C15 ^ seed as u64);
            let xs = int_inputs(n, bits, signed, &mut rng);
            // y and z cover every pairing of edge values with x by rotating the list.
            let ys: Vec<i128> = (0..n).map(|i| xs[(i * 7 + 3) % n]).collect();
            let zs: Vec<i128> = (0..n).map(|i| xs[(i * 13 + 5) % n]).collect();
            let size = (bits / 8) as usize;
            let to_bytes = |v: &[i128]| {
                let mut b = vec![0u8; v.len() * size];
                v.iter()
                    .enumerate()
                    .for_each(|(i, &x)| write_int(&mut b, i, bits, x));
                b
            };
            for (kernel, global) in [
                (format!("int_ops_{ty}"), n as u64),
                (format!("int_ops4_{ty}"), n as u64 / 4),
            ] {
                let (mut a, mut b, mut c) = (to_bytes(&xs), to_bytes(&ys), to_bytes(&zs));
                let mut out = vec![0u8; 14 * n * size];
                let mut uout = vec![0u8; n * size];
                launch(
                    &p,
                    &kernel,
                    &mut [
                        Arg::Buf(&mut a),
                        Arg::Buf(&mut b),
                        Arg::Buf(&mut c),
                        Arg::Buf(&mut out),
                        Arg::Buf(&mut uout),
                    ],
                    global,
                    16,
                );
                for i in 0..n {
                    let (x, y, z) = (xs[i], ys[i], zs[i]);
                    for (op, name) in INT_OP_NAMES.iter().enumerate() {
                        let got = read_int(&out, op * n + i, bits, signed);
                        let want = int_reference(op, x, y, z, bits, signed);
                        assert_eq!(
                            got, want,
                            "{recipe:?} {kernel}: {name}({x}, {y}, {z}) element {i}"
                        );
                    }
                    let got = read_int(&uout, i, bits, false);
                    assert_eq!(
                        got,
                        (x - y).abs(),
                        "{recipe:?} {kernel}: abs_diff({x}, {y})"
                    );
                }
            }
        }
    }
}

#[test]
fn upsample_mul24_and_mad24() {
    let lang = common::CL2_0;
    for recipe in RECIPES {
        let p = build_spirv(&spirv_from_c("integer_builtins.cl", recipe, lang));
        let n = 64usize;
        for (seed, (ty, bits, signed)) in INT_TYPES[..6].iter().copied().enumerate() {
            let mut rng = Rng(0xD1B5_4A32_D192_ED03 ^ seed as u64);
            let his = int_inputs(n, bits, signed, &mut rng);
            let los = int_inputs(n, bits, false, &mut rng);
            let size = (bits / 8) as usize;
            let (mut hi, mut lo) = (vec![0u8; n * size], vec![0u8; n * size]);
            for i in 0..n {
                write_int(&mut hi, i, bits, his[i]);
                write_int(&mut lo, i, bits, los[i]);
            }
            let mut out = vec![0u8; n * size * 2];
            launch(
                &p,
                &format!("upsample_{ty}"),
                &mut [Arg::Buf(&mut hi), Arg::Buf(&mut lo), Arg::Buf(&mut out)],
                n as u64,
                8,
            );
            for i in 0..n {
                let want = (his[i] << bits) | los[i];
                let got = read_int(&out, i, bits * 2, signed);
                assert_eq!(got, want, "{recipe:?} upsample({}, {})", his[i], los[i]);
            }
        }
        for (ty, signed) in [("int", true), ("uint", false)] {
            let mut rng = Rng(77);
            // Operands in the 24-bit range the spec defines mul24 for.
            let gen = |rng: &mut Rng| -> i128 {
                let r = i128::from(rng.next() % (1 << 24));
                if signed {
                    r - (1 << 23)
                } else {
                    r
                }
            };
            let xs: Vec<i128> = (0..n).map(|_| gen(&mut rng)).collect();
            let ys: Vec<i128> = (0..n).map(|_| gen(&mut rng)).collect();
            let zs: Vec<i128> = (0..n)
                .map(|_| wrap(rng.next().into(), 32, signed))
                .collect();
            let mut bufs: Vec<Vec<u8>> = [&xs, &ys, &zs]
                .iter()
                .map(|v| {
                    let mut b = vec![0u8; n * 4];
                    v.iter()
                        .enumerate()
                        .for_each(|(i, &x)| write_int(&mut b, i, 32, x));
                    b
                })
                .collect();
            let mut out = vec![0u8; 2 * n * 4];
            let [a, b, c] = &mut bufs[..] else {
                unreachable!()
            };
            launch(
                &p,
                &format!("mul24_{ty}"),
                &mut [Arg::Buf(a), Arg::Buf(b), Arg::Buf(c), Arg::Buf(&mut out)],
                n as u64,
                8,
            );
            for i in 0..n {
                let prod = xs[i] * ys[i];
                assert_eq!(
                    read_int(&out, i, 32, signed),
                    wrap(prod, 32, signed),
                    "{recipe:?} mul24({}, {})",
                    xs[i],
                    ys[i]
                );
                assert_eq!(
                    read_int(&out, n + i, 32, signed),
                    wrap(prod + zs[i], 32, signed),
                    "{recipe:?} mad24({}, {}, {})",
                    xs[i],
                    ys[i],
                    zs[i]
                );
            }
        }
    }
}

/// Component type of the shuffle kernels: (name, bytes, float).
const SHUFFLE_TYPES: [(&str, usize); 6] = [
    ("char", 1),
    ("short", 2),
    ("int", 4),
    ("long", 8),
    ("float", 4),
    ("double", 8),
];

#[test]
fn shuffle_and_shuffle2_every_width_pair() {
    for recipe in RECIPES {
        let p = build_spirv(&spirv_from_c("geometric.cl", recipe, common::CL1_2));
        for (ty, size) in SHUFFLE_TYPES {
            let items = 4usize;
            let mut rng = Rng(0x1234_5678 + size as u64);
            // Components are compared as bit patterns: random bytes are fine for floats too.
            let mut x: Vec<u8> = (0..items * 16 * size).map(|_| rng.next() as u8).collect();
            let mut y: Vec<u8> = (0..items * 16 * size).map(|_| rng.next() as u8).collect();
            // Full-range mask values: only the low bits may count.
            let mut mask: Vec<u8> = (0..items * 16 * size).map(|_| rng.next() as u8).collect();
            let mut out = vec![0u8; items * 240 * size];
            launch(
                &p,
                &format!("shuffle_{ty}"),
                &mut [
                    Arg::Buf(&mut x),
                    Arg::Buf(&mut y),
                    Arg::Buf(&mut mask),
                    Arg::Buf(&mut out),
                ],
                items as u64,
                2,
            );
            let comp = |buf: &[u8], k: usize| buf[k * size..(k + 1) * size].to_vec();
            let bits = size as u32 * 8;
            for item in 0..items {
                let mut slot = item * 240;
                for two in [false, true] {
                    for m in [2usize, 4, 8, 16] {
                        for n in [2usize, 4, 8, 16] {
                            for j in 0..n {
                                let sel = read_int(&mask, item * 16 + j, bits, false) as usize;
                                let candidates = if two { 2 * m } else { m };
                                let k = sel % candidates;
                                let want = if k < m {
                                    comp(&x, item * 16 + k)
                                } else {
                                    comp(&y, item * 16 + k - m)
                                };
                                let name = if two { "shuffle2" } else { "shuffle" };
                                assert_eq!(
                                    comp(&out, slot + j),
                                    want,
                                    "{recipe:?} {ty} {name} m={m} n={n} item {item} lane {j}"
                                );
                            }
                            slot += n;
                        }
                    }
                }
            }
        }
    }
}

/// f64 helpers for a reference length more precise than double: squares and sums kept as
/// double-double (hi + lo), after an exact power-of-two rescaling of the largest component.
fn reference_length(xs: &[f64]) -> f64 {
    if xs.iter().any(|x| x.is_infinite()) {
        return f64::INFINITY;
    }
    if xs.iter().any(|x| x.is_nan()) {
        return f64::NAN;
    }
    let m = xs.iter().fold(0f64, |m, x| m.max(x.abs()));
    if m == 0.0 {
        return 0.0;
    }
    let mut scale = 1f64;
    while m * scale > 2f64.powi(100) {
        scale *= 2f64.powi(-100);
    }
    while m * scale < 2f64.powi(-100) {
        scale *= 2f64.powi(100);
    }
    let (mut hi, mut lo) = (0f64, 0f64);
    for &x in xs {
        let x = x * scale;
        let p = x * x;
        let e = x.mul_add(x, -p);
        // two-sum of hi + p
        let s = hi + p;
        let bb = s - hi;
        let err = (hi - (s - bb)) + (p - bb);
        hi = s;
        lo += err + e;
    }
    let r = hi.sqrt();
    // One Newton step on the double-double: r + (hi + lo - r²) / 2r.
    let rr = r * r;
    let rr_err = r.mul_add(r, -rr);
    let corr = ((hi - rr) - rr_err + lo) / (2.0 * r);
    (r + corr) / scale
}

fn ulp_f32(x: f64) -> f64 {
    let a = (x.abs() as f32).abs();
    let next = a.next_up();
    f64::from(next - a).max(f64::from(f32::from_bits(1)))
}

fn ulp_f64(x: f64) -> f64 {
    let a = x.abs();
    (a.next_up() - a).max(f64::from_bits(1))
}

/// Error of `got` against the exact `want` in ulps of the result type.
fn ulp_error(got: f64, want: f64, double: bool) -> f64 {
    if got == want || (got.is_nan() && want.is_nan()) {
        return 0.0;
    }
    if got.is_infinite() || want.is_infinite() || got.is_nan() || want.is_nan() {
        return f64::INFINITY;
    }
    let ulp = if double { ulp_f64(want) } else { ulp_f32(want) };
    (got - want).abs() / ulp
}

/// Geometric inputs: edge cases first (overflowing and underflowing squares, zeros, infinities,
/// NaN, denormals), then random vectors with exponents across the type's range.
fn geometric_inputs(double: bool, items: usize, rng: &mut Rng) -> Vec<[f64; 4]> {
    let (big, tiny, den) = if double {
        (1e300, 1e-300, 4e-320)
    } else {
        (1e30, 1e-30, 1e-44)
    };
    let inf = f64::INFINITY;
    let mut v = vec![
        [big, big, big, big],
        [tiny, tiny, -tiny, tiny],
        [0.0, -0.0, 0.0, -0.0],
        [-0.0, 0.0, 0.0, 0.0],
        [3.0, 4.0, 12.0, 84.0],
        [inf, 3.0, -inf, -2.0],
        [-5.0, inf, 1.0, 0.0],
        [1.0, f64::NAN, 2.0, 3.0],
        [den, -den, den, 0.0],
        [big, 1.0, tiny, -2.0],
        [-1.0, 0.0, 0.0, 0.0],
        [1.5, -2.25, 1e3, 7.0],
        // Components whose quotient is normal while the component scaled to the largest one's
        // binade would be denormal (CTS geometrics, normalize double).
        if double {
            [
                2f64.powi(520) * 1.3,
                -2f64.powi(-478) * 1.7,
                2f64.powi(-470),
                1.0,
            ]
        } else {
            [1e30, -1e-20, 3e-25, 1.0]
        },
    ];
    let span = if double { 600.0 } else { 70.0 };
    while v.len() < items {
        let mut c = [0f64; 4];
        for x in &mut c {
            let mant = (rng.next() >> 11) as f64 / (1u64 << 53) as f64 + 0.5;
            let e = ((rng.next() % 1000) as f64 / 1000.0 - 0.5) * span;
            let sign = if rng.next().is_multiple_of(2) {
                1.0
            } else {
                -1.0
            };
            // Mostly similar exponents within a vector (the common case), sometimes wild.
            let e = if rng.next().is_multiple_of(4) {
                e
            } else {
                e / 8.0
            };
            *x = sign * mant * e.exp2();
        }
        v.push(c);
    }
    if !double {
        // The kernel sees the single-precision values: so must the reference.
        v.iter_mut().for_each(|c| *c = c.map(|x| x as f32 as f64));
    }
    v
}

/// normalize's reference: the numerical-compliance edge cases, then x / |x| in double-double.
fn reference_normalize(xs: &[f64]) -> Vec<f64> {
    if xs.iter().any(|x| x.is_nan()) {
        return vec![f64::NAN; xs.len()];
    }
    if xs.iter().all(|&x| x == 0.0) {
        return xs.to_vec();
    }
    let v: Vec<f64> = if xs.iter().any(|x| x.is_infinite()) {
        xs.iter()
            .map(|&x| {
                if x.is_infinite() {
                    1f64.copysign(x)
                } else {
                    0f64.copysign(x)
                }
            })
            .collect()
    } else {
        xs.to_vec()
    };
    // Exact power-of-two rescaling keeps the length of a denormal vector precise.
    let m = v.iter().fold(0f64, |m, x| m.max(x.abs()));
    let scale = 2f64.powi(-(m.log2().floor() as i32).clamp(-1000, 1000));
    let l = reference_length(&v.iter().map(|&x| x * scale).collect::<Vec<f64>>());
    // Scaled up before the division, down after it: no component is rounded as a denormal
    // unless its quotient is one.
    v.iter()
        .map(|&x| {
            if scale >= 1.0 {
                x * scale / l
            } else {
                x / l * scale
            }
        })
        .collect()
}

#[test]
fn geometric_functions_against_precise_references() {
    for recipe in RECIPES {
        let p = build_spirv(&spirv_from_c("geometric.cl", recipe, common::CL1_2));
        for double in [false, true] {
            let items = 200usize;
            let mut rng = Rng(if double { 5 } else { 6 });
            let a = geometric_inputs(double, items, &mut rng);
            let mut b = geometric_inputs(double, items, &mut rng);
            b.rotate_left(3);
            let (ty, size) = if double { ("double", 8) } else { ("float", 4) };
            let enc = |v: &[[f64; 4]]| -> Vec<u8> {
                v.iter()
                    .flat_map(|c| c.iter())
                    .flat_map(|&x| {
                        if double {
                            x.to_le_bytes().to_vec()
                        } else {
                            (x as f32).to_le_bytes().to_vec()
                        }
                    })
                    .collect()
            };
            let (mut ab, mut bb) = (enc(&a), enc(&b));
            let mut out = vec![0u8; items * 64 * size];
            launch(
                &p,
                &format!("geo_{ty}"),
                &mut [Arg::Buf(&mut ab), Arg::Buf(&mut bb), Arg::Buf(&mut out)],
                items as u64,
                8,
            );
            let get = |k: usize| {
                if double {
                    read_f64(&out, k)
                } else {
                    f64::from(read_f32(&out, k))
                }
            };
            // Single precision is computed in double: within 1 ulp (0.5 and a double
            // rounding). Double precision keeps the squares' sum in double-double: within 1 ulp
            // for the length, 1.5 for normalize's quotient.
            let (len_tol, norm_tol) = if double { (1.0, 1.5) } else { (1.0, 1.0) };
            for i in 0..items {
                let (x, y) = (&a[i], &b[i]);
                let o = |k: usize| get(64 * i + k);
                for n in 1..=4 {
                    let want = reference_length(&x[..n]);
                    let want = if double { want } else { want as f32 as f64 };
                    let e = ulp_error(o(n - 1), want, double);
                    assert!(
                        e <= len_tol,
                        "{recipe:?} {ty} length{n}({:?}) = {} want {want} ({e} ulp)",
                        &x[..n],
                        o(n - 1)
                    );
                    let d: Vec<f64> = (0..n).map(|k| x[k] - y[k]).collect();
                    let want = reference_length(&d);
                    let want = if double { want } else { want as f32 as f64 };
                    let got = o(3 + n);
                    let e = ulp_error(got, want, double);
                    assert!(
                        e <= len_tol || (want.is_infinite() && got.is_infinite()),
                        "{recipe:?} {ty} distance{n}({:?}, {:?}) = {got} want {want} ({e} ulp)",
                        &x[..n],
                        &y[..n]
                    );
                }
                let norm_slots = [8usize, 9, 11, 14];
                for n in 1..=4 {
                    let want = reference_normalize(&x[..n]);
                    for (k, &w) in want.iter().enumerate() {
                        let got = o(norm_slots[n - 1] + k);
                        let w = if double { w } else { w as f32 as f64 };
                        let e = ulp_error(got, w, double);
                        // Signs of zeros are part of the edge cases.
                        let same_zero = got == 0.0 && w == 0.0 && got.signum() == w.signum();
                        assert!(
                            (e <= norm_tol && (w != 0.0 || same_zero))
                                || (got.is_nan() && w.is_nan()),
                            "{recipe:?} {ty} normalize{n}({:?})[{k}] = {got} want {w} ({e} ulp)",
                            &x[..n]
                        );
                    }
                }
                // cross: the formula's products and differences in the type itself.
                let round = |v: f64| if double { v } else { v as f32 as f64 };
                let cross: Vec<f64> = [(1, 2), (2, 0), (0, 1)]
                    .iter()
                    .map(|&(j, k)| round(round(x[j] * y[k]) - round(x[k] * y[j])))
                    .collect();
                for (k, &w) in cross.iter().enumerate() {
                    for (slot, n) in [(18usize, 3), (21, 4)] {
                        let got = o(slot + k);
                        assert!(
                            got == w || (got.is_nan() && w.is_nan()),
                            "{recipe:?} {ty} cross{n}[{k}] of {x:?} x {y:?} = {got} want {w}"
                        );
                    }
                }
                assert_eq!(o(24), 0.0, "{recipe:?} {ty} cross4.w");
                // dot: any order of summation; error bound n * eps * Σ|x y| (exact products
                // in double-double are not needed at this tolerance).
                for n in 1..=4 {
                    let got = o(24 + n);
                    let want: f64 = (0..n).map(|k| x[k] * y[k]).sum();
                    let mag: f64 = (0..n).map(|k| (x[k] * y[k]).abs()).sum();
                    let eps = if double {
                        f64::EPSILON
                    } else {
                        f64::from(f32::EPSILON)
                    };
                    if !want.is_finite() || !mag.is_finite() || (!double && mag > 1e38) {
                        continue;
                    }
                    let tiny = if double { 0.0 } else { 1e-38 * n as f64 };
                    assert!(
                        (got - want).abs() <= n as f64 * eps * mag + tiny,
                        "{recipe:?} {ty} dot{n} of {x:?} . {y:?} = {got} want {want}"
                    );
                }
            }
        }
    }
}

#[test]
fn fast_geometric_functions() {
    for recipe in RECIPES {
        let p = build_spirv(&spirv_from_c("geometric.cl", recipe, common::CL1_2));
        let items = 100usize;
        let mut rng = Rng(99);
        // fast_ functions are only defined where the sum of squares is finite and normal.
        let mut gen = || -> [f64; 4] {
            [0; 4].map(|_| {
                let m = (rng.next() % 2_000_001) as f64 / 1000.0 - 1000.0;
                m as f32 as f64
            })
        };
        let a: Vec<[f64; 4]> = (0..items).map(|_| gen()).collect();
        let b: Vec<[f64; 4]> = (0..items).map(|_| gen()).collect();
        let enc = |v: &[[f64; 4]]| -> Vec<u8> {
            v.iter()
                .flat_map(|c| c.iter())
                .flat_map(|&x| (x as f32).to_le_bytes())
                .collect()
        };
        let (mut ab, mut bb) = (enc(&a), enc(&b));
        let mut out = vec![0u8; items * 64 * 4];
        launch(
            &p,
            "fast_geo",
            &mut [Arg::Buf(&mut ab), Arg::Buf(&mut bb), Arg::Buf(&mut out)],
            items as u64,
            4,
        );
        // The fast_ forms follow half_sqrt/half_rsqrt precision (8192 ulp); ours is the plain
        // float formula, so a few ulp is already far inside the bound.
        let tol = 8.0;
        for i in 0..items {
            let o = |k: usize| f64::from(read_f32(&out, 64 * i + k));
            for n in 1..=4 {
                let want = reference_length(&a[i][..n]);
                let e = ulp_error(o(n - 1), want, false);
                assert!(e <= tol, "{recipe:?} fast_length{n} ({e} ulp)");
                let d: Vec<f64> = (0..n)
                    .map(|k| f64::from(a[i][k] as f32 - b[i][k] as f32))
                    .collect();
                let want = reference_length(&d);
                let e = ulp_error(o(3 + n), want, false);
                assert!(e <= tol, "{recipe:?} fast_distance{n} ({e} ulp)");
                let want = reference_normalize(&a[i][..n]);
                let slots = [8usize, 9, 11, 14];
                for (k, &w) in want.iter().enumerate() {
                    let got = o(slots[n - 1] + k);
                    // Components near zero: compare against the vector's scale instead.
                    let err = (got - w).abs() / f64::from(f32::EPSILON);
                    assert!(
                        err <= tol,
                        "{recipe:?} fast_normalize{n}({:?})[{k}] = {got} want {w}",
                        &a[i][..n]
                    );
                }
            }
        }
    }
}

#[test]
fn smoothstep_scalar_and_broadcast_edges() {
    for recipe in RECIPES {
        let p = build_spirv(&spirv_from_c("geometric.cl", recipe, common::CL1_2));
        for double in [false, true] {
            let n = 64usize;
            let mut rng = Rng(31);
            let mut e0 = Vec::new();
            let mut e1 = Vec::new();
            for _ in 0..n {
                let a = (rng.next() % 2000) as f64 / 100.0 - 10.0;
                let w = (rng.next() % 1000 + 1) as f64 / 100.0;
                e0.push(a);
                e1.push(a + w);
            }
            // x spans below edge0, between the edges and above edge1.
            let xs: Vec<f64> = (0..4 * n)
                .map(|k| {
                    let i = k / 4;
                    e0[i] - 2.0
                        + (e1[i] - e0[i] + 4.0) * (k % 4) as f64 / 3.0
                        + (rng.next() % 100) as f64 / 1000.0
                })
                .collect();
            let (ty, size) = if double { ("double", 8) } else { ("float", 4) };
            let enc = |v: &[f64]| -> Vec<u8> {
                v.iter()
                    .flat_map(|&x| {
                        if double {
                            x.to_le_bytes().to_vec()
                        } else {
                            (x as f32).to_le_bytes().to_vec()
                        }
                    })
                    .collect()
            };
            let rd = |v: f64| if double { v } else { v as f32 as f64 };
            let (mut b0, mut b1, mut bx) = (enc(&e0), enc(&e1), enc(&xs));
            let mut out = vec![0u8; n * size];
            let mut out4 = vec![0u8; 4 * n * size];
            launch(
                &p,
                &format!("smooth_{ty}"),
                &mut [
                    Arg::Buf(&mut b0),
                    Arg::Buf(&mut b1),
                    Arg::Buf(&mut bx),
                    Arg::Buf(&mut out),
                    Arg::Buf(&mut out4),
                ],
                n as u64,
                8,
            );
            let reference = |e0: f64, e1: f64, x: f64| {
                let t = ((x - e0) / (e1 - e0)).clamp(0.0, 1.0);
                t * t * (3.0 - 2.0 * t)
            };
            let eps = if double {
                f64::EPSILON
            } else {
                f64::from(f32::EPSILON)
            };
            let read = |b: &[u8], k: usize| {
                if double {
                    read_f64(b, k)
                } else {
                    f64::from(read_f32(b, k))
                }
            };
            for i in 0..n {
                let (a, b) = (rd(e0[i]), rd(e1[i]));
                let want = reference(a, b, rd(xs[i]));
                let got = read(&out, i);
                assert!(
                    (got - want).abs() <= 8.0 * eps,
                    "{recipe:?} {ty} smoothstep({a}, {b}, {}) = {got} want {want}",
                    xs[i]
                );
                for k in 0..4 {
                    let x = rd(xs[4 * i + k]);
                    let want = reference(a, b, x);
                    let got = read(&out4, 4 * i + k);
                    assert!(
                        (got - want).abs() <= 8.0 * eps,
                        "{recipe:?} {ty}4 smoothstep({a}, {b}, {x}) = {got} want {want}"
                    );
                }
            }
        }
    }
}

fn dot4(a: u32, b: u32, signed_a: bool, signed_b: bool) -> i64 {
    (0..4)
        .map(|k| {
            let (x, y) = ((a >> (8 * k)) as u8, (b >> (8 * k)) as u8);
            let x = if signed_a {
                i64::from(x as i8)
            } else {
                i64::from(x)
            };
            let y = if signed_b {
                i64::from(y as i8)
            } else {
                i64::from(y)
            };
            x * y
        })
        .sum()
}

#[test]
fn integer_dot_product_from_opencl_c() {
    let lang = common::Language {
        options: "-cl-std=CL3.0",
        extensions: &[
            "cl_khr_integer_dot_product",
            "__opencl_c_integer_dot_product_input_4x8bit",
            "__opencl_c_integer_dot_product_input_4x8bit_packed",
            "__opencl_c_int64",
        ],
        debug_info: false,
    };
    for recipe in RECIPES {
        let p = build_spirv(&spirv_from_c("integer_dot.cl", recipe, lang));
        let n = 128usize;
        let mut rng = Rng(0xD07);
        let mut xs: Vec<u32> = (0..n).map(|_| rng.next() as u32).collect();
        let mut ys: Vec<u32> = (0..n).map(|_| rng.next() as u32).collect();
        let accs: Vec<u32> = (0..n)
            .map(|i| match i % 3 {
                0 => rng.next() as u32,
                1 => 0x7fff_ff00 + (rng.next() % 0x200) as u32,
                _ => (rng.next() % 1000) as u32,
            })
            .collect();
        xs[..4].copy_from_slice(&[0x8080_8080, 0x7f7f_7f7f, 0xffff_ffff, 0]);
        ys[..4].copy_from_slice(&[0x8080_8080, 0x7f7f_7f7f, 0xffff_ffff, 0x1234_5678]);
        let (mut a, mut b, mut c) = (bytes_of(&xs), bytes_of(&ys), bytes_of(&accs));
        let mut out = vec![0u8; n * 16 * 4];
        launch(
            &p,
            "integer_dot",
            &mut [
                Arg::Buf(&mut a),
                Arg::Buf(&mut b),
                Arg::Buf(&mut c),
                Arg::Buf(&mut out),
            ],
            n as u64,
            16,
        );
        for i in 0..n {
            let (x, y, acc) = (xs[i], ys[i], accs[i]);
            let sat_s = |v: i64| v.clamp(i64::from(i32::MIN), i64::from(i32::MAX)) as i32 as u32;
            let sat_u = |v: i64| v.clamp(0, i64::from(u32::MAX)) as u32;
            let acc_s = i64::from(acc as i32);
            let (uu, ss, us, su) = (
                dot4(x, y, false, false),
                dot4(x, y, true, true),
                dot4(x, y, false, true),
                dot4(x, y, true, false),
            );
            let want = [
                uu as u32,
                ss as u32,
                us as u32,
                su as u32,
                sat_u(uu + i64::from(acc)),
                sat_s(ss + acc_s),
                sat_s(us + acc_s),
                sat_s(su + acc_s),
            ];
            for k in 0..16 {
                let got = u32::from_le_bytes(out[(16 * i + k) * 4..][..4].try_into().unwrap());
                assert_eq!(
                    got,
                    want[k % 8],
                    "{recipe:?} result {k}: a={x:#010x} b={y:#010x} acc={acc:#x}"
                );
            }
        }
    }
}
