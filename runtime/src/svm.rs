//! Shared virtual memory, unified SVM (`cl_khr_unified_svm`) and unified shared memory
//! (`cl_intel_unified_shared_memory`): the allocations `clSVMAlloc`,
//! `clSVMAllocWithPropertiesKHR` and `cl*MemAllocINTEL` hand out, the SVM types the device
//! reports, and the context's registry of allocations, ordered by base address so that any
//! pointer into an allocation finds it in O(log n). On a CPU every SVM type and USM kind (host,
//! device, shared) is the same host memory; the type or kind is kept for the queries and for
//! kernels' indirect-access settings.
//! Host and device share one address space, so an SVM pointer is the host address itself:
//! kernels receive it unchanged, and fine-grain system SVM lets them use any host pointer.
//!
//! An allocation is freed when its last holder lets go: `clSVMFree` takes it out of the
//! registry, but the commands and launches that use it hold it until they complete, so a free
//! while a command still runs is deferred instead of pulling memory from under the kernel.
//! `clReleaseContext` drops the registry, freeing what the application leaked.

use crate::host_alloc::HostBlock;
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use opencl_sys::*;

use crate::memory::MEM_ALIGN;
use crate::object::CLResult;

/// What the device offers (CL_DEVICE_SVM_CAPABILITIES), chosen by `FERROCL_SVM`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SvmLevel {
    Off,
    /// Coarse-grain buffers only (`FERROCL_SVM=coarse`, for testing applications' fallbacks).
    CoarseGrain,
    /// Every level: coarse- and fine-grain buffers, fine-grain system memory, SVM atomics.
    FineGrain,
}

impl SvmLevel {
    pub fn capabilities(self) -> cl_device_svm_capabilities {
        (match self {
            SvmLevel::Off => 0,
            SvmLevel::CoarseGrain => CL_DEVICE_SVM_COARSE_GRAIN_BUFFER,
            SvmLevel::FineGrain => {
                CL_DEVICE_SVM_COARSE_GRAIN_BUFFER
                    | CL_DEVICE_SVM_FINE_GRAIN_BUFFER
                    | CL_DEVICE_SVM_FINE_GRAIN_SYSTEM
                    | CL_DEVICE_SVM_ATOMICS
            }
        }) as cl_device_svm_capabilities
    }

    /// `CL_DEVICE_{HOST,DEVICE,SINGLE_DEVICE_SHARED,CROSS_DEVICE_SHARED,SHARED_SYSTEM}_MEM_
    /// CAPABILITIES_INTEL`: every USM kind is host memory the device reaches with the host's
    /// own coherent accesses and atomics, concurrently; system memory only with fine grain.
    pub fn usm_capabilities(self) -> [cl_device_unified_shared_memory_capabilities_intel; 5] {
        let all = CL_UNIFIED_SHARED_MEMORY_ACCESS_INTEL
            | CL_UNIFIED_SHARED_MEMORY_ATOMIC_ACCESS_INTEL
            | CL_UNIFIED_SHARED_MEMORY_CONCURRENT_ACCESS_INTEL
            | CL_UNIFIED_SHARED_MEMORY_CONCURRENT_ATOMIC_ACCESS_INTEL;
        match self {
            SvmLevel::Off => [0; 5],
            SvmLevel::CoarseGrain => [all, all, all, all, 0],
            SvmLevel::FineGrain => [all; 5],
        }
    }

    /// Whether any host pointer may be passed where an SVM pointer is expected.
    pub fn system_pointers(self) -> bool {
        self == SvmLevel::FineGrain
    }

