//! Every function JIT code calls outside itself, declared once: the symbol and the signature of
//! each [`EntryPoint`] (what a call site imports) and the address behind each symbol (what the
//! JIT registers, [`jit_symbols`]). Translation asks for an `EntryPoint`, never for a name; a
//! test checks that every entry point has an address.

use cranelift_codegen::ir::{types, Type};
use ferrocl_frontend::spirv::{FPRoundingMode, OpenclStd100Op as Cl};
use ferrocl_mathlib::{Binary, Precision, Shaped, Unary};

/// What a half conversion starts from (`ferrocl_<from>_to_f16_<mode>`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum HalfSource {
    F32,
    F64,
    I64,
    U64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum EntryPoint {
    /// mathlib's `T -> T` functions.
    Unary(Unary, Precision),
    /// mathlib's `(T, T) -> T` functions.
    Binary(Binary, Precision),
    /// A float call of mathlib's `f` that may be computed to the relaxed accuracy
    /// (`native_*`, `half_*`, `-cl-fast-relaxed-math`): the same function, a call of its own,
    /// which the vectoriser emits in the reduced-accuracy vector form (math_relaxed.rs).
    Relaxed(Unary),
    /// The mathlib functions codegen calls whose shape is neither: sincos and lgamma_r
    /// `(T, *out) -> T`, remquo `(T, T, *quo) -> T`, pown and rootn `(T, i32) -> T`.
    Shaped(Shaped, Precision),
    /// C `fmod`: OpFRem/OpFMod's remainder.
    Fmod(Precision),
    /// `ldexp(T, i32) -> T` (f32 is inline).
    Ldexp(Precision),
    /// Half `nextafter`, on the f32s that hold halves.
    NextafterHalf,
    /// Rounds to half in `mode`; returns the half's bits in the low 16 bits of an i32.
    ToHalf(HalfSource, FPRoundingMode),
    /// `memmove(dst, src, n) -> dst` (OpCopyMemory / OpCopyMemorySized).
    Memmove,
    /// `memset(dst, byte, n) -> dst` (private variables zeroed for cl_khr_initialize_memory).
    Memset,
    /// The kernel clock in nanoseconds (OpReadClockKHR).
    ClockNs,
    /// Checked mode: records a failed check (checked.rs `checked_fault`).
    CheckedFault,
    /// Checked mode: looks up an access through a pointer of unknown object
    /// (checked.rs `checked_lookup`).
    CheckedLookup,
    /// Pipes (pipe.rs): a reservation of packets at one end, `(pipe, write, count) -> id`.
    PipeReserve,
    /// `(pipe, write, id)`: the reservation is over.
    PipeCommit,
    /// `(pipe, write, id, index, packet, size) -> 0 or -1`: a packet of a reservation.
    PipeReservedAccess,
    /// `(pipe, write, packet, size) -> 0 or -1`: one packet without a reservation.
    PipeAccess,
    /// `(pipe, max) -> packets`: get_pipe_num_packets, or get_pipe_max_packets.
    PipePackets,
    /// Device-side enqueue (device_enqueue.rs), each taking the launch's context first:
    /// `enqueue_kernel`.
    EnqueueKernel,
    /// `enqueue_marker`.
    EnqueueMarker,
    /// `get_default_queue`.
    DefaultQueue,
    /// `create_user_event`.
    CreateUserEvent,
    /// `retain_event`, `release_event`, `is_valid_event`, `set_user_event_status`.
    EventOp,
    /// `capture_event_profiling_info`.
    CaptureProfiling,
    /// `get_kernel_work_group_size` and the other block queries.
    BlockQuery,
    /// cl_intel_devicelib_assert's `__devicelib_assert_fail(expr, file, line, func, gid0, gid1,
    /// gid2, lid0, lid1, lid2)`: prints and aborts (devicelib_assert.rs).
    DevicelibAssertFail,
}

