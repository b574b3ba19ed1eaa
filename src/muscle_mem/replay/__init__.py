"""The next safe step: the step index, the replay generator, look-up and shadow judging."""
