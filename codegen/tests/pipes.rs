//! Pipes from OpenCL C (tests/kernels/pipes.cl, both recipes) through the frontend and codegen,
//! run on `ferrocl_codegen::Pipe`s as the runtime makes them: packets written by work-items,
//! reservations with out-of-order indices and commits, work-group and sub-group reservations,
//! a full pipe and an empty one, and the packet queries.

mod common;

use common::*;
use ferrocl_codegen::Pipe;

const LANGUAGE: Language = Language {
    options: "-cl-std=CL3.0",
    extensions: &[
        "__opencl_c_pipes",
        "__opencl_c_generic_address_space",
        "__opencl_c_subgroups",
        "cl_khr_subgroups",
        "__opencl_c_int64",
    ],
    debug_info: false,
};

fn programs() -> Vec<ferrocl_codegen::Program> {
    RECIPES
        .iter()
        .map(|&r| build_spirv(&spirv_from_c("pipes.cl", r, LANGUAGE)))
        .collect()
}

fn pipe_arg(p: &Pipe) -> Arg<'static> {
    Arg::Val((p as *const Pipe as u64).to_ne_bytes().to_vec())
}

fn ints(b: &[u8]) -> Vec<i32> {
    (0..b.len() / 4)
        .map(|i| read_int(b, i, 32, true) as i32)
        .collect()
}

#[test]
fn work_items_write_and_read_until_the_pipe_is_full_then_empty() {
    for program in programs() {
        let pipe = Pipe::new(4, 40).unwrap();
        let src: Vec<i32> = (0..64).map(|i| 1000 + i).collect();
        let mut src_b = bytes_of(&src);
        let mut status = vec![0u8; 64 * 4];
        launch(
            &program,
            "write_each",
            &mut [Arg::Buf(&mut src_b), pipe_arg(&pipe), Arg::Buf(&mut status)],
            64,
            16,
        );
        // Forty fit; the rest find the pipe full.
        let status = ints(&status);
        assert_eq!(status.iter().filter(|&&s| s == 0).count(), 40, "{status:?}");
        assert!(status.iter().all(|&s| s <= 0), "{status:?}");
        let mut dst = vec![0u8; 64 * 4];
        let mut rstatus = vec![0u8; 64 * 4];
        launch(
            &program,
            "read_each",
            &mut [pipe_arg(&pipe), Arg::Buf(&mut dst), Arg::Buf(&mut rstatus)],
            64,
            16,
        );
        let (dst, rstatus) = (ints(&dst), ints(&rstatus));
        let mut got: Vec<i32> = dst
            .iter()
            .zip(&rstatus)
            .filter(|(_, &s)| s == 0)
            .map(|(&v, _)| v)
            .collect();
        assert_eq!(got.len(), 40, "{rstatus:?}");
        let mut written: Vec<i32> = src
            .iter()
            .zip(&status)
            .filter(|(_, &s)| s == 0)
            .map(|(&v, _)| v)
            .collect();
        got.sort_unstable();
        written.sort_unstable();
        assert_eq!(got, written, "every written packet is read once");
        assert!(dst
            .iter()
            .zip(&rstatus)
            .all(|(&v, &s)| s == 0 || (s < 0 && v == -1)));
        assert_eq!(pipe.packets(), 0);
    }
}

/// `Packet` of pipes.cl: char, int, short — 12 bytes with its padding.
fn packet(i: i32) -> [u8; 12] {
    let mut p = [0u8; 12];
    p[0] = i as u8;
    p[4..8].copy_from_slice(&(i * 7).to_ne_bytes());
    p[8..10].copy_from_slice(&((i * 3) as i16).to_ne_bytes());
    p
}

#[test]
fn reservations_place_packets_by_index_and_keep_their_order() {
    for program in programs() {
        let items = 24;
        let pipe = Pipe::new(12, 2 * items).unwrap();
        let mut src: Vec<u8> = (0..2 * items as i32).flat_map(packet).collect();
        let mut status = vec![0u8; items * 4];
        launch(
            &program,
            "write_reserved",
            &mut [Arg::Buf(&mut src), pipe_arg(&pipe), Arg::Buf(&mut status)],
            items as u64,
            8,
        );
        // Both packets written, the index past the reservation refused (-1 × 10).
        assert_eq!(ints(&status), vec![-10; items]);
        assert_eq!(pipe.packets(), 2 * items as u64);
        let mut dst = vec![0u8; 2 * items * 12];
        let mut rstatus = vec![0u8; items * 4];
        launch(
            &program,
            "read_reserved",
            &mut [pipe_arg(&pipe), Arg::Buf(&mut dst), Arg::Buf(&mut rstatus)],
            items as u64,
            8,
        );
        assert_eq!(ints(&rstatus), vec![0; items]);
        // Work-items run in order here, so each reads the pair it wrote.
        for i in 0..2 * items {
            let (want, got) = (&src[12 * i..12 * i + 12], &dst[12 * i..12 * i + 12]);
            assert_eq!(want[..2], got[..2], "packet {i}");
            assert_eq!(want[4..10], got[4..10], "packet {i}");
        }
        // An empty pipe refuses a read reservation.
        let mut rstatus = vec![0u8; 4];
        launch(
            &program,
            "read_reserved",
            &mut [pipe_arg(&pipe), Arg::Buf(&mut dst), Arg::Buf(&mut rstatus)],
            1,
            1,
        );
        assert_eq!(ints(&rstatus), vec![-2]);
    }
}

