//! The contract between JIT code and the runtime, the one place that owns the layout of what
//! they share: the work-group function signature, the per-launch `GroupInfo`, the argument
//! block ([`arg_block_layout`]) and the printf buffer. The functions JIT code calls are
//! declared in `entry_points.rs`.
//!
//! printf: JIT code finds the launch's printf buffer through [`GroupInfo::printf_buffer`]. The
//! buffer starts with two u64s — the allocation counter (record bytes handed out so far, bumped
//! atomically by each call, may run past the capacity) and the capacity in record bytes — and
//! the records follow ([`PRINTF_BUFFER_HEADER`] bytes in). A call whose record does not fit
//! writes nothing and returns -1, so every later allocation fails too and the records that were
//! written are contiguous from the start; the runtime zeroes the buffer, so the first record
//! header with length 0 ends them. A record is a u32 length (header included, a multiple of 8),
//! a u32 index into [`crate::Kernel::printf_formats`], then the arguments' bytes, packed in
//! format order as [`ferrocl_frontend::PrintfArg`] describes.

use ferrocl_frontend::{ArgKind, KernelInfo};

/// `extern "C" fn(args, group, local_mem)`: runs every work-item of one work-group.
///
/// - `args` points at the kernel's argument block (layout in [`crate::Kernel::args`]);
/// - `group` describes the NDRange and which group this is; kernels with barriers also use
///   its work-item frames (see [`GroupInfo::frames`]);
/// - `local_mem` is the executing worker's local-memory arena, at least
///   [`crate::Kernel::static_local_mem_size`] bytes plus the `__local` argument sizes, aligned
///   to [`LOCAL_ARG_ALIGN`].
pub type WorkGroupFn =
    unsafe extern "C" fn(args: *const u8, group: *const GroupInfo, local_mem: *mut u8);

/// Alignment of the local-memory arena and of every `__local` pointer argument inside it
/// (the largest OpenCL type alignment, `double16`).
pub const LOCAL_ARG_ALIGN: usize = 128;

/// Work-items per sub-group of a kernel that requires no size: consecutive linear local ids
/// form a sub-group, the last one of a work-group may be smaller. Four is the number of 32-bit
/// lanes in one Cranelift vector (128 bits, the widest Cranelift lowers on x86-64), the code
/// every kernel runs first; a kernel's size must not change when it tiers up to the wide
/// backend. The runtime answers the sub-group API queries from it ([`sub_group_size_of`]).
pub const SUB_GROUP_SIZE: u64 = 4;

/// The sub-group sizes a kernel may require (`SubgroupSize`, `intel_reqd_sub_group_size`;
/// `CL_DEVICE_SUB_GROUP_SIZES_INTEL`). Eight and sixteen are the 32-bit lanes of AVX2 and
/// AVX-512 vectors, where the wide backend runs a sub-group's work-items in lockstep; every
/// size runs on every CPU (Cranelift's code exchanges through the work-item frames), and
/// ballots fit in 32 bits.
pub const SUB_GROUP_SIZES: [u64; 4] = [4, 8, 16, 32];

/// Work-items per sub-group of `kernel`: its required size, else `default` (the
/// environment's, [`SUB_GROUP_SIZE`] for the driver).
pub fn sub_group_size_of(kernel: &KernelInfo, default: u64) -> u64 {
    kernel.required_sub_group_size.map_or(default, u64::from)
}

