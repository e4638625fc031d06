//! Exact point–triangle queries used by the BVH.

use nalgebra::{Point3, Vector3};

/// Squared distance from `p` to the triangle `(a, b, c)`.
#[inline]
pub fn point_triangle_distance_squared(
    p: &Point3<f64>,
    a: &Point3<f64>,
    b: &Point3<f64>,
    c: &Point3<f64>,
) -> f64 {
    (p - closest_point_on_triangle(p, a, b, c)).norm_squared()
}

/// The point of the triangle `(a, b, c)` nearest to `p`, by the Voronoi-region
/// walk of Ericson, *Real-Time Collision Detection* §5.1.5. Exact for
/// degenerate triangles too (they reduce to a segment or a point).
#[inline]
pub fn closest_point_on_triangle(
    p: &Point3<f64>,
    a: &Point3<f64>,
    b: &Point3<f64>,
    c: &Point3<f64>,
) -> Point3<f64> {
    let ab = b - a;
    let ac = c - a;
    let ap = p - a;
    let d1 = ab.dot(&ap);
    let d2 = ac.dot(&ap);
    if d1 <= 0.0 && d2 <= 0.0 {
        return *a;
    }
    let bp = p - b;
    let d3 = ab.dot(&bp);
    let d4 = ac.dot(&bp);
    if d3 >= 0.0 && d4 <= d3 {
        return *b;
    }
    let vc = d1 * d4 - d3 * d2;
    if vc <= 0.0 && d1 >= 0.0 && d3 <= 0.0 {
        return a + ab * (d1 / (d1 - d3));
    }
    let cp = p - c;
    let d5 = ab.dot(&cp);
    let d6 = ac.dot(&cp);
    if d6 >= 0.0 && d5 <= d6 {
        return *c;
    }
    let vb = d5 * d2 - d1 * d6;
    if vb <= 0.0 && d2 >= 0.0 && d6 <= 0.0 {
        return a + ac * (d2 / (d2 - d6));
    }
    let va = d3 * d6 - d5 * d4;
    if va <= 0.0 && (d4 - d3) >= 0.0 && (d5 - d6) >= 0.0 {
        return b + (c - b) * ((d4 - d3) / ((d4 - d3) + (d5 - d6)));
    }
    let denom = va + vb + vc;
    if denom.abs() < f64::MIN_POSITIVE {
        // Collinear corners that passed every edge test: the nearest edge wins.
        return [
            closest_on_segment(p, a, b),
            closest_on_segment(p, b, c),
            closest_on_segment(p, a, c),
        ]
        .into_iter()
        .min_by(|x, y| (p - x).norm_squared().total_cmp(&(p - y).norm_squared()))
        .unwrap_or(*a);
    }
    a + ab * (vb / denom) + ac * (vc / denom)
}

fn closest_on_segment(p: &Point3<f64>, a: &Point3<f64>, b: &Point3<f64>) -> Point3<f64> {
    let ab = b - a;
    let len2 = ab.norm_squared();
    let t = if len2 > 0.0 {
        ((p - a).dot(&ab) / len2).clamp(0.0, 1.0)
    } else {
        0.0
    };
    a + ab * t
}

/// Whether `p` and `q`, at unsigned distances `p_distance` and `q_distance`
/// from the surface, lie on the same side of it, judged by the planes of
/// their nearest triangles `p_triangle` and `q_triangle`. The answer does not
/// depend on either triangle's winding order. `None` when the planes cannot
/// tell: a point lies within `tolerance` of a plane, a point's distance to a
/// plane differs from its distance to the surface by more than `tolerance`
/// (the surface bends between them), or the two planes disagree.
#[inline]
pub fn same_side_of_surface(
    (p, p_distance, p_triangle): (&Point3<f64>, f64, &[Point3<f64>; 3]),
    (q, q_distance, q_triangle): (&Point3<f64>, f64, &[Point3<f64>; 3]),
    tolerance: f64,
) -> Option<bool> {
    let from_p = same_side_of_plane(p_triangle, (p, p_distance), (q, q_distance), tolerance)?;
    let from_q = same_side_of_plane(q_triangle, (q, q_distance), (p, p_distance), tolerance)?;
    (from_p == from_q).then_some(from_p)
}

