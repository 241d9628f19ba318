"""Where things are: the checkout, the tests folder, and the plugins the CLI runs of the tests import."""

from __future__ import annotations

from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]
ROOT = TESTS.parent
PLUGINS = TESTS / "plugins"
