from geometry import area, shapes

sides = [3, 4]
a = area.rectangle(*sides)
sq = shapes.Square(2)
b = area.rectangle(sq.side, sq.side)
print(a + b, shapes.COUNT)