fn float(precision: Precision) -> Type {
    match precision {
        Precision::F32 => types::F32,
        Precision::F64 => types::F64,
    }
}

/// The precision of float type `ty`, if it is f32 or f64.
pub(crate) fn precision_of(ty: Type) -> Option<Precision> {
    match ty {
        types::F32 => Some(Precision::F32),
        types::F64 => Some(Precision::F64),
        _ => None,
    }
}

/// The precise OpenCL.std function a `native_`/`half_` form is computed with where Ferrocl
/// gives it full accuracy (those of them computed inline are not here).
pub(crate) fn precise_form(op: Cl) -> Cl {
    match op {
        Cl::native_cos | Cl::half_cos => Cl::cos,
        Cl::native_exp | Cl::half_exp => Cl::exp,
        Cl::native_exp2 | Cl::half_exp2 => Cl::exp2,
        Cl::native_exp10 | Cl::half_exp10 => Cl::exp10,
        Cl::native_log | Cl::half_log => Cl::log,
        Cl::native_log2 | Cl::half_log2 => Cl::log2,
        Cl::native_log10 | Cl::half_log10 => Cl::log10,
        Cl::native_powr | Cl::half_powr => Cl::powr,
        Cl::native_sin | Cl::half_sin => Cl::sin,
        Cl::native_tan | Cl::half_tan => Cl::tan,
        other => other,
    }
}

