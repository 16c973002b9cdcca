"""The run record saved beside every trained model: what produced it.

Config, data fingerprints (SHA-256 of the input files, or of the pairs when
they came as a list), seeds, prompt version, base model and library versions:
enough to tell whether two models were trained the same way (user asks:
"run manifest", reproducibility reports that could not be reproduced).
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import json
import os
import platform
import socket
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from burnqed_core.data.pairs.prompt import PROMPT_VERSION
from burnqed_core.record_io import atomic_write_text
from burnqed_core.records import TacticPair

RUN_FILE = "run.json"
LIBRARIES = ("torch", "transformers", "peft", "tokenizers", "bitsandbytes", "accelerate", "safetensors", "pyarrow")


def library_versions() -> dict[str, str]:
    out = {"python": platform.python_version()}
    for name in LIBRARIES:
        try:
            out[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            out[name] = "absent"
    return out


def fingerprint_pairs(pairs: Iterable[TacticPair]) -> str:
    """SHA-256 over the (theorem, state, tactic) of the pairs, in order."""
    h = hashlib.sha256()
    for p in pairs:
        h.update(json.dumps([p.theorem, p.state_before, p.tactic], ensure_ascii=False).encode())
        h.update(b"\n")
    return h.hexdigest()


class RunRecord(BaseModel):
    model_config = ConfigDict(extra="forbid")
    kind: str
    created: str = Field(default_factory=lambda: time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()))
    host: str = Field(default_factory=socket.gethostname)
    pid: int = Field(default_factory=os.getpid)
    iteration: int = 0
    base_model: str = ""
    warm_start_from: str | None = None
    config: dict[str, Any] = Field(default_factory=dict)
    data: dict[str, str] = Field(default_factory=dict, description="input name -> sha256 fingerprint")
    seeds: dict[str, int] = Field(default_factory=dict)
    prompt_version: str = PROMPT_VERSION
    libraries: dict[str, str] = Field(default_factory=library_versions)
    device: str = "cpu"

    def save(self, out_dir: str | Path) -> Path:
        return atomic_write_text(Path(out_dir) / RUN_FILE, self.model_dump_json(indent=2))
