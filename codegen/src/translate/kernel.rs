//! The work-group function around an inlined kernel body.
//!
//! Without barriers: `for z, y, x in local range { body }`.
//!
//! With barriers (DESIGN.md "Barriers are compiled"): every work-item has a frame holding its
//! resume point and the values that must survive a barrier. A *round* runs each work-item from
//! its resume point until it reaches a barrier (it stores the barrier's resume point and leaves)
//! or returns (resume point DONE); rounds repeat while some work-item has not returned.
//! The first round enters at the kernel's entry. Barriers inside loops and branches work because
//! the spec makes them work-group uniform; a divergent barrier (undefined behaviour) cannot hang:
//! each work-item resumes from its own point and DONE items are skipped.
//!
//! Spin loops (loops waiting on an atomic, frontend spin_loops.rs) get a *yield point* on their
//! back edges, a resume point like a barrier's that waits for nobody: such kernels always run
//! these dynamic rounds, where every waiting work-item gets its turn in each round, and each
//! resume point has a gate that holds a work-item until those it waits for have arrived
//! (gates.rs, `PointKind` in function.rs). A barrier-free kernel with a spin loop runs them too.
//!
//! When the ways out of every region met from the entry are known (`StaticSchedule`), the
//! rounds are chained at compile time instead, with no resume state checked per work-item (nor
//! kept, where each region has one way out). Values that are cheap functions of the
//! work-item's ids are recomputed after a barrier rather than kept in the frame (function.rs,
//! `rematerialisable`).

use std::collections::{HashMap, HashSet};

use cranelift_codegen::ir::{self, condcodes::IntCC, types, BlockArg, InstBuilder, MemFlagsData};
use cranelift_frontend::{FunctionBuilder, FunctionBuilderContext, Switch};
use ferrocl_frontend::spirv::{Op, Word};
use ferrocl_frontend::{ArgKind, KernelInfo, Module, Type};

use super::builtins::WorkItem;
use super::function::{
    frame_flags, is_group_barrier, BarrierState, Translator, YieldRounds, RESUME_DONE,
};
use super::static_schedule::{
    dispatch_if_uniform, group_items, item_state, region_exits, ExitShape, RegionExit, StateCheck,
    StaticSchedule,
};
use super::values::Val;
use crate::environment::{GroupField, KernelEnvironment};
use crate::error::BuildError;
use crate::options::BuildOptions;

/// What building one kernel's function found out.
pub(crate) struct KernelShape {
    pub(crate) instruction_count: usize,
    pub(crate) private_bytes: u64,
    pub(crate) frame_size: u64,
    pub(crate) barrier_schedule: crate::BarrierSchedule,
    pub(crate) vectorization: crate::Vectorization,
    /// The function before vectorisation, for the JIT to fall back on.
    pub(crate) scalar_fallback: Option<ir::Function>,
    pub(crate) printf_formats: Vec<ferrocl_frontend::PrintfFormat>,
    /// Checked mode: the kernel's checks (checked.rs).
    pub(crate) check_sites: Vec<crate::checked::CheckSite>,
}

/// Kernel arguments as the prologue loads them.
enum Arg {
    Ready(Val),
    /// By-value aggregate in the argument block; each work-item works on its own copy.
    ByVal {
        addr: ir::Value,
        ty: Word,
    },
}

/// Functions of `m` where a work-item stops for others (`OpControlBarrier`, a collective, a
/// spin loop: frontend `stops_work_items`), directly or through calls.
fn barrier_functions(m: &Module) -> HashSet<Word> {
    let mut with_barrier = HashSet::new();
    loop {
        let before = with_barrier.len();
        for f in m.functions() {
            let Some(id) = f.definition().and_then(|d| d.result_id()) else {
                continue;
            };
            let has = ferrocl_frontend::stops_work_items(m, id)
                || f.instructions().any(|i| {
                    i.opcode() == Op::FunctionCall
                        && i.callee().is_some_and(|c| with_barrier.contains(&c))
                });
            if has {
                with_barrier.insert(id);
            }
        }
        if with_barrier.len() == before {
            return with_barrier;
        }
    }
}

