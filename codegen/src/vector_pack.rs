//! Explicit OpenCL vectors as SIMD: packs the components of a work-item's `float4`, `uint4`,
//! `double2` (and of wider vectors, 128 bits at a time), which translation scalarised, back
//! into Cranelift vectors. This is superword-level parallelism (SLP) on Cranelift IR.
//!
//! Seeds are groups of stores to consecutive addresses and groups of consecutive block
//! parameters of loop headers (the values a loop carries). From a seed, each group of lane
//! values is packed bottom-up: the same pure operation in every lane becomes one vector
//! operation on its operands' packs, loads of consecutive addresses one vector load, equal
//! lanes a splat, constants a vector constant, consecutive parameters of one block a vector
//! parameter (its incoming arguments packed in turn); anything else is gathered lane by lane.
//!
//! A packed lane's scalar instruction is removed and its value becomes an `extractlane` of
//! the vector, placed after the vector, so every scalar use stays valid (Cranelift's optimiser
//! removes the extracts nobody uses). That is why a group is packed only where its vector,
//! which comes after the group's last lane, still precedes every use of every lane. Loads and
//! stores are combined only when no other memory access lies between the first and the last
//! lane. Vector operations compute each lane as the scalar one did (Cranelift's vector
//! `fma`, `fmin`, shifts and the rest are defined lane-wise like its scalar ones), so results
//! stay bit for bit those of the scalar code.
//!
//! The work-item vectoriser (vectorize/) runs four work-items per vector instead; a function
//! with vector values is left to this pass (see kernel.rs for which wins).

use std::collections::{HashMap, HashSet};

use cranelift_codegen::cursor::{Cursor, FuncCursor};
use cranelift_codegen::dominator_tree::DominatorTree;
use cranelift_codegen::flowgraph::ControlFlowGraph;
use cranelift_codegen::ir::{
    types, Block, BlockArg, BlockCall, ConstantData, Endianness, Function, Inst, InstBuilder,
    InstructionData, MemFlagsData, Opcode, Type, Value, ValueDef,
};
use cranelift_codegen::loop_analysis::LoopAnalysis;

use crate::vectorize::{lane_wise, vector_float_condition};

/// What packing did to a function.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Packing {
    /// Scalar instructions (operations, loads, stores) now done by vector ones.
    pub packed: usize,
    /// Of those, arithmetic (not loads or stores).
    pub packed_arithmetic: usize,
    /// Pure scalar arithmetic on vectorisable types left as it was.
    pub scalar: usize,
}

impl Packing {
    /// The share of the function's vectorisable arithmetic that runs in vectors.
    pub(crate) fn coverage(&self) -> f64 {
        self.packed as f64 / (self.packed + self.scalar).max(1) as f64
    }
}

/// Lanes of a 128-bit vector of `t`, for the types packed.
fn lanes_of(t: Type) -> Option<usize> {
    match t {
        types::F32 | types::I32 => Some(4),
        types::F64 => Some(2),
        _ => None,
    }
}

/// Whether `n` lanes of `t` make a vector this build packs: 128 bits (what Cranelift lowers)
/// up to the target's `vector_bits` (the wide backend's), a power of two.
fn packs(t: Type, n: usize, vector_bits: u32) -> bool {
    lanes_of(t).is_some_and(|narrow| {
        let bits = n as u64 * u64::from(t.bits());
        n >= narrow && n.is_power_of_two() && bits <= u64::from(vector_bits.max(128))
    })
}

/// The most lanes of `t` one vector holds at `vector_bits`.
fn max_lanes(t: Type, vector_bits: u32) -> Option<usize> {
    let narrow = lanes_of(t)?;
    Some((vector_bits.max(128) / t.bits()).max(narrow as u32) as usize)
}

/// Operations packed: the work-item vectoriser's lane-wise ones (lowered by Cranelift for
/// f32x4, i32x4 and f64x2), shifts and rotations by one amount, compares, selects, bit
/// selects, and conversions and bitcasts between lanes of one width.
fn packable_opcode(op: Opcode) -> bool {
    use Opcode::*;
    lane_wise(op)
        || is_shift(op)
        || matches!(
            op,
            Fcmp | Icmp
                | Select
                | Bitselect
                | Bitcast
                | FcvtFromSint
                | FcvtFromUint
                | FcvtToSintSat
                | FcvtToUintSat
        )
}

/// Compares give booleans (`i8` 0/1) as scalars and masks (all ones or zeros per lane) as
/// vectors.
fn is_compare(op: Opcode) -> bool {
    matches!(op, Opcode::Fcmp | Opcode::Icmp)
}

/// Shifts and rotations: their amount must be the same in every lane (it stays scalar).
fn is_shift(op: Opcode) -> bool {
    matches!(
        op,
        Opcode::Ishl | Opcode::Ushr | Opcode::Sshr | Opcode::Rotl | Opcode::Rotr
    )
}

type NodeId = usize;

/// Builds of the pack graph before packing gives up (see `plan`): each is linear in the
/// function's size.
const MAX_TRIES: usize = 32;

enum Node {
    /// Every lane the same value.
    Splat(Value),
    /// Constant lanes (their bits, little-endian lane order).
    Const(Vec<u8>),
    /// Lanes built one by one.
    Gather(Vec<Value>),
    /// One operation: the lanes' instructions (lane order), the operands' packs, and a
    /// scalar amount for shifts.
    Op {
        insts: Vec<Inst>,
        args: Vec<NodeId>,
        amount: Option<Value>,
    },
    /// Loads of consecutive addresses.
    Load { insts: Vec<Inst> },
    /// Consecutive parameters of a block.
    Param { block: Block, params: Vec<Value> },
}

