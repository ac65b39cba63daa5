//! `cl_intel_subgroups_char`, `cl_intel_subgroups_short`, `cl_intel_subgroups_long` and
//! `cl_intel_subgroup_local_block_io` through the loader, against the host:
//! - reported at the versions Intel's CPU runtime reports (1.0.0), with the macros clang sees,
//!   and gone with `FERROCL_SUBGROUPS=off`;
//! - the four shuffles of char, uchar, short and ushort, scalars and vectors of 2, 3, 4, 8 and
//!   16, byte for byte against the source work-item's element, in whole, short and small
//!   sub-groups;
//! - the char and short broadcasts, reductions and scans against wrapping host arithmetic;
//! - block reads and writes of uchar (1, 2, 4, 8, 16 components), ushort, uint (the `_ui`
//!   names, and the un-suffixed ones on local memory) and ulong (1, 2, 4, 8) on global and on
//!   local memory, every element of the output checked (the blocks' and the untouched ones);
//!   with sub-groups of 4 and of 2 (a work-group of 2);
//! - the image block reads and writes of uchar, ushort and ulong;
//! - the module llvm-spirv-15 makes uses the SPV_INTEL_subgroups instructions on 8-, 16- and
//!   64-bit data and on Workgroup pointers.
//!
//! Programs come from OpenCL C through the device's compiler and from the driver's recipe's IL
//! at both recipes; the block tests run again in checked mode and with the wide backend.

mod common;
#[path = "common/images.rs"]
mod image_helpers;

use std::ptr;

use common::*;
use image_helpers::*;
use opencl_sys::*;

const FILE: &str = "intel_subgroup_types";
const EXTENSIONS: [&str; 4] = [
    "cl_intel_subgroups_char",
    "cl_intel_subgroups_short",
    "cl_intel_subgroups_long",
    "cl_intel_subgroup_local_block_io",
];

/// The device's one sub-group size.
const SUB_GROUP: usize = 4;

fn random_bytes(n: usize, seed: u64) -> Vec<u8> {
    let mut rng = Rng::new(seed);
    (0..n).map(|_| rng.next_u32() as u8).collect()
}

/// The programs to check: from source through the device's compiler (OpenCL C 1.2 and 3.0) and
/// from the recipe's IL at both recipes (the other ICD gets the source).
fn programs(env: &Env) -> Vec<(Program, String)> {
    let source = std::fs::read_to_string(kernel_source(FILE)).unwrap();
    let mut out = Vec::new();
    for std in ["-cl-std=CL1.2", "-cl-std=CL3.0"] {
        out.push((env.program_from_source(&source, std), std.to_owned()));
    }
    for opt in OPTS {
        out.push((env.program(FILE, opt), format!("IL {opt:?}")));
    }
    out
}

#[test]
fn the_extensions_are_reported() {
    let env = Env::new();
    if env.other_icd {
        return;
    }
    let with_version = check(
        cl(env.device.extensions_with_version()),
        "CL_DEVICE_EXTENSIONS_WITH_VERSION",
    );
    for name in EXTENSIONS {
        assert!(env.has_extension(name), "{name}");
        let version = with_version.iter().find_map(|e| {
            let n: Vec<u8> = e.name.iter().take_while(|&&c| c != 0).copied().collect();
            (n == name.as_bytes()).then_some(e.version)
        });
        assert_eq!(version, Some(1 << 22), "{name}: 1.0.0");
    }
}

/// With `FERROCL_SUBGROUPS=off` none is reported, clang does not see their macros, and a module
/// with the block instructions is refused.
#[test]
fn the_extensions_follow_the_sub_group_switch() {
    if rerun_in_child(
        "the_extensions_follow_the_sub_group_switch",
        &[("FERROCL_SUBGROUPS", "off")],
    )
    .is_some()
    {
        return;
    }
    let env = Env::new();
    if env.other_icd {
        return;
    }
    for name in EXTENSIONS {
        assert!(!env.has_extension(name), "{name}");
    }
    let source = std::fs::read_to_string(kernel_source(FILE)).unwrap();
    let log = env
        .try_program_from_source(&source, "-cl-std=CL1.2")
        .expect_err("the Intel built-ins build without sub-groups");
    assert!(
        log.contains("cl_intel_subgroups_char is not defined"),
        "{log}"
    );
    let il = spirv(FILE, Opt::Optimised);
    let program = check(
        cl(Program::create_from_il(&env.context, &il)),
        "clCreateProgramWithIL",
    );
    let none = std::ffi::CString::new("").unwrap();
    let built = opencl3::program::build_program(
        program.get(),
        env.context.devices(),
        &none,
        None,
        ptr::null_mut(),
    );
    assert_eq!(built, Err(CL_BUILD_PROGRAM_FAILURE));
    let log = program.get_build_log(env.device.id()).unwrap_or_default();
    assert!(log.contains("SubgroupBufferBlockIOINTEL"), "{log}");
}

