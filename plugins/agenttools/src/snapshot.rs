//! `snapshot`: lets the model collapse its own investigation. `save` sets a checkpoint,
//! `restore` replaces everything since it (or since the person's last message) with the
//! model's summary, `cancel` clears the checkpoint, `status` reports. The host does the
//! collapsing once the call returns, and keeps every summary in the system prompt.

use corral_plugin_sdk::args::{opt_bool, opt_str, req_str};
use corral_plugin_sdk::host::Snapshots;
use corral_plugin_sdk::{Capability, ErrorKind, Output, Spec, ToolError, Value, json};

/// Longest label, in characters.
pub const MAX_LABEL_CHARS: usize = 100;
/// Longest summary, in characters.
pub const MAX_SUMMARY_CHARS: usize = 4000;

pub fn spec() -> Spec {
    Spec::new(
        "snapshot",
        "Free context space by replacing a finished investigation with your own summary of it. \
         Typical use: `save` with a label before reading and searching through many files; when you have \
         the answer, `restore` with a `summary` of what you learned (file paths, line numbers, names, facts, \
         what is left to do). Every message since the checkpoint is then replaced by that summary, which \
         also stays in your system prompt for the rest of the session. Without a checkpoint, `restore` \
         collapses everything since the person's last message (or the last restore). If you changed \
         files or ran commands in that span, `restore` refuses unless `force` is true: then say in the \
         summary what you changed. `cancel` drops the checkpoint, `status` shows it. It changes nothing in \
         the workspace.",
        json!({
            "type": "object",
            "properties": {
                "action": {
                    "type": "string", "enum": ["save", "restore", "cancel", "status"],
                    "description": "save a checkpoint, restore (collapse into a summary), cancel it, or status"
                },
                "label": {
                    "type": "string", "maxLength": MAX_LABEL_CHARS,
                    "description": "Name of the work the checkpoint starts (needed for save)"
                },
                "summary": {
                    "type": "string", "maxLength": MAX_SUMMARY_CHARS,
                    "description": "For restore: what you learned, complete enough to continue without the \
                                    collapsed messages"
                },
                "force": {
                    "type": "boolean",
                    "description": "For restore: collapse even though files were changed in the span"
                }
            },
            "required": ["action"],
            "additionalProperties": false
        }),
    )
    .needs(Capability::Context)
    .idempotent(false)
}

fn limited<'a>(args: &'a Value, key: &str, max: usize) -> Result<Option<&'a str>, ToolError> {
    let Some(v) = opt_str(args, key)?.map(str::trim).filter(|v| !v.is_empty()) else { return Ok(None) };
    let n = v.chars().count();
    if n > max {
        return Err(ToolError::invalid_args(format!("'{key}' is {n} characters; the limit is {max}")));
    }
    Ok(Some(v))
}

fn host_error(kind: ErrorKind, message: String) -> ToolError {
    ToolError::new(kind, message)
}

pub fn run(host: &dyn Snapshots, args: &Value) -> Result<Output, ToolError> {
    let action = req_str(args, "action")?.trim().to_lowercase();
    let label = limited(args, "label", MAX_LABEL_CHARS)?;
    match action.as_str() {
        "save" => {
            let label = label.ok_or_else(|| {
                ToolError::invalid_args("save needs a 'label' naming the work the checkpoint starts")
            })?;
            host.save(label).map_err(|e| host_error(ErrorKind::Conflict, e))?;
            Ok(Output::text(format!(
                "Checkpoint '{label}' set. When you have what you need, call snapshot with action \"restore\" \
                 and a summary to collapse everything from here into it."
            )))
        }
        "restore" => {
            let summary = limited(args, "summary", MAX_SUMMARY_CHARS)?.ok_or_else(|| {
                ToolError::invalid_args(
                    "restore needs a 'summary': what you learned (paths, names, facts, what is left to do); it \
                     replaces the messages being collapsed",
                )
            })?;
            let force = opt_bool(args, "force")?.unwrap_or(false);
            host.restore(label, summary, force).map_err(|e| host_error(ErrorKind::Conflict, e))?;
            Ok(Output::text("Restore accepted; the host collapses the scope when this call returns."))
        }
        "cancel" => {
            let label = host.cancel().map_err(|e| host_error(ErrorKind::NotFound, e))?;
            Ok(Output::text(format!("Checkpoint '{label}' cleared; nothing was collapsed.")))
        }
        "status" => {
            let s = host.status();
            Ok(Output::text(
                json!({
                    "checkpoint": s.checkpoint,
                    "dirty": !s.dirty.is_empty(),
                    "changed_by": s.dirty,
                    "restores": s.restores,
                    "completed": s.completed,
                })
                .to_string(),
            ))
        }
        other => Err(ToolError::invalid_args(format!(
            "unknown action '{other}': use save, restore, cancel or status"
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use corral_plugin_sdk::host::FakeSnapshots;

    fn text(o: Output) -> String {
        o.text
    }

    #[test]
    fn save_then_restore_with_a_summary() {
        let h = FakeSnapshots::default();
        let e = run(&h, &json!({"action": "save"})).unwrap_err();
        assert!(e.message.contains("needs a 'label'"), "{}", e.message);
        let out = text(run(&h, &json!({"action": "save", "label": " auth bug "})).unwrap());
        assert!(out.starts_with("Checkpoint 'auth bug' set."), "{out}");
        let e = run(&h, &json!({"action": "save", "label": "again"})).unwrap_err();
        assert_eq!(e.kind, ErrorKind::Conflict);
        assert!(run(&h, &json!({"action": "restore"})).unwrap_err().message.contains("needs a 'summary'"));
        run(&h, &json!({"action": "restore", "summary": "null check missing in parser.rs:142"})).unwrap();
        assert_eq!(
            *h.log.borrow(),
            vec!["save:auth bug", "save:again", "restore:-:null check missing in parser.rs:142:false"]
        );
        let status: Value =
            serde_json::from_str(&text(run(&h, &json!({"action": "status"})).unwrap())).unwrap();
        assert_eq!(
            status,
            json!({"checkpoint": null, "dirty": false, "changed_by": [], "restores": 1, "completed": ["auth bug"]})
        );
    }

    #[test]
    fn a_dirty_scope_needs_force_and_limits_are_checked() {
        let h = FakeSnapshots::default();
        h.state.borrow_mut().dirty = vec!["edit_file".into()];
        let e = run(&h, &json!({"action": "restore", "summary": "s"})).unwrap_err();
        assert!(e.message.contains("dirty: edit_file"), "{}", e.message);
        run(&h, &json!({"action": "restore", "summary": "s", "force": true, "label": "fix"})).unwrap();
        let e = run(&h, &json!({"action": "restore", "summary": "x".repeat(4001)})).unwrap_err();
        assert!(e.message.contains("limit is 4000"), "{}", e.message);
        let e = run(&h, &json!({"action": "save", "label": "l".repeat(101)})).unwrap_err();
        assert!(e.message.contains("limit is 100"), "{}", e.message);
        assert_eq!(run(&h, &json!({"action": "cancel"})).unwrap_err().kind, ErrorKind::NotFound);
        assert!(run(&h, &json!({"action": "rewind"})).unwrap_err().message.contains("unknown action"));
    }
}
