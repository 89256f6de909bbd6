//! When and how long to wait before sending a failed model call again: which statuses are
//! worth a retry, jittered exponential backoff, and the server's own Retry-After.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// How often and how patiently a call is retried.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetryPolicy {
    /// Attempts in all, the first included (0 counts as 1).
    pub attempts: u32,
    /// The first wait; each later wait doubles, up to `max`.
    pub base: Duration,
    pub max: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        RetryPolicy { attempts: 5, base: Duration::from_secs(1), max: Duration::from_secs(30) }
    }
}

/// The longest wait a server's Retry-After can impose.
pub const MAX_RETRY_AFTER: Duration = Duration::from_secs(60);

impl RetryPolicy {
    /// The wait after failed attempt `n` (1 for the first): min(base * 2^(n-1), max), times a
    /// random factor in 0.75..1.25.
    pub fn backoff(&self, n: u32) -> Duration {
        let exp = self.base.saturating_mul(1u32 << n.saturating_sub(1).min(20));
        exp.min(self.max).mul_f64(0.75 + 0.5 * unit_random())
    }
}

/// Statuses that say "try again later": timeouts, conflicts, too early, rate limits, 5xx.
pub fn retryable_status(status: u16) -> bool {
    matches!(status, 408 | 409 | 425 | 429) || (500..600).contains(&status)
}

/// Reads a Retry-After value: whole or fractional seconds, or an HTTP-date; capped at
/// [`MAX_RETRY_AFTER`]. A date in the past means "now".
pub fn parse_retry_after(value: &str, now: SystemTime) -> Option<Duration> {
    let v = value.trim();
    if let Ok(secs) = v.parse::<f64>() {
        if !secs.is_finite() || secs < 0.0 {
            return None;
        }
        return Some(Duration::from_secs_f64(secs.min(MAX_RETRY_AFTER.as_secs_f64())));
    }
    let at = jiff::fmt::rfc2822::DateTimeParser::new().parse_timestamp(v).ok()?;
    let at = SystemTime::from(at);
    Some(at.duration_since(now).unwrap_or(Duration::ZERO).min(MAX_RETRY_AFTER))
}

/// A number in 0..1 from a xorshift generator seeded by the clock; only for jitter.
fn unit_random() -> f64 {
    static STATE: AtomicU64 = AtomicU64::new(0);
    let mut x = STATE.load(Ordering::Relaxed);
    if x == 0 {
        let nanos = SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_nanos() as u64).unwrap_or(1);
        x = nanos | 1;
    }
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    STATE.store(x, Ordering::Relaxed);
    (x >> 11) as f64 / (1u64 << 53) as f64
}
