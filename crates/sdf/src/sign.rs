//! Signs for a block of unsigned distances that survive holes and inconsistent
//! winding.
//!
//! Two neighbouring nodes `h` apart whose unsigned distances add up to more
//! than `h` cannot have the surface between them (distance is 1-Lipschitz), so
//! they lie on the same side. Union–find over such pairs splits a block into
//! components that each lie on one side; the generalised winding number is then
//! read once per component, at its node farthest from the surface, where a
//! small hole or a few flipped triangles move it least.
//!
//! Nodes hugging the surface form components of their own. Such a node takes
//! its side from its farthest neighbour in a larger component: the two are on
//! the same side exactly when they lie on the same side of the plane of the
//! node's nearest triangle. The comparison does not depend on which way that
//! triangle is wound, so flipped triangles cannot mislead it. Only a node
//! with no such neighbour, or lying in that plane, needs a winding number.

/// Reusable scratch for [`BlockSigner::sign`].
#[derive(Default)]
pub struct BlockSigner {
    parent: Vec<u32>,
    representative: Vec<u32>,
    size: Vec<u32>,
    inside: Vec<bool>,
}

impl BlockSigner {
    /// Decides for each node of a block whether it is inside.
    ///
    /// `dims` are the block's nodes per axis (x fastest), `unsigned` their
    /// distances to the surface (lower bounds are fine), `spacing` the node
    /// spacing, `winding(node)` evaluates the generalised winding number at a
    /// node, and `same_side(node, other)` tells whether `other` lies on the
    /// same side of the surface as `node`, or `None` when the local geometry
    /// cannot tell. `inside` receives one flag per node.
    pub fn sign(
        &mut self,
        dims: [usize; 3],
        unsigned: &[f64],
        spacing: f64,
        mut winding: impl FnMut(usize) -> f64,
        mut same_side: impl FnMut(usize, usize) -> Option<bool>,
        inside: &mut [bool],
    ) {
        let n = dims[0] * dims[1] * dims[2];
        debug_assert_eq!(unsigned.len(), n);
        self.parent.clear();
        self.parent.extend(0..n as u32);
        let threshold = spacing * (1.0 + 1e-9);
        let strides = [1, dims[0], dims[0] * dims[1]];
        for k in 0..dims[2] {
            for j in 0..dims[1] {
                for i in 0..dims[0] {
                    let node = i + dims[0] * (j + dims[1] * k);
                    let coordinate = [i, j, k];
                    for axis in 0..3 {
                        if coordinate[axis] + 1 < dims[axis] {
                            let neighbour = node + strides[axis];
                            if unsigned[node] + unsigned[neighbour] > threshold {
                                self.union(node as u32, neighbour as u32);
                            }
                        }
                    }
                }
            }
        }
        // Representative of each root: the member farthest from the surface.
        self.representative.clear();
        self.representative.resize(n, u32::MAX);
        self.size.clear();
        self.size.resize(n, 0);
        for node in 0..n {
            let root = self.find(node as u32) as usize;
            self.size[root] += 1;
            let current = self.representative[root];
            if current == u32::MAX || unsigned[node] > unsigned[current as usize] {
                self.representative[root] = node as u32;
            }
        }
        self.inside.clear();
        self.inside.resize(n, false);
        for root in 0..n {
            let representative = self.representative[root];
            if self.size[root] > 1 {
                self.inside[root] = winding(representative as usize) > 0.5;
            }
        }
        for (node, flag) in inside.iter_mut().enumerate().take(n) {
            let root = self.find(node as u32) as usize;
            if self.size[root] == 1 {
                let from_neighbour = self
                    .farthest_grouped_neighbour(node, dims, strides, unsigned)
                    .and_then(|neighbour| {
                        let neighbour_root = self.find(neighbour as u32) as usize;
                        same_side(node, neighbour).map(|same| self.inside[neighbour_root] == same)
                    });
                self.inside[root] = from_neighbour.unwrap_or_else(|| winding(node) > 0.5);
            }
            *flag = self.inside[root];
        }
    }

