"""The pytest plugin (entry point ``pytest11``) that lets a user's own test suite ``import allennlp``: AllenNLP
plugin projects test their components with ``allennlp.common.testing``; this installs the import hook
before pytest collects them. It imports nothing else, so pytest's start-up pays nothing for it."""

from distrain.compat import allennlp_imports

allennlp_imports.install()
