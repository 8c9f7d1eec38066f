grid = [
    [1.5, 2.0, 0.5],
    [3.25, 1.0, 2.75],
    [0.0, 4.5, 1.25],
]

row_sums = [sum(row) for row in grid]
col_sums = [sum(col) for col in zip(*grid)]
diagonal = [grid[i][i] for i in range(len(grid))]
flat = [x for row in grid for x in row]
biggest = max(flat)
where = None
for r, row in enumerate(grid):
    for c, value in enumerate(row):
        if value == biggest:
            where = (r, c)
transposed = tuple(tuple(col) for col in zip(*grid))
