//! Commands a queue runs: what each `clEnqueue*` asks for, checked when it is built (ranges,
//! host access, overlap: the spec's enqueue-time errors) and run later by the queue's worker.
//! The icd layer only converts C arguments into these. Image commands are byte rectangles
//! through each image's pitches (`image.rs`), and a fill converts its colour as a kernel write
//! would (`pixel.rs`).

use std::sync::Arc;

use opencl_sys::*;

use crate::context::Context;
use crate::executor::{JobHints, WorkerPool};
use crate::image::{rect, ImageDesc, RectSide};
use crate::kernel::KernelLaunch;
use crate::memory::{fill, Mem, Rect};
use crate::object::CLResult;
use crate::pixel::{color_kind, Color, ColorKind};
use crate::platform::Device;
use crate::semaphore::Semaphore;
use crate::svm::SvmAllocation;

/// An application pointer a command reads or writes when it runs. The spec makes the
/// application keep it valid until the command completes.
#[derive(Clone, Copy, Debug)]
pub struct HostPtr(usize);

impl HostPtr {
    /// CL_INVALID_VALUE for NULL.
    pub fn new<T>(ptr: *const T) -> CLResult<Self> {
        if ptr.is_null() {
            return Err(CL_INVALID_VALUE);
        }
        Ok(HostPtr(ptr as usize))
    }

    /// As [`HostPtr::new`], but NULL is taken when `empty` (a command of no bytes that may
    /// name no memory).
    pub fn or_empty<T>(ptr: *const T, empty: bool) -> CLResult<Self> {
        if empty {
            return Ok(HostPtr(ptr as usize));
        }
        Self::new(ptr)
    }

    fn get(self) -> *mut u8 {
        self.0 as *mut u8
    }
}

/// Map flags accepted by clEnqueueMapBuffer, clEnqueueMapImage and clEnqueueSVMMap.
const MAP_FLAGS: cl_map_flags = (CL_MAP_READ | CL_MAP_WRITE | CL_MAP_WRITE_INVALIDATE_REGION) as _;

/// CL_INVALID_VALUE for unknown map flags or WRITE_INVALIDATE_REGION with READ or WRITE.
fn check_map_flags(flags: cl_map_flags) -> CLResult<()> {
    let invalidate = CL_MAP_WRITE_INVALIDATE_REGION as cl_map_flags;
    if flags & !MAP_FLAGS != 0
        || (flags & invalidate != 0 && flags & (CL_MAP_READ | CL_MAP_WRITE) as cl_map_flags != 0)
    {
        return Err(CL_INVALID_VALUE);
    }
    Ok(())
}

/// CL_INVALID_VALUE for migration flags other than HOST and CONTENT_UNDEFINED.
fn check_migration_flags(flags: cl_mem_migration_flags) -> CLResult<()> {
    let known = (CL_MIGRATE_MEM_OBJECT_HOST | CL_MIGRATE_MEM_OBJECT_CONTENT_UNDEFINED)
        as cl_mem_migration_flags;
    if flags & !known != 0 {
        return Err(CL_INVALID_VALUE);
    }
    Ok(())
}

pub enum Command {
    /// A kernel launch (`clEnqueueNDRangeKernel`, or `clEnqueueTask` as one work-item).
    Kernel {
        launch: KernelLaunch,
        task: bool,
    },
    ReadBuffer {
        mem: Arc<Mem>,
        offset: usize,
        size: usize,
        dst: HostPtr,
    },
    WriteBuffer {
        mem: Arc<Mem>,
        offset: usize,
        size: usize,
        src: HostPtr,
    },
    CopyBuffer {
        src: Arc<Mem>,
        dst: Arc<Mem>,
        src_offset: usize,
        dst_offset: usize,
        size: usize,
    },
    FillBuffer {
        mem: Arc<Mem>,
        offset: usize,
        size: usize,
        pattern: Vec<u8>,
    },
    /// `rect.src_*` describes the buffer, `rect.dst_*` the host memory.
    ReadBufferRect {
        mem: Arc<Mem>,
        rect: Rect,
        dst: HostPtr,
    },
    /// `rect.src_*` describes the host memory, `rect.dst_*` the buffer.
    WriteBufferRect {
        mem: Arc<Mem>,
        rect: Rect,
        src: HostPtr,
    },
    CopyBufferRect {
        src: Arc<Mem>,
        dst: Arc<Mem>,
        rect: Rect,
    },
    /// Maps are zero-copy: the pointer is handed out at enqueue; the command only orders the
    /// map after earlier commands.
    MapBuffer {
        mem: Arc<Mem>,
    },
    MapImage {
        mem: Arc<Mem>,
    },
    /// `rect.src_*` describes the image, `rect.dst_*` the host memory (bytes).
    ReadImage {
        mem: Arc<Mem>,
        rect: Rect,
        dst: HostPtr,
    },
    /// `rect.src_*` describes the host memory, `rect.dst_*` the image.
    WriteImage {
        mem: Arc<Mem>,
        rect: Rect,
        src: HostPtr,
    },
    /// Image to image, image to buffer and buffer to image (`command_type` says which).
    CopyImage {
        command_type: cl_command_type,
        src: Arc<Mem>,
        dst: Arc<Mem>,
        rect: Rect,
    },
    /// Every pixel of the region gets `texel` (the fill colour in the image's format);
    /// `desc` is the image or the mip level filled.
    FillImage {
        mem: Arc<Mem>,
        desc: ImageDesc,
        origin: [usize; 3],
        region: [usize; 3],
        texel: Vec<u8>,
    },
    Unmap {
        mem: Arc<Mem>,
    },
    /// Host and device share memory: migration only orders the command.
    Migrate {
        mems: Vec<Arc<Mem>>,
    },
    /// Markers, barriers and `clEnqueueWaitForEvents`: nothing to do once the wait list is
    /// complete (the queue runs commands in order).
    Sync {
        command_type: cl_command_type,
    },
    /// `clEnqueueSVMMemcpy` and `clEnqueueMemcpyINTEL`: host, SVM or USM memory on either side.
    SvmMemcpy {
        command_type: cl_command_type,
        dst: HostPtr,
        src: HostPtr,
        size: usize,
        _keep: Vec<Arc<SvmAllocation>>,
    },
    /// `clEnqueueSVMMemFill`, `clEnqueueMemFillINTEL` and `clEnqueueMemsetINTEL`.
    SvmMemFill {
        command_type: cl_command_type,
        dst: HostPtr,
        size: usize,
        pattern: Vec<u8>,
        _keep: Option<Arc<SvmAllocation>>,
    },
    /// SVM map, unmap and migration, USM migration and advice only order the command: host
    /// and device share memory, and advice is a placement hint with nothing to place.
    SvmOrder {
        command_type: cl_command_type,
        _keep: Vec<Arc<SvmAllocation>>,
    },
    /// `clEnqueueCommandBufferKHR`: the command-buffer's commands as they were when it was
    /// enqueued (`crate::command_buffer`), run one after another in recording order, which
    /// every sync point and barrier of the buffer allows; the first that fails ends the run.
    Buffer {
        commands: Arc<Vec<Arc<Command>>>,
    },
    /// `clEnqueueSignalSemaphoresKHR` (`signal`) and `clEnqueueWaitSemaphoresKHR`: the payload
    /// changes when the command runs; a wait's order on its signal is in its wait list
    /// (`crate::semaphore`).
    Semaphores {
        signal: bool,
        semaphores: Vec<Arc<Semaphore>>,
    },
    /// `clEnqueueSVMFree`: the application's callback, or the frees themselves.
    SvmFree {
        context: Arc<Context>,
        queue: usize,
        pointers: Vec<usize>,
        callback: Option<(SvmFreeCallback, usize)>,
    },
}

