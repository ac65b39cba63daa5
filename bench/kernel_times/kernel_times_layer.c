// kernel_times_layer.c: an OpenCL loader layer that times every kernel launch of an unmodified
// application on any platform, and writes one line per (kernel, global size, local size) when the
// application exits: launches, total and best milliseconds. It is how Ferrocl's time is split
// kernel by kernel against PoCL's or Intel's runtime under the same program (a dpnp sort, a
// password cracker's benchmark), where the application itself only reports its end-to-end time.
//
// Each launch is measured alone: the layer finishes the queue's earlier work, enqueues the
// launch, and waits for it, so a figure is the host's view of one launch (enqueue to
// completion, launch overhead included) and overlapping launches are serialised. Profile
// queues are not needed.
//
// Build and use (bench/README.md, "Kernel by kernel"):
//   cc -O2 -shared -fPIC -o libkernel_times.so bench/kernel_times/kernel_times_layer.c -lpthread
//   OPENCL_LAYERS=$PWD/libkernel_times.so KERNEL_TIMES_OUT=times.txt <application>
// Both ocl-icd (Debian's libOpenCL) and the Khronos loader (Intel's wheels) load it.
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl_icd.h>
#include <CL/cl_layer.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

// CL_LAYER_NAME (cl_layer.h of 2023 and later; Debian 12's header has only the version).
#define LAYER_NAME_QUERY 0x4241
#define LAYER_NAME "kernel_times"
#define MAX_ROWS 1024

struct row {
    char *name;
    size_t global, local; // work-items; local 0 when the application left it to the runtime
    unsigned long launches;
    double total_ms, best_ms;
};

static struct _cl_icd_dispatch layer_dispatch;
static const struct _cl_icd_dispatch *next;
static struct row rows[MAX_ROWS];
static size_t row_count, rows_dropped;
static pthread_mutex_t rows_lock = PTHREAD_MUTEX_INITIALIZER;
static int written;

static double now_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e3 + t.tv_nsec * 1e-6;
}

// The kernel's name, malloc'd ("?" when the runtime does not say).
static char *kernel_name(cl_kernel kernel) {
    size_t size = 0;
    if (next->clGetKernelInfo(kernel, CL_KERNEL_FUNCTION_NAME, 0, NULL, &size) != CL_SUCCESS ||
        size == 0)
        return strdup("?");
    char *name = malloc(size);
    if (name == NULL)
        return NULL;
    if (next->clGetKernelInfo(kernel, CL_KERNEL_FUNCTION_NAME, size, name, NULL) != CL_SUCCESS) {
        free(name);
        return strdup("?");
    }
    name[size - 1] = '\0';
    return name;
}

static void record(cl_kernel kernel, size_t global, size_t local, double ms) {
    char *name = kernel_name(kernel);
    if (name == NULL)
        return;
    pthread_mutex_lock(&rows_lock);
    size_t i = 0;
    while (i < row_count &&
           !(rows[i].global == global && rows[i].local == local && !strcmp(rows[i].name, name)))
        i++;
    if (i == row_count) {
        if (row_count == MAX_ROWS) {
            rows_dropped++;
            pthread_mutex_unlock(&rows_lock);
            free(name);
            return;
        }
        rows[i] = (struct row){.name = name, .global = global, .local = local, .best_ms = ms};
        row_count++;
        name = NULL;
    }
    rows[i].launches++;
    rows[i].total_ms += ms;
    if (ms < rows[i].best_ms)
        rows[i].best_ms = ms;
    pthread_mutex_unlock(&rows_lock);
    free(name);
}

static int by_total_descending(const void *a, const void *b) {
    double x = ((const struct row *)a)->total_ms, y = ((const struct row *)b)->total_ms;
    return (x < y) - (x > y);
}

// Once, at the loader's clDeinitLayer or at exit, whichever comes first.
static void write_table(void) {
    pthread_mutex_lock(&rows_lock);
    if (written) {
        pthread_mutex_unlock(&rows_lock);
        return;
    }
    written = 1;
    const char *path = getenv("KERNEL_TIMES_OUT");
    FILE *out = path && *path ? fopen(path, "a") : stderr;
    if (out == NULL)
        out = stderr;
    qsort(rows, row_count, sizeof rows[0], by_total_descending);
    double all = 0;
    for (size_t i = 0; i < row_count; i++)
        all += rows[i].total_ms;
    fprintf(out, "%10s %6s %8s %11s %9s %9s %6s  %s\n", "global", "local", "launches", "total_ms",
            "mean_ms", "best_ms", "share", "kernel");
    for (size_t i = 0; i < row_count; i++) {
        const struct row *r = &rows[i];
        fprintf(out, "%10zu %6zu %8lu %11.2f %9.3f %9.3f %5.1f%%  %s\n", r->global, r->local,
                r->launches, r->total_ms, r->total_ms / r->launches, r->best_ms,
                all > 0 ? 100 * r->total_ms / all : 0.0, r->name);
    }
    if (rows_dropped)
        fprintf(out, "(%zu launches of further shapes not counted: more than %d rows)\n",
                rows_dropped, MAX_ROWS);
    if (out != stderr)
        fclose(out);
    pthread_mutex_unlock(&rows_lock);
}

