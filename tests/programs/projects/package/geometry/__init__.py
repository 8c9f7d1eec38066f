VERSION = "1.0"
units = ["cm"]
units.append("m")
