"""A run in progress, and its turning into a trajectory: tools, fingerprints, data flow."""
