//! Specialization constants frozen by `parse_specialized`: each named constant of a module
//! assembled with `spirv-as` must come out as the plain constant SPIR-V's semantics give, for
//! default and application-set values, and unsupported expressions must fail with a log line
//! naming the instruction.

use std::collections::HashMap;
use std::path::PathBuf;
use std::process::Command;

use ferrocl_frontend::rspirv::dr::Operand;
use ferrocl_frontend::spirv::Op;
use ferrocl_frontend::{parse_specialized, spec_constants, Module, SpecConstantInfo};

fn assemble(name: &str, text: &str) -> Vec<u8> {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
    let src = dir.join(format!("{name}.spvasm"));
    let out = dir.join(format!("{name}.spv"));
    std::fs::write(&src, text).unwrap();
    let res = Command::new("spirv-as")
        .args(["--target-env", "spv1.0"])
        .arg(&src)
        .arg("-o")
        .arg(&out)
        .output()
        .expect("spirv-as (Debian package spirv-tools) is installed");
    assert!(
        res.status.success(),
        "spirv-as: {}",
        String::from_utf8_lossy(&res.stderr)
    );
    std::fs::read(out).unwrap()
}

const HEADER: &str = "
OpCapability Addresses
OpCapability Kernel
OpCapability Int8
OpCapability Int64
OpCapability Float64
OpMemoryModel Physical64 OpenCL
OpEntryPoint Kernel %main \"k\"
OpDecorate %char_m3 SpecId 1
OpDecorate %int_m7 SpecId 2
OpDecorate %yes SpecId 3
%void = OpTypeVoid
%bool = OpTypeBool
%char = OpTypeInt 8 0
%int = OpTypeInt 32 0
%long = OpTypeInt 64 0
%float = OpTypeFloat 32
%double = OpTypeFloat 64
%int2 = OpTypeVector %int 2
%int3 = OpTypeVector %int 3
%fn = OpTypeFunction %void
%char_m3 = OpSpecConstant %char 253
%int_m7 = OpSpecConstant %int 4294967289
%yes = OpSpecConstantTrue %bool
%int_2 = OpConstant %int 2
%int_40 = OpConstant %int 40
%f_m1 = OpConstant %float -1
%f_3 = OpConstant %float 3
%f_big = OpConstant %float 1e10
%f_m5 = OpConstant %float -5
%d_third = OpConstant %double 0.333333333333333314829616256247
";

const FOOTER: &str = "
%main = OpFunction %void None %fn
%entry = OpLabel
OpReturn
OpFunctionEnd
";

fn module(name: &str, body: &str, values: &HashMap<u32, Vec<u8>>) -> Result<Module, String> {
    let words = assemble(name, &format!("{HEADER}{body}{FOOTER}"));
    parse_specialized(&words, values).map_err(|e| e.log())
}

/// The scalar constant named `name` (via `OpName`), as its literal words.
fn scalar(m: &Module, name: &str) -> u64 {
    let inst = m
        .raw
        .types_global_values
        .iter()
        .find(|i| i.result_id.and_then(|id| m.name(id)) == Some(name))
        .unwrap_or_else(|| panic!("no constant named {name}"));
    match (inst.class.opcode, inst.operands.first()) {
        (Op::Constant, Some(Operand::LiteralBit32(v))) => u64::from(*v),
        (Op::Constant, Some(Operand::LiteralBit64(v))) => *v,
        (Op::ConstantTrue, _) => 1,
        (Op::ConstantFalse, _) => 0,
        (op, _) => panic!("{name} is Op{op:?}, not a frozen scalar"),
    }
}

/// The module-scope instruction defining `id`, as rspirv holds it.
fn global(m: &Module, id: u32) -> &ferrocl_frontend::rspirv::dr::Instruction {
    m.raw
        .types_global_values
        .iter()
        .find(|i| i.result_id == Some(id))
        .unwrap_or_else(|| panic!("no module-scope %{id}"))
}

