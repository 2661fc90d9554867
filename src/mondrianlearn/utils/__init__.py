"""Helpers shared by the estimators (validation, parallelism)."""
