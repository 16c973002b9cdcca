"""Which preambles the checker trusts: those of the package's own bundled theorem sets, by content hash.

Every other preamble (a user's theorem file, a downloaded corpus, a generated variant) is a candidate like the
proof: the trusted checker replays each of its declarations that a judged theorem needs through the kernel,
and a preamble that makes a statement mean more than its text (a macro, a notation, an instance of a library
class for library types, `open ... renaming`, a name that shadows the library's or looks like one, code it runs)
is refused for search, evaluation and tracing (`checker.check_proof`), where a trusted one is accepted as the
package wrote it.

The hashes are of the exact preamble text, computed from the package's files alone, whatever the process
loaded before: the preambles of every bundled ``.jsonl`` set (read here as JSON), and the digests in
`PREAMBLES_FILE` of the preambles the file parser cuts from the bundled ``.lean`` sets (this layer does not
parse Lean files: `burnqed_core.data.theorems.load.bundled_lean_preamble_digests` computes them, and a test keeps the
file equal to what it computes). Nothing adds to the set while a process runs.
"""

from __future__ import annotations

import hashlib
import json
import logging
from functools import cache
from pathlib import Path

log = logging.getLogger(__name__)

BUNDLED_DIR = Path(__file__).resolve().parents[1] / "data" / "sets"
PREAMBLES_FILE = BUNDLED_DIR / "lean-preambles.json"


def digest(preamble: str) -> str:
    return hashlib.sha256(preamble.encode("utf-8")).hexdigest()


def _jsonl_preambles(path: Path) -> set[str]:
    found: set[str] = set()
    try:
        with path.open(encoding="utf-8") as f:
            for line in f:
                if line.strip():
                    pre = json.loads(line).get("preamble", "")
                    if isinstance(pre, str) and pre.strip():
                        found.add(digest(pre))
    except (OSError, ValueError) as e:  # a broken bundled file trusts nothing of it
        log.warning("trust: cannot read %s: %s", path, e)
    return found


@cache
def trusted_digests() -> frozenset[str]:
    """The digests of the package's bundled preambles (computed once: the package's files do not change)."""
    found: set[str] = set()
    for path in sorted(BUNDLED_DIR.rglob("*.jsonl")):
        found |= _jsonl_preambles(path)
    try:
        found |= set(json.loads(PREAMBLES_FILE.read_text(encoding="utf-8")))
    except (OSError, ValueError) as e:
        log.warning("trust: cannot read %s: %s", PREAMBLES_FILE, e)
    return frozenset(found)


def is_trusted(preamble: str) -> bool:
    """Whether ``preamble`` is, to the byte, one of the package's bundled preambles (an empty one declares
    nothing and is trusted)."""
    return not preamble.strip() or digest(preamble) in trusted_digests()
