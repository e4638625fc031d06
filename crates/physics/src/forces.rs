//! What force elements (contacts, damping, joint controllers, gravity) hand
//! the integrators: a wrench per body and the gradient blocks
//! `∂(F_i, τ_i)/∂(x_j, θ_j)` and `∂(F_i, τ_i)/∂(v_j, ω_j)` that Xu, Zhao &
//! Barbič's global system (eqs 15–18) is assembled from.
//!
//! Conventions, as in `haptic-contact`: world frame; a body's pose is
//! perturbed as `x → x + δx`, `R → exp([δθ]×) R`; torques are about the
//! body's centre of mass; `(v, ω)` are the centre of mass's velocity and
//! the angular velocity, both in the world frame.

use foldhash::HashMap;
use haptic_core::{Matrix6, Vector6};

/// Indices in [`Forces::gradients`] of the blocks between two bodies `a`
/// and `b`: `[[(a, a), (a, b)], [(b, a), (b, b)]]`; `None` where either
/// body does not move (the integrators solve for moving bodies only).
pub type PairBlocks = [[Option<usize>; 2]; 2];

/// `∂(wrench on body `on`)/∂(state of body `by`)`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct GradientBlock {
    pub on: usize,
    pub by: usize,
    /// With respect to `(x, θ)`.
    pub position: Matrix6,
    /// With respect to `(v, ω)`.
    pub velocity: Matrix6,
}

/// Wrenches and their gradients, accumulated over every force element of a
/// step. Buffers are kept between steps.
#[derive(Clone, Debug, Default)]
pub struct Forces {
    /// `(F, τ)` on each body (N, N·m).
    pub wrench: Vec<Vector6>,
    /// Gradient blocks, one per `(on, by)` pair.
    pub gradients: Vec<GradientBlock>,
    /// `(on, by)` → its block in `gradients`.
    index: HashMap<(usize, usize), usize>,
    /// The last [`pair_blocks`](Self::pair_blocks) asked for and its answer
    /// (contacts come grouped by pair).
    last_pair: Option<((usize, usize), PairBlocks)>,
}

impl Forces {
    /// Zero wrenches for `bodies` bodies, no gradients.
    pub fn reset(&mut self, bodies: usize) {
        self.wrench.clear();
        self.wrench.resize(bodies, Vector6::zeros());
        self.gradients.clear();
        self.index.clear();
        self.last_pair = None;
    }

    /// Makes these forces `other`'s, reusing the buffers.
    pub fn copy_from(&mut self, other: &Forces) {
        self.wrench.clone_from(&other.wrench);
        self.gradients.clone_from(&other.gradients);
        // Not `clone_from`: from an empty map it would free this one's table.
        self.index.clear();
        self.index
            .extend(other.index.iter().map(|(&key, &k)| (key, k)));
        self.last_pair = None;
    }

    /// Adds `wrench` to body `on`.
    pub fn add_wrench(&mut self, on: usize, wrench: &Vector6) {
        self.wrench[on] += wrench;
    }

    /// Adds to the gradient block of `(on, by)`.
    pub fn add_gradient(&mut self, on: usize, by: usize, position: Matrix6, velocity: Matrix6) {
        let k = self.block(on, by);
        let block = &mut self.gradients[k];
        block.position += position;
        block.velocity += velocity;
    }

    /// The index in `gradients` of the block of `(on, by)`, made zero if new.
    fn block(&mut self, on: usize, by: usize) -> usize {
        let next = self.gradients.len();
        let k = *self.index.entry((on, by)).or_insert(next);
        if k == next {
            self.gradients.push(GradientBlock {
                on,
                by,
                position: Matrix6::zeros(),
                velocity: Matrix6::zeros(),
            });
        }
        k
    }

    /// The blocks between bodies `a` and `b`, made zero if new, of those
    /// that `moving` (`[a, b]`'s).
    pub fn pair_blocks(&mut self, a: usize, b: usize, moving: [bool; 2]) -> PairBlocks {
        if let Some((pair, blocks)) = self.last_pair {
            if pair == (a, b) {
                return blocks;
            }
        }
        let bodies = [a, b];
        let mut blocks = [[None; 2]; 2];
        for on in 0..2 {
            for by in 0..2 {
                if moving[on] && moving[by] {
                    blocks[on][by] = Some(self.block(bodies[on], bodies[by]));
                }
            }
        }
        self.last_pair = Some(((a, b), blocks));
        blocks
    }
}

/// One scalar constraint `C(x_a, R_a, x_b, R_b) = 0` between body `a` and
/// body `b` (or the world), as the augmented system (eq 62) needs it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ConstraintRow {
    pub a: usize,
    /// `None` for a constraint to the world.
    pub b: Option<usize>,
    /// `∂C/∂(x_a, θ_a)`.
    pub jacobian_a: Vector6,
    /// `∂C/∂(x_b, θ_b)` (zero without `b`).
    pub jacobian_b: Vector6,
    /// `C` at the current state.
    pub value: f64,
    /// `C̈` at zero linear and angular accelerations: the velocity-product
    /// part of eq 58 (`J̇ u`), which eq 61's `d` collects.
    pub velocity_product: f64,
}
