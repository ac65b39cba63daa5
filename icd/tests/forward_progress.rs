//! Independent forward progress through the loader (kernels/forward_progress.cl): work-items
//! spinning on atomics for other sub-groups of their work-group, or for another work-item of a
//! barrier-free kernel, finish with the right results on every worker thread, at both
//! recipes. `CL_DEVICE_SUB_GROUP_INDEPENDENT_FORWARD_PROGRESS` (true) is checked in
//! subgroups.rs, false with FERROCL_SUBGROUPS=off in config.rs. Each test runs its launches on
//! a thread of its own and fails after a minute instead of hanging.

mod common;

use std::sync::mpsc::{channel, RecvTimeoutError};
use std::time::Duration;

use common::{arg_buf, target, Env, Rng, OPTS};

/// Runs `body` on its own thread; fails the test if it is still running after 60 s.
fn within_a_minute(what: &str, body: impl FnOnce() + Send + 'static) {
    let (tx, rx) = channel();
    std::thread::spawn(move || {
        body();
        let _ = tx.send(());
    });
    match rx.recv_timeout(Duration::from_secs(60)) {
        Ok(()) => {}
        Err(RecvTimeoutError::Timeout) => panic!("{what}: still running after 60 s"),
        Err(RecvTimeoutError::Disconnected) => panic!("{what}: failed (see above)"),
    }
}

const CELLS: usize = 48;
const END: i32 = 0;
const STORE: i32 = 1;
const WAIT: i32 = 2;
const ADD: i32 = 3;

fn step(op: i32, cell: usize, value: i32) -> i32 {
    op | (cell as i32) << 4 | value << 12
}

/// Step lists for `sub_groups` sub-groups (`CELLS + 1` each, padded with END): each cell, in a
/// random order, gets a writer (store or add) in one sub-group and a waiter for the value it
/// writes in another.
fn step_lists(rng: &mut Rng, sub_groups: usize) -> Vec<i32> {
    let mut steps = vec![step(END, 0, 0); sub_groups * (CELLS + 1)];
    let mut next = vec![0usize; sub_groups];
    let mut cells: Vec<usize> = (0..CELLS).collect();
    for i in (1..CELLS).rev() {
        cells.swap(i, rng.next_u32() as usize % (i + 1));
    }
    for cell in cells {
        let writer = rng.next_u32() as usize % sub_groups;
        let waiter = (writer + 1 + rng.next_u32() as usize % (sub_groups - 1)) % sub_groups;
        let value = 50 + (rng.next_u32() % 600) as i32;
        let op = if rng.next_u32().is_multiple_of(4) {
            STORE
        } else {
            ADD
        };
        for (sg, op) in [(writer, op), (waiter, WAIT)] {
            steps[sg * (CELLS + 1) + next[sg]] = step(op, cell, value);
            next[sg] += 1;
        }
    }
    steps
}

/// The cells the step lists leave: sub-groups take turns, each running its steps until one
/// waits for a value not written yet, until every list has ended (as the Khronos CTS's
/// `run_insts` does).
fn interpret_on_host(steps: &[i32], sub_groups: usize) -> Vec<i32> {
    let mut cells = vec![0i32; CELLS];
    let mut at = vec![0usize; sub_groups];
    loop {
        let mut ended = 0;
        for (sg, at) in at.iter_mut().enumerate() {
            loop {
                let s = steps[sg * (CELLS + 1) + *at];
                let (op, cell, value) = (s & 0xf, ((s >> 4) & 0x3f) as usize, s >> 12);
                match op {
                    STORE => cells[cell] = value,
                    ADD => cells[cell] += value,
                    WAIT if cells[cell] == value => {}
                    WAIT => break,
                    _ => {
                        ended += 1;
                        break;
                    }
                }
                *at += 1;
            }
        }
        if ended == sub_groups {
            return cells;
        }
    }
}

