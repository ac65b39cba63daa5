//! Control-flow facts about CLIF functions that several passes share.

use cranelift_codegen::ir::{Block, Function};

/// The blocks the terminator of `block` branches to, in the order the branch names them.
pub(crate) fn successors(func: &Function, block: Block) -> Vec<Block> {
    let Some(last) = func.layout.last_inst(block) else {
        return Vec::new();
    };
    func.dfg.insts[last]
        .branch_destination(&func.dfg.jump_tables, &func.dfg.exception_tables)
        .iter()
        .map(|call| call.block(&func.dfg.value_lists))
        .collect()
}
