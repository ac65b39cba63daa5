//! `cl_intel_devicelib_assert` (DPC++'s `sycl/doc/design/Assert.md`): a module may import
//! [`DEVICELIB_ASSERT_FAIL`] without linking anything (link.rs `provided_by_device`), and
//! codegen calls the driver's implementation. Its declaration must have the extension's
//! signature, `void __devicelib_assert_fail(const char *expr, const char *file, int32_t line,
//! const char *func, size_t gid0, size_t gid1, size_t gid2, size_t lid0, size_t lid1, size_t
//! lid2)`: the strings are pointers to 8-bit integers of any storage class (DPC++ passes
//! Generic ones; every address is a host address on this device) and `size_t` is 64 bits wide
//! (Physical64, the one addressing model the device takes). Any other declaration of the name
//! is refused here with the signature it should have, so codegen never hands the host
//! arguments of another shape.

use super::*;
use crate::link::DEVICELIB_ASSERT_FAIL;

/// What a parameter of `__devicelib_assert_fail` is.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Param {
    /// A NUL-terminated string: a pointer to 8-bit integers.
    Str,
    I32,
    /// `size_t`: a 64-bit integer.
    SizeT,
}

const ASSERT_FAIL_PARAMS: [(&str, Param); 10] = [
    ("expr", Param::Str),
    ("file", Param::Str),
    ("line", Param::I32),
    ("func", Param::Str),
    ("gid0", Param::SizeT),
    ("gid1", Param::SizeT),
    ("gid2", Param::SizeT),
    ("lid0", Param::SizeT),
    ("lid1", Param::SizeT),
    ("lid2", Param::SizeT),
];

