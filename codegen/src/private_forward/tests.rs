//! The pass on CLIF functions built here, in the translator's shape: slot addresses as
//! `stack_addr` plus unfolded `iadd`/`imul` of constants.

use cranelift_codegen::ir::{
    condcodes::IntCC, AbiParam, BlockArg, ExternalName, MemFlagsData, StackSlotData, StackSlotKind,
    UserFuncName,
};
use cranelift_codegen::ir::{InstBuilder, Signature};
use cranelift_codegen::isa::CallConv;
use cranelift_codegen::settings;
use cranelift_frontend::{FunctionBuilder, FunctionBuilderContext};

use super::*;
use crate::backend::llvm_ir::tests::frontend_config;

/// `fn(p0: i64, p1: i64) -> i64` whose entry block `body` fills (it ends every block it makes).
fn function(body: impl FnOnce(&mut FunctionBuilder, [Value; 2])) -> Function {
    let mut sig = Signature::new(CallConv::SystemV);
    sig.params.extend([AbiParam::new(types::I64); 2]);
    sig.returns.push(AbiParam::new(types::I64));
    let mut func = Function::with_name_signature(UserFuncName::user(0, 0), sig);
    let mut fctx = FunctionBuilderContext::new();
    let mut b = FunctionBuilder::new(&mut func, &mut fctx);
    let entry = b.create_block();
    b.append_block_params_for_function_params(entry);
    b.switch_to_block(entry);
    let params = b.block_params(entry);
    let params = [params[0], params[1]];
    body(&mut b, params);
    b.seal_all_blocks();
    b.finalize(frontend_config());
    func
}

/// A private slot of `size` bytes and its address.
fn slot(b: &mut FunctionBuilder, size: u32) -> (StackSlot, Value) {
    let ss = b.create_sized_stack_slot(StackSlotData::new(StackSlotKind::ExplicitSlot, size, 3));
    (ss, b.ins().stack_addr(types::I64, ss, 0))
}

/// `base + offset` as translation writes it: `iadd base, (imul (iconst offset), (iconst 1))`.
fn field(b: &mut FunctionBuilder, base: Value, offset: i64) -> Value {
    let k = b.ins().iconst(types::I64, offset);
    let one = b.ins().iconst(types::I64, 1);
    let bytes = b.ins().imul(k, one);
    b.ins().iadd(base, bytes)
}

fn flags() -> MemFlagsData {
    MemFlagsData::new()
}

fn count(func: &Function, op: Opcode) -> usize {
    func.layout
        .blocks()
        .flat_map(|b| func.layout.block_insts(b))
        .filter(|&i| func.dfg.insts[i].opcode() == op)
        .count()
}

/// The pass on `func`, whose result must verify.
fn forward(func: &mut Function) -> Forwarded {
    let done = forward_private_stores(func);
    let flags = settings::Flags::new(settings::builder());
    cranelift_codegen::verify_function(&*func, &flags)
        .unwrap_or_else(|e| panic!("{e}\n{}", func.display()));
    done
}

/// The pass must leave `func` exactly as it was.
fn unchanged(mut func: Function) {
    let before = func.display().to_string();
    assert_eq!(forward(&mut func), Forwarded::default(), "{before}");
    assert_eq!(func.display().to_string(), before);
}

/// The value `v` stands for, aliases resolved.
fn resolved(func: &Function, v: Value) -> Value {
    func.dfg.resolve_aliases(v)
}