/// `pfn_free_func` of clEnqueueSVMFree.
pub type SvmFreeCallback = unsafe extern "C" fn(
    cl_command_queue,
    cl_uint,
    *mut *mut std::ffi::c_void,
    *mut std::ffi::c_void,
);

/// Copies and fills at least this large are split across the device's workers: one thread
/// does not reach the memory bandwidth of the machine.
const PARALLEL_BYTES: usize = 4 << 20;
/// The piece each worker copies or fills at a time (a multiple of every pattern size).
const PIECE_BYTES: usize = 1 << 20;

/// `len` bytes from `src` to `dst`, on the pool's workers when large. Overlapping ranges (a
/// `CL_MEM_USE_HOST_PTR` buffer read back into its own host memory) are moved in one piece.
///
/// # Safety
/// As `std::ptr::copy`: valid ranges.
unsafe fn copy_bytes(workers: Workers, src: *const u8, dst: *mut u8, len: usize) {
    if len == 0 {
        // Either pointer may be NULL then (clEnqueueSVMMemcpy of no bytes).
        return;
    }
    let (s, d) = (src as usize, dst as usize);
    let overlap = s < d.saturating_add(len) && d < s.saturating_add(len);
    if overlap || len < PARALLEL_BYTES || workers.0.threads() < 2 {
        // SAFETY: caller contract; `copy` allows overlap.
        unsafe { std::ptr::copy(src, dst, len) };
        return;
    }
    let (src, dst) = (src as usize, dst as usize);
    let copied = workers.0.run(len.div_ceil(PIECE_BYTES), workers.1, &|i| {
        let start = i * PIECE_BYTES;
        let n = PIECE_BYTES.min(len - start);
        // SAFETY: a piece of the ranges the caller vouched for.
        unsafe {
            std::ptr::copy_nonoverlapping((src + start) as *const u8, (dst + start) as *mut u8, n)
        };
        Ok(())
    });
    debug_assert!(copied.is_ok(), "a piece of a copy cannot fail");
}

/// `len` bytes at `dst` filled with `pattern`, on the pool's workers when large (every piece
/// starts at a multiple of the pattern size, so the pattern keeps its phase).
///
/// # Safety
/// `dst` writable for `len` bytes.
unsafe fn fill_bytes(workers: Workers, dst: *mut u8, len: usize, pattern: &[u8]) {
    if len == 0 {
        return;
    }
    if len < PARALLEL_BYTES || workers.0.threads() < 2 {
        // SAFETY: caller contract.
        unsafe { fill(dst, len, pattern) };
        return;
    }
    let dst = dst as usize;
    let filled = workers.0.run(len.div_ceil(PIECE_BYTES), workers.1, &|i| {
        let start = i * PIECE_BYTES;
        // SAFETY: a piece of the range the caller vouched for.
        unsafe {
            fill(
                (dst + start) as *mut u8,
                PIECE_BYTES.min(len - start),
                pattern,
            )
        };
        Ok(())
    });
    debug_assert!(filled.is_ok(), "a piece of a fill cannot fail");
}

/// The pool a command's bulk work runs on, with its queue's hints.
type Workers<'a> = (&'a WorkerPool, JobHints);

/// Pattern sizes `clEnqueueFillBuffer` and `clEnqueueSVMMemFill` accept.
fn valid_pattern_size(n: usize) -> bool {
    n.is_power_of_two() && n <= 128
}

/// Bytes `clEnqueueFillImage` reads at `fill_color` for image `d`: one float for a depth
/// image, four components otherwise.
pub fn fill_color_size(d: &ImageDesc) -> usize {
    if d.format.order == CL_DEPTH {
        4
    } else {
        16
    }
}

/// The fill colour in `bytes` as the channel data type of `d` reads it.
fn fill_color_of(d: &ImageDesc, bytes: &[u8]) -> Option<Color> {
    if bytes.len() < fill_color_size(d) {
        return None;
    }
    let word = |i: usize| u32::from_ne_bytes(bytes[4 * i..4 * i + 4].try_into().unwrap_or([0; 4]));
    if d.format.order == CL_DEPTH {
        return Some(Color::Float([f32::from_bits(word(0)), 0.0, 0.0, 1.0]));
    }
    let w = [word(0), word(1), word(2), word(3)];
    Some(match color_kind(d.format.data_type) {
        ColorKind::Float => Color::Float(w.map(f32::from_bits)),
        ColorKind::Int => Color::Int(w.map(|v| v as i32)),
        ColorKind::Uint => Color::Uint(w),
    })
}

/// The byte rectangle between an image region and host memory laid out with the
/// application's pitches; `image_is_source` for reads.
fn host_rect(
    d: &ImageDesc,
    origin: [usize; 3],
    region: [usize; 3],
    row_pitch: usize,
    slice_pitch: usize,
    image_is_source: bool,
) -> CLResult<Rect> {
    d.check_region(origin, region)?;
    let (hy, hz) = d.host_steps(region, row_pitch, slice_pitch)?;
    let (o, y, z, bytes) = d.rect_side(origin, region);
    let host = ([0; 3], hy, hz);
    Ok(if image_is_source {
        rect((o, y, z), host, bytes)
    } else {
        rect(host, (o, y, z), bytes)
    })
}