pub(crate) fn build(
    m: &Module,
    kernel: &KernelInfo,
    env: &mut dyn KernelEnvironment,
    options: &BuildOptions,
    func: &mut ir::Function,
    fctx: &mut FunctionBuilderContext,
) -> Result<KernelShape, BuildError> {
    if let Some(size) = kernel.required_sub_group_size {
        if !crate::abi::SUB_GROUP_SIZES.contains(&u64::from(size)) || !options.sub_groups {
            return Err(BuildError::new(format!(
                "error: kernel '{}' requires sub-groups of {size} work-items (execution mode SubgroupSize); {}\n",
                kernel.name,
                if options.sub_groups {
                    format!(
                        "this device's sub-groups have {} work-items",
                        crate::abi::SUB_GROUP_SIZES.map(|n| n.to_string()).join(", ")
                    )
                } else {
                    "sub-groups are turned off on this device (FERROCL_SUBGROUPS=off)".to_owned()
                }
            )));
        }
    }
    let sub_group_size = crate::abi::sub_group_size_of(kernel, env.sub_group_size());
    if kernel.sub_groups_per_work_group.is_some() && !options.sub_groups {
        return Err(BuildError::new(format!(
            "error: kernel '{}' uses execution mode SubgroupsPerWorkgroup, but sub-groups are turned off on this device (FERROCL_SUBGROUPS=off)\n",
            kernel.name
        )));
    }
    let f = m
        .function(kernel.function)
        .ok_or_else(|| BuildError::new("error: kernel function is missing\n"))?;
    let mut b = FunctionBuilder::new(func, fctx);
    let entry = b.create_block();
    b.append_block_params_for_function_params(entry);
    b.switch_to_block(entry);
    let params = b.block_params(entry).to_vec();
    let (args_ptr, group_ptr, local_mem) = (params[0], params[1], params[2]);
    let wi = WorkItem::load(env, &mut b, group_ptr, local_mem);
    let ro = MemFlagsData::trusted().with_readonly().with_can_move();

    let mut pending_args = Vec::new();
    for (index, (param, info)) in f.params().zip(&kernel.args).enumerate() {
        let ty = param.result_type().unwrap_or(0);
        let addr = env.argument_address(&mut b, args_ptr, index);
        pending_args.push(match info.kind {
            ArgKind::Local => {
                let off = b.ins().load(types::I64, ro, addr, 0);
                Arg::Ready(Val::S(b.ins().iadd(local_mem, off)))
            }
            ArgKind::Value { .. } => match m.ty(ty) {
                // A by-value aggregate the kernel only reads is read where the argument block
                // holds it: one address for all work-items (uniform to the vectoriser) instead
                // of a copy per work-item (and, with barriers, per frame). Checked mode knows
                // private copies only.
                Some(Type::Pointer { .. })
                    if !options.checked
                        && param
                            .result_id()
                            .is_some_and(|id| only_loaded_through(f, id)) =>
                {
                    Arg::Ready(Val::S(addr))
                }
                Some(Type::Pointer { pointee, .. }) => Arg::ByVal { addr, ty: *pointee },
                _ => Arg::Ready(Val::C(Vec::new())), // placeholder, loaded below with the translator
            },
            // A sampler value is the address of its record, here the argument's slot; a
            // specialised build knows the record (below).
            ArgKind::Sampler => Arg::Ready(Val::S(addr)),
            _ => Arg::Ready(Val::S(b.ins().load(types::I64, ro, addr, 0))),
        });
    }
    let mut t = Translator {
        m,
        b,
        env,
        options,
        sub_group_size,
        frames: Vec::new(),
        wi,
        instruction_count: 0,
        private_bytes: 0,
        private_slots: Vec::new(),
        barrier: None,
        lockstep_sub_groups: false,
        group_steps: None,
        column_bytes: 0,
        printf_formats: Vec::new(),
        vector_results: Vec::new(),
        vector_math: Default::default(),
        points: Default::default(),
        prologue_values: Default::default(),
        check_sites: Vec::new(),
        call_param_bounds: Vec::new(),
        kernel_arg_bounds: Vec::new(),
        private_objects: Vec::new(),
    };
    // A specialised build knows the formats of image arguments and the records of sampler
    // arguments.
    for (index, arg) in pending_args.iter().enumerate() {
        if let Arg::Ready(Val::S(v)) = arg {
            t.env.bind_argument(index, *v);
        }
    }
    // Checked mode: each pointer argument's object, from the bounds pair the runtime wrote.
    for (index, info) in kernel.args.iter().enumerate() {
        let Some((lo, hi)) = t.env.argument_bounds(&mut t.b, ro, args_ptr, index) else {
            t.kernel_arg_bounds.push(None);
            continue;
        };
        let (lo, hi) = if info.kind == ArgKind::Local {
            (t.b.ins().iadd(local_mem, lo), t.b.ins().iadd(local_mem, hi))
        } else {
            (lo, hi)
        };
        t.prologue_values.extend([lo, hi]);
        let object = match &info.name {
            Some(name) if !name.is_empty() => format!("argument '{name}'"),
            _ => format!("argument {}", t.kernel_arg_bounds.len()),
        };
        t.kernel_arg_bounds
            .push(Some(super::checks::Bounds::one(super::checks::Object {
                lo,
                hi,
                name: object.into(),
                writable: true,
            })));
    }
    // Scalar and vector values are loaded once per work-group.
    for (index, (param, (info, arg))) in f
        .params()
        .zip(kernel.args.iter().zip(pending_args.iter_mut()))
        .enumerate()
    {
        let ty = param.result_type().unwrap_or(0);
        if matches!(info.kind, ArgKind::Value { .. })
            && !matches!(m.ty(ty), Some(Type::Pointer { .. }))
        {
            let addr = t.env.argument_address(&mut t.b, args_ptr, index);
            *arg = Arg::Ready(t.load_val(ty, addr)?);
        }
    }
    for arg in &pending_args {
        if let Arg::Ready(v) = arg {
            t.prologue_values.extend(v.flat());
        }
    }
    let mut item_loop = None;
    // A kernel whose only barriers are sub-group barriers gets a second body before the one
    // cut at its barriers: the plain work-item loop, for the vectoriser to run whole
    // sub-groups per iteration. Launches whose x local size is a whole number of vector
    // iterations take it; the others (and every launch, should the vectoriser refuse) take the
    // cut body.
    let mut lockstep = None;
    // The x loops of the regions of a static barrier schedule, for the vectoriser.
    let mut region_loops = Vec::new();
    if let Some(lanes) = lockstep_lanes(m, kernel, options, t.sub_group_size) {
        let whole = t.b.ins().band_imm_s(t.wi.local_size[0], lanes as i64 - 1);
        let (plain, cut) = (t.b.create_block(), t.b.create_block());
        let dispatch = t.b.ins().brif(whole, cut, &[], plain, &[]);
        t.b.switch_to_block(plain);
        t.lockstep_sub_groups = true;
        item_loop = Some(build_plain(&mut t, kernel, &pending_args)?);
        t.lockstep_sub_groups = false;
        t.b.switch_to_block(cut);
        lockstep = Some(Lockstep { dispatch, cut });
    }
    let (frame_size, barrier_schedule) = if kernel.uses_barrier {
        let (resume_points, size) = expanded_size(m, kernel.function, &mut HashMap::new());
        // Spin loops need fair rounds: every waiting work-item gets its turn in each one (the
        // region loops run one point's work-items per round, which could pick the spinning
        // ones forever).
        // So do named barriers: their gates count the sub-groups waiting on each barrier.
        if !kernel.has_spin_loops
            && !kernel.has_named_barriers
            && (resume_points + 1) * size <= MAX_SPECIALISED_INSTRUCTIONS
        {
            // Regions with several ways out are copied twice (StaticSchedule).
            let twice = 2 * (resume_points + 1) * size <= MAX_SPECIALISED_INSTRUCTIONS;
            let (frame_size, schedule, loops) =
                build_regions(&mut t, kernel, group_ptr, &pending_args, twice)?;
            region_loops = loops;
            (frame_size, schedule)
        } else {
            let frame_size = build_rounds(&mut t, kernel, group_ptr, &pending_args)?;
            (frame_size, crate::BarrierSchedule::Dynamic)
        }
    } else {
        item_loop = Some(build_plain(&mut t, kernel, &pending_args)?);
        (0, crate::BarrierSchedule::None)
    };
    t.b.seal_all_blocks();
    let mut shape = KernelShape {
        instruction_count: t.instruction_count,
        private_bytes: t.private_bytes,
        frame_size,
        barrier_schedule,
        vectorization: crate::Vectorization::Scalar(
            if kernel.has_spin_loops {
                "the kernel has spin loops (work-items yield to each other)"
            } else {
                "the kernel has barriers"
            }
            .into(),
        ),
        scalar_fallback: None,
        printf_formats: std::mem::take(&mut t.printf_formats),
        check_sites: std::mem::take(&mut t.check_sites),
    };
    let frontend_config = t.env.isa().frontend_config();
    t.b.finalize(frontend_config);
    let vector_results = std::mem::take(&mut t.vector_results);
    let private_slots = std::mem::take(&mut t.private_slots);
    let isa = t.env.isa();
    // Loads of private slots that only ever hold one stored value take that value, and
    // slots left without loads go (private_forward.rs): DPC++'s copies of accessors and
    // captures into private structs, which the vectoriser would otherwise copy per lane.
    // Once, here, on the whole function: before packing, vectorising, stop checks and the
    // backends, after the barrier regions (whose frames are not stack slots, so their
    // variables stay as they are).
    let forwarded = crate::private_forward::forward_private_stores(func);
    if forwarded.loads > 0 || !forwarded.emptied.is_empty() {
        // CL_KERNEL_PRIVATE_MEM_SIZE and the debug log count the variables left.
        shape.private_bytes -= private_slots
            .iter()
            .filter(|(slot, _)| forwarded.emptied.contains(slot))
            .map(|&(_, bytes)| bytes)
            .sum::<u64>();
        if cfg!(debug_assertions) && verify_failed(func, isa) {
            panic!("store forwarding in private slots made CLIF the verifier refuses")
        }
    }
    // Roundings to half stay conversion pairs (half_rounding.rs) only for the wide backend
    // rounding to nearest; the explicit-vector packer takes them lowered too.
    let half_pairs = options.backend == crate::Backend::Wide
        && !options.round_to_zero
        && crate::half_rounding::has_pairs(func);
    if !half_pairs {
        lower_half_pairs(func)?;
    }
    // Explicit vectors as SIMD within each work-item (vector_pack.rs), or four work-items per
    // vector (vectorize/). Packing wins where it takes (nearly) all the body's arithmetic:
    // the loop-carried values of `peak_float4` fill 8 registers packed against 32 spread
    // over work-items (18.5 against 31.3 ms), an unrolled `uint4` MD5 runs as fast and builds
    // 3× faster; where it takes part (nbody's `float4` positions beside its scalar
    // arithmetic) the work-items' vectors win (66 against 169 ms). Kernels the work-item
    // vectoriser refuses get whatever packing saves. A kernel that only moves vectors (a
    // float16 copy) keeps the work-items' vectors too: they need no registers either way, and
    // four work-items share each loop iteration (copy_float16 15.0 against 16.8 ms packed).
    let packs = options.vectorize && options.pack_vectors;
    // Explicit vectors pack up to the backend's width: 128 bits for Cranelift, the target's
    // for the wide backend.
    let pack_bits = match options.backend {
        crate::Backend::Cranelift => 128,
        crate::Backend::Wide => options.target.vector_bits,
    };
    let lanes = crate::vectorize::lanes_for(options);
    let mut widened_regions = None;
    if item_loop.is_none()
        && options.vectorize
        && lanes >= MIN_REGION_LANES
        && !region_loops.is_empty()
    {
        match vectorize_regions(func, &region_loops, lanes, isa) {
            Ok(widened) => widened_regions = Some(widened),
            // The debug log says why the regions stay scalar: what to change in the kernel,
            // or in the vectoriser.
            Err(why) => {
                shape.vectorization = crate::Vectorization::Scalar(
                    format!("the kernel has barriers, and its regions stay scalar: {why}").into(),
                )
            }
        }
    }
    let vectorized = || crate::Vectorization::Vectorized {
        lanes: lanes as u32,
    };
    let (vectorization, fallback) = match (item_loop, widened_regions) {
        (_, Some(widened)) => widened,
        // Only the work-item vectoriser runs whole sub-groups in lockstep: on a refusal, and in
        // the fallback should the vector code not compile, every launch takes the cut body.
        (Some(item_loop), None) if lockstep.is_some() => {
            let lockstep = lockstep.as_ref().expect("matched");
            let mut cut_only = func.clone();
            lockstep.cut_only(&mut cut_only);
            match widen(func, &item_loop, lanes, isa) {
                Ok(()) => (vectorized(), Some(cut_only)),
                Err(why) => {
                    *func = cut_only;
                    (
                        crate::Vectorization::Scalar(
                            format!("the kernel has sub-group barriers, and {why}").into(),
                        ),
                        None,
                    )
                }
            }
        }
        (Some(_), None) if !options.vectorize => (
            crate::Vectorization::Scalar("vectorisation is off".into()),
            None,
        ),
        // Each work-item's enqueue is a call into the runtime with its own ndrange, events
        // and block literal in its private memory: kept one work-item at a time.
        (Some(_), None) if kernel.uses_device_enqueue => (
            crate::Vectorization::Scalar("device-side enqueue".into()),
            None,
        ),
        (Some(item_loop), None) => {
            let plan = packs.then(|| crate::vector_pack::plan(func, pack_bits, &vector_results));
            let planned = plan
                .as_ref()
                .map(crate::vector_pack::Plan::packing)
                .unwrap_or_default();
            // Math calls with a vector form (vectorize/math.rs) run as vector code only in
            // the work-item vectoriser; packed, they stay one call per component.
            if planned.packed_arithmetic > 0
                && planned.coverage() >= PACKED_OVER_WORK_ITEMS
                && item_loop.math.is_empty()
            {
                if half_pairs {
                    drop(plan);
                    lower_half_pairs(func)?;
                    apply_packing(crate::vector_pack::plan(func, pack_bits, &vector_results))
                } else {
                    apply_packing(plan.expect("planned"))
                }
            } else {
                drop(plan);
                let scalar = func.clone();
                match widen(func, &item_loop, lanes, isa) {
                    Ok(()) => (vectorized(), Some(scalar)),
                    // A refusal leaves `func` as it was, so it packs as planned.
                    Err(_) if planned.packed > 0 => {
                        lower_half_pairs(func)?;
                        apply_packing(crate::vector_pack::plan(func, pack_bits, &vector_results))
                    }
                    Err(why) => (crate::Vectorization::Scalar(why.into()), None),
                }
            }
        }
        (None, None) if packs => {
            lower_half_pairs(func)?;
            let plan = crate::vector_pack::plan(func, pack_bits, &vector_results);
            if plan.packing().packed > 0 {
                apply_packing(plan)
            } else {
                (shape.vectorization.clone(), None)
            }
        }
        (None, None) => (shape.vectorization.clone(), None),
    };
    shape.vectorization = vectorization;
    shape.scalar_fallback = fallback;
    if options.stop_checks {
        // Every loop head, the work-item loops' too: their counters live in the stack frame,
        // where an unchecked out-of-bounds private write can turn one into an endless loop.
        crate::watchdog::insert_stop_checks(func);
        if let Some(scalar) = shape.scalar_fallback.as_mut() {
            crate::watchdog::insert_stop_checks(scalar);
        }
    }
    Ok(shape)
}

