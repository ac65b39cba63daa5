//! Images on the host: the format table (which channel order and data type pairs are valid,
//! which the device supports for each image type and access), the answer to
//! `clGetSupportedImageFormats`, an image's geometry ([`ImageDesc`]: sizes, pitches, element
//! size, and how pixel origins and regions map to bytes), its mip levels (cl_khr_mipmap_image:
//! [`ImageDesc::level`], [`ImageDesc::at_level`]) and every creation rule of `clCreateImage`
//! ([`ImageDesc::new`]). The memory object itself is a [`crate::memory::Mem`] of kind `Image`;
//! texel conversion is `pixel.rs`.

#![allow(non_upper_case_globals)] // CL_Rx, CL_sRGBA, … are the spec's names.

use std::sync::Arc;

use ferrocl_frontend::ImageType;
use opencl_sys::*;

use crate::context::Context;
use crate::features::FeatureId;
use crate::memory::{check_flags, Mem, MemKind, Rect};
use crate::object::CLResult;
use crate::pixel::{channel_bytes, channel_slots, is_packed, is_srgb};

/// The image types of the host API.
pub const IMAGE_TYPES: [cl_mem_object_type; 6] = [
    CL_MEM_OBJECT_IMAGE1D,
    CL_MEM_OBJECT_IMAGE1D_ARRAY,
    CL_MEM_OBJECT_IMAGE1D_BUFFER,
    CL_MEM_OBJECT_IMAGE2D,
    CL_MEM_OBJECT_IMAGE2D_ARRAY,
    CL_MEM_OBJECT_IMAGE3D,
];

/// Signed and unsigned normalised 8/16, signed and unsigned integer 8/16/32, half, float.
const ALL_TYPES: &[cl_channel_type] = &[
    CL_SNORM_INT8,
    CL_SNORM_INT16,
    CL_UNORM_INT8,
    CL_UNORM_INT16,
    CL_SIGNED_INT8,
    CL_SIGNED_INT16,
    CL_SIGNED_INT32,
    CL_UNSIGNED_INT8,
    CL_UNSIGNED_INT16,
    CL_UNSIGNED_INT32,
    CL_HALF_FLOAT,
    CL_FLOAT,
];
const EIGHT_BIT_TYPES: &[cl_channel_type] = &[
    CL_UNORM_INT8,
    CL_SNORM_INT8,
    CL_SIGNED_INT8,
    CL_UNSIGNED_INT8,
];
const FLOAT_TYPES: &[cl_channel_type] = &[
    CL_UNORM_INT8,
    CL_UNORM_INT16,
    CL_SNORM_INT8,
    CL_SNORM_INT16,
    CL_HALF_FLOAT,
    CL_FLOAT,
];
const PACKED_RGB_TYPES: &[cl_channel_type] =
    &[CL_UNORM_SHORT_565, CL_UNORM_SHORT_555, CL_UNORM_INT_101010];

/// Every valid (channel order, data types) of the API spec's image format descriptor rules
/// (packed RGB types only with RGB/RGBx, 10-10-10-2 only with RGBA, BGRA/ARGB/ABGR only with
/// 8-bit types, intensity and luminance only with float-read types, sRGB only with UNORM_INT8,
/// depth with UNORM_INT16 and FLOAT), each of which this device stores. The order lists them
/// in `clGetSupportedImageFormats`.
const FORMAT_TABLE: &[(cl_channel_order, &[cl_channel_type])] = &[
    (CL_RGBA, ALL_TYPES),
    (CL_BGRA, EIGHT_BIT_TYPES),
    (CL_R, ALL_TYPES),
    (CL_RG, ALL_TYPES),
    (CL_A, ALL_TYPES),
    (CL_RA, ALL_TYPES),
    (CL_Rx, ALL_TYPES),
    (CL_RGx, ALL_TYPES),
    (CL_ARGB, EIGHT_BIT_TYPES),
    (CL_ABGR, EIGHT_BIT_TYPES),
    (CL_INTENSITY, FLOAT_TYPES),
    (CL_LUMINANCE, FLOAT_TYPES),
    (CL_RGB, PACKED_RGB_TYPES),
    (CL_RGBx, PACKED_RGB_TYPES),
    (CL_RGBA, &[CL_UNORM_INT_101010_2]),
    (CL_sRGBA, &[CL_UNORM_INT8]),
    (CL_sBGRA, &[CL_UNORM_INT8]),
    (CL_sRGB, &[CL_UNORM_INT8]),
    (CL_sRGBx, &[CL_UNORM_INT8]),
    (CL_DEPTH, &[CL_UNORM_INT16, CL_FLOAT]),
];

/// Whether (order, type) is a valid format descriptor.
pub fn is_valid_format(format: &cl_image_format) -> bool {
    FORMAT_TABLE.iter().any(|(order, types)| {
        *order == format.image_channel_order && types.contains(&format.image_channel_data_type)
    })
}

/// `CL_IMAGE_ELEMENT_SIZE` of a valid format; CL_INVALID_IMAGE_FORMAT_DESCRIPTOR otherwise.
pub fn element_size(format: &cl_image_format) -> CLResult<usize> {
    if !is_valid_format(format) {
        return Err(CL_INVALID_IMAGE_FORMAT_DESCRIPTOR);
    }
    let ty = format.image_channel_data_type;
    let bytes = channel_bytes(ty).ok_or(CL_INVALID_IMAGE_FORMAT_DESCRIPTOR)?;
    if is_packed(ty) {
        return Ok(bytes);
    }
    let channels =
        channel_slots(format.image_channel_order).ok_or(CL_INVALID_IMAGE_FORMAT_DESCRIPTOR)?;
    Ok(bytes * channels)
}

/// What the devices' kernels can do with images, which narrows the formats offered.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct KernelImageSupport {
    /// `cl_khr_depth_images`: depth formats exist only with it.
    pub depth: bool,
    /// `cl_khr_3d_image_writes`: 3D images a kernel may write exist only with it.
    pub writes_3d: bool,
    /// `cl_khr_srgb_image_writes`: sRGB images a kernel may write exist only with it.
    pub writes_srgb: bool,
    /// `cl_khr_mipmap_image`: images with more than one mip level exist only with it.
    pub mipmaps: bool,
}

