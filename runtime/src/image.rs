//! Image formats: the answer to `clGetSupportedImageFormats` for a context, flags and image
//! type. No device has images yet (`FERROCL_IMAGES`, feature registry), so every valid query
//! has no format; the format table, image validation and pixel conversion will live here.

use opencl_sys::*;

use crate::context::Context;
use crate::memory::check_flags;
use crate::object::CLResult;

/// The image types of the host API.
pub const IMAGE_TYPES: [cl_mem_object_type; 6] = [
    CL_MEM_OBJECT_IMAGE1D,
    CL_MEM_OBJECT_IMAGE1D_ARRAY,
    CL_MEM_OBJECT_IMAGE1D_BUFFER,
    CL_MEM_OBJECT_IMAGE2D,
    CL_MEM_OBJECT_IMAGE2D_ARRAY,
    CL_MEM_OBJECT_IMAGE3D,
];

/// The formats every device of `context` supports for `flags` and `image_type`;
/// CL_INVALID_VALUE for invalid flags or an unknown image type.
pub fn supported_formats(
    _context: &Context,
    flags: cl_mem_flags,
    image_type: cl_mem_object_type,
) -> CLResult<Vec<cl_image_format>> {
    check_flags(flags)?;
    if !IMAGE_TYPES.contains(&image_type) {
        return Err(CL_INVALID_VALUE);
    }
    // A format is supported when every device of the context supports it, and no device has
    // images yet (`CL_DEVICE_IMAGE_SUPPORT` is false): the format table comes with them.
    Ok(Vec::new())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::platform::platform;

    #[test]
    fn queries_are_checked_and_answered() {
        let c = Context::new(platform().devices.clone(), Vec::new());
        assert_eq!(
            supported_formats(&c, 0, CL_MEM_OBJECT_BUFFER).err(),
            Some(CL_INVALID_VALUE)
        );
        assert_eq!(
            supported_formats(
                &c,
                (CL_MEM_READ_ONLY | CL_MEM_WRITE_ONLY) as _,
                CL_MEM_OBJECT_IMAGE2D
            )
            .err(),
            Some(CL_INVALID_VALUE)
        );
        for ty in IMAGE_TYPES {
            assert!(
                supported_formats(&c, 0, ty).is_ok_and(|f| f.is_empty()),
                "{ty:#x}"
            );
        }
    }
}
