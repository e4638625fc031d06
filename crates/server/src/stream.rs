//! `/v1/stream`: one WebSocket client, fed from its queue in the hub.

use crate::api::{ApiError, ErrorCode};
use crate::hub::{Client, Hello, Outgoing, StreamHub, Subscription, TextFrame, PROTOCOL};
use axum::extract::ws::{CloseFrame, Message, Utf8Bytes, WebSocket};
use serde::Deserialize;
use std::sync::Arc;
use std::time::Duration;
use utoipa::{IntoParams, ToSchema};

/// Largest client text frame (bytes); larger ones close the connection
/// with [`CLOSE_TOO_BIG`].
pub const MAX_CLIENT_TEXT: usize = 4096;

/// Close code for a client frame larger than [`MAX_CLIENT_TEXT`].
pub const CLOSE_TOO_BIG: u16 = 1009;

/// Close code for a text frame that is not UTF-8.
pub const CLOSE_INVALID_TEXT: u16 = 1007;

/// Close code for frames that break RFC 6455.
pub const CLOSE_PROTOCOL_ERROR: u16 = 1002;

/// The close code for a client whose frames the WebSocket layer refused:
/// [`CLOSE_TOO_BIG`] beyond its size limit, [`CLOSE_INVALID_TEXT`],
/// [`CLOSE_PROTOCOL_ERROR`]; `None` when the connection itself failed.
fn read_error_close(error: axum::Error) -> Option<u16> {
    match error
        .into_inner()
        .downcast::<tungstenite::Error>()
        .map(|e| *e)
    {
        Ok(tungstenite::Error::Capacity(_)) => Some(CLOSE_TOO_BIG),
        Ok(tungstenite::Error::Utf8(_)) => Some(CLOSE_INVALID_TEXT),
        Ok(tungstenite::Error::Protocol(_)) => Some(CLOSE_PROTOCOL_ERROR),
        _ => None,
    }
}

/// How long a closing handshake may take before the connection is dropped.
const CLOSE_TIMEOUT: Duration = Duration::from_secs(1);

/// Query parameters of `/v1/stream`, and the fields of `subscribe`.
#[derive(Clone, Copy, Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct StreamQuery {
    /// Tick frames per second, 1–1000 (default 60).
    #[param(minimum = 1.0, maximum = 1000.0)]
    pub rate_hz: Option<f64>,
    /// Contact points per frame, 0–256 (default 64).
    #[param(minimum = 0, maximum = 256)]
    pub contacts: Option<u32>,
}

/// A message from a client.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum ClientMessage {
    /// Changes the frame rate and the contact cap; a field left out keeps
    /// its value.
    Subscribe {
        rate_hz: Option<f64>,
        contacts: Option<u32>,
    },
}

const DEFAULT: Subscription = Subscription {
    rate_hz: 60.0,
    contacts: 64,
};

impl Subscription {
    /// `self` with the given fields changed, checked.
    pub(crate) fn with(
        self,
        rate_hz: Option<f64>,
        contacts: Option<u32>,
    ) -> Result<Subscription, ApiError> {
        let rate_hz = rate_hz.unwrap_or(self.rate_hz);
        if !(1.0..=1000.0).contains(&rate_hz) {
            return Err(ApiError::invalid(
                "rate_hz",
                format!("must be 1–1000 Hz, got {rate_hz}"),
            ));
        }
        let contacts = contacts.unwrap_or(self.contacts);
        if contacts > 256 {
            return Err(ApiError::invalid(
                "contacts",
                format!("must be 0–256, got {contacts}"),
            ));
        }
        Ok(Subscription { rate_hz, contacts })
    }
}

impl StreamQuery {
    pub(crate) fn subscription(&self) -> Result<Subscription, ApiError> {
        DEFAULT.with(self.rate_hz, self.contacts)
    }
}

/// An `error` frame.
fn error_frame(error: &ApiError) -> Message {
    Message::Text(TextFrame::Error(error).to_json().into())
}

