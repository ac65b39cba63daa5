//! Atomics on global and local memory, async copies, and work-group collectives.

use super::*;

#[test]
fn atomics_on_global_memory() {
    both(|r| {
        let p = atomic_program(r);
        let n = 40i32;
        let mut g = vec![0i32, 0, 0, 0, i32::MAX, i32::MIN, 0];
        let mut u = vec![u32::MAX, 0, 0, u32::MAX, 0];
        let mut l = vec![0i64, i64::MIN];
        let mut f = vec![-1.0f32];
        let mut old = vec![-1i32; n as usize];
        let (mut args, _) = Args::new(p, "global_ops");
        args.ptr(p, "global_ops", 0, &mut g);
        args.ptr(p, "global_ops", 1, &mut u);
        args.ptr(p, "global_ops", 2, &mut l);
        args.ptr(p, "global_ops", 3, &mut f);
        args.ptr(p, "global_ops", 4, &mut old);
        launch(
            p,
            "global_ops",
            &args,
            1,
            [0; 3],
            [n as u64, 1, 1],
            [8, 1, 1],
        );
        let ids = 0..n;
        assert_eq!(g[0], n, "{r:?} inc");
        assert_eq!(g[1], -n, "{r:?} dec");
        assert_eq!(g[2], ids.clone().sum::<i32>(), "{r:?} add");
        assert_eq!(g[3], -ids.clone().sum::<i32>(), "{r:?} sub");
        assert_eq!(
            g[4],
            ids.clone().map(|i| 100 - i * 3).min().unwrap_or(0),
            "{r:?} min"
        );
        assert_eq!(
            g[5],
            ids.clone().map(|i| i * 7 - 50).max().unwrap_or(0),
            "{r:?} max"
        );
        assert_eq!(u[0], 0, "{r:?} and clears every bit");
        assert_eq!(u[1], u32::MAX, "{r:?} or");
        let xor = ids.clone().fold(0u32, |acc, i| acc ^ (1 << (i % 5)));
        assert_eq!(u[2], xor, "{r:?} xor");
        assert_eq!(u[3], 3, "{r:?} umin");
        assert_eq!(u[4], (n - 1) as u32, "{r:?} umax");
        assert_eq!(
            l[0],
            ids.clone().map(|i| i64::from(i) << 33).sum::<i64>(),
            "{r:?} atom_add"
        );
        assert_eq!(l[1], i64::from(n - 1) - 1_000_000_000_000, "{r:?} atom_max");
        assert!(
            f[0] >= 0.0 && f[0] < n as f32 && f[0].fract() == 0.0,
            "{r:?} xchg left {}",
            f[0]
        );
        // One winner saw 0; everyone else saw the winner's value.
        let winners: Vec<i32> = (0..n).filter(|&i| old[i as usize] == 0).collect();
        assert_eq!(winners.len(), 1, "{r:?} cmpxchg winners {winners:?}");
        assert_eq!(g[6], winners[0] + 1, "{r:?}");
        assert!(old.iter().all(|&o| o == 0 || o == winners[0] + 1), "{r:?}");
    });
}

#[test]
fn atomics_on_local_memory() {
    both(|r| {
        let p = atomic_program(r);
        let n = 200usize;
        let mut data: Vec<u8> = (0..n).map(|i| (i * 7 + i / 3) as u8).collect();
        let mut hist = vec![0u32; 16];
        let (mut args, _) = Args::new(p, "local_histogram");
        args.ptr(p, "local_histogram", 0, &mut data);
        args.ptr(p, "local_histogram", 1, &mut hist);
        args.set(p, "local_histogram", 2, &0u64.to_ne_bytes());
        launch(
            p,
            "local_histogram",
            &args,
            1,
            [0; 3],
            [n as u64, 1, 1],
            [8, 1, 1],
        );
        let mut want = vec![0u32; 16];
        for d in &data {
            want[(d & 15) as usize] += 1;
        }
        assert_eq!(hist, want, "{r:?}");
    });
}

