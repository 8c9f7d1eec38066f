lines = [
    "2024-01-03 INFO started",
    "2024-01-03 WARN disk 91%",
    "garbage",
    "2024-01-04 ERROR failed to save",
    "2024-01-04 INFO stopped",
]

levels = {}
bad = []
for number, text in enumerate(lines, start=1):
    parts = text.split(" ", 2)
    if len(parts) < 3:
        bad.append(number)
        continue
    day, level, message = parts
    levels.setdefault(level, []).append(message)

errors = levels.get("ERROR", [])
warn_count = len(levels.get("WARN", ()))
print(f"{len(errors)} error(s), {warn_count} warning(s), bad lines: {bad}")
