"""Exception types shared across burnqed_core.

Every error a user can cause or fix (a bad profile, a corrupt file, a missing
install) is a `BurnqedError`: the command line prints its message as one line
and exits non-zero instead of showing a traceback.
"""


class BurnqedError(Exception):
    """An error with a message meant for the user."""

    exit_code = 1
    """The command line's exit status for it."""


class ProfileError(BurnqedError):
    """A profile file is missing, unreadable or invalid."""


class RecordFileError(BurnqedError):
    """A record file (Parquet/JSONL) is missing, corrupt or of the wrong kind."""


class DataError(BurnqedError):
    """Input data cannot be used (bad theorem file, empty split, ...)."""


class LeanSetupError(BurnqedError):
    """The Lean backend is not installed or cannot start."""


class TrainingError(BurnqedError):
    """Training cannot start or continue (incompatible checkpoint, unpackable 4-bit layer, no data)."""


class PolicyError(BurnqedError):
    """A policy backend cannot be loaded, reached or used (model dir, SGLang server)."""