/// [`same_side_of_surface`] judged by the plane of one triangle.
#[inline]
fn same_side_of_plane(
    corners: &[Point3<f64>; 3],
    (p, p_distance): (&Point3<f64>, f64),
    (q, q_distance): (&Point3<f64>, f64),
    tolerance: f64,
) -> Option<bool> {
    let normal = (corners[1] - corners[0])
        .cross(&(corners[2] - corners[0]))
        .try_normalize(f64::MIN_POSITIVE)?;
    let (sp, sq) = (normal.dot(&(p - corners[0])), normal.dot(&(q - corners[0])));
    let planar =
        (sp.abs() - p_distance).abs() <= tolerance && (sq.abs() - q_distance).abs() <= tolerance;
    (planar && sp.abs() > 1e-9 * tolerance && sq.abs() > 1e-9 * tolerance)
        .then_some((sp > 0.0) == (sq > 0.0))
}

/// Signed solid angle subtended at `p` by the triangle `(a, b, c)`, positive when
/// `p` sees the triangle's back (inside a counter-clockwise closed surface), by
/// Van Oosterom & Strackee (1983).
#[inline]
pub fn solid_angle(p: &Point3<f64>, a: &Point3<f64>, b: &Point3<f64>, c: &Point3<f64>) -> f64 {
    let (ra, rb, rc): (Vector3<f64>, Vector3<f64>, Vector3<f64>) = (a - p, b - p, c - p);
    let (la, lb, lc) = (ra.norm(), rb.norm(), rc.norm());
    let numerator = ra.dot(&rb.cross(&rc));
    let denominator = la * lb * lc + ra.dot(&rb) * lc + rb.dot(&rc) * la + rc.dot(&ra) * lb;
    2.0 * numerator.atan2(denominator)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn brute_force_distance_squared(p: &Point3<f64>, t: [Point3<f64>; 3]) -> f64 {
        let n = 200;
        let mut best = f64::INFINITY;
        for i in 0..=n {
            for j in 0..=(n - i) {
                let (u, v) = (i as f64 / n as f64, j as f64 / n as f64);
                let q = t[0] + (t[1] - t[0]) * u + (t[2] - t[0]) * v;
                best = best.min((p - q).norm_squared());
            }
        }
        best
    }

    #[test]
    fn distance_matches_dense_sampling_in_every_voronoi_region() {
        let t = [
            Point3::new(0.0, 0.0, 0.0),
            Point3::new(1.0, 0.0, 0.0),
            Point3::new(0.2, 0.8, 0.1),
        ];
        for p in [
            Point3::new(0.3, 0.3, 0.5),
            Point3::new(-1.0, -1.0, 0.0),
            Point3::new(2.0, -0.2, 0.3),
            Point3::new(0.5, -1.0, -0.2),
            Point3::new(0.1, 2.0, 0.0),
            Point3::new(1.0, 1.0, 0.0),
            Point3::new(-0.5, 0.5, 0.0),
        ] {
            let exact = point_triangle_distance_squared(&p, &t[0], &t[1], &t[2]).sqrt();
            let sampled = brute_force_distance_squared(&p, t).sqrt();
            assert!(exact <= sampled + 1e-12, "{p}: {exact} > {sampled}");
            assert!(sampled - exact < 5e-3, "{p}: {exact} vs {sampled}");
        }
    }

    #[test]
    fn degenerate_triangle_is_a_segment() {
        let (a, b, c) = (
            Point3::new(0.0, 0.0, 0.0),
            Point3::new(1.0, 0.0, 0.0),
            Point3::new(2.0, 0.0, 0.0),
        );
        let d = point_triangle_distance_squared(&Point3::new(1.5, 1.0, 0.0), &a, &b, &c);
        assert!((d - 1.0).abs() < 1e-12);
    }

    #[test]
    fn solid_angles_of_a_closed_tetrahedron_sum_to_four_pi_inside_and_zero_outside() {
        let v = [
            Point3::new(0.0, 0.0, 0.0),
            Point3::new(1.0, 0.0, 0.0),
            Point3::new(0.0, 1.0, 0.0),
            Point3::new(0.0, 0.0, 1.0),
        ];
        // Counter-clockwise seen from outside.
        let faces = [[0, 2, 1], [0, 1, 3], [0, 3, 2], [1, 2, 3]];
        let total = |p: Point3<f64>| -> f64 {
            faces
                .iter()
                .map(|f| solid_angle(&p, &v[f[0]], &v[f[1]], &v[f[2]]))
                .sum()
        };
        let inside = total(Point3::new(0.1, 0.1, 0.1));
        let outside = total(Point3::new(1.0, 1.0, 1.0));
        assert!(
            (inside - 4.0 * std::f64::consts::PI).abs() < 1e-9,
            "{inside}"
        );
        assert!(outside.abs() < 1e-9, "{outside}");
    }
}