impl KernelImageSupport {
    /// What every device of `context` supports.
    pub fn of(context: &Context) -> Self {
        let all = |id: FeatureId| context.devices.iter().all(|d| d.config.has(id));
        KernelImageSupport {
            depth: all(FeatureId::ImageKernels),
            writes_3d: all(FeatureId::ImageKernels),
            writes_srgb: all(FeatureId::ImageKernels),
            mipmaps: all(FeatureId::ImageMipmaps),
        }
    }
}

/// Whether access `flags` let kernels write the image: write-only, read-write (also the
/// default when no access flag is given) and kernel read-and-write.
fn kernel_may_write(flags: cl_mem_flags) -> bool {
    let read_only = CL_MEM_READ_ONLY as cl_mem_flags;
    let kernel_rw = CL_MEM_KERNEL_READ_AND_WRITE as cl_mem_flags;
    flags & read_only == 0 || flags & kernel_rw != 0
}

/// Whether the device supports `format` for `image_type` with access `flags`: depth images are
/// 2D and 2D arrays only and need cl_khr_depth_images; a kernel may write 3D images only with
/// cl_khr_3d_image_writes and sRGB images only with cl_khr_srgb_image_writes.
fn supports(
    format: &cl_image_format,
    image_type: cl_mem_object_type,
    flags: cl_mem_flags,
    kernels: KernelImageSupport,
) -> bool {
    if format.image_channel_order == CL_DEPTH
        && (!kernels.depth
            || !matches!(
                image_type,
                CL_MEM_OBJECT_IMAGE2D | CL_MEM_OBJECT_IMAGE2D_ARRAY
            ))
    {
        return false;
    }
    let unwritable = (image_type == CL_MEM_OBJECT_IMAGE3D && !kernels.writes_3d)
        || (is_srgb(format.image_channel_order) && !kernels.writes_srgb);
    !(unwritable && kernel_may_write(flags))
}

/// Whether every device of `context` has images (`CL_DEVICE_IMAGE_SUPPORT`).
pub fn context_has_images(context: &Context) -> bool {
    !context.devices.is_empty() && context.devices.iter().all(|d| d.config.images.is_some())
}

/// The formats every device of `context` supports for `flags` and `image_type`;
/// CL_INVALID_VALUE for invalid flags or an unknown image type. A context without image
/// support has none.
pub fn supported_formats(
    context: &Context,
    flags: cl_mem_flags,
    image_type: cl_mem_object_type,
) -> CLResult<Vec<cl_image_format>> {
    check_flags(flags)?;
    if !IMAGE_TYPES.contains(&image_type) {
        return Err(CL_INVALID_VALUE);
    }
    if !context_has_images(context) {
        return Ok(Vec::new());
    }
    Ok(FORMAT_TABLE
        .iter()
        .flat_map(|(order, types)| {
            types.iter().map(|&ty| cl_image_format {
                image_channel_order: *order,
                image_channel_data_type: ty,
            })
        })
        .filter(|f| supports(f, image_type, flags, KernelImageSupport::of(context)))
        .collect())
}

/// The SPIR-V `ImageChannelOrder` of a CL channel order (what `OpImageQueryOrder` returns):
/// both enumerations list the orders in the same sequence.
pub fn spirv_channel_order(order: cl_channel_order) -> u32 {
    order - CL_R
}

/// The SPIR-V `ImageChannelDataType` of a CL channel data type (`OpImageQueryFormat`).
pub fn spirv_channel_data_type(ty: cl_channel_type) -> u32 {
    ty - CL_SNORM_INT8
}

/// An image's geometry and format; pitches are in bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ImageDesc {
    pub image_type: cl_mem_object_type,
    pub format: FormatKey,
    pub element_size: usize,
    pub width: usize,
    /// 0 for 1D types (as `CL_IMAGE_HEIGHT` reports).
    pub height: usize,
    /// 0 except for 3D images.
    pub depth: usize,
    /// 0 except for arrays.
    pub array_size: usize,
    pub row_pitch: usize,
    /// 0 for 1D and 2D images.
    pub slice_pitch: usize,
    /// `CL_IMAGE_NUM_MIP_LEVELS` as created (0 or 1: one level); 0 in a level's view.
    pub num_mip_levels: u32,
    /// Bytes from the image's first byte to this description's pixel (0, 0, 0): 0 except in
    /// the view of a mip level past the first ([`ImageDesc::level`]).
    pub level_offset: usize,
}

/// The origin component that names the mip level of an image command on a mipmapped image of
/// `image_type` (API spec, "Specifying Mipmap Levels to Image Operations"): the one after the
/// image's coordinates — origin[3] for 2D arrays and 3D images, so those origins have four
/// components.
pub fn mip_level_coordinate(image_type: cl_mem_object_type) -> Option<usize> {
    match image_type {
        CL_MEM_OBJECT_IMAGE1D => Some(1),
        CL_MEM_OBJECT_IMAGE1D_ARRAY | CL_MEM_OBJECT_IMAGE2D => Some(2),
        CL_MEM_OBJECT_IMAGE2D_ARRAY | CL_MEM_OBJECT_IMAGE3D => Some(3),
        _ => None,
    }
}

/// `cl_image_format` with equality.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FormatKey {
    pub order: cl_channel_order,
    pub data_type: cl_channel_type,
}

impl FormatKey {
    pub fn cl(self) -> cl_image_format {
        cl_image_format {
            image_channel_order: self.order,
            image_channel_data_type: self.data_type,
        }
    }
}

/// What the application asks `clCreateImage` for (the `cl_image_desc` with its handle
/// resolved).
#[derive(Clone)]
pub struct ImageRequest {
    pub image_type: cl_mem_object_type,
    pub width: usize,
    pub height: usize,
    pub depth: usize,
    pub array_size: usize,
    pub row_pitch: usize,
    pub slice_pitch: usize,
    pub num_mip_levels: u32,
    pub num_samples: u32,
    /// `mem_object`: the buffer or image the new image views.
    pub source: Option<Arc<Mem>>,
}

