"""Scale study: the grid runner (study) and its plot and write-up (report)."""
