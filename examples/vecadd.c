/* examples/vecadd.c: add two vectors of 1M floats on the Ferrocl platform through the
 * system OpenCL loader and check every element.
 *
 *   vecadd PROGRAM     PROGRAM is SPIR-V (built from vecadd.cl by scripts/setup.sh into
 *                      target/), or OpenCL C source if its name ends in ".cl".
 *
 * The platform is the one whose name contains "Ferrocl" (case-insensitive), or the first
 * platform when FERROCL_EXAMPLE_ANY is set. Prints PASS or FAIL; exits non-zero on failure.
 */
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N (1u << 20)

static const char *cl_error_name(cl_int e)
{
    switch (e) {
#define E(x) case x: return #x;
    E(CL_SUCCESS) E(CL_DEVICE_NOT_FOUND) E(CL_DEVICE_NOT_AVAILABLE)
    E(CL_COMPILER_NOT_AVAILABLE) E(CL_MEM_OBJECT_ALLOCATION_FAILURE) E(CL_OUT_OF_RESOURCES)
    E(CL_OUT_OF_HOST_MEMORY) E(CL_PROFILING_INFO_NOT_AVAILABLE) E(CL_MEM_COPY_OVERLAP)
    E(CL_IMAGE_FORMAT_MISMATCH) E(CL_IMAGE_FORMAT_NOT_SUPPORTED) E(CL_BUILD_PROGRAM_FAILURE)
    E(CL_MAP_FAILURE) E(CL_MISALIGNED_SUB_BUFFER_OFFSET)
    E(CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST) E(CL_COMPILE_PROGRAM_FAILURE)
    E(CL_LINKER_NOT_AVAILABLE) E(CL_LINK_PROGRAM_FAILURE) E(CL_DEVICE_PARTITION_FAILED)
    E(CL_KERNEL_ARG_INFO_NOT_AVAILABLE) E(CL_INVALID_VALUE) E(CL_INVALID_DEVICE_TYPE)
    E(CL_INVALID_PLATFORM) E(CL_INVALID_DEVICE) E(CL_INVALID_CONTEXT)
    E(CL_INVALID_QUEUE_PROPERTIES) E(CL_INVALID_COMMAND_QUEUE) E(CL_INVALID_HOST_PTR)
    E(CL_INVALID_MEM_OBJECT) E(CL_INVALID_IMAGE_FORMAT_DESCRIPTOR) E(CL_INVALID_IMAGE_SIZE)
    E(CL_INVALID_SAMPLER) E(CL_INVALID_BINARY) E(CL_INVALID_BUILD_OPTIONS)
    E(CL_INVALID_PROGRAM) E(CL_INVALID_PROGRAM_EXECUTABLE) E(CL_INVALID_KERNEL_NAME)
    E(CL_INVALID_KERNEL_DEFINITION) E(CL_INVALID_KERNEL) E(CL_INVALID_ARG_INDEX)
    E(CL_INVALID_ARG_VALUE) E(CL_INVALID_ARG_SIZE) E(CL_INVALID_KERNEL_ARGS)
    E(CL_INVALID_WORK_DIMENSION) E(CL_INVALID_WORK_GROUP_SIZE) E(CL_INVALID_WORK_ITEM_SIZE)
    E(CL_INVALID_GLOBAL_OFFSET) E(CL_INVALID_EVENT_WAIT_LIST) E(CL_INVALID_EVENT)
    E(CL_INVALID_OPERATION) E(CL_INVALID_GL_OBJECT) E(CL_INVALID_BUFFER_SIZE)
    E(CL_INVALID_MIP_LEVEL) E(CL_INVALID_GLOBAL_WORK_SIZE) E(CL_INVALID_PROPERTY)
    E(CL_INVALID_IMAGE_DESCRIPTOR) E(CL_INVALID_COMPILER_OPTIONS) E(CL_INVALID_LINKER_OPTIONS)
    E(CL_INVALID_DEVICE_PARTITION_COUNT) E(CL_INVALID_PIPE_SIZE) E(CL_INVALID_DEVICE_QUEUE)
    E(CL_INVALID_SPEC_ID) E(CL_MAX_SIZE_RESTRICTION_EXCEEDED)
#undef E
    case -1001: return "CL_PLATFORM_NOT_FOUND_KHR";
    default: return "unknown OpenCL error";
    }
}

