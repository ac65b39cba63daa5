//! The one platform, its root CPU device and the sub-devices partitioned from it. A device owns
//! its compute units — one worker thread each of its own `executor::WorkerPool`, with the CPU
//! that worker is pinned to under `FERROCL_PIN_THREADS` — so a sub-device's commands run only
//! on its share of the machine. The platform and the root device live for the whole process (retain/release on
//! them do nothing); sub-devices are reference counted like any other object.

use std::sync::{Arc, OnceLock};

use opencl_sys::*;

use crate::config::DeviceConfig;
use crate::executor::WorkerPool;
use crate::object::{Base, CLResult, Tag};
use crate::settings::Settings;
use crate::topology::{AffinityDomain, Topology};

#[repr(C)]
pub struct Platform {
    base: Base,
    pub devices: Vec<Arc<Device>>,
}
crate::cl_object!(Platform, Platform, CL_INVALID_PLATFORM);

#[repr(C)]
pub struct Device {
    base: Base,
    pub config: DeviceConfig,
    /// Runs work-groups: one worker per compute unit.
    pub pool: WorkerPool,
    /// The CPU of each compute unit: the one its worker is pinned to with
    /// `FERROCL_PIN_THREADS`, and the one affinity domains are looked up for. More units than
    /// CPUs (`FERROCL_THREADS` above the CPU count) share CPUs round-robin.
    pub unit_cpus: Vec<usize>,
    /// The device this one was partitioned from; None for the root device.
    pub parent: Option<Arc<Device>>,
    /// `CL_DEVICE_PARTITION_TYPE`: the partition request that made this sub-device (with the
    /// affinity domain NEXT_PARTITIONABLE chose), empty for the root device.
    pub partition_type: Vec<cl_device_partition_property>,
}
crate::cl_object!(Device, Device, CL_INVALID_DEVICE);

/// A `clCreateSubDevices` request, its syntax already checked.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Partition {
    /// `CL_DEVICE_PARTITION_EQUALLY`: as many sub-devices of this many units as fit.
    Equally(isize),
    /// `CL_DEVICE_PARTITION_BY_COUNTS`: one sub-device per count.
    ByCounts(Vec<isize>),
    /// `CL_DEVICE_PARTITION_BY_AFFINITY_DOMAIN` with this `cl_device_affinity_domain` value.
    ByAffinityDomain(cl_device_affinity_domain),
}

/// How a device splits: the unit indices of each sub-device and the partition type each
/// reports.
pub struct PartitionPlan {
    pub units: Vec<Vec<usize>>,
    pub partition_type: Vec<cl_device_partition_property>,
}

static PLATFORM: OnceLock<Platform> = OnceLock::new();

/// The platform, created on first use (after the icd layer has set the dispatch pointer).
pub fn platform() -> &'static Platform {
    PLATFORM.get_or_init(|| {
        // The FERROCL_* settings are read once, here, when the platform is first used.
        let settings = Settings::from_env();
        let allowed = allowed_cpus();
        let unit_cpus: Vec<usize> = (0..settings.threads)
            .map(|i| allowed.get(i % allowed.len().max(1)).copied().unwrap_or(i))
            .collect();
        let (pool, unit_cpus) =
            match worker_pool("ferrocl-worker", &unit_cpus, settings.pin_threads) {
                Ok(pool) => (pool, unit_cpus),
                Err(_) => (
                    WorkerPool::new("ferrocl-worker", 1, |_| {})
                        .expect("the process cannot start a single thread"),
                    unit_cpus[..1].to_vec(),
                ),
            };
        let device = Arc::new(Device {
            base: Base::new(Tag::Device),
            config: DeviceConfig::detect(&settings, unit_cpus.len()),
            pool,
            unit_cpus,
            parent: None,
            partition_type: Vec::new(),
        });
        Platform {
            base: Base::new(Tag::Platform),
            devices: vec![device],
        }
    })
}

/// A device of its own with `settings` (one worker), for unit tests of features the process's
/// settings leave off.
#[cfg(test)]
pub(crate) fn test_device(settings: &Settings) -> Arc<Device> {
    Arc::new(Device {
        base: Base::new(Tag::Device),
        config: DeviceConfig::detect(settings, 1),
        pool: worker_pool("ferrocl-test-worker", &[0], false).expect("a one-worker pool"),
        unit_cpus: vec![0],
        parent: None,
        partition_type: Vec::new(),
    })
}

