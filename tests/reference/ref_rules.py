"""Independent reference implementation of server/engine/RULES.md (test oracle).

Written without looking at the engine (server/, protocol/, client_cli/), to be
used for differential testing.  It favours obviously-correct code over speed.

Public functions
----------------
replay(record) -> dict
    Replay a game record (RULES.md section 10) and return
    {"results": [...], "final": text, "moves_counted": n, "status": s}.
get_variant(name_or_dict) -> dict
    A preset (section 7) by name or alias, or a custom parameter dict.
parse_position(text, variant) -> Position
format_position(position) -> str
validate_position(position, variant)      raises ValueError
parse_command(text) -> tuple              raises ValueError when malformed
apply_command(position, variant, cmd) -> (new_position, info)
                                          raises IllegalCommand when refused
autoplay(position, variant) -> bool       (True if a card was turned face up)
can_finish(position, variant) -> list | None
is_dead(position, variant, budget) -> "dead" | "alive" | "unknown"
game_status(position, variant) -> "won" | "dead" | "playing"

CLI: python tests/reference/ref_rules.py RECORD.json   (prints replay() as JSON)

Decisions where RULES.md leaves room (this oracle's reading)
--------------------------------------------------------------
- finish: the cards go up in the first order found by a depth-first search
  trying columns 1..N in turn, each card to the lowest slot that takes it
  (plain greedy play when that works).  Only visible in which empty slot
  gets which suit when aces are still in the tableau.
- dead: "stock exhausted" = stock empty and no redeal possible (none left,
  or the waste is empty too).  The search knows the face-down cards, treats
  positions alike up to column order, and answers "unknown" (status
  "playing") past the budget.
- Undo under `safe` refuses when the last command was a draw, a redeal, or
  turned a card up (itself or through its auto-play); earlier commands then
  stay out of reach.  The fresh-deal auto-play is never undone.
- `xK` is only accepted on column-to-column commands; `0` is read as a
  number and refused by range (count, column or slot 0).
- A record's "variant" may also be a dict of parameters (see get_variant),
  e.g. to switch on foundation_to_column, which every preset refuses.
"""

from __future__ import annotations

import json
import re
import sys

# --------------------------------------------------------------------------
# Cards  (section 10)
# --------------------------------------------------------------------------

RANKS = "A23456789TJQK"          # index + 1 = rank value
SUITS = "CDHS"
RED_SUITS = ("D", "H")

SAME_SUIT = "same_suit"
ALTERNATE_COLOUR = "alternate_colour"
ANY_OTHER_SUIT = "any_suit_but_own"

SINGLE = "single"
SUPERMOVE = "supermove"
SEQUENCE = "sequence"


def parse_card(token: str) -> tuple[int, str]:
    """'QS' -> (12, 'S'); accepts '10' for ten as parsers must (section 10)."""
    if len(token) == 3 and token[:2] == "10" and token[2] in SUITS:
        return (10, token[2])
    if len(token) != 2 or token[0] not in RANKS or token[1] not in SUITS:
        raise ValueError(f"not a card: {token!r}")
    return (RANKS.index(token[0]) + 1, token[1])


def card_text(card: tuple[int, str]) -> str:
    return RANKS[card[0] - 1] + card[1]


def colour(suit: str) -> str:
    return "red" if suit in RED_SUITS else "black"


# --------------------------------------------------------------------------
# Variants  (section 7)
# --------------------------------------------------------------------------

CLASSIC = {
    "name": "classic",
    "decks": 2,
    "columns": 10,
    "cards_per_column": 4,
    "face_down": 0,
    "build": SAME_SUIT,
    "move": SUPERMOVE,
    "aces_on_foundations": False,
    "redeals": 0,
    "foundation_to_column": False,
}


def _preset(name, **changes):
    v = dict(CLASSIC)
    v["name"] = name
    v.update(changes)
    return v


