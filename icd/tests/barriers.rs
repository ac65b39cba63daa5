//! Barriers through the system loader, against host references: kernels/barriers.cl at both
//! recipes (reductions and scans in local memory, a tiled matrix multiply, barriers in loops
//! left by a uniform `break` or `continue`, under a uniform `if`, in a called function, 64 in a
//! row, private arrays live across them, a global fence), kernels/barriers_cl3.cl
//! (`work_group_barrier` forms, the shape of non-uniform ranges in 1, 2 and 3 dimensions with
//! global offsets) and hand-written SPIR-V (data/barriers.spvasm). Local sizes 1, the primes 7,
//! 13 and 127, and the device maximum; ranges of whole groups and ranges ending in a smaller
//! group.

mod common;

use common::*;

/// Local sizes every 1-D pattern runs at; the device maximum is added.
const LOCAL_SIZES: [usize; 4] = [1, 7, 13, 127];

/// (global, local) pairs for 1-D patterns: three whole groups, and (when the program may
/// have non-uniform groups: IL, not PoCL's CL1.2 source builds) two groups and a smaller one.
fn ranges(env: &Env, extra_local: &[usize]) -> Vec<(usize, usize)> {
    let max = check(
        cl(env.device.max_work_group_size()),
        "CL_DEVICE_MAX_WORK_GROUP_SIZE",
    );
    assert!(max >= 4096, "CL_DEVICE_MAX_WORK_GROUP_SIZE {max}");
    let mut out = Vec::new();
    for &local in LOCAL_SIZES.iter().chain(extra_local).chain([&max]) {
        out.push((3 * local, local));
        if !env.other_icd && local > 1 {
            out.push((2 * local + local / 2 + 1, local));
        }
    }
    out
}

/// The groups of a 1-D range: (first work-item, size), the last one possibly smaller.
fn groups(global: usize, local: usize) -> impl Iterator<Item = (usize, usize)> {
    (0..global.div_ceil(local)).map(move |g| (g * local, local.min(global - g * local)))
}

/// Inputs that make wrong orders visible: distinct, signed, not a pattern of the index.
fn inputs(n: usize, seed: u64) -> Vec<i32> {
    let mut rng = Rng::new(seed);
    (0..n)
        .map(|_| (rng.next_u32() % 2001) as i32 - 1000)
        .collect()
}

/// Enqueues a 1-D launch and waits.
fn run_1d(env: &Env, k: &Kernel, global: usize, local: usize) {
    env.run(k, &[global], Some(&[local]), None);
}

/// Per work-item reference for a kernel whose work-items' results depend on their group: `f`
/// gets the group's inputs and returns its outputs.
fn per_group(
    global: usize,
    local: usize,
    input: &[i32],
    f: impl Fn(&[i32]) -> Vec<i32>,
) -> Vec<i32> {
    groups(global, local)
        .flat_map(|(start, n)| f(&input[start..start + n]))
        .collect()
}

#[test]
fn tree_reduction_and_scan_in_local_memory() {
    let env = Env::new();
    for opt in OPTS {
        let program = env.program("barriers", opt);
        let reduce = check(cl(Kernel::create(&program, "reduce_sum")), "reduce_sum");
        let scan = check(
            cl(Kernel::create(&program, "scan_inclusive")),
            "scan_inclusive",
        );
        for (global, local) in ranges(&env, &[64, 256]) {
            let ctx = format!("{opt:?} global {global} local {local}");
            let input = inputs(global, global as u64);
            let bin = env.buffer(&input);
            let groups_n = global.div_ceil(local);
            let bout = env.buffer_filled(groups_n, i32::MIN);
            arg_buf(&reduce, 0, &bin);
            arg_buf(&reduce, 1, &bout);
            arg_local(&reduce, 2, 4 * local);
            run_1d(&env, &reduce, global, local);
            let want: Vec<i32> = groups(global, local)
                .map(|(s, n)| input[s..s + n].iter().sum())
                .collect();
            assert_eq!(env.read(&bout, groups_n), want, "reduce_sum {ctx}");

            let bout = env.buffer_filled(global, i32::MIN);
            arg_buf(&scan, 0, &bin);
            arg_buf(&scan, 1, &bout);
            arg_local(&scan, 2, 2 * 4 * local);
            run_1d(&env, &scan, global, local);
            let want = per_group(global, local, &input, |g| {
                g.iter()
                    .scan(0, |acc, x| {
                        *acc += x;
                        Some(*acc)
                    })
                    .collect()
            });
            assert_eq!(env.read(&bout, global), want, "scan_inclusive {ctx}");
        }
    }
}

