//! Loads and stores at an address of their own per lane, in wide code: one gather for the
//! lanes instead of a scalar load per lane, and under a mask one masked gather or scatter
//! instead of a branch per lane around each scalar access. (Outside a mask a store stays one
//! per lane: the benchmark's `copy_float16`, before transpose.rs took its whole elements at
//! wide widths, ran 37–40 ms so and 42–43 ms with scatters.)
//!
//! The vectoriser calls a *lane intrinsic* — a function in namespace [`LANE_INTRINSICS`]
//! that no module defines — and the wide backend's translation to LLVM (`backend/llvm_ir`)
//! writes the call as `llvm.masked.gather` / `llvm.masked.scatter`, which AVX2 and AVX-512
//! run as their gather and scatter instructions. Cranelift never compiles such a call: the
//! backend refuses the function (`backend/cranelift.rs`) and its scalar fallback runs, as it
//! does for every vector wider than Cranelift's 128 bits.
//!
//! A masked access at consecutive addresses is one masked load or store the same way
//! (`llvm.masked.load` / `llvm.masked.store`).
//!
//! Only 32-bit elements (one vector of the lanes), and not in checked mode, whose bounds
//! checks instrument each scalar access after the vectoriser.
//!
//! Inactive lanes neither read nor write; a scatter's lanes that hit one address write in lane
//! order (the last lane's value stays), as the scalar accesses one lane after another did.
//! Measured on dpnp's merge sort (a binary search per element, its loads in varying loops):
//! without them its 16-lane code was slower than scalar code.

use cranelift_codegen::ir::{
    self, types, AbiParam, ExtFuncData, ExternalName, InstBuilder, InstructionData, Signature,
    Type, UserExternalName, Value,
};
use cranelift_codegen::isa::CallConv;

use super::analysis::*;
use super::rewrite::Vectoriser;

/// The namespace of lane intrinsics' external names ("lane").
pub(crate) const LANE_INTRINSICS: u32 = 0x6c61_6e65;
/// `gather(addresses_low, addresses_high, mask) -> lanes`: the addresses as a `Pair` of
/// 64-bit lanes, the mask in 32-bit lanes (-1 active, 0 not); inactive lanes give 0.
pub(crate) const GATHER: u32 = 0;
/// `scatter(addresses_low, addresses_high, lanes, mask)`.
pub(crate) const SCATTER: u32 = 1;
/// `masked_load(address, mask) -> lanes`: the lanes at consecutive addresses from `address`;
/// inactive lanes read nothing (a fault there is suppressed) and give 0.
pub(crate) const MASKED_LOAD: u32 = 2;
/// `masked_store(address, lanes, mask)`: the active lanes to consecutive addresses.
pub(crate) const MASKED_STORE: u32 = 3;
/// `table_gather(addresses) -> lanes`: one vector of 64-bit addresses, every lane read, each
/// an aligned 64-bit element of a driver table the vector math reads (math_f64.rs).
pub(crate) const TABLE_GATHER: u32 = 4;
/// `udiv(a, d)`, `urem`, `sdiv`, `srem` (these indices, in that order) of a vector of 32-bit
/// lanes by a constant vector none of whose lanes traps (division.rs): CLIF has no vector
/// division, LLVM does, and turns one by a constant into a multiplication and shifts.
pub(crate) const DIVIDE_BY_CONSTANT: [u32; 4] = [5, 6, 7, 8];

/// Whether `func` calls a lane intrinsic (and so is the wide backend's only).
pub(crate) fn calls_lane_intrinsics(func: &ir::Function) -> bool {
    func.dfg.ext_funcs.values().any(|f| match &f.name {
        ExternalName::User(r) => func.params.user_named_funcs()[*r].namespace == LANE_INTRINSICS,
        _ => false,
    })
}

