"""Program text shared by several tests: the worked example of debugpy's stops (docs/tracegen-parity.md)."""

# `check` raises on a negative value; `run` catches it one level up. Tests append their own module code.
CHECK_RUN_DEFS = '''\
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
'''

# the DebugClient Continue scenario's program (tests/js/model_continue.test.js): a breakpoint on line 4, inside check()
CHECK_RUN_SCENARIO = '''\
def check(v):
    if v < 0:
        raise ValueError("neg")
    return v * 2

def run(items):
    out = []
    for it in items:
        out.append(check(it))
    return out

res = run([1, 2])
print(res)
'''
