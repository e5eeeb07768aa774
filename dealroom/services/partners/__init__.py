"""What partners build on: API keys with scopes, and webhooks (endpoints, the outbox written in
the stage change's own transaction, and each payload composed in one place)."""