/// Writes with `writer` and reads back with `reader` (group reservations): `groups` groups of
/// `local` work-items into a pipe with room for `room` packets.
fn group_round_trip(
    program: &ferrocl_codegen::Program,
    (writer, reader): (&str, &str),
    global: usize,
    local: usize,
    room: usize,
) -> (Vec<i32>, Vec<i32>, Vec<i32>) {
    let pipe = Pipe::new(4, room).unwrap();
    let src: Vec<i32> = (0..global as i32).map(|i| 5000 + i).collect();
    let mut src_b = bytes_of(&src);
    let mut wvalid = vec![0u8; global * 4];
    launch(
        program,
        writer,
        &mut [Arg::Buf(&mut src_b), pipe_arg(&pipe), Arg::Buf(&mut wvalid)],
        global as u64,
        local as u64,
    );
    let mut dst = vec![0u8; global * 4];
    let mut rvalid = vec![0u8; global * 4];
    launch(
        program,
        reader,
        &mut [pipe_arg(&pipe), Arg::Buf(&mut dst), Arg::Buf(&mut rvalid)],
        global as u64,
        local as u64,
    );
    (ints(&wvalid), ints(&dst), ints(&rvalid))
}

#[test]
fn a_work_group_reserves_once_for_all_its_work_items() {
    for program in programs() {
        // Room for every group: each group's packets arrive in place.
        let (wvalid, dst, rvalid) =
            group_round_trip(&program, ("write_group", "read_group"), 64, 16, 64);
        assert!(wvalid.iter().chain(&rvalid).all(|&v| v == 1));
        assert_eq!(dst, (0..64).map(|i| 5000 + i).collect::<Vec<_>>());
        // Room for two of the four groups: the others' reservations fail, whole groups at once.
        let (wvalid, dst, rvalid) =
            group_round_trip(&program, ("write_group", "read_group"), 64, 16, 40);
        assert_eq!(wvalid[..32], [1; 32]);
        assert_eq!(wvalid[32..], [0; 32]);
        assert_eq!(rvalid, wvalid);
        assert_eq!(dst[..32], (0..32).map(|i| 5000 + i).collect::<Vec<_>>()[..]);
        assert_eq!(dst[32..], [-1; 32]);
    }
}

#[test]
fn a_sub_group_reserves_once_for_its_work_items() {
    for program in programs() {
        let (wvalid, dst, rvalid) =
            group_round_trip(&program, ("write_sub_group", "read_sub_group"), 64, 16, 64);
        assert!(wvalid.iter().chain(&rvalid).all(|&v| v == 1));
        assert_eq!(dst, (0..64).map(|i| 5000 + i).collect::<Vec<_>>());
        // A last group of 6 work-items: sub-groups of 4 and 2 reserve what they hold.
        let (wvalid, dst, rvalid) =
            group_round_trip(&program, ("write_sub_group", "read_sub_group"), 22, 8, 22);
        assert!(wvalid.iter().chain(&rvalid).all(|&v| v == 1));
        assert_eq!(dst, (0..22).map(|i| 5000 + i).collect::<Vec<_>>());
    }
}

#[test]
fn the_packet_queries_answer_at_either_end() {
    for program in programs() {
        let pipe = Pipe::new(4, 9).unwrap();
        for v in 0..5u32 {
            let mut v = v;
            // SAFETY: 4 bytes of a local.
            let r = unsafe {
                pipe.access(
                    ferrocl_codegen::PipeEnd::Write,
                    (&mut v as *mut u32).cast(),
                    4,
                )
            };
            assert_eq!(r, 0);
        }
        for kernel in ["query_write", "query_read"] {
            let mut out = vec![0u8; 8];
            launch(
                &program,
                kernel,
                &mut [pipe_arg(&pipe), Arg::Buf(&mut out)],
                1,
                1,
            );
            assert_eq!(ints(&out), vec![5, 9], "{kernel}");
        }
    }
}
