"""jax.lax on the core: elementwise ops (one table), structural ops,
slicing, windowed and cumulative ops, control flow, convolution, random
bits, ragged dots, special functions and the linalg decompositions."""
