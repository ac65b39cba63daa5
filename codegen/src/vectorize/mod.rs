//! Work-item vectorisation (DESIGN.md "Vectors and SIMD"): the x loop of a barrier-free
//! kernel's work-group function runs four consecutive work-items per iteration in the lanes of
//! 128-bit vectors; the original loop then runs the items left over, one at a time.
//!
//! Kernels with barriers stay scalar. Widening each region between barriers (each region copy
//! of kernel.rs has its own x loop) was built and measured: it gave the same results but ran
//! slower — the benchmark's reduce 98–102 ms against 57–60 scalar, tiled SGEMM 632–653 against
//! 410–417, local histogram unchanged — so it was taken out.
//!
//! It works on the Cranelift IR the translator built, so it covers whatever the translator
//! covers. Values the four work-items share (*uniform*: arguments, the y and z ids, anything
//! computed from them alone, loads from a shared address) stay scalar and are computed once.
//! Values that differ (*varying*: derived from the x local id) take one of four forms:
//! - `Affine`: base + lane × stride, for integers linear in the local id (indices and
//!   addresses), so that accesses to consecutive elements become one vector load or store;
//!   `Guarded` when that holds only if 32-bit lanes do not wrap (`(ulong)(uint)i` indices),
//!   which the access checks at run time;
//! - `Vector`: one f32x4 / i32x4, for 32-bit arithmetic Cranelift lowers on vectors;
//! - `Mask`: the lanes of a comparison as an i32x4 of all-ones / zero;
//! - `Pair`: doubles as two f64x2, for double arithmetic, square roots and the conversions
//!   from and to float (float `rsqrt` is computed in double);
//! - `Lanes`: four scalars — the original instruction cloned per lane, which is always
//!   correct and is the form of everything else (64-bit data, calls, atomics, divisions —
//!   but in wide code those by a shared divisor, division.rs).
//!
//! Loads and stores of whole vector elements (a work-item's `float4`, `uint8`, `int2`…, which
//! the translator scalarises into one access per component) are grouped and done as rows of
//! 16 bytes and transposes (transpose.rs).
//! Accesses through other 32-bit indices (clamps, `min`/`max`, selects) check at run time
//! whether the lanes' elements are consecutive (contiguity.rs).
//!
//! OpenCL lets the work-items of a group interleave in any way between barriers, and the lanes
//! run one program in lockstep, so a load from a uniform address is read once for the four,
//! and per-lane side effects happen in lane order. Private arrays on the stack get one copy per
//! lane (private.rs). Control flow must stay uniform: a branch on a varying condition
//! (work-items diverging) keeps the kernel scalar, as do atomics on local memory (plain
//! read-modify-write sequences, atomic only one work-item at a time), as does anything this
//! module does not recognise.

use std::collections::{HashMap, HashSet};

use cranelift_codegen::ir::{
    self, types, Block, BlockArg, Function, InstBuilder, InstructionData, Value,
};

/// Work-items per vector iteration for Cranelift: the 32-bit lanes of a 128-bit vector (the
/// widest Cranelift lowers on x86-64), and the sub-group size (abi.rs). The wide backend takes
/// as many as the target's vectors hold ([`crate::Target::lanes32`]).
pub(crate) const CRANELIFT_LANES: usize = 4;

/// Work-items per vector iteration for a build with `options`: Cranelift's 4, or for the wide
/// backend one per 32-bit lane of the target's vectors (8 with AVX2, 16 with AVX-512).
/// Sub-groups stay 4 work-items either way (their collectives are barrier points, which keep a
/// kernel out of the vector loop), so a kernel sees the same sub-groups on both backends.
pub(crate) fn lanes_for(options: &crate::BuildOptions) -> usize {
    match options.backend {
        crate::Backend::Cranelift => CRANELIFT_LANES,
        crate::Backend::Wide => match options.target.lanes32() {
            16.. => 16,
            8..=15 => 8,
            _ => CRANELIFT_LANES,
        },
    }
}