    /// The SVM types of `cl_khr_unified_svm` (`CL_PLATFORM_SVM_TYPE_CAPABILITIES_KHR` and
    /// `CL_DEVICE_SVM_TYPE_CAPABILITIES_KHR`; a type's index is its place here). Coarse grain
    /// has no fine-grain buffer or system type, as `CL_DEVICE_SVM_CAPABILITIES` says.
    pub fn svm_types(self) -> &'static [SvmType] {
        use SvmType::*;
        match self {
            SvmLevel::Off => &[],
            SvmLevel::CoarseGrain => &[CoarseGrainBuffer, Device, Host, SingleDeviceShared],
            SvmLevel::FineGrain => &[
                CoarseGrainBuffer,
                FineGrainBuffer,
                Device,
                Host,
                SingleDeviceShared,
                System,
            ],
        }
    }

    /// The capabilities of SVM type `index`, None past the end of the list.
    pub fn type_capabilities(self, index: u32) -> Option<cl_svm_capabilities_khr> {
        self.svm_types()
            .get(index as usize)
            .map(|t| t.capabilities())
    }
}

/// One SVM type of `cl_khr_unified_svm`: the six the extension's convenience macros name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SvmType {
    CoarseGrainBuffer,
    FineGrainBuffer,
    Device,
    Host,
    SingleDeviceShared,
    System,
}

impl SvmType {
    /// The type's macro (`CL_SVM_TYPE_MACRO_*_KHR`) plus what a CPU gives every allocation of
    /// host memory on top: host memory is coherent and its atomics are the host's, so every
    /// type but coarse grain (whose host access goes through maps) allows concurrent and
    /// concurrent atomic access, the host and shared types atomics and mapping (a no-op), and
    /// every type indirect access (kernels reach all host memory).
    pub fn capabilities(self) -> cl_svm_capabilities_khr {
        const CONCURRENT: cl_svm_capabilities_khr = CL_SVM_CAPABILITY_CONCURRENT_ACCESS_KHR
            | CL_SVM_CAPABILITY_CONCURRENT_ATOMIC_ACCESS_KHR;
        const HOST_SIDE: cl_svm_capabilities_khr = CONCURRENT
            | CL_SVM_CAPABILITY_DEVICE_ATOMIC_ACCESS_KHR
            | CL_SVM_CAPABILITY_HOST_MAP_KHR;
        match self {
            SvmType::CoarseGrainBuffer => {
                CL_SVM_TYPE_MACRO_COARSE_GRAIN_BUFFER_KHR | CL_SVM_CAPABILITY_INDIRECT_ACCESS_KHR
            }
            SvmType::FineGrainBuffer => {
                CL_SVM_TYPE_MACRO_FINE_GRAIN_BUFFER_KHR
                    | CONCURRENT
                    | CL_SVM_CAPABILITY_INDIRECT_ACCESS_KHR
            }
            SvmType::Device => CL_SVM_TYPE_MACRO_DEVICE_KHR | CONCURRENT,
            SvmType::Host => CL_SVM_TYPE_MACRO_HOST_KHR | HOST_SIDE,
            SvmType::SingleDeviceShared => CL_SVM_TYPE_MACRO_SINGLE_DEVICE_SHARED_KHR | HOST_SIDE,
            SvmType::System => CL_SVM_TYPE_MACRO_SYSTEM_KHR,
        }
    }
}

/// What `clSVMAllocWithPropertiesKHR` was told of an allocation.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct UnifiedProperties {
    /// The SVM type index.
    pub type_index: u32,
    /// `CL_SVM_ALLOC_ASSOCIATED_DEVICE_HANDLE_KHR` (0 for none).
    pub device: usize,
    /// `CL_SVM_ALLOC_ACCESS_FLAGS_KHR`.
    pub access: cl_svm_alloc_access_flags_khr,
    /// `CL_SVM_ALLOC_ALIGNMENT_KHR` (0: the largest type's).
    pub alignment: usize,
    /// The property list as given, with its terminator (empty for NULL), for
    /// `CL_SVM_INFO_PROPERTIES_KHR`.
    pub list: Vec<cl_svm_alloc_properties_khr>,
}

impl UnifiedProperties {
    /// CL_INVALID_PROPERTY for an alignment that is no power of two or exceeds the largest
    /// OpenCL type (128 bytes).
    pub fn check_alignment(&self) -> CLResult<()> {
        let align = self.alignment;
        if align != 0 && (!align.is_power_of_two() || align > MEM_ALIGN) {
            return Err(CL_INVALID_PROPERTY);
        }
        Ok(())
    }
}

