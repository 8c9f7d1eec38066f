from calc import add, Point
from calc.ops import scale
import calc


def main():
    p = Point(1, 2)
    q = scale(p, calc.consts.FACTOR)
    total = add(q.x, q.y)
    print(total)
    return total


if __name__ == "__main__":
    result = main()
