//! `--svm`: shared virtual memory next to buffers on each platform — a 64 MiB copy, a 64 MiB
//! fill and a triad kernel, each once on `cl_mem` buffers and once on coarse-grain SVM
//! allocations, timed by profiling events (median of the repetitions, alternating the two
//! forms so drift hits both alike).

use std::ffi::c_void;
use std::ptr;

use libloading::Library;
use opencl_sys::cl_function_types as f;
use opencl_sys::*;

use crate::cl::{Context, EventTimer, ProgramCode};
use crate::stats::median;

/// The entry points this comparison needs beyond `cl::Api`.
struct SvmApi {
    _lib: Library,
    svm_alloc: f::clSVMAlloc_t,
    svm_free: f::clSVMFree_t,
    svm_memcpy: f::clEnqueueSVMMemcpy_t,
    svm_fill: f::clEnqueueSVMMemFill_t,
    set_arg_svm: f::clSetKernelArgSVMPointer_t,
    copy_buffer: f::clEnqueueCopyBuffer_t,
    fill_buffer: f::clEnqueueFillBuffer_t,
    create_buffer: f::clCreateBuffer_t,
    release_mem: f::clReleaseMemObject_t,
    set_arg: f::clSetKernelArg_t,
    nd_range: f::clEnqueueNDRangeKernel_t,
    timer: EventTimer,
}

impl SvmApi {
    fn load() -> Result<SvmApi, String> {
        // SAFETY: the system OpenCL loader, as `cl::Api::load` opens it.
        let lib = unsafe { Library::new("libOpenCL.so.1") }.map_err(|e| e.to_string())?;
        macro_rules! sym {
            ($name:literal) => {{
                // SAFETY: the symbol has the OpenCL signature of its name.
                let s = unsafe { lib.get(concat!($name, "\0").as_bytes()) }
                    .map_err(|e| format!("{}: {e}", $name))?;
                Some(*s)
            }};
        }
        Ok(SvmApi {
            svm_alloc: sym!("clSVMAlloc"),
            svm_free: sym!("clSVMFree"),
            svm_memcpy: sym!("clEnqueueSVMMemcpy"),
            svm_fill: sym!("clEnqueueSVMMemFill"),
            set_arg_svm: sym!("clSetKernelArgSVMPointer"),
            copy_buffer: sym!("clEnqueueCopyBuffer"),
            fill_buffer: sym!("clEnqueueFillBuffer"),
            create_buffer: sym!("clCreateBuffer"),
            release_mem: sym!("clReleaseMemObject"),
            set_arg: sym!("clSetKernelArg"),
            nd_range: sym!("clEnqueueNDRangeKernel"),
            timer: EventTimer::load(&lib)?,
            _lib: lib,
        })
    }
}

const BYTES: usize = 64 << 20;
const TRIAD: &str =
    "kernel void triad(global float *a, global const float *b, global const float *c, float s) {
    size_t i = get_global_id(0);
    a[i] = b[i] + s * c[i];
}";

