class InvalidValue(ValueError):
    pass


def parse_positive(text):
    if not text.lstrip("-").isdigit():
        raise InvalidValue("not a number: " + text)
    value = int(text)
    check(value)
    return value


def check(value):
    if value < 0:
        raise InvalidValue(f"negative: {value}")
