"""The registry through its public API: register, look up, defaults, dotted paths, did-you-mean."""

from __future__ import annotations

import pytest

from distrain import Model, Registrable
from distrain.registry import RegistryError


class Widget(Registrable):
    default_implementation = "plain"


@Widget.register("plain")
class PlainWidget(Widget):
    pass


@Widget.register("fancy")
class FancyWidget(Widget):
    pass


def test_register_and_look_up_round_trip():
    assert Widget.by_name("plain") is PlainWidget
    assert Widget.by_name("fancy") is FancyWidget
    assert Widget.list_available() == ["fancy", "plain"]
    assert Widget.name_of(FancyWidget) == "fancy"


def test_each_base_has_its_own_registry():
    assert "plain" not in Model.list_available()
    assert "basic_classifier" in Model.list_available()
    assert "basic_classifier" not in Widget.list_available()


def test_taken_name_is_an_error_unless_exist_ok():
    class Other(Widget):
        pass

    with pytest.raises(RegistryError, match='"plain" is already taken'):
        Widget.register("plain")(Other)
    Widget.register("plain", exist_ok=True)(Other)
    assert Widget.by_name("plain") is Other
    Widget.register("plain", exist_ok=True)(PlainWidget)


def test_unknown_name_suggests_the_closest_and_lists_all():
    with pytest.raises(RegistryError) as error:
        Widget.by_name("fansy")
    assert 'did you mean "fancy"?' in str(error.value)
    assert "Available: fancy, plain" in str(error.value)


def test_fully_qualified_class_path_is_accepted():
    assert Model.by_name("distrain.models.basic_classifier.BasicClassifier").__name__ == "BasicClassifier"
    with pytest.raises(RegistryError, match="is not a Model subclass"):
        Model.by_name("collections.OrderedDict")
    with pytest.raises(RegistryError, match="cannot import"):
        Model.by_name("no_such_module_xyz.Thing")


def test_a_block_without_type_builds_the_default_implementation_declared_on_the_base():
    from distrain.config.schema import resolve

    problems: list = []
    node = resolve(Widget, {}, "widget", problems)
    assert not problems
    assert type(node.build()) is PlainWidget
    node = resolve(Widget, {"type": "fancy"}, "widget", problems)
    assert type(node.build()) is FancyWidget and not problems