#[test]
fn tiled_matrix_multiply() {
    let env = Env::new();
    let (m, n, k) = (40usize, 56usize, 37usize);
    let mut rng = Rng::new(7);
    // Small integers: every product and sum is exact in f32, whatever the order.
    let mut small = |len: usize| -> Vec<f32> {
        (0..len)
            .map(|_| (rng.next_u32() % 9) as f32 - 4.0)
            .collect()
    };
    let a = small(m * k);
    let b = small(k * n);
    let mut want = vec![0f32; m * n];
    for row in 0..m {
        for col in 0..n {
            want[row * n + col] = (0..k).map(|i| a[row * k + i] * b[i * n + col]).sum();
        }
    }
    for opt in OPTS {
        let kernel = check(
            cl(Kernel::create(
                &env.program("barriers", opt),
                "matmul_tiled",
            )),
            "matmul_tiled",
        );
        let (ba, bb) = (env.buffer(&a), env.buffer(&b));
        let bc = env.buffer_filled(m * n, f32::NAN);
        arg_buf(&kernel, 0, &ba);
        arg_buf(&kernel, 1, &bb);
        arg_buf(&kernel, 2, &bc);
        for (i, v) in [m, n, k].iter().enumerate() {
            arg(&kernel, 3 + i as cl_uint, &(*v as i32));
        }
        // Whole 16×16 tiles over C's columns (x) and rows (y).
        env.run(
            &kernel,
            &[n.next_multiple_of(16), m.next_multiple_of(16)],
            Some(&[16, 16]),
            None,
        );
        assert_eq!(env.read(&bc, m * n), want, "{opt:?}");
    }
}

#[test]
fn barriers_in_loops_with_uniform_break_and_continue() {
    let env = Env::new();
    for opt in OPTS {
        let program = env.program("barriers", opt);
        let brk = check(cl(Kernel::create(&program, "loop_break")), "loop_break");
        let cont = check(
            cl(Kernel::create(&program, "loop_continue")),
            "loop_continue",
        );
        for (global, local) in ranges(&env, &[]) {
            let out = env.buffer_filled(global, i32::MIN);
            for stop in [0, 5, 100] {
                arg_buf(&brk, 0, &out);
                arg_local(&brk, 1, 4 * local);
                arg(&brk, 2, &stop);
                run_1d(&env, &brk, global, local);
                let want = per_group(global, local, &vec![0; global], |g| {
                    let n = g.len();
                    (0..n)
                        .map(|l| (0..stop as usize).map(|i| ((l + i) % n + i) as i32).sum())
                        .collect()
                });
                assert_eq!(
                    env.read(&out, global),
                    want,
                    "loop_break {stop} {opt:?} {global}/{local}"
                );
            }
            for skip in [1, 3] {
                arg_buf(&cont, 0, &out);
                arg_local(&cont, 1, 4 * local);
                arg(&cont, 2, &skip);
                run_1d(&env, &cont, global, local);
                let want = per_group(global, local, &vec![0; global], |g| {
                    let n = g.len();
                    (0..n)
                        .map(|l| {
                            (0..20)
                                .filter(|i| i % skip != 0)
                                .map(|i| ((l + 1) % n) as i32 * i)
                                .sum()
                        })
                        .collect()
                });
                assert_eq!(
                    env.read(&out, global),
                    want,
                    "loop_continue {skip} {opt:?} {global}/{local}"
                );
            }
        }
    }
}

