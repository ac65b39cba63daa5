//! The kernel watchdog's part in JIT code (`BuildOptions::stop_checks`, which the runtime sets
//! from `FERROCL_KERNEL_TIMEOUT`): a *stop check* at the head of every loop of a finished
//! work-group function. The runtime owns the deadline and sets the launch's stop word
//! ([`GroupInfo::stop`]); JIT code only reads it.
//!
//! The checks are inserted into the final Cranelift IR, after vectorisation, instead of while
//! translating: one pass then covers every loop there is — the kernel's own (SPIR-V) loops,
//! the work-item loops of the work-group function, the rounds of kernels with barriers and spin
//! loops, and the loops the vectoriser rewrote — and the vectoriser never sees a load it cannot
//! place (it refuses loads from unknown addresses). A check leaves the whole work-group
//! function: every work-item of the group runs inside that one call, so no work-item can be
//! left waiting at a barrier or a collective for one that stopped.
//!
//! Every cycle of the control-flow graph contains a retreating edge of a depth-first search
//! (an edge to a block still on the search's stack), so checking at the target of each such
//! edge bounds the work between two checks, also in irreducible control flow. This is
//! wasmtime's epoch interruption without the epoch: one word per launch, read per iteration.
//!
//! The work-item loops are checked too, although each runs at most once per work-item: their
//! counters live in the work-group function's stack frame, and an out-of-bounds private write
//! of an unchecked kernel can overwrite one and turn the loop into an endless one (seen with a
//! write 40 ints past a 4-int array). Every loop pays one load and branch per iteration; a
//! work-item loop's is small beside a work-item's body.

use std::collections::HashSet;

use cranelift_codegen::cursor::{Cursor, FuncCursor};
use cranelift_codegen::ir::{self, types, InstBuilder, MemFlagsData};

use crate::abi::GroupInfo;

/// Inserts a stop check at every loop head of `func`, a work-group function (its second
/// parameter is the `GroupInfo` pointer). A function without loops is left unchanged.
pub(crate) fn insert_stop_checks(func: &mut ir::Function) {
    let Some(entry) = func.layout.entry_block() else {
        return;
    };
    let heads = loop_heads(func, entry);
    if heads.is_empty() {
        return;
    }
    let group_ptr = func.dfg.block_params(entry)[1];
    let mut pos = FuncCursor::new(func).at_first_insertion_point(entry);
    // GroupInfo does not change during the call: the address is loaded once.
    let info_flags = MemFlagsData::trusted().with_readonly().with_can_move();
    let stop_addr = pos
        .ins()
        .load(types::I64, info_flags, group_ptr, GroupInfo::STOP);
    let bail = pos.func.dfg.make_block();
    pos.func.layout.append_block(bail);
    pos.func.layout.set_cold(bail);
    pos.goto_bottom(bail);
    pos.ins().return_(&[]);
    for head in heads {
        // Cranelift's verifier forbids branches to the entry block, so no head is the entry
        // block and the stop address (defined there) dominates every head.
        let Some(first) = pos.func.layout.first_inst(head) else {
            continue;
        };
        let body = pos.func.dfg.make_block();
        pos.func.layout.split_block(body, first);
        pos.goto_bottom(head);
        // An atomic load: it is never merged with an earlier load of the same word (a plain
        // load in an inner loop could be replaced by the outer loop's, which would never see
        // the word change), and on x86-64 it is an ordinary `mov`.
        let stop = pos
            .ins()
            .atomic_load(types::I32, MemFlagsData::trusted(), stop_addr);
        pos.ins().brif(stop, bail, &[], body, &[]);
    }
}

