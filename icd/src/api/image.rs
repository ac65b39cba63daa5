//! Image and sampler entry points: creation (clCreateImage, its 1.1 forms and
//! clCreateImageWithProperties), clGetImageInfo, clGetSupportedImageFormats, samplers, and the
//! image commands (read, write, copy, fill, map, image↔buffer copies), converted into runtime
//! [`Command`]s and objects where the checks and the work live.
#![allow(non_snake_case, clippy::too_many_arguments)]

use ferrocl_runtime::command::{fill_color_size, Command, HostPtr};
use ferrocl_runtime::context::Context;
use ferrocl_runtime::image::{ImageDesc, ImageRequest};
use ferrocl_runtime::memory::Mem;
use ferrocl_runtime::sampler::Sampler;
use ferrocl_runtime::{CLResult, ClObject};
use opencl_sys::*;
use std::ffi::c_void;

use super::memory::queue_and_mem;
use super::queue::submit;
use crate::util::*;

/// The common body of every image creation entry point.
unsafe fn image(
    context: cl_context,
    props: *const cl_mem_properties,
    flags: cl_mem_flags,
    format: *const cl_image_format,
    desc: *const cl_image_desc,
    host_ptr: *mut c_void,
) -> CLResult<cl_mem> {
    // SAFETY: handle check.
    let ctx = unsafe { arc::<Context>(context)? };
    ctx.check_live()?;
    // SAFETY: zero-terminated list (caller contract).
    let (pairs, raw) = unsafe { properties(props) };
    if !pairs.is_empty() {
        // Core OpenCL defines no image properties.
        return Err(CL_INVALID_PROPERTY);
    }
    if !ferrocl_runtime::image::context_has_images(&ctx) {
        return Err(CL_INVALID_OPERATION);
    }
    ferrocl_runtime::memory::check_flags(flags)?;
    // SAFETY: NULL or a valid cl_image_format (caller contract).
    let format = unsafe { format.as_ref() };
    if format.is_none() {
        return Err(CL_INVALID_IMAGE_FORMAT_DESCRIPTOR);
    }
    // SAFETY: NULL or a valid cl_image_desc (caller contract).
    let desc = unsafe { desc.as_ref() }.ok_or(CL_INVALID_IMAGE_DESCRIPTOR)?;
    let source = if desc.buffer.is_null() {
        None
    } else {
        // SAFETY: handle check; a bad handle in the descriptor is a bad descriptor.
        Some(unsafe { arc::<Mem>(desc.buffer) }.map_err(|_| CL_INVALID_IMAGE_DESCRIPTOR)?)
    };
    let request = ImageRequest {
        image_type: desc.image_type,
        width: desc.image_width,
        height: desc.image_height,
        depth: desc.image_depth,
        array_size: desc.image_array_size,
        row_pitch: desc.image_row_pitch,
        slice_pitch: desc.image_slice_pitch,
        num_mip_levels: desc.num_mip_levels,
        num_samples: desc.num_samples,
        source,
    };
    // SAFETY: with USE/COPY_HOST_PTR the application guarantees `host_ptr` holds the image
    // with the pitches it gave (and for USE_HOST_PTR outlives it).
    let m = unsafe { Mem::new_image(ctx, flags, format, &request, host_ptr.cast(), raw)? };
    Ok(new_handle(m))
}

fn image_desc(
    image_type: cl_mem_object_type,
    width: usize,
    height: usize,
    depth: usize,
    row_pitch: usize,
    slice_pitch: usize,
) -> cl_image_desc {
    cl_image_desc {
        image_type,
        image_width: width,
        image_height: height,
        image_depth: depth,
        image_array_size: 0,
        image_row_pitch: row_pitch,
        image_slice_pitch: slice_pitch,
        num_mip_levels: 0,
        num_samples: 0,
        buffer: std::ptr::null_mut(),
    }
}

pub unsafe extern "C" fn clCreateImage(
    context: cl_context,
    flags: cl_mem_flags,
    image_format: *const cl_image_format,
    image_desc: *const cl_image_desc,
    host_ptr: *mut c_void,
    errcode_ret: *mut cl_int,
) -> cl_mem {
    // SAFETY: pointers per the API contract.
    unsafe {
        create(errcode_ret, || {
            image(
                context,
                std::ptr::null(),
                flags,
                image_format,
                image_desc,
                host_ptr,
            )
        })
    }
}

