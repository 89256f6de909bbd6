//! A plugin that misbehaves on purpose, one way per tool, plus `ok` to show that the next
//! call after a fault works.

use corral_plugin_sdk::{Output, Plugin, Spec, ToolError, Value, json};
use std::io::Write;

struct Faulty;

const TOOLS: &[&str] = &["ok", "panic", "spin", "membomb", "flood", "huge", "recurse", "count"];

/// Recurses until the stack runs out; the frame is padded so it does so quickly.
#[allow(unconditional_recursion)]
fn recurse(pad: &mut [u8; 256]) -> u64 {
    pad[0] = pad[0].wrapping_add(1);
    let mut next = [0u8; 256];
    next[1] = pad[0];
    recurse(&mut next) + u64::from(next[1])
}

impl Plugin for Faulty {
    fn tools() -> Vec<Spec> {
        TOOLS.iter().map(|n| Spec::new(n, "fault probe", json!({"type": "object"}))).collect()
    }

    fn call(name: &str, args: Value) -> Result<Output, ToolError> {
        match name {
            "ok" => Ok(Output::text("fine")),
            "panic" => panic!("deliberate panic for the fault suite"),
            "spin" => {
                let mut x: u64 = 0;
                loop {
                    x = std::hint::black_box(x.wrapping_add(1));
                }
            }
            "membomb" => {
                let mut hoard: Vec<Vec<u8>> = Vec::new();
                loop {
                    hoard.push(vec![7u8; 16 << 20]);
                    std::hint::black_box(&hoard);
                }
            }
            "flood" => {
                let chunk = vec![b'x'; 64 * 1024];
                let mut out = std::io::stdout();
                let mut err = std::io::stderr();
                for _ in 0..320 {
                    out.write_all(&chunk).map_err(|e| ToolError::invalid_args(e.to_string()))?;
                    err.write_all(&chunk).map_err(|e| ToolError::invalid_args(e.to_string()))?;
                }
                Ok(Output::text("flooded 20 MiB"))
            }
            "huge" => {
                let mb = args.get("mb").and_then(Value::as_u64).unwrap_or(8) as usize;
                Ok(Output::text("y".repeat(mb << 20)))
            }
            "recurse" => {
                let mut pad = [0u8; 256];
                Ok(Output::text(recurse(&mut pad).to_string()))
            }
            "count" => {
                // Memory is fresh per call: a static counter never survives to the next call.
                static mut CALLS: u32 = 0;
                let n = unsafe {
                    CALLS += 1;
                    CALLS
                };
                Ok(Output::text(n.to_string()))
            }
            _ => Err(ToolError::invalid_args("unknown probe")),
        }
    }
}

corral_plugin_sdk::export_plugin!(Faulty);