/// The device limits of `context` (the smallest of its devices'); CL_INVALID_OPERATION when a
/// device has no images.
fn limits(context: &Context) -> CLResult<crate::config::ImageLimits> {
    let mut all = context.devices.iter().map(|d| d.config.images);
    let first = all.next().flatten().ok_or(CL_INVALID_OPERATION)?;
    all.try_fold(first, |acc, l| {
        let l = l.ok_or(CL_INVALID_OPERATION)?;
        Ok(crate::config::ImageLimits::min(acc, l))
    })
}

impl ImageDesc {
    /// Checks a `clCreateImage` request (every rule of the image descriptor and the format
    /// descriptor) and settles pitches; `host_ptr` is whether the application gave one.
    pub fn new(
        context: &Context,
        format: Option<&cl_image_format>,
        request: &ImageRequest,
        host_ptr: bool,
    ) -> CLResult<ImageDesc> {
        let limits = limits(context)?;
        let format = format.ok_or(CL_INVALID_IMAGE_FORMAT_DESCRIPTOR)?;
        let element = element_size(format)?;
        let r = request;
        let ty = r.image_type;
        if !IMAGE_TYPES.contains(&ty) || r.num_samples != 0 {
            return Err(CL_INVALID_IMAGE_DESCRIPTOR);
        }
        // Mip levels (cl_khr_mipmap_image): not for 1D buffer images or images over another
        // object's memory, and never with application memory (the levels are packed one
        // after another in the image's own storage).
        let mipmapped = r.num_mip_levels > 1;
        if mipmapped {
            if !KernelImageSupport::of(context).mipmaps
                || ty == CL_MEM_OBJECT_IMAGE1D_BUFFER
                || r.source.is_some()
            {
                return Err(CL_INVALID_IMAGE_DESCRIPTOR);
            }
            if host_ptr {
                return Err(CL_INVALID_HOST_PTR);
            }
        }
        // What mem_object may be: a buffer for 1D buffer and 2D images, a 2D image for 2D;
        // never a pipe.
        let source_image = r.source.as_ref().and_then(|m| m.image().copied());
        let allowed = match (&r.source, source_image) {
            (None, _) => ty != CL_MEM_OBJECT_IMAGE1D_BUFFER,
            (Some(m), None) if m.pipe().is_some() => false,
            (Some(_), None) => matches!(ty, CL_MEM_OBJECT_IMAGE1D_BUFFER | CL_MEM_OBJECT_IMAGE2D),
            (Some(_), Some(s)) => {
                ty == CL_MEM_OBJECT_IMAGE2D && s.image_type == CL_MEM_OBJECT_IMAGE2D
            }
        };
        if !allowed {
            return Err(CL_INVALID_IMAGE_DESCRIPTOR);
        }
        let (max_w, max_h, max_d) = match ty {
            CL_MEM_OBJECT_IMAGE3D => (
                limits.image3d_max[0],
                limits.image3d_max[1],
                limits.image3d_max[2],
            ),
            CL_MEM_OBJECT_IMAGE1D_BUFFER => (limits.max_buffer_size, 1, 1),
            _ => (limits.image2d_max[0], limits.image2d_max[1], 1),
        };
        let uses_height = matches!(
            ty,
            CL_MEM_OBJECT_IMAGE2D | CL_MEM_OBJECT_IMAGE2D_ARRAY | CL_MEM_OBJECT_IMAGE3D
        );
        let is_array = matches!(
            ty,
            CL_MEM_OBJECT_IMAGE1D_ARRAY | CL_MEM_OBJECT_IMAGE2D_ARRAY
        );
        let height = if uses_height { r.height } else { 1 };
        let depth = if ty == CL_MEM_OBJECT_IMAGE3D {
            r.depth
        } else {
            1
        };
        let array_size = if is_array { r.array_size } else { 1 };
        if !(1..=max_w).contains(&r.width)
            || !(1..=max_h).contains(&height)
            || !(1..=max_d).contains(&depth)
            || !(1..=limits.max_array_size).contains(&array_size)
        {
            return Err(CL_INVALID_IMAGE_SIZE);
        }
        // Each level halves every dimension down to 1: the largest gives the level count.
        if mipmapped {
            let largest = r.width.max(if uses_height { height } else { 1 }).max(depth);
            let possible = largest.ilog2() + 1;
            if r.num_mip_levels > possible
                || r.num_mip_levels as usize > ferrocl_codegen::MAX_MIP_LEVELS
            {
                return Err(CL_INVALID_IMAGE_DESCRIPTOR);
            }
        }
        // Pitches: given only with a host pointer, for an image over a buffer, or (equal to
        // it) for a view of another image, whose pitch is the default.
        let tight_row = r.width * element;
        let row_pitch_allowed = host_ptr || r.source.is_some();
        if !row_pitch_allowed && r.row_pitch != 0 {
            return Err(CL_INVALID_IMAGE_DESCRIPTOR);
        }
        let row_pitch = match (r.row_pitch, source_image) {
            (0, Some(s)) => s.row_pitch,
            (0, None) => tight_row,
            (p, _) => p,
        };
        if row_pitch < tight_row || !row_pitch.is_multiple_of(element) {
            return Err(CL_INVALID_IMAGE_DESCRIPTOR);
        }
        let has_slices = matches!(
            ty,
            CL_MEM_OBJECT_IMAGE1D_ARRAY | CL_MEM_OBJECT_IMAGE2D_ARRAY | CL_MEM_OBJECT_IMAGE3D
        );
        // A slice pitch needs a host pointer; a 1D or 2D image has no slices, so one given with
        // its host pointer or buffer is ignored (the CTS passes them).
        if !host_ptr && r.slice_pitch != 0 && (has_slices || r.source.is_none()) {
            return Err(CL_INVALID_IMAGE_DESCRIPTOR);
        }
        let rows_per_slice = if ty == CL_MEM_OBJECT_IMAGE1D_ARRAY {
            1
        } else {
            height
        };
        let tight_slice = row_pitch
            .checked_mul(rows_per_slice)
            .ok_or(CL_INVALID_IMAGE_SIZE)?;
        let slice_pitch = if !has_slices {
            0
        } else if r.slice_pitch == 0 {
            tight_slice
        } else {
            r.slice_pitch
        };
        if has_slices && (slice_pitch < tight_slice || !slice_pitch.is_multiple_of(row_pitch)) {
            return Err(CL_INVALID_IMAGE_DESCRIPTOR);
        }
        let desc = ImageDesc {
            image_type: ty,
            format: FormatKey {
                order: format.image_channel_order,
                data_type: format.image_channel_data_type,
            },
            element_size: element,
            width: r.width,
            height: if uses_height { height } else { 0 },
            depth: if ty == CL_MEM_OBJECT_IMAGE3D {
                depth
            } else {
                0
            },
            array_size: if is_array { array_size } else { 0 },
            row_pitch,
            slice_pitch,
            num_mip_levels: r.num_mip_levels,
            level_offset: 0,
        };
        let size = desc.size().ok_or(CL_INVALID_IMAGE_SIZE)?;
        if size as u64 > context.max_mem_alloc_size() {
            return Err(CL_INVALID_IMAGE_SIZE);
        }
        if let Some(source) = &r.source {
            desc.check_source(source, &limits)?;
        }
        // The spec's condition is the format alone ("no devices in context that support
        // image_format"): what kernels may do with it under `flags` narrows the format list,
        // not creation (the CTS creates 3D images read-write on devices without 3D writes).
        let most_permissive = CL_MEM_READ_ONLY as cl_mem_flags;
        if !supports(format, ty, most_permissive, KernelImageSupport::of(context)) {
            return Err(CL_IMAGE_FORMAT_NOT_SUPPORTED);
        }
        Ok(desc)
    }

