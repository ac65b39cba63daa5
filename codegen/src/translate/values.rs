//! How SPIR-V values live in Cranelift: OpenCL vectors, structs and arrays are scalarised into
//! trees of Cranelift values (`Val`), bools are `i8` 0/1, pointers are `i64` host addresses.

use cranelift_codegen::ir::{types, InstBuilder, Type as IrType, Value};
use cranelift_frontend::FunctionBuilder;
use ferrocl_frontend::{Module, Type};

use crate::error::BuildError;

/// A SPIR-V value: one Cranelift value for scalars (and pointers), a list of children for
/// vectors, arrays and structs.
#[derive(Clone, Debug)]
pub(crate) enum Val {
    S(Value),
    C(Vec<Val>),
}

impl Val {
    pub(crate) fn scalar(&self) -> Result<Value, BuildError> {
        match self {
            Val::S(v) => Ok(*v),
            Val::C(_) => Err(BuildError::new(
                "internal: expected a scalar value, found a composite",
            )),
        }
    }

    pub(crate) fn children(&self) -> Result<&[Val], BuildError> {
        match self {
            Val::C(c) => Ok(c),
            Val::S(_) => Err(BuildError::new(
                "internal: expected a composite value, found a scalar",
            )),
        }
    }

    /// The leaves in memory order.
    pub(crate) fn leaves(&self, out: &mut Vec<Value>) {
        match self {
            Val::S(v) => out.push(*v),
            Val::C(c) => c.iter().for_each(|v| v.leaves(out)),
        }
    }

    pub(crate) fn flat(&self) -> Vec<Value> {
        let mut out = Vec::new();
        self.leaves(&mut out);
        out
    }

    /// Applies `f` to each component (a scalar is one component).
    pub(crate) fn map(
        &self,
        f: &mut impl FnMut(Value) -> Result<Value, BuildError>,
    ) -> Result<Val, BuildError> {
        Ok(match self {
            Val::S(v) => Val::S(f(*v)?),
            Val::C(c) => Val::C(c.iter().map(|v| v.map(f)).collect::<Result<_, _>>()?),
        })
    }

    /// Applies `f` component-wise to two values of the same shape; a scalar `b` is broadcast.
    pub(crate) fn zip(
        &self,
        b: &Val,
        f: &mut impl FnMut(Value, Value) -> Result<Value, BuildError>,
    ) -> Result<Val, BuildError> {
        Ok(match (self, b) {
            (Val::S(x), Val::S(y)) => Val::S(f(*x, *y)?),
            (Val::C(xs), Val::C(ys)) if xs.len() == ys.len() => Val::C(
                xs.iter()
                    .zip(ys)
                    .map(|(x, y)| x.zip(y, f))
                    .collect::<Result<_, _>>()?,
            ),
            (Val::C(xs), Val::S(_)) => {
                Val::C(xs.iter().map(|x| x.zip(b, f)).collect::<Result<_, _>>()?)
            }
            (Val::S(_), Val::C(ys)) => Val::C(
                ys.iter()
                    .map(|y| self.zip(y, f))
                    .collect::<Result<_, _>>()?,
            ),
            _ => {
                return Err(BuildError::new(
                    "internal: operands of different vector sizes",
                ))
            }
        })
    }

    pub(crate) fn zip3(
        &self,
        b: &Val,
        c: &Val,
        f: &mut impl FnMut(Value, Value, Value) -> Result<Value, BuildError>,
    ) -> Result<Val, BuildError> {
        Ok(match (self, b, c) {
            (Val::S(x), Val::S(y), Val::S(z)) => Val::S(f(*x, *y, *z)?),
            _ => {
                let n = [self, b, c]
                    .iter()
                    .find_map(|v| {
                        if let Val::C(c) = v {
                            Some(c.len())
                        } else {
                            None
                        }
                    })
                    .unwrap_or(1);
                let pick = |v: &Val, i: usize| -> Result<Val, BuildError> {
                    match v {
                        Val::S(_) => Ok(v.clone()),
                        Val::C(cs) => cs.get(i).cloned().ok_or_else(|| {
                            BuildError::new("internal: operands of different vector sizes")
                        }),
                    }
                };
                Val::C(
                    (0..n)
                        .map(|i| pick(self, i)?.zip3(&pick(b, i)?, &pick(c, i)?, f))
                        .collect::<Result<_, _>>()?,
                )
            }
        })
    }
}

