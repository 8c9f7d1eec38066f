from collections import deque

arrivals = [(0, "ann"), (1, "bo"), (1, "cy"), (4, "di")]
SERVICE = 2

queue = deque()
served = []
clock = 0
pending = list(arrivals)
while pending or queue:
    while pending and pending[0][0] <= clock:
        queue.append(pending.pop(0)[1])
    if queue:
        person = queue.popleft()
        served.append((person, clock))
        clock += SERVICE
    else:
        clock = pending[0][0]

waits = {name: t for name, t in served}
last = served[-1]