struct Packer<'a> {
    func: &'a mut Function,
    /// Each instruction's block and index in it.
    position: HashMap<Inst, (Block, usize)>,
    users: HashMap<Value, Vec<Inst>>,
    /// Predecessors' branch instructions, by block.
    preds: HashMap<Block, Vec<Inst>>,
    nodes: Vec<Node>,
    /// Each vector's type.
    node_type: Vec<Type>,
    memo: HashMap<Vec<Value>, NodeId>,
    /// Instructions already a lane of an Op or Load node.
    owned: HashSet<Inst>,
    /// Parameters already a lane of a Param node.
    packed_params: HashSet<Value>,
    /// Lane groups of Op and Load nodes with their users before the vector (`lane_insts`).
    early: Vec<(Vec<Value>, Vec<Inst>)>,
    /// Lane groups not to pack (their early users stayed scalar in an earlier try).
    forbidden: HashSet<Vec<Value>>,
    /// Parameter packs' incoming arguments: (parameter node, branch, index of the branch's
    /// destination, argument pack).
    edges: Vec<(NodeId, Inst, usize, NodeId)>,
    /// Groups of stores: their instructions (lane order) and the data's pack.
    stores: Vec<(Vec<Inst>, NodeId)>,
    /// Vectors emitted, by node.
    vectors: Vec<Option<Value>>,
    /// Gathers emitted: the vector and its lanes (`shuffle_gathers`).
    gathers: Vec<(Value, Vec<Value>)>,
    /// The widest vector packed, in bits: 128 for Cranelift, the target's for the wide
    /// backend.
    vector_bits: u32,
    /// The components of each OpenCL vector result (see `plan`).
    vector_results: Vec<Vec<Value>>,
}

/// What packing the explicit vectors of `func` (see the module's documentation) would do,
/// ready to be applied: nothing when it would not save instructions.
pub(crate) struct Plan<'a> {
    /// None when nothing is to be packed.
    packer: Option<Packer<'a>>,
    packing: Packing,
}

impl Plan<'_> {
    pub(crate) fn packing(&self) -> Packing {
        self.packing
    }

    /// The function as it is before packing.
    pub(crate) fn unpacked(&self) -> Option<Function> {
        self.packer.as_ref().map(|p| p.func.clone())
    }

    /// Packs, and returns what was packed.
    pub(crate) fn apply(self) -> Packing {
        if let Some(mut packer) = self.packer {
            packer.emit();
        }
        self.packing
    }
}

/// `vector_bits`: the widest vector to pack into (128 for Cranelift); `vector_results`: the
/// components of the kernel's OpenCL vector values, as translation made them (more seeds).
pub(crate) fn plan<'a>(
    func: &'a mut Function,
    vector_bits: u32,
    vector_results: &[Vec<Value>],
) -> Plan<'a> {
    // Each try forbids the groups whose early users stayed scalar, which may leave others'
    // users scalar in turn; a chain of such groups longer than the tries packs nothing.
    let mut p = Packer::new(func, vector_bits);
    p.vector_results = vector_results.to_vec();
    let mut tries = 0;
    loop {
        p.seed();
        let violations = p.violations();
        if violations.is_empty() {
            break;
        }
        tries += 1;
        if tries == MAX_TRIES {
            return Plan {
                packer: None,
                packing: Packing::default(),
            };
        }
        p.forbid(violations);
    }
    let (gain, packing) = p.assess();
    if gain <= 0 || packing.packed == 0 {
        return Plan {
            packer: None,
            packing: Packing {
                packed: 0,
                packed_arithmetic: 0,
                scalar: packing.packed + packing.scalar,
            },
        };
    }
    Plan {
        packer: Some(p),
        packing,
    }
}

impl<'a> Packer<'a> {
    fn new(func: &'a mut Function, vector_bits: u32) -> Self {
        let mut position = HashMap::new();
        let mut users: HashMap<Value, Vec<Inst>> = HashMap::new();
        let mut preds: HashMap<Block, Vec<Inst>> = HashMap::new();
        for block in func.layout.blocks() {
            for (i, inst) in func.layout.block_insts(block).enumerate() {
                position.insert(inst, (block, i));
                for v in func.dfg.inst_values(inst) {
                    users
                        .entry(func.dfg.resolve_aliases(v))
                        .or_default()
                        .push(inst);
                }
                for dest in func.dfg.insts[inst]
                    .branch_destination(&func.dfg.jump_tables, &func.dfg.exception_tables)
                {
                    preds
                        .entry(dest.block(&func.dfg.value_lists))
                        .or_default()
                        .push(inst);
                }
            }
        }
        Packer {
            func,
            position,
            users,
            preds,
            nodes: Vec::new(),
            node_type: Vec::new(),
            memo: HashMap::new(),
            owned: HashSet::new(),
            packed_params: HashSet::new(),
            early: Vec::new(),
            forbidden: HashSet::new(),
            edges: Vec::new(),
            stores: Vec::new(),
            vectors: Vec::new(),
            gathers: Vec::new(),
            vector_bits,
            vector_results: Vec::new(),
        }
    }

    /// Forgets the pack graph, to build it again without the `groups`.
    fn forbid(&mut self, groups: Vec<Vec<Value>>) {
        self.forbidden.extend(groups);
        self.nodes.clear();
        self.node_type.clear();
        self.memo.clear();
        self.owned.clear();
        self.packed_params.clear();
        self.early.clear();
        self.edges.clear();
        self.stores.clear();
    }

    fn ty(&self, v: Value) -> Type {
        self.func.dfg.value_type(v)
    }

    fn def_inst(&self, v: Value) -> Option<Inst> {
        match self.func.dfg.value_def(v) {
            ValueDef::Result(inst, 0) if self.func.layout.inst_block(inst).is_some() => Some(inst),
            _ => None,
        }
    }

