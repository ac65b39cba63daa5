//! OpenCL C → SPIR-V for Ferrocl at run time: the driver's own recipe (ferrocl-opencl-c's, for the
//! default device as `FERROCL_*` configure it), built once per kernel and run.

use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};

use ferrocl_runtime::config::DeviceConfig;
use ferrocl_runtime::settings::Settings;

/// SPIR-V for `source`, as `clBuildProgram` would make it without options;
/// compiled at its first use in this run. Kept by source: kernels of one entry name (the peak
/// kernels) differ in their source's type definitions.
pub fn compile(source: &str) -> Result<Vec<u8>, String> {
    static DEVICE: OnceLock<DeviceConfig> = OnceLock::new();
    static BUILT: OnceLock<Mutex<HashMap<String, Vec<u8>>>> = OnceLock::new();
    let mut built = BUILT
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|e| e.into_inner());
    if let Some(words) = built.get(source) {
        return Ok(words.clone());
    }
    let device = DEVICE.get_or_init(|| DeviceConfig::detect(&Settings::from_env(), 1));
    let words = device.compile_opencl_c(source, "")?;
    built.insert(source.to_owned(), words.clone());
    Ok(words)
}

/// Instructions in a SPIR-V module (after the 5-word header), following each word count; a
/// zero or overlong count ends the walk.
pub fn instruction_count(bytes: &[u8]) -> usize {
    let words: Vec<u32> = bytes
        .chunks_exact(4)
        .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect();
    let mut at = 5;
    let mut count = 0;
    while let Some(&w) = words.get(at) {
        let n = (w >> 16) as usize;
        if n == 0 || at + n > words.len() {
            break;
        }
        count += 1;
        at += n;
    }
    count
}

#[cfg(test)]
mod instruction_count_tests {
    #[test]
    fn counts_instructions() {
        // Header, OpCapability Kernel (2 words), OpMemoryModel Physical64 OpenCL (3 words).
        let words: [u32; 10] = [
            0x0723_0203,
            0x0001_0000,
            0,
            10,
            0,
            0x0002_0011,
            6,
            0x0003_000e,
            2,
            2,
        ];
        let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
        assert_eq!(super::instruction_count(&bytes), 2);
    }
}
