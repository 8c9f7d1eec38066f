"""Evaluation: CruxEval, next-state fidelity and exact match, calibration, ablations, the dev split, plots and model cards."""