    /// Finds the seeds and packs from them.
    fn seed(&mut self) {
        let cfg = ControlFlowGraph::with_function(self.func);
        let domtree = DominatorTree::with_function(self.func, &cfg);
        let mut loops = LoopAnalysis::new();
        loops.compute(self.func, &cfg, &domtree);
        let blocks: Vec<Block> = self.func.layout.blocks().collect();
        for &block in &blocks {
            if loops.is_loop_header(block).is_none() {
                continue;
            }
            let params = self.func.dfg.block_params(block).to_vec();
            for group in consecutive_groups(&params, |v| self.ty(v), self.vector_bits) {
                self.build(group);
            }
        }
        // OpenCL vector results whose components are still instruction results of the body
        // (the translation's values; a later pass may have removed some).
        let results = std::mem::take(&mut self.vector_results);
        for lanes in &results {
            let lanes: Vec<Value> = lanes
                .iter()
                .map(|&v| self.func.dfg.resolve_aliases(v))
                .collect();
            let live = lanes.iter().all(|&v| {
                self.def_inst(v)
                    .is_some_and(|i| self.func.layout.inst_block(i).is_some())
            });
            if !live {
                continue;
            }
            for group in consecutive_groups(&lanes, |v| self.ty(v), self.vector_bits) {
                self.build(group);
            }
        }
        self.vector_results = results;
        for &block in &blocks {
            let insts: Vec<Inst> = self.func.layout.block_insts(block).collect();
            let mut i = 0;
            while i < insts.len() {
                match self.store_group(&insts[i..]) {
                    Some((group, data)) => {
                        i += group.len();
                        let node = self.build(data);
                        self.stores.push((group, node));
                    }
                    None => i += 1,
                }
            }
        }
    }

    /// A group of stores starting at `insts[0]`: one per lane, to consecutive addresses off
    /// one base, with only pure instructions between them. Returns the stores and their data.
    fn store_group(&self, insts: &[Inst]) -> Option<(Vec<Inst>, Vec<Value>)> {
        let dfg = &self.func.dfg;
        let store = |inst: Inst| match dfg.insts[inst] {
            InstructionData::Store {
                opcode: Opcode::Store,
                args,
                flags,
                offset,
            } => Some((args[0], args[1], flags, i64::from(offset))),
            _ => None,
        };
        let (data0, base, flags, offset0) = store(insts[0])?;
        if dfg.mem_flags[flags].aligned() {
            return None;
        }
        let t = dfg.value_type(data0);
        let lanes = max_lanes(t, self.vector_bits)?;
        let size = i64::from(t.bytes());
        let (mut group, mut data) = (vec![insts[0]], vec![data0]);
        for &inst in &insts[1..] {
            if group.len() == lanes {
                break;
            }
            match store(inst) {
                Some((d, b, f, o))
                    if b == base
                        && f == flags
                        && dfg.value_type(d) == t
                        && o == offset0 + size * group.len() as i64 =>
                {
                    group.push(inst);
                    data.push(d);
                }
                _ if touches_memory(self.func, inst) => return None,
                _ => {}
            }
        }
        // The widest vector the run of stores fills (a `uint4` store packs at 128 bits
        // whatever the target's width).
        let mut n = lanes;
        while n > group.len() {
            n /= 2;
        }
        if !packs(t, n, self.vector_bits) {
            return None;
        }
        group.truncate(n);
        data.truncate(n);
        Some((group, data))
    }

    fn add(&mut self, node: Node, t: Type) -> NodeId {
        self.nodes.push(node);
        self.node_type.push(t);
        self.nodes.len() - 1
    }

    /// The pack of `lanes` (one value per lane, all of one packable type).
    fn build(&mut self, lanes: Vec<Value>) -> NodeId {
        let lanes: Vec<Value> = lanes
            .into_iter()
            .map(|v| self.func.dfg.resolve_aliases(v))
            .collect();
        if let Some(&id) = self.memo.get(&lanes) {
            return id;
        }
        let id = match self.group_type(&lanes) {
            Some(vt) => self.build_new(&lanes, vt),
            // Booleans that are not compares: nothing packs them (a select on them gathers).
            None => self.add(Node::Gather(lanes.clone()), types::I8X16),
        };
        self.memo.insert(lanes, id);
        id
    }

    /// The vector type of a group: its lanes' type, or for compares' booleans the mask of
    /// their operands' width.
    fn group_type(&self, lanes: &[Value]) -> Option<Type> {
        let t = self.ty(lanes[0]);
        let n = lanes.len();
        if packs(t, n, self.vector_bits) {
            return t.by(n as u32);
        }
        let inst = self.def_inst(lanes[0])?;
        if t != types::I8 || !is_compare(self.func.dfg.insts[inst].opcode()) {
            return None;
        }
        let operand = self.ty(self.func.dfg.inst_args(inst)[0]);
        if !packs(operand, n, self.vector_bits) {
            return None;
        }
        operand.as_int().by(n as u32)
    }

    fn build_new(&mut self, lanes: &[Value], vt: Type) -> NodeId {
        if lanes.iter().all(|&v| v == lanes[0]) {
            return self.add(Node::Splat(lanes[0]), vt);
        }
        if let Some(bytes) = self.constant_lanes(lanes) {
            return self.add(Node::Const(bytes), vt);
        }
        if let Some(node) = self.param_pack(lanes, vt) {
            return node;
        }
        if let Some((insts, early)) = self.lane_insts(lanes) {
            let data = self.func.dfg.insts[insts[0]];
            if data.opcode() == Opcode::Load {
                if self.loads_consecutive(&insts) {
                    self.owned.extend(insts.iter().copied());
                    self.early.push((lanes.to_vec(), early));
                    return self.add(Node::Load { insts }, vt);
                }
            } else if let Some(amount) = self.op_amount(&insts) {
                if data.opcode() == Opcode::Select {
                    let conds: Vec<Value> = insts
                        .iter()
                        .map(|&i| self.func.dfg.inst_args(i)[0])
                        .collect();
                    let c = self.build(conds);
                    let compare = match &self.nodes[c] {
                        Node::Op { insts, .. } => {
                            is_compare(self.func.dfg.insts[insts[0]].opcode())
                        }
                        _ => false,
                    };
                    if !compare || self.node_type[c].lane_bits() != vt.lane_bits() {
                        return self.add(Node::Gather(lanes.to_vec()), vt);
                    }
                }
                self.owned.extend(insts.iter().copied());
                self.early.push((lanes.to_vec(), early));
                // Operands packed after claiming the lanes, so a cycle through them gathers.
                let id = self.add(
                    Node::Op {
                        insts: insts.clone(),
                        args: Vec::new(),
                        amount,
                    },
                    vt,
                );
                let n_args = if amount.is_some() {
                    1
                } else {
                    self.func.dfg.inst_args(insts[0]).len()
                };
                let mut args = Vec::new();
                for a in 0..n_args {
                    let group: Vec<Value> = insts
                        .iter()
                        .map(|&i| self.func.dfg.inst_args(i)[a])
                        .collect();
                    args.push(self.build(group));
                }
                if let Node::Op { args: slot, .. } = &mut self.nodes[id] {
                    *slot = args;
                }
                return id;
            }
        }
        // Loads of consecutive addresses in another order (a swizzle of a vector element):
        // the element is loaded as a vector, which turns this gather into a shuffle.
        if let Some(sorted) = self.sorted_loads(lanes) {
            self.build(sorted);
        }
        self.add(Node::Gather(lanes.to_vec()), vt)
    }

