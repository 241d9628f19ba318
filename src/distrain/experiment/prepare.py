"""Deprecated: data preparation moved to :mod:`distrain.data.prepare` (beside the data), ``DataPlan.of`` to
:func:`distrain.experiment.plan.data_plan_of` (or :attr:`~distrain.experiment.plan.ResolvedExperiment.data_plan`),
``prepare_for_workers`` to :mod:`distrain.experiment.assemble`. These names stay for one release, so scripts that
import them keep working."""

from __future__ import annotations

from distrain.data.prepare import DataPlan as _DataPlan
from distrain.data.prepare import PreparedData, Split, prepare_data, read_data
from distrain.experiment.plan import data_plan_of

__all__ = ["DataPlan", "PreparedData", "Split", "prepare_data", "read_data"]


class DataPlan(_DataPlan):
    """:class:`distrain.data.prepare.DataPlan`, with the old ``DataPlan.of(experiment, config)``."""

    of = staticmethod(data_plan_of)
