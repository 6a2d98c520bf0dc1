"""The papers' figures, one module per paper (PNG + PDF, matplotlib)."""
