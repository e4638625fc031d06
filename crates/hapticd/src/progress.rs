//! Build progress on an indicatif bar: stage name, bar, count and ETA.

use haptic_sdf::BuildProgress;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// A progress bar on stderr, hidden when stderr is not a terminal, that also
/// times each stage.
pub struct Progress {
    bar: ProgressBar,
    /// Each stage's name and start.
    stages: Mutex<Vec<(String, Instant)>>,
}

impl Progress {
    pub fn new() -> Self {
        // indicatif draws nothing to a stderr that is not a terminal.
        let bar = ProgressBar::with_draw_target(Some(0), ProgressDrawTarget::stderr());
        bar.set_style(
            ProgressStyle::with_template(
                "{msg:>14} [{bar:40.cyan/blue}] {pos:>7}/{len:7} {elapsed:>4} ETA {eta}",
            )
            .expect("the template is valid")
            .progress_chars("=> "),
        );
        if !bar.is_hidden() {
            bar.enable_steady_tick(Duration::from_millis(200));
        }
        Self {
            bar,
            stages: Mutex::new(Vec::new()),
        }
    }

    /// Clears the bar and returns each stage's name and duration, in order.
    pub fn finish(self) -> Vec<(String, Duration)> {
        self.bar.finish_and_clear();
        let end = Instant::now();
        let stages = self.stages.into_inner().unwrap_or_else(|e| e.into_inner());
        let ends = stages.iter().skip(1).map(|(_, start)| *start).chain([end]);
        stages
            .iter()
            .zip(ends)
            .map(|((name, start), end)| (name.clone(), end - *start))
            .collect()
    }
}

impl BuildProgress for Progress {
    fn stage(&self, name: &str, total: u64) {
        self.stages
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push((name.to_owned(), Instant::now()));
        self.bar.set_message(name.to_owned());
        self.bar.set_length(total);
        self.bar.set_position(0);
        self.bar.reset_eta();
    }

    fn advance(&self, done: u64) {
        self.bar.inc(done);
    }
}
