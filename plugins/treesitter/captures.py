"""One pass of a file's query over its tree, its matches sorted by what they capture.

A grammar's query holds its tags patterns and then its imports patterns (see
:class:`~.languages.Grammar`), so the tree is walked once for both hooks: walking it is most of
what a query costs, whatever the number of patterns. Capture names say what a match is:

* ``@definition.<kind>`` on a definition node with ``@name`` on its name (and ``@receiver``);
* ``@scope.<kind>`` on a node that only encloses others, with an optional ``@name``;
* ``@reference.<kind>`` on the name node of a reference;
* ``@import.<handler>`` on an import statement (:mod:`.imports` reads it).

Other captures (``@name``, ``@_form``) are read with their match's definition or predicate.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .parsing import Parsed

#: Patterns start no deeper than this: query matching costs grow with depth times size, and
#: nothing that deep (a 1000-operand expression) holds definitions worth mapping.
MAX_START_DEPTH = 1000
#: A name referenced on one line in several ways counts once, as the first kind here.
REF_PRIORITY = {"call": 0, "type": 1, "attribute": 2, "name": 3}
_SCRATCH_KEY = "captured"


@dataclass(slots=True)
class Captured:
    """What the query matched in one file."""

    #: name node range -> (pattern index, kind, definition node, name node, receiver node):
    #: of the patterns that define a name, the first one wins
    defs: dict[tuple[int, int], tuple[int, str, Any, Any, Any]]
    #: (kind, scope node, name node or None)
    scopes: list[tuple[str, Any, Any]]
    #: reference capture name -> its kind and the node lists of its matches, in match order
    refs: dict[str, tuple[str, list[list[Any]]]]
    #: (handler, import statement nodes), in match order
    imports: list[tuple[str, list[Any]]]

    def references(self) -> list[tuple[str, list[list[Any]]]]:
        """The references' (kind, node lists), the kind of highest priority first."""
        return sorted(self.refs.values(), key=lambda r: (REF_PRIORITY.get(r[0], 9), r[0]))


def captured(parsed: Parsed) -> Captured:
    """The matches of ``parsed``'s query, made once per parse."""
    found = parsed.scratch.get(_SCRATCH_KEY)
    if found is None:
        found = parsed.scratch[_SCRATCH_KEY] = _capture(parsed)
    assert isinstance(found, Captured)
    return found


def _capture(parsed: Parsed) -> Captured:
    from tree_sitter import QueryCursor

    cursor = QueryCursor(parsed.grammar.query)
    cursor.set_max_start_depth(MAX_START_DEPTH)
    found = Captured({}, [], {}, [])
    defs = found.defs
    # a reference capture's node lists go straight to its own list: most matches are one
    # reference, and a file has hundreds of them per capture name
    sinks: dict[str, list[list[Any]]] = {}
    for pattern_index, caps in cursor.matches(parsed.tree.root_node):
        for cap, nodes in caps.items():
            sink = sinks.get(cap)
            if sink is not None:
                sink.append(nodes)
                continue
            role, dot, kind = cap.partition(".")
            if not dot:
                continue  # ``@name``, ``@receiver``: read with their match's definition
            if role == "reference":
                sink = sinks[cap] = [nodes]
                found.refs[cap] = (kind, sink)
            elif role == "definition":
                receiver = caps.get("receiver", [None])[0]
                for name_node in caps.get("name", ()):
                    key = (name_node.start_byte, name_node.end_byte)
                    seen = defs.get(key)
                    if seen is None or seen[0] > pattern_index:
                        defs[key] = (pattern_index, kind, nodes[0], name_node, receiver)
            elif role == "scope":
                names = caps.get("name")
                found.scopes.append((kind, nodes[0], names[0] if names else None))
            elif role == "import":
                found.imports.append((kind, nodes))
    return found
