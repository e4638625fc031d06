//! The integrators a substep advances the bodies with
//! ([`Integrator`](crate::parameters::Integrator)): [`euler`] for the
//! semi-implicit step and symplectic Euler, [`rk4`] for Runge–Kutta. A new
//! integrator is a new module here, dispatched from `World::substep`.

pub mod euler;
pub mod rk4;