/// The buffer side of an image↔buffer copy (tightly packed rows, then slices or layers, from
/// `offset`) and its length in bytes.
fn packed_side(d: &ImageDesc, region: [usize; 3], offset: usize) -> CLResult<(RectSide, usize)> {
    let row = region[0] * d.element_size;
    let slice = row.checked_mul(region[1]).ok_or(CL_INVALID_VALUE)?;
    let len = slice.checked_mul(region[2]).ok_or(CL_INVALID_VALUE)?;
    Ok((([offset, 0, 0], row, slice), len))
}

/// (start address, length) of the bytes an image region spans.
fn image_span(mem: &Mem, d: &ImageDesc, origin: [usize; 3], region: [usize; 3]) -> (usize, usize) {
    let first = d.offset_of(origin);
    let last = d.offset_of([
        origin[0] + region[0] - 1,
        origin[1] + region[1] - 1,
        origin[2] + region[2] - 1,
    ]) + d.element_size;
    (mem.address() as usize + first, last - first)
}

fn spans_meet(a: (usize, usize), b: (usize, usize)) -> bool {
    a.0 < b.0 + b.1 && b.0 < a.0 + a.1
}

impl Command {
    pub fn kernel(launch: KernelLaunch) -> Self {
        Command::Kernel {
            launch,
            task: false,
        }
    }

    pub fn task(launch: KernelLaunch) -> Self {
        Command::Kernel { launch, task: true }
    }

    pub fn read_buffer(mem: Arc<Mem>, offset: usize, size: usize, dst: HostPtr) -> CLResult<Self> {
        mem.expect_buffer()?;
        mem.check_host_read()?;
        mem.check_range(offset, size)?;
        Ok(Command::ReadBuffer {
            mem,
            offset,
            size,
            dst,
        })
    }

    pub fn write_buffer(mem: Arc<Mem>, offset: usize, size: usize, src: HostPtr) -> CLResult<Self> {
        mem.expect_buffer()?;
        mem.check_host_write()?;
        mem.check_range(offset, size)?;
        Ok(Command::WriteBuffer {
            mem,
            offset,
            size,
            src,
        })
    }

    pub fn copy_buffer(
        src: Arc<Mem>,
        dst: Arc<Mem>,
        src_offset: usize,
        dst_offset: usize,
        size: usize,
    ) -> CLResult<Self> {
        src.expect_buffer()?;
        dst.expect_buffer()?;
        if size == 0 {
            return Err(CL_INVALID_VALUE);
        }
        src.check_range(src_offset, size)?;
        dst.check_range(dst_offset, size)?;
        let s = src.address() as usize + src_offset;
        let d = dst.address() as usize + dst_offset;
        if src.shares_storage(&dst) && s < d + size && d < s + size {
            return Err(CL_MEM_COPY_OVERLAP);
        }
        Ok(Command::CopyBuffer {
            src,
            dst,
            src_offset,
            dst_offset,
            size,
        })
    }

    /// The pattern is copied now: the application may reuse its memory at once.
    pub fn fill_buffer(
        mem: Arc<Mem>,
        pattern: &[u8],
        offset: usize,
        size: usize,
    ) -> CLResult<Self> {
        mem.expect_buffer()?;
        let n = pattern.len();
        if !valid_pattern_size(n) || !offset.is_multiple_of(n) || !size.is_multiple_of(n) {
            return Err(CL_INVALID_VALUE);
        }
        mem.check_range(offset, size)?;
        Ok(Command::FillBuffer {
            mem,
            offset,
            size,
            pattern: pattern.to_vec(),
        })
    }

    /// `rect` as given by the application, buffer side first (`src_*`).
    pub fn read_buffer_rect(mem: Arc<Mem>, rect: Rect, dst: HostPtr) -> CLResult<Self> {
        mem.expect_buffer()?;
        mem.check_host_read()?;
        let rect = rect.normalise()?;
        if rect.src_extent().is_none_or(|e| e > mem.size) || rect.dst_extent().is_none() {
            return Err(CL_INVALID_VALUE);
        }
        Ok(Command::ReadBufferRect { mem, rect, dst })
    }

    /// `rect` as given by the application, host side first (`src_*`).
    pub fn write_buffer_rect(mem: Arc<Mem>, rect: Rect, src: HostPtr) -> CLResult<Self> {
        mem.expect_buffer()?;
        mem.check_host_write()?;
        let rect = rect.normalise()?;
        if rect.dst_extent().is_none_or(|e| e > mem.size) || rect.src_extent().is_none() {
            return Err(CL_INVALID_VALUE);
        }
        Ok(Command::WriteBufferRect { mem, rect, src })
    }

    pub fn copy_buffer_rect(src: Arc<Mem>, dst: Arc<Mem>, rect: Rect) -> CLResult<Self> {
        src.expect_buffer()?;
        dst.expect_buffer()?;
        let rect = rect.normalise()?;
        let src_end = rect
            .src_extent()
            .filter(|&e| e <= src.size)
            .ok_or(CL_INVALID_VALUE)?;
        let dst_end = rect
            .dst_extent()
            .filter(|&e| e <= dst.size)
            .ok_or(CL_INVALID_VALUE)?;
        if src.shares_storage(&dst) {
            if Arc::ptr_eq(&src, &dst)
                && (rect.src_row_pitch != rect.dst_row_pitch
                    || rect.src_slice_pitch != rect.dst_slice_pitch)
            {
                return Err(CL_INVALID_VALUE);
            }
            let s0 = src.address() as usize;
            let d0 = dst.address() as usize;
            if s0 < d0 + dst_end && d0 < s0 + src_end {
                // Conservative: overlapping byte spans of the two rectangles.
                return Err(CL_MEM_COPY_OVERLAP);
            }
        }
        Ok(Command::CopyBufferRect { src, dst, rect })
    }

    /// Checks the map and records it; returns the command and the mapped pointer. If the
    /// command is not submitted after all, [`Command::cancel_map`] undoes the record.
    pub fn map_buffer(
        mem: Arc<Mem>,
        flags: cl_map_flags,
        offset: usize,
        size: usize,
    ) -> CLResult<(Self, *mut u8)> {
        mem.expect_buffer()?;
        check_map_flags(flags)?;
        if flags & CL_MAP_READ as cl_map_flags != 0 {
            mem.check_host_read()?;
        }
        if flags & (CL_MAP_WRITE | CL_MAP_WRITE_INVALIDATE_REGION) as cl_map_flags != 0 {
            mem.check_host_write()?;
        }
        if size == 0 {
            return Err(CL_INVALID_VALUE);
        }
        mem.check_range(offset, size)?;
        let ptr = mem.map(offset);
        Ok((Command::MapBuffer { mem }, ptr))
    }

