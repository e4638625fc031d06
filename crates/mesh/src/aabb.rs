use nalgebra::{Point3, Vector3};

/// An axis-aligned bounding box. An empty box has `min > max` on every axis.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Aabb {
    pub min: Point3<f64>,
    pub max: Point3<f64>,
}

impl Aabb {
    /// The box that contains nothing; growing it by a point gives that point's box.
    #[inline]
    pub fn empty() -> Self {
        Self {
            min: Point3::from(Vector3::repeat(f64::INFINITY)),
            max: Point3::from(Vector3::repeat(f64::NEG_INFINITY)),
        }
    }

    #[inline]
    pub fn from_points<'a>(points: impl IntoIterator<Item = &'a Point3<f64>>) -> Self {
        let mut aabb = Self::empty();
        for p in points {
            aabb.grow(p);
        }
        aabb
    }

    #[inline]
    pub fn is_empty(&self) -> bool {
        (0..3).any(|a| self.min[a] > self.max[a])
    }

    #[inline]
    pub(crate) fn grow(&mut self, p: &Point3<f64>) {
        self.min = self.min.inf(p);
        self.max = self.max.sup(p);
    }

    #[inline]
    pub fn merge(&self, other: &Aabb) -> Aabb {
        Aabb {
            min: self.min.inf(&other.min),
            max: self.max.sup(&other.max),
        }
    }

    /// Whether the two boxes share a point (touching counts).
    #[inline]
    pub fn overlaps(&self, other: &Aabb) -> bool {
        (0..3).all(|c| self.min[c] <= other.max[c] && other.min[c] <= self.max[c])
    }

    /// The box grown by `margin` on every side.
    #[inline]
    pub fn dilated(&self, margin: f64) -> Aabb {
        let m = Vector3::repeat(margin);
        Aabb {
            min: self.min - m,
            max: self.max + m,
        }
    }

    #[inline]
    pub fn extents(&self) -> Vector3<f64> {
        self.max - self.min
    }

    #[inline]
    pub fn center(&self) -> Point3<f64> {
        nalgebra::center(&self.min, &self.max)
    }

    #[inline]
    pub fn contains(&self, p: &Point3<f64>) -> bool {
        (0..3).all(|a| p[a] >= self.min[a] && p[a] <= self.max[a])
    }

    /// The point of the box nearest to `p` (`p` itself when inside).
    #[inline]
    pub fn clamp(&self, p: &Point3<f64>) -> Point3<f64> {
        p.sup(&self.min).inf(&self.max)
    }

    /// The distance from the origin of the box's farthest point.
    pub fn farthest_from_origin(&self) -> f64 {
        Vector3::from_fn(|i, _| self.min[i].abs().max(self.max[i].abs())).norm()
    }

    /// Squared Euclidean distance from `p` to the box (zero inside).
    #[inline]
    pub fn distance_squared(&self, p: &Point3<f64>) -> f64 {
        (p - self.clamp(p)).norm_squared()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn distance_to_box_is_zero_inside_and_euclidean_outside() {
        let b = Aabb::from_points(&[Point3::new(0.0, 0.0, 0.0), Point3::new(1.0, 2.0, 3.0)]);
        assert_eq!(b.distance_squared(&Point3::new(0.5, 1.0, 1.0)), 0.0);
        assert!((b.distance_squared(&Point3::new(4.0, 6.0, 3.0)) - 25.0).abs() < 1e-12);
        assert!(Aabb::empty().is_empty());
        assert!(!b.is_empty());
    }
}
