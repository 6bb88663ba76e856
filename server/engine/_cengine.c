/*
 * The engine's per-command hot path in C, an optional accelerator of four pure functions:
 * column_moves for rules.legal_moves, visible_columns for view.redact, view_texts for
 * server.views.view_message (the redacted view's texts as the wire carries them),
 * autoplay_next for rules.autoplay (which card auto-play moves up next, if any), position_frame
 * for server.views.position_frame (the whole encoded `position` reply, the view redacted as
 * view_texts redacts it), apply_move for rules.apply (the commonest commands: moves from a
 * column or the waste, draw), and play_listed for rules.play_listed (apply_move's commands,
 * their auto-play and the next legal list in one call: Game.play_listed, every move's path).
 *
 * The server lists a player's legal moves after every accepted command; in Python most of that
 * time is the per-column scan (run lengths, which run card fits on which column top). This file
 * lists, in the pure listing's order and from the same tables, the moves up to and including the
 * column-to-column ones (RULES.md sections 2, 3 and 5):
 *
 *   waste to foundation, columns to foundation (1..N), waste to columns, column to column (by source,
 *   then target, then count; into an empty column A-B, then A-BxK for K = 2..).
 *
 * rules.legal_moves adds the rest (foundation to columns, draw, redeal, finish) in Python, and
 * computes the move limits with rules.move_limit (the one definition; passed in here). The run
 * length is a copy of rules.run_length (a run: face-up top cards each of which fits on the card
 * beneath it). Every listed move is an item of `table`, built once per column count by the
 * Python side (the same LegalMove values the pure listing builds), so this file creates no
 * command. tests/engine/test_fast_path.py checks both listings give the same list on random
 * positions of every preset.
 *
 * Anything outside what this file handles (not a tuple, a card code outside 0..51, more than 63
 * columns, a run longer than 13 cards) answers None, and the caller lists the moves in Python.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <string.h>

#define CARDS 52
#define MAXCOLS 63
#define MAXRUN 13
#define MAXCOLCARDS 256

/* The table's layout (rules._c_table builds it for n columns):
 *   0                         waste to foundation
 *   1 + i                     column i to foundation
 *   1 + n + j                 waste to column j
 *   1 + 2n + (i*n + j)*13 + k-1        column i to column j, k cards, no count written
 *   1 + 2n + 13n^2 + (i*n + j)*13 + c-1 column i to empty column j with count c (c >= 2)
 */

/* Item `index` of the tuple `column` as a card code into `card`: 1, or 0 (no error set) for anything but an int
 * 0..51. The int's value is read where CPython keeps a small one (one digit), not through PyLong_AsLong: every
 * card of a reply goes through here. */
static inline int card_at(PyObject *column, Py_ssize_t index, int *card) {
    PyObject *item = PyTuple_GET_ITEM(column, index);
    if (!PyLong_CheckExact(item)) return 0;
#if PY_VERSION_HEX >= 0x030C0000
    if (!PyUnstable_Long_IsCompact((PyLongObject *)item)) return 0;
    Py_ssize_t value = PyUnstable_Long_CompactValue((PyLongObject *)item);
#else
    Py_ssize_t size = Py_SIZE(item); /* 0 for zero, 1 for one positive digit; negative or larger: no card */
    if (size != 0 && size != 1) return 0;
    Py_ssize_t value = size ? (Py_ssize_t)((PyLongObject *)item)->ob_digit[0] : 0;
#endif
    if (value < 0 || value >= CARDS) return 0;
    *card = (int)value;
    return 1;
}

static int append(PyObject *result, PyObject *table, Py_ssize_t index) {
    PyObject *item = PyList_GET_ITEM(table, index);
    if (item == Py_None) {
        PyErr_SetString(PyExc_ValueError, "the move table has no entry for a listed move");
        return -1;
    }
    return PyList_Append(result, item);
}

/* The listing itself (column_moves, play_listed): a new list, or NULL with an error set, or NULL with none for a
 * position outside what this file handles (the caller answers None). */
static PyObject *list_prefix(PyObject *tableau, PyObject *hidden, PyObject *foundations, PyObject *waste,
                             const unsigned char *fits, long long onto_limit, long long into_limit, PyObject *table) {
    Py_ssize_t n = PyTuple_GET_SIZE(tableau);
    if (n > MAXCOLS || PyTuple_GET_SIZE(hidden) != n || PyList_GET_SIZE(table) != 1 + 2 * n + 2 * MAXRUN * n * n)
        return NULL;

    int tops[MAXCOLS], down[MAXCOLS];
    Py_ssize_t lens[MAXCOLS];
    for (Py_ssize_t j = 0; j < n; j++) {
        PyObject *column = PyTuple_GET_ITEM(tableau, j);
        PyObject *h = PyTuple_GET_ITEM(hidden, j);
        if (!PyTuple_CheckExact(column) || !PyLong_CheckExact(h)) return NULL;
        lens[j] = PyTuple_GET_SIZE(column);
        long value = PyLong_AsLong(h);
        if (value < 0 || value > lens[j] || lens[j] > MAXCOLCARDS) {
            PyErr_Clear();
            return NULL;
        }
        down[j] = (int)value;
        tops[j] = -1;
        if (lens[j] && !card_at(column, lens[j] - 1, &tops[j])) return NULL;
    }
    /* The cards a foundation slot takes now (rules._wanted): the next card of each slot short of a
     * king, and the aces when a slot is empty. */
    unsigned char wanted[CARDS] = {0};
    for (Py_ssize_t s = 0; s < PyTuple_GET_SIZE(foundations); s++) {
        PyObject *item = PyTuple_GET_ITEM(foundations, s);
        if (!PyLong_CheckExact(item)) return NULL;
        long top = PyLong_AsLong(item);
        if (top == -1 && PyErr_Occurred()) {
            PyErr_Clear();
            return NULL;
        }
        if (top == -1) {
            wanted[0] = wanted[13] = wanted[26] = wanted[39] = 1;
        } else if (top < 0 || top >= CARDS) {
            return NULL;
        } else if (top % 13 != 12) {
            wanted[top + 1] = 1;
        }
    }
    int waste_top = -1;
    Py_ssize_t waste_len = PyTuple_GET_SIZE(waste);
    if (waste_len && !card_at(waste, waste_len - 1, &waste_top)) return NULL;

    const Py_ssize_t to_foundation = 1, waste_to_column = 1 + n, onto = 1 + 2 * n;
    const Py_ssize_t with_count = onto + MAXRUN * n * n;
    PyObject *result = PyList_New(0);
    if (result == NULL) return NULL;
    if (waste_top >= 0 && wanted[waste_top] && append(result, table, 0) < 0) goto fail;
    for (Py_ssize_t i = 0; i < n; i++)
        if (tops[i] >= 0 && wanted[tops[i]] && append(result, table, to_foundation + i) < 0) goto fail;
    if (waste_top >= 0)
        for (Py_ssize_t j = 0; j < n; j++)
            if ((tops[j] < 0 || fits[tops[j] * CARDS + waste_top]) && append(result, table, waste_to_column + j) < 0)
                goto fail;
    for (Py_ssize_t i = 0; i < n; i++) {
        if (!lens[i]) continue;
        PyObject *column = PyTuple_GET_ITEM(tableau, i);
        /* The run on column i: a copy of rules.run_length. */
        int run_cards[MAXRUN];
        Py_ssize_t run = 1, at = lens[i] - 1;
        run_cards[0] = tops[i];
        while (at > down[i]) {
            int below;
            if (!card_at(column, at - 1, &below)) goto unsupported;
            if (!fits[below * CARDS + run_cards[run - 1]]) break;
            if (run == MAXRUN) goto unsupported;
            run_cards[run++] = below;
            at--;
        }
        long long onto_max = run < onto_limit ? run : onto_limit;
        long long into_max = run < into_limit ? run : into_limit;
        for (Py_ssize_t j = 0; j < n; j++) {
            if (j == i) continue;
            Py_ssize_t pair = (i * n + j) * MAXRUN;
            if (tops[j] < 0) {
                if (append(result, table, onto + pair) < 0) goto fail; /* A-B: one card */
                for (long long c = 2; c <= into_max; c++)
                    if (append(result, table, with_count + pair + c - 1) < 0) goto fail;
                continue;
            }
            for (long long k = 1; k <= onto_max; k++)
                if (fits[tops[j] * CARDS + run_cards[k - 1]] && append(result, table, onto + pair + k - 1) < 0)
                    goto fail;
        }
    }
    return result;
unsupported:
    Py_DECREF(result);
    return NULL;
fail:
    Py_DECREF(result);
    if (!PyErr_Occurred()) PyErr_SetString(PyExc_SystemError, "the move listing failed");
    return NULL;
}

