//! Barriers, atomics and group collectives: scopes, memory semantics, operand types.

use super::*;
use crate::instruction::{
    is_group_collective, is_pipe_instruction, AtomicOp, ControlBarrier, GroupOp, MemoryBarrier,
    MemoryNamedBarrier,
};

impl<'m> Checker<'m> {
    /// Barriers, group collectives and atomics. Whether the opcode is one of them.
    pub(super) fn sync_instruction(&mut self, inst: &Instruction, rt: Word) -> bool {
        use Op::*;
        let op = inst.class.opcode;
        match op {
            ControlBarrier | MemoryBarrier | MemoryNamedBarrier => self.barrier(inst),
            NamedBarrierInitialize => {
                if self.ty(rt) != Some(&Type::NamedBarrier) {
                    let rule = format!(
                        "SPIR-V (barrier instructions): the result of OpNamedBarrierInitialize must be an OpTypeNamedBarrier, found {}",
                        self.type_name(rt)
                    );
                    self.report(inst, rule);
                }
                if let Some(t) = self.operand_type(inst, 0) {
                    if self.shape(t) != Some((Kind::Int(32), 1)) {
                        let rule = format!(
                            "SPIR-V (barrier instructions): the Subgroup Count of OpNamedBarrierInitialize must be a 32-bit integer scalar, found {}",
                            self.type_name(t)
                        );
                        self.report(inst, rule);
                    }
                }
            }
            op if is_group_collective(op) => self.group_collective(inst, rt),
            op if is_pipe_instruction(op) => self.pipe(inst, rt),
            op if format!("{op:?}").starts_with("GroupNonUniform") => {
                // Every <id> after the execution scope must be a value (operand_type reports
                // it otherwise); codegen checks the types each operation takes.
                for i in 1..inst.operands.len() {
                    if matches!(inst.operands[i], Operand::IdRef(_)) {
                        self.operand_type(inst, i);
                    }
                }
            }
            SubgroupShuffleINTEL
            | SubgroupShuffleDownINTEL
            | SubgroupShuffleUpINTEL
            | SubgroupShuffleXorINTEL => self.intel_shuffle(inst, rt),
            SubgroupBlockReadINTEL
            | SubgroupBlockWriteINTEL
            | SubgroupImageBlockReadINTEL
            | SubgroupImageBlockWriteINTEL => self.intel_block_io(inst, rt),
            op if AtomicOp::of(op).is_some_and(|a| !a.is_flag()) => self.atomic(inst, rt),
            _ => return false,
        }
        true
    }

