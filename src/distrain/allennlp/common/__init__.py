"""``allennlp.common``: configuration errors, parameters, the registrable base, ``Lazy``, file and other
helpers, and (in ``allennlp.common.testing``) the test cases users' own suites are written on."""

from distrain.allennlp.common.checks import ConfigurationError
from distrain.allennlp.common.from_params import FromParams
from distrain.allennlp.common.lazy import Lazy
from distrain.allennlp.common.params import Params
from distrain.allennlp.common.registrable import Registrable
from distrain.allennlp.sanitize import JsonDict

__all__ = ["ConfigurationError", "FromParams", "JsonDict", "Lazy", "Params", "Registrable"]