/// The work-item vectoriser on `lp` (see [`crate::vectorize::vectorize`]); debug builds check
/// its output with Cranelift's verifier.
fn widen(
    func: &mut ir::Function,
    lp: &crate::vectorize::ItemLoop,
    lanes: usize,
    isa: &dyn cranelift_codegen::isa::TargetIsa,
) -> Result<(), crate::vectorize::Refusal> {
    crate::vectorize::vectorize(func, lp, lanes)?;
    if cfg!(debug_assertions) && verify_failed(func, isa) {
        panic!("the vectoriser made CLIF the verifier refuses")
    }
    Ok(())
}

/// Work-items per vector iteration from which the regions of barrier kernels are widened: the
/// wide backend's 8 or 16, not Cranelift's 4. On dpnp's `sum` (a strided accumulation loop,
/// then a work-group reduction; AVX-512) the widened region ran 12.4–12.9 ms at 4 lanes and
/// 3.2 ms at 16, against 8 ms scalar.
const MIN_REGION_LANES: usize = 8;

/// Widens the x loops of a static barrier schedule's regions (`loops`) whose work is a loop
/// of their own, `lanes` work-items per iteration; the function as it was is the JIT's
/// fallback. When the vectoriser takes none of them, `func` is unchanged and the error
/// counts its refusals by reason ("3 × …; 1 × …"), most frequent first.
///
/// A value that crosses a barrier goes through the work-item frames lane by lane, a scatter and
/// a gather per value. Where a region's work is a few instructions between two barriers (a
/// tree reduction in local memory) that costs more than the lanes save (measured on the
/// benchmark's `reduce`, 98–102 ms against 57–60 scalar, when every region was widened), so
/// only regions with loops are, and not those whose loops use the frames (a private array
/// kept across a barrier) or run under a mask (work-item 0 combining a collective's
/// contributions): see `ItemLoop::region_frame`.
fn vectorize_regions(
    func: &mut ir::Function,
    loops: &[crate::vectorize::ItemLoop],
    lanes: usize,
    isa: &dyn cranelift_codegen::isa::TargetIsa,
) -> Result<(crate::Vectorization, Option<ir::Function>), String> {
    let scalar = func.clone();
    // Region copies start with the whole kernel's code, unreachable up to their resume point;
    // it would look like a second entry into the loops.
    crate::vectorize::remove_unreachable_blocks(func);
    let mut widened = 0;
    let mut refusals: Vec<(crate::vectorize::Refusal, usize)> = Vec::new();
    for lp in loops {
        match widen(func, lp, lanes, isa) {
            Ok(()) => widened += 1,
            Err(why) => match refusals.iter_mut().find(|(r, _)| *r == why) {
                Some((_, n)) => *n += 1,
                None => refusals.push((why, 1)),
            },
        }
    }
    if widened == 0 {
        *func = scalar;
        // Stable: equal counts keep the order the regions came in.
        refusals.sort_by_key(|(_, n)| std::cmp::Reverse(*n));
        return Err(refusals
            .iter()
            .map(|(why, n)| format!("{n} × {why}"))
            .collect::<Vec<_>>()
            .join("; "));
    }
    Ok((
        crate::Vectorization::Vectorized {
            lanes: lanes as u32,
        },
        Some(scalar),
    ))
}

