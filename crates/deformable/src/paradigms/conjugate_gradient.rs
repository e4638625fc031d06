//! Preconditioned conjugate gradients over node vectors, for the linearly
//! implicit step of the force-based paradigms.

use nalgebra::Vector3;

/// The method's vectors, kept between solves so that a solve allocates
/// nothing once they have grown.
#[derive(Clone, Debug, Default)]
pub struct ConjugateGradient {
    residual: Vec<Vector3<f64>>,
    preconditioned: Vec<Vector3<f64>>,
    direction: Vec<Vector3<f64>>,
    product: Vec<Vector3<f64>>,
}

fn dot(a: &[Vector3<f64>], b: &[Vector3<f64>]) -> f64 {
    a.iter().zip(b).map(|(x, y)| x.dot(y)).sum()
}

impl ConjugateGradient {
    /// Solves `A x = b` for symmetric positive definite `A`, given as
    /// `apply(y, out)` writing `out = A y`, with `diagonal` its (scalar per
    /// node) diagonal, starting from `x`. Stops when the residual's norm falls
    /// below `tolerance · |b|` or after `max_iterations`; returns the
    /// iterations taken.
    pub fn solve(
        &mut self,
        apply: impl Fn(&[Vector3<f64>], &mut [Vector3<f64>]),
        diagonal: &[f64],
        b: &[Vector3<f64>],
        x: &mut [Vector3<f64>],
        max_iterations: usize,
        tolerance: f64,
    ) -> usize {
        self.solve_filtered(
            |_| Filter::Free,
            apply,
            |i, r| r / diagonal[i],
            b,
            x,
            max_iterations,
            tolerance,
        )
    }

    /// [`solve`](Self::solve) with each node's velocity change filtered by
    /// `filter(i)` (Baraff & Witkin's modified conjugate gradients): the
    /// constrained part of `x` keeps its starting value, and residuals and
    /// directions are projected onto the free part. `precondition(i, r)`
    /// is node `i`'s block of a symmetric positive definite approximation
    /// of `A⁻¹` applied to its residual `r` (Jacobi: `r / A_ii`).
    #[allow(clippy::too_many_arguments)]
    pub fn solve_filtered(
        &mut self,
        filter: impl Fn(usize) -> Filter,
        apply: impl Fn(&[Vector3<f64>], &mut [Vector3<f64>]),
        precondition: impl Fn(usize, Vector3<f64>) -> Vector3<f64>,
        b: &[Vector3<f64>],
        x: &mut [Vector3<f64>],
        max_iterations: usize,
        tolerance: f64,
    ) -> usize {
        let n = b.len();
        for v in [
            &mut self.residual,
            &mut self.preconditioned,
            &mut self.direction,
            &mut self.product,
        ] {
            v.clear();
            v.resize(n, Vector3::zeros());
        }
        apply(x, &mut self.product);
        for i in 0..n {
            let f = filter(i);
            self.residual[i] = f.project(b[i] - self.product[i]);
            self.preconditioned[i] = f.project(precondition(i, self.residual[i]));
        }
        self.direction.copy_from_slice(&self.preconditioned);
        let goal = tolerance
            * tolerance
            * (0..n)
                .map(|i| filter(i).project(b[i]).norm_squared())
                .sum::<f64>();
        let mut rz = dot(&self.residual, &self.preconditioned);
        let mut rr = dot(&self.residual, &self.residual);
        for iteration in 0..max_iterations {
            if rr <= goal {
                return iteration;
            }
            apply(&self.direction, &mut self.product);
            let mut curvature = 0.0;
            for i in 0..n {
                let p = filter(i).project(self.product[i]);
                self.product[i] = p;
                curvature += self.direction[i].dot(&p);
            }
            if !(curvature > 0.0) {
                return iteration;
            }
            let alpha = rz / curvature;
            let mut next = 0.0;
            rr = 0.0;
            for i in 0..n {
                x[i] += alpha * self.direction[i];
                let r = self.residual[i] - alpha * self.product[i];
                self.residual[i] = r;
                let z = filter(i).project(precondition(i, r));
                self.preconditioned[i] = z;
                next += r.dot(&z);
                rr += r.norm_squared();
            }
            let beta = next / rz;
            rz = next;
            for i in 0..n {
                self.direction[i] = self.preconditioned[i] + beta * self.direction[i];
            }
        }
        max_iterations
    }
}

/// How a node's velocity change is constrained in a filtered solve.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Filter {
    Free,
    /// Wholly prescribed.
    Pinned,
    /// Prescribed along this unit normal, free across it.
    Plane(Vector3<f64>),
}

impl Filter {
    /// The part of `v` the filter leaves free.
    pub fn project(&self, v: Vector3<f64>) -> Vector3<f64> {
        match self {
            Filter::Free => v,
            Filter::Pinned => Vector3::zeros(),
            Filter::Plane(n) => v - n.dot(&v) * n,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn solves_a_tridiagonal_system_to_tolerance() {
        // A = tridiag(-1, 3, -1) acting on each component.
        let n = 50;
        let apply = |y: &[Vector3<f64>], out: &mut [Vector3<f64>]| {
            for i in 0..y.len() {
                out[i] = 3.0 * y[i];
                if i > 0 {
                    out[i] -= y[i - 1];
                }
                if i + 1 < y.len() {
                    out[i] -= y[i + 1];
                }
            }
        };
        let b: Vec<Vector3<f64>> = (0..n)
            .map(|i| Vector3::new(i as f64, 1.0, -(i as f64).sin()))
            .collect();
        let mut x = vec![Vector3::zeros(); n];
        let mut cg = ConjugateGradient::default();
        let iterations = cg.solve(apply, &vec![3.0; n], &b, &mut x, 100, 1e-12);
        assert!(iterations < 100);
        let mut check = vec![Vector3::zeros(); n];
        apply(&x, &mut check);
        for i in 0..n {
            assert!((check[i] - b[i]).norm() < 1e-9, "row {i}");
        }
    }
}