    /// `lanes` in address order if they are loads off one base, in another order.
    fn sorted_loads(&self, lanes: &[Value]) -> Option<Vec<Value>> {
        let mut by_offset: Vec<(i64, Value)> = Vec::new();
        for &v in lanes {
            let inst = self.def_inst(v)?;
            match self.func.dfg.insts[inst] {
                InstructionData::Load {
                    opcode: Opcode::Load,
                    offset,
                    ..
                } => by_offset.push((i64::from(offset), v)),
                _ => return None,
            }
        }
        by_offset.sort_by_key(|&(o, _)| o);
        let sorted: Vec<Value> = by_offset.into_iter().map(|(_, v)| v).collect();
        (sorted != lanes && !self.memo.contains_key(&sorted)).then_some(sorted)
    }

    /// The bits of `lanes` if every one is a constant.
    fn constant_lanes(&self, lanes: &[Value]) -> Option<Vec<u8>> {
        let mut bytes = Vec::new();
        for &v in lanes {
            let inst = self.def_inst(v)?;
            let size = self.ty(v).bytes() as usize;
            let bits: u64 = match self.func.dfg.insts[inst] {
                InstructionData::UnaryImm {
                    opcode: Opcode::Iconst,
                    imm,
                } => imm.bits() as u64,
                InstructionData::UnaryIeee32 {
                    opcode: Opcode::F32const,
                    imm,
                } => u64::from(imm.bits()),
                InstructionData::UnaryIeee64 {
                    opcode: Opcode::F64const,
                    imm,
                } => imm.bits(),
                _ => return None,
            };
            bytes.extend_from_slice(&bits.to_le_bytes()[..size]);
        }
        Some(bytes)
    }

    /// Consecutive parameters of one block (not the entry) in lane order: a parameter pack,
    /// whose incoming arguments are packed after it (the loop's back edge comes back to it).
    fn param_pack(&mut self, lanes: &[Value], vt: Type) -> Option<NodeId> {
        let (block, first) = match self.func.dfg.value_def(lanes[0]) {
            ValueDef::Param(b, n) => (b, n),
            _ => return None,
        };
        if Some(block) == self.func.layout.entry_block()
            || lanes.iter().any(|v| self.packed_params.contains(v))
        {
            return None;
        }
        for (k, &v) in lanes.iter().enumerate() {
            if self.func.dfg.value_def(v) != ValueDef::Param(block, first + k) {
                return None;
            }
        }
        // Every incoming edge must be a plain jump or brif (not a jump table) passing values.
        let preds = self.preds.get(&block).cloned().unwrap_or_default();
        for &branch in &preds {
            if !matches!(
                self.func.dfg.insts[branch],
                InstructionData::Jump { .. } | InstructionData::Brif { .. }
            ) {
                return None;
            }
        }
        self.packed_params.extend(lanes.iter().copied());
        let id = self.add(
            Node::Param {
                block,
                params: lanes.to_vec(),
            },
            vt,
        );
        self.memo.insert(lanes.to_vec(), id);
        for branch in preds {
            for (call_index, call) in self.calls_to(branch, block) {
                let args: Vec<Value> = (0..lanes.len())
                    .map(|k| self.call_arg(call, first + k))
                    .collect();
                let arg = self.build(args);
                self.edges.push((id, branch, call_index, arg));
            }
        }
        Some(id)
    }

    /// The destinations of `branch` that go to `block`, with their indices.
    fn calls_to(&self, branch: Inst, block: Block) -> Vec<(usize, BlockCall)> {
        let dfg = &self.func.dfg;
        dfg.insts[branch]
            .branch_destination(&dfg.jump_tables, &dfg.exception_tables)
            .iter()
            .enumerate()
            .filter(|(_, c)| c.block(&dfg.value_lists) == block)
            .map(|(i, c)| (i, *c))
            .collect()
    }

    fn call_arg(&self, call: BlockCall, index: usize) -> Value {
        match call.args(&self.func.dfg.value_lists).nth(index) {
            Some(BlockArg::Value(v)) => self.func.dfg.resolve_aliases(v),
            _ => unreachable!("branches to packed blocks pass plain values"),
        }
    }

