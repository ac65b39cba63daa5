//! Memory objects: one `Mem` type for every kind of `cl_mem` ([`MemKind`]: buffers,
//! sub-buffers, images and pipes), over host allocations (aligned to
//! CL_DEVICE_MEM_BASE_ADDR_ALIGN) or the application's memory (CL_MEM_USE_HOST_PTR); the checks
//! every kind shares (host access, ranges), the byte copies behind the buffer commands
//! (`command.rs`), map bookkeeping and destructor callbacks. A pipe's memory is the
//! [`Pipe`] it owns, which only kernels reach: no host command takes a pipe.

use crate::host_alloc::HostBlock;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};

use opencl_sys::*;

use ferrocl_codegen::{ImageDescriptor, Pipe};

use crate::context::Context;
use crate::image::{ImageDesc, ImageRequest};
use crate::object::{Base, CLResult, Tag};
use crate::svm::SvmAllocation;

/// Alignment of every allocation: CL_DEVICE_MEM_BASE_ADDR_ALIGN (1024 bits).
pub const MEM_ALIGN: usize = 128;

/// The bytes behind a buffer: owned (aligned heap allocation) or borrowed from the application.
pub struct Storage {
    ptr: *mut u8,
    len: usize,
    /// None for the application's memory.
    _owned: Option<HostBlock>,
}

// SAFETY: Storage is a plain byte region; concurrent access is governed by the OpenCL memory
// model (the application synchronises with events), exactly like device memory.
unsafe impl Send for Storage {}
// SAFETY: see above.
unsafe impl Sync for Storage {}

impl Storage {
    /// A zeroed, `MEM_ALIGN`-aligned allocation of `len` bytes (at least 1).
    pub fn alloc(len: usize) -> CLResult<Self> {
        let block = HostBlock::zeroed(len, MEM_ALIGN).ok_or(CL_MEM_OBJECT_ALLOCATION_FAILURE)?;
        Ok(Storage {
            ptr: block.ptr(),
            len,
            _owned: Some(block),
        })
    }

    /// The application's memory (CL_MEM_USE_HOST_PTR): used in place, never freed by us.
    ///
    /// # Safety
    /// `ptr` must be valid for reads and writes of `len` bytes as long as the memory object
    /// lives (the spec makes that the application's duty).
    pub unsafe fn borrowed(ptr: *mut u8, len: usize) -> Self {
        Storage {
            ptr,
            len,
            _owned: None,
        }
    }

