//! The reply envelope, the error codes, and the daemon-facing [`Control`]
//! interface with the data it exchanges.

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use haptic_schema::patch::{RenderingPatch, TunableParameters};
use haptic_schema::{FrictionState, FrictionVerdict, ObjectRole, OrNotRendered};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::Path;
use utoipa::ToSchema;

/// A successful reply: `{"ok": true, "data": ...}`.
#[derive(Serialize, ToSchema)]
pub struct Reply<T> {
    /// Always `true`.
    pub ok: bool,
    pub data: T,
}

/// What every reply that is not a success carries.
#[derive(Serialize, ToSchema)]
pub struct ErrorReply {
    /// Always `false`.
    pub ok: bool,
    pub error: ApiError,
}

/// What went wrong, by kind; each has one HTTP status.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum ErrorCode {
    /// 400: malformed JSON, unknown fields, wrong types.
    BadRequest,
    /// 401: the bearer token is missing or wrong.
    Unauthorized,
    /// 404: no such path.
    NotFound,
    /// 405: the path exists, the method does not.
    MethodNotAllowed,
    /// 409: the request conflicts with the state (a recording already
    /// running, none to stop).
    Conflict,
    /// 413: the request body is larger than `server.max_request_bytes`.
    PayloadTooLarge,
    /// 422: a value the config validation refuses.
    InvalidParameter,
    /// 429: more than `server.requests_per_second` from one peer.
    RateLimited,
    /// 503: too many stream clients, or a change still pending.
    Busy,
    /// 500: the daemon failed.
    Internal,
}

impl ErrorCode {
    pub fn status(self) -> StatusCode {
        match self {
            Self::BadRequest => StatusCode::BAD_REQUEST,
            Self::Unauthorized => StatusCode::UNAUTHORIZED,
            Self::NotFound => StatusCode::NOT_FOUND,
            Self::MethodNotAllowed => StatusCode::METHOD_NOT_ALLOWED,
            Self::Conflict => StatusCode::CONFLICT,
            Self::PayloadTooLarge => StatusCode::PAYLOAD_TOO_LARGE,
            Self::InvalidParameter => StatusCode::UNPROCESSABLE_ENTITY,
            Self::RateLimited => StatusCode::TOO_MANY_REQUESTS,
            Self::Busy => StatusCode::SERVICE_UNAVAILABLE,
            Self::Internal => StatusCode::INTERNAL_SERVER_ERROR,
        }
    }
}

/// A refused or failed request. A refused request changes nothing.
#[derive(Clone, Debug, PartialEq, Serialize, ToSchema, thiserror::Error)]
#[error("{code:?}: {message}")]
pub struct ApiError {
    pub code: ErrorCode,
    pub message: String,
    /// The refused field, named as in the config file
    /// (`rendering.static_damping`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub field: Option<String>,
}

impl ApiError {
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        Self {
            code,
            message: message.into(),
            field: None,
        }
    }

    /// A value refused by validation, naming its field.
    pub fn invalid(field: impl Into<String>, message: impl Into<String>) -> Self {
        Self {
            field: Some(field.into()),
            ..Self::new(ErrorCode::InvalidParameter, message)
        }
    }

    pub fn bad_request(message: impl Into<String>) -> Self {
        Self::new(ErrorCode::BadRequest, message)
    }

    /// Names the field the error is about.
    pub fn with_field(mut self, field: impl Into<String>) -> Self {
        self.field = Some(field.into());
        self
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let status = self.code.status();
        let body = ErrorReply {
            ok: false,
            error: self,
        };
        (status, axum::Json(body)).into_response()
    }
}

/// `{"ok": true, "data": data}` with status 200.
pub fn reply<T: Serialize>(data: T) -> Response {
    axum::Json(Reply { ok: true, data }).into_response()
}

/// Median, 99th percentile and largest of a latency (µs).
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, ToSchema)]
pub struct Percentiles {
    pub p50: f64,
    pub p99: f64,
    pub max: f64,
}

/// The servo's fault counts so far.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, ToSchema)]
pub struct Faults {
    pub read: u64,
    pub render: u64,
    pub write: u64,
    pub solver_failed: u64,
    pub quarantined: u64,
}

/// A recording in progress, or finished.
#[derive(Clone, Debug, PartialEq, Serialize, ToSchema)]
pub struct Recording {
    pub path: String,
    /// Ticks recorded so far (all of them, once finished).
    pub ticks: u64,
}

