//! Writes to a level in kernels (and to levels the image lacks), the kernel-side level queries
//! (`get_image_num_mip_levels`, per-level sizes and sampler-less level reads from hand-written
//! SPIR-V), and the sampler's mip properties.

use super::sampling::{kernel, program, release_sampler, sampler, spatial};
use super::*;

/// Runs write kernel `k(image, lod, input)` over level `lod` of `shape`.
fn write_with_lod<T>(env: &Env, k: &Kernel, m: cl_mem, shape: &Shape, lod: i32, input: &[T]) {
    let size = shape.level_region(lod.clamp(0, shape.levels as i32 - 1) as usize);
    let buf = env.buffer(input);
    arg(k, 0, &m);
    arg(k, 1, &lod);
    arg_buf(k, 2, &buf);
    let dims = match shape.ty {
        CL_MEM_OBJECT_IMAGE1D => 1,
        CL_MEM_OBJECT_IMAGE1D_ARRAY | CL_MEM_OBJECT_IMAGE2D => 2,
        _ => 3,
    };
    env.run(k, &size[..dims], None, None);
}

#[test]
fn writes_reach_the_level_they_name() {
    let Some(env) = env() else { return };
    let program = program(&env);
    for (n, shape) in shapes().iter().enumerate() {
        let name = match shape.ty {
            CL_MEM_OBJECT_IMAGE1D => "write_1d",
            CL_MEM_OBJECT_IMAGE1D_ARRAY => "write_1d_array",
            CL_MEM_OBJECT_IMAGE2D => "write_2d",
            CL_MEM_OBJECT_IMAGE2D_ARRAY => "write_2d_array",
            _ => "write_3d",
        };
        let k = kernel(&program, name);
        let m = image(&env, &RGBA_FLOAT, shape);
        let mut model = level_data(shape, 100 + n as u32);
        upload(&env, m, shape, &model);
        for l in [1, shape.levels - 1, 0] {
            let fresh = level_data(shape, 200 + (n * 10 + l) as u32).swap_remove(l);
            write_with_lod(&env, &k, m, shape, l as i32, &fresh);
            model[l] = fresh;
            for (j, want) in model.iter().enumerate() {
                let got = read_level(
                    &env,
                    m,
                    shape.origin(j, [0; 3]),
                    shape.level_region(j),
                    want.len() * TEXEL,
                )
                .unwrap();
                assert_eq!(
                    to_texels(&got),
                    *want,
                    "{shape:?}: level {j} after a kernel wrote level {l}"
                );
            }
        }
        // A level the image does not have (undefined): nothing is written, nothing breaks.
        let junk = vec![[7.0f32; 4]; shape.level_texels(0)];
        for bad in [shape.levels as i32, -1] {
            let buf = env.buffer(&junk);
            arg(&k, 0, &m);
            arg(&k, 1, &bad);
            arg_buf(&k, 2, &buf);
            let size = shape.level_region(0);
            let dims = spatial(shape.ty)
                + usize::from(matches!(
                    shape.ty,
                    CL_MEM_OBJECT_IMAGE1D_ARRAY | CL_MEM_OBJECT_IMAGE2D_ARRAY
                ));
            env.run(&k, &size[..dims], None, None);
        }
        for (j, want) in model.iter().enumerate() {
            let got = read_level(
                &env,
                m,
                shape.origin(j, [0; 3]),
                shape.level_region(j),
                want.len() * TEXEL,
            )
            .unwrap();
            assert_eq!(
                to_texels(&got),
                *want,
                "{shape:?}: level {j} after writes to levels it lacks"
            );
        }
        release(m);
    }
    // Integer and depth images.
    let shape = Shape::new(CL_MEM_OBJECT_IMAGE2D, [9, 4, 0, 0], 3);
    let format = cl_image_format {
        image_channel_order: CL_RGBA,
        image_channel_data_type: CL_UNSIGNED_INT16,
    };
    let m = image(&env, &format, &shape);
    let k = kernel(&program, "write_ui");
    let values: Vec<[u32; 4]> = (0..shape.level_texels(2))
        .map(|i| [i as u32, 70000, 3, 65535])
        .collect();
    write_with_lod(&env, &k, m, &shape, 2, &values);
    let got = read_level(
        &env,
        m,
        shape.origin(2, [0; 3]),
        shape.level_region(2),
        values.len() * 8,
    )
    .unwrap();
    let want: Vec<u8> = values
        .iter()
        .flat_map(|v| {
            v.map(|c| c.min(65535) as u16)
                .into_iter()
                .flat_map(u16::to_le_bytes)
        })
        .collect();
    assert_eq!(got, want, "uint16 level 2 (saturated)");
    release(m);
    let depth = cl_image_format {
        image_channel_order: CL_DEPTH,
        image_channel_data_type: CL_FLOAT,
    };
    let m = image(&env, &depth, &shape);
    let k = kernel(&program, "write_depth");
    let values: Vec<f32> = (0..shape.level_texels(1))
        .map(|i| i as f32 * 0.125)
        .collect();
    write_with_lod(&env, &k, m, &shape, 1, &values);
    let got = read_level(
        &env,
        m,
        shape.origin(1, [0; 3]),
        shape.level_region(1),
        values.len() * 4,
    )
    .unwrap();
    assert_eq!(got, floats(&values), "depth level 1");
    release(m);
}

