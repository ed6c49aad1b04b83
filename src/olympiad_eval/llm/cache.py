"""The request cache, and the reply record it keeps (`Reply`).

Every request is keyed by the hash of its full content (the provider's identity: endpoint, model
id; messages with image hashes, generation settings, sample index) and its reply is stored in a
cache outside the DVC outputs (a SQLite file, or a folder that machines can share) as soon as it
arrives. A killed run therefore resends only what had no reply yet.
Failed requests are never cached, so a rerun retries exactly those. The cache's door keeps only valid Unicode,
and a stored row that cannot be read back is asked again (see `RequestCache`). Each stored reply
keeps the UTC time it was received (`Reply.received`), a fact of the reply: a rerun over the cache
reads the same dates, so the usage files that show them keep their bytes, and the model the endpoint
says served it (`Reply.served_model`).

Every field of a reply passes the door cleaned (`sanitized`: a lone surrogate anywhere becomes
U+FFFD), and usage figures that are not token counts are kept out of its usage (`checked_usage`),
the problem kept in `Reply.usage_problem`: a reply that was paid for is kept whatever it says.

Processes that share one cache (clones, worktrees, sweeps' jobs, machines on one folder) send each
request once: the one that sends it holds a lease on its key, in the cache itself, while it waits for
the reply; the others wait for the reply to appear. A lease whose owner died (killed, or a machine
gone) is taken over (see `RequestCache.acquire`).
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import re
import secrets
import socket
import sqlite3
import tempfile
import threading
import time
from dataclasses import dataclass, field, fields, replace
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
    # The model the endpoint says made the reply (its completion's `model`); None: offline, or cached before it was.
    served_model: str | None = None
    # Why the reply's usage is unknown though it came with some (figures that are not token counts).
    usage_problem: str | None = None
    # How the reply's usage figures disagree with one another (reasoning tokens beyond the completion's,
    # a total that is not the sum of its parts): kept as given, and flagged in the usage files and tables.
    usage_mismatch: str | None = None
    # Seconds from the request going out to its reply, retries and their waits included (not the wait
    # for a free slot of the endpoint's concurrency); None: not sent, or cached before it was kept.
    latency: float | None = None


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


def _cleaned(value):
    """`value` with every text in it valid Unicode (dicts and lists walked, keys too)."""
    if isinstance(value, str):
        return valid_unicode(value)
    if isinstance(value, dict):
        return {_cleaned(key): _cleaned(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(_cleaned(item) for item in value)
    return value


def sanitized(reply: Reply) -> Reply:
    """`reply` with every field valid Unicode: any field of a reply is written somewhere (a
    generation, an error line, the cache), and one lone surrogate would stop each write of it. What
    the endpoint says beside the answer (`SHOWN`: the model that served it, why it stopped, an
    error's body) also reaches logs, error lines and tables: each is one printable line of at most
    its length there."""
    changed = {}
    for each in fields(reply):
        value = getattr(reply, each.name)
        cleaned = _cleaned(value)
        if each.name in SHOWN:
            cleaned = one_line(cleaned, SHOWN[each.name])
        if cleaned != value:
            changed[each.name] = cleaned
    return replace(reply, **changed) if changed else reply


# The most characters shown of each field of a reply that is no answer of the model's.
SHOWN = {"served_model": 200, "finish_reason": 64, "error": 1000, "usage_problem": 300, "usage_mismatch": 300}


def one_line(text: str | None, limit: int) -> str | None:
    """`text` as one line that prints as it reads: every character that is not printable (ESC and
    other control characters, CR and LF, bidirectional overrides, zero-width and other invisible
    characters) written as its escape (`\\x1b`), cut to `limit` characters with "..." after."""
    text = valid_unicode(text)
    if text is None or (text.isprintable() and len(text) <= limit):
        return text
    shown = "".join(
        char if char.isprintable() else char.encode("unicode_escape").decode("ascii") for char in text[:limit]
    )
    return shown if len(shown) <= limit and len(text) <= limit else shown[:limit] + "..."


# The most tokens one reply may count in any usage figure: above any context window there is. A
# figure above it (1e30), below zero, or not an integer is no token count.
MAX_TOKENS = 100_000_000
USAGE = ("prompt_tokens", "completion_tokens", "reasoning_tokens")


def token_count(value) -> int | None:
    """`value` as a token count (an integer from 0 to MAX_TOKENS; 12.0 is 12), or None."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    if isinstance(value, float) and not value.is_integer():
        return None
    return int(value) if 0 <= value <= MAX_TOKENS else None


def checked_usage(figures: dict) -> tuple[dict, str | None]:
    """The usage a reply's figures give (`USAGE`: prompt and completion tokens required, reasoning
    tokens where given), and None; or, where one is not a token count, no usage ({}: unknown) and
    what is wrong with it. Nothing given at all is unknown too, without a problem."""
    if not figures:
        return {}, None
    usage = {}
    for name in USAGE:
        value = figures.get(name)
        if value is None and name == "reasoning_tokens":
            usage[name] = 0
            continue
        count = token_count(value)
        if count is None:
            said = "missing" if value is None else f"{_shown(value)}, not a token count"
            return {}, f"usage {name} {said} (an integer from 0 to {MAX_TOKENS:.0e})"
        usage[name] = count
    return usage, None


def usage_mismatch(usage: dict, total_tokens=None) -> str | None:
    """How a reply's token counts (`checked_usage`'s) disagree with one another, or None: reasoning
    tokens are part of the completion's, and a total is the prompt's and the completion's together."""
    if not usage:
        return None
    if usage["reasoning_tokens"] > usage["completion_tokens"]:
        return (
            f"usage reasoning_tokens {usage['reasoning_tokens']} exceed completion_tokens {usage['completion_tokens']}"
        )
    total = token_count(total_tokens)
    if total is not None and total != usage["prompt_tokens"] + usage["completion_tokens"]:
        return (
            f"usage total_tokens {total} is not prompt_tokens {usage['prompt_tokens']} + completion_tokens "
            f"{usage['completion_tokens']}"
        )
    return None


def _shown(value) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:40] + "..."


