use super::*;
use corral_plugin_sdk::host::fake::FakeState;

fn call(s: &FakeState, args: Value) -> Result<Value, ToolError> {
    run(s, &args).map(|o| serde_json::from_str(&o.text).unwrap())
}

fn ok(s: &FakeState, args: Value) -> Value {
    call(s, args).unwrap_or_else(|e| panic!("unexpected error: {e}"))
}

fn err(s: &FakeState, args: Value) -> ToolError {
    call(s, args).expect_err("expected an error")
}

fn section(s: &FakeState) -> String {
    s.section(SECTION).unwrap_or_default()
}

/// A state with `n` plain thoughts already recorded.
fn with_thoughts(n: usize) -> FakeState {
    let s = FakeState::new();
    for i in 0..n {
        ok(&s, json!({"thought": format!("step {}", i + 1)}));
    }
    s
}

#[test]
fn spec_declares_state_and_hints() {
    let sp = spec();
    assert_eq!(sp.name, "think");
    assert_eq!(sp.capabilities, vec![Capability::Kv, Capability::Context]);
    assert!(sp.read_only && !sp.destructive && !sp.idempotent && !sp.open_world);
    assert_eq!(sp.schema["type"], "object");
    assert_eq!(sp.schema["required"], json!(["thought"]));
}

#[test]
fn first_thought_gets_defaults() {
    let s = FakeState::new();
    let r = ok(&s, json!({"thought": "look at the parser"}));
    assert_eq!(
        r,
        json!({"thought_number": 1, "total_thoughts": 3, "next_thought_needed": true,
               "branches": [], "history_length": 1})
    );
}

#[test]
fn numbers_increment_and_the_total_carries_forward_and_rises() {
    let s = FakeState::new();
    ok(&s, json!({"thought": "a", "total_thoughts": 5}));
    let r = ok(&s, json!({"thought": "b"}));
    assert_eq!((r["thought_number"].as_u64(), r["total_thoughts"].as_u64()), (Some(2), Some(5)));
    let r = ok(&s, json!({"thought": "c", "thought_number": 7}));
    assert_eq!((r["thought_number"].as_u64(), r["total_thoughts"].as_u64()), (Some(7), Some(7)));
    let r = ok(&s, json!({"thought": "d", "next_thought_needed": false}));
    assert_eq!(r["thought_number"], 8, "auto-numbering continues after the highest number");
    assert_eq!(r["total_thoughts"], 8);
    assert_eq!(r["next_thought_needed"], false);
    assert_eq!(r["history_length"], 4);
}

#[test]
fn numbers_and_booleans_given_as_strings_are_accepted() {
    let s = FakeState::new();
    let r = ok(
        &s,
        json!({"thought": "a", "thought_number": "3", "total_thoughts": " 4 ",
                           "next_thought_needed": "false"}),
    );
    assert_eq!(r["thought_number"], 3);
    assert_eq!(r["total_thoughts"], 4);
    assert_eq!(r["next_thought_needed"], false);
    let r = ok(&s, json!({"thought": "b", "mode": "revision", "revises_thought": "3"}));
    assert_eq!(r["history_length"], 2);
    assert!(section(&s).contains("(revises 3)"));
}

#[test]
fn unreadable_field_is_an_error_naming_it() {
    let s = FakeState::new();
    let e = err(&s, json!({"thought": "a", "thought_number": "three"}));
    assert_eq!(e.kind, ErrorKind::InvalidArgs);
    assert!(e.message.contains("'thought_number'"), "{}", e.message);
}

#[test]
fn thought_is_required_and_not_blank() {
    let s = FakeState::new();
    assert!(err(&s, json!({})).message.contains("'thought'"));
    assert!(err(&s, json!({"thought": "  "})).message.contains("empty"));
    assert_eq!(s.get(KEY), None);
}

#[test]
fn revision_of_a_recorded_thought() {
    let s = with_thoughts(2);
    let r = ok(&s, json!({"thought": "actually no", "mode": "revision", "revises_thought": 1}));
    assert_eq!(r["thought_number"], 3);
    assert!(section(&s).ends_with("3/3 (revises 1): actually no"), "{}", section(&s));
}

#[test]
fn mode_is_inferred_from_fields_and_legacy_is_revision() {
    let s = with_thoughts(2);
    ok(&s, json!({"thought": "r1", "revises_thought": 2}));
    assert!(section(&s).contains("3/3 (revises 2): r1"));
    ok(&s, json!({"thought": "r2", "is_revision": true, "revises_thought": 1}));
    assert!(section(&s).contains("4/4 (revises 1): r2"));
    ok(&s, json!({"thought": "b1", "branch_from_thought": 1, "branch_id": "alt"}));
    assert!(section(&s).contains("5/5 (branch \"alt\" from 1): b1"));
    // An explicit "not a revision" makes a plain thought whatever else is sent.
    let r = ok(
        &s,
        json!({"thought": "plain", "is_revision": false, "revises_thought": 99,
                           "branch_from_thought": 99, "branch_id": ""}),
    );
    assert_eq!(r["history_length"], 6);
    assert!(section(&s).ends_with("6/6: plain"), "{}", section(&s));
}

