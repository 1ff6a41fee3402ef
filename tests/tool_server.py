"""A real MCP server (the SDK's MCPServer) with six tools, two of which depend on each other:
``find_customer`` gives the ``customer_id`` that ``list_orders`` needs.

Run over stdio (``python tests/tool_server.py``) or streamable HTTP on 127.0.0.1
(``python tests/tool_server.py --http PORT``). ``list_orders`` fails for a customer it does not
know, as a real tool does, so a golden whose calls cannot run is dropped with the tool's error.
"""

from __future__ import annotations

import sys
from typing import Literal

from mcp.server.mcpserver import MCPServer
from pydantic import BaseModel

server = MCPServer("shop")


class Customer(BaseModel):
    customer_id: int
    name: str


class Order(BaseModel):
    order_id: int
    status: str


@server.tool()
def find_customer(email: str) -> Customer:
    """Find a customer by their email address; returns their customer_id and name."""
    return Customer(customer_id=1000 + len(email), name=email.split("@")[0] or "someone")


@server.tool()
def list_orders(customer_id: int, status: Literal["open", "shipped", "any"] = "any") -> list[Order]:
    """The orders of a customer (by customer_id), optionally only those with a status."""
    if customer_id < 0:
        raise ValueError(f"no customer {customer_id}")
    return [Order(order_id=customer_id * 10 + i, status="open") for i in range(2)]


@server.tool()
def get_weather(city: str, unit: Literal["celsius", "fahrenheit"] = "celsius") -> str:
    """The current weather in a city."""
    return f"18 degrees {unit} in {city}"


@server.tool()
def convert_currency(amount: float, source: str, target: str) -> float:
    """Convert an amount of money from one currency (ISO code) to another."""
    return round(amount * 1.1, 2)


@server.tool()
def create_ticket(title: str, priority: Literal["low", "high"]) -> int:
    """Open a support ticket; returns its number."""
    return 1 + len(title) % 97


@server.tool()
def search_products(query: str, max_results: int = 5) -> list[str]:
    """Search the product catalogue by keywords."""
    return [f"{query} #{i}" for i in range(max_results)]


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--http":
        server.run("streamable-http", host="127.0.0.1", port=int(sys.argv[2]))
    else:
        server.run("stdio")
