//! The kernel environment: everything translation needs to know of the target and the runtime
//! and must not decide itself, behind one trait ([`KernelEnvironment`]), as wasmtime's
//! `FuncEnvironment` keeps a Wasm module's memory layout and runtime calls out of its
//! translator. The translator (translate/) knows SPIR-V and OpenCL semantics; the environment
//! knows where the launch's values are (the group info, the argument block, image and sampler
//! descriptors, the printf buffer), how a call reaches the driver (entry points, mathlib, the
//! driver's tables, program-scope data), and what a specialised build may assume of its image
//! and sampler arguments. Methods that read the runtime's structures emit the loads into the
//! caller's function builder, with the memory flags the caller knows apply.
//!
//! The driver's implementation, `AbiEnvironment` (abi.rs's layouts, entry_points.rs's
//! functions, the program's JIT module for references to them), is in jit/environment.rs.

use cranelift_codegen::ir::{self, InstBuilder, MemFlagsData, Value};
use cranelift_codegen::isa::TargetIsa;
use cranelift_frontend::FunctionBuilder;
use ferrocl_frontend::spirv::Word;

use crate::abi::{sampler, SamplerDescriptor, SUB_GROUP_SIZE};
use crate::entry_points::EntryPoint;
use crate::error::BuildError;
use crate::options::ImageKey;

/// A field of the launch's group info (the work-group function's `group` parameter).
/// Per-dimension fields name their dimension (0, 1 or 2).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum GroupField {
    GlobalOffset(u8),
    GlobalSize(u8),
    LocalSize(u8),
    EnqueuedLocalSize(u8),
    GroupId(u8),
    NumGroups(u8),
    /// i32; every other field is i64.
    WorkDim,
    /// The group's work-item frames (kernels with barriers).
    Frames,
    /// Bytes of the frames: private memory, for telling generic pointers apart.
    FramesSize,
    /// The launch's printf buffer.
    PrintfBuffer,
    /// Bytes of local memory the group may use.
    LocalMemSize,
}

/// A field of an image descriptor describing mip level 0 (the image without a level).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ImageField {
    /// i64 address of pixel (0, 0, 0).
    Data,
    /// The sizes: i32.
    Width,
    Height,
    Depth,
    ArraySize,
    /// Bytes between rows and between slices (layers of a 1D array): i64.
    RowPitch,
    SlicePitch,
    /// i32 bytes of one texel.
    ElementSize,
    /// SPIR-V's `ImageChannelOrder` and `ImageChannelDataType`: i32.
    ChannelOrder,
    ChannelDataType,
    /// i32, 0 or 1 without mipmaps.
    NumMipLevels,
}

/// A field of one mip level's entry in an image descriptor's level table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum MipLevelField {
    /// i64 bytes from the image's data to the level's pixel (0, 0, 0).
    Offset,
    /// i64.
    RowPitch,
    SlicePitch,
    /// i32.
    Width,
    Height,
    Depth,
}

/// A field of a sampler's record (what a sampler value points at).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum SamplerField {
    /// i32 pattern ([`SamplerEncoding`]).
    Bits,
    /// f32 lod clamps.
    LodMin,
    LodMax,
}

/// The driver's read-only tables kernels read.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Table {
    /// 256 f32s: UNORM_INT8 channel value → float.
    Unorm8,
    /// 256 f32s: SNORM_INT8 channel value → float.
    Snorm8,
    /// 2^(j/128) as double-doubles (vectorize/math_tables.rs).
    Exp2,
    /// log's reduction constants and their logarithms (vectorize/math_tables.rs).
    Log,
    /// sin and cos of jπ/128 as double-doubles (vectorize/math_tables.rs).
    SinCos,
}

/// How a sampler's pattern ([`SamplerField::Bits`]) encodes its modes: the masks and values
/// image code tests.
#[derive(Clone, Copy, Debug)]
pub(crate) struct SamplerEncoding {
    /// Set for normalised coordinates.
    pub(crate) normalized_coords: u32,
    /// The addressing mode's bits, and the values it compares with.
    pub(crate) address_mask: u32,
    pub(crate) address_clamp: u32,
    pub(crate) address_repeat: u32,
    pub(crate) address_mirrored_repeat: u32,
    /// Set for linear filtering (clear: nearest).
    pub(crate) filter_linear: u32,
    /// Set for a linear mip filter (clear: nearest).
    pub(crate) mip_filter_linear: u32,
}

/// What translating one kernel needs of the target and the runtime (see the module header).
/// One per kernel function: references it hands out are valid in that function only.
pub(crate) trait KernelEnvironment {
    // --- Target.

    /// The ISA the function is compiled for.
    fn isa(&self) -> &dyn TargetIsa;

    /// Work-items per sub-group of kernels that require no size (a power of two, at most 32;
    /// a kernel's `SubgroupSize` overrides it, abi.rs `sub_group_size_of`).
    fn sub_group_size(&self) -> u64;

    // --- The launch's group info.

    /// Loads `field` of the group info at `group`.
    fn load_group_field(
        &self,
        b: &mut FunctionBuilder<'_>,
        flags: MemFlagsData,
        group: Value,
        field: GroupField,
    ) -> Value;

    // --- The argument block.