// ---- shuffles ----

/// Runs `shuffles_<name>` on 3 groups of `local` work-items whose elements are `width`
/// components of `bytes` bytes, and checks every result whose source lane exists: the bytes of
/// the source work-item's element.
fn check_shuffles(env: &Env, program: &Program, name: &str, width: usize, bytes: usize) {
    for local in [1, 3, 4, 6, 16] {
        let n = 3 * local;
        let stride = width * bytes;
        let x = random_bytes(n * stride, 11 + local as u64 + bytes as u64);
        let y = random_bytes(n * stride, 23 + local as u64 + width as u64);
        let max = SUB_GROUP.min(local);
        let mut rng = Rng::new(local as u64);
        // Operands mostly in range (0..max), some past it (undefined results, not checked).
        let c: Vec<u32> = (0..n).map(|_| rng.next_u32() % (max as u32 + 1)).collect();
        let kernel = check(
            cl(Kernel::create(program, &format!("shuffles_{name}"))),
            "clCreateKernel",
        );
        let (xb, yb, cb) = (env.buffer(&x), env.buffer(&y), env.buffer(&c));
        let out = env.buffer_filled(4 * n * stride, 0u8);
        arg_buf(&kernel, 0, &xb);
        arg_buf(&kernel, 1, &yb);
        arg_buf(&kernel, 2, &cb);
        arg_buf(&kernel, 3, &out);
        env.run(&kernel, &[n], Some(&[local]), None);
        let got = env.read(&out, 4 * n * stride);
        let mut checked = 0;
        for (i, &k) in c.iter().enumerate() {
            let in_group = i % local;
            let lane = in_group % SUB_GROUP;
            let first = i - lane;
            let count = SUB_GROUP.min(local - (in_group - lane));
            for op in 0..4 {
                let Some((src, which)) = shuffle_source(op, lane, k as usize, max) else {
                    continue;
                };
                if src >= count {
                    continue;
                }
                let data = if which == 0 { &x } else { &y };
                let from = (first + src) * stride;
                let at = (4 * i + op) * stride;
                assert_eq!(
                    &got[at..at + stride],
                    &data[from..from + stride],
                    "shuffles_{name}, local {local}, work-item {i}, op {op}, operand {k}"
                );
                checked += 1;
            }
        }
        assert!(
            checked > n,
            "shuffles_{name}: too few results in range ({checked})"
        );
    }
}

#[test]
fn shuffles_of_chars_and_shorts() {
    let env = Env::new();
    if !env.extension_or_skip("cl_intel_subgroups_char")
        || !env.extension_or_skip("cl_intel_subgroups_short")
    {
        return;
    }
    for (program, what) in programs(&env) {
        eprintln!("shuffles: {what}");
        for (base, bytes) in [("char", 1), ("uchar", 1), ("short", 2), ("ushort", 2)] {
            for (n, width) in [("", 1), ("2", 2), ("3", 3), ("4", 4), ("8", 8), ("16", 16)] {
                check_shuffles(&env, &program, &format!("{base}{n}"), width, bytes);
            }
        }
    }
}

// ---- broadcasts, reductions and scans ----

/// An 8- or 16-bit integer type: its size and signedness.
#[derive(Clone, Copy, Debug)]
struct IntType {
    name: &'static str,
    bytes: usize,
    signed: bool,
}

impl IntType {
    fn bits(self) -> u32 {
        8 * self.bytes as u32
    }
    /// The value of little-endian `raw`.
    fn decode(self, raw: &[u8]) -> i64 {
        let v = raw.iter().rev().fold(0u64, |v, &b| v << 8 | u64::from(b));
        let shift = 64 - self.bits();
        if self.signed {
            ((v << shift) as i64) >> shift
        } else {
            v as i64
        }
    }
    /// `v` wrapped into the type.
    fn wrap(self, v: i64) -> i64 {
        let shift = 64 - self.bits();
        if self.signed {
            (v << shift) >> shift
        } else {
            ((v as u64) << shift >> shift) as i64
        }
    }
    fn min_value(self) -> i64 {
        if self.signed {
            -(1 << (self.bits() - 1))
        } else {
            0
        }
    }
    fn max_value(self) -> i64 {
        if self.signed {
            (1 << (self.bits() - 1)) - 1
        } else {
            (1 << self.bits()) - 1
        }
    }
}