/// One row: (name, buffer ms, SVM ms).
type Row = (&'static str, f64, f64);

fn measure(ctx: &Context, api: &SvmApi, reps: usize) -> Result<Vec<Row>, String> {
    let (context, queue) = ctx.raw_handles();
    let mut err = 0;
    let n = BYTES / 4;
    let mut bufs = Vec::new();
    let mut svm = Vec::new();
    // SAFETY (every call below): valid context, queue and kernel; buffers and allocations of
    // BYTES bytes, released at the end.
    unsafe {
        for _ in 0..3 {
            let b = api.create_buffer.expect("loaded")(
                context,
                CL_MEM_READ_WRITE,
                BYTES,
                ptr::null_mut(),
                &mut err,
            );
            if err != CL_SUCCESS {
                return Err(format!("clCreateBuffer: error {err}"));
            }
            bufs.push(b);
            let p = api.svm_alloc.expect("loaded")(context, CL_MEM_READ_WRITE, BYTES, 0);
            if p.is_null() {
                return Err("clSVMAlloc returned NULL (no coarse-grain SVM)".into());
            }
            svm.push(p);
        }
        let (program, _) = ctx.build(&ProgramCode::Source(TRIAD.into()), "")?;
        let kernel = ctx.kernel(&program, "triad")?;
        let k = kernel.raw_handle();
        let s = 3.0f32;
        let pattern = [0x3f80_0000u32; 4];
        // b = 0 on both sides, so the triad computes a = 0 + 3 * 1 = 3 (c is filled with ones).
        let zero = [0u32; 4];
        let mut e = ptr::null_mut();
        let st = api.svm_fill.expect("loaded")(
            queue,
            svm[1],
            zero.as_ptr().cast(),
            16,
            BYTES,
            0,
            ptr::null(),
            &mut e,
        );
        api.timer.elapsed_ms(e, st, "clEnqueueSVMMemFill")?;
        let st = api.fill_buffer.expect("loaded")(
            queue,
            bufs[1],
            zero.as_ptr().cast(),
            16,
            0,
            BYTES,
            0,
            ptr::null(),
            &mut e,
        );
        api.timer.elapsed_ms(e, st, "clEnqueueFillBuffer")?;
        // The kernel's arguments are set before each call (buffers, then SVM pointers).
        let triad = |e: &mut cl_event| {
            api.nd_range.expect("loaded")(
                queue,
                k,
                1,
                ptr::null(),
                &n,
                ptr::null(),
                0,
                ptr::null(),
                e,
            )
        };
        let mut times: Vec<[Vec<f64>; 2]> = vec![[Vec::new(), Vec::new()]; 3];
        for _ in 0..reps.max(1) {
            // Copy: b → a.
            let st = api.copy_buffer.expect("loaded")(
                queue,
                bufs[1],
                bufs[0],
                0,
                0,
                BYTES,
                0,
                ptr::null(),
                &mut e,
            );
            times[0][0].push(api.timer.elapsed_ms(e, st, "clEnqueueCopyBuffer")?);
            let st = api.svm_memcpy.expect("loaded")(
                queue,
                CL_FALSE,
                svm[0],
                svm[1],
                BYTES,
                0,
                ptr::null(),
                &mut e,
            );
            times[0][1].push(api.timer.elapsed_ms(e, st, "clEnqueueSVMMemcpy")?);
            // Fill: a 16-byte pattern over c.
            let st = api.fill_buffer.expect("loaded")(
                queue,
                bufs[2],
                pattern.as_ptr().cast(),
                16,
                0,
                BYTES,
                0,
                ptr::null(),
                &mut e,
            );
            times[1][0].push(api.timer.elapsed_ms(e, st, "clEnqueueFillBuffer")?);
            let st = api.svm_fill.expect("loaded")(
                queue,
                svm[2],
                pattern.as_ptr().cast(),
                16,
                BYTES,
                0,
                ptr::null(),
                &mut e,
            );
            times[1][1].push(api.timer.elapsed_ms(e, st, "clEnqueueSVMMemFill")?);
            // Triad on buffers, then on SVM pointers.
            for (i, b) in bufs.iter().enumerate() {
                let st = api.set_arg.expect("loaded")(
                    k,
                    i as cl_uint,
                    std::mem::size_of::<cl_mem>(),
                    (b as *const cl_mem).cast(),
                );
                if st != CL_SUCCESS {
                    return Err(format!("clSetKernelArg: error {st}"));
                }
            }
            api.set_arg.expect("loaded")(k, 3, 4, (&s as *const f32).cast());
            let st = triad(&mut e);
            times[2][0].push(api.timer.elapsed_ms(e, st, "triad on buffers")?);
            for (i, p) in svm.iter().enumerate() {
                let st = api.set_arg_svm.expect("loaded")(k, i as cl_uint, *p as *const c_void);
                if st != CL_SUCCESS {
                    return Err(format!("clSetKernelArgSVMPointer: error {st}"));
                }
            }
            let st = triad(&mut e);
            times[2][1].push(api.timer.elapsed_ms(e, st, "triad on SVM")?);
        }
        // The triad's result on SVM (a = b + 3c with b = 0, c = 1).
        let a = std::slice::from_raw_parts(svm[0] as *const f32, n);
        if a.iter().step_by(4099).any(|&v| v != 3.0) {
            return Err(format!("triad on SVM computed {} instead of 3", a[0]));
        }
        for b in bufs {
            api.release_mem.expect("loaded")(b);
        }
        for p in svm {
            api.svm_free.expect("loaded")(context, p);
        }
        let names = ["copy 64 MiB", "fill 64 MiB", "triad 16M floats"];
        Ok(names
            .iter()
            .zip(times.iter_mut())
            .map(|(name, [buf, sv])| {
                (
                    *name,
                    median(buf).unwrap_or(f64::NAN),
                    median(sv).unwrap_or(f64::NAN),
                )
            })
            .collect())
    }
}

/// Runs the comparison on every platform and prints the table.
pub fn run(platforms: &[(&str, &Context)], reps: usize) {
    let api = match SvmApi::load() {
        Ok(a) => a,
        Err(e) => {
            println!("SVM comparison unavailable: {e}");
            return;
        }
    };
    println!("\nSVM next to buffers, median of {reps} (profiling events, ms; ratio SVM / buffer)");
    println!(
        "{:<10} {:<18} {:>10} {:>10} {:>7}",
        "platform", "operation", "buffer", "SVM", "ratio"
    );
    for (label, ctx) in platforms {
        match measure(ctx, &api, reps) {
            Ok(rows) => {
                for (name, buf, sv) in rows {
                    println!(
                        "{label:<10} {name:<18} {buf:>10.3} {sv:>10.3} {:>7.2}",
                        sv / buf
                    );
                }
            }
            Err(e) => println!("{label:<10} unsupported or failed: {e}"),
        }
    }
}
