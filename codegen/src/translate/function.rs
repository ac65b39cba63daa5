//! Translation of SPIR-V function bodies into the work-group function: one `Translator` per
//! kernel, an explicit environment of SPIR-V ids → Cranelift values per inlined call (`Frame`),
//! and one `match` over opcodes whose arms call the helpers of each opcode group
//! (arith.rs, memory.rs, convert.rs, composite.rs, opencl_std.rs, builtins.rs).

use std::collections::{HashMap, HashSet};

use cranelift_codegen::ir::{self, BlockArg, InstBuilder, Value};
use cranelift_frontend::{FunctionBuilder, Switch, Variable};
use ferrocl_frontend::spirv::{Op, StorageClass, Word};
use ferrocl_frontend::{AtomicOp, Cfg, Function, Inst, Module, Type};

use super::analysis::{frame_resident_ids, promotable_variables, schedule_ranks};
use super::builtins::WorkItem;
use super::subgroup::is_sub_group_local;
use super::values::{shape, Shape, Val};
use crate::entry_points::EntryPoint;
use crate::environment::KernelEnvironment;
use crate::error::BuildError;
use crate::options::BuildOptions;

/// Storage of a function-scope `OpVariable`.
pub(crate) enum VarStorage {
    /// Never has its address taken: lives in SSA via cranelift-frontend variables, one per leaf.
    Promoted { vars: Vec<Variable>, shape: Shape },
    /// Address-taken: a stack slot; the id's value is the slot address.
    Memory,
}

/// One inlined instance of a SPIR-V function.
pub(crate) struct Frame<'m> {
    pub(crate) values: HashMap<Word, Val>,
    blocks: HashMap<Word, ir::Block>,
    phis: HashMap<Word, Vec<Inst<'m>>>,
    pub(crate) vars: HashMap<Word, VarStorage>,
    promotable: HashSet<Word>,
    /// `(builtin variable, component index)` for pointers into built-in input variables.
    pub(crate) builtin_ptrs: HashMap<Word, (Word, Val)>,
    /// Kernels with barriers: ids whose value must survive a barrier (or be visible from a
    /// resume point), kept in the work-item frame instead of SSA.
    frame_resident: HashSet<Word>,
    /// Kernels with barriers: ids that would have to survive a barrier but are cheap pure
    /// functions of the work-item's ids, constants and arguments; recomputed at every use
    /// (`Translator::rematerialise`) instead of stored in and loaded from the frame.
    remat: HashMap<Word, Inst<'m>>,
    /// Frame offset and shape of each frame-resident value defined so far.
    frame_slots: HashMap<Word, (u64, Shape)>,
    /// Function variables placed in the work-item frame: id → (frame offset, alignment).
    frame_vars: HashMap<Word, (u64, u64)>,
    /// Kernels with barriers: the back edges (latch label, header label) of this function's
    /// spin loops, where a work-item yields (frontend `spin_loop_back_edges`).
    yield_edges: HashSet<(Word, Word)>,
    /// Yield blocks the terminator being translated branches to, with their loop header: filled
    /// once the terminator is emitted (`Translator::emit_yields`).
    pending_yields: Vec<(ir::Block, Word)>,
    ret: ir::Block,
    ret_shape: Option<Shape>,
    label: Word,
    /// The SPIR-V function this frame inlines.
    pub(crate) function: Function<'m>,
    /// Checked mode: the object each pointer points into (provenance.rs), and the bounds of
    /// the objects the caller passed for the parameters (checks.rs).
    pub(crate) origins: HashMap<Word, super::provenance::Origins>,
    pub(crate) param_bounds: Vec<Option<super::checks::Bounds>>,
}

/// Translation state of one kernel: the builder, the inlined frames, the work-item's values,
/// barrier cutting, what translation found (printf formats, checks, vector results) and
/// checked mode's bounds. Layouts, references to the driver and what a specialised build
/// knows are the environment's (`env`).
pub(crate) struct Translator<'m, 'b, 'e> {
    pub(crate) m: &'m Module,
    pub(crate) b: FunctionBuilder<'b>,
    /// The target and runtime the kernel is translated for (environment.rs).
    pub(crate) env: &'e mut dyn KernelEnvironment,
    pub(crate) options: &'e BuildOptions,
    /// Work-items per sub-group of this kernel: its `SubgroupSize` execution mode, else the
    /// environment's.
    pub(crate) sub_group_size: u64,
    pub(crate) frames: Vec<Frame<'m>>,
    pub(crate) wi: WorkItem,
    pub(crate) instruction_count: usize,
    pub(crate) private_bytes: u64,
    /// The stack slot of each private variable and the bytes it added to `private_bytes`:
    /// what to take back for a slot store forwarding empties (private_forward.rs).
    pub(crate) private_slots: Vec<(ir::StackSlot, u64)>,
    /// Present when the kernel has barriers.
    pub(crate) barrier: Option<BarrierState>,
    /// Translating the lockstep body of a kernel whose only barriers are sub-group barriers
    /// (kernel.rs `lockstep_lanes`): they need no cut there.
    pub(crate) lockstep_sub_groups: bool,
    /// Region schedules (kernel.rs `build_regions`): the work-group reductions, by the resume
    /// point their collective waits at, folded once per group where that point's region
    /// starts rather than by work-item 0 inside it (group.rs).
    pub(crate) group_steps: Option<HashMap<i64, super::group::GroupStep>>,
    /// Bytes per work-item of the reductions' columns after the group's frames
    /// (`group::Contributions::Column`), counted in the kernel's frame size.
    pub(crate) column_bytes: u64,
    /// Formats of the kernel's printf calls; a record's format index points in here.
    pub(crate) printf_formats: Vec<ferrocl_frontend::PrintfFormat>,
    /// Resume points in execution order (see [`Translator::point_ranks`]).
    pub(crate) points: PointOrder,
    /// Values of the kernel prologue (arguments loaded once per work-group): they dominate
    /// every region, so callees with barriers need not keep them in the work-item frame.
    pub(crate) prologue_values: HashSet<Value>,
    /// Checked mode: the checks emitted so far (a fault names one by its index).
    pub(crate) check_sites: Vec<crate::checked::CheckSite>,
    /// The components of each OpenCL vector result (4 or more scalars of one packable type):
    /// where the packer starts from besides stores and loop-carried values (vector_pack.rs),
    /// so a vector computed only to be compared (a hash's state against a digest) packs too.
    pub(crate) vector_results: Vec<Vec<Value>>,
    /// The float math calls the work-item vectoriser may emit as vector code
    /// (vectorize/math.rs), by the function reference they call.
    pub(crate) vector_math: crate::vectorize::MathCalls,
    /// Checked mode: the bounds of the arguments of the call about to be inlined, for its
    /// parameters (taken by `inline_function`).
    pub(crate) call_param_bounds: Vec<Option<super::checks::Bounds>>,
    /// Checked mode: the bounds of the kernel's arguments, loaded in the prologue.
    pub(crate) kernel_arg_bounds: Vec<Option<super::checks::Bounds>>,
    /// Checked mode: every private variable whose address is taken, translated so far; what
    /// a pointer of unknown object may reach in private memory.
    pub(crate) private_objects: Vec<super::checks::PrivateObject>,
}