#[test]
fn async_work_group_copies() {
    both(|r| {
        let p = barrier_program(r);
        let (local, groups) = (5usize, 3usize);
        let n = local * groups;
        let mut input: Vec<[f32; 4]> = (0..n)
            .map(|i| {
                [
                    i as f32,
                    100.0 + i as f32,
                    200.0 + i as f32,
                    300.0 + i as f32,
                ]
            })
            .collect();
        let mut out = vec![0f32; n];
        let mut strided = vec![-1f32; n * 4];
        let (mut args, _) = Args::new(p, "async_copies");
        args.ptr(p, "async_copies", 0, &mut input);
        args.ptr(p, "async_copies", 1, &mut out);
        args.ptr(p, "async_copies", 2, &mut strided);
        args.set(p, "async_copies", 3, &0u64.to_ne_bytes());
        launch(
            p,
            "async_copies",
            &args,
            1,
            [0; 3],
            [n as u64, 1, 1],
            [local as u64, 1, 1],
        );
        for (i, &o) in out.iter().enumerate() {
            assert_eq!(o, input[i][0] + input[i][3], "{r:?} item {i}");
        }
        // Group g copies 2*local floats of its tile (x, y, z, w, x, …) to every other float of
        // its 4*local-float window.
        for g in 0..groups {
            let tile: Vec<f32> = input[g * local..(g + 1) * local]
                .iter()
                .flatten()
                .copied()
                .collect();
            for j in 0..local * 2 {
                assert_eq!(
                    strided[g * local * 4 + j * 2],
                    tile[j],
                    "{r:?} group {g} float {j}"
                );
            }
        }
    });
}

/// A work-group reduction in the device's documented order (group.rs `group_step`):
/// accumulator j folds the values of local ids j, j + 8, j + 16, … in turn, then the eight
/// combine as a tree, skipping accumulators past the group.
fn work_group_fold<T: Copy>(xs: &[T], f: impl Fn(T, T) -> T) -> T {
    let mut acc: Vec<Option<T>> = vec![None; 8];
    for (i, &x) in xs.iter().enumerate() {
        let a = &mut acc[i % 8];
        *a = Some(a.map_or(x, |a| f(a, x)));
    }
    let mut width = 1;
    while width < 8 {
        for j in (0..8).step_by(2 * width) {
            if let (Some(a), Some(b)) = (acc[j], acc[j + width]) {
                acc[j] = Some(f(a, b));
            }
        }
        width *= 2;
    }
    acc[0].expect("a non-empty group")
}