/// What one work-group call needs to know about the launch. All values are per dimension;
/// unused dimensions have size 1 and offset 0. Field offsets are part of the JIT ABI.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct GroupInfo {
    /// `get_global_offset`.
    pub global_offset: [u64; 3],
    /// `get_global_size`.
    pub global_size: [u64; 3],
    /// `get_local_size` for *this* group (smaller than enqueued in the last group of a
    /// non-uniform range).
    pub local_size: [u64; 3],
    /// `get_enqueued_local_size`.
    pub enqueued_local_size: [u64; 3],
    /// `get_group_id`.
    pub group_id: [u64; 3],
    /// `get_num_groups`.
    pub num_groups: [u64; 3],
    /// `get_work_dim`.
    pub work_dim: u32,
    /// Address of this group's work-item frames, for kernels with barriers: at least
    /// [`crate::Kernel::work_item_frame_size`] × (work-items in this group) bytes, 16-byte
    /// aligned, owned by the executing worker. May be 0 when the frame size is 0.
    pub frames: u64,
    /// Address of the launch's printf buffer (layout in the module header), 8-byte aligned and
    /// shared by every group; 0 when the kernel has no printf.
    pub printf_buffer: u64,
    /// Bytes of local memory at `local_mem` this group may use (static `__local` variables and
    /// `__local` arguments): with [`GroupInfo::frames_size`], how generic pointers are told apart
    /// (`to_local`, `to_private`, `get_fence`).
    pub local_mem_size: u64,
    /// Bytes of work-item frames at [`GroupInfo::frames`] (0 without barriers): private memory.
    pub frames_size: u64,
    /// Address of the launch's stop word (a u32, 4-byte aligned, shared by every group), read
    /// at every loop head by kernels built with [`crate::BuildOptions::stop_checks`]: non-zero
    /// makes the work-group function return at once (the kernel watchdog, watchdog.rs). Such
    /// kernels need a valid address; others never read it.
    pub stop: u64,
    /// Address of the launch's [`crate::CheckedLaunch`] for kernels built with
    /// [`crate::BuildOptions::checked`] (0 otherwise): JIT code only passes it on, to the
    /// functions that record a fault (checked.rs).
    pub checked: u64,
    /// Address of the launch's [`crate::DeviceEnqueueContext`] for kernels whose
    /// [`ferrocl_frontend::KernelInfo::uses_device_enqueue`] is set (0 otherwise): JIT code only
    /// passes it on, to the device-enqueue functions (device_enqueue.rs).
    pub device_enqueue: u64,
}

/// Bytes before the first printf record: the allocation counter and the capacity (u64 each).
pub const PRINTF_BUFFER_HEADER: usize = 16;
/// Bytes of a printf record's header: its length and its format index (u32 each).
pub const PRINTF_RECORD_HEADER: usize = 8;

impl GroupInfo {
    pub(crate) const GLOBAL_OFFSET: i32 = 0;
    pub(crate) const GLOBAL_SIZE: i32 = 24;
    pub(crate) const LOCAL_SIZE: i32 = 48;
    pub(crate) const ENQUEUED_LOCAL_SIZE: i32 = 72;
    pub(crate) const GROUP_ID: i32 = 96;
    pub(crate) const NUM_GROUPS: i32 = 120;
    pub(crate) const WORK_DIM: i32 = 144;
    pub(crate) const FRAMES: i32 = 152;
    pub(crate) const PRINTF_BUFFER: i32 = 160;
    pub(crate) const LOCAL_MEM_SIZE: i32 = 168;
    pub(crate) const FRAMES_SIZE: i32 = 176;
    pub(crate) const STOP: i32 = 184;
    pub(crate) const CHECKED: i32 = 192;
    pub(crate) const DEVICE_ENQUEUE: i32 = 200;
}

const _: () = {
    assert!(std::mem::offset_of!(GroupInfo, global_size) == GroupInfo::GLOBAL_SIZE as usize);
    assert!(std::mem::offset_of!(GroupInfo, local_size) == GroupInfo::LOCAL_SIZE as usize);
    assert!(
        std::mem::offset_of!(GroupInfo, enqueued_local_size)
            == GroupInfo::ENQUEUED_LOCAL_SIZE as usize
    );
    assert!(std::mem::offset_of!(GroupInfo, group_id) == GroupInfo::GROUP_ID as usize);
    assert!(std::mem::offset_of!(GroupInfo, num_groups) == GroupInfo::NUM_GROUPS as usize);
    assert!(std::mem::offset_of!(GroupInfo, work_dim) == GroupInfo::WORK_DIM as usize);
    assert!(std::mem::offset_of!(GroupInfo, frames) == GroupInfo::FRAMES as usize);
    assert!(std::mem::offset_of!(GroupInfo, printf_buffer) == GroupInfo::PRINTF_BUFFER as usize);
    assert!(std::mem::offset_of!(GroupInfo, local_mem_size) == GroupInfo::LOCAL_MEM_SIZE as usize);
    assert!(std::mem::offset_of!(GroupInfo, frames_size) == GroupInfo::FRAMES_SIZE as usize);
    assert!(std::mem::offset_of!(GroupInfo, stop) == GroupInfo::STOP as usize);
    assert!(std::mem::offset_of!(GroupInfo, checked) == GroupInfo::CHECKED as usize);
    assert!(std::mem::offset_of!(GroupInfo, device_enqueue) == GroupInfo::DEVICE_ENQUEUE as usize);
    assert!(GroupInfo::GLOBAL_OFFSET == 0);
};

