"""Paper-vs-ours result tables: the papers' numbers, cell lookup and rendering."""
