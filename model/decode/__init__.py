"""How a prediction is decoded: the per-step decoding spec (`spec`), constraints and grammars, repr checks, closing runaway values, reranking, confidence."""
