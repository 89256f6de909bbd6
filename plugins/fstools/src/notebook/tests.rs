//! notebook_edit's rules, and its results checked by the real nbformat validator.

use super::*;
use crate::testutil::*;
use corral_plugin_sdk::host::fake::FakeWorkspace;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

const NB: &str = r##"{
 "cells": [
  {
   "cell_type": "markdown",
   "id": "intro",
   "metadata": {},
   "source": [
    "# Title\n",
    "Some text"
   ]
  },
  {
   "cell_type": "code",
   "execution_count": 3,
   "id": "calc",
   "metadata": {"tags": ["keep"]},
   "outputs": [
    {"name": "stdout", "output_type": "stream", "text": ["2\n"]}
   ],
   "source": ["print(1 + 1)"]
  }
 ],
 "metadata": {
  "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"}
 },
 "nbformat": 4,
 "nbformat_minor": 5
}
"##;

fn nb() -> (tempfile::TempDir, FakeWorkspace, PathBuf) {
    let (dir, ws) = setup();
    put(dir.path(), "n.ipynb", NB, 0);
    let p = dir.path().join("n.ipynb");
    ws.note_read(&p);
    (dir, ws, p)
}

fn load(p: &Path) -> Value {
    serde_json::from_str(&fs::read_to_string(p).unwrap()).unwrap()
}

/// nbformat 5.10.4 and its dependencies, installed once per user with pip under the
/// toolchain cache; `None` (with the reason printed) when Python or pip is absent.
fn nbformat_dir() -> Option<PathBuf> {
    let base = std::env::var_os("CORRAL_TOOLCHAINS")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache/corral/toolchains")))?;
    let dir = base.join("nbformat-5.10.4");
    if dir.join(".done").exists() {
        return Some(dir);
    }
    let ok = Command::new("python3")
        .args(["-m", "pip", "install", "--quiet", "--disable-pip-version-check", "--target"])
        .arg(&dir)
        .arg("nbformat==5.10.4")
        .status()
        .is_ok_and(|s| s.success());
    if !ok {
        eprintln!("skipping the nbformat validation: python3 -m pip could not install nbformat==5.10.4");
        return None;
    }
    fs::write(dir.join(".done"), "").ok()?;
    Some(dir)
}

/// Runs nbformat's own validator on `p`.
fn validate(p: &Path) {
    let Some(dir) = nbformat_dir() else { return };
    let out = Command::new("python3")
        .env("PYTHONPATH", &dir)
        .args(["-c", "import sys, nbformat; nbformat.validate(nbformat.read(sys.argv[1], as_version=4)); print('valid')"])
        .arg(p)
        .output()
        .unwrap();
    assert!(out.status.success(), "nbformat refused it: {}", String::from_utf8_lossy(&out.stderr));
}

#[test]
fn the_view_numbers_cells_with_type_id_and_outputs() {
    let v = view(NB.as_bytes(), "n.ipynb").unwrap();
    assert_eq!(
        v,
        "Jupyter notebook (nbformat 4.5, language python), 2 cells; edit cells with notebook_edit\n\n\
         --- cell 0 [markdown] id=intro ---\n# Title\nSome text\n\n\
         --- cell 1 [code] id=calc ---\nprint(1 + 1)\n[1 output]\n"
    );
    assert!(view(b"{\"cells\": []}", "x.ipynb").unwrap_err().message.contains("not an nbformat 4 notebook"));
}

#[test]
fn replacing_a_code_cell_clears_its_outputs_and_keeps_the_rest() {
    let (_d, ws, p) = nb();
    let out =
        run(&ws, &json!({"notebook_path": "n.ipynb", "cell_id": "calc", "new_source": "x = 2\nprint(x)"}))
            .unwrap();
    assert!(out.text.starts_with("Replaced cell 1 (code) of n.ipynb; it now has 2 cells"), "{}", out.text);
    let v = load(&p);
    assert_eq!(v["cells"][1]["source"], json!(["x = 2\n", "print(x)"]));
    assert_eq!(v["cells"][1]["outputs"], json!([]));
    assert_eq!(v["cells"][1]["execution_count"], Value::Null);
    assert_eq!(v["cells"][1]["metadata"], json!({"tags": ["keep"]}));
    assert_eq!(v["metadata"]["kernelspec"]["name"], "python3");
    assert_eq!(v["cells"][0]["source"], json!(["# Title\n", "Some text"]));
    assert!(fs::read_to_string(&p).unwrap().starts_with("{\n \"cells\": [\n  {\n"), "nbformat's layout");
    validate(&p);
}