/// Whether pointer `id` of `f` is only loaded through, directly or through access chains and
/// bitcasts of it: nothing stores through it, copies it, or lets it escape (to a call, a phi, a
/// select, an integer).
fn only_loaded_through(f: ferrocl_frontend::Function<'_>, id: Word) -> bool {
    let mut derived = HashSet::from([id]);
    // Blocks come in an order where a definition precedes its uses (phis aside, which let a
    // pointer escape anyway), so one pass sees each derived pointer before its uses.
    for inst in f.instructions() {
        let uses: Vec<(usize, Word)> = inst
            .id_refs_with_index()
            .filter(|(_, r)| derived.contains(r))
            .collect();
        if uses.is_empty() {
            continue;
        }
        match inst.opcode() {
            Op::Load if uses.len() == 1 && uses[0].0 == 0 => {}
            Op::AccessChain
            | Op::InBoundsAccessChain
            | Op::PtrAccessChain
            | Op::InBoundsPtrAccessChain
            | Op::Bitcast
                if uses.len() == 1 && uses[0].0 == 0 =>
            {
                derived.extend(inst.result_id());
            }
            _ => return false,
        }
    }
    true
}

/// The branch in front of a kernel's two bodies (see [`lockstep_lanes`]).
struct Lockstep {
    /// `brif` to the cut body when the x local size is not a whole number of iterations.
    dispatch: ir::Inst,
    cut: ir::Block,
}

impl Lockstep {
    /// Makes every launch of `func` (a copy of the kernel's function) take the cut body.
    fn cut_only(&self, func: &mut ir::Function) {
        func.replace(self.dispatch).jump(self.cut, &[]);
    }
}

/// Work-items per vector iteration for a lockstep body of `kernel`, when it may have one:
/// every point where its work-items stop for others is an `OpControlBarrier` with Subgroup
/// execution scope (no collective, spin loop or named barrier) and the work-item vectoriser
/// runs whole sub-groups per iteration. Sub-groups are consecutive linear local ids, so when
/// the x local size is a multiple of the iteration's lanes, each iteration holds whole
/// sub-groups, and their lanes run every instruction together: a sub-group barrier is
/// already met. (Sub-group collectives would need cross-lane code; they keep the cut body.)
fn lockstep_lanes(
    m: &Module,
    kernel: &KernelInfo,
    options: &BuildOptions,
    sub_group_size: u64,
) -> Option<usize> {
    if !kernel.uses_barrier
        || kernel.has_spin_loops
        || kernel.has_named_barriers
        || kernel.uses_device_enqueue
        || !options.vectorize
        || !options.sub_groups
    {
        return None;
    }
    let lanes = crate::vectorize::lanes_for(options);
    if sub_group_size == 0 || !(lanes as u64).is_multiple_of(sub_group_size) {
        return None;
    }
    let sub_group_barrier = |inst: ferrocl_frontend::Inst<'_>| {
        inst.opcode() == Op::ControlBarrier
            && inst.control_barrier().is_ok_and(|b| {
                m.global(b.execution).is_some_and(|c| {
                    c.opcode() == Op::Constant
                        && c.constant_bits().ok() == Some(super::subgroup::SCOPE_SUBGROUP)
                })
            })
    };
    let stops_otherwise = |id: Word| {
        m.function(id).is_some_and(|f| {
            f.instructions().any(|inst| {
                ferrocl_frontend::synchronises_work_group(inst.opcode()) && !sub_group_barrier(inst)
            })
        })
    };
    if ferrocl_frontend::reaches(m, kernel.function, stops_otherwise) {
        return None;
    }
    Some(lanes)
}

/// Packs as `plan` says: the kernel's vectors as SIMD, and its unpacked copy as the fallback
/// should the JIT refuse a vector instruction.
fn apply_packing(plan: crate::vector_pack::Plan) -> (crate::Vectorization, Option<ir::Function>) {
    let unpacked = plan.unpacked();
    plan.apply();
    (crate::Vectorization::ExplicitVectors, unpacked)
}

/// The share of a kernel's vectorisable arithmetic (`vector_pack::Packing::coverage`) from
/// which its explicit vectors are packed instead of running four work-items per vector.
const PACKED_OVER_WORK_ITEMS: f64 = 0.9;

/// Creates `for d in 0..local_size[d]` loop heads for z, y, x (every local size is ≥ 1) and
/// leaves the builder in the x head; returns (heads, latches).
fn item_loops(t: &mut Translator) -> ([ir::Block; 3], [ir::Block; 3]) {
    let heads = [0, 1, 2].map(|_| t.b.create_block());
    let latches = [0, 1, 2].map(|_| t.b.create_block());
    for h in heads {
        t.b.append_block_param(h, types::I64);
    }
    let zero = t.b.ins().iconst(types::I64, 0);
    t.b.ins().jump(heads[2], &[BlockArg::Value(zero)]);
    for d in [2, 1] {
        t.b.switch_to_block(heads[d]);
        let z = t.b.ins().iconst(types::I64, 0);
        t.b.ins().jump(heads[d - 1], &[BlockArg::Value(z)]);
    }
    t.b.switch_to_block(heads[0]);
    t.wi.local_id = [0, 1, 2].map(|d| t.b.block_params(heads[d])[0]);
    (heads, latches)
}

/// Emits the latches of the item loops, starting in `latches[0]`; ends by jumping to `after`.
fn close_item_loops(
    t: &mut Translator,
    heads: [ir::Block; 3],
    latches: [ir::Block; 3],
    after: ir::Block,
) {
    for d in 0..3 {
        t.b.switch_to_block(latches[d]);
        let cur = t.b.block_params(heads[d])[0];
        let next = t.b.ins().iadd_imm_s(cur, 1);
        let more =
            t.b.ins()
                .icmp(IntCC::UnsignedLessThan, next, t.wi.local_size[d]);
        let exit = if d == 2 { after } else { latches[d + 1] };
        t.b.ins()
            .brif(more, heads[d], &[BlockArg::Value(next)], exit, &[]);
    }
}

/// Per-work-item private copy of a by-value aggregate at `copy`.
fn copy_by_value(
    t: &mut Translator,
    from: ir::Value,
    ty: Word,
    copy: ir::Value,
) -> Result<(), BuildError> {
    let v = t.load_val(ty, from)?;
    t.store_val(ty, copy, &v)
}

