//! Each rung on synthetic transcripts: what is kept, what is dropped, and that every call
//! keeps its result (the pairing is checked after every step of every test).

use super::*;
use crate::context::recap::{RECAP_MARKER, STATIC_RECAP};
use crate::context::transcript::tests::{call, reply, result};
use crate::context::transcript::{Entry, Recap, Transcript, UnitKind, check_pairs};
use crate::llm::Message;
use std::future::Future;

fn block_on<F: Future>(f: F) -> F::Output {
    tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(f)
}

/// Fails the test when a call and its result have come apart.
fn assert_pairs(t: &Transcript) {
    if let Err(e) = check_pairs(t.entries().iter().map(|e| &e.msg), false) {
        panic!("pairing broken: {e}\n{:#?}", t.messages());
    }
}

/// A summarizer that records what it was asked and answers from a script.
struct Scripted {
    answers: Vec<Option<String>>,
    asked: Vec<String>,
}

impl Scripted {
    fn new(answers: Vec<Option<&str>>) -> Self {
        Scripted { answers: answers.into_iter().map(|a| a.map(str::to_string)).collect(), asked: Vec::new() }
    }
}

impl Summarizer for Scripted {
    async fn summarize(&mut self, span: String) -> Option<String> {
        self.asked.push(span);
        if self.answers.is_empty() { None } else { self.answers.remove(0) }
    }
}

/// A summarizer that never answers (a call that hangs or is interrupted).
struct Hangs;

impl Summarizer for Hangs {
    async fn summarize(&mut self, _span: String) -> Option<String> {
        std::future::pending::<()>().await;
        None
    }
}

fn big(tag: &str, lines: usize) -> String {
    (0..lines).map(|i| format!("{tag} line {i}: some content of the file here\n")).collect()
}

/// Adds one model turn calling `name` with `args` and answered with `content`.
fn turn(t: &mut Transcript, id: &str, name: &str, args: &str, content: &str, mutated: bool, error: bool) {
    t.push(reply(vec![call(id, name, args)]));
    let msg = Message::Tool {
        call_id: id.into(),
        name: name.into(),
        content: content.into(),
        is_error: error,
        images: vec![],
    };
    t.push_tool(msg, mutated);
}

