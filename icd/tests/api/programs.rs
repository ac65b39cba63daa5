//! Programs: IL and source builds with their logs and errors, unsupported features, compile,
//! link and binaries.

use super::*;

#[test]
fn program_from_il_errors_and_build_log() {
    let env = Env::new(0);
    let mut err = 0;
    // SAFETY: valid handles; byte buffers sized as passed.
    unsafe {
        let junk = [1u8, 2, 3, 4, 5, 6, 7, 8];
        assert!(
            clCreateProgramWithIL(env.ctx, junk.as_ptr().cast(), junk.len(), &mut err).is_null()
        );
        assert_eq!(err, CL_INVALID_VALUE);
        assert!(clCreateProgramWithIL(env.ctx, null(), 0, &mut err).is_null());
        assert_eq!(err, CL_INVALID_VALUE);

        let bad = spirv("physical32");
        let p = clCreateProgramWithIL(env.ctx, bad.as_ptr().cast(), bad.len(), &mut err);
        assert_eq!(err, CL_SUCCESS);
        let mut il_size = 0;
        assert_eq!(
            clGetProgramInfo(p, CL_PROGRAM_IL, 0, null_mut(), &mut il_size),
            CL_SUCCESS
        );
        assert_eq!(il_size, bad.len());
        assert_eq!(
            clBuildProgram(p, 0, null(), null(), null(), null_mut()),
            CL_BUILD_PROGRAM_FAILURE
        );
        let log = build_log(p, env.dev);
        assert!(log.contains("Physical32"), "{log}");
        let mut status: cl_build_status = 0;
        assert_eq!(
            clGetProgramBuildInfo(
                p,
                env.dev,
                CL_PROGRAM_BUILD_STATUS,
                4,
                (&mut status as *mut cl_build_status).cast(),
                null_mut()
            ),
            CL_SUCCESS
        );
        assert_eq!(status, CL_BUILD_ERROR);
        let name = CString::new("k").unwrap();
        assert!(clCreateKernel(p, name.as_ptr(), &mut err).is_null());
        assert_eq!(err, CL_INVALID_PROGRAM_EXECUTABLE);
        let mut n = 0usize;
        assert_eq!(
            clGetProgramInfo(
                p,
                CL_PROGRAM_NUM_KERNELS,
                8,
                (&mut n as *mut usize).cast(),
                null_mut()
            ),
            CL_INVALID_PROGRAM_EXECUTABLE
        );
        let opt = CString::new("-cl-no-such-option").unwrap();
        assert_eq!(
            clBuildProgram(p, 0, null(), opt.as_ptr(), null(), null_mut()),
            CL_INVALID_BUILD_OPTIONS
        );
        // Options the CTS passes to IL programs are accepted (preprocessor ones ignored).
        let ok = CString::new(
            "-cl-std=CL3.0 -D FOO=1 -I /tmp -cl-kernel-arg-info -cl-denorms-are-zero -w",
        )
        .unwrap();
        assert_eq!(
            clBuildProgram(p, 0, null(), ok.as_ptr(), null(), null_mut()),
            CL_BUILD_PROGRAM_FAILURE
        );
        assert_eq!(clReleaseProgram(p), CL_SUCCESS);
        // (A garbage pointer cannot be tested through the loader: ocl-icd reads the dispatch
        // table from the handle before we see it. Handles of the wrong type are detected.)
        assert_eq!(clReleaseProgram(env.ctx as cl_program), CL_INVALID_PROGRAM);
    }
}

#[test]
fn program_from_source_reports_compiler_errors() {
    let env = Env::new(0);
    let mut err = 0;
    let src = CString::new("kernel void k(global int *p) { p[0] = undeclared; }").unwrap();
    let ptrs = [src.as_ptr()];
    // SAFETY: valid handles and strings.
    unsafe {
        let p = clCreateProgramWithSource(env.ctx, 1, ptrs.as_ptr(), null(), &mut err);
        assert_eq!(err, CL_SUCCESS);
        let compiler: cl_bool = device_value(env.dev, CL_DEVICE_COMPILER_AVAILABLE);
        let r = clBuildProgram(p, 1, &env.dev, null(), null(), null_mut());
        if compiler == CL_TRUE {
            assert_eq!(r, CL_BUILD_PROGRAM_FAILURE);
            let log = build_log(p, env.dev);
            assert!(log.contains("undeclared"), "{log}");
        } else {
            assert_eq!(r, CL_COMPILER_NOT_AVAILABLE);
        }
        assert_eq!(clReleaseProgram(p), CL_SUCCESS);
        assert!(clCreateProgramWithSource(env.ctx, 0, ptrs.as_ptr(), null(), &mut err).is_null());
        assert_eq!(err, CL_INVALID_VALUE);
    }
}

