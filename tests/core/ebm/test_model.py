"""The energy head, InfoNCE training, metrics: shapes, spectral norms,
first-layer gain, temperature, separable toy set, exact resume, pinned temperature."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
import torch

from burnqed_core.ebm.data import build_data, sample_group, split_positives
from burnqed_core.ebm.embeddings import CacheMeta
from burnqed_core.ebm.model import EnergyHead, HeadConfig, info_nce
from burnqed_core.ebm.train import (
    CHECKPOINT_FILE,
    TemperaturePinnedError,
    has_ebm,
    load_head,
    read_report,
    train_ebm,
)
from tests.core.ebm_toy import separable_embeddings, toy_records
from tests.core.ebm_toy import toy_config as cfg

META = CacheMeta(fingerprint="test", pooling="last_l2")


def head(dim: int = 8, hidden: tuple[int, ...] = (32, 16), **kw: float) -> EnergyHead:
    torch.manual_seed(0)
    return EnergyHead(HeadConfig(dim=dim, hidden_dims=list(hidden), dropout=0.0, **kw))  # type: ignore[arg-type]


def test_head_shapes_and_goal_conditioning() -> None:
    h = head().eval()
    zs, zg = torch.randn(5, 8), torch.randn(8)
    assert h(zs, zg).shape == (5,)
    assert h(torch.randn(3, 4, 8), torch.randn(3, 1, 8)).shape == (3, 4)
    assert [lin.weight.shape for lin in h.linears] == [(32, 24), (16, 32), (1, 16)]
    feats = h.features(zs, zg)
    assert feats.shape == (5, 24)
    assert torch.allclose(feats[:, 16:], zs * zg)  # standardiser starts as identity
    # the goal matters: same state, other goal, other energy
    assert not torch.allclose(h(zs, zg), h(zs, torch.randn(8)))


def test_spectral_norms_are_one_and_first_layer_gain() -> None:
    h = head(dim=16, hidden=(64, 32))
    h.train()
    for _ in range(5):  # power iterations run in training forwards
        h(torch.randn(4, 16), torch.randn(16))
    norms = h.spectral_norms()
    assert len(norms) == 3 and all(abs(n - 1.0) < 0.05 for n in norms), norms
    assert float(h.first_gain.detach()) == pytest.approx(0.1)
    # the gain really scales the first layer's output
    h.eval()
    x = h.features(torch.randn(4, 16), torch.randn(16))
    out = h.linears[0](x)
    with torch.no_grad():
        h.first_gain.fill_(1.0)
    e1 = h.raw(torch.ones(2, 16), torch.ones(16))
    with torch.no_grad():
        h.first_gain.fill_(0.1)
    e01 = h.raw(torch.ones(2, 16), torch.ones(16))
    assert not torch.allclose(e1, e01)
    assert out.abs().max() <= x.norm(dim=-1).max() * 1.05  # unit spectral norm bounds the layer


def test_temperature_divides_the_energy() -> None:
    h = head().eval()
    zs, zg = torch.randn(6, 8), torch.randn(8)
    raw = h.raw(zs, zg)
    assert torch.allclose(h(zs, zg), raw / h.temperature)
    with torch.no_grad():
        h.log_temperature.fill_(float(np.log(2.0)))
    assert torch.allclose(h(zs, zg), raw / 2.0, atol=1e-6)
    assert h.temperature_pinned() is None
    with torch.no_grad():
        h.log_temperature.fill_(-50.0)
    assert float(h.temperature.detach()) == pytest.approx(0.05) and h.temperature_pinned() == "floor"
    # the loss has no temperature of its own: InfoNCE of energies = CE of -energies
    e = torch.tensor([[0.0, 1.0, 2.0]])
    assert float(info_nce(e)) == pytest.approx(float(np.log(1 + np.exp(-1) + np.exp(-2))), rel=1e-6)


def test_negative_tiers_siblings_first() -> None:
    data = build_data(toy_records(n_theorems=6, depth=3, siblings=2))
    p = data.positives[0]
    assert len(p.siblings) == 2 and all("bad" in data.texts[i] for i in p.siblings)
    rng = np.random.default_rng(0)
    pool = list(range(len(data.texts)))
    g = sample_group(data, p, 2, rng, pool)
    assert set(g) == set(p.siblings)
    assert len(p.off_path) == 4  # the other depths' failed states
    g = sample_group(data, p, 8, rng, pool)
    assert set(g[:2]) == set(p.siblings)
    assert set(g[2:6]) == set(p.off_path)  # then the other negatives of the theorem
    own = set(data.theorem_states[p.theorem])
    assert len(g) == 8 and not own & set(g[6:])  # then states of other theorems
    tr, va = split_positives(data, 0.5, 0)
    assert {data.positives[i].theorem for i in tr}.isdisjoint({data.positives[i].theorem for i in va})


def test_infonce_learns_a_separable_toy_set(tmp_path: Path) -> None:
    data = build_data(toy_records(n_theorems=40))
    z = separable_embeddings(data)
    rep = train_ebm(z, data, cfg(), tmp_path / "ebm", META)
    assert rep.val is not None and rep.val.groups > 0
    assert rep.val.rank1.rank1 is not None and rep.val.rank1.rank1 > 0.9, rep.val
    assert rep.val.rank1.chance == pytest.approx(0.2)
    assert rep.val.sibling_rank1.rank1 is not None and rep.val.sibling_rank1.rank1 > 0.9
    assert rep.val.energy_gap is not None and rep.val.energy_gap > 0
    assert set(rep.val.rank1_by_depth) == {"1", "2"}
    sep = rep.separation
    assert sep is not None and sep.linear_probe_acc is not None and sep.linear_probe_acc > 0.9
    assert sep.centroid_l2 is not None and sep.centroid_l2 > 0.5
    assert rep.loss_curve[-1].loss < rep.loss_curve[0].loss
    assert has_ebm(tmp_path / "ebm")
    _h, record = load_head(tmp_path / "ebm")
    assert record.pooling == "last_l2" and record.head.dim == 16
    assert read_report(tmp_path / "ebm").val is not None


def test_unseparable_embeddings_stay_near_chance(tmp_path: Path) -> None:
    """The metric can fail: random embeddings give no lift on held-out theorems."""
    data = build_data(toy_records(n_theorems=40))
    z = np.random.default_rng(1).normal(size=(len(data.texts), 16)).astype(np.float32)
    rep = train_ebm(z, data, cfg(steps=60), tmp_path / "ebm", META)
    assert rep.val is not None and rep.val.rank1.rank1 is not None and rep.val.rank1.rank1 < 0.6


def test_pinned_temperature_aborts(tmp_path: Path) -> None:
    data = build_data(toy_records(n_theorems=20))
    z = separable_embeddings(data)
    # bounds so narrow that the temperature hits one at once
    c = cfg(temperature_init=1.0, temperature_min=0.99, temperature_max=1.01, lr=0.05, steps=200,
            temperature_check_every=5, temperature_patience=2)
    with pytest.raises(TemperaturePinnedError, match="pinned"):
        train_ebm(z, data, c, tmp_path / "ebm", META)
    assert not has_ebm(tmp_path / "ebm")


TRAIN_SCRIPT = """
import sys, time
import numpy as np
from burnqed_core.ebm.data import build_data
from burnqed_core.ebm.embeddings import CacheMeta
from burnqed_core.ebm import train as T
from tests.core.ebm_toy import separable_embeddings, toy_config as cfg, toy_records
slow = sys.argv[2] == "slow"
if slow:  # slow every step down so that the parent can kill it mid-run
    real = T.info_nce
    def info_nce(e):
        time.sleep(0.05)
        return real(e)
    T.info_nce = info_nce
