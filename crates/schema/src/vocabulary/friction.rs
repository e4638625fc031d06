//! What the friction stage decides each cycle.

closed_set! {
    /// Whether the object stays put this cycle.
    pub enum FrictionState {
        /// No contact.
        Free = "free",
        /// In contact, but friction cannot hold it: frictionless equilibrium.
        Sliding = "sliding",
        /// The LP is feasible: friction holds the object (eqs 32–37).
        Static = "static",
    }
}

closed_set! {
    /// What the friction stage decided in one cycle, and how surely. The
    /// [`code`](Self::code)s are the stable encoding of recordings.
    pub enum FrictionVerdict {
        /// No contact.
        Free = "free",
        /// Certified sliding.
        Sliding = "sliding",
        /// Certified static.
        Static = "static",
        /// Static, decided within the solver's band: it could not certify
        /// either way at its iteration cap or at working precision.
        StaticInBand = "static_in_band",
        /// Sliding, decided within the solver's band.
        SlidingInBand = "sliding_in_band",
        /// The solver returned an error; the cycle slid without friction.
        SolverFailed = "solver_failed",
    }
}

impl FrictionVerdict {
    /// The stable code of recordings: 0 free, 1 sliding, 2 static, 3 static
    /// in the band, 4 sliding in the band, 5 solver failed.
    pub fn code(self) -> u8 {
        self as u8
    }

    pub fn from_code(code: u8) -> Option<Self> {
        Self::ALL.get(usize::from(code)).copied()
    }

    /// What the tool did: free, sliding (a failed solve slides) or static.
    pub fn state(self) -> FrictionState {
        match self {
            Self::Free => FrictionState::Free,
            Self::Sliding | Self::SlidingInBand | Self::SolverFailed => FrictionState::Sliding,
            Self::Static | Self::StaticInBand => FrictionState::Static,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verdict_codes_are_stable_and_round_trip() {
        let codes: Vec<u8> = FrictionVerdict::ALL.iter().map(|v| v.code()).collect();
        assert_eq!(codes, [0, 1, 2, 3, 4, 5]);
        for verdict in FrictionVerdict::ALL {
            assert_eq!(FrictionVerdict::from_code(verdict.code()), Some(verdict));
        }
        assert_eq!(FrictionVerdict::from_code(6), None);
        assert_eq!(FrictionVerdict::StaticInBand.state(), FrictionState::Static);
        assert_eq!(
            FrictionVerdict::SolverFailed.state(),
            FrictionState::Sliding
        );
    }
}
