"""jax.nn's activation, normalization and attention functions."""