    /// `clEnqueueReadImage`: `row_pitch`/`slice_pitch` describe the host memory (0: tight).
    /// Image origins have a fourth component, read for the mip level of mipmapped 2D arrays
    /// and 3D images only ([`ImageDesc::at_level`]).
    pub fn read_image(
        mem: Arc<Mem>,
        origin: [usize; 4],
        region: [usize; 3],
        row_pitch: usize,
        slice_pitch: usize,
        dst: HostPtr,
    ) -> CLResult<Self> {
        let (d, origin) = mem.expect_image()?.at_level(origin)?;
        mem.check_host_read()?;
        let rect = host_rect(&d, origin, region, row_pitch, slice_pitch, true)?;
        Ok(Command::ReadImage { mem, rect, dst })
    }

    /// `clEnqueueWriteImage`: `row_pitch`/`slice_pitch` describe the host memory (0: tight).
    pub fn write_image(
        mem: Arc<Mem>,
        origin: [usize; 4],
        region: [usize; 3],
        row_pitch: usize,
        slice_pitch: usize,
        src: HostPtr,
    ) -> CLResult<Self> {
        let (d, origin) = mem.expect_image()?.at_level(origin)?;
        mem.check_host_write()?;
        let rect = host_rect(&d, origin, region, row_pitch, slice_pitch, false)?;
        Ok(Command::WriteImage { mem, rect, src })
    }

    /// `clEnqueueCopyImage`: the same format on both sides (CL_IMAGE_FORMAT_MISMATCH), no
    /// overlap within one image (CL_MEM_COPY_OVERLAP; different levels of one image do not
    /// overlap).
    pub fn copy_image(
        src: Arc<Mem>,
        dst: Arc<Mem>,
        src_origin: [usize; 4],
        dst_origin: [usize; 4],
        region: [usize; 3],
    ) -> CLResult<Self> {
        let (s, d) = (*src.expect_image()?, *dst.expect_image()?);
        if s.format != d.format {
            return Err(CL_IMAGE_FORMAT_MISMATCH);
        }
        let (s, src_origin) = s.at_level(src_origin)?;
        let (d, dst_origin) = d.at_level(dst_origin)?;
        s.check_region(src_origin, region)?;
        d.check_region(dst_origin, region)?;
        let (so, sy, sz, bytes) = s.rect_side(src_origin, region);
        let (dox, dy, dz, _) = d.rect_side(dst_origin, region);
        if Arc::ptr_eq(&src, &dst) {
            let boxes_meet = s.level_offset == d.level_offset
                && (0..3).all(|k| {
                    src_origin[k] < dst_origin[k] + region[k]
                        && dst_origin[k] < src_origin[k] + region[k]
                });
            if boxes_meet {
                return Err(CL_MEM_COPY_OVERLAP);
            }
        } else if src.shares_storage(&dst)
            && spans_meet(
                image_span(&src, &s, src_origin, region),
                image_span(&dst, &d, dst_origin, region),
            )
        {
            return Err(CL_MEM_COPY_OVERLAP);
        }
        Ok(Command::CopyImage {
            command_type: CL_COMMAND_COPY_IMAGE as cl_command_type,
            src,
            dst,
            rect: rect((so, sy, sz), (dox, dy, dz), bytes),
        })
    }

    /// `clEnqueueCopyImageToBuffer`: the buffer side is tightly packed from `dst_offset`.
    pub fn copy_image_to_buffer(
        src: Arc<Mem>,
        dst: Arc<Mem>,
        src_origin: [usize; 4],
        region: [usize; 3],
        dst_offset: usize,
    ) -> CLResult<Self> {
        let (s, src_origin) = src.expect_image()?.at_level(src_origin)?;
        dst.expect_buffer()?;
        s.check_region(src_origin, region)?;
        let (packed, len) = packed_side(&s, region, dst_offset)?;
        dst.check_range(dst_offset, len)?;
        if src.shares_storage(&dst)
            && spans_meet(
                image_span(&src, &s, src_origin, region),
                (dst.address() as usize + dst_offset, len),
            )
        {
            return Err(CL_MEM_COPY_OVERLAP);
        }
        let (so, sy, sz, bytes) = s.rect_side(src_origin, region);
        Ok(Command::CopyImage {
            command_type: CL_COMMAND_COPY_IMAGE_TO_BUFFER as cl_command_type,
            src,
            dst,
            rect: rect((so, sy, sz), packed, bytes),
        })
    }

    /// `clEnqueueCopyBufferToImage`: the buffer side is tightly packed from `src_offset`.
    pub fn copy_buffer_to_image(
        src: Arc<Mem>,
        dst: Arc<Mem>,
        src_offset: usize,
        dst_origin: [usize; 4],
        region: [usize; 3],
    ) -> CLResult<Self> {
        src.expect_buffer()?;
        let (d, dst_origin) = dst.expect_image()?.at_level(dst_origin)?;
        d.check_region(dst_origin, region)?;
        let (packed, len) = packed_side(&d, region, src_offset)?;
        src.check_range(src_offset, len)?;
        if src.shares_storage(&dst)
            && spans_meet(
                (src.address() as usize + src_offset, len),
                image_span(&dst, &d, dst_origin, region),
            )
        {
            return Err(CL_MEM_COPY_OVERLAP);
        }
        let (dox, dy, dz, bytes) = d.rect_side(dst_origin, region);
        Ok(Command::CopyImage {
            command_type: CL_COMMAND_COPY_BUFFER_TO_IMAGE as cl_command_type,
            src,
            dst,
            rect: rect(packed, (dox, dy, dz), bytes),
        })
    }

    /// `clEnqueueFillImage`: `fill_color` holds [`fill_color_size`] bytes — four floats, ints
    /// or uints as the channel data type reads, or one float for a depth image — converted
    /// now exactly as a kernel write converts it.
    pub fn fill_image(
        mem: Arc<Mem>,
        fill_color: &[u8],
        origin: [usize; 4],
        region: [usize; 3],
    ) -> CLResult<Self> {
        let (d, origin) = mem.expect_image()?.at_level(origin)?;
        d.check_region(origin, region)?;
        let color = fill_color_of(&d, fill_color).ok_or(CL_INVALID_VALUE)?;
        let texel = crate::pixel::encode(d.format.order, d.format.data_type, color)
            .ok_or(CL_INVALID_VALUE)?;
        Ok(Command::FillImage {
            mem,
            desc: d,
            origin,
            region,
            texel,
        })
    }

