//! Small windows (16K tokens and less): the tool catalogue sized to the window (terse mode and
//! the compact catalogue), the cap on one tool result scaled to the budget, and the start check.
//!
//! Choices: a tool result may take at most a quarter of the prompt budget (and never more than
//! the seed's 20 KB inline limit); terse mode starts when the full catalogue and prompt would
//! take more than 40% of the budget; the compact catalogue keeps the core tools, in order of
//! need, with one-sentence descriptions and no parameter descriptions, within 30% of the budget.

use super::prompt::first_sentence;
use crate::llm::ToolDef;
use serde_json::Value;

/// The core tools, most needed first; the compact catalogue takes them in this order.
pub const CORE_TOOLS: [&str; 9] = [
    "read_file",
    "edit_file",
    "grep",
    "write_file",
    "list_files",
    "run_command",
    "snapshot",
    "todo",
    "think",
];
/// The fewest core tools a session can work with (read, change, find).
pub const MIN_CORE: usize = 3;
/// Terse mode when the full catalogue and prompt exceed this share of the budget.
pub const TERSE_SHARE: f64 = 0.40;
/// The compact catalogue takes at most this share of the budget.
pub const COMPACT_SHARE: f64 = 0.30;
/// One tool result takes at most this share of the budget.
pub const RESULT_SHARE: f64 = 0.25;
/// The most of one result kept inline in any window (seed 003: 20 KB, the rest to a file).
pub const INLINE_MAX_BYTES: usize = 20 * 1024;
/// Characters per token when a token allowance becomes a byte cap: low, so the cap is safe.
pub const CHARS_PER_TOKEN: u64 = 3;
/// What a session needs beyond the system prompt and tools: the task and a useful reply.
pub const MIN_WORK_TOKENS: u64 = 700;

/// A tool's terse form: its first sentence, and its schema without descriptions.
pub fn terse(d: &ToolDef) -> ToolDef {
    ToolDef {
        name: d.name.clone(),
        description: first_sentence(&d.description).to_string(),
        parameters: strip_descriptions(&d.parameters),
    }
}

fn strip_descriptions(v: &Value) -> Value {
    match v {
        Value::Object(m) => Value::Object(
            m.iter()
                .filter(|(k, _)| k.as_str() != "description" && k.as_str() != "examples")
                .map(|(k, v)| {
                    // A property itself may be named "description": only schema keywords go.
                    let inner = if k == "properties" { strip_props(v) } else { strip_descriptions(v) };
                    (k.clone(), inner)
                })
                .collect(),
        ),
        Value::Array(a) => Value::Array(a.iter().map(strip_descriptions).collect()),
        other => other.clone(),
    }
}

fn strip_props(v: &Value) -> Value {
    match v {
        Value::Object(m) => {
            Value::Object(m.iter().map(|(k, v)| (k.clone(), strip_descriptions(v))).collect())
        }
        other => strip_descriptions(other),
    }
}

/// What `defs` cost in estimated tokens.
pub fn cost(defs: &[ToolDef]) -> u64 {
    u64::from(super::schemas::cost(defs).n)
}

/// The compact catalogue: the core tools among `defs`, terse, in [`CORE_TOOLS`] order, as
/// many as fit in `max_tokens` (always the first [`MIN_CORE`] that exist).
pub fn compact(defs: &[ToolDef], max_tokens: u64) -> Vec<ToolDef> {
    let mut out: Vec<ToolDef> = Vec::new();
    // What `out` costs so far (a list's cost is the sum of its tools').
    let mut used = 0;
    for name in CORE_TOOLS {
        let core = out.len() < MIN_CORE;
        if !core && used >= max_tokens {
            // Nothing more fits (at start the budget is 0: the core only).
            break;
        }
        let Some(d) = defs.iter().find(|d| d.name == name) else { continue };
        let t = terse(d);
        let c = cost(std::slice::from_ref(&t));
        if core || used + c <= max_tokens {
            used += c;
            out.push(t);
        }
    }
    out
}

