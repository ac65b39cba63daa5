//! Sub-groups: built-ins of every type, votes and ballots, vectors, divergence, dispatch, misuse.

use super::half::{half_f64, is_half_nan, narrow_ref, HalfMode};
use super::*;

/// OpenCL C 3.0 with sub-groups and every sub-group extension.
const CL3_SUB_GROUPS: Language = Language {
    options: "-cl-std=CL3.0",
    extensions: &[
        "__opencl_c_subgroups",
        "cl_khr_subgroups",
        "cl_khr_subgroup_extended_types",
        "cl_khr_subgroup_non_uniform_vote",
        "cl_khr_subgroup_ballot",
        "cl_khr_subgroup_non_uniform_arithmetic",
        "cl_khr_subgroup_shuffle",
        "cl_khr_subgroup_shuffle_relative",
        "cl_khr_subgroup_clustered_reduce",
        "cl_khr_subgroup_rotate",
        "__opencl_c_int64",
        "cl_khr_fp64",
        "__opencl_c_fp64",
        "cl_khr_fp16",
    ],
    debug_info: false,
};

fn sub_group_program(recipe: Recipe) -> &'static Program {
    type Cache = std::sync::Mutex<std::collections::HashMap<bool, &'static Program>>;
    static CACHE: OnceLock<Cache> = OnceLock::new();
    let key = matches!(recipe, Recipe::Optimized);
    let mut cache = CACHE
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|p| p.into_inner());
    // Leaked on purpose: the programs live as long as the test binary.
    cache
        .entry(key)
        .or_insert_with(|| Box::leak(Box::new(build_with("subgroups.cl", recipe, CL3_SUB_GROUPS))))
}

/// Launch shapes: local sizes that are and are not multiples of the sub-group size, a smaller
/// last work-group, a work-group smaller than a sub-group, 2-D and 3-D groups.
const SUB_GROUP_SHAPES: &[(u32, [u64; 3], [u64; 3])] = &[
    (1, [22, 1, 1], [10, 1, 1]),
    (1, [16, 1, 1], [8, 1, 1]),
    (1, [3, 1, 1], [3, 1, 1]),
    (2, [6, 4, 1], [3, 2, 1]),
    (3, [6, 2, 3], [3, 1, 3]),
];

/// One sub-group as the host sees it.
struct HostSubGroup {
    /// Global linear ids in lane order.
    members: Vec<usize>,
    /// Index of the sub-group in its work-group.
    index: usize,
    /// Work-items in the work-group, and in an enqueued (full) work-group.
    group_items: usize,
    enqueued_items: usize,
}

/// The sub-groups of an NDRange: each work-group's work-items in linear local order, cut into
/// runs of `SUB_GROUP_SIZE`.
fn host_sub_groups(global: [u64; 3], local: [u64; 3]) -> Vec<HostSubGroup> {
    let size = ferrocl_codegen::SUB_GROUP_SIZE as usize;
    let groups = [0, 1, 2].map(|d| global[d].div_ceil(local[d]));
    let mut out = Vec::new();
    for gz in 0..groups[2] {
        for gy in 0..groups[1] {
            for gx in 0..groups[0] {
                let g = [gx, gy, gz];
                let ls = [0, 1, 2].map(|d| (global[d] - g[d] * local[d]).min(local[d]));
                let mut items = Vec::new();
                for z in 0..ls[2] {
                    for y in 0..ls[1] {
                        for x in 0..ls[0] {
                            let id = [x, y, z];
                            let gid = [0, 1, 2].map(|d| g[d] * local[d] + id[d]);
                            items.push(
                                ((gid[2] * global[1] + gid[1]) * global[0] + gid[0]) as usize,
                            );
                        }
                    }
                }
                let group_items = items.len();
                for (index, chunk) in items.chunks(size).enumerate() {
                    out.push(HostSubGroup {
                        members: chunk.to_vec(),
                        index,
                        group_items,
                        enqueued_items: (local[0] * local[1] * local[2]) as usize,
                    });
                }
            }
        }
    }
    out
}

#[test]
fn sub_group_built_ins() {
    let size = ferrocl_codegen::SUB_GROUP_SIZE as usize;
    both(|r| {
        let p = sub_group_program(r);
        for &(dims, global, local) in SUB_GROUP_SHAPES {
            let n = (global[0] * global[1] * global[2]) as usize;
            let mut out = vec![u32::MAX; n * 7];
            let (mut args, _) = Args::new(p, "sg_ids");
            args.ptr(p, "sg_ids", 0, &mut out);
            launch(p, "sg_ids", &args, dims, [0; 3], global, local);
            for sg in host_sub_groups(global, local) {
                for (lane, &g) in sg.members.iter().enumerate() {
                    let want = [
                        sg.members.len(),
                        size.min(sg.enqueued_items),
                        sg.group_items.div_ceil(size),
                        sg.enqueued_items.div_ceil(size),
                        sg.index,
                        lane,
                        sg.index * size + lane,
                    ]
                    .map(|v| v as u32);
                    assert_eq!(
                        &out[g * 7..g * 7 + 7],
                        &want,
                        "{r:?} {global:?}/{local:?} item {g}"
                    );
                }
            }
        }
    });
}

