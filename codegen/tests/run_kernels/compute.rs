//! Plain kernels: arithmetic, control flow, arguments, work-item functions, traps that must not trap, and mutated modules.

use super::*;

#[test]
fn vector_add() {
    both(|r| {
        let p = program(r);
        let n = 1000;
        let mut a: Vec<f32> = (0..n).map(|i| i as f32 * 0.5).collect();
        let mut b: Vec<f32> = (0..n).map(|i| 3.0 - i as f32).collect();
        let mut c = vec![0f32; n];
        let (mut args, _) = Args::new(p, "vadd");
        args.ptr(p, "vadd", 0, &mut a);
        args.ptr(p, "vadd", 1, &mut b);
        args.ptr(p, "vadd", 2, &mut c);
        launch(p, "vadd", &args, 1, [0; 3], [n as u64, 1, 1], [64, 1, 1]);
        for i in 0..n {
            assert_eq!(c[i], a[i] + b[i], "{r:?} element {i}");
        }
    });
}

#[test]
fn saxpy() {
    both(|r| {
        let p = program(r);
        let n = 257;
        let mut x: Vec<f32> = (0..n).map(|i| i as f32).collect();
        let mut y: Vec<f32> = (0..n).map(|i| 1.0 / (i as f32 + 1.0)).collect();
        let expect: Vec<f32> = x.iter().zip(&y).map(|(x, y)| 2.5 * x + y).collect();
        let (mut args, _) = Args::new(p, "saxpy");
        args.set(p, "saxpy", 0, &2.5f32.to_ne_bytes());
        args.ptr(p, "saxpy", 1, &mut x);
        args.ptr(p, "saxpy", 2, &mut y);
        launch(p, "saxpy", &args, 1, [0; 3], [n as u64, 1, 1], [16, 1, 1]);
        assert_eq!(y, expect, "{r:?}");
    });
}

#[test]
fn matmul_naive() {
    both(|r| {
        let p = program(r);
        let (m, k, n) = (7usize, 5usize, 9usize);
        let mut a: Vec<f32> = (0..m * k).map(|i| (i % 7) as f32 - 3.0).collect();
        let mut b: Vec<f32> = (0..k * n).map(|i| (i % 5) as f32 * 0.25).collect();
        let mut c = vec![0f32; m * n];
        let (mut args, _) = Args::new(p, "matmul");
        args.ptr(p, "matmul", 0, &mut a);
        args.ptr(p, "matmul", 1, &mut b);
        args.ptr(p, "matmul", 2, &mut c);
        args.set(p, "matmul", 3, &(n as i32).to_ne_bytes());
        args.set(p, "matmul", 4, &(k as i32).to_ne_bytes());
        launch(
            p,
            "matmul",
            &args,
            2,
            [0; 3],
            [n as u64, m as u64, 1],
            [3, 7, 1],
        );
        for row in 0..m {
            for col in 0..n {
                let mut acc = 0f32;
                for i in 0..k {
                    acc += a[row * k + i] * b[i * n + col];
                }
                assert_eq!(c[row * n + col], acc, "{r:?} ({row},{col})");
            }
        }
    });
}

#[test]
fn mandelbrot() {
    both(|r| {
        let p = program(r);
        let (w, h, max_iter) = (64usize, 48usize, 200i32);
        let (x0, y0, step) = (-2.0f32, -1.2f32, 0.05f32);
        let mut out = vec![-1i32; w * h];
        let (mut args, _) = Args::new(p, "mandel");
        args.ptr(p, "mandel", 0, &mut out);
        args.set(p, "mandel", 1, &(w as i32).to_ne_bytes());
        args.set(p, "mandel", 2, &x0.to_ne_bytes());
        args.set(p, "mandel", 3, &y0.to_ne_bytes());
        args.set(p, "mandel", 4, &step.to_ne_bytes());
        args.set(p, "mandel", 5, &max_iter.to_ne_bytes());
        launch(
            p,
            "mandel",
            &args,
            2,
            [0; 3],
            [w as u64, h as u64, 1],
            [8, 8, 1],
        );
        for py in 0..h {
            for px in 0..w {
                let (cr, ci) = (x0 + px as f32 * step, y0 + py as f32 * step);
                let (mut zr, mut zi, mut it) = (0f32, 0f32, 0);
                while it < max_iter {
                    let (zr2, zi2) = (zr * zr, zi * zi);
                    if zr2 + zi2 > 4.0 {
                        break;
                    }
                    let t = zr2 - zi2 + cr;
                    zi = 2.0 * zr * zi + ci;
                    zr = t;
                    it += 1;
                }
                assert_eq!(out[py * w + px], it, "{r:?} pixel ({px},{py})");
            }
        }
    });
}

