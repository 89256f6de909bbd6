//! The interactive session: line editing and history, slash commands, Ctrl-C stopping the
//! current turn rather than the session, and questions from plugins answered at the prompt.

use super::render::{Style, Terminal};
use super::report::report;
use super::setup::Env;
use crate::agent::Agent;
use crate::capabilities::context::unfinished_items;
use crate::llm::Client;
use rustyline::error::ReadlineError;
use rustyline::history::DefaultHistory;
use std::io::IsTerminal;

const HELP: &str = "\
Type a task and press Enter. While the agent works, Ctrl-C stops the current turn.
  /help             this help
  /status           model, context used and budget, compactions, snapshot, todo items
  /tools            the tools the model can use
  /mcp              MCP servers: starting, ready (with their tools) or failed, and why
  /compact [--drop] shrink old tool results; --drop also summarises low-importance turns
  /save [label]     set a snapshot checkpoint here
  /restore          summarise everything since the checkpoint (or your last message) and collapse it
  /unsave           clear the checkpoint
  /undo             put back the files changed by the latest turn that changed files
  /rewind [N]       list the file checkpoints; with N, put the files back as before checkpoint N
                    and trim the conversation to before that turn
  /clear            forget the conversation, todo list, thinking notes, snapshots and read files
  /resume [ID]      list the saved sessions; with an id (or its start), go on with that one
  /exit             leave (also /quit or Ctrl-D)";

