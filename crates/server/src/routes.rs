//! The HTTP side: routes, their handlers, the authentication and rate
//! limits in front of them, the OpenAPI document and the static files.

use crate::api::{
    reply, ApiError, BackendDevices, Control, DeviceInfo, ErrorCode, ErrorReply, Faults, HidIds,
    Parameters, Percentiles, Recording, Reply, SceneInfo, SceneObject, Status,
};
use crate::hub::{
    ClientStatus, ClientTick, ContactPoint, Event, EventFrame, Hello, HelloDeformable, HelloObject,
    Pose, StreamHub, TextFrame, TickFrame,
};
use crate::stream::{self, ClientMessage, StreamQuery};
use axum::body::Body;
use axum::extract::rejection::{JsonRejection, QueryRejection};
use axum::extract::ws::rejection::WebSocketUpgradeRejection;
use axum::extract::ws::WebSocketUpgrade;
use axum::extract::{ConnectInfo, DefaultBodyLimit, FromRequest, Query, Request, State};
use axum::http::{header, HeaderValue, Method, StatusCode};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::{Extension, Router};
use haptic_schema::patch::RenderingPatch;
use serde::{de::DeserializeOwned, Deserialize, Serialize};
use serde_json::Value;
use std::collections::HashMap;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Instant;
use utoipa::openapi::security::{Http, HttpAuthScheme, SecurityScheme};
use utoipa::{Modify, OpenApi, ToSchema};

/// What the handlers share.
#[derive(Clone)]
pub(crate) struct AppState {
    pub control: Arc<dyn Control>,
    pub hub: StreamHub,
    pub token: Option<Arc<str>>,
    pub max_clients: usize,
    pub limiter: Arc<RateLimiter>,
    /// Where the server listens, for `/v1/status`.
    pub listening: Arc<Listening>,
}

/// Where the server listens.
#[derive(Clone, Debug, Default, PartialEq, Serialize, ToSchema)]
pub struct Listening {
    /// The TCP address bound, port 0 resolved.
    pub listen: Option<String>,
    pub unix_socket: Option<String>,
}

/// `/v1/status`: the run's figures, the server's addresses and its stream
/// clients.
#[derive(Serialize, ToSchema)]
pub struct StatusReply {
    #[serde(flatten)]
    pub status: Status,
    pub server: ServerStatus,
}

#[derive(Serialize, ToSchema)]
pub struct ServerStatus {
    #[serde(flatten)]
    pub listening: Listening,
    pub clients: Vec<ClientStatus>,
}

/// A JSON body whose rejections (malformed JSON, unknown fields, wrong
/// types, too large) come back in the error envelope.
pub(crate) struct JsonBody<T>(T);

impl<T: DeserializeOwned, S: Send + Sync> FromRequest<S> for JsonBody<T> {
    type Rejection = ApiError;

    async fn from_request(request: Request, state: &S) -> Result<Self, ApiError> {
        // Every body is a JSON object of objects and scalars: serde would
        // take an array for a struct, its fields in order.
        let axum::Json(value) = axum::Json::<Value>::from_request(request, state)
            .await
            .map_err(json_rejection)?;
        if !value.is_object() || holds_array(&value) {
            return Err(ApiError::bad_request(
                "the body must be a JSON object, with no arrays in it",
            ));
        }
        serde_json::from_value(value)
            .map(JsonBody)
            .map_err(|e| ApiError::bad_request(format!("Failed to deserialize the JSON body: {e}")))
    }
}

fn json_rejection(rejection: JsonRejection) -> ApiError {
    let code = if rejection.status() == StatusCode::PAYLOAD_TOO_LARGE {
        ErrorCode::PayloadTooLarge
    } else {
        ErrorCode::BadRequest
    };
    ApiError::new(code, rejection.body_text())
}

/// Runs a blocking [`Control`] call off the event loop.
async fn blocking<T: Send + 'static>(
    state: &AppState,
    call: impl FnOnce(&dyn Control) -> Result<T, ApiError> + Send + 'static,
) -> Result<T, ApiError> {
    let control = state.control.clone();
    tokio::task::spawn_blocking(move || call(&*control))
        .await
        .map_err(|e| ApiError::new(ErrorCode::Internal, format!("the request failed: {e}")))?
}

/// `{"path": ...}`: a file, relative to the daemon's working directory.
#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct PathRequest {
    #[schema(value_type = String)]
    pub path: PathBuf,
}

/// The run's live figures.
#[utoipa::path(get, path = "/v1/status", responses(
    (status = 200, body = Reply<StatusReply>),
))]
async fn status(State(state): State<AppState>) -> Result<Response, ApiError> {
    let status = blocking(&state, |c| Ok(c.status())).await?;
    Ok(reply(StatusReply {
        status,
        server: ServerStatus {
            listening: (*state.listening).clone(),
            clients: state.hub.clients(),
        },
    }))
}

