//! The broad phase: the pairs of bodies whose bounds overlap, the only
//! ones the narrow phase examines.

use crate::body::RigidBody;
use haptic_mesh::Aabb;

/// Margin of the broad phase's bounds (m).
pub const BROAD_PHASE_MARGIN: f64 = 1e-4;

/// The broad phase's buffers, kept from step to step.
#[derive(Default)]
pub struct BroadPhase {
    bounds: Vec<Option<Aabb>>,
    order: Vec<usize>,
}

impl BroadPhase {
    /// Pairs of bodies whose bounds, grown by `margin`, overlap, at least
    /// one of them dynamic, sorted, into `out`: a sweep over the world
    /// bounds, then the oriented boxes ([`RigidBody::bounds_overlap`]).
    /// Bodies without geometry take no part.
    pub fn overlapping_pairs(
        &mut self,
        bodies: &[RigidBody],
        margin: f64,
        out: &mut Vec<(usize, usize)>,
    ) {
        out.clear();
        let bounds = &mut self.bounds;
        bounds.clear();
        bounds.extend(
            bodies
                .iter()
                .map(|b| b.world_bounds().map(|a| a.dilated(margin))),
        );
        // Sweep along x.
        let order = &mut self.order;
        order.clear();
        order.extend((0..bodies.len()).filter(|&i| bounds[i].is_some()));
        let min_x = |i: usize| bounds[i].map_or(0.0, |b| b.min.x);
        order.sort_unstable_by(|&i, &j| min_x(i).total_cmp(&min_x(j)).then(i.cmp(&j)));
        for (k, &i) in order.iter().enumerate() {
            let Some(bi) = bounds[i] else { continue };
            for &j in &order[k + 1..] {
                let Some(bj) = bounds[j] else { continue };
                if bj.min.x > bi.max.x {
                    break;
                }
                if bi.overlaps(&bj)
                    && (bodies[i].is_dynamic() || bodies[j].is_dynamic())
                    && bodies[i].bounds_overlap(&bodies[j], margin)
                {
                    out.push((i.min(j), i.max(j)));
                }
            }
        }
        out.sort_unstable();
    }
}

/// [`BroadPhase::overlapping_pairs`] with buffers of its own.
pub fn overlapping_pairs(bodies: &[RigidBody], margin: f64, out: &mut Vec<(usize, usize)>) {
    BroadPhase::default().overlapping_pairs(bodies, margin, out);
}
