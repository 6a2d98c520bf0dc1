"""The paper-only cells the tests evaluate claims on: lenex.claims.paper_cells (the claims engine
derives each claim's effect thresholds from the same cells)."""
from lenex.claims.paper_cells import paper_tables  # noqa: F401
