"""The apps are layered `accounts <- cashier <- tables`: nothing points back up.

`accounts` imports neither `cashier` nor `tables`; `cashier` imports nothing of `tables`
(it knows a table's ledger account by an opaque reference, tables/ledger.py). Checked
two ways: every module of the lower apps is parsed (`ast`) for imports of a higher app,
and every model field of theirs that relates to another model (foreign keys, string
references such as ``"tables.Table"`` included) must point to its own layer or below.
Code above the apps (poker_room: urls, the profile page) may depend on all of them.
"""

import ast
from pathlib import Path

import pytest
from django.apps import apps

ROOT = Path(__file__).resolve().parent.parent.parent
LAYERS = ("accounts", "cashier", "tables")


def higher_imports(source: str, *, app: str) -> list[str]:
    """The modules of apps above `app` that `source` imports."""
    higher = LAYERS[LAYERS.index(app) + 1 :]
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module]
        else:
            continue
        found += [name for name in names if name.split(".")[0] in higher]
    return found


def test_the_checker_sees_every_form_of_import():
    source = "import tables.models\nfrom tables import rake\nfrom cashier.models import X\n"
    assert higher_imports(source, app="cashier") == ["tables.models", "tables"]
    assert higher_imports(source, app="accounts") == ["tables.models", "tables", "cashier.models"]
    assert higher_imports(source, app="tables") == []


@pytest.mark.parametrize("app", LAYERS[:-1])
def test_no_module_of_a_lower_app_imports_a_higher_one(app):
    modules = sorted((ROOT / app).rglob("*.py"))
    assert modules
    found = {
        str(path.relative_to(ROOT)): imports
        for path in modules
        if (imports := higher_imports(path.read_text(), app=app))
    }
    assert found == {}


@pytest.mark.parametrize("app", LAYERS[:-1])
def test_no_model_of_a_lower_app_relates_to_a_higher_one(app):
    allowed = {"auth", "contenttypes", *LAYERS[: LAYERS.index(app) + 1]}
    models = apps.get_app_config(app).get_models()
    relations = {
        f"{model.__name__}.{field.name}": field.related_model._meta.app_label
        for model in models
        for field in model._meta.get_fields(include_hidden=False)
        # Forward relations only: a higher app's models may point down at ours.
        if field.is_relation and field.concrete and field.related_model is not None
    }
    assert relations  # the check sees the apps' relations at all
    assert {name: label for name, label in relations.items() if label not in allowed} == {}
