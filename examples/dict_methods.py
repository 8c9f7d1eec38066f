def f(d, keys):
    out = dict(d)
    for k in keys:
        if k in out:
            out.pop(k)
        else:
            out.setdefault(k, len(k))
    items = sorted(out.items())
    out.update({"n": len(items)})
    return out


result = f({"a": 1, "bb": 2, "c": 3}, ["a", "zz", "c"])