    pub fn ptr(&self) -> *mut u8 {
        self.ptr
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// No bytes (a pipe's: its memory is its [`Pipe`]); the address is never dereferenced.
    fn empty() -> Self {
        Storage {
            ptr: std::ptr::NonNull::dangling().as_ptr(),
            len: 0,
            _owned: None,
        }
    }
}

pub type MemCallback = unsafe extern "C" fn(cl_mem, *mut std::ffi::c_void);

/// What a memory object is; the fields every kind shares live in [`Mem`].
pub enum MemKind {
    Buffer,
    /// A region of `parent` (a buffer), starting `origin` bytes into it.
    SubBuffer {
        parent: Arc<Mem>,
        origin: usize,
    },
    /// An image (geometry and format in `desc`), over its own storage, the application's
    /// memory, or the storage of `parent` (the buffer of a 1D buffer or 2D image, or the 2D
    /// image a view shares). `descriptor` is what kernels are given for it (`abi.rs`); it
    /// lives as long as the image and points into its storage.
    Image {
        desc: ImageDesc,
        parent: Option<Arc<Mem>>,
        descriptor: Box<ImageDescriptor>,
    },
    /// A pipe (`clCreatePipe`): its packets live in `pipe`, which kernels are given the
    /// address of (codegen pipe.rs); boxed so that the address stays put while the object
    /// lives. The object's own storage is empty.
    Pipe {
        pipe: Box<Pipe>,
    },
}

#[repr(C)]
pub struct Mem {
    base: Base,
    pub context: Arc<Context>,
    pub flags: cl_mem_flags,
    /// Bytes of `storage` the object covers; 0 for a pipe, whose memory is its `Pipe`'s
    /// (`CL_MEM_SIZE` is [`Mem::mem_size`]), so that no range of a pipe is ever in bounds.
    pub size: usize,
    /// `CL_MEM_HOST_PTR`: the application pointer given with USE_HOST_PTR (NULL otherwise).
    pub host_ptr: usize,
    pub storage: Arc<Storage>,
    /// Byte offset into `storage` (non-zero for sub-buffers).
    pub offset: usize,
    pub kind: MemKind,
    /// The SVM allocation a CL_MEM_USE_HOST_PTR buffer lives in (`CL_MEM_USES_SVM_POINTER`),
    /// held so that freeing it before the buffer cannot leave the buffer dangling.
    pub svm: Option<Arc<SvmAllocation>>,
    pub properties: Vec<cl_mem_properties>,
    map_count: AtomicU32,
    destructors: Mutex<Vec<(MemCallback, usize)>>,
}
crate::cl_object!(Mem, Mem, CL_INVALID_MEM_OBJECT);

const ACCESS_FLAGS: cl_mem_flags = (CL_MEM_READ_WRITE | CL_MEM_WRITE_ONLY | CL_MEM_READ_ONLY) as _;
const HOST_ACCESS_FLAGS: cl_mem_flags =
    (CL_MEM_HOST_WRITE_ONLY | CL_MEM_HOST_READ_ONLY | CL_MEM_HOST_NO_ACCESS) as _;
const HOST_PTR_FLAGS: cl_mem_flags =
    (CL_MEM_USE_HOST_PTR | CL_MEM_ALLOC_HOST_PTR | CL_MEM_COPY_HOST_PTR) as _;
const ALL_FLAGS: cl_mem_flags = ACCESS_FLAGS
    | HOST_ACCESS_FLAGS
    | HOST_PTR_FLAGS
    | CL_MEM_KERNEL_READ_AND_WRITE as cl_mem_flags;

fn at_most_one(flags: cl_mem_flags, group: cl_mem_flags) -> bool {
    (flags & group).count_ones() <= 1
}

/// The flag rules of clCreateBuffer: known bits only, one access flag, one host-access flag,
/// USE_HOST_PTR excludes the other two host-pointer flags.
pub fn check_flags(flags: cl_mem_flags) -> CLResult<()> {
    if flags & !ALL_FLAGS != 0
        || !at_most_one(flags, ACCESS_FLAGS)
        || !at_most_one(flags, HOST_ACCESS_FLAGS)
        || (flags & CL_MEM_USE_HOST_PTR as cl_mem_flags != 0
            && flags & (CL_MEM_ALLOC_HOST_PTR | CL_MEM_COPY_HOST_PTR) as cl_mem_flags != 0)
    {
        return Err(CL_INVALID_VALUE);
    }
    Ok(())
}

/// The flags of an object made from `parent`'s memory (a sub-buffer, or an image over a
/// buffer or image): host-pointer flags are not allowed and come from the parent, access and
/// host access may only narrow and default to the parent's (CL_INVALID_VALUE otherwise).
fn inherit_flags(parent: cl_mem_flags, flags: cl_mem_flags) -> CLResult<cl_mem_flags> {
    check_flags(flags)?;
    if flags & HOST_PTR_FLAGS != 0 {
        return Err(CL_INVALID_VALUE);
    }
    let pf = parent;
    let w = CL_MEM_WRITE_ONLY as cl_mem_flags;
    let r = CL_MEM_READ_ONLY as cl_mem_flags;
    let rw = CL_MEM_READ_WRITE as cl_mem_flags;
    // Access may only narrow: a write-only parent cannot give read-write/read-only, etc.
    if (pf & w != 0 && flags & (rw | r) != 0)
        || (pf & r != 0 && flags & (rw | w) != 0)
        || (pf & CL_MEM_HOST_WRITE_ONLY as cl_mem_flags != 0
            && flags & CL_MEM_HOST_READ_ONLY as cl_mem_flags != 0)
        || (pf & CL_MEM_HOST_READ_ONLY as cl_mem_flags != 0
            && flags & CL_MEM_HOST_WRITE_ONLY as cl_mem_flags != 0)
        || (pf & CL_MEM_HOST_NO_ACCESS as cl_mem_flags != 0
            && flags & (CL_MEM_HOST_READ_ONLY | CL_MEM_HOST_WRITE_ONLY) as cl_mem_flags != 0)
    {
        return Err(CL_INVALID_VALUE);
    }
    let mut f = flags;
    if f & ACCESS_FLAGS == 0 {
        f |= pf & ACCESS_FLAGS;
    }
    if f & HOST_ACCESS_FLAGS == 0 {
        f |= pf & HOST_ACCESS_FLAGS;
    }
    Ok(f | (pf & HOST_PTR_FLAGS))
}

impl Mem {
    /// Creates a buffer; the icd layer has checked the host pointer against the flags.
    ///
    /// # Safety
    /// With USE_HOST_PTR or COPY_HOST_PTR, `host_ptr` must be valid for `size` bytes (for
    /// USE_HOST_PTR, for the buffer's whole life).
    pub unsafe fn new_buffer(
        context: Arc<Context>,
        flags: cl_mem_flags,
        size: usize,
        host_ptr: *mut u8,
        properties: Vec<cl_mem_properties>,
    ) -> CLResult<Arc<Mem>> {
        check_flags(flags)?;
        let max = context
            .devices
            .iter()
            .map(|d| d.config.max_mem_alloc_size)
            .min()
            .unwrap_or(0);
        if size == 0 || size as u64 > max {
            return Err(CL_INVALID_BUFFER_SIZE);
        }
        let use_host = flags & CL_MEM_USE_HOST_PTR as cl_mem_flags != 0;
        let copy_host = flags & CL_MEM_COPY_HOST_PTR as cl_mem_flags != 0;
        if (use_host || copy_host) == host_ptr.is_null() {
            return Err(CL_INVALID_HOST_PTR);
        }
        let svm = if use_host {
            context.svm.find(host_ptr as usize)
        } else {
            None
        };
        // A buffer over an SVM allocation must fit in it (API spec, clCreateBuffer).
        if svm
            .as_ref()
            .is_some_and(|a| !a.contains(host_ptr as usize, size))
        {
            return Err(CL_INVALID_BUFFER_SIZE);
        }
        // No access flag means read-write; CL_MEM_FLAGS still reports the flags as given.
        let storage = if use_host {
            // SAFETY: the caller guarantees the application memory outlives the buffer.
            unsafe { Storage::borrowed(host_ptr, size) }
        } else {
            let s = Storage::alloc(size)?;
            if copy_host {
                // SAFETY: host_ptr is valid for `size` bytes (caller), s is a fresh allocation.
                unsafe { std::ptr::copy_nonoverlapping(host_ptr, s.ptr(), size) };
            }
            s
        };
        Ok(Arc::new(Mem {
            base: Base::new(Tag::Mem),
            context,
            flags,
            size,
            host_ptr: if use_host { host_ptr as usize } else { 0 },
            storage: Arc::new(storage),
            offset: 0,
            kind: MemKind::Buffer,
            svm,
            properties,
            map_count: AtomicU32::new(0),
            destructors: Mutex::new(Vec::new()),
        }))
    }