#[test]
fn barriers_under_a_uniform_if() {
    let env = Env::new();
    for opt in OPTS {
        let k = check(
            cl(Kernel::create(&env.program("barriers", opt), "uniform_if")),
            "uniform_if",
        );
        for (global, local) in ranges(&env, &[]) {
            for flag in [0i32, 1] {
                let out = env.buffer_filled(global, i32::MIN);
                arg_buf(&k, 0, &out);
                arg_local(&k, 1, 4 * local);
                arg(&k, 2, &flag);
                run_1d(&env, &k, global, local);
                let want: Vec<i32> = groups(global, local)
                    .enumerate()
                    .flat_map(|(group, (_, n))| {
                        (0..n).map(move |l| {
                            let next = (l + 1) % n;
                            if (group % 2) as i32 == flag {
                                (2 * (n - next) + (n - l)) as i32
                            } else {
                                next as i32 + 1
                            }
                        })
                    })
                    .collect();
                assert_eq!(
                    env.read(&out, global),
                    want,
                    "flag {flag} {opt:?} {global}/{local}"
                );
            }
        }
    }
}

#[test]
fn barriers_in_a_called_function_and_many_in_a_row() {
    let env = Env::new();
    for opt in OPTS {
        let program = env.program("barriers", opt);
        let call = check(
            cl(Kernel::create(&program, "barrier_in_call")),
            "barrier_in_call",
        );
        let many = check(
            cl(Kernel::create(&program, "many_barriers")),
            "many_barriers",
        );
        for (global, local) in ranges(&env, &[]) {
            let input = inputs(global, 3 + global as u64);
            let bin = env.buffer(&input);
            let out = env.buffer_filled(global, i32::MIN);
            arg_buf(&call, 0, &bin);
            arg_buf(&call, 1, &out);
            arg_local(&call, 2, 4 * local);
            run_1d(&env, &call, global, local);
            let want = per_group(global, local, &input, |g| {
                let n = g.len();
                let mut v = g.to_vec();
                for k in 0..3 {
                    v = (0..n).map(|l| v[(l + 1) % n] + k).collect();
                }
                v
            });
            assert_eq!(
                env.read(&out, global),
                want,
                "barrier_in_call {opt:?} {global}/{local}"
            );

            arg_buf(&many, 0, &bin);
            arg_buf(&many, 1, &out);
            arg_local(&many, 2, 4 * local);
            run_1d(&env, &many, global, local);
            let want = per_group(global, local, &input, |g| {
                let n = g.len();
                (0..n).map(|l| g[(l + 32) % n] + 32).collect()
            });
            assert_eq!(
                env.read(&out, global),
                want,
                "many_barriers {opt:?} {global}/{local}"
            );
        }
    }
}

