//! A plugin that tries to get out: it calls WASI and the host interfaces directly with
//! whatever paths the test gives it, bypassing the SDK's path checks.

use corral_plugin_sdk::bindings::corral::plugin::workspace as ws;
use corral_plugin_sdk::{Output, Plugin, Spec, ToolError, Value, args, json};
use std::io::Write;

struct Hostile;

fn s(args: &Value, k: &str) -> Result<String, ToolError> {
    args::req_str(args, k).map(str::to_string)
}

fn io<T>(r: std::io::Result<T>) -> Result<T, ToolError> {
    r.map_err(|e| ToolError::new(corral_plugin_sdk::ErrorKind::Io, format!("denied: {e}")))
}

fn host<T>(r: Result<T, ws::Error>) -> Result<T, ToolError> {
    r.map_err(|e| {
        ToolError::new(
            corral_plugin_sdk::ErrorKind::PermissionDenied,
            format!("host {:?}: {}", e.code, e.message),
        )
    })
}

const TOOLS: &[&str] = &[
    "wasi_read",
    "wasi_write",
    "wasi_append",
    "wasi_list",
    "wasi_remove",
    "wasi_mkdir",
    "wasi_rename",
    "wasi_stat",
    "host_write",
    "host_move",
    "host_trash",
    "host_note_read",
    "env",
    "connect",
];

impl Plugin for Hostile {
    fn tools() -> Vec<Spec> {
        TOOLS
            .iter()
            .map(|n| Spec::new(n, "hostile probe", json!({"type": "object"})).writes(true, false))
            .collect()
    }

    fn call(name: &str, a: Value) -> Result<Output, ToolError> {
        let text = match name {
            "wasi_read" => io(std::fs::read_to_string(s(&a, "path")?))?,
            "wasi_write" => {
                io(std::fs::write(s(&a, "path")?, s(&a, "content")?))?;
                "written".into()
            }
            "wasi_append" => {
                let mut f = io(std::fs::OpenOptions::new().append(true).open(s(&a, "path")?))?;
                io(f.write_all(b"pwned"))?;
                "appended".into()
            }
            "wasi_list" => {
                let mut names: Vec<String> = io(std::fs::read_dir(s(&a, "path")?))?
                    .filter_map(|e| e.ok())
                    .map(|e| e.file_name().to_string_lossy().into_owned())
                    .collect();
                names.sort();
                names.join("\n")
            }
            "wasi_remove" => {
                io(std::fs::remove_file(s(&a, "path")?))?;
                "removed".into()
            }
            "wasi_mkdir" => {
                io(std::fs::create_dir(s(&a, "path")?))?;
                "created".into()
            }
            "wasi_rename" => {
                io(std::fs::rename(s(&a, "from")?, s(&a, "to")?))?;
                "renamed".into()
            }
            "wasi_stat" => format!("{:?}", io(std::fs::metadata(s(&a, "path")?))?.len()),
            "host_write" => {
                let i = host(ws::write(&s(&a, "path")?, s(&a, "content")?.as_bytes()))?;
                format!("wrote {} existed={}", i.path, i.existed)
            }
            "host_move" => {
                let i = host(ws::move_(&s(&a, "from")?, &s(&a, "to")?))?;
                format!("moved to {}", i.path)
            }
            "host_trash" => {
                let i = host(ws::trash(&s(&a, "path")?))?;
                format!("trashed {}", i.location)
            }
            "host_note_read" => {
                ws::note_read(&s(&a, "path")?);
                "noted".into()
            }
            "env" => {
                let vars: Vec<String> = std::env::vars().map(|(k, v)| format!("{k}={v}")).collect();
                format!("vars={} args={}", vars.join(";"), std::env::args().count())
            }
            "connect" => match std::net::TcpStream::connect(s(&a, "addr")?) {
                Ok(_) => "connected".into(),
                Err(e) => {
                    return Err(ToolError::new(corral_plugin_sdk::ErrorKind::Io, format!("denied: {e}")));
                }
            },
            _ => return Err(ToolError::invalid_args("unknown probe")),
        };
        Ok(Output::text(text))
    }
}

corral_plugin_sdk::export_plugin!(Hostile);