/// Where one kernel argument lives in the argument block.
///
/// What the runtime stores there depends on the argument's [`ferrocl_frontend::ArgKind`]:
/// - `Buffer`: the buffer's host address as a pointer (8 bytes; NULL allowed);
/// - `Local`: the byte offset (u64) of this argument's region inside the local-memory arena;
/// - `Value`: the bytes given to `clSetKernelArg`, `size` of them;
/// - `Image`: a pointer to the image's [`ImageDescriptor`] (8 bytes);
/// - `Sampler`: the sampler's [`SamplerDescriptor`] (16 bytes); kernels use the slot's address.
///
/// Kernels built with [`crate::BuildOptions::checked`] also have, for each `Buffer` and `Local`
/// argument, a pair of u64s at `bounds`: the bytes `[start, end)` of the object the pointer
/// may reach — for a buffer its host addresses (`[0, 0)` for NULL; an SVM pointer's whole
/// allocation), for a `__local` argument its offsets in the arena, as the pointer is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ArgSlot {
    pub offset: usize,
    pub size: usize,
    pub bounds: Option<usize>,
}

/// The argument-block layout of `kernel`: every argument at its natural alignment (pointers,
/// descriptor addresses and sampler records 8), then in checked mode the bounds pairs, and the
/// block's size rounded up to 16.
pub(crate) fn arg_block_layout(kernel: &KernelInfo, checked: bool) -> (Vec<ArgSlot>, usize) {
    let mut offset = 0usize;
    let mut slots = Vec::with_capacity(kernel.args.len());
    for arg in &kernel.args {
        let (size, align) = match arg.kind {
            ArgKind::Value { size, align } => (size, align.clamp(1, 128)),
            ArgKind::Sampler => (SamplerDescriptor::SIZE, 8),
            // Buffers, images, pipes, queues and block literals: an address.
            _ => (8, 8),
        };
        offset = offset.next_multiple_of(align);
        slots.push(ArgSlot {
            offset,
            size,
            bounds: None,
        });
        offset += size;
    }
    if checked {
        offset = offset.next_multiple_of(8);
        for (slot, arg) in slots.iter_mut().zip(&kernel.args) {
            if matches!(arg.kind, ArgKind::Buffer { .. } | ArgKind::Local) {
                slot.bounds = Some(offset);
                offset += 16;
            }
        }
    }
    (slots, offset.next_multiple_of(16))
}

/// What an image kernel argument points at (the argument block holds its address): the
/// runtime builds one per image when the image is created and keeps it at a fixed address for
/// the image's life. Sizes of unused dimensions are 0 (as `clGetImageInfo` reports them);
/// pitches are in bytes (a 1D array's layers are `slice_pitch` apart). `channel_order` and
/// `channel_data_type` are SPIR-V's `ImageChannelOrder` and `ImageChannelDataType` values, what
/// `OpImageQueryOrder` and `OpImageQueryFormat` return. Texels are stored as the OpenCL API
/// spec's image format descriptor says, little-endian, with no alignment beyond one byte
/// assumed (`CL_DEVICE_IMAGE_BASE_ADDRESS_ALIGNMENT` and `_PITCH_ALIGNMENT` are 1 pixel).
///
/// The fields before `levels` describe mip level 0, so an access that names no level reads
/// them alone. `levels[l]` describes level `l` (cl_khr_mipmap_image) for `l` below
/// `max(1, num_mip_levels)`, level 0 included, so code that computes a level at run time
/// indexes one table; entries past the image's levels are zero. Field offsets are part of the
/// JIT ABI.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ImageDescriptor {
    /// Address of pixel (0, 0, 0) of mip level 0.
    pub data: u64,
    pub width: u32,
    pub height: u32,
    pub depth: u32,
    pub array_size: u32,
    pub row_pitch: u64,
    pub slice_pitch: u64,
    /// Bytes of one texel.
    pub element_size: u32,
    pub channel_order: u32,
    pub channel_data_type: u32,
    /// 0 or 1 for an image without mipmaps.
    pub num_mip_levels: u32,
    pub levels: [MipLevel; MAX_MIP_LEVELS],
}

