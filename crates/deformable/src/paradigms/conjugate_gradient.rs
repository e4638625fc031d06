//! Jacobi-preconditioned conjugate gradients over node vectors, for the
//! linearly implicit step of the force-based paradigms.

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
        self.solve_filtered(&[], apply, diagonal, b, x, max_iterations, tolerance)
    }

    /// [`solve`](Self::solve) with the nodes `fixed[i].is_some()` held at
    /// their starting value in `x` (Baraff & Witkin's filtered conjugate
    /// gradients: residuals and directions are zeroed there). `fixed` may
    /// be shorter than `x` (the rest are free).
    #[allow(clippy::too_many_arguments)]
    pub fn solve_filtered(
        &mut self,
        fixed: &[Option<Vector3<f64>>],
        apply: impl Fn(&[Vector3<f64>], &mut [Vector3<f64>]),
        diagonal: &[f64],
        b: &[Vector3<f64>],
        x: &mut [Vector3<f64>],
        max_iterations: usize,
        tolerance: f64,
    ) -> usize {
        let held = |i: usize| fixed.get(i).is_some_and(Option::is_some);
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
            self.residual[i] = if held(i) {
                Vector3::zeros()
            } else {
                b[i] - self.product[i]
            };
            self.preconditioned[i] = self.residual[i] / diagonal[i];
        }
        self.direction.copy_from_slice(&self.preconditioned);
        let goal = tolerance
            * tolerance
            * b.iter()
                .enumerate()
                .filter(|(i, _)| !held(*i))
                .map(|(_, v)| v.norm_squared())
                .sum::<f64>();
        let mut rz = dot(&self.residual, &self.preconditioned);
        for iteration in 0..max_iterations {
            if dot(&self.residual, &self.residual) <= goal {
                return iteration;
            }
            apply(&self.direction, &mut self.product);
            for i in 0..n {
                if held(i) {
                    self.product[i] = Vector3::zeros();
                }
            }
            let curvature = dot(&self.direction, &self.product);
            if !(curvature > 0.0) {
                return iteration;
            }
            let alpha = rz / curvature;
            for i in 0..n {
                if held(i) {
                    continue;
                }
                x[i] += alpha * self.direction[i];
                self.residual[i] -= alpha * self.product[i];
                self.preconditioned[i] = self.residual[i] / diagonal[i];
            }
            let next = dot(&self.residual, &self.preconditioned);
            let beta = next / rz;
            rz = next;
            for i in 0..n {
                self.direction[i] = self.preconditioned[i] + beta * self.direction[i];
            }
        }
        max_iterations
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