/// Element types of the sub-group arithmetic tests, with the host reference operations.
trait SubGroupElem: Copy + PartialEq + std::fmt::Debug + Default {
    const NAME: &'static str;
    fn sample(i: usize) -> Self;
    fn from_small(v: u8) -> Self;
    fn add(self, o: Self) -> Self;
    fn mul(self, o: Self) -> Self;
    fn lesser(self, o: Self) -> Self;
    fn greater(self, o: Self) -> Self;
    const MIN_IDENTITY: Self;
    const MAX_IDENTITY: Self;
    /// Bitwise and, or, xor (integers only).
    fn bits(self, o: Self, op: usize) -> Self;
    const ALL_ONES: Self;
    /// The value's bits (tells -0.0 from 0.0).
    fn raw(self) -> u64;
}

macro_rules! int_elem {
    ($($t:ty),*) => {$(
        impl SubGroupElem for $t {
            const NAME: &'static str = stringify!($t);
            fn sample(i: usize) -> Self {
                (i as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15).rotate_left(17) as $t
            }
            fn from_small(v: u8) -> Self { v as $t }
            fn add(self, o: Self) -> Self { self.wrapping_add(o) }
            fn mul(self, o: Self) -> Self { self.wrapping_mul(o) }
            fn lesser(self, o: Self) -> Self { Ord::min(self, o) }
            fn greater(self, o: Self) -> Self { Ord::max(self, o) }
            const MIN_IDENTITY: Self = <$t>::MAX;
            const MAX_IDENTITY: Self = <$t>::MIN;
            fn bits(self, o: Self, op: usize) -> Self {
                match op { 0 => self & o, 1 => self | o, _ => self ^ o }
            }
            const ALL_ONES: Self = !0;
            fn raw(self) -> u64 { self as u64 }
        }
    )*};
}
int_elem!(i8, u8, i16, u16, i32, u32, i64, u64);

macro_rules! float_elem {
    ($($t:ty),*) => {$(
        impl SubGroupElem for $t {
            const NAME: &'static str = stringify!($t);
            fn sample(i: usize) -> Self {
                // Some -0.0: a scan's first lane must keep its sign.
                if i % 5 == 0 { -0.0 } else { ((i * 37 % 23) as $t - 11.0) * 0.75 }
            }
            fn from_small(v: u8) -> Self { v as $t }
            fn add(self, o: Self) -> Self { self + o }
            fn mul(self, o: Self) -> Self { self * o }
            fn lesser(self, o: Self) -> Self { <$t>::min(self, o) }
            fn greater(self, o: Self) -> Self { <$t>::max(self, o) }
            const MIN_IDENTITY: Self = <$t>::INFINITY;
            const MAX_IDENTITY: Self = <$t>::NEG_INFINITY;
            fn bits(self, _: Self, _: usize) -> Self { unreachable!("no bitwise float ops") }
            const ALL_ONES: Self = 0.0;
            fn raw(self) -> u64 { self.to_bits() as u64 }
        }
    )*};
}
float_elem!(f32, f64);

/// A half as its encoding. Like the device's lane-order fold, the reference rounds every sum
/// and product to half as it is formed (the f64 sum or product of two halves is exact, so one
/// rounding gives the correctly rounded half operation). Every run of 4 samples is 312.5, x,
/// 312.5, 2^-7: the product overflows to infinity at its second step where an f32 fold rounded
/// once would give about 763·x, and sums round (625 + x has a 0.5 ulp).
#[derive(Clone, Copy, Debug, Default)]
struct Half(u16);

impl PartialEq for Half {
    /// Equal values (either zero for min/max), or both NaN (inf · 0 may come up).
    fn eq(&self, o: &Self) -> bool {
        half_f64(self.0) == half_f64(o.0) || (is_half_nan(self.0) && is_half_nan(o.0))
    }
}

impl Half {
    fn of(v: f64) -> Half {
        Half(narrow_ref(v, HalfMode::Rte))
    }
    fn value(self) -> f64 {
        half_f64(self.0)
    }
}

impl SubGroupElem for Half {
    const NAME: &'static str = "half";
    fn sample(i: usize) -> Self {
        Half::of(match i % 4 {
            _ if i % 13 == 5 => -0.0,
            0 | 2 => 312.5,
            3 => 0.0078125,
            _ => ((i * 37 % 23) as f64 - 11.0) * 0.75,
        })
    }
    fn from_small(v: u8) -> Self {
        Half::of(f64::from(v))
    }
    fn add(self, o: Self) -> Self {
        Half::of(self.value() + o.value())
    }
    fn mul(self, o: Self) -> Self {
        Half::of(self.value() * o.value())
    }
    fn lesser(self, o: Self) -> Self {
        if self.value().is_nan() || o.value() < self.value() {
            o
        } else {
            self
        }
    }
    fn greater(self, o: Self) -> Self {
        if self.value().is_nan() || o.value() > self.value() {
            o
        } else {
            self
        }
    }
    const MIN_IDENTITY: Self = Half(0x7c00);
    const MAX_IDENTITY: Self = Half(0xfc00);
    fn bits(self, _: Self, _: usize) -> Self {
        unreachable!("no bitwise half ops")
    }
    const ALL_ONES: Self = Half(0);
    fn raw(self) -> u64 {
        u64::from(self.0)
    }
}

