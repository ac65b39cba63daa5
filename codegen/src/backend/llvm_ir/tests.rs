//! The translator's tests: LLVM accepts its IR (`opt-15`, `llc-15`) at every lane count, and
//! runs it (`lli-15`) to the bits Cranelift's JIT gives.

//! Every opcode group is translated at 4, 8 and 16 lanes (where lane-generic) and the IR
//! must pass `opt-15 -passes=verify` and `llc-15` with AVX-512; pure functions of scalars
//! and 128-bit vectors (what Cranelift's x86-64 backend lowers) run under both Cranelift's
//! JIT and `lli-15` on the same inputs, and their results must be bit-identical.

use super::*;
use cranelift_codegen::ir::{InstBuilder, MemFlagsData, UserFuncName};
use cranelift_frontend::{FunctionBuilder, FunctionBuilderContext};
use std::path::PathBuf;
use std::process::Command;

/// `/usr/bin/<name>`, or None (the test is skipped, said on stderr) when it is not
/// installed; under `CI=true` a missing tool fails the test.
fn tool(name: &str) -> Option<PathBuf> {
    let path = PathBuf::from("/usr/bin").join(name);
    if path.exists() {
        return Some(path);
    }
    assert!(
        std::env::var("CI").as_deref() != Ok("true"),
        "{name} is not installed (CI=true: the LLVM IR tests must run)"
    );
    eprintln!("skipped: {name} is not installed");
    None
}

fn temp_file(ext: &str) -> PathBuf {
    static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    std::env::temp_dir().join(format!("ferrocl-llvm-ir-{}-{n}.{ext}", std::process::id()))
}

