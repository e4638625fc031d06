//! Lock-free, allocation-free hand-off between the 1 kHz servo thread, the
//! physics thread and the telemetry consumer.
//!
//! - [`Latest`]: latest-value hand-off (triple buffering) for state such as
//!   the tool pose (servo → physics) or environment-object poses and contact
//!   models (physics → servo). Publish and read are each one atomic swap:
//!   wait-free.
//! - [`TickStream`]: a bounded per-tick record stream (servo → telemetry)
//!   that never blocks: when full, the newest record is dropped and counted.
//! - [`mailbox`]: a one-slot hand-over of a boxed value (control → servo)
//!   with a return path, so that the value is built and dropped off the
//!   servo thread (rendering parameter updates).
//!
//! No locks: every operation after construction is a bounded handful of
//! loads, stores and (for [`Latest`]) swaps on native atomics — no mutex,
//! no spin loop, no futex or other syscall, and no allocation. All buffers
//! are allocated when a channel is built.

mod latest;
mod mailbox;
mod tick_stream;

pub use latest::{Latest, LatestReader, LatestWriter};
pub use mailbox::{mailbox, MailboxReceiver, MailboxSender};
pub use tick_stream::{Drain, TickConsumer, TickProducer, TickStream};
