"""Scale study (issue 16): the grid runner (study) and its plot and write-up (report)."""