/// The components of the composite constant named `name`.
fn composite(m: &Module, name: &str) -> Vec<u64> {
    let inst = m
        .raw
        .types_global_values
        .iter()
        .find(|i| i.result_id.and_then(|id| m.name(id)) == Some(name))
        .unwrap_or_else(|| panic!("no constant named {name}"));
    assert_eq!(inst.class.opcode, Op::ConstantComposite, "{name}");
    inst.operands
        .iter()
        .map(|o| {
            let Operand::IdRef(id) = o else {
                panic!("constituent")
            };
            let part = global(m, *id);
            match part.operands.first() {
                Some(Operand::LiteralBit32(v)) => u64::from(*v),
                Some(Operand::LiteralBit64(v)) => *v,
                _ => panic!("constituent of {name} is not a scalar constant"),
            }
        })
        .collect()
}

const FOLDS: &str = "
OpName %sconv \"sconv\"
OpName %sdiv \"sdiv\"
OpName %srem \"srem\"
OpName %smod \"smod\"
OpName %sra \"sra\"
OpName %shl_wrap \"shl_wrap\"
OpName %udiv0 \"udiv0\"
OpName %slt \"slt\"
OpName %ult \"ult\"
OpName %frem \"frem\"
OpName %fmod \"fmod\"
OpName %ftos_sat \"ftos_sat\"
OpName %ftou_neg \"ftou_neg\"
OpName %stof \"stof\"
OpName %dtof \"dtof\"
OpName %fneg \"fneg\"
OpName %vadd \"vadd\"
OpName %vins \"vins\"
OpName %sel \"sel\"
OpName %shuf \"shuf\"
%sconv = OpSpecConstantOp %int SConvert %char_m3
%sdiv = OpSpecConstantOp %int SDiv %int_m7 %int_2
%srem = OpSpecConstantOp %int SRem %int_m7 %int_2
%smod = OpSpecConstantOp %int SMod %int_m7 %int_2
%sra = OpSpecConstantOp %int ShiftRightArithmetic %int_m7 %int_2
%shl_wrap = OpSpecConstantOp %int ShiftLeftLogical %int_2 %int_40
%udiv0 = OpSpecConstantOp %int UDiv %int_40 %int_m7
%slt = OpSpecConstantOp %bool SLessThan %int_m7 %int_2
%ult = OpSpecConstantOp %bool ULessThan %int_m7 %int_2
%frem = OpSpecConstantOp %float FRem %f_m1 %f_3
%fmod = OpSpecConstantOp %float FMod %f_m1 %f_3
%ftos_sat = OpSpecConstantOp %int ConvertFToS %f_big
%ftou_neg = OpSpecConstantOp %int ConvertFToU %f_m5
%stof = OpSpecConstantOp %float ConvertSToF %int_m7
%dtof = OpSpecConstantOp %float FConvert %d_third
%fneg = OpSpecConstantOp %float FNegate %f_3
%v = OpSpecConstantComposite %int2 %int_m7 %int_2
%vadd = OpSpecConstantOp %int2 IAdd %v %v
%vins = OpSpecConstantOp %int2 CompositeInsert %int_40 %v 1
%sel = OpSpecConstantOp %int Select %yes %int_40 %int_2
%shuf = OpSpecConstantOp %int3 VectorShuffle %v %vadd 3 0 2
";

#[test]
fn spec_constant_ops_fold_like_spirv_says() {
    let m = module("folds", FOLDS, &HashMap::new()).unwrap();
    assert_eq!(scalar(&m, "sconv"), 0xffff_fffd, "SConvert sign-extends");
    assert_eq!(scalar(&m, "sdiv"), (-3i32) as u32 as u64, "SDiv truncates");
    assert_eq!(
        scalar(&m, "srem"),
        (-1i32) as u32 as u64,
        "SRem: sign of dividend"
    );
    assert_eq!(scalar(&m, "smod"), 1, "SMod: sign of divisor");
    assert_eq!(scalar(&m, "sra"), (-2i32) as u32 as u64);
    assert_eq!(
        scalar(&m, "shl_wrap"),
        2 << 8,
        "shift counts are taken modulo the width"
    );
    assert_eq!(scalar(&m, "udiv0"), 0, "40 / 4294967289 is 0");
    assert_eq!(scalar(&m, "slt"), 1);
    assert_eq!(scalar(&m, "ult"), 0);
    assert_eq!(scalar(&m, "frem"), u64::from((-1.0f32).to_bits()));
    assert_eq!(scalar(&m, "fmod"), u64::from(2.0f32.to_bits()));
    assert_eq!(scalar(&m, "ftos_sat"), i32::MAX as u64, "saturates");
    assert_eq!(scalar(&m, "ftou_neg"), 0, "saturates at 0");
    assert_eq!(scalar(&m, "stof"), u64::from((-7.0f32).to_bits()));
    assert_eq!(scalar(&m, "dtof"), u64::from((1.0f32 / 3.0).to_bits()));
    assert_eq!(scalar(&m, "fneg"), u64::from((-3.0f32).to_bits()));
    let m7 = (-7i32) as u32 as u64;
    assert_eq!(composite(&m, "vadd"), vec![(-14i32) as u32 as u64, 4]);
    assert_eq!(composite(&m, "vins"), vec![m7, 40]);
    assert_eq!(scalar(&m, "sel"), 40);
    assert_eq!(composite(&m, "shuf"), vec![4, m7, (-14i32) as u32 as u64]);
}

