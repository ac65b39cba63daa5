// OpenCL.std functions with out-parameters or integer arguments/results.
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
__kernel void shaped(__global const float4 *x, __global const float4 *y, __global float4 *out,
                     __global int4 *iout, __global double *d) {
    size_t g = get_global_id(0);
    float4 v = x[g], w = y[g];
    int4 e, q;
    float4 ip, fl, c;
    out[g * 9 + 0] = frexp(v, &e);   iout[g * 5 + 0] = e;
    out[g * 9 + 1] = modf(v, &ip);   out[g * 9 + 2] = ip;
    out[g * 9 + 3] = fract(v, &fl);  out[g * 9 + 4] = fl;
    out[g * 9 + 5] = sincos(v, &c);  out[g * 9 + 6] = c;
    out[g * 9 + 7] = remquo(v, w, &q); iout[g * 5 + 1] = q;
    out[g * 9 + 8] = pown(w, (int4)(3, -2, 0, 5)) + rootn(fabs(w), (int4)(2, 3, -3, 5)) * 0.0f;
    iout[g * 5 + 2] = ilogb(v);
    int sign, de;
    float lg = lgamma_r(v.x, &sign);
    iout[g * 5 + 3] = (int4)(sign);
    iout[g * 5 + 4] = as_int4(nan((uint4)(1, 2, 3, 0x3fffff)));
    d[g * 3 + 0] = frexp(d[g * 3 + 0], &de) + de;
    d[g * 3 + 1] = rootn(fabs(d[g * 3 + 1]), 3);
    d[g * 3 + 2] = lg;
}
