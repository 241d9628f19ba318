"""MkDocs hook: the Reference pages, generated from the code every time the site is built.

- ``reference/components.md``: every registered component by base class, from
  :func:`distrain.commands.list_components.catalogue` (what ``distrain list`` prints: the same
  arguments, types, defaults and constraints, from the signatures ``distrain check`` validates against).
- ``reference/cli.md``: every command and flag, from the argument parsers of :mod:`distrain.cli`.
- ``reference/config.md``: the top-level config keys and every plain block, from the JSON Schema
  ``distrain schema`` writes; ``reference/distrain.schema.json`` is that schema, for editors.
- ``reference/api.md``: the public Python API (``distrain.<name>``), rendered by mkdocstrings from docstrings.

A registered component without a docstring of its own is a warning, so ``mkdocs build --strict`` fails.
Nothing here is written into ``docs/``: the pages exist only in the build.
"""

from __future__ import annotations

import argparse
import html
import json
import logging
import os
import sys
from pathlib import Path

from mkdocs.structure.files import File

ROOT = Path(__file__).resolve().parents[2]
log = logging.getLogger("mkdocs.plugins.distrain_reference")


def _import_distrain() -> None:
    """Build from this checkout's sources, whatever distrain the environment has installed."""
    source = str(ROOT / "src")
    if sys.path[0] != source:
        sys.path.insert(0, source)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from distrain.plugins import import_plugins

    import_plugins([])


def cell(text: str) -> str:
    """Text safe inside a Markdown table cell (a ``|`` would end the cell, even inside backticks)."""
    return text.replace("|", "&#124;").replace("\n", " ")


def code(text: str) -> str:
    """``text`` as inline code that may sit in a table cell."""
    return f"<code>{html.escape(text).replace('|', '&#124;')}</code>" if text else ""


def anchor(*parts: str) -> str:
    return "-".join(part.lower() for part in parts)


# ------------------------------------------------------------------------------------------ components
def undocumented_components() -> list[str]:
    """``Base.name (module.Class)`` for every registered component whose class has no docstring of its own."""
    from distrain.commands.list_components import catalogue

    return [f"{base.name}.{component.name} ({component.cls.__module__}.{component.cls.__qualname__})"
            for base in catalogue() for component in base.components if not component.summary]


def components_page() -> str:
    from distrain.commands.list_components import catalogue
    from distrain.config.json_schema import first_line

    bases = catalogue()
    lines = [
        "# Components",
        "",
        "Every component registered in distrain, by base class: what `distrain list` prints, generated from the",
        "same constructor signatures `distrain check` validates a config against. Pick one in a config block",
        "with `\"type\": NAME` (omit `type` for the base's default); its other keys are the arguments below.",
        "Your own components join with `--include-package` ([plugins](../how-to/plugins.md)); `distrain list",
        "--include-package MODULE` shows them too.",
        "",
        "| base class | default | components |",
        "|---|---|---|",
    ]
    for base in bases:
        names = ", ".join(f"[{c.name}](#{anchor(base.name, c.name)})" for c in base.components)
        lines.append(f"| [{base.name}](#{anchor(base.name)}) | {code(base.default or '')} | {names} |")
    for base in bases:
        lines += ["", f"## {base.name} {{#{anchor(base.name)}}}", ""]
        description = first_line(base.cls)
        if description:
            lines += [description, ""]
        lines.append(f"Python: `{base.cls.__module__}.{base.cls.__qualname__}`"
                     + (f"; default `type`: `{base.default}`" if base.default else "") + ".")
        for component in base.components:
            lines += ["", f"### {component.name} {{#{anchor(base.name, component.name)}}}", ""]
            if component.summary:
                lines += [component.summary, ""]
            lines.append(f"`\"type\": \"{component.name}\"` · Python: "
                         f"`{component.cls.__module__}.{component.cls.__qualname__}`")
            if "argument_problems" in vars(component.cls):
                lines.append("· also checks rules that relate its arguments (`argument_problems`)")
            lines.append("")
            if not component.arguments:
                lines.append("No arguments.")
                continue
            lines += ["| argument | type | default | constraints |", "|---|---|---|---|"]
            for argument in component.arguments:
                default = "required" if argument.default == "required" else code(argument.default.removeprefix("default "))
                lines.append(f"| `{argument.name}` | {code(argument.type)} | {cell(default)} | {cell(argument.constraints)} |")
    return "\n".join(lines) + "\n"


