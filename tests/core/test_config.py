"""Profile loading: the bundled profiles, clear errors, environment overrides."""

from __future__ import annotations

from pathlib import Path

import pytest

from burnqed_core.config import REPO_CONFIGS, Profile, env_overrides, load_profile
from burnqed_core.errors import ProfileError


def write(tmp_path: Path, text: str, name: str = "p.yaml") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_tiny_and_prod_load() -> None:
    tiny = load_profile("tiny", environ={})
    assert isinstance(tiny, Profile) and tiny.name == "tiny"
    assert tiny.lean.backend == "embedded" and tiny.policy.backend == "local"
    assert tiny.data.corpus.startswith("bundled:")
    assert tiny.source == REPO_CONFIGS / "tiny.yaml"
    assert tiny.lean.embedded.install_dir == tiny.paths.home / "lean-wasm"  # derived default
    prod = load_profile("prod", environ={})
    assert prod.lean.backend == "pantograph" and prod.policy.backend == "sglang"
    assert prod.training.qlora and (prod.training.lora.r, prod.training.lora.alpha) == (16, 32)
    s = prod.search
    assert (s.max_nodes, s.max_depth, s.num_candidates, s.collect_candidates, s.eval_candidates) == (100, 50, 4, 8, 16)
    assert (s.timeout_s, s.temperature, s.noise_temperature) == (120, 0.8, 1.2)
    assert prod.policy.sglang.port == 30000


def test_default_profile_is_tiny() -> None:
    assert load_profile(environ={}).name == "tiny"


def test_unknown_key_names_key_and_file(tmp_path: Path) -> None:
    path = write(tmp_path, "search:\n  max_nodez: 10\n")
    with pytest.raises(ProfileError) as e:
        load_profile(path, environ={})
    assert "search.max_nodez" in str(e.value) and str(path) in str(e.value)
    assert "unknown key" in str(e.value)


def test_wrong_type_names_key_and_file(tmp_path: Path) -> None:
    path = write(tmp_path, "lean:\n  embedded:\n    request_timeout_s: soon\n")
    with pytest.raises(ProfileError) as e:
        load_profile(path, environ={})
    msg = str(e.value)
    assert "lean.embedded.request_timeout_s" in msg and str(path) in msg and "'soon'" in msg


def test_bad_files(tmp_path: Path) -> None:
    with pytest.raises(ProfileError, match="not valid YAML"):
        load_profile(write(tmp_path, "search: [1, 2\n"), environ={})
    with pytest.raises(ProfileError, match="must be a mapping"):
        load_profile(write(tmp_path, "- a\n- b\n", "list.yaml"), environ={})
    with pytest.raises(ProfileError, match="not found"):
        load_profile(tmp_path / "missing.yaml", environ={})
    with pytest.raises(ProfileError, match=r"no profile 'nope'.*tiny"):
        load_profile("nope", environ={})


def test_env_overrides(tmp_path: Path) -> None:
    env = {
        "BURNQED__SEARCH__MAX_NODES": "200",
        "BURNQED__DATA__VAL_FRACTION": "0.25",
        "BURNQED_WORK_DIR": str(tmp_path / "runs"),
        "BURNQED_SGLANG_URL": "http://gpu-box:30001",
        "BURNQED_HOME": str(tmp_path / "home"),
        "UNRELATED": "x",
    }
    p = load_profile("tiny", environ=env)
    assert p.search.max_nodes == 200 and isinstance(p.search.max_nodes, int)
    assert p.data.val_fraction == 0.25
    assert p.paths.work_dir == tmp_path / "runs"
    assert p.policy.sglang.url == "http://gpu-box:30001"
    assert p.lean.embedded.install_dir == tmp_path / "home" / "lean-wasm"
    # explicit overrides win over the environment
    p = load_profile("tiny", overrides={"search.max_nodes": 7}, environ=env)
    assert p.search.max_nodes == 7
    # an override of a wrong type is the same clear error
    with pytest.raises(ProfileError, match=r"search\.max_nodes"):
        load_profile("tiny", environ={"BURNQED__SEARCH__MAX_NODES": "lots"})
    with pytest.raises(ProfileError, match=r"search\.max_nodez"):
        load_profile("tiny", environ={"BURNQED__SEARCH__MAX_NODEZ": "3"})


def test_env_overrides_read_the_process_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BURNQED__SEARCH__MAX_NODES", "321")
    assert ("search", "max_nodes") in [k for k, _ in env_overrides()]
    assert load_profile("tiny").search.max_nodes == 321


def test_small_profile_is_tiny_scaled_up() -> None:
    """configs/small.yaml: the tiny profile's code and backends with a larger model and budgets."""
    from burnqed_core.training.tiny_model import check_tiny_config

    tiny, small = load_profile("tiny", environ={}), load_profile("small", environ={})
    assert small.name == "small" and small.source == REPO_CONFIGS / "small.yaml"
    assert (small.lean.backend, small.policy.backend, small.training.base_model) == ("embedded", "local", "tiny")
    assert (small.data.corpus, small.data.benchmark) == (tiny.data.corpus, tiny.data.benchmark)
    assert small.paths.work_dir != tiny.paths.work_dir  # the two runs never share outputs
    check_tiny_config(small.training.tiny_model)  # widths pack in 4-bit, heads divide

    def params(p: Profile) -> int:  # a Llama's weights: attention, MLP, norms, embeddings and head
        m = p.training.tiny_model
        kv = m.num_kv_heads * (m.hidden_size // m.num_heads)
        layer = 2 * m.hidden_size ** 2 + 2 * m.hidden_size * kv + 3 * m.hidden_size * m.intermediate_size
        return m.num_layers * (layer + 2 * m.hidden_size) + 2 * m.vocab_size * m.hidden_size + m.hidden_size

    assert 4_000_000 <= params(small) <= 8_000_000 and params(small) >= 4 * params(tiny)
    assert small.training.tiny_model.pretrain_steps > tiny.training.tiny_model.pretrain_steps
    assert small.data.search_theorems > tiny.data.search_theorems
    assert max(small.eval.budgets) > max(tiny.eval.budgets) and small.search.max_nodes > tiny.search.max_nodes
    assert small.ebm.hidden_dims[0] >= 2 * small.training.tiny_model.hidden_size


def test_training_mix_and_selection_settings() -> None:
    for name in ("tiny", "small", "prod"):
        p = load_profile(name, environ={})
        assert 0 < p.data.trajectory_max_share <= 0.4  # search steps never drown the base data
        assert p.training.min_lr_ratio > 0 and p.training.lr_schedule == "cosine"
        assert p.data.search_failed_family_boost > 0 and p.data.search_retry_failed
    with pytest.raises(ProfileError, match="trajectory_max_share"):
        load_profile("tiny", environ={}, overrides={"data.trajectory_max_share": 0})
    with pytest.raises(ProfileError, match="min_lr_ratio"):
        load_profile("tiny", environ={}, overrides={"training.min_lr_ratio": 1.5})
    with pytest.raises(ProfileError, match="lr_schedule"):
        load_profile("tiny", environ={}, overrides={"training.lr_schedule": "step"})
