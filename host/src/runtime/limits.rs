//! Per-call resource limits and the store's memory limiter, which remembers whether the
//! cap was what stopped the plugin so the error can say so.

use std::time::Duration;
use wasmtime::ResourceLimiter;

/// Limits applied to every plugin call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Wall-clock time for one call.
    pub timeout: Duration,
    /// Linear memory, all memories of the component together, in bytes.
    pub memory_bytes: usize,
    /// Tool output kept, in bytes.
    pub output_bytes: usize,
    /// Guest stdout and stderr kept, each, in bytes.
    pub stdio_bytes: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            timeout: Duration::from_secs(30),
            memory_bytes: 256 * 1024 * 1024,
            output_bytes: 50 * 1024,
            stdio_bytes: 64 * 1024,
        }
    }
}

/// Enforces the memory cap across all of a store's memories.
#[derive(Debug)]
pub struct MemoryLimiter {
    max: usize,
    total: usize,
    /// Set when a growth was refused because of the cap.
    pub exceeded: bool,
}

impl MemoryLimiter {
    pub fn new(max: usize) -> Self {
        MemoryLimiter { max, total: 0, exceeded: false }
    }
}

impl ResourceLimiter for MemoryLimiter {
    fn memory_growing(
        &mut self,
        current: usize,
        desired: usize,
        _maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        let grow = desired.saturating_sub(current);
        if self.total.saturating_add(grow) > self.max {
            self.exceeded = true;
            return Err(wasmtime::format_err!("memory limit of {} MiB exceeded", self.max / (1024 * 1024)));
        }
        self.total += grow;
        Ok(true)
    }

    fn table_growing(
        &mut self,
        _current: usize,
        desired: usize,
        _maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        Ok(desired <= 1_000_000)
    }

    fn instances(&self) -> usize {
        100
    }
    fn tables(&self) -> usize {
        100
    }
    fn memories(&self) -> usize {
        100
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn growth_beyond_the_cap_is_refused_and_remembered() {
        let mut l = MemoryLimiter::new(10);
        assert!(l.memory_growing(0, 6, None).unwrap());
        assert!(l.memory_growing(0, 4, None).unwrap(), "a second memory counts toward the same cap");
        assert!(l.memory_growing(4, 5, None).is_err());
        assert!(l.exceeded);
    }
}