/// The byte cap of one tool result: a quarter of the budget, at most `configured` and the
/// 20 KB inline limit; with no known window, `configured`.
pub fn result_cap(budget_estimate: Option<u64>, configured: usize) -> usize {
    match budget_estimate {
        None => configured,
        Some(b) => {
            let scaled = (b as f64 * RESULT_SHARE) as u64 * CHARS_PER_TOKEN;
            usize::try_from(scaled).unwrap_or(usize::MAX).clamp(512, INLINE_MAX_BYTES).min(configured)
        }
    }
}

/// How a result over the cap is cut.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Cut {
    /// It fits: unchanged.
    Whole,
    /// A file read: cut at a line, with the offset to read on from.
    Paged(String),
    /// Anything else: a preview, and the whole result must be saved (see [`with_pointer`]).
    Preview(String),
}

/// Cuts `content` (a result of `tool`) to `max_bytes` and `max_lines`.
pub fn cut_result(tool: &str, content: &str, max_bytes: usize, max_lines: usize) -> Cut {
    let lines = content.lines().count();
    if content.len() <= max_bytes && lines <= max_lines {
        return Cut::Whole;
    }
    let paged = matches!(tool, "read_file" | "read_multiple_files");
    let room = if paged { max_bytes.saturating_sub(160) } else { max_bytes.saturating_sub(320) };
    let mut kept = String::new();
    let mut last_line: Option<u64> = None;
    for (n, line) in content.lines().enumerate() {
        if n >= max_lines || kept.len() + line.len() + 1 > room {
            break;
        }
        kept.push_str(line);
        kept.push('\n');
        if let Some((num, _)) = line.split_once(": ")
            && let Ok(v) = num.trim().parse::<u64>()
        {
            last_line = Some(v);
        }
    }
    if kept.is_empty() {
        let at = content.char_indices().map(|(i, _)| i).take_while(|i| *i <= room).last().unwrap_or(0);
        kept.push_str(&content[..at]);
        kept.push('\n');
    }
    if paged {
        let hint = match last_line {
            Some(l) => format!(
                "[output cut at {} bytes to fit the context window; read on with offset={} and a limit of about {} lines]",
                kept.len(),
                l + 1,
                (max_lines as u64).min(l.max(10))
            ),
            None => format!(
                "[output cut at {} bytes to fit the context window; read a smaller part with offset and limit]",
                kept.len()
            ),
        };
        Cut::Paged(format!("{kept}{hint}"))
    } else {
        Cut::Preview(kept)
    }
}

/// A preview with the pointer to the saved whole result at `path` (`total` bytes).
pub fn with_pointer(preview: &str, path: &str, total: usize) -> String {
    format!(
        "{preview}[output cut to fit the context window: {} of {total} bytes shown; the whole result is saved in \
         {path}: read it with read_file, using offset and limit]",
        preview.len()
    )
}

