//! The Falcon's FT232: its vendor control requests, the bulk transfers
//! behind a [`FtdiTransport`] that a scripted device can stand in for, and
//! the two bring-up sequences libnifalcon documents (`FalconCommLibUSB`):
//! the firmware loader's handshake and upload at a slow baud rate, then the
//! fast normal mode.

use crate::error::{FalconError, TransportError};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// USB vendor id of the Falcon's FT232 (FTDI's).
pub const VENDOR_ID: u16 = 0x0403;
/// USB product id Novint gave the Falcon.
pub const PRODUCT_ID: u16 = 0xcb48;
/// Bulk OUT endpoint.
pub const ENDPOINT_OUT: u8 = 0x02;
/// Bulk IN endpoint.
pub const ENDPOINT_IN: u8 = 0x81;
/// A full-speed bulk packet; the FT232 starts each with two modem status bytes.
pub const USB_PACKET: usize = 64;
/// Modem status bytes at the start of every bulk IN packet.
pub const STATUS_BYTES: usize = 2;

/// FTDI vendor requests (`bRequest`; all host-to-device, vendor, device
/// recipient, `wIndex` 0).
pub mod request {
    /// `SIO_RESET`: value [`RESET_SIO`](super::value::RESET_SIO), [`PURGE_RX`](super::value::PURGE_RX) or [`PURGE_TX`](super::value::PURGE_TX).
    pub const RESET: u8 = 0x00;
    /// `SIO_MODEM_CTRL`: DTR and RTS lines.
    pub const MODEM_CTRL: u8 = 0x01;
    /// `SIO_SET_FLOW_CTRL`.
    pub const SET_FLOW_CTRL: u8 = 0x02;
    /// `SIO_SET_BAUD_RATE`: value the baud divisor.
    pub const SET_BAUD_RATE: u8 = 0x03;
    /// `SIO_SET_DATA`: bits, parity and stop bits.
    pub const SET_DATA: u8 = 0x04;
    /// `SIO_SET_LATENCY_TIMER`: value in ms.
    pub const SET_LATENCY_TIMER: u8 = 0x09;
    /// `SIO_SET_BITMODE`: value mode << 8 | pin mask.
    pub const SET_BITMODE: u8 = 0x0b;
}

/// `wValue`s of the requests.
pub mod value {
    pub const RESET_SIO: u16 = 0;
    pub const PURGE_RX: u16 = 1;
    pub const PURGE_TX: u16 = 2;
    /// DTR high: the level in the low byte, the DTR mask (1) in the high byte.
    pub const DTR_HIGH: u16 = 0x0101;
    pub const DTR_LOW: u16 = 0x0100;
    /// RTS low: the RTS mask (2) in the high byte.
    pub const RTS_LOW: u16 = 0x0200;
    pub const NO_FLOW_CONTROL: u16 = 0;
    /// 8 data bits, no parity, 1 stop bit.
    pub const DATA_8N1: u16 = 8;
    /// Bit mode 0: the plain UART, not bit-bang.
    pub const BITMODE_RESET: u16 = 0;
    /// 9600 baud: divisor 312.5 of the 3 MHz clock, the half encoded as
    /// sub-integer code 1 in bits 14–15 (`0x4000 | 312`).
    pub const BAUD_9600: u16 = 0x4138;
    /// The firmware upload: divisor 21, 3 MHz / 21 ≈ 142 857 baud
    /// (libnifalcon asks for 140 000 and writes this divisor).
    pub const BAUD_FIRMWARE: u16 = 0x0015;
    /// Normal mode: divisor 2, 1.5 Mbaud, the FT232's nearest rate to the
    /// 1 456 312 baud libnifalcon's FTD2XX backend asks for.
    pub const BAUD_NORMAL: u16 = 0x0002;
    /// Latency timer during the handshake: the loader's answers go missing
    /// at shorter ones.
    pub const LATENCY_LOADER_MS: u16 = 16;
    /// Latency timer in normal mode: each packet is returned within 1 ms.
    pub const LATENCY_NORMAL_MS: u16 = 1;
}