/// The plain work-item loops around one inlined copy of the kernel; returns the x loop for
/// vectorize.rs and the latches of the x, y and z loops.
fn build_plain(
    t: &mut Translator,
    kernel: &KernelInfo,
    args: &[Arg],
) -> Result<crate::vectorize::ItemLoop, BuildError> {
    let (heads, latches) = item_loops(t);
    let mut values = Vec::with_capacity(args.len());
    for a in args {
        values.push(match a {
            Arg::Ready(v) => v.clone(),
            Arg::ByVal { addr, ty } => {
                let size = t.m.size_of(*ty).unwrap_or(0);
                let align = t.m.align_of(*ty).unwrap_or(8);
                let slot = t.b.create_sized_stack_slot(ir::StackSlotData::new(
                    ir::StackSlotKind::ExplicitSlot,
                    size as u32,
                    align.trailing_zeros().min(12) as u8,
                ));
                let copy = t.b.ins().stack_addr(types::I64, slot, 0);
                copy_by_value(t, *addr, *ty, copy)?;
                Val::S(copy)
            }
        });
    }
    t.inline_function(kernel.function, values, Some(latches[0]))?;
    let exit = t.b.create_block();
    close_item_loops(t, heads, latches, exit);
    t.b.switch_to_block(exit);
    t.b.ins().return_(&[]);
    Ok(crate::vectorize::ItemLoop {
        head: heads[0],
        latch: latches[0],
        exit: latches[1],
        local_size: t.wi.local_size[0],
        math: std::mem::take(&mut t.vector_math),
        math_fallback_marker: t.options.math_fallback_marker,
        checked: t.options.checked,
        region_frame: None,
    })
}

/// Budget for specialised region loops: (resume points + 1) × instructions of the kernel with
/// calls expanded. Beyond it the single dispatching loop keeps compile time linear.
const MAX_SPECIALISED_INSTRUCTIONS: usize = 60_000;

/// (barriers, instructions) of function `fid` with every call expanded, as inlining sees it.
fn expanded_size(
    m: &Module,
    fid: Word,
    memo: &mut HashMap<Word, (usize, usize)>,
) -> (usize, usize) {
    if let Some(&r) = memo.get(&fid) {
        return r;
    }
    memo.insert(fid, (0, 0)); // no recursion (validated); guards against it anyway
    let mut total = (0, 0);
    if let Some(f) = m.function(fid) {
        for inst in f.instructions() {
            total.1 += 1;
            match inst.opcode() {
                op if is_group_barrier(op) => total.0 += 1,
                Op::FunctionCall => {
                    if let Some(callee) = inst.callee() {
                        let (b, n) = expanded_size(m, callee, memo);
                        total = (total.0 + b, total.1 + n);
                    }
                }
                _ => {}
            }
        }
    }
    memo.insert(fid, total);
    total
}

/// The group's frames from its group info, and the frame size as a placeholder constant
/// (known only after translation; its instruction is patched then).
fn frames_of(t: &mut Translator, group_ptr: ir::Value) -> (ir::Value, ir::Value, ir::Inst) {
    let flags = MemFlagsData::trusted().with_readonly();
    let frames = t
        .env
        .load_group_field(&mut t.b, flags, group_ptr, GroupField::Frames);
    let frame_size = t.b.ins().iconst(types::I64, 0);
    let inst = t.b.func.dfg.value_def(frame_size).unwrap_inst();
    (frames, frame_size, inst)
}

/// The frame of the work-item at the x loop's head: frames + linear local id × frame size.
fn item_frame(t: &mut Translator, frames: ir::Value, frame_size: ir::Value) -> ir::Value {
    let lid = t.wi.local_id;
    let row = t.b.ins().imul(lid[2], t.wi.local_size[1]);
    let row = t.b.ins().iadd(row, lid[1]);
    let lin = t.b.ins().imul(row, t.wi.local_size[0]);
    let lin = t.b.ins().iadd(lin, lid[0]);
    let offset = t.b.ins().imul(lin, frame_size);
    t.b.ins().iadd(frames, offset)
}

