//! `notebook_edit`: replace, insert or delete a cell of a Jupyter notebook (nbformat 4), and
//! the readable view of a notebook that read_file shows instead of its JSON.
//!
//! Rules: the notebook is parsed, changed as a JSON tree and written back as nbformat writes
//! it (keys sorted, one-space indent, a final newline), so its metadata and the other cells
//! stay as they were. An edited or inserted code cell has its outputs cleared and its
//! execution count reset. Cells get an `id` when the notebook is nbformat 4.5 or later.

use corral_plugin_sdk::args::{opt_str, opt_u64, req_str};
use corral_plugin_sdk::host::Workspace;
use corral_plugin_sdk::paths::{Resolver, io_error};
use corral_plugin_sdk::{ErrorKind, Output, Spec, ToolError, Value, json};
use serde_json::Map;

/// Largest notebook edited.
const MAX_NOTEBOOK_BYTES: u64 = 32 * 1024 * 1024;

pub fn spec() -> Spec {
    Spec::new(
        "notebook_edit",
        "Edit a Jupyter notebook (.ipynb) cell: edit_mode replace (default), insert or delete; the cell is \
         chosen by cell_id or 0-based cell_index as read_file shows them (insert goes after cell_id, or at \
         cell_index, or at the end). An edited code cell's outputs are cleared. The notebook must have been read.",
        json!({
            "type": "object",
            "properties": {
                "notebook_path": {"type": "string", "description": "The .ipynb file."},
                "cell_id": {"type": "string", "description": "The cell's id."},
                "cell_index": {"type": "integer", "minimum": 0, "description": "The cell's 0-based index."},
                "new_source": {"type": "string", "description": "The cell's new source (replace, insert)."},
                "cell_type": {"type": "string", "enum": ["code", "markdown"], "description": "Default: the cell's type, or code for insert."},
                "edit_mode": {"type": "string", "enum": ["replace", "insert", "delete"]}
            },
            "required": ["notebook_path"]
        }),
    )
    .writes(true, true)
}

fn bad(msg: impl Into<String>) -> ToolError {
    ToolError::invalid_args(msg)
}

/// The notebook's JSON, checked to be nbformat 4 with a `cells` array.
pub fn parse(bytes: &[u8], shown: &str) -> Result<Value, ToolError> {
    let nb: Value = serde_json::from_slice(bytes).map_err(|e| {
        ToolError::new(ErrorKind::Unsupported, format!("'{shown}' is not valid notebook JSON: {e}"))
    })?;
    if nb.get("nbformat").and_then(Value::as_u64) != Some(4) || !nb.get("cells").is_some_and(Value::is_array)
    {
        return Err(ToolError::new(
            ErrorKind::Unsupported,
            format!(
                "'{shown}' is not an nbformat 4 notebook (it needs \"nbformat\": 4 and a \"cells\" array)"
            ),
        ));
    }
    Ok(nb)
}

/// A cell's source as one string (nbformat allows a string or a list of lines).
fn source_of(cell: &Value) -> String {
    match cell.get("source") {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(parts)) => parts.iter().filter_map(Value::as_str).collect(),
        _ => String::new(),
    }
}

/// A source as nbformat writes it: lines, each but the last keeping its `\n`.
fn source_lines(source: &str) -> Value {
    Value::Array(source.split_inclusive('\n').map(|l| Value::String(l.to_string())).collect())
}

/// The readable view read_file shows: a header, then each cell numbered with its type and
/// id, its source, and a count of its outputs.
pub fn view(bytes: &[u8], shown: &str) -> Result<String, ToolError> {
    let nb = parse(bytes, shown)?;
    let cells = nb["cells"].as_array().map_or(&[][..], Vec::as_slice);
    let minor = nb.get("nbformat_minor").and_then(Value::as_u64).unwrap_or(0);
    let lang = nb
        .pointer("/metadata/kernelspec/language")
        .or_else(|| nb.pointer("/metadata/language_info/name"))
        .and_then(Value::as_str)
        .unwrap_or("unknown");
    let mut out = format!(
        "Jupyter notebook (nbformat 4.{minor}, language {lang}), {} cells; edit cells with notebook_edit\n",
        cells.len()
    );
    for (i, cell) in cells.iter().enumerate() {
        let kind = cell.get("cell_type").and_then(Value::as_str).unwrap_or("?");
        let id = cell.get("id").and_then(Value::as_str).map(|id| format!(" id={id}")).unwrap_or_default();
        out.push_str(&format!("\n--- cell {i} [{kind}]{id} ---\n"));
        let src = source_of(cell);
        out.push_str(&src);
        if !src.is_empty() && !src.ends_with('\n') {
            out.push('\n');
        }
        if let Some(outputs) = cell.get("outputs").and_then(Value::as_array).filter(|o| !o.is_empty()) {
            out.push_str(&format!(
                "[{} output{}]\n",
                outputs.len(),
                if outputs.len() == 1 { "" } else { "s" }
            ));
        }
    }
    Ok(out)
}

/// The notebook as nbformat writes it.
pub fn serialize(nb: &Value) -> Result<Vec<u8>, ToolError> {
    let mut out = Vec::new();
    let fmt = serde_json::ser::PrettyFormatter::with_indent(b" ");
    let mut ser = serde_json::Serializer::with_formatter(&mut out, fmt);
    serde::Serialize::serialize(nb, &mut ser)
        .map_err(|e| ToolError::new(ErrorKind::Internal, format!("cannot encode the notebook: {e}")))?;
    out.push(b'\n');
    Ok(out)
}

