//! Non-penetration and friction rows (§4.3–4.4, eqs 24–32) of a surface
//! sample against a rigid body or against a deformable triangle.

use super::anchor::RigidView;
use super::{NodeTerm, RigidTerm, RowKind, RowSource, Rows};
use crate::parameters::{FrictionBound, TangentBasis};
use crate::topology::SurfaceSample;
use nalgebra::{Point3, Vector3};

/// A surface sample of a deformable body near a rigid body.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RigidContact {
    pub body: u32,
    pub sample: u32,
    pub rigid: u32,
    /// World point on the sample.
    pub point: Point3<f64>,
    /// Unit normal from the rigid body towards the sample (world).
    pub normal: Vector3<f64>,
    /// Signed distance of the sample from the rigid surface less the
    /// deformable's half thickness (m): negative when penetrating.
    pub gap: f64,
    /// Coulomb coefficient of the pair.
    pub friction: f64,
}

/// What the contact rows need beyond the contact.
pub struct ContactSettings {
    pub h: f64,
    /// `β h`: the fraction of a penetration pushed out per step (eq 13).
    pub baumgarte: f64,
    pub friction_bound: FrictionBound,
    pub tangent_basis: TangentBasis,
    pub gravity: Vector3<f64>,
}

/// An orthonormal pair spanning the plane normal to `n`.
pub fn tangents(n: &Vector3<f64>) -> (Vector3<f64>, Vector3<f64>) {
    let helper = if n.x.abs() < 0.6 {
        Vector3::x()
    } else {
        Vector3::y()
    };
    let u = n.cross(&helper).normalize();
    (u, n.cross(&u))
}

/// The non-penetration row and its friction pair for `contact`, whose
/// sample is `sample` of a body with its nodes from `offset`.
///
/// Non-penetration (eqs 24–26): the sample's velocity is the barycentric
/// blend of its face's nodes (Bridson et al.), so node `k` of the face takes
/// `J̃ = w_k nᵀ`, and the rigid body `J_x = −nᵀ`, `J_q = −(r × n)ᵀ`. This
/// replaces the paper's dummy nodes and the averaging of their impulses over
/// faces and contacts: every impulse on the deformable is matched by its
/// opposite on the rigid body, so momentum is conserved exactly. The row is
/// driven to `−gap/h` while the sample is apart (it may close the gap in a
/// step, no further: a speculative contact), and to `−β gap/h` when it
/// penetrates; its impulse only pushes (`λ⁻ = 0`).
///
/// Friction (eqs 27–32): two rows along tangents `u`, `w`, driven to zero
/// slip, their impulse kept in a disc (see [`FrictionBound`]).
#[allow(clippy::too_many_arguments)]
pub fn add_rows(
    rows: &mut Rows,
    contact: &RigidContact,
    sample: &SurfaceSample,
    offset: u32,
    rigid: &RigidView,
    contact_mass: f64,
    velocities: &[Vector3<f64>],
    rigid_velocity: (Vector3<f64>, Vector3<f64>),
    inverse_masses: &[f64],
    settings: &ContactSettings,
) {
    let mut sides = Sides::default();
    sides.add_sample(sample, offset, 1.0);
    sides.rigid = Some(RigidSide {
        index: contact.rigid,
        view: *rigid,
        lever: contact.point - rigid.centre,
        velocity: rigid_velocity,
    });
    push_rows(
        rows,
        &sides,
        &contact.normal,
        contact.gap,
        contact.friction,
        contact_mass,
        velocities,
        inverse_masses,
        settings,
        |axis| RowSource::Contact {
            body: contact.body,
            sample: contact.sample,
            other: contact.rigid,
            axis,
        },
    );
}

/// A surface sample of one deformable body near a triangle of another, or
/// of its own (see [`crate::collision::deformable`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SurfaceContact {
    pub body: u32,
    pub sample: u32,
    /// The body the triangle belongs to, and the triangle.
    pub other: u32,
    pub face: u32,
    /// Barycentric weights of the triangle point nearest the sample.
    pub face_weights: [f64; 3],
    /// World point on the sample.
    pub point: Point3<f64>,
    /// Unit normal from the triangle towards the sample (world).
    pub normal: Vector3<f64>,
    /// Distance between the two surfaces less both bodies' half
    /// thicknesses (m): negative when penetrating.
    pub gap: f64,
    /// Coulomb coefficient of the pair.
    pub friction: f64,
}

/// The rows of `contact` between two deformable sides: the sample's nodes
/// (`sample`, from `sample_offset` among the solver's nodes) take
/// `J̃ = w_k nᵀ` as against a rigid body, and the triangle's nodes (`face`,
/// from `face_offset`) `J̃ = −b_k nᵀ` with `b` the barycentric weights of its
/// point nearest the sample: the paper's two dummy nodes (§4.3,
/// `J̃_A = −nᵀ`, `J̃_B = nᵀ`) blended into their faces. Both sides' weights
/// sum to one, so every impulse moves the two sides' momenta by `+λ n` and
/// `−λ n`: momentum is conserved exactly. Targets, bounds and friction
/// (eq 31) are those of [`add_rows`]; `contact_mass` is eq 32's `m_cp`.
#[allow(clippy::too_many_arguments)]
pub fn add_surface_rows(
    rows: &mut Rows,
    contact: &SurfaceContact,
    sample: &SurfaceSample,
    sample_offset: u32,
    face: &[u32; 3],
    face_offset: u32,
    contact_mass: f64,
    velocities: &[Vector3<f64>],
    inverse_masses: &[f64],
    settings: &ContactSettings,
) {
    let mut sides = Sides::default();
    sides.add_sample(sample, sample_offset, 1.0);
    sides.add_sample(
        &SurfaceSample {
            nodes: *face,
            weights: contact.face_weights,
        },
        face_offset,
        -1.0,
    );
    push_rows(
        rows,
        &sides,
        &contact.normal,
        contact.gap,
        contact.friction,
        contact_mass,
        velocities,
        inverse_masses,
        settings,
        |axis| RowSource::SurfaceContact {
            body: contact.body,
            sample: contact.sample,
            other: contact.other,
            face: contact.face,
            axis,
        },
    );
}