/// The x work-item loop of a work-group function, as kernel.rs builds it.
pub(crate) struct ItemLoop {
    /// Entered with the x local id as its only parameter.
    pub(crate) head: Block,
    /// Where each work-item ends: steps the id and loops back to `head` or leaves to `exit`.
    pub(crate) latch: Block,
    /// Where the loop leaves to (no parameters).
    pub(crate) exit: Block,
    /// The work-group's x local size, defined before the loop.
    pub(crate) local_size: Value,
    /// The body's calls of float math that have a vector form (math.rs).
    pub(crate) math: MathCalls,
    /// [`crate::BuildOptions::math_fallback_marker`].
    pub(crate) math_fallback_marker: bool,
    /// Checked mode: every access stays one of its own work-item's, for the bounds checks
    /// added after the vectoriser to name the right one.
    pub(crate) checked: bool,
    /// For a barrier region's x loop (kernel.rs `vectorize_regions`), the work-item's frame:
    /// such a loop is refused unless its body has a loop of its own, none of whose loads and
    /// stores reach the frame, and none of which runs under a mask.
    pub(crate) region_frame: Option<Value>,
}

/// Why a kernel stays scalar.
pub(crate) type Refusal = &'static str;

mod analysis;
mod contiguity;
mod division;
mod gather;
mod guards;
mod math;
mod math_f64;
mod math_relaxed;
pub(crate) mod math_tables;
mod private;
mod region_frames;
mod rewrite;
mod special;
mod transpose;

use analysis::*;
pub(crate) use analysis::{lane_wise, vector_float_condition};
pub(crate) use gather::{
    calls_lane_intrinsics, DIVIDE_BY_CONSTANT, GATHER, LANE_INTRINSICS, MASKED_LOAD, MASKED_STORE,
    SCATTER, TABLE_GATHER,
};
pub(crate) use math::{MathCall, MathCalls, VectorMath};
use region_frames::{addresses_frame, hoist_frame_loads, outweighs_frame_traffic};
use rewrite::*;

/// Adds the vector loop of `lanes` work-items per iteration (4, 8 or 16) in front of `lp`
/// (which stays as the loop over the remaining work-items), or says why not and leaves
/// `func` unchanged.
pub(crate) fn vectorize(func: &mut Function, lp: &ItemLoop, lanes: usize) -> Result<(), Refusal> {
    debug_assert!(matches!(lanes, 4 | 8 | 16));
    let mut work = func.clone();
    vectorize_in_place(&mut work, lp, lanes)?;
    *func = work;
    Ok(())
}

/// Removes the blocks no path from the entry reaches (with their instructions): values they
/// define are used only by blocks as unreachable as they are.
pub(crate) fn remove_unreachable_blocks(func: &mut Function) {
    let Some(entry) = func.layout.entry_block() else {
        return;
    };
    let mut reached = HashSet::from([entry]);
    let mut stack = vec![entry];
    while let Some(block) = stack.pop() {
        for next in successors(func, block) {
            if reached.insert(next) {
                stack.push(next);
            }
        }
    }
    let dead: Vec<Block> = func
        .layout
        .blocks()
        .filter(|b| !reached.contains(b))
        .collect();
    for block in dead {
        while let Some(inst) = func.layout.last_inst(block) {
            func.layout.remove_inst(inst);
        }
        func.layout.remove_block(block);
    }
}

/// Bodies beyond this many instructions stay scalar: the vector loop is a second copy of the
/// body for the JIT to compile (the scalar loop stays for the items left over), so a
/// vectorised kernel builds 2–4× slower. Measured (release, one compile thread, best of 3 on a
/// loaded 2-core VM): the benchmark's build_big (18,307 SPIR-V instructions, a 30.4k-instruction
/// body) 88–132 ms scalar, 233–313 ms vectorised — through the ICD 6.7 → 12.0 ms per 1,000
/// SPIR-V instructions, over the 10 ms target, though its launches ran 9× faster; an unrolled
/// uint4 MD5-style kernel (2,330 SPIR-V instructions, 12.3k body) 37–65 → 138–269 ms, where
/// vector constants shared across the whole body keep long live ranges that regalloc2 spills
/// (its spilled-bundle search is most of the extra time), and launches ran 3.3× faster. The
/// limit lets such kernels vectorise and keeps build_big-sized ones within the target.
const MAX_VECTORISED_INSTRUCTIONS: usize = 16_000;

