//! A one-slot mailbox for boxed values with a return path, over two `rtrb`
//! single-producer single-consumer rings of capacity 1.
//!
//! The control thread builds a value, [`MailboxSender::send`]s it boxed;
//! the servo takes it with [`MailboxReceiver::take_with`], uses it in place
//! and hands the same box back, and the control thread
//! [`collect`](MailboxSender::collect)s it and drops it. The servo never
//! allocates or frees: each side only pushes and pops a pointer, a bounded
//! handful of atomic loads and stores (wait-free).
//!
//! The sender refuses a new value until it has collected the previous one,
//! so the return ring always has room when the servo hands a box back.

use rtrb::{Consumer, Producer, RingBuffer};

/// Splits into the sending (control) and receiving (servo) halves.
pub fn mailbox<T: Send>() -> (MailboxSender<T>, MailboxReceiver<T>) {
    let (to_receiver, from_sender) = RingBuffer::new(1);
    let (to_sender, from_receiver) = RingBuffer::new(1);
    (
        MailboxSender {
            outgoing: to_receiver,
            retired: from_receiver,
            in_flight: false,
        },
        MailboxReceiver {
            incoming: from_sender,
            retired: to_sender,
        },
    )
}

/// The control side of a [`mailbox`].
pub struct MailboxSender<T> {
    outgoing: Producer<Box<T>>,
    retired: Consumer<Box<T>>,
    /// A value was sent and has not been collected back.
    in_flight: bool,
}

impl<T> MailboxSender<T> {
    /// Sends `value`, or gives it back while an earlier one is not yet
    /// collected.
    pub fn send(&mut self, value: Box<T>) -> Result<(), Box<T>> {
        if self.in_flight {
            return Err(value);
        }
        self.outgoing
            .push(value)
            .map_err(|rtrb::PushError::Full(value)| value)?;
        self.in_flight = true;
        Ok(())
    }

    /// The value the receiver handed back, once it has.
    pub fn collect(&mut self) -> Option<Box<T>> {
        let retired = self.retired.pop().ok()?;
        self.in_flight = false;
        Some(retired)
    }

    /// Whether a sent value has not been collected back yet.
    pub fn in_flight(&self) -> bool {
        self.in_flight
    }
}

/// The servo side of a [`mailbox`].
pub struct MailboxReceiver<T> {
    incoming: Consumer<Box<T>>,
    retired: Producer<Box<T>>,
}

impl<T> MailboxReceiver<T> {
    /// If a value is waiting, runs `use_value` on it and hands the box back
    /// to the sender. Never allocates or frees.
    pub fn take_with<R>(&mut self, use_value: impl FnOnce(&mut T) -> R) -> Option<R> {
        let mut value = self.incoming.pop().ok()?;
        let result = use_value(&mut value);
        if let Err(rtrb::PushError::Full(_)) = self.retired.push(value) {
            unreachable!("the sender sends again only after collecting");
        }
        Some(result)
    }
}