/// Kernels with barriers, one work-item loop per region: the kernel is translated once per
/// resume point (copy k is entered only there; Cranelift drops the unreachable rest), each
/// round picks its region once, and a work-item only checks that it stopped at that point.
/// Translation is deterministic, so every copy lays out the frame identically.
/// Returns the work-item frame size and the schedule chosen.
fn build_regions(
    t: &mut Translator,
    kernel: &KernelInfo,
    group_ptr: ir::Value,
    args: &[Arg],
    several_ways_out_allowed: bool,
) -> Result<(u64, crate::BarrierSchedule, Vec<crate::vectorize::ItemLoop>), BuildError> {
    let (frames, frame_size_value, frame_size_inst) = frames_of(t, group_ptr);
    let pending = t.b.declare_var(types::I8);
    let barrier_functions = barrier_functions(t.m);
    let mut region_loops = Vec::new();

    // By-value arguments get the same frame slots in every copy.
    let mut frame_size = 16u64;
    let mut byval_offsets = Vec::new();
    for a in args {
        if let Arg::ByVal { ty, .. } = a {
            let size = t.m.size_of(*ty).unwrap_or(0);
            let align = t.m.align_of(*ty).unwrap_or(8).clamp(1, 128);
            let off = frame_size.next_multiple_of(align);
            frame_size = off + size;
            byval_offsets.push(off);
        }
    }
    let layout_start = frame_size;

    let round_head = t.b.create_block();
    t.b.append_block_param(round_head, types::I8);
    let first = t.b.ins().iconst(types::I8, 1);
    t.b.ins().jump(round_head, &[BlockArg::Value(first)]);
    t.b.switch_to_block(round_head);
    let is_first_round = t.b.block_params(round_head)[0];
    let no = t.b.ins().iconst(types::I8, 0);
    t.b.def_var(pending, no);
    let region0 = t.b.create_block();
    let first_round = t.b.create_block();
    let unchecked0 = t.b.create_block();
    let scan_head = t.b.create_block();
    t.b.append_block_param(scan_head, types::I64);
    t.b.append_block_param(scan_head, types::I32);
    let zero = t.b.ins().iconst(types::I64, 0);
    let none = t.b.ins().iconst(types::I32, RESUME_DONE);
    t.b.ins().brif(
        is_first_round,
        first_round,
        &[],
        scan_head,
        &[BlockArg::Value(zero), BlockArg::Value(none)],
    );
    // Patched to 1 when the unchecked copies are built (`StaticSchedule`).
    t.b.switch_to_block(first_round);
    let flag = t.b.ins().iconst(types::I8, 0);
    let use_unchecked = t.b.func.dfg.value_def(flag).unwrap_inst();
    t.b.ins().brif(flag, unchecked0, &[], region0, &[]);

    let round_tail = t.b.create_block();
    let exit = t.b.create_block();
    t.group_steps = Some(HashMap::new());
    t.column_bytes = 0;
    let mut region_blocks = vec![region0];
    let mut statics = StaticSchedule::default();
    let mut spirv_instructions = 0;
    // The second pass, for regions with several ways out: a copy of every region without the
    // check of each work-item's resume state, entered from the first round (StaticSchedule).
    let mut unchecked_blocks = Vec::new();
    let mut unchecked_loops = Vec::new();
    let mut k = 0;
    loop {
        let unchecked = !unchecked_blocks.is_empty();
        t.b.switch_to_block(if unchecked {
            unchecked_blocks[k]
        } else {
            region_blocks[k]
        });
        // A work-group reduction that ended the previous region folds here, once.
        let step = t
            .group_steps
            .as_ref()
            .and_then(|s| s.get(&(k as i64)).copied());
        if let Some(step) = step {
            t.group_step(step, frames, frame_size_value);
        }
        let (heads, latches) = item_loops(t);
        let frame_base = item_frame(t, frames, frame_size_value);
        t.barrier = Some(BarrierState {
            frame_base,
            frame_size: layout_start,
            resume_blocks: Vec::new(),
            pending,
            item_done: latches[0],
            barrier_functions: barrier_functions.clone(),
            frames,
            frame_stride: frame_size_value,
            stops: Vec::new(),
            yields: None,
            named_barrier_slot: None,
        });
        let mut values = Vec::with_capacity(args.len());
        let mut byval = byval_offsets.iter();
        let mut copies = Vec::new();
        for a in args {
            values.push(match a {
                Arg::Ready(v) => v.clone(),
                Arg::ByVal { addr, ty } => {
                    let off = *byval.next().expect("one offset per by-value argument");
                    let copy = t.b.ins().iadd_imm_s(frame_base, off as i64);
                    copies.push((*addr, *ty, copy));
                    Val::S(copy)
                }
            });
        }
        let item_returned = t.b.create_block();
        let mut check = None;
        let go = if k == 0 {
            for (addr, ty, copy) in copies {
                copy_by_value(t, addr, ty, copy)?;
            }
            None
        } else if unchecked {
            let go = t.b.create_block();
            t.b.ins().jump(go, &[]);
            let dead = t.b.create_block();
            t.b.switch_to_block(dead);
            Some(go)
        } else {
            // Only work-items that stopped at this resume point run in this round. A round
            // runs the lowest-ranked point any work-item waits at (below), so no member of
            // their sub-group lags behind them (see `PointOrder`): a member seen at a lower
            // rank during the round went round a loop in it and is ahead. (Holding them back
            // for it, as the rounds of `build_rounds` must, would let it pass the next
            // sub-group barrier before they reach this one.)
            let state = t.b.ins().load(types::I32, frame_flags(), frame_base, 0);
            let want = t.point_value(k as i64);
            let here = t.b.ins().icmp(IntCC::Equal, state, want);
            let go = t.b.create_block();
            let branch = t.b.ins().brif(here, go, &[], latches[0], &[]);
            let compare = t.b.func.dfg.value_def(here).unwrap_inst();
            let load = t.b.func.dfg.value_def(state).unwrap_inst();
            check = Some(StateCheck {
                branch,
                go,
                dead: [compare, load],
            });
            // The copy's own entry path is unreachable: it starts in a dead block.
            let dead = t.b.create_block();
            t.b.switch_to_block(dead);
            Some(go)
        };
        let mut start = t.b.current_block();
        t.inline_function(kernel.function, values, Some(item_returned))?;
        let state = t.barrier.take().expect("set above");
        if let Some(go) = go {
            let Some(&resume) = state.resume_blocks.get(k - 1) else {
                return Err(BuildError::new(
                    "internal: region copies disagree on their resume points\n",
                ));
            };
            t.b.switch_to_block(go);
            t.b.ins().jump(resume, &[]);
            start = Some(resume);
        }
        frame_size = frame_size.max(state.frame_size);
        t.b.switch_to_block(item_returned);
        let done = t.b.ins().iconst(types::I32, RESUME_DONE);
        let done_store = t.b.ins().store(frame_flags(), done, frame_base, 0);
        t.b.ins().jump(latches[0], &[]);
        let copy_tail = t.b.create_block();
        let loops = if unchecked {
            &mut unchecked_loops
        } else {
            &mut region_loops
        };
        loops.push(crate::vectorize::ItemLoop {
            head: heads[0],
            latch: latches[0],
            exit: latches[1],
            local_size: t.wi.local_size[0],
            math: Default::default(),
            math_fallback_marker: t.options.math_fallback_marker,
            checked: t.options.checked,
            region_frame: Some(frame_base),
        });
        close_item_loops(t, heads, latches, copy_tail);
        if k == 0 && !unchecked {
            region_blocks.extend(state.resume_blocks.iter().map(|_| t.b.create_block()));
            // Build statistics count the module's instructions, not the copies.
            spirv_instructions = t.instruction_count;
        }
        // Where this region's work-items can end their part of the round.
        let stops: HashMap<ir::Block, i64> = state
            .stops
            .iter()
            .map(|&(block, k, _)| (block, k))
            .collect();
        let exits_of_copy = start
            .and_then(|start| region_exits(t.b.func, start, &stops, item_returned, latches[0]));
        t.b.switch_to_block(copy_tail);
        let mut stores: Vec<ir::Inst> = state.stops.iter().map(|&(_, _, store)| store).collect();
        stores.push(done_store);
        if unchecked {
            let target_of = |e: RegionExit| match e {
                RegionExit::Point(p) => unchecked_blocks[p as usize],
                RegionExit::Returned => exit,
            };
            match exits_of_copy.as_deref() {
                Some(&[one]) => {
                    for store in stores {
                        t.b.func.layout.remove_inst(store);
                    }
                    t.b.ins().jump(target_of(one), &[]);
                }
                Some(several) => {
                    let targets: Vec<(RegionExit, ir::Block)> =
                        several.iter().map(|&e| (e, target_of(e))).collect();
                    dispatch_if_uniform(t, frames, frame_size_value, &targets, round_tail);
                }
                None => {
                    t.b.ins().jump(round_tail, &[]);
                }
            }
        } else {
            let target = match exits_of_copy.as_deref() {
                Some(&[RegionExit::Point(p)]) => region_blocks.get(p as usize).copied(),
                Some(&[RegionExit::Returned]) => Some(exit),
                _ => None,
            };
            if let Some(target) = target {
                // Patched to 1 when the whole kernel follows a static schedule.
                let flag = t.b.ins().iconst(types::I8, 0);
                statics
                    .flags
                    .push(t.b.func.dfg.value_def(flag).unwrap_inst());
                t.b.ins().brif(flag, target, &[], round_tail, &[]);
            } else {
                t.b.ins().jump(round_tail, &[]);
            }
            statics.state_stores.push(stores);
            statics.exits.push(exits_of_copy);
            statics.checks.extend(check);
        }
        k += 1;
        if k == region_blocks.len() {
            let second_pass = !unchecked
                && several_ways_out_allowed
                && !keeps_dynamic_rounds(t)
                && statics.shape() == Some(ExitShape::Several);
            if !second_pass {
                break;
            }
            k = 0;
            unchecked_blocks = (0..region_blocks.len())
                .map(|k| {
                    if k == 0 {
                        unchecked0
                    } else {
                        t.b.create_block()
                    }
                })
                .collect();
        }
    }
    t.group_steps = None;
    if unchecked_blocks.is_empty() {
        // Never entered: the flag in front of it stays 0.
        t.b.switch_to_block(unchecked0);
        t.b.ins().jump(region0, &[]);
    }
    t.instruction_count = spirv_instructions;
    let frame_size = frame_size.next_multiple_of(16);

    // Later rounds run the region of the lowest-ranked point any work-item waits at: its
    // work-items never wait for a lagging member, so every round makes progress. DONE is the
    // largest state as an unsigned number; all DONE ends the group. Without sub-group points
    // every waiting work-item is at the same point (barriers are work-group uniform), so the
    // first one that has not returned names it.
    t.b.switch_to_block(scan_head);
    let i = t.b.block_params(scan_head)[0];
    let lowest = t.b.block_params(scan_head)[1];
    let items = group_items(t);
    let scanned = t.b.ins().icmp(IntCC::UnsignedGreaterThanOrEqual, i, items);
    let probe = t.b.create_block();
    let pick = t.b.create_block();
    t.b.append_block_param(pick, types::I32);
    t.b.ins()
        .brif(scanned, pick, &[BlockArg::Value(lowest)], probe, &[]);
    t.b.switch_to_block(probe);
    let state = item_state(t, frames, frame_size_value, i);
    let next = t.b.ins().iadd_imm_s(i, 1);
    if t.options.checked && !t.points.sub_group_points {
        // Checked mode: a barrier is work-group uniform, so after a round every work-item
        // waits at work-item 0's point, or all returned; anything else is a divergent barrier.
        let is_first = t.b.ins().icmp_imm_s(IntCC::Equal, i, 0);
        let reference = t.b.ins().select(is_first, state, lowest);
        let differs = t.b.ins().icmp(IntCC::NotEqual, state, reference);
        report_divergence(t, differs, i)?;
        t.b.ins().jump(
            scan_head,
            &[BlockArg::Value(next), BlockArg::Value(reference)],
        );
    } else if t.points.sub_group_points {
        let lower = t.b.ins().umin(lowest, state);
        t.b.ins()
            .jump(scan_head, &[BlockArg::Value(next), BlockArg::Value(lower)]);
    } else {
        let lower = t.b.ins().umin(lowest, state);
        let returned = t.b.ins().icmp_imm_s(IntCC::Equal, state, RESUME_DONE);
        t.b.ins().brif(
            returned,
            scan_head,
            &[BlockArg::Value(next), BlockArg::Value(lower)],
            pick,
            &[BlockArg::Value(state)],
        );
    }
    t.b.switch_to_block(pick);
    let lowest = t.b.block_params(pick)[0];
    let ranks = t.point_ranks();
    let mut switch = Switch::new();
    for (k, block) in region_blocks.iter().enumerate().skip(1) {
        let rank = ranks.get(k - 1).copied().ok_or_else(|| {
            BuildError::new("internal: a resume point without a program position\n")
        })?;
        switch.set_entry(rank as u128, *block);
    }
    switch.emit(&mut t.b, lowest, exit);

    // Rounds go on until every work-item returned: a round that stopped nobody can still
    // leave work-items waiting at other points (sub-groups may diverge from each other).
    t.b.switch_to_block(round_tail);
    let not_first = t.b.ins().iconst(types::I8, 0);
    t.b.ins().jump(round_head, &[BlockArg::Value(not_first)]);
    t.b.switch_to_block(exit);
    t.b.ins().return_(&[]);
    t.b.func
        .replace(frame_size_inst)
        .iconst(types::I64, frame_size as i64);
    // Checked mode keeps the resume states: the scan checks them for divergence.
    let schedule = if !unchecked_blocks.is_empty() {
        t.b.func.replace(use_unchecked).iconst(types::I8, 1);
        region_loops = unchecked_loops;
        crate::BarrierSchedule::Static
    } else if !keeps_dynamic_rounds(t) && statics.apply_if_static(t) {
        crate::BarrierSchedule::Static
    } else {
        crate::BarrierSchedule::Dynamic
    };
    t.patch_point_ranks(&ranks)?;
    if schedule != crate::BarrierSchedule::Static {
        region_loops.clear();
    }
    for lp in &mut region_loops {
        lp.math = t.vector_math.clone();
    }
    // The frames block ends with the reductions' columns (group.rs `column_base`): the
    // runtime sizes it as frame size × work-items, the code strides the frames by the rest.
    Ok((frame_size + t.column_bytes, schedule, region_loops))
}

