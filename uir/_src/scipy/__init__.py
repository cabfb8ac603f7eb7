"""jax.scipy on uir.numpy and uir.lax: special functions, the normal
distribution, signal convolutions and detrending, and linear algebra in
SciPy's spellings, one file per module."""
