//! Each joint kind's constraint rows: `C`, its analytic Jacobian for each
//! body and its velocity-product term (eqs 52–54, 58, 66).

use super::side::{sides, six, Side};
use super::{Joint, JointKind};
use crate::body::RigidBody;
use crate::forces::ConstraintRow;
use haptic_core::Vector6;
use nalgebra::Vector3;

impl Joint {
    /// Appends this joint's [`row_count`](Self::row_count) rows at the
    /// bodies' current state (the bodies the joint was built with).
    pub fn rows(&self, bodies: &[RigidBody], out: &mut Vec<ConstraintRow>) {
        out.reserve(self.row_count());
        let (sa, sb) = sides(self.a, self.b, bodies);
        match &self.kind {
            JointKind::Ball { anchor_a, anchor_b } => {
                let (ra, rb) = (sa.rotation * anchor_a.coords, sb.rotation * anchor_b.coords);
                self.difference_rows(&sa, &sb, &ra, &rb, true, None, out);
            }
            JointKind::Hinge {
                anchor_a,
                anchor_b,
                axis_a,
                axis_b,
            } => {
                let (ra, rb) = (sa.rotation * anchor_a.coords, sb.rotation * anchor_b.coords);
                self.difference_rows(&sa, &sb, &ra, &rb, true, None, out);
                let (na, nb) = (sa.rotation * axis_a.as_ref(), sb.rotation * axis_b.as_ref());
                let redundant = na.iamax();
                self.difference_rows(&sa, &sb, &(ra + na), &(rb + nb), true, Some(redundant), out);
            }
            JointKind::Prismatic {
                normals_a,
                rest_rotation,
                anchor_b,
                ..
            } => {
                let rest = sa.rotation * rest_rotation.to_rotation_matrix().matrix();
                for k in 0..2 {
                    let (ca, cb) = (
                        rest.column(k).into_owned(),
                        sb.rotation.column(k).into_owned(),
                    );
                    self.difference_rows(&sa, &sb, &ca, &cb, false, None, out);
                }
                let rb = sb.rotation * anchor_b.coords;
                for normal in normals_a {
                    self.slide_normal_row(&sa, &sb, &(sa.rotation * normal.as_ref()), &rb, out);
                }
            }
            JointKind::TargetRotation { target } => {
                let goal = Side {
                    rotation: *target.to_rotation_matrix().matrix(),
                    ..Side::world()
                };
                for k in 0..2 {
                    let ca = sa.rotation.column(k).into_owned();
                    let cb = goal.rotation.column(k).into_owned();
                    self.difference_rows(&sa, &goal, &ca, &cb, false, None, out);
                }
            }
        }
    }

    /// The components `k` (all but `skip`) of `c (x_a − x_b) + r_a − r_b`,
    /// `c = 1` with `centres` (eq 52) and 0 otherwise (eqs 53, 66), where
    /// `r_a`, `r_b` are world vectors carried by the bodies' rotations:
    /// `∂/∂θ_a = r_a × e_k`, and at zero accelerations
    /// `C̈ = ω_a×(ω_a×r_a) − ω_b×(ω_b×r_b)`.
    #[allow(clippy::too_many_arguments)]
    fn difference_rows(
        &self,
        sa: &Side,
        sb: &Side,
        ra: &Vector3<f64>,
        rb: &Vector3<f64>,
        centres: bool,
        skip: Option<usize>,
        out: &mut Vec<ConstraintRow>,
    ) {
        let c = if centres { 1.0 } else { 0.0 };
        let value = c * (sa.x - sb.x) + ra - rb;
        let accel = sa.w.cross(&sa.w.cross(ra)) - sb.w.cross(&sb.w.cross(rb));
        for k in (0..3).filter(|k| Some(*k) != skip) {
            let e = Vector3::ith(k, 1.0);
            self.push(
                six(&(c * e), &ra.cross(&e)),
                six(&(-c * e), &-rb.cross(&e)),
                value[k],
                accel[k],
                out,
            );
        }
    }

    /// Eq 54 for one world normal `n = R_a a_k`: `C = e·n` with
    /// `e = x_a − x_b − r_b`, `r_b = R_b X_b`, so `∂C/∂θ_a = n × e`,
    /// `∂C/∂θ_b = n × r_b`, and at zero accelerations
    /// `C̈ = ë·n + 2 ė·ṅ + e·n̈` with `ë = −ω_b×(ω_b×r_b)`,
    /// `ė = v_a − v_b − ω_b×r_b`, `ṅ = ω_a×n`, `n̈ = ω_a×(ω_a×n)`.
    fn slide_normal_row(
        &self,
        sa: &Side,
        sb: &Side,
        n: &Vector3<f64>,
        rb: &Vector3<f64>,
        out: &mut Vec<ConstraintRow>,
    ) {
        let e = sa.x - sb.x - rb;
        let e_dot = sa.v - sb.v - sb.w.cross(rb);
        let e_ddot = -sb.w.cross(&sb.w.cross(rb));
        let n_dot = sa.w.cross(n);
        let n_ddot = sa.w.cross(&n_dot);
        self.push(
            six(n, &n.cross(&e)),
            six(&-n, &n.cross(rb)),
            e.dot(n),
            e_ddot.dot(n) + 2.0 * e_dot.dot(&n_dot) + e.dot(&n_ddot),
            out,
        );
    }

    fn push(
        &self,
        jacobian_a: Vector6,
        jacobian_b: Vector6,
        value: f64,
        velocity_product: f64,
        out: &mut Vec<ConstraintRow>,
    ) {
        out.push(ConstraintRow {
            a: self.a,
            b: self.b,
            jacobian_a,
            jacobian_b: if self.b.is_some() {
                jacobian_b
            } else {
                Vector6::zeros()
            },
            value,
            velocity_product,
        });
    }

    /// The slide `s = (p_b − x_a)·(R_a axis_a)` of a prismatic joint (m, zero
    /// at creation); `None` for other kinds.
    pub fn slide(&self, bodies: &[RigidBody]) -> Option<f64> {
        let JointKind::Prismatic {
            axis_a, anchor_b, ..
        } = &self.kind
        else {
            return None;
        };
        let (sa, sb) = sides(self.a, self.b, bodies);
        let p_b = sb.x + sb.rotation * anchor_b.coords;
        Some((p_b - sa.x).dot(&(sa.rotation * axis_a.as_ref())))
    }
}
