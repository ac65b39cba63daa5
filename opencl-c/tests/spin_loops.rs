//! The frontend's spin-loop finder (frontend/src/spin_loops.rs) on what the OpenCL C driver
//! produces: loops whose exit waits on an atomic are spin loops, loops that only count are not,
//! with the optimising recipe and with `-cl-opt-disable`.

use ferrocl_frontend::parse;
use ferrocl_frontend::rspirv::dr::Operand;
use ferrocl_frontend::spirv::Op;
use ferrocl_opencl_c::{compile_opencl_c, opencl_c_compiler_available};

const SOURCE: &str = r#"
    kernel void spin(global volatile int *f) { while (atomic_add(f, 0) == 0) ; }
    kernel void lock(global volatile int *l, global int *c) {
        while (atomic_cmpxchg(l, 0, 1) != 0) ;
        *c += 1;
        atomic_xchg(l, 0);
    }
    int read_flag(global volatile int *f) { return atomic_or(f, 0); }
    kernel void through_call(global volatile int *f) { while (read_flag(f) != 3) ; }
    kernel void through_branch(global volatile int *f, global int *out) {
        bool done = false;
        int polls = 0;
        while (!done) {
            if (atomic_add(f, 0) == 2) done = true;
            polls++;
        }
        *out = polls;
    }
    kernel void nested(global volatile int *f, global const int *steps, int n) {
        for (int i = 0; i < n; i++) {
            if (steps[i] > 0)
                while (atomic_add(&f[i], 0) != steps[i]) ;
        }
    }
    kernel void histogram(global const uchar *d, global int *h, int n) {
        for (int i = 0; i < n; i++) atomic_inc(&h[d[i] & 15]);
    }
    kernel void claim(global int *next, global int *slots, int n) {
        for (int i = 0; i < n; i++) slots[atomic_inc(next)] = i;
    }
    kernel void counted_by_an_atomic(global int *c, global int *out) {
        int n = atomic_inc(c);
        for (int i = 0; i < n; i++) out[i] = i;
    }
    kernel void conditional_work(global int *c, global int *out, int n) {
        int hits = 0;
        for (int i = 0; i < n; i++)
            if (atomic_inc(c) < 100) hits++;
        *out = hits;
    }
"#;

#[test]
fn loops_whose_exit_waits_on_an_atomic_are_spin_loops() {
    if !opencl_c_compiler_available() {
        return;
    }
    for options in ["", "-cl-opt-disable"] {
        let spv = compile_opencl_c(SOURCE, options, &[], &[]).unwrap_or_else(|e| panic!("{e}"));
        let m = parse(&spv).unwrap_or_else(|e| panic!("{e}"));
        let spins = |name: &str| {
            let k = m.kernels.iter().find(|k| k.name == name).expect(name);
            assert_eq!(k.uses_barrier, k.has_spin_loops, "{options:?} {name}");
            k.has_spin_loops
        };
        for name in ["spin", "lock", "through_call", "through_branch", "nested"] {
            assert!(spins(name), "{options:?} {name} waits on an atomic");
        }
        for name in [
            "histogram",
            "claim",
            "counted_by_an_atomic",
            "conditional_work",
        ] {
            assert!(!spins(name), "{options:?} {name} waits for nobody");
        }
        // Only the inner loop of `nested` waits: its outer loop counts. (The entry point
        // may be a wrapper that calls the kernel's body.)
        let nested = m
            .kernels
            .iter()
            .find(|k| k.name == "nested")
            .expect("nested");
        let wrapper = m
            .raw
            .functions
            .iter()
            .find(|f| f.def_id() == Some(nested.function))
            .expect("function");
        let callees = wrapper
            .blocks
            .iter()
            .flat_map(|b| &b.instructions)
            .filter_map(|inst| match (inst.class.opcode, inst.operands.first()) {
                (Op::FunctionCall, Some(Operand::IdRef(callee))) => Some(*callee),
                _ => None,
            });
        let spinning: usize = callees
            .chain([nested.function])
            .map(|f| m.spin_loop_back_edges(f).len())
            .sum();
        assert_eq!(spinning, 1, "{options:?}");
    }
}
