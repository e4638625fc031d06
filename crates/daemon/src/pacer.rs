//! Fixed-rate pacing of the daemon's non-real-time loops.

use std::time::{Duration, Instant};

/// Sleeps each loop iteration to the next multiple of a period; an
/// iteration that ends late restarts the schedule from now instead of
/// running the missed iterations back to back.
pub struct Pacer {
    period: Duration,
    next: Instant,
}

impl Pacer {
    pub fn new(rate_hz: f64) -> Self {
        Self {
            period: Duration::from_secs_f64(1.0 / rate_hz),
            next: Instant::now(),
        }
    }

    pub fn period(&self) -> Duration {
        self.period
    }

    /// Sleeps until the next iteration is due; returns `false` if it was
    /// already due (the iteration ran late).
    pub fn wait(&mut self) -> bool {
        self.next += self.period;
        let now = Instant::now();
        if self.next > now {
            std::thread::sleep(self.next - now);
            true
        } else {
            self.next = now;
            false
        }
    }
}
