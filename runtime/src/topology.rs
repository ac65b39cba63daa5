//! The machine's CPU topology as sysfs describes it, for partitioning a device by affinity
//! domain: for each CPU, its NUMA node (`/sys/devices/system/node/node*/cpulist`) and the CPUs
//! sharing each level of data cache with it (`/sys/devices/system/cpu/cpu*/cache/index*`).
//! Read once; a machine without these files has no affinity domains (partitioning equally or
//! by counts still works).

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::OnceLock;

use opencl_sys::*;

/// An affinity domain of `CL_DEVICE_PARTITION_BY_AFFINITY_DOMAIN` other than
/// NEXT_PARTITIONABLE (which picks one of these).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AffinityDomain {
    Numa,
    L4,
    L3,
    L2,
    L1,
}

impl AffinityDomain {
    /// In the order `CL_DEVICE_AFFINITY_DOMAIN_NEXT_PARTITIONABLE` tries them (spec).
    pub const OUTERMOST_FIRST: [AffinityDomain; 5] = [
        AffinityDomain::Numa,
        AffinityDomain::L4,
        AffinityDomain::L3,
        AffinityDomain::L2,
        AffinityDomain::L1,
    ];

    pub fn bit(self) -> cl_device_affinity_domain {
        match self {
            AffinityDomain::Numa => CL_DEVICE_AFFINITY_DOMAIN_NUMA,
            AffinityDomain::L4 => CL_DEVICE_AFFINITY_DOMAIN_L4_CACHE,
            AffinityDomain::L3 => CL_DEVICE_AFFINITY_DOMAIN_L3_CACHE,
            AffinityDomain::L2 => CL_DEVICE_AFFINITY_DOMAIN_L2_CACHE,
            AffinityDomain::L1 => CL_DEVICE_AFFINITY_DOMAIN_L1_CACHE,
        }
    }

    pub fn from_bit(bit: cl_device_affinity_domain) -> Option<Self> {
        Self::OUTERMOST_FIRST.into_iter().find(|d| d.bit() == bit)
    }

    /// The cache level, None for NUMA.
    fn cache_level(self) -> Option<usize> {
        match self {
            AffinityDomain::Numa => None,
            AffinityDomain::L4 => Some(4),
            AffinityDomain::L3 => Some(3),
            AffinityDomain::L2 => Some(2),
            AffinityDomain::L1 => Some(1),
        }
    }
}

/// Where one CPU sits.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
struct CpuPlace {
    node: Option<usize>,
    /// The CPUs sharing this CPU's data (or unified) cache of level 1..=4, index level - 1.
    caches: [Option<Vec<usize>>; 4],
}

#[derive(Clone, Debug, Default)]
pub struct Topology {
    cpus: BTreeMap<usize, CpuPlace>,
}

/// "0-3,8,10-11" → [0, 1, 2, 3, 8, 10, 11]; malformed pieces are skipped.
pub fn parse_cpu_list(s: &str) -> Vec<usize> {
    let mut out = Vec::new();
    for piece in s.trim().split(',').filter(|p| !p.is_empty()) {
        match piece.split_once('-') {
            Some((a, b)) => {
                if let (Ok(a), Ok(b)) = (a.trim().parse::<usize>(), b.trim().parse::<usize>()) {
                    // A range of more CPUs than any machine has is garbage, not a request.
                    if b >= a && b - a < 1 << 16 {
                        out.extend(a..=b);
                    }
                }
            }
            None => out.extend(piece.trim().parse::<usize>().ok()),
        }
    }
    out
}

fn read(path: &Path) -> Option<String> {
    std::fs::read_to_string(path).ok()
}

/// The numbers `prefix<N>` of the entries of `dir`.
fn numbered_entries(dir: &Path, prefix: &str) -> Vec<usize> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut found: Vec<usize> = entries
        .filter_map(|e| {
            e.ok()?
                .file_name()
                .to_str()?
                .strip_prefix(prefix)?
                .parse()
                .ok()
        })
        .collect();
    found.sort_unstable();
    found
}

