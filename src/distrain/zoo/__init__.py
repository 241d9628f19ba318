"""The model zoo: AllenNLP's task models ported to distrain, one folder per task family, as allennlp-models lays
them out (``<task>/readers``, ``models``, ``modules``, ``metrics``).

The framework packages (``data/``, ``modules/``, ``models/``, ``metrics/``) keep what any task uses; a task
folder holds what only that task needs, and nothing outside ``zoo/`` imports it. Every module here is imported
by the registry's walk (:data:`distrain.plugins.COMPONENT_ROOTS`), so a new task folder needs no list."""
