from .ops import add, Point
from . import consts

__all__ = ["add", "Point"]