/* column_moves(tableau, hidden, foundations, waste, fits, onto_limit, into_limit, table) -> list | None
 *
 * fits: bytes of 52*52, fits[onto*52 + card] != 0 when card may be placed on onto (variant.builds_on).
 * onto_limit, into_limit: rules.move_limit onto a card and into an empty column (the position's empty
 * columns; into_limit unused without one).
 */
static PyObject *column_moves(PyObject *self, PyObject *args) {
    PyObject *tableau, *hidden, *foundations, *waste, *fits_obj, *table;
    long long onto_limit, into_limit;
    if (!PyArg_ParseTuple(args, "O!O!O!O!SLLO!", &PyTuple_Type, &tableau, &PyTuple_Type, &hidden, &PyTuple_Type,
                          &foundations, &PyTuple_Type, &waste, &fits_obj, &onto_limit, &into_limit, &PyList_Type,
                          &table))
        return NULL;
    if (PyBytes_GET_SIZE(fits_obj) != CARDS * CARDS) {
        PyErr_SetString(PyExc_ValueError, "fits must be 52*52 bytes");
        return NULL;
    }
    PyObject *listed = list_prefix(tableau, hidden, foundations, waste,
                                   (const unsigned char *)PyBytes_AS_STRING(fits_obj), onto_limit, into_limit, table);
    if (listed == NULL && !PyErr_Occurred()) Py_RETURN_NONE;
    return listed;
}

/* visible_columns(tableau, hidden) -> tuple | None
 *
 * view.redact's tableau: each column from its first face-up card on (column[hidden:]), the column
 * itself when nothing of it is face down. None for anything but a tuple of tuples and as many counts
 * in 0..len(column).
 */
static PyObject *visible_columns(PyObject *self, PyObject *args) {
    PyObject *tableau, *hidden;
    if (!PyArg_ParseTuple(args, "O!O!", &PyTuple_Type, &tableau, &PyTuple_Type, &hidden)) return NULL;
    Py_ssize_t n = PyTuple_GET_SIZE(tableau);
    if (PyTuple_GET_SIZE(hidden) != n) Py_RETURN_NONE;
    PyObject *result = PyTuple_New(n);
    if (result == NULL) return NULL;
    for (Py_ssize_t j = 0; j < n; j++) {
        PyObject *column = PyTuple_GET_ITEM(tableau, j);
        PyObject *h = PyTuple_GET_ITEM(hidden, j);
        if (!PyTuple_CheckExact(column) || !PyLong_CheckExact(h)) goto unsupported;
        Py_ssize_t len = PyTuple_GET_SIZE(column);
        long down = PyLong_AsLong(h);
        if (down < 0 || down > len) {
            PyErr_Clear();
            goto unsupported;
        }
        PyObject *up = PyTuple_GetSlice(column, down, len); /* the column itself when down is 0 */
        if (up == NULL) {
            Py_DECREF(result);
            return NULL;
        }
        PyTuple_SET_ITEM(result, j, up);
    }
    return result;
unsupported:
    Py_DECREF(result);
    Py_RETURN_NONE;
}

/* Texts of the cards of `cards` (a tuple of card codes) from `from` on, as a new list of items of
 * `texts` (a tuple of 52 str: protocol.cards.format_card of each code). NULL with no error set for
 * anything but card codes 0..51 (the caller answers None). */
static PyObject *card_texts(PyObject *cards, Py_ssize_t from, PyObject *texts) {
    Py_ssize_t len = PyTuple_GET_SIZE(cards);
    PyObject *result = PyList_New(len - from);
    if (result == NULL) return NULL;
    for (Py_ssize_t i = from; i < len; i++) {
        int card;
        if (!card_at(cards, i, &card)) {
            Py_DECREF(result);
            return NULL;
        }
        PyObject *text = PyTuple_GET_ITEM(texts, card);
        Py_INCREF(text);
        PyList_SET_ITEM(result, i - from, text);
    }
    return result;
}

/* How many of ``column``'s cards (a tuple of card codes) lie face down, by ``count`` (its entry of the
 * position's ``hidden``): -1, with no exception set, unless column is a tuple and count an int in 0..len(column)
 * (the caller declines: shown cards start at this index, so a wrong count would show a face-down card). */
static long face_down(PyObject *column, PyObject *count) {
    if (!PyTuple_CheckExact(column) || !PyLong_CheckExact(count)) return -1;
    long down = PyLong_AsLong(count);
    if (down < 0 || down > PyTuple_GET_SIZE(column)) {
        PyErr_Clear();
        return -1;
    }
    return down;
}

/* The foundation slots' top cards (tuple of ints, -1 an empty slot) into ``tops``, which holds MAXCOLS + 1: 1 when
 * there are at most that many slots and each top is an int in -1..51, else 0 with no exception set (the caller
 * declines and its Python runs). */
static int foundation_tops(PyObject *foundations, int *tops) {
    Py_ssize_t slots = PyTuple_GET_SIZE(foundations);
    if (slots > MAXCOLS + 1) return 0;
    for (Py_ssize_t s = 0; s < slots; s++) {
        PyObject *item = PyTuple_GET_ITEM(foundations, s);
        if (!PyLong_CheckExact(item)) return 0;
        long top = PyLong_AsLong(item);
        if (top < -1 || top >= CARDS) {
            PyErr_Clear();
            return 0;
        }
        tops[s] = (int)top;
    }
    return 1;
}

/* view_texts(tableau, hidden, foundations, waste, texts, slot_texts) -> (tableau, hidden, foundations, waste) | None
 *
 * The wire view's lists (server.views.view_message) straight from a position's fields, redacted as
 * view.redact redacts: per column the texts of its face-up cards only (column[hidden:]), the face-down
 * ones counted in `hidden` (a new list of the same ints), each foundation slot's text (`slot_texts`: a
 * tuple of 53 str, index top + 1, so EMPTY_SLOT -1 is item 0) and the waste's texts. No stock card is
 * read. None for anything else than tuples of card codes and counts in 0..len(column).
 */
