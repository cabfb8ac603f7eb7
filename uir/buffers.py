"""uir.buffers: buffer assignment, its report and its checker."""

from uir._src.core.buffers import BufferAssignment, assign

__all__ = ["BufferAssignment", "assign"]