/// The rendering parameters in force, with their `generation`.
#[utoipa::path(get, path = "/v1/parameters", responses(
    (status = 200, body = Reply<Parameters>),
))]
async fn get_parameters(State(state): State<AppState>) -> Result<Response, ApiError> {
    Ok(reply(blocking(&state, |c| c.parameters()).await?))
}

/// Changes some rendering parameters; the reply comes once the servo has
/// taken them.
#[utoipa::path(patch, path = "/v1/parameters", request_body = RenderingPatch, responses(
    (status = 200, body = Reply<Parameters>, description = "the parameters now in force, with `applied_tick`"),
    (status = 422, body = ErrorReply, description = "a value the validation refuses; `field` names it"),
    (status = 503, body = ErrorReply, description = "another change is still pending"),
))]
async fn patch_parameters(
    State(state): State<AppState>,
    JsonBody(patch): JsonBody<RenderingPatch>,
) -> Result<Response, ApiError> {
    Ok(reply(
        blocking(&state, move |c| c.patch_parameters(patch)).await?,
    ))
}

/// Whether `value` holds an array anywhere. No request body field is
/// one, and serde would take an array for a table, its fields in order.
fn holds_array(value: &Value) -> bool {
    match value {
        Value::Array(_) => true,
        Value::Object(map) => map.values().any(holds_array),
        _ => false,
    }
}

/// The scene running.
#[utoipa::path(get, path = "/v1/scene", responses((status = 200, body = Reply<SceneInfo>)))]
async fn get_scene(State(state): State<AppState>) -> Result<Response, ApiError> {
    Ok(reply(blocking(&state, |c| Ok(c.scene())).await?))
}

/// Loads another scene; an invalid one is refused and the old one keeps
/// running.
#[utoipa::path(post, path = "/v1/scene", request_body = PathRequest, responses(
    (status = 200, body = Reply<SceneInfo>),
    (status = 422, body = ErrorReply),
))]
async fn post_scene(
    State(state): State<AppState>,
    JsonBody(request): JsonBody<PathRequest>,
) -> Result<Response, ApiError> {
    Ok(reply(
        blocking(&state, move |c| c.load_scene(&request.path)).await?,
    ))
}

/// The recording in progress, or `null`.
#[utoipa::path(get, path = "/v1/recording", responses((status = 200, body = Reply<Option<Recording>>)))]
async fn get_recording(State(state): State<AppState>) -> Result<Response, ApiError> {
    Ok(reply(blocking(&state, |c| Ok(c.recording())).await?))
}

/// Starts recording every tick; the format follows the extension.
#[utoipa::path(post, path = "/v1/recording", request_body = PathRequest, responses(
    (status = 200, body = Reply<Recording>),
    (status = 409, body = ErrorReply, description = "a recording is already running"),
    (status = 422, body = ErrorReply, description = "the file cannot be created; `field` is `path`"),
))]
async fn post_recording(
    State(state): State<AppState>,
    JsonBody(request): JsonBody<PathRequest>,
) -> Result<Response, ApiError> {
    Ok(reply(
        blocking(&state, move |c| c.start_recording(&request.path)).await?,
    ))
}

/// Stops the recording and finishes its file.
#[utoipa::path(delete, path = "/v1/recording", responses(
    (status = 200, body = Reply<Recording>),
    (status = 409, body = ErrorReply, description = "no recording is running"),
))]
async fn delete_recording(State(state): State<AppState>) -> Result<Response, ApiError> {
    Ok(reply(blocking(&state, |c| c.stop_recording()).await?))
}

/// What every device backend finds, as `hapticd devices` lists it.
#[utoipa::path(get, path = "/v1/devices", responses((status = 200, body = Reply<Vec<BackendDevices>>)))]
async fn devices(State(state): State<AppState>) -> Result<Response, ApiError> {
    Ok(reply(blocking(&state, |c| c.devices()).await?))
}

/// This API in OpenAPI 3.1.
#[utoipa::path(get, path = "/v1/openapi.json", responses((status = 200, body = serde_json::Value)))]
async fn openapi() -> Response {
    axum::Json(ApiDoc::openapi()).into_response()
}

