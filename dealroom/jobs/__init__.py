"""Everything that runs in the background, claimed from rows by any worker process: the runner
and its handler protocol, one handler per agent (load → think → apply), the login gate's line and
the claim's replay, webhook delivery, room watches and their quiet chain, and the periodic
sweeps. Requests reach it only through ``services.turns.runs.Runner``; services never import it."""
