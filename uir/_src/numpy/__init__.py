"""jax.numpy on lax: ufuncs, creation, manipulation, reductions, indexing,
products, einsum, sorting, searching, sets, statistics, signal functions,
polynomials, histograms, types and linalg, one file per concern."""