    /// `clCreateSubBuffer` with CL_BUFFER_CREATE_TYPE_REGION.
    pub fn new_sub_buffer(
        parent: &Arc<Mem>,
        flags: cl_mem_flags,
        origin: usize,
        size: usize,
    ) -> CLResult<Arc<Mem>> {
        if !matches!(parent.kind, MemKind::Buffer) {
            return Err(CL_INVALID_MEM_OBJECT);
        }
        check_flags(flags)?;
        if flags & HOST_PTR_FLAGS != 0 {
            return Err(CL_INVALID_VALUE);
        }
        let f = inherit_flags(parent.flags, flags)?;
        if size == 0 {
            return Err(CL_INVALID_BUFFER_SIZE);
        }
        if origin.checked_add(size).is_none_or(|end| end > parent.size) {
            return Err(CL_INVALID_VALUE);
        }
        let align = MEM_ALIGN;
        if !origin.is_multiple_of(align) {
            return Err(CL_MISALIGNED_SUB_BUFFER_OFFSET);
        }
        Ok(Arc::new(Mem {
            base: Base::new(Tag::Mem),
            context: parent.context.clone(),
            flags: f,
            size,
            host_ptr: if parent.host_ptr != 0 {
                parent.host_ptr + origin
            } else {
                0
            },
            storage: parent.storage.clone(),
            offset: parent.offset + origin,
            kind: MemKind::SubBuffer {
                parent: parent.clone(),
                origin,
            },
            svm: parent.svm.clone(),
            properties: Vec::new(),
            map_count: AtomicU32::new(0),
            destructors: Mutex::new(Vec::new()),
        }))
    }

