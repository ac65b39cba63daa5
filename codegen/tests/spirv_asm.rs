//! Instructions clang rarely or never emits, from hand-written SPIR-V assembly
//! (`tests/spvasm/*.spvasm`, assembled with spirv-as and checked with
//! `spirv-val --target-env opencl2.1`), run and checked against host references.

mod common;

use common::*;

fn u32s(v: &[u32]) -> Vec<u8> {
    bytes_of(v)
}

fn get_u32(b: &[u8], i: usize) -> u32 {
    u32::from_le_bytes(b[i * 4..i * 4 + 4].try_into().expect("4 bytes"))
}

fn get_u64(b: &[u8], i: usize) -> u64 {
    u64::from_le_bytes(b[i * 8..i * 8 + 8].try_into().expect("8 bytes"))
}

/// Edge patterns followed by random values.
fn inputs32(n: usize, seed: u64) -> Vec<u32> {
    let mut v = vec![
        0,
        1,
        u32::MAX,
        0x8000_0000,
        0x7fff_ffff,
        2,
        0xffff,
        0x1_0000,
    ];
    let mut rng = Rng(seed);
    while v.len() < n {
        v.push(rng.next() as u32);
    }
    v
}

fn inputs64(n: usize, seed: u64) -> Vec<u64> {
    let mut v = vec![
        0,
        1,
        u64::MAX,
        1 << 63,
        (1 << 63) - 1,
        2,
        0xffff_ffff,
        1 << 32,
    ];
    let mut rng = Rng(seed);
    while v.len() < n {
        v.push(rng.next());
    }
    v
}

#[test]
fn extended_multiply_carry_borrow_and_bit_count() {
    let p = build_spirv(&spirv_from_asm(
        "int_extended.spvasm",
        "1.0",
        Some("opencl2.1"),
    ));
    let n = 64;
    let xs = inputs32(n, 1);
    let mut ys = inputs32(n, 2);
    ys.rotate_left(3);
    let ls = inputs64(n, 3);
    let mut ms = inputs64(n, 4);
    ms.rotate_left(5);
    let (mut a, mut b) = (u32s(&xs), u32s(&ys));
    let (mut la, mut lb) = (bytes_of(&ls), bytes_of(&ms));
    let mut out = vec![0u8; n * 16 * 4];
    let mut wide = vec![0u8; n * 10 * 8];
    launch(
        &p,
        "int_extended",
        &mut [
            Arg::Buf(&mut a),
            Arg::Buf(&mut b),
            Arg::Buf(&mut out),
            Arg::Buf(&mut la),
            Arg::Buf(&mut lb),
            Arg::Buf(&mut wide),
        ],
        n as u64,
        8,
    );
    for i in 0..n {
        let (x, y) = (xs[i], ys[i]);
        let um = u64::from(x) * u64::from(y);
        let sm = i64::from(x as i32) * i64::from(y as i32);
        let (sum, carry) = x.overflowing_add(y);
        let (diff, borrow) = x.overflowing_sub(y);
        let want = [
            um as u32,
            (um >> 32) as u32,
            sm as u32,
            (sm >> 32) as u32,
            sum,
            u32::from(carry),
            diff,
            u32::from(borrow),
            x.count_ones(),
        ];
        let got: Vec<u32> = (0..9).map(|k| get_u32(&out, 16 * i + k)).collect();
        assert_eq!(got, want, "uint x={x:#x} y={y:#x}");
        let (x, y) = (ls[i], ms[i]);
        let um = u128::from(x) * u128::from(y);
        let sm = i128::from(x as i64) * i128::from(y as i64);
        let (sum, carry) = x.overflowing_add(y);
        let (diff, borrow) = x.overflowing_sub(y);
        let want = [
            um as u64,
            (um >> 64) as u64,
            sm as u64,
            (sm >> 64) as u64,
            sum,
            u64::from(carry),
            diff,
            u64::from(borrow),
            u64::from(x.count_ones()),
        ];
        let got: Vec<u64> = (0..9).map(|k| get_u64(&wide, 10 * i + k)).collect();
        assert_eq!(got, want, "ulong x={x:#x} y={y:#x}");
    }
}

