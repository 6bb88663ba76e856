"""The shared language of Forty Thieves Race: cards, command notation, errors.

Pure: no I/O, no asyncio, no clock. Used by the server (``server``), its rules
engine (``server.engine``) and the command-line client (``client_cli``).
"""