pub unsafe extern "C" fn clCreateImageWithProperties(
    context: cl_context,
    properties: *const cl_mem_properties,
    flags: cl_mem_flags,
    image_format: *const cl_image_format,
    image_desc: *const cl_image_desc,
    host_ptr: *mut c_void,
    errcode_ret: *mut cl_int,
) -> cl_mem {
    // SAFETY: pointers per the API contract.
    unsafe {
        create(errcode_ret, || {
            image(
                context,
                properties,
                flags,
                image_format,
                image_desc,
                host_ptr,
            )
        })
    }
}

pub unsafe extern "C" fn clCreateImage2D(
    context: cl_context,
    flags: cl_mem_flags,
    image_format: *const cl_image_format,
    image_width: usize,
    image_height: usize,
    image_row_pitch: usize,
    host_ptr: *mut c_void,
    errcode_ret: *mut cl_int,
) -> cl_mem {
    let desc = image_desc(
        CL_MEM_OBJECT_IMAGE2D,
        image_width,
        image_height,
        0,
        image_row_pitch,
        0,
    );
    // SAFETY: pointers per the API contract; `desc` lives across the call.
    unsafe {
        create(errcode_ret, || {
            image(
                context,
                std::ptr::null(),
                flags,
                image_format,
                &desc,
                host_ptr,
            )
            .map_err(ImageDesc::legacy_error)
        })
    }
}

pub unsafe extern "C" fn clCreateImage3D(
    context: cl_context,
    flags: cl_mem_flags,
    image_format: *const cl_image_format,
    image_width: usize,
    image_height: usize,
    image_depth: usize,
    image_row_pitch: usize,
    image_slice_pitch: usize,
    host_ptr: *mut c_void,
    errcode_ret: *mut cl_int,
) -> cl_mem {
    let desc = image_desc(
        CL_MEM_OBJECT_IMAGE3D,
        image_width,
        image_height,
        image_depth,
        image_row_pitch,
        image_slice_pitch,
    );
    // SAFETY: pointers per the API contract; `desc` lives across the call.
    unsafe {
        create(errcode_ret, || {
            // clCreateImage3D wants a depth of at least 2 (checked once the context is).
            let ctx = obj::<Context>(context)?;
            if ferrocl_runtime::image::context_has_images(ctx) && image_depth <= 1 {
                return Err(CL_INVALID_IMAGE_SIZE);
            }
            image(
                context,
                std::ptr::null(),
                flags,
                image_format,
                &desc,
                host_ptr,
            )
            .map_err(ImageDesc::legacy_error)
        })
    }
}

pub unsafe extern "C" fn clGetImageInfo(
    image: cl_mem,
    param_name: cl_image_info,
    param_value_size: usize,
    param_value: *mut c_void,
    param_value_size_ret: *mut usize,
) -> cl_int {
    status(|| {
        // SAFETY: handle check; outputs per the API contract.
        unsafe {
            let m = obj::<Mem>(image)?;
            let d = m.expect_image()?;
            let val = match param_name {
                CL_IMAGE_FORMAT => Ok(v(d.format.cl())),
                CL_IMAGE_ELEMENT_SIZE => Ok(v(d.element_size)),
                CL_IMAGE_ROW_PITCH => Ok(v(d.row_pitch)),
                CL_IMAGE_SLICE_PITCH => Ok(v(d.slice_pitch)),
                CL_IMAGE_WIDTH => Ok(v(d.width)),
                CL_IMAGE_HEIGHT => Ok(v(d.height)),
                CL_IMAGE_DEPTH => Ok(v(d.depth)),
                CL_IMAGE_ARRAY_SIZE => Ok(v(d.array_size)),
                CL_IMAGE_BUFFER => Ok(v(m
                    .parent()
                    .filter(|p| p.image().is_none())
                    .map_or(std::ptr::null_mut(), |p| handle(&**p)))),
                CL_IMAGE_NUM_MIP_LEVELS => Ok(v(d.num_mip_levels)),
                CL_IMAGE_NUM_SAMPLES => Ok(v(0 as cl_uint)),
                _ => Err(CL_INVALID_VALUE),
            };
            write_info(val, param_value_size, param_value, param_value_size_ret)
        }
    })
}