/// Bit-field reference: bits [offset, offset + count) of `base` replaced by the low `count`
/// bits of `insert`; extraction sign- or zero-extends those bits of `base`.
fn field_insert(base: u64, insert: u64, offset: u32, count: u32, bits: u32) -> u64 {
    let all = if bits == 64 {
        u64::MAX
    } else {
        (1 << bits) - 1
    };
    let mask = if count == 0 {
        0
    } else {
        (u64::MAX >> (64 - count)) << offset
    };
    ((base & !mask) | ((insert << offset) & mask)) & all
}

fn field_extract(base: u64, offset: u32, count: u32, bits: u32, signed: bool) -> u64 {
    let all = if bits == 64 {
        u64::MAX
    } else {
        (1 << bits) - 1
    };
    if count == 0 {
        return 0;
    }
    let field = (base >> offset) & (u64::MAX >> (64 - count));
    if signed && count < 64 && (field >> (count - 1)) & 1 == 1 {
        (field | (u64::MAX << count)) & all
    } else {
        field
    }
}

#[test]
fn bit_instructions_extension() {
    let p = build_spirv(&spirv_from_asm(
        "bit_instructions.spvasm",
        "1.0",
        Some("opencl2.1"),
    ));
    let n = 96;
    let mut rng = Rng(11);
    let xs = inputs32(n, 5);
    let ys = inputs32(n, 6);
    let ls = inputs64(n, 7);
    let ms = inputs64(n, 8);
    // Offset + count within the width (beyond it the result is undefined); count 0 and the
    // full width included.
    let mut field = |bits: u32| -> (Vec<u32>, Vec<u32>) {
        (0..n)
            .map(|i| match i % 8 {
                0 => (0, 0),
                1 => (0, bits),
                2 => (bits - 1, 1),
                3 => (5, 0),
                _ => {
                    let off = (rng.next() % u64::from(bits)) as u32;
                    let cnt = (rng.next() % u64::from(bits - off + 1)) as u32;
                    (off, cnt)
                }
            })
            .unzip()
    };
    let (offs, cnts) = field(32);
    let (loffs, lcnts) = field(64);
    let (mut a, mut b, mut o, mut c) = (u32s(&xs), u32s(&ys), u32s(&offs), u32s(&cnts));
    let (mut la, mut lb, mut lo, mut lc) =
        (bytes_of(&ls), bytes_of(&ms), u32s(&loffs), u32s(&lcnts));
    let mut out = vec![0u8; n * 4 * 4];
    let mut wide = vec![0u8; n * 4 * 8];
    launch(
        &p,
        "bit_instructions",
        &mut [
            Arg::Buf(&mut a),
            Arg::Buf(&mut b),
            Arg::Buf(&mut o),
            Arg::Buf(&mut c),
            Arg::Buf(&mut out),
            Arg::Buf(&mut la),
            Arg::Buf(&mut lb),
            Arg::Buf(&mut lo),
            Arg::Buf(&mut lc),
            Arg::Buf(&mut wide),
        ],
        n as u64,
        16,
    );
    for i in 0..n {
        let (x, y, off, cnt) = (xs[i], ys[i], offs[i], cnts[i]);
        let want = [
            x.reverse_bits(),
            field_insert(x.into(), y.into(), off, cnt, 32) as u32,
            field_extract(x.into(), off, cnt, 32, true) as u32,
            field_extract(x.into(), off, cnt, 32, false) as u32,
        ];
        let got: Vec<u32> = (0..4).map(|k| get_u32(&out, 4 * i + k)).collect();
        assert_eq!(got, want, "uint x={x:#x} y={y:#x} offset {off} count {cnt}");
        let (x, y, off, cnt) = (ls[i], ms[i], loffs[i], lcnts[i]);
        let want = [
            x.reverse_bits(),
            field_insert(x, y, off, cnt, 64),
            field_extract(x, off, cnt, 64, true),
            field_extract(x, off, cnt, 64, false),
        ];
        let got: Vec<u64> = (0..4).map(|k| get_u64(&wide, 4 * i + k)).collect();
        assert_eq!(
            got, want,
            "ulong x={x:#x} y={y:#x} offset {off} count {cnt}"
        );
    }
}

/// The kernel's result for `x` and whether the loop left through its early exit.
fn control_flow_reference(x: u32) -> (u32, bool) {
    let mut acc = 0u32;
    for k in 0..(x & 15) {
        let sel = x.wrapping_add(k.wrapping_mul(13)) % 64;
        let v = match sel {
            5 => 6 * 6 + 3,
            0..=39 => sel * sel + 3,
            _ => 1000 + sel,
        };
        acc = acc.wrapping_mul(31).wrapping_add(v);
        if acc & 255 == 42 {
            return (acc ^ 0xdead, true);
        }
    }
    (acc, false)
}

