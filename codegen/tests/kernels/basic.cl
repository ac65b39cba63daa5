typedef struct { float scale; int bias; } params_t;

__kernel void vadd(__global const float *a, __global const float *b, __global float *c) {
    size_t i = get_global_id(0);
    c[i] = a[i] + b[i];
}

__kernel void saxpy(float alpha, __global const float *x, __global float *y) {
    size_t i = get_global_id(0);
    y[i] = alpha * x[i] + y[i];
}

__kernel void matmul(__global const float *a, __global const float *b, __global float *c, int n, int k) {
    int row = get_global_id(1), col = get_global_id(0);
    float acc = 0.0f;
    for (int i = 0; i < k; ++i)
        acc += a[row * k + i] * b[i * n + col];
    c[row * n + col] = acc;
}

__kernel void mandel(__global int *out, int width, float x0, float y0, float step, int max_iter) {
    int px = get_global_id(0), py = get_global_id(1);
    float cr = x0 + px * step, ci = y0 + py * step;
    float zr = 0.0f, zi = 0.0f;
    int it = 0;
    while (it < max_iter) {
        float zr2 = zr * zr, zi2 = zi * zi;
        if (zr2 + zi2 > 4.0f) break;
        float t = zr2 - zi2 + cr;
        zi = 2.0f * zr * zi + ci;
        zr = t;
        ++it;
    }
    out[py * width + px] = it;
}

__kernel void hash(__global const uint *in, __global uint *out, __global ulong *out64) {
    size_t i = get_global_id(0);
    uint x = in[i];
    x = rotate(x, 7u) ^ (x * 0x9E3779B9u);
    x += clz(x) + popcount(x) * 3u;
    out[i] = x;
    ulong y = ((ulong)in[i] << 32) | in[i];
    out64[i] = rotate(y, (ulong)13) + clz(y) + popcount(y);
}

__kernel void vec4(__global const float4 *a, __constant float4 *w, params_t p, __global float *out) {
    size_t i = get_global_id(0);
    float4 v = a[i] * w[0] + (float4)(p.bias);
    out[i] = dot(v, w[1]) * p.scale + fmax(fabs(v.x), v.y) + floor(v.z) + clamp(v.w, -1.0f, 1.0f);
}

// A by-value struct each work-item changes: its own copy, kept across a barrier; `q` only
// read (the argument block's bytes, shared).
__kernel void struct_copies(params_t p, params_t q, __global float *out, __local float *tmp) {
    size_t i = get_global_id(0);
    uint l = get_local_id(0);
    p.scale += (float)i;
    p.bias -= (int)l;
    tmp[l] = p.scale;
    barrier(CLK_LOCAL_MEM_FENCE);
    out[i] = p.scale * q.scale + (float)(p.bias + q.bias) + tmp[get_local_size(0) - 1 - l];
}

__kernel void ids(__global ulong *out) {
    size_t lin = (get_global_id(2) - get_global_offset(2)) * get_global_size(1) * get_global_size(0)
               + (get_global_id(1) - get_global_offset(1)) * get_global_size(0)
               + (get_global_id(0) - get_global_offset(0));
    out[lin * 4 + 0] = get_global_id(0) + 1000 * get_global_id(1) + 1000000 * get_global_id(2);
    out[lin * 4 + 1] = get_local_id(0) + 1000 * get_local_id(1) + 1000000 * get_local_id(2);
    out[lin * 4 + 2] = get_group_id(0) + 1000 * get_group_id(1) + 1000000 * get_group_id(2);
    out[lin * 4 + 3] = get_work_dim() + 10 * get_local_size(0) + 1000 * get_num_groups(0);
}

__kernel void div_edge(__global const int *a, __global const int *b, __global int *q, __global const float *f, __global int *conv) {
    size_t i = get_global_id(0);
    q[i] = a[i] / b[i] + a[i] % b[i];
    conv[i] = (int)f[i];
}

__kernel void local_scratch(__global const int *in, __global int *out, __local int *scratch) {
    size_t l = get_local_id(0);
    scratch[l] = in[get_global_id(0)] * 2;
    out[get_global_id(0)] = scratch[l] + 1;
}

__kernel void vload_store(__global const float *in, __global float *out) {
    size_t i = get_global_id(0);
    float4 v = vload4(i, in + 1); // unaligned: 4-byte offset
    vstore4(v * 2.0f, i, out);
}