    /// `clCreatePipe` (the icd layer has refused properties): CL_INVALID_OPERATION when no
    /// device of the context has pipes, CL_INVALID_VALUE for flags other than
    /// CL_MEM_READ_WRITE and CL_MEM_HOST_NO_ACCESS (0 means both; CL_MEM_FLAGS reports them as
    /// given, as for buffers), CL_INVALID_PIPE_SIZE for a zero size or packets larger than
    /// every device's CL_DEVICE_PIPE_MAX_PACKET_SIZE, CL_MEM_OBJECT_ALLOCATION_FAILURE for
    /// memory larger than CL_DEVICE_MAX_MEM_ALLOC_SIZE or not to be had.
    pub fn new_pipe(
        context: Arc<Context>,
        flags: cl_mem_flags,
        packet_size: u32,
        max_packets: u32,
    ) -> CLResult<Arc<Mem>> {
        let max_packet_size = context
            .devices
            .iter()
            .filter_map(|d| d.config.pipes)
            .map(|p| p.max_packet_size)
            .max()
            .ok_or(CL_INVALID_OPERATION)?;
        if flags & !(CL_MEM_READ_WRITE | CL_MEM_HOST_NO_ACCESS) as cl_mem_flags != 0 {
            return Err(CL_INVALID_VALUE);
        }
        if packet_size == 0 || packet_size > max_packet_size || max_packets == 0 {
            return Err(CL_INVALID_PIPE_SIZE);
        }
        let max_alloc = context
            .devices
            .iter()
            .map(|d| d.config.max_mem_alloc_size)
            .min()
            .unwrap_or(0);
        if u64::from(packet_size) * u64::from(max_packets) > max_alloc {
            return Err(CL_MEM_OBJECT_ALLOCATION_FAILURE);
        }
        let pipe = Pipe::new(packet_size as usize, max_packets as usize)
            .ok_or(CL_MEM_OBJECT_ALLOCATION_FAILURE)?;
        Ok(Arc::new(Mem {
            base: Base::new(Tag::Mem),
            context,
            flags,
            size: 0,
            host_ptr: 0,
            storage: Arc::new(Storage::empty()),
            offset: 0,
            kind: MemKind::Pipe {
                pipe: Box::new(pipe),
            },
            svm: None,
            properties: Vec::new(),
            map_count: AtomicU32::new(0),
            destructors: Mutex::new(Vec::new()),
        }))
    }

    /// Creates an image (`clCreateImage`); `request.source` is the buffer or image it views.
    ///
    /// # Safety
    /// With USE_HOST_PTR or COPY_HOST_PTR, `host_ptr` must be valid for the image's size with
    /// the pitches in `request` (for USE_HOST_PTR, for the image's whole life).
    pub unsafe fn new_image(
        context: Arc<Context>,
        flags: cl_mem_flags,
        format: Option<&cl_image_format>,
        request: &ImageRequest,
        host_ptr: *mut u8,
        properties: Vec<cl_mem_properties>,
    ) -> CLResult<Arc<Mem>> {
        if !crate::image::context_has_images(&context) {
            return Err(CL_INVALID_OPERATION);
        }
        let flags = match &request.source {
            Some(source) => {
                if !Arc::ptr_eq(&source.context, &context) {
                    return Err(CL_INVALID_CONTEXT);
                }
                inherit_flags(source.flags, flags)?
            }
            None => {
                check_flags(flags)?;
                flags
            }
        };
        let use_host = request.source.is_none() && flags & CL_MEM_USE_HOST_PTR as cl_mem_flags != 0;
        let copy_host =
            request.source.is_none() && flags & CL_MEM_COPY_HOST_PTR as cl_mem_flags != 0;
        if (use_host || copy_host) == host_ptr.is_null() {
            return Err(CL_INVALID_HOST_PTR);
        }
        let host_desc = ImageDesc::new(&context, format, request, !host_ptr.is_null())?;
        let size = host_desc.size().ok_or(CL_INVALID_IMAGE_SIZE)?;
        let (desc, storage, offset, svm, parent, host_address) =
            if let Some(source) = &request.source {
                (
                    host_desc,
                    source.storage.clone(),
                    source.offset,
                    source.svm.clone(),
                    Some(source.clone()),
                    source.host_ptr,
                )
            } else if use_host {
                let svm = context.svm.find(host_ptr as usize);
                if svm
                    .as_ref()
                    .is_some_and(|a| !a.contains(host_ptr as usize, size))
                {
                    return Err(CL_INVALID_IMAGE_SIZE);
                }
                // SAFETY: the caller guarantees the application memory outlives the image.
                let storage = unsafe { Storage::borrowed(host_ptr, size) };
                (
                    host_desc,
                    Arc::new(storage),
                    0,
                    svm,
                    None,
                    host_ptr as usize,
                )
            } else {
                // Own storage is tightly packed, whatever pitches the host data had.
                let own = ImageDesc::new(
                    &context,
                    format,
                    &ImageRequest {
                        row_pitch: 0,
                        slice_pitch: 0,
                        ..request.clone()
                    },
                    false,
                )?;
                let storage = Storage::alloc(own.size().ok_or(CL_INVALID_IMAGE_SIZE)?)?;
                if copy_host {
                    let extent = host_desc.extent();
                    let (h0, hy, hz, region) = host_desc.rect_side([0; 3], extent);
                    let (d0, dy, dz, _) = own.rect_side([0; 3], extent);
                    let rect = crate::image::rect((h0, hy, hz), (d0, dy, dz), region);
                    // SAFETY: host_ptr holds the image with the application's pitches (caller);
                    // the fresh storage holds it tightly packed.
                    unsafe { rect.copy(host_ptr, storage.ptr()) };
                }
                (own, Arc::new(storage), 0, None, None, 0)
            };
        // SAFETY: offset lies within the storage (a source's own offset, or 0).
        let data = unsafe { storage.ptr().add(offset) };
        let levels: Vec<ferrocl_codegen::MipLevel> = (0..desc.levels())
            .map(|l| {
                let level = desc.level(l);
                ferrocl_codegen::MipLevel {
                    offset: level.level_offset as u64,
                    row_pitch: level.row_pitch as u64,
                    slice_pitch: level.slice_pitch as u64,
                    width: level.width as u32,
                    height: level.height as u32,
                    depth: level.depth as u32,
                    reserved: 0,
                }
            })
            .collect();
        let descriptor = Box::new(ImageDescriptor::new(
            data as u64,
            &ferrocl_codegen::ImageGeometry {
                width: desc.width,
                height: desc.height,
                depth: desc.depth,
                array_size: desc.array_size,
                row_pitch: desc.row_pitch,
                slice_pitch: desc.slice_pitch,
                element_size: desc.element_size,
                channel_order: crate::image::spirv_channel_order(desc.format.order),
                channel_data_type: crate::image::spirv_channel_data_type(desc.format.data_type),
                num_mip_levels: desc.num_mip_levels,
                levels: &levels,
            },
        ));
        Ok(Arc::new(Mem {
            base: Base::new(Tag::Mem),
            context,
            flags,
            size: desc.size().ok_or(CL_INVALID_IMAGE_SIZE)?,
            host_ptr: host_address,
            storage,
            offset,
            kind: MemKind::Image {
                desc,
                parent,
                descriptor,
            },
            svm,
            properties,
            map_count: AtomicU32::new(0),
            destructors: Mutex::new(Vec::new()),
        }))
    }

