"""The LEX Transformer paper (Sun et al. 2023): attention resolution (resolution), its figures
(figures) and the evaluations its tables need (targets)."""
