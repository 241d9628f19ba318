"""One module per command, each owning ``add_arguments(parser)`` and ``run(args) -> int``.

Command modules import nothing heavy at module level (so ``distrain --help`` is instant) and never
import each other; shared option groups live in :mod:`distrain.commands.arguments`.
"""
