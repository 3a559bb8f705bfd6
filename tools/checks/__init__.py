"""Checks of the tree: check_layers.py (every dependency points down the
layers, docs/layers.md), doc_figures.py (the provenance of the figures
typed into docs/) and spin_check.sh (the Promela models). On top."""