#[test]
fn unstructured_control_flow_and_large_switch() {
    let p = build_spirv(&spirv_from_asm(
        "control_flow.spvasm",
        "1.0",
        Some("opencl2.1"),
    ));
    let n = 4096u32;
    // Scrambled consecutive values visit every case and every loop count.
    let xs: Vec<u32> = (0..n).map(|i| i.wrapping_mul(0x9E37_79B1) >> 7).collect();
    let (mut a, mut out) = (u32s(&xs), vec![0u8; n as usize * 4]);
    launch(
        &p,
        "control_flow",
        &mut [Arg::Buf(&mut a), Arg::Buf(&mut out)],
        u64::from(n),
        64,
    );
    let mut early = 0;
    for (i, &x) in xs.iter().enumerate() {
        let (want, exited) = control_flow_reference(x);
        assert_eq!(get_u32(&out, i), want, "x = {x}");
        early += usize::from(exited);
    }
    // Both loop exits must have been exercised.
    assert!(early > 0 && early < xs.len(), "early exits: {early}");
}

#[test]
fn null_constants_undef_lifetimes_copies_and_hints() {
    let p = build_spirv(&spirv_from_asm(
        "memory_and_hints.spvasm",
        "1.0",
        Some("opencl2.1"),
    ));
    let n = 32;
    let xs = inputs32(n, 21);
    let src = inputs32(n * 4, 22);
    let (mut a, mut s) = (u32s(&xs), u32s(&src));
    let mut out = vec![0xffu8; n * 8 * 4];
    let mut copy = vec![0u8; n * 4 * 4];
    launch(
        &p,
        "memory_and_hints",
        &mut [
            Arg::Buf(&mut a),
            Arg::Buf(&mut out),
            Arg::Buf(&mut s),
            Arg::Buf(&mut copy),
        ],
        n as u64,
        8,
    );
    for (i, &x) in xs.iter().enumerate() {
        let got: Vec<u32> = (0..6).map(|k| get_u32(&out, 8 * i + k)).collect();
        assert_eq!(got, [x, 0, 0, x, x.wrapping_add(1), 0], "x = {x:#x}");
    }
    let copied: Vec<u32> = (0..n * 4).map(|k| get_u32(&copy, k)).collect();
    assert_eq!(copied, src, "OpCopyMemorySized");
}

/// Exact dot product of the four bytes of `a` and `b` (lowest byte first), each read signed or
/// unsigned.
fn dot4(a: u32, b: u32, signed_a: bool, signed_b: bool) -> i128 {
    (0..4)
        .map(|k| {
            let (x, y) = ((a >> (8 * k)) as u8, (b >> (8 * k)) as u8);
            let x = if signed_a {
                i128::from(x as i8)
            } else {
                i128::from(x)
            };
            let y = if signed_b {
                i128::from(y as i8)
            } else {
                i128::from(y)
            };
            x * y
        })
        .sum()
}

fn saturate(v: i128, bits: u32, signed: bool) -> i128 {
    if signed {
        v.clamp(-(1 << (bits - 1)), (1 << (bits - 1)) - 1)
    } else {
        v.clamp(0, (1 << bits) - 1)
    }
}

/// `v` as the unsigned bit pattern of a `bits`-bit integer.
fn low_bits(v: i128, bits: u32) -> u64 {
    (v as u128 & ((1u128 << bits) - 1)) as u64
}