#[test]
fn stray_fields_irrelevant_to_the_mode_are_dropped() {
    let s = with_thoughts(1);
    // A full template payload in mode new: nothing but the thought counts.
    let r = ok(
        &s,
        json!({"thought": "n", "mode": "new", "revises_thought": "junk",
                           "branch_from_thought": 42, "branch_id": {"x": 1}}),
    );
    assert_eq!(r["branches"], json!([]));
    // A revision ignores the branch fields, a branch ignores revises_thought.
    ok(&s, json!({"thought": "r", "mode": "revision", "revises_thought": 1, "branch_id": "zzz"}));
    let r = ok(
        &s,
        json!({"thought": "b", "mode": "branch", "branch_from_thought": 1,
                           "branch_id": "x", "revises_thought": 99}),
    );
    assert_eq!(r["branches"], json!(["x"]));
    assert!(section(&s).contains("2/3: n\n3/3 (revises 1): r\n4/4 (branch \"x\" from 1): b"));
}

#[test]
fn unknown_mode_means_new() {
    let s = with_thoughts(1);
    let r = ok(&s, json!({"thought": "x", "mode": "sideways", "revises_thought": 99}));
    assert_eq!(r["thought_number"], 2);
}

#[test]
fn revision_and_branch_without_history_become_new_thoughts() {
    let s = FakeState::new();
    let r = ok(&s, json!({"thought": "r", "mode": "revision", "revises_thought": 5}));
    assert_eq!(r["thought_number"], 1);
    let s = FakeState::new();
    let r = ok(&s, json!({"thought": "b", "mode": "branch", "branch_from_thought": 3}));
    assert_eq!((r["thought_number"].as_u64(), r["branches"].clone()), (Some(1), json!([])));
    assert_eq!(section(&s), "Your thoughts so far (think tool), oldest first:\n1/3: b");
}

#[test]
fn revision_needs_an_existing_target_with_a_correction_hint() {
    let s = with_thoughts(3);
    let e = err(&s, json!({"thought": "r", "mode": "revision"}));
    assert!(e.message.contains("needs revises_thought"), "{}", e.message);
    assert!(e.hint.as_deref().unwrap().contains("recorded thoughts: 1-3. Use revises_thought=3"));
    let e = err(&s, json!({"thought": "r", "revises_thought": 9}));
    assert_eq!(e.message, "revises_thought=9 is not a recorded thought");
    assert!(e.hint.unwrap().contains("recorded thoughts: 1-3"));
}

#[test]
fn branch_needs_both_fields_and_an_existing_origin() {
    let s = with_thoughts(2);
    let e = err(&s, json!({"thought": "b", "branch_id": "alt"}));
    assert!(e.message.contains("needs branch_from_thought"), "{}", e.message);
    assert!(e.hint.unwrap().contains("together"));
    let e = err(&s, json!({"thought": "b", "mode": "branch", "branch_from_thought": 1}));
    assert!(e.message.contains("needs branch_id"), "{}", e.message);
    let e = err(&s, json!({"thought": "b", "branch_from_thought": 7, "branch_id": "alt"}));
    assert_eq!(e.message, "branch_from_thought=7 is not a recorded thought");
    assert!(e.hint.unwrap().contains("Use branch_from_thought=2"));
    let e = err(&s, json!({"thought": "b", "branch_from_thought": 1, "branch_id": "   "}));
    assert_eq!(e.message, "branch_id is blank");
    let e = err(&s, json!({"thought": "b", "branch_from_thought": 1, "branch_id": "x".repeat(51)}));
    assert!(e.message.contains("51 characters"), "{}", e.message);
    let r = ok(&s, json!({"thought": "b", "branch_from_thought": 1, "branch_id": "x".repeat(50)}));
    assert_eq!(r["branches"].as_array().unwrap().len(), 1);
}

#[test]
fn a_branch_label_is_reused_not_duplicated() {
    let s = with_thoughts(1);
    ok(&s, json!({"thought": "b1", "branch_from_thought": 1, "branch_id": " alt "}));
    let r = ok(&s, json!({"thought": "b2", "branch_from_thought": 2, "branch_id": "alt"}));
    assert_eq!(r["branches"], json!(["alt"]));
    let r = ok(&s, json!({"thought": "b3", "branch_from_thought": 1, "branch_id": 7}));
    assert_eq!(r["branches"], json!(["alt", "7"]));
}