PRESETS = {
    "classic": _preset("classic"),
    "relaxed": _preset("relaxed", move=SEQUENCE, redeals=1),
    "josephine": _preset("josephine", move=SEQUENCE),
    "lucas": _preset("lucas", columns=13, cards_per_column=3, aces_on_foundations=True),
    "maria": _preset("maria", columns=9, build=ALTERNATE_COLOUR),
    "indian": _preset("indian", cards_per_column=3, face_down=1, build=ANY_OTHER_SUIT, move=SINGLE),
    "streets": _preset("streets", build=ALTERNATE_COLOUR),
    "number_ten": _preset("number_ten", face_down=2, build=ALTERNATE_COLOUR, move=SEQUENCE),
    "rank_and_file": _preset("rank_and_file", face_down=3, build=ALTERNATE_COLOUR, move=SEQUENCE),
    "emperor": _preset("emperor", face_down=3, build=ALTERNATE_COLOUR),
    "sixty_thieves": _preset("sixty_thieves", decks=3, columns=12, cards_per_column=5),
}

ALIASES = {
    "forty_thieves": "classic",
    "napoleon_at_st_helena": "classic",
    "le_cadran": "classic",
    "big_forty": "classic",
    "roosevelt_at_san_juan": "classic",
    "dress_parade": "rank_and_file",
    "locker": "relaxed",
}


def _norm_name(name: str) -> str:
    return re.sub(r"[^a-z0-9]+", "_", name.strip().lower()).strip("_")


def get_variant(spec) -> dict:
    """A preset by name / alias, or a dict of parameters.

    A dict may name a "preset" (default classic) and override any parameter,
    e.g. {"preset": "classic", "foundation_to_column": True}.
    """
    if isinstance(spec, dict):
        base = get_variant(spec.get("preset", spec.get("name", "classic")))
        v = dict(base)
        for key, value in spec.items():
            if key != "preset":
                v[key] = value
        return v
    key = _norm_name(spec)
    key = ALIASES.get(key, key)
    if key not in PRESETS:
        raise ValueError(f"unknown variant {spec!r}")
    return dict(PRESETS[key])


def foundation_slots(variant) -> int:
    return 4 * variant["decks"]


def fits_on(card, target, build) -> bool:
    """May `card` be built on column top `target` (section 2 / 7)?"""
    if card[0] != target[0] - 1:
        return False
    if build == SAME_SUIT:
        return card[1] == target[1]
    if build == ALTERNATE_COLOUR:
        return colour(card[1]) != colour(target[1])
    if build == ANY_OTHER_SUIT:
        return card[1] != target[1]
    raise ValueError(f"unknown build rule {build!r}")


def suits_built_on(suit, build):
    """Suits of the cards that may be built on a card of `suit`."""
    if build == SAME_SUIT:
        return [suit]
    if build == ALTERNATE_COLOUR:
        return [s for s in SUITS if colour(s) != colour(suit)]
    if build == ANY_OTHER_SUIT:
        return [s for s in SUITS if s != suit]
    raise ValueError(f"unknown build rule {build!r}")


# --------------------------------------------------------------------------
# Position
# --------------------------------------------------------------------------

class Position:
    """foundations: list of slot tops (card or None)
    stock: list of cards, next to draw first
    waste: list of cards, bottom to top
    redeals_left: int
    columns: list of lists of (card, face_up) bottom to top
    """

    def __init__(self, foundations, stock, waste, redeals_left, columns):
        self.foundations = foundations
        self.stock = stock
        self.waste = waste
        self.redeals_left = redeals_left
        self.columns = columns

    def copy(self) -> Position:
        # Cards and (card, face_up) entries are immutable tuples.
        return Position(list(self.foundations), list(self.stock), list(self.waste),
                        self.redeals_left, [list(col) for col in self.columns])

    def key(self):
        return (tuple(self.foundations), tuple(self.stock), tuple(self.waste),
                self.redeals_left, tuple(tuple(c) for c in self.columns))


