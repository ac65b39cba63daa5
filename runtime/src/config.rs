//! The device's capability facts: ONE table that every `clGetDeviceInfo` / `clGetPlatformInfo`
//! answer, the build-option checks and the executor read, so what is reported is what runs.

use opencl_sys::*;

/// `CL_MAKE_VERSION(major, minor, patch)`.
pub const fn make_version(major: u32, minor: u32, patch: u32) -> cl_version {
    (major << 22) | (minor << 12) | patch
}

/// One named, versioned capability (extension, IL, OpenCL C version or feature).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NameVersion {
    pub name: String,
    pub version: cl_version,
}

impl NameVersion {
    fn new(name: &str, version: cl_version) -> Self {
        NameVersion {
            name: name.to_owned(),
            version,
        }
    }
}

pub const PLATFORM_NAME: &str = "Ferrocl";
pub const PLATFORM_VENDOR: &str = "Ferrocl project";
pub const PLATFORM_PROFILE: &str = "FULL_PROFILE";
pub const PLATFORM_VERSION: &str = "OpenCL 3.0 Ferrocl";
pub const ICD_SUFFIX: &str = "FCL";
pub const DRIVER_VERSION: &str = env!("CARGO_PKG_VERSION");

/// Extensions that actually work, with the version of each KHR spec implemented.
pub fn extensions() -> Vec<NameVersion> {
    vec![
        NameVersion::new("cl_khr_icd", make_version(1, 0, 0)),
        NameVersion::new("cl_khr_il_program", make_version(1, 0, 0)),
        NameVersion::new("cl_khr_byte_addressable_store", make_version(1, 0, 0)),
        NameVersion::new("cl_khr_fp64", make_version(1, 0, 0)),
        NameVersion::new(
            "cl_khr_spirv_no_integer_wrap_decoration",
            make_version(1, 0, 0),
        ),
    ]
}

/// Space-separated extension string (the form `CL_*_EXTENSIONS` reports).
pub fn extension_string() -> String {
    extensions()
        .iter()
        .map(|e| e.name.as_str())
        .collect::<Vec<_>>()
        .join(" ")
}

/// Every device fact reported through the API.
#[derive(Clone, Debug)]
pub struct DeviceConfig {
    pub name: String,
    pub vendor: String,
    pub vendor_id: cl_uint,
    pub compute_units: cl_uint,
    pub max_work_item_dimensions: cl_uint,
    pub max_work_item_sizes: [usize; 3],
    pub max_work_group_size: usize,
    pub preferred_work_group_size_multiple: usize,
    pub max_clock_frequency: cl_uint,
    pub address_bits: cl_uint,
    pub global_mem_size: cl_ulong,
    pub max_mem_alloc_size: cl_ulong,
    pub mem_base_addr_align_bits: cl_uint,
    pub global_mem_cacheline_size: cl_uint,
    pub global_mem_cache_size: cl_ulong,
    pub local_mem_size: cl_ulong,
    pub max_constant_buffer_size: cl_ulong,
    pub max_constant_args: cl_uint,
    pub max_parameter_size: usize,
    pub single_fp_config: cl_device_fp_config,
    pub double_fp_config: cl_device_fp_config,
    pub half_fp_config: cl_device_fp_config,
    pub profiling_timer_resolution: usize,
    pub printf_buffer_size: usize,
    pub atomic_memory_capabilities: cl_device_atomic_capabilities,
    pub atomic_fence_capabilities: cl_device_atomic_capabilities,
    pub non_uniform_work_group_support: bool,
    pub image_support: bool,
    pub opencl_c_version: &'static str,
    pub opencl_c_all_versions: Vec<NameVersion>,
    pub opencl_c_features: Vec<NameVersion>,
    pub il_versions: Vec<NameVersion>,
    pub extensions: Vec<NameVersion>,
    /// (width for char, short, int, long, float, double, half) preferred and native.
    pub vector_widths: [cl_uint; 7],
    pub queue_properties: cl_command_queue_properties,
    pub device_version: &'static str,
    pub numeric_version: cl_version,
    pub latest_conformance_version_passed: &'static str,
}

