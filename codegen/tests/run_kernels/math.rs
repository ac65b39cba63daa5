//! Math built-ins with out parameters, integer math, debug-info modules, vloadn/vstoren.

use super::*;

/// |a - b| in ulps of `b` (f32).
fn ulps(a: f32, b: f32) -> f32 {
    if a == b || (a.is_nan() && b.is_nan()) {
        return 0.0;
    }
    let ulp = (b.abs().next_up() - b.abs()).max(f32::from_bits(1));
    ((f64::from(a) - f64::from(b)).abs() / f64::from(ulp)) as f32
}

#[test]
fn out_parameter_and_integer_math_functions() {
    both(|r| {
        let p = build("shaped_math.cl", r);
        let xs: Vec<[f32; 4]> = vec![
            [1.5, -7.25, 0.3, 1e-40],
            [1000.0, -0.0, 12.75, -3.5],
            [5.5, 2.5, -2.5, 1e30],
        ];
        let ys: Vec<[f32; 4]> = vec![
            [2.0, 3.0, 0.7, 1.0],
            [7.0, 2.0, 5.0, -2.0],
            [1.25, 3.0, 2.0, 4.0],
        ];
        let n = xs.len();
        let (mut x, mut y) = (xs.clone(), ys.clone());
        let mut out = vec![[0f32; 4]; n * 9];
        let mut iout = vec![[0i32; 4]; n * 5];
        let mut d: Vec<f64> = (0..n)
            .flat_map(|i| [3.0 * (i + 1) as f64, -27.0 * (i + 1) as f64, 0.0])
            .collect();
        let d_in = d.clone();
        let (mut args, _) = Args::new(&p, "shaped");
        args.ptr(&p, "shaped", 0, &mut x);
        args.ptr(&p, "shaped", 1, &mut y);
        args.ptr(&p, "shaped", 2, &mut out);
        args.ptr(&p, "shaped", 3, &mut iout);
        args.ptr(&p, "shaped", 4, &mut d);
        launch(&p, "shaped", &args, 1, [0; 3], [n as u64, 1, 1], [1, 1, 1]);
        for g in 0..n {
            for l in 0..4 {
                let (v, w) = (xs[g][l], ys[g][l]);
                let o = |k: usize| out[g * 9 + k][l];
                let io = |k: usize| iout[g * 5 + k][l];
                // frexp: v = m * 2^e, 0.5 <= |m| < 1.
                let (m, e) = (o(0), io(0));
                assert!(
                    m.abs() >= 0.5 && m.abs() < 1.0 || v == 0.0,
                    "{r:?} frexp({v}) = {m}"
                );
                assert_eq!(
                    f64::from(m) * 2f64.powi(e),
                    f64::from(v),
                    "{r:?} frexp({v})"
                );
                assert_eq!((o(1), o(2)), (v - v.trunc(), v.trunc()), "{r:?} modf({v})");
                let fl = v.floor();
                assert_eq!(
                    (o(3), o(4)),
                    ((v - fl).min(f32::from_bits(0x3f7f_ffff)), fl),
                    "{r:?} fract({v})"
                );
                assert!(
                    ulps(o(5), v.sin()) <= 1.0 && ulps(o(6), v.cos()) <= 1.0,
                    "{r:?} sincos({v})"
                );
                let (rem, quo) = (o(7), io(1));
                let k = (v / w).round_ties_even();
                assert_eq!(
                    rem,
                    (f64::from(v) - k as f64 * f64::from(w)) as f32,
                    "{r:?} remquo({v}, {w})"
                );
                assert_eq!(
                    quo.abs() & 0x7f,
                    (f64::from(k.abs()) % 128.0) as i32,
                    "{r:?} remquo |quo| low bits"
                );
                assert_eq!(quo < 0, k < 0.0 && quo != 0, "{r:?} remquo sign");
                let pw = [3, -2, 0, 5][l];
                assert!(
                    ulps(o(8), w.powi(pw)) <= 1.0,
                    "{r:?} pown({w}, {pw}) = {}",
                    o(8)
                );
                let want_ilogb = if v == 0.0 {
                    i32::MIN
                } else {
                    f64::from(v).abs().log2().floor() as i32
                };
                assert_eq!(io(2), want_ilogb, "{r:?} ilogb({v})");
                let nan = f32::from_bits(io(4) as u32);
                assert!(nan.is_nan(), "{r:?} nan()");
            }
            // lgamma_r of x[g].x (1.5, 1000, 5.5): Γ > 0, so the sign is 1.
            let want_lgamma = [
                -0.120_782_237_635_245_2,
                5_905.220_423_209_181,
                3.957_813_967_618_716,
            ][g];
            assert_eq!(iout[g * 5 + 3][0], 1, "{r:?} lgamma_r sign");
            assert!(
                (d[g * 3 + 2] - want_lgamma).abs() <= 1e-6 * want_lgamma.abs().max(1.0),
                "{r:?} lgamma_r = {}",
                d[g * 3 + 2]
            );
            let (m, e) = libm_frexp(d_in[g * 3]);
            assert_eq!(d[g * 3], m + f64::from(e), "{r:?} frexp double");
            assert!(
                (d[g * 3 + 1] - d_in[g * 3 + 1].abs().cbrt()).abs()
                    <= 2.0 * f64::EPSILON * d[g * 3 + 1],
                "{r:?} rootn double"
            );
        }
    });
}

fn libm_frexp(x: f64) -> (f64, i32) {
    if x == 0.0 {
        return (x, 0);
    }
    let e = x.abs().log2().floor() as i32 + 1;
    (x / 2f64.powi(e), e)
}

#[test]
fn debug_info_modules_build_and_run() {
    // llvm-spirv puts OpenCL.DebugInfo.100 instructions (DebugScope) before phis in optimised
    // -g output; codegen must take the phis wherever they sit at the block's start.
    both(|r| {
        let p = build_with(
            "basic.cl",
            r,
            Language {
                debug_info: true,
                ..CL1_2
            },
        );
        let n = 100;
        let mut a: Vec<f32> = (0..n).map(|i| i as f32).collect();
        let mut b: Vec<f32> = (0..n).map(|i| 2.0 * i as f32).collect();
        let mut c = vec![0f32; n];
        let (mut args, _) = Args::new(&p, "vadd");
        args.ptr(&p, "vadd", 0, &mut a);
        args.ptr(&p, "vadd", 1, &mut b);
        args.ptr(&p, "vadd", 2, &mut c);
        launch(&p, "vadd", &args, 1, [0; 3], [n as u64, 1, 1], [10, 1, 1]);
        assert!(
            c.iter().enumerate().all(|(i, &v)| v == 3.0 * i as f32),
            "{r:?}"
        );
        assert!(
            p.kernel("mandel").is_some(),
            "{r:?}: the loop kernels build too"
        );
    });
}

#[test]
fn vloadn_and_vstoren() {
    both(|r| {
        let p = program(r);
        let n = 6;
        let mut input: Vec<f32> = (0..n * 4 + 1).map(|i| i as f32).collect();
        let mut out = vec![0f32; n * 4];
        let (mut args, _) = Args::new(p, "vload_store");
        args.ptr(p, "vload_store", 0, &mut input);
        args.ptr(p, "vload_store", 1, &mut out);
        launch(
            p,
            "vload_store",
            &args,
            1,
            [0; 3],
            [n as u64, 1, 1],
            [2, 1, 1],
        );
        for (i, &o) in out.iter().enumerate() {
            assert_eq!(o, 2.0 * input[i + 1], "{r:?} element {i}");
        }
    });
}