    /// The rules for an image over another object's memory.
    fn check_source(&self, source: &Mem, limits: &crate::config::ImageLimits) -> CLResult<()> {
        match source.image() {
            None => {
                // A 2D image's rows must start at the pitch alignment; a buffer given as
                // application memory must start at the base address alignment (both in pixels).
                if self.image_type == CL_MEM_OBJECT_IMAGE2D
                    && !self
                        .row_pitch
                        .is_multiple_of(limits.pitch_alignment * self.element_size)
                {
                    return Err(CL_INVALID_IMAGE_FORMAT_DESCRIPTOR);
                }
                // A pixel's alignment is its size rounded up to a power of two (3-byte sRGB
                // pixels align to 4), as the CTS computes it.
                let pixel_alignment = self.element_size.next_power_of_two();
                if !(source.address() as usize)
                    .is_multiple_of(limits.base_address_alignment * pixel_alignment)
                {
                    return Err(CL_INVALID_IMAGE_FORMAT_DESCRIPTOR);
                }
                if self.size().is_none_or(|s| s > source.size) {
                    return Err(CL_INVALID_IMAGE_SIZE);
                }
            }
            Some(other) => {
                // A view of a 2D image in a compatible channel order: same everything else.
                let compatible = |a: cl_channel_order, b: cl_channel_order| {
                    a == b
                        || matches!(
                            (a, b),
                            (CL_sBGRA, CL_BGRA)
                                | (CL_BGRA, CL_sBGRA)
                                | (CL_sRGBA, CL_RGBA)
                                | (CL_RGBA, CL_sRGBA)
                                | (CL_sRGB, CL_RGB)
                                | (CL_RGB, CL_sRGB)
                                | (CL_sRGBx, CL_RGBx)
                                | (CL_RGBx, CL_sRGBx)
                                | (CL_DEPTH, CL_R)
                        )
                };
                if self.format.data_type != other.format.data_type
                    || !compatible(self.format.order, other.format.order)
                {
                    return Err(CL_INVALID_IMAGE_FORMAT_DESCRIPTOR);
                }
                if (self.width, self.height, self.row_pitch)
                    != (other.width, other.height, other.row_pitch)
                {
                    return Err(CL_INVALID_IMAGE_DESCRIPTOR);
                }
            }
        }
        Ok(())
    }

    /// The legacy `CL_IMAGE_*` sizes of a 1.1 `clCreateImage2D`/`3D` call, whose pitch errors
    /// are CL_INVALID_IMAGE_SIZE.
    pub fn legacy_error(e: cl_int) -> cl_int {
        if e == CL_INVALID_IMAGE_DESCRIPTOR {
            CL_INVALID_IMAGE_SIZE
        } else {
            e
        }
    }

    /// Bytes the image occupies (`CL_MEM_SIZE`, and what USE_HOST_PTR memory must hold):
    /// every mip level's.
    pub fn size(&self) -> Option<usize> {
        if self.is_mipmapped() {
            return (0..self.levels()).try_fold(0usize, |sum, l| {
                sum.checked_add(self.level_shape(l).single_level_size()?)
            });
        }
        self.single_level_size()
    }

    /// Whether the image has more than one mip level.
    pub fn is_mipmapped(&self) -> bool {
        self.num_mip_levels > 1
    }

    /// Whether a kernel argument declared as `declared` (None: an image type OpenCL C has not)
    /// may take this image: the same object type, and a depth type exactly for a depth
    /// channel order. The kernel reads and writes the image as its argument's type says.
    pub fn fits_argument(&self, declared: Option<ImageType>) -> bool {
        // cl_khr_gl_depth_images' CL_DEPTH_STENCIL, which opencl-sys does not name.
        const CL_DEPTH_STENCIL: cl_channel_order = 0x10BE;
        let depth = matches!(self.format.order, CL_DEPTH | CL_DEPTH_STENCIL);
        let own = match (self.image_type, depth) {
            (CL_MEM_OBJECT_IMAGE1D, false) => ImageType::Image1d,
            (CL_MEM_OBJECT_IMAGE1D_ARRAY, false) => ImageType::Image1dArray,
            (CL_MEM_OBJECT_IMAGE1D_BUFFER, false) => ImageType::Image1dBuffer,
            (CL_MEM_OBJECT_IMAGE2D, false) => ImageType::Image2d,
            (CL_MEM_OBJECT_IMAGE2D_ARRAY, false) => ImageType::Image2dArray,
            (CL_MEM_OBJECT_IMAGE2D, true) => ImageType::Image2dDepth,
            (CL_MEM_OBJECT_IMAGE2D_ARRAY, true) => ImageType::Image2dArrayDepth,
            (CL_MEM_OBJECT_IMAGE3D, false) => ImageType::Image3d,
            _ => return false,
        };
        declared == Some(own)
    }