fn run(cmd: &mut Command, what: &str, ir: &str) -> Vec<u8> {
    let out = cmd
        .output()
        .unwrap_or_else(|e| panic!("cannot run {cmd:?}: {e}"));
    assert!(
        out.status.success(),
        "{what}: {cmd:?} failed:\n{}\n--- IR ---\n{ir}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

/// Checks `ir` with LLVM's verifier and compiles it with llc for AVX-512; the assembly.
fn llc(ir: &str, what: &str) -> Option<String> {
    let (opt, llc) = (tool("opt-15")?, tool("llc-15")?);
    let file = temp_file("ll");
    std::fs::write(&file, ir).expect("write IR");
    run(
        Command::new(opt)
            .args(["-passes=verify", "-disable-output"])
            .arg(&file),
        what,
        ir,
    );
    let asm = run(
        Command::new(llc)
            .args([
                "-O2",
                "-mattr=+avx512f,+avx512bw,+avx512dq,+avx512vl",
                "-filetype=asm",
                "-o",
                "-",
            ])
            .arg(&file),
        what,
        ir,
    );
    let _ = std::fs::remove_file(&file);
    Some(String::from_utf8_lossy(&asm).into_owned())
}

pub(crate) fn frontend_config() -> cranelift_codegen::isa::TargetFrontendConfig {
    cranelift_native::builder()
        .expect("host ISA")
        .finish(cranelift_codegen::settings::Flags::new(
            cranelift_codegen::settings::builder(),
        ))
        .expect("host ISA")
        .frontend_config()
}

/// A verified function of signature `params -> returns` whose body `body` builds from
/// the parameters.
fn build(
    params: &[Type],
    returns: &[Type],
    body: impl FnOnce(&mut FunctionBuilder, &[Value]) -> Vec<Value>,
) -> ir::Function {
    let func = build_unverified(params, returns, body);
    let mut flags = cranelift_codegen::settings::builder();
    cranelift_codegen::settings::Configurable::set(&mut flags, "preserve_frame_pointers", "true")
        .expect("flag");
    let isa = cranelift_native::builder()
        .expect("host ISA")
        .finish(cranelift_codegen::settings::Flags::new(flags))
        .expect("host ISA");
    cranelift_codegen::verify_function(&func, isa.as_ref())
        .unwrap_or_else(|e| panic!("CLIF does not verify: {e}\n{}", func.display()));
    func
}

/// [`build`] without the verifier: for the wide backend's own forms (rounding pairs on
/// vectors, half_rounding.rs), which the verifier cannot check.
pub(crate) fn build_unverified(
    params: &[Type],
    returns: &[Type],
    body: impl FnOnce(&mut FunctionBuilder, &[Value]) -> Vec<Value>,
) -> ir::Function {
    let mut sig = ir::Signature::new(CallConv::SystemV);
    sig.params.extend(params.iter().map(|&t| AbiParam::new(t)));
    sig.returns
        .extend(returns.iter().map(|&t| AbiParam::new(t)));
    let mut func = ir::Function::with_name_signature(UserFuncName::user(0, 0), sig);
    let mut ctx = FunctionBuilderContext::new();
    let mut b = FunctionBuilder::new(&mut func, &mut ctx);
    let entry = b.create_block();
    b.append_block_params_for_function_params(entry);
    b.switch_to_block(entry);
    let ps = b.block_params(entry).to_vec();
    let rs = body(&mut b, &ps);
    b.ins().return_(&rs);
    b.seal_all_blocks();
    b.finalize(frontend_config());
    func
}

/// Translates `func` and checks the IR with opt and llc.
fn accept(func: &ir::Function, what: &str) -> String {
    let ir =
        translate(func, "f").unwrap_or_else(|e| panic!("{what}: refused: {e}\n{}", func.display()));
    llc(&ir, what);
    ir
}

fn int_vectors(lane_bits: &[u16]) -> Vec<Type> {
    let mut ts = Vec::new();
    for &bits in lane_bits {
        let lane = Type::int(bits).unwrap();
        ts.push(lane);
        for lanes in [4, 8, 16] {
            ts.push(lane.by(lanes).unwrap());
        }
    }
    ts
}

fn float_vectors() -> Vec<Type> {
    let mut ts = Vec::new();
    for lane in [types::F32, types::F64] {
        ts.push(lane);
        for lanes in [4, 8, 16] {
            ts.push(lane.by(lanes).unwrap());
        }
    }
    ts
}

#[test]
fn integer_arithmetic_and_bits_at_every_width() {
    for t in int_vectors(&[8, 16, 32, 64]) {
        let f = build(&[t, t, types::I32], &[t], |b, p| {
            let (x, y, s) = (p[0], p[1], p[2]);
            let mut v = b.ins().iadd(x, y);
            v = b.ins().isub(v, y);
            v = b.ins().imul(v, x);
            v = b.ins().ineg(v);
            v = b.ins().iabs(v);
            v = b.ins().umulhi(v, y);
            v = b.ins().smulhi(v, x);
            v = b.ins().smin(v, y);
            v = b.ins().umax(v, x);
            v = b.ins().band(v, y);
            v = b.ins().bor(v, x);
            v = b.ins().bxor(v, y);
            v = b.ins().bnot(v);
            v = b.ins().band_not(v, x);
            v = b.ins().ishl(v, s);
            v = b.ins().ushr(v, s);
            v = b.ins().sshr(v, s);
            v = b.ins().rotl(v, s);
            v = b.ins().rotr(v, s);
            v = b.ins().popcnt(v);
            if !t.is_vector() {
                v = b.ins().clz(v);
                v = b.ins().ctz(v);
                v = b.ins().cls(v);
                v = b.ins().bitrev(v);
                if t.bits() > 8 {
                    v = b.ins().bswap(v);
                }
            }
            if t.is_vector() && t.lane_bits() <= 16 {
                v = b.ins().uadd_sat(v, x);
                v = b.ins().ssub_sat(v, y);
                v = b.ins().avg_round(v, y);
            }
            let mut c = b.ins().icmp(IntCC::SignedLessThan, v, y);
            if !t.is_vector() {
                c = b.ins().bmask(t, c);
            }
            let v = b.ins().bitselect(c, v, x);
            vec![b.ins().select(s, v, y)]
        });
        accept(&f, &format!("integer ops on {t}"));
    }
}

#[test]
fn float_arithmetic_and_compares_at_every_width() {
    for t in float_vectors() {
        let f = build(&[t, t, t], &[t, int_shape(t)], |b, p| {
            let (x, y, z) = (p[0], p[1], p[2]);
            let mut v = b.ins().fadd(x, y);
            v = b.ins().fsub(v, z);
            v = b.ins().fmul(v, x);
            v = b.ins().fdiv(v, y);
            v = b.ins().sqrt(v);
            v = b.ins().fma(v, y, z);
            v = b.ins().fneg(v);
            v = b.ins().fabs(v);
            v = b.ins().fcopysign(v, x);
            v = b.ins().floor(v);
            v = b.ins().ceil(v);
            v = b.ins().trunc(v);
            v = b.ins().nearest(v);
            v = b.ins().fmin(v, x);
            v = b.ins().fmax(v, y);
            let mut mask = b.ins().fcmp(FloatCC::Equal, v, x);
            for cc in [
                FloatCC::NotEqual,
                FloatCC::Ordered,
                FloatCC::Unordered,
                FloatCC::OrderedNotEqual,
                FloatCC::UnorderedOrEqual,
                FloatCC::LessThan,
                FloatCC::LessThanOrEqual,
                FloatCC::GreaterThan,
                FloatCC::GreaterThanOrEqual,
                FloatCC::UnorderedOrLessThan,
                FloatCC::UnorderedOrLessThanOrEqual,
                FloatCC::UnorderedOrGreaterThan,
                FloatCC::UnorderedOrGreaterThanOrEqual,
            ] {
                let m = b.ins().fcmp(cc, v, y);
                mask = b.ins().bxor(mask, m);
            }
            let bits = if t.is_vector() {
                mask
            } else {
                b.ins().uextend(int_shape(t), mask)
            };
            vec![v, bits]
        });
        accept(&f, &format!("float ops on {t}"));
    }
}

/// Stores `values` one after the other at `out`; no return values.
fn sink(b: &mut FunctionBuilder, out: Value, values: &[Value]) -> Vec<Value> {
    let mut offset = 0;
    for &v in values {
        b.ins().store(flags(), v, out, offset);
        offset += b.func.dfg.value_type(v).bytes() as i32;
    }
    Vec::new()
}

fn flags() -> MemFlagsData {
    MemFlagsData::new()
}

/// Rounding pairs (half_rounding.rs), scalar and on the vectoriser's vectors, become LLVM's
/// `fptrunc`/`fpext` through `half`, which llc lowers for this CPU.
#[test]
fn rounding_pairs_become_half_conversions() {
    for lanes in [1u32, 4, 8, 16] {
        let by = |t: Type| if lanes == 1 { t } else { t.by(lanes).unwrap() };
        let f = build_unverified(&[by(types::F32)], &[by(types::F32)], |b, p| {
            let h = b.ins().fdemote(by(types::F16), p[0]);
            vec![b.ins().fpromote(by(types::F32), h)]
        });
        let ir = accept(&f, &format!("rounding pair on {lanes} lanes"));
        let half = if lanes == 1 {
            "half".to_owned()
        } else {
            format!("<{lanes} x half>")
        };
        assert!(
            ir.contains("fptrunc") && ir.contains(&format!("to {half}")),
            "{ir}"
        );
        assert!(ir.contains(&format!("fpext {half}")), "{ir}");
    }
}

#[test]
fn conversions_at_every_width() {
    let f = build(
        &[types::I32, types::F32, types::F64, types::I64],
        &[],
        |b, p| {
            let (i, x, d) = (p[0], p[1], p[2]);
            let w = b.ins().sextend(types::I64, i);
            let u = b.ins().uextend(types::I64, i);
            let w = b.ins().iadd(w, u);
            let n = b.ins().ireduce(types::I16, w);
            let pd = b.ins().fpromote(types::F64, x);
            let dd = b.ins().fdemote(types::F32, d);
            let t1 = b.ins().fcvt_to_sint(types::I64, d);
            let t2 = b.ins().fcvt_to_uint(types::I32, x);
            let t3 = b.ins().fcvt_to_sint(types::I32, x);
            let t4 = b.ins().fcvt_to_uint(types::I64, d);
            let bits = b.ins().bitcast(types::I32, flags(), dd);
            sink(b, p[3], &[n, pd, t1, t2, t3, t4, bits])
        },
    );
    accept(&f, "scalar conversions");
    for lanes in [1u32, 4, 8, 16] {
        let by = |t: Type| if lanes == 1 { t } else { t.by(lanes).unwrap() };
        let (i32t, i64t, f32t, f64t) = (
            by(types::I32),
            by(types::I64),
            by(types::F32),
            by(types::F64),
        );
        let f = build(&[i32t, f32t, i64t, f64t, types::I64], &[], |b, p| {
            let (i, x, l, d) = (p[0], p[1], p[2], p[3]);
            let s = b.ins().fcvt_from_sint(f64t, l);
            let us = b.ins().fcvt_from_uint(f32t, i);
            let s2 = b.ins().fcvt_from_sint(f32t, i);
            let u2 = b.ins().fcvt_from_uint(f64t, l);
            let c1 = b.ins().fcvt_to_sint_sat(i32t, x);
            let c2 = b.ins().fcvt_to_uint_sat(i64t, d);
            let c3 = b.ins().fcvt_to_uint_sat(i32t, x);
            let c4 = b.ins().fcvt_to_sint_sat(i64t, d);
            let bits = b.ins().bitcast(i32t, flags(), us);
            sink(b, p[4], &[s, us, s2, u2, c1, c2, c3, c4, bits])
        });
        accept(&f, &format!("conversions at {lanes} lanes"));
    }
    // i128 as the frontend uses it (wide saturating arithmetic).
    let f = build(&[types::I64, types::I64], &[types::I64], |b, p| {
        let x = b.ins().sextend(types::I128, p[0]);
        let y = b.ins().uextend(types::I128, p[1]);
        let s = b.ins().iadd(x, y);
        let m = b.ins().imul(s, y);
        let (lo, hi) = b.ins().isplit(m);
        let c = b.ins().icmp(IntCC::SignedGreaterThan, m, s);
        let lo = b.ins().select(c, lo, hi);
        let j = b.ins().iconcat(lo, hi);
        let sh = b.ins().sshr_imm_u(j, 3);
        vec![b.ins().ireduce(types::I64, sh)]
    });
    accept(&f, "i128");
}

#[test]
fn lane_operations_at_every_width() {
    for lanes in [4u32, 8, 16] {
        let v32 = types::I32.by(lanes).unwrap();
        let v16 = types::I16.by(lanes * 2).unwrap();
        let f32v = types::F32.by(lanes).unwrap();
        let f = build(&[v32, v32, types::I32, f32v, types::I64], &[], |b, p| {
            let (x, y, s, fx) = (p[0], p[1], p[2], p[3]);
            let sp = b.ins().splat(v32, s);
            let x = b.ins().insertlane(x, s, 1);
            let e = b.ins().extractlane(x, (lanes - 1) as u8);
            let sv = b.ins().scalar_to_vector(v32, e);
            let x = b.ins().iadd(x, sv);
            let x = b.ins().iadd(x, sp);
            // CLIF narrows from at most 8 lanes and widens to at most 16.
            let (n, w) = if lanes <= 8 {
                let n = b.ins().snarrow(x, y);
                let un = b.ins().unarrow(x, y);
                let uun = b.ins().uunarrow(y, x);
                let n = b.ins().iadd(n, un);
                let n = b.ins().iadd(n, uun);
                let wl = b.ins().swiden_low(n);
                let wh = b.ins().uwiden_high(n);
                let w = b.ins().iadd_pairwise(wl, wh);
                let wl2 = b.ins().uwiden_low(n);
                let wh2 = b.ins().swiden_high(n);
                let w = b.ins().iadd(w, wl2);
                (n, b.ins().iadd(w, wh2))
            } else {
                let n = b
                    .ins()
                    .bitcast(v16, flags().with_endianness(Endianness::Little), x);
                (n, b.ins().iadd_pairwise(x, y))
            };
            let any = b.ins().vany_true(w);
            let all = b.ins().vall_true(w);
            let hb = b.ins().vhigh_bits(types::I8, w);
            let r = b.ins().iadd(any, all);
            let r = b.ins().iadd(r, hb);
            let m = b.ins().icmp(IntCC::UnsignedLessThan, w, x);
            let bl = b.ins().blendv(m, w, y);
            sink(b, p[4], &[n, bl, r, fx])
        });
        accept(&f, &format!("lane operations at {lanes} lanes"));
    }
    // The 128-bit-only ones.
    let t = types::I8X16;
    let f = build(&[t, t, types::F32X4, types::I64], &[], |b, p| {
        let mask: Vec<u8> = (0..16u8).map(|i| (i * 5) % 32).collect();
        let imm = b.func.dfg.immediates.push(mask.into());
        let s = b.ins().shuffle(p[0], p[1], imm);
        let s = b.ins().swizzle(s, p[1]);
        let s = b.ins().x86_pshufb(s, p[0]);
        let m = b.ins().x86_pmaddubsw(s, p[1]);
        let c = b.ins().x86_cvtt2dq(types::I32X4, p[2]);
        let q = b.ins().sqmul_round_sat(m, m);
        let q2 = b.ins().x86_pmulhrsw(q, m);
        let pd = b.ins().fvpromote_low(p[2]);
        let dm = b.ins().fvdemote(pd);
        let pd2 = b.ins().x86_cvtt2dq(types::I32X4, pd);
        sink(b, p[3], &[s, m, c, q2, dm, pd2])
    });
    accept(&f, "128-bit lane operations");
}

#[test]
fn memory_atomics_calls_and_control() {
    let f = build(
        &[types::I64, types::I64, types::I32],
        &[types::I64, types::F32],
        |b, p| {
            let (ptr, fp, idx) = (p[0], p[1], p[2]);
            let slot = b.create_sized_stack_slot(ir::StackSlotData::new(
                ir::StackSlotKind::ExplicitSlot,
                64,
                6,
            ));
            let aligned = MemFlagsData::new().with_aligned();
            let v = b.ins().load(types::F32X16, flags(), ptr, 4);
            b.ins().stack_store(types::I64, v, slot, 0);
            let w = b.ins().stack_load(types::I64, types::F32X16, slot, 0);
            b.ins().store(aligned, w, ptr, 64);
            let a = b.ins().uload8(types::I32, flags(), ptr, 1);
            let c = b.ins().sload16(types::I64, flags(), ptr, 2);
            let d = b.ins().uload32(flags(), ptr, 8);
            let e = b.ins().sload8x8(flags(), ptr, 16);
            b.ins().store(flags(), e, ptr, 32);
            b.ins().istore8(flags(), a, ptr, 3);
            b.ins().istore16(flags(), c, ptr, 5);
            b.ins().istore32(flags(), d, ptr, 7);
            let x = b
                .ins()
                .atomic_rmw(types::I32, flags(), AtomicRmwOp::Smax, ptr, a);
            let x2 = b
                .ins()
                .atomic_rmw(types::I64, flags(), AtomicRmwOp::Nand, ptr, c);
            let y = b.ins().atomic_cas(flags(), ptr, x, a);
            let z = b.ins().atomic_load(types::I64, flags(), ptr);
            b.ins().atomic_store(flags(), y, ptr);
            b.ins().fence();
            let sa = b.ins().stack_addr(types::I64, slot, 8);
            let z = b.ins().iadd(z, sa);
            let z = b.ins().iadd(z, x2);
            // Calls: a user function, a libcall, an indirect call.
            let mut sig = ir::Signature::new(CallConv::SystemV);
            sig.params.push(AbiParam::new(types::I32).uext());
            sig.returns.push(AbiParam::new(types::I64));
            sig.returns.push(AbiParam::new(types::F32));
            let sigref = b.import_signature(sig.clone());
            let name = b.func.declare_imported_user_function(ir::UserExternalName {
                namespace: 0,
                index: 7,
            });
            let callee = b.import_function(ir::ExtFuncData {
                name: ExternalName::user(name),
                signature: sigref,
                colocated: false,
                patchable: false,
            });
            let call = b.ins().call(callee, &[idx]);
            let (r0, r1) = (b.inst_results(call)[0], b.inst_results(call)[1]);
            let ind = b.ins().call_indirect(sigref, fp, &[idx]);
            let r2 = b.inst_results(ind)[0];
            let fa = b.ins().func_addr(types::I64, callee);
            let mut lsig = ir::Signature::new(CallConv::SystemV);
            lsig.params.push(AbiParam::new(types::F32));
            lsig.returns.push(AbiParam::new(types::F32));
            let lsigref = b.import_signature(lsig);
            let floorf = b.import_function(ir::ExtFuncData {
                name: ExternalName::LibCall(ir::LibCall::FloorF32),
                signature: lsigref,
                colocated: false,
                patchable: false,
            });
            let fl = b.ins().call(floorf, &[r1]);
            let fl = b.inst_results(fl)[0];
            let data = b.func.declare_imported_user_function(ir::UserExternalName {
                namespace: 1,
                index: 3,
            });
            let gv = b.create_global_value(GlobalValueData::Symbol {
                name: ExternalName::user(data),
                offset: ir::immediates::Imm64::new(16),
                colocated: false,
                tls: false,
            });
            let gv2 = b.create_global_value(GlobalValueData::IAddImm {
                base: gv,
                offset: ir::immediates::Imm64::new(8),
                global_type: types::I64,
            });
            let sv = b.ins().symbol_value(types::I64, gv2);
            let sum = b.ins().iadd(r0, r2);
            let sum = b.ins().iadd(sum, fa);
            let sum = b.ins().iadd(sum, sv);
            let sum = b.ins().iadd(sum, z);
            // Control: a loop whose brif enters one block twice with different arguments, a
            // br_table, division traps and a conditional trap.
            let head = b.create_block();
            let body = b.create_block();
            let exit = b.create_block();
            b.append_block_param(head, types::I64);
            b.append_block_param(body, types::I64);
            b.append_block_param(exit, types::I64);
            b.ins().jump(head, &[sum.into()]);
            b.switch_to_block(head);
            let h = b.block_params(head)[0];
            let one = b.ins().iconst(types::I64, 1);
            let h1 = b.ins().iadd(h, one);
            b.ins().brif(idx, body, &[h.into()], body, &[h1.into()]);
            b.switch_to_block(body);
            let bv = b.block_params(body)[0];
            let q = b.ins().udiv(bv, sum);
            let q = b.ins().sdiv(q, bv);
            let q = b.ins().srem(q, sum);
            let q = b.ins().urem(q, bv);
            b.ins().trapnz(q, ir::TrapCode::unwrap_user(1));
            let jt = ir::JumpTableData::new(
                b.func.dfg.block_call(exit, &[bv.into()]),
                &[
                    b.func.dfg.block_call(head, &[q.into()]),
                    b.func.dfg.block_call(exit, &[q.into()]),
                    b.func.dfg.block_call(exit, &[bv.into()]),
                ],
            );
            let jt = b.create_jump_table(jt);
            b.ins().br_table(idx, jt);
            b.switch_to_block(exit);
            let out = b.block_params(exit)[0];
            let fp2 = b.ins().get_frame_pointer(types::I64);
            let sp = b.ins().get_stack_pointer(types::I64);
            let d = b.ins().isub(fp2, sp);
            let out = b.ins().iadd(out, d);
            vec![out, fl]
        },
    );
    let ir = accept(&f, "memory, atomics, calls and control");
    for needle in [
        "declare { i64, float } @__ferrocl_u0_7(i32 zeroext) nounwind",
        "@__ferrocl_u1_3 = external global i8",
        "declare float @ferrocl_floorf(float) nounwind",
        "getelementptr i8, ptr @__ferrocl_u1_3, i64 24",
        "alloca [64 x i8], align 64",
    ] {
        assert!(ir.contains(needle), "{needle:?} not in\n{ir}");
    }
}

#[test]
fn what_cannot_be_lowered_is_refused_with_the_instruction() {
    let f = build(&[types::I64], &[types::I64], |b, p| {
        let r = b.ins().get_return_address(types::I64);
        vec![b.ins().iadd(r, p[0])]
    });
    let e = translate(&f, "f").unwrap_err();
    assert!(
        e.contains("`get_return_address` (v1)"),
        "unexpected refusal: {e}"
    );
    let f = build(
        &[types::I64],
        &[types::I64, types::I64, types::I64],
        |_, p| vec![p[0], p[0], p[0]],
    );
    assert!(translate(&f, "f").unwrap_err().contains("3 return values"));
}

// ---- bit-for-bit comparison with Cranelift ----------------------------------------------

/// A function `(in: i64, out: i64)` that loads operands of `operands`' types one after
/// the other from `in`, computes `body` and stores the results one after the other at
/// `out`; with the byte sizes of one row of input and output.
fn pure_fn(
    operands: &[Type],
    body: impl FnOnce(&mut FunctionBuilder, &[Value]) -> Vec<Value>,
) -> (ir::Function, usize, usize) {
    let mut out_bytes = 0;
    let in_bytes = operands.iter().map(|t| t.bytes() as usize).sum();
    let f = build(&[types::I64, types::I64], &[], |b, p| {
        let mut offset = 0;
        let mut xs = Vec::new();
        for &t in operands {
            xs.push(b.ins().load(t, flags(), p[0], offset));
            offset += t.bytes() as i32;
        }
        let rs = body(b, &xs);
        out_bytes = rs
            .iter()
            .map(|&v| b.func.dfg.value_type(v).bytes() as usize)
            .sum();
        sink(b, p[1], &rs)
    });
    (f, in_bytes, out_bytes)
}

/// A deterministic generator of operands rich in edge cases.
struct Inputs(u64);

impl Inputs {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    /// One lane of type `lane`, little-endian.
    fn lane(&mut self, lane: Type, out: &mut Vec<u8>) {
        let r = self.next();
        let pick = (r >> 32) as usize;
        let bits: u64 = match lane {
            types::F32 => {
                const SPECIAL: [u32; 20] = [
                    0,
                    0x8000_0000,
                    0x3f80_0000,
                    0xbf80_0000,
                    0x3fc0_0000,
                    0x4020_0000,
                    0xc020_0000,
                    0x7f80_0000,
                    0xff80_0000,
                    0x7fc0_0000,
                    0x7fc1_2345,
                    0x7f80_0001,
                    0xffc0_0001,
                    0x7f7f_ffff,
                    0x0000_0001,
                    0x4f32_d05e,
                    0xcf00_0000,
                    0x4f00_0000,
                    0x5f00_0000,
                    0xbf33_3333,
                ];
                if r & 1 == 0 {
                    u64::from(SPECIAL[pick % SPECIAL.len()])
                } else {
                    // Mostly moderate magnitudes, where rounding happens.
                    u64::from((r >> 8) as u32 & 0x8fff_ffff | 0x3000_0000)
                }
            }
            types::F64 => {
                const SPECIAL: [u64; 16] = [
                    0,
                    0x8000_0000_0000_0000,
                    0x3ff0_0000_0000_0000,
                    0xbff8_0000_0000_0000,
                    0x4004_0000_0000_0000,
                    0x7ff0_0000_0000_0000,
                    0xfff0_0000_0000_0000,
                    0x7ff8_0000_0000_0000,
                    0x7ff8_0000_0012_3456,
                    0x7ff0_0000_0000_0001,
                    0xfff8_0000_0000_0001,
                    0x0000_0000_0000_0001,
                    0x41e0_0000_0000_0000,
                    0xc1e0_0000_0020_0000,
                    0x43e0_0000_0000_0000,
                    0x41ef_ffff_ffe0_0000,
                ];
                if r & 1 == 0 {
                    SPECIAL[pick % SPECIAL.len()]
                } else {
                    (r >> 3) & 0x8fff_ffff_ffff_ffff | 0x3000_0000_0000_0000
                }
            }
            _ => {
                let w = lane.bits();
                let special = [
                    0u64,
                    1,
                    u64::MAX,
                    1 << (w - 1),
                    (1 << (w - 1)) - 1,
                    2,
                    u64::from(w),
                    u64::from(w) + 3,
                    0x80,
                    0x7f,
                ];
                if r & 1 == 0 {
                    special[pick % special.len()]
                } else {
                    self.next()
                }
            }
        };
        out.extend_from_slice(&bits.to_le_bytes()[..lane.bytes() as usize]);
    }

    fn row(&mut self, operands: &[Type]) -> Vec<u8> {
        let mut row = Vec::new();
        for &t in operands {
            for _ in 0..t.lane_count() {
                self.lane(t.lane_type(), &mut row);
            }
        }
        row
    }
}

/// Runs `pure_fn(operands, body)` on `ROWS` generated rows under Cranelift's JIT and,
/// translated, under lli-15; the outputs must be identical bytes.
fn same_results(
    what: &str,
    operands: &[Type],
    body: impl FnOnce(&mut FunctionBuilder, &[Value]) -> Vec<Value>,
) {
    const ROWS: usize = 256;
    let Some(lli) = tool("lli-15") else { return };
    let (func, in_bytes, out_bytes) = pure_fn(operands, body);
    let mut gen = Inputs(0x9e37_79b9_7f4a_7c15 ^ what.len() as u64);
    let input: Vec<u8> = (0..ROWS).flat_map(|_| gen.row(operands)).collect();

    use cranelift_module::Module as _;
    let mut jit = crate::jit::new_jit(&crate::BuildOptions::default()).expect("JIT");
    let id = jit
        .declare_function("f", cranelift_module::Linkage::Export, &func.signature)
        .expect("declare");
    let mut ctx = cranelift_codegen::Context::for_function(func.clone());
    jit.define_function(id, &mut ctx)
        .unwrap_or_else(|e| panic!("{what}: Cranelift: {e:?}\n{}", func.display()));
    jit.finalize_definitions().expect("finalize");
    let code = jit.get_finalized_function(id);
    // SAFETY: compiled from a System V function of signature (i64, i64) -> () that reads
    // `in_bytes` at its first argument and writes `out_bytes` at its second.
    let kernel = unsafe { std::mem::transmute::<*const u8, extern "C" fn(u64, u64)>(code) };
    let mut expected = vec![0u8; ROWS * out_bytes];
    for r in 0..ROWS {
        kernel(
            input[r * in_bytes..].as_ptr() as u64,
            expected[r * out_bytes..].as_mut_ptr() as u64,
        );
    }

    let ir = translate(&func, "f").unwrap_or_else(|e| panic!("{what}: refused: {e}"));
    let bytes: String = input.iter().map(|b| format!("\\{b:02X}")).collect();
    let total = ROWS * out_bytes;
    let harness = format!(
        r#"
@input = global [{n} x i8] c"{bytes}", align 64
@output = global [{total} x i8] zeroinitializer, align 64
declare i64 @write(i32, ptr, i64)
define i32 @main() {{
entry:
  br label %loop
loop:
  %r = phi i64 [ 0, %entry ], [ %r1, %loop ]
  %io = mul i64 %r, {in_bytes}
  %oo = mul i64 %r, {out_bytes}
  %ip = getelementptr i8, ptr @input, i64 %io
  %op = getelementptr i8, ptr @output, i64 %oo
  %ii = ptrtoint ptr %ip to i64
  %oi = ptrtoint ptr %op to i64
  call void @f(i64 %ii, i64 %oi)
  %r1 = add i64 %r, 1
  %done = icmp eq i64 %r1, {ROWS}
  br i1 %done, label %end, label %loop
end:
  %w = call i64 @write(i32 1, ptr @output, i64 {total})
  ret i32 0
}}
"#,
        n = input.len()
    );
    let module = format!("{ir}{harness}");
    let file = temp_file("ll");
    std::fs::write(&file, &module).expect("write IR");
    let got = run(Command::new(lli).arg("-O2").arg(&file), what, &ir);
    let _ = std::fs::remove_file(&file);
    assert_eq!(got.len(), expected.len(), "{what}: output size");
    if got != expected {
        let row = (0..ROWS)
            .find(|r| got[r * out_bytes..][..out_bytes] != expected[r * out_bytes..][..out_bytes])
            .unwrap_or(0);
        let at = |v: &[u8]| format!("{:02x?}", &v[row * out_bytes..][..out_bytes]);
        panic!(
            "{what}: LLVM and Cranelift differ at row {row}\ninput     {:02x?}\nCranelift {}\nLLVM      {}\n{}\n{ir}",
            &input[row * in_bytes..][..in_bytes],
            at(&expected),
            at(&got),
            func.display()
        );
    }
}

const INT_CCS: [IntCC; 10] = [
    IntCC::Equal,
    IntCC::NotEqual,
    IntCC::SignedLessThan,
    IntCC::SignedGreaterThanOrEqual,
    IntCC::SignedGreaterThan,
    IntCC::SignedLessThanOrEqual,
    IntCC::UnsignedLessThan,
    IntCC::UnsignedGreaterThanOrEqual,
    IntCC::UnsignedGreaterThan,
    IntCC::UnsignedLessThanOrEqual,
];

const FLOAT_CCS: [FloatCC; 14] = [
    FloatCC::Ordered,
    FloatCC::Unordered,
    FloatCC::Equal,
    FloatCC::NotEqual,
    FloatCC::OrderedNotEqual,
    FloatCC::UnorderedOrEqual,
    FloatCC::LessThan,
    FloatCC::LessThanOrEqual,
    FloatCC::GreaterThan,
    FloatCC::GreaterThanOrEqual,
    FloatCC::UnorderedOrLessThan,
    FloatCC::UnorderedOrLessThanOrEqual,
    FloatCC::UnorderedOrGreaterThan,
    FloatCC::UnorderedOrGreaterThanOrEqual,
];

#[test]
fn scalar_integers_match_cranelift() {
    for t in [types::I8, types::I16, types::I32, types::I64] {
        same_results(&format!("scalar {t}"), &[t, t, types::I32], |b, p| {
            let (x, y, s) = (p[0], p[1], p[2]);
            let mut rs = vec![
                b.ins().iadd(x, y),
                b.ins().isub(x, y),
                b.ins().imul(x, y),
                b.ins().umulhi(x, y),
                b.ins().smulhi(x, y),
                b.ins().smin(x, y),
                b.ins().smax(x, y),
                b.ins().umin(x, y),
                b.ins().umax(x, y),
                b.ins().band_not(x, y),
                b.ins().bnot(x),
                b.ins().ineg(x),
                b.ins().iabs(x),
                b.ins().ishl(x, s),
                b.ins().ushr(x, s),
                b.ins().sshr(x, y),
                b.ins().rotl(x, s),
                b.ins().rotr(x, y),
                b.ins().popcnt(x),
                b.ins().clz(x),
                b.ins().ctz(x),
                b.ins().cls(x),
                b.ins().bitrev(x),
            ];
            if t.bits() > 8 {
                rs.push(b.ins().bswap(x));
            }
            // Divisors that do not trap: nonzero, and positive for sdiv; srem gets -1.
            let one = b.ins().iconst(t, 1);
            let d = b.ins().bor(y, one);
            let max = b.ins().iconst(t, ((1u64 << (t.bits() - 1)) - 1) as i64);
            let pd = b.ins().band(d, max);
            rs.push(b.ins().udiv(x, d));
            rs.push(b.ins().urem(x, d));
            rs.push(b.ins().sdiv(x, pd));
            rs.push(b.ins().srem(x, d));
            for cc in INT_CCS {
                rs.push(b.ins().icmp(cc, x, y));
            }
            rs.push(b.ins().select(s, x, y));
            let c = b.ins().icmp(IntCC::SignedLessThan, x, y);
            let m = b.ins().bmask(t, c);
            rs.push(b.ins().bitselect(m, x, y));
            rs
        });
    }
}

#[test]
fn vector_integers_match_cranelift() {
    for t in [types::I8X16, types::I16X8, types::I32X4, types::I64X2] {
        same_results(&format!("vector {t}"), &[t, t, types::I32], |b, p| {
            let (x, y, s) = (p[0], p[1], p[2]);
            let e = b.ins().extractlane(y, 0);
            let mut rs = vec![
                b.ins().iadd(x, y),
                b.ins().isub(x, y),
                b.ins().band_not(x, y),
                b.ins().bnot(x),
                b.ins().ineg(x),
                b.ins().iabs(x),
                b.ins().ishl(x, s),
                b.ins().ushr(x, s),
                b.ins().sshr(x, s),
                b.ins().vany_true(x),
                b.ins().vall_true(x),
                b.ins().vhigh_bits(types::I32, x),
                b.ins().select(s, x, y),
                b.ins().extractlane(x, 1),
                b.ins().insertlane(x, e, 0),
            ];
            if t != types::I64X2 {
                rs.extend([
                    b.ins().smin(x, y),
                    b.ins().smax(x, y),
                    b.ins().umin(x, y),
                    b.ins().umax(x, y),
                ]);
            }
            if t != types::I8X16 {
                rs.push(b.ins().imul(x, y));
            }
            if t.lane_bits() <= 16 {
                rs.extend([
                    b.ins().uadd_sat(x, y),
                    b.ins().sadd_sat(x, y),
                    b.ins().usub_sat(x, y),
                    b.ins().ssub_sat(x, y),
                    b.ins().avg_round(x, y),
                ]);
            }
            for cc in INT_CCS {
                let m = b.ins().icmp(cc, x, y);
                rs.push(b.ins().bitselect(m, x, y));
            }
            rs
        });
    }
}

#[test]
fn floats_match_cranelift() {
    for t in [types::F32, types::F64, types::F32X4, types::F64X2] {
        same_results(&format!("floats {t}"), &[t, t, t], |b, p| {
            let (x, y, z) = (p[0], p[1], p[2]);
            let mut rs = vec![
                b.ins().fadd(x, y),
                b.ins().fsub(x, y),
                b.ins().fmul(x, y),
                b.ins().fdiv(x, y),
                b.ins().sqrt(x),
                b.ins().fma(x, y, z),
                b.ins().fneg(x),
                b.ins().fabs(x),
                b.ins().floor(x),
                b.ins().ceil(x),
                b.ins().trunc(x),
                b.ins().nearest(x),
                b.ins().fmin(x, y),
                b.ins().fmax(x, y),
                b.ins().fmin(y, x),
                b.ins().fmax(y, x),
            ];
            for cc in FLOAT_CCS {
                // Cranelift's x86-64 backend lowers these two for scalars only.
                let unlowered = [FloatCC::UnorderedOrEqual, FloatCC::OrderedNotEqual];
                if !(t.is_vector() && unlowered.contains(&cc)) {
                    rs.push(b.ins().fcmp(cc, x, y));
                }
            }
            // Cranelift's x86-64 backend converts no i64x2 to or from floats.
            if t != types::F64X2 {
                let it = int_shape(t);
                rs.push(b.ins().fcvt_to_sint_sat(it, x));
                rs.push(b.ins().fcvt_to_uint_sat(it, x));
                let xi = b.ins().bitcast(it, flags(), x);
                rs.push(b.ins().fcvt_from_sint(t, xi));
                rs.push(b.ins().fcvt_from_uint(t, xi));
            }
            if !t.is_vector() {
                // Cranelift's x86-64 backend lowers fcopysign for scalars only.
                rs.push(b.ins().fcopysign(x, y));
                let i32s = b.ins().fcvt_to_sint_sat(types::I32, x);
                rs.push(b.ins().fcvt_from_sint(t, i32s));
                let other = if t == types::F32 {
                    types::F64
                } else {
                    types::F32
                };
                rs.push(if t == types::F32 {
                    b.ins().fpromote(other, x)
                } else {
                    b.ins().fdemote(other, x)
                });
            }
            rs
        });
    }
}

#[test]
fn lane_operations_match_cranelift() {
    same_results(
        "lanes",
        &[
            types::I8X16,
            types::I8X16,
            types::I16X8,
            types::I32X4,
            types::F32X4,
            types::F64X2,
        ],
        |b, p| {
            let (a, bb, h, w, f, d) = (p[0], p[1], p[2], p[3], p[4], p[5]);
            let mask: Vec<u8> = (0..16u8).map(|i| (i * 7 + 3) % 32).collect();
            let imm = b.func.dfg.immediates.push(mask.into());
            let lane = b.ins().extractlane(w, 2);
            vec![
                b.ins().shuffle(a, bb, imm),
                b.ins().swizzle(a, bb),
                b.ins().snarrow(w, w),
                b.ins().unarrow(w, w),
                b.ins().snarrow(h, h),
                b.ins().unarrow(h, h),
                b.ins().swiden_low(a),
                b.ins().swiden_high(h),
                b.ins().uwiden_low(h),
                b.ins().uwiden_high(a),
                b.ins().iadd_pairwise(h, h),
                b.ins().iadd_pairwise(w, w),
                b.ins().sqmul_round_sat(h, h),
                b.ins().x86_pmulhrsw(h, h),
                b.ins().fvpromote_low(f),
                b.ins().fvdemote(d),
                b.ins().x86_cvtt2dq(types::I32X4, f),
                b.ins().splat(types::I32X4, lane),
                b.ins().scalar_to_vector(types::I32X4, lane),
                b.ins().blendv(w, w, w),
            ]
        },
    );
}

/// A blend of 64-bit halves by a 16-lane mask (masks.rs) — the mask carried round a loop and
/// one lane rebuilt from a scalar condition, as the vectoriser writes them — is a lane
/// `select` kept in mask registers, not a mask rebuilt bit by bit (`vpextrb`/`kshiftlb`);
/// the same blend by a vector not known to be a mask stays bitwise.
#[test]
fn mask_blends_stay_in_mask_registers() {
    let (i32x16, i64x8) = (types::I32X16, types::I64X8);
    let f = build(
        &[i32x16, i32x16, i64x8, i64x8, i64x8, i64x8, types::I8],
        &[i64x8, i64x8],
        |b, p| {
            let (body, exit) = (b.create_block(), b.create_block());
            b.append_block_param(body, i32x16);
            b.append_block_param(exit, i64x8);
            b.append_block_param(exit, i64x8);
            let first = b.ins().icmp(IntCC::SignedLessThan, p[0], p[1]);
            b.ins().jump(body, &[BlockArg::Value(first)]);
            b.switch_to_block(body);
            let carried = b.block_params(body)[0];
            let condition = b.ins().icmp_imm_u(IntCC::NotEqual, p[6], 0);
            let wide = b.ins().uextend(types::I32, condition);
            let lane = b.ins().ineg(wide);
            let m = b.ins().insertlane(carried, lane, 3);
            let (lo, hi) = (b.ins().swiden_low(m), b.ins().swiden_high(m));
            let r0 = b.ins().bitselect(lo, p[2], p[4]);
            let r1 = b.ins().bitselect(hi, p[3], p[5]);
            let same = b.ins().icmp(IntCC::Equal, p[0], p[0]);
            let next = b.ins().band(m, same);
            let all = b.ins().vall_true(next);
            b.ins().brif(
                all,
                body,
                &[BlockArg::Value(next)],
                exit,
                &[BlockArg::Value(r0), BlockArg::Value(r1)],
            );
            b.switch_to_block(exit);
            b.block_params(exit).to_vec()
        },
    );
    let ir = accept(&f, "mask blend");
    assert_eq!(ir.matches("select <8 x i1>").count(), 2, "{ir}");
    if let Some(asm) = llc(&ir, "mask blend") {
        assert!(
            !asm.contains("vpextrb") && !asm.contains("kshiftlb"),
            "{asm}"
        );
    }
    // A vector of arbitrary bits chooses bit by bit.
    let f = build(&[i64x8, i64x8, i64x8], &[i64x8], |b, p| {
        vec![b.ins().bitselect(p[0], p[1], p[2])]
    });
    let ir = accept(&f, "bitwise blend");
    assert!(
        !ir.contains("select <8 x i1>") && ir.contains("xor <8 x i64>"),
        "{ir}"
    );
}

/// A lane intrinsic of the vectoriser (`vectorize/gather.rs`) for a test body.
fn lane_intrinsic(
    b: &mut FunctionBuilder,
    index: u32,
    params: &[Type],
    result: Option<Type>,
) -> ir::FuncRef {
    use cranelift_codegen::ir::{AbiParam, ExtFuncData, ExternalName, Signature, UserExternalName};
    let mut sig = Signature::new(cranelift_codegen::isa::CallConv::SystemV);
    sig.params.extend(params.iter().map(|&t| AbiParam::new(t)));
    sig.returns.extend(result.map(AbiParam::new));
    let signature = b.import_signature(sig);
    let name = b.func.declare_imported_user_function(UserExternalName {
        namespace: crate::vectorize::LANE_INTRINSICS,
        index,
    });
    b.import_function(ExtFuncData {
        name: ExternalName::user(name),
        signature,
        colocated: false,
        patchable: false,
    })
}

/// A load and a store at consecutive addresses under a lane mask — the vectoriser's bounds
/// check `i < n` on 64-bit indices, two compares of 8 lanes narrowed to one 16-lane mask —
/// are masked moves under one mask register: the halves joined by `kunpckbw`, no branch, no
/// gather, and no narrowing through vector registers (`vpmovsqd`).
#[test]
fn masked_contiguous_accesses_are_masked_moves() {
    let (i64x8, i32x16, f32x16) = (types::I64X8, types::I32X16, types::F32X16);
    let f = build(
        &[types::I64, types::I64, i64x8, i64x8, i64x8],
        &[f32x16],
        |b, p| {
            let lo = b.ins().icmp(IntCC::UnsignedLessThan, p[2], p[4]);
            let hi = b.ins().icmp(IntCC::UnsignedLessThan, p[3], p[4]);
            let mask = b.ins().snarrow(lo, hi);
            let load = lane_intrinsic(
                b,
                crate::vectorize::MASKED_LOAD,
                &[types::I64, i32x16],
                Some(f32x16),
            );
            let call = b.ins().call(load, &[p[0], mask]);
            let v = b.inst_results(call)[0];
            let store = lane_intrinsic(
                b,
                crate::vectorize::MASKED_STORE,
                &[types::I64, f32x16, i32x16],
                None,
            );
            b.ins().call(store, &[p[1], v, mask]);
            vec![v]
        },
    );
    let ir = accept(&f, "masked accesses");
    assert!(
        ir.contains("@llvm.masked.load.v16f32.p0") && ir.contains("@llvm.masked.store.v16f32.p0"),
        "{ir}"
    );
    assert!(ir.contains("shufflevector <8 x i1>"), "{ir}");
    if let Some(asm) = llc(&ir, "masked accesses") {
        assert!(asm.contains("kunpckbw"), "{asm}");
        assert!(
            !asm.contains("vpmovsqd") && !asm.contains("gather") && !asm.contains("vpextr"),
            "{asm}"
        );
        let masked_moves = asm
            .lines()
            .filter(|l| l.contains("vmovups") && l.contains("{%k"))
            .count();
        assert_eq!(masked_moves, 2, "{asm}");
    }
}

/// A table gather (the double vector math's table lookups in wide code) is one gather
/// instruction per vector of addresses, every lane read: no mask computed, no lane extracted.
#[test]
fn table_gather_is_one_gather_of_doubles() {
    let i64x8 = types::I64X8;
    let f = build(&[i64x8], &[types::F64X8], |b, p| {
        let gather = lane_intrinsic(
            b,
            crate::vectorize::TABLE_GATHER,
            &[i64x8],
            Some(types::F64X8),
        );
        let call = b.ins().call(gather, &[p[0]]);
        vec![b.inst_results(call)[0]]
    });
    let ir = accept(&f, "table gather");
    assert!(ir.contains("@llvm.masked.gather.v8f64.v8p0"), "{ir}");
    assert!(ir.contains("<8 x i1> <i1 true"), "{ir}");
    if let Some(asm) = llc(&ir, "table gather") {
        let gathers = asm.lines().filter(|l| l.contains("vgatherqpd")).count();
        assert_eq!(gathers, 1, "{asm}");
        assert!(!asm.contains("vpextrq") && !asm.contains("vmovq"), "{asm}");
    }
}
