"""Error types shared by every arsim_core module."""


class ArsimError(Exception):
    """Base class of every error arsim raises on purpose."""


class ConfigError(ArsimError):
    """A configuration file or value is missing or malformed.

    The message always names the file and the key path, so users can fix it without a traceback.
    """


class TrackError(ArsimError):
    """A track file cannot be loaded or describes an invalid track."""


class ProtocolError(ArsimError):
    """A peer sent a message that does not follow the bridge protocol."""


class BackendUnavailableError(ArsimError):
    """The render/physics backend did not answer in time or has gone away."""
