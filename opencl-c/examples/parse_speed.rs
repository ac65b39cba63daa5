//! Parse+validate throughput of the frontend on a large real module:
//! `cargo run --release -p ferrocl-opencl-c --example parse_speed [module.spv]`.
//! Without an argument it builds ~1 MB of SPIR-V from generated OpenCL C with the driver's
//! recipe (`-cl-opt-disable`: every variable in memory, the largest modules) and also times a
//! quarter and a half of it, to show the cost is linear. (It lives here rather than in the
//! frontend because it needs the OpenCL C driver; the frontend does not depend on it.)

use std::time::{Duration, Instant};

/// One kernel per copy, touching the instruction classes the validator checks.
const TEMPLATE: &str = r#"
typedef struct { int a; float b; long c; } pod_N;
float helper_N(float x, int n) {
    float acc = 0.0f;
    for (int i = 0; i < n; i++) { acc += x * (float)i; if (acc > 100.0f) break; }
    return acc;
}
kernel void k_N(global float4 *out, global const int4 *in, global pod_N *ps, float s, int k) {
    size_t i = get_global_id(0);
    int4 v = in[i];
    float4 f = convert_float4(v) * s;
    f.xy = f.yx;
    float4 g = (float4)(f.s0, f.s1, 2.0f, 3.0f);
    pod_N q = ps[i];
    q.a += k; q.c = (long)q.a * q.c + (q.a >> 2);
    ps[i] = q;
    switch (k) { case 0: g += 1.0f; break; case 1: g *= 2.0f; break; default: g = -g; }
    out[i] = select(f, g, v > 2) + fmax(f, g) + mad(f, g, f) + sqrt(fabs(g)) + helper_N(s, k);
    out[i].w = dot(f, g) + (float)clz(k) + (float)q.c;
}
"#;

fn build(copies: usize) -> Vec<u8> {
    let body: String = (0..copies)
        .map(|i| TEMPLATE.replace("_N", &format!("_{i}")))
        .collect();
    ferrocl_opencl_c::compile_opencl_c(&body, "-cl-opt-disable", &[], &[])
        .unwrap_or_else(|log| panic!("the OpenCL C recipe failed:\n{log}"))
}

/// Best of several runs (the machine is shared; the minimum is the least disturbed).
fn measure(name: &str, bytes: &[u8]) {
    let mut best = Duration::MAX;
    for _ in 0..7 {
        let t = Instant::now();
        let m = ferrocl_frontend::parse(bytes).unwrap_or_else(|e| panic!("{name}: {e}"));
        best = best.min(t.elapsed());
        std::hint::black_box(m);
    }
    let mb = bytes.len() as f64 / 1e6;
    println!(
        "{name}: {:.2} MB, {} words: parse+validate {:.1} ms, {:.1} MB/s",
        mb,
        bytes.len() / 4,
        best.as_secs_f64() * 1e3,
        mb / best.as_secs_f64()
    );
}

fn main() {
    if let Some(path) = std::env::args().nth(1) {
        let bytes = std::fs::read(&path).expect("read module");
        measure(&path, &bytes);
        return;
    }
    // Several KB of SPIR-V per copy without optimisation.
    for copies in [55, 110, 220] {
        measure(&format!("{copies} kernels"), &build(copies));
    }
}
