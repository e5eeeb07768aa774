"""Orchestration with I/O, one package per capability. A service runs inside the unit of
work its caller hands it (a request's or a job's), reads and writes through repositories, asks
``domain`` for every decision, and never imports ``jobs``."""
