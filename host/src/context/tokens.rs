//! Token counts: exact ones from the cl100k BPE tokenizer embedded in the binary, and a fast
//! calibrated estimate for short host-written texts and for the moment before it has loaded.
//!
//! Why cl100k: the providers corral talks to mostly run Llama-, Qwen- or Mistral-family models
//! locally, or OpenAI and Anthropic remotely. None publishes a tokenizer we could embed for
//! all of them; cl100k (100k tokens) sits between the small vocabularies of older local models
//! and o200k, so its counts are close for English and code and a little high for other
//! languages, which errs on the safe side. The remaining gap is learned at run time from the
//! provider's own usage figures (see [`super::budget::Budget::observe`]).
//!
//! Cost: loading the vocabulary takes ~150 ms, so it happens on a background thread
//! ([`warm_up`]) and nothing waits for it unless a count matters ([`exact`]); counting is about
//! 3 MB/s, so each message is counted once, when it enters the transcript, and cached there.

use crate::llm::{Message, ToolDef};
use std::sync::OnceLock;
use tiktoken_rs::CoreBPE;

/// Tokens a message costs beyond its text (role markers, separators).
pub const PER_MESSAGE: u32 = 4;
/// Tokens one tool call costs beyond its name and arguments (id, type, JSON framing).
pub const PER_CALL: u32 = 8;

/// A token count and whether the tokenizer made it (else it is the fast estimate).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Count {
    pub n: u32,
    pub exact: bool,
}

impl Count {
    pub fn and(self, other: Count) -> Count {
        Count { n: self.n.saturating_add(other.n), exact: self.exact && other.exact }
    }

    pub fn plus(self, n: u32) -> Count {
        Count { n: self.n.saturating_add(n), exact: self.exact }
    }
}

static BPE: OnceLock<Option<CoreBPE>> = OnceLock::new();

fn load() -> Option<CoreBPE> {
    tiktoken_rs::cl100k_base().ok()
}

/// Starts loading the tokenizer on a background thread, so the first exact count is ready
/// by the time it matters. Calling it again does nothing.
pub fn warm_up() {
    if BPE.get().is_none() {
        let _ = std::thread::Builder::new().name("tokenizer".into()).spawn(|| {
            let _ = BPE.get_or_init(load);
        });
    }
}

/// The tokenizer, loading it (and waiting for a load in progress) when needed.
fn tokenizer() -> Option<&'static CoreBPE> {
    BPE.get_or_init(load).as_ref()
}

/// Whether exact counts are available without waiting.
pub fn ready() -> bool {
    BPE.get().is_some_and(Option::is_some)
}

