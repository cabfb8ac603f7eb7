"""jax.random: the threefry PRNG (prng) and the distributions drawn from it."""