impl EntryPoint {
    pub(crate) fn symbol(self) -> &'static str {
        match self {
            EntryPoint::Unary(f, p) => f.symbol(p),
            EntryPoint::Relaxed(f) => f.symbol(Precision::F32),
            EntryPoint::Binary(f, p) => f.symbol(p),
            EntryPoint::Shaped(f, p) => f.symbol(p),
            EntryPoint::Fmod(Precision::F32) => "ferrocl_fmodf",
            EntryPoint::Fmod(Precision::F64) => "ferrocl_fmod",
            EntryPoint::Ldexp(Precision::F32) => "ferrocl_ldexpf",
            EntryPoint::Ldexp(Precision::F64) => "ferrocl_ldexp",
            EntryPoint::NextafterHalf => "ferrocl_nextafter_f16",
            EntryPoint::ToHalf(from, mode) => {
                use FPRoundingMode::*;
                use HalfSource::*;
                match (from, mode) {
                    (F32, RTE) => "ferrocl_f32_to_f16_rte",
                    (F32, RTZ) => "ferrocl_f32_to_f16_rtz",
                    (F32, RTP) => "ferrocl_f32_to_f16_rtp",
                    (F32, RTN) => "ferrocl_f32_to_f16_rtn",
                    (F64, RTE) => "ferrocl_f64_to_f16_rte",
                    (F64, RTZ) => "ferrocl_f64_to_f16_rtz",
                    (F64, RTP) => "ferrocl_f64_to_f16_rtp",
                    (F64, RTN) => "ferrocl_f64_to_f16_rtn",
                    (I64, RTE) => "ferrocl_i64_to_f16_rte",
                    (I64, RTZ) => "ferrocl_i64_to_f16_rtz",
                    (I64, RTP) => "ferrocl_i64_to_f16_rtp",
                    (I64, RTN) => "ferrocl_i64_to_f16_rtn",
                    (U64, RTE) => "ferrocl_u64_to_f16_rte",
                    (U64, RTZ) => "ferrocl_u64_to_f16_rtz",
                    (U64, RTP) => "ferrocl_u64_to_f16_rtp",
                    (U64, RTN) => "ferrocl_u64_to_f16_rtn",
                }
            }
            EntryPoint::Memmove => "ferrocl_memmove",
            EntryPoint::Memset => "ferrocl_memset",
            EntryPoint::ClockNs => "ferrocl_clock_ns",
            EntryPoint::CheckedFault => "ferrocl_checked_fault",
            EntryPoint::CheckedLookup => "ferrocl_checked_lookup",
            EntryPoint::PipeReserve => "ferrocl_pipe_reserve",
            EntryPoint::PipeCommit => "ferrocl_pipe_commit",
            EntryPoint::PipeReservedAccess => "ferrocl_pipe_reserved_access",
            EntryPoint::PipeAccess => "ferrocl_pipe_access",
            EntryPoint::PipePackets => "ferrocl_pipe_packets",
            EntryPoint::EnqueueKernel => "ferrocl_enqueue_kernel",
            EntryPoint::EnqueueMarker => "ferrocl_enqueue_marker",
            EntryPoint::DefaultQueue => "ferrocl_default_queue",
            EntryPoint::CreateUserEvent => "ferrocl_create_user_event",
            EntryPoint::EventOp => "ferrocl_event_op",
            EntryPoint::CaptureProfiling => "ferrocl_capture_profiling",
            EntryPoint::BlockQuery => "ferrocl_block_query",
            EntryPoint::DevicelibAssertFail => "ferrocl_devicelib_assert_fail",
        }
    }

    /// Parameter and result types (pointers are i64: the host's flat addresses).
    pub(crate) fn signature(self) -> (Vec<Type>, Vec<Type>) {
        match self {
            EntryPoint::Unary(_, p) => (vec![float(p)], vec![float(p)]),
            EntryPoint::Relaxed(_) => (vec![types::F32], vec![types::F32]),
            EntryPoint::Binary(_, p) | EntryPoint::Fmod(p) => (vec![float(p); 2], vec![float(p)]),
            EntryPoint::Shaped(f, p) => {
                let t = float(p);
                let params = match f {
                    Shaped::sincos | Shaped::lgamma_r => vec![t, types::I64],
                    Shaped::remquo => vec![t, t, types::I64],
                    Shaped::pown | Shaped::rootn | Shaped::ldexp => vec![t, types::I32],
                    Shaped::frexp | Shaped::modf | Shaped::fract => vec![t, types::I64],
                    Shaped::ilogb => return (vec![t], vec![types::I32]),
                    Shaped::nan => {
                        let code = if p == Precision::F32 {
                            types::I32
                        } else {
                            types::I64
                        };
                        vec![code]
                    }
                };
                (params, vec![t])
            }
            EntryPoint::Ldexp(p) => (vec![float(p), types::I32], vec![float(p)]),
            EntryPoint::NextafterHalf => (vec![types::F32; 2], vec![types::F32]),
            EntryPoint::ToHalf(from, _) => {
                let param = match from {
                    HalfSource::F32 => types::F32,
                    HalfSource::F64 => types::F64,
                    HalfSource::I64 | HalfSource::U64 => types::I64,
                };
                (vec![param], vec![types::I32])
            }
            EntryPoint::Memmove => (vec![types::I64; 3], vec![types::I64]),
            EntryPoint::Memset => (vec![types::I64, types::I32, types::I64], vec![types::I64]),
            EntryPoint::ClockNs => (vec![], vec![types::I64]),
            // (group, site, address, size, object start, object end, global id x, y, z)
            EntryPoint::CheckedFault => {
                let mut params = vec![types::I64, types::I32];
                params.extend([types::I64; 7]);
                (params, vec![])
            }
            // (group, site, address, size, local memory, &table, count | writes) -> failed
            EntryPoint::CheckedLookup => {
                let mut params = vec![types::I64, types::I32];
                params.extend([types::I64; 5]);
                (params, vec![types::I32])
            }
            EntryPoint::PipeReserve => (vec![types::I64, types::I32, types::I32], vec![types::I64]),
            EntryPoint::PipeCommit => (vec![types::I64, types::I32, types::I64], vec![]),
            EntryPoint::PipeReservedAccess => (
                vec![
                    types::I64,
                    types::I32,
                    types::I64,
                    types::I32,
                    types::I64,
                    types::I32,
                ],
                vec![types::I32],
            ),
            EntryPoint::PipeAccess => (
                vec![types::I64, types::I32, types::I64, types::I32],
                vec![types::I32],
            ),
            EntryPoint::PipePackets => (vec![types::I64, types::I32], vec![types::I32]),
            // (ctx, queue, flags, &ndrange, num_events, events, ret_event, block, literal,
            // literal size, literal align, num locals, &local sizes) -> CLK code
            EntryPoint::EnqueueKernel => {
                let (i32, i64) = (types::I32, types::I64);
                (
                    vec![
                        i64, i64, i32, i64, i32, i64, i64, i32, i64, i32, i32, i32, i64,
                    ],
                    vec![i32],
                )
            }
            // (ctx, queue, num_events, events, ret_event) -> CLK code
            EntryPoint::EnqueueMarker => (
                vec![types::I64, types::I64, types::I32, types::I64, types::I64],
                vec![types::I32],
            ),
            EntryPoint::DefaultQueue | EntryPoint::CreateUserEvent => {
                (vec![types::I64], vec![types::I64])
            }
            // (ctx, event, op, status) -> is_valid
            EntryPoint::EventOp => (
                vec![types::I64, types::I64, types::I32, types::I32],
                vec![types::I32],
            ),
            // (ctx, event, name, dst)
            EntryPoint::CaptureProfiling => {
                (vec![types::I64, types::I64, types::I32, types::I64], vec![])
            }
            // (ctx, block, query, &ndrange or 0) -> value
            EntryPoint::BlockQuery => (
                vec![types::I64, types::I32, types::I32, types::I64],
                vec![types::I32],
            ),
            // (expr, file, line, func, global id x, y, z, local id x, y, z)
            EntryPoint::DevicelibAssertFail => {
                let mut params = vec![types::I64, types::I64, types::I32, types::I64];
                params.extend([types::I64; 6]);
                (params, vec![])
            }
        }
    }
}

