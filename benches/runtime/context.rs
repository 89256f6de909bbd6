//! Context management in-process: estimate and compact a synthetic 200,000-token transcript
//! to half its size with rungs 1-3 (what the proactive pass does before a call), the cost of
//! counting it exactly from scratch, and how far the fast estimate is from the tokenizer.

use crate::report::{Row, Unit};
use anyhow::{Context, Result, bail};
use corral::context::compact::{Aids, Fixed, NoSummaries, Rung, compact_to_budget};
use corral::context::{Transcript, tokens};
use corral::llm::{Message, ToolCall};
use std::time::{Duration, Instant};

const WARMUP: usize = 3;
const RUNS: usize = 30;
/// The size of the synthetic transcript, in tokens.
const TARGET_TOKENS: u64 = 200_000;
/// The system prompt and tool schemas of a typical session, in tokens.
const FIXED: Fixed = Fixed { system: 1500, tools: 3500 };

const CODE: &str = include_str!("../../host/src/agent/dispatch.rs");
const PROSE: &str = include_str!("../../README.md");
const OTHER_LANGUAGES: &str = "Программа читает файл конфигурации и проверяет каждую строку; если строка \
содержит ошибку, она выводит сообщение и продолжает работу.\n这个函数读取配置文件并检查每一行。如果某一行有错误，\
它会输出一条消息，然后继续处理下一行。\nDie Funktion liest die Konfigurationsdatei und prüft jede Zeile.\n\
この関数は設定ファイルを読み込み、各行をチェックします。\nLa fonction lit le fichier de configuration et \
vérifie chaque ligne.\n";

/// A JSON sample: tool schemas as a provider receives them.
fn json_sample() -> String {
    let schema = serde_json::json!({
        "type": "object",
        "properties": {
            "file_path": {"type": "string", "description": "The file to read, relative to the workspace root"},
            "offset": {"type": "integer", "minimum": 1, "description": "First line to show, 1-based"},
            "limit": {"type": "integer", "minimum": 1, "maximum": 2000, "description": "How many lines"}
        },
        "required": ["file_path"],
        "additionalProperties": false
    });
    (0..30)
        .map(|i| serde_json::json!({"name": format!("tool_{i}"), "parameters": schema}).to_string())
        .collect()
}

/// `n` lines of `text` starting at line `from` (wrapping).
fn slice(text: &str, from: usize, n: usize) -> String {
    let lines: Vec<&str> = text.lines().collect();
    (0..n).map(|i| format!("{}: {}\n", i + 1, lines[(from + i) % lines.len()])).collect()
}