# ------------------------------------------------------------------------------------------------- CLI
def _flag(action: argparse.Action) -> str:
    if not action.option_strings:
        return action.metavar or action.dest
    flags = ", ".join(action.option_strings)
    if action.nargs == 0:
        return flags
    return f"{flags} {action.metavar or action.dest.upper()}"


def _parser_section(parser: argparse.ArgumentParser, title: str, help_text: str, level: int) -> list[str]:
    lines = ["", f"{'#' * level} {title} {{#{anchor(*title.split())}}}", ""]
    if help_text:
        lines += [help_text[0].upper() + help_text[1:] + ".", ""]
    usage = parser.format_usage().strip().removeprefix("usage: ")
    lines += ["```text", usage, "```", ""]
    rows = []
    children = []
    for action in parser._actions:  # argparse keeps no public list of its arguments
        if isinstance(action, argparse._HelpAction):
            continue
        if isinstance(action, argparse._SubParsersAction):
            helps = {choice.dest: choice.help for choice in action._choices_actions}
            children += [(name, sub, helps.get(name, "")) for name, sub in action.choices.items()]
            continue
        default = action.default
        shown = "" if default in (None, False, [], argparse.SUPPRESS) or action.required else code(repr(default))
        kind = "required" if (action.required or not action.option_strings) else "optional"
        rows.append(f"| {code(_flag(action))} | {kind} | {cell(shown)} | {cell(action.help or '')} |")
    if rows:
        lines += ["| argument | | default | meaning |", "|---|---|---|---|", *rows]
    for name, sub, sub_help in children:
        lines += _parser_section(sub, f"{title} {name}", sub_help or "", level + 1)
    return lines


def cli_page() -> str:
    from distrain.cli import COMMANDS, build_parser

    parser = build_parser()
    lines = [
        "# Command line",
        "",
        "Every `distrain` command and flag, generated from the argument parsers (`distrain COMMAND --help`",
        "prints the same). Run it as `.venv/bin/distrain` or `python -m distrain`. Bad input exits with status 2",
        "and one line per problem; `distrain --debug COMMAND ...` shows the Python traceback.",
        "",
        "| command | what it does |",
        "|---|---|",
    ]
    for name, (_module, help_text) in COMMANDS.items():
        lines.append(f"| [`distrain {name}`](#{anchor('distrain', name)}) | {cell(help_text)} |")
    lines += _parser_section(parser, "distrain", parser.description or "", 2)[4:]  # the top level: no heading
    return "\n".join(lines) + "\n"


