//! Scripted handle motion: a sequence of segments, each eased with a
//! minimum-jerk profile, evaluated analytically as pose and velocities.
//!
//! A [`Motion`] deserialises (and validates) from a config such as
//!
//! ```toml
//! start_position_m = [0.0, 0.0, 0.0]
//!
//! [[segments]]
//! type = "line"
//! to_m = [0.05, 0.0, 0.0]
//! duration_s = 1.0
//!
//! [[segments]]
//! type = "circle"
//! centre_m = [0.0, 0.0, 0.0]
//! normal = [0.0, 0.0, 1.0]
//! turns = 1.0
//! duration_s = 2.0
//! ```
//!
//! With `repeat = true` the motion plays again from its start after its last
//! segment (for demos and soak runs); its last segment must then bring the
//! handle back to the start pose.

use crate::toml_message;
use nalgebra::{Point3, Unit, UnitQuaternion, Vector3};
use serde::Deserialize;
use std::path::{Path, PathBuf};

/// One segment of a scripted motion, as written in a config.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum SegmentConfig {
    /// Stay still.
    Hold { duration_s: f64 },
    /// Move in a straight line to `to_m`.
    Line { to_m: [f64; 3], duration_s: f64 },
    /// Turn the handle by `angle_rad` about `axis` (device frame), in place.
    Rotate {
        axis: [f64; 3],
        angle_rad: f64,
        duration_s: f64,
    },
    /// Swing the position `turns` times about the axis through `centre_m`
    /// along `normal` (right-handed); the orientation is kept.
    Circle {
        centre_m: [f64; 3],
        normal: [f64; 3],
        turns: f64,
        duration_s: f64,
    },
    /// Move through each point in turn, starting from the current position,
    /// `segment_duration_s` per leg.
    Waypoints {
        points_m: Vec<[f64; 3]>,
        segment_duration_s: f64,
    },
}

/// A scripted motion as written in a config; [`Motion`] is its validated form.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MotionConfig {
    /// Position at t = 0 (m).
    #[serde(default)]
    pub start_position_m: [f64; 3],
    /// Orientation at t = 0 as a rotation vector (axis × angle, rad).
    #[serde(default)]
    pub start_rotation_rad: [f64; 3],
    /// Segments, played one after the other.
    pub segments: Vec<SegmentConfig>,
    /// Play the motion again from its start after its last segment, for
    /// demos and soak runs. The segments must end at the start pose (within
    /// [`CLOSURE_TOLERANCE`]), so the handle never jumps.
    #[serde(default)]
    pub repeat: bool,
}

/// How far (m, and rad) a repeating motion may end from its start pose.
pub const CLOSURE_TOLERANCE: f64 = 1e-9;

