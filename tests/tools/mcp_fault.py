#!/usr/bin/env python3
"""A tiny MCP stdio server that misbehaves on purpose, for tests/mcp_client.rs.

Usage: mcp_fault.py MARKER_DIR [--no-answer] [--bulky N]
On start it writes MARKER_DIR/started-<pid> (so a test can tell it ran). Tools:
  ok     answers "fault server ok"
  hang   never answers
  crash  exits at once (status 3), after a line on stderr with a terminal escape
  flood  writes 64 MB without a newline, then hangs
  big    answers 30000 bytes of text
--no-answer: never answers initialize (a server that never finishes starting).
--bulky N: every tool's description is N words long (a catalogue too big for a small window).
"""
import json
import os
import sys
import time

marker_dir = sys.argv[1]
no_answer = "--no-answer" in sys.argv
bulky = int(sys.argv[sys.argv.index("--bulky") + 1]) if "--bulky" in sys.argv else 0
with open(os.path.join(marker_dir, f"started-{os.getpid()}"), "w") as f:
    f.write("started\n")

out = sys.stdout.buffer


def send(msg):
    out.write(json.dumps(msg).encode() + b"\n")
    out.flush()


def tool(name, text):
    desc = text + (" word" * bulky)
    return {"name": name, "description": desc, "inputSchema": {"type": "object", "properties": {}}}


TOOLS = [
    tool("ok", "Answers ok."),
    tool("hang", "Never answers."),
    tool("crash", "Exits."),
    tool("flood", "Writes without end."),
    tool("big", "Answers a long text."),
]

for line in sys.stdin.buffer:
    try:
        msg = json.loads(line)
    except ValueError:
        continue
    method, mid = msg.get("method"), msg.get("id")
    if method == "initialize":
        if no_answer:
            continue
        version = msg.get("params", {}).get("protocolVersion", "2025-06-18")
        send({"jsonrpc": "2.0", "id": mid, "result": {
            "protocolVersion": version, "capabilities": {"tools": {}},
            "serverInfo": {"name": "fault", "version": "1"}}})
    elif method == "tools/list":
        send({"jsonrpc": "2.0", "id": mid, "result": {"tools": TOOLS}})
    elif method == "tools/call":
        name = msg["params"]["name"]
        if name == "ok":
            send({"jsonrpc": "2.0", "id": mid, "result": {"content": [{"type": "text", "text": "fault server ok"}]}})
        elif name == "big":
            text = "".join(f"line {i:05d} of the long answer\n" for i in range(1000))
            send({"jsonrpc": "2.0", "id": mid, "result": {"content": [{"type": "text", "text": text}]}})
        elif name == "crash":
            sys.stderr.write("fault server: \x1b[31mgoing down\x1b[0m\n")
            sys.stderr.flush()
            os._exit(3)
        elif name == "flood":
            chunk = b"x" * (1 << 20)
            for _ in range(64):
                out.write(chunk)
            out.flush()
            time.sleep(3600)
        else:  # hang
            time.sleep(3600)
    elif mid is not None:
        send({"jsonrpc": "2.0", "id": mid, "result": {}})
