//! A whole daemon run: start the control API's server, then run scene
//! after scene — the command line's first, then each one loaded through
//! the control API — in three steps each: start it, supervise it and stop
//! it ([`RunningScene`]). The server runs on across scene loads.

use crate::control::{DaemonControl, Reply};
use crate::error::{io, RunError};
use crate::scene::BuiltScene;
use crate::scene_run::{RunContext, RunningScene, SceneEnd, Started, ThreadHooks};
use crate::signals::Shutdown;
use crate::summary::RunSummary;
use haptic_config::{Overrides, ServoScene};
use haptic_devices::AtEnd;
use haptic_server::{ApiError, ErrorCode, SceneInfo, Server, ServerConfig, StreamHub};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Everything a run needs besides the scene.
#[derive(Clone, Debug, Default)]
pub struct RunOptions {
    /// Record every tick of the first scene to this file.
    pub record: Option<PathBuf>,
    /// Stop after this long.
    pub duration: Option<Duration>,
    /// Hold the emulator's last sample after its trajectory ends, instead
    /// of ending the run.
    pub hold_at_end: bool,
    /// The command line's overrides, applied to the scenes loaded through
    /// the control API too.
    pub overrides: Overrides,
    /// Where to write the server's TCP port, atomically, once it is bound.
    pub port_file: Option<PathBuf>,
}

/// Starts the control API's server as `config`'s `[server]` table says,
/// logs where it listens and writes the port file.
fn start_server(
    config: &ServoScene,
    options: &RunOptions,
    control: &Arc<DaemonControl>,
) -> Result<Option<Server>, RunError> {
    let settings = config.server();
    if !settings.enabled {
        return Ok(None);
    }
    let server = Server::start(
        &ServerConfig {
            listen: settings.listen_address(),
            unix_socket: settings.unix_socket.as_ref().map(|p| config.base().join(p)),
            token: settings.token.clone(),
            max_clients: settings.max_clients,
            max_request_bytes: settings.max_request_bytes,
            requests_per_second: settings.requests_per_second,
        },
        control.clone(),
        control.hub().clone(),
    )?;
    if let Some(address) = server.local_addr() {
        tracing::info!("listening on http://{address}");
    }
    if let Some(path) = server.unix_socket() {
        tracing::info!("listening on unix:{}", path.display());
    }
    if let (Some(path), Some(address)) = (&options.port_file, server.local_addr()) {
        haptic_asset::AtomicFile::write(path, format!("{}\n", address.port()).as_bytes())
            .map_err(io(format!("writing {}", path.display())))?;
    }
    Ok(Some(server))
}

/// Runs `config` until `shutdown` asks to stop, the recording ends, or
/// `options.duration` passes, serving the control API meanwhile; a scene
/// loaded through it replaces the running one. A second signal stops the
/// servo at once with zero force and returns [`EndReason::Aborted`](crate::EndReason::Aborted). A
/// thread that panics stops the others (the servo ramping its output to
/// zero) and is returned as [`RunError::ThreadPanicked`], the recording
/// finished. The summary is the last scene's.
pub fn run(
    config: &ServoScene,
    options: &RunOptions,
    shutdown: &Shutdown,
) -> Result<RunSummary, RunError> {
    let control = Arc::new(DaemonControl::new(
        StreamHub::new(),
        options.overrides.clone(),
    ));
    let _server = start_server(config, options, &control)?;
    let run = RunContext {
        shutdown,
        control: &control,
        at_end: if options.hold_at_end {
            AtEnd::Hold
        } else {
            AtEnd::Error
        },
    };
    let started = Instant::now();
    let mut scene = config.clone();
    let mut previous = None;
    // The geometry of a scene loaded through the control API, and its
    // reply.
    let mut loaded = None;
    let mut record = options.record.clone();
    loop {
        let duration = options
            .duration
            .map(|d| d.saturating_sub(started.elapsed()));
        let end = run_scene(&run, &scene, loaded.take(), record.take(), duration)?;
        match end {
            SceneEnd::Stopped(summary) => return Ok(summary),
            SceneEnd::Replaced(request) => {
                previous = Some(std::mem::replace(&mut scene, request.scene));
                loaded = Some((request.built, request.reply));
            }
            SceneEnd::Refused => {
                scene = previous.take().expect("a refused scene replaced another");
                tracing::info!(scene = %scene.name().display(), "restarting the previous scene");
            }
        }
    }
}

/// One scene of [`run`]: started, supervised for at most `duration`, and
/// stopped; recorded to `record`. `loaded` is the geometry of a scene the
/// control API loaded, built already, and the reply that waits for it to
/// start; a scene that cannot open its device is refused to it.
fn run_scene(
    run: &RunContext,
    config: &ServoScene,
    loaded: Option<(BuiltScene, Reply<SceneInfo>)>,
    record: Option<PathBuf>,
    duration: Option<Duration>,
) -> Result<SceneEnd, RunError> {
    let (built, reply) = loaded.unzip();
    let hooks = ThreadHooks::default();
    let scene = match RunningScene::start(run, config, built, record.as_deref(), hooks) {
        Ok(Started::Running(scene)) => scene,
        Ok(Started::Stopped(summary)) => return Ok(SceneEnd::Stopped(summary)),
        Err(error @ RunError::Device(_)) => return refuse(reply, error),
        Err(error) => return Err(error),
    };
    if let Some(reply) = reply {
        let _ = reply.send(Ok(scene.info().clone()));
    }
    let ending = scene.supervise(run, duration);
    scene.stop(run.shutdown, ending)
}

/// Tells the control API why the scene it loaded could not start, if it
/// loaded it; otherwise the run fails.
fn refuse(reply: Option<Reply<SceneInfo>>, error: RunError) -> Result<SceneEnd, RunError> {
    match reply {
        Some(reply) => {
            tracing::error!(%error, "the requested scene could not start");
            let _ = reply.send(Err(ApiError::new(ErrorCode::Internal, error.to_string())));
            Ok(SceneEnd::Refused)
        }
        None => Err(error),
    }
}
