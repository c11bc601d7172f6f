"""Fixtures of the external-search backend tests: Google's stand-in on a small catalog."""

from __future__ import annotations

import importlib.util
import io
from collections.abc import Iterator

import pytest
from tests.conftest import require

HAS_GOOGLE = importlib.util.find_spec("google.cloud.retail_v2") is not None

CATALOG = [
    {
        "id": "p1",
        "title": "Nike Air running shoe",
        "brand": "Nike",
        "category": "Footwear > Shoes",
        "color": "Red",
        "price": 49.0,
        "material": "mesh",
    },
    {
        "id": "p2",
        "title": "Adidas running shoe",
        "brand": "Adidas",
        "category": "Footwear > Shoes",
        "color": "Blue",
        "price": 60.0,
        "material": "mesh",
    },
    {
        "id": "p3",
        "title": "Nike cap",
        "brand": "Nike",
        "category": "Accessories",
        "color": "Red",
        "price": 10.0,
        "material": "cotton",
    },
    {
        "id": "p4",
        "title": "Nike running shorts",
        "brand": "Nike",
        "category": "Apparel",
        "color": "Black",
        "price": 25.0,
        "material": "polyester",
    },
    {
        "id": "p5",
        "title": 'Puma "Speed" running shoe',
        "brand": "Puma",
        "category": "Footwear > Shoes",
        "color": "White",
        "price": 89.5,
        "material": "mesh",
    },
    {
        "id": "p6",
        "title": "Adidas running socks",
        "brand": "Adidas",
        "category": "Apparel",
        "color": "White",
        "price": 7.99,
        "material": "cotton",
    },
]
"""Aisle catalog rows; the stand-in holds the same products as Retail Product JSON."""

COLOURS = {
    "p1": (220, 20, 20),
    "p2": (20, 40, 220),
    "p3": (200, 30, 40),
    "p4": (10, 10, 10),
    "p5": (245, 245, 245),
    "p6": (235, 235, 240),
}


def png(rgb: tuple[int, int, int], *, stripe: bool = False) -> bytes:
    """A 32x32 PNG of one colour (a dark stripe across when ``stripe``)."""
    from PIL import Image, ImageDraw

    img = Image.new("RGB", (32, 32), rgb)
    if stripe:
        ImageDraw.Draw(img).rectangle((0, 12, 31, 19), fill=(0, 0, 0))
    out = io.BytesIO()
    img.save(out, format="PNG")
    return out.getvalue()


@pytest.fixture
def standin() -> Iterator[object]:
    """Google Retail + Vision stand-in on 127.0.0.1 holding :data:`CATALOG` (fails in CI without the
    ``google`` extra)."""
    require(HAS_GOOGLE, "google-cloud-retail is not installed (pip install '.[google]')")
    from tests.support.google_retail_search import retail_product
    from tests.support.google_retail_standin import GoogleStandin

    with GoogleStandin(
        [retail_product(p) for p in CATALOG],
        images={pid: png(rgb) for pid, rgb in COLOURS.items()},
        corrections={"nkie": "nike", "runing": "running"},
        redirects={"gift cards": "https://shop.example/gift-cards"},
    ) as server:
        yield server
