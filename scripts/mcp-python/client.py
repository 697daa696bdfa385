"""An MCP client on the official MCP Python SDK, driven by the Rust tests (tests/tests/mcp/python.rs).

usage: client.py '<spec JSON>'

spec: {"server": {"command": str, "args": [str]} | {"url": str},
       "mode": "legacy" | "auto",            # initialize handshake, or discover (2026-07-28) with fallback
       "elicit": bool,                        # declare elicitation (an elicitation callback)
       "calls": [{"tool": str, "args": {..}, "reply"?: {"action": str, "content"?: {..}}}]}

Prints one JSON object: {"tools": [names], "calls": [{"result": <CallToolResult as JSON>,
"elicitations": [<params as JSON>]}]}; the Rust test checks every value.
"""

import asyncio
import json
import sys

import mcp_types as types
from mcp import Client
from mcp.client.stdio import StdioServerParameters


async def main() -> None:
    spec = json.loads(sys.argv[1])
    replies: list[dict] = []
    seen: list[dict] = []

    async def on_elicit(_ctx, params):
        seen.append(params.model_dump(by_alias=True, mode="json", exclude_none=True))
        reply = replies.pop(0)
        return types.ElicitResult(action=reply["action"], content=reply.get("content"))

    target = spec["server"]
    server = target["url"] if "url" in target else StdioServerParameters(command=target["command"], args=target["args"])
    kwargs = {"mode": spec.get("mode", "legacy")}
    if spec.get("elicit", True):
        kwargs["elicitation_callback"] = on_elicit
    out = {"calls": []}
    async with Client(server, **kwargs) as client:
        listed = await client.list_tools()
        out["tools"] = [t.name for t in listed.tools]
        for call in spec["calls"]:
            seen.clear()
            if "reply" in call:
                replies.append(call["reply"])
            result = await client.call_tool(call["tool"], call.get("args", {}))
            out["calls"].append(
                {
                    "result": result.model_dump(by_alias=True, mode="json", exclude_none=True),
                    "elicitations": list(seen),
                }
            )
    print(json.dumps(out))


asyncio.run(main())
