"""The fitted constants of the symbol scoring (:mod:`.symbols`): the weights file and its loader.

A definition's task evidence combines what the task names (the unit: an identifier the task
writes is worth 0.5, a traceback frame inside it 0.8, as :mod:`.explicit` finds them) with the
words of the task found in its name, its signature and docstring, and its body, and with a
message the task shows that its code holds. How much each of those is worth, and how much of a
class's evidence it keeps once its members have theirs, is not chosen by hand:
``benchmarks/fit_symbols.py`` fits the values on the choosing repositories of the localization
sets (the function the fix changed, against the symbol order the map gives) and writes
``symbol_weights.json`` beside this module, with the data and split they were fitted on. The
file is read once per process and validated; a broken file is an error that says what is wrong,
never a silent fallback. It is package data, so a new fit changes the keys of memoised task maps
(``codedigest`` walks every file of the package).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, fields
from pathlib import Path

from .weights import named_weights, read_document

SYMBOL_WEIGHTS_FILE = Path(__file__).with_name("symbol_weights.json")


class SymbolWeightsError(ValueError):
    """The symbol weights file is missing, unreadable or not a valid fit."""


@dataclass(frozen=True, slots=True)
class SymbolWeights:
    """The symbol scoring's constants, each a finite number >= 0.

    * ``words``: the words evidence of the best definition of the best file, next to the named
      evidence's unit;
    * ``name``, ``doc``, ``body``: how much a task term counts in a definition's name, in its
      signature and docstring, and in its body (relative to each other: the words evidence is
      normalized to the task's best definition);
    * ``message``: a message the task shows, held by one definition (spread over its holders);
    * ``owner_share``: the share of its evidence a class keeps once its members have theirs
      (and that the owner of a ``Class.method`` the task writes gets, and a named variable),
      in (0, 1];
    * ``evidence_power``: in the ``--task`` map, a definition is wanted as much as its file's
      score times its evidence over the task's best raised to this power, when that is more
      than the file's score over its place in the file (:func:`repomapper.ranked.map_items`):
      how far a definition the task describes well in a lower file comes before a higher
      file's next definitions. In (0, 4];
    * ``place_share``, ``place_power``: that floor, the file's score over its place in the
      file: the k-th definition (from 1) is wanted at least ``place_share / k **
      place_power`` times its file's score, the task's evidence aside (how far a file's
      first definitions come before a lower file's whatever they are). ``place_share`` in
      (0, 1], ``place_power`` in (0, 8].
    """

    words: float
    name: float
    doc: float
    body: float
    message: float
    owner_share: float
    evidence_power: float
    place_share: float
    place_power: float

    def to_dict(self) -> dict[str, float]:
        return {f.name: getattr(self, f.name) for f in fields(self)}


#: the names of :class:`SymbolWeights`' values, in the file's order
SYMBOL_WEIGHT_NAMES = tuple(f.name for f in fields(SymbolWeights))
#: the values that must be above 0 and at most this (a share, a power)
_BOUNDED = {"owner_share": 1.0, "evidence_power": 4.0, "place_share": 1.0, "place_power": 8.0}


def parse_symbol_weights(raw: object, source: str) -> SymbolWeights:
    """Validate a loaded symbol weights document; :class:`SymbolWeightsError` says what is
    wrong."""
    if not isinstance(raw, dict):
        raise SymbolWeightsError(f"{source}: not a JSON object")
    values = named_weights(raw, SYMBOL_WEIGHT_NAMES, source, "", SymbolWeightsError)
    for name, high in _BOUNDED.items():
        if not 0 < values[name] <= high:
            raise SymbolWeightsError(
                f"{source}: {name!r} must be in (0, {high:g}], not {values[name]!r}"
            )
    if not values["name"] + values["doc"] + values["body"] > 0:
        raise SymbolWeightsError(f"{source}: 'name', 'doc' and 'body' are all 0")
    return SymbolWeights(**values)


def load_symbol_weights(path: Path) -> SymbolWeights:
    raw = read_document(path, "symbol weights", SymbolWeightsError)
    return parse_symbol_weights(raw, str(path))


@functools.cache
def shipped_symbol_weights() -> SymbolWeights:
    """The package's fitted symbol weights, read and validated once per process."""
    return load_symbol_weights(SYMBOL_WEIGHTS_FILE)
