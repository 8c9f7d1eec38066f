def area(width, height):
    return width * height


def describe(width, height):
    a = area(width, height)
    kind = "square" if width == height else "rectangle"
    return f"{kind} of area {a}"


first = describe(3, 3)
second = describe(2, 5)
print(first, "|", second)
