//! `OpExtInst OpenCL.std printf`: the work-item bump-allocates a record in the launch's printf
//! buffer with one atomic add and stores the format index and the argument bytes there (layout
//! in abi.rs, through the kernel environment); the runtime formats the records after the launch. Returns 0, or -1 without
//! writing anything when the record does not fit.

use cranelift_codegen::ir::{
    condcodes::IntCC, types, AtomicRmwOp, BlockArg, InstBuilder, MemFlagsData,
};

use super::function::{err, Translator};
use super::values::Val;
use crate::error::BuildError;
use ferrocl_frontend::Inst;

impl Translator<'_, '_, '_> {
    pub(crate) fn printf(&mut self, inst: Inst<'_>) -> Result<(), BuildError> {
        let function = self.frame().function;
        let call = ferrocl_frontend::printf_call(self.m, function, inst)
            .map_err(|rule| BuildError::new(format!("error: {rule}\n")))?;
        // Argument leaves in record order, each checked against the format's element size.
        let mut leaves = Vec::new();
        let stored = call.format.conversions().filter(|c| c.arg.bytes() > 0);
        for (conversion, &id) in stored.zip(&call.stored_operands) {
            let values = self.value(id)?.flat();
            let element = conversion.arg.bytes();
            let fits = values.len() == conversion.count as usize
                && values.iter().all(|&v| self.ty_of(v).bytes() == element);
            if !fits {
                return err(format!(
                    "error: printf argument %{id} does not have the shape '{}' needs\n",
                    conversion.directive
                ));
            }
            leaves.extend(values);
        }
        // At most 65535 operand words of at most 128 bytes each: the length fits its u32.
        let args_bytes = u64::from(call.format.args_bytes());
        let header = self.env.printf_record_header_bytes();
        let record_len = (header + args_bytes).next_multiple_of(8);

        // Kernels with barriers translate a call once per region that reaches it: one entry
        // per distinct format keeps the table small.
        let index = match self.printf_formats.iter().position(|f| *f == call.format) {
            Some(i) => i,
            None => {
                self.printf_formats.push(call.format);
                self.printf_formats.len() - 1
            }
        } as i64;

        let buffer = self.wi.printf_buffer;
        let flags = MemFlagsData::new();
        let len = self.b.ins().iconst(types::I64, record_len as i64);
        let start = self
            .b
            .ins()
            .atomic_rmw(types::I64, flags, AtomicRmwOp::Add, buffer, len);
        let capacity = self.env.printf_capacity(&mut self.b, flags, buffer);
        let end = self.b.ins().iadd(start, len);
        let fits = self
            .b
            .ins()
            .icmp(IntCC::UnsignedLessThanOrEqual, end, capacity);
        let write = self.b.create_block();
        let done = self.b.create_block();
        self.b.append_block_param(done, types::I32);
        let full = self.b.ins().iconst(types::I32, -1);
        self.b
            .ins()
            .brif(fits, write, &[], done, &[BlockArg::Value(full)]);

        self.b.switch_to_block(write);
        let records = self.env.printf_records(&mut self.b, buffer);
        let record = self.b.ins().iadd(records, start);
        let len32 = self.b.ins().iconst(types::I32, record_len as i64);
        let format = self.b.ins().iconst(types::I32, index);
        self.env
            .store_printf_header(&mut self.b, flags, record, len32, format);
        let mut offset = header as i32;
        for v in leaves {
            self.b.ins().store(flags, v, record, offset);
            offset += self.ty_of(v).bytes() as i32;
        }
        let ok = self.b.ins().iconst(types::I32, 0);
        self.b.ins().jump(done, &[BlockArg::Value(ok)]);

        self.b.switch_to_block(done);
        let result = self.b.block_params(done)[0];
        self.define(inst, Val::S(result))
    }
}
