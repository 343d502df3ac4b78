"""MkDocs hooks: the reference pages that are read off the code at build time, so they cannot
drift from it.

- ``reference/rest-endpoints.md``: every operation of the OpenAPI schema (drf-spectacular, the
  same document ``/api/schema/`` serves), with its parameters, body and answers;
- ``reference/mcp-tools.md``: every MCP tool as ``tools/list`` answers it (the server built by
  ``aframes_web.mcp.server.build_server``), with its argument schema;
- ``reference/commands.md``: every ``manage.py`` command of Aframes with its ``--help``.

Django is set up on a scratch folder (``AFRAMES_VAR_DIR``), touching no database: reading a
schema, a tool list or a parser needs none.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import tempfile
from argparse import ArgumentParser, _SubParsersAction
from pathlib import Path
from typing import Any

from mkdocs.structure.files import File, Files

ROOT = Path(__file__).resolve().parent.parent
HTTP_METHODS = ("get", "post", "put", "patch", "delete")


def _django() -> None:
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "aframes_web.settings")
    os.environ.setdefault("AFRAMES_VAR_DIR", tempfile.mkdtemp(prefix="aframes-docs-"))
    import django

    django.setup()


def _cell(text: Any) -> str:
    """Text for one table cell: one line, pipes escaped."""
    return " ".join(str(text or "").split()).replace("|", "\\|")


def _type(schema: dict[str, Any], components: dict[str, Any]) -> str:
    """The type of ``schema`` in words; a reference to one of ``components`` links to it."""
    if "$ref" in schema:
        name = schema["$ref"].rsplit("/", 1)[-1]
        # Schemas are listed at the end of the page, under their own headings.
        return f"[`{name}`](#{name.lower()})" if name in components else f"`{name}`"
    if "anyOf" in schema or "oneOf" in schema:
        kinds = [_type(s, components) for s in schema.get("anyOf", schema.get("oneOf", []))]
        return " or ".join(k for k in kinds if k != "null") or "null"
    kind = schema.get("type", "any")
    if kind == "array":
        return f"array of {_type(schema.get('items', {}), components)}"
    if "enum" in schema:
        return " / ".join(f"`{v}`" for v in schema["enum"] if v is not None)
    return str(schema.get("format") and f"{kind} ({schema['format']})" or kind)


def _bounds(schema: dict[str, Any]) -> str:
    said = []
    for key, word in (("minimum", "≥"), ("maximum", "≤"), ("minLength", "length ≥")):
        # A 64-bit integer's own limit says nothing to a reader.
        if key in schema and abs(schema[key]) < 2**31:
            said.append(f"{word} {schema[key]}")
    if "default" in schema and schema["default"] is not None:
        said.append(f"default `{json.dumps(schema['default'])}`")
    return "; ".join(said)


def rest_page() -> str:
    from drf_spectacular.generators import SchemaGenerator

    schema = SchemaGenerator().get_schema(request=None, public=True)
    schemas = schema.get("components", {}).get("schemas", {})
    out = [
        "# REST endpoints",
        "",
        "Generated from the OpenAPI schema that the server itself serves at `/api/schema/`",
        "(interactive at `/api/docs/`). The conventions every endpoint shares (auth, pages,",
        "moments, problems) are in [REST API (v1)](rest.md).",
        "",
    ]
    by_tag: dict[str, list[tuple[str, str, dict[str, Any]]]] = {}
    for path, item in schema["paths"].items():
        for method in HTTP_METHODS:
            if method in item:
                operation = item[method]
                tag = (operation.get("tags") or ["other"])[0]
                by_tag.setdefault(tag, []).append((method, path, operation))
    for tag, operations in sorted(by_tag.items()):
        out += [f"## {tag}", ""]
        for method, path, operation in operations:
            out += [f"### `{method.upper()} {path}`", ""]
            if operation.get("summary"):
                out += [_cell(operation["summary"]), ""]
            if operation.get("description"):
                out += [operation["description"].strip(), ""]
            security = [next(iter(s), "") for s in operation.get("security", [])]
            if security:
                out += [f"Auth: {', '.join(f'`{s}`' for s in security if s) or 'none'}.", ""]
            parameters = operation.get("parameters", [])
            if parameters:
                out += ["| parameter | in | type | required | meaning |", "|---|---|---|---|---|"]
                for p in parameters:
                    kind = _type(p.get("schema", {}), schemas)
                    bounds = _bounds(p.get("schema", {}))
                    meaning = _cell(p.get("description", "")) + (f" ({bounds})" if bounds else "")
                    required = "yes" if p.get("required") else ""
                    out.append(f"| `{p['name']}` | {p['in']} | {kind} | {required} | {meaning} |")
                out.append("")
            body = operation.get("requestBody", {}).get("content", {})
            if body:
                kinds = ", ".join(
                    f"`{media}` ({_type(c.get('schema', {}), schemas)})"
                    for media, c in body.items()
                )
                out += [f"Body: {kinds}.", ""]
            answers = operation.get("responses", {})
            if answers:
                out += ["| answer | meaning |", "|---|---|"]
                for status, answer in answers.items():
                    said = _cell(answer.get("description", ""))
                    content = answer.get("content", {})
                    if status.startswith("2") and content:
                        shapes = ", ".join(
                            f"`{media}` ({_type(c.get('schema', {}), schemas)})"
                            for media, c in content.items()
                        )
                        said = f"{said} {shapes}".strip()
                    out.append(f"| {status} | {said} |")
                out.append("")
    schemas = schemas
    if schemas:
        out += ["## Schemas", "", "The shapes the operations above read and answer.", ""]
    for name, shape in sorted(schemas.items()):
        out += [f"### {name}", ""]
        if shape.get("description"):
            out += [_cell(shape["description"]), ""]
        properties = shape.get("properties", {})
        if properties:
            required = set(shape.get("required", []))
            out += ["| field | type | required | meaning |", "|---|---|---|---|"]
            for field, spec in properties.items():
                mark = "yes" if field in required else ""
                meaning = _cell(spec.get("description", ""))
                out.append(f"| `{field}` | {_type(spec, schemas)} | {mark} | {meaning} |")
            out.append("")
        elif "enum" in shape:
            out += [f"One of {_type(shape, schemas)}.", ""]
    return "\n".join(out)


def mcp_page() -> str:
    from aframes_web.mcp.server import build_server

    listed = asyncio.run(build_server().list_tools())
    out = [
        "# MCP tools",
        "",
        "Generated from the server's own `tools/list` answer: what an agent is told. How to",
        "connect a client is in [Connect an MCP client](../how-to/mcp-clients.md).",
        "",
    ]
    for tool in listed:
        hints = tool.annotations
        kind = "reads only" if hints and hints.read_only_hint else "writes"
        out += [f"## `{tool.name}`", "", tool.description.strip(), "", f"It {kind}.", ""]
        properties = tool.input_schema.get("properties", {})
        required = set(tool.input_schema.get("required", []))
        if properties:
            out += ["| argument | type | required | meaning |", "|---|---|---|---|"]
            for name, field in properties.items():
                bounds = _bounds(field)
                meaning = _cell(field.get("description", "")) + (f" ({bounds})" if bounds else "")
                mark = "yes" if name in required else ""
                out.append(f"| `{name}` | {_type(field, {})} | {mark} | {meaning} |")
            out.append("")
    return "\n".join(out)


def _helps(name: str, parser: ArgumentParser) -> list[str]:
    out = [f"## `{name}`", "", "```text", parser.format_help().rstrip(), "```", ""]
    for action in parser._actions:
        if isinstance(action, _SubParsersAction):
            for sub, subparser in action.choices.items():
                out += [f"### `{name} {sub}`", "", "```text", subparser.format_help().rstrip()]
                out += ["```", ""]
    return out


# The top-level packages whose Django apps carry Aframes' commands.
OUR_APPS = ("aframes_web", "memory")
# Django's own options, the same on every command: named once on the page instead.
DJANGO_OPTIONS = {
    "--version",
    "--verbosity",
    "--settings",
    "--pythonpath",
    "--traceback",
    "--no-color",
    "--force-color",
    "--skip-checks",
}


def commands_page() -> str:
    from django.core.management import get_commands, load_command_class

    os.environ["COLUMNS"] = "100"  # argparse wraps to the terminal; the page is not one

    out = [
        "# Management commands",
        "",
        "Every `manage.py` command that Aframes adds, with its `--help` as the command prints",
        "it (generated at build time). Run them as `.venv/bin/python manage.py NAME` in a",
        "checkout, or `docker compose exec web python manage.py NAME` in the containers.",
        "Every command also takes Django's common options (`--settings`, `--verbosity`,",
        "`--traceback`, …), left out below.",
        "",
    ]
    ours = sorted(name for name, app in get_commands().items() if app.split(".")[0] in OUR_APPS)
    for name in ours:
        command = load_command_class(get_commands()[name], name)
        command.suppressed_base_arguments = DJANGO_OPTIONS
        out += _helps(name, command.create_parser("manage.py", name))
    return "\n".join(out)


GENERATED = {
    "reference/rest-endpoints.md": rest_page,
    "reference/mcp-tools.md": mcp_page,
    "reference/commands.md": commands_page,
}


def on_files(files: Files, config: Any) -> Files:
    _django()
    for uri, page in GENERATED.items():
        files.append(File.generated(config, uri, content=page()))
    return files
