"""Times dpnp operations at 10 M elements on the OpenCL device ONEAPI_DEVICE_SELECTOR picks.

Each operation runs `--warmup` times (1 by default) to build its kernels, then `--reps` times;
the best and median wall-clock times (synchronised with the queue) are printed as one JSON
line per operation.
Run it once per platform (OCL_ICD_VENDORS naming a directory with only that platform's .icd)
and twice on each for an A/A pair; bench/README.md has the recipe.
"""

import argparse
import json
import statistics
import time

import dpctl
import dpnp
import numpy as np


def timed(fn, reps, q, warmup):
    for _ in range(warmup):
        fn()
        q.wait()
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        out = fn()
        q.wait()
        times.append(time.perf_counter() - t0)
    return out, times


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=10_000_000)
    ap.add_argument("--reps", type=int, default=10)
    ap.add_argument("--only", default="")
    # More warm-up calls let a tiered kernel reach its wide code (after 50 ms of runs) before
    # the timed ones: the steady state of a program that sums in a loop.
    ap.add_argument("--warmup", type=int, default=1)
    args = ap.parse_args()
    q = dpctl.SyclQueue()
    rng = np.random.default_rng(1)
    a_host = rng.random(args.n, dtype=np.float32)
    b_host = rng.random(args.n, dtype=np.float32)
    a = dpnp.asarray(a_host, sycl_queue=q)
    b = dpnp.asarray(b_host, sycl_queue=q)
    ops = {
        "add": (lambda: dpnp.add(a, b), lambda: a_host + b_host),
        "multiply": (lambda: dpnp.multiply(a, b), lambda: a_host * b_host),
        "exp": (lambda: dpnp.exp(a), lambda: np.exp(a_host)),
        "sum": (lambda: dpnp.sum(a), lambda: np.sum(a_host, dtype=np.float64)),
        "cumsum": (lambda: dpnp.cumsum(a), lambda: np.cumsum(a_host, dtype=np.float64)),
        "sort": (lambda: dpnp.sort(a), lambda: np.sort(a_host)),
    }
    for name, (fn, ref) in ops.items():
        if args.only and name not in args.only.split(","):
            continue
        out, times = timed(fn, args.reps, q, args.warmup)
        got = dpnp.asnumpy(out)
        want = ref()
        # float32 sums and scans round differently in any order: compare loosely there.
        tol = 1e-3 if name in ("sum", "cumsum") else 1e-6
        ok = bool(np.allclose(got, want, rtol=tol, atol=tol * 10))
        print(json.dumps({
            "op": name,
            "device": q.sycl_device.name,
            "platform": q.sycl_device.sycl_platform.name,
            "best_ms": round(min(times) * 1e3, 3),
            "median_ms": round(statistics.median(times) * 1e3, 3),
            "correct": ok,
        }), flush=True)


if __name__ == "__main__":
    main()