def format_position(pos: Position) -> str:
    def line(label, tokens):
        return label + ":" + ("".join(" " + t for t in tokens))

    lines = [
        line("Foundations", [card_text(t) if t else "-" for t in pos.foundations]),
        line("Stock", [card_text(c) for c in pos.stock]),
        line("Waste", [card_text(c) for c in pos.waste]),
        "Redeals left: " + str(pos.redeals_left),
    ]
    for i, col in enumerate(pos.columns):
        lines.append(line(str(i + 1), [card_text(c) if up else "(" + card_text(c) + ")"
                                       for c, up in col]))
    return "\n".join(lines)


def parse_position(text: str, variant) -> Position:
    fields = {}
    columns = {}
    for raw in text.splitlines():
        ln = raw.strip()
        if not ln or ln.startswith("#"):
            continue
        if ":" not in ln:
            raise ValueError(f"bad position line {raw!r}")
        label, rest = ln.split(":", 1)
        label = label.strip()
        tokens = rest.split()
        if re.fullmatch(r"[1-9][0-9]*", label):
            n = int(label)
            if n in columns:
                raise ValueError(f"column {n} given twice")
            col = []
            for tok in tokens:
                if tok.startswith("(") and tok.endswith(")"):
                    col.append((parse_card(tok[1:-1]), False))
                else:
                    col.append((parse_card(tok), True))
            columns[n] = col
        elif label in ("Foundations", "Stock", "Waste", "Redeals left"):
            if label in fields:
                raise ValueError(f"{label} given twice")
            fields[label] = tokens
        else:
            raise ValueError(f"bad position line {raw!r}")
    for label in ("Foundations", "Stock", "Waste", "Redeals left"):
        if label not in fields:
            raise ValueError(f"missing {label} line")
    foundations = [None if t == "-" else parse_card(t) for t in fields["Foundations"]]
    stock_tokens = fields["Stock"]
    if len(stock_tokens) == 1 and stock_tokens[0].isdigit():
        raise ValueError("a redacted stock (a count) cannot be replayed")
    stock = [parse_card(t) for t in stock_tokens]
    waste = [parse_card(t) for t in fields["Waste"]]
    if len(fields["Redeals left"]) != 1 or not fields["Redeals left"][0].isdigit():
        raise ValueError("bad Redeals left line")
    redeals = int(fields["Redeals left"][0])
    ncols = variant["columns"]
    if sorted(columns) != list(range(1, ncols + 1)):
        raise ValueError(f"need columns 1..{ncols}, got {sorted(columns)}")
    pos = Position(foundations, stock, waste, redeals, [columns[i] for i in range(1, ncols + 1)])
    validate_position(pos, variant)
    return pos


def all_cards_count(pos: Position) -> dict:
    counts = {}

    def add(card):
        counts[card] = counts.get(card, 0) + 1

    for top in pos.foundations:
        if top is not None:
            for r in range(1, top[0] + 1):
                add((r, top[1]))
    for c in pos.stock:
        add(c)
    for c in pos.waste:
        add(c)
    for col in pos.columns:
        for c, _up in col:
            add(c)
    return counts


def validate_position(pos: Position, variant) -> None:
    if len(pos.columns) != variant["columns"]:
        raise ValueError("wrong number of columns")
    if len(pos.foundations) != foundation_slots(variant):
        raise ValueError("wrong number of foundation slots")
    counts = all_cards_count(pos)
    for r in range(1, 14):
        for s in SUITS:
            if counts.get((r, s), 0) != variant["decks"]:
                raise ValueError(f"{card_text((r, s))} appears {counts.get((r, s), 0)} times, "
                                 f"expected {variant['decks']}")
    for i, col in enumerate(pos.columns):
        seen_up = False
        for _c, up in col:
            if up:
                seen_up = True
            elif seen_up:
                raise ValueError(f"column {i + 1}: face-down card above a face-up one")
        if col and not col[-1][1]:
            raise ValueError(f"column {i + 1}: face-down card exposed on top")
    if pos.redeals_left < 0 or pos.redeals_left > variant["redeals"]:
        raise ValueError("more redeals left than the variant grants")


