"""What subscribers receive and how it reaches them: the events, the after-commit publish path,
the replay-then-live loop every followed stream shares, its heartbeats and periodic re-checks,
and admission for subscription start-ups."""