const INT_TYPES: [IntType; 4] = [
    IntType {
        name: "char",
        bytes: 1,
        signed: true,
    },
    IntType {
        name: "uchar",
        bytes: 1,
        signed: false,
    },
    IntType {
        name: "short",
        bytes: 2,
        signed: true,
    },
    IntType {
        name: "ushort",
        bytes: 2,
        signed: false,
    },
];

/// The ten results of `collectives_<t>` for lane `lane` of a sub-group holding `values`.
fn collectives_reference(t: IntType, values: &[i64], lane: usize) -> [i64; 10] {
    let add = |s: &[i64]| t.wrap(s.iter().sum());
    let min = |s: &[i64]| s.iter().copied().min().unwrap_or(t.max_value());
    let max = |s: &[i64]| s.iter().copied().max().unwrap_or(t.min_value());
    let (before, upto) = (&values[..lane], &values[..=lane]);
    [
        values[values.len() - 1],
        add(values),
        min(values),
        max(values),
        add(before),
        min(before),
        max(before),
        add(upto),
        min(upto),
        max(upto),
    ]
}

#[test]
fn char_and_short_broadcasts_reductions_and_scans() {
    let env = Env::new();
    if !env.extension_or_skip("cl_intel_subgroups_char")
        || !env.extension_or_skip("cl_intel_subgroups_short")
    {
        return;
    }
    for (program, what) in programs(&env) {
        for t in INT_TYPES {
            for local in [3, 4, 10, 16] {
                let n = 2 * local;
                // Random values, and runs of the extremes so that sums wrap.
                let mut x = random_bytes(n * t.bytes, local as u64 + t.bytes as u64);
                for (i, chunk) in x.chunks_exact_mut(t.bytes).enumerate() {
                    if i % 7 < 2 {
                        chunk.fill(if t.signed { 0x7f } else { 0xff });
                        if t.signed {
                            chunk[..t.bytes - 1].fill(0xff);
                        }
                    }
                }
                let kernel = check(
                    cl(Kernel::create(&program, &format!("collectives_{}", t.name))),
                    "clCreateKernel",
                );
                let xb = env.buffer(&x);
                let out = env.buffer_filled(10 * n * t.bytes, 0u8);
                arg_buf(&kernel, 0, &xb);
                arg_buf(&kernel, 1, &out);
                env.run(&kernel, &[n], Some(&[local]), None);
                let got = env.read(&out, 10 * n * t.bytes);
                let values: Vec<i64> = x.chunks_exact(t.bytes).map(|c| t.decode(c)).collect();
                for i in 0..n {
                    let in_group = i % local;
                    let lane = in_group % SUB_GROUP;
                    let first = i - lane;
                    let count = SUB_GROUP.min(local - (in_group - lane));
                    let want = collectives_reference(t, &values[first..first + count], lane);
                    let at = 10 * i * t.bytes;
                    let have: Vec<i64> = got[at..at + 10 * t.bytes]
                        .chunks_exact(t.bytes)
                        .map(|c| t.decode(c))
                        .collect();
                    assert_eq!(
                        have, want,
                        "{what}: collectives_{}, local {local}, work-item {i}",
                        t.name
                    );
                }
            }
        }
    }
}

// ---- block reads and writes ----

/// Elements of a sub-group's region, and of each slot in it (kernels: REGION).
const REGION: usize = 5 * 64;

/// One block kernel pair: its name suffix, element bytes and block widths.
#[derive(Clone, Copy, Debug)]
struct Blocks {
    name: &'static str,
    bytes: usize,
    widths: &'static [usize],
}

const BLOCKS: [Blocks; 4] = [
    Blocks {
        name: "uc",
        bytes: 1,
        widths: &[1, 2, 4, 8, 16],
    },
    Blocks {
        name: "us",
        bytes: 2,
        widths: &[1, 2, 4, 8],
    },
    Blocks {
        name: "ui",
        bytes: 4,
        widths: &[1, 2, 4, 8],
    },
    Blocks {
        name: "ul",
        bytes: 8,
        widths: &[1, 2, 4, 8],
    },
];