fn to_u32(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

/// The tokenizer's count of `text`, waiting for the tokenizer if it is still loading.
pub fn exact(text: &str) -> u32 {
    match tokenizer() {
        Some(b) => to_u32(b.encode_ordinary(text).len()),
        None => approx(text),
    }
}

/// The exact count when the tokenizer is loaded, else the estimate (never waits).
pub fn count(text: &str) -> Count {
    match BPE.get().and_then(Option::as_ref) {
        Some(b) => Count { n: to_u32(b.encode_ordinary(text).len()), exact: true },
        None => Count { n: approx(text), exact: false },
    }
}

/// The count of `text` by the chosen method: the tokenizer (waiting for it) or the estimate.
pub fn count_with(text: &str, exact_count: bool) -> Count {
    if exact_count { Count { n: exact(text), exact: true } } else { Count { n: approx(text), exact: false } }
}

/// What one message costs in a request. `reasoning` says whether the provider sends the
/// model's earlier reasoning back (it costs nothing when it does not). `how`: the tokenizer
/// if loaded (None), or forced exact / estimated (Some).
pub fn message(m: &Message, reasoning: bool, how: Option<bool>) -> Count {
    let c = |t: &str| match how {
        None => count(t),
        Some(exact) => count_with(t, exact),
    };
    let body = match m {
        Message::User { text, .. } => c(text),
        Message::Assistant { text, reasoning: r, tool_calls } => {
            let mut n = c(text);
            if reasoning && let Some(r) = r {
                n = n.and(c(&r.text));
            }
            for call in tool_calls {
                n = n.and(c(&call.name)).and(c(&call.arguments)).plus(PER_CALL);
            }
            n
        }
        Message::Tool { name, content, images, .. } => c(content)
            .and(c(name))
            .plus(PER_MESSAGE + crate::llm::IMAGE_TOKENS * u32::try_from(images.len()).unwrap_or(u32::MAX)),
    };
    body.plus(PER_MESSAGE)
}

/// What one tool schema costs: its JSON as sent (name, description, parameters).
pub fn tool(d: &ToolDef) -> u32 {
    let json = serde_json::json!({"name": d.name, "description": d.description, "parameters": d.parameters});
    exact(&json.to_string()).saturating_add(PER_CALL)
}

/// CJK ideographs, kana and hangul: about one token per character or a little less.
fn is_cjk(c: u32) -> bool {
    matches!(c, 0x3000..=0x30ff | 0x3400..=0x9fff | 0xac00..=0xd7af | 0xf900..=0xfaff | 0xff00..=0xffef)
}

// The estimate's weights, in hundredths of a token, fitted against cl100k on Rust source,
// English markdown, JSON schemas and five other languages (see the `context` benchmark).
const WORD: usize = 100;
const ASCII_LETTERS_PER_EXTRA: usize = 7;
const OTHER_LETTER: usize = 20;
const HUMP: usize = 40;
const INDENT: usize = 100;
const NEWLINE: usize = 120;
const CJK: usize = 85;
/// A run of punctuation mostly merges with its neighbours ("();", "\":", "->").
const PUNCT_RUN: usize = 35;

/// A fast estimate of the cl100k count (about 60 MB/s): words, number groups, punctuation
/// runs, indentation and line breaks each priced as the tokenizer tends to split them.
/// Within about 5% on code and prose; about 10% high on dense JSON.
pub fn approx(text: &str) -> u32 {
    let mut t: usize = 0;
    let mut it = text.chars().peekable();
    let mut after_punct = false;
    while let Some(c) = it.next() {
        let cp = c as u32;
        if c.is_alphabetic() && !is_cjk(cp) {
            let (mut ascii, mut other, mut humps, mut last) = (0usize, 0usize, 0usize, c);
            if c.is_ascii() {
                ascii += 1;
            } else {
                other += 1;
            }
            while let Some(&d) = it.peek() {
                if !d.is_alphabetic() || is_cjk(d as u32) {
                    break;
                }
                if d.is_ascii_uppercase() && last.is_ascii_lowercase() {
                    humps += 1;
                }
                if d.is_ascii() {
                    ascii += 1;
                } else {
                    other += 1;
                }
                last = d;
                it.next();
            }
            t += WORD
                + ascii.saturating_sub(1) * 100 / ASCII_LETTERS_PER_EXTRA
                + other * OTHER_LETTER
                + humps * HUMP;
            after_punct = false;
        } else if c.is_ascii_digit() {
            let mut l = 1usize;
            while it.next_if(char::is_ascii_digit).is_some() {
                l += 1;
            }
            t += l.div_ceil(3) * 100;
            after_punct = false;
        } else if c == ' ' || c == '\t' {
            let mut l = 1usize;
            while it.next_if(|d| *d == ' ' || *d == '\t').is_some() {
                l += 1;
            }
            // One space joins the next word; a run of indentation is about one token.
            if l > 1 {
                t += INDENT;
            }
        } else if c == '\n' || c == '\r' {
            while it.next_if(|d| *d == '\n' || *d == '\r').is_some() {}
            // Line breaks right after punctuation are folded into it.
            if !after_punct {
                t += NEWLINE;
            }
            after_punct = false;
        } else if is_cjk(cp) {
            t += CJK;
            after_punct = false;
        } else {
            let mut l = 1usize;
            while it.next_if(|d| !d.is_alphanumeric() && !d.is_whitespace()).is_some() {
                l += 1;
            }
            // The last mark of a run joins a word that follows it (".push", "\"name").
            let billed = if it.peek().is_some_and(|d| d.is_alphabetic()) { l - 1 } else { l };
            if billed > 0 {
                t += PUNCT_RUN;
            }
            after_punct = true;
        }
    }
    to_u32(t.div_ceil(100))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A mixed sample: code, prose, JSON and five languages.
    pub(crate) fn sample() -> Vec<(&'static str, String)> {
        let code = include_str!("../agent/dispatch.rs").to_string();
        let prose = include_str!("../../../README.md").to_string();
        let json = serde_json::json!({
            "type": "object",
            "properties": {
                "file_path": {"type": "string", "description": "The file to read, relative to the workspace"},
                "offset": {"type": "integer", "minimum": 1, "description": "First line, 1-based"},
                "limit": {"type": "integer", "minimum": 1, "maximum": 2000}
            },
            "required": ["file_path"]
        })
        .to_string()
        .repeat(20);
        let intl = "Программа читает файл конфигурации и проверяет каждую строку.\n\
                    这个函数读取配置文件并检查每一行。如果某一行有错误，它会输出一条消息。\n\
                    Die Funktion liest die Konfigurationsdatei und prüft jede Zeile.\n\
                    この関数は設定ファイルを読み込み、各行をチェックします。\n\
                    La fonction lit le fichier de configuration et vérifie chaque ligne.\n"
            .repeat(5);
        vec![("code", code), ("prose", prose), ("json", json), ("non-English", intl)]
    }

    #[test]
    fn exact_counts_are_the_tokenizers() {
        assert_eq!(exact("hello world"), 2);
        assert_eq!(exact(""), 0);
        let c = count_with("fn main() {}", true);
        assert!(c.exact && c.n >= 4, "{c:?}");
    }

    #[test]
    fn the_estimate_stays_close_to_the_tokenizer_on_a_mixed_sample() {
        let (mut all_e, mut all_a) = (0u64, 0u64);
        for (name, text) in sample() {
            let (e, a) = (exact(&text) as f64, approx(&text) as f64);
            all_e += e as u64;
            all_a += a as u64;
            let err = (a - e) / e;
            assert!(err.abs() < 0.25, "{name}: exact {e}, estimate {a} ({:+.1}%)", err * 100.0);
        }
        let err = (all_a as f64 - all_e as f64) / all_e as f64;
        assert!(err.abs() < 0.08, "mixed: exact {all_e}, estimate {all_a} ({:+.1}%)", err * 100.0);
    }

    #[test]
    fn messages_count_text_calls_and_reasoning_when_sent() {
        let call = crate::llm::ToolCall {
            id: "c1".into(),
            name: "read_file".into(),
            arguments: r#"{"file_path":"src/main.rs"}"#.into(),
        };
        let m = Message::Assistant {
            text: "Let me look.".into(),
            reasoning: Some("x ".repeat(100).into()),
            tool_calls: vec![call],
        };
        let without = message(&m, false, Some(true)).n;
        let with = message(&m, true, Some(true)).n;
        assert!(with >= without + 100, "{with} vs {without}");
        assert!(without > exact("Let me look.") + PER_MESSAGE + PER_CALL, "{without}");
        let u = Message::user("hi there");
        assert_eq!(message(&u, false, Some(true)).n, exact("hi there") + PER_MESSAGE);
    }
}