/// Which API made an allocation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AllocationKind {
    Svm,
    /// `clHostMemAllocINTEL`.
    UsmHost,
    /// `clDeviceMemAllocINTEL`.
    UsmDevice,
    /// `clSharedMemAllocINTEL`.
    UsmShared,
    /// `clSVMAllocWithPropertiesKHR`.
    Unified,
}

impl AllocationKind {
    /// Whether `clSVMFree` frees it: SVM of either API, not USM.
    pub fn is_svm(self) -> bool {
        matches!(self, AllocationKind::Svm | AllocationKind::Unified)
    }

    /// `CL_MEM_ALLOC_TYPE_INTEL`.
    pub fn usm_type(self) -> cl_unified_shared_memory_type_intel {
        match self {
            AllocationKind::Svm | AllocationKind::Unified => CL_MEM_TYPE_UNKNOWN_INTEL,
            AllocationKind::UsmHost => CL_MEM_TYPE_HOST_INTEL,
            AllocationKind::UsmDevice => CL_MEM_TYPE_DEVICE_INTEL,
            AllocationKind::UsmShared => CL_MEM_TYPE_SHARED_INTEL,
        }
    }
}

/// One `clSVMAlloc`, `clSVMAllocWithPropertiesKHR` or USM allocation.
pub struct SvmAllocation {
    base: *mut u8,
    size: usize,
    /// Owns the bytes: freed when the allocation record goes.
    _block: HostBlock,
    /// `cl_svm_mem_flags` for SVM, `CL_MEM_ALLOC_FLAGS_INTEL` for USM.
    pub flags: cl_bitfield,
    pub kind: AllocationKind,
    /// `CL_MEM_ALLOC_DEVICE_INTEL`: the device handle of a device or shared allocation (0
    /// for none); for unified SVM the associated device.
    pub device: usize,
    /// For `clSVMAllocWithPropertiesKHR`, its properties.
    pub unified: Option<UnifiedProperties>,
}

// SAFETY: a plain byte region shared by host and kernels; access is governed by the OpenCL
// memory model (events, or atomics for fine-grain memory), as for buffers.
unsafe impl Send for SvmAllocation {}
// SAFETY: see above.
unsafe impl Sync for SvmAllocation {}

impl SvmAllocation {
    pub fn base(&self) -> usize {
        self.base as usize
    }

    pub fn size(&self) -> usize {
        self.size
    }

    /// The index of its SVM type in `level`'s list (`CL_SVM_INFO_TYPE_INDEX_KHR`): the type
    /// it was allocated as, or for `clSVMAlloc` the coarse- or fine-grain buffer type its
    /// flags ask for; None for USM.
    pub fn svm_type_index(&self, level: SvmLevel) -> Option<u32> {
        let wanted = match (&self.unified, self.kind) {
            (Some(u), _) => return Some(u.type_index),
            (None, AllocationKind::Svm) if self.flags & FINE_GRAIN != 0 => SvmType::FineGrainBuffer,
            (None, AllocationKind::Svm) => SvmType::CoarseGrainBuffer,
            _ => return None,
        };
        level
            .svm_types()
            .iter()
            .position(|t| *t == wanted)
            .map(|i| i as u32)
    }

    /// Whether `[ptr, ptr + len)` lies inside this allocation.
    pub fn contains(&self, ptr: usize, len: usize) -> bool {
        ptr >= self.base()
            && ptr
                .checked_add(len)
                .is_some_and(|end| end <= self.base() + self.size())
    }
}

const ACCESS_FLAGS: cl_svm_mem_flags =
    (CL_MEM_READ_WRITE | CL_MEM_WRITE_ONLY | CL_MEM_READ_ONLY) as cl_svm_mem_flags;
const FINE_GRAIN: cl_svm_mem_flags = CL_MEM_SVM_FINE_GRAIN_BUFFER as cl_svm_mem_flags;
const ATOMICS: cl_svm_mem_flags = CL_MEM_SVM_ATOMICS as cl_svm_mem_flags;

