"""What the source alone says (control flow, kinds, names a frame can show, call arguments, line effects, user modules); never runs code."""