/// The targets of the retreating edges of a depth-first search from `entry`, in layout order.
fn loop_heads(func: &ir::Function, entry: ir::Block) -> Vec<ir::Block> {
    let successors = |block| crate::cfg::successors(func, block);
    let mut visited = HashSet::new();
    let mut on_stack = HashSet::new();
    let mut heads = HashSet::new();
    // (block, its successors, how many of them were explored): an explicit stack, since
    // kernels can nest loops deeper than a thread's stack would allow recursion for.
    let mut stack = vec![(entry, successors(entry), 0usize)];
    visited.insert(entry);
    on_stack.insert(entry);
    while let Some((block, succs, next)) = stack.last_mut() {
        let Some(&succ) = succs.get(*next) else {
            on_stack.remove(block);
            stack.pop();
            continue;
        };
        *next += 1;
        if on_stack.contains(&succ) {
            heads.insert(succ);
        } else if visited.insert(succ) {
            on_stack.insert(succ);
            stack.push((succ, successors(succ), 0));
        }
    }
    func.layout.blocks().filter(|b| heads.contains(b)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use cranelift_codegen::ir::{condcodes::IntCC, AbiParam, BlockArg, Opcode, UserFuncName};
    use cranelift_codegen::isa::CallConv;
    use cranelift_codegen::settings;
    use cranelift_frontend::{FunctionBuilder, FunctionBuilderContext};

    use crate::backend::llvm_ir::tests::frontend_config;

    /// A work-group-shaped function: `for i in 0..n { for j in 0..n {} }` and, with
    /// `irreducible`, a two-entry cycle after it.
    fn nested_loops(irreducible: bool) -> ir::Function {
        let mut sig = ir::Signature::new(CallConv::SystemV);
        sig.params.extend([AbiParam::new(types::I64); 3]);
        let mut func = ir::Function::with_name_signature(UserFuncName::user(0, 0), sig);
        let mut fctx = FunctionBuilderContext::new();
        let mut b = FunctionBuilder::new(&mut func, &mut fctx);
        let [entry, outer, inner, latch, after, a, c, exit] = [(); 8].map(|_| b.create_block());
        b.append_block_params_for_function_params(entry);
        b.append_block_param(outer, types::I64);
        b.append_block_param(inner, types::I64);
        b.switch_to_block(entry);
        let n = b.block_params(entry)[0];
        let zero = b.ins().iconst(types::I64, 0);
        b.ins().jump(outer, &[BlockArg::Value(zero)]);
        b.switch_to_block(outer);
        let i = b.block_params(outer)[0];
        b.ins().jump(inner, &[BlockArg::Value(zero)]);
        b.switch_to_block(inner);
        let j = b.block_params(inner)[0];
        let j1 = b.ins().iadd_imm_s(j, 1);
        let more = b.ins().icmp(IntCC::UnsignedLessThan, j1, n);
        b.ins()
            .brif(more, inner, &[BlockArg::Value(j1)], latch, &[]);
        b.switch_to_block(latch);
        let i1 = b.ins().iadd_imm_s(i, 1);
        let more = b.ins().icmp(IntCC::UnsignedLessThan, i1, n);
        b.ins()
            .brif(more, outer, &[BlockArg::Value(i1)], after, &[]);
        b.switch_to_block(after);
        if irreducible {
            let odd = b.ins().band_imm_u(n, 1);
            b.ins().brif(odd, a, &[], c, &[]);
            b.switch_to_block(a);
            b.ins().brif(n, c, &[], exit, &[]);
            b.switch_to_block(c);
            b.ins().brif(n, a, &[], exit, &[]);
        } else {
            b.ins().jump(exit, &[]);
        }
        b.switch_to_block(exit);
        b.ins().return_(&[]);
        b.seal_all_blocks();
        b.finalize(frontend_config());
        func
    }

    fn stop_checks(func: &ir::Function) -> usize {
        func.layout
            .blocks()
            .flat_map(|b| func.layout.block_insts(b))
            .filter(|&i| func.dfg.insts[i].opcode() == Opcode::AtomicLoad)
            .count()
    }

    #[test]
    fn every_loop_gets_one_check_and_the_function_verifies() {
        for (irreducible, loops) in [(false, 2), (true, 3)] {
            let mut func = nested_loops(irreducible);
            insert_stop_checks(&mut func);
            let flags = settings::Flags::new(settings::builder());
            cranelift_codegen::verify_function(&func, &flags)
                .unwrap_or_else(|e| panic!("{e}\n{}", func.display()));
            assert_eq!(stop_checks(&func), loops, "{}", func.display());
        }
    }

    #[test]
    fn a_function_without_loops_is_unchanged() {
        let mut sig = ir::Signature::new(CallConv::SystemV);
        sig.params.extend([AbiParam::new(types::I64); 3]);
        let mut func = ir::Function::with_name_signature(UserFuncName::user(0, 0), sig);
        let mut fctx = FunctionBuilderContext::new();
        let mut b = FunctionBuilder::new(&mut func, &mut fctx);
        let entry = b.create_block();
        b.append_block_params_for_function_params(entry);
        b.switch_to_block(entry);
        b.ins().return_(&[]);
        b.seal_all_blocks();
        b.finalize(frontend_config());
        let before = func.display().to_string();
        insert_stop_checks(&mut func);
        assert_eq!(func.display().to_string(), before);
    }
}
