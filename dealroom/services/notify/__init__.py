"""Notifications: reaching people who are not in the room.

This package owns the notification outbox (rows written in the transaction of the fact that
causes them: a principal decision waiting, a written offer awaiting approval, a stage reached,
an answer after a wait, a reminder, an escalation, an operator alert), each account's
preferences and signed unsubscribe links, the screen every visitor-bound text passes, and the
rendering of emails from the templates beside it. Delivery over SMTP and the timers are jobs
(``jobs/notify_delivery.py``, ``jobs/notify_timers.py``); the queries are in
``persistence/notifications.py``.
"""