    /// `clEnqueueMapImage`: the command, the pointer to pixel `origin` inside the image (maps
    /// are zero-copy) and the image's (the mip level's) row and slice pitch (slice pitch 0
    /// for 1D and 2D images).
    pub fn map_image(
        mem: Arc<Mem>,
        flags: cl_map_flags,
        origin: [usize; 4],
        region: [usize; 3],
    ) -> CLResult<(Self, *mut u8, usize, usize)> {
        let (d, origin) = mem.expect_image()?.at_level(origin)?;
        check_map_flags(flags)?;
        if flags & CL_MAP_READ as cl_map_flags != 0 {
            mem.check_host_read()?;
        }
        if flags & (CL_MAP_WRITE | CL_MAP_WRITE_INVALIDATE_REGION) as cl_map_flags != 0 {
            mem.check_host_write()?;
        }
        d.check_region(origin, region)?;
        let ptr = mem.map(d.offset_of(origin));
        let slice_pitch = if d.has_slices() { d.slice_pitch } else { 0 };
        Ok((Command::MapImage { mem }, ptr, d.row_pitch, slice_pitch))
    }

    /// Undoes [`Command::map_buffer`]'s record for a map that did not happen.
    pub fn cancel_map(mem: &Mem, ptr: *mut u8) {
        if mem.unmap_check(ptr).is_ok() {
            mem.unmap_done();
        }
    }

    /// CL_INVALID_VALUE unless `ptr` came from a map of `mem` not yet unmapped;
    /// CL_INVALID_MEM_OBJECT for a pipe (API spec, clEnqueueUnmapMemObject).
    pub fn unmap(mem: Arc<Mem>, ptr: *mut u8) -> CLResult<Self> {
        if mem.pipe().is_some() {
            return Err(CL_INVALID_MEM_OBJECT);
        }
        mem.unmap_check(ptr)?;
        Ok(Command::Unmap { mem })
    }

    /// Pipes too: the API spec lets any memory object migrate.
    pub fn migrate(mems: Vec<Arc<Mem>>, flags: cl_mem_migration_flags) -> CLResult<Self> {
        if mems.is_empty() {
            return Err(CL_INVALID_VALUE);
        }
        check_migration_flags(flags)?;
        Ok(Command::Migrate { mems })
    }

    /// `clEnqueueSVMMemcpy` / `clEnqueueMemcpyINTEL` (`command_type`): each side inside one
    /// allocation of `context`, or any host memory (the specs let either side be a host
    /// pointer).
    pub fn svm_memcpy(
        context: &Context,
        command_type: cl_command_type,
        dst: HostPtr,
        src: HostPtr,
        size: usize,
    ) -> CLResult<Self> {
        let (d, s) = (dst.0, src.0);
        // A range past the end of the address space is no memory at all; the overlap test
        // below would otherwise call it an overlap.
        if d.checked_add(size).is_none() || s.checked_add(size).is_none() {
            return Err(CL_INVALID_VALUE);
        }
        let overlap = s < d + size && d < s + size;
        if size > 0 && overlap {
            return Err(CL_MEM_COPY_OVERLAP);
        }
        // What lies inside an allocation must stay inside it.
        let mut keep = Vec::new();
        for p in [d, s] {
            keep.extend(context.svm.holding(p, size)?);
        }
        Ok(Command::SvmMemcpy {
            command_type,
            dst,
            src,
            size,
            _keep: keep,
        })
    }

    /// `clEnqueueSVMMemFill` / `clEnqueueMemFillINTEL` (`command_type`): the pattern is
    /// copied now.
    pub fn svm_mem_fill(
        context: &Context,
        command_type: cl_command_type,
        dst: HostPtr,
        pattern: &[u8],
        size: usize,
    ) -> CLResult<Self> {
        let n = pattern.len();
        if !valid_pattern_size(n) || !dst.0.is_multiple_of(n) || !size.is_multiple_of(n) {
            return Err(CL_INVALID_VALUE);
        }
        // Host memory outside every allocation (fine-grain system SVM, USM memset of a host
        // pointer) is not checked against an allocation's end: the range must at least exist.
        if dst.0.checked_add(size).is_none() {
            return Err(CL_INVALID_VALUE);
        }
        // A fill of no bytes touches no memory: any pointer will do (cl_khr_unified_svm).
        let keep = if size == 0 {
            None
        } else {
            context.svm.resolve(context.svm_level(), dst.0, size)?
        };
        Ok(Command::SvmMemFill {
            command_type,
            dst,
            size,
            pattern: pattern.to_vec(),
            _keep: keep,
        })
    }

    /// `clEnqueueSVMMap`: zero-copy, the command only orders the map.
    pub fn svm_map(
        context: &Context,
        flags: cl_map_flags,
        ptr: usize,
        size: usize,
    ) -> CLResult<Self> {
        check_map_flags(flags)?;
        if size == 0 {
            return Err(CL_INVALID_VALUE);
        }
        context.svm.check_mappable(context.svm_level(), ptr)?;
        Self::svm_order(context, CL_COMMAND_SVM_MAP as _, &[(ptr, size)])
    }

    /// `clEnqueueSVMUnmap`: as the map, an order only.
    pub fn svm_unmap(context: &Context, ptr: usize) -> CLResult<Self> {
        context.svm.check_mappable(context.svm_level(), ptr)?;
        Self::svm_order(context, CL_COMMAND_SVM_UNMAP as _, &[(ptr, 0)])
    }

    /// `clEnqueueSVMMigrateMem` / `clEnqueueMigrateMemINTEL` (`command_type`): `regions` are
    /// (pointer, size) pairs, size 0 meaning the rest of the allocation.
    pub fn svm_migrate(
        context: &Context,
        command_type: cl_command_type,
        regions: &[(usize, usize)],
        flags: cl_mem_migration_flags,
    ) -> CLResult<Self> {
        check_migration_flags(flags)?;
        Self::svm_order(context, command_type, regions)
    }

    /// `clEnqueueSVMUnmap` (size 0: the region a map named) and `clEnqueueMemAdviseINTEL`,
    /// and the map and migrate constructors above: commands that only order, holding what
    /// `regions` ((pointer, size) pairs) lie in.
    pub fn svm_order(
        context: &Context,
        command_type: cl_command_type,
        regions: &[(usize, usize)],
    ) -> CLResult<Self> {
        let mut keep = Vec::new();
        for &(p, size) in regions {
            if p == 0 {
                return Err(CL_INVALID_VALUE);
            }
            keep.extend(context.svm.holding(p, size)?);
        }
        Ok(Command::SvmOrder {
            command_type,
            _keep: keep,
        })
    }

    /// `clEnqueueSVMFree`.
    pub fn svm_free(
        context: Arc<Context>,
        queue: usize,
        pointers: Vec<usize>,
        callback: Option<(SvmFreeCallback, usize)>,
    ) -> Self {
        Command::SvmFree {
            context,
            queue,
            pointers,
            callback,
        }
    }

