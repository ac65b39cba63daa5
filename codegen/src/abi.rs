//! The contract between JIT code and the runtime: the work-group function signature, the
//! per-launch `GroupInfo`, and the argument block layout.

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

/// Work-items per sub-group: consecutive linear local ids form a sub-group, the last one of a
/// work-group may be smaller. Four is the number of 32-bit lanes in one Cranelift vector
/// (128 bits, the widest Cranelift lowers on x86-64), the width at which codegen will later run
/// work-items side by side in SIMD lanes (DESIGN.md "Vectors and SIMD"); AVX-512 registers are
/// out of Cranelift's reach. The runtime answers the sub-group API queries from it.
pub const SUB_GROUP_SIZE: u64 = 4;

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
}

impl GroupInfo {
    pub(crate) const GLOBAL_OFFSET: i32 = 0;
    pub(crate) const GLOBAL_SIZE: i32 = 24;
    pub(crate) const LOCAL_SIZE: i32 = 48;
    pub(crate) const ENQUEUED_LOCAL_SIZE: i32 = 72;
    pub(crate) const GROUP_ID: i32 = 96;
    pub(crate) const NUM_GROUPS: i32 = 120;
    pub(crate) const WORK_DIM: i32 = 144;
    pub(crate) const FRAMES: i32 = 152;
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
    assert!(GroupInfo::GLOBAL_OFFSET == 0);
};

/// Where one kernel argument lives in the argument block.
///
/// What the runtime stores there depends on the argument's [`ferrocl_frontend::ArgKind`]:
/// - `Buffer`: the buffer's host address as a pointer (8 bytes; NULL allowed);
/// - `Local`: the byte offset (u64) of this argument's region inside the local-memory arena;
/// - `Value`: the bytes given to `clSetKernelArg`, `size` of them;
/// - `Sampler` / `Image`: a pointer to the runtime's descriptor (8 bytes).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ArgSlot {
    pub offset: usize,
    pub size: usize,
}