#define CHECK(call)                                                                  \
    do {                                                                             \
        cl_int err_ = (call);                                                        \
        if (err_ != CL_SUCCESS) {                                                    \
            fprintf(stderr, "vecadd: %s failed: %s (%d)\n", #call,                   \
                    cl_error_name(err_), err_);                                      \
            goto fail;                                                               \
        }                                                                            \
    } while (0)

#define CHECK_ERR(what)                                                              \
    do {                                                                             \
        if (err != CL_SUCCESS) {                                                     \
            fprintf(stderr, "vecadd: %s failed: %s (%d)\n", what, cl_error_name(err), \
                    err);                                                            \
            goto fail;                                                               \
        }                                                                            \
    } while (0)

static int contains_ci(const char *hay, const char *needle)
{
    size_t n = strlen(needle);
    for (; *hay; hay++) {
        size_t i = 0;
        while (i < n && hay[i] && tolower((unsigned char)hay[i]) == tolower((unsigned char)needle[i]))
            i++;
        if (i == n)
            return 1;
    }
    return 0;
}

static unsigned char *read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        perror(path);
        return NULL;
    }
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *buf = size >= 0 ? malloc((size_t)size + 1) : NULL;
    if (!buf || fread(buf, 1, (size_t)size, f) != (size_t)size) {
        fprintf(stderr, "vecadd: cannot read %s\n", path);
        free(buf);
        fclose(f);
        return NULL;
    }
    buf[size] = 0;
    fclose(f);
    *len = (size_t)size;
    return buf;
}

static void print_build_log(cl_program program, cl_device_id device)
{
    size_t size = 0;
    if (clGetProgramBuildInfo(program, device, CL_PROGRAM_BUILD_LOG, 0, NULL, &size) != CL_SUCCESS)
        return;
    char *log = malloc(size + 1);
    if (log && clGetProgramBuildInfo(program, device, CL_PROGRAM_BUILD_LOG, size, log, NULL) == CL_SUCCESS) {
        log[size] = 0;
        fprintf(stderr, "--- build log ---\n%s\n-----------------\n", log);
    }
    free(log);
}

