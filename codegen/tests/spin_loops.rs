//! Spin loops (kernels/spin_loops.cl): work-items that wait on atomics for other sub-groups of
//! their work-group get yield points and finish (independent forward progress), with and
//! without barriers; loops that run atomics without waiting keep the barrier-free path. Every
//! launch runs on its own thread and fails after a minute instead of hanging.

use std::sync::mpsc::{channel, RecvTimeoutError};
use std::time::Duration;

use ferrocl_codegen::{BarrierSchedule, Program, Vectorization};

mod common;

use common::{build_spirv, launch, read_int, spirv_from_c, Arg, Recipe, Rng, RECIPES};

/// OpenCL C 3.0 with sub-groups and the atomic orders and scopes the kernels use.
const LANGUAGE: common::Language = common::Language {
    options: "-cl-std=CL3.0",
    extensions: &[
        "__opencl_c_subgroups",
        "cl_khr_subgroups",
        "__opencl_c_atomic_order_acq_rel",
        "__opencl_c_atomic_scope_device",
        "__opencl_c_int64",
    ],
    debug_info: false,
};

fn program(recipe: Recipe) -> &'static Program {
    // Leaked: the launch threads borrow it, and a hung one outlives its test.
    Box::leak(Box::new(build_spirv(&spirv_from_c(
        "spin_loops.cl",
        recipe,
        LANGUAGE,
    ))))
}

/// Runs `f` on a thread of its own; a run still going after 60 s fails the test (a scheduling
/// regression would otherwise hang it). The thread owns everything `f` touches.
fn within_a_minute<T: Send + 'static>(what: String, f: impl FnOnce() -> T + Send + 'static) -> T {
    let (tx, rx) = channel();
    std::thread::spawn(move || {
        let _ = tx.send(f());
    });
    match rx.recv_timeout(Duration::from_secs(60)) {
        Ok(v) => v,
        Err(RecvTimeoutError::Timeout) => panic!("{what}: still running after 60 s"),
        Err(RecvTimeoutError::Disconnected) => panic!("{what}: the launch panicked"),
    }
}

fn ints(b: &[u8]) -> Vec<i32> {
    (0..b.len() / 4)
        .map(|i| read_int(b, i, 32, true) as i32)
        .collect()
}

const CELLS: usize = 40;
const OP_END: i32 = 0;
const OP_STORE: i32 = 1;
const OP_WAIT: i32 = 2;
const OP_ADD: i32 = 3;

/// Programs for `sub_groups` sub-groups: every cell, in a random order, gets a pair of steps in
/// two different sub-groups — one stores a value or adds one to it that many times, the other
/// waits for the value. Each program is `CELLS + 1` steps, padded with END.
fn step_programs(rng: &mut Rng, sub_groups: usize) -> Vec<[i32; 2]> {
    let mut code = vec![[OP_END, 0]; sub_groups * (CELLS + 1)];
    let mut len = vec![0usize; sub_groups];
    let mut order: Vec<usize> = (0..CELLS).collect();
    for i in (1..CELLS).rev() {
        order.swap(i, rng.next() as usize % (i + 1));
    }
    for cell in order {
        let writer = rng.next() as usize % sub_groups;
        let waiter = (writer + 1 + rng.next() as usize % (sub_groups - 1)) % sub_groups;
        let value = 20 + (rng.next() % 300) as i32;
        let op = if rng.next().is_multiple_of(3) {
            OP_STORE
        } else {
            OP_ADD
        };
        code[writer * (CELLS + 1) + len[writer]] = [op | (cell as i32) << 8, value];
        code[waiter * (CELLS + 1) + len[waiter]] = [OP_WAIT | (cell as i32) << 8, value];
        len[writer] += 1;
        len[waiter] += 1;
    }
    code
}

/// What the programs leave in the cells: the sub-groups take turns, each running until it
/// waits for a value that is not there yet, until all of them ended.
fn run_steps(code: &[[i32; 2]], sub_groups: usize) -> Vec<i32> {
    let mut cells = vec![0i32; CELLS];
    let mut pc = vec![0usize; sub_groups];
    loop {
        let mut ended = 0;
        let mut moved = false;
        for (sg, pc) in pc.iter_mut().enumerate() {
            loop {
                let [word, value] = code[sg * (CELLS + 1) + *pc];
                let cell = (word >> 8) as usize;
                match word & 0xff {
                    OP_END => {
                        ended += 1;
                        break;
                    }
                    OP_STORE => cells[cell] = value,
                    OP_ADD => cells[cell] += value,
                    _ if cells[cell] == value => {}
                    _ => break,
                }
                *pc += 1;
                moved = true;
            }
        }
        if ended == sub_groups {
            return cells;
        }
        assert!(moved, "the generated programs deadlock");
    }
}

#[test]
fn sub_groups_waiting_on_each_other_all_finish() {
    let mut rng = Rng(0x1f9_5eed);
    for recipe in RECIPES {
        let p = program(recipe);
        let k = p.kernel("sub_group_steps").expect("kernel");
        assert_eq!(k.barrier_schedule, BarrierSchedule::Dynamic);
        // Groups of 198 work-items: 50 sub-groups (the last of 2), and a last group of 101
        // (26 sub-groups, the last of 1).
        let (local, global): (usize, usize) = (198, 2 * 198 + 101);
        let groups = global.div_ceil(local);
        let enqueued_sub_groups = local.div_ceil(4);
        let mut code = vec![[OP_END, 0]; groups * enqueued_sub_groups * (CELLS + 1)];
        let mut want = Vec::new();
        for g in 0..groups {
            let items = (global - g * local).min(local);
            let sub_groups = items.div_ceil(4);
            let programs = step_programs(&mut rng, sub_groups);
            want.extend(run_steps(&programs, sub_groups));
            let at = g * enqueued_sub_groups * (CELLS + 1);
            code[at..at + programs.len()].copy_from_slice(&programs);
        }
        let code: Vec<i32> = code.concat();
        let (cells, errors) = within_a_minute(format!("{recipe:?} sub_group_steps"), move || {
            let mut code = common::bytes_of(&code);
            let mut cells = vec![0u8; groups * CELLS * 4];
            let mut errors = vec![0u8; 4];
            launch(
                p,
                "sub_group_steps",
                &mut [
                    Arg::Buf(&mut code),
                    Arg::Buf(&mut cells),
                    Arg::Buf(&mut errors),
                ],
                global as u64,
                local as u64,
            );
            (ints(&cells), ints(&errors))
        });
        assert_eq!(cells, want, "{recipe:?}");
        assert_eq!(
            errors,
            [0],
            "{recipe:?}: sub-group reductions without the whole sub-group"
        );
    }
}

