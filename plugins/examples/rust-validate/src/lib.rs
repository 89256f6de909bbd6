//! validate_config: a corral tool plugin that checks the syntax of JSON, TOML and YAML files
//! in the workspace and reports the first error of each with its line and column.

mod check;

wit_bindgen::generate!({ path: "../../../wit/0.1", world: "tool-plugin" });

use check::{Format, check};
use corral::plugin::types::{ContentPart, ErrorKind, ToolError, ToolHints, ToolOutput, ToolSpec};
use corral::plugin::workspace;
use exports::corral::plugin::tool::Guest;
use std::path::{Path, PathBuf};

const TOOL: &str = "validate_config";
/// Files larger than this are reported, not parsed.
const MAX_FILE_BYTES: u64 = 4 << 20;
/// Folders a walk never enters (besides hidden ones).
const SKIP_DIRS: &[&str] = &["node_modules", "target", "dist", "build", "__pycache__", "vendor"];

struct Plugin;

export!(Plugin);

impl Guest for Plugin {
    fn describe() -> Vec<ToolSpec> {
        vec![ToolSpec {
            name: TOOL.into(),
            description: "Checks the syntax of JSON, TOML and YAML files and reports the first error in each \
                          with its line and column. Give files or folders; folders are searched recursively \
                          (hidden folders, node_modules and target are skipped). Use it after editing \
                          configuration files."
                .into(),
            input_schema: serde_json::json!({
                "type": "object",
                "properties": {
                    "paths": {
                        "type": "array",
                        "items": {"type": "string"},
                        "description": "Files or folders, relative to the workspace root (default: the whole workspace)"
                    },
                    "max_files": {
                        "type": "integer", "minimum": 1, "maximum": 5000,
                        "description": "Most files to check (default 500)"
                    }
                },
                "additionalProperties": false
            })
            .to_string(),
            hints: ToolHints { read_only: true, destructive: false, idempotent: true, open_world: false },
            capabilities: vec![],
        }]
    }

    fn invoke(name: String, args_json: String) -> Result<ToolOutput, ToolError> {
        if name != TOOL {
            return Err(err(ErrorKind::NotFound, format!("this plugin has no tool named '{name}'"), None));
        }
        let args: serde_json::Value = serde_json::from_str(&args_json)
            .map_err(|e| err(ErrorKind::InvalidArgs, format!("the arguments are not JSON: {e}"), None))?;
        let paths: Vec<String> = match args.get("paths") {
            None => vec![".".into()],
            Some(serde_json::Value::Array(items)) if !items.is_empty() => {
                items.iter().map(|p| p.as_str().map(str::to_string)).collect::<Option<_>>().ok_or_else(
                    || err(ErrorKind::InvalidArgs, "'paths' must be a list of strings".into(), None),
                )?
            }
            Some(_) => {
                return Err(err(
                    ErrorKind::InvalidArgs,
                    "'paths' must be a non-empty list of strings".into(),
                    Some("omit it to check the whole workspace"),
                ));
            }
        };
        let max_files = match args.get("max_files") {
            None => 500,
            Some(v) => v.as_u64().filter(|n| (1..=5000).contains(n)).ok_or_else(|| {
                err(ErrorKind::InvalidArgs, "'max_files' must be an integer from 1 to 5000".into(), None)
            })? as usize,
        };
        let root = workspace_root();
        let mut files = Vec::new();
        for p in &paths {
            collect(&root, p, &mut files)?;
        }
        files.sort();
        files.dedup();
        Ok(ToolOutput {
            content: vec![ContentPart::Text(report(&root, &files, max_files))],
            truncated: false,
        })
    }
}

fn err(kind: ErrorKind, message: String, hint: Option<&str>) -> ToolError {
    ToolError { kind, message, hint: hint.map(str::to_string) }
}

fn workspace_root() -> PathBuf {
    workspace::roots().into_iter().next().map(|r| PathBuf::from(r.path)).unwrap_or_else(|| "/".into())
}

/// `path` as the model should see it: relative to the workspace root when inside it.
fn shown(root: &Path, path: &Path) -> String {
    match path.strip_prefix(root) {
        Ok(rel) if rel.as_os_str().is_empty() => ".".into(),
        Ok(rel) => rel.display().to_string(),
        Err(_) => path.display().to_string(),
    }
}

/// Adds the checkable files named by `input` (a file, or a folder searched recursively).
fn collect(root: &Path, input: &str, out: &mut Vec<PathBuf>) -> Result<(), ToolError> {
    let path = if Path::new(input).is_absolute() { PathBuf::from(input) } else { root.join(input) };
    let meta = std::fs::metadata(&path).map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => err(
            ErrorKind::NotFound,
            format!("'{input}' does not exist"),
            Some("paths are relative to the workspace root; list_files shows what is there"),
        ),
        std::io::ErrorKind::PermissionDenied => err(
            ErrorKind::PermissionDenied,
            format!("'{input}' is outside the workspace"),
            Some("only files inside the workspace can be checked"),
        ),
        _ => err(ErrorKind::Io, format!("cannot read '{input}': {e}"), None),
    })?;
    if meta.is_file() {
        if Format::of(input).is_none() {
            return Err(err(
                ErrorKind::Unsupported,
                format!("'{input}' is not a JSON, TOML or YAML file (by its extension)"),
                Some("files ending in .json, .toml, .yaml or .yml are checked"),
            ));
        }
        out.push(path);
        return Ok(());
    }
    walk(&path, out);
    Ok(())
}

fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let Ok(kind) = entry.file_type() else { continue };
        if kind.is_dir() {
            if !name.starts_with('.') && !SKIP_DIRS.contains(&name.as_str()) {
                walk(&entry.path(), out);
            }
        } else if kind.is_file() && Format::of(&name).is_some() {
            out.push(entry.path());
        }
    }
}

/// Checks each file and writes the report: problems first, then the files that passed.
fn report(root: &Path, files: &[PathBuf], max_files: usize) -> String {
    if files.is_empty() {
        return "No JSON, TOML or YAML files found.".into();
    }
    let mut bad = Vec::new();
    let mut good = Vec::new();
    for path in files.iter().take(max_files) {
        let name = shown(root, path);
        let format = Format::of(&name).unwrap_or(Format::Json);
        let size = std::fs::metadata(path).map(|m| m.len()).unwrap_or(0);
        if size > MAX_FILE_BYTES {
            bad.push(format!("SKIPPED {name}: {size} bytes is over the {MAX_FILE_BYTES}-byte limit"));
            continue;
        }
        let text = match std::fs::read(path) {
            Ok(bytes) => match String::from_utf8(bytes) {
                Ok(t) => t,
                Err(_) => {
                    bad.push(format!("INVALID {name} ({}): not UTF-8 text", format.name()));
                    continue;
                }
            },
            Err(e) => {
                bad.push(format!("UNREADABLE {name}: {e}"));
                continue;
            }
        };
        match check(format, &text) {
            Ok(()) => good.push(format!("ok {name} ({})", format.name())),
            Err(p) => bad.push(format!(
                "INVALID {name} ({}) line {}, column {}: {}",
                format.name(),
                p.line,
                p.column,
                p.message
            )),
        }
    }
    let checked = files.len().min(max_files);
    let mut out = format!("{checked} file(s) checked: {} valid, {} with problems", good.len(), bad.len());
    if files.len() > max_files {
        out.push_str(&format!(" ({} more not checked: raise max_files)", files.len() - max_files));
    }
    out.push('\n');
    for line in bad.iter().chain(&good) {
        out.push_str(line);
        out.push('\n');
    }
    out
}
