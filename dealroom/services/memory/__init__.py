"""Durable account memory: one document per account, written under the account's row lock with
a history row per changed leaf, readable by its owner and revertable by operators."""
