"""Safe, versioned serialization of tool arguments, outputs, results and Check snapshots.

Format (codec version 1). :func:`encode` turns a value into JSON-compatible data:

* ``None``, ``bool``, ``str``, finite ``float``, ``int`` within ±2**53 and lists encode as
  themselves; a dict whose keys are all ``str`` (and none is the tag key ``"$t"``) encodes as a
  JSON object of encoded values.
* Everything else is a tagged object ``{"$t": tag, "v": payload, ...}``: ``int`` (hex),
  ``float`` (``nan``/``inf``/``-inf``), ``tuple``, ``dict`` (a list of ``[key, value]`` pairs;
  used for non-str keys and to escape a user key ``"$t"``), ``set``, ``frozenset``, ``bytes``,
  ``bytearray`` (base64), ``datetime``, ``date``, ``time`` (ISO 8601), ``timedelta``,
  ``decimal``, ``uuid``, ``path``, ``ndarray`` and ``npscalar`` (numpy dtype descr, shape,
  base64 data), and the classes ``dataclass``, ``pydantic``, ``enum`` and ``namedtuple``,
  which also carry ``"type": "module:qualname"``.
* A :class:`Captured` Check snapshot (an object the codec has no form for, such as a tensor or an
  image) is ``{"$t": "captured", "v": <its stored form>}``, or, with no stored form, a reference to
  the object kept in this process (``"local"``): a store that writes records elsewhere refuses
  that (:func:`portable`).

Sets and pair-form dicts are sorted by the canonical JSON of their encoded elements, so equal
values encode identically whatever their order; :func:`dumps` writes that canonical JSON with
sorted keys under a ``{"$codec": VERSION}`` header and :func:`fingerprint` hashes the body. Changing
how a type encodes changes fingerprints and needs a new ``VERSION``.

Decoding is inert: it imports nothing, evaluates nothing and runs no code of the application's
classes (no ``__init__``, ``__post_init__``, validator, ``model_post_init``, ``__hash__`` or
``__eq__``). A class is rebuilt only if this process has encoded one of its instances or the
application allowed it (:func:`allow`, ``Engine(types=...)``), and then without running its code:
a dataclass by ``object.__new__`` and its fields, a pydantic model as ``model_construct`` would
without the post-init, an enum by looking its value up, a named tuple by ``tuple.__new__``; a field
whose value is not of its declared type, or a dict key or set item of a class that hashes with its
own code, keeps the value an :class:`Opaque`, as does any other class. A concrete path of another
system (a Windows worker's ``WindowsPath``) decodes as its pure path. The work is bounded:
:data:`MAX_DEPTH` levels, :data:`MAX_ITEMS` per container, and no more than :data:`MAX_SAME_HASH`
keys of one dict (items of one set) with the same hash. Aware datetimes come back with a
fixed-offset ``timezone`` (equal instants, not necessarily the same ``tzinfo`` object). No pickle,
no eval, ever.
"""

from __future__ import annotations

import json
from typing import Any

from muscle_mem.model._class_rebuild import allow
from muscle_mem.model._codec_format import (
    MAX_DEPTH,
    MAX_ITEMS,
    MAX_SAME_HASH,
    TAG,
    VERSION,
    Captured,
    CodecError,
    Secret,
    canon,
    canonical,
)
from muscle_mem.model._decoding import decode, holds_opaque
from muscle_mem.model._encoding import (
    Opaque,
    digest,
    encode,
    fingerprint,
    hash_text,
    portable,
    scalar_text,
)

__all__ = [
    "MAX_DEPTH",
    "MAX_ITEMS",
    "MAX_SAME_HASH",
    "TAG",
    "VERSION",
    "Captured",
    "CodecError",
    "Opaque",
    "Secret",
    "allow",
    "canonical",
    "decode",
    "digest",
    "dumps",
    "encode",
    "fingerprint",
    "hash_text",
    "holds_opaque",
    "loads",
    "portable",
    "scalar_text",
]


def dumps(value: Any) -> str:
    """Compact canonical JSON of ``value`` under a codec version header."""
    return canon({"$codec": VERSION, "v": encode(value)})


def loads(text: str | bytes) -> Any:
    """The value written by :func:`dumps`; refuses documents from a newer or unknown codec."""
    try:
        doc = json.loads(text)
    except ValueError as exc:
        raise CodecError(f"not a codec document: invalid JSON ({exc})") from None
    version = doc.get("$codec") if type(doc) is dict else None
    if type(version) is not int or "v" not in doc:
        raise CodecError("not a codec document: missing the '$codec' version header")
    if version != VERSION:
        newer = " is newer than this muscle-mem supports; upgrade muscle-mem" if version > VERSION else ""
        raise CodecError(f"codec version {version}{newer} (supported: {VERSION})")
    return decode(doc["v"])
