//! Frontend tests on modules built in memory: the accept path with kernel metadata, and one
//! module per rejection rule, each expecting its diagnostic.

use rspirv::binary::Assemble;
use rspirv::dr::{Builder, Operand};
use spirv::{
    AddressingModel, Capability, Decoration, ExecutionMode, ExecutionModel, FunctionControl,
    MemoryModel, StorageClass,
};

use crate::{parse, AddressQualifier, ArgKind, FrontendError};

struct Knobs {
    addressing: AddressingModel,
    extra_capability: Option<Capability>,
    recursive: bool,
    signed_int: bool,
}

impl Default for Knobs {
    fn default() -> Self {
        Knobs {
            addressing: AddressingModel::Physical64,
            extra_capability: None,
            recursive: false,
            signed_int: false,
        }
    }
}

/// `kernel void k(global float *out, local int *scratch, float s, constant float4 *w)`,
/// with reqd_work_group_size(8,1,1) and a helper function it calls.
fn module(knobs: Knobs) -> Vec<u8> {
    let mut b = Builder::new();
    b.set_version(1, 0);
    b.capability(Capability::Addresses);
    b.capability(Capability::Kernel);
    b.capability(Capability::Int64);
    if let Some(c) = knobs.extra_capability {
        b.capability(c);
    }
    b.ext_inst_import("OpenCL.std");
    b.memory_model(knobs.addressing, MemoryModel::OpenCL);
    let void = b.type_void();
    let float = b.type_float(32, None);
    let int = b.type_int(32, u32::from(knobs.signed_int));
    let v4 = b.type_vector(float, 4);
    let p_global = b.type_pointer(None, StorageClass::CrossWorkgroup, float);
    let p_local = b.type_pointer(None, StorageClass::Workgroup, int);
    let p_const = b.type_pointer(None, StorageClass::UniformConstant, v4);
    let kernel_ty = b.type_function(void, vec![p_global, p_local, float, p_const]);
    let helper_ty = b.type_function(void, vec![]);

    let helper = b.id();
    let kernel = b
        .begin_function(void, None, FunctionControl::NONE, kernel_ty)
        .expect("function");
    let out = b.function_parameter(p_global).expect("param");
    b.function_parameter(p_local).expect("param");
    let s = b.function_parameter(float).expect("param");
    b.function_parameter(p_const).expect("param");
    b.begin_block(None).expect("block");
    b.store(out, s, None, []).expect("store");
    b.function_call(void, None, helper, []).expect("call");
    b.ret().expect("ret");
    b.end_function().expect("end");

    b.begin_function(void, Some(helper), FunctionControl::NONE, helper_ty)
        .expect("function");
    b.begin_block(None).expect("block");
    if knobs.recursive {
        b.function_call(void, None, helper, []).expect("call");
    }
    b.ret().expect("ret");
    b.end_function().expect("end");

    b.entry_point(ExecutionModel::Kernel, kernel, "k", []);
    b.execution_mode(kernel, ExecutionMode::LocalSize, [8, 1, 1]);
    b.name(s, "scale");
    b.decorate(
        out,
        Decoration::FuncParamAttr,
        [Operand::FunctionParameterAttribute(
            spirv::FunctionParameterAttribute::NoAlias,
        )],
    );
    b.module()
        .assemble()
        .iter()
        .flat_map(|w| w.to_le_bytes())
        .collect()
}

/// The build log of a module the frontend refuses.
pub(crate) fn log_of(bytes: &[u8]) -> String {
    match parse(bytes) {
        Ok(_) => panic!("module was accepted"),
        Err(e) => e.log(),
    }
}

#[test]
fn accepts_a_valid_kernel_and_reads_its_metadata() {
    let m = parse(&module(Knobs::default())).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(m.version, (1, 0));
    assert_eq!(m.kernels.len(), 1);
    let k = &m.kernels[0];
    assert_eq!(k.name, "k");
    assert_eq!(k.reqd_work_group_size, Some([8, 1, 1]));
    assert_eq!(k.attributes(), "reqd_work_group_size(8,1,1)");
    let kinds: Vec<&ArgKind> = k.args.iter().map(|a| &a.kind).collect();
    assert_eq!(
        kinds,
        [
            &ArgKind::Buffer {
                address: AddressQualifier::Global
            },
            &ArgKind::Local,
            &ArgKind::Value { size: 4, align: 4 },
            &ArgKind::Buffer {
                address: AddressQualifier::Constant
            },
        ]
    );
    assert!(k.args[0].qualifiers.is_restrict);
    assert_eq!(k.args[2].name.as_deref(), Some("scale"));
    assert!(!k.uses_barrier);
}