/// Folds `f` over the values of the lanes `take` accepts, in lane order, starting from the
/// first of them; `identity` when there is none.
fn fold_lanes<T: Copy>(
    xs: &[T],
    take: impl Fn(usize) -> bool,
    identity: T,
    f: impl Fn(T, T) -> T,
) -> T {
    let mut taken = xs
        .iter()
        .enumerate()
        .filter(|(j, _)| take(*j))
        .map(|(_, &v)| v);
    match taken.next() {
        Some(first) => taken.fold(first, f),
        None => identity,
    }
}

/// Runs `sg_<cl_type>` and checks every output against the host reference.
fn check_sub_group_type<T: SubGroupElem>(r: Recipe, cl_type: &str, integer: bool) {
    let p = sub_group_program(r);
    let kernel = format!("sg_{cl_type}");
    let size = ferrocl_codegen::SUB_GROUP_SIZE as usize;
    for &(dims, global, local) in SUB_GROUP_SHAPES {
        let n = (global[0] * global[1] * global[2]) as usize;
        let mut input: Vec<T> = (0..n).map(T::sample).collect();
        let mut out = vec![T::default(); n * 32];
        let mut bits = vec![T::default(); n * 9];
        let (mut args, _) = Args::new(p, &kernel);
        args.ptr(p, &kernel, 0, &mut input);
        args.ptr(p, &kernel, 1, &mut out);
        if integer {
            args.ptr(p, &kernel, 2, &mut bits);
        }
        launch(p, &kernel, &args, dims, [0; 3], global, local);
        for sg in host_sub_groups(global, local) {
            let xs: Vec<T> = sg.members.iter().map(|&g| input[g]).collect();
            let cnt = xs.len();
            for (l, &g) in sg.members.iter().enumerate() {
                let o = &out[g * 32..g * 32 + 32];
                let at = |what: &str| {
                    format!(
                        "{r:?} {} {global:?}/{local:?} item {g} lane {l}: {what}",
                        T::NAME
                    )
                };
                let all = |_: usize| true;
                let upto = |j: usize| j <= l;
                let below = |j: usize| j < l;
                let zero = T::from_small(0);
                let one = T::from_small(1);
                let uniform = [
                    fold_lanes(&xs, all, zero, T::add),
                    fold_lanes(&xs, all, T::MIN_IDENTITY, T::lesser),
                    fold_lanes(&xs, all, T::MAX_IDENTITY, T::greater),
                    fold_lanes(&xs, upto, zero, T::add),
                    fold_lanes(&xs, upto, T::MIN_IDENTITY, T::lesser),
                    fold_lanes(&xs, upto, T::MAX_IDENTITY, T::greater),
                    fold_lanes(&xs, below, zero, T::add),
                    fold_lanes(&xs, below, T::MIN_IDENTITY, T::lesser),
                    fold_lanes(&xs, below, T::MAX_IDENTITY, T::greater),
                    xs[cnt - 1],
                ];
                assert_eq!(&o[..10], &uniform, "{}", at("uniform collectives"));
                // Folds start from the first value: a lone -0.0 stays -0.0.
                assert_eq!(
                    o[3].raw(),
                    uniform[3].raw(),
                    "{}",
                    at("inclusive scan bits")
                );
                let active = |j: usize| j != 1;
                if l != 1 {
                    let want = [
                        fold_lanes(&xs, active, zero, T::add),
                        fold_lanes(&xs, active, one, T::mul),
                        fold_lanes(&xs, active, T::MIN_IDENTITY, T::lesser),
                        fold_lanes(&xs, active, T::MAX_IDENTITY, T::greater),
                        fold_lanes(&xs, |j| active(j) && j <= l, zero, T::add),
                        fold_lanes(&xs, |j| active(j) && j <= l, one, T::mul),
                        fold_lanes(&xs, |j| active(j) && j < l, T::MIN_IDENTITY, T::lesser),
                        fold_lanes(&xs, |j| active(j) && j < l, T::MAX_IDENTITY, T::greater),
                        xs[0],
                    ];
                    assert_eq!(
                        &o[10..19],
                        &want,
                        "{}",
                        at("non-uniform arithmetic without lane 1")
                    );
                } else {
                    assert_eq!(&o[10..19], &[T::default(); 9], "{}", at("inactive lane"));
                }
                let first_of_rest = if l != 0 { xs[1] } else { T::default() };
                assert_eq!(o[19], first_of_rest, "{}", at("broadcast_first"));
                assert_eq!(
                    o[20],
                    xs[(l + 1) % cnt],
                    "{} {:?} {:?}",
                    at("shuffle"),
                    o,
                    xs
                );
                // Lanes the sub-group does not have give undefined values: not checked.
                let lane = |t: usize| (t < cnt).then(|| xs[t]);
                let check = |got: T, want: Option<T>, what: &str| {
                    if let Some(w) = want {
                        assert_eq!(got, w, "{}", at(what));
                    }
                };
                check(o[21], lane(l ^ 1), "shuffle_xor 1");
                check(o[22], l.checked_sub(1).and_then(lane), "shuffle_up 1");
                check(o[23], lane(l + 1), "shuffle_down 1");
                check(o[24], lane((l + 1) % size), "rotate 1");
                check(
                    o[25],
                    lane((l & !1) | ((l + 3) & 1)),
                    "clustered rotate 3 in 2",
                );
                let cluster = |c: usize| move |j: usize| j / c == l / c;
                assert_eq!(
                    o[26],
                    fold_lanes(&xs, cluster(2), zero, T::add),
                    "{}",
                    at("clustered add 2")
                );
                assert_eq!(o[27], xs[l], "{}", at("clustered mul 1"));
                assert_eq!(
                    o[28],
                    fold_lanes(&xs, cluster(4), T::MIN_IDENTITY, T::lesser),
                    "{}",
                    at("clustered min 4")
                );
                assert_eq!(
                    o[29],
                    fold_lanes(&xs, cluster(2), T::MAX_IDENTITY, T::greater),
                    "{}",
                    at("clustered max 2")
                );
                let equal = xs.iter().all(|&v| v == xs[0]);
                assert_eq!(o[30], T::from_small(u8::from(equal)), "{}", at("all_equal"));
                let want = if l != 2 { one } else { T::default() };
                assert_eq!(o[31], want, "{}", at("all_equal of a constant"));
                if integer {
                    let b = &bits[g * 9..g * 9 + 9];
                    let f = |op: usize| move |a: T, v: T| a.bits(v, op);
                    let mut want = [
                        fold_lanes(&xs, all, T::ALL_ONES, f(0)),
                        fold_lanes(&xs, all, zero, f(1)),
                        fold_lanes(&xs, all, zero, f(2)),
                        fold_lanes(&xs, |j| active(j) && j <= l, T::ALL_ONES, f(0)),
                        fold_lanes(&xs, |j| active(j) && j < l, zero, f(1)),
                        fold_lanes(&xs, |j| active(j) && j <= l, zero, f(2)),
                        fold_lanes(&xs, cluster(2), T::ALL_ONES, f(0)),
                        fold_lanes(&xs, cluster(4), zero, f(1)),
                        fold_lanes(&xs, cluster(2), zero, f(2)),
                    ];
                    if l == 1 {
                        want[3..6].fill(T::default());
                    }
                    assert_eq!(b, &want, "{}", at("bitwise"));
                }
            }
        }
    }
}