#[test]
fn work_group_collectives() {
    both(|r| {
        let p = build_with("collectives.cl", r, CL3_COLLECTIVES);
        // 1-D with a smaller last group, 1-D groups of more than eight work-items (the fold's
        // accumulators) with a last round of five, and 2-D groups of 3x2.
        for (dims, global, local) in [
            (1u32, [13u64, 1, 1], [5u64, 1, 1]),
            (1, [90, 1, 1], [37, 1, 1]),
            (2, [6, 4, 1], [3, 2, 1]),
        ] {
            let mut order_told = false;
            let n = (global[0] * global[1]) as usize;
            let mut a: Vec<i32> = (0..n as i32).map(|i| (i * 37 % 23) - 11).collect();
            let mut u: Vec<u32> = (0..n as u32)
                .map(|i| i.wrapping_mul(2_654_435_761) >> 20)
                .collect();
            let mut f: Vec<f32> = (0..n).map(|i| (i as f32 * 0.37).sin() * 10.0).collect();
            let (mut oi, mut ou, mut of) =
                (vec![0i32; n * 8], vec![0u32; n * 3], vec![0f32; n * 3]);
            let (mut args, _) = Args::new(&p, "collectives");
            args.ptr(&p, "collectives", 0, &mut a);
            args.ptr(&p, "collectives", 1, &mut u);
            args.ptr(&p, "collectives", 2, &mut f);
            args.ptr(&p, "collectives", 3, &mut oi);
            args.ptr(&p, "collectives", 4, &mut ou);
            args.ptr(&p, "collectives", 5, &mut of);
            launch(&p, "collectives", &args, dims, [0; 3], global, local);
            // Work-items of each group, in local linear order.
            let mut groups: std::collections::BTreeMap<(u64, u64), Vec<usize>> = Default::default();
            for y in 0..global[1] {
                for x in 0..global[0] {
                    groups
                        .entry((x / local[0], y / local[1]))
                        .or_default()
                        .push((y * global[0] + x) as usize);
                }
            }
            for members in groups.values_mut() {
                members.sort_by_key(|&g| {
                    let (x, y) = (g as u64 % global[0], g as u64 / global[0]);
                    (y % local[1]) * local[0] + x % local[0]
                });
                let xs: Vec<i32> = members.iter().map(|&g| a[g]).collect();
                let ys: Vec<u32> = members.iter().map(|&g| u[g]).collect();
                let zs: Vec<f32> = members.iter().map(|&g| f[g]).collect();
                let zsum = work_group_fold(&zs, |a, b| a + b);
                let zmin = work_group_fold(&zs, f32::min);
                // The inputs must tell the order apart from a chain in local-id order.
                order_told |= zsum != zs.iter().fold(0f32, |s, v| s + v);
                for (k, &g) in members.iter().enumerate() {
                    let want_i = [
                        xs.iter().sum::<i32>(),
                        *xs.iter().min().expect("non-empty"),
                        *xs.iter().max().expect("non-empty"),
                        xs[..=k].iter().sum(),
                        xs[..k].iter().copied().max().unwrap_or(i32::MIN),
                        i32::from(xs.iter().all(|&v| v > -1000)),
                        i32::from(xs.contains(&7)),
                        xs[1], // broadcast from local id 1 (1-D) or (1, 0) (2-D)
                    ];
                    assert_eq!(&oi[g * 8..g * 8 + 8], &want_i, "{r:?} dims {dims} item {g}");
                    let want_u = [
                        *ys.iter().max().expect("non-empty"),
                        *ys[..=k].iter().min().expect("non-empty"),
                        ys[..k].iter().sum::<u32>(),
                    ];
                    assert_eq!(&ou[g * 3..g * 3 + 3], &want_u, "{r:?} dims {dims} item {g}");
                    let want_f = [
                        zsum,
                        zs[..=k].iter().copied().fold(f32::NEG_INFINITY, f32::max),
                        zmin,
                    ];
                    assert_eq!(&of[g * 3..g * 3 + 3], &want_f, "{r:?} dims {dims} item {g}");
                }
            }
            if local[0] > 8 {
                assert!(order_told, "the float inputs sum the same in both orders");
            }
        }
    });
}

#[test]
fn work_group_collectives_on_64_bit_types() {
    both(|r| {
        let p = build_with("collectives.cl", r, CL3_COLLECTIVES);
        let (n, local) = (11usize, 4usize); // groups of 4, 4 and 3
        let mut a: Vec<i64> = (0..n as i64)
            .map(|i| (i * 0x1_0000_0001 * 7) % 1_000_000_007 - 400_000_000)
            .collect();
        let mut u: Vec<u64> = (0..n as u64)
            .map(|i| u64::MAX - i.wrapping_mul(0x9E37_79B9_7F4A_7C15) % 1_000_000)
            .collect();
        let mut f: Vec<f64> = (0..n).map(|i| (i as f64 * 0.7).cos() * 1e3).collect();
        let (mut ol, mut ou, mut od) = (vec![0i64; n * 4], vec![0u64; n * 2], vec![0f64; n * 2]);
        let (mut args, _) = Args::new(&p, "collectives64");
        args.ptr(&p, "collectives64", 0, &mut a);
        args.ptr(&p, "collectives64", 1, &mut u);
        args.ptr(&p, "collectives64", 2, &mut f);
        args.ptr(&p, "collectives64", 3, &mut ol);
        args.ptr(&p, "collectives64", 4, &mut ou);
        args.ptr(&p, "collectives64", 5, &mut od);
        launch(
            &p,
            "collectives64",
            &args,
            1,
            [0; 3],
            [n as u64, 1, 1],
            [local as u64, 1, 1],
        );
        for start in (0..n).step_by(local) {
            let end = (start + local).min(n);
            let (xs, ys, zs) = (&a[start..end], &u[start..end], &f[start..end]);
            for k in 0..end - start {
                let g = start + k;
                let want_l = [
                    xs.iter().sum::<i64>(),
                    *xs[..=k].iter().min().expect("non-empty"),
                    xs[..k].iter().copied().max().unwrap_or(i64::MIN),
                    xs[2],
                ];
                assert_eq!(&ol[g * 4..g * 4 + 4], &want_l, "{r:?} long item {g}");
                let want_u = [
                    *ys.iter().min().expect("non-empty"),
                    ys[..k].iter().fold(0u64, |s, v| s.wrapping_add(*v)),
                ];
                assert_eq!(&ou[g * 2..g * 2 + 2], &want_u, "{r:?} ulong item {g}");
                let want_d = [
                    zs.iter().copied().fold(f64::NEG_INFINITY, f64::max),
                    zs[..=k].iter().fold(0f64, |s, v| s + v),
                ];
                assert_eq!(&od[g * 2..g * 2 + 2], &want_d, "{r:?} double item {g}");
            }
        }
    });
}