    /// The pipe instructions (SPIR-V 3.52.23): the pipe operand a pipe of the end the
    /// instruction uses, 32-bit integer packet size and alignment (constants 1 ≤ alignment ≤
    /// size, the alignment dividing the size, when they are constants), 32-bit counts and
    /// indices, pointers for packets, reserve ids where the instruction takes or makes one,
    /// and the result types; the group forms' execution scope Workgroup or Subgroup.
    fn pipe(&mut self, inst: &Instruction, rt: Word) {
        use Op::*;
        let op = inst.class.opcode;
        let n = inst.operands.len();
        let group = crate::instruction::is_group_pipe(op);
        if op == IsValidReserveId {
            if !matches!(self.ty(rt), Some(Type::Bool)) {
                let rule = format!(
                    "SPIR-V Pipe: the result of OpIsValidReserveId must be a boolean, found {}",
                    self.type_name(rt)
                );
                self.report(inst, rule);
            }
            self.expect_reserve_id(inst, 0);
            return;
        }
        if n < 3 {
            self.report(inst, format!("SPIR-V Pipe: Op{op:?} has too few operands"));
            return;
        }
        if group {
            if let Some(exec) = self.constant_operand(inst, 0, "Scope for Execution") {
                if exec != Scope::Workgroup as u32 && exec != Scope::Subgroup as u32 {
                    let rule = format!(
                        "env 4: Scope for Execution of Op{op:?} must be Workgroup or Subgroup, found {}",
                        scope_name(exec)
                    );
                    self.report(inst, rule);
                }
            }
        }
        let first = usize::from(group);
        // The end the instruction uses; the queries work at either.
        let end = match op {
            ReadPipe
            | ReservedReadPipe
            | ReserveReadPipePackets
            | CommitReadPipe
            | GroupReserveReadPipePackets
            | GroupCommitReadPipe => Some(spirv::AccessQualifier::ReadOnly),
            GetNumPipePackets | GetMaxPipePackets => None,
            _ => Some(spirv::AccessQualifier::WriteOnly),
        };
        if let Some(t) = self.operand_type(inst, first) {
            match (self.ty(t), end) {
                (Some(Type::Pipe { access }), Some(end)) if *access != end => {
                    let rule = format!(
                        "SPIR-V Pipe: Op{op:?} needs a {end:?} pipe, found a {access:?} one"
                    );
                    self.report(inst, rule);
                }
                (Some(Type::Pipe { .. }), _) => {}
                _ => {
                    let rule = format!(
                        "SPIR-V Pipe: the Pipe of Op{op:?} must be an OpTypePipe, found {}",
                        self.type_name(t)
                    );
                    self.report(inst, rule);
                }
            }
        }
        // Packet size and alignment: the last two operands.
        for i in [n - 2, n - 1] {
            self.expect_int32(inst, i, "Packet Size and Packet Alignment");
        }
        let constant = |c: &Self, i: usize| match inst.operands.get(i) {
            Some(Operand::IdRef(id)) => c.constant_value(*id),
            _ => None,
        };
        if let (Some(size), Some(align)) = (constant(self, n - 2), constant(self, n - 1)) {
            if align == 0 || align > size || size % align != 0 {
                let rule = format!(
                    "SPIR-V Pipe: Packet Alignment {align} of Op{op:?} must be at least 1, at most the Packet Size {size} and divide it"
                );
                self.report(inst, rule);
            }
        }
        let int32_result = |c: &mut Self| {
            if c.ty(rt) != Some(&Type::Int { width: 32 }) {
                let rule = format!(
                    "SPIR-V Pipe: the result of Op{op:?} must be a 32-bit integer, found {}",
                    c.type_name(rt)
                );
                c.report(inst, rule);
            }
        };
        match op {
            ReadPipe | WritePipe => {
                int32_result(self);
                self.expect_pointer(inst, 1, "Pipe", &format!("the Pointer of Op{op:?}"));
            }
            ReservedReadPipe | ReservedWritePipe => {
                int32_result(self);
                self.expect_reserve_id(inst, 1);
                self.expect_int32(inst, 2, "Index");
                self.expect_pointer(inst, 3, "Pipe", &format!("the Pointer of Op{op:?}"));
            }
            ReserveReadPipePackets
            | ReserveWritePipePackets
            | GroupReserveReadPipePackets
            | GroupReserveWritePipePackets => {
                if self.ty(rt) != Some(&Type::ReserveId) {
                    let rule = format!(
                        "SPIR-V Pipe: the result of Op{op:?} must be an OpTypeReserveId, found {}",
                        self.type_name(rt)
                    );
                    self.report(inst, rule);
                }
                self.expect_int32(inst, first + 1, "Num Packets");
            }
            CommitReadPipe | CommitWritePipe | GroupCommitReadPipe | GroupCommitWritePipe => {
                self.expect_reserve_id(inst, first + 1);
            }
            _ => int32_result(self),
        }
    }

    /// Operand `i` a 32-bit integer scalar (pipe and device-enqueue operands).
    pub(super) fn expect_int32(&mut self, inst: &Instruction, i: usize, what: &str) {
        if let Some(t) = self.operand_type(inst, i) {
            if self.shape(t) != Some((Kind::Int(32), 1)) {
                let section = if is_pipe_instruction(inst.class.opcode) {
                    "Pipe"
                } else {
                    "Device-Side Enqueue"
                };
                let rule = format!(
                    "SPIR-V {section}: the {what} of Op{:?} must be a 32-bit integer scalar, found {}",
                    inst.class.opcode,
                    self.type_name(t)
                );
                self.report(inst, rule);
            }
        }
    }

    fn expect_reserve_id(&mut self, inst: &Instruction, i: usize) {
        if let Some(t) = self.operand_type(inst, i) {
            if self.ty(t) != Some(&Type::ReserveId) {
                let rule = format!(
                    "SPIR-V Pipe: the Reserve Id of Op{:?} must be an OpTypeReserveId, found {}",
                    inst.class.opcode,
                    self.type_name(t)
                );
                self.report(inst, rule);
            }
        }
    }