/// The state stream: upgrades to a WebSocket.
#[utoipa::path(get, path = "/v1/stream", params(StreamQuery), responses(
    (status = 101, description = "a WebSocket: `hello`, geometry, then `tick` and `event` frames"),
    (status = 400, body = ErrorReply),
    (status = 422, body = ErrorReply, description = "`rate_hz` or `contacts` out of range; `field` names it"),
    (status = 503, body = ErrorReply, description = "too many stream clients"),
))]
async fn stream(
    State(state): State<AppState>,
    peer: Option<Extension<ConnectInfo<SocketAddr>>>,
    query: Result<Query<StreamQuery>, QueryRejection>,
    upgrade: Result<WebSocketUpgrade, WebSocketUpgradeRejection>,
) -> Result<Response, ApiError> {
    let Query(query) = query.map_err(|e| ApiError::bad_request(e.body_text()))?;
    let subscription = query.subscription()?;
    let upgrade = upgrade.map_err(|e| ApiError::bad_request(e.body_text()))?;
    let peer = peer.map_or_else(
        || "unix".to_owned(),
        |Extension(ConnectInfo(a))| a.to_string(),
    );
    let client = state
        .hub
        .register(peer, subscription, state.max_clients)
        .ok_or_else(|| {
            ApiError::new(
                ErrorCode::Busy,
                format!("{} stream clients connected already", state.max_clients),
            )
        })?;
    // Frames are checked against the protocol's limit in the session; the
    // WebSocket layer refuses only what is far beyond it.
    let upgrade = upgrade
        .max_message_size(16 * stream::MAX_CLIENT_TEXT)
        .max_frame_size(16 * stream::MAX_CLIENT_TEXT);
    let hub = state.hub.clone();
    Ok(upgrade
        .on_failed_upgrade({
            let (hub, id) = (hub.clone(), client.id);
            move |_| hub.unregister(id)
        })
        .on_upgrade(move |socket| stream::session(socket, hub, client)))
}

/// The static files of the visualizer, embedded at build time.
#[derive(rust_embed::RustEmbed)]
#[folder = "web/"]
struct Web;

/// A visualizer file, `index.html` for `/`, or `not_found`.
async fn static_file(method: Method, uri: axum::http::Uri) -> Result<Response, ApiError> {
    let path = uri.path().trim_start_matches('/');
    let path = if path.is_empty() { "index.html" } else { path };
    let file = (method == Method::GET || method == Method::HEAD)
        .then(|| Web::get(path))
        .flatten()
        .ok_or_else(|| not_found(&uri))?;
    let mime = HeaderValue::from_str(file.metadata.mimetype())
        .unwrap_or(HeaderValue::from_static("application/octet-stream"));
    Ok(([(header::CONTENT_TYPE, mime)], Body::from(file.data)).into_response())
}

fn not_found(uri: &axum::http::Uri) -> ApiError {
    ApiError::new(ErrorCode::NotFound, format!("no such path: {}", uri.path()))
}

async fn method_not_allowed(method: Method, uri: axum::http::Uri) -> ApiError {
    ApiError::new(
        ErrorCode::MethodNotAllowed,
        format!("{} does not take {method}", uri.path()),
    )
}

/// Token buckets per peer: `rate` requests per second, bursts of `rate`.
pub(crate) struct RateLimiter {
    rate: f64,
    buckets: Mutex<HashMap<String, (f64, Instant)>>,
}

/// Peers remembered before idle ones (full buckets) are forgotten.
const MAX_PEERS: usize = 4096;

impl RateLimiter {
    pub fn new(rate: u32) -> Self {
        Self {
            rate: f64::from(rate),
            buckets: Mutex::new(HashMap::new()),
        }
    }

    /// Takes a request from `peer`'s bucket; false when it is empty.
    fn admit(&self, peer: &str) -> bool {
        let now = Instant::now();
        let mut buckets = self.buckets.lock().unwrap_or_else(|e| e.into_inner());
        let rate = self.rate;
        if buckets.len() >= MAX_PEERS {
            buckets.retain(|_, (tokens, at)| {
                *tokens + now.duration_since(*at).as_secs_f64() * rate < rate
            });
        }
        let (tokens, at) = buckets.entry(peer.to_owned()).or_insert((rate, now));
        *tokens = (*tokens + now.duration_since(*at).as_secs_f64() * rate).min(rate);
        *at = now;
        if *tokens >= 1.0 {
            *tokens -= 1.0;
            true
        } else {
            false
        }
    }
}

/// Refuses a peer over its rate, then, under `/v1`, a request without the
/// token when one is set.
async fn guard(State(state): State<AppState>, request: Request, next: Next) -> Response {
    let peer = request
        .extensions()
        .get::<ConnectInfo<SocketAddr>>()
        .map_or_else(|| "unix".to_owned(), |ConnectInfo(a)| a.ip().to_string());
    if !state.limiter.admit(&peer) {
        return ApiError::new(ErrorCode::RateLimited, "too many requests").into_response();
    }
    if let Some(token) = &state.token {
        if request.uri().path().starts_with("/v1") && !authorised(&request, token) {
            return ApiError::new(
                ErrorCode::Unauthorized,
                "a bearer token is required: `Authorization: Bearer TOKEN` or `?token=TOKEN`",
            )
            .into_response();
        }
    }
    next.run(request).await
}