static PyObject *view_texts(PyObject *self, PyObject *args) {
    PyObject *tableau, *hidden, *foundations, *waste, *texts, *slot_texts;
    if (!PyArg_ParseTuple(args, "O!O!O!O!O!O!", &PyTuple_Type, &tableau, &PyTuple_Type, &hidden, &PyTuple_Type,
                          &foundations, &PyTuple_Type, &waste, &PyTuple_Type, &texts, &PyTuple_Type, &slot_texts))
        return NULL;
    if (PyTuple_GET_SIZE(texts) != CARDS || PyTuple_GET_SIZE(slot_texts) != CARDS + 1) {
        PyErr_SetString(PyExc_ValueError, "texts must hold 52 card texts and slot_texts 53 slot texts");
        return NULL;
    }
    Py_ssize_t n = PyTuple_GET_SIZE(tableau), slots = PyTuple_GET_SIZE(foundations);
    if (PyTuple_GET_SIZE(hidden) != n) Py_RETURN_NONE;
    PyObject *columns = NULL, *counts = NULL, *tops = NULL, *waste_texts = NULL;
    int top_codes[MAXCOLS + 1];
    if ((columns = PyList_New(n)) == NULL || (counts = PyList_New(n)) == NULL || (tops = PyList_New(slots)) == NULL)
        goto fail;
    for (Py_ssize_t j = 0; j < n; j++) {
        PyObject *column = PyTuple_GET_ITEM(tableau, j);
        PyObject *h = PyTuple_GET_ITEM(hidden, j);
        long down = face_down(column, h);
        if (down < 0) goto unsupported;
        PyObject *up = card_texts(column, down, texts);
        if (up == NULL) {
            if (PyErr_Occurred()) goto fail;
            goto unsupported;
        }
        PyList_SET_ITEM(columns, j, up);
        Py_INCREF(h);
        PyList_SET_ITEM(counts, j, h);
    }
    if (!foundation_tops(foundations, top_codes)) goto unsupported;
    for (Py_ssize_t s = 0; s < slots; s++) {
        PyObject *text = PyTuple_GET_ITEM(slot_texts, top_codes[s] + 1);
        Py_INCREF(text);
        PyList_SET_ITEM(tops, s, text);
    }
    if ((waste_texts = card_texts(waste, 0, texts)) == NULL) {
        if (PyErr_Occurred()) goto fail;
        goto unsupported;
    }
    return Py_BuildValue("(NNNN)", columns, counts, tops, waste_texts);
unsupported:
    Py_XDECREF(columns);
    Py_XDECREF(counts);
    Py_XDECREF(tops);
    Py_RETURN_NONE;
fail:
    Py_XDECREF(columns);
    Py_XDECREF(counts);
    Py_XDECREF(tops);
    return NULL;
}

/* autoplay_next(tableau, foundations, waste, fits, decks) -> int | None
 *
 * The next move of rules.autoplay (RULES.md section 5): the first of the waste top, then the tops of
 * columns 1..N, that some foundation slot takes (rules.slot_for: an ace the lowest empty slot, another
 * card the lowest slot whose top is the card one rank lower) and that is safe (rules.is_safe: an ace or
 * a two, or every card that may be built on it, fits[card*52 + builder], has all `decks` copies on the
 * foundations already). Answers source * 64 + slot (source 0 the waste, 1 + i column i; slot 0-based),
 * -1 when auto-play has nothing to move, None for anything but tuples of card codes and slot tops in
 * -1..51 (the caller runs the Python).
 */
static int wanted_slot(const int *tops, Py_ssize_t slots, int card) {
    int want = card % 13 == 0 ? -1 : card - 1;
    for (Py_ssize_t s = 0; s < slots; s++)
        if (tops[s] == want) return (int)s;
    return -1;
}

static int safe_card(const int *tops, Py_ssize_t slots, const unsigned char *fits, long decks, int card) {
    if (card % 13 + 1 <= 2) return 1;
    for (int builder = 0; builder < CARDS; builder++) {
        if (!fits[card * CARDS + builder]) continue;
        long copies = 0;
        for (Py_ssize_t s = 0; s < slots; s++)
            if (tops[s] >= builder && tops[s] / 13 == builder / 13) copies++;
        if (copies < decks) return 0;
    }
    return 1;
}

static PyObject *autoplay_next(PyObject *self, PyObject *args) {
    PyObject *tableau, *foundations, *waste;
    Py_buffer fits;
    long decks;
    if (!PyArg_ParseTuple(args, "O!O!O!y*l", &PyTuple_Type, &tableau, &PyTuple_Type, &foundations, &PyTuple_Type,
                          &waste, &fits, &decks))
        return NULL;
    PyObject *answer = NULL;
    int tops[MAXCOLS + 1];
    Py_ssize_t slots = PyTuple_GET_SIZE(foundations), n = PyTuple_GET_SIZE(tableau);
    if (fits.len != CARDS * CARDS) {
        PyErr_SetString(PyExc_ValueError, "fits must hold 52*52 bytes");
        goto done;
    }
    if (n > MAXCOLS || !foundation_tops(foundations, tops)) goto unsupported;
    const unsigned char *table = fits.buf;
    Py_ssize_t waste_len = PyTuple_GET_SIZE(waste);
    for (Py_ssize_t source = 0; source <= n; source++) {
        PyObject *pile = source == 0 ? waste : PyTuple_GET_ITEM(tableau, source - 1);
        if (source > 0 && !PyTuple_CheckExact(pile)) goto unsupported;
        Py_ssize_t len = source == 0 ? waste_len : PyTuple_GET_SIZE(pile);
        if (len == 0) continue;
        int card;
        if (!card_at(pile, len - 1, &card)) goto unsupported;
        int slot = wanted_slot(tops, slots, card);
        if (slot >= 0 && safe_card(tops, slots, table, decks, card)) {
            answer = PyLong_FromLong((long)source * 64 + slot);
            goto done;
        }
    }
    answer = PyLong_FromLong(-1);
    goto done;
unsupported:
    Py_INCREF(Py_None);
    answer = Py_None;
done:
    PyBuffer_Release(&fits);
    return answer;
}

/* ---------------------------------------------------------------- the position reply's msgpack frame
 *
 * A growing buffer and the msgpack forms msgspec writes (the smallest that holds the value: fixint, then
 * uint8..uint64 for non-negative ints, int8..int64 for negative ones below -32; fixstr, str8, str16, str32;
 * fixarray, array16, array32; fixmap). tests/engine/test_fast_path.py compares the bytes with msgspec's.
 */
typedef struct {
    char *data;
    Py_ssize_t len, cap;
    char *local; /* the stack buffer it started in (most replies fit), or NULL */
} Buffer;

static int grow(Buffer *b, Py_ssize_t more) {
    if (b->len + more <= b->cap) return 1;
    Py_ssize_t cap = b->cap * 2;
    while (cap < b->len + more) cap *= 2;
    char *data;
    if (b->data == b->local) { /* the caller's stack buffer: moved to the heap */
        data = PyMem_Malloc(cap);
        if (data != NULL) memcpy(data, b->data, b->len);
    } else {
        data = PyMem_Realloc(b->data, cap);
    }
    if (data == NULL) {
        PyErr_NoMemory();
        return 0;
    }
    b->data = data;
    b->cap = cap;
    return 1;
}

/* The buffer's memory, unless it is still the caller's stack buffer. */
static void release(Buffer *b) {
    if (b->data != b->local) PyMem_Free(b->data);
}

static inline int put(Buffer *b, const char *bytes, Py_ssize_t n) {
    if (b->len + n > b->cap && !grow(b, n)) return 0;
    char *to = b->data + b->len;
    if (n <= 16) /* most pieces are a few bytes: no library call */
        for (Py_ssize_t i = 0; i < n; i++) to[i] = bytes[i];
    else
        memcpy(to, bytes, n);
    b->len += n;
    return 1;
}

static int put_header(Buffer *b, Py_ssize_t n, unsigned char fix, unsigned char fixmax, unsigned char c8,
                      unsigned char c16, unsigned char c32) {
    unsigned char h[5];
    int k;
    if (n <= fixmax) {
        h[0] = (unsigned char)(fix | n);
        k = 1;
    } else if (c8 && n <= 0xff) {
        h[0] = c8;
        h[1] = (unsigned char)n;
        k = 2;
    } else if (n <= 0xffff) {
        h[0] = c16;
        h[1] = (unsigned char)(n >> 8);
        h[2] = (unsigned char)n;
        k = 3;
    } else {
        h[0] = c32;
        for (int i = 0; i < 4; i++) h[1 + i] = (unsigned char)((unsigned long long)n >> (24 - 8 * i));
        k = 5;
    }
    return put(b, (const char *)h, k);
}