# ------------------------------------------------------------------------------------------ config keys
class SchemaText:
    """JSON Schema fragments as short type descriptions with links."""

    def __init__(self, schema: dict, bases: set[str]) -> None:
        self.defs = schema["$defs"]
        self.bases = bases

    def type(self, node: dict) -> str:
        if "$ref" in node:
            name = node["$ref"].rsplit("/", 1)[1]
            if name in self.bases:
                return f"[{name}](components.md#{anchor(name)}) block"
            return f"[{name}](#{anchor(name)}) block"
        if "anyOf" in node:
            options = [option for option in node["anyOf"]
                       if not (option.get("type") == "string" and "enum" in option and len(node["anyOf"]) > 1
                               and any("$ref" in other for other in node["anyOf"]))]
            texts = list(dict.fromkeys(self.type(option) for option in options))
            return " or ".join(texts)
        if "const" in node:
            return code(json.dumps(node["const"]))
        if "enum" in node:
            return "one of " + ", ".join(code(json.dumps(value)) for value in node["enum"])
        kind = node.get("type")
        if kind == "array":
            if "prefixItems" in node:
                return "[" + ", ".join(self.type(item) for item in node["prefixItems"]) + "]"
            return "list of " + (self.type(node["items"]) if node.get("items") else "anything")
        if kind == "object":
            extra = node.get("additionalProperties")
            return "object" + (f" of {self.type(extra)}" if isinstance(extra, dict) and extra else "")
        if isinstance(kind, list):
            return " or ".join(kind)
        return kind or "anything"

    @staticmethod
    def rules(node: dict) -> str:
        found = []
        for option in node.get("anyOf", [node]):
            for key, text in (("minimum", ">= {}"), ("exclusiveMinimum", "> {}"), ("maximum", "<= {}"),
                              ("exclusiveMaximum", "< {}"), ("minItems", "at least {} items"),
                              ("minLength", "at least {} characters"), ("pattern", "matches `{}`")):
                if key in option:
                    found.append(text.format(option[key]))
        return ", ".join(dict.fromkeys(found))

    def table(self, schema: dict) -> list[str]:
        required = set(schema.get("required", []))
        properties = schema.get("properties", {})
        described = any(node.get("description") for node in properties.values())
        lines = ["| key | type | default | constraints |" + (" description |" if described else ""),
                 "|---|---|---|---|" + ("---|" if described else "")]
        for key, node in properties.items():
            default = "required" if key in required else code(json.dumps(node["default"])) if "default" in node else ""
            lines.append(f"| `{key}` | {cell(self.type(node))} | {cell(default)} | {cell(self.rules(node))} |"
                         + (f" {cell(node.get('description', ''))} |" if described else ""))
        if schema.get("additionalProperties") is False:
            lines += ["", "Any other key is an error (with a did-you-mean suggestion)."]
        return lines


def config_page(schema: dict) -> str:
    from distrain.registry import Registrable

    bases = {base.__name__ for base in Registrable._registries}
    text = SchemaText(schema, bases)
    lines = [
        "# Config keys",
        "",
        "The keys of a training config, generated from the JSON Schema that `distrain schema` writes (draft",
        "2020-12; [download it](distrain.schema.json) for your editor, see",
        "[Validate configs in your editor](../how-to/editor-schema.md)). A block typed by a base class picks a",
        "registered component with `\"type\"`; its keys are in the [component reference](components.md).",
        "`distrain check` remains the authority: it also checks what spans several keys and reads the data.",
        "",
        "## Top-level keys {#top-level-keys}",
        "",
        schema.get("description", ""),
        "",
        *text.table(schema),
    ]
    plain = sorted(name for name in schema["$defs"] if "." not in name and name not in bases)
    for name in plain:
        node = schema["$defs"][name]
        lines += ["", f"## {name} {{#{anchor(name)}}}", ""]
        if node.get("description"):
            lines += [node["description"], ""]
        if "properties" in node:
            lines += text.table(node)
        else:
            lines.append(f"Type: {text.type(node)}.")
    return "\n".join(lines) + "\n"


# --------------------------------------------------------------------------------------- Python API
def api_page() -> str:
    import distrain

    lines = [
        "# Python API",
        "",
        "The names `distrain` exports (`from distrain import Model, DatasetReader, load_archive, ...`), rendered",
        "from their docstrings. Components written for AllenNLP import the same classes under AllenNLP's names",
        "from `distrain.allennlp` ([AllenNLP compatibility](allennlp.md)).",
    ]
    for name in sorted(distrain._PUBLIC, key=str.lower):
        lines += ["", f"::: {distrain._PUBLIC[name]}.{name}"]
    return "\n".join(lines) + "\n"


# ------------------------------------------------------------------------------------------------ hooks
def warn_undocumented() -> None:
    """One warning (an error under ``--strict``) per registered component without a docstring of its own."""
    for problem in undocumented_components():
        log.warning(f"component without a docstring of its own: {problem}")


def on_files(files, config):
    _import_distrain()
    from distrain.experiment.plan import experiment_schema

    warn_undocumented()
    schema = experiment_schema()
    pages = {
        "reference/components.md": components_page(),
        "reference/cli.md": cli_page(),
        "reference/config.md": config_page(schema),
        "reference/api.md": api_page(),
        "reference/distrain.schema.json": json.dumps(schema, indent=2) + "\n",
    }
    for path, content in pages.items():
        files.append(File.generated(config, path, content=content))
    return files