#[test]
fn integer_hash() {
    both(|r| {
        let p = program(r);
        let n = 300;
        let mut input: Vec<u32> = (0..n as u32)
            .map(|i| i.wrapping_mul(2654435761) ^ (i << 3))
            .collect();
        let mut out = vec![0u32; n];
        let mut out64 = vec![0u64; n];
        let (mut args, _) = Args::new(p, "hash");
        args.ptr(p, "hash", 0, &mut input);
        args.ptr(p, "hash", 1, &mut out);
        args.ptr(p, "hash", 2, &mut out64);
        launch(p, "hash", &args, 1, [0; 3], [n as u64, 1, 1], [7, 1, 1]);
        for i in 0..n {
            let mut x = input[i];
            x = x.rotate_left(7) ^ x.wrapping_mul(0x9E37_79B9);
            x = x.wrapping_add(x.leading_zeros() + x.count_ones() * 3);
            assert_eq!(out[i], x, "{r:?} uint {i}");
            let y = (u64::from(input[i]) << 32) | u64::from(input[i]);
            let e = y
                .rotate_left(13)
                .wrapping_add(u64::from(y.leading_zeros()))
                .wrapping_add(u64::from(y.count_ones()));
            assert_eq!(out64[i], e, "{r:?} ulong {i}");
        }
    });
}

#[test]
fn float4_constant_and_struct_arguments() {
    both(|r| {
        let p = program(r);
        let n = 33;
        let mut a: Vec<[f32; 4]> = (0..n)
            .map(|i| {
                [
                    i as f32 * 0.5,
                    -(i as f32),
                    1.25 * i as f32,
                    0.1 * i as f32 - 1.5,
                ]
            })
            .collect();
        let mut w: Vec<[f32; 4]> = vec![[1.0, 2.0, 0.5, -1.0], [0.25, -0.5, 1.0, 2.0]];
        let mut out = vec![0f32; n];
        let params: [u8; 8] = {
            let mut b = [0u8; 8];
            b[..4].copy_from_slice(&1.5f32.to_ne_bytes());
            b[4..].copy_from_slice(&3i32.to_ne_bytes());
            b
        };
        let (mut args, _) = Args::new(p, "vec4");
        args.ptr(p, "vec4", 0, &mut a);
        args.ptr(p, "vec4", 1, &mut w);
        args.set(p, "vec4", 2, &params);
        args.ptr(p, "vec4", 3, &mut out);
        launch(p, "vec4", &args, 1, [0; 3], [n as u64, 1, 1], [11, 1, 1]);
        for i in 0..n {
            let v: Vec<f32> = (0..4).map(|j| a[i][j] * w[0][j] + 3.0).collect();
            let dot = v[0] * w[1][0] + v[1] * w[1][1] + v[2] * w[1][2] + v[3] * w[1][3];
            let e = dot * 1.5 + v[0].abs().max(v[1]) + v[2].floor() + v[3].clamp(-1.0, 1.0);
            assert!(
                (out[i] - e).abs() <= e.abs() * 1e-6,
                "{r:?} {i}: {} vs {e}",
                out[i]
            );
        }
    });
}

#[test]
fn by_value_structs_written_or_only_read() {
    both(|r| {
        let p = program(r);
        let params = |scale: f32, bias: i32| -> [u8; 8] {
            let mut b = [0u8; 8];
            b[..4].copy_from_slice(&scale.to_ne_bytes());
            b[4..].copy_from_slice(&bias.to_ne_bytes());
            b
        };
        let (n, local) = (22usize, 8u64);
        let mut out = vec![0f32; n];
        let (mut args, _) = Args::new(p, "struct_copies");
        args.set(p, "struct_copies", 0, &params(0.5, 7));
        args.set(p, "struct_copies", 1, &params(2.0, -3));
        args.ptr(p, "struct_copies", 2, &mut out);
        args.set(p, "struct_copies", 3, &0u64.to_ne_bytes());
        launch(
            p,
            "struct_copies",
            &args,
            1,
            [0; 3],
            [n as u64, 1, 1],
            [local, 1, 1],
        );
        for (i, &got) in out.iter().enumerate() {
            let (group, l) = (i / local as usize, i % local as usize);
            let size = (n - group * local as usize).min(local as usize);
            let mirror = group * local as usize + size - 1 - l;
            let e = (0.5 + i as f32) * 2.0 + (7 - l as i32 - 3) as f32 + (0.5 + mirror as f32);
            assert_eq!(got, e, "{r:?} {i}");
        }
        assert_ne!(
            p.kernel("struct_copies")
                .expect("kernel")
                .work_item_frame_size,
            0,
            "{r:?}: a kernel with a barrier"
        );
    });
}

