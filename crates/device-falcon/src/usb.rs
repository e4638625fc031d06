//! The Falcon over USB through nusb (usbfs on Linux): enumeration and the
//! [`FtdiTransport`] of a real device.

use crate::error::{FalconError, TransportError};
use crate::ftdi::{FtdiTransport, ENDPOINT_IN, ENDPOINT_OUT, PRODUCT_ID, USB_PACKET, VENDOR_ID};
use nusb::transfer::{Buffer, Bulk, ControlOut, ControlType, In, Out, Recipient, TransferError};
use nusb::{Endpoint, MaybeFuture};
use std::time::Duration;

/// A connected Falcon, as USB enumeration shows it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FalconInfo {
    /// Its index for `[device.falcon] index`: enumeration order.
    pub index: usize,
    pub bus: String,
    pub address: u8,
    pub serial_number: Option<String>,
    pub product: Option<String>,
}

fn connected() -> Result<Vec<nusb::DeviceInfo>, FalconError> {
    let devices = nusb::list_devices()
        .wait()
        .map_err(|e| FalconError::List(e.to_string()))?;
    Ok(devices
        .filter(|d| d.vendor_id() == VENDOR_ID && d.product_id() == PRODUCT_ID)
        .collect())
}

/// Every connected Falcon (USB id 0403:cb48), in index order.
pub fn list_falcons() -> Result<Vec<FalconInfo>, FalconError> {
    Ok(connected()?
        .iter()
        .enumerate()
        .map(|(index, d)| FalconInfo {
            index,
            bus: d.bus_id().to_owned(),
            address: d.device_address(),
            serial_number: d.serial_number().map(str::to_owned),
            product: d.product_string().map(str::to_owned),
        })
        .collect())
}

/// How long a control request may take.
const CONTROL_TIMEOUT: Duration = Duration::from_millis(1000);

/// The FT232's interface 0 claimed (the kernel's serial driver detached),
/// with one reusable buffer per direction.
pub struct NusbTransport {
    interface: nusb::Interface,
    out: Endpoint<Bulk, Out>,
    input: Endpoint<Bulk, In>,
    out_buffer: Option<Buffer>,
    in_buffer: Option<Buffer>,
}

impl NusbTransport {
    /// Opens Falcon number `index` and claims its interface.
    pub fn open(index: usize) -> Result<NusbTransport, FalconError> {
        let devices = connected()?;
        let found = devices.len();
        let info = devices
            .into_iter()
            .nth(index)
            .ok_or(FalconError::NotConnected { index, found })?;
        let open = |what: &str, e: nusb::Error| {
            FalconError::Open(format!(
                "{what}: {e} (see docs/devices.md for the udev rule)"
            ))
        };
        let device = info
            .open()
            .wait()
            .map_err(|e| open("opening the USB device", e))?;
        let interface = device
            .detach_and_claim_interface(0)
            .wait()
            .map_err(|e| open("claiming its interface", e))?;
        let out = interface
            .endpoint::<Bulk, Out>(ENDPOINT_OUT)
            .map_err(|e| open("opening the bulk OUT endpoint", e))?;
        let input = interface
            .endpoint::<Bulk, In>(ENDPOINT_IN)
            .map_err(|e| open("opening the bulk IN endpoint", e))?;
        Ok(NusbTransport {
            interface,
            out,
            input,
            out_buffer: Some(Buffer::new(USB_PACKET)),
            in_buffer: Some(Buffer::new(USB_PACKET)),
        })
    }
}

fn transfer_error(error: TransferError) -> TransportError {
    match error {
        TransferError::Disconnected => TransportError::Disconnected,
        TransferError::Cancelled => TransportError::Timeout,
        TransferError::Stall => TransportError::Failed("endpoint stalled"),
        TransferError::Fault => TransportError::Failed("host controller fault"),
        TransferError::InvalidArgument => TransportError::Failed("invalid argument"),
        TransferError::Unknown(_) => TransportError::Failed("unknown error"),
    }
}

impl FtdiTransport for NusbTransport {
    fn control(&mut self, request: u8, value: u16) -> Result<(), TransportError> {
        self.interface
            .control_out(
                ControlOut {
                    control_type: ControlType::Vendor,
                    recipient: Recipient::Device,
                    request,
                    value,
                    index: 0,
                    data: &[],
                },
                CONTROL_TIMEOUT,
            )
            .wait()
            .map_err(transfer_error)
    }

    /// Reuses one buffer; a write that times out is cancelled.
    fn bulk_out(&mut self, data: &[u8], timeout: Duration) -> Result<(), TransportError> {
        let mut buffer = self
            .out_buffer
            .take()
            .unwrap_or_else(|| Buffer::new(USB_PACKET));
        buffer.clear();
        buffer.extend_from_slice(data);
        self.out.submit(buffer);
        let completion = match self.out.wait_next_complete(timeout) {
            Some(completion) => completion,
            None => {
                self.out.cancel_all();
                self.out
                    .wait_next_complete(CONTROL_TIMEOUT)
                    .ok_or(TransportError::Timeout)?
            }
        };
        self.out_buffer = Some(completion.buffer);
        completion.status.map_err(transfer_error)
    }

    /// A read that times out stays pending and is the one the next call
    /// waits for, so no answer is lost.
    fn bulk_in(
        &mut self,
        packet: &mut [u8; USB_PACKET],
        timeout: Duration,
    ) -> Result<usize, TransportError> {
        if self.input.pending() == 0 {
            let mut buffer = self
                .in_buffer
                .take()
                .unwrap_or_else(|| Buffer::new(USB_PACKET));
            buffer.clear();
            buffer.set_requested_len(USB_PACKET);
            self.input.submit(buffer);
        }
        let completion = self
            .input
            .wait_next_complete(timeout)
            .ok_or(TransportError::Timeout)?;
        let len = completion.actual_len.min(USB_PACKET);
        packet[..len].copy_from_slice(&completion.buffer[..len]);
        self.in_buffer = Some(completion.buffer);
        completion.status.map_err(transfer_error)?;
        Ok(len)
    }
}
