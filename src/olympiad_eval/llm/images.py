"""Images in requests: figures inlined as data URLs, shrunk to an endpoint's size limit."""

from __future__ import annotations

import base64
import hashlib
import io
from pathlib import Path

from olympiad_eval.core.images import pixels_over_bound
from olympiad_eval.core.records import InputError


def inline_images(messages: list | tuple, max_image_bytes: int | None = None) -> list[dict]:
    """Replace our image references by base64 data URLs, checking each file's hash."""
    inlined = []
    for message in messages:
        content = message["content"]
        if isinstance(content, (list, tuple)):
            content = [_inline(part, max_image_bytes) for part in content]
        inlined.append({**message, "content": content})
    return inlined


def _inline(part: dict, max_image_bytes: int | None) -> dict:
    if part.get("type") != "image":
        return dict(part)
    data = Path(part["path"]).read_bytes()
    if hashlib.sha256(data).hexdigest() != part["sha256"]:
        raise InputError(
            f"figure {part['path']} changed since it was rendered (sha256 differs); rerun the render stage"
        )
    mime = part["mime"]
    if max_image_bytes and len(data) > max_image_bytes:
        data, mime = shrink_image(data, max_image_bytes, where=part["path"])
    encoded = base64.b64encode(data).decode("ascii")
    return {"type": "image_url", "image_url": {"url": f"data:{mime};base64,{encoded}"}}


def shrink_image(data: bytes, limit: int, where: str = "image") -> tuple[bytes, str]:
    """Re-encode (lossless PNG, then JPEG at falling quality), then downscale, until it fits.
    The same image and limit always give the same bytes."""
    from PIL import Image

    with Image.open(io.BytesIO(data)) as original:
        too_large = pixels_over_bound(original)  # fetch refused it, unless it was fetched before the bound
        if too_large:
            raise InputError(f"{where}: {too_large}; fetch the benchmark again")
        image = original.convert("RGBA" if original.mode in ("RGBA", "LA", "P") else "RGB")
    while min(image.size) >= 16:
        for encoded, mime in _encodings(image):
            if len(encoded) <= limit:
                return encoded, mime
        image = image.resize((max(1, image.width * 3 // 4), max(1, image.height * 3 // 4)), Image.Resampling.LANCZOS)
    raise InputError(f"{where}: cannot shrink the image under max_image_bytes={limit}")


def _encodings(image):
    buffer = io.BytesIO()
    image.save(buffer, format="PNG", optimize=True)
    yield buffer.getvalue(), "image/png"
    flat = image.convert("RGB") if image.mode != "RGB" else image
    for quality in (90, 75, 60):
        buffer = io.BytesIO()
        flat.save(buffer, format="JPEG", quality=quality, optimize=True)
        yield buffer.getvalue(), "image/jpeg"
