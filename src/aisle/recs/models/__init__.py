"""Recommendation models: one module per model type (spec "Model types")."""
