/* icd/tests/c/atexit_build.c: builds and runs a kernel in main, then again from an atexit
 * handler, which runs after the main thread's thread-local destructors (lifecycle.rs runs it
 * through the loader). Prints one line per step; exits non-zero on an OpenCL error. */
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>
#include <stdio.h>
#include <stdlib.h>

static int build_and_run(const char *when) {
    cl_platform_id platforms[8];
    cl_uint n = 0;
    clGetPlatformIDs(8, platforms, &n);
    if (n == 0) {
        printf("%s: no platform\n", when);
        return 1;
    }
    cl_device_id d;
    cl_int e = clGetDeviceIDs(platforms[0], CL_DEVICE_TYPE_ALL, 1, &d, NULL);
    cl_context c = clCreateContext(NULL, 1, &d, NULL, NULL, &e);
    const char *src = "kernel void k(global int *p) { p[get_global_id(0)] = 7 * get_global_id(0); }";
    cl_program pr = clCreateProgramWithSource(c, 1, &src, NULL, &e);
    cl_int built = clBuildProgram(pr, 1, &d, "", NULL, NULL);
    cl_kernel k = clCreateKernel(pr, "k", &e);
    cl_mem b = clCreateBuffer(c, CL_MEM_READ_WRITE, 16 * sizeof(int), NULL, &e);
    clSetKernelArg(k, 0, sizeof b, &b);
    cl_command_queue q = clCreateCommandQueueWithProperties(c, d, NULL, &e);
    size_t g = 16;
    cl_int ran = clEnqueueNDRangeKernel(q, k, 1, NULL, &g, NULL, 0, NULL, NULL);
    int out[16] = {0};
    cl_int read = clEnqueueReadBuffer(q, b, CL_TRUE, 0, sizeof out, out, 0, NULL, NULL);
    clFinish(q);
    clReleaseCommandQueue(q);
    clReleaseMemObject(b);
    clReleaseKernel(k);
    clReleaseProgram(pr);
    clReleaseContext(c);
    printf("%s: build %d run %d read %d out[5] %d\n", when, built, ran, read, out[5]);
    return built != CL_SUCCESS || ran != CL_SUCCESS || read != CL_SUCCESS || out[5] != 35;
}

static void at_exit(void) {
    if (build_and_run("atexit"))
        _Exit(3);
}

int main(void) {
    if (build_and_run("main"))
        return 2;
    atexit(at_exit);
    return 0;
}