static int put_array(Buffer *b, Py_ssize_t n) { return put_header(b, n, 0x90, 15, 0, 0xdc, 0xdd); }

static int put_int(Buffer *b, long long v) {
    unsigned char h[9];
    int k, bytes;
    if (v >= 0 && v <= 127) {
        h[0] = (unsigned char)v;
        return put(b, (const char *)h, 1);
    }
    if (v < 0 && v >= -32) {
        h[0] = (unsigned char)(signed char)v;
        return put(b, (const char *)h, 1);
    }
    if (v >= 0) {
        unsigned long long u = (unsigned long long)v;
        if (u <= 0xff) h[0] = 0xcc, bytes = 1;
        else if (u <= 0xffff) h[0] = 0xcd, bytes = 2;
        else if (u <= 0xffffffffULL) h[0] = 0xce, bytes = 4;
        else h[0] = 0xcf, bytes = 8;
    } else {
        if (v >= -128) h[0] = 0xd0, bytes = 1;
        else if (v >= -32768) h[0] = 0xd1, bytes = 2;
        else if (v >= -2147483648LL) h[0] = 0xd2, bytes = 4;
        else h[0] = 0xd3, bytes = 8;
    }
    for (k = 0; k < bytes; k++) h[1 + k] = (unsigned char)((unsigned long long)v >> (8 * (bytes - 1 - k)));
    return put(b, (const char *)h, 1 + bytes);
}

static int put_str(Buffer *b, PyObject *text) {
    Py_ssize_t n;
    const char *utf8 = PyUnicode_AsUTF8AndSize(text, &n);
    if (utf8 == NULL) return 0;
    return put_header(b, n, 0xa0, 31, 0xd9, 0xda, 0xdb) && put(b, utf8, n);
}

/* A short ASCII key (fixstr): its header and text, the length known when compiled. */
#define put_key(b, key) put_key_n((b), "" key, (Py_ssize_t)sizeof("" key) - 1)

static inline int put_key_n(Buffer *b, const char *key, Py_ssize_t n) {
    unsigned char h = (unsigned char)(0xa0 | n);
    return put(b, (const char *)&h, 1) && put(b, key, n);
}

/* The encoded texts of the 52 cards and 53 slots, copied from the last card_frames and slot_frames given
 * (kept, so that the same tuples are not read again on every call). */
#define MAXTEXT 15
static PyObject *texts_of[2];
static char text_bytes[2][CARDS + 1][MAXTEXT];
static unsigned char text_len[2][CARDS + 1];

static int take_texts(int which, PyObject *frames) {
    if (texts_of[which] == frames) return 1;
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(frames); i++) {
        PyObject *item = PyTuple_GET_ITEM(frames, i);
        if (!PyBytes_CheckExact(item) || PyBytes_GET_SIZE(item) > (which == 0 ? 8 : MAXTEXT)) {
            PyErr_SetString(PyExc_TypeError, "texts must be short encoded msgpack strings (bytes: a card's 8 at most)");
            Py_CLEAR(texts_of[which]);
            return 0;
        }
        memcpy(text_bytes[which][i], PyBytes_AS_STRING(item), PyBytes_GET_SIZE(item));
        text_len[which][i] = (unsigned char)PyBytes_GET_SIZE(item);
    }
    Py_INCREF(frames);
    Py_XSETREF(texts_of[which], frames);
    return 1;
}

/* Text `index` of the card (which 0) or slot (which 1) texts appended; 0 on failure. */
static inline int put_frame(Buffer *b, int which, Py_ssize_t index) {
    return put(b, text_bytes[which][index], text_len[which][index]);
}

/* The encoded texts of `cards` (a tuple of card codes) from `from` on, as a msgpack array. -1 with no
 * error set for anything but card codes 0..51; 0 on an error. */
static int put_cards(Buffer *b, PyObject *cards, Py_ssize_t from) {
    Py_ssize_t len = PyTuple_GET_SIZE(cards);
    if (!put_array(b, len - from)) return 0;
    if (b->len + (len - from) * MAXTEXT > b->cap && !grow(b, (len - from) * MAXTEXT)) return 0;
    char *to = b->data + b->len; /* room for every text at its longest: no check per card */
    for (Py_ssize_t i = from; i < len; i++) {
        int card;
        if (!card_at(cards, i, &card)) return -1;
        memcpy(to, text_bytes[0][card], 8); /* every card's text is shorter: one fixed-size copy, then the length */
        to += text_len[0][card];
    }
    b->len = to - b->data;
    return 1;
}

/* Argument `i` of a fast call if it is a `type` (a tuple, list, dict or str, or a subclass), else NULL with a
 * TypeError set. */
static PyObject *arg_of(PyObject *const *args, int i, PyTypeObject *type) {
    if (PyObject_TypeCheck(args[i], type)) return args[i];
    PyErr_Format(PyExc_TypeError, "argument %d must be %s, not %s", i + 1, type->tp_name, Py_TYPE(args[i])->tp_name);
    return NULL;
}

/* An int argument of a fast call into `*value`: 1, or 0 with the error set (not an int, or too large). */
static int arg_ll(PyObject *const *args, int i, long long *value) {
    *value = PyLong_AsLongLong(args[i]);
    return !(*value == -1 && PyErr_Occurred());
}

/* position_frame(seq, command, tableau, hidden, foundations, stock, waste, redeals_left, legal, commands,
 *                moves, undos, found, status, time_ms, card_frames, slot_frames) -> bytes | None
 *
 * The msgpack frame msgspec writes for protocol.messages.Position(seq, command, view, legal, moves, undos,
 * found, status, time_ms) whose view is the position's redacted view (server.views.view_message): per
 * column the texts of its face-up cards only (column[hidden:]), the face-down ones counted in `hidden`,
 * each slot's text, `stock` (the stock's count: no stock card is passed in) and the waste's texts.
 * `legal`: the legal moves, (command, cards) pairs (rules.LegalMove); `commands` maps id(command) to
 * (command, the command's text encoded) for each command met so far (the entry holds the command, so its
 * id stays its own). card_frames: 52 encoded card texts, slot_frames 53 encoded slot texts (index top + 1).
 * None for a command not in `commands` (the caller adds it and asks again) and for anything else than
 * tuples of card codes, counts in 0..len(column) and slot tops in -1..51 (the caller encodes in Python).
 */
