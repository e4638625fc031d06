//! Why a deformable body cannot be built.

use thiserror::Error;

/// Why a deformable body cannot be built.
#[derive(Debug, Error, PartialEq)]
pub enum DeformableError {
    #[error("deformable `{body}`: node {node} has mass {mass} kg; every node needs a positive, finite mass")]
    Mass {
        body: String,
        node: usize,
        mass: f64,
    },
    #[error("deformable `{body}`: node {node} is at a non-finite position")]
    Position { body: String, node: usize },
    #[error(
        "deformable `{body}`: {element} refers to node {index}, but the body has {nodes} nodes"
    )]
    Index {
        body: String,
        element: String,
        index: u32,
        nodes: usize,
    },
    #[error("deformable `{body}`: {element} has zero length or area")]
    Degenerate { body: String, element: String },
    #[error("deformable `{body}`: {field} = {value} is out of range ({expected})")]
    Parameter {
        body: String,
        field: &'static str,
        value: f64,
        expected: &'static str,
    },
}
