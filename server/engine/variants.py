"""Variants: the parameters of a Forty Thieves game, and the named presets.

RULES.md section 7 lists the presets and pins what the source pages leave
open. A variant is one frozen :class:`Variant` record; :data:`PRESETS` holds
the presets by name and :func:`find_variant` looks one up by name or alias.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from enum import Enum

from protocol.errors import NotationError


class BuildRule(Enum):
    """Which card may be placed on a column's top card (RULES.md sections 2 and 7).

    In every rule the placed card is exactly one rank lower; ace and king
    are not connected.
    """

    SAME_SUIT = "same_suit"
    ALTERNATE_COLOUR = "alternate_colour"
    ANY_OTHER_SUIT = "any_other_suit"
    """Any suit but the card's own (Indian)."""


    def builds_on(self) -> tuple[frozenset[int], ...]:
        """For each card code ``onto``, the set of card codes that may be placed on it.

        Exactly one rank lower, in this rule's suit relation; an ace is
        never placed on a king (RULES.md section 2).
        """
        table = []
        for onto in range(52):
            allowed = set()
            for card in range(52):
                if card % 13 + 2 != onto % 13 + 1:
                    continue
                if self is BuildRule.SAME_SUIT:
                    ok = card // 13 == onto // 13
                elif self is BuildRule.ALTERNATE_COLOUR:
                    ok = (13 <= card < 39) != (13 <= onto < 39)
                else:
                    ok = card // 13 != onto // 13
                if ok:
                    allowed.add(card)
            table.append(frozenset(allowed))
        return tuple(table)


class MoveRule(Enum):
    """How many cards of a run may move in one command (RULES.md section 3)."""

    SINGLE = "single"
    SUPERMOVE = "supermove"
    SEQUENCE = "sequence"