static PyObject *position_frame(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 17) {
        PyErr_Format(PyExc_TypeError, "position_frame takes 17 arguments (%zd given)", nargs);
        return NULL;
    }
    /* Argument parsing by hand (METH_FASTCALL): PyArg_ParseTuple's format walk was a sixth of the call. */
    long long seq, stock, redeals_left, moves, undos, found, time_ms;
    if (!arg_ll(args, 0, &seq) || !arg_ll(args, 5, &stock) || !arg_ll(args, 7, &redeals_left) ||
        !arg_ll(args, 10, &moves) || !arg_ll(args, 11, &undos) || !arg_ll(args, 12, &found) ||
        !arg_ll(args, 14, &time_ms))
        return NULL;
    PyObject *command = arg_of(args, 1, &PyUnicode_Type), *tableau = arg_of(args, 2, &PyTuple_Type),
             *hidden = arg_of(args, 3, &PyTuple_Type), *foundations = arg_of(args, 4, &PyTuple_Type),
             *waste = arg_of(args, 6, &PyTuple_Type), *legal = arg_of(args, 8, &PyList_Type),
             *commands = arg_of(args, 9, &PyDict_Type), *status = arg_of(args, 13, &PyUnicode_Type),
             *card_frames = arg_of(args, 15, &PyTuple_Type), *slot_frames = arg_of(args, 16, &PyTuple_Type);
    if (command == NULL || tableau == NULL || hidden == NULL || foundations == NULL || waste == NULL ||
        legal == NULL || commands == NULL || status == NULL || card_frames == NULL || slot_frames == NULL)
        return NULL;
    if (PyTuple_GET_SIZE(card_frames) != CARDS || PyTuple_GET_SIZE(slot_frames) != CARDS + 1) {
        PyErr_SetString(PyExc_ValueError, "card_frames must hold 52 encoded texts and slot_frames 53");
        return NULL;
    }
    if (!take_texts(0, card_frames) || !take_texts(1, slot_frames)) return NULL;
    Py_ssize_t n = PyTuple_GET_SIZE(tableau), slots = PyTuple_GET_SIZE(foundations);
    if (PyTuple_GET_SIZE(hidden) != n) Py_RETURN_NONE;
    char local[2048];
    Buffer b = {local, 0, sizeof local, local};
    int ok, top_codes[MAXCOLS + 1];
    /* Position's fields in their order, the tag first; View's fields likewise. */
    if (!(put(&b, "\x8a", 1) && put_key(&b, "type") && put_key(&b, "position") && put_key(&b, "seq") &&
          put_int(&b, seq) && put_key(&b, "command") && put_str(&b, command) && put_key(&b, "view") &&
          put(&b, "\x86", 1) && put_key(&b, "tableau") && put_array(&b, n)))
        goto fail;
    for (Py_ssize_t j = 0; j < n; j++) {
        PyObject *column = PyTuple_GET_ITEM(tableau, j);
        long down = face_down(column, PyTuple_GET_ITEM(hidden, j));
        if (down < 0) goto unsupported;
        ok = put_cards(&b, column, down);
        if (ok < 0) goto unsupported;
        if (!ok) goto fail;
    }
    if (!(put_key(&b, "hidden") && put_array(&b, n))) goto fail;
    for (Py_ssize_t j = 0; j < n; j++)
        if (!put_int(&b, PyLong_AsLongLong(PyTuple_GET_ITEM(hidden, j)))) goto fail; /* checked above */
    if (!(put_key(&b, "foundations") && put_array(&b, slots))) goto fail;
    if (!foundation_tops(foundations, top_codes)) goto unsupported;
    for (Py_ssize_t s = 0; s < slots; s++)
        if (!put_frame(&b, 1, top_codes[s] + 1)) goto fail;
    if (!(put_key(&b, "stock") && put_int(&b, stock) && put_key(&b, "waste"))) goto fail;
    ok = put_cards(&b, waste, 0);
    if (ok < 0) goto unsupported;
    if (!ok) goto fail;
    Py_ssize_t pairs = PyList_GET_SIZE(legal);
    if (!(put_key(&b, "redeals_left") && put_int(&b, redeals_left) && put_key(&b, "legal") && put_array(&b, pairs)))
        goto fail;
    for (Py_ssize_t i = 0; i < pairs; i++) { /* each [command, cards] pair: msgspec's array_like LegalMove */
        PyObject *move = PyList_GET_ITEM(legal, i);
        if (!PyTuple_Check(move) || PyTuple_GET_SIZE(move) != 2 || !PyLong_CheckExact(PyTuple_GET_ITEM(move, 1)))
            goto unsupported;
        PyObject *key = PyLong_FromVoidPtr(PyTuple_GET_ITEM(move, 0)); /* id(command) */
        if (key == NULL) goto fail;
        PyObject *entry = PyDict_GetItemWithError(commands, key);
        Py_DECREF(key);
        if (entry == NULL) {
            if (PyErr_Occurred()) goto fail;
            goto unsupported; /* a command not in `commands` yet */
        }
        if (!PyTuple_CheckExact(entry) || PyTuple_GET_SIZE(entry) != 2 || PyTuple_GET_ITEM(entry, 0) != PyTuple_GET_ITEM(move, 0) ||
            !PyBytes_CheckExact(PyTuple_GET_ITEM(entry, 1))) {
            PyErr_SetString(PyExc_TypeError, "commands must map id(command) to (command, its encoded text)");
            goto fail;
        }
        PyObject *text = PyTuple_GET_ITEM(entry, 1);
        long long cards = PyLong_AsLongLong(PyTuple_GET_ITEM(move, 1));
        if (cards == -1 && PyErr_Occurred()) goto fail;
        if (!(put(&b, "\x92", 1) && put(&b, PyBytes_AS_STRING(text), PyBytes_GET_SIZE(text)) && put_int(&b, cards)))
            goto fail;
    }
    if (!(put_key(&b, "moves") && put_int(&b, moves) && put_key(&b, "undos") && put_int(&b, undos) &&
          put_key(&b, "foundation") && put_int(&b, found) && put_key(&b, "status") && put_str(&b, status) &&
          put_key(&b, "time_ms") && put_int(&b, time_ms)))
        goto fail;
    PyObject *frame = PyBytes_FromStringAndSize(b.data, b.len);
    release(&b);
    return frame;
unsupported:
    release(&b);
    Py_RETURN_NONE;
fail:
    release(&b);
    return NULL;
}

/* ---------------------------------------------------------------- applying the commonest commands */

enum { COLUMN_TO_COLUMN, COLUMN_TO_FOUNDATION, WASTE_TO_COLUMN, WASTE_TO_FOUNDATION, DRAW };

/* A new instance of the tuple subclass `type` (Position, Applied: named tuples) holding `items` (references
 * stolen, also on failure), as tuple.__new__(type, items) makes it. */
static PyObject *make(PyTypeObject *type, PyObject **items, Py_ssize_t n) {
    PyObject *t = type->tp_alloc(type, n);
    for (Py_ssize_t i = 0; i < n; i++) {
        if (t == NULL) Py_XDECREF(items[i]);
        else PyTuple_SET_ITEM(t, i, items[i]);
    }
    return t;
}

/* `tuple` with item `index` replaced by `item` (a new reference; `item` is not stolen). */
static PyObject *with_item(PyObject *tuple, Py_ssize_t index, PyObject *item) {
    Py_ssize_t n = PyTuple_GET_SIZE(tuple);
    PyObject *result = PyTuple_New(n);
    if (result == NULL) return NULL;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *value = i == index ? item : PyTuple_GET_ITEM(tuple, i);
        Py_INCREF(value);
        PyTuple_SET_ITEM(result, i, value);
    }
    return result;
}

/* `column` (a tuple) with the top `count` cards of `from` (a tuple) on top. */
static PyObject *stacked(PyObject *column, PyObject *from, Py_ssize_t count) {
    Py_ssize_t n = PyTuple_GET_SIZE(column), m = PyTuple_GET_SIZE(from);
    PyObject *result = PyTuple_New(n + count);
    if (result == NULL) return NULL;
    for (Py_ssize_t i = 0; i < n + count; i++) {
        PyObject *value = i < n ? PyTuple_GET_ITEM(column, i) : PyTuple_GET_ITEM(from, m - count + (i - n));
        Py_INCREF(value);
        PyTuple_SET_ITEM(result, i, value);
    }
    return result;
}

/* The slot (0-based) that takes `card` (rules._to_foundation): `target` 0 the lowest that does (rules.slot_for),
 * else slot target - 1 if it does; -1 when none. */
static int slot_taking(const int *tops, Py_ssize_t slots, int card, long target) {
    if (target == 0) return wanted_slot(tops, slots, card);
    if (target < 1 || target > slots) return -1;
    int top = tops[target - 1];
    int takes = top == -1 ? card % 13 == 0 : top == card - 1 && card % 13 != 0;
    return takes ? (int)(target - 1) : -1;
}