/// Whether `request` carries `token` in its `Authorization` header or its
/// `token` query parameter.
fn authorised(request: &Request, token: &str) -> bool {
    let header = request
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "));
    let query = request
        .uri()
        .query()
        .and_then(|q| q.split('&').find_map(|pair| pair.strip_prefix("token=")));
    [header, query]
        .into_iter()
        .flatten()
        .any(|given| same(given.as_bytes(), token.as_bytes()))
}

/// Compares in time that depends on the lengths only.
fn same(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// Adds the bearer scheme to the document.
struct BearerToken;

impl Modify for BearerToken {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        let components = openapi.components.get_or_insert_with(Default::default);
        components.add_security_scheme(
            "bearer",
            SecurityScheme::Http(Http::new(HttpAuthScheme::Bearer)),
        );
    }
}

/// Adds to every operation the replies any request may get besides its
/// own: 401 and 429 from the guard, 500, 503 while no scene runs, and 400
/// and 413 for a body.
struct CommonReplies;

impl Modify for CommonReplies {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        use utoipa::openapi::{ContentBuilder, Ref, ResponseBuilder};
        let error = |description: &str| {
            ResponseBuilder::new()
                .description(description)
                .content(
                    "application/json",
                    ContentBuilder::new()
                        .schema(Some(Ref::from_schema_name("ErrorReply")))
                        .build(),
                )
                .build()
        };
        for (path, item) in &mut openapi.paths.paths {
            let operations = [
                &mut item.get,
                &mut item.put,
                &mut item.post,
                &mut item.delete,
                &mut item.patch,
            ];
            for operation in operations.into_iter().flatten() {
                let mut replies = vec![
                    (
                        "401",
                        "`unauthorized`: a token is set and the request lacks it",
                    ),
                    ("429", "`rate_limited`: too many requests from this peer"),
                ];
                if path != "/v1/openapi.json" {
                    replies.push(("500", "`internal`: the daemon failed"));
                    replies.push((
                        "503",
                        "`busy`: no scene is running yet, or a change is pending",
                    ));
                }
                if operation.request_body.is_some() {
                    replies.push(("400", "`bad_request`: malformed JSON, unknown fields, wrong types, no JSON content type"));
                    replies.push((
                        "413",
                        "`payload_too_large`: larger than `server.max_request_bytes`",
                    ));
                }
                for (status, description) in replies {
                    operation
                        .responses
                        .responses
                        .entry(status.to_owned())
                        .or_insert_with(|| error(description).into());
                }
            }
        }
    }
}

/// The API's OpenAPI document, with the stream's frames as components.
#[derive(OpenApi)]
#[openapi(
    info(title = "hapticd", description = "The haptic rendering server's control API and state stream (docs/protocol.md)."),
    paths(status, get_parameters, patch_parameters, get_scene, post_scene, get_recording,
          post_recording, delete_recording, devices, openapi, stream),
    components(schemas(ErrorReply, ApiError, ErrorCode, Status, Parameters, RenderingPatch, Percentiles, Faults, Recording,
                       SceneInfo, SceneObject, BackendDevices, DeviceInfo, HidIds, StatusReply, ServerStatus, Listening,
                       ClientStatus, PathRequest, TextFrame, Hello, ClientTick, TickFrame, Pose,
                       ContactPoint, EventFrame, Event, HelloObject, HelloDeformable, ClientMessage, haptic_schema::patch::MaterialPatch,
                       haptic_schema::patch::RenderingFieldsPatch, haptic_schema::rendering::GradientModel, haptic_schema::rendering::ForceDirection,
                       haptic_schema::rendering::Friction, haptic_schema::rendering::SolverChoice)),
    modifiers(&BearerToken, &CommonReplies),
    // The token is required only when `server.token` is set.
    security((), ("bearer" = [])),
)]
pub struct ApiDoc;

/// The whole application: routes, limits and fallbacks.
pub(crate) fn router(state: AppState, max_request_bytes: usize) -> Router {
    Router::new()
        .route("/v1/status", get(status))
        .route(
            "/v1/parameters",
            get(get_parameters).patch(patch_parameters),
        )
        .route("/v1/scene", get(get_scene).post(post_scene))
        .route(
            "/v1/recording",
            get(get_recording)
                .post(post_recording)
                .delete(delete_recording),
        )
        .route("/v1/devices", get(devices))
        .route("/v1/openapi.json", get(openapi))
        .route("/v1/stream", get(stream))
        .fallback(static_file)
        .method_not_allowed_fallback(method_not_allowed)
        .layer(DefaultBodyLimit::max(max_request_bytes))
        .layer(middleware::from_fn_with_state(state.clone(), guard))
        .with_state(state)
}

/// Close code for clients when the server stops ("going away").
pub(crate) const CLOSE_GOING_AWAY: u16 = 1001;