/// Every symbol JIT code may reference, with its address: mathlib's table and the runtime
/// services codegen provides itself.
pub(crate) fn jit_symbols() -> Vec<(String, *const u8)> {
    let mut symbols = ferrocl_mathlib::symbols();
    symbols.push((
        EntryPoint::ClockNs.symbol().to_owned(),
        clock_ns as *const u8,
    ));
    symbols.push((
        EntryPoint::CheckedFault.symbol().to_owned(),
        crate::checked::checked_fault as *const u8,
    ));
    symbols.push((
        EntryPoint::CheckedLookup.symbol().to_owned(),
        crate::checked::checked_lookup as *const u8,
    ));
    symbols.push((
        EntryPoint::DevicelibAssertFail.symbol().to_owned(),
        crate::devicelib_assert::devicelib_assert_fail as *const u8,
    ));
    use crate::pipe;
    let pipes: [(EntryPoint, *const u8); 5] = [
        (
            EntryPoint::PipeReserve,
            pipe::ferrocl_pipe_reserve as *const u8,
        ),
        (
            EntryPoint::PipeCommit,
            pipe::ferrocl_pipe_commit as *const u8,
        ),
        (
            EntryPoint::PipeReservedAccess,
            pipe::ferrocl_pipe_reserved_access as *const u8,
        ),
        (
            EntryPoint::PipeAccess,
            pipe::ferrocl_pipe_access as *const u8,
        ),
        (
            EntryPoint::PipePackets,
            pipe::ferrocl_pipe_packets as *const u8,
        ),
    ];
    symbols.extend(pipes.map(|(e, ptr)| (e.symbol().to_owned(), ptr)));
    use crate::device_enqueue as de;
    let enqueue: [(EntryPoint, *const u8); 7] = [
        (
            EntryPoint::EnqueueKernel,
            de::ferrocl_enqueue_kernel as *const u8,
        ),
        (
            EntryPoint::EnqueueMarker,
            de::ferrocl_enqueue_marker as *const u8,
        ),
        (
            EntryPoint::DefaultQueue,
            de::ferrocl_default_queue as *const u8,
        ),
        (
            EntryPoint::CreateUserEvent,
            de::ferrocl_create_user_event as *const u8,
        ),
        (EntryPoint::EventOp, de::ferrocl_event_op as *const u8),
        (
            EntryPoint::CaptureProfiling,
            de::ferrocl_capture_profiling as *const u8,
        ),
        (EntryPoint::BlockQuery, de::ferrocl_block_query as *const u8),
    ];
    symbols.extend(enqueue.map(|(e, ptr)| (e.symbol().to_owned(), ptr)));
    symbols.extend(
        crate::abi::table_symbols()
            .into_iter()
            .map(|(name, ptr)| (name.to_owned(), ptr)),
    );
    symbols
}

