"""What everyday programs are about: a few domains, each a kind of record with a name, an amount
(a float), a count (an int) and a group (a category), and the words and numbers they take.

The amounts are the floats people type (prices, scores, temperatures, small tolerances such as
``1e-05``), so that sums and products show Python's real float reprs (``0.30000000000000004``).
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Domain:
    """One subject: the record's class name, synonyms for a collection of them, and its four fields
    (label: str, amount: float, count: int, group: str) with the values each may take."""

    record: str
    plurals: tuple[str, ...]
    label: str
    labels: tuple[str, ...]
    amount: str
    amounts: tuple[float, ...]
    count: str
    counts: tuple[int, int]
    group: str
    groups: tuple[str, ...]
    owner: str  # a container class that holds records (a basket of items, a course of students)
    verb: str  # what the container's add method is called


DOMAINS: tuple[Domain, ...] = (
    Domain("Item", ("items", "basket", "cart", "products"), "name",
           ("apple", "bread", "milk", "eggs", "coffee", "rice", "tea", "butter", "cheese", "pasta", "jam", "soap"),
           "price", (0.1, 0.2, 0.25, 0.3, 0.5, 0.75, 0.99, 1.1, 1.25, 1.5, 2.49, 2.75, 3.2, 4.99, 12.5),
           "qty", (1, 6), "aisle", ("fruit", "dairy", "bakery", "pantry"), "Cart", "add"),
    Domain("Student", ("students", "roster", "pupils", "grades"), "name",
           ("ann", "ben", "cara", "dev", "eli", "fay", "gus", "hana", "ivo", "jo"),
           "score", (47.9, 55.5, 62.25, 70.0, 71.4, 88.8, 90.1, 93.75, 66.6, 81.3),
           "credits", (1, 5), "house", ("red", "blue", "green"), "Course", "enroll"),
    Domain("Reading", ("readings", "log", "temps", "weather"), "city",
           ("oslo", "lima", "rome", "cairo", "tokyo", "quito", "perth", "baku"),
           "temp", (-3.5, 0.1, 12.7, 18.2, 21.05, 25.6, 30.3, 7.25, -0.4, 14.9),
           "hour", (0, 23), "region", ("north", "south", "east"), "Station", "record"),
    Domain("Task", ("tasks", "todo", "backlog", "jobs"), "title",
           ("docs", "tests", "deploy", "review", "refactor", "design", "triage", "release"),
           "hours", (0.25, 0.5, 1.5, 2.0, 3.75, 0.1, 4.2, 0.3, 6.5),
           "priority", (1, 5), "owner", ("ana", "raj", "kim"), "Sprint", "plan"),
    Domain("Leg", ("legs", "route", "trip", "stops"), "city",
           ("paris", "lyon", "nice", "bern", "graz", "pisa", "gent", "turin"),
           "km", (12.5, 250.0, 87.3, 410.6, 3.2, 0.7, 64.15, 120.8),
           "days", (1, 4), "mode", ("car", "train", "bus"), "Journey", "add_leg"),
    Domain("Expense", ("expenses", "bills", "ledger", "costs"), "what",
           ("rent", "food", "gas", "phone", "gym", "books", "taxi", "music"),
           "amount", (12.99, 7.5, 120.0, 45.25, 0.99, 33.3, 8.1, 19.95),
           "month", (1, 12), "payer", ("sam", "lee", "max"), "Budget", "charge"),
    Domain("Part", ("parts", "stock", "inventory", "bins"), "sku",
           ("bolt", "nut", "gear", "spring", "valve", "shaft", "washer", "pin"),
           "weight", (0.05, 0.125, 1.5, 2.25, 0.3, 12.0, 0.02, 7.7),
           "stock", (0, 40), "shelf", ("a1", "b2", "c3"), "Warehouse", "store"),
    Domain("Sample", ("samples", "data", "measurements", "points"), "sensor",
           ("s1", "s2", "t7", "probe", "left", "right", "core", "edge"),
           "value", (0.0125, 1e-05, 3.3, 0.07, 9.81, 0.00016, 2.5, 1.1, 0.6),
           "tick", (0, 99), "zone", ("in", "out", "lab"), "Recorder", "push"),
)