/// What the person typed.
#[derive(Debug, PartialEq, Eq)]
pub enum Input<'a> {
    Empty,
    Task(&'a str),
    Help,
    Status,
    Tools,
    Mcp,
    Clear,
    /// /compact, with --drop.
    Compact(bool),
    /// /save, with an optional label.
    Save(&'a str),
    Restore,
    Unsave,
    /// /undo: the latest file checkpoint.
    Undo,
    /// /rewind, with a checkpoint number (none: list them).
    Rewind(Option<u64>),
    /// /resume, with an optional session id.
    Resume(&'a str),
    Exit,
    Unknown(&'a str),
}

pub fn parse(line: &str) -> Input<'_> {
    let t = line.trim();
    if t.is_empty() {
        return Input::Empty;
    }
    if !t.starts_with('/') {
        return Input::Task(t);
    }
    let (cmd, rest) = t.split_once(char::is_whitespace).map_or((t, ""), |(c, r)| (c, r.trim()));
    match cmd {
        "/compact" => match rest {
            "" => Input::Compact(false),
            "--drop" => Input::Compact(true),
            _ => Input::Unknown(t),
        },
        "/save" => Input::Save(rest),
        "/restore" => Input::Restore,
        "/resume" => Input::Resume(rest),
        "/unsave" => Input::Unsave,
        "/undo" if rest.is_empty() => Input::Undo,
        "/rewind" if rest.is_empty() => Input::Rewind(None),
        "/rewind" => rest.parse().map_or(Input::Unknown(t), |n| Input::Rewind(Some(n))),
        "/help" | "/?" => Input::Help,
        "/status" => Input::Status,
        "/tools" => Input::Tools,
        "/mcp" => Input::Mcp,
        "/clear" | "/new" => Input::Clear,
        "/exit" | "/quit" => Input::Exit,
        other => Input::Unknown(other),
    }
}

fn history_path() -> Option<std::path::PathBuf> {
    crate::config::user_dir().map(|d| d.join("repl_history"))
}

/// Runs the session until /exit or end of input. Returns the exit code (0).
pub async fn run(
    agent: &mut Agent<'_>,
    env: &Env,
    client: &Client,
    style: Style,
    mcp: Option<&crate::mcp::client::Manager>,
) -> i32 {
    let mut editor = match rustyline::Editor::<super::slash::SlashHelper, DefaultHistory>::new() {
        Ok(mut e) => {
            e.set_helper(Some(super::slash::SlashHelper));
            e
        }
        Err(e) => {
            eprintln!("error: cannot start line editing: {e}");
            return 1;
        }
    };
    let history = history_path();
    if let Some(h) = &history {
        let _ = editor.load_history(h);
    }
    let cfg = client.config();
    let saved = agent.session_id().map(|id| format!(" · session {id}")).unwrap_or_default();
    eprintln!(
        "{}corral{} · {} at {} · {}{saved} · /help for commands",
        style.bold,
        style.reset,
        cfg.model,
        cfg.base_url,
        env.session.roots().workspace().path.display()
    );
    loop {
        let line = match editor.readline("› ") {
            Ok(l) => l,
            Err(ReadlineError::Interrupted) => {
                eprintln!("(Ctrl-D or /exit to leave)");
                continue;
            }
            Err(ReadlineError::Eof) => break,
            Err(e) => {
                eprintln!("error: cannot read input: {e}");
                return 1;
            }
        };
        let _ = editor.add_history_entry(line.as_str());
        match parse(&line) {
            Input::Empty => {}
            Input::Exit => break,
            Input::Help => eprintln!("{HELP}"),
            Input::Mcp => eprint!("{}", super::mcp_config::status_text(mcp)),
            Input::Tools => {
                for (t, p) in env.registry.tools() {
                    let text =
                        format!("{} [{}]", crate::agent::prompt::first_sentence(&t.description), p.info.name);
                    let lines = super::render::wrap(&crate::termtext::clean(&text), 60);
                    for (i, line) in lines.iter().enumerate() {
                        let name = if i == 0 { t.name.as_str() } else { "" };
                        eprintln!("{}{name:18}{} {line}", style.bold, style.reset);
                    }
                }
                if agent.tools().offers_skills() {
                    let names: Vec<&str> = env.skills.all().iter().map(|k| k.name.as_str()).collect();
                    eprintln!(
                        "{}{:18}{} activate, load from or run a script of a skill{}",
                        style.bold,
                        crate::agent::use_skill::NAME,
                        style.reset,
                        format_args!("{} [skills: {}]{}", style.dim, names.join(", "), style.reset)
                    );
                }
            }
            Input::Status => {
                let window = context_window(env, client).await;
                let branches = branches_line(&agent.running_branches());
                eprintln!("{}\nwindow:     {window}\nbranches:   {branches}", status(agent, env, client));
            }
            Input::Clear => {
                agent.clear();
                eprintln!("cleared: conversation, todo list, thinking notes, snapshots and read files");
            }
            Input::Compact(drop) => {
                let mut term = Terminal::new(style, false, false);
                // The figures /status shows: the next request's size in the provider's tokens.
                let before = agent.context_status().estimate;
                match agent.compact(drop, &mut term).await {
                    Ok(_) => {
                        let after = agent.context_status().estimate;
                        eprintln!(
                            "compacted: context {before} -> {after} tokens, {} saved (as /status counts them)",
                            before.saturating_sub(after)
                        )
                    }
                    Err(e) => eprintln!("error: {}", crate::redact::text(&e.to_string())),
                }
            }
            Input::Save(label) => {
                let label = if label.is_empty() { "manual" } else { label };
                match agent.save(label) {
                    Ok(()) => eprintln!("checkpoint '{label}' set; /restore collapses everything after it"),
                    Err(e) => eprintln!("error: {}", crate::redact::text(&e.to_string())),
                }
            }
            Input::Restore => match agent.restore().await {
                Ok(what) => eprintln!("{what}"),
                Err(e) => eprintln!("error: {}", crate::redact::text(&e.to_string())),
            },
            Input::Resume("") => eprintln!("{}", super::sessions::recent(env, agent.session_id())),
            Input::Resume(id) => {
                let choice = super::sessions::Choice::Resume(Some(id));
                match super::sessions::begin(agent, env, client, choice, false) {
                    Ok(notes) => {
                        for n in notes {
                            eprintln!("warning: {}", crate::redact::text(&n));
                        }
                        eprintln!(
                            "resumed session {}: {} messages",
                            agent.session_id().unwrap_or(id),
                            agent.transcript().len()
                        );
                    }
                    Err(e) => eprintln!("error: {}", crate::redact::text(&e)),
                }
            }
            Input::Unsave => match agent.unsave() {
                Ok(label) => eprintln!("checkpoint '{label}' cleared"),
                Err(e) => eprintln!("error: {}", crate::redact::text(&e.to_string())),
            },
            input @ (Input::Undo | Input::Rewind(_)) => {
                let rewind = if let Input::Rewind(n) = input { Some(n) } else { None };
                let mut confirm = |q: &str| {
                    editor
                        .readline(q)
                        .is_ok_and(|a| matches!(a.trim().to_ascii_lowercase().as_str(), "y" | "yes"))
                };
                eprint!("{}", super::undo::repl(agent, rewind, &mut confirm));
            }
            Input::Unknown(c) => match super::slash::did_you_mean(c) {
                Some(near) => eprintln!("unknown command {c}; did you mean {near}? /help lists the commands"),
                None => eprintln!("unknown command {c}; /help lists the commands"),
            },
            Input::Task(task) => {
                let mut term = Terminal::new(style, false, std::io::stderr().is_terminal());
                let r = agent.run(task, &mut term).await;
                term.finish();
                report(&r, &mut term, agent.config().max_turns);
                if r.outcome == crate::agent::Outcome::Done && !term.streamed_answer {
                    print!("{}", super::report::final_answer(&r.answer, style));
                }
                super::cron::between_turns(env.session.local().path(), &env.session.roots().workspace().path)
                    .await;
            }
        }
    }
    eprintln!("{}", summary(agent));
    if let Some(h) = &history {
        if let Some(dir) = h.parent() {
            let _ = std::fs::create_dir_all(dir);
        }
        let _ = editor.save_history(h);
    }
    0
}

/// What the session did, for leaving it.
fn summary(agent: &Agent<'_>) -> String {
    let t = &agent.totals;
    format!(
        "session: {} model calls, {} tokens in / {} out, {} tool calls ({} failed)",
        t.llm_calls, t.input_tokens, t.output_tokens, t.tool_calls, t.tool_errors
    )
}

/// The context window: the setting, else what the server's model list says.
async fn context_window(env: &Env, client: &Client) -> String {
    match env.settings.model.max_context_tokens {
        Some(n) => format!("{n} tokens (set by max_context_tokens)"),
        None => match client.context_window().await {
            Some(n) => format!("{n} tokens (from the server's model list)"),
            None => "unknown (the server does not say; set --max-context-tokens)".to_string(),
        },
    }
}

fn status(agent: &mut Agent<'_>, env: &Env, client: &Client) -> String {
    let c = agent.context_status();
    let t = &agent.totals;
    let cfg = client.config();
    let todo = env.session.sections().get("todo").map(|b| unfinished_items(&b)).unwrap_or(0);
    let waiting = env.session.local().read("continue.md").ok().flatten().is_some();
    let budget = match c.budget {
        Some(b) => format!("{} of a {b}-token budget ({}%)", c.estimate, c.estimate * 100 / b.max(1)),
        None => format!("{} (no budget: the window is unknown)", c.estimate),
    };
    let snapshot = match (&c.checkpoint, c.dirty.is_empty()) {
        (Some(l), true) => format!("checkpoint '{l}'"),
        (Some(l), false) => format!("checkpoint '{l}', dirty ({})", c.dirty.join(", ")),
        (None, _) => "no checkpoint".to_string(),
    };
    format!(
        "model:      {} ({})\nworkspace:  {}\nturns:      {}\nmodel calls: {}, tokens in {} / out {}\n\
         tool calls: {} ({} failed)\ncontext:    {budget}, {} messages\n\
         compaction: {} so far ({} after a refusal), {} turns summarised\n\
         snapshots:  {snapshot}, {} restored\ntodo:       {todo} unfinished\ncontinue:   {}\n\
         session:    {}",
        cfg.model,
        cfg.base_url,
        env.session.roots().workspace().path.display(),
        t.turns,
        t.llm_calls,
        t.input_tokens,
        t.output_tokens,
        t.tool_calls,
        t.tool_errors,
        c.messages,
        c.compactions,
        c.reactive_compactions,
        c.turns_dropped,
        c.restores,
        if waiting { "a continue-here note is waiting" } else { "none" },
        agent.session_id().unwrap_or("not saved"),
    )
}

/// The running branches, one `id (turn n, s): description` each, or "none running".
fn branches_line(running: &crate::agent::branch::Running) -> String {
    let list = running.list();
    if list.is_empty() {
        return "none running".to_string();
    }
    list.iter()
        .map(|(id, b)| {
            let what = crate::termtext::clean(&b.description);
            format!("{id} (turn {}, {} s): {what}", b.turns, b.started.elapsed().as_secs())
        })
        .collect::<Vec<_>>()
        .join("; ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slash_commands_parse() {
        assert_eq!(parse("  "), Input::Empty);
        assert_eq!(parse(" fix it "), Input::Task("fix it"));
        assert_eq!(parse("/status"), Input::Status);
        assert_eq!(parse("/quit"), Input::Exit);
        assert_eq!(parse("/clear now"), Input::Clear);
        assert_eq!(parse("/frob"), Input::Unknown("/frob"));
        assert_eq!(parse("/compact"), Input::Compact(false));
        assert_eq!(parse("/compact  --drop"), Input::Compact(true));
        assert_eq!(parse("/compact --nope"), Input::Unknown("/compact --nope"));
        assert_eq!(parse("/save auth bug"), Input::Save("auth bug"));
        assert_eq!(parse("/save"), Input::Save(""));
        assert_eq!((parse("/restore"), parse("/unsave")), (Input::Restore, Input::Unsave));
        assert_eq!((parse("/undo"), parse("/rewind")), (Input::Undo, Input::Rewind(None)));
        assert_eq!(parse("/rewind 3"), Input::Rewind(Some(3)));
        assert_eq!(parse("/rewind x"), Input::Unknown("/rewind x"));
        assert_eq!((parse("/resume"), parse("/resume 2026")), (Input::Resume(""), Input::Resume("2026")));
    }
}
