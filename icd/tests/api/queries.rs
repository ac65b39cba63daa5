//! Platform and device queries, contexts and their errors.

use super::*;

#[test]
fn platform_queries() {
    let p = platform();
    let mut size = 0;
    // SAFETY: valid pointers throughout.
    unsafe {
        assert_eq!(
            clGetPlatformInfo(p, CL_PLATFORM_NAME, 0, null_mut(), &mut size),
            CL_SUCCESS
        );
        let mut name = vec![0u8; size];
        assert_eq!(
            clGetPlatformInfo(
                p,
                CL_PLATFORM_NAME,
                size,
                name.as_mut_ptr().cast(),
                null_mut()
            ),
            CL_SUCCESS
        );
        assert_eq!(&name, b"Ferrocl\0");
        // Too small a buffer: CL_INVALID_VALUE.
        assert_eq!(
            clGetPlatformInfo(p, CL_PLATFORM_NAME, 3, name.as_mut_ptr().cast(), null_mut()),
            CL_INVALID_VALUE
        );
        assert_eq!(
            clGetPlatformInfo(p, 0xdead, 0, null_mut(), &mut size),
            CL_INVALID_VALUE
        );
        let mut ver: cl_version = 0;
        assert_eq!(
            clGetPlatformInfo(
                p,
                CL_PLATFORM_NUMERIC_VERSION,
                4,
                (&mut ver as *mut cl_version).cast(),
                null_mut()
            ),
            CL_SUCCESS
        );
        assert_eq!(ver, (3 << 22) | (1 << 12), "OpenCL 3.1");
        let mut ext = vec![0u8; 2048];
        assert_eq!(
            clGetPlatformInfo(
                p,
                CL_PLATFORM_EXTENSIONS,
                2048,
                ext.as_mut_ptr().cast(),
                null_mut()
            ),
            CL_SUCCESS
        );
        assert!(String::from_utf8_lossy(&ext).contains("cl_khr_icd"));
        assert_eq!(
            clGetPlatformIDs(0, null_mut(), null_mut()),
            CL_INVALID_VALUE
        );
        // A device handle is not a platform.
        assert_eq!(
            clGetPlatformInfo(
                device() as cl_platform_id,
                CL_PLATFORM_NAME,
                0,
                null_mut(),
                &mut size
            ),
            CL_INVALID_PLATFORM
        );
    }
}

#[test]
fn device_queries() {
    let d = device();
    assert_eq!(
        device_value::<cl_device_type>(d, CL_DEVICE_TYPE),
        CL_DEVICE_TYPE_CPU as cl_device_type
    );
    assert_eq!(device_value::<cl_uint>(d, CL_DEVICE_ADDRESS_BITS), 64);
    assert_eq!(
        device_value::<usize>(d, CL_DEVICE_MAX_WORK_GROUP_SIZE),
        4096
    );
    assert_eq!(
        device_value::<cl_ulong>(d, CL_DEVICE_LOCAL_MEM_SIZE),
        256 * 1024
    );
    assert_eq!(device_value::<cl_bool>(d, CL_DEVICE_IMAGE_SUPPORT), CL_TRUE);
    assert_eq!(
        device_value::<cl_bool>(d, CL_DEVICE_NON_UNIFORM_WORK_GROUP_SUPPORT),
        CL_TRUE
    );
    assert_eq!(
        device_value::<cl_uint>(d, CL_DEVICE_MEM_BASE_ADDR_ALIGN),
        1024
    );
    assert!(device_value::<cl_uint>(d, CL_DEVICE_MAX_COMPUTE_UNITS) >= 1);
    assert_eq!(
        device_value::<cl_device_atomic_capabilities>(d, CL_DEVICE_ATOMIC_MEMORY_CAPABILITIES),
        (CL_DEVICE_ATOMIC_ORDER_RELAXED
            | CL_DEVICE_ATOMIC_ORDER_ACQ_REL
            | CL_DEVICE_ATOMIC_ORDER_SEQ_CST
            | CL_DEVICE_ATOMIC_SCOPE_WORK_GROUP
            | CL_DEVICE_ATOMIC_SCOPE_DEVICE
            | CL_DEVICE_ATOMIC_SCOPE_ALL_DEVICES) as cl_device_atomic_capabilities
    );
    let il = device_string(d, CL_DEVICE_IL_VERSION);
    assert!(
        il.starts_with("SPIR-V_1.0") && il.ends_with("SPIR-V_1.6"),
        "{il}"
    );
    let ext = device_string(d, CL_DEVICE_EXTENSIONS);
    for e in [
        "cl_khr_icd",
        "cl_khr_il_program",
        "cl_khr_fp64",
        "cl_khr_fp16",
        "cl_khr_global_int32_base_atomics",
        "cl_khr_int64_extended_atomics",
    ] {
        assert!(ext.split(' ').any(|x| x == e), "{ext}");
    }
    // Sub-groups and fp16 are on by default (subgroups.rs and half.rs check them).
    // Images are on by default (images.rs and image_kernels.rs check them).
    for e in [
        "cl_khr_image2d_from_buffer",
        "cl_khr_3d_image_writes",
        "cl_khr_depth_images",
        "cl_khr_srgb_image_writes",
    ] {
        assert!(ext.split(' ').any(|x| x == e), "{ext}");
    }
    assert!(ext.split(' ').any(|x| x == "cl_khr_subgroups"), "{ext}");
    assert_eq!(
        device_string(d, CL_DEVICE_OPENCL_C_VERSION),
        "OpenCL C 1.2 Ferrocl"
    );
    let mut size = 0;
    // SAFETY: size query only.
    unsafe {
        assert_eq!(
            clGetDeviceInfo(d, CL_DEVICE_ILS_WITH_VERSION, 0, null_mut(), &mut size),
            CL_SUCCESS
        );
        assert_eq!(size, 7 * std::mem::size_of::<cl_name_version>());
        assert_eq!(
            clGetDeviceInfo(null_mut(), CL_DEVICE_NAME, 0, null_mut(), &mut size),
            CL_INVALID_DEVICE
        );
        assert_eq!(
            clGetDeviceInfo(d, 0xffff, 0, null_mut(), &mut size),
            CL_INVALID_VALUE
        );
        let mut out = null_mut();
        assert_eq!(
            clGetDeviceIDs(platform(), CL_DEVICE_TYPE_GPU, 1, &mut out, null_mut()),
            CL_DEVICE_NOT_FOUND
        );
        // Partitioning itself is tested in sub_devices.rs.
        let props = [-1 as cl_device_partition_property, 1, 0];
        assert_eq!(
            clCreateSubDevices(d, props.as_ptr(), 0, null_mut(), null_mut()),
            CL_INVALID_VALUE
        );
        let (mut dt, mut ht) = (0, 0);
        assert_eq!(clGetDeviceAndHostTimer(d, &mut dt, &mut ht), CL_SUCCESS);
        assert!(dt > 0 && ht > 0);
    }
}