#[test]
fn integer_dot_product_extension() {
    let p = build_spirv(&spirv_from_asm(
        "integer_dot.spvasm",
        "1.0",
        Some("opencl2.1"),
    ));
    let n = 256;
    let mut xs = inputs32(n, 31);
    let mut ys = inputs32(n, 32);
    // Extreme bytes saturate the narrow accumulating forms.
    xs.extend([0x8080_8080, 0x7f7f_7f7f, 0xffff_ffff, 0x8080_8080]);
    ys.extend([0x8080_8080, 0x7f7f_7f7f, 0xffff_ffff, 0x7f7f_7f7f]);
    let n = xs.len();
    let accs: Vec<u32> = inputs32(n, 33)
        .into_iter()
        .enumerate()
        .map(|(i, r)| match i % 4 {
            0 => r,
            1 => r % 1000,
            2 => (r % 1000).wrapping_neg(),
            _ => 0x7fff_0000 + r % 0x2_0000,
        })
        .collect();
    let (mut a, mut b, mut c) = (u32s(&xs), u32s(&ys), u32s(&accs));
    let mut out = vec![0u8; n * 32 * 8];
    launch(
        &p,
        "integer_dot",
        &mut [
            Arg::Buf(&mut a),
            Arg::Buf(&mut b),
            Arg::Buf(&mut c),
            Arg::Buf(&mut out),
        ],
        n as u64,
        16,
    );
    for i in 0..n {
        let (x, y, acc) = (xs[i], ys[i], accs[i]);
        let (ss, uu, su) = (
            dot4(x, y, true, true),
            dot4(x, y, false, false),
            dot4(x, y, true, false),
        );
        let acc_s = i128::from(acc as i32);
        let acc_u = i128::from(acc);
        let acc16_s = i128::from(acc as u16 as i16);
        let acc16_u = i128::from(acc as u16);
        let want: [(u64, &str); 17] = [
            (low_bits(ss, 32), "SDot"),
            (low_bits(uu, 32), "UDot"),
            (low_bits(su, 32), "SUDot"),
            (low_bits(ss, 32), "SDot packed"),
            (low_bits(uu, 32), "UDot packed"),
            (low_bits(su, 32), "SUDot packed"),
            (low_bits(saturate(ss + acc_s, 32, true), 32), "SDotAccSat"),
            (low_bits(saturate(uu + acc_u, 32, false), 32), "UDotAccSat"),
            (low_bits(saturate(su + acc_s, 32, true), 32), "SUDotAccSat"),
            (
                low_bits(saturate(ss + acc_s, 32, true), 32),
                "SDotAccSat packed",
            ),
            (
                low_bits(saturate(uu + acc_u, 32, false), 32),
                "UDotAccSat packed",
            ),
            (
                low_bits(saturate(su + acc_s, 32, true), 32),
                "SUDotAccSat packed",
            ),
            (low_bits(ss, 16), "SDot short"),
            (
                low_bits(saturate(ss + acc16_s, 16, true), 16),
                "SDotAccSat short",
            ),
            (
                low_bits(saturate(uu + acc16_u, 16, false), 16),
                "UDotAccSat short packed",
            ),
            (low_bits(ss + acc_s, 64), "SDotAccSat long"),
            (low_bits(uu + acc_u, 64), "UDotAccSat long packed"),
        ];
        for (k, (w, what)) in want.iter().enumerate() {
            let got = get_u64(&out, 32 * i + k);
            assert_eq!(got, *w, "{what}: a={x:#010x} b={y:#010x} acc={acc:#x}");
        }
    }
}

#[test]
fn read_clock_device_and_work_group_scopes() {
    // Not run through spirv-val: it allows OpReadClockKHR only at Subgroup or Device scope
    // (the Vulkan rule), while the OpenCL environment accepts Workgroup too (env spec 5.2.28).
    let p = build_spirv(&spirv_from_asm("read_clock.spvasm", "1.0", None));
    let n = 64usize;
    let iterations = 20_000u64;
    let mut out = vec![0u8; n * 4 * 8];
    let before = std::time::Instant::now();
    launch(
        &p,
        "read_clock",
        &mut [
            Arg::Buf(&mut out),
            Arg::Val(iterations.to_le_bytes().to_vec()),
        ],
        n as u64,
        8,
    );
    let wall = before.elapsed().as_nanos() as u64;
    let mut reads: Vec<(u64, u64, u64)> = Vec::new();
    for i in 0..n {
        let (t0, t1, t2) = (
            get_u64(&out, 4 * i),
            get_u64(&out, 4 * i + 1),
            get_u64(&out, 4 * i + 2),
        );
        // One clock for all scopes: reads in program order never go backwards, and the
        // loop between the first and the last read takes time.
        assert!(t0 <= t1 && t1 <= t2, "item {i}: {t0} {t1} {t2}");
        assert!(t2 > t0, "item {i}: the clock did not advance over the loop");
        reads.push((t0, t1, t2));
    }
    // Device scope: values are comparable across work-items. This harness runs the groups
    // (of 8) one after the other, so every read of a group precedes every read of the next.
    for (g, pair) in reads.chunks(8).collect::<Vec<_>>().windows(2).enumerate() {
        let last = pair[0].iter().map(|r| r.2).max().unwrap_or(0);
        let first = pair[1].iter().map(|r| r.0).min().unwrap_or(u64::MAX);
        assert!(
            last <= first,
            "group {g} ends at {last}, group {} starts at {first}",
            g + 1
        );
    }
    let span = reads.iter().map(|r| r.2).max().unwrap_or(0) - reads[0].0;
    assert!(
        span <= wall,
        "clock span {span} ns exceeds the launch's {wall} ns"
    );
}