#[test]
fn sub_group_collectives_and_non_uniform_arithmetic() {
    both(|r| {
        check_sub_group_type::<i8>(r, "char", true);
        check_sub_group_type::<u8>(r, "uchar", true);
        check_sub_group_type::<i16>(r, "short", true);
        check_sub_group_type::<u16>(r, "ushort", true);
        check_sub_group_type::<i32>(r, "int", true);
        check_sub_group_type::<u32>(r, "uint", true);
        check_sub_group_type::<i64>(r, "long", true);
        check_sub_group_type::<u64>(r, "ulong", true);
        check_sub_group_type::<f32>(r, "float", false);
        check_sub_group_type::<f64>(r, "double", false);
        check_sub_group_type::<Half>(r, "half", false);
    });
}

#[test]
fn sub_group_votes_and_ballots() {
    both(|r| {
        let p = sub_group_program(r);
        for &(dims, global, local) in SUB_GROUP_SHAPES {
            let n = (global[0] * global[1] * global[2]) as usize;
            let mut input: Vec<i32> = (0..n as i32).map(|i| (i * 29 % 67) - 8).collect();
            let mut out = vec![0i32; n * 26];
            let (mut args, _) = Args::new(p, "sg_votes");
            args.ptr(p, "sg_votes", 0, &mut input);
            args.ptr(p, "sg_votes", 1, &mut out);
            launch(p, "sg_votes", &args, dims, [0; 3], global, local);
            for sg in host_sub_groups(global, local) {
                let xs: Vec<i32> = sg.members.iter().map(|&g| input[g]).collect();
                let cnt = xs.len();
                let ballot_of =
                    |pred: &dyn Fn(i32) -> bool, active: &dyn Fn(usize) -> bool| -> i32 {
                        (0..cnt)
                            .filter(|&j| active(j) && pred(xs[j]))
                            .map(|j| 1 << j)
                            .sum()
                    };
                let ballot = ballot_of(&|x| x > 10, &|_| true);
                let active = |j: usize| xs[j] >= 0;
                let first_active = (0..cnt).find(|&j| active(j));
                for (l, &g) in sg.members.iter().enumerate() {
                    let o = &out[g * 26..g * 26 + 26];
                    let b = |v: bool| i32::from(v);
                    let lt = (1 << l) - 1;
                    let le = (2 << l) - 1;
                    // Ge/Gt masks reach up to the largest sub-group size.
                    let full =
                        (1 << ferrocl_codegen::SUB_GROUP_SIZE.min(sg.enqueued_items as u64)) - 1;
                    let mut want = vec![
                        b(xs.iter().all(|&x| x > 0)),
                        b(xs.iter().any(|&x| x > 40)),
                        b(l == 0),
                        ballot,
                        0,
                        b(ballot >> l & 1 != 0),
                        b(ballot >> 2 & 1 != 0),
                        ballot.count_ones() as i32,
                        (ballot & le).count_ones() as i32,
                        (ballot & lt).count_ones() as i32,
                        if ballot != 0 {
                            ballot.trailing_zeros() as i32
                        } else {
                            -1
                        },
                        if ballot != 0 {
                            31 - ballot.leading_zeros() as i32
                        } else {
                            -1
                        },
                        1 << l,
                        full & !lt,
                        full & !le,
                        le,
                        lt,
                    ];
                    if active(l) {
                        let act: Vec<usize> = (0..cnt).filter(|&j| active(j)).collect();
                        want.extend([
                            b(act.iter().all(|&j| xs[j] > 5)),
                            b(act.iter().any(|&j| xs[j] > 40)),
                            b(Some(l) == first_active),
                            b(act.iter().all(|&j| xs[j] > 5)),
                            b(act.iter().any(|&j| j <= l && xs[j] > 40)),
                            b(act
                                .iter()
                                .filter(|&&j| j < l)
                                .fold(false, |a, &j| a ^ (xs[j] & 1 != 0))),
                            ballot_of(&|x| x > 10, &active),
                        ]);
                    } else {
                        want.extend([0; 7]);
                    }
                    let max_size = ferrocl_codegen::SUB_GROUP_SIZE.min(sg.enqueued_items as u64);
                    want.extend([max_size as i32, max_size as i32 - 1]);
                    // Predicates come back as "non-zero is true".
                    let got: Vec<i32> = o
                        .iter()
                        .enumerate()
                        .map(|(i, &v)| {
                            if [0, 1, 2, 5, 6, 17, 18, 19, 20, 21, 22].contains(&i) {
                                b(v != 0)
                            } else {
                                v
                            }
                        })
                        .collect();
                    assert_eq!(
                        got, want,
                        "{r:?} {global:?}/{local:?} item {g} lane {l} (x = {})",
                        xs[l]
                    );
                }
            }
        }
    });
}