impl Topology {
    /// The machine's topology, read on first use.
    pub fn machine() -> &'static Topology {
        static MACHINE: OnceLock<Topology> = OnceLock::new();
        MACHINE.get_or_init(|| Topology::read_from(Path::new("/sys/devices/system")))
    }

    /// Reads a sysfs tree rooted at `system` (`/sys/devices/system`, or a copy in tests).
    pub fn read_from(system: &Path) -> Topology {
        let mut cpus: BTreeMap<usize, CpuPlace> = BTreeMap::new();
        let cpu_dir = system.join("cpu");
        for cpu in numbered_entries(&cpu_dir, "cpu") {
            let mut place = CpuPlace::default();
            let cache_dir = cpu_dir.join(format!("cpu{cpu}/cache"));
            for index in numbered_entries(&cache_dir, "index") {
                let dir = cache_dir.join(format!("index{index}"));
                let kind = read(&dir.join("type")).unwrap_or_default();
                if kind.trim() == "Instruction" {
                    continue;
                }
                let level: Option<usize> =
                    read(&dir.join("level")).and_then(|s| s.trim().parse().ok());
                let shared = read(&dir.join("shared_cpu_list")).map(|s| parse_cpu_list(&s));
                if let (Some(level @ 1..=4), Some(shared)) = (level, shared) {
                    place.caches[level - 1] = Some(shared);
                }
            }
            cpus.insert(cpu, place);
        }
        let node_dir = system.join("node");
        for node in numbered_entries(&node_dir, "node") {
            let list = read(&node_dir.join(format!("node{node}/cpulist"))).unwrap_or_default();
            for cpu in parse_cpu_list(&list) {
                cpus.entry(cpu).or_default().node = Some(node);
            }
        }
        Topology { cpus }
    }

    /// What identifies the instance of `domain` that `cpu` belongs to.
    fn domain_key(&self, cpu: usize, domain: AffinityDomain) -> Option<Vec<usize>> {
        let place = self.cpus.get(&cpu)?;
        match domain.cache_level() {
            None => place.node.map(|n| vec![n]),
            Some(level) => place.caches[level - 1].clone(),
        }
    }

    /// The compute units (indices into `unit_cpus`, the CPU each unit's worker runs on) grouped
    /// by the instance of `domain` their CPUs share, in order of first appearance; None when the
    /// topology does not describe `domain` for one of the CPUs.
    pub fn group(&self, unit_cpus: &[usize], domain: AffinityDomain) -> Option<Vec<Vec<usize>>> {
        let mut groups: Vec<(Vec<usize>, Vec<usize>)> = Vec::new();
        for (unit, &cpu) in unit_cpus.iter().enumerate() {
            let key = self.domain_key(cpu, domain)?;
            match groups.iter_mut().find(|(k, _)| *k == key) {
                Some((_, units)) => units.push(unit),
                None => groups.push((key, vec![unit])),
            }
        }
        Some(groups.into_iter().map(|(_, units)| units).collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_lists() {
        assert_eq!(parse_cpu_list("0-3,8,10-11\n"), [0, 1, 2, 3, 8, 10, 11]);
        assert_eq!(parse_cpu_list("5"), [5]);
        assert_eq!(parse_cpu_list(""), Vec::<usize>::new());
        assert_eq!(parse_cpu_list("3-1,x,2"), [2]);
    }

    /// A fake sysfs tree: 2 NUMA nodes of 4 CPUs, an L3 per node, an L2 per pair of CPUs
    /// (hyper-threads), an L1 data and instruction cache per pair.
    fn fake_sysfs() -> std::path::PathBuf {
        let root = std::env::temp_dir().join(format!(
            "ferrocl-topology-{}-{:?}",
            std::process::id(),
            std::thread::current().id()
        ));
        let _ = std::fs::remove_dir_all(&root);
        let write = |path: &str, text: &str| {
            let p = root.join(path);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, text).unwrap();
        };
        for cpu in 0..8 {
            let pair = cpu / 2 * 2;
            let node = cpu / 4 * 4;
            let caches = [
                (1, "Data", format!("{pair}-{}", pair + 1)),
                (1, "Instruction", format!("{pair}-{}", pair + 1)),
                (2, "Unified", format!("{pair}-{}", pair + 1)),
                (3, "Unified", format!("{node}-{}", node + 3)),
            ];
            for (i, (level, kind, shared)) in caches.iter().enumerate() {
                let dir = format!("cpu/cpu{cpu}/cache/index{i}");
                write(&format!("{dir}/level"), &format!("{level}\n"));
                write(&format!("{dir}/type"), &format!("{kind}\n"));
                write(&format!("{dir}/shared_cpu_list"), &format!("{shared}\n"));
            }
        }
        write("node/node0/cpulist", "0-3\n");
        write("node/node1/cpulist", "4-7\n");
        root
    }

    #[test]
    fn units_group_by_the_domain_their_cpus_share() {
        let root = fake_sysfs();
        let t = Topology::read_from(&root);
        let all: Vec<usize> = (0..8).collect();
        assert_eq!(
            t.group(&all, AffinityDomain::Numa).unwrap(),
            [vec![0, 1, 2, 3], vec![4, 5, 6, 7]]
        );
        assert_eq!(
            t.group(&all, AffinityDomain::L3).unwrap(),
            [vec![0, 1, 2, 3], vec![4, 5, 6, 7]]
        );
        assert_eq!(t.group(&all, AffinityDomain::L2).unwrap().len(), 4);
        assert_eq!(
            t.group(&all, AffinityDomain::L1).unwrap()[1],
            vec![2, 3],
            "the instruction cache does not count"
        );
        assert_eq!(t.group(&all, AffinityDomain::L4), None);
        // More units than CPUs: units 0 and 8 run on CPU 0.
        let doubled: Vec<usize> = (0..16).map(|u| u % 8).collect();
        assert_eq!(
            t.group(&doubled, AffinityDomain::Numa).unwrap()[0],
            vec![0, 1, 2, 3, 8, 9, 10, 11]
        );
        // A sub-device's units are indices into its own list.
        assert_eq!(
            t.group(&[4, 5, 6], AffinityDomain::L2).unwrap(),
            [vec![0, 1], vec![2]]
        );
        std::fs::remove_dir_all(root).unwrap();
        assert!(Topology::read_from(Path::new("/nonexistent"))
            .cpus
            .is_empty());
    }
}