/// The Cranelift type of a scalar SPIR-V type.
pub(crate) fn scalar_ir_type(m: &Module, ty: u32) -> Result<IrType, BuildError> {
    Ok(match m.ty(ty) {
        Some(Type::Bool) => types::I8,
        Some(Type::Int { width: 8 }) => types::I8,
        Some(Type::Int { width: 16 }) => types::I16,
        Some(Type::Int { width: 32 }) => types::I32,
        Some(Type::Int { width: 64 }) => types::I64,
        // A half is kept as the f32 with its value (half.rs).
        Some(Type::Float { width: 16 | 32 }) => types::F32,
        Some(Type::Float { width: 64 }) => types::F64,
        Some(
            Type::Pointer { .. }
            | Type::Event
            | Type::NamedBarrier
            | Type::DeviceEvent
            | Type::Queue
            | Type::ReserveId
            | Type::Pipe { .. }
            | Type::Sampler
            | Type::Image { .. },
        ) => types::I64,
        other => {
            return Err(BuildError::new(format!(
                "error: type %{ty} ({other:?}) is not supported as a value by codegen\n"
            )))
        }
    })
}

/// Component types of a value of type `ty`, in the `Val` tree's shape.
pub(crate) fn shape(m: &Module, ty: u32) -> Result<Shape, BuildError> {
    Ok(match m.ty(ty) {
        Some(Type::Vector { elem, count }) => Shape::C(vec![shape(m, *elem)?; *count as usize]),
        Some(Type::Array { elem, len }) => {
            if *len > 4096 {
                return Err(BuildError::new(format!("error: array value of {len} elements (type %{ty}) is too large to keep in registers\n")));
            }
            Shape::C(vec![shape(m, *elem)?; *len as usize])
        }
        // A sampled image is the pair (image descriptor address, sampler pattern).
        Some(Type::SampledImage { .. }) => Shape::C(vec![Shape::S(types::I64); 2]),
        Some(Type::Struct { members, .. }) => Shape::C(
            members
                .iter()
                .map(|&t| shape(m, t))
                .collect::<Result<_, _>>()?,
        ),
        _ => Shape::S(scalar_ir_type(m, ty)?),
    })
}

#[derive(Clone, Debug)]
pub(crate) enum Shape {
    S(IrType),
    C(Vec<Shape>),
}

impl Shape {
    pub(crate) fn leaf_types(&self, out: &mut Vec<IrType>) {
        match self {
            Shape::S(t) => out.push(*t),
            Shape::C(c) => c.iter().for_each(|s| s.leaf_types(out)),
        }
    }

    /// Rebuilds a `Val` of this shape from flat leaves.
    pub(crate) fn assemble(
        &self,
        leaves: &mut impl Iterator<Item = Value>,
    ) -> Result<Val, BuildError> {
        Ok(match self {
            Shape::S(_) => Val::S(
                leaves
                    .next()
                    .ok_or_else(|| BuildError::new("internal: too few leaves"))?,
            ),
            Shape::C(c) => Val::C(
                c.iter()
                    .map(|s| s.assemble(leaves))
                    .collect::<Result<_, _>>()?,
            ),
        })
    }

    /// A zero value of this shape (used for `OpUndef`, `OpConstantNull`, undefined shuffle lanes).
    pub(crate) fn zero(&self, b: &mut FunctionBuilder) -> Val {
        match self {
            Shape::S(t) => Val::S(zero_of(b, *t)),
            Shape::C(c) => Val::C(c.iter().map(|s| s.zero(b)).collect()),
        }
    }
}

pub(crate) fn zero_of(b: &mut FunctionBuilder, t: IrType) -> Value {
    if t == types::F32 {
        b.ins().f32const(0.0)
    } else if t == types::F64 {
        b.ins().f64const(0.0)
    } else {
        b.ins().iconst(t, 0)
    }
}