/// Mip levels an image may have: enough for the largest image dimension the device allows
/// (16384 = 2^14 needs 15).
pub const MAX_MIP_LEVELS: usize = 16;

/// One mip level of an image ([`ImageDescriptor::levels`]): where its pixel (0, 0, 0) is
/// relative to [`ImageDescriptor::data`], its pitches and sizes (0 for unused dimensions; the
/// array size is the image's). Field offsets are part of the JIT ABI.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MipLevel {
    pub offset: u64,
    pub row_pitch: u64,
    pub slice_pitch: u64,
    pub width: u32,
    pub height: u32,
    pub depth: u32,
    pub reserved: u32,
}

impl MipLevel {
    pub const OFFSET: i32 = 0;
    pub const ROW_PITCH: i32 = 8;
    pub const SLICE_PITCH: i32 = 16;
    pub const WIDTH: i32 = 24;
    pub const HEIGHT: i32 = 28;
    pub const DEPTH: i32 = 32;
    /// Bytes of one entry.
    pub const SIZE: usize = 40;
}

/// The runtime's description of an image, from which [`ImageDescriptor::new`] builds the
/// descriptor: level 0's geometry, and every level's (level 0 first) in `levels`.
#[derive(Clone, Copy, Debug)]
pub struct ImageGeometry<'a> {
    pub width: usize,
    pub height: usize,
    pub depth: usize,
    pub array_size: usize,
    pub row_pitch: usize,
    pub slice_pitch: usize,
    pub element_size: usize,
    pub channel_order: u32,
    pub channel_data_type: u32,
    pub num_mip_levels: u32,
    pub levels: &'a [MipLevel],
}

impl ImageDescriptor {
    pub const DATA: i32 = 0;
    pub const WIDTH: i32 = 8;
    pub const HEIGHT: i32 = 12;
    pub const DEPTH: i32 = 16;
    pub const ARRAY_SIZE: i32 = 20;
    pub const ROW_PITCH: i32 = 24;
    pub const SLICE_PITCH: i32 = 32;
    pub const ELEMENT_SIZE: i32 = 40;
    pub const CHANNEL_ORDER: i32 = 44;
    pub const CHANNEL_DATA_TYPE: i32 = 48;
    pub const NUM_MIP_LEVELS: i32 = 52;
    pub const LEVELS: i32 = 56;
    /// Bytes of the descriptor.
    pub const SIZE: usize = 56 + MAX_MIP_LEVELS * MipLevel::SIZE;

    /// The descriptor of an image whose pixel (0, 0, 0) is at `data`. Image sizes fit in u32
    /// (the device limits are far below); levels past [`MAX_MIP_LEVELS`] are not kept (the
    /// runtime refuses such images).
    pub fn new(data: u64, g: &ImageGeometry<'_>) -> Self {
        let mut levels = [MipLevel::default(); MAX_MIP_LEVELS];
        for (slot, level) in levels.iter_mut().zip(g.levels) {
            *slot = *level;
        }
        ImageDescriptor {
            data,
            width: g.width as u32,
            height: g.height as u32,
            depth: g.depth as u32,
            array_size: g.array_size as u32,
            row_pitch: g.row_pitch as u64,
            slice_pitch: g.slice_pitch as u64,
            element_size: g.element_size as u32,
            channel_order: g.channel_order,
            channel_data_type: g.channel_data_type,
            num_mip_levels: g.num_mip_levels,
            levels,
        }
    }
}