pub unsafe extern "C" fn clGetSupportedImageFormats(
    context: cl_context,
    flags: cl_mem_flags,
    image_type: cl_mem_object_type,
    num_entries: cl_uint,
    image_formats: *mut cl_image_format,
    num_image_formats: *mut cl_uint,
) -> cl_int {
    status(|| {
        // SAFETY: handle check.
        let ctx = unsafe { obj::<Context>(context)? };
        if num_entries == 0 && !image_formats.is_null() {
            return Err(CL_INVALID_VALUE);
        }
        let formats = ferrocl_runtime::image::supported_formats(ctx, flags, image_type)?;
        if !image_formats.is_null() {
            let n = formats.len().min(num_entries as usize);
            // SAFETY: room for num_entries formats (caller contract).
            unsafe { std::ptr::copy_nonoverlapping(formats.as_ptr(), image_formats, n) };
        }
        if !num_image_formats.is_null() {
            // SAFETY: writable (caller contract).
            unsafe { *num_image_formats = formats.len() as cl_uint };
        }
        Ok(())
    })
}

pub unsafe extern "C" fn clCreateSampler(
    context: cl_context,
    normalized_coords: cl_bool,
    addressing_mode: cl_addressing_mode,
    filter_mode: cl_filter_mode,
    errcode_ret: *mut cl_int,
) -> cl_sampler {
    // SAFETY: handle check; errcode_ret per the API contract.
    unsafe {
        create(errcode_ret, || {
            let ctx = arc::<Context>(context)?;
            ctx.check_live()?;
            let s = Sampler::new(
                ctx,
                normalized_coords,
                addressing_mode,
                filter_mode,
                Vec::new(),
            )?;
            Ok(new_handle(s))
        })
    }
}

pub unsafe extern "C" fn clCreateSamplerWithProperties(
    context: cl_context,
    sampler_properties: *const cl_sampler_properties,
    errcode_ret: *mut cl_int,
) -> cl_sampler {
    // SAFETY: handle check; the property list is zero-terminated (API contract).
    unsafe {
        create(errcode_ret, || {
            let ctx = arc::<Context>(context)?;
            ctx.check_live()?;
            let (pairs, raw) = properties(sampler_properties);
            Ok(new_handle(Sampler::with_properties(ctx, &pairs, raw)?))
        })
    }
}

pub unsafe extern "C" fn clRetainSampler(sampler: cl_sampler) -> cl_int {
    // SAFETY: handle check.
    status(|| unsafe { retain::<Sampler>(sampler) })
}

pub unsafe extern "C" fn clReleaseSampler(sampler: cl_sampler) -> cl_int {
    // SAFETY: handle check.
    status(|| unsafe { release::<Sampler>(sampler) })
}

pub unsafe extern "C" fn clGetSamplerInfo(
    sampler: cl_sampler,
    param_name: cl_sampler_info,
    param_value_size: usize,
    param_value: *mut c_void,
    param_value_size_ret: *mut usize,
) -> cl_int {
    status(|| {
        // SAFETY: handle check; outputs per the API contract.
        unsafe {
            let s = obj::<Sampler>(sampler)?;
            let val = match param_name {
                CL_SAMPLER_REFERENCE_COUNT => Ok(v(s.base().ref_count())),
                CL_SAMPLER_CONTEXT => Ok(v(handle(&*s.context))),
                CL_SAMPLER_NORMALIZED_COORDS => Ok(b(s.normalized_coords)),
                CL_SAMPLER_ADDRESSING_MODE => Ok(v(s.addressing_mode)),
                CL_SAMPLER_FILTER_MODE => Ok(v(s.filter_mode)),
                // cl_khr_mipmap_image: every sampler of a context with images has them.
                CL_SAMPLER_MIP_FILTER_MODE => Ok(v(s.mip_filter_mode)),
                CL_SAMPLER_LOD_MIN => Ok(v(s.lod_min)),
                CL_SAMPLER_LOD_MAX => Ok(v(s.lod_max)),
                CL_SAMPLER_PROPERTIES => Ok(arr(&s.properties)),
                _ => Err(CL_INVALID_VALUE),
            };
            write_info(val, param_value_size, param_value, param_value_size_ret)
        }
    })
}