/// Physical RAM from /proc/meminfo (the device is the host: its global memory is the RAM).
fn physical_ram() -> u64 {
    std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|s| {
            s.lines().find_map(|l| {
                let rest = l.strip_prefix("MemTotal:")?;
                let kb: u64 = rest.trim().trim_end_matches("kB").trim().parse().ok()?;
                Some(kb * 1024)
            })
        })
        .unwrap_or(1 << 30)
}

fn cpu_model_name() -> String {
    std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|s| {
            s.lines().find_map(|l| {
                let (k, v) = l.split_once(':')?;
                (k.trim() == "model name").then(|| v.trim().to_owned())
            })
        })
        .unwrap_or_else(|| "CPU".to_owned())
}

fn cpu_mhz() -> cl_uint {
    std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|s| {
            s.lines().find_map(|l| {
                let (k, v) = l.split_once(':')?;
                (k.trim() == "cpu MHz").then(|| v.trim().parse::<f64>().ok())?
            })
        })
        .map(|m| m as cl_uint)
        .unwrap_or(1000)
}

/// Thread count of the device's pool: `FERROCL_THREADS` if set to a positive number, else the
/// machine's available parallelism.
pub fn thread_count() -> usize {
    let default = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1);
    match std::env::var("FERROCL_THREADS") {
        Ok(v) => match v.trim().parse::<usize>() {
            Ok(n) if n > 0 => n,
            _ => {
                eprintln!(
                    "ferrocl: FERROCL_THREADS={v:?} is not a positive number; using {default}"
                );
                default
            }
        },
        Err(_) => default,
    }
}

impl DeviceConfig {
    pub fn detect(threads: usize) -> Self {
        let ram = physical_ram();
        let il_versions = ferrocl_frontend::SUPPORTED_SPIRV_VERSIONS
            .iter()
            .map(|&(ma, mi)| NameVersion::new("SPIR-V", make_version(ma as u32, mi as u32, 0)))
            .collect();
        DeviceConfig {
            name: cpu_model_name(),
            vendor: PLATFORM_VENDOR.to_owned(),
            vendor_id: 0, // no registered PCI or Khronos vendor id
            compute_units: threads as cl_uint,
            max_work_item_dimensions: 3,
            max_work_item_sizes: [4096, 4096, 4096],
            max_work_group_size: 4096,
            preferred_work_group_size_multiple: 8,
            max_clock_frequency: cpu_mhz(),
            address_bits: 64,
            global_mem_size: ram,
            // The spec minimum is max(1/4 of global memory, 128 MiB); a host allocation cannot
            // exceed isize::MAX.
            max_mem_alloc_size: (ram / 4).max(128 << 20).min(isize::MAX as u64),
            mem_base_addr_align_bits: 1024,
            global_mem_cacheline_size: 64,
            global_mem_cache_size: 1 << 20,
            local_mem_size: 256 * 1024,
            max_constant_buffer_size: 64 * 1024 * 1024,
            max_constant_args: 8,
            max_parameter_size: 1024,
            single_fp_config: (CL_FP_DENORM
                | CL_FP_INF_NAN
                | CL_FP_ROUND_TO_NEAREST
                | CL_FP_ROUND_TO_ZERO
                | CL_FP_ROUND_TO_INF
                | CL_FP_FMA) as cl_device_fp_config,
            double_fp_config: (CL_FP_DENORM
                | CL_FP_INF_NAN
                | CL_FP_ROUND_TO_NEAREST
                | CL_FP_ROUND_TO_ZERO
                | CL_FP_ROUND_TO_INF
                | CL_FP_FMA) as cl_device_fp_config,
            half_fp_config: 0,
            profiling_timer_resolution: 1,
            printf_buffer_size: 1024 * 1024,
            atomic_memory_capabilities: (CL_DEVICE_ATOMIC_ORDER_RELAXED
                | CL_DEVICE_ATOMIC_SCOPE_WORK_GROUP)
                as cl_device_atomic_capabilities,
            atomic_fence_capabilities: (CL_DEVICE_ATOMIC_ORDER_RELAXED
                | CL_DEVICE_ATOMIC_ORDER_ACQ_REL
                | CL_DEVICE_ATOMIC_SCOPE_WORK_GROUP)
                as cl_device_atomic_capabilities,
            non_uniform_work_group_support: true,
            image_support: false,
            opencl_c_version: "OpenCL C 1.2",
            opencl_c_all_versions: vec![
                NameVersion::new("OpenCL C", make_version(1, 0, 0)),
                NameVersion::new("OpenCL C", make_version(1, 1, 0)),
                NameVersion::new("OpenCL C", make_version(1, 2, 0)),
                NameVersion::new("OpenCL C", make_version(3, 0, 0)),
            ],
            opencl_c_features: vec![
                NameVersion::new("__opencl_c_fp64", make_version(3, 0, 0)),
                NameVersion::new("__opencl_c_int64", make_version(3, 0, 0)),
            ],
            il_versions,
            extensions: extensions(),
            // char short int long float double half
            vector_widths: [16, 8, 4, 2, 4, 2, 0],
            queue_properties: (CL_QUEUE_PROFILING_ENABLE | CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE)
                as cl_command_queue_properties,
            device_version: "OpenCL 3.0 Ferrocl",
            numeric_version: make_version(3, 0, 0),
            latest_conformance_version_passed: "v0000-01-01-00",
        }
    }

