"""Command-line client of Forty Thieves Race (issue 5; not built yet).

A thin client: no rules logic; the server sends positions and legal moves.
"""