    /// The lanes' defining instructions when they can be one vector instruction: results of
    /// distinct, unclaimed instructions of one opcode and block, none using another lane.
    /// Also the lanes' users in that block up to the last lane: the vector comes after the
    /// last lane, so those users must be lanes of packs themselves (`violations` checks).
    fn lane_insts(&self, lanes: &[Value]) -> Option<(Vec<Inst>, Vec<Inst>)> {
        if self.forbidden.contains(lanes) {
            return None;
        }
        let insts: Vec<Inst> = lanes
            .iter()
            .map(|&v| self.def_inst(v))
            .collect::<Option<_>>()?;
        let dfg = &self.func.dfg;
        let opcode = dfg.insts[insts[0]].opcode();
        let (block, _) = self.position[&insts[0]];
        let mut last = 0;
        for &inst in &insts {
            let (b, at) = self.position[&inst];
            if b != block
                || dfg.insts[inst].opcode() != opcode
                || dfg.inst_results(inst).len() != 1
                || self.owned.contains(&inst)
            {
                return None;
            }
            last = last.max(at);
        }
        let set: HashSet<Inst> = insts.iter().copied().collect();
        if set.len() != insts.len() {
            return None;
        }
        for &inst in &insts {
            if dfg.inst_values(inst).any(|v| {
                self.def_inst(dfg.resolve_aliases(v))
                    .is_some_and(|d| set.contains(&d))
            }) {
                return None;
            }
        }
        let mut early = Vec::new();
        for &v in lanes {
            for &user in self.users.get(&v).map(Vec::as_slice).unwrap_or(&[]) {
                let (b, at) = self.position[&user];
                if b == block && at <= last {
                    // Branches and stores stay where they are: their scalar use comes first.
                    if !dfg.insts[user].opcode().is_terminator() {
                        early.push(user);
                    } else {
                        return None;
                    }
                }
            }
        }
        Some((insts, early))
    }

    /// The lane groups whose early users (see `lane_insts`) were not all packed.
    fn violations(&self) -> Vec<Vec<Value>> {
        self.early
            .iter()
            .filter(|(_, users)| users.iter().any(|u| !self.owned.contains(u)))
            .map(|(lanes, _)| lanes.clone())
            .collect()
    }

    /// For lane instructions of a packable operation: `Some(amount)` (the shared scalar
    /// amount of a shift, `None` otherwise), or `None` when they cannot be one operation.
    #[allow(clippy::option_option)]
    fn op_amount(&self, insts: &[Inst]) -> Option<Option<Value>> {
        let dfg = &self.func.dfg;
        let data = dfg.insts[insts[0]];
        let op = data.opcode();
        if !packable_opcode(op) {
            return None;
        }
        let same_format = insts.iter().all(|&i| {
            std::mem::discriminant(&dfg.insts[i]) == std::mem::discriminant(&data)
                && dfg.inst_args(i).len() == dfg.inst_args(insts[0]).len()
        });
        if !same_format
            || !matches!(
                data,
                InstructionData::Unary { .. }
                    | InstructionData::Binary { .. }
                    | InstructionData::Ternary { .. }
                    | InstructionData::FloatCompare { .. }
                    | InstructionData::IntCompare { .. }
                    | InstructionData::LoadNoOffset {
                        opcode: Opcode::Bitcast,
                        ..
                    }
            )
        {
            return None;
        }
        // Compares of one condition (one Cranelift lowers for vectors); conversions between
        // lanes of one width.
        if let InstructionData::FloatCompare { cond, .. } = data {
            if !vector_float_condition(cond) {
                return None;
            }
        }
        let same_cond = insts.iter().all(|&i| match (dfg.insts[i], data) {
            (
                InstructionData::FloatCompare { cond: a, .. },
                InstructionData::FloatCompare { cond: b, .. },
            ) => a == b,
            (
                InstructionData::IntCompare { cond: a, .. },
                InstructionData::IntCompare { cond: b, .. },
            ) => a == b,
            _ => true,
        });
        let result = dfg.value_type(dfg.first_result(insts[0]));
        let operand = dfg.value_type(dfg.inst_args(insts[0])[0]);
        let conversion = matches!(
            op,
            Opcode::FcvtFromSint
                | Opcode::FcvtFromUint
                | Opcode::FcvtToSintSat
                | Opcode::FcvtToUintSat
                | Opcode::Bitcast
        );
        if !same_cond || (conversion && result.bits() != operand.bits()) {
            return None;
        }
        if !is_shift(op) {
            return Some(None);
        }
        let amounts: Vec<Value> = insts.iter().map(|&i| dfg.inst_args(i)[1]).collect();
        let same = amounts.iter().all(|&a| a == amounts[0])
            || self.constant_lanes(&amounts).is_some_and(|b| {
                b.chunks(b.len() / amounts.len())
                    .all(|c| c == &b[..c.len()])
            });
        same.then_some(Some(amounts[0]))
    }

    /// Whether load instructions `insts` (lane order) read consecutive addresses off one
    /// base with one set of flags, with no memory write between the first and the last.
    fn loads_consecutive(&self, insts: &[Inst]) -> bool {
        let dfg = &self.func.dfg;
        let load = |i: Inst| match dfg.insts[i] {
            InstructionData::Load {
                opcode: Opcode::Load,
                arg,
                flags,
                offset,
            } => Some((arg, flags, i64::from(offset))),
            _ => None,
        };
        let Some((base, flags, offset0)) = load(insts[0]) else {
            return false;
        };
        // A vector access of 16 bytes is not aligned as the lanes' were.
        if dfg.mem_flags[flags].aligned() {
            return false;
        }
        let size = i64::from(dfg.value_type(dfg.first_result(insts[0])).bytes());
        for (k, &inst) in insts.iter().enumerate() {
            match load(inst) {
                Some((b, f, o)) if b == base && f == flags && o == offset0 + size * k as i64 => {}
                _ => return false,
            }
        }
        let (block, _) = self.position[&insts[0]];
        let first = insts.iter().map(|i| self.position[i].1).min().unwrap_or(0);
        let last = insts.iter().map(|i| self.position[i].1).max().unwrap_or(0);
        self.func
            .layout
            .block_insts(block)
            .skip(first)
            .take(last - first + 1)
            .all(|i| !writes_memory(self.func, i))
    }

