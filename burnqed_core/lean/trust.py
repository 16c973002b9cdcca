"""Which preambles the checker trusts: those of the package's own bundled theorem sets, by content hash.

Every other preamble (a user's theorem file, a downloaded corpus, a generated variant) is a candidate like the
proof: the trusted checker replays each of its declarations that a judged theorem needs through the kernel,
and a preamble that makes a statement mean more than its text (a macro, a notation, an instance of a library
class for library types, `open ... renaming`, a name that shadows the library's, code it runs) is refused for
search, evaluation and tracing (`checker.check_proof`), where a trusted one is accepted as the package wrote it.

The hashes are of the exact preamble text. They come from the bundled sets' ``.jsonl`` files (read here, lazily,
as JSON) and from any bundled set the data layer loads (`register_bundled`, called by
`burnqed_core.data.theorems.load_theorems` for ``bundled:`` sets, e.g. the hand-written ``.lean`` files).
"""

from __future__ import annotations

import hashlib
import json
import logging
import threading
from collections.abc import Iterable
from pathlib import Path

log = logging.getLogger(__name__)

BUNDLED_DIR = Path(__file__).resolve().parents[1] / "data" / "sets"

_lock = threading.Lock()
_hashes: set[str] = set()
_read_files = False


def digest(preamble: str) -> str:
    return hashlib.sha256(preamble.encode("utf-8")).hexdigest()


def register_bundled(preambles: Iterable[str]) -> None:
    """Trust these preambles: they were read from the package's bundled sets."""
    new = {digest(p) for p in preambles if p.strip()}
    with _lock:
        _hashes.update(new)


def _read_bundled_files() -> None:
    global _read_files
    with _lock:
        if _read_files:
            return
        _read_files = True
    found: set[str] = set()
    for path in sorted(BUNDLED_DIR.glob("*.jsonl")):
        try:
            with path.open(encoding="utf-8") as f:
                for line in f:
                    if line.strip():
                        pre = json.loads(line).get("preamble", "")
                        if isinstance(pre, str) and pre.strip():
                            found.add(digest(pre))
        except (OSError, ValueError) as e:  # a broken bundled file trusts nothing of it
            log.warning("trust: cannot read %s: %s", path, e)
    with _lock:
        _hashes.update(found)


def is_trusted(preamble: str) -> bool:
    """Whether ``preamble`` is, to the byte, one of the package's bundled preambles (an empty one declares
    nothing and is trusted)."""
    if not preamble.strip():
        return True
    _read_bundled_files()
    with _lock:
        return digest(preamble) in _hashes