    /// The address of argument `index`'s slot in the argument block at `args` (what a
    /// sampler argument's value is; what holds the others).
    fn argument_address(&self, b: &mut FunctionBuilder<'_>, args: Value, index: usize) -> Value;

    /// Checked mode: loads the bounds `[lo, hi)` the runtime wrote for argument `index`, when
    /// it has some (buffers and `__local` arguments of checked builds).
    fn argument_bounds(
        &self,
        b: &mut FunctionBuilder<'_>,
        flags: MemFlagsData,
        args: Value,
        index: usize,
    ) -> Option<(Value, Value)>;

    // --- Image and sampler descriptors.

    /// Loads `field` of the image descriptor at `image`.
    fn load_image_field(
        &self,
        b: &mut FunctionBuilder<'_>,
        flags: MemFlagsData,
        image: Value,
        field: ImageField,
    ) -> Value;

    /// The address of mip level `level`'s (i64) entry in the level table of the image
    /// descriptor at `image`.
    fn mip_level_entry(&self, b: &mut FunctionBuilder<'_>, image: Value, level: Value) -> Value;

    /// Loads `field` of the level table entry at `entry` ([`Self::mip_level_entry`]).
    fn load_mip_level_field(
        &self,
        b: &mut FunctionBuilder<'_>,
        flags: MemFlagsData,
        entry: Value,
        field: MipLevelField,
    ) -> Value;

    /// Loads `field` of the sampler record at `sampler` (a sampler value).
    fn load_sampler_field(
        &self,
        b: &mut FunctionBuilder<'_>,
        flags: MemFlagsData,
        sampler: Value,
        field: SamplerField,
    ) -> Value;

    /// How sampler patterns encode their modes.
    fn sampler_encoding(&self) -> &'static SamplerEncoding;

    /// The value of a literal sampler (`OpConstantSampler`: SPIR-V's addressing mode,
    /// normalised flag and filter mode), whose record is then known
    /// ([`Self::known_sampler`]).
    fn literal_sampler(
        &mut self,
        b: &mut FunctionBuilder<'_>,
        addressing: u32,
        normalized: bool,
        filter: u32,
    ) -> Result<Value, BuildError>;

    /// The global value of the driver's table `table` in function `func` (declared on first
    /// use), for code that addresses it later (the vector math the vectoriser emits).
    fn table_global(
        &mut self,
        func: &mut ir::Function,
        table: Table,
    ) -> Result<ir::GlobalValue, BuildError>;

    /// The address of the driver's table `table`.
    fn table_address(
        &mut self,
        b: &mut FunctionBuilder<'_>,
        table: Table,
    ) -> Result<Value, BuildError> {
        let gv = self.table_global(b.func, table)?;
        Ok(b.ins().symbol_value(ir::types::I64, gv))
    }

    // --- Image specialisation.

    /// Argument `index` of the kernel has value `v` (an image's descriptor address or a
    /// sampler's record address): a specialised build learns what it knows of it.
    fn bind_argument(&mut self, index: usize, v: Value);

    /// What the build knows of the image whose descriptor address is `image`.
    fn known_image(&self, image: Value) -> Option<ImageKey>;

    /// The record of sampler value `sampler`, when known at build time.
    fn known_sampler(&self, sampler: Value) -> Option<SamplerDescriptor>;

    // --- printf.

    /// Bytes of a printf record's header (before its arguments).
    fn printf_record_header_bytes(&self) -> u64;

    /// Loads the capacity in record bytes of the printf buffer at `buffer`.
    fn printf_capacity(
        &self,
        b: &mut FunctionBuilder<'_>,
        flags: MemFlagsData,
        buffer: Value,
    ) -> Value;

    /// The address of the first record of the printf buffer at `buffer` (the allocation
    /// counter, an i64 at `buffer`, counts bytes from there).
    fn printf_records(&self, b: &mut FunctionBuilder<'_>, buffer: Value) -> Value;

    /// Stores a record's header: its length and its format index (both i32).
    fn store_printf_header(
        &self,
        b: &mut FunctionBuilder<'_>,
        flags: MemFlagsData,
        record: Value,
        length: Value,
        format: Value,
    );

    // --- Calls and program data.

    /// A reference to `entry` (the driver's and mathlib's functions) from `func`.
    fn entry_point(
        &mut self,
        func: &mut ir::Function,
        entry: EntryPoint,
    ) -> Result<ir::FuncRef, BuildError>;

    /// A reference to program-scope variable `id` (`CrossWorkgroup`, `UniformConstant`)
    /// from `func`.
    fn program_variable(
        &mut self,
        func: &mut ir::Function,
        id: Word,
    ) -> Result<ir::GlobalValue, BuildError>;

    /// The offset in the local arena of `Workgroup` variable `id` the kernel reaches.
    fn local_variable_offset(&self, id: Word) -> Option<u64>;
}

/// The driver's sampler patterns (abi.rs [`sampler`]).
pub(crate) static SAMPLER_ENCODING: SamplerEncoding = SamplerEncoding {
    normalized_coords: sampler::NORMALIZED_COORDS,
    address_mask: sampler::ADDRESS_MASK,
    address_clamp: sampler::ADDRESS_CLAMP,
    address_repeat: sampler::ADDRESS_REPEAT,
    address_mirrored_repeat: sampler::ADDRESS_MIRRORED_REPEAT,
    filter_linear: sampler::FILTER_LINEAR,
    mip_filter_linear: sampler::MIP_FILTER_LINEAR,
};

const _: () = assert!(SUB_GROUP_SIZE.is_power_of_two() && SUB_GROUP_SIZE <= 32);