    /// How many mip levels the image has (1 for an image without mipmaps).
    pub fn levels(&self) -> u32 {
        self.num_mip_levels.max(1)
    }

    /// Mip level `l` (below [`ImageDesc::levels`]) described as an image of its own, with
    /// [`ImageDesc::level_offset`] saying where it starts: each level halves the width,
    /// height and depth of the one before (rounding down, never below 1; the array size
    /// stays), is tightly packed, and follows the previous level in memory. Level 0 of an
    /// image without mipmaps is the image.
    pub fn level(&self, l: u32) -> ImageDesc {
        if !self.is_mipmapped() {
            return *self;
        }
        // Sizes fit: the whole image's size was checked at creation.
        let before: usize = (0..l)
            .map(|k| self.level_shape(k).single_level_size().unwrap_or(0))
            .sum();
        ImageDesc {
            level_offset: self.level_offset + before,
            ..self.level_shape(l)
        }
    }

    /// Level `l`'s sizes and pitches ([`ImageDesc::level`] without its offset).
    fn level_shape(&self, l: u32) -> ImageDesc {
        let shrink = |v: usize| if v == 0 { 0 } else { (v >> l).max(1) };
        let (width, height, depth) = (shrink(self.width), shrink(self.height), shrink(self.depth));
        let row_pitch = width * self.element_size;
        let slice_pitch = match self.image_type {
            CL_MEM_OBJECT_IMAGE1D_ARRAY => row_pitch,
            CL_MEM_OBJECT_IMAGE2D_ARRAY | CL_MEM_OBJECT_IMAGE3D => row_pitch * height,
            _ => 0,
        };
        ImageDesc {
            width,
            height,
            depth,
            row_pitch,
            slice_pitch,
            num_mip_levels: 0,
            ..*self
        }
    }

    /// The level an image command's `origin` names (its component after the image's
    /// coordinates, for mipmapped images only) and the origin within that level;
    /// CL_INVALID_MIP_LEVEL for a level the image does not have. `origin[3]` is read only for
    /// mipmapped 2D arrays and 3D images.
    pub fn at_level(&self, origin: [usize; 4]) -> CLResult<(ImageDesc, [usize; 3])> {
        let mut o = [origin[0], origin[1], origin[2]];
        if !self.is_mipmapped() {
            return Ok((*self, o));
        }
        let k = mip_level_coordinate(self.image_type).ok_or(CL_INVALID_VALUE)?;
        let level = origin[k];
        if level >= self.levels() as usize {
            return Err(CL_INVALID_MIP_LEVEL);
        }
        if k < 3 {
            o[k] = 0;
        }
        Ok((self.level(level as u32), o))
    }

    /// Bytes of one level (the whole image without mipmaps).
    fn single_level_size(&self) -> Option<usize> {
        match self.image_type {
            CL_MEM_OBJECT_IMAGE1D | CL_MEM_OBJECT_IMAGE1D_BUFFER => Some(self.row_pitch),
            CL_MEM_OBJECT_IMAGE2D => self.row_pitch.checked_mul(self.height),
            CL_MEM_OBJECT_IMAGE3D => self.slice_pitch.checked_mul(self.depth),
            _ => self.slice_pitch.checked_mul(self.array_size),
        }
    }

    /// The extent in each coordinate of an origin/region: pixels, then rows or array layers,
    /// then slices or layers.
    pub fn extent(&self) -> [usize; 3] {
        match self.image_type {
            CL_MEM_OBJECT_IMAGE1D_ARRAY => [self.width, self.array_size, 1],
            CL_MEM_OBJECT_IMAGE2D => [self.width, self.height, 1],
            CL_MEM_OBJECT_IMAGE2D_ARRAY => [self.width, self.height, self.array_size],
            CL_MEM_OBJECT_IMAGE3D => [self.width, self.height, self.depth],
            _ => [self.width, 1, 1],
        }
    }

    /// Bytes between consecutive values of coordinate 1 and of coordinate 2 (a 1D array's
    /// layers are its slices).
    pub fn steps(&self) -> (usize, usize) {
        match self.image_type {
            CL_MEM_OBJECT_IMAGE1D_ARRAY => (self.slice_pitch, self.slice_pitch),
            _ => (self.row_pitch, self.slice_pitch),
        }
    }

    /// CL_INVALID_VALUE unless `region` is non-empty, uses only the coordinates of the type
    /// (the others: origin 0, region 1) and lies inside the image.
    pub fn check_region(&self, origin: [usize; 3], region: [usize; 3]) -> CLResult<()> {
        let extent = self.extent();
        for k in 0..3 {
            let end = origin[k].checked_add(region[k]).ok_or(CL_INVALID_VALUE)?;
            if region[k] == 0 || end > extent[k] {
                return Err(CL_INVALID_VALUE);
            }
        }
        Ok(())
    }

    /// Byte offset of pixel `origin` (from the image's first byte).
    pub fn offset_of(&self, origin: [usize; 3]) -> usize {
        let (y, z) = self.steps();
        self.level_offset + origin[0] * self.element_size + origin[1] * y + origin[2] * z
    }

    /// Whether the slice pitch is meaningful for the type (arrays and 3D).
    pub fn has_slices(&self) -> bool {
        matches!(
            self.image_type,
            CL_MEM_OBJECT_IMAGE1D_ARRAY | CL_MEM_OBJECT_IMAGE2D_ARRAY | CL_MEM_OBJECT_IMAGE3D
        )
    }

    /// The image side of a [`Rect`] copy: byte origin (from the image's first byte) and
    /// steps, region in bytes.
    pub fn rect_side(
        &self,
        origin: [usize; 3],
        region: [usize; 3],
    ) -> ([usize; 3], usize, usize, [usize; 3]) {
        let (y, z) = self.steps();
        (
            [
                self.level_offset + origin[0] * self.element_size,
                origin[1],
                origin[2],
            ],
            y,
            z,
            [region[0] * self.element_size, region[1], region[2]],
        )
    }