#[test]
fn work_item_functions_in_three_dimensions_with_offsets() {
    both(|r| {
        let p = program(r);
        let global = [6u64, 4, 3];
        let local = [3u64, 2, 3];
        let offset = [5u64, 7, 11];
        let total = (global[0] * global[1] * global[2]) as usize;
        let mut out = vec![0u64; total * 4];
        let (mut args, _) = Args::new(p, "ids");
        args.ptr(p, "ids", 0, &mut out);
        launch(p, "ids", &args, 3, offset, global, local);
        for z in 0..global[2] {
            for y in 0..global[1] {
                for x in 0..global[0] {
                    let lin = ((z * global[1] + y) * global[0] + x) as usize;
                    let g = [x + offset[0], y + offset[1], z + offset[2]];
                    assert_eq!(
                        out[lin * 4],
                        g[0] + 1000 * g[1] + 1_000_000 * g[2],
                        "{r:?} gid"
                    );
                    let l = [x % local[0], y % local[1], z % local[2]];
                    assert_eq!(
                        out[lin * 4 + 1],
                        l[0] + 1000 * l[1] + 1_000_000 * l[2],
                        "{r:?} lid"
                    );
                    let gr = [x / local[0], y / local[1], z / local[2]];
                    assert_eq!(
                        out[lin * 4 + 2],
                        gr[0] + 1000 * gr[1] + 1_000_000 * gr[2],
                        "{r:?} group"
                    );
                    assert_eq!(
                        out[lin * 4 + 3],
                        3 + 10 * local[0] + 1000 * (global[0] / local[0]),
                        "{r:?} dims"
                    );
                }
            }
        }
    });
}

#[test]
fn division_by_zero_and_nan_conversion_do_not_trap() {
    both(|r| {
        let p = program(r);
        let mut a = vec![7i32, i32::MIN, 5, -9];
        let mut b = vec![0i32, -1, 2, 4];
        let mut q = vec![0i32; 4];
        let mut f = vec![f32::NAN, 1e20, -1e20, 3.7];
        let mut conv = vec![0i32; 4];
        let (mut args, _) = Args::new(p, "div_edge");
        args.ptr(p, "div_edge", 0, &mut a);
        args.ptr(p, "div_edge", 1, &mut b);
        args.ptr(p, "div_edge", 2, &mut q);
        args.ptr(p, "div_edge", 3, &mut f);
        args.ptr(p, "div_edge", 4, &mut conv);
        launch(p, "div_edge", &args, 1, [0; 3], [4, 1, 1], [4, 1, 1]);
        // Defined inputs give the C results; x/0 and INT_MIN/-1 only must not trap.
        assert_eq!(q[2], 5 / 2 + 5 % 2, "{r:?}");
        assert_eq!(q[3], -9 / 4 + -9 % 4, "{r:?}");
        assert_eq!(conv[3], 3, "{r:?}");
    });
}

#[test]
fn local_pointer_argument() {
    both(|r| {
        let p = program(r);
        let n = 40;
        let mut input: Vec<i32> = (0..n).collect();
        let mut out = vec![0i32; n as usize];
        let (mut args, _) = Args::new(p, "local_scratch");
        args.ptr(p, "local_scratch", 0, &mut input);
        args.ptr(p, "local_scratch", 1, &mut out);
        args.set(p, "local_scratch", 2, &0u64.to_ne_bytes());
        launch(
            p,
            "local_scratch",
            &args,
            1,
            [0; 3],
            [n as u64, 1, 1],
            [8, 1, 1],
        );
        for i in 0..n as usize {
            assert_eq!(out[i], input[i] * 2 + 1, "{r:?}");
        }
    });
}

#[test]
fn mutated_modules_build_or_fail_cleanly() {
    // Codegen sits behind the frontend's validation, but the rules that validation does not
    // cover yet must still end in a BuildError, not a panic.
    for recipe in [Recipe::O0, Recipe::Optimized] {
        let bytes = spirv("basic.cl", recipe);
        let words = bytes.len() / 4;
        let mut built = 0;
        let mut refused = 0;
        for at in (5..words).step_by(7) {
            for value in [0u32, 1, 0x0000_0003, 0xffff_ffff] {
                let mut m = bytes.clone();
                m[at * 4..at * 4 + 4].copy_from_slice(&value.to_le_bytes());
                let Ok(module) = ferrocl_frontend::parse(&m) else {
                    continue;
                };
                let result =
                    std::panic::catch_unwind(|| compile(&module, &default_options()).map(|_| ()));
                match result {
                    Ok(Ok(())) => built += 1,
                    Ok(Err(e)) => {
                        assert!(e.log.starts_with("error:") || e.log.starts_with("internal:"), "unhelpful log: {}", e.log);
                        refused += 1;
                    }
                    Err(_) => panic!("codegen panicked on a module mutated at word {at} with {value:#x} ({recipe:?})"),
                }
            }
        }
        assert!(built + refused > 0);
    }
}
