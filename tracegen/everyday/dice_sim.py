import random

rng = random.Random(7)
rolls = [rng.randint(1, 6) for _ in range(8)]
counts = {}
for face in rolls:
    counts[face] = counts.get(face, 0) + 1

doubles = 0
prev = None
for face in rolls:
    if face == prev:
        doubles += 1
    prev = face

mean = sum(rolls) / len(rolls)
faces_seen = set(rolls)
never = {1, 2, 3, 4, 5, 6} - faces_seen