#[test]
fn sub_groups_that_wait_for_each_other_finish() {
    if target().other_icd {
        return; // another ICD need not give sub-groups independent forward progress
    }
    within_a_minute("interpret", || {
        let env = Env::new();
        let mut rng = Rng::new(0x1f9);
        // 200 work-items: 50 sub-groups; the last group has 130 (33, the last of 2).
        let (local, global): (usize, usize) = (200, 5 * 200 + 130);
        let groups = global.div_ceil(local);
        let per_group = local.div_ceil(4);
        for opt in OPTS {
            let mut steps = vec![step(END, 0, 0); groups * per_group * (CELLS + 1)];
            let mut want = Vec::new();
            for g in 0..groups {
                let sub_groups = (global - g * local).min(local).div_ceil(4);
                let lists = step_lists(&mut rng, sub_groups);
                want.extend(interpret_on_host(&lists, sub_groups));
                let at = g * per_group * (CELLS + 1);
                steps[at..at + lists.len()].copy_from_slice(&lists);
            }
            let k = env.kernel("forward_progress", opt, "interpret");
            let steps = env.buffer(&steps);
            let cells = env.buffer_filled(groups * CELLS, -1i32);
            arg_buf(&k, 0, &steps);
            arg_buf(&k, 1, &cells);
            env.run(&k, &[global], Some(&[local]), None);
            assert_eq!(env.read(&cells, groups * CELLS), want, "{opt:?}");
        }
    });
}

#[test]
fn a_work_item_waits_for_a_later_one_without_barriers() {
    if target().other_icd {
        return;
    }
    within_a_minute("first_waits_for_last", || {
        let env = Env::new();
        for opt in OPTS {
            let k = env.kernel("forward_progress", opt, "first_waits_for_last");
            for local in [8usize, 64, 256] {
                let groups = 16;
                let flags = env.buffer_filled(groups, 0i32);
                let out = env.buffer_filled(groups * local, -1i32);
                arg_buf(&k, 0, &flags);
                arg_buf(&k, 1, &out);
                env.run(&k, &[groups * local], Some(&[local]), None);
                let out = env.read(&out, groups * local);
                for (i, &v) in out.iter().enumerate() {
                    if i % local == 0 {
                        // Work-item 0 runs first: it found the flag down at least once.
                        assert!(v >= 2, "{opt:?} local {local} item {i}: looked {v} times");
                    } else {
                        assert_eq!(v, 0, "{opt:?} local {local} item {i}");
                    }
                }
                assert_eq!(env.read(&flags, groups), vec![1; groups], "{opt:?}");
            }
        }
    });
}

#[test]
fn producers_and_a_consumer_meet_before_a_barrier() {
    if target().other_icd {
        return;
    }
    within_a_minute("produce_consume", || {
        let env = Env::new();
        let mut rng = Rng::new(77);
        let (local, groups) = (200usize, 6usize);
        let producers = local.div_ceil(4) - 1;
        let values: Vec<i32> = (0..groups * 256)
            .map(|_| (rng.next_u32() % 10_000) as i32)
            .collect();
        for opt in OPTS {
            let k = env.kernel("forward_progress", opt, "produce_consume");
            let input = env.buffer(&values);
            let consumed = env.buffer_filled(groups * 256, -1i32);
            let sums = env.buffer_filled(groups * local, -1i32);
            arg_buf(&k, 0, &input);
            arg_buf(&k, 1, &consumed);
            arg_buf(&k, 2, &sums);
            env.run(&k, &[groups * local], Some(&[local]), None);
            let consumed = env.read(&consumed, groups * 256);
            let sums = env.read(&sums, groups * local);
            for g in 0..groups {
                let mut produced: Vec<i32> = values[g * 256 + 1..g * 256 + 1 + producers].to_vec();
                let mut seen: Vec<i32> = consumed[g * 256..g * 256 + producers].to_vec();
                produced.sort_unstable();
                seen.sort_unstable();
                assert_eq!(seen, produced, "{opt:?} group {g}: the values consumed");
                let total: i32 = produced.iter().sum();
                for (l, &s) in sums[g * local..(g + 1) * local].iter().enumerate() {
                    assert_eq!(
                        s, total,
                        "{opt:?} group {g} item {l}: sum after the barrier"
                    );
                }
            }
        }
    });
}
