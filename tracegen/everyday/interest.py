import math

PRINCIPAL = 1000.0
RATE = 0.035
YEARS = 5


def compound(principal, rate, years, per_year=12):
    return principal * (1 + rate / per_year) ** (per_year * years)


simple = PRINCIPAL * (1 + RATE * YEARS)
monthly = compound(PRINCIPAL, RATE, YEARS)
continuous = PRINCIPAL * math.exp(RATE * YEARS)
gain = monthly - simple
doubling = math.log(2) / math.log(1 + RATE)
tiny = 1 / 100000
years_to_double = math.ceil(doubling)
