def gen(n):
    for i in range(n):
        yield i * 2
    return "done"

class Box:
    def __init__(self, v):
        self.v = v
    def get(self):
        return self.v
    def __repr__(self):
        return f"Box({self.v})"

b = Box(3)
x = b.get()
total = sum(gen(3))
sq = [k * k for k in range(3)]
g = (k + 1 for k in sq)
print("total", total, list(g))
