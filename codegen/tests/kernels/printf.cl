// printf records: what JIT code writes into the printf buffer.

kernel void records(global int *ret) {
    int i = get_global_id(0);
    float4 v = (float4)(i, 0.5f, -1.0f, 2.0f);
    ret[i] = printf("%d %v4hlf %s%c\n", i, v, "str", 'z');
}

kernel void around_barrier(global int *ret) {
    int i = get_global_id(0);
    int before = printf("before %d\n", i);
    barrier(CLK_LOCAL_MEM_FENCE);
    ret[i] = before + printf("after %ld\n", (long)i);
}
