//! One synchronous WebSocket session with the Inverse Service: tungstenite
//! over a blocking `TcpStream` whose reads and writes time out, so the
//! thread that owns it is never stuck for longer than it chose.

use crate::error::{HaplyError, ProtocolError};
use crate::protocol::{self, Inventory};
use serde_json::{Map, Value};
use std::net::{SocketAddr, TcpStream, ToSocketAddrs};
use std::time::Duration;
use tungstenite::{Message, WebSocket};

/// Why an exchange on an open session failed.
#[derive(Clone, Debug, PartialEq)]
pub enum LinkError {
    /// Nothing arrived within the read timeout; the session is intact.
    Timeout,
    /// The connection is gone (closed, reset, or a broken frame).
    Closed(String),
    /// A frame arrived that could not be used; the session is intact.
    Protocol(ProtocolError),
}

/// An open session: the inventory has been read.
pub struct Session {
    socket: WebSocket<TcpStream>,
    url: String,
    out: String,
    first: bool,
}

/// The socket addresses of a `ws://HOST[:PORT][/PATH]` URL (port 80 if
/// none is given, as for any `ws` URL).
pub fn resolve(url: &str) -> Result<Vec<SocketAddr>, HaplyError> {
    let bad = |reason: &str| HaplyError::BadUrl {
        url: url.to_owned(),
        reason: reason.to_owned(),
    };
    let rest = if let Some(rest) = url.strip_prefix("ws://") {
        rest
    } else if url.starts_with("wss://") {
        return Err(bad(
            "TLS (wss) is not supported; the service speaks plain ws",
        ));
    } else {
        return Err(bad("it must start with ws://"));
    };
    let authority = rest.split(['/', '?']).next().unwrap_or("");
    if authority.is_empty() {
        return Err(bad("no host"));
    }
    let has_port = match authority.rfind(']') {
        Some(bracket) => authority[bracket..].contains(':'),
        None => authority.contains(':'),
    };
    let authority = if has_port {
        authority.to_owned()
    } else {
        format!("{authority}:80")
    };
    let addrs: Vec<SocketAddr> = authority
        .to_socket_addrs()
        .map_err(|e| bad(&format!("cannot resolve {authority}: {e}")))?
        .collect();
    if addrs.is_empty() {
        return Err(bad(&format!("{authority} resolves to no address")));
    }
    Ok(addrs)
}

fn is_timeout(e: &std::io::Error) -> bool {
    matches!(
        e.kind(),
        std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
    )
}

fn link_error(e: tungstenite::Error) -> LinkError {
    match e {
        tungstenite::Error::Io(io) if is_timeout(&io) => LinkError::Timeout,
        tungstenite::Error::ConnectionClosed | tungstenite::Error::AlreadyClosed => {
            LinkError::Closed("closed".into())
        }
        other => LinkError::Closed(other.to_string()),
    }
}

