//! The `backlog` tool through the real binary on a beads file written by hand from beads'
//! documented format: ready order, blocking, create / update / close / dep add, unknown fields
//! kept, and the file still beads' afterwards; one call through the agent.

use crate::support;

use serde_json::{Value, json};
use support::Sandbox;
use support::model_server::{Flavor, ModelServer, Reply, Step};

/// Issues as `bd` exports them: the documented fields (id, title, description, status,
/// priority, issue_type, timestamps, labels, dependencies with issue_id / depends_on_id /
/// type) and some corral does not know (external_ref, design, a future field).
const BEADS: &str = concat!(
    r#"{"id":"shop-1a2b","title":"Payment provider","description":"Pick one","status":"closed","priority":1,"issue_type":"task","created_at":"2025-03-01T10:00:00Z","updated_at":"2025-03-02T10:00:00Z","closed_at":"2025-03-02T10:00:00Z","close_reason":"Stripe"}"#,
    "\n",
    r#"{"id":"shop-3c4d","title":"Checkout page","description":"","status":"open","priority":1,"issue_type":"feature","created_at":"2025-03-03T10:00:00Z","updated_at":"2025-03-03T10:00:00Z","dependencies":[{"issue_id":"shop-3c4d","depends_on_id":"shop-1a2b","type":"blocks","created_at":"2025-03-03T10:00:00Z","created_by":"ann"}],"design":"one page"}"#,
    "\n",
    r#"{"id":"shop-5e6f","title":"Refund flow","description":"","status":"open","priority":2,"issue_type":"feature","created_at":"2025-03-04T10:00:00Z","updated_at":"2025-03-04T10:00:00Z","dependencies":[{"issue_id":"shop-5e6f","depends_on_id":"shop-3c4d","type":"blocks","created_at":"2025-03-04T10:00:00Z","created_by":"ann"}]}"#,
    "\n",
    r#"{"id":"shop-7a8b","title":"Cart total is wrong","description":"rounding","status":"open","priority":0,"issue_type":"bug","created_at":"2025-03-05T10:00:00Z","updated_at":"2025-03-05T10:00:00Z","labels":["cart"],"external_ref":"gh-12","x_future":{"keep":true}}"#,
    "\n",
);

fn setup() -> Sandbox {
    let sb = Sandbox::new();
    std::fs::create_dir_all(sb.ws.join(".beads")).unwrap();
    std::fs::write(sb.ws.join(".beads/issues.jsonl"), BEADS).unwrap();
    sb
}

fn backlog(sb: &Sandbox, args: Value) -> String {
    sb.tool(&[], "backlog", &args).ok().stdout
}

/// Every line is a JSON object with beads' required fields and valid values.
fn beads_issues(sb: &Sandbox) -> Vec<Value> {
    let text = std::fs::read_to_string(sb.ws.join(".beads/issues.jsonl")).unwrap();
    let issues: Vec<Value> = text.lines().map(|l| serde_json::from_str(l).expect("a JSON line")).collect();
    for i in &issues {
        for key in ["id", "title", "status", "priority", "issue_type", "created_at", "updated_at"] {
            assert!(i.get(key).is_some(), "{key} missing in {i}");
        }
        assert!(["open", "in_progress", "blocked", "closed"].contains(&i["status"].as_str().unwrap()), "{i}");
        assert!((0..=4).contains(&i["priority"].as_i64().unwrap()), "{i}");
        assert_eq!(i["status"] == "closed", i.get("closed_at").is_some(), "closed_at iff closed: {i}");
        for d in i["dependencies"].as_array().into_iter().flatten() {
            assert_eq!(d["issue_id"], i["id"]);
            assert!(d["depends_on_id"].is_string() && d["type"].is_string(), "{d}");
        }
    }
    issues
}

fn ids_of(listing: &str) -> Vec<String> {
    listing.lines().skip(1).map(|l| l.split(' ').next().unwrap().to_string()).collect()
}

