"""What the model reads and writes: the neural-debugger language, the source listing, the tokenizer, value characters."""