    /// The image's geometry and format; None for buffers.
    pub fn image(&self) -> Option<&ImageDesc> {
        match &self.kind {
            MemKind::Image { desc, .. } => Some(desc),
            _ => None,
        }
    }

    /// What kernels are given for this image (its address is stable while the image lives).
    pub fn image_descriptor(&self) -> Option<&ImageDescriptor> {
        match &self.kind {
            MemKind::Image { descriptor, .. } => Some(descriptor),
            _ => None,
        }
    }

    /// The image, or CL_INVALID_MEM_OBJECT for a buffer or pipe given where an image is
    /// wanted.
    pub fn expect_image(&self) -> CLResult<&ImageDesc> {
        self.image().ok_or(CL_INVALID_MEM_OBJECT)
    }

    /// CL_INVALID_MEM_OBJECT for an image or a pipe given where a buffer is wanted: the check
    /// of every command and kernel argument that takes a buffer.
    pub fn expect_buffer(&self) -> CLResult<()> {
        match self.kind {
            MemKind::Buffer | MemKind::SubBuffer { .. } => Ok(()),
            MemKind::Image { .. } | MemKind::Pipe { .. } => Err(CL_INVALID_MEM_OBJECT),
        }
    }

    /// The pipe of a pipe object (kernels are given its address); None for other kinds.
    pub fn pipe(&self) -> Option<&Pipe> {
        match &self.kind {
            MemKind::Pipe { pipe } => Some(pipe),
            _ => None,
        }
    }

    /// The pipe, or CL_INVALID_MEM_OBJECT for another kind (`clGetPipeInfo`, pipe arguments).
    pub fn expect_pipe(&self) -> CLResult<&Pipe> {
        self.pipe().ok_or(CL_INVALID_MEM_OBJECT)
    }

    /// `CL_MEM_SIZE`: the bytes of the object's data store (a pipe's packet slots).
    pub fn mem_size(&self) -> usize {
        match &self.kind {
            MemKind::Pipe { pipe } => pipe.memory_size(),
            _ => self.size,
        }
    }

    /// Host address of byte 0 of this buffer (what kernels and maps see).
    pub fn address(&self) -> *mut u8 {
        // SAFETY: offset + size lies within the storage (checked at creation).
        unsafe { self.storage.ptr().add(self.offset) }
    }

    pub fn has_flag(&self, f: u64) -> bool {
        self.flags & f as cl_mem_flags != 0
    }

    /// `CL_MEM_TYPE`.
    pub fn mem_type(&self) -> cl_mem_object_type {
        match &self.kind {
            MemKind::Buffer | MemKind::SubBuffer { .. } => CL_MEM_OBJECT_BUFFER,
            MemKind::Image { desc, .. } => desc.image_type,
            MemKind::Pipe { .. } => CL_MEM_OBJECT_PIPE,
        }
    }

