"""The papers' claims as data, checked by machine on the papers' numbers and on ours (docs/claims.md)."""
