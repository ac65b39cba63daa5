//! Work-group barriers: early returns, recomputed values, reductions, tiles, loops, branches, calls, and kernels past the specialisation budget.

use super::*;

fn set_i32(args: &mut Args, p: &Program, k: &str, i: usize, v: i32) {
    args.set(p, k, i, &v.to_ne_bytes());
}

#[test]
fn work_items_returning_before_a_barrier_leave_the_others_synchronised() {
    both(|r| {
        let p = barrier_program(r);
        for (n, local) in [(13usize, 8u64), (16, 8), (5, 16), (1, 1), (7, 4)] {
            let global = n.div_ceil(local as usize) as u64 * local;
            let mut input: Vec<i32> = (0..global as i32).map(|i| i * 3 + 1).collect();
            let mut out = vec![0i32; global as usize];
            let (mut args, _) = Args::new(p, "early_return");
            args.ptr(p, "early_return", 0, &mut input);
            args.ptr(p, "early_return", 1, &mut out);
            set_i32(&mut args, p, "early_return", 2, n as i32);
            launch(
                p,
                "early_return",
                &args,
                1,
                [0; 3],
                [global, 1, 1],
                [local, 1, 1],
            );
            for (gid, &got) in out.iter().enumerate() {
                let (g, l) = (gid / local as usize, gid % local as usize);
                let start = g * local as usize;
                let active = (local as usize).min(n.saturating_sub(start));
                let want = if gid < n {
                    input[start + active - 1 - l] * 2
                } else {
                    0
                };
                assert_eq!(got, want, "{r:?} n {n} local {local} item {gid}");
            }
        }
        for local in [4u64, 8, 16] {
            let mut out = vec![0i32; 2 * local as usize];
            let (mut args, _) = Args::new(p, "return_between_barriers");
            args.ptr(p, "return_between_barriers", 0, &mut out);
            launch(
                p,
                "return_between_barriers",
                &args,
                1,
                [0; 3],
                [2 * local, 1, 1],
                [local, 1, 1],
            );
            for (gid, &got) in out.iter().enumerate() {
                let l = gid % local as usize;
                // s[l] = l + 1 and t[l] = s[l] + s[l + 1] for the first three.
                let t = [1 + 2, 2 + 3, 3 + 4];
                let want = if l < 3 { t[2 - l] } else { -(l as i32 + 1) };
                assert_eq!(got, want, "{r:?} local {local} item {gid}");
            }
        }
        // Disagreeing barriers: undefined results, but the group finishes and every work-item
        // runs to its end.
        let mut out = vec![0i32; 16];
        let (mut args, _) = Args::new(p, "divergent_barriers");
        args.ptr(p, "divergent_barriers", 0, &mut out);
        launch(
            p,
            "divergent_barriers",
            &args,
            1,
            [0; 3],
            [16, 1, 1],
            [8, 1, 1],
        );
        for (i, &v) in out.iter().enumerate() {
            assert_eq!(v, if i % 2 == 1 { 1 } else { 2 }, "{r:?} item {i}");
        }
    });
}

