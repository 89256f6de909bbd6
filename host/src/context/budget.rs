//! How many tokens a request may take: the window, the part kept for the reply, the budget
//! and targets the compactor aims at, the reply cap that still fits, and what the provider's
//! own counts (usage figures, overflow errors) teach about our estimates.
//!
//! The numbers, for a 16K window: reserve = min(max output, 4096, max(256, window/8)) = 2048;
//! budget = 90% of the window - reserve = 12,697; compaction aims at 70% of that (8,887) so it
//! does not fire again on the next turn. The 10% margins absorb the difference
//! between our tokenizer and the model's; the learned ratio absorbs the rest.

/// The smallest reply cap worth sending; below it the request counts as overflowing.
pub const MIN_REPLY_TOKENS: u64 = 16;
/// The smallest reply cap a request is sent with (enough for an edit call); a prompt that
/// leaves less is compacted first.
pub const USEFUL_REPLY_TOKENS: u64 = 256;
/// The largest part of the window kept for the reply when the budget is computed.
pub const MAX_RESERVE: u64 = 4096;
/// Share of the window the prompt and reserve may fill together.
pub const WINDOW_SHARE: f64 = 0.90;
/// Share of the budget every compaction aims at: well below the trigger (the budget), so the
/// next turns do not trigger it again at once (hysteresis).
pub const PROACTIVE_SHARE: f64 = 0.70;
/// Each reactive round aims below this share of the size the provider refused.
pub const REACTIVE_SHARE: f64 = 0.85;
/// Bounds of the learned provider/estimate ratio.
const RATIO_MIN: f64 = 0.8;
const RATIO_MAX: f64 = 2.0;
/// Estimates below this teach nothing about the ratio (fixed overheads dominate).
const RATIO_MIN_SAMPLE: u64 = 256;

/// The context budget of one session.
#[derive(Debug, Clone, PartialEq)]
pub struct Budget {
    window: Option<u64>,
    max_output: u32,
    /// Provider tokens per estimated token, learned from usage figures and errors.
    ratio: f64,
}

impl Budget {
    /// `window`: the context window, if known; `max_output`: the reply cap the user set.
    pub fn new(window: Option<u64>, max_output: u32) -> Self {
        Budget { window, max_output, ratio: 1.0 }
    }

    pub fn window(&self) -> Option<u64> {
        self.window
    }

    pub fn max_output(&self) -> u32 {
        self.max_output
    }

    /// Provider tokens per estimated token (1.0 until the provider has told us otherwise).
    pub fn ratio(&self) -> f64 {
        self.ratio
    }

    /// The part of the window kept for the reply.
    pub fn reserve(&self) -> Option<u64> {
        let w = self.window?;
        Some(u64::from(self.max_output).min(MAX_RESERVE).min((w / 8).max(256)))
    }

    /// The most the prompt may cost, in provider tokens.
    pub fn prompt_budget(&self) -> Option<u64> {
        let w = self.window?;
        Some(((w as f64 * WINDOW_SHARE) as u64).saturating_sub(self.reserve()?))
    }

    /// Provider tokens to estimated tokens.
    fn to_estimate(&self, provider: u64) -> u64 {
        (provider as f64 / self.ratio) as u64
    }

    /// Estimated tokens to provider tokens (rounded up).
    pub fn to_provider(&self, estimate: u64) -> u64 {
        (estimate as f64 * self.ratio).ceil() as u64
    }

    /// The budget in estimated tokens.
    pub fn budget_estimate(&self) -> Option<u64> {
        self.prompt_budget().map(|b| self.to_estimate(b))
    }

    /// Whether a prompt of `estimate` tokens is over the budget (never, with no known window).
    pub fn over(&self, estimate: u64) -> bool {
        self.budget_estimate().is_some_and(|b| estimate > b)
    }

    /// What the proactive pass compacts to, in estimated tokens.
    pub fn proactive_target(&self) -> Option<u64> {
        self.budget_estimate().map(|b| (b as f64 * PROACTIVE_SHARE) as u64)
    }

    /// What a reactive round compacts to after the provider refused `refused` estimated
    /// tokens: below 85% of it, and never above the budget.
    pub fn reactive_target(&self, refused: u64) -> u64 {
        let shrunk = (refused as f64 * REACTIVE_SHARE) as u64;
        self.budget_estimate().map_or(shrunk, |b| shrunk.min(b))
    }

    /// The reply cap for a prompt of `estimate` tokens: the user's cap, lowered to what is
    /// left of 90% of the window, and to half of that when half is more than the reserve.
    /// None when less than a useful reply is left
    /// ([`USEFUL_REPLY_TOKENS`], or the user's cap when smaller).
    pub fn reply_cap(&self, estimate: u64) -> Option<u32> {
        let Some(w) = self.window else { return Some(self.max_output) };
        // The share of the window outside the 90% is left free: a server that counts more
        // than we estimate still finds the prompt and the cap within its window.
        let usable = (w as f64 * WINDOW_SHARE) as u64;
        let useful = USEFUL_REPLY_TOKENS.min(u64::from(self.max_output)).max(MIN_REPLY_TOKENS);
        let left = usable.checked_sub(self.to_provider(estimate)).filter(|l| *l >= useful)?;
        // Half of what is left, or the reserve when more: a larger cap would only make a
        // server that counts the prompt higher than we do refuse the request.
        let reserve = self.reserve().unwrap_or(left);
        let cap = left.min((left / 2).max(reserve)).min(u64::from(self.max_output));
        Some(u32::try_from(cap).unwrap_or(self.max_output))
    }