/// The run's figures as the telemetry thread sees them now.
#[derive(Clone, Debug, Default, PartialEq, Serialize, ToSchema)]
pub struct Status {
    /// The scene's config file.
    pub scene: String,
    /// The device's name.
    pub device: String,
    /// Since the daemon started (s).
    pub uptime_s: f64,
    /// Servo ticks since the scene's servo started.
    pub ticks: u64,
    /// The servo's target rate (Hz).
    pub servo_rate_hz: f64,
    /// Ticks per second since the previous refresh (a quarter second).
    pub rate_hz: f64,
    /// Tick compute time since the previous refresh (µs).
    pub compute_us: Percentiles,
    /// Wake-up latency since the previous refresh (µs).
    pub wake_latency_us: Percentiles,
    /// Ticks whose wake-up latency and compute time exceed the period,
    /// among the records received.
    pub deadline_misses: u64,
    /// Tick records the telemetry thread missed.
    pub dropped_records: u64,
    pub safety_trips: u64,
    pub faults: Faults,
    /// Ticks per friction state, and ticks that rendered nothing.
    pub states: BTreeMap<OrNotRendered<FrictionState>, u64>,
    /// Ticks per friction verdict, and ticks that rendered nothing.
    pub verdicts: BTreeMap<OrNotRendered<FrictionVerdict>, u64>,
    /// The rendering parameters' generation in force.
    pub generation: u64,
    pub recording: Option<Recording>,
}

/// One object of a scene.
#[derive(Clone, Debug, PartialEq, Serialize, ToSchema)]
pub struct SceneObject {
    pub index: u32,
    pub name: String,
    /// What it contributes to contacts.
    pub role: ObjectRole,
    pub tool: bool,
    pub movable: bool,
    pub material: String,
}

/// The scene running.
#[derive(Clone, Debug, PartialEq, Serialize, ToSchema)]
pub struct SceneInfo {
    /// Its config file.
    pub file: String,
    pub servo_rate_hz: f64,
    pub objects: Vec<SceneObject>,
}

/// What one device backend finds, as `hapticd devices` lists it: where it
/// looked or what it loaded, why it could not look, and its devices.
#[derive(Clone, Debug, PartialEq, Serialize, ToSchema)]
pub struct BackendDevices {
    /// The backend, as the scene's `device.kind` names it: `hid`,
    /// `forcedim`, `falcon`, `openhaptics`.
    pub backend: String,
    /// Its name for people: `HID`, `Force Dimension`, `Novint Falcon`,
    /// `OpenHaptics`.
    pub name: String,
    /// What it loaded or read: `14 profiles from device-profiles`,
    /// `Force Dimension SDK 3.17.0.0 from /opt/…/libdrd.so`.
    pub source: Option<String>,
    /// Why it found nothing to list: its library not found (every path
    /// tried), its profiles unreadable, the USB listing refused.
    pub error: Option<String>,
    pub devices: Vec<DeviceInfo>,
}

/// A device a backend found.
#[derive(Clone, Debug, PartialEq, Serialize, ToSchema)]
pub struct DeviceInfo {
    /// What picks it in the scene's `[device]` table: a HID device's path,
    /// the Force Dimension SDK's device index (`device.forcedim.device_index`),
    /// the Falcon's index (`device.falcon.index`), the OpenHaptics
    /// configuration name (`device.openhaptics.device_name`).
    pub id: String,
    /// Its model or product name.
    pub name: String,
    /// The rest of its line in `hapticd devices`: `system type 104; wrist:
    /// active; gripper; right-handed`.
    pub detail: String,
    /// The device profile a HID device matches.
    pub profile: Option<String>,
    /// Why it cannot be opened (held by another program, say); `in use by
    /// the running scene` for the device the servo drives.
    pub error: Option<String>,
    /// A HID device's identifiers.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hid: Option<HidIds>,
}

/// A HID interface's identifiers.
#[derive(Clone, Debug, PartialEq, Serialize, ToSchema)]
pub struct HidIds {
    pub vendor_id: u16,
    pub product_id: u16,
    pub manufacturer: Option<String>,
    pub product: Option<String>,
    pub interface_number: i32,
    pub usage_page: u16,
    pub usage: u16,
}

/// The rendering parameters in force.
#[derive(Clone, Debug, PartialEq, Serialize, ToSchema)]
pub struct Parameters {
    /// Rises by one with each change; 0 as the scene started.
    pub generation: u64,
    /// In the reply to a change: the first tick that rendered it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub applied_tick: Option<u64>,
    #[serde(flatten)]
    pub parameters: TunableParameters,
}

/// What the daemon does for the control API. Calls may block (a scene
/// load takes seconds; a parameter change waits for the servo to take it):
/// the server makes them off its event loop.
pub trait Control: Send + Sync + 'static {
    /// The run's live figures.
    fn status(&self) -> Status;
    /// The rendering parameters in force.
    fn parameters(&self) -> Result<Parameters, ApiError>;
    /// Validates the scene with `patch` applied, hands the change to the
    /// servo and returns the parameters in force once the servo has taken
    /// them, with `applied_tick`.
    fn patch_parameters(&self, patch: RenderingPatch) -> Result<Parameters, ApiError>;
    fn scene(&self) -> SceneInfo;
    /// Loads, validates and starts the scene at `path`; on an error the
    /// old scene keeps running.
    fn load_scene(&self, path: &Path) -> Result<SceneInfo, ApiError>;
    fn recording(&self) -> Option<Recording>;
    fn start_recording(&self, path: &Path) -> Result<Recording, ApiError>;
    /// Stops and finishes the recording.
    fn stop_recording(&self) -> Result<Recording, ApiError>;
    fn devices(&self) -> Result<Vec<BackendDevices>, ApiError>;
}