static cl_int CL_API_CALL timed_enqueue(cl_command_queue queue, cl_kernel kernel, cl_uint dims,
                                        const size_t *offset, const size_t *global,
                                        const size_t *local, cl_uint wait_count,
                                        const cl_event *wait_list, cl_event *event) {
    // Earlier work is not this launch's: let it finish first.
    if (wait_count > 0 && wait_list != NULL)
        next->clWaitForEvents(wait_count, wait_list);
    next->clFinish(queue);
    cl_event done = NULL;
    double start = now_ms();
    cl_int status = next->clEnqueueNDRangeKernel(queue, kernel, dims, offset, global, local,
                                                 wait_count, wait_list, &done);
    if (status != CL_SUCCESS)
        return status;
    cl_int waited = next->clWaitForEvents(1, &done);
    double ms = now_ms() - start;
    if (event != NULL)
        *event = done;
    else
        next->clReleaseEvent(done);
    if (waited == CL_SUCCESS && global != NULL) {
        size_t items = 1, group = local != NULL ? 1 : 0;
        for (cl_uint d = 0; d < dims; d++) {
            items *= global[d];
            if (local != NULL)
                group *= local[d];
        }
        record(kernel, items, group, ms);
    }
    return CL_SUCCESS;
}

CL_API_ENTRY cl_int CL_API_CALL clGetLayerInfo(cl_layer_info param, size_t size, void *value,
                                               size_t *size_ret) {
    if (param == CL_LAYER_API_VERSION) {
        cl_layer_api_version version = CL_LAYER_API_VERSION_100;
        if (value != NULL) {
            if (size < sizeof version)
                return CL_INVALID_VALUE;
            memcpy(value, &version, sizeof version);
        }
        if (size_ret != NULL)
            *size_ret = sizeof version;
        return CL_SUCCESS;
    }
    if (param == LAYER_NAME_QUERY) {
        if (value != NULL) {
            if (size < sizeof LAYER_NAME)
                return CL_INVALID_VALUE;
            memcpy(value, LAYER_NAME, sizeof LAYER_NAME);
        }
        if (size_ret != NULL)
            *size_ret = sizeof LAYER_NAME;
        return CL_SUCCESS;
    }
    return CL_INVALID_VALUE;
}

CL_API_ENTRY cl_int CL_API_CALL clInitLayer(cl_uint entries,
                                            const struct _cl_icd_dispatch *target,
                                            cl_uint *entries_ret,
                                            const struct _cl_icd_dispatch **dispatch_ret) {
    size_t ours = sizeof layer_dispatch / sizeof(void *);
    if (target == NULL || entries_ret == NULL || dispatch_ret == NULL)
        return CL_INVALID_VALUE;
    // A loader with a shorter table than ours: the entries it has, the rest empty.
    memset(&layer_dispatch, 0, sizeof layer_dispatch);
    memcpy(&layer_dispatch, target, (entries < ours ? entries : ours) * sizeof(void *));
    next = target;
    layer_dispatch.clEnqueueNDRangeKernel = timed_enqueue;
    *dispatch_ret = &layer_dispatch;
    *entries_ret = (cl_uint)ours;
    atexit(write_table);
    return CL_SUCCESS;
}

// The Khronos loader's newer entry point (cl_layer.h of 2023): Intel's wheels ship that
// loader, which looks for this one first and does not fall back to clInitLayer.
CL_API_ENTRY cl_int CL_API_CALL clInitLayerWithProperties(
    cl_uint entries, const struct _cl_icd_dispatch *target, cl_uint *entries_ret,
    const struct _cl_icd_dispatch **dispatch_ret, const intptr_t *properties) {
    (void)properties;
    return clInitLayer(entries, target, entries_ret, dispatch_ret);
}

CL_API_ENTRY cl_int CL_API_CALL clDeinitLayer(void) {
    write_table();
    return CL_SUCCESS;
}
