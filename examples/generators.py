def countdown(n):
    while n > 0:
        yield n
        n -= 1


def evens(limit):
    for i in range(limit):
        if i % 2 == 0:
            yield i


total = 0
for value in countdown(3):
    total += value
squares = [e * e for e in evens(6)]
gen = (c for c in "abc")
letters = list(gen)
