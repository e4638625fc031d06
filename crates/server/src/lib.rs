//! The haptic rendering server's control API and state stream
//! (docs/protocol.md), on an OS thread of its own with a small tokio
//! runtime, never on the servo thread:
//!
//! - HTTP/JSON under `/v1` in the `{ok, data}` / `{ok: false, error}`
//!   envelope, described in OpenAPI 3.1 at `/v1/openapi.json`;
//! - the WebSocket `/v1/stream`: `hello`, binary geometry frames, tick
//!   frames and deformables' binary surface frames decimated to each
//!   client's rate, and events;
//! - the web visualizer's files at `/`, embedded at build time.
//!
//! The daemon implements [`Control`] and publishes frames into a
//! [`StreamHub`]; [`Server::start`] binds the listeners and serves both.

mod api;
mod hub;
mod routes;
mod server;
mod stream;

pub use api::{
    ApiError, BackendDevices, Control, DeviceInfo, ErrorCode, ErrorReply, Faults, HidIds,
    Parameters, Percentiles, Recording, Reply, SceneInfo, SceneObject, Status,
};
pub use hub::{
    geometry_frame, surface_frame, ClientStatus, ClientTick, ContactPoint, Event, EventFrame,
    Hello, HelloDeformable, HelloObject, Mesh, Pose, SceneAnnouncement, StreamHub, TextFrame,
    TickFrame, CLOSE_TOO_SLOW, EVENTS_PER_FRAME, FULL_TIMEOUT, PROTOCOL, QUEUE_FRAMES,
    SURFACE_HEADER_BYTES, SURFACE_MAGIC,
};
pub use routes::ApiDoc;
pub use server::{Server, ServerConfig, StartError};
pub use stream::{CLOSE_TOO_BIG, MAX_CLIENT_TEXT};