/// A session of reads, greps and edits with reasoning and nudges, about 200K tokens, counted
/// exactly as a session counts each message when it arrives.
fn transcript() -> Transcript {
    let mut t = Transcript::new(true);
    t.push(Message::user("Find why configuration loading fails on empty files, fix it, and add a test."));
    let mut turn = 0usize;
    while t.tokens() < TARGET_TOKENS {
        let id = format!("call_{turn}");
        let (name, args, result) = match turn % 5 {
            0 | 1 => {
                ("read_file", format!(r#"{{"file_path":"src/mod{turn}.rs"}}"#), slice(CODE, turn * 37, 120))
            }
            2 => (
                "read_file",
                format!(r#"{{"file_path":"docs/notes{turn}.md"}}"#),
                slice(PROSE, turn * 11, 60),
            ),
            3 => (
                "grep",
                format!(r#"{{"pattern":"fn \\w+","path":"src/{turn}"}}"#),
                format!("Found 40 matches\n{}", slice(CODE, turn * 7, 40)),
            ),
            _ => (
                "edit_file",
                format!(r#"{{"file_path":"src/mod{turn}.rs","old_string":"a","new_string":"b"}}"#),
                "Edited.".into(),
            ),
        };
        t.push(Message::Assistant {
            text: if turn.is_multiple_of(3) {
                slice(PROSE, turn * 5, 12)
            } else {
                "Next I look at this.".into()
            },
            reasoning: Some(slice(PROSE, turn * 3, 6).into()),
            tool_calls: vec![ToolCall { id: id.clone(), name: name.into(), arguments: args }],
        });
        t.push_tool(
            Message::Tool {
                call_id: id,
                name: name.into(),
                content: result,
                is_error: false,
                images: Vec::new(),
            },
            name == "edit_file",
        );
        if turn % 7 == 6 {
            t.push(Message::nudge("Reminder: your todo list has 2 unfinished item(s)."));
        }
        turn += 1;
    }
    t
}

fn pct(estimate: u64, exact: u64) -> String {
    format!("{:+.1}%", (estimate as f64 - exact as f64) * 100.0 / exact.max(1) as f64)
}

/// The rows and the notes (target met or not, estimate errors).
pub fn rows() -> Result<(Vec<Row>, Vec<String>)> {
    let loading = Instant::now();
    tokens::exact("warm up");
    let load = loading.elapsed();
    let base = transcript();
    let messages = base.messages();
    let started = Instant::now();
    let recounted: u64 = messages.iter().map(|m| u64::from(tokens::message(m, true, Some(true)).n)).sum();
    let cold = started.elapsed();
    if recounted != base.tokens() {
        bail!("the cached counts ({}) differ from a fresh count ({recounted})", base.tokens());
    }
    let tokio =
        tokio::runtime::Builder::new_current_thread().build().context("cannot start the tokio runtime")?;
    let total = base.tokens() + FIXED.system + FIXED.tools;
    let budget = total / 2;
    let mut samples: Vec<Duration> = Vec::with_capacity(RUNS);
    let mut last = None;
    for i in 0..WARMUP + RUNS {
        let mut t = base.clone();
        let mut none = NoSummaries;
        let took = tokio.block_on(async {
            let started = Instant::now();
            let estimate = t.tokens() + FIXED.system + FIXED.tools;
            let r = if estimate > budget {
                compact_to_budget(&mut t, FIXED, budget, &Rung::PROACTIVE, &mut Aids::new(&mut none, None))
                    .await
                    .ok()
            } else {
                None
            };
            (started.elapsed(), r)
        });
        if i >= WARMUP {
            samples.push(took.0);
        }
        last = Some((t, took.1));
    }
    let Some((compacted, Some(report))) = last else { bail!("compaction did not run") };
    if !report.fits {
        bail!("rungs 1-3 did not reach half: {} -> {} (budget {budget})", report.before, report.after);
    }
    let median = crate::report::Stats::of(samples.clone()).map(|s| s.median).unwrap_or_default();
    let exact_after: u64 =
        compacted.messages().iter().map(|m| u64::from(tokens::message(m, true, Some(true)).n)).sum();
    let mut notes = vec![
        format!(
            "compaction: {} messages, {} tokens (+{} fixed) -> {} tokens with rungs {:?}; target < 10 ms: {}",
            messages.len(),
            base.tokens(),
            FIXED.system + FIXED.tools,
            report.after,
            report.applied.iter().map(|r| r.number()).collect::<Vec<_>>(),
            if median < Duration::from_millis(10) { "met" } else { "NOT met" }
        ),
        format!(
            "after compaction the cached estimate ({} tokens: exact for untouched messages, estimated for stubs) is \
             {} from a fresh exact count ({exact_after})",
            compacted.tokens(),
            pct(compacted.tokens(), exact_after)
        ),
    ];
    let json = json_sample();
    let samples_text = [
        ("code", CODE.to_string()),
        ("prose", PROSE.to_string()),
        ("JSON", json),
        ("non-English", OTHER_LANGUAGES.repeat(8)),
    ];
    let (mut all_e, mut all_a) = (0u64, 0u64);
    let mut parts = Vec::new();
    for (name, text) in &samples_text {
        let (e, a) = (u64::from(tokens::exact(text)), u64::from(tokens::approx(text)));
        all_e += e;
        all_a += a;
        parts.push(format!("{name} {} ({e} tokens)", pct(a, e)));
    }
    notes.push(format!(
        "fast estimate vs the cl100k tokenizer: {}; mixed sample {} ({all_e} tokens)",
        parts.join(", "),
        pct(all_a, all_e)
    ));
    Ok((
        vec![
            Row::new(
                "context: estimate + compact 200K tokens to half (rungs 1-3, cached counts)",
                Unit::Millis,
                samples,
                "< 10 ms",
            ),
            Row::new(
                "context: exact count of the 200K transcript from scratch (cl100k)",
                Unit::Millis,
                vec![cold],
                "",
            ),
            Row::new("context: tokenizer vocabulary load (once per process)", Unit::Millis, vec![load], ""),
        ],
        notes,
    ))
}
