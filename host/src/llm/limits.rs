//! What known model families allow: the largest output cap each accepts, which ones want
//! `max_completion_tokens`, and reading the real cap out of a server's "too large" refusal.

/// Output-token ceilings by model-name prefix (after any "vendor/" prefix), most specific
/// first. Sources, as published by each vendor on its models pages (2025):
/// - OpenAI platform.openai.com/docs/models: gpt-5* 128,000; gpt-4.1* 32,768; gpt-4o and
///   gpt-4o-mini 16,384; gpt-4-turbo 4,096; gpt-4 8,192; gpt-3.5-turbo 4,096; o1 100,000,
///   o1-mini 65,536; o3, o3-mini, o4-mini 100,000.
/// - Anthropic docs.anthropic.com "Models overview": Opus 4 / 4.1 32,000; Sonnet 4 / 4.5,
///   3.7 Sonnet and Haiku 4.5 64,000; 3.5 Sonnet and 3.5 Haiku 8,192; Claude 3 Opus / Haiku 4,096.
/// - DeepSeek api-docs.deepseek.com "Models & Pricing": deepseek-chat 8,192 (thinking off),
///   deepseek-reasoner 64,000.
/// - Google ai.google.dev Gemini models: gemini-2.5-* 65,536; gemini-2.0-* 8,192.
/// - xAI docs.x.ai models: grok-3 / grok-3-mini 131,072 would exceed any default; not listed.
const OUTPUT_CAPS: &[(&str, u32)] = &[
    ("gpt-5", 128_000),
    ("gpt-4.1", 32_768),
    ("gpt-4o", 16_384),
    ("chatgpt-4o", 16_384),
    ("gpt-4-turbo", 4_096),
    ("gpt-4-", 8_192),
    ("gpt-4", 8_192),
    ("gpt-3.5-turbo", 4_096),
    ("o1-mini", 65_536),
    ("o1", 100_000),
    ("o3", 100_000),
    ("o4-mini", 100_000),
    ("claude-opus-4", 32_000),
    ("claude-4-opus", 32_000),
    ("claude-sonnet-4", 64_000),
    ("claude-4-sonnet", 64_000),
    ("claude-3-7-sonnet", 64_000),
    ("claude-3.7-sonnet", 64_000),
    ("claude-haiku-4", 64_000),
    ("claude-3-5-sonnet", 8_192),
    ("claude-3.5-sonnet", 8_192),
    ("claude-3-5-haiku", 8_192),
    ("claude-3.5-haiku", 8_192),
    ("claude-3-opus", 4_096),
    ("claude-3-haiku", 4_096),
    ("deepseek-chat", 8_192),
    ("deepseek-reasoner", 64_000),
    ("gemini-2.5", 65_536),
    ("gemini-2.0", 8_192),
];

/// The model name without a routing prefix ("openai/gpt-4o" -> "gpt-4o"), lower case.
fn family(model: &str) -> String {
    model.rsplit('/').next().unwrap_or(model).trim().to_ascii_lowercase()
}

/// Whether the model's family name starts with `prefix`.
pub fn family_starts(model: &str, prefix: &str) -> bool {
    family(model).starts_with(prefix)
}

/// The largest output cap the model is known to accept.
pub fn output_cap(model: &str) -> Option<u32> {
    let m = family(model);
    // The first prefix that matches wins: the table is ordered most specific first.
    OUTPUT_CAPS.iter().find(|(p, _)| m.starts_with(p)).map(|(_, n)| *n)
}

/// Name parts of model families that take images (OpenAI's gpt-4o/4.1/5 and o3/o4, Gemini,
/// Grok 4, and the open vision models llama.cpp, vLLM and Ollama serve).
const VISION: &[&str] = &[
    "gpt-4o",
    "gpt-4.1",
    "gpt-4-turbo",
    "gpt-5",
    "o3",
    "o4",
    "claude",
    "gemini",
    "grok-4",
    "vision",
    "llava",
    "-vl",
    "pixtral",
    "llama-4",
    "gemma-3",
    "gemma3",
    "minicpm-v",
    "moondream",
];

/// Whether the model is of a family known to take images.
pub fn sees_images(model: &str) -> bool {
    let m = family(model);
    VISION.iter().any(|v| if v.starts_with('o') { m.starts_with(v) } else { m.contains(v) })
}

/// Reasoning models (o-series, gpt-5) refuse `max_tokens` and want `max_completion_tokens`.
pub fn is_reasoning_family(model: &str) -> bool {
    let m = family(model);
    ["o1", "o3", "o4", "gpt-5"].iter().any(|p| m.starts_with(p))
}