/// Three `size_t` values (an origin or region); CL_INVALID_VALUE for NULL.
///
/// # Safety
/// `p` is NULL or readable for three values.
pub(crate) unsafe fn triple(p: *const usize) -> CLResult<[usize; 3]> {
    if p.is_null() {
        return Err(CL_INVALID_VALUE);
    }
    // SAFETY: readable for three values (caller contract).
    Ok(unsafe { [*p, *p.add(1), *p.add(2)] })
}

/// The origin of a command on image `m`: three values, and a fourth (the mip level) for a
/// mipmapped 2D array or 3D image, whose origin the API spec gives four components
/// (cl_khr_mipmap_image); CL_INVALID_VALUE for NULL, CL_INVALID_MEM_OBJECT for a buffer.
///
/// # Safety
/// `p` is NULL or readable for the values the image's kind has.
pub(crate) unsafe fn image_origin(p: *const usize, m: &Mem) -> CLResult<[usize; 4]> {
    let d = m.expect_image()?;
    // SAFETY: at least three values (caller contract).
    let [x, y, z] = unsafe { triple(p)? };
    let four =
        d.is_mipmapped() && ferrocl_runtime::image::mip_level_coordinate(d.image_type) == Some(3);
    // SAFETY: such an image's origin has four values (caller contract).
    let level = if four { unsafe { *p.add(3) } } else { 0 };
    Ok([x, y, z, level])
}

pub unsafe extern "C" fn clEnqueueReadImage(
    command_queue: cl_command_queue,
    image: cl_mem,
    blocking_read: cl_bool,
    origin: *const usize,
    region: *const usize,
    row_pitch: usize,
    slice_pitch: usize,
    ptr: *mut c_void,
    num_events_in_wait_list: cl_uint,
    event_wait_list: *const cl_event,
    event: *mut cl_event,
) -> cl_int {
    status(|| {
        // SAFETY: handle checks and API pointer contract.
        unsafe {
            let (q, m) = queue_and_mem(command_queue, image)?;
            let wait = wait_list(num_events_in_wait_list, event_wait_list, &q.context)?;
            let command = Command::read_image(
                m.clone(),
                image_origin(origin, &m)?,
                triple(region)?,
                row_pitch,
                slice_pitch,
                HostPtr::new(ptr)?,
            )?;
            submit(&q, command, wait, blocking_read != 0, event)
        }
    })
}

pub unsafe extern "C" fn clEnqueueWriteImage(
    command_queue: cl_command_queue,
    image: cl_mem,
    blocking_write: cl_bool,
    origin: *const usize,
    region: *const usize,
    input_row_pitch: usize,
    input_slice_pitch: usize,
    ptr: *const c_void,
    num_events_in_wait_list: cl_uint,
    event_wait_list: *const cl_event,
    event: *mut cl_event,
) -> cl_int {
    status(|| {
        // SAFETY: handle checks and API pointer contract.
        unsafe {
            let (q, m) = queue_and_mem(command_queue, image)?;
            let wait = wait_list(num_events_in_wait_list, event_wait_list, &q.context)?;
            let command = Command::write_image(
                m.clone(),
                image_origin(origin, &m)?,
                triple(region)?,
                input_row_pitch,
                input_slice_pitch,
                HostPtr::new(ptr)?,
            )?;
            submit(&q, command, wait, blocking_write != 0, event)
        }
    })
}

pub unsafe extern "C" fn clEnqueueCopyImage(
    command_queue: cl_command_queue,
    src_image: cl_mem,
    dst_image: cl_mem,
    src_origin: *const usize,
    dst_origin: *const usize,
    region: *const usize,
    num_events_in_wait_list: cl_uint,
    event_wait_list: *const cl_event,
    event: *mut cl_event,
) -> cl_int {
    status(|| {
        // SAFETY: handle checks and API pointer contract.
        unsafe {
            let (q, src) = queue_and_mem(command_queue, src_image)?;
            let (_, dst) = queue_and_mem(command_queue, dst_image)?;
            let wait = wait_list(num_events_in_wait_list, event_wait_list, &q.context)?;
            let command = Command::copy_image(
                src.clone(),
                dst.clone(),
                image_origin(src_origin, &src)?,
                image_origin(dst_origin, &dst)?,
                triple(region)?,
            )?;
            submit(&q, command, wait, false, event)
        }
    })
}