/// What `global_<b>` and `local_<b>` leave in an output holding `pattern`: for each of the
/// `subs` sub-groups of `max` work-items, component k of lane l of the block in slot j
/// (element l + k max of the slot) is the input plus j + 1, wrapping; everything else is kept.
fn blocks_reference(b: Blocks, input: &[u8], pattern: &[u8], subs: usize, max: usize) -> Vec<u8> {
    let mut want = pattern.to_vec();
    for s in 0..subs {
        for (j, &w) in b.widths.iter().enumerate() {
            for e in 0..max * w {
                let at = (REGION * s + 64 * j + e) * b.bytes;
                let mut carry = j as u16 + 1;
                for byte in 0..b.bytes {
                    let sum = u16::from(input[at + byte]) + carry;
                    want[at + byte] = sum as u8;
                    carry = sum >> 8;
                }
            }
        }
    }
    want
}

/// Runs `<space>_<b.name>` (or `local_u` for the un-suffixed names) on 3 groups of `local`
/// work-items and compares the whole output with the host.
fn check_blocks(env: &Env, program: &Program, kernel: &str, b: Blocks, local: usize, what: &str) {
    let groups = 3;
    let n = groups * local;
    let max = SUB_GROUP.min(local);
    let subs = n / max;
    let len = REGION * subs * b.bytes;
    let input = random_bytes(len, (local * 31 + b.bytes) as u64);
    let pattern = random_bytes(len, (local * 37 + b.bytes) as u64 + 1);
    let k = check(cl(Kernel::create(program, kernel)), "clCreateKernel");
    let ib = env.buffer(&input);
    let ob = env.buffer(&pattern);
    arg_buf(&k, 0, &ib);
    arg_buf(&k, 1, &ob);
    if kernel.starts_with("local_") {
        arg_local(&k, 2, 2 * REGION * (local / max) * b.bytes);
    }
    env.run(&k, &[n], Some(&[local]), None);
    let got = env.read(&ob, len);
    let want = blocks_reference(b, &input, &pattern, subs, max);
    if got != want {
        let first = got.iter().zip(&want).position(|(g, w)| g != w).unwrap();
        let element = first / b.bytes;
        panic!(
            "{what}: {kernel}, local {local}: element {element} (sub-group {}, slot {}, offset {}) \
             is {:02x?}, want {:02x?}",
            element / REGION,
            element % REGION / 64,
            element % 64,
            &got[element * b.bytes..(element + 1) * b.bytes],
            &want[element * b.bytes..(element + 1) * b.bytes],
        );
    }
}

fn check_all_blocks(env: &Env, program: &Program, what: &str) {
    for b in BLOCKS {
        for local in [2, 4, 8, 16] {
            check_blocks(env, program, &format!("global_{}", b.name), b, local, what);
            check_blocks(env, program, &format!("local_{}", b.name), b, local, what);
        }
    }
    for local in [4, 8] {
        check_blocks(env, program, "local_u", BLOCKS[2], local, what);
    }
}

#[test]
fn block_reads_and_writes_of_every_type_and_width() {
    let env = Env::new();
    if EXTENSIONS.iter().any(|e| !env.extension_or_skip(e)) {
        return;
    }
    for (program, what) in programs(&env) {
        check_all_blocks(&env, &program, &what);
    }
}

/// The block tests in checked mode: every access is bounds-checked, and blocks inside their
/// buffer or local tile pass.
#[test]
fn block_reads_and_writes_in_checked_mode() {
    if rerun_in_child(
        "block_reads_and_writes_in_checked_mode",
        &[("FERROCL_CHECKED", "on")],
    )
    .is_some()
    {
        return;
    }
    let env = Env::new();
    if env.other_icd {
        return;
    }
    let program = env.program(FILE, Opt::Optimised);
    check_all_blocks(&env, &program, "checked mode");
}

/// The block tests with `FERROCL_BACKEND=wide` (LLVM's code generator from the first launch,
/// where the LLVM server is available; Cranelift otherwise).
#[test]
fn block_reads_and_writes_with_the_wide_backend() {
    if rerun_in_child(
        "block_reads_and_writes_with_the_wide_backend",
        &[("FERROCL_BACKEND", "wide")],
    )
    .is_some()
    {
        return;
    }
    let env = Env::new();
    if env.other_icd {
        return;
    }
    let program = env.program(FILE, Opt::Optimised);
    check_all_blocks(&env, &program, "wide backend");
}

