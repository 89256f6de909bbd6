//! Editing the person's config file for `corral mcp add|remove`: one `[mcp_servers.<name>]`
//! table added or removed with toml_edit, every other line and comment left as it was.

/// The table `corral mcp add` writes.
pub(super) fn new_table(
    url: &Option<String>,
    bearer: Option<String>,
    env: &[String],
    network: bool,
    command: &[String],
) -> Result<toml_edit::Table, String> {
    let mut t = toml_edit::Table::new();
    match (url, command.split_first()) {
        (Some(url), None) => {
            t["url"] = toml_edit::value(url.as_str());
            if let Some(b) = bearer {
                t["bearer_token_env_var"] = toml_edit::value(b);
            }
            if !env.is_empty() || network {
                return Err("--env and --allow-network are for a stdio server (a command)".into());
            }
        }
        (None, Some((program, args))) => {
            t["command"] = toml_edit::value(program.as_str());
            if !args.is_empty() {
                t["args"] = toml_edit::value(args.iter().collect::<toml_edit::Array>());
            }
            if !env.is_empty() {
                let mut vars = toml_edit::InlineTable::new();
                for e in env {
                    let Some((k, v)) = e.split_once('=') else {
                        return Err(format!("--env {e}: use KEY=VALUE"));
                    };
                    vars.insert(k, v.into());
                }
                t["env"] = toml_edit::value(vars);
            }
            if network {
                t["network"] = toml_edit::value(true);
            }
        }
        _ => {
            return Err(
                "give the server's command after `--` (corral mcp add NAME -- COMMAND ARGS...) or --url URL"
                    .into(),
            );
        }
    }
    Ok(t)
}

#[derive(Debug)]
pub(super) enum Edit {
    Parse(String),
    Other(String),
}

/// `text` with `[mcp_servers.<name>]` added; the rest of the file as it was.
pub(super) fn add_to(text: &str, name: &str, table: toml_edit::Table) -> Result<String, Edit> {
    let mut doc: toml_edit::DocumentMut =
        text.parse().map_err(|e: toml_edit::TomlError| Edit::Parse(e.to_string()))?;
    let servers = doc
        .entry(crate::config::keys::MCP_SERVERS)
        .or_insert_with(|| {
            let mut t = toml_edit::Table::new();
            t.set_implicit(true);
            toml_edit::Item::Table(t)
        })
        .as_table_mut()
        .ok_or_else(|| Edit::Other("mcp_servers in the config file is not a table".into()))?;
    if servers.contains_key(name) {
        return Err(Edit::Other(format!(
            "an MCP server named {name} is already configured; `corral mcp remove {name}` first to replace it"
        )));
    }
    servers.insert(name, toml_edit::Item::Table(table));
    Ok(doc.to_string())
}

/// `text` without `[mcp_servers.<name>]`; the rest of the file as it was.
pub(super) fn remove_from(text: &str, name: &str) -> Result<String, Edit> {
    let mut doc: toml_edit::DocumentMut =
        text.parse().map_err(|e: toml_edit::TomlError| Edit::Parse(e.to_string()))?;
    let removed = doc
        .get_mut(crate::config::keys::MCP_SERVERS)
        .and_then(|s| s.as_table_like_mut())
        .and_then(|s| s.remove(name));
    if removed.is_none() {
        return Err(Edit::Other(format!("no MCP server named {name}")));
    }
    if doc.get(crate::config::keys::MCP_SERVERS).and_then(|s| s.as_table_like()).is_some_and(|s| s.is_empty())
    {
        doc.remove(crate::config::keys::MCP_SERVERS);
    }
    Ok(doc.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn add_and_remove_keep_the_rest_of_the_file() {
        let text = "# my settings\n[model]\nname = \"m\" # the model\n";
        let t = new_table(&None, None, &["A=1".into()], false, &["node".into(), "s.js".into()]).unwrap();
        let added = add_to(text, "docs", t).unwrap();
        assert!(added.starts_with(text), "{added}");
        assert!(added.contains("[mcp_servers.docs]\ncommand = \"node\"\nargs = [\"s.js\"]"), "{added}");
        let again = new_table(&Some("https://x".into()), None, &[], false, &[]).unwrap();
        assert!(
            matches!(add_to(&added, "docs", again), Err(Edit::Other(e)) if e.contains("already configured"))
        );
        let removed = remove_from(&added, "docs").unwrap();
        assert_eq!(removed, text);
        assert!(
            matches!(remove_from(text, "docs"), Err(Edit::Other(e)) if e.contains("no MCP server named docs"))
        );
        assert!(matches!(add_to("[x", "a", toml_edit::Table::new()), Err(Edit::Parse(_))));
    }
}