    /// The reply cap while recovering from an overflow: at most the reserve, so the prompt's
    /// own shrinking is not eaten by a larger reply allowance.
    pub fn recovery_cap(&self, estimate: u64) -> Option<u32> {
        let cap = self.reply_cap(estimate)?;
        let reserve = self.reserve().unwrap_or(u64::from(self.max_output) / 4).max(MIN_REPLY_TOKENS);
        Some(u32::try_from(u64::from(cap).min(reserve)).unwrap_or(cap))
    }

    /// Learns from the provider's count of a prompt we estimated at `estimate` tokens.
    pub fn observe(&mut self, estimate: u64, reported: u64) {
        if estimate >= RATIO_MIN_SAMPLE && reported > 0 {
            self.ratio = (reported as f64 / estimate as f64).clamp(RATIO_MIN, RATIO_MAX);
        }
    }

    /// Learns the real window from an overflow error that names it.
    pub fn learn_window(&mut self, limit: u64) {
        if limit >= 256 {
            self.window = Some(self.window.map_or(limit, |w| w.min(limit)));
        }
    }
}

/// The prompt size a provider names in its overflow error, if it names one:
/// "your messages resulted in 9000 tokens" (OpenAI), "prompt is too long: 9000 tokens"
/// (Anthropic), "(8000 in the messages" (vLLM), "request (9000 tokens) exceeds" (llama.cpp).
pub fn prompt_tokens_in_error(message: &str) -> Option<u64> {
    const MARKERS: [&str; 4] = ["resulted in ", "prompt is too long: ", "tokens (", "request ("];
    let lower = message.to_ascii_lowercase();
    for m in MARKERS {
        let Some(at) = lower.find(m) else { continue };
        let rest = &lower[at + m.len()..];
        let raw_len = rest.find(|c: char| !c.is_ascii_digit() && c != ',').unwrap_or(rest.len());
        let digits: String = rest[..raw_len].chars().filter(char::is_ascii_digit).collect();
        let after = &rest[raw_len..];
        let names_tokens = m == "tokens (" && after.trim_start().starts_with("in the messages")
            || m != "tokens (" && after.trim_start_matches(',').trim_start().starts_with("token");
        if names_tokens && let Ok(n) = digits.parse::<u64>() {
            return Some(n);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn budget_numbers_for_a_16k_window() {
        let b = Budget::new(Some(16_384), 32_768);
        assert_eq!(b.reserve(), Some(2048));
        assert_eq!(b.prompt_budget(), Some(14_745 - 2048));
        assert_eq!(b.proactive_target(), Some((12_697.0 * 0.7) as u64));
        assert!(b.over(12_698) && !b.over(12_697));
        assert_eq!(b.reply_cap(10_000), Some(2_372), "half of what is left in 90% of the window");
        assert_eq!(b.reply_cap(12_000), Some(2_048), "never below the reserve while it fits");
        assert_eq!(b.reply_cap(13_000), Some(1_745));
        assert_eq!(b.reply_cap(14_745 - 256), Some(256));
        assert_eq!(b.reply_cap(14_745 - 255), None, "less than a useful reply left");
        assert_eq!(b.recovery_cap(10_000), Some(2048));
        assert_eq!(b.reactive_target(20_000), 12_697);
        assert_eq!(b.reactive_target(10_000), 8_500);
    }

    #[test]
    fn small_caps_and_unknown_windows() {
        let b = Budget::new(Some(4096), 100);
        assert_eq!(b.reserve(), Some(100));
        assert_eq!(b.reply_cap(1000), Some(100));
        assert_eq!(b.reply_cap(3586), Some(100), "a cap below the useful size is the floor itself");
        assert_eq!(b.reply_cap(3600), None);
        let u = Budget::new(None, 32_768);
        assert!(!u.over(1_000_000));
        assert_eq!(u.reply_cap(1_000_000), Some(32_768));
        assert_eq!(u.proactive_target(), None);
        assert_eq!(u.reactive_target(1000), 850);
    }

    #[test]
    fn the_ratio_and_window_are_learned() {
        let mut b = Budget::new(Some(16_384), 32_768);
        b.observe(100, 500);
        assert_eq!(b.ratio(), 1.0, "tiny samples teach nothing");
        b.observe(10_000, 12_000);
        assert!((b.ratio() - 1.2).abs() < 1e-9);
        assert!(b.over(12_697 / 12 * 10 + 10));
        b.observe(10_000, 100_000);
        assert_eq!(b.ratio(), 2.0, "bounded");
        b.learn_window(8192);
        assert_eq!(b.window(), Some(8192));
        b.learn_window(32_000);
        assert_eq!(b.window(), Some(8192), "never raised by a larger claim");
        let mut u = Budget::new(None, 1000);
        u.learn_window(8192);
        assert_eq!(u.window(), Some(8192));
    }

    #[test]
    fn prompt_sizes_are_read_from_overflow_errors() {
        let openai = "This model's maximum context length is 8192 tokens. However, your messages resulted in \
                      9,000 tokens. Please reduce the length of the messages.";
        assert_eq!(prompt_tokens_in_error(openai), Some(9000));
        assert_eq!(
            prompt_tokens_in_error("prompt is too long: 210000 tokens > 200000 maximum"),
            Some(210_000)
        );
        let vllm = "This model's maximum context length is 4096 tokens. However, you requested 5000 tokens \
                    (4000 in the messages, 1000 in the completion).";
        assert_eq!(prompt_tokens_in_error(vllm), Some(4000));
        let llama = "the request (9000 tokens) exceeds the available context size (8192 tokens)";
        assert_eq!(prompt_tokens_in_error(llama), Some(9000));
        assert_eq!(prompt_tokens_in_error("context length exceeded"), None);
    }
}