/// The USB transfers the Falcon needs. Implemented over nusb for the real
/// device ([`crate::usb::NusbTransport`]) and by scripted devices in tests.
/// Implementations must not allocate in [`bulk_out`](Self::bulk_out) or
/// [`bulk_in`](Self::bulk_in) once running.
pub trait FtdiTransport: Send {
    /// A vendor control request with no data stage.
    fn control(&mut self, request: u8, value: u16) -> Result<(), TransportError>;
    /// Writes `data` to the bulk OUT endpoint.
    fn bulk_out(&mut self, data: &[u8], timeout: Duration) -> Result<(), TransportError>;
    /// Reads one bulk IN packet, modem status bytes included, into `buffer`;
    /// its length. [`TransportError::Timeout`] when none arrives in time.
    fn bulk_in(
        &mut self,
        buffer: &mut [u8; USB_PACKET],
        timeout: Duration,
    ) -> Result<usize, TransportError>;
}

impl<T: FtdiTransport + ?Sized> FtdiTransport for Box<T> {
    fn control(&mut self, request: u8, value: u16) -> Result<(), TransportError> {
        (**self).control(request, value)
    }
    fn bulk_out(&mut self, data: &[u8], timeout: Duration) -> Result<(), TransportError> {
        (**self).bulk_out(data, timeout)
    }
    fn bulk_in(
        &mut self,
        buffer: &mut [u8; USB_PACKET],
        timeout: Duration,
    ) -> Result<usize, TransportError> {
        (**self).bulk_in(buffer, timeout)
    }
}

/// Timeout of the transfers of the bring-up (not of the running exchange).
pub const SETUP_TIMEOUT: Duration = Duration::from_millis(1000);

fn control(
    usb: &mut impl FtdiTransport,
    step: &'static str,
    request: u8,
    value: u16,
) -> Result<(), FalconError> {
    usb.control(request, value)
        .map_err(|error| FalconError::Usb { step, error })
}

/// Resets the chip to a plain UART and empties both its buffers.
pub fn reset(usb: &mut impl FtdiTransport) -> Result<(), FalconError> {
    control(usb, "resetting the FT232", request::RESET, value::RESET_SIO)?;
    control(
        usb,
        "leaving bit-bang mode",
        request::SET_BITMODE,
        value::BITMODE_RESET,
    )?;
    purge(usb)
}

fn purge(usb: &mut impl FtdiTransport) -> Result<(), FalconError> {
    control(
        usb,
        "purging the receive buffer",
        request::RESET,
        value::PURGE_RX,
    )?;
    control(
        usb,
        "purging the transmit buffer",
        request::RESET,
        value::PURGE_TX,
    )
}

/// Normal mode: 1 ms latency timer, 1.5 Mbaud, buffers purged.
pub fn normal_mode(usb: &mut impl FtdiTransport) -> Result<(), FalconError> {
    control(
        usb,
        "setting the latency timer",
        request::SET_LATENCY_TIMER,
        value::LATENCY_NORMAL_MS,
    )?;
    control(
        usb,
        "setting the baud rate",
        request::SET_BAUD_RATE,
        value::BAUD_NORMAL,
    )?;
    purge(usb)
}

/// The loader's first check: the host sends `\n C \r` …
pub const CHECK_1_SEND: [u8; 3] = [0x0a, 0x43, 0x0d];
/// … and the loader answers `\n D , \r`, on some hosts after a 0 byte.
pub const CHECK_1_ANSWER: [u8; 4] = [0x0a, 0x44, 0x2c, 0x0d];
/// The second check at the upload rate: `A`, echoed.
pub const CHECK_2: u8 = 0x41;
/// Attempts at the first check.
pub const CHECK_1_ATTEMPTS: usize = 100;
/// Firmware bytes per bulk write: 64 less the two status bytes the echo
/// carries.
pub const UPLOAD_CHUNK: usize = 62;

