//! The 16-byte packets of the firmware libnifalcon calls "NovintSDK".
//!
//! Both directions are framed by `<` and `>` with fourteen bytes between,
//! each carrying one nibble plus `0x41` (`'A'`), so every byte inside is in
//! `A`..=`P` (libnifalcon, `FalconFirmwareNovintSDK::formatInput` and
//! `formatOutput`):
//!
//! | bytes | host → device ([`Command`]) | device → host ([`Status`]) |
//! |---|---|---|
//! | 0 | `<` | `<` |
//! | 1–4, 5–8, 9–12 | effort of motor 1, 2, 3: 16-bit two's complement, least significant nibble first | encoder of motor 1, 2, 3, the same way |
//! | 13 | LEDs (green `0x2`, blue `0x4`, red `0x8`) and homing mode (`0x1`) | grip buttons (bits 0–3) and homed motors 1–3 (bits 4–6), plus `0x41` |
//! | 14 | 0 (`A`) | unused |
//! | 15 | `>` | `>` |

/// Length of a packet in either direction.
pub const PACKET_LEN: usize = 16;
const START: u8 = b'<';
const END: u8 = b'>';
const NIBBLE_BASE: u8 = 0x41;

/// LED bits of [`Command::leds`].
pub mod led {
    pub const GREEN: u8 = 0x2;
    pub const BLUE: u8 = 0x4;
    pub const RED: u8 = 0x8;
}

/// All three motors homed in [`Status::homed`].
pub const ALL_HOMED: u8 = 0b111;

/// What the host sends each exchange.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Command {
    /// Motor efforts, firmware units.
    pub efforts: [i16; 3],
    /// LED bits ([`led`]).
    pub leds: u8,
    /// Asks the firmware to home the encoders as the grip passes the
    /// homing switches.
    pub homing: bool,
}

impl Command {
    /// The packet's bytes.
    pub fn encode(&self) -> [u8; PACKET_LEN] {
        let mut packet = [NIBBLE_BASE; PACKET_LEN];
        packet[0] = START;
        packet[15] = END;
        for (motor, &effort) in self.efforts.iter().enumerate() {
            let bits = effort as u16;
            for nibble in 0..4 {
                packet[1 + 4 * motor + nibble] += ((bits >> (4 * nibble)) & 0xf) as u8;
            }
        }
        packet[13] += (self.leds & (led::GREEN | led::BLUE | led::RED)) | u8::from(self.homing);
        packet
    }
}

/// What the device answers.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Status {
    /// Encoder ticks of motors 1–3.
    pub encoders: [i16; 3],
    /// Grip buttons, bit `i` for button `i` (four on the standard grip).
    pub buttons: u8,
    /// Homed motors, bit `i` for motor `i + 1`.
    pub homed: u8,
}

/// Why a 16-byte window is not a status packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Garbled {
    /// Byte 0 is not `<` or byte 15 not `>`.
    Frame,
    /// An encoder byte is outside `A`..=`P`, or byte 13 above `0x41 + 0x7f`.
    Nibble { at: usize },
}

impl Status {
    /// Decodes one packet.
    pub fn decode(packet: &[u8; PACKET_LEN]) -> Result<Status, Garbled> {
        if packet[0] != START || packet[15] != END {
            return Err(Garbled::Frame);
        }
        let nibble = |at: usize| -> Result<u16, Garbled> {
            match packet[at].wrapping_sub(NIBBLE_BASE) {
                n @ 0..=0xf => Ok(u16::from(n)),
                _ => Err(Garbled::Nibble { at }),
            }
        };
        let mut encoders = [0i16; 3];
        for (motor, encoder) in encoders.iter_mut().enumerate() {
            let mut bits = 0u16;
            for n in 0..4 {
                bits |= nibble(1 + 4 * motor + n)? << (4 * n);
            }
            *encoder = bits as i16;
        }
        // Byte 13 carries seven bits, buttons and homing; byte 14 is not
        // read (libnifalcon does not read it either).
        let flags = packet[13].wrapping_sub(NIBBLE_BASE);
        if flags > 0x7f {
            return Err(Garbled::Nibble { at: 13 });
        }
        Ok(Status {
            encoders,
            buttons: flags & 0xf,
            homed: (flags >> 4) & ALL_HOMED,
        })
    }

