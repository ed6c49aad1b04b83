"""The bound on a figure's pixels, checked from an image's header before its pixels are decoded:
by the fetch stage on every figure of a release (`benchmarks.release`), and again where a figure
is decoded to be sent shrunk (`llm.images`)."""

from __future__ import annotations

# A few hundred kB of PNG can claim 144 megapixels (a decompression bomb: 2 GB and 20 s to decode);
# a figure of an exam, a page scanned at 600 dpi included (35 megapixels), has fewer.
MAX_FIGURE_PIXELS = 50_000_000


def pixels_over_bound(image, bound: int = MAX_FIGURE_PIXELS) -> str:
    """What is wrong with an opened image (its header read, no pixel decoded) that has more than
    `bound` pixels in a frame, else nothing."""
    width, height = image.size
    if width * height <= bound:
        return ""
    return (
        f"is {width} x {height} pixels ({width * height / 1e6:.0f} megapixels), over the bound of "
        f"{bound / 1e6:.0f} megapixels: refused before it is decoded (a decompression bomb, or a scan "
        "to shrink before it is released)"
    )
