//! The driver's kernel environment ([`AbiEnvironment`]): abi.rs's layouts, entry_points.rs's
//! functions and the program's JIT module ([`super::ModuleEnv`]) for references to them. The
//! trait it implements, and what translation may ask, is [`crate::environment`].

use std::collections::HashMap;

use cranelift_codegen::ir::{self, types, InstBuilder, MemFlagsData, Value};
use cranelift_codegen::isa::TargetIsa;
use cranelift_frontend::FunctionBuilder;
use cranelift_module::Module as _;
use ferrocl_frontend::spirv::Word;
use ferrocl_frontend::KernelInfo;

use super::ModuleEnv;
use crate::abi::{
    sampler, ArgSlot, GroupInfo, ImageDescriptor, MipLevel, SamplerDescriptor, LITERAL_SAMPLERS,
    LITERAL_SAMPLERS_SYMBOL, PRINTF_BUFFER_HEADER, PRINTF_RECORD_HEADER, SUB_GROUP_SIZE,
};
use crate::entry_points::EntryPoint;
use crate::environment::{
    GroupField, ImageField, KernelEnvironment, MipLevelField, SamplerEncoding, SamplerField, Table,
    SAMPLER_ENCODING,
};
use crate::error::BuildError;
use crate::options::{BuildOptions, ImageKey, Specialization};

/// The driver's environment for one kernel: abi.rs's layouts, the program's JIT module.
pub(crate) struct AbiEnvironment<'a> {
    module: &'a mut ModuleEnv,
    specialize: Option<&'a Specialization>,
    slots: Vec<ArgSlot>,
    args_size: usize,
    /// Arena offsets of the kernel's `Workgroup` variables.
    local_offsets: HashMap<Word, u64>,
    func_refs: HashMap<EntryPoint, ir::FuncRef>,
    data_refs: HashMap<Word, ir::GlobalValue>,
    table_refs: HashMap<&'static str, ir::GlobalValue>,
    /// Specialised builds: what is known of the image arguments (format, whether they have
    /// mip levels), by the value holding their descriptor address.
    known_images: HashMap<Value, ImageKey>,
    /// The records of sampler values known at build time (literal samplers; sampler arguments
    /// of specialised builds), by the value holding their address.
    known_samplers: HashMap<Value, SamplerDescriptor>,
}

impl<'a> AbiEnvironment<'a> {
    /// The environment of `kernel`, whose `Workgroup` variables are at `local_offsets`: its
    /// argument block laid out for `options`.
    pub(crate) fn new(
        module: &'a mut ModuleEnv,
        kernel: &KernelInfo,
        options: &'a BuildOptions,
        local_offsets: HashMap<Word, u64>,
    ) -> Self {
        let (slots, args_size) = crate::abi::arg_block_layout(kernel, options.checked);
        AbiEnvironment {
            module,
            specialize: options.specialize.as_ref(),
            slots,
            args_size,
            local_offsets,
            func_refs: HashMap::new(),
            data_refs: HashMap::new(),
            table_refs: HashMap::new(),
            known_images: HashMap::new(),
            known_samplers: HashMap::new(),
        }
    }

    /// The argument block's layout: each argument's slot, and the block's size.
    pub(crate) fn into_arg_block(self) -> (Vec<ArgSlot>, usize) {
        (self.slots, self.args_size)
    }

    /// A reference to the driver's table `symbol` from `func`.
    fn table_ref(
        &mut self,
        func: &mut ir::Function,
        symbol: &'static str,
    ) -> Result<ir::GlobalValue, BuildError> {
        if let Some(gv) = self.table_refs.get(symbol) {
            return Ok(*gv);
        }
        let data = self.module.table(symbol)?;
        let gv = self.module.declare_data_in_func(data, func);
        self.table_refs.insert(symbol, gv);
        Ok(gv)
    }
}

