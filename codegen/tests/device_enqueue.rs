//! Device-side enqueue from OpenCL C (tests/kernels/device_enqueue.cl, both recipes) through
//! the frontend and codegen, against a host that records what JIT code hands it: the
//! ndranges, flags, wait lists, block literals and local sizes of `enqueue_kernel`, markers,
//! event operations and block queries; then each enqueued block runs as the kernel the
//! program made for it, on its recorded literal, as the runtime runs children.

mod common;

use std::sync::{Arc, Mutex};

use common::*;
use ferrocl_codegen::{
    BlockQuery, DeviceEnqueueContext, DeviceEnqueueHost, KernelEnqueue, NdRange,
    CLK_INVALID_EVENT_WAIT_LIST,
};

const LANGUAGE: Language = Language {
    options: "-cl-std=CL3.0",
    extensions: &[
        "__opencl_c_device_enqueue",
        "__opencl_c_generic_address_space",
        "__opencl_c_program_scope_global_variables",
        "__opencl_c_int64",
    ],
    debug_info: false,
};

const QUEUE: u64 = 0xabc0;

#[derive(Debug, Clone)]
struct Enqueued {
    queue: u64,
    flags: u32,
    ndrange: NdRange,
    wait: Vec<u64>,
    block: u32,
    literal: Vec<u64>,
    locals: Vec<u64>,
}

#[derive(Default)]
struct Recorder {
    kernels: Mutex<Vec<Enqueued>>,
    log: Mutex<Vec<String>>,
    next_event: Mutex<u64>,
}

impl Recorder {
    fn event(&self) -> u64 {
        let mut n = self.next_event.lock().unwrap();
        *n += 1;
        *n
    }
    fn note(&self, s: String) {
        self.log.lock().unwrap().push(s);
    }
}

impl DeviceEnqueueHost for Recorder {
    fn enqueue_kernel(&self, r: &KernelEnqueue<'_>, want_event: bool) -> Result<u64, i32> {
        // The literal as u64 words (it holds a pointer and ints), its copy kept for the run.
        let mut literal = vec![0u64; r.literal.len().div_ceil(8)];
        // SAFETY: `literal` has room for the literal's bytes.
        unsafe {
            std::ptr::copy_nonoverlapping(
                r.literal.as_ptr(),
                literal.as_mut_ptr().cast::<u8>(),
                r.literal.len(),
            )
        };
        self.kernels.lock().unwrap().push(Enqueued {
            queue: r.queue,
            flags: r.flags,
            ndrange: r.ndrange,
            wait: r.wait_events.to_vec(),
            block: r.block_kernel,
            literal,
            locals: r.local_sizes.to_vec(),
        });
        Ok(if want_event { self.event() } else { 0 })
    }
    fn enqueue_marker(&self, queue: u64, wait: &[u64], want_event: bool) -> Result<u64, i32> {
        self.note(format!("marker {queue:#x} {wait:?}"));
        Ok(if want_event { self.event() } else { 0 })
    }
    fn default_queue(&self) -> u64 {
        QUEUE
    }
    fn create_user_event(&self) -> u64 {
        let e = self.event();
        self.note(format!("user {e}"));
        e
    }
    fn retain_event(&self, event: u64) {
        self.note(format!("retain {event}"));
    }
    fn release_event(&self, event: u64) {
        self.note(format!("release {event}"));
    }
    fn set_user_event_status(&self, event: u64, status: i32) {
        self.note(format!("status {event} {status}"));
    }
    fn is_valid_event(&self, event: u64) -> bool {
        event != 0
    }
    fn capture_profiling_info(&self, event: u64, name: u32, _dst: u64) {
        self.note(format!("profile {event} {name}"));
    }
    fn block_query(&self, block: u32, query: BlockQuery, ndrange: Option<&NdRange>) -> u32 {
        self.note(format!("query {block} {query:?} {}", ndrange.is_some()));
        64
    }
}