#[test]
fn values_derived_from_the_local_id_are_recomputed_after_barriers() {
    both(|r| {
        let p = barrier_program(r);
        if let Recipe::Optimized = r {
            let k = p.kernel("reduce_fixed").expect("kernel");
            // The resume state only: the local id, the pointers derived from it and the
            // arguments all stay out of the work-item frame.
            assert_eq!(k.work_item_frame_size, 16);
            // The unrolled tree has one barrier after another: a fixed order of regions.
            assert_eq!(k.barrier_schedule, BarrierSchedule::Static);
            // So does the unrolled loop of many_barriers.
            assert_eq!(
                p.kernel("many_barriers").expect("kernel").barrier_schedule,
                BarrierSchedule::Static
            );
        }
        // Barriers in a loop that may end after any of its rounds: regions with two ways out,
        // chained by where the work-items stopped when they all agree.
        assert_eq!(
            p.kernel("loop_break").expect("kernel").barrier_schedule,
            BarrierSchedule::Static
        );
        // Some work-items may return before the barrier: the same, and when they disagree
        // the checked copies' dynamic rounds take over
        // (work_items_returning_before_a_barrier_leave_the_others_synchronised).
        assert_eq!(
            p.kernel("early_return").expect("kernel").barrier_schedule,
            BarrierSchedule::Static
        );
        assert_eq!(
            program(r).kernel("vadd").map(|k| k.barrier_schedule),
            Some(BarrierSchedule::None)
        );
        let groups = 3usize;
        let mut input: Vec<f32> = (0..64 * groups).map(|i| (i % 29) as f32).collect();
        let mut out = vec![0f32; groups];
        let (mut args, _) = Args::new(p, "reduce_fixed");
        args.ptr(p, "reduce_fixed", 0, &mut input);
        args.ptr(p, "reduce_fixed", 1, &mut out);
        launch(
            p,
            "reduce_fixed",
            &args,
            1,
            [0; 3],
            [64 * groups as u64, 1, 1],
            [64, 1, 1],
        );
        for (g, &got) in out.iter().enumerate() {
            let e: f32 = input[g * 64..(g + 1) * 64].iter().sum();
            assert_eq!(got, e, "{r:?} group {g}");
        }
    });
}

#[test]
fn barrier_reduction_in_local_memory() {
    both(|r| {
        let p = barrier_program(r);
        assert!(p.kernel("reduce_sum").expect("kernel").work_item_frame_size > 0);
        for local in [1u64, 8, 64] {
            let groups = 5u64;
            let n = (local * groups) as usize;
            let mut input: Vec<f32> = (0..n).map(|i| (i % 13) as f32).collect();
            let mut out = vec![0f32; groups as usize];
            let (mut args, _) = Args::new(p, "reduce_sum");
            args.ptr(p, "reduce_sum", 0, &mut input);
            args.ptr(p, "reduce_sum", 1, &mut out);
            args.set(p, "reduce_sum", 2, &0u64.to_ne_bytes());
            launch(
                p,
                "reduce_sum",
                &args,
                1,
                [0; 3],
                [n as u64, 1, 1],
                [local, 1, 1],
            );
            for g in 0..groups as usize {
                let e: f32 = input[g * local as usize..(g + 1) * local as usize]
                    .iter()
                    .sum();
                assert_eq!(out[g], e, "{r:?} local {local} group {g}");
            }
        }
    });
}

#[test]
fn barrier_tiled_matmul() {
    both(|r| {
        let p = barrier_program(r);
        let n = 12usize;
        let mut a: Vec<f32> = (0..n * n).map(|i| (i % 7) as f32 - 2.0).collect();
        let mut b: Vec<f32> = (0..n * n).map(|i| (i % 5) as f32 * 0.5).collect();
        let mut c = vec![0f32; n * n];
        let (mut args, _) = Args::new(p, "matmul_tiled");
        args.ptr(p, "matmul_tiled", 0, &mut a);
        args.ptr(p, "matmul_tiled", 1, &mut b);
        args.ptr(p, "matmul_tiled", 2, &mut c);
        set_i32(&mut args, p, "matmul_tiled", 3, n as i32);
        launch(
            p,
            "matmul_tiled",
            &args,
            2,
            [0; 3],
            [n as u64, n as u64, 1],
            [4, 4, 1],
        );
        for row in 0..n {
            for col in 0..n {
                let mut acc = 0f32;
                for t in 0..n / 4 {
                    for k in 0..4 {
                        acc += a[row * n + t * 4 + k] * b[(t * 4 + k) * n + col];
                    }
                }
                assert_eq!(c[row * n + col], acc, "{r:?} ({row},{col})");
            }
        }
    });
}