const _: () = {
    use std::mem::offset_of;
    assert!(offset_of!(ImageDescriptor, data) == ImageDescriptor::DATA as usize);
    assert!(offset_of!(ImageDescriptor, width) == ImageDescriptor::WIDTH as usize);
    assert!(offset_of!(ImageDescriptor, height) == ImageDescriptor::HEIGHT as usize);
    assert!(offset_of!(ImageDescriptor, depth) == ImageDescriptor::DEPTH as usize);
    assert!(offset_of!(ImageDescriptor, array_size) == ImageDescriptor::ARRAY_SIZE as usize);
    assert!(offset_of!(ImageDescriptor, row_pitch) == ImageDescriptor::ROW_PITCH as usize);
    assert!(offset_of!(ImageDescriptor, slice_pitch) == ImageDescriptor::SLICE_PITCH as usize);
    assert!(offset_of!(ImageDescriptor, element_size) == ImageDescriptor::ELEMENT_SIZE as usize);
    assert!(offset_of!(ImageDescriptor, channel_order) == ImageDescriptor::CHANNEL_ORDER as usize);
    assert!(
        offset_of!(ImageDescriptor, channel_data_type)
            == ImageDescriptor::CHANNEL_DATA_TYPE as usize
    );
    assert!(
        offset_of!(ImageDescriptor, num_mip_levels) == ImageDescriptor::NUM_MIP_LEVELS as usize
    );
    assert!(offset_of!(ImageDescriptor, levels) == ImageDescriptor::LEVELS as usize);
    assert!(std::mem::size_of::<ImageDescriptor>() == ImageDescriptor::SIZE);
    assert!(offset_of!(MipLevel, offset) == MipLevel::OFFSET as usize);
    assert!(offset_of!(MipLevel, row_pitch) == MipLevel::ROW_PITCH as usize);
    assert!(offset_of!(MipLevel, slice_pitch) == MipLevel::SLICE_PITCH as usize);
    assert!(offset_of!(MipLevel, width) == MipLevel::WIDTH as usize);
    assert!(offset_of!(MipLevel, height) == MipLevel::HEIGHT as usize);
    assert!(offset_of!(MipLevel, depth) == MipLevel::DEPTH as usize);
    assert!(std::mem::size_of::<MipLevel>() == MipLevel::SIZE);
};

/// What a sampler value is in kernels: the address of one of these (for a sampler argument,
/// its slot in the argument block, which holds the record — see [`ArgSlot`]; for a literal
/// sampler, an entry of a static table with the spec's defaults, see
/// [`SamplerDescriptor::literal`], reached through a JIT symbol). `bits` is the [`sampler`] pattern; `lod_min` and `lod_max`
/// are `CL_SAMPLER_LOD_MIN_KHR` and `CL_SAMPLER_LOD_MAX_KHR` as given (cl_khr_mipmap_image).
/// Equality and hashing compare bit patterns (the record is a specialisation key). Field
/// offsets are part of the JIT ABI.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct SamplerDescriptor {
    pub bits: u32,
    pub lod_min: f32,
    pub lod_max: f32,
    pub reserved: u32,
}

impl SamplerDescriptor {
    pub const BITS: i32 = 0;
    pub const LOD_MIN: i32 = 4;
    pub const LOD_MAX: i32 = 8;
    /// Bytes of the record (and of a sampler argument's slot).
    pub const SIZE: usize = 16;

    /// A literal sampler's record: the OpenCL C spec gives literal samplers the default mip
    /// filter (nearest, no bit in `bits`), `lod_min` 0 and `lod_max` MAXFLOAT.
    pub const fn literal(bits: u32) -> Self {
        SamplerDescriptor {
            bits,
            lod_min: 0.0,
            lod_max: f32::MAX,
            reserved: 0,
        }
    }

    fn key(&self) -> (u32, u32, u32) {
        (self.bits, self.lod_min.to_bits(), self.lod_max.to_bits())
    }
}

impl PartialEq for SamplerDescriptor {
    fn eq(&self, other: &Self) -> bool {
        self.key() == other.key()
    }
}
impl Eq for SamplerDescriptor {}
impl std::hash::Hash for SamplerDescriptor {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.key().hash(state)
    }
}

const _: () = {
    use std::mem::offset_of;
    assert!(offset_of!(SamplerDescriptor, bits) == SamplerDescriptor::BITS as usize);
    assert!(offset_of!(SamplerDescriptor, lod_min) == SamplerDescriptor::LOD_MIN as usize);
    assert!(offset_of!(SamplerDescriptor, lod_max) == SamplerDescriptor::LOD_MAX as usize);
    assert!(std::mem::size_of::<SamplerDescriptor>() == SamplerDescriptor::SIZE);
};