/* The command applied to the position's fields: 1 with `items` holding the new position's six fields (new
 * references: tableau, hidden, foundations, stock, waste, redeals_left), `*cards_out` the cards it moved and
 * `*revealed_out` whether a card turned face up; 0 for a command the rules refuse or a position outside what this
 * file handles; -1 on an error (set). On 0 and -1 `items` hold nothing. */
static int apply_core(PyObject *tableau, PyObject *hidden, PyObject *foundations, PyObject *stock, PyObject *waste,
                      PyObject *redeals_left, long op, long source, long target, long count,
                      const unsigned char *table, long columns, long onto_limit, long into_limit, PyObject **items,
                      long *cards_out, int *revealed_out) {
    Py_ssize_t n = PyTuple_GET_SIZE(tableau), slots = PyTuple_GET_SIZE(foundations);
    int tops[MAXCOLS + 1], revealed = 0, card, status = -1;
    long cards = 1;
    for (int i = 0; i < 6; i++) items[i] = NULL;
    if (n != columns || PyTuple_GET_SIZE(hidden) != n || n > MAXCOLS || !foundation_tops(foundations, tops))
        return 0;
    Py_INCREF(tableau), Py_INCREF(hidden), Py_INCREF(foundations), Py_INCREF(stock), Py_INCREF(waste);
    items[0] = tableau, items[1] = hidden, items[2] = foundations, items[3] = stock, items[4] = waste;
    Py_INCREF(redeals_left);
    items[5] = redeals_left;
    if (op == DRAW) {
        if (PyTuple_GET_SIZE(stock) == 0) goto unsupported;
        /* stock[1:], and waste + stock[:1]: the stock's first card goes onto the waste */
        PyObject *rest = PyTuple_GetSlice(stock, 1, PyTuple_GET_SIZE(stock));
        PyObject *first = rest == NULL ? NULL : PyTuple_GetSlice(stock, 0, 1);
        PyObject *drawn = first == NULL ? NULL : stacked(waste, first, 1);
        Py_XDECREF(first);
        if (rest == NULL || drawn == NULL) {
            Py_XDECREF(rest);
            goto fail;
        }
        Py_SETREF(items[3], rest);
        Py_SETREF(items[4], drawn);
    } else if (op == WASTE_TO_COLUMN || op == WASTE_TO_FOUNDATION) {
        Py_ssize_t w = PyTuple_GET_SIZE(waste);
        if (w == 0 || !card_at(waste, w - 1, &card)) goto unsupported;
        if (op == WASTE_TO_FOUNDATION) {
            int slot = slot_taking(tops, slots, card, target);
            if (slot < 0) goto unsupported;
            PyObject *up = with_item(foundations, slot, PyTuple_GET_ITEM(waste, w - 1));
            if (up == NULL) goto fail;
            Py_SETREF(items[2], up);
        } else {
            if (target < 1 || target > n) goto unsupported;
            PyObject *onto = PyTuple_GET_ITEM(tableau, target - 1);
            if (!PyTuple_CheckExact(onto)) goto unsupported;
            Py_ssize_t len = PyTuple_GET_SIZE(onto);
            int top;
            if (len > 0 && (!card_at(onto, len - 1, &top) || !table[top * CARDS + card])) goto unsupported;
            PyObject *built = stacked(onto, waste, 1);
            PyObject *next = built == NULL ? NULL : with_item(tableau, target - 1, built);
            Py_XDECREF(built);
            if (next == NULL) goto fail;
            Py_SETREF(items[0], next);
        }
        PyObject *rest = PyTuple_GetSlice(waste, 0, w - 1);
        if (rest == NULL) goto fail;
        Py_SETREF(items[4], rest);
    } else if (op == COLUMN_TO_COLUMN || op == COLUMN_TO_FOUNDATION) {
        if (source < 1 || source > n) goto unsupported;
        Py_ssize_t src = source - 1;
        PyObject *column = PyTuple_GET_ITEM(tableau, src), *h = PyTuple_GET_ITEM(hidden, src);
        if (!PyTuple_CheckExact(column) || !PyLong_CheckExact(h)) goto unsupported;
        Py_ssize_t len = PyTuple_GET_SIZE(column);
        long down = PyLong_AsLong(h);
        if (len == 0 || down < 0 || down > len) {
            PyErr_Clear();
            goto unsupported;
        }
        int codes[MAXCOLCARDS];
        if (len > MAXCOLCARDS) goto unsupported;
        for (Py_ssize_t i = 0; i < len; i++)
            if (!card_at(column, i, &codes[i])) goto unsupported;
        PyObject *built = NULL;
        Py_ssize_t dst = -1;
        if (op == COLUMN_TO_FOUNDATION) {
            int slot = slot_taking(tops, slots, codes[len - 1], target);
            if (slot < 0) goto unsupported;
            PyObject *up = with_item(foundations, slot, PyTuple_GET_ITEM(column, len - 1));
            if (up == NULL) goto fail;
            Py_SETREF(items[2], up);
        } else {
            if (target < 1 || target > n || target == source) goto unsupported;
            dst = target - 1;
            PyObject *onto = PyTuple_GET_ITEM(tableau, dst);
            if (!PyTuple_CheckExact(onto)) goto unsupported;
            Py_ssize_t onto_len = PyTuple_GET_SIZE(onto);
            int onto_top = -1;
            if (onto_len > 0 && !card_at(onto, onto_len - 1, &onto_top)) goto unsupported;
            Py_ssize_t i = len - 1; /* rules.run_length */
            while (i > down && table[codes[i - 1] * CARDS + codes[i]]) i--;
            long run = (long)(len - i);
            if (count < 0) {
                if (onto_len == 0) {
                    cards = 1;
                } else {
                    cards = 0;
                    for (long k = 1; k <= run; k++)
                        if (table[onto_top * CARDS + codes[len - k]]) {
                            cards = k;
                            break;
                        }
                    if (cards == 0) goto unsupported;
                }
            } else {
                if (count < 1 || count > len || count > run) goto unsupported;
                if (onto_len > 0 && !table[onto_top * CARDS + codes[len - count]]) goto unsupported;
                cards = count;
            }
            if (cards > (onto_len == 0 ? into_limit : onto_limit)) goto unsupported;
            built = stacked(onto, column, cards);
            if (built == NULL) goto fail;
        }
        PyObject *left = PyTuple_GetSlice(column, 0, len - cards);
        if (left == NULL) {
            Py_XDECREF(built);
            goto fail;
        }
        PyObject *next = PyTuple_New(n);
        if (next == NULL) {
            Py_DECREF(left);
            Py_XDECREF(built);
            goto fail;
        }
        for (Py_ssize_t j = 0; j < n; j++) {
            PyObject *value = j == src ? left : j == dst ? built : PyTuple_GET_ITEM(tableau, j);
            if (j != src && j != dst) Py_INCREF(value);
            PyTuple_SET_ITEM(next, j, value);
        }
        Py_SETREF(items[0], next);
        /* The newly exposed card turns face up (rules._take). */
        if (len - cards > 0 && down == len - cards) {
            PyObject *up = PyLong_FromLong(down - 1);
            PyObject *counts = up == NULL ? NULL : with_item(hidden, src, up);
            Py_XDECREF(up);
            if (counts == NULL) goto fail;
            Py_SETREF(items[1], counts);
            revealed = 1;
        }
    } else {
        goto unsupported;
    }
    *cards_out = cards;
    *revealed_out = revealed;
    return 1;
unsupported:
    status = 0;
fail:
    for (int i = 0; i < 6; i++) Py_CLEAR(items[i]);
    return status;
}