#[test]
fn a_work_item_waits_for_a_flag_without_barriers() {
    for recipe in RECIPES {
        let p = program(recipe);
        let k = p.kernel("wait_for_last").expect("kernel");
        // No barrier, but rounds: the spinning work-item yields to the others.
        assert_eq!(k.barrier_schedule, BarrierSchedule::Dynamic);
        assert!(k.info.has_spin_loops && k.info.uses_barrier);
        assert!(matches!(k.vectorization, Vectorization::Scalar(_)));
        for local in [2usize, 5, 64] {
            let groups = 3;
            let out = within_a_minute(format!("{recipe:?} wait_for_last {local}"), move || {
                let mut flags = vec![0u8; groups * 4];
                let mut out = vec![0u8; groups * local * 4];
                launch(
                    p,
                    "wait_for_last",
                    &mut [Arg::Buf(&mut flags), Arg::Buf(&mut out)],
                    (groups * local) as u64,
                    local as u64,
                );
                ints(&out)
            });
            for (i, &v) in out.iter().enumerate() {
                // Work-item 0 runs first and has to poll at least once.
                let want = if i % local == 0 {
                    1001
                } else {
                    (i % local) as i32
                };
                assert_eq!(v, want, "{recipe:?} local {local} item {i}");
            }
        }
    }
}

#[test]
fn sub_groups_relay_in_reverse_order_before_a_barrier() {
    for recipe in RECIPES {
        let p = program(recipe);
        assert_eq!(
            p.kernel("relay").expect("kernel").barrier_schedule,
            BarrierSchedule::Dynamic
        );
        for local in [4usize, 13, 64, 256] {
            let groups = 2;
            let out = within_a_minute(format!("{recipe:?} relay {local}"), move || {
                let mut out = vec![0u8; groups * local * 4];
                launch(
                    p,
                    "relay",
                    &mut [Arg::Buf(&mut out)],
                    (groups * local) as u64,
                    local as u64,
                );
                ints(&out)
            });
            let want = (0..local.div_ceil(4) as i32)
                .rev()
                .fold(0i32, |t, sg| t.wrapping_mul(3).wrapping_add(sg + 1));
            for (i, &v) in out.iter().enumerate() {
                assert_eq!(v, want, "{recipe:?} local {local} item {i}");
            }
        }
    }
}

#[test]
fn spin_locks_and_flags_set_in_branches() {
    for recipe in RECIPES {
        let p = program(recipe);
        for name in ["spin_lock", "wait_with_flag"] {
            assert_eq!(
                p.kernel(name).expect("kernel").barrier_schedule,
                BarrierSchedule::Dynamic,
                "{recipe:?} {name}"
            );
        }
        let (local, groups) = (24usize, 3usize);
        let (counter, flags, out) = within_a_minute(format!("{recipe:?} locks"), move || {
            let mut lock = vec![0u8; groups * 4];
            let mut counter = vec![0u8; groups * 4];
            launch(
                p,
                "spin_lock",
                &mut [Arg::Buf(&mut lock), Arg::Buf(&mut counter)],
                (groups * local) as u64,
                local as u64,
            );
            let mut flags = vec![0u8; groups * 4];
            let mut out = vec![0u8; groups * 4];
            launch(
                p,
                "wait_with_flag",
                &mut [Arg::Buf(&mut flags), Arg::Buf(&mut out)],
                (groups * local) as u64,
                local as u64,
            );
            (ints(&counter), ints(&flags), ints(&out))
        });
        assert_eq!(counter, vec![local as i32; groups], "{recipe:?}");
        assert_eq!(flags, vec![2; groups], "{recipe:?}");
        assert_eq!(out, vec![2; groups], "{recipe:?}");
    }
}

#[test]
fn loops_that_only_run_atomics_get_no_yield_points() {
    for recipe in RECIPES {
        let p = program(recipe);
        for name in ["histogram", "claim_slots"] {
            let k = p.kernel(name).expect("kernel");
            assert_eq!(
                k.barrier_schedule,
                BarrierSchedule::None,
                "{recipe:?} {name}"
            );
            assert!(!k.info.has_spin_loops && !k.info.uses_barrier);
        }
        let (n, items) = (7usize, 40usize);
        let data: Vec<u8> = (0..n * items).map(|i| (i * 7 % 23) as u8).collect();
        let mut want = vec![0i32; 16];
        for &d in &data {
            want[(d & 15) as usize] += 1;
        }
        let mut data = data;
        let mut hist = vec![0u8; 16 * 4];
        launch(
            p,
            "histogram",
            &mut [
                Arg::Buf(&mut data),
                Arg::Buf(&mut hist),
                Arg::Val((n as i32).to_ne_bytes().to_vec()),
            ],
            items as u64,
            8,
        );
        assert_eq!(ints(&hist), want, "{recipe:?}");
    }
}
