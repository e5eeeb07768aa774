"""What every agent run shares with the requests that queue it: the run queue's rows, what a
run reads before it calls a model (its context), the model-call ledger, and the runner's
interface and dependencies. The runner itself and the handlers live in ``jobs``."""