# --------------------------------------------------------------------------
# Basic queries
# --------------------------------------------------------------------------

def slot_accepts(top, card) -> bool:
    if top is None:
        return card[0] == 1
    return top[1] == card[1] and card[0] == top[0] + 1


def lowest_slot(pos: Position, card):
    for i, top in enumerate(pos.foundations):
        if slot_accepts(top, card):
            return i
    return None


def run_length(col, build) -> int:
    """Number of top cards forming a run (face up, each buildable on the one below)."""
    if not col or not col[-1][1]:
        return 0
    n = 1
    i = len(col) - 1
    while i > 0:
        card, _up = col[i]
        below, below_up = col[i - 1]
        if not below_up or not fits_on(card, below, build):
            break
        n += 1
        i -= 1
    return n


def move_limit(pos: Position, variant, src: int, dst: int) -> float:
    """Most cards that may move from column src onto column dst (section 3)."""
    rule = variant["move"]
    if rule == SINGLE:
        return 1
    if rule == SEQUENCE:
        return float("inf")
    if rule == SUPERMOVE:
        e = sum(1 for j, col in enumerate(pos.columns) if not col and j != dst and j != src)
        return 2 ** e
    raise ValueError(f"unknown move rule {rule!r}")


def flip_top(col) -> bool:
    if col and not col[-1][1]:
        col[-1] = (col[-1][0], True)
        return True
    return False


def on_foundations(pos: Position, card) -> int:
    """How many copies of `card` are on the foundations."""
    return sum(1 for top in pos.foundations
               if top is not None and top[1] == card[1] and top[0] >= card[0])


def is_safe(pos: Position, variant, card) -> bool:
    """Section 5: aces and twos always; else every copy of every card that
    could be built on it is already on a foundation."""
    if card[0] <= 2:
        return True
    for s in suits_built_on(card[1], variant["build"]):
        if on_foundations(pos, (card[0] - 1, s)) != variant["decks"]:
            return False
    return True


def is_won(pos: Position) -> bool:
    return not pos.stock and not pos.waste and all(not col for col in pos.columns)


def has_face_down(pos: Position) -> bool:
    return any(not up for col in pos.columns for _c, up in col)


# --------------------------------------------------------------------------
# Auto-play  (section 5)
# --------------------------------------------------------------------------

def autoplay(pos: Position, variant) -> bool:
    """Move safe cards up in the pinned order; return True if any face-down
    card was turned up.  Mutates pos."""
    flipped = False
    while True:
        moved = False
        if pos.waste:
            card = pos.waste[-1]
            slot = lowest_slot(pos, card)
            if slot is not None and is_safe(pos, variant, card):
                pos.waste.pop()
                pos.foundations[slot] = card
                moved = True
        if not moved:
            for col in pos.columns:
                if not col:
                    continue
                card = col[-1][0]
                slot = lowest_slot(pos, card)
                if slot is not None and is_safe(pos, variant, card):
                    col.pop()
                    pos.foundations[slot] = card
                    if flip_top(col):
                        flipped = True
                    moved = True
                    break
        if not moved:
            return flipped


# --------------------------------------------------------------------------
# Finish  (section 5)
# --------------------------------------------------------------------------

