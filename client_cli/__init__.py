"""Command-line client of Forty Thieves Race: ``forty-thieves`` (:mod:`client_cli.__main__`).

A thin client: no rules logic; the server sends positions and legal moves, so the
client can never disagree with the server about what is legal.
"""
