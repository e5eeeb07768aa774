"""Rooms and their panes: opening and listing rooms for the reader's seat, posting into a pane
and paging it, the pane log (a room's event sequence, one owner), platform lines, what a guest
may do before signing in, and the seeded demo."""