#[test]
fn a_hand_written_beads_backlog_round_trips() {
    let sb = setup();
    // shop-5e6f waits for the open shop-3c4d; shop-3c4d's blocker is closed.
    assert_eq!(ids_of(&backlog(&sb, json!({"command": "ready"}))), ["shop-7a8b", "shop-3c4d"]);
    let out = backlog(
        &sb,
        json!({"command": "create", "title": "Tax rules", "priority": 0, "issue_type": "task", "description": "EU VAT"}),
    );
    let id = out.trim().strip_prefix("Created ").unwrap().split(':').next().unwrap().to_string();
    assert!(id.starts_with("shop-"), "the file's prefix: {id}");
    backlog(&sb, json!({"command": "dep_add", "id": "shop-7a8b", "depends_on": id}));
    // The new P0 is newer than the other P0, which it now blocks.
    assert_eq!(ids_of(&backlog(&sb, json!({"command": "ready"}))), [id.as_str(), "shop-3c4d"]);
    backlog(&sb, json!({"command": "close", "id": id, "reason": "rules in place"}));
    backlog(
        &sb,
        json!({"command": "update", "id": "shop-3c4d", "status": "in_progress", "assignee": "corral"}),
    );
    assert_eq!(ids_of(&backlog(&sb, json!({"command": "ready"}))), ["shop-7a8b"]);
    let shown = backlog(&sb, json!({"command": "show", "id": "shop-5e6f"}));
    assert!(shown.contains("ready: no, blocked by shop-3c4d"), "{shown}");
    let issues = beads_issues(&sb);
    assert_eq!(issues.len(), 5);
    let new = issues.iter().find(|i| i["id"] == id.as_str()).unwrap();
    assert_eq!(
        (new["status"].as_str(), new["close_reason"].as_str()),
        (Some("closed"), Some("rules in place"))
    );
    let cart = issues.iter().find(|i| i["id"] == "shop-7a8b").unwrap();
    assert_eq!(cart["external_ref"], "gh-12");
    assert_eq!(cart["x_future"], json!({"keep": true}));
    assert_eq!(cart["dependencies"][0]["depends_on_id"], id.as_str());
    assert_eq!(issues.iter().find(|i| i["id"] == "shop-3c4d").unwrap()["design"], "one page");
    // Lines no command changed are byte for byte the hand-written ones.
    let text = std::fs::read_to_string(sb.ws.join(".beads/issues.jsonl")).unwrap();
    for line in [BEADS.lines().next().unwrap(), BEADS.lines().nth(2).unwrap()] {
        assert!(text.lines().any(|l| l == line), "{line}");
    }
    let r = sb.tool(&[], "backlog", &json!({"command": "close", "id": "shop-none"})).tool_err();
    assert!(r.stdout.contains("no issue 'shop-none'") || r.stderr.contains("no issue 'shop-none'"), "{r:?}");
}

#[test]
fn the_model_reads_ready_work() {
    let server = ModelServer::start(
        Flavor::OpenAi,
        vec![
            Step::Reply(Reply::tool("backlog", r#"{"command":"ready"}"#)),
            Step::Reply(Reply::text("Start with shop-7a8b.")),
        ],
    );
    let sb = setup();
    let url = server.url();
    let r = sb.run(&["--base-url", &url, "--model", "test-model", "--no-stream", "what next?"]).ok();
    assert!(r.stdout.contains("Start with shop-7a8b."), "{}", r.stdout);
    let reqs = server.requests();
    let tools: Vec<&str> = reqs[0].body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap())
        .collect();
    assert!(tools.contains(&"backlog") && tools.contains(&"cron"), "{tools:?}");
    let msgs = reqs[1].body["messages"].as_array().unwrap();
    let result = msgs.iter().rev().find(|m| m["role"] == "tool").unwrap()["content"].to_string();
    assert!(result.contains("shop-7a8b [P0] [bug] open - Cart total is wrong"), "{result}");
    assert!(!result.contains("shop-5e6f"), "{result}");
}
