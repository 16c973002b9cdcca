"""The runtime's event loop thread (`burnqed_pipeline.runtime.AsyncRuntime`) runs torch on one intra-op thread,
and leaves the caller's count as it was (`burnqed_core.torch_threads` says why)."""

from __future__ import annotations

import torch

from burnqed_core.torch_threads import intra_op_threads
from burnqed_pipeline.runtime import AsyncRuntime


def test_the_loop_thread_runs_torch_on_one_thread() -> None:
    async def count() -> int:
        return torch.get_num_threads()

    with intra_op_threads(2):
        rt = AsyncRuntime()
        try:
            assert rt.run(count()) == 1
            assert torch.get_num_threads() == 2
        finally:
            rt.close()