    /// `CL_MEM_ASSOCIATED_MEMOBJECT`: the buffer a sub-buffer is a region of, the buffer or
    /// image an image views.
    pub fn parent(&self) -> Option<&Arc<Mem>> {
        match &self.kind {
            MemKind::SubBuffer { parent, .. } => Some(parent),
            MemKind::Image { parent, .. } => parent.as_ref(),
            MemKind::Buffer | MemKind::Pipe { .. } => None,
        }
    }

    /// `CL_MEM_OFFSET`: a sub-buffer's origin in its parent, 0 for every other kind.
    pub fn origin_in_parent(&self) -> usize {
        match self.kind {
            MemKind::SubBuffer { origin, .. } => origin,
            MemKind::Buffer | MemKind::Image { .. } | MemKind::Pipe { .. } => 0,
        }
    }

    /// `CL_MEM_MAP_COUNT`.
    pub fn map_count(&self) -> u32 {
        self.map_count.load(Ordering::Acquire)
    }

    /// Whether a command may read this object from the host (read, map for reading):
    /// CL_INVALID_OPERATION under CL_MEM_HOST_WRITE_ONLY or CL_MEM_HOST_NO_ACCESS.
    pub fn check_host_read(&self) -> CLResult<()> {
        if self.has_flag(CL_MEM_HOST_WRITE_ONLY | CL_MEM_HOST_NO_ACCESS) {
            return Err(CL_INVALID_OPERATION);
        }
        Ok(())
    }

    /// Whether a command may write this object from the host (write, map for writing):
    /// CL_INVALID_OPERATION under CL_MEM_HOST_READ_ONLY or CL_MEM_HOST_NO_ACCESS.
    pub fn check_host_write(&self) -> CLResult<()> {
        if self.has_flag(CL_MEM_HOST_READ_ONLY | CL_MEM_HOST_NO_ACCESS) {
            return Err(CL_INVALID_OPERATION);
        }
        Ok(())
    }

    /// Whether two objects' bytes are the same allocation (copies between them may overlap).
    pub fn shares_storage(&self, other: &Mem) -> bool {
        Arc::ptr_eq(&self.storage, &other.storage)
    }

    /// Checks `offset..offset+len` lies inside the buffer.
    pub fn check_range(&self, offset: usize, len: usize) -> CLResult<()> {
        match offset.checked_add(len) {
            Some(end) if end <= self.size => Ok(()),
            _ => Err(CL_INVALID_VALUE),
        }
    }

    pub fn add_destructor(&self, f: MemCallback, user_data: usize) {
        self.destructors
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push((f, user_data));
    }
}

impl Drop for Mem {
    fn drop(&mut self) {
        let cbs = std::mem::take(
            self.destructors
                .get_mut()
                .unwrap_or_else(|p| p.into_inner()),
        );
        let me = self as *mut Mem as cl_mem;
        for (f, ud) in cbs.into_iter().rev() {
            // SAFETY: the application registered `f` for this object; the handle is readable
            // while Drop runs (the spec calls these just before the memory is released).
            unsafe { f(me, ud as *mut std::ffi::c_void) };
        }
    }
}

/// A 3-D rectangle copy description in bytes (the `*Rect` commands).
#[derive(Clone, Copy, Debug)]
pub struct Rect {
    pub region: [usize; 3],
    pub src_origin: [usize; 3],
    pub src_row_pitch: usize,
    pub src_slice_pitch: usize,
    pub dst_origin: [usize; 3],
    pub dst_row_pitch: usize,
    pub dst_slice_pitch: usize,
}

impl Rect {
    /// Fills defaulted pitches (0 → tight) and checks them (CL_INVALID_VALUE).
    pub fn normalise(mut self) -> CLResult<Self> {
        let [w, h, d] = self.region;
        if w == 0 || h == 0 || d == 0 {
            return Err(CL_INVALID_VALUE);
        }
        for (row, slice) in [
            (&mut self.src_row_pitch, &mut self.src_slice_pitch),
            (&mut self.dst_row_pitch, &mut self.dst_slice_pitch),
        ] {
            if *row == 0 {
                *row = w;
            }
            if *slice == 0 {
                *slice = *row * h;
            }
            if *row < w || *slice < *row * h || *slice % *row != 0 {
                return Err(CL_INVALID_VALUE);
            }
        }
        Ok(self)
    }

    fn last_byte(
        origin: [usize; 3],
        row: usize,
        slice: usize,
        region: [usize; 3],
    ) -> Option<usize> {
        let start = origin[2]
            .checked_mul(slice)?
            .checked_add(origin[1].checked_mul(row)?)?
            .checked_add(origin[0])?;
        start
            .checked_add((region[2] - 1).checked_mul(slice)?)?
            .checked_add((region[1] - 1).checked_mul(row)?)?
            .checked_add(region[0])
    }