#[test]
fn read_clock_at_sub_group_scope_fails_with_a_log() {
    let text = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/spvasm/read_clock.spvasm"),
    )
    .expect("read assembly");
    let text = text.replace(
        "%workgroup = OpConstant %uint 2",
        "%workgroup = OpConstant %uint 3",
    );
    let log = codegen_error(&spirv_from_asm_text(&text));
    assert!(
        log.contains("OpReadClockKHR") && log.contains("scope 3"),
        "{log}"
    );
}

#[test]
fn size_of_and_64_bit_switch() {
    let p = build_spirv(&spirv_from_asm(
        "sizeof_switch64.spvasm",
        "1.1",
        Some("opencl2.2"),
    ));
    let sels: Vec<u64> = vec![
        5,
        0x1_0000_0005,
        0xffff_ffff_0000_0000,
        0x8000_0000,
        0,
        0x2_0000_0005,
        0xffff_ffff_8000_0000,
        u64::MAX,
    ];
    let n = sels.len();
    let mut s = bytes_of(&sels);
    let mut out = vec![0u8; n * 8 * 8];
    launch(
        &p,
        "sizeof_switch64",
        &mut [Arg::Buf(&mut s), Arg::Buf(&mut out)],
        n as u64,
        4,
    );
    for (i, &x) in sels.iter().enumerate() {
        let case = match x {
            5 => 0,
            0x1_0000_0005 => 10,
            0xffff_ffff_0000_0000 => 20,
            0x8000_0000 => 30,
            _ => 99,
        };
        // struct {char; int; double3}: int at 4, double3 (32 bytes, 32-aligned) at 32, size
        // 64; float3 takes 16 bytes; short[5] 10.
        let want = [64, 16, 10, case];
        let got: Vec<u64> = (0..4).map(|k| get_u64(&out, 8 * i + k)).collect();
        assert_eq!(got, want, "selector {x:#x}");
    }
}

#[test]
fn mutated_assembly_modules_build_or_fail_cleanly() {
    // Every word of the hand-written modules replaced by a few values: what the frontend
    // accepts must build or fail with a log, never panic (the new instructions' operand
    // handling included).
    for (name, version) in [
        ("int_extended.spvasm", "1.0"),
        ("bit_instructions.spvasm", "1.0"),
        ("memory_and_hints.spvasm", "1.0"),
        ("integer_dot.spvasm", "1.0"),
        ("read_clock.spvasm", "1.0"),
        ("sizeof_switch64.spvasm", "1.1"),
    ] {
        let bytes = spirv_from_asm(name, version, None);
        let words = bytes.len() / 4;
        let (mut built, mut refused) = (0, 0);
        for at in 5..words {
            for value in [0u32, 1, 3, 0xffff_ffff] {
                let mut m = bytes.clone();
                m[at * 4..at * 4 + 4].copy_from_slice(&value.to_le_bytes());
                let Ok(module) = ferrocl_frontend::parse(&m) else {
                    continue;
                };
                let result = std::panic::catch_unwind(|| {
                    ferrocl_codegen::compile(&module, &ferrocl_codegen::BuildOptions::default())
                        .map(|_| ())
                });
                match result {
                    Ok(Ok(())) => built += 1,
                    Ok(Err(e)) => {
                        let log = e.to_string();
                        assert!(
                            log.starts_with("error:") || log.starts_with("internal:"),
                            "{name}: unhelpful log: {log}"
                        );
                        refused += 1;
                    }
                    Err(_) => panic!("{name}: codegen panicked with word {at} set to {value:#x}"),
                }
            }
        }
        assert!(built > 0, "{name}: no mutant built ({refused} refused)");
    }
}