def can_finish(pos: Position, variant):
    """Return a list of (column index, slot index) moves clearing the tableau,
    or None.  Depth-first, trying columns 1..N in order, each card to the
    lowest accepting slot; the first complete sequence is returned (so when
    plain greedy play works, that is what is used)."""
    cols = [[c for c, _up in col] for col in pos.columns]
    n = len(cols)
    failed = set()

    def dfs(lengths, found, path):
        if all(l == 0 for l in lengths):
            return path
        if lengths in failed:
            return None
        for i in range(n):
            if lengths[i] == 0:
                continue
            card = cols[i][lengths[i] - 1]
            slot = None
            for k, top in enumerate(found):
                if slot_accepts(top, card):
                    slot = k
                    break
            if slot is None:
                continue
            new_found = list(found)
            new_found[slot] = card
            new_lengths = lengths[:i] + (lengths[i] - 1,) + lengths[i + 1:]
            res = dfs(new_lengths, tuple(new_found), path + [(i, slot)])
            if res is not None:
                return res
        failed.add(lengths)
        return None

    limit = sys.getrecursionlimit()
    total = sum(len(c) for c in cols)
    if total + 100 > limit:
        sys.setrecursionlimit(total + 200)
    return dfs(tuple(len(c) for c in cols), tuple(pos.foundations), [])


# --------------------------------------------------------------------------
# Commands  (section 10)
# --------------------------------------------------------------------------

class IllegalCommand(ValueError):
    pass


class MalformedCommand(IllegalCommand):
    pass


NUM = r"(0|[1-9][0-9]*)"
_RE_COL_COL = re.compile(rf"{NUM}-{NUM}(?:x{NUM})?")
_RE_WASTE_COL = re.compile(rf"w-{NUM}")
_RE_TO_FOUND = re.compile(rf"({NUM}|w)-f{NUM}?")
_RE_FOUND_COL = re.compile(rf"f{NUM}-{NUM}")


def parse_command(text):
    """Canonical form only.  Returns one of
    ("draw",), ("redeal",), ("undo",), ("finish",),
    ("col_col", src, dst, count_or_None), ("waste_col", dst),
    ("to_found", src_col_or_"w", slot_or_None), ("found_col", slot, dst)
    (column and slot numbers 1-based, as written)."""
    if not isinstance(text, str):
        raise MalformedCommand(f"not a command: {text!r}")
    if text == "s":
        return ("draw",)
    if text == "r":
        return ("redeal",)
    if text == "u":
        return ("undo",)
    if text == "finish":
        return ("finish",)
    m = _RE_COL_COL.fullmatch(text)
    if m:
        count = int(m.group(3)) if m.group(3) is not None else None
        return ("col_col", int(m.group(1)), int(m.group(2)), count)
    m = _RE_WASTE_COL.fullmatch(text)
    if m:
        return ("waste_col", int(m.group(1)))
    m = _RE_TO_FOUND.fullmatch(text)
    if m:
        src = "w" if m.group(1) == "w" else int(m.group(1))
        slot = int(m.group(3)) if m.group(3) is not None else None
        return ("to_found", src, slot)
    m = _RE_FOUND_COL.fullmatch(text)
    if m:
        return ("found_col", int(m.group(1)), int(m.group(2)))
    raise MalformedCommand(f"unknown command {text!r}")


def _check_column(pos, n):
    if not 1 <= n <= len(pos.columns):
        raise IllegalCommand(f"no column {n}")
    return n - 1


def _check_slot(pos, n):
    if not 1 <= n <= len(pos.foundations):
        raise IllegalCommand(f"no foundation slot {n} (slots are 1..{len(pos.foundations)})")
    return n - 1