#[test]
fn kernel_queries_answer_for_the_image_and_its_levels() {
    let Some(env) = env() else { return };
    let program = program(&env);
    let k = kernel(&program, "queries");
    let a = image(
        &env,
        &RGBA_FLOAT,
        &Shape::new(CL_MEM_OBJECT_IMAGE3D, [6, 4, 9, 0], 4),
    );
    let b = image(
        &env,
        &RGBA_FLOAT,
        &Shape::new(CL_MEM_OBJECT_IMAGE2D, [5, 5, 0, 0], 0),
    );
    let c = image(
        &env,
        &RGBA_FLOAT,
        &Shape::new(CL_MEM_OBJECT_IMAGE1D_ARRAY, [12, 0, 0, 3], 2),
    );
    let depth = cl_image_format {
        image_channel_order: CL_DEPTH,
        image_channel_data_type: CL_FLOAT,
    };
    let d = image(
        &env,
        &depth,
        &Shape::new(CL_MEM_OBJECT_IMAGE2D, [8, 8, 0, 0], 4),
    );
    let out = env.buffer(&[0i32; 8]);
    for (i, m) in [a, b, c, d].iter().enumerate() {
        arg(&k, i as cl_uint, m);
    }
    arg_buf(&k, 4, &out);
    env.run(&k, &[1], None, None);
    // An image without mipmaps has one level; sizes are level 0's.
    assert_eq!(env.read(&out, 8), [4, 1, 2, 4, 6, 4, 9, 3]);
    for m in [a, b, c, d] {
        release(m);
    }

    // Hand-written SPIR-V: a sampler-less read of a level (OpImageRead with Lod, which the
    // environment spec allows with cl_khr_mipmap_image; spirv-val's core rules do not, so
    // the module is only assembled) and each level's size (OpImageQuerySizeLod).
    let il = assemble(LEVEL_SPIRV);
    let p = check(
        cl(Program::create_from_il(&env.context, &il)),
        "clCreateProgramWithIL",
    );
    let c_options = std::ffi::CString::new("").unwrap();
    opencl3::program::build_program(p.get(), env.context.devices(), &c_options, None, null_mut())
        .unwrap_or_else(|e| {
            let log = p.get_build_log(env.device.id()).unwrap_or_default();
            panic!("clBuildProgram: {e}\n{log}")
        });
    let read = kernel(&p, "read_lod");
    let size = kernel(&p, "size_lod");
    let shape = Shape::new(CL_MEM_OBJECT_IMAGE2D, [13, 6, 0, 0], 4);
    let m = image(&env, &RGBA_FLOAT, &shape);
    let data = level_data(&shape, 300);
    upload(&env, m, &shape, &data);
    for l in 0..shape.levels as u32 + 1 {
        let [w, h, _] = shape.level_size((l as usize).min(shape.levels - 1));
        let out = env.buffer(&vec![[0.0f32; 4]; w * h]);
        arg(&read, 0, &m);
        arg(&read, 1, &l);
        arg_buf(&read, 2, &out);
        env.run(&read, &[w, h], None, None);
        // A level past the last (undefined) reads the last.
        assert_eq!(
            env.read(&out, w * h),
            data[(l as usize).min(shape.levels - 1)],
            "sampler-less read of level {l}"
        );
        let sizes = env.buffer(&[0u32; 2]);
        arg(&size, 0, &m);
        arg(&size, 1, &l);
        arg_buf(&size, 2, &sizes);
        env.run(&size, &[1], None, None);
        assert_eq!(
            env.read(&sizes, 2),
            [w as u32, h as u32],
            "size of level {l}"
        );
    }
    release(m);
}