/// The kernel clock (OpReadClockKHR, cl_khr_kernel_clock): nanoseconds of the host's
/// monotonic clock since the first read in this process. One clock for every thread, so values
/// are comparable across the whole device (device and work-group scope).
extern "C" fn clock_ns() -> u64 {
    static EPOCH: std::sync::OnceLock<std::time::Instant> = std::sync::OnceLock::new();
    let epoch = *EPOCH.get_or_init(std::time::Instant::now);
    // Instant::elapsed saturates at zero; u64 nanoseconds last 584 years.
    epoch.elapsed().as_nanos() as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    fn every_entry_point() -> Vec<EntryPoint> {
        let mut all = Vec::new();
        for p in [Precision::F32, Precision::F64] {
            all.extend(Unary::ALL.iter().map(|&f| EntryPoint::Unary(f, p)));
            all.extend(Unary::ALL.iter().map(|&f| EntryPoint::Relaxed(f)));
            all.extend(Binary::ALL.iter().map(|&f| EntryPoint::Binary(f, p)));
            all.extend(Shaped::ALL.iter().map(|&f| EntryPoint::Shaped(f, p)));
            all.extend([EntryPoint::Fmod(p), EntryPoint::Ldexp(p)]);
        }
        for from in [
            HalfSource::F32,
            HalfSource::F64,
            HalfSource::I64,
            HalfSource::U64,
        ] {
            for mode in [
                FPRoundingMode::RTE,
                FPRoundingMode::RTZ,
                FPRoundingMode::RTP,
                FPRoundingMode::RTN,
            ] {
                all.push(EntryPoint::ToHalf(from, mode));
            }
        }
        all.extend([
            EntryPoint::NextafterHalf,
            EntryPoint::Memmove,
            EntryPoint::Memset,
            EntryPoint::ClockNs,
            EntryPoint::CheckedFault,
            EntryPoint::CheckedLookup,
            EntryPoint::PipeReserve,
            EntryPoint::PipeCommit,
            EntryPoint::PipeReservedAccess,
            EntryPoint::PipeAccess,
            EntryPoint::PipePackets,
            EntryPoint::EnqueueKernel,
            EntryPoint::EnqueueMarker,
            EntryPoint::DefaultQueue,
            EntryPoint::CreateUserEvent,
            EntryPoint::EventOp,
            EntryPoint::CaptureProfiling,
            EntryPoint::BlockQuery,
            EntryPoint::DevicelibAssertFail,
        ]);
        all
    }

    #[test]
    fn every_entry_point_has_an_address() {
        let symbols = jit_symbols();
        for e in every_entry_point() {
            let found = symbols.iter().find(|(name, _)| name == e.symbol());
            assert!(found.is_some_and(|(_, p)| !p.is_null()), "{e:?}");
        }
    }

    #[test]
    fn native_forms_map_to_functions_mathlib_has() {
        for op in [
            Cl::native_sin,
            Cl::half_exp10,
            Cl::native_powr,
            Cl::half_log2,
        ] {
            let precise = precise_form(op);
            assert!(
                Unary::from_opencl_std(precise).is_some()
                    || Binary::from_opencl_std(precise).is_some(),
                "{op:?}"
            );
        }
        assert_eq!(precise_form(Cl::fabs), Cl::fabs);
    }
}