impl Checker<'_> {
    /// A function declaration (no blocks): if it is `__devicelib_assert_fail`, its result and
    /// parameters must be the extension's.
    pub(super) fn device_function_declaration(&mut self, f: &Function, def: &Instruction) {
        let Some(id) = def.result_id else { return };
        if self.m.linkage_name(id) != Some(DEVICELIB_ASSERT_FAIL) {
            return;
        }
        let ret = def.result_type.unwrap_or(0);
        let params: Vec<Word> = f
            .parameters
            .iter()
            .map(|p| p.result_type.unwrap_or(0))
            .collect();
        let fits = matches!(self.ty(ret), Some(Type::Void))
            && params.len() == ASSERT_FAIL_PARAMS.len()
            && params
                .iter()
                .zip(ASSERT_FAIL_PARAMS)
                .all(|(&t, (_, want))| self.assert_param_fits(t, want));
        if fits {
            return;
        }
        let want: Vec<String> = ASSERT_FAIL_PARAMS
            .iter()
            .map(|(name, p)| {
                let ty = match p {
                    Param::Str => "i8*",
                    Param::I32 => "i32",
                    Param::SizeT => "i64",
                };
                format!("{ty} {name}")
            })
            .collect();
        let found: Vec<String> = params.iter().map(|&t| self.type_name(t)).collect();
        let rule = format!(
            "cl_intel_devicelib_assert: {DEVICELIB_ASSERT_FAIL} must be declared void({}) (the strings may point into any storage class), found {}({})",
            want.join(", "),
            self.type_name(ret),
            found.join(", ")
        );
        self.report(def, rule);
    }

    fn assert_param_fits(&self, ty: Word, want: Param) -> bool {
        match (self.ty(ty), want) {
            (Some(Type::Pointer { pointee, .. }), Param::Str) => {
                matches!(self.ty(*pointee), Some(Type::Int { width: 8 }))
            }
            (Some(Type::Int { width: 32 }), Param::I32) => true,
            (Some(Type::Int { width: 64 }), Param::SizeT) => true,
            _ => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use rspirv::binary::Assemble;
    use rspirv::dr::{Builder, Operand};
    use spirv::{
        AddressingModel, Capability, Decoration, ExecutionModel, FunctionControl, LinkageType,
        MemoryModel, StorageClass,
    };

    use crate::tests::log_of;
    use crate::{link, parse, unresolved_imports, SpecValues, DEVICELIB_ASSERT_FAIL};

    /// A parameter's type in [`module`]: (storage of an i8 pointer | integer width).
    #[derive(Clone, Copy)]
    enum P {
        Ptr(StorageClass),
        Int(u32),
    }

    const RIGHT: [P; 10] = [
        P::Ptr(StorageClass::Generic),
        P::Ptr(StorageClass::Generic),
        P::Int(32),
        P::Ptr(StorageClass::Generic),
        P::Int(64),
        P::Int(64),
        P::Int(64),
        P::Int(64),
        P::Int(64),
        P::Int(64),
    ];

    /// A kernel calling `name`, imported as `ret(params)` (`ret` an integer width, 0 for
    /// void), with null pointers and zeros.
    fn module(name: &str, ret: u32, params: &[P]) -> Vec<u8> {
        let mut b = Builder::new();
        b.set_version(1, 0);
        for c in [
            Capability::Addresses,
            Capability::Linkage,
            Capability::Kernel,
            Capability::Int64,
            Capability::Int8,
            Capability::GenericPointer,
        ] {
            b.capability(c);
        }
        b.memory_model(AddressingModel::Physical64, MemoryModel::OpenCL);
        let void = b.type_void();
        let i8_t = b.type_int(8, 0);
        let ret_t = if ret == 0 { void } else { b.type_int(ret, 0) };
        let mut types = Vec::new();
        let mut args = Vec::new();
        for &p in params {
            let t = match p {
                P::Ptr(storage) => b.type_pointer(None, storage, i8_t),
                P::Int(width) => b.type_int(width, 0),
            };
            types.push(t);
            args.push(match p {
                P::Ptr(_) => b.constant_null(t),
                P::Int(64) => b.constant_bit64(t, 0),
                P::Int(_) => b.constant_bit32(t, 42),
            });
        }
        let f_t = b.type_function(ret_t, types.clone());
        let k_t = b.type_function(void, vec![]);
        let f = b
            .begin_function(ret_t, None, FunctionControl::NONE, f_t)
            .unwrap();
        for &t in &types {
            b.function_parameter(t).unwrap();
        }
        b.end_function().unwrap();
        b.decorate(
            f,
            Decoration::LinkageAttributes,
            [
                Operand::LiteralString(name.into()),
                Operand::LinkageType(LinkageType::Import),
            ],
        );
        let k = b
            .begin_function(void, None, FunctionControl::NONE, k_t)
            .unwrap();
        b.begin_block(None).unwrap();
        b.function_call(ret_t, None, f, args).unwrap();
        b.ret().unwrap();
        b.end_function().unwrap();
        b.entry_point(ExecutionModel::Kernel, k, "k", []);
        b.module()
            .assemble()
            .iter()
            .flat_map(|w| w.to_le_bytes())
            .collect()
    }

    #[test]
    fn the_import_is_provided_by_the_device() {
        let bytes = module(DEVICELIB_ASSERT_FAIL, 0, &RIGHT);
        let m = parse(&bytes).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(unresolved_imports(&m), Vec::<String>::new());
        // The strings may point into any storage class.
        let mut other = RIGHT;
        other[0] = P::Ptr(StorageClass::CrossWorkgroup);
        other[1] = P::Ptr(StorageClass::UniformConstant);
        other[3] = P::Ptr(StorageClass::Function);
        let m = parse(&module(DEVICELIB_ASSERT_FAIL, 0, &other)).unwrap_or_else(|e| panic!("{e}"));
        assert!(unresolved_imports(&m).is_empty());
        // Linking keeps it as the device's, not as an unresolved import.
        let none = SpecValues::new();
        let linked = link(&[(&bytes, &none)], false).unwrap_or_else(|e| panic!("{e}"));
        assert!(linked.unresolved.is_empty());
        // Another unmangled name with the same signature is still unresolved.
        let m = parse(&module("__devicelib_assert_read", 0, &RIGHT)).unwrap();
        let unresolved = unresolved_imports(&m);
        assert_eq!(unresolved.len(), 1);
        assert!(unresolved[0].contains("__devicelib_assert_read"));
    }

    #[test]
    fn a_declaration_of_another_signature_is_refused_naming_it() {
        let mut wide_line = RIGHT;
        wide_line[2] = P::Int(64);
        let mut int_pointer = RIGHT;
        int_pointer[4] = P::Ptr(StorageClass::Generic);
        let mut narrow_id = RIGHT;
        narrow_id[9] = P::Int(32);
        let cases: [(u32, &[P]); 5] = [
            (0, &wide_line),
            (0, &int_pointer),
            (0, &narrow_id),
            (0, &RIGHT[..9]),
            (32, &RIGHT),
        ];
        for (ret, params) in cases {
            let log = log_of(&module(DEVICELIB_ASSERT_FAIL, ret, params));
            assert!(
                log.contains(
                    "cl_intel_devicelib_assert: __devicelib_assert_fail must be declared void(i8* expr, i8* file, i32 line, i8* func, i64 gid0, i64 gid1, i64 gid2, i64 lid0, i64 lid1, i64 lid2)"
                ),
                "{log}"
            );
            assert!(log.contains("found "), "{log}");
        }
        let log = log_of(&module(DEVICELIB_ASSERT_FAIL, 0, &wide_line));
        assert!(
            log.contains("found void(Generic i8*, Generic i8*, i64, Generic i8*, i64"),
            "{log}"
        );
    }
}