    /// The value of a Scope or Memory Semantics operand, which must be an integer OpConstant.
    pub(super) fn constant_operand(
        &mut self,
        inst: &Instruction,
        i: usize,
        what: &str,
    ) -> Option<u32> {
        let value = match inst.operands.get(i) {
            Some(Operand::IdRef(id) | Operand::IdScope(id) | Operand::IdMemorySemantics(id)) => {
                self.constant_value(*id)
            }
            _ => None,
        };
        if value.is_none() {
            let rule = format!(
                "SPIR-V 2.2: {what} of Op{:?} must be an integer OpConstant",
                inst.class.opcode
            );
            self.report(inst, rule);
        }
        value.map(|v| v as u32)
    }

    /// env 4: barrier scopes and orders allowed by the device's fence capabilities.
    pub(super) fn barrier(&mut self, inst: &Instruction) {
        let control = inst.class.opcode == Op::ControlBarrier;
        let named = inst.class.opcode == Op::MemoryNamedBarrier;
        let (memory, semantics) = if control {
            (ControlBarrier::MEMORY, ControlBarrier::SEMANTICS)
        } else if named {
            (MemoryNamedBarrier::MEMORY, MemoryNamedBarrier::SEMANTICS)
        } else {
            (MemoryBarrier::MEMORY, MemoryBarrier::SEMANTICS)
        };
        if named {
            if let Some(t) = self.operand_type(inst, MemoryNamedBarrier::BARRIER) {
                if self.ty(t) != Some(&Type::NamedBarrier) {
                    let rule = format!(
                        "SPIR-V (barrier instructions): the Named Barrier of OpMemoryNamedBarrier must be an OpTypeNamedBarrier, found {}",
                        self.type_name(t)
                    );
                    self.report(inst, rule);
                }
            }
        }
        if control {
            let execution = ControlBarrier::EXECUTION;
            if let Some(exec) = self.constant_operand(inst, execution, "Scope for Execution") {
                // env 5.2.11: Subgroup with cl_khr_subgroups (codegen refuses it when the
                // device's sub-groups are turned off).
                if exec != Scope::Workgroup as u32 && exec != Scope::Subgroup as u32 {
                    let rule = format!("env 4: Scope for Execution of OpControlBarrier must be Workgroup or Subgroup, found {}", scope_name(exec));
                    self.report(inst, rule);
                }
            }
        }
        if let Some(mem) = self.constant_operand(inst, memory, "Scope for Memory") {
            // env 5.2.11: barriers and fences may also name Subgroup memory scope.
            if !FENCE_SCOPES.iter().any(|s| *s as u32 == mem) && mem != Scope::Subgroup as u32 {
                let rule = format!("env 4: Scope for Memory {} is not in this device's CL_DEVICE_ATOMIC_FENCE_CAPABILITIES (work-item, work-group, device and all-devices scope)", scope_name(mem));
                self.report(inst, rule);
            }
        }
        if let Some(sem) = self.constant_operand(inst, semantics, "Memory Semantics") {
            // OpenCL C 1.2 barriers are sequentially consistent (env 4, OpenCL 1.2 rule); the
            // device's fence orders are relaxed and acquire/release.
            if sem & ORDER_MASK & !(ACQUIRE | RELEASE | ACQ_REL | SEQ_CST) != 0
                || (sem & ORDER_MASK).count_ones() > 1
            {
                let rule =
                    format!("env 4: Memory Semantics {sem:#x} does not name one memory order");
                self.report(inst, rule);
            }
        }
    }