/// A context's SVM allocations by base address.
#[derive(Default)]
pub struct SvmRegistry {
    allocations: Mutex<BTreeMap<usize, Arc<SvmAllocation>>>,
}

impl SvmRegistry {
    fn map(&self) -> std::sync::MutexGuard<'_, BTreeMap<usize, Arc<SvmAllocation>>> {
        self.allocations.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// `clSVMAlloc`: CL_INVALID_VALUE for flags, sizes and alignments the spec refuses (the
    /// caller returns NULL for every error). `alignment` 0 means the largest OpenCL type's
    /// (128 bytes); any larger power of two is honoured too.
    pub fn alloc(
        &self,
        level: SvmLevel,
        flags: cl_svm_mem_flags,
        size: usize,
        alignment: u32,
        max_alloc: u64,
    ) -> CLResult<*mut u8> {
        if level == SvmLevel::Off {
            return Err(CL_INVALID_OPERATION);
        }
        let known = ACCESS_FLAGS | FINE_GRAIN | ATOMICS;
        if flags & !known != 0 || (flags & ACCESS_FLAGS).count_ones() > 1 {
            return Err(CL_INVALID_VALUE);
        }
        // Atomics need fine grain; fine grain needs a device that has it.
        if (flags & ATOMICS != 0 && flags & FINE_GRAIN == 0)
            || (flags & FINE_GRAIN != 0 && level != SvmLevel::FineGrain)
        {
            return Err(CL_INVALID_VALUE);
        }
        if size == 0 || size as u64 > max_alloc {
            return Err(CL_INVALID_VALUE);
        }
        if alignment != 0 && !alignment.is_power_of_two() {
            return Err(CL_INVALID_VALUE);
        }
        self.insert(
            AllocationKind::Svm,
            flags,
            0,
            size,
            alignment as usize,
            None,
        )
    }

    /// `clSVMAllocWithPropertiesKHR` (the caller has read the properties and checked the
    /// device): NULL for size 0, which is no error (`cl_khr_unified_svm`, "Allocating SVM With
    /// Properties"). CL_INVALID_VALUE for a type index past the list, CL_INVALID_PROPERTY for an
    /// alignment that is no power of two or exceeds the largest OpenCL type (128 bytes) and for
    /// a type that needs an associated device without one. Sizes above
    /// `CL_DEVICE_MAX_MEM_ALLOC_SIZE` are allocated if the host has the memory, as the
    /// extension allows.
    pub fn alloc_unified(
        &self,
        level: SvmLevel,
        properties: UnifiedProperties,
        size: usize,
    ) -> CLResult<*mut u8> {
        let caps = level
            .type_capabilities(properties.type_index)
            .ok_or(CL_INVALID_VALUE)?;
        properties.check_alignment()?;
        if properties.device == 0 && caps & CL_SVM_CAPABILITY_DEVICE_UNASSOCIATED_KHR == 0 {
            return Err(CL_INVALID_PROPERTY);
        }
        if size == 0 {
            return Ok(std::ptr::null_mut());
        }
        let (device, align) = (properties.device, properties.alignment);
        self.insert(
            AllocationKind::Unified,
            0,
            device,
            size,
            align,
            Some(properties),
        )
    }

    fn insert(
        &self,
        kind: AllocationKind,
        flags: cl_bitfield,
        device: usize,
        size: usize,
        alignment: usize,
        unified: Option<UnifiedProperties>,
    ) -> CLResult<*mut u8> {
        let align = alignment.max(MEM_ALIGN);
        if !align.is_power_of_two() {
            return Err(CL_INVALID_VALUE);
        }
        let block = HostBlock::zeroed(size, align).ok_or(CL_OUT_OF_HOST_MEMORY)?;
        let base = block.ptr();
        let allocation = Arc::new(SvmAllocation {
            base,
            size,
            _block: block,
            flags,
            kind,
            device,
            unified,
        });
        self.map().insert(base as usize, allocation);
        Ok(base)
    }