/// A pool with one worker per entry of `cpus`, worker `i` pinned to `cpus[i]` when `pin`.
fn worker_pool(name: &str, cpus: &[usize], pin: bool) -> CLResult<WorkerPool> {
    let owned = cpus.to_vec();
    WorkerPool::new(name, cpus.len(), move |i| {
        if pin {
            pin_current_thread(i, owned[i]);
        }
    })
    .map_err(|_| CL_OUT_OF_RESOURCES)
}

impl Platform {
    pub fn is(&self, other: *const Platform) -> bool {
        std::ptr::eq(self, other)
    }
}

impl Device {
    pub fn is_root(&self) -> bool {
        self.parent.is_none()
    }

    pub fn compute_units(&self) -> usize {
        self.unit_cpus.len()
    }

    /// `CL_DEVICE_PARTITION_MAX_SUB_DEVICES`: one sub-device per compute unit at most; 0 when
    /// the device cannot be split.
    pub fn max_sub_devices(&self) -> cl_uint {
        if self.compute_units() >= 2 {
            self.compute_units() as cl_uint
        } else {
            0
        }
    }

    /// The affinity domains that split this device into at least two sub-devices, outermost
    /// first.
    fn partitionable_domains(&self) -> Vec<AffinityDomain> {
        AffinityDomain::OUTERMOST_FIRST
            .into_iter()
            .filter(|&d| {
                Topology::machine()
                    .group(&self.unit_cpus, d)
                    .is_some_and(|g| g.len() >= 2)
            })
            .collect()
    }

    /// `CL_DEVICE_PARTITION_AFFINITY_DOMAIN`: the domains along which the device splits into
    /// at least two sub-devices (and NEXT_PARTITIONABLE when there is one).
    pub fn affinity_domains(&self) -> cl_device_affinity_domain {
        let domains = self.partitionable_domains();
        let mut bits = domains.iter().fold(0, |b, d| b | d.bit());
        if bits != 0 {
            bits |= CL_DEVICE_AFFINITY_DOMAIN_NEXT_PARTITIONABLE;
        }
        bits
    }

    /// `CL_DEVICE_PARTITION_PROPERTIES`: every scheme that gives at least two sub-devices, or
    /// the single 0 the spec asks of a device that cannot be split.
    pub fn partition_properties(&self) -> Vec<cl_device_partition_property> {
        if self.compute_units() < 2 {
            return vec![0];
        }
        let mut schemes = vec![CL_DEVICE_PARTITION_EQUALLY, CL_DEVICE_PARTITION_BY_COUNTS];
        if self.affinity_domains() != 0 {
            schemes.push(CL_DEVICE_PARTITION_BY_AFFINITY_DOMAIN);
        }
        schemes
    }