    /// Instructions saved (positive) or added by packing what `seed` found, and the counts.
    fn assess(&self) -> (i64, Packing) {
        let mut gain = 0i64;
        let mut packed = 0;
        let mut packed_arithmetic = 0;
        for node in &self.nodes {
            match node {
                Node::Op { insts, .. } => {
                    let lanes = insts.len() as i64;
                    // A rotation is three vector instructions.
                    let cost = match self.func.dfg.insts[insts[0]].opcode() {
                        Opcode::Rotl | Opcode::Rotr => 3,
                        _ => 1,
                    };
                    gain += lanes - cost;
                    packed += insts.len();
                    packed_arithmetic += insts.len();
                }
                Node::Load { insts } => {
                    gain += insts.len() as i64 - 1;
                    packed += insts.len();
                }
                Node::Gather(lanes) => gain -= lanes.len() as i64,
                Node::Splat(_) => gain -= 1,
                Node::Const(_) | Node::Param { .. } => {}
            }
        }
        for (insts, _) in &self.stores {
            gain += insts.len() as i64 - 1;
            packed += insts.len();
        }
        // Every lane still used by scalar code needs an extract. Users that disappear into
        // vectors: packed lanes, packed stores, and branches (their packed arguments go as
        // vectors; the others stay).
        let packed_users: HashSet<Inst> = (self.owned.iter().copied())
            .chain(self.stores.iter().flat_map(|(s, _)| s.iter().copied()))
            .chain(self.edges.iter().map(|e| e.1))
            .collect();
        for node in &self.nodes {
            let values: Vec<Value> = match node {
                Node::Op { insts, .. } | Node::Load { insts } => insts
                    .iter()
                    .map(|&i| self.func.dfg.first_result(i))
                    .collect(),
                Node::Param { params, .. } => params.clone(),
                _ => continue,
            };
            for v in values {
                if self
                    .users
                    .get(&v)
                    .is_some_and(|us| us.iter().any(|u| !packed_users.contains(u)))
                {
                    gain -= 1;
                }
            }
        }
        let mut scalar = 0;
        for block in self.func.layout.blocks() {
            for inst in self.func.layout.block_insts(block) {
                let op = self.func.dfg.insts[inst].opcode();
                // Loop counters (compared for the exit) are not the work-item's arithmetic.
                let counter = || {
                    self.func.dfg.inst_results(inst).iter().any(|r| {
                        self.users.get(r).is_some_and(|us| {
                            us.iter()
                                .any(|&u| self.func.dfg.insts[u].opcode() == Opcode::Icmp)
                        })
                    })
                };
                if packable_opcode(op)
                    && !self.owned.contains(&inst)
                    && !counter()
                    && self
                        .func
                        .dfg
                        .inst_results(inst)
                        .first()
                        .is_some_and(|&r| lanes_of(self.ty(r)).is_some())
                {
                    scalar += 1;
                }
            }
        }
        (
            gain,
            Packing {
                packed,
                packed_arithmetic,
                scalar,
            },
        )
    }

    /// Emits every node's vector, rewires the lanes and the packed parameters, and replaces
    /// the packed stores.
    fn emit(&mut self) {
        self.vectors = vec![None; self.nodes.len()];
        // Parameters first: the loop bodies' packs use them.
        let mut packed_blocks: Vec<Block> = Vec::new();
        for id in 0..self.nodes.len() {
            if let Node::Param { block, .. } = self.nodes[id] {
                let v = self.func.dfg.append_block_param(block, self.node_type[id]);
                self.vectors[id] = Some(v);
                if !packed_blocks.contains(&block) {
                    packed_blocks.push(block);
                }
            }
        }
        // Operations and loads after their operands (a node is made before its operands'
        // packs, so ids are not in that order).
        for id in self.post_order() {
            self.emit_lanes(id);
        }
        let edges = std::mem::take(&mut self.edges);
        for block in packed_blocks {
            self.rewire_block(block, &edges);
        }
        let stores = std::mem::take(&mut self.stores);
        for (insts, data) in stores {
            let last = *insts.last().expect("lanes");
            let v = self.vector_before(data, last);
            let InstructionData::Store {
                args,
                flags,
                offset,
                ..
            } = self.func.dfg.insts[insts[0]]
            else {
                unreachable!("a store")
            };
            let flags = self.func.dfg.mem_flags[flags];
            FuncCursor::new(self.func)
                .at_inst(last)
                .ins()
                .store(flags, v, args[1], offset);
            for inst in insts {
                self.func.layout.remove_inst(inst);
            }
        }
        self.shuffle_gathers();
    }

    /// Turns each gather whose lanes all turned out to be lanes of one or two vectors (a
    /// swizzle such as `x.wzyx`, or halves of two vectors) into one shuffle.
    fn shuffle_gathers(&mut self) {
        for (x, lanes) in std::mem::take(&mut self.gathers) {
            let dfg = &self.func.dfg;
            let vt = dfg.value_type(x);
            if vt.bits() != 128 {
                // `shuffle` is a 16-byte operation; wider gathers stay lane by lane, which
                // the wide backend's optimiser turns into its own shuffles.
                continue;
            }
            let size = vt.lane_bits() as usize / 8;
            let mut sources: Vec<Value> = Vec::new();
            let mut mask = Vec::with_capacity(16);
            for &lane in &lanes {
                let lane = dfg.resolve_aliases(lane);
                let Some(inst) = dfg.value_def(lane).inst() else {
                    break;
                };
                let InstructionData::BinaryImm8 {
                    opcode: Opcode::Extractlane,
                    arg,
                    imm,
                } = dfg.insts[inst]
                else {
                    break;
                };
                if dfg.value_type(arg) != vt {
                    break;
                }
                let source = match sources.iter().position(|&v| v == arg) {
                    Some(i) => i,
                    None if sources.len() < 2 => {
                        sources.push(arg);
                        sources.len() - 1
                    }
                    None => break,
                };
                let first = source * 16 + usize::from(imm) * size;
                mask.extend((first..first + size).map(|b| b as u8));
            }
            if mask.len() != 16 {
                continue;
            }
            let Some(def) = dfg.value_def(x).inst() else {
                continue;
            };
            let mask = self.func.dfg.immediates.push(ConstantData::from(mask));
            let little = MemFlagsData::new().with_endianness(Endianness::Little);
            let mut pos = FuncCursor::new(self.func).at_inst(def);
            let bytes: Vec<Value> = sources
                .iter()
                .map(|&v| pos.ins().bitcast(types::I8X16, little, v))
                .collect();
            let shuffled = pos
                .ins()
                .shuffle(bytes[0], *bytes.get(1).unwrap_or(&bytes[0]), mask);
            let back = pos.ins().bitcast(vt, little, shuffled);
            self.func.dfg.detach_inst_results(def);
            self.func.layout.remove_inst(def);
            self.func.dfg.change_to_alias(x, back);
        }
    }