/// The task, then ten turns: eight large reads, one failed grep, one edit, one think; a
/// spent nudge in the middle.
fn investigation() -> Transcript {
    let mut t = Transcript::new(false);
    t.push(Message::user("find why the parser fails on empty input and fix it"));
    for i in 0..4 {
        let args = format!(r#"{{"file_path":"src/mod{i}.rs"}}"#);
        turn(&mut t, &format!("r{i}"), "read_file", &args, &big(&format!("mod{i}"), 60), false, false);
    }
    t.push(Message::nudge("Reminder: your todo list has 1 unfinished item(s)"));
    turn(
        &mut t,
        "g1",
        "grep",
        r#"{"pattern":"parse_empty","path":"src"}"#,
        "error (not-found): no such directory",
        false,
        true,
    );
    turn(
        &mut t,
        "k1",
        "think",
        r#"{"thought":"the guard is missing"}"#,
        "{\"thought_number\":1}",
        false,
        false,
    );
    for i in 4..7 {
        let args = format!(r#"{{"file_path":"src/mod{i}.rs"}}"#);
        turn(&mut t, &format!("r{i}"), "read_file", &args, &big(&format!("mod{i}"), 60), false, false);
    }
    turn(
        &mut t,
        "e1",
        "edit_file",
        r#"{"file_path":"src/parser.rs","old_string":"a","new_string":"b"}"#,
        "Edited src/parser.rs",
        true,
        false,
    );
    turn(&mut t, "r9", "read_file", r#"{"file_path":"src/parser.rs"}"#, &big("parser", 60), false, false);
    turn(&mut t, "r10", "read_file", r#"{"file_path":"src/lib.rs"}"#, &big("lib", 60), false, false);
    assert_pairs(&t);
    t
}

fn text_of(e: &Entry) -> String {
    match &e.msg {
        Message::User { text, .. } | Message::Assistant { text, .. } => text.clone(),
        Message::Tool { content, .. } => content.clone(),
    }
}

fn results(t: &Transcript) -> Vec<(String, String)> {
    t.entries()
        .iter()
        .filter_map(|e| match &e.msg {
            Message::Tool { call_id, content, .. } => Some((call_id.clone(), content.clone())),
            _ => None,
        })
        .collect()
}

fn run(t: &mut Transcript, fixed: Fixed, budget: u64, rungs: &[Rung], s: &mut Scripted) -> Report {
    let r = block_on(compact_to_budget(t, fixed, budget, rungs, &mut Aids::new(s, None))).unwrap();
    assert_pairs(t);
    r
}

#[test]
fn rung1_drops_only_answered_nudges() {
    let mut t = investigation();
    t.push(Message::nudge("Your last reply was empty."));
    let before = t.len();
    assert!(light::drop_spent_nudges(&mut t));
    assert_pairs(&t);
    assert_eq!(t.len(), before - 1, "one answered nudge goes");
    let nudges: Vec<String> = t.entries().iter().filter(|e| e.is_nudge()).map(text_of).collect();
    assert_eq!(nudges, vec!["Your last reply was empty.".to_string()], "the unanswered one stays");
    assert!(!light::drop_spent_nudges(&mut t), "nothing more to do");
}

#[test]
fn rung2_stubs_old_results_and_keeps_the_last_two_turns() {
    let mut t = investigation();
    let last_two: Vec<(String, String)> = results(&t).into_iter().rev().take(2).collect();
    assert!(light::shrink_results(&mut t, KEEP_TURNS));
    assert_pairs(&t);
    let now = results(&t);
    let r0 = &now.iter().find(|(id, _)| id == "r0").unwrap().1;
    assert_eq!(
        r0,
        "[read_file src/mod0.rs: 60 lines, dropped to save context; call the tool again if you need it]"
    );
    let g1 = &now.iter().find(|(id, _)| id == "g1").unwrap().1;
    assert_eq!(g1, "error (not-found): no such directory", "short results stay");
    for (id, content) in &last_two {
        assert_eq!(&now.iter().find(|(i, _)| i == id).unwrap().1, content, "{id} is in the last two turns");
    }
    assert_eq!(now.len(), results(&investigation()).len(), "nothing removed");
}

#[test]
fn rung2_stubs_say_what_each_tool_returned() {
    let grep = light::stub(
        "grep",
        Some(&serde_json::json!({"pattern": "fn main", "path": "src"})),
        &format!("Found 42 matches\n{}", "x\n".repeat(600)),
    );
    assert_eq!(
        grep,
        "[grep 'fn main' in src: ~42 matches, dropped to save context; call the tool again if you need it]"
    );
    let many = light::stub(
        "read_multiple_files",
        Some(&serde_json::json!({"files": ["a.rs", {"file_path": "b.rs"}]})),
        &"y".repeat(3000),
    );
    assert!(many.starts_with("[read_multiple_files a.rs, b.rs: 3000 characters"), "{many}");
    let other = light::stub("run_command", None, &format!("{}{}", "a".repeat(1500), "z".repeat(1500)));
    assert!(other.starts_with(&"a".repeat(200)) && other.ends_with(&"z".repeat(200)), "{other}");
    assert!(other.contains("[... 2600 characters of run_command output dropped to save context ...]"));
}

#[test]
fn rung3_strips_reasoning_and_long_prose_before_calls() {
    let mut t = Transcript::new(true);
    t.push(Message::user("go"));
    for i in 0..4 {
        t.push(Message::Assistant {
            text: if i == 0 { "p".repeat(1500) } else { "short".into() },
            reasoning: Some("r".repeat(800).into()),
            tool_calls: vec![call(&format!("c{i}"), "read_file", "{}")],
        });
        t.push_tool(result(&format!("c{i}"), "read_file", "ok"), false);
    }
    let before = t.tokens();
    assert!(light::strip_reasoning(&mut t, KEEP_TURNS));
    assert_pairs(&t);
    assert!(t.tokens() < before, "reasoning is counted when it is sent");
    let replies: Vec<&Message> =
        t.entries().iter().map(|e| &e.msg).filter(|m| matches!(m, Message::Assistant { .. })).collect();
    let Message::Assistant { text, reasoning, .. } = replies[0] else { unreachable!() };
    assert_eq!(text, "[the notes written before calling read_file were dropped to save context]");
    assert!(reasoning.is_none());
    let Message::Assistant { text, reasoning, .. } = replies[1] else { unreachable!() };
    assert_eq!((text.as_str(), reasoning.is_none()), ("short", true));
    for m in &replies[2..] {
        let Message::Assistant { reasoning, .. } = m else { unreachable!() };
        assert!(reasoning.is_some(), "the last two turns keep their reasoning");
    }
}

#[test]
fn rung4_drops_the_low_half_keeps_people_and_writes_a_recap() {
    let mut t = investigation();
    t.push(Message::user("also check the lexer"));
    turn(&mut t, "r11", "read_file", r#"{"file_path":"src/lexer.rs"}"#, &big("lexer", 20), false, false);
    let people: Vec<String> = t.entries().iter().filter(|e| e.is_person()).map(text_of).collect();
    let mut s = Scripted::new(vec![Some("- read mod0..mod3, nothing relevant")]);
    let n = block_on(drop::drop_low_turns(&mut t, &mut Aids::new(&mut s, None)));
    assert_pairs(&t);
    assert!(n >= 4, "{n} turns dropped");
    let kept_people: Vec<String> = t.entries().iter().filter(|e| e.is_person()).map(text_of).collect();
    assert_eq!(kept_people, people, "the person's messages are never dropped by rung 4");
    let ids: Vec<String> = results(&t).into_iter().map(|(id, _)| id).collect();
    for important in ["e1", "g1", "k1"] {
        assert!(ids.iter().any(|i| i == important), "{important} (write, error, think) kept: {ids:?}");
    }
    for tail in ["r9", "r10", "r11"] {
        assert!(ids.iter().any(|i| i == tail), "{tail} is in the protected last turns");
    }
    assert!(!ids.iter().any(|i| i == "r0"), "the oldest plain read goes first: {ids:?}");
    let recap: Vec<&Entry> = t.entries().iter().filter(|e| e.recap == Some(Recap::Compaction)).collect();
    assert_eq!(recap.len(), 1);
    assert_eq!(text_of(recap[0]), format!("{RECAP_MARKER}\n- read mod0..mod3, nothing relevant"));
    assert_eq!(
        t.entries()[1].recap,
        Some(Recap::Compaction),
        "the recap stands where the first dropped turn was"
    );
    assert!(s.asked[0].contains("agent called read_file {\"file_path\":\"src/mod0.rs\"}"), "{}", s.asked[0]);
}

#[test]
fn rung4_falls_back_to_checkpoints_then_to_a_marker() {
    let mut t = investigation();
    let mut s = Scripted::new(vec![None]);
    block_on(drop::drop_low_turns(
        &mut t,
        &mut Aids::new(&mut s, Some("(from checkpoint summaries)\nold work".into())),
    ));
    assert_pairs(&t);
    let recap = t.entries().iter().find(|e| e.recap.is_some()).map(text_of).unwrap();
    assert_eq!(recap, format!("{RECAP_MARKER}\n(from checkpoint summaries)\nold work"));
    let mut t = investigation();
    let mut s = Scripted::new(vec![None]);
    block_on(drop::drop_low_turns(&mut t, &mut Aids::new(&mut s, None)));
    let recap = t.entries().iter().find(|e| e.recap.is_some()).map(text_of).unwrap();
    assert_eq!(recap, STATIC_RECAP);
}

#[test]
fn rung4_scores_recaps_and_writes_high() {
    let mut t = investigation();
    let units = t.units();
    let entries = t.entries();
    let scores: Vec<u32> = units.iter().map(|u| drop::score(entries, u)).collect();
    let by_id = |id: &str| {
        let i = units
            .iter()
            .position(|u| {
                entries[u.start..u.end]
                    .iter()
                    .any(|e| matches!(&e.msg, Message::Tool { call_id, .. } if call_id == id))
            })
            .unwrap();
        scores[i]
    };
    assert_eq!((by_id("e1"), by_id("g1"), by_id("k1"), by_id("r0")), (5, 3, 2, 0));
    t.push_recap("[snapshot: x]\nfound it".into(), Recap::Snapshot);
    let u = *t.units().last().unwrap();
    assert_eq!(drop::score(t.entries(), &u), 5);
}

#[test]
fn rung5_keeps_the_task_a_recap_and_the_last_two_turns() {
    let mut t = investigation();
    let tail: Vec<u64> = t.entries()[t.tail_start(2)..].iter().map(|e| e.id).collect();
    let mut s = Scripted::new(vec![Some("everything so far")]);
    let n = block_on(drop::drop_middle(&mut t, &mut Aids::new(&mut s, None)));
    assert_pairs(&t);
    assert_eq!(n, 10, "all but the last two of twelve turns");
    assert_eq!(text_of(&t.entries()[0]), "find why the parser fails on empty input and fix it");
    assert_eq!(text_of(&t.entries()[1]), format!("{RECAP_MARKER}\neverything so far"));
    let rest: Vec<u64> = t.entries()[2..].iter().map(|e| e.id).collect();
    assert_eq!(rest, tail);
    assert_eq!(block_on(drop::drop_middle(&mut t, &mut Aids::new(&mut s, None))), 0, "nothing left to drop");
}

#[test]
fn rung7_truncates_in_bounded_stages_and_cuts_the_system_prompt_last() {
    let mut t = investigation();
    turn(
        &mut t,
        "w1",
        "write_file",
        &serde_json::json!({"file_path": "x", "content": "q".repeat(5000)}).to_string(),
        "Wrote x",
        true,
        false,
    );
    let (dropped, system) = emergency::truncate(&mut t, 100, 2000);
    assert_pairs(&t);
    assert!(t.tokens() + 100 <= 2000, "{}", t.tokens());
    assert_eq!((dropped, system), (0, None), "cutting messages was enough");
    for e in t.entries() {
        assert!(text_of(e).chars().count() <= 2000 + 60, "{}", text_of(e).len());
        if let Message::Assistant { tool_calls, .. } = &e.msg {
            for c in tool_calls {
                assert!(
                    serde_json::from_str::<serde_json::Value>(&c.arguments).is_ok(),
                    "arguments stay JSON"
                );
            }
        }
    }
    let mut t = investigation();
    let last = t.units().into_iter().rev().find(|u| u.kind == UnitKind::Exchange).unwrap();
    let last_ids: Vec<u64> = t.entries()[last.start..last.end].iter().map(|e| e.id).collect();
    let (dropped, system) = emergency::truncate(&mut t, 100, 250);
    assert_pairs(&t);
    assert_eq!(dropped, 11);
    assert_eq!(text_of(&t.entries()[0]), "find why the parser fails on empty input and fix it");
    let kept: Vec<u64> = t.entries()[2..].iter().map(|e| e.id).collect();
    assert_eq!(kept, last_ids, "the task, a marker, and the latest turn with its result");
    assert!(matches!(t.entries().last().unwrap().msg, Message::Tool { .. }));
    assert_eq!(system, None);
    let mut t = investigation();
    let (dropped, system) = emergency::truncate(&mut t, 100, 175);
    assert_pairs(&t);
    assert_eq!((dropped, t.len(), system), (12, 2, None), "too tight: the task and a marker");
    let mut t = investigation();
    let (_, system) = emergency::truncate(&mut t, 5000, 150);
    let (chars, tokens) = system.expect("the system prompt must be cut");
    assert_eq!(tokens, 150 - t.tokens());
    assert_eq!(chars as u64, tokens * 3);
}

#[test]
fn the_ladder_stops_at_the_first_rung_that_fits() {
    let mut t = investigation();
    let all = t.tokens();
    let mut s = Scripted::new(vec![]);
    let fixed = Fixed { system: 500, tools: 1000 };
    let r = run(&mut t, fixed, all + 1500, &Rung::ALL, &mut s);
    assert!(r.applied.is_empty() && r.fits && r.before == r.after, "already under: {r:?}");
    let r = run(&mut t, fixed, all + 1500 - 5, &Rung::ALL, &mut s);
    assert_eq!(r.applied, vec![Rung::Scaffolding], "dropping the spent nudge is enough");
    assert!(r.fits && r.saved() > 0);
    assert!(s.asked.is_empty(), "no summary was needed");
}

#[test]
fn proactive_rungs_reach_half_and_lossy_rungs_are_not_used() {
    let mut t = investigation();
    let fixed = Fixed { system: 300, tools: 700 };
    let before = t.tokens() + 1000;
    let mut s = Scripted::new(vec![]);
    let r = run(&mut t, fixed, before / 2, &Rung::PROACTIVE, &mut s);
    assert!(r.fits, "{r:?}");
    assert_eq!(r.applied, vec![Rung::Scaffolding, Rung::ShrinkResults]);
    assert_eq!(r.turns_dropped, 0);
    assert_eq!(results(&t).len(), 12, "every result is still there, stubbed");
}

#[test]
fn the_full_ladder_escalates_to_tools_and_emergency() {
    let mut t = investigation();
    let fixed = Fixed { system: 300, tools: 2000 };
    let mut s = Scripted::new(vec![Some("summary one"), Some("summary two")]);
    let r = run(&mut t, fixed, 700, &Rung::ALL, &mut s);
    assert!(r.fits, "{r:?}");
    assert!(r.applied.contains(&Rung::DropTools) && r.without_tools);
    assert!(r.applied.windows(2).all(|w| w[0] < w[1]), "in ladder order: {:?}", r.applied);
    assert!(t.entries().iter().any(|e| e.is_person()), "the task survives");
}

#[test]
fn a_ladder_that_cannot_reach_the_budget_still_commits_what_it_saved() {
    let mut t = investigation();
    let before = t.tokens();
    let mut s = Scripted::new(vec![]);
    let r = run(&mut t, Fixed::default(), 10, &Rung::PROACTIVE, &mut s);
    assert!(!r.fits && r.after < before && t.tokens() < before, "{r:?}");
}

#[test]
fn malformed_or_cancelled_compaction_leaves_the_transcript_untouched() {
    let mut t = investigation();
    t.push_tool(result("nobody", "read_file", "orphan"), false);
    let snapshot = t.messages();
    let mut s = Scripted::new(vec![]);
    let e =
        block_on(compact_to_budget(&mut t, Fixed::default(), 10, &Rung::ALL, &mut Aids::new(&mut s, None)));
    assert!(matches!(e, Err(CompactError::Malformed(ref m)) if m.contains("did not call")), "{e:?}");
    assert_eq!(t.messages(), snapshot);

    let mut t = investigation();
    let snapshot = t.messages();
    let mut hangs = Hangs;
    let done = block_on(async {
        let mut aids = Aids::new(&mut hangs, None);
        let f = compact_to_budget(&mut t, Fixed::default(), 10, &Rung::ALL, &mut aids);
        tokio::time::timeout(std::time::Duration::from_millis(50), f).await.is_ok()
    });
    assert!(!done, "the summary never came");
    assert_eq!(t.messages(), snapshot, "rungs 1-3 ran on the copy only");
}
