"""The core under every API: element types, errors, config, pytrees, the
tracer and the primitive emitters (ops), eager calls, jit's stages, the
compile and executable cache, and the Python views of HLO, passes, buffers,
the iGraph and the profiler."""
