"""Griffe extension for the documentation site: Sphinx roles as Markdown code.

The docstrings in ``src/`` are numpydoc and name other objects with Sphinx roles
(``:class:`MondrianKernel```, ``:func:`~mondrianlearn.forest.merge_forests```), which
Markdown would print as they are. This extension, loaded by mkdocstrings (see
``mkdocs.yml``), rewrites each role as inline code before the docstring is parsed, the
way Sphinx would display it: ``~`` keeps the last component, functions and methods get
``()``. The docstrings themselves are not changed.
"""

import re

import griffe

_ROLE = re.compile(r":(?:py:)?(class|func|meth|mod|data|attr|obj|exc|const):`(~?)([^`]+)`")


def _code(match):
    role, tilde, target = match.groups()
    # Sphinx's explicit-title form: :role:`title <target>`.
    explicit = re.fullmatch(r"(.+?)\s*<[^>]+>", target)
    if explicit:
        label = explicit.group(1)
    else:
        label = target.lstrip(".")
        if tilde:
            label = label.rsplit(".", 1)[-1]
        if role in ("func", "meth") and not label.endswith(")"):
            label += "()"
    return f"`{label}`"


def sphinx_roles_to_code(text):
    """Return ``text`` with every Sphinx cross-reference role written as inline code."""
    return _ROLE.sub(_code, text)


class SphinxRoles(griffe.Extension):
    """Rewrite Sphinx roles in every docstring griffe loads."""

    def on_instance(self, *, obj, **kwargs):
        docstring = obj.docstring
        if docstring is not None and ":" in docstring.value:
            docstring.value = sphinx_roles_to_code(docstring.value)
