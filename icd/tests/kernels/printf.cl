// printf through the loader: integer conversions at every width, float and double formats,
// vectors, strings, characters, %%, the return value, buffer overflow and command order.

#pragma OPENCL EXTENSION cl_khr_fp16 : enable

kernel void print_all(global const long *n, global const float *f, global const double *d,
                      global int *ret) {
    ret[0] = printf("hh %hhd %hhu %hhx|h %hd %hu %hX|int %d %i %u %o %x %X|long %ld %lu %lx|c %c%c|s %s %.3s %-6s|%%|\n",
                    (char)n[0], (uchar)n[1], (uchar)n[1], (short)n[2], (ushort)n[3], (ushort)n[3],
                    (int)n[4], (int)n[4], (uint)n[5], (uint)n[5], (uint)n[5], (uint)n[5],
                    n[6], (ulong)n[7], (ulong)n[7], 'A', (char)n[8], "text", "abcdef", "ab");
    ret[1] = printf("flags %+d % d %05d %-5d| %#o %#x %8.3d %-+6ld\n",
                    (int)n[4], (int)n[8], (int)n[8], (int)n[8], (uint)n[8], (uint)n[8], (int)n[8], n[6]);
    ret[2] = printf("float %f %.3e %g %a %A %E %G %F %10.2f\n",
                    f[0], f[1], f[2], f[3], f[3], f[1], f[4], f[5], f[0]);
    ret[3] = printf("double %.17g %e %a %.0f %-12.4f|\n", d[0], d[1], d[2], d[3], d[4]);
    ret[4] = printf("special %f %e %g %a\n", f[6], -f[6], f[7], -f[8]);
    int4 i4 = (int4)((int)n[4], 2, -3, (int)n[8]);
    char2 c2 = (char2)((char)n[0], 100);
    ushort3 s3 = (ushort3)((ushort)n[3], 0, 7);
    ulong2 l2 = (ulong2)((ulong)n[7], 1);
    float4 f4 = (float4)(f[0], f[1], f[2], f[3]);
    double2 d2 = (double2)(d[0], d[1]);
    uchar8 u8 = (uchar8)((uchar)n[1], 1, 2, 3, 4, 5, 6, 255);
    char16 c16 = (char16)((char)n[0]);
    ret[5] = printf("vectors %v4hld|%v2hhd|%v3hu|%v2lx|%v4hlf|%v2lf|%#v8hhx|%v16hhd\n",
                    i4, c2, s3, l2, f4, d2, u8, c16);
    ret[6] = printf("%.2v4hla %+5v2hld %v4hle\n", f4, i4.xy, f4);
    ret[7] = printf("no arguments\n");
    half4 h4 = (half4)((half)n[8], (half)0.5f, (half)-2.0f, (half)65504.0f);
    ret[8] = printf("half %v4hf %v2hg\n", h4, h4.zw);
}

kernel void print_pointer(global ulong *where) {
    where[0] = (ulong)where;
    printf("%p\n", where);
}

kernel void print_many(global int *ret) {
    long id = get_global_id(0);
    ret[id] = printf("%ld %ld\n", id, id * 3);
}

kernel void print_tagged(int tag) {
    printf("command %d item %d\n", tag, (int)get_global_id(0));
}
