//! Global atomics through the loader under real concurrency: thousands of work-groups on every
//! worker thread update the same counters; the results must be exact.

mod common;

use common::{arg_buf, Env, OPTS};

#[test]
fn concurrent_global_atomics_are_exact() {
    let env = Env::new();
    let n = 1 << 20;
    let data: Vec<u32> = (0..n as u32)
        .map(|i| i.wrapping_mul(2_654_435_761) >> 7)
        .collect();
    let mut want_hist = vec![0u32; 64];
    for d in &data {
        want_hist[(d & 63) as usize] += 1;
    }
    for opt in OPTS {
        let k = env.kernel("atomic_counter", opt, "count");
        let counter = env.buffer(&[0u32]);
        let sum = env.buffer(&[0u32]);
        let hist = env.buffer(&[0u32; 64]);
        let input = env.buffer(&data);
        arg_buf(&k, 0, &counter);
        arg_buf(&k, 1, &sum);
        arg_buf(&k, 2, &hist);
        arg_buf(&k, 3, &input);
        env.run(&k, &[n], Some(&[64]), None);
        assert_eq!(env.read(&counter, 1)[0], n as u32, "{opt:?} counter");
        assert_eq!(
            env.read(&sum, 1)[0],
            ((n as u64 - 1) * n as u64 / 2) as u32,
            "{opt:?} sum (mod 2^32)"
        );
        assert_eq!(env.read(&hist, 64), want_hist, "{opt:?} histogram");
    }
}