/// `sgv_<cl_type>` on vectors of `lanes` components of `E` (3-component vectors occupy 4).
fn check_sub_group_vectors<E: Copy + PartialEq + std::fmt::Debug + Default + From<u8>>(
    r: Recipe,
    cl_type: &str,
    lanes: usize,
    sample: impl Fn(usize) -> E,
) {
    let p = sub_group_program(r);
    let kernel = format!("sgv_{cl_type}");
    let stride = if lanes == 3 { 4 } else { lanes };
    for &(dims, global, local) in SUB_GROUP_SHAPES {
        let n = (global[0] * global[1] * global[2]) as usize;
        let mut input: Vec<E> = (0..n * stride).map(&sample).collect();
        let mut out = vec![E::default(); n * 3 * stride];
        let (mut args, _) = Args::new(p, &kernel);
        args.ptr(p, &kernel, 0, &mut input);
        args.ptr(p, &kernel, 1, &mut out);
        launch(p, &kernel, &args, dims, [0; 3], global, local);
        for sg in host_sub_groups(global, local) {
            let vec_of = |g: usize| &input[g * stride..g * stride + lanes];
            let cnt = sg.members.len();
            for (l, &g) in sg.members.iter().enumerate() {
                let got = |k: usize| &out[(g * 3 + k) * stride..(g * 3 + k) * stride + lanes];
                let at = format!("{r:?} {cl_type} {global:?}/{local:?} item {g} lane {l}");
                if cnt > 1 {
                    assert_eq!(got(0), vec_of(sg.members[1]), "{at}: broadcast 1");
                }
                if l != 0 {
                    assert_eq!(
                        got(1),
                        vec_of(sg.members[cnt - 1]),
                        "{at}: non-uniform broadcast"
                    );
                } else {
                    assert_eq!(got(1), vec![E::default(); lanes], "{at}: inactive lane");
                }
                assert_eq!(got(2), vec_of(sg.members[0]), "{at}: broadcast 0");
            }
        }
    }
}