pub unsafe extern "C" fn clEnqueueFillImage(
    command_queue: cl_command_queue,
    image: cl_mem,
    fill_color: *const c_void,
    origin: *const usize,
    region: *const usize,
    num_events_in_wait_list: cl_uint,
    event_wait_list: *const cl_event,
    event: *mut cl_event,
) -> cl_int {
    status(|| {
        // SAFETY: handle checks and API pointer contract.
        unsafe {
            let (q, m) = queue_and_mem(command_queue, image)?;
            let wait = wait_list(num_events_in_wait_list, event_wait_list, &q.context)?;
            let size = fill_color_size(m.expect_image()?);
            if fill_color.is_null() {
                return Err(CL_INVALID_VALUE);
            }
            // SAFETY: the colour holds `size` bytes for this image (API contract).
            let color = slice(fill_color as *const u8, size);
            let origin = image_origin(origin, &m)?;
            let command = Command::fill_image(m, color, origin, triple(region)?)?;
            submit(&q, command, wait, false, event)
        }
    })
}

pub unsafe extern "C" fn clEnqueueCopyImageToBuffer(
    command_queue: cl_command_queue,
    src_image: cl_mem,
    dst_buffer: cl_mem,
    src_origin: *const usize,
    region: *const usize,
    dst_offset: usize,
    num_events_in_wait_list: cl_uint,
    event_wait_list: *const cl_event,
    event: *mut cl_event,
) -> cl_int {
    status(|| {
        // SAFETY: handle checks and API pointer contract.
        unsafe {
            let (q, src) = queue_and_mem(command_queue, src_image)?;
            let (_, dst) = queue_and_mem(command_queue, dst_buffer)?;
            let wait = wait_list(num_events_in_wait_list, event_wait_list, &q.context)?;
            let command = Command::copy_image_to_buffer(
                src.clone(),
                dst,
                image_origin(src_origin, &src)?,
                triple(region)?,
                dst_offset,
            )?;
            submit(&q, command, wait, false, event)
        }
    })
}

pub unsafe extern "C" fn clEnqueueCopyBufferToImage(
    command_queue: cl_command_queue,
    src_buffer: cl_mem,
    dst_image: cl_mem,
    src_offset: usize,
    dst_origin: *const usize,
    region: *const usize,
    num_events_in_wait_list: cl_uint,
    event_wait_list: *const cl_event,
    event: *mut cl_event,
) -> cl_int {
    status(|| {
        // SAFETY: handle checks and API pointer contract.
        unsafe {
            let (q, src) = queue_and_mem(command_queue, src_buffer)?;
            let (_, dst) = queue_and_mem(command_queue, dst_image)?;
            let wait = wait_list(num_events_in_wait_list, event_wait_list, &q.context)?;
            let command = Command::copy_buffer_to_image(
                src,
                dst.clone(),
                src_offset,
                image_origin(dst_origin, &dst)?,
                triple(region)?,
            )?;
            submit(&q, command, wait, false, event)
        }
    })
}

pub unsafe extern "C" fn clEnqueueMapImage(
    command_queue: cl_command_queue,
    image: cl_mem,
    blocking_map: cl_bool,
    map_flags: cl_map_flags,
    origin: *const usize,
    region: *const usize,
    image_row_pitch: *mut usize,
    image_slice_pitch: *mut usize,
    num_events_in_wait_list: cl_uint,
    event_wait_list: *const cl_event,
    event: *mut cl_event,
    errcode_ret: *mut cl_int,
) -> *mut c_void {
    // SAFETY: handle checks and API pointer contract.
    unsafe {
        create(errcode_ret, || {
            let (q, m) = queue_and_mem(command_queue, image)?;
            let wait = wait_list(num_events_in_wait_list, event_wait_list, &q.context)?;
            let d = *m.expect_image()?;
            if image_row_pitch.is_null() || (d.has_slices() && image_slice_pitch.is_null()) {
                return Err(CL_INVALID_VALUE);
            }
            let origin = image_origin(origin, &m)?;
            let (command, ptr, row, slice_pitch) =
                Command::map_image(m.clone(), map_flags, origin, triple(region)?)?;
            if let Err(e) = submit(&q, command, wait, blocking_map != 0, event) {
                Command::cancel_map(&m, ptr);
                return Err(e);
            }
            *image_row_pitch = row;
            if !image_slice_pitch.is_null() {
                *image_slice_pitch = slice_pitch;
            }
            Ok(ptr.cast::<c_void>())
        })
    }
}
