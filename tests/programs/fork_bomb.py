# A fork bomb: only ever run it inside the tracegen sandbox (tests/test_sandbox.py), which refuses fork.
import os
while True:
    os.fork()
