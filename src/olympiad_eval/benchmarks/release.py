"""Reading a benchmark's release: figures checked to be readable images, files the release names
kept inside it, and each record's fields checked by type. The benchmark modules read their
releases through these, so that bad input stops the fetch with file, record and field, instead
of being silently turned into text (`str(["a"])`) or iterated character by character (`list("v0")`)."""

from __future__ import annotations

import hashlib
import io
import logging
import math
from pathlib import Path

from PIL import Image, UnidentifiedImageError

from olympiad_eval.core.images import pixels_over_bound
from olympiad_eval.core.records import Figure, RecordError

MIME_BY_FORMAT = {"PNG": "image/png", "JPEG": "image/jpeg", "GIF": "image/gif", "WEBP": "image/webp"}
SUFFIX_BY_MIME = {"image/png": ".png", "image/jpeg": ".jpg", "image/gif": ".gif", "image/webp": ".webp"}

# Most endpoints refuse larger images; the figure is kept as released (models differ in what they
# take), and `max_image_bytes` in the model's config shrinks it when it is sent.
LARGE_FIGURE_BYTES = 20 * 1024 * 1024

# What Pillow raises on a file it cannot decode, a truncated one or a decompression bomb.
UNREADABLE_IMAGE = (UnidentifiedImageError, Image.DecompressionBombError, OSError, SyntaxError, ValueError)


class FigureStore:
    """Where a release's figures go as its benchmark reads them (`Benchmark.load`): each checked to
    be a readable image and written once, named by its content hash, into `folder` (the fetch
    stage's staging folder), its `Figure` pointing where that file will be once the stage's outputs
    are in place (`final`; by default `folder` itself). The stage owns the folder: a fetch that
    fails leaves nothing behind, and a figure embedded in a release (bytes, not a file) needs no
    temporary file of its benchmark's."""

    def __init__(self, folder: Path, final: Path | None = None):
        self.folder, self.final = Path(folder), Path(final if final is not None else folder)
        # each image's format by its bytes' SHA-256, once it has been decoded whole: a release names
        # one figure from many problems (HiPhO's parts of an exam), and it is decoded once
        self._formats: dict[str, str] = {}

    def file(
        self, path: Path, *, release_file: str | Path, record: str, field_name: str, name: str, role: str = ""
    ) -> Figure:
        """A figure the release holds as a file (`path`)."""
        if not path.is_file():
            raise RecordError(release_file, record, field_name, f"figure '{name}' not found at {path}")
        where = (release_file, record, field_name, name, role)
        return self._keep(path.read_bytes(), path.suffix.lower(), *where)

    def data(
        self, data: bytes, *, release_file: str | Path, record: str, field_name: str, name: str, role: str = ""
    ) -> Figure:
        """A figure the release embeds as bytes (a Parquet release's image structs)."""
        return self._keep(bytes(data), "", release_file, record, field_name, name, role)

    def _keep(
        self, data: bytes, suffix: str, release_file, record: str, field_name: str, name: str, role: str
    ) -> Figure:
        sha256 = hashlib.sha256(data).hexdigest()
        if sha256 not in self._formats:
            self._formats[sha256] = _image_format(data, release_file, record, field_name, name)
        image_format = self._formats[sha256]
        if len(data) > LARGE_FIGURE_BYTES:
            logging.getLogger(__name__).warning(
                "%s: record %s: figure '%s' is %.1f MB; most endpoints refuse images over %d MB: set "
                "max_image_bytes in the model's config to send it shrunk",
                release_file,
                record,
                name,
                len(data) / 2**20,
                LARGE_FIGURE_BYTES >> 20,
            )
        mime = MIME_BY_FORMAT.get(image_format, f"image/{(image_format or 'octet-stream').lower()}")
        stored = sha256 + SUFFIX_BY_MIME.get(mime, suffix or f".{image_format.lower()}")
        target = self.folder / stored
        if not target.exists():
            self.folder.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)
        return Figure(sha256=sha256, path=(self.final / stored).as_posix(), mime=mime, name=name, role=role)


def _image_format(data: bytes, release_file, record: str, field_name: str, name: str) -> str:
    """Pillow's name for the image's format, once every pixel decoded: a truncated file fails here,
    not at a model. An image of more than `core.images.MAX_FIGURE_PIXELS` is refused from its header, before
    its pixels are decoded."""
    try:
        with Image.open(io.BytesIO(data)) as image:
            image_format = image.format or ""
            too_large = pixels_over_bound(image)
            if too_large:
                raise RecordError(release_file, record, field_name, f"figure '{name}' {too_large}")
            image.load()
    except UNREADABLE_IMAGE as error:
        raise RecordError(
            release_file, record, field_name, f"figure '{name}' is not a readable image: {error}"
        ) from None
    return image_format


