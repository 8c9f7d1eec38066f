def transpose(m):
    rows = len(m)
    cols = len(m[0])
    return [[m[r][c] for r in range(rows)] for c in range(cols)]


def trace(m):
    total = 0
    for i in range(len(m)):
        total += m[i][i]
    return total


grid = [[1, 2], [3, 4]]
t = transpose(grid)
print(t, trace(t))
