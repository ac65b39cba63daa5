//! Kernels for the shapes a work-item vectoriser meets in real code: strided `floatN` reads
//! (memory-bound, compared with STREAM), an MD5 loop over a private 16-word block indexed by
//! the step, and a nested loop whose inner trip count differs per work-item. Their sizes,
//! inputs, exact host references (bit for bit, floats included) and checks.

use crate::check::{bytes_of, equal_u32, u32s};
use crate::gaps::{md5_block, md5_k, MD5_INIT};
use crate::kernels::{
    input, output, par_rows, size_label, Arg, Case, Class, Extra, Rng, Spec, MI, PLAIN,
};

/// A strided-read kernel: `strided_read.cl` after the definition of its element type.
macro_rules! strided {
    ($t:literal) => {
        concat!(
            "#define T ",
            $t,
            "\n",
            include_str!("../kernels/strided_read.cl")
        )
    };
}

/// Elements each work-item of `strided_read` sums.
const STRIDED_COUNT: usize = 8;

pub fn specs() -> Vec<Spec> {
    let int = Extra {
        int_ops: true,
        ..PLAIN
    };
    vec![
        Spec {
            name: "strided_read_float1",
            entry: "strided_read",
            source: strided!("float"),
            class: Class::Memory,
            make: |q| strided_read(q, 1),
            extra: PLAIN,
        },
        Spec {
            name: "strided_read_float2",
            entry: "strided_read",
            source: strided!("float2"),
            class: Class::Memory,
            make: |q| strided_read(q, 2),
            extra: PLAIN,
        },
        Spec {
            name: "strided_read_float4",
            entry: "strided_read",
            source: strided!("float4"),
            class: Class::Memory,
            make: |q| strided_read(q, 4),
            extra: PLAIN,
        },
        Spec {
            name: "strided_read_float8",
            entry: "strided_read",
            source: strided!("float8"),
            class: Class::Memory,
            make: |q| strided_read(q, 8),
            extra: PLAIN,
        },
        Spec {
            name: "strided_read_float16",
            entry: "strided_read",
            source: strided!("float16"),
            class: Class::Memory,
            make: |q| strided_read(q, 16),
            extra: PLAIN,
        },
        Spec {
            name: "md5_private",
            entry: "md5_private",
            source: include_str!("../kernels/md5_private.cl"),
            class: Class::Compute,
            make: md5_private,
            extra: int,
        },
        Spec {
            name: "nested_loop",
            entry: "nested",
            source: include_str!("../kernels/nested.cl"),
            class: Class::Compute,
            make: nested,
            extra: int,
        },
    ]
}

