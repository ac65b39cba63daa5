// Pipes (OpenCL C 3.0 §6.15.16) for codegen/tests/pipes.rs: every pipe built-in, with and
// without reservations, by work-items, work-groups and sub-groups, and the packet queries.

typedef struct {
    char a;
    int b;
    short c;
} Packet;

kernel void write_each(global const int *src, __write_only pipe int out, global int *status) {
    size_t i = get_global_id(0);
    status[i] = write_pipe(out, &src[i]);
}

kernel void read_each(__read_only pipe int in, global int *dst, global int *status) {
    size_t i = get_global_id(0);
    dst[i] = -1;
    status[i] = read_pipe(in, &dst[i]);
}

kernel void write_reserved(global const Packet *src, __write_only pipe Packet out,
                           global int *status) {
    size_t i = get_global_id(0);
    reserve_id_t id = reserve_write_pipe(out, 2);
    if (!is_valid_reserve_id(id)) {
        status[i] = -2;
        return;
    }
    // The second packet first: a reservation's packets go by index, not by call order.
    int s1 = write_pipe(out, id, 1, &src[2 * i + 1]);
    int s0 = write_pipe(out, id, 0, &src[2 * i]);
    // An index outside the reservation fails.
    int outside = write_pipe(out, id, 2, &src[2 * i]);
    commit_write_pipe(out, id);
    status[i] = s0 + s1 + 10 * outside;
}

kernel void read_reserved(__read_only pipe Packet in, global Packet *dst, global int *status) {
    size_t i = get_global_id(0);
    reserve_id_t id = reserve_read_pipe(in, 2);
    if (!is_valid_reserve_id(id)) {
        status[i] = -2;
        return;
    }
    int s0 = read_pipe(in, id, 0, &dst[2 * i]);
    int s1 = read_pipe(in, id, 1, &dst[2 * i + 1]);
    commit_read_pipe(in, id);
    status[i] = s0 + s1;
}

kernel void write_group(global const int *src, __write_only pipe int out, global int *valid) {
    size_t i = get_global_id(0);
    reserve_id_t id = work_group_reserve_write_pipe(out, get_local_size(0));
    valid[i] = is_valid_reserve_id(id);
    if (is_valid_reserve_id(id)) {
        write_pipe(out, id, get_local_id(0), &src[i]);
        work_group_commit_write_pipe(out, id);
    }
}

kernel void read_group(__read_only pipe int in, global int *dst, global int *valid) {
    size_t i = get_global_id(0);
    reserve_id_t id = work_group_reserve_read_pipe(in, get_local_size(0));
    valid[i] = is_valid_reserve_id(id);
    dst[i] = -1;
    if (is_valid_reserve_id(id)) {
        read_pipe(in, id, get_local_id(0), &dst[i]);
        work_group_commit_read_pipe(in, id);
    }
}

kernel void write_sub_group(global const int *src, __write_only pipe int out, global int *valid) {
    size_t i = get_global_id(0);
    reserve_id_t id = sub_group_reserve_write_pipe(out, get_sub_group_size());
    valid[i] = is_valid_reserve_id(id);
    if (is_valid_reserve_id(id)) {
        write_pipe(out, id, get_sub_group_local_id(), &src[i]);
        sub_group_commit_write_pipe(out, id);
    }
}

kernel void read_sub_group(__read_only pipe int in, global int *dst, global int *valid) {
    size_t i = get_global_id(0);
    reserve_id_t id = sub_group_reserve_read_pipe(in, get_sub_group_size());
    valid[i] = is_valid_reserve_id(id);
    dst[i] = -1;
    if (is_valid_reserve_id(id)) {
        read_pipe(in, id, get_sub_group_local_id(), &dst[i]);
        sub_group_commit_read_pipe(in, id);
    }
}

kernel void query_write(__write_only pipe int p, global uint *out) {
    out[0] = get_pipe_num_packets(p);
    out[1] = get_pipe_max_packets(p);
}

kernel void query_read(__read_only pipe int p, global uint *out) {
    out[0] = get_pipe_num_packets(p);
    out[1] = get_pipe_max_packets(p);
}
