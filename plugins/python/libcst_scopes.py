"""Definitions and scope-resolved references for the libcst backend.

One pass over a parsed module (with libcst's ``ScopeProvider`` and ``ExpressionContextProvider``
metadata, and line spans from :mod:`.libcst_lines`) collects the same definitions as the
ast backend and the reference candidates (names and attributes read in load context, calls). Once
the whole module has been seen, every candidate is resolved through libcst's scopes:

* a name bound by an import resolves to the imported qualified name (``from pkg.mod import f as
  g; g()`` -> ``pkg.mod.f``; relative imports are made absolute from the module's own name);
* a name bound at module or class level resolves to ``<module>.<name>`` / ``<module>.C.<name>``,
  a nested def or class to ``<module>.<outer>.<name>`` (the ``Tag.qualified_name`` convention);
* a local variable or parameter is not a reference at all and is dropped, and so is a builtin
  (``len``) the file does not rebind (as in the ast backend);
* ``self.m`` / ``cls.m`` inside class ``C`` resolves to ``<module>.C.m`` when ``C`` (or a base class
  defined in the same module) defines ``m``; attributes of imported names extend the dotted name;
* star-imported and unbound names, and conflicting bindings keep ``target=None``.

A reference through an alias carries the original name (``g()`` above is a reference named
``f``), so name-based matching still works where the target is not used. Names are
NFKC-normalised as Python does.
"""

from __future__ import annotations

import ast
import unicodedata
import warnings
from collections.abc import Iterator, Mapping
from dataclasses import dataclass

import libcst as cst
from libcst.helpers import get_full_name_for_node
from libcst.metadata import (
    BuiltinAssignment,
    ClassScope,
    ExpressionContext,
    GlobalScope,
    ImportAssignment,
    Scope,
)

from repomapper.model import DEF, REF, Import, SymbolKind, Tag

from .common import signature_of, variable_kind

_KEYWORD_NAMES = frozenset({"None", "True", "False"})  # Name nodes in libcst, constants in ast
_REF_PRIORITY: dict[str, int] = {SymbolKind.CALL: 0, SymbolKind.ATTRIBUTE: 1, SymbolKind.NAME: 2}
_STUB_BODY = cst.SimpleStatementSuite((cst.Expr(cst.Ellipsis()),))
_DefNode = cst.FunctionDef | cst.ClassDef


@dataclass(frozen=True, slots=True)
class Value:
    """What an expression denotes, as far as static scope analysis can tell.

    ``qname`` is the fully qualified name (``None`` when unknown). ``extendable`` means attribute
    access appends to it (modules and imported names). ``cls`` is a class defined in this module,
    whose attributes are looked up in its body (and its in-module bases).
    """

    qname: str | None
    extendable: bool = False
    cls: cst.ClassDef | None = None


UNKNOWN = Value(None)


def module_name(path: str) -> str:
    """The dotted module name of ``path``: ``src/pkg/mod.py`` -> ``pkg.mod``, ``pkg/__init__.py``
    -> ``pkg``."""
    parts = path.replace("\\", "/").strip("/").split("/")
    parts[-1] = parts[-1].rsplit(".", 1)[0]
    if parts[-1] == "__init__":
        parts.pop()
    if len(parts) > 1 and parts[0] == "src":
        parts.pop(0)
    return ".".join(p for p in parts if p)


def _join(*parts: str) -> str:
    return ".".join(p for p in parts if p)


def ident(name: str) -> str:
    """An identifier as Python (and the ast backend) sees it: NFKC-normalised (PEP 3131)."""
    return name if name.isascii() else unicodedata.normalize("NFKC", name)


def _dotted(node: cst.CSTNode | None) -> str:
    return ident(get_full_name_for_node(node) or "") if node is not None else ""


def _maybe_ident(name: str | None) -> str | None:
    return None if name is None else ident(name)


def _target_names(expr: cst.BaseExpression) -> Iterator[cst.Name]:
    """Plain names bound by an assignment target (through tuples, lists and starred)."""
    stack = [expr]
    while stack:
        e = stack.pop()
        if isinstance(e, cst.Name):
            yield e
        elif isinstance(e, cst.Tuple | cst.List):
            stack.extend(el.value for el in e.elements)
        elif isinstance(e, cst.StarredElement):
            stack.append(e.value)


