def check(v):
    if v < 0:
        raise ValueError("neg")
    return v * 2

def run(items):
    out = []
    for it in items:
        try:
            out.append(check(it))
        except ValueError:
            out.append(0)
    return out

res = run([1, -1])
print("hi", res)
final = check(-5)
