"""Every tutorial's commands run as written, in order, from a folder laid out as a distrain checkout after the
set-up commands (``configs/``, ``scripts/``, the prepared ``data/``, ``.venv/bin/distrain``): its file blocks
are saved, its ``bash`` blocks must exit 0, and its ``console`` blocks must print the lines they show. Blocks a
page marks ``not run`` or ``checked`` say why in the page (tests/support/docs.py has the conventions). The
``distrain`` commands are forked from a warm parent (support/warm_client.py says what stays as a user's)."""

from __future__ import annotations

import json

import pytest

from support import warm_client
from support.cli import warm_parent
from support.docs import DOCS, code_blocks, make_checkout, run_tutorial, tutorial_environment, tutorial_pages

TUTORIALS = tutorial_pages()


def test_the_tutorials_the_issue_asks_for_exist_and_are_in_the_navigation():
    names = {page.stem for page in TUTORIALS}
    assert names == {"own-components", "one-to-n-workers", "allennlp", "fine-tune-transformer", "lora-llm-serve",
                     "sharded-split", "elastic", "tuning"}
    navigation = (DOCS.parent / "mkdocs.yml").read_text()
    assert all(f"tutorials/{name}.md" in navigation for name in names)


def test_the_allennlp_tutorials_package_and_config_are_the_ones_the_tests_train():
    """The AllenNLP tutorial's file blocks are tests/plugins/tsv_text_classifier and its config, character for
    character, so what tests/allennlp checks on 2 workers and predicts with is the code the page shows."""
    plugins = DOCS.parent / "tests" / "plugins"
    shown = {block.title: block.text for block in code_blocks(DOCS / "tutorials" / "allennlp.md")
             if block.title and block.title.startswith("tsv_text_classifier")}
    files = sorted((plugins / "tsv_text_classifier").glob("*.py")) + [plugins / "tsv_text_classifier.jsonnet"]
    assert shown == {str(path.relative_to(plugins)): path.read_text() for path in files}


@pytest.mark.parametrize("page", TUTORIALS, ids=[page.stem for page in TUTORIALS])
def test_tutorial_commands_run_as_written(page, prepared_data, tmp_path):
    steps, not_run, checked = run_tutorial(page, make_checkout(tmp_path, prepared_data / "data"),
                                           warm=offer_a_warm_parent(tutorial_environment(tmp_path)))
    commands = [block for block in code_blocks(page) if block.language in ("bash", "console") and not block.title]
    assert commands, "a tutorial has commands"
    assert steps, f"{page.name}: no command ran"
    for step in steps:
        shown = f"{page.name}:{step.block.line}: $ {step.command.strip()}\n{step.output[-3000:]}"
        if step.block.language == "bash" or step.block.marker:
            assert step.returncode == 0, shown
        assert not step.missing, f"{shown}\nnot printed: {step.missing}"
    for block in not_run + checked:
        assert block.marker.split(":", 1)[1].strip(), f"{page.name}:{block.line}: say why it is not run"
    # every block was taken: run, checked or marked not run
    assert len({step.block.line for step in steps} | {block.line for block in not_run + checked}) == len(commands)


def offer_a_warm_parent(environment: dict) -> dict:
    """What the tutorial's ``distrain`` commands need to be forked from a warm parent started with the tutorial's
    own environment (no test plugins on its path), as :mod:`support.warm_client` says."""
    socket_path = warm_parent(environment)
    if socket_path is None:
        return {}
    return {warm_client.SOCKET: socket_path,
            warm_client.IMPORT_ENVIRONMENT: json.dumps(warm_client.import_environment(environment))}
