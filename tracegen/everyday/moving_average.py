from collections import deque

prices = [10.0, 10.5, 9.75, 11.2, 12.0, 11.85]
WINDOW = 3

window = deque(maxlen=WINDOW)
averages = []
for price in prices:
    window.append(price)
    if len(window) == WINDOW:
        averages.append(sum(window) / WINDOW)

changes = [round(b - a, 2) for a, b in zip(prices, prices[1:])]
rising = all(c > 0 for c in changes[-2:])
peak_day, peak = max(enumerate(prices), key=lambda pair: pair[1])