impl KernelEnvironment for AbiEnvironment<'_> {
    fn isa(&self) -> &dyn TargetIsa {
        self.module.jit.isa()
    }

    fn sub_group_size(&self) -> u64 {
        SUB_GROUP_SIZE
    }

    fn load_group_field(
        &self,
        b: &mut FunctionBuilder<'_>,
        flags: MemFlagsData,
        group: Value,
        field: GroupField,
    ) -> Value {
        let dim = |base: i32, d: u8| base + 8 * i32::from(d);
        let (ty, offset) = match field {
            GroupField::GlobalOffset(d) => (types::I64, dim(GroupInfo::GLOBAL_OFFSET, d)),
            GroupField::GlobalSize(d) => (types::I64, dim(GroupInfo::GLOBAL_SIZE, d)),
            GroupField::LocalSize(d) => (types::I64, dim(GroupInfo::LOCAL_SIZE, d)),
            GroupField::EnqueuedLocalSize(d) => {
                (types::I64, dim(GroupInfo::ENQUEUED_LOCAL_SIZE, d))
            }
            GroupField::GroupId(d) => (types::I64, dim(GroupInfo::GROUP_ID, d)),
            GroupField::NumGroups(d) => (types::I64, dim(GroupInfo::NUM_GROUPS, d)),
            GroupField::WorkDim => (types::I32, GroupInfo::WORK_DIM),
            GroupField::Frames => (types::I64, GroupInfo::FRAMES),
            GroupField::FramesSize => (types::I64, GroupInfo::FRAMES_SIZE),
            GroupField::PrintfBuffer => (types::I64, GroupInfo::PRINTF_BUFFER),
            GroupField::LocalMemSize => (types::I64, GroupInfo::LOCAL_MEM_SIZE),
        };
        b.ins().load(ty, flags, group, offset)
    }

    fn argument_address(&self, b: &mut FunctionBuilder<'_>, args: Value, index: usize) -> Value {
        b.ins().iadd_imm_s(args, self.slots[index].offset as i64)
    }

    fn argument_bounds(
        &self,
        b: &mut FunctionBuilder<'_>,
        flags: MemFlagsData,
        args: Value,
        index: usize,
    ) -> Option<(Value, Value)> {
        let bounds = self.slots.get(index)?.bounds? as i32;
        let lo = b.ins().load(types::I64, flags, args, bounds);
        let hi = b.ins().load(types::I64, flags, args, bounds + 8);
        Some((lo, hi))
    }

    fn load_image_field(
        &self,
        b: &mut FunctionBuilder<'_>,
        flags: MemFlagsData,
        image: Value,
        field: ImageField,
    ) -> Value {
        let (ty, offset) = match field {
            ImageField::Data => (types::I64, ImageDescriptor::DATA),
            ImageField::Width => (types::I32, ImageDescriptor::WIDTH),
            ImageField::Height => (types::I32, ImageDescriptor::HEIGHT),
            ImageField::Depth => (types::I32, ImageDescriptor::DEPTH),
            ImageField::ArraySize => (types::I32, ImageDescriptor::ARRAY_SIZE),
            ImageField::RowPitch => (types::I64, ImageDescriptor::ROW_PITCH),
            ImageField::SlicePitch => (types::I64, ImageDescriptor::SLICE_PITCH),
            ImageField::ElementSize => (types::I32, ImageDescriptor::ELEMENT_SIZE),
            ImageField::ChannelOrder => (types::I32, ImageDescriptor::CHANNEL_ORDER),
            ImageField::ChannelDataType => (types::I32, ImageDescriptor::CHANNEL_DATA_TYPE),
            ImageField::NumMipLevels => (types::I32, ImageDescriptor::NUM_MIP_LEVELS),
        };
        b.ins().load(ty, flags, image, offset)
    }

    fn mip_level_entry(&self, b: &mut FunctionBuilder<'_>, image: Value, level: Value) -> Value {
        let at = b.ins().imul_imm_s(level, MipLevel::SIZE as i64);
        b.ins().iadd(image, at)
    }

    fn load_mip_level_field(
        &self,
        b: &mut FunctionBuilder<'_>,
        flags: MemFlagsData,
        entry: Value,
        field: MipLevelField,
    ) -> Value {
        let (ty, offset) = match field {
            MipLevelField::Offset => (types::I64, MipLevel::OFFSET),
            MipLevelField::RowPitch => (types::I64, MipLevel::ROW_PITCH),
            MipLevelField::SlicePitch => (types::I64, MipLevel::SLICE_PITCH),
            MipLevelField::Width => (types::I32, MipLevel::WIDTH),
            MipLevelField::Height => (types::I32, MipLevel::HEIGHT),
            MipLevelField::Depth => (types::I32, MipLevel::DEPTH),
        };
        b.ins()
            .load(ty, flags, entry, ImageDescriptor::LEVELS + offset)
    }

    fn load_sampler_field(
        &self,
        b: &mut FunctionBuilder<'_>,
        flags: MemFlagsData,
        sampler: Value,
        field: SamplerField,
    ) -> Value {
        let (ty, offset) = match field {
            SamplerField::Bits => (types::I32, SamplerDescriptor::BITS),
            SamplerField::LodMin => (types::F32, SamplerDescriptor::LOD_MIN),
            SamplerField::LodMax => (types::F32, SamplerDescriptor::LOD_MAX),
        };
        b.ins().load(ty, flags, sampler, offset)
    }

    fn sampler_encoding(&self) -> &'static SamplerEncoding {
        &SAMPLER_ENCODING
    }

    fn literal_sampler(
        &mut self,
        b: &mut FunctionBuilder<'_>,
        addressing: u32,
        normalized: bool,
        filter: u32,
    ) -> Result<Value, BuildError> {
        // The address of its record in the driver's static table (a JIT symbol, so the code
        // stays valid in another process), as sampler values are.
        let bits = sampler::bits(
            normalized,
            sampler::address_from_spirv(addressing),
            sampler::filter_from_spirv(filter),
        ) as usize
            & 127;
        let gv = self.table_ref(b.func, LITERAL_SAMPLERS_SYMBOL)?;
        let table = b.ins().symbol_value(types::I64, gv);
        let v = b
            .ins()
            .iadd_imm_s(table, (bits * SamplerDescriptor::SIZE) as i64);
        self.known_samplers.insert(v, LITERAL_SAMPLERS[bits]);
        Ok(v)
    }

    fn table_global(
        &mut self,
        func: &mut ir::Function,
        table: Table,
    ) -> Result<ir::GlobalValue, BuildError> {
        let symbol = match table {
            Table::Unorm8 => crate::abi::UNORM8_SYMBOL,
            Table::Snorm8 => crate::abi::SNORM8_SYMBOL,
            Table::Exp2 => crate::abi::EXP2_128_SYMBOL,
            Table::Log => crate::abi::LOG_256_SYMBOL,
            Table::SinCos => crate::abi::SIN_COS_256_SYMBOL,
        };
        self.table_ref(func, symbol)
    }

    fn bind_argument(&mut self, index: usize, v: Value) {
        let Some(spec) = self.specialize else { return };
        if let Some(&(_, key)) = spec.images.iter().find(|(i, _)| *i == index) {
            self.known_images.insert(v, key);
        }
        if let Some(&(_, record)) = spec.samplers.iter().find(|(i, _)| *i == index) {
            self.known_samplers.insert(v, record);
        }
    }

    fn known_image(&self, image: Value) -> Option<ImageKey> {
        self.known_images.get(&image).copied()
    }

    fn known_sampler(&self, sampler: Value) -> Option<SamplerDescriptor> {
        self.known_samplers.get(&sampler).copied()
    }

    fn printf_record_header_bytes(&self) -> u64 {
        PRINTF_RECORD_HEADER as u64
    }

    fn printf_capacity(
        &self,
        b: &mut FunctionBuilder<'_>,
        flags: MemFlagsData,
        buffer: Value,
    ) -> Value {
        // The buffer's header: the allocation counter, then the capacity (u64 each).
        b.ins().load(types::I64, flags, buffer, 8)
    }

    fn printf_records(&self, b: &mut FunctionBuilder<'_>, buffer: Value) -> Value {
        b.ins().iadd_imm_s(buffer, PRINTF_BUFFER_HEADER as i64)
    }

    fn store_printf_header(
        &self,
        b: &mut FunctionBuilder<'_>,
        flags: MemFlagsData,
        record: Value,
        length: Value,
        format: Value,
    ) {
        b.ins().store(flags, length, record, 0);
        b.ins().store(flags, format, record, 4);
    }

    fn entry_point(
        &mut self,
        func: &mut ir::Function,
        entry: EntryPoint,
    ) -> Result<ir::FuncRef, BuildError> {
        if let Some(f) = self.func_refs.get(&entry) {
            return Ok(*f);
        }
        let id = self.module.import(entry)?;
        let f = self.module.jit.declare_func_in_func(id, func);
        self.func_refs.insert(entry, f);
        Ok(f)
    }

    fn program_variable(
        &mut self,
        func: &mut ir::Function,
        id: Word,
    ) -> Result<ir::GlobalValue, BuildError> {
        if let Some(gv) = self.data_refs.get(&id) {
            return Ok(*gv);
        }
        let data =
            *self.module.data.get(&id).ok_or_else(|| {
                BuildError::new("internal: program-scope variable without data\n")
            })?;
        let gv = self.module.declare_data_in_func(data, func);
        self.data_refs.insert(id, gv);
        Ok(gv)
    }

    fn local_variable_offset(&self, id: Word) -> Option<u64> {
        self.local_offsets.get(&id).copied()
    }
}
