// Private structs as DPC++ makes them (codegen/tests/private_forward.rs): kernel arguments
// copied into the fields of a private struct, whose address goes to a function the driver's
// recipe does not inline (it has no inliner), so the struct stays in private memory and its
// fields are loaded back inside the callee's loop, as a SYCL kernel's accessor copies are.

typedef struct {
    __global const float *data;
    int len;
} span_t;

typedef struct {
    span_t in;
    __global float *out;
    int scale;
} job_t;

// The store to `out` in the loop keeps the fields' loads in it (`out` may alias `job` as far
// as the optimiser knows).
void window_sum(const job_t *job, int i) {
    float acc = 0.0f;
    for (int k = 0; k < job->in.len; ++k) {
        acc += job->in.data[i + k];
        job->out[i] = acc * (float)job->scale;
    }
}

// Every field stored once: each load of it is the stored argument.
__kernel void private_struct(__global const float *data, __global float *out, int len,
                             int scale) {
    job_t job;
    job.in.data = data;
    job.in.len = len;
    job.out = out;
    job.scale = scale;
    window_sum(&job, get_global_id(0));
}

// `scale` stored twice, the struct read in between: the loads of `scale` keep the struct in
// private memory (the other fields' loads are still forwarded); the results are the same.
__kernel void private_struct_rewritten(__global const float *data, __global float *out, int len,
                                       int scale) {
    job_t job;
    job.in.data = data;
    job.in.len = len;
    job.out = out;
    job.scale = 1;
    int i = get_global_id(0);
    window_sum(&job, i);
    job.scale = scale;
    window_sum(&job, i);
}