/// DPC++'s shape: a pointer stored once into a struct field, loaded back inside a loop through
/// another chain of offsets (`(base + 0 * 32) + 24`), then used as an address.
#[test]
fn forwarded_across_a_loop() {
    let mut loaded = None;
    let mut func = function(|b, [ptr, n]| {
        let (_, base) = slot(b, 32);
        let at24 = field(b, base, 24);
        b.ins().store(flags(), ptr, at24, 0);
        let (head, exit) = (b.create_block(), b.create_block());
        b.append_block_param(head, types::I64);
        b.append_block_param(exit, types::I64);
        let zero = b.ins().iconst(types::I64, 0);
        b.ins().jump(head, &[BlockArg::Value(zero)]);
        b.switch_to_block(head);
        let i = b.block_params(head)[0];
        let zero = b.ins().iconst(types::I64, 0);
        let size = b.ins().iconst(types::I64, 32);
        let first = b.ins().imul(zero, size);
        let element = b.ins().iadd(base, first);
        let k = b.ins().iconst(types::I64, 24);
        let at = b.ins().iadd(element, k);
        let p = b.ins().load(types::I64, flags(), at, 0);
        loaded = Some(p);
        let x = b.ins().iadd(p, i);
        let v = b.ins().load(types::I64, flags(), x, 0);
        let next = b.ins().iadd_imm_s(i, 1);
        let more = b.ins().icmp(IntCC::UnsignedLessThan, next, n);
        b.ins().brif(
            more,
            head,
            &[BlockArg::Value(next)],
            exit,
            &[BlockArg::Value(v)],
        );
        b.switch_to_block(exit);
        let r = b.block_params(exit)[0];
        b.ins().return_(&[r]);
    });
    let done = forward(&mut func);
    assert_eq!(done.loads, 1, "{}", func.display());
    assert_eq!(done.emptied.len(), 1);
    let ptr = func.dfg.block_params(func.layout.entry_block().unwrap())[0];
    assert_eq!(resolved(&func, loaded.unwrap()), ptr);
    // The slot is gone: no address, no store; the load through the pointer stays.
    assert_eq!(count(&func, Opcode::StackAddr), 0, "{}", func.display());
    assert_eq!(count(&func, Opcode::Store), 0);
    assert_eq!(count(&func, Opcode::Load), 1);
    assert_eq!(count(&func, Opcode::Imul), 0, "{}", func.display());
}

/// Two fields of one slot, each stored once: both loads take their own field's value.
#[test]
fn each_field_takes_its_own_store() {
    let mut loads = Vec::new();
    let mut func = function(|b, [x, y]| {
        let (_, base) = slot(b, 16);
        b.ins().store(flags(), x, base, 0);
        let hi = field(b, base, 8);
        b.ins().store(flags(), y, hi, 0);
        // Offsets by `ishl`, `isub` and the load's immediate.
        let three = b.ins().iconst(types::I64, 3);
        let one = b.ins().iconst(types::I64, 1);
        let eight = b.ins().ishl(one, three);
        let a = b.ins().iadd(base, eight);
        let two = b.ins().iconst(types::I64, 2);
        let a = b.ins().isub(a, two);
        loads.push(b.ins().load(types::I64, flags(), a, 2));
        loads.push(b.ins().load(types::I64, flags(), base, 0));
        let r = b.ins().isub(loads[0], loads[1]);
        b.ins().return_(&[r]);
    });
    let done = forward(&mut func);
    assert_eq!(done.loads, 2);
    let [x, y] = {
        let p = func.dfg.block_params(func.layout.entry_block().unwrap());
        [p[0], p[1]]
    };
    assert_eq!(resolved(&func, loads[0]), y);
    assert_eq!(resolved(&func, loads[1]), x);
    assert_eq!(count(&func, Opcode::StackAddr), 0, "{}", func.display());
    assert_eq!(count(&func, Opcode::Ishl), 0, "{}", func.display());
}

#[test]
fn not_forwarded_with_two_stores() {
    let mut func = function(|b, [x, y]| {
        let (_, base) = slot(b, 8);
        b.ins().store(flags(), x, base, 0);
        let v = b.ins().load(types::I64, flags(), base, 0);
        b.ins().store(flags(), y, base, 0);
        let w = b.ins().load(types::I64, flags(), base, 0);
        let r = b.ins().iadd(v, w);
        b.ins().return_(&[r]);
    });
    let before = func.display().to_string();
    assert_eq!(forward(&mut func), Forwarded::default());
    assert_eq!(func.display().to_string(), before);
}

/// The store in one arm of a branch does not dominate the load after the join.
#[test]
fn not_forwarded_when_the_store_does_not_dominate() {
    unchanged(function(|b, [x, c]| {
        let (_, base) = slot(b, 8);
        let (then, join) = (b.create_block(), b.create_block());
        b.ins().brif(c, then, &[], join, &[]);
        b.switch_to_block(then);
        b.ins().store(flags(), x, base, 0);
        b.ins().jump(join, &[]);
        b.switch_to_block(join);
        let v = b.ins().load(types::I64, flags(), base, 0);
        b.ins().return_(&[v]);
    }));
    // A load before the one store: nothing dominates it.
    unchanged(function(|b, [x, _]| {
        let (_, base) = slot(b, 8);
        let v = b.ins().load(types::I64, flags(), base, 0);
        b.ins().store(flags(), x, base, 0);
        b.ins().return_(&[v]);
    }));
}