/// llvm-spirv-15 turns LLVM's `switch i1` into an OpSwitch on a bool (not valid SPIR-V, which
/// spirv-val refuses; the Khronos CTS math kernels produce it): cases 0 and 1 build and take
/// the false and true sides; a case 2 is refused with a log.
#[test]
fn switch_on_a_bool_from_llvm_spirv() {
    let module = |cases: &str| {
        format!(
            r#"
               OpCapability Addresses
               OpCapability Kernel
               OpCapability Int64
               OpMemoryModel Physical64 OpenCL
               OpEntryPoint Kernel %main "bool_switch" %gid
               OpDecorate %gid BuiltIn GlobalInvocationId
               OpDecorate %gid Constant
       %uint = OpTypeInt 32 0
      %ulong = OpTypeInt 64 0
       %bool = OpTypeBool
    %v3ulong = OpTypeVector %ulong 3
  %ptr_input = OpTypePointer Input %v3ulong
        %gid = OpVariable %ptr_input Input
      %ptr_u = OpTypePointer CrossWorkgroup %uint
       %void = OpTypeVoid
         %fn = OpTypeFunction %void %ptr_u
     %uint_0 = OpConstant %uint 0
     %uint_1 = OpConstant %uint 1
    %uint_10 = OpConstant %uint 10
    %uint_20 = OpConstant %uint 20
    %uint_99 = OpConstant %uint 99
       %main = OpFunction %void None %fn
        %buf = OpFunctionParameter %ptr_u
      %entry = OpLabel
         %g3 = OpLoad %v3ulong %gid Aligned 32
          %i = OpCompositeExtract %ulong %g3 0
          %p = OpInBoundsPtrAccessChain %ptr_u %buf %i
          %x = OpLoad %uint %p Aligned 4
        %low = OpBitwiseAnd %uint %x %uint_1
          %b = OpINotEqual %bool %low %uint_0
               OpSwitch %low %other {cases}
      %false = OpLabel
               OpBranch %join
       %true = OpLabel
               OpBranch %join
      %other = OpLabel
               OpBranch %join
       %join = OpLabel
          %v = OpPhi %uint %uint_10 %false %uint_20 %true %uint_99 %other
               OpStore %p %v Aligned 4
               OpReturn
               OpFunctionEnd
"#
        )
    };
    let p = build_spirv(&bool_selector(spirv_from_asm_text(&module(
        "0 %false 1 %true",
    ))));
    let mut data = bytes_of(&[4u32, 7, 0, 1, 12, 13, 2, 3]);
    launch(&p, "bool_switch", &mut [Arg::Buf(&mut data)], 8, 4);
    let got: Vec<u32> = (0..8)
        .map(|i| read_int(&data, i, 32, false) as u32)
        .collect();
    assert_eq!(got, [10, 20, 10, 20, 10, 20, 10, 20]);
    let log = codegen_error_or_frontend(&bool_selector(spirv_from_asm_text(&module(
        "0 %false 2 %true",
    ))));
    assert!(
        log.contains("an OpSwitch on a bool can only have cases 0 and 1"),
        "{log}"
    );
}

/// spirv-as refuses a bool selector, so the module switches on `%low` and the selector is
/// replaced by the bool `%b` (the module's one OpINotEqual) in the binary.
fn bool_selector(spirv: Vec<u8>) -> Vec<u8> {
    let mut words: Vec<u32> = spirv
        .chunks_exact(4)
        .map(|c| u32::from_le_bytes(c.try_into().expect("a word")))
        .collect();
    let (mut at, mut bool_id, mut switch_at) = (5, None, None);
    while at < words.len() {
        let (count, opcode) = ((words[at] >> 16) as usize, words[at] & 0xffff);
        match opcode {
            171 => bool_id = Some(words[at + 2]), // OpINotEqual: type, result
            251 => switch_at = Some(at + 1),      // OpSwitch: selector first
            _ => {}
        }
        at += count.max(1);
    }
    words[switch_at.expect("an OpSwitch")] = bool_id.expect("an OpINotEqual");
    words.iter().flat_map(|w| w.to_le_bytes()).collect()
}

/// The build log of a module the frontend or codegen refuses.
fn codegen_error_or_frontend(spirv: &[u8]) -> String {
    match ferrocl_frontend::parse(spirv) {
        Err(e) => e.to_string(),
        Ok(module) => {
            match ferrocl_codegen::compile(&module, &ferrocl_codegen::BuildOptions::default()) {
                Ok(_) => panic!("the module built"),
                Err(e) => e.to_string(),
            }
        }
    }
}
