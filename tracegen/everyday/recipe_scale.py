RECIPE = {"flour": 250, "sugar": 100, "butter": 125.5, "eggs": 2}
UNITS = {"flour": "g", "sugar": "g", "butter": "g", "eggs": ""}


def scale(recipe, servings, base=4):
    factor = servings / base
    return {k: v * factor for k, v in recipe.items()}


def describe(amounts):
    out = []
    for name in sorted(amounts):
        qty = amounts[name]
        out.append("{} {}{}".format(name, round(qty, 2), UNITS[name]))
    return out


bigger = scale(RECIPE, 6)
smaller = scale(RECIPE, 3)
lines = describe(smaller)
eggs_needed = bigger["eggs"]