def apply_command(pos: Position, variant, cmd):
    """Apply a parsed non-undo command to a copy of pos.
    Returns (new_pos, info) with info = {"kind": ..., "flipped": bool}.
    Raises IllegalCommand when refused.  Does not auto-play."""
    kind = cmd[0]
    new = pos.copy()
    flipped = False

    if kind == "draw":
        if not new.stock:
            raise IllegalCommand("the stock is empty")
        new.waste.append(new.stock.pop(0))
        return new, {"kind": "draw", "flipped": False}

    if kind == "redeal":
        if variant["redeals"] == 0:
            raise IllegalCommand("no redeals in this variant")
        if new.redeals_left <= 0:
            raise IllegalCommand("no redeals left")
        if new.stock:
            raise IllegalCommand("the stock is not empty")
        if not new.waste:
            raise IllegalCommand("the waste is empty")
        # The card drawn first (bottom of the waste) comes first again.
        new.stock = list(new.waste)
        new.waste = []
        new.redeals_left -= 1
        return new, {"kind": "redeal", "flipped": False}

    if kind == "finish":
        if new.stock or new.waste:
            raise IllegalCommand("stock and waste must be empty")
        if has_face_down(new):
            raise IllegalCommand("face-down cards are left")
        plan = can_finish(new, variant)
        if plan is None:
            raise IllegalCommand("the tableau cannot be cleared to the foundations")
        for i, slot in plan:
            card = new.columns[i].pop()[0]
            assert slot_accepts(new.foundations[slot], card)
            new.foundations[slot] = card
        return new, {"kind": "finish", "flipped": False}

    if kind == "col_col":
        _, s, d, count = cmd
        src = _check_column(new, s)
        dst = _check_column(new, d)
        if src == dst:
            raise IllegalCommand("source and target are the same column")
        scol = new.columns[src]
        dcol = new.columns[dst]
        if not scol:
            raise IllegalCommand(f"column {s} is empty")
        run = run_length(scol, variant["build"])
        limit = move_limit(new, variant, src, dst)
        if count is None:
            if not dcol:
                k = 1
            else:
                target = dcol[-1][0]
                k = None
                for j in range(1, run + 1):
                    if fits_on(scol[-j][0], target, variant["build"]):
                        k = j
                        break
                if k is None:
                    raise IllegalCommand(f"no card of the run on column {s} fits on {card_text(target)}")
        else:
            k = count
            if k < 1:
                raise IllegalCommand("the count must be at least 1")
            if k > run:
                raise IllegalCommand(f"the top {k} cards of column {s} are not a run")
            if dcol and not fits_on(scol[-k][0], dcol[-1][0], variant["build"]):
                raise IllegalCommand(f"{card_text(scol[-k][0])} does not fit on {card_text(dcol[-1][0])}")
        if k > limit:
            raise IllegalCommand(f"{k} cards at once, at most {limit} may move")
        moving = scol[-k:]
        del scol[-k:]
        dcol.extend(moving)
        flipped = flip_top(scol)
        return new, {"kind": "move", "flipped": flipped}

    if kind == "waste_col":
        _, d = cmd
        dst = _check_column(new, d)
        if not new.waste:
            raise IllegalCommand("the waste is empty")
        card = new.waste[-1]
        dcol = new.columns[dst]
        if dcol and not fits_on(card, dcol[-1][0], variant["build"]):
            raise IllegalCommand(f"{card_text(card)} does not fit on {card_text(dcol[-1][0])}")
        new.waste.pop()
        dcol.append((card, True))
        return new, {"kind": "move", "flipped": False}

    if kind == "to_found":
        _, s, slot_no = cmd
        if s == "w":
            src = None
        else:
            src = _check_column(new, s)
        slot = _check_slot(new, slot_no) if slot_no is not None else None
        if src is None:
            if not new.waste:
                raise IllegalCommand("the waste is empty")
            card = new.waste[-1]
        else:
            if not new.columns[src]:
                raise IllegalCommand(f"column {s} is empty")
            card = new.columns[src][-1][0]
        if slot is None:
            slot = lowest_slot(new, card)
            if slot is None:
                raise IllegalCommand(f"no foundation slot takes {card_text(card)}")
        elif not slot_accepts(new.foundations[slot], card):
            top = new.foundations[slot]
            raise IllegalCommand(f"foundation slot {slot + 1} ({card_text(top) if top else 'empty'}) "
                                 f"does not take {card_text(card)}")
        if src is None:
            new.waste.pop()
        else:
            new.columns[src].pop()
            flipped = flip_top(new.columns[src])
        new.foundations[slot] = card
        return new, {"kind": "move", "flipped": flipped}

    if kind == "found_col":
        _, slot_no, d = cmd
        if not variant["foundation_to_column"]:
            raise IllegalCommand("cards may not come down from the foundations")
        slot = _check_slot(new, slot_no)
        dst = _check_column(new, d)
        top = new.foundations[slot]
        if top is None:
            raise IllegalCommand(f"foundation slot {slot_no} is empty")
        dcol = new.columns[dst]
        if dcol and not fits_on(top, dcol[-1][0], variant["build"]):
            raise IllegalCommand(f"{card_text(top)} does not fit on {card_text(dcol[-1][0])}")
        new.foundations[slot] = None if top[0] == 1 else (top[0] - 1, top[1])
        dcol.append((top, True))
        return new, {"kind": "move", "flipped": False}

    raise IllegalCommand(f"unknown command kind {kind!r}")


