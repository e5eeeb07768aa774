"""Accounts and who is asking: sign-up, sign-in and sessions, credentials resolved to an
identity (session, act-as, API key, guest key), password hashing, and the throttles that keep
the API from abuse."""