/* apply_move(position_type, applied_type, tableau, hidden, foundations, stock, waste, redeals_left, op, source,
 *            target, count, fits, columns, onto_limit, into_limit) -> Applied | None
 *
 * rules.apply for the commonest commands, each checked by the same rules (RULES.md sections 2-5): `op`
 * COLUMN_TO_COLUMN (source, target: 1-based columns; count -1: none written, the engine picks it as
 * rules._from_column does), COLUMN_TO_FOUNDATION and WASTE_TO_FOUNDATION (target: 1-based slot, 0 any),
 * WASTE_TO_COLUMN, DRAW. The run is rules.run_length's (as in list_prefix), the move limits are given
 * (rules.move_limit onto a card and into an empty column; into_limit unused without an empty column).
 * Answers rules.Applied(Position(...), cards, revealed), or None for any command the rules refuse and for
 * anything else than tuples of card codes with `columns` columns: the caller then applies it in Python,
 * which raises the refusal's error.
 */
static PyObject *apply_move(PyObject *self, PyObject *args) {
    PyObject *position_type, *applied_type, *tableau, *hidden, *foundations, *stock, *waste, *redeals_left;
    long op, source, target, count, columns, onto_limit, into_limit;
    Py_buffer fits;
    if (!PyArg_ParseTuple(args, "O!O!O!O!O!O!O!Olllly*lll", &PyType_Type, &position_type, &PyType_Type,
                          &applied_type, &PyTuple_Type, &tableau, &PyTuple_Type, &hidden, &PyTuple_Type, &foundations,
                          &PyTuple_Type, &stock, &PyTuple_Type, &waste, &redeals_left, &op, &source, &target, &count,
                          &fits, &columns, &onto_limit, &into_limit))
        return NULL;
    PyObject *answer = NULL, *items[6];
    long cards;
    int revealed;
    if (fits.len != CARDS * CARDS) {
        PyErr_SetString(PyExc_ValueError, "fits must hold 52*52 bytes");
        goto done;
    }
    if (!PyType_IsSubtype((PyTypeObject *)position_type, &PyTuple_Type) ||
        !PyType_IsSubtype((PyTypeObject *)applied_type, &PyTuple_Type)) {
        PyErr_SetString(PyExc_TypeError, "position_type and applied_type must be tuple types");
        goto done;
    }
    int applied = apply_core(tableau, hidden, foundations, stock, waste, redeals_left, op, source, target, count,
                             fits.buf, columns, onto_limit, into_limit, items, &cards, &revealed);
    if (applied < 0) goto done;
    if (applied == 0) {
        Py_INCREF(Py_None);
        answer = Py_None;
        goto done;
    }
    PyObject *position = make((PyTypeObject *)position_type, items, 6);
    if (position == NULL) goto done;
    PyObject *result[3] = {position, PyLong_FromLong(cards), PyBool_FromLong(revealed)};
    if (result[1] == NULL) {
        Py_DECREF(position);
        Py_DECREF(result[2]);
        goto done;
    }
    answer = make((PyTypeObject *)applied_type, result, 3);
done:
    PyBuffer_Release(&fits);
    return answer;
}

/* ---------------------------------------------------------------- a command, its auto-play and the next list
 *
 * play_listed does in one call what the server does for every accepted move: rules.apply, rules.autoplay and
 * rules.legal_moves of the result (Game.play, then Game.legal_moves without the undo). The variant's constants
 * come as one bytes object (rules._c_context): */
#define CTX_ONTO (CARDS * CARDS) /* after fits (52*52 bytes, as column_moves reads them): rules.move_limit onto a
                                   card by the count of empty columns 0..63, one byte each (capped at 255) */
#define CTX_INTO (CTX_ONTO + 64)  /* the same into an empty column (0 without one) */
#define CTX_DECKS (CTX_INTO + 64) /* variant.decks */
#define CTX_FLAGS (CTX_DECKS + 1) /* bit 0: variant.redeals > 0; bit 1: variant.foundation_to_column */
#define CTX_COLUMNS (CTX_FLAGS + 1) /* variant.columns */
#define CTX_LEN (CTX_COLUMNS + 1)

static long empty_columns(PyObject *tableau) {
    long empties = 0;
    for (Py_ssize_t j = 0; j < PyTuple_GET_SIZE(tableau); j++)
        if (PyTuple_Check(PyTuple_GET_ITEM(tableau, j)) && PyTuple_GET_SIZE(PyTuple_GET_ITEM(tableau, j)) == 0)
            empties++;
    return empties;
}

/* rules.autoplay on the fields in `items` (apply_core's, replaced in place): the waste top first, then the column
 * tops 1..N, the first safe card a slot takes goes up (autoplay_next's choice), until none does. 1 done (the cards
 * moved up added to `*moved`, a turned card to `*revealed`); 0 for a position outside what this file handles; -1
 * on an error (set). `items` keep six fields in every case. */
static int autoplay_core(PyObject **items, const unsigned char *table, long decks, long *moved, int *revealed) {
    for (;;) {
        PyObject *tableau = items[0], *hidden = items[1], *foundations = items[2], *waste = items[4];
        int tops[MAXCOLS + 1];
        Py_ssize_t slots = PyTuple_GET_SIZE(foundations), n = PyTuple_GET_SIZE(tableau);
        if (n > MAXCOLS || !foundation_tops(foundations, tops)) return 0;
        Py_ssize_t source = -1, len = 0;
        int slot = -1;
        for (Py_ssize_t at = 0; at <= n && source < 0; at++) {
            PyObject *pile = at == 0 ? waste : PyTuple_GET_ITEM(tableau, at - 1);
            if (!PyTuple_CheckExact(pile)) return 0;
            len = PyTuple_GET_SIZE(pile);
            if (len == 0) continue;
            int card;
            if (!card_at(pile, len - 1, &card)) return 0;
            slot = wanted_slot(tops, slots, card);
            if (slot >= 0 && safe_card(tops, slots, table, decks, card)) source = at;
        }
        if (source < 0) return 1;
        PyObject *pile = source == 0 ? waste : PyTuple_GET_ITEM(tableau, source - 1);
        PyObject *up = with_item(foundations, slot, PyTuple_GET_ITEM(pile, len - 1));
        PyObject *rest = up == NULL ? NULL : PyTuple_GetSlice(pile, 0, len - 1);
        if (rest == NULL) {
            Py_XDECREF(up);
            return -1;
        }
        Py_SETREF(items[2], up);
        if (source == 0) {
            Py_SETREF(items[4], rest);
        } else {
            PyObject *next = with_item(tableau, source - 1, rest);
            Py_DECREF(rest);
            if (next == NULL) return -1;
            Py_SETREF(items[0], next);
            PyObject *h = PyTuple_GET_ITEM(hidden, source - 1);
            if (!PyLong_CheckExact(h)) return 0;
            long down = PyLong_AsLong(h);
            if (down == -1 && PyErr_Occurred()) { /* too large for a count: not a position of this file */
                PyErr_Clear();
                return 0;
            }
            if (len - 1 > 0 && down == len - 1) { /* rules._take: the newly exposed card turns face up */
                PyObject *count = PyLong_FromLong(down - 1);
                PyObject *counts = count == NULL ? NULL : with_item(hidden, source - 1, count);
                Py_XDECREF(count);
                if (counts == NULL) return -1;
                Py_SETREF(items[1], counts);
                *revealed = 1;
            }
        }
        (*moved)++;
    }
}

/* Whether the rest of the legal list after a move (beyond a draw) is rules._later_moves' to write, in Python: the
 * variant moves cards down from the foundations, or the stock is empty and finish (no waste either) or a redeal (a
 * redeal left) may be legal. `items`: the position's fields, as apply_core fills them. */
