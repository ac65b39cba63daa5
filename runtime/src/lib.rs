//! Ferrocl's runtime: platform, device and its configuration, contexts, memory objects, programs,
//! kernels, queues, events and the executor. The icd crate checks C arguments and calls in here;
//! this crate knows no C handles beyond the object header (`object::Base`).

pub mod binary;
pub mod command;
pub mod command_buffer;
pub mod config;
pub mod context;
pub mod device_enqueue;
pub mod device_queue;
pub mod event;
pub mod executor;
pub mod features;
pub mod host_alloc;
pub mod image;
pub mod kernel;
pub mod kernel_launch;
pub mod live_thread;
pub mod memory;
pub mod object;
pub mod pixel;
pub mod platform;
pub mod printf;
pub mod program;
pub mod program_cache;
pub mod queue;
pub mod sampler;
pub mod semaphore;
pub mod settings;
pub mod svm;
pub mod termination;
pub mod tiering;
pub mod topology;
pub mod watchdog;

pub use object::{CLResult, ClObject};

// Every object is shared across threads by the C API.
const _: () = {
    const fn send_sync<T: Send + Sync>() {}
    send_sync::<platform::Platform>();
    send_sync::<platform::Device>();
    send_sync::<context::Context>();
    send_sync::<memory::Mem>();
    send_sync::<program::Program>();
    send_sync::<kernel::Kernel>();
    send_sync::<queue::Queue>();
    send_sync::<device_queue::DeviceQueue>();
    send_sync::<event::Event>();
    send_sync::<command_buffer::CommandBuffer>();
    send_sync::<command_buffer::MutableCommand>();
};
pub use ferrocl_frontend as frontend;
pub use ferrocl_opencl_c as opencl_c;
