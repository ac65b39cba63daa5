// Kernels exercising what the frontend validates: vectors, structs by value, builtins,
// conversions, control flow, local memory and barriers, math and integer builtins.
typedef struct { int a; float b; char c; long d; } pod;

float helper(float x, int n) {
    float acc = 0.0f;
    for (int i = 0; i < n; i++) {
        acc += x * (float)i;
        if (acc > 100.0f) break;
    }
    return acc;
}

kernel void vectors(global float4 *out, global const int4 *in, float s) {
    size_t i = get_global_id(0);
    int4 v = in[i];
    float4 f = convert_float4(v) * s;
    f.xy = f.yx;
    float4 g = (float4)(f.s0, f.s1, 2.0f, 3.0f);
    out[i] = select(f, g, v > 2) + fmax(f, g) + mad(f, g, f) + sqrt(fabs(g));
    out[i].w = dot(f, g);
}

kernel void structs(global long *out, pod p, global pod *ps) {
    size_t i = get_global_id(0);
    pod q = ps[i];
    q.a += p.a;
    q.d = (long)q.a * p.d + (q.c >> 2);
    ps[i] = q;
    out[i] = q.d + (long)helper(p.b, q.a & 7);
}

kernel void ints(global uint *out, global const uchar *b, global const short *sh, int k) {
    size_t i = get_global_id(0);
    uint x = b[i] | ((uint)sh[i] << 8);
    switch (k) {
    case 0: x = clz(x) + popcount(x); break;
    case 1: x = rotate(x, 3u) ^ mul_hi(x, 77u); break;
    case 2: x = add_sat(x, 0xfffffff0u) - abs_diff(x, 5u); break;
    default: x = clamp(x, 2u, 100u); break;
    }
    out[i] = x / (k | 1) + x % 3;
}

kernel void local_sum(global float *out, global const float *in, local float *tmp) {
    size_t l = get_local_id(0);
    tmp[l] = in[get_global_id(0)];
    barrier(CLK_LOCAL_MEM_FENCE);
    for (size_t s = get_local_size(0) / 2; s > 0; s >>= 1) {
        if (l < s) tmp[l] += tmp[l + s];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (l == 0) out[get_group_id(0)] = tmp[0];
}

kernel void doubles(global double *out, global const float *in) {
    size_t i = get_global_id(0);
    double d = (double)in[i];
    out[i] = exp(d) + pow(d, 2.0) + (d < 0.0 ? floor(d) : ceil(d)) + get_work_dim();
}

kernel void vload_store(global float *out, global const float *in, constant float *c) {
    size_t i = get_global_id(0);
    float8 v = vload8(i, in);
    v = v * c[0] + (float8)(c[1]);
    vstore8(v, i, out);
}

kernel void atomics(global int *p, local int *l, global uint *u) {
    atomic_inc(l);
    barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
    mem_fence(CLK_GLOBAL_MEM_FENCE);
    atomic_add(p, *l);
    atomic_cmpxchg(u, 1u, 2u);
    atom_xchg(p, 3);
    atomic_max(p, 7);
}

kernel void print(global const float4 *v, int n) {
    printf("%d %s %v4hlf %#lx %c%%\n", n, "literal", v[0], (ulong)n, 'c');
}