/// The text or binary frames of `frame` for `client`.
fn messages(hub: &StreamHub, client: &Client, frame: Outgoing) -> Vec<Message> {
    match frame {
        Outgoing::Scene(scene) => {
            let subscription = client.queue().subscription;
            let a = &scene.announcement;
            let hello = TextFrame::Hello(Hello {
                protocol: PROTOCOL,
                scene: &a.scene,
                servo_rate_hz: a.servo_rate_hz,
                rate_hz: subscription.rate_hz,
                contacts: subscription.contacts,
                generation: hub.generation(),
                objects: a.objects.iter().map(|(object, _)| object).collect(),
                deformables: &a.deformables,
            });
            std::iter::once(Message::Text(hello.to_json().into()))
                .chain(scene.geometry.iter().cloned().map(Message::Binary))
                .collect()
        }
        Outgoing::Tick(tick) => {
            let queue = client.queue();
            let text = tick.text(queue.subscription.contacts as usize, queue.dropped);
            vec![Message::Text(text.into())]
        }
        Outgoing::Text(text) => vec![Message::Text(Utf8Bytes::from(&*text))],
        Outgoing::Surfaces(frames) => frames.iter().cloned().map(Message::Binary).collect(),
    }
}

/// What a client's message does: `None` to go on, or a close code.
fn handle(client: &Client, message: Message) -> Result<Option<u16>, ApiError> {
    match message {
        Message::Text(text) if text.len() > MAX_CLIENT_TEXT => Ok(Some(CLOSE_TOO_BIG)),
        Message::Text(text) => {
            let message: ClientMessage = serde_json::from_str(&text)
                .map_err(|e| ApiError::bad_request(format!("malformed message: {e}")))?;
            let ClientMessage::Subscribe { rate_hz, contacts } = message;
            let mut queue = client.queue();
            let subscription = queue.subscription.with(rate_hz, contacts)?;
            queue.subscribe(subscription);
            Ok(None)
        }
        Message::Binary(_) => Err(ApiError::new(
            ErrorCode::BadRequest,
            "binary messages are not accepted",
        )),
        Message::Ping(_) | Message::Pong(_) | Message::Close(_) => Ok(None),
    }
}

/// Closes with `code`, giving up after [`CLOSE_TIMEOUT`].
async fn close(socket: &mut WebSocket, code: u16, reason: &'static str) {
    let frame = Message::Close(Some(CloseFrame {
        code,
        reason: reason.into(),
    }));
    let _ = tokio::time::timeout(CLOSE_TIMEOUT, socket.send(frame)).await;
}

/// Serves one client until it leaves, breaks the protocol, or must close.
pub(crate) async fn session(mut socket: WebSocket, hub: StreamHub, client: Arc<Client>) {
    let close_code = loop {
        tokio::select! {
            () = client.wake.notified() => {
                if let Some(code) = client.queue().close {
                    break Some(code);
                }
                let mut failed = false;
                loop {
                    let next = client.queue().frames.pop_front();
                    let Some(frame) = next else { break };
                    for message in messages(&hub, &client, frame) {
                        // A send stuck on a client that does not read is
                        // abandoned when the hub tells the client to close.
                        tokio::select! {
                            sent = socket.send(message) => failed |= sent.is_err(),
                            () = client.closing.notified() => failed = true,
                        }
                        if failed {
                            break;
                        }
                    }
                    if failed {
                        break;
                    }
                }
                if failed {
                    break client.queue().close;
                }
            }
            received = socket.recv() => {
                let message = match received {
                    Some(Ok(message)) => message,
                    Some(Err(error)) => break read_error_close(error),
                    None => break None,
                };
                if matches!(message, Message::Close(_)) {
                    break None;
                }
                match handle(&client, message) {
                    Ok(None) => {}
                    Ok(Some(code)) => break Some(code),
                    Err(error) => {
                        if socket.send(error_frame(&error)).await.is_err() {
                            break None;
                        }
                    }
                }
            }
        }
    };
    hub.unregister(client.id);
    if let Some(code) = close_code {
        let reason = match code {
            CLOSE_TOO_BIG => "message too big",
            CLOSE_INVALID_TEXT => "invalid UTF-8 in a text frame",
            CLOSE_PROTOCOL_ERROR => "protocol error",
            crate::hub::CLOSE_TOO_SLOW => "reading too slowly",
            _ => "server stopping",
        };
        close(&mut socket, code, reason).await;
    }
}