    /// env 4 atomic rules: 32-bit integers (64-bit with Int64Atomics), Function/Workgroup/
    /// CrossWorkgroup pointers (and Generic with GenericPointer), scopes and orders from the
    /// device's atomic memory capabilities (work-group and device scope, every order).
    /// Beyond the letter of env 4, 32- and 64-bit floats are accepted for exchange, load and
    /// store (llvm-spirv's atomic_xchg on float, cl_ext_float_atomics), and for
    /// OpAtomicFAddEXT/FMinEXT/FMaxEXT with the matching AtomicFloat*EXT capability.
    pub(super) fn atomic(&mut self, inst: &Instruction, rt: Word) {
        let op = inst.class.opcode;
        let Some(atomic) = AtomicOp::of(op) else {
            return;
        };
        let Some(pointee) = self.expect_pointer(inst, AtomicOp::POINTER, "Atomic", "Pointer")
        else {
            return;
        };
        if let Some(Type::Pointer { storage, .. }) = self
            .operand_type(inst, AtomicOp::POINTER)
            .and_then(|t| self.ty(t))
        {
            let generic = *storage == StorageClass::Generic
                && self.declares(spirv::Capability::GenericPointer);
            if !generic
                && !matches!(
                    storage,
                    StorageClass::Function | StorageClass::Workgroup | StorageClass::CrossWorkgroup
                )
            {
                let rule = format!("env 4: the Pointer of an atomic instruction must point to Function, Workgroup, CrossWorkgroup (or, with GenericPointer, Generic) storage, found {storage:?}");
                self.report(inst, rule);
            }
        }
        let int64 = self.declares(spirv::Capability::Int64Atomics);
        let float_op = atomic.is_float();
        if float_op {
            // SPV_EXT_shader_atomic_float_add / _min_max: the float width needs its capability.
            use spirv::Capability::*;
            let needed = match (self.ty(pointee), op) {
                (Some(Type::Float { width: 32 }), Op::AtomicFAddEXT) => Some(AtomicFloat32AddEXT),
                (Some(Type::Float { width: 64 }), Op::AtomicFAddEXT) => Some(AtomicFloat64AddEXT),
                (Some(Type::Float { width: 32 }), _) => Some(AtomicFloat32MinMaxEXT),
                (Some(Type::Float { width: 64 }), _) => Some(AtomicFloat64MinMaxEXT),
                _ => None,
            };
            match needed {
                Some(cap) if self.declares(cap) => {}
                Some(cap) => {
                    let rule = format!(
                        "SPIR-V Atomic: Op{op:?} on {} needs the {cap:?} capability",
                        self.type_name(pointee)
                    );
                    self.report(inst, rule);
                    return;
                }
                None => {
                    let rule = format!(
                        "SPIR-V Atomic: Op{op:?} needs a 32- or 64-bit float pointee, found {}",
                        self.type_name(pointee)
                    );
                    self.report(inst, rule);
                    return;
                }
            }
        }
        let allowed = float_op
            || match self.ty(pointee) {
                Some(Type::Int { width: 32 }) => true,
                Some(Type::Int { width: 64 }) => int64,
                // llvm-spirv's atomic_xchg(float) and cl_ext_float_atomics' load/store/exchange.
                Some(Type::Float { width: 32 | 64 }) => {
                    matches!(op, Op::AtomicExchange | Op::AtomicLoad | Op::AtomicStore)
                }
                _ => false,
            };
        if !allowed {
            let rule = format!(
                "env 4: atomic instructions support 32-bit integers (64-bit with the Int64Atomics capability) on this device, found {}",
                self.type_name(pointee)
            );
            self.report(inst, rule);
            return;
        }
        if op != Op::AtomicStore && !self.same(rt, pointee) {
            let rule = format!(
                "SPIR-V Atomic: result type {} differs from the pointee type {}",
                self.type_name(rt),
                self.type_name(pointee)
            );
            self.report(inst, rule);
        }
        if let Some(scope) = self.constant_operand(inst, AtomicOp::SCOPE, "Memory scope") {
            // Subgroup memory scope too, as barriers and fences may name it (env 5.2.11): it is
            // narrower than every scope the device lists, and every atomic here is device-wide.
            // The OpenCL 3.1 CTS c11_atomics inclusive-scope tests use it.
            if !ATOMIC_SCOPES.iter().any(|s| *s as u32 == scope) && scope != Scope::Subgroup as u32
            {
                let rule = format!("env 4: atomic Scope {} is not in this device's CL_DEVICE_ATOMIC_MEMORY_CAPABILITIES (work-group, device and all-devices scope)", scope_name(scope));
                self.report(inst, rule);
            }
        }
        for i in atomic.semantics_operands() {
            if let Some(sem) = self.constant_operand(inst, i, "Memory Semantics") {
                // Every order is supported; at most one may be named.
                if (sem & ORDER_MASK).count_ones() > 1 {
                    let rule = format!(
                        "env 4: atomic Memory Semantics {sem:#x} names more than one memory order"
                    );
                    self.report(inst, rule);
                }
            }
        }
        // Value operands follow the scope and semantics.
        for i in atomic.value_operands() {
            self.expect_type(inst, i, pointee, "Atomic", "Value");
        }
    }