/// A load overlapping its store only in part, a narrower store inside the stored bytes, a
/// load of another type: not forwarded, and the slot keeps its stores.
#[test]
fn not_forwarded_across_a_partial_overlap_or_a_narrower_store() {
    unchanged(function(|b, [x, _]| {
        let (_, base) = slot(b, 16);
        b.ins().store(flags(), x, base, 0);
        let v = b.ins().load(types::I32, flags(), base, 4);
        let v = b.ins().uextend(types::I64, v);
        b.ins().return_(&[v]);
    }));
    unchanged(function(|b, [x, y]| {
        let (_, base) = slot(b, 16);
        b.ins().store(flags(), x, base, 0);
        b.ins().istore8(flags(), y, base, 3);
        let v = b.ins().load(types::I64, flags(), base, 0);
        b.ins().return_(&[v]);
    }));
    unchanged(function(|b, [x, _]| {
        let (_, base) = slot(b, 16);
        b.ins().store(flags(), x, base, 0);
        let v = b.ins().load(types::F64, flags(), base, 0);
        let v = b.ins().bitcast(types::I64, MemFlagsData::new(), v);
        b.ins().return_(&[v]);
    }));
    // The narrower store does not touch the load's bytes: that one is forwarded, the slot
    // keeps its extending load and so its stores.
    let mut func = function(|b, [x, y]| {
        let (_, base) = slot(b, 16);
        b.ins().store(flags(), x, base, 0);
        b.ins().istore8(flags(), y, base, 8);
        let v = b.ins().load(types::I64, flags(), base, 0);
        let w = b.ins().uload8(types::I64, flags(), base, 8);
        let r = b.ins().iadd(v, w);
        b.ins().return_(&[r]);
    });
    let done = forward(&mut func);
    assert_eq!((done.loads, done.emptied.len()), (1, 0));
    assert_eq!(count(&func, Opcode::Store), 1);
    assert_eq!(count(&func, Opcode::Istore8), 1);
    assert_eq!(count(&func, Opcode::StackAddr), 1);
}

/// A slot one of whose addresses goes anywhere but into offsets, loads and stores is left
/// alone, all of its loads included.
#[test]
fn an_escaping_address_blocks_everything() {
    // A call argument.
    unchanged(function(|b, [x, _]| {
        let (_, base) = slot(b, 16);
        b.ins().store(flags(), x, base, 0);
        let mut sig = Signature::new(CallConv::SystemV);
        sig.params.push(AbiParam::new(types::I64));
        let sigref = b.import_signature(sig);
        let name = b.func.declare_imported_user_function(ir::UserExternalName {
            namespace: 0,
            index: 1,
        });
        let callee = b.import_function(ir::ExtFuncData {
            name: ExternalName::user(name),
            signature: sigref,
            colocated: false,
            patchable: false,
        });
        let other = field(b, base, 8);
        b.ins().call(callee, &[other]);
        let v = b.ins().load(types::I64, flags(), base, 0);
        b.ins().return_(&[v]);
    }));
    // A block argument.
    unchanged(function(|b, [x, _]| {
        let (_, base) = slot(b, 16);
        b.ins().store(flags(), x, base, 0);
        let next = b.create_block();
        let p = b.append_block_param(next, types::I64);
        let at8 = field(b, base, 8);
        b.ins().jump(next, &[BlockArg::Value(at8)]);
        b.switch_to_block(next);
        b.ins().store(flags(), x, p, 0);
        let v = b.ins().load(types::I64, flags(), base, 0);
        b.ins().return_(&[v]);
    }));
    // The address stored as a value (into the slot itself, or elsewhere).
    unchanged(function(|b, [x, _]| {
        let (_, base) = slot(b, 16);
        b.ins().store(flags(), x, base, 0);
        let at8 = field(b, base, 8);
        b.ins().store(flags(), at8, at8, 0);
        let v = b.ins().load(types::I64, flags(), base, 0);
        b.ins().return_(&[v]);
    }));
    unchanged(function(|b, [x, out]| {
        let (_, base) = slot(b, 16);
        b.ins().store(flags(), x, base, 0);
        b.ins().store(flags(), base, out, 0);
        let v = b.ins().load(types::I64, flags(), base, 0);
        b.ins().return_(&[v]);
    }));
    // A variable offset, a compare, an address rounded up.
    unchanged(function(|b, [x, i]| {
        let (_, base) = slot(b, 16);
        b.ins().store(flags(), x, base, 0);
        let at = b.ins().iadd(base, i);
        let _ = b.ins().load(types::I8, flags(), at, 0);
        let v = b.ins().load(types::I64, flags(), base, 0);
        b.ins().return_(&[v]);
    }));
    unchanged(function(|b, [x, y]| {
        let (_, base) = slot(b, 16);
        b.ins().store(flags(), x, base, 0);
        let c = b.ins().icmp(IntCC::Equal, base, y);
        let v = b.ins().load(types::I64, flags(), base, 0);
        let c = b.ins().uextend(types::I64, c);
        let r = b.ins().iadd(v, c);
        b.ins().return_(&[r]);
    }));
    unchanged(function(|b, [x, _]| {
        let (_, base) = slot(b, 16);
        let up = b.ins().iadd_imm_s(base, 15);
        let aligned = b.ins().band_imm_s(up, -16);
        b.ins().store(flags(), x, aligned, 0);
        let v = b.ins().load(types::I64, flags(), aligned, 0);
        b.ins().return_(&[v]);
    }));
}

