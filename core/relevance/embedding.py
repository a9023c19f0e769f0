"""An optional re-ranking signal: how near the task's words are to a file's definitions, by a
static word embedding.

The files the other evidence ranks best (:data:`RERANKED` of them) are each read as their
definitions' headers (a definition's signature, else its first source line) under the file's
path; each is embedded as the mean of its tokens' vectors, and so is the task's text. A file's
``embed`` feature is its cosine similarity to the task, above the median of those files,
normalized to the best of them, so a file whose definitions speak of what the task describes
in other words than its own (synonyms, related terms) can pass one that only shares them.

The embedding is WordLlama's (MIT), installed with the ``embed`` extra: a token embedding
table of 16 MB shipped inside its wheel and a tokenizer, no model run, nothing downloaded (the
package's own loader looks for its tokenizer where its wheel does not put it and then tries the
network, so the files are opened here by their place in the package, with the package's own
dependencies: ``safetensors`` for the table, ``tokenizers`` for the tokenizer). The signal is off unless
a map asks for it (``MapSettings.embedding``, ``repomapper map --embed``); asked for without
the extra, it is an :class:`EmbeddingUnavailable` error that says how to install it.
"""

from __future__ import annotations

import functools
import importlib.metadata
import importlib.util
import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # numpy is imported when the signal runs: the contract imports this module
    import numpy as np

    from ..model import Tag

log = logging.getLogger(__name__)

#: The best files by the other evidence whose definitions are embedded (the signal re-ranks
#: them; a file further down has too little else for its words to lift it).
RERANKED = 100
#: Header lines read per file: a file of thousands of definitions says what it is in its first.
MAX_HEADERS = 400
#: A header line is cut here (a generated signature can be a page long).
MAX_HEADER_CHARS = 200
#: The task's text is embedded up to here (a pasted log says little more past it).
MAX_TASK_CHARS = 20_000
#: The distribution and the table inside it.
PACKAGE = "wordllama"
#: What installs it.
INSTALL_EMBED = 'pip install "repomapper[embed]"'
_WEIGHTS = ("weights", "l2_supercat_256.safetensors")
#: where the tokenizer is in the wheel (``tokenizers/``), and where the package's loader looks
_TOKENIZERS = (
    ("tokenizers", "l2_supercat_tokenizer_config.json"),
    ("tokenizer", "l2_supercat_tokenizer_config.json"),
)
_TABLE_KEY = "embedding.weight"


class EmbeddingUnavailable(RuntimeError):
    """The embedding signal was asked for and cannot be loaded (the extra is not installed,
    or its files are not where this version expects them)."""


@dataclass(frozen=True, slots=True)
class Embedder:
    """A loaded static embedding: a text is the sum of its tokens' rows of :attr:`table`, made a
    unit vector (a zero vector for a text without tokens). Summed one text at a time: WordLlama's
    own ``embed`` pads a batch to its longest text, and a file of many definitions made that
    hundreds of megabytes."""

    #: the package and table it was loaded from (``wordllama 0.4.0.post1 l2_supercat_256``)
    name: str
    #: a text's token ids
    encode: Callable[[str], Sequence[int]]
    #: a token id's vector (rows of float32)
    table: np.ndarray

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        import numpy as np

        out = np.zeros((len(texts), self.table.shape[1]))
        for i, text in enumerate(texts):
            ids = np.asarray(self.encode(text), dtype=np.int64)
            ids = ids[(ids >= 0) & (ids < self.table.shape[0])]
            if len(ids):
                v = self.table[ids].sum(axis=0, dtype=np.float64)
                if (n := float(np.linalg.norm(v))) > 0:
                    out[i] = v / n
        return out


@functools.cache
def load_embedder() -> Embedder:
    """The installed embedding, loaded once per process (the package itself is not imported:
    its table and tokenizer are files, read with its own dependencies)."""
    import numpy as np

    try:
        from safetensors import safe_open
        from tokenizers import Tokenizer
    except ImportError as exc:
        raise EmbeddingUnavailable(
            f"the embedding signal needs the 'embed' extra: {INSTALL_EMBED} ({exc})"
        ) from exc
    spec = importlib.util.find_spec(PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise EmbeddingUnavailable(
            f"the embedding signal needs the 'embed' extra: {INSTALL_EMBED} (no {PACKAGE})"
        )
    root = Path(next(iter(spec.submodule_search_locations)))
    weights = root.joinpath(*_WEIGHTS)
    vocab = next((root.joinpath(*t) for t in _TOKENIZERS if root.joinpath(*t).is_file()), None)
    if not weights.is_file() or vocab is None:
        raise EmbeddingUnavailable(
            f"the installed {PACKAGE} {importlib.metadata.version(PACKAGE)} does not ship "
            f"{'/'.join(_WEIGHTS)} and its tokenizer where repomapper reads them"
        )
    with safe_open(str(weights), framework="np") as f:
        table = np.ascontiguousarray(f.get_tensor(_TABLE_KEY), dtype=np.float32)
    tokenizer = Tokenizer.from_file(str(vocab))
    tokenizer.no_padding()
    tokenizer.no_truncation()

    def encode(text: str) -> list[int]:
        return list(tokenizer.encode(text, add_special_tokens=False).ids)

    name = f"{PACKAGE} {importlib.metadata.version(PACKAGE)} {weights.name.split('.')[0]}"
    log.debug("loaded the embedding %s", name)
    return Embedder(name, encode, table)


def header_text(path: str, definitions: Sequence[Tag], data: bytes | None) -> str:
    """What a file is embedded as: its path's words, then each definition's header (its
    signature, else its first source line), in line order."""
    lines = data.decode("utf-8", "replace").splitlines() if data is not None else []
    out = [path.replace("/", " ").replace("_", " ")]
    for tag in sorted(definitions, key=lambda t: (t.start_line, t.name))[:MAX_HEADERS]:
        if tag.signature:
            header = tag.signature
        elif 0 < tag.start_line <= len(lines):
            header = lines[tag.start_line - 1].strip()
        else:
            header = f"{tag.scope} {tag.name}".strip()
        out.append(header[:MAX_HEADER_CHARS])
    return "\n".join(out)


def embedding_feature(
    embedder: Embedder,
    task: str,
    candidates: Sequence[str],
    definitions: Mapping[str, Sequence[Tag]],
    read: Callable[[str], bytes | None] | None,
) -> dict[str, float]:
    """``candidates``' ``embed`` values for ``task``: cosine similarity above the candidates'
    median, normalized to the best (files at or below the median have none)."""
    import numpy as np

    if len(candidates) < 2:
        return {}
    texts = [
        header_text(p, definitions.get(p, ()), read(p) if read is not None else None)
        for p in candidates
    ]
    vectors = embedder.embed([task[:MAX_TASK_CHARS], *texts])
    sims = vectors[1:] @ vectors[0]
    floor, top = float(np.median(sims)), float(sims.max())
    if top <= floor:
        return {}
    return {
        p: round((float(s) - floor) / (top - floor), 6)
        for p, s in zip(candidates, sims, strict=True)
        if s > floor
    }