/// The records of every literal sampler, indexed by pattern: what a literal sampler value
/// points at (static, so valid for the process's life). Kernels reach the table through the
/// JIT symbol [`LITERAL_SAMPLERS_SYMBOL`], never through its address as a constant, so their
/// machine code stays valid in another process (the program cache).
pub(crate) const LITERAL_SAMPLERS_SYMBOL: &str = "ferrocl_literal_samplers";
pub(crate) static LITERAL_SAMPLERS: [SamplerDescriptor; 128] = {
    let mut t = [SamplerDescriptor::literal(0); 128];
    let mut i = 0;
    while i < 128 {
        t[i] = SamplerDescriptor::literal(i as u32);
        i += 1;
    }
    t
};

/// 8-bit normalised channels as floats (7.4: `x / 255`, `max(-1, x / 127)`, each one
/// correctly rounded division), looked up instead of divided: a read of an RGBA8 texel is then
/// four loads rather than four divisions. Kernels reach them through JIT symbols (a relocation),
/// not their address as a constant, so machine code stays valid in another process
/// (serialize.rs: the program cache); image reads of UNORM_INT8 and SNORM_INT8 formats
/// use them (translate/image.rs).
pub(crate) static UNORM8: [f32; 256] = {
    let mut t = [0.0; 256];
    let mut i = 0;
    while i < 256 {
        t[i] = i as f32 / 255.0;
        i += 1;
    }
    t
};
pub(crate) const UNORM8_SYMBOL: &str = "ferrocl_unorm8_table";
pub(crate) const SNORM8_SYMBOL: &str = "ferrocl_snorm8_table";
pub(crate) static SNORM8: [f32; 256] = {
    let mut t = [0.0; 256];
    let mut i = 0;
    while i < 256 {
        let q = (i as u8 as i8) as f32 / 127.0;
        t[i] = if q < -1.0 { -1.0 } else { q };
        i += 1;
    }
    t
};

