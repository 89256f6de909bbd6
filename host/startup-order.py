"""Helpers of host/startup-order.sh (see there).

serve PORTFILE
    A scripted OpenAI-style model server on 127.0.0.1 (its port written to PORTFILE): answers
    four chat requests with read_file, grep and edit_file calls and then a text answer, any
    other request (the window probe) with 404, then exits.

merge BIN SAMPLED CALLGRIND...
    Prints the ordering file: the functions of BIN that the `--help` runs executed first, then
    those perf sampled (SAMPLED, hottest first), then every other function the runs executed.
"""

import json
import re
import socket
import sys

SCRIPT = [
    ("read_file", {"file_path": "greet.rs"}),
    ("grep", {"pattern": "Hello"}),
    ("edit_file", {"file_path": "greet.rs", "old_string": "Hello", "new_string": "Howdy"}),
    None,
]


def serve(port_file):
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)
    listener.settimeout(600)
    with open(port_file, "w") as f:
        f.write(str(listener.getsockname()[1]))
    step = 0
    while step < len(SCRIPT):
        conn, _ = listener.accept()
        with conn, conn.makefile("rb") as stream:
            request = stream.readline()
            headers = {}
            while (line := stream.readline()) not in (b"\r\n", b""):
                key, value = line.decode().split(":", 1)
                headers[key.strip().lower()] = value.strip()
            stream.read(int(headers.get("content-length", 0)))
            if b"chat/completions" not in request:
                conn.sendall(b"HTTP/1.1 404 Not Found\r\nconnection: close\r\ncontent-length: 0\r\n\r\n")
                continue
            call = SCRIPT[step]
            step += 1
            if call is None:
                delta = {"role": "assistant", "content": "Replaced Hello with Howdy in greet.rs."}
                finish = "stop"
            else:
                function = {"name": call[0], "arguments": json.dumps(call[1])}
                delta = {
                    "role": "assistant",
                    "tool_calls": [{"index": 0, "id": f"call_{step}", "type": "function", "function": function}],
                }
                finish = "tool_calls"
            events = [
                {"choices": [{"index": 0, "delta": delta}]},
                {"choices": [{"index": 0, "delta": {}, "finish_reason": finish}]},
            ]
            body = "".join(f"data: {json.dumps(e)}\n\n" for e in events) + "data: [DONE]\n\n"
            body = body.encode()
            head = (
                "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nconnection: close\r\n"
                f"content-length: {len(body)}\r\n\r\n"
            )
            conn.sendall(head.encode() + body)


def executed(callgrind_file, binary):
    """The functions of `binary` a callgrind profile (--demangle=no) saw run, first seen first."""
    objects, functions, seen = {}, {}, {}
    current = None
    spec = re.compile(r"^(ob|cob|fn|cfn)=\((\d+)\)(?: (.*))?$")
    with open(callgrind_file) as f:
        for line in f:
            m = spec.match(line.rstrip("\n"))
            if not m:
                continue
            kind, ident, name = m.groups()
            table = objects if kind in ("ob", "cob") else functions
            if name:
                table[ident] = name
            if kind == "ob":
                current = objects.get(ident)
            elif kind == "fn" and current == binary:
                symbol = re.sub(r"'\d+$", "", functions.get(ident, ""))
                # Not a symbol (an address, or valgrind's own frame), or an embedded artifact.
                if symbol and not symbol.startswith(("0x", "(")) and "BUILTINS" not in symbol:
                    seen.setdefault(symbol, None)
    return list(seen)


def merge(binary, sampled_file, callgrind_files):
    with open(sampled_file) as f:
        sampled = [line.strip() for line in f if line.strip()]
    rank = {name: i for i, name in enumerate(sampled)}
    help_runs = [executed(p, binary) for p in callgrind_files if "help" in p]
    other_runs = [executed(p, binary) for p in callgrind_files if "help" not in p]
    order = {}
    first = {name for run in help_runs for name in run}
    for name in sorted(first, key=lambda n: (rank.get(n, len(rank)), n)):
        order.setdefault(name, None)
    for name in sampled:
        order.setdefault(name, None)
    for run in other_runs:
        for name in run:
            order.setdefault(name, None)
    print("# The functions of corral that a start and the bench's scripted session run: those of")
    print("# `--help` first, then the ones perf sampled (hottest first), then the rest that callgrind")
    print("# saw run (host/startup-order.sh; lld's --symbol-ordering-file via build.rs).")
    for name in order:
        print(name)


if __name__ == "__main__":
    if sys.argv[1:2] == ["serve"] and len(sys.argv) == 3:
        serve(sys.argv[2])
    elif sys.argv[1:2] == ["merge"] and len(sys.argv) >= 4:
        merge(sys.argv[2], sys.argv[3], sys.argv[4:])
    else:
        sys.exit(__doc__)
