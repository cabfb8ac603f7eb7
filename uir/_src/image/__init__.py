"""jax.image: resizing and scale-and-translate resampling of images."""
