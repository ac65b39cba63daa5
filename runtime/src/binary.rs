//! Program binaries (`CL_PROGRAM_BINARIES`, `clCreateProgramWithBinary`). A binary is the
//! program's SPIR-V, still a valid module, with its binary type (compiled object, library or
//! executable) recorded in one `OpModuleProcessed "ferrocl binary type: …"` instruction, so that
//! a binary loaded again reports the `CL_PROGRAM_BINARY_TYPE` it was saved with (API spec,
//! clGetProgramBuildInfo). Binaries without the record (plain SPIR-V given as a binary) load as
//! compiled objects.

use ferrocl_frontend::{
    is_spirv, module_processed, with_module_processed, without_module_processed,
};
use opencl_sys::{
    cl_program_binary_type, CL_PROGRAM_BINARY_TYPE_COMPILED_OBJECT,
    CL_PROGRAM_BINARY_TYPE_EXECUTABLE, CL_PROGRAM_BINARY_TYPE_LIBRARY,
};

const PREFIX: &str = "ferrocl binary type: ";

const TYPES: [(u32, &str); 3] = [
    (CL_PROGRAM_BINARY_TYPE_COMPILED_OBJECT, "compiled object"),
    (CL_PROGRAM_BINARY_TYPE_LIBRARY, "library"),
    (CL_PROGRAM_BINARY_TYPE_EXECUTABLE, "executable"),
];

fn to_bytes(words: &[u32]) -> Vec<u8> {
    words.iter().flat_map(|w| w.to_le_bytes()).collect()
}

/// `spirv` with the record of `ty` (replacing an earlier one); `spirv` unchanged if it is not
/// a SPIR-V module or `ty` is not a binary type.
pub fn with_type(spirv: &[u8], ty: cl_program_binary_type) -> Vec<u8> {
    let name = TYPES.iter().find(|&&(t, _)| t == ty).map(|&(_, n)| n);
    let (Some(name), Ok(words)) = (name, is_spirv(spirv)) else {
        return spirv.to_vec();
    };
    let plain = without_module_processed(&words, PREFIX);
    to_bytes(&with_module_processed(&plain, &format!("{PREFIX}{name}")))
}

/// A loaded binary split into its SPIR-V (without the record) and the binary type it records.
pub fn split_type(binary: &[u8]) -> (Vec<u8>, Option<cl_program_binary_type>) {
    let Ok(words) = is_spirv(binary) else {
        return (binary.to_vec(), None);
    };
    let ty = module_processed(&words).iter().find_map(|text| {
        let name = text.strip_prefix(PREFIX)?;
        TYPES.iter().find(|&&(_, n)| n == name).map(|&(t, _)| t)
    });
    (to_bytes(&without_module_processed(&words, PREFIX)), ty)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Header (SPIR-V 1.1, the first version with `OpModuleProcessed`), OpCapability
    /// Addresses, OpName %1 "x", OpDecorate %1 … (a stand-in), OpNop.
    fn module() -> Vec<u8> {
        let name = u32::from_le_bytes(*b"x\0\0\0");
        to_bytes(&[
            0x0723_0203,
            0x0001_0100,
            0,
            10,
            0,
            (2 << 16) | 17,
            4,
            (3 << 16) | 5,
            1,
            name,
            (3 << 16) | 71,
            1,
            44,
            (1 << 16),
        ])
    }

    /// The opcodes of a module's instructions, in order.
    fn opcodes(bytes: &[u8]) -> Vec<u32> {
        let words = is_spirv(bytes).unwrap();
        let mut out = Vec::new();
        let mut at = 5;
        while at < words.len() {
            out.push(words[at] & 0xffff);
            at += (words[at] >> 16) as usize;
        }
        out
    }

    #[test]
    fn types_round_trip_and_the_record_sits_after_the_names() {
        let m = module();
        for ty in [
            CL_PROGRAM_BINARY_TYPE_COMPILED_OBJECT,
            CL_PROGRAM_BINARY_TYPE_LIBRARY,
            CL_PROGRAM_BINARY_TYPE_EXECUTABLE,
        ] {
            let ty = ty as cl_program_binary_type;
            let b = with_type(&m, ty);
            // OpCapability, OpName, OpModuleProcessed, OpDecorate, OpNop.
            assert_eq!(opcodes(&b), [17, 5, 330, 71, 0]);
            assert_eq!(split_type(&b), (m.clone(), Some(ty)));
            // Saving again replaces the record.
            let again = with_type(&b, CL_PROGRAM_BINARY_TYPE_EXECUTABLE as _);
            let (plain, t) = split_type(&again);
            assert_eq!(
                (plain, t),
                (m.clone(), Some(CL_PROGRAM_BINARY_TYPE_EXECUTABLE as _))
            );
        }
    }

    #[test]
    fn plain_spirv_and_other_bytes_carry_no_type() {
        let m = module();
        assert_eq!(split_type(&m), (m.clone(), None));
        assert_eq!(split_type(&[1, 2, 3]), (vec![1, 2, 3], None));
        // No binary type, no record.
        assert_eq!(with_type(&m, 0), m);
    }

    #[test]
    fn a_spirv_1_0_binary_becomes_1_1() {
        let mut m = module();
        m[4..8].copy_from_slice(&0x0001_0000u32.to_le_bytes());
        let b = with_type(&m, CL_PROGRAM_BINARY_TYPE_EXECUTABLE as _);
        assert_eq!(b[4..8], 0x0001_0100u32.to_le_bytes());
        assert_eq!(
            split_type(&b).1,
            Some(CL_PROGRAM_BINARY_TYPE_EXECUTABLE as _)
        );
    }
}