    /// `CL_EVENT_COMMAND_TYPE` of the command's event.
    pub fn command_type(&self) -> cl_command_type {
        (match self {
            Command::Kernel { task: false, .. } => CL_COMMAND_NDRANGE_KERNEL,
            Command::Kernel { task: true, .. } => CL_COMMAND_TASK,
            Command::ReadBuffer { .. } => CL_COMMAND_READ_BUFFER,
            Command::WriteBuffer { .. } => CL_COMMAND_WRITE_BUFFER,
            Command::CopyBuffer { .. } => CL_COMMAND_COPY_BUFFER,
            Command::FillBuffer { .. } => CL_COMMAND_FILL_BUFFER,
            Command::ReadBufferRect { .. } => CL_COMMAND_READ_BUFFER_RECT,
            Command::WriteBufferRect { .. } => CL_COMMAND_WRITE_BUFFER_RECT,
            Command::CopyBufferRect { .. } => CL_COMMAND_COPY_BUFFER_RECT,
            Command::MapBuffer { .. } => CL_COMMAND_MAP_BUFFER,
            Command::MapImage { .. } => CL_COMMAND_MAP_IMAGE,
            Command::ReadImage { .. } => CL_COMMAND_READ_IMAGE,
            Command::WriteImage { .. } => CL_COMMAND_WRITE_IMAGE,
            Command::FillImage { .. } => CL_COMMAND_FILL_IMAGE,
            Command::Unmap { .. } => CL_COMMAND_UNMAP_MEM_OBJECT,
            Command::Migrate { .. } => CL_COMMAND_MIGRATE_MEM_OBJECTS,
            Command::SvmFree { .. } => CL_COMMAND_SVM_FREE,
            Command::Semaphores { signal: true, .. } => return CL_COMMAND_SEMAPHORE_SIGNAL_KHR,
            Command::Semaphores { signal: false, .. } => return CL_COMMAND_SEMAPHORE_WAIT_KHR,
            Command::Buffer { .. } => return CL_COMMAND_COMMAND_BUFFER_KHR,
            Command::Sync { command_type }
            | Command::SvmOrder { command_type, .. }
            | Command::SvmMemcpy { command_type, .. }
            | Command::SvmMemFill { command_type, .. }
            | Command::CopyImage { command_type, .. } => return *command_type,
        }) as cl_command_type
    }

