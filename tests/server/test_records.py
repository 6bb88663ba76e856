"""The store's typed records read back what the server writes: a player's hash, as a ``COMMIT`` leaves it."""

from __future__ import annotations

import msgspec
from hypothesis import given
from hypothesis import strategies as st

from server.core.player import Stored
from server.store import PlayerRecord

counts = st.integers(min_value=0, max_value=10**6)
stored_records = st.builds(Stored, moves=counts, undos=counts, hints=counts, foundation=st.integers(0, 104),
                           status=st.sampled_from(["playing", "won", "resigned", "dead", "timeout"]),
                           time_ms=counts, last_found_ms=counts)


@given(stored_records)
def test_a_committed_record_reads_back_as_the_same_game_fields(stored: Stored) -> None:
    """What a command makes of the player's record (the core's :class:`Stored`, written by ``COMMIT`` as text
    in the player's hash) is what the store reads back: the record is a ``Stored`` with equal fields, so the
    two cannot drift apart (one field list, the core's)."""
    fields = msgspec.structs.asdict(stored)
    written = {field.encode(): str(value).encode() for field, value in fields.items()}
    identity = {b"name": b"ann", b"epoch": b"3", b"ready": b"1", b"connected": b"1", b"seq": b"7"}
    record = PlayerRecord.from_hash(identity | written)
    assert isinstance(record, Stored)
    assert {field: getattr(record, field) for field in Stored.__struct_fields__} == fields
    assert (record.name, record.epoch, record.ready, record.connected, record.seq) == ("ann", 3, True, True, 7)