#[test]
fn sub_group_broadcast_of_vectors() {
    let bits = |i: usize| (i as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 7;
    both(|r| {
        check_sub_group_vectors(r, "char2", 2, |i| bits(i) as u8);
        check_sub_group_vectors(r, "uchar3", 3, |i| bits(i) as u8);
        check_sub_group_vectors(r, "short4", 4, |i| bits(i) as u16);
        check_sub_group_vectors(r, "ushort8", 8, |i| bits(i) as u16);
        check_sub_group_vectors(r, "int16", 16, |i| bits(i) as u32);
        check_sub_group_vectors(r, "uint2", 2, |i| bits(i) as u32);
        check_sub_group_vectors(r, "long3", 3, bits);
        check_sub_group_vectors(r, "ulong4", 4, bits);
        check_sub_group_vectors(r, "float8", 8, |i| (i as f32 * 0.5 - 3.0).to_bits());
        check_sub_group_vectors(r, "double16", 16, |i| (i as f64 * 0.25 - 7.0).to_bits());
    });
}

#[test]
fn sub_groups_diverge_and_synchronise() {
    both(|r| {
        let p = sub_group_program(r);
        for &(dims, global, local) in SUB_GROUP_SHAPES {
            let n = (global[0] * global[1] * global[2]) as usize;
            let mut input: Vec<i32> = (0..n as i32).map(|i| (i * 41 % 53) - 20).collect();
            let mut out = vec![0i32; n * 5];
            let (mut args, _) = Args::new(p, "sg_diverge");
            args.ptr(p, "sg_diverge", 0, &mut input);
            args.ptr(p, "sg_diverge", 1, &mut out);
            args.set(p, "sg_diverge", 2, &0u64.to_ne_bytes());
            launch(p, "sg_diverge", &args, dims, [0; 3], global, local);
            for sg in host_sub_groups(global, local) {
                let xs: Vec<i32> = sg.members.iter().map(|&g| input[g]).collect();
                let cnt = xs.len();
                for (l, &g) in sg.members.iter().enumerate() {
                    let first = if sg.index % 2 == 0 {
                        xs.iter().sum()
                    } else {
                        *xs[..=l].iter().max().expect("non-empty")
                    };
                    let looped: i32 = (0..=(sg.index % 3) as i32)
                        .map(|i| xs[0] + i + xs.iter().map(|x| x * i).max().expect("non-empty"))
                        .sum();
                    let next = xs[(l + 1) % cnt];
                    let only_one = if sg.index == 1 { next * 3 } else { -7 };
                    let per_lane: i32 = (0..=l)
                        .map(|i| (i..cnt).map(|j| xs[j] + i as i32).sum::<i32>())
                        .sum();
                    assert_eq!(
                        &out[g * 5..g * 5 + 5],
                        &[first, looped, next, only_one, per_lane],
                        "{r:?} {global:?}/{local:?} item {g} (sub-group {} lane {l}) xs {xs:?}",
                        sg.index
                    );
                }
            }
        }
    });
}

/// Launch shapes for `sg_lockstep`: x local sizes that are whole vector iterations for 4, 8
/// and 16 lanes, for 4 and 8 only, for 4 only, and none at all (the cut body), in 1-D and 2-D.
const LOCKSTEP_SHAPES: &[(u32, [u64; 3], [u64; 3])] = &[
    (1, [64, 1, 1], [32, 1, 1]),
    (1, [48, 1, 1], [16, 1, 1]),
    (2, [16, 4, 1], [8, 2, 1]),
    (2, [24, 2, 1], [12, 2, 1]),
    (1, [22, 1, 1], [10, 1, 1]),
    (2, [6, 4, 1], [3, 2, 1]),
];

#[test]
fn sub_group_barriers_alone_run_in_lockstep_lanes() {
    both(|r| {
        let p = sub_group_program(r);
        assert_eq!(
            p.kernel("sg_lockstep").expect("kernel").vectorization,
            ferrocl_codegen::Vectorization::Vectorized {
                lanes: common::vector_lanes()
            },
            "{r:?}"
        );
        for &(dims, global, local) in LOCKSTEP_SHAPES {
            let (input, out) = run_lockstep(p, "sg_lockstep", dims, global, local, None);
            check_lockstep(r, global, local, &input, &out);
        }
    });
}

#[test]
fn sub_group_barriers_in_loops_hold_in_the_dispatching_loop() {
    both(|r| {
        let p = sub_group_program(r);
        let k = p.kernel("sg_lockstep_rounds").expect("kernel");
        assert_eq!(k.barrier_schedule, BarrierSchedule::Dynamic, "{r:?}");
        for &(dims, global, local) in LOCKSTEP_SHAPES {
            let n = (global[0] * global[1] * global[2]) as usize;
            let mut sums = vec![0i32; n];
            let (input, out) = run_lockstep(
                p,
                "sg_lockstep_rounds",
                dims,
                global,
                local,
                Some(&mut sums),
            );
            check_lockstep(r, global, local, &input, &out);
            for sg in host_sub_groups(global, local) {
                let total = sg
                    .members
                    .iter()
                    .fold(0i32, |s, &g| s.wrapping_add(input[g]));
                for &g in &sg.members {
                    assert_eq!(sums[g], total.wrapping_mul(256), "{r:?} item {g}");
                }
            }
        }
    });
}

/// Runs `sg_lockstep` or `sg_lockstep_rounds` (with `sums`) on inputs of its own; returns
/// them and the results.
fn run_lockstep(
    p: &Program,
    kernel: &str,
    dims: u32,
    global: [u64; 3],
    local: [u64; 3],
    sums: Option<&mut [i32]>,
) -> (Vec<i32>, Vec<i32>) {
    let n = (global[0] * global[1] * global[2]) as usize;
    let mut input: Vec<i32> = (0..n as i32).map(|i| (i * 29 % 47) - 23).collect();
    let mut out = vec![0i32; n * 2];
    let (mut args, _) = Args::new(p, kernel);
    args.ptr(p, kernel, 0, &mut input);
    args.ptr(p, kernel, 1, &mut out);
    args.set(p, kernel, 2, &0u64.to_ne_bytes());
    if let Some(sums) = sums {
        args.ptr(p, kernel, 3, sums);
    }
    launch(p, kernel, &args, dims, [0; 3], global, local);
    (input, out)
}

/// `lockstep_body` of subgroups.cl on the host, sub-group by sub-group.
fn check_lockstep(r: Recipe, global: [u64; 3], local: [u64; 3], input: &[i32], out: &[i32]) {
    for sg in host_sub_groups(global, local) {
        let xs: Vec<i32> = sg.members.iter().map(|&g| input[g]).collect();
        let cnt = xs.len();
        let mut acc: Vec<i32> = (0..cnt).map(|l| xs[(l + 1) % cnt] * 3).collect();
        let mut mine = vec![[0i32; 4]; cnt];
        for i in 0..3 {
            let shared: Vec<i32> = acc.iter().map(|a| a + i).collect();
            for l in 0..cnt {
                mine[l][i as usize] = acc[l];
            }
            acc = (0..cnt).map(|l| acc[l] + shared[cnt - 1 - l]).collect();
        }
        if sg.index % 2 == 1 {
            acc = (0..cnt).map(|l| acc[(l + 2) % cnt] * 2).collect();
        }
        for (l, &g) in sg.members.iter().enumerate() {
            mine[l][3] = acc[l];
            let m = mine[l];
            assert_eq!(
                &out[g * 2..g * 2 + 2],
                &[acc[l], m[l % 4] - m[(l + 1) % 4]],
                "{r:?} {global:?}/{local:?} item {g} (sub-group {} lane {l}) xs {xs:?}",
                sg.index
            );
        }
    }
}

#[test]
fn sub_groups_in_the_dispatching_loop() {
    both(|r| {
        let p = sub_group_program(r);
        for &(dims, global, local) in SUB_GROUP_SHAPES {
            let n = (global[0] * global[1] * global[2]) as usize;
            let mut input: Vec<i32> = (0..n as i32).map(|i| (i * 13 % 31) - 9).collect();
            let mut out = vec![0i32; n * 4];
            let (mut args, _) = Args::new(p, "sg_rounds");
            args.ptr(p, "sg_rounds", 0, &mut input);
            args.ptr(p, "sg_rounds", 1, &mut out);
            launch(p, "sg_rounds", &args, dims, [0; 3], global, local);
            for sg in host_sub_groups(global, local) {
                let xs: Vec<i32> = sg.members.iter().map(|&g| input[g]).collect();
                let cnt = xs.len();
                let total: i32 = xs.iter().sum();
                let mut acc = vec![0i32; cnt];
                for _ in 0..256 {
                    let old = acc.clone();
                    for l in 0..cnt {
                        let scan = old[..=l].iter().fold(0i32, |s, a| s.wrapping_add(a & 7));
                        acc[l] = old[l].wrapping_add(total.wrapping_add(scan));
                    }
                }
                for (l, &g) in sg.members.iter().enumerate() {
                    let without_1: i32 = (0..cnt).filter(|&j| j != 1).map(|j| xs[j]).sum();
                    let per_lane: i32 = (0..=l)
                        .map(|i| (i..cnt).map(|j| xs[j] + i as i32).sum::<i32>())
                        .sum();
                    let last = if sg.index % 2 == 1 {
                        *xs.iter().max().expect("non-empty")
                    } else {
                        xs[0]
                    };
                    let want = [acc[l], if l != 1 { without_1 } else { 0 }, per_lane, last];
                    assert_eq!(
                        &out[g * 4..g * 4 + 4],
                        &want,
                        "{r:?} {global:?}/{local:?} item {g} (sub-group {} lane {l})",
                        sg.index
                    );
                }
            }
        }
    });
}

/// A kernel around one sub-group instruction `%r = <inst>` on `%x` (a uint), assembled as
/// SPIR-V 1.3.
fn sub_group_module(inst: &str) -> Vec<u8> {
    let text = format!(
        r#"
               OpCapability Addresses
               OpCapability Kernel
               OpCapability Int64
               OpCapability Groups
               OpCapability GroupNonUniform
               OpCapability GroupNonUniformArithmetic
               OpCapability GroupNonUniformClustered
               OpCapability GroupUniformArithmeticKHR
               OpExtension "SPV_KHR_uniform_group_instructions"
               OpMemoryModel Physical64 OpenCL
               OpEntryPoint Kernel %k "k"
       %void = OpTypeVoid
       %uint = OpTypeInt 32 0
     %uint_2 = OpConstant %uint 2
     %uint_3 = OpConstant %uint 3
     %uint_8 = OpConstant %uint 8
      %ptr_g = OpTypePointer CrossWorkgroup %uint
         %fn = OpTypeFunction %void %ptr_g
          %k = OpFunction %void None %fn
        %out = OpFunctionParameter %ptr_g
      %entry = OpLabel
          %x = OpLoad %uint %out
          %r = {inst}
               OpStore %out %r
               OpReturn
               OpFunctionEnd
"#
    );
    let dir = out_dir();
    static COUNT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = COUNT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let src = dir.join(format!(
        "sub-group-misuse-{}-{n}.spvasm",
        std::process::id()
    ));
    let spv = src.with_extension("spv");
    std::fs::write(&src, text).expect("write spvasm");
    run(Command::new("spirv-as")
        .args(["--target-env", "spv1.3"])
        .arg(&src)
        .arg("-o")
        .arg(&spv));
    std::fs::read(&spv).expect("read spv")
}

#[test]
fn sub_group_misuse_fails_with_a_log() {
    let off = BuildOptions {
        sub_groups: false,
        ..default_options()
    };
    for (inst, options, expect) in [
        (
            "OpGroupNonUniformIAdd %uint %uint_2 Reduce %x",
            default_options(),
            "execution scope 2 is not supported (only Subgroup)",
        ),
        (
            "OpGroupNonUniformIAdd %uint %uint_3 ClusteredReduce %x %uint_3",
            default_options(),
            "ClusterSize 3 must be a power of two",
        ),
        (
            "OpGroupNonUniformIAdd %uint %uint_3 Reduce %x",
            off.clone(),
            "OpGroupNonUniformIAdd needs sub-groups, which are turned off on this device (FERROCL_SUBGROUPS=off)",
        ),
        (
            "OpGroupNonUniformFAdd %uint %uint_3 Reduce %x",
            default_options(),
            "is not the scalar type this instruction combines",
        ),
        (
            "OpGroupNonUniformLogicalAnd %uint %uint_3 Reduce %x",
            default_options(),
            "is not the scalar type this instruction combines",
        ),
        (
            "OpGroupIAdd %uint %uint_3 Reduce %x",
            off.clone(),
            "OpGroupIAdd with Subgroup execution scope needs sub-groups, which are turned off",
        ),
        (
            "OpGroupBitwiseXorKHR %uint %uint_3 InclusiveScan %x",
            off.clone(),
            "OpGroupBitwiseXorKHR with Subgroup execution scope needs sub-groups, which are turned off",
        ),
    ] {
        let module = ferrocl_frontend::parse(&sub_group_module(inst))
            .unwrap_or_else(|e| panic!("frontend: {e}"));
        match compile(&module, &options) {
            Ok(_) => panic!("{inst} must not build"),
            Err(e) => assert!(e.log.contains(expect), "{inst}: {}", e.log),
        }
    }
}

/// A ClusterSize above the sub-group size is undefined behaviour only when executed (the CTS
/// compiles every size up to 128 and runs the valid ones): it builds and reduces the whole
/// sub-group.
#[test]
fn clusters_larger_than_the_sub_group_build_and_cover_it() {
    for cluster in ["%uint_8", "%uint_2"] {
        let module = ferrocl_frontend::parse(&sub_group_module(&format!(
            "OpGroupNonUniformIAdd %uint %uint_3 ClusteredReduce %x {cluster}"
        )))
        .unwrap_or_else(|e| panic!("frontend: {e}"));
        let p = compile(&module, &default_options()).unwrap_or_else(|e| panic!("{}", e.log));
        // Every work-item reads out[0] (5) before any stores the sum (they meet at the
        // reduction): one sub-group of 4 sums 20, clusters of 2 sum 10.
        let mut out = [5u32];
        let (mut args, _) = Args::new(&p, "k");
        args.ptr(&p, "k", 0, &mut out);
        launch(&p, "k", &args, 1, [0; 3], [4, 1, 1], [4, 1, 1]);
        let want = if cluster == "%uint_8" { 20 } else { 10 };
        assert_eq!(out[0], want, "cluster {cluster}");
    }
}