    /// End (exclusive) of the bytes touched on the source side.
    pub fn src_extent(&self) -> Option<usize> {
        Self::last_byte(
            self.src_origin,
            self.src_row_pitch,
            self.src_slice_pitch,
            self.region,
        )
    }

    pub fn dst_extent(&self) -> Option<usize> {
        Self::last_byte(
            self.dst_origin,
            self.dst_row_pitch,
            self.dst_slice_pitch,
            self.region,
        )
    }

    /// Copies the rectangle row by row.
    ///
    /// # Safety
    /// `src` must be readable up to `src_extent()` bytes and `dst` writable up to
    /// `dst_extent()`; overlapping rows are handled with `copy` (memmove).
    pub unsafe fn copy(&self, src: *const u8, dst: *mut u8) {
        for z in 0..self.region[2] {
            for y in 0..self.region[1] {
                let s = (self.src_origin[2] + z) * self.src_slice_pitch
                    + (self.src_origin[1] + y) * self.src_row_pitch
                    + self.src_origin[0];
                let d = (self.dst_origin[2] + z) * self.dst_slice_pitch
                    + (self.dst_origin[1] + y) * self.dst_row_pitch
                    + self.dst_origin[0];
                // SAFETY: within the extents the caller vouched for.
                unsafe { std::ptr::copy(src.add(s), dst.add(d), self.region[0]) };
            }
        }
    }
}

/// Fills `len` bytes at `dst` with repetitions of `pattern` (len is a multiple of its size):
/// one copy of the pattern, then the filled prefix copied after itself, doubling each time,
/// so a large fill runs at memcpy speed instead of one pattern-sized store at a time.
///
/// # Safety
/// `dst` must be writable for `len` bytes.
pub unsafe fn fill(dst: *mut u8, len: usize, pattern: &[u8]) {
    let n = pattern.len();
    if n == 0 || len < n {
        return;
    }
    // SAFETY: n <= len.
    unsafe { std::ptr::copy_nonoverlapping(pattern.as_ptr(), dst, n) };
    let mut filled = n;
    while filled < len {
        // Whole patterns only; the prefix is a multiple of n, so the copy keeps the phase.
        let chunk = filled.min(len - filled);
        // SAFETY: [0, filled) and [filled, filled + chunk) are disjoint and inside len.
        unsafe { std::ptr::copy_nonoverlapping(dst, dst.add(filled), chunk) };
        filled += chunk;
    }
}

/// Map/unmap are zero-copy: the mapped pointer is the buffer's own memory; only the count and
/// the live (object, pointer) pairs are tracked (unmapping a pointer never mapped is an error).
impl Mem {
    pub fn map(&self, offset: usize) -> *mut u8 {
        self.map_count.fetch_add(1, Ordering::AcqRel);
        // SAFETY: the caller checked offset against size.
        let p = unsafe { self.address().add(offset) };
        map_table()
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push((self as *const Mem as usize, p as usize));
        p
    }

    /// Checks `ptr` was returned by a map of this object and removes that record.
    pub fn unmap_check(&self, ptr: *mut u8) -> CLResult<()> {
        let mut t = map_table().lock().unwrap_or_else(|e| e.into_inner());
        let key = (self as *const Mem as usize, ptr as usize);
        let i = t.iter().position(|m| *m == key).ok_or(CL_INVALID_VALUE)?;
        t.swap_remove(i);
        Ok(())
    }

    pub fn unmap_done(&self) {
        let _ = self
            .map_count
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |c| c.checked_sub(1));
    }
}

