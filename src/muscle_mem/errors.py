"""The base of the library's errors, so one ``except MuscleMemError`` catches any of them."""


class MuscleMemError(Exception):
    """An error raised by muscle-mem (a store, a codec, a record, a check)."""
