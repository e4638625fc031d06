//! Structured logs on standard error through `tracing`: human-readable by
//! default, one JSON object per line with `--log-format json`. The level
//! comes from `HAPTICD_LOG` (e.g. `debug`, `haptic_daemon=trace`), default
//! `info`.

use std::io::{self, IsTerminal, Write};
use tracing_subscriber::fmt::MakeWriter;
use tracing_subscriber::EnvFilter;

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum LogFormat {
    Human,
    Json,
}

/// Standard error, erasing the live status line before each log line when
/// it is a terminal.
struct Stderr {
    terminal: bool,
}

impl<'a> MakeWriter<'a> for Stderr {
    type Writer = Box<dyn Write + 'a>;

    fn make_writer(&'a self) -> Self::Writer {
        let mut err = io::stderr().lock();
        if self.terminal {
            let _ = err.write_all(b"\r\x1b[K");
        }
        Box::new(err)
    }
}

/// Installs the global subscriber.
pub fn init(format: LogFormat) {
    let filter = EnvFilter::try_from_env("HAPTICD_LOG").unwrap_or_else(|_| EnvFilter::new("info"));
    let terminal = io::stderr().is_terminal();
    let writer = Stderr { terminal };
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(writer)
        .with_thread_names(true);
    match format {
        LogFormat::Human => builder.with_ansi(terminal).init(),
        LogFormat::Json => builder.json().flatten_event(true).init(),
    }
}
