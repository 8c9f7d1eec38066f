def make_counter(start):
    count = start

    def increment(by):
        nonlocal count
        count += by
        return count

    return increment


def make_multiplier(k):
    return lambda x: x * k


counter = make_counter(10)
a = counter(1)
b = counter(5)
triple = make_multiplier(3)
c = triple(a)
