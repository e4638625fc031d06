//! The memory a build may use, checked before anything large is allocated:
//! a request that cannot fit is refused with the size it would need and
//! what to ask for instead, rather than aborting on a failed allocation.

use anyhow::{bail, Context};
use std::fmt::Display;

/// Bytes a build may allocate, and where that figure came from.
pub struct MemoryBudget {
    bytes: u64,
    /// The budget as an error message states it.
    stated: String,
}

impl MemoryBudget {
    /// `limit_gib` when given, else the memory the kernel reports available.
    pub fn new(limit_gib: Option<f64>) -> anyhow::Result<Self> {
        Ok(match limit_gib {
            Some(limit) => {
                if !(limit.is_finite() && limit > 0.0) {
                    bail!("--memory-limit must be a positive number of GiB, not {limit}");
                }
                let bytes = (limit * GIB) as u64;
                Self {
                    bytes,
                    stated: format!("--memory-limit is {}", gib(bytes)),
                }
            }
            None => {
                let bytes = mem_available()?;
                Self {
                    bytes,
                    stated: format!("this machine has {} available", gib(bytes)),
                }
            }
        })
    }

    /// Whether `bytes` fit.
    pub fn fits(&self, bytes: u64) -> bool {
        bytes <= self.bytes
    }

    /// Refuses `what`, needing `bytes`, when it does not fit, suggesting
    /// what `instead` says.
    pub fn check(
        &self,
        what: impl Display,
        bytes: u64,
        instead: impl FnOnce() -> String,
    ) -> anyhow::Result<()> {
        if !self.fits(bytes) {
            bail!(
                "{what} needs {}; {}; {}",
                gib(bytes),
                self.stated,
                instead()
            );
        }
        Ok(())
    }
}

const GIB: f64 = (1u64 << 30) as f64;

/// `bytes` in GiB, to one decimal.
fn gib(bytes: u64) -> String {
    format!("{:.1} GiB", bytes as f64 / GIB)
}

/// `MemAvailable` of /proc/meminfo, in bytes.
fn mem_available() -> anyhow::Result<u64> {
    const FILE: &str = "/proc/meminfo";
    let text = std::fs::read_to_string(FILE).with_context(|| format!("{FILE}: cannot read"))?;
    parse_mem_available(&text).with_context(|| format!("{FILE}: no MemAvailable line"))
}

fn parse_mem_available(meminfo: &str) -> Option<u64> {
    let line = meminfo
        .lines()
        .find_map(|l| l.strip_prefix("MemAvailable:"))?;
    let kib: u64 = line.trim().strip_suffix("kB")?.trim().parse().ok()?;
    Some(kib.saturating_mul(1024))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mem_available_is_read_in_bytes() {
        let meminfo = "MemTotal:       24589212 kB\nMemFree:        21000000 kB\nMemAvailable:   23102312 kB\n";
        assert_eq!(parse_mem_available(meminfo), Some(23102312 * 1024));
        assert_eq!(parse_mem_available("MemTotal: 1 kB\n"), None);
    }

    #[test]
    fn a_request_over_the_budget_names_both_sizes_and_the_alternative() {
        let budget = MemoryBudget::new(Some(2.0)).unwrap();
        let smaller = || "ask for less".to_owned();
        assert!(budget.check("a field", 2 << 30, smaller).is_ok());
        let error = budget.check("a field", 3 << 30, smaller).unwrap_err();
        assert_eq!(
            error.to_string(),
            "a field needs 3.0 GiB; --memory-limit is 2.0 GiB; ask for less"
        );
    }
}