    /// The Op and Load nodes, each after the Op and Load nodes it uses.
    fn post_order(&self) -> Vec<NodeId> {
        let mut done = vec![false; self.nodes.len()];
        let mut out = Vec::new();
        for root in 0..self.nodes.len() {
            let mut stack = vec![(root, false)];
            while let Some((id, expanded)) = stack.pop() {
                if done[id] {
                    continue;
                }
                match &self.nodes[id] {
                    Node::Op { args, .. } if !expanded => {
                        stack.push((id, true));
                        stack.extend(args.iter().filter(|&&a| !done[a]).map(|&a| (a, false)));
                    }
                    Node::Op { .. } | Node::Load { .. } => {
                        done[id] = true;
                        out.push(id);
                    }
                    _ => done[id] = true,
                }
            }
        }
        out
    }

    /// Passes `block`'s packed parameters as vectors on every incoming edge (after the
    /// parameters left scalar, in the order the vector parameters were appended), and turns
    /// the scalar parameters into extracts of the vectors.
    fn rewire_block(&mut self, block: Block, edges: &[(NodeId, Inst, usize, NodeId)]) {
        let params: Vec<NodeId> = (0..self.nodes.len())
            .filter(|&id| matches!(self.nodes[id], Node::Param { block: b, .. } if b == block))
            .collect();
        let packed_indices: HashSet<usize> = params
            .iter()
            .flat_map(|&id| match &self.nodes[id] {
                Node::Param { params, .. } => params
                    .iter()
                    .map(|&p| match self.func.dfg.value_def(p) {
                        ValueDef::Param(_, n) => n,
                        _ => unreachable!("a parameter"),
                    })
                    .collect::<Vec<_>>(),
                _ => Vec::new(),
            })
            .collect();
        let mut branches: Vec<(Inst, usize)> = edges
            .iter()
            .filter(|e| params.contains(&e.0))
            .map(|e| (e.1, e.2))
            .collect();
        branches.sort();
        branches.dedup();
        for (branch, call_index) in branches {
            let vectors: Vec<Value> = params
                .iter()
                .map(|&param| {
                    let &(_, _, _, arg) = edges
                        .iter()
                        .find(|e| e.0 == param && e.1 == branch && e.2 == call_index)
                        .expect("every edge's arguments are packed");
                    self.vector_before(arg, branch)
                })
                .collect();
            let dfg = &mut self.func.dfg;
            let call = &mut dfg.insts[branch]
                .branch_destination_mut(&mut dfg.jump_tables, &mut dfg.exception_tables)
                [call_index];
            let mut args: Vec<BlockArg> = call
                .args(&dfg.value_lists)
                .enumerate()
                .filter(|(i, _)| !packed_indices.contains(i))
                .map(|(_, a)| a)
                .collect();
            args.extend(vectors.into_iter().map(BlockArg::Value));
            *call = BlockCall::new(block, args, &mut dfg.value_lists);
        }
        let first = self.func.layout.first_inst(block).expect("a terminator");
        for id in params {
            let Node::Param { ref params, .. } = self.nodes[id] else {
                unreachable!("a parameter pack")
            };
            let params = params.clone();
            let vector = self.vectors[id].expect("emitted");
            for (k, &p) in params.iter().enumerate() {
                let e = FuncCursor::new(self.func)
                    .at_inst(first)
                    .ins()
                    .extractlane(vector, k as u8);
                self.func.dfg.remove_block_param(p);
                self.func.dfg.change_to_alias(p, e);
            }
        }
    }

    /// Emits an Op or Load node after its last lane and turns the lanes into extracts.
    fn emit_lanes(&mut self, id: NodeId) {
        let insts = match &self.nodes[id] {
            Node::Op { insts, .. } | Node::Load { insts } => insts.clone(),
            _ => unreachable!("lanes of an operation or load"),
        };
        let last = *insts
            .iter()
            .max_by_key(|i| self.position[i].1)
            .expect("lanes");
        let after = self
            .func
            .layout
            .next_inst(last)
            .expect("a block ends with its terminator");
        let vt = self.node_type[id];
        let vector = match &self.nodes[id] {
            Node::Load { .. } => {
                let InstructionData::Load {
                    arg, flags, offset, ..
                } = self.func.dfg.insts[insts[0]]
                else {
                    unreachable!("a load")
                };
                let flags = self.func.dfg.mem_flags[flags];
                FuncCursor::new(self.func)
                    .at_inst(after)
                    .ins()
                    .load(vt, flags, arg, offset)
            }
            Node::Op { args, amount, .. } => {
                let (args, amount) = (args.clone(), *amount);
                let operands: Vec<Value> =
                    args.iter().map(|&a| self.vector_before(a, after)).collect();
                self.emit_op(insts[0], vt, &operands, amount, after)
            }
            _ => unreachable!("lanes of an operation or load"),
        };
        self.vectors[id] = Some(vector);
        for (k, &inst) in insts.iter().enumerate() {
            let old = self.func.dfg.first_result(inst);
            let mut pos = FuncCursor::new(self.func).at_inst(after);
            let mut e = pos.ins().extractlane(vector, k as u8);
            if pos.func.dfg.value_type(old) == types::I8 && vt.lane_type() != types::I8 {
                // A mask lane (all ones or zero) back to a boolean 0/1.
                let byte = pos.ins().ireduce(types::I8, e);
                e = pos.ins().band_imm_u(byte, 1);
            }
            self.func.dfg.detach_inst_results(inst);
            self.func.layout.remove_inst(inst);
            self.func.dfg.change_to_alias(old, e);
        }
    }