/// The order in which waiting work-items resume. A work-item's frame state is the *rank* of
/// the point it waits at, not its number: ranks follow program order (blocks in a topological
/// order of the control flow where every loop's blocks come before its exits, inlined calls at
/// their call site), so the lowest rank among the waiting work-items of a sub-group is where
/// the sub-group's lagging members are. Resuming members in rank order makes divergent members
/// reconverge the way SIMD lanes would before a later sub-group operation combines them.
/// Ranks are known only when the whole kernel is translated: every use is a placeholder
/// constant patched then.
#[derive(Default)]
pub(crate) struct PointOrder {
    /// (block rank, instruction index) per inlining level at the instruction being translated.
    path: Vec<(u32, u32)>,
    /// Program position of resume point k at index k - 1.
    keys: Vec<Vec<(u32, u32)>>,
    /// Placeholder `iconst.i32 k` instructions to rewrite as `iconst.i32 rank(k)`.
    patches: Vec<(ir::Inst, i64)>,
    /// Some resume point belongs to a sub-group operation or sub-group barrier.
    pub(crate) sub_group_points: bool,
    /// The served-mark stores of every barrier point: only sub-group points (and the gates of
    /// kernels with yield points) read the mark, so without them these are dropped once the
    /// kernel is translated.
    mark_stores: Vec<ir::Inst>,
    /// What kind of point resume point k is, at index k - 1.
    kinds: Vec<PointKind>,
    /// Kernels with yield points: a frame state is `rank << KIND_BITS | kind`, so that gates can
    /// tell what a member waits at (see [`PointKind`]); otherwise it is the rank.
    pub(crate) with_kinds: bool,
}

/// What a work-item waits for at a resume point. Kernels without yield points resume everyone
/// each round (barriers are work-group uniform, so every work-item reached the same one); with
/// yield points (spin loops) some work-items may still be spinning while others wait at a
/// barrier, so each resume point has a *gate* (`Translator::resume_gate`) that lets a
/// work-item through only once those it waits for have arrived:
/// - a barrier or uniform collective waits for every work-item of its scope (work-group or
///   sub-group) to wait at the same point; the first to find them all there releases the others
///   (marks them served), so all of them pass even though it moves on;
/// - a non-uniform sub-group instruction keeps the reconvergence rule of `PointOrder`: no
///   member of the sub-group may lag behind at a lower-ranked non-uniform or yield point
///   (members at barriers are waiting, not lagging);
/// - a yield point waits for nobody: a spinning work-item retries once per round, so whoever
///   it waits for gets to run in between;
/// - a named barrier waits for its count of whole sub-groups waiting on the same barrier,
///   wherever they wait on it (gates.rs).
///
/// Kernels with named barriers run in these gated rounds too.
///
/// A round in which no work-item could resume (possible only with barriers that disagree,
/// undefined behaviour) is followed by one whose gates let everybody through, so a kernel never
/// hangs on one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum PointKind {
    /// `OpControlBarrier` with Workgroup execution scope.
    WorkGroupBarrier = 0,
    /// A work-group collective: work-item 0 combines, so only it releases the others.
    WorkGroupCollective = 1,
    /// `OpControlBarrier` with Subgroup execution scope.
    SubGroupBarrier = 2,
    /// A uniform sub-group collective (`OpGroup*` with Subgroup scope): the leader serves the
    /// others (subgroup.rs).
    SubGroupCollective = 3,
    /// A non-uniform sub-group instruction.
    NonUniform = 4,
    /// The back edge of a spin loop.
    Yield = 5,
    /// `OpMemoryNamedBarrier`: waits until as many whole sub-groups as the barrier counts wait
    /// on the same barrier (its handle in each frame's named-barrier slot).
    NamedBarrier = 6,
}

/// Low bits of a frame state that hold the point's kind in kernels with yield points.
pub(crate) const KIND_BITS: u32 = 3;

/// What the gates of a kernel with yield points need (see [`PointKind`]).
#[derive(Clone, Copy)]
pub(crate) struct YieldRounds {
    /// Non-zero in a round after one where no work-item could resume: gates open.
    pub(crate) forced: Value,
    /// Set when a work-item passes a gate in this round.
    pub(crate) progress: Variable,
}

/// What translation needs to cut a kernel at its barriers.
pub(crate) struct BarrierState {
    /// The current work-item's frame.
    pub(crate) frame_base: Value,
    /// Bytes of frame allocated so far; offset 0 holds the resume point (u32).
    pub(crate) frame_size: u64,
    /// Resume point k (k ≥ 1) continues at `resume_blocks[k - 1]`.
    pub(crate) resume_blocks: Vec<ir::Block>,
    /// Set when some work-item stopped at a barrier in the current round.
    pub(crate) pending: Variable,
    /// Where a work-item goes when it stops at a barrier.
    pub(crate) item_done: ir::Block,
    /// Functions that contain a barrier, directly or through calls.
    pub(crate) barrier_functions: HashSet<Word>,
    /// The group's frames and the distance between two work-items' frames (collectives read
    /// every work-item's contribution).
    pub(crate) frames: Value,
    pub(crate) frame_stride: Value,
    /// Every barrier stop so far: the block that leaves for `item_done`, the resume point's
    /// number, and its store of the work-item's state (kernel.rs drops these stores when the
    /// kernel's rounds follow a static schedule).
    pub(crate) stops: Vec<(ir::Block, i64, ir::Inst)>,
    /// Present when the kernel has yield points: each resume point gets a gate.
    pub(crate) yields: Option<YieldRounds>,
    /// Kernels with named barriers: the frame offset where a work-item waiting at one keeps
    /// the barrier's handle, at the same place in every frame (gates.rs).
    pub(crate) named_barrier_slot: Option<i32>,
}