/// A rigid body taking part in a contact.
#[derive(Clone, Copy)]
struct RigidSide {
    index: u32,
    view: RigidView,
    /// The contact point's offset from the centre of mass.
    lever: Vector3<f64>,
    /// Its free velocity and angular velocity.
    velocity: (Vector3<f64>, Vector3<f64>),
}

/// The participants of a contact: deformable nodes with signed weights
/// (positive on the sample's side, negative on a triangle's) and at most one
/// rigid body, on the side the normal points away from.
#[derive(Clone, Copy, Default)]
struct Sides {
    nodes: [(u32, f64); 6],
    count: usize,
    rigid: Option<RigidSide>,
}

impl Sides {
    /// Adds `sample`'s nodes with nonzero weight, scaled by `sign`.
    fn add_sample(&mut self, sample: &SurfaceSample, offset: u32, sign: f64) {
        for k in 0..3 {
            if sample.weights[k] != 0.0 {
                self.nodes[self.count] = (offset + sample.nodes[k], sign * sample.weights[k]);
                self.count += 1;
            }
        }
    }
}

/// The non-penetration row and its friction pair between `sides` (see
/// [`add_rows`] and [`add_surface_rows`]); `source` names each by axis.
#[allow(clippy::too_many_arguments)]
fn push_rows(
    rows: &mut Rows,
    sides: &Sides,
    n: &Vector3<f64>,
    gap: f64,
    friction: f64,
    contact_mass: f64,
    velocities: &[Vector3<f64>],
    inverse_masses: &[f64],
    settings: &ContactSettings,
    source: impl Fn(u8) -> RowSource,
) {
    let n = *n;
    let count = sides.count;
    let mut nodes = [NodeTerm {
        node: 0,
        jacobian: Vector3::zeros(),
    }; 6];
    for k in 0..count {
        nodes[k].node = sides.nodes[k].0;
    }
    let along = |direction: Vector3<f64>, nodes: &mut [NodeTerm; 6]| {
        for k in 0..count {
            nodes[k].jacobian = sides.nodes[k].1 * direction;
        }
    };
    let rigid_terms = |direction: Vector3<f64>| -> ([RigidTerm; 1], usize) {
        match &sides.rigid {
            Some(r) => (
                [r.view
                    .term(r.index as usize, -direction, -r.lever.cross(&direction))],
                1,
            ),
            None => (
                [RigidTerm {
                    body: 0,
                    linear: Vector3::zeros(),
                    angular: Vector3::zeros(),
                    linear_response: Vector3::zeros(),
                    angular_response: Vector3::zeros(),
                }],
                0,
            ),
        }
    };
    let h = settings.h;
    let target = if gap >= 0.0 {
        -gap / h
    } else {
        -settings.baumgarte * gap / h
    };
    along(n, &mut nodes);
    let normal_row = rows.len() as u32;
    let (terms, used) = rigid_terms(n);
    if !rows.push(
        &nodes[..count],
        &terms[..used],
        inverse_masses,
        target,
        0.0,
        f64::INFINITY,
        RowKind::Bounded,
        source(0),
    ) || friction <= 0.0
    {
        return;
    }
    let (u, w) = match settings.tangent_basis {
        TangentBasis::FromNormal => tangents(&n),
        TangentBasis::FromSlip => {
            // Eqs 27–28: u along Δv × n; no friction rows when Δv ∥ n or 0.
            let mut slip = Vector3::zeros();
            if let Some(r) = &sides.rigid {
                slip -= r.velocity.0 + r.velocity.1.cross(&r.lever);
            }
            for &(node, weight) in &sides.nodes[..count] {
                slip += weight * velocities[node as usize];
            }
            let cross = slip.cross(&n);
            if cross.norm() < 1e-9 {
                return;
            }
            let u = cross.normalize();
            (u, u.cross(&n).normalize())
        }
    };
    let (kind, bound) = match settings.friction_bound {
        FrictionBound::NormalImpulse => (
            RowKind::FrictionPair {
                normal: Some(normal_row),
                coefficient: friction,
            },
            f64::INFINITY,
        ),
        FrictionBound::GravityPressure => {
            // Eq 32: ρ = m_cp |g · n|, the pair bounded by μ ρ (an impulse μ ρ h).
            let pressure = contact_mass * settings.gravity.dot(&n).abs();
            (
                RowKind::FrictionPair {
                    normal: None,
                    coefficient: friction,
                },
                friction * pressure * h,
            )
        }
    };
    along(u, &mut nodes);
    let (terms, used) = rigid_terms(u);
    let first = rows.push(
        &nodes[..count],
        &terms[..used],
        inverse_masses,
        0.0,
        -bound,
        bound,
        kind,
        source(1),
    );
    along(w, &mut nodes);
    let (terms, used) = rigid_terms(w);
    if first {
        let second = rows.push(
            &nodes[..count],
            &terms[..used],
            inverse_masses,
            0.0,
            -bound,
            bound,
            RowKind::FrictionSecond,
            source(2),
        );
        if !second {
            // A pair needs both rows.
            rows.pop();
        }
    }
}
