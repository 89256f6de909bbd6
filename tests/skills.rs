//! End-to-end skills: the real `corral` binary with shipped, project and user skills, in a
//! scripted model session (catalogue, activation, scripts, refusals, resources, unknown
//! names) and through `corral skills` and `corral tool use_skill`.

mod support;

use serde_json::{Value, json};
use std::path::Path;
use support::model_server::{Captured, Flavor, ModelServer, Reply, Step};
use support::{Run, Sandbox};

const NOTES_MD: &str = "---\nname: release-notes\ndescription: Draft release notes from the changes since the last tag. Use when preparing a release.\n---\n# Release notes\n\nGroup the changes as Added, Changed, Fixed.\nINSTRUCTION-MARKER-7319\n";

/// A project folder skill `release-notes` with a reference file and a script.
fn release_notes(sb: &Sandbox) {
    let dir = sb.ws.join(".corral/skills/release-notes");
    std::fs::create_dir_all(dir.join("references")).unwrap();
    std::fs::create_dir_all(dir.join("scripts")).unwrap();
    std::fs::write(dir.join("SKILL.md"), NOTES_MD).unwrap();
    std::fs::write(dir.join("references/style.md"), "Write for users, not for developers.\n").unwrap();
    std::fs::write(
        dir.join("scripts/draft.sh"),
        "#!/bin/sh\n# Prints the commits since TAG. Args: TAG\ngit log \"$1\"..HEAD\n",
    )
    .unwrap();
}

fn tool(name: &str, args: Value) -> Step {
    Step::Reply(Reply::tool(name, &args.to_string()))
}

fn skill_call(args: Value) -> Step {
    tool("use_skill", args)
}

fn system(c: &Captured) -> String {
    c.body["messages"][0]["content"].as_str().unwrap_or_default().to_string()
}

/// The text of the last tool result in a request.
fn last_result(c: &Captured) -> String {
    let msgs = c.body["messages"].as_array().cloned().unwrap_or_default();
    let last = msgs.iter().rev().find(|m| m["role"] == "tool").expect("a tool result");
    last["content"].as_str().unwrap_or_default().to_string()
}

fn session(sb: &Sandbox, server: &ModelServer, task: &str) -> Run {
    let url = server.url();
    sb.run(&["--base-url", &url, "--model", "test-model", "--no-stream", task])
}

fn fail(run: &Run) -> String {
    format!("exit {}\nstdout:\n{}\nstderr:\n{}", run.code, run.stdout, run.stderr)
}

#[test]
fn a_folder_skills_script_runs_as_an_allowed_command() {
    let sb = Sandbox::new();
    let dir = sb.ws.join(".corral/skills/greeter");
    std::fs::create_dir_all(dir.join("scripts")).unwrap();
    std::fs::write(
        dir.join("SKILL.md"),
        "---\nname: greeter\ndescription: Greets people by name.\n---\nRun the script.\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("scripts/hello.sh"),
        "#!/bin/sh\n# Greets. Args: NAME\necho \"hello $1\"\necho \"secret=${CORRAL_TEST_SECRET:-unset}\"\npwd\n",
    )
    .unwrap();
    let server = ModelServer::start(
        Flavor::OpenAi,
        vec![
            skill_call(json!({"name": "greeter", "action": "script", "args": "scripts/hello.sh world"})),
            Step::Reply(Reply::text("Greeted.")),
        ],
    );
    let url = server.url();
    let args =
        ["--base-url", &url, "--model", "test-model", "--no-stream", "--allowed-commands", "sh", "greet"];
    // An untrusted project's skills are not loaded; the person trusts the workspace.
    let run = sb.run(&["skills", "--json"]).ok();
    assert!(!run.stdout.contains("greeter"), "{}", run.stdout);
    assert!(
        run.stderr.contains("1 skill(s) in .corral/skills/") && run.stderr.contains("corral trust"),
        "{}",
        run.stderr
    );
    sb.trust();
    let run = sb.run_with_env(&args, &[("CORRAL_TEST_SECRET", "hunter2")]);
    assert_eq!(run.code, 0, "{}", fail(&run));
    let reqs = server.requests();
    let ws = std::fs::canonicalize(&sb.ws).unwrap();
    assert_eq!(
        last_result(&reqs[1]),
        format!("scripts/hello.sh exited with 0\nhello world\nsecret=unset\n{}\n", ws.display()),
        "the script ran with sh from the allowlist, in the workspace, without corral's environment"
    );
}

