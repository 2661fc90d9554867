"""Every public parameter, attribute and return is described in the docstrings (numpydoc).

The public API is what ``mondrianlearn.__all__`` exports and the public names of the
modules ``river``, ``dask``, ``plotting``, ``datasets``, ``evaluation``,
``experiments`` and ``cli`` (their ``__all__`` where they have one, else the functions
and classes they define whose names do not start with an underscore). For each of them:

- a class documents every parameter of its ``__init__`` in its Parameters section
  (a dataclass may document its fields under Attributes instead), with a description;
- a public function or method (``fit``, ``partial_fit``, ``predict``, ...; inherited
  ones included when a class of the package defines them) documents every parameter
  with a description, and has a Returns (or Yields) section with descriptions when it
  returns a value (a method returning ``self`` may say just ``self``);
- a documented parameter that is not in the signature is an error;
- every entry of an Attributes section has a description, and every public property
  defined in the package has a docstring;
- a module-level constant in an ``__all__`` has a docstring (a string right after the
  assignment, read statically as the documentation site does).

All failures are collected and reported in one assertion message. The docstrings are
parsed with griffe (installed with mkdocstrings, the ``docs`` and ``test`` extras);
the test skips, saying so, without it. No estimator is fitted.
"""

import ast
import dataclasses
import importlib
import importlib.util
import inspect
import textwrap
from pathlib import Path

import pytest

griffe = pytest.importorskip(
    "griffe", reason="griffe parses the numpydoc docstrings; it comes with mkdocstrings: "
                     "pip install -e '.[test]'")

SRC = Path(__file__).resolve().parents[1] / "src"

# module -> the optional dependency it needs (None: none)
MODULES = {
    "mondrianlearn": None,
    "mondrianlearn.river": "river",
    "mondrianlearn.dask": "distributed",
    "mondrianlearn.plotting": "matplotlib",
    "mondrianlearn.datasets": None,
    "mondrianlearn.evaluation": None,
    "mondrianlearn.experiments": None,
    "mondrianlearn.cli": None,
}


def _sections(doc):
    """The parsed sections of a numpydoc docstring, by kind (parameters, returns, ...)."""
    parsed = griffe.Docstring(inspect.cleandoc(doc), parser="numpy").parse()
    sections = {}
    for section in parsed:
        kind = section.kind.value
        if isinstance(section.value, list):
            sections.setdefault(kind, []).extend(section.value)
        else:
            sections.setdefault(kind, [])
    return sections


def _name(item):
    return (item.name or "").lstrip("*")


def _signature_parameters(func, skip_first):
    try:
        params = list(inspect.signature(func).parameters.values())
    except (TypeError, ValueError):
        return None
    if skip_first and params:
        params = params[1:]
    return [p.name for p in params]


def _own_returns(func):
    """Whether the function returns a value other than None, or yields (nested
    functions and classes do not count)."""
    func = inspect.unwrap(func)
    try:
        source = textwrap.dedent(inspect.getsource(func))
    except (OSError, TypeError):
        return True
    body = ast.parse(source).body[0]
    stack = list(ast.iter_child_nodes(body))
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            continue
        if isinstance(node, (ast.Yield, ast.YieldFrom)):
            return True
        if isinstance(node, ast.Return) and node.value is not None and not (
                isinstance(node.value, ast.Constant) and node.value.value is None):
            return True
        stack.extend(ast.iter_child_nodes(node))
    return False


def _check_described(where, kind, items, failures):
    for item in items:
        if not (item.description or "").strip():
            failures.append(
                f"{where}: {kind} {_name(item) or item.annotation!r} has no description")


def _check_function(where, func, failures, *, skip_first, foreign=False):
    """Check a function's docstring; ``foreign``: the docstring is inherited from a
    base class of another library, whose own style is accepted (names are checked)."""
    doc = inspect.getdoc(func)
    if not doc:
        failures.append(f"{where}: no docstring")
        return
    sections = _sections(doc)
    names = _signature_parameters(func, skip_first)
    documented = sections.get("parameters", []) + sections.get("other parameters", [])
    if not foreign:
        _check_described(where, "parameter", documented, failures)
    documented_names = {_name(item) for item in documented}
    if names is not None:
        for name in names:
            if name not in documented_names:
                failures.append(f"{where}: parameter {name!r} is not documented")
        for name in sorted(documented_names - set(names)):
            failures.append(f"{where}: documents {name!r}, which is not a parameter")
    returns = sections.get("returns", []) + sections.get("yields", [])
    if _own_returns(func) and not foreign:
        if not returns:
            failures.append(f"{where}: returns a value but has no Returns section")
        for item in returns:
            if "self" in (_name(item), str(item.annotation)):
                continue
            _check_described(where, "return", [item], failures)
    _check_described(where, "attribute", sections.get("attributes", []), failures)


def _defined_in_package(cls, name):
    """The class of the MRO that defines ``name``, if it belongs to the package."""
    for klass in cls.__mro__:
        if name in klass.__dict__:
            module = klass.__module__ or ""
            return klass if module.split(".")[0] == "mondrianlearn" else None
    return None