/// A fresh cell id, unique in `cells`: 8 hex digits derived from the source and position.
fn new_id(cells: &[Value], source: &str, index: usize) -> String {
    let mut seed = xxhash_rust::xxh3::xxh3_64(format!("{index}\0{source}").as_bytes());
    loop {
        let id = format!("{:08x}", seed >> 32);
        if !cells.iter().any(|c| c.get("id").and_then(Value::as_str) == Some(id.as_str())) {
            return id;
        }
        seed = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15).wrapping_add(1);
    }
}

fn blank_cell(kind: &str) -> Map<String, Value> {
    let mut c = Map::new();
    c.insert("cell_type".into(), json!(kind));
    c.insert("metadata".into(), json!({}));
    c
}

/// Makes `cell` a cell of `kind` holding `source`; a code cell's outputs are cleared.
fn set_cell(cell: &mut Map<String, Value>, kind: &str, source: &str) {
    cell.insert("cell_type".into(), json!(kind));
    cell.insert("source".into(), source_lines(source));
    cell.entry("metadata").or_insert_with(|| json!({}));
    if kind == "code" {
        cell.insert("outputs".into(), json!([]));
        cell.insert("execution_count".into(), Value::Null);
        cell.remove("attachments");
    } else {
        cell.remove("outputs");
        cell.remove("execution_count");
    }
}

pub fn run(ws: &dyn Workspace, args: &Value) -> Result<Output, ToolError> {
    let path_in = req_str(args, "notebook_path")?;
    let mode = opt_str(args, "edit_mode")?.filter(|m| !m.is_empty()).unwrap_or("replace");
    let cell_id = opt_str(args, "cell_id")?.filter(|c| !c.is_empty());
    let cell_index = opt_u64(args, "cell_index")?.map(|i| usize::try_from(i).unwrap_or(usize::MAX));
    let new_source = opt_str(args, "new_source")?;
    let cell_type = opt_str(args, "cell_type")?.filter(|t| !t.is_empty());
    if let Some(t) = cell_type
        && t != "code"
        && t != "markdown"
    {
        return Err(bad(format!("cell_type must be \"code\" or \"markdown\", got \"{t}\"")));
    }
    let resolver = Resolver::new(ws);
    let path = resolver.resolve(path_in)?;
    let shown = resolver.display(&path);
    let meta = std::fs::metadata(&path).map_err(|e| io_error(&shown, &e))?;
    if meta.len() > MAX_NOTEBOOK_BYTES {
        return Err(ToolError::new(
            ErrorKind::TooLarge,
            format!("'{shown}' is {} bytes; too large to edit", meta.len()),
        ));
    }
    let bytes = crate::common::fileio::read(&path).map_err(|e| io_error(&shown, &e))?;
    let mut nb = parse(&bytes, &shown)?;
    let with_ids = nb.get("nbformat_minor").and_then(Value::as_u64).unwrap_or(0) >= 5;
    let Some(cells) = nb.get_mut("cells").and_then(Value::as_array_mut) else {
        return Err(bad(format!("'{shown}' has no cells array")));
    };
    let find = |cells: &[Value]| -> Result<usize, ToolError> {
        if let Some(id) = cell_id {
            return cells.iter().position(|c| c.get("id").and_then(Value::as_str) == Some(id)).ok_or_else(
                || {
                    bad(format!("'{shown}' has no cell with id '{id}'"))
                        .with_hint("read the notebook to see its cell ids")
                },
            );
        }
        match cell_index {
            Some(i) if i < cells.len() => Ok(i),
            Some(i) => Err(bad(format!(
                "cell_index {i} is out of range: '{shown}' has {} cells (0 to {})",
                cells.len(),
                cells.len().saturating_sub(1)
            ))),
            None => Err(bad("give cell_id or cell_index to choose the cell")),
        }
    };
    let summary = match mode {
        "replace" => {
            let Some(src) = new_source else { return Err(bad("replace needs new_source")) };
            let i = find(cells)?;
            let Some(cell) = cells[i].as_object_mut() else {
                return Err(bad(format!("cell {i} is not an object")));
            };
            let kind = cell_type
                .map(str::to_string)
                .or_else(|| cell.get("cell_type").and_then(Value::as_str).map(str::to_string))
                .unwrap_or_else(|| "code".into());
            if kind != "code" && kind != "markdown" {
                return Err(bad(format!(
                    "cell {i} is a {kind} cell; give cell_type code or markdown to replace it"
                )));
            }
            set_cell(cell, &kind, src);
            format!("Replaced cell {i} ({kind})")
        }
        "insert" => {
            let src = new_source.unwrap_or("");
            let at = match (cell_id, cell_index) {
                (Some(_), _) => find(cells)? + 1,
                (None, Some(i)) if i <= cells.len() => i,
                (None, Some(i)) => {
                    return Err(bad(format!(
                        "cell_index {i} is past the end; '{shown}' has {} cells",
                        cells.len()
                    )));
                }
                (None, None) => cells.len(),
            };
            let kind = cell_type.unwrap_or("code");
            let mut cell = blank_cell(kind);
            set_cell(&mut cell, kind, src);
            if with_ids {
                cell.insert("id".into(), json!(new_id(cells, src, at)));
            }
            cells.insert(at, Value::Object(cell));
            format!("Inserted a {kind} cell at index {at}")
        }
        "delete" => {
            let i = find(cells)?;
            cells.remove(i);
            format!("Deleted cell {i}")
        }
        other => return Err(bad(format!("edit_mode must be replace, insert or delete, got \"{other}\""))),
    };
    let count = cells.len();
    let out = serialize(&nb)?;
    ws.write(&path, &out)?;
    Ok(Output::text(format!(
        "{summary} of {shown}; it now has {count} cells\n[checksum={}]",
        crate::common::checksum(&out)
    )))
}

#[cfg(test)]
mod tests;
