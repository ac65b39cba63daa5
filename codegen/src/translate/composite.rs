//! Composite opcodes over scalarised values: construct, extract, insert, shuffles, dynamic
//! vector indexing.

use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::InstBuilder;
use ferrocl_frontend::spirv::Op;
use ferrocl_frontend::Inst;

use super::function::{err, Translator};
use super::values::Val;
use crate::error::BuildError;

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
    pub(crate) fn composite(&mut self, inst: Inst<'_>) -> Result<(), BuildError> {
        let v = match inst.opcode() {
            Op::CompositeConstruct => {
                let rt = self.result_type(inst)?;
                let parts = inst
                    .constituents()?
                    .into_iter()
                    .map(|id| self.value(id))
                    .collect::<Result<Vec<_>, _>>()?;
                if matches!(self.m.ty(rt), Some(ferrocl_frontend::Type::Vector { .. })) {
                    // Vectors may be built from smaller vectors: flatten.
                    Val::C(parts.iter().flat_map(|p| p.flat()).map(Val::S).collect())
                } else {
                    Val::C(parts)
                }
            }
            Op::CompositeExtract => {
                let access = inst.composite_extract()?;
                let v = self.value(access.composite)?;
                extract(&v, &access.indexes)?
            }
            Op::CompositeInsert => {
                let access = inst.composite_insert()?;
                let obj = self.value(access.object)?;
                let v = self.value(access.composite)?;
                insert(&v, &access.indexes, obj)?
            }
            Op::VectorShuffle => {
                let shuffle = inst.vector_shuffle()?;
                let a = self.value(shuffle.vector1)?;
                let b = self.value(shuffle.vector2)?;
                let mut all: Vec<Val> = a.children()?.to_vec();
                all.extend(b.children()?.iter().cloned());
                let lanes = shuffle.components;
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
                let dynamic = inst.vector_extract_dynamic()?;
                let v = self.value(dynamic.vector)?;
                let idx = self.scalar(dynamic.index)?;
                let comps = v.flat();
                let mut r = comps[0];
                for (i, &c) in comps.iter().enumerate().skip(1) {
                    let is = self.b.ins().icmp_imm_s(IntCC::Equal, idx, i as i64);
                    r = self.b.ins().select(is, c, r);
                }
                Val::S(r)
            }
            Op::VectorInsertDynamic => {
                let dynamic = inst.vector_insert_dynamic()?;
                let v = self.value(dynamic.vector)?;
                let comp = self.scalar(dynamic.component)?;
                let idx = self.scalar(dynamic.index)?;
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
            Op::CopyObject | Op::CopyLogical => self.value(inst.unary()?.value)?,
            other => return err(format!("internal: Op{other:?} is not a composite op\n")),
        };
        self.define(inst, v)?;
        Ok(())
    }
}