static int later_moves_in_python(PyObject **items, const unsigned char *ctx) {
    if (ctx[CTX_FLAGS] & 2) return 1;
    if (PyTuple_GET_SIZE(items[3]) > 0) return 0;
    if (PyTuple_GET_SIZE(items[4]) == 0) return 1;
    if (!(ctx[CTX_FLAGS] & 1)) return 0;
    long left = PyLong_AsLong(items[5]);
    if (left == -1 && PyErr_Occurred()) { /* not a count this file reads */
        PyErr_Clear();
        return 1;
    }
    return left > 0;
}

/* play_listed(position_type, tableau, hidden, foundations, stock, waste, redeals_left, op, source, target, count,
 *             context, autoplay, table, draw_move) -> (position, cards, autoplayed, revealed, legal) | None
 *
 * rules.apply of the command (`op`, `source`, `target`, `count` as apply_move takes them; the move limits read
 * from `context` by the position's empty columns), then rules.autoplay when `autoplay` is true, then
 * rules.legal_moves of the new position: the column_moves listing (`table` as it takes it) followed by
 * `draw_move` (rules' LegalMove of a draw) when the stock holds a card. `legal` is None where the rest of the
 * listing is not this file's (a redeal or a finish may be legal, the variant moves cards down from the
 * foundations): the caller lists it in Python. The answer as a whole is None for a command the rules refuse and
 * for a position outside what this file handles (the caller plays the command in Python, which raises the
 * refusal). `autoplayed` is how many cards auto-play moved up; `revealed` whether the command or its auto-play
 * turned a card face up.
 */
static PyObject *play_listed(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 15) {
        PyErr_SetString(PyExc_TypeError, "play_listed takes 15 arguments");
        return NULL;
    }
    PyObject *position_type = args[0], *tableau = args[1], *hidden = args[2], *foundations = args[3],
             *stock = args[4], *waste = args[5], *redeals_left = args[6], *context = args[11],
             *table = args[13], *draw_move = args[14];
    if (!PyType_Check(position_type) || !PyType_IsSubtype((PyTypeObject *)position_type, &PyTuple_Type) ||
        !PyTuple_CheckExact(tableau) || !PyTuple_CheckExact(hidden) || !PyTuple_CheckExact(foundations) ||
        !PyTuple_CheckExact(stock) || !PyTuple_CheckExact(waste) || !PyBytes_CheckExact(context) ||
        PyBytes_GET_SIZE(context) != CTX_LEN || !PyList_CheckExact(table)) {
        PyErr_SetString(PyExc_TypeError, "play_listed: a position's tuples, the context bytes and the move table");
        return NULL;
    }
    long long op, source, target, count;
    if (!arg_ll(args, 7, &op) || !arg_ll(args, 8, &source) || !arg_ll(args, 9, &target) || !arg_ll(args, 10, &count))
        return NULL;
    int autoplay = PyObject_IsTrue(args[12]);
    if (autoplay < 0) return NULL;
    const unsigned char *ctx = (const unsigned char *)PyBytes_AS_STRING(context);
    Py_ssize_t n = PyTuple_GET_SIZE(tableau);
    if (n > MAXCOLS) Py_RETURN_NONE;
    long empties = empty_columns(tableau); /* at most n */
    PyObject *items[6];
    long cards, autoplayed = 0;
    int revealed;
    int applied = apply_core(tableau, hidden, foundations, stock, waste, redeals_left, (long)op, (long)source,
                             (long)target, (long)count, ctx, ctx[CTX_COLUMNS], ctx[CTX_ONTO + empties],
                             ctx[CTX_INTO + empties], items, &cards, &revealed);
    if (applied < 0) return NULL;
    if (applied == 0) Py_RETURN_NONE;
    PyObject *legal = NULL;
    int declined = 0;
    if (autoplay) {
        int done = autoplay_core(items, ctx, ctx[CTX_DECKS], &autoplayed, &revealed);
        if (done < 0) goto fail;
        if (done == 0) goto unsupported;
    }
    if (later_moves_in_python(items, ctx)) {
        Py_INCREF(Py_None);
        legal = Py_None;
    } else {
        long after = empty_columns(items[0]); /* at most n: the move keeps the column count */
        legal = list_prefix(items[0], items[1], items[2], items[4], ctx, ctx[CTX_ONTO + after], ctx[CTX_INTO + after],
                            table);
        if (legal == NULL) {
            if (PyErr_Occurred()) goto fail;
            goto unsupported;
        }
        if (PyTuple_GET_SIZE(items[3]) > 0 && PyList_Append(legal, draw_move) < 0) goto fail;
    }
    PyObject *position = make((PyTypeObject *)position_type, items, 6);
    for (int i = 0; i < 6; i++) items[i] = NULL; /* stolen */
    if (position == NULL) goto fail;
    return Py_BuildValue("(NllNN)", position, cards, autoplayed, PyBool_FromLong(revealed), legal);
unsupported:
    declined = 1;
fail:
    for (int i = 0; i < 6; i++) Py_XDECREF(items[i]);
    Py_XDECREF(legal);
    if (declined) Py_RETURN_NONE;
    return NULL;
}

static PyMethodDef methods[] = {
    {"column_moves", column_moves, METH_VARARGS,
     "column_moves(tableau, hidden, foundations, waste, fits, onto_limit, into_limit, table) -> list | None\n\n"
     "The legal moves up to the column-to-column ones, in rules.legal_moves' order (items of table); None when "
     "the position is outside what the C listing handles."},
    {"visible_columns", visible_columns, METH_VARARGS,
     "visible_columns(tableau, hidden) -> tuple | None\n\n"
     "Each column's face-up cards (column[hidden:]), as view.redact lists them; None for a malformed tableau."},
    {"view_texts", view_texts, METH_VARARGS,
     "view_texts(tableau, hidden, foundations, waste, texts, slot_texts) -> (tableau, hidden, foundations, waste) | None\n\n"
     "The wire view's lists of a position, redacted as view.redact does (face-up cards' texts per column, face-down "
     "cards counted, slot texts, the waste's texts); None for a malformed position."},
    {"autoplay_next", autoplay_next, METH_VARARGS,
     "autoplay_next(tableau, foundations, waste, fits, decks) -> int | None\n\n"
     "rules.autoplay's next move as source * 64 + slot (source 0 the waste, 1 + i column i), -1 when none; None "
     "for a malformed position."},
    {"position_frame", (PyCFunction)(void (*)(void))position_frame, METH_FASTCALL,
     "position_frame(seq, command, tableau, hidden, foundations, stock, waste, redeals_left, legal, commands, moves, "
     "undos, found, status, time_ms, card_frames, slot_frames) -> bytes | None\n\n"
     "The encoded position reply (msgspec's bytes) with the position's redacted view; None for a malformed position."},
    {"apply_move", apply_move, METH_VARARGS,
     "apply_move(position_type, applied_type, tableau, hidden, foundations, stock, waste, redeals_left, op, source, "
     "target, count, fits, columns, onto_limit, into_limit) -> Applied | None\n\n"
     "rules.apply for moves from a column or the waste and draw; None for a refused command or a malformed position."},
    {"play_listed", (PyCFunction)(void (*)(void))play_listed, METH_FASTCALL,
     "play_listed(position_type, tableau, hidden, foundations, stock, waste, redeals_left, op, source, target, "
     "count, context, autoplay, table, draw_move) -> (position, cards, autoplayed, revealed, legal | None) | None\n\n"
     "rules.apply, rules.autoplay and rules.legal_moves of the result in one call; legal None where the rest of the "
     "listing is the Python's; None for a refused command or a malformed position."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_cengine",
                                    "The engine's optional C hot path (rules.legal_moves, rules.apply, rules.autoplay, rules.play_listed, view.redact, views.view_message, views.position_frame).", -1,
                                    methods, NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit__cengine(void) { return PyModule_Create(&module); }