def _normalised(code: str, kind: type[ast.AST]) -> str:
    """The ast backend's one-line signature for ``code``; collapsed source if ast cannot parse it
    (syntax newer than the running Python)."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            body = ast.parse(code.strip()).body
        if len(body) == 1 and isinstance(body[0], kind):
            return signature_of(body[0])
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        pass
    return " ".join(code.split()).removesuffix(" ...")


def _docstring(node: _DefNode) -> str | None:
    doc = node.get_docstring(clean=True)
    if not isinstance(doc, str) or not doc:
        return None
    return doc  # (the core keeps the first paragraph, cut to length)


def _is_staticmethod(fn: cst.FunctionDef) -> bool:
    return any(get_full_name_for_node(d.decorator) == "staticmethod" for d in fn.decorators)


class Collector(cst.CSTVisitor):
    """Collects definitions, imports and reference candidates in one pass, then resolves."""

    def __init__(
        self,
        path: str,
        module: cst.Module,
        spans: Mapping[cst.CSTNode, tuple[int, int]],
        scopes: Mapping[cst.CSTNode, Scope | None],
        contexts: Mapping[cst.CSTNode, ExpressionContext],
    ):
        super().__init__()
        self.path = path
        self.module_name = module_name(path)
        self.package = (
            self.module_name
            if path.rsplit("/", 1)[-1].startswith("__init__.")
            else self.module_name.rpartition(".")[0]
        )
        self._module = module
        self._spans = spans
        self._scopes = scopes
        self._contexts = contexts
        self.defs: list[Tag] = []
        self.imports: list[Import] = []
        self._stack: list[cst.CSTNode] = []  # enclosing FunctionDef / ClassDef nodes
        self._qual: dict[cst.CSTNode, str] = {}  # def node -> "Outer.name"
        self._members: dict[cst.ClassDef, dict[str, cst.CSTNode]] = {}
        self._names: list[cst.Name] = []
        self._attributes: list[cst.Attribute] = []
        self._called: set[cst.CSTNode] = set()
        self._attr_values: dict[cst.Attribute, Value] = {}

    # -- definitions ---------------------------------------------------------------------------
    def _scope_name(self) -> str:
        return self._qual[self._stack[-1]] if self._stack else ""

    def _in_class(self) -> cst.ClassDef | None:
        top = self._stack[-1] if self._stack else None
        return top if isinstance(top, cst.ClassDef) else None

    def _define(self, node: _DefNode, kind: str) -> None:
        scope, owner = self._scope_name(), self._in_class()
        start, end = self._spans[node]
        stub = node.with_changes(
            decorators=(), leading_lines=(), lines_after_decorators=(), body=_STUB_BODY
        )
        expected: type[ast.AST] = (
            ast.ClassDef if isinstance(node, cst.ClassDef) else ast.FunctionDef
        )
        if isinstance(node, cst.FunctionDef) and node.asynchronous is not None:
            expected = ast.AsyncFunctionDef
        sig = _normalised(self._module.code_for_node(stub), expected)
        name = ident(node.name.value)
        self.defs.append(Tag(self.path, start, end, name, DEF, kind, scope, sig, _docstring(node)))
        self._qual[node] = _join(scope, name)
        if owner is not None:
            self._members.setdefault(owner, {})[name] = node
        self._stack.append(node)

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self._define(node, SymbolKind.CLASS)

    def leave_ClassDef(self, original_node: cst.ClassDef) -> None:
        self._stack.pop()

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        kind = SymbolKind.METHOD if self._in_class() is not None else SymbolKind.FUNCTION
        self._define(node, kind)

    def leave_FunctionDef(self, original_node: cst.FunctionDef) -> None:
        self._stack.pop()

    def _assignment(
        self, node: cst.Assign | cst.AnnAssign, targets: list[cst.BaseExpression]
    ) -> None:
        if self._stack and not isinstance(self._stack[-1], cst.ClassDef):
            return  # assignments inside functions are locals, not definitions
        owner, scope = self._in_class(), self._scope_name()
        end = self._spans[node][1]
        sig: str | None = None
        for target in targets:
            for name in _target_names(target):
                if sig is None:
                    expected = ast.Assign if isinstance(node, cst.Assign) else ast.AnnAssign
                    sig = _normalised(self._module.code_for_node(node), expected)
                value = ident(name.value)
                kind = SymbolKind.FIELD if owner is not None else variable_kind(value)
                line = self._spans[name][0]
                self.defs.append(Tag(self.path, line, end, value, DEF, kind, scope, sig, None))
                if owner is not None:
                    self._members.setdefault(owner, {})[value] = node

    def visit_Assign(self, node: cst.Assign) -> None:
        self._assignment(node, [t.target for t in node.targets])

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        self._assignment(node, [node.target])

    # -- imports -------------------------------------------------------------------------------
    def visit_Import(self, node: cst.Import) -> bool:
        line = self._spans[node][0]
        for alias in node.names:
            name, alias_name = ident(alias.evaluated_name), _maybe_ident(alias.evaluated_alias)
            self.imports.append(Import(self.path, name, (), False, line, 0, (), alias_name))
        return False  # the dotted names inside are not references

    def visit_ImportFrom(self, node: cst.ImportFrom) -> bool:
        line = self._spans[node][0]
        level = len(node.relative)
        source = _dotted(node.module)
        if isinstance(node.names, cst.ImportStar):
            names: tuple[str, ...] = ("*",)
            aliases: tuple[str | None, ...] = (None,)
        else:
            names = tuple(ident(a.evaluated_name) for a in node.names)
            aliases = tuple(_maybe_ident(a.evaluated_alias) for a in node.names)
        self.imports.append(Import(self.path, source, names, level > 0, line, level, aliases, None))
        return False

    def visit_Global(self, node: cst.Global) -> bool:
        return False

    def visit_Nonlocal(self, node: cst.Nonlocal) -> bool:
        return False

    # -- reference candidates ------------------------------------------------------------------
    def visit_Call(self, node: cst.Call) -> None:
        self._called.add(node.func)

    def visit_Name(self, node: cst.Name) -> None:
        if (
            self._contexts.get(node) is ExpressionContext.LOAD
            and node.value not in _KEYWORD_NAMES
            and self._scopes.get(node) is not None
        ):
            self._names.append(node)

    def visit_Attribute(self, node: cst.Attribute) -> None:
        if self._contexts.get(node) is ExpressionContext.LOAD:
            self._attributes.append(node)

    # -- resolution ----------------------------------------------------------------------------
    def references(self) -> list[Tag]:
        """Resolve the collected candidates (call after visiting the whole module)."""
        refs: dict[tuple[int, str, str | None], str] = {}

        def add(line: int, name: str, target: str | None, kind: str) -> None:
            key = (line, name, target)
            old = refs.get(key)
            if old is None or _REF_PRIORITY[kind] < _REF_PRIORITY[old]:
                refs[key] = kind

        for node in self._names:
            emit, value = self.resolve_name(node)
            if emit:
                target = ident(value.qname) if value.qname else None
                name = target.rpartition(".")[2] if target else ident(node.value)
                kind = SymbolKind.CALL if node in self._called else SymbolKind.NAME
                add(self._spans[node][0], name, target, kind)
        for attribute in self._attributes:
            value = self.resolve_attribute(attribute)
            kind = SymbolKind.CALL if attribute in self._called else SymbolKind.ATTRIBUTE
            target = ident(value.qname) if value.qname else None
            add(self._spans[attribute.attr][0], ident(attribute.attr.value), target, kind)
        return [
            Tag(self.path, line, line, name, REF, kind, "", None, None, target)
            for (line, name, target), kind in refs.items()
        ]

    def resolve_name(self, node: cst.Name) -> tuple[bool, Value]:
        """Whether a name read is a reference worth emitting, and what it denotes."""
        scope = self._scopes.get(node)
        if scope is None:
            return False, UNKNOWN
        assignments = scope[node.value]
        if not assignments:
            return True, UNKNOWN  # unbound here: star import, injected global, typo
        if all(isinstance(a, BuiltinAssignment) for a in assignments):
            return False, UNKNOWN  # a builtin: no definition in the repository to link to
        values: set[Value] = set()
        for a in assignments:
            if isinstance(a, BuiltinAssignment):
                values.add(UNKNOWN)
            elif isinstance(a, ImportAssignment):
                qname = self._import_qname(a.node, node.value)
                values.add(Value(qname, extendable=True) if qname else UNKNOWN)
            else:
                local = self._binding_value(a.scope, getattr(a, "node", None), node.value)
                if local is None:
                    return False, self._self_value(a.scope, getattr(a, "node", None))
                values.add(local)
        return True, values.pop() if len(values) == 1 else UNKNOWN

    def _binding_value(self, scope: Scope, bound: cst.CSTNode | None, name: str) -> Value | None:
        """The value of a non-import binding; ``None`` for a local variable or parameter."""
        cls = bound if isinstance(bound, cst.ClassDef) else None
        if isinstance(scope, GlobalScope):
            return Value(_join(self.module_name, name), cls=cls)
        if isinstance(scope, ClassScope):
            owner = self._qual.get(scope.node)
            return Value(_join(self.module_name, owner, name), cls=cls) if owner else UNKNOWN
        if isinstance(bound, _DefNode) and bound in self._qual:
            return Value(_join(self.module_name, self._qual[bound]), cls=cls)
        return None

    def _self_value(self, scope: Scope, bound: cst.CSTNode | None) -> Value:
        """``self``/``cls``: the first parameter of a method denotes its class."""
        if not isinstance(bound, cst.Param):
            return UNKNOWN
        fn = getattr(scope, "node", None)
        parent = getattr(scope, "parent", None)
        if not isinstance(fn, cst.FunctionDef) or not isinstance(parent, ClassScope):
            return UNKNOWN
        positional = (*fn.params.posonly_params, *fn.params.params)
        if not positional or positional[0] is not bound or _is_staticmethod(fn):
            return UNKNOWN
        cls = parent.node
        return Value(None, cls=cls) if isinstance(cls, cst.ClassDef) else UNKNOWN

    def resolve_attribute(self, node: cst.Attribute) -> Value:
        found = self._attr_values.get(node)
        if found is None:
            found = self._attribute(node)
            self._attr_values[node] = found
        return found

    def _attribute(self, node: cst.Attribute) -> Value:
        base = self.resolve_expression(node.value)
        attr = ident(node.attr.value)
        if base.cls is not None:
            return self._member(base.cls, attr, set())
        if base.qname and base.extendable:
            return Value(f"{base.qname}.{attr}", extendable=True)
        return UNKNOWN

    def resolve_expression(self, expr: cst.BaseExpression) -> Value:
        if isinstance(expr, cst.Name):
            return self.resolve_name(expr)[1]
        if isinstance(expr, cst.Attribute):
            return self.resolve_attribute(expr)
        return UNKNOWN

    def _member(self, cls: cst.ClassDef, attr: str, seen: set[cst.ClassDef]) -> Value:
        """``attr`` looked up on a class of this module, then on its in-module bases."""
        seen.add(cls)
        member = self._members.get(cls, {}).get(attr)
        if member is not None and cls in self._qual:
            nested = member if isinstance(member, cst.ClassDef) else None
            return Value(_join(self.module_name, self._qual[cls], attr), cls=nested)
        for base in cls.bases:
            if base.keyword is not None:
                continue
            value = self.resolve_expression(base.value)
            if value.cls is not None and value.cls not in seen:
                found = self._member(value.cls, attr, seen)
                if found.qname:
                    return found
        return UNKNOWN

    def _import_qname(self, stmt: cst.CSTNode | None, name: str) -> str | None:
        """The qualified name that ``name`` is bound to by import statement ``stmt``."""
        if isinstance(stmt, cst.Import):
            for alias in stmt.names:
                full, bound = alias.evaluated_name, alias.evaluated_alias
                if bound == name:
                    return full
                if bound is None and full.split(".", 1)[0] == name:
                    return name  # "import os.path" binds "os"
            return None
        if not isinstance(stmt, cst.ImportFrom) or isinstance(stmt.names, cst.ImportStar):
            return None
        for alias in stmt.names:
            if (alias.evaluated_alias or alias.evaluated_name) == name:
                base = self._from_module(stmt)
                return None if base is None else _join(base, alias.evaluated_name)
        return None

    def _from_module(self, stmt: cst.ImportFrom) -> str | None:
        """The absolute module a ``from`` import reads from; ``None`` if the dots climb above
        the repository root (the same rule as :func:`.modules.resolve_relative`)."""
        source = _dotted(stmt.module)
        level = len(stmt.relative)
        if not level:
            return source
        parts = self.package.split(".") if self.package else []
        if level - 1 > len(parts):
            return None
        return _join(*parts[: len(parts) - (level - 1)], source)