    /// The vector form of lane instruction `template` on `operands`, before `before`.
    fn emit_op(
        &mut self,
        template: Inst,
        vt: Type,
        operands: &[Value],
        amount: Option<Value>,
        before: Inst,
    ) -> Value {
        let op = self.func.dfg.insts[template].opcode();
        let mut pos = FuncCursor::new(self.func).at_inst(before);
        if let Some(s) = amount {
            let x = operands[0];
            let bits = i64::from(vt.lane_bits());
            return match op {
                Opcode::Rotl | Opcode::Rotr => {
                    // Vector shifts take their amount modulo the lane width, as rotations do.
                    let st = pos.func.dfg.value_type(s);
                    let width = pos.ins().iconst(st, bits);
                    let back = pos.ins().isub(width, s);
                    let (l, r) = if op == Opcode::Rotl {
                        (s, back)
                    } else {
                        (back, s)
                    };
                    let hi = pos.ins().ishl(x, l);
                    let lo = pos.ins().ushr(x, r);
                    pos.ins().bor(hi, lo)
                }
                Opcode::Ishl => pos.ins().ishl(x, s),
                Opcode::Ushr => pos.ins().ushr(x, s),
                _ => pos.ins().sshr(x, s),
            };
        }
        let data = match pos.func.dfg.insts[template] {
            InstructionData::Unary { opcode, .. } => InstructionData::Unary {
                opcode,
                arg: operands[0],
            },
            InstructionData::Binary { opcode, .. } => InstructionData::Binary {
                opcode,
                args: [operands[0], operands[1]],
            },
            InstructionData::Ternary {
                opcode: Opcode::Select,
                ..
            } => {
                // The compare's mask (of the lanes' width) selects bit by bit.
                let mut mask = operands[0];
                if pos.func.dfg.value_type(mask) != vt {
                    let little = MemFlagsData::new().with_endianness(Endianness::Little);
                    mask = pos.ins().bitcast(vt, little, mask);
                }
                return pos.ins().bitselect(mask, operands[1], operands[2]);
            }
            InstructionData::Ternary { opcode, .. } => InstructionData::Ternary {
                opcode,
                args: [operands[0], operands[1], operands[2]],
            },
            InstructionData::LoadNoOffset {
                opcode: Opcode::Bitcast,
                ..
            } => {
                let little = MemFlagsData::new().with_endianness(Endianness::Little);
                return pos.ins().bitcast(vt, little, operands[0]);
            }
            InstructionData::FloatCompare { opcode, cond, .. } => InstructionData::FloatCompare {
                opcode,
                cond,
                args: [operands[0], operands[1]],
            },
            InstructionData::IntCompare { opcode, cond, .. } => InstructionData::IntCompare {
                opcode,
                cond,
                args: [operands[0], operands[1]],
            },
            _ => unreachable!("packable formats"),
        };
        // A compare is controlled by its operands' type (its result is their mask).
        let ctrl = if is_compare(op) {
            self.func.dfg.value_type(operands[0])
        } else {
            vt
        };
        let inst = self.func.dfg.make_inst(data);
        self.func.dfg.make_inst_results(inst, ctrl);
        self.func.layout.insert_inst(inst, before);
        self.func.dfg.first_result(inst)
    }

    /// Node `id`'s vector for a use before `before`: an emitted vector, or a splat, constant
    /// or gather made there.
    fn vector_before(&mut self, id: NodeId, before: Inst) -> Value {
        if let Some(v) = self.vectors[id] {
            return v;
        }
        let vt = self.node_type[id];
        let mut pos = FuncCursor::new(self.func).at_inst(before);
        match &self.nodes[id] {
            Node::Splat(v) => pos.ins().splat(vt, *v),
            Node::Const(bytes) => {
                let c = pos
                    .func
                    .dfg
                    .constants
                    .insert(ConstantData::from(bytes.clone()));
                pos.ins().vconst(vt, c)
            }
            Node::Gather(lanes) => {
                let lanes = lanes.clone();
                let mut x = pos.ins().scalar_to_vector(vt, lanes[0]);
                for (k, &lane) in lanes.iter().enumerate().skip(1) {
                    x = pos.ins().insertlane(x, lane, k as u8);
                }
                self.gathers.push((x, lanes));
                x
            }
            _ => unreachable!("operations, loads and parameters are emitted first"),
        }
    }
}

/// Runs of consecutive values of one packable type, in order, each as many as the widest
/// vector they fill holds.
fn consecutive_groups(
    values: &[Value],
    ty: impl Fn(Value) -> Type,
    vector_bits: u32,
) -> Vec<Vec<Value>> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < values.len() {
        let t = ty(values[i]);
        let run = values[i..].iter().take_while(|&&v| ty(v) == t).count();
        let fits = max_lanes(t, vector_bits).map(|max| {
            let mut n = max;
            while n > run {
                n /= 2;
            }
            n
        });
        match fits {
            Some(n) if packs(t, n, vector_bits) => {
                out.push(values[i..i + n].to_vec());
                i += n;
            }
            _ => i += 1,
        }
    }
    out
}

fn writes_memory(func: &Function, inst: Inst) -> bool {
    let op = func.dfg.insts[inst].opcode();
    op.can_store() || op.is_call() || op.other_side_effects()
}

fn touches_memory(func: &Function, inst: Inst) -> bool {
    writes_memory(func, inst) || func.dfg.insts[inst].opcode().can_load()
}