def same_model(asked: str, served: str | None) -> bool:
    """Whether `served` (a completion's `model`) is the model `asked` for: the same id, or a dated or
    versioned snapshot of it (`gpt-4o` served as `gpt-4o-2024-08-06`), with or without an
    organisation's prefix (`openai/gpt-4o`). None (the endpoint does not say) is not another model."""
    if served is None or served == asked:
        return True
    for wanted, got in ((asked, served), (asked.rpartition("/")[2], served.rpartition("/")[2])):
        if got == wanted or (got.startswith(wanted) and _SNAPSHOT.fullmatch(got[len(wanted) :])):
            return True
    return False


_SNAPSHOT = re.compile(r"[-:@.]v?\d[\d.:-]*|:latest")  # what a dated or versioned snapshot adds to a model's id


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
    none), as a `received` field of its JSON, and so are its served model, usage problem and latency
    where it has them: the table keeps its two columns, so that a clone still on older code shares the same
    cache file (it reads past the fields, and what it stores lacks them). A SQLite file whose tables
    are not a request cache's (another program's file) is refused as it is opened, before any
    request is paid for.

    Leases (`acquire`, `release`): a process about to send a request holds its key's lease until the
    reply is stored; another process that wants the same reply waits for it instead of paying again.
    A lease names its owner (host, process, a token of the process) and is renewed every
    `RENEW_SECONDS` by a thread while held: a lease not renewed for `LEASE_SECONDS`, or whose owner
    is a process of this host that is gone, is dead and taken over.
    """

    FIELDS = ("text", "reasoning", "finish_reason", "usage", "attempts", "refusal")
    REQUIRED = FIELDS[:-1]  # `refusal` came later: older rows lack it
    # written where set; older rows and older code lack them
    OPTIONAL = ("served_model", "usage_problem", "usage_mismatch")

    def __init__(self, path: str | Path):
        self.path = path = Path(path)
        self._store = SQLiteStore(path) if path.suffix in (".sqlite", ".db") else FolderStore(path)
        self.unreadable: set[str] = set()  # keys whose stored reply could not be read back
        self._held: set[str] = set()  # keys whose lease this cache holds
        self._renewing: threading.Thread | None = None
        self._stop = threading.Event()

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
        stored = {name: getattr(reply, name) for name in (*self.FIELDS, "received")}
        stored.update({name: getattr(reply, name) for name in self.OPTIONAL if getattr(reply, name) is not None})
        if reply.latency is not None:
            stored["latency"] = reply.latency
        self._store.put(key, json.dumps(stored, sort_keys=True))
        return reply

    def acquire(self, key: str) -> bool:
        """Take the lease of `key` (True), unless a live owner holds it (False: its reply is on its
        way, or its request fails and the lease is let go)."""
        if not self._store.acquire(key, OWNER.name(), time.time() + LEASE_SECONDS, _dead):
            return False
        self._held.add(key)
        if self._renewing is None:
            self._renewing = threading.Thread(target=self._renew, name="request-cache-leases", daemon=True)
            self._renewing.start()
        return True

    def release(self, key: str) -> None:
        if key in self._held:
            self._held.discard(key)
            self._store.release(key, OWNER.name())

    def _renew(self) -> None:
        """Renew this process's leases until the cache closes (a thread, with a store of its own)."""
        store = self._store.another()
        try:
            while not self._stop.wait(RENEW_SECONDS):
                store.renew(list(self._held), OWNER.name(), time.time() + LEASE_SECONDS)
        except InputError:  # the cache went away under a running batch: its next write says so
            pass
        finally:
            store.close()

    def __len__(self) -> int:
        return len(self._store)

    def close(self) -> None:
        self._stop.set()
        if self._renewing is not None:
            self._renewing.join()
            self._renewing = None
        for key in list(self._held):  # a batch that ended early (an error, the breaker) lets its leases go
            self.release(key)
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
    received, latency = stored.get("received"), stored.get("latency")
    optional = {name: stored.get(name) for name in RequestCache.OPTIONAL}
    reply = Reply(
        **{name: stored[name] for name in RequestCache.FIELDS if name in stored},
        cached=True,
        received=received if isinstance(received, str) else None,
        latency=float(latency)
        if isinstance(latency, int | float) and not isinstance(latency, bool) and latency >= 0
        else None,
        **{name: value for name, value in optional.items() if isinstance(value, str)},
    )
    wrong = next((name for name, count in reply.usage.items() if token_count(count) is None), None)
    if wrong is not None:  # a row stored before usage was checked may hold negative or huge figures
        said = f"usage {wrong} {_shown(reply.usage[wrong])}, not a token count (an integer from 0 to {MAX_TOKENS:.0e})"
        reply = replace(reply, usage={}, usage_problem=reply.usage_problem or said)
    return sanitized(reply)


