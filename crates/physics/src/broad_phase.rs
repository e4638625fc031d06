//! The broad phase: the pairs of bodies whose bounds overlap, the only
//! ones the narrow phase examines.

use crate::body::RigidBody;

/// Margin of the broad phase's bounds (m).
pub const BROAD_PHASE_MARGIN: f64 = 1e-4;

/// Pairs of bodies whose bounds, grown by `margin`, overlap, at least one
/// of them dynamic (the broad phase), sorted: a sweep over the world
/// bounds, then the oriented boxes ([`RigidBody::bounds_overlap`]). Bodies
/// without geometry take no part.
pub fn overlapping_pairs(bodies: &[RigidBody], margin: f64, out: &mut Vec<(usize, usize)>) {
    out.clear();
    let bounds: Vec<_> = bodies
        .iter()
        .map(|b| b.world_bounds().map(|a| a.dilated(margin)))
        .collect();
    // Sweep along x.
    let mut order: Vec<usize> = (0..bodies.len()).filter(|&i| bounds[i].is_some()).collect();
    order.sort_by(|&i, &j| {
        bounds[i]
            .unwrap()
            .min
            .x
            .total_cmp(&bounds[j].unwrap().min.x)
    });
    for (k, &i) in order.iter().enumerate() {
        let bi = bounds[i].unwrap();
        for &j in &order[k + 1..] {
            let bj = bounds[j].unwrap();
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
