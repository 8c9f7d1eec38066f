class Point:
    def __init__(self, x, y):
        self.x = x
        self.y = y

    def moved(self, dx, dy):
        return Point(self.x + dx, self.y + dy)

    def __repr__(self):
        return f"Point({self.x}, {self.y})"


class Path:
    def __init__(self):
        self.points = []

    def add(self, point):
        self.points.append(point)
        return len(self.points)

    def __repr__(self):
        return f"Path({self.points})"


p = Point(0, 0)
path = Path()
for step in range(3):
    p = p.moved(1, step)
    path.add(p)
