//! Contact islands (Xu, Zhao & Barbič §4): the connected components of the
//! graph whose nodes are the dynamic bodies, joined when they touch or share
//! a joint. Static bodies do not join islands; the blocks of eq 15 of two
//! islands are decoupled, so each is solved alone.

/// Union–find over `n` bodies.
pub struct Islands {
    parent: Vec<usize>,
}

impl Islands {
    pub fn new(n: usize) -> Self {
        Self {
            parent: (0..n).collect(),
        }
    }

    fn root(&mut self, mut i: usize) -> usize {
        while self.parent[i] != i {
            self.parent[i] = self.parent[self.parent[i]];
            i = self.parent[i];
        }
        i
    }

    /// Joins the islands of `a` and `b`.
    pub fn join(&mut self, a: usize, b: usize) {
        let (ra, rb) = (self.root(a), self.root(b));
        if ra != rb {
            self.parent[ra.max(rb)] = ra.min(rb);
        }
    }

    /// The islands of the bodies `member(i)` admits, each sorted, in the
    /// order of their smallest body.
    pub fn components(&mut self, member: impl Fn(usize) -> bool) -> Vec<Vec<usize>> {
        let n = self.parent.len();
        let mut by_root: Vec<Vec<usize>> = vec![Vec::new(); n];
        for i in 0..n {
            if member(i) {
                let r = self.root(i);
                by_root[r].push(i);
            }
        }
        by_root.into_iter().filter(|c| !c.is_empty()).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chains_join_and_strangers_stay_apart() {
        let mut islands = Islands::new(6);
        islands.join(0, 3);
        islands.join(3, 5);
        islands.join(1, 2);
        let components = islands.components(|i| i != 4);
        assert_eq!(components, vec![vec![0, 3, 5], vec![1, 2]]);
    }
}
