"""``python -m distrain.allennlp.commands``: the ``allennlp`` command."""

from distrain.allennlp.commands import main

main()
