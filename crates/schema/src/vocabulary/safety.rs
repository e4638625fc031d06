//! Where the device's safety layer stands, and why it trips.

closed_set! {
    /// What the safety layer lets through; [`Off`](Self::Off) by default.
    pub enum SafetyState {
        /// A trip condition is present: output is zero.
        Tripped = "tripped",
        /// Output is zero until the request is small enough to start a ramp.
        WaitingForSmallRequest = "waiting_for_small_request",
        /// Soft start: the output's limits ramp up from zero.
        Ramping = "ramping",
        /// Full limits.
        Normal = "normal",
        /// Ramping to zero after a shutdown.
        ShuttingDown = "shutting_down",
        /// Shut down: zero for good.
        Off = "off",
    }
}

impl Default for SafetyState {
    fn default() -> Self {
        Self::Off
    }
}

closed_set! {
    /// Why the safety layer zeroed the output.
    pub enum TripCause {
        /// The device reported stale data or repeated a timestamp too long.
        Stale = "stale",
        /// The sample held a NaN or an infinity.
        SampleNotFinite = "sample_not_finite",
        /// The requested wrench held a NaN or an infinity.
        RequestNotFinite = "request_not_finite",
        /// The servo reported an overrun. Unlike the other causes, the output
        /// resumes without a soft start once the episode ends.
        Overrun = "overrun",
        /// The device was lost.
        Disconnected = "disconnected",
        /// A read or write failed: a refused transfer or wrench (not the end
        /// of its recording, which is no fault).
        DeviceError = "device_error",
        /// The layer was told to shut down, abort or zero after a fault.
        Shutdown = "shutdown",
    }
}