    /// The sub-devices `request` makes of this device, without creating them (the
    /// `num_devices_ret` half of `clCreateSubDevices` needs only their number).
    pub fn plan_partition(&self, request: &Partition) -> CLResult<PartitionPlan> {
        let units = self.compute_units();
        let all: Vec<usize> = (0..units).collect();
        let plan = match request {
            Partition::Equally(n) => {
                let n = *n;
                if n == 0 {
                    return Err(CL_INVALID_VALUE);
                }
                if n < 0 || n as usize > units {
                    return Err(CL_INVALID_DEVICE_PARTITION_COUNT);
                }
                let n = n as usize;
                PartitionPlan {
                    units: all.chunks_exact(n).map(<[usize]>::to_vec).collect(),
                    partition_type: vec![CL_DEVICE_PARTITION_EQUALLY, n as isize, 0],
                }
            }
            Partition::ByCounts(counts) => {
                if counts.is_empty() {
                    return Err(CL_INVALID_VALUE);
                }
                if counts.iter().any(|&c| c < 0)
                    || counts.len() > units
                    || counts.iter().map(|&c| c as usize).sum::<usize>() > units
                {
                    return Err(CL_INVALID_DEVICE_PARTITION_COUNT);
                }
                let mut next = 0;
                let mut split = Vec::new();
                for &c in counts {
                    split.push((next..next + c as usize).collect());
                    next += c as usize;
                }
                let mut partition_type = vec![CL_DEVICE_PARTITION_BY_COUNTS];
                partition_type.extend(counts);
                partition_type.extend([CL_DEVICE_PARTITION_BY_COUNTS_LIST_END, 0]);
                PartitionPlan {
                    units: split,
                    partition_type,
                }
            }
            Partition::ByAffinityDomain(bits) => {
                let domains = self.partitionable_domains();
                let domain = if *bits == CL_DEVICE_AFFINITY_DOMAIN_NEXT_PARTITIONABLE {
                    domains.first().copied()
                } else {
                    AffinityDomain::from_bit(*bits).filter(|d| domains.contains(d))
                };
                // A domain this device does not split along is "valid but not supported by
                // in_device" (CL_DEVICE_PARTITION_AFFINITY_DOMAIN does not list it).
                let domain = domain.ok_or(CL_INVALID_VALUE)?;
                let groups = Topology::machine()
                    .group(&self.unit_cpus, domain)
                    .ok_or(CL_INVALID_VALUE)?;
                PartitionPlan {
                    units: groups,
                    partition_type: vec![
                        CL_DEVICE_PARTITION_BY_AFFINITY_DOMAIN,
                        domain.bit() as isize,
                        0,
                    ],
                }
            }
        };
        // One sub-device holding every unit is no partition (a one-unit device never splits).
        if plan.units.len() == 1 && plan.units[0].len() == units {
            return Err(CL_DEVICE_PARTITION_FAILED);
        }
        Ok(plan)
    }

    /// Creates the sub-devices of `plan` (from [`Device::plan_partition`] on this device),
    /// each with a pool of its own workers on its units' CPUs.
    pub fn create_sub_devices(self: &Arc<Self>, plan: PartitionPlan) -> CLResult<Vec<Arc<Device>>> {
        plan.units
            .iter()
            .map(|units| {
                let unit_cpus: Vec<usize> = units.iter().map(|&u| self.unit_cpus[u]).collect();
                let pool = worker_pool(
                    "ferrocl-sub-worker",
                    &unit_cpus,
                    self.config.settings.pin_threads,
                )?;
                let mut config = self.config.clone();
                config.compute_units = unit_cpus.len() as cl_uint;
                Ok(Arc::new(Device {
                    base: Base::new(Tag::Device),
                    config,
                    pool,
                    unit_cpus,
                    parent: Some(self.clone()),
                    partition_type: plan.partition_type.clone(),
                }))
            })
            .collect()
    }
}

/// The CPUs this process may run on, in ascending order.
fn allowed_cpus() -> Vec<usize> {
    // SAFETY: cpu_set_t is plain data; sched_getaffinity with pid 0 reads the calling
    // thread's mask into the set passed with its exact size.
    unsafe {
        let mut allowed: libc::cpu_set_t = std::mem::zeroed();
        if libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut allowed) != 0 {
            return vec![0];
        }
        (0..libc::CPU_SETSIZE as usize)
            .filter(|&c| libc::CPU_ISSET(c, &allowed))
            .collect()
    }
}

