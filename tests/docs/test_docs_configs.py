"""Every config block of the documentation passes ``distrain check``.

Run in this process (``distrain check``'s own ``run``, from a folder laid out as a checkout with the prepared
data), so the blocks cost milliseconds to seconds, not a process each. How each block is taken (see
tests/support/docs.py and docs/about-docs.md):

- a whole config: checked as it is;
- ``fragment of PATH``: checked merged into the config at PATH (``(import PATH) + { fragment }``);
- ``validate only``: its data does not ship, so it is validated against the schema (everything ``check``
  does before reading data); a fragment is merged first;
- a file block (``title="..."``) of a tutorial: the tutorial's own ``distrain check`` (or train) of it runs in
  tests/docs/test_docs_tutorials.py, which is asserted here;
- an included shipped config (``--8<-- "configs/..."``): tests/config/test_configs.py checks every file in configs/,
  which is asserted here;
- ``not a config``: left out, with its reason in the page.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from support.docs import ROOT, code_blocks, config_blocks, logical_lines, make_checkout

BLOCKS = config_blocks()
SNIPPET = re.compile(r'^--8<-- "([^"]+)"\s*$')


def test_the_docs_have_config_blocks_of_every_kind():
    kinds = {kind(block) for block in BLOCKS}
    assert {"fragment", "validate only", "tutorial file", "shipped config", "not a config"} <= kinds


def kind(block) -> str:
    if SNIPPET.match(block.text.strip()):
        return "shipped config"
    if block.title:
        return "tutorial file"
    marker = block.marker or ""
    for name in ("validate only", "fragment", "not a config"):
        if name in marker:
            return name
    assert not marker, f"{block.name}: unknown docs-test marker {marker!r}"
    return "whole"


@pytest.fixture(scope="module")
def checkout(prepared_data, tmp_path_factory) -> Path:
    return make_checkout(tmp_path_factory.mktemp("docs_configs"), prepared_data / "data")


def config_file(block, folder: Path) -> Path:
    """The block as a file in ``folder``: a fragment merged into its base config."""
    marker = block.marker or ""
    base = re.search(r"fragment of (\S+?)(?:,|$)", marker)
    text = block.text
    if base:
        text = f'(import "{base.group(1)}") + {{\n{text}\n}}\n'
    path = folder / f"block_{block.page.stem}_{block.line}.jsonnet"
    path.write_text(text)
    return path


@pytest.mark.parametrize("block", BLOCKS, ids=[f"{b.name}-{kind(b).replace(' ', '_')}" for b in BLOCKS])
def test_docs_config_block_passes_check(block, checkout, monkeypatch, capsys):
    from distrain.cli import build_parser
    from distrain.commands import check
    from distrain.config.loading import load_config
    from distrain.experiment.plan import validate_experiment

    what = kind(block)
    if what == "shipped config":
        from config.test_configs import CONFIGS, SEARCH_SPACES

        target = ROOT / SNIPPET.match(block.text.strip()).group(1)
        assert target in CONFIGS + SEARCH_SPACES, f"{target} is not checked by tests/config/test_configs.py"
        return
    if what == "tutorial file":
        commands = [line for other in code_blocks(block.page) if other.language in ("bash", "console")
                    and not (other.marker or "").startswith("not run") for line in logical_lines(other.text)]
        assert any(re.search(rf"distrain (check|train) {re.escape(block.title)}\b", line) for line in commands), \
            f"{block.name}: the tutorial never checks or trains {block.title}"
        return
    if what == "not a config":
        assert block.marker.split(":", 1)[1].strip(), "say why"
        return
    monkeypatch.chdir(checkout)
    path = config_file(block, checkout)
    if what == "validate only":
        validate_experiment(load_config(path), [])
        return
    check.run(build_parser().parse_args(["check", str(path)]))
    out = capsys.readouterr().out
    assert out.startswith(f"config OK: {path}"), out