    /// OpGroupAll/Any (bool predicate), OpGroupBroadcast (a value of the result type, an integer
    /// local id) and the reductions and scans (a scalar of the result type): integer or float
    /// for the core ones; for SPV_KHR_uniform_group_instructions (env 5.2.27) 32- or 64-bit
    /// integers (mul, bitwise), floats (mul) or bools (logical). Every one has a constant
    /// Workgroup or Subgroup execution scope (env 4, 5.2.11); the combining ones take
    /// Reduce, InclusiveScan or ExclusiveScan (clustered and partitioned operations belong to
    /// the non-uniform instructions).
    pub(super) fn group_collective(&mut self, inst: &Instruction, rt: Word) {
        use Op::*;
        let op = inst.class.opcode;
        if let Some(exec) = self.constant_operand(inst, GroupOp::SCOPE, "Scope for Execution") {
            if exec != Scope::Workgroup as u32 && exec != Scope::Subgroup as u32 {
                let rule = format!(
                    "env 4: Scope for Execution of Op{op:?} must be Workgroup or Subgroup, found {}",
                    scope_name(exec)
                );
                self.report(inst, rule);
            }
        }
        let value_index = match op {
            GroupAll | GroupAny | GroupBroadcast => GroupOp::OPERATION,
            _ => {
                match inst.operands.get(GroupOp::OPERATION) {
                    Some(Operand::GroupOperation(
                        GroupOperation::Reduce
                        | GroupOperation::InclusiveScan
                        | GroupOperation::ExclusiveScan,
                    )) => {}
                    other => {
                        let found = match other {
                            Some(Operand::GroupOperation(g)) => format!("{g:?}"),
                            _ => "no group operation".into(),
                        };
                        let rule = format!(
                            "SPIR-V Group: the Operation of Op{op:?} must be Reduce, InclusiveScan or ExclusiveScan, found {found}"
                        );
                        self.report(inst, rule);
                    }
                }
                GroupOp::OPERATION + 1
            }
        };
        let result_ok = match op {
            GroupAll | GroupAny | GroupLogicalAndKHR | GroupLogicalOrKHR | GroupLogicalXorKHR => {
                matches!(self.ty(rt), Some(Type::Bool))
            }
            GroupBroadcast => self.shape(rt).is_some(),
            GroupFAdd | GroupFMin | GroupFMax | GroupFMulKHR => {
                matches!(self.ty(rt), Some(Type::Float { .. }))
            }
            GroupIMulKHR | GroupBitwiseAndKHR | GroupBitwiseOrKHR | GroupBitwiseXorKHR => {
                matches!(self.ty(rt), Some(Type::Int { width: 32 | 64 }))
            }
            _ => matches!(self.ty(rt), Some(Type::Int { .. })),
        };
        if !result_ok {
            let section = if format!("{op:?}").ends_with("KHR") {
                "env 5.2.27"
            } else {
                "SPIR-V Group"
            };
            let rule = format!(
                "{section}: Op{op:?} cannot have result type {}",
                self.type_name(rt)
            );
            self.report(inst, rule);
            return;
        }
        self.expect_type(inst, value_index, rt, "Group", "the value operand");
        if op == GroupBroadcast {
            if let Some(t) = self.operand_type(inst, 2) {
                if !matches!(self.shape(t), Some((Kind::Int(_), 1..=3))) {
                    let rule = format!(
                        "SPIR-V Group: OpGroupBroadcast LocalId must be an integer scalar or 2- or 3-component vector, found {}",
                        self.type_name(t)
                    );
                    self.report(inst, rule);
                }
            }
        }
    }

    /// SPV_INTEL_subgroups shuffles: the data operands (one, or two for up and down) have the
    /// result type, a scalar or vector of integers or floats; the index, delta or xor value is
    /// a 32-bit integer scalar.
    fn intel_shuffle(&mut self, inst: &Instruction, rt: Word) {
        let op = inst.class.opcode;
        let data = if matches!(op, Op::SubgroupShuffleINTEL | Op::SubgroupShuffleXorINTEL) {
            1
        } else {
            2
        };
        if inst.operands.len() != data + 1 {
            let rule = format!(
                "SPV_INTEL_subgroups: Op{op:?} takes {} operands, found {}",
                data + 1,
                inst.operands.len()
            );
            self.report(inst, rule);
            return;
        }
        if !matches!(self.shape(rt), Some((Kind::Int(_) | Kind::Float(_), _))) {
            let rule = format!(
                "SPV_INTEL_subgroups: the result of Op{op:?} must be a scalar or vector of integers or floats, found {}",
                self.type_name(rt)
            );
            self.report(inst, rule);
        }
        for i in 0..data {
            self.expect_type(inst, i, rt, "SPV_INTEL_subgroups", "the data");
        }
        if let Some(t) = self.operand_type(inst, data) {
            if self.shape(t) != Some((Kind::Int(32), 1)) {
                let rule = format!(
                    "SPV_INTEL_subgroups: the last operand of Op{op:?} must be a 32-bit integer scalar, found {}",
                    self.type_name(t)
                );
                self.report(inst, rule);
            }
        }
    }

