"""{{name}}: a corral tool plugin in Python, made a component by componentize-py.

corral calls describe() once, then invoke() for each call, in a fresh sandboxed instance
that sees the workspace read-only through WASI (plain open() works inside it).
"""

import json
import os

from componentize_py_types import Err
from wit_world import exports
from wit_world.imports import workspace
from wit_world.imports.types import (
    ContentPart_Text,
    ErrorKind,
    ToolError,
    ToolHints,
    ToolOutput,
    ToolSpec,
)

from counting import count

TOOL = "{{tool}}"

SCHEMA = {
    "type": "object",
    "properties": {
        "path": {
            "type": "string",
            "description": "The file, relative to the workspace root or absolute inside it",
        }
    },
    "required": ["path"],
    "additionalProperties": False,
}


def fail(kind: ErrorKind, message: str, hint: str | None = None) -> Err:
    """A failed call: raise the returned value, and corral shows it to the model."""
    return Err(ToolError(kind=kind, message=message, hint=hint))


def absolute(path: str) -> str:
    """Relative paths start at the workspace root: the first root the host reports."""
    if os.path.isabs(path):
        return path
    roots = workspace.roots()
    return os.path.join(roots[0].path if roots else "/", path)


def read(path: str) -> bytes:
    try:
        with open(absolute(path), "rb") as f:
            return f.read()
    except FileNotFoundError:
        raise fail(
            ErrorKind.NOT_FOUND,
            f"'{path}' does not exist",
            "check the path with list_files; paths are relative to the workspace root",
        )
    except IsADirectoryError:
        raise fail(ErrorKind.INVALID_ARGS, f"'{path}' is a directory, not a file")
    except PermissionError:
        raise fail(
            ErrorKind.PERMISSION_DENIED,
            f"'{path}' is outside the workspace",
            "only files inside the workspace can be read",
        )
    except OSError as e:
        raise fail(ErrorKind.IO, f"cannot read '{path}': {e.strerror or e}")


class Tool(exports.Tool):
    def describe(self) -> list[ToolSpec]:
        return [
            ToolSpec(
                name=TOOL,
                description="Counts the lines, words and bytes of a text file in the workspace. "
                "Use it to size a file before reading it.",
                input_schema=json.dumps(SCHEMA),
                hints=ToolHints(read_only=True, destructive=False, idempotent=True, open_world=False),
                # This tool only reads; a tool that writes would list Capability.WORKSPACE_WRITE.
                capabilities=[],
            )
        ]

    def invoke(self, name: str, args_json: str) -> ToolOutput:
        if name != TOOL:
            raise fail(ErrorKind.NOT_FOUND, f"this plugin has no tool named '{name}'")
        try:
            args = json.loads(args_json)
        except ValueError as e:
            raise fail(ErrorKind.INVALID_ARGS, f"the arguments are not JSON: {e}")
        path = args.get("path") if isinstance(args, dict) else None
        if not isinstance(path, str) or not path:
            raise fail(
                ErrorKind.INVALID_ARGS,
                "'path' is required",
                'pass a file path relative to the workspace root, e.g. {"path": "README.md"}',
            )
        lines, words, size = count(read(path))
        text = f"{path}: {lines} lines, {words} words, {size} bytes"
        return ToolOutput(content=[ContentPart_Text(text)], truncated=False)
