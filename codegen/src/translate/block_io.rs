//! Sub-group block reads and writes of SPV_INTEL_subgroups (cl_intel_subgroups'
//! `intel_sub_group_block_read*`/`_write*`): every work-item moves its own components, so
//! nothing is exchanged. Component k of a work-item is element `lane + k * max` of the buffer
//! (`max` the largest sub-group size of the dispatch, `SubgroupMaxSize`), or, for a 2D image,
//! the integer at byte `x + lane * size` of row `y + k`, raw, without format conversion.
//!
//! Image rows are bounds-checked in units of the data's integers, as the extension describes
//! it: a read past the row's end reads the last whole integer of the row and rows clamp to the
//! image, a write outside the image is dropped. No coordinate reaches memory beyond the image
//! (rows narrower than one integer are read byte by byte, each byte clamped).

use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::{types, BlockArg, InstBuilder, MemFlagsData, Value};
use ferrocl_frontend::spirv::{Op, Word};
use ferrocl_frontend::{Inst, Type};

use super::function::{err, inst_desc, required, Translator};
use super::values::{shape, Val};
use crate::checked::CheckKind;
use crate::environment::ImageField;
use crate::error::BuildError;

impl Translator<'_, '_, '_> {
    /// `OpSubgroupBlockReadINTEL`, `OpSubgroupBlockWriteINTEL` and their image forms.
    pub(crate) fn block_io(&mut self, inst: Inst<'_>) -> Result<(), BuildError> {
        let op = inst.opcode();
        if !self.options.sub_groups {
            return err(format!(
                "error: Op{op:?} needs sub-groups, which are turned off on this device (FERROCL_SUBGROUPS=off)\n"
            ));
        }
        let write = matches!(
            op,
            Op::SubgroupBlockWriteINTEL | Op::SubgroupImageBlockWriteINTEL
        );
        let image = matches!(
            op,
            Op::SubgroupImageBlockReadINTEL | Op::SubgroupImageBlockWriteINTEL
        );
        let io = inst.block_io()?;
        // The data's type: the result's for reads, the data operand's for writes.
        let data_ty = if let Some(data) = io.data {
            self.m.type_of(data).ok_or_else(|| {
                BuildError::new(format!("error: {}: no data type\n", inst_desc(inst)))
            })?
        } else {
            self.result_type(inst)?
        };
        let (elem, count) = match self.m.ty(data_ty) {
            Some(Type::Vector { elem, count }) => (*elem, *count as usize),
            _ => (data_ty, 1),
        };
        let bytes = match self.m.ty(elem) {
            Some(Type::Int { width }) => i64::from(*width / 8),
            _ => {
                return err(format!(
                    "error: {}: block data must be integers\n",
                    inst_desc(inst)
                ))
            }
        };
        let lane = self.lane().lane;
        let enqueued = {
            let s = self.wi.enqueued_local_size;
            let n = self.b.ins().imul(s[0], s[1]);
            self.b.ins().imul(n, s[2])
        };
        let size = self.b.ins().iconst(types::I64, self.sub_group_size as i64);
        let max = self.b.ins().umin(enqueued, size);
        let data = match io.data {
            Some(data) => self.value(data)?.flat(),
            None => Vec::new(),
        };
        if image {
            return self.image_block_io(inst, elem, count, bytes, lane, &data);
        }
        let ptr_id = io.pointer;
        let base = self.scalar(ptr_id)?;
        let mut out = Vec::with_capacity(count);
        for k in 0..count {
            // Element lane + k * max.
            let stride = self.b.ins().imul_imm_s(max, k as i64);
            let index = self.b.ins().iadd(lane, stride);
            let offset = self.b.ins().imul_imm_s(index, bytes);
            let addr = self.b.ins().iadd(base, offset);
            let kind = if write {
                CheckKind::Write
            } else {
                CheckKind::Read
            };
            self.check_access(ptr_id, addr, bytes as u64, kind)?;
            match data.get(k) {
                Some(&v) => self.store_val(elem, addr, &Val::S(v))?,
                None => out.push(self.load_val(elem, addr)?.scalar()?),
            }
        }
        if write {
            return Ok(());
        }
        let v = shape(self.m, data_ty)?.assemble(&mut out.into_iter())?;
        self.define(inst, v)
    }

    /// The image forms: the image (its descriptor's address) and the (x bytes, y row)
    /// coordinate.
    fn image_block_io(
        &mut self,
        inst: Inst<'_>,
        elem: Word,
        count: usize,
        bytes: i64,
        lane: Value,
        data: &[Value],
    ) -> Result<(), BuildError> {
        let io = inst.block_io()?;
        let image = self.scalar(io.pointer)?;
        let coord = self
            .value(required(inst, io.coordinate, "coordinate")?)?
            .flat();
        let [x, y] = coord[..] else {
            return err(format!(
                "error: {}: the coordinate must be two integers\n",
                inst_desc(inst)
            ));
        };
        let t = super::values::scalar_ir_type(self.m, elem)?;
        let f = MemFlagsData::trusted().with_readonly();
        let field = |s: &mut Self, at: ImageField| {
            let v = s.env.load_image_field(&mut s.b, f, image, at);
            s.b.ins().uextend(types::I64, v)
        };
        let pixels = self
            .env
            .load_image_field(&mut self.b, f, image, ImageField::Data);
        let width = field(self, ImageField::Width);
        let height = field(self, ImageField::Height);
        let element_size = field(self, ImageField::ElementSize);
        let row_pitch = self
            .env
            .load_image_field(&mut self.b, f, image, ImageField::RowPitch);
        let row_bytes = self.b.ins().imul(width, element_size);
        let x = self.resize_int(x, types::I64, true);
        let y = self.resize_int(y, types::I64, true);
        let step = self.b.ins().imul_imm_s(lane, bytes);
        let bx = self.b.ins().iadd(x, step);
        let zero = self.b.ins().iconst(types::I64, 0);
        let flags = MemFlagsData::new();
        let mut out = Vec::with_capacity(count);
        for k in 0..count {
            let row = self.b.ins().iadd_imm_s(y, k as i64);
            if let Some(&v) = data.get(k) {
                // Writes outside the image are dropped.
                let left = self.b.ins().icmp_imm_s(IntCC::SignedLessThan, bx, 0);
                let end = self.b.ins().iadd_imm_s(bx, bytes);
                let right = self.b.ins().icmp(IntCC::SignedGreaterThan, end, row_bytes);
                let above = self.b.ins().icmp_imm_s(IntCC::SignedLessThan, row, 0);
                let below = self
                    .b
                    .ins()
                    .icmp(IntCC::SignedGreaterThanOrEqual, row, height);
                let out_x = self.b.ins().bor(left, right);
                let out_y = self.b.ins().bor(above, below);
                let outside = self.b.ins().bor(out_x, out_y);
                let store = self.b.create_block();
                let next = self.b.create_block();
                self.b.ins().brif(outside, next, &[], store, &[]);
                self.b.switch_to_block(store);
                let line = self.b.ins().imul(row, row_pitch);
                let addr = self.b.ins().iadd(pixels, line);
                let addr = self.b.ins().iadd(addr, bx);
                self.b.ins().store(flags, v, addr, 0);
                self.b.ins().jump(next, &[]);
                self.b.switch_to_block(next);
                continue;
            }
            // Reads clamp the row to the image and the integer to the row.
            let last_row = self.b.ins().iadd_imm_s(height, -1);
            let row = self.b.ins().smax(row, zero);
            let row = self.b.ins().smin(row, last_row);
            let line = self.b.ins().imul(row, row_pitch);
            let line = self.b.ins().iadd(pixels, line);
            let last_start = self.b.ins().iadd_imm_s(row_bytes, -bytes);
            let fits = self
                .b
                .ins()
                .icmp_imm_s(IntCC::SignedGreaterThanOrEqual, last_start, 0);
            let one_load = self.b.create_block();
            let by_byte = self.b.create_block();
            let done = self.b.create_block();
            self.b.append_block_param(done, t);
            self.b.ins().brif(fits, one_load, &[], by_byte, &[]);

            self.b.switch_to_block(one_load);
            let start = self.b.ins().smax(bx, zero);
            let start = self.b.ins().smin(start, last_start);
            let addr = self.b.ins().iadd(line, start);
            let v = self.b.ins().load(t, flags, addr, 0);
            self.b.ins().jump(done, &[BlockArg::Value(v)]);

            // A row narrower than one integer: each byte clamped into the row on its own.
            self.b.switch_to_block(by_byte);
            let last_byte = self.b.ins().iadd_imm_s(row_bytes, -1);
            let mut v = self.b.ins().iconst(types::I64, 0);
            for j in 0..bytes {
                let at = self.b.ins().iadd_imm_s(bx, j);
                let at = self.b.ins().smax(at, zero);
                let at = self.b.ins().smin(at, last_byte);
                let addr = self.b.ins().iadd(line, at);
                let byte = self.b.ins().uload8(types::I64, flags, addr, 0);
                let byte = self.b.ins().ishl_imm_s(byte, 8 * j);
                v = self.b.ins().bor(v, byte);
            }
            let v = if t == types::I64 {
                v
            } else {
                self.b.ins().ireduce(t, v)
            };
            self.b.ins().jump(done, &[BlockArg::Value(v)]);

            self.b.switch_to_block(done);
            out.push(self.b.block_params(done)[0]);
        }
        if !data.is_empty() {
            return Ok(());
        }
        let ty = self.result_type(inst)?;
        let v = shape(self.m, ty)?.assemble(&mut out.into_iter())?;
        self.define(inst, v)
    }
}
