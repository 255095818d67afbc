"""Accuracy comparison: baseline recording, output/tensor comparison, layer-wise localisation."""