    /// Does the work, on the queue's worker once the wait list is complete.
    ///
    /// Buffer ranges were checked when the command was built and the command holds its
    /// objects; host pointers are the application's promise to keep them valid until the
    /// command completes (spec).
    pub fn run(&self, device: &Device, hints: JobHints) -> CLResult<()> {
        let pool: Workers = (&device.pool, hints);
        match self {
            Command::Kernel { launch, .. } => return launch.run(hints),
            Command::Buffer { commands } => {
                for c in commands.iter() {
                    c.run(device, hints)?;
                }
            }
            Command::ReadBuffer {
                mem,
                offset,
                size,
                dst,
            } => {
                // SAFETY: range checked at build; `dst` per the application.
                unsafe { copy_bytes(pool, mem.address().add(*offset), dst.get(), *size) }
            }
            Command::WriteBuffer {
                mem,
                offset,
                size,
                src,
            } => {
                // SAFETY: range checked at build; `src` per the application.
                unsafe { copy_bytes(pool, src.get(), mem.address().add(*offset), *size) }
            }
            Command::CopyBuffer {
                src,
                dst,
                src_offset,
                dst_offset,
                size,
            } => {
                // SAFETY: both ranges checked at build, and that they do not overlap.
                unsafe {
                    copy_bytes(
                        pool,
                        src.address().add(*src_offset),
                        dst.address().add(*dst_offset),
                        *size,
                    )
                }
            }
            Command::FillBuffer {
                mem,
                offset,
                size,
                pattern,
            } => {
                // SAFETY: range checked at build.
                unsafe { fill_bytes(pool, mem.address().add(*offset), *size, pattern) }
            }
            Command::ReadBufferRect { mem, rect, dst } => {
                // SAFETY: the buffer-side extent checked at build; the host side per the
                // application.
                unsafe { rect.copy(mem.address(), dst.get()) }
            }
            Command::WriteBufferRect { mem, rect, src } => {
                // SAFETY: as for reads, the other way round.
                unsafe { rect.copy(src.get(), mem.address()) }
            }
            Command::CopyBufferRect { src, dst, rect } => {
                // SAFETY: both extents checked at build.
                unsafe { rect.copy(src.address(), dst.address()) }
            }
            Command::ReadImage { mem, rect, dst } => {
                // SAFETY: the image side checked at build; the host side per the application.
                unsafe { rect.copy(mem.address(), dst.get()) }
            }
            Command::WriteImage { mem, rect, src } => {
                // SAFETY: as for reads, the other way round.
                unsafe { rect.copy(src.get(), mem.address()) }
            }
            Command::CopyImage { src, dst, rect, .. } => {
                // SAFETY: both sides checked at build, and that they do not overlap.
                unsafe { rect.copy(src.address(), dst.address()) }
            }
            Command::FillImage {
                mem,
                desc: d,
                origin,
                region,
                texel,
            } => {
                for z in 0..region[2] {
                    for y in 0..region[1] {
                        let at = d.offset_of([origin[0], origin[1] + y, origin[2] + z]);
                        // SAFETY: every row of the region lies inside the image (checked at
                        // build).
                        unsafe { fill(mem.address().add(at), region[0] * d.element_size, texel) }
                    }
                }
            }
            Command::Unmap { mem } => mem.unmap_done(),
            Command::SvmMemcpy { dst, src, size, .. } => {
                // SAFETY: SVM sides checked inside their allocations (held by the command);
                // host sides per the application; no overlap (checked at build).
                unsafe { copy_bytes(pool, src.get(), dst.get(), *size) }
            }
            Command::SvmMemFill {
                dst, size, pattern, ..
            } => {
                // SAFETY: as for the copy.
                unsafe { fill_bytes(pool, dst.get(), *size, pattern) }
            }
            Command::SvmFree {
                context,
                queue,
                pointers,
                callback,
            } => match callback {
                Some((f, user_data)) => {
                    // The callback may write the list; it gets its own copy.
                    let mut pointers = pointers.clone();
                    // SAFETY: the application's callback, with the arguments the spec gives
                    // it (the queue handle, and the list it enqueued, copied).
                    unsafe {
                        f(
                            *queue as cl_command_queue,
                            pointers.len() as cl_uint,
                            pointers.as_mut_ptr().cast(),
                            *user_data as *mut std::ffi::c_void,
                        )
                    }
                }
                None => {
                    for &p in pointers {
                        context.svm.free(p);
                    }
                }
            },
            Command::Semaphores { signal, semaphores } => {
                for s in semaphores {
                    if *signal {
                        s.signal();
                    } else {
                        s.unsignal();
                    }
                }
            }
            Command::MapBuffer { .. }
            | Command::MapImage { .. }
            | Command::Migrate { .. }
            | Command::Sync { .. }
            | Command::SvmOrder { .. } => {}
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::context::Context;
    use crate::platform::platform;

    fn buffer(size: usize, flags: u64) -> Arc<Mem> {
        let d = platform().devices[0].clone();
        let c = Context::new(vec![d], Vec::new());
        // SAFETY: no host pointer.
        unsafe { Mem::new_buffer(c, flags, size, std::ptr::null_mut(), Vec::new()) }.unwrap()
    }

    fn dev() -> &'static Device {
        &platform().devices[0]
    }

    fn host(buf: &mut [u8]) -> HostPtr {
        HostPtr::new(buf.as_mut_ptr()).unwrap()
    }

    #[test]
    fn write_then_read_round_trips() {
        let m = buffer(64, CL_MEM_READ_WRITE as _);
        let mut src: Vec<u8> = (0..16).collect();
        let mut dst = vec![0u8; 16];
        Command::write_buffer(m.clone(), 8, 16, host(&mut src))
            .unwrap()
            .run(dev(), JobHints::default())
            .unwrap();
        Command::read_buffer(m, 8, 16, host(&mut dst))
            .unwrap()
            .run(dev(), JobHints::default())
            .unwrap();
        assert_eq!(src, dst);
    }

    #[test]
    fn enqueue_time_errors() {
        let m = buffer(64, CL_MEM_HOST_WRITE_ONLY as _);
        let mut b = vec![0u8; 128];
        assert!(HostPtr::new(std::ptr::null::<u8>()).is_err());
        assert_eq!(
            Command::read_buffer(m.clone(), 0, 4, host(&mut b)).err(),
            Some(CL_INVALID_OPERATION)
        );
        assert_eq!(
            Command::write_buffer(m.clone(), 60, 8, host(&mut b)).err(),
            Some(CL_INVALID_VALUE)
        );
        assert_eq!(
            Command::copy_buffer(m.clone(), m.clone(), 0, 8, 16).err(),
            Some(CL_MEM_COPY_OVERLAP)
        );
        assert_eq!(
            Command::fill_buffer(m.clone(), &[0; 3], 0, 6).err(),
            Some(CL_INVALID_VALUE)
        );
        assert_eq!(
            Command::map_buffer(m.clone(), CL_MAP_READ as _, 0, 4).err(),
            Some(CL_INVALID_OPERATION)
        );
        assert_eq!(
            Command::unmap(m, b.as_mut_ptr()).err(),
            Some(CL_INVALID_VALUE)
        );
    }

    #[test]
    fn fill_and_copy_rect() {
        let a = buffer(64, 0);
        let b = buffer(64, 0);
        Command::fill_buffer(a.clone(), &[1, 2], 0, 64)
            .unwrap()
            .run(dev(), JobHints::default())
            .unwrap();
        let rect = Rect {
            region: [2, 2, 1],
            src_origin: [0, 0, 0],
            src_row_pitch: 8,
            src_slice_pitch: 0,
            dst_origin: [1, 1, 0],
            dst_row_pitch: 8,
            dst_slice_pitch: 0,
        };
        let cmd = Command::copy_buffer_rect(a, b.clone(), rect).unwrap();
        assert_eq!(
            cmd.command_type(),
            CL_COMMAND_COPY_BUFFER_RECT as cl_command_type
        );
        cmd.run(dev(), JobHints::default()).unwrap();
        let mut out = vec![0u8; 24];
        Command::read_buffer(b, 0, 24, host(&mut out))
            .unwrap()
            .run(dev(), JobHints::default())
            .unwrap();
        assert_eq!(&out[8..11], &[0, 1, 2]);
        assert_eq!(&out[16..19], &[0, 1, 2]);
    }

    #[test]
    fn large_copies_and_fills_split_across_workers_stay_exact() {
        let pool = WorkerPool::new("test-worker", 3, |_| {}).unwrap();
        let pool = (&pool, JobHints::default());
        let len = 9 * PIECE_BYTES + 4096 + 16;
        let src: Vec<u8> = (0..len).map(|i| (i * 7 % 251) as u8).collect();
        let mut dst = vec![0u8; len + 64];
        // SAFETY: both hold len bytes; distinct vectors.
        unsafe { copy_bytes(pool, src.as_ptr(), dst.as_mut_ptr(), len) };
        assert_eq!(&dst[..len], &src[..]);
        assert!(dst[len..].iter().all(|&b| b == 0));
        // Onto itself (a USE_HOST_PTR buffer read into its own memory): unchanged.
        let before = dst.clone();
        // SAFETY: the same len bytes as source and destination.
        unsafe { copy_bytes(pool, dst.as_ptr(), dst.as_mut_ptr(), len) };
        assert_eq!(dst, before);
        let pattern: Vec<u8> = (1..=16).collect();
        // SAFETY: len bytes of dst.
        unsafe { fill_bytes(pool, dst.as_mut_ptr(), len, &pattern) };
        assert!(dst[..len].chunks(16).all(|c| c == &pattern[..c.len()]));
        assert!(dst[len..].iter().all(|&b| b == 0));
    }

    /// A context whose device has images (`FERROCL_IMAGES=on`).
    fn image_context() -> (Arc<Context>, Arc<Device>) {
        let settings = crate::settings::Settings::parse(
            |k| (k == "FERROCL_IMAGES").then(|| "on".to_owned()),
            |w| panic!("{w}"),
        );
        let d = crate::platform::test_device(&settings);
        (Context::new(vec![d.clone()], Vec::new()), d)
    }

    fn image(c: &Arc<Context>, ty: u32, size: [usize; 4], order: u32, data_type: u32) -> Arc<Mem> {
        let request = crate::image::ImageRequest {
            image_type: ty,
            width: size[0],
            height: size[1],
            depth: size[2],
            array_size: size[3],
            row_pitch: 0,
            slice_pitch: 0,
            num_mip_levels: 0,
            num_samples: 0,
            source: None,
        };
        let format = cl_image_format {
            image_channel_order: order,
            image_channel_data_type: data_type,
        };
        // SAFETY: no host pointer.
        unsafe {
            Mem::new_image(
                c.clone(),
                0,
                Some(&format),
                &request,
                std::ptr::null_mut(),
                vec![],
            )
        }
        .unwrap()
    }

    #[test]
    fn image_commands_move_pixels_through_pitches() {
        let (c, d) = image_context();
        let img = image(
            &c,
            CL_MEM_OBJECT_IMAGE2D,
            [4, 3, 0, 0],
            CL_RGBA,
            CL_UNORM_INT8,
        );
        // Two rows of two texels from host memory with 12-byte rows, at (1, 1).
        let mut src: Vec<u8> = (0..24).collect();
        Command::write_image(img.clone(), [1, 1, 0, 0], [2, 2, 1], 12, 0, host(&mut src))
            .unwrap()
            .run(&d, JobHints::default())
            .unwrap();
        let mut all = vec![0u8; 48];
        Command::read_image(img.clone(), [0; 4], [4, 3, 1], 0, 0, host(&mut all))
            .unwrap()
            .run(&d, JobHints::default())
            .unwrap();
        assert_eq!(&all[20..28], &src[0..8]);
        assert_eq!(&all[36..44], &src[12..20]);
        assert!(all[..20].iter().all(|&b| b == 0));
        // Fill converts the colour once: (0.5, 0, 1, 0.2) → (128, 0, 255, 51).
        let color: Vec<u8> = [0.5f32, 0.0, 1.0, 0.2]
            .iter()
            .flat_map(|f| f.to_ne_bytes())
            .collect();
        Command::fill_image(img.clone(), &color, [3, 0, 0, 0], [1, 3, 1])
            .unwrap()
            .run(&d, JobHints::default())
            .unwrap();
        Command::read_image(img.clone(), [0; 4], [4, 3, 1], 0, 0, host(&mut all))
            .unwrap()
            .run(&d, JobHints::default())
            .unwrap();
        for y in 0..3 {
            assert_eq!(
                &all[y * 16 + 12..y * 16 + 16],
                &[128, 0, 255, 51],
                "row {y}"
            );
        }
        // Maps point into the image, with its pitches.
        let (_, p, row, slice) =
            Command::map_image(img.clone(), CL_MAP_READ as _, [1, 2, 0, 0], [1, 1, 1]).unwrap();
        assert_eq!(p, img.address().wrapping_add(2 * 16 + 4));
        assert_eq!((row, slice), (16, 0));
        Command::cancel_map(&img, p);
    }

    #[test]
    fn image_commands_check_their_input() {
        let (c, _) = image_context();
        let img = image(
            &c,
            CL_MEM_OBJECT_IMAGE2D,
            [4, 4, 0, 0],
            CL_RGBA,
            CL_UNORM_INT8,
        );
        let other = image(&c, CL_MEM_OBJECT_IMAGE2D, [4, 4, 0, 0], CL_R, CL_FLOAT);
        let arr = image(
            &c,
            CL_MEM_OBJECT_IMAGE1D_ARRAY,
            [8, 0, 0, 3],
            CL_RGBA,
            CL_UNORM_INT8,
        );
        let buf = {
            // SAFETY: no host pointer.
            unsafe { Mem::new_buffer(c.clone(), 0, 64, std::ptr::null_mut(), Vec::new()) }.unwrap()
        };
        let mut b = vec![0u8; 256];
        let err = |r: CLResult<Command>| r.err();
        assert_eq!(
            err(Command::read_image(
                img.clone(),
                [0, 0, 1, 0],
                [1, 1, 1],
                0,
                0,
                host(&mut b)
            )),
            Some(CL_INVALID_VALUE),
            "origin[2] of a 2D image"
        );
        assert_eq!(
            err(Command::read_image(
                arr.clone(),
                [0, 1, 0, 0],
                [8, 3, 1],
                0,
                0,
                host(&mut b)
            )),
            Some(CL_INVALID_VALUE),
            "past the last layer"
        );
        assert!(
            Command::read_image(arr.clone(), [0, 1, 0, 0], [8, 2, 1], 0, 0, host(&mut b)).is_ok()
        );
        assert_eq!(
            err(Command::read_image(
                buf.clone(),
                [0; 4],
                [1, 1, 1],
                0,
                0,
                host(&mut b)
            )),
            Some(CL_INVALID_MEM_OBJECT)
        );
        assert_eq!(
            err(Command::read_buffer(img.clone(), 0, 4, host(&mut b))),
            Some(CL_INVALID_MEM_OBJECT)
        );
        assert_eq!(
            err(Command::copy_image(
                img.clone(),
                other,
                [0; 4],
                [0; 4],
                [1, 1, 1]
            )),
            Some(CL_IMAGE_FORMAT_MISMATCH)
        );
        assert_eq!(
            err(Command::copy_image(
                img.clone(),
                img.clone(),
                [0; 4],
                [1, 1, 0, 0],
                [2, 2, 1]
            )),
            Some(CL_MEM_COPY_OVERLAP)
        );
        assert!(
            Command::copy_image(img.clone(), img.clone(), [0; 4], [2, 2, 0, 0], [2, 2, 1]).is_ok()
        );
        assert_eq!(
            err(Command::copy_image_to_buffer(
                img.clone(),
                buf.clone(),
                [0; 4],
                [4, 4, 1],
                4
            )),
            Some(CL_INVALID_VALUE),
            "64 bytes do not fit after offset 4"
        );
        assert!(
            Command::copy_image_to_buffer(img.clone(), buf.clone(), [0; 4], [4, 4, 1], 0).is_ok()
        );
        assert_eq!(
            err(Command::fill_image(img.clone(), &[0; 8], [0; 4], [1, 1, 1])),
            Some(CL_INVALID_VALUE),
            "a colour of 8 bytes"
        );
        assert_eq!(
            Command::map_image(arr, CL_MAP_WRITE as _, [0; 4], [9, 1, 1]).err(),
            Some(CL_INVALID_VALUE)
        );
    }

    #[test]
    fn map_is_recorded_until_unmap_or_cancel() {
        let m = buffer(64, 0);
        let (cmd, p) = Command::map_buffer(m.clone(), CL_MAP_WRITE as _, 16, 8).unwrap();
        assert_eq!(p, m.address().wrapping_add(16));
        assert_eq!(m.map_count(), 1);
        cmd.run(dev(), JobHints::default()).unwrap();
        Command::unmap(m.clone(), p)
            .unwrap()
            .run(dev(), JobHints::default())
            .unwrap();
        assert_eq!(m.map_count(), 0);
        let (_, p) = Command::map_buffer(m.clone(), CL_MAP_READ as _, 0, 8).unwrap();
        Command::cancel_map(&m, p);
        assert_eq!(m.map_count(), 0);
        assert!(Command::unmap(m, p).is_err());
    }
}