    /// `clHostMemAllocINTEL`, `clDeviceMemAllocINTEL` and `clSharedMemAllocINTEL` (the caller
    /// has checked the device and read `CL_MEM_ALLOC_FLAGS_INTEL` from the properties).
    pub fn alloc_usm(
        &self,
        kind: AllocationKind,
        device: usize,
        flags: cl_mem_alloc_flags_intel,
        size: usize,
        alignment: u32,
        max_alloc: u64,
    ) -> CLResult<*mut u8> {
        let placement =
            CL_MEM_ALLOC_INITIAL_PLACEMENT_DEVICE_INTEL | CL_MEM_ALLOC_INITIAL_PLACEMENT_HOST_INTEL;
        let known = CL_MEM_ALLOC_WRITE_COMBINED_INTEL | placement;
        if flags & !known != 0
            || (kind != AllocationKind::UsmShared && flags & placement != 0)
            || flags & placement == placement
        {
            return Err(CL_INVALID_PROPERTY);
        }
        // The largest OpenCL type is 128 bytes (long16/double16).
        if alignment != 0 && (!alignment.is_power_of_two() || alignment as usize > MEM_ALIGN) {
            return Err(CL_INVALID_VALUE);
        }
        if size == 0 || size as u64 > max_alloc {
            return Err(CL_INVALID_BUFFER_SIZE);
        }
        self.insert(kind, flags, device, size, alignment as usize, None)
    }

    /// `clSVMFree` and `clSVMFreeWithPropertiesKHR`: takes the SVM allocation (of
    /// `clSVMAlloc` or `clSVMAllocWithPropertiesKHR`) starting at `ptr` out of the registry;
    /// its memory goes once no command uses it. Returns whether `ptr` was one (NULL, a pointer
    /// freed before or one that was never allocated here are no-ops for `clSVMFree`, as the
    /// spec allows).
    pub fn free(&self, ptr: usize) -> bool {
        let mut map = self.map();
        if map.get(&ptr).is_some_and(|a| a.kind.is_svm()) {
            map.remove(&ptr);
            return true;
        }
        false
    }

    /// `clMemFreeINTEL`: as [`SvmRegistry::free`] for a USM allocation; CL_INVALID_VALUE for a
    /// pointer that is neither NULL nor the base of one. Returns the allocation, which the
    /// caller may wait on (`clMemBlockingFreeINTEL`).
    pub fn free_usm(&self, ptr: usize) -> CLResult<Option<Arc<SvmAllocation>>> {
        if ptr == 0 {
            return Ok(None);
        }
        let mut map = self.map();
        match map.get(&ptr) {
            Some(a) if !a.kind.is_svm() => Ok(map.remove(&ptr)),
            _ => Err(CL_INVALID_VALUE),
        }
    }

    /// Every allocation of the given kinds (a kernel's indirect USM access).
    pub fn of_kinds(&self, kinds: &[AllocationKind]) -> Vec<Arc<SvmAllocation>> {
        self.map()
            .values()
            .filter(|a| kinds.contains(&a.kind))
            .cloned()
            .collect()
    }

    /// The allocation holding byte `ptr`.
    pub fn find(&self, ptr: usize) -> Option<Arc<SvmAllocation>> {
        let map = self.map();
        let (_, a) = map.range(..=ptr).next_back()?;
        (ptr < a.base() + a.size()).then(|| a.clone())
    }

    /// The allocation `[ptr, ptr + len)` lies in, to hold while a command uses it: None for
    /// memory outside every allocation (host memory, which the copy commands accept on either
    /// side); CL_INVALID_VALUE for a range that runs past its allocation's end.
    pub fn holding(&self, ptr: usize, len: usize) -> CLResult<Option<Arc<SvmAllocation>>> {
        match self.find(ptr) {
            Some(a) if a.contains(ptr, len) => Ok(Some(a)),
            Some(_) => Err(CL_INVALID_VALUE),
            None => Ok(None),
        }
    }

