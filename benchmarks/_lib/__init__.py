"""Helpers of the benchmarks: workloads, streams, harnesses and reference implementations (no entry point)."""