#[test]
fn the_same_error_twice_is_recorded_as_a_plain_thought() {
    let s = with_thoughts(2);
    let bad = json!({"thought": "fix", "revises_thought": 9, "next_thought_needed": false});
    let first = err(&s, bad.clone());
    assert!(first.hint.is_some());
    let r = ok(&s, bad.clone());
    assert_eq!(r["thought_number"], 3);
    assert_eq!(r["next_thought_needed"], false);
    assert!(r["note"].as_str().unwrap().contains("recorded as a plain new thought"));
    assert!(section(&s).ends_with("3/3: fix"), "{}", section(&s));
    // The slate is clean again: the next error is reported.
    err(&s, bad);
}

#[test]
fn different_errors_or_a_success_in_between_do_not_count_as_repeats() {
    let s = with_thoughts(2);
    err(&s, json!({"thought": "a", "revises_thought": 9}));
    err(&s, json!({"thought": "a", "revises_thought": 8}));
    ok(&s, json!({"thought": "fine"}));
    err(&s, json!({"thought": "a", "revises_thought": 8}));
    ok(&s, json!({"thought": "a", "revises_thought": 8}));
    assert_eq!(section(&s).lines().count(), 5);
}

#[test]
fn history_is_limited_to_200_thoughts() {
    let s = with_thoughts(MAX_THOUGHTS);
    let e = err(&s, json!({"thought": "one more"}));
    assert_eq!(e.kind, ErrorKind::TooLarge);
    assert!(e.message.contains("200"));
}

#[test]
fn at_most_20_branches() {
    let s = with_thoughts(1);
    for i in 0..MAX_BRANCHES {
        ok(&s, json!({"thought": "b", "branch_from_thought": 1, "branch_id": format!("b{i}")}));
    }
    let e = err(&s, json!({"thought": "b", "branch_from_thought": 1, "branch_id": "one-too-many"}));
    assert!(e.message.contains("already 20 branches"), "{}", e.message);
    assert!(e.hint.unwrap().contains("b0, b1"));
    let r = ok(&s, json!({"thought": "b", "branch_from_thought": 1, "branch_id": "b3"}));
    assert_eq!(r["branches"].as_array().unwrap().len(), 20);
}

#[test]
fn long_thoughts_are_cut_with_a_note() {
    let s = FakeState::new();
    let r = ok(&s, json!({"thought": "x".repeat(MAX_THOUGHT_CHARS + 5)}));
    assert!(r["note"].as_str().unwrap().contains("cut to 10000"), "{r}");
    let r = ok(&s, json!({"thought": "y".repeat(MAX_THOUGHT_CHARS)}));
    assert!(r.get("note").is_none());
}

#[test]
fn section_shows_the_last_eight_thoughts_clipped() {
    let s = with_thoughts(10);
    ok(&s, json!({"thought": format!("long\n{}", "z".repeat(1000))}));
    let body = section(&s);
    let lines: Vec<&str> = body.lines().collect();
    assert_eq!(lines[0], "Your latest thoughts (think tool), oldest first; 3 earlier not shown:");
    assert_eq!(lines.len(), 9);
    assert_eq!(lines[1], "4/4: step 4");
    let last = lines[8];
    assert!(last.starts_with("11/11: long zzz") && last.ends_with('…'), "{last}");
    assert_eq!(last.trim_start_matches("11/11: ").chars().count(), SECTION_CLIP_CHARS);
}

#[test]
fn section_stays_under_4_kb_with_wide_characters() {
    let s = FakeState::new();
    for _ in 0..SECTION_THOUGHTS {
        ok(&s, json!({"thought": "界".repeat(400)}));
    }
    let body = section(&s);
    assert!(body.len() <= SECTION_MAX_BYTES, "{} bytes", body.len());
    assert!(body.lines().count() >= 3, "still shows several thoughts");
    assert!(body.starts_with("Your latest thoughts (think tool), oldest first;"));
}

#[test]
fn state_that_cannot_be_kept_is_an_error() {
    let s = FakeState::new();
    *s.fail_set.borrow_mut() = Some("state limit reached".into());
    let e = err(&s, json!({"thought": "a"}));
    assert_eq!(e.kind, ErrorKind::Io);
    assert!(e.message.contains("state limit reached"));
}

#[test]
fn ranges_are_compact() {
    assert_eq!(ranges(&[1, 2, 3, 5, 7, 8]), "1-3, 5, 7-8");
    assert_eq!(ranges(&[]), "none yet");
}
