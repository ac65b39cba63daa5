/* Math built-ins on subnormal inputs and with subnormal results (icd/tests/config.rs, with and
 * without FERROCL_FTZ=on). Every input comes from a buffer, so nothing is constant-folded. */
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#pragma OPENCL EXTENSION cl_khr_fp16 : enable

/* x: [1e-39 (subnormal), -1e-39, -100, 0, 1, FLT_MIN, 2, -140] */
kernel void ftz_float(global const float *x, global float *f, global int *n) {
    float den = x[0], neg = x[1], zero = x[3], one = x[4], min_normal = x[5];
    f[0] = exp(x[2]);                      /* 3.7e-44: a subnormal result */
    f[1] = log(den);
    f[2] = sin(den);
    f[3] = sin(neg);
    f[4] = nextafter(zero, one);           /* the smallest subnormal */
    f[5] = nextafter(min_normal, zero);    /* the largest subnormal */
    int e;
    f[6] = frexp(den, &e);
    n[0] = e;
    n[1] = ilogb(den);
    f[7] = logb(den);
    f[8] = fmin(den, one);
    f[9] = copysign(den, -one);
    f[10] = ldexp(one, -130);
    f[11] = pow(x[6], x[7]);               /* 2^-140 */
    f[12] = fabs(neg);
    f[13] = cbrt(den);                     /* a normal result of a subnormal input */
    float4 v = exp((float4)(x[2], x[2], 0.0f, -1.0f));
    f[14] = v.x;
    f[15] = v.z;
}

/* x: [1e-310 (subnormal), -720, 0, 1] */
kernel void ftz_double(global const double *x, global double *d, global int *n) {
    double den = x[0];
    d[0] = exp(x[1]);                      /* 1.9e-313 */
    d[1] = log(den);
    d[2] = nextafter(x[2], x[3]);
    int e;
    d[3] = frexp(den, &e);
    n[0] = e;
    n[1] = ilogb(den);
    d[4] = fmin(den, x[3]);
    d[5] = sin(den);
}

/* x: [0, 1, 2^-16 (0x0100, a half subnormal)] */
kernel void ftz_half(global const ushort *x, global ushort *h) {
    half zero = as_half(x[0]), one = as_half(x[1]), den = as_half(x[2]);
    h[0] = as_ushort(nextafter(zero, one)); /* 2^-24, the smallest half subnormal */
    h[1] = as_ushort(sqrt(den));
    h[2] = as_ushort(den * one);
}
