// Float math the work-item vectoriser emits as vector code (vectorize/math.rs): each function
// over an array, and inside a branch the work-items take differently.
#define ONE(f) \
    kernel void f##_all(global const float* x, global float* y) { \
        size_t i = get_global_id(0); \
        y[i] = f(x[i]); \
    } \
    kernel void f##_some(global const float* x, global float* y) { \
        size_t i = get_global_id(0); \
        float v = x[i]; \
        y[i] = (i & 2) ? f(v) : v * 3.0f; \
    }
ONE(exp)
ONE(exp2)
ONE(exp10)
ONE(log)
ONE(log2)
ONE(log10)
ONE(sin)
ONE(cos)
ONE(tan)
ONE(expm1)
ONE(log1p)
ONE(tanh)
ONE(atan)

#define TWO(f) \
    kernel void f##_all(global const float* x, global const float* y, global float* z) { \
        size_t i = get_global_id(0); \
        z[i] = f(x[i], y[i]); \
    } \
    kernel void f##_uniform(global const float* x, float y, global float* z) { \
        size_t i = get_global_id(0); \
        z[i] = f(x[i], y); \
    }
TWO(pow)
TWO(powr)

kernel void sincos_all(global const float* x, global float* s, global float* c) {
    size_t i = get_global_id(0);
    float cosine;
    s[i] = sincos(x[i], &cosine);
    c[i] = cosine;
}

kernel void sincos4(global const float4* x, global float4* s, global float4* c) {
    size_t i = get_global_id(0);
    s[i] = sincos(x[i], c + i);
}

TWO(atan2)

kernel void pown_all(global const float* x, global const int* n, global float* z) {
    size_t i = get_global_id(0);
    z[i] = pown(x[i], n[i]);
}
kernel void pown_uniform(global const float* x, int n, global float* z) {
    size_t i = get_global_id(0);
    z[i] = pown(x[i], n);
}

#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#define ONE_DOUBLE(f) \
    kernel void f##_double(global const double* x, global double* y) { \
        size_t i = get_global_id(0); \
        y[i] = f(x[i]); \
    } \
    kernel void f##_double_some(global const double* x, global double* y) { \
        size_t i = get_global_id(0); \
        double v = x[i]; \
        y[i] = (i & 2) ? f(v) : v * 3.0; \
    }
ONE_DOUBLE(exp)
ONE_DOUBLE(log)
ONE_DOUBLE(exp2)
ONE_DOUBLE(log2)
ONE_DOUBLE(sin)
ONE_DOUBLE(cos)

// Explicit vectors with arithmetic around the math: the packer would take the arithmetic
// (vector_pack.rs) and leave the calls one per component; the work-item vectoriser must win.
kernel void packed_float4(global const float4* x, global float4* y) {
    size_t i = get_global_id(0);
    float4 v = x[i];
    float4 a = v * 1.5f + 0.25f;
    y[i] = exp(a) * a + sin(v) * (v - 2.0f);
}

kernel void pow_double(global const double* x, global const double* y, global double* z) {
    size_t i = get_global_id(0);
    z[i] = pow(x[i], y[i]);
}
kernel void powr_double(global const double* x, global const double* y, global double* z) {
    size_t i = get_global_id(0);
    z[i] = powr(x[i], y[i]);
}
