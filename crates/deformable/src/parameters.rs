//! The constraint solver's parameters.

use thiserror::Error;

/// What bounds a friction pair's impulse.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum FrictionBound {
    /// Coulomb's law: the disc `|λ_t| ≤ μ λ_n` of the contact's own normal
    /// impulse, as it stands in each iteration.
    #[default]
    NormalImpulse,
    /// The paper's eq 32: `|λ_t| ≤ μ m_cp |g · n| h`, the pressure of the
    /// contact point's share of weight. It ignores how hard the contact is
    /// actually pressed (a jelly squeezed under a bar slips as easily as one
    /// resting), so it holds Coulomb's law only for a body resting on its
    /// own weight.
    GravityPressure,
}

/// How a contact's friction directions are chosen.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum TangentBasis {
    /// Any orthonormal pair normal to the contact, from the normal alone:
    /// contacts at rest get friction rows too, so static friction holds.
    #[default]
    FromNormal,
    /// The paper's eqs 27–28: `u` along `Δv × n`. A contact whose slip is
    /// (nearly) zero gets no friction rows in that step, so a body at rest
    /// on a slope starts to slide before friction acts.
    FromSlip,
}

/// The deformable world's solver parameters.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SolverParameters {
    /// PGS sweeps over all rows per step (Algorithm 1).
    pub iterations: usize,
    /// `β h` of eq 13: the fraction of each constraint error corrected per
    /// step (the paper's `β = 0.1/h`).
    pub baumgarte: f64,
    /// `β h` of the bending rows (eqs 33–35) alone. The paper biases them
    /// as the others; a draped or hanging cloth's folds are bending errors
    /// that nothing else takes back, so the bias pushes at them every step
    /// and feeds the cloth energy (1.4e-3 J over a minute on the ball,
    /// against 8e-5 J unbiased). 0 by default: bending rows then resist
    /// the folds' motion without driving them flat.
    pub bending_baumgarte: f64,
    /// The fraction of last step's impulse each row starts from (§4.6's warm
    /// starting); 0 starts every row at zero.
    pub warm_start: f64,
    pub friction_bound: FrictionBound,
    pub tangent_basis: TangentBasis,
    /// Extra distance (m) beyond a sample's travel in a step within which
    /// contacts are made.
    pub contact_margin: f64,
    /// Fastest speed (m/s) at which Baumgarte pushes a penetrating sample
    /// out, so that a deep penetration resolves without launching it.
    pub max_push_out_speed: f64,
    /// A node faster than this (m/s) after a step marks the step as
    /// diverging: the body is put back and counted as quarantined.
    pub max_speed: f64,
    /// Whether the rigid world's joints are rows of the solver too.
    pub joint_rows: bool,
    /// Gauss–Seidel passes projecting over-long inextensible edges back to
    /// their rest length, and penetrating contact samples out, after the
    /// nodes advance (beyond the paper, see [`crate::post_stabilisation`]);
    /// 0 leaves both to Baumgarte, as the paper does.
    pub projection_sweeps: usize,
    /// Passes of the solver between which implicitly integrated bodies
    /// answer the impulses with their stiffness (see [`crate::world`]); 1
    /// for the paper's single pass.
    pub elastic_passes: usize,
    /// Whether an elastic pass holds an implicitly integrated body's nodes
    /// that rest on contacts on their contact planes in its implicit solve
    /// (Baraff & Witkin's filtering), rather than passing the contacts'
    /// impulses through `A⁻¹` after the rows: the body's stiffness then
    /// carries the support within the step.
    pub contact_planes: bool,
    /// Equal substeps a step is taken in, each a whole coupled step (the
    /// rigid world's included): contact stops a node within a substep, so
    /// a body's stiffness has less to catch up on.
    pub substeps: usize,
    /// Whether deformable surfaces meet each other, and themselves where
    /// their material asks for self-collision
    /// ([`crate::collision::deformable`]). On by default: it costs nothing
    /// with a single body without self-collision.
    pub deformable_contacts: bool,
    /// How the equality rows (anchors, inextensibility, rigid joints) are
    /// solved.
    pub equality_solver: EqualitySolver,
}

/// How the equality rows are solved.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum EqualitySolver {
    /// With the other rows, by PGS sweeps (the paper's).
    #[default]
    Pgs,
    /// Held exactly, the other rows swept against them (see
    /// [`crate::direct`]): for ropes and mechanisms between bodies of very
    /// different masses.
    Direct,
}

impl Default for SolverParameters {
    fn default() -> Self {
        Self {
            iterations: 10,
            baumgarte: 0.2,
            bending_baumgarte: 0.0,
            warm_start: 1.0,
            friction_bound: FrictionBound::default(),
            tangent_basis: TangentBasis::default(),
            contact_margin: 0.002,
            max_push_out_speed: 0.5,
            max_speed: 100.0,
            joint_rows: true,
            projection_sweeps: 30,
            elastic_passes: 4,
            contact_planes: true,
            substeps: 1,
            equality_solver: EqualitySolver::Pgs,
            deformable_contacts: true,
        }
    }
}

impl SolverParameters {
    /// The paper's settings (§5): two iterations, `β = 0.1/h`, its friction
    /// bound and tangent basis.
    pub fn paper() -> Self {
        Self {
            iterations: 2,
            baumgarte: 0.1,
            bending_baumgarte: 0.1,
            friction_bound: FrictionBound::GravityPressure,
            tangent_basis: TangentBasis::FromSlip,
            projection_sweeps: 0,
            elastic_passes: 1,
            contact_planes: false,
            substeps: 1,
            ..Self::default()
        }
    }

    /// Checks each value's range.
    pub fn check(&self) -> Result<(), SolverParameterError> {
        let fields = [
            (
                "baumgarte",
                self.baumgarte,
                (0.0..=1.0).contains(&self.baumgarte),
                "in [0, 1]",
            ),
            (
                "bending_baumgarte",
                self.bending_baumgarte,
                (0.0..=1.0).contains(&self.bending_baumgarte),
                "in [0, 1]",
            ),
            (
                "warm_start",
                self.warm_start,
                (0.0..=1.0).contains(&self.warm_start),
                "in [0, 1]",
            ),
            (
                "contact_margin",
                self.contact_margin,
                self.contact_margin.is_finite() && self.contact_margin >= 0.0,
                "finite and ≥ 0",
            ),
            ("max_speed", self.max_speed, self.max_speed > 0.0, "> 0"),
            (
                "max_push_out_speed",
                self.max_push_out_speed,
                self.max_push_out_speed > 0.0,
                "> 0",
            ),
            (
                "substeps",
                self.substeps as f64,
                self.substeps > 0,
                "at least 1",
            ),
            (
                "elastic_passes",
                self.elastic_passes as f64,
                self.elastic_passes > 0,
                "at least 1",
            ),
            (
                "iterations",
                self.iterations as f64,
                self.iterations > 0,
                "at least 1",
            ),
        ];
        match fields.into_iter().find(|(_, _, ok, _)| !ok) {
            Some((field, value, _, expected)) => Err(SolverParameterError {
                field,
                value,
                expected,
            }),
            None => Ok(()),
        }
    }
}

/// A solver parameter out of range.
#[derive(Debug, Error, PartialEq)]
#[error("deformable solver: {field} = {value} is out of range ({expected})")]
pub struct SolverParameterError {
    pub field: &'static str,
    pub value: f64,
    pub expected: &'static str,
}
