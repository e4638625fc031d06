//! What a step did: contacts, islands, friction, substeps and timings.

/// What one step did.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct StepReport {
    /// Penetrating shell points over every pair and role.
    pub contacts: usize,
    pub islands: usize,
    /// Dynamic bodies in the largest island.
    pub largest_island: usize,
    /// Bodies whose step gave non-finite values this step: they were put
    /// back where they were, at rest.
    pub quarantined: usize,
    /// Sum over the dynamic bodies (J).
    pub kinetic_energy: f64,
    /// Deepest penetration `−min d` over the contacts (m), 0 without contact.
    pub max_penetration: f64,
    pub sticking: usize,
    pub sliding: usize,
    /// Substeps the step was split into.
    pub substeps: usize,
    /// Field lookups of the contact detection, over the substeps.
    pub lookups: usize,
    /// Roles (a shell in a field) traversed down their point trees, over
    /// the substeps; the others reused their points near the surface.
    pub traversals: usize,
    /// The farthest any surface point moved between two contact
    /// detections (in one substep), over the bodies that could touch
    /// another in the step (m).
    pub max_near_motion: f64,
    /// Substeps undone because a body moved too far in them.
    pub undone: usize,
    /// Sliding contacts whose slip the explicit sliding force reversed
    /// within a substep, which was then taken again with them sticking
    /// (see [`FrictionAnchors::reversed`](crate::friction_anchors::FrictionAnchors::reversed)), over the substeps.
    pub stopped: usize,
    /// Substeps taken again for them.
    pub retaken: usize,
    /// Wall time of the contact detection (broad and narrow phases), over
    /// the substeps taken (s).
    pub detection_seconds: f64,
    /// Wall time of the rest, forces, solve and integration (RK4's stages'
    /// detections included), over the substeps taken (s).
    pub dynamics_seconds: f64,
}