/// Finite, normal floats of magnitude [2⁻⁴, 2⁴) and either sign from an element's index:
/// their sums round (so a different order of addition gives a different result), never reach
/// the subnormal range (a flush-to-zero device computes them the same), and are never zero
/// (so the kernel's `0.0f + x` is `x`).
fn strided_word(i: usize) -> f32 {
    let mut h = (i as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    h ^= h >> 29;
    h = h.wrapping_mul(0xBF58_476D_1CE4_E5B9);
    h ^= h >> 32;
    let h = h as u32;
    let exp = 127 - 4 + (h >> 28) % 8;
    f32::from_bits((h & 0x8000_0000) | (exp << 23) | (h & 0x7F_FFFF))
}

/// `strided_read.cl` on `floatN` (N = `width`): 64 Mi floats read (256 MiB; 8 Mi with
/// `quick`), `STRIDED_COUNT` elements per work-item, global size = elements / count.
fn strided_read(quick: bool, width: usize) -> Case {
    let floats = if quick { 8 * MI } else { 64 * MI };
    let data: Vec<f32> = (0..floats).map(strided_word).collect();
    // item g sums elements g + k·G (k = 0, 1, …), so float c of item g is the sum over k of
    // float k·G·N + g·N + c: the output's float o sums the o-th float of each of the count
    // slices of G·N floats, in slice order, as the kernel does
    let out_floats = floats / STRIDED_COUNT;
    let mut want = vec![0.0f32; out_floats];
    for slice in data.chunks_exact(out_floats) {
        for (w, x) in want.iter_mut().zip(slice) {
            *w += *x;
        }
    }
    let items = out_floats / width;
    Case {
        size: format!("n={} floats, {STRIDED_COUNT} per item", size_label(floats)),
        bufs: vec![input(bytes_of(&data)), output(4 * out_floats)],
        args: vec![Arg::Buf(0), Arg::Buf(1), Arg::U32(STRIDED_COUNT as u32)],
        global: vec![items],
        local: None,
        output: 1,
        check: Box::new(move |out, _| exact_f32(out, &want, width)),
        // the reads and the writes
        bytes: (4 * (floats + out_floats)) as f64,
        flops: floats as f64,
        launches: 1,
    }
}

/// Bit-for-bit equality of floats, naming the work-item and lane of the first difference.
fn exact_f32(out: &[u8], want: &[f32], width: usize) -> Result<(), String> {
    let got = u32s(out);
    if got.len() != want.len() {
        return Err(format!("length {} != {}", got.len(), want.len()));
    }
    let differs = |i: usize| got[i] != want[i].to_bits();
    match (0..got.len()).find(|&i| differs(i)) {
        None => Ok(()),
        Some(i) => Err(format!(
            "{} of {} floats wrong; first item {} lane {} = {:e} ({:#x}) want {:e} ({:#x})",
            (i..got.len()).filter(|&j| differs(j)).count(),
            got.len(),
            i / width,
            i % width,
            f32::from_bits(got[i]),
            got[i],
            want[i],
            want[i].to_bits()
        )),
    }
}

/// The 16 words `md5_private.cl` puts in its private block for work-item `gid`.
fn md5_private_block(gid: u32, x: u32) -> [u32; 16] {
    std::array::from_fn(|j| {
        let j = j as u32;
        x.rotate_left(j) ^ gid.wrapping_add(j.wrapping_mul(0x9E37_79B9))
    })
}

/// MD5's rotate amounts, 4 per round, as `md5_private.cl` reads them after the 64 constants.
const MD5_SHIFTS: [u32; 16] = [7, 12, 17, 22, 5, 9, 14, 20, 4, 11, 16, 23, 6, 10, 15, 21];

fn md5_private(quick: bool) -> Case {
    let n = if quick { 64 * 1024 } else { MI };
    let mut rng = Rng(30);
    let x: Vec<u32> = (0..n).map(|_| rng.u32()).collect();
    let k = md5_k();
    let table: Vec<u32> = k.iter().chain(&MD5_SHIFTS).copied().collect();
    let want = par_rows(n, |g| {
        md5_block(MD5_INIT, &md5_private_block(g as u32, x[g]), &k).to_vec()
    });
    Case {
        size: format!("n={}, 1 block", size_label(n)),
        bufs: vec![input(bytes_of(&x)), input(bytes_of(&table)), output(16 * n)],
        args: vec![Arg::Buf(0), Arg::Buf(1), Arg::Buf(2)],
        global: vec![n],
        local: None,
        output: 2,
        check: Box::new(move |out, _| equal_u32(&u32s(out), &want)),
        bytes: (20 * n) as f64,
        // nominal, as md5x4: 8 integer operations per step
        flops: (n * 64 * 8) as f64,
        launches: 1,
    }
}

/// Inner trip count of `nested.cl` for work-item `gid` at outer step `i`.
fn nested_trips(gid: u32, i: u32) -> u32 {
    gid.wrapping_mul(7).wrapping_add(i * 3) % 13
}

/// Host version of `nested.cl`.
fn nested_ref(gid: u32, x: u32) -> u32 {
    let mut acc = x;
    for i in 0..16 {
        for j in 0..nested_trips(gid, i) {
            acc = acc
                .wrapping_mul(1_664_525)
                .wrapping_add(1_013_904_223)
                .wrapping_add(j);
        }
    }
    acc
}

fn nested(quick: bool) -> Case {
    let n = if quick { 256 * 1024 } else { 4 * MI };
    let mut rng = Rng(31);
    let x: Vec<u32> = (0..n).map(|_| rng.u32()).collect();
    let want = par_rows(n, |g| vec![nested_ref(g as u32, x[g])]);
    let steps: u64 = (0..n as u32)
        .map(|g| (0..16).map(|i| u64::from(nested_trips(g, i))).sum::<u64>())
        .sum();
    Case {
        size: format!("n={}, 16 x 0..12 it", size_label(n)),
        bufs: vec![input(bytes_of(&x)), output(4 * n)],
        args: vec![Arg::Buf(0), Arg::Buf(1)],
        global: vec![n],
        local: None,
        output: 1,
        check: Box::new(move |out, _| equal_u32(&u32s(out), &want)),
        bytes: (8 * n) as f64,
        // 3 integer operations per inner step (multiply, two adds)
        flops: (3 * steps) as f64,
        launches: 1,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strided_inputs_are_normal_and_sums_depend_on_order() {
        for i in 0..100_000 {
            let x = strided_word(i);
            assert!(
                x.is_normal() && (0.0625..16.0).contains(&x.abs()),
                "{i}: {x}"
            );
        }
        // the check is meaningful: summing in another order changes many results
        let case = strided_read(true, 4);
        let data: Vec<f32> = (0..8 * MI).map(strided_word).collect();
        let out_floats = data.len() / STRIDED_COUNT;
        let reversed: Vec<f32> = (0..out_floats)
            .map(|o| {
                (0..STRIDED_COUNT)
                    .rev()
                    .fold(0.0f32, |acc, k| acc + data[k * out_floats + o])
            })
            .collect();
        let err = (case.check)(&bytes_of(&reversed), 1).unwrap_err();
        assert!(err.contains("floats wrong"), "{err}");
        let forward: Vec<f32> = (0..out_floats)
            .map(|o| (0..STRIDED_COUNT).fold(0.0f32, |acc, k| acc + data[k * out_floats + o]))
            .collect();
        assert!((case.check)(&bytes_of(&forward), 1).is_ok());
    }

    #[test]
    fn checks_reject_wrong_results() {
        for case in [md5_private(true), nested(true), strided_read(true, 16)] {
            let zeros = vec![0u8; case.bufs[case.output].bytes];
            assert!((case.check)(&zeros, 1).is_err(), "{}", case.size);
        }
    }

    #[test]
    fn md5_private_reference_is_md5() {
        // the kernel's block, put through the reference, is what any MD5 does with it: the
        // reference is tested on known digests in gaps.rs; here the shifts' table is MD5's
        assert_eq!(MD5_SHIFTS[..4], [7, 12, 17, 22]);
        assert_eq!(MD5_SHIFTS[12..], [6, 10, 15, 21]);
        assert_eq!(md5_private_block(0, 0)[1], 0x9E37_79B9);
    }

    #[test]
    fn nested_trip_counts_vary_across_neighbouring_items() {
        let trips: Vec<u32> = (0..8).map(|g| nested_trips(g, 0)).collect();
        assert_eq!(trips, [0, 7, 1, 8, 2, 9, 3, 10]);
        // item 0 runs (3i mod 13) steps at outer step i
        let item0: u32 = (0..16).map(|i| nested_trips(0, i)).sum();
        assert_eq!(item0, 87);
    }
}
