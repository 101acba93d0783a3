"""Datasets from recorded bags: labelled camera frames, exported in common formats."""