@dataclass(frozen=True, slots=True)
class Variant:
    """The parameters of one game (RULES.md section 7).

    Sizes are in cards and columns: ``decks`` full 52-card decks;
    ``columns`` tableau columns of ``cards_per_column`` cards, the first
    ``face_down`` of each (the rows dealt first, at the bottom) face down;
    ``slots`` foundation slots (4 per deck); ``aces_on_foundations`` deals
    every ace to the slots before the shuffle, in the order C D H S per
    deck; ``redeals`` how many times the waste may be turned back into the
    stock; ``foundation_to_column`` whether cards may come down from the
    foundations (off in every preset: RULES.md section 6).
    """

    name: str
    decks: int = 2
    columns: int = 10
    cards_per_column: int = 4
    face_down: int = 0
    build_rule: BuildRule = BuildRule.SAME_SUIT
    move_rule: MoveRule = MoveRule.SUPERMOVE
    aces_on_foundations: bool = False
    redeals: int = 0
    foundation_to_column: bool = False
    aliases: tuple[str, ...] = ()
    description: str = ""
    builds_on: tuple[frozenset[int], ...] = field(init=False, repr=False, compare=False)
    """``card in variant.builds_on[onto]``: may ``card`` be placed on ``onto`` (derived from ``build_rule``)."""

    builds_on_reverse: tuple[frozenset[int], ...] = field(init=False, repr=False, compare=False)
    """``onto in variant.builds_on_reverse[card]``: the same relation, looked up by the placed card."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "builds_on", _BUILDS_ON[self.build_rule])
        object.__setattr__(self, "builds_on_reverse", _BUILDS_ON_REVERSE[self.build_rule])

    @property
    def slots(self) -> int:
        """Number of foundation slots: four per deck."""
        return 4 * self.decks

    @property
    def card_total(self) -> int:
        """Cards in the game: 52 per deck."""
        return 52 * self.decks


_BUILDS_ON = {rule: rule.builds_on() for rule in BuildRule}
_BUILDS_ON_REVERSE = {
    rule: tuple(frozenset(onto for onto in range(52) if card in table[onto]) for card in range(52))
    for rule, table in _BUILDS_ON.items()
}

CLASSIC = Variant(
    "classic",
    aliases=("forty_thieves", "napoleon_at_st_helena", "le_cadran", "big_forty", "roosevelt_at_san_juan"),
    description=(
        "Forty Thieves as all three source pages describe it: 2 decks, 10 columns of 4 face up, "
        "build down in suit, supermoves through empty columns, one pass through the stock. "
        "Published descriptions: Wikipedia 'Forty Thieves (solitaire)'; PySolFC game 'Forty Thieves' "
        "(pysollib/games/fortythieves.py, class FortyThieves), which moves one card at a time; "
        "ours allows supermoves of 2^e cards (German page), the same game in fewer commands."
    ),
)
"""Classic Forty Thieves (RULES.md sections 1-6)."""

RELAXED = Variant(
    "relaxed",
    move_rule=MoveRule.SEQUENCE,
    redeals=1,
    aliases=("locker",),
    description=(
        "The German page's 'Locker' variant: classic, but any run moves as a unit and the waste "
        "may be turned back once, the second pass in the same order."
    ),
)

JOSEPHINE = Variant(
    "josephine",
    move_rule=MoveRule.SEQUENCE,
    description=(
        "Josephine (Swedish page; PySolFC class Josephine; Wikipedia 'Forty Thieves' variants): "
        "classic with any run moving as a unit."
    ),
)

LUCAS = Variant(
    "lucas",
    columns=13,
    cards_per_column=3,
    aces_on_foundations=True,
    description=(
        "Lucas (Swedish and German pages): the eight aces start on the foundations, 13 columns of 3. "
        "Differs from PySolFC's Lucas, which keeps the aces in the deck and deals 13 columns of 4; "
        "ours follows the Swedish page. Aces go to slots in the order AC AD AH AS AC AD AH AS."
    ),
)

MARIA = Variant(
    "maria",
    columns=9,
    build_rule=BuildRule.ALTERNATE_COLOUR,
    description=(
        "Maria (Swedish page; PySolFC class Maria): 9 columns of 4, build down in alternate colour."
    ),
)

INDIAN = Variant(
    "indian",
    cards_per_column=3,
    face_down=1,
    build_rule=BuildRule.ANY_OTHER_SUIT,
    move_rule=MoveRule.SINGLE,
    description=(
        "Indian (Swedish page; PySolFC class Indian): 10 columns of 3, the bottom card face down, "
        "build down in any suit but the card's own, one card at a time (pinned in RULES.md section 7)."
    ),
)

STREETS = Variant(
    "streets",
    build_rule=BuildRule.ALTERNATE_COLOUR,
    description="Streets (Swedish page; PySolFC class Streets): classic, building down in alternate colour.",
)

NUMBER_TEN = Variant(
    "number_ten",
    face_down=2,
    build_rule=BuildRule.ALTERNATE_COLOUR,
    move_rule=MoveRule.SEQUENCE,
    description=(
        "Number Ten (Swedish page; PySolFC class NumberTen): 10 columns of 4, the first 2 rows face "
        "down, build down in alternate colour, any run moves as a unit."
    ),
)

RANK_AND_FILE = Variant(
    "rank_and_file",
    face_down=3,
    build_rule=BuildRule.ALTERNATE_COLOUR,
    move_rule=MoveRule.SEQUENCE,
    aliases=("dress_parade",),
    description=(
        "Rank and File, also Dress Parade (Swedish page; PySolFC class RankAndFile): 10 columns of "
        "4, the first 3 rows face down, build down in alternate colour, any run moves as a unit."
    ),
)

EMPEROR = Variant(
    "emperor",
    face_down=3,
    build_rule=BuildRule.ALTERNATE_COLOUR,
    description=(
        "Emperor (Swedish page; PySolFC class Emperor): 10 columns of 4, the bottom 3 cards of each "
        "face down, build down in alternate colour, supermoves (pinned in RULES.md section 7)."
    ),
)

SIXTY_THIEVES = Variant(
    "sixty_thieves",
    decks=3,
    columns=12,
    cards_per_column=5,
    description=(
        "Sixty Thieves (Swedish and German pages; PySolFC class SixtyThieves): 3 decks (156 cards), "
        "12 columns of 5, 12 foundation slots, build down in suit, supermoves (pinned in RULES.md "
        "section 7)."
    ),
)

PRESETS: dict[str, Variant] = {
    v.name: v
    for v in (CLASSIC, RELAXED, JOSEPHINE, LUCAS, MARIA, INDIAN, STREETS, NUMBER_TEN, RANK_AND_FILE, EMPEROR, SIXTY_THIEVES)
}
"""Every preset of RULES.md section 7, by canonical name."""

_BY_ALIAS = {alias: v for v in PRESETS.values() for alias in (v.name, *v.aliases)}


def find_variant(name: str) -> Variant:
    """Return the preset called ``name`` or one of its aliases.

    Case and punctuation are ignored (``"Dress Parade"`` finds
    ``rank_and_file``, ``"Napoleon at St. Helena"`` finds ``classic``). Raises :class:`~protocol.errors.NotationError`
    listing the preset names for an unknown name.
    """
    key = "_".join(re.findall(r"[a-z0-9]+", str(name).lower()))
    try:
        return _BY_ALIAS[key]
    except KeyError:
        raise NotationError(f"unknown variant {name!r}: presets are {', '.join(PRESETS)}") from None
