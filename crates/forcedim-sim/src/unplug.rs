//! A device unplugged by the environment, for a process that loads a
//! simulated vendor library without calling its hooks (`hapticd run`):
//! `{PREFIX}_UNPLUG_AFTER_MS` after the first open, for
//! `{PREFIX}_UNPLUG_FOR_MS` (unset: for good). Shared by the simulated
//! libraries, which link no crate.

use std::time::{Duration, Instant};

/// The environment's unplugging schedule, read at the first open.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Unplug {
    prefix: &'static str,
    armed: bool,
    /// Unplugged from, until (`None`: for good).
    window: Option<(Instant, Option<Instant>)>,
}

impl Unplug {
    pub(crate) const fn new(prefix: &'static str) -> Self {
        Self {
            prefix,
            armed: false,
            window: None,
        }
    }

    /// Reads the schedule, once; the first open calls it.
    pub(crate) fn arm(&mut self) {
        if std::mem::replace(&mut self.armed, true) {
            return;
        }
        let ms = |suffix: &str| {
            let name = format!("{}_UNPLUG_{suffix}_MS", self.prefix);
            let value = std::env::var(&name).ok()?;
            let ms: f64 = value.parse().unwrap_or_else(|_| panic!("{name}={value}"));
            Some(Duration::from_secs_f64(ms / 1e3))
        };
        if let Some(after) = ms("AFTER") {
            let from = Instant::now() + after;
            self.window = Some((from, ms("FOR").map(|span| from + span)));
        }
    }

    /// Whether the schedule has the device unplugged now.
    pub(crate) fn now(&self) -> bool {
        self.window.is_some_and(|(from, until)| {
            let now = Instant::now();
            now >= from && until.is_none_or(|until| now < until)
        })
    }
}