#[test]
fn set_values_replace_defaults() {
    let values = HashMap::from([
        (1, vec![5u8]),
        (2, 100u32.to_le_bytes().to_vec()),
        (3, vec![0]),
    ]);
    let m = module("folds-set", FOLDS, &values).unwrap();
    assert_eq!(scalar(&m, "sconv"), 5);
    assert_eq!(scalar(&m, "sdiv"), 50);
    assert_eq!(scalar(&m, "sel"), 2, "flag set to false");
    assert_eq!(composite(&m, "vadd"), vec![200, 4]);
}

#[test]
fn spec_constants_are_listed_with_their_sizes() {
    let words = assemble("list", &format!("{HEADER}{FOOTER}"));
    let mut list = spec_constants(&words).unwrap();
    list.sort_by_key(|c| c.spec_id);
    assert_eq!(
        list,
        vec![
            SpecConstantInfo {
                spec_id: 1,
                size: 1
            },
            SpecConstantInfo {
                spec_id: 2,
                size: 4
            },
            SpecConstantInfo {
                spec_id: 3,
                size: 1
            },
        ]
    );
}

#[test]
fn unsupported_expressions_are_named_in_the_log() {
    let log = module(
        "ptr-op",
        "%ptr = OpTypePointer CrossWorkgroup %int\n%null = OpConstantNull %ptr\n%bad = OpSpecConstantOp %long ConvertPtrToU %null\n",
        &HashMap::new(),
    )
    .err()
    .expect("must be refused");
    assert!(
        log.contains("ConvertPtrToU (a pointer expression) is not supported")
            && log.contains("OpSpecConstantOp %"),
        "{log}"
    );
    let log = module(
        "mixed",
        "%bad = OpSpecConstantOp %int IAdd %int_2 %f_3\n",
        &HashMap::new(),
    )
    .err()
    .expect("must be refused");
    assert!(log.contains("OpSpecConstantOp IAdd"), "{log}");
}

/// The byte offset a re-emitted pointer constant adds to its variable:
/// `ConvertUToPtr(IAdd(ConvertPtrToU(variable), offset))`.
fn pointer_offset(m: &Module, name: &str) -> (u32, u64) {
    let find = |id: u32| global(m, id);
    let inst = m
        .raw
        .types_global_values
        .iter()
        .find(|i| i.result_id.and_then(|id| m.name(id)) == Some(name))
        .unwrap_or_else(|| panic!("no constant named {name}"));
    let ids = |i: &ferrocl_frontend::rspirv::dr::Instruction| -> (Op, Vec<u32>) {
        let Some(Operand::LiteralSpecConstantOpInteger(op)) = i.operands.first() else {
            panic!("{name}: not an OpSpecConstantOp")
        };
        let ids = i.operands[1..]
            .iter()
            .filter_map(|o| {
                if let Operand::IdRef(x) = o {
                    Some(*x)
                } else {
                    None
                }
            })
            .collect();
        (*op, ids)
    };
    let (op, to_ptr) = ids(inst);
    assert_eq!(op, Op::ConvertUToPtr, "{name}");
    let (op, add) = ids(find(to_ptr[0]));
    assert_eq!(op, Op::IAdd, "{name}");
    let (op, var) = ids(find(add[0]));
    assert_eq!(op, Op::ConvertPtrToU, "{name}");
    let offset = match find(add[1]).operands.first() {
        Some(Operand::LiteralBit64(v)) => *v,
        other => panic!("{name}: offset {other:?}"),
    };
    (var[0], offset)
}