int main(int argc, char **argv)
{
    cl_platform_id platforms[16], platform = NULL;
    cl_uint num_platforms = 0;
    cl_device_id device;
    cl_context context = NULL;
    cl_command_queue queue = NULL;
    cl_program program = NULL;
    cl_kernel kernel = NULL;
    cl_mem ba = NULL, bb = NULL, bc = NULL;
    float *a = NULL, *b = NULL, *c = NULL;
    unsigned char *il = NULL;
    size_t il_len = 0;
    cl_int err;
    int ok = 0;
    char name[256];

    if (argc != 2) {
        fprintf(stderr, "usage: %s PROGRAM.spv|PROGRAM.cl\n", argv[0]);
        return 2;
    }

    CHECK(clGetPlatformIDs(16, platforms, &num_platforms));
    if (num_platforms > 16)
        num_platforms = 16;
    for (cl_uint i = 0; i < num_platforms; i++) {
        CHECK(clGetPlatformInfo(platforms[i], CL_PLATFORM_NAME, sizeof name, name, NULL));
        if (getenv("FERROCL_EXAMPLE_ANY") || contains_ci(name, "ferrocl")) {
            platform = platforms[i];
            break;
        }
    }
    if (!platform) {
        fprintf(stderr, "vecadd: no Ferrocl platform among %u platform(s); is it registered? "
                        "(see README: /etc/OpenCL/vendors or OCL_ICD_VENDORS)\n", num_platforms);
        goto fail;
    }
    CHECK(clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 1, &device, NULL));
    CHECK(clGetDeviceInfo(device, CL_DEVICE_NAME, sizeof name, name, NULL));
    printf("vecadd: platform device: %s\n", name);

    context = clCreateContext(NULL, 1, &device, NULL, NULL, &err);
    CHECK_ERR("clCreateContext");
    queue = clCreateCommandQueueWithProperties(context, device, NULL, &err);
    CHECK_ERR("clCreateCommandQueueWithProperties");

    il = read_file(argv[1], &il_len);
    if (!il)
        goto fail;
    size_t arg_len = strlen(argv[1]);
    if (arg_len > 3 && strcmp(argv[1] + arg_len - 3, ".cl") == 0) {
        const char *src = (const char *)il;
        program = clCreateProgramWithSource(context, 1, &src, &il_len, &err);
        CHECK_ERR("clCreateProgramWithSource");
    } else {
        program = clCreateProgramWithIL(context, il, il_len, &err);
        CHECK_ERR("clCreateProgramWithIL");
    }
    err = clBuildProgram(program, 1, &device, "", NULL, NULL);
    if (err != CL_SUCCESS) {
        fprintf(stderr, "vecadd: clBuildProgram failed: %s (%d)\n", cl_error_name(err), err);
        print_build_log(program, device);
        goto fail;
    }
    kernel = clCreateKernel(program, "vecadd", &err);
    CHECK_ERR("clCreateKernel");

    a = malloc(N * sizeof *a);
    b = malloc(N * sizeof *b);
    c = malloc(N * sizeof *c);
    if (!a || !b || !c) {
        fprintf(stderr, "vecadd: out of host memory\n");
        goto fail;
    }
    for (cl_uint i = 0; i < N; i++) {
        a[i] = (float)i * 0.5f;
        b[i] = 1000.0f - (float)(i % 977) * 0.25f;
        c[i] = -1.0f;
    }
    ba = clCreateBuffer(context, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, N * sizeof *a, a, &err);
    CHECK_ERR("clCreateBuffer(a)");
    bb = clCreateBuffer(context, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, N * sizeof *b, b, &err);
    CHECK_ERR("clCreateBuffer(b)");
    bc = clCreateBuffer(context, CL_MEM_WRITE_ONLY, N * sizeof *c, NULL, &err);
    CHECK_ERR("clCreateBuffer(c)");

    cl_uint n = N;
    CHECK(clSetKernelArg(kernel, 0, sizeof ba, &ba));
    CHECK(clSetKernelArg(kernel, 1, sizeof bb, &bb));
    CHECK(clSetKernelArg(kernel, 2, sizeof bc, &bc));
    CHECK(clSetKernelArg(kernel, 3, sizeof n, &n));
    size_t global = N;
    CHECK(clEnqueueNDRangeKernel(queue, kernel, 1, NULL, &global, NULL, 0, NULL, NULL));
    CHECK(clEnqueueReadBuffer(queue, bc, CL_TRUE, 0, N * sizeof *c, c, 0, NULL, NULL));
    CHECK(clFinish(queue));

    size_t bad = 0;
    for (cl_uint i = 0; i < N; i++) {
        float want = a[i] + b[i];
        if (c[i] != want) {
            if (bad < 5)
                fprintf(stderr, "vecadd: c[%u] = %.9g, want %.9g\n", i, c[i], want);
            bad++;
        }
    }
    if (bad == 0) {
        ok = 1;
    } else {
        fprintf(stderr, "vecadd: %zu of %u elements wrong\n", bad, N);
    }

fail:
    if (bc) clReleaseMemObject(bc);
    if (bb) clReleaseMemObject(bb);
    if (ba) clReleaseMemObject(ba);
    if (kernel) clReleaseKernel(kernel);
    if (program) clReleaseProgram(program);
    if (queue) clReleaseCommandQueue(queue);
    if (context) clReleaseContext(context);
    free(a);
    free(b);
    free(c);
    free(il);
    printf("%s\n", ok ? "PASS" : "FAIL");
    return ok ? 0 : 1;
}
