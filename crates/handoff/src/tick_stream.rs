//! A bounded single-producer single-consumer ring of `Copy` records that
//! drops the newest record when full.
//!
//! Written here rather than taken from `crossbeam-queue`: `ArrayQueue` is
//! multi-producer multi-consumer, and its `push` spins, then yields to the
//! OS, while a preempted consumer is between claiming a slot and releasing
//! it. This ring has one producer and one consumer, so `push` is wait-free:
//! at most two atomic loads and two atomic stores, no compare-exchange.
//!
//! Indices are free-running `usize` counters (`tail` = records ever pushed,
//! `head` = records ever consumed); a record's slot is its index masked by
//! the power-of-two capacity. Only the producer stores `tail` and only the
//! consumer stores `head`, so the producer's check for room and the
//! consumer's check for records are plain loads.
//!
//! Dropping the newest record (rather than the oldest) keeps the producer
//! off the slots the consumer may be reading: evicting the oldest would make
//! both sides move `head` and race. The consumer sees every record up to an
//! overflow, then a gap (visible as a jump in whatever sequence number the
//! records carry), and [`TickProducer::dropped`] / [`TickConsumer::dropped`]
//! count the records lost.

use std::cell::UnsafeCell;
use std::mem::MaybeUninit;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;

use crossbeam_utils::CachePadded;

/// A bounded record stream: the producer never blocks, and records that
/// find the ring full are dropped and counted.
pub struct TickStream<T: Copy + Send> {
    shared: Arc<Shared<T>>,
}

struct Shared<T> {
    /// Records ever pushed; stored only by the producer.
    tail: CachePadded<AtomicUsize>,
    /// Records ever consumed; stored only by the consumer.
    head: CachePadded<AtomicUsize>,
    /// Records dropped because the ring was full; stored only by the producer.
    dropped: CachePadded<AtomicU64>,
    slots: Box<[UnsafeCell<MaybeUninit<T>>]>,
}

// SAFETY: a slot is written only by the producer while it lies outside
// `head..tail`, and read only by the consumer while it lies inside; the
// release/acquire pairs on `tail` and `head` order those accesses.
unsafe impl<T: Send> Sync for Shared<T> {}

impl<T: Copy + Send> TickStream<T> {
    /// Allocates a ring for at least `capacity` records (rounded up to a
    /// power of two, at least 1).
    pub fn new(capacity: usize) -> Self {
        let capacity = capacity.max(1).next_power_of_two();
        let slots = (0..capacity)
            .map(|_| UnsafeCell::new(MaybeUninit::uninit()))
            .collect();
        Self {
            shared: Arc::new(Shared {
                tail: CachePadded::new(AtomicUsize::new(0)),
                head: CachePadded::new(AtomicUsize::new(0)),
                dropped: CachePadded::new(AtomicU64::new(0)),
                slots,
            }),
        }
    }

    /// The number of records the ring holds.
    pub fn capacity(&self) -> usize {
        self.shared.slots.len()
    }

    /// Splits into the producer and consumer halves.
    pub fn split(self) -> (TickProducer<T>, TickConsumer<T>) {
        let mask = self.capacity() - 1;
        (
            TickProducer {
                shared: Arc::clone(&self.shared),
                mask,
                tail: 0,
                head: 0,
            },
            TickConsumer {
                shared: self.shared,
                mask,
                head: 0,
            },
        )
    }
}

/// The producing half of a [`TickStream`] (the servo thread).
pub struct TickProducer<T: Copy + Send> {
    shared: Arc<Shared<T>>,
    mask: usize,
    /// Own copy of `shared.tail`.
    tail: usize,
    /// Last `shared.head` seen; reloaded only when the ring looks full.
    head: usize,
}

impl<T: Copy + Send> TickProducer<T> {
    /// Appends `record`, or drops and counts it if the ring is full.
    /// Returns whether it was queued. Wait-free.
    pub fn push(&mut self, record: T) -> bool {
        if self.tail.wrapping_sub(self.head) > self.mask {
            // Acquire: the consumer's reads of the slots it released happen
            // before our writes to them.
            self.head = self.shared.head.load(Ordering::Acquire);
            if self.tail.wrapping_sub(self.head) > self.mask {
                // Only this thread stores `dropped`: no read-modify-write.
                let dropped = &self.shared.dropped;
                dropped.store(dropped.load(Ordering::Relaxed) + 1, Ordering::Relaxed);
                return false;
            }
        }
        let slot = &self.shared.slots[self.tail & self.mask];
        // SAFETY: the slot is outside `head..tail`, so the consumer is not
        // reading it and will not until `tail` is published below.
        unsafe { slot.get().write(MaybeUninit::new(record)) };
        self.tail = self.tail.wrapping_add(1);
        // Release: the slot write happens before the consumer's acquire of
        // the new `tail`.
        self.shared.tail.store(self.tail, Ordering::Release);
        true
    }

    /// Records dropped so far because the ring was full.
    pub fn dropped(&self) -> u64 {
        self.shared.dropped.load(Ordering::Relaxed)
    }
}

/// The consuming half of a [`TickStream`] (the telemetry thread).
pub struct TickConsumer<T: Copy + Send> {
    shared: Arc<Shared<T>>,
    mask: usize,
    /// Own copy of `shared.head`.
    head: usize,
}

impl<T: Copy + Send> TickConsumer<T> {
    /// Takes, oldest first, the records queued when called. Their slots are
    /// handed back to the producer in one store when the iterator is
    /// dropped, so drain often and drop the iterator promptly.
    pub fn drain(&mut self) -> Drain<'_, T> {
        // Acquire: the producer's slot writes happen before our reads.
        let end = self.shared.tail.load(Ordering::Acquire);
        Drain {
            consumer: self,
            end,
        }
    }

    /// Records dropped so far because the ring was full (a relaxed load: a
    /// count the producer is bumping concurrently may show up a little
    /// late).
    pub fn dropped(&self) -> u64 {
        self.shared.dropped.load(Ordering::Relaxed)
    }
}

/// A batch of records taken by [`TickConsumer::drain`].
pub struct Drain<'a, T: Copy + Send> {
    consumer: &'a mut TickConsumer<T>,
    end: usize,
}

impl<T: Copy + Send> Iterator for Drain<'_, T> {
    type Item = T;

    fn next(&mut self) -> Option<T> {
        let c = &mut *self.consumer;
        if c.head == self.end {
            return None;
        }
        let slot = &c.shared.slots[c.head & c.mask];
        // SAFETY: the slot is inside `head..tail`, written before the
        // producer's release of `tail` that `drain` acquired, and the
        // producer won't reuse it until `head` moves past it.
        let record = unsafe { slot.get().read().assume_init() };
        c.head = c.head.wrapping_add(1);
        Some(record)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let n = self.end.wrapping_sub(self.consumer.head);
        (n, Some(n))
    }
}

impl<T: Copy + Send> ExactSizeIterator for Drain<'_, T> {}

impl<T: Copy + Send> Drop for Drain<'_, T> {
    fn drop(&mut self) {
        // Release: our slot reads happen before the producer's acquire of
        // the new `head` and its writes to those slots.
        self.consumer
            .shared
            .head
            .store(self.consumer.head, Ordering::Release);
    }
}