#[test]
fn a_skill_session_from_catalogue_to_scripts() {
    let sb = Sandbox::new();
    release_notes(&sb);
    sb.trust();
    std::fs::write(sb.ws.join("README.md"), "# Demo\n\n## Install\n\n## Use it\n").unwrap();
    let server = ModelServer::start(
        Flavor::OpenAi,
        vec![
            skill_call(json!({"name": "release-notes", "action": "activate"})),
            skill_call(json!({"name": "markdown-docs", "action": "script", "args": "toc README.md"})),
            skill_call(json!({"name": "release-notes", "action": "script", "args": "scripts/draft.sh v1.0"})),
            skill_call(json!({"name": "release-notes", "action": "load", "args": "references/style.md"})),
            skill_call(json!({"name": "release-notse", "action": "activate"})),
            skill_call(json!({"name": "release-notes", "action": "load", "args": "references/styl.md"})),
            skill_call(json!({"name": "markdown-docs", "action": "script", "args": ["tco", "README.md"]})),
            Step::Reply(Reply::text("Done.")),
        ],
    );
    let run = session(&sb, &server, "draft the release notes");
    assert_eq!(run.code, 0, "{}", fail(&run));
    assert_eq!(run.stdout, "Done.\n");
    let reqs = server.requests();
    assert_eq!(reqs.len(), 8);

    // The catalogue is in the first request; the instructions are not.
    let sys = system(&reqs[0]);
    let skills = &sys[sys.find("## Skills\n").expect("a Skills section")..];
    assert!(
        skills.contains(
            "\n- release-notes: Draft release notes from the changes since the last tag. Use when preparing a release.\n"
        ),
        "{skills}"
    );
    assert!(skills.contains("\n- markdown-docs: Keep Markdown documentation navigable:"), "{skills}");
    assert!(skills.contains("\n- code-review: Review a code change"), "{skills}");
    assert!(!sys.contains("INSTRUCTION-MARKER-7319"), "instructions only on activation");
    let tools = reqs[0].body["tools"].as_array().unwrap();
    let use_skill = tools.iter().find(|t| t["function"]["name"] == "use_skill").expect("use_skill offered");
    assert_eq!(
        use_skill["function"]["parameters"]["properties"]["name"]["enum"],
        json!(["code-review", "markdown-docs", "release-notes"])
    );

    // activate: instructions, files, scripts.
    let activated = last_result(&reqs[1]);
    assert!(
        activated.starts_with("# Skill: release-notes (folder skill, project)\n\n# Release notes\n"),
        "{activated}"
    );
    assert!(activated.contains("INSTRUCTION-MARKER-7319"));
    assert!(activated.contains("\n## Files\nRead them with action \"load\", args \"PATH,PATH\":\n- references/style.md (37 bytes)\n- scripts/draft.sh ("), "{activated}");
    assert!(activated.contains("\n## Scripts\nRun one with action \"script\", args \"NAME ARG...\":\n- scripts/draft.sh: Prints the commits since TAG. Args: TAG (runs with sh.)\n"), "{activated}");

    // A component skill's script reads the workspace and its output reaches the model.
    assert_eq!(
        last_result(&reqs[2]),
        "Table of contents for README.md (heading levels 2 to 3, 2 entries):\n\n- [Install](#install)\n- [Use it](#use-it)\n\n\
         To keep it updatable, put it between a `<!-- toc -->` line and a `<!-- tocstop -->` line.\n"
    );

    // A folder skill's script is refused while commands are off.
    assert_eq!(
        last_result(&reqs[3]),
        "error (permission-denied): the script 'scripts/draft.sh' of skill 'release-notes' was not run: scripts in a \
         SKILL.md folder run as commands, under the same policy as run_command, and the host refused to run 'sh': \
         running commands is off; the user can enable commands with --allowed-commands LIST, --commands ask or --yolo\n\
         hint: commands are off unless corral is started with them enabled and 'sh' allowed (for example \
         `--allowed-commands sh`); until then, do what the script does with the other tools (read it with use_skill \
         action \"load\")"
    );

    // load returns the resource.
    assert_eq!(
        last_result(&reqs[4]),
        "<file skill=\"release-notes\" path=\"references/style.md\">\nWrite for users, not for developers.\n</file>\n"
    );

    // Unknown names answer with the known ones, closest first.
    assert_eq!(
        last_result(&reqs[5]),
        "error (not-found): there is no skill named 'release-notse'. The skills are, closest first: release-notes, \
         code-review, markdown-docs."
    );
    assert_eq!(
        last_result(&reqs[6]),
        "error (not-found): skill 'release-notes' has no file 'references/styl.md'; its files are, closest first: \
         references/style.md, scripts/draft.sh."
    );
    assert_eq!(
        last_result(&reqs[7]),
        "error (not-found): skill 'markdown-docs' has no script 'tco'; its scripts are, closest first: toc, outline, \
         check-links."
    );
}