/// The module the recipe makes holds the SPV_INTEL_subgroups block instructions on 8-, 16-
/// and 64-bit data and on Workgroup pointers, and shuffles of 8- and 16-bit data, not calls.
#[test]
fn the_module_uses_the_intel_instructions() {
    let env = Env::new();
    if env.other_icd {
        return;
    }
    let il = spirv(FILE, Opt::Optimised);
    let words: Vec<u32> = il
        .chunks_exact(4)
        .map(|c| u32::from_le_bytes(c.try_into().unwrap()))
        .collect();
    // Integer widths and vectors' elements by type id; pointer types' (storage class,
    // pointee); the type of each value that can be a pointer (the results of the instructions
    // that make pointers).
    const POINTER_MAKERS: [u32; 13] = [55, 59, 61, 65, 66, 67, 70, 83, 121, 122, 124, 169, 245];
    let mut ints = std::collections::HashMap::new();
    let mut vectors = std::collections::HashMap::new();
    let mut pointers = std::collections::HashMap::new();
    let mut types_of = std::collections::HashMap::new();
    let mut found = std::collections::HashSet::new();
    let mut at = 5;
    while at < words.len() {
        let count = (words[at] >> 16) as usize;
        let op = words[at] & 0xffff;
        let w = &words[at..at + count];
        match op {
            21 => {
                ints.insert(w[1], w[2]);
            }
            23 => {
                vectors.insert(w[1], w[2]);
            }
            32 => {
                pointers.insert(w[1], (w[2], w[3]));
            }
            op if POINTER_MAKERS.contains(&op) => {
                types_of.insert(w[2], w[1]);
            }
            _ => {}
        }
        let width = |ty: u32| {
            let elem = vectors.get(&ty).copied().unwrap_or(ty);
            ints.get(&elem).copied().unwrap_or(0)
        };
        // (storage class, pointee width) of pointer value `p`.
        let pointer = |p: u32| {
            let (storage, pointee) = types_of
                .get(&p)
                .and_then(|t| pointers.get(t))
                .copied()
                .unwrap_or((0, 0));
            (storage, width(pointee))
        };
        match op {
            // OpSubgroupShuffleINTEL: the result type's width.
            5571 => {
                found.insert(("shuffle", width(w[1]), 0));
            }
            // OpSubgroupBlockReadINTEL and OpSubgroupBlockWriteINTEL: the pointer's.
            5575 => {
                let (storage, bits) = pointer(w[3]);
                assert_eq!(bits, width(w[1]), "a read's result and pointee");
                found.insert(("read", bits, storage));
            }
            5576 => {
                let (storage, bits) = pointer(w[1]);
                found.insert(("write", bits, storage));
            }
            _ => {}
        }
        at += count.max(1);
    }
    for bits in [8, 16] {
        assert!(
            found.contains(&("shuffle", bits, 0)),
            "{bits}-bit shuffle: {found:?}"
        );
    }
    // CrossWorkgroup is 5, Workgroup 4.
    for bits in [8, 16, 32, 64] {
        for storage in [4, 5] {
            for op in ["read", "write"] {
                assert!(
                    found.contains(&(op, bits, storage)),
                    "{op} of {bits} bits in storage class {storage}: {found:?}"
                );
            }
        }
    }
}

// ---- image block reads and writes ----

/// Per type and width: work-item l stores its block read at byte coordinate (x, y) as the
/// l-th element of `out` and writes the complement of it to `dst` at the same coordinate.
const IMAGE_BLOCKS: &str = "
#define IMAGE_BLOCK(T, S, N)                                                                  \\
    kernel void image_##S##N(read_only image2d_t src, write_only image2d_t dst, int x, int y,   \\
                             global T##N *out) {                                              \\
        T##N v = intel_sub_group_block_read_##S##N(src, (int2)(x, y));                       \\
        out[get_sub_group_local_id()] = v;                                                    \\
        intel_sub_group_block_write_##S##N(dst, (int2)(x, y), ~v);                            \\
    }