    /// SPV_INTEL_subgroups block reads and writes (cl_intel_spirv_subgroups): the data are a
    /// scalar or a vector of 2, 4 or 8 integers (8, 16, 32 or 64 bits), or of 16 8-bit ones
    /// (cl_intel_subgroups_char); a buffer
    /// pointer is a CrossWorkgroup pointer to that integer type, or a Workgroup one
    /// (cl_intel_subgroup_local_block_io); an image is a 2D non-arrayed image and its
    /// coordinate two 32-bit integers (bytes across, rows down).
    fn intel_block_io(&mut self, inst: &Instruction, rt: Word) {
        let op = inst.class.opcode;
        let (operands, data) = match op {
            Op::SubgroupBlockReadINTEL => (1, None),
            Op::SubgroupBlockWriteINTEL => (2, Some(1)),
            Op::SubgroupImageBlockReadINTEL => (2, None),
            _ => (3, Some(2)),
        };
        if inst.operands.len() != operands {
            let rule = format!(
                "SPV_INTEL_subgroups: Op{op:?} takes {operands} operands, found {}",
                inst.operands.len()
            );
            self.report(inst, rule);
            return;
        }
        if op == Op::SubgroupBlockWriteINTEL {
            self.expect_writable(inst, 0, "OpSubgroupBlockWriteINTEL Ptr");
        }
        let data_ty = match data {
            Some(i) => match self.operand_type(inst, i) {
                Some(t) => t,
                None => return,
            },
            None => rt,
        };
        let (elem, count) = match self.ty(data_ty) {
            Some(Type::Vector { elem, count }) => (*elem, *count),
            Some(Type::Int { .. }) => (data_ty, 1),
            _ => (0, 0),
        };
        let fits = match self.ty(elem) {
            Some(Type::Int { width: 8 }) => matches!(count, 1 | 2 | 4 | 8 | 16),
            Some(Type::Int {
                width: 16 | 32 | 64,
            }) => matches!(count, 1 | 2 | 4 | 8),
            _ => false,
        };
        if !fits {
            let rule = format!(
                "SPV_INTEL_subgroups: the data of Op{op:?} must be an integer scalar or a vector of 2, 4 or 8 integers (or 16 8-bit ones), found {}",
                self.type_name(data_ty)
            );
            self.report(inst, rule);
            return;
        }
        let Some(target) = self.operand_type(inst, 0) else {
            return;
        };
        if matches!(op, Op::SubgroupBlockReadINTEL | Op::SubgroupBlockWriteINTEL) {
            let ok = match self.ty(target) {
                Some(Type::Pointer {
                    storage: StorageClass::CrossWorkgroup | StorageClass::Workgroup,
                    pointee,
                }) => self.same(*pointee, elem),
                _ => false,
            };
            if !ok {
                let rule = format!(
                    "cl_intel_spirv_subgroups: the pointer of Op{op:?} must be a CrossWorkgroup or Workgroup pointer to {}, found {}",
                    self.type_name(elem),
                    self.type_name(target)
                );
                self.report(inst, rule);
            }
            return;
        }
        if !matches!(
            self.ty(target),
            Some(Type::Image {
                dim: spirv::Dim::Dim2D,
                arrayed: false,
                ..
            })
        ) {
            let rule = format!(
                "cl_intel_spirv_subgroups: the image of Op{op:?} must be a 2D image, found {}",
                self.type_name(target)
            );
            self.report(inst, rule);
        }
        if let Some(t) = self.operand_type(inst, 1) {
            if self.shape(t) != Some((Kind::Int(32), 2)) {
                let rule = format!(
                    "cl_intel_spirv_subgroups: the coordinate of Op{op:?} must be two 32-bit integers, found {}",
                    self.type_name(t)
                );
                self.report(inst, rule);
            }
        }
    }
}
