FACTOR = 3
NAMES = [n.upper() for n in ("a", "b")]
