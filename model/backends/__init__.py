"""Inference backends behind one interface (`base.Backend`): transformers, vLLM server, vLLM engine."""
from model.backends.base import Backend, BackendError, Constraint, Generation

__all__ = ["Backend", "BackendError", "Constraint", "Generation"]
