VALUE = "the user's own model.py"
