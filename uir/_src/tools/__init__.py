"""Reports over the compiler: fusion decisions explained, and what uir was
built with and sees of the machine."""
