//! Latest-value hand-off over the `triple_buffer` crate.
//!
//! Three slots are allocated up front: the writer owns one, the reader owns
//! one, and the third ("back") slot is exchanged through a single `AtomicU8`
//! holding its index and a "new value" bit. Publishing swaps the writer's
//! slot with the back slot (`AcqRel`: the release half makes the writer's
//! stores to the slot visible to whoever acquires the index; the acquire
//! half makes the writer see the reader's last accesses to the slot it gets
//! back as finished). Reading swaps the back slot with the reader's slot the
//! same way, only when the "new value" bit is set. Neither side ever waits
//! for the other, so both are wait-free, and the reader always sees a slot
//! the writer finished filling: values are never torn.

use triple_buffer::{Input, Output, TripleBuffer};

/// A latest-value channel: the writer publishes, the reader sees the newest
/// complete value. Intermediate values the reader did not get to are
/// overwritten, never queued.
#[derive(Debug)]
pub struct Latest<T: Send>(TripleBuffer<T>);

impl<T: Clone + Send> Latest<T> {
    /// Allocates the three slots, each a clone of `initial`. Give `initial`
    /// the capacity later values need (e.g. a contact-model `Vec` reserved
    /// for the maximum contact count) so that in-place publishes never grow.
    pub fn new(initial: &T) -> Self {
        Self(TripleBuffer::new(initial))
    }
}

impl<T: Send> Latest<T> {
    /// Splits into the writer and reader halves, each to be moved to its
    /// thread.
    pub fn split(self) -> (LatestWriter<T>, LatestReader<T>) {
        let (input, output) = self.0.split();
        (LatestWriter(input), LatestReader(output))
    }
}

/// The publishing half of a [`Latest`].
#[derive(Debug)]
pub struct LatestWriter<T: Send>(Input<T>);

impl<T: Send> LatestWriter<T> {
    /// Publishes `value`, moving it into the writer's slot. Allocates
    /// nothing, but drops the value the slot held before.
    pub fn publish(&mut self, value: T) {
        self.publish_with(|slot| *slot = value);
    }

    /// Fills the writer's slot in place with `fill`, then publishes it.
    ///
    /// The slot holds an older value (not necessarily the last one
    /// published), so `fill` must overwrite every field it cares about; its
    /// heap buffers are reused (e.g. `clear()` then `extend` a `Vec`).
    pub fn publish_with(&mut self, fill: impl FnOnce(&mut T)) {
        fill(self.0.input_buffer_mut());
        self.0.publish();
    }
}

impl<T: Clone + Send> LatestWriter<T> {
    /// Publishes a copy of `value` with `Clone::clone_from`, which reuses the
    /// slot's heap buffers: no allocation once they are large enough.
    pub fn publish_from(&mut self, value: &T) {
        self.publish_with(|slot| slot.clone_from(value));
    }
}

/// The reading half of a [`Latest`].
#[derive(Debug)]
pub struct LatestReader<T: Send>(Output<T>);

impl<T: Send> LatestReader<T> {
    /// The newest complete value: the newly published one if any, otherwise
    /// the one returned last time.
    pub fn read(&mut self) -> &T {
        self.0.read()
    }

    /// The newest complete value if one was published since the last read,
    /// `None` otherwise.
    pub fn read_new(&mut self) -> Option<&T> {
        if self.0.update() {
            Some(self.0.output_buffer())
        } else {
            None
        }
    }
}
