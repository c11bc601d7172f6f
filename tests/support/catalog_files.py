"""Small catalog files no demo uses, for the tests of ``aisle tenant create`` and ``PUT /tenants/{tenant}``.

- a wine shop (CSV or NDJSON, 30 wines): ``sku``, ``name``, ``winery``, ``price``, ``colour``,
  ``category`` (paths such as ``Wine > Red > Rioja``), ``country``, ``vintage``, ``organic``
  (yes/no), ``rating``, ``description``, ``image_url``, ``ean`` (13 digits, some with a leading 0);
- a bookshop (Parquet, typed columns, 24 books): ``isbn``, ``title``, ``author``, ``publisher``,
  ``genre``, ``price``, ``pages``, ``in_stock`` (bool), ``cover`` (picture links), ``language``.
"""

from __future__ import annotations

import io
from typing import Any

import orjson
import polars as pl

WINERIES = ["Bodegas Altos", "Domaine Clairet", "Tenuta Rossi", "Quinta do Vale", "Weingut Berg",
            "Cloudy Ridge", "Vina Sol", "Chateau Lune"]  # fmt: skip
COUNTRIES = {"Bodegas Altos": "Spain", "Domaine Clairet": "France", "Tenuta Rossi": "Italy",
             "Quinta do Vale": "Portugal", "Weingut Berg": "Germany", "Cloudy Ridge": "New Zealand",
             "Vina Sol": "Spain", "Chateau Lune": "France"}  # fmt: skip
STYLES = [  # colour, region, grape
    ("Red", "Rioja", "Tempranillo"),
    ("White", "Mosel", "Riesling"),
    ("Rose", "Provence", "Grenache"),
    ("Red", "Bordeaux", "Merlot"),
    ("White", "Marlborough", "Sauvignon Blanc"),
    ("Red", "Douro", "Touriga Nacional"),
]


def wine_rows() -> list[dict[str, Any]]:
    """30 wines; ``W-1007`` is the only Riesling named 'Spatlese', ``W-1000`` the only 'Reserva Especial'."""
    rows = []
    for i in range(30):
        winery = WINERIES[i % len(WINERIES)]
        colour, region, grape = STYLES[i % len(STYLES)]
        special = {0: "Reserva Especial", 7: "Spatlese"}.get(i, "Classic")
        rows.append(
            {
                "sku": f"W-{1000 + i}",
                "name": f"{winery} {grape} {special} {2012 + i % 10}",
                "winery": winery,
                "price": round(8.5 + (i * 7.35) % 60, 2),
                "colour": colour,
                "category": f"Wine > {colour} > {region}",
                "country": COUNTRIES[winery],
                "vintage": 2012 + i % 10,
                "organic": "yes" if i % 3 == 0 else "no",
                "rating": round(84 + (i * 1.37) % 12, 1),
                "description": f"A {colour.lower()} {grape} from {region}, made by {winery}. Pairs well "
                f"with {['lamb', 'fish', 'cheese', 'pasta', 'salad'][i % 5]} and slow evenings.",
                "image_url": f"https://img.example.com/wines/{1000 + i}.jpg",
                "ean": f"{(i % 2)}{841234500000 + i:012d}",
            }
        )
    return rows


def wine_csv(rows: list[dict[str, Any]] | None = None) -> bytes:
    return pl.DataFrame(rows or wine_rows()).write_csv().encode()


def wine_ndjson(rows: list[dict[str, Any]] | None = None) -> bytes:
    return b"\n".join(orjson.dumps(r) for r in rows or wine_rows()) + b"\n"


ADJECTIVES = ["Silent", "Last", "Hidden", "Golden"]
NOUNS = ["Harbour", "Orbit", "Empire", "Kitchen"]


def books_parquet() -> bytes:
    """24 books as Parquet with typed columns (floats, ints, booleans, strings)."""
    genres = ["Mystery", "Science Fiction", "History", "Cookery"]
    publishers = ["Harbour Press", "Northwind Books", "Lantern House"]
    frame = pl.DataFrame(
        {
            "isbn": [f"978{1000000000 + i * 7919}" for i in range(24)],
            "title": [f"The {ADJECTIVES[i % 4]} {NOUNS[i % 4]} Volume {i + 1}" for i in range(24)],
            "author": [f"Author {chr(65 + i)}. Writer" for i in range(24)],
            "publisher": [publishers[i % 3] for i in range(24)],
            "genre": [genres[i % 4] for i in range(24)],
            "price": [round(6.99 + i * 1.25, 2) for i in range(24)],
            "pages": [180 + i * 13 for i in range(24)],
            "in_stock": [i % 4 != 0 for i in range(24)],
            "cover": [f"https://covers.example.org/{i}.png" for i in range(24)],
            "language": ["English" if i % 3 else "French" for i in range(24)],
        }
    )
    buf = io.BytesIO()
    frame.write_parquet(buf)
    return buf.getvalue()
