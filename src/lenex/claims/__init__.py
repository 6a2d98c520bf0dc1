"""The papers' claims as data, checked by machine on the papers' numbers and on ours (docs/claims.md)."""

#: Figures whose numbers are in no table write their own cells file (results/<preset>/figures/<paper>/<key>.cells.json).
FIGURE_CELLS = {"segmented": ["figure3"]}
