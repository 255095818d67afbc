"""ONNX export for ATC (.onnx → .om): dynamic shapes, preprocessing, validation, atc command."""