/// The driver's read-only tables kernels read, as JIT symbols (entry_points.rs registers them
/// with every JIT module).
pub(crate) fn table_symbols() -> [(&'static str, *const u8); 6] {
    [
        (UNORM8_SYMBOL, UNORM8.as_ptr().cast()),
        (SNORM8_SYMBOL, SNORM8.as_ptr().cast()),
        (LITERAL_SAMPLERS_SYMBOL, LITERAL_SAMPLERS.as_ptr().cast()),
        (
            EXP2_128_SYMBOL,
            crate::vectorize::math_tables::EXP2_128.as_ptr().cast(),
        ),
        (
            LOG_256_SYMBOL,
            crate::vectorize::math_tables::LOG_256.as_ptr().cast(),
        ),
        (
            SIN_COS_256_SYMBOL,
            crate::vectorize::math_tables::SIN_COS_256.as_ptr().cast(),
        ),
    ]
}
/// The double vector math's tables (vectorize/math_tables.rs).
pub(crate) const EXP2_128_SYMBOL: &str = "ferrocl_exp2_128_table";
pub(crate) const LOG_256_SYMBOL: &str = "ferrocl_log_256_table";
pub(crate) const SIN_COS_256_SYMBOL: &str = "ferrocl_sin_cos_256_table";

/// A sampler's 32-bit pattern ([`SamplerDescriptor::bits`]), the same for sampler arguments and
/// literal samplers (`OpConstantSampler`, OpenCL C's `CLK_*` constants OR-ed together). The bit
/// values are those of clang's `opencl-c-base.h`: bit 0 normalised coordinates, bits 1–3 the
/// addressing mode, bits 4–5 the filter mode; bit 6, which no `CLK_*` constant uses, is the
/// mip filter (`CL_SAMPLER_MIP_FILTER_MODE_KHR`: set for linear).
pub mod sampler {
    /// `CLK_NORMALIZED_COORDS_TRUE` (`CLK_NORMALIZED_COORDS_FALSE` is 0).
    pub const NORMALIZED_COORDS: u32 = 0x1;
    /// Mask of the addressing mode.
    pub const ADDRESS_MASK: u32 = 0xe;
    /// `CLK_ADDRESS_NONE`.
    pub const ADDRESS_NONE: u32 = 0;
    /// `CLK_ADDRESS_CLAMP_TO_EDGE`.
    pub const ADDRESS_CLAMP_TO_EDGE: u32 = 2;
    /// `CLK_ADDRESS_CLAMP`.
    pub const ADDRESS_CLAMP: u32 = 4;
    /// `CLK_ADDRESS_REPEAT`.
    pub const ADDRESS_REPEAT: u32 = 6;
    /// `CLK_ADDRESS_MIRRORED_REPEAT`.
    pub const ADDRESS_MIRRORED_REPEAT: u32 = 8;
    /// Mask of the filter mode.
    pub const FILTER_MASK: u32 = 0x30;
    /// `CLK_FILTER_NEAREST`.
    pub const FILTER_NEAREST: u32 = 0x10;
    /// `CLK_FILTER_LINEAR`.
    pub const FILTER_LINEAR: u32 = 0x20;
    /// `CL_SAMPLER_MIP_FILTER_MODE_KHR` = `CL_FILTER_LINEAR` (clear: nearest, the default and
    /// what literal samplers have).
    pub const MIP_FILTER_LINEAR: u32 = 0x40;

    /// The pattern of a sampler (addressing and filter are the `ADDRESS_*` and `FILTER_*`
    /// values above).
    pub const fn bits(normalized_coords: bool, addressing: u32, filter: u32) -> u32 {
        (normalized_coords as u32) | (addressing & ADDRESS_MASK) | (filter & FILTER_MASK)
    }

    /// SPIR-V's `SamplerAddressingMode` (None 0, ClampToEdge 1, Clamp 2, Repeat 3,
    /// RepeatMirrored 4) of an `OpConstantSampler` as an `ADDRESS_*` value.
    pub const fn address_from_spirv(mode: u32) -> u32 {
        (mode * 2) & ADDRESS_MASK
    }

    /// SPIR-V's `SamplerFilterMode` (Nearest 0, Linear 1) as a `FILTER_*` value.
    pub const fn filter_from_spirv(mode: u32) -> u32 {
        if mode == 0 {
            FILTER_NEAREST
        } else {
            FILTER_LINEAR
        }
    }
}

#[cfg(test)]
mod image_abi_tests {
    use super::sampler::*;

    #[test]
    fn sampler_bits_match_opencl_c() {
        // CLK_NORMALIZED_COORDS_TRUE | CLK_ADDRESS_REPEAT | CLK_FILTER_LINEAR = 1 | 6 | 0x20.
        assert_eq!(bits(true, ADDRESS_REPEAT, FILTER_LINEAR), 0x27);
        assert_eq!(bits(false, ADDRESS_CLAMP, FILTER_NEAREST), 0x14);
        assert_eq!(address_from_spirv(4), ADDRESS_MIRRORED_REPEAT);
        assert_eq!(address_from_spirv(1), ADDRESS_CLAMP_TO_EDGE);
        assert_eq!(filter_from_spirv(1), FILTER_LINEAR);
        // The mip filter bit is one no CLK_* constant uses.
        assert_eq!(bits(true, ADDRESS_MASK, FILTER_MASK) & MIP_FILTER_LINEAR, 0);
    }

    #[test]
    fn literal_sampler_records_have_the_spec_defaults() {
        use super::{SamplerDescriptor, LITERAL_SAMPLERS};
        for (i, r) in LITERAL_SAMPLERS.iter().enumerate() {
            assert_eq!(r.bits, i as u32);
            // CL_SAMPLER_LOD_MIN_KHR 0.0f, CL_SAMPLER_LOD_MAX_KHR MAXFLOAT, mip filter nearest.
            assert_eq!((r.lod_min, r.lod_max), (0.0, f32::MAX));
        }
        // Records are keys by bit pattern: -0.0 and 0.0 are two records.
        let a = SamplerDescriptor::literal(3);
        let b = SamplerDescriptor { lod_min: -0.0, ..a };
        assert_ne!(a, b);
        assert_eq!(a, SamplerDescriptor::literal(3));
    }
}