/// An access reaching past the slot's end (or before its start) leaves the slot alone.
#[test]
fn an_access_outside_the_slot_blocks_everything() {
    unchanged(function(|b, [x, _]| {
        let (_, base) = slot(b, 16);
        b.ins().store(flags(), x, base, 0);
        let at12 = field(b, base, 12);
        b.ins().store(flags(), x, at12, 0);
        let v = b.ins().load(types::I64, flags(), base, 0);
        b.ins().return_(&[v]);
    }));
    unchanged(function(|b, [x, _]| {
        let (_, base) = slot(b, 16);
        b.ins().store(flags(), x, base, 0);
        let v = b.ins().load(types::I64, flags(), base, -8);
        let w = b.ins().load(types::I64, flags(), base, 0);
        let r = b.ins().iadd(v, w);
        b.ins().return_(&[r]);
    }));
}

/// Stores and addresses go only with the last load of their slot.
#[test]
fn dead_stores_go_only_when_no_load_is_left() {
    // Field 0 forwarded, field 8 stored twice: its load stays, so do all stores.
    let mut func = function(|b, [x, y]| {
        let (_, base) = slot(b, 16);
        b.ins().store(flags(), x, base, 0);
        let at8 = field(b, base, 8);
        b.ins().store(flags(), x, at8, 0);
        b.ins().store(flags(), y, at8, 0);
        let v = b.ins().load(types::I64, flags(), base, 0);
        let again = field(b, base, 8);
        let w = b.ins().load(types::I64, flags(), again, 0);
        let r = b.ins().iadd(v, w);
        b.ins().return_(&[r]);
    });
    let done = forward(&mut func);
    assert_eq!((done.loads, done.emptied.len()), (1, 0));
    assert_eq!(count(&func, Opcode::Store), 3, "{}", func.display());
    assert_eq!(count(&func, Opcode::Load), 1);
    assert_eq!(count(&func, Opcode::StackAddr), 1);

    // A slot that is only written: its stores and addresses go.
    let mut func = function(|b, [x, y]| {
        let (_, base) = slot(b, 16);
        b.ins().store(flags(), x, base, 0);
        let at8 = field(b, base, 8);
        b.ins().store(flags(), y, at8, 0);
        b.ins().store(flags(), x, at8, 0);
        b.ins().return_(&[x]);
    });
    let done = forward(&mut func);
    assert_eq!((done.loads, done.emptied.len()), (0, 1));
    assert_eq!(count(&func, Opcode::Store), 0, "{}", func.display());
    assert_eq!(count(&func, Opcode::StackAddr), 0);
    assert_eq!(count(&func, Opcode::Iconst), 0, "{}", func.display());

    // Two slots: one emptied, the other escaping through a call keeps everything.
    let mut func = function(|b, [x, _]| {
        let (gone, base) = slot(b, 8);
        let (_, kept) = slot(b, 8);
        b.ins().store(flags(), x, base, 0);
        b.ins().store(flags(), x, kept, 0);
        let v = b.ins().load(types::I64, flags(), base, 0);
        b.ins().store(flags(), kept, kept, 0);
        let w = b.ins().load(types::I64, flags(), kept, 0);
        let r = b.ins().iadd(v, w);
        b.ins().return_(&[r]);
        let _ = gone;
    });
    let done = forward(&mut func);
    assert_eq!(done.loads, 1);
    assert_eq!(done.emptied, vec![StackSlot::from_u32(0)]);
    assert_eq!(count(&func, Opcode::StackAddr), 1);
    assert_eq!(count(&func, Opcode::Store), 2);
}