# ---------------------------------------------------------------- leases

LEASE_SECONDS = 60.0  # a lease not renewed for this long is dead (its owner stopped, on any machine)
RENEW_SECONDS = 10.0


class _Owner:
    """This process as a lease's owner: host, process id and a token drawn once per process (a
    process that reuses a dead one's id is not taken for it)."""

    def __init__(self):
        self._pid, self._name = None, ""

    def name(self) -> str:
        if self._pid != os.getpid():  # drawn again in a forked child
            self._pid = os.getpid()
            self._name = f"{socket.gethostname()}:{self._pid}:{secrets.token_hex(8)}"
        return self._name


OWNER = _Owner()


def _dead(owner: str, expires: float) -> bool:
    """Whether the lease of `owner` (renewed until `expires`) is dead: past its time, or held by a
    process of this host that is gone (a zombie too), or by an earlier process with this one's id."""
    if expires < time.time():
        return True
    host, _, rest = owner.partition(":")
    pid_text, _, token = rest.partition(":")
    if host != socket.gethostname() or not pid_text.isdigit():
        return False  # another machine's: its renewals tell
    pid = int(pid_text)
    if pid == os.getpid():
        return owner != OWNER.name()
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        return False  # another user's process, alive
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0]
    except (OSError, IndexError):
        return False
    return state in ("Z", "X")  # killed, not yet reaped


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


# The tables of a request cache, as `PRAGMA table_info` gives their columns: (name, type, not null, primary key).
TABLES = {
    "replies": (("key", "TEXT", 0, 1), ("reply", "TEXT", 1, 0)),
    "leases": (("key", "TEXT", 0, 1), ("owner", "TEXT", 1, 0), ("expires", "REAL", 1, 0)),
}