data = build_data(toy_records(n_theorems=30))
T.train_ebm(separable_embeddings(data), data, cfg(steps=120, save_every=20), sys.argv[1],
            CacheMeta(fingerprint="test", pooling="last_l2"))
"""


def run_train(out: Path, mode: str) -> subprocess.Popen[bytes]:
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[3]), "OMP_NUM_THREADS": "1"}
    return subprocess.Popen([sys.executable, "-c", TRAIN_SCRIPT, str(out), mode], env=env)


def test_training_resumes_exactly_after_sigkill(tmp_path: Path) -> None:
    ref = run_train(tmp_path / "ref", "fast")
    assert ref.wait(timeout=300) == 0
    killed = run_train(tmp_path / "killed", "slow")
    ckpt = tmp_path / "killed" / CHECKPOINT_FILE
    deadline = time.time() + 300
    while not ckpt.exists() and time.time() < deadline and killed.poll() is None:
        time.sleep(0.05)
    time.sleep(0.3)
    killed.send_signal(signal.SIGKILL)
    killed.wait(timeout=60)
    assert ckpt.exists() and not has_ebm(tmp_path / "killed")
    again = run_train(tmp_path / "killed", "fast")
    assert again.wait(timeout=300) == 0
    rep = read_report(tmp_path / "killed")
    assert 0 < rep.resumed_from_step < 120
    a, _ = load_head(tmp_path / "ref")
    b, _ = load_head(tmp_path / "killed")
    for (n, x), (_, y) in zip(a.state_dict().items(), b.state_dict().items(), strict=True):
        assert torch.equal(x, y), n
    assert [p.loss for p in rep.loss_curve] == [p.loss for p in read_report(tmp_path / "ref").loss_curve]


def test_separation_catches_a_collapse() -> None:
    from burnqed_core.ebm.metrics import separation_metrics, separation_warnings

    data = build_data(toy_records(n_theorems=30))
    healthy = separation_metrics(separable_embeddings(data), data)
    assert healthy.variance_ratio is not None and healthy.variance_ratio > 0.1 and not separation_warnings(healthy)
    z = np.tile(separable_embeddings(data)[:1], (len(data.texts), 1))  # every state embeds the same
    collapsed = separation_metrics(z + 1e-6 * np.random.default_rng(0).normal(size=z.shape), data)
    warnings = separation_warnings(collapsed)
    assert any("collapsed" in w for w in warnings) and any("linear probe" in w for w in warnings)