fn skills_json(run: &Run) -> Value {
    serde_json::from_str(&run.stdout).unwrap_or_else(|e| panic!("{e}: {}", run.stdout))
}

/// The component skill as built for embedding (host/build.rs builds it).
fn markdown_docs_wasm() -> std::path::PathBuf {
    support::built_component("markdown_docs")
}

#[test]
fn corral_skills_lists_every_source_and_reports_clashes() {
    let sb = Sandbox::new();
    release_notes(&sb);
    // A project code-review hides the user's, which hides the shipped one.
    for (base, what) in [(sb.ws.join(".corral/skills"), "project"), (sb.config.join("skills"), "user")] {
        let dir = base.join("code-review");
        std::fs::create_dir_all(&dir).unwrap();
        let md = format!("---\nname: code-review\ndescription: The {what} review rules.\n---\nReview.\n");
        std::fs::write(dir.join("SKILL.md"), md).unwrap();
    }
    // A user copy of the markdown-docs component hides the shipped one.
    let user_md = sb.config.join("skills/markdown-docs.wasm");
    std::fs::copy(markdown_docs_wasm(), &user_md).unwrap();
    sb.trust();

    let run = sb.run(&["skills", "--json"]).ok();
    let doc = skills_json(&run);
    let rows: Vec<(String, String, String, String)> = doc["skills"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            let f = |k: &str| s[k].as_str().unwrap().to_string();
            (f("name"), f("source"), f("kind"), f("path"))
        })
        .collect();
    let project_review = sb.ws.join(".corral/skills/code-review");
    let user_review = sb.config.join("skills/code-review");
    assert_eq!(
        rows,
        [
            ("code-review".into(), "project".into(), "folder".into(), project_review.display().to_string()),
            ("markdown-docs".into(), "user".into(), "component".into(), user_md.display().to_string()),
            (
                "release-notes".into(),
                "project".into(),
                "folder".into(),
                sb.ws.join(".corral/skills/release-notes").display().to_string()
            ),
        ]
    );
    assert_eq!(doc["skills"][0]["description"], "The project review rules.");
    let hidden: Vec<(String, String, String)> = doc["hidden"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| {
            (
                h["name"].as_str().unwrap().into(),
                h["source"].as_str().unwrap().into(),
                h["hidden_by"]["source"].as_str().unwrap().into(),
            )
        })
        .collect();
    assert_eq!(
        hidden,
        [
            ("code-review".to_string(), "user".to_string(), "project".to_string()),
            ("markdown-docs".to_string(), "shipped".to_string(), "user".to_string()),
            ("code-review".to_string(), "shipped".to_string(), "project".to_string()),
        ]
    );
    let warning = format!(
        "warning: skill 'code-review' from {} (user) is hidden by the one from {} (project)\n",
        user_review.display(),
        project_review.display()
    );
    assert!(run.stderr.contains(&warning), "{}", run.stderr);
    assert!(
        run.stderr.contains(&format!(
            "warning: skill 'markdown-docs' from embedded in corral (markdown_docs.wasm) (shipped) is hidden by the one from {} (user)",
            user_md.display()
        )),
        "{}",
        run.stderr
    );

    let text = sb.run(&["skills"]).ok();
    assert!(
        text.stdout.starts_with(&format!(
            "code-review (project, folder)\n  The project review rules.\n  path: {}\nmarkdown-docs (user, component)\n",
            project_review.display()
        )),
        "{}",
        text.stdout
    );
    assert!(text.stdout.contains(&format!(
        "\nHidden by a skill of the same name:\ncode-review (user) {}\n  hidden by the project skill at {}\n",
        user_review.display(),
        project_review.display()
    )));
    assert!(text.stderr.contains(&warning));
}

