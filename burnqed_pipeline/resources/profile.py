"""The burnqed profile every stage reads (`ProfileResource`)."""


import dagster as dg
from pydantic import Field, PrivateAttr

from burnqed_core.config import Profile, load_profile


class ProfileResource(dg.ConfigurableResource):
    """The burnqed profile every stage reads: loaded once per resource instance (once per run), at the first
    `load`, which reads the files and the ``BURNQED_*`` environment; later calls return the same (frozen,
    shareable) `Profile`."""

    profile: str = Field("tiny", description="a profile name (configs/<name>.yaml) or a YAML file's path")
    work_dir: str | None = Field(None, description="overrides the profile's paths.work_dir (None: the profile's)")
    _loaded: Profile | None = PrivateAttr(default=None)

    def load(self) -> Profile:
        if self._loaded is None:
            overrides = {"paths.work_dir": self.work_dir} if self.work_dir else None
            self._loaded = load_profile(self.profile, overrides=overrides)
        return self._loaded
