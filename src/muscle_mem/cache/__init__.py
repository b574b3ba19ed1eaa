"""What an engine keeps in its store and writes behind: trajectories, events, use, ledger."""