#[test]
fn enqueue_instructions_hand_the_host_what_the_kernel_says_and_blocks_run_as_kernels() {
    for recipe in RECIPES {
        let program = build_spirv(&spirv_from_c("device_enqueue.cl", recipe, LANGUAGE));
        let recorder = Arc::new(Recorder::default());
        let ctx = DeviceEnqueueContext {
            host: recorder.clone(),
        };
        let ctx_addr = &ctx as *const DeviceEnqueueContext as u64;
        let parent = program.kernel("parent").expect("parent");
        assert!(parent.info.uses_device_enqueue && !parent.info.block_invoke);
        let mut out = vec![0u8; 400 * 4];
        launch_kernel(
            parent,
            &mut [Arg::Buf(&mut out), Arg::Val(5i32.to_ne_bytes().to_vec())],
            1,
            1,
            ctx_addr,
        );
        let got: Vec<i32> = (0..5).map(|i| read_int(&out, i, 32, true) as i32).collect();
        // Three successes, the block's work-group size, a valid user event.
        assert_eq!(got, [0, 0, 0, 64, 1], "{recipe:?}");
        let kernels = recorder.kernels.lock().unwrap().clone();
        assert_eq!(kernels.len(), 2, "{recipe:?}");
        let (first, second) = (&kernels[0], &kernels[1]);
        assert_eq!((first.queue, first.flags), (QUEUE, 1));
        assert_eq!(first.ndrange.work_dim, 1);
        assert_eq!(first.ndrange.global[0], 5);
        assert_eq!(first.ndrange.local, [0; 3]);
        assert!(first.wait.is_empty() && first.locals.is_empty());
        assert_eq!((second.queue, second.flags), (QUEUE, 0));
        assert_eq!(second.ndrange.work_dim, 2);
        assert_eq!(second.ndrange.global[..2], [4, 6]);
        assert_eq!(second.ndrange.local[..2], [2, 3]);
        // The first enqueue's event (the recorder's first), then its local sizes.
        assert_eq!(second.wait, [1]);
        assert_eq!(second.locals, [16, 32]);
        let log = recorder.log.lock().unwrap().join("; ");
        for expected in [
            // Events: the first enqueue's 1, the marker's 2, the user event 3.
            "marker 0xabc0 [1]",
            "user 3; status 3 0; retain 3; release 3; release 3",
            "profile 1 1; release 1; release 2",
            "WorkGroupSize false",
        ] {
            assert!(log.contains(expected), "{recipe:?}: {expected} in {log}");
        }
        // Each block runs as its kernel: a block literal argument, then local pointers.
        let first_kernel = &program.kernels()[first.block as usize];
        assert!(first_kernel.info.block_invoke);
        let literal = first.literal.as_ptr() as u64;
        launch_kernel(
            first_kernel,
            &mut [Arg::Val(literal.to_ne_bytes().to_vec())],
            5,
            1,
            ctx_addr,
        );
        let child: Vec<i32> = (100..105)
            .map(|i| read_int(&out, i, 32, true) as i32)
            .collect();
        assert_eq!(child, [7; 5], "{recipe:?}: the captured base");
        let second_kernel = &program.kernels()[second.block as usize];
        assert_eq!(second_kernel.args.len(), 3);
        let literal = second.literal.as_ptr() as u64;
        launch_kernel(
            second_kernel,
            &mut [
                Arg::Val(literal.to_ne_bytes().to_vec()),
                Arg::Val(0u64.to_ne_bytes().to_vec()),
                Arg::Val(128u64.to_ne_bytes().to_vec()),
            ],
            4,
            2,
            ctx_addr,
        );
        assert_eq!(
            read_int(&out, 200, 32, true),
            8,
            "{recipe:?}: base + local size 1"
        );
    }
}

#[test]
fn a_wait_count_without_a_list_is_refused_before_the_host() {
    for recipe in RECIPES {
        let program = build_spirv(&spirv_from_c("device_enqueue.cl", recipe, LANGUAGE));
        let recorder = Arc::new(Recorder::default());
        let ctx = DeviceEnqueueContext {
            host: recorder.clone(),
        };
        let mut out = vec![0u8; 8];
        launch_kernel(
            program.kernel("refused").expect("refused"),
            &mut [Arg::Buf(&mut out)],
            1,
            1,
            &ctx as *const DeviceEnqueueContext as u64,
        );
        assert_eq!(
            read_int(&out, 0, 32, true) as i32,
            CLK_INVALID_EVENT_WAIT_LIST
        );
        assert!(recorder.kernels.lock().unwrap().is_empty());
    }
}

#[test]
fn blocks_called_in_place_run_with_their_program_scope_literals() {
    for recipe in RECIPES {
        let program = build_spirv(&spirv_from_c("device_enqueue.cl", recipe, LANGUAGE));
        let mut out = vec![0u8; 4];
        launch(&program, "direct_block", &mut [Arg::Buf(&mut out)], 1, 1);
        assert_eq!(read_int(&out, 0, 32, true), 0, "{recipe:?}: 3 + 7 - 10");
    }
}
