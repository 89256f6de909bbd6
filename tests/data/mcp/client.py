"""Drives `corral mcp serve` with the official MCP Python SDK, as an MCP client would.

Usage: client.py PLAN.json. The plan names the transport ("stdio": command, args, env, cwd;
"http": url, token), optionally the protocol revision to ask for, and the steps: {"op": "list"},
{"op": "call", "name": ..., "args": {...}}, {"op": "parallel", "calls": [{"name", "args"}, ...]}.
Prints one JSON object: the negotiated protocol, the server's name, and each step's result
(a tool list, a tool result, or {"rpc_error": {"code", "message"}}). The Rust suite asserts on it.
"""

import asyncio
import json
import sys

import mcp.types
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamablehttp_client
from mcp.shared.exceptions import McpError


def dump(model):
    return model.model_dump(mode="json", by_alias=True, exclude_none=True)


async def call(session, name, args):
    try:
        return dump(await session.call_tool(name, args))
    except McpError as e:
        return {"rpc_error": {"code": e.error.code, "message": e.error.message}}


async def steps(session, plan):
    init = await session.initialize()
    out = {"protocol": init.protocolVersion, "server": init.serverInfo.name, "results": []}
    for step in plan["steps"]:
        op = step["op"]
        if op == "list":
            tools = await session.list_tools()
            out["results"].append({"tools": [dump(t) for t in tools.tools]})
        elif op == "call":
            out["results"].append(await call(session, step["name"], step.get("args", {})))
        elif op == "parallel":
            calls = [call(session, c["name"], c.get("args", {})) for c in step["calls"]]
            out["results"].append(list(await asyncio.gather(*calls)))
        else:
            raise ValueError(f"unknown op {op}")
    return out


async def main(plan):
    if "protocol" in plan:
        # The SDK asks for the newest revision it knows; a plan may ask for an older one.
        mcp.types.LATEST_PROTOCOL_VERSION = plan["protocol"]
    if plan["transport"] == "stdio":
        params = StdioServerParameters(
            command=plan["command"], args=plan["args"], env=plan["env"], cwd=plan["cwd"]
        )
        async with stdio_client(params) as (read, write):
            async with ClientSession(read, write) as session:
                return await steps(session, plan)
    headers = {"Authorization": f"Bearer {plan['token']}"}
    async with streamablehttp_client(plan["url"], headers=headers) as (read, write, _):
        async with ClientSession(read, write) as session:
            return await steps(session, plan)


if __name__ == "__main__":
    with open(sys.argv[1]) as f:
        plan = json.load(f)
    print(json.dumps(asyncio.run(main(plan))))