def release_path(name, *, root: Path, where: str | Path, record: str, field_name: str) -> Path:
    """A file the release names (`name`), relative to `root`; a name that leaves the release is refused.

    Checked on the name (absolute, or with `..`), then on the path resolved: a file or folder of the
    release that is a symbolic link to something outside it is refused too. A Hub snapshot's files
    are links into its blob store, beside the snapshot folder (`_inside`), and are fine."""
    if not isinstance(name, str) or not name.strip():
        raise RecordError(where, record, field_name, f"a file name must be a non-empty string, got {name!r:.80}")
    parts = Path(name).parts
    if Path(name).is_absolute() or ".." in parts:
        raise RecordError(
            where,
            record,
            field_name,
            f"'{name}' points outside the release ({root}): only relative paths inside it are read",
        )
    path = root / name
    resolved = path.resolve()
    if not any(resolved.is_relative_to(inside) for inside in _inside(Path(root))):
        raise RecordError(
            where,
            record,
            field_name,
            f"'{name}' is a link that leads outside the release ({root}), to {resolved}: only files inside it are read",
        )
    return path


def _inside(root: Path) -> list[Path]:
    """The folders a release's files may resolve into: the release's own, and where it is (in) a
    Hugging Face snapshot (`<repo>/snapshots/<commit>/...`), its repository's blob store
    (`<repo>/blobs`), which the snapshot's files link to."""
    folders = [root.resolve()]
    for folder in (root, *root.parents):
        if folder.parent.name == "snapshots" and (folder.parent.parent / "blobs").is_dir():
            folders.append((folder.parent.parent / "blobs").resolve())
            break
    return folders


def as_text(value, *, where: str | Path, record: str, field_name: str, required: bool = True) -> str:
    """A text field; numbers are accepted as their text (an answer `27`), lists and objects are not.
    A number that is none (NaN, which JSON writers and data frames put where a value is missing, or
    an infinity) is no text: missing where the field may be, refused where it must be set."""
    if isinstance(value, float) and not math.isfinite(value):
        if required:
            raise RecordError(
                where,
                record,
                field_name,
                f"{value!r} is not a value (a missing value written as a number?): it must be set",
            )
        return ""
    if value is None:
        if required:
            raise RecordError(where, record, field_name, "missing")
        return ""
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        raise RecordError(where, record, field_name, f"expected text, got {type(value).__name__} {value!r:.80}")
    return str(value)


def as_list(value, *, where: str | Path, record: str, field_name: str) -> list:
    """A list field; null is an empty list."""
    if value is None:
        return []
    if not isinstance(value, list):
        raise RecordError(where, record, field_name, f"expected a list, got {type(value).__name__} {value!r:.80}")
    return value


def as_points(value, *, where: str | Path, record: str, field_name: str) -> float:
    """Points: a finite number >= 0. Text ("2"), NaN, infinities and negatives are refused: they
    would otherwise turn into a score that is silently wrong, or fail deep in a later stage."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise RecordError(
            where, record, field_name, f"expected a number of points, got {type(value).__name__} {value!r:.80}"
        )
    if not math.isfinite(value) or value < 0:
        raise RecordError(where, record, field_name, f"points must be a finite number >= 0, got {value!r}")
    return float(value)


def as_level(value, *, where: str | Path, record: str, field_name: str) -> int | None:
    """An integer level or difficulty (`3` or `"3"`); null when the release gives none."""
    if value is None:
        return None
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().isdigit():
        return int(value)
    if isinstance(value, float) and value.is_integer():
        return int(value)
    raise RecordError(where, record, field_name, f"expected an integer, got {type(value).__name__} {value!r:.80}")


class Fields:
    """One record of a release, read field by field with the checks above. `columns` maps our
    field names to the release's own (PhysElite's are set in its config); errors name the latter."""

    def __init__(self, item: dict, where: str | Path, columns: dict | None = None):
        self.item, self.where, self.columns = item, where, columns or {}
        raw_id = self.raw("id")
        self.record = "?" if raw_id is None else str(raw_id)  # a null id as a missing one

    def column(self, name: str) -> str:
        return self.columns.get(name, name)

    def raw(self, name: str):
        return self.item.get(self.column(name))

    def require(self, *names: str) -> None:
        for name in names:
            if self.raw(name) is None:
                raise RecordError(self.where, self.record, self.column(name), "missing")
            if name == "id":
                self._check_id()

    def _check_id(self) -> None:
        """An id is text or an integer, and not blank: records, cache keys and tables are keyed by it."""
        raw = self.raw("id")
        if isinstance(raw, bool) or not isinstance(raw, (str, int)):
            raise RecordError(
                self.where,
                self.record,
                self.column("id"),
                f"expected text or an integer, got {type(raw).__name__} {raw!r:.80}",
            )
        if not str(raw).strip():
            raise RecordError(self.where, repr(raw), self.column("id"), "empty: every problem needs an id")

    def _read(self, read, name: str, **options):
        return read(self.raw(name), where=self.where, record=self.record, field_name=self.column(name), **options)

    def text(self, name: str, required: bool = True) -> str:
        return self._read(as_text, name, required=required)

    def list(self, name: str) -> list:
        return self._read(as_list, name)

    def level(self, name: str) -> int | None:
        return self._read(as_level, name)

    def gold(self, name: str) -> str:
        """A gold answer that must not be empty (the protocol compares with it)."""
        text = self.text(name)
        if not text.strip():
            raise RecordError(
                self.where, self.record, self.column(name), "empty: the protocol compares responses with it"
            )
        return text

    def path(self, name: str, root: Path, value=None) -> Path:
        """The release file the field names (or `value`, one entry of a list field)."""
        return release_path(
            self.raw(name) if value is None else value,
            root=root,
            where=self.where,
            record=self.record,
            field_name=self.column(name),
        )