class SQLiteStore:
    def __init__(self, path: Path, any_thread: bool = False):
        """`any_thread`: the connection may be used from another thread than the one that opened it
        (its caller then uses it from one thread at a time)."""
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        with _sqlite_errors(path):
            self._db = sqlite3.connect(path, isolation_level=None, timeout=60, check_same_thread=not any_thread)
            self._db.execute("PRAGMA journal_mode=WAL")
            # Commits reach the OS at once, so a killed process loses none; only a power cut could lose
            # the last few (never corrupting the file). Syncing each to disk would stall every reply.
            self._db.execute("PRAGMA synchronous=NORMAL")
            self._db.execute("CREATE TABLE IF NOT EXISTS replies (key TEXT PRIMARY KEY, reply TEXT NOT NULL)")
            self._db.execute(
                "CREATE TABLE IF NOT EXISTS leases (key TEXT PRIMARY KEY, owner TEXT NOT NULL, expires REAL NOT NULL)"
            )
            for table, columns in TABLES.items():
                found = tuple(
                    (name, kind.upper(), notnull, primary)
                    for _, name, kind, notnull, _, primary in self._db.execute(f"PRAGMA table_info({table})")
                )
                if found != columns:
                    self._db.close()
                    raise InputError(
                        f"the request cache {path} holds a table `{table}` that is not a request cache's "
                        f"(columns: {_columns(found)}; a request cache's: {_columns(columns)}): it is another "
                        "program's file, so no reply is stored in it; set paths.request_cache (or "
                        "OLYMPIAD_EVAL_REQUEST_CACHE) to a file of its own, and rerun"
                    )

    def another(self) -> SQLiteStore:
        """A connection of its own to the same file (for another thread)."""
        return SQLiteStore(self.path)

    def acquire(self, key: str, owner: str, expires: float, dead) -> bool:
        with _sqlite_errors(self.path):
            self._db.execute("BEGIN IMMEDIATE")
            try:
                row = self._db.execute("SELECT owner, expires FROM leases WHERE key = ?", (key,)).fetchone()
                taken = row is None or row[0] == owner or dead(*row)
                if taken:
                    self._db.execute("INSERT OR REPLACE INTO leases VALUES (?, ?, ?)", (key, owner, expires))
            finally:
                self._db.execute("COMMIT")
        return taken

    def release(self, key: str, owner: str) -> None:
        with _sqlite_errors(self.path):
            self._db.execute("DELETE FROM leases WHERE key = ? AND owner = ?", (key, owner))

    def renew(self, keys: list[str], owner: str, expires: float) -> None:
        with _sqlite_errors(self.path):
            self._db.execute("UPDATE leases SET expires = ? WHERE owner = ?", (expires, owner))

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


def _columns(columns) -> str:
    return ", ".join(
        " ".join([name, kind] + ["NOT NULL"] * bool(notnull) + ["PRIMARY KEY"] * bool(primary))
        for name, kind, notnull, primary in columns
    )


class FolderStore:
    def __init__(self, root: Path):
        self.root = root
        if root.exists() and not root.is_dir():
            raise InputError(
                f"the request cache {root} is a file, not a folder (a path ending in .sqlite is a SQLite "
                "cache, any other a folder of replies): set paths.request_cache (or OLYMPIAD_EVAL_REQUEST_CACHE) "
                "to a path of its own, and rerun"
            )
        root.mkdir(parents=True, exist_ok=True)

    def _path(self, key: str, suffix: str = ".json") -> Path:
        return self.root / key[:2] / f"{key}{suffix}"  # 256 subfolders keep each listing short

    def another(self) -> FolderStore:
        return self

    def acquire(self, key: str, owner: str, expires: float, dead) -> bool:
        """A lease is a file beside the reply's (`<key>.lease`, holding its owner, renewed by its
        time of change): created only where none exists; a dead one is moved aside by one taker
        (a rename succeeds once), then created anew."""
        path = self._path(key, ".lease")
        path.parent.mkdir(exist_ok=True)
        for _ in range(2):
            try:
                handle = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
            except FileExistsError:
                try:
                    held_by = path.read_text(encoding="utf-8")
                    renewed = path.stat().st_mtime
                except (OSError, UnicodeDecodeError):
                    continue  # let go meanwhile (or being written): try again
                if held_by == owner:
                    return True
                if not dead(held_by, renewed + LEASE_SECONDS):
                    return False
                aside = path.with_name(f"{path.name}.{secrets.token_hex(4)}.dead")
                try:
                    os.rename(path, aside)
                    aside.unlink(missing_ok=True)
                except FileNotFoundError:
                    pass  # another taker moved it first
                continue
            with os.fdopen(handle, "w", encoding="utf-8") as file:
                file.write(owner)
            return True
        return False

    def release(self, key: str, owner: str) -> None:
        path = self._path(key, ".lease")
        with contextlib.suppress(OSError, UnicodeDecodeError):
            if path.read_text(encoding="utf-8") == owner:
                path.unlink()

    def renew(self, keys: list[str], owner: str, expires: float) -> None:
        for key in keys:
            with contextlib.suppress(OSError):
                os.utime(self._path(key, ".lease"))

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
