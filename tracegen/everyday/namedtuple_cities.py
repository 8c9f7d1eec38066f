from collections import namedtuple

City = namedtuple("City", ["name", "country", "population", "area"])

cities = [
    City("Lyon", "FR", 522_000, 47.87),
    City("Porto", "PT", 231_800, 41.42),
    City("Graz", "AT", 291_000, 127.6),
]


def density(city):
    return city.population / city.area


densest = max(cities, key=density)
by_country = {c.country: c.name for c in cities}
sizes = sorted((round(density(c)), c.name) for c in cities)
name, country, *_ = cities[1]
print(f"{densest.name}: {density(densest):,.0f} per km2")
