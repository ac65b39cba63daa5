//! Vector operations at every width (2, 3, 4, 8, 16) of char, short, int, long, float and
//! double (kernels in tests/kernels/vectors.cl), at -O0 and optimised, against host
//! references: arithmetic, comparisons, select, swizzles, construction, static and dynamic
//! component access (out-of-range dynamic indices must not crash), vloadn/vstoren, the 4-slot
//! layout of 3-component vectors in memory (env spec 2.10 alignment: sizeof(T3) == sizeof(T4))
//! and vectors passed by value.

mod common;

use common::*;

/// A vector component type with the host operations the kernels perform.
trait Elem: Copy + PartialEq + PartialOrd + std::fmt::Debug {
    const NAME: &'static str;
    fn from_random(r: u64) -> Self;
    fn small(v: i8) -> Self;
    fn add(self, o: Self) -> Self;
    fn sub(self, o: Self) -> Self;
    fn mul(self, o: Self) -> Self;
    fn to_bytes(self) -> Vec<u8>;
    fn read(b: &[u8], i: usize) -> Self;
    /// Equality of results: bit patterns for floats except that any NaN equals any NaN.
    fn same(self, o: Self) -> bool;
}

macro_rules! int_elem {
    ($t:ty, $name:literal) => {
        impl Elem for $t {
            const NAME: &'static str = $name;
            fn from_random(r: u64) -> Self {
                // Small values half the time, so that comparisons also find equal pairs.
                if r % 2 == 0 {
                    ((r >> 8) % 5) as $t
                } else {
                    (r >> 8) as $t
                }
            }
            fn small(v: i8) -> Self {
                v as $t
            }
            fn add(self, o: Self) -> Self {
                self.wrapping_add(o)
            }
            fn sub(self, o: Self) -> Self {
                self.wrapping_sub(o)
            }
            fn mul(self, o: Self) -> Self {
                self.wrapping_mul(o)
            }
            fn to_bytes(self) -> Vec<u8> {
                self.to_le_bytes().to_vec()
            }
            fn read(b: &[u8], i: usize) -> Self {
                const N: usize = std::mem::size_of::<$t>();
                <$t>::from_le_bytes(b[i * N..(i + 1) * N].try_into().expect("bytes"))
            }
            fn same(self, o: Self) -> bool {
                self == o
            }
        }
    };
}
int_elem!(i8, "char");
int_elem!(i16, "short");
int_elem!(i32, "int");
int_elem!(i64, "long");

macro_rules! float_elem {
    ($t:ty, $name:literal) => {
        impl Elem for $t {
            const NAME: &'static str = $name;
            fn from_random(r: u64) -> Self {
                if r % 3 == 0 {
                    ((r >> 8) % 5) as $t
                } else {
                    ((r >> 11) as $t / (1u64 << 53) as $t - 0.5) * 1e4
                }
            }
            fn small(v: i8) -> Self {
                <$t>::from(v)
            }
            fn add(self, o: Self) -> Self {
                self + o
            }
            fn sub(self, o: Self) -> Self {
                self - o
            }
            fn mul(self, o: Self) -> Self {
                self * o
            }
            fn to_bytes(self) -> Vec<u8> {
                self.to_le_bytes().to_vec()
            }
            fn read(b: &[u8], i: usize) -> Self {
                const N: usize = std::mem::size_of::<$t>();
                <$t>::from_le_bytes(b[i * N..(i + 1) * N].try_into().expect("bytes"))
            }
            fn same(self, o: Self) -> bool {
                self.to_bits() == o.to_bits() || (self.is_nan() && o.is_nan())
            }
        }
    };
}
float_elem!(f32, "float");
float_elem!(f64, "double");

fn reversed<T: Elem>(x: &[T]) -> Vec<T> {
    match x.len() {
        // .s201
        3 => vec![x[2], x[0], x[1]],
        _ => x.iter().rev().copied().collect(),
    }
}

fn constructed<T: Elem>(x: &[T], y: &[T]) -> Vec<T> {
    match x.len() {
        2 => vec![x[1], y[0]],
        3 => vec![x[0], y[1], y[2]],
        4 => vec![x[0], y[1], y[2], x[3]],
        8 => vec![x[0], x[1], x[2], x[3], y[5], y[6], x[7], y[4]],
        _ => {
            let mut v = x[..8].to_vec();
            v.extend_from_slice(&y[8..12]);
            v.extend_from_slice(&[x[0], x[1], y[2], y[3]]);
            v
        }
    }
}

