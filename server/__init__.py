"""Forty Thieves Race server: the rules engine (``server.engine``) and, around it, the race server."""
