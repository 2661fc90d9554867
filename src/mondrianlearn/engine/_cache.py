"""Freshness of the compiled-code cache across modules.

numba stores a kernel's machine code next to its source file and reuses it while
that one file is unchanged. A kernel's machine code, however, also contains the
kernels it calls from other modules (they are inlined or linked into it): after a
change to ``forest/_smoothing.py``, the cached code of ``ensemble/_forest_kernels.py``
would still run the old smoothing, silently, in a checkout being edited as after
an upgrade that leaves old cache files behind.

For the package's own files this module makes the cache's freshness stamp cover a
file *and every package module it imports*, directly or not: a kernel is compiled
again when any source that can end up in its machine code changes. Files outside
the package keep numba's behaviour. :func:`install` adds the locators (done once,
by ``engine._jit``); if numba's internals are not as expected it does nothing, and
caching keeps working with numba's own per-file stamp.
"""

import hashlib
import os
import re
from functools import cache
from pathlib import Path

PACKAGE_ROOT = Path(__file__).resolve().parent.parent
"""The ``mondrianlearn`` package directory."""

_IMPORT = re.compile(
    r"^[ \t]*(?:from[ \t]+(\.+[\w.]*|mondrianlearn[\w.]*)[ \t]+import[ \t]+"
    r"(\([^)]*\)|[^\n#]*)|import[ \t]+(mondrianlearn[\w.]*))", re.MULTILINE)


def _module_file(root, parts):
    """The file of module ``parts`` (a package's ``__init__.py``), or None."""
    base = root.joinpath(*parts) if parts else root
    if base.with_suffix(".py").is_file() and parts:
        return base.with_suffix(".py")
    if (base / "__init__.py").is_file():
        return base / "__init__.py"
    return None


def imported_files(path, root=PACKAGE_ROOT):
    """Files of the package at ``root`` that the module at ``path`` imports
    (relative imports and absolute ones of ``root``'s name, also those inside
    functions), as resolved paths.

    Over-approximates on purpose: ``from .x import y`` counts both ``x`` and, if it
    is a module, ``x.y``. A stale cache gives wrong results; a needless
    recompilation only costs time.
    """
    path = Path(path).resolve()
    root = Path(root).resolve()
    st = os.stat(path)
    return set(_imported_files(path, root, st.st_mtime_ns, st.st_size))


@cache
def _imported_files(path, root, mtime, size):
    package = list(path.parent.relative_to(root).parts)
    found = set()
    for origin, names, plain in _IMPORT.findall(path.read_text(encoding="utf-8")):
        target = origin or plain
        if target.startswith("."):
            dots = len(target) - len(target.lstrip("."))
            if dots - 1 > len(package):
                continue
            parts = package[:len(package) - (dots - 1)]
            rest = target[dots:]
        else:
            parts, rest = [], target.partition(".")[2]
            if target.partition(".")[0] != root.name:
                continue
        parts = parts + [p for p in rest.split(".") if p]
        module = _module_file(root, parts)
        if module is not None:
            found.add(module)
        for name in names.strip("()").replace("\\", " ").split(","):
            name = name.split(" as ")[0].strip()
            if name and name != "*":
                sub = _module_file(root, parts + [name])
                if sub is not None:
                    found.add(sub)
    found.discard(path)
    return frozenset(found)


@cache
def _file_digest(path, mtime, size):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def _digest(path):
    st = os.stat(path)
    return _file_digest(str(path), st.st_mtime_ns, st.st_size)


def source_closure(path, root=PACKAGE_ROOT):
    """``path`` and every file of the package it imports, transitively (sorted)."""
    root = Path(root).resolve()
    seen = {Path(path).resolve()}
    todo = list(seen)
    while todo:
        for dependency in imported_files(todo.pop(), root):
            if dependency not in seen:
                seen.add(dependency)
                todo.append(dependency)
    return sorted(seen)


@cache
def _process_stamp(path):
    return source_stamp(path)


def source_stamp(path, root=PACKAGE_ROOT):
    """A hash of the sources of :func:`source_closure`: changes when any of them
    does."""
    root = Path(root).resolve()
    digest = hashlib.sha256()
    for dependency in source_closure(path, root):
        digest.update(str(dependency.relative_to(root)).encode())
        digest.update(_digest(dependency).encode())
    return digest.hexdigest()


def _inside_package(py_file):
    try:
        Path(py_file).resolve().relative_to(PACKAGE_ROOT)
    except (ValueError, OSError):
        return False
    return True


def _closure_locator(base):
    """A subclass of numba's locator ``base`` that serves only the package's files,
    with :func:`source_stamp` as freshness stamp."""

    def from_function(cls, py_func, py_file):
        if not _inside_package(py_file):
            return None
        return super(locator, cls).from_function(py_func, py_file)

    def get_source_stamp(self):
        # Once per file and process: the sources a process imports do not change
        # under it in a way that matters to code it has already loaded.
        return ("mondrianlearn-closure", _process_stamp(str(self._py_file)))

    locator = type("Closure" + base.__name__.lstrip("_"), (base,), {
        "from_function": classmethod(from_function),
        "get_source_stamp": get_source_stamp,
        "__doc__": f"{base.__name__} with the stamp of the module's import closure.",
    })
    return locator


def install():
    """Put the package's locators ahead of numba's own (once); False if numba's
    cache internals are not as expected (numba's per-file stamps then apply)."""
    try:
        from numba.core import caching
    except ImportError:  # pragma: no cover
        return False
    impl = getattr(caching, "CacheImpl", None) or getattr(caching, "_CacheImpl", None)
    classes = getattr(impl, "_locator_classes", None)
    if not isinstance(classes, list):
        return False
    if any(getattr(c, "_mondrianlearn", False) for c in classes):
        return True
    names = ("UserProvidedCacheLocator", "InTreeCacheLocator", "UserWideCacheLocator")
    bases = [getattr(caching, n, None) or getattr(caching, "_" + n, None) for n in names]
    if not all(isinstance(b, type) and b in classes for b in bases):
        return False
    ours = [_closure_locator(b) for b in bases]
    for cls in ours:
        cls._mondrianlearn = True
    classes[:0] = ours
    return True
