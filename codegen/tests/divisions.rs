//! Division and remainder of varying integers (unsigned, and signed ones not negative) by a
//! shared divisor
//! (src/vectorize/division.rs): in wide code vector arithmetic through doubles, with the
//! scalar divisions for lanes of 2^50 or more; every result equal to the host's `/` and `%`,
//! on both backends, for dividends and divisors around 2^32, 2^50, 2^51 and 2^64.

mod common;

use common::*;
use ferrocl_codegen::{Backend, BuildOptions, Program, Vectorization};

const N: usize = 1024;

fn build(recipe: Recipe, options: &BuildOptions) -> Program {
    let spirv = spirv_from_c("divisions.cl", recipe, CL1_2);
    let module = ferrocl_frontend::parse(&spirv).unwrap_or_else(|e| panic!("frontend: {e}"));
    compile(&module, options).unwrap_or_else(|e| panic!("codegen: {e}"))
}

const DIVISORS: [u64; 15] = [
    1,
    2,
    3,
    7,
    1000,
    65_537,
    (1 << 31) - 1,
    (1 << 32) - 1,
    (1 << 49) + 3,
    (1 << 50) - 1,
    1 << 50,
    (1 << 51) - 1,
    (1 << 52) + 5,
    (1 << 63) + 11,
    u64::MAX,
];

/// Dividends for divisor `w`: mostly below 2^50 (the vector path), with the edges of the
/// quotient's rounding (multiples of w and their neighbours, the largest below 2^50) and, in
/// some vectors, a lane of 2^50 or more (the scalar path for that vector).
fn dividends(w: u64, rng: &mut Rng) -> Vec<u64> {
    (0..N)
        .map(|i| {
            let x = rng.next();
            match i % 64 {
                // A vector of 16 with one large lane in every fourth block of 64.
                63 if i % 256 == 255 => x | (1 << 63),
                0..=7 => (x >> 13).wrapping_mul(w).wrapping_add(i as u64 % 3),
                8..=11 => (1u64 << 50) - 1 - (i as u64 - 8),
                // The largest multiple of w below 2^50, and the three below it.
                16..=19 => (((1u64 << 50) - 1) / w * w).saturating_sub(i as u64 - 16),
                12..=15 => (x % 1000).wrapping_mul(w).wrapping_sub(i as u64 % 2),
                _ => x >> 14,
            }
        })
        .collect()
}

/// The integer types of the division kernels, read back from little-endian buffers.
trait Int: Copy + PartialEq + std::fmt::Debug + std::fmt::Display {
    fn from_le(b: &[u8]) -> Self;
}

macro_rules! int {
    ($($t:ty),*) => {$(
        impl Int for $t {
            fn from_le(b: &[u8]) -> Self {
                <$t>::from_le_bytes(b.try_into().expect("one element"))
            }
        }
    )*};
}
int!(u32, i32, u64, i64);

fn ints<T: Int>(b: &[u8]) -> Vec<T> {
    b.chunks_exact(std::mem::size_of::<T>())
        .map(T::from_le)
        .collect()
}

fn u32s(b: &[u8]) -> Vec<u32> {
    ints(b)
}

/// `kernel(in, q, r, w)` on dividends `x`: every quotient and remainder as `want` says.
fn check_division<T: Int>(
    p: &Program,
    kernel: &str,
    x: &[T],
    w: T,
    want: impl Fn(T) -> (T, T),
    what: &str,
    local: u64,
) {
    let bytes = std::mem::size_of_val(x);
    let (mut xb, mut q, mut r) = (bytes_of(x), vec![0u8; bytes], vec![0u8; bytes]);
    launch(
        p,
        kernel,
        &mut [
            Arg::Buf(&mut xb),
            Arg::Buf(&mut q),
            Arg::Buf(&mut r),
            Arg::Val(bytes_of(&[w])),
        ],
        N as u64,
        local,
    );
    let (q, r) = (ints::<T>(&q), ints::<T>(&r));
    for i in 0..N {
        assert_eq!(
            (q[i], r[i]),
            want(x[i]),
            "{what}, local {local}: {} / {w}",
            x[i]
        );
    }
}

