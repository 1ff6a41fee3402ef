"""MCP servers that misbehave, for tests: ``python tests/mcp_misbehaving.py MODE``.

``silent`` starts and never answers; ``exit`` exits at once, saying why on stderr; ``empty`` is a
real server (the SDK's MCPServer) that lists no tools; ``faulty`` lists a tool that never returns
(``wait``) and one that kills the server (``crash``); ``crashing`` lists ``crash`` alone.
"""

from __future__ import annotations

import os
import sys
import time

from mcp.server.mcpserver import MCPServer


def main(mode: str) -> None:
    if mode == "silent":
        sys.stdin.read()  # reads every request, answers none, until its stdin closes
        return
    if mode == "exit":
        sys.exit("cannot start: no configuration")
    server = MCPServer(mode)
    if mode == "faulty":

        @server.tool()
        def wait(seconds: int) -> int:
            """Wait ``seconds`` (a call that never returns, as far as a test is concerned)."""
            time.sleep(seconds)
            return seconds

    if mode in ("faulty", "crashing"):

        @server.tool()
        def crash(code: int) -> int:
            """Exit the server with ``code``."""
            os._exit(code)

    server.run()


if __name__ == "__main__":
    main(sys.argv[1])
