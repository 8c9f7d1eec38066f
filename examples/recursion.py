def fib(n):
    if n < 2:
        return n
    return fib(n - 1) + fib(n - 2)


def power_set(items):
    if not items:
        return [[]]
    rest = power_set(items[1:])
    return rest + [[items[0]] + s for s in rest]


f5 = fib(5)
subsets = power_set([1, 2, 3])
