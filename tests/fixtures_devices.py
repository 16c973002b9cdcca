"""Devices to parametrise a test over: the same body runs on CPU everywhere and on CUDA where there is a GPU.

``@pytest.mark.parametrize("device", DEVICES)``: the ``cuda`` case is marked ``gpu`` (select it with
``pytest -m gpu``) and skipped without a CUDA device, so a CPU machine checks the test's logic on ``cpu`` and a
GPU machine runs the very same assertions on ``cuda``.
"""

from __future__ import annotations

import functools

import pytest
import torch

HAS_CUDA = torch.cuda.is_available()

CUDA = pytest.param("cuda", id="cuda",
                    marks=[pytest.mark.gpu, pytest.mark.skipif(not HAS_CUDA, reason="needs a CUDA GPU")])
DEVICES = [pytest.param("cpu", id="cpu"), CUDA]


@functools.cache
def bnb_4bit_unavailable(device: str) -> str | None:
    """None when bitsandbytes imports and runs a 4-bit (NF4) quantise/dequantise round trip on ``device``,
    else why not (one line, for `pytest.skip`)."""
    try:
        import bitsandbytes as bnb
        import bitsandbytes.functional as bnbf
    except Exception as e:  # ImportError, or a broken native library raising at import
        return f"bitsandbytes does not import: {type(e).__name__}: {e}"
    try:
        w = torch.randn(64, 64, device=device, dtype=torch.bfloat16)
        q, state = bnbf.quantize_4bit(w, quant_type="nf4")
        back = bnbf.dequantize_4bit(q, state)
        if back.shape != w.shape or not torch.isfinite(back).all():
            return f"bitsandbytes {bnb.__version__}: 4-bit round trip on {device} gave wrong values"
    except Exception as e:
        first_line = str(e).splitlines()[0] if str(e) else ""
        return f"bitsandbytes {bnb.__version__} has no 4-bit support on {device}: {type(e).__name__}: {first_line}"
    return None


def skip_without_bnb_4bit(device: str) -> None:
    why = bnb_4bit_unavailable(device)
    if why is not None:
        pytest.skip(why)
