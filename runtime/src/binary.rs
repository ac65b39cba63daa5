//! Program binaries (`CL_PROGRAM_BINARIES`, `clCreateProgramWithBinary`). A binary is the
//! program's SPIR-V, still a valid module, with its binary type (compiled object, library or
//! executable) recorded in one `OpModuleProcessed "ferrocl binary type: …"` instruction, so that
//! a binary loaded again reports the `CL_PROGRAM_BINARY_TYPE` it was saved with (API spec,
//! clGetProgramBuildInfo). Binaries without the record (plain SPIR-V given as a binary) load as
//! compiled objects.

use opencl_sys::{
    cl_program_binary_type, CL_PROGRAM_BINARY_TYPE_COMPILED_OBJECT,
    CL_PROGRAM_BINARY_TYPE_EXECUTABLE, CL_PROGRAM_BINARY_TYPE_LIBRARY,
};

const MAGIC: u32 = 0x0723_0203;
const HEADER_WORDS: usize = 5;
const OP_MODULE_PROCESSED: u32 = 330;
const PREFIX: &str = "ferrocl binary type: ";

/// Opcodes of the sections before `OpModuleProcessed`'s place (SPIR-V 2.4: capabilities,
/// extensions, imports, memory model, entry points, execution modes, then the debug strings,
/// sources and names); the record goes after the last of them.
const BEFORE_RECORD: &[u32] = &[
    17,  // OpCapability
    10,  // OpExtension
    11,  // OpExtInstImport
    14,  // OpMemoryModel
    15,  // OpEntryPoint
    16,  // OpExecutionMode
    331, // OpExecutionModeId
    7,   // OpString
    4,   // OpSourceExtension
    3,   // OpSource
    2,   // OpSourceContinued
    5,   // OpName
    6,   // OpMemberName
    OP_MODULE_PROCESSED,
];

fn type_name(ty: cl_program_binary_type) -> Option<&'static str> {
    match ty {
        CL_PROGRAM_BINARY_TYPE_COMPILED_OBJECT => Some("compiled object"),
        CL_PROGRAM_BINARY_TYPE_LIBRARY => Some("library"),
        CL_PROGRAM_BINARY_TYPE_EXECUTABLE => Some("executable"),
        _ => None,
    }
}

/// Little-endian SPIR-V words, or None for anything else (a big-endian module is passed
/// through without a record).
fn words(bytes: &[u8]) -> Option<Vec<u32>> {
    if !bytes.len().is_multiple_of(4) || bytes.len() < HEADER_WORDS * 4 {
        return None;
    }
    let w: Vec<u32> = bytes
        .chunks_exact(4)
        .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect();
    (w[0] == MAGIC).then_some(w)
}

fn bytes(words: &[u32]) -> Vec<u8> {
    words.iter().flat_map(|w| w.to_le_bytes()).collect()
}

/// The instructions after the header as (start word, word count, opcode); stops at a
/// malformed instruction (the frontend reports those when the module is built).
fn instructions(words: &[u32]) -> Vec<(usize, usize, u32)> {
    let mut out = Vec::new();
    let mut at = HEADER_WORDS;
    while at < words.len() {
        let count = (words[at] >> 16) as usize;
        if count == 0 || at + count > words.len() {
            break;
        }
        out.push((at, count, words[at] & 0xffff));
        at += count;
    }
    out
}

/// The literal string of an `OpModuleProcessed` at `start` (of `count` words).
fn processed_text(words: &[u32], start: usize, count: usize) -> String {
    let raw = bytes(&words[start + 1..start + count]);
    let end = raw.iter().position(|&b| b == 0).unwrap_or(raw.len());
    String::from_utf8_lossy(&raw[..end]).into_owned()
}

/// `spirv` with the record of `ty` (replacing an earlier one); `spirv` unchanged if it is not
/// a little-endian module or `ty` is not a binary type.
pub fn with_type(spirv: &[u8], ty: cl_program_binary_type) -> Vec<u8> {
    let (Some(name), Some(w)) = (type_name(ty), words(spirv)) else {
        return spirv.to_vec();
    };
    let w = strip(&w);
    let insts = instructions(&w);
    let at = insts
        .iter()
        .find(|&&(_, _, op)| !BEFORE_RECORD.contains(&op))
        .map_or(w.len(), |&(start, _, _)| start);
    let mut text = format!("{PREFIX}{name}").into_bytes();
    text.push(0);
    text.resize(text.len().next_multiple_of(4), 0);
    let mut record = vec![(((1 + text.len() / 4) as u32) << 16) | OP_MODULE_PROCESSED];
    record.extend(
        text.chunks_exact(4)
            .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]])),
    );
    let mut out = w[..at].to_vec();
    out.extend(record);
    out.extend(&w[at..]);
    bytes(&out)
}

/// The words without any binary-type record.
fn strip(w: &[u32]) -> Vec<u32> {
    let mut out = w[..HEADER_WORDS].to_vec();
    let insts = instructions(w);
    let end = insts.last().map_or(HEADER_WORDS, |&(s, c, _)| s + c);
    for (start, count, op) in insts {
        if !(op == OP_MODULE_PROCESSED && processed_text(w, start, count).starts_with(PREFIX)) {
            out.extend(&w[start..start + count]);
        }
    }
    // Trailing words of a malformed instruction stay for the frontend to report.
    out.extend(&w[end..]);
    out
}

/// A loaded binary split into its SPIR-V (without the record) and the binary type it records.
pub fn split_type(binary: &[u8]) -> (Vec<u8>, Option<cl_program_binary_type>) {
    let Some(w) = words(binary) else {
        return (binary.to_vec(), None);
    };
    let insts = instructions(&w);
    let ty = insts.iter().find_map(|&(start, count, op)| {
        let text = (op == OP_MODULE_PROCESSED).then(|| processed_text(&w, start, count))?;
        let name = text.strip_prefix(PREFIX)?;
        [
            CL_PROGRAM_BINARY_TYPE_COMPILED_OBJECT,
            CL_PROGRAM_BINARY_TYPE_LIBRARY,
            CL_PROGRAM_BINARY_TYPE_EXECUTABLE,
        ]
        .into_iter()
        .map(|t| t as cl_program_binary_type)
        .find(|&t| type_name(t) == Some(name))
    });
    (bytes(&strip(&w)), ty)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Header, OpCapability Addresses, OpName %1 "x", OpDecorate %1 … (a stand-in), OpNop.
    fn module() -> Vec<u8> {
        let name = u32::from_le_bytes(*b"x\0\0\0");
        bytes(&[
            MAGIC,
            0x0001_0000,
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
            let w = words(&b).unwrap();
            let ops: Vec<u32> = instructions(&w).iter().map(|i| i.2).collect();
            assert_eq!(ops, [17, 5, OP_MODULE_PROCESSED, 71, 0]);
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
}
