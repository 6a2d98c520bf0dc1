"""lenex: regenerate the results of three length-extrapolation papers."""

import os

# Before torch is imported anywhere: back torch's CPU allocations with transparent huge
# pages. Without it the 50257-wide logits cause millions of page faults per run
# (measured: 2L/64 training 950 -> 1580 tokens/s on one thread).
os.environ.setdefault("THP_MEM_ALLOC_ENABLE", "1")
