from dataclasses import dataclass

from .consts import FACTOR


@dataclass
class Point:
    x: int
    y: int


def add(a, b):
    return a + b


def scale(p, k=FACTOR):
    return Point(p.x * k, p.y * k)