#[test]
fn barrier_in_loop_with_uniform_break_and_private_array() {
    both(|r| {
        let p = barrier_program(r);
        for (local, stop) in [(7u64, 5i32), (1, 0), (13, 9)] {
            let n = local as usize * 2;
            let mut out = vec![0i32; n];
            let (mut args, _) = Args::new(p, "loop_break");
            args.ptr(p, "loop_break", 0, &mut out);
            args.set(p, "loop_break", 1, &0u64.to_ne_bytes());
            set_i32(&mut args, p, "loop_break", 2, stop);
            launch(
                p,
                "loop_break",
                &args,
                1,
                [0; 3],
                [n as u64, 1, 1],
                [local, 1, 1],
            );
            for (gid, &got) in out.iter().enumerate() {
                let l = (gid as u64 % local) as i32;
                let nl = local as i32;
                let mut h = [0i32; 4];
                for i in 0..=stop {
                    h[(i & 3) as usize] += ((l + 1) % nl) * i;
                }
                assert_eq!(
                    got,
                    h[0] + 10 * h[1] + 100 * h[2] + 1000 * h[3],
                    "{r:?} local {local} item {gid}"
                );
            }
        }
    });
}

#[test]
fn barrier_under_uniform_branch_and_in_called_function() {
    both(|r| {
        let p = barrier_program(r);
        for mode in [0, 1] {
            let local = 5u64;
            let n = 10usize;
            let mut out = vec![0i32; n];
            let (mut args, _) = Args::new(p, "branch_and_call");
            args.ptr(p, "branch_and_call", 0, &mut out);
            args.set(p, "branch_and_call", 1, &0u64.to_ne_bytes());
            set_i32(&mut args, p, "branch_and_call", 2, mode);
            launch(
                p,
                "branch_and_call",
                &args,
                1,
                [0; 3],
                [n as u64, 1, 1],
                [local, 1, 1],
            );
            let nl = local as i32;
            let s0: Vec<i32> = (0..nl).map(|l| l + 1).collect();
            let v: Vec<i32> = (0..nl)
                .map(|l| {
                    if mode > 0 {
                        s0[((l + nl - 1) % nl) as usize] + s0[((l + 1) % nl) as usize]
                    } else {
                        0
                    }
                })
                .collect();
            let s1: Vec<i32> = if mode > 0 { v.clone() } else { s0.clone() };
            for (gid, &got) in out.iter().enumerate() {
                let l = (gid as u64 % local) as i32;
                assert_eq!(
                    got,
                    s1[((l + 2) % nl) as usize] * 1000 + v[l as usize],
                    "{r:?} mode {mode} item {gid}"
                );
            }
        }
    });
}

#[test]
fn barrier_kernels_beyond_the_specialisation_budget() {
    both(|r| {
        let p = barrier_program(r);
        let local = 6u64;
        let n = 12usize;
        let mut out = vec![0i32; n];
        let (mut args, _) = Args::new(p, "many_barriers");
        args.ptr(p, "many_barriers", 0, &mut out);
        args.set(p, "many_barriers", 1, &0u64.to_ne_bytes());
        launch(
            p,
            "many_barriers",
            &args,
            1,
            [0; 3],
            [n as u64, 1, 1],
            [local, 1, 1],
        );
        for group in 0..n / local as usize {
            let nl = local as i32;
            let mut acc: Vec<i32> = (0..nl).collect();
            for i in 0..40 {
                let s: Vec<i32> = acc.iter().map(|a| a.wrapping_mul(3) + i).collect();
                for l in 0..nl as usize {
                    acc[l] = acc[l].wrapping_add(s[(l + i as usize) % nl as usize] ^ (acc[l] >> 3));
                }
            }
            for l in 0..local as usize {
                assert_eq!(
                    out[group * local as usize + l],
                    acc[l],
                    "{r:?} group {group} item {l}"
                );
            }
        }
    });
}
