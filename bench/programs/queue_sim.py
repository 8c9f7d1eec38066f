from collections import deque


def serve(queue, rounds):
    served = []
    while queue and rounds > 0:
        served.append(queue.popleft())
        rounds -= 1
    return served


q = deque(["a", "b", "c", "d"])
done = serve(q, 3)
print(done, list(q))