impl Vectoriser<'_> {
    /// Whether access `inst` (under a mask or not) goes through a lane intrinsic: a 32-bit
    /// load always, a 32-bit store only under a mask (outside one, the lanes' scalar stores
    /// ran faster than a scatter: the benchmark's copy_float16, 37–40 ms against 42–43 ms).
    pub(super) fn lane_intrinsic_access(&self, inst: ir::Inst, masked: bool) -> bool {
        let Some((_, t)) = self.access(inst) else {
            return false;
        };
        self.lane_intrinsics
            && vectorisable_type(t)
            && match self.func.dfg.insts[inst] {
                InstructionData::Load {
                    opcode: ir::Opcode::Load,
                    ..
                } => true,
                InstructionData::Store {
                    opcode: ir::Opcode::Store,
                    ..
                } => masked,
                _ => false,
            }
    }

    /// Access `inst` (one [`Self::lane_intrinsic_access`] admits) for the lanes of `active`
    /// (None: all): a gather or a scatter.
    pub(super) fn gather_or_scatter(&mut self, inst: ir::Inst, active: Option<Value>) {
        if self.func.dfg.inst_results(inst).is_empty() {
            self.scatter(inst, active);
        } else {
            self.gather(inst, active);
        }
    }

    /// Load `inst` of 32-bit lanes for the lanes of `active` (None: all), one gather.
    fn gather(&mut self, inst: ir::Inst, active: Option<Value>) {
        let result = self.func.dfg.inst_results(inst)[0];
        let vt = self.wide(self.ty(result));
        let [lo, hi] = self.lane_addresses(inst);
        let mask = self.active_or_all(active);
        let v = self.call_lane_intrinsic(GATHER, &[lo, hi, mask], Some(vt));
        self.define(result, Form::Vector(v.expect("a result")));
    }

    /// Store `inst` of 32-bit lanes for the lanes of `active` (None: all), one scatter.
    fn scatter(&mut self, inst: ir::Inst, active: Option<Value>) {
        let lanes = self.stored_lanes(inst);
        let [lo, hi] = self.lane_addresses(inst);
        let mask = self.active_or_all(active);
        self.call_lane_intrinsic(SCATTER, &[lo, hi, lanes, mask], None);
    }

    /// Access `inst` (one [`Self::lane_intrinsic_access`] admits) at consecutive addresses from
    /// `base` for the lanes of `active`: one masked load or store. It replaces the branch
    /// between the vector access (every lane active) and a gather: the branch and the test
    /// of the mask in front of each load kept fewer loads in flight in a loop (dpnp's sum,
    /// its loads under the bounds check `i < n`).
    pub(super) fn masked_contiguous(&mut self, inst: ir::Inst, base: Value, active: Value) {
        let offset = match self.func.dfg.insts[inst] {
            InstructionData::Load { offset, .. } | InstructionData::Store { offset, .. } => {
                i64::from(i32::from(offset))
            }
            _ => unreachable!("lane_intrinsic_access() admits loads and stores only"),
        };
        let address = if offset == 0 {
            base
        } else {
            self.cursor().ins().iadd_imm_s(base, offset)
        };
        if let Some(&result) = self.func.dfg.inst_results(inst).first() {
            let vt = self.wide(self.ty(result));
            let v = self.call_lane_intrinsic(MASKED_LOAD, &[address, active], Some(vt));
            self.define(result, Form::Vector(v.expect("a result")));
        } else {
            let lanes = self.stored_lanes(inst);
            self.call_lane_intrinsic(MASKED_STORE, &[address, lanes, active], None);
        }
    }

    /// The 64-bit elements at `addresses` (a vector of them, aligned, in a driver table), one
    /// gather: the double functions' table lookups in wide code, where one scalar load and
    /// one insert per lane kept the shuffle port busy (double `exp` at 16 lanes: 32 loads
    /// and about 40 inserts and extracts per vector). Interleaved A/B on AVX-512 (4 Mi
    /// doubles, min of 40): `exp` 5.35 → 5.20 ms, `log` 7.25 → 6.96, `sin` 7.32 → 6.79, the
    /// benchmark's math expression 43.1 → 39.7.
    pub(super) fn table_gather(&mut self, addresses: Value, element: Type) -> Value {
        let at = self.func.dfg.value_type(addresses);
        let vt = element
            .by(at.lane_count())
            .expect("as many lanes as addresses");
        self.call_lane_intrinsic(TABLE_GATHER, &[addresses], Some(vt))
            .expect("a result")
    }

    /// `a` divided lane by lane by the constant vector `d` (`op` one of udiv, urem, sdiv,
    /// srem), through the lane intrinsic [`DIVIDE_BY_CONSTANT`].
    pub(super) fn divide_by_constant(&mut self, op: ir::Opcode, a: Value, d: Value) -> Value {
        let index = match op {
            ir::Opcode::Udiv => DIVIDE_BY_CONSTANT[0],
            ir::Opcode::Urem => DIVIDE_BY_CONSTANT[1],
            ir::Opcode::Sdiv => DIVIDE_BY_CONSTANT[2],
            _ => DIVIDE_BY_CONSTANT[3],
        };
        let t = self.func.dfg.value_type(a);
        self.call_lane_intrinsic(index, &[a, d], Some(t))
            .expect("a result")
    }

    /// The lanes store `inst` (a `store` [`Self::lane_intrinsic_access`] admits) writes.
    fn stored_lanes(&mut self, inst: ir::Inst) -> Value {
        let InstructionData::Store {
            args: [value, _], ..
        } = self.func.dfg.insts[inst]
        else {
            unreachable!("lane_intrinsic_access() admits stores only as `store`")
        };
        let value = self.func.dfg.resolve_aliases(value);
        self.vector(value)
    }

    /// The mask of `active`, or of every lane.
    fn active_or_all(&mut self, active: Option<Value>) -> Value {
        match active {
            Some(m) => m,
            None => {
                let all = self.cursor().ins().iconst(types::I32, -1);
                let mt = self.mask_ty();
                self.cursor().ins().splat(mt, all)
            }
        }
    }

    /// The lanes' addresses of access `inst` (its offset added) as a `Pair`.
    fn lane_addresses(&mut self, inst: ir::Inst) -> [Value; 2] {
        let (address, offset) = match self.func.dfg.insts[inst] {
            InstructionData::Load { arg, offset, .. } => (arg, offset),
            InstructionData::Store { args, offset, .. } => (args[1], offset),
            _ => unreachable!("lane_intrinsic_access() admits loads and stores only"),
        };
        let address = self.func.dfg.resolve_aliases(address);
        let p = self.pair(address);
        let offset = i64::from(i32::from(offset));
        if offset == 0 {
            return p;
        }
        let pt = self.func.dfg.value_type(p[0]);
        let k = self.cursor().ins().iconst(types::I64, offset);
        let k = self.cursor().ins().splat(pt, k);
        let mut c = self.cursor();
        p.map(|h| c.ins().iadd(h, k))
    }

    /// A call of lane intrinsic `index` on `args` (its parameter types theirs), and its
    /// result if it has one.
    fn call_lane_intrinsic(
        &mut self,
        index: u32,
        args: &[Value],
        result: Option<Type>,
    ) -> Option<Value> {
        let params: Vec<Type> = args.iter().map(|&a| self.func.dfg.value_type(a)).collect();
        let f = self.lane_intrinsic(index, &params, result);
        let call = self.cursor().ins().call(f, args);
        self.func.dfg.inst_results(call).first().copied()
    }

    /// A reference to lane intrinsic `index` with these parameter and result types.
    fn lane_intrinsic(&mut self, index: u32, params: &[Type], result: Option<Type>) -> ir::FuncRef {
        let key = (index, params.to_vec(), result);
        if let Some(&f) = self.lane_intrinsic_refs.get(&key) {
            return f;
        }
        let mut sig = Signature::new(CallConv::SystemV);
        sig.params.extend(params.iter().map(|&t| AbiParam::new(t)));
        sig.returns.extend(result.map(AbiParam::new));
        let signature = self.func.import_signature(sig);
        let name = self.func.declare_imported_user_function(UserExternalName {
            namespace: LANE_INTRINSICS,
            index,
        });
        let f = self.func.import_function(ExtFuncData {
            name: ExternalName::user(name),
            signature,
            colocated: false,
            patchable: false,
        });
        self.lane_intrinsic_refs.insert(key, f);
        f
    }
}