#[test]
fn pointer_expressions_become_variable_plus_offset() {
    let body = "
OpName %var \"var\"
OpName %f \"f\"
OpName %g \"g\"
OpName %s_b \"s_b\"
%arr = OpTypeArray %int %int_40
%parr = OpTypePointer CrossWorkgroup %arr
%pint = OpTypePointer CrossWorkgroup %int
%pchar = OpTypePointer CrossWorkgroup %char
%pp = OpTypePointer CrossWorkgroup %pint
%st = OpTypeStruct %char %long %int
%pst = OpTypePointer CrossWorkgroup %st
%plong = OpTypePointer CrossWorkgroup %long
%c8 = OpConstant %long 8
%var = OpVariable %parr CrossWorkgroup
%svar = OpVariable %pst CrossWorkgroup
%b = OpSpecConstantOp %pchar Bitcast %var
%e = OpSpecConstantOp %pchar PtrAccessChain %b %c8
%f = OpSpecConstantOp %pint Bitcast %e
%g = OpSpecConstantOp %pint InBoundsAccessChain %var %int_2
%s_b = OpSpecConstantOp %plong InBoundsAccessChain %svar %int_2
%holder = OpVariable %pp CrossWorkgroup %f
";
    let m = module("pointers", body, &HashMap::new()).unwrap();
    let var = m
        .raw
        .types_global_values
        .iter()
        .find(|i| i.result_id.and_then(|id| m.name(id)) == Some("var"))
        .and_then(|i| i.result_id)
        .unwrap();
    assert_eq!(pointer_offset(&m, "f"), (var, 8), "char* + 8 bytes");
    assert_eq!(pointer_offset(&m, "g"), (var, 8), "&var[2] of ints");
    // struct { char; long; int }: the int member starts at 16 (C layout).
    assert_eq!(pointer_offset(&m, "s_b").1, 16);
}

/// Half spec constants fold in half: one rounding of the exact result, conversions included.
#[test]
fn half_spec_constants_fold_in_half() {
    let text = "
OpCapability Addresses
OpCapability Kernel
OpCapability Float16
OpMemoryModel Physical64 OpenCL
OpEntryPoint Kernel %main \"k\"
OpName %sum \"sum\"
OpName %wide \"wide\"
OpName %from_int \"from_int\"
OpName %narrow \"narrow\"
OpDecorate %h SpecId 7
%void = OpTypeVoid
%bool = OpTypeBool
%int = OpTypeInt 32 0
%half = OpTypeFloat 16
%float = OpTypeFloat 32
%fn = OpTypeFunction %void
%h = OpSpecConstant %half 1
%third = OpConstant %half 0.333251953125
%int_m7 = OpConstant %int 4294967289
%f_big = OpConstant %float 65519.0
%sum = OpSpecConstantOp %half FAdd %h %third
%wide = OpSpecConstantOp %float FConvert %sum
%from_int = OpSpecConstantOp %half ConvertSToF %int_m7
%narrow = OpSpecConstantOp %half FConvert %f_big
%main = OpFunction %void None %fn
%entry = OpLabel
OpReturn
OpFunctionEnd
";
    let words = assemble("half-folds", text);
    let infos = spec_constants(&words).unwrap();
    assert!(
        infos.iter().any(|i| i.spec_id == 7 && i.size == 2),
        "{infos:?}"
    );
    let m = parse_specialized(&words, &HashMap::new())
        .map_err(|e| e.log())
        .unwrap();
    // 1 + 0.333251953125 = 1.333251953125 → 1365.25 half ulps → 0x3d55.
    assert_eq!(scalar(&m, "sum"), 0x3d55);
    assert_eq!(
        scalar(&m, "wide"),
        u64::from((1365.0f32 / 1024.0).to_bits())
    );
    assert_eq!(scalar(&m, "from_int"), 0xc700);
    assert_eq!(scalar(&m, "narrow"), 0x7bff, "65519 rounds down to 65504");
    // Spec value 2.0: 2.333251953125 → 1194.625 ulps of 2^-9 → 1195 → 0x40ab.
    let set = HashMap::from([(7, 0x4000u16.to_le_bytes().to_vec())]);
    let m = parse_specialized(&words, &set)
        .map_err(|e| e.log())
        .unwrap();
    assert_eq!(scalar(&m, "sum"), 0x40ab);
}