/// The start check: Err with what to do when the window cannot hold even the smallest
/// request (the system prompt, the compact catalogue, the task and a useful reply).
pub fn check_fits(window: u64, budget: u64, system: u64, tools: u64) -> Result<(), String> {
    let need = system + tools + MIN_WORK_TOKENS;
    if need <= budget {
        return Ok(());
    }
    let fits = (need as f64 * 10.0 / 9.0) as u64 + window / 8;
    Err(format!(
        "the model's context window ({window} tokens) is too small to work in: the system prompt ({system} tokens) \
         and the smallest tool set ({tools} tokens) leave less than {MIN_WORK_TOKENS} tokens of its {budget}-token \
         budget for the task and a reply. Use a model with a window of at least {fits} tokens; if the window is \
         larger than {window}, say so with --max-context-tokens; or shorten the instruction files (--no-instructions)"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn def(name: &str) -> ToolDef {
        ToolDef {
            name: name.into(),
            description: format!("Does {name}. {}", "More words about it. ".repeat(40)),
            parameters: json!({"type": "object", "properties": {
                "path": {"type": "string", "description": "x ".repeat(100)},
                "description": {"type": "string", "description": "a property named description stays"}
            }, "required": ["path"]}),
        }
    }

    #[test]
    fn terse_tools_keep_names_types_and_required_but_no_prose() {
        let t = terse(&def("grep"));
        assert_eq!(t.description, "Does grep.");
        assert_eq!(t.parameters["properties"]["path"], json!({"type": "string"}));
        assert_eq!(t.parameters["properties"]["description"], json!({"type": "string"}));
        assert_eq!(t.parameters["required"], json!(["path"]));
    }

    #[test]
    fn the_compact_catalogue_takes_core_tools_in_order_within_its_share() {
        let all: Vec<ToolDef> =
            ["think", "fetch_url", "grep", "edit_file", "read_file", "todo", "write_file"]
                .iter()
                .map(|n| def(n))
                .collect();
        let names = |v: &[ToolDef]| v.iter().map(|d| d.name.clone()).collect::<Vec<_>>();
        let roomy = compact(&all, 10_000);
        assert_eq!(names(&roomy), ["read_file", "edit_file", "grep", "write_file", "todo", "think"]);
        let tight = compact(&all, 1);
        assert_eq!(names(&tight), ["read_file", "edit_file", "grep"], "the minimum is always there");
    }

    #[test]
    fn the_compact_catalogue_is_the_core_and_each_later_tool_that_still_fits() {
        let all: Vec<ToolDef> =
            ["think", "list_files", "grep", "edit_file", "read_file", "todo", "write_file", "run_command"]
                .iter()
                .map(|n| def(n))
                .collect();
        let names = |v: &[ToolDef]| v.iter().map(|d| d.name.clone()).collect::<Vec<_>>();
        // The rule as it reads, counting the whole list again for each tool.
        let by_the_rule = |budget: u64| {
            let mut out: Vec<ToolDef> = Vec::new();
            for name in CORE_TOOLS {
                let Some(d) = all.iter().find(|d| d.name == name) else { continue };
                let t = terse(d);
                if out.len() < MIN_CORE || cost(&out) + cost(std::slice::from_ref(&t)) <= budget {
                    out.push(t);
                }
            }
            out
        };
        let whole = cost(&by_the_rule(u64::MAX));
        for budget in 0..=whole + 1 {
            assert_eq!(names(&compact(&all, budget)), names(&by_the_rule(budget)), "budget {budget}");
        }
    }

    #[test]
    fn result_caps_scale_with_the_budget() {
        assert_eq!(result_cap(None, 50 * 1024), 50 * 1024);
        assert_eq!(result_cap(Some(3174), 50 * 1024), 793 * 3);
        assert_eq!(result_cap(Some(12_697), 50 * 1024), 3174 * 3);
        assert_eq!(result_cap(Some(1_000_000), 50 * 1024), INLINE_MAX_BYTES);
        assert_eq!(result_cap(Some(1_000_000), 4096), 4096, "the person's cap wins when smaller");
    }

    #[test]
    fn reads_are_paged_and_other_results_previewed() {
        let read: String = (1..=500).map(|i| format!("{i}: some log line number {i}\n")).collect();
        let Cut::Paged(p) = cut_result("read_file", &read, 2000, 2000) else { panic!("not paged") };
        assert!(p.len() <= 2000, "{}", p.len());
        let last: u64 = p.lines().rev().nth(1).unwrap().split_once(": ").unwrap().0.parse().unwrap();
        assert!(p.contains(&format!("offset={}", last + 1)), "{p}");
        let Cut::Paged(p) = cut_result("read_file", &read, 100_000, 20) else { panic!("lines cap") };
        assert!(p.contains("20: some log line number 20\n[output cut") && p.contains("offset=21"), "{p}");
        let out = "x\n".repeat(5000);
        let Cut::Preview(v) = cut_result("run_command", &out, 1000, 2000) else { panic!("not previewed") };
        let full = with_pointer(&v, ".corral/cmd_output_ab.txt", out.len());
        assert!(
            full.len() <= 1000
                && full.contains(".corral/cmd_output_ab.txt")
                && full.contains("of 10000 bytes")
        );
        assert_eq!(cut_result("grep", "short", 1000, 10), Cut::Whole);
    }

    #[test]
    fn a_window_too_small_is_refused_with_what_to_do() {
        assert!(check_fits(8192, 6348, 400, 1500).is_ok());
        let e = check_fits(2048, 1587, 400, 900).unwrap_err();
        assert!(e.contains("(2048 tokens) is too small") && e.contains("--max-context-tokens"), "{e}");
    }
}