fn check(p: &Program, what: &str, local: u64) {
    let mut rng = Rng(0x5eed);
    for w in DIVISORS {
        let x = dividends(w, &mut rng);
        check_division(p, "divide_size_t", &x, w, |v| (v / w, v % w), what, local);
        if let Ok(w32) = u32::try_from(w) {
            let x: Vec<u32> = x.iter().map(|&v| v as u32 ^ (v >> 32) as u32).collect();
            let want = |v| (v / w32, v % w32);
            check_division(p, "divide_uint", &x, w32, want, what, local);
        }
        // Signed: the same bits as signed numbers (negative ones from the scalar path), by
        // the divisor and by its negation.
        for sw in [w as i64, (w as i64).wrapping_neg()] {
            if sw == 0 {
                continue;
            }
            let x: Vec<i64> = x.iter().map(|&v| v as i64).collect();
            let want = |v: i64| (v.wrapping_div(sw), v.wrapping_rem(sw));
            check_division(p, "divide_long", &x, sw, want, what, local);
            if let Ok(w32) = i32::try_from(sw) {
                let x: Vec<i32> = x.iter().map(|&v| (v >> 20) as i32 ^ v as i32).collect();
                let want = |v: i32| (v.wrapping_div(w32), v.wrapping_rem(w32));
                check_division(p, "divide_int", &x, w32, want, what, local);
                let mut out = vec![0u8; 4 * N];
                launch(
                    p,
                    "int_coordinates",
                    &mut [Arg::Buf(&mut out), Arg::Val(bytes_of(&[w32]))],
                    N as u64,
                    local,
                );
                for (i, &o) in u32s(&out).iter().enumerate() {
                    let i = i as i32;
                    let want = i
                        .wrapping_div(w32)
                        .wrapping_mul(1000)
                        .wrapping_add(i.wrapping_rem(w32));
                    assert_eq!(
                        o as i32, want,
                        "{what}, local {local}: int coordinates {i} by {w32}"
                    );
                }
            }
        }
        let xs: Vec<i32> = x.iter().map(|&v| v as i32).collect();
        let (mut xb, mut out) = (bytes_of(&xs), vec![0u8; 16 * N]);
        launch(
            p,
            "constant_divisors",
            &mut [Arg::Buf(&mut xb), Arg::Buf(&mut out)],
            N as u64,
            local,
        );
        for (i, o) in u32s(&out).chunks(4).enumerate() {
            let x = xs[i];
            let (u, l) = (x as u32, (x as i64 as u64).wrapping_mul(0x10001));
            let want = [
                ((u % 13) + (u / 1000).wrapping_mul(16)) as i32,
                (x / 7).wrapping_add(x % -3),
                ((l / 10) as i32) ^ ((l % 10) as i32),
                x.wrapping_neg(),
            ];
            let got: Vec<i32> = o.iter().map(|&v| v as i32).collect();
            assert_eq!(got, want, "{what}, local {local}: constant divisors of {x}");
        }
        let mut out = vec![0u8; 4 * N];
        launch(
            p,
            "coordinates",
            &mut [Arg::Buf(&mut out), Arg::Val(bytes_of(&[w]))],
            N as u64,
            local,
        );
        let out = u32s(&out);
        for (i, &o) in out.iter().enumerate() {
            let i = i as u64;
            let want = ((i / w) as u32)
                .wrapping_mul(1000)
                .wrapping_add((i % w) as u32);
            assert_eq!(o, want, "{what}, local {local}: coordinates of {i} by {w}");
        }
    }
}

#[test]
fn division_by_a_shared_divisor_is_exact_on_both_backends() {
    assert!(
        ferrocl_opencl_c::wide_backend_available(),
        "libLLVM-15 and the LLVM server must be available here"
    );
    for recipe in RECIPES {
        let cranelift = build(
            recipe,
            &BuildOptions {
                backend: Backend::Cranelift,
                ..BuildOptions::default()
            },
        );
        let dumps = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
            .join(format!("divisions-{}-{recipe:?}", std::process::id()));
        let wide = build(
            recipe,
            &BuildOptions {
                backend: Backend::Wide,
                dump_dir: Some(dumps.clone()),
                ..BuildOptions::default()
            },
        );
        for local in [1, 16, 64, 100, 256] {
            check(&cranelift, &format!("{recipe:?} Cranelift"), local);
            check(&wide, &format!("{recipe:?} wide"), local);
        }
        if let Recipe::Optimized = recipe {
            for kernel in [
                "divide_size_t",
                "divide_uint",
                "coordinates",
                "divide_long",
                "divide_int",
                "int_coordinates",
                "constant_divisors",
            ] {
                let k = wide.kernel(kernel).expect("kernel");
                assert_eq!(
                    k.backend(),
                    Backend::Wide,
                    "{kernel}: {:?}",
                    k.wide_refusal()
                );
                assert_eq!(
                    k.vectorization,
                    Vectorization::Vectorized {
                        lanes: ferrocl_codegen::Target::host().lanes32()
                    },
                    "{kernel}"
                );
                // The vector path: a multiplication of 64-bit lanes (the quotient times the
                // divisor), beside the scalar divisions of the rare large lanes.
                let ir = dumped_ir(&dumps, kernel);
                assert!(
                    ir.lines()
                        .any(|l| l.contains("= mul <") && l.contains(" x i64>")),
                    "{kernel}: {ir}"
                );
            }
        }
        if let Recipe::Optimized = recipe {
            // 32-bit lanes by a constant: LLVM's vector division (no doubles needed).
            let ir = dumped_ir(&dumps, "constant_divisors");
            assert!(
                ir.lines()
                    .any(|l| l.contains("= urem <") && l.contains(" x i32>")),
                "{ir}"
            );
            assert!(
                ir.lines()
                    .any(|l| l.contains("= sdiv <") && l.contains(" x i32>")),
                "{ir}"
            );
        }
        let _ = std::fs::remove_dir_all(&dumps);
    }
}
