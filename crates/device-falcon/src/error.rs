//! Why a Falcon could not be opened or brought up.

use std::path::PathBuf;

/// Why a Falcon could not be opened, its firmware loaded or its link
/// started. The running link reports through [`haptic_devices::DeviceError`].
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum FalconError {
    #[error("cannot read the Falcon firmware file {}: {cause}", path.display())]
    FirmwareFile { path: PathBuf, cause: String },
    #[error("{} is not a Falcon firmware image: {reason}", path.display())]
    FirmwareInvalid { path: PathBuf, reason: String },
    #[error("no Novint Falcon with index {index} is connected ({found} found; `hapticd devices` lists them)")]
    NotConnected { index: usize, found: usize },
    #[error("listing USB devices: {0}")]
    List(String),
    #[error("opening the Falcon: {0}")]
    Open(String),
    #[error("{step}: {error}")]
    Usb {
        step: &'static str,
        error: TransportError,
    },
    #[error("the Falcon's firmware loader did not answer its check in {attempts} attempts (unplug the Falcon's power and USB, plug them back, and try again)")]
    LoaderSilent { attempts: usize },
    #[error("the Falcon's firmware loader did not echo the upload check")]
    UploadCheck,
    #[error("firmware upload: byte {offset} was echoed as {echoed:#04x}, not {}", sent.map_or("nothing".to_owned(), |s| format!("{s:#04x}")))]
    EchoMismatch {
        offset: usize,
        sent: Option<u8>,
        echoed: u8,
    },
    #[error("the Falcon does not answer after loading {} (is it Novint's firmware, and is the Falcon's power supply plugged in?)", path.display())]
    NoFirmwareResponse { path: PathBuf },
    #[error("starting the Falcon's I/O thread: {0}")]
    Thread(String),
}

/// How a USB transfer failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum TransportError {
    /// The device is gone.
    #[error("the device is disconnected")]
    Disconnected,
    /// Nothing arrived in time.
    #[error("the transfer timed out")]
    Timeout,
    /// The endpoint stalled or the host controller reported a fault.
    #[error("the transfer failed ({0})")]
    Failed(&'static str),
}
