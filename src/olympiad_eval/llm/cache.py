"""The request cache, and the reply record it keeps (`Reply`).

Every request is keyed by the hash of its full content (the provider's identity: endpoint, model
id; messages with image hashes, generation settings, sample index) and its reply is stored in a
cache outside the DVC outputs (a SQLite file, or a folder that machines can share) as soon as it
arrives. A killed run therefore resends only what had no reply yet.
Failed requests are never cached, so a rerun retries exactly those. The cache's door keeps only valid Unicode,
and a stored row that cannot be read back is asked again (see `RequestCache`). Each stored reply
keeps the UTC time it was received (`Reply.received`), a fact of the reply: a rerun over the cache
reads the same dates, so the usage files that show them keep their bytes.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import sqlite3
import tempfile
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path

from olympiad_eval.core.records import WRITE_ERRORS, InputError, content_hash, without_paths

log = logging.getLogger("olympiad_eval")


@dataclass(frozen=True)
class Reply:
    """What a request got: an answer (`text`), a refusal (`refusal`: the model's refusal message, or
    "content filter"), or a failure (`error`, never cached). Texts hold valid Unicode only."""

    text: str | None = None
    reasoning: str | None = None
    finish_reason: str | None = None
    error: str | None = None
    usage: dict = field(default_factory=dict)  # prompt_tokens, completion_tokens, reasoning_tokens
    attempts: int = 1  # HTTP attempts it took, retries included
    cached: bool = False
    refusal: str | None = None
    received: str | None = None  # when it arrived, UTC ISO 8601 to the second; None: not sent, or cached before dates


CONTENT_FILTER = "content filter"  # the refusal of a reply that the endpoint's filter stopped


def utc_now() -> str:
    """The time now as a reply's `received` date: UTC, ISO 8601, to the second."""
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def valid_unicode(text: str | None) -> str | None:
    """`text` with each lone surrogate (legal in JSON as "\\ud800", but not encodable as UTF-8)
    replaced by U+FFFD; a high and low surrogate that make a pair become the character they encode."""
    if text is None or text.isascii():
        return text
    try:
        text.encode("utf-8")  # the test that is fast (a regex over the text takes 20 times as long)
        return text
    except UnicodeEncodeError:
        return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")


def sanitized(reply: Reply) -> Reply:
    texts = {name: getattr(reply, name) for name in ("text", "reasoning", "refusal")}
    cleaned = {name: valid_unicode(text) for name, text in texts.items()}
    return reply if cleaned == texts else replace(reply, **cleaned)


def request_key(endpoint: dict, messages: list | tuple, settings: dict, sample: int) -> str:
    """The hash of everything that determines a reply. Images enter by their content hash."""
    return content_hash(
        {"endpoint": endpoint, "messages": without_paths(messages), "settings": settings, "sample": sample}
    )


class RequestCache:
    """Replies by request hash, each stored the moment it arrives so that a kill loses none.

    A path ending in `.sqlite` is one SQLite file: fast, and safe for many processes of one machine.
    Any other path is a folder with one small file per reply, each written whole by an atomic
    rename: many machines can share it on a network filesystem, where SQLite's locking is not safe.

    What goes in is valid Unicode (a lone surrogate would make every later write of the reply fail).
    A stored reply that cannot be read back (not JSON, a field missing or of the wrong type: a row
    cut short or edited by hand) is a miss: it is requested again and overwritten, and `close` says
    how many there were, once. A cache that is not a database, or a disk too full to store a
    reply, stops the stage with an `InputError` naming the cache.

    Each reply is stored with the date it was received (`Reply.received`; stamped now where it has
    none), as a `received` field of its JSON: the table keeps its two columns, so that a clone still
    on older code shares the same cache file (it reads past the field, and what it stores is undated).
    """

    FIELDS = ("text", "reasoning", "finish_reason", "usage", "attempts", "refusal")
    REQUIRED = FIELDS[:-1]  # `refusal` came later: older rows lack it

    def __init__(self, path: str | Path):
        self.path = path = Path(path)
        self._store = _SQLiteStore(path) if path.suffix in (".sqlite", ".db") else _FolderStore(path)
        self.unreadable: set[str] = set()  # keys whose stored reply could not be read back

    def get(self, key: str) -> Reply | None:
        text = self._store.get(key)
        if text is None:
            return None
        reply = _stored_reply(text)
        if reply is None:
            self.unreadable.add(key)
        return reply

    def put(self, key: str, reply: Reply) -> Reply:
        """Store `reply`; returns it as stored (with its date)."""
        reply = sanitized(reply if reply.received else replace(reply, received=utc_now()))
        self._store.put(
            key, json.dumps({name: getattr(reply, name) for name in (*self.FIELDS, "received")}, sort_keys=True)
        )
        return reply

    def __len__(self) -> int:
        return len(self._store)

    def close(self) -> None:
        self._store.close()
        if self.unreadable:
            log.warning(
                "request cache %s: %d stored replies could not be read (corrupt or cut short); they were "
                "treated as not cached and requested again (each reply that came overwrote its row)",
                self.path,
                len(self.unreadable),
            )
            self.unreadable = set()


