//! Contact stiffness scaling with the number of contacts (Xu, Zhao & Barbič,
//! eq 77, which credits McNeely et al., their ref \[33\]).
//!
//! With `n` contacts in a cycle (counted in finest-level shell points, so a
//! coarse contact after an early traversal stop counts its leaf count), each
//! contact gets `k_i = k_n · min(1, N0 / n)`. This is eq 77 exactly:
//! `k_modified = k` for `n < N0` and `k N0 / n` for `n ≥ N0` (both give `k`
//! at `n = N0`). For `n` parallel contacts the summed normal stiffness
//! `Σ k_i = k_n · min(n, N0)` is capped at `k_n N0`: few contacts stay stiff,
//! a large flat contact cannot exceed the stable limit. `N0 = ∞` turns the
//! scaling off (the paper's "N0 = ∞").
//!
//! The factor is constant while the contact set is, so the contact gradient
//! of [`gradient`](crate::gradient) stays exact; the scaled force is not
//! conservative across contact-set changes (Xu et al., after eq 77).
//!
//! Zhao, Li & Barbič credit their "adaptive stiffness" to their ref \[4\] (Xu & Barbič,
//! "Adaptive 6-DoF haptic contact stiffness using the Gauss map", 2016), a
//! different method; this is the contact-count scaling only.

/// The `N0` of eq 77.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct StiffnessScaling {
    /// `N0`: the contact count above which the stiffness per contact falls
    /// as `N0 / n`, so the total stays `k_n N0`. Positive; `f64::INFINITY`
    /// (the default) disables scaling. Xu et al. used 10 for their excavator.
    pub reference_contacts: f64,
}

impl StiffnessScaling {
    /// No scaling (`N0 = ∞`).
    pub const NONE: Self = Self {
        reference_contacts: f64::INFINITY,
    };

    /// `min(1, N0 / n)` for `n` contacts.
    #[inline]
    pub fn factor(&self, contacts: f64) -> f64 {
        if contacts > self.reference_contacts {
            self.reference_contacts / contacts
        } else {
            1.0
        }
    }
}

impl Default for StiffnessScaling {
    fn default() -> Self {
        Self::NONE
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn total_stiffness_is_capped_at_n0() {
        let scaling = StiffnessScaling {
            reference_contacts: 10.0,
        };
        for n in [1.0, 5.0, 10.0, 11.0, 100.0, 8500.0] {
            let total = n * scaling.factor(n);
            assert!((total - n.min(10.0)).abs() < 1e-12, "{n}: {total}");
        }
        assert_eq!(StiffnessScaling::default().factor(1e9), 1.0);
    }
}
