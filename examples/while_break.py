def first_repeat(seq):
    seen = set()
    i = 0
    while True:
        if i >= len(seq):
            return None
        item = seq[i]
        if item in seen:
            break
        seen.add(item)
        i += 1
    return item


r1 = first_repeat([3, 1, 4, 1, 5])
r2 = first_repeat([1, 2, 3])