#[test]
fn rejects_bytes_that_are_not_spirv() {
    assert!(matches!(parse(&[]), Err(FrontendError::NotSpirv(w)) if w.contains("zero length")));
    assert!(
        matches!(parse(&[1, 2, 3]), Err(FrontendError::NotSpirv(w)) if w.contains("multiple of 4"))
    );
    assert!(matches!(parse(&[0; 8]), Err(FrontendError::NotSpirv(w)) if w.contains("header")));
    assert!(matches!(parse(&[0; 20]), Err(FrontendError::NotSpirv(w)) if w.contains("magic")));
}

#[test]
fn accepts_byte_swapped_modules() {
    let bytes = module(Knobs::default());
    let swapped: Vec<u8> = bytes
        .chunks(4)
        .flat_map(|c| [c[3], c[2], c[1], c[0]])
        .collect();
    assert!(parse(&swapped).is_ok());
}

#[test]
fn rejects_truncated_and_zero_count_instructions() {
    let bytes = module(Knobs::default());
    let mut truncated = bytes.clone();
    // An OpNop claiming 5 words with only its first word present.
    truncated.extend_from_slice(&0x0005_0000u32.to_le_bytes());
    assert!(
        log_of(&truncated).contains("past the end of the module"),
        "{}",
        log_of(&truncated)
    );
    let cut = &bytes[..bytes.len() - 8];
    assert!(log_of(cut).contains("malformed"), "{}", log_of(cut));
    let mut zero = bytes.clone();
    zero[20..24].copy_from_slice(&0x0000_0011u32.to_le_bytes());
    assert!(log_of(&zero).contains("word count 0"));
}

#[test]
fn rejects_unsupported_versions() {
    let mut bytes = module(Knobs::default());
    bytes[4..8].copy_from_slice(&0x0001_0700u32.to_le_bytes());
    assert!(
        log_of(&bytes).contains("1.7) is not supported"),
        "{}",
        log_of(&bytes)
    );
}

#[test]
fn rejects_physical32_naming_the_rule() {
    let log = log_of(&module(Knobs {
        addressing: AddressingModel::Physical32,
        ..Knobs::default()
    }));
    assert!(
        log.contains("env 4: Physical32 addressing is not supported"),
        "{log}"
    );
    assert!(log.contains("OpMemoryModel"), "{log}");
}

#[test]
fn rejects_capabilities_the_device_lacks() {
    let log = log_of(&module(Knobs {
        extra_capability: Some(Capability::PipeStorage),
        ..Knobs::default()
    }));
    assert!(
        log.contains("capability PipeStorage is not supported"),
        "{log}"
    );
}

/// The gate allows what the device says (the runtime's feature table): a capability it turns
/// off is refused with the rule it gives, one it does not list as unsupported.
#[test]
fn the_device_decides_what_capabilities_pass() {
    use crate::{parse_for_device, DeviceSupport};
    let with_float64 = module(Knobs {
        extra_capability: Some(Capability::Float64),
        ..Knobs::default()
    });
    let values = std::collections::HashMap::new();
    parse_for_device(&with_float64, &values, &DeviceSupport::IMPLEMENTED).expect("accepted");
    let capabilities = [Capability::Addresses, Capability::Kernel, Capability::Int64];
    let turned_off = [(Capability::Float64, "env 3: Float64 is off here".to_owned())];
    let device = DeviceSupport {
        capabilities: &capabilities,
        extensions: &[],
        turned_off: &turned_off,
    };
    let log = parse_for_device(&with_float64, &values, &device)
        .err()
        .expect("refused")
        .log();
    assert_eq!(
        log,
        "error: env 3: Float64 is off here [OpCapability Float64]\n"
    );
    let without = DeviceSupport {
        turned_off: &[],
        ..device
    };
    let log = parse_for_device(&with_float64, &values, &without)
        .err()
        .expect("refused")
        .log();
    assert!(log.contains("capability Float64 is not supported"), "{log}");
    let plain = module(Knobs::default());
    parse_for_device(&plain, &values, &device).expect("accepted");
}