# --------------------------------------------------------------------------
# Dead games  (section 5)
# --------------------------------------------------------------------------

def stock_exhausted(pos: Position) -> bool:
    """Stock empty and no redeal possible (none left, or nothing to redeal)."""
    return not pos.stock and (pos.redeals_left == 0 or not pos.waste)


def _slot_for(found, card):
    for i, top in enumerate(found):
        if slot_accepts(top, card):
            return i
    return None


def _flip(col: tuple) -> tuple:
    if col and not col[-1][1]:
        return col[:-1] + ((col[-1][0], True),)
    return col


def _search_successors(state, variant):
    """Every state reachable by one column-to-column, waste-to-column or
    (where allowed) foundation-to-column move.  A state is
    (columns: tuple of tuples of (card, face_up), waste: tuple, foundations: tuple)."""
    cols, waste, found = state
    n = len(cols)
    build = variant["build"]
    rule = variant["move"]
    empties = [i for i in range(n) if not cols[i]]
    # All empty columns are alike (positions are compared up to column
    # order, see _search_key), so only the first one is tried as a target.
    first_empty = empties[0] if empties else None
    for s in range(n):
        scol = cols[s]
        if not scol:
            continue
        run = run_length(scol, build)
        top_rank = scol[-1][0][0]
        for d in range(n):
            if d == s:
                continue
            dcol = cols[d]
            if dcol:
                # Ranks in a run rise by one per card downwards, so only the
                # card of rank (target rank - 1) can fit: k cards move.
                k = dcol[-1][0][0] - top_rank
                if k < 1 or k > run:
                    continue
                counts = [k]
            elif d == first_empty:
                counts = range(1, run + 1)
            else:
                continue
            if rule == SINGLE:
                limit = 1
            elif rule == SEQUENCE:
                limit = run
            else:
                limit = 2 ** (len(empties) - (0 if dcol else 1))
            for k in counts:
                if k > limit:
                    break
                if dcol and not fits_on(scol[-k][0], dcol[-1][0], build):
                    continue
                new = list(cols)
                new[s] = _flip(scol[:-k])
                new[d] = dcol + scol[-k:]
                yield (tuple(new), waste, found)
    if waste:
        card = waste[-1]
        for d in range(n):
            dcol = cols[d]
            if not dcol or fits_on(card, dcol[-1][0], build):
                new = list(cols)
                new[d] = dcol + ((card, True),)
                yield (tuple(new), waste[:-1], found)
    if variant["foundation_to_column"]:
        for k, top in enumerate(found):
            if top is None:
                continue
            for d in range(n):
                dcol = cols[d]
                if not dcol or fits_on(top, dcol[-1][0], build):
                    new = list(cols)
                    new[d] = dcol + ((top, True),)
                    nf = list(found)
                    nf[k] = None if top[0] == 1 else (top[0] - 1, top[1])
                    yield (tuple(new), waste, tuple(nf))


