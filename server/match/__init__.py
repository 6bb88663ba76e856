"""The parts of the match service (:class:`server.matches.MatchService`), one concern each.

Each part holds the service it belongs to, seen through the interface :class:`server.match.context.MatchContext`
(the parts never import :mod:`server.matches`), and uses its store, settings, clock and connections; the
decisions come from the pure core (:mod:`server.core`). See :mod:`server.matches` for the list.
"""
