#!/usr/bin/env python3
"""Interleaved A/B timing of one-line kernels on several OpenCL platforms at once.

On a noisy VM, figures taken one platform after another drift by 10-40 % between runs.
Here every platform whose name contains --platform is set up first, and then each
repetition launches the kernel once on each platform in turn, so drift hits all of them
alike. Two builds of Ferrocl can be compared by listing two ICD files (one per build of
libferrocl.so) in one OCL_ICD_VENDORS directory: the loader opens both, and they show up as
platforms [0] and [1]. The loader takes the ICD files in directory order, not by name, so the
first lines printed say which library each platform number is (from the address of the
platform's clIcdGetPlatformIDsKHR in /proc/self/maps). Run each comparison in both orders,
and once with the same library twice (an A/A run), before believing a difference.

    OCL_ICD_VENDORS=/tmp/ab FERROCL_TIER_UP_AFTER=0.000001 OPENBLAS_NUM_THREADS=1 \
        python3 bench/ab/interleaved.py --platform Ferrocl --kernels exp,log,math --types float,double

Each kernel computes out[i] = f(in[i]) over --n elements in [-1.5, 4), with local size 256
unless --local 0 (the platform's choice). Times are the profiling events' (kernel only),
min and median. Needs pyopencl and numpy.
"""
import argparse
import ctypes
import time

import numpy as np
import pyopencl as cl

EXPRESSIONS = {
    "copy": "x",
    "exp": "exp(x)",
    "exp2": "exp2(x)",
    "sin": "sin(x)",
    "cos": "cos(x)",
    "log": "log((T)2 + x)",
    "log2": "log2((T)2 + x)",
    "pow": "pow((T)1 + fabs(x), (T)0.75)",
    "sqrt": "sqrt((T)2 + x)",
    "div": "(T)1 / ((T)2 + x)",
    # The benchmark's transcendental row (bench/kernels/transcendental.cl).
    "transcendental": "sin(x) * cos((T)0.5 * x) + exp((T)-0.25 * x * x) + log((T)1 + x * x)",
    # The benchmark's math row (bench/kernels/math.cl).
    "math": "sin(x) * cos((T)2 * x) + exp((T)0.5 * x) * log((T)1 + x * x) + exp2(-x * x)"
            " + log2((T)2 + x) + pow((T)1 + fabs(x), (T)0.75)",
}


def library_of(platform):
    """The shared library that implements `platform` (its ICD), or "?"."""
    try:
        opencl = ctypes.CDLL("libOpenCL.so.1")
        lookup = opencl.clGetExtensionFunctionAddressForPlatform
        lookup.restype = ctypes.c_void_p
        lookup.argtypes = [ctypes.c_void_p, ctypes.c_char_p]
        address = lookup(platform.int_ptr, b"clIcdGetPlatformIDsKHR")
    except (OSError, AttributeError):
        return "?"
    if not address:
        return "?"
    with open("/proc/self/maps") as maps:
        for line in maps:
            fields = line.split()
            low, high = (int(v, 16) for v in fields[0].split("-"))
            if low <= address < high and len(fields) >= 6:
                return fields[5]
    return "?"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--platform", default="Ferrocl", help="platform-name substring")
    ap.add_argument("--kernels", default="exp,log,math",
                    help="comma-separated: " + ",".join(EXPRESSIONS))
    ap.add_argument("--types", default="float", help="float, double or both")
    ap.add_argument("--n", type=int, default=1 << 22)
    ap.add_argument("--local", type=int, default=256, help="0: the platform chooses")
    ap.add_argument("--reps", type=int, default=40)
    args = ap.parse_args()
    platforms = [p for p in cl.get_platforms() if args.platform in p.name]
    if not platforms:
        raise SystemExit(f"no platform named like {args.platform!r}")
    for j, p in enumerate(platforms):
        print(f"[{j}] {p.name}: {library_of(p)}", flush=True)
    queues = []
    for p in platforms:
        ctx = cl.Context([p.get_devices()[0]])
        props = cl.command_queue_properties.PROFILING_ENABLE
        queues.append((ctx, cl.CommandQueue(ctx, properties=props)))
    local = (args.local,) if args.local else None
    for t in args.types.split(","):
        dtype = np.float32 if t == "float" else np.float64
        x = np.random.RandomState(1).uniform(-1.5, 4.0, args.n).astype(dtype)
        for name in args.kernels.split(","):
            expr = EXPRESSIONS[name].replace("T", t)
            src = ("#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n" if t == "double" else "") + \
                f"__kernel void k(__global const {t}* in, __global {t}* out) " \
                f"{{ size_t i = get_global_id(0); {t} x = in[i]; out[i] = {expr}; }}"
            runs = []
            for ctx, q in queues:
                src_buf = cl.Buffer(ctx, cl.mem_flags.READ_ONLY | cl.mem_flags.COPY_HOST_PTR, hostbuf=x)
                out_buf = cl.Buffer(ctx, cl.mem_flags.WRITE_ONLY, x.nbytes)
                k = cl.Program(ctx, src).build().k
                # Warm-up launches: a tiered platform switches to its final code after them.
                for _ in range(5):
                    k(q, (args.n,), local, src_buf, out_buf).wait()
                runs.append((q, k, src_buf, out_buf))
            time.sleep(1.0)
            times = [[] for _ in runs]
            for _ in range(args.reps):
                for j, (q, k, src_buf, out_buf) in enumerate(runs):
                    e = k(q, (args.n,), local, src_buf, out_buf)
                    e.wait()
                    times[j].append((e.profile.end - e.profile.start) * 1e-6)
            line = f"{t:<6} {name:<6}"
            for j, ts in enumerate(times):
                ts.sort()
                line += f"  [{j}] min {ts[0]:7.3f} med {ts[len(ts) // 2]:7.3f} ms"
            print(line, flush=True)


if __name__ == "__main__":
    main()
