//! Contact islands (Xu, Zhao & Barbič §4): the connected components of the
//! graph whose nodes are the dynamic bodies, joined when they touch or share
//! a joint. Static bodies do not join islands; the blocks of eq 15 of two
//! islands are decoupled, so each is solved alone.

/// Union–find over the bodies, and the islands it found, in buffers kept
/// from step to step.
#[derive(Default)]
pub struct Islands {
    parent: Vec<usize>,
    /// The islands' bodies, island after island.
    members: Vec<usize>,
    /// Where each island starts in `members`, then where the last ends.
    starts: Vec<usize>,
    /// Per root: its island's size, then where it goes in `members`.
    slots: Vec<usize>,
}

impl Islands {
    /// `n` bodies, each alone.
    pub fn reset(&mut self, n: usize) {
        self.parent.clear();
        self.parent.extend(0..n);
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

    /// Gathers the islands of the bodies `member(i)` admits, each sorted,
    /// in the order of their smallest body (each island's root).
    pub fn gather(&mut self, member: impl Fn(usize) -> bool) {
        let n = self.parent.len();
        self.slots.clear();
        self.slots.resize(n, 0);
        for i in (0..n).filter(|&i| member(i)) {
            let r = self.root(i);
            self.slots[r] += 1;
        }
        self.starts.clear();
        let mut total = 0;
        for slot in self.slots.iter_mut().filter(|size| **size > 0) {
            self.starts.push(total);
            (total, *slot) = (total + *slot, total);
        }
        self.starts.push(total);
        self.members.clear();
        self.members.resize(total, 0);
        for i in (0..n).filter(|&i| member(i)) {
            let r = self.root(i);
            self.members[self.slots[r]] = i;
            self.slots[r] += 1;
        }
    }

    /// Islands gathered.
    pub fn len(&self) -> usize {
        self.starts.len().saturating_sub(1)
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Island `k`'s bodies, sorted.
    pub fn get(&self, k: usize) -> &[usize] {
        &self.members[self.starts[k]..self.starts[k + 1]]
    }

    pub fn iter(&self) -> impl Iterator<Item = &[usize]> {
        (0..self.len()).map(|k| self.get(k))
    }

    /// Bodies in the largest island, 0 without any.
    pub fn largest(&self) -> usize {
        self.iter().map(<[usize]>::len).max().unwrap_or(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chains_join_and_strangers_stay_apart() {
        let mut islands = Islands::default();
        islands.reset(6);
        islands.join(0, 3);
        islands.join(3, 5);
        islands.join(1, 2);
        islands.gather(|i| i != 4);
        let components: Vec<&[usize]> = islands.iter().collect();
        assert_eq!(components, vec![&[0, 3, 5][..], &[1, 2][..]]);
    }
}
