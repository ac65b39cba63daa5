// language: -cl-std=CL3.0
// Pipe kernels of icd/tests/pipes/: first two that use no pipe built-in, for what the driver
// does with the arguments themselves (their checks, the launch, the objects a launch holds).

kernel void pipe_args(__write_only pipe int out_pipe, __read_only pipe float4 in_pipe,
                      global int *out, int value) {
    out[get_global_id(0)] = value;
}

kernel void buffer_arg(global int *out) {
    out[get_global_id(0)] = 1;
}

// A producer, a consumer and the packet queries, through the loader: what a launch gives the
// pipe functions is the pipe object's ring.
kernel void produce(global const int *src, __write_only pipe int out, global int *status) {
    size_t i = get_global_id(0);
    status[i] = write_pipe(out, &src[i]);
}

kernel void consume(__read_only pipe int in, global int *dst, global int *status) {
    size_t i = get_global_id(0);
    dst[i] = -1;
    status[i] = read_pipe(in, &dst[i]);
}

kernel void count(__read_only pipe int in, global uint *out) {
    out[0] = get_pipe_num_packets(in);
    out[1] = get_pipe_max_packets(in);
}

// Packets of CL_DEVICE_PIPE_MAX_PACKET_SIZE bytes (the Khronos CTS pipe_max_packet_size).
typedef struct {
    char bytes[1024];
} Big;

kernel void produce_big(global const Big *src, __write_only pipe Big out, global int *status) {
    size_t i = get_global_id(0);
    status[i] = write_pipe(out, &src[i]);
}

kernel void consume_big(__read_only pipe Big in, global Big *dst, global int *status) {
    size_t i = get_global_id(0);
    status[i] = read_pipe(in, &dst[i]);
}
