// cl_khr_integer_dot_product from OpenCL C: the 4 x 8-bit vector forms (llvm-spirv-15 emits
// OpSDot & co.) and the packed forms (left as calls to imported functions, which codegen
// computes). out[16 * i + k], checked in codegen/tests/builtins.rs.
kernel void integer_dot(global const uint *a, global const uint *b, global const uint *acc,
                        global uint *out) {
    size_t i = get_global_id(0);
    uint x = a[i], y = b[i], c = acc[i];
    uchar4 ux = as_uchar4(x), uy = as_uchar4(y);
    char4 sx = as_char4(x), sy = as_char4(y);
    global uint *o = out + 16 * i;
    o[0] = dot(ux, uy);
    o[1] = dot(sx, sy);
    o[2] = dot(ux, sy);
    o[3] = dot(sx, uy);
    o[4] = dot_acc_sat(ux, uy, c);
    o[5] = dot_acc_sat(sx, sy, (int)c);
    o[6] = dot_acc_sat(ux, sy, (int)c);
    o[7] = dot_acc_sat(sx, uy, (int)c);
    o[8] = dot_4x8packed_uu_uint(x, y);
    o[9] = dot_4x8packed_ss_int(x, y);
    o[10] = dot_4x8packed_us_int(x, y);
    o[11] = dot_4x8packed_su_int(x, y);
    o[12] = dot_acc_sat_4x8packed_uu_uint(x, y, c);
    o[13] = dot_acc_sat_4x8packed_ss_int(x, y, (int)c);
    o[14] = dot_acc_sat_4x8packed_us_int(x, y, (int)c);
    o[15] = dot_acc_sat_4x8packed_su_int(x, y, (int)c);
}