def _docstring_owner(cls, name):
    """Where the first docstring of ``name`` along the MRO is: "package", the module
    of a foreign class, or None."""
    for klass in cls.__mro__:
        raw = klass.__dict__.get(name)
        if raw is None:
            continue
        doc = getattr(getattr(raw, "__func__", raw), "__doc__", None)
        if doc:
            module = klass.__module__ or ""
            return "package" if module.split(".")[0] == "mondrianlearn" else module
    return None


def _check_class(where, cls, failures):
    doc = inspect.getdoc(cls)
    if not doc:
        failures.append(f"{where}: no docstring")
        return
    sections = _sections(doc)
    documented = sections.get("parameters", []) + sections.get("other parameters", [])
    _check_described(where, "parameter", documented, failures)
    attributes = sections.get("attributes", [])
    _check_described(where, "attribute", attributes, failures)
    documented_names = {_name(item) for item in documented}

    init_owner = _defined_in_package(cls, "__init__")
    if dataclasses.is_dataclass(cls):
        names = [f.name for f in dataclasses.fields(cls) if f.init]
        accepted = documented_names | {_name(item) for item in attributes}
        for name in names:
            if name not in accepted:
                failures.append(f"{where}: field {name!r} is not documented")
        for name in sorted(documented_names - set(names)):
            failures.append(f"{where}: documents {name!r}, which is not a parameter")
    elif init_owner is not None:
        names = _signature_parameters(cls.__init__, skip_first=True)
        for name in names:
            if name not in documented_names:
                failures.append(f"{where}: __init__ parameter {name!r} is not documented")
        for name in sorted(documented_names - set(names)):
            failures.append(f"{where}: documents {name!r}, which is not a parameter")

    for name in sorted(dir(cls)):
        if name.startswith("_"):
            continue
        owner = _defined_in_package(cls, name)
        if owner is None:
            continue
        raw = owner.__dict__[name]
        member_where = f"{where}.{name}"
        if isinstance(raw, property):
            if not (inspect.getdoc(raw) or "").strip():
                failures.append(f"{member_where}: property without a docstring")
            continue
        # A method without a docstring of its own that implements a documented method
        # of a base class from another library (river's ``learn_one``, ...) carries
        # that library's docstring, in that library's style.
        foreign = _docstring_owner(cls, name) not in (None, "package")
        if isinstance(raw, staticmethod):
            _check_function(member_where, raw.__func__, failures, skip_first=False)
        elif isinstance(raw, classmethod):
            _check_function(member_where, raw.__func__, failures, skip_first=True)
        elif inspect.isfunction(raw) or inspect.isfunction(getattr(raw, "fn", None)):
            # ``fn``: scikit-learn's ``available_if`` descriptor (``predict_proba``
            # of a model that has it only for some parameters)
            func = raw if inspect.isfunction(raw) else raw.fn
            _check_function(member_where, func, failures, skip_first=True, foreign=foreign)


def _static_docstring(module_name, name):
    """The docstring of a module-level name as the documentation site reads it."""
    module = griffe.load(module_name, search_paths=[str(SRC)], resolve_aliases=True,
                         resolve_external=False)
    obj = module[name]
    return obj.docstring.value if obj.docstring is not None else ""


def _public_names(module):
    names = getattr(module, "__all__", None)
    if names is not None:
        return [n for n in names if not n.startswith("_")]
    return sorted(n for n, v in vars(module).items()
                  if not n.startswith("_") and (inspect.isfunction(v) or inspect.isclass(v))
                  and getattr(v, "__module__", None) == module.__name__)


def _collect_failures(module_name):
    module = importlib.import_module(module_name)
    failures = []
    for name in _public_names(module):
        try:
            value = getattr(module, name)
        except ImportError:  # a lazy export whose optional dependency is absent: its
            continue         # own module's case skips, saying so
        where = f"{module_name}.{name}"
        if inspect.isclass(value):
            _check_class(where, value, failures)
        elif inspect.isfunction(value):
            _check_function(where, value, failures, skip_first=False)
        elif not inspect.ismodule(value) and not _static_docstring(module_name, name).strip():
            failures.append(f"{where}: no docstring (a string right after the assignment)")
    return failures


@pytest.mark.parametrize("module_name", sorted(MODULES))
def test_public_api_is_documented(module_name):
    needs = MODULES[module_name]
    if needs is not None and importlib.util.find_spec(needs) is None:
        pytest.skip(f"{module_name} needs {needs}, which is not installed")
    failures = _collect_failures(module_name)
    assert not failures, (f"{len(failures)} docstring problems in {module_name}:\n  "
                          + "\n  ".join(failures))


def test_the_checks_catch_missing_and_unknown_parameters():
    def documented(a, b=1):
        """Add.

        Parameters
        ----------
        a : int
            First.
        c : int
            Not a parameter.

        Returns
        -------
        int
        """
        return a + b

    failures = []
    _check_function("f", documented, failures, skip_first=False)
    assert any("'b' is not documented" in f for f in failures)
    assert any("documents 'c'" in f for f in failures)
    assert any("return 'int' has no description" in f for f in failures)
