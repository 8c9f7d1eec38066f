import math
from dataclasses import dataclass


@dataclass
class Point:
    x: float
    y: float

    def distance_to(self, other):
        return math.hypot(self.x - other.x, self.y - other.y)


route = [Point(0.0, 0.0), Point(3.0, 4.0), Point(3.5, 4.1), Point(-1.0, 2.0)]
length = 0.0
for a, b in zip(route, route[1:]):
    step = a.distance_to(b)
    length += step

farthest = max(route, key=lambda p: p.distance_to(route[0]))
rounded = round(length, 3)
