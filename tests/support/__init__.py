"""Helpers the tests import (``from support.cli import run_cli``): plain functions and constants, no fixtures
(those are in ``tests/conftest.py``). ``tests/`` is on ``sys.path`` (``pythonpath`` in pyproject.toml)."""