    /// `CL_DEVICE_IL_VERSION`: "SPIR-V_1.0 SPIR-V_1.1 …".
    pub fn il_version_string(&self) -> String {
        self.il_versions
            .iter()
            .map(|v| {
                format!(
                    "{}_{}.{}",
                    v.name,
                    v.version >> 22,
                    (v.version >> 12) & 0x3ff
                )
            })
            .collect::<Vec<_>>()
            .join(" ")
    }

    pub fn extension_string(&self) -> String {
        self.extensions
            .iter()
            .map(|e| e.name.as_str())
            .collect::<Vec<_>>()
            .join(" ")
    }

    /// Whether OpenCL C sources can be compiled: decided at runtime by finding clang.
    pub fn compiler_available(&self) -> bool {
        ferrocl_frontend::opencl_c_compiler_available()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn il_versions_come_from_the_frontend() {
        let c = DeviceConfig::detect(2);
        assert_eq!(
            c.il_versions.len(),
            ferrocl_frontend::SUPPORTED_SPIRV_VERSIONS.len()
        );
        assert!(c.il_version_string().starts_with("SPIR-V_1.0 SPIR-V_1.1"));
        assert!(c.il_version_string().ends_with("SPIR-V_1.6"));
        assert_eq!(make_version(3, 0, 0), 0xC00000);
        assert!(c.max_mem_alloc_size <= c.global_mem_size.max(128 << 20));
    }

    #[test]
    fn clang_sees_exactly_the_device_language_features() {
        let c = DeviceConfig::detect(2);
        // Extensions that are not OpenCL C language features.
        let api_only = [
            "cl_khr_icd",
            "cl_khr_il_program",
            "cl_khr_spirv_no_integer_wrap_decoration",
        ];
        let mut want: Vec<&str> = c
            .extensions
            .iter()
            .map(|e| e.name.as_str())
            .filter(|n| !api_only.contains(n))
            .chain(c.opencl_c_features.iter().map(|f| f.name.as_str()))
            .collect();
        let mut got = ferrocl_frontend::OPENCL_C_EXTENSIONS.to_vec();
        want.sort_unstable();
        got.sort_unstable();
        assert_eq!(want, got);
    }
}