#[test]
fn work_group_broadcast_in_a_loop() {
    both(|r| {
        let p = build_with("collectives.cl", r, CL3_COLLECTIVES);
        let (n, local) = (12usize, 4usize);
        let mut a: Vec<i32> = (0..n as i32).map(|i| i * 7 - 20).collect();
        let mut out = vec![0i32; n];
        let (mut args, _) = Args::new(&p, "broadcast_in_loop");
        args.ptr(&p, "broadcast_in_loop", 0, &mut a);
        args.ptr(&p, "broadcast_in_loop", 1, &mut out);
        launch(
            &p,
            "broadcast_in_loop",
            &args,
            1,
            [0; 3],
            [n as u64, 1, 1],
            [local as u64, 1, 1],
        );
        for (g, got) in out.iter().enumerate() {
            let first = g / local * local;
            let want: i32 = (0..3).map(|i| a[first] + i).sum();
            assert_eq!(*got, want, "{r:?} item {g}");
        }
    });
}

/// dpnp's sum: a per-work-item loop, then `work_group_reduce_add`. Under the region schedule
/// the contributions go to a column after the frames and the fold reads them from there;
/// the sums match the documented order bit for bit at local sizes below, at and above the
/// vector width and with a partial last round of the fold, and in optimised wide code the
/// kernel is vectorised (its loop region widened).
#[test]
fn work_group_reduction_of_per_item_sums() {
    both(|r| {
        let p = build_with("collectives.cl", r, CL3_COLLECTIVES);
        let k = p.kernel("reduce_per_item").expect("kernel");
        assert_eq!(k.barrier_schedule, BarrierSchedule::Static, "{r:?}");
        if common::test_backend() == ferrocl_codegen::Backend::Wide
            && matches!(r, Recipe::Optimized)
        {
            assert_eq!(
                k.vectorization,
                ferrocl_codegen::Vectorization::Vectorized {
                    lanes: common::vector_lanes()
                },
                "{r:?}"
            );
        }
        let per_item = 8u32;
        for local in [1usize, 13, 16, 64, 128] {
            let n = 5000usize;
            let groups = n.div_ceil(local * per_item as usize);
            let mut input: Vec<f32> = (0..n).map(|i| (i as f32 * 0.731).sin() * 3.0).collect();
            let mut partial = vec![f32::NAN; groups];
            let (mut args, _) = Args::new(&p, "reduce_per_item");
            args.ptr(&p, "reduce_per_item", 0, &mut input);
            args.ptr(&p, "reduce_per_item", 1, &mut partial);
            args.set(&p, "reduce_per_item", 2, &per_item.to_ne_bytes());
            args.set(&p, "reduce_per_item", 3, &(n as u64).to_ne_bytes());
            let global = (groups * local) as u64;
            launch(
                &p,
                "reduce_per_item",
                &args,
                1,
                [0; 3],
                [global, 1, 1],
                [local as u64, 1, 1],
            );
            for (g, &got) in partial.iter().enumerate() {
                let sums: Vec<f32> = (0..local)
                    .map(|lid| {
                        (0..per_item as usize)
                            .map(|i| g * local * per_item as usize + lid + i * local)
                            .filter(|&at| at < n)
                            .fold(0f32, |acc, at| acc + input[at])
                    })
                    .collect();
                let want = work_group_fold(&sums, |a, b| a + b);
                assert_eq!(
                    got.to_bits(),
                    want.to_bits(),
                    "{r:?} local {local} group {g}"
                );
            }
        }
    });
}
