"""The segmented-sequences paper (Karypis, McAuley, Karypis 2023): continued pretraining on
segmented sequences with original positions, APE interpolation, evaluation (Section 4.5),
tables and figures. The samplers themselves are in `lenex.segmented.segments`."""
