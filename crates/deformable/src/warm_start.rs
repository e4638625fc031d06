//! Warm starting (§4.6): each row starts from the impulse its source had at
//! the end of the last substep.
//!
//! A step makes its rows in a fixed order of their sources (each body's
//! inextensibility and bending rows, the anchors, the joints, the rigid
//! contacts by body, rigid body and sample, the surface contacts), so the
//! last substep's rows and this one's are matched by walking both lists in
//! [`RowSource::order`] at once: a contact that appeared or went away costs
//! one step of the walk, not a rebuilt table. Where either list is out of
//! that order (surface contacts come in the order their tree finds them),
//! the rest of the rows are looked up in a map built from the last
//! substep's rows.

use crate::constraints::{RowSource, Rows};
use std::collections::HashMap;

/// A row source as a key ordered as a step makes its rows; one key per
/// source.
pub type OrderKey = (u8, u32, u32, u32, u32, u8);

impl RowSource {
    /// The key [`WarmStart`] walks the rows by (see the module's
    /// documentation).
    pub fn order(&self) -> OrderKey {
        match *self {
            RowSource::Inextensibility { body, edge } => (0, body, 0, edge, 0, 0),
            RowSource::Bending { body, hinge } => (0, body, 1, hinge, 0, 0),
            RowSource::Anchor { anchor, axis } => (1, anchor, 0, 0, 0, axis),
            RowSource::Joint { row } => (2, row, 0, 0, 0, 0),
            RowSource::Contact {
                body,
                sample,
                other,
                axis,
            } => (3, body, other, sample, 0, axis),
            RowSource::SurfaceContact {
                body,
                sample,
                other,
                face,
                axis,
            } => (4, body, sample, other, face, axis),
        }
    }
}

/// The last substep's impulses by row source.
#[derive(Debug, Default)]
pub struct WarmStart {
    /// Keys and impulses of the last substep's rows, as they were made.
    previous: Vec<(OrderKey, f64)>,
    /// Whether `previous` is strictly increasing in its keys.
    previous_ordered: bool,
    /// `previous` by key, built at the first row met out of order.
    map: HashMap<OrderKey, f64, foldhash::fast::FixedState>,
}

impl WarmStart {
    /// Sets each row's impulse to `factor` × its source's last impulse,
    /// clamped to the row's bounds (a friction row's to its disc later, by
    /// the sweep); friction rows are left at zero unless `friction`. A row
    /// whose source made no row last substep starts at zero.
    pub fn start(&mut self, rows: &mut Rows, factor: f64, friction: bool) {
        let mut ordered = self.previous_ordered;
        let mut mapped = false;
        let mut cursor = 0;
        let mut last: Option<OrderKey> = None;
        for row in &mut rows.rows {
            let key = row.source.order();
            ordered &= last.is_none_or(|l| l < key);
            last = Some(key);
            let is_friction = row.source.contact_axis().is_some_and(|axis| axis > 0);
            if is_friction && !friction {
                continue;
            }
            let previous = if ordered {
                while cursor < self.previous.len() && self.previous[cursor].0 < key {
                    cursor += 1;
                }
                self.previous
                    .get(cursor)
                    .filter(|(k, _)| *k == key)
                    .map(|&(_, impulse)| impulse)
            } else {
                if !mapped {
                    self.map.clear();
                    self.map.extend(self.previous.iter().copied());
                    mapped = true;
                }
                self.map.get(&key).copied()
            };
            if let Some(previous) = previous {
                let start = factor * previous;
                row.impulse = if is_friction {
                    start
                } else {
                    start.clamp(row.lower, row.upper)
                };
            }
        }
    }

    /// Keeps the rows' impulses for the next substep.
    pub fn remember(&mut self, rows: &Rows) {
        self.previous.clear();
        self.previous.extend(
            rows.rows
                .iter()
                .map(|row| (row.source.order(), row.impulse)),
        );
        self.previous_ordered = self.previous.windows(2).all(|w| w[0].0 < w[1].0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::constraints::{NodeTerm, RowKind};
    use nalgebra::Vector3;

    fn contact(sample: u32, axis: u8) -> RowSource {
        RowSource::Contact {
            body: 0,
            sample,
            other: 1,
            axis,
        }
    }

    fn rows_of(sources: &[RowSource]) -> Rows {
        let mut rows = Rows::default();
        let terms = [NodeTerm {
            node: 0,
            jacobian: Vector3::x(),
        }];
        for &source in sources {
            rows.push(
                &terms,
                &[],
                &[1.0],
                0.0,
                0.0,
                f64::INFINITY,
                RowKind::Bounded,
                source,
            );
        }
        rows
    }

    /// Sources that came and went between substeps, in order and out of it:
    /// each row finds its own last impulse and only its own.
    #[test]
    fn every_row_finds_its_own_impulse_whether_or_not_the_rows_are_in_order() {
        let edge = |edge| RowSource::Inextensibility { body: 0, edge };
        let before = [
            edge(0),
            edge(1),
            contact(3, 0),
            contact(5, 0),
            contact(9, 0),
        ];
        let impulse = |s: &RowSource| match *s {
            RowSource::Inextensibility { edge, .. } => 1.0 + edge as f64,
            RowSource::Contact { sample, .. } => 10.0 + sample as f64,
            _ => unreachable!(),
        };
        let mut warm = WarmStart::default();
        let mut last = rows_of(&before);
        for row in &mut last.rows {
            row.impulse = impulse(&row.source);
        }
        warm.remember(&last);
        let after_in_order = [
            edge(0),
            edge(1),
            contact(2, 0),
            contact(5, 0),
            contact(9, 0),
        ];
        let mut after_shuffled = after_in_order;
        after_shuffled.swap(2, 4);
        for after in [after_in_order, after_shuffled] {
            let mut rows = rows_of(&after);
            warm.start(&mut rows, 0.5, true);
            for row in &rows.rows {
                let expected = if before.contains(&row.source) {
                    0.5 * impulse(&row.source)
                } else {
                    0.0
                };
                assert_eq!(row.impulse, expected, "{:?}", row.source);
            }
        }
    }
}