#[test]
fn only_shipped_skills_without_project_or_user_ones() {
    let sb = Sandbox::new();
    let run = sb.run(&["skills", "--json"]).ok();
    let doc = skills_json(&run);
    let names: Vec<(&str, &str, &str)> = doc["skills"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| (s["name"].as_str().unwrap(), s["source"].as_str().unwrap(), s["kind"].as_str().unwrap()))
        .collect();
    assert_eq!(names, [("code-review", "shipped", "folder"), ("markdown-docs", "shipped", "component")]);
    assert_eq!(doc["hidden"], json!([]));
    assert_eq!(run.stderr, "", "no warnings");
    // The shipped folder was unpacked under the cache dir, where its files can be read.
    let path = doc["skills"][0]["path"].as_str().unwrap();
    assert!(Path::new(path).starts_with(Sandbox::cache_dir()), "{path}");
    assert!(Path::new(path).join("references/checklist.md").is_file());
}

#[test]
fn broken_skills_are_skipped_with_a_warning_that_says_why() {
    let sb = Sandbox::new();
    let skills = sb.ws.join(".corral/skills");
    std::fs::create_dir_all(skills.join("wrong-name")).unwrap();
    std::fs::write(skills.join("wrong-name/SKILL.md"), "---\nname: other-name\ndescription: d\n---\nbody\n")
        .unwrap();
    std::fs::create_dir_all(skills.join("no-front")).unwrap();
    std::fs::write(skills.join("no-front/SKILL.md"), "# just text\n").unwrap();
    std::fs::create_dir_all(skills.join("empty")).unwrap();
    // A tool plugin is not a skill, and one that imports the workspace interface is refused.
    std::fs::copy(support::test_plugin("hostile"), skills.join("hostile.wasm")).unwrap();
    std::fs::write(skills.join("junk.wasm"), b"not wasm").unwrap();
    sb.trust();
    let run = sb.run(&["skills", "--json"]).ok();
    let names: Vec<String> = skills_json(&run)["skills"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["name"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(names, ["code-review", "markdown-docs"], "only the shipped skills load");
    let e = &run.stderr;
    let at = |p: &str| skills.join(p).display().to_string();
    assert!(
        e.contains(&format!("warning: skipping {}: a skill folder needs a SKILL.md file\n", at("empty"))),
        "{e}"
    );
    assert!(
        e.contains(&format!(
            "warning: skipping skill {}: the name 'other-name' differs from the folder's name 'wrong-name'; rename one so \
             they match\n",
            at("wrong-name")
        )),
        "{e}"
    );
    assert!(
        e.contains(&format!(
            "warning: skipping skill {}: SKILL.md must start with a front matter block",
            at("no-front")
        )),
        "{e}"
    );
    assert!(
        e.contains(&format!("warning: skipping skill {}: it imports 'corral:plugin/", at("hostile.wasm")))
            && e.contains("which skills cannot use. A skill component may import WASI and corral:plugin/{log,kv,host-info}@0.1"),
        "{e}"
    );
    assert!(
        e.contains(&format!("warning: skipping skill {}: it is not a valid component", at("junk.wasm"))),
        "{e}"
    );
}

#[test]
fn a_folder_skill_sees_only_its_own_folder() {
    let sb = Sandbox::new();
    release_notes(&sb);
    let dir = sb.ws.join(".corral/skills/release-notes");
    std::os::unix::fs::symlink(sb.outside.join("secret.txt"), dir.join("references/leak.md")).unwrap();
    std::os::unix::fs::symlink("../../../../hello.txt", dir.join("references/ws.md")).unwrap();
    sb.trust();
    let run = sb.run(&["tool", "use_skill", r#"{"name": "release-notes", "action": "activate"}"#]).ok();
    assert!(!run.stdout.contains("leak.md") && !run.stdout.contains("ws.md"), "{}", run.stdout);
    for p in ["references/leak.md", "references/ws.md", "../../../../hello.txt", "/etc/passwd"] {
        let args = json!({"name": "release-notes", "action": "load", "args": p}).to_string();
        let run = sb.run(&["tool", "use_skill", &args]).tool_err();
        assert!(!run.stderr.contains("top secret") && !run.stderr.contains("world"), "{p}: {}", run.stderr);
        assert!(run.stdout.is_empty());
    }
    let args = json!({"name": "release-notes", "action": "load", "args": "../../x"}).to_string();
    let run = sb.run(&["tool", "use_skill", &args]).tool_err();
    assert_eq!(
        run.stderr,
        "error (invalid-args): '../../x' has an empty, '.' or '..' part; use the path as listed\n"
    );
}

#[test]
fn component_skill_scripts_read_the_workspace_read_only() {
    let sb = Sandbox::new();
    std::fs::create_dir_all(sb.ws.join("docs")).unwrap();
    std::fs::write(
        sb.ws.join("README.md"),
        "# P\n## Setup\nSee [guide](docs/guide.md#usage) and [x](missing.md).\n",
    )
    .unwrap();
    std::fs::write(sb.ws.join("docs/guide.md"), "# Guide\n## Usage\n").unwrap();
    let before = std::fs::read(sb.ws.join("README.md")).unwrap();
    let args = json!({"name": "markdown-docs", "action": "script", "args": "check-links ."}).to_string();
    let run = sb.run(&["tool", "use_skill", &args]).ok();
    assert_eq!(
        run.stdout,
        "Checked 2 file(s): 2 link(s), of which 0 point to other sites and were not checked.\nBroken (1):\n\
         README.md:3: [x](missing.md): no such file or folder 'missing.md'\n"
    );
    let args =
        json!({"name": "markdown-docs", "action": "script", "args": ["outline", "../outside/secret.txt"]})
            .to_string();
    let run = sb.run(&["tool", "use_skill", &args]).tool_err();
    assert!(
        run.stderr.starts_with("error (permission-denied): '../outside/secret.txt' is outside the workspace"),
        "{}",
        run.stderr
    );
    assert_eq!(std::fs::read(sb.ws.join("README.md")).unwrap(), before);
}

#[test]
fn a_dollar_mention_activates_the_skill_before_the_model_is_asked() {
    let sb = Sandbox::new();
    release_notes(&sb);
    sb.trust();
    let server = ModelServer::start(Flavor::OpenAi, vec![Step::Reply(Reply::text("Drafted."))]);
    let task = "use $release-notes for v1.0 (not $HOME, not $no-such-skill), then $release-notes again";
    let run = session(&sb, &server, task);
    assert_eq!(run.code, 0, "{}", fail(&run));
    assert!(run.stderr.contains("use_skill"), "the call is shown like any other: {}", run.stderr);
    let reqs = server.requests();
    assert_eq!(reqs.len(), 1);
    let msgs = reqs[0].body["messages"].as_array().unwrap();
    let roles: Vec<&str> = msgs.iter().map(|m| m["role"].as_str().unwrap()).collect();
    assert_eq!(roles, ["system", "user", "assistant", "tool"], "one activation, once");
    assert_eq!(msgs[1]["content"], task);
    let call = &msgs[2]["tool_calls"][0];
    assert_eq!(call["function"]["name"], "use_skill");
    let args: Value = serde_json::from_str(call["function"]["arguments"].as_str().unwrap()).unwrap();
    assert_eq!(args, json!({"name": "release-notes", "action": "activate"}));
    assert_eq!(msgs[3]["tool_call_id"], call["id"], "the result answers the call");
    let result = msgs[3]["content"].as_str().unwrap();
    assert!(result.contains("INSTRUCTION-MARKER-7319"), "{result}");
}