    /// The neighbour of `node` farthest from the surface among those in
    /// components of more than one node.
    fn farthest_grouped_neighbour(
        &mut self,
        node: usize,
        dims: [usize; 3],
        strides: [usize; 3],
        unsigned: &[f64],
    ) -> Option<usize> {
        let coordinate = [
            node % dims[0],
            (node / dims[0]) % dims[1],
            node / (dims[0] * dims[1]),
        ];
        let mut best: Option<usize> = None;
        for axis in 0..3 {
            let below = (coordinate[axis] > 0).then(|| node - strides[axis]);
            let above = (coordinate[axis] + 1 < dims[axis]).then(|| node + strides[axis]);
            for neighbour in [below, above].into_iter().flatten() {
                let root = self.find(neighbour as u32) as usize;
                if self.size[root] > 1 && best.is_none_or(|b| unsigned[neighbour] > unsigned[b]) {
                    best = Some(neighbour);
                }
            }
        }
        best
    }

    fn find(&mut self, mut x: u32) -> u32 {
        while self.parent[x as usize] != x {
            let grandparent = self.parent[self.parent[x as usize] as usize];
            self.parent[x as usize] = grandparent;
            x = grandparent;
        }
        x
    }

    fn union(&mut self, a: u32, b: u32) {
        let (ra, rb) = (self.find(a), self.find(b));
        if ra != rb {
            let (low, high) = (ra.min(rb), ra.max(rb));
            self.parent[high as usize] = low;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_node_hugging_the_surface_takes_its_side_from_the_plane_test() {
        // Surface at x = 4.02: node 4 hugs it and, with these distance lower
        // bounds, joins neither neighbour. The plane test puts it with node 3.
        let dims = [8, 1, 1];
        let unsigned = [3.0, 2.0, 1.0, 0.9, 0.02, 0.9, 2.0, 3.0];
        let mut windings = Vec::new();
        let mut inside = vec![false; 8];
        BlockSigner::default().sign(
            dims,
            &unsigned,
            1.0,
            |node| {
                windings.push(node);
                if node < 4 {
                    1.0
                } else {
                    0.0
                }
            },
            |node, other| Some((node as f64 - 4.02).signum() == (other as f64 - 4.02).signum()),
            &mut inside,
        );
        assert_eq!(inside, [true, true, true, true, true, false, false, false]);
        assert_eq!(
            windings.len(),
            2,
            "only the two grouped components: {windings:?}"
        );
    }

    #[test]
    fn one_winding_evaluation_per_side_of_a_plane() {
        // Nodes on a 1-D line of 10 crossing a surface at x = 4.5.
        let dims = [10, 1, 1];
        let unsigned: Vec<f64> = (0..10).map(|i| (i as f64 - 4.5).abs()).collect();
        let mut evaluations = Vec::new();
        let mut inside = vec![false; 10];
        BlockSigner::default().sign(
            dims,
            &unsigned,
            1.0,
            |node| {
                evaluations.push(node);
                if node < 5 {
                    1.0
                } else {
                    0.0
                }
            },
            |_, _| None,
            &mut inside,
        );
        assert_eq!(evaluations.len(), 2);
        assert_eq!(
            inside,
            [true, true, true, true, true, false, false, false, false, false]
        );
    }

    #[test]
    fn a_local_winding_error_near_the_surface_does_not_flip_a_component() {
        // The winding number is wrong at the two nodes next to the surface
        // (as near flipped triangles), right at the far nodes.
        let dims = [8, 1, 1];
        let unsigned: Vec<f64> = (0..8).map(|i| (i as f64 - 3.5).abs()).collect();
        let mut inside = vec![false; 8];
        BlockSigner::default().sign(
            dims,
            &unsigned,
            1.0,
            |node| match node {
                3 => 0.2,
                4 => 0.8,
                n if n < 4 => 1.0,
                _ => 0.0,
            },
            |_, _| None,
            &mut inside,
        );
        assert_eq!(inside, [true, true, true, true, false, false, false, false]);
    }
}
