//! The servo loop's rate: every period, tick count and time step of the
//! servo derives from one [`ServoRate`].

use std::time::Duration;

/// Ticks per second of the servo loop, positive and finite.
#[derive(Clone, Copy, Debug, PartialEq, PartialOrd)]
pub struct ServoRate(f64);

impl ServoRate {
    /// 1 kHz: the rate haptics needs, and the seed's.
    pub const DEFAULT: Self = Self(1000.0);

    /// `hz` as a rate; `None` unless positive and finite.
    pub fn from_hz(hz: f64) -> Option<Self> {
        (hz > 0.0 && hz.is_finite()).then_some(Self(hz))
    }

    pub fn hz(self) -> f64 {
        self.0
    }

    /// One tick (s).
    pub fn dt(self) -> f64 {
        1.0 / self.0
    }

    /// One tick.
    pub fn period(self) -> Duration {
        Duration::from_secs_f64(self.dt())
    }

    /// Whole ticks covering `seconds`, rounded up.
    pub fn ticks(self, seconds: f64) -> u32 {
        (seconds * self.0).ceil() as u32
    }
}

impl Default for ServoRate {
    fn default() -> Self {
        Self::DEFAULT
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn period_and_ticks_follow_the_rate() {
        let rate = ServoRate::from_hz(250.0).unwrap();
        assert_eq!(rate.period(), Duration::from_millis(4));
        assert_eq!(rate.dt(), 0.004);
        assert_eq!(rate.ticks(0.01), 3);
        assert_eq!(ServoRate::DEFAULT.ticks(0.5), 500);
        for bad in [0.0, -1.0, f64::NAN, f64::INFINITY] {
            assert_eq!(ServoRate::from_hz(bad), None);
        }
    }
}
