//! The OpenCL C 3.0 generic address space through the loader (`__opencl_c_generic_address_space`,
//! built by the device's own compiler): `to_global`, `to_local`, `to_private` answer the pointer
//! or NULL for global, local (variables and arguments) and private (scalars and arrays) objects,
//! `get_fence` names the right fence, and loads/stores through generic pointers reach the
//! object — in a kernel without barriers (private memory on the stack) and with barriers
//! (private memory in work-item frames).

mod common;

use common::{arg_buf, arg_local, Env};

const SOURCE: &str = r#"
int where(generic int* p) {
    return to_global(p) ? 1 : to_local(p) ? 2 : to_private(p) ? 3 : 0;
}

int fence(generic int* p) { return (int)get_fence(p); }

kernel void spaces(global int* out, local int* larg) {
    local int lvar[4];
    size_t g = get_global_id(0);
    int x = (int)g;
    int arr[3] = {1, 2, 3};
    global int* o = out + g * 8;
    o[0] = where(o);
    o[1] = where(larg);
    o[2] = where(&lvar[1]);
    o[3] = where(&x);
    o[4] = where(arr + 2);
    o[5] = fence(o) * 10 + fence(larg);
    generic int* q = (g & 1) ? (generic int*)&x : (generic int*)&arr[1];
    *q += 40;
    o[6] = x + arr[1];
    o[7] = where(0);
}

kernel void spaces_with_barrier(global int* out, local int* larg) {
    local int lvar[4];
    size_t g = get_global_id(0);
    int x = (int)g;
    int arr[3] = {1, 2, 3};
    generic int* px = &x;
    generic int* pl = &lvar[get_local_id(0) & 3];
    barrier(CLK_LOCAL_MEM_FENCE);
    global int* o = out + g * 8;
    o[0] = where(o);
    o[1] = where(larg);
    o[2] = where(pl);
    o[3] = where(px);
    o[4] = where(arr + 2);
    o[5] = fence(o) * 10 + fence(pl);
    barrier(CLK_LOCAL_MEM_FENCE);
    *px += 40;
    o[6] = x + arr[1];
    o[7] = where(0);
}
"#;

#[test]
fn pointers_know_their_address_space() {
    let env = Env::new();
    let generic = env.device.generic_address_space_support().unwrap_or(false);
    if !env.feature_or_skip("the generic address space", generic) {
        return;
    }
    let program = env.program_from_source(SOURCE, "-cl-std=CL3.0");
    let n = 64usize;
    for kernel in ["spaces", "spaces_with_barrier"] {
        let k = opencl3::kernel::Kernel::create(&program, kernel).expect("clCreateKernel");
        let out = env.buffer_filled(n * 8, -1i32);
        arg_buf(&k, 0, &out);
        arg_local(&k, 1, 64);
        env.run(&k, &[n], Some(&[16]), None);
        let got = env.read(&out, n * 8);
        for g in 0..n {
            let x = g as i32;
            let moved = if kernel == "spaces" {
                // odd work-items add 40 to x, even ones to arr[1]
                x + 2 + 40
            } else {
                x + 40 + 2
            };
            assert_eq!(
                &got[g * 8..g * 8 + 8],
                &[1, 2, 2, 3, 3, 21, moved, 0],
                "{kernel}, work-item {g}: where(global, local arg, local var, private scalar, private array), fences, generic store, NULL"
            );
        }
    }
}

/// Null pointers of different address spaces compare equal through a generic pointer. LLVM
/// folds the comparison into a null cast between two named address spaces, which
/// llvm-spirv-15 refuses; the driver then translates the unoptimised module (CTS
/// generic_address_space compare_pointers). Also with -cl-opt-disable and a vec_type_hint,
/// whose source is read as textual IR.
#[test]
fn null_pointers_of_different_spaces_compare_equal() {
    const NULLS: &str = r#"
kernel __attribute__((vec_type_hint(uint2))) void nulls(global uint* results) {
    uint tid = get_global_id(0);
    int *ptr = NULL;
    local int *lptr = NULL;
    global int *gptr = NULL;
    ptr = lptr;
    results[tid] = (gptr == ptr) && (lptr == ptr);
}
"#;
    let env = Env::new();
    let generic = env.device.generic_address_space_support().unwrap_or(false);
    if !env.feature_or_skip("the generic address space", generic) {
        return;
    }
    for options in ["-cl-std=CL3.0", "-cl-std=CL3.0 -cl-opt-disable"] {
        let program = env.program_from_source(NULLS, options);
        let k = opencl3::kernel::Kernel::create(&program, "nulls").expect("clCreateKernel");
        let out = env.buffer_filled(8, 7u32);
        arg_buf(&k, 0, &out);
        env.run(&k, &[8], None, None);
        assert_eq!(env.read(&out, 8), [1; 8], "{options}");
        assert_eq!(k.attributes().unwrap(), "vec_type_hint(uint2)", "{options}");
    }
}