/// Why a [`MotionConfig`] is not a valid motion.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum MotionError {
    #[error("`{field}` must be finite")]
    NotFinite { field: &'static str },
    #[error("segment {segment}: `{field}` must be positive and finite, got {value}")]
    BadDuration {
        segment: usize,
        field: &'static str,
        value: f64,
    },
    #[error("segment {segment}: `{field}` must be finite")]
    SegmentNotFinite { segment: usize, field: &'static str },
    #[error("segment {segment}: `{field}` must be a non-zero vector")]
    ZeroAxis { segment: usize, field: &'static str },
    #[error("segment {segment}: `points_m` must hold at least one point")]
    NoWaypoints { segment: usize },
    #[error("a repeating motion must end at its start pose, but ends {position_m:e} m and {rotation_rad:e} rad away")]
    RepeatNotClosed { position_m: f64, rotation_rad: f64 },
}

/// Pose and velocities of the handle at one instant.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MotionState {
    /// Position (m).
    pub position: Point3<f64>,
    /// Orientation.
    pub orientation: UnitQuaternion<f64>,
    /// Linear velocity (m/s).
    pub linear_velocity: Vector3<f64>,
    /// Angular velocity in the device frame (rad/s).
    pub angular_velocity: Vector3<f64>,
}

/// A validated scripted motion, evaluated at any time without allocating.
///
/// Before 0 it is at its start; after [`Motion::duration_s`] it holds its
/// last pose at rest, or, when repeating, plays again from its start.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(try_from = "MotionConfig")]
pub struct Motion {
    start: Pose,
    spans: Vec<Span>,
    duration_s: f64,
    repeat: bool,
}

#[derive(Clone, Copy, Debug, PartialEq)]
struct Pose {
    position: Point3<f64>,
    orientation: UnitQuaternion<f64>,
}

#[derive(Clone, Copy, Debug, PartialEq)]
struct Span {
    start_s: f64,
    duration_s: f64,
    from: Pose,
    to: Pose,
    shape: Shape,
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Shape {
    Hold,
    Line {
        to: Point3<f64>,
    },
    Rotate {
        axis: Unit<Vector3<f64>>,
        angle: f64,
    },
    Circle {
        centre: Point3<f64>,
        axis: Unit<Vector3<f64>>,
        angle: f64,
    },
}

/// Minimum-jerk progress s(τ) = 10τ³ − 15τ⁴ + 6τ⁵ and its derivative ds/dτ.
fn minimum_jerk(tau: f64) -> (f64, f64) {
    let tau = tau.clamp(0.0, 1.0);
    let t2 = tau * tau;
    let s = t2 * tau * (10.0 + tau * (-15.0 + 6.0 * tau));
    let u = 1.0 - tau;
    (s, 30.0 * t2 * u * u)
}

impl Shape {
    /// State after progress `s` from `from`, moving at progress rate `ds` (1/s).
    fn eval(&self, from: &Pose, s: f64, ds: f64) -> MotionState {
        let mut state = MotionState {
            position: from.position,
            orientation: from.orientation,
            linear_velocity: Vector3::zeros(),
            angular_velocity: Vector3::zeros(),
        };
        match *self {
            Shape::Hold => {}
            Shape::Line { to } => {
                // Weighted form so that s = 1 lands exactly on the target.
                state.position = Point3::from(from.position.coords * (1.0 - s) + to.coords * s);
                state.linear_velocity = (to - from.position) * ds;
            }
            Shape::Rotate { axis, angle } => {
                state.orientation =
                    UnitQuaternion::from_axis_angle(&axis, angle * s) * from.orientation;
                state.angular_velocity = axis.into_inner() * (angle * ds);
            }
            Shape::Circle {
                centre,
                axis,
                angle,
            } => {
                let radius =
                    UnitQuaternion::from_axis_angle(&axis, angle * s) * (from.position - centre);
                state.position = centre + radius;
                state.linear_velocity = (axis.into_inner() * (angle * ds)).cross(&radius);
            }
        }
        state
    }
}

/// Appends a span of `shape` from `pose`, then moves `pose` and `t` to its end.
fn push(spans: &mut Vec<Span>, t: &mut f64, pose: &mut Pose, shape: Shape, duration_s: f64) {
    let end = shape.eval(pose, 1.0, 0.0);
    let to = Pose {
        position: end.position,
        orientation: end.orientation,
    };
    spans.push(Span {
        start_s: *t,
        duration_s,
        from: *pose,
        to,
        shape,
    });
    *t += duration_s;
    *pose = to;
}

/// A motion file that could not be read or is not a valid motion.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[error("{}: {message}", file.display())]
pub struct MotionFileError {
    pub file: PathBuf,
    /// What is wrong, with the line for a parse or validation error.
    pub message: String,
}

impl Motion {
    /// Reads a motion file: TOML in the form of [`MotionConfig`].
    pub fn load(path: &Path) -> Result<Motion, MotionFileError> {
        let error = |message| MotionFileError {
            file: path.to_owned(),
            message,
        };
        let text = std::fs::read_to_string(path).map_err(|e| error(e.to_string()))?;
        toml::from_str(&text).map_err(|e| error(toml_message(&text, &e)))
    }

    /// Duration of one play-through (s).
    pub fn duration_s(&self) -> f64 {
        self.duration_s
    }

    /// Whether the motion plays again from its start after its last segment.
    pub fn repeats(&self) -> bool {
        self.repeat
    }

    /// Pose and velocities at `t_s` seconds from the start.
    pub fn state_at(&self, t_s: f64) -> MotionState {
        let rest = |pose: &Pose| MotionState {
            position: pose.position,
            orientation: pose.orientation,
            linear_velocity: Vector3::zeros(),
            angular_velocity: Vector3::zeros(),
        };
        let Some(last) = self.spans.last() else {
            return rest(&self.start);
        };
        let t_s = if self.repeat {
            t_s % self.duration_s
        } else {
            t_s
        };
        // NaN, t ≤ 0 and, when repeating, an infinite time stay at the start.
        if t_s.is_nan() || t_s <= 0.0 {
            return rest(&self.start);
        }
        if t_s >= self.duration_s {
            return rest(&last.to);
        }
        let i = self.spans.partition_point(|span| span.start_s <= t_s) - 1;
        let span = &self.spans[i];
        let (s, ds_dtau) = minimum_jerk((t_s - span.start_s) / span.duration_s);
        if s == 0.0 {
            return rest(&span.from);
        }
        span.shape.eval(&span.from, s, ds_dtau / span.duration_s)
    }
}

fn finite3(v: &[f64; 3]) -> bool {
    v.iter().all(|x| x.is_finite())
}

fn check_duration(segment: usize, field: &'static str, value: f64) -> Result<(), MotionError> {
    if value > 0.0 && value.is_finite() {
        Ok(())
    } else {
        Err(MotionError::BadDuration {
            segment,
            field,
            value,
        })
    }
}

fn check_finite(segment: usize, field: &'static str, ok: bool) -> Result<(), MotionError> {
    if ok {
        Ok(())
    } else {
        Err(MotionError::SegmentNotFinite { segment, field })
    }
}

fn unit_axis(
    segment: usize,
    field: &'static str,
    v: &[f64; 3],
) -> Result<Unit<Vector3<f64>>, MotionError> {
    check_finite(segment, field, finite3(v))?;
    Unit::try_new(Vector3::from(*v), 1e-12).ok_or(MotionError::ZeroAxis { segment, field })
}

impl TryFrom<MotionConfig> for Motion {
    type Error = MotionError;

    fn try_from(config: MotionConfig) -> Result<Self, MotionError> {
        if !finite3(&config.start_position_m) {
            return Err(MotionError::NotFinite {
                field: "start_position_m",
            });
        }
        if !finite3(&config.start_rotation_rad) {
            return Err(MotionError::NotFinite {
                field: "start_rotation_rad",
            });
        }
        let start = Pose {
            position: Point3::from(config.start_position_m),
            orientation: UnitQuaternion::from_scaled_axis(Vector3::from(config.start_rotation_rad)),
        };
        let mut spans = Vec::new();
        let mut pose = start;
        let mut t = 0.0;
        for (i, segment) in config.segments.iter().enumerate() {
            match segment {
                SegmentConfig::Hold { duration_s } => {
                    check_duration(i, "duration_s", *duration_s)?;
                    push(&mut spans, &mut t, &mut pose, Shape::Hold, *duration_s);
                }
                SegmentConfig::Line { to_m, duration_s } => {
                    check_duration(i, "duration_s", *duration_s)?;
                    check_finite(i, "to_m", finite3(to_m))?;
                    let to = Point3::from(*to_m);
                    push(
                        &mut spans,
                        &mut t,
                        &mut pose,
                        Shape::Line { to },
                        *duration_s,
                    );
                }
                SegmentConfig::Rotate {
                    axis,
                    angle_rad,
                    duration_s,
                } => {
                    check_duration(i, "duration_s", *duration_s)?;
                    check_finite(i, "angle_rad", angle_rad.is_finite())?;
                    let axis = unit_axis(i, "axis", axis)?;
                    push(
                        &mut spans,
                        &mut t,
                        &mut pose,
                        Shape::Rotate {
                            axis,
                            angle: *angle_rad,
                        },
                        *duration_s,
                    );
                }
                SegmentConfig::Circle {
                    centre_m,
                    normal,
                    turns,
                    duration_s,
                } => {
                    check_duration(i, "duration_s", *duration_s)?;
                    check_finite(i, "centre_m", finite3(centre_m))?;
                    check_finite(i, "turns", turns.is_finite())?;
                    let axis = unit_axis(i, "normal", normal)?;
                    push(
                        &mut spans,
                        &mut t,
                        &mut pose,
                        Shape::Circle {
                            centre: Point3::from(*centre_m),
                            axis,
                            angle: turns * std::f64::consts::TAU,
                        },
                        *duration_s,
                    );
                }
                SegmentConfig::Waypoints {
                    points_m,
                    segment_duration_s,
                } => {
                    check_duration(i, "segment_duration_s", *segment_duration_s)?;
                    if points_m.is_empty() {
                        return Err(MotionError::NoWaypoints { segment: i });
                    }
                    check_finite(i, "points_m", points_m.iter().all(finite3))?;
                    for point in points_m {
                        let to = Point3::from(*point);
                        push(
                            &mut spans,
                            &mut t,
                            &mut pose,
                            Shape::Line { to },
                            *segment_duration_s,
                        );
                    }
                }
            }
        }
        if config.repeat {
            let position_m = (pose.position - start.position).norm();
            let rotation_rad = pose.orientation.angle_to(&start.orientation);
            if position_m > CLOSURE_TOLERANCE || rotation_rad > CLOSURE_TOLERANCE {
                return Err(MotionError::RepeatNotClosed {
                    position_m,
                    rotation_rad,
                });
            }
        }
        Ok(Motion {
            start,
            spans,
            duration_s: t,
            repeat: config.repeat,
        })
    }
}
