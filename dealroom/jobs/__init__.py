"""Background jobs that are not a reply to anyone: the quiet-room watch and its chain (issue
12; ARCHITECTURE "Background jobs"). Their work is queued as ``agent_runs`` rows and executed
by the same runner as every turn."""
