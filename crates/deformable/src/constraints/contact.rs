//! Non-penetration and friction rows (§4.3–4.4, eqs 24–32) of a surface
//! sample against a rigid body.

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
    let n = contact.normal;
    let r = contact.point - rigid.centre;
    let mut nodes = [NodeTerm {
        node: 0,
        jacobian: Vector3::zeros(),
    }; 3];
    let mut count = 0;
    for k in 0..3 {
        if sample.weights[k] != 0.0 {
            nodes[count].node = offset + sample.nodes[k];
            count += 1;
        }
    }
    let weights: [f64; 3] = {
        let mut w = [0.0; 3];
        let mut c = 0;
        for k in 0..3 {
            if sample.weights[k] != 0.0 {
                w[c] = sample.weights[k];
                c += 1;
            }
        }
        w
    };
    let rigid_term = |direction: Vector3<f64>| -> RigidTerm {
        rigid.term(contact.rigid as usize, -direction, -r.cross(&direction))
    };
    let along = |direction: Vector3<f64>, nodes: &mut [NodeTerm; 3]| {
        for k in 0..count {
            nodes[k].jacobian = weights[k] * direction;
        }
    };
    let h = settings.h;
    let target = if contact.gap >= 0.0 {
        -contact.gap / h
    } else {
        -settings.baumgarte * contact.gap / h
    };
    let source = |axis: u8| RowSource::Contact {
        body: contact.body,
        sample: contact.sample,
        other: contact.rigid,
        axis,
    };
    along(n, &mut nodes);
    let normal_row = rows.len() as u32;
    if !rows.push(
        &nodes[..count],
        &[rigid_term(n)],
        inverse_masses,
        target,
        0.0,
        f64::INFINITY,
        RowKind::Bounded,
        source(0),
    ) || contact.friction <= 0.0
    {
        return;
    }
    let (u, w) = match settings.tangent_basis {
        TangentBasis::FromNormal => tangents(&n),
        TangentBasis::FromSlip => {
            // Eqs 27–28: u along Δv × n; no friction rows when Δv ∥ n or 0.
            let mut slip = -rigid_velocity.0 - rigid_velocity.1.cross(&r);
            for k in 0..count {
                slip += weights[k] * velocities[nodes[k].node as usize];
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
                coefficient: contact.friction,
            },
            f64::INFINITY,
        ),
        FrictionBound::GravityPressure => {
            // Eq 32: ρ = m_cp |g · n|, the pair bounded by μ ρ (an impulse μ ρ h).
            let pressure = contact_mass * settings.gravity.dot(&n).abs();
            (
                RowKind::FrictionPair {
                    normal: None,
                    coefficient: contact.friction,
                },
                contact.friction * pressure * h,
            )
        }
    };
    along(u, &mut nodes);
    let first = rows.push(
        &nodes[..count],
        &[rigid_term(u)],
        inverse_masses,
        0.0,
        -bound,
        bound,
        kind,
        source(1),
    );
    along(w, &mut nodes);
    if first {
        let second = rows.push(
            &nodes[..count],
            &[rigid_term(w)],
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