#[test]
fn private_arrays_live_across_barriers_and_global_fences() {
    let env = Env::new();
    for opt in OPTS {
        let program = env.program("barriers", opt);
        let private = check(
            cl(Kernel::create(&program, "private_array")),
            "private_array",
        );
        let exchange = check(
            cl(Kernel::create(&program, "global_exchange")),
            "global_exchange",
        );
        for (global, local) in ranges(&env, &[]) {
            let input = inputs(global, 11 + global as u64);
            let bin = env.buffer(&input);
            let out = env.buffer_filled(global, i32::MIN);
            arg_buf(&private, 0, &bin);
            arg_buf(&private, 1, &out);
            arg_local(&private, 2, 4 * local);
            run_1d(&env, &private, global, local);
            let want = per_group(global, local, &input, |g| {
                let n = g.len();
                let mut priv_: Vec<Vec<i32>> = g
                    .iter()
                    .map(|x| (0..16).map(|i| x.wrapping_mul(i + 1)).collect())
                    .collect();
                for r in 0..4 {
                    let buf: Vec<i32> = (0..n).map(|l| priv_[l][r * 4 + l % 4]).collect();
                    for l in 0..n {
                        let slot = (r * 5 + l) % 16;
                        priv_[l][slot] = priv_[l][slot].wrapping_add(buf[(l + 1) % n]);
                    }
                }
                priv_
                    .iter()
                    .map(|p| {
                        p.iter().enumerate().fold(0i32, |s, (i, v)| {
                            s.wrapping_add(v.wrapping_mul(i as i32 + 1))
                        })
                    })
                    .collect()
            });
            assert_eq!(
                env.read(&out, global),
                want,
                "private_array {opt:?} {global}/{local}"
            );

            let data = env.buffer_filled(global, 0i32);
            arg_buf(&exchange, 0, &data);
            arg_buf(&exchange, 1, &out);
            env.run(&exchange, &[global], Some(&[local]), Some(&[17]));
            let want = per_group(global, local, &vec![0; global], |g| {
                let n = g.len();
                (0..n).map(|l| ((l + 1) % n * 3 + 1) as i32).collect()
            });
            assert_eq!(
                env.read(&out, global),
                want,
                "global_exchange {opt:?} {global}/{local}"
            );
        }
    }
}

#[test]
fn work_group_barrier_forms() {
    let env = Env::new();
    for opt in OPTS {
        let k = check(
            cl(Kernel::create(
                &env.program("barriers_cl3", opt),
                "work_group_barrier_forms",
            )),
            "work_group_barrier_forms",
        );
        for (global, local) in ranges(&env, &[]) {
            let data = env.buffer_filled(2 * global, 0i32);
            let out = env.buffer_filled(global, i32::MIN);
            arg_buf(&k, 0, &data);
            arg_buf(&k, 1, &out);
            arg_local(&k, 2, 4 * local);
            env.run(&k, &[global], Some(&[local]), Some(&[5]));
            let want = per_group(global, local, &vec![0; global], |g| {
                let n = g.len();
                let first = |j: usize| ((j + 1) % n * 3 + 1) as i32;
                (0..n)
                    .map(|l| 10 * first((l + 2) % n) + first((l + 3) % n) + 5)
                    .collect()
            });
            assert_eq!(env.read(&out, global), want, "{opt:?} {global}/{local}");
        }
    }
}

/// 14 uints per work-item written by `group_shape`.
const SHAPE_RECORD: usize = 14;

/// Runs `group_shape` over a range and checks every work-item's view of its group.
fn check_group_shape(
    env: &Env,
    k: &Kernel,
    global: &[usize],
    local: &[usize],
    offset: &[usize],
    ctx: &str,
) {
    let dims = global.len();
    let g3 = |d: usize| if d < dims { global[d] } else { 1 };
    let l3 = |d: usize| if d < dims { local[d] } else { 1 };
    let total: usize = global.iter().product();
    let out = env.buffer_filled(total * SHAPE_RECORD, u32::MAX);
    arg_buf(k, 0, &out);
    arg_local(k, 1, 4);
    env.run(k, global, Some(local), Some(offset));
    let got = env.read(&out, total * SHAPE_RECORD);
    for lin in 0..total {
        let r = &got[lin * SHAPE_RECORD..(lin + 1) * SHAPE_RECORD];
        let pos = [lin % g3(0), lin / g3(0) % g3(1), lin / (g3(0) * g3(1))];
        let mut want = [0u32; SHAPE_RECORD];
        let mut items = 1;
        for d in 0..3 {
            let group = pos[d] / l3(d);
            let size = l3(d).min(g3(d) - group * l3(d));
            items *= size;
            want[d] = l3(d) as u32;
            want[3 + d] = size as u32;
            want[6 + d] = g3(d).div_ceil(l3(d)) as u32;
            want[9 + d] = group as u32;
        }
        want[12] = items as u32;
        want[13] = 1;
        assert_eq!(r, want, "{ctx}: work-item {pos:?}");
    }
}

