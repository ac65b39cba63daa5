//! Module shapes from Intel's DPC++ (issue #36) at the frontend's level: alias hints that a link
//! must not turn into undefined ids, a link refused when pointer parameters differ in storage
//! class (only pointee types may differ), and word offsets in diagnostics of a module whose
//! LLVM intrinsic imports were given bodies. (icd/tests/sycl_modules.rs runs such modules.)

use std::collections::HashMap;
use std::path::PathBuf;
use std::process::Command;

/// Assembles SPIR-V assembly with Debian's spirv-as (None when it is not installed).
fn assemble(name: &str, text: &str) -> Option<Vec<u8>> {
    if Command::new("spirv-as").arg("--version").output().is_err() {
        eprintln!("SKIPPED: spirv-as is not installed (Debian package spirv-tools)");
        return None;
    }
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
    let (src, out) = (
        dir.join(format!("sycl-{name}.spvasm")),
        dir.join(format!("sycl-{name}.spv")),
    );
    std::fs::write(&src, text).expect("write .spvasm");
    let res = Command::new("spirv-as")
        .args(["--target-env", "spv1.0"])
        .arg(&src)
        .arg("-o")
        .arg(&out)
        .output()
        .expect("run spirv-as");
    assert!(
        res.status.success(),
        "{}",
        String::from_utf8_lossy(&res.stderr)
    );
    Some(std::fs::read(&out).expect("read assembled module"))
}

const HEAD: &str = "OpCapability Addresses\nOpCapability Linkage\nOpCapability Kernel\n\
                    OpCapability Int64\nOpCapability GenericPointer\n";

#[test]
fn alias_hints_leave_nothing_undefined_behind_a_link() {
    let text = format!(
        "{HEAD}OpCapability MemoryAccessAliasingINTEL\n\
         OpExtension \"SPV_INTEL_memory_access_aliasing\"\n\
         OpMemoryModel Physical64 OpenCL\n\
         OpDecorate %f LinkageAttributes \"f\" Export\n\
         OpDecorate %v NoAliasINTEL %list\n\
         %d = OpAliasDomainDeclINTEL\n%s = OpAliasScopeDeclINTEL %d\n\
         %list = OpAliasScopeListDeclINTEL %s\n\
         %void = OpTypeVoid\n%uint = OpTypeInt 32 0\n\
         %p = OpTypePointer CrossWorkgroup %uint\n%ft = OpTypeFunction %void %p %p\n\
         %f = OpFunction %void None %ft\n%a = OpFunctionParameter %p\n\
         %b = OpFunctionParameter %p\n%e = OpLabel\n\
         %v = OpLoad %uint %a Aligned|AliasScopeINTELMask 4 %list\n\
         OpStore %b %v NoAliasINTELMask %list\n\
         OpCopyMemory %b %a AliasScopeINTELMask|NoAliasINTELMask %list %list\n\
         OpReturn\nOpFunctionEnd\n"
    );
    let Some(module) = assemble("alias-link", &text) else {
        return;
    };
    ferrocl_frontend::parse(&module).unwrap_or_else(|e| panic!("{}", e.log()));
    let none = HashMap::new();
    let linked = ferrocl_frontend::link(&[(module.as_slice(), &none)], true)
        .unwrap_or_else(|e| panic!("{}", e.log()));
    ferrocl_frontend::parse(&linked.spirv).unwrap_or_else(|e| panic!("{}", e.log()));
}

/// A module exporting or importing `void f(<pointer> , <pointer>)`.
fn linkage_module(kind: &str, first: &str, second: &str) -> String {
    let body = if kind == "Export" {
        "%e = OpLabel\nOpReturn\n"
    } else {
        ""
    };
    format!(
        "{HEAD}OpMemoryModel Physical64 OpenCL\n\
         OpDecorate %f LinkageAttributes \"f\" {kind}\n\
         %void = OpTypeVoid\n%float = OpTypeFloat 32\n%S = OpTypeStruct %float\n\
         %gS = OpTypePointer Generic %S\n%gf = OpTypePointer Generic %float\n\
         %cf = OpTypePointer CrossWorkgroup %float\n\
         %ft = OpTypeFunction %void {first} {second}\n\
         %f = OpFunction %void None %ft\n%a = OpFunctionParameter {first}\n\
         %b = OpFunctionParameter {second}\n{body}OpFunctionEnd\n"
    )
}

#[test]
fn pointer_parameters_link_by_storage_class() {
    let Some(export) = assemble("export", &linkage_module("Export", "%gS", "%gf")) else {
        return;
    };
    let none = HashMap::new();
    // Same storage classes, other pointees: linked.
    let import = assemble("import-same", &linkage_module("Import", "%gS", "%gS")).unwrap();
    let linked = ferrocl_frontend::link(&[(&import, &none), (&export, &none)], false)
        .unwrap_or_else(|e| panic!("{}", e.log()));
    ferrocl_frontend::parse(&linked.spirv).unwrap_or_else(|e| panic!("{}", e.log()));
    // Another storage class: refused, naming the rule.
    let import = assemble("import-other", &linkage_module("Import", "%gS", "%cf")).unwrap();
    let Err(e) = ferrocl_frontend::link(&[(&import, &none), (&export, &none)], false) else {
        panic!("a CrossWorkgroup parameter must not link to a Generic one");
    };
    let log = e.log();
    assert!(
        log.contains("import of \"f\" in input program 0")
            && log.contains("does not have the type of its export in input program 1")
            && log.contains("may differ in pointee type, not in storage class"),
        "{log}"
    );
}

#[test]
fn diagnostics_keep_their_word_offsets_when_intrinsics_get_bodies() {
    let text = format!(
        "{HEAD}OpMemoryModel Physical64 OpenCL\n\
         OpDecorate %sat LinkageAttributes \"llvm.uadd.sat.i32\" Import\n\
         %void = OpTypeVoid\n%uint = OpTypeInt 32 0\n%float = OpTypeFloat 32\n\
         %bt = OpTypeFunction %uint %uint %uint\n%gt = OpTypeFunction %uint %uint %float\n\
         %sat = OpFunction %uint None %bt\n%x = OpFunctionParameter %uint\n\
         %y = OpFunctionParameter %uint\nOpFunctionEnd\n\
         %g = OpFunction %uint None %gt\n%a = OpFunctionParameter %uint\n\
         %b = OpFunctionParameter %float\n%e = OpLabel\n\
         %s = OpFunctionCall %uint %sat %a %a\n%bad = OpIAdd %uint %s %b\n\
         OpReturnValue %bad\nOpFunctionEnd\n"
    );
    let Some(module) = assemble("offsets", &text) else {
        return;
    };
    let words: Vec<u32> = module
        .chunks_exact(4)
        .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect();
    // The OpIAdd's offset in the module as given.
    let mut at = 5;
    while words[at] & 0xffff != spirv::Op::IAdd as u32 {
        at += (words[at] >> 16) as usize;
    }
    let Err(ferrocl_frontend::FrontendError::Invalid(diags)) = ferrocl_frontend::parse(&module)
    else {
        panic!("adding a float to an integer must be refused");
    };
    assert_eq!(diags.len(), 1, "{diags:?}");
    assert!(diags[0].instruction.starts_with("OpIAdd"), "{diags:?}");
    assert_eq!(diags[0].word_offset, Some(at), "{diags:?}");
}
