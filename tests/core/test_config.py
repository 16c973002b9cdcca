"""Profile loading: the bundled profiles, clear errors, environment overrides."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from burnqed_core.config import REPO_CONFIGS, Profile, env_overrides, load_profile
from burnqed_core.errors import ProfileError


def write(tmp_path: Path, text: str, name: str = "p.yaml") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def error(*args: Any, **kwargs: Any) -> str:
    """The message of the `ProfileError` that ``load_profile(*args, **kwargs)`` raises."""
    with pytest.raises(ProfileError) as e:
        load_profile(*args, **kwargs)
    return str(e.value)


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
    assert (s.max_nodes, s.max_depth, s.num_candidates, s.collect_candidates) == (100, 50, 4, 8)
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
    assert p.paths.baselines_dir() == tmp_path / "home" / "baselines"  # the caches follow the home...
    fresh = load_profile("tiny", environ={**env, "BURNQED__PATHS__BASELINES": str(tmp_path / "fresh")})
    assert fresh.paths.baselines_dir() == tmp_path / "fresh"  # ...unless a measurement names a fresh one
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
    """configs/small.yaml: the tiny profile's code and backends with a larger model, search budget
    and three search seeds in the eval."""
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
    assert small.search.max_nodes > tiny.search.max_nodes  # the eval's budgets: those of tiny (baseline (c)'s cost)
    assert small.eval.budgets == tiny.eval.budgets and small.eval.pass_k >= 3 > tiny.eval.pass_k
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


# -- frozen settings ---------------------------------------------------------------------------------------


def test_settings_are_frozen_and_change_by_copy() -> None:
    from pydantic import ValidationError

    prof = load_profile("tiny", environ={})
    with pytest.raises(ValidationError, match="frozen"):
        prof.name = "other"
    with pytest.raises(ValidationError, match="frozen"):
        prof.search.max_nodes = 3
    with pytest.raises(ValidationError, match="frozen"):
        prof.lean.embedded.install_dir = Path("/elsewhere")
    with pytest.raises(ValidationError, match="frozen"):
        prof.search.automation.enabled = False
    search = prof.search.model_copy(update={"max_nodes": 3})
    changed = prof.model_copy(update={"search": search})
    assert (changed.search.max_nodes, prof.search.max_nodes) == (3, 24)
    assert changed.lean is prof.lean  # untouched sections are shared: safe, nothing can change them


def test_install_dir_default_is_derived_without_mutation(tmp_path: Path) -> None:
    from burnqed_core.config import LeanConfig, PathsConfig, default_home

    assert Profile().lean.embedded.install_dir == default_home() / "lean-wasm"
    built = Profile(paths=PathsConfig(home=tmp_path), lean=LeanConfig())
    assert built.lean.embedded.install_dir == tmp_path / "lean-wasm"
    raw = {"paths": {"home": str(tmp_path)}, "lean": {"embedded": {"install_dir": None}}}
    assert Profile.model_validate(raw).lean.embedded.install_dir == tmp_path / "lean-wasm"
    assert raw["lean"]["embedded"]["install_dir"] is None  # the input is not changed either
    kept = {"paths": {"home": str(tmp_path)}, "lean": {"embedded": {"install_dir": "/opt/lean"}}}
    assert Profile.model_validate(kept).lean.embedded.install_dir == Path("/opt/lean")
    with pytest.raises(ProfileError, match=r"paths\.home"):  # a bad home is the field's own error
        load_profile("tiny", environ={}, overrides={"paths.home": 3})


def test_lean_command_options_copy_the_profile(monkeypatch: pytest.MonkeyPatch) -> None:
    """`burnqed lean trace/baseline` switch elaboration to synchronous on a copy: the loaded profile (which
    the command may share) keeps its settings."""
    import burnqed_core.cli.lean as lean_cli

    prof = load_profile("prod", environ={})  # prod: elab_async on
    monkeypatch.setattr(lean_cli, "load", lambda profile, verbose: prof)
    new, cfg = lean_cli._lean_config("prod", False, "embedded", 2, elab_async=False)
    assert (cfg.backend, cfg.num_workers, cfg.embedded.elab_async) == ("embedded", 2, False)
    assert new.lean == cfg and new.search is prof.search
    assert (prof.lean.backend, prof.lean.num_workers, prof.lean.embedded.elab_async) == ("pantograph", 6, True)


# -- layered profiles (extends) --------------------------------------------------------------------------


def test_extends_child_wins_mappings_merge_lists_replace(tmp_path: Path) -> None:
    write(tmp_path, "search:\n  max_nodes: 10\n  max_depth: 5\n  automation: {enabled: true, tactics: [omega]}\n"
          "eval:\n  budgets: [1, 2, 3]\n", "parent.yaml")
    child = write(tmp_path, "extends: parent.yaml\nname: child\nsearch:\n  max_nodes: 20\n"
                  "  automation: {tactics: [simp, grind]}\neval:\n  budgets: [7]\n", "child.yaml")
    p = load_profile(child, environ={})
    assert (p.name, p.search.max_nodes, p.search.max_depth) == ("child", 20, 5)  # merged key by key
    assert p.search.automation.enabled and p.search.automation.tactics == ["simp", "grind"]  # list replaced
    assert p.eval.budgets == [7]
    assert p.source == child and "extends" not in Profile.model_fields


def test_extends_chain_and_bundled_names(tmp_path: Path) -> None:
    write(tmp_path, "search: {max_nodes: 1, max_depth: 1, timeout_s: 1}\n", "a.yaml")
    sub = tmp_path / "sub"
    sub.mkdir()
    write(sub, "extends: ../a.yaml\nsearch: {max_depth: 2, timeout_s: 2}\n", "b.yaml")
    c = write(tmp_path, "extends: sub/b.yaml\nsearch: {timeout_s: 3}\n", "c.yaml")  # relative to each file
    s = load_profile(c, environ={}).search
    assert (s.max_nodes, s.max_depth, s.timeout_s) == (1, 2, 3)
    # a name is a bundled profile, wherever the extending file is
    mine = load_profile(write(tmp_path, "extends: small\nsearch: {max_nodes: 5}\n", "mine.yaml"), environ={})
    small = load_profile("small", environ={})
    assert mine.search.max_nodes == 5 and mine.name == "small"
    assert mine.model_copy(update={"search": small.search, "source": small.source}) == small


def test_extends_cycle_is_an_error_naming_the_files(tmp_path: Path) -> None:
    a = write(tmp_path, "extends: b.yaml\n", "a.yaml")
    write(tmp_path, "extends: a.yaml\n", "b.yaml")
    with pytest.raises(ProfileError, match="cycle") as e:
        load_profile(a, environ={})
    assert f"{a} -> {tmp_path / 'b.yaml'} -> {a}" in str(e.value)
    me = write(tmp_path, "extends: me.yaml\n", "me.yaml")
    with pytest.raises(ProfileError, match="cycle"):
        load_profile(me, environ={})


def test_extends_missing_or_bad_parent(tmp_path: Path) -> None:
    child = write(tmp_path, "extends: gone.yaml\n", "child.yaml")
    with pytest.raises(ProfileError) as e:
        load_profile(child, environ={})
    assert "'gone.yaml'" in str(e.value) and str(tmp_path / "gone.yaml") in str(e.value) and str(child) in str(e.value)
    with pytest.raises(ProfileError, match=r"extends 'nonesuch'.*nonesuch\.yaml"):
        load_profile(write(tmp_path, "extends: nonesuch\n", "named.yaml"), environ={})
    with pytest.raises(ProfileError, match="'extends' must be a profile name or a path"):
        load_profile(write(tmp_path, "extends: [a, b]\n", "two.yaml"), environ={})
    broken = write(tmp_path, "search: [1, 2\n", "broken.yaml")
    on_broken = write(tmp_path, "extends: broken.yaml\n", "on_broken.yaml")
    assert f"profile {broken} is not valid YAML" in error(on_broken, environ={})  # the parent is named
    with pytest.raises(ProfileError, match=r"unknown key 'search\.extends'"):  # only at the top of a file
        load_profile(write(tmp_path, "search:\n  extends: tiny\n", "nested.yaml"), environ={})


def test_bad_key_names_the_file_it_was_written_in(tmp_path: Path) -> None:
    write(tmp_path, "search:\n  max_nodez: 10\n", "parent.yaml")
    child = write(tmp_path, "extends: parent.yaml\nsearch:\n  max_nodes: 10\n", "child.yaml")
    msg = error(child, environ={})
    assert "unknown key 'search.max_nodez'" in msg and str(child) in msg and str(tmp_path / "parent.yaml") in msg
    # in the child: the error names the child (the profile file), not the parent
    bad = write(tmp_path, "extends: tiny\nsearch:\n  max_depht: 3\n", "bad_child.yaml")
    msg = error(bad, environ={})
    assert "unknown key 'search.max_depht'" in msg and str(bad) in msg and "tiny.yaml" not in msg
    wrong = write(tmp_path, "extends: tiny\neval:\n  budgets: [8, many]\n", "wrong.yaml")
    msg = error(wrong, environ={})
    assert "'eval.budgets.1'" in msg and str(wrong) in msg
    # a bad value from the environment names the variable
    msg = error("small", environ={"BURNQED__EBM__STEPS": "lots"})
    assert "'ebm.steps'" in msg and "environment BURNQED__EBM__STEPS" in msg


def test_layers_are_not_profiles(tmp_path: Path) -> None:
    for layer in ("base", "cpu"):
        with pytest.raises(ProfileError, match=r"is a layer .*bundled: core, ebm, ebm_hindsight, ebm_wide, prod, "
                                               r"small, tiny, transfer, transfer_k3, transfer_model, "
                                               r"transfer_pretrain"):
            load_profile(layer, environ={})
    with pytest.raises(ProfileError) as e:
        load_profile("nope", environ={})
    # the layers are not offered
    assert ("['core', 'ebm', 'ebm_hindsight', 'ebm_wide', 'prod', 'small', 'tiny', 'transfer', 'transfer_k3', "
            "'transfer_model', 'transfer_pretrain']"
            in str(e.value))
    # a layer of one's own: extended, never loaded; `layer` is not inherited
    write(tmp_path, "layer: true\nsearch: {max_nodes: 9}\n", "mine.yaml")
    with pytest.raises(ProfileError, match="is a layer"):
        load_profile(tmp_path / "mine.yaml", environ={})
    assert load_profile(write(tmp_path, "extends: mine.yaml\n", "run.yaml"), environ={}).search.max_nodes == 9
    with pytest.raises(ProfileError, match="'layer' must be true or false"):
        load_profile(write(tmp_path, "layer: maybe\n", "odd.yaml"), environ={})


# -- the bundled profiles ----------------------------------------------------------------------------------


BUNDLED = {"tiny": ["base", "cpu", "tiny"], "small": ["base", "cpu", "small"], "prod": ["base", "prod"],
           "transfer": ["base", "cpu", "tiny", "transfer"], "ebm": ["base", "cpu", "tiny", "transfer", "ebm"],
           "ebm_hindsight": ["base", "cpu", "tiny", "transfer", "ebm", "ebm_hindsight"],
           "ebm_wide": ["base", "cpu", "tiny", "transfer", "ebm", "ebm_hindsight", "ebm_wide"]}


def test_bundled_profiles_load_through_their_layers() -> None:
    from burnqed_core.config import _profile_files

    for name, chain in BUNDLED.items():
        p = load_profile(name, environ={})
        assert p.name == name and p.source == REPO_CONFIGS / f"{name}.yaml"
        assert [f.stem for f, _, _ in _profile_files(REPO_CONFIGS / f"{name}.yaml")] == chain
    # what the layers share reaches every profile
    for name in BUNDLED:
        p = load_profile(name, environ={})
        assert p.search.automation.enabled == (not name.startswith("ebm"))  # the policy alone (its EBM ranks its steps)
        assert p.ebm.hindsight == (name in ("ebm_hindsight", "ebm_wide"))
        assert p.search.beta == 1.0 and p.ebm.temperature_init == 1.0
        assert p.nightly.cron == "0 3 * * *"


def test_bundled_profiles_state_only_what_they_change() -> None:
    """Each profile file holds its differences: no key repeats the value its layers already give, and the
    files are short (each restated ~110 keys before the layers: tiny.yaml had 120 lines, small 115, prod 105)."""
    import yaml

    from burnqed_core.config import Origin, _merge, _profile_files

    def leaves(tree: dict, prefix: tuple[str, ...] = ()) -> dict[tuple[str, ...], object]:
        out: dict[tuple[str, ...], object] = {}
        for k, v in tree.items():
            out.update(leaves(v, (*prefix, k)) if isinstance(v, dict) else {(*prefix, k): v})
        return out

    for name in BUNDLED:
        *parents, (_, own, _) = _profile_files(REPO_CONFIGS / f"{name}.yaml")
        inherited: dict = {}
        origin: Origin = {}
        for path, keys, _ in parents:
            _merge(inherited, keys, origin, str(path))
        before = leaves(inherited)
        repeated = [".".join(k) for k, v in leaves(own).items() if k in before and before[k] == v]
        assert not repeated, f"{name}.yaml repeats what its layers set: {repeated}"
    lines = {n: len((REPO_CONFIGS / f"{n}.yaml").read_text(encoding="utf-8").splitlines()) for n in BUNDLED}
    assert lines["tiny"] < 60 and lines["small"] < 60 and lines["prod"] < 80, lines
    assert yaml.safe_load((REPO_CONFIGS / "tiny.yaml").read_text(encoding="utf-8"))["extends"] == "cpu"


# -- the pipeline's profile resource -----------------------------------------------------------------------


def test_profile_resource_loads_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("dagster")
    from burnqed_pipeline.resources import ProfileResource

    path = write(tmp_path, "extends: tiny\nsearch: {max_nodes: 11}\n", "run.yaml")
    monkeypatch.setenv("BURNQED__SEARCH__MAX_DEPTH", "7")  # read at the first load
    res = ProfileResource(profile=str(path), work_dir=str(tmp_path / "work"))
    first = res.load()
    assert (first.search.max_nodes, first.search.max_depth) == (11, 7)
    assert first.paths.work_dir == tmp_path / "work"
    assert first == load_profile(path, overrides={"paths.work_dir": str(tmp_path / "work")})
    path.write_text("extends: tiny\nsearch: {max_nodes: 12}\n", encoding="utf-8")
    monkeypatch.setenv("BURNQED__SEARCH__MAX_DEPTH", "8")
    assert res.load() is first  # not read again
    fresh = ProfileResource(profile=str(path)).load()  # a new run: a new resource
    assert (fresh.search.max_nodes, fresh.search.max_depth) == (12, 8)