#[test]
fn unsupported_features_give_spec_errors() {
    let env = Env::new(0);
    let mut err = 0;
    // SAFETY: the functions only validate and fail; nothing is dereferenced.
    unsafe {
        // A host queue cannot be the default device queue (device queues themselves:
        // icd/tests/device_enqueue/).
        assert_eq!(
            clSetDefaultDeviceCommandQueue(env.ctx, env.dev, env.q),
            CL_INVALID_COMMAND_QUEUE
        );
        // A buffer is no pipe (pipes themselves: icd/tests/pipes.rs).
        let buf = clCreateBuffer(env.ctx, CL_MEM_READ_WRITE, 4, null_mut(), &mut err);
        assert_eq!(err, CL_SUCCESS);
        let mut packet = 0u32;
        assert_eq!(
            clGetPipeInfo(
                buf,
                CL_PIPE_PACKET_SIZE,
                4,
                (&mut packet as *mut u32).cast(),
                null_mut()
            ),
            CL_INVALID_MEM_OBJECT
        );
        assert_eq!(clReleaseMemObject(buf), CL_SUCCESS);
    }
}

#[test]
fn compile_link_and_binaries() {
    let env = Env::new(0);
    let mut err = 0;
    let il = spirv("store");
    // SAFETY: valid handles; buffers sized as passed.
    unsafe {
        let p = clCreateProgramWithIL(env.ctx, il.as_ptr().cast(), il.len(), &mut err);
        assert_eq!(err, CL_SUCCESS);
        assert_eq!(
            clCompileProgram(p, 0, null(), null(), 0, null(), null(), null(), null_mut()),
            CL_SUCCESS
        );
        let mut bt: cl_program_binary_type = 0;
        assert_eq!(
            clGetProgramBuildInfo(
                p,
                env.dev,
                CL_PROGRAM_BINARY_TYPE,
                4,
                (&mut bt as *mut cl_program_binary_type).cast(),
                null_mut()
            ),
            CL_SUCCESS
        );
        assert_eq!(
            bt,
            CL_PROGRAM_BINARY_TYPE_COMPILED_OBJECT as cl_program_binary_type
        );

        // The same object twice defines its kernel twice: a link failure with a log.
        let two = [p, p];
        let linked = clLinkProgram(
            env.ctx,
            0,
            null(),
            null(),
            2,
            two.as_ptr(),
            null(),
            null_mut(),
            &mut err,
        );
        assert_eq!(err, CL_LINK_PROGRAM_FAILURE);
        assert!(!linked.is_null());
        let log = build_log(linked, env.dev);
        assert!(log.contains("and again by input program 1"), "{log}");
        assert_eq!(clReleaseProgram(linked), CL_SUCCESS);
        // One input links into an executable.
        let one = clLinkProgram(
            env.ctx,
            0,
            null(),
            null(),
            1,
            &p,
            null(),
            null_mut(),
            &mut err,
        );
        assert!(!one.is_null());
        assert_eq!(err, CL_SUCCESS);
        assert_eq!(clReleaseProgram(one), CL_SUCCESS);

        // CL_PROGRAM_BINARIES gives SPIR-V back, with the binary type recorded: a binary
        // loaded again reports the type it was saved with (CTS compiler program_binary_type).
        let binary_of = |prog: cl_program| -> Vec<u8> {
            let mut size = 0usize;
            assert_eq!(
                clGetProgramInfo(
                    prog,
                    CL_PROGRAM_BINARY_SIZES,
                    8,
                    (&mut size as *mut usize).cast(),
                    null_mut()
                ),
                CL_SUCCESS
            );
            let mut bin = vec![0u8; size];
            let mut ptrs = [bin.as_mut_ptr()];
            assert_eq!(
                clGetProgramInfo(
                    prog,
                    CL_PROGRAM_BINARIES,
                    8,
                    ptrs.as_mut_ptr().cast(),
                    null_mut()
                ),
                CL_SUCCESS
            );
            bin
        };
        let type_of = |prog: cl_program| -> cl_program_binary_type {
            let mut bt: cl_program_binary_type = 0;
            assert_eq!(
                clGetProgramBuildInfo(
                    prog,
                    env.dev,
                    CL_PROGRAM_BINARY_TYPE,
                    std::mem::size_of::<cl_program_binary_type>(),
                    (&mut bt as *mut cl_program_binary_type).cast(),
                    null_mut()
                ),
                CL_SUCCESS
            );
            bt
        };
        let load = |bin: &[u8]| -> cl_program {
            let (mut st, mut err) = (1, 1);
            let bp = [bin.as_ptr()];
            let prog = clCreateProgramWithBinary(
                env.ctx,
                1,
                &env.dev,
                &bin.len(),
                bp.as_ptr(),
                &mut st,
                &mut err,
            );
            assert_eq!((err, st), (CL_SUCCESS, CL_SUCCESS));
            prog
        };
        let library_options = CString::new("-create-library").unwrap();
        let library = clLinkProgram(
            env.ctx,
            0,
            null(),
            library_options.as_ptr(),
            1,
            &p,
            null(),
            null_mut(),
            &mut err,
        );
        assert_eq!(err, CL_SUCCESS);
        let executable = clLinkProgram(
            env.ctx,
            0,
            null(),
            null(),
            1,
            &p,
            null(),
            null_mut(),
            &mut err,
        );
        assert_eq!(err, CL_SUCCESS);
        for (prog, ty) in [
            (p, CL_PROGRAM_BINARY_TYPE_COMPILED_OBJECT),
            (library, CL_PROGRAM_BINARY_TYPE_LIBRARY),
            (executable, CL_PROGRAM_BINARY_TYPE_EXECUTABLE),
        ] {
            let bin = binary_of(prog);
            assert_eq!(bin[..4], il[..4], "a SPIR-V module");
            let from_bin = load(&bin);
            assert_eq!(type_of(from_bin), ty as cl_program_binary_type);
            if ty == CL_PROGRAM_BINARY_TYPE_EXECUTABLE {
                // An executable binary still needs clBuildProgram, and builds.
                assert_eq!(
                    clBuildProgram(from_bin, 0, null(), null(), null(), null_mut()),
                    CL_SUCCESS
                );
                assert_eq!(
                    type_of(from_bin),
                    CL_PROGRAM_BINARY_TYPE_EXECUTABLE as cl_program_binary_type
                );
            } else {
                // Objects and libraries loaded from binaries link.
                let linked = clLinkProgram(
                    env.ctx,
                    0,
                    null(),
                    null(),
                    1,
                    &from_bin,
                    null(),
                    null_mut(),
                    &mut err,
                );
                assert_eq!(err, CL_SUCCESS, "linking a reloaded {ty:#x}");
                assert_eq!(clReleaseProgram(linked), CL_SUCCESS);
            }
            assert_eq!(clReleaseProgram(from_bin), CL_SUCCESS);
        }
        // Plain SPIR-V is accepted as a binary too: a compiled object.
        let from_il = load(&il);
        assert_eq!(
            type_of(from_il),
            CL_PROGRAM_BINARY_TYPE_COMPILED_OBJECT as cl_program_binary_type
        );
        assert_eq!(clReleaseProgram(from_il), CL_SUCCESS);
        assert_eq!(clReleaseProgram(library), CL_SUCCESS);
        assert_eq!(clReleaseProgram(executable), CL_SUCCESS);
        let mut st = 1;
        let junk = [0u8; 16];
        let jp = [junk.as_ptr()];
        let jl = 16usize;
        assert!(clCreateProgramWithBinary(
            env.ctx,
            1,
            &env.dev,
            &jl,
            jp.as_ptr(),
            &mut st,
            &mut err
        )
        .is_null());
        assert_eq!((err, st), (CL_INVALID_BINARY, CL_INVALID_BINARY));
        assert_eq!(clReleaseProgram(p), CL_SUCCESS);
    }
}
