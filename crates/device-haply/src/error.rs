//! What can go wrong talking to the Inverse Service.

/// A message from the service that could not be used. Each names what was
/// wrong, with the JSON path of a missing or bad field.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum ProtocolError {
    /// Not JSON, or not a JSON object.
    #[error("malformed JSON: {0}")]
    Malformed(String),
    /// A field the protocol requires is absent.
    #[error("missing field `{0}`")]
    Missing(String),
    /// A field holds the wrong type (a string for a number, …).
    #[error("field `{path}` is not {expected}")]
    WrongType {
        path: String,
        expected: &'static str,
    },
    /// The selected device is not in the message.
    #[error("{kind} `{id}` is not in the message")]
    DeviceAbsent { kind: &'static str, id: String },
    /// A binary or other non-text frame.
    #[error("a non-text WebSocket frame")]
    NotText,
}

/// Why the service could not be reached or used.
#[derive(Debug, thiserror::Error)]
pub enum HaplyError {
    /// The URL is not `ws://HOST:PORT[/PATH]`.
    #[error("`{url}` is not a WebSocket URL (ws://HOST:PORT): {reason}")]
    BadUrl { url: String, reason: String },
    /// No TCP connection (refused, unreachable, or no answer in time).
    #[error("cannot connect to the Haply Inverse Service at {url}: {reason} (is the service running? `systemctl status haply-inverse-service`)")]
    Connect { url: String, reason: String },
    /// The WebSocket handshake failed.
    #[error("the WebSocket handshake with {url} failed: {reason}")]
    Handshake { url: String, reason: String },
    /// The service sent nothing within the timeout.
    #[error("the Haply Inverse Service at {url} sent no inventory within {timeout_ms} ms")]
    Timeout { url: String, timeout_ms: u64 },
    /// The connection broke.
    #[error("the connection to {url} broke: {reason}")]
    Closed { url: String, reason: String },
    /// A message could not be used.
    #[error("from {url}: {error}")]
    Protocol { url: String, error: ProtocolError },
    /// The service lists no Inverse3.
    #[error("the Haply Inverse Service at {url} reports no Inverse3")]
    NoInverse3 { url: String },
    /// The configured device is not among those the service reports.
    #[error(
        "the Haply Inverse Service at {url} reports no {kind} `{wanted}` (it reports: {listed})"
    )]
    NotFound {
        url: String,
        kind: &'static str,
        wanted: String,
        listed: String,
    },
    /// The I/O thread could not be started.
    #[error("starting the Haply I/O thread: {0}")]
    Thread(String),
}