fn map_table() -> &'static Mutex<Vec<(usize, usize)>> {
    static T: Mutex<Vec<(usize, usize)>> = Mutex::new(Vec::new());
    &T
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flag_rules() {
        assert!(check_flags(CL_MEM_READ_WRITE as _).is_ok());
        assert_eq!(
            check_flags((CL_MEM_READ_ONLY | CL_MEM_WRITE_ONLY) as _),
            Err(CL_INVALID_VALUE)
        );
        assert_eq!(
            check_flags((CL_MEM_USE_HOST_PTR | CL_MEM_COPY_HOST_PTR) as _),
            Err(CL_INVALID_VALUE)
        );
        assert_eq!(check_flags(1 << 40), Err(CL_INVALID_VALUE));
    }

    fn context(pipes: &str) -> Arc<Context> {
        let settings = crate::settings::Settings::parse(
            |k| (k == "FERROCL_PIPES").then(|| pipes.to_owned()),
            |w| panic!("{w}"),
        );
        Context::new(vec![crate::platform::test_device(&settings)], Vec::new())
    }

    #[test]
    fn pipes_hold_their_ring_and_are_no_buffer() {
        let ctx = context("on");
        let rw_none = (CL_MEM_READ_WRITE | CL_MEM_HOST_NO_ACCESS) as cl_mem_flags;
        let p = Mem::new_pipe(ctx.clone(), rw_none, 12, 100).unwrap();
        assert_eq!(p.mem_type(), CL_MEM_OBJECT_PIPE);
        assert_eq!((p.mem_size(), p.size, p.flags), (1200, 0, rw_none));
        let ring = p.pipe().unwrap();
        assert_eq!((ring.packet_size(), ring.max_packets()), (12, 100));
        assert!(p.parent().is_none() && p.origin_in_parent() == 0 && p.host_ptr == 0);
        assert_eq!(p.expect_buffer(), Err(CL_INVALID_MEM_OBJECT));
        assert_eq!(p.expect_image().err(), Some(CL_INVALID_MEM_OBJECT));
        assert_eq!(
            p.check_range(0, 1),
            Err(CL_INVALID_VALUE),
            "no byte is in range"
        );
        assert_eq!(
            Mem::new_sub_buffer(&p, 0, 0, 1).err(),
            Some(CL_INVALID_MEM_OBJECT)
        );
        // Flags 0 mean read-write, no host access; they are reported as given.
        assert_eq!(Mem::new_pipe(ctx.clone(), 0, 1, 1).unwrap().flags, 0);
        for flags in [
            CL_MEM_READ_ONLY,
            CL_MEM_WRITE_ONLY,
            CL_MEM_HOST_READ_ONLY,
            CL_MEM_HOST_WRITE_ONLY,
            CL_MEM_USE_HOST_PTR,
            CL_MEM_ALLOC_HOST_PTR,
            CL_MEM_COPY_HOST_PTR,
            CL_MEM_KERNEL_READ_AND_WRITE,
        ] {
            assert_eq!(
                Mem::new_pipe(ctx.clone(), flags as cl_mem_flags, 4, 4).err(),
                Some(CL_INVALID_VALUE),
                "{flags:#x}"
            );
        }
        for (size, count) in [(0, 4), (4, 0), (1025, 1)] {
            assert_eq!(
                Mem::new_pipe(ctx.clone(), 0, size, count).err(),
                Some(CL_INVALID_PIPE_SIZE),
                "{size} x {count}"
            );
        }
        assert!(Mem::new_pipe(ctx.clone(), 0, 1024, 1).is_ok());
        assert_eq!(
            Mem::new_pipe(ctx, 0, 1024, u32::MAX).err(),
            Some(CL_MEM_OBJECT_ALLOCATION_FAILURE),
            "4 TiB"
        );
        assert_eq!(
            Mem::new_pipe(context("off"), 0, 4, 4).err(),
            Some(CL_INVALID_OPERATION),
            "FERROCL_PIPES=off"
        );
    }

    #[test]
    fn rect_copy() {
        let src: Vec<u8> = (0..64).collect();
        let mut dst = vec![0u8; 64];
        let r = Rect {
            region: [2, 2, 1],
            src_origin: [1, 1, 0],
            src_row_pitch: 8,
            src_slice_pitch: 0,
            dst_origin: [0, 0, 0],
            dst_row_pitch: 0,
            dst_slice_pitch: 0,
        }
        .normalise()
        .unwrap();
        assert_eq!(r.src_extent(), Some(8 + 8 + 1 + 2));
        // SAFETY: extents fit in 64 bytes.
        unsafe { r.copy(src.as_ptr(), dst.as_mut_ptr()) };
        assert_eq!(&dst[..4], &[9, 10, 17, 18]);
    }

    #[test]
    fn fill_pattern() {
        let mut d = [0u8; 8];
        // SAFETY: 8 bytes.
        unsafe { fill(d.as_mut_ptr(), 8, &[1, 2]) };
        assert_eq!(d, [1, 2, 1, 2, 1, 2, 1, 2]);
        // Lengths that are not a power-of-two multiple of the pattern.
        for len in [3, 6, 9, 12, 21, 3 * 1000] {
            let mut d = vec![0u8; len + 3];
            // SAFETY: len bytes of a longer vector.
            unsafe { fill(d.as_mut_ptr(), len, &[7, 8, 9]) };
            let want: Vec<u8> = [7, 8, 9].iter().copied().cycle().take(len).collect();
            assert_eq!(&d[..len], &want[..], "{len}");
            assert_eq!(&d[len..], &[0, 0, 0], "{len}: nothing past the end");
        }
    }
}
