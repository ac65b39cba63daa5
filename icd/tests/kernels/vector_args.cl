// Vectors passed by value, including 3-component ones (which occupy 4 components in the
// argument, like cl_float3), written back component by component.
kernel void vector_args(char3 c3, short8 s8, int2 i2, long4 l4, float3 f3, double16 d16,
                        uchar16 u16, global long *out, global double *dout) {
    out[0] = c3.x; out[1] = c3.y; out[2] = c3.z;
    for (int k = 0; k < 8; k++) out[3 + k] = s8[k];
    out[11] = i2.x; out[12] = i2.y;
    for (int k = 0; k < 4; k++) out[13 + k] = l4[k];
    for (int k = 0; k < 16; k++) out[17 + k] = u16[k];
    dout[0] = f3.x; dout[1] = f3.y; dout[2] = f3.z;
    for (int k = 0; k < 16; k++) dout[3 + k] = d16[k];
}