/// Kernels whose rounds stay dynamic whatever their regions' ways out: with sub-group points
/// (members resume by their own states) and in checked mode (its scan reports divergence).
fn keeps_dynamic_rounds(t: &Translator) -> bool {
    t.points.sub_group_points || t.options.checked
}

/// Checked mode: when `differs`, reports a divergent barrier at the work-item of linear local
/// id `item` and leaves the work-group function.
fn report_divergence(
    t: &mut Translator,
    differs: ir::Value,
    item: ir::Value,
) -> Result<(), BuildError> {
    let fail = t.b.create_block();
    let cont = t.b.create_block();
    t.b.set_cold_block(fail);
    t.b.ins().brif(differs, fail, &[], cont, &[]);
    t.b.switch_to_block(fail);
    let ls = t.wi.local_size;
    let x = t.b.ins().urem(item, ls[0]);
    let rest = t.b.ins().udiv(item, ls[0]);
    let y = t.b.ins().urem(rest, ls[1]);
    let z = t.b.ins().udiv(rest, ls[1]);
    let gid = [x, y, z]
        .iter()
        .enumerate()
        .map(|(d, &l)| t.b.ins().iadd(t.wi.base_global_id[d], l))
        .collect::<Vec<_>>();
    let site = t.check_sites.len();
    t.check_sites.push(crate::checked::CheckSite {
        kind: crate::checked::CheckKind::DivergentBarrier,
        size: 0,
        object: "this work-item stopped at a different barrier than work-item 0 of its \
                 group, or one of the two returned"
            .to_owned(),
        candidates: 1,
    });
    let site = t.b.ins().iconst(types::I32, site as i64);
    let none = t.b.ins().iconst(types::I64, 0);
    let group = t.wi.group;
    t.call_entry(
        crate::entry_points::EntryPoint::CheckedFault,
        &[group, site, none, none, none, none, gid[0], gid[1], gid[2]],
    )?;
    t.b.ins().return_(&[]);
    t.b.switch_to_block(cont);
    Ok(())
}