    /// Checks `[ptr, ptr + len)` as memory a command may touch: inside one allocation, or, with
    /// fine-grain system SVM, any host memory not straddling an allocation's end. Returns the
    /// allocation to hold while the command runs.
    pub fn resolve(
        &self,
        level: SvmLevel,
        ptr: usize,
        len: usize,
    ) -> CLResult<Option<Arc<SvmAllocation>>> {
        if ptr == 0 {
            return Err(CL_INVALID_VALUE);
        }
        match self.holding(ptr, len)? {
            None if !level.system_pointers() => Err(CL_INVALID_VALUE),
            held => Ok(held),
        }
    }

    /// CL_INVALID_VALUE for a pointer into an allocation whose SVM type cannot be mapped
    /// (`CL_SVM_CAPABILITY_HOST_MAP_KHR`; `cl_khr_unified_svm`'s error for `clEnqueueSVMMap`
    /// and `clEnqueueSVMUnmap`).
    pub fn check_mappable(&self, level: SvmLevel, ptr: usize) -> CLResult<()> {
        let caps = self
            .find(ptr)
            .and_then(|a| a.svm_type_index(level))
            .and_then(|i| level.type_capabilities(i));
        match caps {
            Some(c) if c & CL_SVM_CAPABILITY_HOST_MAP_KHR == 0 => Err(CL_INVALID_VALUE),
            _ => Ok(()),
        }
    }

