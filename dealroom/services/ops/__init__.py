"""What operators see and do: frustration flags, rooms found and read, model spend from the
ledger, audited actions (model picks, goal overrides, take-over), and the Prometheus metrics."""
