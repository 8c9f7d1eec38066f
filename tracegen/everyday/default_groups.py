from collections import defaultdict

pets = [
    ("rex", "dog", 4),
    ("tom", "cat", 7),
    ("bubbles", "fish", 1),
    ("fido", "dog", 11),
    ("kitty", "cat", 2),
]

by_kind = defaultdict(list)
ages = defaultdict(int)
for name, kind, age in pets:
    by_kind[kind].append(name)
    ages[kind] += age

oldest_kind = max(ages, key=ages.get)
mean_age = {kind: ages[kind] / len(names) for kind, names in by_kind.items()}
kinds = set(by_kind)
has_bird = "bird" in kinds