    pub fn len(&self) -> usize {
        self.map().len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const RW: cl_svm_mem_flags = CL_MEM_READ_WRITE as cl_svm_mem_flags;

    #[test]
    fn interior_pointers_find_their_allocation() {
        let r = SvmRegistry::default();
        let a = r.alloc(SvmLevel::FineGrain, RW, 1000, 0, 1 << 30).unwrap() as usize;
        let b = r.alloc(SvmLevel::FineGrain, RW, 10, 4096, 1 << 30).unwrap() as usize;
        assert_eq!(a % MEM_ALIGN, 0);
        assert_eq!(b % 4096, 0);
        assert_eq!(r.find(a + 999).unwrap().base(), a);
        assert_eq!(r.find(b + 3).unwrap().base(), b);
        assert!(r.find(a + 1000).is_none_or(|x| x.base() != a));
        assert!(r
            .resolve(SvmLevel::FineGrain, a + 10, 990)
            .unwrap()
            .is_some());
        assert_eq!(
            r.resolve(SvmLevel::FineGrain, a + 10, 991).err(),
            Some(CL_INVALID_VALUE)
        );
        let host = [0u8; 4];
        let host = host.as_ptr() as usize;
        assert!(r.resolve(SvmLevel::FineGrain, host, 4).unwrap().is_none());
        assert_eq!(
            r.resolve(SvmLevel::CoarseGrain, host, 4).err(),
            Some(CL_INVALID_VALUE)
        );
    }

    #[test]
    fn free_is_deferred_while_held() {
        let r = SvmRegistry::default();
        let p = r.alloc(SvmLevel::FineGrain, RW, 64, 0, 1 << 30).unwrap();
        let held = r.find(p as usize).unwrap();
        assert!(r.free(p as usize));
        assert!(!r.free(p as usize), "a second free is a no-op");
        assert!(r.is_empty());
        // SAFETY: `held` keeps the 64 bytes allocated after the free.
        unsafe { p.write_bytes(7, 64) };
        assert_eq!(held.size(), 64);
    }

    #[test]
    fn unified_allocations_keep_their_type_and_properties() {
        let r = SvmRegistry::default();
        let level = SvmLevel::FineGrain;
        let props = |type_index, device, alignment| UnifiedProperties {
            type_index,
            device,
            alignment,
            ..UnifiedProperties::default()
        };
        // The device type needs an associated device; the host type does not.
        assert_eq!(
            r.alloc_unified(level, props(2, 0, 0), 8).err(),
            Some(CL_INVALID_PROPERTY)
        );
        assert_eq!(
            r.alloc_unified(level, props(6, 0, 0), 8).err(),
            Some(CL_INVALID_VALUE)
        );
        for align in [3, 256] {
            assert_eq!(
                r.alloc_unified(level, props(3, 0, align), 8).err(),
                Some(CL_INVALID_PROPERTY)
            );
        }
        assert_eq!(
            r.alloc_unified(level, props(3, 0, 0), 0),
            Ok(std::ptr::null_mut())
        );
        let device = r.alloc_unified(level, props(2, 0x1000, 32), 100).unwrap() as usize;
        let host = r.alloc_unified(level, props(3, 0, 0), 100).unwrap() as usize;
        let fine = r.alloc(level, RW | FINE_GRAIN, 100, 0, 1 << 20).unwrap() as usize;
        let coarse = r.alloc(level, RW, 100, 0, 1 << 20).unwrap() as usize;
        let index = |p| r.find(p).unwrap().svm_type_index(level);
        assert_eq!(
            [index(device + 99), index(host), index(fine), index(coarse)],
            [Some(2), Some(3), Some(1), Some(0)]
        );
        assert_eq!(r.find(device).unwrap().device, 0x1000);
        // Device memory cannot be mapped; the others can.
        assert_eq!(r.check_mappable(level, device), Err(CL_INVALID_VALUE));
        assert_eq!(r.check_mappable(level, host + 4), Ok(()));
        assert_eq!(r.check_mappable(level, coarse), Ok(()));
        // clSVMFree frees both APIs' allocations; clMemFreeINTEL neither.
        assert_eq!(r.free_usm(host).err(), Some(CL_INVALID_VALUE));
        assert!(r.free(host) && r.free(device) && r.free(fine) && r.free(coarse));
        assert!(r.is_empty());
    }

    #[test]
    fn every_type_has_its_macro_and_coarse_grain_drops_two() {
        let fine = SvmLevel::FineGrain.svm_types();
        assert_eq!(fine.len(), 6);
        assert_eq!(
            fine[5].capabilities() & CL_SVM_CAPABILITY_SYSTEM_ALLOCATED_KHR,
            CL_SVM_CAPABILITY_SYSTEM_ALLOCATED_KHR
        );
        let coarse = SvmLevel::CoarseGrain.svm_types();
        assert!(!coarse.contains(&SvmType::FineGrainBuffer) && !coarse.contains(&SvmType::System));
        assert!(SvmLevel::Off.svm_types().is_empty());
        assert_eq!(SvmLevel::CoarseGrain.type_capabilities(4), None);
    }

    #[test]
    fn flags_sizes_and_levels() {
        let r = SvmRegistry::default();
        let fine = CL_MEM_SVM_FINE_GRAIN_BUFFER as cl_svm_mem_flags;
        let atomics = CL_MEM_SVM_ATOMICS as cl_svm_mem_flags;
        let alloc = |level, flags, size, align| r.alloc(level, flags, size, align, 1 << 20).err();
        assert_eq!(alloc(SvmLevel::FineGrain, RW, 0, 0), Some(CL_INVALID_VALUE));
        assert_eq!(
            alloc(SvmLevel::FineGrain, RW, 2 << 20, 0),
            Some(CL_INVALID_VALUE)
        );
        assert_eq!(alloc(SvmLevel::FineGrain, RW, 8, 3), Some(CL_INVALID_VALUE));
        assert_eq!(
            alloc(SvmLevel::FineGrain, atomics, 8, 0),
            Some(CL_INVALID_VALUE)
        );
        assert_eq!(
            alloc(SvmLevel::CoarseGrain, fine, 8, 0),
            Some(CL_INVALID_VALUE)
        );
        assert_eq!(
            alloc(
                SvmLevel::FineGrain,
                (CL_MEM_READ_ONLY | CL_MEM_WRITE_ONLY) as _,
                8,
                0
            ),
            Some(CL_INVALID_VALUE)
        );
        assert_eq!(alloc(SvmLevel::Off, RW, 8, 0), Some(CL_INVALID_OPERATION));
        assert_eq!(alloc(SvmLevel::FineGrain, fine | atomics, 8, 0), None);
        assert_eq!(alloc(SvmLevel::CoarseGrain, RW, 8, 0), None);
    }
}
