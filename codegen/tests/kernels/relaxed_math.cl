// native_* and half_* float math, which the work-item vectoriser emits in reduced-accuracy
// vector forms (vectorize/math_relaxed.rs): each function over an array.
#define ONE(f) \
    kernel void f##_all(global const float* x, global float* y) { \
        size_t i = get_global_id(0); \
        y[i] = f(x[i]); \
    }
ONE(native_exp)
ONE(native_exp2)
ONE(native_exp10)
ONE(native_log)
ONE(native_log2)
ONE(native_log10)
ONE(native_sin)
ONE(native_cos)
ONE(half_exp)
ONE(half_exp2)
ONE(half_exp10)
ONE(half_log)
ONE(half_log2)
ONE(half_log10)
ONE(half_sin)
ONE(half_cos)
