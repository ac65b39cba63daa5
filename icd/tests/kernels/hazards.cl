// Operations whose results the spec leaves undefined or implementation-defined for
// some inputs: integer division by zero, INT_MIN / -1, float->int conversion of NaN,
// infinities and out-of-range values. They must not crash the process. Saturated
// conversions are fully specified (NaN -> 0, clamp to range) and checked exactly.
__kernel void hazards(__global const int *a, __global const int *b, __global const float *f,
                      __global int *quot, __global int *rem, __global uint *uquot,
                      __global int *cvt_i, __global uint *cvt_u, __global long *cvt_l,
                      __global int *sat_i, __global uint *sat_u)
{
    size_t i = get_global_id(0);
    int x = a[i];
    int y = b[i];
    quot[i] = x / y;
    rem[i] = x % y;
    uquot[i] = (uint)x / (uint)y;
    float v = f[i];
    cvt_i[i] = (int)v;
    cvt_u[i] = (uint)v;
    cvt_l[i] = (long)v;
    sat_i[i] = convert_int_sat(v);
    sat_u[i] = convert_uint_sat(v);
}