    /// Host memory laid out as the application describes it for a read or write of `region`:
    /// (row step, slice step) in bytes, defaults filled; CL_INVALID_VALUE for pitches too small
    /// or a slice pitch on a 1D or 2D image.
    pub fn host_steps(
        &self,
        region: [usize; 3],
        row_pitch: usize,
        slice_pitch: usize,
    ) -> CLResult<(usize, usize)> {
        let tight_row = region[0] * self.element_size;
        let row = if row_pitch == 0 { tight_row } else { row_pitch };
        if row < tight_row {
            return Err(CL_INVALID_VALUE);
        }
        if !self.has_slices() {
            if slice_pitch != 0 {
                return Err(CL_INVALID_VALUE);
            }
            return Ok((row, row.checked_mul(region[1]).ok_or(CL_INVALID_VALUE)?));
        }
        let rows = if self.image_type == CL_MEM_OBJECT_IMAGE1D_ARRAY {
            1
        } else {
            region[1]
        };
        let tight_slice = row.checked_mul(rows).ok_or(CL_INVALID_VALUE)?;
        let slice = if slice_pitch == 0 {
            tight_slice
        } else {
            slice_pitch
        };
        if slice < tight_slice {
            return Err(CL_INVALID_VALUE);
        }
        Ok(if self.image_type == CL_MEM_OBJECT_IMAGE1D_ARRAY {
            (slice, slice)
        } else {
            (row, slice)
        })
    }
}

/// One side of a byte rectangle: origin (bytes, then rows or layers, then slices or layers),
/// row step and slice step in bytes.
pub type RectSide = ([usize; 3], usize, usize);

/// A byte rectangle between two sides; `region` in bytes for the first coordinate.
pub fn rect(src: RectSide, dst: RectSide, region: [usize; 3]) -> Rect {
    Rect {
        region,
        src_origin: src.0,
        src_row_pitch: src.1,
        src_slice_pitch: src.2,
        dst_origin: dst.0,
        dst_row_pitch: dst.1,
        dst_slice_pitch: dst.2,
    }
}

