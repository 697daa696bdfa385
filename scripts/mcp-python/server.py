"""An MCP server on the official MCP Python SDK whose tools elicit, consumed by a toolnexus
Toolkit in the Rust tests (tests/tests/mcp/python.rs).

usage: server.py stdio | server.py http <port>

Tools: echo(text), ask_city (a form elicitation "Which city?" for {city}), login (a URL
elicitation "Log in to Example", https://example.com/login, id e-1).
"""

import sys

from pydantic import BaseModel, Field

from mcp.server.mcpserver import Context, MCPServer

server = MCPServer("pypeer")


class City(BaseModel):
    city: str = Field(description="The city.")


@server.tool()
def echo(text: str) -> str:
    """Echo the text back."""
    return text


@server.tool()
async def ask_city(ctx: Context) -> str:
    """Ask the user which city."""
    result = await ctx.elicit("Which city?", schema=City)
    if result.action == "accept":
        return f"city: {result.data.city}"
    return "declined" if result.action == "decline" else "cancelled"


@server.tool()
async def login(ctx: Context) -> str:
    """Ask the user to log in."""
    result = await ctx.elicit_url("Log in to Example", "https://example.com/login", "e-1")
    if result.action == "accept":
        return "logged in"
    return "declined" if result.action == "decline" else "cancelled"


if __name__ == "__main__":
    if sys.argv[1:] == ["stdio"]:
        server.run("stdio")
    elif len(sys.argv) == 3 and sys.argv[1] == "http":
        server.run("streamable-http", host="127.0.0.1", port=int(sys.argv[2]))
    else:
        sys.exit("usage: server.py stdio | server.py http <port>")
