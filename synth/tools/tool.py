"""Tool: one tool an agent may call, whatever it was read from."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field


class Tool(BaseModel):
    """A tool: its name, what it does, the JSON schema of its arguments (an object schema) and,
    when the source says, of its result; ``source`` says where it was read from."""

    model_config = ConfigDict(frozen=True)

    name: str
    description: str = ""
    input_schema: dict[str, Any] = Field(default_factory=lambda: {"type": "object"})
    output_schema: dict[str, Any] | None = None
    source: str = ""

    @property
    def required(self) -> list[str]:
        """The arguments every call must give."""
        required = self.input_schema.get("required") or []
        return [str(name) for name in required]

    @property
    def parameters(self) -> dict[str, Any]:
        """Each argument's schema, by name."""
        properties = self.input_schema.get("properties") or {}
        return dict(properties) if isinstance(properties, dict) else {}

    def spec(self) -> dict[str, Any]:
        """What a prompt shows of the tool: name, description, input schema."""
        return {
            "name": self.name,
            "description": self.description,
            "input_schema": self.input_schema,
        }


__all__ = ["Tool"]