/// The output-cap field name for an OpenAI-compatible server: the configured one, else
/// `max_completion_tokens` for OpenAI's and Azure's own APIs and for reasoning families on
/// any gateway, else `max_tokens` (what llama.cpp, vLLM, Ollama and older gateways read).
pub fn token_param<'a>(configured: Option<&'a str>, base_url: &str, model: &str) -> &'a str {
    if let Some(p) = configured.map(str::trim).filter(|p| !p.is_empty()) {
        return p;
    }
    let host = base_url.split("://").nth(1).unwrap_or(base_url).split('/').next().unwrap_or("");
    let host = host.to_ascii_lowercase();
    let openai = host == "api.openai.com" || host.ends_with(".openai.azure.com");
    if openai || is_reasoning_family(model) { "max_completion_tokens" } else { "max_tokens" }
}

/// A rough size of the request in tokens (four characters each): its text, tool calls and
/// tool schemas; images are left out.
pub fn rough_tokens(req: &super::types::Request) -> u64 {
    use super::types::Message;
    let mut chars = req.system.len();
    for m in &req.messages {
        chars += match m {
            Message::User { text, .. } => text.len(),
            Message::Assistant { text, tool_calls, .. } => {
                text.len() + tool_calls.iter().map(|c| c.name.len() + c.arguments.len()).sum::<usize>()
            }
            Message::Tool { content, .. } => content.len(),
        };
    }
    chars += req.tools.iter().map(|t| t.description.len() + t.parameters.to_string().len()).sum::<usize>();
    (chars / 4) as u64
}

/// Whether a refusal says the output cap asked for is too large, and if so the cap to try
/// instead (`None` inside when the text names none). `asked` is the cap that was sent.
pub fn refused_cap(message: &str, asked: u32) -> Option<Option<u32>> {
    let m = message.to_ascii_lowercase();
    let names_cap =
        ["max_tokens", "max_completion_tokens", "max_output_tokens", "output tokens", "maxoutputtokens"]
            .iter()
            .any(|k| m.contains(k));
    // OpenAI's tokens-per-minute refusal: "Request too large ... Limit 30000, Requested 36000".
    if m.contains("request too large") && m.contains("limit") && m.contains("requested") {
        let limit = number_after(&m, "limit")?;
        let requested = number_after(&m, "requested")?;
        let over = requested.saturating_sub(limit);
        let lowered = u64::from(asked).checked_sub(over).filter(|n| *n >= 256);
        return Some(lowered.and_then(|n| u32::try_from(n).ok()));
    }
    // Anthropic: "input length and `max_tokens` exceed context limit: 198000 + 32000 > 200000".
    if let Some(at) = m.find("exceed context limit:") {
        let rest = &m[at + "exceed context limit:".len()..];
        let input = number_after(rest, "");
        let ctx = number_after(rest, ">");
        if let (Some(input), Some(ctx)) = (input, ctx) {
            return Some(ctx.checked_sub(input).filter(|n| *n > 0).and_then(|n| u32::try_from(n).ok()));
        }
    }
    let too_large =
        ["too large", "at most", "less than or equal", "maximum allowed", "exceeds", "must be <="]
            .iter()
            .any(|k| m.contains(k));
    if !(names_cap && too_large) {
        return None;
    }
    // vLLM: "maximum context length is 8192 tokens and your request has 100 input tokens".
    if let (Some(ctx), Some(input)) =
        (number_after(&m, "maximum context length is"), number_after(&m, "your request has"))
    {
        return Some(ctx.checked_sub(input).filter(|n| *n > 0).and_then(|n| u32::try_from(n).ok()));
    }
    let markers = [
        "supports at most",                // OpenAI
        "at most",                         // OpenAI variants
        "less than or equal to",           // Groq, Mistral
        "must be <=",                      // others
        &format!("{asked} >"),             // Anthropic: "max_tokens: 64000 > 32000, which is the maximum"
        "maximum value for max_tokens is", // Groq variant
        "maximum allowed",                 // "(the maximum allowed is 16384)"
    ];
    let cap = markers.iter().find_map(|k| number_after(&m, k)).filter(|n| *n < u64::from(asked));
    Some(cap.and_then(|n| u32::try_from(n).ok()))
}

/// The first number after `marker` (skipping spaces, quotes, backticks, colons, "is"), with
/// thousands separators.
fn number_after(text: &str, marker: &str) -> Option<u64> {
    let at = text.find(marker)? + marker.len();
    let rest = text[at..].trim_start_matches([' ', '`', ':', '"', '(']);
    let rest = rest.strip_prefix("is ").unwrap_or(rest).trim_start_matches([' ', '`']);
    let digits: String = rest
        .chars()
        .take_while(|c| c.is_ascii_digit() || *c == ',' || *c == '_')
        .filter(char::is_ascii_digit)
        .collect();
    digits.parse().ok().filter(|n| *n > 0)
}