#[test]
fn rejects_signed_integer_types() {
    let log = log_of(&module(Knobs {
        signed_int: true,
        ..Knobs::default()
    }));
    assert!(log.contains("signedness must be 0"), "{log}");
}

#[test]
fn rejects_recursion() {
    let log = log_of(&module(Knobs {
        recursive: true,
        ..Knobs::default()
    }));
    assert!(log.contains("recursion is not allowed"), "{log}");
}

#[test]
fn never_panics_on_mutated_modules() {
    // Every single-word corruption of a real module must give Ok or a diagnostic.
    let bytes = module(Knobs::default());
    let words = bytes.len() / 4;
    for at in 5..words {
        for value in [0u32, 1, 0xffff_ffff, 0x0001_0000, 0x7fff_0011, 0x0003_0047] {
            let mut m = bytes.clone();
            m[at * 4..at * 4 + 4].copy_from_slice(&value.to_le_bytes());
            let _ = parse(&m);
        }
    }
}

#[test]
fn rejects_unterminated_strings_and_ids_past_the_bound() {
    let bytes = module(Knobs::default());
    let words: Vec<u32> = bytes
        .chunks(4)
        .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect();
    let to_bytes = |w: &[u32]| -> Vec<u8> { w.iter().flat_map(|w| w.to_le_bytes()).collect() };
    // The OpExtInstImport "OpenCL.std" string with its NUL (and padding) overwritten.
    let mut at = 5;
    while words[at] & 0xffff != 11 {
        at += (words[at] >> 16) as usize;
    }
    let count = (words[at] >> 16) as usize;
    let mut w = words.clone();
    w[at + count - 1] = u32::from_le_bytes(*b"abcd");
    assert_eq!(
        log_of(&to_bytes(&w)),
        format!("error: SPIR-V 2.2.1: the literal string of OpExtInstImport is not NUL-terminated inside the instruction [at word {at}]\n")
    );
    // A bound one too small for the ids the module uses.
    let mut w = words.clone();
    w[3] -= 1;
    let log = log_of(&to_bytes(&w));
    assert!(
        log.contains(&format!("is not below the module's id bound {}", w[3])),
        "{log}"
    );
}

#[test]
fn deep_type_nesting_is_refused_without_deep_recursion() {
    // 5 000 nested array types (rspirv's builder is quadratic in types; the frontend is not):
    // layout code, which recurses over types, must never see them.
    let mut b = Builder::new();
    b.set_version(1, 0);
    b.capability(Capability::Addresses);
    b.capability(Capability::Kernel);
    b.memory_model(AddressingModel::Physical64, MemoryModel::OpenCL);
    let int = b.type_int(32, 0);
    let two = b.constant_bit32(int, 2);
    let mut t = int;
    for _ in 0..5_000 {
        t = b.type_array(t, two);
    }
    let bytes: Vec<u8> = b
        .module()
        .assemble()
        .iter()
        .flat_map(|w| w.to_le_bytes())
        .collect();
    let log = log_of(&bytes);
    assert!(
        log.contains("types nested more than 64 levels deep are not supported"),
        "{log}"
    );
}

#[test]
fn malformed_instructions_give_their_word_offset() {
    let bytes = module(Knobs::default());
    let mut words: Vec<u32> = bytes
        .chunks(4)
        .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect();
    // Give the third instruction an opcode that does not exist.
    let mut at = 5;
    for _ in 0..2 {
        at += (words[at] >> 16) as usize;
    }
    words[at] = (words[at] & 0xffff_0000) | 0xfff0;
    let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
    assert_eq!(
        log_of(&bytes),
        format!("error: SPIR-V 2.3: malformed instruction: unknown opcode 65520 [at word {at}]\n")
    );
}
