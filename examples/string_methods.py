def f(text, sep):
    parts = text.split(sep)
    cleaned = [p.strip().title() for p in parts if p.strip()]
    joined = "-".join(cleaned)
    if joined.startswith("A"):
        joined = joined.replace("A", "@", 1)
    return joined.center(len(joined) + 2, "*")


result = f("alpha, beta,, gamma ", ",")
