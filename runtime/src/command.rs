//! Commands a queue runs: what each `clEnqueue*` asks for, checked when it is built (ranges,
//! host access, overlap: the spec's enqueue-time errors) and run later by the queue's worker.
//! The icd layer only converts C arguments into these; image and SVM commands join the enum.

use std::sync::Arc;

use opencl_sys::*;

use crate::context::Context;
use crate::executor::{JobHints, WorkerPool};
use crate::kernel::KernelLaunch;
use crate::memory::{fill, Mem, Rect};
use crate::object::CLResult;
use crate::platform::Device;
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

    fn get(self) -> *mut u8 {
        self.0 as *mut u8
    }
}

/// Map flags accepted by clEnqueueMapBuffer, clEnqueueSVMMap (and clEnqueueMapImage later).
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
        mem.check_host_read()?;
        let rect = rect.normalise()?;
        if rect.src_extent().is_none_or(|e| e > mem.size) || rect.dst_extent().is_none() {
            return Err(CL_INVALID_VALUE);
        }
        Ok(Command::ReadBufferRect { mem, rect, dst })
    }

    /// `rect` as given by the application, host side first (`src_*`).
    pub fn write_buffer_rect(mem: Arc<Mem>, rect: Rect, src: HostPtr) -> CLResult<Self> {
        mem.check_host_write()?;
        let rect = rect.normalise()?;
        if rect.dst_extent().is_none_or(|e| e > mem.size) || rect.src_extent().is_none() {
            return Err(CL_INVALID_VALUE);
        }
        Ok(Command::WriteBufferRect { mem, rect, src })
    }

    pub fn copy_buffer_rect(src: Arc<Mem>, dst: Arc<Mem>, rect: Rect) -> CLResult<Self> {
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

    /// Undoes [`Command::map_buffer`]'s record for a map that did not happen.
    pub fn cancel_map(mem: &Mem, ptr: *mut u8) {
        if mem.unmap_check(ptr).is_ok() {
            mem.unmap_done();
        }
    }

    /// CL_INVALID_VALUE unless `ptr` came from a map of `mem` not yet unmapped.
    pub fn unmap(mem: Arc<Mem>, ptr: *mut u8) -> CLResult<Self> {
        mem.unmap_check(ptr)?;
        Ok(Command::Unmap { mem })
    }

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
        let overlap = s < d.saturating_add(size) && d < s.saturating_add(size);
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
        let keep = context.svm.resolve(context.svm_level(), dst.0, size)?;
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
        Self::svm_order(context, CL_COMMAND_SVM_MAP as _, &[(ptr, size)])
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
            Command::Unmap { .. } => CL_COMMAND_UNMAP_MEM_OBJECT,
            Command::Migrate { .. } => CL_COMMAND_MIGRATE_MEM_OBJECTS,
            Command::SvmFree { .. } => CL_COMMAND_SVM_FREE,
            Command::Sync { command_type }
            | Command::SvmOrder { command_type, .. }
            | Command::SvmMemcpy { command_type, .. }
            | Command::SvmMemFill { command_type, .. } => return *command_type,
        }) as cl_command_type
    }

    /// Does the work, on the queue's worker once the wait list is complete.
    ///
    /// Buffer ranges were checked when the command was built and the command holds its
    /// objects; host pointers are the application's promise to keep them valid until the
    /// command completes (spec).
    pub fn run(self, device: &Device, hints: JobHints) -> CLResult<()> {
        let pool: Workers = (&device.pool, hints);
        match self {
            Command::Kernel { launch, .. } => return launch.run(hints),
            Command::ReadBuffer {
                mem,
                offset,
                size,
                dst,
            } => {
                // SAFETY: range checked at build; `dst` per the application.
                unsafe { copy_bytes(pool, mem.address().add(offset), dst.get(), size) }
            }
            Command::WriteBuffer {
                mem,
                offset,
                size,
                src,
            } => {
                // SAFETY: range checked at build; `src` per the application.
                unsafe { copy_bytes(pool, src.get(), mem.address().add(offset), size) }
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
                        src.address().add(src_offset),
                        dst.address().add(dst_offset),
                        size,
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
                unsafe { fill_bytes(pool, mem.address().add(offset), size, &pattern) }
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
            Command::Unmap { mem } => mem.unmap_done(),
            Command::SvmMemcpy { dst, src, size, .. } => {
                // SAFETY: SVM sides checked inside their allocations (held by the command);
                // host sides per the application; no overlap (checked at build).
                unsafe { copy_bytes(pool, src.get(), dst.get(), size) }
            }
            Command::SvmMemFill {
                dst, size, pattern, ..
            } => {
                // SAFETY: as for the copy.
                unsafe { fill_bytes(pool, dst.get(), size, &pattern) }
            }
            Command::SvmFree {
                context,
                queue,
                mut pointers,
                callback,
            } => match callback {
                Some((f, user_data)) => {
                    // SAFETY: the application's callback, with the arguments the spec gives
                    // it (the queue handle, and the list it enqueued, copied).
                    unsafe {
                        f(
                            queue as cl_command_queue,
                            pointers.len() as cl_uint,
                            pointers.as_mut_ptr().cast(),
                            user_data as *mut std::ffi::c_void,
                        )
                    }
                }
                None => {
                    for p in pointers {
                        context.svm.free(p);
                    }
                }
            },
            Command::MapBuffer { .. }
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
