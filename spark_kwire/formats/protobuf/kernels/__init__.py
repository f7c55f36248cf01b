"""Protobuf's compiled kernels: wire-format values, the one-pass and the two-step decoders, and the encoder."""
