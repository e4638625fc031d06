//! The live one-line status drawn on a terminal while the daemon runs.

use haptic_render::FrictionVerdict;
use haptic_schema::OrNotRendered;
use std::io::{IsTerminal, Write};
use std::time::Duration;

/// The figures one refresh shows.
#[derive(Clone, Debug, PartialEq)]
pub struct StatusSnapshot {
    /// Servo ticks per second over the last refresh window.
    pub rate_hz: f64,
    /// Median and 99th-percentile tick compute time over the window.
    pub compute_p50: Duration,
    pub compute_p99: Duration,
    pub contacts: u32,
    /// Force written to the device (N).
    pub force: f64,
    /// The newest tick's friction verdict.
    pub state: OrNotRendered<FrictionVerdict>,
    pub dropped: u64,
    pub safety_trips: u64,
    /// The servo's faults so far, every kind (`TickFaults::total`).
    pub faults: u64,
}

impl StatusSnapshot {
    /// The line, without control characters.
    pub fn line(&self) -> String {
        let us = |d: Duration| d.as_secs_f64() * 1e6;
        format!(
            "servo {:6.1} Hz | cycle {:5.1} µs (p99 {:5.1}) | contacts {:4} | force {:6.3} N | {:<15} | trips {} | faults {} | dropped {}",
            self.rate_hz,
            us(self.compute_p50),
            us(self.compute_p99),
            self.contacts,
            self.force,
            self.state,
            self.safety_trips,
            self.faults,
            self.dropped,
        )
    }
}

/// Draws the status line on standard error, rewriting it in place.
pub struct StatusLine {
    drawn: bool,
}

impl StatusLine {
    /// A status line if standard error is a terminal; `None` otherwise,
    /// so that logs redirected to a file stay free of it.
    pub fn on_terminal() -> Option<StatusLine> {
        std::io::stderr()
            .is_terminal()
            .then_some(StatusLine { drawn: false })
    }

    pub fn draw(&mut self, snapshot: &StatusSnapshot) {
        let mut err = std::io::stderr().lock();
        // Carriage return, clear to the end of the line, then the text.
        let _ = write!(err, "\r\x1b[K{}", snapshot.line());
        let _ = err.flush();
        self.drawn = true;
    }

    /// Erases the line, so that what follows starts on a clean line.
    pub fn clear(&mut self) {
        if self.drawn {
            let mut err = std::io::stderr().lock();
            let _ = write!(err, "\r\x1b[K");
            let _ = err.flush();
            self.drawn = false;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_line_shows_every_figure() {
        let line = StatusSnapshot {
            rate_hz: 999.96,
            compute_p50: Duration::from_nanos(31_200),
            compute_p99: Duration::from_nanos(48_900),
            contacts: 37,
            force: 1.98765,
            state: OrNotRendered::Rendered(FrictionVerdict::Static),
            dropped: 0,
            safety_trips: 1,
            faults: 3,
        }
        .line();
        for part in [
            "1000.0 Hz",
            "31.2 µs",
            "p99  48.9",
            "contacts   37",
            "1.988 N",
            "static",
            "trips 1",
            "faults 3",
        ] {
            assert!(line.contains(part), "{part:?} missing from {line:?}");
        }
    }
}
