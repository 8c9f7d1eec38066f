"""How a prediction is decoded: constraints and grammars, repr checks, closing runaway values, reranking, confidence."""