IMAGE_BLOCK(uchar, uc, ) IMAGE_BLOCK(uchar, uc, 2) IMAGE_BLOCK(uchar, uc, 4)
IMAGE_BLOCK(uchar, uc, 8) IMAGE_BLOCK(uchar, uc, 16)
IMAGE_BLOCK(ushort, us, ) IMAGE_BLOCK(ushort, us, 2) IMAGE_BLOCK(ushort, us, 4)
IMAGE_BLOCK(ushort, us, 8)
IMAGE_BLOCK(uint, ui, ) IMAGE_BLOCK(uint, ui, 8)
IMAGE_BLOCK(ulong, ul, ) IMAGE_BLOCK(ulong, ul, 2) IMAGE_BLOCK(ulong, ul, 4)
IMAGE_BLOCK(ulong, ul, 8)
";

/// A 2D RGBA8 image (CL_UNSIGNED_INT8) of `width` × `height` texels holding `bytes`.
fn image_2d(
    env: &Env,
    flags: cl_mem_flags,
    width: usize,
    height: usize,
    bytes: &mut [u8],
) -> cl_mem {
    let format = fmt(CL_RGBA, CL_UNSIGNED_INT8);
    let d = sized(CL_MEM_OBJECT_IMAGE2D, width, height, 0, 0);
    // `bytes` covers the image and is copied during the call.
    check(
        create(
            env,
            flags | CL_MEM_COPY_HOST_PTR,
            &format,
            &d,
            bytes.as_mut_ptr().cast(),
        ),
        "clCreateImage",
    )
}

/// Image block reads and writes of every new type against the host: a read is the raw
/// integer at byte `x + size lane` of row `y + k`, the row clamped into the image and the
/// integer into the row; a write outside the image is dropped.
#[test]
fn image_block_reads_and_writes() {
    let env = image_helpers::env();
    if env.other_icd || !env.extension_or_skip("cl_intel_subgroups_char") {
        return;
    }
    let program = env.program_from_source(IMAGE_BLOCKS, "-cl-std=CL1.2");
    // 16 × 6 RGBA8 texels: rows of 64 bytes.
    let (width, height) = (16usize, 6usize);
    let row = 4 * width;
    let mut src = random_bytes(row * height, 5);
    let src_img = image_2d(&env, CL_MEM_READ_ONLY, width, height, &mut src);
    let cases: [(&str, usize, &[usize]); 4] = [
        ("uc", 1, &[1, 2, 4, 8, 16]),
        ("us", 2, &[1, 2, 4, 8]),
        ("ui", 4, &[1, 8]),
        ("ul", 8, &[1, 2, 4, 8]),
    ];
    for (suffix, size, widths) in cases {
        for &w in widths {
            let name = if w == 1 {
                format!("image_{suffix}")
            } else {
                format!("image_{suffix}{w}")
            };
            for (x, y) in [(0i32, 0i32), (4, 1), (8, 3), (row as i32 - 4, 5), (-4, -1)] {
                let mut zeros = vec![0u8; row * height];
                let dst_img = image_2d(&env, CL_MEM_WRITE_ONLY, width, height, &mut zeros);
                let kernel = check(cl(Kernel::create(&program, &name)), "clCreateKernel");
                arg(&kernel, 0, &src_img);
                arg(&kernel, 1, &dst_img);
                arg(&kernel, 2, &x);
                arg(&kernel, 3, &y);
                let out = env.buffer_filled(SUB_GROUP * w * size, 0u8);
                arg_buf(&kernel, 4, &out);
                env.run(&kernel, &[SUB_GROUP], Some(&[SUB_GROUP]), None);
                let got = env.read(&out, SUB_GROUP * w * size);
                let got_dst = read(&env, dst_img, [0; 3], [width, height, 1], 4);
                let mut want_dst = vec![0u8; row * height];
                let mut want = Vec::new();
                for lane in 0..SUB_GROUP {
                    let bx = i64::from(x) + (size * lane) as i64;
                    for k in 0..w {
                        let r = i64::from(y) + k as i64;
                        let line = r.clamp(0, height as i64 - 1) as usize * row;
                        let at = line + bx.clamp(0, (row - size) as i64) as usize;
                        let value = &src[at..at + size];
                        want.extend_from_slice(value);
                        if bx >= 0 && bx as usize + size <= row && (0..height as i64).contains(&r) {
                            let to = r as usize * row + bx as usize;
                            for (d, v) in want_dst[to..to + size].iter_mut().zip(value) {
                                *d = !v;
                            }
                        }
                    }
                }
                let what = format!("{name} at ({x}, {y})");
                assert_eq!(got, want, "{what}: the values read");
                assert_eq!(got_dst, want_dst, "{what}: the written image");
                release(dst_img);
            }
        }
    }
    release(src_img);
}
