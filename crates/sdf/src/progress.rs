/// Receives the progress of a long build; called from worker threads.
pub trait BuildProgress: Sync {
    /// A new stage begins with `total` units of work.
    fn stage(&self, name: &str, total: u64);
    /// `done` more units of the current stage are finished.
    fn advance(&self, done: u64);
}

/// Progress that goes nowhere.
pub struct NoProgress;

impl BuildProgress for NoProgress {
    fn stage(&self, _name: &str, _total: u64) {}
    fn advance(&self, _done: u64) {}
}