def _stored_reply(text: str) -> Reply | None:
    """The reply a cache row holds (with its date, where it has one), or None where it is not one
    that this code could have stored. A date that is not text is no date: the reply stands."""
    try:
        stored = json.loads(text)
    except (json.JSONDecodeError, RecursionError):
        return None
    if not isinstance(stored, dict) or not all(name in stored for name in RequestCache.REQUIRED):
        return None
    texts = [stored.get(name) for name in ("text", "reasoning", "finish_reason", "refusal")]
    usage, attempts = stored["usage"], stored["attempts"]
    well_typed = (
        all(value is None or isinstance(value, str) for value in texts)
        and isinstance(usage, dict)
        and all(isinstance(count, int) for count in usage.values())
        and isinstance(attempts, int)
        and not isinstance(attempts, bool)
    )
    if not well_typed or (stored["text"] is None and stored.get("refusal") is None):  # neither answer nor refusal
        return None
    received = stored.get("received")
    return sanitized(
        Reply(
            **{name: stored[name] for name in RequestCache.FIELDS if name in stored},
            cached=True,
            received=received if isinstance(received, str) else None,
        )
    )


def _no_room(reason: str) -> InputError:
    return InputError(
        f"{reason}: free space there, or set paths.request_cache to a disk with room (the replies "
        "stored so far are kept), and rerun"
    )


@contextlib.contextmanager
def _sqlite_errors(path: Path):
    """SQLite's errors as one line naming the cache and what to do."""
    try:
        yield
    except sqlite3.DatabaseError as error:
        code = getattr(error, "sqlite_errorcode", 0) & 0xFF  # the primary code: SQLITE_IOERR_WRITE is an IOERR
        if code == sqlite3.SQLITE_FULL:
            raise _no_room(f"no room to store a reply in the request cache {path} ({error})") from None
        if code == sqlite3.SQLITE_IOERR:  # how SQLite reports a write the OS refused, for want of room among others
            raise _no_room(f"cannot write the request cache {path} ({error}: a full or failing disk?)") from None
        if code in (sqlite3.SQLITE_NOTADB, sqlite3.SQLITE_CORRUPT):
            raise InputError(
                f"the request cache {path} is not a readable SQLite database ({error}): move it "
                "aside or delete it, and rerun (replies it held are requested again)"
            ) from None
        raise InputError(f"the request cache {path}: {error}") from None


class _SQLiteStore:
    def __init__(self, path: Path):
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        with _sqlite_errors(path):
            self._db = sqlite3.connect(path, isolation_level=None, timeout=60)
            self._db.execute("PRAGMA journal_mode=WAL")
            # Commits reach the OS at once, so a killed process loses none; only a power cut could lose
            # the last few (never corrupting the file). Syncing each to disk would stall every reply.
            self._db.execute("PRAGMA synchronous=NORMAL")
            self._db.execute("CREATE TABLE IF NOT EXISTS replies (key TEXT PRIMARY KEY, reply TEXT NOT NULL)")

    def get(self, key: str) -> str | None:
        with _sqlite_errors(self.path):
            row = self._db.execute("SELECT reply FROM replies WHERE key = ?", (key,)).fetchone()
        return None if row is None else row[0] if isinstance(row[0], str) else ""  # a blob is no reply

    def put(self, key: str, text: str) -> None:
        with _sqlite_errors(self.path):
            self._db.execute("INSERT OR REPLACE INTO replies VALUES (?, ?)", (key, text))

    def __len__(self) -> int:
        with _sqlite_errors(self.path):
            return self._db.execute("SELECT COUNT(*) FROM replies").fetchone()[0]

    def close(self) -> None:
        self._db.close()


class _FolderStore:
    def __init__(self, root: Path):
        self.root = root
        root.mkdir(parents=True, exist_ok=True)

    def _path(self, key: str) -> Path:
        return self.root / key[:2] / f"{key}.json"  # 256 subfolders keep each listing short

    def get(self, key: str) -> str | None:
        try:
            return self._path(key).read_text(encoding="utf-8")
        except FileNotFoundError:
            return None
        except UnicodeDecodeError:
            return ""  # not text: no reply, requested again

    def put(self, key: str, text: str) -> None:
        path = self._path(key)
        handle = None
        try:
            path.parent.mkdir(exist_ok=True)
            # a temporary name of its own: two machines storing the same reply never clash
            with tempfile.NamedTemporaryFile(
                "w", dir=path.parent, prefix=f".{key}.", suffix=".tmp", encoding="utf-8", delete=False
            ) as handle:
                handle.write(text)
            os.replace(handle.name, path)
        except OSError as error:
            if handle is not None:
                Path(handle.name).unlink(missing_ok=True)
            if error.errno in WRITE_ERRORS:
                raise _no_room(
                    f"no room to store a reply in the request cache {self.root} ({error.strerror or error})"
                ) from None
            raise

    def __len__(self) -> int:
        return sum(1 for _ in self.root.glob("??/*.json"))

    def close(self) -> None:
        pass
