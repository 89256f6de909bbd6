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

/// The items as (task, done) pairs.
fn items(r: &Value) -> Vec<(String, bool)> {
    r["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| (i["task"].as_str().unwrap().to_string(), i["done"].as_bool().unwrap()))
        .collect()
}

fn tasks_of(r: &Value) -> Vec<String> {
    items(r).into_iter().map(|(t, _)| t).collect()
}

fn with(list: &[&str]) -> FakeState {
    let s = FakeState::new();
    ok(&s, json!({"action": "add", "tasks": list}));
    s
}

#[test]
fn spec_declares_state_and_hints() {
    let sp = spec();
    assert_eq!(sp.name, "todo");
    assert_eq!(sp.capabilities, vec![Capability::Kv, Capability::Context]);
    assert!(sp.read_only && !sp.destructive && !sp.idempotent && !sp.open_world);
    assert_eq!(sp.schema["properties"]["action"]["enum"], json!(["add", "done", "remove", "clear", "list"]));
}

#[test]
fn add_returns_the_whole_list_and_publishes_the_checklist() {
    let s = FakeState::new();
    let r = ok(&s, json!({"action": "add", "tasks": ["write parser", "add tests"]}));
    assert_eq!(
        r,
        json!({"action": "add", "total": 2, "remaining": 2, "items": [
            {"task": "write parser", "done": false}, {"task": "add tests", "done": false}]})
    );
    assert_eq!(s.section(SECTION).unwrap(), "- [ ] write parser\n- [ ] add tests");
    ok(&s, json!({"action": "done", "tasks": "write parser"}));
    assert_eq!(s.section(SECTION).unwrap(), "- [x] write parser\n- [ ] add tests");
}

#[test]
fn a_single_string_and_the_task_alias_work() {
    let s = FakeState::new();
    let r = ok(&s, json!({"action": "add", "tasks": "one"}));
    assert_eq!(tasks_of(&r), vec!["one"]);
    let r = ok(&s, json!({"action": "add", "task": "two"}));
    assert_eq!(tasks_of(&r), vec!["one", "two"]);
    let r = ok(&s, json!({"action": "add", "task": "three", "tasks": "three"}));
    assert_eq!(r["total"], 3);
    let e = err(&s, json!({"action": "add", "task": "x", "tasks": "y"}));
    assert!(e.message.contains("alias"), "{}", e.message);
}

#[test]
fn a_json_encoded_list_in_a_string_is_unwrapped() {
    let s = FakeState::new();
    let r = ok(&s, json!({"action": "add", "tasks": " [\"a\", \"b\"] "}));
    assert_eq!(tasks_of(&r), vec!["a", "b"]);
    let r = ok(&s, json!({"action": "add", "tasks": "[not json"}));
    assert_eq!(tasks_of(&r), vec!["a", "b", "[not json"]);
}

#[test]
fn task_text_is_kept_on_one_line() {
    let s = FakeState::new();
    let r = ok(&s, json!({"action": "add", "tasks": ["  fix\nthe   bug  ", {"task": "from object"}, 42]}));
    assert_eq!(tasks_of(&r), vec!["fix the bug", "from object", "42"]);
    assert_eq!(s.section(SECTION).unwrap().lines().count(), 3);
}

#[test]
fn add_dedupes_ignoring_case_with_unicode_lowercase() {
    let s = with(&["Update README", "Ärger beheben"]);
    let r = ok(&s, json!({"action": "add", "tasks": ["update readme", "ÄRGER BEHEBEN", "new", "NEW"]}));
    assert_eq!(tasks_of(&r), vec!["Update README", "Ärger beheben", "new"]);
    assert_eq!(r["skipped"], json!(["update readme", "ÄRGER BEHEBEN", "NEW"]));
    let r = ok(&s, json!({"action": "add", "tasks": "new"}));
    assert_eq!(r["skipped"], json!(["new"]), "a duplicate alone is not an error");
}

#[test]
fn items_over_500_characters_are_errors_for_that_item() {
    let s = FakeState::new();
    let long = "x".repeat(MAX_ITEM_CHARS + 1);
    let r = ok(&s, json!({"action": "add", "tasks": ["ok", long, "", "y".repeat(MAX_ITEM_CHARS)]}));
    assert_eq!(r["total"], 2);
    let errors = r["errors"].as_array().unwrap();
    assert_eq!(errors.len(), 2);
    assert_eq!(errors[0]["task"].as_str().unwrap().chars().count(), 80);
    assert!(errors[0]["reason"].as_str().unwrap().contains("501 characters"));
    assert_eq!(errors[1], json!({"task": "", "reason": "empty task"}));
    let e = err(&s, json!({"action": "add", "tasks": long}));
    assert_eq!(e.kind, ErrorKind::TooLarge);
    assert!(e.message.contains("the limit is 500"), "{}", e.message);
}

#[test]
fn the_list_holds_50_items() {
    let s = FakeState::new();
    let many: Vec<String> = (0..MAX_ITEMS - 1).map(|i| format!("task {i}")).collect();
    ok(&s, json!({"action": "add", "tasks": many}));
    let r = ok(&s, json!({"action": "add", "tasks": ["last", "over"]}));
    assert_eq!(r["total"], 50);
    assert!(r["errors"][0]["reason"].as_str().unwrap().contains("the list is full (50 items)"));
    assert_eq!(r["errors"][0]["task"], "over");
    let e = err(&s, json!({"action": "add", "tasks": "more"}));
    assert_eq!(e.kind, ErrorKind::TooLarge);
}

#[test]
fn done_matches_exact_then_prefix_then_substring() {
    let s = with(&["fix parser", "fix parser tests", "write docs", "release notes"]);
    // Exact beats the prefix shared with "fix parser tests".
    let r = ok(&s, json!({"action": "done", "tasks": "FIX PARSER"}));
    assert_eq!(items(&r)[0], ("fix parser".to_string(), true));
    assert!(!items(&r)[1].1);
    // A unique prefix.
    let r = ok(&s, json!({"action": "done", "tasks": "write"}));
    assert!(items(&r)[2].1);
    // A unique substring.
    let r = ok(&s, json!({"action": "done", "tasks": "notes"}));
    assert!(items(&r)[3].1);
    assert_eq!(r["remaining"], 1);
    // Done twice is fine.
    let r = ok(&s, json!({"action": "done", "tasks": "notes"}));
    assert_eq!(r["remaining"], 1);
    assert_eq!(
        s.section(SECTION).unwrap(),
        "- [x] fix parser\n- [ ] fix parser tests\n- [x] write docs\n- [x] release notes"
    );
}

#[test]
fn several_candidates_is_an_error_listing_them() {
    let s = with(&["fix parser", "fix lexer", "docs"]);
    let e = err(&s, json!({"action": "done", "tasks": "fix"}));
    assert_eq!(e.kind, ErrorKind::Conflict);
    assert_eq!(e.message, "'fix' matches several items, be more specific: 'fix parser'; 'fix lexer'");
    // In a batch, the ambiguous one fails alone.
    let r = ok(&s, json!({"action": "done", "tasks": ["fix", "docs"]}));
    assert_eq!(r["remaining"], 2);
    assert_eq!(r["errors"][0]["task"], "fix");
    assert!(r["errors"][0]["reason"].as_str().unwrap().contains("be more specific"));
}

#[test]
fn substring_ambiguity_is_reported_too() {
    let s = with(&["a parser", "b parser"]);
    let e = err(&s, json!({"action": "remove", "tasks": "parser"}));
    assert!(e.message.contains("'a parser'; 'b parser'"), "{}", e.message);
}

#[test]
fn no_match_is_not_found() {
    let s = with(&["a"]);
    let e = err(&s, json!({"action": "done", "tasks": "zzz"}));
    assert_eq!(e.kind, ErrorKind::NotFound);
    assert_eq!(e.message, "no item matches 'zzz'");
    assert!(e.hint.unwrap().contains("list"));
    let e = err(&s, json!({"action": "done", "tasks": ["y", "z"]}));
    assert_eq!(e.message, "all 2 tasks failed: no item matches 'y'; no item matches 'z'");
}

#[test]
fn remove_takes_items_off_the_list() {
    let s = with(&["one", "two", "three"]);
    let r = ok(&s, json!({"action": "remove", "tasks": ["tw", "THREE"]}));
    assert_eq!(tasks_of(&r), vec!["one"]);
    assert_eq!(s.section(SECTION).unwrap(), "- [ ] one");
    ok(&s, json!({"action": "remove", "tasks": "one"}));
    assert_eq!(s.section(SECTION), None, "an empty list removes the section");
    assert_eq!(s.section_log.borrow().last().unwrap().1, "", "published with an empty body");
}

#[test]
fn clear_empties_the_list_and_the_section() {
    let s = with(&["a", "b"]);
    let r = ok(&s, json!({"action": "clear"}));
    assert_eq!(r, json!({"action": "clear", "total": 0, "remaining": 0, "items": []}));
    assert_eq!(s.section(SECTION), None);
    let r = ok(&s, json!({"action": "list"}));
    assert_eq!(r["total"], 0);
}

#[test]
fn list_shows_the_state_without_publishing() {
    let s = with(&["a"]);
    let published = s.section_log.borrow().len();
    let r = ok(&s, json!({"action": "list", "tasks": "ignored"}));
    assert_eq!(
        r,
        json!({"action": "list", "total": 1, "remaining": 1, "items": [{"task": "a", "done": false}]})
    );
    assert_eq!(s.section_log.borrow().len(), published);
}

#[test]
fn actions_and_tasks_are_checked() {
    let s = FakeState::new();
    assert!(err(&s, json!({})).message.contains("'action'"));
    let e = err(&s, json!({"action": "finish"}));
    assert!(e.message.contains("unknown action 'finish'"), "{}", e.message);
    assert_eq!(ok(&s, json!({"action": " ADD ", "tasks": "x"}))["action"], "add");
    assert!(err(&s, json!({"action": "add"})).message.contains("needs 'tasks'"));
    assert!(err(&s, json!({"action": "done", "tasks": []})).message.contains("empty"));
    assert!(err(&s, json!({"action": "add", "tasks": "  "})).message.contains("empty task"));
}

#[test]
fn a_huge_list_is_shortened_to_fit_the_section() {
    let s = FakeState::new();
    let many: Vec<String> =
        (0..MAX_ITEMS).map(|i| format!("{i:02} {}", "é".repeat(MAX_ITEM_CHARS - 3))).collect();
    let r = ok(&s, json!({"action": "add", "tasks": many}));
    assert_eq!(r["total"], 50);
    let body = s.section(SECTION).unwrap();
    assert!(body.len() <= MAX_SECTION_BYTES, "{}", body.len());
    assert_eq!(body.lines().filter(|l| l.starts_with("- [ ] ")).count(), 50);
    assert!(body.lines().all(|l| l.ends_with('…')));
}

#[test]
fn state_that_cannot_be_kept_is_an_error() {
    let s = FakeState::new();
    *s.fail_set.borrow_mut() = Some("too big".into());
    let e = err(&s, json!({"action": "add", "tasks": "a"}));
    assert_eq!(e.kind, ErrorKind::Io);
    assert_eq!(s.section(SECTION), None);
}
