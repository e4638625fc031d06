//! Signs for a block of unsigned distances that survive holes and inconsistent
//! winding.
//!
//! Two neighbouring nodes `h` apart whose unsigned distances add up to more
//! than `h` cannot have the surface between them (distance is 1-Lipschitz), so
//! they lie on the same side. Union–find over such pairs splits a block into
//! components that each lie on one side; the generalised winding number is then
//! read once per component, at its node farthest from the surface, where a
//! small hole or a few flipped triangles move it least. Only nodes hugging the
//! surface form components of their own and need a winding number each.

/// Reusable scratch for [`BlockSigner::sign`].
#[derive(Default)]
pub struct BlockSigner {
    parent: Vec<u32>,
    representative: Vec<u32>,
    inside: Vec<bool>,
}

impl BlockSigner {
    /// Decides for each node of a block whether it is inside.
    ///
    /// `dims` are the block's nodes per axis (x fastest), `unsigned` their
    /// distances to the surface (lower bounds are fine), `spacing` the node
    /// spacing, and `winding(node)` evaluates the generalised winding number at
    /// a node. `inside` receives one flag per node.
    pub fn sign(
        &mut self,
        dims: [usize; 3],
        unsigned: &[f64],
        spacing: f64,
        mut winding: impl FnMut(usize) -> f64,
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
        for node in 0..n {
            let root = self.find(node as u32) as usize;
            let current = self.representative[root];
            if current == u32::MAX || unsigned[node] > unsigned[current as usize] {
                self.representative[root] = node as u32;
            }
        }
        self.inside.clear();
        self.inside.resize(n, false);
        for root in 0..n {
            let representative = self.representative[root];
            if representative != u32::MAX {
                self.inside[root] = winding(representative as usize) > 0.5;
            }
        }
        for (node, flag) in inside.iter_mut().enumerate().take(n) {
            let root = self.find(node as u32) as usize;
            *flag = self.inside[root];
        }
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
            &mut inside,
        );
        assert_eq!(inside, [true, true, true, true, false, false, false, false]);
    }
}