impl Session {
    /// Connects, shakes hands and reads the inventory, each step within
    /// `timeout`. Reads and writes after that time out after `timeout` too
    /// until [`Session::set_timeout`] changes it.
    pub fn connect(
        url: &str,
        timeout: Duration,
    ) -> Result<(Session, Map<String, Value>), HaplyError> {
        let connect_error = |reason: String| HaplyError::Connect {
            url: url.to_owned(),
            reason,
        };
        let mut last = String::from("no address");
        let mut stream = None;
        for addr in resolve(url)? {
            match TcpStream::connect_timeout(&addr, timeout) {
                Ok(s) => {
                    stream = Some(s);
                    break;
                }
                Err(e) => last = format!("{addr}: {e}"),
            }
        }
        let stream = stream.ok_or_else(|| connect_error(last))?;
        let configure = |s: &TcpStream| -> std::io::Result<()> {
            s.set_nodelay(true)?;
            s.set_read_timeout(Some(timeout))?;
            s.set_write_timeout(Some(timeout))
        };
        configure(&stream).map_err(|e| connect_error(e.to_string()))?;
        let (socket, _) = tungstenite::client::client(url, stream).map_err(|e| match e {
            tungstenite::HandshakeError::Interrupted(_) => HaplyError::Timeout {
                url: url.to_owned(),
                timeout_ms: timeout.as_millis() as u64,
            },
            tungstenite::HandshakeError::Failure(e) => HaplyError::Handshake {
                url: url.to_owned(),
                reason: e.to_string(),
            },
        })?;
        let mut session = Session {
            socket,
            url: url.to_owned(),
            out: String::with_capacity(256),
            first: true,
        };
        let inventory = session.receive().map_err(|e| match e {
            LinkError::Timeout => HaplyError::Timeout {
                url: url.to_owned(),
                timeout_ms: timeout.as_millis() as u64,
            },
            LinkError::Closed(reason) => HaplyError::Closed {
                url: url.to_owned(),
                reason,
            },
            LinkError::Protocol(error) => HaplyError::Protocol {
                url: url.to_owned(),
                error,
            },
        })?;
        Ok((session, inventory))
    }

    /// The URL this session was opened on.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// How long a read or write may wait from now on.
    pub fn set_timeout(&mut self, timeout: Duration) -> std::io::Result<()> {
        let stream = self.socket.get_mut();
        stream.set_read_timeout(Some(timeout))?;
        stream.set_write_timeout(Some(timeout))
    }

    /// Sends `set_cursor_force` with `force` (N, service frame) to
    /// `inverse3`; the first message of the session also carries the
    /// session's handshake.
    pub fn send_force(&mut self, inverse3: &str, force: [f64; 3]) -> Result<(), LinkError> {
        protocol::write_force(&mut self.out, inverse3, force, self.first);
        self.first = false;
        self.socket
            .send(Message::text(self.out.as_str()))
            .map_err(link_error)
    }

    /// The next text frame, parsed. Pings are answered by tungstenite on
    /// the way; other control frames are skipped.
    pub fn receive(&mut self) -> Result<Map<String, Value>, LinkError> {
        loop {
            match self.socket.read().map_err(link_error)? {
                Message::Text(text) => {
                    return protocol::parse(text.as_str()).map_err(LinkError::Protocol)
                }
                Message::Binary(_) => return Err(LinkError::Protocol(ProtocolError::NotText)),
                Message::Close(_) => return Err(LinkError::Closed("closed by the service".into())),
                Message::Ping(_) | Message::Pong(_) | Message::Frame(_) => {}
            }
        }
    }

    /// Sends a close frame; errors are of no interest at that point.
    pub fn close(mut self) {
        let _ = self.socket.close(None);
        let _ = self.socket.flush();
    }
}

/// The devices the service at `url` reports, read from its first message
/// within `timeout`.
pub fn list_devices(url: &str, timeout: Duration) -> Result<Inventory, HaplyError> {
    let (session, message) = Session::connect(url, timeout)?;
    let inventory = Inventory::from_message(&message).map_err(|error| HaplyError::Protocol {
        url: url.to_owned(),
        error,
    });
    session.close();
    inventory
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_must_be_plain_websocket_urls() {
        assert_eq!(
            resolve("ws://127.0.0.1:10001").unwrap(),
            vec!["127.0.0.1:10001".parse().unwrap()]
        );
        assert_eq!(
            resolve("ws://[::1]:9/x").unwrap(),
            vec!["[::1]:9".parse().unwrap()]
        );
        assert_eq!(resolve("ws://127.0.0.1").unwrap()[0].port(), 80);
        for bad in [
            "http://localhost:10001",
            "wss://localhost:1",
            "ws://",
            "ws://:x",
        ] {
            let e = resolve(bad).unwrap_err();
            assert!(matches!(e, HaplyError::BadUrl { .. }), "{bad}: {e}");
            assert!(e.to_string().contains(bad), "{e}");
        }
    }
}