/// Puts the loader into upload mode: purge, 16 ms latency, 9600 baud 8N1
/// without flow control, RTS low, DTR pulsed low then high, then the first
/// check until the loader answers; then DTR low, the upload baud rate, and
/// the second check.
pub fn firmware_mode(usb: &mut impl FtdiTransport) -> Result<(), FalconError> {
    purge(usb)?;
    control(
        usb,
        "setting the loader's latency timer",
        request::SET_LATENCY_TIMER,
        value::LATENCY_LOADER_MS,
    )?;
    control(
        usb,
        "setting 9600 baud",
        request::SET_BAUD_RATE,
        value::BAUD_9600,
    )?;
    control(usb, "setting 8N1", request::SET_DATA, value::DATA_8N1)?;
    control(
        usb,
        "disabling flow control",
        request::SET_FLOW_CTRL,
        value::NO_FLOW_CONTROL,
    )?;
    control(usb, "lowering RTS", request::MODEM_CTRL, value::RTS_LOW)?;
    control(usb, "lowering DTR", request::MODEM_CTRL, value::DTR_LOW)?;
    control(usb, "raising DTR", request::MODEM_CTRL, value::DTR_HIGH)?;
    let mut packet = [0u8; USB_PACKET];
    let mut answered = false;
    for _ in 0..CHECK_1_ATTEMPTS {
        usb.bulk_out(&CHECK_1_SEND, SETUP_TIMEOUT)
            .map_err(|error| FalconError::Usb {
                step: "sending the loader check",
                error,
            })?;
        let len = usb
            .bulk_in(&mut packet, SETUP_TIMEOUT)
            .map_err(|error| FalconError::Usb {
                step: "reading the loader check",
                error,
            })?;
        let data = &packet[STATUS_BYTES.min(len)..len];
        if data == CHECK_1_ANSWER
            || (data.len() == 5 && data[0] == 0 && data[1..] == CHECK_1_ANSWER)
        {
            answered = true;
            break;
        }
    }
    if !answered {
        return Err(FalconError::LoaderSilent {
            attempts: CHECK_1_ATTEMPTS,
        });
    }
    control(usb, "lowering DTR", request::MODEM_CTRL, value::DTR_LOW)?;
    control(
        usb,
        "setting the upload baud rate",
        request::SET_BAUD_RATE,
        value::BAUD_FIRMWARE,
    )?;
    usb.bulk_out(&[CHECK_2], SETUP_TIMEOUT)
        .map_err(|error| FalconError::Usb {
            step: "sending the upload check",
            error,
        })?;
    let len = usb
        .bulk_in(&mut packet, SETUP_TIMEOUT)
        .map_err(|error| FalconError::Usb {
            step: "reading the upload check",
            error,
        })?;
    if len != STATUS_BYTES + 1 || packet[STATUS_BYTES] != CHECK_2 {
        return Err(FalconError::UploadCheck);
    }
    Ok(())
}

/// Largest firmware file accepted (the images in circulation are 7–9 KB).
pub const MAX_FIRMWARE_BYTES: usize = 64 * 1024;

/// A firmware image, read from the file the user supplies.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Firmware {
    pub path: PathBuf,
    pub bytes: Vec<u8>,
}

impl Firmware {
    /// Reads and checks the firmware file: it must exist and hold between
    /// 1 byte and [`MAX_FIRMWARE_BYTES`].
    pub fn load(path: &Path) -> Result<Firmware, FalconError> {
        let bytes = std::fs::read(path).map_err(|source| FalconError::FirmwareFile {
            path: path.to_owned(),
            cause: source.to_string(),
        })?;
        if bytes.is_empty() || bytes.len() > MAX_FIRMWARE_BYTES {
            return Err(FalconError::FirmwareInvalid {
                path: path.to_owned(),
                reason: format!(
                    "{} bytes; a Falcon firmware image has 1 to {MAX_FIRMWARE_BYTES}",
                    bytes.len()
                ),
            });
        }
        Ok(Firmware {
            path: path.to_owned(),
            bytes,
        })
    }
}

/// Uploads `firmware` after [`firmware_mode`]: each chunk of
/// [`UPLOAD_CHUNK`] bytes is written and read back as the loader echoes it,
/// byte for byte; a differing echo aborts the upload. Then normal mode.
pub fn upload(usb: &mut impl FtdiTransport, firmware: &Firmware) -> Result<(), FalconError> {
    let mut packet = [0u8; USB_PACKET];
    for (chunk_index, chunk) in firmware.bytes.chunks(UPLOAD_CHUNK).enumerate() {
        let start = chunk_index * UPLOAD_CHUNK;
        usb.bulk_out(chunk, SETUP_TIMEOUT)
            .map_err(|error| FalconError::Usb {
                step: "writing the firmware",
                error,
            })?;
        let mut echoed = 0;
        while echoed < chunk.len() {
            let len =
                usb.bulk_in(&mut packet, SETUP_TIMEOUT)
                    .map_err(|error| FalconError::Usb {
                        step: "reading the firmware echo",
                        error,
                    })?;
            for &byte in packet.get(STATUS_BYTES..len).unwrap_or(&[]) {
                let offset = start + echoed;
                let Some(&sent) = chunk.get(echoed) else {
                    return Err(FalconError::EchoMismatch {
                        offset,
                        sent: None,
                        echoed: byte,
                    });
                };
                if byte != sent {
                    return Err(FalconError::EchoMismatch {
                        offset,
                        sent: Some(sent),
                        echoed: byte,
                    });
                }
                echoed += 1;
            }
        }
    }
    normal_mode(usb)
}