    /// The packet the firmware would send for this status (for tests and
    /// the scripted device).
    pub fn encode(&self) -> [u8; PACKET_LEN] {
        let mut packet = [NIBBLE_BASE; PACKET_LEN];
        packet[0] = START;
        packet[15] = END;
        for (motor, &encoder) in self.encoders.iter().enumerate() {
            let bits = encoder as u16;
            for nibble in 0..4 {
                packet[1 + 4 * motor + nibble] += ((bits >> (4 * nibble)) & 0xf) as u8;
            }
        }
        packet[13] += (self.buttons & 0xf) | ((self.homed & ALL_HOMED) << 4);
        packet
    }
}

/// Counts of what [`PacketStream`] saw.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PacketCounters {
    /// Status packets decoded.
    pub accepted: u64,
    /// 16-byte windows starting with `<` that failed to decode, dropped.
    pub garbled: u64,
    /// Bytes skipped while looking for a `<`.
    pub skipped_bytes: u64,
}

/// Reassembles status packets from the byte stream of bulk reads, which
/// may split or join packets: keeps an incomplete tail for the next read,
/// drops and counts a garbled packet, and resynchronises on the next `<`.
/// Its buffer is fixed: no allocation.
#[derive(Clone, Debug)]
pub struct PacketStream {
    buffer: [u8; 4 * PACKET_LEN],
    len: usize,
    counters: PacketCounters,
}

impl Default for PacketStream {
    fn default() -> Self {
        Self::new()
    }
}

impl PacketStream {
    pub fn new() -> Self {
        Self {
            buffer: [0; 4 * PACKET_LEN],
            len: 0,
            counters: PacketCounters::default(),
        }
    }

    pub fn counters(&self) -> PacketCounters {
        self.counters
    }

    /// Forgets any partial packet (after the device was reopened).
    pub fn clear(&mut self) {
        self.len = 0;
    }

    /// Feeds `bytes` (payload only, FTDI status bytes removed); calls
    /// `on_status` for each packet completed, in order.
    pub fn feed(&mut self, mut bytes: &[u8], mut on_status: impl FnMut(Status)) {
        while !bytes.is_empty() {
            let room = self.buffer.len() - self.len;
            let take = room.min(bytes.len());
            self.buffer[self.len..self.len + take].copy_from_slice(&bytes[..take]);
            self.len += take;
            bytes = &bytes[take..];
            self.parse(&mut on_status);
        }
    }

    fn parse(&mut self, on_status: &mut impl FnMut(Status)) {
        let mut at = 0;
        while at < self.len {
            if self.buffer[at] != START {
                self.counters.skipped_bytes += 1;
                at += 1;
                continue;
            }
            if self.len - at < PACKET_LEN {
                break;
            }
            let mut packet = [0u8; PACKET_LEN];
            packet.copy_from_slice(&self.buffer[at..at + PACKET_LEN]);
            match Status::decode(&packet) {
                Ok(status) => {
                    self.counters.accepted += 1;
                    on_status(status);
                    at += PACKET_LEN;
                }
                Err(_) => {
                    self.counters.garbled += 1;
                    // Resynchronise on the next start byte.
                    at += 1;
                    while at < self.len && self.buffer[at] != START {
                        at += 1;
                    }
                }
            }
        }
        self.buffer.copy_within(at..self.len, 0);
        self.len -= at;
    }
}

impl PacketStream {
    /// Adds `earlier`'s counts (a stream that replaced another keeps its totals).
    pub fn add_counters(&mut self, earlier: &PacketCounters) {
        self.counters.accepted += earlier.accepted;
        self.counters.garbled += earlier.garbled;
        self.counters.skipped_bytes += earlier.skipped_bytes;
    }
}
