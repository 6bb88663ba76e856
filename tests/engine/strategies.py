"""Shared hypothesis strategies for the engine's property tests.

- :data:`variants`: every preset of RULES.md section 7;
- :func:`played_games`: a :class:`Game` after random legal play from a
  random seed, with the commands played.
"""

from __future__ import annotations

from hypothesis import strategies as st

from server.engine import PRESETS, Game, deal

variants = st.sampled_from(sorted(PRESETS.values(), key=lambda v: v.name))
seeds = st.one_of(st.integers(1, 10**6).map(str), st.text(max_size=12))
undo_policies = st.sampled_from(["none", "safe", "full"])


@st.composite
def played_games(draw: st.DrawFn, max_commands: int = 60, undo: str | None = None, autoplay: bool | None = None) -> tuple[Game, list[str]]:
    """A game of a random preset and seed after up to ``max_commands`` random legal commands.

    Draws favour tableau moves (so games get somewhere) but every legal
    command can be chosen, undo included.
    """
    variant = draw(variants)
    seed = draw(seeds)
    policy = undo if undo is not None else draw(undo_policies)
    auto = autoplay if autoplay is not None else draw(st.booleans())
    game = Game(deal(seed, variant), variant, autoplay=auto, undo=policy)
    commands: list[str] = []
    for _ in range(draw(st.integers(0, max_commands))):
        legal = game.legal_moves()
        if not legal:
            break
        choice = legal[draw(st.integers(0, len(legal) - 1))].command
        game.play(choice)
        commands.append(str(choice))
    return game, commands