#[test]
fn non_uniform_ranges_in_one_two_and_three_dimensions() {
    let env = Env::new();
    if env.other_icd {
        return; // PoCL 3.1 builds these from CL3.0 source without non-uniform groups
    }
    for opt in OPTS {
        let k = check(
            cl(Kernel::create(
                &env.program("barriers_cl3", opt),
                "group_shape",
            )),
            "group_shape",
        );
        for (global, local, offset) in [
            (vec![1009], vec![64], vec![5]),
            (vec![1009], vec![127], vec![0]),
            (vec![37, 23], vec![8, 5], vec![3, 7]),
            (vec![5, 40], vec![8, 16], vec![1, 0]),
            (vec![13, 7, 5], vec![4, 3, 2], vec![1, 2, 3]),
            (vec![9, 10, 11], vec![2, 4, 8], vec![100, 0, 7]),
        ] {
            let ctx = format!("{opt:?} global {global:?} local {local:?} offset {offset:?}");
            check_group_shape(&env, &k, &global, &local, &offset, &ctx);
        }
    }
}

/// Assembles tests/data/barriers.spvasm (SPIR-V 1.0).
fn hand_written() -> Vec<u8> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data");
    let out = std::env::temp_dir().join(format!("ferrocl-barriers-{}.spv", std::process::id()));
    let st = std::process::Command::new("spirv-as")
        .args(["--target-env", "spv1.0"])
        .arg(dir.join("barriers.spvasm"))
        .arg("-o")
        .arg(&out)
        .status()
        .expect("spirv-as (spirv-tools) is installed");
    assert!(st.success(), "spirv-as barriers.spvasm");
    let words = std::fs::read(&out).expect("assembled module");
    let _ = std::fs::remove_file(out);
    words
}

#[test]
fn hand_written_spirv_reduction_and_scan_through_a_called_function() {
    let env = Env::new();
    if env.other_icd {
        return; // PoCL 3.1 takes no SPIR-V
    }
    let program = check(
        cl(Program::create_from_il(&env.context, &hand_written())),
        "clCreateProgramWithIL",
    );
    check(
        opencl3::program::build_program(
            program.get(),
            env.context.devices(),
            c"",
            None,
            std::ptr::null_mut(),
        ),
        "clBuildProgram",
    );
    let reduce = check(cl(Kernel::create(&program, "tree_reduce")), "tree_reduce");
    let scan = check(
        cl(Kernel::create(&program, "scan_via_helper")),
        "scan_via_helper",
    );
    for (global, local) in ranges(&env, &[64, 256]) {
        let ctx = format!("global {global} local {local}");
        let input: Vec<u32> = inputs(global, 5 + global as u64)
            .iter()
            .map(|&x| x as u32)
            .collect();
        let bin = env.buffer(&input);
        let groups_n = global.div_ceil(local);
        let bout = env.buffer_filled(groups_n, u32::MAX);
        arg_buf(&reduce, 0, &bin);
        arg_buf(&reduce, 1, &bout);
        arg_local(&reduce, 2, 4 * local);
        run_1d(&env, &reduce, global, local);
        let want: Vec<u32> = groups(global, local)
            .map(|(s, n)| input[s..s + n].iter().fold(0u32, |a, &x| a.wrapping_add(x)))
            .collect();
        assert_eq!(env.read(&bout, groups_n), want, "tree_reduce {ctx}");

        if local > 256 {
            continue; // scan_via_helper's Workgroup array has 256 elements
        }
        let bout = env.buffer_filled(global, u32::MAX);
        arg_buf(&scan, 0, &bin);
        arg_buf(&scan, 1, &bout);
        run_1d(&env, &scan, global, local);
        let want: Vec<u32> = groups(global, local)
            .flat_map(|(s, n)| {
                input[s..s + n].iter().scan(0u32, |acc, &x| {
                    *acc = acc.wrapping_add(x);
                    Some(*acc)
                })
            })
            .collect();
        assert_eq!(env.read(&bout, global), want, "scan_via_helper {ctx}");
    }
}