/// Opcodes that synchronise the work-group like a barrier (the frontend's definition).
pub(crate) fn is_group_barrier(op: Op) -> bool {
    ferrocl_frontend::synchronises_work_group(op)
}

/// Frame offset of the sub-group "served" mark (subgroup.rs): 0, or 1 + the linear local id
/// of the sub-group leader that already combined this work-item's contribution at the point it
/// waits at. The frame's first 16 bytes are the resume state (u32 at 0) and this mark.
pub(crate) const SERVED_MARK_OFFSET: i32 = 8;

/// Resume point of a work-item that returned from the kernel.
pub(crate) const RESUME_DONE: i64 = -1;

pub(crate) fn err<T>(msg: impl Into<String>) -> Result<T, BuildError> {
    Err(BuildError::new(msg))
}

pub(crate) fn inst_desc(inst: Inst<'_>) -> String {
    inst.describe()
}

/// An operand `inst`'s opcode has but its decode leaves optional (present in valid modules).
pub(crate) fn required(
    inst: Inst<'_>,
    operand: Option<Word>,
    what: &str,
) -> Result<Word, BuildError> {
    operand.ok_or_else(|| BuildError::new(format!("error: {} has no {what}\n", inst.describe())))
}

impl<'m, 'b, 'e> Translator<'m, 'b, 'e> {
    pub(crate) fn frame(&mut self) -> &mut Frame<'m> {
        self.frames
            .last_mut()
            .expect("a frame is always active while translating")
    }

    /// The value of id `id`, which must be a scalar.
    pub(crate) fn scalar(&mut self, id: Word) -> Result<Value, BuildError> {
        self.value(id)?.scalar()
    }

    /// The value of id `id`: a local result, a constant, or a module-scope variable's address.
    pub(crate) fn value(&mut self, id: Word) -> Result<Val, BuildError> {
        if let Some(v) = self.frame().values.get(&id) {
            return Ok(v.clone());
        }
        if let Some(inst) = self.frame().remat.get(&id).copied() {
            return self.rematerialise(id, inst);
        }
        if let Some((offset, shape)) = self.frame().frame_slots.get(&id).cloned() {
            let base = self.frame_base()?;
            let mut tys = Vec::new();
            shape.leaf_types(&mut tys);
            let leaves: Vec<Value> = tys
                .iter()
                .enumerate()
                .map(|(i, &t)| {
                    self.b
                        .ins()
                        .load(t, frame_flags(), base, (offset + 8 * i as u64) as i32)
                })
                .collect();
            return shape.assemble(&mut leaves.into_iter());
        }
        if let Some((offset, align)) = self.frame().frame_vars.get(&id).copied() {
            let base = self.frame_base()?;
            let addr = self.b.ins().iadd_imm_s(base, offset as i64);
            return Ok(Val::S(self.align_up(addr, align)));
        }
        if self.m.global(id).is_some() {
            return self.global_value(id);
        }
        err(format!("error: id %{id} has no value here (used before its definition, or a promoted variable used as a value)\n"))
    }

    /// Recomputes rematerialisable `id` where it is used: its definition is translated again
    /// here (its operands recursively so), and the value is not kept, as the next use may be
    /// in a block this one does not dominate (a resume point's region).
    fn rematerialise(&mut self, id: Word, inst: Inst<'m>) -> Result<Val, BuildError> {
        self.frame().remat.remove(&id);
        let result = self.translate_instruction(inst);
        self.frame().remat.insert(id, inst);
        result?;
        self.frame().values.remove(&id).ok_or_else(|| {
            BuildError::new(format!(
                "internal: rematerialised %{id} ({}) defined no value\n",
                inst_desc(inst)
            ))
        })
    }

    pub(crate) fn shape_of_type(&self, ty: Word) -> Result<Shape, BuildError> {
        shape(self.m, ty)
    }

    pub(crate) fn result_type(&self, inst: Inst<'_>) -> Result<Word, BuildError> {
        inst.result_type().ok_or_else(|| {
            BuildError::new(format!("error: {} has no result type\n", inst_desc(inst)))
        })
    }

    /// Binds an instruction's result. The value's Cranelift types must match the declared result
    /// type: this is where modules with inconsistent operand types are refused (Cranelift would
    /// otherwise miscompile or panic on them).
    pub(crate) fn define(&mut self, inst: Inst<'_>, v: Val) -> Result<(), BuildError> {
        let Some(id) = inst.result_id() else {
            return Ok(());
        };
        if let Some(ty) = inst.result_type() {
            let mut want = Vec::new();
            self.shape_of_type(ty)?.leaf_types(&mut want);
            let have: Vec<ir::Type> = v
                .flat()
                .iter()
                .map(|&x| self.b.func.dfg.value_type(x))
                .collect();
            if want != have {
                return err(format!(
                    "error: operand types do not match the result type %{ty} (expected {want:?}, computed {have:?})\n"
                ));
            }
        }
        if self.frame().remat.contains_key(&id) {
            // Recomputed at each use (value()); this definition's code is dead.
            return Ok(());
        }
        if self.barrier.is_some() && self.frame().frame_resident.contains(&id) {
            let shape = self.shape_of_type(inst.result_type().unwrap_or(0))?;
            self.store_in_frame(id, &v, shape)?;
        } else {
            if let Val::C(children) = &v {
                let lanes: Vec<Value> = children
                    .iter()
                    .filter_map(|c| match c {
                        Val::S(x) => Some(*x),
                        Val::C(_) => None,
                    })
                    .collect();
                if lanes.len() >= 4 && lanes.len() == children.len() {
                    self.vector_results.push(lanes);
                }
            }
            self.frame().values.insert(id, v);
        }
        Ok(())
    }

    pub(crate) fn frame_base(&self) -> Result<Value, BuildError> {
        self.barrier
            .as_ref()
            .map(|b| b.frame_base)
            .ok_or_else(|| BuildError::new("internal: frame used without barriers\n"))
    }

    /// Allocates `bytes` of work-item frame aligned to `align`, returning the offset.
    pub(crate) fn frame_alloc(&mut self, bytes: u64, align: u64) -> Result<u64, BuildError> {
        let state = self
            .barrier
            .as_mut()
            .ok_or_else(|| BuildError::new("internal: frame used without barriers\n"))?;
        let offset = state.frame_size.next_multiple_of(align.clamp(1, 128));
        state.frame_size = offset + bytes;
        if state.frame_size > 1 << 20 {
            return err("error: more than 1 MiB of values live across barriers per work-item\n");
        }
        Ok(offset)
    }

    /// Keeps `v` (id `id`) in the work-item frame, one 8-byte cell per leaf.
    fn store_in_frame(&mut self, id: Word, v: &Val, shape: Shape) -> Result<(), BuildError> {
        let leaves = v.flat();
        let offset = self.frame_alloc(8 * leaves.len() as u64, 8)?;
        let base = self.frame_base()?;
        for (i, leaf) in leaves.iter().enumerate() {
            self.b
                .ins()
                .store(frame_flags(), *leaf, base, (offset + 8 * i as u64) as i32);
        }
        self.frame().frame_slots.insert(id, (offset, shape));
        Ok(())
    }

    /// `addr` rounded up to a multiple of `align` (a power of two); unchanged up to 16, the
    /// alignment of stack slots and frames.
    pub(crate) fn align_up(&mut self, addr: Value, align: u64) -> Value {
        if align <= 16 {
            return addr;
        }
        let bumped = self.b.ins().iadd_imm_s(addr, align as i64 - 1);
        self.b.ins().band_imm_s(bumped, -(align as i64))
    }

    /// A resume point of kind `kind` (`OpControlBarrier`, a collective, a spin loop's back
    /// edge): the work-item records where to resume and leaves; translation continues in the
    /// resume block, which only the round dispatch reaches (through the point's gate in kernels
    /// with yield points). Returns the resume point's number; its frame state while it waits
    /// there is [`Translator::point_value`].
    pub(crate) fn barrier_point(&mut self, kind: PointKind) -> Result<i64, BuildError> {
        let Some(state) = self.barrier.as_mut() else {
            return err("internal: barrier in a kernel analysed as barrier-free\n");
        };
        let resume = self.b.create_block();
        state.resume_blocks.push(resume);
        let (k, base, pending, done) = (
            state.resume_blocks.len() as i64,
            state.frame_base,
            state.pending,
            state.item_done,
        );
        if self.points.keys.len() < k as usize {
            self.points.keys.push(self.points.path.clone());
            self.points.kinds.push(kind);
        }
        let kv = self.point_value(k);
        let store = self.b.ins().store(frame_flags(), kv, base, 0);
        if let (Some(block), Some(state)) = (self.b.current_block(), self.barrier.as_mut()) {
            state.stops.push((block, k, store));
        }
        // Nobody has served this work-item at the point it now waits at (subgroup.rs).
        let unserved = self.b.ins().iconst(ir::types::I64, 0);
        let mark = self
            .b
            .ins()
            .store(frame_flags(), unserved, base, SERVED_MARK_OFFSET);
        self.points.mark_stores.push(mark);
        let one = self.b.ins().iconst(ir::types::I8, 1);
        self.b.def_var(pending, one);
        self.b.ins().jump(done, &[]);
        self.b.switch_to_block(resume);
        if self.barrier.as_ref().is_some_and(|s| s.yields.is_some()) {
            self.resume_gate(kind, k)?;
        }
        Ok(k)
    }

    /// The frame state of a work-item waiting at resume point `k` (its rank, patched in by
    /// [`Translator::patch_point_ranks`]).
    pub(crate) fn point_value(&mut self, k: i64) -> Value {
        let v = self.b.ins().iconst(ir::types::I32, k);
        let inst = self.b.func.dfg.value_def(v).unwrap_inst();
        self.points.patches.push((inst, k));
        v
    }

    /// Frame state of every resume point: `ranks[k - 1]`, its rank from 1 up in program order
    /// (shifted left by [`KIND_BITS`] over its kind in kernels with yield points).
    pub(crate) fn point_ranks(&self) -> Vec<i64> {
        let mut order: Vec<usize> = (0..self.points.keys.len()).collect();
        order.sort_by(|&a, &b| {
            self.points.keys[a]
                .cmp(&self.points.keys[b])
                .then(a.cmp(&b))
        });
        let mut ranks = vec![0; order.len()];
        for (rank, k) in order.into_iter().enumerate() {
            ranks[k] = if self.points.with_kinds {
                let kind = self
                    .points
                    .kinds
                    .get(k)
                    .copied()
                    .unwrap_or(PointKind::Yield);
                ((rank as i64 + 1) << KIND_BITS) | kind as i64
            } else {
                rank as i64 + 1
            };
        }
        ranks
    }

    /// Rewrites every placeholder from [`Translator::point_value`] with its point's rank, and
    /// drops the served-mark stores of a kernel without sub-group points (one store per
    /// work-item and region saved).
    pub(crate) fn patch_point_ranks(&mut self, ranks: &[i64]) -> Result<(), BuildError> {
        let marks = std::mem::take(&mut self.points.mark_stores);
        if !self.points.sub_group_points && !self.points.with_kinds {
            for inst in marks {
                self.b.func.layout.remove_inst(inst);
            }
        }
        for (inst, k) in std::mem::take(&mut self.points.patches) {
            let rank = ranks.get(k as usize - 1).copied().ok_or_else(|| {
                BuildError::new("internal: a resume point without a program position\n")
            })?;
            self.b.func.replace(inst).iconst(ir::types::I32, rank);
        }
        Ok(())
    }

    /// The Cranelift types of `v`'s leaves must be `want`.
    pub(crate) fn check_leaf_types(
        &self,
        v: &[Value],
        want: &[ir::Type],
    ) -> Result<(), BuildError> {
        let have: Vec<ir::Type> = v.iter().map(|&x| self.b.func.dfg.value_type(x)).collect();
        if have != want {
            return err(format!(
                "error: value of types {have:?} used where {want:?} is required\n"
            ));
        }
        Ok(())
    }

    /// A reference to `entry` from the function being built.
    pub(crate) fn func_ref(&mut self, entry: EntryPoint) -> Result<ir::FuncRef, BuildError> {
        self.env.entry_point(self.b.func, entry)
    }

    /// Calls `entry` with `args`; its results.
    pub(crate) fn call_entry(
        &mut self,
        entry: EntryPoint,
        args: &[Value],
    ) -> Result<Vec<Value>, BuildError> {
        let f = self.func_ref(entry)?;
        let call = self.b.ins().call(f, args);
        Ok(self.b.inst_results(call).to_vec())
    }

    /// Translates a call of SPIR-V function `fid` with `args` inline, returning its result.
    /// Leaves the builder in the continuation block.
    pub(crate) fn inline_function(
        &mut self,
        fid: Word,
        args: Vec<Val>,
        ret_block: Option<ir::Block>,
    ) -> Result<Option<Val>, BuildError> {
        let m = self.m;
        let f = m.function(fid).ok_or_else(|| {
            BuildError::new(format!("error: %{fid} is not a function of this module\n"))
        })?;
        if f.block_count() == 0 {
            let name = m.linkage_name(fid).unwrap_or("?");
            if name == ferrocl_frontend::DEVICELIB_ASSERT_FAIL {
                self.devicelib_assert_call(&args)?;
                return Ok(None);
            }
            if let Some(v) = self.packed_dot_call(name, &args)? {
                return Ok(Some(v));
            }
            if args.is_empty() {
                let ret_ty = f.return_type().unwrap_or(0);
                let shape = match m.ty(ret_ty) {
                    Some(Type::Void) | None => None,
                    Some(_) => Some(self.shape_of_type(ret_ty)?),
                };
                if let Some(v) = self.clock_call(name, shape.as_ref())? {
                    return Ok(Some(v));
                }
            }
            return err(format!(
                "error: call to imported function %{fid} '{name}': link the program that exports it first (clCompileProgram + clLinkProgram)\n"
            ));
        }
        if self.frames.len() > 256 {
            return err("error: call depth above 256 (inlining limit)\n");
        }
        let ret_ty = f.return_type().unwrap_or(0);
        let ret_shape = match m.ty(ret_ty) {
            Some(Type::Void) | None => None,
            Some(_) => Some(self.shape_of_type(ret_ty)?),
        };
        let cont = match ret_block {
            Some(b) => b,
            None => {
                let cont = self.b.create_block();
                if let Some(s) = &ret_shape {
                    let mut tys = Vec::new();
                    s.leaf_types(&mut tys);
                    for t in tys {
                        self.b.append_block_param(cont, t);
                    }
                }
                cont
            }
        };
        if f.param_count() != args.len() {
            return err(format!(
                "error: call of %{fid} with {} arguments, function has {}\n",
                args.len(),
                f.param_count()
            ));
        }
        let yield_edges: HashSet<(Word, Word)> = match &self.barrier {
            Some(_) => m.spin_loop_back_edges(fid).iter().copied().collect(),
            None => HashSet::new(),
        };
        let (mut frame_resident, promotable) = match &self.barrier {
            Some(state) => (
                frame_resident_ids(f, &state.barrier_functions, &yield_edges),
                HashSet::new(),
            ),
            None => (HashSet::new(), promotable_variables(m, f)),
        };
        let remat = self.rematerialisable(f, &mut frame_resident);
        let callee_has_barrier = self
            .barrier
            .as_ref()
            .is_some_and(|s| s.barrier_functions.contains(&fid));
        let mut frame = Frame {
            values: HashMap::new(),
            blocks: HashMap::new(),
            phis: HashMap::new(),
            vars: HashMap::new(),
            promotable,
            builtin_ptrs: HashMap::new(),
            frame_resident,
            remat,
            frame_slots: HashMap::new(),
            frame_vars: HashMap::new(),
            yield_edges,
            pending_yields: Vec::new(),
            ret: cont,
            ret_shape: ret_shape.clone(),
            label: 0,
            function: f,
            origins: if self.options.checked {
                super::provenance::pointer_origins(m, f)
            } else {
                HashMap::new()
            },
            // The kernel's own parameters: the argument bounds loaded in the prologue.
            param_bounds: if self.frames.is_empty() {
                self.kernel_arg_bounds.clone()
            } else {
                std::mem::take(&mut self.call_param_bounds)
            },
        };
        // Parameters of a function with a barrier are read after resume points, where the
        // caller's SSA values do not reach: they go to the frame. The kernel's own parameters
        // come from the prologue, which dominates everything, and so do the caller's arguments
        // that are kernel arguments passed on (llvm-spirv's entry wrapper passes all of them).
        let frame_params = callee_has_barrier && !self.frames.is_empty();
        let mut params_to_store = Vec::new();
        for (p, a) in f.params().zip(args) {
            if let Some(id) = p.result_id() {
                let from_prologue = a.flat().iter().all(|v| self.prologue_values.contains(v));
                if frame_params && !from_prologue {
                    params_to_store.push((id, p.result_type().unwrap_or(0), a));
                } else {
                    frame.values.insert(id, a);
                }
            }
        }
        let order = Cfg::new(f).rpo;
        let ranks = schedule_ranks(f, &order);
        for &bi in &order {
            let block = f
                .block(bi)
                .ok_or_else(|| BuildError::new("internal: no such block\n"))?;
            let label = block.label();
            let cl_block = self.b.create_block();
            frame.blocks.insert(label, cl_block);
            // Phis open the block; the frontend allows only debug instructions (llvm-spirv's
            // DebugScope in optimised -g modules) before them.
            let phis: Vec<Inst<'m>> = block
                .instructions()
                .filter(|i| i.opcode() == Op::Phi)
                .collect();
            for phi in &phis {
                let mut tys = Vec::new();
                shape(m, phi.result_type().unwrap_or(0))?.leaf_types(&mut tys);
                for t in tys {
                    self.b.append_block_param(cl_block, t);
                }
            }
            frame.phis.insert(label, phis);
        }
        let entry_label = f.block(0).map_or(0, |b| b.label());
        let entry = frame.blocks[&entry_label];
        self.frames.push(frame);
        for (id, ty, a) in params_to_store {
            let shape = self.shape_of_type(ty)?;
            self.store_in_frame(id, &a, shape)?;
        }
        self.b.ins().jump(entry, &[]);
        self.points.path.push((0, 0));
        for &bi in &order {
            let rank = ranks.get(&bi).copied().unwrap_or(u32::MAX);
            *self.points.path.last_mut().expect("pushed above") = (rank, 0);
            self.translate_block(f, bi)?;
        }
        self.points.path.pop();
        self.frames.pop();
        self.b.switch_to_block(cont);
        Ok(match ret_shape {
            None => None,
            Some(s) => {
                let params = self.b.block_params(cont).to_vec();
                Some(s.assemble(&mut params.into_iter())?)
            }
        })
    }

    fn translate_block(&mut self, f: Function<'m>, bi: usize) -> Result<(), BuildError> {
        let block = f
            .block(bi)
            .ok_or_else(|| BuildError::new("internal: no such block\n"))?;
        let label = block.label();
        let cl_block = self.frame().blocks[&label];
        self.b.switch_to_block(cl_block);
        self.frame().label = label;
        let phis = self.frame().phis[&label].clone();
        let params = self.b.block_params(cl_block).to_vec();
        let mut it = params.into_iter();
        for &phi in &phis {
            let s = shape(self.m, phi.result_type().unwrap_or(0))?;
            let v = s.assemble(&mut it)?;
            self.define(phi, v)?;
        }
        for inst in block.instructions().filter(|i| i.opcode() != Op::Phi) {
            self.instruction_count += 1;
            if let Some(position) = self.points.path.last_mut() {
                position.1 += 1;
            }
            self.translate_instruction(inst).map_err(|e| {
                if (e.log.starts_with("error: ") || e.log.starts_with("internal: "))
                    && !e.log.contains(" [in ")
                {
                    BuildError::new(format!("{} [in {}]\n", e.log.trim_end(), inst_desc(inst)))
                } else {
                    e
                }
            })?;
        }
        Ok(())
    }

    /// Arguments for a branch from the current SPIR-V block to `target`.
    fn branch_args(&mut self, target: Word) -> Result<(ir::Block, Vec<BlockArg>), BuildError> {
        let from = self.frame().label;
        let Some(&block) = self.frame().blocks.get(&target) else {
            return err(format!(
                "error: branch to %{target}, which is not a reachable block of this function\n"
            ));
        };
        let phis = self.frame().phis.get(&target).cloned().unwrap_or_default();
        let mut args = Vec::new();
        for phi in phis {
            let found = phi
                .phi_pairs()
                .flatten()
                .find(|&(_, parent)| parent == from)
                .map(|(v, _)| v);
            let v = found.ok_or_else(|| {
                BuildError::new(format!(
                    "error: OpPhi %{} has no incoming value for predecessor %{from}\n",
                    phi.result_id().unwrap_or(0)
                ))
            })?;
            let val = self.value(v)?;
            args.extend(val.flat().into_iter().map(BlockArg::Value));
        }
        Ok((block, args))
    }

    /// Where a branch from the current SPIR-V block to `target` goes: as `branch_args`, except
    /// on the back edge of a spin loop, which goes through a yield block (`emit_yields`).
    fn edge(&mut self, target: Word) -> Result<(ir::Block, Vec<BlockArg>), BuildError> {
        let from = self.frame().label;
        if self.frame().yield_edges.contains(&(from, target)) {
            let block = self.b.create_block();
            self.frame().pending_yields.push((block, target));
            return Ok((block, Vec::new()));
        }
        self.branch_args(target)
    }

    /// Fills the yield blocks of the terminator just emitted: the work-item stops at a yield
    /// point (a later round resumes it, after the others had their turn), then takes the back
    /// edge. The loop header's phis read their values after resuming: they are live at the
    /// yield, so they are in the frame (`frame_resident_ids`).
    fn emit_yields(&mut self) -> Result<(), BuildError> {
        for (block, header) in std::mem::take(&mut self.frame().pending_yields) {
            self.b.switch_to_block(block);
            self.barrier_point(PointKind::Yield)?;
            let (target, args) = self.branch_args(header)?;
            self.b.ins().jump(target, &args);
        }
        Ok(())
    }

    fn return_with(&mut self, v: Option<Val>) -> Result<(), BuildError> {
        let frame = self.frames.last().expect("frame");
        let ret = frame.ret;
        let args: Vec<BlockArg> = match (v, &frame.ret_shape) {
            (Some(v), Some(_)) => v.flat().into_iter().map(BlockArg::Value).collect(),
            (None, Some(s)) => {
                let s = s.clone();
                s.zero(&mut self.b)
                    .flat()
                    .into_iter()
                    .map(BlockArg::Value)
                    .collect()
            }
            _ => Vec::new(),
        };
        self.b.ins().jump(ret, &args);
        Ok(())
    }

    fn translate_instruction(&mut self, inst: Inst<'m>) -> Result<(), BuildError> {
        use Op::*;
        let op = inst.opcode();
        match op {
            Nop | Line | NoLine | LoopMerge | SelectionMerge | LifetimeStart | LifetimeStop
            | Name | Decorate | Source | ModuleProcessed => {}
            NamedBarrierInitialize => self.named_barrier_initialize(inst)?,
            MemoryNamedBarrier => self.memory_named_barrier(inst)?,
            ExtInst => self.ext_inst(inst)?,
            Branch => {
                let (block, args) = self.edge(inst.branch_target()?)?;
                self.b.ins().jump(block, &args);
                self.emit_yields()?;
            }
            BranchConditional => {
                let b = inst.branch_conditional()?;
                let cond = self.scalar(b.condition)?;
                let (t, targs) = self.edge(b.true_label)?;
                let (f, fargs) = self.edge(b.false_label)?;
                self.b.ins().brif(cond, t, &targs, f, &fargs);
                self.emit_yields()?;
            }
            Switch => {
                self.switch(inst)?;
                self.emit_yields()?;
            }
            Return => self.return_with(None)?,
            ReturnValue => {
                let v = self.value(inst.unary()?.value)?;
                self.return_with(Some(v))?;
            }
            // Reaching OpUnreachable is undefined behaviour; leave the function instead of
            // trapping so the host process survives.
            Unreachable | Kill => self.return_with(None)?,
            FunctionCall => {
                let call = inst.function_call()?;
                let callee = call.function;
                if self.extended_async_copy(inst, &call)? {
                    return Ok(());
                }
                let args = call
                    .arguments
                    .iter()
                    .map(|&id| self.value(id))
                    .collect::<Result<Vec<_>, _>>()?;
                if self.options.checked {
                    let callee_has_barrier = self
                        .barrier
                        .as_ref()
                        .is_some_and(|s| s.barrier_functions.contains(&callee));
                    self.call_param_bounds =
                        self.call_bounds(&call.arguments, callee_has_barrier)?;
                }
                if let Some(v) = self.inline_function(callee, args, None)? {
                    self.define(inst, v)?;
                }
            }
            Phi => return err("error: OpPhi after the start of a block\n"),
            Variable => self.variable(inst)?,
            Load => self.load(inst)?,
            Store => self.store(inst)?,
            AccessChain | InBoundsAccessChain | PtrAccessChain | InBoundsPtrAccessChain => {
                self.access_chain(inst)?
            }
            CopyMemory | CopyMemorySized => self.copy_memory(inst)?,
            CompositeConstruct | CompositeExtract | CompositeInsert | VectorShuffle
            | VectorExtractDynamic | VectorInsertDynamic | CopyObject | CopyLogical => {
                self.composite(inst)?
            }
            Undef | ConstantNull => {
                let ty = self.result_type(inst)?;
                if matches!(
                    self.m.ty(ty),
                    Some(Type::Image { .. } | Type::Sampler | Type::SampledImage { .. })
                ) {
                    return err(format!(
                        "error: {} makes an image or sampler out of nothing; they come from \
                         kernel arguments and literal samplers only\n",
                        inst.describe()
                    ));
                }
                let s = self.shape_of_type(ty)?;
                let v = s.zero(&mut self.b);
                self.define(inst, v)?;
            }
            ConvertFToU | ConvertFToS | ConvertSToF | ConvertUToF | UConvert | SConvert
            | FConvert | Bitcast | ConvertPtrToU | ConvertUToPtr | PtrCastToGeneric
            | GenericCastToPtr | SatConvertSToU | SatConvertUToS | QuantizeToF16 => {
                self.convert(inst)?
            }
            SNegate | FNegate | Not | IAdd | FAdd | ISub | FSub | IMul | FMul | UDiv | SDiv
            | FDiv | UMod | SRem | SMod | FRem | FMod | ShiftRightLogical
            | ShiftRightArithmetic | ShiftLeftLogical | BitwiseOr | BitwiseXor | BitwiseAnd
            | VectorTimesScalar | Dot | BitCount | BitReverse | IAddCarry | ISubBorrow
            | UMulExtended | SMulExtended | BitFieldInsert | BitFieldSExtract
            | BitFieldUExtract => self.arith(inst)?,
            // SPV_KHR_expect_assume: the expected value is the value; assumptions are hints.
            ExpectKHR => {
                let v = self.value(inst.unary()?.value)?;
                self.define(inst, v)?;
            }
            AssumeTrueKHR => {}
            // SPIR-V 1.1: the size of the pointee in OpenCL memory layout, a constant.
            SizeOf => {
                let ptr = inst.unary()?.value;
                let pointee = match self.m.type_of(ptr).and_then(|t| self.m.ty(t)) {
                    Some(Type::Pointer { pointee, .. }) => *pointee,
                    _ => return err("error: OpSizeOf operand is not a pointer\n"),
                };
                let size = self.m.size_of(pointee).ok_or_else(|| {
                    BuildError::new(format!("error: OpSizeOf of unsized type %{pointee}\n"))
                })?;
                let rt = super::values::scalar_ir_type(self.m, self.result_type(inst)?)?;
                let v = self.b.ins().iconst(rt, size as i64);
                self.define(inst, Val::S(v))?;
            }
            ReadClockKHR => {
                let scope = self.constant_index(inst, inst.clock_scope()?)?;
                let shape = self.shape_of_type(self.result_type(inst)?)?;
                let v = self.read_clock(scope as u32, &shape)?;
                self.define(inst, v)?;
            }
            SDot | UDot | SUDot | SDotAccSat | UDotAccSat | SUDotAccSat => {
                self.integer_dot(inst)?
            }
            IEqual
            | INotEqual
            | UGreaterThan
            | SGreaterThan
            | UGreaterThanEqual
            | SGreaterThanEqual
            | ULessThan
            | SLessThan
            | ULessThanEqual
            | SLessThanEqual
            | FOrdEqual
            | FUnordEqual
            | FOrdNotEqual
            | FUnordNotEqual
            | FOrdLessThan
            | FUnordLessThan
            | FOrdGreaterThan
            | FUnordGreaterThan
            | FOrdLessThanEqual
            | FUnordLessThanEqual
            | FOrdGreaterThanEqual
            | FUnordGreaterThanEqual
            | LogicalEqual
            | LogicalNotEqual
            | LogicalOr
            | LogicalAnd
            | LogicalNot
            | Select
            | Any
            | All
            | IsNan
            | IsInf
            | IsFinite
            | IsNormal
            | SignBitSet
            | LessOrGreater
            | Ordered
            | Unordered
            | PtrEqual
            | PtrNotEqual
            | PtrDiff => self.compare(inst)?,
            op if AtomicOp::of(op).is_some_and(AtomicOp::is_float) => self.atomic_float(inst)?,
            op if AtomicOp::of(op).is_some() => self.atomic(inst)?,
            GenericCastToPtrExplicit => self.generic_cast_explicit(inst)?,
            GenericPtrMemSemantics => self.generic_ptr_mem_semantics(inst)?,
            GroupAsyncCopy => self.group_async_copy(inst)?,
            SubgroupShuffleINTEL
            | SubgroupShuffleDownINTEL
            | SubgroupShuffleUpINTEL
            | SubgroupShuffleXorINTEL => self.intel_shuffle(inst)?,
            SubgroupBlockReadINTEL
            | SubgroupBlockWriteINTEL
            | SubgroupImageBlockReadINTEL
            | SubgroupImageBlockWriteINTEL => self.block_io(inst)?,
            op if is_sub_group_local(op) => self.sub_group_local(inst)?,
            op if ferrocl_frontend::is_pipe_instruction(op) => self.pipe_instruction(inst)?,
            op if op == BuildNDRange || ferrocl_frontend::is_device_enqueue_instruction(op) => {
                self.enqueue_instruction(inst)?
            }
            op if is_group_barrier(op) && op != ControlBarrier => self.group_collective(inst)?,
            // Async copies complete synchronously (group.rs): nothing to wait for.
            GroupWaitEvents => {}
            MemoryBarrier => {
                self.b.ins().fence();
            }
            // Only sub-group barriers reach a lockstep body (kernel.rs `lockstep_lanes`), and
            // its sub-groups run side by side in vector lanes: every member has done what comes
            // before the barrier when any starts what comes after. The group runs on one
            // thread, so memory needs no fence either (as between barrier regions).
            ControlBarrier if self.lockstep_sub_groups => {}
            ControlBarrier => self.control_barrier(inst)?,
            SampledImage
            | ImageRead
            | ImageWrite
            | ImageSampleExplicitLod
            | ImageQuerySizeLod
            | ImageQuerySize
            | ImageQueryFormat
            | ImageQueryOrder
            | ImageQueryLevels => self.image_instruction(inst)?,
            _ => {
                return err(format!(
                    "error: instruction Op{op:?} is not supported by Ferrocl's codegen yet\n"
                ));
            }
        }
        Ok(())
    }

    fn switch(&mut self, inst: Inst<'_>) -> Result<(), BuildError> {
        let switch = inst.switch()?;
        let (default, targets) = (switch.default, switch.targets);
        let selector = self.scalar(switch.selector)?;
        let sel_ty = self.b.func.dfg.value_type(selector);
        let targets = targets
            .into_iter()
            .map(|(lit, target)| (u128::from(lit), target));
        let mut sw = Switch::new();
        let mut trampolines = Vec::new();
        let mut seen = HashSet::new();
        for (lit, target) in targets {
            let key = lit & (u128::MAX >> (128 - sel_ty.bits()));
            if !seen.insert(key) {
                continue;
            }
            let (block, args) = self.edge(target)?;
            let dest = if args.is_empty() {
                block
            } else {
                let t = self.b.create_block();
                trampolines.push((t, block, args));
                t
            };
            sw.set_entry(key, dest);
        }
        let (dblock, dargs) = self.edge(default)?;
        let default_dest = if dargs.is_empty() {
            dblock
        } else {
            let t = self.b.create_block();
            trampolines.push((t, dblock, dargs));
            t
        };
        sw.emit(&mut self.b, selector, default_dest);
        for (t, block, args) in trampolines {
            self.b.switch_to_block(t);
            self.b.ins().jump(block, &args);
        }
        Ok(())
    }

    fn variable(&mut self, inst: Inst<'_>) -> Result<(), BuildError> {
        let id = inst.result_id().unwrap_or(0);
        let ptr_ty = self.result_type(inst)?;
        let Some(Type::Pointer { storage, pointee }) = self.m.ty(ptr_ty).cloned() else {
            return err("error: OpVariable result type is not a pointer\n");
        };
        if storage != StorageClass::Function {
            return err(format!("error: function-scope OpVariable with storage class {storage:?} (env 2.2 allows only Function)\n"));
        }
        let init = match inst.variable()?.initializer {
            Some(id) => Some(self.value(id)?),
            None => None,
        };
        if self.barrier.is_some() {
            // Private variables of a kernel with barriers live in the work-item frame.
            let size = self
                .m
                .size_of(pointee)
                .ok_or_else(|| BuildError::new("error: variable of unsized type\n"))?;
            let align = self.m.align_of(pointee).unwrap_or(16).max(1);
            // Frames are 16-byte aligned: a stricter alignment (vectors of 32 to 128 bytes)
            // gets room to round the address up (`align_up` at each use).
            let offset = self.frame_alloc(size + align.saturating_sub(16), align.min(16))?;
            self.private_bytes += size;
            self.frame().vars.insert(id, VarStorage::Memory);
            self.frame().frame_vars.insert(id, (offset, align));
            if self.options.checked {
                self.private_objects
                    .push(super::checks::PrivateObject::Frame {
                        offset,
                        align,
                        size,
                    });
            }
            if let Some(init) = init {
                let addr = self.value(id)?.scalar()?;
                self.store_val(pointee, addr, &init)?;
            }
        } else if self.frame().promotable.contains(&id) {
            let s = self.shape_of_type(pointee)?;
            let mut tys = Vec::new();
            s.leaf_types(&mut tys);
            let vars: Vec<Variable> = tys.iter().map(|t| self.b.declare_var(*t)).collect();
            if let Some(init) = init {
                self.check_leaf_types(&init.flat(), &tys)?;
                for (var, v) in vars.iter().zip(init.flat()) {
                    self.b.def_var(*var, v);
                }
            }
            self.frame()
                .vars
                .insert(id, VarStorage::Promoted { vars, shape: s });
        } else {
            let size = self
                .m
                .size_of(pointee)
                .ok_or_else(|| BuildError::new("error: variable of unsized type\n"))?;
            let align = self.m.align_of(pointee).unwrap_or(16).max(1);
            let bytes = size.next_multiple_of(align);
            self.private_bytes += bytes;
            if self.private_bytes > crate::PRIVATE_STACK_LIMIT {
                let name = self
                    .m
                    .name(id)
                    .map(|n| format!(" (source name '{n}')"))
                    .unwrap_or_default();
                return err(format!(
                    "error: private memory of a work-item exceeds the device's {} MiB: variable \
                     %{id}{name} of {size} bytes brings it to {} bytes [OpVariable %{id}]\n",
                    crate::PRIVATE_STACK_LIMIT >> 20,
                    self.private_bytes
                ));
            }
            // Cranelift aligns stack slots to at most 16 bytes (the frame's alignment): a
            // stricter alignment (vectors of 32 to 128 bytes, which OpenCL aligns to their
            // size) gets room to round the address up.
            let slot = self.b.create_sized_stack_slot(ir::StackSlotData::new(
                ir::StackSlotKind::ExplicitSlot,
                (size + align.saturating_sub(16)) as u32,
                align.min(16).trailing_zeros() as u8,
            ));
            self.private_slots.push((slot, bytes));
            let addr = self.b.ins().stack_addr(ir::types::I64, slot, 0);
            let addr = self.align_up(addr, align);
            if self.options.checked {
                self.private_objects
                    .push(super::checks::PrivateObject::Slot { slot, align, size });
            }
            self.frame().vars.insert(id, VarStorage::Memory);
            self.frame().values.insert(id, Val::S(addr));
            if let Some(init) = init {
                self.store_val(pointee, addr, &init)?;
            } else if self.options.zero_private {
                self.zero_private(addr, size)?;
            }
        }
        Ok(())
    }

    /// Zeroes `size` bytes of a private variable at `addr` (BuildOptions::zero_private):
    /// stores for the sizes most variables have, which the vectoriser takes as it takes the
    /// kernel's own, and one call for arrays.
    fn zero_private(&mut self, addr: Value, size: u64) -> Result<(), BuildError> {
        const STORES_UP_TO: u64 = 256;
        if size > STORES_UP_TO {
            let zero = self.b.ins().iconst(ir::types::I32, 0);
            let n = self.b.ins().iconst(ir::types::I64, size as i64);
            self.call_entry(EntryPoint::Memset, &[addr, zero, n])?;
            return Ok(());
        }
        let mut flags = ir::MemFlagsData::new();
        flags.set_notrap();
        let mut offset = 0u64;
        for (ty, bytes) in [
            (ir::types::I64, 8),
            (ir::types::I32, 4),
            (ir::types::I16, 2),
            (ir::types::I8, 1),
        ] {
            if size - offset < bytes {
                continue;
            }
            let zero = self.b.ins().iconst(ty, 0);
            while size - offset >= bytes {
                self.b.ins().store(flags, zero, addr, offset as i32);
                offset += bytes;
            }
        }
        Ok(())
    }
}

/// Frame accesses: the frame is private to the work-item and aligned for every cell.
pub(crate) fn frame_flags() -> ir::MemFlagsData {
    ir::MemFlagsData::trusted()
}