#[test]
fn context_lifecycle_and_errors() {
    let d = device();
    let mut err = 0;
    // SAFETY: valid and deliberately invalid arguments; no invalid pointer is dereferenced.
    unsafe {
        let props = [
            CL_CONTEXT_PLATFORM as cl_context_properties,
            platform() as cl_context_properties,
            0,
        ];
        let ctx = clCreateContext(props.as_ptr(), 1, &d, null(), null_mut(), &mut err);
        assert_eq!(err, CL_SUCCESS);
        let mut refs: cl_uint = 0;
        assert_eq!(clRetainContext(ctx), CL_SUCCESS);
        assert_eq!(
            clGetContextInfo(
                ctx,
                CL_CONTEXT_REFERENCE_COUNT,
                4,
                (&mut refs as *mut cl_uint).cast(),
                null_mut()
            ),
            CL_SUCCESS
        );
        assert_eq!(refs, 2);
        let mut got = [0isize; 3];
        let mut size = 0;
        assert_eq!(
            clGetContextInfo(
                ctx,
                CL_CONTEXT_PROPERTIES,
                24,
                got.as_mut_ptr().cast(),
                &mut size
            ),
            CL_SUCCESS
        );
        assert_eq!((size, got), (24, props));
        assert_eq!(clReleaseContext(ctx), CL_SUCCESS);
        assert_eq!(clReleaseContext(ctx), CL_SUCCESS);

        assert!(clCreateContext(null(), 0, &d, null(), null_mut(), &mut err).is_null());
        assert_eq!(err, CL_INVALID_VALUE);
        assert!(clCreateContext(null(), 1, null(), null(), null_mut(), &mut err).is_null());
        assert_eq!(err, CL_INVALID_VALUE);
        let bad = [
            CL_CONTEXT_PLATFORM as cl_context_properties,
            d as cl_context_properties,
            0,
        ];
        assert!(clCreateContext(bad.as_ptr(), 1, &d, null(), null_mut(), &mut err).is_null());
        assert_eq!(err, CL_INVALID_PLATFORM);
        let unknown = [0x7777isize, 1, 0];
        assert!(clCreateContext(unknown.as_ptr(), 1, &d, null(), null_mut(), &mut err).is_null());
        assert_eq!(err, CL_INVALID_PROPERTY);
        let not_dev = platform() as cl_device_id;
        assert!(clCreateContext(null(), 1, &not_dev, null(), null_mut(), &mut err).is_null());
        assert_eq!(err, CL_INVALID_DEVICE);
        assert_eq!(clReleaseContext(null_mut()), CL_INVALID_CONTEXT);
        assert_eq!(
            clGetContextInfo(
                d as cl_context,
                CL_CONTEXT_NUM_DEVICES,
                0,
                null_mut(),
                &mut size
            ),
            CL_INVALID_CONTEXT
        );
    }
}
