#!/usr/bin/env python3
"""A tiny MCP stdio server that misbehaves on purpose, for tests/mcp_client.rs.

Usage: mcp_fault.py MARKER_DIR [--no-answer] [--bulky N] [--http]
On start it writes MARKER_DIR/started-<pid> (so a test can tell it ran). Tools:
  ok     answers "fault server ok"
  hang   never answers
  crash  exits at once (status 3), after a line on stderr with a terminal escape
  flood  writes 64 MB without a newline, then hangs
  big    answers 30000 bytes of text
--no-answer: never answers initialize (a server that never finishes starting).
--bulky N: every tool's description is N words long (a catalogue too big for a small window).
--http: streamable HTTP on 127.0.0.1 instead of stdio (see serve_http).
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

def handle(msg):
    """The answer to one JSON-RPC message, or None for none."""
    method, mid = msg.get("method"), msg.get("id")
    if method == "initialize":
        if no_answer:
            return None
        version = msg.get("params", {}).get("protocolVersion", "2025-06-18")
        return {"jsonrpc": "2.0", "id": mid, "result": {
            "protocolVersion": version, "capabilities": {"tools": {}},
            "serverInfo": {"name": "fault", "version": "1"}}}
    if method == "tools/list":
        return {"jsonrpc": "2.0", "id": mid, "result": {"tools": TOOLS}}
    if method == "tools/call":
        name = msg["params"]["name"]
        if name == "ok":
            return {"jsonrpc": "2.0", "id": mid, "result": {"content": [{"type": "text", "text": "fault server ok"}]}}
        if name == "big":
            text = "".join(f"line {i:05d} of the long answer\n" for i in range(1000))
            return {"jsonrpc": "2.0", "id": mid, "result": {"content": [{"type": "text", "text": text}]}}
        if name == "crash":
            sys.stderr.write("fault server: \x1b[31mgoing down\x1b[0m\n")
            sys.stderr.flush()
            os._exit(3)
        if name == "flood":
            chunk = b"x" * (1 << 20)
            for _ in range(64):
                out.write(chunk)
            out.flush()
        time.sleep(3600)  # hang (and flood, after it)
    if mid is not None:
        return {"jsonrpc": "2.0", "id": mid, "result": {}}
    return None


def serve_http():
    """Streamable HTTP on 127.0.0.1 (a free port, written to MARKER_DIR/port): JSON answers
    (the ok tool's as a server-sent event), 202 for notifications; each request's Authorization header is appended to MARKER_DIR/auth."""
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self):
            body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
            with open(os.path.join(marker_dir, "auth"), "a") as f:
                f.write(self.headers.get("Authorization", "") + "\n")
            msg = json.loads(body)
            reply = handle(msg)
            if msg.get("method") == "tools/call" and msg["params"]["name"] == "ok":
                # As the TypeScript SDK does by default: the answer as a server-sent event.
                reply["result"]["content"][0]["text"] = "fault server ok (sse)"
                data = ("event: message\ndata: " + json.dumps(reply) + "\n\n").encode()
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
                return
            if reply is None:
                self.send_response(202)
                self.end_headers()
                return
            data = json.dumps(reply).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_DELETE(self):
            self.send_response(200)
            self.end_headers()

        def log_message(self, *args):
            pass

    srv = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    tmp = os.path.join(marker_dir, "port.tmp")
    with open(tmp, "w") as f:
        f.write(str(srv.server_address[1]))
    os.rename(tmp, os.path.join(marker_dir, "port"))
    srv.serve_forever()


if "--http" in sys.argv:
    serve_http()
else:
    for line in sys.stdin.buffer:
        try:
            reply = handle(json.loads(line))
        except ValueError:
            continue
        if reply is not None:
            send(reply)