const LEVEL_SPIRV: &str = r#"
               OpCapability Addresses
               OpCapability Kernel
               OpCapability Int64
               OpCapability ImageBasic
               OpCapability ImageMipmap
               OpMemoryModel Physical64 OpenCL
               OpEntryPoint Kernel %read_lod "read_lod" %gid %gsize
               OpEntryPoint Kernel %size_lod "size_lod"
               OpDecorate %gid BuiltIn GlobalInvocationId
               OpDecorate %gid Constant
               OpDecorate %gsize BuiltIn GlobalSize
               OpDecorate %gsize Constant
       %void = OpTypeVoid
       %uint = OpTypeInt 32 0
      %ulong = OpTypeInt 64 0
      %float = OpTypeFloat 32
     %v2uint = OpTypeVector %uint 2
    %v3ulong = OpTypeVector %ulong 3
    %v4float = OpTypeVector %float 4
        %img = OpTypeImage %void 2D 0 0 0 0 Unknown ReadOnly
  %ptr_in_v3 = OpTypePointer Input %v3ulong
  %ptr_g_v4f = OpTypePointer CrossWorkgroup %v4float
   %ptr_g_u = OpTypePointer CrossWorkgroup %uint
        %gid = OpVariable %ptr_in_v3 Input
      %gsize = OpVariable %ptr_in_v3 Input
    %ulong_1 = OpConstant %ulong 1
    %fn_read = OpTypeFunction %void %img %uint %ptr_g_v4f
    %fn_size = OpTypeFunction %void %img %uint %ptr_g_u
   %read_lod = OpFunction %void None %fn_read
          %i = OpFunctionParameter %img
        %lod = OpFunctionParameter %uint
        %out = OpFunctionParameter %ptr_g_v4f
          %e = OpLabel
         %g3 = OpLoad %v3ulong %gid
         %s3 = OpLoad %v3ulong %gsize
         %gx = OpCompositeExtract %ulong %g3 0
         %gy = OpCompositeExtract %ulong %g3 1
         %sx = OpCompositeExtract %ulong %s3 0
          %x = OpUConvert %uint %gx
          %y = OpUConvert %uint %gy
      %coord = OpCompositeConstruct %v2uint %x %y
      %texel = OpImageRead %v4float %i %coord Lod %lod
        %row = OpIMul %ulong %gy %sx
         %at = OpIAdd %ulong %row %gx
        %dst = OpInBoundsPtrAccessChain %ptr_g_v4f %out %at
               OpStore %dst %texel
               OpReturn
               OpFunctionEnd
   %size_lod = OpFunction %void None %fn_size
         %i2 = OpFunctionParameter %img
       %lod2 = OpFunctionParameter %uint
       %out2 = OpFunctionParameter %ptr_g_u
         %e2 = OpLabel
         %sz = OpImageQuerySizeLod %v2uint %i2 %lod2
          %w = OpCompositeExtract %uint %sz 0
          %h = OpCompositeExtract %uint %sz 1
               OpStore %out2 %w
         %p1 = OpInBoundsPtrAccessChain %ptr_g_u %out2 %ulong_1
               OpStore %p1 %h
               OpReturn
               OpFunctionEnd
"#;

fn assemble(text: &str) -> Vec<u8> {
    let dir = profile_dir().join("ferrocl-test-spirv");
    std::fs::create_dir_all(&dir).expect("create spirv dir");
    let src = dir.join(format!("mip-levels.{}.spvasm", std::process::id()));
    let spv = src.with_extension("spv");
    std::fs::write(&src, text).expect("write .spvasm");
    let out = std::process::Command::new("spirv-as")
        .args(["--target-env", "spv1.0"])
        .arg(&src)
        .arg("-o")
        .arg(&spv)
        .output()
        .expect("run spirv-as (spirv-tools)");
    assert!(
        out.status.success(),
        "spirv-as: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let bytes = std::fs::read(&spv).expect("read .spv");
    let _ = std::fs::remove_file(&src);
    let _ = std::fs::remove_file(&spv);
    bytes
}

#[test]
fn samplers_answer_their_mip_properties() {
    let Some(env) = env() else { return };
    let info = |s: cl_sampler, name: cl_sampler_info| -> (u32, usize) {
        let mut v = 0u32;
        let mut size = 0usize;
        // SAFETY: the mip properties are 4-byte values.
        let r = unsafe { clGetSamplerInfo(s, name, 4, (&mut v as *mut u32).cast(), &mut size) };
        assert_eq!(r, CL_SUCCESS);
        (v, size)
    };
    let plain = sampler(&env, false, false, None);
    assert_eq!(
        info(plain, CL_SAMPLER_MIP_FILTER_MODE_KHR as _),
        (CL_FILTER_NEAREST, 4)
    );
    assert_eq!(
        info(plain, CL_SAMPLER_LOD_MIN_KHR as _),
        (0.0f32.to_bits(), 4)
    );
    assert_eq!(
        info(plain, CL_SAMPLER_LOD_MAX_KHR as _),
        (f32::MAX.to_bits(), 4)
    );
    release_sampler(plain);
    let third = 1.0f32 / 3.0;
    let s = sampler(&env, true, true, Some((true, third, 7.25)));
    assert_eq!(
        info(s, CL_SAMPLER_MIP_FILTER_MODE_KHR as _).0,
        CL_FILTER_LINEAR
    );
    assert_eq!(info(s, CL_SAMPLER_LOD_MIN_KHR as _).0, third.to_bits());
    assert_eq!(info(s, CL_SAMPLER_LOD_MAX_KHR as _).0, 7.25f32.to_bits());
    release_sampler(s);
    // Bad values: an unknown mip filter, a NaN bound, a repeated property.
    for props in [
        [CL_SAMPLER_MIP_FILTER_MODE_KHR, 0x1234, 0, 0, 0],
        [CL_SAMPLER_LOD_MIN_KHR, f32::NAN.to_bits() as _, 0, 0, 0],
        [CL_SAMPLER_LOD_MAX_KHR, 0, CL_SAMPLER_LOD_MAX_KHR, 0, 0],
    ] {
        let mut err = 0;
        // SAFETY: valid context, zero-terminated list.
        let s =
            unsafe { clCreateSamplerWithProperties(env.context.get(), props.as_ptr(), &mut err) };
        assert!(s.is_null());
        assert_eq!(err, CL_INVALID_VALUE, "{props:?}");
    }
}