/// Whether a memory object is an image (for the commands that want one or the other).
pub fn is_image(mem: &Mem) -> bool {
    matches!(mem.kind, MemKind::Image { .. })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::platform::platform;

    fn fmt(order: u32, ty: u32) -> cl_image_format {
        cl_image_format {
            image_channel_order: order,
            image_channel_data_type: ty,
        }
    }

    #[test]
    fn element_sizes_follow_the_spec_table() {
        for (order, ty, size) in [
            (CL_RGBA, CL_UNORM_INT8, 4),
            (CL_RGBA, CL_FLOAT, 16),
            (CL_RG, CL_HALF_FLOAT, 4),
            (CL_R, CL_SIGNED_INT32, 4),
            (CL_Rx, CL_UNORM_INT16, 2),
            (CL_RGx, CL_UNSIGNED_INT8, 2),
            (CL_RGB, CL_UNORM_SHORT_565, 2),
            (CL_RGBx, CL_UNORM_INT_101010, 4),
            (CL_RGBA, CL_UNORM_INT_101010_2, 4),
            (CL_sRGBA, CL_UNORM_INT8, 4),
            (CL_sRGB, CL_UNORM_INT8, 3),
            (CL_sRGBx, CL_UNORM_INT8, 4),
            (CL_DEPTH, CL_FLOAT, 4),
            (CL_INTENSITY, CL_HALF_FLOAT, 2),
            (CL_ABGR, CL_SNORM_INT8, 4),
        ] {
            assert_eq!(
                element_size(&fmt(order, ty)),
                Ok(size),
                "{order:#x} {ty:#x}"
            );
        }
        for (order, ty) in [
            (CL_RGB, CL_UNORM_INT8),
            (CL_BGRA, CL_FLOAT),
            (CL_INTENSITY, CL_SIGNED_INT8),
            (CL_sRGBA, CL_UNORM_INT16),
            (CL_R, CL_UNORM_SHORT_565),
            (CL_RG, CL_UNORM_INT_101010_2),
            (CL_DEPTH, CL_UNORM_INT8),
            (0x10BE, CL_FLOAT), // CL_DEPTH_STENCIL (cl_khr_gl_depth_images)
            (0, CL_FLOAT),
            (CL_R, 0),
        ] {
            assert_eq!(
                element_size(&fmt(order, ty)),
                Err(CL_INVALID_IMAGE_FORMAT_DESCRIPTOR),
                "{order:#x} {ty:#x}"
            );
        }
    }

    #[test]
    fn every_table_entry_converts() {
        for (order, types) in FORMAT_TABLE {
            for &ty in *types {
                let size = element_size(&fmt(*order, ty)).unwrap();
                let color = match crate::pixel::color_kind(ty) {
                    crate::pixel::ColorKind::Float => crate::pixel::Color::Float([0.5; 4]),
                    crate::pixel::ColorKind::Int => crate::pixel::Color::Int([3; 4]),
                    crate::pixel::ColorKind::Uint => crate::pixel::Color::Uint([3; 4]),
                };
                let bytes = crate::pixel::encode(*order, ty, color).unwrap();
                assert_eq!(bytes.len(), size, "{order:#x} {ty:#x}");
                assert!(crate::pixel::decode(*order, ty, &bytes).is_some());
            }
        }
    }

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
        let on = context_has_images(&c);
        for ty in IMAGE_TYPES {
            let formats = supported_formats(&c, 0, ty).unwrap();
            assert_eq!(formats.is_empty(), !on, "{ty:#x}");
        }
    }

    #[test]
    fn support_depends_on_type_access_and_kernel_extensions() {
        let none = KernelImageSupport::default();
        let all = KernelImageSupport {
            depth: true,
            writes_3d: true,
            writes_srgb: true,
            mipmaps: true,
        };
        let ro = CL_MEM_READ_ONLY as cl_mem_flags;
        let wo = CL_MEM_WRITE_ONLY as cl_mem_flags;
        let depth = fmt(CL_DEPTH, CL_FLOAT);
        assert!(supports(&depth, CL_MEM_OBJECT_IMAGE2D, 0, all));
        assert!(supports(&depth, CL_MEM_OBJECT_IMAGE2D_ARRAY, ro, all));
        assert!(!supports(&depth, CL_MEM_OBJECT_IMAGE3D, ro, all));
        assert!(!supports(&depth, CL_MEM_OBJECT_IMAGE2D, ro, none));
        let rgba = fmt(CL_RGBA, CL_UNORM_INT8);
        assert!(supports(&rgba, CL_MEM_OBJECT_IMAGE3D, ro, none));
        for flags in [
            0,
            wo,
            CL_MEM_READ_WRITE as _,
            CL_MEM_KERNEL_READ_AND_WRITE as _,
        ] {
            assert!(
                !supports(&rgba, CL_MEM_OBJECT_IMAGE3D, flags, none),
                "{flags:#x}"
            );
            assert!(
                supports(&rgba, CL_MEM_OBJECT_IMAGE3D, flags, all),
                "{flags:#x}"
            );
            assert!(
                supports(&rgba, CL_MEM_OBJECT_IMAGE2D, flags, none),
                "{flags:#x}"
            );
        }
        let srgb = fmt(CL_sRGBA, CL_UNORM_INT8);
        assert!(supports(&srgb, CL_MEM_OBJECT_IMAGE2D, ro, none));
        assert!(!supports(&srgb, CL_MEM_OBJECT_IMAGE2D, 0, none));
        assert!(supports(&srgb, CL_MEM_OBJECT_IMAGE2D, wo, all));
    }

    fn image_context() -> std::sync::Arc<Context> {
        let settings = crate::settings::Settings::parse(
            |k| (k == "FERROCL_IMAGES").then(|| "on".to_owned()),
            |w| panic!("{w}"),
        );
        Context::new(vec![crate::platform::test_device(&settings)], Vec::new())
    }

    fn request(image_type: u32, size: [usize; 4], pitches: [usize; 2]) -> ImageRequest {
        ImageRequest {
            image_type,
            width: size[0],
            height: size[1],
            depth: size[2],
            array_size: size[3],
            row_pitch: pitches[0],
            slice_pitch: pitches[1],
            num_mip_levels: 0,
            num_samples: 0,
            source: None,
        }
    }

    #[test]
    fn descriptors_are_validated_and_pitches_settled() {
        let c = image_context();
        let rgba = fmt(CL_RGBA, CL_UNORM_INT8);
        let new = |r: &ImageRequest, host: bool| ImageDesc::new(&c, Some(&rgba), r, host);
        // Tight pitches by default; unused sizes read 0.
        let d = new(
            &request(CL_MEM_OBJECT_IMAGE2D_ARRAY, [3, 2, 9, 4], [0, 0]),
            false,
        )
        .unwrap();
        assert_eq!(
            (d.row_pitch, d.slice_pitch, d.depth, d.array_size),
            (12, 24, 0, 4)
        );
        assert_eq!(d.size(), Some(96));
        let d = new(
            &request(CL_MEM_OBJECT_IMAGE1D_ARRAY, [3, 9, 0, 4], [0, 0]),
            false,
        )
        .unwrap();
        assert_eq!((d.height, d.row_pitch, d.slice_pitch), (0, 12, 12));
        // The application's pitches with a host pointer; rules on them.
        let d = new(
            &request(CL_MEM_OBJECT_IMAGE3D, [3, 2, 2, 0], [16, 48]),
            true,
        )
        .unwrap();
        assert_eq!((d.row_pitch, d.slice_pitch, d.size()), (16, 48, Some(96)));
        for (pitches, host) in [
            ([16, 0], false),
            ([0, 48], false),
            ([8, 0], true),
            ([14, 0], true),
            ([16, 40], true),
            ([16, 36], true),
        ] {
            assert_eq!(
                new(&request(CL_MEM_OBJECT_IMAGE3D, [3, 2, 2, 0], pitches), host),
                Err(CL_INVALID_IMAGE_DESCRIPTOR),
                "{pitches:?} {host}"
            );
        }
        // Sizes against the device limits.
        for (ty, size) in [
            (CL_MEM_OBJECT_IMAGE2D, [0, 1, 0, 0]),
            (CL_MEM_OBJECT_IMAGE2D, [16385, 1, 0, 0]),
            (CL_MEM_OBJECT_IMAGE3D, [1, 1, 2049, 0]),
            (CL_MEM_OBJECT_IMAGE2D_ARRAY, [1, 1, 0, 2049]),
        ] {
            assert_eq!(
                new(&request(ty, size, [0, 0]), false),
                Err(CL_INVALID_IMAGE_SIZE)
            );
        }
        // Descriptor fields that must be zero, and a 1D buffer image without its buffer.
        let mut r = request(CL_MEM_OBJECT_IMAGE2D, [1, 1, 0, 0], [0, 0]);
        r.num_samples = 1;
        assert_eq!(new(&r, false), Err(CL_INVALID_IMAGE_DESCRIPTOR));
        assert_eq!(
            new(
                &request(CL_MEM_OBJECT_IMAGE1D_BUFFER, [1, 0, 0, 0], [0, 0]),
                false
            ),
            Err(CL_INVALID_IMAGE_DESCRIPTOR)
        );
        assert_eq!(
            ImageDesc::new(
                &c,
                None,
                &request(CL_MEM_OBJECT_IMAGE2D, [1, 1, 0, 0], [0, 0]),
                false
            ),
            Err(CL_INVALID_IMAGE_FORMAT_DESCRIPTOR)
        );
        // Without images (FERROCL_IMAGES=off) the context refuses them.
        let plain = Context::new(
            vec![crate::platform::test_device(
                &crate::settings::Settings::parse(
                    |k| (k == "FERROCL_IMAGES").then(|| "off".to_owned()),
                    |w| panic!("{w}"),
                ),
            )],
            Vec::new(),
        );
        assert_eq!(
            ImageDesc::new(
                &plain,
                Some(&rgba),
                &request(CL_MEM_OBJECT_IMAGE2D, [1, 1, 0, 0], [0, 0]),
                false
            ),
            Err(CL_INVALID_OPERATION)
        );
    }

    #[test]
    fn mip_levels_halve_each_dimension_and_follow_each_other() {
        let c = image_context();
        let rgba = fmt(CL_RGBA, CL_UNORM_INT8);
        let with_levels = |ty, size, levels| {
            let mut r = request(ty, size, [0, 0]);
            r.num_mip_levels = levels;
            r
        };
        let new = |r: &ImageRequest, host: bool| ImageDesc::new(&c, Some(&rgba), r, host);
        // 13x6x3: levels 13x6x3, 6x3x1, 3x1x1, 1x1x1 (halved, rounded down, at least 1).
        let d = new(&with_levels(CL_MEM_OBJECT_IMAGE3D, [13, 6, 3, 0], 4), false).unwrap();
        let sizes: Vec<_> = (0..4).map(|l| d.level(l)).collect();
        let dims: Vec<_> = sizes.iter().map(|l| (l.width, l.height, l.depth)).collect();
        assert_eq!(dims, [(13, 6, 3), (6, 3, 1), (3, 1, 1), (1, 1, 1)]);
        let bytes = [13 * 6 * 3 * 4, 6 * 3 * 4, 3 * 4, 4];
        let mut offset = 0;
        for (l, b) in sizes.iter().zip(bytes) {
            assert_eq!(l.level_offset, offset);
            assert_eq!(l.single_level_size(), Some(b));
            offset += b;
        }
        assert_eq!(d.size(), Some(offset));
        assert_eq!((d.levels(), d.num_mip_levels), (4, 4));
        // A 1D array keeps its layers; each level's layers are one row apart.
        let d = new(
            &with_levels(CL_MEM_OBJECT_IMAGE1D_ARRAY, [8, 0, 0, 3], 4),
            false,
        )
        .unwrap();
        let l2 = d.level(2);
        assert_eq!(
            (l2.width, l2.array_size, l2.row_pitch, l2.slice_pitch),
            (2, 3, 8, 8)
        );
        assert_eq!(l2.level_offset, 8 * 3 * 4 + 4 * 3 * 4);
        // The level is the origin's component after the coordinates.
        let (l, o) = d.at_level([1, 2, 3, 9]).unwrap();
        assert_eq!((l.width, o), (1, [1, 2, 0]));
        assert_eq!(d.at_level([0, 0, 4, 0]), Err(CL_INVALID_MIP_LEVEL));
        let d = new(
            &with_levels(CL_MEM_OBJECT_IMAGE2D_ARRAY, [4, 4, 0, 2], 3),
            false,
        )
        .unwrap();
        let (l, o) = d.at_level([0, 1, 1, 2]).unwrap();
        assert_eq!((l.width, l.height, o), (1, 1, [0, 1, 1]));
        assert_eq!(l.offset_of([0, 0, 1]), (16 + 4) * 4 * 2 + 4);
        // Level counts up to log2 of the largest dimension + 1; the kinds of image that have
        // none; no application memory.
        assert!(new(&with_levels(CL_MEM_OBJECT_IMAGE2D, [1, 16, 0, 0], 5), false).is_ok());
        for (ty, size, levels) in [
            (CL_MEM_OBJECT_IMAGE2D, [1, 16, 0, 0], 6),
            (CL_MEM_OBJECT_IMAGE1D, [7, 0, 0, 0], 4),
            (CL_MEM_OBJECT_IMAGE1D_BUFFER, [16, 0, 0, 0], 2),
        ] {
            assert_eq!(
                new(&with_levels(ty, size, levels), false),
                Err(CL_INVALID_IMAGE_DESCRIPTOR),
                "{ty:#x} {size:?} {levels}"
            );
        }
        assert_eq!(
            new(&with_levels(CL_MEM_OBJECT_IMAGE2D, [4, 4, 0, 0], 2), true),
            Err(CL_INVALID_HOST_PTR)
        );
        // 0 and 1 both mean one level; commands then read no level from the origin.
        let one = new(&with_levels(CL_MEM_OBJECT_IMAGE2D, [4, 4, 0, 0], 1), true).unwrap();
        assert_eq!((one.levels(), one.size()), (1, Some(64)));
        assert_eq!(one.at_level([1, 2, 0, 7]).unwrap().1, [1, 2, 0]);
    }

    #[test]
    fn regions_and_host_steps() {
        let d = ImageDesc {
            image_type: CL_MEM_OBJECT_IMAGE1D_ARRAY,
            format: FormatKey {
                order: CL_RGBA,
                data_type: CL_UNORM_INT8,
            },
            element_size: 4,
            width: 8,
            height: 0,
            depth: 0,
            array_size: 3,
            row_pitch: 32,
            slice_pitch: 48,
            num_mip_levels: 0,
            level_offset: 0,
        };
        assert!(d.check_region([0, 1, 0], [8, 2, 1]).is_ok());
        assert_eq!(d.check_region([0, 1, 0], [8, 3, 1]), Err(CL_INVALID_VALUE));
        assert_eq!(d.check_region([0, 0, 1], [8, 1, 1]), Err(CL_INVALID_VALUE));
        assert_eq!(d.check_region([0, 0, 0], [0, 1, 1]), Err(CL_INVALID_VALUE));
        assert_eq!(d.offset_of([2, 2, 0]), 8 + 96);
        // Layers of a 1D array are slices in host memory too (default: one row each).
        assert_eq!(d.host_steps([4, 2, 1], 0, 0), Ok((16, 16)));
        assert_eq!(d.host_steps([4, 2, 1], 20, 40), Ok((40, 40)));
        assert_eq!(d.host_steps([4, 2, 1], 8, 0), Err(CL_INVALID_VALUE));
        let d2 = ImageDesc {
            image_type: CL_MEM_OBJECT_IMAGE2D,
            height: 4,
            array_size: 0,
            slice_pitch: 0,
            ..d
        };
        assert_eq!(d2.host_steps([4, 2, 1], 0, 0), Ok((16, 32)));
        assert_eq!(d2.host_steps([4, 2, 1], 0, 64), Err(CL_INVALID_VALUE));
        assert_eq!(d2.size(), Some(128));
    }
}
