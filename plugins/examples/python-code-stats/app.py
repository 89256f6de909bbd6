"""code_stats: a corral tool plugin in Python (componentize-py) that counts code, comment
and blank lines per language under a folder of the workspace."""

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

from stats import Report, count_lines, language_of

TOOL = "code_stats"
SKIP_DIRS = {"node_modules", "target", "dist", "build", "__pycache__", "vendor", "venv"}
MAX_FILE_BYTES = 2 << 20

SCHEMA = {
    "type": "object",
    "properties": {
        "path": {
            "type": "string",
            "description": "A folder or file, relative to the workspace root (default: the whole workspace)",
        },
        "max_files": {
            "type": "integer",
            "minimum": 1,
            "maximum": 20000,
            "description": "Most files to count (default 5000)",
        },
    },
    "additionalProperties": False,
}


def fail(kind, message, hint=None):
    return Err(ToolError(kind=kind, message=message, hint=hint))


def workspace_root() -> str:
    roots = workspace.roots()
    return roots[0].path if roots else "/"


def source_files(top: str):
    """Source files under `top`, skipping hidden and build folders, in a stable order."""
    if os.path.isfile(top):
        yield top
        return
    for dirpath, dirnames, filenames in os.walk(top):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith(".") and d not in SKIP_DIRS)
        for name in sorted(filenames):
            if language_of(name):
                yield os.path.join(dirpath, name)


def stats(root: str, shown: str, top: str, max_files: int) -> str:
    report = Report()
    seen = 0
    for path in source_files(top):
        lang = language_of(os.path.basename(path))
        if lang is None:
            raise fail(ErrorKind.UNSUPPORTED, f"'{shown}' is not a source file this tool knows")
        if seen == max_files:
            report.skipped.append(f"more files after the first {max_files}: raise max_files")
            break
        seen += 1
        rel = os.path.relpath(path, root)
        try:
            if os.path.getsize(path) > MAX_FILE_BYTES:
                report.skipped.append(f"{rel}: larger than {MAX_FILE_BYTES} bytes")
                continue
            with open(path, "rb") as f:
                text = f.read().decode("utf-8")
        except UnicodeDecodeError:
            report.skipped.append(f"{rel}: not UTF-8 text")
            continue
        except OSError as e:
            report.skipped.append(f"{rel}: {e.strerror or e}")
            continue
        name, prefixes, block = lang
        report.add(name, count_lines(text, prefixes, block))
    return report.render()


class Tool(exports.Tool):
    def describe(self):
        return [
            ToolSpec(
                name=TOOL,
                description="Counts code, comment and blank lines per language (like cloc) for a folder "
                "or file of the workspace. Hidden folders, node_modules, target and other build folders "
                "are skipped. Use it to get a quick picture of a codebase's size and languages.",
                input_schema=json.dumps(SCHEMA),
                hints=ToolHints(read_only=True, destructive=False, idempotent=True, open_world=False),
                capabilities=[],
            )
        ]

    def invoke(self, name, args_json):
        if name != TOOL:
            raise fail(ErrorKind.NOT_FOUND, f"this plugin has no tool named '{name}'")
        try:
            args = json.loads(args_json)
        except ValueError as e:
            raise fail(ErrorKind.INVALID_ARGS, f"the arguments are not JSON: {e}")
        path = args.get("path", ".")
        if not isinstance(path, str) or not path:
            raise fail(ErrorKind.INVALID_ARGS, "'path' must be a non-empty string", "omit it to count the whole workspace")
        max_files = args.get("max_files", 5000)
        if isinstance(max_files, bool) or not isinstance(max_files, int) or not 1 <= max_files <= 20000:
            raise fail(ErrorKind.INVALID_ARGS, "'max_files' must be an integer from 1 to 20000")
        root = workspace_root()
        top = os.path.normpath(path if os.path.isabs(path) else os.path.join(root, path))
        try:
            os.stat(top)
        except FileNotFoundError:
            raise fail(
                ErrorKind.NOT_FOUND,
                f"'{path}' does not exist",
                "paths are relative to the workspace root; list_files shows what is there",
            )
        except PermissionError:
            raise fail(ErrorKind.PERMISSION_DENIED, f"'{path}' is outside the workspace")
        except OSError as e:
            raise fail(ErrorKind.IO, f"cannot read '{path}': {e.strerror or e}")
        text = stats(root, path, top, max_files)
        return ToolOutput(content=[ContentPart_Text(text)], truncated=False)
