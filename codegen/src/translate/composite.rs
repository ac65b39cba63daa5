//! Composite opcodes over scalarised values: construct, extract, insert, shuffles, dynamic
//! vector indexing.

use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::InstBuilder;
use ferrocl_frontend::spirv::Op;
use ferrocl_frontend::Inst;

use super::function::{err, Translator};
use super::values::Val;
use crate::program::BuildError;

fn extract(v: &Val, path: &[u32]) -> Result<Val, BuildError> {
    match path.split_first() {
        None => Ok(v.clone()),
        Some((&i, rest)) => {
            let c = v.children()?.get(i as usize).ok_or_else(|| {
                BuildError::new(format!("error: composite index {i} out of range\n"))
            })?;
            extract(c, rest)
        }
    }
}

fn insert(v: &Val, path: &[u32], new: Val) -> Result<Val, BuildError> {
    match path.split_first() {
        None => Ok(new),
        Some((&i, rest)) => {
            let mut children = v.children()?.to_vec();
            let slot = children.get_mut(i as usize).ok_or_else(|| {
                BuildError::new(format!("error: composite index {i} out of range\n"))
            })?;
            *slot = insert(slot, rest, new)?;
            Ok(Val::C(children))
        }
    }
}

impl Translator<'_, '_, '_> {
    /// The 32-bit literals from operand `start` on; other operands are skipped.
    fn literals_from(&self, inst: Inst<'_>, start: usize) -> Vec<u32> {
        inst.literals_from(start).filter_map(Result::ok).collect()
    }

    pub(crate) fn composite(&mut self, inst: Inst<'_>) -> Result<(), BuildError> {
        let v = match inst.opcode() {
            Op::CompositeConstruct => {
                let rt = self.result_type(inst)?;
                let parts = (0..inst.operand_count())
                    .map(|i| self.operand(inst, i))
                    .collect::<Result<Vec<_>, _>>()?;
                if matches!(self.m.ty(rt), Some(ferrocl_frontend::Type::Vector { .. })) {
                    // Vectors may be built from smaller vectors: flatten.
                    Val::C(parts.iter().flat_map(|p| p.flat()).map(Val::S).collect())
                } else {
                    Val::C(parts)
                }
            }
            Op::CompositeExtract => {
                let v = self.operand(inst, 0)?;
                extract(&v, &self.literals_from(inst, 1))?
            }
            Op::CompositeInsert => {
                let obj = self.operand(inst, 0)?;
                let v = self.operand(inst, 1)?;
                insert(&v, &self.literals_from(inst, 2), obj)?
            }
            Op::VectorShuffle => {
                let a = self.operand(inst, 0)?;
                let b = self.operand(inst, 1)?;
                let mut all: Vec<Val> = a.children()?.to_vec();
                all.extend(b.children()?.iter().cloned());
                let lanes = self.literals_from(inst, 2);
                let mut out = Vec::with_capacity(lanes.len());
                for lane in lanes {
                    if lane == u32::MAX {
                        let t = self.ty_of(all[0].scalar()?);
                        out.push(Val::S(super::values::zero_of(&mut self.b, t)));
                    } else {
                        out.push(all.get(lane as usize).cloned().ok_or_else(|| {
                            BuildError::new(format!("error: shuffle lane {lane} out of range\n"))
                        })?);
                    }
                }
                Val::C(out)
            }
            Op::VectorExtractDynamic => {
                let v = self.operand(inst, 0)?;
                let idx = self.scalar_operand(inst, 1)?;
                let comps = v.flat();
                let mut r = comps[0];
                for (i, &c) in comps.iter().enumerate().skip(1) {
                    let is = self.b.ins().icmp_imm_s(IntCC::Equal, idx, i as i64);
                    r = self.b.ins().select(is, c, r);
                }
                Val::S(r)
            }
            Op::VectorInsertDynamic => {
                let v = self.operand(inst, 0)?;
                let comp = self.scalar_operand(inst, 1)?;
                let idx = self.scalar_operand(inst, 2)?;
                let comps = v.flat();
                Val::C(
                    comps
                        .iter()
                        .enumerate()
                        .map(|(i, &c)| {
                            let is = self.b.ins().icmp_imm_s(IntCC::Equal, idx, i as i64);
                            Val::S(self.b.ins().select(is, comp, c))
                        })
                        .collect(),
                )
            }
            Op::CopyObject | Op::CopyLogical => self.operand(inst, 0)?,
            other => return err(format!("internal: Op{other:?} is not a composite op\n")),
        };
        self.define(inst, v)?;
        Ok(())
    }
}
