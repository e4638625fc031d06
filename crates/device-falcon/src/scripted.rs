//! A scripted Falcon behind [`FtdiTransport`]: it plays the firmware loader
//! (the handshake, the echo of every uploaded byte) and then the running
//! firmware, answering each command packet with the next step of a script.
//! Tests and benchmarks drive the real bring-up and exchange code with it.

use crate::error::TransportError;
use crate::ftdi::{
    value, FtdiTransport, CHECK_1_ANSWER, CHECK_1_SEND, CHECK_2, STATUS_BYTES, USB_PACKET,
};
use crate::packet::{Status, PACKET_LEN};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// The FT232's modem status bytes as it sends them when idle.
pub const MODEM_STATUS: [u8; STATUS_BYTES] = [0x31, 0x60];

/// What the scripted firmware does on receiving one command packet.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Step {
    /// Answers with this status.
    Answer(Status),
    /// Answers with these 16 bytes, whatever they are.
    Raw([u8; PACKET_LEN]),
    /// Does not answer.
    Silent,
    /// Is unplugged: every transfer from now on fails as disconnected.
    Vanish,
}

/// A control request or bulk write the host made, in order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Event {
    Control { request: u8, value: u16 },
    BulkOut(Vec<u8>),
}

/// The scripted Falcon.
#[derive(Clone, Debug)]
pub struct ScriptedFalcon {
    /// Whether the firmware is running (else the loader is).
    pub firmware_running: bool,
    /// First-check attempts the loader lets pass before it answers.
    pub loader_deaf_for: usize,
    /// Offset of an uploaded byte the loader echoes wrong.
    pub corrupt_echo_at: Option<usize>,
    /// The firmware's answers, one step per command; after the last, the
    /// last status is repeated.
    pub script: Vec<Step>,
    /// How long each bulk read takes, as the device's latency timer would
    /// make it (none: at once; the I/O thread then spins).
    pub pace: Option<Duration>,
    /// A switch a test flips to unplug the device while it runs: every
    /// transfer from then on fails as disconnected.
    pub unplugged: Option<Arc<AtomicBool>>,
    /// Controls and the writes of the bring-up (command packets are not
    /// logged, so that the running exchange allocates nothing).
    pub log: Vec<Event>,
    /// The bytes uploaded so far.
    pub uploaded: Vec<u8>,
    /// Command packets received and the last of them.
    pub commands: u64,
    pub last_command: [u8; PACKET_LEN],
    baud: u16,
    upload_checked: bool,
    next: usize,
    last_status: Option<Status>,
    vanished: bool,
    pending: [u8; USB_PACKET],
    pending_len: usize,
}

impl ScriptedFalcon {
    /// A Falcon whose firmware is `running` already (else only its loader),
    /// with `script` for the firmware.
    pub fn new(running: bool, script: Vec<Step>) -> Self {
        Self {
            firmware_running: running,
            loader_deaf_for: 0,
            corrupt_echo_at: None,
            script,
            pace: None,
            unplugged: None,
            log: Vec::new(),
            uploaded: Vec::new(),
            commands: 0,
            last_command: [0; PACKET_LEN],
            baud: 0,
            upload_checked: false,
            next: 0,
            last_status: None,
            vanished: false,
            pending: [0; USB_PACKET],
            pending_len: 0,
        }
    }

    fn gone(&mut self) -> bool {
        if let Some(switch) = &self.unplugged {
            self.vanished |= switch.load(Ordering::Acquire);
        }
        self.vanished
    }

    fn queue(&mut self, data: &[u8]) {
        if self.pending_len == 0 {
            self.pending[..STATUS_BYTES].copy_from_slice(&MODEM_STATUS);
            self.pending_len = STATUS_BYTES;
        }
        let room = USB_PACKET - self.pending_len;
        let n = room.min(data.len());
        self.pending[self.pending_len..self.pending_len + n].copy_from_slice(&data[..n]);
        self.pending_len += n;
    }

    fn firmware_step(&mut self) {
        let step = match self.script.get(self.next) {
            Some(&step) => {
                self.next += 1;
                step
            }
            None => match self.last_status {
                Some(status) => Step::Answer(status),
                None => Step::Silent,
            },
        };
        match step {
            Step::Answer(status) => {
                self.last_status = Some(status);
                self.queue(&status.encode());
            }
            Step::Raw(bytes) => self.queue(&bytes),
            Step::Silent => {}
            Step::Vanish => self.vanished = true,
        }
    }
}

impl FtdiTransport for ScriptedFalcon {
    fn control(&mut self, request: u8, value: u16) -> Result<(), TransportError> {
        if self.gone() {
            return Err(TransportError::Disconnected);
        }
        self.log.push(Event::Control { request, value });
        if request == crate::ftdi::request::SET_BAUD_RATE {
            self.baud = value;
            // The loader starts the firmware once the upload is done and
            // the host switches to the normal rate.
            if value == value::BAUD_NORMAL && self.upload_checked && !self.uploaded.is_empty() {
                self.firmware_running = true;
            }
        }
        if request == crate::ftdi::request::RESET && value != value::RESET_SIO {
            self.pending_len = 0;
        }
        Ok(())
    }

    fn bulk_out(&mut self, data: &[u8], _: Duration) -> Result<(), TransportError> {
        if self.gone() {
            return Err(TransportError::Disconnected);
        }
        if self.firmware_running && self.baud == value::BAUD_NORMAL {
            if data.len() == PACKET_LEN {
                self.commands += 1;
                self.last_command.copy_from_slice(data);
                self.firmware_step();
            }
            return Ok(());
        }
        self.log.push(Event::BulkOut(data.to_vec()));
        match self.baud {
            value::BAUD_9600 if data == CHECK_1_SEND => {
                if self.loader_deaf_for > 0 {
                    self.loader_deaf_for -= 1;
                    self.queue(&[0x0a]);
                } else {
                    self.queue(&CHECK_1_ANSWER);
                }
            }
            value::BAUD_FIRMWARE if !self.upload_checked && data == [CHECK_2] => {
                self.upload_checked = true;
                self.queue(&[CHECK_2]);
            }
            value::BAUD_FIRMWARE if !self.upload_checked => {}
            value::BAUD_FIRMWARE => {
                for &byte in data {
                    let echo = if self.corrupt_echo_at == Some(self.uploaded.len()) {
                        !byte
                    } else {
                        byte
                    };
                    self.uploaded.push(byte);
                    self.queue(&[echo]);
                }
            }
            _ => {}
        }
        Ok(())
    }

    fn bulk_in(
        &mut self,
        packet: &mut [u8; USB_PACKET],
        timeout: Duration,
    ) -> Result<usize, TransportError> {
        if self.gone() {
            return Err(TransportError::Disconnected);
        }
        if let Some(pace) = self.pace {
            std::thread::sleep(pace.min(timeout));
        }
        if self.pending_len == 0 {
            return Err(TransportError::Timeout);
        }
        let len = self.pending_len;
        packet[..len].copy_from_slice(&self.pending[..len]);
        self.pending_len = 0;
        Ok(len)
    }
}