fn vectorize_in_place(func: &mut Function, lp: &ItemLoop, n: usize) -> Result<(), Refusal> {
    if func.dfg.block_params(lp.head).len() != 1 {
        return Err("the work-item loop head is not as kernel.rs builds it");
    }
    // Checked mode's checks become straight-line markers (guards.rs); `func` is a copy that
    // is dropped on a refusal, so they are put back only on success.
    let guards = guards::take_out(func, lp);
    let body = body_blocks(func, lp);
    let size: usize = body
        .iter()
        .map(|&b| func.layout.block_insts(b).count())
        .sum();
    if size > MAX_VECTORISED_INSTRUCTIONS {
        return Err("too large: a vector copy would double its build time");
    }
    // A work-item that already computes in SIMD registers (the texels of 8-bit colour images,
    // image.rs) would run each vector instruction once per lane: measured 3–4× slower on
    // the benchmark's blur than one work-item at a time.
    let body_has = |pred: &dyn Fn(ir::Inst) -> bool| {
        body.iter().any(|&b| func.layout.block_insts(b).any(pred))
    };
    if body_has(&|i| {
        func.dfg
            .inst_results(i)
            .iter()
            .any(|&r| func.dfg.value_type(r).is_vector())
    }) {
        return Err("the work-item already computes in SIMD vectors");
    }
    if body_has(&|i| match func.dfg.insts[i] {
        InstructionData::Load { flags, .. } => {
            func.dfg.mem_flags[flags].trap_code() == Some(crate::translate::atomics::LOCAL_RMW_TRAP)
        }
        _ => false,
    }) {
        return Err(
            "atomics on local memory (read-modify-write sequences one work-item at a time)",
        );
    }
    private::check_budget(func, &body)?;
    let interleaved = private::interleave_word_slots(func, &body, n);
    let body_set: HashSet<Block> = body.iter().copied().collect();
    // The body is entered only at the head, and only from outside the loop and the latch.
    for block in func.layout.blocks() {
        if body_set.contains(&block) {
            continue;
        }
        for target in successors(func, block) {
            if target != lp.head && body_set.contains(&target) {
                return Err("the work-item loop body is entered from outside");
            }
        }
    }
    for &block in &body {
        if successors(func, block).contains(&lp.head) {
            return Err("the work-item loop head is reached from its body");
        }
    }
    // Which values vary, and which branches the lanes may take differently: the parameters of
    // blocks inside and at the join of such a branch vary (lanes arrive by different edges),
    // which can make more branches vary.
    let loops = find_loops(func, lp, &body);
    let natural = natural_loops(func, &body);
    if let Some(frame) = lp.region_frame {
        if natural.is_empty() && !outweighs_frame_traffic(func, &body, frame) {
            return Err("a barrier region without a loop (its frame traffic outweighs the lanes)");
        }
        hoist_frame_loads(func, &natural, frame);
        let in_loops: HashSet<Block> = natural
            .values()
            .flat_map(|l| l.blocks.iter().copied())
            .collect();
        // Frame accesses in a loop become a gather or scatter per iteration: dpnp's cumsum
        // scan (a private array of eight kept across barriers) measured 76.6 ms widened
        // against 49.4 scalar at 16 lanes.
        if in_loops.iter().any(|&b| {
            func.layout
                .block_insts(b)
                .any(|i| addresses_frame(func, i, frame))
        }) {
            return Err("a barrier region whose loops use the work-item frames");
        }
    }
    let mut forced = HashSet::new();
    let (varying, regions, masked) = loop {
        let varying = varying_values(func, lp, &body, &forced);
        // Loops the lanes may leave at different times: a varying branch inside.
        let mut masked = HashSet::new();
        for (&header, plan) in &loops {
            if loop_diverges(func, header, &natural, &varying) {
                match plan {
                    Ok(_) => {
                        masked.insert(header);
                    }
                    Err(why) => return Err(why),
                }
            }
        }
        // Inside a loop the lanes run differently, every loop runs under the mask too (its
        // iterations are those of the lanes active when it starts).
        let outer: Vec<Block> = masked.iter().copied().collect();
        for h in outer {
            for &inner in natural.keys() {
                if inner != h && natural[&h].blocks.contains(&inner) {
                    if let Err(why) = &loops[&inner] {
                        return Err(why);
                    }
                    masked.insert(inner);
                }
            }
        }
        let regions = plan_regions(func, lp, &body, &varying, &loops, &mut masked)?;
        let before = forced.len();
        for region in regions.values() {
            for &b in region.blocks.iter().chain([&region.join]) {
                if b != lp.latch {
                    forced.extend(func.dfg.block_params(b).iter().copied());
                }
            }
        }
        // Lanes carry their own loop state, and leave with their own values.
        for h in &masked {
            if let Some(Ok(l)) = loops.get(h) {
                for &b in l.blocks.iter().chain([&l.exit]) {
                    if b != lp.latch {
                        forced.extend(func.dfg.block_params(b).iter().copied());
                    }
                }
            }
        }
        if forced.len() == before {
            break (varying, regions, masked);
        }
    };
    // A barrier region's loop that runs under a mask (work-item 0 combining a collective's
    // contributions, `if (lid == 0) for …`) would make every lane go round with it; one whose
    // exits depend on the lane's data (dpnp's in-group merge sort) measured no faster widened
    // (16 lanes, one vector iteration per region: 476–560 against 505–534 ms).
    if lp.region_frame.is_some() && !masked.is_empty() {
        return Err("a barrier region with a loop the work-items run differently");
    }
    let mut loop_plans: HashMap<Block, LoopPlan> = HashMap::new();
    for (h, plan) in loops {
        if masked.contains(&h) {
            loop_plans.insert(h, plan?);
        }
    }
    let mut inside: HashSet<Block> = regions
        .values()
        .flat_map(|r| r.blocks.iter().copied())
        .collect();
    let mut joins: HashSet<Block> = regions.values().map(|r| r.join).collect();
    // Loops outside any branch region: the header's copy enters the masked loop, which ends
    // by jumping to the exit's copy with its parameters merged.
    // (Loops nested in another masked loop are emitted by it.)
    let nested: HashSet<Block> = loop_plans
        .iter()
        .flat_map(|(&h, l)| l.blocks.iter().copied().filter(move |&b| b != h))
        .filter(|b| loop_plans.contains_key(b))
        .collect();
    let top_level: Vec<Block> = loop_plans
        .keys()
        .copied()
        .filter(|h| !inside.contains(h) && !nested.contains(h))
        .collect();
    for h in &top_level {
        let l = &loop_plans[h];
        inside.extend(l.blocks.iter().copied().filter(|b| b != h));
        if l.exit != lp.latch {
            joins.insert(l.exit);
        }
    }

    // The vector loop's blocks: a check before each iteration, the body copies, the latch.
    let check = func.dfg.make_block();
    let check_x = func.dfg.append_block_param(check, types::I64);
    let tail = func.dfg.make_block();
    let tail_x = func.dfg.append_block_param(tail, types::I64);
    let vector_latch = func.dfg.make_block();
    let mut blocks = HashMap::new();
    let mut param_forms = HashMap::new();
    for &block in &body {
        let copy = func.dfg.make_block();
        blocks.insert(block, copy);
        let mut forms = Vec::new();
        if block == lp.head {
            func.dfg.append_block_param(copy, types::I64);
            forms.push(ParamForm::Uniform);
        } else {
            for &p in func.dfg.block_params(block).to_vec().iter() {
                let t = func.dfg.value_type(p);
                let form = if !varying.contains(&p) {
                    func.dfg.append_block_param(copy, t);
                    ParamForm::Uniform
                } else if vectorisable_type(t) {
                    func.dfg
                        .append_block_param(copy, t.by(n as u32).expect("32-bit lanes"));
                    ParamForm::Vector
                } else if pair_type(t, n) {
                    let half = t.by(n as u32 / 2).expect("pair lanes");
                    for _ in 0..2 {
                        func.dfg.append_block_param(copy, half);
                    }
                    ParamForm::Pair
                } else {
                    for _ in 0..n {
                        func.dfg.append_block_param(copy, t);
                    }
                    ParamForm::Lanes
                };
                forms.push(form);
            }
        }
        param_forms.insert(block, forms);
    }
    // Joins of linearised branches get their parameters merged, not passed.
    for &join in &joins {
        if let Some(&copy) = blocks.get(&join) {
            let params = func.dfg.block_params(copy).to_vec();
            for p in params {
                func.dfg.remove_block_param(p);
            }
        }
    }
    for b in [check, tail] {
        func.layout.append_block(b);
    }
    for &block in &body {
        if !inside.contains(&block) {
            func.layout.append_block(blocks[&block]);
        }
    }
    func.layout.append_block(vector_latch);

    let mut v = Vectoriser {
        func,
        varying,
        forms: HashMap::new(),
        blocks,
        param_forms,
        latch: lp.latch,
        vector_latch,
        current: check,
        loops: loop_plans,
        active: None,
        transposes: Default::default(),
        guards: guards.iter().map(|(&marker, g)| (marker, g.fail)).collect(),
        lane_slots: HashMap::new(),
        interleaved,
        math: &lp.math,
        math_fallback_marker: lp.math_fallback_marker,
        // Wide code (8 or 16 lanes are the wide backend's alone) outside checked mode.
        lane_intrinsics: n >= 8 && !lp.checked,
        checked: lp.checked,
        lane_intrinsic_refs: HashMap::new(),
        n,
    };
    // check(x): four more work-items? Then the vector body, else the scalar loop for the rest.
    let head_copy = v.blocks[&lp.head];
    let next = v.cursor().ins().iadd_imm_s(check_x, n as i64);
    let fits = v.cursor().ins().icmp(
        ir::condcodes::IntCC::UnsignedLessThanOrEqual,
        next,
        lp.local_size,
    );
    v.cursor().ins().brif(
        fits,
        head_copy,
        &[BlockArg::Value(check_x)],
        tail,
        &[BlockArg::Value(check_x)],
    );
    v.current = tail;
    let more = v.cursor().ins().icmp(
        ir::condcodes::IntCC::UnsignedLessThan,
        tail_x,
        lp.local_size,
    );
    v.cursor()
        .ins()
        .brif(more, lp.head, &[BlockArg::Value(tail_x)], lp.exit, &[]);

    let x = v.func.dfg.block_params(head_copy)[0];
    let head_param = v.func.dfg.block_params(lp.head)[0];
    v.forms
        .insert(head_param, Form::Affine { base: x, stride: 1 });
    for &block in &body {
        if inside.contains(&block) {
            continue; // emitted with its branch, as straight-line code
        }
        let copy = v.blocks[&block];
        v.current = copy;
        if block != lp.head && !joins.contains(&block) {
            let params = v.func.dfg.block_params(block).to_vec();
            let new_params = v.func.dfg.block_params(copy).to_vec();
            let forms = v.param_forms[&block].clone();
            let mut next = new_params.into_iter();
            for (p, form) in params.into_iter().zip(forms) {
                let f = match form {
                    ParamForm::Uniform => Form::Uniform(next.next().expect("a parameter")),
                    ParamForm::Vector => Form::Vector(next.next().expect("a parameter")),
                    ParamForm::Pair => {
                        let lo = next.next().expect("a parameter");
                        Form::Pair([lo, next.next().expect("a parameter")])
                    }
                    ParamForm::Lanes => {
                        Form::Lanes((0..n).map(|_| next.next().expect("a parameter")).collect())
                    }
                };
                v.forms.insert(p, f);
            }
        }
        if v.loops.contains_key(&block) {
            // A masked loop outside any branch region, entered here by every lane.
            let all = {
                let ones = v.cursor().ins().iconst(types::I32, -1);
                let mt = v.mask_ty();
                v.cursor().ins().splat(mt, ones)
            };
            v.emit_loop(block, all)?;
            let exit = v.loops[&block].exit;
            if exit == lp.latch {
                v.cursor().ins().jump(vector_latch, &[]);
            } else {
                let copy = v.blocks[&exit];
                v.cursor().ins().jump(copy, &[]);
            }
            continue;
        }
        let insts: Vec<ir::Inst> = v.func.layout.block_insts(block).collect();
        match regions.get(&block) {
            Some(region) => {
                let (_, body_insts) = insts.split_last().ok_or("an empty block")?;
                for &inst in body_insts {
                    v.instruction(inst)?;
                }
                v.linearise(block, region)?;
            }
            None => {
                for inst in insts {
                    v.instruction(inst)?;
                }
            }
        }
    }
    v.current = vector_latch;
    let next = v.cursor().ins().iadd_imm_s(x, n as i64);
    v.cursor().ins().jump(check, &[BlockArg::Value(next)]);

    // Enter the vector loop where the scalar loop was entered (not from its latch, nor from
    // the vector loop's own way into it).
    let entries: Vec<ir::Inst> = v
        .func
        .layout
        .blocks()
        .filter(|&b| b != lp.latch && b != tail && !body_set.contains(&b))
        .filter_map(|b| v.func.layout.last_inst(b))
        .collect();
    guards::put_back(v.func, &guards);
    let dfg = &mut v.func.dfg;
    for last in entries {
        for call in
            dfg.insts[last].branch_destination_mut(&mut dfg.jump_tables, &mut dfg.exception_tables)
        {
            if call.block(&dfg.value_lists) == lp.head {
                call.set_block(check, &mut dfg.value_lists);
            }
        }
    }
    Ok(())
}