def _search_key(state):
    # The rules treat all columns alike, so column order does not matter for
    # whether a card can ever go up: identify positions up to column order.
    cols, waste, found = state
    return (tuple(sorted(cols)), waste, found)


def _any_card_goes_up(state) -> bool:
    cols, waste, found = state
    if waste and _slot_for(found, waste[-1]) is not None:
        return True
    for col in cols:
        if col and _slot_for(found, col[-1][0]) is not None:
            return True
    return False


def is_dead(pos: Position, variant, budget: int = 200000) -> str:
    """"dead", "alive" or "unknown" (more than `budget` distinct states).
    Exhaustive depth-first search over column-to-column, waste-to-column and
    (where allowed) foundation-to-column moves, with a visited set.  Uses
    full knowledge of face-down cards (the oracle knows the deal)."""
    if is_won(pos):
        return "alive"
    if not stock_exhausted(pos):
        return "alive"
    start = (tuple(tuple(col) for col in pos.columns), tuple(pos.waste), tuple(pos.foundations))
    seen = {_search_key(start)}
    stack = [start]
    while stack:
        cur = stack.pop()
        if _any_card_goes_up(cur):
            return "alive"
        for nxt in _search_successors(cur, variant):
            k = _search_key(nxt)
            if k in seen:
                continue
            seen.add(k)
            if len(seen) > budget:
                return "unknown"
            stack.append(nxt)
    return "dead"


def game_status(pos: Position, variant, budget: int = 200000) -> str:
    if is_won(pos):
        return "won"
    if is_dead(pos, variant, budget) == "dead":
        return "dead"
    return "playing"


# --------------------------------------------------------------------------
# Replay  (sections 5, 8, 10)
# --------------------------------------------------------------------------

UNDO_POLICIES = ("none", "safe", "full")


def replay(record: dict, dead_budget: int = 200000) -> dict:
    variant = get_variant(record.get("variant", "classic"))
    auto = bool(record.get("autoplay", True))
    undo_policy = record.get("undo", "none")
    if undo_policy not in UNDO_POLICIES:
        raise ValueError(f"unknown undo policy {undo_policy!r}")
    pos = parse_position(record["deal"], variant)
    if auto:
        autoplay(pos, variant)

    history = []     # (position before the command, info of the command)
    results = []
    counted = 0

    for i, move in enumerate(record.get("moves", [])):
        entry = {"i": i, "move": move}
        try:
            if is_won(pos):
                raise IllegalCommand("the game is won")
            cmd = parse_command(move)
            if cmd[0] == "undo":
                if undo_policy == "none":
                    raise IllegalCommand("undo is off in this match")
                if not history:
                    raise IllegalCommand("nothing to undo")
                before, info = history[-1]
                if undo_policy == "safe":
                    if info["kind"] == "draw":
                        raise IllegalCommand("undo cannot take back a draw")
                    if info["kind"] == "redeal":
                        raise IllegalCommand("undo cannot take back a redeal")
                    if info["flipped"]:
                        raise IllegalCommand("undo cannot take back a command that turned a card face up")
                history.pop()
                pos = before
            else:
                new, info = apply_command(pos, variant, cmd)
                if auto and autoplay(new, variant):
                    info["flipped"] = True
                history.append((pos, info))
                pos = new
        except IllegalCommand as exc:
            entry["ok"] = False
            entry["reason"] = str(exc)
        else:
            entry["ok"] = True
            counted += 1
        results.append(entry)

    return {
        "results": results,
        "final": format_position(pos),
        "moves_counted": counted,
        "status": game_status(pos, variant, dead_budget),
    }


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) != 1:
        print("usage: ref_rules.py RECORD.json", file=sys.stderr)
        return 2
    with open(argv[0], encoding="utf-8") as fh:
        record = json.load(fh)
    print(json.dumps(replay(record), indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
