// Half values and arithmetic (cl_khr_fp16): loads, stores, arithmetic rounded to half,
// conversions in every rounding mode, comparisons, vectors, math, a half kernel argument.
#pragma OPENCL EXTENSION cl_khr_fp16 : enable

kernel void half_binary(global const half *a, global const half *b, global half *add,
                        global half *sub, global half *mul, global half *div,
                        global int *cmp) {
    size_t i = get_global_id(0);
    half x = a[i], y = b[i];
    add[i] = x + y;
    sub[i] = x - y;
    mul[i] = x * y;
    div[i] = x / y;
    cmp[i] = (x < y) | (x == y) << 1 | (x > y) << 2 | isunordered(x, y) << 3;
}

kernel void half_fma(global const half *a, global const half *b, global const half *c,
                     global half *out) {
    size_t i = get_global_id(0);
    out[i] = fma(a[i], b[i], c[i]);
}

kernel void half_unary(global const half *a, global half *root, global half *neg,
                       global float *wide, global double *wider) {
    size_t i = get_global_id(0);
    half x = a[i];
    root[i] = sqrt(x);
    neg[i] = -x;
    wide[i] = x;
    wider[i] = x;
}

kernel void half_to_int(global const half *a, global int *rte, global int *rtz,
                        global int *rtp, global int *rtn, global short *sat,
                        global uchar *usat) {
    size_t i = get_global_id(0);
    half x = a[i];
    rte[i] = convert_int_rte(x);
    rtz[i] = convert_int_rtz(x);
    rtp[i] = convert_int_rtp(x);
    rtn[i] = convert_int_rtn(x);
    sat[i] = convert_short_sat(x);
    usat[i] = convert_uchar_sat(x);
}

#define FROM(T)                                                                \
    kernel void half_from_##T(global const T *x, global half *def,            \
                              global half *rte, global half *rtz,             \
                              global half *rtp, global half *rtn) {           \
        size_t i = get_global_id(0);                                           \
        def[i] = (half)x[i];                                                   \
        rte[i] = convert_half_rte(x[i]);                                       \
        rtz[i] = convert_half_rtz(x[i]);                                       \
        rtp[i] = convert_half_rtp(x[i]);                                       \
        rtn[i] = convert_half_rtn(x[i]);                                       \
    }
FROM(float)
FROM(double)
FROM(int)
FROM(ulong)
FROM(long)

kernel void half_vectors(global const half4 *a, global const half4 *b, half s,
                         global half4 *out, global half8 *wide) {
    size_t i = get_global_id(0);
    out[i] = a[i] * s + b[i];
    wide[i] = (half8)(a[i], b[i].wzyx) / s;
}

kernel void half_math(global const half *a, global half *e, global half *l,
                      global half *s, global half *p) {
    size_t i = get_global_id(0);
    half x = a[i];
    e[i] = exp(x);
    l[i] = log(x);
    s[i] = sin(x);
    p[i] = pow(x, (half)1.5h);
}

kernel void half_shaped(global const half *a, global half *fr, global half *fl,
                        global half *s, global half *c, global half *up,
                        global half *down, global half *ip, global half *frac2) {
    size_t i = get_global_id(0);
    half x = a[i];
    half whole;
    fr[i] = fract(x, &whole);
    fl[i] = whole;
    half co;
    s[i] = sincos(x, &co);
    c[i] = co;
    up[i] = nextafter(x, (half)INFINITY);
    down[i] = nextafter(x, (half)-INFINITY);
    half2 w;
    half2 m = modf((half2)(x, -x), &w);
    ip[i] = w.y;
    frac2[i] = m.y;
}

kernel void half_bits(global const half *a, global const half *b, global const half *c,
                      global half *sel, global int *normal, global int *sign) {
    size_t i = get_global_id(0);
    sel[i] = bitselect(a[i], b[i], c[i]);
    normal[i] = isnormal(a[i]) | isfinite(a[i]) << 1 | isinf(a[i]) << 2 | isnan(a[i]) << 3;
    sign[i] = signbit(a[i]);
}

kernel void half_moves(global const half *a, global ushort *bits, global half *from_bits,
                       global half *copy4, local half *scratch) {
    size_t i = get_global_id(0);
    size_t l = get_local_id(0);
    bits[i] = as_ushort(a[i]);
    from_bits[i] = as_half((ushort)(as_ushort(a[i]) ^ 0x8000));
    half tmp[4];
    for (int k = 0; k < 4; k++)
        tmp[k] = a[(4 * i + k) % get_global_size(0)];
    scratch[l] = tmp[i % 4];
    barrier(CLK_LOCAL_MEM_FENCE);
    half4 v = vload4(0, tmp);
    v.w = scratch[l];
    vstore4(v, i, copy4);
}
