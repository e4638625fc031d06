//! Each contact's penalty stiffness: the per-point stiffness times the
//! contact's weight, scaled per body pair by the number of contacts it has
//! (eq 77).

use crate::narrow_phase::PairContact;
use crate::penalty::ContactParameters;
use foldhash::HashMap;

/// Each contact's stiffness into `out`: `k` times its weight, scaled per
/// body pair by eq 77 with the pair's contact count (`counts` a buffer).
pub fn contact_stiffnesses(
    contacts: &[PairContact],
    parameters: &ContactParameters,
    counts: &mut HashMap<(usize, usize), f64>,
    out: &mut Vec<f64>,
) {
    out.clear();
    counts.clear();
    for c in contacts {
        let pair = (
            c.shell_body.min(c.field_body),
            c.shell_body.max(c.field_body),
        );
        *counts.entry(pair).or_default() += c.weight as f64;
    }
    out.extend(contacts.iter().map(|c| {
        let pair = (
            c.shell_body.min(c.field_body),
            c.shell_body.max(c.field_body),
        );
        parameters.stiffness * c.weight as f64 * parameters.scaling.factor(counts[&pair])
    }));
}