#[test]
fn insert_by_index_or_after_an_id_and_delete() {
    let (_d, ws, p) = nb();
    run(&ws, &json!({"notebook_path": "n.ipynb", "edit_mode": "insert", "cell_index": 0, "cell_type": "markdown", "new_source": "Top"})).unwrap();
    run(&ws, &json!({"notebook_path": "n.ipynb", "edit_mode": "insert", "cell_id": "intro", "new_source": "import os"})).unwrap();
    let v = load(&p);
    let types: Vec<&str> =
        v["cells"].as_array().unwrap().iter().map(|c| c["cell_type"].as_str().unwrap()).collect();
    assert_eq!(types, ["markdown", "markdown", "code", "code"]);
    assert_eq!(v["cells"][2]["source"], json!(["import os"]));
    assert_eq!(v["cells"][2]["outputs"], json!([]));
    let ids: Vec<&str> = v["cells"].as_array().unwrap().iter().map(|c| c["id"].as_str().unwrap()).collect();
    assert_eq!(ids.iter().collect::<std::collections::HashSet<_>>().len(), 4, "ids are unique: {ids:?}");
    validate(&p);
    let out = run(&ws, &json!({"notebook_path": "n.ipynb", "edit_mode": "delete", "cell_index": 0})).unwrap();
    assert!(out.text.starts_with("Deleted cell 0 of n.ipynb; it now has 3 cells"), "{}", out.text);
    assert_eq!(load(&p)["cells"][0]["id"], "intro");
    validate(&p);
}

#[test]
fn changing_the_type_converts_the_cell() {
    let (_d, ws, p) = nb();
    run(&ws, &json!({"notebook_path": "n.ipynb", "cell_index": 1, "cell_type": "markdown", "new_source": "now text"})).unwrap();
    let c = &load(&p)["cells"][1];
    assert_eq!(c["cell_type"], "markdown");
    assert!(c.get("outputs").is_none() && c.get("execution_count").is_none(), "{c}");
    validate(&p);
}

#[test]
fn bad_requests_are_refused_and_nothing_is_written() {
    let (_d, ws, p) = nb();
    let e = run(&ws, &json!({"notebook_path": "n.ipynb", "cell_id": "nope", "new_source": "x"})).unwrap_err();
    assert_eq!(e.message, "'n.ipynb' has no cell with id 'nope'");
    let e = run(&ws, &json!({"notebook_path": "n.ipynb", "cell_index": 9, "new_source": "x"})).unwrap_err();
    assert_eq!(e.message, "cell_index 9 is out of range: 'n.ipynb' has 2 cells (0 to 1)");
    let e = run(&ws, &json!({"notebook_path": "n.ipynb", "cell_index": 0})).unwrap_err();
    assert_eq!(e.message, "replace needs new_source");
    let e = run(
        &ws,
        &json!({"notebook_path": "n.ipynb", "cell_index": 0, "new_source": "x", "cell_type": "raw"}),
    )
    .unwrap_err();
    assert!(e.message.starts_with("cell_type must be"), "{}", e.message);
    assert_eq!(fs::read_to_string(&p).unwrap(), NB);
    // The read guard.
    let (dir, ws) = setup();
    put(dir.path(), "m.ipynb", NB, 0);
    let e = run(&ws, &json!({"notebook_path": "m.ipynb", "cell_index": 0, "new_source": "x"})).unwrap_err();
    assert!(e.message.contains("has not been read"), "{}", e.message);
}

#[test]
fn read_file_shows_a_notebook_as_numbered_cell_lines_with_the_file_checksum() {
    let (_d, ws, _p) = nb();
    let out = crate::read::run(&ws, &json!({"file_path": "n.ipynb"})).unwrap();
    assert!(
        out.text.starts_with("1: Jupyter notebook (nbformat 4.5, language python), 2 cells"),
        "{}",
        out.text
    );
    assert!(out.text.contains("\n3: --- cell 0 [markdown] id=intro ---\n4: # Title\n"), "{}", out.text);
    assert!(
        out.text.contains(&format!("[checksum={}]", crate::common::checksum(NB.as_bytes()))),
        "{}",
        out.text
    );
    // A broken notebook is shown as the text it is.
    let (dir, ws) = setup();
    put(dir.path(), "b.ipynb", "{not json", 0);
    let out = crate::read::run(&ws, &json!({"file_path": "b.ipynb"})).unwrap();
    assert!(out.text.starts_with("1: {not json"), "{}", out.text);
}