/// Pins the calling worker thread (`index` in its pool) to `cpu`.
fn pin_current_thread(index: usize, cpu: usize) {
    if cpu >= libc::CPU_SETSIZE as usize {
        return;
    }
    // SAFETY: cpu_set_t is plain data, `cpu` is below CPU_SETSIZE; sched_setaffinity with pid
    // 0 acts on the calling thread and only reads the set passed with its exact size.
    unsafe {
        let mut one: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(cpu, &mut one);
        if libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &one) != 0 {
            eprintln!("ferrocl: FERROCL_PIN_THREADS: could not pin worker {index} to CPU {cpu}");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A device with `units` compute units for partition tests (its pool has one thread: the
    /// plans never run anything).
    fn device_with(units: usize) -> Arc<Device> {
        let root = &platform().devices[0];
        let mut config = root.config.clone();
        config.compute_units = units as cl_uint;
        Arc::new(Device {
            base: Base::new(Tag::Device),
            config,
            pool: worker_pool("ferrocl-test-worker", &[0], false).unwrap(),
            unit_cpus: vec![0; units],
            parent: None,
            partition_type: Vec::new(),
        })
    }

    #[test]
    fn equally_and_by_counts_follow_the_spec() {
        let d = device_with(5);
        let p = d.plan_partition(&Partition::Equally(2)).unwrap();
        assert_eq!(
            p.units,
            [vec![0, 1], vec![2, 3]],
            "the fifth unit is unused"
        );
        assert_eq!(p.partition_type, [CL_DEVICE_PARTITION_EQUALLY, 2, 0]);
        let p = d.plan_partition(&Partition::ByCounts(vec![3, 1])).unwrap();
        assert_eq!(p.units, [vec![0, 1, 2], vec![3]]);
        assert_eq!(
            p.partition_type,
            [CL_DEVICE_PARTITION_BY_COUNTS, 3, 1, 0, 0]
        );
        // A proper part of the device is a partition; the whole device is not.
        assert_eq!(
            d.plan_partition(&Partition::Equally(3))
                .unwrap()
                .units
                .len(),
            1
        );
        assert_eq!(
            d.plan_partition(&Partition::Equally(5)).err(),
            Some(CL_DEVICE_PARTITION_FAILED)
        );
        assert_eq!(
            d.plan_partition(&Partition::ByCounts(vec![5])).err(),
            Some(CL_DEVICE_PARTITION_FAILED)
        );
        for bad in [
            Partition::Equally(6),
            Partition::Equally(-1),
            Partition::ByCounts(vec![3, 3]),
            Partition::ByCounts(vec![-1]),
            Partition::ByCounts(vec![1; 6]),
        ] {
            assert_eq!(
                d.plan_partition(&bad).err(),
                Some(CL_INVALID_DEVICE_PARTITION_COUNT),
                "{bad:?}"
            );
        }
        assert_eq!(
            d.plan_partition(&Partition::Equally(0)).err(),
            Some(CL_INVALID_VALUE)
        );
        assert_eq!(
            d.plan_partition(&Partition::ByCounts(Vec::new())).err(),
            Some(CL_INVALID_VALUE)
        );
        // Every unit on CPU 0: no affinity domain splits the device.
        assert_eq!(d.affinity_domains(), 0);
        assert_eq!(
            d.partition_properties(),
            [CL_DEVICE_PARTITION_EQUALLY, CL_DEVICE_PARTITION_BY_COUNTS]
        );
        assert_eq!(
            d.plan_partition(&Partition::ByAffinityDomain(
                CL_DEVICE_AFFINITY_DOMAIN_NEXT_PARTITIONABLE
            ))
            .err(),
            Some(CL_INVALID_VALUE)
        );
        let one = device_with(1);
        assert_eq!(one.partition_properties(), [0]);
        assert_eq!(one.max_sub_devices(), 0);
        assert_eq!(
            one.plan_partition(&Partition::Equally(1)).err(),
            Some(CL_DEVICE_PARTITION_FAILED)
        );
    }

    #[test]
    fn sub_devices_get_their_own_workers() {
        let d = device_with(3);
        let plan = d.plan_partition(&Partition::ByCounts(vec![2, 1])).unwrap();
        let subs = d.create_sub_devices(plan).unwrap();
        assert_eq!(subs.len(), 2);
        assert_eq!(subs[0].pool.threads(), 2);
        assert_eq!(subs[1].pool.threads(), 1);
        assert_eq!(subs[0].config.compute_units, 2);
        assert!(Arc::ptr_eq(subs[1].parent.as_ref().unwrap(), &d));
        let names = std::sync::Mutex::new(Vec::new());
        let record = |_| {
            let name = std::thread::current().name().map(str::to_owned);
            names.lock().unwrap().push(name.unwrap_or_default());
            Ok(())
        };
        subs[1].pool.run(8, Default::default(), &record).unwrap();
        let names = names.into_inner().unwrap();
        assert_eq!(names.len(), 8);
        assert!(
            names.iter().all(|n| n == "ferrocl-sub-worker-0"),
            "{names:?}"
        );
    }
}
