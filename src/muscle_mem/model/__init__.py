"""What is stored: trajectories, provenance, the codec, task keys, texts and observations."""