/// An address translation made but nothing used (DPC++'s empty comparator objects) goes, and
/// its slot with it.
#[test]
fn an_unused_address_goes() {
    let mut func = function(|b, [x, _]| {
        let (_, base) = slot(b, 1);
        let _ = field(b, base, 0);
        b.ins().return_(&[x]);
    });
    let done = forward(&mut func);
    assert_eq!(
        done,
        Forwarded {
            loads: 0,
            emptied: vec![StackSlot::from_u32(0)]
        }
    );
    assert_eq!(count(&func, Opcode::StackAddr), 0, "{}", func.display());
    assert_eq!(count(&func, Opcode::Iadd), 0, "{}", func.display());
}

/// A constant shared with code outside the slot's addressing stays while it is used.
#[test]
fn the_sweep_keeps_what_is_still_used() {
    let mut func = function(|b, [x, _]| {
        let (_, base) = slot(b, 16);
        let eight = b.ins().iconst(types::I64, 8);
        let at8 = b.ins().iadd(base, eight);
        b.ins().store(flags(), x, at8, 0);
        let v = b.ins().load(types::I64, flags(), at8, 0);
        let r = b.ins().iadd(v, eight);
        b.ins().return_(&[r]);
    });
    let done = forward(&mut func);
    assert_eq!((done.loads, done.emptied.len()), (1, 1));
    assert_eq!(count(&func, Opcode::Iconst), 1, "{}", func.display());
    assert_eq!(count(&func, Opcode::Iadd), 1);
}

/// Loads and stores with a marker trap code (translate/atomics.rs `LOCAL_RMW_TRAP`) or an
/// explicit endianness are not touched.
#[test]
fn unusual_flags_block_everything() {
    unchanged(function(|b, [x, _]| {
        let (_, base) = slot(b, 8);
        b.ins().store(flags(), x, base, 0);
        let marked = MemFlagsData::new().with_trap_code(Some(TrapCode::unwrap_user(0x4c)));
        let v = b.ins().load(types::I64, marked, base, 0);
        b.ins().return_(&[v]);
    }));
    unchanged(function(|b, [x, _]| {
        let (_, base) = slot(b, 8);
        let big = MemFlagsData::new().with_endianness(ir::Endianness::Big);
        b.ins().store(big, x, base, 0);
        let v = b.ins().load(types::I64, flags(), base, 0);
        b.ins().return_(&[v]);
    }));
}

#[test]
fn constants_evaluate_in_their_type() {
    let func = function(|b, [x, _]| {
        let minus_one = b.ins().iconst(types::I32, 0xffff_ffff);
        let s = b.ins().sextend(types::I64, minus_one);
        let u = b.ins().uextend(types::I64, minus_one);
        let big = b.ins().iconst(types::I32, 0x4000_0000);
        let wrapped = b.ins().imul(big, big);
        let wrapped = b.ins().sextend(types::I64, wrapped);
        let amount = b.ins().iconst(types::I64, 67);
        let shifted = b.ins().ishl(s, amount);
        let r = b.ins().iadd(s, u);
        let r = b.ins().iadd(r, wrapped);
        let r = b.ins().iadd(r, shifted);
        let r = b.ins().iadd(r, x);
        b.ins().return_(&[r]);
    });
    let entry = func.layout.entry_block().unwrap();
    let results: Vec<Value> = func
        .layout
        .block_insts(entry)
        .filter_map(|i| func.dfg.inst_results(i).first().copied())
        .collect();
    let mut c = Constants::new(&func);
    let got: Vec<Option<i64>> = results.iter().map(|&v| c.eval(v)).collect();
    assert_eq!(
        got,
        vec![
            Some(-1),
            Some(-1),
            Some(0xffff_ffff),
            Some(0x4000_0000),
            Some(0),
            Some(0),
            Some(67),
            Some(-8),
            Some(0xffff_fffe),
            Some(0xffff_fffe),
            Some(0xffff_fff6),
            None,
        ]
    );
}