fn check_width<T: Elem>(p: &ferrocl_codegen::Program, recipe: Recipe, n: usize) {
    let items = 12usize;
    let size = std::mem::size_of::<T>();
    let mut rng = Rng(0xC0FF_EE00 + n as u64 * 31 + size as u64);
    let a: Vec<T> = (0..items * n).map(|_| T::from_random(rng.next())).collect();
    let b: Vec<T> = (0..items * n).map(|_| T::from_random(rng.next())).collect();
    let by_value: Vec<T> = (0..n).map(|_| T::from_random(rng.next())).collect();
    let enc = |v: &[T]| -> Vec<u8> { v.iter().flat_map(|x| x.to_bytes()).collect() };
    // A 3-component vector occupies 4 components in memory and in the argument block.
    let slots = if n == 3 { 4 } else { n };
    let mut value_bytes = enc(&by_value);
    value_bytes.resize(slots * size, 0);
    let (mut ab, mut bb) = (enc(&a), enc(&b));
    let mut out = vec![0u8; items * 10 * n * size];
    let mut iout = vec![0u8; items * 2 * n * 4];
    // Stored through a `global T3 *`: element i starts at component 4 * i (checked below).
    let mut typed = vec![0xA5u8; items * slots * size];
    let mut junk = vec![0u8; items * (n + 1) * size];
    let kernel = format!("vec_{}{n}", T::NAME);
    launch(
        p,
        &kernel,
        &mut [
            Arg::Buf(&mut ab),
            Arg::Buf(&mut bb),
            Arg::Val(value_bytes),
            Arg::Buf(&mut out),
            Arg::Buf(&mut iout),
            Arg::Buf(&mut typed),
            Arg::Val(1000u32.to_le_bytes().to_vec()),
            Arg::Buf(&mut junk),
        ],
        items as u64,
        4,
    );
    let ctx = |what: &str, i: usize| format!("{recipe:?} {kernel} item {i}: {what}");
    for i in 0..items {
        let x = &a[i * n..(i + 1) * n];
        let y = &b[i * n..(i + 1) * n];
        let got = |slot: usize| -> Vec<T> {
            (0..n)
                .map(|k| T::read(&out, 10 * n * i + slot * n + k))
                .collect()
        };
        let expect = |slot: usize, want: Vec<T>, what: &str| {
            let g = got(slot);
            assert!(
                g.iter().zip(&want).all(|(p, q)| p.same(*q)),
                "{}: got {g:?} want {want:?} (x {x:?}, y {y:?})",
                ctx(what, i)
            );
        };
        let zip = |f: fn(T, T) -> T, u: &[T]| -> Vec<T> {
            x.iter().zip(u).map(|(&p, &q)| f(p, q)).collect()
        };
        expect(0, zip(T::add, y), "x + y");
        expect(1, zip(T::mul, y), "x * y");
        expect(2, zip(T::sub, &by_value), "x - by_value");
        expect(
            3,
            x.iter()
                .zip(y)
                .map(|(&p, &q)| if p < q { q } else { p })
                .collect(),
            "select(x, y, x < y)",
        );
        expect(4, reversed(x), "swizzle");
        expect(5, constructed(x, y), "construct");
        let mut t = x.to_vec();
        t[1] = y[0];
        expect(6, t, "insert component 1");
        let mut d = x.to_vec();
        d[i % n] = y[0];
        expect(7, d, "dynamic insert");
        let e = T::read(&out, 10 * n * i + 8 * n);
        assert!(e.same(x[i % n]), "{}", ctx("dynamic extract", i));
        let any = T::read(&out, 10 * n * i + 9 * n);
        let all = T::read(&out, 10 * n * i + 9 * n + 1);
        let (zero, one) = (T::small(0), T::small(1));
        let truth = |b: bool| if b { one } else { zero };
        assert!(
            any.same(truth(x.iter().zip(y).any(|(p, q)| p < q))),
            "{}",
            ctx("any(x < y)", i)
        );
        assert!(
            all.same(truth(x.iter().zip(y).all(|(p, q)| p <= q))),
            "{}",
            ctx("all(x <= y)", i)
        );
        for k in 0..n {
            let lt = i32::from_le_bytes(iout[(2 * n * i + k) * 4..][..4].try_into().unwrap());
            let eq = i32::from_le_bytes(iout[(2 * n * i + n + k) * 4..][..4].try_into().unwrap());
            assert_eq!(lt, -i32::from(x[k] < y[k]), "{}", ctx("x < y", i));
            assert_eq!(eq, -i32::from(x[k] == y[k]), "{}", ctx("x == y", i));
            let stored = T::read(&typed, i * slots + k);
            assert!(
                stored.same(x[k].add(y[k])),
                "{}",
                ctx("typed store through a vector pointer", i)
            );
        }
    }
}

fn all_widths<T: Elem>(p: &ferrocl_codegen::Program, recipe: Recipe) {
    for n in [2, 3, 4, 8, 16] {
        check_width::<T>(p, recipe, n);
    }
}

#[test]
fn vector_operations_every_width_and_type() {
    for recipe in RECIPES {
        let p = build_spirv(&spirv_from_c("vectors.cl", recipe, common::CL1_2));
        all_widths::<i8>(&p, recipe);
        all_widths::<i16>(&p, recipe);
        all_widths::<i32>(&p, recipe);
        all_widths::<i64>(&p, recipe);
        all_widths::<f32>(&p, recipe);
        all_widths::<f64>(&p, recipe);
    }
}