/// Kernels with barriers whose specialised copies would be too large, and kernels with spin
/// loops: one work-item loop that dispatches on each work-item's resume point, so each round
/// resumes every waiting work-item from its own point. With spin loops, each resume point has
/// a gate (gates.rs) and a round that let nobody through makes the next one open every gate.
/// Returns the work-item frame size.
fn build_rounds(
    t: &mut Translator,
    kernel: &KernelInfo,
    group_ptr: ir::Value,
    args: &[Arg],
) -> Result<u64, BuildError> {
    let (frames, frame_size_value, frame_size_inst) = frames_of(t, group_ptr);
    let gated = kernel.has_spin_loops || kernel.has_named_barriers;
    t.points.with_kinds = gated;

    // Round parameters: whether it is the first round, and with spin loops whether the gates
    // are open (the round before let nobody through).
    let round_head = t.b.create_block();
    let mut entry_args = Vec::new();
    t.b.append_block_param(round_head, types::I8);
    entry_args.push(BlockArg::Value(t.b.ins().iconst(types::I8, 1)));
    if gated {
        t.b.append_block_param(round_head, types::I8);
        entry_args.push(BlockArg::Value(t.b.ins().iconst(types::I8, 0)));
    }
    // The lowest rank any work-item waits at when the round starts (kernels with sub-group
    // points and no gates; see the dispatch below).
    t.b.append_block_param(round_head, types::I32);
    entry_args.push(BlockArg::Value(t.b.ins().iconst(types::I32, RESUME_DONE)));
    t.b.ins().jump(round_head, &entry_args);

    t.b.switch_to_block(round_head);
    let is_first_round = t.b.block_params(round_head)[0];
    let lowest = *t.b.block_params(round_head).last().expect("appended above");
    let pending = t.b.declare_var(types::I8);
    let no = t.b.ins().iconst(types::I8, 0);
    t.b.def_var(pending, no);
    let yields = gated.then(|| {
        let progress = t.b.declare_var(types::I8);
        t.b.def_var(progress, no);
        YieldRounds {
            forced: t.b.block_params(round_head)[1],
            progress,
        }
    });
    let (heads, latches) = item_loops(t);

    // In the x head: this work-item's frame.
    let frame_base = item_frame(t, frames, frame_size_value);
    let start = t.b.create_block();
    let dispatch = t.b.create_block();
    t.b.ins().brif(is_first_round, start, &[], dispatch, &[]);

    let item_returned = t.b.create_block();
    t.barrier = Some(BarrierState {
        frame_base,
        frame_size: 16,
        resume_blocks: Vec::new(),
        pending,
        item_done: latches[0],
        barrier_functions: barrier_functions(t.m),
        frames,
        frame_stride: frame_size_value,
        stops: Vec::new(),
        yields,
        named_barrier_slot: None,
    });
    if kernel.has_named_barriers {
        let slot = t.frame_alloc(8, 8)?;
        if let Some(state) = t.barrier.as_mut() {
            state.named_barrier_slot = Some(slot as i32);
        }
    }

    // First round: by-value copies into the frame, then the kernel from its entry.
    t.b.switch_to_block(start);
    let mut values = Vec::with_capacity(args.len());
    for a in args {
        values.push(match a {
            Arg::Ready(v) => v.clone(),
            Arg::ByVal { addr, ty } => {
                let size = t.m.size_of(*ty).unwrap_or(0);
                let align = t.m.align_of(*ty).unwrap_or(8);
                let off = t.frame_alloc(size, align)?;
                let copy = t.b.ins().iadd_imm_s(frame_base, off as i64);
                copy_by_value(t, *addr, *ty, copy)?;
                Val::S(copy)
            }
        });
    }
    t.inline_function(kernel.function, values, Some(item_returned))?;

    t.b.switch_to_block(item_returned);
    let done = t.b.ins().iconst(types::I32, RESUME_DONE);
    t.b.ins().store(frame_flags(), done, frame_base, 0);
    t.b.ins().jump(latches[0], &[]);

    // Later rounds: continue where this work-item stopped (DONE and unknown points: skip).
    // With sub-group points, only the work-items waiting at the lowest-ranked point when the
    // round started go on, as in `build_regions`: members that skipped a branch then wait
    // for those that took it (see `PointOrder`), and no work-item passes a sub-group barrier
    // in a loop before its members reach it (comparing with members' states during the
    // round would take one that went round the loop for one lagging behind). With spin loops
    // the gate behind each resume point decides instead.
    t.b.switch_to_block(dispatch);
    let resume = t.b.ins().load(types::I32, frame_flags(), frame_base, 0);
    let lowest_first = t.points.sub_group_points && !gated;
    if lowest_first {
        let later = t.b.ins().icmp(IntCC::NotEqual, resume, lowest);
        // A returned work-item has nothing to wait for.
        let live = t.b.ins().icmp_imm_s(IntCC::NotEqual, resume, RESUME_DONE);
        let lagging = t.b.ins().band(later, live);
        let wait = t.b.create_block();
        let go = t.b.create_block();
        t.b.ins().brif(lagging, wait, &[], go, &[]);
        t.b.switch_to_block(wait);
        let yes = t.b.ins().iconst(types::I8, 1);
        t.b.def_var(pending, yes);
        t.b.ins().jump(latches[0], &[]);
        t.b.switch_to_block(go);
    }
    let ranks = t.point_ranks();
    let mut switch = Switch::new();
    let state = t.barrier.as_ref().expect("set above");
    for (k, block) in state.resume_blocks.iter().enumerate() {
        switch.set_entry(ranks[k] as u128, *block);
    }
    let frame_size = state.frame_size.next_multiple_of(16);
    switch.emit(&mut t.b, resume, latches[0]);

    let round_end = t.b.create_block();
    close_item_loops(t, heads, latches, round_end);
    t.b.switch_to_block(round_end);
    let again = t.b.use_var(pending);
    let mut next_args = vec![BlockArg::Value(t.b.ins().iconst(types::I8, 0))];
    if let Some(rounds) = yields {
        // Nobody passed a gate (and this was not the first round): open them all next round.
        let moved = t.b.use_var(rounds.progress);
        let moved = t.b.ins().bor(moved, is_first_round);
        let stuck = t.b.ins().icmp_imm_s(IntCC::Equal, moved, 0);
        next_args.push(BlockArg::Value(stuck));
    }
    next_args.push(BlockArg::Value(if lowest_first {
        lowest_waiting(t, frames, frame_size_value)
    } else {
        t.b.ins().iconst(types::I32, RESUME_DONE)
    }));
    let exit = t.b.create_block();
    t.b.ins().brif(again, round_head, &next_args, exit, &[]);
    t.b.switch_to_block(exit);
    t.b.ins().return_(&[]);

    t.b.func
        .replace(frame_size_inst)
        .iconst(types::I64, frame_size as i64);
    t.patch_point_ranks(&ranks)?;
    t.barrier = None;
    Ok(frame_size)
}

/// The lowest state (the rank of a resume point, DONE being the largest) in the group's
/// frames, `stride` apart.
fn lowest_waiting(t: &mut Translator, frames: ir::Value, stride: ir::Value) -> ir::Value {
    let head = t.b.create_block();
    t.b.append_block_param(head, types::I64);
    t.b.append_block_param(head, types::I32);
    let probe = t.b.create_block();
    let done = t.b.create_block();
    t.b.append_block_param(done, types::I32);
    let zero = t.b.ins().iconst(types::I64, 0);
    let none = t.b.ins().iconst(types::I32, RESUME_DONE);
    t.b.ins()
        .jump(head, &[BlockArg::Value(zero), BlockArg::Value(none)]);
    t.b.switch_to_block(head);
    let (i, lowest) = (t.b.block_params(head)[0], t.b.block_params(head)[1]);
    let items = group_items(t);
    let scanned = t.b.ins().icmp(IntCC::UnsignedGreaterThanOrEqual, i, items);
    t.b.ins()
        .brif(scanned, done, &[BlockArg::Value(lowest)], probe, &[]);
    t.b.switch_to_block(probe);
    let state = item_state(t, frames, stride, i);
    let lower = t.b.ins().umin(lowest, state);
    let next = t.b.ins().iadd_imm_s(i, 1);
    t.b.ins()
        .jump(head, &[BlockArg::Value(next), BlockArg::Value(lower)]);
    t.b.switch_to_block(done);
    t.b.block_params(done)[0]
}

/// Rounding pairs become integer code (half_rounding.rs).
fn lower_half_pairs(func: &mut ir::Function) -> Result<(), BuildError> {
    crate::half_rounding::lower_pairs(func).map_err(|e| BuildError::new(format!("{e}\n")))
}

/// Debug builds check the vectoriser's output with Cranelift's verifier: the wide backend
/// takes it as it is, and Cranelift's own check would only turn a mistake into a quiet scalar
/// fallback. The vectoriser's rounding pairs on vectors are not CLIF (its `fdemote` and
/// `fpromote` are scalar): they are the wide backend's, Cranelift never gets them
/// (half_rounding.rs), and the verifier sees them as `fabs`.
fn verify_failed(func: &ir::Function, isa: &dyn cranelift_codegen::isa::TargetIsa) -> bool {
    let func = crate::half_rounding::verifiable(func);
    let func = func.as_ref();
    match cranelift_codegen::verify_function(func, isa) {
        Ok(()) => false,
        Err(errors) => {
            eprintln!(
                "{}",
                cranelift_codegen::print_errors::pretty_verifier_error(func, None, errors)
            );
            true
        }
    }
}
