//! Running one kernel launch ([`KernelLaunch`], made by [`crate::kernel::Kernel::launch`] at
//! enqueue time): the printf buffer, the watchdog's deadline, a terminable context's stop word,
//! checked mode, device-side enqueue's children, and what a stopped or faulted launch returns.

use std::sync::Arc;

use opencl_sys::*;

use crate::context::Context;
use crate::device_enqueue::Session;
use crate::device_queue::DeviceQueue;
use crate::executor::{run_ndrange, ArgBlock, JobHints, Launch, LaunchFailure};
use crate::memory::Mem;
use crate::object::CLResult;
use crate::platform::Device;
use crate::printf::{write_stdout, PrintfBuffer};
use crate::program::Built;
use crate::svm::SvmAllocation;

/// `[start, end)` of memory a checked kernel may reach ([`CheckedLaunch`]).
pub(crate) type Region = (u64, u64);

/// A launch checked and packed at enqueue time (arguments as they were then), run by the queue
/// as [`crate::command::Command::Kernel`].
pub struct KernelLaunch {
    /// The launch runs Cranelift's code of a tiered kernel: its run time counts toward the
    /// wide build (tiering.rs).
    pub(crate) tiered: bool,
    pub(crate) built: Arc<Built>,
    pub(crate) index: usize,
    /// The kernel built for this launch's image formats and samplers, if it has any.
    pub(crate) specialized: Option<Arc<ferrocl_codegen::Program>>,
    pub(crate) device: Arc<Device>,
    pub(crate) launch: Launch,
    pub(crate) block: ArgBlock,
    /// Checked kernels: the regions and the read-only (`__constant`) regions of the launch.
    pub(crate) checked_regions: Option<(Vec<Region>, Vec<Region>)>,
    /// The memory objects the argument block points into.
    pub(crate) _keep_alive: Vec<Arc<Mem>>,
    /// The SVM allocations it reaches: a free during the launch is deferred until it ends.
    pub(crate) _svm_in_use: Vec<Arc<SvmAllocation>>,
    /// The context, whose device queues the kernel's device-side enqueues name.
    pub(crate) context: Arc<Context>,
    /// The device queues of its `queue_t` arguments.
    pub(crate) _queues: Vec<Arc<DeviceQueue>>,
}

impl KernelLaunch {
    /// Runs the launch; a command-buffer command runs the same launch at every enqueue (and
    /// at once on several queues under simultaneous use), so per-run state is local.
    pub fn run(&self, hints: JobHints) -> CLResult<()> {
        let kernel = match &self.specialized {
            Some(p) => &p.kernels()[0],
            None => &self.built.code.kernels()[self.index],
        };
        let mut launch = self.launch.clone();
        // A command whose kernel prints gets its own buffer; the text is out before the
        // command's event completes.
        let mut printf = (!kernel.printf_formats.is_empty())
            .then(|| PrintfBuffer::new(self.device.config.printf_buffer_size));
        launch.printf_buffer = printf.as_mut().map_or(0, PrintfBuffer::address);
        // The deadline counts from the command's start, not its enqueue.
        let settings = &self.device.config.settings;
        let watch = settings.kernel_timeout.map(crate::watchdog::watch);
        launch.stop = watch.as_ref().map(crate::watchdog::Watch::stop_word);
        // A terminable context's termination stops the launch through the same word.
        if let Some(termination) = &self.context.termination {
            let stop = launch.stop.get_or_insert_with(Default::default);
            termination.track_stop_word(stop)?;
        }
        // A checked kernel's fault stops the launch through the same word (a new one without
        // a watchdog).
        let checked = self
            .checked_regions
            .clone()
            .map(|(regions, read_only)| launch.arm_checked(regions, read_only));
        let started = self.tiered.then(std::time::Instant::now);
        // A kernel with device-side enqueue gets a host for its enqueues; the children run
        // after its work-groups, and the command completes after them (device_enqueue.rs).
        let session = kernel.info.uses_device_enqueue.then(|| {
            Session::new(
                &self.context,
                &self.device,
                &self.built,
                hints,
                &launch,
                self.checked_regions.clone(),
            )
        });
        launch.device_enqueue = session.as_ref().map_or(0, Session::context_address);
        let ran = run_ndrange(&self.device.pool, hints, kernel, &self.block, &launch);
        if let Some(started) = started {
            crate::tiering::ran(&self.built, self.index, started.elapsed(), settings);
        }
        if let Some(fault) = checked.as_ref().and_then(|c| c.fault()) {
            if let Some(printf) = printf {
                write_stdout(&printf.render(&kernel.printf_formats));
            }
            // Always on stderr, whatever FERROCL_LOG says: finding this is what checked mode
            // is for.
            eprintln!(
                "ferrocl: checked mode: {}; the command fails with CL_OUT_OF_RESOURCES",
                fault.describe(kernel)
            );
            return Err(CL_OUT_OF_RESOURCES);
        }
        // A deadline that passed while the last groups finished still counts: work-items may
        // have seen the word and left, and nothing tells which did.
        let fired = || watch.as_ref().is_some_and(crate::watchdog::Watch::fired);
        // What the kernel printed (so far, if it was stopped) is printed before its children run.
        if let Some(printf) = printf {
            write_stdout(&printf.render(&kernel.printf_formats));
        }
        // The children run while the watchdog still watches the command.
        let children = match session {
            Some(s) if ran.is_ok() && !fired() => s.run_children(),
            _ => Ok(()),
        };
        let stopped = fired();
        drop(watch);
        self.context.check_live()?;
        if stopped || ran == Err(LaunchFailure::Stopped) {
            crate::settings::log(
                settings,
                crate::settings::LogLevel::Error,
                format_args!(
                    "kernel {} was stopped after running longer than FERROCL_KERNEL_TIMEOUT ({} s); its command fails with CL_OUT_OF_RESOURCES",
                    kernel.info.name,
                    settings.kernel_timeout.unwrap_or_default().as_secs_f64()
                ),
            );
            // What GPU drivers report for a kernel their watchdog killed: the device could not
            // finish it with the resources (time) it had. Not CL_OUT_OF_HOST_MEMORY (nothing
            // failed to allocate) nor CL_INVALID_* (the launch itself was valid).
            return Err(CL_OUT_OF_RESOURCES);
        }
        ran.map_err(|_| CL_OUT_OF_HOST_MEMORY)?;
        children
    }
}
