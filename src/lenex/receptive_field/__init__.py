"""The receptive-field paper (Chi et al. 2023, "Dissecting Transformer Length Extrapolation via
the Lens of Receptive Field Analysis"): its evaluation protocol, empirical receptive field,
significance test, cache-window inference, tables and figures.

In lenex the paper's key is `receptive-field` (config/experiments/receptive-field.yaml,
results/<preset>/.../receptive-field/); its numbers sit under `paper=sandwich` in
src/lenex/paper_results.csv.
"""

PAPER_KEY = "receptive-field"
PAPER_RESULTS_KEY = "sandwich"
